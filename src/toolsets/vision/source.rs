//! Load an image's bytes from what the model passed as `image_url`
//! (Hermes' `tools/image_source.resolve_image_source`): `data:` URLs,
//! http(s) URLs through the SSRF-guarded client, `file://` URLs and local paths.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use url::Url;

use crate::image::prep::MAX_INGEST_BYTES;
use crate::net::{Blocked, FetchError, FetchOptions, HttpClient};

#[derive(Debug, thiserror::Error)]
pub(crate) enum SourceError {
    #[error("image_url is required")]
    Missing,
    #[error(
        "Unrecognized image source scheme. Use an http(s) URL, a local file path, a file:// URI, or a data: URL."
    )]
    UnsupportedScheme,
    #[error("{0}")]
    BadDataUrl(String),
    #[error("image file not found: '{0}'")]
    NotFound(String),
    #[error("'{0}' is not a regular file")]
    NotAFile(String),
    #[error("cannot read '{path}': {reason}")]
    Read { path: String, reason: String },
    #[error("image exceeds size limit ({size} bytes, max {max})")]
    TooLarge { size: u64, max: u64 },
    #[error("blocked: {0}")]
    Blocked(String),
    #[error("failed to download image: {0}")]
    Download(String),
    #[error("failed to download image: HTTP {status} from {url}")]
    Status { status: u16, url: String },
    #[error("failed to download image: timed out after {0} s (auxiliary.vision.download_timeout)")]
    Timeout(u64),
}

impl SourceError {
    /// Transient failures worth another attempt (Hermes' `_is_retryable_download_error`).
    fn retryable(&self) -> bool {
        match self {
            SourceError::Status { status, .. } => *status == 429 || *status >= 500,
            // A timed-out download is not retried: three 30 s waits help nobody.
            SourceError::Download(_) => true,
            _ => false,
        }
    }
}

#[derive(Debug)]
pub(crate) struct Loaded {
    pub data: Vec<u8>,
    /// The server's Content-Type, for a clearer "not an image" error.
    pub content_type: Option<String>,
}

/// How to download.
pub(crate) struct Download<'a> {
    pub http: &'a HttpClient,
    pub timeout: Duration,
    /// Total attempts for transient failures (Hermes: 3, backing off 2 s, 4 s).
    pub attempts: u32,
    pub backoff: Duration,
}

pub(crate) async fn load(src: &str, dl: Option<Download<'_>>) -> Result<Loaded, SourceError> {
    let s = src.trim();
    if s.is_empty() {
        return Err(SourceError::Missing);
    }
    // `get` rather than `s[..5]`: a URL such as `日本語.png` has no char
    // boundary at byte 5.
    if s.get(..5).is_some_and(|p| p.eq_ignore_ascii_case("data:")) {
        return Ok(Loaded {
            data: decode_data_url(s)?,
            content_type: None,
        });
    }
    let lower = s.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        let Some(dl) = dl else {
            return Err(SourceError::Download("no HTTP client".into()));
        };
        return download(s, &dl).await;
    }
    let path = if lower.starts_with("file://") {
        file_url_path(s)?
    } else if has_scheme(s) {
        return Err(SourceError::UnsupportedScheme);
    } else {
        crate::hermes::home::expand_tilde(Path::new(s))
    };
    let data = tokio::task::spawn_blocking(move || read_local(&path))
        .await
        .map_err(|e| SourceError::Read {
            path: src.to_string(),
            reason: e.to_string(),
        })??;
    Ok(Loaded {
        data,
        content_type: None,
    })
}

/// `scheme://` other than `file://` (bare Windows drive paths have no `//`).
fn has_scheme(s: &str) -> bool {
    let Some(i) = s.find("://") else { return false };
    let scheme = &s[..i];
    !scheme.is_empty()
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-'))
}

fn file_url_path(s: &str) -> Result<PathBuf, SourceError> {
    // Proper file URLs (`file:///tmp/a%20b.png`, `file://localhost/...`) first;
    // Hermes also accepted a raw `file://` prefix on any path (`file://~/x.png`,
    // `file://relative.png`), so fall back to stripping it.
    if let Ok(u) = Url::parse(s)
        && let Ok(p) = u.to_file_path()
    {
        return Ok(p);
    }
    let rest = &s["file://".len()..];
    if rest.is_empty() {
        return Err(SourceError::NotFound(String::new()));
    }
    Ok(crate::hermes::home::expand_tilde(Path::new(rest)))
}

/// Read a local image: relative paths against the server's cwd, regular
/// files only (no FIFOs or devices that would block or never end), capped.
pub(crate) fn read_local(path: &Path) -> Result<Vec<u8>, SourceError> {
    let shown = path.display().to_string();
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    };
    // Regular files only, opened without blocking and checked on the handle
    // (a FIFO or device neither hangs nor streams forever).
    let f = match crate::fs::open_regular(&abs) {
        Ok(f) => f,
        Err(e) if e.is_not_found() => {
            return Err(SourceError::NotFound(abs.display().to_string()));
        }
        Err(crate::fs::FileError::NotRegular { .. }) => {
            return Err(SourceError::NotAFile(shown));
        }
        Err(e) => {
            return Err(SourceError::Read {
                path: shown,
                reason: e
                    .io_error()
                    .map_or_else(|| e.to_string(), |io| io.to_string()),
            });
        }
    };
    let max = MAX_INGEST_BYTES as u64;
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    if len > max {
        return Err(SourceError::TooLarge { size: len, max });
    }
    let mut data = Vec::with_capacity(len as usize);
    f.take(max + 1)
        .read_to_end(&mut data)
        .map_err(|e| SourceError::Read {
            path: shown,
            reason: e.to_string(),
        })?;
    if data.len() as u64 > max {
        return Err(SourceError::TooLarge {
            size: data.len() as u64,
            max,
        });
    }
    Ok(data)
}

/// `data:[<mime>][;...];base64,<payload>` (Hermes requires base64).
pub(crate) fn decode_data_url(s: &str) -> Result<Vec<u8>, SourceError> {
    use base64::Engine as _;
    let Some((header, payload)) = s.split_once(',') else {
        return Err(SourceError::BadDataUrl(
            "data: URL has no ',' before its payload".into(),
        ));
    };
    if !header.to_ascii_lowercase().contains(";base64") {
        return Err(SourceError::BadDataUrl(
            "data: URL must be base64-encoded".into(),
        ));
    }
    if payload.len() / 4 * 3 > MAX_INGEST_BYTES {
        return Err(SourceError::BadDataUrl(
            "data: URL exceeds size limit".into(),
        ));
    }
    let cleaned: Vec<u8> = payload
        .bytes()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    let engine = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    );
    engine
        .decode(&cleaned)
        .map_err(|e| SourceError::BadDataUrl(format!("invalid base64 in data: URL: {e}")))
}

async fn download(url_s: &str, dl: &Download<'_>) -> Result<Loaded, SourceError> {
    let url = Url::parse(url_s).map_err(|e| SourceError::Download(format!("invalid URL: {e}")))?;
    let mut attempt = 0;
    loop {
        attempt += 1;
        match download_once(&url, dl).await {
            Ok(l) => return Ok(l),
            Err(e) if e.retryable() && attempt < dl.attempts => {
                let wait = dl.backoff * 2u32.pow(attempt - 1);
                tracing::warn!(
                    "image download failed (attempt {attempt}): {e}; retrying in {wait:?}"
                );
                tokio::time::sleep(wait).await;
            }
            Err(e) => return Err(e),
        }
    }
}

async fn download_once(url: &Url, dl: &Download<'_>) -> Result<Loaded, SourceError> {
    let opts = FetchOptions {
        max_bytes: Some(MAX_INGEST_BYTES),
        accept: Some("image/*,*/*;q=0.8".into()),
    };
    let fetched = match tokio::time::timeout(dl.timeout, dl.http.fetch(url, &opts)).await {
        Err(_) => return Err(SourceError::Timeout(dl.timeout.as_secs())),
        Ok(Err(e)) => {
            return Err(match e {
                FetchError::Blocked(b) => {
                    let why = b.to_string();
                    let why = why.trim_start_matches("Blocked: ");
                    SourceError::Blocked(match &b {
                        Blocked::Metadata { host } => format!("{why} ({host})"),
                        Blocked::Private { host, .. } => {
                            format!(
                                "{why} ({host}); set security.allow_private_urls: true (or HERMES_ALLOW_PRIVATE_URLS=1) only if you trust private addresses"
                            )
                        }
                        _ => why.to_string(),
                    })
                }
                FetchError::TooLarge(max) => SourceError::TooLarge {
                    size: max as u64 + 1,
                    max: max as u64,
                },
                FetchError::Timeout(_) => SourceError::Timeout(dl.timeout.as_secs()),
                other => SourceError::Download(other.to_string()),
            });
        }
        Ok(Ok(f)) => f,
    };
    if !(200..300).contains(&fetched.status) {
        return Err(SourceError::Status {
            status: fetched.status,
            url: fetched.final_url.to_string(),
        });
    }
    let content_type = fetched.content_type();
    Ok(Loaded {
        data: fetched.body,
        content_type,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_urls() {
        assert_eq!(
            decode_data_url("data:image/png;base64,aGk=").unwrap(),
            b"hi"
        );
        assert_eq!(decode_data_url("data:image/png;base64,aGk").unwrap(), b"hi");
        assert_eq!(decode_data_url("data:;base64,aG\nk=").unwrap(), b"hi");
        assert!(decode_data_url("data:image/png,hi").is_err());
        assert!(decode_data_url("data:image/png;base64,@@@").is_err());
        assert!(decode_data_url("data:image/png;base64").is_err());
    }

    #[tokio::test]
    async fn non_ascii_sources_are_paths_not_panics() {
        for src in ["日本語.png", "dätä:x", "é", "🖼️🖼️"] {
            assert!(
                matches!(load(src, None).await, Err(SourceError::NotFound(_))),
                "{src}"
            );
        }
    }

    #[test]
    fn schemes() {
        assert!(has_scheme("ftp://x/y.png"));
        assert!(has_scheme("s3://bucket/k"));
        assert!(!has_scheme("C:\\x.png"));
        assert!(!has_scheme("pics/a.png"));
        assert_eq!(
            file_url_path("file:///tmp/a%20b.png").unwrap(),
            PathBuf::from("/tmp/a b.png")
        );
        assert_eq!(
            file_url_path("file://pics/a.png").unwrap(),
            PathBuf::from("pics/a.png")
        );
    }

    #[test]
    fn local_reads_refuse_non_files() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            read_local(dir.path()),
            Err(SourceError::NotAFile(_))
        ));
        assert!(matches!(
            read_local(&dir.path().join("missing.png")),
            Err(SourceError::NotFound(_))
        ));
        assert!(matches!(
            read_local(Path::new("/dev/zero")),
            Err(SourceError::NotAFile(_))
        ));
        std::fs::write(dir.path().join("a.bin"), b"abc").unwrap();
        assert_eq!(read_local(&dir.path().join("a.bin")).unwrap(), b"abc");
    }
}
