//! Provider `edge` (Hermes' default): Microsoft's Read Aloud voices through our port of
//! the `edge-tts` client ([`crate::toolsets::tts::edge`]), configured as Hermes'
//! `_generate_edge_tts` reads it (hermes-agent: `tools/tts_tool.py`): `tts.edge.voice`
//! (default `en-US-AriaNeural`), `tts.edge.speed` or `tts.speed` (a factor, sent as
//! rate `+N%`), plus `tts.edge.base_url` (ours: the service URL, for proxies and tests).
//!
//! The service answers MP3 only. Hermes writes those bytes to the output path whatever
//! its extension; we write them to a `.mp3` path as-is and convert for `.ogg`, `.wav`
//! and `.flac` (decoding with ffmpeg or `lame --decode`); when nothing here can, the
//! MP3 is kept (extension `.mp3`) and the result's `note` says so.
//!
//! Hermes waits 60 s for the whole synthesis; so do we.

use std::path::Path;
use std::time::Duration;

use super::{Produced, deliver_mp3};
use crate::hermes::Context;
use crate::net::{Policy, check_url};
use crate::toolsets::tts::edge as edge_tts;
use crate::toolsets::tts::error::TtsError;

/// Hermes' `future.result(timeout=60)` around the edge-tts call.
const EDGE_TIMEOUT: Duration = Duration::from_secs(60);

/// The website blocklist (and the metadata floor) on the configured service URL,
/// checked as the http(s) URL the websocket upgrade is made on.
fn check_endpoint(ctx: &Context, base_url: &str) -> Result<(), TtsError> {
    let Ok(mut url) = url::Url::parse(base_url.trim()) else {
        return Ok(()); // edge_tts reports the bad URL in its own words
    };
    let scheme = match url.scheme() {
        "wss" => "https",
        "ws" => "http",
        _ => return Ok(()),
    };
    if url.set_scheme(scheme).is_err() {
        return Ok(());
    }
    // A configured endpoint may be private (a proxy, a test server); never cloud metadata.
    let floor = Policy {
        allow_private: true,
        ..Policy::from_context(ctx)
    };
    check_url(&url, &floor).map_err(|b| TtsError::failed_by(b.to_string(), b))
}

/// Speak `text` with Edge and write the audio to `requested` (see the module docs).
pub(crate) async fn edge_speech(
    ctx: &Context,
    text: &str,
    requested: &Path,
) -> Result<Produced, TtsError> {
    let s = edge_tts::settings(ctx);
    check_endpoint(ctx, &s.base_url)?;
    let mp3 = tokio::time::timeout(
        EDGE_TIMEOUT,
        edge_tts::synthesize(&s.base_url, &s.voice, &s.rate, text),
    )
    .await
    .map_err(|_| {
        TtsError::failed(format!(
            "Edge TTS did not finish within {}s",
            EDGE_TIMEOUT.as_secs()
        ))
    })?
    .map_err(|e| match e {
        edge_tts::EdgeTtsError::InvalidParam(m) => TtsError::Config(m),
        other => TtsError::failed_by(other.to_string(), other),
    })?;
    deliver_mp3(ctx, "Edge TTS", &mp3, requested).await
}
