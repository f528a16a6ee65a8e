//! Browser settings, from `config.yaml`'s typed `browser:` section
//! ([`crate::hermes::sections::Browser`]) and the environment, the way
//! Hermes reads them. Reading is cheap: the section is read once per context.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::hermes::{Context, deadlines, envvars};

/// What to do with `alert`/`confirm`/`prompt`/`beforeunload` dialogs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DialogPolicy {
    /// Keep the dialog open and tell the model; `browser_press` Enter accepts,
    /// Escape dismisses; dismissed after `dialog_timeout_s`.
    MustRespond,
    AutoDismiss,
    AutoAccept,
}

#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// `BROWSER_CDP_URL` (env first, as Hermes' `_get_cdp_override` in
    /// hermes-agent: tools/browser_tool.py), then `browser.cdp_url`.
    pub(crate) cdp_url: Option<String>,
    pub(crate) command_timeout: Duration,
    pub(crate) navigation_timeout: Duration,
    pub(crate) inactivity_timeout: Duration,
    pub(crate) dialog_policy: DialogPolicy,
    pub(crate) dialog_timeout: Duration,
    pub(crate) restrict_evaluate: bool,
    pub(crate) allow_unsafe_evaluate: bool,
    pub(crate) headed: bool,
    /// `browser.record_sessions`: record each session to a WebM
    /// (`session/recording.rs`).
    pub(crate) record_sessions: bool,
}

/// A configured number of seconds, when it is finite and positive.
fn secs(v: Option<f64>) -> Option<f64> {
    v.filter(|v| v.is_finite() && *v > 0.0)
}

impl Settings {
    pub(crate) fn from_context(ctx: &Context) -> Self {
        let cfg = &ctx.sections().browser;
        let cdp_url = ctx
            .env
            .get(envvars::BROWSER_CDP_URL)
            .or_else(|| cfg.cdp_url.clone())
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty());
        let command = secs(cfg.command_timeout)
            .unwrap_or(deadlines::BROWSER_COMMAND.hermes().as_secs_f64())
            .max(1.0);
        // Hermes: `open` gets at least 60 s. `browser.navigation_timeout` is ours.
        let navigation = secs(cfg.navigation_timeout).unwrap_or(command.max(60.0));
        // Hermes: config, then the legacy env var, default 120 s.
        let inactivity = secs(cfg.inactivity_timeout)
            .or_else(|| {
                ctx.env
                    .get(envvars::BROWSER_INACTIVITY_TIMEOUT)
                    .and_then(|v| v.trim().parse().ok())
            })
            .unwrap_or(deadlines::BROWSER_INACTIVITY.hermes().as_secs_f64())
            .max(deadlines::BROWSER_INACTIVITY_FLOOR.hermes().as_secs_f64());
        let dialog_policy = match cfg
            .dialog_policy
            .as_deref()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase()
            .as_str()
        {
            "auto_dismiss" => DialogPolicy::AutoDismiss,
            "auto_accept" => DialogPolicy::AutoAccept,
            "" | "must_respond" => DialogPolicy::MustRespond,
            other => {
                tracing::warn!(
                    "browser.dialog_policy '{other}' is not one of must_respond|auto_dismiss|auto_accept; using must_respond"
                );
                DialogPolicy::MustRespond
            }
        };
        Settings {
            cdp_url,
            // Configured or not, every wait is scaled as `deadlines` scales it.
            command_timeout: deadlines::scaled(crate::pycompat::seconds(command)),
            navigation_timeout: deadlines::scaled(crate::pycompat::seconds(navigation.max(1.0))),
            inactivity_timeout: deadlines::scaled(crate::pycompat::seconds(inactivity)),
            dialog_policy,
            dialog_timeout: crate::pycompat::seconds(secs(cfg.dialog_timeout_s).unwrap_or(300.0)),
            restrict_evaluate: cfg.restrict_evaluate,
            allow_unsafe_evaluate: cfg.allow_unsafe_evaluate,
            headed: cfg.headed,
            record_sessions: cfg.record_sessions,
        }
    }
}

/// Executable names looked up on `PATH`, in order.
pub(crate) const PATH_NAMES: &[&str] = &[
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
    "chrome",
];

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// Why no Chromium can be used: what was tried and what to do.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ExecutableError {
    #[error(
        "browser.executable in config.yaml points to {}, which is not an executable file; fix the path or remove the key",
        .0.display()
    )]
    BadConfigPath(PathBuf),
    #[error("CHROME_PATH={} is not an executable file; fix it or unset it", .0.display())]
    BadChromePath(PathBuf),
    #[error(
        "no Chromium or Chrome found (looked for browser.executable in config.yaml, CHROME_PATH, and chromium/google-chrome on PATH); install it with `apt-get install chromium` or set browser.executable / CHROME_PATH"
    )]
    NotFound,
}

/// Find Chromium: `browser.executable`, `CHROME_PATH`, then `PATH`. Only
/// `stat` calls.
pub(crate) fn find_executable(ctx: &Context) -> Result<PathBuf, ExecutableError> {
    if let Some(p) = &ctx.sections().browser.executable {
        let p = crate::hermes::home::expand_tilde(Path::new(p.trim()));
        return if is_executable(&p) {
            Ok(p)
        } else {
            Err(ExecutableError::BadConfigPath(p))
        };
    }
    if let Some(p) = ctx.env.get(envvars::CHROME_PATH) {
        let p = PathBuf::from(p.trim());
        return if is_executable(&p) {
            Ok(p)
        } else {
            Err(ExecutableError::BadChromePath(p))
        };
    }
    let path = ctx.env.get(envvars::PATH);
    PATH_NAMES
        .iter()
        .find_map(|name| crate::hermes::env::which(name, path.as_deref()))
        .ok_or(ExecutableError::NotFound)
}
