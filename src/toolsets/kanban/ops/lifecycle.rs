//! Status changes of an existing task: promotion (`recompute_ready`),
//! heartbeats, `block_task` (with the block-loop breaker) and `unblock_task`
//! (hermes-agent: `hermes_cli/kanban_db.py`). Every change is a
//! compare-and-swap on the status (and on the worker's run when known).

use rusqlite::types::Value as Sql;
use rusqlite::{Connection, OptionalExtension, params, params_from_iter};
use serde_json::json;

use crate::toolsets::kanban::error::{KanbanResult, value_err};
use crate::toolsets::kanban::ops::{BLOCK_RECURRENCE_LIMIT, VALID_BLOCK_KINDS};
use crate::toolsets::kanban::status::Status;
use crate::toolsets::kanban::store::{
    append_event, current_run_id, end_run, query_rows, synthesize_ended_run,
};
use crate::toolsets::kanban::txn::write_txn;
use crate::toolsets::kanban::util::{now, py_list};

/// Promote `todo`/`blocked` tasks whose parents are all `done`/`archived`
/// (same rules as Hermes: a blocked task stays when its latest
/// blocked/unblocked event is `blocked`, or when it reached its failure
/// limit). The eligible set comes from one query; a write transaction is only
/// opened when it is non-empty, and the query is re-run inside it, so a
/// concurrent writer's change is never undone.
pub(crate) fn recompute_ready(conn: &Connection) -> KanbanResult<i64> {
    const ELIGIBLE: &str = "SELECT t.id, t.status FROM tasks t \
        WHERE t.status IN ('todo', 'blocked') \
        AND NOT EXISTS (SELECT 1 FROM task_links l JOIN tasks p ON p.id = l.parent_id \
            WHERE l.child_id = t.id AND p.status NOT IN ('done', 'archived')) \
        AND (t.status = 'todo' OR ( \
            COALESCE((SELECT e.kind FROM task_events e WHERE e.task_id = t.id \
                AND e.kind IN ('blocked', 'unblocked') ORDER BY e.id DESC LIMIT 1), '') != 'blocked' \
            AND COALESCE(t.consecutive_failures, 0) < COALESCE(t.max_retries, 2)))";
    let eligible = |c: &Connection| -> KanbanResult<Vec<(String, String)>> {
        let mut st = c.prepare_cached(ELIGIBLE)?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    };
    if eligible(conn)?.is_empty() {
        return Ok(0);
    }
    write_txn(conn, |c| {
        let mut promoted = 0;
        for (id, status) in eligible(c)? {
            c.execute(
                "UPDATE tasks SET status = 'ready' WHERE id = ? AND status = ?",
                params![id, status],
            )?;
            append_event(c, &id, "promoted", None, None)?;
            promoted += 1;
        }
        Ok(promoted)
    })
}

/// `heartbeat_claim`: extend `claim_expires` when `claimer` holds the claim.
/// Returns the new expiry when extended.
pub(crate) fn heartbeat_claim(
    conn: &Connection,
    task_id: &str,
    claimer: &str,
    ttl: i64,
) -> KanbanResult<Option<i64>> {
    let expires = now() + ttl;
    write_txn(conn, |c| {
        let n = c.execute(
            "UPDATE tasks SET claim_expires = ? WHERE id = ? AND status = 'running' AND claim_lock = ?",
            params![expires, task_id, claimer],
        )?;
        if n != 1 {
            return Ok(None);
        }
        if let Some(run_id) = current_run_id(c, task_id)? {
            c.execute(
                "UPDATE task_runs SET claim_expires = ? WHERE id = ?",
                params![expires, run_id],
            )?;
        }
        Ok(Some(expires))
    })
}

/// `heartbeat_worker`: touch `last_heartbeat_at` (CAS on the run when known),
/// mirror it on the run, record a `heartbeat` event.
pub(crate) fn heartbeat_worker(
    conn: &Connection,
    task_id: &str,
    note: Option<&str>,
    expected_run_id: Option<i64>,
) -> KanbanResult<bool> {
    let t = now();
    write_txn(conn, |c| {
        let n = match expected_run_id {
            None => c.execute(
                "UPDATE tasks SET last_heartbeat_at = ? WHERE id = ? AND status = 'running'",
                params![t, task_id],
            )?,
            Some(r) => c.execute(
                "UPDATE tasks SET last_heartbeat_at = ? WHERE id = ? AND status = 'running' AND current_run_id = ?",
                params![t, task_id, r],
            )?,
        };
        if n != 1 {
            return Ok(false);
        }
        let run_id = match expected_run_id {
            Some(r) => Some(r),
            None => current_run_id(c, task_id)?,
        };
        if let Some(r) = run_id {
            c.execute(
                "UPDATE task_runs SET last_heartbeat_at = ? WHERE id = ?",
                params![t, r],
            )?;
        }
        let payload = note.filter(|n| !n.is_empty()).map(|n| json!({"note": n}));
        append_event(c, task_id, "heartbeat", payload, run_id)?;
        Ok(true)
    })
}

/// `block_task`. Returns the status the task landed in, or `None` when it
/// was not blockable (unknown, not running/ready, or the run CAS failed).
pub(crate) fn block_task(
    conn: &Connection,
    task_id: &str,
    reason: Option<&str>,
    kind: Option<&str>,
    expected_run_id: Option<i64>,
) -> KanbanResult<Option<Status>> {
    if let Some(k) = kind
        && !VALID_BLOCK_KINDS.contains(&k)
    {
        return value_err(format!(
            "block kind must be one of {} or None",
            py_list(VALID_BLOCK_KINDS)
        ));
    }
    let cas = if expected_run_id.is_some() {
        " AND current_run_id = ?"
    } else {
        ""
    };
    let reason_truthy = reason.is_some_and(|r| !r.is_empty());
    write_txn(conn, |c| {
        let Some(cur) = query_rows(c, "SELECT * FROM tasks WHERE id = ?", &[&task_id])?
            .into_iter()
            .next()
        else {
            return Ok(None);
        };
        let prev_kind = cur.s("block_kind");
        let prev_rec = cur.i("block_recurrences").unwrap_or(0);
        let exec = |sql: &str, mut p: Vec<Sql>| -> KanbanResult<usize> {
            p.push(Sql::Text(task_id.into()));
            if let Some(r) = expected_run_id {
                p.push(Sql::Integer(r));
            }
            Ok(c.execute(&format!("{sql}{cas}"), params_from_iter(p))?)
        };
        let kind_v = kind.map(|k| Sql::Text(k.into())).unwrap_or(Sql::Null);
        let close = |c: &Connection| -> KanbanResult<Option<i64>> {
            let mut run_id = end_run(c, task_id, "blocked", "blocked", reason, None)?;
            if run_id.is_none() && reason_truthy {
                run_id = Some(synthesize_ended_run(c, task_id, "blocked", reason, None)?);
            }
            Ok(run_id)
        };
        if kind == Some("dependency") {
            let n = exec(
                "UPDATE tasks SET status = 'todo', claim_lock = NULL, claim_expires = NULL, worker_pid = NULL, \
                 block_kind = ? WHERE id = ? AND status IN ('running', 'ready')",
                vec![kind_v],
            )?;
            if n != 1 {
                return Ok(None);
            }
            let run_id = close(c)?;
            append_event(
                c,
                task_id,
                "dependency_wait",
                Some(json!({"reason": reason, "kind": kind})),
                run_id,
            )?;
            return Ok(Some(Status::Todo));
        }
        let rec = if prev_kind.as_deref() == kind {
            prev_rec + 1
        } else {
            1
        };
        // A block of the same kind that keeps coming back goes to triage (loop breaker).
        let (status, event, payload) = if rec >= BLOCK_RECURRENCE_LIMIT {
            (
                Status::Triage,
                "block_loop_detected",
                json!({"reason": reason, "kind": kind, "recurrences": rec, "limit": BLOCK_RECURRENCE_LIMIT}),
            )
        } else {
            (
                Status::Blocked,
                "blocked",
                json!({"reason": reason, "kind": kind, "recurrences": rec}),
            )
        };
        let n = exec(
            &format!(
                "UPDATE tasks SET status = '{status}', claim_lock = NULL, claim_expires = NULL, worker_pid = NULL, \
                 block_kind = ?, block_recurrences = ? WHERE id = ? AND status IN ('running', 'ready')"
            ),
            vec![kind_v, Sql::Integer(rec)],
        )?;
        if n != 1 {
            return Ok(None);
        }
        let run_id = close(c)?;
        append_event(c, task_id, event, Some(payload), run_id)?;
        Ok(Some(status))
    })
}

/// `unblock_task`: `blocked|scheduled → ready`, or `todo` while a parent is open.
pub(crate) fn unblock_task(conn: &Connection, task_id: &str) -> KanbanResult<Option<Status>> {
    let t = now();
    write_txn(conn, |c| {
        let stale: Option<Option<i64>> = c
            .query_row(
                "SELECT current_run_id FROM tasks WHERE id = ? AND status IN ('blocked', 'scheduled')",
                [task_id],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(Some(run)) = stale.filter(|r| r.is_some_and(|v| v != 0)) {
            c.execute(
                "UPDATE task_runs SET status = 'reclaimed', outcome = 'reclaimed', \
                 summary = COALESCE(summary, 'invariant recovery on unblock'), ended_at = ?, \
                 claim_lock = NULL, claim_expires = NULL, worker_pid = NULL WHERE id = ? AND ended_at IS NULL",
                params![t, run],
            )?;
        }
        let undone = c
            .prepare_cached(
                "SELECT 1 FROM task_links l JOIN tasks p ON p.id = l.parent_id \
                 WHERE l.child_id = ? AND p.status != 'done' LIMIT 1",
            )?
            .exists([task_id])?;
        let new_status = if undone { Status::Todo } else { Status::Ready };
        let n = c.execute(
            "UPDATE tasks SET status = ?, current_run_id = NULL, consecutive_failures = 0, \
             last_failure_error = NULL WHERE id = ? AND status IN ('blocked', 'scheduled')",
            params![new_status, task_id],
        )?;
        if n != 1 {
            return Ok(None);
        }
        let payload = (new_status != Status::Ready).then(|| json!({"status": new_status}));
        append_event(c, task_id, "unblocked", payload, None)?;
        Ok(Some(new_status))
    })
}
