//! The CLI layer: parse flags (clap), resolve them into the library's options
//! before any work, run, print, and choose the exit status. Nothing below this
//! module prints to stdout or decides an exit code.

// The one module that writes to stdout (clippy.toml disallows it elsewhere).
#![allow(clippy::disallowed_methods)]

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::doctor;
use crate::hermes::{self, HermesHome, envvars};
use crate::migrate::{self, report::Report};
use crate::server::{self, Availability, HermesServer};
use crate::toolsets;

#[derive(Debug, Parser)]
#[command(name = "hermes-mcp", version, about = "Hermes Agent's tools for the OpenAI Codex CLI", long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Say more (what that is depends on the subcommand: see its --help)
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Say less (only problems, and what you must do)
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
}

/// What `-v` does in each subcommand (its help there); `None`: nothing, hidden.
const VERBOSE_HELP: &[(&str, Option<&str>)] = &[
    (
        "serve",
        Some(
            "Log more on stderr, which codex keeps in its own log: -v info, -vv debug (and debug in $HERMES_HOME/logs/hermes-mcp.log too)",
        ),
    ),
    (
        "migrate",
        Some("With --check, print the whole report instead of one line"),
    ),
    (
        "tools",
        Some(
            "Also log on stderr: sign-in refreshes it waits for (-v), why a token refresh failed (-vv)",
        ),
    ),
    (
        "doctor",
        Some("The report stays the same; only logging on stderr grows (-v info, -vv debug)"),
    ),
    ("completion", None),
];

/// The command line's grammar: [`Cli`]'s, with `-v`'s help worded for each
/// subcommand (a global flag otherwise shows one text everywhere).
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    let Some(global) = cmd
        .get_arguments()
        .find(|a| a.get_id() == "verbose")
        .cloned()
    else {
        return cmd;
    };
    for (name, help) in VERBOSE_HELP {
        let arg = match help {
            Some(h) => global.clone().help(*h),
            None => global.clone().hide(true),
        };
        cmd = cmd.mut_subcommand(*name, |sc| sc.arg(arg));
    }
    cmd
}

/// Parse the process's arguments with [`command`] (clap's exit on `--help` or an error).
pub fn parse() -> Cli {
    use clap::FromArgMatches;
    let matches = command().get_matches();
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

/// `-q` / `-v`, given to every subcommand.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Verbosity {
    pub quiet: bool,
    pub verbose: u8,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the stdio MCP server (Codex launches this as `hermes-tools`).
    Serve(ServeArgs),
    /// Write Hermes' MCP servers, Codex plugins, permissions and hermes-tools into Codex's config.toml.
    Migrate(MigrateArgs),
    /// List every tool, its toolset, and whether it works here (and why not).
    Tools(ToolsArgs),
    /// Check that Codex will reach hermes-tools: start it as Codex would, time it, list problems (exit 1 when there are any).
    Doctor(DoctorArgs),
    /// Print a shell completion script (e.g. `hermes-mcp completion bash > ~/.local/share/bash-completion/completions/hermes-mcp`).
    Completion(CompletionArgs),
}

#[derive(Debug, Args, Clone, Default)]
pub struct HomeArgs {
    /// Hermes home directory [default: $HERMES_HOME, else ~/.hermes]
    #[arg(long, value_name = "DIR")]
    pub hermes_home: Option<PathBuf>,
    /// Hermes profile: use <root>/profiles/NAME as the Hermes home
    #[arg(long, short = 'p', value_name = "NAME")]
    pub profile: Option<String>,
}

#[derive(Debug, Args, Clone, Default)]
pub struct ServeArgs {
    #[command(flatten)]
    pub home: HomeArgs,
    #[command(flatten)]
    pub context: ContextArgs,
}

/// What of Hermes' session context `serve` puts in its MCP `instructions`.
#[derive(Debug, Args, Clone, Default)]
pub struct ContextArgs {
    /// Send no Hermes context (memory, user profile, skills index, tool guidance) in the server's instructions, only the note about its tools
    #[arg(long)]
    pub no_hermes_context: bool,
    /// Also send Hermes' persona, $HERMES_HOME/SOUL.md (Codex keeps its own identity otherwise)
    #[arg(long, conflicts_with = "no_hermes_context")]
    pub hermes_soul: bool,
}

impl ContextArgs {
    pub fn options(&self) -> server::ContextOptions {
        server::ContextOptions {
            enabled: !self.no_hermes_context,
            soul: self.hermes_soul,
        }
    }

    /// The same choices as `serve` flags (what `migrate` writes into the entry).
    pub fn serve_flags(&self) -> Vec<String> {
        let mut flags = Vec::new();
        if self.no_hermes_context {
            flags.push("--no-hermes-context".to_string());
        }
        if self.hermes_soul {
            flags.push("--hermes-soul".to_string());
        }
        flags
    }
}

#[derive(Debug, Args, Clone)]
pub struct CompletionArgs {
    /// The shell to complete for
    #[arg(value_enum)]
    pub shell: CompletionShell,
}

/// The shells `completion` writes a script for.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum CompletionShell {
    Bash,
    Zsh,
    Fish,
}

impl From<CompletionShell> for clap_complete::Shell {
    fn from(s: CompletionShell) -> Self {
        match s {
            CompletionShell::Bash => clap_complete::Shell::Bash,
            CompletionShell::Zsh => clap_complete::Shell::Zsh,
            CompletionShell::Fish => clap_complete::Shell::Fish,
        }
    }
}

/// `--permissions`: any profile name is accepted (a `[permissions.NAME]` of
/// the user's, checked later against config.toml); the built-ins are what
/// completion offers.
#[derive(Debug, Clone, Copy)]
struct PermissionsParser;

impl clap::builder::TypedValueParser for PermissionsParser {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            crate::migrate::BUILTIN_PERMISSIONS
                .iter()
                .map(|p| clap::builder::PossibleValue::new(*p)),
        ))
    }
}

/// The completion script for `shell`. clap_complete's bash generator names
/// the `hermes-mcp` state `hermes__mcp` while walking the words but labels the
/// subcommands' cases `hermes__subcmd__mcp__subcmd__…` (it mangles the hyphen
/// of the binary name twice), so no subcommand's flags would ever complete;
/// the labels are renamed to the names the walk produces.
fn completion_script(shell: CompletionShell) -> Vec<u8> {
    let mut script = Vec::new();
    let gen_shell: clap_complete::Shell = shell.into();
    clap_complete::generate(gen_shell, &mut command(), "hermes-mcp", &mut script);
    if shell == CompletionShell::Fish {
        // clap_complete's fish script offers nothing for a positional's values.
        script.extend_from_slice(
            b"complete -c hermes-mcp -n \"__fish_hermes_mcp_using_subcommand completion\" -f -a \"bash zsh fish\"\n",
        );
    }
    if shell != CompletionShell::Bash {
        return script;
    }
    String::from_utf8_lossy(&script)
        .replace("hermes__subcmd__mcp__subcmd__", "hermes__mcp__subcmd__")
        .into_bytes()
}

#[derive(Debug, Args, Clone, Default)]
pub struct ToolsArgs {
    #[command(flatten)]
    pub home: HomeArgs,
    /// `serve`'s context flags: the instructions shown are the ones `serve` would send with them
    #[command(flatten)]
    pub context: ContextArgs,
    /// Machine-readable output
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args, Clone, Default)]
pub struct DoctorArgs {
    /// The Hermes home hermes-tools should serve (a finding when it serves another)
    #[command(flatten)]
    pub home: HomeArgs,
    /// Codex home directory [default: $CODEX_HOME, else ~/.codex]
    #[arg(long, value_name = "DIR")]
    pub codex_home: Option<PathBuf>,
    /// The codex binary that checks config.toml [default: `codex` on PATH]
    #[arg(long, value_name = "PATH")]
    pub codex_bin: Option<PathBuf>,
    /// Machine-readable output
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Copy, Default, ValueEnum, PartialEq, Eq)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

#[derive(Debug, Args, Clone, Default)]
pub struct MigrateArgs {
    #[command(flatten)]
    pub home: HomeArgs,
    /// Codex home directory [default: $CODEX_HOME, else ~/.codex]
    #[arg(long, value_name = "DIR")]
    pub codex_home: Option<PathBuf>,
    /// The codex binary used for plugin discovery [default: model.codex_bin from config.yaml, else `codex` on PATH]
    #[arg(long, value_name = "PATH")]
    pub codex_bin: Option<PathBuf>,
    /// Print a unified diff of config.toml and write nothing
    #[arg(long, conflicts_with = "check")]
    pub dry_run: bool,
    /// Write nothing; exit 0 when config.toml is up to date, 1 when migrate would change it
    #[arg(long)]
    pub check: bool,
    /// Take the managed block out of config.toml
    #[arg(long)]
    pub remove: bool,
    /// Print the report as JSON on stdout
    #[arg(long)]
    pub json: bool,
    /// Do not discover installed Codex plugins
    #[arg(long)]
    pub no_plugins: bool,
    /// Do not register hermes-mcp itself as the hermes-tools MCP server
    #[arg(long)]
    pub no_hermes_tools: bool,
    /// Flags written into hermes-tools' `serve` command (see `hermes-mcp serve --help`)
    #[command(flatten)]
    pub context: ContextArgs,
    /// Do not install the Hermes plugin that keeps the block current at each Hermes session start (and remove an installed one)
    #[arg(long)]
    pub no_hermes_hook: bool,
    /// Default permission profile (:read-only, :workspace, :danger-full-access, or a [permissions.NAME] profile)
    #[arg(
        long,
        value_name = "PROFILE",
        default_value = ":workspace",
        conflicts_with = "no_permissions",
        value_parser = PermissionsParser,
        hide_possible_values = true
    )]
    pub permissions: String,
    /// Do not set default_permissions
    #[arg(long)]
    pub no_permissions: bool,
    /// Colour in the diff and report
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

impl MigrateArgs {
    /// The library's options: every flag resolved, the colour decided here.
    pub fn options(&self) -> migrate::Options {
        let mode = if self.dry_run {
            migrate::Mode::DryRun {
                color: !self.json && use_color(self.color, std::io::stdout().is_terminal()),
            }
        } else if self.check {
            migrate::Mode::Check
        } else {
            migrate::Mode::Write
        };
        migrate::Options {
            hermes_home: self.home.hermes_home.clone(),
            profile: self.home.profile.clone(),
            codex_home: self.codex_home.clone(),
            codex_bin: self.codex_bin.clone(),
            mode,
            remove: self.remove,
            plugins: !self.no_plugins,
            hermes_tools: !self.no_hermes_tools,
            hermes_hook: !self.no_hermes_hook,
            permissions: (!self.no_permissions).then(|| self.permissions.clone()),
            serve_flags: self.context.serve_flags(),
        }
    }
}

/// Whether to colour text for a stream (`--color`, `NO_COLOR`, whether it is a terminal).
fn use_color_for(choice: ColorChoice, stream_is_terminal: bool) -> bool {
    let no_color = envvars::get(envvars::NO_COLOR).is_some();
    decide_color(choice, stream_is_terminal, no_color)
}

/// Whether to colour output written to stdout (`--color`, `NO_COLOR`, a terminal).
fn use_color(choice: ColorChoice, stream_is_terminal: bool) -> bool {
    let no_color = envvars::get(envvars::NO_COLOR).is_some();
    decide_color(choice, stream_is_terminal, no_color)
        && (choice != ColorChoice::Auto
            || anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never)
}

/// `--color always|never` win; `auto` colours a terminal unless `NO_COLOR` is set.
fn decide_color(choice: ColorChoice, stream_is_terminal: bool, no_color: bool) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => stream_is_terminal && !no_color,
    }
}

/// Entry point behind `main`: run a parsed command line. Errors go back to
/// `main`, which prints them (`error:` and `hint:`) and exits 2.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let v = Verbosity {
        quiet: cli.quiet,
        verbose: cli.verbose,
    };
    let level = |default: &'static str| match (v.quiet, v.verbose) {
        (true, _) => "error",
        (false, 0) => default,
        (false, 1) => "info",
        _ => "debug",
    };
    match cli.command {
        Command::Serve(args) => {
            // serve gives back memory it no longer needs (set up before its
            // first thread starts); the relocation records at once, before the
            // composition of `instructions`: not resident at its peak.
            server::give_back_memory();
            let given = server::release_relocation_records();
            let server = build_server_with(&args.home, args.context.options())?;
            let log = hermes::logfile::LogFile::open_in(&server.context().home.path);
            let file_level = if v.verbose > 1 {
                "info,hermes_mcp=debug"
            } else {
                "info"
            };
            let file = log
                .as_ref()
                .ok()
                .and_then(|l| l.clone())
                .map(|l| (l, file_level));
            init_logging(&format!("{},rmcp=error", level("warn")), file);
            if let Err(why) = log {
                tracing::warn!("{why}");
            }
            tracing::debug!("relocation records given back: {given} bytes");
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .context("cannot start the async runtime")?;
            rt.block_on(async {
                // Only tools/list and tools/call wait for the portal; initialize does not.
                let warm = server.clone();
                server.start_warmup(
                    crate::hermes::deadlines::GATEWAY_PREFETCH.get(),
                    async move {
                        crate::gateway::prefetch(warm.context()).await;
                    },
                );
                let served = server::serve_stdio(server).await;
                // A refresh token spent by a refresh still under way is stored
                // before the runtime (and that refresh with it) goes.
                crate::auth::refreshes::drain(crate::hermes::deadlines::REFRESH_DRAIN.get()).await;
                served
            })?;
            // A pending read on tokio's stdin cannot be cancelled; do not wait for it.
            rt.shutdown_background();
            Ok(ExitCode::SUCCESS)
        }
        Command::Migrate(args) => {
            init_logging(level("warn"), None);
            run_migrate(&args, v)
        }
        Command::Completion(args) => {
            let mut out = std::io::stdout().lock();
            out.write_all(&completion_script(args.shell))?;
            out.flush()?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Doctor(args) => {
            init_logging(level("error"), None);
            let report = doctor::run(&doctor::Options {
                codex_home: args.codex_home.clone(),
                codex_bin: args.codex_bin.clone(),
                hermes_home: args.home.hermes_home.clone(),
                profile: args.home.profile.clone(),
            })?;
            print_doctor(&report, args.json, v)?;
            Ok(if report.healthy {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Command::Tools(args) => {
            init_logging(level("error"), None);
            let home = HermesHome::resolve(
                args.home.hermes_home.as_deref(),
                args.home.profile.as_deref(),
            )?;
            if let Some(why) = home.unusable() {
                return Err(crate::error::UserError::hint(
                    why,
                    "check --hermes-home / --profile / HERMES_HOME (the Hermes home holds config.yaml and .env)",
                )
                .into());
            }
            let server = build_server_with(&args.home, args.context.options())?;
            if let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                // Not cut short: a token refresh it starts must be stored.
                rt.block_on(async {
                    crate::gateway::prefetch(server.context()).await;
                    crate::auth::refreshes::drain(crate::hermes::deadlines::REFRESH_DRAIN.get())
                        .await;
                });
            }
            // One pass: the tool list and the providers read the sign-ins once, alike.
            crate::hermes::pass::run(|| tools_report(&server, args.json, v))?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Resolve the Hermes home from the flags and build the server (no I/O).
pub fn build_server(home: &HomeArgs) -> anyhow::Result<HermesServer> {
    build_server_with(home, server::ContextOptions::default())
}

/// [`build_server`] with `serve`'s context switches.
pub fn build_server_with(
    home: &HomeArgs,
    context: server::ContextOptions,
) -> anyhow::Result<HermesServer> {
    let home = HermesHome::resolve(home.hermes_home.as_deref(), home.profile.as_deref())?;
    let ctx = hermes::Context::new(home);
    Ok(HermesServer::with_context(ctx, toolsets::all(), context))
}

/// Logs go to stderr (stdout is the MCP channel) at `default`, and for `serve`
/// also to `$HERMES_HOME/logs/hermes-mcp.log` at the file's level (`info`:
/// start, one line per tool call, warnings, shutdown). codex does not show a
/// server's stderr (it copies it into its own log), so the file is where a
/// user looks. `HERMES_MCP_LOG` sets both filters; in the file rmcp never goes
/// below `warn` (its debug records are whole protocol messages).
fn init_logging(default: &str, file: Option<(hermes::logfile::LogFile, &str)>) {
    use tracing_subscriber::util::SubscriberInitExt;
    let wanted = envvars::get(envvars::HERMES_MCP_LOG);
    let _ = log_subscriber(wanted, default, file).try_init();
}

/// The subscriber [`init_logging`] installs. The file's two filters are one
/// (`and`): stacked as two, a level no layer writes still counted as enabled
/// for `tracing::enabled!`, so every call did its `debug`-only work (the
/// arguments and the result serialized and redacted) at the default `info`.
/// `wanted` is `HERMES_MCP_LOG`.
fn log_subscriber(
    wanted: Option<String>,
    default: &str,
    file: Option<(hermes::logfile::LogFile, &str)>,
) -> impl tracing::Subscriber + Send + Sync {
    use tracing_subscriber::filter::{EnvFilter, FilterExt, filter_fn};
    use tracing_subscriber::{Layer, fmt, layer::SubscriberExt};
    let filter = |d: &str| {
        EnvFilter::try_new(wanted.as_deref().unwrap_or(d)).unwrap_or_else(|_| EnvFilter::new(d))
    };
    let stderr = fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(file.is_none() && std::io::stderr().is_terminal())
        .with_filter(filter(default));
    let file = file.map(|(f, level)| {
        // No level of its own (the hint), so the file's level is the layer's.
        let quiet_rmcp =
            filter_fn(|m| !m.target().starts_with("rmcp") || *m.level() <= tracing::Level::WARN)
                .with_max_level_hint(tracing::level_filters::LevelFilter::TRACE);
        fmt::layer()
            .with_writer(move || f.clone())
            .with_ansi(false)
            .with_filter(filter(level).and(quiet_rmcp))
    });
    tracing_subscriber::registry().with(stderr).with(file)
}

/// `hermes-mcp migrate`: 0 done or up to date, 1 for `--check` with a change
/// pending, 2 (through `main`) on an error.
fn run_migrate(args: &MigrateArgs, v: Verbosity) -> anyhow::Result<ExitCode> {
    match migrate::run(&args.options()) {
        Ok(report) => {
            print_migrate_report(args, &report, v)?;
            Ok(if args.check && report.changed {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        Err(e) => {
            if args.json {
                let doc = serde_json::json!({
                    "written": false,
                    "errors": [crate::error::render(&e)],
                });
                let _ = writeln!(std::io::stdout(), "{}", serde_json::to_string_pretty(&doc)?);
            }
            Err(e)
        }
    }
}

fn print_migrate_report(args: &MigrateArgs, report: &Report, v: Verbosity) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(report)?)?;
        return Ok(());
    }
    // Warnings and errors (the `⚠` lines) are coloured as the diff is.
    let paint = |text: String, terminal: bool| -> String {
        if !use_color_for(args.color, terminal) {
            return text;
        }
        let warn = anstyle::AnsiColor::Yellow.on_default().bold();
        text.lines()
            .map(|l| {
                if l.starts_with('⚠') {
                    format!("{warn}{l}{warn:#}")
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    // `-q`: only what needs the user (problems and what to do).
    let text = report.text(v.quiet);
    let stderr_tty = std::io::stderr().is_terminal();
    if args.dry_run {
        if let Some(d) = &report.diff {
            out.write_all(d.as_bytes())?;
        }
        out.flush()?;
        if !text.is_empty() {
            let _ = writeln!(std::io::stderr(), "{}", paint(text, stderr_tty));
        }
    } else if args.check {
        // --check answers with its exit status and, like `ruff format --check`,
        // one line saying what is out of date (none with -q); the whole
        // report only when asked (-v).
        if v.verbose > 0 {
            let _ = writeln!(std::io::stderr(), "{}", paint(text, stderr_tty));
        } else if !v.quiet && report.changed {
            let _ = writeln!(std::io::stderr(), "{}", report.check_line());
        }
    } else if !text.is_empty() {
        writeln!(out, "{}", paint(text, std::io::stdout().is_terminal()))?;
    }
    Ok(())
}

/// `hermes-mcp doctor [--json]`.
fn print_doctor(r: &doctor::Report, json: bool, v: Verbosity) -> anyhow::Result<()> {
    let mut out = anstream::stdout();
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(r)?)?;
        return Ok(());
    }
    if v.quiet {
        for f in &r.findings {
            writeln!(out, "✗ {}\n  hint: {}", f.message, f.hint)?;
        }
        return Ok(());
    }
    writeln!(
        out,
        "config.toml   {} (codex: {})",
        r.codex_config, r.codex_check
    )?;
    if let Some(s) = &r.server {
        let resolved = match &s.resolved {
            Some(p) if *p != s.command => format!(" → {p}"),
            _ => String::new(),
        };
        writeln!(
            out,
            "hermes-tools  {} {}{resolved}",
            s.command,
            s.args.join(" ")
        )?;
        if let (Some(i), Some(t)) = (s.initialize_ms, s.tools_list_ms) {
            writeln!(
                out,
                "              started as codex starts it: initialize {i} ms, tools/list {t} ms, {} tools ({} {})",
                s.tools_listed.len(),
                s.server_name.as_deref().unwrap_or("?"),
                s.server_version.as_deref().unwrap_or("?"),
            )?;
        }
        writeln!(out, "              environment: {}", s.env_names.join(" "))?;
    }
    if let Some(h) = &r.hermes_home {
        writeln!(out, "Hermes home   {h}")?;
    }
    if let Some(rt) = &r.openai_runtime {
        writeln!(out, "runtime       model.openai_runtime: {rt}")?;
    }
    if let Some(line) = r.instructions_line() {
        writeln!(out, "instructions  {line}")?;
    }
    if let Some(l) = &r.log_file {
        writeln!(out, "log file      {l}")?;
    }
    if let Some(p) = &r.plugin {
        writeln!(out, "Hermes plugin {} ({})", p.path, p.state)?;
    }
    if !r.unavailable_tools.is_empty() {
        writeln!(out, "\nUnavailable tools ({}):", r.unavailable_tools.len())?;
        for l in doctor_tool_lines(r) {
            writeln!(out, "  {}", l.unavailable_text())?;
        }
    }
    if !r.providers.is_empty() {
        writeln!(out, "\nProviders:")?;
        for p in &r.providers {
            writeln!(out, "  {}: {} — {}", p.job, p.provider, p.why)?;
        }
    }
    for n in &r.notes {
        writeln!(out, "\nnote: {n}")?;
    }
    writeln!(out)?;
    if r.findings.is_empty() {
        writeln!(out, "No problems found: codex will reach hermes-tools.")?;
    } else {
        writeln!(out, "{} problem(s):", r.findings.len())?;
        for f in &r.findings {
            writeln!(out, "✗ {}\n  hint: {}", f.message, f.hint)?;
        }
    }
    Ok(())
}

/// doctor's unavailable tools, a prefix's tools on one line (`kanban_*`).
fn doctor_tool_lines(r: &doctor::Report) -> Vec<doctor::lines::Line> {
    let rows: Vec<doctor::lines::ToolRow<'_>> = r
        .unavailable_tools
        .iter()
        .map(|t| doctor::lines::ToolRow {
            name: &t.name,
            toolset: &t.toolset,
            unavailable: Some(&t.reason),
        })
        .collect();
    let mut all: Vec<&str> = rows.iter().map(|t| t.name).collect();
    if let Some(s) = &r.server {
        all.extend(s.tools_listed.iter().map(String::as_str));
    }
    doctor::lines::group(&rows, &all)
}

/// `tools`' lines, a prefix's tools on one line (`kanban_*`); `only_unavailable` for `-q`.
fn tool_lines(
    entries: &[(&'static str, crate::server::ToolEntry)],
    only_unavailable: bool,
) -> Vec<doctor::lines::Line> {
    let rows: Vec<doctor::lines::ToolRow<'_>> = entries
        .iter()
        .map(|(ts, e)| doctor::lines::ToolRow {
            name: e.spec.name,
            toolset: ts,
            unavailable: match &e.availability {
                Availability::Available => None,
                Availability::Unavailable(r) => Some(r.as_str()),
            },
        })
        .filter(|r| !only_unavailable || r.unavailable.is_some())
        .collect();
    let all: Vec<&str> = entries.iter().map(|(_, e)| e.spec.name).collect();
    doctor::lines::group(&rows, &all)
}

/// `hermes-mcp tools [--json]`.
/// Tools available now that a running `serve` of this home did not list to
/// its Codex (see [`crate::server::running`]), with the pids that lack each.
fn new_since_codex_started(
    server: &HermesServer,
    entries: &[(&'static str, crate::server::ToolEntry)],
) -> Vec<(String, Vec<u32>)> {
    let live = crate::server::running::live(&server.context().home.path);
    let now: Vec<&str> = entries
        .iter()
        .filter(|(_, e)| e.availability.is_available())
        .map(|(_, e)| e.spec.name)
        .collect();
    crate::server::running::new_since_start(&live, &now)
}

fn tools_report(server: &HermesServer, json: bool, v: Verbosity) -> anyhow::Result<()> {
    let entries = server.entries();
    let mut out = anstream::stdout();
    if json {
        let list: Vec<serde_json::Value> = entries
            .iter()
            .map(|(ts, e)| {
                let (available, reason) = match &e.availability {
                    Availability::Available => (true, None),
                    Availability::Unavailable(r) => (false, Some(r.clone())),
                };
                serde_json::json!({
                    "name": e.spec.name, "toolset": ts, "available": available, "reason": reason,
                    "read_only": e.spec.hints.read_only,
                })
            })
            .collect();
        let providers: Vec<serde_json::Value> = server
            .providers()
            .into_iter()
            .map(|(ts, p)| serde_json::json!({"toolset": ts, "job": p.job, "provider": p.provider, "why": p.why}))
            .collect();
        let newer: Vec<serde_json::Value> = new_since_codex_started(server, &entries)
            .into_iter()
            .map(|(name, pids)| serde_json::json!({"name": name, "pids": pids}))
            .collect();
        let doc = serde_json::json!({
            "hermes_home": server.context().home.path,
            "config_error": server.context().config_error(),
            "tools": list,
            "providers": providers,
            "new_since_codex_started": newer,
            "instructions": server.instructions_summary(),
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
        return Ok(());
    }
    if v.quiet {
        // Only what does not work, and why.
        if let Some(e) = server.context().config_error() {
            writeln!(out, "warning: {e}")?;
        }
        for l in tool_lines(&entries, true) {
            writeln!(out, "{}", l.unavailable_text())?;
        }
        return Ok(());
    }
    writeln!(out, "Hermes home: {}", server.context().home.path.display())?;
    if let Some(e) = server.context().config_error() {
        writeln!(out, "warning: {e}")?;
    }
    let lines = tool_lines(&entries, false);
    let width = lines
        .iter()
        .map(|l| l.label.chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    let tw = lines
        .iter()
        .map(|l| l.toolset.chars().count())
        .max()
        .unwrap_or(7)
        .max(7);
    writeln!(out, "{:<width$}  {:<tw$}  STATUS", "TOOL", "TOOLSET")?;
    for l in &lines {
        writeln!(out, "{:<width$}  {:<tw$}  {}", l.label, l.toolset, l.status)?;
    }
    let n = entries
        .iter()
        .filter(|(_, e)| e.availability.is_available())
        .count();
    writeln!(out, "{n} of {} tools available", entries.len())?;
    let newer = new_since_codex_started(server, &entries);
    if !newer.is_empty() {
        let mut pids: Vec<u32> = newer.iter().flat_map(|(_, p)| p.clone()).collect();
        pids.sort_unstable();
        pids.dedup();
        let pids: Vec<String> = pids.iter().map(u32::to_string).collect();
        let names: Vec<&str> = newer.iter().map(|(n, _)| n.as_str()).collect();
        writeln!(
            out,
            "Available now, but not when the running hermes-tools (pid {}) started: {}. Restart codex to get them (Codex reads the tool list once, at start).",
            pids.join(", "),
            names.join(", ")
        )?;
    }
    let providers = server.providers();
    if !providers.is_empty() {
        writeln!(out)?;
        let w = providers
            .iter()
            .map(|(_, p)| p.job.len())
            .max()
            .unwrap_or(3)
            .max(3);
        writeln!(out, "{:<w$}  PROVIDER — WHY", "JOB")?;
        for (_, p) in &providers {
            writeln!(out, "{:<w$}  {} — {}", p.job, p.provider, p.why)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn color_choice_honours_no_color() {
        assert!(decide_color(ColorChoice::Auto, true, false));
        assert!(!decide_color(ColorChoice::Auto, true, true));
        assert!(!decide_color(ColorChoice::Auto, false, false));
        assert!(decide_color(ColorChoice::Always, false, true));
        assert!(!decide_color(ColorChoice::Never, true, false));
    }

    /// What `tracing::enabled!` says under `serve`'s subscriber (stderr and
    /// the log file) for the call log's `debug` work and its `info` line.
    fn enabled_under(wanted: Option<&str>) -> (bool, bool) {
        let home = tempfile::tempdir().unwrap();
        let file = hermes::logfile::LogFile::open_in(home.path())
            .unwrap()
            .unwrap();
        let sub = log_subscriber(wanted.map(String::from), "warn", Some((file, "info")));
        tracing::subscriber::with_default(sub, || {
            (
                tracing::enabled!(tracing::Level::DEBUG),
                tracing::enabled!(tracing::Level::INFO),
            )
        })
    }

    #[test]
    fn debug_work_is_done_only_when_a_log_writes_debug() {
        assert_eq!(enabled_under(None), (false, true));
        assert_eq!(enabled_under(Some("debug")), (true, true));
        assert_eq!(enabled_under(Some("info,hermes_mcp=debug")), (true, true));
    }
}
