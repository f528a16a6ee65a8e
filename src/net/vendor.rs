//! The image and speech providers' view of `crate::net`: provider API calls go through
//! `HttpClient::send_api` (configured, trusted endpoints; rate-limited), and
//! image URLs a provider hands back, or a user passes as an edit source, go
//! through the guarded `HttpClient::fetch` (SSRF guard on every hop, size cap).
//! Only thin glue lives here: building a request, sending it and sorting what went
//! wrong ([`Failure`], for each provider to word), error texts, and reading `data:` URIs.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE};
use serde::Deserialize;
use serde_json::Value;

use crate::lenient;

use crate::hermes::Context;
use crate::net::BuildError;
use crate::net::client::NotJson;
use crate::net::{ApiError, ApiResponse, FetchError, FetchOptions, HttpClient, LazyClient, Policy};

/// The largest image we download or read (Hermes' `save_url_image` cap).
pub(crate) const MAX_IMAGE_BYTES: usize = 25 * 1024 * 1024;

/// The toolset's client ([`LazyClient`]: built on first use from the URL policy).
#[derive(Default)]
pub(crate) struct LazyHttp(LazyClient);

impl LazyHttp {
    pub(crate) fn get(&self, ctx: &Context) -> Result<Arc<HttpClient>, BuildError> {
        self.0
            .get_or_build(|| HttpClient::with_policy(Policy::from_context(ctx)))
    }
}

pub(crate) enum Body {
    None,
    Json(Value),
    Raw {
        content_type: String,
        bytes: Vec<u8>,
    },
}

/// A provider API request.
pub(crate) struct ApiRequest<'a> {
    pub(crate) provider: &'a str,
    pub(crate) method: reqwest::Method,
    pub(crate) url: &'a str,
    pub(crate) auth: Option<(&'static str, String)>,
    pub(crate) headers: Vec<(&'static str, String)>,
    pub(crate) body: Body,
    pub(crate) timeout: Duration,
}

impl<'a> ApiRequest<'a> {
    pub(crate) fn new(provider: &'a str, method: reqwest::Method, url: &'a str) -> Self {
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

    /// `Authorization: Bearer <key>`.
    pub(crate) fn bearer(mut self, key: impl Into<String>) -> Self {
        self.auth = Some(("Bearer", key.into()));
        self
    }

    pub(crate) fn header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    /// A JSON body.
    pub(crate) fn json(mut self, body: Value) -> Self {
        self.body = Body::Json(body);
        self
    }

    pub(crate) fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
}

/// A provider request that got no HTTP answer.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SendError {
    #[error("invalid URL {url:?}: {source}")]
    InvalidUrl {
        url: String,
        source: url::ParseError,
    },
    /// The error text names the endpoint.
    #[error("{method} {url}: {source}")]
    Api {
        method: reqwest::Method,
        url: String,
        source: ApiError,
    },
}

/// Send a provider request; the error text names the endpoint.
pub(crate) async fn send(http: &HttpClient, req: ApiRequest<'_>) -> Result<ApiResponse, SendError> {
    let url = reqwest::Url::parse(req.url).map_err(|source| SendError::InvalidUrl {
        url: req.url.to_string(),
        source,
    })?;
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
        .map_err(|source| SendError::Api {
            method: req.method,
            url: req.url.to_string(),
            source,
        })
}

/// Why a provider request gave no usable answer, sorted so that each provider can
/// word it as Hermes does (each has its own texts for a timeout, a 429, no answer, an
/// HTTP error, a body that is not JSON). `Display` is the plain text: the send error
/// (naming the endpoint), `HTTP <status>: <detail>`, or the JSON error.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Failure {
    /// The request outlived its timeout.
    #[error(transparent)]
    Timeout(SendError),
    /// The provider kept answering 429, past `send_api`'s own retries.
    #[error(transparent)]
    RateLimited(SendError),
    /// No HTTP answer: a bad URL, a blocked address, DNS, connect, TLS, a cut-off body.
    #[error(transparent)]
    Connection(SendError),
    /// An HTTP answer outside 2xx.
    #[error("{}", status_error(.0))]
    Status(ApiResponse),
    /// A 2xx answer that is not JSON.
    #[error(transparent)]
    NotJson(NotJson),
}

impl From<SendError> for Failure {
    fn from(e: SendError) -> Self {
        match &e {
            SendError::Api {
                source: ApiError::Timeout,
                ..
            } => Failure::Timeout(e),
            SendError::Api {
                source: ApiError::RateLimited { .. },
                ..
            } => Failure::RateLimited(e),
            _ => Failure::Connection(e),
        }
    }
}

/// Send a provider request: its 2xx answer, or why there is none.
pub(crate) async fn send_ok(
    http: &HttpClient,
    req: ApiRequest<'_>,
) -> Result<ApiResponse, Failure> {
    let resp = send(http, req).await?;
    if !(200..300).contains(&resp.status) {
        return Err(Failure::Status(resp));
    }
    Ok(resp)
}

/// [`send_ok`], then the answer's JSON.
pub(crate) async fn exchange(http: &HttpClient, req: ApiRequest<'_>) -> Result<Value, Failure> {
    send_ok(http, req).await?.json().map_err(Failure::NotJson)
}

/// A provider's JSON error body: FastAPI's `detail` (FAL; a string or a list of
/// `{msg}`), OpenAI's `error.message`, ElevenLabs' `detail.message`, or `message`.
#[derive(Deserialize, Default)]
#[serde(default)]
struct ErrorBody {
    detail: Option<Value>,
    error: Option<Value>,
    message: Option<Value>,
}

/// The most useful error text in a provider's error body (`detail`,
/// `error.message`, `error`, `message`), else the body itself, shortened.
pub(crate) fn error_detail(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    if let Some(e) = lenient::from_slice::<ErrorBody>(body) {
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
        for field in [e.detail, e.error, e.message] {
            if let Some(s) = field.as_ref().and_then(pick) {
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
pub(crate) fn status_error(resp: &ApiResponse) -> String {
    let detail = error_detail(&resp.body);
    if detail.is_empty() {
        format!("HTTP {}", resp.status)
    } else {
        format!("HTTP {}: {detail}", resp.status)
    }
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum DataUriError {
    #[error("not a data: URI")]
    NotDataUri,
    #[error("data: URI without a comma")]
    NoComma,
    #[error("only base64 data: URIs are supported")]
    NotBase64,
    #[error("data: URI is not valid base64: {0}")]
    BadBase64(#[from] base64::DecodeError),
}

/// Decode a `data:<mime>;base64,<data>` URI.
pub(crate) fn decode_data_uri(uri: &str) -> Result<Vec<u8>, DataUriError> {
    let rest = uri.strip_prefix("data:").ok_or(DataUriError::NotDataUri)?;
    let (header, data) = rest.split_once(',').ok_or(DataUriError::NoComma)?;
    if !header.ends_with(";base64") {
        return Err(DataUriError::NotBase64);
    }
    Ok(base64::engine::general_purpose::STANDARD.decode(data.trim())?)
}

/// Why an image URL (or `data:` URI) gave no usable image.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ImageFetchError {
    #[error(transparent)]
    DataUri(#[from] DataUriError),
    #[error("invalid URL {url:?}: {source}")]
    InvalidUrl {
        url: String,
        source: url::ParseError,
    },
    #[error(transparent)]
    Fetch(#[from] FetchError),
    #[error("HTTP {status} from {url}")]
    Status { status: u16, url: String },
    /// `url` is shortened for messages ([`short_url`]).
    #[error("{url} returned 0 bytes")]
    Empty { url: String },
    #[error("image is larger than {} MB", MAX_IMAGE_BYTES / (1024 * 1024))]
    TooLarge,
    #[error("{url} is not a PNG, JPEG, WebP or GIF image")]
    NotAnImage { url: String },
}

/// Download an image from a URL outside our control (guarded fetch), or
/// decode a `data:` URI. Returns the bytes and their sniffed MIME type.
pub(crate) async fn fetch_image(
    http: &HttpClient,
    url: &str,
) -> Result<(Vec<u8>, &'static str), ImageFetchError> {
    let bytes = if url.starts_with("data:") {
        decode_data_uri(url)?
    } else {
        let parsed = reqwest::Url::parse(url).map_err(|source| ImageFetchError::InvalidUrl {
            url: url.to_string(),
            source,
        })?;
        let got = http
            .fetch(
                &parsed,
                &FetchOptions {
                    max_bytes: Some(MAX_IMAGE_BYTES),
                    accept: Some("image/*".into()),
                },
            )
            .await?;
        if !(200..300).contains(&got.status) {
            return Err(ImageFetchError::Status {
                status: got.status,
                url: url.to_string(),
            });
        }
        got.body
    };
    if bytes.is_empty() {
        return Err(ImageFetchError::Empty {
            url: short_url(url),
        });
    }
    if bytes.len() > MAX_IMAGE_BYTES {
        return Err(ImageFetchError::TooLarge);
    }
    let mime =
        crate::image::sniff::saveable_mime(&bytes).ok_or_else(|| ImageFetchError::NotAnImage {
            url: short_url(url),
        })?;
    Ok((bytes, mime))
}

/// A URL for messages (data: URIs shortened).
pub(crate) fn short_url(url: &str) -> String {
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
