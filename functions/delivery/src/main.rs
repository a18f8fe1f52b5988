use lambda_runtime::{LambdaEvent, service_fn};
use shared::delivery::Deliverer;
use shared::runtime::LocalQueue;

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    let runtime = shared::lambda::runtime_from_env().await?;
    let LocalQueue::Sqs(queue) = runtime.queue.clone() else {
        return Err("DELIVERY_QUEUE_URL and DELIVERY_DLQ_URL are required".into());
    };
    let config = &runtime.app.config;
    let deliverer = Deliverer::new(config.webhook_timeout, config.webhook_allow_private_urls)?;
    let (app, queue, deliverer) = (&runtime.app, &queue, &deliverer);
    lambda_runtime::run(service_fn(move |event: LambdaEvent<_>| async move {
        Ok::<_, lambda_runtime::Error>(delivery::handle(app, queue, deliverer, event.payload).await)
    }))
    .await
}
