//! Control of the fault-injecting proxy that scripts/test.sh puts between the product and
//! moto (`scripts/aws/fault_proxy.py`): rules apply to the requests of one test's table and
//! queues, named by a scope (the table name).

use serde_json::Value;

fn base() -> String {
    std::env::var("FAULT_PROXY_URL").unwrap_or_else(|_| {
        panic!(
            "FAULT_PROXY_URL is not set: scripts/test.sh starts the fault proxy in front of moto"
        )
    })
}

/// Replaces the scope's rules (and resets its counts).
pub async fn set(scope: &str, rules: Value) {
    let response = reqwest::Client::new()
        .put(format!("{}/__faults/{scope}", base()))
        .body(rules.to_string())
        .send()
        .await
        .expect("the fault proxy answers");
    assert!(
        response.status().is_success(),
        "{}",
        response.text().await.unwrap_or_default()
    );
}

/// Removes the scope's rules.
pub async fn clear(scope: &str) {
    reqwest::Client::new()
        .delete(format!("{}/__faults/{scope}", base()))
        .send()
        .await
        .expect("the fault proxy answers");
}

/// `{"requests": N, "injected": {"<kind>": N, ...}}`
pub async fn stats(scope: &str) -> Value {
    reqwest::Client::new()
        .get(format!("{}/__faults/{scope}", base()))
        .send()
        .await
        .expect("the fault proxy answers")
        .text()
        .await
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .expect("stats are JSON")
}

/// How many faults the scope's `stats` say were injected, of every kind.
pub fn injected(stats: &Value) -> u64 {
    stats["injected"]
        .as_object()
        .unwrap()
        .values()
        .filter_map(Value::as_u64)
        .sum()
}
