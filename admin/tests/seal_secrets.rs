//! `admin seal-secrets` against the emulator (scripts/test.sh runs it in its DynamoDB stage):
//! what a version before sealing stored plain is sealed once, and still opens to the same
//! secret; what is sealed already is left as it is.

use std::process::Command;
use std::sync::Arc;

use aws_sdk_dynamodb::types::AttributeValue;
use hosting_app::secrets::Secrets;
use hosting_aws::dynamodb::DynamoStore;
use hosting_domain::ports::WebhookStore;
use hosting_domain::sealed::{SecretScope, StoredSecret};
use hosting_domain::{EventType, Webhook};

fn admin(table: &str, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_admin"))
        .args(args)
        .env("STORE", "dynamodb")
        .env("TABLE_NAME", table)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "admin {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn webhook(secret: StoredSecret, signing_key: Option<StoredSecret>) -> Webhook {
    Webhook {
        id: uuid::Uuid::new_v4(),
        brand_id: "brand_x".into(),
        url: "https://hooks.example.com/x".into(),
        events: vec![EventType::StreamStarted],
        secret,
        active: true,
        created_at: chrono::Utc::now(),
        previous_secret: None,
        previous_secret_expires_at: None,
        secret_rotated_at: None,
        signing_key,
        previous_signing_key: None,
        public_key: None,
        failing_since: None,
        disabled_reason: None,
    }
}

#[tokio::test]
#[ignore = "needs DynamoDB and KMS (moto): scripts/test.sh runs it"]
async fn dynamodb_only_seal_secrets_seals_what_was_stored_plain() {
    let table = format!("admin-seal-{}", uuid::Uuid::new_v4().simple());
    let sdk = hosting_aws::sdk_config().await.expect("SDK configuration");
    let store = DynamoStore::new(hosting_aws::dynamodb_client(&sdk), table.clone());
    let made = admin(&table, &["create-table"]);
    assert!(made.contains(&format!("alias/{table}-secrets")), "{made}");
    let secrets = Secrets::new(Arc::new(hosting_aws::kms::KmsKeyVault::new(
        hosting_aws::kms::client(&sdk),
        hosting_aws::kms::default_alias(&table),
        table.clone(),
    )));

    // As stored before sealing: strings, and no public key beside the private one.
    let private_key = hosting_app::delivery::signing::generate_signing_key();
    let legacy = webhook(
        StoredSecret::Plain("whsec_legacyLegacyLegacyLegacyLegacy".into()),
        Some(StoredSecret::Plain(private_key.clone())),
    );
    store.create_webhook(&legacy, 25, None).await.unwrap();
    // A webhook sealed already: left as it is.
    let current_id = uuid::Uuid::new_v4();
    let sealed = secrets
        .seal(&SecretScope::WebhookSecret(&current_id), "whsec_current")
        .await
        .unwrap();
    let current = Webhook {
        id: current_id,
        ..webhook(sealed.clone(), None)
    };
    store.create_webhook(&current, 25, None).await.unwrap();
    // A live stream's destination keys.
    let stream_pk = format!("STREAM#{}", uuid::Uuid::new_v4());
    store
        .client()
        .put_item()
        .table_name(&table)
        .item("pk", AttributeValue::S(stream_pk.clone()))
        .item("sk", AttributeValue::S("DESTINATION_KEYS".into()))
        .item("dst_legacy", AttributeValue::S("sk_live_legacy_key".into()))
        .send()
        .await
        .unwrap();

    let out = admin(&table, &["seal-secrets"]);
    assert!(out.contains("sealed 3 secrets stored plain"), "{out}");

    let stored = store
        .get_webhook("brand_x", legacy.id)
        .await
        .unwrap()
        .unwrap();
    assert!(stored.secret.is_sealed() && stored.signing_key.as_ref().unwrap().is_sealed());
    let id = legacy.id;
    assert_eq!(
        secrets
            .open(&SecretScope::WebhookSecret(&id), &stored.secret)
            .await
            .unwrap(),
        "whsec_legacyLegacyLegacyLegacyLegacy"
    );
    assert_eq!(
        secrets
            .open(
                &SecretScope::WebhookSigningKey(&id),
                stored.signing_key.as_ref().unwrap()
            )
            .await
            .unwrap(),
        private_key
    );
    // Its public key, stored beside the sealed private key.
    assert_eq!(
        stored.public_key,
        hosting_domain::webhook::public_key(&private_key)
    );
    let unchanged = store
        .get_webhook("brand_x", current_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(unchanged.secret, sealed);
    let keys = store
        .client()
        .get_item()
        .table_name(&table)
        .key("pk", AttributeValue::S(stream_pk))
        .key("sk", AttributeValue::S("DESTINATION_KEYS".into()))
        .send()
        .await
        .unwrap()
        .item
        .unwrap();
    let Some(AttributeValue::B(envelope)) = keys.get("dst_legacy") else {
        panic!("the stream key is sealed: {:?}", keys.get("dst_legacy"));
    };
    assert_eq!(
        secrets
            .open(
                &SecretScope::StreamKey("dst_legacy"),
                &StoredSecret::Sealed(envelope.clone().into_inner())
            )
            .await
            .unwrap(),
        "sk_live_legacy_key"
    );

    // Once is enough: a second run finds nothing plain.
    let out = admin(&table, &["seal-secrets"]);
    assert!(out.contains("sealed 0 secrets stored plain"), "{out}");
}
