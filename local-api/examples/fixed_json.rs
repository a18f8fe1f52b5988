//! The throughput baseline for `bench/throughput.sh`: a bare axum server answering every
//! request with the same small JSON body, on the same runtime and HTTP stack as local-api.

use axum::Json;
use axum::routing::get;

#[tokio::main]
async fn main() {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:3900".into());
    let body = serde_json::json!({
        "stream_id": "00000000-0000-4000-8000-000000000000", "status": "ended",
        "creator_id": "avt_ava000000001", "product_name": "Glow Serum", "platform": "tiktok",
        "vertical": "live-commerce", "viewer_count": 42, "started_at": "2026-01-01T10:00:00.000Z",
        "ended_at": "2026-01-01T11:00:00.000Z", "room_name": "stream-0", "events": [],
        "created_at": "2026-01-01T10:00:00.000Z",
    });
    let app = axum::Router::new().fallback(get(move || async move { Json(body.clone()) }));
    let listener = tokio::net::TcpListener::bind(&addr).await.unwrap();
    println!("listening on {addr}");
    axum::serve(listener, app).await.unwrap();
}
