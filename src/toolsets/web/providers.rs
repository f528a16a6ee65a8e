//! Search and extract providers, each speaking its vendor's documented HTTP API.
//!
//! Endpoints (overridable for self-hosting, proxies and loopback tests):
//! * Firecrawl `FIRECRAWL_API_URL` (default `https://api.firecrawl.dev`): `POST /v2/search`, `POST /v2/scrape`, `Authorization: Bearer`.
//! * Tavily `TAVILY_BASE_URL` (default `https://api.tavily.com`): `POST /search`, `POST /extract`, `Authorization: Bearer` (and `api_key` in the body, as Hermes sends it).
//! * Exa `web.exa.base_url` (default `https://api.exa.ai`): `POST /search`, `POST /contents`, `x-api-key`.
//! * Parallel `web.parallel.base_url` (default `https://api.parallel.ai`): `POST /v1beta/search`, `POST /v1beta/extract`, `x-api-key`, `parallel-beta`.
//! * SearXNG `SEARXNG_URL`: `GET /search?format=json`.
//! * Brave `web.brave.base_url` (default `https://api.search.brave.com`): `GET /res/v1/web/search`, `X-Subscription-Token`.
//! * DuckDuckGo (keyless, as the `ddgs` package does) `web.ddgs.base_url` (default `https://html.duckduckgo.com`): `POST /html/`, HTML results.

use std::time::Duration;

use serde_json::{Value, json};

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
    /// Our own fetch + readability extractor (extract only).
    Builtin,
}

impl Backend {
    pub fn parse(name: &str) -> Option<Backend> {
        Some(match name.trim().to_ascii_lowercase().as_str() {
            "firecrawl" => Backend::Firecrawl,
            "tavily" => Backend::Tavily,
            "exa" => Backend::Exa,
            "parallel" => Backend::Parallel,
            "searxng" => Backend::Searxng,
            "brave-free" | "brave" => Backend::BraveFree,
            "ddgs" | "duckduckgo" => Backend::Ddgs,
            "builtin" | "built-in" | "local" => Backend::Builtin,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            Backend::Firecrawl => "firecrawl",
            Backend::Tavily => "tavily",
            Backend::Exa => "exa",
            Backend::Parallel => "parallel",
            Backend::Searxng => "searxng",
            Backend::BraveFree => "brave-free",
            Backend::Ddgs => "ddgs",
            Backend::Builtin => "builtin",
        }
    }
    pub fn display(self) -> &'static str {
        match self {
            Backend::Firecrawl => "Firecrawl",
            Backend::Tavily => "Tavily",
            Backend::Exa => "Exa",
            Backend::Parallel => "Parallel",
            Backend::Searxng => "SearXNG",
            Backend::BraveFree => "Brave Search (Free)",
            Backend::Ddgs => "DuckDuckGo",
            Backend::Builtin => "built-in extractor",
        }
    }
    pub fn supports_search(self) -> bool {
        self != Backend::Builtin
    }
    pub fn supports_extract(self) -> bool {
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
    pub fn available(self, ctx: &Context) -> bool {
        let has = |n: &str| ctx.env.get(n).is_some_and(|v| !v.trim().is_empty());
        match self {
            Backend::Firecrawl => {
                has(envvars::FIRECRAWL_API_KEY) || has(envvars::FIRECRAWL_API_URL)
            }
            Backend::Tavily => has(envvars::TAVILY_API_KEY),
            Backend::Exa => has(envvars::EXA_API_KEY),
            Backend::Parallel => has(envvars::PARALLEL_API_KEY),
            Backend::Searxng => has(envvars::SEARXNG_URL),
            Backend::BraveFree => has(envvars::BRAVE_SEARCH_API_KEY),
            Backend::Ddgs | Backend::Builtin => true,
        }
    }
}

/// Hermes' auto-detection order.
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
    ctx.config_str(key)
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
        .config()
        .f64(&format!("web.{key}.min_interval"))
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
            .config_str("web.exa.base_url")
            .unwrap_or_else(|| "https://api.exa.ai".into()),
        Backend::Parallel => ctx
            .config_str("web.parallel.base_url")
            .unwrap_or_else(|| "https://api.parallel.ai".into()),
        Backend::Searxng => ctx.env.get(envvars::SEARXNG_URL).unwrap_or_default(),
        Backend::BraveFree => ctx
            .config_str("web.brave.base_url")
            .unwrap_or_else(|| "https://api.search.brave.com".into()),
        Backend::Ddgs => ctx
            .config_str("web.ddgs.base_url")
            .unwrap_or_else(|| "https://html.duckduckgo.com".into()),
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

/// One search hit in Hermes' shape.
fn hit(title: &str, url: &str, description: &str, position: usize) -> Value {
    json!({"title": title, "url": url, "description": description, "position": position})
}

/// The first `limit` entries of the array at `pointer`, as numbered hits with
/// `title`, `url` and the description `desc` picks from each entry.
fn hits_at(v: &Value, pointer: &str, limit: usize, desc: impl Fn(&Value) -> String) -> Vec<Value> {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .take(limit)
                .enumerate()
                .map(|(i, r)| hit(&s(r, "title"), &s(r, "url"), &desc(r), i + 1))
                .collect()
        })
        .unwrap_or_default()
}

fn s(v: &Value, k: &str) -> String {
    match v.get(k) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

/// A provider error body, shortened, for the message.
fn error_detail(r: &ApiResponse) -> String {
    let text = r.text();
    let msg = serde_json::from_slice::<Value>(&r.body)
        .ok()
        .and_then(|v| {
            ["error", "message", "detail"]
                .iter()
                .find_map(|k| match v.get(*k) {
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(Value::Object(o)) => o
                        .get("message")
                        .or_else(|| o.get("error"))
                        .and_then(Value::as_str)
                        .map(str::to_string)
                        .or_else(|| Some(Value::Object(o.clone()).to_string())),
                    _ => None,
                })
        })
        .unwrap_or(text);
    let msg: String = msg.trim().chars().take(300).collect();
    if msg.is_empty() {
        format!("HTTP {}", r.status)
    } else {
        format!("HTTP {}: {msg}", r.status)
    }
}

fn api_err(e: ApiError) -> String {
    e.to_string()
}

async fn call_json(
    http: &HttpClient,
    ctx: &Context,
    b: Backend,
    req: reqwest::RequestBuilder,
) -> Result<Value, String> {
    let r = http
        .send_api(b.name(), min_interval(ctx, b), req)
        .await
        .map_err(api_err)?;
    if !(200..300).contains(&r.status) {
        return Err(error_detail(&r));
    }
    r.json()
}

/// `{"success": false, "error": ...}`.
pub fn failure(msg: impl Into<String>) -> Value {
    json!({"success": false, "error": msg.into()})
}

fn success(web: Vec<Value>) -> Value {
    json!({"success": true, "data": {"web": web}})
}

// ---------------------------------------------------------------------------
// Search
// ---------------------------------------------------------------------------

/// Run a search; the result is Hermes' provider dict (`success`, `data.web` or `error`).
pub async fn search(
    http: &HttpClient,
    ctx: &Context,
    b: Backend,
    query: &str,
    limit: usize,
) -> Value {
    let r = match b {
        Backend::Firecrawl => firecrawl_search(http, ctx, query, limit).await,
        Backend::Tavily => tavily_search(http, ctx, query, limit).await,
        Backend::Exa => exa_search(http, ctx, query, limit).await,
        Backend::Parallel => parallel_search(http, ctx, query, limit).await,
        Backend::Searxng => searxng_search(http, ctx, query, limit).await,
        Backend::BraveFree => brave_search(http, ctx, query, limit).await,
        Backend::Ddgs => ddg_search(http, ctx, query, limit).await,
        Backend::Builtin => Err("the built-in extractor cannot search".into()),
    };
    match r {
        Ok(web) => success(web),
        Err(e) => failure(e),
    }
}

async fn firecrawl_search(
    http: &HttpClient,
    ctx: &Context,
    query: &str,
    limit: usize,
) -> Result<Vec<Value>, String> {
    let base = base_url(ctx, Backend::Firecrawl);
    let mut req = http
        .api()
        .post(format!("{base}/v2/search"))
        .json(&json!({"query": query, "limit": limit}));
    if let Some(k) = key(ctx, envvars::FIRECRAWL_API_KEY) {
        req = req.bearer_auth(k);
    }
    let v = call_json(http, ctx, Backend::Firecrawl, req)
        .await
        .map_err(|e| format!("Firecrawl search failed: {e}"))?;
    if v.get("success") == Some(&Value::Bool(false)) {
        return Err(format!("Firecrawl search failed: {}", s(&v, "error")));
    }
    // v2: data.web; v1: data as a list; tolerate both as Hermes does.
    let list = match v.get("data") {
        Some(Value::Array(a)) => a.clone(),
        Some(Value::Object(o)) => o
            .get("web")
            .or_else(|| o.get("results"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        _ => v
            .get("web")
            .or_else(|| v.get("results"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
    };
    Ok(list
        .iter()
        .take(limit)
        .enumerate()
        .map(|(i, r)| {
            let pos = r
                .get("position")
                .and_then(Value::as_u64)
                .map(|p| p as usize)
                .unwrap_or(i + 1);
            hit(&s(r, "title"), &s(r, "url"), &s(r, "description"), pos)
        })
        .collect())
}

async fn tavily_search(
    http: &HttpClient,
    ctx: &Context,
    query: &str,
    limit: usize,
) -> Result<Vec<Value>, String> {
    let Some(k) = key(ctx, envvars::TAVILY_API_KEY) else {
        return Err("TAVILY_API_KEY environment variable not set. Get your API key at https://app.tavily.com/home".into());
    };
    let base = base_url(ctx, Backend::Tavily);
    let req = http
        .api()
        .post(format!("{base}/search"))
        .bearer_auth(&k)
        .json(&json!({
            "query": query, "max_results": limit.min(20), "include_raw_content": false,
            "include_images": false, "api_key": k,
        }));
    let v = call_json(http, ctx, Backend::Tavily, req)
        .await
        .map_err(|e| format!("Tavily search failed: {e}"))?;
    Ok(hits_at(&v, "/results", limit, |r| s(r, "content")))
}

fn joined(v: &Value, k: &str, sep: &str) -> String {
    v.get(k)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(sep)
        })
        .unwrap_or_default()
}

async fn exa_search(
    http: &HttpClient,
    ctx: &Context,
    query: &str,
    limit: usize,
) -> Result<Vec<Value>, String> {
    let Some(k) = key(ctx, envvars::EXA_API_KEY) else {
        return Err(
            "EXA_API_KEY environment variable not set. Get your API key at https://exa.ai".into(),
        );
    };
    let base = base_url(ctx, Backend::Exa);
    let req = http
        .api()
        .post(format!("{base}/search"))
        .header("x-api-key", k)
        .header("x-exa-integration", "hermes-agent")
        .json(&json!({"query": query, "numResults": limit, "contents": {"highlights": true}}));
    let v = call_json(http, ctx, Backend::Exa, req)
        .await
        .map_err(|e| format!("Exa search failed: {e}"))?;
    Ok(hits_at(&v, "/results", limit, |r| {
        joined(r, "highlights", " ")
    }))
}

fn parallel_mode(ctx: &Context) -> String {
    let m = ctx
        .env
        .get(envvars::PARALLEL_SEARCH_MODE)
        .unwrap_or_else(|| "agentic".into())
        .trim()
        .to_ascii_lowercase();
    if ["fast", "one-shot", "agentic"].contains(&m.as_str()) {
        m
    } else {
        "agentic".into()
    }
}

const PARALLEL_BETA: &str = "search-extract-2025-10-10";

async fn parallel_search(
    http: &HttpClient,
    ctx: &Context,
    query: &str,
    limit: usize,
) -> Result<Vec<Value>, String> {
    let Some(k) = key(ctx, envvars::PARALLEL_API_KEY) else {
        return Err("PARALLEL_API_KEY environment variable not set. Get your API key at https://parallel.ai".into());
    };
    let base = base_url(ctx, Backend::Parallel);
    let req = http
        .api()
        .post(format!("{base}/v1beta/search"))
        .header("x-api-key", k)
        .header("parallel-beta", PARALLEL_BETA)
        .json(&json!({
            "objective": query, "search_queries": [query], "mode": parallel_mode(ctx),
            "max_results": limit.min(20),
        }));
    let v = call_json(http, ctx, Backend::Parallel, req)
        .await
        .map_err(|e| format!("Parallel search failed: {e}"))?;
    Ok(hits_at(&v, "/results", limit, |r| {
        joined(r, "excerpts", " ")
    }))
}

async fn searxng_search(
    http: &HttpClient,
    ctx: &Context,
    query: &str,
    limit: usize,
) -> Result<Vec<Value>, String> {
    let base = base_url(ctx, Backend::Searxng);
    if base.is_empty() {
        return Err("SEARXNG_URL is not set".into());
    }
    let mut url = url::Url::parse(&format!("{base}/search"))
        .map_err(|e| format!("SEARXNG_URL is not a valid URL ({e}): {base}"))?;
    url.query_pairs_mut()
        .append_pair("q", query)
        .append_pair("format", "json")
        .append_pair("pageno", "1");
    let req = http
        .api()
        .get(url)
        .header("Accept", "application/json")
        .timeout(Duration::from_secs(15));
    let r = http
        .send_api("searxng", min_interval(ctx, Backend::Searxng), req)
        .await
        .map_err(|e| match e {
            ApiError::Network(m) | ApiError::Other(m) => {
                format!("Could not reach SearXNG at {base}: {m}")
            }
            other => format!("SearXNG search failed: {other}"),
        })?;
    if !(200..300).contains(&r.status) {
        return Err(format!("SearXNG returned HTTP {}", r.status));
    }
    let v = r
        .json()
        .map_err(|_| "Could not parse SearXNG response as JSON".to_string())?;
    let mut raw: Vec<Value> = v
        .get("results")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let score = |r: &Value| r.get("score").and_then(Value::as_f64).unwrap_or(0.0);
    raw.sort_by(|a, b| score(b).total_cmp(&score(a)));
    Ok(raw
        .iter()
        .take(limit)
        .enumerate()
        .map(|(i, r)| hit(&s(r, "title"), &s(r, "url"), &s(r, "content"), i + 1))
        .collect())
}

async fn brave_search(
    http: &HttpClient,
    ctx: &Context,
    query: &str,
    limit: usize,
) -> Result<Vec<Value>, String> {
    let Some(k) = key(ctx, envvars::BRAVE_SEARCH_API_KEY) else {
        return Err("BRAVE_SEARCH_API_KEY is not set".into());
    };
    let base = base_url(ctx, Backend::BraveFree);
    let mut url = url::Url::parse(&format!("{base}/res/v1/web/search"))
        .map_err(|e| format!("web.brave.base_url is not a valid URL ({e})"))?;
    url.query_pairs_mut()
        .append_pair("q", query)
        .append_pair("count", &limit.clamp(1, 20).to_string());
    let req = http
        .api()
        .get(url)
        .header("X-Subscription-Token", k)
        .header("Accept", "application/json")
        .timeout(Duration::from_secs(15));
    let r = http
        .send_api("brave-free", min_interval(ctx, Backend::BraveFree), req)
        .await
        .map_err(|e| match e {
            ApiError::RateLimited { .. } => format!("Brave Search {e}"),
            other => format!("Could not reach Brave Search: {other}"),
        })?;
    if !(200..300).contains(&r.status) {
        return Err(format!("Brave Search returned HTTP {}", r.status));
    }
    let v = r
        .json()
        .map_err(|_| "Could not parse Brave Search response as JSON".to_string())?;
    Ok(hits_at(&v, "/web/results", limit, |r| s(r, "description")))
}

/// Browser-like UA: DuckDuckGo's HTML endpoint turns unknown agents away.
const DDG_UA: &str = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36";

async fn ddg_search(
    http: &HttpClient,
    ctx: &Context,
    query: &str,
    limit: usize,
) -> Result<Vec<Value>, String> {
    let base = base_url(ctx, Backend::Ddgs);
    let body = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("q", query)
        .append_pair("b", "")
        .append_pair("kl", "wt-wt")
        .finish();
    let req = http
        .api()
        .post(format!("{base}/html/"))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .header("User-Agent", DDG_UA)
        .header("Referer", format!("{base}/"))
        .timeout(Duration::from_secs(20))
        .body(body);
    let r = http
        .send_api("ddgs", min_interval(ctx, Backend::Ddgs), req)
        .await
        .map_err(|e| format!("DuckDuckGo search failed: {e}"))?;
    if r.status != 200 {
        return Err(format!(
            "DuckDuckGo search failed: HTTP {} — DuckDuckGo may be rate-limiting or asking for a bot check. Try again later or configure a search provider (TAVILY_API_KEY, EXA_API_KEY, BRAVE_SEARCH_API_KEY, SEARXNG_URL, ...).",
            r.status
        ));
    }
    let html = r.text();
    let hits = parse_ddg_html(&html, limit);
    if hits.is_empty() && html.contains("anomaly") {
        return Err("DuckDuckGo search failed: DuckDuckGo asked for a bot check. Try again later or configure a search provider.".into());
    }
    Ok(hits)
}

/// Parse DuckDuckGo's HTML result page (`div.result`, `a.result__a`,
/// `.result__snippet`), skipping ads and unwrapping `/l/?uddg=` redirect links.
pub fn parse_ddg_html(html: &str, limit: usize) -> Vec<Value> {
    let doc = dom_query::Document::from(html);
    let mut out = Vec::new();
    for node in doc.select("div.result").iter() {
        if out.len() >= limit {
            break;
        }
        let class = node
            .attr("class")
            .map(|c| c.to_string())
            .unwrap_or_default();
        if class.contains("result--ad") {
            continue;
        }
        let a = node.select("a.result__a");
        let Some(href) = a.attr("href") else { continue };
        let Some(url) = ddg_target(&href) else {
            continue;
        };
        let title = squash(&a.text());
        let body = squash(&node.select(".result__snippet").text());
        out.push(hit(&title, &url, &body, out.len() + 1));
    }
    out
}

fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn ddg_target(href: &str) -> Option<String> {
    let abs = if href.starts_with("//") {
        format!("https:{href}")
    } else if href.starts_with('/') {
        format!("https://duckduckgo.com{href}")
    } else {
        href.to_string()
    };
    let u = url::Url::parse(&abs).ok()?;
    if u.path().ends_with("/y.js") {
        return None; // ad
    }
    if u.host_str().is_some_and(|h| h.ends_with("duckduckgo.com")) && u.path().starts_with("/l/") {
        return u
            .query_pairs()
            .find(|(k, _)| k == "uddg")
            .map(|(_, v)| v.into_owned());
    }
    Some(abs)
}

// ---------------------------------------------------------------------------
// Extract
// ---------------------------------------------------------------------------

/// One extracted page (or a per-URL failure).
#[derive(Debug, Clone, Default)]
pub struct Doc {
    pub url: String,
    pub title: String,
    pub content: String,
    pub error: Option<String>,
    pub final_url: Option<String>,
}

impl Doc {
    pub fn err(url: &str, e: impl Into<String>) -> Self {
        Doc {
            url: url.into(),
            error: Some(e.into()),
            ..Default::default()
        }
    }
}

/// Match provider documents back to the requested URLs, in input order.
fn reorder(urls: &[String], docs: Vec<Doc>, missing: &str) -> Vec<Doc> {
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
                None => Doc::err(u, missing),
            }
        })
        .collect()
}

const NO_RESULT: &str = "Extract backend returned no result for this URL";

pub async fn firecrawl_scrape(http: &HttpClient, ctx: &Context, url: &str) -> Doc {
    let base = base_url(ctx, Backend::Firecrawl);
    let mut req = http
        .api()
        .post(format!("{base}/v2/scrape"))
        .timeout(Duration::from_secs(60))
        .json(&json!({"url": url, "formats": ["markdown"]}));
    if let Some(k) = key(ctx, envvars::FIRECRAWL_API_KEY) {
        req = req.bearer_auth(k);
    }
    let v = match call_json(http, ctx, Backend::Firecrawl, req).await {
        Ok(v) => v,
        Err(e) if e == ApiError::Timeout.to_string() => {
            return Doc::err(
                url,
                "Scrape timed out after 60s — page may be too large or unresponsive. Try browser_navigate instead.",
            );
        }
        Err(e) => return Doc::err(url, format!("Firecrawl scrape failed: {e}")),
    };
    if v.get("success") == Some(&Value::Bool(false)) {
        return Doc::err(url, format!("Firecrawl scrape failed: {}", s(&v, "error")));
    }
    let data = v.get("data").filter(|d| d.is_object()).unwrap_or(&v);
    let meta = data.get("metadata").cloned().unwrap_or(Value::Null);
    let content = data
        .get("markdown")
        .and_then(Value::as_str)
        .or_else(|| data.get("html").and_then(Value::as_str))
        .unwrap_or("")
        .to_string();
    let final_url = meta
        .get("url")
        .or_else(|| meta.get("sourceURL"))
        .and_then(Value::as_str)
        .map(str::to_string);
    Doc {
        url: url.into(),
        title: s(&meta, "title"),
        content,
        error: None,
        final_url,
    }
}

pub async fn tavily_extract(http: &HttpClient, ctx: &Context, urls: &[String]) -> Vec<Doc> {
    let Some(k) = key(ctx, envvars::TAVILY_API_KEY) else {
        return urls.iter().map(|u| Doc::err(u, "TAVILY_API_KEY environment variable not set. Get your API key at https://app.tavily.com/home")).collect();
    };
    let base = base_url(ctx, Backend::Tavily);
    let req = http
        .api()
        .post(format!("{base}/extract"))
        .bearer_auth(&k)
        .timeout(Duration::from_secs(60))
        .json(&json!({"urls": urls, "include_images": false, "api_key": k}));
    let v = match call_json(http, ctx, Backend::Tavily, req).await {
        Ok(v) => v,
        Err(e) => {
            return urls
                .iter()
                .map(|u| Doc::err(u, format!("Tavily extract failed: {e}")))
                .collect();
        }
    };
    let mut docs = Vec::new();
    for r in v
        .get("results")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let raw = r
            .get("raw_content")
            .and_then(Value::as_str)
            .filter(|x| !x.is_empty())
            .or_else(|| r.get("content").and_then(Value::as_str))
            .unwrap_or("");
        docs.push(Doc {
            url: s(r, "url"),
            title: s(r, "title"),
            content: raw.into(),
            ..Default::default()
        });
    }
    for f in v
        .get("failed_results")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let e = f
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or("extraction failed");
        docs.push(Doc::err(&s(f, "url"), e));
    }
    for f in v
        .get("failed_urls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(u) = f.as_str() {
            docs.push(Doc::err(u, "extraction failed"));
        }
    }
    reorder(urls, docs, NO_RESULT)
}

pub async fn exa_extract(http: &HttpClient, ctx: &Context, urls: &[String]) -> Vec<Doc> {
    let Some(k) = key(ctx, envvars::EXA_API_KEY) else {
        return urls
            .iter()
            .map(|u| {
                Doc::err(
                    u,
                    "EXA_API_KEY environment variable not set. Get your API key at https://exa.ai",
                )
            })
            .collect();
    };
    let base = base_url(ctx, Backend::Exa);
    let req = http
        .api()
        .post(format!("{base}/contents"))
        .header("x-api-key", k)
        .header("x-exa-integration", "hermes-agent")
        .timeout(Duration::from_secs(60))
        .json(&json!({"urls": urls, "text": true}));
    let v = match call_json(http, ctx, Backend::Exa, req).await {
        Ok(v) => v,
        Err(e) => {
            return urls
                .iter()
                .map(|u| Doc::err(u, format!("Exa extract failed: {e}")))
                .collect();
        }
    };
    let mut docs = Vec::new();
    for r in v
        .get("results")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        docs.push(Doc {
            url: s(r, "url"),
            title: s(r, "title"),
            content: s(r, "text"),
            ..Default::default()
        });
    }
    for st in v
        .get("statuses")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if st.get("status").and_then(Value::as_str) == Some("error") {
            let tag = st
                .pointer("/error/tag")
                .and_then(Value::as_str)
                .unwrap_or("extraction failed");
            let code = st
                .pointer("/error/httpStatusCode")
                .and_then(Value::as_u64)
                .map(|c| format!(" (HTTP {c})"))
                .unwrap_or_default();
            docs.push(Doc::err(&s(st, "id"), format!("Exa: {tag}{code}")));
        }
    }
    reorder(urls, docs, NO_RESULT)
}

pub async fn parallel_extract(http: &HttpClient, ctx: &Context, urls: &[String]) -> Vec<Doc> {
    let Some(k) = key(ctx, envvars::PARALLEL_API_KEY) else {
        return urls.iter().map(|u| Doc::err(u, "PARALLEL_API_KEY environment variable not set. Get your API key at https://parallel.ai")).collect();
    };
    let base = base_url(ctx, Backend::Parallel);
    let req = http
        .api()
        .post(format!("{base}/v1beta/extract"))
        .header("x-api-key", k)
        .header("parallel-beta", PARALLEL_BETA)
        .timeout(Duration::from_secs(60))
        .json(&json!({"urls": urls, "full_content": true}));
    let v = match call_json(http, ctx, Backend::Parallel, req).await {
        Ok(v) => v,
        Err(e) => {
            return urls
                .iter()
                .map(|u| Doc::err(u, format!("Parallel extract failed: {e}")))
                .collect();
        }
    };
    let mut docs = Vec::new();
    for r in v
        .get("results")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let mut content = s(r, "full_content");
        if content.is_empty() {
            content = joined(r, "excerpts", "\n\n");
        }
        docs.push(Doc {
            url: s(r, "url"),
            title: s(r, "title"),
            content,
            ..Default::default()
        });
    }
    for e in v
        .get("errors")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let kind = e
            .get("error_type")
            .and_then(Value::as_str)
            .unwrap_or("extraction failed");
        let code = e
            .get("http_status_code")
            .and_then(Value::as_u64)
            .map(|c| format!(" (HTTP {c})"))
            .unwrap_or_default();
        docs.push(Doc::err(&s(e, "url"), format!("Parallel: {kind}{code}")));
    }
    reorder(urls, docs, NO_RESULT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ddg_html_parsing() {
        let html = r#"<html><body>
<div class="result results_links result--ad"><h2><a class="result__a" href="https://duckduckgo.com/y.js?ad=1">Ad</a></h2></div>
<div class="result results_links results_links_deep web-result">
 <h2 class="result__title"><a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fwww.rust-lang.org%2F&amp;rut=abc">Rust <b>Programming</b> Language</a></h2>
 <a class="result__snippet" href="x">A language empowering   everyone.</a>
</div>
<div class="result results_links web-result"><h2><a class="result__a" href="https://example.org/page">Example</a></h2>
 <div class="result__snippet">Plain snippet</div></div>
</body></html>"#;
        let hits = parse_ddg_html(html, 5);
        assert_eq!(hits.len(), 2);
        assert_eq!(hits[0]["url"], "https://www.rust-lang.org/");
        assert_eq!(hits[0]["title"], "Rust Programming Language");
        assert_eq!(hits[0]["description"], "A language empowering everyone.");
        assert_eq!(hits[0]["position"], 1);
        assert_eq!(hits[1]["url"], "https://example.org/page");
        assert_eq!(parse_ddg_html(html, 1).len(), 1);
    }
}
