//! Brave Search's free tier (`GET /res/v1/web/search`, `X-Subscription-Token`),
//! as Hermes calls it (hermes-agent: plugins/web/brave_free/provider.py).

use std::time::Duration;

use serde::Deserialize;

use super::{
    Backend, Hit, ProviderError, base_url, key, lenient, min_interval, numbered, read_json,
};
use crate::hermes::Context;
use crate::hermes::envvars;
use crate::net::{ApiError, HttpClient};

#[derive(Debug, Default, Deserialize)]
struct Answer {
    #[serde(default, deserialize_with = "lenient::or_default")]
    web: Web,
}

#[derive(Debug, Default, Deserialize)]
struct Web {
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
    description: String,
}

pub(super) async fn search(
    http: &HttpClient,
    ctx: &Context,
    query: &str,
    limit: usize,
) -> Result<Vec<Hit>, ProviderError> {
    let Some(k) = key(ctx, envvars::BRAVE_SEARCH_API_KEY) else {
        return Err(ProviderError::NotConfigured(
            "BRAVE_SEARCH_API_KEY is not set",
        ));
    };
    let base = base_url(ctx, Backend::BraveFree);
    let mut url = url::Url::parse(&format!("{base}/res/v1/web/search")).map_err(|source| {
        ProviderError::BadBaseUrl {
            setting: "web.brave.base_url",
            source,
            suffix: String::new(),
        }
    })?;
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
            ApiError::RateLimited { .. } => ProviderError::RateLimited {
                what: "Brave Search",
                source: e,
            },
            other => ProviderError::Unreachable {
                what: "Brave Search".into(),
                source: other,
            },
        })?;
    if !(200..300).contains(&r.status) {
        return Err(ProviderError::BadStatus {
            what: "Brave Search",
            status: r.status,
        });
    }
    let a: Answer = read_json(&r).map_err(|_| ProviderError::Unparsable("Brave Search"))?;
    Ok(numbered(&a.web.results, limit, |r| {
        (&r.title, &r.url, r.description.clone())
    }))
}
