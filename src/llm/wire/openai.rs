//! The OpenAI chat-completions wire (hermes-agent: agent/auxiliary_client.py
//! `call_llm`): the canonical request as a `POST {base}/chat/completions`
//! body, and the answer read as Hermes reads it (content without inline
//! think blocks, else the reasoning fields).

use std::sync::LazyLock;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{CallError, request_timed_out};
use crate::llm::endpoint::AuxConfig;
use crate::llm::request::Request;
use crate::net::HttpClient;

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

/// The chat-completions body: the system messages, then the turns (vision's
/// one user message carries the prompt and the image as a data URL);
/// `temperature` and `max_tokens` as the request has them; then the
/// request's `extra` fields over them (a key there replaces the built one in
/// place, as the OpenAI SDK merges `extra_body`).
pub(crate) fn body(req: &Request) -> Value {
    let mut messages: Vec<Value> = req
        .system
        .iter()
        .map(|s| json!({"role": "system", "content": s}))
        .collect();
    for t in &req.turns {
        let content = match &req.image {
            Some(url) => json!([
                {"type": "text", "text": t.text},
                {"type": "image_url", "image_url": {"url": url}},
            ]),
            None => json!(t.text),
        };
        messages.push(json!({"role": t.role, "content": content}));
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    body.insert("messages".into(), Value::Array(messages));
    if let Some(t) = req.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let (Some(m), true) = (req.limits.max_tokens, req.limits.openai) {
        body.insert("max_tokens".into(), json!(m));
    }
    for (k, v) in &req.extra {
        body.insert(k.clone(), v.clone());
    }
    Value::Object(body)
}

/// One chat-completions call; returns the answer text (may be empty).
pub(crate) async fn chat(
    http: &HttpClient,
    cfg: &AuxConfig,
    request: &Request,
) -> Result<String, CallError> {
    let body = body(request);
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
}
