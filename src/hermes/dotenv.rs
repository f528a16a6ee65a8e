//! `$HERMES_HOME/.env` reader (python-dotenv compatible for the forms Hermes writes).

use std::collections::HashMap;
use std::path::Path;

/// Read and parse `path` (a missing or unreadable file is empty). Only a
/// regular file is read, without blocking on a FIFO, up to 16 MiB.
pub(crate) fn load(path: &Path) -> HashMap<String, String> {
    match crate::fs::read_to_string_capped_opt(path, crate::fs::CONFIG_CAP) {
        Ok(Some(text)) => parse(&text),
        Ok(None) => HashMap::new(),
        Err(e) => {
            tracing::warn!("ignoring {}: {e}", path.display());
            HashMap::new()
        }
    }
}

/// Parse `.env` text: `KEY=VALUE`, optional `export `, `#` comments, single- or
/// double-quoted values (double quotes understand `\n`, `\t`, `\"`, `\\`),
/// inline ` #` comments after unquoted values. Malformed lines are skipped.
pub(crate) fn parse(text: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for line in text.lines() {
        let line = line.trim_start_matches('\u{feff}').trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line
            .strip_prefix("export ")
            .map(str::trim_start)
            .unwrap_or(line);
        let Some((key, rest)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim();
        if key.is_empty()
            || !key
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
        {
            continue;
        }
        let rest = rest.trim();
        let value = if let Some(body) = rest.strip_prefix('"') {
            let mut v = String::new();
            let mut chars = body.chars();
            while let Some(c) = chars.next() {
                match c {
                    '"' => break,
                    '\\' => match chars.next() {
                        Some('n') => v.push('\n'),
                        Some('t') => v.push('\t'),
                        Some('r') => v.push('\r'),
                        Some(o) => v.push(o),
                        None => {}
                    },
                    o => v.push(o),
                }
            }
            v
        } else if let Some(body) = rest.strip_prefix('\'') {
            body.split('\'').next().unwrap_or("").to_string()
        } else {
            match rest.find(" #") {
                Some(i) => rest[..i].trim_end().to_string(),
                None => rest.to_string(),
            }
        };
        out.insert(key.to_string(), value);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn parses_the_forms_hermes_writes() {
        let m = super::parse(
            "# comment\nA=1\nexport B = two \nC=\"x\\ny # not comment\"\nD='lit $X'\nE=val # trailing\nbad line\n=nokey\n",
        );
        assert_eq!(m["A"], "1");
        assert_eq!(m["B"], "two");
        assert_eq!(m["C"], "x\ny # not comment");
        assert_eq!(m["D"], "lit $X");
        assert_eq!(m["E"], "val");
        assert_eq!(m.len(), 5);
    }
}
