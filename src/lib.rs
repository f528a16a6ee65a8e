//! hermes-mcp: Hermes Agent's tools as a stdio MCP server for the OpenAI Codex
//! CLI (`serve`), and a migrator that registers it and Hermes' MCP servers in
//! Codex's `config.toml` (`migrate`).

#![deny(clippy::print_stdout)]

pub mod cli;
pub mod error;
pub mod hermes;
pub mod migrate;
pub mod net;
pub mod redact;
pub mod server;
pub mod toolsets;

use std::process::ExitCode;

use anyhow::Context as _;

use cli::{Cli, Command, HomeArgs};
use hermes::HermesHome;

/// Entry point behind `main`: dispatch a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Serve(args) => {
            init_logging("warn,rmcp=error");
            let server = build_server(&args.home)?;
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .context("cannot start the async runtime")?;
            rt.block_on(server::serve_stdio(server))?;
            // A pending read on tokio's stdin cannot be cancelled; do not wait for it.
            rt.shutdown_background();
            Ok(ExitCode::SUCCESS)
        }
        Command::Migrate(args) => {
            init_logging("warn");
            migrate::run(&args)
        }
        Command::PdfText => Ok(toolsets::web::pdf::child_main()),
        Command::Tools(args) => {
            init_logging("error");
            let server = build_server(&args.home)?;
            tools_report(&server, args.json)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Resolve the Hermes home from the flags and build the server (no I/O).
pub fn build_server(home: &HomeArgs) -> anyhow::Result<server::HermesServer> {
    let home = HermesHome::resolve(home.hermes_home.as_deref(), home.profile.as_deref())?;
    let ctx = hermes::Context::new(home);
    Ok(server::HermesServer::new(ctx, toolsets::all()))
}

/// Logs go to stderr (stdout is the MCP channel). `HERMES_MCP_LOG` sets the filter.
fn init_logging(default: &str) {
    use tracing_subscriber::EnvFilter;
    let filter = hermes::envvars::get(hermes::envvars::HERMES_MCP_LOG)
        .unwrap_or_else(|| default.to_string());
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(EnvFilter::try_new(&filter).unwrap_or_else(|_| EnvFilter::new(default)))
        .try_init();
}

/// `hermes-mcp tools [--json]`.
fn tools_report(server: &server::HermesServer, json: bool) -> anyhow::Result<()> {
    use std::io::Write;
    let entries = server.entries();
    let mut out = anstream::stdout();
    if json {
        let list: Vec<serde_json::Value> = entries
            .iter()
            .map(|(ts, e)| {
                let (available, reason) = match &e.availability {
                    server::Availability::Available => (true, None),
                    server::Availability::Unavailable(r) => (false, Some(r.clone())),
                };
                serde_json::json!({
                    "name": e.spec.name, "toolset": ts, "available": available, "reason": reason,
                    "read_only": e.spec.hints.read_only,
                })
            })
            .collect();
        let doc = serde_json::json!({
            "hermes_home": server.context().home.path,
            "config_error": server.context().config_error(),
            "tools": list,
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
        return Ok(());
    }
    writeln!(out, "Hermes home: {}", server.context().home.path.display())?;
    if let Some(e) = server.context().config_error() {
        writeln!(out, "warning: {e}")?;
    }
    let width = entries
        .iter()
        .map(|(_, e)| e.spec.name.len())
        .max()
        .unwrap_or(4)
        .max(4);
    writeln!(out, "{:<width$}  {:<9}  STATUS", "TOOL", "TOOLSET")?;
    for (ts, e) in &entries {
        let status = match &e.availability {
            server::Availability::Available => "available".to_string(),
            server::Availability::Unavailable(r) => format!("unavailable: {r}"),
        };
        writeln!(out, "{:<width$}  {:<9}  {status}", e.spec.name, ts)?;
    }
    let n = entries
        .iter()
        .filter(|(_, e)| e.availability.is_available())
        .count();
    writeln!(out, "{n} of {} tools available", entries.len())?;
    Ok(())
}
