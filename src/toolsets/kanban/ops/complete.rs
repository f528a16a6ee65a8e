//! `complete_task` (hermes-agent: `hermes_cli/kanban_db.py`): the
//! created-cards claim check, scratch deliverables, the `running|ready|blocked
//! → done` compare-and-swap with its run row and event, the phantom-reference
//! scan, and workspace cleanup, each a named step.

use std::collections::{BTreeMap, HashSet};

use rusqlite::{Connection, params, params_from_iter};
use serde_json::{Map, Value, json};

use crate::toolsets::kanban::error::KanbanResult;
use crate::toolsets::kanban::ops::lifecycle::recompute_ready;
use crate::toolsets::kanban::paths::KanbanPaths;
use crate::toolsets::kanban::store::{
    add_attachment, append_event, child_ids, end_run, find_missing, get_task, has_active_child,
    parent_ids, scratch_workspace, synthesize_ended_run,
};
use crate::toolsets::kanban::txn::write_txn;
use crate::toolsets::kanban::util::{first_line, now, py_len, py_strip, take_chars};
use crate::toolsets::kanban::workspace;

pub(crate) enum CompleteOutcome {
    Done,
    NotApplied,
    Phantom(Vec<String>),
}

fn verify_created_cards(
    conn: &Connection,
    task_id: &str,
    claimed: &[String],
) -> KanbanResult<(Vec<String>, Vec<String>)> {
    let mut ordered: Vec<String> = Vec::new();
    for c in claimed {
        let c = py_strip(c).to_string();
        if !c.is_empty() && !ordered.contains(&c) {
            ordered.push(c);
        }
    }
    if ordered.is_empty() {
        return Ok((vec![], vec![]));
    }
    let Some(task) = get_task(conn, task_id)? else {
        return Ok((vec![], ordered));
    };
    let assignee = task.assignee();
    let sql = format!(
        "SELECT id, created_by FROM tasks WHERE id IN ({})",
        vec!["?"; ordered.len()].join(",")
    );
    let mut st = conn.prepare(&sql)?;
    let found: BTreeMap<String, Option<String>> = st
        .query_map(params_from_iter(ordered.iter()), |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?))
        })?
        .collect::<Result<_, _>>()?;
    let children: HashSet<String> = child_ids(conn, task_id)?.into_iter().collect();
    let (mut ok, mut bad) = (vec![], vec![]);
    for cid in ordered {
        // Python: `found.get(cid)` is None both for a missing row and a NULL created_by.
        let Some(Some(created_by)) = found.get(&cid) else {
            bad.push(cid);
            continue;
        };
        if assignee
            .as_deref()
            .is_some_and(|a| !a.is_empty() && a == created_by)
            || created_by == task_id
            || children.contains(&cid)
        {
            ok.push(cid);
        } else {
            bad.push(cid);
        }
    }
    Ok((ok, bad))
}

fn scan_prose_for_phantom_ids(conn: &Connection, text: &str) -> KanbanResult<Vec<String>> {
    static RE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"\bt_[a-f0-9]{8,}\b").expect("static regex")
    });
    let mut uniq: Vec<String> = Vec::new();
    for m in RE.find_iter(text) {
        if !uniq.iter().any(|u| u == m.as_str()) {
            uniq.push(m.as_str().to_string());
        }
    }
    find_missing(conn, &uniq)
}

pub(crate) struct Completion<'a> {
    pub(crate) result: Option<&'a str>,
    pub(crate) summary: Option<&'a str>,
    pub(crate) metadata: Option<Value>,
    pub(crate) created_cards: Option<Vec<String>>,
    pub(crate) expected_run_id: Option<i64>,
    /// For scratch-workspace deliverables and cleanup (None: leave files alone).
    pub(crate) paths: Option<&'a KanbanPaths>,
}

/// `complete_task`: `running|ready|blocked → done`, CAS on the worker's run.
pub(crate) fn complete_task(
    conn: &Connection,
    task_id: &str,
    mut c: Completion,
) -> KanbanResult<CompleteOutcome> {
    let verified = match check_created_cards(conn, task_id, &c)? {
        Ok(verified) => verified,
        Err(phantom) => return Ok(CompleteOutcome::Phantom(phantom)),
    };
    let metadata = match (c.paths, scratch_workspace(conn, task_id)?) {
        (Some(p), Some(ws)) => workspace::merge_prose_artifacts(
            p,
            &ws,
            c.metadata.take(),
            &[c.summary.unwrap_or(""), c.result.unwrap_or("")],
        )?,
        _ => c.metadata.take(),
    };
    let t = now();
    let applied = write_txn(conn, |tx| {
        mark_done(tx, task_id, &c, metadata.clone(), &verified, t)
    })?;
    let Some(run_id) = applied else {
        return Ok(CompleteOutcome::NotApplied);
    };
    flag_phantom_references(conn, task_id, &c, &verified, run_id)?;
    write_txn(conn, |tx| {
        tx.execute(
            "UPDATE tasks SET consecutive_failures = 0, last_failure_error = NULL WHERE id = ?",
            [task_id],
        )?;
        Ok(())
    })?;
    recompute_ready(conn)?;
    if let Some(p) = c.paths {
        cleanup_workspaces(conn, p, task_id);
    }
    Ok(CompleteOutcome::Done)
}

/// The created-cards claim: `Ok(verified ids)`, or `Err(phantom ids)` after
/// recording a `completion_blocked_hallucination` event (the task is left
/// as it was).
fn check_created_cards(
    conn: &Connection,
    task_id: &str,
    c: &Completion,
) -> KanbanResult<Result<Vec<String>, Vec<String>>> {
    let Some(cards) = c.created_cards.as_ref().filter(|c| !c.is_empty()) else {
        return Ok(Ok(vec![]));
    };
    let (ok, bad) = verify_created_cards(conn, task_id, cards)?;
    if bad.is_empty() {
        return Ok(Ok(ok));
    }
    let text = c.summary.or(c.result).filter(|s| !s.is_empty());
    let preview = text.map(|s| take_chars(first_line(py_strip(s)), 200));
    write_txn(conn, |tx| {
        append_event(
            tx,
            task_id,
            "completion_blocked_hallucination",
            Some(json!({"phantom_cards": bad, "verified_cards": ok, "summary_preview": preview})),
            None,
        )
    })?;
    Ok(Err(bad))
}

/// The completion proper, inside the write transaction: the status CAS,
/// scratch deliverables copied and recorded, the run closed (or a closed run
/// synthesized) and the `completed` event. `None` when the CAS failed.
fn mark_done(
    tx: &Connection,
    task_id: &str,
    c: &Completion,
    mut metadata: Option<Value>,
    verified: &[String],
    t: i64,
) -> KanbanResult<Option<Option<i64>>> {
    let (result, summary) = (c.result, c.summary);
    const SET: &str = "UPDATE tasks SET status = 'done', result = ?, completed_at = ?, claim_lock = NULL, \
        claim_expires = NULL, worker_pid = NULL, block_kind = NULL, block_recurrences = 0 \
        WHERE id = ? AND status IN ('running', 'ready', 'blocked')";
    let n = match c.expected_run_id {
        None => tx.execute(SET, params![result, t, task_id])?,
        Some(r) => tx.execute(
            &format!("{SET} AND current_run_id = ?"),
            params![result, t, task_id, r],
        )?,
    };
    if n != 1 {
        return Ok(None);
    }
    if let (Some(p), Some(m @ Value::Object(_))) = (c.paths, metadata.as_mut())
        && let Some(ws) = scratch_workspace(tx, task_id)?
    {
        let copied = workspace::persist_artifacts(p, task_id, &ws, m)?;
        let at = now();
        for a in &copied {
            add_attachment(tx, task_id, &a.filename, &a.stored_path, a.size, at)?;
        }
    }
    let run_summary = summary.or(result);
    let mut run_id = end_run(
        tx,
        task_id,
        "completed",
        "done",
        run_summary,
        metadata.as_ref(),
    )?;
    let meta_truthy = match &metadata {
        Some(Value::Object(m)) => !m.is_empty(),
        Some(Value::Null) | None => false,
        Some(_) => true,
    };
    if run_id.is_none()
        && (summary.is_some_and(|s| !s.is_empty())
            || meta_truthy
            || result.is_some_and(|s| !s.is_empty()))
    {
        run_id = Some(synthesize_ended_run(
            tx,
            task_id,
            "completed",
            run_summary,
            metadata.as_ref(),
        )?);
    }
    let payload = completed_payload(c, metadata.as_ref(), verified);
    append_event(tx, task_id, "completed", Some(payload), run_id)?;
    Ok(Some(run_id))
}

/// The `completed` event: result length, first summary line, verified cards
/// and the (persisted) artifact paths.
fn completed_payload(c: &Completion, metadata: Option<&Value>, verified: &[String]) -> Value {
    let ev = c.summary.or(c.result).unwrap_or("");
    let ev = take_chars(first_line(py_strip(ev)), 400);
    let mut payload = Map::new();
    payload.insert(
        "result_len".into(),
        json!(c.result.map(py_len).unwrap_or(0)),
    );
    payload.insert(
        "summary".into(),
        if ev.is_empty() {
            Value::Null
        } else {
            json!(ev)
        },
    );
    if !verified.is_empty() {
        payload.insert("verified_cards".into(), json!(verified));
    }
    if let Some(Value::Array(arts)) = metadata.and_then(|m| m.get("artifacts")) {
        let cleaned: Vec<String> = arts
            .iter()
            .filter_map(Value::as_str)
            .map(py_strip)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        if !cleaned.is_empty() {
            payload.insert("artifacts".into(), json!(cleaned));
        }
    }
    Value::Object(payload)
}

/// Task ids the summary/result mention that do not exist (and were not
/// verified cards) are recorded as `suspected_hallucinated_references`; the
/// completion stands.
fn flag_phantom_references(
    conn: &Connection,
    task_id: &str,
    c: &Completion,
    verified: &[String],
    run_id: Option<i64>,
) -> KanbanResult<()> {
    let scan: Vec<&str> = [c.summary, c.result]
        .into_iter()
        .flatten()
        .filter(|s| !s.is_empty())
        .collect();
    if scan.is_empty() {
        return Ok(());
    }
    let refs: Vec<String> = scan_prose_for_phantom_ids(conn, &scan.join(" "))?
        .into_iter()
        .filter(|r| !verified.contains(r))
        .collect();
    if refs.is_empty() {
        return Ok(());
    }
    write_txn(conn, |tx| {
        append_event(
            tx,
            task_id,
            "suspected_hallucinated_references",
            Some(json!({"phantom_refs": refs, "source": "completion_summary"})),
            run_id,
        )
    })
}

/// `_cleanup_workspace`: remove the finished task's managed scratch
/// directory unless a child still needs it, then any parent scratch whose
/// children are now all finished. Best effort, never fails the completion.
fn cleanup_workspaces(conn: &Connection, paths: &KanbanPaths, task_id: &str) {
    if let Ok(Some(ws)) = scratch_workspace(conn, task_id) {
        if has_active_child(conn, task_id) {
            return;
        }
        workspace::remove_scratch(paths, &ws);
    }
    if let Ok(parents) = parent_ids(conn, task_id) {
        for p in parents {
            if let Ok(Some(ws)) = scratch_workspace(conn, &p)
                && !has_active_child(conn, &p)
            {
                workspace::remove_scratch(paths, &ws);
            }
        }
    }
}
