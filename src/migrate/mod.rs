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
pub mod diff;
pub mod hermes_plugin;
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
use crate::hermes::{HermesConfig, HermesHome, envvars};

use block::BlockContent;
use report::{Report, ServerReport};
use translate::{TomlVal, Translation};

/// Built-in permission profiles of codex 0.169.
pub(crate) const BUILTIN_PERMISSIONS: &[&str] =
    &[":read-only", ":workspace", ":danger-full-access"];

const LOCK_WAIT: Duration = Duration::from_secs(10);
const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(10);

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
        }
    }
}

impl Options {
    fn writes(&self) -> bool {
        self.mode == Mode::Write
    }
}

/// `hermes-mcp migrate`: plan, compute and (in [`Mode::Write`]) write; the
/// caller prints the [`Report`] and picks the exit status.
pub(crate) fn run(opts: &Options) -> anyhow::Result<Report> {
    execute(opts)
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
/// against (codex 0.169's), and the version of the codex found, run only now.
fn builtin_permissions_hint(codex_bin: &Path) -> String {
    let list = BUILTIN_PERMISSIONS.join(", ");
    let known = match codex_version(codex_bin) {
        Some(v) if v.starts_with("0.169.") => format!("codex {v} knows {list}"),
        Some(v) => format!(
            "hermes-mcp knows the built-ins of codex 0.169, {list}; the codex found ({}) is {v}",
            codex_bin.display()
        ),
        None => format!("the built-ins of codex 0.169 are {list}"),
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
    /// The Hermes plugin to keep installed (`Options::hermes_hook`).
    hook: Option<hermes_plugin::HookOptions>,
}

fn plan(args: &Options) -> anyhow::Result<Plan> {
    let home = HermesHome::resolve(args.hermes_home.as_deref(), args.profile.as_deref())
        .map_err(|e| user_error(e.to_string(), "pass --hermes-home DIR or set HERMES_HOME"))?;
    let config_path = home.config_path();
    if home.explicit && !home.path.is_dir() {
        return Err(user_error(
            format!("the Hermes home {} does not exist", home.path.display()),
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
    let codex_home = resolve_codex_home(args.codex_home.as_deref())?;
    let target = codex_home.join("config.toml");
    let real = write::real_target(&target);
    let codex_bin = match &args.codex_bin {
        Some(p) => expand_tilde(p),
        None => config
            .str("model.codex_bin")
            .map(|s| expand_tilde(Path::new(&s)))
            .unwrap_or_else(|| PathBuf::from("codex")),
    };
    let permissions = requested_permissions(args, &codex_bin)?;

    let mut translations = Vec::new();
    match config.get("mcp_servers") {
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

    let passthrough = passthrough::choose(&home, &config, envvars::get);
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
            translate::hermes_tools_entry(&exe, home_str.as_deref(), &passthrough.names),
        ))
    };

    let hook = match &hermes_tools {
        Some((exe, _)) if args.hermes_hook && !args.remove => {
            Some(hermes_plugin::HookOptions::for_migrate(
                args,
                &home,
                &codex_home,
                Path::new(exe),
                &passthrough.set_now,
            ))
        }
        _ => None,
    };
    Ok(Plan {
        hook,
        passthrough,
        openai_runtime: config.str("model.openai_runtime"),
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

/// Compute the new file text for `old` (None: no file) and fill the report.
fn compute(
    args: &Options,
    p: &Plan,
    old: Option<&str>,
    discovery: &Discovery,
    report: &mut Report,
) -> anyhow::Result<String> {
    let old_text = old.unwrap_or("");
    if old.is_some() {
        check_existing(&p.real, old_text)?;
    }
    let parsed = block::take_apart(old_text);
    report_old_blocks(p, &parsed, report);
    if args.remove {
        return remove_block(p, &parsed, old_text, report);
    }
    let user = UserFile::parse(p, &parsed)?;
    let mut content = BlockContent::default();
    add_servers(p, &user, report, &mut content);
    add_hermes_tools(p, &user, report, &mut content);
    content.servers.sort_by(|a, b| a.0.cmp(&b.0));
    if !content.servers.is_empty() && !user.extensible("mcp_servers") {
        return Err(user_error(
            format!(
                "{} sets `mcp_servers` as a single value (`mcp_servers = {{ ... }}`), which cannot be extended with [mcp_servers.NAME] tables",
                p.real.display()
            ),
            "rewrite it as one [mcp_servers.NAME] table per server, then run migrate again (nothing was written)",
        ));
    }
    add_plugins(discovery, &parsed, &user, report, &mut content);
    if !content.plugins.is_empty() && !user.extensible("plugins") {
        return Err(user_error(
            format!(
                "{} sets `plugins` as a single value, which cannot be extended with [plugins.\"ID\"] tables",
                p.real.display()
            ),
            "rewrite it as [plugins.\"ID\"] tables or pass --no-plugins (nothing was written)",
        ));
    }
    add_permissions(p, &user, report, &mut content)?;
    report.migrated = content.servers.iter().map(|(n, _)| n.clone()).collect();
    splice(p, &parsed, &content)
}

/// What the old file held besides the user's text: blocks, orphan end
/// markers, entries someone added inside the block.
fn report_old_blocks(p: &Plan, parsed: &block::Parsed, report: &mut Report) {
    if parsed.blocks > 1 {
        report.notes.push(format!(
            "found {} managed blocks in {}; merged them into one",
            parsed.blocks,
            p.real.display()
        ));
    }
    report.replaced_blocks = parsed.blocks;
    report.removed_orphan_end_markers = parsed.orphan_ends;
    report.kept_from_old_block = parsed.kept_from_block.clone();
}

/// `--remove`: the user's text alone, with the block's plugin entries kept
/// outside it (Codex counts a plugin as installed only with one).
fn remove_block(
    p: &Plan,
    parsed: &block::Parsed,
    old_text: &str,
    report: &mut Report,
) -> anyhow::Result<String> {
    if parsed.blocks + parsed.orphan_ends == 0 {
        return Ok(old_text.to_string());
    }
    let mut new = block::removed(parsed);
    let user = block::parse_toml(&new).map_err(|e| {
        user_error(
            format!("removing the managed block would leave invalid TOML: {e}"),
            format!("nothing was written; edit {} by hand", p.real.display()),
        )
    })?;
    let user_plugins = user.get("plugins");
    let plugins_is_table = user_plugins.is_none_or(toml::Value::is_table);
    let kept: Vec<plugins::Plugin> = previous_plugins(&parsed.old_block)
        .into_iter()
        .filter(|pl| {
            !user_plugins
                .and_then(toml::Value::as_table)
                .is_some_and(|t| t.contains_key(&pl.id))
        })
        .collect();
    if kept.is_empty() || !plugins_is_table {
        return Ok(new);
    }
    let nl = if parsed.framing.crlf { "\r\n" } else { "\n" };
    if !new.is_empty() {
        if !new.ends_with('\n') {
            new.push_str(nl);
        }
        new.push_str(nl);
    }
    for (i, pl) in kept.iter().enumerate() {
        if i > 0 {
            new.push_str(nl);
        }
        new.push_str(&format!(
            "[plugins.{}]{nl}enabled = {}{nl}",
            block::key(&pl.id),
            pl.enabled
        ));
        report.plugins.kept_from_previous_block.push(pl.id.clone());
    }
    block::parse_toml(&new).map_err(|e| {
        user_error(
            format!("keeping the block's plugins outside it would leave invalid TOML: {e}"),
            format!("nothing was written; edit {} by hand", p.real.display()),
        )
    })?;
    Ok(new)
}

/// The user's part of config.toml (everything outside the managed block),
/// as data and as a document.
struct UserFile {
    table: toml::Table,
    doc: toml_edit::DocumentMut,
}

impl UserFile {
    fn parse(p: &Plan, parsed: &block::Parsed) -> anyhow::Result<UserFile> {
        let table = block::parse_toml(&parsed.user).map_err(|e| {
            user_error(
                format!(
                    "{} without its managed block is not valid TOML: {e}",
                    p.real.display()
                ),
                "a marker line may have been moved or deleted; fix the file by hand (nothing was written)",
            )
        })?;
        let doc = parsed
            .user
            .parse()
            .map_err(|e| anyhow::anyhow!("config.toml does not parse: {e}"))?;
        Ok(UserFile { table, doc })
    }

    /// The user defines `[parent.k]` (or `parent.k = ...`) themselves.
    fn has(&self, parent: &str, k: &str) -> bool {
        self.table
            .get(parent)
            .and_then(toml::Value::as_table)
            .is_some_and(|t| t.contains_key(k))
    }

    /// `[parent.NAME]` tables can be added: `parent` is absent or a table
    /// (not `parent = { ... }`).
    fn extensible(&self, parent: &str) -> bool {
        self.doc.get(parent).is_none_or(toml_edit::Item::is_table)
    }
}

/// Hermes' servers: into the block, unless the user defines one of the same
/// name outside it; skipped ones are reported as errors.
fn add_servers(p: &Plan, user: &UserFile, report: &mut Report, content: &mut BlockContent) {
    for (name, t) in &p.translations {
        match t {
            Translation::Ok {
                server,
                transport,
                notes,
                actions,
            } => {
                if !notes.is_empty() {
                    report
                        .skipped_keys_per_server
                        .insert(name.clone(), notes.clone());
                }
                let status = if user.has("mcp_servers", name) {
                    report.preserved_user_servers.push(name.clone());
                    report
                        .preserved_user_entries
                        .push(format!("[mcp_servers.{}]", block::key(name)));
                    "preserved"
                } else {
                    content.servers.push((name.clone(), server.clone()));
                    "migrated"
                };
                report.servers.push(ServerReport {
                    name: name.clone(),
                    status,
                    transport: Some(transport),
                    skipped_keys: notes.clone(),
                    actions: if status == "migrated" {
                        actions.clone()
                    } else {
                        Vec::new()
                    },
                    reason: (status == "preserved").then(|| {
                        "config.toml defines this server outside the managed block; yours is kept".into()
                    }),
                });
            }
            Translation::Skipped { reason } => {
                report
                    .errors
                    .push(format!("server '{name}' skipped: {reason}"));
                report.servers.push(ServerReport {
                    name: name.clone(),
                    status: "skipped",
                    reason: Some(reason.clone()),
                    ..Default::default()
                });
            }
        }
    }
}

/// `hermes-tools` itself, unless `--no-hermes-tools` or the user defines it.
fn add_hermes_tools(p: &Plan, user: &UserFile, report: &mut Report, content: &mut BlockContent) {
    let Some((exe, entry)) = &p.hermes_tools else {
        return;
    };
    if user.has("mcp_servers", SERVER_NAME) {
        report.preserved_user_servers.push(SERVER_NAME.into());
        report
            .preserved_user_entries
            .push(format!("[mcp_servers.{SERVER_NAME}]"));
        report.servers.push(ServerReport {
            name: SERVER_NAME.into(),
            status: "preserved",
            transport: Some("stdio"),
            reason: Some(
                "config.toml defines hermes-tools outside the managed block; yours is kept".into(),
            ),
            ..Default::default()
        });
    } else {
        content.servers.push((SERVER_NAME.into(), entry.clone()));
        report.hermes_tools = Some(exe.clone());
        report.hermes_tools_env_vars = Some(report::EnvVarsReport::from(&p.passthrough));
        report.servers.push(ServerReport {
            name: SERVER_NAME.into(),
            status: "migrated",
            transport: Some("stdio"),
            ..Default::default()
        });
    }
}

/// Installed plugins (or, when discovery did not run, the previous block's),
/// except those the user configures outside the block.
fn add_plugins(
    discovery: &Discovery,
    parsed: &block::Parsed,
    user: &UserFile,
    report: &mut Report,
    content: &mut BlockContent,
) {
    let candidates: Vec<plugins::Plugin> = match discovery {
        Discovery::Found(list) => {
            report.plugins.discovery = "discovered";
            // Entries the previous block wrote for plugins codex no longer lists
            // as installed leave the block: say which.
            report.plugins.removed = previous_plugins(&parsed.old_block)
                .into_iter()
                .filter(|old| !list.iter().any(|pl| pl.id == old.id))
                .map(|old| old.id)
                .collect();
            list.clone()
        }
        Discovery::Skipped(why) | Discovery::Failed(why) => {
            let failed = matches!(discovery, Discovery::Failed(_));
            report.plugins.discovery = if failed { "failed" } else { "skipped" };
            report.plugins.error = Some(why.clone());
            report.plugin_query_error = Some(why.clone());
            // Keep what the previous block had rather than dropping plugins.
            let kept = previous_plugins(&parsed.old_block);
            report.plugins.kept_from_previous_block = kept.iter().map(|p| p.id.clone()).collect();
            kept
        }
    };
    for pl in candidates {
        if user.has("plugins", &pl.id) {
            report.plugins.preserved.push(pl.id.clone());
            report
                .preserved_user_entries
                .push(format!("[plugins.{}]", block::key(&pl.id)));
        } else {
            report.plugins.migrated.push(pl.id.clone());
            content.plugins.push((pl.id, pl.enabled));
        }
    }
    report
        .plugins
        .kept_from_previous_block
        .retain(|id| report.plugins.migrated.contains(id));
    report.migrated_plugins = report.plugins.migrated.clone();
}

/// `default_permissions`, unless the user sets it (or `sandbox_mode`)
/// themselves; a named profile must exist in config.toml.
fn add_permissions(
    p: &Plan,
    user: &UserFile,
    report: &mut Report,
    content: &mut BlockContent,
) -> anyhow::Result<()> {
    report.permissions.requested = p.permissions.clone();
    let user_setting = ["default_permissions", "sandbox_mode"]
        .into_iter()
        .find_map(|k| user.table.get(k).map(|v| format!("{k} = {v}")));
    if let Some(s) = user_setting {
        report.permissions.preserved = Some(s.clone());
        report.preserved_user_entries.push(s);
        return Ok(());
    }
    let Some(perm) = &p.permissions else {
        return Ok(());
    };
    if !perm.starts_with(':') && !user.has("permissions", perm) {
        let builtin = format!(":{perm}");
        let hint = if BUILTIN_PERMISSIONS.contains(&builtin.as_str()) {
            format!("did you mean the built-in `--permissions {builtin}`?")
        } else {
            format!(
                "define [permissions.{perm}] in {} or use a built-in: {}",
                p.real.display(),
                BUILTIN_PERMISSIONS.join(", ")
            )
        };
        return Err(user_error(
            format!("there is no permission profile [permissions.{perm}] in config.toml"),
            hint,
        ));
    }
    content
        .root
        .push(("default_permissions".into(), TomlVal::Str(perm.clone())));
    report.permissions.written = Some(perm.clone());
    report.wrote_permissions_default = Some(perm.clone());
    Ok(())
}

/// Render the block, splice it into the user's text, and prove the result
/// (valid, outside data unchanged, entries read back, splicing is stable).
fn splice(p: &Plan, parsed: &block::Parsed, content: &BlockContent) -> anyhow::Result<String> {
    let rendered = block::render(content);
    let new = block::insert(&parsed.user, &rendered, parsed.framing);
    block::validate(&new, &parsed.user, &rendered, content).map_err(|e| {
        user_error(
            format!("refusing to write {}: {e}", p.real.display()),
            "nothing was written; move the settings that follow the managed block above it or into their own table, then run migrate again",
        )
    })?;
    let again = block::take_apart(&new);
    if block::insert(&again.user, &rendered, again.framing) != new {
        anyhow::bail!(
            "internal error: splicing the block into {} is not stable; nothing was written (please report this)",
            p.real.display()
        );
    }
    Ok(new)
}

/// The file exists and has no write permission bit set.
fn is_read_only(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o222 == 0)
}

/// `[plugins."<id>"]` entries of the previous block (used when discovery did not run).
fn previous_plugins(old_block: &str) -> Vec<plugins::Plugin> {
    let Ok(t) = block::parse_toml(old_block) else {
        return Vec::new();
    };
    let Some(p) = t.get("plugins").and_then(toml::Value::as_table) else {
        return Vec::new();
    };
    p.iter()
        .map(|(id, v)| plugins::Plugin {
            id: id.clone(),
            enabled: v
                .get("enabled")
                .and_then(toml::Value::as_bool)
                .unwrap_or(true),
        })
        .collect()
}

fn execute(args: &Options) -> anyhow::Result<Report> {
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
    let removing_hook = remove_hook(args, &p, &mut report);
    let hook = plan_hook(&p, &mut report);
    if !args.writes() {
        preview(
            args,
            &p,
            first.as_deref(),
            &discovery,
            hook.as_ref(),
            &mut report,
        )?;
        report.changed |= removing_hook;
        return Ok(report);
    }
    if first.is_none() && args.remove {
        return Ok(report);
    }
    write_locked(args, &p, &discovery, &mut report)?;
    if let Some(hp) = &hook {
        match hp.apply() {
            Ok(()) => report.hermes_hook = Some(hp.summary()),
            Err(e) => report
                .errors
                .push(hook_error("could not set up the Hermes plugin", &e)),
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

/// A Hermes plugin failure for the report: what failed, why, and what to do.
fn hook_error(what: &str, e: &anyhow::Error) -> String {
    let hint = e
        .chain()
        .find_map(|c| c.downcast_ref::<UserError>())
        .and_then(|u| u.hint.as_deref());
    match hint {
        Some(h) => format!("{what}: {e:#}; {h}"),
        None => format!("{what}: {e:#}"),
    }
}

/// Take the Hermes plugin out when this run does not want it: `--remove` or
/// `--no-hermes-tools` against the Codex home the plugin keeps current (it
/// would put hermes-tools back there), or `--no-hermes-hook` whatever the
/// Codex home. Returns whether there was (or, previewing, would be) anything
/// to remove; a failure is reported, not fatal.
fn remove_hook(args: &Options, p: &Plan, report: &mut Report) -> bool {
    let runtime_home = resolve_codex_home(None);
    let is_runtime_home = runtime_home
        .as_ref()
        .is_ok_and(|h| hermes_plugin::same_dir(h, &p.codex_home));
    let why = if args.remove && is_runtime_home {
        None
    } else if !args.hermes_hook {
        Some("you passed --no-hermes-hook; after Hermes' /codex-runtime run `hermes-mcp migrate` yourself".to_string())
    } else if !args.hermes_tools && is_runtime_home {
        Some("you passed --no-hermes-tools, and the plugin would put hermes-tools back".to_string())
    } else {
        if let (true, Ok(h)) = (args.remove, &runtime_home) {
            report.hermes_hook = hermes_plugin::left_alone(&p.home.path, h, &p.codex_home);
        }
        return false;
    };
    match hermes_plugin::remove(&p.home.path, !args.writes()) {
        Ok(r) => {
            let removed = r.removed_dir.is_some() || r.disabled_in_config;
            report.hermes_hook = hermes_plugin::Removal { why, ..r }.summary();
            removed
        }
        Err(e) => {
            report
                .errors
                .push(hook_error("could not remove the Hermes plugin", &e));
            false
        }
    }
}

/// The Hermes plugin to install or update, if wanted (a failure is reported,
/// not fatal).
fn plan_hook(p: &Plan, report: &mut Report) -> Option<hermes_plugin::HookPlan> {
    match hermes_plugin::plan(p.hook.as_ref()?) {
        Ok(hp) => Some(hp),
        Err(e) => {
            report
                .errors
                .push(hook_error("could not set up the Hermes plugin", &e));
            None
        }
    }
}

/// `--dry-run` / `--check`: what would change (and the diff), nothing written.
fn preview(
    args: &Options,
    p: &Plan,
    first: Option<&str>,
    discovery: &Discovery,
    hook: Option<&hermes_plugin::HookPlan>,
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

/// Under `$CODEX_HOME/.hermes-mcp.lock`: read config.toml again, compute,
/// and replace it atomically when it changes.
fn write_locked(
    args: &Options,
    p: &Plan,
    discovery: &Discovery,
    report: &mut Report,
) -> anyhow::Result<()> {
    write::ensure_dir(&p.codex_home).map_err(|e| user_error(e.to_string(), e.hint()))?;
    let _lock =
        write::lock(&p.codex_home, LOCK_WAIT).map_err(|e| user_error(e.to_string(), e.hint()))?;
    if let Some(dir) = p.real.parent() {
        write::clean_stale_temps(dir);
    }
    // Re-read under the lock: another migrate may have written meanwhile.
    let current = write::read(&p.real).map_err(|e| user_error(e.to_string(), e.hint()))?;
    let new = compute(args, p, current.as_deref(), discovery, report)?;
    report.changed = current.as_deref() != Some(new.as_str());
    report.config_toml_changed = report.changed;
    if !report.changed {
        return Ok(());
    }
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
