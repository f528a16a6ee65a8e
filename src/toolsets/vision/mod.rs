//! The `vision` toolset: `vision_analyze` (hermes-agent: `tools/vision_tools.py`)
//! and loading its image source ([`source`]: http(s) with SSRF checks and
//! retries, `file://`, local paths, `data:` URLs). The image work itself —
//! preparing pixels, choosing the vision model, asking it with Hermes'
//! retries — is the auxiliary model's ([`crate::llm::task::vision`],
//! [`crate::llm::route::resolve`]), which `browser_vision` shares.
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

pub(crate) mod source;

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::hermes::Context;
use crate::server::toolset::BoxFuture;
use crate::server::{
    Availability, Hints, ProviderChoice, ToolCall, ToolDef, ToolEntry, ToolOutput, Toolset,
};

use crate::image::prep::{Budget, PrepError, Prepared};
use crate::llm::Mode;
use crate::llm::route::resolve::{self, Task};
use crate::llm::task::vision::{self as llm_vision, Analysis, VisionClient, VisionError};
use source::SourceError;

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

/// Why an image source could not be loaded or analyzed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LoadError {
    #[error(transparent)]
    Source(#[from] SourceError),
    #[error(transparent)]
    Vision(#[from] VisionError),
}

/// Load `image_url` (http(s), `file://`, local path or `data:`) as raw bytes.
pub(crate) async fn load(
    client: &VisionClient,
    ctx: &Context,
    image_url: &str,
) -> Result<source::Loaded, LoadError> {
    let lower = image_url.trim().to_ascii_lowercase();
    let http = if lower.starts_with("http://") || lower.starts_with("https://") {
        Some(client.http(ctx).map_err(VisionError::from)?)
    } else {
        None
    };
    let dl = http.as_deref().map(|h| source::Download {
        http: h,
        timeout: llm_vision::download_timeout(ctx),
        attempts: 3,
        backoff: Duration::from_secs(2),
    });
    Ok(source::load(image_url, dl).await?)
}

/// Load and prepare an image source for a model.
pub(crate) async fn load_prepared(
    client: &VisionClient,
    ctx: &Context,
    image_url: &str,
) -> Result<Prepared, LoadError> {
    let loaded = load(client, ctx, image_url).await?;
    let ctype = loaded.content_type.clone();
    llm_vision::prepare(client.slots(ctx), loaded.data, Budget::default())
        .await
        .map_err(|e| match (e, ctype) {
            (PrepError::NotAnImage(_), Some(ct)) => LoadError::Vision(VisionError::Prep(
                PrepError::NotAnImage(format!(" (the server sent {ct})")),
            )),
            (e, _) => LoadError::Vision(VisionError::Prep(e)),
        })
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
    match resolve::vision_mode(ctx) {
        Mode::Native => match load_prepared(client, ctx, image_url).await {
            Ok(p) => native_output(&p, question),
            // Hermes' `tool_error(str(exc), success=False)`.
            Err(e) => ToolOutput::error_json(json!({"error": e.to_string(), "success": false})),
        },
        Mode::Misconfigured(why) => ToolOutput::error_json(json!({"error": why, "success": false})),
        Mode::Auxiliary(cfg) => {
            let prompt = llm_vision::analysis_prompt(question);
            let res = match load_prepared(client, ctx, image_url).await {
                Ok(p) => client
                    .analyze_prepared(ctx, p, &prompt)
                    .await
                    .map_err(LoadError::from),
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
                        "analysis": llm_vision::friendly_hint(&msg, &cfg.model),
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
        def.entry(match resolve::vision_mode(ctx) {
            Mode::Misconfigured(why) => Availability::Unavailable(why),
            _ => Availability::Available,
        })
    }

    fn providers(&self, ctx: &Context) -> Vec<ProviderChoice> {
        let r = resolve::resolve(ctx, Task::VISION);
        let provider = match &r.mode {
            Mode::Auxiliary(c) if c.model.is_empty() => {
                format!("{} (model from the DeepInfra catalog)", r.provider)
            }
            Mode::Auxiliary(c) => format!("{} ({}{})", r.provider, c.model, c.wire.shown()),
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
