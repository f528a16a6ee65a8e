//! gpt-image-2 through the ChatGPT sign-in (`image_gen.provider: openai-codex`, hermes-agent:
//! `plugins/image_gen/openai-codex`): one streamed `POST <base>/responses` to the Codex
//! Responses endpoint with the hosted `image_generation` tool, no API key.
//!
//! The request goes through the one Codex client ([`crate::llm::wire::codex`]: the sign-in from
//! Hermes' credential pool, Hermes' auth store, then Codex's own `$CODEX_HOME/auth.json`; an
//! HTTP 401 refreshes the Hermes-held token once and retries — beyond Hermes). The answer is
//! Server-Sent Events; as in Hermes the raw events are parsed (not an SDK's typed ones) and the
//! newest image found anywhere in an event wins: an `image_generation_call` item's `result`,
//! or a `partial_image_b64`. The stream is read chunk by chunk so only the newest image is
//! held, not the whole body; an `error` / `response.failed` event's message is added to
//! Hermes' "no image" text (beyond Hermes). Config: `image_gen.openai-codex.base_url` (default
//! `https://chatgpt.com/backend-api/codex`), `image_gen.openai-codex.token_url` (default
//! `https://auth.openai.com/oauth/token`; loopback addresses only), `image_gen.openai-codex.timeout` (seconds, 300).

use std::time::Duration;

use base64::Engine as _;
use serde_json::{Map, Value, json};

use super::{Outcome, Request};
use crate::auth::codex::{self as codex_auth, CodexAuthError, TokenSource, codex_home};
use crate::auth::store::now;
use crate::hermes::Context;
use crate::llm::wire::codex::{Answer, CodexClient, CodexError, CodexSignIn, error_text};
use crate::net::vendor::MAX_IMAGE_BYTES;
use crate::server::Progress;
use crate::toolsets::image_gen::catalog::{
    OPENAI_API_MODEL, OPENAI_SIZES, aspect_index, resolve_gpt_tier, timeout_cfg,
};
use crate::toolsets::image_gen::error::GenError;
use crate::toolsets::image_gen::save::Generated;
use crate::toolsets::image_gen::source::read_local_image;

pub(crate) const PROVIDER: &str = "openai-codex";
pub(crate) const DISPLAY: &str = "OpenAI (Codex auth)";
/// `_MAX_REFERENCE_IMAGES`.
pub(crate) const MAX_INPUT_IMAGES: usize = 16;
/// The chat model that hosts the tool (`_CODEX_CHAT_MODEL`).
const CHAT_MODEL: &str = "gpt-5.5";
const INSTRUCTIONS: &str = "You are an assistant that must fulfill image generation and image editing requests by using the image_generation tool when provided.";
const UNSUPPORTED_ERROR: &str = "Tool choice 'image_generation' not found in 'tools' parameter.";
const UNAVAILABLE_MESSAGE: &str = "Image generation is not enabled for the current Codex account. Switch the image provider to OpenAI API key, FAL, or xAI.";
pub(crate) const NO_AUTH_MESSAGE: &str = "No Codex/ChatGPT OAuth credentials available. Run `hermes auth codex` (or `hermes setup` → Codex) to sign in.";

/// Where the sign-in comes from, without network (selection, availability, `tools`).
pub(crate) fn sign_in(ctx: &Context) -> Option<TokenSource> {
    codex_auth::sign_in_source(&ctx.home.path, codex_home(ctx).as_deref(), now())
}

pub(crate) fn describe_source(s: &TokenSource) -> String {
    match s {
        TokenSource::CredentialPool { id } => {
            format!("Hermes credential pool entry '{id}' (auth.json)")
        }
        TokenSource::HermesAuthStore => "Hermes' auth.json (openai-codex)".into(),
        TokenSource::CodexCli => "Codex's sign-in ($CODEX_HOME/auth.json)".into(),
    }
}

fn base_url(ctx: &Context) -> String {
    ctx.sections()
        .image_gen
        .provider("openai-codex")
        .base_url
        .clone()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| codex_auth::DEFAULT_CODEX_BASE_URL.to_string())
        .trim_end_matches('/')
        .to_string()
}

/// OpenAI's token endpoint. `image_gen.openai-codex.token_url` may move it
/// only to a loopback address (tests, a local proxy): anywhere else would
/// hand Hermes' single-use refresh token to whoever config.yaml names.
fn token_url(ctx: &Context) -> String {
    let configured = ctx
        .sections()
        .image_gen
        .provider("openai-codex")
        .token_url
        .clone()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty());
    match configured {
        Some(u) if is_loopback_url(&u) => u,
        Some(u) => {
            tracing::warn!(
                "image_gen.openai-codex.token_url {u:?} is not a loopback address; using {}",
                codex_auth::OAUTH_TOKEN_URL
            );
            codex_auth::OAUTH_TOKEN_URL.to_string()
        }
        None => codex_auth::OAUTH_TOKEN_URL.to_string(),
    }
}

fn is_loopback_url(u: &str) -> bool {
    url::Url::parse(u).is_ok_and(|u| match u.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        None => false,
    })
}

/// `_build_responses_payload`.
pub(crate) fn payload(prompt: &str, size: &str, quality: &str, images: &[Value]) -> Value {
    let mut content = vec![json!({"type": "input_text", "text": prompt})];
    content.extend(images.iter().cloned());
    json!({
        "model": CHAT_MODEL,
        "store": false,
        "instructions": INSTRUCTIONS,
        "input": [{"type": "message", "role": "user", "content": content}],
        "tools": [{
            "type": "image_generation", "model": OPENAI_API_MODEL, "size": size, "quality": quality,
            "output_format": "png", "background": "opaque", "partial_images": 1,
        }],
        "tool_choice": {"type": "allowed_tools", "mode": "required", "tools": [{"type": "image_generation"}]},
        "stream": true,
    })
}

/// Why a source image cannot be sent (`_to_input_image_part`'s `ValueError`s); the
/// call fails with `invalid_image_input` quoting this text.
#[derive(Debug, thiserror::Error)]
enum ImageInputError {
    #[error("Blank image input")]
    Blank,
    #[error("Image data URL is missing a comma separator")]
    NoComma,
    #[error("Only base64 data:image URLs are supported as Codex image inputs")]
    NotBase64Image,
    #[error(transparent)]
    Base64(#[from] base64::DecodeError),
    #[error("Image data URL exceeds 25MB cap")]
    TooLarge,
    #[error("Image data URL does not contain supported image bytes")]
    NotImage,
    /// A local file that cannot be read or is not an image.
    #[error(transparent)]
    Local(GenError),
}

/// `_to_input_image_part`: a URL passes through (the endpoint fetches it), a `data:image/…`
/// URL is checked and re-encoded, a local file must be a PNG, JPEG, GIF or WebP.
fn input_image_part(value: &str) -> Result<Value, ImageInputError> {
    let v = value.trim();
    if v.is_empty() {
        return Err(ImageInputError::Blank);
    }
    let lower = v.to_ascii_lowercase();
    let url = if lower.starts_with("http://") || lower.starts_with("https://") {
        v.to_string()
    } else if lower.starts_with("data:") {
        let (header, data) = v.split_once(',').ok_or(ImageInputError::NoComma)?;
        let h = header.to_ascii_lowercase();
        if !h.starts_with("data:image/") || !h.contains(";base64") {
            return Err(ImageInputError::NotBase64Image);
        }
        let raw = base64::engine::general_purpose::STANDARD.decode(data.trim())?;
        if raw.len() > MAX_IMAGE_BYTES {
            return Err(ImageInputError::TooLarge);
        }
        let mime = crate::image::sniff::saveable_mime(&raw).ok_or(ImageInputError::NotImage)?;
        data_url(mime, &raw)
    } else {
        let (raw, mime) = read_local_image(v).map_err(ImageInputError::Local)?;
        data_url(mime, &raw)
    };
    Ok(json!({"type": "input_image", "image_url": url}))
}

fn data_url(mime: &str, raw: &[u8]) -> String {
    format!(
        "data:{mime};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(raw)
    )
}

/// `_extract_image_b64`: the newest image anywhere in an event (depth-first, later wins).
pub(crate) fn extract_image_b64(v: &Value) -> Option<&str> {
    let mut found = None;
    match v {
        Value::Object(m) => {
            if m.get("type").and_then(Value::as_str) == Some("image_generation_call")
                && let Some(r) = m
                    .get("result")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
            {
                found = Some(r);
            }
            if let Some(p) = m
                .get("partial_image_b64")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
            {
                found = Some(p);
            }
            for child in m.values() {
                if let Some(n) = extract_image_b64(child) {
                    found = Some(n);
                }
            }
        }
        Value::Array(a) => {
            for child in a {
                if let Some(n) = extract_image_b64(child) {
                    found = Some(n);
                }
            }
        }
        _ => {}
    }
    found
}

/// An `error` or `response.failed` event's message (Codex's stream reports failures so).
fn event_error(v: &Value) -> Option<String> {
    let kind = v.get("type").and_then(Value::as_str)?;
    let err = match kind {
        "error" => v.get("error").filter(|e| e.is_object()).unwrap_or(v),
        "response.failed" | "response.incomplete" => v
            .get("response")
            .and_then(|r| r.get("error").or(r.get("incomplete_details")))?,
        _ => return None,
    };
    Some(error_text(err))
}

/// What the events so far carried.
#[derive(Default)]
struct Seen {
    image: Option<String>,
    error: Option<String>,
    partials: u64,
}

impl Seen {
    fn event(&mut self, v: &Value) {
        if let Some(b) = extract_image_b64(v) {
            self.image = Some(b.to_string());
        }
        if let Some(e) = event_error(v) {
            self.error = Some(e);
        }
        if v.get("partial_image_b64").is_some() {
            self.partials += 1;
        }
    }
}

fn is_unsupported(status: u16, body: &str) -> bool {
    if status != 400 {
        return false;
    }
    let msg = match serde_json::from_str::<Value>(body) {
        Ok(v) => v
            .get("error")
            .and_then(|e| e.get("message"))
            .and_then(Value::as_str)
            .map(str::to_string),
        Err(_) => Some(body.to_string()),
    };
    msg.is_some_and(|m| m.trim() == UNSUPPORTED_ERROR)
}

fn auth_error(e: CodexAuthError) -> GenError {
    match e {
        CodexAuthError::Missing => GenError::AuthRequired(NO_AUTH_MESSAGE.into()),
        // Signed in, but Hermes' lock kept the sign-in from being refreshed: say that.
        CodexAuthError::Store(e @ crate::auth::store::AuthStoreError::Locked(_)) => {
            GenError::AuthRequired(e.to_string())
        }
        other => GenError::AuthRequired(format!("{NO_AUTH_MESSAGE} ({other})")),
    }
}

/// Why the call failed, in the words of `codex_generate`'s errors.
fn failure_text(e: CodexError, timeout: Duration) -> String {
    match e {
        CodexError::Refresh(e) => format!(
            "Codex Responses API returned HTTP 401 and the token could not be refreshed: {e}"
        ),
        CodexError::Blocked(b) => b.to_string(),
        CodexError::Network(e) if e.is_timeout() => {
            format!("no complete answer within {}s", timeout.as_secs())
        }
        // reqwest's text never includes headers, so the token cannot leak here.
        CodexError::Network(e) => crate::redact::redact_sensitive_text(&e.to_string()),
        CodexError::Stream(e) => e.to_string(),
    }
}

fn failed(m: String) -> GenError {
    GenError::Api(format!(
        "OpenAI image generation via Codex auth failed: {m}"
    ))
}

/// One streamed request: the newest image and the stream's error, if any;
/// progress is reported per partial image.
async fn stream_image(
    client: &mut CodexClient<'_>,
    url: &reqwest::Url,
    body: &Value,
    timeout: Duration,
    progress: &Progress,
) -> Result<(Option<String>, Option<String>), GenError> {
    let answer = client
        .send(url, body, timeout)
        .await
        .map_err(|e| failed(failure_text(e, timeout)))?;
    let mut events = match answer {
        Answer::Events(events) => events,
        // A plain JSON body carries no events, so no image.
        Answer::Json(_) => return Ok((None, None)),
        Answer::Status { status, body } => {
            if is_unsupported(status, &body) {
                return Err(GenError::CapabilityUnsupported(UNAVAILABLE_MESSAGE.into()));
            }
            let short: String = body.chars().take(500).collect();
            return Err(failed(format!(
                "Codex Responses API returned HTTP {status}: {}",
                crate::redact::redact_sensitive_text(&short)
            )));
        }
    };
    let mut seen = Seen::default();
    let mut reported = 0;
    while events
        .next(&mut |v| seen.event(&v))
        .await
        .map_err(|e| failed(failure_text(e, timeout)))?
    {
        if seen.partials > reported {
            reported = seen.partials;
            progress
                .report(reported, None, "Codex: partial image received")
                .await;
        }
    }
    Ok((seen.image, seen.error))
}

pub(crate) async fn codex_generate(r: Request<'_>, progress: &Progress) -> Outcome {
    let Request { ctx, http, .. } = r;
    let (prompt, aspect, sources) = (r.prompt, r.aspect, r.sources);
    let (_tier, quality) = resolve_gpt_tier(ctx, PROVIDER);
    let size = OPENAI_SIZES[aspect_index(aspect)];
    let sign_in = CodexSignIn::new(ctx, token_url(ctx));
    let mut client = CodexClient::open(http, &sign_in)
        .await
        .map_err(auth_error)?;
    let images = sources
        .iter()
        .take(MAX_INPUT_IMAGES)
        .map(|s| input_image_part(s))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            GenError::InvalidImageInput(format!("Invalid image input for Codex image editing: {e}"))
        })?;
    let body = payload(prompt, size, quality, &images);
    let endpoint = format!("{}/responses", base_url(ctx));
    let url = reqwest::Url::parse(&endpoint)
        .map_err(|e| failed(format!("invalid URL {endpoint:?}: {e}")))?;
    let timeout = timeout_cfg(ctx, "openai-codex");
    let (image, error) = stream_image(&mut client, &url, &body, timeout, progress).await?;
    let Some(b64) = image else {
        let base = "Codex response contained no image_generation_call result";
        return Err(GenError::EmptyResponse(match error {
            Some(e) => format!("{base} (the stream reported: {e})"),
            None => base.into(),
        }));
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64.trim())
        .map_err(|e| {
            GenError::Io(format!(
                "Could not save image to cache: invalid base64: {e}"
            ))
        })?;
    let mut extra = Map::new();
    extra.insert("size".into(), json!(size));
    extra.insert("quality".into(), json!(quality));
    extra.insert("input_image_count".into(), json!(images.len()));
    Ok((
        Generated {
            url: None,
            bytes: Some(bytes),
            extra,
            model: None,
        },
        if images.is_empty() { "text" } else { "image" },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_image_wins() {
        let ev = json!({"type": "response.completed", "response": {"output": [
            {"type": "image_generation_call", "result": "FIRST"},
            {"type": "image_generation_call", "result": "SECOND"}]}});
        assert_eq!(extract_image_b64(&ev), Some("SECOND"));
        let partial = json!({"type": "response.image_generation_call.partial_image", "partial_image_b64": "P"});
        assert_eq!(extract_image_b64(&partial), Some("P"));
        assert_eq!(
            extract_image_b64(&json!({"type": "image_generation_call", "result": ""})),
            None
        );
    }

    #[test]
    fn stream_errors_are_named() {
        assert_eq!(
            event_error(
                &json!({"type": "error", "code": "rate_limit_exceeded", "message": "slow down"})
            ),
            Some("rate_limit_exceeded: slow down".into())
        );
        assert_eq!(
            event_error(
                &json!({"type": "response.failed", "response": {"error": {"code": "server_error", "message": "boom"}}})
            ),
            Some("server_error: boom".into())
        );
        assert_eq!(event_error(&json!({"type": "response.completed"})), None);
    }

    #[test]
    fn unsupported_account_is_only_that_400() {
        let body = json!({"error": {"message": UNSUPPORTED_ERROR}}).to_string();
        assert!(is_unsupported(400, &body));
        assert!(!is_unsupported(403, &body));
        assert!(!is_unsupported(400, "{\"error\":{\"message\":\"other\"}}"));
    }

    #[test]
    fn input_images_must_be_images() {
        assert!(input_image_part("data:text/plain;base64,aGk=").is_err());
        assert!(
            input_image_part("data:image/png;base64,aGk=")
                .unwrap_err()
                .to_string()
                .contains("supported image bytes")
        );
        assert_eq!(
            input_image_part(" https://x/y.png ").unwrap(),
            json!({"type": "input_image", "image_url": "https://x/y.png"})
        );
    }
}
