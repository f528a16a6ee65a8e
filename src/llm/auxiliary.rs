//! The resolved auxiliary endpoint ([`AuxConfig`]: provider, URL, key,
//! model, wire and `auxiliary.<task>.*` tuning, built by [`aux_config`]),
//! the [`Mode`] a task runs in, and the OpenAI-compatible chat-completions
//! client (hermes-agent: agent/auxiliary_client.py `call_llm`), with
//! vision's request body, Hermes' error hints and DeepInfra's catalog
//! lookup. Which endpoint a task gets is decided in resolve.rs.
//!
//! Native mode (vision's default): no auxiliary model; Codex's model sees
//! the image itself, and a text task does without.

use std::sync::LazyLock;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::hermes::Context;
use crate::hermes::envvars;
use crate::net::{ApiError, HttpClient};

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
const HERMES_VERSION: &str = "0.19.0";

/// Hermes' `full_prompt` for `vision_analyze`.
pub(crate) fn analysis_prompt(question: &str) -> String {
    format!(
        "Fully describe and explain everything about this image, then answer the following question:\n\n{question}"
    )
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AuxConfig {
    /// Hermes' task (`vision`, `web_extract`, `tts_audio_tags`): `auxiliary.<task>.*`.
    pub task: String,
    /// Hermes' provider name (`openrouter`, `nous`, `custom`, `openai-codex`,
    /// an API-key provider).
    pub provider: String,
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
    /// The wire the endpoint speaks (clients.rs sets non-OpenAI ones).
    pub wire: super::providers::Wire,
    /// The ChatGPT sign-in for [`Wire::CodexResponses`](super::providers::Wire).
    pub codex: Option<super::codex::CodexSignIn>,
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

/// `auxiliary.vision.download_timeout` (Hermes reads `HERMES_VISION_DOWNLOAD_TIMEOUT`
/// first, then the config key; default 30 s).
pub(crate) fn download_timeout(ctx: &Context) -> Duration {
    let secs = ctx
        .env
        .get(envvars::HERMES_VISION_DOWNLOAD_TIMEOUT)
        .and_then(|v| v.trim().parse::<f64>().ok())
        .or_else(|| ctx.config().f64("auxiliary.vision.download_timeout"))
        .filter(|s| s.is_finite() && *s > 0.0)
        .unwrap_or(30.0);
    Duration::from_secs_f64(secs.min(3600.0))
}

/// The client settings for `provider` at `base_url`: `auxiliary.<task>.*`
/// tuning (timeout, temperature, max_tokens, extra_body, reasoning_effort)
/// and the provider's headers/tags.
pub(crate) fn aux_config(
    ctx: &Context,
    task: &str,
    provider: &str,
    base_url: String,
    api_key: Option<String>,
    model: String,
) -> Result<AuxConfig, Unusable> {
    let cfg = ctx.config();
    let key = |k: &str| format!("auxiliary.{task}.{k}");
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
        .f64(&key("timeout"))
        .filter(|t| t.is_finite() && *t > 0.0)
        .unwrap_or(default_timeout)
        .min(3600.0);
    let temperature = cfg
        .f64(&key("temperature"))
        .filter(|t| t.is_finite())
        .unwrap_or(0.1);
    let max_tokens = cfg
        .f64(&key("max_tokens"))
        .filter(|t| t.is_finite() && *t >= 1.0)
        .map(|t| t as u64)
        .unwrap_or(2000);
    let mut extra_body = match cfg.get(&key("extra_body")) {
        Some(Value::Object(m)) => m.clone(),
        _ => Map::new(),
    };
    if let Some(effort) = ctx.config_str(&key("reasoning_effort"))
        && !extra_body.contains_key("reasoning")
    {
        extra_body.insert("reasoning".into(), json!({ "effort": effort.trim() }));
    }
    let mut extra_headers = Vec::new();
    if provider == "openrouter" || is_host(&base_url, "openrouter.ai") {
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
    if provider == "nous" || is_host(&base_url, "inference-api.nousresearch.com") {
        extra_body.entry("tags").or_insert_with(|| {
            json!([
                "product=hermes-agent",
                format!("client=hermes-client-v{HERMES_VERSION}")
            ])
        });
    }
    Ok(AuxConfig {
        task: task.to_string(),
        provider: provider.to_string(),
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

/// The chat-completions request Hermes' `call_llm(task="vision")` sends
/// (hermes-agent: agent/auxiliary_client.py): one user message with the
/// prompt and the image.
#[derive(Serialize)]
struct ChatRequest<'a> {
    model: &'a str,
    messages: [UserMessage<'a>; 1],
    temperature: f64,
    max_tokens: u64,
}

#[derive(Serialize)]
struct UserMessage<'a> {
    role: &'static str,
    content: [Part<'a>; 2],
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Part<'a> {
    Text { text: &'a str },
    ImageUrl { image_url: ImageUrl<'a> },
}

#[derive(Serialize)]
struct ImageUrl<'a> {
    url: &'a str,
}

/// The chat-completions request body: the prompt and the image as a data URL,
/// with `extra_body` merged at the top level (as the OpenAI SDK does: a key
/// there replaces the built one in place).
pub(crate) fn request_body(cfg: &AuxConfig, prompt: &str, image_data_url: &str) -> Value {
    let req = ChatRequest {
        model: &cfg.model,
        messages: [UserMessage {
            role: "user",
            content: [
                Part::Text { text: prompt },
                Part::ImageUrl {
                    image_url: ImageUrl {
                        url: image_data_url,
                    },
                },
            ],
        }],
        temperature: cfg.temperature,
        max_tokens: cfg.max_tokens,
    };
    let mut body = match serde_json::to_value(&req) {
        Ok(Value::Object(m)) => m,
        _ => unreachable!("a struct serializes to an object"),
    };
    for (k, v) in &cfg.extra_body {
        body.insert(k.clone(), v.clone());
    }
    Value::Object(body)
}

/// A failed auxiliary call; the text is what Hermes' hint matching reads.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub(crate) struct CallError {
    pub status: Option<u16>,
    pub message: String,
}

impl CallError {
    /// A request that got no answer, worded as Hermes' OpenAI SDK words it
    /// (`timed_out`: the text for a timeout, which each wire words its own way).
    pub(crate) fn from_send(e: ApiError, url: &str, timed_out: String) -> Self {
        CallError {
            status: matches!(e, ApiError::RateLimited { .. }).then_some(429),
            message: match e {
                ApiError::Timeout => timed_out,
                ApiError::RateLimited { .. } => format!("Error code: 429 - rate limited by {url}"),
                other => format!("Connection error calling {url}: {other}"),
            },
        }
    }
}

/// The timeout text of the chat-completions, Anthropic and Gemini wires.
pub(crate) fn request_timed_out(cfg: &AuxConfig, url: &str) -> String {
    format!(
        "Request timed out after {} s (auxiliary.{}.timeout) calling {url}",
        cfg.timeout.as_secs(),
        cfg.task
    )
}

/// The parts of a chat-completions answer Hermes reads. Lenient: servers
/// that call themselves OpenAI-compatible differ, and a field of an
/// unexpected type reads as absent rather than failing the answer.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ChatAnswer {
    #[serde(default, deserialize_with = "lenient::items")]
    choices: Vec<Choice>,
    /// Some gateways answer 200 with an error object.
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
struct Choice {
    #[serde(default, deserialize_with = "lenient::or_default")]
    message: Message,
}

#[derive(Debug, Default, Deserialize)]
struct Message {
    #[serde(default, deserialize_with = "lenient::or_default")]
    content: Option<Content>,
    #[serde(default, deserialize_with = "lenient::string")]
    reasoning: Option<String>,
    #[serde(default, deserialize_with = "lenient::string")]
    reasoning_content: Option<String>,
    #[serde(default, deserialize_with = "lenient::items")]
    reasoning_details: Vec<Detail>,
}

/// `content`: a string, or (some servers) a list of parts with `text`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Content {
    Text(String),
    Parts(#[serde(deserialize_with = "lenient::items")] Vec<TextPart>),
}

#[derive(Debug, Default, Deserialize)]
struct TextPart {
    #[serde(default, deserialize_with = "lenient::string")]
    text: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct Detail {
    #[serde(default, deserialize_with = "lenient::string")]
    summary: Option<String>,
    #[serde(default, deserialize_with = "lenient::string")]
    content: Option<String>,
    #[serde(default, deserialize_with = "lenient::string")]
    text: Option<String>,
}

// Lenient field readers for [`ChatAnswer`]: the crate's one set, in crate::net.
use crate::lenient;

/// DeepInfra's default vision model: the first catalog entry tagged both
/// `chat` (or, for entries with no surface tag, an id that is not an
/// embedding/speech/image model) and `vision` (hermes-agent:
/// plugins/model-providers/deepinfra `default_vision_model`,
/// hermes_cli/models.py `_fetch_deepinfra_models_by_tag("chat")`).
pub(crate) async fn catalog_vision_model(
    http: &HttpClient,
    base: &str,
    key: &str,
) -> Option<String> {
    static EXCLUDE: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(
            r"(?i)(embed|rerank|whisper|stable-diffusion|flux|sdxl|tts|bark|speech|image-gen|clip|vit-|dpt-)",
        )
        .expect("valid regex")
    });
    const SURFACES: [&str; 6] = ["chat", "embed", "image-gen", "tts", "stt", "video-gen"];
    let url = format!(
        "{}/models?filter=true&sort_by=hermes",
        base.trim_end_matches('/')
    );
    let req = http
        .api()
        .get(&url)
        .timeout(Duration::from_secs(5))
        .header("User-Agent", format!("hermes-cli/{HERMES_VERSION}"))
        .bearer_auth(key);
    let resp = http
        .send_api("vision:deepinfra", Duration::ZERO, req)
        .await
        .ok()?;
    if !(200..300).contains(&resp.status) {
        return None;
    }
    let v = resp.json().ok()?;
    v.get("data")?.as_array()?.iter().find_map(|item| {
        let id = item.get("id")?.as_str().filter(|s| !s.is_empty())?;
        let meta = item.get("metadata").filter(|m| !m.is_null())?;
        let tags: Vec<&str> = meta
            .get("tags")
            .and_then(Value::as_array)
            .map(|t| t.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let chat = if tags.iter().any(|t| SURFACES.contains(t)) {
            tags.contains(&"chat")
        } else {
            !EXCLUDE.is_match(id)
        };
        (chat && tags.contains(&"vision")).then(|| id.to_string())
    })
}

/// One chat-completions call; returns the answer text (may be empty).
pub(crate) async fn chat(
    http: &HttpClient,
    cfg: &AuxConfig,
    body: &Value,
) -> Result<String, CallError> {
    let url = format!("{}/chat/completions", cfg.base_url);
    let mut req = http
        .api()
        .post(&url)
        .timeout(cfg.timeout)
        .header("Content-Type", "application/json")
        .body(body.to_string());
    if let Some(k) = &cfg.api_key {
        req = req.bearer_auth(k);
    }
    for (k, v) in &cfg.extra_headers {
        req = req.header(k, v);
    }
    let provider = format!("vision:{}", cfg.provider);
    let resp = http
        .send_api(&provider, Duration::ZERO, req)
        .await
        .map_err(|e| CallError::from_send(e, &url, request_timed_out(cfg, &url)))?;
    if !(200..300).contains(&resp.status) {
        // The OpenAI SDK's `APIStatusError` text, which Hermes' hints match on.
        let mut text = resp.text();
        if text.chars().count() > 1000 {
            text = text.chars().take(1000).collect::<String>() + "…";
        }
        return Err(CallError {
            status: Some(resp.status),
            message: format!("Error code: {} - {}", resp.status, text.trim()),
        });
    }
    let v = resp.json().map_err(|e| CallError {
        status: Some(resp.status),
        message: format!("invalid chat-completions response from {url}: {e}"),
    })?;
    // An answer that is JSON but not an object reads as an empty answer.
    let answer = ChatAnswer::deserialize(v).unwrap_or_default();
    if let Some(err) = answer.error.as_ref() {
        return Err(CallError {
            status: err.get("code").and_then(Value::as_u64).map(|c| c as u16),
            message: format!("Error: {err}"),
        });
    }
    Ok(extract_content_or_reasoning(&answer))
}

static THINK: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(
        r"(?is)<(?:think|thinking|reasoning|thought|REASONING_SCRATCHPAD)>.*?</(?:think|thinking|reasoning|thought|REASONING_SCRATCHPAD)>",
    )
    .expect("valid regex")
});

/// Hermes' `extract_content_or_reasoning` (hermes-agent:
/// agent/auxiliary_client.py): the message content without inline think
/// blocks, else the structured reasoning fields.
pub(crate) fn extract_content_or_reasoning(resp: &ChatAnswer) -> String {
    let default = Message::default();
    let msg = resp.choices.first().map_or(&default, |c| &c.message);
    let content = match &msg.content {
        Some(Content::Text(s)) => s.clone(),
        Some(Content::Parts(parts)) => parts
            .iter()
            .filter_map(|p| p.text.as_deref())
            .collect::<Vec<_>>()
            .join(""),
        None => String::new(),
    };
    let content = content.trim();
    if !content.is_empty() {
        let cleaned = THINK.replace_all(content, "");
        let cleaned = cleaned.trim();
        if !cleaned.is_empty() {
            return cleaned.to_string();
        }
    }
    let mut parts: Vec<String> = Vec::new();
    for field in [&msg.reasoning, &msg.reasoning_content] {
        if let Some(s) = field.as_deref().map(str::trim).filter(|s| !s.is_empty())
            && !parts.iter().any(|p| p == s)
        {
            parts.push(s.to_string());
        }
    }
    for d in &msg.reasoning_details {
        let s = [&d.summary, &d.content, &d.text]
            .into_iter()
            .find_map(|f| f.as_deref().filter(|s| !s.is_empty()));
        if let Some(s) = s
            && !parts.iter().any(|p| p == s.trim())
        {
            parts.push(s.trim().to_string());
        }
    }
    parts.join("\n\n")
}

/// Hermes' `_is_image_size_error`.
pub(crate) fn is_size_error(message: &str) -> bool {
    let m = message.to_lowercase();
    [
        "too large",
        "payload",
        "413",
        "content_too_large",
        "request_too_large",
        "image_url",
        "invalid_request",
        "exceeds",
        "size limit",
    ]
    .iter()
    .any(|h| m.contains(h))
}

/// Hermes' friendly `analysis` text for a failed auxiliary analysis.
pub(crate) fn friendly_hint(error: &str, model: &str) -> String {
    let m = error.to_lowercase();
    let any = |hs: &[&str]| hs.iter().any(|h| m.contains(h));
    if any(&[
        "402",
        "insufficient",
        "payment required",
        "credits",
        "billing",
    ]) {
        format!(
            "Insufficient credits or payment required. Please top up your API provider account and try again. Error: {error}"
        )
    } else if any(&[
        "does not support",
        "not support image",
        "content_policy",
        "multimodal",
        "unrecognized request argument",
        "image input",
    ]) {
        format!(
            "{model} does not support vision or our request was not accepted by the server. Error: {error}"
        )
    } else if any(&["invalid_request", "image_url"]) {
        format!(
            "The vision API rejected the image. This can happen when the image is in an unsupported format, corrupted, or still too large after auto-resize. Try a smaller JPEG/PNG and retry. Error: {error}"
        )
    } else {
        format!(
            "There was a problem with the request and the image could not be analyzed. Error: {error}"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_extraction() {
        let read = |v: Value| extract_content_or_reasoning(&ChatAnswer::deserialize(v).unwrap());
        let r = json!({"choices":[{"message":{"content":"<think>hmm</think> A cat."}}]});
        assert_eq!(read(r), "A cat.");
        let r = json!({"choices":[{"message":{"content":null,"reasoning":"It is a dog."}}]});
        assert_eq!(read(r), "It is a dog.");
        let r = json!({"choices":[{"message":{"content":""}}]});
        assert_eq!(read(r), "");
        let r = json!({"choices":[{"message":{"content":[{"text":"A "},{"type":"x"},{"text":"bird."}]}}]});
        assert_eq!(read(r), "A bird.");
        let r = json!({"choices":[{"message":{"content":7,"reasoning_details":[{"summary":""},{"text":"Why."}]}}]});
        assert_eq!(read(r), "Why.");
        let r = json!({"choices":"odd"});
        assert_eq!(read(r), "");
    }

    #[test]
    fn hints() {
        assert!(friendly_hint("Error code: 402 - {}", "m").starts_with("Insufficient credits"));
        assert!(
            friendly_hint("model does not support image input", "m")
                .starts_with("m does not support vision")
        );
        assert!(
            friendly_hint("Error code: 400 - invalid_request", "m")
                .starts_with("The vision API rejected")
        );
        assert!(friendly_hint("Error code: 500 - boom", "m").starts_with("There was a problem"));
        assert!(is_size_error("Error code: 413 - too big"));
    }
}
