//! Firecrawl (`POST /v2/search`, `POST /v2/scrape`, bearer auth), as Hermes
//! calls it (hermes-agent: plugins/web/firecrawl/provider.py).
//!
//! Direct (`FIRECRAWL_API_KEY` / `FIRECRAWL_API_URL`) or through the Nous tool
//! gateway (`firecrawl` vendor: the same API at the gateway origin with the
//! Nous token as the bearer), as `_get_firecrawl_client` chooses: direct
//! config wins unless `web.use_gateway` is set; with neither, the call fails
//! with Hermes' "Web tools are not configured" text.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Backend, Doc, Hit, ProviderError, Search, base_url, call_json, key, lenient};
use crate::gateway::{self, Unavailable};
use crate::hermes::Context;
use crate::hermes::envvars;
use crate::net::{ApiError, HttpClient};

/// Where a Firecrawl call goes: base URL and bearer token.
struct Endpoint {
    base: String,
    bearer: Option<String>,
}

/// Direct Firecrawl config is present (`_get_direct_firecrawl_config`).
pub(super) fn has_direct(ctx: &Context) -> bool {
    key(ctx, envvars::FIRECRAWL_API_KEY).is_some() || key(ctx, envvars::FIRECRAWL_API_URL).is_some()
}

/// Calls go to the Nous gateway (no direct config, or `web.use_gateway`).
pub(super) fn via_gateway(ctx: &Context) -> bool {
    !has_direct(ctx) || ctx.sections().web.use_gateway
}

/// Why the gateway route, and whether it is ready (for `tools`/`doctor`).
pub(super) fn gateway_reason(ctx: &Context) -> String {
    let route = if has_direct(ctx) {
        "web.use_gateway is set, so the Nous tool gateway (firecrawl) wins over FIRECRAWL_API_KEY/URL"
    } else {
        "no FIRECRAWL_API_KEY/URL: Nous tool gateway (firecrawl)"
    };
    match gateway::peek(ctx, "firecrawl") {
        Ok(g) => format!("{route} at {}, Nous login entitled", g.origin),
        Err(u) => format!("{route}, not usable: {}", u.reason()),
    }
}

/// Why `_get_firecrawl_client` has no client: a configuration error, raised
/// before any request (Hermes' texts).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ClientError {
    /// `TOOL_GATEWAY_SCHEME` is neither `http` nor `https`.
    #[error("{}", Unavailable::BadScheme.reason())]
    BadScheme,
    /// No direct config and no usable gateway; `hint` says what the Nous
    /// login would offer or why it cannot.
    #[error(
        "Web tools are not configured. Set FIRECRAWL_API_KEY for cloud Firecrawl or set FIRECRAWL_API_URL for a self-hosted Firecrawl instance. {hint}"
    )]
    NotConfigured { hint: String },
}

/// `_get_firecrawl_client`'s choice.
async fn endpoint(http: &HttpClient, ctx: &Context) -> Result<Endpoint, ClientError> {
    if has_direct(ctx) && !ctx.sections().web.use_gateway {
        return Ok(Endpoint {
            base: base_url(ctx, Backend::Firecrawl),
            bearer: key(ctx, envvars::FIRECRAWL_API_KEY),
        });
    }
    match gateway::resolve(ctx, http, "firecrawl").await {
        Ok(g) => Ok(Endpoint {
            base: g.origin.clone(),
            bearer: Some(g.token().to_string()),
        }),
        Err(Unavailable::BadScheme) => Err(ClientError::BadScheme),
        Err(u) => {
            tracing::error!(
                "Firecrawl client initialization failed: missing direct config and tool-gateway auth."
            );
            let hint = if u.entitled() {
                "With your Nous subscription you can also use the Tool Gateway. run `hermes tools` and select Nous Subscription as the web provider.".to_string()
            } else {
                gateway::unavailable_message(ctx, http, "managed Firecrawl web tools", false).await
            };
            Err(ClientError::NotConfigured { hint })
        }
    }
}

#[derive(Serialize)]
struct SearchRequest<'a> {
    query: &'a str,
    limit: usize,
}

#[derive(Serialize)]
struct ScrapeRequest<'a> {
    url: &'a str,
    formats: [&'static str; 1],
}

/// The parts of a Firecrawl answer both endpoints share: `success: false`
/// with an `error` means the call failed even on HTTP 200.
#[derive(Debug, Default, Deserialize)]
struct Verdict {
    #[serde(default, deserialize_with = "lenient::or_default")]
    success: Option<bool>,
    #[serde(default, deserialize_with = "lenient::text")]
    error: String,
}

/// A search answer: v2 puts hits in `data.web`, v1 makes `data` the list;
/// Hermes tolerates both (and `web`/`results` at the top level).
#[derive(Debug, Default, Deserialize)]
struct SearchAnswer {
    #[serde(flatten)]
    verdict: Verdict,
    #[serde(default, deserialize_with = "search_data")]
    data: Option<Vec<SearchHit>>,
    #[serde(flatten)]
    top: Sections,
}

/// `data` as a list of hits, or as an object with `web`/`results`; `None`
/// for anything else (the top-level sections are read then).
fn search_data<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Vec<SearchHit>>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Array(a) => Some(lenient::list(a)),
        o @ Value::Object(_) => Some(
            serde_json::from_value::<Sections>(o)
                .unwrap_or_default()
                .hits(),
        ),
        _ => None,
    })
}

#[derive(Debug, Default, Deserialize)]
struct Sections {
    #[serde(default, deserialize_with = "lenient::opt_items")]
    web: Option<Vec<SearchHit>>,
    #[serde(default, deserialize_with = "lenient::opt_items")]
    results: Option<Vec<SearchHit>>,
}

impl Sections {
    fn hits(self) -> Vec<SearchHit> {
        self.web.or(self.results).unwrap_or_default()
    }
}

#[derive(Debug, Default, Deserialize)]
struct SearchHit {
    #[serde(default, deserialize_with = "lenient::text")]
    title: String,
    #[serde(default, deserialize_with = "lenient::text")]
    url: String,
    #[serde(default, deserialize_with = "lenient::text")]
    description: String,
    #[serde(default, deserialize_with = "lenient::or_default")]
    position: Option<u64>,
}

/// A scrape answer: the page under `data` (or at the top level).
#[derive(Debug, Default, Deserialize)]
struct ScrapeAnswer {
    #[serde(flatten)]
    verdict: Verdict,
    #[serde(default, deserialize_with = "lenient::or_default")]
    data: Option<Page>,
    #[serde(flatten)]
    top: Page,
}

#[derive(Debug, Default, Deserialize)]
struct Page {
    #[serde(default, deserialize_with = "lenient::string")]
    markdown: Option<String>,
    #[serde(default, deserialize_with = "lenient::string")]
    html: Option<String>,
    #[serde(default, deserialize_with = "lenient::or_default")]
    metadata: Metadata,
}

#[derive(Debug, Default, Deserialize)]
struct Metadata {
    #[serde(default, deserialize_with = "lenient::text")]
    title: String,
    #[serde(default, deserialize_with = "lenient::string")]
    url: Option<String>,
    #[serde(default, rename = "sourceURL", deserialize_with = "lenient::string")]
    source_url: Option<String>,
}

pub(super) async fn search(s: Search<'_>) -> Result<Vec<Hit>, ProviderError> {
    let Search { http, ctx, .. } = s;
    let (query, limit) = (s.query, s.limit);
    let ep = endpoint(http, ctx).await?;
    let base = ep.base;
    let mut req = http
        .api()
        .post(format!("{base}/v2/search"))
        .json(&SearchRequest { query, limit });
    if let Some(k) = ep.bearer {
        req = req.bearer_auth(k);
    }
    let a: SearchAnswer = call_json(http, ctx, Backend::Firecrawl, req)
        .await
        .map_err(|e| e.failed("Firecrawl", "search"))?;
    if a.verdict.success == Some(false) {
        return Err(ProviderError::Refused(a.verdict.error).failed("Firecrawl", "search"));
    }
    let list = a.data.unwrap_or_else(|| a.top.hits());
    Ok(list
        .iter()
        .take(limit)
        .enumerate()
        .map(|(i, r)| {
            let pos = r.position.map(|p| p as usize).unwrap_or(i + 1);
            Hit::new(&r.title, &r.url, &r.description, pos)
        })
        .collect())
}

pub(crate) async fn scrape(http: &HttpClient, ctx: &Context, url: &str) -> Doc {
    let ep = match endpoint(http, ctx).await {
        Ok(ep) => ep,
        Err(e) => return Doc::err(url, e.to_string()),
    };
    let base = ep.base;
    let mut req = http
        .api()
        .post(format!("{base}/v2/scrape"))
        .timeout(Duration::from_secs(60))
        .json(&ScrapeRequest {
            url,
            formats: ["markdown"],
        });
    if let Some(k) = ep.bearer {
        req = req.bearer_auth(k);
    }
    let a: ScrapeAnswer = match call_json(http, ctx, Backend::Firecrawl, req).await {
        Ok(a) => a,
        Err(ProviderError::Api(ApiError::Timeout)) => {
            return Doc::err(
                url,
                "Scrape timed out after 60s — page may be too large or unresponsive. Try browser_navigate instead.",
            );
        }
        Err(e) => return Doc::err(url, e.failed("Firecrawl", "scrape").to_string()),
    };
    if a.verdict.success == Some(false) {
        return Doc::err(
            url,
            ProviderError::Refused(a.verdict.error)
                .failed("Firecrawl", "scrape")
                .to_string(),
        );
    }
    let page = a.data.unwrap_or(a.top);
    let meta = page.metadata;
    Doc {
        url: url.into(),
        title: meta.title,
        content: page.markdown.or(page.html).unwrap_or_default(),
        error: None,
        final_url: meta.url.or(meta.source_url),
    }
}
