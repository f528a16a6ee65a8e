//! The two shapes that name a session: scroll (`session_id` +
//! `around_message_id`: `_scroll`) and read (`session_id` alone:
//! `_read_session`), hermes-agent 0.19.0, `tools/session_search_tool.py`.

use rusqlite::Connection;
use serde_json::{Map, Value, json};

use super::format::{failed, ok, shape_all, tool_error, when};
use super::store::{
    SessionMeta, get_messages, get_session, messages_around, owning_session, resolve_to_parent,
};
use crate::server::ToolOutput;

/// `session_meta` of a scroll or read result: the session's own row.
fn meta_json(m: &SessionMeta) -> Value {
    json!({"when": when(&m.started_at), "source": m.source, "model": m.model, "title": m.title})
}

/// The scroll shape. `around` is the anchor as passed (`None` when it does
/// not fit SQLite's integer, where Hermes' bind fails); `window` is clamped to 1..=20.
pub(crate) fn scroll(
    conn: &Connection,
    sid: &str,
    around: Option<i64>,
    window: i64,
    current: Option<&str>,
) -> ToolOutput {
    let mut sid = crate::pycompat::py_strip(sid).to_string();
    let window = window.clamp(1, 20);
    if let Some(cur) = current.filter(|c| !c.is_empty()) {
        let (a, c) = (resolve_to_parent(conn, &sid), resolve_to_parent(conn, cur));
        if !a.is_empty() && !c.is_empty() && a == c {
            return tool_error(
                "scroll rejected: anchor lives in the current session lineage (already in your active context)",
            );
        }
    }
    let Some(mut meta) = get_session(conn, &sid).ok().flatten() else {
        return tool_error(format!("session_id not found: {sid}"));
    };
    let Some(anchor) = around else {
        return tool_error(
            "failed to load messages: Python int too large to convert to SQLite INTEGER",
        );
    };
    let mut view = match messages_around(conn, &sid, anchor, window) {
        Ok(v) => v,
        Err(e) => return tool_error(failed("failed to load messages", &e)),
    };
    let mut warning = None;
    if view.window.is_empty()
        && let Some((owner, v, m)) = rebind(conn, &sid, anchor, window)
    {
        warning = Some(format!(
            "around_message_id {anchor} lives in {owner} (child of {sid}); rebound transparently"
        ));
        (view, meta, sid) = (v, m.unwrap_or(meta), owner);
    }
    if view.window.is_empty() {
        return tool_error(format!(
            "around_message_id {anchor} not in session_id {sid}"
        ));
    }
    let mut r = Map::new();
    r.insert("success".into(), json!(true));
    r.insert("mode".into(), json!("scroll"));
    r.insert("session_id".into(), json!(sid));
    r.insert("around_message_id".into(), json!(anchor));
    r.insert("session_meta".into(), meta_json(&meta));
    r.insert("window".into(), json!(window));
    r.insert("messages".into(), shape_all(&view.window, Some(anchor)));
    r.insert("messages_before".into(), json!(view.before));
    r.insert("messages_after".into(), json!(view.after));
    if let Some(w) = warning {
        r.insert("warning".into(), json!(w));
    }
    ok(Value::Object(r))
}

/// The lineage rebind: the anchor lives in another session of the same
/// lineage (a compression child). Returns that session, its window (non-empty)
/// and its row; `None` when there is nothing to rebind to.
fn rebind(
    conn: &Connection,
    sid: &str,
    anchor: i64,
    window: i64,
) -> Option<(String, super::store::Around, Option<SessionMeta>)> {
    let owner = owning_session(conn, anchor).ok().flatten()?;
    if owner.is_empty() || owner == sid {
        return None;
    }
    let (a, o) = (
        resolve_to_parent(conn, sid),
        resolve_to_parent(conn, &owner),
    );
    if a.is_empty() || o.is_empty() || a != o {
        return None;
    }
    let v = messages_around(conn, &owner, anchor, window).ok()?;
    if v.window.is_empty() {
        return None;
    }
    let m = get_session(conn, &owner).ok().flatten();
    Some((owner, v, m))
}

/// `_read_session(db, sid)`: the whole session (active messages), or its
/// first 20 and last 10 when longer than 30. `Err` is the tool error text.
pub(crate) fn read_session(conn: &Connection, sid: &str) -> Result<Map<String, Value>, String> {
    let Some(meta) = get_session(conn, sid).ok().flatten() else {
        return Err(format!("session_id not found: {sid}"));
    };
    let rows = get_messages(conn, sid).map_err(|e| failed("failed to load session", &e))?;
    let total = rows.len();
    let truncated = total > 30;
    let shown = if truncated {
        [&rows[..20], &rows[total - 10..]].concat()
    } else {
        rows
    };
    let mut r = Map::new();
    r.insert("success".into(), json!(true));
    r.insert("mode".into(), json!("read"));
    r.insert("session_id".into(), json!(sid));
    r.insert("session_meta".into(), meta_json(&meta));
    r.insert("message_count".into(), json!(total));
    r.insert("truncated".into(), json!(truncated));
    r.insert("messages".into(), shape_all(&shown, None));
    if truncated {
        r.insert(
            "message".into(),
            json!(format!(
                "Session has {total} messages; showing first 20 + last 10. Pass around_message_id (any id above) to scroll the middle."
            )),
        );
    }
    Ok(r)
}
