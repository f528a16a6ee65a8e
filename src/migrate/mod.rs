//! `hermes-mcp migrate` (being written).

use std::process::ExitCode;

use crate::cli::MigrateArgs;

pub fn run(_args: &MigrateArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("migrate is not implemented yet")
}
