//! One adapter per wire an auxiliary endpoint speaks: [`openai`] (chat
//! completions), [`anthropic`] (Messages), [`gemini`] (native
//! generateContent) and [`codex`] (Codex Responses with the ChatGPT
//! sign-in, also image_gen's client). Each turns the canonical
//! [`Request`] into its wire's body and its answer back into text, with the
//! failures worded as Hermes' clients word them (the text Hermes' hints and
//! size retries match on). Separate from routing (which endpoint) and from
//! the tasks (what to ask): only this room knows a wire's shape.

pub(crate) mod anthropic;
pub(crate) mod codex;
pub(crate) mod gemini;
pub(crate) mod openai;

use std::time::Duration;

use serde_json::Value;

use super::endpoint::AuxConfig;
use super::request::Request;
use crate::net::{ApiError, HttpClient};

/// The wire format an auxiliary endpoint speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Wire {
    /// OpenAI chat completions (`POST {base}/chat/completions`).
    #[default]
    OpenAi,
    /// Anthropic Messages (`POST {base}/v1/messages`), with its auth style.
    Anthropic(AnthropicAuth),
    /// Gemini's native `POST {base}/models/{model}:generateContent`.
    Gemini,
    /// The Codex Responses endpoint with the ChatGPT sign-in (`POST
    /// {base}/responses`, streamed): text tasks when the main provider is
    /// `openai-codex` (hermes-agent: agent/auxiliary_client.py
    /// `CodexAuxiliaryClient`). Vision never uses it (Codex's model looks).
    CodexResponses,
}

impl Wire {
    /// How `hermes-mcp tools` names the wire after the model (nothing for
    /// OpenAI chat completions).
    pub(crate) fn shown(self) -> &'static str {
        match self {
            Wire::OpenAi => "",
            Wire::Anthropic(_) => ", Anthropic Messages",
            Wire::Gemini => ", Gemini generateContent",
            Wire::CodexResponses => ", Codex Responses",
        }
    }
}

/// How an Anthropic Messages endpoint is authenticated (hermes-agent:
/// agent/anthropic_adapter.py `build_anthropic_client`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AnthropicAuth {
    /// `x-api-key` plus the common betas.
    ApiKey,
    /// Kimi's `/coding` endpoint: `x-api-key`, `User-Agent: claude-code/0.1.0`.
    KimiCoding,
    /// `Authorization: Bearer` (MiniMax, Azure, Palantir Foundry); MiniMax
    /// gets only the betas it accepts.
    Bearer { minimax: bool },
    /// An Anthropic OAuth/setup token: Bearer, the OAuth betas, Claude
    /// Code's user agent and `x-app: cli`; with `system_prompt` (clients
    /// built by `_try_anthropic`) the request carries Claude Code's system
    /// prompt.
    OAuth { system_prompt: bool },
}

/// One call on the endpoint's wire; the answer text.
pub(crate) async fn send(
    http: &HttpClient,
    cfg: &AuxConfig,
    req: &Request,
) -> Result<String, CallError> {
    match cfg.wire {
        Wire::OpenAi => openai::chat(http, cfg, req).await,
        Wire::Anthropic(auth) => anthropic::chat(http, cfg, auth, req).await,
        Wire::Gemini => gemini::chat(http, cfg, req).await,
        Wire::CodexResponses => codex::chat(http, cfg, req).await,
    }
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

/// A non-2xx answer: status and body text (capped) for the wire's error text.
pub(crate) struct Failure {
    pub status: u16,
    pub text: String,
}

impl Failure {
    /// The body as an error message shows it: at most 1,000 characters.
    pub(crate) fn shown(&self) -> String {
        if self.text.chars().count() > 1000 {
            self.text.chars().take(1000).collect::<String>() + "…"
        } else {
            self.text.clone()
        }
    }
}

/// POST `body` to `url` with `headers`; the answer's text, or (`Ok(Err)`)
/// an HTTP error answer.
pub(crate) async fn post_json(
    http: &HttpClient,
    cfg: &AuxConfig,
    url: &str,
    headers: &[(String, String)],
    body: &Value,
) -> Result<Result<String, Failure>, CallError> {
    let mut req = http
        .api()
        .post(url)
        .timeout(cfg.timeout)
        .header("Content-Type", "application/json")
        .body(body.to_string());
    for (k, v) in headers {
        req = req.header(k, v);
    }
    let resp = http
        .send_api(&format!("vision:{}", cfg.provider), Duration::ZERO, req)
        .await
        .map_err(|e| CallError::from_send(e, url, request_timed_out(cfg, url)))?;
    if !(200..300).contains(&resp.status) {
        // Whole (within the API body cap): a wire may parse it; shown cut.
        return Ok(Err(Failure {
            status: resp.status,
            text: resp.text().trim().to_string(),
        }));
    }
    Ok(Ok(resp.text()))
}

/// A 2xx answer's JSON, or the error Hermes' clients raise for non-JSON.
pub(crate) fn json_answer(url: &str, text: &str) -> Result<Value, CallError> {
    serde_json::from_str(text).map_err(|e| CallError {
        status: None,
        message: format!("invalid JSON answer from {url}: {e}"),
    })
}
