//! The console (`GET /api/v1/console`; docs/console.md): one page, its script, style and icon,
//! compiled into the discovery function. The page is static: everything it shows it reads
//! from the public API with the developer's test key, so it adds no endpoint and holds no
//! data of its own.

use hosting_http::API_PREFIX;
use url::Url;

/// The page, with `{base_path}` where its script and style are named. They are separate files
/// because the policy below forbids inline ones.
const PAGE: &str = include_str!("../assets/console/index.html");
pub const SCRIPT: &str = include_str!("../assets/console/console.js");
pub const STYLE: &str = include_str!("../assets/console/console.css");
/// The page's icon, named by the page: without one a browser asks the host's `/favicon.ico`,
/// which is not the API's.
pub const ICON: &str = include_str!("../assets/console/console.svg");

/// The page for an API whose base URL is `base_url` (`.../api/v1`): its files are named by
/// absolute path, so the page works at `/console` and `/console/` alike. Only the URL's path is
/// used (percent-encoded, so it cannot close the attribute), so a request's `Host` never reaches
/// the markup.
pub fn page(base_url: &str) -> String {
    // A base URL that does not parse (a malformed `Host`) falls back to the API's own prefix.
    let parsed = Url::parse(base_url).ok();
    let path = parsed
        .as_ref()
        .map_or(API_PREFIX, |url| url.path().trim_end_matches('/'));
    PAGE.replace("{base_path}", path)
}

/// The console's files change only with a release.
pub const CACHE_CONTROL: &str = "public, max-age=300";

/// The page's Content-Security-Policy: only this host, for everything. `media_origin` is where
/// a replay's download URL points when it is not this host (the recordings bucket on AWS); it
/// is allowed for `<video>` alone.
pub fn content_security_policy(media_origin: Option<&str>) -> String {
    let media = match media_origin {
        Some(origin) => format!("media-src 'self' {origin}; "),
        None => String::new(),
    };
    format!(
        "default-src 'self'; {media}base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'"
    )
}

/// The origin of the recordings bucket's download URLs: the endpoint when one is set (an
/// emulator, with path-style URLs), else the bucket's virtual-hosted S3 origin.
pub fn recordings_origin(
    bucket: Option<&str>,
    region: Option<&str>,
    endpoint_url: Option<&str>,
) -> Option<String> {
    let bucket = bucket?;
    if let Some(endpoint) = endpoint_url.and_then(|e| Url::parse(e).ok()) {
        return Some(endpoint.origin().ascii_serialization());
    }
    Some(format!(
        "https://{bucket}.s3.{}.amazonaws.com",
        region.unwrap_or("us-east-1")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_allows_only_this_host_and_the_recordings_origin_for_video() {
        assert_eq!(
            content_security_policy(None),
            "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'"
        );
        assert!(
            content_security_policy(Some("https://b.s3.eu-west-1.amazonaws.com"))
                .contains("media-src 'self' https://b.s3.eu-west-1.amazonaws.com; ")
        );
    }

    #[test]
    fn the_recordings_origin_follows_the_endpoint_or_the_bucket() {
        assert_eq!(recordings_origin(None, Some("eu-west-1"), None), None);
        assert_eq!(
            recordings_origin(Some("b"), Some("eu-west-1"), None).as_deref(),
            Some("https://b.s3.eu-west-1.amazonaws.com")
        );
        assert_eq!(
            recordings_origin(Some("b"), None, Some("http://127.0.0.1:5000/x")).as_deref(),
            Some("http://127.0.0.1:5000")
        );
    }

    #[test]
    fn the_page_loads_its_script_and_style_from_this_host_only() {
        let served = page("https://api.example.com/api/v1");
        assert!(served.contains("<script src=\"/api/v1/console.js\" defer></script>"));
        assert!(served.contains("<link rel=\"stylesheet\" href=\"/api/v1/console.css\">"));
        assert!(
            !served.contains("<script>") && !served.contains("<style") && !served.contains("http")
        );
        // Behind a base path of the operator's; markup in it stays percent-encoded.
        assert!(page("https://x.example/prod/api/v1/").contains("src=\"/prod/api/v1/console.js\""));
        assert!(
            page("http://h/a\"><script>/api/v1")
                .contains("src=\"/a%22%3E%3Cscript%3E/api/v1/console.js\"")
        );
        assert!(page("http://bad host/api/v1").contains("src=\"/api/v1/console.js\""));
        // The one absolute URL of the script is SVG's namespace name, which is never fetched.
        assert_eq!(SCRIPT.matches("http").count(), 1);
        assert!(SCRIPT.contains("\"http://www.w3.org/2000/svg\""));
    }
}
