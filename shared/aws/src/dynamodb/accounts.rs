//! Brands, keys, the rate-limit counter and the creators catalog.

use async_trait::async_trait;
use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::AttributeValue;
use chrono::{DateTime, Utc};

use super::items::{
    ItemExt, api_key_from_item, api_key_item, corrupt, creator_from_item, creator_item, n, s,
};
use super::keys::{self, CREATORS_PK};
use super::requests::{applied, backend, no_sdk_retries, retrying, retrying_unapplied};
use super::{DynamoStore, table::TTL_ATTRIBUTE};
use hosting_domain::ports::{
    AccountStore, AdminStore, CreatorStore, RateLimitStore, ServiceKeyStore, StoreResult,
};
use hosting_domain::{ApiKey, Brand, Creator, Plan, Stream};

/// Rate windows are kept a little past their minute.
const RATE_TTL_SECS: i64 = 180;

#[async_trait]
impl AccountStore for DynamoStore {
    async fn find_api_key(&self, key_hash: &str) -> StoreResult<Option<ApiKey>> {
        self.get(keys::api_key_key(key_hash))
            .await?
            .as_ref()
            .map(api_key_from_item)
            .transpose()
    }

    async fn get_brand(&self, brand_id: &str) -> StoreResult<Option<Brand>> {
        let Some(item) = self.get(keys::brand_key(brand_id)).await? else {
            return Ok(None);
        };
        // The brand item exists as soon as counters move; a brand is its name and plan.
        if !item.contains_key("plan") {
            return Ok(None);
        }
        let mut brand = Brand::new(
            brand_id,
            &item.string("name")?,
            item.string("plan")?.parse::<Plan>().map_err(corrupt)?,
            &item.string("vertical")?,
        );
        // A brand written before billing cycles bills by calendar month in UTC.
        if let Some(time_zone) = item.opt_string("billing_time_zone") {
            brand.billing_time_zone = time_zone;
        }
        if let Some(day) = item.opt_number("billing_anchor_day") {
            brand.billing_anchor_day =
                u8::try_from(day).map_err(|_| corrupt("billing_anchor_day"))?;
        }
        Ok(Some(brand))
    }
}

#[async_trait]
impl RateLimitStore for DynamoStore {
    /// One `ADD` per request. Applied twice it would count the request twice, and DynamoDB
    /// cannot tell a resent `UpdateItem` from a new one, so it is sent again only when DynamoDB
    /// refused it unapplied (throttling, capacity). Any other failure (a lost answer among
    /// them) fails the request with `500 db_error`, counted at most once.
    async fn count_request(&self, brand_id: &str, window_start: DateTime<Utc>) -> StoreResult<u64> {
        let out = retrying_unapplied(|| {
            self.client
                .update_item()
                .table_name(&self.table)
                .set_key(Some(keys::rate_key(brand_id, window_start)))
                .update_expression("ADD #count :one SET #ttl = :ttl")
                .expression_attribute_names("#count", "count")
                .expression_attribute_names("#ttl", TTL_ATTRIBUTE)
                .expression_attribute_values(":one", n(1))
                .expression_attribute_values(":ttl", n(window_start.timestamp() + RATE_TTL_SECS))
                .return_values(aws_sdk_dynamodb::types::ReturnValue::UpdatedNew)
                .customize()
                .config_override(no_sdk_retries())
                .send()
        })
        .await
        .map_err(backend)?;
        let count = out.attributes.unwrap_or_default().number("count")?;
        Ok(u64::try_from(count).unwrap_or(0))
    }
}

#[async_trait]
impl CreatorStore for DynamoStore {
    async fn list_creators(&self) -> StoreResult<Vec<Creator>> {
        self.query_partition(CREATORS_PK, None)
            .await?
            .iter()
            .map(creator_from_item)
            .collect()
    }

    async fn get_creator(&self, creator_id: &str) -> StoreResult<Option<Creator>> {
        self.get(keys::creator_key(creator_id))
            .await?
            .as_ref()
            .map(creator_from_item)
            .transpose()
    }
}

#[async_trait]
impl AdminStore for DynamoStore {
    async fn put_brand(&self, brand: &Brand) -> StoreResult<()> {
        retrying(|| {
            self.client
                .update_item()
                .table_name(&self.table)
                .set_key(Some(keys::brand_key(&brand.id)))
                .update_expression(
                    "SET #name = :name, #plan = :plan, vertical = :vertical, \
                     billing_time_zone = :zone, billing_anchor_day = :day",
                )
                .expression_attribute_names("#name", "name")
                .expression_attribute_names("#plan", "plan")
                .expression_attribute_values(":name", s(&brand.name))
                .expression_attribute_values(":plan", s(brand.plan.as_str()))
                .expression_attribute_values(":vertical", s(&brand.vertical))
                .expression_attribute_values(":zone", s(&brand.billing_time_zone))
                .expression_attribute_values(":day", n(brand.billing_anchor_day))
                .send()
        })
        .await
        .map_err(backend)?;
        Ok(())
    }

    async fn put_api_key(&self, api_key: &ApiKey) -> StoreResult<()> {
        self.put_item(api_key_item(api_key)).await
    }

    async fn put_creator(&self, creator: &Creator) -> StoreResult<()> {
        self.put_item(creator_item(creator)).await
    }

    async fn delete_creator(&self, creator_id: &str) -> StoreResult<()> {
        retrying(|| {
            self.client
                .delete_item()
                .table_name(&self.table)
                .set_key(Some(keys::creator_key(creator_id)))
                .send()
        })
        .await
        .map_err(backend)?;
        Ok(())
    }

    async fn put_streams(&self, streams: &[Stream]) -> StoreResult<()> {
        self.seed_streams(streams).await
    }

    async fn put_stream(&self, stream: &Stream) -> StoreResult<()> {
        self.seed_streams(std::slice::from_ref(stream)).await
    }
}

/// A service key's length: an HMAC-SHA256 key as long as the hash.
const SERVICE_KEY_BYTES: usize = 32;

#[async_trait]
impl ServiceKeyStore for DynamoStore {
    /// Read first; when absent, written only if still absent, so instances racing to make it
    /// agree on the one written first, which a consistent read then finds.
    async fn service_key(&self, name: &str) -> StoreResult<Vec<u8>> {
        let key = keys::service_key_key(name);
        if let Some(item) = self.get(key.clone()).await? {
            return service_key_bytes(&item);
        }
        let made = rand::random::<[u8; SERVICE_KEY_BYTES]>().to_vec();
        let mut item = key.clone();
        item.insert("key".into(), AttributeValue::B(Blob::new(made.clone())));
        let written = applied(
            retrying(|| {
                self.client
                    .put_item()
                    .table_name(&self.table)
                    .set_item(Some(item.clone()))
                    .condition_expression("attribute_not_exists(pk)")
                    .send()
            })
            .await,
        )?;
        if written {
            return Ok(made);
        }
        // Another instance's, or this request's own write whose answer was lost.
        let stored = self
            .get(key)
            .await?
            .ok_or_else(|| corrupt("a service key is absent after its write"))?;
        service_key_bytes(&stored)
    }
}

fn service_key_bytes(item: &super::Item) -> StoreResult<Vec<u8>> {
    match item.get("key") {
        Some(AttributeValue::B(bytes)) if !bytes.as_ref().is_empty() => Ok(bytes.as_ref().to_vec()),
        _ => Err(corrupt("a service key item without its key")),
    }
}
