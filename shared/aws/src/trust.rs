//! The roots the AWS clients trust for TLS, and the one HTTP client they share
//! (docs/aws.md, "Trusted certificates").
//!
//! The functions talk to AWS endpoints only, whose certificates chain to the Amazon Trust
//! Services roots. Trusting those five roots, compiled in, spares every instance reading and
//! decoding the image's whole bundle on every cold start (BENCHMARKS.md, "Cold start") and trusts
//! no authority AWS does not use. An operator whose AWS traffic passes through an endpoint with
//! another certificate (an inspecting proxy, an emulator over HTTPS) names a PEM bundle in
//! `AWS_CA_BUNDLE`, the variable the other AWS SDKs read for this.

use aws_smithy_http_client::proxy::ProxyConfig;
use aws_smithy_http_client::tls::{self, TlsContext, TrustStore};
use aws_smithy_http_client::{Builder, ConnectorBuilder};
use aws_smithy_runtime_api::client::http::{
    HttpClient, HttpConnectorSettings, SharedHttpClient, SharedHttpConnector,
};
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_runtime_api::shared::IntoShared;
use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;

/// Names a PEM bundle the AWS clients trust instead of the Amazon Trust Services roots.
pub const AWS_CA_BUNDLE: &str = "AWS_CA_BUNDLE";

/// Amazon Root CA 1 to 4 and Starfield Services Root Certificate Authority - G2 (which
/// cross-signs Amazon Root CA 1), each with its subject, expiry and SHA-256 fingerprint.
pub const AMAZON_TRUST_SERVICES: &str = include_str!("../certs/amazon-trust-services.pem");

/// A bundle named by `AWS_CA_BUNDLE` that cannot be used; the instance stops, naming it.
#[derive(Debug, thiserror::Error)]
pub enum CaBundleError {
    #[error("{AWS_CA_BUNDLE}: cannot read {path}: {source}")]
    Unreadable {
        path: String,
        source: std::io::Error,
    },
    #[error("{AWS_CA_BUNDLE}: {path} is not a PEM bundle of certificates: {reason}")]
    Invalid { path: String, reason: String },
}

/// The PEM certificates the AWS clients trust: the bundle `AWS_CA_BUNDLE` names, read and
/// checked here so that a bad one stops the instance at start-up, or the Amazon roots.
pub fn trusted_roots() -> Result<Vec<u8>, CaBundleError> {
    let bundle = std::env::var_os(AWS_CA_BUNDLE).filter(|path| !path.is_empty());
    roots_from(bundle.map(|path| path.to_string_lossy().into_owned()))
}

fn roots_from(bundle: Option<String>) -> Result<Vec<u8>, CaBundleError> {
    let Some(path) = bundle else {
        return Ok(AMAZON_TRUST_SERVICES.as_bytes().to_vec());
    };
    let pem = std::fs::read(&path).map_err(|source| CaBundleError::Unreadable {
        path: path.clone(),
        source,
    })?;
    let invalid = |reason: String| CaBundleError::Invalid {
        path: path.clone(),
        reason,
    };
    let count = certificate_count(&pem).map_err(invalid)?;
    if count == 0 {
        return Err(invalid("it holds no certificate".into()));
    }
    Ok(pem)
}

/// How many certificates a PEM bundle holds, or why it cannot be read as one.
fn certificate_count(pem: &[u8]) -> Result<usize, String> {
    CertificateDer::pem_slice_iter(pem)
        .try_fold(0, |count, cert| cert.map(|_| count + 1))
        .map_err(|err| err.to_string())
}

/// The HTTP client every AWS client of an instance shares: the SDK's own (hyper 1 with rustls
/// on aws-lc, its proxy variables honoured, timeouts from each client's settings), trusting
/// `roots` instead of the system's bundle.
pub fn http_client(roots: Vec<u8>) -> SharedHttpClient {
    ConnectorOnFirstRequest(sdk_http_client(roots)).into_shared()
}

/// The SDK's client checks itself as each service client is built, by building a connector and
/// dropping it: decoding every root once per service client. This one skips that check and
/// builds the connector the clients share when the first request needs it (once per timeout
/// settings, as the SDK's client caches it). Its configuration is fixed and known to build.
#[derive(Debug)]
struct ConnectorOnFirstRequest(SharedHttpClient);

impl HttpClient for ConnectorOnFirstRequest {
    fn http_connector(
        &self,
        settings: &HttpConnectorSettings,
        components: &RuntimeComponents,
    ) -> SharedHttpConnector {
        self.0.http_connector(settings, components)
    }

    fn connector_metadata(
        &self,
    ) -> Option<aws_smithy_runtime_api::client::connector_metadata::ConnectorMetadata> {
        self.0.connector_metadata()
    }
}

fn sdk_http_client(roots: Vec<u8>) -> SharedHttpClient {
    let trust = TrustStore::empty()
        .with_native_roots(false)
        .with_pem_certificate(roots);
    let context = TlsContext::builder()
        .with_trust_store(trust)
        .build()
        .expect("a TLS context of a trust store alone always builds");
    Builder::new().build_with_connector_fn(move |settings, components| {
        let mut connector = ConnectorBuilder::default()
            .tls_provider(tls::Provider::Rustls(
                tls::rustls_provider::CryptoMode::AwsLc,
            ))
            .tls_context(context.clone());
        connector.set_connector_settings(settings.cloned());
        if let Some(components) = components {
            connector.set_sleep_impl(components.sleep_impl());
        }
        connector.set_proxy_config(Some(ProxyConfig::from_env()));
        connector.build()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_compiled_in_roots_are_the_five_amazon_trust_services_certificates() {
        assert_eq!(certificate_count(AMAZON_TRUST_SERVICES.as_bytes()), Ok(5));
        for name in [
            "Amazon Root CA 1",
            "Amazon Root CA 2",
            "Amazon Root CA 3",
            "Amazon Root CA 4",
            "Starfield Services Root Certificate Authority - G2",
        ] {
            assert!(
                AMAZON_TRUST_SERVICES.contains(&format!("CN = {name}\n")),
                "{name}"
            );
        }
    }

    #[test]
    fn a_bundle_that_is_not_pem_certificates_is_refused() {
        let truncated = &AMAZON_TRUST_SERVICES[..AMAZON_TRUST_SERVICES.len() - 100];
        assert!(certificate_count(truncated.as_bytes()).is_err());
        assert_eq!(certificate_count(b"no certificate here\n"), Ok(0));
    }

    #[test]
    fn a_named_bundle_replaces_the_amazon_roots_and_a_bad_one_is_named() {
        let dir = std::env::temp_dir().join(format!("ca-bundle-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = |name: &str| dir.join(name).to_string_lossy().into_owned();
        let one_root = AMAZON_TRUST_SERVICES.split_inclusive("-----END CERTIFICATE-----\n");
        let first = one_root.clone().next().unwrap();
        std::fs::write(path("one.pem"), first).unwrap();
        std::fs::write(path("empty.pem"), "").unwrap();
        std::fs::write(path("broken.pem"), &first[..first.len() - 100]).unwrap();

        assert_eq!(roots_from(None).unwrap(), AMAZON_TRUST_SERVICES.as_bytes());
        assert_eq!(roots_from(Some(path("one.pem"))).unwrap(), first.as_bytes());
        let message = |name: &str| roots_from(Some(path(name))).unwrap_err().to_string();
        assert!(message("missing.pem").starts_with("AWS_CA_BUNDLE: cannot read "));
        assert!(
            message("empty.pem").ends_with(
                "empty.pem is not a PEM bundle of certificates: it holds no certificate"
            )
        );
        assert!(message("broken.pem").contains("broken.pem is not a PEM bundle of certificates: "));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
