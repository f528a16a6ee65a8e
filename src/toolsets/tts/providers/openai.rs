//! OpenAI speech, `POST /audio/speech` (hermes-agent: `tools/tts_tool.py`,
//! `_generate_openai_tts`). The answer is the audio itself.
//!
//! Through the Nous tool gateway (`openai-audio` vendor,
//! `_resolve_openai_audio_client_config`): base `<origin>/v1` (unless
//! `tts.openai.base_url` is set, which still wins), the Nous token as the
//! bearer, and a model outside the gateway's list (`gpt-4o-mini-tts`) is
//! replaced by the default, as Hermes does.

use std::path::Path;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::{Produced, fetch_audio};
use crate::gateway;
use crate::hermes::Context;
use crate::net::vendor::{ApiRequest, Body};
use crate::toolsets::tts::audio;
use crate::toolsets::tts::config::{num, section, section_str};
use crate::toolsets::tts::error::TtsError;

pub(crate) const DEFAULT_OPENAI_MODEL: &str = "gpt-4o-mini-tts";
pub(crate) const DEFAULT_OPENAI_VOICE: &str = "alloy";
pub(crate) const DEFAULT_OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
const API_TIMEOUT: Duration = Duration::from_secs(120);
/// `MANAGED_OPENAI_TTS_MODELS`.
const MANAGED_MODELS: [&str; 1] = ["gpt-4o-mini-tts"];

/// The Nous gateway's key and base (`<origin>/v1`), or Hermes' error text.
async fn managed(
    ctx: &Context,
    http: &crate::net::HttpClient,
) -> Result<(String, String), TtsError> {
    match gateway::resolve(ctx, http, "openai-audio").await {
        Ok(g) => Ok((g.token().to_string(), format!("{}/v1", g.origin))),
        Err(gateway::Unavailable::BadScheme) => {
            Err(TtsError::Config(gateway::Unavailable::BadScheme.reason()))
        }
        Err(u) => {
            let mut m = "Neither VOICE_TOOLS_OPENAI_KEY nor OPENAI_API_KEY is set".to_string();
            if u.entitled() || ctx.sections().tts.use_gateway {
                m += ". ";
                m +=
                    &gateway::unavailable_message(ctx, http, "managed OpenAI audio for TTS", false)
                        .await;
            }
            Err(TtsError::Config(m))
        }
    }
}

/// Hermes' `_tts_response_format_from_path`.
pub(crate) fn openai_response_format(path: &Path) -> &'static str {
    match audio::format_of(path) {
        Some("ogg") => "opus",
        Some("wav") => "wav",
        Some("flac") => "flac",
        _ => "mp3",
    }
}

/// One OpenAI-compatible speech request (OpenAI itself, DeepInfra).
pub(crate) struct SpeechCall<'a> {
    /// Names the service in errors (`OpenAI`, `DeepInfra`).
    pub(crate) service: &'static str,
    pub(crate) base: String,
    pub(crate) key: &'a str,
    pub(crate) model: String,
    pub(crate) voice: String,
    pub(crate) speed: f64,
}

/// OpenAI `POST /audio/speech` (Hermes' `_generate_openai_tts`).
/// `key` `None`: through the Nous tool gateway.
pub(crate) async fn openai_speech(
    ctx: &Context,
    http: &crate::net::HttpClient,
    cfg: &Map<String, Value>,
    key: Option<&str>,
    text: &str,
    output: &Path,
) -> Result<Produced, TtsError> {
    let (key, fallback_base, is_managed) = match key {
        Some(k) => (k.to_string(), DEFAULT_OPENAI_BASE_URL.to_string(), false),
        None => {
            let (k, b) = managed(ctx, http).await?;
            (k, b, true)
        }
    };
    let config_base = section_str(cfg, "openai", "base_url");
    let mut model =
        section_str(cfg, "openai", "model").unwrap_or_else(|| DEFAULT_OPENAI_MODEL.into());
    if is_managed && config_base.is_none() && !MANAGED_MODELS.contains(&model.as_str()) {
        tracing::warn!(
            "TTS: managed OpenAI audio gateway does not support model {model:?}; falling back to {DEFAULT_OPENAI_MODEL}. Set VOICE_TOOLS_OPENAI_KEY or OPENAI_API_KEY to use {model:?} directly."
        );
        model = DEFAULT_OPENAI_MODEL.into();
    }
    let call = SpeechCall {
        service: "OpenAI",
        model,
        voice: section_str(cfg, "openai", "voice").unwrap_or_else(|| DEFAULT_OPENAI_VOICE.into()),
        base: config_base.unwrap_or(fallback_base),
        speed: num(section(cfg, "openai").and_then(|s| s.get("speed")))
            .or_else(|| num(cfg.get("speed")))
            .unwrap_or(1.0),
        key: &key,
    };
    speech(http, &call, text, output).await
}

/// `POST {base}/audio/speech` as the OpenAI SDK sends it; the answer is the audio,
/// in the format the output path's extension asks for.
pub(crate) async fn speech(
    http: &crate::net::HttpClient,
    call: &SpeechCall<'_>,
    text: &str,
    output: &Path,
) -> Result<Produced, TtsError> {
    let mut body = json!({
        "model": call.model, "voice": call.voice, "input": text,
        "response_format": openai_response_format(output),
    });
    if call.speed != 1.0 {
        body["speed"] = json!(call.speed.clamp(0.25, 4.0));
    }
    let url = format!("{}/audio/speech", call.base.trim().trim_end_matches('/'));
    let mut req = ApiRequest::new(call.service, reqwest::Method::POST, &url);
    req.auth = Some(("Bearer", call.key.to_string()));
    req.headers
        .push(("x-idempotency-key", format!("{:032x}", fastrand::u128(..))));
    req.body = Body::Json(body);
    req.timeout = API_TIMEOUT;
    fetch_audio(http, req, &format!("{} speech", call.service), output).await?;
    Ok(Produced::written(output))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_formats_by_extension() {
        assert_eq!(openai_response_format(Path::new("a.ogg")), "opus");
        assert_eq!(openai_response_format(Path::new("a.wav")), "wav");
        assert_eq!(openai_response_format(Path::new("a.mp3")), "mp3");
        assert_eq!(openai_response_format(Path::new("a")), "mp3");
    }
}
