//! The ChatGPT ("Codex") sign-in token, found as Hermes finds it for provider `openai-codex`
//! (image provider `openai-codex` calls `agent.auxiliary_client._read_codex_access_token`):
//!
//! 1. `$HERMES_HOME/auth.json` → `credential_pool["openai-codex"]`: entries by `priority`,
//!    skipping `dead` ones, `exhausted` ones still in cooldown (`last_error_reset_at`, else
//!    `last_status_at` + 5 min for a 401 / 1 h otherwise) and entries without a token. An
//!    OAuth entry whose JWT expires within 120 s is refreshed (`resolve` only); if that
//!    fails the entry is skipped (`CredentialPool._available_entries`).
//! 2. `providers["openai-codex"].tokens.access_token` (Hermes' singleton) unless its JWT
//!    `exp` has passed (`time.time() > exp`; no refresh on this path).
//! 3. When Hermes holds none: Codex's own `$CODEX_HOME/auth.json` (default `~/.codex`),
//!    `{"tokens":{"id_token","access_token","refresh_token","account_id"},"last_refresh"}`,
//!    used read-only and only if not expired — Hermes' `_import_codex_cli_tokens` rule
//!    (both tokens present, `exp` not passed). We never write Codex's file and never spend
//!    its single-use refresh token.
//!
//! Refresh (`refresh_codex_oauth_pure`): `POST https://auth.openai.com/oauth/token`, form
//! `grant_type=refresh_token&refresh_token=…&client_id=app_EMoamEEZ73f0CkXaXp7hrann`; the new
//! pair is written back to every Hermes record that held the old one (pool entry and
//! singleton), because refresh tokens rotate and the old one is dead afterwards. The
//! refresh runs under Hermes' `auth.lock` with the store re-read inside it
//! ([`auth_store::refresh_locked`]). A profile with no sign-in of its own uses the root's
//! ([`auth_store::path_for`]).
//!
//! Requests then carry `Authorization: Bearer <token>`, `originator: codex_cli_rs`,
//! `User-Agent: codex_cli_rs/0.0.0 (Hermes Agent)` and `ChatGPT-Account-ID` from the JWT's
//! `https://api.openai.com/auth.chatgpt_account_id` claim ([`request_headers`]).
//!
//! Not modelled: pool strategies other than `fill_first`.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::auth::store::{
    self as auth_store, AuthStore, AuthStoreError, PoolEntry, Tokens, jwt_claims, jwt_exp, nonempty,
};

pub const PROVIDER: &str = "openai-codex";
pub const DEFAULT_CODEX_BASE_URL: &str = "https://chatgpt.com/backend-api/codex";
pub const OAUTH_CLIENT_ID: &str = "app_EMoamEEZ73f0CkXaXp7hrann";
pub const OAUTH_TOKEN_URL: &str = "https://auth.openai.com/oauth/token";
/// `CODEX_ACCESS_TOKEN_REFRESH_SKEW_SECONDS`.
pub const REFRESH_SKEW_SECONDS: f64 = 120.0;

#[derive(Debug, thiserror::Error)]
pub enum CodexAuthError {
    /// Hermes' text when no Codex sign-in is usable.
    #[error(
        "No Codex credentials stored. Run `hermes auth` to authenticate (or sign in with `codex login`)."
    )]
    Missing,
    #[error(transparent)]
    Store(#[from] AuthStoreError),
    /// `refresh_codex_oauth_pure`'s messages.
    #[error("{message}")]
    Refresh {
        message: String,
        code: String,
        relogin_required: bool,
    },
}

/// Where a token came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenSource {
    CredentialPool { id: String },
    HermesAuthStore,
    CodexCli,
}

#[derive(Clone, PartialEq)]
pub struct CodexToken {
    pub access_token: String,
    /// `ChatGPT-Account-ID`: the JWT claim, else Codex's `tokens.account_id`.
    pub account_id: Option<String>,
    pub source: TokenSource,
}

/// Never prints the token.
impl std::fmt::Debug for CodexToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CodexToken")
            .field("access_token", &"<redacted>")
            .field("account_id", &self.account_id)
            .field("source", &self.source)
            .finish()
    }
}

#[derive(Debug, Clone, Deserialize, Default)]
struct CodexCliTokens {
    #[serde(default)]
    access_token: Option<String>,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    account_id: Option<String>,
}

/// `$CODEX_HOME/auth.json` (codex-rs `AuthDotJson`; fields we do not use are ignored).
#[derive(Debug, Clone, Deserialize, Default)]
struct CodexCliAuth {
    #[serde(default)]
    tokens: Option<CodexCliTokens>,
}

fn load_store(path: &Path) -> Result<AuthStore, CodexAuthError> {
    auth_store::load(path).map_err(CodexAuthError::from)
}

fn pool_entries(store: &AuthStore) -> Vec<PoolEntry> {
    auth_store::pool_entries(store, PROVIDER)
}

fn singleton_tokens(store: &AuthStore) -> Option<&Tokens> {
    auth_store::singleton_tokens(store, PROVIDER)
}

/// `_normalize_pool_auth_type`: openai-codex tokens that look like JWTs are OAuth.
fn is_oauth(e: &PoolEntry) -> bool {
    e.auth_type() == Some("oauth") || e.token().is_some_and(looks_like_jwt)
}

fn looks_like_jwt(t: &str) -> bool {
    t.split('.').count() == 3
}

/// `_codex_access_token_is_expiring`: no `exp` claim → not expiring.
pub fn is_expiring(token: &str, skew_seconds: f64, now: f64) -> bool {
    jwt_exp(token).is_some_and(|exp| exp <= now + skew_seconds.max(0.0))
}

/// The auxiliary reader's check: a token past its `exp` is unusable.
fn is_expired(token: &str, now: f64) -> bool {
    jwt_exp(token).is_some_and(|exp| exp != 0.0 && now > exp)
}

/// `https://api.openai.com/auth` → `chatgpt_account_id`.
pub fn account_id_from_jwt(token: &str) -> Option<String> {
    jwt_claims(token)
        .openai_auth?
        .chatgpt_account_id
        .filter(|s| !s.is_empty())
}

/// Headers Hermes sends to `chatgpt.com/backend-api/codex` (`_codex_cloudflare_headers` plus
/// the bearer token).
pub fn request_headers(token: &CodexToken) -> Vec<(&'static str, String)> {
    let mut h = vec![
        ("Authorization", format!("Bearer {}", token.access_token)),
        (
            "User-Agent",
            "codex_cli_rs/0.0.0 (Hermes Agent)".to_string(),
        ),
        ("originator", "codex_cli_rs".to_string()),
    ];
    if let Some(a) = &token.account_id {
        h.push(("ChatGPT-Account-ID", a.clone()));
    }
    h
}

fn token(access: &str, fallback_account: Option<&str>, source: TokenSource) -> CodexToken {
    CodexToken {
        access_token: access.to_string(),
        account_id: account_id_from_jwt(access)
            .or_else(|| nonempty(fallback_account).map(str::to_string)),
        source,
    }
}

/// Codex's home as this server sees it (`$CODEX_HOME`, else `~/.codex`).
pub(crate) fn codex_home(ctx: &crate::hermes::Context) -> Option<PathBuf> {
    codex_home_from_env(|n| ctx.env.get(n))
}

/// `$CODEX_HOME`, else `~/.codex`.
pub fn codex_home_from_env(env: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    match env("CODEX_HOME").filter(|s| !s.trim().is_empty()) {
        Some(p) => Some(crate::hermes::home::expand_tilde(Path::new(p.trim()))),
        None => std::env::home_dir().map(|h| h.join(".codex")),
    }
}

fn codex_cli_token(codex_home: Option<&Path>, now: f64) -> Option<CodexToken> {
    let path = codex_home?.join("auth.json");
    let auth: CodexCliAuth =
        serde_json::from_str(&crate::fs::read_to_string_capped(&path, crate::fs::CONFIG_CAP).ok()?)
            .ok()?;
    let t = auth.tokens?;
    let access = nonempty(t.access_token.as_deref())?;
    nonempty(t.refresh_token.as_deref())?;
    if is_expiring(access, 0.0, now) {
        return None;
    }
    Some(token(
        access,
        t.account_id.as_deref(),
        TokenSource::CodexCli,
    ))
}

/// The token without any network call: pool entries that are not expired (an entry inside
/// the 120 s refresh window is still used), then Hermes' singleton, then Codex's file.
pub fn read_token(
    hermes_home: &Path,
    codex_home: Option<&Path>,
    now: f64,
) -> Result<CodexToken, CodexAuthError> {
    let store = load_store(&auth_store::path_for(hermes_home, PROVIDER))?;
    for e in pool_entries(&store) {
        if e.selectable(now) && !e.token().is_some_and(|t| is_expired(t, now)) {
            let id = e.id().to_string();
            return Ok(token(
                e.token().unwrap_or_default(),
                None,
                TokenSource::CredentialPool { id },
            ));
        }
    }
    if let Some(t) = hermes_singleton(&store, now) {
        return Ok(t);
    }
    codex_cli_token(codex_home, now).ok_or(CodexAuthError::Missing)
}

fn hermes_singleton(store: &AuthStore, now: f64) -> Option<CodexToken> {
    let access = nonempty(singleton_tokens(store)?.access_token())?;
    (!is_expired(access, now)).then(|| token(access, None, TokenSource::HermesAuthStore))
}

/// What the token endpoint returned.
#[derive(Clone, PartialEq)]
pub struct Refreshed {
    pub access_token: String,
    pub refresh_token: String,
}

/// Never prints the tokens.
impl std::fmt::Debug for Refreshed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Refreshed { <redacted> }")
    }
}

#[derive(Deserialize)]
struct RefreshResponse {
    #[serde(default)]
    access_token: Option<String>,
    #[serde(default)]
    refresh_token: Option<String>,
}

fn refresh_error(message: String, code: &str, relogin_required: bool) -> CodexAuthError {
    CodexAuthError::Refresh {
        message,
        code: code.to_string(),
        relogin_required,
    }
}

/// `refresh_codex_oauth_pure`: one form POST, Hermes' error classification and texts.
pub async fn refresh_oauth(
    http: &reqwest::Client,
    token_url: &str,
    refresh_token: &str,
) -> Result<Refreshed, CodexAuthError> {
    let refresh_token = refresh_token.trim();
    if refresh_token.is_empty() {
        return Err(refresh_error(
            "Codex auth is missing refresh_token. Run `hermes auth` to re-authenticate.".into(),
            "codex_auth_missing_refresh_token",
            true,
        ));
    }
    // Built before the request so the (non-Send) serializer is not held across an await.
    let form = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("grant_type", "refresh_token")
        .append_pair("refresh_token", refresh_token)
        .append_pair("client_id", OAUTH_CLIENT_ID)
        .finish();
    let resp = http
        .post(token_url)
        .header("Accept", "application/json")
        .header("User-Agent", "hermes-cli/0.19.0")
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(form)
        .timeout(crate::hermes::deadlines::TOKEN_REFRESH.get())
        .send()
        .await
        .map_err(|e| {
            refresh_error(
                format!("Codex token refresh failed: {e}"),
                "codex_refresh_failed",
                false,
            )
        })?;
    let status = resp.status().as_u16();
    let retry_after = resp
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let body = resp.bytes().await.unwrap_or_default();
    if status != 200 {
        return Err(refresh_failure(status, retry_after, &body));
    }
    let parsed: RefreshResponse = serde_json::from_slice(&body).map_err(|_| {
        refresh_error(
            "Codex token refresh returned invalid JSON.".into(),
            "codex_refresh_invalid_json",
            true,
        )
    })?;
    let access = nonempty(parsed.access_token.as_deref()).ok_or_else(|| {
        refresh_error(
            "Codex token refresh response was missing access_token.".into(),
            "codex_refresh_missing_access_token",
            true,
        )
    })?;
    Ok(Refreshed {
        access_token: access.to_string(),
        refresh_token: nonempty(parsed.refresh_token.as_deref())
            .unwrap_or(refresh_token)
            .to_string(),
    })
}

/// `refresh_codex_oauth_pure`'s error for a non-200 answer: a 429 keeps the
/// sign-in (quota, not credentials); otherwise the OAuth error's code and
/// text, and whether only a new sign-in can help.
fn refresh_failure(status: u16, retry_after: Option<u64>, body: &[u8]) -> CodexAuthError {
    if status == 429 {
        let message = match retry_after {
            Some(s) => format!(
                "Codex provider quota exhausted (429); retry after {s}s. Credentials are still valid."
            ),
            None => "Codex provider quota exhausted (429). Credentials are still valid; retry after the usage limit resets.".into(),
        };
        return refresh_error(message, "codex_rate_limited", false);
    }
    let mut code = "codex_refresh_failed".to_string();
    let mut message = format!("Codex token refresh failed with status {status}.");
    if let Ok(Value::Object(err)) = serde_json::from_slice::<Value>(body) {
        match err.get("error") {
            Some(Value::Object(o)) => {
                if let Some(c) = nonempty(o.get("code").or(o.get("type")).and_then(Value::as_str)) {
                    code = c.to_string();
                }
                if let Some(m) = nonempty(o.get("message").and_then(Value::as_str)) {
                    message = format!("Codex token refresh failed: {m}");
                }
            }
            Some(Value::String(c)) if !c.trim().is_empty() => {
                code = c.trim().to_string();
                let desc = err
                    .get("error_description")
                    .or(err.get("message"))
                    .and_then(Value::as_str);
                if let Some(d) = nonempty(desc) {
                    message = format!("Codex token refresh failed: {d}");
                }
            }
            _ => {}
        }
    }
    let mut relogin = matches!(
        code.as_str(),
        "invalid_grant" | "invalid_token" | "invalid_request"
    );
    if code == "refresh_token_reused" {
        message = "Codex refresh token was already consumed by another client (e.g. Codex CLI or VS Code extension). Run `codex` in your terminal to generate fresh tokens, then run `hermes auth` to re-authenticate.".into();
        relogin = true;
    }
    relogin |= status == 401 || status == 403;
    refresh_error(message, &code, relogin)
}

/// Like [`read_token`], but a pool entry inside the 120 s window is refreshed first (and
/// skipped when that fails), as Hermes' pool selection does. `token_url` is
/// [`OAUTH_TOKEN_URL`] outside tests.
pub async fn resolve_token(
    http: &reqwest::Client,
    token_url: &str,
    hermes_home: &Path,
    codex_home: Option<&Path>,
    now: f64,
) -> Result<CodexToken, CodexAuthError> {
    let path = auth_store::path_for(hermes_home, PROVIDER);
    let store = load_store(&path)?;
    // Why an entry needing a refresh was skipped because of Hermes' lock:
    // told instead of "no credentials" when nothing else is usable.
    let mut locked = None;
    for e in pool_entries(&store) {
        if !e.selectable(now) {
            continue;
        }
        let access = e.token().unwrap_or_default().to_string();
        if is_oauth(&e) && is_expiring(&access, REFRESH_SKEW_SECONDS, now) {
            if nonempty(e.refresh_token()).is_none() {
                continue;
            }
            match refresh_and_store(http, token_url, &path, &access).await {
                Ok(Some(new)) => {
                    return Ok(token(
                        &new,
                        None,
                        TokenSource::CredentialPool {
                            id: e.id().to_string(),
                        },
                    ));
                }
                // Rotated by another process meanwhile: read what it stored.
                Ok(None) => return read_token(hermes_home, codex_home, now),
                Err(CodexAuthError::Store(err @ AuthStoreError::Locked(_))) => {
                    tracing::warn!("codex pool entry {} not refreshed: {err}", e.id());
                    locked.get_or_insert(err);
                    continue;
                }
                Err(err) => {
                    tracing::debug!("codex pool entry {} refresh failed: {err}", e.id());
                    continue;
                }
            }
        }
        return Ok(token(
            &access,
            None,
            TokenSource::CredentialPool {
                id: e.id().to_string(),
            },
        ));
    }
    if let Some(t) = hermes_singleton(&store, now) {
        return Ok(t);
    }
    codex_cli_token(codex_home, now).ok_or(match locked {
        Some(err) => CodexAuthError::Store(err),
        None => CodexAuthError::Missing,
    })
}

/// Whether a sign-in is there at all, without any network call (for `tools/list` and
/// provider selection): [`read_token`] finds one, or a Hermes pool entry has an expired
/// OAuth token with a refresh token ([`resolve_token`] would refresh it, as Hermes' pool does).
pub fn sign_in_source(
    hermes_home: &Path,
    codex_home: Option<&Path>,
    now: f64,
) -> Option<TokenSource> {
    if let Ok(t) = read_token(hermes_home, codex_home, now) {
        return Some(t.source);
    }
    let store = load_store(&auth_store::path_for(hermes_home, PROVIDER)).ok()?;
    pool_entries(&store)
        .into_iter()
        .find(|e| e.selectable(now) && is_oauth(e) && nonempty(e.refresh_token()).is_some())
        .map(|e| TokenSource::CredentialPool {
            id: e.id().to_string(),
        })
}

/// The endpoint answered HTTP 401 to `stale`: refresh the Hermes record that holds it (pool
/// entry, else the singleton), store the rotated pair, and return the new token. Beyond Hermes'
/// image plugin (which gives up), this is what Hermes' runtime does on a 401. Codex's own
/// `auth.json` is never refreshed here: its refresh token is single-use and belongs to Codex.
pub async fn refresh_rejected(
    http: &reqwest::Client,
    token_url: &str,
    hermes_home: &Path,
    stale: &CodexToken,
    now: f64,
) -> Result<CodexToken, CodexAuthError> {
    if stale.source == TokenSource::CodexCli {
        return Err(refresh_error(
            "The ChatGPT sign-in in Codex's auth.json was rejected (HTTP 401). Run `codex login` (or `hermes auth codex`) to sign in again.".into(),
            "codex_cli_token_rejected",
            true,
        ));
    }
    let path = auth_store::path_for(hermes_home, PROVIDER);
    match refresh_and_store(http, token_url, &path, &stale.access_token).await? {
        Some(new) => Ok(token(
            &new,
            stale.account_id.as_deref(),
            stale.source.clone(),
        )),
        // Another process rotated it already: its token is the fresh one.
        None => read_token(hermes_home, None, now),
    }
}

/// Refresh the record holding `old_access` and store the rotated pair, under
/// Hermes' lock and detached from the caller ([`auth_store::refresh_locked`]);
/// `None` when another process rotated it first. A record without a refresh
/// token gets Hermes' "missing refresh_token" error.
async fn refresh_and_store(
    http: &reqwest::Client,
    token_url: &str,
    path: &Path,
    old_access: &str,
) -> Result<Option<String>, CodexAuthError> {
    let (http, url) = (http.clone(), token_url.to_string());
    auth_store::refresh_locked(
        path.to_path_buf(),
        PROVIDER,
        old_access.to_string(),
        move |rt| async move {
            refresh_oauth(&http, &url, &rt)
                .await
                .map(|r| (r.access_token, r.refresh_token))
        },
    )
    .await
}
