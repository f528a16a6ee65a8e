//! Local engines that write WAV, espeak-ng (the offline default that stands in
//! for Hermes' online Edge TTS) and Piper (hermes-agent: `tools/tts_tool.py`,
//! `_generate_piper_tts`), then conversion to the requested format by
//! [`crate::toolsets::tts::audio`].

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::process::Command;

use super::{Produced, deliver_wav};
use crate::hermes::Context;
use crate::toolsets::tts::audio;
use crate::toolsets::tts::config::{num, section, section_str};
use crate::toolsets::tts::error::TtsError;
use crate::toolsets::tts::plan::Plan;

pub(crate) const DEFAULT_ESPEAK_VOICE: &str = "en";
/// espeak-ng's default rate (words per minute) at speed 1.0.
const ESPEAK_WPM: f64 = 175.0;
const LOCAL_TIMEOUT: Duration = Duration::from_secs(120);

/// A local engine that writes WAV (espeak-ng, piper), then conversion to the
/// requested format.
pub(crate) async fn run_local(
    ctx: &Context,
    cfg: &Map<String, Value>,
    plan: &Plan,
    bin: &Path,
    piper_model: Option<&PathBuf>,
    text: &str,
    requested: &Path,
) -> Result<Produced, TtsError> {
    let dir = requested.parent().unwrap_or(Path::new("."));
    let tmp = tempfile::Builder::new()
        .prefix(".tts-")
        .suffix(".wav")
        .tempfile_in(dir)
        .map_err(|e| TtsError::failed_by(format!("cannot write in {}: {e}", dir.display()), e))?;
    let wav_path = tmp.path().to_path_buf();
    let text_file = tempfile::NamedTempFile::new()
        .and_then(|mut f| {
            std::io::Write::write_all(&mut f, text.as_bytes())?;
            Ok(f)
        })
        .map_err(|e| TtsError::failed_by(format!("cannot write the text file: {e}"), e))?;
    let speed = num(section(cfg, plan.cap_key()).and_then(|s| s.get("speed")))
        .or_else(|| num(cfg.get("speed")))
        .filter(|s| s.is_finite() && *s > 0.0)
        .unwrap_or(1.0);
    let mut cmd = Command::new(bin);
    match piper_model {
        None => {
            let voice =
                section_str(cfg, "espeak", "voice").unwrap_or_else(|| DEFAULT_ESPEAK_VOICE.into());
            let wpm = ((ESPEAK_WPM * speed).round().clamp(80.0, 500.0) as i64).to_string();
            cmd.args(["-b", "1", "-v", voice.as_str(), "-s", wpm.as_str(), "-w"])
                .arg(&wav_path)
                .arg("-f")
                .arg(text_file.path())
                .stdin(std::process::Stdio::null());
        }
        Some(model) => {
            cmd.arg("-m").arg(model).arg("-f").arg(&wav_path);
            if speed != 1.0 {
                cmd.arg("--length_scale").arg(format!("{}", 1.0 / speed));
            }
            let f = std::fs::File::open(text_file.path())
                .map_err(|e| TtsError::failed_by(e.to_string(), e))?;
            cmd.stdin(f);
        }
    }
    cmd.stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let name = bin
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let child = cmd
        .spawn()
        .map_err(|e| TtsError::Dependency(format!("cannot run {}: {e}", bin.display())))?;
    let out = tokio::time::timeout(LOCAL_TIMEOUT, child.wait_with_output())
        .await
        .map_err(|_| {
            TtsError::failed(format!(
                "{name} timed out after {}s",
                LOCAL_TIMEOUT.as_secs()
            ))
        })?
        .map_err(|e| TtsError::failed_by(format!("{name}: {e}"), e))?;
    if !out.status.success() {
        return Err(TtsError::failed(format!(
            "{name} exited with {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let info = audio::wav_file_info(&wav_path)
        .ok_or_else(|| TtsError::failed(format!("{name} did not write a WAV file")))?;
    deliver_wav(ctx, tmp, requested, Some(info.duration_secs())).await
}
