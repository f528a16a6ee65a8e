//! Search and extract providers, each speaking its vendor's documented HTTP API.
//!
//! Endpoints (overridable for self-hosting, proxies and loopback tests):
//! * Firecrawl `FIRECRAWL_API_URL` (default `https://api.firecrawl.dev`): `POST /v2/search`, `POST /v2/scrape`, `Authorization: Bearer`.
//! * Tavily `TAVILY_BASE_URL` (default `https://api.tavily.com`): `POST /search`, `POST /extract`, `Authorization: Bearer` (and `api_key` in the body, as Hermes sends it).
//! * Exa `web.exa.base_url` (default `https://api.exa.ai`): `POST /search`, `POST /contents`, `x-api-key`.
//! * Parallel `web.parallel.base_url` (default `https://api.parallel.ai`): `POST /v1beta/search`, `POST /v1beta/extract`, `x-api-key`, `parallel-beta`.
//! * SearXNG `SEARXNG_URL`: `GET /search?format=json`.
//! * Brave `web.brave.base_url` (default `https://api.search.brave.com`): `GET /res/v1/web/search`, `X-Subscription-Token`.
//! * xAI `web.xai.base_url`, else `XAI_BASE_URL` (default `https://api.x.ai/v1`): `POST /responses` with Grok's `web_search` tool, `Authorization: Bearer`.
//! * DuckDuckGo (keyless, as the `ddgs` package does) `web.ddgs.base_url` (default `https://html.duckduckgo.com`): `POST /html/`, HTML results.
//!
//! One file per vendor holds its request and answer types; this file chooses
//! the backend (hermes-agent: tools/web_tools.py `_get_backend`) and holds
//! what they share. Answers are read into lenient structs ([`lenient`]):
//! vendors drift, and an unexpected field must not cost the whole answer.

mod brave;
mod ddg;
mod exa;
mod firecrawl;
use crate::lenient;
mod parallel;
mod searxng;
mod tavily;
mod xai;

use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

pub(crate) use exa::extract as exa_extract;
pub(crate) use firecrawl::scrape as firecrawl_scrape;
pub(crate) use parallel::extract as parallel_extract;
pub(crate) use tavily::extract as tavily_extract;

use crate::gateway;
use crate::hermes::Context;
use crate::hermes::envvars;
use crate::net::{ApiError, ApiResponse, HttpClient};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Firecrawl,
    Tavily,
    Exa,
    Parallel,
    Searxng,
    BraveFree,
    Ddgs,
    /// Grok's server-side web search (search only; never auto-detected).
    Xai,
    /// Our own fetch + readability extractor (extract only).
    Builtin,
}

impl Backend {
    pub(crate) fn parse(name: &str) -> Option<Backend> {
        Some(match name.trim().to_ascii_lowercase().as_str() {
            "firecrawl" => Backend::Firecrawl,
            "tavily" => Backend::Tavily,
            "exa" => Backend::Exa,
            "parallel" => Backend::Parallel,
            "searxng" => Backend::Searxng,
            "brave-free" | "brave" => Backend::BraveFree,
            "ddgs" | "duckduckgo" => Backend::Ddgs,
            "xai" => Backend::Xai,
            "builtin" | "built-in" | "local" => Backend::Builtin,
            _ => return None,
        })
    }
    pub(crate) fn name(self) -> &'static str {
        match self {
            Backend::Firecrawl => "firecrawl",
            Backend::Tavily => "tavily",
            Backend::Exa => "exa",
            Backend::Parallel => "parallel",
            Backend::Searxng => "searxng",
            Backend::BraveFree => "brave-free",
            Backend::Ddgs => "ddgs",
            Backend::Xai => "xai",
            Backend::Builtin => "builtin",
        }
    }
    pub(crate) fn display(self) -> &'static str {
        match self {
            Backend::Firecrawl => "Firecrawl",
            Backend::Tavily => "Tavily",
            Backend::Exa => "Exa",
            Backend::Parallel => "Parallel",
            Backend::Searxng => "SearXNG",
            Backend::BraveFree => "Brave Search (Free)",
            Backend::Ddgs => "DuckDuckGo",
            Backend::Xai => "xAI Web Search (Grok)",
            Backend::Builtin => "built-in extractor",
        }
    }
    pub(crate) fn supports_search(self) -> bool {
        self != Backend::Builtin
    }
    pub(crate) fn supports_extract(self) -> bool {
        matches!(
            self,
            Backend::Firecrawl
                | Backend::Tavily
                | Backend::Exa
                | Backend::Parallel
                | Backend::Builtin
        )
    }
    /// Hermes' availability probes (keys from the environment or `$HERMES_HOME/.env`).
    pub(crate) fn available(self, ctx: &Context) -> bool {
        let has = |n: &str| ctx.env.get(n).is_some_and(|v| !v.trim().is_empty());
        match self {
            // `check_firecrawl_api_key`: direct config, or the Nous gateway.
            Backend::Firecrawl => {
                firecrawl::has_direct(ctx) || gateway::peek(ctx, "firecrawl").is_ok()
            }
            Backend::Tavily => has(envvars::TAVILY_API_KEY),
            Backend::Exa => has(envvars::EXA_API_KEY),
            Backend::Parallel => has(envvars::PARALLEL_API_KEY),
            Backend::Searxng => has(envvars::SEARXNG_URL),
            Backend::BraveFree => has(envvars::BRAVE_SEARCH_API_KEY),
            // hermes-agent: tools/xai_http.py `has_xai_credentials`.
            Backend::Xai => crate::auth::xai::peek(ctx).is_some(),
            Backend::Ddgs | Backend::Builtin => true,
        }
    }
}

/// Hermes' auto-detection order (xAI is not in it: Hermes only uses it when named).
const AUTO_ORDER: &[Backend] = &[
    Backend::Tavily,
    Backend::Exa,
    Backend::Parallel,
    Backend::Firecrawl,
    Backend::Searxng,
    Backend::BraveFree,
    Backend::Ddgs,
];

fn cfg_name(ctx: &Context, key: &str) -> Option<String> {
    ctx.sections()
        .web
        .backend_setting(key)
        .map(|s| s.trim().to_ascii_lowercase())
        .filter(|s| !s.is_empty())
}

/// Hermes' `_get_backend`: `web.backend` when it names a known backend (not
/// checked for availability), else the first available in Hermes' order.
fn shared_backend(ctx: &Context) -> Backend {
    if let Some(b) = cfg_name(ctx, "web.backend").and_then(|n| Backend::parse(&n)) {
        return b;
    }
    if let Some(n) = cfg_name(ctx, "web.backend") {
        tracing::warn!("web.backend '{n}' is not a backend hermes-mcp knows; auto-detecting");
    }
    AUTO_ORDER
        .iter()
        .copied()
        .find(|b| b.available(ctx))
        .unwrap_or(Backend::Ddgs)
}

/// The provider name `tools`/`doctor` show: Firecrawl through the Nous tool
/// gateway says so.
pub(crate) fn provider_label(ctx: &Context, b: Backend) -> String {
    if b == Backend::Firecrawl && firecrawl::via_gateway(ctx) {
        return format!("firecrawl ({})", gateway::PROVIDER_LABEL);
    }
    b.name().to_string()
}

/// Why [`search_backend`] / [`extract_backend`] chose `b`: the config key
/// that names it, or auto-detection (Hermes' order: the first whose key is set).
pub(crate) fn choice_reason(ctx: &Context, key: &str, b: Backend) -> String {
    let why = backend_reason(ctx, key, b);
    if b == Backend::Firecrawl && firecrawl::via_gateway(ctx) {
        return format!("{why}; {}", firecrawl::gateway_reason(ctx));
    }
    why
}

fn backend_reason(ctx: &Context, key: &str, b: Backend) -> String {
    for k in [key, "web.backend"] {
        if let Some(n) = cfg_name(ctx, k) {
            return match Backend::parse(&n) {
                Some(named) if named == b => format!("{k}: {n}"),
                Some(_) => format!("{k}: {n} cannot be used here, so auto-detected"),
                None => format!("{k}: {n} is unknown, so auto-detected"),
            };
        }
    }
    match b {
        Backend::Firecrawl if !firecrawl::has_direct(ctx) => "auto-detected".into(),
        Backend::Ddgs => "no web provider key is set: keyless DuckDuckGo".into(),
        Backend::Builtin => "built-in extractor".into(),
        _ => "auto-detected: its key is set".into(),
    }
}

/// `web.search_backend` if set and available, else the shared choice. A
/// backend that cannot search falls back to the first available searcher.
pub fn search_backend(ctx: &Context) -> Backend {
    if let Some(b) = cfg_name(ctx, "web.search_backend").and_then(|n| Backend::parse(&n))
        && b.available(ctx)
        && b.supports_search()
    {
        return b;
    }
    let b = shared_backend(ctx);
    if b.supports_search() {
        return b;
    }
    AUTO_ORDER
        .iter()
        .copied()
        .find(|b| b.available(ctx))
        .unwrap_or(Backend::Ddgs)
}

/// `web.extract_backend` if set and available, else the shared choice; when
/// that is search-only (SearXNG, Brave, DuckDuckGo), the built-in extractor.
pub fn extract_backend(ctx: &Context) -> Backend {
    if let Some(b) = cfg_name(ctx, "web.extract_backend").and_then(|n| Backend::parse(&n))
        && b.available(ctx)
        && b.supports_extract()
    {
        return b;
    }
    let b = shared_backend(ctx);
    if b.supports_extract() {
        return b;
    }
    Backend::Builtin
}

/// Per-provider pacing: `web.<provider>.min_interval` seconds between requests.
/// Defaults: Brave's free tier allows 1 request/s; DuckDuckGo is asked gently.
fn min_interval(ctx: &Context, b: Backend) -> Duration {
    let key = match b {
        Backend::BraveFree => "brave",
        other => other.name(),
    };
    let default = match b {
        Backend::BraveFree => 1.0,
        Backend::Ddgs => 1.0,
        _ => 0.0,
    };
    let secs = ctx
        .sections()
        .web
        .section(key)
        .min_interval
        .filter(|v| v.is_finite() && *v >= 0.0)
        .unwrap_or(default);
    Duration::from_secs_f64(secs.min(60.0))
}

fn base_url(ctx: &Context, b: Backend) -> String {
    let s = match b {
        Backend::Firecrawl => ctx
            .env
            .get(envvars::FIRECRAWL_API_URL)
            .unwrap_or_else(|| "https://api.firecrawl.dev".into()),
        Backend::Tavily => ctx
            .env
            .get(envvars::TAVILY_BASE_URL)
            .unwrap_or_else(|| "https://api.tavily.com".into()),
        Backend::Exa => ctx
            .sections()
            .web
            .section("exa")
            .base_url
            .clone()
            .unwrap_or_else(|| "https://api.exa.ai".into()),
        Backend::Parallel => ctx
            .sections()
            .web
            .section("parallel")
            .base_url
            .clone()
            .unwrap_or_else(|| "https://api.parallel.ai".into()),
        Backend::Searxng => ctx.env.get(envvars::SEARXNG_URL).unwrap_or_default(),
        Backend::BraveFree => ctx
            .sections()
            .web
            .section("brave")
            .base_url
            .clone()
            .unwrap_or_else(|| "https://api.search.brave.com".into()),
        Backend::Ddgs => ctx
            .sections()
            .web
            .section("ddgs")
            .base_url
            .clone()
            .unwrap_or_else(|| "https://html.duckduckgo.com".into()),
        // The credentials' base URL is used when this is empty (xai.rs).
        Backend::Xai => ctx
            .sections()
            .web
            .section("xai")
            .base_url
            .clone()
            .unwrap_or_default(),
        Backend::Builtin => String::new(),
    };
    s.trim().trim_end_matches('/').to_string()
}

fn key(ctx: &Context, name: &str) -> Option<String> {
    ctx.env
        .get(name)
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// One search as every provider takes it.
#[derive(Clone, Copy)]
pub(super) struct Search<'a> {
    pub(super) http: &'a HttpClient,
    pub(super) ctx: &'a Context,
    pub(super) query: &'a str,
    pub(super) limit: usize,
}

/// One search hit in Hermes' shape (`data.web[]` of tools/web_tools.py's
/// provider dicts); fields serialize in this order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Hit {
    pub title: String,
    pub url: String,
    pub description: String,
    pub position: usize,
}

impl Hit {
    fn new(title: &str, url: &str, description: &str, position: usize) -> Self {
        Hit {
            title: title.into(),
            url: url.into(),
            description: description.into(),
            position,
        }
    }
}

/// The first `limit` entries as hits numbered from 1, each entry giving
/// `(title, url, description)`.
fn numbered<'a, T: 'a>(
    entries: impl IntoIterator<Item = &'a T>,
    limit: usize,
    fields: impl Fn(&'a T) -> (&'a str, &'a str, String),
) -> Vec<Hit> {
    entries
        .into_iter()
        .take(limit)
        .enumerate()
        .map(|(i, e)| {
            let (title, url, desc) = fields(e);
            Hit::new(title, url, &desc, i + 1)
        })
        .collect()
}

/// Why a provider call failed. The Display texts are the `error` strings
/// the tool result carries (Hermes' wording where Hermes has one).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ProviderError {
    /// The request did not complete (network, timeout, rate limit, URL policy).
    #[error(transparent)]
    Api(#[from] ApiError),
    /// A non-2xx answer: `HTTP <status>[: <vendor message>]`.
    #[error("{0}")]
    Status(String),
    #[error("response is not JSON: {0}")]
    NotJson(#[from] serde_json::Error),
    /// The vendor answered but said no (`success: false`, a bot check).
    #[error("{0}")]
    Refused(String),
    /// The provider is not set up (a key or URL is missing); the text says what to set.
    #[error("{0}")]
    NotConfigured(&'static str),
    /// A configured base URL does not parse.
    #[error("{setting} is not a valid URL ({source}){suffix}")]
    BadBaseUrl {
        setting: &'static str,
        source: url::ParseError,
        suffix: String,
    },
    /// `<Vendor> <action> failed: <why>`.
    #[error("{vendor} {action} failed: {source}")]
    Failed {
        vendor: &'static str,
        action: &'static str,
        source: Box<ProviderError>,
    },
    /// `<What> rate limited (HTTP 429)...`.
    #[error("{what} {source}")]
    RateLimited {
        what: &'static str,
        source: ApiError,
    },
    #[error("Could not reach {what}: {source}")]
    Unreachable { what: String, source: ApiError },
    #[error("{what} returned HTTP {status}")]
    BadStatus { what: &'static str, status: u16 },
    #[error("Could not parse {0} response as JSON")]
    Unparsable(&'static str),
    #[error("the built-in extractor cannot search")]
    CannotSearch,
    /// Hermes raises before the request (configuration): the tool's top-level
    /// handler words it as `{"error": "Error searching web: …"}`.
    #[error(transparent)]
    Preflight(#[from] firecrawl::ClientError),
}

impl ProviderError {
    /// Wrap as `<vendor> <action> failed: <self>`.
    fn failed(self, vendor: &'static str, action: &'static str) -> Self {
        ProviderError::Failed {
            vendor,
            action,
            source: Box::new(self),
        }
    }
}

/// The message fields of a vendor's error body: `error`, `message` or
/// `detail`, each a string or an object with its own `message`/`error`.
#[derive(Debug, Default, Deserialize)]
struct ErrorBody {
    #[serde(default, deserialize_with = "lenient::or_default")]
    error: Option<ErrorField>,
    #[serde(default, deserialize_with = "lenient::or_default")]
    message: Option<ErrorField>,
    #[serde(default, deserialize_with = "lenient::or_default")]
    detail: Option<ErrorField>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum ErrorField {
    Text(String),
    Object(Map<String, Value>),
}

impl ErrorField {
    fn message(&self) -> String {
        match self {
            ErrorField::Text(s) => s.clone(),
            ErrorField::Object(o) => o
                .get("message")
                .or_else(|| o.get("error"))
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| Value::Object(o.clone()).to_string()),
        }
    }
}

/// A provider error body, shortened, for the message.
fn error_detail(r: &ApiResponse) -> String {
    let msg = serde_json::from_slice::<ErrorBody>(&r.body)
        .ok()
        .and_then(|b| {
            [b.error, b.message, b.detail]
                .into_iter()
                .flatten()
                .next()
                .map(|f| f.message())
        })
        .unwrap_or_else(|| r.text());
    let msg: String = msg.trim().chars().take(300).collect();
    if msg.is_empty() {
        format!("HTTP {}", r.status)
    } else {
        format!("HTTP {}: {msg}", r.status)
    }
}

/// Send a vendor request; a 2xx JSON answer is read into `T` (a JSON answer
/// that is not an object reads as `T::default()`, as Hermes' `.get` would).
async fn call_json<T: DeserializeOwned + Default>(
    http: &HttpClient,
    ctx: &Context,
    b: Backend,
    req: reqwest::RequestBuilder,
) -> Result<T, ProviderError> {
    let r = http.send_api(b.name(), min_interval(ctx, b), req).await?;
    if !(200..300).contains(&r.status) {
        return Err(ProviderError::Status(error_detail(&r)));
    }
    read_json(&r).map_err(ProviderError::NotJson)
}

/// A keyed JSON API called as Tavily, Exa and Parallel are: the key from the
/// environment (its absence worded as the vendor's provider words it), then a
/// POST to the search or the extract endpoint whose failure reads
/// `<Vendor> <search|extract> failed: …`.
struct KeyedApi {
    backend: Backend,
    vendor: &'static str,
    key_var: &'static str,
    no_key: &'static str,
    search_path: &'static str,
    extract_path: &'static str,
    /// Puts the key on a request (bearer, `x-api-key`, a vendor header).
    auth: fn(reqwest::RequestBuilder, &str) -> reqwest::RequestBuilder,
}

/// How long an extract batch may take (the search keeps the client's default).
const EXTRACT_TIMEOUT: Duration = Duration::from_secs(60);

impl KeyedApi {
    /// A search: `body(key)` to the search endpoint, the answer read into `T`.
    async fn search<T: DeserializeOwned + Default, B: Serialize>(
        &self,
        s: Search<'_>,
        body: impl FnOnce(&str) -> B,
    ) -> Result<T, ProviderError> {
        self.post(s.http, s.ctx, false, body).await
    }

    /// An extract batch: `body(key)` to the extract endpoint; a failure is
    /// every URL's document.
    async fn extract<T: DeserializeOwned + Default, B: Serialize>(
        &self,
        http: &HttpClient,
        ctx: &Context,
        urls: &[String],
        body: impl FnOnce(&str) -> B,
    ) -> Result<T, Vec<Doc>> {
        self.post(http, ctx, true, body)
            .await
            .map_err(|e| fail_all(urls, &e))
    }

    async fn post<T: DeserializeOwned + Default, B: Serialize>(
        &self,
        http: &HttpClient,
        ctx: &Context,
        extract: bool,
        body: impl FnOnce(&str) -> B,
    ) -> Result<T, ProviderError> {
        let Some(k) = key(ctx, self.key_var) else {
            return Err(ProviderError::NotConfigured(self.no_key));
        };
        let (path, action) = if extract {
            (self.extract_path, "extract")
        } else {
            (self.search_path, "search")
        };
        let base = base_url(ctx, self.backend);
        let mut req = (self.auth)(http.api().post(format!("{base}{path}")), &k);
        if extract {
            req = req.timeout(EXTRACT_TIMEOUT);
        }
        call_json(http, ctx, self.backend, req.json(&body(&k)))
            .await
            .map_err(|e| e.failed(self.vendor, action))
    }
}

/// A GET to a search-only vendor (Brave, SearXNG), JSON accepted within 15 s:
/// a 2xx JSON answer read into `T`; `unreachable` words a request that did not
/// complete, `what` names the vendor in the other failures.
async fn get_json<T: DeserializeOwned + Default>(
    http: &HttpClient,
    ctx: &Context,
    b: Backend,
    req: reqwest::RequestBuilder,
    what: &'static str,
    unreachable: impl FnOnce(ApiError) -> ProviderError,
) -> Result<T, ProviderError> {
    let req = req
        .header("Accept", "application/json")
        .timeout(Duration::from_secs(15));
    let r = http
        .send_api(b.name(), min_interval(ctx, b), req)
        .await
        .map_err(unreachable)?;
    if !(200..300).contains(&r.status) {
        return Err(ProviderError::BadStatus {
            what,
            status: r.status,
        });
    }
    read_json(&r).map_err(|_| ProviderError::Unparsable(what))
}

/// `<base><path>` as a URL; a base that does not parse names its `setting`.
fn endpoint_url(
    base: &str,
    path: &str,
    setting: &'static str,
    suffix: String,
) -> Result<url::Url, ProviderError> {
    url::Url::parse(&format!("{base}{path}")).map_err(|source| ProviderError::BadBaseUrl {
        setting,
        source,
        suffix,
    })
}

/// The body as JSON, then as `T` where it fits (else `T::default()`).
fn read_json<T: DeserializeOwned + Default>(r: &ApiResponse) -> Result<T, serde_json::Error> {
    let v: Value = serde_json::from_slice(&r.body)?;
    Ok(serde_json::from_value(v).unwrap_or_default())
}

/// `{"success": false, "error": ...}`.
pub(crate) fn failure(msg: impl Into<String>) -> Value {
    json!({"success": false, "error": msg.into()})
}

fn success(web: Vec<Hit>) -> Value {
    json!({"success": true, "data": {"web": web}})
}

// ---------------------------------------------------------------------------
// Search
// ---------------------------------------------------------------------------

/// Run a search; the result is Hermes' provider dict (`success`, `data.web` or `error`).
pub(crate) async fn search(
    http: &HttpClient,
    ctx: &Context,
    b: Backend,
    query: &str,
    limit: usize,
) -> Value {
    let s = Search {
        http,
        ctx,
        query,
        limit,
    };
    let r = match b {
        Backend::Firecrawl => firecrawl::search(s).await,
        Backend::Tavily => tavily::search(s).await,
        Backend::Exa => exa::search(s).await,
        Backend::Parallel => parallel::search(s).await,
        Backend::Searxng => searxng::search(s).await,
        Backend::BraveFree => brave::search(s).await,
        Backend::Ddgs => ddg::search(s).await,
        Backend::Xai => xai::search(s).await,
        Backend::Builtin => Err(ProviderError::CannotSearch),
    };
    match r {
        Ok(web) => success(web),
        Err(ProviderError::Preflight(m)) => json!({"error": format!("Error searching web: {m}")}),
        Err(e) => failure(e.to_string()),
    }
}

// ---------------------------------------------------------------------------
// Extract
// ---------------------------------------------------------------------------

/// One extracted page (or a per-URL failure).
#[derive(Debug, Clone, Default)]
pub(crate) struct Doc {
    pub url: String,
    pub title: String,
    pub content: String,
    pub error: Option<String>,
    pub final_url: Option<String>,
}

impl Doc {
    pub(crate) fn err(url: &str, e: impl Into<String>) -> Self {
        Doc {
            url: url.into(),
            error: Some(e.into()),
            ..Default::default()
        }
    }

    fn page(url: &str, title: &str, content: String) -> Self {
        Doc {
            url: url.into(),
            title: title.into(),
            content,
            ..Default::default()
        }
    }
}

/// The same failure for every URL of a batch.
fn fail_all(urls: &[String], e: &ProviderError) -> Vec<Doc> {
    let msg = e.to_string();
    urls.iter().map(|u| Doc::err(u, msg.clone())).collect()
}

/// Match provider documents back to the requested URLs, in input order.
fn reorder(urls: &[String], docs: Vec<Doc>) -> Vec<Doc> {
    let mut pool: Vec<Option<Doc>> = docs.into_iter().map(Some).collect();
    let norm = |u: &str| u.trim_end_matches('/').to_string();
    urls.iter()
        .map(|u| {
            let pos = pool
                .iter()
                .position(|d| d.as_ref().is_some_and(|d| norm(&d.url) == norm(u)));
            match pos.and_then(|p| pool[p].take()) {
                Some(mut d) => {
                    if d.url != *u {
                        d.final_url.get_or_insert(d.url.clone());
                        d.url = u.clone();
                    }
                    d
                }
                None => Doc::err(u, NO_RESULT),
            }
        })
        .collect()
}

const NO_RESULT: &str = "Extract backend returned no result for this URL";

/// ` (HTTP <code>)` when a per-URL failure names a status code.
fn http_code_suffix(code: Option<u64>) -> String {
    code.map(|c| format!(" (HTTP {c})")).unwrap_or_default()
}
