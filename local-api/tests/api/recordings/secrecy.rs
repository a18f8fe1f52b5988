//! The egress's upload key pair never travels further than the egress start (docs/recordings.md,
//! "The egress's file output"): the local server on DynamoDB reads it from an SSM
//! `SecureString`, as a function does, hands it to `StartRoomCompositeEgress` only, and no log
//! line (JSON, debug), answer, event or other LiveKit request holds it.

use std::time::{Duration, Instant};

use super::*;
use crate::common::fake_livekit::{START_EGRESS, agent_joined, egress_event};

const ACCESS_KEY_ID: &str = "AKIAUPLOADKEY7Q2W9E4R";
const SECRET_ACCESS_KEY: &str = "upload-SECRET-wJalrXUtnFEMI-K7MDENG-0001";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs DynamoDB, SQS, S3 and SSM (moto): scripts/test.sh runs it"]
async fn dynamodb_only_the_upload_key_pair_is_read_from_ssm_and_sent_only_to_the_egress_start() {
    let fake = FakeLiveKit::start().await;
    let (parts, dynamo) = backend::parts().await;
    let dynamo = dynamo.expect("DynamoDB");
    let hosting_runtime::LocalQueue::Sqs(queue) = parts.queue else {
        panic!("SQS");
    };
    let sdk = hosting_aws::sdk_config().await.unwrap();
    let parameter = format!("/test/recording-upload-{}", uuid::Uuid::new_v4().simple());
    aws_sdk_ssm::Client::new(&sdk)
        .put_parameter()
        .name(&parameter)
        .value(format!("{ACCESS_KEY_ID}:{SECRET_ACCESS_KEY}"))
        .r#type(aws_sdk_ssm::types::ParameterType::SecureString)
        .send()
        .await
        .unwrap();
    let seed = base_seed(chrono::Utc::now());
    let seed_path =
        std::env::temp_dir().join(format!("seed-{}.json", uuid::Uuid::new_v4().simple()));
    std::fs::write(&seed_path, seed.to_string()).unwrap();
    let mut envs: Vec<(String, String)> = vec![
        ("STORE".into(), "dynamodb".into()),
        ("TABLE_NAME".into(), dynamo.table().into()),
        (
            "SECRETS_KEY_ID".into(),
            crate::common::backend::TEST_SECRETS_KEY.into(),
        ),
        ("DELIVERY_QUEUE_URL".into(), queue.queue_url().into()),
        ("DELIVERY_DLQ_URL".into(), queue.dlq_url().into()),
        (
            "RECORDINGS_BUCKET".into(),
            backend::TEST_RECORDINGS_BUCKET.into(),
        ),
        ("RECORDING_UPLOAD_KEY_PARAMETER".into(), parameter.clone()),
        ("LOG_FORMAT".into(), "json".into()),
        ("LOG_LEVEL".into(), "debug".into()),
    ];
    envs.extend(fake.config().into_iter().map(|(k, v)| (k.to_owned(), v)));
    let envs: Vec<(&str, &str)> = envs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let (mut child, _, base, reader) =
        spawn_local_api(&["--seed", seed_path.to_str().unwrap()], &envs);
    let lines = collect_lines(reader);
    let http = reqwest::Client::new();
    let mut answers = Vec::new();
    let created = http
        .post(format!("{base}/streams"))
        .bearer_auth(Keys::live_a())
        .json(
            &json!({"creator_id": CREATOR_AVA, "product_name": "P", "platform": "kick",
            "duration_minutes": 30, "record": true}),
        )
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    answers.push(created.clone());
    let created: Value = serde_json::from_str(&created).unwrap();
    let (id, room) = (
        created["stream_id"].as_str().unwrap().to_owned(),
        created["room_name"].as_str().unwrap().to_owned(),
    );
    let livekit = |event: Value| {
        let (http, url) = (
            http.clone(),
            format!("{}/livekit/webhook", base.trim_end_matches("/api/v1")),
        );
        async move {
            let (body, authorization) = signed_webhook(&event);
            let status = http
                .post(url)
                .header("authorization", authorization)
                .body(body)
                .send()
                .await
                .unwrap()
                .status();
            assert_eq!(status, 200);
        }
    };
    livekit(agent_joined(&room, "EV_join_secrecy")).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while fake.count(START_EGRESS) == 0 {
        assert!(Instant::now() < deadline, "no egress started");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The egress start carries the pair read from SSM, with the bucket and its region.
    let start = starts(&fake).remove(0);
    let Some(livekit_protocol::encoded_file_output::Output::S3(upload)) =
        &start.file_outputs[0].output
    else {
        panic!("an S3 upload: {:?}", start.file_outputs);
    };
    assert_eq!(upload.access_key, ACCESS_KEY_ID);
    assert_eq!(upload.secret, SECRET_ACCESS_KEY);
    assert_eq!(upload.bucket, backend::TEST_RECORDINGS_BUCKET);
    assert_eq!(upload.region, std::env::var("AWS_REGION").unwrap());
    for (method, path) in [
        ("DELETE", format!("/streams/{id}")),
        ("GET", format!("/streams/{id}")),
    ] {
        let answer = http
            .request(method.parse().unwrap(), format!("{base}{path}"))
            .bearer_auth(Keys::live_a())
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        answers.push(answer);
    }
    let egress_id = fake.egresses().into_keys().next().unwrap();
    let mut ended = egress_event(
        "egress_ended",
        &room,
        &egress_id,
        "EGRESS_COMPLETE",
        &[],
        "EV_end_secrecy",
    );
    ended["egressInfo"]["fileResults"] =
        json!([{"filename": "x.mp4", "duration": "5000000000", "size": "100"}]);
    livekit(ended).await;
    let detail = http
        .get(format!("{base}/streams/{id}"))
        .bearer_auth(Keys::live_a())
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(detail.contains("\"status\":\"ready\""), "{detail}");
    answers.push(detail);
    tokio::time::sleep(Duration::from_millis(500)).await;
    child.kill().unwrap();
    child.wait().unwrap();
    let _ = std::fs::remove_file(&seed_path);

    let lines = lines.lock().unwrap().clone();
    assert!(lines.len() > 10, "the server logged: {lines:?}");
    let events: Vec<String> = backend::scan_events(&dynamo)
        .await
        .into_iter()
        .map(|e| e.body)
        .collect();
    assert!(!events.is_empty());
    let other_calls: Vec<String> = fake
        .calls()
        .into_iter()
        .filter(|c| c.method != START_EGRESS)
        .map(|c| format!("{:?} {}", c.call, c.claims))
        .collect();
    for (what, texts) in [
        ("log line", &lines),
        ("answer", &answers),
        ("event", &events),
        ("LiveKit call", &other_calls),
    ] {
        for text in texts {
            assert!(
                !text.contains(SECRET_ACCESS_KEY),
                "the secret in a {what}: {text}"
            );
            assert!(
                !text.contains(ACCESS_KEY_ID),
                "the key id in a {what}: {text}"
            );
        }
    }
}
