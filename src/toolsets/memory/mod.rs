//! Hermes' `memory` toolset: the one `memory` tool, Hermes' long-term memory
//! (hermes-agent 0.19.0: `tools/memory_tool.py`), served statelessly so a fact
//! Codex saves is in Hermes' next system prompt.
//!
//! Two files under `$HERMES_HOME/memories/` (a profile's home is its own
//! `HERMES_HOME`, so profiles are included): `MEMORY.md`, the agent's notes,
//! and `USER.md`, the user profile, each a `§`-delimited list of entries under
//! a char limit from `config.yaml`. Each call does what Hermes' registry
//! handler does with a fresh `load_on_disk_store()`, and gives the same
//! result, error texts and files.
//!
//! Modules, each importing only from the ones above it:
//! * `schema`: the tool's declaration, Hermes' schema verbatim;
//! * `args`: the call's arguments, read as Hermes' handler reads them;
//! * `config`: the `memory:` section (limits, write approval, availability);
//! * `format`: the file format and Hermes' number formatting, no I/O;
//! * `scan`: the threat/injection scan on new content;
//! * `disk`: Hermes' lock, safe reads, atomic 0600 writes, drift backups;
//! * `store`: add / replace / remove / batch under the lock;
//! * `approval`: staging for `memory.write_approval: true`;
//! * `prompt`: the pieces of Hermes' system prompt this toolset owns (the
//!   memory snapshot, the user profile, `MEMORY_GUIDANCE`, SOUL.md);
//! * `tool`: one call, in Hermes' order of checks; this file wires it to the
//!   `Toolset` trait.

mod approval;
mod args;
mod config;
mod disk;
mod format;
mod prompt;
mod scan;
mod schema;
mod store;
mod tool;

pub use scan::first_threat_message;

use serde_json::Value;

use crate::hermes::Context;
use crate::process::blocking;
use crate::server::context::{ContextBlock, Offer};
use crate::server::toolset::BoxFuture;
use crate::server::{Availability, ToolCall, ToolDef, ToolEntry, ToolOutput, Toolset};

pub(crate) struct MemoryToolset;

impl Toolset for MemoryToolset {
    fn name(&self) -> &'static str {
        "memory"
    }

    fn defs(&self) -> &'static [ToolDef] {
        schema::DEFS
    }

    /// Offered when Hermes gives its agent a memory store: `memory_enabled` or
    /// `user_profile_enabled` (either one makes both targets writable).
    fn resolve(&self, ctx: &Context, def: &'static ToolDef) -> ToolEntry {
        def.entry(match config::unavailable_reason(ctx) {
            None => Availability::Available,
            Some(why) => Availability::Unavailable(why),
        })
    }

    /// The threat scan's patterns (the exact forms stay lazy: they are built
    /// only for content the loose forms flag).
    fn warm_up(&self, _ctx: &Context) {
        scan::warm();
    }

    fn context_reads_files(&self) -> bool {
        true
    }

    fn context(&self, ctx: &Context, offer: &Offer) -> Vec<ContextBlock> {
        prompt::blocks(ctx, offer)
    }

    fn call<'a>(&'a self, ctx: &'a Context, call: ToolCall) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            if call.name != "memory" {
                return ToolOutput::error(format!("Unknown tool: {}", call.name));
            }
            let config = config::MemoryConfig::load(ctx);
            let result = blocking(|| tool::run(&ctx.home.path, config, &call.args));
            // A refusal ("success": false) is a failed call; a staged write is not.
            if result.get("success") == Some(&Value::Bool(false)) {
                ToolOutput::error_json(result)
            } else {
                ToolOutput::json(result)
            }
        })
    }
}
