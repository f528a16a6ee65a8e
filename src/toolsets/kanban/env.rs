//! What a kanban call reads from the environment and the profile config,
//! snapshotted once per call on the async side (the blocking database work
//! then never touches `Context`). The variables are the ones Hermes'
//! dispatcher sets for a worker and its gateway sets for a session
//! (hermes-agent: `tools/kanban_tools.py`).

use crate::hermes::Context;
use crate::hermes::envvars as ev;
use crate::server::ToolOutput;
use crate::toolsets::kanban::db::DEFAULT_BUSY_TIMEOUT_MS;
use crate::toolsets::kanban::ops::DEFAULT_CLAIM_TTL_SECONDS;

/// Everything a call reads from the environment, snapshotted on the async side.
#[derive(Debug, Clone, Default)]
pub(crate) struct KEnv {
    /// `HERMES_KANBAN_TASK`: set when this server runs inside a
    /// dispatcher-spawned worker, which may only mutate that task.
    pub(crate) task: Option<String>,
    pub(crate) run_id: Option<String>,
    pub(crate) claim_lock: Option<String>,
    pub(crate) profile: Option<String>,
    pub(crate) session_id: Option<String>,
    pub(crate) tenant: Option<String>,
    pub(crate) claim_ttl: i64,
    pub(crate) busy_timeout_ms: u64,
    pub(crate) terminal_timeout: Option<String>,
    pub(crate) session_platform: Option<String>,
    pub(crate) session_chat_id: Option<String>,
    pub(crate) session_thread_id: Option<String>,
    pub(crate) session_user_id: Option<String>,
    pub(crate) session_key: Option<String>,
    pub(crate) session_profile: Option<String>,
    /// `kanban.auto_subscribe_on_create` (default on).
    pub(crate) auto_subscribe: bool,
}

fn positive(v: Option<String>) -> Option<i64> {
    v.and_then(|s| s.trim().parse::<i64>().ok())
        .filter(|n| *n > 0)
}

impl KEnv {
    pub(crate) fn from_ctx(ctx: &Context) -> Self {
        let g = |n: &str| ctx.env.get(n);
        KEnv {
            task: g(ev::HERMES_KANBAN_TASK),
            run_id: g(ev::HERMES_KANBAN_RUN_ID),
            claim_lock: g(ev::HERMES_KANBAN_CLAIM_LOCK),
            profile: g(ev::HERMES_PROFILE),
            session_id: g(ev::HERMES_SESSION_ID),
            tenant: g(ev::HERMES_TENANT),
            claim_ttl: positive(g(ev::HERMES_KANBAN_CLAIM_TTL_SECONDS))
                .unwrap_or(DEFAULT_CLAIM_TTL_SECONDS),
            busy_timeout_ms: positive(g(ev::HERMES_KANBAN_BUSY_TIMEOUT_MS))
                .map(|v| v as u64)
                .unwrap_or(DEFAULT_BUSY_TIMEOUT_MS),
            terminal_timeout: g(ev::TERMINAL_TIMEOUT),
            session_platform: g(ev::HERMES_SESSION_PLATFORM),
            session_chat_id: g(ev::HERMES_SESSION_CHAT_ID),
            session_thread_id: g(ev::HERMES_SESSION_THREAD_ID),
            session_user_id: g(ev::HERMES_SESSION_USER_ID),
            session_key: g(ev::HERMES_SESSION_KEY),
            session_profile: g(ev::HERMES_SESSION_PROFILE),
            auto_subscribe: ctx.sections().kanban.auto_subscribe_on_create,
        }
    }

    /// `_default_task_id`: the argument when non-empty, else `HERMES_KANBAN_TASK`.
    pub(crate) fn task_id(&self, arg: Option<&str>) -> Option<String> {
        arg.filter(|a| !a.is_empty())
            .map(str::to_string)
            .or_else(|| self.task.clone())
    }

    /// `_enforce_worker_task_ownership`.
    pub(crate) fn ownership(&self, tid: &str) -> Result<(), ToolOutput> {
        match &self.task {
            Some(own) if own != tid => Err(ToolOutput::error(format!(
                "worker is scoped to task {own}; refusing to mutate {tid}. Use kanban_comment to hand off information to other tasks, or kanban_create to spawn follow-up work."
            ))),
            _ => Ok(()),
        }
    }

    /// `_worker_run_id`: the dispatcher's run id, only for the worker's own task.
    pub(crate) fn worker_run_id(&self, tid: &str) -> Option<i64> {
        if self.task.as_deref() != Some(tid) {
            return None;
        }
        self.run_id.as_deref().and_then(|r| r.trim().parse().ok())
    }

    /// Comment and `created_by` author: the profile, else `worker`.
    pub(crate) fn author(&self) -> String {
        self.profile.clone().unwrap_or_else(|| "worker".into())
    }
}
