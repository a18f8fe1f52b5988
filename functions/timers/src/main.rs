use lambda_runtime::{LambdaEvent, service_fn};
use shared::ports::Timer;

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    let runtime = shared::lambda::runtime_from_env().await?;
    let app = &runtime.app;
    lambda_runtime::run(service_fn(move |event: LambdaEvent<Timer>| async move {
        // An error makes Scheduler retry the invocation.
        Ok::<_, lambda_runtime::Error>(timers::handle(app, event.payload).await?)
    }))
    .await
}
