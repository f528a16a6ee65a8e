//! The resolved auxiliary endpoint: what routing (route/) hands a task and
//! what a wire adapter (wire/) calls — provider, URL, key, model, wire and
//! the `auxiliary.<task>.*` tuning ([`AuxConfig`], built by [`aux_config`]),
//! and the [`Mode`] a task runs in. Apart from both because both sides share
//! it: routing decides it, the wires read it.
//!
//! Native mode (vision's default): no auxiliary model; Codex's model sees
//! the image itself, and a text task does without.

use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::hermes::Context;
use crate::llm::provider::Provider;

/// Why an auxiliary provider cannot be used as configured: the reason shown
/// in `tools`/`doctor` and in the tool's error (what to set, or what is wrong).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Unusable(pub String);

impl From<String> for Unusable {
    fn from(s: String) -> Self {
        Unusable(s)
    }
}

pub(crate) const OPENROUTER_BASE_URL: &str = "https://openrouter.ai/api/v1";
pub(crate) const NOUS_BASE_URL: &str = "https://inference-api.nousresearch.com/v1";
pub(crate) const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
/// Hermes' `_OPENROUTER_MODEL` / `_NOUS_MODEL`.
pub(crate) const DEFAULT_AGGREGATOR_MODEL: &str = "google/gemini-3-flash-preview";
/// The Hermes release whose behaviour we reproduce (Nous Portal client tag).
pub(crate) const HERMES_VERSION: &str = "0.19.0";

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AuxConfig {
    /// Hermes' task (`vision`, `web_extract`, `tts_audio_tags`): `auxiliary.<task>.*`.
    pub task: String,
    /// Hermes' provider (`openrouter`, `nous`, `custom`, `openai-codex`,
    /// an API-key provider).
    pub provider: Provider,
    pub base_url: String,
    pub api_key: Option<String>,
    pub model: String,
    pub timeout: Duration,
    pub temperature: f64,
    pub max_tokens: u64,
    pub extra_body: Map<String, Value>,
    pub extra_headers: Vec<(String, String)>,
    /// DeepInfra with no model set: the catalog base URL whose first
    /// vision-tagged chat model is used (looked up at call time).
    pub catalog: Option<String>,
    /// The wire the endpoint speaks (route/clients.rs and route/apikey.rs set non-OpenAI ones).
    pub wire: super::wire::Wire,
    /// The ChatGPT sign-in for [`Wire::CodexResponses`](super::wire::Wire).
    pub codex: Option<super::wire::codex::CodexSignIn>,
}

// Short-lived (decided per call), so the size difference does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Mode {
    /// No auxiliary model: vision returns the image to Codex's own model; a
    /// text task does without.
    Native,
    Auxiliary(AuxConfig),
    /// Auxiliary mode is configured but cannot work; the reason says what to set.
    Misconfigured(String),
}

/// The client settings for `provider` at `base_url`: `auxiliary.<task>.*`
/// tuning (timeout, temperature, max_tokens, extra_body, reasoning_effort)
/// and the provider's headers/tags.
pub(crate) fn aux_config(
    ctx: &Context,
    task: &str,
    provider: Provider,
    base_url: String,
    api_key: Option<String>,
    model: String,
) -> Result<AuxConfig, Unusable> {
    let cfg = ctx.sections().auxiliary.task(task);
    if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
        return Err(Unusable(format!(
            "auxiliary.{task}.base_url '{base_url}' is not an http(s) URL"
        )));
    }
    // Hermes' DEFAULT_CONFIG: 30 s for the short tts_audio_tags rewrite, else 120 s.
    let default_timeout = if task == "tts_audio_tags" {
        30.0
    } else {
        120.0
    };
    let timeout = cfg
        .timeout
        .filter(|t| t.is_finite() && *t > 0.0)
        .unwrap_or(default_timeout)
        .min(3600.0);
    let temperature = cfg.temperature.filter(|t| t.is_finite()).unwrap_or(0.1);
    let max_tokens = cfg
        .max_tokens
        .filter(|t| t.is_finite() && *t >= 1.0)
        .map(|t| t as u64)
        .unwrap_or(2000);
    let mut extra_body = cfg.extra_body.clone().unwrap_or_default();
    if let Some(effort) = &cfg.reasoning_effort
        && !extra_body.contains_key("reasoning")
    {
        extra_body.insert("reasoning".into(), json!({ "effort": effort.trim() }));
    }
    let mut extra_headers = Vec::new();
    if provider == Provider::OpenRouter || is_host(&base_url, "openrouter.ai") {
        // Hermes' `_OR_HEADERS_BASE` (app attribution).
        extra_headers.push((
            "HTTP-Referer".into(),
            "https://hermes-agent.nousresearch.com".into(),
        ));
        extra_headers.push(("X-Title".into(), "Hermes Agent".into()));
        extra_headers.push((
            "X-OpenRouter-Categories".into(),
            "productivity,cli-agent".into(),
        ));
    }
    if provider == Provider::Nous || is_host(&base_url, "inference-api.nousresearch.com") {
        extra_body.entry("tags").or_insert_with(|| {
            json!([
                "product=hermes-agent",
                format!("client=hermes-client-v{HERMES_VERSION}")
            ])
        });
    }
    Ok(AuxConfig {
        task: task.to_string(),
        provider,
        base_url,
        api_key,
        model,
        timeout: Duration::from_secs_f64(timeout),
        temperature,
        max_tokens,
        extra_body,
        extra_headers,
        catalog: None,
        wire: Default::default(),
        codex: None,
    })
}

/// Whether `base_url`'s host is `host` (any case).
pub(crate) fn is_host(base_url: &str, host: &str) -> bool {
    url::Url::parse(base_url)
        .ok()
        .and_then(|u| u.host_str().map(|h| h.eq_ignore_ascii_case(host)))
        .unwrap_or(false)
}
