//! The text lines `tools` and `doctor` print for tools: one per tool, except
//! that a toolset's tools sharing a name prefix (the nine `kanban_*`, the
//! eleven `browser_*`) make one line, `kanban_* (9 tools)`, so the same
//! reason is not printed nine times. `--json` keeps one entry per tool.

/// One tool as printed: `None` is available, `Some(reason)` unavailable.
#[derive(Debug, Clone)]
pub struct ToolRow<'a> {
    pub name: &'a str,
    pub toolset: &'a str,
    pub unavailable: Option<&'a str>,
}

/// One printed line: who (a tool, `kanban_* (9 tools)` or a list of names),
/// its toolset, and its status (`available`, `unavailable: why`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub label: String,
    pub toolset: String,
    pub status: String,
    /// More than one tool (the label names them; the toolset adds nothing).
    pub grouped: bool,
}

impl Line {
    /// `name (toolset): why` for a list of unavailable tools; a group
    /// (`kanban_* (9 tools): why`) leaves out its toolset.
    pub fn unavailable_text(&self) -> String {
        let why = self
            .status
            .strip_prefix("unavailable: ")
            .unwrap_or(&self.status);
        if self.grouped {
            format!("{}: {why}", self.label)
        } else {
            format!("{} ({}): {why}", self.label, self.toolset)
        }
    }
}

/// Fewest tools that make a group.
const GROUP_MIN: usize = 3;

/// Group `rows` (in order). `all` is every tool name the caller knows of, so
/// a group that holds all of a prefix's tools is labelled `prefix* (n tools)`
/// and a part of them by their names.
pub fn group(rows: &[ToolRow<'_>], all: &[&str]) -> Vec<Line> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(first) = rows.get(i) {
        let prefix = prefix(first.name);
        let len = rows
            .get(i..)
            .unwrap_or_default()
            .iter()
            .take_while(|r| {
                r.toolset == first.toolset && prefix.is_some_and(|p| r.name.starts_with(p))
            })
            .count();
        match (prefix, rows.get(i..i + len)) {
            (Some(p), Some(run)) if len >= GROUP_MIN => {
                let total = all.iter().filter(|n| n.starts_with(p)).count();
                out.push(grouped(p, run, total));
                i += len;
            }
            _ => {
                out.push(Line {
                    label: first.name.to_string(),
                    toolset: first.toolset.to_string(),
                    status: status(first.unavailable),
                    grouped: false,
                });
                i += 1;
            }
        }
    }
    out
}

/// `kanban_` of `kanban_show`.
fn prefix(name: &str) -> Option<&str> {
    name.find('_').and_then(|i| name.get(..=i))
}

fn status(unavailable: Option<&str>) -> String {
    match unavailable {
        None => "available".into(),
        Some(r) => format!("unavailable: {r}"),
    }
}

/// One line for `run`: its most common status, then each other status with
/// the tools it applies to. A reason naming its own tool says "this tool".
fn grouped(prefix: &str, run: &[ToolRow<'_>], total: usize) -> Line {
    // All unavailable: say it once, in front.
    let all_out = run.iter().all(|r| r.unavailable.is_some());
    let mut statuses: Vec<(String, Vec<&str>)> = Vec::new();
    for r in run {
        let s = match r.unavailable {
            Some(why) if all_out => why.to_string(),
            other => status(other),
        };
        let s = s.replace(r.name, "this tool");
        match statuses.iter_mut().find(|(t, _)| *t == s) {
            Some((_, names)) => names.push(r.name),
            None => statuses.push((s, vec![r.name])),
        }
    }
    // Stable: the first of equally common statuses leads.
    let lead = statuses
        .iter()
        .enumerate()
        .max_by_key(|(i, (_, names))| (names.len(), std::cmp::Reverse(*i)))
        .map_or(0, |(i, _)| i);
    let (main, _) = statuses.remove(lead);
    let mut text = if all_out {
        format!("unavailable: {main}")
    } else {
        main
    };
    for (s, names) in statuses {
        text.push_str(&format!(" — except {}: {s}", names.join(", ")));
    }
    let label = if run.len() == total {
        format!("{prefix}* ({} tools)", run.len())
    } else {
        run.iter().map(|r| r.name).collect::<Vec<_>>().join(", ")
    };
    Line {
        label,
        toolset: run
            .first()
            .map(|r| r.toolset.to_string())
            .unwrap_or_default(),
        status: text,
        grouped: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row<'a>(name: &'a str, ts: &'a str, r: Option<&'a str>) -> ToolRow<'a> {
        ToolRow {
            name,
            toolset: ts,
            unavailable: r,
        }
    }

    #[test]
    fn a_prefix_group_is_one_line() {
        let add = Some("add kanban to toolsets");
        let rows = [
            row("web_search", "web", None),
            row("web_extract", "web", None),
            row("kanban_show", "kanban", add),
            row("kanban_list", "kanban", add),
            row(
                "kanban_create",
                "kanban",
                Some("kanban_create is orchestrator-only"),
            ),
            row(
                "kanban_link",
                "kanban",
                Some("kanban_link is orchestrator-only"),
            ),
            row("kanban_block", "kanban", add),
            row("memory", "memory", None),
        ];
        let all: Vec<&str> = rows.iter().map(|r| r.name).collect();
        let lines = group(&rows, &all);
        let labels: Vec<&str> = lines.iter().map(|l| l.label.as_str()).collect();
        assert_eq!(
            labels,
            ["web_search", "web_extract", "kanban_* (5 tools)", "memory"]
        );
        assert_eq!(
            lines[2].status,
            "unavailable: add kanban to toolsets — except kanban_create, kanban_link: this tool is orchestrator-only"
        );
        assert_eq!(
            lines[2].unavailable_text(),
            "kanban_* (5 tools): add kanban to toolsets — except kanban_create, kanban_link: this tool is orchestrator-only"
        );
        assert_eq!(lines[0].unavailable_text(), "web_search (web): available");
        // Available and not: each status says which.
        let mixed = [
            row("kanban_show", "kanban", None),
            row("kanban_list", "kanban", None),
            row(
                "kanban_create",
                "kanban",
                Some("kanban_create is orchestrator-only"),
            ),
        ];
        assert_eq!(
            group(&mixed, &all)[0].status,
            "available — except kanban_create: unavailable: this tool is orchestrator-only"
        );
        // Part of a prefix's tools: named, not `kanban_*`.
        let part = group(&rows[2..5], &all);
        assert_eq!(part[0].label, "kanban_show, kanban_list, kanban_create");
        // Two are not a group.
        assert_eq!(group(&rows[2..4], &all).len(), 2);
    }
}
