// One thread: an instance serves one invocation at a time (hosting_runtime::lambda).
#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), hosting_runtime::lambda::Error> {
    hosting_runtime::lambda::run_http(analytics_api::router).await
}
