//! `doctor`'s look at the Hermes plugin `migrate` installs
//! (`$HERMES_HOME/plugins/hermes-mcp/`, see `migrate::hermes_plugin`): is it
//! installed, enabled in `plugins.enabled` (Hermes loads only those:
//! `hermes_cli/plugins.py`), does it run this hermes-mcp, is its code this
//! version's, and which Codex home does it keep current. A plugin that is
//! there but cannot work is a finding with the fix; a missing one is a note
//! (`--no-hermes-hook` is a choice). Only when it works for this Codex home
//! does the hint for Hermes' Python server in the block say the plugin
//! repairs it by itself.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::Report;
use crate::hermes::{HermesConfig, HermesHome};
use crate::migrate::{self, hermes_plugin};
use hermes_plugin::{PLUGIN_NAME, RUNTIME_CODEX_HOME, SETTINGS_FILE};

/// Examine the plugin against the Codex home `codex_home`. It lives in the
/// Hermes home hermes-tools gets (when `r` found one: `migrate` installed it
/// there), else in this shell's (`HERMES_HOME`, else `~/.hermes`: the entry
/// of Hermes' Python server names none); the first that has it wins.
pub(crate) fn check(codex_home: &Path, r: &mut Report) {
    let candidates: Vec<PathBuf> = r
        .hermes_home
        .iter()
        .map(PathBuf::from)
        .chain(HermesHome::resolve(None, None).ok().map(|h| h.path))
        .collect();
    let Some(home) = candidates
        .iter()
        .find(|h| hermes_plugin::is_ours(&h.join("plugins").join(PLUGIN_NAME)))
        .or(candidates.first())
        .cloned()
    else {
        return;
    };
    let state = examine(&home, codex_home, r);
    if let Some(f) = r
        .findings
        .iter_mut()
        .find(|f| f.code == "hermes_python_server")
    {
        f.hint = match state {
            State::Works => format!(
                "run `hermes-mcp migrate` (the Hermes plugin {PLUGIN_NAME} also does it by itself at the next Hermes session start)"
            ),
            State::Missing => format!(
                "run `hermes-mcp migrate` (it also installs the Hermes plugin {PLUGIN_NAME}, which then repairs this at each Hermes session start, unless you pass --no-hermes-hook)"
            ),
            State::Broken => format!(
                "run `hermes-mcp migrate` (the Hermes plugin {PLUGIN_NAME} cannot repair this now: see its finding)"
            ),
            State::Elsewhere => format!(
                "run `hermes-mcp migrate` (the Hermes plugin {PLUGIN_NAME} keeps another Codex home current, not this one)"
            ),
        };
    }
}

/// What the plugin will do for the Codex home doctor examines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Not installed (or not ours).
    Missing,
    /// Installed, but it cannot work (a finding says why).
    Broken,
    /// It works, for another Codex home.
    Elsewhere,
    /// It keeps this Codex home's block current.
    Works,
}

/// Findings and notes about the plugin, and what it will do.
fn examine(home: &Path, codex_home: &Path, r: &mut Report) -> State {
    let dir = home.join("plugins").join(PLUGIN_NAME);
    if !hermes_plugin::is_ours(&dir) {
        r.notes.push(format!(
            "the Hermes plugin {PLUGIN_NAME} is not installed in {}: after Hermes' /codex-runtime or a change to config.yaml, run `hermes-mcp migrate` yourself (migrate installs the plugin unless you pass --no-hermes-hook)",
            home.display()
        ));
        return State::Missing;
    }
    let mut ok = enabled(home, &dir, r);
    let settings =
        crate::fs::read_to_string_capped_opt(&dir.join(SETTINGS_FILE), crate::fs::CONFIG_CAP)
            .ok()
            .flatten()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok());
    let Some(settings) = settings else {
        r.find(
            "hermes_plugin_broken",
            format!(
                "the Hermes plugin in {} has no readable {SETTINGS_FILE}: it cannot run migrate",
                dir.display()
            ),
            "run `hermes-mcp migrate` to write it again",
        );
        return State::Broken;
    };
    ok &= runs_this_binary(&settings, r);
    ok &= current(&dir, &settings, r);
    if !ok {
        return State::Broken;
    }
    let runtime = migrate::resolve_codex_home(None).unwrap_or_else(|_| codex_home.to_path_buf());
    if !hermes_plugin::same_dir(&runtime, codex_home) {
        r.notes.push(format!(
            "the Hermes plugin {PLUGIN_NAME} keeps {} current ({RUNTIME_CODEX_HOME}), not {} examined here",
            runtime.join("config.toml").display(),
            codex_home.join("config.toml").display()
        ));
        return State::Elsewhere;
    }
    r.notes.push(format!(
        "the Hermes plugin {PLUGIN_NAME} ({}) is enabled, runs this hermes-mcp, and at each Hermes session start brings the managed block of {} up to date",
        dir.display(),
        codex_home.join("config.toml").display()
    ));
    State::Works
}

/// `hermes-mcp` is in `plugins.enabled` and not in `plugins.disabled`.
fn enabled(home: &Path, dir: &Path, r: &mut Report) -> bool {
    let config_yaml = home.join("config.yaml");
    let Ok(config) = HermesConfig::load(&config_yaml) else {
        // doctor reports an unreadable config.yaml on its own.
        return false;
    };
    let listed = |key: &str| {
        hermes_plugin::str_list(&config.root, key)
            .iter()
            .any(|n| n == PLUGIN_NAME)
    };
    let why = if listed("disabled") {
        "is listed in plugins.disabled"
    } else if !listed("enabled") {
        "is not in plugins.enabled"
    } else {
        return true;
    };
    r.find(
        "hermes_plugin_disabled",
        format!(
            "the Hermes plugin {PLUGIN_NAME} is installed in {} but {why} of {}: Hermes does not load it, so nothing repairs the managed block after /codex-runtime",
            dir.display(),
            config_yaml.display()
        ),
        format!(
            "run `hermes plugins enable {PLUGIN_NAME}` (or `hermes-mcp migrate`), or remove it with `hermes-mcp migrate --no-hermes-hook`"
        ),
    );
    false
}

/// The binary in `settings.json` exists and is this executable.
fn runs_this_binary(settings: &Value, r: &mut Report) -> bool {
    let Some(prog) = settings
        .get("argv")
        .and_then(|a| a.get(0))
        .and_then(Value::as_str)
    else {
        r.find(
            "hermes_plugin_broken",
            format!("the Hermes plugin's {SETTINGS_FILE} names no program to run"),
            "run `hermes-mcp migrate` to write it again",
        );
        return false;
    };
    let Ok(theirs) = std::fs::canonicalize(prog) else {
        r.find(
            "hermes_plugin_binary_missing",
            format!(
                "the Hermes plugin runs {prog}, which does not exist (hermes-mcp moved or was uninstalled)"
            ),
            "run `hermes-mcp migrate` with the hermes-mcp you use: it points the plugin at itself",
        );
        return false;
    };
    let this = std::env::current_exe().and_then(std::fs::canonicalize);
    match this {
        Ok(this) if this != theirs => {
            r.find(
                "hermes_plugin_other_binary",
                format!(
                    "the Hermes plugin runs {prog}, not this hermes-mcp ({})",
                    this.display()
                ),
                format!(
                    "run `{} migrate` to point it at this one, or use `{prog} doctor`",
                    this.display()
                ),
            );
            false
        }
        _ => true,
    }
}

/// The plugin's code and settings are this version's (an older plugin
/// stored the Codex home it watched in `codex_config`).
fn current(dir: &Path, settings: &Value, r: &mut Report) -> bool {
    let code =
        crate::fs::read_to_string_capped_opt(&dir.join("__init__.py"), crate::fs::CONFIG_CAP)
            .ok()
            .flatten();
    if code.as_deref() == Some(hermes_plugin::PLUGIN_PY) {
        return true;
    }
    let watched = settings
        .get("codex_config")
        .and_then(Value::as_str)
        .map(|c| format!("; it watches {c} only"))
        .unwrap_or_default();
    r.find(
        "hermes_plugin_outdated",
        format!(
            "the Hermes plugin in {} is not this hermes-mcp's version{watched}",
            dir.display()
        ),
        "run `hermes-mcp migrate` to update it",
    );
    false
}
