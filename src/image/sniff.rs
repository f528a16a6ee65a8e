//! What kind of image a byte string is, from its magic bytes: the one sniffer
//! vision, browser screenshots and image generation share (never trust a file
//! extension or a Content-Type). A leaf: it imports nothing of the crate.

/// Detected source format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceFormat {
    Png,
    Jpeg,
    Gif,
    Webp,
    Bmp,
    Tiff,
    Svg,
}

impl SourceFormat {
    pub fn mime(self) -> &'static str {
        match self {
            SourceFormat::Png => "image/png",
            SourceFormat::Jpeg => "image/jpeg",
            SourceFormat::Gif => "image/gif",
            SourceFormat::Webp => "image/webp",
            SourceFormat::Bmp => "image/bmp",
            SourceFormat::Tiff => "image/tiff",
            SourceFormat::Svg => "image/svg+xml",
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            SourceFormat::Png => "PNG",
            SourceFormat::Jpeg => "JPEG",
            SourceFormat::Gif => "GIF",
            SourceFormat::Webp => "WebP",
            SourceFormat::Bmp => "BMP",
            SourceFormat::Tiff => "TIFF",
            SourceFormat::Svg => "SVG",
        }
    }
    /// Media types the major vision APIs accept inline (Hermes'
    /// `_ANTHROPIC_SUPPORTED_MEDIA_TYPES`).
    pub fn api_accepted(self) -> bool {
        matches!(
            self,
            SourceFormat::Png | SourceFormat::Jpeg | SourceFormat::Gif | SourceFormat::Webp
        )
    }
}

/// Magic-byte sniff (Hermes' `_detect_image_mime_type_from_bytes` plus TIFF),
/// then the `<svg` check on the first 4 KB.
pub fn sniff(data: &[u8]) -> Option<SourceFormat> {
    let h = &data[..data.len().min(64)];
    if h.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Some(SourceFormat::Png);
    }
    if h.starts_with(b"\xff\xd8\xff") {
        return Some(SourceFormat::Jpeg);
    }
    if h.starts_with(b"GIF87a") || h.starts_with(b"GIF89a") {
        return Some(SourceFormat::Gif);
    }
    if h.starts_with(b"BM") {
        return Some(SourceFormat::Bmp);
    }
    if h.len() >= 12 && &h[..4] == b"RIFF" && &h[8..12] == b"WEBP" {
        return Some(SourceFormat::Webp);
    }
    if h.starts_with(b"II*\0") || h.starts_with(b"MM\0*") {
        return Some(SourceFormat::Tiff);
    }
    let head = &data[..data.len().min(4096)];
    if head.windows(4).any(|w| w.eq_ignore_ascii_case(b"<svg")) {
        return Some(SourceFormat::Svg);
    }
    None
}

/// The type of `data` when it is an image Hermes' image tools save (PNG, JPEG,
/// WebP, GIF); BMP, TIFF and SVG are not.
pub fn saveable_mime(data: &[u8]) -> Option<&'static str> {
    use SourceFormat as F;
    match sniff(data)? {
        f @ (F::Png | F::Jpeg | F::Webp | F::Gif) => Some(f.mime()),
        F::Bmp | F::Tiff | F::Svg => None,
    }
}

/// The file extension Hermes gives a saved image of this media type.
pub fn extension(mime: &str) -> &'static str {
    match mime {
        "image/jpeg" => "jpg",
        "image/webp" => "webp",
        "image/gif" => "gif",
        _ => "png",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffs_saveable_images() {
        assert_eq!(saveable_mime(b"\x89PNG\r\n\x1a\n...."), Some("image/png"));
        assert_eq!(saveable_mime(b"\xff\xd8\xff\xe0"), Some("image/jpeg"));
        assert_eq!(saveable_mime(b"RIFF\0\0\0\0WEBPVP8 "), Some("image/webp"));
        assert_eq!(saveable_mime(b"<html>"), None);
    }
}
