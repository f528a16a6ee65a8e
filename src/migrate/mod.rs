//! `hermes-mcp migrate`: write Hermes' MCP servers, the installed Codex
//! plugins, a default permission profile and `hermes-tools` itself into a
//! managed block of Codex's `config.toml`.
//!
//! # Usage
//!
//! `hermes-mcp migrate` reads `$HERMES_HOME/config.yaml` (`--hermes-home DIR`,
//! `--profile NAME`) and rewrites the block between Hermes' marker lines in
//! `$CODEX_HOME/config.toml` (`--codex-home DIR`; default `~/.codex`). Preview
//! with `--dry-run` (a unified diff; nothing written), gate CI with `--check`
//! (exit 0 when up to date, 1 and one line saying what is stale when migrate
//! would change the file), undo with `--remove`. The report ends with a "To
//! do:" list (export a variable, `codex mcp login NAME`), which `-q` keeps. `--json` prints the report for scripts. `--no-plugins` skips
//! asking `codex app-server` for installed plugins (`--codex-bin PATH`,
//! default `model.codex_bin` from config.yaml, else `codex` on PATH);
//! `--no-hermes-tools` leaves hermes-tools out; `--permissions PROFILE`
//! (default `:workspace`) or `--no-permissions` controls `default_permissions`.
//! It also installs a Hermes plugin that re-runs it at each Hermes session
//! start when the block is stale (see [`hermes_plugin`]); `--no-hermes-hook`
//! opts out and removes an installed one.
//! Errors exit 2 and say what to do. Secrets are never written: `${VAR}`
//! values become `env_vars`, `bearer_token_env_var` or `env_http_headers`.
//! Anything you define yourself outside the block (a server of the same name,
//! `[plugins."x"]`, `default_permissions`, `sandbox_mode`) wins and is reported
//! as preserved.
//!
//! # Design notes
//!
//! * **config.yaml is read with serde-saphyr**, configured like PyYAML: Hermes
//!   writes the file with PyYAML (YAML 1.1), so `yes`/`on` are booleans, `<<`
//!   merge keys work, `0755` is octal and duplicate keys take the last value.
//!   A YAML 1.2 reader would silently change such values.
//! * **The block is spliced in as text, not through a TOML tree.** Editing via
//!   `toml_edit` reflows bytes we do not own (CRLF → LF, BOM dropped, comments
//!   attached to removed tables lost). We locate the markers and table headers
//!   with the real TOML lexer, render only the block (with `toml_edit`, plain
//!   TOML 1.0: single-line arrays and inline tables, bare keys only for
//!   `[A-Za-z0-9_-]+`), put it before the first table so its root key stays at
//!   the root, and keep every other byte. The result is then *proved*: it must
//!   parse, the data outside the block must equal the user's data, each managed
//!   entry must read back exactly as rendered, and splicing again must give the
//!   same bytes. Anything else is refused and nothing is written.
//! * **Same markers as Hermes**, so either tool regenerates the other's block;
//!   a legacy block without an end marker ends at the first table that is not
//!   ours, and an orphan end marker (Codex's permissions picker drops the start
//!   marker) is removed. Our block carries one extra comment line listing the
//!   entries it holds (`# hermes-mcp entries = [...]`): Codex edits the file
//!   with toml_edit, which appends new tables just before our end marker (when
//!   the block is last) and new root keys after `default_permissions`; such
//!   entries are recognised, kept, and moved out of the block.
//! * **Plugins** are discovered with `codex app-server` (`plugin/list`) even on
//!   `--dry-run`/`--check`, so previews are faithful (codex may create its own
//!   state files in `CODEX_HOME` while it runs). When discovery cannot run,
//!   the plugins of the previous block are kept rather than dropped.
//! * **Writes are atomic and durable** (temp file beside the real file, fsync,
//!   rename, fsync the directory; symlinks followed; mode kept) and serialized
//!   by `$CODEX_HOME/.hermes-mcp.lock`, under which the file is read again.

pub mod block;
mod compute;
pub mod diff;
pub mod hermes_plugin;
mod loads;
pub mod passthrough;
pub mod plugins;
pub mod report;
mod stale;
pub mod translate;
pub mod write;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use serde_json::Value;

use crate::error::UserError;
use crate::hermes::SERVER_NAME;
use crate::hermes::home::expand_tilde;
use crate::hermes::sections::Sections;
use crate::hermes::{HermesConfig, HermesHome, envvars};

use compute::compute;
use report::Report;
use translate::Translation;

/// Built-in permission profiles of codex 0.169 and 0.171 (the same three).
pub(crate) const BUILTIN_PERMISSIONS: &[&str] =
    &[":read-only", ":workspace", ":danger-full-access"];

const LOCK_WAIT: Duration = Duration::from_secs(10);
const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(10);
/// How often migrate asks codex again, outside the lock, when another migrate
/// wrote config.toml meanwhile (then it asks while holding the lock).
const EARLY_TRIES: u32 = 8;

/// What to do, decided by the caller (the CLI layer builds it from flags).
#[derive(Debug, Clone)]
pub struct Options {
    /// `--hermes-home`: the Hermes home (else `$HERMES_HOME`, else `~/.hermes`).
    pub(crate) hermes_home: Option<PathBuf>,
    /// `--profile`: `<root>/profiles/NAME` as the Hermes home.
    pub(crate) profile: Option<String>,
    /// `--codex-home` (else `$CODEX_HOME`, else `~/.codex`).
    pub(crate) codex_home: Option<PathBuf>,
    /// The codex binary for plugin discovery (else `model.codex_bin`, else `codex`).
    pub(crate) codex_bin: Option<PathBuf>,
    pub(crate) mode: Mode,
    /// Take the managed block out instead of writing it.
    pub(crate) remove: bool,
    /// Discover installed Codex plugins.
    pub(crate) plugins: bool,
    /// Register this binary as `hermes-tools`.
    pub(crate) hermes_tools: bool,
    /// Install the Hermes plugin that re-runs migrate at each Hermes session
    /// start when the block is stale (only together with `hermes_tools`);
    /// false removes an installed one.
    pub(crate) hermes_hook: bool,
    /// `default_permissions` to set, unchecked (see [`BUILTIN_PERMISSIONS`]); `None` sets none.
    pub(crate) permissions: Option<String>,
    /// Flags after `serve` in hermes-tools' args (`--no-hermes-context`, `--hermes-soul`).
    pub(crate) serve_flags: Vec<String>,
}

/// Whether migrate writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Write,
    /// Write nothing; compute a unified diff (coloured or not).
    DryRun {
        color: bool,
    },
    /// Write nothing; only say whether config.toml is up to date.
    Check,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            hermes_home: None,
            profile: None,
            codex_home: None,
            codex_bin: None,
            mode: Mode::Write,
            remove: false,
            plugins: true,
            hermes_tools: true,
            hermes_hook: true,
            permissions: Some(":workspace".into()),
            serve_flags: Vec::new(),
        }
    }
}

impl Options {
    fn writes(&self) -> bool {
        self.mode == Mode::Write
    }
}

/// `hermes-mcp migrate`: plan the block and the plugin apart, then compute
/// and (in [`Mode::Write`]) write both; the caller prints the [`Report`] and
/// picks the exit status.
pub(crate) fn run(opts: &Options) -> anyhow::Result<Report> {
    let block = plan_block(opts)?;
    let plugin = plan_plugin(opts, &block.p);
    apply(opts, block, plugin)
}

fn user_error(msg: impl Into<String>, hint: impl Into<String>) -> anyhow::Error {
    UserError::hint(msg, hint).into()
}

/// `--codex-home`, else `$CODEX_HOME`, else `~/.codex`; made absolute.
pub(crate) fn resolve_codex_home(flag: Option<&Path>) -> anyhow::Result<PathBuf> {
    let p = match flag {
        Some(p) => expand_tilde(p),
        None => match envvars::get(envvars::CODEX_HOME) {
            Some(v) => expand_tilde(Path::new(&v)),
            None => std::env::home_dir()
                .filter(|h| !h.as_os_str().is_empty())
                .map(|h| h.join(".codex"))
                .ok_or_else(|| {
                    user_error(
                        "cannot find your home directory to locate ~/.codex",
                        "set CODEX_HOME or pass --codex-home DIR",
                    )
                })?,
        },
    };
    Ok(if p.is_absolute() {
        p
    } else {
        std::env::current_dir()?.join(p)
    })
}

/// The version `codex_bin --version` prints (`codex-cli 0.171.0` → `0.171.0`),
/// if it runs within a few seconds.
fn codex_version(codex_bin: &Path) -> Option<String> {
    let mut cmd = std::process::Command::new(codex_bin);
    cmd.arg("--version").env_remove("RUST_BACKTRACE");
    let out = crate::process::output_with_timeout(cmd, Duration::from_secs(5)).ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let v = text.split_whitespace().last()?;
    (out.status.success() && v.starts_with(|c: char| c.is_ascii_digit())).then(|| v.to_string())
}

/// The hint for an unknown built-in profile: the built-ins hermes-mcp checks
/// against (codex 0.169's and 0.171's), and the version of the codex found, run only now.
fn builtin_permissions_hint(codex_bin: &Path) -> String {
    let list = BUILTIN_PERMISSIONS.join(", ");
    let known = match codex_version(codex_bin) {
        Some(v) if v.starts_with("0.169.") || v.starts_with("0.171.") => {
            format!("codex {v} knows {list}")
        }
        Some(v) => format!(
            "hermes-mcp knows the built-ins of codex 0.169 and 0.171, {list}; the codex found ({}) is {v}",
            codex_bin.display()
        ),
        None => format!("the built-ins of codex 0.169 and 0.171 are {list}"),
    };
    format!(
        "{known}; a profile of your own is named without ':' and defined as [permissions.NAME] in config.toml"
    )
}

/// The permission profile asked for, checked for what codex 0.169 accepts.
fn requested_permissions(opts: &Options, codex_bin: &Path) -> anyhow::Result<Option<String>> {
    let Some(p) = &opts.permissions else {
        return Ok(None);
    };
    let p = p.trim().to_string();
    if p.starts_with(':') && !BUILTIN_PERMISSIONS.contains(&p.as_str()) {
        return Err(user_error(
            format!("unknown built-in permission profile {p:?}"),
            builtin_permissions_hint(codex_bin),
        ));
    }
    if p.is_empty() {
        return Err(user_error(
            "--permissions needs a profile name",
            "use :workspace, :read-only, :danger-full-access, a [permissions.NAME] profile, or --no-permissions",
        ));
    }
    Ok(Some(p))
}

/// Everything decided before touching config.toml.
struct Plan {
    home: HermesHome,
    config_path: PathBuf,
    codex_home: PathBuf,
    target: PathBuf,
    real: PathBuf,
    codex_bin: PathBuf,
    permissions: Option<String>,
    translations: Vec<(String, Translation)>,
    hermes_tools: Option<(String, translate::CodexServer)>,
    /// What `hermes-tools` lists in `env_vars`, and why.
    passthrough: passthrough::PassThrough,
    /// `model.openai_runtime` from config.yaml (Hermes runs codex only with `codex_app_server`).
    openai_runtime: Option<String>,
}

fn plan(args: &Options) -> anyhow::Result<Plan> {
    let home = HermesHome::resolve(args.hermes_home.as_deref(), args.profile.as_deref())
        .map_err(|e| user_error(e.to_string(), "pass --hermes-home DIR or set HERMES_HOME"))?;
    let config_path = home.config_path();
    if let Some(why) = home.unusable() {
        return Err(user_error(
            why,
            "check --hermes-home / --profile / HERMES_HOME (migrate would point hermes-tools at this directory)",
        ));
    }
    let config = HermesConfig::load(&config_path).map_err(|e| {
        user_error(
            e.to_string(),
            format!(
                "fix {} (Hermes reads it too), then run migrate again",
                config_path.display()
            ),
        )
    })?;
    let sections = Sections::read_in_home(&config, home.dotenv_path());
    let codex_home = resolve_codex_home(args.codex_home.as_deref())?;
    let target = codex_home.join("config.toml");
    let real = write::real_target(&target);
    let codex_bin = match &args.codex_bin {
        Some(p) => expand_tilde(p),
        None => sections
            .model
            .codex_bin
            .as_deref()
            .map(|s| expand_tilde(Path::new(&s)))
            .unwrap_or_else(|| PathBuf::from("codex")),
    };
    let permissions = requested_permissions(args, &codex_bin)?;

    let mut translations = Vec::new();
    match &sections.mcp_servers {
        None => {}
        Some(Value::Object(servers)) => {
            for (name, cfg) in servers {
                let t = if name == SERVER_NAME && args.hermes_tools {
                    Translation::Skipped {
                        reason: format!(
                            "the name {SERVER_NAME} is reserved for hermes-mcp itself; rename this server in config.yaml (or pass --no-hermes-tools)"
                        ),
                    }
                } else {
                    translate::translate(name, cfg)
                };
                translations.push((name.clone(), t));
            }
        }
        Some(other) => {
            return Err(user_error(
                format!(
                    "mcp_servers in {} is {}, not a mapping of server names",
                    config_path.display(),
                    crate::hermes::config::json_type(other)
                ),
                "write it as `mcp_servers:` followed by one indented `name:` entry per server",
            ));
        }
    }

    let passthrough = passthrough::choose(&home, &sections, envvars::get);
    let hermes_tools = if !args.hermes_tools {
        None
    } else {
        let exe = std::env::current_exe()
            .and_then(std::fs::canonicalize)
            .context("cannot find the path of the running hermes-mcp binary")?;
        let exe = exe
            .to_str()
            .ok_or_else(|| {
                anyhow::anyhow!("the path of hermes-mcp is not UTF-8: {}", exe.display())
            })?
            .to_string();
        let home_str = home
            .explicit
            .then(|| home.path.to_string_lossy().into_owned());
        Some((
            exe.clone(),
            translate::hermes_tools_entry(
                &exe,
                home_str.as_deref(),
                &passthrough.names,
                &args.serve_flags,
            ),
        ))
    };

    Ok(Plan {
        passthrough,
        openai_runtime: sections.model.openai_runtime.clone(),
        home,
        config_path,
        codex_home,
        target,
        real,
        codex_bin,
        permissions,
        translations,
        hermes_tools,
    })
}

/// Refuse a config.toml that is not valid TOML, saying where the problem is.
fn check_existing(path: &Path, text: &str) -> anyhow::Result<()> {
    if let Err(e) = block::parse_toml(text) {
        let in_block = block::parse_toml(&block::take_apart(text).user).is_ok();
        let hint = if in_block {
            format!(
                "the error is inside the managed block; delete the lines from `{}` to `{}` in {} and run migrate again",
                block::START,
                block::END,
                path.display()
            )
        } else {
            format!(
                "fix {} (codex cannot load it either), then run migrate again; nothing was written",
                path.display()
            )
        };
        return Err(user_error(
            format!("{} is not valid TOML: {e}", path.display()),
            hint,
        ));
    }
    Ok(())
}

/// Plugin discovery outcome.
enum Discovery {
    Found(Vec<plugins::Plugin>),
    Skipped(String),
    Failed(String),
}

fn discover(args: &Options, p: &Plan) -> Discovery {
    if !args.plugins {
        return Discovery::Skipped("--no-plugins".into());
    }
    if !p.codex_home.is_dir() {
        // Nothing can be installed yet, and dry runs must not create CODEX_HOME.
        return Discovery::Found(Vec::new());
    }
    match plugins::discover(&p.codex_bin, &p.codex_home, DISCOVERY_TIMEOUT) {
        Ok(list) => Discovery::Found(list),
        Err(e) => Discovery::Failed(e.to_string()),
    }
}

/// The file exists and has no write permission bit set.
fn is_read_only(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o222 == 0)
}

/// The block's side, before anything is written: the plan, the report's
/// start, config.toml as it is now (refused when broken) and the plugins
/// codex lists.
struct BlockPlan {
    p: Plan,
    report: Report,
    first: Option<String>,
    discovery: Discovery,
}

fn plan_block(args: &Options) -> anyhow::Result<BlockPlan> {
    let p = plan(args)?;
    let mut report = start_report(args, &p);
    // Refuse a broken file before spawning codex on it.
    let first = write::read(&p.real).map_err(|e| user_error(e.to_string(), e.hint()))?;
    if let Some(t) = &first {
        check_existing(&p.real, t)?;
        if let Some(w) = hermes_plugin::replaced_by_hermes(t) {
            report
                .warnings
                .push(format!("{w}; migrate puts hermes-mcp back"));
        }
    }
    let discovery = if args.remove {
        Discovery::Skipped("--remove".into())
    } else {
        discover(args, &p)
    };
    Ok(BlockPlan {
        p,
        report,
        first,
        discovery,
    })
}

/// The plugin's side: install, remove or leave it (decided, not done).
fn plan_plugin(args: &Options, p: &Plan) -> hermes_plugin::Request {
    hermes_plugin::Request::for_migrate(
        args,
        &p.home,
        &p.codex_home,
        p.hermes_tools
            .as_ref()
            .map(|(exe, _)| Path::new(exe.as_str())),
        &p.passthrough.set_now,
    )
}

/// Join the two: the plugin's removal (or its install's plan) first, then
/// the block previewed or written, then the plugin installed.
fn apply(args: &Options, b: BlockPlan, plugin: hermes_plugin::Request) -> anyhow::Result<Report> {
    let BlockPlan {
        p,
        mut report,
        first,
        discovery,
    } = b;
    let plugin = plugin.prepare(args.writes());
    report.hermes_hook = plugin.line;
    report.errors.extend(plugin.error);
    if !args.writes() {
        preview(
            args,
            &p,
            first.as_deref(),
            &discovery,
            plugin.install.as_ref(),
            &mut report,
        )?;
        report.changed |= plugin.removed;
        return Ok(report);
    }
    if first.is_none() && args.remove {
        return Ok(report);
    }
    write_locked(args, &p, &discovery, &mut report)?;
    if let Some(hp) = &plugin.install {
        match hp.apply() {
            Ok(()) => report.hermes_hook = Some(hp.summary()),
            Err(e) => report.errors.push(hermes_plugin::error_line(
                "could not set up the Hermes plugin",
                &e,
            )),
        }
    }
    Ok(report)
}

/// The report's paths and mode, and what config.yaml says before anything
/// is computed (no config.yaml; Hermes not running codex).
fn start_report(args: &Options, p: &Plan) -> Report {
    let mut report = Report {
        target_path: p.target.display().to_string(),
        hermes_home: p.home.path.display().to_string(),
        hermes_config: p.config_path.display().to_string(),
        codex_home: p.codex_home.display().to_string(),
        dry_run: matches!(args.mode, Mode::DryRun { .. }),
        check: args.mode == Mode::Check,
        remove: args.remove,
        ..Default::default()
    };
    if !args.remove && !p.config_path.exists() {
        report.errors.push(format!(
            "no config.yaml at {}: there are no Hermes MCP servers to migrate",
            p.config_path.display()
        ));
    }
    if !args.remove
        && p.config_path.exists()
        && p.openai_runtime.as_deref() != Some("codex_app_server")
    {
        report.warnings.push(format!(
            "model.openai_runtime is {} in {}: Hermes does not run codex, so hermes-tools serves only a codex you start yourself (Hermes' `/codex-runtime codex_app_server` turns it on)",
            p.openai_runtime.as_deref().map_or("unset (auto)".to_string(), |r| format!("{r:?}")),
            p.config_path.display()
        ));
    }
    report
}

/// `--dry-run` / `--check`: what would change (and the diff), nothing written.
fn preview(
    args: &Options,
    p: &Plan,
    first: Option<&str>,
    discovery: &Discovery,
    hook: Option<&hermes_plugin::PluginPlan>,
    report: &mut Report,
) -> anyhow::Result<()> {
    let new = compute(args, p, first, discovery, report)?;
    let old = first.unwrap_or("");
    report.config_toml_changed = new != old && !(first.is_none() && args.remove);
    report.changed = report.config_toml_changed;
    if let Some(hp) = hook {
        report.hermes_hook = Some(hp.preview_summary());
        report.changed |= !hp.up_to_date();
    }
    if report.changed {
        let hook_stale = hook.is_some_and(|hp| !hp.up_to_date());
        report.stale = stale::reasons(args, first, &new, report, hook_stale);
    }
    if report.config_toml_changed && is_read_only(&p.real) {
        report.replaced_read_only = true;
        report.notes.push(format!(
            "{} is read-only; migrate would replace it anyway, as Hermes does, and keep its mode",
            p.real.display()
        ));
    }
    if let Mode::DryRun { color } = args.mode {
        report.diff = Some(diff::unified(old, &new, &report.target_path, color));
    }
    Ok(())
}

/// Codex's strict loader must load `new` (when codex is installed), unless
/// it refuses the current text just the same: then migrate is not the cause,
/// and the answer is the warning saying what codex objects to.
fn codex_loads(p: &Plan, current: Option<&str>, new: &str) -> anyhow::Result<Option<String>> {
    let loads::Verdict::Refused(msg) = loads::verdict(&p.codex_bin, new) else {
        return Ok(None);
    };
    if let loads::Verdict::Refused(old) = loads::verdict(&p.codex_bin, current.unwrap_or("")) {
        return Ok(Some(format!(
            "codex ({}) refuses {} before and after this change: {old}",
            p.codex_bin.display(),
            p.real.display()
        )));
    }
    Err(user_error(
        format!(
            "refusing to write {}: codex ({}) could not load the result: {msg}",
            p.real.display(),
            p.codex_bin.display()
        ),
        "nothing was written; `hermes-mcp migrate --dry-run` shows the change codex refuses (please report it)",
    ))
}

/// Codex's verdict on the change migrate expects to make, asked before the
/// lock is taken (codex needs a moment; other migrates wait on the lock):
/// the text it was asked about, the new text, and the answer.
type Asked = (Option<String>, String, anyhow::Result<Option<String>>);

fn ask_codex_early(
    args: &Options,
    p: &Plan,
    discovery: &Discovery,
    report: &Report,
) -> Option<Asked> {
    let current = write::read(&p.real).ok()?;
    let mut scratch = report.clone();
    let new = compute(args, p, current.as_deref(), discovery, &mut scratch).ok()?;
    if current.as_deref() == Some(new.as_str()) {
        return None;
    }
    let answer = codex_loads(p, current.as_deref(), &new);
    Some((current, new, answer))
}

/// Under `$CODEX_HOME/.hermes-mcp.lock`: read config.toml again, compute,
/// and replace it atomically when it changes.
fn write_locked(
    args: &Options,
    p: &Plan,
    discovery: &Discovery,
    report: &mut Report,
) -> anyhow::Result<()> {
    write::ensure_dir(&p.codex_home).map_err(|e| user_error(e.to_string(), e.hint()))?;
    let base = report.clone();
    let mut early = ask_codex_early(args, p, discovery, report);
    let mut tries = 0;
    let (_lock, new) = loop {
        let lock = write::lock(&p.codex_home, LOCK_WAIT)
            .map_err(|e| user_error(e.to_string(), e.hint()))?;
        if let Some(dir) = p.real.parent() {
            write::clean_stale_temps(dir);
        }
        // Re-read under the lock: another migrate may have written meanwhile.
        let current = write::read(&p.real).map_err(|e| user_error(e.to_string(), e.hint()))?;
        *report = base.clone();
        let new = compute(args, p, current.as_deref(), discovery, report)?;
        report.changed = current.as_deref() != Some(new.as_str());
        report.config_toml_changed = report.changed;
        if !report.changed {
            return Ok(());
        }
        let answer = match early.take() {
            Some((asked, expected, answer)) if asked == current && expected == new => answer,
            // Another migrate wrote since codex was asked: ask again without
            // holding the lock (a few times), so no migrate waits on codex.
            _ if tries < EARLY_TRIES => {
                drop(lock);
                tries += 1;
                early = ask_codex_early(args, p, discovery, report);
                continue;
            }
            _ => codex_loads(p, current.as_deref(), &new),
        };
        report.warnings.extend(answer?);
        break (lock, new);
    };
    if let Some(dir) = p.real.parent() {
        write::ensure_dir(dir).map_err(|e| {
            user_error(
                e.to_string(),
                "create the directory the config.toml symlink points into",
            )
        })?;
    }
    let replaced = write::atomic_write(&p.real, &new).map_err(|e| {
        let hint = match &e {
            write::WriteError::File(crate::fs::FileError::Write { .. }) => format!(
                "nothing was changed; make {} writable and run migrate again",
                p.real.display()
            ),
            _ => e.hint(),
        };
        user_error(e.to_string(), hint)
    })?;
    if replaced.was_read_only {
        report.replaced_read_only = true;
        report.notes.push(format!(
            "{} was read-only (mode {:04o}); replaced it anyway, as Hermes does, and kept the mode",
            p.real.display(),
            replaced.mode
        ));
    }
    report.written = true;
    Ok(())
}
