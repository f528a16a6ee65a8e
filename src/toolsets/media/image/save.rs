//! Saving a generated image under `$HERMES_HOME/cache/images/`, where Hermes
//! keeps them (hermes-agent: `tools/image_generation_tool.py`, `save_url_image`),
//! whether the provider answered with bytes or with a URL to download.

use std::path::PathBuf;

use crate::hermes::Context;
use serde_json::{Map, Value};

use crate::net::HttpClient;
use crate::toolsets::media::{self as media, http};

/// A generated image, before saving.
pub(crate) struct Generated {
    /// The provider's URL (http(s) or data:), when it gave one.
    pub(crate) url: Option<String>,
    /// Bytes when the provider returned them inline (OpenAI b64_json).
    pub(crate) bytes: Option<Vec<u8>>,
    pub(crate) extra: Map<String, Value>,
}

/// Save the image under `$HERMES_HOME/cache/images/<prefix>_<ts>_<id>.<ext>`.
pub(crate) async fn save_generated(
    ctx: &Context,
    http: &HttpClient,
    g: &Generated,
    prefix: &str,
) -> Result<(PathBuf, Vec<u8>, &'static str), String> {
    let (bytes, mime) = match (&g.bytes, &g.url) {
        (Some(b), _) => {
            let mime = media::sniff_image(b).ok_or_else(|| {
                "the provider's image data is not a PNG, JPEG, WebP or GIF".to_string()
            })?;
            (b.clone(), mime)
        }
        (None, Some(url)) => http::fetch_image(http, url).await?,
        (None, None) => return Err("no image data".into()),
    };
    let dir = ctx.home.cache_dir("images");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let path = media::unique_path(dir.join(format!(
        "{prefix}_{}_{}.{}",
        media::timestamp(),
        media::short_id(),
        media::image_ext(mime)
    )));
    write_atomic(&path, &bytes)?;
    Ok((path, bytes, mime))
}

fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> Result<(), String> {
    let dir = path.parent().unwrap_or(std::path::Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .map_err(|e| format!("cannot write in {}: {e}", dir.display()))?;
    std::io::Write::write_all(&mut tmp, bytes)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    tmp.persist(path)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(())
}
