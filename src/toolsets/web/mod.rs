//! Hermes' `web` toolset: `web_search` and `web_extract` (tools/web_tools.py).
//!
//! Backends are chosen as Hermes chooses them (`web.search_backend` /
//! `web.extract_backend`, then `web.backend`, then the first configured of
//! Tavily, Exa, Parallel, Firecrawl, SearXNG, Brave, DuckDuckGo; xAI only
//! when named, as Hermes never auto-detects it). Search
//! always works: DuckDuckGo's HTML endpoint needs no account. Extraction
//! always works: without an extract provider the built-in extractor fetches
//! the page itself through the SSRF-guarded [`crate::net`] client.

pub(crate) mod extract;
pub mod pdf;
pub mod providers;

use std::path::PathBuf;
use std::sync::Arc;

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use serde::Deserialize;
use serde_json::{Map, Number, Value, json};

use crate::hermes::Context;
use crate::net::{self, HttpClient, Limits, Lookup, Policy, SystemLookup, guards};
use crate::server::toolset::BoxFuture;
use crate::server::{
    Availability, Hints, Progress, ProviderChoice, ToolCall, ToolDef, ToolEntry, ToolOutput,
    Toolset,
};
use extract::BuiltinOptions;
use providers::{Backend, Doc};

const WEB_SEARCH_DESCRIPTION: &str = "Search the web for information. Returns up to 5 results by default with titles, URLs, and descriptions. The query is passed through to the configured backend, so operators such as site:domain, filetype:pdf, intitle:word, -term, and \"exact phrase\" may work when the backend supports them.";

const WEB_EXTRACT_DESCRIPTION: &str = "Extract content from web page URLs. Returns clean page content in markdown/text (no LLM summarization — fast). Also works with PDF URLs (arxiv papers, documents) — pass the PDF link directly. Pages within the char budget (default 15000) return whole; larger pages return a head+tail window with a footer telling you the full text's saved file path and the read_file call to page through the omitted middle. Inline images appear as [IMAGE: alt] placeholders; real image URLs are kept as links. If a URL fails or times out, use the browser tool instead.";

const DEFS: &[ToolDef] = &[
    ToolDef {
        name: "web_search",
        description: WEB_SEARCH_DESCRIPTION,
        schema: web_search_schema,
        hints: Hints::READ_ONLY_OPEN,
    },
    ToolDef {
        name: "web_extract",
        description: WEB_EXTRACT_DESCRIPTION,
        schema: web_extract_schema,
        hints: Hints::READ_ONLY_OPEN,
    },
];

fn web_search_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "The search query to look up on the web. You may include backend-supported operators such as site:example.com, filetype:pdf, intitle:word, -term, or \"exact phrase\"."},
            "limit": {"type": "integer", "description": "Maximum number of results to return. Defaults to 5.", "minimum": 1, "maximum": 100, "default": 5}
        },
        "required": ["query"]
    })
}

fn web_extract_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "urls": {"type": "array", "items": {"type": "string"}, "description": "List of URLs to extract content from (max 5 URLs per call)", "maxItems": 5},
            "char_limit": {"type": "integer", "description": "Optional per-page character budget sent back (default 15000). Pages larger than this are head+tail truncated with the full text stored to disk. Raise it when you need more of a long page inline.", "minimum": 2000}
        },
        "required": ["urls"]
    })
}

/// How the toolset reaches the network (the defaults for `serve`; tests
/// inject a scripted resolver and the path of the `hermes-mcp` binary).
#[derive(Clone)]
pub struct WebOptions {
    pub lookup: Arc<dyn Lookup>,
    pub limits: Limits,
    /// The `hermes-mcp` executable for the PDF child (default: this executable).
    pub helper_exe: Option<PathBuf>,
}

impl Default for WebOptions {
    fn default() -> Self {
        WebOptions {
            lookup: Arc::new(SystemLookup),
            limits: Limits::default(),
            helper_exe: None,
        }
    }
}

use crate::net::{BuildError as ClientError, LazyClient};

/// `web_search`'s arguments (after schema validation).
#[derive(Debug, Default, Deserialize)]
struct SearchArgs {
    #[serde(default)]
    query: Option<String>,
    /// Kept as a JSON number: out-of-range values fall back to the default.
    #[serde(default)]
    limit: Option<Number>,
}

/// `web_extract`'s arguments (after schema validation).
#[derive(Debug, Default, Deserialize)]
struct ExtractArgs {
    #[serde(default)]
    urls: Vec<String>,
    #[serde(default)]
    char_limit: Option<Number>,
}

/// A call of one of this toolset's tools, its arguments read.
enum WebCall {
    Search(SearchArgs),
    Extract(ExtractArgs),
}

impl WebCall {
    /// `None` for a name this toolset does not define.
    fn parse(name: &str, args: Map<String, Value>) -> Option<WebCall> {
        let args = Value::Object(args);
        Some(match name {
            "web_search" => WebCall::Search(read_args(args)),
            "web_extract" => WebCall::Extract(read_args(args)),
            _ => return None,
        })
    }
}

/// Validated arguments as `T`; a shape the schema let through but `T` does not
/// take reads as `T::default()` (the tool then reports what is missing).
fn read_args<T: serde::de::DeserializeOwned + Default>(args: Value) -> T {
    serde_json::from_value(args).unwrap_or_default()
}

pub struct WebToolset {
    opts: WebOptions,
    client: LazyClient,
}

impl Default for WebToolset {
    fn default() -> Self {
        Self::new(WebOptions::default())
    }
}

impl WebToolset {
    pub fn new(opts: WebOptions) -> Self {
        WebToolset {
            opts,
            client: LazyClient::default(),
        }
    }

    fn client(&self, ctx: &Context) -> Result<Arc<HttpClient>, ClientError> {
        self.client.get_or_build(|| {
            HttpClient::new(
                Policy::from_context(ctx),
                self.opts.lookup.clone(),
                self.opts.limits.clone(),
            )
        })
    }
}

impl Toolset for WebToolset {
    fn name(&self) -> &'static str {
        "web"
    }

    fn defs(&self) -> &'static [ToolDef] {
        DEFS
    }

    fn resolve(&self, _ctx: &Context, def: &'static ToolDef) -> ToolEntry {
        def.entry(Availability::Available)
    }

    fn providers(&self, ctx: &Context) -> Vec<ProviderChoice> {
        let s = providers::search_backend(ctx);
        let e = providers::extract_backend(ctx);
        vec![
            ProviderChoice {
                job: "web_search",
                provider: providers::provider_label(ctx, s),
                why: providers::choice_reason(ctx, "web.search_backend", s),
            },
            ProviderChoice {
                job: "web_extract",
                provider: providers::provider_label(ctx, e),
                why: providers::choice_reason(ctx, "web.extract_backend", e),
            },
        ]
    }

    fn call<'a>(&'a self, ctx: &'a Context, call: ToolCall) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let http = match self.client(ctx) {
                Ok(c) => c,
                Err(e) => return ToolOutput::error(e.to_string()),
            };
            match WebCall::parse(call.name, call.args) {
                Some(WebCall::Search(args)) => web_search(ctx, &http, args).await,
                Some(WebCall::Extract(args)) => {
                    web_extract(ctx, &http, &self.opts, args, &call.progress).await
                }
                None => ToolOutput::error(format!("Unknown tool: {}", call.name)),
            }
        })
    }
}

async fn web_search(ctx: &Context, http: &HttpClient, args: SearchArgs) -> ToolOutput {
    let query = args.query.as_deref().unwrap_or("").trim().to_string();
    if query.is_empty() {
        return ToolOutput::error("query must not be empty");
    }
    let limit = args
        .limit
        .and_then(|n| n.as_i64())
        .unwrap_or(5)
        .clamp(1, 100) as usize;
    let backend = providers::search_backend(ctx);
    tracing::info!(backend = backend.name(), "web_search");
    let v = providers::search(http, ctx, backend, &query, limit).await;
    if v.get("success") == Some(&Value::Bool(true)) {
        ToolOutput::json(v)
    } else {
        ToolOutput::error_json(v)
    }
}

/// `web.extract_char_limit` (an int, or a numeric string), default 15000.
fn configured_char_limit(ctx: &Context) -> i64 {
    ctx.sections()
        .web
        .extract_char_limit
        .unwrap_or(extract::DEFAULT_CHAR_LIMIT)
}

/// One requested URL on its way through `web_extract`: the document once fetched (or
/// the error that stands in for it), and the policy rule that blocked it, if one did.
struct Slot {
    url: String,
    doc: Option<Doc>,
    policy: Option<net::PolicyBlock>,
}

/// `web_extract` in Hermes' steps: read the URLs (refusing secrets), apply the URL
/// policy, fetch through the extract backend, re-check where redirects landed, answer.
async fn web_extract(
    ctx: &Context,
    http: &Arc<HttpClient>,
    opts: &WebOptions,
    args: ExtractArgs,
    progress: &Progress,
) -> ToolOutput {
    let raw_urls: Vec<String> = args.urls.into_iter().take(5).collect();
    let mut slots = match read_urls(&raw_urls) {
        Ok(s) => s,
        Err(out) => return out,
    };
    let backend = providers::extract_backend(ctx);
    tracing::info!(backend = backend.name(), "web_extract");
    check_policy(http, backend, &mut slots).await;
    if let Err(out) = fetch(ctx, http, opts, backend, &mut slots, progress).await {
        return out;
    }
    recheck_redirects(http, &mut slots);
    let char_limit = extract::clamp_char_limit(
        args.char_limit
            .and_then(|n| n.as_i64())
            .unwrap_or_else(|| configured_char_limit(ctx)),
    );
    answer(ctx, slots, char_limit).await
}

/// Hermes' steps 1-4: item validation, normalisation, secrets, credential parameters.
/// A URL carrying a secret refuses the whole call (`Err`, the tool's answer).
fn read_urls(raw_urls: &[String]) -> Result<Vec<Slot>, ToolOutput> {
    let mut slots: Vec<Slot> = Vec::with_capacity(raw_urls.len());
    for (i, raw) in raw_urls.iter().enumerate() {
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            slots.push(Slot {
                url: String::new(),
                doc: Some(Doc::err("", format!("Invalid URL item at index {i}: expected a URL string or an object with a string 'url' or 'href' field"))),
                policy: None,
            });
            continue;
        }
        let normalized = guards::normalize_url(trimmed);
        if guards::url_has_secret(trimmed, &normalized) {
            return Err(ToolOutput::error_json(providers::failure(
                "Blocked: URL contains what appears to be an API key or token. Secrets must not be sent in URLs.",
            )));
        }
        if let Some(k) = guards::sensitive_query_param(&normalized) {
            return Err(ToolOutput::error_json(providers::failure(format!(
                "Blocked: URL contains a credential-like query parameter ({k}). Web extract backends are third-party readers; remove the sensitive query parameter or use a local browser session when this access is explicitly required."
            ))));
        }
        slots.push(Slot {
            url: normalized,
            doc: None,
            policy: None,
        });
    }
    Ok(slots)
}

/// Hermes' step 5: the URL policy per URL, for every backend (the website blocklist
/// too). A blocked or unparsable URL gets its error as its document.
async fn check_policy(http: &HttpClient, backend: Backend, slots: &mut [Slot]) {
    for slot in slots.iter_mut().filter(|s| s.doc.is_none()) {
        let parsed = match url::Url::parse(&slot.url) {
            Ok(u) => u,
            Err(e) => {
                slot.doc = Some(Doc::err(&slot.url, format!("Invalid URL: {e}")));
                continue;
            }
        };
        // Third-party readers get the full pre-flight (DNS included, as Hermes);
        // our own fetch checks names at connect time and on every redirect.
        let verdict = if backend == Backend::Builtin {
            net::check_url(&parsed, http.policy())
        } else {
            http.check_url_resolved(&parsed).await
        };
        if let Err(b) = verdict {
            slot.policy = b.policy_block().cloned();
            slot.doc = Some(Doc::err(&slot.url, b.to_string()));
        }
    }
}

/// Hermes' step 6: fetch the URLs that passed, one request per URL (built-in,
/// Firecrawl) or one batch (Tavily, Exa, Parallel), reporting progress.
async fn fetch(
    ctx: &Context,
    http: &Arc<HttpClient>,
    opts: &WebOptions,
    backend: Backend,
    slots: &mut [Slot],
    progress: &Progress,
) -> Result<(), ToolOutput> {
    let pending: Vec<usize> = (0..slots.len())
        .filter(|i| slots[*i].doc.is_none())
        .collect();
    let total = pending.len() as u64;
    match backend {
        Backend::Builtin | Backend::Firecrawl => {
            let bopts = BuiltinOptions {
                helper_exe: opts.helper_exe.clone(),
            };
            let mut running: FuturesUnordered<_> = pending
                .iter()
                .map(|&i| {
                    let url = slots[i].url.clone();
                    let http = http.clone();
                    let bopts = bopts.clone();
                    async move {
                        let d = if backend == Backend::Builtin {
                            extract::builtin_extract(&http, &url, &bopts).await
                        } else {
                            providers::firecrawl_scrape(&http, ctx, &url).await
                        };
                        (i, d)
                    }
                })
                .collect();
            let mut done = 0u64;
            while let Some((i, d)) = running.next().await {
                done += 1;
                progress
                    .report(done, Some(total), format!("web_extract: {}", slots[i].url))
                    .await;
                slots[i].doc = Some(d);
            }
        }
        Backend::Tavily | Backend::Exa | Backend::Parallel => {
            let urls: Vec<String> = pending.iter().map(|&i| slots[i].url.clone()).collect();
            if !urls.is_empty() {
                progress
                    .report(
                        0,
                        Some(total),
                        format!("web_extract via {}", backend.display()),
                    )
                    .await;
                let docs = match backend {
                    Backend::Tavily => providers::tavily_extract(http, ctx, &urls).await,
                    Backend::Exa => providers::exa_extract(http, ctx, &urls).await,
                    _ => providers::parallel_extract(http, ctx, &urls).await,
                };
                for (&i, d) in pending.iter().zip(docs) {
                    slots[i].doc = Some(d);
                }
                progress
                    .report(total, Some(total), "web_extract done")
                    .await;
            }
        }
        other => {
            // Cannot happen: extract_backend never returns a search-only backend.
            return Err(ToolOutput::error_json(providers::failure(format!(
                "{} is a search-only backend and cannot extract URL content. Set web.extract_backend to firecrawl, tavily, exa, or parallel.",
                other.display()
            ))));
        }
    }
    Ok(())
}

/// A provider that followed redirects: re-check where it landed.
fn recheck_redirects(http: &HttpClient, slots: &mut [Slot]) {
    for slot in slots.iter_mut() {
        let Some(doc) = slot.doc.as_mut() else {
            continue;
        };
        if doc.error.is_some() {
            continue;
        }
        if let Some(fu) = doc.final_url.clone().and_then(|f| url::Url::parse(&f).ok())
            && let Err(b) = net::check_url(&fu, http.policy())
        {
            slot.policy = b.policy_block().cloned();
            *doc = Doc::err(&slot.url, format!("{b} (after redirect to {fu})"));
        }
    }
}

/// Hermes' steps 7-9: one result per URL, content within `char_limit` (the full text
/// saved under `$HERMES_HOME/cache/web/` when cut); an error when every URL failed.
async fn answer(ctx: &Context, slots: Vec<Slot>, char_limit: usize) -> ToolOutput {
    let cache_dir = ctx.home.cache_dir("web");
    let mut results = Vec::new();
    let mut all_failed = true;
    for slot in slots {
        let doc = slot.doc.unwrap_or_else(|| {
            Doc::err(&slot.url, "Extract backend returned no result for this URL")
        });
        let mut content = String::new();
        if doc.error.is_none() {
            all_failed = false;
            if !doc.content.is_empty() {
                let clean = extract::convert_base64_images(&doc.content);
                let url = slot.url.clone();
                let dir = cache_dir.clone();
                content = tokio::task::spawn_blocking(move || {
                    extract::truncate_with_footer(&clean, &url, char_limit, &dir).0
                })
                .await
                .unwrap_or_default();
            }
        }
        let mut r = json!({
            "url": slot.url,
            "title": extract::convert_base64_images(&doc.title),
            "content": content,
            "error": doc.error,
        });
        if let Some(p) = slot.policy {
            r["blocked_by_policy"] = json!({"host": p.host, "rule": p.rule, "source": p.source});
        }
        results.push(r);
    }
    if results.is_empty() {
        return ToolOutput::error("Content was inaccessible or not found");
    }
    let out = json!({ "results": results });
    if all_failed {
        ToolOutput::error_json(out)
    } else {
        ToolOutput::json(out)
    }
}
