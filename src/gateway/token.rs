//! The Nous access token the gateway is called with, refreshed as Hermes
//! refreshes it.
//!
//! hermes-agent: tools/managed_tool_gateway.py (`peek_nous_access_token`,
//! `read_nous_access_token`, skew 120 s) and hermes_cli/auth.py
//! (`resolve_nous_access_token`, `_refresh_access_token`): `POST
//! <portal>/api/oauth/token` with header `x-nous-refresh-token` and form
//! `grant_type=refresh_token&client_id=…`; the rotated pair is written back to
//! `providers.nous` in `auth.json` under Hermes' `auth.lock`.
//!
//! The portal is `HERMES_PORTAL_BASE_URL` / `NOUS_PORTAL_BASE_URL` (trusted,
//! wins outright), else auth.json's `portal_base_url` when its host is on
//! Hermes' allowlist, else `https://portal.nousresearch.com`. Tokens are
//! never logged.

use std::path::Path;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::auth::nous::{self as nous_auth, LockError, text};
use crate::auth::store::AuthStoreError;
use crate::hermes::{Context, HermesHome, deadlines, envvars};
use crate::net::{ApiError, HttpClient};

pub(crate) const DEFAULT_PORTAL_URL: &str = "https://portal.nousresearch.com";
const DEFAULT_CLIENT_ID: &str = "hermes-cli";
/// `_NOUS_ACCESS_TOKEN_REFRESH_SKEW_SECONDS` / `ACCESS_TOKEN_REFRESH_SKEW_SECONDS`.
pub(crate) const REFRESH_SKEW: f64 = 120.0;
/// `_NOUS_PORTAL_ALLOWED_HOSTS`.
const ALLOWED_PORTAL_HOSTS: [&str; 3] = ["portal.nousresearch.com", "localhost", "127.0.0.1"];

/// `TOOL_GATEWAY_USER_TOKEN`, trimmed, when set.
fn explicit(ctx: &Context) -> Option<String> {
    ctx.env
        .get(envvars::TOOL_GATEWAY_USER_TOKEN)
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
}

/// `peek_nous_access_token`: the override, else the stored token, with no
/// expiry check and no network (availability scans).
pub(crate) fn peek(ctx: &Context) -> Option<String> {
    explicit(ctx).or_else(|| {
        let store = nous_auth::load_store(&ctx.home)?;
        text(nous_auth::provider_state(&store)?, "access_token").map(str::to_string)
    })
}

/// `read_nous_access_token`: the override; else the stored token while it has
/// more than 120 s left; else a refreshed one; else (refresh failed) the stored
/// token as it is.
pub(crate) async fn read(ctx: &Context, http: &HttpClient) -> Option<String> {
    if let Some(t) = explicit(ctx) {
        return Some(t);
    }
    let store = nous_auth::load_store(&ctx.home);
    let state = store.as_ref().and_then(nous_auth::provider_state);
    let cached = state
        .and_then(|s| text(s, "access_token"))
        .map(str::to_string);
    if cached.is_some()
        && !nous_auth::is_expiring(state.and_then(|s| s.get("expires_at")), REFRESH_SKEW)
    {
        return cached;
    }
    match resolve(ctx, http).await {
        Ok(t) => Some(t),
        Err(e) => {
            tracing::debug!("Nous access token refresh failed: {e}");
            cached
        }
    }
}

/// `_nous_portal_env_override`.
fn portal_override(ctx: &Context) -> Option<String> {
    [
        envvars::HERMES_PORTAL_BASE_URL,
        envvars::NOUS_PORTAL_BASE_URL,
    ]
    .into_iter()
    .find_map(|n| ctx.env.get(n))
    .map(|s| s.trim().trim_end_matches('/').to_string())
    .filter(|s| !s.is_empty())
}

/// The portal a refresh goes to (see the module docs).
fn refresh_portal(ctx: &Context, state: &Map<String, Value>) -> String {
    if let Some(p) = portal_override(ctx) {
        return p;
    }
    let stored = text(state, "portal_base_url")
        .map(|s| s.trim_end_matches('/').to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| DEFAULT_PORTAL_URL.into());
    match url::Url::parse(&stored) {
        Ok(u)
            if u.host_str()
                .is_some_and(|h| !ALLOWED_PORTAL_HOSTS.contains(&h)) =>
        {
            tracing::warn!(
                "auth: ignoring invalid portal_base_url (host {:?} not in allowlist), using default",
                u.host_str().unwrap_or("")
            );
            DEFAULT_PORTAL_URL.into()
        }
        _ => stored,
    }
}

/// Why [`resolve`] has no token; the texts are Hermes' (hermes_cli/auth.py
/// `resolve_nous_access_token`, `_refresh_access_token`), shown to the user
/// as the account's error.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RefreshError {
    #[error(transparent)]
    Lock(#[from] LockError),
    /// A task of the refresh (the wait for the locks, the refresh) died.
    #[error(transparent)]
    LockTask(#[from] tokio::task::JoinError),
    #[error("Hermes is not logged into Nous Portal.")]
    NotLoggedIn,
    #[error("No access token found for Nous Portal login.")]
    NoAccessToken,
    #[error("Session expired and no refresh token is available.")]
    NoRefreshToken,
    #[error("Nous Portal token refresh failed: {0}")]
    Request(#[source] ApiError),
    /// The portal answered without a JSON object.
    #[error("Refresh token exchange failed")]
    ExchangeFailed,
    /// The portal refused the refresh token (`error`, `error_description`).
    #[error("{message}")]
    Refused { code: String, message: String },
    #[error("Refresh response missing access_token")]
    MissingAccessToken,
    /// The shared store's fresher pair could not be saved to auth.json.
    #[error("cannot save the Nous login: {0}")]
    SaveMerged(#[source] AuthStoreError),
    #[error("cannot save the refreshed Nous login: {0}")]
    SaveRefreshed(#[source] AuthStoreError),
    #[error(transparent)]
    ShuttingDown(#[from] crate::auth::refreshes::ShuttingDown),
}

/// `resolve_nous_access_token(refresh_skew_seconds=120)`: the stored token
/// while fresh, else refreshed and saved. Errors carry Hermes' texts. The
/// refresh itself (from spending the single-use refresh token to saving its
/// successor) runs as its own task that shutdown waits for
/// ([`crate::auth::refreshes`]): a cancelled call cannot lose the new pair.
pub(crate) async fn resolve(ctx: &Context, http: &HttpClient) -> Result<String, RefreshError> {
    let shared_path =
        nous_auth::shared_path(&ctx.home, ctx.env.get(envvars::HERMES_SHARED_AUTH_DIR));
    let locks = take_locks(&ctx.home, &shared_path).await?;
    let Login {
        state,
        portal,
        client_id,
        merged,
    } = login(ctx, &shared_path)?;
    let access = stored(&state, "access_token").ok_or(RefreshError::NoAccessToken)?;
    if !nous_auth::is_expiring(state.get("expires_at"), REFRESH_SKEW) {
        if merged {
            nous_auth::save_provider_state(&ctx.home, state).map_err(RefreshError::SaveMerged)?;
        }
        return Ok(access);
    }
    let refresh = stored(&state, "refresh_token").ok_or(RefreshError::NoRefreshToken)?;
    let spend = Spend {
        home: ctx.home.clone(),
        http: http.clone(),
        shared_path,
        state,
        refresh,
        portal,
        client_id,
    };
    crate::auth::refreshes::detached(async move {
        let r = spend.run().await;
        drop(locks);
        r
    })
    .await?
}

/// A refresh about to spend its token, with everything it needs to finish
/// on its own (the locks are held by the task that runs it).
struct Spend {
    home: HermesHome,
    http: HttpClient,
    shared_path: std::path::PathBuf,
    state: Map<String, Value>,
    refresh: String,
    portal: String,
    client_id: String,
}

impl Spend {
    /// `_refresh_access_token` and the save: the new token, or Hermes' error
    /// (a refused refresh token is quarantined, [`refused`]).
    async fn run(self) -> Result<String, RefreshError> {
        let _spending = crate::auth::refreshes::begin()?;
        let (status, body) =
            exchange(&self.http, &self.portal, &self.refresh, &self.client_id).await?;
        if status != 200 {
            return Err(refused(&self.home, self.state, &self.shared_path, body));
        }
        let Some(Value::Object(answer)) = body else {
            return Err(RefreshError::ExchangeFailed);
        };
        let Some(token) = answer.get("access_token").and_then(Value::as_str) else {
            return Err(RefreshError::MissingAccessToken);
        };
        let token = token.to_string();
        let rotated = Rotation {
            answer: &answer,
            access: &token,
            old_refresh: self.refresh,
            portal: self.portal,
            client_id: self.client_id,
        }
        .apply(self.state, nous_auth::now());
        nous_auth::save_provider_state(&self.home, rotated.clone())
            .map_err(RefreshError::SaveRefreshed)?;
        nous_auth::write_shared(&self.shared_path, &rotated);
        Ok(token)
    }
}

/// Both locks a refresh holds, in Hermes' order: the auth store (Hermes'
/// 15 s), then the shared Nous store (`max(timeout + 5, 15)` = 20 s), waited
/// for off the async workers.
async fn take_locks(
    home: &HermesHome,
    shared_path: &Path,
) -> Result<(nous_auth::StoreLock, nous_auth::StoreLock), RefreshError> {
    let home = home.clone();
    let shared_lock = nous_auth::shared_lock_path(shared_path);
    let locks = tokio::task::spawn_blocking(move || {
        let a = nous_auth::StoreLock::acquire(&home, deadlines::AUTH_LOCK_WAIT.get())?;
        let shared_wait =
            deadlines::GATEWAY_REFRESH.get() + deadlines::scaled(Duration::from_secs(5));
        let b = nous_auth::StoreLock::acquire_path(&shared_lock, shared_wait)?;
        Ok::<_, LockError>((a, b))
    })
    .await??;
    Ok(locks)
}

/// The stored login a refresh starts from, read under the locks.
struct Login {
    /// `providers.nous`, with the shared store's fresher pair merged in.
    state: Map<String, Value>,
    /// Where a refresh goes ([`refresh_portal`]).
    portal: String,
    client_id: String,
    /// The shared store had a fresher pair (to be saved even without a refresh).
    merged: bool,
}

/// Read `providers.nous` and merge the shared store's pair into it: another
/// profile may have rotated the pair.
fn login(ctx: &Context, shared_path: &Path) -> Result<Login, RefreshError> {
    let store = nous_auth::load_store(&ctx.home).unwrap_or_default();
    let Some(mut state) = nous_auth::provider_state(&store).cloned() else {
        return Err(RefreshError::NotLoggedIn);
    };
    let portal = refresh_portal(ctx, &state);
    let client_id = text(&state, "client_id")
        .unwrap_or(DEFAULT_CLIENT_ID)
        .to_string();
    let merged = nous_auth::read_shared(shared_path)
        .is_some_and(|shared| nous_auth::merge_shared(&mut state, &shared));
    Ok(Login {
        state,
        portal,
        client_id,
        merged,
    })
}

/// A non-empty string field as stored (not trimmed, as Hermes reads tokens).
fn stored(state: &Map<String, Value>, key: &str) -> Option<String> {
    state
        .get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// `_refresh_access_token`'s POST: the status and the body when it is JSON.
async fn exchange(
    http: &HttpClient,
    portal: &str,
    refresh: &str,
    client_id: &str,
) -> Result<(u16, Option<Value>), RefreshError> {
    let req = http
        .api()
        .post(format!("{portal}/api/oauth/token"))
        .timeout(deadlines::GATEWAY_REFRESH.get())
        .header("Accept", "application/json")
        .header("x-nous-refresh-token", refresh)
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(
            url::form_urlencoded::Serializer::new(String::new())
                .append_pair("grant_type", "refresh_token")
                .append_pair("client_id", client_id)
                .finish(),
        );
    let resp = http
        .send_api("nous-portal", Duration::ZERO, req)
        .await
        .map_err(RefreshError::Request)?;
    Ok((resp.status, serde_json::from_slice(&resp.body).ok()))
}

/// The portal refused the refresh: Hermes' error (its reuse text when the
/// token was replayed), after quarantining a login that can never work again
/// (`_is_terminal_nous_refresh_error`).
fn refused(
    home: &HermesHome,
    state: Map<String, Value>,
    shared_path: &Path,
    body: Option<Value>,
) -> RefreshError {
    let Some(Value::Object(err)) = body else {
        return RefreshError::ExchangeFailed;
    };
    let code = err
        .get("error")
        .map(crate::pycompat::py_str_or_json)
        .unwrap_or_else(|| "invalid_grant".into());
    let mut desc = err
        .get("error_description")
        .filter(|v| crate::pycompat::py_bool(v))
        .map(crate::pycompat::py_str_or_json)
        .unwrap_or_else(|| "Refresh token exchange failed".into());
    let lowered = desc.to_lowercase();
    if code == "refresh_token_reused" || lowered.contains("reuse") {
        desc = "Nous Portal detected refresh-token reuse and revoked this session.\nThis usually means an external process (monitoring script, custom self-heal hook, or another Hermes install sharing ~/.hermes/auth.json) called POST /api/oauth/token with Hermes's refresh token without persisting the rotated token back.\nNous refresh tokens are single-use — only Hermes may call the refresh endpoint. For health checks, use `hermes auth status` instead.\nRe-authenticate with: hermes auth add nous".into();
    }
    if ["invalid_grant", "invalid_token", "refresh_token_reused"].contains(&code.as_str())
        && let Err(e) = nous_auth::quarantine(home, state, shared_path, &code, &desc)
    {
        tracing::warn!("cannot record the dead Nous login: {e}");
    }
    RefreshError::Refused {
        code,
        message: desc,
    }
}

/// What a successful refresh changes in `providers.nous`.
struct Rotation<'a> {
    /// The token endpoint's JSON answer.
    answer: &'a Map<String, Value>,
    /// Its `access_token`.
    access: &'a str,
    /// Kept when the answer brings no new refresh token.
    old_refresh: String,
    portal: String,
    client_id: String,
}

impl Rotation<'_> {
    /// `_refresh_access_token`'s state update: the new pair, its type, scope
    /// and expiry (`expires_in` from now), the portal and client it came from.
    fn apply(self, mut s: Map<String, Value>, now: f64) -> Map<String, Value> {
        let r = self.answer;
        let ttl = r
            .get("expires_in")
            .and_then(|v| {
                v.as_i64()
                    .or_else(|| v.as_f64().map(|f| f as i64))
                    .or_else(|| v.as_str()?.trim().parse().ok())
            })
            .unwrap_or(0)
            .max(0);
        let pick = |k: &str| r.get(k).filter(|v| crate::pycompat::py_bool(v)).cloned();
        s.insert("access_token".into(), self.access.into());
        s.insert(
            "refresh_token".into(),
            pick("refresh_token").unwrap_or(Value::String(self.old_refresh)),
        );
        let token_type = pick("token_type")
            .or_else(|| {
                s.get("token_type")
                    .filter(|v| crate::pycompat::py_bool(v))
                    .cloned()
            })
            .unwrap_or_else(|| "Bearer".into());
        s.insert("token_type".into(), token_type);
        let scope = pick("scope")
            .or_else(|| s.get("scope").cloned())
            .unwrap_or(Value::Null);
        s.insert("scope".into(), scope);
        s.insert("obtained_at".into(), nous_auth::iso_utc(now).into());
        s.insert("expires_in".into(), ttl.into());
        s.insert(
            "expires_at".into(),
            nous_auth::iso_utc(now + ttl as f64).into(),
        );
        s.insert("portal_base_url".into(), self.portal.into());
        s.insert("client_id".into(), self.client_id.into());
        s.insert(
            "tls".into(),
            serde_json::json!({"insecure": false, "ca_bundle": null}),
        );
        s
    }
}
