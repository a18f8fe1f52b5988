//! Sample bodies of the shows' events (docs/shows.md), fixed so the document never changes
//! between requests.

use chrono::{TimeZone, Utc};
use serde_json::{Map, Value, json};
use uuid::Uuid;

use hosting_domain::event::{EventType, ShowEvent, ShowEventData};
use hosting_domain::show::{Show, ShowError, ShowStatus, ShowView};

pub(super) fn show_event_examples() -> Value {
    let at = |minute: u32| {
        Utc.with_ymd_and_hms(2026, 3, 14, 18, minute, 0)
            .single()
            .unwrap_or_default()
    };
    let stream: Map<String, Value> = json!({
        "creator_id": "avt_ava000000001", "product_name": "Glow Serum", "platform": "tiktok",
        "duration_minutes": 30, "destinations": [], "record": false,
    })
    .as_object()
    .cloned()
    .unwrap_or_default();
    let show = |status: ShowStatus, error: Option<ShowError>| Show {
        id: Uuid::from_u128(0x5b0e_1a2b_3c4d_4e5f_8a6b_7c8d_9e0f_1a2b),
        brand_id: "brand_demo".into(),
        status,
        starts_at: at(30),
        remind_minutes_before: Some(15),
        stream: stream.clone(),
        stream_id: (status == ShowStatus::Started)
            .then(|| Uuid::from_u128(0x0f8e2a51_7c3b_4d6e_9a10_2b3c4d5e6f70)),
        error,
        created_at: at(0),
        test: false,
        reminded: status != ShowStatus::Scheduled,
        claim_until: None,
    };
    let mut examples = Map::new();
    for (n, (event_type, status, error, minute, summary)) in [
        (
            EventType::ShowReminder,
            ShowStatus::Scheduled,
            None,
            15,
            "The show starts in `remind_minutes_before` minutes.",
        ),
        (
            EventType::ShowStarted,
            ShowStatus::Started,
            None,
            30,
            "The show's stream was started at its time, as `POST /streams` would start it; `data.stream` is the stream.",
        ),
        (
            EventType::ShowFailed,
            ShowStatus::Failed,
            Some(ShowError {
                code: "concurrency_limit".into(),
                message: "The brand already has 3 active streams.".into(),
            }),
            30,
            "The show could not be started: `data.show.error` is the code and message the same `POST /streams` would have got.",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let show = show(status, error);
        let body = ShowEvent {
            id: format!("evt_{:032x}", 0x5e0 + n),
            event_type,
            created_at: at(minute),
            api_version: "v1",
            test: false,
            data: ShowEventData {
                show: ShowView::from(&show),
                stream: None,
            },
        };
        examples.insert(
            event_type.as_str().into(),
            json!({ "summary": summary, "value": body }),
        );
    }
    Value::Object(examples)
}
