//! The HTTP client every toolset uses.
//!
//! Two `reqwest` clients share one resolver implementation:
//! * `fetch` (user-supplied URLs): the SSRF guard runs on every hop. Redirects
//!   are followed by hand so each `Location` is checked like the first URL;
//!   IP-literal hosts (which never reach a resolver) are checked by
//!   [`check_url`]; hostnames are checked inside the resolver, and reqwest
//!   connects to exactly the addresses the resolver returned, so DNS cannot
//!   change between check and connect.
//! * `api` (configured provider endpoints such as a self-hosted SearXNG on
//!   localhost): only the cloud-metadata floor applies.
//!
//! rustls with the `ring` provider, no system proxy (a proxy would route
//! around the guard), connect/read/total timeouts, size caps.
//!
//! Bodies come back decoded or not at all: reqwest decodes `gzip` and `br`
//! (what it advertises); a server that uses another coding anyway (`deflate`
//! as zlib or raw, as browsers accept it; a chain such as `deflate, gzip`, or
//! `GZIP` in capitals, which reqwest does not match) is
//! decoded in [`read_capped`] under the same size cap, and a coding nothing
//! here decodes (`zstd`, `compress`, unknown) is refused by name, never
//! handed on as compressed bytes.

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Once};
use std::time::Duration;

use futures::future::BoxFuture;
use reqwest::header::{CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_TYPE, HeaderMap, LOCATION};
use url::Url;

use super::policy::{
    Blocked, IpClass, METADATA_HOSTS, Policy, check_url, classify, normalize_host,
};
use super::ratelimit;
use crate::hermes::deadlines;

/// Name resolution, injectable so tests can script DNS answers (including
/// answers that change between calls).
pub trait Lookup: Send + Sync + 'static {
    fn lookup(&self, host: &str) -> BoxFuture<'static, std::io::Result<Vec<IpAddr>>>;
}

/// The system resolver (`getaddrinfo` through tokio).
pub struct SystemLookup;

impl Lookup for SystemLookup {
    fn lookup(&self, host: &str) -> BoxFuture<'static, std::io::Result<Vec<IpAddr>>> {
        let host = host.to_string();
        Box::pin(async move {
            let addrs = tokio::net::lookup_host((host.as_str(), 0)).await?;
            Ok(addrs.map(|a| a.ip()).collect())
        })
    }
}

/// Timeouts and caps.
#[derive(Debug, Clone)]
pub struct Limits {
    pub connect: Duration,
    pub read: Duration,
    pub total: Duration,
    pub max_redirects: usize,
    /// Default body cap for `fetch`.
    pub max_bytes: usize,
    /// Body cap for provider API responses.
    pub max_api_bytes: usize,
    /// Longest `Retry-After` we wait for on a 429 before giving up.
    pub max_retry_wait: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            connect: deadlines::HTTP_CONNECT.get(),
            read: deadlines::HTTP_READ.get(),
            total: deadlines::HTTP_TOTAL.get(),
            max_redirects: 10,
            max_bytes: 20 * 1024 * 1024,
            max_api_bytes: 20 * 1024 * 1024,
            max_retry_wait: deadlines::HTTP_MAX_RETRY_WAIT.get(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error(transparent)]
    Blocked(#[from] Blocked),
    #[error("too many redirects (more than {0})")]
    TooManyRedirects(usize),
    #[error("response is larger than the {0} byte limit")]
    TooLarge(usize),
    #[error("timed out fetching {0}")]
    Timeout(String),
    /// `reason` is the cause's whole chain, as Hermes' texts show it.
    #[error("cannot fetch {url}: {reason}")]
    Network {
        url: String,
        reason: String,
        #[source]
        source: reqwest::Error,
    },
    #[error("invalid URL {0:?}")]
    BadUrl(String),
    /// The body's `Content-Encoding` cannot be decoded (or is not what it claims).
    #[error("cannot decode the response from {url}: {reason}")]
    Encoding {
        url: String,
        reason: String,
        #[source]
        source: Option<std::io::Error>,
    },
    #[error("{0}")]
    Other(String),
}

/// A fetched response (status may be an error status; callers decide).
#[derive(Debug, Clone)]
pub struct Fetched {
    pub final_url: Url,
    pub status: u16,
    pub(crate) headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Fetched {
    pub(crate) fn content_type(&self) -> Option<String> {
        self.headers
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|s| s.to_ascii_lowercase())
    }
}

/// Per-request options for `fetch`.
#[derive(Debug, Clone, Default)]
pub struct FetchOptions {
    pub max_bytes: Option<usize>,
    pub accept: Option<String>,
}

struct GuardResolver {
    lookup: Arc<dyn Lookup>,
    policy: Arc<Policy>,
    /// false for the provider-API client: only the metadata floor applies.
    guard_private: bool,
}

impl reqwest::dns::Resolve for GuardResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = normalize_host(name.as_str());
        let lookup = self.lookup.clone();
        let policy = self.policy.clone();
        let guard_private = self.guard_private;
        Box::pin(async move {
            let ips = resolve_checked(&*lookup, &policy, &host, "https", guard_private).await?;
            let addrs: Box<dyn Iterator<Item = SocketAddr> + Send> =
                Box::new(ips.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok(addrs)
        })
    }
}

/// Resolve `host` and check every answer; any blocked answer blocks the host
/// (as Hermes does). Returns the addresses that may be connected to.
pub(crate) async fn resolve_checked(
    lookup: &dyn Lookup,
    policy: &Policy,
    host: &str,
    scheme: &str,
    guard_private: bool,
) -> Result<Vec<IpAddr>, Blocked> {
    if METADATA_HOSTS.contains(&host) {
        return Err(Blocked::Metadata {
            host: host.to_string(),
        });
    }
    let ips = lookup.lookup(host).await.map_err(|e| Blocked::Dns {
        host: host.to_string(),
        reason: e.to_string(),
    })?;
    if ips.is_empty() {
        return Err(Blocked::Dns {
            host: host.to_string(),
            reason: "no addresses".into(),
        });
    }
    for ip in &ips {
        if guard_private {
            policy.check_ip(host, scheme, *ip)?;
        } else if classify(*ip) == IpClass::Metadata {
            return Err(Blocked::Metadata {
                host: host.to_string(),
            });
        }
    }
    Ok(ips)
}

/// The first [`Blocked`] in an error's source chain.
fn find_blocked(e: &(dyn std::error::Error + 'static)) -> Option<Blocked> {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(b) = err.downcast_ref::<Blocked>() {
            return Some(b.clone());
        }
        cur = err.source();
    }
    None
}

fn describe(e: &reqwest::Error) -> String {
    let mut parts = vec![e.to_string()];
    let mut cur = std::error::Error::source(e);
    while let Some(s) = cur {
        let t = s.to_string();
        if !parts.iter().any(|p| p.contains(&t)) {
            parts.push(t);
        }
        cur = s.source();
    }
    parts.join(": ")
}

fn map_reqwest(e: reqwest::Error, url: &Url) -> FetchError {
    if let Some(b) = find_blocked(&e) {
        return FetchError::Blocked(b);
    }
    if e.is_timeout() {
        return FetchError::Timeout(url.to_string());
    }
    FetchError::Network {
        url: url.to_string(),
        reason: describe(&e),
        source: e,
    }
}

/// A provider API request that got no (complete) answer, as [`HttpClient::send_api`]
/// reports it (the Codex client, which streams, reports the same).
pub(crate) fn api_error(e: reqwest::Error, url: &Url) -> ApiError {
    match map_reqwest(e, url) {
        FetchError::Blocked(b) => ApiError::Blocked(b),
        FetchError::Timeout(_) => ApiError::Timeout,
        other => ApiError::Network(Box::new(other)),
    }
}

pub(crate) const USER_AGENT: &str = concat!(
    "Mozilla/5.0 (compatible; hermes-mcp/",
    env!("CARGO_PKG_VERSION"),
    "; +https://github.com/NousResearch/hermes-agent)"
);

/// Install the process-wide rustls provider (ring) once. Anything that builds
/// a reqwest client (ours, or the browser's `/json/version` lookup) needs it.
pub fn install_crypto() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// The rustls client configuration the HTTP client verifies with (ring, the
/// platform verifier: the system's roots, `SSL_CERT_FILE`/`SSL_CERT_DIR` honoured),
/// for the connections reqwest does not make (WebSockets: browser CDP, tts edge).
/// Built once; a failure (no usable root store) is kept and returned again.
pub(crate) fn tls_client_config() -> Result<Arc<rustls::ClientConfig>, rustls::Error> {
    use rustls_platform_verifier::ConfigVerifierExt;
    static CONFIG: std::sync::OnceLock<Result<Arc<rustls::ClientConfig>, rustls::Error>> =
        std::sync::OnceLock::new();
    CONFIG
        .get_or_init(|| {
            install_crypto();
            rustls::ClientConfig::with_platform_verifier().map(Arc::new)
        })
        .clone()
}

/// Why [`tls_connect`] failed, by stage; each shows its cause's own text.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TlsConnectError {
    /// No usable TLS configuration (no root store).
    #[error(transparent)]
    Setup(rustls::Error),
    /// The host is not a name or address a certificate can be checked for.
    #[error(transparent)]
    Name(rustls::pki_types::InvalidDnsNameError),
    /// The handshake failed (an untrusted certificate among the reasons).
    #[error(transparent)]
    Handshake(std::io::Error),
}

/// TLS over `tcp` to `host` (the name sent and verified) with
/// [`tls_client_config`]: the one TLS dial of the WebSockets reqwest does not
/// make (browser CDP, tts edge).
pub(crate) async fn tls_connect(
    host: &str,
    tcp: tokio::net::TcpStream,
) -> Result<tokio_rustls::client::TlsStream<tokio::net::TcpStream>, TlsConnectError> {
    let config = tls_client_config().map_err(TlsConnectError::Setup)?;
    let name =
        rustls::pki_types::ServerName::try_from(host.to_string()).map_err(TlsConnectError::Name)?;
    tokio_rustls::TlsConnector::from(config)
        .connect(name, tcp)
        .await
        .map_err(TlsConnectError::Handshake)
}

/// The shared HTTP client (cheap to clone: the connection pools are shared).
#[derive(Clone)]
pub struct HttpClient {
    fetch: reqwest::Client,
    api: reqwest::Client,
    policy: Arc<Policy>,
    lookup: Arc<dyn Lookup>,
    limits: Limits,
}

/// The guarded client could not be built (TLS setup); every call reports it.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct BuildError(String);

/// One [`HttpClient`] per toolset, built on first use (building reads the URL
/// policy from config, so it waits for the first call) and shared after; a
/// build failure is kept and reported by every call.
#[derive(Default)]
pub struct LazyClient(std::sync::OnceLock<Result<Arc<HttpClient>, BuildError>>);

impl LazyClient {
    pub(crate) fn get_or_build(
        &self,
        build: impl FnOnce() -> Result<HttpClient, BuildError>,
    ) -> Result<Arc<HttpClient>, BuildError> {
        self.0.get_or_init(|| build().map(Arc::new)).clone()
    }
}

impl HttpClient {
    /// Build both clients. `lookup` is the resolver used for every hostname.
    pub fn new(
        policy: Policy,
        lookup: Arc<dyn Lookup>,
        limits: Limits,
    ) -> Result<Self, BuildError> {
        install_crypto();
        let policy = Arc::new(policy);
        let build = |guard_private: bool| {
            reqwest::Client::builder()
                .no_proxy()
                .redirect(reqwest::redirect::Policy::none())
                .connect_timeout(limits.connect)
                .read_timeout(limits.read)
                .timeout(limits.total)
                .user_agent(USER_AGENT)
                .dns_resolver(Arc::new(GuardResolver {
                    lookup: lookup.clone(),
                    policy: policy.clone(),
                    guard_private,
                }))
                .build()
                .map_err(|e| BuildError(format!("cannot build the HTTP client: {e}")))
        };
        Ok(HttpClient {
            fetch: build(true)?,
            api: build(false)?,
            policy,
            lookup,
            limits,
        })
    }

    /// A client with the system resolver and default limits.
    pub(crate) fn with_policy(policy: Policy) -> Result<Self, BuildError> {
        Self::new(policy, Arc::new(SystemLookup), Limits::default())
    }

    pub(crate) fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Check a URL the way `fetch` does before connecting, including DNS
    /// (for callers such as a browser that cannot pin the address).
    pub(crate) async fn check_url_resolved(&self, url: &Url) -> Result<(), Blocked> {
        check_url(url, &self.policy)?;
        if let Some(url::Host::Domain(d)) = url.host() {
            let host = normalize_host(d);
            if host.parse::<IpAddr>().is_err() {
                resolve_checked(&*self.lookup, &self.policy, &host, url.scheme(), true).await?;
            }
        }
        Ok(())
    }

    /// GET a user-supplied URL with the SSRF guard on every hop.
    pub async fn fetch(&self, url: &Url, opts: &FetchOptions) -> Result<Fetched, FetchError> {
        let cap = opts.max_bytes.unwrap_or(self.limits.max_bytes);
        let mut current = url.clone();
        let mut hops = 0usize;
        loop {
            check_url(&current, &self.policy)?;
            // An https-only trusted host reached over http: check its answers
            // with the real scheme (the resolver cannot see the scheme).
            if let Some(url::Host::Domain(d)) = current.host() {
                let h = normalize_host(d);
                if current.scheme() == "http"
                    && self
                        .policy
                        .trusted_private_hosts
                        .iter()
                        .any(|t| t.host == h && t.https_only)
                    && !self.policy.allow_private
                {
                    resolve_checked(&*self.lookup, &self.policy, &h, "http", true).await?;
                }
            }
            let mut req = self.fetch.get(current.clone());
            req = req.header(
                reqwest::header::ACCEPT,
                opts.accept.as_deref().unwrap_or(
                    "text/html,application/xhtml+xml,application/pdf,text/plain;q=0.9,*/*;q=0.8",
                ),
            );
            let resp = req.send().await.map_err(|e| map_reqwest(e, &current))?;
            let status = resp.status().as_u16();
            if matches!(status, 301 | 302 | 303 | 307 | 308)
                && let Some(loc) = resp.headers().get(LOCATION).and_then(|v| v.to_str().ok())
            {
                hops += 1;
                if hops > self.limits.max_redirects {
                    return Err(FetchError::TooManyRedirects(self.limits.max_redirects));
                }
                current = current
                    .join(loc.trim())
                    .map_err(|_| FetchError::BadUrl(loc.to_string()))?;
                continue;
            }
            let mut headers = resp.headers().clone();
            let body = read_capped(resp, cap, &current).await?;
            // The body is decoded now: its coding and length headers no longer apply.
            if headers.remove(CONTENT_ENCODING).is_some() {
                headers.remove(CONTENT_LENGTH);
            }
            return Ok(Fetched {
                final_url: current,
                status,
                headers,
                body,
            });
        }
    }

    /// The client for configured provider APIs (metadata floor only).
    pub fn api(&self) -> &reqwest::Client {
        &self.api
    }

    /// Send a provider API request with the provider's rate limit, honouring
    /// `Retry-After` on 429 (retrying while the wait is short enough).
    /// Returns the status and the (capped) body.
    pub async fn send_api(
        &self,
        provider: &str,
        min_interval: Duration,
        req: reqwest::RequestBuilder,
    ) -> Result<ApiResponse, ApiError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let Some(this) = req.try_clone() else {
                return Err(ApiError::Other("request body cannot be retried".into()));
            };
            let built = this.build().map_err(|e| ApiError::Other(e.to_string()))?;
            let url = built.url().clone();
            // Configured endpoints may be private; never cloud metadata.
            let floor = Policy {
                allow_private: true,
                ..(*self.policy).clone()
            };
            if let Err(b @ Blocked::Metadata { .. }) = check_url(&url, &floor) {
                return Err(ApiError::Blocked(b));
            }
            ratelimit::acquire(provider, min_interval).await;
            let resp = self
                .api
                .execute(built)
                .await
                .map_err(|e| api_error(e, &url))?;
            let status = resp.status().as_u16();
            if status == 429 {
                let wait = retry_after(resp.headers());
                ratelimit::defer(provider, wait.unwrap_or(Duration::from_secs(1)));
                match wait {
                    Some(w) if w <= self.limits.max_retry_wait && attempt < 3 => continue,
                    None if attempt < 2 => continue,
                    _ => return Err(ApiError::RateLimited { retry_after: wait }),
                }
            }
            let body = read_capped(resp, self.limits.max_api_bytes, &url)
                .await
                .map_err(|e| ApiError::Network(Box::new(e)))?;
            return Ok(ApiResponse { status, body });
        }
    }
}

#[derive(Debug)]
pub struct ApiResponse {
    pub status: u16,
    pub(crate) body: Vec<u8>,
}

/// A response body that does not parse as JSON.
#[derive(Debug, thiserror::Error)]
#[error("response is not JSON: {0}")]
pub(crate) struct NotJson(#[from] serde_json::Error);

impl ApiResponse {
    pub(crate) fn json(&self) -> Result<serde_json::Value, NotJson> {
        Ok(serde_json::from_slice(&self.body)?)
    }
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error(transparent)]
    Blocked(Blocked),
    #[error("rate limited (HTTP 429){}", match .retry_after { Some(d) => format!("; retry after {} s", d.as_secs().max(1)), None => String::new() })]
    RateLimited { retry_after: Option<Duration> },
    #[error("request timed out")]
    Timeout,
    /// No (complete) answer: the request or the body failed (boxed: a
    /// fetch error is several times the size of the other variants).
    #[error("{0}")]
    Network(#[source] Box<FetchError>),
    #[error("{0}")]
    Other(String),
}

/// `Retry-After` as seconds or an HTTP date.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let v = headers.get("retry-after")?.to_str().ok()?.trim();
    if let Ok(secs) = v.parse::<f64>()
        && secs.is_finite()
        && secs >= 0.0
    {
        return Some(Duration::from_secs_f64(secs.min(86_400.0)));
    }
    let when = httpdate_parse(v)?;
    let now = std::time::SystemTime::now();
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

/// An RFC 7231 IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) as a time.
fn httpdate_parse(s: &str) -> Option<std::time::SystemTime> {
    let secs = u64::try_from(crate::time::parse_http_date(s)?).ok()?;
    Some(std::time::UNIX_EPOCH + Duration::from_secs(secs))
}

/// Read a body, refusing early on a Content-Length above the cap and stopping
/// at the cap while streaming (chunks reqwest decompressed are counted after
/// decompression, so this also stops decompression bombs); then decode what
/// reqwest left encoded, under the same cap.
async fn read_capped(
    resp: reqwest::Response,
    cap: usize,
    url: &Url,
) -> Result<Vec<u8>, FetchError> {
    let codings = pending_codings(resp.headers());
    let raw = read_raw_capped(resp, cap, url).await?;
    if codings.is_empty() {
        return Ok(raw);
    }
    let url = url.to_string();
    tokio::task::spawn_blocking(move || decode_codings(raw, &codings, cap, &url))
        .await
        .map_err(|e| FetchError::Other(format!("decoding the response failed: {e}")))?
}

/// The content codings still applied to a body (reqwest removes the header
/// when it decoded it), in the order they were applied; `identity` dropped.
fn pending_codings(headers: &HeaderMap) -> Vec<String> {
    headers
        .get_all(CONTENT_ENCODING)
        .iter()
        .flat_map(|v| {
            String::from_utf8_lossy(v.as_bytes())
                .split(',')
                .map(|c| c.trim().to_ascii_lowercase())
                .collect::<Vec<_>>()
        })
        .filter(|c| !c.is_empty() && c != "identity")
        .collect()
}

/// Undo `codings` (last applied first), each step's output capped at `cap`.
fn decode_codings(
    mut body: Vec<u8>,
    codings: &[String],
    cap: usize,
    url: &str,
) -> Result<Vec<u8>, FetchError> {
    use std::io::Read;
    for coding in codings.iter().rev() {
        let input = std::mem::take(&mut body);
        let reader: Box<dyn Read> = match coding.as_str() {
            "gzip" | "x-gzip" => Box::new(flate2::read::MultiGzDecoder::new(&input[..])),
            // RFC 9110 says zlib, but servers also send raw DEFLATE, which
            // browsers accept: a valid zlib header decides (as Chromium's
            // and Firefox's decoders do).
            "deflate" if is_zlib_header(&input) => {
                Box::new(flate2::read::ZlibDecoder::new(&input[..]))
            }
            "deflate" => Box::new(flate2::read::DeflateDecoder::new(&input[..])),
            "br" => Box::new(brotli_decompressor::Decompressor::new(&input[..], 4096)),
            other => {
                return Err(FetchError::Encoding {
                    url: url.to_string(),
                    reason: format!(
                        "the server sent it with Content-Encoding {other:?}, which hermes-mcp cannot decode (it decodes gzip, deflate and br)"
                    ),
                    source: None,
                });
            }
        };
        reader
            .take(cap as u64 + 1)
            .read_to_end(&mut body)
            .map_err(|e| FetchError::Encoding {
                url: url.to_string(),
                reason: format!("the body is not valid {coding} data ({e})"),
                source: Some(e),
            })?;
        if body.len() > cap {
            return Err(FetchError::TooLarge(cap));
        }
    }
    Ok(body)
}

/// RFC 1950: compression method 8 with a window of at most 32 KiB, and the
/// two header bytes a multiple of 31.
fn is_zlib_header(b: &[u8]) -> bool {
    b.len() >= 2
        && b[0] & 0x0f == 8
        && b[0] >> 4 <= 7
        && u16::from_be_bytes([b[0], b[1]]).is_multiple_of(31)
}

async fn read_raw_capped(
    mut resp: reqwest::Response,
    cap: usize,
    url: &Url,
) -> Result<Vec<u8>, FetchError> {
    if let Some(len) = resp.content_length()
        && len as usize > cap
        && resp.headers().get("content-encoding").is_none()
    {
        return Err(FetchError::TooLarge(cap));
    }
    let mut out = Vec::new();
    loop {
        match resp.chunk().await {
            Ok(Some(chunk)) => {
                if out.len() + chunk.len() > cap {
                    return Err(FetchError::TooLarge(cap));
                }
                out.extend_from_slice(&chunk);
            }
            Ok(None) => break,
            Err(e) => return Err(map_reqwest(e, url)),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_network_failure_is_the_api_errors_source() {
        use std::error::Error as _;
        let url = Url::parse("http://127.0.0.1:1/x").unwrap();
        let cause = || reqwest::Proxy::all("http://[::1").unwrap_err();
        let want = map_reqwest(cause(), &url).to_string();
        assert!(
            want.starts_with("cannot fetch http://127.0.0.1:1/x: "),
            "{want}"
        );
        let e = api_error(cause(), &url);
        assert_eq!(e.to_string(), want);
        let src = e.source().expect("a source");
        let fetch = src
            .downcast_ref::<Box<FetchError>>()
            .expect("the fetch error");
        assert!(matches!(**fetch, FetchError::Network { .. }), "{src:?}");
        assert!(src.source().is_some_and(|s| s.is::<reqwest::Error>()));
    }

    #[test]
    fn retry_after_forms() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", "3".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(3)));
        h.insert(
            "retry-after",
            "Sun, 06 Nov 1994 08:49:37 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&h), Some(Duration::ZERO));
        assert_eq!(
            httpdate_parse("Sun, 06 Nov 1994 08:49:37 GMT")
                .unwrap()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_secs(),
            784_111_777
        );
        h.insert("retry-after", "soon".parse().unwrap());
        assert_eq!(retry_after(&h), None);
    }

    #[test]
    fn leftover_codings_are_decoded_under_the_cap_or_refused_by_name() {
        use std::io::Write;
        let text = b"hello deflate ".repeat(100);
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(&text).unwrap();
        let zlib = z.finish().unwrap();
        let mut r = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        r.write_all(&text).unwrap();
        let raw = r.finish().unwrap();
        let mut g = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        g.write_all(&zlib).unwrap();
        let gz_of_zlib = g.finish().unwrap();
        let c = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(is_zlib_header(&zlib) && !is_zlib_header(&raw));
        assert_eq!(
            decode_codings(zlib.clone(), &c(&["deflate"]), 1 << 20, "u").unwrap(),
            text
        );
        assert_eq!(
            decode_codings(raw, &c(&["deflate"]), 1 << 20, "u").unwrap(),
            text
        );
        assert_eq!(
            decode_codings(gz_of_zlib, &c(&["deflate", "gzip"]), 1 << 20, "u").unwrap(),
            text
        );
        assert!(matches!(
            decode_codings(zlib, &c(&["deflate"]), 100, "u"),
            Err(FetchError::TooLarge(100))
        ));
        // `brotli.compress(b"hello")`: one uncompressed meta-block.
        let br = b"\x0b\x02\x80hello\x03".to_vec();
        assert_eq!(decode_codings(br, &c(&["br"]), 100, "u").unwrap(), b"hello");
        let e = decode_codings(b"x".to_vec(), &c(&["zstd"]), 100, "u").unwrap_err();
        assert!(
            e.to_string()
                .contains("\"zstd\", which hermes-mcp cannot decode"),
            "{e}"
        );
        let e = decode_codings(b"\xff\xff".to_vec(), &c(&["gzip"]), 100, "u").unwrap_err();
        assert!(e.to_string().contains("not valid gzip data"), "{e}");
        let mut h = HeaderMap::new();
        h.append(CONTENT_ENCODING, "Deflate, identity".parse().unwrap());
        h.append(CONTENT_ENCODING, " GZIP".parse().unwrap());
        assert_eq!(pending_codings(&h), c(&["deflate", "gzip"]));
    }
}
