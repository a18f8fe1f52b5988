#[tokio::main]
async fn main() -> Result<(), shared::lambda::Error> {
    shared::lambda::run_http(analytics_api::router).await
}
