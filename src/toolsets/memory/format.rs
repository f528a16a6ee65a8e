//! The memory file format, as Hermes reads and writes it (hermes-agent 0.19.0:
//! `tools/memory_tool.py`, `MemoryStore._read_file`, `_write_file`,
//! `_detect_external_drift`, `_success_response`), with no I/O.
//!
//! A file is its entries joined by `"\n§\n"`, with no trailing newline; no
//! entries is an empty file. Reading splits on that delimiter, strips each
//! piece with Python's `str.strip()` and drops the empty ones. Every length is
//! Python's `len()`: code points.

use crate::pycompat::{py_len, py_strip};

/// `ENTRY_DELIMITER`: U+00A7 between two line feeds.
pub(crate) const DELIM: &str = "\n§\n";

/// Python's universal newlines (`Path.read_text`): `\r\n` and a lone `\r`
/// become `\n` before anything else looks at the text.
pub(crate) fn universal_newlines(raw: &str) -> String {
    if !raw.contains('\r') {
        return raw.to_string();
    }
    raw.replace("\r\n", "\n").replace('\r', "\n")
}

/// `_read_file` after the read: the stripped, non-empty pieces of `text`.
pub(crate) fn parse(text: &str) -> Vec<String> {
    if py_strip(text).is_empty() {
        return Vec::new();
    }
    text.split(DELIM)
        .map(py_strip)
        .filter(|e| !e.is_empty())
        .map(str::to_string)
        .collect()
}

/// `list(dict.fromkeys(entries))`: duplicates dropped, first one kept.
pub(crate) fn dedupe(entries: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    entries
        .into_iter()
        .filter(|e| seen.insert(e.clone()))
        .collect()
}

/// The file's bytes for `entries` (`ENTRY_DELIMITER.join(entries)`).
pub(crate) fn serialize(entries: &[String]) -> String {
    entries.join(DELIM)
}

/// `len(ENTRY_DELIMITER.join(entries))`, 0 for none.
pub(crate) fn char_count(entries: &[String]) -> i64 {
    if entries.is_empty() {
        return 0;
    }
    let chars: usize = entries.iter().map(|e| py_len(e)).sum();
    (chars + py_len(DELIM) * (entries.len() - 1)) as i64
}

/// `_detect_external_drift`'s test on a file's (newline-translated) text: it
/// would not round-trip through parse and join, or one entry alone is larger
/// than the whole target's `limit` (free-form text appended into one entry).
pub(crate) fn drifted(text: &str, limit: i64) -> bool {
    if py_strip(text).is_empty() {
        return false;
    }
    // No de-duplication here, as in Hermes.
    let parsed = parse(text);
    let longest = parsed.iter().map(|e| py_len(e) as i64).max().unwrap_or(0);
    py_strip(text) != serialize(&parsed) || longest > limit
}

/// Python's `f"{n:,}"`.
pub(crate) fn commas(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 { format!("-{out}") } else { out }
}

/// `"<current:,>/<limit:,>"`, the `usage` of error results.
pub(crate) fn usage(current: i64, limit: i64) -> String {
    format!("{}/{}", commas(current), commas(limit))
}

/// `min(100, int((current / limit) * 100)) if limit > 0 else 0`.
pub(crate) fn percent(current: i64, limit: i64) -> i64 {
    if limit <= 0 {
        return 0;
    }
    // Python divides as floats and truncates toward zero; so does `as`.
    (((current as f64 / limit as f64) * 100.0) as i64).min(100)
}

/// `MemoryStore._previews`: each entry cut to 80 code points, `...` when cut.
pub(crate) fn previews(entries: &[&String]) -> Vec<String> {
    entries
        .iter()
        .map(|e| {
            if py_len(e) > 80 {
                format!("{}...", e.chars().take(80).collect::<String>())
            } else {
                e.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_strips_drops_empties_and_keeps_bom() {
        assert!(parse(" \n ").is_empty());
        assert_eq!(
            parse("one\n§\n\n§\ntwo   \n§\nthree\n"),
            ["one", "two", "three"]
        );
        // A lone § without its line feeds is not a delimiter.
        assert_eq!(parse("a § b\n§\nc"), ["a § b", "c"]);
        assert_eq!(parse("\u{feff}x"), ["\u{feff}x"]);
        assert_eq!(universal_newlines("a\r\n§\r\nb\rc"), "a\n§\nb\nc");
    }

    #[test]
    fn drift_is_a_round_trip_mismatch_or_an_oversized_entry() {
        assert!(!drifted("", 10));
        assert!(!drifted("one\n§\ntwo", 10));
        // Python's strip of the whole text is compared, so outer whitespace is fine.
        assert!(!drifted("\n one\n§\ntwo \n", 10));
        assert!(drifted("one\n§\n\n§\ntwo", 10));
        assert!(drifted("one \n§\ntwo", 10));
        assert!(drifted("x".repeat(11).as_str(), 10));
        // Duplicates do not count as drift.
        assert!(!drifted("a\n§\na", 10));
    }

    #[test]
    fn counts_and_numbers_like_python() {
        let e = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(char_count(&[]), 0);
        assert_eq!(char_count(&e(&["é", "ab"])), 6);
        assert_eq!(commas(0), "0");
        assert_eq!(commas(999), "999");
        assert_eq!(commas(2200), "2,200");
        assert_eq!(commas(1234567), "1,234,567");
        assert_eq!(commas(-1375), "-1,375");
        assert_eq!(percent(29, 2200), 1);
        assert_eq!(percent(5000, 2200), 100);
        assert_eq!(percent(5, 0), 0);
        assert_eq!(percent(5, -3), 0);
        assert_eq!(usage(23, 2200), "23/2,200");
        assert_eq!(dedupe(e(&["a", "b", "a"])), e(&["a", "b"]));
        let long = "x".repeat(81);
        assert_eq!(
            previews(&[&long, &"y".to_string()]),
            [format!("{}...", "x".repeat(80)), "y".to_string()]
        );
    }
}
