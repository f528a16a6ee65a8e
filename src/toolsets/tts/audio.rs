//! The audio side of `text_to_speech`: WAV and MP3 header parsing (duration, and proof that a file
//! is what its extension says), WAV → mp3/ogg/flac conversion through `ffmpeg`,
//! `lame` (MP3, when this sox has no MP3 encoder) or `sox`, and MP3 → other
//! formats (Edge answers MP3) through ffmpeg or `lame --decode` then sox. When
//! nothing installed can, the caller keeps what it has and says so.

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

/// A PCM WAV's `RIFF` header and `fmt ` chunk, for `data_len` bytes of
/// samples; the `data` chunk follows.
pub(crate) fn wav_head(sample_rate: u32, channels: u16, bits: u16, data_len: u32) -> Vec<u8> {
    let block = channels * bits / 8;
    let mut v = Vec::with_capacity(44 + data_len as usize);
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
    v
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

/// What the MPEG audio frames of an MP3 say.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mp3Info {
    /// Frames found back to back from the first one.
    pub frames: u64,
    pub sample_rate: u32,
    pub channels: u16,
    /// Samples per channel across those frames.
    pub samples: u64,
}

impl Mp3Info {
    pub fn duration_secs(&self) -> f64 {
        if self.sample_rate == 0 {
            return 0.0;
        }
        self.samples as f64 / self.sample_rate as f64
    }
}

/// One MPEG-1/2/2.5 Layer III frame header: (frame bytes, sample rate, channels, samples).
fn mp3_frame(h: &[u8]) -> Option<(usize, u32, u16, u32)> {
    if h.len() < 4 || h[0] != 0xFF || h[1] & 0xE0 != 0xE0 {
        return None;
    }
    let version = (h[1] >> 3) & 3; // 0: 2.5, 2: 2, 3: 1
    let layer = (h[1] >> 1) & 3; // 1: Layer III
    if version == 1 || layer != 1 {
        return None;
    }
    let bitrate_idx = (h[2] >> 4) as usize;
    let rate_idx = ((h[2] >> 2) & 3) as usize;
    if bitrate_idx == 0 || bitrate_idx == 15 || rate_idx == 3 {
        return None;
    }
    const V1: [u32; 15] = [
        0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320,
    ];
    const V2: [u32; 15] = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];
    let mpeg1 = version == 3;
    let kbps = if mpeg1 { V1 } else { V2 }[bitrate_idx];
    let base = [44100u32, 48000, 32000][rate_idx];
    let sample_rate = match version {
        3 => base,
        2 => base / 2,
        _ => base / 4,
    };
    let samples = if mpeg1 { 1152 } else { 576 };
    let padding = ((h[2] >> 1) & 1) as u32;
    let len = (samples / 8 * kbps * 1000 / sample_rate + padding) as usize;
    let channels = if h[3] >> 6 == 3 { 1 } else { 2 };
    Some((len, sample_rate, channels, samples))
}

/// Walk an MP3's frames (after any ID3v2 tag). `None` unless at least two frames
/// follow each other (one sync word alone proves nothing).
pub fn mp3_info(bytes: &[u8]) -> Option<Mp3Info> {
    let mut pos = 0usize;
    if bytes.len() >= 10 && &bytes[..3] == b"ID3" {
        let size = bytes[6..10]
            .iter()
            .fold(0usize, |acc, b| (acc << 7) | (*b & 0x7F) as usize);
        pos = 10 + size + if bytes[5] & 0x10 != 0 { 10 } else { 0 };
    }
    let mut info: Option<Mp3Info> = None;
    while let Some((len, sample_rate, channels, samples)) = bytes.get(pos..).and_then(mp3_frame) {
        if pos + len > bytes.len() || len < 4 {
            break;
        }
        let i = info.get_or_insert(Mp3Info {
            frames: 0,
            sample_rate,
            channels,
            samples: 0,
        });
        if i.sample_rate != sample_rate {
            break;
        }
        i.frames += 1;
        i.samples += samples as u64;
        pos += len;
    }
    info.filter(|i| i.frames >= 2)
}

pub(crate) fn mp3_file_info(path: &Path) -> Option<Mp3Info> {
    mp3_info(&std::fs::read(path).ok()?)
}

/// The tool that converts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Converter {
    Ffmpeg(PathBuf),
    /// LAME: WAV → MP3 (and `--decode`: MP3 → WAV).
    Lame(PathBuf),
    Sox(PathBuf),
}

impl Converter {
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Converter::Ffmpeg(_) => "ffmpeg",
            Converter::Lame(_) => "lame",
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

/// The converter that can write `format` from WAV: ffmpeg first (it has every encoder
/// Hermes uses), then for MP3 `lame` (Debian's sox has no MP3 encoder), else sox when
/// its format list has it.
pub(crate) fn converter_for(ctx: &Context, format: &str) -> Option<Converter> {
    if let Some(p) = ctx.which("ffmpeg") {
        return Some(Converter::Ffmpeg(p));
    }
    if format == "mp3"
        && let Some(p) = ctx.which("lame")
    {
        return Some(Converter::Lame(p));
    }
    let sox = ctx.which("sox")?;
    let formats = sox_formats(&sox);
    let want = if format == "ogg" { "vorbis" } else { format };
    (formats.iter().any(|f| f == format) && formats.iter().any(|f| f == want))
        .then_some(Converter::Sox(sox))
}

/// Why no converter can write `format` here (for the result's `note`).
pub(crate) fn missing_converter_note(ctx: &Context, format: &str) -> String {
    let sox = ctx.which("sox").is_some();
    let extra = match (format, sox) {
        ("mp3", true) => {
            " (this sox has no MP3 encoder: install ffmpeg or lame, or libsox-fmt-mp3)".to_string()
        }
        (_, true) => format!(" (this sox cannot write {format}: install ffmpeg)"),
        ("mp3", false) => " (install ffmpeg or lame)".to_string(),
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
        Converter::Lame(p) => {
            let mut c = Command::new(p);
            c.arg("--quiet");
            if format_of(input) == Some("mp3") {
                c.arg("--decode");
            }
            c.arg(input).arg(output);
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

/// Why [`convert_mp3`] made no file; the TTS result quotes the text in its
/// "kept the MP3 audio" note.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Mp3Error {
    #[error(transparent)]
    Convert(#[from] ConvertError),
    #[error("no MP3 decoder for {format} on this machine (install ffmpeg or lame)")]
    NoDecoder { format: String },
    #[error("no converter for {format} on this machine (install ffmpeg or sox)")]
    NoConverter { format: String },
    #[error("cannot write in {dir}: {source}")]
    TempFile {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write {path}: {source}")]
    Persist {
        path: PathBuf,
        #[source]
        source: tempfile::PersistError,
    },
}

/// Convert an MP3 (`input`) to `format` at `output`: ffmpeg directly, else `lame
/// --decode` to WAV and then (unless WAV was asked for) the WAV converter. The error
/// says what is missing or what failed.
pub(crate) async fn convert_mp3(
    ctx: &Context,
    input: &Path,
    output: &Path,
    format: &str,
) -> Result<(), Mp3Error> {
    if let Some(ff) = ctx.which("ffmpeg") {
        return Ok(convert(&Converter::Ffmpeg(ff), input, output, false).await?);
    }
    let Some(lame) = ctx.which("lame") else {
        return Err(Mp3Error::NoDecoder {
            format: format.to_string(),
        });
    };
    let dir = output.parent().unwrap_or(Path::new("."));
    let wav = tempfile::Builder::new()
        .prefix(".tts-")
        .suffix(".wav")
        .tempfile_in(dir)
        .map_err(|source| Mp3Error::TempFile {
            dir: dir.to_path_buf(),
            source,
        })?;
    convert(&Converter::Lame(lame), input, wav.path(), false).await?;
    if format == "wav" {
        return wav
            .persist(output)
            .map(|_| ())
            .map_err(|source| Mp3Error::Persist {
                path: output.to_path_buf(),
                source,
            });
    }
    let conv = converter_for(ctx, format).ok_or_else(|| Mp3Error::NoConverter {
        format: format.to_string(),
    })?;
    Ok(convert(&conv, wav.path(), output, false).await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wav(sample_rate: u32, channels: u16, bits: u16, samples: u32) -> Vec<u8> {
        let data_len = samples * (channels * bits / 8) as u32;
        let mut v = wav_head(sample_rate, channels, bits, data_len);
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
    fn mp3_frames_give_the_duration() {
        // MPEG-1 Layer III, 128 kbit/s, 44.1 kHz, mono: 417-byte frames of 1152 samples.
        let frame = |pad: bool| {
            let mut f = vec![0xFF, 0xFB, 0x90 | if pad { 2 } else { 0 }, 0xC4];
            f.resize(if pad { 418 } else { 417 }, 0);
            f
        };
        let mut v = b"ID3\x04\x00\x00\x00\x00\x00\x05hello".to_vec();
        for i in 0..10 {
            v.extend(frame(i % 3 == 0));
        }
        let i = mp3_info(&v).unwrap();
        assert_eq!((i.frames, i.sample_rate, i.channels), (10, 44100, 1));
        assert!((i.duration_secs() - 11520.0 / 44100.0).abs() < 1e-9);
        // One frame, or text, is not an MP3.
        assert!(mp3_info(&frame(false)).is_none());
        assert!(mp3_info(b"FAKE-MP3|voice").is_none());
    }

    #[test]
    fn formats_by_extension() {
        assert_eq!(format_of(Path::new("/a/b.MP3")), Some("mp3"));
        assert_eq!(format_of(Path::new("/a/b.ogg")), Some("ogg"));
        assert_eq!(format_of(Path::new("/a/b.aiff")), None);
        assert_eq!(format_of(Path::new("/a/b")), None);
    }
}
