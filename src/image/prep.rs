//! Turn raw image bytes into something every vision model API accepts.
//!
//! * Sniff the real format from magic bytes (never trust extensions or
//!   Content-Type), SVG by its `<svg` tag, as Hermes' `image_source._finalize`.
//! * Decode (this validates: a truncated or corrupt file is refused here, not by
//!   the model API later) with a pixel cap against decompression bombs.
//! * Convert formats the APIs refuse (SVG, BMP, TIFF) to PNG (Hermes'
//!   `_normalize_to_supported_image`).
//! * Downscale when the long side is over [`MAX_LONG_SIDE`] or the encoded
//!   bytes are over the payload budget; if nothing fits, say so.
//!
//! Accepted JPEG/PNG/GIF/WebP images that already fit are passed through
//! byte-for-byte (after the validating decode), so GIF animation, colour
//! profiles and quality are kept.
//!
//! Everything here is CPU-bound and synchronous: call it from `spawn_blocking`.

pub(crate) use super::sniff::{SourceFormat, sniff};
use std::io::Cursor;
use std::sync::{Arc, OnceLock};

use ::image::codecs::jpeg::JpegEncoder;
use ::image::codecs::png::{CompressionType, FilterType, PngEncoder};
use ::image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader};

/// Long side the model sees at most: ~1.2 megapixels keeps small text
/// readable while keeping image tokens sane (Anthropic's and OpenAI's
/// high-detail tiling both work at about this size).
pub(crate) const MAX_LONG_SIDE: u32 = 1568;

/// Raw bytes budget for the encoded image. Base64 grows 4/3, so this keeps
/// the data URL under Hermes' 4 MB embed target (`_EMBED_TARGET_BYTES`),
/// with headroom under Anthropic's 5 MB per-image limit.
pub(crate) const MAX_ENCODED_BYTES: usize = 3 * 1024 * 1024;

/// Decoding cap: images with more pixels are refused before decoding
/// (a 12,000 × 12,000 PNG can be a few KB on disk and 576 MB in memory).
pub(crate) const MAX_PIXELS: u64 = 64_000_000;

/// Hermes' raw ingest cap (`_MAX_INGEST_BYTES`, 50 MB).
pub(crate) const MAX_INGEST_BYTES: usize = 50 * 1024 * 1024;

/// Smallest long side we shrink to when trying to fit the byte budget.
const MIN_LONG_SIDE: u32 = 256;

#[derive(Debug, thiserror::Error)]
pub(crate) enum PrepError {
    /// Hermes' `NotAnImage` message.
    #[error("source is not a recognized image{0}")]
    NotAnImage(String),
    #[error("image exceeds size limit ({size} bytes, max {max})")]
    TooLarge { size: usize, max: usize },
    #[error(
        "image is {w}×{h} ({mp:.0} megapixels), more than the {limit} megapixel limit hermes-mcp will decode; downscale or crop it first (e.g. `convert in.png -resize 4000x4000 out.png`) and retry"
    )]
    TooManyPixels { w: u32, h: u32, mp: f64, limit: u64 },
    #[error("the {format} image is corrupt or truncated and cannot be decoded: {detail}")]
    Corrupt {
        format: &'static str,
        detail: String,
    },
    /// The SVG could not be parsed (the parser's error is the source) or
    /// drawn (no size, no memory for its pixels).
    #[error(
        "This is an SVG, which vision models cannot read directly, and it could not be rasterized: {reason}. Convert the SVG to PNG first (e.g. open it in a browser and screenshot it) and re-run vision_analyze on the PNG."
    )]
    Svg {
        reason: String,
        source: Option<resvg::usvg::Error>,
    },
    #[error(
        "Image too large for vision API: even at {w}×{h} it encodes to {bytes} bytes (limit {limit}). Crop the image to the region of interest or compress it and retry."
    )]
    CannotFit {
        w: u32,
        h: u32,
        bytes: usize,
        limit: usize,
    },
    #[error("cannot encode the image: {0}")]
    Encode(#[source] image::ImageError),
    /// The blocking task that decodes and encodes the image panicked or was cancelled.
    #[error("cannot encode the image: image worker failed: {0}")]
    Worker(#[source] tokio::task::JoinError),
}

impl PrepError {
    /// An SVG that parsed but cannot be drawn, for `reason`.
    fn svg(reason: impl Into<String>) -> Self {
        PrepError::Svg {
            reason: reason.into(),
            source: None,
        }
    }
}

/// The `image` crate's decoder for a sniffed format (SVG has none: resvg draws it).
fn image_format(f: SourceFormat) -> Option<ImageFormat> {
    Some(match f {
        SourceFormat::Png => ImageFormat::Png,
        SourceFormat::Jpeg => ImageFormat::Jpeg,
        SourceFormat::Gif => ImageFormat::Gif,
        SourceFormat::Webp => ImageFormat::WebP,
        SourceFormat::Bmp => ImageFormat::Bmp,
        SourceFormat::Tiff => ImageFormat::Tiff,
        SourceFormat::Svg => return None,
    })
}

/// Limits for one preparation.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budget {
    pub max_long_side: u32,
    pub max_bytes: usize,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            max_long_side: MAX_LONG_SIDE,
            max_bytes: MAX_ENCODED_BYTES,
        }
    }
}

/// An image ready for a model API.
#[derive(Debug, Clone)]
pub(crate) struct Prepared {
    pub bytes: Vec<u8>,
    pub mime: &'static str,
    pub width: u32,
    pub height: u32,
    pub source: SourceFormat,
    pub source_width: u32,
    pub source_height: u32,
    /// Decoded pixels, kept so a later smaller retry needs no second decode.
    pixels: Option<Arc<DynamicImage>>,
}

impl Prepared {
    pub(crate) fn converted(&self) -> bool {
        self.mime != self.source.mime()
    }
    pub(crate) fn resized(&self) -> bool {
        (self.width, self.height) != (self.source_width, self.source_height)
    }
    pub(crate) fn data_url(&self) -> String {
        use base64::Engine as _;
        let b64 = base64::engine::general_purpose::STANDARD.encode(&self.bytes);
        format!("data:{};base64,{b64}", self.mime)
    }
    pub(crate) fn base64(&self) -> String {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(&self.bytes)
    }
    /// One line for the model: what was done to the image.
    pub(crate) fn describe(&self) -> String {
        let mut s = format!("{}×{} {}", self.width, self.height, mime_name(self.mime));
        if self.converted() || self.resized() {
            s.push_str(&format!(
                ", from a {}×{} {}",
                self.source_width,
                self.source_height,
                self.source.name()
            ));
        }
        s
    }
    /// A smaller version (half the long side), for a retry after an API
    /// rejected the size. `None` when it cannot shrink further.
    pub(crate) fn shrink(&self) -> Option<Result<Prepared, PrepError>> {
        let long = self.width.max(self.height);
        if long <= MIN_LONG_SIDE {
            return None;
        }
        let budget = Budget {
            max_long_side: (long / 2).max(MIN_LONG_SIDE),
            max_bytes: self.bytes.len().min(MAX_ENCODED_BYTES) / 2,
        };
        let img = match &self.pixels {
            Some(p) => p.clone(),
            None => match decode_any(&self.bytes) {
                Ok(i) => Arc::new(i),
                Err(e) => return Some(Err(e)),
            },
        };
        Some(
            encode_fitting(&img, self.source, budget, self.mime == "image/png").map(|mut p| {
                p.source_width = self.source_width;
                p.source_height = self.source_height;
                p.pixels = Some(img.clone());
                p
            }),
        )
    }
}

fn mime_name(mime: &str) -> &'static str {
    match mime {
        "image/png" => "PNG",
        "image/jpeg" => "JPEG",
        "image/gif" => "GIF",
        "image/webp" => "WebP",
        _ => "image",
    }
}

/// Validate and convert `data` for a model API within `budget`.
pub(crate) fn prepare(data: &[u8], budget: Budget) -> Result<Prepared, PrepError> {
    if data.len() > MAX_INGEST_BYTES {
        return Err(PrepError::TooLarge {
            size: data.len(),
            max: MAX_INGEST_BYTES,
        });
    }
    let Some(format) = sniff(data) else {
        return Err(PrepError::NotAnImage(String::new()));
    };
    if format == SourceFormat::Svg {
        let img = rasterize_svg(data, budget.max_long_side)?;
        let (w, h) = (img.width(), img.height());
        let img = Arc::new(img);
        return encode_fitting(&img, format, budget, true).map(|mut p| {
            p.source_width = w;
            p.source_height = h;
            p.pixels = Some(img);
            p
        });
    }
    let (img, (w, h)) = decode(data, format)?;
    let long = w.max(h);
    // OpenAI (Codex's models) accepts only non-animated GIFs: an animation
    // becomes a PNG of its first frame.
    let animated = format == SourceFormat::Gif && gif_is_animated(data);
    if format.api_accepted()
        && !animated
        && long <= budget.max_long_side
        && data.len() <= budget.max_bytes
    {
        return Ok(Prepared {
            bytes: data.to_vec(),
            mime: format.mime(),
            width: w,
            height: h,
            source: format,
            source_width: w,
            source_height: h,
            pixels: Some(Arc::new(img)),
        });
    }
    // PNG output for lossless sources and anything with transparency; JPEG
    // for photos (Hermes: PNG stays PNG, the rest becomes JPEG when resized).
    let prefer_png =
        !matches!(format, SourceFormat::Jpeg | SourceFormat::Webp) || img.color().has_alpha();
    let img = Arc::new(img);
    encode_fitting(&img, format, budget, prefer_png).map(|mut p| {
        p.source_width = w;
        p.source_height = h;
        p.pixels = Some(img);
        p
    })
}

/// More than one frame (the first frame alone was validated by `decode`).
fn gif_is_animated(data: &[u8]) -> bool {
    use image::AnimationDecoder as _;
    match image::codecs::gif::GifDecoder::new(Cursor::new(data)) {
        Ok(d) => d.into_frames().take(2).filter(|f| f.is_ok()).count() > 1,
        Err(_) => false,
    }
}

fn corrupt(format: SourceFormat, e: impl std::fmt::Display) -> PrepError {
    PrepError::Corrupt {
        format: format.name(),
        detail: e.to_string(),
    }
}

/// Decode with the pixel cap, applying the EXIF orientation (re-encoding
/// drops EXIF, so the pixels must be upright).
fn decode(data: &[u8], format: SourceFormat) -> Result<(DynamicImage, (u32, u32)), PrepError> {
    let fmt = image_format(format).expect("raster format");
    let mut reader = ImageReader::new(Cursor::new(data));
    reader.set_format(fmt);
    let mut limits = image::Limits::default();
    limits.max_alloc = Some(MAX_PIXELS * 8);
    reader.limits(limits);
    let mut decoder = reader.into_decoder().map_err(|e| corrupt(format, e))?;
    let (w, h) = decoder.dimensions();
    let pixels = u64::from(w) * u64::from(h);
    if pixels > MAX_PIXELS {
        return Err(PrepError::TooManyPixels {
            w,
            h,
            mp: pixels as f64 / 1e6,
            limit: MAX_PIXELS / 1_000_000,
        });
    }
    if w == 0 || h == 0 {
        return Err(corrupt(format, "the image has no pixels"));
    }
    let orientation = decoder.orientation().ok();
    let mut img = DynamicImage::from_decoder(decoder).map_err(|e| corrupt(format, e))?;
    if let Some(o) = orientation {
        img.apply_orientation(o);
    }
    let dims = (img.width(), img.height());
    Ok((img, dims))
}

fn decode_any(data: &[u8]) -> Result<DynamicImage, PrepError> {
    let format = sniff(data).ok_or(PrepError::NotAnImage(String::new()))?;
    decode(data, format).map(|(i, _)| i)
}

/// Scale `(w, h)` so the long side is at most `max_long`.
pub(crate) fn fit_dims(w: u32, h: u32, max_long: u32) -> (u32, u32) {
    let long = w.max(h);
    if long <= max_long {
        return (w, h);
    }
    let scale = max_long as f64 / long as f64;
    let nw = ((w as f64 * scale).round() as u32).clamp(1, max_long);
    let nh = ((h as f64 * scale).round() as u32).clamp(1, max_long);
    (nw, nh)
}

/// Resize (area-averaging, one pass) and encode, shrinking until the bytes fit.
fn encode_fitting(
    img: &DynamicImage,
    source: SourceFormat,
    budget: Budget,
    prefer_png: bool,
) -> Result<Prepared, PrepError> {
    let mut long = budget.max_long_side.max(1);
    let mut best: Option<(u32, u32, usize)> = None;
    loop {
        let (w, h) = fit_dims(img.width(), img.height(), long);
        let scaled = if (w, h) == (img.width(), img.height()) {
            None
        } else {
            Some(downscale(img, w, h))
        };
        let cur = scaled.as_ref().unwrap_or(img);
        if prefer_png {
            let bytes = encode_png(cur)?;
            if bytes.len() <= budget.max_bytes {
                return Ok(done(bytes, "image/png", w, h, source));
            }
        }
        // JPEG: drop alpha onto white (what a viewer shows) and try qualities.
        let rgb = flatten_rgb(cur);
        for q in [85u8, 70, 50] {
            let bytes = encode_jpeg(&rgb, q)?;
            if bytes.len() <= budget.max_bytes {
                return Ok(done(bytes, "image/jpeg", w, h, source));
            }
            best = Some((w, h, bytes.len()));
        }
        if long <= MIN_LONG_SIDE {
            let (w, h, bytes) = best.unwrap_or((w, h, 0));
            return Err(PrepError::CannotFit {
                w,
                h,
                bytes,
                limit: budget.max_bytes,
            });
        }
        long = (long / 2).max(MIN_LONG_SIDE);
    }
}

/// Area-averaging downscale. While the image is at least twice the target,
/// 2×2 blocks are averaged first (a cheap pass over the raw bytes), so the
/// general resampler only handles the last factor below 2.
fn downscale(img: &DynamicImage, w: u32, h: u32) -> DynamicImage {
    let mut cur: Option<DynamicImage> = None;
    loop {
        let src = cur.as_ref().unwrap_or(img);
        if src.width() < w * 2 || src.height() < h * 2 {
            break;
        }
        match halve(src) {
            Some(half) => cur = Some(half),
            None => break,
        }
    }
    cur.as_ref().unwrap_or(img).thumbnail_exact(w, h)
}

/// Average 2×2 blocks of an 8-bit image (odd last row/column dropped).
fn halve(img: &DynamicImage) -> Option<DynamicImage> {
    fn run(src: &[u8], w: usize, h: usize, ch: usize) -> (Vec<u8>, usize, usize) {
        let (nw, nh) = (w / 2, h / 2);
        let mut out = vec![0u8; nw * nh * ch];
        let stride = w * ch;
        for y in 0..nh {
            let r0 = &src[2 * y * stride..2 * y * stride + stride];
            let r1 = &src[(2 * y + 1) * stride..(2 * y + 1) * stride + stride];
            let o = &mut out[y * nw * ch..(y + 1) * nw * ch];
            for x in 0..nw {
                let i = 2 * x * ch;
                for c in 0..ch {
                    let sum = r0[i + c] as u16
                        + r0[i + ch + c] as u16
                        + r1[i + c] as u16
                        + r1[i + ch + c] as u16;
                    o[x * ch + c] = ((sum + 2) / 4) as u8;
                }
            }
        }
        (out, nw, nh)
    }
    let (w, h) = (img.width() as usize, img.height() as usize);
    if w < 2 || h < 2 {
        return None;
    }
    Some(match img {
        DynamicImage::ImageRgb8(b) => {
            let (o, nw, nh) = run(b.as_raw(), w, h, 3);
            DynamicImage::ImageRgb8(image::RgbImage::from_raw(nw as u32, nh as u32, o)?)
        }
        DynamicImage::ImageRgba8(b) => {
            let (o, nw, nh) = run(b.as_raw(), w, h, 4);
            DynamicImage::ImageRgba8(image::RgbaImage::from_raw(nw as u32, nh as u32, o)?)
        }
        DynamicImage::ImageLuma8(b) => {
            let (o, nw, nh) = run(b.as_raw(), w, h, 1);
            DynamicImage::ImageLuma8(image::GrayImage::from_raw(nw as u32, nh as u32, o)?)
        }
        _ => return None,
    })
}

fn done(bytes: Vec<u8>, mime: &'static str, w: u32, h: u32, source: SourceFormat) -> Prepared {
    Prepared {
        bytes,
        mime,
        width: w,
        height: h,
        source,
        source_width: w,
        source_height: h,
        pixels: None,
    }
}

fn flatten_rgb(img: &DynamicImage) -> image::RgbImage {
    if !img.color().has_alpha() {
        return img.to_rgb8();
    }
    let rgba = img.to_rgba8();
    let mut out = image::RgbImage::new(rgba.width(), rgba.height());
    for (o, p) in out.pixels_mut().zip(rgba.pixels()) {
        let a = p[3] as u32;
        for c in 0..3 {
            o[c] = ((p[c] as u32 * a + 255 * (255 - a) + 127) / 255) as u8;
        }
    }
    out
}

fn encode_png(img: &DynamicImage) -> Result<Vec<u8>, PrepError> {
    let img: DynamicImage = match img {
        DynamicImage::ImageRgb8(_)
        | DynamicImage::ImageRgba8(_)
        | DynamicImage::ImageLuma8(_)
        | DynamicImage::ImageLumaA8(_) => {
            return png_bytes(img);
        }
        other if other.color().has_alpha() => DynamicImage::ImageRgba8(other.to_rgba8()),
        other => DynamicImage::ImageRgb8(other.to_rgb8()),
    };
    png_bytes(&img)
}

fn png_bytes(img: &DynamicImage) -> Result<Vec<u8>, PrepError> {
    let mut out = Vec::new();
    let enc = PngEncoder::new_with_quality(&mut out, CompressionType::Fast, FilterType::Adaptive);
    img.write_with_encoder(enc).map_err(PrepError::Encode)?;
    Ok(out)
}

fn encode_jpeg(img: &image::RgbImage, quality: u8) -> Result<Vec<u8>, PrepError> {
    let mut out = Vec::new();
    let enc = JpegEncoder::new_with_quality(&mut out, quality);
    img.write_with_encoder(enc).map_err(PrepError::Encode)?;
    Ok(out)
}

fn fontdb() -> Arc<resvg::usvg::fontdb::Database> {
    static DB: OnceLock<Arc<resvg::usvg::fontdb::Database>> = OnceLock::new();
    DB.get_or_init(|| {
        let mut db = resvg::usvg::fontdb::Database::new();
        db.load_system_fonts();
        Arc::new(db)
    })
    .clone()
}

/// Rasterize an SVG at its intrinsic size (scaled down to `max_long`, and up
/// to at least 512 px on the long side for icon-sized drawings). External
/// references (`<image href="file.png">`) are not loaded: an SVG from the web
/// must not pull local files into what the model sees.
pub(crate) fn rasterize_svg(data: &[u8], max_long: u32) -> Result<DynamicImage, PrepError> {
    use resvg::{tiny_skia, usvg};
    let mut opt = usvg::Options {
        fontdb: fontdb(),
        ..usvg::Options::default()
    };
    opt.image_href_resolver.resolve_string = Box::new(|_, _| None);
    let tree = usvg::Tree::from_data(data, &opt).map_err(|e| PrepError::Svg {
        reason: e.to_string(),
        source: Some(e),
    })?;
    let size = tree.size();
    let (sw, sh) = (size.width() as f64, size.height() as f64);
    if !(sw.is_finite() && sh.is_finite() && sw >= 1.0 && sh >= 1.0) {
        return Err(PrepError::svg("the drawing has no size"));
    }
    let long = sw.max(sh);
    let target = long.clamp(512f64.min(max_long as f64), max_long as f64);
    let scale = target / long;
    let w = ((sw * scale).round() as u32).max(1);
    let h = ((sh * scale).round() as u32).max(1);
    let mut pixmap = tiny_skia::Pixmap::new(w, h)
        .ok_or_else(|| PrepError::svg(format!("cannot allocate {w}×{h} pixels")))?;
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(scale as f32, scale as f32),
        &mut pixmap.as_mut(),
    );
    let rgba = image::RgbaImage::from_raw(w, h, pixmap.take_demultiplied())
        .ok_or_else(|| PrepError::svg("bad pixel buffer"))?;
    Ok(DynamicImage::ImageRgba8(rgba))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(w: u32, h: u32) -> Vec<u8> {
        let img = image::RgbImage::from_fn(w, h, |x, y| {
            image::Rgb([(x % 256) as u8, (y % 256) as u8, 128])
        });
        let mut out = Vec::new();
        DynamicImage::ImageRgb8(img)
            .write_to(&mut Cursor::new(&mut out), ImageFormat::Png)
            .unwrap();
        out
    }

    #[test]
    fn sniffs_formats() {
        assert_eq!(sniff(&png(2, 2)), Some(SourceFormat::Png));
        assert_eq!(sniff(b"\xff\xd8\xff\xe0rest"), Some(SourceFormat::Jpeg));
        assert_eq!(sniff(b"GIF89a...."), Some(SourceFormat::Gif));
        assert_eq!(sniff(b"RIFF\0\0\0\0WEBPVP8 "), Some(SourceFormat::Webp));
        assert_eq!(sniff(b"II*\0...."), Some(SourceFormat::Tiff));
        assert_eq!(
            sniff(b"<?xml version='1.0'?><SVG xmlns=..."),
            Some(SourceFormat::Svg)
        );
        assert_eq!(sniff(b"<html><body>hi</body></html>"), None);
        assert_eq!(sniff(b""), None);
    }

    #[test]
    fn small_png_passes_through_unchanged() {
        let data = png(40, 30);
        let p = prepare(&data, Budget::default()).unwrap();
        assert_eq!(p.bytes, data);
        assert_eq!((p.mime, p.width, p.height), ("image/png", 40, 30));
        assert!(!p.converted() && !p.resized());
    }

    #[test]
    fn wide_png_is_downscaled_to_the_long_side() {
        let p = prepare(&png(3000, 1000), Budget::default()).unwrap();
        assert_eq!((p.width, p.height), (1568, 523));
        assert_eq!(p.mime, "image/png");
        let back = image::load_from_memory(&p.bytes).unwrap();
        assert_eq!((back.width(), back.height()), (1568, 523));
        assert!(
            p.describe().contains("from a 3000×1000 PNG"),
            "{}",
            p.describe()
        );
    }

    #[test]
    fn downscale_averages_blocks() {
        // Alternating black/white columns average to mid-grey, not aliasing.
        let img = DynamicImage::ImageRgb8(image::RgbImage::from_fn(400, 200, |x, _| {
            let v = if x % 2 == 0 { 0 } else { 255 };
            image::Rgb([v, v, v])
        }));
        let small = downscale(&img, 100, 50).to_rgb8();
        assert_eq!(small.dimensions(), (100, 50));
        for p in small.pixels() {
            assert!((120..=136).contains(&p[0]), "{:?}", p);
        }
    }

    #[test]
    fn bmp_becomes_png() {
        let mut out = Vec::new();
        DynamicImage::ImageRgb8(image::RgbImage::new(10, 10))
            .write_to(&mut Cursor::new(&mut out), ImageFormat::Bmp)
            .unwrap();
        let p = prepare(&out, Budget::default()).unwrap();
        assert_eq!(p.mime, "image/png");
        assert_eq!(p.source, SourceFormat::Bmp);
        assert!(p.converted());
    }

    #[test]
    fn animated_gif_becomes_a_png_of_its_first_frame_and_still_gif_passes() {
        use image::codecs::gif::GifEncoder;
        let frame = |c: u8| {
            image::Frame::new(image::RgbaImage::from_pixel(
                20,
                10,
                image::Rgba([c, 0, 0, 255]),
            ))
        };
        let mut anim = Vec::new();
        {
            let mut enc = GifEncoder::new(&mut anim);
            enc.encode_frames(vec![frame(250), frame(10)]).unwrap();
        }
        let p = prepare(&anim, Budget::default()).unwrap();
        assert_eq!(p.mime, "image/png");
        let back = image::load_from_memory(&p.bytes).unwrap().to_rgba8();
        assert!(back.get_pixel(5, 5).0[0] > 200, "first frame");
        let mut still = Vec::new();
        {
            let mut enc = GifEncoder::new(&mut still);
            enc.encode_frames(vec![frame(250)]).unwrap();
        }
        let p = prepare(&still, Budget::default()).unwrap();
        assert_eq!((p.mime, p.bytes == still), ("image/gif", true));
    }

    #[test]
    fn corrupt_png_is_refused() {
        let mut data = png(64, 64);
        data.truncate(data.len() / 2);
        let e = prepare(&data, Budget::default()).unwrap_err();
        assert!(matches!(e, PrepError::Corrupt { format: "PNG", .. }), "{e}");
    }

    #[test]
    fn noisy_image_is_reencoded_or_shrunk_to_fit_else_errors() {
        // Pseudo-random noise does not compress: PNG is over a tight budget.
        let mut seed = 1u32;
        let img = image::RgbImage::from_fn(600, 600, |_, _| {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            let b = seed.to_le_bytes();
            image::Rgb([b[1], b[2], b[3]])
        });
        let mut data = Vec::new();
        DynamicImage::ImageRgb8(img)
            .write_to(&mut Cursor::new(&mut data), ImageFormat::Png)
            .unwrap();
        let p = prepare(
            &data,
            Budget {
                max_long_side: 600,
                max_bytes: 300_000,
            },
        )
        .unwrap();
        // Lossless PNG cannot fit: a JPEG at full size or a smaller image.
        assert!(p.mime == "image/jpeg" || p.width < 600, "{p:?}");
        assert!(p.bytes.len() <= 300_000);
        let back = image::load_from_memory(&p.bytes).unwrap();
        assert_eq!((back.width(), back.height()), (p.width, p.height));
        let e = prepare(
            &data,
            Budget {
                max_long_side: 600,
                max_bytes: 1_000,
            },
        )
        .unwrap_err();
        assert!(matches!(e, PrepError::CannotFit { .. }), "{e}");
        assert!(e.to_string().contains("Image too large for vision API"));
    }

    #[test]
    fn shrink_halves_the_long_side() {
        let p = prepare(&png(1200, 800), Budget::default()).unwrap();
        let s = p.shrink().unwrap().unwrap();
        assert_eq!((s.width, s.height), (600, 400));
        assert_eq!((s.source_width, s.source_height), (1200, 800));
    }

    #[test]
    fn svg_is_rasterized_and_external_files_are_not_loaded() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("secret.png"), png(8, 8)).unwrap();
        let svg = format!(
            r##"<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="200" height="100">
            <rect width="200" height="100" fill="#ff0000"/>
            <image href="{}" x="0" y="0" width="200" height="100"/></svg>"##,
            dir.path().join("secret.png").display()
        );
        let p = prepare(svg.as_bytes(), Budget::default()).unwrap();
        assert_eq!(p.mime, "image/png");
        assert_eq!((p.width, p.height), (512, 256));
        let back = image::load_from_memory(&p.bytes).unwrap().to_rgba8();
        // Still red everywhere: the external image was not drawn.
        assert_eq!(back.get_pixel(10, 10).0, [255, 0, 0, 255]);
        assert_eq!(back.get_pixel(500, 250).0, [255, 0, 0, 255]);
    }

    #[test]
    fn encode_and_svg_errors_carry_their_cause() {
        use std::error::Error as _;
        let cause = image::load_from_memory(b"not an image").unwrap_err();
        let text = cause.to_string();
        let e = PrepError::Encode(cause);
        assert_eq!(e.to_string(), format!("cannot encode the image: {text}"));
        let src = e.source().expect("a source");
        assert!(src.downcast_ref::<image::ImageError>().is_some(), "{src:?}");
        assert_eq!(src.to_string(), text);

        let e = rasterize_svg(b"<svg", 100).unwrap_err();
        let src = e.source().expect("a source");
        assert!(
            src.downcast_ref::<resvg::usvg::Error>().is_some(),
            "{src:?}"
        );
        assert_eq!(
            e.to_string(),
            format!(
                "This is an SVG, which vision models cannot read directly, and it could not be rasterized: {src}. Convert the SVG to PNG first (e.g. open it in a browser and screenshot it) and re-run vision_analyze on the PNG."
            )
        );
        assert!(PrepError::svg("the drawing has no size").source().is_none());
    }

    #[tokio::test]
    async fn a_failed_worker_is_the_source() {
        use std::error::Error as _;
        let task = tokio::spawn(std::future::pending::<()>());
        task.abort();
        let cause = task.await.unwrap_err();
        let text = cause.to_string();
        let e = PrepError::Worker(cause);
        assert_eq!(
            e.to_string(),
            format!("cannot encode the image: image worker failed: {text}")
        );
        let src = e.source().expect("a source");
        assert!(src.downcast_ref::<tokio::task::JoinError>().is_some());
    }
}
