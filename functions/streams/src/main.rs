#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> Result<(), hosting_runtime::lambda::Error> {
    hosting_runtime::lambda::run_http(streams_api::router).await
}
