//! The table's definition, for local emulators and first runs of the admin command. The SAM
//! template declares the same table for deployments; a test below fails when the two differ.

use std::time::Duration;

use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, GlobalSecondaryIndex, IndexStatus, KeySchemaElement, KeyType,
    Projection, ProjectionType, ScalarAttributeType, StreamSpecification, StreamViewType,
    TableStatus, TimeToLiveSpecification,
};

use super::DynamoStore;
use super::keys::{DUE_INDEX, DUE_PK, DUE_SK};
use super::requests::backend;
use hosting_domain::error::StoreError;

/// The attribute that expires items.
pub const TTL_ATTRIBUTE: &str = "ttl";
/// Key attributes (all strings): the table's, then the due index's.
pub const KEY_ATTRIBUTES: [&str; 4] = ["pk", "sk", DUE_PK, DUE_SK];
/// How long creation may take before the admin command gives up.
const ACTIVE_WITHIN: Duration = Duration::from_secs(300);

fn key_schema(pk: &str, sk: &str) -> Result<Vec<KeySchemaElement>, StoreError> {
    Ok(vec![
        KeySchemaElement::builder()
            .attribute_name(pk)
            .key_type(KeyType::Hash)
            .build()
            .map_err(backend)?,
        KeySchemaElement::builder()
            .attribute_name(sk)
            .key_type(KeyType::Range)
            .build()
            .map_err(backend)?,
    ])
}

impl DynamoStore {
    /// Creates the table with its index, stream and TTL, waiting until it is `ACTIVE` (TTL
    /// cannot be set while the table is still being created).
    pub async fn create_table(&self) -> Result<(), StoreError> {
        let attributes = KEY_ATTRIBUTES
            .iter()
            .map(|name| {
                AttributeDefinition::builder()
                    .attribute_name(*name)
                    .attribute_type(ScalarAttributeType::S)
                    .build()
                    .map_err(backend)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let due_index = GlobalSecondaryIndex::builder()
            .index_name(DUE_INDEX)
            .set_key_schema(Some(key_schema(DUE_PK, DUE_SK)?))
            .projection(
                Projection::builder()
                    .projection_type(ProjectionType::All)
                    .build(),
            )
            .build()
            .map_err(backend)?;
        self.client
            .create_table()
            .table_name(&self.table)
            .set_attribute_definitions(Some(attributes))
            .set_key_schema(Some(key_schema("pk", "sk")?))
            .global_secondary_indexes(due_index)
            .billing_mode(BillingMode::PayPerRequest)
            .stream_specification(
                StreamSpecification::builder()
                    .stream_enabled(true)
                    .stream_view_type(StreamViewType::NewImage)
                    .build()
                    .map_err(backend)?,
            )
            .send()
            .await
            .map_err(backend)?;
        self.wait_until_active().await?;
        let ttl = TimeToLiveSpecification::builder()
            .enabled(true)
            .attribute_name(TTL_ATTRIBUTE)
            .build()
            .map_err(backend)?;
        let deadline = tokio::time::Instant::now() + ACTIVE_WITHIN;
        loop {
            let result = self
                .client
                .update_time_to_live()
                .table_name(&self.table)
                .time_to_live_specification(ttl.clone())
                .send()
                .await;
            match result {
                Ok(_) => return Ok(()),
                // Still settling after creation: try again shortly.
                Err(err)
                    if err.code() == Some("ResourceInUseException")
                        && tokio::time::Instant::now() < deadline =>
                {
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
                Err(err) => return Err(backend(err)),
            }
        }
    }

    /// Polls until the table and its index are `ACTIVE`.
    async fn wait_until_active(&self) -> Result<(), StoreError> {
        let deadline = tokio::time::Instant::now() + ACTIVE_WITHIN;
        loop {
            let out = self
                .client
                .describe_table()
                .table_name(&self.table)
                .send()
                .await
                .map_err(backend)?;
            let table = out.table.ok_or_else(|| {
                StoreError::Backend(format!("table {} not described", self.table))
            })?;
            let indexes_active = table
                .global_secondary_indexes()
                .iter()
                .all(|index| index.index_status() == Some(&IndexStatus::Active));
            if table.table_status() == Some(&TableStatus::Active) && indexes_active {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(StoreError::Backend(format!(
                    "table {} is not ACTIVE after {} s",
                    self.table,
                    ACTIVE_WITHIN.as_secs()
                )));
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    pub async fn delete_table(&self) -> Result<(), StoreError> {
        self.client
            .delete_table()
            .table_name(&self.table)
            .send()
            .await
            .map_err(backend)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines of the template's `Table:` resource.
    fn template_table() -> Vec<String> {
        let template =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../template.yaml"))
                .expect("template.yaml beside the workspace");
        template
            .lines()
            .skip_while(|line| line.trim_end() != "  Table:")
            .skip(1)
            .take_while(|line| line.is_empty() || line.starts_with("    "))
            .map(str::to_owned)
            .collect()
    }

    fn values_of(lines: &[String], field: &str) -> Vec<String> {
        lines
            .iter()
            .flat_map(|line| line.split([',', '{', '}']))
            .filter_map(|part| {
                part.trim()
                    .trim_start_matches("- ")
                    .strip_prefix(&format!("{field}:"))
            })
            .map(|value| value.trim().to_owned())
            .collect()
    }

    #[test]
    fn the_template_declares_the_same_table() {
        let table = template_table();
        assert!(!table.is_empty(), "no Table resource in template.yaml");
        let mut declared = values_of(&table, "AttributeName");
        declared.sort();
        declared.dedup();
        let mut expected: Vec<String> = KEY_ATTRIBUTES
            .iter()
            .chain([&TTL_ATTRIBUTE])
            .map(|name| name.to_string())
            .collect();
        expected.sort();
        assert_eq!(declared, expected, "key and TTL attributes");
        assert_eq!(values_of(&table, "IndexName"), vec![DUE_INDEX.to_owned()]);
        assert_eq!(values_of(&table, "StreamViewType"), vec!["NEW_IMAGE"]);
        let key_types: Vec<String> = values_of(&table, "KeyType");
        assert_eq!(
            key_types,
            ["HASH", "RANGE", "HASH", "RANGE"],
            "pk, sk, due_pk, due_sk"
        );
        let attribute_types = values_of(&table, "AttributeType");
        assert_eq!(attribute_types, vec!["S"; KEY_ATTRIBUTES.len()]);
        let key_schema: Vec<String> = table
            .iter()
            .filter(|line| line.contains("KeyType"))
            .flat_map(|line| values_of(std::slice::from_ref(line), "AttributeName"))
            .collect();
        assert_eq!(
            key_schema,
            ["pk", "sk", DUE_PK, DUE_SK],
            "key schemas, in order"
        );
    }
}
