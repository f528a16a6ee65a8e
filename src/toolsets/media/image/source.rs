//! Source images for edits that name a local file: read only when they are real
//! images, so a path to a key or a config file is never uploaded to a provider.

use super::error::GenError;
use crate::toolsets::media::{self as media, http};

/// Read a local source image; only real image files are read (never send an
/// arbitrary file such as a key to a provider).
pub(crate) fn read_local_image(src: &str) -> Result<(Vec<u8>, &'static str), GenError> {
    let path = media::absolute(src);
    let meta = std::fs::metadata(&path).map_err(|e| {
        GenError::Value(format!(
            "Could not load source image {}: {e}",
            path.display()
        ))
    })?;
    if meta.len() as usize > http::MAX_IMAGE_BYTES {
        return Err(GenError::Value(format!(
            "Source image {} is larger than {} MB",
            path.display(),
            http::MAX_IMAGE_BYTES / (1024 * 1024)
        )));
    }
    let bytes = std::fs::read(&path).map_err(|e| {
        GenError::Value(format!(
            "Could not load source image {}: {e}",
            path.display()
        ))
    })?;
    let mime = media::sniff_image(&bytes).ok_or_else(|| {
        GenError::Value(format!(
            "Source image {} is not a PNG, JPEG, WebP or GIF file",
            path.display()
        ))
    })?;
    Ok((bytes, mime))
}
