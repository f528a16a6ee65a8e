//! Asking the auxiliary vision model about an image: [`VisionClient`] prepares
//! the pixels (bounded CPU work) and sends them on the resolved provider's wire,
//! with Hermes' retries (hermes-agent: tools/vision_tools.py
//! `_analyze_image_with_retries`), as the canonical [`Request`] vision builds
//! ([`request`]); Hermes' prompt, download timeout and error hints.
//! `vision_analyze` and `browser_vision` share it.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::Semaphore;

use crate::hermes::{Context, envvars};
use crate::image::prep::{self, Budget, PrepError, Prepared};
use crate::llm::endpoint::{AuxConfig, Mode};
use crate::llm::request::{self, Request, Turn};
use crate::llm::route::{self, catalog_vision_model};
use crate::llm::wire::{CallError, send};
use crate::net::{HttpClient, Limits, Policy, SystemLookup};

pub(crate) use crate::net::BuildError as ClientError;

/// Why an image could not be loaded or analyzed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum VisionError {
    #[error(transparent)]
    Prep(#[from] PrepError),
    #[error("{0}")]
    NotConfigured(String),
    #[error(transparent)]
    Http(#[from] ClientError),
    #[error(transparent)]
    Call(#[from] CallError),
}

/// What an analysis produced.
#[derive(Debug)]
pub(crate) enum Analysis {
    /// Native mode: hand these pixels to Codex's model.
    Native(Prepared),
    /// Auxiliary mode: the vision model's answer (Hermes' fallback text when
    /// it answered nothing twice).
    Text(String),
}

/// Encode/resize bursts run at most this many at once (Hermes'
/// `_vision_cpu_executor`, sized to the usable cores).
/// How many image decode/resize jobs may run at once (hermes-agent:
/// tools/vision_tools.py `_resolve_vision_cpu_workers`):
/// `HERMES_VISION_MAX_CONCURRENCY`, else `auxiliary.vision.max_concurrency`,
/// else the usable cores; a value below 1 (or unparsable) falls through to
/// the next source. Like Hermes, only the CPU burst is bounded: the model
/// calls themselves stay fully concurrent.
pub(crate) fn max_concurrency(ctx: &Context) -> usize {
    let parse = |s: &str| s.trim().parse::<i64>().ok().filter(|n| *n >= 1);
    ctx.env
        .get(envvars::HERMES_VISION_MAX_CONCURRENCY)
        .and_then(|v| parse(&v))
        .or(ctx.sections().auxiliary.task("vision").max_concurrency)
        .map(|n| n.min(1024) as usize)
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
}

/// Validate/convert/downscale off the async threads, at most `slots` at once.
pub(crate) async fn prepare(
    slots: &Semaphore,
    data: Vec<u8>,
    budget: Budget,
) -> Result<Prepared, PrepError> {
    let _slot = slots.acquire().await.expect("semaphore never closed");
    tokio::task::spawn_blocking(move || prep::prepare(&data, budget))
        .await
        .unwrap_or_else(|e| Err(PrepError::Worker(e)))
}

async fn shrink(slots: &Semaphore, p: &Prepared) -> Option<Result<Prepared, PrepError>> {
    let _slot = slots.acquire().await.expect("semaphore never closed");
    let p = p.clone();
    tokio::task::spawn_blocking(move || p.shrink())
        .await
        .unwrap_or_else(|e| Some(Err(PrepError::Worker(e))))
}

/// Hermes' `full_prompt` for `vision_analyze`.
pub(crate) fn analysis_prompt(question: &str) -> String {
    format!(
        "Fully describe and explain everything about this image, then answer the following question:\n\n{question}"
    )
}

/// `auxiliary.vision.download_timeout` (Hermes reads `HERMES_VISION_DOWNLOAD_TIMEOUT`
/// first, then the config key; default 30 s).
pub(crate) fn download_timeout(ctx: &Context) -> Duration {
    let secs = ctx
        .env
        .get(envvars::HERMES_VISION_DOWNLOAD_TIMEOUT)
        .and_then(|v| v.trim().parse::<f64>().ok())
        .or_else(|| ctx.sections().auxiliary.task("vision").download_timeout)
        .filter(|s| s.is_finite() && *s > 0.0)
        .unwrap_or(30.0);
    Duration::from_secs_f64(secs.min(3600.0))
}

/// Hermes' `_is_image_size_error`.
pub(crate) fn is_size_error(message: &str) -> bool {
    let m = message.to_lowercase();
    [
        "too large",
        "payload",
        "413",
        "content_too_large",
        "request_too_large",
        "image_url",
        "invalid_request",
        "exceeds",
        "size limit",
    ]
    .iter()
    .any(|h| m.contains(h))
}

/// Hermes' friendly `analysis` text for a failed auxiliary analysis.
pub(crate) fn friendly_hint(error: &str, model: &str) -> String {
    let m = error.to_lowercase();
    let any = |hs: &[&str]| hs.iter().any(|h| m.contains(h));
    if any(&[
        "402",
        "insufficient",
        "payment required",
        "credits",
        "billing",
    ]) {
        format!(
            "Insufficient credits or payment required. Please top up your API provider account and try again. Error: {error}"
        )
    } else if any(&[
        "does not support",
        "not support image",
        "content_policy",
        "multimodal",
        "unrecognized request argument",
        "image input",
    ]) {
        format!(
            "{model} does not support vision or our request was not accepted by the server. Error: {error}"
        )
    } else if any(&["invalid_request", "image_url"]) {
        format!(
            "The vision API rejected the image. This can happen when the image is in an unsupported format, corrupted, or still too large after auto-resize. Try a smaller JPEG/PNG and retry. Error: {error}"
        )
    } else {
        format!(
            "There was a problem with the request and the image could not be analyzed. Error: {error}"
        )
    }
}

/// The canonical request Hermes' `call_llm(task="vision")` makes
/// (hermes-agent: agent/auxiliary_client.py): one user message with the
/// prompt and the image (a data URL), `auxiliary.vision.temperature` and
/// `max_tokens` (sent on every wire). Hermes merges `extra_body` before its
/// per-model fixes, so a `model` or `temperature` there is the request's own.
pub(crate) fn request(cfg: &AuxConfig, prompt: &str, image_data_url: String) -> Request {
    let mut extra = cfg.extra_body.clone();
    let model = match extra.get("model") {
        Some(Value::String(m)) => {
            let m = m.clone();
            extra.shift_remove("model");
            m
        }
        _ => cfg.model.clone(),
    };
    let temperature = match extra.get("temperature").and_then(Value::as_f64) {
        Some(t) => {
            extra.shift_remove("temperature");
            t
        }
        None => cfg.temperature,
    };
    let mut req = Request {
        model,
        system: Vec::new(),
        turns: vec![Turn {
            role: "user".into(),
            text: prompt.to_string(),
        }],
        image: Some(image_data_url),
        temperature: Some(temperature),
        limits: request::Limits {
            max_tokens: Some(cfg.max_tokens),
            openai: true,
        },
        extra,
    };
    req.fix_temperature();
    req
}

/// Image loading and analysis shared by `vision_analyze` and `browser_vision`.
/// Holds the HTTP client (built on first use from the context's URL policy).
#[derive(Default)]
pub(crate) struct VisionClient {
    http: crate::net::LazyClient,
    /// The decode/resize bound, sized from the first context seen (Hermes
    /// sizes its executor once at import).
    slots: OnceLock<Semaphore>,
}

impl VisionClient {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    pub(crate) fn slots(&self, ctx: &Context) -> &Semaphore {
        self.slots
            .get_or_init(|| Semaphore::new(max_concurrency(ctx)))
    }

    /// The guarded client: image downloads go through `fetch` (SSRF checks on
    /// every hop); the configured vision endpoint through `send_api`, which
    /// trusts configured endpoints (a local vLLM/Ollama is fine) except cloud
    /// metadata.
    pub(crate) fn http(&self, ctx: &Context) -> Result<Arc<HttpClient>, ClientError> {
        self.http.get_or_build(|| {
            let dl = download_timeout(ctx);
            let api = match route::vision_mode(ctx) {
                Mode::Auxiliary(a) => a.timeout,
                _ => Duration::from_secs(120),
            };
            let longest = dl.max(api) + Duration::from_secs(5);
            let limits = Limits {
                connect: Duration::from_secs(10),
                read: longest,
                total: longest,
                max_bytes: prep::MAX_INGEST_BYTES,
                ..Limits::default()
            };
            HttpClient::new(Policy::from_context(ctx), Arc::new(SystemLookup), limits)
        })
    }

    /// Analyze raw image bytes (e.g. a browser screenshot) with `prompt`:
    /// native mode prepares the pixels for Codex's model; auxiliary mode asks
    /// the configured vision model.
    pub(crate) async fn analyze_bytes(
        &self,
        ctx: &Context,
        image: Vec<u8>,
        prompt: &str,
    ) -> Result<Analysis, VisionError> {
        let prepared = prepare(self.slots(ctx), image, Budget::default()).await?;
        self.analyze_prepared(ctx, prepared, prompt).await
    }

    /// Analyze an already prepared image with `prompt` (see [`Self::analyze_bytes`]).
    pub(crate) async fn analyze_prepared(
        &self,
        ctx: &Context,
        prepared: Prepared,
        prompt: &str,
    ) -> Result<Analysis, VisionError> {
        match route::vision_mode(ctx) {
            Mode::Native => Ok(Analysis::Native(prepared)),
            Mode::Misconfigured(why) => Err(VisionError::NotConfigured(why)),
            Mode::Auxiliary(cfg) => {
                let http = self.http(ctx)?;
                self.ask(ctx, &http, &cfg, prepared, prompt)
                    .await
                    .map(Analysis::Text)
            }
        }
    }

    /// The auxiliary call with Hermes' retries: on a size rejection, shrink the
    /// image and retry once; on an empty answer, ask once more.
    async fn ask(
        &self,
        ctx: &Context,
        http: &HttpClient,
        cfg: &AuxConfig,
        prepared: Prepared,
        prompt: &str,
    ) -> Result<String, VisionError> {
        let resolved;
        let cfg = match (&cfg.catalog, cfg.model.is_empty()) {
            (Some(base), true) => {
                let key = cfg.api_key.as_deref().unwrap_or_default();
                let Some(model) = catalog_vision_model(http, base, key).await else {
                    // Hermes skips DeepInfra when its catalog names no vision model.
                    return Err(VisionError::NotConfigured(format!(
                        "No LLM provider configured for task=vision provider=deepinfra. Run: hermes setup (the DeepInfra catalog at {base}/models returned no vision-capable chat model: set auxiliary.vision.model)"
                    )));
                };
                resolved = AuxConfig {
                    model,
                    ..cfg.clone()
                };
                &resolved
            }
            _ => cfg,
        };
        let mut req = request(cfg, prompt, prepared.data_url());
        let answer = match send(http, cfg, &req).await {
            Ok(a) => a,
            Err(e) if is_size_error(&e.message) => {
                let Some(smaller) = shrink(self.slots(ctx), &prepared).await else {
                    return Err(e.into());
                };
                let smaller = smaller?;
                tracing::info!(
                    "vision API rejected a {}x{} image ({}); retrying at {}x{}",
                    prepared.width,
                    prepared.height,
                    e.message,
                    smaller.width,
                    smaller.height
                );
                req = request(cfg, prompt, smaller.data_url());
                send(http, cfg, &req).await?
            }
            Err(e) => return Err(e.into()),
        };
        let answer = if answer.is_empty() {
            tracing::warn!("vision model returned empty content, retrying once");
            send(http, cfg, &req).await?
        } else {
            answer
        };
        Ok(if answer.is_empty() {
            "There was a problem with the request and the image could not be analyzed.".into()
        } else {
            answer
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::hermes::context::test_ctx as ctx;

    #[test]
    fn max_concurrency_env_then_config_then_cores() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let y = "auxiliary:\n  vision:\n    max_concurrency: 3\n";
        assert_eq!(
            max_concurrency(&ctx(y, &[("HERMES_VISION_MAX_CONCURRENCY", "2")])),
            2
        );
        assert_eq!(
            max_concurrency(&ctx(y, &[("HERMES_VISION_MAX_CONCURRENCY", "0")])),
            3
        );
        assert_eq!(
            max_concurrency(&ctx(y, &[("HERMES_VISION_MAX_CONCURRENCY", "x")])),
            3
        );
        assert_eq!(max_concurrency(&ctx("", &[])), cores);
        let c = VisionClient::new();
        let s = c.slots(&ctx("", &[("HERMES_VISION_MAX_CONCURRENCY", "2")]));
        assert_eq!(s.available_permits(), 2);
    }

    #[test]
    fn hints() {
        assert!(friendly_hint("Error code: 402 - {}", "m").starts_with("Insufficient credits"));
        assert!(
            friendly_hint("model does not support image input", "m")
                .starts_with("m does not support vision")
        );
        assert!(
            friendly_hint("Error code: 400 - invalid_request", "m")
                .starts_with("The vision API rejected")
        );
        assert!(friendly_hint("Error code: 500 - boom", "m").starts_with("There was a problem"));
        assert!(is_size_error("Error code: 413 - too big"));
    }

    #[test]
    fn vision_request_takes_extra_body_before_the_fixes() {
        use crate::llm::endpoint::aux_config;
        use crate::llm::provider::Provider;
        use crate::llm::wire::openai;
        let yaml = "auxiliary:\n  vision:\n    max_tokens: 99\n    extra_body: {temperature: 0.9, model: kimi-k2, top_k: 3}\n";
        let base = "http://127.0.0.1:9/v1".to_string();
        let c = aux_config(
            &ctx(yaml, &[]),
            "vision",
            Provider::Custom,
            base,
            None,
            "m".into(),
        )
        .unwrap();
        let body = openai::body(&request(&c, "p", "data:image/png;base64,AA".into()));
        assert_eq!(body["model"], "kimi-k2");
        assert!(body.get("temperature").is_none(), "{body}");
        assert_eq!(body["max_tokens"], 99);
        assert_eq!(body["top_k"], 3);
        assert_eq!(body["messages"][0]["content"][0]["text"], "p");
    }
}
