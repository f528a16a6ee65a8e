//! The discovery shape (`query`): `_discover` and `_title_match_result`
//! (hermes-agent 0.19.0, `tools/session_search_tool.py`). A session whose
//! title is the query comes first; then FTS hits, cron sessions demoted
//! below interactive ones, one per lineage (a compression chain counts
//! once), the current conversation's lineage left out; each with its
//! anchored ±5 window and its opening and closing bookends.

use rusqlite::Connection;
use serde_json::{Map, Value, json};

use super::db::StateDb;
use super::format::{failed, ok, shape_all, tool_error, when};
use super::search::{Hit, Search, search};
use super::store::{
    SessionMeta, anchored_view, get_messages, get_session, resolve_to_parent, session_by_title,
};
use crate::pycompat::{py_bool, py_strip};
use crate::server::ToolOutput;

/// Sources never shown (`_HIDDEN_SESSION_SOURCES`).
pub(crate) const HIDDEN_SOURCES: [&str; 2] = ["subagent", "tool"];
/// Sources kept but ranked last (`_DEMOTED_SESSION_SOURCES`).
const DEMOTED_SOURCES: [&str; 1] = ["cron"];
/// FTS rows read before dedup (`_DISCOVER_SCAN_LIMIT`).
const SCAN_LIMIT: i64 = 300;

/// A discovery request after Hermes' normalisation.
pub(crate) struct Discover<'a> {
    /// The stripped query.
    pub(crate) query: &'a str,
    /// Roles to search; empty means `user,assistant`.
    pub(crate) roles: Vec<String>,
    /// 1..=10.
    pub(crate) limit: usize,
    pub(crate) sort: Option<&'a str>,
    pub(crate) current: Option<&'a str>,
}

/// `_discover(db, query, role_filter, limit, sort, current_session_id)`.
pub(crate) fn discover(db: &StateDb, d: &Discover<'_>) -> ToolOutput {
    let conn = &db.conn;
    let roles = if d.roles.is_empty() {
        vec!["user".to_string(), "assistant".to_string()]
    } else {
        d.roles.clone()
    };
    let current_root = d.current.map(|c| resolve_to_parent(conn, c));
    let title = title_match(conn, d.query, current_root.as_deref());
    let search_args = Search {
        query: d.query,
        roles: &roles,
        exclude_sources: &HIDDEN_SOURCES,
        limit: SCAN_LIMIT,
        sort: d.sort,
    };
    let mut found = match search(db, &search_args) {
        Ok(f) => f,
        Err(e) => return tool_error(failed("Search failed", &e)),
    };
    let mut hits = std::mem::take(&mut found.hits);
    // `_order_for_recall`: a stable sort, cron after everything else.
    hits.sort_by_key(|h| u8::from(DEMOTED_SOURCES.contains(&h.source.as_str().unwrap_or(""))));
    if hits.is_empty() && title.is_none() {
        return ok(json!({
            "success": true, "mode": "discover", "query": d.query, "results": [], "count": 0,
            "message": "No matching sessions found.",
        }));
    }
    let (seen, mut results) = dedupe(
        conn,
        hits,
        title,
        d.limit,
        current_root.as_deref(),
        d.current,
    );
    for (root, hit) in &seen {
        let Some(hit) = hit else { continue };
        let snippet = match found.snippet(conn, hit) {
            Ok(s) => s,
            Err(e) => return tool_error(failed("Search failed", &e)),
        };
        if let Some(entry) = hit_entry(conn, root, hit, &snippet) {
            results.push(entry);
        }
    }
    ok(json!({
        "success": true, "mode": "discover", "query": d.query, "results": results,
        "count": results.len(), "sessions_searched": seen.len(),
    }))
}

/// Lineage roots in first-seen order, each with its best hit (`None` for the
/// title match's lineage, whose entry is already in the returned results).
type Seen = Vec<(String, Option<Hit>)>;

/// Keep the best-ranked hit of each lineage until `limit` lineages, skipping
/// the current conversation's; the title match claims its lineage first.
fn dedupe(
    conn: &Connection,
    hits: Vec<Hit>,
    title: Option<(String, Value)>,
    limit: usize,
    current_root: Option<&str>,
    current: Option<&str>,
) -> (Seen, Vec<Value>) {
    let mut seen: Seen = Vec::new();
    let mut results = Vec::new();
    if let Some((lineage, entry)) = title {
        if !lineage.is_empty() {
            seen.push((lineage, None));
        }
        results.push(entry);
    }
    for h in hits {
        if seen.len() >= limit {
            break;
        }
        let root = resolve_to_parent(conn, &h.session_id);
        if current_root.is_some_and(|c| !c.is_empty() && c == root)
            || current == Some(h.session_id.as_str())
        {
            continue;
        }
        if !seen.iter().any(|(r, _)| *r == root) {
            seen.push((root, Some(h)));
        }
        if seen.len() >= limit {
            break;
        }
    }
    (seen, results)
}

/// One lineage's entry: the hit in context, labelled with the lineage root's
/// metadata. A failing window read drops the entry (Hermes logs and skips it).
fn hit_entry(conn: &Connection, root: &str, h: &Hit, snippet: &Value) -> Option<Value> {
    let view = anchored_view(conn, &h.session_id, h.id, 5, 3).ok()?;
    let meta = get_session(conn, root).ok().flatten().unwrap_or_default();
    let started = if py_bool(&meta.started_at) {
        &meta.started_at
    } else {
        &h.session_started
    };
    let source = if py_bool(&meta.source) {
        meta.source.clone()
    } else {
        h.source.clone()
    };
    let model = first_truthy(&[&meta.model, &h.model]).unwrap_or_else(|| json!("unknown"));
    let title = first_truthy(&[&meta.title]).unwrap_or(Value::Null);
    let snippet = first_truthy(&[snippet]).unwrap_or_else(|| json!(""));
    let mut e = Map::new();
    e.insert("session_id".into(), json!(h.session_id));
    e.insert("when".into(), json!(when(started)));
    e.insert("source".into(), source);
    e.insert("model".into(), model);
    e.insert("title".into(), title);
    e.insert("matched_role".into(), h.role.clone());
    e.insert("match_message_id".into(), json!(h.id));
    e.insert("snippet".into(), snippet);
    e.insert("bookend_start".into(), shape_all(&view.start, None));
    e.insert("messages".into(), shape_all(&view.window, Some(h.id)));
    e.insert("bookend_end".into(), shape_all(&view.end, None));
    e.insert("messages_before".into(), json!(view.before));
    e.insert("messages_after".into(), json!(view.after));
    if !root.is_empty() && root != h.session_id {
        e.insert("parent_session_id".into(), json!(root));
    }
    Some(Value::Object(e))
}

/// Python's `a or b or ...`: the first truthy value.
fn first_truthy(vals: &[&Value]) -> Option<Value> {
    vals.iter().find(|v| py_bool(v)).map(|v| (*v).clone())
}

/// `_title_match_result`: a session whose title is the query (quotes
/// stripped), as a discovery entry anchored on its first message, with its
/// lineage root. `None` when no title matches, the match is in the current
/// lineage, or its source is hidden.
fn title_match(
    conn: &Connection,
    query: &str,
    current_root: Option<&str>,
) -> Option<(String, Value)> {
    let tq = py_strip(query).trim_matches(['`', '\'', '"']);
    if tq.is_empty() {
        return None;
    }
    let sid = session_by_title(conn, tq).ok().flatten()?;
    let root = resolve_to_parent(conn, &sid);
    if current_root.is_some_and(|c| !c.is_empty() && c == root) {
        return None;
    }
    // `get_session(root) or get_session(sid) or {}`; an error gives `{}`.
    let meta = match get_session(conn, &root) {
        Ok(Some(m)) => Some(m),
        Ok(None) => get_session(conn, &sid).ok().flatten(),
        Err(_) => None,
    };
    let source = meta.as_ref().map(|m| &m.source);
    if source
        .and_then(Value::as_str)
        .is_some_and(|s| HIDDEN_SOURCES.contains(&s))
    {
        return None;
    }
    Some((
        root.clone(),
        title_entry(conn, &sid, &root, meta.as_ref(), tq),
    ))
}

/// The entry of a title match (see [`title_match`]). Its bookends and window
/// fall back to the first 3 / first 5 / last 3 active messages of any role.
fn title_entry(
    conn: &Connection,
    sid: &str,
    root: &str,
    meta: Option<&SessionMeta>,
    tq: &str,
) -> Value {
    let messages = get_messages(conn, sid).unwrap_or_default();
    let anchor = messages.first().map(|m| m.id);
    let view = anchor.and_then(|a| anchored_view(conn, sid, a, 5, 3).ok());
    let n = messages.len();
    let or_else = |part: Option<&Vec<_>>, fallback: &[_]| -> Vec<_> {
        match part {
            Some(v) if !v.is_empty() => v.clone(),
            _ => fallback.to_vec(),
        }
    };
    let start = or_else(view.as_ref().map(|v| &v.start), &messages[..n.min(3)]);
    let window = or_else(view.as_ref().map(|v| &v.window), &messages[..n.min(5)]);
    let end = or_else(
        view.as_ref().map(|v| &v.end),
        &messages[n.saturating_sub(3)..],
    );
    let none = SessionMeta::default();
    let m = meta.unwrap_or(&none);
    let title = first_truthy(&[&m.title]).unwrap_or_else(|| json!(tq));
    let title_text = title
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| title.to_string());
    let mut e = Map::new();
    e.insert("session_id".into(), json!(sid));
    e.insert("when".into(), json!(when(&m.started_at)));
    e.insert(
        "source".into(),
        meta.map_or_else(|| json!("unknown"), |m| m.source.clone()),
    );
    e.insert(
        "model".into(),
        first_truthy(&[&m.model]).unwrap_or_else(|| json!("unknown")),
    );
    e.insert("title".into(), title);
    e.insert("matched_role".into(), json!("session_title"));
    e.insert("match_message_id".into(), json!(anchor));
    e.insert(
        "snippet".into(),
        json!(format!("Session title matched: {title_text}")),
    );
    e.insert("bookend_start".into(), shape_all(&start, None));
    e.insert("messages".into(), shape_all(&window, anchor));
    e.insert("bookend_end".into(), shape_all(&end, None));
    e.insert(
        "messages_before".into(),
        json!(view.as_ref().map_or(0, |v| v.before)),
    );
    let after = view.as_ref().map_or(n.saturating_sub(5), |v| v.after);
    e.insert("messages_after".into(), json!(after));
    if !root.is_empty() && root != sid {
        e.insert("parent_session_id".into(), json!(root));
    }
    Value::Object(e)
}
