//! FAL.ai through its queue API (submit, poll `status_url`, fetch `response_url`,
//! cancel on timeout or when the MCP call is dropped), as hermes-agent's
//! `tools/image_generation_tool.py` drives `fal_client`; plus the Clarity upscaler
//! chained after models that ask for it.
//!
//! Through the Nous tool gateway (`fal-queue` vendor) the queue API is the same
//! at the gateway origin, with the Nous token in `Authorization: Key …`
//! (hermes-agent: tools/fal_common.py `_ManagedFalSyncClient`). It is used
//! when `FAL_KEY` is unset, or `image_gen.use_gateway` is set and the gateway
//! resolves (`_resolve_managed_fal_gateway`); a 4xx on submit then gets
//! Hermes' "Nous Subscription gateway rejected model" text.

use std::time::{Duration, Instant};

use base64::Engine as _;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Number, Value, json};

use super::{Outcome, Request};
use crate::gateway::{self, Unavailable};
use crate::hermes::Context;
use crate::hermes::envvars;
use crate::lenient;
use crate::net::HttpClient;
use crate::net::vendor::{self as http, ApiRequest, Failure};
use crate::server::ToolCall;
use crate::toolsets::image_gen::catalog::{resolve_fal_model, timeout_cfg};
use crate::toolsets::image_gen::error::GenError;
use crate::toolsets::image_gen::save::Generated;
use crate::toolsets::image_gen::source::read_local_image;

pub(crate) const DEFAULT_FAL_BASE_URL: &str = "https://queue.fal.run";

// Clarity Upscaler, chained after models with `upscale: true` (Hermes' constants).
const UPSCALER_MODEL: &str = "fal-ai/clarity-upscaler";
const UPSCALER_FACTOR: u32 = 2;

/// FAL's answer to a queue submit: where to poll, fetch and cancel.
#[derive(Deserialize, Default)]
#[serde(default)]
struct QueueHandle {
    #[serde(deserialize_with = "lenient::opt")]
    request_id: Option<String>,
    #[serde(deserialize_with = "lenient::opt")]
    status_url: Option<String>,
    #[serde(deserialize_with = "lenient::opt")]
    response_url: Option<String>,
    #[serde(deserialize_with = "lenient::opt")]
    cancel_url: Option<String>,
}

/// FAL's answer to a status poll.
#[derive(Deserialize, Default)]
#[serde(default)]
struct QueueStatus {
    #[serde(deserialize_with = "lenient::opt")]
    status: Option<String>,
    #[serde(deserialize_with = "lenient::opt")]
    queue_position: Option<u64>,
    /// Any JSON: a string is quoted as is, anything else as JSON text.
    #[serde(deserialize_with = "lenient::raw")]
    error: Option<Value>,
}

/// One image in a FAL result.
#[derive(Deserialize, Default)]
#[serde(default)]
struct FalImage {
    #[serde(deserialize_with = "lenient::opt")]
    url: Option<String>,
    #[serde(deserialize_with = "lenient::opt")]
    width: Option<Number>,
    #[serde(deserialize_with = "lenient::opt")]
    height: Option<Number>,
}

/// A text-to-image or edit model's result.
#[derive(Deserialize, Default)]
#[serde(default)]
struct GenerateResult {
    #[serde(deserialize_with = "lenient::objects")]
    images: Option<Vec<FalImage>>,
}

/// The Clarity upscaler's result.
#[derive(Deserialize, Default)]
#[serde(default)]
struct UpscaleResult {
    #[serde(deserialize_with = "lenient::obj")]
    image: Option<FalImage>,
}

/// An error value as Hermes words it: a string as is, anything else as JSON.
fn error_text(e: &Value) -> String {
    e.as_str().map(str::to_string).unwrap_or(e.to_string())
}

fn fal_base(ctx: &Context) -> String {
    ctx.sections()
        .image_gen
        .provider("fal")
        .base_url
        .clone()
        .unwrap_or_else(|| DEFAULT_FAL_BASE_URL.to_string())
        .trim_end_matches('/')
        .to_string()
}

fn origin(u: &str) -> Option<String> {
    let u = reqwest::Url::parse(u).ok()?;
    Some(u.origin().ascii_serialization())
}

/// Everything one queue run needs.
pub(crate) struct FalQueue<'a> {
    pub(crate) ctx: &'a Context,
    pub(crate) http: &'a HttpClient,
    pub(crate) base: String,
    pub(crate) key: String,
    pub(crate) timeout: Duration,
    /// Through the Nous tool gateway (submit errors are worded for it).
    pub(crate) managed: bool,
}

/// The FAL queue to use: direct `FAL_KEY` or the Nous gateway, as
/// `_submit_fal_request` / `image_generate_tool` choose.
pub(crate) async fn route(
    ctx: &Context,
    http: &HttpClient,
) -> Result<(String, String, bool), GenError> {
    let key = ctx
        .env
        .get(envvars::FAL_KEY)
        .filter(|k| !k.trim().is_empty());
    if let Some(k) = &key
        && !ctx.sections().image_gen.use_gateway
    {
        return Ok((fal_base(ctx), k.clone(), false));
    }
    match gateway::resolve(ctx, http, "fal-queue").await {
        Ok(g) => Ok((g.origin.clone(), g.token().to_string(), true)),
        Err(Unavailable::BadScheme) => Err(GenError::Value(Unavailable::BadScheme.reason())),
        Err(u) => match key {
            Some(k) => Ok((fal_base(ctx), k, false)),
            None => Err(GenError::Value(
                no_backend_message(ctx, http, u.entitled()).await,
            )),
        },
    }
}

/// `_build_no_backend_setup_message` (the plugin pointer worded for hermes-mcp).
async fn no_backend_message(ctx: &Context, http: &HttpClient, entitled: bool) -> String {
    let mut lines = vec![
        "Image generation is unavailable in this environment.".to_string(),
        String::new(),
        "Missing requirements:".into(),
    ];
    if entitled {
        lines.push("  - FAL_KEY is not set and the managed FAL gateway is unreachable".into());
    } else {
        lines.push("  - FAL_KEY environment variable is not set".into());
        let m =
            gateway::unavailable_message(ctx, http, "managed FAL image generation", false).await;
        lines.push(format!("  - {m}"));
    }
    lines.push(String::new());
    lines.push("To enable image generation, do one of:".into());
    lines.push("  1. Get a free API key at https://fal.ai and set FAL_KEY=<your-key> (then restart the session)".into());
    if entitled {
        lines.push("  2. Sign in to a Nous account that has the managed FAL gateway enabled (`hermes setup`)".into());
    }
    lines.push("  3. Configure a different image_gen provider (image_gen.provider: openai with OPENAI_API_KEY)".into());
    lines.join("\n")
}

/// A submitted request's queue URLs (all on the base URL's host).
struct Queued {
    request_id: String,
    status_url: String,
    response_url: String,
    cancel_url: Option<String>,
}

/// FAL's texts for a failed queue call: `<no_answer>: <send error>`,
/// `<refused>: HTTP <status>: <detail>`, `<unreadable>: <JSON error>`.
fn queue_failure(f: Failure, no_answer: &str, refused: &str, unreadable: &str) -> GenError {
    GenError::Http(match f {
        Failure::Timeout(e) | Failure::RateLimited(e) | Failure::Connection(e) => {
            format!("{no_answer}: {e}")
        }
        Failure::Status(r) => format!("{refused}: {}", http::status_error(&r)),
        Failure::NotJson(e) => format!("{unreadable}: {e}"),
    })
}

impl FalQueue<'_> {
    fn request<'u>(&self, method: reqwest::Method, url: &'u str) -> ApiRequest<'u> {
        let mut r = ApiRequest::new("fal", method, url).timeout(Duration::from_secs(60));
        r.auth = Some(("Key", self.key.clone()));
        r
    }

    /// Submit to `POST <base>/<endpoint>`, poll `status_url` until COMPLETED,
    /// then fetch `response_url`. On timeout the request is cancelled.
    pub(crate) async fn run<T: DeserializeOwned + Default>(
        &self,
        endpoint: &str,
        arguments: &Value,
        progress: &crate::server::Progress,
    ) -> Result<T, GenError> {
        let started = Instant::now();
        let queued = self.submit(endpoint, arguments).await?;
        self.wait(&queued, started, progress).await?;
        let req = self.request(reqwest::Method::GET, &queued.response_url);
        let answer = http::exchange(self.http, req).await.map_err(|f| {
            let refused = format!("FAL request {} failed", queued.request_id);
            queue_failure(f, "FAL result fetch failed", &refused, "FAL result")
        })?;
        Ok(lenient::object(&answer))
    }

    /// `POST <base>/<endpoint>`: the queue URLs FAL answers with, which must stay on
    /// the base URL's host.
    async fn submit(&self, endpoint: &str, arguments: &Value) -> Result<Queued, GenError> {
        let submit_url = format!("{}/{}", self.base, endpoint.trim_matches('/'));
        let req = self
            .request(reqwest::Method::POST, &submit_url)
            .json(arguments.clone())
            .header("x-idempotency-key", format!("{:032x}", fastrand::u128(..)));
        let raw = match http::exchange(self.http, req).await {
            Ok(v) => v,
            Err(Failure::Status(r)) if self.managed && (400..500).contains(&r.status) => {
                return Err(self.gateway_rejected(endpoint, r.status).await);
            }
            Err(f) => {
                let refused = format!("FAL rejected the request to {endpoint}");
                return Err(queue_failure(
                    f,
                    "FAL submit failed",
                    &refused,
                    "FAL submit",
                ));
            }
        };
        let handle: QueueHandle = lenient::object(&raw);
        let field = |k: &str, v: Option<String>| -> Result<String, GenError> {
            v.ok_or_else(|| GenError::Http(format!("FAL submit response has no {k}: {raw}")))
        };
        let queued = Queued {
            request_id: field("request_id", handle.request_id)?,
            status_url: field("status_url", handle.status_url)?,
            response_url: field("response_url", handle.response_url)?,
            cancel_url: handle.cancel_url,
        };
        let base_origin = origin(&self.base);
        let urls = [
            Some(&queued.status_url),
            Some(&queued.response_url),
            queued.cancel_url.as_ref(),
        ];
        for u in urls.into_iter().flatten() {
            if origin(u) != base_origin {
                return Err(GenError::Http(format!(
                    "FAL returned a queue URL on another host ({u}); expected {}",
                    self.base
                )));
            }
        }
        Ok(queued)
    }

    /// Hermes' text when the Nous gateway refuses a model (a 4xx on submit).
    async fn gateway_rejected(&self, endpoint: &str, status: u16) -> GenError {
        let mut m = format!(
            "Nous Subscription gateway rejected model '{endpoint}' (HTTP {status}). This model may not yet be enabled on the Nous Portal's FAL proxy. Either:\n  • Set FAL_KEY in your environment to use FAL.ai directly, or\n  • Pick a different model via `hermes tools` → Image Generation."
        );
        if matches!(status, 401..=403) {
            m += "\n\n";
            m += &gateway::unavailable_message(
                self.ctx,
                self.http,
                "managed FAL image generation",
                true,
            )
            .await;
        }
        GenError::Value(m)
    }

    /// Poll `status_url` until COMPLETED, reporting the queue position; past the
    /// timeout the request is cancelled. If the MCP call is cancelled while we wait,
    /// the future is dropped: FAL is told to cancel the queued request too (so it is
    /// on every error here).
    async fn wait(
        &self,
        q: &Queued,
        started: Instant,
        progress: &crate::server::Progress,
    ) -> Result<(), GenError> {
        let mut on_drop = CancelOnDrop {
            client: q.cancel_url.as_ref().map(|_| self.http.api().clone()),
            url: q.cancel_url.clone().unwrap_or_default(),
            key: self.key.clone(),
        };
        let request_id = &q.request_id;
        let mut delay = Duration::from_millis(200);
        let mut last_status = "IN_QUEUE".to_string();
        let mut polls = 0u64;
        loop {
            if started.elapsed() >= self.timeout {
                on_drop.client = None;
                if let Some(c) = &q.cancel_url {
                    let _ = http::send(self.http, self.request(reqwest::Method::PUT, c)).await;
                }
                return Err(GenError::Timeout(format!(
                    "FAL request {request_id} did not finish within {}s (last status: {last_status}); it was cancelled. Raise image_gen.fal.timeout to wait longer.",
                    crate::time::fmt_secs(self.timeout.as_secs_f64())
                )));
            }
            let req = self.request(reqwest::Method::GET, &q.status_url);
            let st: QueueStatus = match http::exchange(self.http, req).await {
                Ok(v) => lenient::object(&v),
                Err(f) => {
                    let refused = format!("FAL status check for {request_id} failed");
                    return Err(queue_failure(
                        f,
                        "FAL status check failed",
                        &refused,
                        "FAL status",
                    ));
                }
            };
            let status = st.status.clone().unwrap_or_default();
            match status.as_str() {
                "COMPLETED" => match st.error.as_ref().filter(|e| !e.is_null()) {
                    Some(err) => {
                        let msg = error_text(err);
                        return Err(GenError::Http(format!(
                            "FAL request {request_id} failed: {msg}"
                        )));
                    }
                    None => {
                        on_drop.client = None;
                        return Ok(());
                    }
                },
                "IN_QUEUE" | "IN_PROGRESS" => {
                    polls += 1;
                    let msg = match st.queue_position {
                        Some(p) if status == "IN_QUEUE" => format!("FAL: in queue (position {p})"),
                        _ => format!("FAL: {}", status.to_ascii_lowercase().replace('_', " ")),
                    };
                    progress.report(polls, None, msg).await;
                }
                other => return Err(stopped(&st, other, request_id)),
            }
            last_status = status;
            let left = self.timeout.saturating_sub(started.elapsed());
            tokio::time::sleep(delay.min(left)).await;
            delay = (delay * 3 / 2).min(Duration::from_secs(2));
        }
    }
}

/// A status that ends the wait without a result: FAILED and its kin, or one not understood.
fn stopped(st: &QueueStatus, status: &str, request_id: &str) -> GenError {
    if !matches!(status, "FAILED" | "CANCELED" | "CANCELLED" | "ERROR") {
        return GenError::Http(format!(
            "FAL status for {request_id} is not understood: {status:?}"
        ));
    }
    let detail = st.error.as_ref().map(error_text).unwrap_or_default();
    GenError::Http(format!(
        "FAL request {request_id} {}{}",
        status.to_ascii_lowercase(),
        if detail.is_empty() {
            String::new()
        } else {
            format!(": {detail}")
        }
    ))
}

/// Sends FAL's cancel request when dropped while armed (the call was cancelled).
struct CancelOnDrop {
    client: Option<reqwest::Client>,
    url: String,
    key: String,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let (Some(client), Ok(rt)) = (self.client.take(), tokio::runtime::Handle::try_current())
        else {
            return;
        };
        let req = client
            .put(&self.url)
            .header(reqwest::header::AUTHORIZATION, format!("Key {}", self.key))
            .timeout(Duration::from_secs(10));
        rt.spawn(async move {
            if let Err(e) = req.send().await {
                tracing::debug!("FAL cancel request failed: {e}");
            }
        });
    }
}

pub(crate) async fn fal_generate(r: Request<'_>, call: &ToolCall) -> Outcome {
    let Request { ctx, http, .. } = r;
    let (prompt, aspect, sources) = (r.prompt, r.aspect, r.sources);
    let (model, model_warning) = resolve_fal_model(ctx);
    if let Some(w) = &model_warning {
        tracing::warn!("{w}");
    }
    let (base, key, managed) = route(ctx, http).await?;
    let use_edit = !sources.is_empty();
    let (endpoint, arguments) = match model.edit_endpoint {
        None if use_edit => {
            return Err(GenError::Value(format!(
                "Model '{}' ({}) is not capable of image-to-image / editing. Provide a text-only prompt (omit image_url), or switch to an edit-capable model via `hermes tools` → Image Generation.",
                model.display, model.id
            )));
        }
        Some(edit_endpoint) if use_edit => {
            let max = model.max_reference_images.max(1);
            let clamped = sources
                .iter()
                .take(max)
                .map(|s| fal_source(s))
                .collect::<Result<Vec<_>, _>>()?;
            (edit_endpoint, model.edit_payload(prompt, &clamped, aspect))
        }
        _ => (model.id, model.payload(prompt, aspect)),
    };
    let queue = FalQueue {
        ctx,
        http,
        base,
        key,
        timeout: timeout_cfg(ctx, "fal"),
        managed,
    };
    let result: GenerateResult = queue.run(endpoint, &arguments, &call.progress).await?;
    let (mut url, first) = first_image(result)?;
    let mut extra = Map::new();
    extra.insert("upscaled".into(), json!(false));
    if let Some(w) = first.width {
        extra.insert("width".into(), json!(w));
    }
    if let Some(h) = first.height {
        extra.insert("height".into(), json!(h));
    }
    if model.upscale && !use_edit {
        url = upscale(&queue, url, prompt, &mut extra, &call.progress).await;
    }
    if let Some(w) = model_warning {
        extra.insert("warning".into(), json!(w));
    }
    let modality = if use_edit { "image" } else { "text" };
    Ok((Generated::from_url(url, extra, None), modality))
}

/// The first image with a URL in a model's result, as Hermes checks it.
fn first_image(result: GenerateResult) -> Result<(String, FalImage), GenError> {
    let Some(images) = result.images else {
        return Err(GenError::Value(
            "Invalid response from FAL.ai API — no images returned".into(),
        ));
    };
    if images.is_empty() {
        return Err(GenError::Value("No images were generated".into()));
    }
    images
        .into_iter()
        .find_map(|i| Some((i.url.clone()?, i)))
        .ok_or_else(|| GenError::Value("No valid image URLs returned from API".into()))
}

/// Chain the Clarity upscaler after the image (Hermes' `_upscale_image`): the upscaled
/// image's URL, with its size in `extra`; on any failure the original, with a warning
/// in the log.
async fn upscale(
    queue: &FalQueue<'_>,
    url: String,
    prompt: &str,
    extra: &mut Map<String, Value>,
    progress: &crate::server::Progress,
) -> String {
    let args = json!({
        "image_url": url,
        "prompt": format!("masterpiece, best quality, highres, {}", prompt.trim()),
        "upscale_factor": UPSCALER_FACTOR,
        "negative_prompt": "(worst quality, low quality, normal quality:2)",
        "creativity": 0.35,
        "resemblance": 0.6,
        "guidance_scale": 4,
        "num_inference_steps": 18,
        "enable_safety_checker": false,
    });
    let image = match queue
        .run::<UpscaleResult>(UPSCALER_MODEL, &args, progress)
        .await
    {
        Ok(r) => r.image.and_then(|i| Some((i.url.clone()?, i))),
        Err(e) => {
            tracing::warn!("upscale failed, using the original image: {}", e);
            return url;
        }
    };
    let Some((upscaled, image)) = image else {
        tracing::warn!("Upscaler returned invalid response; using the original");
        return url;
    };
    extra.insert("upscaled".into(), json!(true));
    extra.insert("upscale_factor".into(), json!(UPSCALER_FACTOR));
    for (k, v) in [("width", image.width), ("height", image.height)] {
        match v {
            Some(n) => {
                extra.insert(k.into(), json!(n));
            }
            None => {
                extra.remove(k);
            }
        }
    }
    upscaled
}

/// A source image for an edit: a URL passes through (FAL fetches it), a local
/// image file becomes a `data:` URI (FAL accepts those; it cannot read our disk).
fn fal_source(src: &str) -> Result<String, GenError> {
    let lower = src.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") || lower.starts_with("data:") {
        return Ok(src.to_string());
    }
    let (bytes, mime) = read_local_image(src)?;
    Ok(format!(
        "data:{mime};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_sources_must_be_images() {
        let d = tempfile::tempdir().unwrap();
        let key = d.path().join("id_rsa");
        std::fs::write(&key, "-----BEGIN KEY-----").unwrap();
        let e = fal_source(key.to_str().unwrap()).unwrap_err();
        assert!(e.to_string().contains("not a PNG"), "{e}");
        let png = d.path().join("a.png");
        std::fs::write(&png, b"\x89PNG\r\n\x1a\nrest").unwrap();
        assert!(
            fal_source(png.to_str().unwrap())
                .unwrap()
                .starts_with("data:image/png;base64,")
        );
        assert_eq!(fal_source("https://x/y.png").unwrap(), "https://x/y.png");
    }
}
