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
//! `plugins.enabled`. [`plan`]/[`HookPlan::apply`] write a small *directory*
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
//! they are and says what the plugin watches ([`HookPlan::summary`]). When that
//! file has a managed block, the plugin re-runs the recorded `migrate` if
//! Hermes' Python server is in the block ([`python_server_in_block`] is the
//! same test in Rust) or if `migrate --check --json --no-plugins` reports
//! `config_toml_changed` (a new server in config.yaml, a home that started
//! using kanban): a few milliseconds and no codex process. Otherwise it does
//! nothing and logs nothing.
//!
//! The plugin files are written without following links (see
//! [`write_plugin_file`]): a symlink or a non-regular file where a plugin file
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
//! the old list plus (or minus) `hermes-mcp`. Anything else is refused with
//! the `hermes plugins enable hermes-mcp` command as the way out.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::block;
use super::write;
use crate::error::UserError;
use crate::hermes::SERVER_NAME;
use crate::hermes::config::ConfigError;
use crate::hermes::{HermesConfig, HermesHome};

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
pub(crate) struct HookOptions {
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

impl HookOptions {
    /// Options for a `migrate` run with `args`, the resolved `home` and
    /// `codex_home`, the running binary `exe`, and the `serve` variables set
    /// in this shell that hermes-tools' `env_vars` lists for that reason.
    pub(crate) fn for_migrate(
        args: &super::Options,
        home: &HermesHome,
        codex_home: &Path,
        exe: &Path,
        set_now: &[String],
    ) -> Self {
        let env_unset = crate::hermes::envvars::serve_vars()
            .map(|v| v.name)
            .filter(|n| *n != crate::hermes::envvars::CODEX_HOME && !set_now.iter().any(|s| s == n))
            .map(String::from)
            .collect();
        HookOptions {
            hermes_home: home.path.clone(),
            exe: exe.to_path_buf(),
            codex_home: codex_home.to_path_buf(),
            runtime_codex_home: super::resolve_codex_home(None)
                .unwrap_or_else(|_| codex_home.to_path_buf()),
            migrate_args: rerun_args(args, home),
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

/// The `hermes-mcp` arguments that reproduce this `migrate` run's block:
/// the home (when explicit, as an absolute `--hermes-home`), `--codex-bin`,
/// `--no-plugins` and the permission choice. Never the Codex home (the plugin
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
    v.push("--color".into());
    v.push("never".into());
    v
}

/// What [`plan`] found: the files to write and the config.yaml edit.
#[derive(Debug, Clone)]
pub(crate) struct HookPlan {
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

impl HookPlan {
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

    /// Write the plugin files (no-follow, see [`write_plugin_file`]), then
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

/// The plugin's `plugin.yaml`.
fn manifest() -> String {
    format!(
        "name: {PLUGIN_NAME}\nversion: \"{}\"\ndescription: \"Keeps Codex's hermes-tools pointing at hermes-mcp after /codex-runtime (written by `hermes-mcp migrate`).\"\nauthor: hermes-mcp\nhooks:\n  - on_session_start\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// The plugin's `settings.json`: the command line to re-run (the plugin adds
/// `--codex-home` and, for its staleness check, `--check --json
/// --no-plugins`) and the variables to unset for it.
fn settings(opts: &HookOptions) -> String {
    let mut argv = vec![opts.exe.to_string_lossy().into_owned()];
    argv.extend(opts.migrate_args.iter().cloned());
    let doc = json!({
        "argv": argv,
        "env_unset": opts.env_unset,
        "written_by": concat!("hermes-mcp ", env!("CARGO_PKG_VERSION")),
    });
    serde_json::to_string_pretty(&doc).expect("json") + "\n"
}

/// `plugin.yaml` is the one `migrate` writes (so the directory is ours to
/// update or remove).
pub(crate) fn is_ours(plugin_dir: &Path) -> bool {
    read_regular(&plugin_dir.join("plugin.yaml"))
        .is_some_and(|t| t.contains("written by `hermes-mcp migrate`"))
}

/// Work out what installing the plugin changes (reads, never writes).
pub(crate) fn plan(opts: &HookOptions) -> anyhow::Result<HookPlan> {
    let plugin_dir = opts.hermes_home.join("plugins").join(PLUGIN_NAME);
    let config_yaml = opts.hermes_home.join("config.yaml");
    let installed = is_ours(&plugin_dir);
    let mut out = HookPlan {
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
    out.disabled_by_user = str_list(&config.root, "disabled")
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

// ---------------------------------------------------------------- plugin files

/// Prefix and suffix of the temp files the plugin files are written through.
const TMP_PREFIX: &str = ".hermes-mcp.";
const TMP_SUFFIX: &str = ".tmp";

/// Refuse a plugin directory that is a symlink (or not a directory) and a
/// plugin file that is a symlink or not a regular file: migrate writes its
/// plugin only as a real directory of regular files and never through a
/// link, so a link planted there cannot make it overwrite the link's target.
/// Refusing (rather than replacing the link) leaves whatever the user set up
/// as it is; the error says what to remove.
fn refuse_links(plugin_dir: &Path, files: &[(PathBuf, String)]) -> anyhow::Result<()> {
    let check = |path: &Path, want_dir: bool| -> anyhow::Result<()> {
        let Ok(m) = fs::symlink_metadata(path) else {
            return Ok(());
        };
        let ft = m.file_type();
        if ft.is_symlink() {
            let target = fs::read_link(path)
                .map(|t| t.display().to_string())
                .unwrap_or_else(|_| "?".into());
            return Err(UserError::hint(
                format!(
                    "{} is a symbolic link (to {target}): migrate writes the Hermes plugin only as regular files, never through a link",
                    path.display()
                ),
                format!(
                    "nothing was written there and {target} was not touched; remove the link (`rm {}`) and run migrate again, or pass --no-hermes-hook",
                    path.display()
                ),
            )
            .into());
        }
        if (want_dir && !ft.is_dir()) || (!want_dir && !ft.is_file()) {
            return Err(UserError::hint(
                format!(
                    "{} is {}, not {}",
                    path.display(),
                    crate::fs::kind_name(&ft),
                    if want_dir { "a directory" } else { "a regular file" }
                ),
                "nothing was written there; remove it and run migrate again, or pass --no-hermes-hook",
            )
            .into());
        }
        Ok(())
    };
    check(plugin_dir, true)?;
    for (p, _) in files {
        check(p, false)?;
    }
    Ok(())
}

/// Replace one plugin file atomically without following a link: a temp file
/// in the plugin directory, fsynced, renamed over the name (a rename replaces
/// the directory entry itself, never what a link points to), then the
/// directory fsynced. The mode of the file it replaces is kept (0600 for a
/// new one).
fn write_plugin_file(path: &Path, text: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::PermissionsExt as _;
    let dir = path.parent().unwrap_or(Path::new("."));
    let err = |e: std::io::Error| {
        UserError::hint(
            format!("cannot write {}: {e}", path.display()),
            "check the permissions of your Hermes home, or pass --no-hermes-hook",
        )
    };
    let mode = fs::symlink_metadata(path)
        .ok()
        .filter(|m| m.is_file())
        .map_or(0o600, |m| m.permissions().mode() & 0o7777);
    let mut tmp = tempfile::Builder::new()
        .prefix(TMP_PREFIX)
        .suffix(TMP_SUFFIX)
        .tempfile_in(dir)
        .map_err(err)?;
    tmp.write_all(text.as_bytes()).map_err(err)?;
    tmp.as_file()
        .set_permissions(fs::Permissions::from_mode(mode))
        .map_err(err)?;
    tmp.as_file().sync_all().map_err(err)?;
    // Checked again right before the rename.
    refuse_links(dir, &[(path.to_path_buf(), String::new())])?;
    tmp.persist(path).map_err(|e| err(e.error))?;
    fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(err)?;
    Ok(())
}

/// Temp files a killed migrate left in the plugin directory.
fn clean_stale_temps(dir: &Path) {
    for e in fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = e.file_name();
        let n = name.to_string_lossy();
        if n.starts_with(TMP_PREFIX)
            && n.ends_with(TMP_SUFFIX)
            && e.file_type().is_ok_and(|t| t.is_file())
        {
            let _ = fs::remove_file(e.path());
        }
    }
}

/// The report line for `--remove` against a Codex home the plugin does not
/// keep current (`runtime` is the one it does): the plugin stays.
pub(crate) fn left_alone(hermes_home: &Path, runtime: &Path, codex_home: &Path) -> Option<String> {
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

/// Undo [`install`]: delete `$HERMES_HOME/plugins/hermes-mcp/` (only when its
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

/// A plugin file's text, when it is a readable regular file (a FIFO or device
/// planted there is treated as missing, never read).
fn read_regular(path: &Path) -> Option<String> {
    crate::fs::read_to_string_capped_opt(path, crate::fs::CONFIG_CAP)
        .ok()
        .flatten()
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

// ---------------------------------------------------------------- config.yaml text edits

/// `plugins.<key>` as a list of strings (empty when absent or not a list).
pub(crate) fn str_list(root: &Value, key: &str) -> Vec<String> {
    root.get("plugins")
        .and_then(|p| p.get(key))
        .and_then(|v| v.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// The document without `plugins.enabled` (and without an emptied `plugins`).
fn without_enabled(mut root: Value) -> Value {
    if let Some(obj) = root.as_object_mut() {
        let drop_plugins = match obj.get_mut("plugins") {
            Some(Value::Object(p)) => {
                p.remove("enabled");
                p.is_empty()
            }
            Some(Value::Null) => true,
            _ => false,
        };
        if drop_plugins {
            obj.remove("plugins");
        }
    }
    root
}

/// Why `plugins.enabled` could not be edited in place; the caller adds the
/// hint (enable the plugin by hand, or run with `--no-hermes-hook`).
#[derive(Debug, thiserror::Error)]
pub(crate) enum YamlEditError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("the edited file would not parse: {0}")]
    EditUnparsable(ConfigError),
    #[error("the edit would not give the expected plugins.enabled list")]
    WrongList,
    #[error("the edit would change other settings")]
    OtherSettings,
    #[error("plugins is not written as an indented mapping")]
    PluginsNotMapping,
    #[error("plugins.enabled is not written as a list")]
    EnabledNotList,
    #[error("could not find an entry to remove safely")]
    NoEntry,
}

/// Prove an edit: `after` parses, equals `before` outside `plugins.enabled`,
/// and its `plugins.enabled` is `want(before's list)`.
fn verify(
    before: &str,
    after: &str,
    want: impl Fn(Vec<String>) -> Vec<String>,
) -> Result<(), YamlEditError> {
    let parse = |t: &str| HermesConfig::from_yaml(t).map(|c| c.root);
    let b = parse(before)?;
    let a = parse(after).map_err(YamlEditError::EditUnparsable)?;
    let wanted = want(str_list(&b, "enabled"));
    // An emptied list may be left as `enabled:` (null): Hermes reads both as nothing enabled.
    let enabled_ok = wanted.is_empty()
        || a.get("plugins")
            .and_then(|p| p.get("enabled"))
            .is_some_and(|v| v.is_array());
    if !enabled_ok || str_list(&a, "enabled") != wanted {
        return Err(YamlEditError::WrongList);
    }
    if without_enabled(a) != without_enabled(b) {
        return Err(YamlEditError::OtherSettings);
    }
    Ok(())
}

fn newline(text: &str) -> &'static str {
    if text.contains("\r\n") { "\r\n" } else { "\n" }
}

/// A line's content without its line ending and without a trailing ` # comment`.
fn content(line: &str) -> &str {
    let l = line.trim_end_matches(['\n', '\r']);
    let mut in_quote: Option<char> = None;
    let mut prev_space = true;
    for (i, c) in l.char_indices() {
        match (in_quote, c) {
            (None, '\'' | '"') => in_quote = Some(c),
            (Some(q), c) if c == q => in_quote = None,
            (None, '#') if prev_space => return l[..i].trim_end(),
            _ => {}
        }
        prev_space = c == ' ' || c == '\t';
    }
    l.trim_end()
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// `key: rest` at exactly `indent` spaces; returns `rest` (comment stripped, trimmed).
fn key_line<'a>(line: &'a str, indent: usize, key: &str) -> Option<&'a str> {
    let c = content(line);
    if indent_of(c) != indent {
        return None;
    }
    let after = c[indent..]
        .strip_prefix(key)?
        .trim_start_matches([' ', '\t']);
    let rest = after.strip_prefix(':')?;
    (rest.is_empty() || rest.starts_with([' ', '\t'])).then(|| rest.trim())
}

fn is_blank_or_comment(line: &str) -> bool {
    content(line).trim().is_empty()
}

/// Add `hermes-mcp` to `plugins.enabled`; `Ok(None)` when it is already there.
pub(crate) fn enable_in_yaml(text: &str) -> Result<Option<String>, YamlEditError> {
    let root = HermesConfig::from_yaml(text)?.root;
    if str_list(&root, "enabled").iter().any(|n| n == PLUGIN_NAME) {
        return Ok(None);
    }
    let nl = newline(text);
    let mut lines: Vec<String> = text.split_inclusive('\n').map(String::from).collect();
    let item = |indent: usize| format!("{}- {PLUGIN_NAME}{nl}", " ".repeat(indent));
    let fresh = format!("plugins:{nl}  enabled:{nl}  - {PLUGIN_NAME}{nl}");

    match lines
        .iter()
        .position(|l| key_line(l, 0, "plugins").is_some())
    {
        None => {
            if let Some(last) = lines.last_mut()
                && !last.ends_with('\n')
            {
                last.push_str(nl);
            }
            lines.push(fresh);
        }
        Some(p) => {
            let rest = key_line(&lines[p], 0, "plugins").unwrap_or_default();
            if matches!(rest, "{}" | "null" | "~") {
                lines[p] = fresh;
            } else if !rest.is_empty() {
                return Err(YamlEditError::PluginsNotMapping);
            } else {
                // The mapping's lines: up to the next line that starts at column 0.
                let end = (p + 1..lines.len())
                    .find(|&i| !is_blank_or_comment(&lines[i]) && indent_of(&lines[i]) == 0)
                    .unwrap_or(lines.len());
                let child_indent = (p + 1..end)
                    .find(|&i| !is_blank_or_comment(&lines[i]))
                    .map(|i| indent_of(&lines[i]))
                    .unwrap_or(2);
                let enabled =
                    (p + 1..end).find(|&i| key_line(&lines[i], child_indent, "enabled").is_some());
                match enabled {
                    None => {
                        let pad = " ".repeat(child_indent);
                        lines.insert(p + 1, format!("{pad}enabled:{nl}{}", item(child_indent)));
                    }
                    Some(e) => {
                        let rest = key_line(&lines[e], child_indent, "enabled").unwrap_or_default();
                        if rest.is_empty() || rest == "null" || rest == "~" {
                            let first_item = (e + 1..end)
                                .find(|&i| !is_blank_or_comment(&lines[i]))
                                .filter(|&i| {
                                    let c = content(&lines[i]);
                                    indent_of(c) >= child_indent && c.trim_start().starts_with('-')
                                });
                            match first_item {
                                Some(i) => {
                                    // Append after the sequence's last line, as `hermes plugins enable` does.
                                    let ind = indent_of(&lines[i]);
                                    let mut last = i;
                                    for (j, l) in lines.iter().enumerate().take(end).skip(i + 1) {
                                        if is_blank_or_comment(l) {
                                            continue;
                                        }
                                        let c = content(l);
                                        if indent_of(c) > ind
                                            || indent_of(c) == ind
                                                && c.trim_start().starts_with('-')
                                        {
                                            last = j;
                                        } else {
                                            break;
                                        }
                                    }
                                    lines.insert(last + 1, item(ind));
                                }
                                None => {
                                    let c = content(&lines[e]).to_string();
                                    let head = c.split(':').next().unwrap_or("").to_string();
                                    let tail = &lines[e][c.len()..];
                                    lines[e] = format!("{head}:{tail}");
                                    if !lines[e].ends_with('\n') {
                                        lines[e].push_str(nl);
                                    }
                                    lines.insert(e + 1, item(child_indent));
                                }
                            }
                        } else if rest.starts_with('[') && rest.ends_with(']') {
                            let c = content(&lines[e]).to_string();
                            let inner = rest[1..rest.len() - 1].trim();
                            let list = if inner.is_empty() {
                                format!("[{PLUGIN_NAME}]")
                            } else {
                                format!("[{inner}, {PLUGIN_NAME}]")
                            };
                            let new_c = format!("{}{list}", &c[..c.len() - rest.len()]);
                            let tail = lines[e][c.len()..].to_string();
                            lines[e] = new_c + &tail;
                        } else {
                            return Err(YamlEditError::EnabledNotList);
                        }
                    }
                }
            }
        }
    }
    let out: String = lines.concat();
    verify(text, &out, |mut l| {
        l.push(PLUGIN_NAME.to_string());
        l
    })?;
    Ok(Some(out))
}

/// Take `hermes-mcp` out of `plugins.enabled`; `Ok(None)` when it is not there.
pub(crate) fn disable_in_yaml(text: &str) -> Result<Option<String>, YamlEditError> {
    let root = HermesConfig::from_yaml(text)?.root;
    if !str_list(&root, "enabled").iter().any(|n| n == PLUGIN_NAME) {
        return Ok(None);
    }
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let want = |l: Vec<String>| -> Vec<String> {
        let mut l = l;
        if let Some(i) = l.iter().position(|n| n == PLUGIN_NAME) {
            l.remove(i);
        }
        l
    };
    let names = [
        PLUGIN_NAME.to_string(),
        format!("\"{PLUGIN_NAME}\""),
        format!("'{PLUGIN_NAME}'"),
    ];
    for (i, line) in lines.iter().enumerate() {
        let c = content(line).trim();
        // A block-sequence item of its own.
        if c.strip_prefix('-')
            .map(str::trim)
            .is_some_and(|n| names.iter().any(|x| x == n))
        {
            let out: String = lines
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, l)| *l)
                .collect();
            if verify(text, &out, want).is_ok() {
                return Ok(Some(out));
            }
        }
        // An element of a flow list.
        for n in &names {
            for (from, to) in [
                (format!(", {n}]"), "]".to_string()),
                (format!("[{n}, "), "[".to_string()),
                (format!(", {n},"), ",".to_string()),
                (format!("[{n}]"), "[]".to_string()),
            ] {
                if line.contains(&from) {
                    let mut out_lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
                    out_lines[i] = line.replacen(&from, &to, 1);
                    let out = out_lines.concat();
                    if verify(text, &out, want).is_ok() {
                        return Ok(Some(out));
                    }
                }
            }
        }
    }
    Err(YamlEditError::NoEntry)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`plan`] then [`HookPlan::apply`].
    fn install(opts: &HookOptions) -> anyhow::Result<HookPlan> {
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

    fn enabled(text: &str) -> Vec<String> {
        str_list(&HermesConfig::from_yaml(text).unwrap().root, "enabled")
    }

    #[test]
    fn enables_in_every_shape_hermes_writes() {
        let cases = [
            ("", "plugins:\n  enabled:\n  - hermes-mcp\n"),
            (
                "model:\n  default: x",
                "model:\n  default: x\nplugins:\n  enabled:\n  - hermes-mcp\n",
            ),
            (
                "plugins: {}\nx: 1\n",
                "plugins:\n  enabled:\n  - hermes-mcp\nx: 1\n",
            ),
            (
                "plugins:\nx: 1\n",
                "plugins:\n  enabled:\n  - hermes-mcp\nx: 1\n",
            ),
            (
                "# c\nplugins:\n  enabled:\n  - a  # mine\n  - b\n  disabled: []\nx: 1\n",
                "# c\nplugins:\n  enabled:\n  - a  # mine\n  - b\n  - hermes-mcp\n  disabled: []\nx: 1\n",
            ),
            (
                "plugins:\n    enabled:\n        - a\n",
                "plugins:\n    enabled:\n        - a\n        - hermes-mcp\n",
            ),
            (
                "plugins:\n  enabled: []\n",
                "plugins:\n  enabled: [hermes-mcp]\n",
            ),
            (
                "plugins:\n  enabled: [a, b] # two\n",
                "plugins:\n  enabled: [a, b, hermes-mcp] # two\n",
            ),
            (
                "plugins:\n  enabled:\n  disabled: [z]\n",
                "plugins:\n  enabled:\n  - hermes-mcp\n  disabled: [z]\n",
            ),
            (
                "plugins:\n  disabled: [z]\n",
                "plugins:\n  enabled:\n  - hermes-mcp\n  disabled: [z]\n",
            ),
            (
                "a: 1\r\nplugins:\r\n  enabled:\r\n  - a\r\n",
                "a: 1\r\nplugins:\r\n  enabled:\r\n  - a\r\n  - hermes-mcp\r\n",
            ),
        ];
        for (before, after) in cases {
            let got = enable_in_yaml(before).unwrap_or_else(|e| panic!("{before:?}: {e}"));
            assert_eq!(got.as_deref(), Some(after), "{before:?}");
            assert!(enabled(after).contains(&PLUGIN_NAME.to_string()));
            assert_eq!(
                enable_in_yaml(after).unwrap(),
                None,
                "idempotent: {after:?}"
            );
            let back = disable_in_yaml(after).unwrap().unwrap();
            assert_eq!(enabled(&back), enabled(before), "{after:?} -> {back:?}");
            assert_eq!(disable_in_yaml(&back).unwrap(), None);
        }
    }

    #[test]
    fn refuses_edits_it_cannot_prove() {
        for text in [
            "plugins: {enabled: [a]}\n",
            "plugins:\n  enabled: a\n",
            "plugins: [a]\n",
            "\"plugins\":\n  enabled: [a]\n",
        ] {
            assert!(enable_in_yaml(text).is_err(), "{text:?}");
        }
    }

    fn opts(dir: &Path) -> HookOptions {
        HookOptions {
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
            enabled(&fs::read_to_string(o.hermes_home.join("config.yaml")).unwrap()),
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
        let fifo = std::ffi::CString::new(dir.join(SETTINGS_FILE).to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
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
