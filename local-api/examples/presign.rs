//! What a download URL costs a read (BENCHMARKS.md, "Replays"): a SigV4 presigned `GET` made by
//! the AWS SDK from static credentials, as a function does with Lambda's, and the local server's
//! HMAC-signed URL; each made `N` times in a row on one thread of a current-thread runtime, as
//! a function instance runs. Neither makes a request: the S3 client points at a port nothing
//! listens on.
//!
//!   cargo run --release -p local-api --example presign [N]

use std::sync::Arc;
use std::time::{Duration, Instant};

use hosting_domain::clock::SystemClock;
use hosting_domain::ports::RecordingStorage;

fn main() {
    let n: u32 = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(20_000);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let credentials = aws_credential_types::Credentials::new(
            "AKIDEXAMPLE",
            "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            Some("session-token".into()),
            None,
            "bench",
        );
        let config = aws_sdk_s3::Config::builder()
            .behavior_version(aws_sdk_s3::config::BehaviorVersion::latest())
            .region(aws_sdk_s3::config::Region::new("us-east-1"))
            .credentials_provider(credentials)
            .endpoint_url("http://127.0.0.1:9")
            .force_path_style(true)
            .build();
        let s3 = hosting_aws::s3::S3Recordings::new(
            aws_sdk_s3::Client::from_conf(config),
            "bench-recordings".into(),
        );
        let folder = hosting_embedded::FolderRecordings::new(
            std::env::temp_dir(),
            "http://127.0.0.1:3000",
            Arc::new(SystemClock),
        );
        let key = "recordings/brand_demo/0f8e2a51-7c3b-4d6e-9a10-2b3c4d5e6f70.mp4";
        for (name, storage) in [
            (
                "S3, SigV4 presigned (aws-sdk-s3)",
                &s3 as &dyn RecordingStorage,
            ),
            (
                "local server, HMAC-SHA256",
                &folder as &dyn RecordingStorage,
            ),
        ] {
            // Warm: the first presign builds the client's runtime plugins and signer.
            let first = Instant::now();
            let url = storage
                .download_url(key, chrono::Utc::now(), Duration::from_secs(3600))
                .await
                .expect("a URL");
            let first = first.elapsed();
            let started = Instant::now();
            for _ in 0..n {
                storage
                    .download_url(key, chrono::Utc::now(), Duration::from_secs(3600))
                    .await
                    .expect("a URL");
            }
            let each = started.elapsed() / n;
            println!(
                "{name}: first {:.1} us, then {:.2} us per URL over {n} ({} bytes)",
                first.as_secs_f64() * 1e6,
                each.as_secs_f64() * 1e6,
                url.url.len()
            );
        }
    });
}
