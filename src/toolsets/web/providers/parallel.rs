//! Parallel (`POST /v1beta/search`, `POST /v1beta/extract`, `x-api-key`,
//! `parallel-beta`), as Hermes calls it (hermes-agent: plugins/web/parallel/provider.py).

use serde::{Deserialize, Serialize};

use super::{
    Backend, Doc, Hit, KeyedApi, ProviderError, Search, http_code_suffix, lenient, numbered,
    reorder,
};
use crate::hermes::Context;
use crate::hermes::envvars;
use crate::net::HttpClient;

const API: KeyedApi = KeyedApi {
    backend: Backend::Parallel,
    vendor: "Parallel",
    key_var: envvars::PARALLEL_API_KEY,
    no_key: "PARALLEL_API_KEY environment variable not set. Get your API key at https://parallel.ai",
    search_path: "/v1beta/search",
    extract_path: "/v1beta/extract",
    auth: |req, k| {
        req.header("x-api-key", k)
            .header("parallel-beta", PARALLEL_BETA)
    },
};

const PARALLEL_BETA: &str = "search-extract-2025-10-10";

#[derive(Serialize)]
struct SearchRequest<'a> {
    objective: &'a str,
    search_queries: [&'a str; 1],
    mode: String,
    max_results: usize,
}

#[derive(Serialize)]
struct ExtractRequest<'a> {
    urls: &'a [String],
    full_content: bool,
}

#[derive(Debug, Default, Deserialize)]
struct Answer {
    #[serde(default, deserialize_with = "lenient::items")]
    results: Vec<Page>,
    #[serde(default, deserialize_with = "lenient::items")]
    errors: Vec<Failure>,
}

#[derive(Debug, Default, Deserialize)]
struct Page {
    #[serde(default, deserialize_with = "lenient::text")]
    url: String,
    #[serde(default, deserialize_with = "lenient::text")]
    title: String,
    #[serde(default, deserialize_with = "lenient::text")]
    full_content: String,
    #[serde(default, deserialize_with = "lenient::strings")]
    excerpts: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
struct Failure {
    #[serde(default, deserialize_with = "lenient::text")]
    url: String,
    #[serde(default, deserialize_with = "lenient::string")]
    error_type: Option<String>,
    #[serde(default, deserialize_with = "lenient::or_default")]
    http_status_code: Option<u64>,
}

/// `PARALLEL_SEARCH_MODE` (`fast`, `one-shot`, `agentic`; default `agentic`).
fn mode(ctx: &Context) -> String {
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

pub(super) async fn search(s: Search<'_>) -> Result<Vec<Hit>, ProviderError> {
    let Search {
        ctx, query, limit, ..
    } = s;
    let a: Answer = API
        .search(s, |_| SearchRequest {
            objective: query,
            search_queries: [query],
            mode: mode(ctx),
            max_results: limit.min(20),
        })
        .await?;
    Ok(numbered(&a.results, limit, |r| {
        (&r.title, &r.url, r.excerpts.join(" "))
    }))
}

pub(crate) async fn extract(http: &HttpClient, ctx: &Context, urls: &[String]) -> Vec<Doc> {
    let body = |_: &str| ExtractRequest {
        urls,
        full_content: true,
    };
    let a: Answer = match API.extract(http, ctx, urls, body).await {
        Ok(a) => a,
        Err(docs) => return docs,
    };
    let mut docs = Vec::new();
    for r in a.results {
        let content = if r.full_content.is_empty() {
            r.excerpts.join("\n\n")
        } else {
            r.full_content
        };
        docs.push(Doc::page(&r.url, &r.title, content));
    }
    for e in a.errors {
        let kind = e.error_type.as_deref().unwrap_or("extraction failed");
        let code = http_code_suffix(e.http_status_code);
        docs.push(Doc::err(&e.url, format!("Parallel: {kind}{code}")));
    }
    reorder(urls, docs)
}
