//! Hermes' auth store, `$HERMES_HOME/auth.json` (hermes-agent:
//! hermes_cli/auth.py `_load_auth_store`/`_save_auth_store`,
//! agent/credential_pool.py): the sign-ins Hermes keeps for OAuth providers
//! (`openai-codex`, `xai-oauth`, `nous`, …) as a singleton per provider
//! (`providers.<id>`) and as credential-pool entries (`credential_pool.<id>`).
//!
//! One reader for every toolset that uses a Hermes sign-in, so the pool rules
//! (priority order, `dead`/`exhausted` entries, timestamps in three formats)
//! and the write rules (Hermes' `auth.lock`, atomic replace, mode 0600) exist
//! once. Reading never fails on a damaged store: like Hermes, a store that is
//! not a JSON object reads as empty.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde::Deserialize;
use serde_json::Value;

pub use crate::auth::authjson::{AuthStore, PoolEntry, ProviderState, Tokens};

/// Hermes' `AUTH_STORE_VERSION`.
const VERSION: i64 = 1;
/// `exhausted` cooldowns (`EXHAUSTED_TTL_401_SECONDS`, `EXHAUSTED_TTL_DEFAULT_SECONDS`).
const TTL_401: f64 = 5.0 * 60.0;
const TTL_DEFAULT: f64 = 60.0 * 60.0;

#[derive(Debug, thiserror::Error)]
pub enum AuthStoreError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: crate::fs::FileError,
    },
    #[error("cannot update {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Hermes' `auth.lock` is held by another process (or cannot be opened).
    #[error(transparent)]
    Locked(#[from] crate::auth::lock::LockError),
    /// Shutdown began before the refresh token was spent.
    #[error(transparent)]
    ShuttingDown(#[from] crate::auth::refreshes::ShuttingDown),
}

/// The task that spends a refresh token ended without an answer (it
/// panicked or was cancelled).
#[derive(Debug, thiserror::Error)]
#[error("refresh task failed: {0}")]
pub struct RefreshTaskFailed(#[source] tokio::task::JoinError);

/// `$HERMES_HOME/auth.json`.
pub fn path(hermes_home: &Path) -> PathBuf {
    hermes_home.join("auth.json")
}

/// The `auth.json` that holds `provider`'s sign-in for this home: its own
/// when it has a `providers.<id>` record or `credential_pool.<id>` entries,
/// else — in profile mode (`<root>/profiles/<name>`) — the root's when that
/// has one (hermes_cli/auth.py `_load_provider_state_with_source`: workers in
/// a profile see providers signed in at the root). Reads and the write-back
/// of a refreshed token both go to this file, so a rotated single-use
/// refresh token lands where it came from.
pub fn path_for(hermes_home: &Path, provider: &str) -> PathBuf {
    super::snapshot::path(hermes_home, provider, || {
        resolve_path_for(hermes_home, provider)
    })
}

fn resolve_path_for(hermes_home: &Path, provider: &str) -> PathBuf {
    let own = path(hermes_home);
    let holds = |p: &Path| {
        load(p).ok().is_some_and(|s| {
            s.provider(provider).is_some() || s.pool(provider).is_some_and(|a| !a.is_empty())
        })
    };
    if holds(&own) {
        return own;
    }
    let root = crate::hermes::HermesHome {
        path: hermes_home.to_path_buf(),
        explicit: true,
    }
    .root();
    // Not in profile mode (the root is the home itself, as written or once resolved).
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    if root == hermes_home || canon(&root) == canon(hermes_home) {
        return own;
    }
    let global = path(&root);
    if holds(&global) { global } else { own }
}

/// The store, or an empty one when missing or not a JSON object (as Hermes).
/// Within a resolve pass ([`crate::hermes::pass`]), read once.
pub fn load(path: &Path) -> Result<AuthStore, AuthStoreError> {
    super::snapshot::store(path, || read(path))
}

/// [`load`] from the file even inside a pass: for the read under Hermes'
/// `auth.lock` before a write, where another process may just have rotated
/// a single-use refresh token (a kept copy written back would undo that).
pub fn load_fresh(path: &Path) -> Result<AuthStore, AuthStoreError> {
    read(path)
}

fn read(path: &Path) -> Result<AuthStore, AuthStoreError> {
    match crate::fs::read_to_string_capped(path, crate::fs::CONFIG_CAP) {
        Ok(s) => Ok(serde_json::from_str::<Value>(&s)
            .map(AuthStore::from_value)
            .unwrap_or_default()),
        Err(e) if e.is_not_found() => Ok(AuthStore::default()),
        Err(e) => Err(AuthStoreError::Read {
            path: path.to_path_buf(),
            source: e,
        }),
    }
}

/// `providers.<provider>` when it is an object.
pub fn provider_state<'a>(store: &'a AuthStore, provider: &str) -> Option<&'a ProviderState> {
    store.provider(provider)
}

/// The pool's well-formed entries for `provider` ([`PoolEntry::well_formed`]),
/// by `priority` (Hermes' `fill_first`).
pub fn pool_entries(store: &AuthStore, provider: &str) -> Vec<PoolEntry> {
    let mut v: Vec<PoolEntry> = store
        .pool(provider)
        .unwrap_or_default()
        .iter()
        .filter_map(crate::lenient::Kept::typed)
        .filter(|e| e.well_formed())
        .cloned()
        .collect();
    v.sort_by_key(PoolEntry::priority);
    v
}

impl PoolEntry {
    pub fn token(&self) -> Option<&str> {
        nonempty(self.access_token())
    }

    pub fn refresh(&self) -> Option<&str> {
        nonempty(self.refresh_token())
    }

    /// `_available_entries` before any refresh: a token, not `dead`, and not
    /// `exhausted` inside its cooldown (`last_error_reset_at`, else
    /// `last_status_at` + 5 min after a 401 / 1 h otherwise).
    pub fn selectable(&self, now: f64) -> bool {
        self.token().is_some() && self.status_ok(now)
    }

    /// Not `dead`, and not `exhausted` inside its cooldown (whatever the token).
    pub fn status_ok(&self, now: f64) -> bool {
        match self.last_status() {
            Some("dead") => false,
            Some("exhausted") => {
                let until = self.last_error_reset_at().and_then(timestamp).or_else(|| {
                    let at = self.last_status_at().and_then(timestamp)?;
                    let ttl = if self.last_error_code() == Some(401) {
                        TTL_401
                    } else {
                        TTL_DEFAULT
                    };
                    Some(at + ttl)
                });
                until.is_none_or(|u| now >= u)
            }
            _ => true,
        }
    }
}

pub fn nonempty(s: Option<&str>) -> Option<&str> {
    s.map(str::trim).filter(|s| !s.is_empty())
}

pub use crate::time::now;

/// A timestamp as Hermes' `_parse_absolute_timestamp` takes it (epoch s/ms or ISO 8601).
pub fn timestamp(v: &Value) -> Option<f64> {
    let n = match v {
        Value::Number(n) => n.as_f64()?,
        Value::String(s) => match s.trim().parse::<f64>() {
            Ok(n) => n,
            Err(_) => return iso8601(s.trim()),
        },
        _ => return None,
    };
    (n > 0.0).then(|| if n > 1e12 { n / 1000.0 } else { n })
}

pub use crate::time::{fromisoformat as iso8601, utc_isoformat as iso_utc};

/// `datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")` (to the second).
pub fn now_iso(now: f64) -> String {
    crate::time::utc_iso_z(now)
}

/// The JWT claims hermes-mcp reads, each as tolerant as Hermes' `claims.get(...)`:
/// a claim of another type reads as absent (hermes_cli/auth.py
/// `_decode_jwt_claims` and its callers).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct JwtClaims {
    /// `exp`, as sent: Hermes' readers disagree on numeric text (see [`Numeric`]).
    #[serde(deserialize_with = "crate::lenient::opt")]
    pub exp: Option<Numeric>,
    /// ChatGPT's `https://api.openai.com/auth` object (Codex sign-ins).
    #[serde(
        rename = "https://api.openai.com/auth",
        deserialize_with = "crate::lenient::obj"
    )]
    pub openai_auth: Option<OpenAiAuth>,
    /// The Nous Portal's `paid_access` (a JSON bool only, as the gate reads it).
    #[serde(deserialize_with = "crate::lenient::opt")]
    pub paid_access: Option<bool>,
    /// The Nous Portal's `tool_access` object.
    #[serde(deserialize_with = "crate::lenient::obj")]
    pub tool_access: Option<ToolAccess>,
}

/// A numeric field as sent: a JSON number, or text (anything else reads as
/// absent); Hermes reads numeric text in some places, not in others.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Numeric {
    Number(f64),
    Text(String),
}

impl Numeric {
    /// A JSON number only (the Codex and xAI expiry checks).
    pub fn number(&self) -> Option<f64> {
        match self {
            Numeric::Number(n) => Some(*n),
            Numeric::Text(_) => None,
        }
    }

    /// A number, or text that reads as one (Hermes' `_coerce_float`).
    pub fn coerce(&self) -> Option<f64> {
        match self {
            Numeric::Number(n) => Some(*n),
            Numeric::Text(s) => s.trim().parse().ok(),
        }
    }
}

/// `https://api.openai.com/auth` in a ChatGPT token.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct OpenAiAuth {
    #[serde(deserialize_with = "crate::lenient::string")]
    pub chatgpt_account_id: Option<String>,
}

/// `tool_access` in a Nous Portal token (and in the portal's account answer).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ToolAccess {
    #[serde(deserialize_with = "crate::lenient::opt")]
    pub enabled: Option<bool>,
}

/// `_decode_jwt_claims`: the payload of a three-part token, else no claims.
pub fn jwt_claims(token: &str) -> JwtClaims {
    if token.matches('.').count() != 2 {
        return JwtClaims::default();
    }
    let payload = token.split('.').nth(1).unwrap_or("").trim_end_matches('=');
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .ok()
        .and_then(|b| crate::lenient::from_slice(&b))
        .unwrap_or_default()
}

/// The JWT's numeric `exp` claim.
pub fn jwt_exp(token: &str) -> Option<f64> {
    jwt_claims(token).exp?.number()
}

/// A rotated OAuth pair to store in place of `old_access`.
#[derive(Clone, PartialEq)]
pub struct Rotated<'a> {
    pub provider: &'a str,
    pub old_access: &'a str,
    pub access_token: &'a str,
    pub refresh_token: &'a str,
    pub now: f64,
}

/// Never prints the tokens.
impl std::fmt::Debug for Rotated<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rotated")
            .field("provider", &self.provider)
            .finish_non_exhaustive()
    }
}

/// Put a rotated pair into every record of `store` holding `old_access`
/// (pool entries and the `providers.<id>.tokens` singleton), keeping every
/// other field. `false` when no record held it (someone rotated it first).
pub fn rotate(store: &mut AuthStore, r: &Rotated<'_>) -> bool {
    use crate::lenient::Kept;
    let stamp = now_iso(r.now);
    let mut changed = false;
    if let Some(entries) = store.pool_mut(r.provider) {
        for e in entries.iter_mut().filter_map(Kept::typed_mut) {
            if e.access_token() == Some(r.old_access) {
                e.set_rotated(r.access_token, r.refresh_token, &stamp);
                changed = true;
            }
        }
    }
    if let Some(state) = store.provider_mut(r.provider)
        && let Some(t) = state.tokens.as_mut().and_then(Kept::typed_mut)
        && t.access_token() == Some(r.old_access)
    {
        t.access_token = Some(Kept::Typed(r.access_token.to_string()));
        t.refresh_token = Some(Kept::Typed(r.refresh_token.to_string()));
        state.last_refresh = Some(Kept::Typed(stamp));
        changed = true;
    }
    changed
}

/// Whether a record (pool entry or singleton) of `provider` holds `access`.
pub fn holds(store: &AuthStore, provider: &str, access: &str) -> bool {
    pool_entries(store, provider)
        .iter()
        .any(|e| e.token() == Some(access))
        || singleton_tokens(store, provider)
            .and_then(Tokens::access_token)
            .is_some_and(|a| a.trim() == access)
}

/// `providers.<provider>.tokens` when it is an object.
pub fn singleton_tokens<'a>(store: &'a AuthStore, provider: &str) -> Option<&'a Tokens> {
    store.provider(provider)?.tokens()
}

/// The refresh token of the record (pool entry, else singleton) of
/// `provider` whose access token is `access`, if one still holds it.
pub fn refresh_token_of(store: &AuthStore, provider: &str, access: &str) -> Option<String> {
    let from_pool = pool_entries(store, provider)
        .into_iter()
        .find(|e| e.token() == Some(access))
        .and_then(|e| e.refresh().map(str::to_string));
    from_pool.or_else(|| {
        let t = singleton_tokens(store, provider)?;
        (t.access_token()? == access).then(|| nonempty(t.refresh_token()).map(str::to_string))?
    })
}

/// Spend a refresh token and store what it bought, as one unit that the
/// caller cannot interrupt halfway: Hermes' `auth.lock` is taken first (off
/// the async workers), the store re-read inside it, and `refresh` (the token
/// endpoint call) runs only if a record still holds `old_access` — when
/// another process rotated it meanwhile, nothing is spent and `Ok(None)` says
/// "read again". The work runs as its own task
/// ([`crate::auth::refreshes::detached`]): if the caller is cancelled or
/// times out after the POST, the rotated pair is still written, so a
/// single-use refresh token is never spent without its successor being kept;
/// and shutdown waits for it ([`crate::auth::refreshes::begin`]).
pub async fn refresh_locked<F, Fut, E>(
    path: PathBuf,
    provider: &'static str,
    old_access: String,
    refresh: F,
) -> Result<Option<String>, E>
where
    F: FnOnce(String) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Result<(String, String), E>> + Send,
    E: From<AuthStoreError> + Send + 'static,
{
    let task = crate::auth::refreshes::detached(async move {
        let lock_path = path.clone();
        let lock = tokio::task::spawn_blocking(move || lock(&lock_path))
            .await
            .map_err(|e| AuthStoreError::Write {
                path: path.clone(),
                source: Box::new(e),
            })??;
        let mut store = load_fresh(&path)?;
        if !holds(&store, provider, &old_access) {
            return Ok(None);
        }
        // An empty one gets the provider's own "missing refresh_token" error.
        let rt = refresh_token_of(&store, provider, &old_access).unwrap_or_default();
        let spending = crate::auth::refreshes::begin().map_err(AuthStoreError::from)?;
        let (access, refresh_token) = refresh(rt).await?;
        rotate(
            &mut store,
            &Rotated {
                provider,
                old_access: &old_access,
                access_token: &access,
                refresh_token: &refresh_token,
                now: now(),
            },
        );
        write_store(&path, store)?;
        drop((lock, spending));
        Ok(Some(access))
    });
    match task.await {
        Ok(r) => r,
        Err(e) => Err(E::from(AuthStoreError::Write {
            path: PathBuf::new(),
            source: Box::new(RefreshTaskFailed(e)),
        })),
    }
}

/// Hermes' lock on its auth store (`auth.lock` beside `auth.json`,
/// hermes_cli/auth.py `_auth_lock_path`), waited for up to [`AUTH_LOCK_WAIT`](crate::hermes::deadlines::AUTH_LOCK_WAIT)
/// ([`crate::auth::lock::take`]).
pub fn lock(path: &Path) -> Result<crate::fs::Flock, AuthStoreError> {
    Ok(crate::auth::lock::take(
        &path.with_extension("lock"),
        crate::hermes::deadlines::AUTH_LOCK_WAIT.get(),
    )?)
}

/// Write the store as Hermes' `_save_auth_store` does (2-space JSON,
/// `version` and `updated_at` stamped, atomic replace, mode 0600). The
/// caller holds [`lock`].
pub fn write_store(path: &Path, mut store: AuthStore) -> Result<(), AuthStoreError> {
    super::snapshot::forget(path);
    let werr = |e: Box<dyn std::error::Error + Send + Sync>| AuthStoreError::Write {
        path: path.to_path_buf(),
        source: e,
    };
    // Hermes keeps a damaged store as `auth.json.corrupt` before replacing
    // it (`_load_auth_store`); so do we.
    if let Ok(Some(old)) = crate::fs::read_capped_opt(path, crate::fs::CONFIG_CAP)
        && !old.iter().all(u8::is_ascii_whitespace)
        && !matches!(serde_json::from_slice::<Value>(&old), Ok(Value::Object(_)))
    {
        let _ = crate::fs::atomic_write(&path.with_extension("json.corrupt"), &old);
    }
    store.stamp(VERSION, iso_utc(now()));
    let text = store
        .to_value()
        .and_then(|v| serde_json::to_string_pretty(&v))
        .map_err(|e| werr(e.into()))?
        + "\n";
    crate::fs::atomic_write(path, text.as_bytes()).map_err(|e| werr(e.into()))?;
    // Hermes writes its store 0600 whatever it was before: it holds tokens.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        crate::fs::real_target(path),
        std::fs::Permissions::from_mode(0o600),
    )
    .map_err(|e| werr(e.into()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_parse_like_hermes() {
        assert_eq!(
            timestamp(&Value::from(1_700_000_000_000i64)),
            Some(1_700_000_000.0)
        );
        assert_eq!(
            timestamp(&Value::from("2023-11-14T22:13:20Z")),
            Some(1_700_000_000.0)
        );
        assert_eq!(
            timestamp(&Value::from("2023-11-14T23:13:20+01:00")),
            Some(1_700_000_000.0)
        );
        assert_eq!(now_iso(1_700_000_000.5), "2023-11-14T22:13:20Z");
        assert_eq!(iso8601("1970-01-01T01:00:00+01:00"), Some(0.0));
        assert_eq!(iso8601("2000-03-01T00:00:00.5Z"), Some(951_868_800.5));
        assert_eq!(iso8601("2000-03-01 00:00:00"), Some(951_868_800.0));
        assert_eq!(iso8601("soon"), None);
        assert_eq!(iso8601("2000-13-01T00:00:00Z"), None);
        assert_eq!(iso_utc(951_868_800.0), "2000-03-01T00:00:00+00:00");
        assert_eq!(iso_utc(951_868_800.25), "2000-03-01T00:00:00.250000+00:00");
        assert_eq!(iso8601(&iso_utc(1_800_000_000.5)), Some(1_800_000_000.5));
    }

    #[test]
    fn jwt_claims_need_three_parts() {
        use base64::Engine as _;
        let p = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(br#"{"exp":5}"#);
        assert_eq!(
            jwt_claims(&format!("h.{p}.s")).exp,
            Some(Numeric::Number(5.0))
        );
        assert_eq!(jwt_claims("opaque"), JwtClaims::default());
        assert_eq!(jwt_claims(&format!("h.{p}.s.x")), JwtClaims::default());
    }

    #[test]
    fn jwt_claims_of_another_type_read_as_absent() {
        use base64::Engine as _;
        let jwt = |claims: &str| {
            let p = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(claims);
            format!("h.{p}.s")
        };
        let c = jwt_claims(&jwt(
            r#"{"exp":" 7 ","paid_access":"yes","tool_access":{"enabled":true},
                "https://api.openai.com/auth":{"chatgpt_account_id":7}}"#,
        ));
        let exp = c.exp.expect("exp");
        assert_eq!((exp.number(), exp.coerce()), (None, Some(7.0)));
        assert_eq!(c.paid_access, None);
        assert_eq!(c.tool_access.and_then(|t| t.enabled), Some(true));
        assert_eq!(c.openai_auth, Some(OpenAiAuth::default()));
        let c = jwt_claims(&jwt(
            r#"{"exp":true,"tool_access":[true],"paid_access":false}"#,
        ));
        assert_eq!(
            (c.exp, c.tool_access, c.paid_access),
            (None, None, Some(false))
        );
        assert_eq!(jwt_claims(&jwt("[1,2]")), JwtClaims::default());
        assert_eq!(jwt_exp(&jwt(r#"{"exp":1.5e9}"#)), Some(1.5e9));
    }

    #[test]
    fn a_profile_falls_back_to_the_root_store() {
        let d = tempfile::tempdir().expect("tempdir");
        let root = d.path().join("data");
        let profile = root.join("profiles/p");
        std::fs::create_dir_all(&profile).expect("mkdir");
        let signed_in = r#"{"providers":{"xai-oauth":{"tokens":{"access_token":"a"}}}}"#;
        std::fs::write(root.join("auth.json"), signed_in).expect("write");
        assert_eq!(path_for(&profile, "xai-oauth"), root.join("auth.json"));
        // Another provider, not at the root either: the profile's own file.
        assert_eq!(path_for(&profile, "nous"), profile.join("auth.json"));
        std::fs::write(
            profile.join("auth.json"),
            r#"{"credential_pool":{"xai-oauth":[{"access_token":"p"}]}}"#,
        )
        .expect("write");
        assert_eq!(path_for(&profile, "xai-oauth"), profile.join("auth.json"));
        // Not a profile: always its own.
        assert_eq!(path_for(&root, "nous"), root.join("auth.json"));
    }

    #[tokio::test]
    async fn a_refresh_token_is_spent_only_while_a_record_holds_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("auth.json");
        std::fs::write(
            &p,
            r#"{"providers":{"x":{"tokens":{"access_token":"old","refresh_token":"rt-1"}}}}"#,
        )
        .expect("write");
        let spent = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let call = |old: &str| {
            let spent = spent.clone();
            refresh_locked(
                p.clone(),
                "x",
                old.to_string(),
                move |rt: String| async move {
                    spent.lock().expect("lock").push(rt);
                    Ok::<_, AuthStoreError>(("new".to_string(), "rt-2".to_string()))
                },
            )
        };
        assert_eq!(call("old").await.expect("refresh"), Some("new".into()));
        let before = std::fs::metadata(&p)
            .expect("meta")
            .modified()
            .expect("mtime");
        std::thread::sleep(std::time::Duration::from_millis(20));
        // The same stale token again (another caller raced us): nothing is
        // spent, and the store is not rewritten.
        assert_eq!(call("old").await.expect("no refresh"), None);
        assert_eq!(
            std::fs::metadata(&p)
                .expect("meta")
                .modified()
                .expect("mtime"),
            before
        );
        assert_eq!(*spent.lock().expect("lock"), ["rt-1"]);
        let v: Value =
            serde_json::from_str(&std::fs::read_to_string(&p).expect("read")).expect("json");
        assert_eq!(v["providers"]["x"]["tokens"]["refresh_token"], "rt-2");
    }

    #[test]
    fn rotation_keeps_other_fields_and_mode() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("auth.json");
        std::fs::write(
            &p,
            r#"{"providers":{"x":{"tokens":{"access_token":"old","refresh_token":"r","id_token":"i"},"keep":1}},
               "credential_pool":{"x":[{"id":"a","access_token":"old","label":"L"},{"id":"b","access_token":"other"}]}}"#,
        )
        .expect("write");
        let mut store = load(&p).expect("load");
        assert!(rotate(
            &mut store,
            &Rotated {
                provider: "x",
                old_access: "old",
                access_token: "new",
                refresh_token: "r2",
                now: 1_700_000_000.0,
            },
        ));
        write_store(&p, store).expect("write");
        let v: Value =
            serde_json::from_str(&std::fs::read_to_string(&p).expect("read")).expect("json");
        assert_eq!(v["providers"]["x"]["tokens"]["access_token"], "new");
        assert_eq!(v["providers"]["x"]["tokens"]["id_token"], "i");
        assert_eq!(v["providers"]["x"]["keep"], 1);
        assert_eq!(v["credential_pool"]["x"][0]["refresh_token"], "r2");
        assert_eq!(v["credential_pool"]["x"][0]["label"], "L");
        assert_eq!(v["credential_pool"]["x"][1]["access_token"], "other");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&p).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
}
