//! Source images for edits that name a local file: read only when they are real
//! images, so a path to a key or a config file is never uploaded to a provider.

use super::error::GenError;
use crate::net::vendor as http;

/// Read a local source image; only real image files are read (never send an
/// arbitrary file such as a key to a provider).
pub(crate) fn read_local_image(src: &str) -> Result<(Vec<u8>, &'static str), GenError> {
    let path = crate::fs::absolute(src);
    // Regular files only, opened without blocking, capped (a FIFO or device
    // named as a source neither hangs the call nor streams forever).
    let bytes =
        crate::fs::read_capped(&path, http::MAX_IMAGE_BYTES as u64).map_err(|e| match e {
            crate::fs::FileError::TooLarge { .. } => GenError::Value(format!(
                "Source image {} is larger than {} MB",
                path.display(),
                http::MAX_IMAGE_BYTES / (1024 * 1024)
            )),
            e => GenError::Value(format!(
                "Could not load source image {}: {}",
                path.display(),
                e.io_error()
                    .map_or_else(|| e.to_string(), |io| io.to_string())
            )),
        })?;
    let mime = crate::image::sniff::saveable_mime(&bytes).ok_or_else(|| {
        GenError::Value(format!(
            "Source image {} is not a PNG, JPEG, WebP or GIF file",
            path.display()
        ))
    })?;
    Ok((bytes, mime))
}
