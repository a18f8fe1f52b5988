//! The AWS clients' trust store over real TLS: an endpoint whose certificate chains to the
//! roots they are given is reached, one that does not is refused.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A CA and a `localhost` certificate it signs, made with the `openssl` command.
fn make_certificates(dir: &Path) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let openssl = |args: &[&str]| {
        let status = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .stderr(std::process::Stdio::null())
            .status()
            .expect("the openssl command runs");
        assert!(status.success(), "openssl {args:?}");
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    openssl(
        &[
            &["req", "-x509"],
            &ec[..],
            &[
                "-keyout",
                "ca.key",
                "-out",
                "ca.pem",
                "-days",
                "2",
                "-subj",
                "/CN=Test CA",
            ],
        ]
        .concat(),
    );
    openssl(
        &[
            &["req"],
            &ec[..],
            &[
                "-keyout",
                "leaf.key",
                "-out",
                "leaf.csr",
                "-subj",
                "/CN=localhost",
            ],
        ]
        .concat(),
    );
    std::fs::write(
        dir.join("leaf.ext"),
        "subjectAltName=DNS:localhost\nbasicConstraints=critical,CA:FALSE\n",
    )
    .unwrap();
    openssl(&[
        "x509",
        "-req",
        "-in",
        "leaf.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "leaf.pem",
        "-days",
        "2",
        "-extfile",
        "leaf.ext",
    ]);
    let read = |name: &str| std::fs::read(dir.join(name)).unwrap();
    (read("ca.pem"), read("leaf.pem"), read("leaf.key"))
}

/// An HTTPS endpoint on loopback answering every request as DynamoDB's `ListTables` would.
async fn tls_endpoint(chain: &[u8], key: &[u8]) -> u16 {
    let chain = CertificateDer::pem_slice_iter(chain)
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_slice(key).unwrap();
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(socket).await else {
                    return;
                };
                let mut request = Vec::new();
                let mut buffer = [0u8; 4096];
                // The headers, then the small JSON body the client sends with them.
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match tls.read(&mut buffer).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buffer[..n]),
                    }
                }
                let body = r#"{"TableNames":["reached-over-tls"]}"#;
                let response = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/x-amz-json-1.0\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = tls.write_all(response.as_bytes()).await;
                let _ = tls.shutdown().await;
            });
        }
    });
    port
}

fn dynamodb(port: u16, roots: Vec<u8>) -> aws_sdk_dynamodb::Client {
    let config = aws_sdk_dynamodb::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("AKIDTEST", "secret", None, None, "test"))
        .endpoint_url(format!("https://localhost:{port}"))
        .http_client(hosting_aws::trust::http_client(roots))
        .retry_config(aws_sdk_dynamodb::config::retry::RetryConfig::disabled())
        .build();
    aws_sdk_dynamodb::Client::from_conf(config)
}

#[tokio::test]
async fn the_clients_reach_only_endpoints_that_chain_to_the_roots_they_trust() {
    let dir = std::env::temp_dir().join(format!("trust-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (ca, leaf, key) = make_certificates(&dir);
    let port = tls_endpoint(&leaf, &key).await;

    let tables = dynamodb(port, ca)
        .list_tables()
        .send()
        .await
        .expect("trusted");
    assert_eq!(tables.table_names(), ["reached-over-tls"]);

    // The default roots are Amazon's: this endpoint's CA is not among them.
    let amazon = hosting_aws::trust::AMAZON_TRUST_SERVICES
        .as_bytes()
        .to_vec();
    let refused = dynamodb(port, amazon)
        .list_tables()
        .send()
        .await
        .unwrap_err();
    let message = hosting_aws::describe(&refused);
    assert!(message.contains("UnknownIssuer"), "{message}");
    std::fs::remove_dir_all(&dir).unwrap();
}
