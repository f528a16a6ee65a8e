//! Which variables `hermes-tools` lists in `env_vars`.
//!
//! codex passes a stdio server only the variables its entry names, and warns
//! about every named one that is unset (`codex doctor`: "env var X is not
//! set"; `codex mcp list` prints them all in one row). Listing all ~50
//! variables `serve` can read made both unreadable, so the list is what this
//! setup needs:
//!
//! * every variable `serve` reads that is set now, in the shell migrate runs
//!   in, unless `$HERMES_HOME/.env` holds the same value (`serve` reads that
//!   file itself, as Hermes does, so API keys kept there need no pass-through);
//! * `HERMES_HOME` when the Hermes root has profiles (Hermes' `-p NAME` and the
//!   kanban dispatcher point workers at another home through it);
//! * the kanban worker variables the dispatcher sets when it spawns a worker
//!   (hermes-agent: `hermes_cli/kanban_db.py`, the worker env), when this home
//!   uses kanban (`kanban` in `toolsets:`, or a kanban database exists);
//! * `HERMES_SESSION_ID` when Hermes itself runs codex
//!   (`model.openai_runtime: codex_app_server`): Hermes exports the id of the
//!   conversation into its own environment (hermes-agent:
//!   `agent/agent_init.py`, `set_current_session_id`) and codex app-server
//!   inherits it (`agent/transports/codex_app_server.py`,
//!   `hermes_subprocess_env`), so `session_search` can leave that conversation
//!   out of its results, as Hermes does. It is a per-session value, never set
//!   in the shell migrate runs in; a codex started by hand has none, and
//!   `codex doctor` then notes it unset, as it does the kanban variables.
//!
//! A key added later to the shell instead of `.env` needs `migrate` again; the
//! report says so.

use crate::hermes::config::is_var_name;
use crate::hermes::sections::Sections;
use crate::hermes::{HermesHome, envvars};

/// What the kanban tools read of the variables Hermes' dispatcher sets in a
/// worker's environment (hermes-agent: `hermes_cli/kanban_db.py`, the worker
/// env), which reach codex unchanged (`hermes_subprocess_env` copies the
/// worker's environment, `inherit_credentials=True`): the task and its run
/// and claim (ownership, heartbeats), the board, the tenant `kanban_create`
/// defaults to, the profile comments are signed with, and the terminal
/// timeout `kanban_show` reports. The dispatcher's workspace, branch and
/// goal-mode variables are for Hermes' own agent loop; no tool reads them.
pub(crate) const KANBAN_WORKER_VARS: &[&str] = &[
    envvars::HERMES_KANBAN_TASK,
    envvars::HERMES_KANBAN_RUN_ID,
    envvars::HERMES_KANBAN_CLAIM_LOCK,
    envvars::HERMES_KANBAN_DB,
    envvars::HERMES_KANBAN_BOARD,
    envvars::HERMES_TENANT,
    envvars::HERMES_PROFILE,
    envvars::TERMINAL_TIMEOUT,
];

/// The chosen names, and why each group is there (for the report).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct PassThrough {
    pub(crate) names: Vec<String>,
    pub(crate) set_now: Vec<String>,
    pub(crate) kanban: bool,
    pub(crate) profiles: bool,
    /// Hermes runs codex (`model.openai_runtime: codex_app_server`).
    pub(crate) hermes_runs_codex: bool,
}

/// Decide the list. `is_set` answers for the migrating process (a parameter
/// so tests need not touch the real environment).
pub(crate) fn choose(
    home: &HermesHome,
    sections: &Sections,
    is_set: impl Fn(&str) -> Option<String>,
) -> PassThrough {
    let dotenv = crate::hermes::dotenv::load(&home.dotenv_path());
    let mut out = PassThrough {
        profiles: !home.explicit && has_profiles(home),
        kanban: uses_kanban(home, sections),
        // Hermes' `get_current_runtime`: stripped, case-insensitive.
        hermes_runs_codex: sections
            .model
            .openai_runtime
            .as_ref()
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("codex_app_server")),
        ..Default::default()
    };
    for v in envvars::serve_vars() {
        let name = v.name;
        if home.explicit && name == envvars::HERMES_HOME {
            continue; // written as a literal `env` value instead
        }
        if name == envvars::CODEX_HOME {
            // The codex that reads this config.toml runs serve: its home is
            // where serve looks (default ~/.codex), and a CODEX_HOME of the
            // shell migrate happens to run in must not pin another one.
            continue;
        }
        let now = is_set(name).filter(|s| !s.is_empty());
        let from_dotenv = now.is_some() && dotenv.get(name) == now.as_ref();
        let wanted = (now.is_some() && !from_dotenv)
            || (out.profiles && name == envvars::HERMES_HOME)
            || (out.kanban && KANBAN_WORKER_VARS.contains(&name))
            || (out.hermes_runs_codex && name == envvars::HERMES_SESSION_ID);
        if !wanted || !is_var_name(name) {
            continue;
        }
        if now.is_some() && !from_dotenv {
            out.set_now.push(name.to_string());
        }
        out.names.push(name.to_string());
    }
    out
}

fn has_profiles(home: &HermesHome) -> bool {
    std::fs::read_dir(home.path.join("profiles"))
        .is_ok_and(|mut d| d.any(|e| e.is_ok_and(|e| e.path().is_dir())))
}

fn uses_kanban(home: &HermesHome, sections: &Sections) -> bool {
    let listed = sections.toolsets.lists("kanban");
    listed || home.path.join("kanban.db").exists() || home.path.join("kanban").is_dir()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sections(yaml: &str) -> Sections {
        let cfg = crate::hermes::HermesConfig::from_yaml(yaml).expect("yaml");
        Sections::read(&cfg, &|_| None)
    }

    fn home(dir: &std::path::Path, explicit: bool) -> HermesHome {
        HermesHome {
            path: dir.to_path_buf(),
            explicit,
        }
    }

    #[test]
    fn a_plain_setup_lists_only_what_is_set_and_not_in_dotenv() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join(".env"), "FAL_KEY=k1\n").unwrap();
        let cfg = sections("toolsets: [hermes-cli]\n");
        let set = |n: &str| match n {
            "FAL_KEY" => Some("k1".to_string()), // same as .env: not needed
            "EXA_API_KEY" => Some("e".to_string()), // only in the shell
            "TAVILY_API_KEY" => Some(String::new()), // empty counts as unset
            _ => None,
        };
        let p = choose(&home(d.path(), false), &cfg, set);
        assert_eq!(p.names, ["EXA_API_KEY"]);
        assert!(!p.kanban && !p.profiles);
        let none = choose(&home(d.path(), false), &cfg, |_| None);
        assert!(none.names.is_empty());
    }

    #[test]
    fn kanban_and_profiles_bring_their_launcher_variables() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("profiles/work")).unwrap();
        let cfg = sections("toolsets: [hermes-cli, kanban]\n");
        let p = choose(&home(d.path(), false), &cfg, |_| None);
        assert!(p.kanban && p.profiles);
        assert!(p.names.iter().any(|n| n == "HERMES_HOME"));
        for v in KANBAN_WORKER_VARS {
            assert!(p.names.iter().any(|n| n == v), "{v}");
        }
        // An explicit home is written as `env`, never passed through.
        let p = choose(&home(d.path(), true), &cfg, |n| {
            (n == "HERMES_HOME").then(|| "/x".to_string())
        });
        assert!(!p.names.iter().any(|n| n == "HERMES_HOME"));
    }

    #[test]
    fn kanban_passes_only_what_the_tools_read_of_the_workers_environment() {
        assert_eq!(
            KANBAN_WORKER_VARS,
            [
                "HERMES_KANBAN_TASK",
                "HERMES_KANBAN_RUN_ID",
                "HERMES_KANBAN_CLAIM_LOCK",
                "HERMES_KANBAN_DB",
                "HERMES_KANBAN_BOARD",
                "HERMES_TENANT",
                "HERMES_PROFILE",
                "TERMINAL_TIMEOUT",
            ]
        );
    }

    #[test]
    fn hermes_running_codex_passes_its_session_id() {
        let d = tempfile::tempdir().unwrap();
        let on = sections("model:\n  openai_runtime: codex_app_server\n");
        let p = choose(&home(d.path(), false), &on, |_| None);
        assert!(p.hermes_runs_codex);
        assert_eq!(p.names, ["HERMES_SESSION_ID"]);
        let on = sections("model:\n  openai_runtime: ' Codex_App_Server'\n");
        assert!(choose(&home(d.path(), false), &on, |_| None).hermes_runs_codex);
        let off = sections("model:\n  openai_runtime: auto\n");
        let p = choose(&home(d.path(), false), &off, |_| None);
        assert!(!p.hermes_runs_codex && p.names.is_empty());
    }
}
