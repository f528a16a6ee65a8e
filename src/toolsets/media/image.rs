//! `image_generate` (toolset `image_gen`): FAL.ai through its queue API
//! (Hermes' in-tree path, `tools/image_generation_tool.py`) or OpenAI's Images
//! API (`image_gen.provider: openai`, Hermes' `plugins/image_gen/openai`).
//!
//! Every generated image is saved under `$HERMES_HOME/cache/images/`, `image`
//! in the result is that absolute path, and the image is also returned as MCP
//! image content. Config keys (besides Hermes' `image_gen.provider`/`model`):
//! `image_gen.fal.base_url` (default `https://queue.fal.run`),
//! `image_gen.fal.timeout` (seconds a queued request may take, default 300),
//! `image_gen.openai.timeout` (default 300); OpenAI's base URL is
//! `OPENAI_BASE_URL` (default `https://api.openai.com/v1`), as the OpenAI SDK reads it.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Map, Value, json};

use super::http::{self, ApiRequest, Body, LazyHttp};
use crate::hermes::Context;
use crate::hermes::envvars;
use crate::net::HttpClient;
use crate::server::args::ArgsExt;
use crate::server::toolset::BoxFuture;
use crate::server::{Availability, Hints, ToolCall, ToolDef, ToolEntry, ToolOutput, Toolset};

pub const DEFAULT_FAL_BASE_URL: &str = "https://queue.fal.run";
pub const DEFAULT_OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
pub const DEFAULT_MODEL: &str = "fal-ai/flux-2/klein/9b";
pub const DEFAULT_ASPECT_RATIO: &str = "landscape";
pub const VALID_ASPECT_RATIOS: [&str; 3] = ["landscape", "square", "portrait"];
const DEFAULT_TIMEOUT_SECS: f64 = 300.0;
/// Images larger than this are saved but not inlined as MCP image content.
const MAX_INLINE_BYTES: usize = 8 * 1024 * 1024;

#[derive(Clone, Copy, PartialEq, Eq)]
enum SizeStyle {
    /// `image_size` preset enum (`landscape_16_9`, ...)
    Preset,
    /// `aspect_ratio` enum (`16:9`, ...)
    AspectRatio,
    /// literal `image_size` (`1536x1024`)
    GptLiteral,
}

/// One entry of Hermes' `FAL_MODELS` catalog.
pub struct FalModel {
    pub id: &'static str,
    pub display: &'static str,
    size_style: SizeStyle,
    /// landscape, square, portrait
    sizes: [&'static str; 3],
    defaults: &'static str,
    supports: &'static [&'static str],
    upscale: bool,
    pub edit_endpoint: Option<&'static str>,
    edit_supports: &'static [&'static str],
    pub max_reference_images: usize,
}

const PRESET_16_9: [&str; 3] = ["landscape_16_9", "square_hd", "portrait_16_9"];
const RATIO_16_9: [&str; 3] = ["16:9", "1:1", "9:16"];

pub static FAL_MODELS: &[FalModel] = &[
    FalModel {
        id: "fal-ai/flux-2/klein/9b",
        display: "FLUX 2 Klein 9B",
        size_style: SizeStyle::Preset,
        sizes: PRESET_16_9,
        defaults: r#"{"num_inference_steps":4,"output_format":"png","enable_safety_checker":false}"#,
        supports: &[
            "prompt",
            "image_size",
            "num_inference_steps",
            "seed",
            "output_format",
            "enable_safety_checker",
        ],
        upscale: false,
        edit_endpoint: Some("fal-ai/flux-2/klein/9b/edit"),
        edit_supports: &[
            "prompt",
            "image_urls",
            "num_inference_steps",
            "seed",
            "output_format",
            "enable_safety_checker",
        ],
        max_reference_images: 9,
    },
    FalModel {
        id: "fal-ai/flux-2-pro",
        display: "FLUX 2 Pro",
        size_style: SizeStyle::Preset,
        sizes: PRESET_16_9,
        defaults: r#"{"num_inference_steps":50,"guidance_scale":4.5,"num_images":1,"output_format":"png","enable_safety_checker":false,"safety_tolerance":"5","sync_mode":true}"#,
        supports: &[
            "prompt",
            "image_size",
            "num_inference_steps",
            "guidance_scale",
            "num_images",
            "output_format",
            "enable_safety_checker",
            "safety_tolerance",
            "sync_mode",
            "seed",
        ],
        upscale: true,
        edit_endpoint: Some("fal-ai/flux-2-pro/edit"),
        edit_supports: &[
            "prompt",
            "image_urls",
            "num_inference_steps",
            "guidance_scale",
            "num_images",
            "output_format",
            "enable_safety_checker",
            "safety_tolerance",
            "sync_mode",
            "seed",
        ],
        max_reference_images: 9,
    },
    FalModel {
        id: "fal-ai/z-image/turbo",
        display: "Z-Image Turbo",
        size_style: SizeStyle::Preset,
        sizes: PRESET_16_9,
        defaults: r#"{"num_inference_steps":8,"num_images":1,"output_format":"png","enable_safety_checker":false,"enable_prompt_expansion":false}"#,
        supports: &[
            "prompt",
            "image_size",
            "num_inference_steps",
            "num_images",
            "seed",
            "output_format",
            "enable_safety_checker",
            "enable_prompt_expansion",
        ],
        upscale: false,
        edit_endpoint: None,
        edit_supports: &[],
        max_reference_images: 0,
    },
    FalModel {
        id: "fal-ai/nano-banana-pro",
        display: "Nano Banana Pro (Gemini 3 Pro Image)",
        size_style: SizeStyle::AspectRatio,
        sizes: RATIO_16_9,
        defaults: r#"{"num_images":1,"output_format":"png","safety_tolerance":"5","resolution":"1K"}"#,
        supports: &[
            "prompt",
            "aspect_ratio",
            "num_images",
            "output_format",
            "safety_tolerance",
            "seed",
            "sync_mode",
            "resolution",
            "enable_web_search",
            "limit_generations",
        ],
        upscale: false,
        edit_endpoint: Some("fal-ai/nano-banana-pro/edit"),
        edit_supports: &[
            "prompt",
            "image_urls",
            "aspect_ratio",
            "num_images",
            "output_format",
            "safety_tolerance",
            "seed",
            "sync_mode",
            "resolution",
            "enable_web_search",
            "limit_generations",
        ],
        max_reference_images: 2,
    },
    FalModel {
        id: "fal-ai/gpt-image-1.5",
        display: "GPT Image 1.5",
        size_style: SizeStyle::GptLiteral,
        sizes: ["1536x1024", "1024x1024", "1024x1536"],
        defaults: r#"{"quality":"medium","num_images":1,"output_format":"png"}"#,
        supports: &[
            "prompt",
            "image_size",
            "quality",
            "num_images",
            "output_format",
            "background",
            "sync_mode",
        ],
        upscale: false,
        edit_endpoint: Some("fal-ai/gpt-image-1.5/edit"),
        edit_supports: &[
            "prompt",
            "image_urls",
            "image_size",
            "quality",
            "num_images",
            "output_format",
            "sync_mode",
        ],
        max_reference_images: 16,
    },
    FalModel {
        id: "fal-ai/gpt-image-2",
        display: "GPT Image 2",
        size_style: SizeStyle::Preset,
        sizes: ["landscape_4_3", "square_hd", "portrait_4_3"],
        defaults: r#"{"quality":"medium","num_images":1,"output_format":"png"}"#,
        supports: &[
            "prompt",
            "image_size",
            "quality",
            "num_images",
            "output_format",
            "sync_mode",
        ],
        upscale: false,
        edit_endpoint: Some("openai/gpt-image-2/edit"),
        edit_supports: &[
            "prompt",
            "image_urls",
            "quality",
            "num_images",
            "output_format",
            "sync_mode",
            "mask_image_url",
        ],
        max_reference_images: 16,
    },
    FalModel {
        id: "fal-ai/ideogram/v3",
        display: "Ideogram V3",
        size_style: SizeStyle::Preset,
        sizes: PRESET_16_9,
        defaults: r#"{"rendering_speed":"BALANCED","expand_prompt":true,"style":"AUTO"}"#,
        supports: &[
            "prompt",
            "image_size",
            "rendering_speed",
            "expand_prompt",
            "style",
            "seed",
        ],
        upscale: false,
        edit_endpoint: Some("fal-ai/ideogram/v3/edit"),
        edit_supports: &[
            "prompt",
            "image_urls",
            "rendering_speed",
            "expand_prompt",
            "style",
            "seed",
        ],
        max_reference_images: 1,
    },
    FalModel {
        id: "fal-ai/recraft/v4/pro/text-to-image",
        display: "Recraft V4 Pro",
        size_style: SizeStyle::Preset,
        sizes: PRESET_16_9,
        defaults: r#"{"enable_safety_checker":false}"#,
        supports: &[
            "prompt",
            "image_size",
            "enable_safety_checker",
            "colors",
            "background_color",
        ],
        upscale: false,
        edit_endpoint: None,
        edit_supports: &[],
        max_reference_images: 0,
    },
    FalModel {
        id: "fal-ai/qwen-image",
        display: "Qwen Image",
        size_style: SizeStyle::Preset,
        sizes: PRESET_16_9,
        defaults: r#"{"num_inference_steps":30,"guidance_scale":2.5,"num_images":1,"output_format":"png","acceleration":"regular"}"#,
        supports: &[
            "prompt",
            "image_size",
            "num_inference_steps",
            "guidance_scale",
            "num_images",
            "output_format",
            "acceleration",
            "seed",
            "sync_mode",
        ],
        upscale: false,
        edit_endpoint: Some("fal-ai/qwen-image-2/pro/edit"),
        edit_supports: &[
            "prompt",
            "image_urls",
            "num_inference_steps",
            "guidance_scale",
            "num_images",
            "output_format",
            "acceleration",
            "seed",
            "sync_mode",
        ],
        max_reference_images: 3,
    },
    FalModel {
        id: "fal-ai/krea/v2/medium/text-to-image",
        display: "Krea 2 Medium",
        size_style: SizeStyle::AspectRatio,
        sizes: RATIO_16_9,
        defaults: r#"{"creativity":"medium"}"#,
        supports: &[
            "prompt",
            "aspect_ratio",
            "creativity",
            "seed",
            "image_style_references",
        ],
        upscale: false,
        edit_endpoint: None,
        edit_supports: &[],
        max_reference_images: 0,
    },
    FalModel {
        id: "fal-ai/krea/v2/large/text-to-image",
        display: "Krea 2 Large",
        size_style: SizeStyle::AspectRatio,
        sizes: RATIO_16_9,
        defaults: r#"{"creativity":"medium"}"#,
        supports: &[
            "prompt",
            "aspect_ratio",
            "creativity",
            "seed",
            "image_style_references",
        ],
        upscale: false,
        edit_endpoint: None,
        edit_supports: &[],
        max_reference_images: 0,
    },
];

// Clarity Upscaler, chained after models with `upscale: true` (Hermes' constants).
const UPSCALER_MODEL: &str = "fal-ai/clarity-upscaler";
const UPSCALER_FACTOR: u32 = 2;

fn aspect_index(aspect: &str) -> usize {
    match aspect {
        "square" => 1,
        "portrait" => 2,
        _ => 0,
    }
}

/// Hermes' `resolve_aspect_ratio`: lower-cased, invalid values become landscape.
pub fn resolve_aspect_ratio(value: Option<&str>) -> (String, Option<String>) {
    let raw = value.unwrap_or(DEFAULT_ASPECT_RATIO);
    let v = raw.trim().to_ascii_lowercase();
    if VALID_ASPECT_RATIOS.contains(&v.as_str()) {
        (v, None)
    } else {
        (
            DEFAULT_ASPECT_RATIO.into(),
            Some(format!(
                "Invalid aspect_ratio '{raw}', defaulting to '{DEFAULT_ASPECT_RATIO}'"
            )),
        )
    }
}

impl FalModel {
    fn defaults(&self) -> Map<String, Value> {
        serde_json::from_str(self.defaults).unwrap_or_default()
    }

    /// Hermes' `_build_fal_payload`.
    pub fn payload(&self, prompt: &str, aspect: &str) -> Value {
        let mut p = self.defaults();
        p.insert("prompt".into(), json!(prompt.trim()));
        let size = self.sizes[aspect_index(aspect)];
        match self.size_style {
            SizeStyle::Preset | SizeStyle::GptLiteral => p.insert("image_size".into(), json!(size)),
            SizeStyle::AspectRatio => p.insert("aspect_ratio".into(), json!(size)),
        };
        Value::Object(
            p.into_iter()
                .filter(|(k, _)| self.supports.contains(&k.as_str()) || k == "prompt")
                .collect(),
        )
    }

    /// Hermes' `_build_fal_edit_payload`.
    pub fn edit_payload(&self, prompt: &str, image_urls: &[String], aspect: &str) -> Value {
        let mut p = self.defaults();
        p.insert("prompt".into(), json!(prompt.trim()));
        p.insert("image_urls".into(), json!(image_urls));
        let size = self.sizes[aspect_index(aspect)];
        match self.size_style {
            SizeStyle::Preset | SizeStyle::GptLiteral
                if self.edit_supports.contains(&"image_size") =>
            {
                p.insert("image_size".into(), json!(size));
            }
            SizeStyle::AspectRatio if self.edit_supports.contains(&"aspect_ratio") => {
                p.insert("aspect_ratio".into(), json!(size));
            }
            _ => {}
        }
        Value::Object(
            p.into_iter()
                .filter(|(k, _)| {
                    self.edit_supports.contains(&k.as_str()) || k == "prompt" || k == "image_urls"
                })
                .collect(),
        )
    }
}

pub fn fal_model(id: &str) -> Option<&'static FalModel> {
    FAL_MODELS.iter().find(|m| m.id == id)
}

/// Hermes' `_resolve_fal_model`: `image_gen.model`, then `FAL_IMAGE_MODEL`,
/// unknown ids fall back to the default (with a warning).
pub fn resolve_fal_model(ctx: &Context) -> (&'static FalModel, Option<String>) {
    let configured = ctx
        .config_str("image_gen.model")
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| {
            ctx.env
                .get(envvars::FAL_IMAGE_MODEL)
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        });
    let default = fal_model(DEFAULT_MODEL).expect("default model in catalog");
    match configured {
        None => (default, None),
        Some(id) => match fal_model(&id) {
            Some(m) => (m, None),
            None => (
                default,
                Some(format!(
                    "Unknown FAL model '{id}' in config; falling back to {DEFAULT_MODEL}"
                )),
            ),
        },
    }
}

// ---------------------------------------------------------------- OpenAI catalog

pub const OPENAI_API_MODEL: &str = "gpt-image-2";
pub const OPENAI_DEFAULT_TIER: &str = "gpt-image-2-medium";
const OPENAI_TIERS: [(&str, &str); 3] = [
    ("gpt-image-2-low", "low"),
    ("gpt-image-2-medium", "medium"),
    ("gpt-image-2-high", "high"),
];
const OPENAI_SIZES: [&str; 3] = ["1536x1024", "1024x1024", "1024x1536"];
const OPENAI_MAX_SOURCES: usize = 16;

/// `image_gen.openai.model`, then `image_gen.model` when it is a tier id, else the default.
pub fn resolve_openai_tier(ctx: &Context) -> (&'static str, &'static str) {
    let is_tier = |s: &str| OPENAI_TIERS.iter().find(|(id, _)| *id == s).copied();
    ctx.config_str("image_gen.openai.model")
        .and_then(|s| is_tier(s.trim()))
        .or_else(|| {
            ctx.config_str("image_gen.model")
                .and_then(|s| is_tier(s.trim()))
        })
        .unwrap_or(("gpt-image-2-medium", "medium"))
}

// ---------------------------------------------------------------- backend selection

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backend {
    Fal,
    OpenAi,
    /// `image_gen.provider` names a backend hermes-mcp does not have.
    Unsupported(String),
}

pub fn backend(ctx: &Context) -> Backend {
    match ctx
        .config_str("image_gen.provider")
        .map(|s| s.trim().to_ascii_lowercase())
        .as_deref()
    {
        None | Some("") | Some("fal") => Backend::Fal,
        Some("openai") => Backend::OpenAi,
        Some(other) => Backend::Unsupported(other.to_string()),
    }
}

pub const GENERIC_DESCRIPTION: &str = "Generate high-quality images from text prompts (text-to-image), or edit / transform an existing image (image-to-image) when the active model supports it. Pass `image_url` to edit that image; add `reference_image_urls` for style/composition references; omit both for text-to-image. The underlying backend (FAL, OpenAI, xAI, etc.) and model are user-configured and not selectable by the agent. Returns the result in the `image` field — either a URL or an absolute file path. To show it to the user, reference that path/URL in your response using the file-delivery convention for the current platform (your platform guidance describes how files are delivered here). When the active terminal backend has a different filesystem, successful local-file results may also include `agent_visible_image` for follow-up terminal/file operations.";

/// Hermes' `_build_dynamic_image_schema` description for the active backend.
pub fn description(ctx: &Context) -> String {
    let (provider, model, both, max_refs) = match backend(ctx) {
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
    let line = format!("\nActive backend: {provider} · model: {model}");
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

pub fn schema() -> Value {
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

pub fn availability(ctx: &Context) -> Availability {
    match backend(ctx) {
        Backend::Fal => {
            if ctx.env.is_set(envvars::FAL_KEY) {
                Availability::Available
            } else {
                Availability::Unavailable(
                    "FAL_KEY is not set: get a key at https://fal.ai/dashboard/keys and set FAL_KEY, or set image_gen.provider: openai with OPENAI_API_KEY".into(),
                )
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
        Backend::Unsupported(p) => Availability::Unavailable(format!(
            "image_gen.provider '{p}' is not supported by hermes-mcp (supported: fal, openai)"
        )),
    }
}

// ---------------------------------------------------------------- the toolset

#[derive(Default)]
pub struct ImageGenToolset {
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

    fn call<'a>(&'a self, ctx: &'a Context, call: ToolCall) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move { self.generate(ctx, call).await })
    }
}

/// An image-generation failure in Hermes' shape.
#[derive(Debug)]
pub struct GenError {
    pub message: String,
    pub error_type: &'static str,
}

impl GenError {
    fn value(m: impl Into<String>) -> Self {
        GenError {
            message: m.into(),
            error_type: "ValueError",
        }
    }
    fn http(m: impl Into<String>) -> Self {
        GenError {
            message: m.into(),
            error_type: "HTTPError",
        }
    }
    fn timeout(m: impl Into<String>) -> Self {
        GenError {
            message: m.into(),
            error_type: "TimeoutError",
        }
    }
}

/// A generated image, before saving.
struct Generated {
    /// The provider's URL (http(s) or data:), when it gave one.
    url: Option<String>,
    /// Bytes when the provider returned them inline (OpenAI b64_json).
    bytes: Option<Vec<u8>>,
    extra: Map<String, Value>,
}

impl ImageGenToolset {
    async fn generate(&self, ctx: &Context, call: ToolCall) -> ToolOutput {
        let prompt = call.args.str_arg("prompt").unwrap_or("").to_string();
        if prompt.is_empty() {
            return ToolOutput::error("prompt is required for image generation");
        }
        let (aspect, aspect_warning) = resolve_aspect_ratio(call.args.str_arg("aspect_ratio"));
        if let Some(w) = &aspect_warning {
            tracing::warn!("{w}");
        }
        let mut sources = Vec::new();
        if let Some(u) = call.args.str_arg("image_url").map(str::trim)
            && !u.is_empty()
        {
            sources.push(u.to_string());
        }
        for r in call.args.str_list_arg("reference_image_urls") {
            if !r.trim().is_empty() {
                sources.push(r.trim().to_string());
            }
        }
        let backend = backend(ctx);
        let (provider, model_id) = match &backend {
            Backend::OpenAi => ("openai", resolve_openai_tier(ctx).0.to_string()),
            _ => ("fal", resolve_fal_model(ctx).0.id.to_string()),
        };
        let fail = |e: GenError| {
            ToolOutput::error_json(json!({
                "success": false, "image": null, "error": e.message, "error_type": e.error_type,
                "model": model_id, "aspect_ratio": aspect, "provider": provider,
            }))
        };
        if prompt.trim().is_empty() {
            return fail(GenError::value(
                "Prompt is required and must be a non-empty string",
            ));
        }
        let http = match self.http.get(ctx) {
            Ok(h) => h,
            Err(e) => return fail(GenError::value(e)),
        };
        let result = match &backend {
            Backend::Fal => fal_generate(ctx, http, &call, &prompt, &aspect, &sources).await,
            Backend::OpenAi => openai_generate(ctx, http, &prompt, &aspect, &sources).await,
            Backend::Unsupported(p) => Err(GenError {
                message: format!(
                    "image_gen.provider='{p}' is set but hermes-mcp has no such backend (supported: fal, openai)."
                ),
                error_type: "provider_not_registered",
            }),
        };
        let (generated, modality) = match result {
            Ok(g) => g,
            Err(e) => return fail(e),
        };
        let prefix = match &backend {
            Backend::OpenAi => format!("openai_{model_id}"),
            _ => format!("fal_{}", model_id.replace(['/', '.'], "-")),
        };
        let mut out = Map::new();
        out.insert("success".into(), json!(true));
        let mut warnings: Vec<String> = aspect_warning.into_iter().collect();
        let saved = save_generated(ctx, http, &generated, &prefix).await;
        let mut inline = None;
        match saved {
            Ok((path, bytes, mime)) => {
                out.insert("image".into(), json!(path.display().to_string()));
                if bytes.len() <= MAX_INLINE_BYTES {
                    inline = Some((
                        base64::engine::general_purpose::STANDARD.encode(&bytes),
                        mime,
                    ));
                } else {
                    warnings.push(format!(
                        "image is {} MB, too large to attach inline; open the file instead",
                        bytes.len() / (1024 * 1024)
                    ));
                }
            }
            Err(e) => match generated.url.as_deref().filter(|u| !u.starts_with("data:")) {
                // Hermes returns the provider URL; we do too when the download fails.
                Some(u) => {
                    out.insert("image".into(), json!(u));
                    warnings.push(format!("could not save the image under cache/images: {e}"));
                }
                None => {
                    return fail(GenError {
                        message: format!("Could not save image to cache: {e}"),
                        error_type: "io_error",
                    });
                }
            },
        }
        out.insert("modality".into(), json!(modality));
        if let Some(u) = generated.url.as_deref().filter(|u| !u.starts_with("data:")) {
            out.insert("image_url".into(), json!(u));
        }
        out.insert("model".into(), json!(model_id));
        out.insert("aspect_ratio".into(), json!(aspect));
        out.insert("provider".into(), json!(provider));
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

/// Save the image under `$HERMES_HOME/cache/images/<prefix>_<ts>_<id>.<ext>`.
async fn save_generated(
    ctx: &Context,
    http: &HttpClient,
    g: &Generated,
    prefix: &str,
) -> Result<(PathBuf, Vec<u8>, &'static str), String> {
    let (bytes, mime) = match (&g.bytes, &g.url) {
        (Some(b), _) => {
            let mime = super::sniff_image(b).ok_or_else(|| {
                "the provider's image data is not a PNG, JPEG, WebP or GIF".to_string()
            })?;
            (b.clone(), mime)
        }
        (None, Some(url)) => http::fetch_image(http, url).await?,
        (None, None) => return Err("no image data".into()),
    };
    let dir = ctx.home.cache_dir("images");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let path = super::unique_path(dir.join(format!(
        "{prefix}_{}_{}.{}",
        super::timestamp(),
        super::short_id(),
        super::image_ext(mime)
    )));
    write_atomic(&path, &bytes)?;
    Ok((path, bytes, mime))
}

fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> Result<(), String> {
    let dir = path.parent().unwrap_or(std::path::Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .map_err(|e| format!("cannot write in {}: {e}", dir.display()))?;
    std::io::Write::write_all(&mut tmp, bytes)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    tmp.persist(path)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(())
}

/// A source image for an edit: a URL passes through (FAL fetches it), a local
/// image file becomes a `data:` URI (FAL accepts those; it cannot read our disk).
fn fal_source(src: &str) -> Result<String, GenError> {
    let lower = src.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") || lower.starts_with("data:") {
        return Ok(src.to_string());
    }
    let (bytes, mime) = read_local_image(src)?;
    Ok(format!(
        "data:{mime};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    ))
}

/// Read a local source image; only real image files are read (never send an
/// arbitrary file such as a key to a provider).
fn read_local_image(src: &str) -> Result<(Vec<u8>, &'static str), GenError> {
    let path = super::absolute(src);
    let meta = std::fs::metadata(&path).map_err(|e| {
        GenError::value(format!(
            "Could not load source image {}: {e}",
            path.display()
        ))
    })?;
    if meta.len() as usize > http::MAX_IMAGE_BYTES {
        return Err(GenError::value(format!(
            "Source image {} is larger than {} MB",
            path.display(),
            http::MAX_IMAGE_BYTES / (1024 * 1024)
        )));
    }
    let bytes = std::fs::read(&path).map_err(|e| {
        GenError::value(format!(
            "Could not load source image {}: {e}",
            path.display()
        ))
    })?;
    let mime = super::sniff_image(&bytes).ok_or_else(|| {
        GenError::value(format!(
            "Source image {} is not a PNG, JPEG, WebP or GIF file",
            path.display()
        ))
    })?;
    Ok((bytes, mime))
}

fn timeout_cfg(ctx: &Context, key: &str) -> Duration {
    let secs = ctx
        .config()
        .f64(key)
        .filter(|s| s.is_finite() && *s > 0.0)
        .unwrap_or(DEFAULT_TIMEOUT_SECS);
    Duration::from_secs_f64(secs.min(86_400.0))
}

// ---------------------------------------------------------------- FAL queue

fn fal_base(ctx: &Context) -> String {
    ctx.config_str("image_gen.fal.base_url")
        .unwrap_or_else(|| DEFAULT_FAL_BASE_URL.to_string())
        .trim_end_matches('/')
        .to_string()
}

fn origin(u: &str) -> Option<String> {
    let u = reqwest::Url::parse(u).ok()?;
    Some(u.origin().ascii_serialization())
}

/// Everything one queue run needs.
pub struct FalQueue<'a> {
    pub http: &'a HttpClient,
    pub base: String,
    pub key: String,
    pub timeout: Duration,
}

impl FalQueue<'_> {
    fn request<'u>(&self, method: reqwest::Method, url: &'u str) -> ApiRequest<'u> {
        let mut r = ApiRequest::new("fal", method, url);
        r.auth = Some(("Key", self.key.clone()));
        r.timeout = Duration::from_secs(60);
        r
    }

    /// Submit to `POST <base>/<endpoint>`, poll `status_url` until COMPLETED,
    /// then fetch `response_url`. On timeout the request is cancelled.
    pub async fn run(
        &self,
        endpoint: &str,
        arguments: &Value,
        progress: &crate::server::Progress,
    ) -> Result<Value, GenError> {
        let started = Instant::now();
        let submit_url = format!("{}/{}", self.base, endpoint.trim_matches('/'));
        let mut req = self.request(reqwest::Method::POST, &submit_url);
        req.body = Body::Json(arguments.clone());
        req.headers
            .push(("x-idempotency-key", format!("{:032x}", fastrand::u128(..))));
        let resp = http::send(self.http, req)
            .await
            .map_err(|e| GenError::http(format!("FAL submit failed: {e}")))?;
        if !(200..300).contains(&resp.status) {
            return Err(GenError::http(format!(
                "FAL rejected the request to {endpoint}: {}",
                http::status_error(&resp)
            )));
        }
        let handle = resp
            .json()
            .map_err(|e| GenError::http(format!("FAL submit: {e}")))?;
        let field = |k: &str| -> Result<String, GenError> {
            handle
                .get(k)
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| GenError::http(format!("FAL submit response has no {k}: {handle}")))
        };
        let request_id = field("request_id")?;
        let status_url = field("status_url")?;
        let response_url = field("response_url")?;
        let cancel_url = handle
            .get("cancel_url")
            .and_then(Value::as_str)
            .map(str::to_string);
        let base_origin = origin(&self.base);
        for u in [Some(&status_url), Some(&response_url), cancel_url.as_ref()]
            .into_iter()
            .flatten()
        {
            if origin(u) != base_origin {
                return Err(GenError::http(format!(
                    "FAL returned a queue URL on another host ({u}); expected {}",
                    self.base
                )));
            }
        }

        // If the MCP call is cancelled while we wait, the future is dropped:
        // tell FAL to cancel the queued request too.
        let mut on_drop = CancelOnDrop {
            client: cancel_url.as_ref().map(|_| self.http.api().clone()),
            url: cancel_url.clone().unwrap_or_default(),
            key: self.key.clone(),
        };
        let mut delay = Duration::from_millis(200);
        let mut last_status = "IN_QUEUE".to_string();
        let mut polls = 0u64;
        loop {
            if started.elapsed() >= self.timeout {
                on_drop.client = None;
                if let Some(c) = &cancel_url {
                    let _ = http::send(self.http, self.request(reqwest::Method::PUT, c)).await;
                }
                return Err(GenError::timeout(format!(
                    "FAL request {request_id} did not finish within {}s (last status: {last_status}); it was cancelled. Raise image_gen.fal.timeout to wait longer.",
                    super::command::fmt_secs(self.timeout.as_secs_f64())
                )));
            }
            let resp = http::send(self.http, self.request(reqwest::Method::GET, &status_url))
                .await
                .map_err(|e| GenError::http(format!("FAL status check failed: {e}")))?;
            if !(200..300).contains(&resp.status) {
                return Err(GenError::http(format!(
                    "FAL status check for {request_id} failed: {}",
                    http::status_error(&resp)
                )));
            }
            let st = resp
                .json()
                .map_err(|e| GenError::http(format!("FAL status: {e}")))?;
            let status = st
                .get("status")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            match status.as_str() {
                "COMPLETED" => {
                    if let Some(err) = st.get("error").filter(|e| !e.is_null()) {
                        let msg = err.as_str().map(str::to_string).unwrap_or(err.to_string());
                        return Err(GenError::http(format!(
                            "FAL request {request_id} failed: {msg}"
                        )));
                    }
                    break;
                }
                "IN_QUEUE" | "IN_PROGRESS" => {
                    polls += 1;
                    let msg = match st.get("queue_position").and_then(Value::as_u64) {
                        Some(p) if status == "IN_QUEUE" => format!("FAL: in queue (position {p})"),
                        _ => format!("FAL: {}", status.to_ascii_lowercase().replace('_', " ")),
                    };
                    progress.report(polls, None, msg).await;
                }
                "FAILED" | "CANCELED" | "CANCELLED" | "ERROR" => {
                    let detail = st
                        .get("error")
                        .map(|e| e.as_str().map(str::to_string).unwrap_or(e.to_string()))
                        .unwrap_or_default();
                    return Err(GenError::http(format!(
                        "FAL request {request_id} {}{}",
                        status.to_ascii_lowercase(),
                        if detail.is_empty() {
                            String::new()
                        } else {
                            format!(": {detail}")
                        }
                    )));
                }
                other => {
                    return Err(GenError::http(format!(
                        "FAL status for {request_id} is not understood: {other:?}"
                    )));
                }
            }
            last_status = status;
            let left = self.timeout.saturating_sub(started.elapsed());
            tokio::time::sleep(delay.min(left)).await;
            delay = (delay * 3 / 2).min(Duration::from_secs(2));
        }

        on_drop.client = None;
        let resp = http::send(self.http, self.request(reqwest::Method::GET, &response_url))
            .await
            .map_err(|e| GenError::http(format!("FAL result fetch failed: {e}")))?;
        if !(200..300).contains(&resp.status) {
            return Err(GenError::http(format!(
                "FAL request {request_id} failed: {}",
                http::status_error(&resp)
            )));
        }
        resp.json()
            .map_err(|e| GenError::http(format!("FAL result: {e}")))
    }
}

/// Sends FAL's cancel request when dropped while armed (the call was cancelled).
struct CancelOnDrop {
    client: Option<reqwest::Client>,
    url: String,
    key: String,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let (Some(client), Ok(rt)) = (self.client.take(), tokio::runtime::Handle::try_current())
        else {
            return;
        };
        let req = client
            .put(&self.url)
            .header(reqwest::header::AUTHORIZATION, format!("Key {}", self.key))
            .timeout(Duration::from_secs(10));
        rt.spawn(async move {
            if let Err(e) = req.send().await {
                tracing::debug!("FAL cancel request failed: {e}");
            }
        });
    }
}

async fn fal_generate(
    ctx: &Context,
    http: &HttpClient,
    call: &ToolCall,
    prompt: &str,
    aspect: &str,
    sources: &[String],
) -> Result<(Generated, &'static str), GenError> {
    let (model, model_warning) = resolve_fal_model(ctx);
    if let Some(w) = &model_warning {
        tracing::warn!("{w}");
    }
    let Some(key) = ctx.env.get(envvars::FAL_KEY) else {
        return Err(GenError::value(
            "Image generation is unavailable in this environment.\n\nMissing requirements:\n  - FAL_KEY environment variable is not set\n\nTo enable image generation, do one of:\n  1. Get a free API key at https://fal.ai and set FAL_KEY=<your-key> (then restart the session)\n  3. Configure a different image_gen provider (image_gen.provider: openai with OPENAI_API_KEY)",
        ));
    };
    if !sources.is_empty() && model.edit_endpoint.is_none() {
        return Err(GenError::value(format!(
            "Model '{}' ({}) is not capable of image-to-image / editing. Provide a text-only prompt (omit image_url), or switch to an edit-capable model via `hermes tools` → Image Generation.",
            model.display, model.id
        )));
    }
    let use_edit = !sources.is_empty();
    let (endpoint, arguments) = if use_edit {
        let max = model.max_reference_images.max(1);
        let clamped = sources
            .iter()
            .take(max)
            .map(|s| fal_source(s))
            .collect::<Result<Vec<_>, _>>()?;
        (
            model.edit_endpoint.unwrap(),
            model.edit_payload(prompt, &clamped, aspect),
        )
    } else {
        (model.id, model.payload(prompt, aspect))
    };
    let queue = FalQueue {
        http,
        base: fal_base(ctx),
        key,
        timeout: timeout_cfg(ctx, "image_gen.fal.timeout"),
    };
    let result = queue.run(endpoint, &arguments, &call.progress).await?;
    let Some(images) = result.get("images").and_then(Value::as_array) else {
        return Err(GenError::value(
            "Invalid response from FAL.ai API — no images returned",
        ));
    };
    if images.is_empty() {
        return Err(GenError::value("No images were generated"));
    }
    let Some(first) = images
        .iter()
        .find(|i| i.get("url").and_then(Value::as_str).is_some())
    else {
        return Err(GenError::value("No valid image URLs returned from API"));
    };
    let mut url = first["url"].as_str().unwrap().to_string();
    let mut extra = Map::new();
    extra.insert("upscaled".into(), json!(false));
    if let Some(w) = first.get("width").filter(|v| v.is_number()) {
        extra.insert("width".into(), w.clone());
    }
    if let Some(h) = first.get("height").filter(|v| v.is_number()) {
        extra.insert("height".into(), h.clone());
    }
    if model.upscale && !use_edit {
        let args = json!({
            "image_url": url,
            "prompt": format!("masterpiece, best quality, highres, {}", prompt.trim()),
            "upscale_factor": UPSCALER_FACTOR,
            "negative_prompt": "(worst quality, low quality, normal quality:2)",
            "creativity": 0.35,
            "resemblance": 0.6,
            "guidance_scale": 4,
            "num_inference_steps": 18,
            "enable_safety_checker": false,
        });
        match queue.run(UPSCALER_MODEL, &args, &call.progress).await {
            Ok(r) => match r
                .get("image")
                .and_then(|i| i.get("url"))
                .and_then(Value::as_str)
            {
                Some(u) => {
                    url = u.to_string();
                    extra.insert("upscaled".into(), json!(true));
                    extra.insert("upscale_factor".into(), json!(UPSCALER_FACTOR));
                    for k in ["width", "height"] {
                        match r["image"].get(k) {
                            Some(v) if v.is_number() => {
                                extra.insert(k.into(), v.clone());
                            }
                            _ => {
                                extra.remove(k);
                            }
                        }
                    }
                }
                None => tracing::warn!("Upscaler returned invalid response; using the original"),
            },
            Err(e) => tracing::warn!("upscale failed, using the original image: {}", e.message),
        }
    }
    if let Some(w) = model_warning {
        extra.insert("warning".into(), json!(w));
    }
    Ok((
        Generated {
            url: Some(url),
            bytes: None,
            extra,
        },
        if use_edit { "image" } else { "text" },
    ))
}

// ---------------------------------------------------------------- OpenAI Images

fn openai_base(ctx: &Context) -> String {
    ctx.env
        .get(envvars::OPENAI_BASE_URL)
        .unwrap_or_else(|| DEFAULT_OPENAI_BASE_URL.to_string())
        .trim_end_matches('/')
        .to_string()
}

/// A multipart/form-data body (the Images edit endpoint takes files).
pub struct Multipart {
    boundary: String,
    body: Vec<u8>,
}

impl Multipart {
    pub fn new() -> Self {
        Multipart {
            boundary: format!("hermes-mcp-{:032x}", fastrand::u128(..)),
            body: Vec::new(),
        }
    }
    pub fn text(&mut self, name: &str, value: &str) {
        self.body.extend_from_slice(
            format!(
                "--{}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n",
                self.boundary
            )
            .as_bytes(),
        );
    }
    pub fn file(&mut self, name: &str, filename: &str, mime: &str, data: &[u8]) {
        let filename = filename.replace(['"', '\r', '\n'], "_");
        self.body.extend_from_slice(
            format!(
                "--{}\r\nContent-Disposition: form-data; name=\"{name}\"; filename=\"{filename}\"\r\nContent-Type: {mime}\r\n\r\n",
                self.boundary
            )
            .as_bytes(),
        );
        self.body.extend_from_slice(data);
        self.body.extend_from_slice(b"\r\n");
    }
    pub fn finish(mut self) -> (String, Vec<u8>) {
        self.body
            .extend_from_slice(format!("--{}--\r\n", self.boundary).as_bytes());
        (
            format!("multipart/form-data; boundary={}", self.boundary),
            self.body,
        )
    }
}

impl Default for Multipart {
    fn default() -> Self {
        Self::new()
    }
}

async fn openai_generate(
    ctx: &Context,
    http: &HttpClient,
    prompt: &str,
    aspect: &str,
    sources: &[String],
) -> Result<(Generated, &'static str), GenError> {
    let Some(key) = ctx.env.get(envvars::OPENAI_API_KEY) else {
        return Err(GenError {
            message: "OPENAI_API_KEY not set. Run `hermes tools` → Image Generation → OpenAI to configure, or `hermes setup` to add the key.".into(),
            error_type: "auth_required",
        });
    };
    let (_tier, quality) = resolve_openai_tier(ctx);
    let size = OPENAI_SIZES[aspect_index(aspect)];
    let base = openai_base(ctx);
    let sources: Vec<&String> = sources.iter().take(OPENAI_MAX_SOURCES).collect();
    let is_edit = !sources.is_empty();
    let url;
    let mut req = if is_edit {
        let mut files = Vec::new();
        for s in &sources {
            let loaded = if s.to_ascii_lowercase().starts_with("http://")
                || s.to_ascii_lowercase().starts_with("https://")
                || s.starts_with("data:")
            {
                http::fetch_image(http, s).await.map_err(GenError::value)
            } else {
                read_local_image(s)
            };
            let (bytes, mime) = loaded.map_err(|e| GenError {
                message: format!("Could not load source image for editing: {}", e.message),
                error_type: "io_error",
            })?;
            let name = s
                .split('?')
                .next()
                .and_then(|p| p.rsplit('/').next())
                .filter(|n| !n.is_empty() && !s.starts_with("data:"))
                .map(str::to_string)
                .unwrap_or_else(|| format!("image.{}", super::image_ext(mime)));
            files.push((name, mime, bytes));
        }
        let mut form = Multipart::new();
        form.text("model", OPENAI_API_MODEL);
        form.text("prompt", prompt);
        form.text("size", size);
        form.text("quality", quality);
        form.text("n", "1");
        let field = if files.len() > 1 { "image[]" } else { "image" };
        for (name, mime, bytes) in &files {
            form.file(field, name, mime, bytes);
        }
        let (content_type, bytes) = form.finish();
        url = format!("{base}/images/edits");
        let mut r = ApiRequest::new("openai", reqwest::Method::POST, &url);
        r.body = Body::Raw {
            content_type,
            bytes,
        };
        r
    } else {
        url = format!("{base}/images/generations");
        let mut r = ApiRequest::new("openai", reqwest::Method::POST, &url);
        // gpt-image-2 always answers with b64_json and rejects response_format.
        r.body = Body::Json(json!({
            "model": OPENAI_API_MODEL, "prompt": prompt, "size": size, "n": 1, "quality": quality,
        }));
        r
    };
    req.auth = Some(("Bearer", key));
    req.timeout = timeout_cfg(ctx, "image_gen.openai.timeout");
    let what = if is_edit { "editing" } else { "generation" };
    let api_err = |m: String| GenError {
        message: format!("OpenAI image {what} failed: {m}"),
        error_type: "api_error",
    };
    let resp = http::send(http, req).await.map_err(api_err)?;
    if !(200..300).contains(&resp.status) {
        return Err(api_err(http::status_error(&resp)));
    }
    let body = resp.json().map_err(api_err)?;
    let empty = |m: &str| GenError {
        message: m.into(),
        error_type: "empty_response",
    };
    let Some(first) = body
        .get("data")
        .and_then(Value::as_array)
        .and_then(|d| d.first())
    else {
        return Err(empty("OpenAI returned no image data"));
    };
    let mut extra = Map::new();
    extra.insert("size".into(), json!(size));
    extra.insert("quality".into(), json!(quality));
    if let Some(rp) = first.get("revised_prompt").and_then(Value::as_str) {
        extra.insert("revised_prompt".into(), json!(rp));
    }
    let modality = if is_edit { "image" } else { "text" };
    if let Some(b64) = first.get("b64_json").and_then(Value::as_str) {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64.trim())
            .map_err(|e| GenError {
                message: format!("Could not save image to cache: invalid base64: {e}"),
                error_type: "io_error",
            })?;
        return Ok((
            Generated {
                url: None,
                bytes: Some(bytes),
                extra,
            },
            modality,
        ));
    }
    if let Some(u) = first.get("url").and_then(Value::as_str) {
        return Ok((
            Generated {
                url: Some(u.to_string()),
                bytes: None,
                extra,
            },
            modality,
        ));
    }
    Err(empty("OpenAI response contained neither b64_json nor URL"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hermes::{Env, HermesConfig, HermesHome};

    fn ctx(yaml: &str, env: &[(&str, &str)]) -> Context {
        Context::with_parts(
            HermesHome {
                path: "/nonexistent-hermes".into(),
                explicit: true,
            },
            Env::from_map(env.iter().map(|(k, v)| (k.to_string(), v.to_string()))),
            HermesConfig::from_yaml(yaml).unwrap(),
        )
    }

    #[test]
    fn payloads_follow_the_catalog() {
        let m = fal_model(DEFAULT_MODEL).unwrap();
        assert_eq!(
            m.payload(" a cat ", "portrait"),
            json!({"num_inference_steps":4,"output_format":"png","enable_safety_checker":false,
                   "prompt":"a cat","image_size":"portrait_16_9"})
        );
        let nb = fal_model("fal-ai/nano-banana-pro").unwrap();
        let p = nb.edit_payload("x", &["u1".into()], "square");
        assert_eq!(p["aspect_ratio"], "1:1");
        assert_eq!(p["image_urls"], json!(["u1"]));
        let g2 = fal_model("fal-ai/gpt-image-2").unwrap();
        let p = g2.edit_payload("x", &["u".into()], "square");
        assert!(
            p.get("image_size").is_none(),
            "gpt-image-2 edit infers the size"
        );
        let pro = fal_model("fal-ai/flux-2-pro").unwrap();
        assert_eq!(pro.payload("x", "landscape")["sync_mode"], true);
    }

    #[test]
    fn model_resolution_config_then_env_then_default() {
        let c = ctx(
            "image_gen: {model: fal-ai/qwen-image}",
            &[("FAL_IMAGE_MODEL", "fal-ai/z-image/turbo")],
        );
        assert_eq!(resolve_fal_model(&c).0.id, "fal-ai/qwen-image");
        let c = ctx("", &[("FAL_IMAGE_MODEL", "fal-ai/z-image/turbo")]);
        assert_eq!(resolve_fal_model(&c).0.id, "fal-ai/z-image/turbo");
        let c = ctx("image_gen: {model: nope}", &[]);
        let (m, w) = resolve_fal_model(&c);
        assert_eq!(m.id, DEFAULT_MODEL);
        assert!(w.unwrap().contains("Unknown FAL model 'nope'"));
    }

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
            Availability::Unavailable(r) if r.contains("'xai' is not supported"))
        );
    }

    #[test]
    fn openai_tiers() {
        assert_eq!(
            resolve_openai_tier(&ctx("", &[])),
            ("gpt-image-2-medium", "medium")
        );
        assert_eq!(
            resolve_openai_tier(&ctx("image_gen: {model: gpt-image-2-high}", &[])),
            ("gpt-image-2-high", "high")
        );
        assert_eq!(
            resolve_openai_tier(&ctx(
                "image_gen: {model: x, openai: {model: gpt-image-2-low}}",
                &[]
            )),
            ("gpt-image-2-low", "low")
        );
    }

    #[test]
    fn aspect_ratio_is_forgiving() {
        assert_eq!(resolve_aspect_ratio(Some("Square")).0, "square");
        let (a, w) = resolve_aspect_ratio(Some("wide"));
        assert_eq!(a, "landscape");
        assert!(w.is_some());
    }

    #[test]
    fn local_sources_must_be_images() {
        let d = tempfile::tempdir().unwrap();
        let key = d.path().join("id_rsa");
        std::fs::write(&key, "-----BEGIN KEY-----").unwrap();
        let e = fal_source(key.to_str().unwrap()).unwrap_err();
        assert!(e.message.contains("not a PNG"), "{}", e.message);
        let png = d.path().join("a.png");
        std::fs::write(&png, b"\x89PNG\r\n\x1a\nrest").unwrap();
        assert!(
            fal_source(png.to_str().unwrap())
                .unwrap()
                .starts_with("data:image/png;base64,")
        );
        assert_eq!(fal_source("https://x/y.png").unwrap(), "https://x/y.png");
    }
}
