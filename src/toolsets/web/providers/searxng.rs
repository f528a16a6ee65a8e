//! SearXNG (`GET /search?format=json` on `SEARXNG_URL`), as Hermes calls it
//! (hermes-agent: plugins/web/searxng/provider.py): hits sorted by score.

use std::time::Duration;

use serde::Deserialize;

use super::{Backend, Hit, ProviderError, base_url, lenient, min_interval, numbered, read_json};
use crate::hermes::Context;
use crate::net::{ApiError, HttpClient};

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

pub(super) async fn search(
    http: &HttpClient,
    ctx: &Context,
    query: &str,
    limit: usize,
) -> Result<Vec<Hit>, ProviderError> {
    let base = base_url(ctx, Backend::Searxng);
    if base.is_empty() {
        return Err(ProviderError::NotConfigured("SEARXNG_URL is not set"));
    }
    let mut url =
        url::Url::parse(&format!("{base}/search")).map_err(|source| ProviderError::BadBaseUrl {
            setting: "SEARXNG_URL",
            source,
            suffix: format!(": {base}"),
        })?;
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
            ApiError::Network(_) | ApiError::Other(_) => ProviderError::Unreachable {
                what: format!("SearXNG at {base}"),
                source: e,
            },
            other => ProviderError::Api(other).failed("SearXNG", "search"),
        })?;
    if !(200..300).contains(&r.status) {
        return Err(ProviderError::BadStatus {
            what: "SearXNG",
            status: r.status,
        });
    }
    let mut a: Answer = read_json(&r).map_err(|_| ProviderError::Unparsable("SearXNG"))?;
    let score = |r: &Result_| r.score.unwrap_or(0.0);
    a.results.sort_by(|a, b| score(b).total_cmp(&score(a)));
    Ok(numbered(&a.results, limit, |r| {
        (&r.title, &r.url, r.content.clone())
    }))
}
