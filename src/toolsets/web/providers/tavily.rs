//! Tavily (`POST /search`, `POST /extract`), as Hermes calls it
//! (hermes-agent: plugins/web/tavily/provider.py): bearer auth, and the key
//! in the body too, as Hermes sends it.

use serde::{Deserialize, Serialize};

use super::{Backend, Doc, Hit, KeyedApi, ProviderError, Search, lenient, numbered, reorder};
use crate::hermes::Context;
use crate::hermes::envvars;
use crate::net::HttpClient;

const API: KeyedApi = KeyedApi {
    backend: Backend::Tavily,
    vendor: "Tavily",
    key_var: envvars::TAVILY_API_KEY,
    no_key: "TAVILY_API_KEY environment variable not set. Get your API key at https://app.tavily.com/home",
    search_path: "/search",
    extract_path: "/extract",
    auth: |req, k| req.bearer_auth(k),
};

#[derive(Serialize)]
struct SearchRequest<'a> {
    query: &'a str,
    max_results: usize,
    include_raw_content: bool,
    include_images: bool,
    api_key: String,
}

#[derive(Serialize)]
struct ExtractRequest<'a> {
    urls: &'a [String],
    include_images: bool,
    api_key: String,
}

#[derive(Debug, Default, Deserialize)]
struct Answer {
    #[serde(default, deserialize_with = "lenient::items")]
    results: Vec<Page>,
    #[serde(default, deserialize_with = "lenient::items")]
    failed_results: Vec<Failure>,
    #[serde(default, deserialize_with = "lenient::strings")]
    failed_urls: Vec<String>,
}

/// A search hit (`content` is the snippet) or an extracted page
/// (`raw_content`, falling back to `content`).
#[derive(Debug, Default, Deserialize)]
struct Page {
    #[serde(default, deserialize_with = "lenient::text")]
    url: String,
    #[serde(default, deserialize_with = "lenient::text")]
    title: String,
    #[serde(default, deserialize_with = "lenient::text")]
    content: String,
    #[serde(default, deserialize_with = "lenient::string")]
    raw_content: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct Failure {
    #[serde(default, deserialize_with = "lenient::text")]
    url: String,
    #[serde(default, deserialize_with = "lenient::string")]
    error: Option<String>,
}

pub(super) async fn search(s: Search<'_>) -> Result<Vec<Hit>, ProviderError> {
    let Search { query, limit, .. } = s;
    let a: Answer = API
        .search(s, |k| SearchRequest {
            query,
            max_results: limit.min(20),
            include_raw_content: false,
            include_images: false,
            api_key: k.to_string(),
        })
        .await?;
    Ok(numbered(&a.results, limit, |r| {
        (&r.title, &r.url, r.content.clone())
    }))
}

pub(crate) async fn extract(http: &HttpClient, ctx: &Context, urls: &[String]) -> Vec<Doc> {
    let body = |k: &str| ExtractRequest {
        urls,
        include_images: false,
        api_key: k.to_string(),
    };
    let a: Answer = match API.extract(http, ctx, urls, body).await {
        Ok(a) => a,
        Err(docs) => return docs,
    };
    let mut docs = Vec::new();
    for r in a.results {
        let content = r.raw_content.filter(|x| !x.is_empty()).unwrap_or(r.content);
        docs.push(Doc::page(&r.url, &r.title, content));
    }
    for f in a.failed_results {
        let e = f.error.as_deref().unwrap_or("extraction failed");
        docs.push(Doc::err(&f.url, e));
    }
    for u in &a.failed_urls {
        docs.push(Doc::err(u, "extraction failed"));
    }
    reorder(urls, docs)
}
