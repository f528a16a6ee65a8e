//! Brave Search's free tier (`GET /res/v1/web/search`, `X-Subscription-Token`),
//! as Hermes calls it (hermes-agent: plugins/web/brave_free/provider.py).

use serde::Deserialize;

use super::{
    Backend, Hit, ProviderError, Search, base_url, endpoint_url, get_json, key, lenient, numbered,
};
use crate::hermes::envvars;
use crate::net::ApiError;

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

pub(super) async fn search(s: Search<'_>) -> Result<Vec<Hit>, ProviderError> {
    let Search { http, ctx, .. } = s;
    let (query, limit) = (s.query, s.limit);
    let Some(k) = key(ctx, envvars::BRAVE_SEARCH_API_KEY) else {
        return Err(ProviderError::NotConfigured(
            "BRAVE_SEARCH_API_KEY is not set",
        ));
    };
    let base = base_url(ctx, Backend::BraveFree);
    let mut url = endpoint_url(
        &base,
        "/res/v1/web/search",
        "web.brave.base_url",
        String::new(),
    )?;
    url.query_pairs_mut()
        .append_pair("q", query)
        .append_pair("count", &limit.clamp(1, 20).to_string());
    let req = http.api().get(url).header("X-Subscription-Token", k);
    let a: Answer = get_json(
        http,
        ctx,
        Backend::BraveFree,
        req,
        "Brave Search",
        |e| match e {
            ApiError::RateLimited { .. } => ProviderError::RateLimited {
                what: "Brave Search",
                source: e,
            },
            other => ProviderError::Unreachable {
                what: "Brave Search".into(),
                source: other,
            },
        },
    )
    .await?;
    Ok(numbered(&a.web.results, limit, |r| {
        (&r.title, &r.url, r.description.clone())
    }))
}
