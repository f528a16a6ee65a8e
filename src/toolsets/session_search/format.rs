//! How results look, as `tools/session_search_tool.py` builds them:
//! `_shape_message`, `_format_timestamp`, `tool_error`, and the
//! `json.dumps(..., ensure_ascii=False)` text every shape returns.

use serde_json::{Map, Value, json};

use super::db::VALUE_CAP;
use super::store::{Msg, TEXT_CAP, cut_text};
use crate::pycompat::{py_bool, py_json};
use crate::server::ToolOutput;
use rmcp::model::ContentBlock;

/// The largest answer, in bytes of JSON text (1 MiB). Hermes has no limit;
/// a bigger answer is more than Codex can put before its model.
pub(crate) const ANSWER_CAP: usize = 1 << 20;
/// The shortest a text is cut to when fitting an answer into [`ANSWER_CAP`].
const MIN_TEXT_CAP: usize = 200;

/// A successful result: the JSON text Hermes' function returns. One longer
/// than [`ANSWER_CAP`] has its texts cut shorter (halving from [`TEXT_CAP`],
/// each cut marked) until it fits.
pub(crate) fn ok(v: Value) -> ToolOutput {
    let text = py_json(&v);
    if text.len() <= ANSWER_CAP {
        return ToolOutput::text(text);
    }
    let full = text.len();
    let mut cap = TEXT_CAP / 2;
    while cap >= MIN_TEXT_CAP {
        let mut cut = v.clone();
        cut_strings(&mut cut, cap);
        let text = py_json(&cut);
        if text.len() <= ANSWER_CAP {
            return ToolOutput::text(text);
        }
        cap /= 2;
    }
    tool_error(format!(
        "session_search's answer would be {full} bytes, more than the {ANSWER_CAP} an answer may carry even with each text cut to {MIN_TEXT_CAP} characters; ask for fewer sessions (limit) or a smaller window"
    ))
}

/// Cut every string in `v` longer than `cap` characters (see [`cut_text`]).
fn cut_strings(v: &mut Value, cap: usize) {
    match v {
        Value::String(s) if s.len() > cap => {
            let (text, cut) = cut_text(s.as_bytes(), cap);
            if cut {
                *s = text;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| cut_strings(x, cap)),
        Value::Object(m) => m.values_mut().for_each(|x| cut_strings(x, cap)),
        _ => {}
    }
}

/// Hermes' `tool_error(msg, success=False)`: `{"error": msg, "success": false}`.
pub(crate) fn tool_error(msg: impl Into<String>) -> ToolOutput {
    let v = json!({"error": msg.into(), "success": false});
    ToolOutput {
        content: vec![ContentBlock::text(py_json(&v))],
        is_error: true,
    }
}

/// `"<what>: <e>"`, the text Hermes gives a failed read. A statement stopped
/// by the value cap (`SQLITE_TOOBIG`) says which cap.
pub(crate) fn failed(what: &str, e: &rusqlite::Error) -> String {
    let mut msg = format!("{what}: {e}");
    if e.sqlite_error_code() == Some(rusqlite::ErrorCode::TooBig) {
        msg.push_str(&format!(
            " (a value in the session database is larger than {} MiB, the most session_search reads from one field; the file may be damaged or hostile)",
            VALUE_CAP >> 20
        ));
    }
    msg
}

/// `_shape_message(m, anchor_id)`: id, role, content, timestamp, then the
/// tool fields when truthy and `anchor: true` on the anchor. `None`s are
/// dropped except `content`.
pub(crate) fn shape(m: &Msg, anchor: Option<i64>) -> Value {
    let mut e = Map::new();
    e.insert("id".into(), Value::from(m.id));
    for (k, v) in [
        ("role", &m.role),
        ("content", &m.content),
        ("timestamp", &m.timestamp),
    ] {
        if !v.is_null() || k == "content" {
            e.insert(k.into(), v.clone());
        }
    }
    for (k, v) in [
        ("tool_name", &m.tool_name),
        ("tool_calls", &m.tool_calls),
        ("tool_call_id", &m.tool_call_id),
    ] {
        if py_bool(v) {
            e.insert(k.into(), v.clone());
        }
    }
    if anchor == Some(m.id) {
        e.insert("anchor".into(), Value::Bool(true));
    }
    Value::Object(e)
}

/// [`shape`] over a list.
pub(crate) fn shape_all(ms: &[Msg], anchor: Option<i64>) -> Value {
    Value::Array(ms.iter().map(|m| shape(m, anchor)).collect())
}

/// `_format_timestamp`: a Unix time as `"November 26, 2026 at 04:15 PM"` in
/// local time (`datetime.fromtimestamp(ts).strftime("%B %d, %Y at %I:%M %p")`),
/// `"unknown"` for null; a non-numeric string is returned as is.
pub(crate) fn when(ts: &Value) -> String {
    match ts {
        Value::Null => "unknown".into(),
        Value::Number(n) => n
            .as_f64()
            .and_then(local_when)
            .unwrap_or_else(|| n.to_string()),
        Value::String(s) => {
            let digits: String = s.chars().filter(|c| *c != '.' && *c != '-').collect();
            if !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()) {
                s.parse::<f64>()
                    .ok()
                    .and_then(local_when)
                    .unwrap_or_else(|| s.clone())
            } else {
                s.clone()
            }
        }
        other => other.to_string(),
    }
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// `datetime.fromtimestamp(ts)` (microseconds rounded half-even, as CPython
/// does) formatted with `%B %d, %Y at %I:%M %p`; `None` where Python raises.
fn local_when(ts: f64) -> Option<String> {
    if !ts.is_finite() {
        return None;
    }
    let mut secs = ts.trunc();
    let us = ((ts - secs) * 1e6).round_ties_even();
    if us >= 1e6 {
        secs += 1.0;
    } else if us < 0.0 {
        secs -= 1.0;
    }
    if secs.abs() > 1e14 {
        return None;
    }
    let t = secs as libc::time_t;
    // SAFETY: localtime_r writes into the zeroed `tm` we own; both pointers are valid.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    if unsafe { libc::localtime_r(&t, &mut tm).is_null() } {
        return None;
    }
    let year = i64::from(tm.tm_year) + 1900;
    if !(1..=9999).contains(&year) {
        return None;
    }
    let month = MONTHS.get(usize::try_from(tm.tm_mon).ok()?)?;
    let hour12 = match tm.tm_hour % 12 {
        0 => 12,
        h => h,
    };
    let ampm = if tm.tm_hour < 12 { "AM" } else { "PM" };
    Some(format!(
        "{month} {:02}, {year} at {hour12:02}:{:02} {ampm}",
        tm.tm_mday, tm.tm_min
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The answer's text.
    fn text(o: &ToolOutput) -> String {
        o.content[0]
            .as_text()
            .map(|t| t.text.clone())
            .unwrap_or_default()
    }

    #[test]
    fn timestamps_read_like_pythons_strftime() {
        assert_eq!(when(&Value::Null), "unknown");
        assert_eq!(when(&json!("not a time")), "not a time");
        // Local time: compare against the same instant formatted by libc's own
        // month and hour logic only for shape (the test machine's zone varies).
        let s = when(&json!(1752000000.0));
        assert!(
            s.contains(", 2025 at ") && (s.ends_with(" AM") || s.ends_with(" PM")),
            "{s}"
        );
        assert_eq!(when(&json!("1752000000")), s);
    }

    #[test]
    fn an_answer_over_the_cap_has_its_texts_cut_until_it_fits() {
        // Small: untouched, byte for byte.
        let small = json!({"success": true, "messages": [{"content": "héllo"}]});
        assert_eq!(text(&ok(small.clone())), py_json(&small));
        // Twenty texts of 90,000 characters: 1.8 MB, cut to fit 1 MiB.
        let big: Vec<Value> = (0..20)
            .map(|i| json!({"id": i, "content": "é".repeat(90_000)}))
            .collect();
        let out = ok(json!({"success": true, "messages": big}));
        let t = text(&out);
        assert!(!out.is_error && t.len() <= ANSWER_CAP, "{}", t.len());
        let v: Value = serde_json::from_str(&t).unwrap();
        let c = v["messages"][19]["content"].as_str().unwrap();
        assert!(c.ends_with("... [truncated]") && c.starts_with("éé"), "{c}");
        assert_eq!(v["messages"][19]["id"], 19);
        // Too many items to fit even with every text short: a clear error.
        let many: Vec<Value> = (0..8_000)
            .map(|i| json!({"id": i, "content": "x".repeat(300)}))
            .collect();
        let out = ok(json!({"messages": many}));
        assert!(
            out.is_error && text(&out).contains("more than the 1048576"),
            "{}",
            text(&out)
        );
    }

    #[test]
    fn only_a_value_cap_failure_is_explained_as_one() {
        // A session id that reads like SQLite's message is just an id.
        let e = tool_error("session_id not found: string or blob too big");
        assert!(!text(&e).contains("MiB"), "{}", text(&e));
        let too_big = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_TOOBIG),
            None,
        );
        let m = failed("failed to load session", &too_big);
        assert!(
            m.starts_with("failed to load session: ") && m.contains("64 MiB"),
            "{m}"
        );
        let busy = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
            Some("string or blob too big".into()),
        );
        assert!(!failed("Search failed", &busy).contains("MiB"));
    }

    #[test]
    fn shaping_keeps_null_content_and_drops_falsy_tool_fields() {
        let m = Msg {
            id: 7,
            role: json!("assistant"),
            content: Value::Null,
            timestamp: json!(1.5),
            tool_name: json!(""),
            tool_calls: json!([{"id": "c"}]),
            tool_call_id: Value::Null,
        };
        assert_eq!(
            py_json(&shape(&m, Some(7))),
            r#"{"id": 7, "role": "assistant", "content": null, "timestamp": 1.5, "tool_calls": [{"id": "c"}], "anchor": true}"#
        );
    }
}
