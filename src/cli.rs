//! Command-line definitions (clap).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(name = "hermes-mcp", version, about = "Hermes Agent's tools for the OpenAI Codex CLI", long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the stdio MCP server (Codex launches this as `hermes-tools`).
    Serve(ServeArgs),
    /// Write Hermes' MCP servers, Codex plugins, permissions and hermes-tools into Codex's config.toml.
    Migrate(MigrateArgs),
    /// List every tool, its toolset, and whether it works here (and why not).
    Tools(ToolsArgs),
    /// Internal: PDF bytes on stdin, extracted text on stdout (web_extract runs it isolated).
    #[command(name = "__pdf-text", hide = true)]
    PdfText,
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
}

#[derive(Debug, Args, Clone, Default)]
pub struct ToolsArgs {
    #[command(flatten)]
    pub home: HomeArgs,
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
    /// Default permission profile (:read-only, :workspace, :danger-full-access, or a [permissions.NAME] profile)
    #[arg(
        long,
        value_name = "PROFILE",
        default_value = ":workspace",
        conflicts_with = "no_permissions"
    )]
    pub permissions: String,
    /// Do not set default_permissions
    #[arg(long)]
    pub no_permissions: bool,
    /// Colour in the diff and report
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}
