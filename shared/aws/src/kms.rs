//! The stack's key for secrets at rest, in KMS (docs/security.md, "Secrets at rest"): it makes
//! and unwraps the data keys of `hosting_app::secrets`' envelopes. Every call carries the
//! encryption context `{"table": <TABLE_NAME>}`, which the template's grants require, so a
//! data key of one stack's table opens nothing elsewhere.
//!
//! The key is `SECRETS_KEY_ID` (the template passes its key's ARN) or, when that is unset, the
//! alias `alias/<TABLE_NAME>-secrets` that `admin create-table` makes beside a local table.

use async_trait::async_trait;
use aws_sdk_kms::Client;
use aws_sdk_kms::primitives::Blob;
use aws_sdk_kms::types::DataKeySpec;
use hosting_domain::error::StoreError;
use hosting_domain::ports::{KeyVault, StoreResult};
use hosting_domain::sealed::DataKey;

use crate::LazyClient;

/// The encryption context's one entry.
pub const CONTEXT_KEY: &str = "table";

/// The alias of a table's secrets key when none is configured.
pub fn default_alias(table: &str) -> String {
    format!("alias/{table}-secrets")
}

/// A KMS client, built with the SDK's standard retries.
pub fn client(sdk: &crate::SdkConfig) -> Client {
    Client::new(sdk)
}

#[derive(Clone)]
pub struct KmsKeyVault {
    client: LazyClient<Client>,
    key_id: String,
    table: String,
}

impl KmsKeyVault {
    /// The vault of `table`'s secrets under `key_id` (an ARN, id or alias).
    pub fn new(client: impl Into<LazyClient<Client>>, key_id: String, table: String) -> Self {
        Self {
            client: client.into(),
            key_id,
            table,
        }
    }
}

/// What a failed KMS call says: the operation and the error's code, never the request.
fn failed<E>(operation: &str, err: &aws_sdk_kms::error::SdkError<E>) -> StoreError
where
    E: aws_sdk_kms::error::ProvideErrorMetadata + std::error::Error + 'static,
{
    let code = err
        .as_service_error()
        .and_then(|service| service.code())
        .unwrap_or("no answer");
    StoreError::Backend(format!("KMS {operation} failed: {code}"))
}

#[async_trait]
impl KeyVault for KmsKeyVault {
    async fn new_data_key(&self) -> StoreResult<DataKey> {
        let out = self
            .client
            .generate_data_key()
            .key_id(&self.key_id)
            .key_spec(DataKeySpec::Aes256)
            .encryption_context(CONTEXT_KEY, &self.table)
            .send()
            .await
            .map_err(|err| failed("GenerateDataKey", &err))?;
        let plaintext: [u8; 32] = out
            .plaintext()
            .map(|blob| blob.as_ref())
            .and_then(|bytes| bytes.try_into().ok())
            .ok_or_else(|| StoreError::Backend("KMS GenerateDataKey: no 32-byte key".into()))?;
        let wrapped = out
            .ciphertext_blob()
            .map(|blob| blob.as_ref().to_vec())
            .ok_or_else(|| StoreError::Backend("KMS GenerateDataKey: no wrapped key".into()))?;
        Ok(DataKey { plaintext, wrapped })
    }

    async fn unwrap_data_key(&self, wrapped: &[u8]) -> StoreResult<[u8; 32]> {
        let out = self
            .client
            .decrypt()
            .key_id(&self.key_id)
            .ciphertext_blob(Blob::new(wrapped))
            .encryption_context(CONTEXT_KEY, &self.table)
            .send()
            .await
            .map_err(|err| {
                let refused = err.as_service_error().is_some_and(|e| {
                    e.is_invalid_ciphertext_exception() || e.is_incorrect_key_exception()
                });
                if refused {
                    StoreError::Corrupt("a sealed secret does not open".into())
                } else {
                    failed("Decrypt", &err)
                }
            })?;
        out.plaintext()
            .map(|blob| blob.as_ref())
            .and_then(|bytes| bytes.try_into().ok())
            .ok_or_else(|| StoreError::Backend("KMS Decrypt: no 32-byte key".into()))
    }
}

/// Makes `table`'s secrets key and its alias ([`default_alias`]) unless the alias exists:
/// `admin create-table` and the test suite's tables, never the template's stack (whose key
/// the template makes). The key rotates yearly, as the template's does.
pub async fn ensure_table_key(client: &Client, table: &str) -> Result<String, StoreError> {
    let alias = default_alias(table);
    if let Ok(found) = client.describe_key().key_id(&alias).send().await
        && let Some(id) = found.key_metadata().map(|m| m.key_id().to_owned())
    {
        return Ok(id);
    }
    let made = client
        .create_key()
        .description(format!("Secrets at rest of the table {table}"))
        .send()
        .await
        .map_err(|err| failed("CreateKey", &err))?;
    let key_id = made
        .key_metadata()
        .map(|m| m.key_id().to_owned())
        .ok_or_else(|| StoreError::Backend("KMS CreateKey: no key id".into()))?;
    client
        .enable_key_rotation()
        .key_id(&key_id)
        .send()
        .await
        .map_err(|err| failed("EnableKeyRotation", &err))?;
    match client
        .create_alias()
        .alias_name(&alias)
        .target_key_id(&key_id)
        .send()
        .await
    {
        Ok(_) => Ok(key_id),
        // Made by a concurrent run: use that one.
        Err(err)
            if err
                .as_service_error()
                .is_some_and(|e| e.is_already_exists_exception()) =>
        {
            client
                .describe_key()
                .key_id(&alias)
                .send()
                .await
                .map_err(|err| failed("DescribeKey", &err))?
                .key_metadata()
                .map(|m| m.key_id().to_owned())
                .ok_or_else(|| StoreError::Backend("KMS DescribeKey: no key id".into()))
        }
        Err(err) => Err(failed("CreateAlias", &err)),
    }
}
