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

use serde::Serialize;
use serde_json::Value;

use super::{Options, Report};
use crate::hermes::sections::Sections;
use crate::hermes::{HermesConfig, HermesHome};
use crate::migrate::{self, hermes_plugin};
use hermes_plugin::{PLUGIN_NAME, RUNTIME_CODEX_HOME, SETTINGS_FILE};

/// The plugin as `doctor --json` shows it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PluginInfo {
    /// The Hermes home looked in.
    pub hermes_home: String,
    /// `<home>/plugins/hermes-mcp`.
    pub path: String,
    /// migrate's plugin is there (its `plugin.yaml` is migrate's).
    pub installed: bool,
    /// In `plugins.enabled` of config.yaml and not in `plugins.disabled`
    /// (`None`: not installed, or config.yaml unreadable).
    pub enabled: Option<bool>,
    /// The command line it re-runs (`settings.json`'s `argv`).
    pub argv: Option<Vec<String>>,
    /// Its program is this hermes-mcp.
    pub runs_this_binary: Option<bool>,
    /// Its code is this hermes-mcp's version.
    pub code_current: Option<bool>,
    /// The config.toml it keeps current (when it works).
    pub keeps_current: Option<String>,
    /// `works` (keeps the examined config.toml current), `elsewhere` (works,
    /// for another Codex home), `broken` (installed, cannot work), `missing`.
    pub state: &'static str,
    /// Installed and able to do its job (`works` or `elsewhere`).
    pub current: bool,
    /// Why not (the plugin's findings), or what it does instead.
    pub why: Vec<String>,
}

/// Examine the plugin against the Codex home `codex_home`. It lives in the
/// Hermes home named by `--hermes-home` / `--profile`; else in the one
/// hermes-tools gets (when `r` found one: `migrate` installed it there), else
/// in this shell's (`HERMES_HOME`, else `~/.hermes`: the entry of Hermes'
/// Python server names none); the first that has it wins.
pub(crate) fn check(opts: &Options, codex_home: &Path, r: &mut Report) {
    let candidates: Vec<PathBuf> = match &r.hermes_home_named {
        Some(named) => vec![PathBuf::from(named)],
        None => r
            .hermes_home
            .iter()
            .map(PathBuf::from)
            .chain(HermesHome::resolve(None, None).ok().map(|h| h.path))
            .collect(),
    };
    let Some(home) = candidates
        .iter()
        .find(|h| hermes_plugin::is_ours(&h.join("plugins").join(PLUGIN_NAME)))
        .or(candidates.first())
        .cloned()
    else {
        return;
    };
    let before = r.findings.len();
    let mut info = PluginInfo {
        hermes_home: home.display().to_string(),
        path: home.join("plugins").join(PLUGIN_NAME).display().to_string(),
        ..Default::default()
    };
    let state = examine(opts, &home, codex_home, &mut info, r);
    info.state = match state {
        State::Works => "works",
        State::Elsewhere => "elsewhere",
        State::Broken => "broken",
        State::Missing => "missing",
    };
    info.current = matches!(state, State::Works | State::Elsewhere);
    info.why
        .extend(r.findings.iter().skip(before).map(|f| f.message.clone()));
    r.plugin = Some(info);
    let migrate = opts.run_migrate();
    if let Some(f) = r
        .findings
        .iter_mut()
        .find(|f| f.code == "hermes_python_server")
    {
        f.hint = match state {
            State::Works => format!(
                "{migrate} (the Hermes plugin {PLUGIN_NAME} also does it by itself at the next Hermes session start)"
            ),
            State::Missing => format!(
                "{migrate} (it also installs the Hermes plugin {PLUGIN_NAME}, which then repairs this at each Hermes session start, unless you pass --no-hermes-hook)"
            ),
            State::Broken => format!(
                "{migrate} (the Hermes plugin {PLUGIN_NAME} cannot repair this now: see its finding)"
            ),
            State::Elsewhere => format!(
                "{migrate} (the Hermes plugin {PLUGIN_NAME} keeps another Codex home current, not this one)"
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
fn examine(
    opts: &Options,
    home: &Path,
    codex_home: &Path,
    info: &mut PluginInfo,
    r: &mut Report,
) -> State {
    let dir = home.join("plugins").join(PLUGIN_NAME);
    if !hermes_plugin::is_ours(&dir) {
        r.notes.push(format!(
            "the Hermes plugin {PLUGIN_NAME} is not installed in {}: after Hermes' /codex-runtime or a change to config.yaml, run `{}` yourself (migrate installs the plugin unless you pass --no-hermes-hook)",
            home.display(),
            opts.command("migrate")
        ));
        info.why.push("not installed".into());
        return State::Missing;
    }
    info.installed = true;
    let enabled = enabled(opts, home, &dir, r);
    info.enabled = enabled;
    let mut ok = enabled == Some(true);
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
            format!("{} to write it again", opts.run_migrate()),
        );
        return State::Broken;
    };
    info.argv = settings.get("argv").and_then(Value::as_array).map(|a| {
        a.iter()
            .filter_map(Value::as_str)
            .map(String::from)
            .collect()
    });
    let runs_this = runs_this_binary(opts, &settings, r);
    info.runs_this_binary = Some(runs_this);
    let code = current(opts, &dir, &settings, r);
    info.code_current = Some(code);
    ok &= runs_this && code;
    if !ok {
        return State::Broken;
    }
    let runtime = migrate::resolve_codex_home(None).unwrap_or_else(|_| codex_home.to_path_buf());
    info.keeps_current = Some(runtime.join("config.toml").display().to_string());
    if !hermes_plugin::same_dir(&runtime, codex_home) {
        let note = format!(
            "the Hermes plugin {PLUGIN_NAME} keeps {} current ({RUNTIME_CODEX_HOME}), not {} examined here",
            runtime.join("config.toml").display(),
            codex_home.join("config.toml").display()
        );
        info.why.push(note.clone());
        r.notes.push(note);
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
/// `None` when config.yaml cannot be read (doctor reports that on its own).
fn enabled(opts: &Options, home: &Path, dir: &Path, r: &mut Report) -> Option<bool> {
    let config_yaml = home.join("config.yaml");
    let Ok(config) = HermesConfig::load(&config_yaml) else {
        return None;
    };
    let plugins = Sections::read_in_home(&config, home.join(".env")).plugins;
    let listed = |names: &[String]| names.iter().any(|n| n == PLUGIN_NAME);
    let why = if listed(&plugins.disabled) {
        "is listed in plugins.disabled"
    } else if !listed(&plugins.enabled) {
        "is not in plugins.enabled"
    } else {
        return Some(true);
    };
    r.find(
        "hermes_plugin_disabled",
        format!(
            "the Hermes plugin {PLUGIN_NAME} is installed in {} but {why} of {}: Hermes does not load it, so nothing repairs the managed block after /codex-runtime",
            dir.display(),
            config_yaml.display()
        ),
        format!(
            "run `hermes plugins enable {PLUGIN_NAME}` (or `{}`), or remove it with `{} --no-hermes-hook`",
            opts.command("migrate"),
            opts.command("migrate")
        ),
    );
    Some(false)
}

/// The binary in `settings.json` exists and is this executable.
fn runs_this_binary(opts: &Options, settings: &Value, r: &mut Report) -> bool {
    let Some(prog) = settings
        .get("argv")
        .and_then(|a| a.get(0))
        .and_then(Value::as_str)
    else {
        r.find(
            "hermes_plugin_broken",
            format!("the Hermes plugin's {SETTINGS_FILE} names no program to run"),
            format!("{} to write it again", opts.run_migrate()),
        );
        return false;
    };
    let Ok(theirs) = std::fs::canonicalize(prog) else {
        r.find(
            "hermes_plugin_binary_missing",
            format!(
                "the Hermes plugin runs {prog}, which does not exist (hermes-mcp moved or was uninstalled)"
            ),
            format!("{} with the hermes-mcp you use: it points the plugin at itself", opts.run_migrate()),
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
                    "run `{}` to point it at this one, or use `{}`",
                    as_program(&opts.command("migrate"), &this.to_string_lossy()),
                    as_program(&opts.command("doctor"), prog)
                ),
            );
            false
        }
        _ => true,
    }
}

/// `command` (`hermes-mcp …`) run by the program at `path`.
fn as_program(command: &str, path: &str) -> String {
    let rest = command.strip_prefix("hermes-mcp").unwrap_or(command);
    format!("{}{rest}", super::sh_word(path))
}

/// The plugin's code and settings are this version's (an older plugin
/// stored the Codex home it watched in `codex_config`).
fn current(opts: &Options, dir: &Path, settings: &Value, r: &mut Report) -> bool {
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
        format!("{} to update it", opts.run_migrate()),
    );
    false
}
