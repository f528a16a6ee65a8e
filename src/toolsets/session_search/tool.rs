//! One call, routed to its shape as `session_search()` does (hermes-agent
//! 0.19.0, `tools/session_search_tool.py`, called the way its registry
//! handler calls it): `@session:` link values split into profile and id, the
//! database chosen (another profile's, or this home's), then scroll, read,
//! browse or discovery, with Hermes' clamps and defaults.

use std::path::PathBuf;

use serde_json::Value;

use super::args::Args;
use super::browse::recent;
use super::budget::{Budget, Stop};
use super::db::{DbCache, StateDb};
use super::discover::{Discover, discover};
use super::format::{ok, tool_error};
use super::profiles::{locate, open_profile};
use super::read::{read_session, scroll};
use crate::hermes::HermesHome;
use crate::hermes::deadlines::SESSION_SEARCH_CALL;
use crate::pycompat::py_strip;
use crate::server::ToolOutput;

/// Where a call reads, taken from the server's context.
#[derive(Debug, Clone)]
pub(crate) struct CallEnv {
    /// `$HERMES_HOME`: this profile's `state.db` lives here.
    pub(crate) home: HermesHome,
    /// `HERMES_SESSION_ID`: the conversation Codex is part of, left out of results.
    pub(crate) current: Option<String>,
}

impl CallEnv {
    /// The root holding `profiles/` (Hermes' `get_default_hermes_root()`),
    /// worked out only by the calls that look at other profiles.
    fn root(&self) -> PathBuf {
        self.home.root()
    }
}

/// Non-blank after Python's `strip()`.
fn non_blank(s: &Option<String>) -> Option<&str> {
    s.as_deref().filter(|v| !py_strip(v).is_empty())
}

/// Run one call within `budget`; a call the budget stopped answers with why,
/// never with the partial result its interrupted statements left.
pub(crate) fn run(env: &CallEnv, cache: &DbCache, a: Args, budget: &Budget) -> ToolOutput {
    let out = run_in(env, cache, a, budget);
    match budget.stopped() {
        None => out,
        Some(Stop::Cancelled) => tool_error("session_search was cancelled"),
        Some(Stop::Deadline) => tool_error(format!(
            "session_search stopped after {}s: the session database took too long to answer (it may be damaged, or built to stall its readers). Nothing was returned; check the file with `sqlite3 <path> 'PRAGMA integrity_check'`.",
            SESSION_SEARCH_CALL.hermes().as_secs()
        )),
    }
}

/// Run one call: on another profile's database when one is named (where
/// this conversation's ids never occur), else on this home's.
fn run_in(env: &CallEnv, cache: &DbCache, mut a: Args, budget: &Budget) -> ToolOutput {
    split_link(&mut a);
    if let Some(p) = non_blank(&a.profile) {
        return match open_profile(&env.root(), p, budget) {
            Ok(db) => shape(env, &db, &a, None, budget),
            Err(text) => tool_error(text),
        };
    }
    let path = env.home.path.join("state.db");
    let db = match cache.take(&path, budget) {
        Ok(db) => db,
        Err(e) => return tool_error(e.to_string()),
    };
    let current = env.current.as_deref().filter(|c| !c.is_empty());
    let out = shape(env, &db, &a, current, budget);
    cache.put(path, db);
    out
}

/// The shape the arguments ask for, on `db`.
fn shape(
    env: &CallEnv,
    db: &StateDb,
    a: &Args,
    current: Option<&str>,
    budget: &Budget,
) -> ToolOutput {
    if let Some(sid) = non_blank(&a.session_id) {
        return match a.around {
            Some(anchor) => scroll(&db.conn, sid, anchor, a.window, current),
            None => read(env, db, py_strip(sid), budget),
        };
    }
    let limit = a.limit.clamp(1, 10);
    let query = py_strip(&a.query);
    if query.is_empty() {
        return recent(&db.conn, limit, current);
    }
    let roles = match non_blank(&a.role_filter) {
        Some(r) => r
            .split(',')
            .map(py_strip)
            .filter(|r| !r.is_empty())
            .map(str::to_string)
            .collect(),
        None => Vec::new(),
    };
    let sort = a
        .sort
        .as_deref()
        .map(|s| py_strip(s).to_lowercase())
        .filter(|s| s == "newest" || s == "oldest");
    discover(
        db,
        &Discover {
            query,
            roles,
            limit: usize::try_from(limit).unwrap_or(3),
            sort: sort.as_deref(),
            current,
        },
    )
}

/// A raw `@session:<profile>/<id>` value passed as `session_id`: the part
/// after the first `/` is the id, the part before it the profile unless one
/// was passed (session ids never contain `/`).
fn split_link(a: &mut Args) {
    let Some((p, id)) = a.session_id.as_deref().and_then(|s| s.split_once('/')) else {
        return;
    };
    if id.is_empty() {
        return;
    }
    let (p, id) = (p.to_string(), id.to_string());
    if !p.is_empty() && non_blank(&a.profile).is_none() {
        a.profile = Some(p);
    }
    a.session_id = Some(id);
}

/// The read shape; a session not found here is looked for in every profile
/// and, when found, read there and tagged with its `profile`.
fn read(env: &CallEnv, db: &StateDb, sid: &str, budget: &Budget) -> ToolOutput {
    let first = match read_session(&db.conn, sid) {
        Ok(r) => return ok(Value::Object(r)),
        Err(text) => text,
    };
    if let Some((other, owner)) = locate(&env.root(), sid, budget)
        && let Ok(mut r) = read_session(&other.conn, sid)
    {
        r.insert("profile".into(), Value::String(owner));
        return ok(Value::Object(r));
    }
    tool_error(first)
}
