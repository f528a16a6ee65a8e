//! DeepInfra (`image_gen.provider: deepinfra`, hermes-agent: `plugins/image_gen/deepinfra`):
//! the OpenAI-compatible `POST <base>/images/generations` with `{model, prompt, size, n: 1}`
//! (Hermes sends it through the OpenAI SDK), text-to-image only.
//!
//! Model: `DEEPINFRA_IMAGE_MODEL`, else `image_gen.deepinfra.model`, else the first
//! `image-gen`-tagged model of DeepInfra's live catalog
//! (`GET <DEEPINFRA_BASE_URL or default>/models?filter=true&sort_by=hermes`,
//! `hermes_cli/models.py: _fetch_deepinfra_models_by_tag`). Key `DEEPINFRA_API_KEY`; base URL
//! `image_gen.deepinfra.base_url`, else `DEEPINFRA_BASE_URL`, else
//! `https://api.deepinfra.com/v1/openai` (`deepinfra_base_url`). Errors are worded as the
//! OpenAI SDK's `str(exc)` behind Hermes' `DeepInfra image generation failed: `.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::{Outcome, Request};
use crate::hermes::Context;
use crate::hermes::envvars;
use crate::net::HttpClient;
use crate::net::vendor::{self as http, ApiRequest, Failure};
use crate::toolsets::image_gen::answer::ImageItem;
use crate::toolsets::image_gen::catalog::aspect_index;
use crate::toolsets::image_gen::error::GenError;
use crate::toolsets::image_gen::save::Generated;

pub(crate) const DISPLAY: &str = "DeepInfra";
const DEFAULT_BASE_URL: &str = "https://api.deepinfra.com/v1/openai";
/// `_SIZES` for landscape, square, portrait.
const SIZES: [&str; 3] = ["1536x1024", "1024x1024", "1024x1536"];
/// `_DEEPINFRA_SURFACE_TAGS`.
const SURFACE_TAGS: [&str; 6] = ["chat", "embed", "image-gen", "tts", "stt", "video-gen"];
/// `_DEEPINFRA_CATALOG_NEG_TTL`: how long a failed catalog fetch is not retried.
const CATALOG_NEG_TTL: Duration = Duration::from_secs(60);
/// The OpenAI SDK's default request timeout.
const SDK_TIMEOUT: Duration = Duration::from_secs(600);
/// `_HERMES_USER_AGENT` of the catalog request.
const HERMES_VERSION: &str = "0.19.0";

/// `DEEPINFRA_IMAGE_MODEL`, else `image_gen.deepinfra.model` (both trimmed), when set.
pub(crate) fn configured_model(ctx: &Context) -> Option<String> {
    ctx.env
        .get(envvars::DEEPINFRA_IMAGE_MODEL)
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| {
            ctx.sections()
                .image_gen
                .provider("deepinfra")
                .model
                .clone()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        })
}

fn base_url(ctx: &Context) -> String {
    ctx.sections()
        .image_gen
        .provider("deepinfra")
        .base_url
        .clone()
        .filter(|s| !s.is_empty())
        .or_else(|| ctx.env.get(envvars::DEEPINFRA_BASE_URL))
        .unwrap_or_else(|| DEFAULT_BASE_URL.to_string())
        .trim()
        .trim_end_matches('/')
        .to_string()
}

/// `_deepinfra_catalog_neg_cache` / `_deepinfra_catalog_cache`, keyed by catalog base URL.
enum Cached {
    Data(Vec<Value>),
    Failed(Instant),
}

static CATALOG: Mutex<Option<HashMap<String, Cached>>> = Mutex::new(None);

/// The catalog's `data` list (`_fetch_deepinfra_catalog`), cached per process like Hermes.
async fn catalog(ctx: &Context, http: &HttpClient, key: &str) -> Option<Vec<Value>> {
    // The catalog reads only the env override, not the config section.
    let base = ctx
        .env
        .get(envvars::DEEPINFRA_BASE_URL)
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| DEFAULT_BASE_URL.to_string());
    let base = base.trim_end_matches('/').to_string();
    if let Ok(g) = CATALOG.lock() {
        match g.as_ref().and_then(|m| m.get(&base)) {
            Some(Cached::Data(d)) => return Some(d.clone()),
            Some(Cached::Failed(t)) if t.elapsed() < CATALOG_NEG_TTL => return None,
            _ => {}
        }
    }
    let url = format!("{base}/models?filter=true&sort_by=hermes");
    let req = ApiRequest::new("deepinfra", reqwest::Method::GET, &url)
        .bearer(key)
        .header("User-Agent", format!("hermes-cli/{HERMES_VERSION}"))
        .timeout(Duration::from_secs(5));
    let data = http::exchange(http, req)
        .await
        .ok()
        .and_then(|v| v.get("data").and_then(Value::as_array).cloned());
    if let Ok(mut g) = CATALOG.lock() {
        let entry = match &data {
            Some(d) => Cached::Data(d.clone()),
            None => Cached::Failed(Instant::now()),
        };
        g.get_or_insert_with(HashMap::new).insert(base, entry);
    }
    data
}

/// `_fetch_deepinfra_models_by_tag("image-gen")`: the first matching id.
fn first_image_model(data: &[Value]) -> Option<String> {
    data.iter().find_map(|item| {
        let id = item
            .get("id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())?;
        let meta = item.get("metadata").filter(|m| !m.is_null())?;
        let tags: Vec<&str> = meta
            .get("tags")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let surfaced = tags.iter().any(|t| SURFACE_TAGS.contains(t));
        (surfaced && tags.contains(&"image-gen")).then(|| id.to_string())
    })
}

/// Python's `repr()` of a parsed JSON body, as the OpenAI SDK puts it in its errors.
fn py_value_repr(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(b) => if *b { "True" } else { "False" }.into(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => crate::pycompat::py_repr(s),
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(py_value_repr).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(o) => format!(
            "{{{}}}",
            o.iter()
                .map(|(k, v)| format!("{}: {}", crate::pycompat::py_repr(k), py_value_repr(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The OpenAI SDK's `APIStatusError` text: `Error code: <status> - <body>`.
fn sdk_status_error(status: u16, body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    match serde_json::from_str::<Value>(text) {
        Ok(v) => format!("Error code: {status} - {}", py_value_repr(&v)),
        Err(_) if !text.is_empty() => text.to_string(),
        Err(_) => format!("Error code: {status}"),
    }
}

pub(crate) async fn deepinfra_generate(r: Request<'_>) -> Outcome {
    let Request { ctx, http, .. } = r;
    let (prompt, aspect, sources) = (r.prompt, r.aspect, r.sources);
    if !sources.is_empty() {
        return Err(GenError::typed(
            "modality_unsupported",
            "DeepInfra image generation is text-to-image only in this backend; image_url and reference_image_urls are unsupported.",
        ));
    }
    let Some(key) = ctx
        .env
        .get(envvars::DEEPINFRA_API_KEY)
        .map(|k| k.trim().to_string())
        .filter(|k| !k.is_empty())
    else {
        return Err(GenError::AuthRequired(
            "DEEPINFRA_API_KEY not set. Run `hermes tools` → Image Generation → DeepInfra to configure, or `hermes setup` to add the key.".into(),
        ));
    };
    // Hermes fetches the catalog even when a model is pinned.
    let data = catalog(ctx, http, &key).await.unwrap_or_default();
    let Some(model) = configured_model(ctx).or_else(|| first_image_model(&data)) else {
        return Err(GenError::typed(
            "no_model_available",
            "No DeepInfra image-gen model available. Pin one in config.yaml under image_gen.deepinfra.model, set DEEPINFRA_IMAGE_MODEL, or check connectivity to api.deepinfra.com so the live catalog can be fetched.",
        ));
    };
    let size = SIZES[aspect_index(aspect)];
    let url = format!("{}/images/generations", base_url(ctx));
    let req = ApiRequest::new("deepinfra", reqwest::Method::POST, &url)
        .bearer(key)
        .json(json!({"model": model, "prompt": prompt, "size": size, "n": 1}))
        .timeout(SDK_TIMEOUT);
    let answer = http::exchange(http, req).await.map_err(|f| {
        GenError::Api(format!(
            "DeepInfra image generation failed: {}",
            sdk_error(f)
        ))
        .with_model(&model)
    })?;
    let mut extra = Map::new();
    extra.insert("size".into(), json!(size));
    let generated = read_answer(&answer, extra, &model).map_err(|e| e.with_model(&model))?;
    Ok((generated, "text"))
}

/// A failed call as the OpenAI SDK's `str(exc)` words it.
fn sdk_error(f: Failure) -> String {
    match f {
        Failure::Timeout(_) => "Request timed out.".into(),
        Failure::RateLimited(_) => "Error code: 429".into(),
        Failure::Connection(e) => {
            tracing::debug!("DeepInfra image request failed: {e}");
            "Connection error.".into()
        }
        Failure::Status(r) => sdk_status_error(r.status, &r.body),
        Failure::NotJson(e) => e.to_string(),
    }
}

/// The image in DeepInfra's Images answer: `data[0]`'s `b64_json`, else its `url`.
fn read_answer(
    answer: &Value,
    extra: Map<String, Value>,
    model: &str,
) -> Result<Generated, GenError> {
    let Some(item) = ImageItem::first(answer) else {
        return Err(GenError::EmptyResponse(
            "DeepInfra returned no image data".into(),
        ));
    };
    let Some(found) = item.image() else {
        return Err(GenError::EmptyResponse(
            "DeepInfra response contained neither b64_json nor URL".into(),
        ));
    };
    found.into_generated(extra, Some(model.to_string()), |e| {
        GenError::Io(format!("Could not save image to cache: {e}"))
    })
}

/// The saved file's prefix: `deepinfra_<model without vendor/, ':' as '_'>`.
pub(crate) fn file_prefix(model: &str) -> String {
    let short = model.split_once('/').map_or(model, |(_, m)| m);
    format!("deepinfra_{}", short.replace(':', "_"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_filter_and_errors_like_hermes() {
        let data = vec![
            json!({"id": "a/chat", "metadata": {"tags": ["chat"]}}),
            json!({"id": "stub/img", "metadata": null}),
            json!({"id": "untagged/img", "metadata": {}}),
            json!({"id": "black-forest-labs/FLUX-1-dev", "metadata": {"tags": ["image-gen"]}}),
        ];
        assert_eq!(
            first_image_model(&data).as_deref(),
            Some("black-forest-labs/FLUX-1-dev")
        );
        assert_eq!(
            sdk_status_error(
                401,
                br#"{"detail": {"error": "bad key", "n": 1.5, "ok": true}}"#
            ),
            "Error code: 401 - {'detail': {'error': 'bad key', 'n': 1.5, 'ok': True}}"
        );
        assert_eq!(sdk_status_error(502, b""), "Error code: 502");
        assert_eq!(file_prefix("stabilityai/sdxl:v1"), "deepinfra_sdxl_v1");
    }
}
