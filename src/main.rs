use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = hermes_mcp::cli::Cli::parse();
    match hermes_mcp::cli::run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{}", hermes_mcp::error::render(&e));
            ExitCode::from(2)
        }
    }
}
