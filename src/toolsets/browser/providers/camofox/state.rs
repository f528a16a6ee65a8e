//! Who we are to the Camofox server, and what page URL it is asked to open.
//!
//! * [`CamofoxConfig`]: `browser.camofox.*` in config.yaml and the
//!   `CAMOFOX_*` variables, read as Hermes reads them (env first where Hermes
//!   has a variable);
//! * [`Identity`]: the `userId` / `listItemId` pair a session uses: random
//!   and ephemeral by default, the profile-scoped uuid5 identity with
//!   `browser.camofox.managed_persistence` (hermes-agent:
//!   tools/browser_camofox_state.py), or the externally owned identity of
//!   `CAMOFOX_USER_ID` / `browser.camofox.user_id`;
//! * [`rewrite_loopback`]: Hermes' opt-in rewrite of loopback page URLs for a
//!   Camofox running in Docker.
//!
//! hermes-agent: tools/browser_camofox.py (`_get_session`,
//! `_camofox_identity_override`, `_adopt_existing_tab_enabled`,
//! `_rewrite_loopback_url_for_camofox`, `_get_command_timeout`).

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use sha1::Digest as _;

use crate::hermes::{Context, deadlines, envvars};

/// The logical task every call belongs to (Hermes' `task_id or "default"`;
/// one `serve` process is one task).
pub(crate) const TASK_ID: &str = "default";

/// Everything the Camofox backend reads from config.yaml and the environment.
#[derive(Debug, Clone)]
pub(crate) struct CamofoxConfig {
    /// `CAMOFOX_URL` without trailing `/`.
    pub(crate) url: String,
    /// `CAMOFOX_API_KEY` (sent as `Authorization: Bearer`), never logged.
    pub(crate) api_key: Option<String>,
    /// `browser.command_timeout` as Hermes' Camofox client reads it: an
    /// integer, at least 5 s, default 30 s.
    pub(crate) command_timeout: Duration,
    pub(crate) managed_persistence: bool,
    /// `CAMOFOX_USER_ID` / `browser.camofox.user_id`.
    pub(crate) user_id: Option<String>,
    /// `CAMOFOX_SESSION_KEY` / `browser.camofox.session_key`.
    pub(crate) session_key: Option<String>,
    pub(crate) adopt_existing_tab: bool,
    pub(crate) rewrite_loopback: bool,
    pub(crate) loopback_alias: String,
}

/// Hermes' `_env_flag`: `1/true/yes/on`, `0/false/no/off`, anything else unset.
fn env_flag(ctx: &Context, name: &str) -> Option<bool> {
    let raw = ctx.env.get(name)?.trim().to_ascii_lowercase();
    let flag = crate::pycompat::env_flag(&raw);
    if flag.is_none() && !raw.is_empty() {
        tracing::debug!("Ignoring invalid boolean env {name}={raw:?}");
    }
    flag
}

fn env_text(ctx: &Context, name: &str) -> Option<String> {
    ctx.env
        .get(name)
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// Hermes' `_get_command_timeout`: `max(int(val), 5)`, default 30 (scaled
/// as [`deadlines::scaled`] scales every wait).
fn command_timeout(ctx: &Context) -> Duration {
    let secs = ctx.sections().browser.command_timeout_int;
    let floor = deadlines::CAMOFOX_COMMAND_FLOOR.hermes().as_secs_f64();
    let default = deadlines::BROWSER_COMMAND.hermes().as_secs_f64();
    deadlines::scaled(crate::pycompat::seconds(
        secs.map(|s| s.max(floor)).unwrap_or(default),
    ))
}

impl CamofoxConfig {
    /// `None` when `CAMOFOX_URL` is unset (not Camofox mode).
    pub(crate) fn from_context(ctx: &Context) -> Option<Self> {
        let url = ctx.env.get(envvars::CAMOFOX_URL)?;
        let url = url.trim().trim_end_matches('/').to_string();
        if url.is_empty() {
            return None;
        }
        let cfg = &ctx.sections().browser.camofox;
        Some(CamofoxConfig {
            url,
            api_key: env_text(ctx, envvars::CAMOFOX_API_KEY),
            command_timeout: command_timeout(ctx),
            managed_persistence: cfg.managed_persistence,
            user_id: env_text(ctx, envvars::CAMOFOX_USER_ID).or_else(|| cfg.user_id.clone()),
            session_key: env_text(ctx, envvars::CAMOFOX_SESSION_KEY)
                .or_else(|| cfg.session_key.clone()),
            adopt_existing_tab: env_flag(ctx, envvars::CAMOFOX_ADOPT_EXISTING_TAB)
                .unwrap_or(cfg.adopt_existing_tab),
            rewrite_loopback: env_flag(ctx, envvars::CAMOFOX_REWRITE_LOOPBACK_URLS)
                .unwrap_or(cfg.rewrite_loopback_urls),
            loopback_alias: env_text(ctx, envvars::CAMOFOX_LOOPBACK_HOST_ALIAS)
                .or_else(|| cfg.loopback_host_alias.clone())
                .unwrap_or_else(|| "host.docker.internal".into()),
        })
    }

    /// Whether the server-side profile must outlive our session (Hermes'
    /// `camofox_soft_cleanup`: managed persistence or an external identity).
    pub(crate) fn keeps_profile(&self) -> bool {
        self.managed_persistence || self.user_id.is_some()
    }
}

/// The identity one session uses with the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Identity {
    pub(crate) user_id: String,
    /// Sent as `listItemId` when a tab is created.
    pub(crate) session_key: String,
    /// Managed (persistent or externally owned) rather than ephemeral.
    pub(crate) managed: bool,
    pub(crate) adopt_existing_tab: bool,
}

/// `uuid.uuid5(uuid.NAMESPACE_URL, name).hex`.
fn uuid5_hex(name: &str) -> String {
    let mut h = sha1::Sha1::new();
    h.update(uuid::Uuid::NAMESPACE_URL.as_bytes());
    h.update(name.as_bytes());
    let d = h.finalize();
    let mut b = [0u8; 16];
    b.copy_from_slice(&d[..16]);
    uuid::Builder::from_sha1_bytes(b)
        .into_uuid()
        .simple()
        .to_string()
}

/// Hermes' `get_camofox_state_dir()`: `$HERMES_HOME/browser_auth/camofox`.
pub(crate) fn state_dir(home: &Path) -> std::path::PathBuf {
    home.join("browser_auth").join("camofox")
}

/// Hermes' `get_camofox_identity(task_id)`: stable per profile (user) and
/// per logical task (session key).
pub(crate) fn managed_identity(home: &Path, task_id: &str) -> (String, String) {
    let scope_root = state_dir(home).display().to_string();
    let user = uuid5_hex(&format!("camofox-user:{scope_root}"));
    let session = uuid5_hex(&format!("camofox-session:{scope_root}:{task_id}"));
    (
        format!("hermes_{}", &user[..10]),
        format!("task_{}", &session[..16]),
    )
}

/// `task_id[:16]`.
fn task_prefix(task_id: &str) -> String {
    task_id.chars().take(16).collect()
}

/// Hermes' `_get_session` for a new session.
pub(crate) fn identity(cfg: &CamofoxConfig, home: &Path, task_id: &str) -> Identity {
    if let Some(user_id) = &cfg.user_id {
        return Identity {
            user_id: user_id.clone(),
            session_key: cfg
                .session_key
                .clone()
                .unwrap_or_else(|| format!("task_{}", task_prefix(task_id))),
            managed: true,
            adopt_existing_tab: cfg.adopt_existing_tab,
        };
    }
    if cfg.managed_persistence {
        let (user_id, session_key) = managed_identity(home, task_id);
        return Identity {
            user_id,
            session_key,
            managed: true,
            adopt_existing_tab: cfg.adopt_existing_tab,
        };
    }
    let random = uuid::Uuid::new_v4().simple().to_string();
    Identity {
        user_id: format!("hermes_{}", &random[..10]),
        session_key: format!("task_{}", task_prefix(task_id)),
        managed: false,
        adopt_existing_tab: false,
    }
}

fn is_loopback_host(host: &url::Host<&str>) -> bool {
    match host {
        url::Host::Domain(d) => {
            let d = d.to_ascii_lowercase();
            d == "localhost" || d == "localhost.localdomain"
        }
        url::Host::Ipv4(a) => a.is_loopback(),
        url::Host::Ipv6(a) => a.is_loopback(),
    }
}

/// Hermes' `_rewrite_loopback_url_for_camofox`: with the rewrite on, an
/// http(s) URL on a loopback host is opened on `loopback_alias` instead
/// (the browser runs inside Docker, where loopback is the container).
/// Returns the URL to open and, when rewritten, Hermes' `url_rewrite` object.
pub(crate) fn rewrite_loopback(cfg: &CamofoxConfig, raw: &str) -> (String, Option<Value>) {
    if !cfg.rewrite_loopback || cfg.loopback_alias.is_empty() {
        return (raw.to_string(), None);
    }
    let Ok(u) = url::Url::parse(raw) else {
        return (raw.to_string(), None);
    };
    if !matches!(u.scheme(), "http" | "https") || !u.host().is_some_and(|h| is_loopback_host(&h)) {
        return (raw.to_string(), None);
    }
    let from = match u.host() {
        Some(url::Host::Ipv6(a)) => a.to_string(),
        Some(h) => h.to_string(),
        None => String::new(),
    };
    let alias = &cfg.loopback_alias;
    let host_part = if alias.contains(':') && !alias.starts_with('[') {
        format!("[{alias}]")
    } else {
        alias.clone()
    };
    let mut userinfo = String::new();
    if !u.username().is_empty() {
        userinfo.push_str(u.username());
        if let Some(p) = u.password() {
            userinfo.push(':');
            userinfo.push_str(p);
        }
        userinfo.push('@');
    }
    let port = u.port().map(|p| format!(":{p}")).unwrap_or_default();
    // The rest of the URL as the original wrote it (Python's urlunsplit
    // keeps path, query and fragment verbatim).
    let rest = &raw[raw.find("://").map(|i| i + 3).unwrap_or(0)..];
    let tail = rest.find(['/', '?', '#']).map(|i| &rest[i..]).unwrap_or("");
    let rewritten = format!("{}://{userinfo}{host_part}{port}{tail}", u.scheme());
    let info = json!({
        "from": from,
        "to": alias,
        "original_url": raw,
        "rewritten_url": rewritten,
    });
    (rewritten, Some(info))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid5_and_managed_identity_match_python() {
        // python3 -c "import uuid; print(uuid.uuid5(uuid.NAMESPACE_URL, 'python.org').hex)"
        assert_eq!(uuid5_hex("python.org"), "7af94e2b4dd950f09c9a8a48519bdef0");
        // tools/browser_camofox_state.py's get_camofox_identity('default') with HERMES_HOME=/h
        assert_eq!(
            managed_identity(Path::new("/h"), "default"),
            ("hermes_96d562af1b".into(), "task_adb3a418a0fd5811".into())
        );
    }

    fn cfg() -> CamofoxConfig {
        CamofoxConfig {
            url: "http://127.0.0.1:9377".into(),
            api_key: None,
            command_timeout: Duration::from_secs(30),
            managed_persistence: false,
            user_id: None,
            session_key: None,
            adopt_existing_tab: false,
            rewrite_loopback: true,
            loopback_alias: "host.docker.internal".into(),
        }
    }

    #[test]
    fn loopback_urls_are_rewritten_only_when_asked() {
        let c = cfg();
        let (u, info) = rewrite_loopback(&c, "http://127.0.0.1:3000/a?b=1#c");
        assert_eq!(u, "http://host.docker.internal:3000/a?b=1#c");
        let info = info.unwrap();
        assert_eq!(info["from"], "127.0.0.1");
        assert_eq!(info["to"], "host.docker.internal");
        let (u, _) = rewrite_loopback(&c, "http://user:pw@localhost/x");
        assert_eq!(u, "http://user:pw@host.docker.internal/x");
        let (u, info) = rewrite_loopback(&c, "https://example.com/");
        assert_eq!((u.as_str(), info), ("https://example.com/", None));
        let off = CamofoxConfig {
            rewrite_loopback: false,
            ..cfg()
        };
        assert!(rewrite_loopback(&off, "http://127.0.0.1:3000/").1.is_none());
    }

    #[test]
    fn identities_follow_hermes_rules() {
        let home = Path::new("/h");
        let id = identity(&cfg(), home, TASK_ID);
        assert!(id.user_id.starts_with("hermes_") && id.user_id.len() == 17);
        assert_eq!(id.session_key, "task_default");
        assert!(!id.managed);
        let managed = CamofoxConfig {
            managed_persistence: true,
            ..cfg()
        };
        let a = identity(&managed, home, TASK_ID);
        assert_eq!(a, identity(&managed, home, TASK_ID));
        assert!(a.managed && a.session_key.starts_with("task_") && a.session_key.len() == 21);
        let ext = CamofoxConfig {
            user_id: Some("shared".into()),
            ..cfg()
        };
        let e = identity(&ext, home, TASK_ID);
        assert_eq!(
            (e.user_id.as_str(), e.session_key.as_str()),
            ("shared", "task_default")
        );
    }
}
