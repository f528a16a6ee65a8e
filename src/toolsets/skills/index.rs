//! The skills index Hermes puts in its system prompt
//! (hermes-agent 0.19.0: `agent/prompt_builder.py::build_skills_system_prompt`,
//! its cold path), for the tools and toolsets `serve` offers: the local
//! skills directory, then `skills.external_dirs` (a local name wins), the
//! platform, environment and disabled filters, the `metadata.hermes`
//! conditions, `DESCRIPTION.md` category descriptions; categories and
//! names sorted, descriptions cut to 60 characters.
//!
//! Hermes also keeps a snapshot of this scan in
//! `$HERMES_HOME/.skills_prompt_snapshot.json`; nothing is written here (the
//! scan is read once, when `serve` starts). Hermes' coding-posture "focus"
//! demotion is not applied (it depends on Hermes' own cwd and platform).
//!
//! When the whole `instructions` would be too long, [`Index::compact`]
//! demotes categories to Hermes' `[names only]` line, the largest savings
//! first, with a note that says so: every skill is still named (up to
//! thousands of skills, where the names alone are cut and counted).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::frontmatter::{self, Frontmatter, py_str_or_json, truthy};
use super::scan::{self, Roots};
use crate::hermes::Context;
use crate::pycompat::{py_len, py_strip};
use crate::server::context::{ContextBlock, Offer, Slot};

/// The text before the index lines.
const HEAD: &str = "## Skills (mandatory)\nBefore replying, scan the skills below. If a skill matches or is even partially relevant to your task, you MUST load it with skill_view(name) and follow its instructions. Err on the side of loading — it is always better to have context you don't need than to miss critical steps, pitfalls, or established workflows. Skills contain specialized knowledge — API endpoints, tool-specific commands, and proven workflows that outperform general-purpose approaches. Load the skill even if you think you could handle the task with basic tools like web_search or terminal. Skills also encode the user's preferred approach, conventions, and quality standards for tasks like code review, planning, and testing — load them even for tasks you already know how to do, because the skill defines how it should be done here.\nWhenever the user asks you to configure, set up, install, enable, disable, modify, or troubleshoot Hermes Agent itself — its CLI, config, models, providers, tools, skills, voice, gateway, plugins, or any feature — load the `hermes-agent` skill first. It has the actual commands (e.g. `hermes config set …`, `hermes tools`, `hermes setup`) so you don't have to guess or invent workarounds.\nIf a skill has issues, fix it with skill_manage(action='patch').\nAfter difficult/iterative tasks, offer to save as a skill. If a skill you loaded was missing steps, had wrong commands, or needed pitfalls you discovered, update it before finishing.\n\n<available_skills>\n";
/// The text after them.
const TAIL: &str = "</available_skills>\n\nOnly proceed without loading a skill if genuinely none are relevant to the task.";

/// Said after the index when categories were shortened to their names.
const NAMES_ONLY_NOTE: &str = "\n(Categories marked [names only] have their descriptions left out to keep \
these instructions short — the skills work normally and load with skill_view(name) as usual.)";

/// The tools that make Hermes add the index (`has_skills_tools`).
const SKILLS_TOOLS: &[&str] = &["skills_list", "skill_view", "skill_manage"];

/// The skills index as a piece of `instructions`, shrinkable; nothing when
/// no skills tool is offered or no skill is shown.
pub(crate) fn blocks(ctx: &Context, offer: &Offer) -> Vec<ContextBlock> {
    if !SKILLS_TOOLS.iter().any(|t| offer.tools.contains(t)) {
        return Vec::new();
    }
    let index = Index::build(ctx, &offer.tools, &offer.toolsets);
    let full = index.render(&BTreeSet::new());
    if full.is_empty() {
        return Vec::new();
    }
    vec![ContextBlock::shrinkable(
        Slot::SkillsIndex,
        full,
        Box::new(move |room| index.compact(room)),
    )]
}

/// The skills shown, by category, and the category descriptions.
#[derive(Debug, Default)]
pub(crate) struct Index {
    /// Category → (name, description) in the order found.
    by_category: BTreeMap<String, Vec<(String, String)>>,
    descriptions: BTreeMap<String, String>,
}

/// `_parse_skill_file` of a file read by [`scan::skill_files`]: (shown on
/// this platform and environment, frontmatter, description); a file that
/// cannot be read is shown with no frontmatter.
fn parse_skill_file(
    ctx: &Context,
    path: &Path,
    read: Result<std::sync::Arc<scan::SkillFile>, super::guard::ReadError>,
) -> (bool, Frontmatter, String) {
    let Ok(file) = read else {
        tracing::warn!("Failed to parse skill file {}", path.display());
        return (true, Frontmatter::new(), String::new());
    };
    let fm = file.full().clone();
    if !scan::matches_platform(ctx, &fm) || !scan::matches_environment(ctx, &fm) {
        return (false, fm, String::new());
    }
    let desc = description(&fm);
    (true, fm, desc)
}

/// `str(value).strip().strip("'\"")`.
fn unquoted(v: &Value) -> String {
    py_strip(&py_str_or_json(v))
        .trim_matches(|c| c == '\'' || c == '"')
        .to_string()
}

/// `extract_skill_description`: at most 60 characters (57 and `...`).
fn description(fm: &Frontmatter) -> String {
    let Some(raw) = fm.get("description").filter(|v| truthy(v)) else {
        return String::new();
    };
    let desc = unquoted(raw);
    if py_len(&desc) > 60 {
        format!("{}...", desc.chars().take(57).collect::<String>())
    } else {
        desc
    }
}

/// `_build_snapshot_entry`'s (skill name, category, frontmatter name).
fn entry(path: &Path, root: &Path, fm: &Frontmatter) -> (String, String, String) {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let (skill, category) = if parts.len() >= 2 {
        let category = if parts.len() > 2 {
            parts[..parts.len() - 2].join("/")
        } else {
            parts[0].clone()
        };
        (parts[parts.len() - 2].clone(), category)
    } else {
        let parent = path
            .parent()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        (parent, "general".to_string())
    };
    let fm_name = match fm.get("name") {
        None => skill.clone(),
        Some(v) => py_str_or_json(v),
    };
    (skill, category, fm_name)
}

/// One `metadata.hermes` condition list, iterated as Python iterates it
/// (a string by its characters, a mapping by its keys).
fn condition(fm: &Frontmatter, key: &str) -> Vec<String> {
    let hermes = match fm.get("metadata") {
        Some(Value::Object(m)) => m.get("hermes"),
        _ => None,
    };
    match hermes.and_then(|h| h.as_object()).and_then(|h| h.get(key)) {
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        Some(Value::String(s)) => s.chars().map(String::from).collect(),
        Some(Value::Object(m)) => m.keys().cloned().collect(),
        _ => Vec::new(),
    }
}

/// `_skill_should_show` with the offered tools and toolsets.
fn should_show(fm: &Frontmatter, tools: &BTreeSet<&str>, toolsets: &BTreeSet<&str>) -> bool {
    let has = |set: &BTreeSet<&str>, v: &String| set.contains(v.as_str());
    !condition(fm, "fallback_for_toolsets")
        .iter()
        .any(|t| has(toolsets, t))
        && !condition(fm, "fallback_for_tools")
            .iter()
            .any(|t| has(tools, t))
        && condition(fm, "requires_toolsets")
            .iter()
            .all(|t| has(toolsets, t))
        && condition(fm, "requires_tools")
            .iter()
            .all(|t| has(tools, t))
}

/// `iter_skill_index_files(root, "SKILL.md")` and `(root, "DESCRIPTION.md")`
/// from one walk of `root`, each sorted as Python sorts the path strings.
fn index_files(root: &Path, trusted: &[PathBuf]) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let (mut skills, mut descriptions) = (Vec::new(), Vec::new());
    scan::walk_files(root, trusted, &mut |p| match p.file_name() {
        Some(n) if n == "SKILL.md" => skills.push(p.to_path_buf()),
        Some(n) if n == "DESCRIPTION.md" => descriptions.push(p.to_path_buf()),
        _ => {}
    });
    for files in [&mut skills, &mut descriptions] {
        files.sort_by(|a, b| {
            a.as_os_str()
                .as_encoded_bytes()
                .cmp(b.as_os_str().as_encoded_bytes())
        });
    }
    (skills, descriptions)
}

impl Index {
    /// Scan the roots as `build_skills_system_prompt` does on a cold start.
    pub(crate) fn build(ctx: &Context, tools: &BTreeSet<&str>, toolsets: &BTreeSet<&str>) -> Index {
        let roots = Roots::load(ctx);
        let mut index = Index::default();
        if !roots.local.exists() && roots.external.is_empty() {
            return index;
        }
        let disabled = scan::disabled_names(ctx);
        let mut seen: BTreeSet<String> = BTreeSet::new();
        let mut roots_in_order = vec![(roots.local.clone(), true)];
        roots_in_order.extend(roots.external.iter().map(|r| (r.clone(), false)));
        for (root, local) in roots_in_order {
            if !local && !root.exists() {
                continue;
            }
            if !local {
                seen.extend(index.by_category.values().flatten().map(|(n, _)| n.clone()));
            }
            let (paths, descriptions) = index_files(&root, &roots.trusted);
            let read = scan::skill_files(&paths, &roots.trusted);
            for (path, read) in paths.into_iter().zip(read) {
                let (compatible, fm, desc) = parse_skill_file(ctx, &path, read);
                if !compatible {
                    continue;
                }
                let (skill, category, name) = entry(&path, &root, &fm);
                if (!local && seen.contains(&name))
                    || disabled.contains(&name)
                    || disabled.contains(&skill)
                    || !should_show(&fm, tools, toolsets)
                {
                    continue;
                }
                if !local {
                    seen.insert(name.clone());
                }
                index
                    .by_category
                    .entry(category)
                    .or_default()
                    .push((name, desc));
            }
            index.read_descriptions(&root, &descriptions, &roots.trusted, local);
        }
        index
    }

    /// The `DESCRIPTION.md` of each category under `root` (`paths`); an
    /// external root's never replaces one already read.
    fn read_descriptions(
        &mut self,
        root: &Path,
        paths: &[PathBuf],
        trusted: &[PathBuf],
        local: bool,
    ) {
        for path in paths {
            let Ok(text) = scan::read_text(path, trusted) else {
                continue;
            };
            let (fm, _) = frontmatter::parse(&text);
            let Some(desc) = fm.get("description").filter(|v| truthy(v)) else {
                continue;
            };
            let rel = path.strip_prefix(root).unwrap_or(path);
            let parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            let category = if parts.len() > 1 {
                parts[..parts.len() - 1].join("/")
            } else {
                "general".to_string()
            };
            let desc = unquoted(desc);
            if local {
                self.descriptions.insert(category, desc);
            } else {
                self.descriptions.entry(category).or_insert(desc);
            }
        }
    }

    /// One category's lines: Hermes' full form, or its `[names only]` line.
    fn category_lines(&self, category: &str, names_only: bool) -> Vec<String> {
        let skills = &self.by_category[category];
        if names_only {
            let names: BTreeSet<&str> = skills.iter().map(|(n, _)| n.as_str()).collect();
            let names: Vec<&str> = names.into_iter().collect();
            return vec![format!("  {category} [names only]: {}", names.join(", "))];
        }
        let mut lines = vec![
            match self.descriptions.get(category).filter(|d| !d.is_empty()) {
                Some(d) => format!("  {category}: {d}"),
                None => format!("  {category}:"),
            },
        ];
        let mut sorted: Vec<&(String, String)> = skills.iter().collect();
        sorted.sort_by(|a, b| a.0.cmp(&b.0));
        let mut seen = BTreeSet::new();
        for (name, desc) in sorted {
            if !seen.insert(name) {
                continue;
            }
            lines.push(if desc.is_empty() {
                format!("    - {name}")
            } else {
                format!("    - {name}: {desc}")
            });
        }
        lines
    }

    /// The index with the categories in `demoted` as names only (Hermes'
    /// text when none is); empty when no skill is shown.
    pub(crate) fn render(&self, demoted: &BTreeSet<&str>) -> String {
        if self.by_category.is_empty() {
            return String::new();
        }
        let lines: Vec<String> = self
            .by_category
            .keys()
            .flat_map(|c| self.category_lines(c, demoted.contains(c.as_str())))
            .collect();
        let note = if demoted.is_empty() {
            ""
        } else {
            NAMES_ONLY_NOTE
        };
        format!("{HEAD}{}\n{TAIL}{note}", lines.join("\n"))
    }

    /// The index in at most `room` characters where it can be: categories
    /// demoted to names only, the largest savings first; every name stays.
    pub(crate) fn compact(&self, room: usize) -> String {
        let mut savings: Vec<(usize, &str)> = self
            .by_category
            .keys()
            .map(|c| {
                let size = |names_only| {
                    self.category_lines(c, names_only)
                        .iter()
                        .map(|l| py_len(l) + 1)
                        .sum::<usize>()
                };
                (size(false).saturating_sub(size(true)), c.as_str())
            })
            .collect();
        savings.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
        let mut demoted = BTreeSet::new();
        let mut text = self.render(&demoted);
        for (_, category) in savings {
            if py_len(&text) <= room {
                break;
            }
            demoted.insert(category);
            text = self.render(&demoted);
        }
        if py_len(&text) <= room {
            return text;
        }
        self.names_cut(room)
    }

    /// Names only, cut to `room` where even that is too long (thousands of
    /// skills): as many names as fit, then how many more there are.
    fn names_cut(&self, room: usize) -> String {
        let all: Vec<&str> = self.names().into_iter().collect();
        let frame = py_len(HEAD) + py_len(TAIL) + py_len(NAMES_ONLY_NOTE) + 80;
        let mut budget = room.saturating_sub(frame);
        let mut kept = Vec::new();
        for name in &all {
            let cost = py_len(name) + 2;
            if cost > budget {
                break;
            }
            budget -= cost;
            kept.push(*name);
        }
        format!(
            "{HEAD}  [names only]: {}\n  ... and {} more skills: skills_list lists them all\n{TAIL}{NAMES_ONLY_NOTE}",
            kept.join(", "),
            all.len() - kept.len()
        )
    }

    /// Every skill name shown, sorted.
    fn names(&self) -> BTreeSet<&str> {
        self.by_category
            .values()
            .flatten()
            .map(|(n, _)| n.as_str())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(skills: &[(&str, &str, &str)]) -> Index {
        let mut i = Index::default();
        for (c, n, d) in skills {
            i.by_category
                .entry(c.to_string())
                .or_default()
                .push((n.to_string(), d.to_string()));
        }
        i
    }

    #[test]
    fn renders_hermes_lines_and_demotes_to_fit() {
        let i = index(&[("b", "z", "last"), ("b", "y", ""), ("a", "x", "one")]);
        let full = i.render(&BTreeSet::new());
        assert!(
            full.contains("<available_skills>\n  a:\n    - x: one\n  b:\n    - y\n    - z: last\n</available_skills>"),
            "{full}"
        );
        assert!(!full.contains("[names only]"));
        assert_eq!(i.compact(usize::MAX), full);
        // Demoting `b` (long descriptions) saves the most.
        let long = "d".repeat(50);
        let mut rows = vec![("a", "x".to_string(), "one")];
        for k in 0..20 {
            rows.push(("b", format!("s{k:02}"), long.as_str()));
        }
        let rows: Vec<(&str, &str, &str)> =
            rows.iter().map(|(c, n, d)| (*c, n.as_str(), *d)).collect();
        let big = index(&rows);
        let full_big = big.render(&BTreeSet::new());
        let small = big.compact(py_len(&full_big) - 5);
        assert!(small.contains("  b [names only]: s00, s01,"), "{small}");
        assert!(small.contains("    - x: one"), "{small}");
        assert!(small.ends_with(NAMES_ONLY_NOTE));
        let cut = i.compact(0);
        assert!(cut.contains("... and 3 more skills"), "{cut}");
    }

    #[test]
    fn descriptions_and_conditions_like_hermes() {
        let fm = |y: &str| frontmatter::parse(&format!("---\n{y}\n---\n")).0;
        assert_eq!(description(&fm("description: ' \"quoted\" '")), "quoted");
        let long = "d".repeat(61);
        assert_eq!(
            description(&fm(&format!("description: {long}"))),
            format!("{}...", "d".repeat(57))
        );
        let tools: BTreeSet<&str> = ["web_search"].into();
        let sets: BTreeSet<&str> = ["web"].into();
        assert!(should_show(&fm("name: a"), &tools, &sets));
        assert!(!should_show(
            &fm("metadata: {hermes: {fallback_for_toolsets: [web]}}"),
            &tools,
            &sets
        ));
        assert!(!should_show(
            &fm("metadata: {hermes: {requires_tools: [terminal]}}"),
            &tools,
            &sets
        ));
        assert!(should_show(
            &fm("metadata: {hermes: {requires_toolsets: [web]}}"),
            &tools,
            &sets
        ));
        let (skill, cat, name) = entry(Path::new("/r/top/SKILL.md"), Path::new("/r"), &fm("x: 1"));
        assert_eq!(
            (skill.as_str(), cat.as_str(), name.as_str()),
            ("top", "top", "top")
        );
        let (_, cat, name) = entry(
            Path::new("/r/a/b/s/SKILL.md"),
            Path::new("/r"),
            &fm("name: nm"),
        );
        assert_eq!((cat.as_str(), name.as_str()), ("a/b", "nm"));
    }
}
