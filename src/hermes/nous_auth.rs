//! Hermes' Nous Portal login as `$HERMES_HOME/auth.json` stores it: one reader
//! for everything that uses it (vision's `nous` provider, the Nous tool
//! gateway in `net::gateway`), and the write-back after a token refresh.
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
//! dead one. Not modelled: the profile → global-root `auth.json` fallback.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde_json::{Map, Value};

use super::HermesHome;

/// `auth.json` is small; anything bigger is not Hermes' file.
const CAP: u64 = 4 << 20;

pub(crate) fn auth_path(home: &HermesHome) -> PathBuf {
    home.path.join("auth.json")
}

/// The whole store as a JSON object, or `None` when missing or unreadable.
pub(crate) fn load_store(home: &HermesHome) -> Option<Map<String, Value>> {
    let text = crate::files::read_capped(&auth_path(home), CAP).ok()?;
    match serde_json::from_slice(&text).ok()? {
        Value::Object(m) => Some(m),
        _ => None,
    }
}

/// `providers.nous` (Hermes' `get_provider_auth_state("nous")`).
pub(crate) fn provider_state(store: &Map<String, Value>) -> Option<&Map<String, Value>> {
    store
        .get("providers")?
        .as_object()?
        .get("nous")?
        .as_object()
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

pub(crate) fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// Python's `datetime.fromisoformat` on Hermes' timestamps
/// (`YYYY-MM-DD[T ]HH:MM:SS[.ffffff][Z|±HH:MM]`, naive = UTC) as epoch seconds.
pub(crate) fn iso_ts(s: &str) -> Option<f64> {
    let s = s.trim();
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        t.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| t.parse().ok())?
    };
    if b.len() < 19
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hh, mm, ss) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || hh > 23 || mm > 59 || ss > 59 {
        return None;
    }
    // Days from civil (Howard Hinnant's algorithm).
    let y2 = if m <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
    let mut t = (days * 86_400 + hh * 3600 + mm * 60 + ss) as f64;
    let mut rest = &s[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let n = frac.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return None;
        }
        t += format!("0.{}", &frac[..n]).parse::<f64>().ok()?;
        rest = &frac[n..];
    }
    match rest {
        "" | "Z" => {}
        z if (z.starts_with('+') || z.starts_with('-')) && z.len() == 6 && &z[3..4] == ":" => {
            let (oh, om) = (z[1..3].parse::<f64>().ok()?, z[4..6].parse::<f64>().ok()?);
            let sign = if z.starts_with('-') { -1.0 } else { 1.0 };
            t -= sign * (oh * 3600.0 + om * 60.0);
        }
        _ => return None,
    }
    Some(t)
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

/// `_decode_jwt_claims`: the payload of a three-part token, else empty.
pub(crate) fn jwt_claims(token: &str) -> Map<String, Value> {
    if token.matches('.').count() != 2 {
        return Map::new();
    }
    let payload = token.split('.').nth(1).unwrap_or("").trim_end_matches('=');
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .and_then(|v| match v {
            Value::Object(m) => Some(m),
            _ => None,
        })
        .unwrap_or_default()
}

/// `datetime.now(timezone.utc).isoformat()` for epoch seconds (`+00:00`, microseconds).
pub(crate) fn iso_utc(t: f64) -> String {
    let secs = t.floor() as i64;
    let micros = ((t - t.floor()) * 1e6).round().min(999_999.0) as i64;
    let z = secs.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let s = secs.rem_euclid(86_400);
    let frac = if micros > 0 {
        format!(".{micros:06}")
    } else {
        String::new()
    };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}{frac}+00:00",
        s / 3600,
        s % 3600 / 60,
        s % 60
    )
}

/// Hermes' cross-process locks (`flock` on `auth.lock` beside `auth.json`,
/// then on `nous_auth.lock` beside the shared store), held while a refresh
/// reads, spends and rewrites the token.
pub(crate) struct StoreLock {
    _file: std::fs::File,
}

impl StoreLock {
    /// Wait (up to `timeout`) for the auth store's exclusive lock.
    pub(crate) fn acquire(home: &HermesHome, timeout: std::time::Duration) -> Result<Self, String> {
        Self::acquire_path(&home.path.join("auth.lock"), timeout)
    }

    /// Wait (up to `timeout`) for the exclusive lock on `path`.
    pub(crate) fn acquire_path(path: &Path, timeout: std::time::Duration) -> Result<Self, String> {
        use std::os::fd::AsRawFd;
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        let deadline = std::time::Instant::now() + timeout;
        loop {
            // SAFETY: flock on a descriptor we own; no memory is involved.
            let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
            if r == 0 {
                return Ok(StoreLock { _file: file });
            }
            if std::time::Instant::now() >= deadline {
                return Err("Timed out waiting for auth store lock".into());
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
}

/// Replace `providers.nous` with `state`, as `_save_auth_store` writes the
/// store (2-space JSON, `updated_at` stamped, mode kept or 0600).
pub(crate) fn save_provider_state(
    home: &HermesHome,
    state: Map<String, Value>,
) -> Result<(), String> {
    save_store_with(home, state, |_| {})
}

/// [`save_provider_state`], editing the rest of the store too.
pub(crate) fn save_store_with(
    home: &HermesHome,
    state: Map<String, Value>,
    edit: impl FnOnce(&mut Map<String, Value>),
) -> Result<(), String> {
    let path = auth_path(home);
    let mut store = load_store(home).unwrap_or_default();
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
    store.insert("updated_at".into(), Value::String(iso_utc(now())));
    let text =
        serde_json::to_string_pretty(&Value::Object(store)).map_err(|e| e.to_string())? + "\n";
    write(&path, text.as_bytes())
}

/// `_nous_shared_store_path`: `$HERMES_SHARED_AUTH_DIR` (given) or `<root>/shared`.
pub(crate) fn shared_path(home: &HermesHome, override_dir: Option<String>) -> PathBuf {
    let dir = override_dir
        .map(|d| d.trim().to_string())
        .filter(|d| !d.is_empty())
        .map(|d| super::home::expand_tilde(Path::new(&d)))
        .unwrap_or_else(|| home.root().join("shared"));
    dir.join("nous_auth.json")
}

/// `_read_shared_nous_state`: an object with both tokens, else `None`.
pub(crate) fn read_shared(path: &Path) -> Option<Map<String, Value>> {
    let text = crate::files::read_capped(path, CAP).ok()?;
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
) -> Result<(), String> {
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
        .map_err(|e| e.to_string())
        .and_then(|text| write(path, text.as_bytes()));
    if let Err(e) = r {
        tracing::warn!(
            "cannot update the shared Nous login {}: {e}",
            path.display()
        );
    }
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), String> {
    crate::files::atomic_write(path, bytes)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_parse_like_python_fromisoformat() {
        assert_eq!(iso_ts("1970-01-02T00:00:00Z"), Some(86_400.0));
        assert_eq!(iso_ts("1970-01-01T01:00:00+01:00"), Some(0.0));
        assert_eq!(iso_ts("2000-03-01T00:00:00.5Z"), Some(951_868_800.5));
        assert_eq!(iso_ts("2000-03-01 00:00:00"), Some(951_868_800.0));
        assert_eq!(iso_ts("soon"), None);
        assert_eq!(iso_ts("2000-13-01T00:00:00Z"), None);
        assert_eq!(iso_utc(951_868_800.0), "2000-03-01T00:00:00+00:00");
        assert_eq!(iso_utc(951_868_800.25), "2000-03-01T00:00:00.250000+00:00");
        assert_eq!(iso_ts(&iso_utc(1_800_000_000.5)), Some(1_800_000_000.5));
    }

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

    #[test]
    fn jwt_claims_need_three_parts() {
        let p = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(br#"{"exp":5}"#);
        assert_eq!(jwt_claims(&format!("h.{p}.s"))["exp"], 5);
        assert!(jwt_claims("opaque").is_empty());
        assert!(jwt_claims(&format!("h.{p}.s.x")).is_empty());
    }
}
