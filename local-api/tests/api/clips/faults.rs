//! S3's faults on a cut's ranged reads and on its upload (DynamoDB/SQS with S3 behind the fault
//! proxy): a failed read or write is tried again later, never turned into a `failed` clip,
//! and the clip is written once and whole.

use hosting_app::service::clips::CutOutcome;

use super::*;
use crate::common::faults;

#[tokio::test]
#[ignore = "needs moto: runs in scripts/test.sh's DynamoDB stage"]
async fn dynamodb_only_a_cut_goes_through_s3_faults_on_its_reads_and_its_upload() {
    let bucket = format!("clip-faults-{}", uuid::Uuid::new_v4().simple());
    let api = TestApp::builder()
        .with_var("RECORDINGS_BUCKET", bucket.clone())
        .await;
    let id = ready_recording(&api).await;
    let clip_id = ask_ok(&api, &id, 12.0, 24.0).await;
    // Every ranged read refused: tried again later, `processing` meanwhile.
    faults::set(&bucket, json!({"fail_ops": ["GetObject"]})).await;
    assert_eq!(run_cuts(&api, &id).await, [CutOutcome::Retrying]);
    assert_eq!(clip(&api, &id, &clip_id).await["status"], "processing");
    // The upload refused: the same.
    faults::set(&bucket, json!({"fail_ops": ["PutObject"]})).await;
    api.advance(Duration::seconds(60));
    assert_eq!(run_cuts(&api, &id).await, [CutOutcome::Retrying]);
    let refused = faults::stats(&bucket).await;
    assert!(faults::injected(&refused) > 0, "{refused}");
    // S3 throttling, failing and losing answers of writes it applied, each answered by the
    // SDK's retries or the cut's (a lost answer to the clip's write is recognised by the object
    // it finds there, as clips::storage shows): cut all the same, within the attempts left.
    faults::set(
        &bucket,
        json!({"s3_slow_down": 0.1, "s3_500": 0.1, "lost_response": 0.3}),
    )
    .await;
    let mut outcomes = Vec::new();
    for _ in 0..4 {
        // Past any retry's wait: each pass is a cut.
        api.advance(Duration::seconds(301));
        outcomes.extend(run_cuts(&api, &id).await);
        if outcomes.contains(&CutOutcome::Ready) {
            break;
        }
    }
    faults::clear(&bucket).await;
    assert!(outcomes.contains(&CutOutcome::Ready), "{outcomes:?}");
    let shown = clip(&api, &id, &clip_id).await;
    assert_eq!(shown["status"], "ready", "{shown}");
    let (status, bytes) = crate::recordings::download(&api, shown["url"].as_str().unwrap()).await;
    assert_eq!(status, 200);
    assert_eq!(bytes.len() as u64, shown["size_bytes"].as_u64().unwrap());
    assert_eq!(&bytes[4..8], b"ftyp");
    assert_eq!(clip_events(&api, &id).await.len(), 1);
}

#[tokio::test]
#[ignore = "needs moto: runs in scripts/test.sh's DynamoDB stage"]
async fn dynamodb_only_a_cut_goes_through_the_tables_faults_and_settles_once() {
    let api = TestApp::new().await;
    let id = ready_recording(&api).await;
    let clip_id = ask_ok(&api, &id, 30.0, 41.0).await;
    // Writes answered after they were applied, and throttling: a claim or a settling whose
    // answer was lost is recognised, never taken for another cut's.
    let table = api.table().unwrap().to_owned();
    faults::set(
        &table,
        json!({"lost_response": 0.4, "throttling": 0.2, "internal_error": 0.1}),
    )
    .await;
    let mut outcomes = Vec::new();
    for _ in 0..6 {
        match hosting_app::service::clips::cut(
            &api.runtime.app,
            &hosting_domain::ports::ClipJob {
                stream_id: uuid::Uuid::parse_str(&id).unwrap(),
                clip_id: clip_id.clone(),
            },
        )
        .await
        {
            Ok(outcome) => outcomes.push(outcome),
            // The store gave up before anything was decided: the job is received again.
            Err(_) => continue,
        }
        if outcomes.contains(&CutOutcome::Ready) {
            break;
        }
        api.advance(Duration::seconds(301));
    }
    faults::clear(&table).await;
    assert!(outcomes.contains(&CutOutcome::Ready), "{outcomes:?}");
    assert_eq!(clip(&api, &id, &clip_id).await["status"], "ready");
    assert_eq!(clip_events(&api, &id).await.len(), 1, "evented once");
}
