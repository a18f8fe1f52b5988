#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> Result<(), shared::lambda::Error> {
    shared::lambda::run_http(gateway_default::router).await
}
