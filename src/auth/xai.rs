//! xAI credentials as Hermes resolves them for its direct xAI endpoints
//! (image generation, TTS, web search): the SuperGrok / Premium+ OAuth sign-in
//! first, then `XAI_API_KEY` (hermes-agent: tools/xai_http.py
//! `resolve_xai_http_credentials`, hermes_cli/auth.py `*_xai_oauth_*`).
//!
//! * Sign-in: `credential_pool["xai-oauth"]` entries by priority (Hermes seeds
//!   the pool from the `providers["xai-oauth"].tokens` singleton, so a
//!   singleton-only store counts as one entry). An entry whose JWT expires
//!   within the proactive window (120 s for tokens under 45 min, else 1 h) is
//!   refreshed first; an entry whose refresh fails is skipped, as the pool does.
//! * Refresh: the token endpoint cached in `providers["xai-oauth"].discovery`,
//!   else OIDC discovery at `https://auth.x.ai/.well-known/openid-configuration`;
//!   either must be `https://` on `x.ai` or a `*.x.ai` host (Hermes refuses a
//!   substituted endpoint, which would receive the refresh token). Form POST
//!   `grant_type=refresh_token&client_id=…&refresh_token=…`; the rotated pair is
//!   written back to every record that held the old token, under Hermes' lock.
//! * Base URL for the sign-in: `HERMES_XAI_BASE_URL`, else `XAI_BASE_URL`, only
//!   when `https://` on an xAI host (otherwise the default `https://api.x.ai/v1`:
//!   a tampered `.env` must not ship the bearer elsewhere). A
//!   `<section>.xai.base_url` in config.yaml still wins at the call site, as
//!   Hermes' `tts.xai.base_url` does.
//! * Key: `XAI_API_KEY` with `XAI_BASE_URL` (default `https://api.x.ai/v1`).
//!
//! A 401 on a sign-in token is retried once after a forced refresh
//! ([`refresh_rejected`]), as Hermes' xAI web search does.

use serde_json::Value;

use crate::auth::store::{self as auth_store, AuthStore, PoolEntry};
use crate::hermes::{Context, envvars};

pub(crate) const PROVIDER: &str = "xai-oauth";
pub(crate) const DEFAULT_BASE_URL: &str = "https://api.x.ai/v1";
/// `XAI_OAUTH_DISCOVERY_URL`.
pub(crate) const DISCOVERY_URL: &str = "https://auth.x.ai/.well-known/openid-configuration";
/// `XAI_OAUTH_CLIENT_ID`.
pub(crate) const CLIENT_ID: &str = "b1a00492-073a-47ea-816f-4c329264a828";
/// `XAI_ACCESS_TOKEN_REFRESH_SKEW_SECONDS`.
const MAX_SKEW: f64 = 3600.0;

/// Credentials for one xAI call.
#[derive(Clone, PartialEq)]
pub struct XaiCreds {
    pub api_key: String,
    pub base_url: String,
    /// From Hermes' xAI sign-in (refreshable), not `XAI_API_KEY`.
    pub oauth: bool,
}

/// Never prints the key.
impl std::fmt::Debug for XaiCreds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("XaiCreds")
            .field("api_key", &"<redacted>")
            .field("base_url", &self.base_url)
            .field("oauth", &self.oauth)
            .finish()
    }
}

/// Why a sign-in could not be refreshed (Hermes' `AuthError` texts).
#[derive(Debug, thiserror::Error)]
pub(crate) enum XaiAuthError {
    #[error("{0}")]
    Refresh(String),
    #[error(transparent)]
    Store(#[from] auth_store::AuthStoreError),
}

/// `has_xai_credentials`: a cheap probe with no network and no expiry check,
/// for `tools/list` and provider selection. Names the source.
pub(crate) fn peek(ctx: &Context) -> Option<&'static str> {
    if ctx
        .env
        .get(envvars::XAI_API_KEY)
        .is_some_and(|k| !k.trim().is_empty())
    {
        return Some("XAI_API_KEY");
    }
    let store = auth_store::load(&auth_store::path_for(&ctx.home.path, PROVIDER)).ok()?;
    (!entries(&store).is_empty()).then_some("Hermes' xAI Grok sign-in (auth.json xai-oauth)")
}

/// Pool entries, or the singleton as the entry Hermes would seed from it.
fn entries(store: &AuthStore) -> Vec<PoolEntry> {
    let mut v: Vec<PoolEntry> = auth_store::pool_entries(store, PROVIDER)
        .into_iter()
        .filter(|e| e.token().is_some())
        .collect();
    if v.is_empty()
        && let Some(t) = auth_store::singleton_tokens(store, PROVIDER)
        && let Some(a) = auth_store::nonempty(t.access_token())
    {
        v.push(PoolEntry::seeded("device_code", a, t.refresh_token()));
    }
    v
}

/// `_xai_proactive_refresh_skew_seconds`.
fn skew(token: &str, now: f64) -> f64 {
    match auth_store::jwt_exp(token) {
        Some(exp) if exp - now > 0.0 && exp - now <= 45.0 * 60.0 => 120.0,
        _ => MAX_SKEW,
    }
}

/// `_xai_access_token_is_expiring` (no `exp` claim: not expiring).
fn is_expiring(token: &str, skew: f64, now: f64) -> bool {
    auth_store::jwt_exp(token).is_some_and(|exp| exp <= now + skew.max(0.0))
}

/// `https://` on `x.ai` or a `*.x.ai` host.
fn on_xai_origin(url: &str) -> bool {
    url::Url::parse(url).is_ok_and(|u| {
        u.scheme() == "https"
            && u.host_str().is_some_and(|h| {
                let h = h.to_ascii_lowercase();
                h == "x.ai" || h.ends_with(".x.ai")
            })
    })
}

fn env_url(ctx: &Context, name: &str) -> Option<String> {
    ctx.env
        .get(name)
        .map(|v| v.trim().trim_end_matches('/').to_string())
        .filter(|v| !v.is_empty())
}

/// `_xai_validate_inference_base_url` over the env overrides.
fn oauth_base_url(ctx: &Context, entry_base: Option<&str>) -> String {
    let fallback = auth_store::nonempty(entry_base)
        .map(|b| b.trim_end_matches('/').to_string())
        .unwrap_or_else(|| DEFAULT_BASE_URL.into());
    let Some(candidate) =
        env_url(ctx, envvars::HERMES_XAI_BASE_URL).or_else(|| env_url(ctx, envvars::XAI_BASE_URL))
    else {
        return fallback;
    };
    if on_xai_origin(&candidate) {
        candidate
    } else {
        tracing::warn!(
            "Refusing xAI base_url override {candidate:?}: the xai-oauth bearer is only sent to https://*.x.ai; using {fallback}"
        );
        fallback
    }
}

fn key_creds(ctx: &Context) -> Option<XaiCreds> {
    let key = ctx.env.get(envvars::XAI_API_KEY)?.trim().to_string();
    (!key.is_empty()).then(|| XaiCreds {
        api_key: key,
        base_url: env_url(ctx, envvars::XAI_BASE_URL).unwrap_or_else(|| DEFAULT_BASE_URL.into()),
        oauth: false,
    })
}

/// Why [`resolve`] found no credentials: when a sign-in could not be
/// refreshed because another process held Hermes' `auth.lock`, that is what
/// the user must hear, not "no credentials".
#[derive(Debug, Default)]
pub struct NoCreds {
    /// The lock error (names the lock file and its holder).
    pub locked: Option<String>,
}

impl NoCreds {
    /// The lock error when there was one, else the caller's own text.
    pub fn or(&self, default: &str) -> String {
        self.locked.clone().unwrap_or_else(|| default.to_string())
    }
}

/// `resolve_xai_http_credentials()`: the sign-in (refreshed when expiring),
/// else `XAI_API_KEY`; [`NoCreds`] when there is neither.
pub async fn resolve(ctx: &Context, http: &reqwest::Client) -> Result<XaiCreds, NoCreds> {
    let path = auth_store::path_for(&ctx.home.path, PROVIDER);
    let now = auth_store::now();
    let mut why = NoCreds::default();
    if let Ok(store) = auth_store::load(&path) {
        for e in entries(&store) {
            if !e.selectable(now) {
                continue;
            }
            let access = e.token().unwrap_or_default().to_string();
            let access = if is_expiring(&access, skew(&access, now), now) {
                match refresh_entry(http, &path, &store, &access).await {
                    Ok(Some(t)) => t,
                    // Another process rotated it meanwhile: use what it stored.
                    Ok(None) => match current_token(&path, e.id(), now) {
                        Some(t) => t,
                        None => continue,
                    },
                    // Hermes' lock held by another process: the log says so plainly.
                    Err(XaiAuthError::Store(err @ auth_store::AuthStoreError::Locked(_))) => {
                        tracing::warn!("xai-oauth entry {} not refreshed: {err}", e.id());
                        why.locked = Some(err.to_string());
                        continue;
                    }
                    Err(err) => {
                        tracing::debug!("xai-oauth entry {} refresh failed: {err}", e.id());
                        continue;
                    }
                }
            } else {
                access
            };
            return Ok(XaiCreds {
                api_key: access,
                base_url: oauth_base_url(ctx, e.base_url()),
                oauth: true,
            });
        }
    }
    key_creds(ctx).ok_or(why)
}

/// The endpoint answered 401 to a sign-in token: refresh the record holding
/// it once and return the new credentials (`force_refresh=True,
/// api_key_hint=…`). `None` when it cannot be refreshed.
pub(crate) async fn refresh_rejected(
    ctx: &Context,
    http: &reqwest::Client,
    stale: &XaiCreds,
) -> Option<XaiCreds> {
    if !stale.oauth {
        return None;
    }
    let path = auth_store::path_for(&ctx.home.path, PROVIDER);
    let store = auth_store::load(&path).ok()?;
    let e = entries(&store)
        .into_iter()
        .find(|e| e.token() == Some(stale.api_key.as_str()))?;
    let fresh = match refresh_entry(http, &path, &store, &stale.api_key).await {
        Ok(Some(t)) => Ok(t),
        Ok(None) => current_token(&path, e.id(), auth_store::now()).ok_or(()),
        Err(err) => {
            tracing::warn!("xAI OAuth refresh after 401 failed: {err}");
            Err(())
        }
    };
    match fresh {
        Ok(t) if t != stale.api_key => Some(XaiCreds {
            api_key: t,
            ..stale.clone()
        }),
        Ok(_) | Err(()) => None,
    }
}

/// The token the entry `id` holds now (after another process refreshed it).
fn current_token(path: &std::path::Path, id: &str, now: f64) -> Option<String> {
    let store = auth_store::load_fresh(path).ok()?;
    entries(&store)
        .into_iter()
        .find(|e| e.id() == id && e.selectable(now))
        .and_then(|e| e.token().map(str::to_string))
}

/// Refresh the sign-in record holding `old_access`, under Hermes' lock and
/// detached from the caller ([`auth_store::refresh_locked`]); `None` when
/// another process rotated it first.
async fn refresh_entry(
    http: &reqwest::Client,
    path: &std::path::Path,
    store: &AuthStore,
    old_access: &str,
) -> Result<Option<String>, XaiAuthError> {
    let cached = auth_store::provider_state(store, PROVIDER)
        .and_then(|s| s.get("discovery"))
        .and_then(|d| d.get("token_endpoint"))
        .and_then(Value::as_str)
        .and_then(|s| auth_store::nonempty(Some(s)))
        .map(str::to_string);
    let test_endpoint = test_token_url();
    let http = http.clone();
    auth_store::refresh_locked(
        path.to_path_buf(),
        PROVIDER,
        old_access.to_string(),
        move |rt: String| async move {
            if rt.trim().is_empty() {
                return Err(XaiAuthError::Refresh(
                    "xAI OAuth is missing refresh_token. Re-authenticate with `hermes model`."
                        .into(),
                ));
            }
            if let Some(loopback) = test_endpoint {
                return refresh_pure(&http, &loopback, &rt).await;
            }
            let endpoint = match cached {
                Some(e) => e,
                None => discover_token_endpoint(&http, DISCOVERY_URL).await?,
            };
            validate_endpoint(&endpoint, "token_endpoint")?;
            refresh_pure(&http, &endpoint, &rt).await
        },
    )
    .await
}

/// Tests only (`HERMES_MCP_TEST_XAI_TOKEN_URL`): a token endpoint on a
/// loopback address, which cannot carry the refresh token off the machine;
/// anything else is ignored and xAI's pinned endpoint used.
fn test_token_url() -> Option<String> {
    let u = envvars::get(envvars::HERMES_MCP_TEST_XAI_TOKEN_URL)?;
    let loopback = url::Url::parse(u.trim()).is_ok_and(|p| match p.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        _ => false,
    });
    if !loopback {
        tracing::warn!("ignoring HERMES_MCP_TEST_XAI_TOKEN_URL {u:?}: not a loopback address");
    }
    loopback.then(|| u.trim().to_string())
}

/// `_xai_validate_oauth_endpoint`.
fn validate_endpoint(url: &str, field: &str) -> Result<(), XaiAuthError> {
    if on_xai_origin(url) {
        return Ok(());
    }
    Err(XaiAuthError::Refresh(format!(
        "xAI OIDC discovery {field} {url:?} is not https on the xAI origin (expected x.ai or a *.x.ai subdomain). Refusing to use a cached endpoint that may have been substituted; re-authenticate with `hermes model` to re-fetch."
    )))
}

/// `_xai_oauth_discovery`: the `token_endpoint` from the OIDC document.
async fn discover_token_endpoint(
    http: &reqwest::Client,
    url: &str,
) -> Result<String, XaiAuthError> {
    let resp = http
        .get(url)
        .header("Accept", "application/json")
        .timeout(crate::hermes::deadlines::XAI_DISCOVERY.get())
        .send()
        .await
        .map_err(|e| XaiAuthError::Refresh(format!("xAI OIDC discovery failed: {e}")))?;
    let status = resp.status().as_u16();
    if status != 200 {
        return Err(XaiAuthError::Refresh(format!(
            "xAI OIDC discovery returned status {status}."
        )));
    }
    let v: Value = resp.json().await.map_err(|e| {
        XaiAuthError::Refresh(format!("xAI OIDC discovery returned invalid JSON: {e}"))
    })?;
    auth_store::nonempty(v.get("token_endpoint").and_then(Value::as_str))
        .map(str::to_string)
        .ok_or_else(|| {
            XaiAuthError::Refresh(
                "xAI OIDC discovery response was missing required endpoints.".into(),
            )
        })
}

/// `refresh_xai_oauth_pure`: one form POST; the new access token and the
/// (possibly rotated) refresh token. The caller has validated `endpoint`.
pub(crate) async fn refresh_pure(
    http: &reqwest::Client,
    endpoint: &str,
    refresh_token: &str,
) -> Result<(String, String), XaiAuthError> {
    let form = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("grant_type", "refresh_token")
        .append_pair("client_id", CLIENT_ID)
        .append_pair("refresh_token", refresh_token)
        .finish();
    let resp = http
        .post(endpoint)
        .header("Accept", "application/json")
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(form)
        .timeout(crate::hermes::deadlines::TOKEN_REFRESH.get())
        .send()
        .await
        .map_err(|e| XaiAuthError::Refresh(format!("xAI token refresh failed: {e}")))?;
    let status = resp.status().as_u16();
    let body = resp.text().await.unwrap_or_default();
    let detail = body.trim();
    let response = if detail.is_empty() {
        String::new()
    } else {
        format!(
            " Response: {}",
            crate::redact::redact_sensitive_text(detail)
        )
    };
    if status == 403 {
        return Err(XaiAuthError::Refresh(format!(
            "xAI token refresh failed with HTTP 403.{response} This OAuth account is not authorized for xAI API access — xAI may be restricting API/OAuth use to specific SuperGrok tiers despite the in-app subscription being active. Re-logging in won't change that; set ``XAI_API_KEY`` and switch to ``provider: xai`` (API-key path) if available, or upgrade your subscription at https://x.ai/grok."
        )));
    }
    if status != 200 {
        return Err(XaiAuthError::Refresh(format!(
            "xAI token refresh failed.{response}"
        )));
    }
    let v: Value = serde_json::from_str(&body).map_err(|e| {
        XaiAuthError::Refresh(format!("xAI token refresh returned invalid JSON: {e}"))
    })?;
    let access = auth_store::nonempty(v.get("access_token").and_then(Value::as_str))
        .ok_or_else(|| {
            XaiAuthError::Refresh("xAI token refresh response was missing access_token.".into())
        })?
        .to_string();
    let refresh = auth_store::nonempty(v.get("refresh_token").and_then(Value::as_str))
        .unwrap_or(refresh_token)
        .to_string();
    Ok((access, refresh))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_pinning() {
        assert!(on_xai_origin("https://api.x.ai/v1"));
        assert!(on_xai_origin("https://auth.x.ai/oauth2/token"));
        assert!(!on_xai_origin("http://api.x.ai/v1"));
        assert!(!on_xai_origin("https://x.ai.evil.example/v1"));
        assert!(!on_xai_origin("https://evilx.ai/v1"));
        assert!(validate_endpoint("https://127.0.0.1/token", "token_endpoint").is_err());
    }

    #[test]
    fn proactive_window() {
        let now = 1_000_000.0;
        let jwt = |exp: f64| {
            use base64::Engine as _;
            let p = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .encode(format!("{{\"exp\":{exp}}}"));
            format!("h.{p}.s")
        };
        // A 15-minute token: refreshed only in its last 2 minutes.
        assert!(!is_expiring(
            &jwt(now + 600.0),
            skew(&jwt(now + 600.0), now),
            now
        ));
        assert!(is_expiring(
            &jwt(now + 60.0),
            skew(&jwt(now + 60.0), now),
            now
        ));
        // A multi-hour token: refreshed in its last hour.
        assert!(!is_expiring(&jwt(now + 5700.0), MAX_SKEW, now));
        assert!(is_expiring(
            &jwt(now + 3500.0),
            skew(&jwt(now + 3500.0), now),
            now
        ));
        assert!(!is_expiring("opaque-token", MAX_SKEW, now));
    }

    /// One canned HTTP answer on loopback; returns the base URL and the request seen.
    fn one_shot(status: u16, body: &'static str) -> (String, std::thread::JoinHandle<String>) {
        use std::io::{Read, Write};
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let base = format!("http://{}", l.local_addr().expect("addr"));
        let h = std::thread::spawn(move || {
            let (mut s, _) = l.accept().expect("accept");
            let mut buf = Vec::new();
            let mut chunk = [0u8; 4096];
            loop {
                let n = s.read(&mut chunk).expect("read");
                buf.extend_from_slice(&chunk[..n]);
                let text = String::from_utf8_lossy(&buf).to_string();
                if let Some(i) = text.find("\r\n\r\n") {
                    let len = text
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                        })
                        .unwrap_or(0);
                    if buf.len() >= i + 4 + len || n == 0 {
                        break;
                    }
                }
            }
            let reply = format!(
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            s.write_all(reply.as_bytes()).expect("write");
            String::from_utf8_lossy(&buf).to_string()
        });
        (base, h)
    }

    #[tokio::test]
    async fn refresh_speaks_the_token_endpoint_form() {
        let (base, h) = one_shot(
            200,
            r#"{"access_token":"new-a","refresh_token":"new-r","expires_in":900}"#,
        );
        crate::net::client::install_crypto();
        let http = reqwest::Client::new();
        let got = refresh_pure(&http, &format!("{base}/oauth2/token"), "rt 1")
            .await
            .expect("refresh");
        assert_eq!(got, ("new-a".to_string(), "new-r".to_string()));
        let req = h.join().expect("server");
        assert!(req.starts_with("POST /oauth2/token "), "{req}");
        assert!(
            req.to_ascii_lowercase()
                .contains("content-type: application/x-www-form-urlencoded")
        );
        assert!(
            req.ends_with(&format!(
                "grant_type=refresh_token&client_id={CLIENT_ID}&refresh_token=rt+1"
            )),
            "{req}"
        );

        // No rotation in the answer: the old refresh token is kept.
        let (base, h) = one_shot(200, r#"{"access_token":"a2"}"#);
        let got = refresh_pure(&http, &base, "rt").await.expect("refresh");
        assert_eq!(got, ("a2".to_string(), "rt".to_string()));
        h.join().expect("server");

        // Hermes' texts for a tier denial and a dead grant.
        let (base, h) = one_shot(403, r#"{"error":"forbidden"}"#);
        let e = refresh_pure(&http, &base, "rt")
            .await
            .expect_err("403")
            .to_string();
        assert!(e.starts_with(r#"xAI token refresh failed with HTTP 403. Response: {"error":"forbidden"} This OAuth account is not authorized"#), "{e}");
        h.join().expect("server");
        let (base, h) = one_shot(400, r#"{"error":"invalid_grant"}"#);
        let e = refresh_pure(&http, &base, "rt")
            .await
            .expect_err("400")
            .to_string();
        assert_eq!(
            e,
            r#"xAI token refresh failed. Response: {"error":"invalid_grant"}"#
        );
        h.join().expect("server");
        let (base, h) = one_shot(200, r#"{"token_type":"Bearer"}"#);
        let e = refresh_pure(&http, &base, "rt")
            .await
            .expect_err("no token")
            .to_string();
        assert_eq!(e, "xAI token refresh response was missing access_token.");
        h.join().expect("server");
    }

    #[test]
    fn env_overrides_are_pinned_for_the_sign_in() {
        let ctx = |vars: &[(&str, &str)]| {
            crate::hermes::Context::with_parts(
                crate::hermes::HermesHome {
                    path: "/nonexistent".into(),
                    explicit: true,
                },
                crate::hermes::Env::from_map(
                    vars.iter().map(|(k, v)| (k.to_string(), v.to_string())),
                ),
                crate::hermes::HermesConfig::default(),
            )
        };
        assert_eq!(oauth_base_url(&ctx(&[]), None), DEFAULT_BASE_URL);
        assert_eq!(
            oauth_base_url(&ctx(&[("XAI_BASE_URL", "http://127.0.0.1:1/v1")]), None),
            DEFAULT_BASE_URL
        );
        assert_eq!(
            oauth_base_url(
                &ctx(&[
                    ("HERMES_XAI_BASE_URL", "https://eu.api.x.ai/v1/"),
                    ("XAI_BASE_URL", "https://api.x.ai/v2")
                ]),
                None
            ),
            "https://eu.api.x.ai/v1"
        );
        assert_eq!(
            oauth_base_url(&ctx(&[]), Some("https://us.api.x.ai/v1/")),
            "https://us.api.x.ai/v1"
        );
    }
}
