//! The engines behind `text_to_speech`, one module per family: [`edge`] (Hermes'
//! default, MP3 over a websocket), [`local`] (espeak-ng and the `piper` command write
//! WAV, then it is converted), [`pylocal`] (Hermes' Python models: piper-tts, NeuTTS,
//! KittenTTS), [`command`] (`tts.providers.<name>` shell commands), [`openai`] and
//! [`elevenlabs`] (HTTP APIs that answer with audio bytes), [`cloud`] (MiniMax, xAI,
//! Mistral, Gemini, DeepInfra).
//!
//! An engine that got its audio in the requested format writes it with [`write_audio`];
//! the others hand it to [`deliver_mp3`] or [`deliver_wav`], which put it at the
//! requested path in the requested format (the path's extension), or keep what the
//! engine made and say why in the result's `note`.

pub(crate) mod cloud;
pub(crate) mod command;
pub(crate) mod edge;
pub(crate) mod elevenlabs;
pub(crate) mod local;
pub(crate) mod openai;
pub(crate) mod pylocal;

use std::path::{Path, PathBuf};

use super::error::TtsError;
use crate::hermes::Context;
use crate::net::vendor::{self as http, ApiRequest};
use crate::net::{ApiResponse, HttpClient};
use crate::toolsets::tts::audio;

/// What a provider produced.
pub(crate) struct Produced {
    pub(crate) path: PathBuf,
    pub(crate) notes: Vec<String>,
    pub(crate) duration: Option<f64>,
}

impl Produced {
    /// Audio written at `path` as the engine made it, with nothing to note.
    pub(crate) fn written(path: &Path) -> Self {
        Produced {
            path: path.to_path_buf(),
            notes: Vec::new(),
            duration: None,
        }
    }
}

/// Send a speech API request; one that does not complete fails with the client's text.
pub(crate) async fn send(http: &HttpClient, req: ApiRequest<'_>) -> Result<ApiResponse, TtsError> {
    http::send(http, req)
        .await
        .map_err(|e| TtsError::failed_by(e.to_string(), e))
}

/// `requests`' `raise_for_status` in our words: `<who> request failed: <status>`.
pub(crate) fn check_status(resp: &ApiResponse, who: &str) -> Result<(), TtsError> {
    if (200..300).contains(&resp.status) {
        Ok(())
    } else {
        Err(TtsError::failed(format!(
            "{who} request failed: {}",
            http::status_error(resp)
        )))
    }
}

/// A speech API whose answer is the audio itself, in the requested format:
/// sent, checked (`who` names it in the failure) and written at `output`.
pub(crate) async fn fetch_audio(
    http: &HttpClient,
    req: ApiRequest<'_>,
    who: &str,
    output: &Path,
) -> Result<(), TtsError> {
    let resp = send(http, req).await?;
    check_status(&resp, who)?;
    write_audio(output, &resp.body)
}

/// Write `bytes` at `path` through a temporary file in its directory, renamed
/// into place ([`crate::fs::WriteOptions::OUTPUT`]).
pub(crate) fn write_audio(path: &Path, bytes: &[u8]) -> Result<(), TtsError> {
    crate::fs::write_atomic(path, bytes, &crate::fs::WriteOptions::OUTPUT)
        .map(|_| ())
        .map_err(|e| match e {
            crate::fs::FileError::CreateTemp { dir, source } => TtsError::failed_by(
                format!("cannot write in {}: {source}", dir.display()),
                source,
            ),
            crate::fs::FileError::Write { source, .. } => {
                TtsError::failed_by(format!("cannot write {}: {source}", path.display()), source)
            }
            other => TtsError::failed_by(other.to_string(), other),
        })
}

fn temp_in(dir: &Path, suffix: &str, bytes: &[u8]) -> Result<tempfile::NamedTempFile, TtsError> {
    let mut tmp = tempfile::Builder::new()
        .prefix(".tts-")
        .suffix(suffix)
        .tempfile_in(dir)
        .map_err(|e| TtsError::failed_by(format!("cannot write in {}: {e}", dir.display()), e))?;
    std::io::Write::write_all(&mut tmp, bytes)
        .map_err(|e| TtsError::failed_by(format!("cannot write in {}: {e}", dir.display()), e))?;
    Ok(tmp)
}

/// MP3 from a service (Edge, xAI, MiniMax): as-is for `.mp3` (and, as Hermes writes
/// it, for a path whose extension is no audio format); decoded and converted for
/// `.ogg`, `.wav`, `.flac`; kept as `.mp3` with a note when nothing here can.
pub(crate) async fn deliver_mp3(
    ctx: &Context,
    who: &str,
    mp3: &[u8],
    requested: &Path,
) -> Result<Produced, TtsError> {
    let duration = audio::mp3_info(mp3).map(|i| i.duration_secs());
    let mut notes = Vec::new();
    let path = match audio::format_of(requested) {
        Some("mp3") | None => {
            write_audio(requested, mp3)?;
            requested.to_path_buf()
        }
        Some(fmt) => {
            let tmp = temp_in(requested.parent().unwrap_or(Path::new(".")), ".mp3", mp3)?;
            match audio::convert_mp3(ctx, tmp.path(), requested, fmt).await {
                Ok(()) => requested.to_path_buf(),
                Err(why) => {
                    let kept = requested.with_extension("mp3");
                    tmp.persist(&kept).map_err(|e| {
                        TtsError::failed_by(format!("cannot write {}: {e}", kept.display()), e)
                    })?;
                    notes.push(format!(
                        "{who} returns MP3; {why}; kept the MP3 audio at {}",
                        kept.display()
                    ));
                    kept
                }
            }
        }
    };
    Ok(Produced {
        path,
        notes,
        duration,
    })
}

/// WAV bytes (Gemini's PCM, wrapped) into [`deliver_wav`].
pub(crate) async fn deliver_wav_bytes(
    ctx: &Context,
    wav: &[u8],
    requested: &Path,
) -> Result<Produced, TtsError> {
    let duration = audio::parse_wav(wav).map(|i| i.duration_secs());
    let tmp = temp_in(requested.parent().unwrap_or(Path::new(".")), ".wav", wav)?;
    deliver_wav(ctx, tmp, requested, duration).await
}

/// A WAV in a temp file next to `requested`: moved there for `.wav`, converted for
/// mp3/ogg/flac; kept as `.wav` with a note when no installed tool can convert, or
/// when the extension is no audio format.
pub(crate) async fn deliver_wav(
    ctx: &Context,
    tmp: tempfile::NamedTempFile,
    requested: &Path,
    duration: Option<f64>,
) -> Result<Produced, TtsError> {
    let mut notes = Vec::new();
    let final_path = match audio::format_of(requested) {
        Some("wav") => requested.to_path_buf(),
        Some(fmt) => match audio::converter_for(ctx, fmt) {
            Some(conv) => match audio::convert(&conv, tmp.path(), requested, false).await {
                Ok(()) => {
                    return Ok(Produced {
                        path: requested.to_path_buf(),
                        notes,
                        duration,
                    });
                }
                Err(e) => {
                    notes.push(format!("{e}; kept the WAV audio"));
                    requested.with_extension("wav")
                }
            },
            None => {
                notes.push(audio::missing_converter_note(ctx, fmt));
                requested.with_extension("wav")
            }
        },
        None => {
            let p = requested.with_extension("wav");
            notes.push(format!(
                "output_path extension is not one of mp3, ogg, wav, flac; wrote WAV audio to {}",
                p.display()
            ));
            p
        }
    };
    tmp.persist(&final_path).map_err(|e| {
        TtsError::failed_by(format!("cannot write {}: {e}", final_path.display()), e)
    })?;
    Ok(Produced {
        path: final_path,
        notes,
        duration,
    })
}
