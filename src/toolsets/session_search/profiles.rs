//! Reading another profile's sessions: `profile=` and `@session:<profile>/<id>`
//! links (`_resolve_profile_db`), and the read shape's search of every
//! profile for an id it did not find (`_locate_session_db`), with Hermes'
//! profile rules (hermes-agent 0.19.0, `hermes_cli/profiles.py`). Profiles
//! live at `<root>/profiles/<name>`; `default` is the root itself.

use std::path::{Path, PathBuf};

use super::budget::Budget;
use super::db::{Fts, OpenError, StateDb, open};
use super::store::get_session;
use crate::hermes::home::is_valid_profile_name;
use crate::pycompat::{py_repr, py_strip};

/// Names `validate_profile_name` refuses (`_RESERVED_NAMES` less `default`).
const RESERVED: [&str; 5] = ["hermes", "test", "tmp", "root", "sudo"];

/// `normalize_profile_name`: stripped; `default` in any case; else lower case.
fn normalize(raw: &str) -> String {
    let s = py_strip(raw);
    if s.to_lowercase() == "default" {
        "default".into()
    } else {
        s.to_lowercase()
    }
}

/// A profile's Hermes home (`get_profile_dir`).
fn profile_dir(root: &Path, canon: &str) -> PathBuf {
    if canon == "default" {
        root.to_path_buf()
    } else {
        root.join("profiles").join(canon)
    }
}

/// `_resolve_profile_db(profile)`: the named profile's `state.db`, opened
/// read-only and without FTS (as Hermes opens it). `Err` is the tool's error
/// text, `profile '<as passed>': <why>`.
pub(crate) fn open_profile(root: &Path, raw: &str, budget: &Budget) -> Result<StateDb, String> {
    let fail = |why: String| format!("profile '{raw}': {why}");
    let canon = normalize(raw);
    if canon != "default" {
        if !is_valid_profile_name(&canon) {
            return Err(fail(format!(
                "Invalid profile name {}. Must match [a-z0-9][a-z0-9_-]{{0,63}}",
                py_repr(&canon)
            )));
        }
        if RESERVED.contains(&canon.as_str()) {
            return Err(fail(format!(
                "Profile name {} is reserved — it collides with either the Hermes installation itself or a common system binary.  Pick a different name.",
                py_repr(&canon)
            )));
        }
        if !profile_dir(root, &canon).is_dir() {
            return Err(fail(format!("profile '{canon}' does not exist")));
        }
    }
    match open(
        &profile_dir(root, &canon).join("state.db"),
        Fts::Off,
        budget,
    ) {
        Ok(db) => Ok(db),
        // What Hermes' `sqlite3.connect("file:…?mode=ro")` raises.
        Err(OpenError::Missing { .. }) => Err(fail("unable to open database file".into())),
        Err(e) => Err(fail(e.to_string())),
    }
}

/// `_locate_session_db(sid)`: the first profile (default first, then the
/// others by name) whose `state.db` has the session, opened read-only.
pub(crate) fn locate(root: &Path, sid: &str, budget: &Budget) -> Option<(StateDb, String)> {
    let mut targets = vec![("default".to_string(), root.to_path_buf())];
    if root.is_dir() {
        targets.push(("default".to_string(), root.to_path_buf()));
    }
    let mut names: Vec<String> = std::fs::read_dir(root.join("profiles"))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().is_dir())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n != "default" && is_valid_profile_name(n))
        .collect();
    names.sort();
    targets.extend(names.into_iter().map(|n| {
        let dir = root.join("profiles").join(&n);
        (n, dir)
    }));
    let mut seen = std::collections::HashSet::new();
    for (name, home) in targets {
        let path = home.join("state.db");
        if !seen.insert(path.clone()) || !path.exists() {
            continue;
        }
        let Ok(db) = open(&path, Fts::Off, budget) else {
            continue;
        };
        if let Ok(Some(_)) = get_session(&db.conn, sid) {
            return Some((db, name));
        }
    }
    None
}
