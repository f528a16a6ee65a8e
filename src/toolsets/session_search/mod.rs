//! Hermes' `session_search` toolset (hermes-agent 0.19.0,
//! `tools/session_search_tool.py` over `hermes_state.py`'s `SessionDB`):
//! recall of earlier Hermes conversations from `$HERMES_HOME/state.db`, in
//! Hermes' four shapes — discovery (`query`), scroll (`session_id` +
//! `around_message_id`), read (`session_id`) and browse (no arguments) —
//! plus other profiles' sessions (`profile`, `@session:<profile>/<id>`).
//!
//! Stateless: no model call, no live agent. Each call reads the database
//! through a read-only connection (never creating, migrating or locking it
//! for writing; SQLite keeps its `-wal`/`-shm` files beside it, as for any
//! reader; see `db`) under a deadline, runs Hermes' own SQL, and shapes the result byte
//! for byte as Hermes' registry handler returns it. Under Hermes,
//! `HERMES_SESSION_ID` names the conversation Codex is in; its lineage is
//! left out of results as Hermes leaves out the agent's own session.
//!
//! Deliberate differences from Hermes' function, all where Hermes would
//! write: a missing, corrupt, locked or unknown-version `state.db` is a clear
//! error (Hermes creates an empty one, migrates an old one, or fails later
//! with a bare SQLite message); the current profile's database is opened
//! only when no `profile` is given (Hermes opens it first in every call).
//! Arguments are checked against the schema by the server first, so a
//! `limit` of `"abc"` is refused where Hermes would fall back to 3.
//!
//! Kept as Hermes has it, though it surprises: another profile's database is
//! opened as Hermes opens it, read-only without FTS (`SessionDB(read_only=
//! True)` never enables it), so discovery there finds session titles only;
//! browse, scroll and read work fully.
//!
//! Layers, each importing only from the ones above it:
//! * `schema`: the tool's declaration; `args`: the call's arguments;
//!   `budget`: the call's deadline and cancel flag;
//! * `db`: opening, hardening and checking the file;
//! * `store`, `search`: row reads and the FTS5 search (Hermes' SQL);
//! * `format`: message shaping, timestamps, result text;
//! * `browse`, `discover`, `read`, `profiles`: the shapes;
//! * `tool`: routing one call; this file wires it to the `Toolset` trait.

mod args;
mod browse;
mod budget;
mod db;
mod discover;
mod format;
mod profiles;
mod read;
mod schema;
mod search;
mod store;
mod tool;

use crate::hermes::Context;
use crate::server::context::{ContextBlock, Offer, Slot};
use crate::server::toolset::BoxFuture;
use crate::server::{Availability, ToolCall, ToolDef, ToolEntry, ToolOutput, Toolset};
use args::Args;
use tool::CallEnv;

/// `agent/prompt_builder.py::SESSION_SEARCH_GUIDANCE`.
pub(crate) const SESSION_SEARCH_GUIDANCE: &str = "When the user references something from a past conversation or you suspect relevant cross-session context exists, use session_search to recall it before asking them to repeat themselves.";

#[derive(Default)]
pub struct SessionSearchToolset {
    /// This home's `state.db` connection, kept between calls.
    cache: std::sync::Arc<db::DbCache>,
}

impl Toolset for SessionSearchToolset {
    fn name(&self) -> &'static str {
        "session_search"
    }

    fn defs(&self) -> &'static [ToolDef] {
        schema::DEFS
    }

    /// Hermes' `check_session_search_requirements()`: the directory that
    /// holds `state.db` (`$HERMES_HOME`) exists; the file itself may not yet.
    fn resolve(&self, ctx: &Context, def: &'static ToolDef) -> ToolEntry {
        let home = &ctx.home.path;
        let availability = if home.exists() {
            Availability::Available
        } else {
            Availability::Unavailable(format!(
                "the Hermes home {} does not exist (session_search reads its state.db)",
                home.display()
            ))
        };
        def.entry(availability)
    }

    fn warm_up(&self, _ctx: &Context) {
        search::warm();
    }

    /// `SESSION_SEARCH_GUIDANCE` when `session_search` is offered.
    fn context(&self, _ctx: &Context, offer: &Offer) -> Vec<ContextBlock> {
        if !offer.tools.contains("session_search") {
            return Vec::new();
        }
        vec![ContextBlock::new(
            Slot::SessionSearchGuidance,
            SESSION_SEARCH_GUIDANCE.to_string(),
        )]
    }

    fn call<'a>(&'a self, ctx: &'a Context, call: ToolCall) -> BoxFuture<'a, ToolOutput> {
        let env = CallEnv {
            home: ctx.home.clone(),
            current: ctx.session_id(),
        };
        let args = Args::parse(&call.args);
        let cache = self.cache.clone();
        let budget = budget::Budget::new();
        // Dropped with this future (cancel, shutdown): stops the SQLite work.
        let stop = budget::CancelOnDrop(budget.clone());
        Box::pin(async move {
            let out =
                tokio::task::spawn_blocking(move || tool::run(&env, &cache, args, &budget)).await;
            drop(stop);
            out.unwrap_or_else(|e| format::tool_error(format!("session_search failed: {e}")))
        })
    }
}
