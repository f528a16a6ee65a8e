//! The Codex Responses endpoint with the ChatGPT sign-in: one client for
//! every Codex call — image_gen's `openai-codex` provider (gpt-image-2
//! through the hosted `image_generation` tool; hermes-agent:
//! plugins/image_gen/openai-codex) and the auxiliary text tasks the resolver
//! puts on `openai-codex` (hermes-agent: agent/auxiliary_client.py
//! `CodexAuxiliaryClient` / `_CodexCompletionsAdapter.create`).
//!
//! [`CodexClient::open`] reads the token through [`codex_auth`] (Hermes'
//! credential pool, Hermes' auth store, then Codex's own
//! `$CODEX_HOME/auth.json`). [`CodexClient::send`] POSTs a Responses request
//! with the sign-in's headers ([`codex_auth::request_headers`]) to a URL the
//! network policy allows (private addresses too, never cloud metadata); an
//! HTTP 401 refreshes the Hermes-held sign-in once and retries, as Hermes'
//! runtime does (Codex's own sign-in is never refreshed here), and a 429
//! waits out a short `Retry-After` as net's `send_api` does. A 2xx answer is
//! read as server-sent events, chunk by chunk, through net::sse
//! ([`Events`]), or whole when a proxy answers plain JSON.
//!
//! For text tasks ([`chat`]) the canonical request becomes a Responses
//! request ([`request`]; agent/codex_responses_adapter.py
//! `_chat_messages_to_responses_input`, agent/transports/codex.py
//! `_content_cache_key`): system messages become `instructions` (default
//! "You are a helpful assistant."), the others `input` items; `store:
//! false`, `stream: true`, `prompt_cache_key` from the instructions; no
//! temperature or token limit (Hermes' adapter drops them);
//! `extra_body.reasoning` as Hermes maps it. The answer is the final
//! `response.completed` output text, else the text deltas.

use std::path::PathBuf;
use std::time::Duration;

use reqwest::Url;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::CallError;
use crate::auth::codex::{self as codex_auth, CodexAuthError, CodexToken, codex_home};
use crate::auth::store::now;
use crate::hermes::Context;
use crate::llm::endpoint::AuxConfig;
use crate::llm::request::Request;
use crate::net::client::{api_error, retry_after};
use crate::net::sse::{MAX_EVENT_BYTES, SseParser, StreamError};
use crate::net::{ApiError, Blocked, HttpClient, Limits, Policy, check_url, ratelimit};

/// Where the ChatGPT sign-in is read (and refreshed) at call time.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CodexSignIn {
    pub hermes_home: PathBuf,
    pub codex_home: Option<PathBuf>,
    /// OpenAI's token endpoint.
    pub token_url: String,
}

impl CodexSignIn {
    /// The sign-in Hermes would use for `ctx`, refreshed at `token_url`.
    pub(crate) fn new(ctx: &Context, token_url: String) -> Self {
        CodexSignIn {
            hermes_home: ctx.home.path.clone(),
            codex_home: codex_home(ctx),
            token_url,
        }
    }
}

/// Why a Codex call has no answer to read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CodexError {
    /// The endpoint refused the token (HTTP 401) and refreshing it failed.
    #[error("{0}")]
    Refresh(CodexAuthError),
    /// The network policy refuses the URL.
    #[error(transparent)]
    Blocked(Blocked),
    /// The request or the answer's body failed (timeouts included).
    #[error("{0}")]
    Network(reqwest::Error),
    /// The event stream broke (an event too large, or not JSON).
    #[error(transparent)]
    Stream(StreamError),
}

/// What the endpoint answered (one per call, so the stream's size does not
/// matter).
#[allow(clippy::large_enum_variant)]
pub(crate) enum Answer {
    /// A non-2xx status and (the first 64 KiB of) its body.
    Status { status: u16, body: String },
    /// A 2xx event stream, read with [`Events::next`].
    Events(Events),
    /// A 2xx plain JSON body (some proxies answer so).
    Json(Vec<u8>),
}

/// A 2xx answer's event stream.
pub(crate) struct Events {
    resp: reqwest::Response,
    parser: SseParser,
    /// Bytes read before the answer was known to be a stream.
    head: Vec<u8>,
    done: bool,
}

impl Events {
    /// Hand the next chunk's events to `on_event`; `false` once the stream
    /// has ended (its last event handed over too).
    pub(crate) async fn next(
        &mut self,
        on_event: &mut (dyn FnMut(Value) + Send),
    ) -> Result<bool, CodexError> {
        if self.done {
            return Ok(false);
        }
        if !self.head.is_empty() {
            let head = std::mem::take(&mut self.head);
            self.parser
                .push(&head, on_event)
                .map_err(CodexError::Stream)?;
            return Ok(true);
        }
        match self.resp.chunk().await.map_err(CodexError::Network)? {
            Some(c) => {
                self.parser.push(&c, on_event).map_err(CodexError::Stream)?;
                Ok(true)
            }
            None => {
                self.done = true;
                self.parser.finish(on_event).map_err(CodexError::Stream)?;
                Ok(false)
            }
        }
    }
}

/// An error answer's body is read up to this much.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// A signed-in client for the Codex Responses endpoint.
pub(crate) struct CodexClient<'a> {
    http: &'a HttpClient,
    sign_in: &'a CodexSignIn,
    token: CodexToken,
}

impl<'a> CodexClient<'a> {
    /// Read the sign-in (a Hermes-held token about to expire is refreshed
    /// first).
    pub(crate) async fn open(
        http: &'a HttpClient,
        sign_in: &'a CodexSignIn,
    ) -> Result<Self, CodexAuthError> {
        let token = codex_auth::resolve_token(
            http.api(),
            &sign_in.token_url,
            &sign_in.hermes_home,
            sign_in.codex_home.as_deref(),
            now(),
        )
        .await?;
        Ok(CodexClient {
            http,
            sign_in,
            token,
        })
    }

    /// POST the Responses request `body` to `url` (see the module doc for
    /// the 401 and 429 retries).
    pub(crate) async fn send(
        &mut self,
        url: &Url,
        body: &Value,
        timeout: Duration,
    ) -> Result<Answer, CodexError> {
        let floor = Policy {
            allow_private: true,
            ..self.http.policy().clone()
        };
        check_url(url, &floor).map_err(CodexError::Blocked)?;
        let payload = serde_json::to_vec(body).unwrap_or_default();
        let (mut refreshed, mut limited) = (false, 0);
        loop {
            ratelimit::acquire(codex_auth::PROVIDER, Duration::ZERO).await;
            let resp = self
                .post(url, &payload, timeout)
                .await
                .map_err(CodexError::Network)?;
            let status = resp.status().as_u16();
            if (200..300).contains(&status) {
                return answer(resp).await;
            }
            if status == 401 && !refreshed {
                refreshed = true;
                self.token = codex_auth::refresh_rejected(
                    self.http.api(),
                    &self.sign_in.token_url,
                    &self.sign_in.hermes_home,
                    &self.token,
                    now(),
                )
                .await
                .map_err(CodexError::Refresh)?;
                continue;
            }
            if status == 429 {
                limited += 1;
                if wait_again(resp.headers(), limited) {
                    continue;
                }
            }
            return Ok(Answer::Status {
                status,
                body: error_body(resp).await?,
            });
        }
    }

    async fn post(
        &self,
        url: &Url,
        payload: &[u8],
        timeout: Duration,
    ) -> Result<reqwest::Response, reqwest::Error> {
        let mut req = self
            .http
            .api()
            .post(url.clone())
            .timeout(timeout)
            .header("Accept", "text/event-stream")
            .header("Content-Type", "application/json")
            .body(payload.to_vec());
        for (k, v) in codex_auth::request_headers(&self.token) {
            req = req.header(k, v);
        }
        req.send().await
    }
}

/// The 429 rule of net's `send_api`: defer the provider by `Retry-After`
/// (1 s without one) and try again while the wait is short, at most three
/// tries in all (two without `Retry-After`).
fn wait_again(headers: &reqwest::header::HeaderMap, tries: u32) -> bool {
    let wait = retry_after(headers);
    ratelimit::defer(codex_auth::PROVIDER, wait.unwrap_or(Duration::from_secs(1)));
    match wait {
        Some(w) => w <= Limits::default().max_retry_wait && tries < 3,
        None => tries < 2,
    }
}

/// A 2xx answer: plain JSON when its first non-blank byte opens an object,
/// else an event stream.
async fn answer(mut resp: reqwest::Response) -> Result<Answer, CodexError> {
    let mut head = Vec::new();
    while head.iter().all(u8::is_ascii_whitespace) {
        match resp.chunk().await.map_err(CodexError::Network)? {
            Some(c) => head.extend_from_slice(&c),
            None => break,
        }
    }
    if !head.trim_ascii_start().starts_with(b"{") {
        return Ok(Answer::Events(Events {
            resp,
            parser: SseParser::default(),
            head,
            done: false,
        }));
    }
    while let Some(c) = resp.chunk().await.map_err(CodexError::Network)? {
        if head.len() + c.len() > MAX_EVENT_BYTES {
            return Err(CodexError::Stream(StreamError::EventTooLarge));
        }
        head.extend_from_slice(&c);
    }
    Ok(Answer::Json(head))
}

/// The first [`MAX_ERROR_BODY`] bytes of an error answer.
async fn error_body(mut resp: reqwest::Response) -> Result<String, CodexError> {
    let mut body = Vec::new();
    while let Some(c) = resp.chunk().await.map_err(CodexError::Network)? {
        body.extend_from_slice(&c);
        if body.len() > MAX_ERROR_BODY {
            break;
        }
    }
    Ok(String::from_utf8_lossy(&body).into_owned())
}

/// Hermes' default `instructions` when the task sends no system message.
const DEFAULT_INSTRUCTIONS: &str = "You are a helpful assistant.";

/// `_content_cache_key(instructions, None)`: `pck_` + the first 24 hex digits
/// of SHA-256 over the instructions and a NUL (no tools).
pub(crate) fn cache_key(instructions: &str) -> String {
    let digest = Sha256::digest(format!("{instructions}\0").as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("pck_{}", &hex[..24])
}

/// The Responses request for `req` (see the module doc): the last system
/// message as `instructions`, the turns as `input` items.
pub(crate) fn request(cfg: &AuxConfig, req: &Request) -> Value {
    let instructions = req
        .system
        .last()
        .cloned()
        .unwrap_or_else(|| DEFAULT_INSTRUCTIONS.to_string());
    let mut input: Vec<Value> = req
        .turns
        .iter()
        .map(|t| {
            let content = match &req.image {
                Some(url) => json!([
                    {"type": "text", "text": t.text},
                    {"type": "image_url", "image_url": {"url": url}},
                ]),
                None => json!(t.text),
            };
            json!({"role": t.role, "content": content})
        })
        .collect();
    if input.is_empty() {
        input.push(json!({"role": "user", "content": ""}));
    }
    let model = &req.model;
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("instructions".into(), json!(instructions));
    body.insert("input".into(), Value::Array(input));
    body.insert("store".into(), json!(false));
    if let Some(Value::Object(r)) = cfg.extra_body.get("reasoning")
        && r.get("enabled") != Some(&Value::Bool(false))
    {
        let effort = match r.get("effort").and_then(Value::as_str) {
            None | Some("") => "medium",
            Some("minimal") => "low",
            Some(e) => e,
        };
        body.insert(
            "reasoning".into(),
            json!({"effort": effort, "summary": "auto"}),
        );
        body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    }
    if !instructions.is_empty() {
        body.insert("prompt_cache_key".into(), json!(cache_key(&instructions)));
    }
    body.insert("stream".into(), json!(true));
    Value::Object(body)
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
                self.error = Some(error_text(e));
            }
            "response.failed" | "response.incomplete" => {
                let r = v.get("response");
                let e = r
                    .and_then(|r| r.get("error").or(r.get("incomplete_details")))
                    .filter(|e| !e.is_null());
                self.error = Some(e.map(error_text).unwrap_or_else(|| {
                    "Codex auxiliary Responses stream did not return a final response".into()
                }));
            }
            _ => {}
        }
    }
}

/// A stream's error object as text: `code: message` (or `reason`, or the
/// object itself when it has neither).
pub(crate) fn error_text(e: &Value) -> String {
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

impl Seen {
    /// The answer text once the stream has ended.
    fn answer(self) -> Result<String, AnswerError> {
        if let Some(e) = self.error {
            return Err(AnswerError::Failed(e));
        }
        let text = match self.final_text {
            Some(t) if !t.trim().is_empty() => t,
            Some(_) | None if !self.deltas.is_empty() => self.deltas,
            Some(t) => t,
            None => return Err(AnswerError::NoFinal),
        };
        Ok(text.trim().to_string())
    }
}

/// Why a Codex answer has no text.
#[derive(Debug, thiserror::Error)]
enum AnswerError {
    #[error("invalid JSON answer from the Codex endpoint: {0}")]
    Json(#[source] serde_json::Error),
    /// An `error` / `response.failed` event's message.
    #[error("{0}")]
    Failed(String),
    #[error("Codex auxiliary Responses stream did not return a final response")]
    NoFinal,
}

fn auth_failure(e: CodexAuthError) -> CallError {
    CallError {
        status: Some(401),
        message: format!(
            "No Codex/ChatGPT OAuth credentials available ({e}). Run `hermes auth codex` to sign in."
        ),
    }
}

fn no_text(e: AnswerError) -> CallError {
    CallError {
        status: None,
        message: e.to_string(),
    }
}

/// One text-task call on the Codex wire; the answer text (may be empty).
pub(crate) async fn chat(
    http: &HttpClient,
    cfg: &AuxConfig,
    req: &Request,
) -> Result<String, CallError> {
    let Some(sign_in) = cfg.codex.as_ref() else {
        return Err(CallError {
            status: None,
            message: "the Codex wire has no sign-in to read".into(),
        });
    };
    let url = format!("{}/responses", cfg.base_url.trim_end_matches('/'));
    let payload = request(cfg, req);
    let mut client = CodexClient::open(http, sign_in)
        .await
        .map_err(auth_failure)?;
    let parsed = Url::parse(&url).map_err(|e| CallError {
        status: None,
        message: format!("Connection error calling {url}: {e}"),
    })?;
    let failed = |e: CodexError| call_failure(e, cfg, &url, &parsed);
    match client
        .send(&parsed, &payload, cfg.timeout)
        .await
        .map_err(failed)?
    {
        Answer::Status { status: 429, .. } => Err(CallError::from_send(
            ApiError::RateLimited { retry_after: None },
            &url,
            String::new(),
        )),
        Answer::Status { status, body } => {
            let mut text = body;
            if text.chars().count() > 1000 {
                text = text.chars().take(1000).collect::<String>() + "…";
            }
            Err(CallError {
                status: Some(status),
                message: format!("Error code: {status} - {}", text.trim()),
            })
        }
        Answer::Json(bytes) => serde_json::from_slice::<Value>(&bytes)
            .map(|v| output_text(&v).trim().to_string())
            .map_err(|e| no_text(AnswerError::Json(e))),
        Answer::Events(mut events) => {
            let mut seen = Seen::default();
            while events.next(&mut |v| seen.event(&v)).await.map_err(failed)? {}
            seen.answer().map_err(no_text)
        }
    }
}

/// A text call's failure, worded as the OpenAI SDK Hermes uses words it.
fn call_failure(e: CodexError, cfg: &AuxConfig, url: &str, parsed: &Url) -> CallError {
    let timed_out = format!(
        "Codex auxiliary Responses stream exceeded {:.1}s total timeout (auxiliary.{}.timeout)",
        cfg.timeout.as_secs_f64(),
        cfg.task
    );
    match e {
        CodexError::Refresh(e) => auth_failure(e),
        CodexError::Blocked(b) => CallError::from_send(ApiError::Blocked(b), url, timed_out),
        CodexError::Network(e) => CallError::from_send(api_error(e, parsed), url, timed_out),
        CodexError::Stream(e) => CallError {
            status: None,
            message: e.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The answer text of a whole body, read as [`chat`] reads it.
    fn read_answer(text: &str) -> Result<String, AnswerError> {
        if text.trim_start().starts_with('{') {
            let v: Value = serde_json::from_str(text).map_err(AnswerError::Json)?;
            return Ok(output_text(&v).trim().to_string());
        }
        let mut parser = SseParser::default();
        let mut seen = Seen::default();
        parser
            .push(text.as_bytes(), &mut |v| seen.event(&v))
            .unwrap();
        parser.finish(&mut |v| seen.event(&v)).unwrap();
        seen.answer()
    }

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
