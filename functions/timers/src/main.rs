use hosting_app::sweep_budget::SweepBudget;
use lambda_runtime::{LambdaEvent, service_fn};

// One thread: an instance serves one invocation at a time (hosting_runtime::lambda).
#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_runtime::Error> {
    let runtime = hosting_runtime::lambda::runtime_from_env().await?;
    let app = &runtime.app;
    lambda_runtime::run(service_fn(
        move |event: LambdaEvent<timers::Invocation>| async move {
            // A failure is retried by Lambda (twice, for an asynchronous invocation), then goes
            // to the function's on-failure destination; the sweep ends the stream regardless.
            let budget = SweepBudget::before_deadline(event.context.deadline);
            Ok::<_, lambda_runtime::Error>(timers::handle_within(app, event.payload, budget).await?)
        },
    ))
    .await
}
