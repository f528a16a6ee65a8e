//! Why config.toml is out of date, in words: `migrate --check` prints one
//! line like `ruff format --check` does, so the reasons are short clauses
//! (Hermes' Python server is back, blocks to merge, entries to add, change or
//! remove, the Hermes plugin) computed from the old and the new text.

use super::report::Report;
use super::{Options, block, hermes_plugin};
use crate::hermes::SERVER_NAME;

/// What makes config.toml out of date (for `--check`'s one line): each a
/// short clause, never empty when the file would change.
pub(super) fn reasons(
    args: &Options,
    first: Option<&str>,
    new: &str,
    report: &Report,
    hook_stale: bool,
) -> Vec<String> {
    let mut why = Vec::new();
    let Some(old) = first else {
        return vec!["it does not exist yet".into()];
    };
    let python = hermes_plugin::replaced_by_hermes(old);
    if let Some(w) = python {
        why.push(w.to_string());
    }
    if report.replaced_blocks == 0 && !args.remove {
        why.push("it has no managed block yet".into());
    } else if report.replaced_blocks > 1 {
        why.push(format!(
            "it has {} managed blocks instead of one",
            report.replaced_blocks
        ));
    } else if report.replaced_blocks == 1 && args.remove {
        why.push("it still has the managed block".into());
    }
    if report.removed_orphan_end_markers > 0 {
        why.push("it has a stray end marker of the managed block".into());
    }
    if let n @ 1.. = report.kept_from_old_block.len() {
        why.push(format!(
            "{n} {} added inside the managed block",
            if n == 1 { "entry was" } else { "entries were" }
        ));
    }
    if !args.remove && report.replaced_blocks > 0 {
        let skip = python.map(|_| format!("[mcp_servers.{SERVER_NAME}]"));
        why.extend(entry_changes(old, new, skip.as_deref()));
    }
    if hook_stale {
        why.push("the Hermes plugin that restores hermes-tools is missing or out of date".into());
    }
    if why.is_empty() {
        why.push("the managed block is not laid out as migrate writes it".into());
    }
    why
}

/// The managed entries (`default_permissions`, `[mcp_servers.NAME]`,
/// `[plugins."ID"]`) of a TOML text, by name; `None` when it does not parse.
fn managed_entries(text: &str) -> Option<std::collections::BTreeMap<String, toml::Value>> {
    let t = block::parse_toml(text).ok()?;
    let mut m = std::collections::BTreeMap::new();
    for (k, v) in t {
        match (k.as_str(), v) {
            ("mcp_servers" | "plugins", toml::Value::Table(sub)) => {
                for (n, e) in sub {
                    m.insert(format!("[{k}.{}]", block::key(&n)), e);
                }
            }
            ("default_permissions", v) => {
                m.insert(k, v);
            }
            _ => {}
        }
    }
    Some(m)
}

/// "migrate would add …; change …; remove …" for the entries the new block writes
/// differently from the old one (`skip`: already explained).
fn entry_changes(old: &str, new: &str, skip: Option<&str>) -> Vec<String> {
    let (Some(before), Some(after), Some(after_all)) = (
        managed_entries(&block::take_apart(old).old_block),
        managed_entries(&block::take_apart(new).old_block),
        managed_entries(new),
    ) else {
        return Vec::new();
    };
    let keep = |k: &&String| Some(k.as_str()) != skip;
    let added: Vec<&String> = after
        .keys()
        .filter(|k| !before.contains_key(*k))
        .filter(keep)
        .collect();
    let changed: Vec<&String> = after
        .iter()
        .filter(|(k, v)| before.get(*k).is_some_and(|o| o != *v))
        .map(|(k, _)| k)
        .filter(keep)
        .collect();
    // Entries moved out of the block stay in the file: not removed.
    let removed: Vec<&String> = before
        .keys()
        .filter(|k| !after_all.contains_key(*k))
        .filter(keep)
        .collect();
    let join = |v: &[&String]| v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ");
    let parts: Vec<String> = [("add", &added), ("change", &changed), ("remove", &removed)]
        .into_iter()
        .filter(|(_, list)| !list.is_empty())
        .map(|(verb, list)| format!("{verb} {}", join(list)))
        .collect();
    if parts.is_empty() {
        return Vec::new();
    }
    vec![format!("migrate would {}", parts.join("; "))]
}
