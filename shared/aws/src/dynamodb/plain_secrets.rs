//! Secrets stored plain before sealing existed, for `admin seal-secrets` (docs/security.md,
//! "Upgrading a stack"): found page by page with a `Scan`, and each replaced by its sealed
//! form only while it is still the plain value read, so a rotation or a deletion racing the
//! command wins.

use aws_sdk_dynamodb::types::AttributeValue;
use uuid::Uuid;

use super::items::{ItemExt, secret_value};
use super::keys::WEBHOOK_SK_PREFIX;
use super::requests::{backend, condition_failed, retrying};
use super::{DynamoStore, Item};
use hosting_domain::ports::StoreResult;
use hosting_domain::sealed::StoredSecret;

/// Items read per page.
const PAGE: i32 = 500;

/// What a plain secret is, and so how it is sealed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlainSecretKind {
    WebhookSecret(Uuid),
    /// With the public key to store beside it when the item has none.
    WebhookSigningKey(Uuid, Option<String>),
    /// By destination id.
    StreamKey(String),
    /// A recorded answer that shows a webhook's secret, by idempotency key id.
    IdempotentAnswer(String),
}

/// One attribute holding a secret in the clear.
#[derive(Clone)]
pub struct PlainSecret {
    key: Item,
    pub attribute: String,
    pub value: String,
    pub kind: PlainSecretKind,
}

impl std::fmt::Debug for PlainSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PlainSecret({}, {:?})", self.attribute, self.kind)
    }
}

fn plain(item: &Item, attribute: &str) -> Option<String> {
    match item.get(attribute) {
        Some(AttributeValue::S(value)) => Some(value.clone()),
        _ => None,
    }
}

/// The plain secrets of one item.
fn plain_secrets_of(item: &Item) -> Vec<(String, String, PlainSecretKind)> {
    let mut found = Vec::new();
    let sk = item.opt_string("sk").unwrap_or_default();
    let pk = item.opt_string("pk").unwrap_or_default();
    if sk.starts_with(WEBHOOK_SK_PREFIX)
        && let Some(id) = item
            .opt_string("id")
            .and_then(|id| Uuid::parse_str(&id).ok())
    {
        for attribute in ["secret", "previous_secret"] {
            if let Some(value) = plain(item, attribute) {
                found.push((attribute.into(), value, PlainSecretKind::WebhookSecret(id)));
            }
        }
        for attribute in ["signing_key", "previous_signing_key"] {
            if let Some(value) = plain(item, attribute) {
                let public_key = (attribute == "signing_key" && !item.contains_key("public_key"))
                    .then(|| hosting_domain::webhook::public_key(&value))
                    .flatten();
                found.push((
                    attribute.into(),
                    value,
                    PlainSecretKind::WebhookSigningKey(id, public_key),
                ));
            }
        }
    }
    for (attribute, value) in item {
        if attribute.starts_with("dst_")
            && let AttributeValue::S(value) = value
        {
            found.push((
                attribute.clone(),
                value.clone(),
                PlainSecretKind::StreamKey(attribute.clone()),
            ));
        }
    }
    if let Some(key_id) = pk.strip_prefix("IDEMPOTENCY#")
        && let Some(body) = plain(item, "answer_body")
        && body.contains("\"secret\":\"whsec_")
    {
        found.push((
            "answer_body".into(),
            body,
            PlainSecretKind::IdempotentAnswer(key_id.to_owned()),
        ));
    }
    found
}

impl DynamoStore {
    /// A page of the table's plain secrets, and where the next page starts (`None`: the
    /// last). Reads at most 500 items; an operator's one-time command, never the product's.
    pub async fn plain_secrets(
        &self,
        start: Option<Item>,
    ) -> StoreResult<(Vec<PlainSecret>, Option<Item>)> {
        let out = retrying(|| {
            self.client
                .scan()
                .table_name(&self.table)
                .limit(PAGE)
                .set_exclusive_start_key(start.clone())
                .send()
        })
        .await
        .map_err(backend)?;
        let secrets = out
            .items()
            .iter()
            .flat_map(|item| {
                let key: Item = ["pk", "sk"]
                    .into_iter()
                    .filter_map(|name| Some((name.to_owned(), item.get(name)?.clone())))
                    .collect();
                plain_secrets_of(item)
                    .into_iter()
                    .map(move |(attribute, value, kind)| PlainSecret {
                        key: key.clone(),
                        attribute,
                        value,
                        kind,
                    })
            })
            .collect();
        Ok((secrets, out.last_evaluated_key))
    }

    /// Replaces `secret` with `sealed`, only while the item still holds the plain value read:
    /// `false` when it changed (rotated, removed) and nothing was written.
    pub async fn seal_plain_secret(
        &self,
        secret: &PlainSecret,
        sealed: &StoredSecret,
    ) -> StoreResult<bool> {
        let mut expression = "SET #attribute = :sealed".to_owned();
        if let PlainSecretKind::WebhookSigningKey(_, Some(_)) = &secret.kind {
            expression.push_str(", public_key = if_not_exists(public_key, :public_key)");
        }
        let result = retrying(|| {
            let mut request = self
                .client
                .update_item()
                .table_name(&self.table)
                .set_key(Some(secret.key.clone()))
                .update_expression(&expression)
                .condition_expression("#attribute = :plain")
                .expression_attribute_names("#attribute", &secret.attribute)
                .expression_attribute_values(":sealed", secret_value(sealed))
                .expression_attribute_values(":plain", AttributeValue::S(secret.value.clone()));
            if let PlainSecretKind::WebhookSigningKey(_, Some(public_key)) = &secret.kind {
                request = request.expression_attribute_values(
                    ":public_key",
                    AttributeValue::S(public_key.clone()),
                );
            }
            request.send()
        })
        .await;
        match result {
            Ok(_) => Ok(true),
            Err(err) if condition_failed(&err) => Ok(false),
            Err(err) => Err(backend(err)),
        }
    }
}
