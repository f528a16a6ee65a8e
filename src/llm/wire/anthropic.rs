//! The Anthropic Messages wire (hermes-agent:
//! agent/auxiliary_client.py `AnthropicAuxiliaryClient`, which turns the
//! chat-completions request into `messages.create`, and
//! agent/anthropic_adapter.py `build_anthropic_client` /
//! `build_anthropic_kwargs`): Anthropic itself, MiniMax's `/anthropic`
//! endpoints, Kimi's `/coding`, any `/anthropic` gateway.
//!
//! Request: `POST {base}/v1/messages` with a text task's system text and
//! turns, or vision's prompt and image as a base64 image source;
//! `max_tokens` (the model's output limit when the task sets none), `temperature` (omitted for Claude
//! models that forbid sampling parameters), `extra_body` passed through
//! (except `reasoning`, which Hermes turns into `thinking`; not done here),
//! and `stream: true`: Hermes' `create_anthropic_message` streams and keeps
//! the final message (some gateways only stream). The answer is read as
//! server-sent events, or as one JSON message when the server sends that.

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::openai::{self, ChatAnswer};
use super::{AnthropicAuth, CallError};
use crate::llm::endpoint::AuxConfig;
use crate::llm::request::{Request, split_data_url};
use crate::llm::route::providers;
use crate::net::HttpClient;

/// The SDK's `anthropic-version`.
const ANTHROPIC_VERSION: &str = "2023-06-01";

/// `normalize_model_name`: no `anthropic/` prefix; dots to hyphens in
/// Claude ids (not Bedrock ids, whose dots separate namespaces).
pub(crate) fn normalize_model(model: &str) -> String {
    let mut m = model.to_string();
    if m.get(..10)
        .is_some_and(|p| p.eq_ignore_ascii_case("anthropic/"))
    {
        m = m[10..].to_string();
    }
    let lower = m.to_ascii_lowercase();
    let bedrock = [
        "anthropic.",
        "us.anthropic.",
        "eu.anthropic.",
        "apac.anthropic.",
        "global.anthropic.",
    ]
    .iter()
    .any(|p| lower.starts_with(p));
    if !bedrock && lower.starts_with("claude-") {
        m = m.replace('.', "-");
    }
    m
}

/// `_get_anthropic_max_output`: the model's output limit (longest matching
/// key, dots as hyphens), Hermes' `max_tokens` when the caller sets none.
pub(crate) fn max_output(model: &str) -> u64 {
    const LIMITS: [(&str, u64); 20] = [
        ("claude-fable", 128_000),
        ("claude-sonnet-5", 128_000),
        ("claude-opus-4-8", 128_000),
        ("claude-opus-4-7", 128_000),
        ("claude-opus-4-6", 128_000),
        ("claude-sonnet-4-6", 64_000),
        ("claude-opus-4-5", 64_000),
        ("claude-sonnet-4-5", 64_000),
        ("claude-haiku-4-5", 64_000),
        ("claude-opus-4", 32_000),
        ("claude-sonnet-4", 64_000),
        ("claude-3-7-sonnet", 128_000),
        ("claude-3-5-sonnet", 8_192),
        ("claude-3-5-haiku", 8_192),
        ("claude-3-opus", 4_096),
        ("claude-3-sonnet", 4_096),
        ("claude-3-haiku", 4_096),
        ("minimax", 131_072),
        ("qwen3", 65_536),
        ("", 128_000),
    ];
    let m = model.to_lowercase().replace('.', "-");
    LIMITS
        .iter()
        .filter(|(k, _)| m.contains(k))
        .max_by_key(|(k, _)| k.len())
        .map_or(128_000, |(_, v)| *v)
}

/// `_forbids_sampling_params`: Claude models after the 4.6 family reject
/// any temperature.
pub(crate) fn forbids_sampling(model: &str) -> bool {
    const NO_XHIGH: [&str; 4] = [
        "claude-opus-4-6",
        "claude-opus-4.6",
        "claude-sonnet-4-6",
        "claude-sonnet-4.6",
    ];
    const LEGACY: [&str; 15] = [
        "claude-3",
        "claude-opus-4-0",
        "claude-opus-4.0",
        "claude-opus-4-1",
        "claude-opus-4.1",
        "claude-sonnet-4-0",
        "claude-sonnet-4.0",
        "claude-opus-4-2025",
        "claude-sonnet-4-2025",
        "claude-opus-4-5",
        "claude-opus-4.5",
        "claude-sonnet-4-5",
        "claude-sonnet-4.5",
        "claude-haiku-4-5",
        "claude-haiku-4.5",
    ];
    let m = model.to_lowercase();
    m.contains("claude")
        && !NO_XHIGH.iter().any(|v| m.contains(v))
        && !LEGACY.iter().any(|v| m.contains(v))
}

/// The headers `build_anthropic_client` gives the SDK client for `auth`.
pub(crate) fn headers(auth: AnthropicAuth, key: &str) -> Vec<(String, String)> {
    let common = providers::COMMON_BETAS.join(",");
    let mut h = vec![(
        "anthropic-version".to_string(),
        ANTHROPIC_VERSION.to_string(),
    )];
    let mut push = |k: &str, v: String| h.push((k.to_string(), v));
    match auth {
        AnthropicAuth::ApiKey => {
            push("x-api-key", key.to_string());
            push("anthropic-beta", common);
        }
        AnthropicAuth::KimiCoding => {
            push("x-api-key", key.to_string());
            push("User-Agent", "claude-code/0.1.0".into());
            push("anthropic-beta", common);
        }
        AnthropicAuth::Bearer { minimax } => {
            push("Authorization", format!("Bearer {key}"));
            let betas: Vec<&str> = providers::COMMON_BETAS
                .iter()
                .copied()
                .filter(|b| !minimax || *b != providers::TOOL_STREAMING_BETA)
                .collect();
            push("anthropic-beta", betas.join(","));
        }
        AnthropicAuth::OAuth { .. } => {
            push("Authorization", format!("Bearer {key}"));
            let all: Vec<&str> = providers::COMMON_BETAS
                .iter()
                .chain(providers::OAUTH_ONLY_BETAS)
                .copied()
                .collect();
            push("anthropic-beta", all.join(","));
            push(
                "User-Agent",
                format!(
                    "claude-code/{} (external, cli)",
                    providers::CLAUDE_CODE_VERSION
                ),
            );
            push("x-app", "cli".into());
        }
    }
    h
}

/// The Messages request for `req`: a text task's system text becomes
/// `system` and its turns keep their text (agent/anthropic_adapter.py
/// `convert_messages_to_anthropic`); vision's one user message carries the
/// prompt and the image as a base64 source.
pub(crate) fn request(cfg: &AuxConfig, auth: AnthropicAuth, req: &Request) -> Value {
    let model = normalize_model(&req.model);
    let (system, messages) = match &req.image {
        Some(image) => {
            let mut content = vec![json!({"type": "text", "text": req.prompt()})];
            match split_data_url(image) {
                Some((mime, data)) => content.push(json!({
                    "type": "image",
                    "source": {"type": "base64", "media_type": mime, "data": data},
                })),
                None if !image.is_empty() => {
                    content.push(json!({"type": "image", "source": {"type": "url", "url": image}}))
                }
                None => {}
            }
            (
                String::new(),
                vec![json!({"role": "user", "content": content})],
            )
        }
        None => (
            req.system.join("\n"),
            req.turns
                .iter()
                .map(|t| json!({"role": t.role, "content": t.text}))
                .collect(),
        ),
    };
    let max_tokens = req
        .limits
        .max_tokens
        .unwrap_or_else(|| max_output(&req.model));
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("messages".into(), Value::Array(messages));
    body.insert("max_tokens".into(), json!(max_tokens));
    let mut blocks = Vec::new();
    if matches!(
        auth,
        AnthropicAuth::OAuth {
            system_prompt: true
        }
    ) {
        blocks.push(json!({"type": "text", "text": providers::CLAUDE_CODE_SYSTEM_PREFIX}));
    }
    if !system.is_empty() {
        blocks.push(json!({"type": "text", "text": system}));
    }
    match blocks.len() {
        0 => {}
        // A text task's system prompt alone goes as a string, as Hermes sends it.
        1 if !system.is_empty() => {
            body.insert("system".into(), json!(system));
        }
        _ => {
            body.insert("system".into(), Value::Array(blocks));
        }
    }
    // The request's temperature (absent when Hermes strips it).
    if let Some(t) = req.temperature
        && !forbids_sampling(&model)
    {
        body.insert("temperature".into(), json!(t));
    }
    for (k, v) in &cfg.extra_body {
        if k != "reasoning" && !k.starts_with('_') {
            body.insert(k.clone(), v.clone());
        }
    }
    body.insert("stream".into(), json!(true));
    Value::Object(body)
}

#[derive(Deserialize)]
struct Block {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    thinking: Option<String>,
}

/// An `error` event in a streamed answer (its `error` object, as sent).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct ErrorEvent(Value);

/// A streamed answer (server-sent events) as the final message's content
/// blocks, as the SDK's `get_final_message` accumulates them; `Err` for an
/// `error` event.
pub(crate) fn from_events(text: &str) -> Result<Value, ErrorEvent> {
    let mut blocks: Vec<Value> = Vec::new();
    for line in text.lines() {
        let Some(data) = line.strip_prefix("data:") else {
            continue;
        };
        let Ok(ev) = serde_json::from_str::<Value>(data.trim()) else {
            continue;
        };
        let index = ev.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
        match ev.get("type").and_then(Value::as_str) {
            Some("error") => {
                return Err(ErrorEvent(ev.get("error").unwrap_or(&ev).clone()));
            }
            Some("content_block_start") if index < 1024 => {
                if blocks.len() <= index {
                    blocks.resize(index + 1, json!({}));
                }
                blocks[index] = ev.get("content_block").cloned().unwrap_or(json!({}));
            }
            Some("content_block_delta") => {
                let Some(b) = blocks.get_mut(index).and_then(Value::as_object_mut) else {
                    continue;
                };
                let d = ev.get("delta").cloned().unwrap_or_default();
                let (field, piece) = match d.get("type").and_then(Value::as_str) {
                    Some("text_delta") => ("text", d.get("text")),
                    Some("thinking_delta") => ("thinking", d.get("thinking")),
                    _ => continue,
                };
                let add = piece.and_then(Value::as_str).unwrap_or("");
                let cur = b
                    .get(field)
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                b.insert(field.into(), json!(cur + add));
            }
            _ => {}
        }
    }
    Ok(json!({ "content": blocks }))
}

/// The answer as a chat-completions answer: text blocks joined by newlines
/// as content, thinking blocks as reasoning (Hermes' anthropic transport).
pub(crate) fn answer(v: &Value) -> ChatAnswer {
    let blocks: Vec<Block> = v
        .get("content")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|b| Block::deserialize(b).ok())
                .collect()
        })
        .unwrap_or_default();
    let text: Vec<&str> = blocks
        .iter()
        .filter(|b| b.kind == "text")
        .filter_map(|b| b.text.as_deref())
        .collect();
    let thinking: Vec<&str> = blocks
        .iter()
        .filter(|b| b.kind == "thinking")
        .filter_map(|b| b.thinking.as_deref())
        .collect();
    let msg = json!({
        "content": (!text.is_empty()).then(|| text.join("\n")),
        "reasoning": (!thinking.is_empty()).then(|| thinking.join("\n\n")),
    });
    ChatAnswer::deserialize(json!({"choices": [{"message": msg}]})).unwrap_or_default()
}

/// One Messages call; the answer text (may be empty).
pub(crate) async fn chat(
    http: &HttpClient,
    cfg: &AuxConfig,
    auth: AnthropicAuth,
    req: &Request,
) -> Result<String, CallError> {
    let base = cfg.base_url.trim_end_matches('/');
    let base = base.strip_suffix("/v1").unwrap_or(base);
    let url = format!("{base}/v1/messages");
    let key = cfg.api_key.as_deref().unwrap_or_default();
    let mut hs = headers(auth, key);
    hs.push(("Accept".into(), "application/json".into()));
    match super::post_json(http, cfg, &url, &hs, &request(cfg, auth, req)).await? {
        // The SDK's `APIStatusError` text.
        Err(f) => Err(CallError {
            status: Some(f.status),
            message: format!("Error code: {} - {}", f.status, f.shown()),
        }),
        Ok(text) => {
            let v = if text.trim_start().starts_with('{') {
                super::json_answer(&url, &text)?
            } else {
                from_events(&text).map_err(|e| CallError {
                    status: None,
                    message: format!("Error: {e}"),
                })?
            };
            Ok(openai::extract_content_or_reasoning(&answer(&v)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_and_sampling() {
        assert_eq!(
            normalize_model("anthropic/claude-haiku-4.5"),
            "claude-haiku-4-5"
        );
        assert_eq!(normalize_model("MiniMax-M3"), "MiniMax-M3");
        assert_eq!(
            normalize_model("us.anthropic.claude-3.5"),
            "us.anthropic.claude-3.5"
        );
        assert!(!forbids_sampling("claude-haiku-4-5-20251001"));
        assert!(!forbids_sampling("claude-sonnet-4-6"));
        assert!(forbids_sampling("claude-opus-4-7"));
        assert!(!forbids_sampling("MiniMax-M3"));
    }

    #[test]
    fn answers() {
        let v = json!({"content": [
            {"type": "thinking", "thinking": "hmm"},
            {"type": "text", "text": "A cat."},
            {"type": "text", "text": "On a mat."}
        ]});
        assert_eq!(
            openai::extract_content_or_reasoning(&answer(&v)),
            "A cat.\nOn a mat."
        );
        let v = json!({"content": [{"type": "thinking", "thinking": "only thought"}]});
        assert_eq!(
            openai::extract_content_or_reasoning(&answer(&v)),
            "only thought"
        );
        assert_eq!(openai::extract_content_or_reasoning(&answer(&json!(7))), "");
        let sse = concat!(
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n",
            "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n",
            "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"A \"}}\n",
            "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"cat.\"}}\n",
        );
        let v = from_events(sse).unwrap();
        assert_eq!(openai::extract_content_or_reasoning(&answer(&v)), "A cat.");
        let err = "data: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}\n";
        assert!(
            from_events(err)
                .unwrap_err()
                .to_string()
                .contains("overloaded_error")
        );
    }
}
