//! Audio helpers: WAV header parsing (duration), and WAV → mp3/ogg/flac
//! conversion through `ffmpeg` or `sox`, whichever is installed and can
//! write the format. When neither can, the caller keeps the WAV and says so.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use tokio::process::Command;

use crate::hermes::Context;

/// Formats `text_to_speech` can be asked for (Hermes' `COMMAND_TTS_OUTPUT_FORMATS`).
pub(crate) const FORMATS: &[&str] = &["mp3", "ogg", "wav", "flac"];

/// The requested format of an output path: its extension, if it is one of [`FORMATS`].
pub(crate) fn format_of(path: &Path) -> Option<&'static str> {
    let ext = path.extension()?.to_string_lossy().to_ascii_lowercase();
    FORMATS.iter().copied().find(|f| *f == ext)
}

/// What a WAV header says.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WavInfo {
    pub channels: u16,
    pub sample_rate: u32,
    pub bits_per_sample: u16,
    pub data_bytes: u64,
}

impl WavInfo {
    pub fn duration_secs(&self) -> f64 {
        let frame = self.channels as u64 * (self.bits_per_sample as u64).div_ceil(8);
        if frame == 0 || self.sample_rate == 0 {
            return 0.0;
        }
        (self.data_bytes / frame) as f64 / self.sample_rate as f64
    }
}

/// Parse a RIFF/WAVE header (walks the chunks to `fmt ` and `data`).
/// A streamed WAV (espeak-ng writing to a pipe) can carry a 0 or 0xFFFFFFFF
/// data size; the bytes actually present are used then.
pub fn parse_wav(bytes: &[u8]) -> Option<WavInfo> {
    if bytes.len() < 12 || &bytes[..4] != b"RIFF" || &bytes[8..12] != b"WAVE" {
        return None;
    }
    let u16le = |o: usize| {
        bytes
            .get(o..o + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
    };
    let u32le = |o: usize| {
        bytes
            .get(o..o + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let mut pos = 12usize;
    let mut fmt: Option<(u16, u32, u16)> = None;
    while pos + 8 <= bytes.len() {
        let id = &bytes[pos..pos + 4];
        let size = u32le(pos + 4)? as usize;
        let body = pos + 8;
        if id == b"fmt " {
            fmt = Some((u16le(body + 2)?, u32le(body + 4)?, u16le(body + 14)?));
        } else if id == b"data" {
            let (channels, sample_rate, bits_per_sample) = fmt?;
            let present = bytes.len() - body;
            let data_bytes = if size == 0 || size == u32::MAX as usize || size > present {
                present
            } else {
                size
            };
            return Some(WavInfo {
                channels,
                sample_rate,
                bits_per_sample,
                data_bytes: data_bytes as u64,
            });
        }
        pos = body.checked_add(size)?.checked_add(size & 1)?;
    }
    None
}

pub(crate) fn wav_file_info(path: &Path) -> Option<WavInfo> {
    parse_wav(&std::fs::read(path).ok()?)
}

/// The tool that converts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Converter {
    Ffmpeg(PathBuf),
    Sox(PathBuf),
}

impl Converter {
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Converter::Ffmpeg(_) => "ffmpeg",
            Converter::Sox(_) => "sox",
        }
    }
}

/// The formats this machine's `sox` can write (its `sox -h` "AUDIO FILE FORMATS" line), read once.
fn sox_formats(sox: &Path) -> &'static [String] {
    static FORMATS: OnceLock<Vec<String>> = OnceLock::new();
    FORMATS.get_or_init(|| {
        let out = std::process::Command::new(sox)
            .arg("-h")
            .stdin(std::process::Stdio::null())
            .output();
        let text = match out {
            Ok(o) => String::from_utf8_lossy(&o.stdout).into_owned(),
            Err(_) => return Vec::new(),
        };
        text.lines()
            .find_map(|l| l.strip_prefix("AUDIO FILE FORMATS:"))
            .map(|l| l.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default()
    })
}

/// The converter that can write `format`: ffmpeg first (it has every encoder Hermes
/// uses), else sox when its format list has it.
pub(crate) fn converter_for(ctx: &Context, format: &str) -> Option<Converter> {
    if let Some(p) = super::which(ctx, "ffmpeg") {
        return Some(Converter::Ffmpeg(p));
    }
    let sox = super::which(ctx, "sox")?;
    let formats = sox_formats(&sox);
    let want = if format == "ogg" { "vorbis" } else { format };
    (formats.iter().any(|f| f == format) && formats.iter().any(|f| f == want))
        .then_some(Converter::Sox(sox))
}

/// Why no converter can write `format` here (for the result's `note`).
pub(crate) fn missing_converter_note(ctx: &Context, format: &str) -> String {
    let sox = super::which(ctx, "sox").is_some();
    let extra = match (format, sox) {
        ("mp3", true) => {
            " (this sox has no MP3 encoder: install ffmpeg, or libsox-fmt-mp3)".to_string()
        }
        (_, true) => format!(" (this sox cannot write {format}: install ffmpeg)"),
        (_, false) => " (install ffmpeg or sox)".to_string(),
    };
    format!("no converter for {format} on this machine{extra}; kept the WAV audio")
}

#[derive(Debug, thiserror::Error)]
#[error("{tool} could not convert {from} to {to}: {reason}")]
pub(crate) struct ConvertError {
    pub tool: &'static str,
    pub from: String,
    pub to: String,
    pub reason: String,
}

/// Convert `input` (WAV) into `output` (format by extension). `opus` selects
/// Opus in Ogg (Hermes' Telegram voice format, ffmpeg only).
pub(crate) async fn convert(
    conv: &Converter,
    input: &Path,
    output: &Path,
    opus: bool,
) -> Result<(), ConvertError> {
    let mut cmd = match conv {
        Converter::Ffmpeg(p) => {
            let mut c = Command::new(p);
            c.args(["-y", "-loglevel", "error", "-i"]).arg(input);
            if opus {
                c.args([
                    "-acodec", "libopus", "-ac", "1", "-b:a", "64k", "-vbr", "off",
                ]);
            }
            c.arg(output);
            c
        }
        Converter::Sox(p) => {
            let mut c = Command::new(p);
            c.arg(input).arg(output);
            c
        }
    };
    let err = |reason: String| ConvertError {
        tool: conv.name(),
        from: input.display().to_string(),
        to: output.display().to_string(),
        reason,
    };
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let child = cmd.spawn().map_err(|e| err(e.to_string()))?;
    let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .map_err(|_| err("timed out after 60 s".into()))?
        .map_err(|e| err(e.to_string()))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(err(format!(
            "{} ({})",
            out.status,
            stderr.trim().chars().take(400).collect::<String>()
        )));
    }
    match std::fs::metadata(output) {
        Ok(m) if m.len() > 0 => Ok(()),
        _ => Err(err("no output file".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wav(sample_rate: u32, channels: u16, bits: u16, samples: u32) -> Vec<u8> {
        let block = channels * bits / 8;
        let data_len = samples * block as u32;
        let mut v = Vec::new();
        v.extend_from_slice(b"RIFF");
        v.extend_from_slice(&(36 + data_len).to_le_bytes());
        v.extend_from_slice(b"WAVEfmt ");
        v.extend_from_slice(&16u32.to_le_bytes());
        v.extend_from_slice(&1u16.to_le_bytes());
        v.extend_from_slice(&channels.to_le_bytes());
        v.extend_from_slice(&sample_rate.to_le_bytes());
        v.extend_from_slice(&(sample_rate * block as u32).to_le_bytes());
        v.extend_from_slice(&block.to_le_bytes());
        v.extend_from_slice(&bits.to_le_bytes());
        v.extend_from_slice(b"LIST");
        v.extend_from_slice(&3u32.to_le_bytes());
        v.extend_from_slice(b"abc\0"); // odd chunk + pad byte
        v.extend_from_slice(b"data");
        v.extend_from_slice(&data_len.to_le_bytes());
        v.resize(v.len() + data_len as usize, 0);
        v
    }

    #[test]
    fn wav_duration_from_header() {
        let info = parse_wav(&wav(22050, 1, 16, 22050 * 2)).unwrap();
        assert_eq!(info.sample_rate, 22050);
        assert_eq!(info.channels, 1);
        assert!((info.duration_secs() - 2.0).abs() < 1e-9);
        let stereo = parse_wav(&wav(48000, 2, 16, 24000)).unwrap();
        assert!((stereo.duration_secs() - 0.5).abs() < 1e-9);
    }

    #[test]
    fn streamed_wav_uses_present_bytes() {
        let mut v = wav(16000, 1, 16, 16000);
        let at = v.len() - 16000 * 2 - 4;
        v[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!((parse_wav(&v).unwrap().duration_secs() - 1.0).abs() < 1e-9);
    }

    #[test]
    fn rejects_non_wav() {
        assert!(parse_wav(b"ID3\x04....").is_none());
        assert!(parse_wav(b"RIFF\0\0\0\0WAVE").is_none());
    }

    #[test]
    fn formats_by_extension() {
        assert_eq!(format_of(Path::new("/a/b.MP3")), Some("mp3"));
        assert_eq!(format_of(Path::new("/a/b.ogg")), Some("ogg"));
        assert_eq!(format_of(Path::new("/a/b.aiff")), None);
        assert_eq!(format_of(Path::new("/a/b")), None);
    }
}
