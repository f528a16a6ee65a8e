//! TTS provider `edge` (Hermes' default): Microsoft Edge's "Read Aloud" voices, spoken over
//! the websocket protocol of the `edge-tts` Python package that Hermes calls
//! (`tools/tts_tool.py::_generate_edge_tts`; Hermes pins `edge-tts==7.2.7`, and 7.3.x speaks
//! the same protocol with a second token scheme).
//!
//! One synthesis, per text chunk (the escaped text split at 4096 bytes, as edge-tts does):
//! 1. connect to `{base_url}?TrustedClientToken=…&ConnectionId=<uuid hex>&Sec-MS-GEC=<token>
//!    &Sec-MS-GEC-Version=<v>-<chromium version>` with Edge's `Origin`, `User-Agent` and a
//!    random `muid` cookie;
//! 2. send the `speech.config` text frame (output `audio-24khz-48kbitrate-mono-mp3`), then the
//!    `ssml` text frame (`<speak><voice><prosody pitch rate volume>text</prosody></voice></speak>`);
//! 3. read `turn.start`, `response`, `audio.metadata` text frames and binary `Path:audio`
//!    frames (2-byte big-endian header length, headers, MP3 bytes) until `turn.end`.
//!
//! `Sec-MS-GEC` is derived from the Windows file time rounded down to 5 minutes: version 1
//! (edge-tts ≤ 7.2) is `SHA256(ticks + TrustedClientToken)`; version 2 (edge-tts 7.3) is a
//! CS64 digest and a SHA-256 with a fixed secret prefix (ported from `edge_tts/drm.py`). We
//! send version 2 first; on HTTP 403 we correct the clock skew from the server's `Date`
//! (as edge-tts does) and retry, then fall back to version 1.
//!
//! The parts: [`ssml`] (what is sent: escaping, chunking, the SSML and the two request
//! frames, voice/rate/volume/pitch checks), [`token`] (`Sec-MS-GEC` and the clock skew),
//! [`connection`] (the websocket over TCP/TLS, the 403 retries, the answer's frames). This
//! module is the public face: settings, [`synthesize`], the error type.
//!
//! Config (`tts.edge.*`): `voice` (default [`DEFAULT_VOICE`]), `speed` (or `tts.speed`, a
//! factor: 1.5 → rate `+50%`), `base_url` (default [`DEFAULT_BASE_URL`]; `ws://` is accepted
//! so tests can point it at a loopback server).

mod connection;
mod ssml;
mod token;

use std::time::Duration;

use crate::hermes::Context;

pub use connection::{CHROMIUM_FULL_VERSION, connect_id};
pub use ssml::{
    OUTPUT_FORMAT, Prosody, long_voice_name, mkssml, remove_incompatible_characters,
    speech_config_message, split_text_by_byte_length, ssml_message, xml_escape,
};
pub use token::{GecVersion, TRUSTED_CLIENT_TOKEN, sec_ms_gec_v1, sec_ms_gec_v2};

use connection::{Target, speak_chunk};

/// The Read Aloud websocket endpoint (edge-tts' `WSS_URL` without its query).
pub const DEFAULT_BASE_URL: &str =
    "wss://speech.platform.bing.com/consumer/speech/synthesize/readaloud/edge/v1";
/// Hermes' `DEFAULT_EDGE_VOICE` (edge-tts' own default is `en-US-EmmaMultilingualNeural`).
pub const DEFAULT_VOICE: &str = "en-US-AriaNeural";

/// Why a synthesis failed.
#[derive(Debug, thiserror::Error)]
pub enum EdgeTtsError {
    /// A voice/rate/volume/pitch edge-tts would reject (its `ValueError` texts).
    #[error("{0}")]
    InvalidParam(String),
    #[error("edge-tts base_url {url:?} is not a ws:// or wss:// URL")]
    BadUrl { url: String },
    #[error("cannot connect to the Edge TTS service at {host}: {reason}")]
    Connect { host: String, reason: String },
    /// The websocket upgrade was refused (edge-tts' `aiohttp.ClientResponseError`).
    #[error("Edge TTS service refused the connection: HTTP {status}{}", if body.is_empty() { String::new() } else { format!(": {body}") })]
    Handshake { status: u16, body: String },
    /// edge-tts' `UnexpectedResponse` / `UnknownResponse`.
    #[error("unexpected response from the Edge TTS service: {0}")]
    Protocol(String),
    #[error("Edge TTS websocket error: {0}")]
    WebSocket(#[source] Box<async_tungstenite::tungstenite::Error>),
    /// edge-tts' `NoAudioReceived`, same text.
    #[error("No audio was received. Please verify that your parameters are correct.")]
    NoAudio,
    #[error("the Edge TTS service did not answer within {0:?}")]
    Timeout(Duration),
}

/// What Hermes passes to edge-tts, from `tts.edge.*`.
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeSettings {
    pub base_url: String,
    pub voice: String,
    /// `+0%` unless `speed` ≠ 1.
    pub rate: String,
}

/// `tts.edge.voice`, `tts.edge.speed` (falling back to `tts.speed`), `tts.edge.base_url`.
pub fn settings(ctx: &Context) -> EdgeSettings {
    let edge = &ctx.sections().tts.edge;
    EdgeSettings {
        base_url: edge
            .base_url
            .clone()
            .unwrap_or_else(|| DEFAULT_BASE_URL.to_string()),
        voice: edge
            .voice
            .clone()
            .unwrap_or_else(|| DEFAULT_VOICE.to_string()),
        rate: rate_for_speed(edge.speed.unwrap_or(1.0)),
    }
}

/// Hermes: `pct = round((speed - 1.0) * 100)`, `f"{pct:+d}%"` (Python rounds half to even).
pub fn rate_for_speed(speed: f64) -> String {
    if speed == 1.0 || !speed.is_finite() {
        return "+0%".into();
    }
    let pct = ((speed - 1.0) * 100.0).round_ties_even() as i64;
    format!("{pct:+}%")
}

/// Synthesize `text` with edge-tts' defaults for volume and pitch; returns MP3 bytes.
pub async fn synthesize(
    base_url: &str,
    voice: &str,
    rate: &str,
    text: &str,
) -> Result<Vec<u8>, EdgeTtsError> {
    let prosody = Prosody {
        rate: rate.to_string(),
        ..Prosody::default()
    };
    synthesize_with(base_url, voice, &prosody, text).await
}

/// [`synthesize`] with every prosody parameter.
pub async fn synthesize_with(
    base_url: &str,
    voice: &str,
    prosody: &Prosody,
    text: &str,
) -> Result<Vec<u8>, EdgeTtsError> {
    let voice = long_voice_name(voice)?;
    ssml::validate_prosody(prosody)?;
    let target = Target::parse(base_url)?;
    let mut audio = Vec::new();
    for chunk in ssml::escaped_chunks(text) {
        let document = mkssml(&voice, prosody, &chunk);
        audio.extend(speak_chunk(&target, &document).await?);
    }
    if audio.is_empty() {
        return Err(EdgeTtsError::NoAudio);
    }
    Ok(audio)
}

/// JavaScript-style UTC date: `Mon Jan 05 2026 10:00:00 GMT+0000 (Coordinated Universal Time)`.
pub fn date_to_string() -> String {
    crate::time::js_date_string(unix_now())
}

fn unix_now() -> i64 {
    crate::time::unix_now()
}

/// An RFC 7231 IMF-fixdate (`Tue, 15 Nov 1994 08:12:31 GMT`) as Unix seconds.
pub fn parse_http_date(s: &str) -> Option<i64> {
    crate::time::parse_http_date(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speed_becomes_a_rate_like_hermes() {
        assert_eq!(rate_for_speed(1.0), "+0%");
        assert_eq!(rate_for_speed(1.5), "+50%");
        assert_eq!(rate_for_speed(0.8), "-20%");
        // round() halves to even: (1.125 - 1) * 100 == 12.5 → 12.
        assert_eq!(rate_for_speed(1.125), "+12%");
    }

    #[test]
    fn websocket_error_keeps_its_text_and_carries_the_cause() {
        let e = connection::ws_err(async_tungstenite::tungstenite::Error::ConnectionClosed);
        assert_eq!(
            e.to_string(),
            "Edge TTS websocket error: Connection closed normally"
        );
        let src = std::error::Error::source(&e).expect("the websocket error as source");
        assert_eq!(src.to_string(), "Connection closed normally");
    }

    #[test]
    fn http_dates_parse() {
        assert_eq!(
            parse_http_date("Tue, 15 Nov 1994 08:12:31 GMT"),
            Some(784_887_151)
        );
        assert_eq!(crate::time::civil_from_days(0), (1970, 1, 1));
    }
}
