//! OpenAI speech, `POST /audio/speech` (hermes-agent: `tools/tts_tool.py`,
//! `_generate_openai_tts`). The answer is the audio itself.

use std::path::Path;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::{Produced, write_audio};
use crate::toolsets::media::audio;
use crate::toolsets::media::http::{self, ApiRequest, Body};
use crate::toolsets::media::tts::config::{num, section, section_str};
use crate::toolsets::media::tts::error::TtsError;

pub(crate) const DEFAULT_OPENAI_MODEL: &str = "gpt-4o-mini-tts";
pub(crate) const DEFAULT_OPENAI_VOICE: &str = "alloy";
pub(crate) const DEFAULT_OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
const API_TIMEOUT: Duration = Duration::from_secs(120);

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
pub(crate) async fn openai_speech(
    http: &crate::net::HttpClient,
    cfg: &Map<String, Value>,
    key: &str,
    text: &str,
    output: &Path,
) -> Result<Produced, TtsError> {
    let call = SpeechCall {
        service: "OpenAI",
        model: section_str(cfg, "openai", "model").unwrap_or_else(|| DEFAULT_OPENAI_MODEL.into()),
        voice: section_str(cfg, "openai", "voice").unwrap_or_else(|| DEFAULT_OPENAI_VOICE.into()),
        base: section_str(cfg, "openai", "base_url")
            .unwrap_or_else(|| DEFAULT_OPENAI_BASE_URL.into()),
        speed: num(section(cfg, "openai").and_then(|s| s.get("speed")))
            .or_else(|| num(cfg.get("speed")))
            .unwrap_or(1.0),
        key,
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
    let resp = http::send(http, req)
        .await
        .map_err(|e| TtsError::Failed(e.to_string()))?;
    if !(200..300).contains(&resp.status) {
        return Err(TtsError::Failed(format!(
            "{} speech request failed: {}",
            call.service,
            http::status_error(&resp)
        )));
    }
    write_audio(output, &resp.body)?;
    Ok(Produced {
        path: output.to_path_buf(),
        notes: Vec::new(),
        duration: None,
    })
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
