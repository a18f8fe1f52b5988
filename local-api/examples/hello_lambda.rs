//! The floor of `bench/cold_start.sh`: a Rust Lambda function that does nothing but answer
//! its invocation with a fixed API Gateway response, on the same runtime crate, async runtime
//! and build profile as the functions. A function's set-up time above this is its own.

use lambda_runtime::{LambdaEvent, service_fn};
use serde_json::{Value, json};

// The functions' runtime: one thread (hosting_runtime::lambda).
#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_runtime::Error> {
    lambda_runtime::run(service_fn(|_: LambdaEvent<Value>| async {
        Ok::<_, lambda_runtime::Error>(json!({
            "statusCode": 200,
            "headers": {"content-type": "application/json"},
            "body": "{\"name\":\"Live Stream Hosting API\"}",
        }))
    }))
    .await
}
