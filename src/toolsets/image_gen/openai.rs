//! OpenAI's Images API (`image_gen.provider: openai`, hermes-agent:
//! `plugins/image_gen/openai`): `POST /images/generations`, or `/images/edits`
//! with the source images as multipart files.

use base64::Engine as _;
use serde::Deserialize;
use serde_json::{Map, json};

use super::catalog::{
    OPENAI_API_MODEL, OPENAI_MAX_SOURCES, OPENAI_SIZES, aspect_index, resolve_openai_tier,
    timeout_cfg,
};
use super::error::GenError;
use super::save::Generated;
use super::source::read_local_image;
use crate::hermes::Context;
use crate::hermes::envvars;
use crate::lenient;
use crate::net::HttpClient;
use crate::net::vendor::{self as http, ApiRequest, Body};

/// The Images API answer (`data[0]` is read).
#[derive(Deserialize, Default)]
#[serde(default)]
struct ImagesResponse {
    #[serde(deserialize_with = "lenient::objects")]
    data: Option<Vec<ImageData>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ImageData {
    #[serde(deserialize_with = "lenient::opt")]
    b64_json: Option<String>,
    #[serde(deserialize_with = "lenient::opt")]
    url: Option<String>,
    #[serde(deserialize_with = "lenient::opt")]
    revised_prompt: Option<String>,
}

pub(crate) const DEFAULT_OPENAI_BASE_URL: &str = "https://api.openai.com/v1";

fn openai_base(ctx: &Context) -> String {
    ctx.env
        .get(envvars::OPENAI_BASE_URL)
        .unwrap_or_else(|| DEFAULT_OPENAI_BASE_URL.to_string())
        .trim_end_matches('/')
        .to_string()
}

/// A multipart/form-data body (the Images edit endpoint takes files).
pub(crate) struct Multipart {
    boundary: String,
    body: Vec<u8>,
}

impl Multipart {
    pub(crate) fn new() -> Self {
        Multipart {
            boundary: format!("hermes-mcp-{:032x}", fastrand::u128(..)),
            body: Vec::new(),
        }
    }
    pub(crate) fn text(&mut self, name: &str, value: &str) {
        self.body.extend_from_slice(
            format!(
                "--{}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n",
                self.boundary
            )
            .as_bytes(),
        );
    }
    pub(crate) fn file(&mut self, name: &str, filename: &str, mime: &str, data: &[u8]) {
        let filename = filename.replace(['"', '\r', '\n'], "_");
        self.body.extend_from_slice(
            format!(
                "--{}\r\nContent-Disposition: form-data; name=\"{name}\"; filename=\"{filename}\"\r\nContent-Type: {mime}\r\n\r\n",
                self.boundary
            )
            .as_bytes(),
        );
        self.body.extend_from_slice(data);
        self.body.extend_from_slice(b"\r\n");
    }
    pub(crate) fn finish(mut self) -> (String, Vec<u8>) {
        self.body
            .extend_from_slice(format!("--{}--\r\n", self.boundary).as_bytes());
        (
            format!("multipart/form-data; boundary={}", self.boundary),
            self.body,
        )
    }
}

impl Default for Multipart {
    fn default() -> Self {
        Self::new()
    }
}

pub(crate) async fn openai_generate(
    ctx: &Context,
    http: &HttpClient,
    prompt: &str,
    aspect: &str,
    sources: &[String],
) -> Result<(Generated, &'static str), GenError> {
    let Some(key) = ctx.env.get(envvars::OPENAI_API_KEY) else {
        return Err(GenError::AuthRequired("OPENAI_API_KEY not set. Run `hermes tools` → Image Generation → OpenAI to configure, or `hermes setup` to add the key.".into()));
    };
    let (_tier, quality) = resolve_openai_tier(ctx);
    let size = OPENAI_SIZES[aspect_index(aspect)];
    let base = openai_base(ctx);
    let sources: Vec<&String> = sources.iter().take(OPENAI_MAX_SOURCES).collect();
    let is_edit = !sources.is_empty();
    let url;
    let mut req = if is_edit {
        let mut files = Vec::new();
        for s in &sources {
            let loaded = if s.to_ascii_lowercase().starts_with("http://")
                || s.to_ascii_lowercase().starts_with("https://")
                || s.starts_with("data:")
            {
                http::fetch_image(http, s)
                    .await
                    .map_err(|e| GenError::Value(e.to_string()))
            } else {
                read_local_image(s)
            };
            let (bytes, mime) = loaded.map_err(|e| {
                GenError::Io(format!("Could not load source image for editing: {e}"))
            })?;
            let name = s
                .split('?')
                .next()
                .and_then(|p| p.rsplit('/').next())
                .filter(|n| !n.is_empty() && !s.starts_with("data:"))
                .map(str::to_string)
                .unwrap_or_else(|| format!("image.{}", crate::sniff::extension(mime)));
            files.push((name, mime, bytes));
        }
        let mut form = Multipart::new();
        form.text("model", OPENAI_API_MODEL);
        form.text("prompt", prompt);
        form.text("size", size);
        form.text("quality", quality);
        form.text("n", "1");
        let field = if files.len() > 1 { "image[]" } else { "image" };
        for (name, mime, bytes) in &files {
            form.file(field, name, mime, bytes);
        }
        let (content_type, bytes) = form.finish();
        url = format!("{base}/images/edits");
        let mut r = ApiRequest::new("openai", reqwest::Method::POST, &url);
        r.body = Body::Raw {
            content_type,
            bytes,
        };
        r
    } else {
        url = format!("{base}/images/generations");
        let mut r = ApiRequest::new("openai", reqwest::Method::POST, &url);
        // gpt-image-2 always answers with b64_json and rejects response_format.
        r.body = Body::Json(json!({
            "model": OPENAI_API_MODEL, "prompt": prompt, "size": size, "n": 1, "quality": quality,
        }));
        r
    };
    req.auth = Some(("Bearer", key));
    req.timeout = timeout_cfg(ctx, "image_gen.openai.timeout");
    let what = if is_edit { "editing" } else { "generation" };
    let api_err = |m: String| GenError::Api(format!("OpenAI image {what} failed: {m}"));
    let resp = http::send(http, req)
        .await
        .map_err(|e| api_err(e.to_string()))?;
    if !(200..300).contains(&resp.status) {
        return Err(api_err(http::status_error(&resp)));
    }
    let body: ImagesResponse = lenient::object(&resp.json().map_err(|e| api_err(e.to_string()))?);
    let empty = |m: &str| GenError::EmptyResponse(m.into());
    let Some(first) = body.data.and_then(|d| d.into_iter().next()) else {
        return Err(empty("OpenAI returned no image data"));
    };
    let mut extra = Map::new();
    extra.insert("size".into(), json!(size));
    extra.insert("quality".into(), json!(quality));
    if let Some(rp) = first.revised_prompt {
        extra.insert("revised_prompt".into(), json!(rp));
    }
    let modality = if is_edit { "image" } else { "text" };
    if let Some(b64) = first.b64_json {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64.trim())
            .map_err(|e| {
                GenError::Io(format!(
                    "Could not save image to cache: invalid base64: {e}"
                ))
            })?;
        return Ok((
            Generated {
                url: None,
                bytes: Some(bytes),
                extra,
                model: None,
            },
            modality,
        ));
    }
    if let Some(u) = first.url {
        return Ok((
            Generated {
                url: Some(u),
                bytes: None,
                extra,
                model: None,
            },
            modality,
        ));
    }
    Err(empty("OpenAI response contained neither b64_json nor URL"))
}
