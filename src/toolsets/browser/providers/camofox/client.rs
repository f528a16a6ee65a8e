//! The Camofox REST client: one method per HTTP verb Hermes uses, with
//! Hermes' headers, timeouts and error texts (hermes-agent:
//! tools/browser_camofox.py `_post`, `_get`, `_get_raw`, `_delete`,
//! `check_camofox_available`).
//!
//! Requests go through `crate::net`'s provider-API client: the Camofox URL is
//! configured by the user, so private and loopback addresses are allowed (as
//! for `browser.cdp_url` and the cloud providers' base URLs) and only the
//! cloud-metadata floor applies. Answers are read up to the provider-API
//! size limit, and a failure says what happened with the real figures (the
//! limit exceeded; how long we waited and which limit ended it), never
//! "cannot connect" for a server that did answer. `CAMOFOX_API_KEY` is sent as a bearer token
//! and never logged; error texts carry the request URL (path and `userId`),
//! never the key.

use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::Value;
use url::Url;

use crate::hermes::deadlines;
use crate::net::client::api_error;
use crate::net::{ApiError, Blocked, HttpClient, Limits, Policy, check_url};

/// Why a Camofox request failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CfError {
    /// An HTTP error status, worded as `requests`' `raise_for_status` words it.
    #[error("{status} {} Error: {reason} for url: {url}", if *.status < 500 { "Client" } else { "Server" })]
    Status {
        status: u16,
        reason: String,
        url: String,
    },
    /// The server could not be reached (Hermes' `requests.ConnectionError`).
    #[error("Cannot connect to Camofox at {base}: {reason}")]
    Connect { base: String, reason: String },
    /// No answer in time; `detail` gives the real figures.
    #[error("Camofox at {base} did not answer {path}: {detail}")]
    Timeout {
        base: String,
        path: String,
        detail: String,
    },
    /// The answer is larger than we read (it would be held in memory).
    #[error(
        "Camofox at {base} answered {path} with more than {} MiB (the size limit for a Camofox answer); the answer was dropped",
        .cap / (1024 * 1024)
    )]
    TooLarge {
        base: String,
        path: String,
        cap: usize,
    },
    /// The connection broke while the answer was being read.
    #[error("Camofox's answer to {path} was cut off after {got} bytes: {reason}")]
    Cut {
        path: String,
        got: usize,
        reason: String,
    },
    #[error("Camofox's answer to {path} is not JSON: {reason}")]
    NotJson { path: String, reason: String },
    #[error("{0}")]
    Other(String),
}

impl CfError {
    pub(crate) fn status(&self) -> Option<u16> {
        match self {
            CfError::Status { status, .. } => Some(*status),
            _ => None,
        }
    }
    pub(crate) fn is_connect(&self) -> bool {
        matches!(self, CfError::Connect { .. })
    }
}

/// The largest Camofox answer read (the provider-API limit of `crate::net`).
fn answer_cap() -> usize {
    Limits::default().max_api_bytes
}

/// A status and the body read in full.
struct Answer {
    status: u16,
    body: Vec<u8>,
}

/// Why an answer's body could not be read: over the cap, or the transport
/// failed after `usize` bytes.
enum Read {
    TooLarge,
    Failed(reqwest::Error, usize),
}

/// A Camofox server at `base`.
#[derive(Clone)]
pub(crate) struct Client {
    http: Arc<HttpClient>,
    base: String,
    api_key: Option<String>,
    timeout: Duration,
}

impl Client {
    pub(crate) fn new(
        http: Arc<HttpClient>,
        base: String,
        api_key: Option<String>,
        timeout: Duration,
    ) -> Self {
        Client {
            http,
            base,
            api_key,
            timeout,
        }
    }

    pub(crate) fn base(&self) -> &str {
        &self.base
    }

    fn url(&self, path: &str, query: &[(&str, &str)]) -> Result<Url, CfError> {
        let mut u = Url::parse(&format!("{}{path}", self.base)).map_err(|e| {
            CfError::Other(format!(
                "CAMOFOX_URL {:?} does not make a valid URL: {e}",
                self.base
            ))
        })?;
        if !query.is_empty() {
            u.query_pairs_mut().extend_pairs(query);
        }
        Ok(u)
    }

    /// Send `req` to `url` through the provider-API client (its resolver
    /// refuses names that resolve to cloud metadata); a literal metadata
    /// address or name is refused here first. Private addresses are fine.
    async fn execute(
        &self,
        req: reqwest::RequestBuilder,
        url: &Url,
    ) -> Result<reqwest::Response, ApiError> {
        let floor = Policy {
            allow_private: true,
            ..Policy::default()
        };
        if let Err(b @ Blocked::Metadata { .. }) = check_url(url, &floor) {
            return Err(ApiError::Blocked(b));
        }
        req.send().await.map_err(|e| api_error(e, url))
    }

    /// The body, at most [`answer_cap`] bytes.
    async fn read_capped(&self, mut resp: reqwest::Response) -> Result<Vec<u8>, Read> {
        let cap = answer_cap();
        if resp.content_length().is_some_and(|n| n > cap as u64) {
            return Err(Read::TooLarge);
        }
        let mut out = Vec::new();
        loop {
            match resp.chunk().await {
                Ok(Some(c)) if out.len() + c.len() > cap => return Err(Read::TooLarge),
                Ok(Some(c)) => out.extend_from_slice(&c),
                Ok(None) => return Ok(out),
                Err(e) => return Err(Read::Failed(e, out.len())),
            }
        }
    }

    /// A request that got no (complete) answer, said with the real figures:
    /// how long it waited, and which limit ended it.
    fn transport_error(
        &self,
        e: ApiError,
        path: &str,
        limit: Duration,
        waited: Duration,
    ) -> CfError {
        match e {
            ApiError::Timeout => {}
            ApiError::Network(cause) => {
                return CfError::Connect {
                    base: self.base.clone(),
                    reason: cause.to_string(),
                };
            }
            other => return CfError::Other(other.to_string()),
        }
        // In Hermes' time: a test run scaled down still says "24s".
        let (waited, limit) = (deadlines::unscaled(waited), deadlines::unscaled(limit));
        let idle = deadlines::HTTP_READ.hermes();
        let detail = if waited + Duration::from_secs(1) < limit {
            format!(
                "timed out after {:.0}s (no data for {}s; the call's own limit is {}s)",
                waited.as_secs_f64(),
                idle.as_secs(),
                limit.as_secs()
            )
        } else {
            format!("timed out after {:.0}s", waited.as_secs_f64())
        };
        CfError::Timeout {
            base: self.base.clone(),
            path: path.to_string(),
            detail,
        }
    }

    /// Send one request; `auth` is false only for `/health` (Hermes probes
    /// it without the key). Returns the status-checked body.
    async fn send(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, &str)],
        body: Option<&Value>,
        timeout: Option<Duration>,
        auth: bool,
    ) -> Result<Vec<u8>, CfError> {
        let url = self.url(path, query)?;
        let timeout = timeout.unwrap_or(self.timeout);
        let mut req = self
            .http
            .api()
            .request(method, url.clone())
            .timeout(timeout);
        if auth && let Some(k) = &self.api_key {
            req = req.header("Authorization", format!("Bearer {k}"));
        }
        if let Some(b) = body {
            req = req.json(b);
        }
        let started = Instant::now();
        let resp = self
            .execute(req, &url)
            .await
            .map_err(|e| self.transport_error(e, path, timeout, started.elapsed()))?;
        let status = resp.status().as_u16();
        let body = self.read_capped(resp).await.map_err(|e| match e {
            Read::TooLarge => CfError::TooLarge {
                base: self.base.clone(),
                path: path.to_string(),
                cap: answer_cap(),
            },
            Read::Failed(e, _) if e.is_timeout() => {
                self.transport_error(ApiError::Timeout, path, timeout, started.elapsed())
            }
            Read::Failed(e, got) => CfError::Cut {
                path: path.to_string(),
                got,
                reason: e.to_string(),
            },
        })?;
        let resp = Answer { status, body };
        if resp.status >= 400 {
            let reason = reqwest::StatusCode::from_u16(resp.status)
                .ok()
                .and_then(|s| s.canonical_reason())
                .unwrap_or("")
                .to_string();
            return Err(CfError::Status {
                status: resp.status,
                reason,
                url: url.to_string(),
            });
        }
        Ok(resp.body)
    }

    fn json(path: &str, body: &[u8]) -> Result<Value, CfError> {
        serde_json::from_slice(body).map_err(|e| CfError::NotJson {
            path: path.to_string(),
            reason: e.to_string(),
        })
    }

    /// `_post(path, body)`: JSON in, JSON out.
    pub(crate) async fn post(
        &self,
        path: &str,
        body: &Value,
        timeout: Option<Duration>,
    ) -> Result<Value, CfError> {
        let b = self
            .send(Method::POST, path, &[], Some(body), timeout, true)
            .await?;
        Self::json(path, &b)
    }

    /// `_get(path, params={"userId": ...})`.
    pub(crate) async fn get(
        &self,
        path: &str,
        query: &[(&str, &str)],
        timeout: Option<Duration>,
    ) -> Result<Value, CfError> {
        let b = self
            .send(Method::GET, path, query, None, timeout, true)
            .await?;
        Self::json(path, &b)
    }

    /// `_get_raw`: the body as bytes (the PNG screenshot).
    pub(crate) async fn get_raw(
        &self,
        path: &str,
        query: &[(&str, &str)],
    ) -> Result<Vec<u8>, CfError> {
        self.send(Method::GET, path, query, None, None, true).await
    }

    /// `_delete(path)`: no body.
    pub(crate) async fn delete(&self, path: &str) -> Result<Value, CfError> {
        let b = self
            .send(Method::DELETE, path, &[], None, None, true)
            .await?;
        Self::json(path, &b)
    }

    /// `check_camofox_available` + `get_vnc_url`: `GET /health` (no key);
    /// a valid `vncPort` gives the VNC URL on the server's host.
    pub(crate) async fn vnc_url(&self) -> Option<String> {
        let b = self
            .send(
                Method::GET,
                "/health",
                &[],
                None,
                Some(deadlines::CAMOFOX_HEALTH.get()),
                false,
            )
            .await
            .ok()?;
        let v: Value = serde_json::from_slice(&b).ok()?;
        let port = v.get("vncPort")?.as_i64()?;
        if !(1..=65535).contains(&port) {
            return None;
        }
        let host = Url::parse(&self.base)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
            .unwrap_or_else(|| "localhost".into());
        Some(format!("http://{host}:{port}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_errors_read_as_requests_words_them() {
        let e = CfError::Status {
            status: 404,
            reason: "Not Found".into(),
            url: "http://127.0.0.1:9377/tabs/t1/evaluate".into(),
        };
        assert_eq!(
            e.to_string(),
            "404 Client Error: Not Found for url: http://127.0.0.1:9377/tabs/t1/evaluate"
        );
        let e = CfError::Status {
            status: 500,
            reason: "Internal Server Error".into(),
            url: "http://h/x".into(),
        };
        assert!(
            e.to_string()
                .starts_with("500 Server Error: Internal Server Error")
        );
    }
}
