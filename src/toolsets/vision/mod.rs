//! The `vision` toolset: `vision_analyze` (Hermes' `tools/vision_tools.py`),
//! and [`VisionClient`], the image pipeline `browser_vision` uses too.
//!
//! * Native mode (default, no auxiliary vision model configured): the image is
//!   returned as MCP image content with a short text naming the question;
//!   Codex's model looks at it itself (Hermes' "native fast path", decided here
//!   by configuration instead of by Hermes' main model).
//! * Auxiliary mode (`auxiliary.vision`, `AUXILIARY_VISION_MODEL`, or a
//!   main provider Hermes would ask): one call with the image as a data URL
//!   and Hermes' prompt, on the endpoint's wire (OpenAI chat completions,
//!   Anthropic Messages, Gemini generateContent); result
//!   `{"success": true, "analysis": ...}`.

pub(crate) mod anthropic;
pub(crate) mod apikey;
pub(crate) mod auxiliary;
pub(crate) mod capability;
pub(crate) mod codexwire;
pub(crate) mod gemini;
pub(crate) mod post;
pub(crate) mod prep;
#[doc(hidden)] // public for the test that checks the table against Hermes' registry
pub mod providers;
pub(crate) mod resolve;
pub(crate) mod source;
pub(crate) mod textaux;

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::Semaphore;

use crate::hermes::{Context, envvars};
use crate::net::{HttpClient, Limits, Policy, SystemLookup};
use crate::server::toolset::BoxFuture;
use crate::server::{
    Availability, Hints, ProviderChoice, ToolCall, ToolDef, ToolEntry, ToolOutput, Toolset,
};

pub(crate) use auxiliary::{AuxConfig, Mode};
pub(crate) use prep::{Budget, PrepError, Prepared};
pub(crate) use source::SourceError;

const VISION_ANALYZE_DESCRIPTION: &str = "Load an image into the conversation so you can see it. Accepts a URL, local file path, or data URL. When your active model has native vision, the image is attached to your context directly and you read the pixels yourself on the next turn — call this any time the user references an image (filepath in their message, URL in tool output, screenshot from the browser, etc.). For non-vision models, falls back to an auxiliary vision model that returns a text description.";

/// Hermes' `VISION_ANALYZE_SCHEMA` parameters (hermes-agent: tools/vision_tools.py).
fn vision_analyze_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "image_url": {
                "type": "string",
                "description": "Image URL (http/https), local file path, or data: URL to load."
            },
            "question": {
                "type": "string",
                "description": "Your specific question or request about the image. Optional context the model uses on the next turn after seeing the image."
            }
        },
        "required": ["image_url", "question"]
    })
}

/// Hermes' native fast-path text part.
pub(crate) fn native_text(question: &str) -> String {
    let mut t = String::from(
        "Image loaded into your context — you can see it natively now. Use your built-in vision to answer the user.",
    );
    if !question.trim().is_empty() {
        t.push_str("\n\nQuestion: ");
        t.push_str(question.trim());
    }
    t
}

/// Why an image could not be loaded or analyzed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum VisionError {
    #[error(transparent)]
    Source(#[from] SourceError),
    #[error(transparent)]
    Prep(#[from] PrepError),
    #[error("{0}")]
    NotConfigured(String),
    #[error(transparent)]
    Http(#[from] ClientError),
    #[error(transparent)]
    Call(#[from] auxiliary::CallError),
}

pub(crate) use crate::net::BuildError as ClientError;

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
        .or_else(
            || match ctx.config().get("auxiliary.vision.max_concurrency") {
                Some(Value::Number(n)) => n.as_i64().filter(|n| *n >= 1),
                Some(Value::String(s)) => parse(s),
                _ => None,
            },
        )
        .map(|n| n.min(1024) as usize)
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
}

/// Validate/convert/downscale off the async threads, at most `slots` at once.
async fn prepare(slots: &Semaphore, data: Vec<u8>, budget: Budget) -> Result<Prepared, PrepError> {
    let _slot = slots.acquire().await.expect("semaphore never closed");
    tokio::task::spawn_blocking(move || prep::prepare(&data, budget))
        .await
        .unwrap_or_else(|e| Err(PrepError::Encode(format!("image worker failed: {e}"))))
}

async fn shrink(slots: &Semaphore, p: &Prepared) -> Option<Result<Prepared, PrepError>> {
    let _slot = slots.acquire().await.expect("semaphore never closed");
    let p = p.clone();
    tokio::task::spawn_blocking(move || p.shrink())
        .await
        .unwrap_or_else(|e| Some(Err(PrepError::Encode(format!("image worker failed: {e}")))))
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

    fn slots(&self, ctx: &Context) -> &Semaphore {
        self.slots
            .get_or_init(|| Semaphore::new(max_concurrency(ctx)))
    }

    /// The guarded client: image downloads go through `fetch` (SSRF checks on
    /// every hop); the configured vision endpoint through `send_api`, which
    /// trusts configured endpoints (a local vLLM/Ollama is fine) except cloud
    /// metadata.
    pub(crate) fn http(&self, ctx: &Context) -> Result<Arc<HttpClient>, ClientError> {
        self.http.get_or_build(|| {
            let dl = auxiliary::download_timeout(ctx);
            let api = match resolve::mode(ctx) {
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

    /// Load `image_url` (http(s), `file://`, local path or `data:`) as raw bytes.
    pub(crate) async fn load(
        &self,
        ctx: &Context,
        image_url: &str,
    ) -> Result<source::Loaded, VisionError> {
        let lower = image_url.trim().to_ascii_lowercase();
        let http = if lower.starts_with("http://") || lower.starts_with("https://") {
            Some(self.http(ctx)?)
        } else {
            None
        };
        let dl = http.as_deref().map(|h| source::Download {
            http: h,
            timeout: auxiliary::download_timeout(ctx),
            attempts: 3,
            backoff: Duration::from_secs(2),
        });
        Ok(source::load(image_url, dl).await?)
    }

    /// Load and prepare an image source for a model.
    pub(crate) async fn load_prepared(
        &self,
        ctx: &Context,
        image_url: &str,
    ) -> Result<Prepared, VisionError> {
        let loaded = self.load(ctx, image_url).await?;
        let ctype = loaded.content_type.clone();
        prepare(self.slots(ctx), loaded.data, Budget::default())
            .await
            .map_err(|e| match (e, ctype) {
                (PrepError::NotAnImage(_), Some(ct)) => {
                    VisionError::Prep(PrepError::NotAnImage(format!(" (the server sent {ct})")))
                }
                (e, _) => VisionError::Prep(e),
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
        match resolve::mode(ctx) {
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
                let Some(model) = auxiliary::catalog_vision_model(http, base, key).await else {
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
        let mut body = auxiliary::request_body(cfg, prompt, &prepared.data_url());
        fix_temperature(&mut body);
        let answer = match send(http, cfg, &body).await {
            Ok(a) => a,
            Err(e) if auxiliary::is_size_error(&e.message) => {
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
                body = auxiliary::request_body(cfg, prompt, &smaller.data_url());
                fix_temperature(&mut body);
                send(http, cfg, &body).await?
            }
            Err(e) => return Err(e.into()),
        };
        let answer = if answer.is_empty() {
            tracing::warn!("vision model returned empty content, retrying once");
            send(http, cfg, &body).await?
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

/// Hermes' per-model temperature rules (agent/auxiliary_client.py
/// `_build_call_kwargs`): none for Kimi models (the server picks), 0.5 for
/// Arcee's trinity-large-thinking, none for Claude models that reject
/// sampling parameters.
pub(super) fn fix_temperature(body: &mut serde_json::Value) {
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let bare = model.trim().to_lowercase();
    let bare = bare.rsplit('/').next().unwrap_or_default();
    let Some(obj) = body.as_object_mut() else {
        return;
    };
    if bare.starts_with("kimi-") || bare == "kimi" || anthropic::forbids_sampling(&model) {
        obj.remove("temperature");
    } else if bare == "trinity-large-thinking" {
        obj.insert("temperature".into(), json!(0.5));
    }
}

/// One call on the endpoint's wire (OpenAI chat completions, Anthropic
/// Messages or Gemini generateContent); the answer text.
pub(super) async fn send(
    http: &HttpClient,
    cfg: &AuxConfig,
    body: &Value,
) -> Result<String, auxiliary::CallError> {
    match cfg.wire {
        providers::Wire::OpenAi => auxiliary::chat(http, cfg, body).await,
        providers::Wire::Anthropic(auth) => anthropic::chat(http, cfg, auth, body).await,
        providers::Wire::Gemini => gemini::chat(http, cfg, body).await,
        providers::Wire::CodexResponses => codexwire::chat(http, cfg, body).await,
    }
}

/// The result for a native-mode analysis: Hermes' text plus the image.
pub(crate) fn native_output(prepared: &Prepared, question: &str) -> ToolOutput {
    let mut text = native_text(question);
    text.push_str(&format!("\n\n(Image: {}.)", prepared.describe()));
    ToolOutput::text(text).with_image(prepared.base64(), prepared.mime)
}

/// `vision_analyze`'s full behaviour for an image source.
pub(crate) async fn vision_analyze(
    client: &VisionClient,
    ctx: &Context,
    image_url: &str,
    question: &str,
) -> ToolOutput {
    match resolve::mode(ctx) {
        Mode::Native => match client.load_prepared(ctx, image_url).await {
            Ok(p) => native_output(&p, question),
            // Hermes' `tool_error(str(exc), success=False)`.
            Err(e) => ToolOutput::error_json(json!({"error": e.to_string(), "success": false})),
        },
        Mode::Misconfigured(why) => ToolOutput::error_json(json!({"error": why, "success": false})),
        Mode::Auxiliary(cfg) => {
            let prompt = auxiliary::analysis_prompt(question);
            let res = match client.load_prepared(ctx, image_url).await {
                Ok(p) => client.analyze_prepared(ctx, p, &prompt).await,
                Err(e) => Err(e),
            };
            match res {
                Ok(Analysis::Text(analysis)) => {
                    ToolOutput::json(json!({"success": true, "analysis": analysis}))
                }
                Ok(Analysis::Native(p)) => native_output(&p, question),
                Err(e) => {
                    let msg = e.to_string();
                    ToolOutput::error_json(json!({
                        "success": false,
                        "error": format!("Error analyzing image: {msg}"),
                        "analysis": auxiliary::friendly_hint(&msg, &cfg.model),
                    }))
                }
            }
        }
    }
}

#[derive(Default)]
pub struct VisionToolset {
    client: VisionClient,
}

/// `vision_analyze`'s arguments (after schema validation; both required).
#[derive(Debug, Default, Deserialize)]
struct AnalyzeArgs {
    #[serde(default)]
    image_url: String,
    #[serde(default)]
    question: String,
}

impl Toolset for VisionToolset {
    fn name(&self) -> &'static str {
        "vision"
    }

    fn defs(&self) -> &'static [ToolDef] {
        const DEFS: &[ToolDef] = &[ToolDef {
            name: "vision_analyze",
            description: VISION_ANALYZE_DESCRIPTION,
            schema: vision_analyze_schema,
            hints: Hints::READ_ONLY_OPEN,
        }];
        DEFS
    }

    fn resolve(&self, ctx: &Context, def: &'static ToolDef) -> ToolEntry {
        def.entry(match resolve::mode(ctx) {
            Mode::Misconfigured(why) => Availability::Unavailable(why),
            _ => Availability::Available,
        })
    }

    fn providers(&self, ctx: &Context) -> Vec<ProviderChoice> {
        let r = resolve::resolve(ctx);
        let provider = match &r.mode {
            Mode::Auxiliary(c) if c.model.is_empty() => {
                format!("{} (model from the DeepInfra catalog)", r.provider)
            }
            Mode::Auxiliary(c) => {
                let wire = match c.wire {
                    providers::Wire::OpenAi => "",
                    providers::Wire::Anthropic(_) => ", Anthropic Messages",
                    providers::Wire::Gemini => ", Gemini generateContent",
                    providers::Wire::CodexResponses => ", Codex Responses",
                };
                format!("{} ({}{wire})", r.provider, c.model)
            }
            Mode::Misconfigured(_) => "none".into(),
            Mode::Native => r.provider.clone(),
        };
        let why = match &r.mode {
            Mode::Misconfigured(m) => m.clone(),
            _ => r.why,
        };
        vec![ProviderChoice {
            job: "vision_analyze",
            provider,
            why,
        }]
    }

    fn call<'a>(&'a self, ctx: &'a Context, call: ToolCall) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            // One tool: the server only routes `vision_analyze` here.
            let args: AnalyzeArgs =
                serde_json::from_value(Value::Object(call.args)).unwrap_or_default();
            vision_analyze(&self.client, ctx, &args.image_url, &args.question).await
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
}
