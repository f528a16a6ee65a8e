//! The browse shape (no arguments): `_list_recent_sessions` over
//! `SessionDB.list_sessions_rich(limit + 5, exclude_sources=["subagent",
//! "tool"], order_by_last_active=True)` (hermes-agent 0.19.0). The statement
//! is Hermes' own: a recursive CTE walks compression continuations so a
//! conversation sorts by its latest activity, and each compression root is
//! then shown as its live tip.
//!
//! The chain's recursion is bounded (see [`CHAIN_DEPTH`]).
//!
//! In two steps with the same result: the ordered ids first, then the
//! preview and last activity of only the rows shown. Hermes' one statement
//! computes those two subqueries for every session before sorting.

use rusqlite::Connection;
use serde_json::{Map, Value, json};

use super::format::{failed, ok, tool_error};
use super::store::{col, resolve_to_parent};
use crate::pycompat::{py_len, py_strip};
use crate::server::ToolOutput;

/// `list_sessions_rich`'s seed filter: roots and branches, no delegates, no
/// hidden sources, not archived (`_LISTABLE_CHILD_SQL` and friends).
const WHERE: &str = "WHERE (s.parent_session_id IS NULL OR json_extract(COALESCE(s.model_config, '{}'), '$._branched_from') IS NOT NULL OR EXISTS (SELECT 1 FROM sessions p            WHERE p.id = s.parent_session_id            AND p.end_reason = 'branched'            AND s.started_at >= p.ended_at)) AND json_extract(COALESCE(s.model_config, '{}'), '$._delegate_from') IS NULL AND s.source NOT IN (?,?) AND s.archived = 0";

/// The first user message, newlines flattened, 63 characters (`_preview_raw`).
const PREVIEW: &str = "COALESCE(
        (SELECT SUBSTR(REPLACE(REPLACE(m.content, X'0A', ' '), X'0D', ' '), 1, 63)
         FROM messages m
         WHERE m.session_id = s.id AND m.role = 'user' AND m.content IS NOT NULL
         ORDER BY m.timestamp, m.id LIMIT 1),
        ''
    ) AS _preview_raw";

/// The latest message time, else the start (`last_active`).
const LAST_ACTIVE: &str = "COALESCE(
        (SELECT MAX(m2.timestamp) FROM messages m2 WHERE m2.session_id = s.id),
        s.started_at
    ) AS last_active";

/// The longest compression chain browse follows (Hermes' `get_compression_tip`
/// stops at 100 steps too). With `UNION` instead of Hermes' `UNION ALL`, a
/// cycle of `parent_session_id`s or duplicate session ids (neither of which
/// Hermes writes) cannot make the chain endless or explode; on Hermes' own
/// data the rows, and so the order, are the same.
const CHAIN_DEPTH: u32 = 100;

/// The session columns a browse entry shows, plus the two that decide projection.
const COLS: &str =
    "s.id, s.title, s.source, s.started_at, s.message_count, s.parent_session_id, s.end_reason";

/// One listed session (after projection onto its compression tip).
#[derive(Debug, Clone)]
struct Listed {
    id: String,
    title: Value,
    source: Value,
    started_at: Value,
    message_count: Value,
    parent_session_id: Value,
    end_reason: Value,
    last_active: Value,
    preview: String,
}

/// `_list_recent_sessions(db, limit, current_session_id)`.
pub(crate) fn recent(conn: &Connection, limit: i64, current: Option<&str>) -> ToolOutput {
    let rows = match list_rich(conn, limit + 5) {
        Ok(r) => r,
        Err(e) => return tool_error(failed("Failed to list recent sessions", &e)),
    };
    let current_root = current.map(|c| resolve_to_parent(conn, c));
    let mut results = Vec::new();
    for s in rows {
        if let (Some(root), Some(cur)) = (current_root.as_deref(), current)
            && !root.is_empty()
            && (s.id == root || s.id == cur)
        {
            continue;
        }
        if crate::pycompat::py_bool(&s.parent_session_id) {
            continue;
        }
        let title = if crate::pycompat::py_bool(&s.title) {
            s.title
        } else {
            Value::Null
        };
        let mut e = Map::new();
        e.insert("session_id".into(), Value::String(s.id));
        e.insert("title".into(), title);
        e.insert("source".into(), s.source);
        e.insert("started_at".into(), s.started_at);
        e.insert("last_active".into(), s.last_active);
        e.insert("message_count".into(), s.message_count);
        e.insert("preview".into(), Value::String(s.preview));
        results.push(Value::Object(e));
        if results.len() as i64 >= limit {
            break;
        }
    }
    let n = results.len();
    ok(json!({
        "success": true,
        "mode": "browse",
        "results": results,
        "count": n,
        "message": format!("Showing {n} most recent sessions. Pass a query= to search, or session_id+around_message_id to scroll."),
    }))
}

/// `list_sessions_rich(limit, exclude_sources=HIDDEN, order_by_last_active=True)`,
/// with compression roots projected onto their tips.
fn list_rich(conn: &Connection, limit: i64) -> rusqlite::Result<Vec<Listed>> {
    let sql = format!(
        "WITH RECURSIVE chain(root_id, cur_id, depth) AS (
    SELECT s.id, s.id, 0 FROM sessions s {WHERE}
    UNION
    SELECT c.root_id, child.id, c.depth + 1
    FROM chain c
    JOIN sessions parent ON parent.id = c.cur_id
    JOIN sessions child ON child.parent_session_id = c.cur_id
    WHERE c.depth < {CHAIN_DEPTH}
      AND parent.end_reason = 'compression'
      AND json_extract(COALESCE(child.model_config, '{{}}'), '$._branched_from') IS NULL
      AND json_extract(COALESCE(child.model_config, '{{}}'), '$._delegate_from') IS NULL
      AND COALESCE(child.source, '') != 'tool'
),
chain_max AS (
    SELECT root_id,
        MAX(COALESCE(
            (SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = cur_id),
            (SELECT started_at FROM sessions ss WHERE ss.id = cur_id)
        )) AS effective_last_active
    FROM chain GROUP BY root_id
)
SELECT s.id
FROM sessions s
LEFT JOIN chain_max cm ON cm.root_id = s.id
{WHERE}
ORDER BY COALESCE(cm.effective_last_active, s.started_at) DESC, s.started_at DESC, s.id DESC
LIMIT ? OFFSET ?"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let params = rusqlite::params!["subagent", "tool", "subagent", "tool", limit, 0_i64];
    let ids = stmt
        .query_map(params, |r| col(r, 0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        let id = match id {
            Value::String(s) => s,
            other => other.to_string(),
        };
        if let Some(row) = rich_row(conn, &id)? {
            out.push(project_tip(conn, row)?);
        }
    }
    Ok(out)
}

/// `_get_session_rich_row(id)`: the row with its preview and last activity.
fn rich_row(conn: &Connection, id: &str) -> rusqlite::Result<Option<Listed>> {
    let sql = format!("SELECT {COLS}, {PREVIEW}, {LAST_ACTIVE} FROM sessions s WHERE s.id = ?");
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut rows = stmt.query([id])?;
    rows.next()?.map(listed).transpose()
}

/// A row selected as [`COLS`], preview, last_active.
fn listed(row: &rusqlite::Row<'_>) -> rusqlite::Result<Listed> {
    Ok(Listed {
        id: match col(row, 0)? {
            Value::String(s) => s,
            other => other.to_string(),
        },
        title: col(row, 1)?,
        source: col(row, 2)?,
        started_at: col(row, 3)?,
        message_count: col(row, 4)?,
        parent_session_id: col(row, 5)?,
        end_reason: col(row, 6)?,
        preview: preview(&col(row, 7)?),
        last_active: col(row, 8)?,
    })
}

/// `raw.strip()`, cut to 60 characters with `...` when longer.
fn preview(raw: &Value) -> String {
    let raw = match raw {
        Value::String(s) => py_strip(s),
        _ => "",
    };
    if py_len(raw) > 60 {
        format!("{}...", raw.chars().take(60).collect::<String>())
    } else {
        raw.to_string()
    }
}

/// A compression root shows its tip's id, title, counts, activity and
/// preview; its own `started_at`, `source` and `parent_session_id` stay.
fn project_tip(conn: &Connection, s: Listed) -> rusqlite::Result<Listed> {
    if s.end_reason.as_str() != Some("compression") {
        return Ok(s);
    }
    let tip = compression_tip(conn, &s.id)?;
    if tip == s.id {
        return Ok(s);
    }
    let Some(t) = rich_row(conn, &tip)? else {
        return Ok(s);
    };
    Ok(Listed {
        id: t.id,
        title: t.title,
        message_count: t.message_count,
        end_reason: t.end_reason,
        last_active: t.last_active,
        preview: t.preview,
        ..s
    })
}

/// `SessionDB.get_compression_tip`: follow compression continuations (at
/// most 100 steps, no cycles) to the live end of the conversation.
fn compression_tip(conn: &Connection, id: &str) -> rusqlite::Result<String> {
    let mut stmt = conn.prepare_cached(
        "SELECT child.id
FROM sessions parent
JOIN sessions child ON child.parent_session_id = parent.id
WHERE parent.id = ?
  AND parent.end_reason = 'compression'
  AND json_extract(COALESCE(child.model_config, '{}'), '$._branched_from') IS NULL
  AND json_extract(COALESCE(child.model_config, '{}'), '$._delegate_from') IS NULL
  AND COALESCE(child.source, '') != 'tool'
ORDER BY
  CASE WHEN child.end_reason = 'compression' THEN 0 WHEN child.ended_at IS NULL THEN 1 ELSE 2 END,
  COALESCE((SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = child.id), child.started_at) DESC,
  child.started_at DESC,
  child.id DESC
LIMIT 1",
    )?;
    let mut seen = std::collections::HashSet::from([id.to_string()]);
    let mut current = id.to_string();
    for _ in 0..100 {
        let mut rows = stmt.query([&current])?;
        let child = match rows.next()? {
            Some(row) => match col(row, 0)? {
                Value::String(s) => s,
                Value::Null => return Ok(current),
                other => other.to_string(),
            },
            None => return Ok(current),
        };
        if child.is_empty() || !seen.insert(child.clone()) {
            return Ok(current);
        }
        current = child;
    }
    Ok(current)
}
