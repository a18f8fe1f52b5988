use hosting_app::delivery::Deliverer;
use lambda_runtime::{LambdaEvent, service_fn};

// One thread: an instance serves one invocation at a time (hosting_runtime::lambda).
#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_runtime::Error> {
    let runtime = hosting_runtime::lambda::runtime_from_env().await?;
    let config = &runtime.app.config;
    let deliverer = Deliverer::new(config.webhook_timeout, config.webhook_allow_private_urls)?;
    let (app, queue, deliverer) = (&runtime.app, &runtime.queue, &deliverer);
    lambda_runtime::run(service_fn(move |event: LambdaEvent<_>| async move {
        Ok::<_, lambda_runtime::Error>(delivery::handle(app, queue, deliverer, event.payload).await)
    }))
    .await
}
