//! One `image_generate` call: the arguments checked, the backend run
//! ([`super::providers`]), its image saved under `$HERMES_HOME/cache/images/`
//! ([`super::save`]) and the answer in Hermes' result shape.

use base64::Engine as _;
use serde_json::{Map, Value, json};

use super::ImageGenToolset;
use super::args::ImageArgs;
use super::backend::{Backend, SUPPORTED, backend};
use super::catalog::{
    resolve_aspect_ratio, resolve_fal_model, resolve_gpt_tier, resolve_openai_tier,
};
use super::error::GenError;
use super::providers::codex::{self, codex_generate};
use super::providers::fal::fal_generate;
use super::providers::openai::openai_generate;
use super::providers::{Outcome, Request, deepinfra, krea, managed, openrouter, xai};
use super::save::{Generated, save_generated};
use crate::hermes::Context;
use crate::net::HttpClient;
use crate::server::{ToolCall, ToolOutput};

/// Images larger than this are saved but not inlined as MCP image content.
const MAX_INLINE_BYTES: usize = 8 * 1024 * 1024;

impl ImageGenToolset {
    /// `image_generate`: check the arguments, run the backend, save its image and answer
    /// in Hermes' result shape.
    pub(super) async fn generate(&self, ctx: &Context, call: ToolCall) -> ToolOutput {
        let ImageArgs {
            prompt,
            aspect_ratio,
            sources,
        } = ImageArgs::from_args(&call.args);
        if prompt.is_empty() {
            return ToolOutput::error("prompt is required for image generation");
        }
        let (aspect, aspect_warning) = resolve_aspect_ratio(aspect_ratio.as_deref());
        if let Some(w) = &aspect_warning {
            tracing::warn!("{w}");
        }
        let http = match self.http.get(ctx) {
            Ok(h) => h,
            Err(e) => return ToolOutput::error(e.to_string()),
        };
        // Ask the portal now if only it can tell (cached), so the choice below sees it.
        crate::gateway::warm(ctx, &http).await;
        let backend = backend(ctx);
        let routed_krea = match backend {
            Backend::Krea => managed::krea_routed_model(ctx),
            _ => None,
        };
        let reply = Reply {
            model_id: model_id(ctx, &backend, routed_krea),
            backend: &backend,
            aspect: &aspect,
            prompt: &prompt,
        };
        if prompt.trim().is_empty() {
            return reply.fail(GenError::Value(
                "Prompt is required and must be a non-empty string".into(),
            ));
        }
        let job = Job {
            ctx,
            http: &http,
            call: &call,
            prompt: &prompt,
            aspect: &aspect,
            sources: &sources,
        };
        match job.run(&backend, routed_krea).await {
            Ok((generated, modality)) => {
                let warnings = aspect_warning.into_iter().collect();
                reply
                    .success(ctx, &http, generated, modality, warnings)
                    .await
            }
            Err(e) => reply.fail(e),
        }
    }
}

/// The model a result names before the backend runs (a backend may report another).
fn model_id(ctx: &Context, backend: &Backend, routed_krea: Option<&'static str>) -> String {
    match backend {
        Backend::OpenAi => resolve_openai_tier(ctx).0.to_string(),
        Backend::OpenAiCodex => resolve_gpt_tier(ctx, codex::PROVIDER).0.to_string(),
        Backend::Xai => xai::resolve_model(ctx).to_string(),
        Backend::OpenRouter => openrouter::model_chain(ctx).remove(0),
        // Hermes resolves DeepInfra's model after its checks (errors before name none).
        Backend::DeepInfra => String::new(),
        Backend::Krea => routed_krea
            .unwrap_or_else(|| krea::resolve_model(ctx))
            .to_string(),
        _ => resolve_fal_model(ctx).0.id.to_string(),
    }
}

/// One `image_generate` call, as every backend takes it.
struct Job<'a> {
    ctx: &'a Context,
    http: &'a HttpClient,
    call: &'a ToolCall,
    prompt: &'a str,
    aspect: &'a str,
    sources: &'a [String],
}

impl Job<'_> {
    /// Run the backend: its image (not yet saved) and the modality it reports. FAL and
    /// OpenAI get the prompt as given, Hermes' other plugins get it trimmed.
    async fn run(&self, backend: &Backend, routed_krea: Option<&'static str>) -> Outcome {
        let Job {
            ctx,
            http,
            call,
            prompt,
            aspect,
            sources,
        } = *self;
        let r = Request {
            ctx,
            http,
            prompt,
            aspect,
            sources,
        };
        let plugin = Request {
            prompt: prompt.trim(),
            ..r
        };
        match backend {
            Backend::Fal => fal_generate(r, call).await,
            Backend::OpenAi => openai_generate(r).await,
            Backend::OpenAiCodex => codex_generate(plugin, &call.progress).await,
            Backend::Xai => xai::xai_generate(plugin).await,
            Backend::OpenRouter => openrouter::openrouter_generate(plugin).await,
            Backend::DeepInfra => deepinfra::deepinfra_generate(plugin).await,
            Backend::Krea => krea::krea_generate(plugin, routed_krea).await,
            Backend::Unsupported(p) => Err(GenError::ProviderNotRegistered(format!(
                "image_gen.provider='{p}' is set but hermes-mcp has no such backend (supported: {SUPPORTED})."
            ))),
        }
    }
}

/// What every result names, success or failure (Hermes' `success_response` and
/// `error_response` fields).
struct Reply<'a> {
    backend: &'a Backend,
    model_id: String,
    aspect: &'a str,
    prompt: &'a str,
}

impl Reply<'_> {
    fn provider(&self) -> &str {
        match self.backend {
            Backend::Unsupported(_) => "fal",
            b => b.name(),
        }
    }

    /// Hermes' plugin providers (`error_response`/`success_response`) echo the prompt.
    fn plugin(&self) -> bool {
        !matches!(self.backend, Backend::Fal | Backend::Unsupported(_))
    }

    fn fail(&self, e: GenError) -> ToolOutput {
        let model_id = match &e {
            GenError::WithModel { model, .. } => model.as_str(),
            _ => self.model_id.as_str(),
        };
        let mut v = json!({
            "success": false, "image": null, "error": e.to_string(), "error_type": e.error_type(),
            "model": model_id, "aspect_ratio": self.aspect, "provider": self.provider(),
        });
        if self.plugin() {
            v["prompt"] = json!(self.prompt);
        }
        ToolOutput::error_json(v)
    }

    /// The saved file's name prefix (Hermes' per-provider `save_*_image` prefixes).
    fn file_prefix(&self, model_id: &str) -> String {
        match self.backend {
            Backend::Xai => format!("xai_{model_id}"),
            Backend::OpenRouter => "openrouter_gen".to_string(),
            Backend::DeepInfra => deepinfra::file_prefix(model_id),
            Backend::Krea => format!("krea_{model_id}"),
            Backend::OpenAi => format!("openai_{model_id}"),
            Backend::OpenAiCodex => format!("openai_codex_{model_id}"),
            _ => format!("fal_{}", model_id.replace(['/', '.'], "-")),
        }
    }

    /// Save the image under cache/images and answer with its path (and the image
    /// itself inline when small enough), the provider's URL, the common fields and
    /// the backend's own.
    async fn success(
        &self,
        ctx: &Context,
        http: &HttpClient,
        generated: Generated,
        modality: &str,
        mut warnings: Vec<String>,
    ) -> ToolOutput {
        let model_id = generated
            .model
            .clone()
            .unwrap_or_else(|| self.model_id.clone());
        let prefix = self.file_prefix(&model_id);
        let mut out = Map::new();
        out.insert("success".into(), json!(true));
        let (image, inline) = match saved_image(ctx, http, &generated, &prefix, &mut warnings).await
        {
            Ok(saved) => saved,
            Err(e) => return self.fail(e),
        };
        out.insert("image".into(), json!(image));
        out.insert("modality".into(), json!(modality));
        if let Some(u) = generated.url.as_deref().filter(|u| !u.starts_with("data:")) {
            out.insert("image_url".into(), json!(u));
        }
        out.insert("model".into(), json!(model_id));
        if self.plugin() {
            out.insert("prompt".into(), json!(self.prompt.trim()));
        }
        out.insert("aspect_ratio".into(), json!(self.aspect));
        out.insert("provider".into(), json!(self.provider()));
        for (k, v) in generated.extra {
            out.entry(k).or_insert(v);
        }
        if !warnings.is_empty() {
            out.insert("warning".into(), json!(warnings.join("; ")));
        }
        let mut output = ToolOutput::json(Value::Object(out));
        if let Some((b64, mime)) = inline {
            output = output.with_image(b64, mime);
        }
        output
    }
}

/// Save the image: the result's `image` (the saved path, or the provider's URL when
/// the download fails, as Hermes returns it) and the image as base64 for inline MCP
/// content when it is small enough.
async fn saved_image(
    ctx: &Context,
    http: &HttpClient,
    generated: &Generated,
    prefix: &str,
    warnings: &mut Vec<String>,
) -> Result<(String, Option<(String, &'static str)>), GenError> {
    match save_generated(ctx, http, generated, prefix).await {
        Ok((path, bytes, mime)) => {
            if bytes.len() <= MAX_INLINE_BYTES {
                let b64 = base64::engine::general_purpose::STANDARD.encode(&bytes);
                return Ok((path.display().to_string(), Some((b64, mime))));
            }
            warnings.push(format!(
                "image is {} MB, too large to attach inline; open the file instead",
                bytes.len() / (1024 * 1024)
            ));
            Ok((path.display().to_string(), None))
        }
        Err(e) => match generated.url.as_deref().filter(|u| !u.starts_with("data:")) {
            Some(u) => {
                warnings.push(format!("could not save the image under cache/images: {e}"));
                Ok((u.to_string(), None))
            }
            None => Err(GenError::Io(format!("Could not save image to cache: {e}"))),
        },
    }
}
