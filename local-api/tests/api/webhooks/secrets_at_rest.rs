//! Secrets at rest (docs/security.md, "Secrets at rest"): after a workload that registers and
//! rotates webhooks, signs deliveries in both schemes and pushes live streams to destinations,
//! neither the table nor its stream holds any secret in any encoding, and every receiver still
//! verifies every signature. A webhook stored plain before sealing still signs, and its
//! rotation seals what it keeps.

use aws_sdk_dynamodb::types::AttributeValue;
use axum::body::Body;
use axum::http::Request;
use base64::Engine;
use hosting_domain::ports::WebhookStore;
use hosting_domain::sealed::StoredSecret;
use serde_json::json;

use super::{next_delivery, register, rotated, send_test, signers};
use crate::common::fake_livekit::{
    API_SECRET, FakeLiveKit, participant_event, signed_webhook_with,
};
use crate::common::receiver::{Behaviour, Hit, Receiver, run_public_key_verifier, run_verifier};
use crate::common::*;

const STREAM_KEYS: [&str; 3] = [
    "sk_live_7f3a9c2e5b1d4068",
    "sk_live_added_91c4e2a7",
    "sk_show_5d8b0e3f6a21",
];

/// The forms a secret could be stored in: as is, base64 and hex.
fn encodings(secret: &str) -> Vec<Vec<u8>> {
    let b64 = base64::engine::general_purpose::STANDARD;
    vec![
        secret.as_bytes().to_vec(),
        b64.encode(secret).into_bytes(),
        hex::encode(secret).into_bytes(),
        hex::encode_upper(secret).into_bytes(),
    ]
}

fn table_bytes(value: &AttributeValue, out: &mut Vec<u8>) {
    match value {
        AttributeValue::S(s) | AttributeValue::N(s) => out.extend_from_slice(s.as_bytes()),
        AttributeValue::B(b) => out.extend_from_slice(b.as_ref()),
        AttributeValue::L(list) => list.iter().for_each(|v| table_bytes(v, out)),
        AttributeValue::M(map) => map.values().for_each(|v| table_bytes(v, out)),
        AttributeValue::Ss(list) => list
            .iter()
            .for_each(|s| out.extend_from_slice(s.as_bytes())),
        _ => {}
    }
    out.push(0);
}

fn stream_bytes(value: &aws_sdk_dynamodbstreams::types::AttributeValue, out: &mut Vec<u8>) {
    use aws_sdk_dynamodbstreams::types::AttributeValue as V;
    match value {
        V::S(s) | V::N(s) => out.extend_from_slice(s.as_bytes()),
        V::B(b) => out.extend_from_slice(b.as_ref()),
        V::L(list) => list.iter().for_each(|v| stream_bytes(v, out)),
        V::M(map) => map.values().for_each(|v| stream_bytes(v, out)),
        V::Ss(list) => list
            .iter()
            .for_each(|s| out.extend_from_slice(s.as_bytes())),
        _ => {}
    }
    out.push(0);
}

/// Every byte of every item of the table; and how many webhook secrets are sealed (binary).
async fn scanned(api: &TestApp) -> (Vec<u8>, usize) {
    let dynamo = api.dynamo().expect("the DynamoDB backend");
    let (mut bytes, mut sealed, mut start) = (Vec::new(), 0, None);
    loop {
        let out = dynamo
            .client()
            .scan()
            .table_name(dynamo.table())
            .set_exclusive_start_key(start)
            .send()
            .await
            .unwrap();
        for item in out.items() {
            sealed += usize::from(matches!(item.get("secret"), Some(AttributeValue::B(_))));
            item.values().for_each(|v| table_bytes(v, &mut bytes));
        }
        start = out.last_evaluated_key;
        if start.is_none() {
            return (bytes, sealed);
        }
    }
}

/// Every byte of every record of the table's stream (`NEW_IMAGE`), and how many records.
async fn streamed(api: &TestApp) -> (Vec<u8>, usize) {
    let dynamo = api.dynamo().expect("the DynamoDB backend");
    let arn = dynamo
        .client()
        .describe_table()
        .table_name(dynamo.table())
        .send()
        .await
        .unwrap()
        .table()
        .and_then(|t| t.latest_stream_arn().map(str::to_owned))
        .expect("the table's stream");
    let sdk = hosting_aws::sdk_config().await.unwrap();
    let streams = aws_sdk_dynamodbstreams::Client::new(&sdk);
    let shards = streams
        .describe_stream()
        .stream_arn(&arn)
        .send()
        .await
        .unwrap()
        .stream_description
        .map(|d| d.shards.unwrap_or_default())
        .unwrap_or_default();
    let (mut bytes, mut records) = (Vec::new(), 0);
    for shard in shards {
        let mut iterator = streams
            .get_shard_iterator()
            .stream_arn(&arn)
            .shard_id(shard.shard_id().unwrap())
            .shard_iterator_type(aws_sdk_dynamodbstreams::types::ShardIteratorType::TrimHorizon)
            .send()
            .await
            .unwrap()
            .shard_iterator;
        while let Some(current) = iterator {
            let out = streams
                .get_records()
                .shard_iterator(current)
                .send()
                .await
                .unwrap();
            if out.records().is_empty() {
                break;
            }
            for record in out.records() {
                records += 1;
                let image = record.dynamodb().and_then(|d| d.new_image());
                image
                    .into_iter()
                    .flat_map(|image| image.values())
                    .for_each(|v| stream_bytes(v, &mut bytes));
            }
            iterator = out.next_shard_iterator;
        }
    }
    (bytes, records)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

async fn register_keyed(api: &TestApp, url: &str, idempotency_key: &str) -> Response {
    let body = json!({"url": url, "events": ["stream.started"]}).to_string();
    let request = Request::builder()
        .method("POST")
        .uri("/api/v1/webhooks")
        .header("authorization", format!("Bearer {}", Keys::live_a()))
        .header("idempotency-key", idempotency_key)
        .body(Body::from(body))
        .unwrap();
    api.send(request).await
}

/// Starts a live stream with one destination and has its egress started, as the agent's
/// join and the timers' sweep do; its id.
async fn live_with_destination(api: &TestApp, stream_key: &str) -> String {
    let r = api
        .start(
            &Keys::live_a(),
            json!({"destinations": [{"platform": "tiktok",
                "ingest_url": "rtmps://push.example-live.com/live", "stream_key": stream_key}]}),
        )
        .await;
    r.assert_status(201);
    let (id, room) = (
        r.body["stream_id"].as_str().unwrap().to_owned(),
        r.body["room_name"].as_str().unwrap().to_owned(),
    );
    let joined = participant_event("participant_joined", &room, Some("AGENT"), "EV_rest_join");
    api.post_livekit(&signed_webhook_with(&joined, API_SECRET, 600))
        .await
        .assert_status(200);
    api.advance(chrono::Duration::seconds(1));
    hosting_app::service::timers::sweep(&api.runtime.app)
        .await
        .unwrap();
    id
}

fn verified_by_all(hit: &Hit, secrets: &[&str], public_key: &str) {
    for secret in secrets {
        let (ok, output) = run_verifier(secret, hit);
        assert!(ok, "{secret}: {output}");
    }
    let (ok, output) = run_public_key_verifier(public_key, hit);
    assert!(ok, "{output}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs DynamoDB (moto, with KMS and DynamoDB Streams): scripts/test.sh runs it"]
async fn dynamodb_only_neither_the_table_nor_its_stream_holds_a_secret() {
    let fake = FakeLiveKit::start().await;
    let api = TestApp::builder()
        .with_delivery()
        .with_private_webhook_urls()
        .with_livekit(&fake)
        .await;
    let receiver = Receiver::start(Behaviour::Ok).await;

    // A registration with an idempotency key: its replay shows the same secret.
    let first = register_keyed(&api, &receiver.url(), "hook-rest-1").await;
    first.assert_status(201);
    let again = register_keyed(&api, &receiver.url(), "hook-rest-1").await;
    assert_eq!(again.bytes, first.bytes, "the replay shows the same secret");
    let id = first.body["webhook_id"].as_str().unwrap().to_owned();
    let s1 = first.body["secret"].as_str().unwrap().to_owned();
    let other = Receiver::start(Behaviour::Ok).await;
    let (_, s3) = register(&api, &Keys::test_a(), &other.url()).await;

    // A rotation: both secrets and both key pairs sign during the overlap.
    let rotation = api
        .post(
            &format!("/webhooks/{id}/rotate-secret"),
            &Keys::live_a(),
            json!({}),
        )
        .await;
    rotation.assert_status(200);
    let s2 = rotation.body["secret"].as_str().unwrap().to_owned();
    let public_key = rotation.body["public_key"].as_str().unwrap().to_owned();
    let r = api
        .post(&format!("/webhooks/{id}/test"), &Keys::live_a(), json!({}))
        .await;
    r.assert_status(200);
    assert_eq!(r.body["delivered"], true, "{}", r.body);
    let tested = receiver.wait_for(1, WAIT).await;
    verified_by_all(&tested[0], &[&s2, &s1], &public_key);

    // Live streams pushed to destinations: the egress gets each key in its output URL.
    let stream = live_with_destination(&api, STREAM_KEYS[0]).await;
    let added = api
        .post(
            &format!("/streams/{stream}/destinations"),
            &Keys::live_a(),
            json!({"platform": "youtube", "ingest_url": "rtmps://push.example-live.com/live",
                   "stream_key": STREAM_KEYS[1]}),
        )
        .await;
    added.assert_status(201);
    let urls: Vec<String> = fake.egresses().into_values().flat_map(|e| e.urls).collect();
    for key in &STREAM_KEYS[..2] {
        assert!(
            urls.iter().any(|url| url.ends_with(key)),
            "{key} pushed: {urls:?}"
        );
    }
    let show = api
        .post(
            "/shows",
            &Keys::live_a(),
            json!({"creator_id": CREATOR_AVA, "product_name": "Glow Serum", "platform": "tiktok",
                   "duration_minutes": 30, "starts_at": (api.now() + chrono::Duration::hours(2)).to_rfc3339(),
                   "destinations": [{"platform": "tiktok",
                       "ingest_url": "rtmps://push.example-live.com/live", "stream_key": STREAM_KEYS[2]}]}),
        )
        .await;
    show.assert_status(201);

    // Deliveries of the live stream's start, and of a test stream's to the other webhook.
    let started = receiver
        .wait_until(WAIT, |hits| {
            hits.iter()
                .find(|hit| hit.body.contains("\"stream.started\""))
                .cloned()
        })
        .await
        .expect("the live stream's stream.started");
    verified_by_all(&started, &[&s2, &s1], &public_key);
    let hit = next_delivery(&api, &other).await;
    assert_eq!(signers(&hit, &[&s3]), [s3.as_str()]);

    let (table, sealed) = scanned(&api).await;
    let (stream_records, records) = streamed(&api).await;
    assert!(sealed >= 2, "the webhooks' secrets are sealed (binary)");
    assert!(records > 0, "the table's stream was read");
    let mut secrets: Vec<&str> = vec![&s1, &s2, &s3];
    secrets.extend(STREAM_KEYS);
    for (name, haystack) in [("table", &table), ("stream", &stream_records)] {
        // What is not secret is there to be found: the reading is not vacuous.
        for shown in [
            receiver.url(),
            "rtmps://push.example-live.com/live".to_owned(),
        ] {
            assert!(
                contains(haystack, shown.as_bytes()),
                "the {name} holds {shown}"
            );
        }
        for secret in &secrets {
            for form in encodings(secret) {
                assert!(
                    !contains(haystack, &form),
                    "the {name} holds {secret} as {}",
                    String::from_utf8_lossy(&form)
                );
            }
        }
        // No private key in the clear either (`whsk_` and its base64).
        for form in encodings("whsk_") {
            assert!(!contains(haystack, &form), "the {name} holds a private key");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_stored_plain_still_signs_and_its_rotation_seals_what_it_keeps() {
    let api = TestApp::builder()
        .with_delivery()
        .with_private_webhook_urls()
        .await;
    let receiver = Receiver::start(Behaviour::Ok).await;
    // As a version before sealing stored it: the secret and the private key as strings, no
    // public key beside them.
    let (id, registered) = register(&api, &Keys::test_a(), &receiver.url()).await;
    let id = uuid::Uuid::parse_str(&id).unwrap();
    let webhooks: &dyn WebhookStore = &*api.runtime.app.store;
    let mut webhook = webhooks.get_webhook("brand_a", id).await.unwrap().unwrap();
    assert!(webhook.secret.is_sealed());
    let plain_key = hosting_app::delivery::signing::generate_signing_key();
    let public_key = hosting_domain::webhook::public_key(&plain_key).unwrap();
    webhook.secret = StoredSecret::Plain(registered.clone());
    webhook.signing_key = Some(StoredSecret::Plain(plain_key));
    webhook.public_key = None;
    webhooks.delete_webhook("brand_a", id).await.unwrap();
    webhooks.create_webhook(&webhook, 25, None).await.unwrap();

    let detail = api.get(&format!("/webhooks/{id}"), &Keys::test_a()).await;
    assert_eq!(detail.body["public_key"], public_key.as_str());
    let hit = next_delivery(&api, &receiver).await;
    assert_eq!(signers(&hit, &[&registered]), [registered.as_str()]);
    assert!(hit.header("webhook-signature").contains("v1a,"));

    let secret = rotated(&api, &id.to_string(), None).await;
    let stored = webhooks.get_webhook("brand_a", id).await.unwrap().unwrap();
    for sealed in [
        Some(&stored.secret),
        stored.previous_secret.as_ref(),
        stored.signing_key.as_ref(),
        stored.previous_signing_key.as_ref(),
    ] {
        assert!(sealed.is_some_and(StoredSecret::is_sealed), "{stored:?}");
    }
    let hit = next_delivery(&api, &receiver).await;
    assert_eq!(
        signers(&hit, &[&secret, &registered]),
        [secret.as_str(), registered.as_str()]
    );
    let r = send_test(&api, &id.to_string()).await;
    assert_eq!(r.body["delivered"], true, "{}", r.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs DynamoDB and KMS behind the fault proxy: scripts/test.sh runs it"]
async fn dynamodb_only_when_kms_fails_nothing_is_stored_and_nothing_goes_unsigned() {
    let api = TestApp::builder().with_private_webhook_urls().await;
    let table = api
        .dynamo()
        .expect("the DynamoDB backend")
        .table()
        .to_owned();
    let receiver = Receiver::start(Behaviour::Ok).await;
    let secrets = api.runtime.app.secrets();

    // No data key: the registration stores nothing, and its error names no key material.
    secrets.forget_cached_keys();
    crate::common::faults::set(&table, json!({"fail_ops": ["GenerateDataKey"]})).await;
    let r = api
        .post(
            "/webhooks",
            &Keys::test_a(),
            json!({"url": receiver.url(), "events": ["stream.ended"]}),
        )
        .await;
    r.assert_error(500, "db_error");
    let listed = api.get("/webhooks", &Keys::test_a()).await;
    assert!(
        !listed.body.to_string().contains(&receiver.url()),
        "{}",
        listed.body
    );
    crate::common::faults::clear(&table).await;

    let (id, secret) = register(&api, &Keys::test_a(), &receiver.url()).await;
    // An instance whose role may not decrypt (or whose KMS fails): the test event is not sent.
    secrets.forget_cached_keys();
    crate::common::faults::set(&table, json!({"denied_ops": ["Decrypt"]})).await;
    send_test(&api, &id).await.assert_error(500, "db_error");
    assert!(receiver.hits().is_empty(), "nothing is sent unsigned");
    crate::common::faults::clear(&table).await;
    let r = send_test(&api, &id).await;
    assert_eq!(r.body["delivered"], true, "{}", r.body);
    let hit = receiver.wait_for(1, WAIT).await;
    assert_eq!(signers(&hit[0], &[&secret]), [secret.as_str()]);
}
