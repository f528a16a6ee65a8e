//! Exa (`POST /search`, `POST /contents`, `x-api-key`), as Hermes calls it
//! (hermes-agent: plugins/web/exa/provider.py).

use serde::{Deserialize, Serialize};

use super::{
    Backend, Doc, Hit, KeyedApi, ProviderError, Search, http_code_suffix, lenient, numbered,
    reorder,
};
use crate::hermes::Context;
use crate::hermes::envvars;
use crate::net::HttpClient;

const API: KeyedApi = KeyedApi {
    backend: Backend::Exa,
    vendor: "Exa",
    key_var: envvars::EXA_API_KEY,
    no_key: "EXA_API_KEY environment variable not set. Get your API key at https://exa.ai",
    search_path: "/search",
    extract_path: "/contents",
    auth: |req, k| {
        req.header("x-api-key", k)
            .header("x-exa-integration", "hermes-agent")
    },
};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SearchRequest<'a> {
    query: &'a str,
    num_results: usize,
    contents: Contents,
}

#[derive(Serialize)]
struct Contents {
    highlights: bool,
}

#[derive(Serialize)]
struct ContentsRequest<'a> {
    urls: &'a [String],
    text: bool,
}

#[derive(Debug, Default, Deserialize)]
struct Answer {
    #[serde(default, deserialize_with = "lenient::items")]
    results: Vec<Page>,
    #[serde(default, deserialize_with = "lenient::items")]
    statuses: Vec<Status>,
}

#[derive(Debug, Default, Deserialize)]
struct Page {
    #[serde(default, deserialize_with = "lenient::text")]
    url: String,
    #[serde(default, deserialize_with = "lenient::text")]
    title: String,
    #[serde(default, deserialize_with = "lenient::text")]
    text: String,
    #[serde(default, deserialize_with = "lenient::strings")]
    highlights: Vec<String>,
}

/// Per-URL outcome of `/contents`: `{"id": url, "status": "error", "error": {...}}`.
#[derive(Debug, Default, Deserialize)]
struct Status {
    #[serde(default, deserialize_with = "lenient::text")]
    id: String,
    #[serde(default, deserialize_with = "lenient::string")]
    status: Option<String>,
    #[serde(default, deserialize_with = "lenient::or_default")]
    error: StatusError,
}

#[derive(Debug, Default, Deserialize)]
struct StatusError {
    #[serde(default, deserialize_with = "lenient::string")]
    tag: Option<String>,
    #[serde(
        default,
        rename = "httpStatusCode",
        deserialize_with = "lenient::or_default"
    )]
    http_status_code: Option<u64>,
}

pub(super) async fn search(s: Search<'_>) -> Result<Vec<Hit>, ProviderError> {
    let Search { query, limit, .. } = s;
    let a: Answer = API
        .search(s, |_| SearchRequest {
            query,
            num_results: limit,
            contents: Contents { highlights: true },
        })
        .await?;
    Ok(numbered(&a.results, limit, |r| {
        (&r.title, &r.url, r.highlights.join(" "))
    }))
}

pub(crate) async fn extract(http: &HttpClient, ctx: &Context, urls: &[String]) -> Vec<Doc> {
    let body = |_: &str| ContentsRequest { urls, text: true };
    let a: Answer = match API.extract(http, ctx, urls, body).await {
        Ok(a) => a,
        Err(docs) => return docs,
    };
    let mut docs: Vec<Doc> = a
        .results
        .into_iter()
        .map(|r| Doc::page(&r.url, &r.title, r.text))
        .collect();
    for st in a.statuses {
        if st.status.as_deref() == Some("error") {
            let tag = st.error.tag.as_deref().unwrap_or("extraction failed");
            let code = http_code_suffix(st.error.http_status_code);
            docs.push(Doc::err(&st.id, format!("Exa: {tag}{code}")));
        }
    }
    reorder(urls, docs)
}
