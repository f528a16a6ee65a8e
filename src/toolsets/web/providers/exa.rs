//! Exa (`POST /search`, `POST /contents`, `x-api-key`), as Hermes calls it
//! (hermes-agent: plugins/web/exa/provider.py).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{
    Backend, Doc, Hit, ProviderError, base_url, call_json, fail_all, http_code_suffix, key,
    lenient, numbered, reorder,
};
use crate::hermes::Context;
use crate::hermes::envvars;
use crate::net::HttpClient;

const NO_KEY: &str = "EXA_API_KEY environment variable not set. Get your API key at https://exa.ai";

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

pub(super) async fn search(
    http: &HttpClient,
    ctx: &Context,
    query: &str,
    limit: usize,
) -> Result<Vec<Hit>, ProviderError> {
    let Some(k) = key(ctx, envvars::EXA_API_KEY) else {
        return Err(ProviderError::NotConfigured(NO_KEY));
    };
    let base = base_url(ctx, Backend::Exa);
    let req = http
        .api()
        .post(format!("{base}/search"))
        .header("x-api-key", k)
        .header("x-exa-integration", "hermes-agent")
        .json(&SearchRequest {
            query,
            num_results: limit,
            contents: Contents { highlights: true },
        });
    let a: Answer = call_json(http, ctx, Backend::Exa, req)
        .await
        .map_err(|e| e.failed("Exa", "search"))?;
    Ok(numbered(&a.results, limit, |r| {
        (&r.title, &r.url, r.highlights.join(" "))
    }))
}

pub(crate) async fn extract(http: &HttpClient, ctx: &Context, urls: &[String]) -> Vec<Doc> {
    let Some(k) = key(ctx, envvars::EXA_API_KEY) else {
        return fail_all(urls, &ProviderError::NotConfigured(NO_KEY));
    };
    let base = base_url(ctx, Backend::Exa);
    let req = http
        .api()
        .post(format!("{base}/contents"))
        .header("x-api-key", k)
        .header("x-exa-integration", "hermes-agent")
        .timeout(Duration::from_secs(60))
        .json(&ContentsRequest { urls, text: true });
    let a: Answer = match call_json(http, ctx, Backend::Exa, req).await {
        Ok(a) => a,
        Err(e) => return fail_all(urls, &e.failed("Exa", "extract")),
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
