//! Hermes' FAL model catalog (`FAL_MODELS` in hermes-agent:
//! `tools/image_generation_tool.py`) and OpenAI's gpt-image-2 tiers
//! (hermes-agent: `plugins/image_gen/openai`), plus how config picks among them.
//! Kept apart from the HTTP clients so the catalog can be read (and tested) as data.

use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::hermes::Context;
use crate::hermes::envvars;

pub(crate) const DEFAULT_MODEL: &str = "fal-ai/flux-2/klein/9b";
pub(crate) const DEFAULT_ASPECT_RATIO: &str = "landscape";
pub(crate) const VALID_ASPECT_RATIOS: [&str; 3] = ["landscape", "square", "portrait"];
const DEFAULT_TIMEOUT_SECS: f64 = 300.0;

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
pub(crate) struct FalModel {
    pub(crate) id: &'static str,
    pub(crate) display: &'static str,
    size_style: SizeStyle,
    /// landscape, square, portrait
    sizes: [&'static str; 3],
    defaults: &'static str,
    /// The payload keys Hermes' entry accepts, space-separated, in its order.
    supports: &'static str,
    pub(crate) upscale: bool,
    pub(crate) edit_endpoint: Option<&'static str>,
    /// The same for the edit endpoint.
    edit_supports: &'static str,
    pub(crate) max_reference_images: usize,
}

const PRESET_16_9: [&str; 3] = ["landscape_16_9", "square_hd", "portrait_16_9"];
const RATIO_16_9: [&str; 3] = ["16:9", "1:1", "9:16"];

/// Krea 2 on FAL: the medium and large entries differ only in id and name.
const fn krea_2(id: &'static str, display: &'static str) -> FalModel {
    FalModel {
        id,
        display,
        size_style: SizeStyle::AspectRatio,
        sizes: RATIO_16_9,
        defaults: r#"{"creativity":"medium"}"#,
        supports: "prompt aspect_ratio creativity seed image_style_references",
        upscale: false,
        edit_endpoint: None,
        edit_supports: "",
        max_reference_images: 0,
    }
}

pub(crate) static FAL_MODELS: &[FalModel] = &[
    FalModel {
        id: "fal-ai/flux-2/klein/9b",
        display: "FLUX 2 Klein 9B",
        size_style: SizeStyle::Preset,
        sizes: PRESET_16_9,
        defaults: r#"{"num_inference_steps":4,"output_format":"png","enable_safety_checker":false}"#,
        supports: "prompt image_size num_inference_steps seed output_format enable_safety_checker",
        upscale: false,
        edit_endpoint: Some("fal-ai/flux-2/klein/9b/edit"),
        edit_supports: "prompt image_urls num_inference_steps seed output_format enable_safety_checker",
        max_reference_images: 9,
    },
    FalModel {
        id: "fal-ai/flux-2-pro",
        display: "FLUX 2 Pro",
        size_style: SizeStyle::Preset,
        sizes: PRESET_16_9,
        defaults: r#"{"num_inference_steps":50,"guidance_scale":4.5,"num_images":1,"output_format":"png","enable_safety_checker":false,"safety_tolerance":"5","sync_mode":true}"#,
        supports: "prompt image_size num_inference_steps guidance_scale num_images output_format enable_safety_checker safety_tolerance sync_mode seed",
        upscale: true,
        edit_endpoint: Some("fal-ai/flux-2-pro/edit"),
        edit_supports: "prompt image_urls num_inference_steps guidance_scale num_images output_format enable_safety_checker safety_tolerance sync_mode seed",
        max_reference_images: 9,
    },
    FalModel {
        id: "fal-ai/z-image/turbo",
        display: "Z-Image Turbo",
        size_style: SizeStyle::Preset,
        sizes: PRESET_16_9,
        defaults: r#"{"num_inference_steps":8,"num_images":1,"output_format":"png","enable_safety_checker":false,"enable_prompt_expansion":false}"#,
        supports: "prompt image_size num_inference_steps num_images seed output_format enable_safety_checker enable_prompt_expansion",
        upscale: false,
        edit_endpoint: None,
        edit_supports: "",
        max_reference_images: 0,
    },
    FalModel {
        id: "fal-ai/nano-banana-pro",
        display: "Nano Banana Pro (Gemini 3 Pro Image)",
        size_style: SizeStyle::AspectRatio,
        sizes: RATIO_16_9,
        defaults: r#"{"num_images":1,"output_format":"png","safety_tolerance":"5","resolution":"1K"}"#,
        supports: "prompt aspect_ratio num_images output_format safety_tolerance seed sync_mode resolution enable_web_search limit_generations",
        upscale: false,
        edit_endpoint: Some("fal-ai/nano-banana-pro/edit"),
        edit_supports: "prompt image_urls aspect_ratio num_images output_format safety_tolerance seed sync_mode resolution enable_web_search limit_generations",
        max_reference_images: 2,
    },
    FalModel {
        id: "fal-ai/gpt-image-1.5",
        display: "GPT Image 1.5",
        size_style: SizeStyle::GptLiteral,
        sizes: ["1536x1024", "1024x1024", "1024x1536"],
        defaults: r#"{"quality":"medium","num_images":1,"output_format":"png"}"#,
        supports: "prompt image_size quality num_images output_format background sync_mode",
        upscale: false,
        edit_endpoint: Some("fal-ai/gpt-image-1.5/edit"),
        edit_supports: "prompt image_urls image_size quality num_images output_format sync_mode",
        max_reference_images: 16,
    },
    FalModel {
        id: "fal-ai/gpt-image-2",
        display: "GPT Image 2",
        size_style: SizeStyle::Preset,
        sizes: ["landscape_4_3", "square_hd", "portrait_4_3"],
        defaults: r#"{"quality":"medium","num_images":1,"output_format":"png"}"#,
        supports: "prompt image_size quality num_images output_format sync_mode",
        upscale: false,
        edit_endpoint: Some("openai/gpt-image-2/edit"),
        edit_supports: "prompt image_urls quality num_images output_format sync_mode mask_image_url",
        max_reference_images: 16,
    },
    FalModel {
        id: "fal-ai/ideogram/v3",
        display: "Ideogram V3",
        size_style: SizeStyle::Preset,
        sizes: PRESET_16_9,
        defaults: r#"{"rendering_speed":"BALANCED","expand_prompt":true,"style":"AUTO"}"#,
        supports: "prompt image_size rendering_speed expand_prompt style seed",
        upscale: false,
        edit_endpoint: Some("fal-ai/ideogram/v3/edit"),
        edit_supports: "prompt image_urls rendering_speed expand_prompt style seed",
        max_reference_images: 1,
    },
    FalModel {
        id: "fal-ai/recraft/v4/pro/text-to-image",
        display: "Recraft V4 Pro",
        size_style: SizeStyle::Preset,
        sizes: PRESET_16_9,
        defaults: r#"{"enable_safety_checker":false}"#,
        supports: "prompt image_size enable_safety_checker colors background_color",
        upscale: false,
        edit_endpoint: None,
        edit_supports: "",
        max_reference_images: 0,
    },
    FalModel {
        id: "fal-ai/qwen-image",
        display: "Qwen Image",
        size_style: SizeStyle::Preset,
        sizes: PRESET_16_9,
        defaults: r#"{"num_inference_steps":30,"guidance_scale":2.5,"num_images":1,"output_format":"png","acceleration":"regular"}"#,
        supports: "prompt image_size num_inference_steps guidance_scale num_images output_format acceleration seed sync_mode",
        upscale: false,
        edit_endpoint: Some("fal-ai/qwen-image-2/pro/edit"),
        edit_supports: "prompt image_urls num_inference_steps guidance_scale num_images output_format acceleration seed sync_mode",
        max_reference_images: 3,
    },
    krea_2("fal-ai/krea/v2/medium/text-to-image", "Krea 2 Medium"),
    krea_2("fal-ai/krea/v2/large/text-to-image", "Krea 2 Large"),
];

pub(crate) fn aspect_index(aspect: &str) -> usize {
    match aspect {
        "square" => 1,
        "portrait" => 2,
        _ => 0,
    }
}

/// Hermes' `resolve_aspect_ratio`: lower-cased, invalid values become landscape.
pub(crate) fn resolve_aspect_ratio(value: Option<&str>) -> (String, Option<String>) {
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

/// Whether the space-separated `list` names `key`.
fn listed(list: &str, key: &str) -> bool {
    list.split_whitespace().any(|k| k == key)
}

impl FalModel {
    fn defaults(&self) -> Map<String, Value> {
        serde_json::from_str(self.defaults).unwrap_or_default()
    }

    /// Hermes' `_build_fal_payload`.
    pub(crate) fn payload(&self, prompt: &str, aspect: &str) -> Value {
        let mut p = self.defaults();
        p.insert("prompt".into(), json!(prompt.trim()));
        let size = self.sizes[aspect_index(aspect)];
        match self.size_style {
            SizeStyle::Preset | SizeStyle::GptLiteral => p.insert("image_size".into(), json!(size)),
            SizeStyle::AspectRatio => p.insert("aspect_ratio".into(), json!(size)),
        };
        Value::Object(
            p.into_iter()
                .filter(|(k, _)| listed(self.supports, k) || k == "prompt")
                .collect(),
        )
    }

    /// Hermes' `_build_fal_edit_payload`.
    pub(crate) fn edit_payload(&self, prompt: &str, image_urls: &[String], aspect: &str) -> Value {
        let mut p = self.defaults();
        p.insert("prompt".into(), json!(prompt.trim()));
        p.insert("image_urls".into(), json!(image_urls));
        let size = self.sizes[aspect_index(aspect)];
        match self.size_style {
            SizeStyle::Preset | SizeStyle::GptLiteral
                if listed(self.edit_supports, "image_size") =>
            {
                p.insert("image_size".into(), json!(size));
            }
            SizeStyle::AspectRatio if listed(self.edit_supports, "aspect_ratio") => {
                p.insert("aspect_ratio".into(), json!(size));
            }
            _ => {}
        }
        Value::Object(
            p.into_iter()
                .filter(|(k, _)| {
                    listed(self.edit_supports, k) || k == "prompt" || k == "image_urls"
                })
                .collect(),
        )
    }
}

pub(crate) fn fal_model(id: &str) -> Option<&'static FalModel> {
    FAL_MODELS.iter().find(|m| m.id == id)
}

/// Hermes' `_resolve_fal_model`: `image_gen.model`, then `FAL_IMAGE_MODEL`,
/// unknown ids fall back to the default (with a warning).
pub(crate) fn resolve_fal_model(ctx: &Context) -> (&'static FalModel, Option<String>) {
    let configured = ctx
        .sections()
        .image_gen
        .model
        .clone()
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

pub(crate) const OPENAI_API_MODEL: &str = "gpt-image-2";
pub(crate) const OPENAI_DEFAULT_TIER: &str = "gpt-image-2-medium";
const OPENAI_TIERS: [(&str, &str); 3] = [
    ("gpt-image-2-low", "low"),
    ("gpt-image-2-medium", "medium"),
    ("gpt-image-2-high", "high"),
];
pub(crate) const OPENAI_SIZES: [&str; 3] = ["1536x1024", "1024x1024", "1024x1536"];
pub(crate) const OPENAI_MAX_SOURCES: usize = 16;

/// Hermes' `_resolve_model` of the `openai` and `openai-codex` plugins: `OPENAI_IMAGE_MODEL`
/// when it is a tier id, then `image_gen.<section>.model`, then `image_gen.model` when it is a
/// tier id, else the default. Returns the tier id and its `quality`.
pub(crate) fn resolve_gpt_tier(ctx: &Context, section: &str) -> (&'static str, &'static str) {
    let is_tier = |s: &str| OPENAI_TIERS.iter().find(|(id, _)| *id == s).copied();
    ctx.env
        .get(envvars::OPENAI_IMAGE_MODEL)
        .and_then(|s| is_tier(s.trim()))
        .or_else(|| {
            ctx.sections()
                .image_gen
                .provider(section)
                .model
                .clone()
                .and_then(|s| is_tier(s.trim()))
        })
        .or_else(|| {
            ctx.sections()
                .image_gen
                .model
                .clone()
                .and_then(|s| is_tier(s.trim()))
        })
        .unwrap_or(("gpt-image-2-medium", "medium"))
}

/// The `openai` plugin's tier ([`resolve_gpt_tier`]).
pub(crate) fn resolve_openai_tier(ctx: &Context) -> (&'static str, &'static str) {
    resolve_gpt_tier(ctx, "openai")
}

/// `image_gen.<provider>.timeout` in seconds (default 300, capped at a day).
pub(crate) fn timeout_cfg(ctx: &Context, provider: &str) -> Duration {
    let secs = ctx
        .sections()
        .image_gen
        .provider(provider)
        .timeout
        .filter(|s| s.is_finite() && *s > 0.0)
        .unwrap_or(DEFAULT_TIMEOUT_SECS);
    Duration::from_secs_f64(secs.min(86_400.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hermes::context::test_ctx as ctx;

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
}
