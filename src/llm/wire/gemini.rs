//! Gemini's native generateContent wire (hermes-agent:
//! agent/gemini_native_adapter.py `GeminiNativeClient`,
//! `build_gemini_request`, `translate_gemini_response`, `gemini_http_error`).
//! Used, as in Hermes, for `provider: gemini` at a
//! generativelanguage.googleapis.com base not ending in `/openai` (and, ours,
//! any base whose path ends in `/v1beta`).

use serde_json::{Map, Value, json};

use serde::Deserialize;

use super::openai::{self, ChatAnswer};
use super::{CallError, Failure};
use crate::llm::endpoint::AuxConfig;
use crate::llm::request::{Request, split_data_url};
use crate::net::HttpClient;

/// hermes_cli `__version__`, which the client sends as its identity.
const HERMES_VERSION: &str = "0.19.0";

/// `_FREE_TIER_GUIDANCE`, appended to a 429 that names the free tier.
const FREE_TIER_GUIDANCE: &str = "\n\nYour Google API key is on the free tier (<= 250 requests/day for gemini-2.5-flash). Hermes typically makes 3-10 API calls per user turn, so the free tier is exhausted in a handful of messages and cannot sustain an agent session. Enable billing on your Google Cloud project and regenerate the key in a billing-enabled project: https://aistudio.google.com/apikey";

/// `GeminiNativeClient._headers`.
pub(crate) fn headers(key: &str) -> Vec<(String, String)> {
    [
        ("Accept", "application/json".to_string()),
        ("x-goog-api-key", key.to_string()),
        (
            "User-Agent",
            format!("hermes-agent/{HERMES_VERSION} (gemini-native)"),
        ),
        (
            "X-Goog-Api-Client",
            format!("hermes-agent/{HERMES_VERSION}"),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// `build_gemini_request`: a text task's system text as
/// `systemInstruction` and its turns (assistant ones as `model`); vision's
/// prompt and image as `inlineData`; temperature, `maxOutputTokens`, and
/// `extra_body.thinking_config` as `thinkingConfig`.
pub(crate) fn request(cfg: &AuxConfig, req: &Request) -> Value {
    let mut config = Map::new();
    if let Some(t) = req.temperature {
        config.insert("temperature".into(), json!(t));
    }
    let max_tokens = req.limits.max_tokens.unwrap_or(cfg.max_tokens);
    config.insert("maxOutputTokens".into(), json!(max_tokens));
    let thinking = cfg
        .extra_body
        .get("thinking_config")
        .or_else(|| cfg.extra_body.get("thinkingConfig"));
    if let Some(Value::Object(t)) = thinking {
        let mut n = Map::new();
        if let Some(b) = t
            .get("thinkingBudget")
            .or_else(|| t.get("thinking_budget"))
            .and_then(Value::as_f64)
        {
            n.insert("thinkingBudget".into(), json!(b as i64));
        }
        if let Some(i) = t
            .get("includeThoughts")
            .or_else(|| t.get("include_thoughts"))
            .and_then(Value::as_bool)
        {
            n.insert("includeThoughts".into(), json!(i));
        }
        if let Some(l) = t
            .get("thinkingLevel")
            .or_else(|| t.get("thinking_level"))
            .and_then(Value::as_str)
            && !l.trim().is_empty()
        {
            n.insert("thinkingLevel".into(), json!(l.trim().to_lowercase()));
        }
        if !n.is_empty() {
            config.insert("thinkingConfig".into(), Value::Object(n));
        }
    }
    let mut body = Map::new();
    let contents = match &req.image {
        Some(image) => {
            let prompt = req.prompt();
            let mut parts = Vec::new();
            if !prompt.is_empty() {
                parts.push(json!({"text": prompt}));
            }
            // Hermes keeps only data: URLs (others are dropped from the request).
            if let Some((mime, data)) = split_data_url(image) {
                parts.push(json!({"inlineData": {"mimeType": mime, "data": data}}));
            }
            if parts.is_empty() {
                json!([])
            } else {
                json!([{"role": "user", "parts": parts}])
            }
        }
        None => {
            // Text tasks (agent/gemini_native_adapter.py `build_gemini_request`).
            let system = req.system.join("\n");
            if !system.is_empty() {
                body.insert(
                    "systemInstruction".into(),
                    json!({"role": "system", "parts": [{"text": system.trim()}]}),
                );
            }
            let turns: Vec<Value> = req
                .turns
                .iter()
                .map(|t| {
                    let role = if t.role == "assistant" {
                        "model"
                    } else {
                        "user"
                    };
                    json!({"role": role, "parts": [{"text": t.text}]})
                })
                .collect();
            Value::Array(turns)
        }
    };
    body.insert("contents".into(), contents);
    body.insert("generationConfig".into(), Value::Object(config));
    Value::Object(body)
}

#[derive(Deserialize, Default)]
struct Part {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    thought: Option<bool>,
}

/// `translate_gemini_response`: text parts joined as content, thought
/// parts as reasoning.
pub(crate) fn answer(v: &Value) -> ChatAnswer {
    let parts: Vec<Part> = v
        .pointer("/candidates/0/content/parts")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|p| Part::deserialize(p).ok()).collect())
        .unwrap_or_default();
    let (mut text, mut thought) = (String::new(), String::new());
    for p in &parts {
        if let Some(t) = &p.text {
            if p.thought == Some(true) {
                thought.push_str(t);
            } else {
                text.push_str(t);
            }
        }
    }
    let msg = json!({
        "content": (!text.is_empty()).then_some(text),
        "reasoning": (!thought.is_empty()).then_some(thought),
    });
    ChatAnswer::deserialize(json!({"choices": [{"message": msg}]})).unwrap_or_default()
}

/// `gemini_http_error`'s message.
pub(crate) fn error_message(status: u16, body: &str) -> String {
    let parsed: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let err = parsed.get("error").filter(|e| e.is_object());
    let field = |k: &str| {
        err.and_then(|e| e.get(k))
            .and_then(Value::as_str)
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    let (err_status, err_message) = (field("status"), field("message"));
    let mut message = if err_message.is_empty() {
        format!(
            "Gemini returned HTTP {status}: {}",
            body.chars().take(500).collect::<String>()
        )
    } else {
        let s = if err_status.is_empty() {
            "error"
        } else {
            &err_status
        };
        format!("Gemini HTTP {status} ({s}): {err_message}")
    };
    let basis = if err_message.is_empty() {
        body
    } else {
        &err_message
    };
    if status == 429 && basis.to_lowercase().contains("free_tier") {
        message.push_str(FREE_TIER_GUIDANCE);
    }
    message
}

/// One generateContent call; the answer text (may be empty).
pub(crate) async fn chat(
    http: &HttpClient,
    cfg: &AuxConfig,
    req: &Request,
) -> Result<String, CallError> {
    let base = cfg.base_url.trim_end_matches('/');
    let base = base.strip_suffix("/openai").unwrap_or(base);
    let url = format!("{base}/models/{}:generateContent", cfg.model);
    let key = cfg.api_key.as_deref().unwrap_or_default();
    match super::post_json(http, cfg, &url, &headers(key), &request(cfg, req)).await? {
        Err(Failure { status, text }) => Err(CallError {
            status: Some(status),
            message: error_message(status, &text),
        }),
        Ok(text) => {
            let v = super::json_answer(&url, &text)?;
            Ok(openai::extract_content_or_reasoning(&answer(&v)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_and_errors() {
        let v = json!({"candidates": [{"content": {"parts": [
            {"text": "plan", "thought": true}, {"text": "A "}, {"text": "dog."}
        ]}}]});
        assert_eq!(openai::extract_content_or_reasoning(&answer(&v)), "A dog.");
        assert_eq!(
            openai::extract_content_or_reasoning(&answer(&json!({}))),
            ""
        );
        assert_eq!(
            error_message(
                400,
                r#"{"error":{"code":400,"message":"bad image","status":"INVALID_ARGUMENT"}}"#
            ),
            "Gemini HTTP 400 (INVALID_ARGUMENT): bad image"
        );
        assert_eq!(error_message(502, "oops"), "Gemini returned HTTP 502: oops");
    }
}
