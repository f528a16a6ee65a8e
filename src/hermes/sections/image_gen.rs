//! `image_gen:` (hermes-agent: tools/image_generation_tool.py and the image
//! provider plugins): the provider, the model, and per provider
//! (`image_gen.<provider>:`) its model, endpoint and options.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::Reader;

/// `image_gen:`.
#[derive(Debug, Clone, Default)]
pub struct ImageGen {
    /// `image_gen.provider`.
    pub provider: Option<String>,
    /// `image_gen.model`.
    pub model: Option<String>,
    /// `image_gen.use_gateway` ([`super::Reader::use_gateway`]).
    pub use_gateway: bool,
    /// `image_gen.<provider>:` sections that are mappings.
    providers: BTreeMap<String, ImageGenProvider>,
}

/// `image_gen.<provider>:` (`fal`, `xai`, `krea`, `openrouter`, `deepinfra`,
/// `openai-codex`, …).
#[derive(Debug, Clone, Default)]
pub struct ImageGenProvider {
    pub model: Option<String>,
    pub base_url: Option<String>,
    /// `openai-codex`'s token endpoint.
    pub token_url: Option<String>,
    /// `xai`'s resolution.
    pub resolution: Option<String>,
    /// `krea`'s creativity.
    pub creativity: Option<String>,
    /// The request timeout in seconds (`fal`, `openai`, `openai-codex`).
    pub timeout: Option<f64>,
    /// `xai`'s `storage:` (image hosting options), when a mapping.
    pub storage: Option<Map<String, Value>>,
}

static NO_PROVIDER: ImageGenProvider = ImageGenProvider {
    model: None,
    base_url: None,
    token_url: None,
    resolution: None,
    creativity: None,
    timeout: None,
    storage: None,
};

impl ImageGen {
    pub(crate) fn read(r: &Reader<'_>, sec: Option<&Map<String, Value>>) -> Self {
        let providers = sec
            .into_iter()
            .flatten()
            .filter_map(|(name, v)| {
                let p = v.as_object()?;
                let p = Some(p);
                Some((
                    name.clone(),
                    ImageGenProvider {
                        model: r.text(p, "model"),
                        base_url: r.text(p, "base_url"),
                        token_url: r.text(p, "token_url"),
                        resolution: r.text(p, "resolution"),
                        creativity: r.text(p, "creativity"),
                        timeout: r.float(p, "timeout"),
                        storage: r.section(p, "storage").cloned(),
                    },
                ))
            })
            .collect();
        ImageGen {
            provider: r.text(sec, "provider"),
            model: r.text(sec, "model"),
            use_gateway: r.use_gateway(sec),
            providers,
        }
    }

    /// `image_gen.<name>:`, empty when missing or not a mapping.
    pub fn provider(&self, name: &str) -> &ImageGenProvider {
        self.providers.get(name).unwrap_or(&NO_PROVIDER)
    }
}
