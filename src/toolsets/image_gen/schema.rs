//! `image_generate`'s declaration: Hermes' `_build_dynamic_image_schema`
//! description for the active backend, and the schema.

use serde_json::{Value, json};

use super::backend::{Backend, backend, configured_model};
use super::catalog::{
    DEFAULT_ASPECT_RATIO, OPENAI_DEFAULT_TIER, OPENAI_MAX_SOURCES, VALID_ASPECT_RATIOS,
    resolve_fal_model,
};
use super::providers::{codex, deepinfra, krea, openrouter, xai};
use crate::hermes::Context;
use crate::server::{Hints, ToolDef};

/// The one tool; [`description`] words its text per call from the configured model.
pub(super) const DEFS: &[ToolDef] = &[ToolDef {
    name: "image_generate",
    description: "",
    schema,
    hints: Hints::WRITE_OPEN,
}];

pub(crate) const GENERIC_DESCRIPTION: &str = "Generate high-quality images from text prompts (text-to-image), or edit / transform an existing image (image-to-image) when the active model supports it. Pass `image_url` to edit that image; add `reference_image_urls` for style/composition references; omit both for text-to-image. The underlying backend (FAL, OpenAI, xAI, etc.) and model are user-configured and not selectable by the agent. Returns the result in the `image` field — either a URL or an absolute file path. To show it to the user, reference that path/URL in your response using the file-delivery convention for the current platform (your platform guidance describes how files are delivered here). When the active terminal backend has a different filesystem, successful local-file results may also include `agent_visible_image` for follow-up terminal/file operations.";

/// The OpenAI backends' model as the description names it: `image_gen.model`, trimmed (even
/// when empty), else the default quality tier.
fn openai_tier_model(ctx: &Context) -> String {
    ctx.sections()
        .image_gen
        .model
        .as_deref()
        .map_or_else(|| OPENAI_DEFAULT_TIER.to_string(), |s| s.trim().to_string())
}

/// Hermes' `_build_dynamic_image_schema` description for the active backend.
pub(crate) fn description(ctx: &Context) -> String {
    let (provider, model, both, max_refs) = match backend(ctx) {
        Backend::OpenAiCodex => {
            let model = openai_tier_model(ctx);
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
            let model = openai_tier_model(ctx);
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
}
