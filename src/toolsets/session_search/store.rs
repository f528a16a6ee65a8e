//! The row reads `session_search` makes, one function per `SessionDB` method
//! it calls (hermes-agent 0.19.0, `hermes_state.py`): `get_session`,
//! `get_messages`, `get_messages_around`, `get_anchored_view`,
//! `resolve_session_by_title`, and `_resolve_to_parent` from
//! `tools/session_search_tool.py`. Same filters and orderings as Hermes';
//! only the columns the tool shows are selected.

use rusqlite::types::ValueRef;
use rusqlite::{Connection, Row, params_from_iter};
use serde_json::Value;

use crate::pycompat::py_bool;

/// The message columns the tool shows (Hermes selects `*`).
const MSG_COLS: &str =
    "id, session_id, role, content, timestamp, tool_name, tool_calls, tool_call_id";

/// Hermes' marker for JSON-encoded (multimodal) content (`_CONTENT_JSON_PREFIX`).
const CONTENT_JSON_PREFIX: &str = "\x00json:";

/// The most characters of one text an answer carries: Hermes'
/// `DEFAULT_RESULT_SIZE_CHARS` (`tools/budget_config.py`), the size above
/// which Hermes stops handing a tool result to the model inline.
pub(crate) const TEXT_CAP: usize = 100_000;
/// How Hermes marks a cut line (`tools/file_operations.py`, `tools/mcp_tool.py`).
pub(crate) const TRUNCATED: &str = "... [truncated]";

/// `bytes` as text (invalid UTF-8 replaced), cut after `cap` characters with
/// [`TRUNCATED`]; whether it was cut. Only the bytes kept are copied.
pub(crate) fn cut_text(bytes: &[u8], cap: usize) -> (String, bool) {
    if bytes.len() <= cap {
        return (String::from_utf8_lossy(bytes).into_owned(), false);
    }
    // `cap` characters take at most 4 bytes each.
    let head = &bytes[..bytes.len().min(cap.saturating_mul(4))];
    let text = String::from_utf8_lossy(head);
    match text.char_indices().nth(cap) {
        Some((i, _)) => (format!("{}{TRUNCATED}", &text[..i]), true),
        None => (text.into_owned(), false),
    }
}

/// A column as Python's `sqlite3` returns it, as JSON; a text longer than
/// [`TEXT_CAP`] characters is cut there.
pub(crate) fn json_value(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::from(i),
        ValueRef::Real(f) => serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
        ValueRef::Text(t) | ValueRef::Blob(t) => Value::String(cut_text(t, TEXT_CAP).0),
    }
}

/// Column `i` of `row` as JSON.
pub(crate) fn col(row: &Row<'_>, i: usize) -> rusqlite::Result<Value> {
    Ok(json_value(row.get_ref(i)?))
}

/// A string column (session ids); anything else as Python's `str()` would not
/// matter here, so non-text is rendered as JSON text.
fn text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// One message row, hydrated as Hermes does (`_decode_content`, `tool_calls` parsed).
#[derive(Debug, Clone)]
pub(crate) struct Msg {
    pub(crate) id: i64,
    pub(crate) role: Value,
    pub(crate) content: Value,
    pub(crate) timestamp: Value,
    pub(crate) tool_name: Value,
    pub(crate) tool_calls: Value,
    pub(crate) tool_call_id: Value,
}

impl Msg {
    /// Read a row selected with [`MSG_COLS`].
    fn from_row(row: &Row<'_>) -> rusqlite::Result<Msg> {
        Ok(Msg {
            id: row.get(0)?,
            role: col(row, 2)?,
            content: decode_content(col(row, 3)?),
            timestamp: col(row, 4)?,
            tool_name: col(row, 5)?,
            tool_calls: match row.get_ref(6)? {
                ValueRef::Text(t) | ValueRef::Blob(t) => match cut_text(t, TEXT_CAP) {
                    // Cut: no longer JSON, shown as the text it starts with.
                    (text, true) => Value::String(text),
                    (text, false) => decode_tool_calls(Value::String(text)),
                },
                v => decode_tool_calls(json_value(v)),
            },
            tool_call_id: col(row, 7)?,
        })
    }

    /// `m.get("role") in keep_roles` for the default `("user", "assistant")`.
    pub(crate) fn is_prose_role(&self) -> bool {
        matches!(self.role.as_str(), Some("user" | "assistant"))
    }
}

/// `SessionDB._decode_content`: `"\x00json:<json>"` is parsed; a failure keeps the raw text.
fn decode_content(v: Value) -> Value {
    if let Value::String(s) = &v
        && let Some(rest) = s.strip_prefix(CONTENT_JSON_PREFIX)
        && let Ok(parsed) = serde_json::from_str::<Value>(rest)
    {
        return parsed;
    }
    v
}

/// `json.loads(tool_calls)` when truthy; invalid JSON becomes `[]`.
fn decode_tool_calls(v: Value) -> Value {
    if !py_bool(&v) {
        return v;
    }
    match &v {
        Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| Value::Array(vec![])),
        _ => Value::Array(vec![]),
    }
}

/// Run `sql` with `params` and read every row as a [`Msg`].
fn messages(
    conn: &Connection,
    sql: &str,
    params: &[&dyn rusqlite::ToSql],
) -> rusqlite::Result<Vec<Msg>> {
    let mut stmt = conn.prepare_cached(sql)?;
    let rows = stmt.query_map(params_from_iter(params.iter()), Msg::from_row)?;
    rows.collect()
}

/// The `sessions` columns the tool shows (`get_session` selects `*`).
#[derive(Debug, Clone, Default)]
pub(crate) struct SessionMeta {
    pub(crate) source: Value,
    pub(crate) model: Value,
    pub(crate) title: Value,
    pub(crate) started_at: Value,
    pub(crate) parent_session_id: Value,
}

/// `SessionDB.get_session`: the row of `id`, if any.
pub(crate) fn get_session(conn: &Connection, id: &str) -> rusqlite::Result<Option<SessionMeta>> {
    let mut stmt = conn.prepare_cached(
        "SELECT source, model, title, started_at, parent_session_id FROM sessions WHERE id = ?",
    )?;
    let mut rows = stmt.query([id])?;
    let Some(row) = rows.next()? else {
        return Ok(None);
    };
    Ok(Some(SessionMeta {
        source: col(row, 0)?,
        model: col(row, 1)?,
        title: col(row, 2)?,
        started_at: col(row, 3)?,
        parent_session_id: col(row, 4)?,
    }))
}

/// `_resolve_to_parent`: walk `parent_session_id` to the lineage root. Stops
/// at a missing row (returning its id), a cycle, or an error (at the id reached).
pub(crate) fn resolve_to_parent(conn: &Connection, session_id: &str) -> String {
    let mut visited = std::collections::HashSet::new();
    let mut cur = session_id.to_string();
    while !cur.is_empty() && visited.insert(cur.clone()) {
        let parent = match get_session(conn, &cur) {
            Ok(Some(s)) => s.parent_session_id,
            Ok(None) | Err(_) => break,
        };
        match text(&parent).filter(|p| !p.is_empty()) {
            Some(p) => cur = p,
            None => break,
        }
    }
    cur
}

/// `SessionDB.get_messages(sid)`: the active messages, in id order.
pub(crate) fn get_messages(conn: &Connection, sid: &str) -> rusqlite::Result<Vec<Msg>> {
    let sql =
        format!("SELECT {MSG_COLS} FROM messages WHERE session_id = ? AND active = 1 ORDER BY id");
    messages(conn, &sql, &[&sid])
}

/// `SessionDB.get_messages_around`: the anchor, up to `window` messages on
/// each side (every role, rewound rows included), and how many there were.
#[derive(Debug, Default)]
pub(crate) struct Around {
    pub(crate) window: Vec<Msg>,
    pub(crate) before: usize,
    pub(crate) after: usize,
}

/// See [`Around`]. An anchor that is not in `sid` gives an empty window.
pub(crate) fn messages_around(
    conn: &Connection,
    sid: &str,
    anchor: i64,
    window: i64,
) -> rusqlite::Result<Around> {
    let window = window.max(0);
    let exists = conn
        .prepare_cached("SELECT 1 FROM messages WHERE id = ? AND session_id = ? LIMIT 1")?
        .exists(rusqlite::params![anchor, sid])?;
    if !exists {
        return Ok(Around::default());
    }
    let before_sql = format!(
        "SELECT {MSG_COLS} FROM messages WHERE session_id = ? AND id <= ? ORDER BY id DESC LIMIT ?"
    );
    let after_sql = format!(
        "SELECT {MSG_COLS} FROM messages WHERE session_id = ? AND id > ? ORDER BY id ASC LIMIT ?"
    );
    let mut before = messages(conn, &before_sql, &[&sid, &anchor, &(window + 1)])?;
    let after = messages(conn, &after_sql, &[&sid, &anchor, &window])?;
    let counts = (before.len().saturating_sub(1), after.len());
    before.reverse();
    before.extend(after);
    Ok(Around {
        window: before,
        before: counts.0,
        after: counts.1,
    })
}

/// `SessionDB.get_anchored_view(sid, anchor, window, bookend=3)` with the
/// default `keep_roles=("user", "assistant")`.
#[derive(Debug, Default)]
pub(crate) struct View {
    /// The window without tool rows (the anchor always stays).
    pub(crate) window: Vec<Msg>,
    pub(crate) before: usize,
    pub(crate) after: usize,
    /// The first `bookend` prose messages before the window.
    pub(crate) start: Vec<Msg>,
    /// The last `bookend` prose messages after the window.
    pub(crate) end: Vec<Msg>,
}

/// See [`View`].
pub(crate) fn anchored_view(
    conn: &Connection,
    sid: &str,
    anchor: i64,
    window: i64,
    bookend: i64,
) -> rusqlite::Result<View> {
    let prim = messages_around(conn, sid, anchor, window)?;
    let (Some(first), Some(last)) = (prim.window.first(), prim.window.last()) else {
        return Ok(View::default());
    };
    let (min_id, max_id) = (first.id, last.id);
    let (mut start, mut end) = (Vec::new(), Vec::new());
    if bookend > 0 {
        let start_sql = format!(
            "SELECT {MSG_COLS} FROM messages WHERE session_id = ? AND id < ? AND role IN (?,?) \
             AND length(content) > 0 ORDER BY id ASC LIMIT ?"
        );
        let end_sql = format!(
            "SELECT {MSG_COLS} FROM messages WHERE session_id = ? AND id > ? AND role IN (?,?) \
             AND length(content) > 0 ORDER BY id DESC LIMIT ?"
        );
        start = messages(
            conn,
            &start_sql,
            &[&sid, &min_id, &"user", &"assistant", &bookend],
        )?;
        end = messages(
            conn,
            &end_sql,
            &[&sid, &max_id, &"user", &"assistant", &bookend],
        )?;
        end.reverse();
    }
    let window = prim
        .window
        .into_iter()
        .filter(|m| m.id == anchor || m.is_prose_role())
        .collect();
    Ok(View {
        window,
        before: prim.before,
        after: prim.after,
        start,
        end,
    })
}

/// The session that owns message `id` (scroll's lineage rebind).
pub(crate) fn owning_session(conn: &Connection, id: i64) -> rusqlite::Result<Option<String>> {
    let mut stmt = conn.prepare_cached("SELECT session_id FROM messages WHERE id = ?")?;
    let mut rows = stmt.query([id])?;
    match rows.next()? {
        Some(row) => Ok(text(&col(row, 0)?)),
        None => Ok(None),
    }
}

/// `SessionDB.resolve_session_by_title`: the newest `"<title> #N"` variant,
/// else the exact title, else none.
pub(crate) fn session_by_title(conn: &Connection, title: &str) -> rusqlite::Result<Option<String>> {
    let exact = {
        let mut stmt = conn.prepare_cached("SELECT id FROM sessions WHERE title = ?")?;
        let mut rows = stmt.query([title])?;
        match rows.next()? {
            Some(row) => text(&col(row, 0)?),
            None => None,
        }
    };
    let escaped = title
        .replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_");
    // Hermes scans every session (through `idx_sessions_started`, so equal
    // start times come in rowid order); titled sessions are the only
    // candidates, and Hermes' partial title index lists just those. Hermes
    // gives up that index rather than fail an open, hence its statement as
    // the fallback.
    let mut stmt = match conn.prepare_cached(
        "SELECT id FROM sessions INDEXED BY idx_sessions_title_unique \
         WHERE title IS NOT NULL AND title LIKE ? ESCAPE '\\' ORDER BY started_at DESC, rowid ASC",
    ) {
        Ok(stmt) => stmt,
        Err(_) => conn.prepare_cached(
            "SELECT id FROM sessions WHERE title LIKE ? ESCAPE '\\' ORDER BY started_at DESC",
        )?,
    };
    let mut rows = stmt.query([format!("{escaped} #%")])?;
    if let Some(row) = rows.next()? {
        return Ok(text(&col(row, 0)?));
    }
    Ok(exact)
}
