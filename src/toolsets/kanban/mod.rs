//! Hermes' `kanban` toolset (hermes-agent: `tools/kanban_tools.py`) on
//! Hermes' own `kanban.db`: the nine tools a dispatcher-spawned worker or an
//! orchestrator profile uses, with Hermes' schemas, gating, defaults, results
//! and errors.
//!
//! The database is opened on the first kanban call (never in `tools()`), one
//! connection per DB path kept for the server's life; every SQLite call runs
//! on tokio's blocking pool.
//!
//! Layers, each importing only from the ones above it:
//! * `util`, `error`, `status`: leaf helpers (clock, ids, Python string
//!   semantics), the error types and a task's status;
//! * `paths`: which board and file a call targets;
//! * `txn`: write transactions; `tables`: schema and migrations; `db`:
//!   opening a board's file;
//! * `store`: rows and queries; `workspace`: scratch files (no SQL);
//! * `ops/*`: the state machine, one module per operation family;
//! * `schema`: the tool definitions; `env`, `args`, `handlers`: a call's
//!   environment, parsed arguments and result shaping; this file wires them
//!   to the `Toolset` trait.

mod args;
mod db;
mod env;
mod error;
mod guidance;
mod handlers;
mod ops;
mod paths;
mod schema;
mod status;
mod store;
mod tables;
mod txn;
mod util;
mod workspace;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::time::{Duration, Instant};

use rusqlite::Connection;

use crate::hermes::envvars as ev;
use crate::hermes::{Context, deadlines};
use crate::server::args::ArgsExt;
use crate::server::context::{ContextBlock, Offer, Slot};
use crate::server::toolset::BoxFuture;
use crate::server::{Availability, ToolCall, ToolDef, ToolEntry, ToolOutput, Toolset};
use args::KanbanTool;
use env::KEnv;
use error::KanbanError;
use paths::KanbanPaths;

#[derive(Default)]
pub struct KanbanToolset {
    /// One connection per DB path, opened on first use on the blocking pool.
    conns: Mutex<HashMap<PathBuf, Arc<Mutex<Option<OpenDb>>>>>,
}

impl KanbanToolset {
    pub fn new() -> Self {
        Self::default()
    }
}

/// A cached connection and the file identity it was opened on.
struct OpenDb {
    conn: Connection,
    id: Option<(u64, u64)>,
    /// `(PRAGMA data_version, total_changes)` after the last `recompute_ready`
    /// that kanban_list ran: while both are unchanged, nobody (other
    /// connections or this one) has written, so nothing new can be promoted.
    recomputed_at: Option<(i64, u64)>,
}

fn file_id(p: &std::path::Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()))
}

/// `"kanban" in config["toolsets"]` with Python's `in` semantics.
fn profile_has_kanban_toolset(ctx: &Context) -> bool {
    ctx.sections().toolsets.contains("kanban")
}

/// A busy/locked SQLite error, once the call's lock-wait budget is spent,
/// becomes [`KanbanError::Locked`] naming the board's file and the wait.
fn name_the_lock(e: KanbanError, db_path: &Path, started: Instant) -> KanbanError {
    match e {
        KanbanError::Sqlite(s) if txn::is_busy(&s) => KanbanError::Locked {
            path: db_path.to_path_buf(),
            waited_secs: deadlines::unscaled(started.elapsed()).as_secs(),
        },
        other => other,
    }
}

/// The board's connection slot, waited for until `deadline` (a call ahead of
/// us may be waiting out another process's lock itself).
fn lock_slot(
    slot: &Mutex<Option<OpenDb>>,
    deadline: Instant,
) -> Option<MutexGuard<'_, Option<OpenDb>>> {
    loop {
        match slot.try_lock() {
            Ok(g) => return Some(g),
            Err(TryLockError::Poisoned(p)) => return Some(p.into_inner()),
            Err(TryLockError::WouldBlock) if Instant::now() >= deadline => return None,
            Err(TryLockError::WouldBlock) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

/// `<tool>: <error>`; unexpected failures (not caller mistakes) are logged.
fn fail(tool: &str, e: KanbanError) -> ToolOutput {
    if !e.is_caller_error() {
        tracing::warn!("{tool} failed: {e}");
    }
    ToolOutput::error(format!("{tool}: {e}"))
}

impl Toolset for KanbanToolset {
    fn name(&self) -> &'static str {
        "kanban"
    }

    fn defs(&self) -> &'static [ToolDef] {
        schema::DEFS
    }

    fn resolve(&self, ctx: &Context, def: &'static ToolDef) -> ToolEntry {
        let name = def.name;
        let worker = ctx.env.get(ev::HERMES_KANBAN_TASK).is_some();
        let has_toolset = profile_has_kanban_toolset(ctx);
        let config = ctx.home.config_path();
        let orchestrator_only =
            KanbanTool::from_name(name).is_some_and(KanbanTool::orchestrator_only);
        let availability = if orchestrator_only {
            if worker {
                Availability::Unavailable(args::orchestrator_only_message(name))
            } else if has_toolset {
                Availability::Available
            } else {
                Availability::Unavailable(format!(
                    "orchestrator tool: add `kanban` to `toolsets:` in {}",
                    config.display()
                ))
            }
        } else if worker || has_toolset {
            Availability::Available
        } else {
            Availability::Unavailable(format!(
                "set HERMES_KANBAN_TASK (a dispatcher-spawned worker) or add `kanban` to `toolsets:` in {}",
                config.display()
            ))
        };
        def.entry(availability)
    }

    /// `KANBAN_GUIDANCE` when `kanban_show` is offered, as Hermes decides
    /// (`agent_init`'s `_kanban_worker_guidance`).
    fn context(&self, _ctx: &Context, offer: &Offer) -> Vec<ContextBlock> {
        if !offer.tools.contains("kanban_show") {
            return Vec::new();
        }
        vec![ContextBlock::new(
            Slot::KanbanGuidance,
            guidance::KANBAN_GUIDANCE.to_string(),
        )]
    }

    fn call<'a>(&'a self, ctx: &'a Context, call: ToolCall) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let kenv = KEnv::from_ctx(ctx);
            let paths = KanbanPaths::from_env(&ctx.env, &ctx.home);
            let name = call.name;
            let args = call.args;
            let Some(tool) = KanbanTool::from_name(name) else {
                return ToolOutput::error(format!("Unknown tool: {name}"));
            };
            // Checks that need no database come first, as in Hermes' handlers.
            let parsed = match args::parse(tool, &args, &kenv) {
                Ok(p) => p,
                Err(out) => return out,
            };
            let db_path = match paths.db_path(args.str_arg("board")) {
                Ok(p) => p,
                Err(e) => return ToolOutput::error(format!("{name}: {e}")),
            };
            let conn = {
                let mut map = self
                    .conns
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                map.entry(db_path.clone()).or_default().clone()
            };
            // One budget for all of this call's lock waits (Hermes'
            // HERMES_KANBAN_BUSY_TIMEOUT_MS may shorten it, never lengthen it).
            let started = Instant::now();
            let budget = deadlines::scaled(Duration::from_millis(kenv.busy_timeout_ms))
                .min(deadlines::KANBAN_LOCK_WAIT.get());
            let deadline = started + budget;
            let res = tokio::task::spawn_blocking(move || {
                let _budget = txn::LockBudget::start(deadline);
                let Some(mut guard) = lock_slot(&conn, deadline) else {
                    let e = KanbanError::InUse {
                        path: db_path,
                        waited_secs: deadlines::unscaled(started.elapsed()).as_secs(),
                    };
                    return fail(name, e);
                };
                // A board file that was removed or replaced (archived board,
                // re-initialized DB) is reopened, never written through a
                // handle to the old inode.
                let now_id = file_id(&db_path);
                if guard
                    .as_ref()
                    .is_some_and(|o| o.id != now_id || now_id.is_none())
                {
                    *guard = None;
                    db::forget(&db_path);
                }
                if guard.is_none() {
                    match db::open(&db_path) {
                        Ok(conn) => {
                            *guard = Some(OpenDb {
                                conn,
                                id: file_id(&db_path),
                                recomputed_at: None,
                            })
                        }
                        Err(e) => return fail(name, name_the_lock(e, &db_path, started)),
                    }
                }
                let open = guard.as_mut().expect("connection");
                let env = handlers::Env {
                    kenv: &kenv,
                    paths: &paths,
                    recomputed_at: &mut open.recomputed_at,
                };
                let out = handlers::run(&open.conn, parsed, env)
                    .unwrap_or_else(|e| fail(name, name_the_lock(e, &db_path, started)));
                let c = &open.conn;
                if !c.is_autocommit() {
                    // Never carry a snapshot or lock into the next call.
                    tracing::warn!("{name} left a transaction open; rolling it back");
                    let _ = c.execute_batch("ROLLBACK");
                }
                out
            })
            .await;
            res.unwrap_or_else(|e| ToolOutput::error(format!("kanban call failed: {e}")))
        })
    }
}
