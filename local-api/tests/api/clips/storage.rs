//! The recordings storage as clips use it (docs/clips.md, "In the background"), on both
//! backends: S3 (moto behind the fault proxy) and the local server's folder. An object is
//! written at most once: a second write under its key leaves the first bytes and says so; one
//! past 16 MiB goes up in parts; a write that stops short leaves nothing; ranges read back
//! exactly; a deleted object is gone, and deleting nothing is no error.

use hosting_domain::ports::{RecordingStorage, Written};

use super::*;

async fn write(storage: &dyn RecordingStorage, key: &str, bytes: &[u8]) -> Written {
    let mut writer = storage.create(key, bytes.len() as u64).await.unwrap();
    // In uneven pieces, as a cut hands them over.
    for piece in bytes.chunks(3 * 1024 * 1024 + 17) {
        writer.write(piece).await.unwrap();
    }
    writer.finish().await.unwrap()
}

fn made(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

#[tokio::test]
async fn an_object_is_written_once_read_by_ranges_and_deleted() {
    let api = TestApp::new().await;
    let storage = &*api.runtime.app.recordings;
    let key = format!(
        "clips/{BRAND}/{}/clp_{}.mp4",
        uuid::Uuid::new_v4(),
        "a".repeat(32)
    );
    assert_eq!(storage.size_of(&key).await.unwrap(), None);
    let first = made(70_000, 1);
    assert_eq!(write(storage, &key, &first).await, Written::Created);
    // A cut made again writes the same key: the first bytes stay.
    assert_eq!(
        write(storage, &key, &made(70_000, 2)).await,
        Written::AlreadyThere
    );
    assert_eq!(storage.size_of(&key).await.unwrap(), Some(70_000));
    assert_eq!(
        storage.read_range(&key, 1_000..65_537).await.unwrap(),
        first[1_000..65_537]
    );
    storage.delete(&key).await.unwrap();
    assert_eq!(storage.size_of(&key).await.unwrap(), None);
    storage.delete(&key).await.unwrap();
}

#[tokio::test]
async fn an_object_past_16_mib_goes_up_in_parts_and_once() {
    let api = TestApp::new().await;
    let storage = &*api.runtime.app.recordings;
    let key = format!(
        "clips/{BRAND}/{}/clp_{}.mp4",
        uuid::Uuid::new_v4(),
        "b".repeat(32)
    );
    let big = made(17 * 1024 * 1024 + 5, 3);
    assert_eq!(write(storage, &key, &big).await, Written::Created);
    assert_eq!(storage.size_of(&key).await.unwrap(), Some(big.len() as u64));
    // Across the first part's end (8 MiB).
    let span = 8 * 1024 * 1024 - 10..8 * 1024 * 1024 + 10;
    assert_eq!(
        storage
            .read_range(&key, span.start as u64..span.end as u64)
            .await
            .unwrap(),
        big[span]
    );
    assert_eq!(
        write(storage, &key, &made(17 * 1024 * 1024 + 5, 4)).await,
        Written::AlreadyThere
    );
    let tail = big.len() - 5..big.len();
    assert_eq!(
        storage
            .read_range(&key, tail.start as u64..tail.end as u64)
            .await
            .unwrap(),
        big[tail]
    );
    storage.delete(&key).await.unwrap();
}

#[tokio::test]
async fn a_write_that_stops_short_leaves_nothing() {
    let api = TestApp::new().await;
    let storage = &*api.runtime.app.recordings;
    let key = format!(
        "clips/{BRAND}/{}/clp_{}.mp4",
        uuid::Uuid::new_v4(),
        "c".repeat(32)
    );
    let mut writer = storage.create(&key, 1_000).await.unwrap();
    writer.write(&made(600, 5)).await.unwrap();
    assert!(
        writer.finish().await.is_err(),
        "600 of the 1,000 bytes announced"
    );
    assert_eq!(storage.size_of(&key).await.unwrap(), None);
    // A write dropped part way (its cut failed) leaves nothing either.
    let mut writer = storage.create(&key, 1_000).await.unwrap();
    writer.write(&made(600, 5)).await.unwrap();
    drop(writer);
    assert_eq!(storage.size_of(&key).await.unwrap(), None);
    if api.runtime.embedded.is_some() {
        let folder = api
            .runtime
            .app
            .config
            .recordings
            .dir
            .join(std::path::Path::new(&key).parent().unwrap());
        let left: Vec<_> = std::fs::read_dir(&folder).unwrap().flatten().collect();
        assert!(left.is_empty(), "nothing left aside: {left:?}");
    }
    // Nothing in the way of a whole write after it.
    assert_eq!(
        write(storage, &key, &made(1_000, 6)).await,
        Written::Created
    );
    storage.delete(&key).await.unwrap();
}
