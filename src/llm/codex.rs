//! The Codex Responses wire for auxiliary text tasks (browser snapshot
//! summaries, TTS tag rewrites) when Hermes' main provider is `openai-codex`
//! (hermes-agent: agent/auxiliary_client.py `CodexAuxiliaryClient` /
//! `_CodexCompletionsAdapter.create`, agent/codex_responses_adapter.py
//! `_chat_messages_to_responses_input`, agent/transports/codex.py
//! `_content_cache_key`).
//!
//! The chat-completions body the task built becomes a Responses request:
//! system messages become `instructions` (default "You are a helpful
//! assistant."), the others `input` items; `store: false`, `stream: true`,
//! `prompt_cache_key` from the instructions; no temperature or token limit
//! (Hermes' adapter drops them); `extra_body.reasoning` as Hermes maps it.
//! The request goes to `{base}/responses` with the ChatGPT sign-in's headers
//! ([`codex_auth::request_headers`]); the answer is read as server-sent
//! events: the final `response.completed` output text, else the text deltas.
//! An HTTP 401 refreshes the Hermes-held sign-in once and retries, as Hermes'
//! runtime does.

use std::time::Duration;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::auxiliary::{AuxConfig, CallError};
use crate::auth::codex::{self as codex_auth, CodexAuthError, CodexToken};
use crate::auth::store::now;
use crate::net::HttpClient;
use crate::net::sse::{SseParser, StreamError};

/// Hermes' default `instructions` when the task sends no system message.
const DEFAULT_INSTRUCTIONS: &str = "You are a helpful assistant.";

/// `_content_cache_key(instructions, None)`: `pck_` + the first 24 hex digits
/// of SHA-256 over the instructions and a NUL (no tools).
pub(crate) fn cache_key(instructions: &str) -> String {
    let digest = Sha256::digest(format!("{instructions}\0").as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("pck_{}", &hex[..24])
}

/// The Responses request for a chat-completions `body` (see the module doc).
pub(crate) fn request(cfg: &AuxConfig, body: &Value) -> Value {
    let mut instructions = DEFAULT_INSTRUCTIONS.to_string();
    let mut input = Vec::new();
    for m in body
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("user");
        let content = m.get("content").cloned().unwrap_or(Value::Null);
        if role == "system" {
            // The last system message wins, as in Hermes' loop.
            instructions = match content {
                Value::String(s) => s,
                Value::Null => String::new(),
                other => other.to_string(),
            };
        } else {
            let content = if content.is_null() {
                json!("")
            } else {
                content
            };
            input.push(json!({"role": role, "content": content}));
        }
    }
    if input.is_empty() {
        input.push(json!({"role": "user", "content": ""}));
    }
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or(&cfg.model);
    let mut req = Map::new();
    req.insert("model".into(), json!(model));
    req.insert("instructions".into(), json!(instructions));
    req.insert("input".into(), Value::Array(input));
    req.insert("store".into(), json!(false));
    if let Some(Value::Object(r)) = cfg.extra_body.get("reasoning")
        && r.get("enabled") != Some(&Value::Bool(false))
    {
        let effort = match r.get("effort").and_then(Value::as_str) {
            None | Some("") => "medium",
            Some("minimal") => "low",
            Some(e) => e,
        };
        req.insert(
            "reasoning".into(),
            json!({"effort": effort, "summary": "auto"}),
        );
        req.insert("include".into(), json!(["reasoning.encrypted_content"]));
    }
    if !instructions.is_empty() {
        req.insert("prompt_cache_key".into(), json!(cache_key(&instructions)));
    }
    req.insert("stream".into(), json!(true));
    Value::Object(req)
}

/// What the event stream carried.
#[derive(Default)]
struct Seen {
    deltas: String,
    final_text: Option<String>,
    error: Option<String>,
}

impl Seen {
    fn event(&mut self, v: &Value) {
        match v.get("type").and_then(Value::as_str).unwrap_or_default() {
            "response.output_text.delta" => {
                if let Some(d) = v.get("delta").and_then(Value::as_str) {
                    self.deltas.push_str(d);
                }
            }
            "response.completed" | "response.done" => {
                if let Some(r) = v.get("response") {
                    self.final_text = Some(output_text(r));
                }
            }
            "error" => {
                let e = v.get("error").filter(|e| e.is_object()).unwrap_or(v);
                self.error = Some(message_of(e));
            }
            "response.failed" | "response.incomplete" => {
                let r = v.get("response");
                let e = r
                    .and_then(|r| r.get("error").or(r.get("incomplete_details")))
                    .filter(|e| !e.is_null());
                self.error = Some(e.map(message_of).unwrap_or_else(|| {
                    "Codex auxiliary Responses stream did not return a final response".into()
                }));
            }
            _ => {}
        }
    }
}

fn message_of(e: &Value) -> String {
    let msg = e
        .get("message")
        .or(e.get("reason"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| e.to_string());
    match e.get("code").and_then(Value::as_str) {
        Some(c) if !c.is_empty() => format!("{c}: {msg}"),
        _ => msg,
    }
}

/// The `output_text` / `text` parts of a response's `message` items.
fn output_text(r: &Value) -> String {
    let mut out = String::new();
    for item in r
        .get("output")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if item.get("type").and_then(Value::as_str) != Some("message") {
            continue;
        }
        for part in item
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if matches!(
                part.get("type").and_then(Value::as_str),
                Some("output_text" | "text")
            ) {
                out.push_str(part.get("text").and_then(Value::as_str).unwrap_or(""));
            }
        }
    }
    out
}

/// Why a Codex answer has no text.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AnswerError {
    #[error("invalid JSON answer from the Codex endpoint: {0}")]
    Json(#[source] serde_json::Error),
    /// The shared SSE reader refused the stream.
    #[error(transparent)]
    Stream(StreamError),
    /// An `error` / `response.failed` event's message.
    #[error("{0}")]
    Failed(String),
    #[error("Codex auxiliary Responses stream did not return a final response")]
    NoFinal,
}

/// The answer text of a streamed (or, from some proxies, plain JSON) body.
pub(crate) fn read_answer(text: &str) -> Result<String, AnswerError> {
    if text.trim_start().starts_with('{') {
        let v: Value = serde_json::from_str(text).map_err(AnswerError::Json)?;
        return Ok(output_text(&v).trim().to_string());
    }
    let mut parser = SseParser::default();
    let mut seen = Seen::default();
    parser
        .push(text.as_bytes(), &mut |v| seen.event(&v))
        .map_err(AnswerError::Stream)?;
    parser
        .finish(&mut |v| seen.event(&v))
        .map_err(AnswerError::Stream)?;
    if let Some(e) = seen.error {
        return Err(AnswerError::Failed(e));
    }
    let text = match seen.final_text {
        Some(t) if !t.trim().is_empty() => t,
        Some(_) | None if !seen.deltas.is_empty() => seen.deltas,
        Some(t) => t,
        None => {
            return Err(AnswerError::NoFinal);
        }
    };
    Ok(text.trim().to_string())
}

fn auth_failure(e: CodexAuthError) -> CallError {
    CallError {
        status: Some(401),
        message: format!(
            "No Codex/ChatGPT OAuth credentials available ({e}). Run `hermes auth codex` to sign in."
        ),
    }
}

/// One Responses call; the answer text (may be empty).
pub(crate) async fn chat(
    http: &HttpClient,
    cfg: &AuxConfig,
    body: &Value,
) -> Result<String, CallError> {
    let Some(sign_in) = cfg.codex.as_ref() else {
        return Err(CallError {
            status: None,
            message: "the Codex wire has no sign-in to read".into(),
        });
    };
    let url = format!("{}/responses", cfg.base_url.trim_end_matches('/'));
    let payload = request(cfg, body);
    let mut token = codex_auth::resolve_token(
        http.api(),
        &sign_in.token_url,
        &sign_in.hermes_home,
        sign_in.codex_home.as_deref(),
        now(),
    )
    .await
    .map_err(auth_failure)?;
    let mut refreshed = false;
    loop {
        let (status, text) = post(http, cfg, &url, &token, &payload).await?;
        if status == 401 && !refreshed {
            refreshed = true;
            token = codex_auth::refresh_rejected(
                http.api(),
                &sign_in.token_url,
                &sign_in.hermes_home,
                &token,
                now(),
            )
            .await
            .map_err(auth_failure)?;
            continue;
        }
        if !(200..300).contains(&status) {
            let mut text = text;
            if text.chars().count() > 1000 {
                text = text.chars().take(1000).collect::<String>() + "…";
            }
            return Err(CallError {
                status: Some(status),
                message: format!("Error code: {status} - {}", text.trim()),
            });
        }
        return read_answer(&text).map_err(|e| CallError {
            status: None,
            message: e.to_string(),
        });
    }
}

async fn post(
    http: &HttpClient,
    cfg: &AuxConfig,
    url: &str,
    token: &CodexToken,
    payload: &Value,
) -> Result<(u16, String), CallError> {
    let mut req = http
        .api()
        .post(url)
        .timeout(cfg.timeout)
        .header("Content-Type", "application/json")
        .body(payload.to_string());
    for (k, v) in codex_auth::request_headers(token) {
        req = req.header(k, v);
    }
    let resp = http
        .send_api(codex_auth::PROVIDER, Duration::ZERO, req)
        .await
        .map_err(|e| {
            let timed_out = format!(
                "Codex auxiliary Responses stream exceeded {:.1}s total timeout (auxiliary.{}.timeout)",
                cfg.timeout.as_secs_f64(),
                cfg.task
            );
            CallError::from_send(e, url, timed_out)
        })?;
    Ok((resp.status, resp.text()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_key_matches_hermes() {
        // python: _content_cache_key("You are a helpful assistant.", None)
        assert_eq!(
            cache_key(DEFAULT_INSTRUCTIONS),
            "pck_9c16f6f671531a364e0c9073"
        );
    }

    #[test]
    fn answers() {
        let sse = "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"Hi\"}\n\nevent: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"output\":[{\"type\":\"message\",\"content\":[{\"type\":\"output_text\",\"text\":\" Hello \"}]}]}}\n\n";
        assert_eq!(read_answer(sse).unwrap(), "Hello");
        let deltas = "data: {\"type\":\"response.output_text.delta\",\"delta\":\"A\"}\n\ndata: {\"type\":\"response.completed\",\"response\":{\"output\":[]}}\n\n";
        assert_eq!(read_answer(deltas).unwrap(), "A");
        let failed = "data: {\"type\":\"response.failed\",\"response\":{\"error\":{\"code\":\"bad\",\"message\":\"no\"}}}\n\n";
        assert_eq!(read_answer(failed).unwrap_err().to_string(), "bad: no");
        assert!(read_answer("").is_err());
    }
}
