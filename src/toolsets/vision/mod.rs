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
//!
//! Layout: [`schema`] (the tool's declaration), [`args`] (its arguments),
//! [`tool`] (one call), [`source`] (loading the image).

mod args;
mod schema;
pub(crate) mod source;
mod tool;

use serde_json::Value;

use crate::hermes::Context;
use crate::server::toolset::BoxFuture;
use crate::server::{
    Availability, ProviderChoice, ToolCall, ToolDef, ToolEntry, ToolOutput, Toolset,
};

use crate::llm::Mode;
use crate::llm::route::resolve::{self, Task};
use crate::llm::task::vision::VisionClient;
use args::AnalyzeArgs;

#[derive(Default)]
pub struct VisionToolset {
    client: VisionClient,
}

impl Toolset for VisionToolset {
    fn name(&self) -> &'static str {
        "vision"
    }

    fn defs(&self) -> &'static [ToolDef] {
        schema::DEFS
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
            tool::vision_analyze(&self.client, ctx, &args.image_url, &args.question).await
        })
    }
}
