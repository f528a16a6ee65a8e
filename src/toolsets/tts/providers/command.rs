//! `tts.providers.<name>` command providers (hermes-agent: `tools/tts_tool.py`,
//! `_generate_command_tts`): the template is rendered and run by
//! [`crate::toolsets::tts::shell`]; this module reads the provider's config
//! (format, timeout, voice/model/speed placeholders) and checks the output.

use std::path::Path;
use std::time::Duration;

use serde_json::{Map, Value};

use super::Produced;
use crate::toolsets::tts::audio;
use crate::toolsets::tts::config::num;
use crate::toolsets::tts::error::TtsError;
use crate::toolsets::tts::shell as command;

const DEFAULT_COMMAND_TIMEOUT_SECS: f64 = 120.0;
const DEFAULT_COMMAND_FORMAT: &str = "mp3";

/// Hermes' `_get_command_tts_output_format` (path suffix first, then config).
pub(crate) fn command_format(c: &Map<String, Value>, path: Option<&Path>) -> &'static str {
    if let Some(f) = path.and_then(audio::format_of) {
        return f;
    }
    let raw = c
        .get("format")
        .filter(|v| !v.is_null() && v.as_str() != Some(""))
        .or_else(|| c.get("output_format"))
        .and_then(Value::as_str)
        .unwrap_or(DEFAULT_COMMAND_FORMAT)
        .trim()
        .trim_start_matches('.')
        .to_ascii_lowercase();
    audio::FORMATS
        .iter()
        .copied()
        .find(|f| *f == raw)
        .unwrap_or(DEFAULT_COMMAND_FORMAT)
}

fn command_timeout(c: &Map<String, Value>) -> Duration {
    let v = num(c.get("timeout").or_else(|| c.get("timeout_seconds")))
        .filter(|v| v.is_finite() && *v > 0.0)
        .unwrap_or(DEFAULT_COMMAND_TIMEOUT_SECS);
    Duration::from_secs_f64(v.min(86_400.0))
}

/// Hermes' `_generate_command_tts`.
pub(crate) async fn run_command_provider(
    name: &str,
    config: &Map<String, Value>,
    cfg: &Map<String, Value>,
    text: &str,
    output: &Path,
) -> Result<Produced, TtsError> {
    let template = config
        .get("command")
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim()
        .to_string();
    if template.is_empty() {
        return Err(TtsError::Config(format!(
            "tts.providers.{name}.command is not configured"
        )));
    }
    if output.exists() {
        let _ = std::fs::remove_file(output);
    }
    let timeout = command_timeout(config);
    let format = command_format(config, Some(output));
    let speed = config
        .get("speed")
        .or_else(|| cfg.get("speed"))
        .map(|v| match v {
            Value::String(s) => s.clone(),
            Value::Number(n) => {
                // Python's str(float): 1.0 -> "1.0".
                let s = n.to_string();
                if n.is_f64() && !s.contains('.') && !s.contains('e') {
                    format!("{s}.0")
                } else {
                    s
                }
            }
            Value::Null => String::new(),
            other => other.to_string(),
        })
        .unwrap_or_default();
    let str_of = |k: &str| match config.get(k) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(v) => v.to_string(),
    };
    let tmpdir = tempfile::tempdir()
        .map_err(|e| TtsError::failed_by(format!("cannot create a temp dir: {e}"), e))?;
    let text_path = tmpdir.path().join("input.txt");
    std::fs::write(&text_path, text).map_err(|e| {
        TtsError::failed_by(format!("cannot write {}: {e}", text_path.display()), e)
    })?;
    let tp = text_path.display().to_string();
    let values = [
        ("input_path", tp.clone()),
        ("text_path", tp),
        ("output_path", output.display().to_string()),
        ("format", format.to_string()),
        ("voice", str_of("voice")),
        ("model", str_of("model")),
        ("speed", speed),
    ];
    let rendered = command::render(&template, &values);
    match command::run_shell(&rendered, timeout).await {
        Ok(()) => {}
        Err(command::RunError::Timeout(t)) => {
            return Err(TtsError::failed(format!(
                "TTS provider '{name}' timed out after {t}s"
            )));
        }
        Err(command::RunError::Exit { code, detail }) => {
            return Err(TtsError::failed(format!(
                "TTS provider '{name}' exited with code {code}: {detail}"
            )));
        }
        Err(command::RunError::Spawn(e)) => return Err(TtsError::Dependency(e.to_string())),
    }
    match std::fs::metadata(output) {
        Ok(m) if m.len() > 0 => {}
        _ => {
            return Err(TtsError::failed(format!(
                "TTS provider '{name}' produced no output at {}",
                output.display()
            )));
        }
    }
    Ok(Produced::written(output))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_format_and_timeout() {
        let c = |y: &str| serde_json::from_str::<Map<String, Value>>(y).unwrap();
        assert_eq!(command_format(&c("{}"), None), "mp3");
        assert_eq!(
            command_format(&c(r#"{"output_format":"WAV"}"#), None),
            "wav"
        );
        assert_eq!(command_format(&c(r#"{"format":".ogg"}"#), None), "ogg");
        assert_eq!(command_format(&c(r#"{"format":"aiff"}"#), None), "mp3");
        assert_eq!(
            command_format(&c("{}"), Some(Path::new("/x/a.flac"))),
            "flac"
        );
        assert_eq!(command_timeout(&c("{}")), Duration::from_secs(120));
        assert_eq!(
            command_timeout(&c(r#"{"timeout":"2.5"}"#)),
            Duration::from_millis(2500)
        );
        assert_eq!(
            command_timeout(&c(r#"{"timeout":-1}"#)),
            Duration::from_secs(120)
        );
    }
}
