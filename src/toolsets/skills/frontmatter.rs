//! SKILL.md frontmatter, parsed as Hermes' `agent.skill_utils.parse_frontmatter`
//! does: one leading BOM stripped, YAML between a leading `---` and the next
//! `\n---\s*\n`, PyYAML-compatible (serde-saphyr with YAML 1.1 options), and a
//! simple `key: value` line fallback when the YAML does not parse.

use std::sync::LazyLock;

use serde_json::{Map, Value};

static END_FENCE: LazyLock<regex::Regex> =
    LazyLock::new(|| regex::Regex::new(r"\n---\s*\n").expect("valid regex"));

/// Compile the pattern now (the toolset's warm-up).
pub(crate) fn warm() {
    LazyLock::force(&END_FENCE);
}

pub(crate) type Frontmatter = Map<String, Value>;

fn yaml_options() -> serde_saphyr::Options {
    // Same options as `hermes::config` (PyYAML / YAML 1.1 behaviour).
    let mut o = serde_saphyr::Options::default();
    o.legacy_octal_numbers = true;
    o.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::LastWins;
    o
}

/// Split `content` into (frontmatter, body). Content without a frontmatter
/// block gives an empty map and the whole text as the body.
pub(crate) fn parse(content: &str) -> (Frontmatter, &str) {
    let content = content.strip_prefix('\u{feff}').unwrap_or(content);
    if !content.starts_with("---") {
        return (Map::new(), content);
    }
    let rest = &content[3..];
    let Some(m) = END_FENCE.find(rest) else {
        return (Map::new(), content);
    };
    let yaml = &rest[..m.start()];
    let body = &rest[m.end()..];
    let fm = if yaml.trim().is_empty() {
        Map::new()
    } else {
        match serde_saphyr::from_str_with_options::<Value>(yaml, yaml_options()) {
            Ok(Value::Object(map)) => map,
            Ok(_) => Map::new(),
            Err(e) => {
                tracing::debug!(
                    "skill frontmatter is not valid YAML ({e}); using key: value lines"
                );
                fallback(yaml)
            }
        }
    };
    (fm, body)
}

/// Hermes' fallback for malformed YAML: every `key: value` line, values as strings.
fn fallback(yaml: &str) -> Frontmatter {
    let mut fm = Map::new();
    for line in yaml.trim().split('\n') {
        if let Some((k, v)) = line.split_once(':') {
            fm.insert(k.trim().to_string(), Value::String(v.trim().to_string()));
        }
    }
    fm
}

// Python's `bool()` and `str()` of YAML values, from the crate's one copy.
pub(crate) use crate::pycompat::{py_bool as truthy, py_str_or_json};

/// `fm.get(key)` as a string when it is a scalar, `None` when absent or null.
pub(crate) fn get_str(fm: &Frontmatter, key: &str) -> Option<String> {
    match fm.get(key)? {
        Value::Null => None,
        Value::Array(_) | Value::Object(_) => None,
        v => Some(py_str_or_json(v)),
    }
}

/// Hermes' `_parse_tags`: a YAML list, `"[a, b]"`, or `"a, b"`.
pub(crate) fn parse_tags(value: Option<&Value>) -> Vec<String> {
    let Some(v) = value.filter(|v| truthy(v)) else {
        return Vec::new();
    };
    if let Value::Array(items) = v {
        return items
            .iter()
            .filter(|t| truthy(t))
            .map(|t| py_str_or_json(t).trim().to_string())
            .collect();
    }
    let s = py_str_or_json(v);
    let mut s = s.trim();
    if s.starts_with('[') && s.ends_with(']') && s.len() >= 2 {
        s = &s[1..s.len() - 1];
    }
    s.split(',')
        .filter(|t| !t.trim().is_empty())
        .map(|t| t.trim().trim_matches(|c| c == '"' || c == '\'').to_string())
        .collect()
}

/// Tags and related skills: `metadata.hermes.*` first (agentskills.io), then top level.
pub(crate) fn tags_and_related(fm: &Frontmatter) -> (Vec<String>, Vec<String>) {
    let hermes = fm
        .get("metadata")
        .and_then(Value::as_object)
        .and_then(|m| m.get("hermes"))
        .and_then(Value::as_object);
    let pick = |key: &str| {
        hermes
            .and_then(|h| h.get(key))
            .filter(|v| truthy(v))
            .or_else(|| fm.get(key))
    };
    (parse_tags(pick("tags")), parse_tags(pick("related_skills")))
}

/// Python's text-mode read: `\r\n` and lone `\r` become `\n`.
pub(crate) fn universal_newlines(text: String) -> String {
    if !text.contains('\r') {
        return text;
    }
    text.replace("\r\n", "\n").replace('\r', "\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_yaml_frontmatter_and_body() {
        let (fm, body) = parse(
            "---\nname: axolotl\ndescription: Fine-tune LLMs\nplatforms: [linux, macos]\nmetadata:\n  hermes:\n    tags: [fine-tuning, llm]\n---\n# Axolotl\nBody\n",
        );
        assert_eq!(fm["name"], "axolotl");
        assert_eq!(fm["platforms"], json!(["linux", "macos"]));
        assert_eq!(body, "# Axolotl\nBody\n");
        assert_eq!(
            tags_and_related(&fm),
            (vec!["fine-tuning".into(), "llm".into()], vec![])
        );
    }

    #[test]
    fn bom_is_stripped_and_missing_fence_means_no_frontmatter() {
        let (fm, _) = parse("\u{feff}---\nname: x\n---");
        assert!(
            fm.is_empty(),
            "no trailing newline after the fence: not closed"
        );
        let (fm, body) = parse("\u{feff}---\nname: x\n---\nbody\n");
        assert_eq!(fm["name"], "x");
        assert_eq!(body, "body\n");
        let (fm, body) = parse("# Title\n---\nname: y\n---\n");
        assert!(fm.is_empty());
        assert!(body.starts_with("# Title"));
        let (fm, body) = parse("---\nname: unterminated\n");
        assert!(fm.is_empty());
        assert_eq!(body, "---\nname: unterminated\n");
    }

    #[test]
    fn yaml_11_scalars_like_pyyaml() {
        let (fm, _) = parse("---\nname: x\nenabled: yes\nversion: 1.0\n---\n");
        assert_eq!(fm["enabled"], json!(true));
        assert_eq!(get_str(&fm, "version").as_deref(), Some("1.0"));
    }

    #[test]
    fn malformed_yaml_falls_back_to_key_value_lines() {
        let (fm, body) = parse(
            "---\nname: broken\ndescription: has: colons: everywhere\ntags: [a, b\n---\nbody\n",
        );
        assert_eq!(fm["name"], "broken");
        assert_eq!(fm["description"], "has: colons: everywhere");
        assert_eq!(fm["tags"], "[a, b");
        assert_eq!(body, "body\n");
        // Not bracketed on both ends: split as a comma list, as Hermes does.
        assert_eq!(parse_tags(fm.get("tags")), vec!["[a", "b"]);
    }

    #[test]
    fn non_mapping_frontmatter_is_empty() {
        let (fm, body) = parse("---\n- a\n- b\n---\nbody\n");
        assert!(fm.is_empty());
        assert_eq!(body, "body\n");
        let (fm, _) = parse("---\n---\nbody\n");
        assert!(fm.is_empty());
    }

    #[test]
    fn tags_in_every_form() {
        assert_eq!(
            parse_tags(Some(&json!("[x, 'y', \"z\"]"))),
            vec!["x", "y", "z"]
        );
        assert_eq!(parse_tags(Some(&json!("a, b ,, c"))), vec!["a", "b", "c"]);
        assert_eq!(parse_tags(Some(&json!(["a", "", 3, null]))), vec!["a", "3"]);
        assert!(parse_tags(Some(&json!(""))).is_empty());
        assert!(parse_tags(None).is_empty());
        // Top-level form, and metadata.hermes winning over it.
        let (fm, _) = parse("---\ntags: top\nrelated_skills: [r1]\n---\n");
        assert_eq!(
            tags_and_related(&fm),
            (vec!["top".into()], vec!["r1".into()])
        );
        let (fm, _) = parse(
            "---\ntags: top\nmetadata:\n  hermes:\n    tags: [meta]\n    related_skills: r2, r3\n---\n",
        );
        assert_eq!(
            tags_and_related(&fm),
            (vec!["meta".into()], vec!["r2".into(), "r3".into()])
        );
    }

    #[test]
    fn newlines_are_translated_like_python_text_mode() {
        assert_eq!(universal_newlines("a\r\nb\rc\n".into()), "a\nb\nc\n");
    }
}
