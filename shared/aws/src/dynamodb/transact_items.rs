//! The items of a `TransactWriteItems`: a `Put`, a `Delete`, an `Update` (and the `ADD` of
//! counters), each on the store's table. Used through `requests.rs`.

use aws_sdk_dynamodb::types::{AttributeValue, Put, TransactWriteItem, Update};

use super::Item;
use super::items::n;
use super::requests::backend;
use hosting_domain::error::StoreError;
use hosting_domain::ports::StoreResult;

pub(super) fn put(
    table: &str,
    item: Item,
    condition: Option<&str>,
) -> Result<TransactWriteItem, StoreError> {
    let put = Put::builder()
        .table_name(table)
        .set_item(Some(item))
        .set_condition_expression(condition.map(str::to_owned))
        .build()
        .map_err(backend)?;
    Ok(TransactWriteItem::builder().put(put).build())
}

pub(super) fn delete(table: &str, key: Item) -> Result<TransactWriteItem, StoreError> {
    let delete = aws_sdk_dynamodb::types::Delete::builder()
        .table_name(table)
        .set_key(Some(key))
        .build()
        .map_err(backend)?;
    Ok(TransactWriteItem::builder().delete(delete).build())
}

pub(super) struct UpdateSpec<'a> {
    pub key: Item,
    pub expression: &'a str,
    pub condition: Option<&'a str>,
    pub names: Vec<(&'a str, String)>,
    pub values: Vec<(&'a str, AttributeValue)>,
}

/// One `UpdateItem` of a transaction that `ADD`s each delta to its attribute.
pub(super) fn add_update(
    table: &str,
    key: Item,
    deltas: &[(String, i64)],
) -> StoreResult<TransactWriteItem> {
    let placeholders: Vec<(String, String)> = (0..deltas.len())
        .map(|i| (format!("#a{i}"), format!(":v{i}")))
        .collect();
    let expression = format!(
        "ADD {}",
        placeholders
            .iter()
            .map(|(name, value)| format!("{name} {value}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    update(
        table,
        UpdateSpec {
            key,
            expression: &expression,
            condition: None,
            names: placeholders
                .iter()
                .zip(deltas)
                .map(|((name, _), (attribute, _))| (name.as_str(), attribute.clone()))
                .collect(),
            values: placeholders
                .iter()
                .zip(deltas)
                .map(|((_, value), (_, delta))| (value.as_str(), n(delta)))
                .collect(),
        },
    )
}

pub(super) fn update(table: &str, spec: UpdateSpec<'_>) -> Result<TransactWriteItem, StoreError> {
    let mut builder = Update::builder()
        .table_name(table)
        .set_key(Some(spec.key))
        .update_expression(spec.expression)
        .set_condition_expression(spec.condition.map(str::to_owned));
    for (name, value) in spec.names {
        builder = builder.expression_attribute_names(name, value);
    }
    for (name, value) in spec.values {
        builder = builder.expression_attribute_values(name, value);
    }
    Ok(TransactWriteItem::builder()
        .update(builder.build().map_err(backend)?)
        .build())
}
