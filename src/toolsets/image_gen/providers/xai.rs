//! xAI's Grok Imagine (`image_gen.provider: xai`, hermes-agent: `plugins/image_gen/xai`,
//! `tools/xai_http.py`): `POST <base>/images/generations` with `aspect_ratio` and
//! `resolution`, or `POST <base>/images/edits` (JSON, `grok-imagine-image-quality`) with up to
//! three source images; `storage_options` asks xAI to keep the file behind a public URL
//! (Hermes' default, `image_gen.xai.storage.*`).
//!
//! Credentials: Hermes' xAI Grok sign-in, else `XAI_API_KEY` ([`xai_auth`]); base URL
//! `image_gen.xai.base_url`, else the credentials' own.

use std::time::Duration;

use base64::Engine as _;
use serde_json::{Map, Value, json};

use super::plugin_http::{PluginPost, post_json};
use super::{Outcome, Request};
use crate::auth::xai as xai_auth;
use crate::hermes::Context;
use crate::hermes::envvars;
use crate::toolsets::image_gen::answer::{Found, ImageItem};
use crate::toolsets::image_gen::catalog::aspect_index;
use crate::toolsets::image_gen::error::GenError;
use crate::toolsets::image_gen::save::Generated;
use crate::toolsets::image_gen::source::read_local_image;

pub(crate) const DISPLAY: &str = "xAI (Grok)";
pub(crate) const DEFAULT_MODEL: &str = "grok-imagine-image";
const MODELS: [&str; 2] = ["grok-imagine-image", "grok-imagine-image-quality"];
const EDIT_MODEL: &str = "grok-imagine-image-quality";
const ASPECTS: [&str; 3] = ["16:9", "1:1", "9:16"];
const MAX_SOURCES: usize = 3;
/// `capabilities()["max_reference_images"]`.
pub(crate) const MAX_REFERENCE_IMAGES: usize = 2;
const SAFE_EXPIRES_AFTER: i64 = 2 * 24 * 60 * 60;
const MAX_EXPIRES_AFTER: i64 = 30 * 24 * 60 * 60;

/// `_resolve_model`: `XAI_IMAGE_MODEL`, then `image_gen.xai.model`, when they name a model.
pub(crate) fn resolve_model(ctx: &Context) -> &'static str {
    let known = |s: String| MODELS.iter().copied().find(|m| *m == s);
    ctx.env
        .get(envvars::XAI_IMAGE_MODEL)
        .and_then(known)
        .or_else(|| {
            ctx.sections()
                .image_gen
                .provider("xai")
                .model
                .clone()
                .and_then(known)
        })
        .unwrap_or(DEFAULT_MODEL)
}

fn resolution(ctx: &Context) -> &'static str {
    match ctx
        .sections()
        .image_gen
        .provider("xai")
        .resolution
        .as_deref()
    {
        Some("2k") => "2k",
        _ => "1k",
    }
}

/// `image_gen.xai.base_url`, else the credentials' base URL (the sign-in's
/// pinned xAI origin, or `XAI_BASE_URL` with a key).
fn base_url(ctx: &Context, creds: &xai_auth::XaiCreds) -> String {
    ctx.sections()
        .image_gen
        .provider("xai")
        .base_url
        .clone()
        .map(|s| s.trim().trim_end_matches('/').to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| creds.base_url.clone())
}

/// `_coerce_expires_after`: seconds, or `None` for permanent storage.
fn coerce_expires(v: Option<&Value>) -> Option<i64> {
    let n = match v? {
        Value::Null => return None,
        Value::String(s) => {
            let s = s.trim().to_ascii_lowercase();
            if matches!(
                s.as_str(),
                "" | "default" | "none" | "null" | "never" | "permanent" | "forever" | "0"
            ) {
                return None;
            }
            match s.parse::<i64>() {
                Ok(n) => n,
                Err(_) => return Some(SAFE_EXPIRES_AFTER),
            }
        }
        Value::Number(n) => n.as_f64().map(|f| f as i64).unwrap_or(0),
        Value::Bool(b) => i64::from(*b),
        _ => return Some(SAFE_EXPIRES_AFTER),
    };
    (n > 0).then(|| n.min(MAX_EXPIRES_AFTER))
}

/// `read_xai_imagine_storage_config("image_gen")`: whether xAI keeps the file behind a URL.
struct Storage {
    enabled: bool,
    public_url: bool,
    /// Seconds, or `None` for permanent storage.
    expires_after: Option<i64>,
}

impl Storage {
    fn from_config(ctx: &Context) -> Self {
        let s = ctx.sections().image_gen.provider("xai").storage.as_ref();
        let get = |k: &str| s.and_then(|s| s.get(k));
        Storage {
            enabled: crate::pycompat::coerce_bool(get("enabled"), true),
            public_url: crate::pycompat::coerce_bool(get("public_url"), true),
            expires_after: coerce_expires(get("expires_after")),
        }
    }

    /// The request body's `storage_options`.
    fn options(&self) -> Value {
        let filename = format!(
            "hermes-xai-image-{}-{}.png",
            crate::time::utc_stamp(crate::time::unix_now()),
            crate::fs::short_id()
        );
        let mut so = json!({"filename": filename, "public_url": self.public_url});
        if let Some(e) = self.expires_after {
            so["expires_after"] = json!(e);
        }
        so
    }
}

fn notice_text(expires: Option<i64>) -> String {
    let retention = match expires {
        None => "without an automatic expiry".to_string(),
        Some(secs) => {
            let days = secs as f64 / 86_400.0;
            let shown = crate::time::fmt_secs(days);
            format!(
                "for about {shown} day{}",
                if days != 1.0 { "s" } else { "" }
            )
        }
    };
    format!(
        "xAI Imagine storage is enabled so generated media gets a reusable public URL {retention}. xAI may bill for stored files and public URL hosting. Disable this with `image_gen.xai.storage.enabled: false` or set `expires_after` to change the retention."
    )
}

/// `maybe_mark_xai_storage_notice_seen`: the notice once per Hermes home.
fn notice_once(ctx: &Context, expires: Option<i64>) -> Option<String> {
    let dir = ctx.home.path.join("state");
    let marker = dir.join("image_gen_xai_storage_notice_seen");
    if marker.exists() {
        return None;
    }
    let _ = std::fs::create_dir_all(&dir);
    let stamp = crate::time::utc_isoformat(crate::time::unix_now() as f64);
    let _ = crate::fs::atomic_write(&marker, format!("{stamp}\n").as_bytes());
    Some(notice_text(expires))
}

/// `_xai_image_field`: URLs and data URIs pass through; a local image becomes a data URI.
fn image_field(src: &str) -> Result<Value, GenError> {
    let lower = src.to_ascii_lowercase();
    let url = if lower.starts_with("http://")
        || lower.starts_with("https://")
        || lower.starts_with("data:")
    {
        src.to_string()
    } else {
        let (raw, mime) = read_local_image(src)
            .map_err(|e| GenError::Io(format!("Could not load source image for editing: {e}")))?;
        format!(
            "data:{mime};base64,{}",
            base64::engine::general_purpose::STANDARD.encode(raw)
        )
    };
    Ok(json!({"url": url, "type": "image_url"}))
}

pub(crate) async fn xai_generate(r: Request<'_>) -> Outcome {
    let Request { ctx, http, .. } = r;
    let (prompt, aspect, sources) = (r.prompt, r.aspect, r.sources);
    let creds = xai_auth::resolve(ctx, http.api()).await.map_err(|why| {
        GenError::typed(
            if why.locked.is_some() { "auth_locked" } else { "missing_api_key" },
            why.or("No xAI credentials found. Configure xAI OAuth in `hermes model` or set XAI_API_KEY."),
        )
    })?;
    check_sources(sources)?;
    let is_edit = !sources.is_empty();
    let (model, res) = (resolve_model(ctx), resolution(ctx));
    let storage = Storage::from_config(ctx);
    let mut body = if is_edit {
        edit_body(prompt, sources)?
    } else {
        json!({"model": model, "prompt": prompt, "aspect_ratio": ASPECTS[aspect_index(aspect)], "resolution": res})
    };
    let mut notice = None;
    if storage.enabled {
        body["storage_options"] = storage.options();
        notice = notice_once(ctx, storage.expires_after);
    }
    let url = format!(
        "{}/images/{}",
        base_url(ctx, &creds),
        if is_edit { "edits" } else { "generations" }
    );
    let post = PluginPost {
        provider: "xai",
        display: "xAI",
        url: &url,
        key: creds.api_key,
        headers: vec![("User-Agent", "Hermes-Agent/0.19.0".into())],
        body,
        timeout: Duration::from_secs(120),
    };
    let answer = post_json(http, post, |status, msg| {
        GenError::Api(format!("xAI image generation failed ({status}): {msg}"))
    })
    .await?;
    let mut extra = Map::new();
    extra.insert("storage_enabled".into(), json!(storage.enabled));
    if !is_edit {
        extra.insert("resolution".into(), json!(res));
    }
    if let Some(n) = notice {
        extra.insert("storage_notice".into(), json!(n));
    }
    let model = if is_edit { EDIT_MODEL } else { model };
    let generated = read_answer(&answer, extra, model)?;
    Ok((generated, if is_edit { "image" } else { "text" }))
}

/// At most three sources, each a URL, a data URI or a local file.
fn check_sources(sources: &[String]) -> Result<(), GenError> {
    if sources.len() > MAX_SOURCES {
        return Err(GenError::typed(
            "too_many_references",
            "xAI image editing supports at most 3 source images",
        ));
    }
    for (i, s) in sources.iter().enumerate() {
        let lower = s.to_ascii_lowercase();
        let remote = ["http://", "https://", "data:"]
            .iter()
            .any(|p| lower.starts_with(p));
        if !remote && !crate::fs::absolute(s).is_file() {
            let field = if i == 0 {
                "image_url"
            } else {
                "reference_image_urls"
            };
            return Err(GenError::typed(
                "invalid_image_url",
                format!(
                    "{field} must be a public HTTPS URL or data URI (e.g. the `image`/`public_url` from a prior Imagine result)"
                ),
            ));
        }
    }
    Ok(())
}

/// An edit's body: `grok-imagine-image-quality` with `image` (one source) or `images`.
fn edit_body(prompt: &str, sources: &[String]) -> Result<Value, GenError> {
    let mut fields = sources
        .iter()
        .map(|s| image_field(s))
        .collect::<Result<Vec<_>, _>>()?;
    let mut b = json!({"model": EDIT_MODEL, "prompt": prompt});
    if fields.len() == 1 {
        b["image"] = fields.remove(0);
    } else {
        b["images"] = Value::Array(fields);
    }
    Ok(b)
}

/// The image in xAI's answer, and its facts in `extra`: the stored file's public URL
/// first (Hermes returns it as is; we also save it under cache/images so it can be shown
/// inline, keeping the URL in `image_url` and `public_url`), else `b64_json`, else `url`.
fn read_answer(
    answer: &Value,
    mut extra: Map<String, Value>,
    model: &str,
) -> Result<Generated, GenError> {
    let Some(mut item) = ImageItem::first(answer) else {
        return Err(GenError::EmptyResponse("xAI returned no image data".into()));
    };
    let file_output = item.file_output.take().unwrap_or_default();
    let public = file_output
        .get("public_url")
        .and_then(Value::as_str)
        .map(str::to_string);
    if let Some(p) = &public {
        extra.insert("public_url".into(), json!(p));
    }
    for k in [
        "filename",
        "expires_at",
        "public_url_expires_at",
        "public_url_error",
        "storage_error",
    ] {
        if let Some(v) = file_output.get(k) {
            extra.insert(k.into(), v.clone());
        }
    }
    if let Some(u) = answer.get("usage").filter(|u| !u.is_null()) {
        extra.insert("usage".into(), u.clone());
    }
    let Some(found) = public.map(Found::Url).or_else(|| item.image()) else {
        return Err(GenError::EmptyResponse(
            "xAI response contained neither b64_json nor URL".into(),
        ));
    };
    found.into_generated(extra, Some(model.to_string()), |e| {
        GenError::Io(format!(
            "Could not save image to cache: invalid base64: {e}"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_ttl_like_hermes() {
        assert_eq!(coerce_expires(None), None);
        assert_eq!(coerce_expires(Some(&json!("never"))), None);
        assert_eq!(coerce_expires(Some(&json!(3600))), Some(3600));
        assert_eq!(coerce_expires(Some(&json!(1e9))), Some(MAX_EXPIRES_AFTER));
        assert_eq!(
            coerce_expires(Some(&json!("soon"))),
            Some(SAFE_EXPIRES_AFTER)
        );
        assert!(notice_text(Some(86_400)).contains("for about 1 day."));
        assert!(notice_text(Some(2 * 86_400)).contains("for about 2 days."));
    }
}
