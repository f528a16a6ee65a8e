//! Krea 2 (`image_gen.provider: krea`, hermes-agent: `plugins/image_gen/krea`): an async job
//! API. `POST <base>/generate/image/krea/krea-2/<medium|large|medium-turbo>` with
//! `{prompt, aspect_ratio, resolution: "1K", creativity[, image_style_references]}` answers a
//! `job_id`; `GET <base>/jobs/<id>` is polled (2 s, ×1.3 up to 5 s, 180 s in all) until
//! `completed`/`failed`/`cancelled` (or `completed_at`), and `result.urls[0]` (or
//! `result.url`) is downloaded into the image cache.
//!
//! Key `KREA_API_KEY`; model `KREA_IMAGE_MODEL`, `image_gen.krea.model`, `image_gen.model`
//! (when one of Krea's ids), else `krea-2-medium`; `image_gen.krea.creativity`. Beyond
//! Hermes (whose base URL is fixed): `image_gen.krea.base_url` (default
//! `https://api.krea.ai`).
//!
//! Through the Nous tool gateway (`krea` vendor; used without `KREA_API_KEY`
//! or with `image_gen.use_gateway`): the same API at the gateway origin, the
//! Nous token as the bearer, an `x-idempotency-key` per submit, and a 4xx on
//! submit worded as Hermes' "Nous Subscription Krea gateway rejected …".

use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::{Outcome, Request};
use crate::gateway;
use crate::hermes::Context;
use crate::hermes::envvars;
use crate::net::HttpClient;
use crate::net::vendor::{self as http, ApiRequest, Failure, SendError};
use crate::toolsets::image_gen::catalog::aspect_index;
use crate::toolsets::image_gen::error::GenError;
use crate::toolsets::image_gen::save::Generated;

pub(crate) const DISPLAY: &str = "Krea";
pub(crate) const DEFAULT_MODEL: &str = "krea-2-medium";
/// `capabilities()["max_reference_images"]`.
pub(crate) const MAX_REFERENCE_IMAGES: usize = 10;
const DEFAULT_BASE_URL: &str = "https://api.krea.ai";
/// `_MODELS`: id and URL path segment.
const MODELS: [(&str, &str); 3] = [
    ("krea-2-medium", "medium"),
    ("krea-2-large", "large"),
    ("krea-2-medium-turbo", "medium-turbo"),
];
/// `_ASPECT_MAP` for landscape, square, portrait.
const ASPECTS: [&str; 3] = ["16:9", "1:1", "9:16"];
const RESOLUTION: &str = "1K";
const STYLE_STRENGTH: f64 = 0.6;
const CREATIVITY: [&str; 4] = ["raw", "low", "medium", "high"];
const USER_AGENT: &str = "Hermes-Agent/1.0 (krea-image-gen)";
const POLL_INITIAL: f64 = 2.0;
const POLL_MAX: f64 = 5.0;
const POLL_BACKOFF: f64 = 1.3;
const POLL_TIMEOUT: Duration = Duration::from_secs(180);
const RETRYABLE: [u16; 8] = [408, 409, 425, 429, 500, 502, 503, 504];

/// `_resolve_model`: `KREA_IMAGE_MODEL`, `image_gen.krea.model`, `image_gen.model`, when
/// they name one of Krea's models.
pub(crate) fn resolve_model(ctx: &Context) -> &'static str {
    let known = |s: String| MODELS.iter().map(|m| m.0).find(|m| *m == s);
    ctx.env
        .get(envvars::KREA_IMAGE_MODEL)
        .and_then(known)
        .or_else(|| {
            ctx.sections()
                .image_gen
                .provider("krea")
                .model
                .clone()
                .and_then(known)
        })
        .or_else(|| ctx.sections().image_gen.model.clone().and_then(known))
        .unwrap_or(DEFAULT_MODEL)
}

/// `_normalize_krea_model`: a native `krea-2-*` id.
pub(crate) fn native_model(id: &str) -> Option<&'static str> {
    MODELS.iter().map(|m| m.0).find(|m| *m == id.trim())
}

/// `_resolve_managed_krea_gateway` for a request: `None` when a direct key
/// wins or the gateway does not resolve.
async fn managed(ctx: &Context, http: &HttpClient) -> Option<gateway::Gateway> {
    if ctx.env.is_set(envvars::KREA_API_KEY) && !ctx.sections().image_gen.use_gateway {
        return None;
    }
    match gateway::resolve(ctx, http, "krea").await {
        Ok(g) => Some(g),
        Err(u) => {
            tracing::debug!("Managed Krea gateway resolution failed: {}", u.reason());
            None
        }
    }
}

/// `_resolve_creativity` with no argument: `image_gen.krea.creativity`, else `medium`.
fn creativity(ctx: &Context) -> String {
    ctx.sections()
        .image_gen
        .provider("krea")
        .creativity
        .clone()
        .map(|s| s.trim().to_ascii_lowercase())
        .filter(|s| CREATIVITY.contains(&s.as_str()))
        .unwrap_or_else(|| "medium".into())
}

fn base_url(ctx: &Context) -> String {
    ctx.sections()
        .image_gen
        .provider("krea")
        .base_url
        .clone()
        .map(|s| s.trim().trim_end_matches('/').to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| DEFAULT_BASE_URL.to_string())
}

/// The submit error's message: `error.message`, else `message` or `detail`, else the text.
fn submit_error_message(body: &[u8]) -> String {
    let text: String = String::from_utf8_lossy(body).chars().take(300).collect();
    let Ok(Value::Object(m)) = serde_json::from_slice::<Value>(body) else {
        return text;
    };
    let truthy = |v: Option<&Value>| -> Option<String> {
        match v? {
            Value::Null | Value::Bool(false) => None,
            Value::String(s) if s.is_empty() => None,
            Value::String(s) => Some(s.clone()),
            other => Some(crate::pycompat::py_str_or_json(other)),
        }
    };
    let picked = match m.get("error") {
        Some(Value::Object(e)) => truthy(e.get("message")),
        _ => truthy(m.get("message")).or_else(|| truthy(m.get("detail"))),
    };
    picked.unwrap_or(text)
}

pub(crate) async fn krea_generate(r: Request<'_>, routed_model: Option<&'static str>) -> Outcome {
    let Request { ctx, http, .. } = r;
    let (prompt, aspect, sources) = (r.prompt, r.aspect, r.sources);
    let managed = managed(ctx, http).await;
    let (base, key) = match &managed {
        Some(g) => (g.origin.clone(), g.token().to_string()),
        None => {
            let Some(key) = ctx.env.get(envvars::KREA_API_KEY).filter(|k| !k.is_empty()) else {
                return Err(GenError::AuthRequired(
                    "KREA_API_KEY not set. Run `hermes tools` → Image Generation → Krea to configure, get a key at https://www.krea.ai/settings/api-tokens, or sign in to a Nous account with the managed Krea gateway enabled (`hermes setup`).".into(),
                )
                .with_model(""));
            };
            (base_url(ctx), key)
        }
    };
    let job = Job {
        base,
        key,
        managed: managed.is_some(),
        // `_resolve_model(explicit)`: the routed model wins.
        model: routed_model.unwrap_or_else(|| resolve_model(ctx)),
    };
    let krea_ar = ASPECTS[aspect_index(aspect)];
    let creativity = creativity(ctx);
    // Deduplicated, at most 10, each as Krea's `{url, strength}` object.
    let mut refs: Vec<&str> = Vec::new();
    for s in sources {
        if !refs.contains(&s.as_str()) {
            refs.push(s);
        }
    }
    refs.truncate(MAX_REFERENCE_IMAGES);
    let mut body = json!({
        "prompt": prompt, "aspect_ratio": krea_ar, "resolution": RESOLUTION, "creativity": creativity,
    });
    if !refs.is_empty() {
        body["image_style_references"] = refs
            .iter()
            .map(|u| json!({"url": u, "strength": STYLE_STRENGTH}))
            .collect();
    }
    let job_id = job.submit(http, body).await?;
    let done = job.poll(http, &job_id).await?;
    let url = finished_image(&done, &job_id)?;
    let mut extra = Map::new();
    extra.insert("krea_aspect_ratio".into(), json!(krea_ar));
    extra.insert("resolution".into(), json!(RESOLUTION));
    extra.insert("creativity".into(), json!(creativity));
    extra.insert("job_id".into(), json!(job_id));
    if let Some(c) = done.get("completed_at").filter(|c| c.is_string()) {
        extra.insert("completed_at".into(), c.clone());
    }
    let modality = if refs.is_empty() { "text" } else { "image" };
    let model = Some(job.model.to_string());
    Ok((Generated::from_url(url, extra, model), modality))
}

/// One Krea job: where it runs and for which model.
struct Job {
    base: String,
    key: String,
    /// Through the Nous tool gateway (submit errors are worded for it).
    managed: bool,
    model: &'static str,
}

impl Job {
    fn request<'u>(&self, method: reqwest::Method, url: &'u str) -> ApiRequest<'u> {
        ApiRequest::new("krea", method, url)
            .bearer(self.key.clone())
            .header("User-Agent", USER_AGENT)
            .timeout(Duration::from_secs(30))
    }

    /// `POST <base>/generate/image/krea/krea-2/<path>`: the job's id.
    async fn submit(&self, http: &HttpClient, body: Value) -> Result<String, GenError> {
        let path = MODELS
            .iter()
            .find(|m| m.0 == self.model)
            .map_or("medium", |m| m.1);
        let url = format!("{}/generate/image/krea/krea-2/{path}", self.base);
        let mut req = self.request(reqwest::Method::POST, &url).json(body);
        if self.managed {
            req = req.header("x-idempotency-key", uuid::Uuid::new_v4().to_string());
        }
        let submitted = http::exchange(http, req)
            .await
            .map_err(|f| self.submit_failure(f))?;
        match submitted.get("job_id").and_then(Value::as_str) {
            Some(id) if !id.is_empty() => Ok(id.to_string()),
            _ => Err(GenError::typed(
                "invalid_response",
                "Krea submit response missing job_id",
            )),
        }
    }

    /// Hermes' texts for a failed submit; through the gateway a 4xx (or a 429) says
    /// which model the gateway rejected.
    fn submit_failure(&self, f: Failure) -> GenError {
        let model = self.model;
        let gateway_rejected = |status: u16, detail: String, hint: String| {
            GenError::Api(format!(
                "Nous Subscription Krea gateway rejected '{model}' (HTTP {status}): {detail}. {hint}"
            ))
        };
        const CAP_HIT: &str = "Krea's shared-key concurrency cap was hit — retry shortly.";
        match f {
            Failure::Timeout(_) => GenError::typed("timeout", "Krea submit timed out (30s)"),
            Failure::RateLimited(e) => {
                let cause = match e {
                    SendError::Api { source, .. } => source.to_string(),
                    other => other.to_string(),
                };
                if self.managed {
                    gateway_rejected(429, cause, CAP_HIT.into())
                } else {
                    GenError::Api(format!("Krea image generation failed (429): {cause}"))
                }
            }
            Failure::Connection(e) => {
                GenError::typed("connection_error", format!("Krea connection error: {e}"))
            }
            Failure::Status(r) if self.managed && (400..500).contains(&r.status) => {
                let hint = if r.status == 429 {
                    CAP_HIT.to_string()
                } else {
                    format!(
                        "Model '{model}' may not be enabled/priced on the Nous Portal's Krea gateway. Set KREA_API_KEY to use Krea directly, or pick a different model via `hermes tools` → Image Generation."
                    )
                };
                gateway_rejected(r.status, submit_error_message(&r.body), hint)
            }
            Failure::Status(r) => GenError::Api(format!(
                "Krea image generation failed ({}): {}",
                r.status,
                submit_error_message(&r.body)
            )),
            Failure::NotJson(e) => GenError::typed(
                "invalid_response",
                format!("Krea returned invalid JSON on submit: {e}"),
            ),
        }
    }

    /// Poll `GET <base>/jobs/<id>` until the job is terminal; the job body.
    async fn poll(&self, http: &HttpClient, job_id: &str) -> Result<Value, GenError> {
        let url = format!("{}/jobs/{job_id}", self.base);
        let deadline = Instant::now() + POLL_TIMEOUT;
        let mut interval = POLL_INITIAL;
        let mut last_status: Option<String> = None;
        loop {
            tokio::time::sleep(Duration::from_secs_f64(interval)).await;
            interval = (interval * POLL_BACKOFF).min(POLL_MAX);
            let answer = http::exchange(http, self.request(reqwest::Method::GET, &url)).await;
            let expired = Instant::now() >= deadline;
            let job = match answer {
                Ok(job) => job,
                Err(f) => match poll_failure(f, expired, job_id) {
                    Some(e) => return Err(e),
                    None => continue,
                },
            };
            if let Some(s) = job.get("status").and_then(Value::as_str) {
                last_status = Some(s.to_string());
                if ["completed", "failed", "cancelled"].contains(&s) {
                    return Ok(job);
                }
            }
            if job
                .get("completed_at")
                .is_some_and(crate::pycompat::py_bool)
            {
                return Ok(job);
            }
            if expired {
                return Err(GenError::typed(
                    "timeout",
                    format!(
                        "Krea job {job_id} did not complete within {}s (last status: {})",
                        POLL_TIMEOUT.as_secs(),
                        last_status.as_deref().unwrap_or("unknown")
                    ),
                ));
            }
        }
    }
}

/// A failed poll: the error to stop with, or `None` to poll again (a transient failure
/// before the deadline).
fn poll_failure(f: Failure, expired: bool, job_id: &str) -> Option<GenError> {
    match f {
        Failure::RateLimited(_) => {
            expired.then(|| GenError::Api(format!("Krea poll failed (429) for job {job_id}")))
        }
        Failure::Timeout(e) | Failure::Connection(e) => {
            tracing::warn!("Krea poll transient error for job {job_id}: {e}");
            expired.then(|| {
                GenError::typed(
                    "timeout",
                    format!("Krea poll timed out for job {job_id}: {e}"),
                )
            })
        }
        Failure::Status(r) => (!RETRYABLE.contains(&r.status) || expired)
            .then(|| GenError::Api(format!("Krea poll failed ({}) for job {job_id}", r.status))),
        Failure::NotJson(e) => expired.then(|| {
            GenError::typed(
                "invalid_response",
                format!("Krea poll returned invalid JSON: {e}"),
            )
        }),
    }
}

/// The image URL of a terminal job (`result.urls[0]`, else `result.url`), or why there
/// is none: the job failed or was cancelled, or its result holds no URL.
fn finished_image(job: &Value, job_id: &str) -> Result<String, GenError> {
    let status = job.get("status").and_then(Value::as_str).unwrap_or("");
    let result = job.get("result").and_then(Value::as_object);
    if status == "failed" {
        let err = result
            .and_then(|r| r.get("error"))
            .filter(|e| !e.is_null() && *e != &json!("") && *e != &json!(false))
            .map(crate::pycompat::py_str_or_json)
            .unwrap_or_else(|| "unknown error".into());
        return Err(GenError::Api(format!("Krea job {job_id} failed: {err}")));
    }
    if status == "cancelled" {
        return Err(GenError::typed(
            "cancelled",
            format!("Krea job {job_id} was cancelled"),
        ));
    }
    let Some(result) = result else {
        return Err(GenError::EmptyResponse(
            "Krea job completed but result was missing".into(),
        ));
    };
    let nonblank = |v: &Value| {
        v.as_str()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    result
        .get("urls")
        .and_then(Value::as_array)
        .and_then(|a| a.iter().find_map(nonblank))
        .or_else(|| result.get("url").and_then(nonblank))
        .ok_or_else(|| GenError::EmptyResponse("Krea result contained no image URL".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn submit_error_message_like_hermes() {
        assert_eq!(
            submit_error_message(br#"{"error":{"message":"bad key"}}"#),
            "bad key"
        );
        assert_eq!(
            submit_error_message(br#"{"message":"","detail":"no credits"}"#),
            "no credits"
        );
        assert_eq!(submit_error_message(br#"{"x":1}"#), r#"{"x":1}"#);
        assert_eq!(submit_error_message(b"oops"), "oops");
    }
}
