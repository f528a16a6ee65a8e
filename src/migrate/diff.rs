//! Unified diff of config.toml for `--dry-run` (git's colours: bold file
//! headers, cyan hunk headers, red removals, green additions).

use anstyle::{AnsiColor, Style};
use similar::{ChangeTag, TextDiff};

/// A unified diff (`a/<path>` → `b/<path>`); empty when the texts are equal.
pub(crate) fn unified(old: &str, new: &str, path: &str, color: bool) -> String {
    if old == new {
        return String::new();
    }
    let paint = |style: Style, s: &str| -> String {
        if color {
            format!("{}{}{}", style.render(), s, style.render_reset())
        } else {
            s.to_string()
        }
    };
    let bold = Style::new().bold();
    let cyan = Style::new().fg_color(Some(AnsiColor::Cyan.into()));
    let red = Style::new().fg_color(Some(AnsiColor::Red.into()));
    let green = Style::new().fg_color(Some(AnsiColor::Green.into()));
    let path = path.trim_start_matches('/');
    let diff = TextDiff::from_lines(old, new);
    let mut out = String::new();
    out.push_str(&paint(bold, &format!("--- a/{path}")));
    out.push('\n');
    out.push_str(&paint(bold, &format!("+++ b/{path}")));
    out.push('\n');
    for hunk in diff.unified_diff().context_radius(3).iter_hunks() {
        out.push_str(&paint(cyan, &hunk.header().to_string()));
        out.push('\n');
        for change in hunk.iter_changes() {
            let (sign, style) = match change.tag() {
                ChangeTag::Delete => ("-", Some(red)),
                ChangeTag::Insert => ("+", Some(green)),
                ChangeTag::Equal => (" ", None),
            };
            let value = change.value();
            let line = value.strip_suffix('\n').unwrap_or(value);
            let text = format!("{sign}{line}");
            match style {
                Some(s) => out.push_str(&paint(s, &text)),
                None => out.push_str(&text),
            }
            out.push('\n');
            if change.missing_newline() {
                out.push_str("\\ No newline at end of file\n");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_and_coloured_diffs() {
        let d = unified("a\nb\n", "a\nc\n", "/x/config.toml", false);
        assert_eq!(
            d,
            "--- a/x/config.toml\n+++ b/x/config.toml\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"
        );
        let c = unified("a\nb\n", "a\nc\n", "p", true);
        assert!(c.contains("\u{1b}[31m-b"), "{c:?}");
        assert!(c.contains("\u{1b}[32m+c"), "{c:?}");
        assert_eq!(unified("same", "same", "p", true), "");
    }
}
