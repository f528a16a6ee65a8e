//! Saving a generated image under `$HERMES_HOME/cache/images/`, where Hermes
//! keeps them (hermes-agent: `tools/image_generation_tool.py`, `save_url_image`),
//! whether the provider answered with bytes or with a URL to download.

use std::path::PathBuf;

use crate::hermes::Context;
use serde_json::{Map, Value};

use crate::net::HttpClient;
use crate::net::vendor as http;

/// A generated image, before saving.
pub(crate) struct Generated {
    /// The provider's URL (http(s) or data:), when it gave one.
    pub(crate) url: Option<String>,
    /// Bytes when the provider returned them inline (OpenAI b64_json).
    pub(crate) bytes: Option<Vec<u8>>,
    pub(crate) extra: Map<String, Value>,
    /// The model that really ran, when the provider picks another than configured
    /// (xAI edits always use `grok-imagine-image-quality`).
    pub(crate) model: Option<String>,
}

impl Generated {
    /// An image to download from the provider's URL (http(s) or data:).
    pub(crate) fn from_url(url: String, extra: Map<String, Value>, model: Option<String>) -> Self {
        Generated {
            url: Some(url),
            bytes: None,
            extra,
            model,
        }
    }

    /// An image the provider answered with inline.
    pub(crate) fn from_bytes(
        bytes: Vec<u8>,
        extra: Map<String, Value>,
        model: Option<String>,
    ) -> Self {
        Generated {
            url: None,
            bytes: Some(bytes),
            extra,
            model,
        }
    }
}

/// Why the image could not be saved (the caller may still return the provider's URL).
#[derive(Debug, thiserror::Error)]
pub(crate) enum SaveError {
    #[error("the provider's image data is not a PNG, JPEG, WebP or GIF")]
    NotAnImage,
    #[error(transparent)]
    Fetch(#[from] http::ImageFetchError),
    #[error("no image data")]
    NoData,
    #[error("cannot create {}: {source}", dir.display())]
    CreateDir {
        dir: PathBuf,
        source: std::io::Error,
    },
    /// [`write_atomic`]'s error.
    #[error(transparent)]
    Write(#[from] crate::fs::FileError),
}

/// Save the image under `$HERMES_HOME/cache/images/<prefix>_<ts>_<id>.<ext>`.
pub(crate) async fn save_generated(
    ctx: &Context,
    http: &HttpClient,
    g: &Generated,
    prefix: &str,
) -> Result<(PathBuf, Vec<u8>, &'static str), SaveError> {
    let (bytes, mime) = match (&g.bytes, &g.url) {
        (Some(b), _) => {
            let mime = crate::image::sniff::saveable_mime(b).ok_or(SaveError::NotAnImage)?;
            (b.clone(), mime)
        }
        (None, Some(url)) => http::fetch_image(http, url).await?,
        (None, None) => return Err(SaveError::NoData),
    };
    let dir = ctx.home.cache_dir("images");
    if let Err(source) = std::fs::create_dir_all(&dir) {
        return Err(SaveError::CreateDir { dir, source });
    }
    let path = crate::fs::unique_path(dir.join(format!(
        "{prefix}_{}_{}.{}",
        crate::time::local_stamp(),
        crate::fs::short_id(),
        crate::image::sniff::extension(mime)
    )));
    write_atomic(&path, &bytes)?;
    Ok((path, bytes, mime))
}

/// The crate's one atomic write (temp file, fsync, rename; 0600 like Hermes' own).
fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> Result<(), crate::fs::FileError> {
    crate::fs::atomic_write(path, bytes).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_write_keeps_its_text_and_carries_the_io_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("missing").join("x.png");
        let e: SaveError = write_atomic(&path, b"png")
            .expect_err("no such folder")
            .into();
        assert!(e.to_string().contains("missing"), "{e}");
        let src = std::error::Error::source(&e).expect("the io error as source");
        assert!(src.downcast_ref::<std::io::Error>().is_some(), "{src:?}");
    }
}
