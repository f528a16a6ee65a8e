//! The media providers' view of `crate::net`: provider API calls go through
//! `HttpClient::send_api` (configured, trusted endpoints; rate-limited), and
//! image URLs a provider hands back, or a user passes as an edit source, go
//! through the guarded `HttpClient::fetch` (SSRF guard on every hop, size cap).
//! Only thin glue lives here: building a request, and reading `data:` URIs.

use std::sync::OnceLock;
use std::time::Duration;

use base64::Engine as _;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE};
use serde_json::Value;

use crate::hermes::Context;
use crate::net::{ApiResponse, FetchOptions, HttpClient, Policy};

/// The largest image we download or read (Hermes' `save_url_image` cap).
pub const MAX_IMAGE_BYTES: usize = 25 * 1024 * 1024;

/// One lazily built client per toolset (building it reads the URL policy from config).
#[derive(Default)]
pub struct LazyHttp(OnceLock<Result<HttpClient, String>>);

impl LazyHttp {
    pub fn get(&self, ctx: &Context) -> Result<&HttpClient, String> {
        self.0
            .get_or_init(|| HttpClient::with_policy(Policy::from_context(ctx)))
            .as_ref()
            .map_err(Clone::clone)
    }
}

pub enum Body {
    None,
    Json(Value),
    Raw {
        content_type: String,
        bytes: Vec<u8>,
    },
}

/// A provider API request.
pub struct ApiRequest<'a> {
    pub provider: &'a str,
    pub method: reqwest::Method,
    pub url: &'a str,
    pub auth: Option<(&'static str, String)>,
    pub headers: Vec<(&'static str, String)>,
    pub body: Body,
    pub timeout: Duration,
}

impl<'a> ApiRequest<'a> {
    pub fn new(provider: &'a str, method: reqwest::Method, url: &'a str) -> Self {
        ApiRequest {
            provider,
            method,
            url,
            auth: None,
            headers: Vec::new(),
            body: Body::None,
            timeout: Duration::from_secs(120),
        }
    }
}

/// Send a provider request; the error text names the endpoint.
pub async fn send(http: &HttpClient, req: ApiRequest<'_>) -> Result<ApiResponse, String> {
    let url =
        reqwest::Url::parse(req.url).map_err(|e| format!("invalid URL {:?}: {e}", req.url))?;
    let mut b = http
        .api()
        .request(req.method.clone(), url)
        .timeout(req.timeout);
    if let Some((scheme, secret)) = &req.auth {
        let value = if scheme.is_empty() {
            secret.clone()
        } else {
            format!("{scheme} {secret}")
        };
        b = b.header(AUTHORIZATION, value);
    }
    for (k, v) in &req.headers {
        b = b.header(*k, v);
    }
    b = match req.body {
        Body::None => b,
        Body::Json(v) => b
            .header(CONTENT_TYPE, "application/json")
            .body(serde_json::to_vec(&v).unwrap_or_default()),
        Body::Raw {
            content_type,
            bytes,
        } => b.header(CONTENT_TYPE, content_type).body(bytes),
    };
    http.send_api(req.provider, Duration::ZERO, b)
        .await
        .map_err(|e| format!("{} {}: {e}", req.method, req.url))
}

/// The most useful error text in a provider's error body (`detail`,
/// `error.message`, `error`, `message`), else the body itself, shortened.
pub fn error_detail(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        let pick = |v: &Value| -> Option<String> {
            match v {
                Value::String(s) => Some(s.clone()),
                Value::Array(a) => Some(
                    a.iter()
                        .map(|x| {
                            x.get("msg")
                                .and_then(Value::as_str)
                                .map(str::to_string)
                                .unwrap_or_else(|| x.to_string())
                        })
                        .collect::<Vec<_>>()
                        .join("; "),
                ),
                Value::Object(o) => o
                    .get("message")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .or_else(|| Some(v.to_string())),
                Value::Null => None,
                other => Some(other.to_string()),
            }
        };
        for key in ["detail", "error", "message"] {
            if let Some(s) = v.get(key).and_then(pick) {
                return shorten(&s);
            }
        }
    }
    shorten(text.trim())
}

fn shorten(s: &str) -> String {
    if s.chars().count() > 500 {
        format!("{}…", s.chars().take(500).collect::<String>())
    } else {
        s.to_string()
    }
}

/// `HTTP <status>: <detail>` for a failed provider response.
pub fn status_error(resp: &ApiResponse) -> String {
    let detail = error_detail(&resp.body);
    if detail.is_empty() {
        format!("HTTP {}", resp.status)
    } else {
        format!("HTTP {}: {detail}", resp.status)
    }
}

/// Decode a `data:<mime>;base64,<data>` URI.
pub fn decode_data_uri(uri: &str) -> Result<Vec<u8>, String> {
    let rest = uri
        .strip_prefix("data:")
        .ok_or_else(|| "not a data: URI".to_string())?;
    let (header, data) = rest
        .split_once(',')
        .ok_or_else(|| "data: URI without a comma".to_string())?;
    if !header.ends_with(";base64") {
        return Err("only base64 data: URIs are supported".into());
    }
    base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(|e| format!("data: URI is not valid base64: {e}"))
}

/// Download an image from a URL outside our control (guarded fetch), or
/// decode a `data:` URI. Returns the bytes and their sniffed MIME type.
pub async fn fetch_image(http: &HttpClient, url: &str) -> Result<(Vec<u8>, &'static str), String> {
    let bytes = if url.starts_with("data:") {
        decode_data_uri(url)?
    } else {
        let parsed = reqwest::Url::parse(url).map_err(|e| format!("invalid URL {url:?}: {e}"))?;
        let got = http
            .fetch(
                &parsed,
                &FetchOptions {
                    max_bytes: Some(MAX_IMAGE_BYTES),
                    accept: Some("image/*".into()),
                },
            )
            .await
            .map_err(|e| e.to_string())?;
        if !(200..300).contains(&got.status) {
            return Err(format!("HTTP {} from {url}", got.status));
        }
        got.body
    };
    if bytes.is_empty() {
        return Err(format!("{} returned 0 bytes", short_url(url)));
    }
    if bytes.len() > MAX_IMAGE_BYTES {
        return Err(format!(
            "image is larger than {} MB",
            MAX_IMAGE_BYTES / (1024 * 1024)
        ));
    }
    let mime = super::sniff_image(&bytes)
        .ok_or_else(|| format!("{} is not a PNG, JPEG, WebP or GIF image", short_url(url)))?;
    Ok((bytes, mime))
}

/// A URL for messages (data: URIs shortened).
pub fn short_url(url: &str) -> String {
    if url.starts_with("data:") {
        format!("{}…", url.chars().take(30).collect::<String>())
    } else {
        url.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_detail_prefers_provider_fields() {
        assert_eq!(error_detail(br#"{"detail":"bad prompt"}"#), "bad prompt");
        assert_eq!(
            error_detail(br#"{"detail":[{"msg":"field required"},{"msg":"x"}]}"#),
            "field required; x"
        );
        assert_eq!(
            error_detail(
                br#"{"error":{"message":"Incorrect API key","type":"invalid_request_error"}}"#
            ),
            "Incorrect API key"
        );
        assert_eq!(error_detail(b"  oops "), "oops");
    }

    #[test]
    fn data_uris() {
        assert_eq!(
            decode_data_uri("data:image/png;base64,aGk=").unwrap(),
            b"hi"
        );
        assert!(decode_data_uri("data:text/plain,hi").is_err());
    }
}
