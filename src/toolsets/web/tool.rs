//! One `web_search` or `web_extract` call, in Hermes' steps: the query or the
//! URLs read and checked, the backend asked ([`super::providers`]), the
//! answer shaped as Hermes' handler returns it.

use std::sync::Arc;

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use serde_json::{Value, json};

use super::WebOptions;
use super::args::{ExtractArgs, SearchArgs};
use super::extract::{self, BuiltinOptions};
use super::providers::{self, Backend, Doc};
use crate::hermes::Context;
use crate::net::{self, HttpClient, guards};
use crate::server::{Progress, ToolOutput};

pub(super) async fn web_search(ctx: &Context, http: &HttpClient, args: SearchArgs) -> ToolOutput {
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
pub(super) async fn web_extract(
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
