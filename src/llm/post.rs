//! One JSON POST to a vision endpoint for the non-OpenAI wires (Anthropic
//! Messages, Gemini generateContent), with the failures phrased as Hermes'
//! clients phrase them (the text Hermes' hints and size retries match on).

use std::time::Duration;

use serde_json::Value;

use super::auxiliary::{self, AuxConfig, CallError};
use crate::net::HttpClient;

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
        .map_err(|e| CallError::from_send(e, url, auxiliary::request_timed_out(cfg, url)))?;
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

/// The prompt and image (data URL) of the one-message chat request
/// `auxiliary::request_body` builds.
pub(crate) fn prompt_and_image(body: &Value) -> (String, String) {
    let parts = body
        .pointer("/messages/0/content")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut text = String::new();
    let mut image = String::new();
    for p in &parts {
        match p.get("type").and_then(Value::as_str) {
            Some("text") => text.push_str(p.get("text").and_then(Value::as_str).unwrap_or("")),
            Some("image_url") => {
                image = p
                    .pointer("/image_url/url")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string()
            }
            _ => {}
        }
    }
    (text, image)
}

/// A text task's chat messages (every `content` a string): the system
/// text (system messages joined by a newline, as Hermes' Gemini adapter
/// does) and the other turns as (role, text);
/// `None` for vision's multimodal message.
pub(crate) fn text_turns(body: &Value) -> Option<(String, Vec<(String, String)>)> {
    let msgs = body.get("messages")?.as_array()?;
    let mut system = Vec::new();
    let mut turns = Vec::new();
    for m in msgs {
        let text = m.get("content")?.as_str()?.to_string();
        match m.get("role").and_then(Value::as_str).unwrap_or("user") {
            "system" => system.push(text),
            role => turns.push((role.to_string(), text)),
        }
    }
    Some((system.join("\n"), turns))
}

/// `data:<mime>;base64,<data>` → (mime, data); `None` for anything else.
pub(crate) fn split_data_url(url: &str) -> Option<(String, String)> {
    let rest = url.strip_prefix("data:")?;
    let (header, data) = rest.split_once(',')?;
    let mime = header.split(';').next().unwrap_or("").trim();
    header
        .contains(";base64")
        .then(|| (mime.to_string(), data.to_string()))
}
