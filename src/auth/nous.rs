//! Hermes' Nous Portal login as `$HERMES_HOME/auth.json` stores it: one reader
//! for everything that uses it (the auxiliary model's `nous` provider, the Nous
//! tool gateway in [`crate::gateway`]), and the write-back after a token refresh.
//!
//! hermes-agent: hermes_cli/auth.py (`_load_auth_store`, `providers.nous`,
//! `credential_pool.nous`, `_parse_iso_timestamp`, `_decode_jwt_claims`,
//! `_save_auth_store`, `_auth_store_lock` = flock on `auth.lock`).
//!
//! The cross-profile shared store (`<root>/shared/nous_auth.json`, or
//! `$HERMES_SHARED_AUTH_DIR/nous_auth.json`; hermes_cli/auth.py
//! `_merge_shared_nous_oauth_state`, `_write_shared_nous_state`) is merged
//! before a refresh and rewritten after one: Nous refresh tokens are
//! single-use, and a profile that merged a stale shared token would spend a
//! dead one. A profile with no Nous login of its own reads the root's
//! `auth.json` ([`auth_store::path_for`]).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::auth::store as auth_store;
use crate::auth::store::AuthStoreError;
pub(crate) use crate::auth::store::{iso_utc, jwt_claims, now};
use crate::hermes::HermesHome;

/// Python's `datetime.fromisoformat` on Hermes' timestamps, as epoch seconds.
pub(crate) fn iso_ts(s: &str) -> Option<f64> {
    auth_store::iso8601(s)
}

/// The `auth.json` holding the Nous login: the profile's, else the root's
/// ([`auth_store::path_for`]).
pub(crate) fn auth_path(home: &HermesHome) -> PathBuf {
    auth_store::path_for(&home.path, "nous")
}

/// The whole store as a JSON object, or `None` when missing or unreadable.
pub(crate) fn load_store(home: &HermesHome) -> Option<Map<String, Value>> {
    auth_store::load(&auth_path(home))
        .ok()
        .filter(|s| !s.is_empty())
        .and_then(|s| as_map(&s).ok())
}

/// The typed store as the JSON object it is written as: the Nous login is
/// read and edited as Hermes keeps it, one object of Portal fields.
fn as_map(store: &auth_store::AuthStore) -> Result<Map<String, Value>, serde_json::Error> {
    Ok(match store.to_value()? {
        Value::Object(m) => m,
        _ => Map::new(),
    })
}

/// `providers.nous` (Hermes' `get_provider_auth_state("nous")`).
pub(crate) fn provider_state(store: &Map<String, Value>) -> Option<&Map<String, Value>> {
    store.get("providers")?.get("nous")?.as_object()
}

/// `credential_pool.nous` entries (objects only).
pub(crate) fn pool_entries(store: &Map<String, Value>) -> Vec<&Map<String, Value>> {
    store
        .get("credential_pool")
        .and_then(|p| p.get("nous"))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_object).collect())
        .unwrap_or_default()
}

/// A non-empty trimmed string field.
pub(crate) fn text<'a>(m: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    m.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// Hermes' `_is_expiring(expires_at, skew)`: an unparseable or missing
/// expiry counts as expiring.
pub(crate) fn is_expiring(expires_at: Option<&Value>, skew_seconds: f64) -> bool {
    match expires_at.and_then(Value::as_str).and_then(iso_ts) {
        Some(t) => t <= now() + skew_seconds.max(0.0),
        None => true,
    }
}

/// An expiry (ISO-8601 text or epoch seconds) in the past; a missing or
/// unparseable one is not (the auxiliary client's reading).
pub(crate) fn expired(exp: Option<&Value>) -> bool {
    let now = now();
    match exp {
        Some(Value::Number(n)) => n.as_f64().is_some_and(|t| t < now),
        Some(Value::String(s)) => iso_ts(s).is_some_and(|t| t < now),
        _ => false,
    }
}

/// Why [`StoreLock`] could not be taken (the file, and its holder when known).
pub(crate) use crate::auth::lock::LockError;

/// Why the shared Nous store could not be rewritten (logged, never returned:
/// Hermes' write is best effort).
#[derive(Debug, thiserror::Error)]
enum SharedWriteError {
    #[error(transparent)]
    Encode(#[from] serde_json::Error),
    #[error(transparent)]
    Write(#[from] crate::fs::FileError),
}

/// Hermes' cross-process locks (`flock` on `auth.lock` beside `auth.json`,
/// then on `nous_auth.lock` beside the shared store), held while a refresh
/// reads, spends and rewrites the token.
pub(crate) struct StoreLock {
    _lock: crate::fs::Flock,
}

impl StoreLock {
    /// Wait (up to `timeout`) for the auth store's exclusive lock.
    pub(crate) fn acquire(
        home: &HermesHome,
        timeout: std::time::Duration,
    ) -> Result<Self, LockError> {
        Self::acquire_path(&auth_path(home).with_extension("lock"), timeout)
    }

    /// Wait (up to `timeout`) for the exclusive lock on `path`
    /// ([`crate::auth::lock::take`]).
    pub(crate) fn acquire_path(
        path: &Path,
        timeout: std::time::Duration,
    ) -> Result<Self, LockError> {
        Ok(StoreLock {
            _lock: crate::auth::lock::take(path, timeout)?,
        })
    }
}

/// Replace `providers.nous` with `state`, as `_save_auth_store` writes the
/// store (2-space JSON, `updated_at` stamped, mode kept or 0600).
pub(crate) fn save_provider_state(
    home: &HermesHome,
    state: Map<String, Value>,
) -> Result<(), AuthStoreError> {
    save_store_with(home, state, |_| {})
}

/// [`save_provider_state`], editing the rest of the store too.
pub(crate) fn save_store_with(
    home: &HermesHome,
    state: Map<String, Value>,
    edit: impl FnOnce(&mut Map<String, Value>),
) -> Result<(), AuthStoreError> {
    let path = auth_path(home);
    // A store that cannot be read is an error, never an empty store to
    // write over (that would drop every other sign-in).
    let typed = auth_store::load_fresh(&path)?;
    let mut store = as_map(&typed).map_err(|e| AuthStoreError::Write {
        path: path.clone(),
        source: Box::new(e),
    })?;
    edit(&mut store);
    let providers = store
        .entry("providers")
        .or_insert_with(|| Value::Object(Map::new()));
    if !providers.is_object() {
        *providers = Value::Object(Map::new());
    }
    if let Some(p) = providers.as_object_mut() {
        p.insert("nous".into(), Value::Object(state));
    }
    let store = auth_store::AuthStore::from_value(Value::Object(store));
    auth_store::write_store(&path, store)
}

/// `_nous_shared_store_path`: `$HERMES_SHARED_AUTH_DIR` (given) or `<root>/shared`.
pub(crate) fn shared_path(home: &HermesHome, override_dir: Option<String>) -> PathBuf {
    let dir = override_dir
        .map(|d| d.trim().to_string())
        .filter(|d| !d.is_empty())
        .map(|d| crate::hermes::home::expand_tilde(Path::new(&d)))
        .unwrap_or_else(|| home.root().join("shared"));
    dir.join("nous_auth.json")
}

/// `_read_shared_nous_state`: an object with both tokens, else `None`.
pub(crate) fn read_shared(path: &Path) -> Option<Map<String, Value>> {
    let text = crate::fs::read_capped(path, crate::fs::CONFIG_CAP).ok()?;
    let Value::Object(m) = serde_json::from_slice(&text).ok()? else {
        return None;
    };
    (text_of(&m, "refresh_token") && text_of(&m, "access_token")).then_some(m)
}

fn text_of(m: &Map<String, Value>, k: &str) -> bool {
    text(m, k).is_some()
}

/// `_merge_shared_nous_oauth_state`: copy fresher shared tokens into `state`;
/// true when anything was copied.
pub(crate) fn merge_shared(state: &mut Map<String, Value>, shared: &Map<String, Value>) -> bool {
    let Some(shared_rt) = text(shared, "refresh_token") else {
        return false;
    };
    let local_rt = state
        .get("refresh_token")
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim();
    let exp = |m: &Map<String, Value>| {
        m.get("expires_at")
            .and_then(Value::as_str)
            .and_then(iso_ts)
            .unwrap_or(0.0)
    };
    if shared_rt == local_rt && exp(shared) <= exp(state) {
        return false;
    }
    for k in [
        "access_token",
        "refresh_token",
        "token_type",
        "scope",
        "client_id",
        "portal_base_url",
        "inference_base_url",
        "obtained_at",
        "expires_at",
    ] {
        match shared.get(k) {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) if s.is_empty() => {}
            Some(v) => {
                state.insert(k.into(), v.clone());
            }
        }
    }
    true
}

/// `_quarantine_nous_oauth_state` + `_quarantine_nous_pool_entries` +
/// `_clear_shared_nous_state`, after the portal refused the refresh token for
/// good: the dead token material is removed (never replayed: Nous refresh
/// tokens are single-use and a replay can revoke the whole session), the
/// error recorded, device-code pool copies dropped, the shared copy deleted.
pub(crate) fn quarantine(
    home: &HermesHome,
    mut state: Map<String, Value>,
    shared: &Path,
    code: &str,
    message: &str,
) -> Result<(), AuthStoreError> {
    tracing::warn!("Nous OAuth state quarantined (terminal auth death): {code}");
    for k in [
        "access_token",
        "refresh_token",
        "expires_at",
        "expires_in",
        "obtained_at",
        "agent_key",
        "agent_key_id",
        "agent_key_expires_at",
        "agent_key_expires_in",
        "agent_key_reused",
        "agent_key_obtained_at",
    ] {
        state.remove(k);
    }
    state.insert(
        "last_auth_error".into(),
        serde_json::json!({
            "provider": "nous", "code": code, "message": message,
            "reason": "managed_access_token_refresh_failure", "relogin_required": true,
            "at": iso_utc(now()),
        }),
    );
    let _ = std::fs::remove_file(shared);
    save_store_with(home, state, |store| {
        if let Some(entries) = store
            .get_mut("credential_pool")
            .and_then(|p| p.get_mut("nous"))
            .and_then(Value::as_array_mut)
        {
            entries.retain(|e| {
                !matches!(
                    e.get("source").and_then(Value::as_str),
                    Some("device_code" | "manual:device_code")
                )
            });
        }
    })
}

/// The shared store's lock file (`nous_auth.lock`).
pub(crate) fn shared_lock_path(shared: &Path) -> PathBuf {
    shared.with_file_name("nous_auth.lock")
}

/// `_write_shared_nous_state` (best effort, as in Hermes); the caller holds
/// the shared lock.
pub(crate) fn write_shared(path: &Path, state: &Map<String, Value>) {
    let (Some(access), Some(refresh)) = (text(state, "access_token"), text(state, "refresh_token"))
    else {
        return;
    };
    let or = |k: &str, d: &str| -> Value {
        match state.get(k) {
            Some(v) if crate::pycompat::py_bool(v) => v.clone(),
            _ => Value::String(d.into()),
        }
    };
    let mut shared = Map::new();
    shared.insert("_schema".into(), 1.into());
    shared.insert("access_token".into(), access.into());
    shared.insert("refresh_token".into(), refresh.into());
    shared.insert("token_type".into(), or("token_type", "Bearer"));
    shared.insert("scope".into(), or("scope", "inference:invoke"));
    shared.insert("client_id".into(), or("client_id", "hermes-cli"));
    shared.insert(
        "portal_base_url".into(),
        or("portal_base_url", "https://portal.nousresearch.com"),
    );
    shared.insert(
        "inference_base_url".into(),
        or(
            "inference_base_url",
            "https://inference-api.nousresearch.com/v1",
        ),
    );
    for k in ["obtained_at", "expires_at"] {
        shared.insert(k.into(), state.get(k).cloned().unwrap_or(Value::Null));
    }
    shared.insert("updated_at".into(), iso_utc(now()).into());
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let r = serde_json::to_string_pretty(&Value::Object(shared))
        .map_err(SharedWriteError::from)
        .and_then(|text| write(path, text.as_bytes()));
    if let Err(e) = r {
        tracing::warn!(
            "cannot update the shared Nous login {}: {e}",
            path.display()
        );
    }
}

/// Atomically, and 0600 whatever the file was before: it holds a refresh
/// token (Hermes writes the shared store 0600 too).
fn write(path: &Path, bytes: &[u8]) -> Result<(), SharedWriteError> {
    crate::fs::atomic_write(path, bytes)?;
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(
        crate::fs::real_target(path),
        std::fs::Permissions::from_mode(0o600),
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expiry_rules() {
        assert!(is_expiring(None, 120.0));
        assert!(is_expiring(Some(&Value::from("garbage")), 120.0));
        let soon = Value::from(iso_utc(now() + 60.0));
        assert!(is_expiring(Some(&soon), 120.0));
        assert!(!expired(Some(&soon)));
        let later = Value::from(iso_utc(now() + 3600.0));
        assert!(!is_expiring(Some(&later), 120.0));
        assert!(expired(Some(&Value::from(1.0))));
    }
}
