//! Page text leaving the browser for the model: secret redaction and the
//! `browser.restrict_evaluate` expression policy.
//!
//! Redaction: Hermes runs browser output through
//! `redact_sensitive_text(force=True)` (hermes-agent: agent/redact.py); so
//! do we, through the shared port in [`crate::redact`].

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

/// Redact secrets in page text, as Hermes does for browser output.
pub(crate) fn redact(text: &str) -> String {
    crate::redact::redact_sensitive_text(text)
}

/// Redact every string in a JSON value.
pub(crate) fn redact_json(v: Value) -> Value {
    match v {
        Value::String(s) => Value::String(redact(&s)),
        Value::Array(a) => Value::Array(a.into_iter().map(redact_json).collect()),
        Value::Object(o) => {
            Value::Object(o.into_iter().map(|(k, v)| (k, redact_json(v))).collect())
        }
        other => other,
    }
}

const RISKY: &[(&str, &str)] = &[
    (r"(?i)\bdocument\s*\.\s*cookie\b", "document.cookie"),
    (r"(?i)\b(?:localStorage|sessionStorage)\b", "web storage"),
    (r"(?i)\bindexedDB\b", "IndexedDB"),
    (
        r"(?i)\bcaches\s*\.\s*(?:open|match|keys)\b",
        "Cache Storage",
    ),
    (
        r"(?i)\bnavigator\s*\.\s*(?:clipboard|credentials|serviceWorker)\b",
        "navigator sensitive API",
    ),
    (
        r"(?i)\b(?:fetch|XMLHttpRequest|WebSocket|EventSource)\s*\(",
        "network request",
    ),
    (r"(?i)\bnavigator\s*\.\s*sendBeacon\s*\(", "network beacon"),
    (
        r"(?is)\bdocument\s*\.\s*forms\b.*\bvalue\b",
        "form value extraction",
    ),
    (
        r"(?is)\bquerySelector(?:All)?\s*\([^)]*(?:input|textarea|password)[^)]*\).*\bvalue\b",
        "form value extraction",
    ),
];

const TOKENS: &[(&str, &str)] = &[
    ("cookie", "document.cookie"),
    ("localStorage", "web storage"),
    ("sessionStorage", "web storage"),
    ("indexedDB", "IndexedDB"),
    ("caches", "Cache Storage"),
    ("clipboard", "navigator sensitive API"),
    ("credentials", "navigator sensitive API"),
    ("serviceWorker", "navigator sensitive API"),
    ("fetch", "network request"),
    ("XMLHttpRequest", "network request"),
    ("WebSocket", "network request"),
    ("EventSource", "network request"),
    ("sendBeacon", "network beacon"),
];

static RISKY_RE: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    RISKY
        .iter()
        .map(|(p, r)| (Regex::new(p).expect("static regex"), *r))
        .collect()
});
static LITERAL_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?s)'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*"|`(?:\\.|[^`\\])*`"#)
        .expect("static regex")
});

/// Decode common escapes in a JS string literal (`\x6f`, `\u006f`, `\n`).
fn decode_literal(lit: &str) -> String {
    let body = &lit[1..lit.len().saturating_sub(1).max(1)];
    let mut out = String::new();
    let mut it = body.chars().peekable();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('x') => {
                let h: String = it.by_ref().take(2).collect();
                if let Some(ch) = u32::from_str_radix(&h, 16).ok().and_then(char::from_u32) {
                    out.push(ch);
                }
            }
            Some('u') => {
                let h: String = it.by_ref().take(4).collect();
                if let Some(ch) = u32::from_str_radix(&h, 16).ok().and_then(char::from_u32) {
                    out.push(ch);
                }
            }
            Some(o) => out.push(o),
            None => {}
        }
    }
    out
}

/// Hermes' `_risky_browser_eval_reason` (hermes-agent: tools/browser_tool.py).
pub(crate) fn risky_eval_reason(expr: &str) -> Option<&'static str> {
    if expr.is_empty() {
        return None;
    }
    for (re, reason) in RISKY_RE.iter() {
        if re.is_match(expr) {
            return Some(reason);
        }
    }
    let literals: Vec<String> = LITERAL_RE
        .find_iter(expr)
        .map(|m| decode_literal(m.as_str()).to_lowercase())
        .collect();
    let concat = literals.concat();
    for (tok, reason) in TOKENS {
        let word = Regex::new(&format!(r"(?i)\b{}\b", regex::escape(tok))).expect("static regex");
        let t = tok.to_lowercase();
        if word.is_match(expr) || literals.iter().any(|l| l.contains(&t)) || concat.contains(&t) {
            return Some(reason);
        }
    }
    None
}

/// Hermes' `_enforce_browser_eval_policy` message (hermes-agent:
/// tools/browser_tool.py), when the policy refuses.
pub(crate) fn eval_policy_error(expr: &str, restrict: bool, allow_unsafe: bool) -> Option<String> {
    if !restrict || allow_unsafe {
        return None;
    }
    let reason = risky_eval_reason(expr)?;
    Some(format!(
        "Blocked: browser_console(expression=...) tried to use sensitive browser JavaScript primitive ({reason}) while browser.restrict_evaluate is enabled. Use browser_snapshot/browser_get_images/browser_console without expression for normal inspection, or set browser.restrict_evaluate: false in config.yaml to allow programmatic evaluation."
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Page text is redacted exactly as Hermes' `redact_sensitive_text(force=True)`
    /// (outputs checked against hermes-agent 0.19.0).
    #[test]
    fn redacts_page_text_as_hermes_does() {
        assert_eq!(
            redact("key sk-abcdefghijklmnopqrstuvwx and password=hunter22 ok"),
            "key sk-abc...uvwx and password=hunter22 ok"
        );
        assert_eq!(
            redact("Authorization: Bearer abcdefghijklmnopqrstuvwxyz123456 ok"),
            "Authorization: Bearer abcdef...3456 ok"
        );
        assert_eq!(
            redact(r#"{"password": "hunter22"} ok"#),
            r#"{"password": "***"} ok"#
        );
        assert_eq!(redact("plain words"), "plain words");
    }

    #[test]
    fn restrict_evaluate_catches_obfuscation() {
        assert_eq!(
            risky_eval_reason("document.cookie"),
            Some("document.cookie")
        );
        assert_eq!(
            risky_eval_reason("document['coo' + 'kie']"),
            Some("document.cookie")
        );
        assert_eq!(
            risky_eval_reason(r#"document["co\x6fkie"]"#),
            Some("document.cookie")
        );
        assert_eq!(risky_eval_reason("fetch('/x')"), Some("network request"));
        assert_eq!(risky_eval_reason("document.title"), None);
        assert!(eval_policy_error("document.cookie", true, false).is_some());
        assert!(eval_policy_error("document.cookie", false, false).is_none());
        assert!(eval_policy_error("document.cookie", true, true).is_none());
    }
}
