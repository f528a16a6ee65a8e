//! OpenRouter image models (`image_gen.provider: openrouter`, hermes-agent:
//! `plugins/image_gen/openrouter`): `POST <base>/chat/completions` with
//! `modalities: ["image", "text"]`, reference images as `image_url` parts, the image read
//! from `choices[].message.images[].image_url.url` (a data URI or a URL).
//!
//! Key `OPENROUTER_API_KEY`; base URL `image_gen.openrouter.base_url`, else
//! `OPENROUTER_BASE_URL`, else `https://openrouter.ai/api/v1`. Model: `OPENROUTER_IMAGE_MODEL`,
//! `image_gen.openrouter.model`, `image_gen.model`, else the chain
//! `openai/gpt-5.4-image-2` → `google/gemini-3-pro-image` (the fallback is tried only for the
//! default chain, when the first model is access-gated, times out or returns no image).
//! Not modelled: Hermes' runtime-provider key pool; the `nous` twin of this plugin.

use std::time::Duration;

use base64::Engine as _;
use serde_json::{Map, Value, json};

use super::plugin_http::{PluginPost, post_json};
use super::{Outcome, Request};
use crate::hermes::Context;
use crate::hermes::envvars;
use crate::net::HttpClient;
use crate::toolsets::image_gen::answer::Found;
use crate::toolsets::image_gen::error::GenError;
use crate::toolsets::image_gen::save::Generated;
use crate::toolsets::image_gen::source::read_local_image;

pub(crate) const DISPLAY: &str = "OpenRouter";
pub(crate) const DEFAULT_MODEL: &str = "openai/gpt-5.4-image-2";
const FALLBACK_MODEL: &str = "google/gemini-3-pro-image";
pub(crate) const MAX_REFERENCE_IMAGES: usize = 3;
const DEFAULT_BASE_URL: &str = "https://openrouter.ai/api/v1";
const ASPECTS: [&str; 3] = ["16:9", "1:1", "9:16"];
const TIMEOUT_SECS: u64 = 300;

/// `_resolve_model_chain`.
pub(crate) fn model_chain(ctx: &Context) -> Vec<String> {
    let pick = ctx
        .env
        .get(envvars::OPENROUTER_IMAGE_MODEL)
        .or_else(|| {
            ctx.sections()
                .image_gen
                .provider("openrouter")
                .model
                .clone()
        })
        .or_else(|| ctx.sections().image_gen.model.clone())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty());
    match pick {
        Some(m) => vec![m],
        None => vec![DEFAULT_MODEL.into(), FALLBACK_MODEL.into()],
    }
}

fn base_url(ctx: &Context) -> String {
    ctx.sections()
        .image_gen
        .provider("openrouter")
        .base_url
        .clone()
        .or_else(|| ctx.env.get(envvars::OPENROUTER_BASE_URL))
        .map(|s| s.trim().trim_end_matches('/').to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| DEFAULT_BASE_URL.to_string())
}

/// `_to_image_url_part`: URLs pass through; a local image is inlined (an unreadable one is
/// skipped, as Hermes does; only real images are read).
fn image_part(src: &str) -> Option<String> {
    let s = src.trim();
    if s.is_empty() {
        return None;
    }
    if s.starts_with("http://") || s.starts_with("https://") || s.starts_with("data:") {
        return Some(s.to_string());
    }
    match read_local_image(s) {
        Ok((raw, mime)) => Some(format!(
            "data:{mime};base64,{}",
            base64::engine::general_purpose::STANDARD.encode(raw)
        )),
        Err(e) => {
            tracing::debug!("could not read reference image: {e}");
            None
        }
    }
}

/// `_access_error_hint`.
fn access_hint(model: &str, status: u16, msg: &str) -> Option<String> {
    if !model.starts_with("openai/") {
        return None;
    }
    let low = msg.to_lowercase();
    let gated = matches!(status, 402..=404)
        || [
            "no endpoints",
            "no allowed",
            "not a valid model",
            "data policy",
        ]
        .iter()
        .any(|s| low.contains(s));
    gated.then(|| format!("{DISPLAY} can't reach image model '{model}' ({status}) — enable OpenAI image access in your {DISPLAY} account, or set OPENROUTER_IMAGE_MODEL={FALLBACK_MODEL}."))
}

/// `_extract_images`.
fn extract_images(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for c in v
        .get("choices")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let images = c
            .get("message")
            .and_then(|m| m.get("images"))
            .and_then(Value::as_array);
        for i in images.into_iter().flatten() {
            if let Some(u) = i
                .get("image_url")
                .and_then(|u| u.get("url"))
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|u| !u.is_empty())
            {
                out.push(u.to_string());
            }
        }
    }
    out
}

pub(crate) async fn openrouter_generate(r: Request<'_>) -> Outcome {
    let Request { ctx, http, .. } = r;
    let (prompt, aspect, sources) = (r.prompt, r.aspect, r.sources);
    let Some(key) = ctx.env.get(envvars::OPENROUTER_API_KEY) else {
        return Err(GenError::typed(
            "missing_api_key",
            format!(
                "No {DISPLAY} credentials found. Configure {DISPLAY} in `hermes tools` → Image Generation."
            ),
        ));
    };
    let chain = model_chain(ctx);
    let mut content = vec![json!({"type": "text", "text": prompt})];
    for s in sources.iter().take(MAX_REFERENCE_IMAGES) {
        if let Some(u) = image_part(s) {
            content.push(json!({"type": "image_url", "image_url": {"url": u}}));
        }
    }
    let ask = Ask {
        url: format!("{}/chat/completions", base_url(ctx)),
        key,
        content,
        aspect: ASPECTS[crate::toolsets::image_gen::catalog::aspect_index(aspect)],
    };
    for (i, model) in chain.iter().enumerate() {
        match ask.model(http, model).await {
            // Hermes' `success_response` default: this plugin never passes a modality.
            Ok(generated) => return Ok((generated, "text")),
            Err((_, true)) if i + 1 < chain.len() => continue,
            Err((e, _)) => return Err(e),
        }
    }
    Err(GenError::Api(format!(
        "{DISPLAY} image generation failed after trying all candidate models."
    )))
}

/// What every model of the chain is asked.
struct Ask {
    url: String,
    key: String,
    /// The user message: the prompt, then the reference images.
    content: Vec<Value>,
    aspect: &'static str,
}

impl Ask {
    /// One model's image, or its error and whether the next model may be tried (the model
    /// is access-gated, timed out, or returned no image).
    async fn model(&self, http: &HttpClient, model: &str) -> Result<Generated, (GenError, bool)> {
        let post = PluginPost {
            provider: "openrouter",
            display: DISPLAY,
            url: &self.url,
            key: self.key.clone(),
            headers: vec![
                (
                    "HTTP-Referer",
                    "https://github.com/NousResearch/hermes-agent".into(),
                ),
                ("X-Title", "Hermes Agent".into()),
            ],
            body: json!({
                "model": model, "modalities": ["image", "text"],
                "messages": [{"role": "user", "content": self.content}],
                "image_config": {"aspect_ratio": self.aspect},
            }),
            timeout: Duration::from_secs(TIMEOUT_SECS),
        };
        let mut gated = false;
        let answer = post_json(http, post, |status, msg| {
            match access_hint(model, status, &msg) {
                Some(h) => {
                    gated = true;
                    GenError::typed("model_access", h)
                }
                None => GenError::Api(format!(
                    "{DISPLAY} image generation failed ({status}): {msg}"
                )),
            }
        })
        .await
        .map_err(|e| {
            let timed_out = matches!(
                e,
                GenError::Typed {
                    kind: "timeout",
                    ..
                }
            );
            (e, timed_out || gated)
        })?;
        let Some(first) = extract_images(&answer).into_iter().next() else {
            return Err((
                GenError::EmptyResponse(format!(
                    "{DISPLAY} returned no image. Ensure the model '{model}' supports image output."
                )),
                true,
            ));
        };
        let found = match first.strip_prefix("data:") {
            Some(rest) => Found::Base64(rest.split_once(',').map(|(_, d)| d).unwrap_or("").into()),
            None => Found::Url(first),
        };
        found
            .into_generated(Map::new(), Some(model.to_string()), |e| {
                GenError::Io(format!("Could not save generated image: {e}"))
            })
            .map_err(|e| (e, false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hint_only_for_gated_openai_models() {
        assert!(access_hint("openai/gpt-5.4-image-2", 403, "").is_some());
        assert!(access_hint("openai/x", 400, "No endpoints found").is_some());
        assert!(access_hint("google/gemini-3-pro-image", 403, "").is_none());
        assert!(access_hint("openai/x", 500, "boom").is_none());
    }
}
