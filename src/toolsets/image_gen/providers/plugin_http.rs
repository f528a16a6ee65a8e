//! What Hermes' `requests`-based image plugins (`xai`, `openrouter`) share: one JSON POST with
//! their timeout, and their error texts — `<Display> image generation failed (<status>):
//! <error.message or the body's first 300 characters>`, `... timed out (<n>s)`,
//! `<Display> connection error: ...`, `<Display> returned invalid JSON: ...`.

use std::time::Duration;

use serde_json::Value;

use crate::net::HttpClient;
use crate::net::vendor::{self as http, ApiRequest, Failure};
use crate::toolsets::image_gen::error::GenError;

/// A plugin endpoint call.
pub(crate) struct PluginPost<'a> {
    /// The provider's name for rate limits (`xai`, `openrouter`).
    pub(crate) provider: &'a str,
    /// How Hermes names the provider in messages (`xAI`, `OpenRouter`).
    pub(crate) display: &'a str,
    pub(crate) url: &'a str,
    pub(crate) key: String,
    pub(crate) headers: Vec<(&'static str, String)>,
    pub(crate) body: Value,
    pub(crate) timeout: Duration,
}

/// The error message of a failed answer as Hermes reads it:
/// `resp.json().get("error", {}).get("message", resp.text[:300])`.
pub(crate) fn hermes_error_message(body: &[u8]) -> String {
    let text: String = String::from_utf8_lossy(body).chars().take(300).collect();
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(m)) => match m.get("error") {
            None => text,
            Some(Value::Object(e)) => match e.get("message") {
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
                None => text,
            },
            // `.get` on a non-dict raises in Hermes, which then uses the text.
            Some(_) => text,
        },
        _ => text,
    }
}

/// POST the JSON body; the parsed JSON answer, or Hermes' typed error. An HTTP failure
/// is returned as `(status, message)` through `on_status` so a caller can word it.
pub(crate) async fn post_json(
    http: &HttpClient,
    p: PluginPost<'_>,
    on_status: impl FnOnce(u16, String) -> GenError,
) -> Result<Value, GenError> {
    let mut req = ApiRequest::new(p.provider, reqwest::Method::POST, p.url)
        .bearer(p.key)
        .json(p.body)
        .timeout(p.timeout);
    req.headers = p.headers;
    let (display, timeout) = (p.display, p.timeout);
    http::exchange(http, req).await.map_err(|f| match f {
        Failure::Timeout(_) => GenError::typed(
            "timeout",
            format!(
                "{display} image generation timed out ({}s)",
                timeout.as_secs()
            ),
        ),
        Failure::RateLimited(_) => on_status(429, "rate limited (HTTP 429)".into()),
        Failure::Connection(e) => GenError::typed(
            "connection_error",
            format!("{display} connection error: {e}"),
        ),
        Failure::Status(r) => on_status(r.status, hermes_error_message(&r.body)),
        Failure::NotJson(e) => GenError::typed(
            "invalid_response",
            format!("{display} returned invalid JSON: {e}"),
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_message_like_hermes() {
        assert_eq!(
            hermes_error_message(br#"{"error":{"message":"bad key"}}"#),
            "bad key"
        );
        assert_eq!(
            hermes_error_message(br#"{"error":"plain"}"#),
            r#"{"error":"plain"}"#
        );
        assert_eq!(hermes_error_message(b"oops"), "oops");
    }
}
