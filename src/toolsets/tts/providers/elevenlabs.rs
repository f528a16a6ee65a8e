//! ElevenLabs speech, `POST /v1/text-to-speech/{voice_id}` (hermes-agent:
//! `tools/tts_tool.py`, `_generate_elevenlabs`). The answer is the audio itself.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::{Produced, fetch_audio};
use crate::hermes::Context;
use crate::net::vendor::{ApiRequest, Body};
use crate::toolsets::tts::audio;
use crate::toolsets::tts::config::section_str;
use crate::toolsets::tts::error::TtsError;
use crate::toolsets::tts::plan::DEFAULT_ELEVENLABS_MODEL_ID;

pub(crate) const DEFAULT_ELEVENLABS_VOICE_ID: &str = "pNInz6obpgDQGcFmaJgB";
pub(crate) const DEFAULT_ELEVENLABS_BASE_URL: &str = "https://api.elevenlabs.io";
const API_TIMEOUT: Duration = Duration::from_secs(120);

/// ElevenLabs `POST /v1/text-to-speech/{voice_id}` (Hermes' `_generate_elevenlabs`).
pub(crate) async fn elevenlabs_speech(
    ctx: &Context,
    http: &crate::net::HttpClient,
    cfg: &Map<String, Value>,
    key: &str,
    text: &str,
    output: &mut PathBuf,
) -> Result<Produced, TtsError> {
    let voice_id = section_str(cfg, "elevenlabs", "voice_id")
        .unwrap_or_else(|| DEFAULT_ELEVENLABS_VOICE_ID.into());
    let model_id = section_str(cfg, "elevenlabs", "model_id")
        .unwrap_or_else(|| DEFAULT_ELEVENLABS_MODEL_ID.into());
    if !voice_id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(TtsError::Config(format!(
            "tts.elevenlabs.voice_id {voice_id:?} is not a voice id (letters, digits, '_' and '-')"
        )));
    }
    let base = ctx
        .sections()
        .tts
        .elevenlabs_base_url
        .clone()
        .unwrap_or_else(|| DEFAULT_ELEVENLABS_BASE_URL.into())
        .trim_end_matches('/')
        .to_string();
    let mut notes = Vec::new();
    // ElevenLabs sends Opus for .ogg and MP3 otherwise (as Hermes asks);
    // MP3 bytes are never written under a .wav/.flac name.
    let output_format = if audio::format_of(output) == Some("ogg") {
        "opus_48000_64"
    } else {
        if matches!(audio::format_of(output), Some("wav" | "flac")) {
            let mp3 = output.with_extension("mp3");
            notes.push(format!(
                "ElevenLabs returns MP3 here; wrote {}",
                mp3.display()
            ));
            *output = mp3;
        }
        "mp3_44100_128"
    };
    let url = format!("{base}/v1/text-to-speech/{voice_id}?output_format={output_format}");
    let mut req = ApiRequest::new("elevenlabs", reqwest::Method::POST, &url);
    req.headers.push(("xi-api-key", key.to_string()));
    req.headers.push(("accept", "audio/*".to_string()));
    req.body = Body::Json(json!({"text": text, "model_id": model_id}));
    req.timeout = API_TIMEOUT;
    fetch_audio(http, req, "ElevenLabs", output).await?;
    Ok(Produced {
        path: output.clone(),
        notes,
        duration: None,
    })
}
