#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> Result<(), shared::lambda::Error> {
    shared::lambda::run_http(streams_api::router).await
}
