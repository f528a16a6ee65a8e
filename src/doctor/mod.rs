//! `hermes-mcp doctor`: will Codex reach my tools?
//!
//! It reads `$CODEX_HOME/config.toml` as codex does, asks codex itself whether
//! the file loads, starts the `[mcp_servers.hermes-tools]` entry exactly as
//! codex would (command and args, codex's minimal environment plus `env_vars`
//! and `env`, the entry's `cwd`), times `initialize` and `tools/list`, then
//! runs the same binary's `tools --json` in that environment to learn which
//! tools cannot work and why, and which provider each job will use, and
//! whether a key exported only in this shell would change that
//! (`shellenv`). Every problem is a [`Finding`] with what to do; the CLI
//! exits 1 when there is one.
//!
//! Every child (codex, the server, `tools --json`) runs with a deadline, in
//! its own process group killed when the step ends, its output read up to a
//! cap and redacted before it is shown (`probe`): doctor ends whatever the
//! configured command does.
//!
//! A CLI-level module: it uses `migrate` (where codex's files are) and the
//! `hermes` layer (config.yaml, the environment codex builds).

pub mod lines;
pub mod plugin;
pub(crate) mod probe;
mod shellenv;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use crate::hermes::HermesHome;
use crate::hermes::config::HermesConfig;
use crate::hermes::deadlines::{self, DOCTOR_CODEX_CHECK, DOCTOR_MAX_STEP, DOCTOR_TOOLS_CHECK};
use crate::hermes::sections::Sections;
use crate::hermes::{SERVER_NAME, envvars};
use crate::migrate::{self, block, hermes_plugin};
use crate::process::RunError;
use probe::TalkError;

/// codex's default `startup_timeout_sec`: codex's setting, not a deadline
/// of doctor's, so never scaled (the finding compares real time with it).
/// doctor's own waits are in `hermes::deadlines` (`DOCTOR_*`).
const DEFAULT_STARTUP: Duration = Duration::from_secs(30);

/// What to examine, resolved by the CLI.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `--codex-home` (else `$CODEX_HOME`, else `~/.codex`).
    pub codex_home: Option<PathBuf>,
    /// `--codex-bin`: the codex that checks config.toml (else `codex` on PATH).
    pub codex_bin: Option<PathBuf>,
    /// `--hermes-home`: the Hermes home hermes-tools should serve (as on
    /// `migrate`, `serve` and `tools`).
    pub hermes_home: Option<PathBuf>,
    /// `--profile`: `<root>/profiles/NAME` as that Hermes home.
    pub profile: Option<String>,
}

impl Options {
    /// `hermes-mcp <sub>` with the homes the user passed to doctor, so a
    /// suggested command acts on the same homes (`tools` has no Codex home).
    pub(crate) fn command(&self, sub: &str) -> String {
        let mut c = format!("hermes-mcp {sub}");
        if let Some(h) = &self.hermes_home {
            c.push_str(&format!(" --hermes-home {}", sh_word(&h.to_string_lossy())));
        }
        if let Some(p) = &self.profile {
            c.push_str(&format!(" --profile {}", sh_word(p)));
        }
        if let (Some(h), false) = (&self.codex_home, sub.starts_with("tools")) {
            c.push_str(&format!(" --codex-home {}", sh_word(&h.to_string_lossy())));
        }
        c
    }

    /// `run `hermes-mcp migrate …``, with the homes doctor examined.
    pub(crate) fn run_migrate(&self) -> String {
        format!("run `{}`", self.command("migrate"))
    }
}

/// One problem, with what to do about it.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// A stable name for scripts (`binary_missing`, `config_yaml_invalid`, ...).
    pub code: &'static str,
    pub message: String,
    pub hint: String,
}

/// The `hermes-tools` entry as codex will start it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ServerInfo {
    pub command: String,
    pub args: Vec<String>,
    /// Where `command` resolved (through the server's `PATH`), if it did.
    pub resolved: Option<String>,
    /// Names (never values) of the variables the server receives.
    pub env_names: Vec<String>,
    pub server_name: Option<String>,
    pub server_version: Option<String>,
    pub initialize_ms: Option<u128>,
    pub tools_list_ms: Option<u128>,
    /// Tools the server listed (what codex offers the model).
    pub tools_listed: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ToolStatus {
    pub name: String,
    pub toolset: String,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Provider {
    pub toolset: String,
    pub job: String,
    pub provider: String,
    pub why: String,
}

/// Everything doctor found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    pub healthy: bool,
    pub codex_config: String,
    /// codex's own verdict on config.toml: `loads`, an error, or why it was not asked.
    pub codex_check: String,
    pub server: Option<ServerInfo>,
    pub hermes_home: Option<String>,
    pub hermes_config: Option<String>,
    /// `model.openai_runtime` in config.yaml (Hermes runs codex only with `codex_app_server`).
    pub openai_runtime: Option<String>,
    /// The Hermes home named by `--hermes-home` / `--profile`, resolved.
    pub hermes_home_named: Option<String>,
    /// Where `serve` writes its log (what it said when codex ran it).
    pub log_file: Option<String>,
    pub unavailable_tools: Vec<ToolStatus>,
    pub providers: Vec<Provider>,
    /// What `serve` puts in its MCP `instructions` (Codex sends them to the
    /// model with every request): size, switches, Hermes' pieces and their
    /// sizes; never the text (`tools --json`'s `instructions`).
    pub instructions: Option<Value>,
    /// The Hermes plugin `migrate` installs (`None`: no Hermes home to look in).
    pub plugin: Option<plugin::PluginInfo>,
    pub findings: Vec<Finding>,
    /// Worth knowing, not a problem.
    pub notes: Vec<String>,
}

impl Report {
    /// One line on the server's `instructions`: its size and what is in it.
    pub fn instructions_line(&self) -> Option<String> {
        let i = self.instructions.as_ref()?;
        let chars = i.get("chars").and_then(Value::as_u64)?;
        let parts: Vec<String> = i
            .get("parts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|p| {
                let name = p.get("part")?.as_str()?;
                Some(match p.get("chars").and_then(Value::as_u64) {
                    Some(0) | None => format!("{name} (joined to the one before)"),
                    Some(n) => format!("{name} {n}"),
                })
            })
            .collect();
        let what = if i.get("hermes_context") == Some(&Value::Bool(false)) {
            "Hermes' context off (serve --no-hermes-context)".to_string()
        } else if parts.is_empty() {
            "no Hermes context to send (no memory, skills or guided tools)".to_string()
        } else {
            let short = if i.get("skills_index_shortened") == Some(&Value::Bool(true)) {
                "; skills index shortened to names to fit"
            } else {
                ""
            };
            format!(
                "Hermes' snapshot at session start: {}{short}",
                parts.join(", ")
            )
        };
        Some(format!("{chars} characters; {what}"))
    }

    fn find(&mut self, code: &'static str, message: impl Into<String>, hint: impl Into<String>) {
        self.findings.push(Finding {
            code,
            message: message.into(),
            hint: hint.into(),
        });
    }
}

/// Run every check. Errors only when nothing could be examined (no home).
pub fn run(opts: &Options) -> anyhow::Result<Report> {
    let codex_home = migrate::resolve_codex_home(opts.codex_home.as_deref())?;
    let path = codex_home.join("config.toml");
    let named = named_hermes_home(opts)?;
    let mut r = Report {
        codex_config: path.display().to_string(),
        hermes_home_named: named.map(|h| h.display().to_string()),
        ..Default::default()
    };
    examine(opts, &codex_home, &path, &mut r);
    plugin::check(opts, &codex_home, &mut r);
    Ok(finish(r))
}

/// The Hermes home `--hermes-home` / `--profile` name (resolved as `migrate`,
/// `serve` and `tools` resolve it); one that cannot be a home is an error.
fn named_hermes_home(opts: &Options) -> anyhow::Result<Option<PathBuf>> {
    if opts.hermes_home.is_none() && opts.profile.is_none() {
        return Ok(None);
    }
    let home = HermesHome::resolve(opts.hermes_home.as_deref(), opts.profile.as_deref())?;
    if let Some(why) = home.unusable() {
        return Err(crate::error::UserError::hint(
            why,
            "check --hermes-home / --profile / HERMES_HOME (the Hermes home holds config.yaml and .env)",
        )
        .into());
    }
    Ok(Some(home.path))
}

/// The checks in order; each stops here when what follows cannot be examined.
fn examine(opts: &Options, codex_home: &Path, path: &Path, r: &mut Report) {
    let Some(text) = read_config_toml(opts, path, r) else {
        return;
    };
    r.codex_check = codex_check(opts, codex_home, &text, r);
    let Some(entry) = hermes_tools_entry(opts, path, &text, r) else {
        return;
    };
    expected_codex_doctor_warnings(&entry, |n| envvars::get(n).is_some(), r);
    if entry.get("enabled").and_then(toml::Value::as_bool) == Some(false) {
        r.find(
            "hermes_tools_disabled",
            format!("[mcp_servers.{SERVER_NAME}] has enabled = false: codex does not start it"),
            format!("set enabled = true, or {}", opts.run_migrate()),
        );
    }
    let Some(command) = entry.get("command").and_then(toml::Value::as_str) else {
        r.find(
            "hermes_tools_not_stdio",
            format!("[mcp_servers.{SERVER_NAME}] has no command: it is not a stdio server"),
            opts.run_migrate(),
        );
        return;
    };
    server_checks(opts, &entry, command, r);
}

/// `codex doctor` warns "hermes-tools env var X is not set" for each name in
/// `env_vars` unset where it runs. For the variables Hermes sets only when it
/// runs codex (the session id; a kanban worker's task, run, claim, board,
/// tenant, profile and timeout) that is expected outside a Hermes session or
/// worker: say so, once, naming them.
fn expected_codex_doctor_warnings(
    entry: &toml::Table,
    is_set: impl Fn(&str) -> bool,
    r: &mut Report,
) {
    let listed = entry
        .get("env_vars")
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(toml::Value::as_str);
    let expected: Vec<&str> = listed
        .filter(|n| {
            (*n == envvars::HERMES_SESSION_ID
                || migrate::passthrough::KANBAN_WORKER_VARS.contains(n))
                && !is_set(n)
        })
        .collect();
    if expected.is_empty() {
        return;
    }
    r.notes.push(format!(
        "`codex doctor` warns that hermes-tools env var {} {} not set: expected outside Hermes. Hermes sets HERMES_SESSION_ID in the codex it runs, and its kanban dispatcher sets the others for a worker; a codex you start yourself has none of them and needs none",
        expected.join(", "),
        if expected.len() == 1 { "is" } else { "are" }
    ));
}

/// config.toml's text; a missing or unreadable file is a finding.
fn read_config_toml(opts: &Options, path: &Path, r: &mut Report) -> Option<String> {
    match crate::fs::read_to_string_capped_opt(path, crate::fs::CONFIG_CAP) {
        Ok(Some(t)) => Some(t),
        Ok(None) => {
            r.codex_check = "not asked (no config.toml)".into();
            r.find(
                "config_toml_missing",
                format!("{} does not exist", path.display()),
                format!("{} to register hermes-tools with codex", opts.run_migrate()),
            );
            None
        }
        Err(e) => {
            r.codex_check = "not asked (config.toml unreadable)".into();
            r.find(
                "config_toml_unreadable",
                e.to_string(),
                "make config.toml readable",
            );
            None
        }
    }
}

/// The `[mcp_servers.hermes-tools]` table of config.toml; invalid TOML, a
/// block Hermes put its own server back into, or no entry are findings.
fn hermes_tools_entry(
    opts: &Options,
    path: &Path,
    text: &str,
    r: &mut Report,
) -> Option<toml::Table> {
    let table = match block::parse_toml(text) {
        Ok(t) => t,
        Err(e) => {
            r.find(
                "config_toml_invalid",
                format!("{} is not valid TOML: {e}", path.display()),
                format!("fix the file (codex cannot load it either), or delete the managed block and {}", opts.run_migrate()),
            );
            return None;
        }
    };
    if let Some(w) = hermes_plugin::replaced_by_hermes(text) {
        r.find("hermes_python_server", w, opts.run_migrate());
    }
    let entry = table
        .get("mcp_servers")
        .and_then(|s| s.get(SERVER_NAME))
        .and_then(toml::Value::as_table)
        .cloned();
    if entry.is_none() {
        r.find(
            "hermes_tools_missing",
            format!(
                "{} has no [mcp_servers.{SERVER_NAME}] entry",
                path.display()
            ),
            opts.run_migrate(),
        );
    }
    entry
}

/// Start the entry as codex would: find its program, check the Hermes home
/// it gets, probe `initialize` and `tools/list`, then ask which tools work.
fn server_checks(opts: &Options, entry: &toml::Table, command: &str, r: &mut Report) {
    let launch = launch_of(entry, command);
    let mut info = ServerInfo {
        command: command.to_string(),
        args: launch.args.clone(),
        env_names: launch.env.iter().map(|(k, _)| k.clone()).collect(),
        ..Default::default()
    };
    let path_var = launch
        .env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone());
    let cwd = launch
        .cwd
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("/"));
    let resolved = probe::resolve(command, path_var.as_deref(), &cwd);
    info.resolved = resolved.as_ref().map(|p| p.display().to_string());
    hermes_home_checks(opts, &launch, r);
    let Some(program) = resolved else {
        let stale = command.contains('/');
        r.find(
            "binary_missing",
            if stale {
                format!("{command} does not exist or is not executable (a stale path: hermes-mcp moved or was uninstalled)")
            } else {
                format!("{command} is not found in the PATH codex gives the server")
            },
            format!("{} with the hermes-mcp you want codex to start", opts.run_migrate()),
        );
        r.server = Some(info);
        return;
    };
    let launch = probe::Launch { program, ..launch };
    probe_server(opts, entry, &launch, &mut info, r);
    let is_ours = info.server_name.as_deref() == Some(env!("CARGO_PKG_NAME"))
        || launch.args.first().map(String::as_str) == Some("serve");
    if is_ours {
        tools_checks(opts, &launch, r);
    }
    r.server = Some(info);
}

/// `initialize` and `tools/list` against the started server, timed; a
/// failure is a finding with the end of its stderr.
fn probe_server(
    opts: &Options,
    entry: &toml::Table,
    launch: &probe::Launch,
    info: &mut ServerInfo,
    r: &mut Report,
) {
    match probe::probe(launch) {
        Ok(p) => {
            over_startup_timeout(entry, "initialize", p.initialize, r);
            over_startup_timeout(entry, "tools/list", p.tools_list, r);
            info.server_name = p.server_name;
            info.server_version = p.server_version;
            info.initialize_ms = Some(p.initialize.as_millis());
            info.tools_list_ms = Some(p.tools_list.as_millis());
            info.tools_listed = p.tools;
            if info.tools_listed.is_empty() {
                r.find(
                    "no_tools",
                    "hermes-tools started but offers no tools",
                    "see the unavailable tools below, and `toolsets:` in config.yaml",
                );
            }
        }
        Err(e) => {
            let tail: String = e
                .stderr
                .lines()
                .rev()
                .take(8)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect::<Vec<_>>()
                .join("\n");
            r.find(
                "server_failed",
                if tail.is_empty() {
                    e.message
                } else {
                    format!("{}; its stderr ends with:\n{tail}", e.message)
                },
                format!("codex shows this server as failed; fix what the message says, then run `{}` again", opts.command("doctor")),
            );
        }
    }
}

fn finish(mut r: Report) -> Report {
    r.healthy = r.findings.is_empty();
    r
}

/// How codex starts the entry (program not yet resolved).
fn launch_of(entry: &toml::Table, command: &str) -> probe::Launch {
    let strs = |k: &str| -> Vec<String> {
        entry
            .get(k)
            .and_then(toml::Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let args = strs("args");
    // `env_vars` entries are "NAME" or { name = "NAME", source = ... }.
    let env_vars: Vec<String> = entry
        .get("env_vars")
        .and_then(toml::Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| {
                    v.as_str()
                        .or_else(|| v.get("name").and_then(toml::Value::as_str))
                        .map(str::to_string)
                })
                .collect()
        })
        .unwrap_or_default();
    let env: Vec<(String, String)> = entry
        .get("env")
        .and_then(toml::Value::as_table)
        .map(|t| {
            t.iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                .collect()
        })
        .unwrap_or_default();
    // doctor always ends: a huge `startup_timeout_sec` is still a deadline.
    let timeout = startup_timeout(entry).0.min(DOCTOR_MAX_STEP.hermes());
    probe::Launch {
        program: PathBuf::from(command),
        args,
        env: envvars::codex_server_env(&env_vars, &env),
        cwd: entry
            .get("cwd")
            .and_then(toml::Value::as_str)
            .map(PathBuf::from),
        timeout,
    }
}

/// How long codex waits for the entry's `initialize`, and again for its
/// `tools/list` (codex-rs `codex-mcp/src/rmcp_client.rs`), with where that
/// comes from: `startup_timeout_sec`, else the legacy `startup_timeout_ms`,
/// else codex's default.
fn startup_timeout(entry: &toml::Table) -> (Duration, &'static str) {
    let secs = entry
        .get("startup_timeout_sec")
        .and_then(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)))
        .and_then(|f| Duration::try_from_secs_f64(f).ok());
    let millis = entry
        .get("startup_timeout_ms")
        .and_then(toml::Value::as_integer)
        .and_then(|ms| u64::try_from(ms).ok())
        .map(Duration::from_millis);
    match (secs, millis) {
        (Some(d), _) => (d, "its startup_timeout_sec"),
        (None, Some(d)) => (d, "its startup_timeout_ms"),
        (None, None) => (DEFAULT_STARTUP, "codex's default: no startup_timeout_sec"),
    }
}

/// A step of the handshake that answered, but after codex would have
/// stopped waiting (doctor waits longer to tell): codex shows the server as
/// failed, so it is a finding with the time it took.
fn over_startup_timeout(entry: &toml::Table, step: &str, took: Duration, r: &mut Report) {
    let (limit, source) = startup_timeout(entry);
    if took <= limit {
        return;
    }
    let need = (took.as_secs_f64() * 2.0)
        .ceil()
        .max(limit.as_secs_f64() + 1.0);
    r.find(
        "startup_timeout_exceeded",
        format!(
            "hermes-tools answered {step} after {:.1} s, over codex's start-up timeout of {} s ({source}): codex stops waiting before that and shows hermes-tools as failed",
            took.as_secs_f64(),
            limit.as_secs_f64()
        ),
        format!(
            "set startup_timeout_sec = {need} in [mcp_servers.{SERVER_NAME}], or find what the server waits for at start (hermes-mcp logs its start in $HERMES_HOME/logs/hermes-mcp.log)"
        ),
    );
}

/// The Hermes home the server will see, its config.yaml and the runtime setting.
fn hermes_home_checks(opts: &Options, launch: &probe::Launch, r: &mut Report) {
    let var = |n: &str| {
        launch
            .env
            .iter()
            .find(|(k, _)| k == n)
            .map(|(_, v)| v.clone())
            .filter(|v| !v.trim().is_empty())
    };
    let (home, explicit) = match (var(envvars::HERMES_HOME), var("HOME")) {
        (Some(h), _) => (crate::hermes::home::expand_tilde(Path::new(&h)), true),
        (None, Some(h)) => (Path::new(&h).join(".hermes"), false),
        (None, None) => return,
    };
    r.hermes_home = Some(home.display().to_string());
    r.log_file = Some(crate::hermes::home::log_file(&home).display().to_string());
    if let Some(named) = r.hermes_home_named.as_deref().map(PathBuf::from)
        && !hermes_plugin::same_dir(&named, &home)
    {
        r.find(
            "hermes_home_differs",
            format!(
                "hermes-tools serves the Hermes home {}, not {} that you named",
                home.display(),
                named.display()
            ),
            format!(
                "{} to have codex start hermes-tools with that home",
                opts.run_migrate()
            ),
        );
    }
    if !home.is_dir() && !explicit {
        r.notes.push(format!(
            "there is no Hermes home at {}: the tools run with Hermes' default settings",
            home.display()
        ));
        return;
    }
    if !home.is_dir() {
        r.find(
            "hermes_home_missing",
            format!("the Hermes home the server gets, {}, does not exist", home.display()),
            if opts.hermes_home.is_some() || opts.profile.is_some() {
                format!("set up Hermes there (`hermes setup`), or {} to serve the home you named", opts.run_migrate())
            } else {
                "set up Hermes there (`hermes setup`), or run `hermes-mcp migrate --hermes-home DIR` with the home you use".to_string()
            },
        );
        return;
    }
    let config = home.join("config.yaml");
    r.hermes_config = Some(config.display().to_string());
    match HermesConfig::load(&config) {
        Ok(c) => {
            let runtime = Sections::read_in_home(&c, home.join(".env"))
                .model
                .openai_runtime;
            if runtime.as_deref() != Some("codex_app_server") {
                r.notes.push(format!(
                    "model.openai_runtime is {} in config.yaml: Hermes itself does not run codex, so hermes-tools serves only the codex you start yourself. To have Hermes run codex, use Hermes' `/codex-runtime codex_app_server` first and `{}` after it: that command re-runs Hermes' own migrator, which puts Hermes' Python server back as hermes-tools. The Hermes plugin `migrate` installs also undoes that at the next session start, unless you passed --no-hermes-hook",
                    runtime.as_deref().unwrap_or("unset (auto)"),
                    opts.command("migrate")
                ));
            }
            r.openai_runtime = runtime;
        }
        Err(e) => r.find(
            "config_yaml_invalid",
            e.to_string(),
            "fix config.yaml (Hermes reads it too); until then every tool runs with default settings",
        ),
    }
}

/// `<command> tools --json` with `env`: what works there, and why.
fn ask_tools(launch: &probe::Launch, env: Vec<(String, String)>) -> Result<Value, TalkError> {
    let mut args = vec!["tools".to_string(), "--json".to_string()];
    args.extend(launch.args.iter().skip(1).cloned());
    let tools = probe::Launch {
        args,
        env,
        ..launch.clone()
    };
    // A step of doctor's own (codex never runs it), so all of it scales in
    // tests; a long start-up timeout only lengthens it, since `tools`
    // starts as `serve` does.
    let limit = launch.timeout.max(DOCTOR_TOOLS_CHECK.hermes());
    probe::output(&tools, deadlines::scaled(limit))
        .and_then(|s| serde_json::from_str(&s).map_err(TalkError::NotJson))
}

/// `<command> tools --json` in the server's environment: unavailable tools,
/// providers; then whether this shell would see more (keys codex does not pass).
fn tools_checks(opts: &Options, launch: &probe::Launch, r: &mut Report) {
    let doc = match ask_tools(launch, launch.env.clone()) {
        Ok(v) => v,
        Err(e @ (TalkError::Timeout(..) | TalkError::TooMuch(..))) => {
            r.find(
                "tools_check_failed",
                format!(
                    "asked which tools work, `{} tools --json` {e}; doctor killed it",
                    launch.program.display()
                ),
                format!(
                    "run `{}` in a shell to see where it stops; codex may wait on the same thing",
                    opts.command("tools")
                ),
            );
            return;
        }
        Err(e) => {
            r.notes
                .push(format!("could not ask the server which tools work: {e}"));
            return;
        }
    };
    if let Some(h) = doc.get("hermes_home").and_then(Value::as_str) {
        r.hermes_home = Some(h.to_string());
    }
    r.instructions = doc.get("instructions").cloned();
    for t in tools_of(&doc) {
        if t.get("available").and_then(Value::as_bool) == Some(false) {
            r.unavailable_tools.push(ToolStatus {
                name: text(t, "name"),
                toolset: text(t, "toolset"),
                reason: text(t, "reason"),
            });
        }
    }
    codex_started_before(&doc, r);
    for p in providers_of(&doc) {
        r.providers.push(Provider {
            toolset: text(p, "toolset"),
            job: text(p, "job"),
            provider: text(p, "provider"),
            why: text(p, "why"),
        });
    }
    shellenv::check(opts, launch, &doc, r);
}

/// Tools available now that a running Codex was not offered when its
/// hermes-tools started (Codex reads the list once): restart codex.
fn codex_started_before(doc: &Value, r: &mut Report) {
    let newer: Vec<String> = doc
        .get("new_since_codex_started")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| t.get("name").and_then(Value::as_str).map(str::to_string))
        .collect();
    if newer.is_empty() {
        return;
    }
    r.find(
        "tools_after_codex_start",
        format!(
            "available now, but not when the running Codex started its hermes-tools: {}",
            newer.join(", ")
        ),
        "restart codex: it reads the tool list once, at start, and ignores later changes",
    );
}

fn text(v: &Value, k: &str) -> String {
    v.get(k).and_then(Value::as_str).unwrap_or("").to_string()
}

fn tools_of(doc: &Value) -> impl Iterator<Item = &Value> {
    doc.get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn providers_of(doc: &Value) -> impl Iterator<Item = &Value> {
    doc.get("providers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// `s` as one shell word (single-quoted unless it is plain).
fn sh_word(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@%=,".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// What repairs a config.toml codex refuses, when the file says why: a
/// server without a transport (per-tool tables of hermes-tools with no
/// server left: migrate writes the server back and keeps the tables).
fn rejects_hint(opts: &Options, text: &str) -> String {
    let names = block::parse_toml(text)
        .map(|t| block::servers_without_transport(&t))
        .unwrap_or_default();
    if names.iter().any(|n| n == SERVER_NAME) {
        return format!(
            "run `{}`: it writes [mcp_servers.{SERVER_NAME}] into the managed block and keeps your per-tool tables such as [mcp_servers.{SERVER_NAME}.tools.TOOL]",
            opts.command("migrate")
        );
    }
    if let Some(n) = names.first() {
        return format!(
            "[mcp_servers.{}] has neither `command` nor `url`: give it one, or delete its tables",
            block::key(n)
        );
    }
    format!(
        "fix what codex names (one bad entry stops every codex command), then run `{}` again",
        opts.command("doctor")
    )
}

fn codex_check(opts: &Options, codex_home: &Path, text: &str, r: &mut Report) -> String {
    let bin = opts
        .codex_bin
        .clone()
        .unwrap_or_else(|| PathBuf::from("codex"));
    let path_var = envvars::get(envvars::PATH);
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let Some(program) = probe::resolve(&bin.to_string_lossy(), path_var.as_deref(), &cwd) else {
        return format!("not asked ({} not found)", bin.display());
    };
    let mut cmd = std::process::Command::new(&program);
    cmd.args(["app-server", "--print-startup-config"])
        .env("CODEX_HOME", codex_home)
        .env_remove("RUST_BACKTRACE");
    let wait = DOCTOR_CODEX_CHECK.get();
    let out = match crate::process::output_then_kill_group(cmd, wait, probe::STDOUT_CAP) {
        Ok(o) => o,
        Err(RunError::TimedOut(d)) => {
            let e = RunError::TimedOut(deadlines::unscaled(d));
            return format!("not asked (codex: {e})");
        }
        Err(e @ RunError::TooMuchOutput(..)) => return format!("not asked (codex: {e})"),
        Err(e) => return format!("not asked ({e})"),
    };
    if out.status.success() {
        return "loads".into();
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let msg = serde_json::from_str::<Value>(stdout.trim())
        .ok()
        .and_then(|v| {
            v.pointer("/error/message")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .unwrap_or_else(|| String::from_utf8_lossy(&out.stderr).trim().to_string());
    let msg = crate::redact::redact_sensitive_text(&msg);
    r.find(
        "codex_rejects_config",
        format!(
            "codex cannot load {}: {msg}",
            codex_home.join("config.toml").display()
        ),
        rejects_hint(opts, text),
    );
    format!("refused: {msg}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_codex_doctor_warnings_hermes_explains_are_named() {
        let entry: toml::Table = "env_vars = [\"EXA_API_KEY\", \"HERMES_SESSION_ID\", \"HERMES_KANBAN_TASK\", \"HERMES_TENANT\"]"
            .parse()
            .unwrap();
        let mut r = Report::default();
        expected_codex_doctor_warnings(&entry, |n| n == "HERMES_TENANT", &mut r);
        assert_eq!(r.notes.len(), 1, "{:?}", r.notes);
        assert!(
            r.notes[0].starts_with(
                "`codex doctor` warns that hermes-tools env var HERMES_SESSION_ID, HERMES_KANBAN_TASK are not set: expected outside Hermes."
            ),
            "{}",
            r.notes[0]
        );
        let mut r = Report::default();
        let keys: toml::Table = "env_vars = [\"EXA_API_KEY\"]".parse().unwrap();
        expected_codex_doctor_warnings(&keys, |_| false, &mut r);
        assert!(r.notes.is_empty());
    }

    #[test]
    fn the_repair_hint_keeps_the_codex_home_given() {
        let broken = "[mcp_servers.hermes-tools.tools.memory]\napproval_mode = \"prompt\"\n";
        let opts = Options {
            codex_home: Some(PathBuf::from("/my codex")),
            ..Default::default()
        };
        let hint = rejects_hint(&opts, broken);
        assert!(
            hint.starts_with("run `hermes-mcp migrate --codex-home '/my codex'`"),
            "{hint}"
        );
        let other = "[mcp_servers.x.tools.y]\napproval_mode = \"prompt\"\n";
        assert!(rejects_hint(&opts, other).starts_with("[mcp_servers.x] has neither"));
    }
}
