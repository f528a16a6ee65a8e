//! OpenAI's Images API (`image_gen.provider: openai`, hermes-agent:
//! `plugins/image_gen/openai`): `POST /images/generations`, or `/images/edits`
//! with the source images as multipart files.

use serde_json::{Map, Value, json};

use super::{Outcome, Request};
use crate::hermes::Context;
use crate::hermes::envvars;
use crate::net::HttpClient;
use crate::net::vendor::{self as http, ApiRequest, Body};
use crate::toolsets::image_gen::answer::ImageItem;
use crate::toolsets::image_gen::catalog::{
    OPENAI_API_MODEL, OPENAI_MAX_SOURCES, OPENAI_SIZES, aspect_index, resolve_openai_tier,
    timeout_cfg,
};
use crate::toolsets::image_gen::error::GenError;
use crate::toolsets::image_gen::save::Generated;
use crate::toolsets::image_gen::source::read_local_image;

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

pub(crate) async fn openai_generate(r: Request<'_>) -> Outcome {
    let Request { ctx, http, .. } = r;
    let (prompt, aspect, sources) = (r.prompt, r.aspect, r.sources);
    let Some(key) = ctx.env.get(envvars::OPENAI_API_KEY) else {
        return Err(GenError::AuthRequired("OPENAI_API_KEY not set. Run `hermes tools` → Image Generation → OpenAI to configure, or `hermes setup` to add the key.".into()));
    };
    let (_tier, quality) = resolve_openai_tier(ctx);
    let size = OPENAI_SIZES[aspect_index(aspect)];
    let sources = &sources[..sources.len().min(OPENAI_MAX_SOURCES)];
    let is_edit = !sources.is_empty();
    let body = if is_edit {
        let mut form = Multipart::new();
        let fields = [
            ("model", OPENAI_API_MODEL),
            ("prompt", prompt),
            ("size", size),
            ("quality", quality),
            ("n", "1"),
        ];
        for (name, value) in fields {
            form.text(name, value);
        }
        let field = if sources.len() > 1 {
            "image[]"
        } else {
            "image"
        };
        for (name, mime, bytes) in load_sources(http, sources).await? {
            form.file(field, &name, mime, &bytes);
        }
        let (content_type, bytes) = form.finish();
        Body::Raw {
            content_type,
            bytes,
        }
    } else {
        // gpt-image-2 always answers with b64_json and rejects response_format.
        Body::Json(json!({
            "model": OPENAI_API_MODEL, "prompt": prompt, "size": size, "n": 1, "quality": quality,
        }))
    };
    let (path, what) = if is_edit {
        ("edits", "editing")
    } else {
        ("generations", "generation")
    };
    let url = format!("{}/images/{path}", openai_base(ctx));
    let mut req = ApiRequest::new("openai", reqwest::Method::POST, &url)
        .bearer(key)
        .timeout(timeout_cfg(ctx, "openai"));
    req.body = body;
    let answer = http::exchange(http, req)
        .await
        .map_err(|f| GenError::Api(format!("OpenAI image {what} failed: {f}")))?;
    let generated = read_answer(&answer, size, quality)?;
    Ok((generated, if is_edit { "image" } else { "text" }))
}

/// The edit's source images as multipart files: (file name, MIME type, bytes).
async fn load_sources(
    http: &HttpClient,
    sources: &[String],
) -> Result<Vec<(String, &'static str, Vec<u8>)>, GenError> {
    let mut files = Vec::new();
    for s in sources {
        let lower = s.to_ascii_lowercase();
        let loaded = if lower.starts_with("http://")
            || lower.starts_with("https://")
            || s.starts_with("data:")
        {
            http::fetch_image(http, s)
                .await
                .map_err(|e| GenError::Value(e.to_string()))
        } else {
            read_local_image(s)
        };
        let (bytes, mime) = loaded
            .map_err(|e| GenError::Io(format!("Could not load source image for editing: {e}")))?;
        let name = s
            .split('?')
            .next()
            .and_then(|p| p.rsplit('/').next())
            .filter(|n| !n.is_empty() && !s.starts_with("data:"))
            .map(str::to_string)
            .unwrap_or_else(|| format!("image.{}", crate::image::sniff::extension(mime)));
        files.push((name, mime, bytes));
    }
    Ok(files)
}

/// The image in OpenAI's Images answer (`data[0]`: `b64_json`, else `url`), with
/// `size`, `quality` and the model's `revised_prompt` in `extra`.
fn read_answer(answer: &Value, size: &str, quality: &str) -> Result<Generated, GenError> {
    let empty = |m: &str| GenError::EmptyResponse(m.into());
    let Some(mut item) = ImageItem::first(answer) else {
        return Err(empty("OpenAI returned no image data"));
    };
    let mut extra = Map::new();
    extra.insert("size".into(), json!(size));
    extra.insert("quality".into(), json!(quality));
    if let Some(rp) = item.revised_prompt.take() {
        extra.insert("revised_prompt".into(), json!(rp));
    }
    let Some(found) = item.image() else {
        return Err(empty("OpenAI response contained neither b64_json nor URL"));
    };
    found.into_generated(extra, None, |e| {
        GenError::Io(format!(
            "Could not save image to cache: invalid base64: {e}"
        ))
    })
}
