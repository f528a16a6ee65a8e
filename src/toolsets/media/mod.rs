//! Hermes' media toolsets: `image_gen` (`image_generate`) and `tts`
//! (`text_to_speech`).
//!
//! * [`image`]: FAL.ai's queue API and OpenAI's Images API (`tools/image_generation_tool.py`,
//!   `plugins/image_gen/openai`). Images are saved under `$HERMES_HOME/cache/images/`
//!   and also returned as MCP image content.
//! * [`tts`]: OpenAI and ElevenLabs speech, `tts.providers.<name>` command providers,
//!   Piper, and an offline default that needs no account: a local `espeak-ng`
//!   (`tools/tts_tool.py`). [`audio`] converts WAV to the requested format with
//!   `ffmpeg` or `sox` and reads WAV headers.
//!
//! Provider endpoints are configurable (documented keys, used by the loopback tests):
//! `image_gen.fal.base_url` (default `https://queue.fal.run`), `OPENAI_BASE_URL`
//! (default `https://api.openai.com/v1`) for images, `tts.openai.base_url` for speech,
//! `tts.elevenlabs.base_url` (default `https://api.elevenlabs.io`).

pub mod audio;
pub(crate) mod command;
pub mod edge_tts;
pub(crate) mod http;
pub(crate) mod image;
pub(crate) mod tts;

use std::path::{Path, PathBuf};

use crate::hermes::Context;
use crate::hermes::envvars;

pub(crate) use image::ImageGenToolset;
pub(crate) use tts::TtsToolset;

/// Find an executable on the server's `PATH` (`~` expanded in a path with a `/`).
pub(crate) fn which(ctx: &Context, name: &str) -> Option<PathBuf> {
    let name = name.trim();
    if name.is_empty() {
        return None;
    }
    let name = crate::hermes::home::expand_tilde(Path::new(name));
    crate::hermes::env::which(
        &name.to_string_lossy(),
        ctx.env.get(envvars::PATH).as_deref(),
    )
}

/// Local time as `YYYYmmdd_HHMMSS` (Hermes' `strftime("%Y%m%d_%H%M%S")`).
pub(crate) fn timestamp() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as libc::time_t)
        .unwrap_or(0);
    // SAFETY: localtime_r writes into the zeroed `tm` we own; both pointers are valid.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let ok = unsafe { !libc::localtime_r(&now, &mut tm).is_null() };
    if !ok {
        return format!("{now}");
    }
    format!(
        "{:04}{:02}{:02}_{:02}{:02}{:02}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec
    )
}

/// Eight hex digits (Hermes' `uuid4().hex[:8]`).
pub(crate) fn short_id() -> String {
    format!("{:08x}", fastrand::u32(..))
}

/// `path`, or `stem_2.ext`, `stem_3.ext`, ... when it already exists, so two
/// calls in the same second never overwrite each other.
pub(crate) fn unique_path(path: PathBuf) -> PathBuf {
    if !path.exists() {
        return path;
    }
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ext = path
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    (2..)
        .map(|n| dir.join(format!("{stem}_{n}{ext}")))
        .find(|p| !p.exists())
        .expect("an unbounded counter finds a free name")
}

/// Hermes' `has_traversal_component`: a `..` path component.
pub(crate) fn has_traversal_component(path: &str) -> bool {
    Path::new(path)
        .components()
        .any(|c| matches!(c, std::path::Component::ParentDir))
}

/// Make a user path absolute (`~` expanded, relative to the server's working directory).
pub(crate) fn absolute(path: &str) -> PathBuf {
    let p = crate::hermes::home::expand_tilde(Path::new(path));
    if p.is_absolute() {
        p
    } else {
        std::env::current_dir().map(|d| d.join(&p)).unwrap_or(p)
    }
}

/// The image type of `data` when it is one Hermes' image tools save (PNG, JPEG,
/// WebP, GIF), from the crate's one magic-byte sniffer (`vision::prep::sniff`).
pub(crate) fn sniff_image(data: &[u8]) -> Option<&'static str> {
    use crate::toolsets::vision::prep::{SourceFormat as F, sniff};
    match sniff(data)? {
        f @ (F::Png | F::Jpeg | F::Webp | F::Gif) => Some(f.mime()),
        F::Bmp | F::Tiff | F::Svg => None,
    }
}

pub(crate) fn image_ext(mime: &str) -> &'static str {
    match mime {
        "image/jpeg" => "jpg",
        "image/webp" => "webp",
        "image/gif" => "gif",
        _ => "png",
    }
}

#[cfg(test)]
pub(crate) use crate::hermes::context::test_ctx;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traversal_is_a_dotdot_component_only() {
        assert!(has_traversal_component("audio/../../etc/cron.d/x"));
        assert!(has_traversal_component(".."));
        assert!(has_traversal_component("/tmp/../x.mp3"));
        assert!(!has_traversal_component("/tmp/a..b.mp3"));
        assert!(!has_traversal_component("x/...mp3"));
        assert!(!has_traversal_component("./x.mp3"));
    }

    #[test]
    fn timestamp_has_hermes_shape() {
        let t = timestamp();
        assert_eq!(t.len(), 15, "{t}");
        assert_eq!(&t[8..9], "_");
        assert!(t.chars().filter(|c| *c != '_').all(|c| c.is_ascii_digit()));
    }

    #[test]
    fn unique_path_never_overwrites() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("tts_1.wav");
        assert_eq!(unique_path(p.clone()), p);
        std::fs::write(&p, b"x").unwrap();
        assert_eq!(unique_path(p.clone()), d.path().join("tts_1_2.wav"));
    }

    #[test]
    fn sniffs_images() {
        assert_eq!(sniff_image(b"\x89PNG\r\n\x1a\n...."), Some("image/png"));
        assert_eq!(sniff_image(b"\xff\xd8\xff\xe0"), Some("image/jpeg"));
        assert_eq!(sniff_image(b"RIFF\0\0\0\0WEBPVP8 "), Some("image/webp"));
        assert_eq!(sniff_image(b"<html>"), None);
    }
}
