//! Full-text search over messages: `SessionDB.search_messages` and
//! `_sanitize_fts5_query` (hermes-agent 0.19.0, `hermes_state.py`), with the
//! same SQL so FTS5's ranking, snippets and tie order are the same:
//! the `unicode61` table for most queries, the trigram table for CJK queries
//! of three or more characters per term, and a `LIKE` scan for shorter CJK.
//!
//! Two things Hermes computes are left for later or out, with no effect on
//! the result: FTS5's `snippet()` is computed after ranking, only for the
//! rows discovery shows (a snippet depends only on its message and the
//! query, while computing it in the ranked statement costs it for every
//! match a sort has to see); and the per-row "context" query Hermes runs
//! after the search is skipped, since `session_search` never reads it.

use std::sync::LazyLock;

use regex::Regex;
use rusqlite::types::ToSql;
use rusqlite::{Connection, params_from_iter};
use serde_json::Value;

use super::db::{StateDb, is_operational};
use super::store::col;
use crate::pycompat::py_strip;

/// `MAX_FTS5_QUERY_CHARS`.
const MAX_QUERY_CHARS: usize = 2048;

/// One matching message, with the columns discovery reads.
#[derive(Debug, Clone)]
pub(crate) struct Hit {
    pub(crate) id: i64,
    pub(crate) session_id: String,
    pub(crate) role: Value,
    pub(crate) source: Value,
    pub(crate) model: Value,
    pub(crate) session_started: Value,
    /// The `LIKE` path's excerpt; FTS rows get theirs from [`Found::snippet`].
    snippet: Value,
}

/// The hits in Hermes' order, and how to make their snippets.
#[derive(Debug, Default)]
pub(crate) struct Found {
    pub(crate) hits: Vec<Hit>,
    /// The FTS5 table and `MATCH` expression the hits came from.
    fts: Option<(&'static str, String)>,
}

impl Found {
    /// The `snippet` column Hermes' statement gives `hit`:
    /// `snippet(<table>, 0, '>>>', '<<<', '...', 40)` for FTS rows.
    pub(crate) fn snippet(&self, conn: &Connection, hit: &Hit) -> rusqlite::Result<Value> {
        let Some((table, match_q)) = &self.fts else {
            return Ok(hit.snippet.clone());
        };
        let sql = format!(
            "SELECT snippet({table}, 0, '>>>', '<<<', '...', 40) FROM {table} \
             WHERE {table} MATCH ? AND rowid = ?"
        );
        let mut stmt = conn.prepare_cached(&sql)?;
        let mut rows = stmt.query(rusqlite::params![match_q, hit.id])?;
        match rows.next()? {
            Some(row) => col(row, 0),
            None => Ok(Value::Null),
        }
    }
}

/// What to search and how (discovery's fixed arguments: hidden sources
/// excluded, 300 rows, offset 0).
pub(crate) struct Search<'a> {
    pub(crate) query: &'a str,
    pub(crate) roles: &'a [String],
    pub(crate) exclude_sources: &'a [&'a str],
    pub(crate) limit: i64,
    /// `newest` / `oldest`, already normalised.
    pub(crate) sort: Option<&'a str>,
}

static SPECIAL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"[+{}():"^]"#).expect("valid regex"));
static STARS: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\*+").expect("valid regex"));
static LEADING_STAR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(^|\s)\*").expect("valid regex"));
static LEADING_OP: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)^(AND|OR|NOT)\b\s*").expect("valid regex"));
static TRAILING_OP: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\s+(AND|OR|NOT)\s*$").expect("valid regex"));
static COMPOUND: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b(\w+(?:[._-]\w+)+)\b").expect("valid regex"));

/// The toolset's warm-up: the query patterns, and SQLite with FTS5 set up
/// once on an in-memory database (no file is opened).
pub(crate) fn warm() {
    for re in [
        &SPECIAL,
        &STARS,
        &LEADING_STAR,
        &LEADING_OP,
        &TRAILING_OP,
        &COMPOUND,
    ] {
        LazyLock::force(re);
    }
    if let Ok(conn) = rusqlite::Connection::open_in_memory() {
        let _ = conn.execute_batch(
            "CREATE VIRTUAL TABLE w USING fts5(c); SELECT rowid FROM w WHERE w MATCH 'warm';",
        );
    }
}

/// `_sanitize_fts5_query`: keep balanced `"…"` phrases, drop FTS5 operators
/// that would be syntax errors, quote dotted/hyphenated terms.
pub(crate) fn sanitize(query: &str) -> String {
    let chars: Vec<char> = query.chars().take(MAX_QUERY_CHARS).collect();
    let mut quoted: Vec<String> = Vec::new();
    let mut s = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '"' {
            s.push(chars[i]);
            i += 1;
            continue;
        }
        match chars[i + 1..].iter().position(|c| *c == '"') {
            None => {
                s.push(' ');
                i += 1;
            }
            Some(off) => {
                let end = i + 1 + off;
                quoted.push(chars[i..=end].iter().collect());
                s.push_str(&format!("\x00Q{}\x00", quoted.len() - 1));
                i = end + 1;
            }
        }
    }
    let s = SPECIAL.replace_all(&s, " ");
    let s = STARS.replace_all(&s, "*");
    let s = LEADING_STAR.replace_all(&s, "$1");
    let s = LEADING_OP.replace(py_strip(&s), "").into_owned();
    let s = TRAILING_OP.replace(py_strip(&s), "").into_owned();
    let mut s = COMPOUND.replace_all(&s, "\"${1}\"").into_owned();
    for (i, q) in quoted.iter().enumerate() {
        s = s.replace(&format!("\x00Q{i}\x00"), q);
    }
    py_strip(&s).to_string()
}

/// `_is_cjk_codepoint`.
fn is_cjk(c: char) -> bool {
    matches!(u32::from(c),
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0x3000..=0x303F
        | 0x3040..=0x309F | 0x30A0..=0x30FF | 0xAC00..=0xD7AF)
}

fn count_cjk(s: &str) -> usize {
    s.chars().filter(|c| is_cjk(*c)).count()
}

/// FTS5's boolean operators, as Hermes tests tokens (`t.upper() in {...}`).
fn is_operator(tok: &str) -> bool {
    matches!(tok.to_uppercase().as_str(), "AND" | "OR" | "NOT")
}

/// `SessionDB.search_messages(...)` as discovery calls it.
pub(crate) fn search(db: &StateDb, a: &Search<'_>) -> rusqlite::Result<Found> {
    if !db.fts || py_strip(a.query).is_empty() {
        return Ok(Found::default());
    }
    let q = sanitize(a.query);
    if q.is_empty() {
        return Ok(Found::default());
    }
    let order = match a.sort {
        Some("newest") => "ORDER BY m.timestamp DESC, rank",
        Some("oldest") => "ORDER BY m.timestamp ASC, rank",
        _ => "ORDER BY rank",
    };
    if !q.chars().any(is_cjk) {
        // Hermes' `execute` swallows an `OperationalError`: no rows.
        let hits = fts_query(&db.conn, "messages_fts", &q, a, order)?.unwrap_or_default();
        return Ok(Found {
            hits,
            fts: Some(("messages_fts", q)),
        });
    }
    let raw = py_strip(q.trim_matches('"'));
    let tokens: Vec<&str> = raw.split_whitespace().collect();
    let short_cjk = tokens
        .iter()
        .any(|t| !is_operator(t) && t.chars().any(is_cjk) && count_cjk(t) < 3);
    if count_cjk(raw) >= 3 && !short_cjk && db.trigram {
        let quoted: Vec<String> = tokens
            .iter()
            .map(|t| match is_operator(t) {
                true => t.to_string(),
                false => format!("\"{}\"", t.replace('"', "\"\"")),
            })
            .collect();
        // On the trigram table an `OperationalError` falls through to `LIKE`.
        let match_q = quoted.join(" ");
        if let Some(hits) = fts_query(&db.conn, "messages_fts_trigram", &match_q, a, order)? {
            return Ok(Found {
                hits,
                fts: Some(("messages_fts_trigram", match_q)),
            });
        }
    }
    Ok(Found {
        hits: like_query(&db.conn, raw, &tokens, a)?,
        fts: None,
    })
}

/// The FTS5 query on `table`. `None` when it fails with an `OperationalError`
/// while preparing or on the first step: where Hermes' `execute` raises it
/// (later rows are fetched outside Hermes' `try`, so their errors propagate).
fn fts_query(
    conn: &Connection,
    table: &str,
    match_q: &str,
    a: &Search<'_>,
    order: &str,
) -> rusqlite::Result<Option<Vec<Hit>>> {
    let (sql, params) = fts_sql(table, match_q, a, order);
    let first_step = |e: rusqlite::Error| match is_operational(&e) {
        true => Ok(None),
        false => Err(e),
    };
    let mut stmt = match conn.prepare_cached(&sql) {
        Ok(s) => s,
        Err(e) => return first_step(e),
    };
    let mut rows = stmt.query(params_from_iter(params.iter()))?;
    let mut out = Vec::new();
    match rows.next() {
        Ok(Some(row)) => out.push(hit(row)?),
        Ok(None) => return Ok(Some(out)),
        Err(e) => return first_step(e),
    }
    while let Some(row) = rows.next()? {
        out.push(hit(row)?);
    }
    Ok(Some(out))
}

/// Hermes' FTS statement for `table` and its parameters, in bind order.
fn fts_sql(
    table: &str,
    match_q: &str,
    a: &Search<'_>,
    order: &str,
) -> (String, Vec<Box<dyn ToSql>>) {
    let mut params: Vec<Box<dyn ToSql>> = vec![Box::new(match_q.to_string())];
    let mut wh = vec![
        format!("{table} MATCH ?"),
        "(m.active = 1 OR m.compacted = 1)".to_string(),
    ];
    filters(a, &mut wh, &mut params);
    params.push(Box::new(a.limit));
    params.push(Box::new(0_i64));
    let sql = format!(
        "SELECT m.id, m.session_id, m.role, s.source, s.model, s.started_at AS session_started \
         FROM {table} JOIN messages m ON m.id = {table}.rowid JOIN sessions s ON s.id = m.session_id \
         WHERE {} {order} LIMIT ? OFFSET ?",
        wh.join(" AND ")
    );
    (sql, params)
}

/// The `LIKE` fallback for short CJK queries: every non-operator token as a
/// substring of content, tool name or tool calls; newest first, no `active`
/// filter, `sort` ignored (as in Hermes).
fn like_query(
    conn: &Connection,
    raw: &str,
    tokens: &[&str],
    a: &Search<'_>,
) -> rusqlite::Result<Vec<Hit>> {
    let mut terms: Vec<&str> = tokens.iter().copied().filter(|t| !is_operator(t)).collect();
    if terms.is_empty() {
        terms.push(raw);
    }
    let mut params: Vec<Box<dyn ToSql>> = vec![Box::new(terms[0].to_string())];
    let mut clauses = Vec::new();
    for t in &terms {
        let esc = t
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_");
        clauses.push(
            "(m.content LIKE ? ESCAPE '\\' OR m.tool_name LIKE ? ESCAPE '\\' OR m.tool_calls LIKE ? ESCAPE '\\')",
        );
        for _ in 0..3 {
            params.push(Box::new(format!("%{esc}%")));
        }
    }
    let mut wh = vec![format!("({})", clauses.join(" OR "))];
    filters(a, &mut wh, &mut params);
    params.push(Box::new(a.limit));
    params.push(Box::new(0_i64));
    let sql = format!(
        "SELECT m.id, m.session_id, m.role, s.source, s.model, s.started_at AS session_started, \
         substr(m.content, max(1, instr(m.content, ?) - 40), 120) AS snippet \
         FROM messages m JOIN sessions s ON s.id = m.session_id \
         WHERE {} ORDER BY m.timestamp DESC LIMIT ? OFFSET ?",
        wh.join(" AND ")
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params_from_iter(params.iter()), hit)?;
    rows.collect()
}

/// The filters both message queries share, as Hermes' `search_messages`
/// adds them: excluded sources, then the role filter when one is given.
fn filters(a: &Search<'_>, wh: &mut Vec<String>, params: &mut Vec<Box<dyn ToSql>>) {
    wh.push(format!(
        "s.source NOT IN ({})",
        marks(a.exclude_sources.len())
    ));
    params.extend(
        a.exclude_sources
            .iter()
            .map(|s| Box::new(s.to_string()) as Box<dyn ToSql>),
    );
    if !a.roles.is_empty() {
        wh.push(format!("m.role IN ({})", marks(a.roles.len())));
        params.extend(
            a.roles
                .iter()
                .map(|r| Box::new(r.clone()) as Box<dyn ToSql>),
        );
    }
}

/// `?,?,…` for `n` parameters.
fn marks(n: usize) -> String {
    vec!["?"; n].join(",")
}

/// A result row of either statement (the `LIKE` one adds its snippet).
fn hit(row: &rusqlite::Row<'_>) -> rusqlite::Result<Hit> {
    Ok(Hit {
        id: row.get(0)?,
        session_id: match col(row, 1)? {
            Value::String(s) => s,
            other => other.to_string(),
        },
        role: col(row, 2)?,
        source: col(row, 3)?,
        model: col(row, 4)?,
        session_started: col(row, 5)?,
        snippet: match row.as_ref().column_count() {
            7 => col(row, 6)?,
            _ => Value::Null,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitizes_like_hermes() {
        // Verified against hermes-agent 0.19.0's `_sanitize_fts5_query`.
        assert_eq!(
            sanitize(r#"AND chat-send P2.2 "docker net" foo* ***bar :x (y) OR"#),
            r#""chat-send" "P2.2" "docker net" foo* bar  x  y"#
        );
        assert_eq!(sanitize("\"unbalanced"), "unbalanced");
        assert_eq!(sanitize("OR"), "");
        assert_eq!(sanitize("   "), "");
        assert_eq!(sanitize("foo AND OR"), "foo AND");
        assert_eq!(sanitize(r#"a "b" "c"#), r#"a "b"  c"#);
        assert_eq!(sanitize(r#"x.y-z_w "q.r""#), r#""x.y-z_w" "q.r""#);
    }

    #[test]
    fn cjk_ranges() {
        assert!(is_cjk('大') && is_cjk('か') && is_cjk('한'));
        assert!(!is_cjk('a'));
        assert_eq!(count_cjk("大别山 ok"), 3);
    }
}
