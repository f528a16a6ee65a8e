//! Surviving Hermes' `/codex-runtime` and a config.yaml edited after
//! `migrate`: a Hermes plugin that puts hermes-mcp back as `hermes-tools` when
//! Hermes' own migrator replaced it, and brings a stale managed block up to
//! date at each session start.
//!
//! # Why
//!
//! `/codex-runtime codex_app_server` (hermes-agent 0.19.0,
//! `hermes_cli/codex_runtime_switch.py::apply`) re-runs Hermes' migrator, which
//! rewrites the managed block of `config.toml` with its Python callback server
//! (`python -m agent.transports.hermes_tools_mcp_server`) as `hermes-tools`
//! and drops everything `hermes-mcp migrate` wrote there (`env_vars`,
//! `approval_mode`s, the permission profile the user chose).
//!
//! # How
//!
//! Hermes fires `on_session_start` on the first turn of every new session,
//! before it spawns `codex app-server` (`agent/conversation_loop.py`,
//! `_restore_or_build_system_prompt`), for every plugin enabled in
//! `plugins.enabled`. [`plan`]/[`PluginPlan::apply`] write a small *directory*
//! plugin to `$HERMES_HOME/plugins/hermes-mcp/` (`plugin.yaml`,
//! `__init__.py` from `hermes_plugin/__init__.py`, `settings.json` with the
//! `hermes-mcp migrate` command line to re-run and the variables to unset for
//! it) and add `hermes-mcp` to `plugins.enabled` in `config.yaml`.
//!
//! On session start the plugin finds the `config.toml` that codex will read as
//! Hermes starts it: Hermes passes codex no `CODEX_HOME` of its own
//! (`agent/codex_runtime.py` builds `CodexAppServerSession` without one) and
//! spawns it with `hermes_subprocess_env()` (`tools/environments/local.py`), so
//! codex reads `$CODEX_HOME` of that environment, else `$HOME/.codex`. The
//! Codex home is therefore never stored in the plugin: a `migrate --codex-home
//! <scratch>` cannot retarget it, and such a run leaves the plugin's files as
//! they are and says what the plugin watches ([`PluginPlan::summary`]). When that
//! file has a managed block, the plugin re-runs the recorded `migrate` if
//! Hermes' Python server is in the block ([`python_server_in_block`] is the
//! same test in Rust) or if `migrate --check --json --no-plugins` reports
//! `config_toml_changed` (a new server in config.yaml, a home that started
//! using kanban): a few milliseconds and no codex process. Otherwise it does
//! nothing and logs nothing.
//!
//! The plugin files are written without following links (see
//! [`files::write_plugin_file`]): a symlink or a non-regular file where a plugin file
//! or the plugin directory goes is refused with what to remove, and its target
//! is never touched.
//!
//! A directory plugin rather than a `hermes_agent.plugins` entry point in the
//! wheel: `uv tool install` / `pipx install` / `cargo install` put hermes-mcp
//! outside Hermes' Python environment, where Hermes' `importlib.metadata`
//! scan never sees an entry point. A shell hook would work from anywhere too,
//! but needs a consent record (`shell-hooks-allowlist.json`) written on the
//! user's behalf; the plugin reads the block in-process and spawns only
//! hermes-mcp (the check, and migrate when there is something to repair).
//!
//! `config.yaml` is edited as text (PyYAML would drop the user's comments) and
//! the edit is proved like the TOML splice: the result must parse, every value
//! except `plugins.enabled` must be unchanged, and `plugins.enabled` must be
//! the old list plus (or minus) `hermes-mcp` ([`yaml_lines`]). Anything else
//! is refused with the `hermes plugins enable hermes-mcp` command as the way
//! out.
//!
//! One `migrate` run meets the plugin once: [`Request::for_migrate`] decides
//! from the options whether to install, remove or leave it;
//! [`Request::prepare`] removes it (or says what would go) or plans the
//! install before the block is written; the planned install is applied
//! ([`PluginPlan::apply`]) after it.

mod files;
pub(crate) mod yaml_lines;

use std::fs;
use std::path::{Path, PathBuf};

use super::block;
use super::write;
use crate::error::UserError;
use crate::hermes::SERVER_NAME;
use crate::hermes::sections::Sections;
use crate::hermes::{HermesConfig, HermesHome};

pub(crate) use files::is_ours;
use files::{clean_stale_temps, manifest, read_regular, refuse_links, settings, write_plugin_file};
#[cfg(test)]
use yaml_lines::str_list;
use yaml_lines::{disable_in_yaml, enable_in_yaml};

/// The plugin's name in `plugins.enabled` and its directory under `$HERMES_HOME/plugins/`.
pub(crate) const PLUGIN_NAME: &str = "hermes-mcp";
/// The module Hermes' migrator runs as `hermes-tools`.
pub(crate) const PYTHON_SERVER_MODULE: &str = "agent.transports.hermes_tools_mcp_server";
/// What migrate reports when the block it replaces had Hermes' Python server.
pub const REPLACED: &str = "Hermes' /codex-runtime replaced hermes-tools with its Python server";
/// The plugin's code (also checked by a test to agree with the constants here).
pub const PLUGIN_PY: &str = include_str!("__init__.py");
/// The plugin's settings file name inside its directory.
pub(crate) const SETTINGS_FILE: &str = "settings.json";

// ---------------------------------------------------------------- detection

/// True when the managed block `block` registers Hermes' Python callback
/// server as `hermes-tools` (its `command`/`args` name
/// [`PYTHON_SERVER_MODULE`]). A block that does not parse on its own is
/// judged by the module name alone.
pub(crate) fn python_server_in_block(block: &str) -> bool {
    if !block.contains(PYTHON_SERVER_MODULE) {
        return false;
    }
    let Ok(table) = block::parse_toml(block) else {
        return true;
    };
    let Some(server) = table
        .get("mcp_servers")
        .and_then(|s| s.get(SERVER_NAME))
        .and_then(|s| s.as_table())
    else {
        return false;
    };
    let command = server.get("command").and_then(|c| c.as_str());
    let args = server.get("args").and_then(|a| a.as_array());
    command == Some(PYTHON_SERVER_MODULE)
        || args.is_some_and(|a| a.iter().any(|v| v.as_str() == Some(PYTHON_SERVER_MODULE)))
}

/// `Some(REPLACED)` when the managed block of the `config.toml` text holds
/// Hermes' Python server as `hermes-tools` (for migrate's report).
pub fn replaced_by_hermes(config_toml: &str) -> Option<&'static str> {
    let parsed = block::take_apart(config_toml);
    python_server_in_block(&parsed.old_block).then_some(REPLACED)
}

// ---------------------------------------------------------------- set-up

/// What the plugin needs to know.
#[derive(Debug, Clone)]
pub(crate) struct PluginOptions {
    /// The resolved Hermes home (the plugin goes to `<it>/plugins/hermes-mcp/`).
    pub(crate) hermes_home: PathBuf,
    /// The `hermes-mcp` binary to re-run (the one `hermes-tools` points at).
    pub(crate) exe: PathBuf,
    /// The Codex home this migrate writes.
    pub(crate) codex_home: PathBuf,
    /// The Codex home Hermes' codex runtime reads, as migrate can tell it
    /// (`$CODEX_HOME`, else `~/.codex`: see [`RUNTIME_CODEX_HOME`]). The
    /// plugin works that out again in Hermes' own process at session start.
    pub(crate) runtime_codex_home: PathBuf,
    /// Arguments after the binary, from [`rerun_args`] (no `--codex-home`:
    /// the plugin adds the one it resolved).
    pub(crate) migrate_args: Vec<String>,
    /// Variables the plugin takes out of Hermes' environment before it runs
    /// migrate, so the re-run lists in `env_vars` what this run listed and not
    /// what Hermes happens to export: every variable `serve` reads that was not
    /// set in this run's shell, and `HERMES_HOME` when the home was not chosen
    /// explicitly (the re-run then resolves the same default home).
    pub(crate) env_unset: Vec<String>,
}

/// How the plugin finds the Codex home, for reports.
pub(crate) const RUNTIME_CODEX_HOME: &str =
    "the Codex home Hermes' codex runtime reads: $CODEX_HOME in Hermes' environment, else ~/.codex";

impl PluginOptions {
    /// Options for a `migrate` run with `args`, the resolved `home` and
    /// `codex_home`, the running binary `exe`, the Codex home Hermes' runtime
    /// reads, and the `serve` variables set in this shell that hermes-tools'
    /// `env_vars` lists for that reason.
    fn for_migrate(
        args: &super::Options,
        home: &HermesHome,
        codex_home: &Path,
        exe: &Path,
        runtime_codex_home: PathBuf,
        set_now: &[String],
    ) -> Self {
        let env_unset = crate::hermes::envvars::serve_vars()
            .map(|v| v.name)
            .filter(|n| *n != crate::hermes::envvars::CODEX_HOME && !set_now.iter().any(|s| s == n))
            .map(String::from)
            .collect();
        let mut migrate_args = rerun_args(args, home);
        // `--check`/`--dry-run` with `--no-plugins` skip codex's plugin
        // discovery to be quick (the plugin's own check does): they keep the
        // installed plugin's choice about discovery instead of calling it
        // stale for it.
        if !args.writes() && !args.plugins {
            let installed = installed_argv(&home.path);
            if installed.is_some_and(|a| !a.iter().any(|x| x == "--no-plugins")) {
                migrate_args.retain(|a| a != "--no-plugins");
            }
        }
        PluginOptions {
            hermes_home: home.path.clone(),
            exe: exe.to_path_buf(),
            codex_home: codex_home.to_path_buf(),
            runtime_codex_home,
            migrate_args,
            env_unset,
        }
    }

    /// This run writes the Codex home the plugin keeps current.
    fn writes_runtime_home(&self) -> bool {
        same_dir(&self.codex_home, &self.runtime_codex_home)
    }
}

/// The same directory, by path or (when both exist) by identity.
pub(crate) fn same_dir(a: &Path, b: &Path) -> bool {
    a == b || matches!((fs::canonicalize(a), fs::canonicalize(b)), (Ok(x), Ok(y)) if x == y)
}

/// The `argv` the installed plugin re-runs (its `settings.json`), if it has one.
pub(crate) fn installed_argv(hermes_home: &Path) -> Option<Vec<String>> {
    let text = read_regular(
        &hermes_home
            .join("plugins")
            .join(PLUGIN_NAME)
            .join(SETTINGS_FILE),
    )?;
    let doc: serde_json::Value = serde_json::from_str(&text).ok()?;
    doc.get("argv")?
        .as_array()?
        .iter()
        .map(|a| a.as_str().map(String::from))
        .collect()
}

/// The `hermes-mcp` arguments that reproduce this `migrate` run's block:
/// the home (when explicit, as an absolute `--hermes-home`), `--codex-bin`,
/// `--no-plugins`, the permission choice and `serve`'s context flags. Never the Codex home (the plugin
/// adds the one Hermes' runtime reads) nor the modes (`--dry-run`, `--check`,
/// `--remove`, `--json`); colour off.
pub(crate) fn rerun_args(args: &super::Options, home: &HermesHome) -> Vec<String> {
    let mut v = vec!["migrate".to_string()];
    if home.explicit {
        v.push("--hermes-home".into());
        v.push(home.path.to_string_lossy().into_owned());
    }
    if let Some(bin) = &args.codex_bin {
        v.push("--codex-bin".into());
        v.push(bin.to_string_lossy().into_owned());
    }
    if !args.plugins {
        v.push("--no-plugins".into());
    }
    match &args.permissions {
        None => v.push("--no-permissions".into()),
        Some(p) => {
            v.push("--permissions".into());
            v.push(p.clone());
        }
    }
    v.extend(args.serve_flags.iter().cloned());
    v.push("--color".into());
    v.push("never".into());
    v
}

/// What [`plan`] found: the files to write and the config.yaml edit.
#[derive(Debug, Clone)]
pub(crate) struct PluginPlan {
    /// `$HERMES_HOME/plugins/hermes-mcp`.
    pub(crate) plugin_dir: PathBuf,
    /// `$HERMES_HOME/config.yaml`.
    pub(crate) config_yaml: PathBuf,
    /// Every plugin file with its wanted content.
    files: Vec<(PathBuf, String)>,
    /// The files whose content differs (or that are missing).
    pub(crate) files_changed: Vec<PathBuf>,
    /// The new config.yaml text when `plugins.enabled` must gain `hermes-mcp`.
    new_config: Option<String>,
    /// The user listed `hermes-mcp` in `plugins.disabled`: files are kept
    /// current, config.yaml is left alone and the plugin does not load.
    pub(crate) disabled_by_user: bool,
    /// The Codex home the plugin keeps current (as migrate can tell it).
    pub(crate) watches: PathBuf,
    /// This run writes another Codex home (`Some(it)`): the plugin is left as
    /// it is, so a run against a scratch directory never retargets it.
    pub(crate) elsewhere: Option<PathBuf>,
    /// Our plugin is installed (its `plugin.yaml` is ours).
    pub(crate) installed: bool,
}

impl PluginPlan {
    /// Nothing to write.
    pub(crate) fn up_to_date(&self) -> bool {
        self.files_changed.is_empty() && self.new_config.is_none()
    }

    /// What the plugin does, for the report.
    fn what_it_does(&self) -> String {
        format!(
            "at each Hermes session start it re-runs this migrate when the managed block of {} is stale (Hermes' /codex-runtime put its Python server back, or config.yaml changed); it watches {RUNTIME_CODEX_HOME}",
            self.watches.join("config.toml").display()
        )
    }

    /// One line for migrate's report.
    pub(crate) fn summary(&self) -> String {
        let dir = self.plugin_dir.display();
        if let Some(other) = &self.elsewhere {
            let this = other.join("config.toml");
            let watched = self.watches.join("config.toml");
            return if self.installed {
                format!(
                    "Hermes plugin {PLUGIN_NAME} ({dir}) left as it is: it keeps {} current ({RUNTIME_CODEX_HOME}), not {}",
                    watched.display(),
                    this.display()
                )
            } else {
                format!(
                    "Hermes plugin {PLUGIN_NAME} not installed: it would keep {} current ({RUNTIME_CODEX_HOME}), not {}; run `hermes-mcp migrate` for that Codex home to install it",
                    watched.display(),
                    this.display()
                )
            };
        }
        if self.disabled_by_user {
            return format!(
                "Hermes plugin {PLUGIN_NAME} ({dir}) is in plugins.disabled of {}: Hermes' /codex-runtime will put its Python server back as hermes-tools until you run `hermes plugins enable {PLUGIN_NAME}`",
                self.config_yaml.display()
            );
        }
        let what = match (self.files_changed.is_empty(), self.new_config.is_some()) {
            (true, false) => "up to date".to_string(),
            (false, false) => "updated".to_string(),
            (_, true) => format!("installed and enabled in {}", self.config_yaml.display()),
        };
        format!(
            "Hermes plugin {PLUGIN_NAME} ({dir}) {what}: {}",
            self.what_it_does()
        )
    }

    /// The report line for `--dry-run` / `--check`.
    pub(crate) fn preview_summary(&self) -> String {
        if self.up_to_date() || self.elsewhere.is_some() || self.disabled_by_user {
            return self.summary();
        }
        let verb = if self.installed {
            "Would update"
        } else {
            "Would install"
        };
        format!(
            "{verb} the Hermes plugin {PLUGIN_NAME} ({}): {}",
            self.plugin_dir.display(),
            self.what_it_does()
        )
    }

    /// Write the plugin files (no-follow, see [`files::write_plugin_file`]), then
    /// config.yaml (atomically, each).
    pub(crate) fn apply(&self) -> anyhow::Result<()> {
        if !self.files_changed.is_empty() {
            refuse_links(&self.plugin_dir, &self.files)?;
            fs::create_dir_all(&self.plugin_dir).map_err(|e| {
                UserError::hint(
                    format!("cannot create {}: {e}", self.plugin_dir.display()),
                    "check the permissions of your Hermes home, or pass --no-hermes-hook",
                )
            })?;
            clean_stale_temps(&self.plugin_dir);
            for (path, text) in &self.files {
                if self.files_changed.contains(path) {
                    write_plugin_file(path, text)?;
                }
            }
        }
        if let Some(text) = &self.new_config {
            write::atomic_write(&write::real_target(&self.config_yaml), text)?;
        }
        Ok(())
    }
}

/// Work out what installing the plugin changes (reads, never writes).
pub(crate) fn plan(opts: &PluginOptions) -> anyhow::Result<PluginPlan> {
    let plugin_dir = opts.hermes_home.join("plugins").join(PLUGIN_NAME);
    let config_yaml = opts.hermes_home.join("config.yaml");
    let installed = is_ours(&plugin_dir);
    let mut out = PluginPlan {
        files: Vec::new(),
        files_changed: Vec::new(),
        new_config: None,
        disabled_by_user: false,
        watches: opts.runtime_codex_home.clone(),
        elsewhere: None,
        installed,
        plugin_dir,
        config_yaml,
    };
    if !opts.writes_runtime_home() {
        out.elsewhere = Some(opts.codex_home.clone());
        return Ok(out);
    }
    let dir = &out.plugin_dir;
    out.files = vec![
        (dir.join("plugin.yaml"), manifest()),
        (dir.join("__init__.py"), PLUGIN_PY.to_string()),
        (dir.join(SETTINGS_FILE), settings(opts)),
    ];
    refuse_links(dir, &out.files)?;
    out.files_changed = out
        .files
        .iter()
        .filter(|(p, text)| read_regular(p).as_deref() != Some(text.as_str()))
        .map(|(p, _)| p.clone())
        .collect();
    let text = read_config(&out.config_yaml)?;
    let config = parse_config(&out.config_yaml, &text)?;
    out.disabled_by_user = Sections::read_in_home(&config, opts.hermes_home.join(".env"))
        .plugins
        .disabled
        .iter()
        .any(|n| n == PLUGIN_NAME);
    if !out.disabled_by_user {
        out.new_config = enable_in_yaml(&text).map_err(|why| {
            UserError::hint(
                format!(
                    "cannot add {PLUGIN_NAME} to plugins.enabled in {}: {why}",
                    out.config_yaml.display()
                ),
                format!(
                    "run `hermes plugins enable {PLUGIN_NAME}` yourself and migrate again, or pass --no-hermes-hook"
                ),
            )
        })?;
    }
    Ok(out)
}

// ---------------------------------------------------------------- one migrate run

/// What one `migrate` run does with the plugin: decided from its options
/// ([`Request::for_migrate`]), carried out around the block's write.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    hermes_home: PathBuf,
    codex_home: PathBuf,
    step: Step,
}

#[derive(Debug, Clone)]
enum Step {
    /// Install or update it ([`plan`], then [`PluginPlan::apply`] after the block).
    Install(PluginOptions),
    /// Take it out; `why` when not `--remove`.
    Remove {
        why: Option<String>,
    },
    /// `--remove` for a Codex home the plugin does not keep current
    /// (`runtime` is the one it does): it stays.
    LeaveAlone {
        runtime: PathBuf,
    },
    Nothing,
}

/// What [`Request::prepare`] did or found, for the report and the write.
#[derive(Debug, Default)]
pub(crate) struct Prepared {
    /// The install to apply once the block is written.
    pub(crate) install: Option<PluginPlan>,
    /// The report line of a removal, or of a plugin left as it is.
    pub(crate) line: Option<String>,
    /// A failure, for the report's errors (never fatal).
    pub(crate) error: Option<String>,
    /// There was (or, previewing, would be) something to remove.
    pub(crate) removed: bool,
}

impl Request {
    /// The plugin's part of a `migrate` run with `args`, the resolved `home`
    /// and `codex_home`, the hermes-tools binary `exe` (`None`:
    /// `--no-hermes-tools`), and the `serve` variables set in this shell
    /// that hermes-tools' `env_vars` lists for that reason. Taken out: on
    /// `--remove` or `--no-hermes-tools` against the Codex home the plugin
    /// keeps current (it would put hermes-tools back there), or on
    /// `--no-hermes-hook` whatever the Codex home.
    pub(crate) fn for_migrate(
        args: &super::Options,
        home: &HermesHome,
        codex_home: &Path,
        exe: Option<&Path>,
        set_now: &[String],
    ) -> Request {
        let runtime_home = super::resolve_codex_home(None);
        let is_runtime_home = runtime_home.as_ref().is_ok_and(|h| same_dir(h, codex_home));
        let step = if args.remove && is_runtime_home {
            Step::Remove { why: None }
        } else if !args.hermes_hook {
            Step::Remove {
                why: Some("you passed --no-hermes-hook; after Hermes' /codex-runtime run `hermes-mcp migrate` yourself".to_string()),
            }
        } else if !args.hermes_tools && is_runtime_home {
            Step::Remove {
                why: Some(
                    "you passed --no-hermes-tools, and the plugin would put hermes-tools back"
                        .to_string(),
                ),
            }
        } else if args.remove {
            match runtime_home {
                Ok(runtime) => Step::LeaveAlone { runtime },
                Err(_) => Step::Nothing,
            }
        } else if let Some(exe) = exe {
            Step::Install(PluginOptions::for_migrate(
                args,
                home,
                codex_home,
                exe,
                runtime_home.unwrap_or_else(|_| codex_home.to_path_buf()),
                set_now,
            ))
        } else {
            Step::Nothing
        };
        Request {
            hermes_home: home.path.clone(),
            codex_home: codex_home.to_path_buf(),
            step,
        }
    }

    /// Before the block is written: remove the plugin (with `writes` false,
    /// only say what would go), or plan its install (reads only).
    pub(crate) fn prepare(self, writes: bool) -> Prepared {
        let mut out = Prepared::default();
        match self.step {
            Step::Install(opts) => match plan(&opts) {
                Ok(p) => out.install = Some(p),
                Err(e) => out.error = Some(error_line("could not set up the Hermes plugin", &e)),
            },
            Step::Remove { why } => match remove(&self.hermes_home, !writes) {
                Ok(r) => {
                    out.removed = r.removed_dir.is_some() || r.disabled_in_config;
                    out.line = Removal { why, ..r }.summary();
                }
                Err(e) => out.error = Some(error_line("could not remove the Hermes plugin", &e)),
            },
            Step::LeaveAlone { runtime } => {
                out.line = left_alone(&self.hermes_home, &runtime, &self.codex_home);
            }
            Step::Nothing => {}
        }
        out
    }
}

/// A plugin failure for the report: what failed, why, and what to do.
pub(crate) fn error_line(what: &str, e: &anyhow::Error) -> String {
    let hint = e
        .chain()
        .find_map(|c| c.downcast_ref::<UserError>())
        .and_then(|u| u.hint.as_deref());
    match hint {
        Some(h) => format!("{what}: {e:#}; {h}"),
        None => format!("{what}: {e:#}"),
    }
}

/// The report line for `--remove` against a Codex home the plugin does not
/// keep current (`runtime` is the one it does): the plugin stays.
fn left_alone(hermes_home: &Path, runtime: &Path, codex_home: &Path) -> Option<String> {
    let dir = hermes_home.join("plugins").join(PLUGIN_NAME);
    is_ours(&dir).then(|| {
        format!(
            "Hermes plugin {PLUGIN_NAME} ({}) left as it is: it keeps {} current ({RUNTIME_CODEX_HOME}), not {}; `hermes-mcp migrate --remove` for that Codex home removes it",
            dir.display(),
            runtime.join("config.toml").display(),
            codex_home.join("config.toml").display()
        )
    })
}

/// What [`remove`] did, for migrate's `--remove` report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Removal {
    pub(crate) removed_dir: Option<PathBuf>,
    pub(crate) disabled_in_config: bool,
    /// Nothing was written (`--dry-run`, `--check`): say what would happen.
    pub(crate) dry_run: bool,
    /// Why it was removed, when not `--remove` (e.g. `--no-hermes-hook`).
    pub(crate) why: Option<String>,
}

impl Removal {
    /// One line for migrate's report, when there was anything to undo.
    pub(crate) fn summary(&self) -> Option<String> {
        let (removed, disabled, took) = if self.dry_run {
            ("Would remove", " and take it out", "Would take")
        } else {
            ("Removed", " and took it out", "Took")
        };
        let why = self
            .why
            .as_deref()
            .map(|w| format!(": {w}"))
            .unwrap_or_default();
        let line = match (&self.removed_dir, self.disabled_in_config) {
            (None, false) => None,
            (Some(d), _) => Some(format!(
                "{removed} the Hermes plugin {PLUGIN_NAME} ({}){}",
                d.display(),
                if self.disabled_in_config {
                    format!("{disabled} of plugins.enabled")
                } else {
                    String::new()
                }
            )),
            (None, true) => Some(format!("{took} {PLUGIN_NAME} out of plugins.enabled")),
        };
        line.map(|l| l + &why)
    }
}

/// Undo [`PluginPlan::apply`]: delete `$HERMES_HOME/plugins/hermes-mcp/` (only when its
/// `plugin.yaml` is ours) and take `hermes-mcp` out of `plugins.enabled`.
/// With `dry_run`, only report.
pub(crate) fn remove(hermes_home: &Path, dry_run: bool) -> anyhow::Result<Removal> {
    let mut out = Removal {
        dry_run,
        ..Removal::default()
    };
    let plugin_dir = hermes_home.join("plugins").join(PLUGIN_NAME);
    if is_ours(&plugin_dir) {
        // A symlinked plugin directory: only the link goes (remove_dir_all
        // does not follow it).
        if !dry_run {
            fs::remove_dir_all(&plugin_dir).map_err(|e| {
                UserError::hint(
                    format!("cannot remove {}: {e}", plugin_dir.display()),
                    "check the permissions of your Hermes home, or remove the directory yourself",
                )
            })?;
        }
        out.removed_dir = Some(plugin_dir);
    }
    let config_yaml = hermes_home.join("config.yaml");
    let text = read_config(&config_yaml)?;
    if let Some(new) = disable_in_yaml(&text).map_err(|why| {
        UserError::hint(
            format!(
                "cannot take {PLUGIN_NAME} out of plugins.enabled in {}: {why}",
                config_yaml.display()
            ),
            format!("run `hermes plugins disable {PLUGIN_NAME}` yourself"),
        )
    })? {
        if !dry_run {
            write::atomic_write(&write::real_target(&config_yaml), &new)?;
        }
        out.disabled_in_config = true;
    }
    Ok(out)
}

/// config.yaml through the crate's one safe reader (regular files only, capped);
/// a missing file reads as empty.
fn read_config(path: &Path) -> anyhow::Result<String> {
    match crate::fs::read_to_string_capped_opt(path, crate::fs::CONFIG_CAP) {
        Ok(t) => Ok(t.unwrap_or_default()),
        Err(e) => Err(UserError::hint(
            format!("cannot read {}: {e}", path.display()),
            "check its permissions, or pass --no-hermes-hook",
        )
        .into()),
    }
}

fn parse_config(path: &Path, text: &str) -> anyhow::Result<HermesConfig> {
    HermesConfig::parse(text, path).map_err(|e| {
        UserError::hint(
            e.to_string(),
            format!(
                "fix {} (Hermes reads it too), then run migrate again",
                path.display()
            ),
        )
        .into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// [`plan`] then [`PluginPlan::apply`].
    fn install(opts: &PluginOptions) -> anyhow::Result<PluginPlan> {
        let p = plan(opts)?;
        p.apply()?;
        Ok(p)
    }

    const HERMES_BLOCK: &str = "# managed by hermes-agent \u{2014} `hermes codex-runtime migrate` regenerates this section\ndefault_permissions = \":workspace\"\n\n[mcp_servers.hermes-tools]\ncommand = \"/opt/hermes-venv/bin/python\"\nargs = [\"-m\", \"agent.transports.hermes_tools_mcp_server\"]\nstartup_timeout_sec = 30.0\n# end hermes-agent managed section\n";

    #[test]
    fn detects_hermes_python_server_only_as_hermes_tools() {
        assert!(python_server_in_block(HERMES_BLOCK));
        assert_eq!(
            replaced_by_hermes(&format!("model = \"m\"\n{HERMES_BLOCK}")),
            Some(REPLACED)
        );
        let ours = HERMES_BLOCK
            .replace("/opt/hermes-venv/bin/python", "/usr/bin/hermes-mcp")
            .replace(
                "[\"-m\", \"agent.transports.hermes_tools_mcp_server\"]",
                "[\"serve\"]",
            );
        assert!(!python_server_in_block(&ours));
        assert_eq!(replaced_by_hermes(&ours), None);
        // Another server that happens to run the module is not hermes-tools.
        let other = HERMES_BLOCK.replace("hermes-tools]", "legacy]");
        assert!(!python_server_in_block(&other));
        // Outside the block it is the user's business.
        let outside = format!(
            "{}\n[mcp_servers.hermes-tools]\ncommand = \"python\"\nargs = [\"-m\", \"{PYTHON_SERVER_MODULE}\"]\n",
            ours
        );
        assert_eq!(replaced_by_hermes(&outside), None);
        // A block that does not parse alone falls back to the module name.
        assert!(python_server_in_block(
            "[x\nargs = [\"agent.transports.hermes_tools_mcp_server\"]"
        ));
        assert!(!python_server_in_block(""));
    }

    #[test]
    fn python_plugin_agrees_with_rust_constants() {
        for needle in [
            format!("PYTHON_SERVER_MODULE = \"{PYTHON_SERVER_MODULE}\""),
            format!("SERVER_NAME = \"{SERVER_NAME}\""),
            format!("END = \"{}\"", block::END),
            format!("REPLACED = \"{REPLACED}\""),
            format!("SETTINGS_FILE = Path(__file__).resolve().with_name(\"{SETTINGS_FILE}\")"),
            "START = \"# managed by hermes-agent \\u2014 `hermes codex-runtime migrate` regenerates this section\"".to_string(),
        ] {
            assert!(PLUGIN_PY.contains(&needle), "{needle}");
        }
        assert_eq!(
            block::START,
            "# managed by hermes-agent \u{2014} `hermes codex-runtime migrate` regenerates this section"
        );
    }

    fn opts(dir: &Path) -> PluginOptions {
        PluginOptions {
            hermes_home: dir.join("hermes"),
            exe: PathBuf::from("/usr/local/bin/hermes-mcp"),
            codex_home: dir.join("codex"),
            runtime_codex_home: dir.join("codex"),
            migrate_args: vec!["migrate".into()],
            env_unset: vec!["HERMES_HOME".into()],
        }
    }

    #[test]
    fn install_is_idempotent_and_remove_undoes_it() {
        let d = tempfile::tempdir().unwrap();
        let o = opts(d.path());
        fs::create_dir_all(&o.hermes_home).unwrap();
        let yaml = "# my config\nmodel:\n  default: gpt-5\n";
        fs::write(o.hermes_home.join("config.yaml"), yaml).unwrap();
        let p = install(&o).unwrap();
        assert!(
            p.new_config.is_some() && p.files_changed.len() == 3,
            "{p:?}"
        );
        let dir = o.hermes_home.join("plugins/hermes-mcp");
        let settings: Value =
            serde_json::from_str(&fs::read_to_string(dir.join(SETTINGS_FILE)).unwrap()).unwrap();
        assert_eq!(settings["argv"][0], "/usr/local/bin/hermes-mcp");
        assert_eq!(settings["argv"][1], "migrate");
        assert_eq!(settings["env_unset"], json!(["HERMES_HOME"]));
        assert_eq!(
            fs::read_to_string(dir.join("__init__.py")).unwrap(),
            PLUGIN_PY
        );
        let new_yaml = fs::read_to_string(o.hermes_home.join("config.yaml")).unwrap();
        assert!(new_yaml.starts_with(yaml), "{new_yaml}");
        assert!(plan(&o).unwrap().up_to_date());
        assert!(plan(&o).unwrap().summary().contains("up to date"));

        let r = remove(&o.hermes_home, false).unwrap();
        assert!(r.disabled_in_config && r.removed_dir.is_some());
        assert!(!dir.exists());
        assert_eq!(
            str_list(
                &HermesConfig::from_yaml(
                    &fs::read_to_string(o.hermes_home.join("config.yaml")).unwrap()
                )
                .unwrap()
                .root,
                "enabled"
            ),
            Vec::<String>::new()
        );
    }

    #[test]
    fn plugin_files_replace_regular_files_and_refuse_anything_else() {
        let d = tempfile::tempdir().unwrap();
        let o = opts(d.path());
        fs::create_dir_all(&o.hermes_home).unwrap();
        let dir = o.hermes_home.join("plugins/hermes-mcp");
        fs::create_dir_all(&dir).unwrap();
        // A leftover temp file of a killed run goes; a regular file is replaced.
        fs::write(dir.join(".hermes-mcp.x.tmp"), "old").unwrap();
        fs::write(dir.join("plugin.yaml"), "old").unwrap();
        install(&o).unwrap();
        let names: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names.len(), 3, "{names:?}");
        assert!(
            read_regular(&dir.join("plugin.yaml"))
                .unwrap()
                .contains(PLUGIN_NAME)
        );
        // A FIFO where settings.json goes is refused, and never opened.
        fs::remove_file(dir.join(SETTINGS_FILE)).unwrap();
        crate::fs::mkfifo(&dir.join(SETTINGS_FILE));
        let e = plan(&o).unwrap_err().to_string();
        assert!(
            e.contains("is a FIFO (named pipe), not a regular file"),
            "{e}"
        );
        // A symlinked plugin directory is refused; its target stays empty.
        fs::remove_dir_all(&dir).unwrap();
        let target = d.path().join("target");
        fs::create_dir_all(&target).unwrap();
        std::os::unix::fs::symlink(&target, &dir).unwrap();
        let e = plan(&o).unwrap_err().to_string();
        assert!(e.contains("is a symbolic link"), "{e}");
        assert_eq!(fs::read_dir(&target).unwrap().count(), 0);
    }

    #[test]
    fn a_run_for_another_codex_home_leaves_the_plugin_alone() {
        let d = tempfile::tempdir().unwrap();
        let mut o = opts(d.path());
        fs::create_dir_all(&o.hermes_home).unwrap();
        install(&o).unwrap();
        let settings = fs::read(o.hermes_home.join("plugins/hermes-mcp/settings.json")).unwrap();
        o.codex_home = d.path().join("scratch");
        o.migrate_args.push("--no-plugins".into());
        let p = plan(&o).unwrap();
        assert!(p.up_to_date() && p.installed, "{p:?}");
        assert!(p.summary().contains("left as it is"), "{}", p.summary());
        p.apply().unwrap();
        assert_eq!(
            fs::read(o.hermes_home.join("plugins/hermes-mcp/settings.json")).unwrap(),
            settings
        );
    }

    #[test]
    fn user_disable_wins() {
        let d = tempfile::tempdir().unwrap();
        let o = opts(d.path());
        fs::create_dir_all(&o.hermes_home).unwrap();
        let yaml = "plugins:\n  disabled:\n  - hermes-mcp\n";
        fs::write(o.hermes_home.join("config.yaml"), yaml).unwrap();
        let p = install(&o).unwrap();
        assert!(p.disabled_by_user && p.new_config.is_none());
        assert_eq!(
            fs::read_to_string(o.hermes_home.join("config.yaml")).unwrap(),
            yaml
        );
        assert!(p.summary().contains("plugins.disabled"));
    }

    #[test]
    fn rerun_args_reproduce_the_run() {
        let args = crate::migrate::Options {
            plugins: false,
            permissions: Some(":read-only".into()),
            mode: crate::migrate::Mode::DryRun { color: true },
            ..Default::default()
        };
        let home = HermesHome {
            path: "/h".into(),
            explicit: true,
        };
        assert_eq!(
            rerun_args(&args, &home),
            [
                "migrate",
                "--hermes-home",
                "/h",
                "--no-plugins",
                "--permissions",
                ":read-only",
                "--color",
                "never"
            ]
        );
        let home = HermesHome {
            path: "/h".into(),
            explicit: false,
        };
        let args = crate::migrate::Options {
            permissions: None,
            ..Default::default()
        };
        assert_eq!(
            rerun_args(&args, &home),
            ["migrate", "--no-permissions", "--color", "never"]
        );
    }
}
