//! `plugins.enabled` in `config.yaml`, edited as lines of text: PyYAML
//! would drop the user's comments. Each edit is proved ([`verify`]): the
//! result must parse, every value except `plugins.enabled` must be
//! unchanged, and `plugins.enabled` must be the old list plus (or minus)
//! `hermes-mcp`. Anything else is refused, and the caller says how to do it
//! by hand.

use serde_json::Value;

use super::PLUGIN_NAME;
use crate::hermes::HermesConfig;
use crate::hermes::config::ConfigError;

/// `plugins.<key>` as a list of strings (empty when absent or not a list).
pub(crate) fn str_list(root: &Value, key: &str) -> Vec<String> {
    root.get("plugins")
        .and_then(|p| p.get(key))
        .and_then(|v| v.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// The document without `plugins.enabled` (and without an emptied `plugins`).
fn without_enabled(mut root: Value) -> Value {
    if let Some(obj) = root.as_object_mut() {
        let drop_plugins = match obj.get_mut("plugins") {
            Some(Value::Object(p)) => {
                p.remove("enabled");
                p.is_empty()
            }
            Some(Value::Null) => true,
            _ => false,
        };
        if drop_plugins {
            obj.remove("plugins");
        }
    }
    root
}

/// Why `plugins.enabled` could not be edited in place; the caller adds the
/// hint (enable the plugin by hand, or run with `--no-hermes-hook`).
#[derive(Debug, thiserror::Error)]
pub(crate) enum YamlEditError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("the edited file would not parse: {0}")]
    EditUnparsable(ConfigError),
    #[error("the edit would not give the expected plugins.enabled list")]
    WrongList,
    #[error("the edit would change other settings")]
    OtherSettings,
    #[error("plugins is not written as an indented mapping")]
    PluginsNotMapping,
    #[error("plugins.enabled is not written as a list")]
    EnabledNotList,
    #[error("could not find an entry to remove safely")]
    NoEntry,
}

/// Prove an edit: `after` parses, equals `before` outside `plugins.enabled`,
/// and its `plugins.enabled` is `want(before's list)`.
fn verify(
    before: &str,
    after: &str,
    want: impl Fn(Vec<String>) -> Vec<String>,
) -> Result<(), YamlEditError> {
    let parse = |t: &str| HermesConfig::from_yaml(t).map(|c| c.root);
    let b = parse(before)?;
    let a = parse(after).map_err(YamlEditError::EditUnparsable)?;
    let wanted = want(str_list(&b, "enabled"));
    // An emptied list may be left as `enabled:` (null): Hermes reads both as nothing enabled.
    let enabled_ok = wanted.is_empty()
        || a.get("plugins")
            .and_then(|p| p.get("enabled"))
            .is_some_and(|v| v.is_array());
    if !enabled_ok || str_list(&a, "enabled") != wanted {
        return Err(YamlEditError::WrongList);
    }
    if without_enabled(a) != without_enabled(b) {
        return Err(YamlEditError::OtherSettings);
    }
    Ok(())
}

fn newline(text: &str) -> &'static str {
    if text.contains("\r\n") { "\r\n" } else { "\n" }
}

/// A line's content without its line ending and without a trailing ` # comment`.
fn content(line: &str) -> &str {
    let l = line.trim_end_matches(['\n', '\r']);
    let mut in_quote: Option<char> = None;
    let mut prev_space = true;
    for (i, c) in l.char_indices() {
        match (in_quote, c) {
            (None, '\'' | '"') => in_quote = Some(c),
            (Some(q), c) if c == q => in_quote = None,
            (None, '#') if prev_space => return l[..i].trim_end(),
            _ => {}
        }
        prev_space = c == ' ' || c == '\t';
    }
    l.trim_end()
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// `key: rest` at exactly `indent` spaces; returns `rest` (comment stripped, trimmed).
fn key_line<'a>(line: &'a str, indent: usize, key: &str) -> Option<&'a str> {
    let c = content(line);
    if indent_of(c) != indent {
        return None;
    }
    let after = c[indent..]
        .strip_prefix(key)?
        .trim_start_matches([' ', '\t']);
    let rest = after.strip_prefix(':')?;
    (rest.is_empty() || rest.starts_with([' ', '\t'])).then(|| rest.trim())
}

fn is_blank_or_comment(line: &str) -> bool {
    content(line).trim().is_empty()
}

/// Add `hermes-mcp` to `plugins.enabled`; `Ok(None)` when it is already there.
pub(crate) fn enable_in_yaml(text: &str) -> Result<Option<String>, YamlEditError> {
    let root = HermesConfig::from_yaml(text)?.root;
    if str_list(&root, "enabled").iter().any(|n| n == PLUGIN_NAME) {
        return Ok(None);
    }
    let nl = newline(text);
    let mut lines: Vec<String> = text.split_inclusive('\n').map(String::from).collect();
    let item = |indent: usize| format!("{}- {PLUGIN_NAME}{nl}", " ".repeat(indent));
    let fresh = format!("plugins:{nl}  enabled:{nl}  - {PLUGIN_NAME}{nl}");

    match lines
        .iter()
        .position(|l| key_line(l, 0, "plugins").is_some())
    {
        None => {
            if let Some(last) = lines.last_mut()
                && !last.ends_with('\n')
            {
                last.push_str(nl);
            }
            lines.push(fresh);
        }
        Some(p) => {
            let rest = key_line(&lines[p], 0, "plugins").unwrap_or_default();
            if matches!(rest, "{}" | "null" | "~") {
                lines[p] = fresh;
            } else if !rest.is_empty() {
                return Err(YamlEditError::PluginsNotMapping);
            } else {
                // The mapping's lines: up to the next line that starts at column 0.
                let end = (p + 1..lines.len())
                    .find(|&i| !is_blank_or_comment(&lines[i]) && indent_of(&lines[i]) == 0)
                    .unwrap_or(lines.len());
                let child_indent = (p + 1..end)
                    .find(|&i| !is_blank_or_comment(&lines[i]))
                    .map(|i| indent_of(&lines[i]))
                    .unwrap_or(2);
                let enabled =
                    (p + 1..end).find(|&i| key_line(&lines[i], child_indent, "enabled").is_some());
                match enabled {
                    None => {
                        let pad = " ".repeat(child_indent);
                        lines.insert(p + 1, format!("{pad}enabled:{nl}{}", item(child_indent)));
                    }
                    Some(e) => {
                        let rest = key_line(&lines[e], child_indent, "enabled").unwrap_or_default();
                        if rest.is_empty() || rest == "null" || rest == "~" {
                            let first_item = (e + 1..end)
                                .find(|&i| !is_blank_or_comment(&lines[i]))
                                .filter(|&i| {
                                    let c = content(&lines[i]);
                                    indent_of(c) >= child_indent && c.trim_start().starts_with('-')
                                });
                            match first_item {
                                Some(i) => {
                                    // Append after the sequence's last line, as `hermes plugins enable` does.
                                    let ind = indent_of(&lines[i]);
                                    let mut last = i;
                                    for (j, l) in lines.iter().enumerate().take(end).skip(i + 1) {
                                        if is_blank_or_comment(l) {
                                            continue;
                                        }
                                        let c = content(l);
                                        if indent_of(c) > ind
                                            || indent_of(c) == ind
                                                && c.trim_start().starts_with('-')
                                        {
                                            last = j;
                                        } else {
                                            break;
                                        }
                                    }
                                    lines.insert(last + 1, item(ind));
                                }
                                None => {
                                    let c = content(&lines[e]).to_string();
                                    let head = c.split(':').next().unwrap_or("").to_string();
                                    let tail = &lines[e][c.len()..];
                                    lines[e] = format!("{head}:{tail}");
                                    if !lines[e].ends_with('\n') {
                                        lines[e].push_str(nl);
                                    }
                                    lines.insert(e + 1, item(child_indent));
                                }
                            }
                        } else if rest.starts_with('[') && rest.ends_with(']') {
                            let c = content(&lines[e]).to_string();
                            let inner = rest[1..rest.len() - 1].trim();
                            let list = if inner.is_empty() {
                                format!("[{PLUGIN_NAME}]")
                            } else {
                                format!("[{inner}, {PLUGIN_NAME}]")
                            };
                            let new_c = format!("{}{list}", &c[..c.len() - rest.len()]);
                            let tail = lines[e][c.len()..].to_string();
                            lines[e] = new_c + &tail;
                        } else {
                            return Err(YamlEditError::EnabledNotList);
                        }
                    }
                }
            }
        }
    }
    let out: String = lines.concat();
    verify(text, &out, |mut l| {
        l.push(PLUGIN_NAME.to_string());
        l
    })?;
    Ok(Some(out))
}

/// Take `hermes-mcp` out of `plugins.enabled`; `Ok(None)` when it is not there.
pub(crate) fn disable_in_yaml(text: &str) -> Result<Option<String>, YamlEditError> {
    let root = HermesConfig::from_yaml(text)?.root;
    if !str_list(&root, "enabled").iter().any(|n| n == PLUGIN_NAME) {
        return Ok(None);
    }
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let want = |l: Vec<String>| -> Vec<String> {
        let mut l = l;
        if let Some(i) = l.iter().position(|n| n == PLUGIN_NAME) {
            l.remove(i);
        }
        l
    };
    let names = [
        PLUGIN_NAME.to_string(),
        format!("\"{PLUGIN_NAME}\""),
        format!("'{PLUGIN_NAME}'"),
    ];
    for (i, line) in lines.iter().enumerate() {
        let c = content(line).trim();
        // A block-sequence item of its own.
        if c.strip_prefix('-')
            .map(str::trim)
            .is_some_and(|n| names.iter().any(|x| x == n))
        {
            let mut kept: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            // The last item gone: `enabled: []`, not an `enabled:` with nothing under it.
            if want(str_list(&root, "enabled")).is_empty()
                && let Some(k) = (0..i)
                    .rev()
                    .find(|&k| content(lines[k]).trim() == "enabled:")
                && (k + 1..i).all(|j| content(lines[j]).trim().is_empty())
            {
                kept[k] = lines[k].replacen("enabled:", "enabled: []", 1);
            }
            kept.remove(i);
            let out = kept.concat();
            if verify(text, &out, want).is_ok() {
                return Ok(Some(out));
            }
        }
        // An element of a flow list.
        for n in &names {
            for (from, to) in [
                (format!(", {n}]"), "]".to_string()),
                (format!("[{n}, "), "[".to_string()),
                (format!(", {n},"), ",".to_string()),
                (format!("[{n}]"), "[]".to_string()),
            ] {
                if line.contains(&from) {
                    let mut out_lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
                    out_lines[i] = line.replacen(&from, &to, 1);
                    let out = out_lines.concat();
                    if verify(text, &out, want).is_ok() {
                        return Ok(Some(out));
                    }
                }
            }
        }
    }
    Err(YamlEditError::NoEntry)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enabled(text: &str) -> Vec<String> {
        str_list(&HermesConfig::from_yaml(text).unwrap().root, "enabled")
    }

    #[test]
    fn enables_in_every_shape_hermes_writes() {
        let cases = [
            ("", "plugins:\n  enabled:\n  - hermes-mcp\n"),
            (
                "model:\n  default: x",
                "model:\n  default: x\nplugins:\n  enabled:\n  - hermes-mcp\n",
            ),
            (
                "plugins: {}\nx: 1\n",
                "plugins:\n  enabled:\n  - hermes-mcp\nx: 1\n",
            ),
            (
                "plugins:\nx: 1\n",
                "plugins:\n  enabled:\n  - hermes-mcp\nx: 1\n",
            ),
            (
                "# c\nplugins:\n  enabled:\n  - a  # mine\n  - b\n  disabled: []\nx: 1\n",
                "# c\nplugins:\n  enabled:\n  - a  # mine\n  - b\n  - hermes-mcp\n  disabled: []\nx: 1\n",
            ),
            (
                "plugins:\n    enabled:\n        - a\n",
                "plugins:\n    enabled:\n        - a\n        - hermes-mcp\n",
            ),
            (
                "plugins:\n  enabled: []\n",
                "plugins:\n  enabled: [hermes-mcp]\n",
            ),
            (
                "plugins:\n  enabled: [a, b] # two\n",
                "plugins:\n  enabled: [a, b, hermes-mcp] # two\n",
            ),
            (
                "plugins:\n  enabled:\n  disabled: [z]\n",
                "plugins:\n  enabled:\n  - hermes-mcp\n  disabled: [z]\n",
            ),
            (
                "plugins:\n  disabled: [z]\n",
                "plugins:\n  enabled:\n  - hermes-mcp\n  disabled: [z]\n",
            ),
            (
                "a: 1\r\nplugins:\r\n  enabled:\r\n  - a\r\n",
                "a: 1\r\nplugins:\r\n  enabled:\r\n  - a\r\n  - hermes-mcp\r\n",
            ),
        ];
        for (before, after) in cases {
            let got = enable_in_yaml(before).unwrap_or_else(|e| panic!("{before:?}: {e}"));
            assert_eq!(got.as_deref(), Some(after), "{before:?}");
            assert!(enabled(after).contains(&PLUGIN_NAME.to_string()));
            assert_eq!(
                enable_in_yaml(after).unwrap(),
                None,
                "idempotent: {after:?}"
            );
            let back = disable_in_yaml(after).unwrap().unwrap();
            assert_eq!(enabled(&back), enabled(before), "{after:?} -> {back:?}");
            assert_eq!(disable_in_yaml(&back).unwrap(), None);
        }
    }

    #[test]
    fn removing_the_last_entry_leaves_an_empty_list() {
        let cases = [
            (
                "plugins:\n  enabled:\n    - hermes-mcp  # ours\n  disabled: [z]\n",
                "plugins:\n  enabled: []\n  disabled: [z]\n",
            ),
            (
                "plugins:\r\n  enabled:\r\n  - hermes-mcp\r\n",
                "plugins:\r\n  enabled: []\r\n",
            ),
            (
                "plugins:\n  enabled:\n  - a\n  - hermes-mcp\n",
                "plugins:\n  enabled:\n  - a\n",
            ),
        ];
        for (before, after) in cases {
            assert_eq!(
                disable_in_yaml(before).unwrap().as_deref(),
                Some(after),
                "{before:?}"
            );
        }
    }

    #[test]
    fn refuses_edits_it_cannot_prove() {
        for text in [
            "plugins: {enabled: [a]}\n",
            "plugins:\n  enabled: a\n",
            "plugins: [a]\n",
            "\"plugins\":\n  enabled: [a]\n",
        ] {
            assert!(enable_in_yaml(text).is_err(), "{text:?}");
        }
    }
}
