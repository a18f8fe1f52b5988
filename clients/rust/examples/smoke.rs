//! The generated Rust client, used as an integrator would, against a running server.
//!
//! `cargo run --example smoke -- BASE_URL TEST_KEY`

use anyhow::{Context as _, bail, ensure};
use live_stream_hosting_api_client::{
    ApiResponse, DeleteWebhookRequest, DeleteWebhookRequestQuery, EndReason, EndStreamRequest,
    EndStreamRequestPath, Error, ErrorCode, EventType, FailTestStreamRequest,
    FailTestStreamRequestPath, GetAnalyticsRequest, GetAnalyticsRequestQuery, GetStreamRequest,
    GetStreamRequestPath, ListCreatorsRequest, ListStreamsRequest, ListStreamsRequestQuery,
    ListWebhooksRequest, LiveStreamHostingApiClient, Period, RegisterWebhookRequest,
    RegisterWebhookRequestParams, SetTestStreamViewersRequest, SetTestStreamViewersRequestPath,
    SetViewersRequest, StartStreamRequest, StartStreamRequestParams,
    StartStreamRequestParamsHeader, Platform, StreamStatus, WithHeaders,
};

/// The success (200, 201 or 202), or the typed error as a failure.
fn success<V, H>(answer: ApiResponse<V, WithHeaders<H, Error>>) -> anyhow::Result<V> {
    match answer {
        ApiResponse::Ok(value) | ApiResponse::Created(value) | ApiResponse::Accepted(value) => {
            Ok(value)
        }
        ApiResponse::BadRequest(e)
        | ApiResponse::Unauthorized(e)
        | ApiResponse::PaymentRequired(e)
        | ApiResponse::Forbidden(e)
        | ApiResponse::NotFound(e)
        | ApiResponse::Conflict(e)
        | ApiResponse::UnprocessableEntity(e)
        | ApiResponse::TooManyRequests(e)
        | ApiResponse::InternalServerError(e)
        | ApiResponse::BadGateway(e) => {
            bail!("{}: {}", e.body.error.code, e.body.error.message)
        }
        ApiResponse::Gone | ApiResponse::Success(_) => bail!("an answer without a body"),
        ApiResponse::Other(raw) => bail!("an undocumented answer: {}", raw.status()),
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let (Some(base_url), Some(key)) = (args.next(), args.next()) else {
        bail!("usage: smoke BASE_URL TEST_KEY");
    };
    let public = LiveStreamHostingApiClient::with_base_url(&base_url)?;
    let client = LiveStreamHostingApiClient::with_base_url(&base_url)?.with_bearer_auth(key);

    let creators = success(public.list_creators(ListCreatorsRequest::default()).await?)?;
    let creator = creators
        .body
        .creators
        .first()
        .context("the catalog is empty")?;

    let start = || StartStreamRequestParams {
        header: StartStreamRequestParamsHeader {
            idempotency_key: Some(format!("smoke-rust-{}", std::process::id())),
        },
        body: StartStreamRequest {
            creator_id: creator.id.clone(),
            product_name: "Glow Serum".into(),
            platform: Platform::Tiktok,
            duration_minutes: Some(30),
            ..Default::default()
        },
    };
    let created = success(client.start_stream(start()).await?)?;
    ensure!(created.body.status == StreamStatus::Live && created.body.test == Some(true));
    ensure!(
        created
            .headers
            .location
            .ends_with(&created.body.stream_id.to_string())
    );
    let replay = success(client.start_stream(start()).await?)?;
    ensure!(replay.headers.idempotent_replayed.as_deref() == Some("true"));
    ensure!(replay.body.stream_id == created.body.stream_id);

    let id = created.body.stream_id.to_string();
    let path = || GetStreamRequestPath { id: id.clone() };
    let detail = success(client.get_stream(GetStreamRequest { path: path() }).await?)?;
    ensure!(detail.body.stream_id == created.body.stream_id && detail.body.events.is_empty());

    let page = success(
        client
            .list_streams(ListStreamsRequest {
                query: ListStreamsRequestQuery {
                    status: Some(StreamStatus::Live),
                    limit: Some(5),
                    offset: None,
                },
            })
            .await?,
    )?;
    ensure!(page.body.limit == 5);
    ensure!(
        page.body
            .streams
            .iter()
            .any(|s| s.id == created.body.stream_id)
    );

    let end = || EndStreamRequest {
        path: EndStreamRequestPath { id: id.clone() },
    };
    let ended = success(client.end_stream(end()).await?)?;
    ensure!(ended.body.status == StreamStatus::Ended);
    match client.end_stream(end()).await? {
        ApiResponse::NotFound(e) => ensure!(e.body.error.code == ErrorCode::NotFound),
        other => bail!("ending twice: {other:?}"),
    }
    let after = success(client.get_stream(GetStreamRequest { path: path() }).await?)?;
    ensure!(after.body.end_reason == Some(EndReason::Requested));

    // The test helpers: a second test stream gains viewers, then fails as a provider would.
    let mut second = start();
    second.header.idempotency_key = None;
    let failing = success(client.start_stream(second).await?)?
        .body
        .stream_id
        .to_string();
    let watched = success(
        client
            .set_test_stream_viewers(SetTestStreamViewersRequest {
                path: SetTestStreamViewersRequestPath {
                    id: failing.clone(),
                },
                body: SetViewersRequest { count: 120 },
            })
            .await?,
    )?;
    ensure!(watched.body.viewer_count == 120);
    let failed = success(
        client
            .fail_test_stream(FailTestStreamRequest {
                path: FailTestStreamRequestPath { id: failing },
            })
            .await?,
    )?;
    ensure!(failed.body.status == StreamStatus::Error);
    ensure!(failed.body.end_reason == Some(EndReason::ProviderError));

    let analytics = success(
        client
            .get_analytics(GetAnalyticsRequest {
                query: GetAnalyticsRequestQuery {
                    period: Some(Period::T24h),
                    stream_id: None,
                },
            })
            .await?,
    )?;
    ensure!(analytics.body.period == Period::T24h && analytics.body.total_streams >= 1);

    let registered = success(
        client
            .register_webhook(RegisterWebhookRequestParams {
                header: Default::default(),
                body: RegisterWebhookRequest {
                    url: "https://hooks.example.com/live".into(),
                    events: vec![EventType::StreamStarted, EventType::StreamEnded],
                },
            })
            .await?,
    )?;
    ensure!(registered.body.secret.starts_with("whsec_"));
    let webhook_id = registered.body.webhook_id;
    let listed = success(client.list_webhooks(ListWebhooksRequest::default()).await?)?;
    ensure!(
        listed
            .body
            .webhooks
            .iter()
            .any(|w| w.webhook_id == webhook_id)
    );
    let deleted = success(
        client
            .delete_webhook(DeleteWebhookRequest {
                query: DeleteWebhookRequestQuery {
                    id: webhook_id.to_string(),
                },
            })
            .await?,
    )?;
    ensure!(deleted.body.deleted);

    // The client checks the documented limits before sending: a product name over 200
    // characters never leaves it.
    let mut too_long = start();
    too_long.body.product_name = "x".repeat(201);
    ensure!(client.start_stream(too_long).await.is_err());

    // An error, read as the typed error: 400 invalid_creator for an id no creator has.
    let mut unknown_creator = start();
    unknown_creator.header.idempotency_key = None;
    unknown_creator.body.creator_id = "avt_nobody".into();
    match client.start_stream(unknown_creator).await? {
        ApiResponse::BadRequest(e) => ensure!(e.body.error.code == ErrorCode::InvalidCreator),
        other => bail!("an unknown creator: {other:?}"),
    }

    println!("rust client: every call answered as documented");
    Ok(())
}
