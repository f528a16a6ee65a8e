//! What `serve` writes to its log about each tool call.
//!
//! At `info` (the log file's default): one line per call with the tool's name,
//! how long it took and whether it failed, with the error text, so that
//! `$HERMES_HOME/logs/hermes-mcp.log` says what went wrong after a failed
//! call. At `debug`: the arguments and the result as well. Everything is cut
//! to a readable length (on character boundaries) and goes through Hermes'
//! secret redaction (`crate::redact`, `agent/redact.py`) first, because the
//! log outlives the call.

use std::time::Duration;

use serde_json::Value;

use super::ToolOutput;
use crate::redact::redact_sensitive_text;

/// Longest tool or client name in a line (they come from the client).
pub(crate) const NAME_CHARS: usize = 100;
/// Characters at the end of the redacted prefix that are never shown.
const SCAN_MARGIN: usize = 256;
/// Longest error text in a call's line.
const ERROR_CHARS: usize = 300;
/// Longest argument or result text at `debug`.
const DEBUG_CHARS: usize = 500;

/// `text` redacted, on one line, cut to `max` characters (with `…` and the
/// number of characters left out).
pub(crate) fn readable(text: &str, max: usize) -> String {
    // Redact a bounded prefix: the cut below drops anything past it anyway.
    let scanned = max.saturating_mul(4);
    let total = text.chars().count();
    let head: String = text.chars().take(scanned).collect();
    let clean: String = redact_sensitive_text(&head)
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let kept = clean.chars().count();
    if kept <= max && total <= scanned {
        return clean;
    }
    // A secret straddling the scanned prefix's end may be too short there
    // for the patterns to match: never show the prefix's last characters.
    let usable = if total > scanned {
        kept.saturating_sub(SCAN_MARGIN.min(scanned - max))
    } else {
        kept
    };
    let take = max.min(usable);
    let cut: String = clean.chars().take(take).collect();
    let left = kept.saturating_sub(take) + total.saturating_sub(scanned);
    format!("{cut}… [{left} more chars]")
}

/// Log the arguments of a call about to run (only at `debug`).
pub(crate) fn arguments(name: &str, args: Option<&serde_json::Map<String, Value>>) {
    if tracing::enabled!(tracing::Level::DEBUG) {
        let name = readable(name, NAME_CHARS);
        let text = args.map(|a| Value::Object(a.clone()).to_string());
        let text = text.as_deref().unwrap_or("{}");
        tracing::debug!(
            "tools/call {name} arguments: {}",
            readable(text, DEBUG_CHARS)
        );
    }
}

/// The call's line: name, duration, ok or error (with the error text); at
/// `debug` also the result.
pub(crate) fn finished(name: &str, took: Duration, out: &ToolOutput) {
    let name = readable(name, NAME_CHARS);
    let secs = took.as_secs_f64();
    if out.is_error {
        let text = error_text(out);
        tracing::info!(
            "tools/call {name}: error after {secs:.2} s: {}",
            readable(&text, ERROR_CHARS)
        );
    } else {
        tracing::info!("tools/call {name}: ok after {secs:.2} s");
    }
    if tracing::enabled!(tracing::Level::DEBUG) {
        let texts: Vec<&str> = out
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
            .collect();
        let others = out.content.len() - texts.len();
        let extra = if others > 0 {
            format!(" (+{others} non-text blocks)")
        } else {
            String::new()
        };
        tracing::debug!(
            "tools/call {name} result: {}{extra}",
            readable(&texts.join("\n"), DEBUG_CHARS)
        );
    }
}

/// The error message of a failed result: the `error` field of its JSON body
/// (Hermes' `tool_error` shape) or the text itself.
fn error_text(out: &ToolOutput) -> String {
    let text = out
        .content
        .iter()
        .find_map(|c| c.as_text())
        .map(|t| t.text.as_str())
        .unwrap_or("(no text)");
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => match m.get("error") {
            Some(Value::String(e)) => e.clone(),
            _ => text.to_string(),
        },
        _ => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_cut_at_the_end_of_the_scanned_prefix_is_never_shown() {
        // A long bearer token that redaction shortens, then a key whose
        // start falls just before the end of the scanned prefix (4 × 500).
        let bearer = format!("Authorization: Bearer {}", "A".repeat(1900));
        let pad = 2000 - 6 - bearer.chars().count();
        let text = format!(
            "{bearer}{} sk-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 tail{}",
            " ".repeat(pad),
            "z".repeat(3000)
        );
        let r = readable(&text, 500);
        assert!(!r.contains("sk-A"), "{r}");
        assert!(!r.contains("AAAAAAAAAAAAAAAA"), "{r}");
    }

    #[test]
    fn readable_cuts_on_characters_and_redacts() {
        let long = "é".repeat(1000);
        let r = readable(&long, 10);
        assert_eq!(r, format!("{}… [990 more chars]", "é".repeat(10)));
        let r = readable("key sk-abcdefghijklmnopqrstuvwxyz0123\nnext", 500);
        assert!(!r.contains("sk-abcdefghijklmnop"), "{r}");
        assert!(!r.contains('\n'), "{r}");
        assert_eq!(readable("short", 10), "short");
    }

    #[test]
    fn error_text_reads_the_error_field() {
        let out = ToolOutput::error("boom");
        assert_eq!(error_text(&out), "boom");
        let out = ToolOutput::error_json(serde_json::json!({"success": false}));
        assert_eq!(error_text(&out), r#"{"success":false}"#);
    }
}
