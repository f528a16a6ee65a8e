//! SearXNG (`GET /search?format=json` on `SEARXNG_URL`), as Hermes calls it
//! (hermes-agent: plugins/web/searxng/provider.py): hits sorted by score.

use serde::Deserialize;

use super::{
    Backend, Hit, ProviderError, Search, base_url, endpoint_url, get_json, lenient, numbered,
};
use crate::net::ApiError;

#[derive(Debug, Default, Deserialize)]
struct Answer {
    #[serde(default, deserialize_with = "lenient::items")]
    results: Vec<Result_>,
}

#[derive(Debug, Default, Deserialize)]
struct Result_ {
    #[serde(default, deserialize_with = "lenient::text")]
    title: String,
    #[serde(default, deserialize_with = "lenient::text")]
    url: String,
    #[serde(default, deserialize_with = "lenient::text")]
    content: String,
    #[serde(default, deserialize_with = "lenient::or_default")]
    score: Option<f64>,
}

pub(super) async fn search(s: Search<'_>) -> Result<Vec<Hit>, ProviderError> {
    let Search { http, ctx, .. } = s;
    let (query, limit) = (s.query, s.limit);
    let base = base_url(ctx, Backend::Searxng);
    if base.is_empty() {
        return Err(ProviderError::NotConfigured("SEARXNG_URL is not set"));
    }
    let mut url = endpoint_url(&base, "/search", "SEARXNG_URL", format!(": {base}"))?;
    url.query_pairs_mut()
        .append_pair("q", query)
        .append_pair("format", "json")
        .append_pair("pageno", "1");
    let req = http.api().get(url);
    let mut a: Answer = get_json(http, ctx, Backend::Searxng, req, "SearXNG", |e| match e {
        ApiError::Network(_) | ApiError::Other(_) => ProviderError::Unreachable {
            what: format!("SearXNG at {base}"),
            source: e,
        },
        other => ProviderError::Api(other).failed("SearXNG", "search"),
    })
    .await?;
    let score = |r: &Result_| r.score.unwrap_or(0.0);
    a.results.sort_by(|a, b| score(b).total_cmp(&score(a)));
    Ok(numbered(&a.results, limit, |r| {
        (&r.title, &r.url, r.content.clone())
    }))
}
