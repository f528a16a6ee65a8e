//! `image_generate` (toolset `image_gen`): FAL.ai through its queue API
//! (Hermes' in-tree path, `tools/image_generation_tool.py`) or OpenAI's Images
//! API (`image_gen.provider: openai`, Hermes' `plugins/image_gen/openai`), or
//! the other plugins `image_gen.provider` may name: [`codex`], [`xai`], [`openrouter`],
//! [`deepinfra`], [`krea`].
//!
//! Every generated image is saved under `$HERMES_HOME/cache/images/`, `image`
//! in the result is that absolute path, and the image is also returned as MCP
//! image content. Config keys (besides Hermes' `image_gen.provider`/`model`):
//! `image_gen.fal.base_url` (default `https://queue.fal.run`),
//! `image_gen.fal.timeout` (seconds a queued request may take, default 300),
//! `image_gen.openai.timeout` (default 300); OpenAI's base URL is
//! `OPENAI_BASE_URL` (default `https://api.openai.com/v1`), as the OpenAI SDK reads it.
//!
//! Every backend goes through one request skeleton and states only what differs: it
//! builds an `ApiRequest` (`net::vendor`), sends it with `vendor::exchange` (which sorts
//! what went wrong into a `vendor::Failure`), words each failure in the texts Hermes'
//! plugin gives ([`error::GenError`]; `providers::plugin_http` for the plugins that share theirs),
//! and reads the image out of the answer ([`answer`]). [`ImageGenToolset::generate`] then
//! saves it ([`save`]) and answers in Hermes' result shape.
//!
//! Layout: [`catalog`] (models, tiers, config), one module per backend ([`fal`],
//! [`openai`], [`codex`], [`xai`], [`openrouter`], [`deepinfra`], [`krea`]; [`managed`]
//! for the Nous tool gateway's routes), [`answer`] (images in answers), [`source`] (local
//! edit sources), [`save`] (the cache file), [`error`].

mod answer;
mod catalog;
mod error;
mod providers;
mod save;
mod source;

use base64::Engine as _;
use serde_json::{Map, Value, json};

use crate::hermes::Context;
use crate::hermes::envvars;
use crate::net::HttpClient;
use crate::net::vendor::LazyHttp;
use crate::server::args::ArgsExt;
use crate::server::toolset::BoxFuture;
use crate::server::{
    Availability, Hints, ProviderChoice, ToolCall, ToolDef, ToolEntry, ToolOutput, Toolset,
};
use catalog::{
    DEFAULT_ASPECT_RATIO, OPENAI_DEFAULT_TIER, OPENAI_MAX_SOURCES, VALID_ASPECT_RATIOS,
    resolve_aspect_ratio, resolve_fal_model, resolve_gpt_tier, resolve_openai_tier,
};
use codex::codex_generate;
use error::GenError;
use fal::fal_generate;
use openai::openai_generate;
use providers::{codex, deepinfra, fal, krea, managed, openai, openrouter, xai};
use save::{Generated, save_generated};

/// Images larger than this are saved but not inlined as MCP image content.
const MAX_INLINE_BYTES: usize = 8 * 1024 * 1024;

// ---------------------------------------------------------------- backend selection

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Backend {
    Fal,
    OpenAi,
    /// gpt-image-2 through the ChatGPT sign-in ([`codex`]).
    OpenAiCodex,
    /// xAI Grok Imagine ([`xai`]).
    Xai,
    /// OpenRouter chat-completions image models ([`openrouter`]).
    OpenRouter,
    /// DeepInfra's OpenAI-compatible images endpoint ([`deepinfra`]).
    DeepInfra,
    /// Krea 2 through Krea's async job API ([`krea`]).
    Krea,
    /// `image_gen.provider` names a backend hermes-mcp does not have.
    Unsupported(String),
}

impl Backend {
    /// The provider's name in results and in `tools`.
    pub(crate) fn name(&self) -> &str {
        match self {
            Backend::Fal => "fal",
            Backend::OpenAi => "openai",
            Backend::OpenAiCodex => codex::PROVIDER,
            Backend::Xai => "xai",
            Backend::OpenRouter => "openrouter",
            Backend::DeepInfra => "deepinfra",
            Backend::Krea => "krea",
            Backend::Unsupported(p) => p,
        }
    }
}

/// The backend and why: `image_gen.provider` when set (Hermes dispatches to that plugin);
/// else FAL (Hermes' in-tree default) when `FAL_KEY` is set; else, beyond Hermes, the
/// ChatGPT sign-in when there is one (a Codex user needs no key at all); else FAL, which
/// then reports what to set.
pub(crate) fn select(ctx: &Context) -> (Backend, String) {
    let configured = ctx
        .config_str("image_gen.provider")
        .map(|s| s.trim().to_ascii_lowercase())
        .filter(|s| !s.is_empty());
    if let Some(p) = configured {
        let b = match p.as_str() {
            "fal" => Backend::Fal,
            "openai" => Backend::OpenAi,
            codex::PROVIDER => Backend::OpenAiCodex,
            "xai" => Backend::Xai,
            "openrouter" => Backend::OpenRouter,
            "deepinfra" => Backend::DeepInfra,
            "krea" => Backend::Krea,
            other => Backend::Unsupported(other.to_string()),
        };
        if b == Backend::Fal
            && let Some(why) = fal_or_krea_route(ctx)
        {
            return why;
        }
        return (b, "image_gen.provider".into());
    }
    if let Some(why) = fal_or_krea_route(ctx) {
        return why;
    }
    if ctx.env.is_set(envvars::FAL_KEY) {
        return (
            Backend::Fal,
            "FAL_KEY is set and image_gen.provider is not (Hermes' default backend)".into(),
        );
    }
    if managed::fal_ready(ctx).is_ok() {
        return (
            Backend::Fal,
            format!(
                "no image_gen.provider (Hermes' default backend); {}",
                managed::why(ctx, managed::FAL_VENDOR, envvars::FAL_KEY)
            ),
        );
    }
    if let Some(src) = codex::sign_in(ctx) {
        return (
            Backend::OpenAiCodex,
            format!(
                "no image_gen.provider and no FAL_KEY; ChatGPT sign-in found in {}",
                codex::describe_source(&src)
            ),
        );
    }
    (
        Backend::Fal,
        "Hermes' default backend (no image_gen.provider)".into(),
    )
}

/// Hermes' managed Krea routing on the FAL path (see [`managed`]).
fn fal_or_krea_route(ctx: &Context) -> Option<(Backend, String)> {
    let model = managed::krea_routed_model(ctx)?;
    Some((
        Backend::Krea,
        format!(
            "image_gen.model is Krea's {model} and the Nous tool gateway (krea) is ready (Hermes' managed Krea routing)"
        ),
    ))
}

pub(crate) fn backend(ctx: &Context) -> Backend {
    select(ctx).0
}

/// `_read_configured_image_model`: `image_gen.model`, trimmed.
fn configured_model(ctx: &Context) -> Option<String> {
    ctx.config_str("image_gen.model")
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// A plugin provider is available when its key is set.
fn key_availability(ctx: &Context, var: &str, provider: &str) -> Availability {
    if ctx.env.is_set(var) {
        Availability::Available
    } else {
        Availability::Unavailable(format!(
            "image_gen.provider is {provider} but {var} is not set"
        ))
    }
}

pub(crate) const GENERIC_DESCRIPTION: &str = "Generate high-quality images from text prompts (text-to-image), or edit / transform an existing image (image-to-image) when the active model supports it. Pass `image_url` to edit that image; add `reference_image_urls` for style/composition references; omit both for text-to-image. The underlying backend (FAL, OpenAI, xAI, etc.) and model are user-configured and not selectable by the agent. Returns the result in the `image` field — either a URL or an absolute file path. To show it to the user, reference that path/URL in your response using the file-delivery convention for the current platform (your platform guidance describes how files are delivered here). When the active terminal backend has a different filesystem, successful local-file results may also include `agent_visible_image` for follow-up terminal/file operations.";

/// Hermes' `_build_dynamic_image_schema` description for the active backend.
pub(crate) fn description(ctx: &Context) -> String {
    let (provider, model, both, max_refs) = match backend(ctx) {
        Backend::OpenAiCodex => {
            let model = ctx
                .config_str("image_gen.model")
                .map(|s| s.trim().to_string())
                .unwrap_or_else(|| OPENAI_DEFAULT_TIER.to_string());
            (
                codex::DISPLAY.to_string(),
                model,
                true,
                codex::MAX_INPUT_IMAGES,
            )
        }
        // `_read_configured_image_model() or provider.default_model()`.
        Backend::Xai => (
            xai::DISPLAY.to_string(),
            configured_model(ctx).unwrap_or_else(|| xai::DEFAULT_MODEL.to_string()),
            true,
            xai::MAX_REFERENCE_IMAGES,
        ),
        Backend::OpenRouter => (
            openrouter::DISPLAY.to_string(),
            configured_model(ctx).unwrap_or_else(|| openrouter::model_chain(ctx).remove(0)),
            true,
            openrouter::MAX_REFERENCE_IMAGES,
        ),
        // Hermes' `default_model()` here is the live catalog's first model; the description
        // is built without a network call, so only a configured model is named.
        Backend::DeepInfra => (
            deepinfra::DISPLAY.to_string(),
            configured_model(ctx).unwrap_or_default(),
            false,
            0,
        ),
        Backend::Krea => (
            krea::DISPLAY.to_string(),
            configured_model(ctx).unwrap_or_else(|| krea::DEFAULT_MODEL.to_string()),
            true,
            krea::MAX_REFERENCE_IMAGES,
        ),
        Backend::OpenAi => {
            let model = ctx
                .config_str("image_gen.model")
                .map(|s| s.trim().to_string())
                .unwrap_or_else(|| OPENAI_DEFAULT_TIER.to_string());
            ("OpenAI".to_string(), model, true, OPENAI_MAX_SOURCES)
        }
        _ => {
            let (m, _) = resolve_fal_model(ctx);
            (
                "FAL.ai".to_string(),
                m.display.to_string(),
                m.edit_endpoint.is_some(),
                m.max_reference_images.max(1),
            )
        }
    };
    let line = if model.is_empty() {
        format!("\nActive backend: {provider}")
    } else {
        format!("\nActive backend: {provider} · model: {model}")
    };
    let cap = if both {
        let ref_note = if max_refs > 1 {
            format!("; up to {max_refs} reference image(s) via reference_image_urls")
        } else {
            String::new()
        };
        format!(
            "- supports both text-to-image (omit image_url) and image-to-image / editing (pass image_url){ref_note} — routes automatically"
        )
    } else {
        "- this model is text-to-image only — it is NOT capable of image-to-image / editing; do not pass image_url or reference_image_urls (they will be rejected). Provide a text-only prompt.".to_string()
    };
    [GENERIC_DESCRIPTION.to_string(), line, cap].join("\n")
}

pub(crate) fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "prompt": {
                "type": "string",
                "description": "The text prompt describing the desired image (text-to-image) or the edit to apply (image-to-image). Be detailed and descriptive."
            },
            "aspect_ratio": {
                "type": "string",
                "enum": VALID_ASPECT_RATIOS,
                "description": "The aspect ratio of the generated image. 'landscape' is 16:9 wide, 'portrait' is 16:9 tall, 'square' is 1:1.",
                "default": DEFAULT_ASPECT_RATIO
            },
            "image_url": {
                "type": "string",
                "description": "Optional source image to edit/transform (image-to-image). When provided, the active backend routes to its image editing endpoint; when omitted, it generates from text alone. Pass a public URL or an absolute local file path from the conversation. Only honored by models that support editing — the description above indicates whether the active model does."
            },
            "reference_image_urls": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Optional list of additional reference image URLs / paths (style, character, or composition references) to guide an image-to-image edit. Supported only by some models and capped per-model; the description above indicates the max."
            }
        },
        "required": ["prompt"]
    })
}

pub(crate) fn availability(ctx: &Context) -> Availability {
    match backend(ctx) {
        Backend::Fal => {
            if ctx.env.is_set(envvars::FAL_KEY) {
                Availability::Available
            } else {
                match managed::fal_ready(ctx) {
                    Ok(_) => Availability::Available,
                    Err(u) => Availability::Unavailable(format!(
                        "FAL_KEY is not set: get a key at https://fal.ai/dashboard/keys and set FAL_KEY, or set image_gen.provider: openai with OPENAI_API_KEY (Nous tool gateway: {})",
                        u.reason()
                    )),
                }
            }
        }
        Backend::OpenAi => {
            if ctx.env.is_set(envvars::OPENAI_API_KEY) {
                Availability::Available
            } else {
                Availability::Unavailable(
                    "image_gen.provider is openai but OPENAI_API_KEY is not set".into(),
                )
            }
        }
        Backend::OpenAiCodex => {
            if codex::sign_in(ctx).is_some() {
                Availability::Available
            } else {
                Availability::Unavailable(format!(
                    "image_gen.provider is openai-codex but there is no ChatGPT sign-in: run `hermes auth codex` or `codex login` ({NO_SIGN_IN_WHERE})"
                ))
            }
        }
        Backend::Xai => match crate::auth::xai::peek(ctx) {
            Some(_) => Availability::Available,
            None => Availability::Unavailable(
                "image_gen.provider is xai but XAI_API_KEY is not set and Hermes holds no xAI Grok sign-in (auth.json xai-oauth)".into(),
            ),
        },
        Backend::OpenRouter => key_availability(ctx, envvars::OPENROUTER_API_KEY, "openrouter"),
        Backend::DeepInfra => key_availability(ctx, envvars::DEEPINFRA_API_KEY, "deepinfra"),
        // `is_available`: a Krea key or the managed Nous gateway.
        Backend::Krea if managed::krea_ready(ctx).is_some() => Availability::Available,
        Backend::Krea => key_availability(ctx, envvars::KREA_API_KEY, "krea"),
        Backend::Unsupported(p) => Availability::Unavailable(format!(
            "image_gen.provider '{p}' is not supported by hermes-mcp (supported: {SUPPORTED})"
        )),
    }
}

/// Where a sign-in is looked for, for messages.
const NO_SIGN_IN_WHERE: &str = "looked in $HERMES_HOME/auth.json and $CODEX_HOME/auth.json";

/// The providers `image_gen.provider` may name here.
const SUPPORTED: &str = "fal, openai, openai-codex, xai, openrouter, deepinfra, krea";

/// `tools`/`doctor`: the provider that will run `image_generate`, and why.
pub(crate) fn provider_choice(ctx: &Context) -> ProviderChoice {
    let (b, why) = select(ctx);
    match availability(ctx) {
        Availability::Available => {
            let managed = match b {
                Backend::Fal => managed::fal_via_gateway(ctx),
                Backend::Krea => managed::krea_ready(ctx).is_some(),
                _ => false,
            };
            let (provider, why) = if managed {
                let (vendor, var) = match b {
                    Backend::Fal => (managed::FAL_VENDOR, envvars::FAL_KEY),
                    _ => (managed::KREA_VENDOR, envvars::KREA_API_KEY),
                };
                let detail = managed::why(ctx, vendor, var);
                (
                    format!("{} ({})", b.name(), crate::gateway::PROVIDER_LABEL),
                    if why.contains("Nous tool gateway") {
                        why
                    } else {
                        format!("{why}; {detail}")
                    },
                )
            } else {
                (b.name().to_string(), why)
            };
            ProviderChoice {
                job: "image_generate",
                provider,
                why,
            }
        }
        Availability::Unavailable(reason) => ProviderChoice {
            job: "image_generate",
            provider: "none".into(),
            why: format!("{} ({why}): {reason}", b.name()),
        },
    }
}

// ---------------------------------------------------------------- the toolset

#[derive(Default)]
pub(crate) struct ImageGenToolset {
    http: LazyHttp,
}

impl Toolset for ImageGenToolset {
    fn name(&self) -> &'static str {
        "image_gen"
    }

    fn defs(&self) -> &'static [ToolDef] {
        const DEFS: &[ToolDef] = &[ToolDef {
            name: "image_generate",
            description: "",
            schema,
            hints: Hints::WRITE_OPEN,
        }];
        DEFS
    }

    /// Hermes words the description from the configured model.
    fn resolve(&self, ctx: &Context, def: &'static ToolDef) -> ToolEntry {
        let mut entry = def.entry(availability(ctx));
        entry.spec.description = description(ctx);
        entry
    }

    fn providers(&self, ctx: &Context) -> Vec<ProviderChoice> {
        vec![provider_choice(ctx)]
    }

    fn call<'a>(&'a self, ctx: &'a Context, call: ToolCall) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move { self.generate(ctx, call).await })
    }
}

/// `image_generate`'s arguments (already checked against [`schema`]).
struct ImageArgs {
    prompt: String,
    aspect_ratio: Option<String>,
    /// `image_url` first, then `reference_image_urls`; trimmed, blanks dropped.
    sources: Vec<String>,
}

impl ImageArgs {
    fn from_args(args: &Map<String, Value>) -> Self {
        let mut sources = Vec::new();
        if let Some(u) = args.str_arg("image_url").map(str::trim)
            && !u.is_empty()
        {
            sources.push(u.to_string());
        }
        for r in args.str_list_arg("reference_image_urls") {
            if !r.trim().is_empty() {
                sources.push(r.trim().to_string());
            }
        }
        ImageArgs {
            prompt: args.str_arg("prompt").unwrap_or("").to_string(),
            aspect_ratio: args.str_arg("aspect_ratio").map(str::to_string),
            sources,
        }
    }
}

impl ImageGenToolset {
    /// `image_generate`: check the arguments, run the backend, save its image and answer
    /// in Hermes' result shape.
    async fn generate(&self, ctx: &Context, call: ToolCall) -> ToolOutput {
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
    async fn run(
        &self,
        backend: &Backend,
        routed_krea: Option<&'static str>,
    ) -> Result<(Generated, &'static str), GenError> {
        let Job {
            ctx,
            http,
            call,
            prompt,
            aspect,
            sources,
        } = *self;
        match backend {
            Backend::Fal => fal_generate(ctx, http, call, prompt, aspect, sources).await,
            Backend::OpenAi => openai_generate(ctx, http, prompt, aspect, sources).await,
            Backend::OpenAiCodex => {
                codex_generate(ctx, http, &call.progress, prompt.trim(), aspect, sources).await
            }
            Backend::Xai => xai::xai_generate(ctx, http, prompt.trim(), aspect, sources).await,
            Backend::OpenRouter => {
                openrouter::openrouter_generate(ctx, http, prompt.trim(), aspect, sources).await
            }
            Backend::DeepInfra => {
                deepinfra::deepinfra_generate(ctx, http, prompt.trim(), aspect, sources).await
            }
            Backend::Krea => {
                krea::krea_generate(ctx, http, prompt.trim(), aspect, sources, routed_krea).await
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hermes::context::test_ctx as ctx;

    #[test]
    fn description_states_the_active_backend() {
        let d = description(&ctx("", &[]));
        assert!(d.starts_with(GENERIC_DESCRIPTION));
        assert!(
            d.contains("\n\nActive backend: FAL.ai · model: FLUX 2 Klein 9B\n- supports both"),
            "{d}"
        );
        assert!(d.contains("up to 9 reference image(s)"));
        let d = description(&ctx("image_gen: {model: fal-ai/z-image/turbo}", &[]));
        assert!(d.contains("model: Z-Image Turbo\n- this model is text-to-image only"));
        let d = description(&ctx("image_gen: {provider: openai}", &[]));
        assert!(d.contains("Active backend: OpenAI · model: gpt-image-2-medium"));
        assert!(d.contains("up to 16 reference image(s)"));
        // No network call for DeepInfra's catalog: no model line unless one is configured.
        let d = description(&ctx("image_gen: {provider: deepinfra}", &[]));
        assert!(d.contains("\nActive backend: DeepInfra\n- this model is text-to-image only"));
        let d = description(&ctx("image_gen: {provider: krea}", &[]));
        assert!(d.contains("Active backend: Krea · model: krea-2-medium\n"));
        assert!(d.contains("up to 10 reference image(s)"));
    }

    #[test]
    fn availability_names_what_is_missing() {
        assert!(
            matches!(availability(&ctx("", &[])), Availability::Unavailable(r) if r.contains("FAL_KEY"))
        );
        assert!(availability(&ctx("", &[("FAL_KEY", "k")])).is_available());
        assert!(
            matches!(availability(&ctx("image_gen: {provider: openai}", &[("FAL_KEY", "k")])),
            Availability::Unavailable(r) if r.contains("OPENAI_API_KEY"))
        );
        assert!(
            availability(&ctx(
                "image_gen: {provider: openai}",
                &[("OPENAI_API_KEY", "k")]
            ))
            .is_available()
        );
        assert!(
            matches!(availability(&ctx("image_gen: {provider: xai}", &[("FAL_KEY", "k")])),
            Availability::Unavailable(r) if r.contains("XAI_API_KEY is not set"))
        );
        assert!(
            matches!(availability(&ctx("image_gen: {provider: midjourney}", &[("FAL_KEY", "k")])),
            Availability::Unavailable(r) if r.contains("'midjourney' is not supported"))
        );
    }
}
