//! Every fixed deadline hermes-mcp keeps, in one table, with Hermes' values
//! (or ours, where Hermes has none) as the values.
//!
//! A deadline is how long the product waits for something that may never
//! happen: a lock another process holds, a server that stops answering, a
//! refresh still under way at exit. Values a user configures
//! (`browser.command_timeout`, ...) stay with their configuration; the
//! defaults and floors they fall back to are here.
//!
//! Tests that exercise a deadline would otherwise wait for it in real time.
//! `HERMES_MCP_TEST_TIME_SCALE` (tests only; a factor such as `0.01`) shrinks
//! every wait made through this module, [`Deadline::get`] and [`scaled`],
//! by that factor, never below [`FLOOR`]. Texts keep speaking in Hermes' time:
//! they print [`Deadline::hermes`], or a measured wait through [`unscaled`].
//! Unset, every wait is Hermes' value exactly.

use std::sync::OnceLock;
use std::time::Duration;

use crate::hermes::envvars;

/// The shortest scaled wait: a scaled deadline still lets a poll run once.
pub const FLOOR: Duration = Duration::from_millis(5);

/// One fixed deadline: Hermes' value, waited for scaled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadline(Duration);

impl Deadline {
    const fn secs(s: u64) -> Self {
        Deadline(Duration::from_secs(s))
    }

    /// The value as Hermes has it, for texts ("not released within 15s").
    pub const fn hermes(self) -> Duration {
        self.0
    }

    /// How long to wait: the value, times the test scale when one is set.
    pub fn get(self) -> Duration {
        scaled(self.0)
    }
}

// Sign-ins (src/auth, src/gateway).

/// Hermes' `AUTH_LOCK_TIMEOUT_SECONDS` (hermes_cli/auth.py): the wait for
/// `auth.lock` / `nous_auth.lock` another process holds.
pub const AUTH_LOCK_WAIT: Deadline = Deadline::secs(15);
/// The ChatGPT and xAI token refresh requests (hermes_cli/auth.py
/// `refresh_codex_oauth_pure`, `refresh_xai_oauth_pure`: `timeout_seconds=20.0`).
pub const TOKEN_REFRESH: Deadline = Deadline::secs(20);
/// xAI's OIDC discovery (`_xai_oauth_discovery(timeout_seconds=15.0)`).
pub const XAI_DISCOVERY: Deadline = Deadline::secs(15);
/// How long `serve` and `tools` wait at exit for token refreshes under way
/// (`auth::refreshes::drain`): the token endpoints' own timeout (20 s for
/// ChatGPT and xAI, 15 s for Nous) and a few seconds to store the answer.
pub const REFRESH_DRAIN: Deadline = Deadline::secs(25);
/// The Nous Portal token refresh (`resolve_nous_access_token(timeout_seconds=15.0)`).
pub const GATEWAY_REFRESH: Deadline = Deadline::secs(15);
/// How long `serve` and `tools` wait for the Nous Portal to say whether the
/// login may use the tool gateway (only asked when the token cannot tell).
pub const GATEWAY_PREFETCH: Deadline = Deadline::secs(3);
/// The Nous account lookup (`_fetch_nous_account_info(..., timeout=8)`).
pub const GATEWAY_ACCOUNT: Deadline = Deadline::secs(8);

// Toolsets' locks.

/// The longest one kanban tool call waits, in total, for other processes'
/// locks on a board (Hermes waits 120 s per statement; `toolsets/kanban/txn.rs`).
/// Hermes' own writers hold the write lock for one short `write_txn` at a
/// time, so normal contention clears in milliseconds; 30 s also ends the call
/// well before Codex's default 60 s MCP tool timeout, so the user sees why.
pub const KANBAN_LOCK_WAIT: Deadline = Deadline::secs(30);
/// The wait for the lock that serialises a board's first initialisation
/// (then the set-up goes ahead without it).
pub const KANBAN_INIT_LOCK: Deadline = Deadline::secs(10);
/// The wait for `MEMORY.md`'s / `USER.md`'s lock (Hermes' own writers wait
/// forever, tools/memory_tool.py; a call here gives up with nothing written).
pub const MEMORY_LOCK_WAIT: Deadline = Deadline::secs(30);

/// The longest one `session_search` call may read `state.db` (the statements
/// of one call together; `toolsets/session_search/budget.rs`). Hermes has no
/// such limit; a real database answers in milliseconds, so 20 s only ever
/// ends a call on a damaged or hostile file, well before Codex's 60 s MCP
/// tool timeout.
pub const SESSION_SEARCH_CALL: Deadline = Deadline::secs(20);

/// How long `serve` waits without a call before it gives freed heap and the
/// binary's code back (`server::idle`; ours): calls in quick succession reuse
/// them instead.
pub const IDLE_TRIM: Deadline = Deadline::secs(1);

// HTTP (src/net): the default cuts of every client.

/// Connecting to a server.
pub const HTTP_CONNECT: Deadline = Deadline::secs(10);
/// No data from a server for this long ends the request (the idle cut).
pub const HTTP_READ: Deadline = Deadline::secs(20);
/// One request in all.
pub const HTTP_TOTAL: Deadline = Deadline::secs(45);
/// The longest `Retry-After` waited for on a 429.
pub const HTTP_MAX_RETRY_WAIT: Deadline = Deadline::secs(20);

// Browser.

/// Hermes' default `browser.command_timeout` (tools/browser_tool.py).
pub const BROWSER_COMMAND: Deadline = Deadline::secs(30);
/// Hermes' floor of `browser.command_timeout` for Camofox
/// (`_get_command_timeout`: `max(int(val), 5)`).
pub const CAMOFOX_COMMAND_FLOOR: Deadline = Deadline::secs(5);
/// Hermes' default `browser.inactivity_timeout`.
pub const BROWSER_INACTIVITY: Deadline = Deadline::secs(120);
/// The floor of `browser.inactivity_timeout`.
pub const BROWSER_INACTIVITY_FLOOR: Deadline = Deadline::secs(5);
/// The Camofox client's idle and total cuts, above any per-call limit so
/// the per-call limit is the one that ends a call.
pub const CAMOFOX_HTTP_READ: Deadline = Deadline::secs(150);
pub const CAMOFOX_HTTP_TOTAL: Deadline = Deadline::secs(180);
/// Hermes' Camofox navigation timeout (tools/browser_camofox.py, `timeout=60`).
pub const CAMOFOX_NAVIGATE: Deadline = Deadline::secs(60);
/// Hermes' Camofox `/health` probe timeout.
pub const CAMOFOX_HEALTH: Deadline = Deadline::secs(5);
/// Hermes' cloud browser session creation (`requests.post(..., timeout=30)`).
pub const CLOUD_CREATE: Deadline = Deadline::secs(30);
/// Hermes' cloud browser session release (`close_session`, `timeout=10`).
pub const CLOUD_RELEASE: Deadline = Deadline::secs(10);

// doctor (src/doctor). Hermes has no doctor: these values are ours.

/// How long `codex app-server --print-startup-config` may take to say
/// whether config.toml loads: codex answers in well under a second once
/// started; 20 s leaves room for a cold start of its Node wrapper on a slow
/// disk, and then doctor goes on without codex's verdict.
pub const DOCTOR_CODEX_CHECK: Deadline = Deadline::secs(20);
/// The least `tools --json` gets (more when the entry's start-up timeout
/// is longer): it reads files and may wait [`GATEWAY_PREFETCH`] for the
/// Nous Portal, so 10 s is that wait and room to spare.
pub const DOCTOR_TOOLS_CHECK: Deadline = Deadline::secs(10);
/// The longest doctor waits for one step of the handshake, whatever
/// `startup_timeout_sec` says: doctor always ends, and a server that takes
/// ten minutes to start is a finding either way.
pub const DOCTOR_MAX_STEP: Deadline = Deadline::secs(600);
/// The least and the most doctor waits past codex's start-up timeout for
/// `initialize` or `tools/list` (codex's timeout again, within these
/// bounds), so a server that answers after codex gave up (named with the
/// time it took) is told apart from one that never answers: 3 s covers a
/// start slowed by a busy machine, 10 s bounds the wait on a long timeout.
pub const DOCTOR_EXTRA_WAIT_MIN: Deadline = Deadline::secs(3);
pub const DOCTOR_EXTRA_WAIT_MAX: Deadline = Deadline::secs(10);
/// How long the server doctor started has to exit once its stdin is closed
/// (then its process group is killed), and its stderr reader to finish:
/// an MCP server ends at EOF on stdin at once, so 2 s is ample.
pub const DOCTOR_EXIT_GRACE: Deadline = Deadline::secs(2);

/// The factor from `HERMES_MCP_TEST_TIME_SCALE`, read once; 1 when unset or
/// not a positive number (then a warning says so).
fn scale() -> f64 {
    static SCALE: OnceLock<f64> = OnceLock::new();
    *SCALE.get_or_init(|| {
        let Some(v) = envvars::get(envvars::HERMES_MCP_TEST_TIME_SCALE) else {
            return 1.0;
        };
        match parse_scale(&v) {
            Some(f) => f,
            None => {
                tracing::warn!(
                    "ignoring HERMES_MCP_TEST_TIME_SCALE {v:?}: not a factor between 0.0001 and 1"
                );
                1.0
            }
        }
    })
}

fn parse_scale(v: &str) -> Option<f64> {
    v.trim()
        .parse::<f64>()
        .ok()
        .filter(|f| f.is_finite() && (0.0001..=1.0).contains(f))
}

fn scaled_by(d: Duration, f: f64) -> Duration {
    if f >= 1.0 || d.is_zero() {
        return d;
    }
    d.mul_f64(f).max(FLOOR)
}

fn unscaled_by(d: Duration, f: f64) -> Duration {
    if f >= 1.0 {
        return d;
    }
    // Whole milliseconds, so 15 s scaled and back is 15 s, not 14.999...
    let ms = (d.as_secs_f64() / f * 1000.0).round();
    Duration::from_millis(ms.min(u64::MAX as f64) as u64)
}

/// A wait the product makes, scaled for tests (a configured value such as
/// `browser.command_timeout`, or a [`Deadline`]).
pub fn scaled(d: Duration) -> Duration {
    scaled_by(d, scale())
}

/// A measured or scaled wait in Hermes' time, for texts: "timed out after
/// 24s" in a test run scaled to 0.01 that waited 0.24 s.
pub fn unscaled(d: Duration) -> Duration {
    unscaled_by(d, scale())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_is_hermes_time_exactly() {
        assert_eq!(scale(), 1.0);
        assert_eq!(AUTH_LOCK_WAIT.get(), Duration::from_secs(15));
        assert_eq!(
            unscaled(Duration::from_millis(1234)),
            Duration::from_millis(1234)
        );
    }

    #[test]
    fn scale_is_a_factor_with_a_floor_and_texts_round_trip() {
        assert_eq!(parse_scale("0.01"), Some(0.01));
        for bad in ["0", "-1", "2", "nan", "inf", "x", ""] {
            assert_eq!(parse_scale(bad), None, "{bad}");
        }
        let d = scaled_by(AUTH_LOCK_WAIT.hermes(), 0.01);
        assert_eq!(d, Duration::from_millis(150));
        assert_eq!(unscaled_by(d, 0.01), Duration::from_secs(15));
        assert_eq!(scaled_by(Duration::from_millis(100), 0.001), FLOOR);
        assert_eq!(scaled_by(Duration::ZERO, 0.01), Duration::ZERO);
    }
}
