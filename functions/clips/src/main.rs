use lambda_runtime::{LambdaEvent, service_fn};

// One thread: an instance serves one invocation at a time (hosting_runtime::lambda).
#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_runtime::Error> {
    let runtime = hosting_runtime::lambda::runtime_from_env().await?;
    let app = &runtime.app;
    lambda_runtime::run(service_fn(move |event: LambdaEvent<_>| async move {
        Ok::<_, lambda_runtime::Error>(clips::handle(app, event.payload).await)
    }))
    .await
}
