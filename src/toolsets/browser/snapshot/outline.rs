//! Accessibility-tree snapshots with element refs.
//!
//! Input: the nodes of `Accessibility.getFullAXTree` ([`AxNode`]). Output: an
//! outline, one element per line, Playwright/agent-browser style:
//!
//! ```text
//! - heading "Sign in" [level=1] [ref=e1]
//! - textbox "Email" [required] [ref=e2]: ada@example.com
//! - button "Submit" [ref=e3]
//! - text: Forgot your password?
//! ```
//!
//! Compact mode (default) drops purely structural containers (their children
//! move up) and keeps text, interactive elements, headings, images and named
//! landmarks. Full mode keeps the structure and link targets.
//!
//! Refs (`eN`) point at DOM backend node ids. Within one document an element
//! keeps its ref across snapshots; numbers are never reused in a server
//! process, so a ref from an earlier page can always be told apart (stale)
//! from one never issued (unknown).

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use serde::Deserialize;
use serde_json::Value;

/// Roles that always get a ref.
const INTERACTIVE: &[&str] = &[
    "button",
    "link",
    "textbox",
    "searchbox",
    "checkbox",
    "radio",
    "combobox",
    "listbox",
    "option",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "slider",
    "spinbutton",
    "switch",
    "tab",
    "treeitem",
    "DisclosureTriangle",
    "ColorWell",
    "Date",
    "DateTime",
    "InputTime",
    "scrollbar",
    "gridcell",
];

/// Roles kept in compact mode besides interactive ones.
const CONTENT: &[&str] = &[
    "heading",
    "img",
    "image",
    "figure",
    "iframe",
    "Iframe",
    "alert",
    "dialog",
    "alertdialog",
    "status",
];

/// Landmarks: kept in compact mode only when named.
const LANDMARKS: &[&str] = &[
    "navigation",
    "main",
    "form",
    "region",
    "banner",
    "contentinfo",
    "complementary",
    "search",
    "table",
    "list",
    "group",
    "tablist",
    "menu",
    "menubar",
    "radiogroup",
    "tree",
    "grid",
    "toolbar",
];

/// Roles never rendered (their children are): these and the [`INLINE`] ones.
const TRANSPARENT: &[&str] = &[
    "MenuListPopup",
    "LabelText",
    "Section",
    "Div",
    "GenericContainer",
    "RootWebArea",
    "WebArea",
    "LayoutTable",
    "LayoutTableRow",
    "LayoutTableCell",
    "Pre",
    "Unknown",
];

/// Transparent roles that are inline: their text runs on with the neighbours'.
const INLINE: &[&str] = &[
    "generic",
    "none",
    "presentation",
    "Span",
    "Abbr",
    "time",
    "mark",
    "emphasis",
    "strong",
    "code",
    "subscript",
    "superscript",
    "insertion",
    "deletion",
    "ruby",
];

/// Fields whose text children only repeat their value.
const VALUE_FIELDS: &[&str] = &["textbox", "searchbox", "combobox", "spinbutton", "slider"];

/// Roles dropped with their subtree.
const DROPPED: &[&str] = &["InlineTextBox", "ListMarker", "LineBreak"];

#[derive(Debug, Clone)]
pub(crate) struct RefEntry {
    pub(crate) backend: i64,
    pub(crate) role: String,
    pub(crate) name: String,
}

/// Ref bookkeeping for one browser tab.
#[derive(Debug, Default)]
pub(crate) struct RefTable {
    /// The document generation the entries belong to.
    pub(crate) doc_gen: u64,
    by_backend: HashMap<i64, u32>,
    entries: HashMap<u32, RefEntry>,
    /// Refs shown by the latest snapshot, in order.
    pub(crate) latest: Vec<u32>,
    next: u32,
    snapshots: u64,
}

/// Why a ref cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum RefError {
    #[error(
        "No element refs yet: call browser_navigate or browser_snapshot first, then use a ref like @e1 from its output."
    )]
    NoSnapshot,
    #[error("'{0}' is not an element ref: use a ref from the snapshot such as @e5 (or e5).")]
    Malformed(String),
    #[error(
        "Ref {0} is stale: the page changed (navigated or reloaded) since the snapshot that issued it. Call browser_snapshot to get fresh refs."
    )]
    Stale(String),
    #[error(
        "Unknown ref {0}: the latest snapshot issued {1}. Call browser_snapshot to get current refs."
    )]
    Unknown(String, String),
}

/// `@e5`, `e5`, `ref=e5`, `[ref=e5]` → 5.
pub(crate) fn parse_ref(raw: &str) -> Option<u32> {
    let s = raw.trim().trim_start_matches('[').trim_end_matches(']');
    let s = s.strip_prefix("ref=").unwrap_or(s);
    let s = s.strip_prefix('@').unwrap_or(s);
    let s = s.strip_prefix('e').or_else(|| s.strip_prefix('E'))?;
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok().filter(|n| *n > 0)
}

impl RefTable {
    fn reset_for(&mut self, doc_gen: u64) {
        if self.doc_gen != doc_gen {
            self.doc_gen = doc_gen;
            self.by_backend.clear();
            self.entries.clear();
            self.latest.clear();
        }
    }

    fn assign(&mut self, backend: i64, role: &str, name: &str) -> u32 {
        let n = match self.by_backend.get(&backend) {
            Some(n) => *n,
            None => {
                self.next += 1;
                self.by_backend.insert(backend, self.next);
                self.next
            }
        };
        self.entries.insert(
            n,
            RefEntry {
                backend,
                role: role.to_string(),
                name: name.to_string(),
            },
        );
        self.latest.push(n);
        n
    }

    /// The tab was replaced: every issued ref is stale.
    pub(crate) fn invalidate(&mut self) {
        self.doc_gen = u64::MAX;
    }

    /// Resolve a ref for the current document generation.
    pub(crate) fn resolve(&self, raw: &str, doc_gen: u64) -> Result<(u32, RefEntry), RefError> {
        let Some(n) = parse_ref(raw) else {
            return Err(RefError::Malformed(raw.to_string()));
        };
        let shown = format!("@e{n}");
        if self.snapshots == 0 {
            return Err(RefError::NoSnapshot);
        }
        if let Some(e) = self.entries.get(&n) {
            if self.doc_gen == doc_gen {
                return Ok((n, e.clone()));
            }
            return Err(RefError::Stale(shown));
        }
        if n <= self.next {
            return Err(RefError::Stale(shown));
        }
        let range = match (self.latest.iter().min(), self.latest.iter().max()) {
            (Some(a), Some(b)) if a == b => format!("only @e{a}"),
            (Some(a), Some(b)) => format!("refs between @e{a} and @e{b}"),
            _ => "no refs (the page has no elements to act on)".into(),
        };
        Err(RefError::Unknown(shown, range))
    }

    /// Refs of the latest snapshot with their entries (for annotations).
    pub(crate) fn latest_entries(&self) -> Vec<(u32, RefEntry)> {
        self.latest
            .iter()
            .filter_map(|n| self.entries.get(n).map(|e| (*n, e.clone())))
            .collect()
    }
}

/// One node of `Accessibility.getFullAXTree` (CDP's `Accessibility.AXNode`),
/// read leniently: our own structs with string names, so that a role or
/// property Chromium adds later is just another string (typed enums
/// generated from the protocol would reject unknown values).
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct AxNode {
    node_id: Option<String>,
    ignored: bool,
    role: Option<AxValue>,
    name: Option<AxValue>,
    value: Option<AxValue>,
    properties: Vec<AxProperty>,
    child_ids: Vec<String>,
    #[serde(rename = "backendDOMNodeId")]
    backend_dom_node_id: Option<i64>,
}

impl AxNode {
    /// A node built in this process (the DOM walk's, see `domsnap.rs`)
    /// rather than read from `Accessibility.getFullAXTree`.
    pub(super) fn built(
        node_id: String,
        role: &str,
        name: &str,
        value: Option<&str>,
        properties: Vec<(&'static str, Value)>,
        child_ids: Vec<String>,
        backend: Option<i64>,
    ) -> Self {
        let ax = |v: Value| Some(AxValue { value: Some(v) });
        AxNode {
            node_id: Some(node_id),
            ignored: false,
            role: ax(Value::String(role.to_string())),
            name: ax(Value::String(name.to_string())),
            value: value.and_then(|v| ax(Value::String(v.to_string()))),
            properties: properties
                .into_iter()
                .map(|(name, v)| AxProperty {
                    name: name.to_string(),
                    value: ax(v),
                })
                .collect(),
            child_ids,
            backend_dom_node_id: backend,
        }
    }
}

/// `Accessibility.AXValue`: only its `value` is read.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct AxValue {
    value: Option<Value>,
}

/// `Accessibility.AXProperty`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct AxProperty {
    name: String,
    value: Option<AxValue>,
}

struct Node<'a> {
    role: &'a str,
    name: String,
    value: String,
    ignored: bool,
    backend: Option<i64>,
    props: Vec<(&'a str, Option<&'a Value>)>,
    children: Vec<usize>,
}

fn ax_inner(v: Option<&AxValue>) -> Option<&Value> {
    v.and_then(|x| x.value.as_ref())
}

fn ax_str(v: Option<&AxValue>) -> String {
    match ax_inner(v) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::Bool(b)) => b.to_string(),
        _ => String::new(),
    }
}

fn norm_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A rendered child: text or element lines.
enum Item {
    /// Text; `true` once its block ended (never merged with neighbours).
    Text(String, bool),
    /// Rendered element lines and the element's accessible name.
    Lines(String, String),
}

pub(crate) struct Snapshot {
    pub(crate) text: String,
    pub(crate) element_count: usize,
}

struct Renderer<'a, 'r> {
    nodes: Vec<Node<'a>>,
    refs: &'r mut RefTable,
    full: bool,
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

impl Renderer<'_, '_> {
    fn prop(&self, i: usize, name: &str) -> Option<&Value> {
        self.nodes[i]
            .props
            .iter()
            .find(|(n, _)| *n == name)
            .and_then(|(_, v)| *v)
    }

    fn states(&self, i: usize) -> String {
        let mut s = String::new();
        let truthy = |v: Option<&Value>| matches!(v, Some(Value::Bool(true)));
        if let Some(l) = self.prop(i, "level").and_then(|v| v.as_i64())
            && self.nodes[i].role == "heading"
        {
            let _ = write!(s, " [level={l}]");
        }
        match self.prop(i, "checked") {
            Some(Value::String(v)) if v == "true" => s.push_str(" [checked]"),
            Some(Value::String(v)) if v == "mixed" => s.push_str(" [checked=mixed]"),
            Some(Value::Bool(true)) => s.push_str(" [checked]"),
            _ => {}
        }
        match self.prop(i, "pressed") {
            Some(Value::String(v)) if v == "true" => s.push_str(" [pressed]"),
            Some(Value::Bool(true)) => s.push_str(" [pressed]"),
            _ => {}
        }
        if truthy(self.prop(i, "selected")) {
            s.push_str(" [selected]");
        }
        if let Some(Value::Bool(b)) = self.prop(i, "expanded") {
            s.push_str(if *b { " [expanded]" } else { " [collapsed]" });
        }
        if truthy(self.prop(i, "disabled")) {
            s.push_str(" [disabled]");
        }
        if truthy(self.prop(i, "required")) {
            s.push_str(" [required]");
        }
        if truthy(self.prop(i, "readonly")) && INTERACTIVE.contains(&self.nodes[i].role) {
            s.push_str(" [readonly]");
        }
        if truthy(self.prop(i, "focused")) {
            s.push_str(" [focused]");
        }
        if self.full
            && self.nodes[i].role == "link"
            && let Some(Value::String(u)) = self.prop(i, "url")
        {
            let _ = write!(s, " [url={u}]");
        }
        s
    }

    fn render(&mut self, i: usize, depth: usize, out: &mut Vec<Item>) {
        let role = self.nodes[i].role;
        if DROPPED.contains(&role) {
            return;
        }
        if role == "StaticText" {
            let t = norm_ws(&self.nodes[i].name);
            if !t.is_empty() {
                out.push(Item::Text(t, false));
            }
            return;
        }
        if !self.keeps(i) {
            self.pass_through(i, depth, out);
            return;
        }
        let name = norm_ws(&self.nodes[i].name);
        let shown_role = match role {
            "image" => "img",
            "Iframe" => "iframe",
            r => r,
        };
        // Refs in document order: the element before its children.
        let ref_n = self.nodes[i]
            .backend
            .map(|b| self.refs.assign(b, shown_role, &name));
        // Children (one level deeper), to decide what to show.
        let mut kids: Vec<Item> = Vec::new();
        for c in self.nodes[i].children.clone() {
            self.render(c, depth + 1, &mut kids);
        }
        if self.only_repeats(i, &name, &kids) {
            kids.clear();
        }
        let line = self.element_line(i, depth, shown_role, &name, ref_n, kids);
        out.push(Item::Lines(line, name));
    }

    fn named(&self, i: usize) -> bool {
        !self.nodes[i].name.trim().is_empty()
    }

    /// Whether node `i` gets a line of its own: not ignored or a mere
    /// wrapper, and (in a compact snapshot) interactive, content, a named
    /// landmark or a dialog.
    fn keeps(&self, i: usize) -> bool {
        let n = &self.nodes[i];
        let role = n.role;
        let transparent =
            n.ignored || TRANSPARENT.contains(&role) || INLINE.contains(&role) || role.is_empty();
        !transparent
            && (self.full
                || INTERACTIVE.contains(&role)
                || CONTENT.contains(&role)
                || (self.named(i) && LANDMARKS.contains(&role))
                || role == "dialog")
    }

    /// A node without a line: its children's items in its place. Inline
    /// wrappers pass text through; a block (paragraph, label, list item,
    /// ...) ends its text so that it is not run together with the next
    /// block's.
    fn pass_through(&mut self, i: usize, depth: usize, out: &mut Vec<Item>) {
        let role = self.nodes[i].role;
        let inline = self.nodes[i].ignored || INLINE.contains(&role) || role.is_empty();
        let children = self.nodes[i].children.clone();
        if inline {
            for c in children {
                self.render(c, depth, out);
            }
            return;
        }
        let mut local = Vec::new();
        for c in children {
            self.render(c, depth, &mut local);
        }
        for it in merge_text(local) {
            out.push(match it {
                Item::Text(t, _) => Item::Text(t, true),
                other => other,
            });
        }
    }

    /// The children are only text that repeats the element's name or value
    /// (link text, a button label), or the element is a value field: they
    /// add nothing to its line.
    fn only_repeats(&self, i: usize, name: &str, kids: &[Item]) -> bool {
        if !kids.iter().all(|k| matches!(k, Item::Text(..))) {
            return false;
        }
        let joined: String = kids
            .iter()
            .filter_map(|k| match k {
                Item::Text(t, _) => Some(t.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join(" ");
        let value = norm_ws(&self.nodes[i].value);
        joined.is_empty()
            || (self.named(i) && (name.contains(&joined) || joined == name))
            || (!value.is_empty() && (value.contains(&joined) || joined.contains(&value)))
            || VALUE_FIELDS.contains(&self.nodes[i].role)
    }

    /// The element's line (`- role "name" [states] [ref=eN]: text or
    /// value`) and its children's lines below it.
    fn element_line(
        &self,
        i: usize,
        depth: usize,
        shown_role: &str,
        name: &str,
        ref_n: Option<u32>,
        mut kids: Vec<Item>,
    ) -> String {
        let value = norm_ws(&self.nodes[i].value);
        let mut line = String::new();
        let indent = "  ".repeat(depth);
        let _ = write!(line, "{indent}- {shown_role}");
        if self.named(i) {
            let _ = write!(line, " {}", quote(name));
        }
        line.push_str(&self.states(i));
        if let Some(n) = ref_n {
            let _ = write!(line, " [ref=e{n}]");
        }
        // A single text child goes on the element's line.
        if kids.len() == 1
            && let Item::Text(t, _) = &kids[0]
            && value.is_empty()
        {
            let _ = write!(line, ": {t}");
            kids.clear();
        } else if !value.is_empty() && value != name {
            let _ = write!(line, ": {}", quote(&value));
        }
        if !kids.is_empty() {
            line.push(':');
        }
        line.push('\n');
        let kid_indent = "  ".repeat(depth + 1);
        for k in merge_text(kids) {
            match k {
                Item::Text(t, _) => {
                    let _ = writeln!(line, "{kid_indent}- text: {t}");
                }
                Item::Lines(l, _) => line.push_str(&l),
            }
        }
        line
    }
}

/// Adjacent text items become one.
/// A label's text right before the element it names is dropped.
fn merge_text(items: Vec<Item>) -> Vec<Item> {
    let mut out: Vec<Item> = Vec::with_capacity(items.len());
    for it in items {
        if let Item::Lines(_, name) = &it
            && !name.is_empty()
            && matches!(out.last(), Some(Item::Text(t, _)) if t == name)
        {
            out.pop();
        }
        match (out.last_mut(), it) {
            (Some(Item::Text(prev, false)), Item::Text(t, false)) => {
                prev.push(' ');
                prev.push_str(&t);
            }
            (_, it) => out.push(it),
        }
    }
    out
}

/// Render `Accessibility.getFullAXTree`'s `nodes`, assigning refs in `refs`
/// for document generation `doc_gen`.
pub(crate) fn render(ax: &[AxNode], refs: &mut RefTable, doc_gen: u64, full: bool) -> Snapshot {
    refs.reset_for(doc_gen);
    refs.latest.clear();
    refs.snapshots += 1;
    let mut index: HashMap<&str, usize> = HashMap::with_capacity(ax.len());
    let mut nodes: Vec<Node> = Vec::with_capacity(ax.len());
    for (i, n) in ax.iter().enumerate() {
        if let Some(id) = &n.node_id {
            index.insert(id, i);
        }
        let role = ax_inner(n.role.as_ref())
            .and_then(|v| v.as_str())
            .unwrap_or("");
        let props = n
            .properties
            .iter()
            .filter(|p| p.value.is_some())
            .map(|p| (p.name.as_str(), ax_inner(p.value.as_ref())))
            .collect();
        nodes.push(Node {
            role,
            name: ax_str(n.name.as_ref()),
            value: ax_str(n.value.as_ref()),
            ignored: n.ignored,
            backend: n.backend_dom_node_id,
            props,
            children: Vec::new(),
        });
    }
    let mut has_parent: HashSet<usize> = HashSet::new();
    for (i, n) in ax.iter().enumerate() {
        let kids: Vec<usize> = n
            .child_ids
            .iter()
            .filter_map(|c| index.get(c.as_str()).copied())
            .collect();
        has_parent.extend(kids.iter().copied());
        nodes[i].children = kids;
    }
    let roots: Vec<usize> = (0..nodes.len())
        .filter(|i| !has_parent.contains(i))
        .collect();
    let mut r = Renderer { nodes, refs, full };
    let mut items = Vec::new();
    for root in roots {
        r.render(root, 0, &mut items);
    }
    let mut text = String::new();
    for it in merge_text(items) {
        match it {
            Item::Text(t, _) => {
                let _ = writeln!(text, "- text: {t}");
            }
            Item::Lines(l, _) => text.push_str(&l),
        }
    }
    while text.ends_with('\n') {
        text.pop();
    }
    let element_count = r.refs.latest.len();
    Snapshot {
        text,
        element_count,
    }
}

/// Hermes' `_truncate_snapshot` (hermes-agent: tools/browser_tool.py): cut at a line boundary so that the result
/// (with its note) stays within `max_chars`; `stored` is where the full text
/// was saved.
pub(crate) fn truncate(text: &str, max_chars: usize, stored: Option<&str>) -> String {
    if text.chars().count() <= max_chars {
        return text.to_string();
    }
    let lines: Vec<&str> = text.split('\n').collect();
    let reserve = (110 + stored.map(|s| s.chars().count()).unwrap_or(0)).min(max_chars / 2);
    let mut out: Vec<String> = Vec::new();
    let mut chars = 0usize;
    for line in &lines {
        let n = line.chars().count();
        if chars + n + 1 > max_chars - reserve {
            break;
        }
        out.push(line.to_string());
        chars += n + 1;
    }
    let remaining = lines.len() - out.len();
    if remaining > 0 {
        match stored {
            Some(p) => out.push(format!(
                "\n[... {remaining} more lines truncated — full snapshot: read_file path=\"{p}\" offset={} limit=200]",
                out.len() + 1
            )),
            None => out.push(format!(
                "\n[... {remaining} more lines truncated, use browser_snapshot for full content]"
            )),
        }
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tree() -> Vec<AxNode> {
        serde_json::from_value(json!([
            {"nodeId":"1","ignored":false,"role":{"value":"RootWebArea"},"name":{"value":"T"},"childIds":["2","3","5","7"],"backendDOMNodeId":1},
            {"nodeId":"2","ignored":false,"role":{"value":"heading"},"name":{"value":"Hello"},"properties":[{"name":"level","value":{"type":"integer","value":1}}],"childIds":["20"],"backendDOMNodeId":10},
            {"nodeId":"20","ignored":false,"role":{"value":"StaticText"},"name":{"value":"Hello"},"childIds":[],"backendDOMNodeId":11},
            {"nodeId":"3","ignored":false,"role":{"value":"generic"},"name":{"value":""},"childIds":["4"],"backendDOMNodeId":12},
            {"nodeId":"4","ignored":false,"role":{"value":"textbox"},"name":{"value":"Email"},"value":{"value":"a@b"},"properties":[{"name":"required","value":{"value":true}}],"childIds":[],"backendDOMNodeId":13},
            {"nodeId":"5","ignored":false,"role":{"value":"paragraph"},"name":{"value":""},"childIds":["6"],"backendDOMNodeId":14},
            {"nodeId":"6","ignored":false,"role":{"value":"StaticText"},"name":{"value":"Some  text"},"childIds":[],"backendDOMNodeId":15},
            {"nodeId":"7","ignored":false,"role":{"value":"button"},"name":{"value":"Go"},"childIds":[],"backendDOMNodeId":16},
        ]))
        .unwrap()
    }

    #[test]
    fn compact_and_full_render_with_refs() {
        let mut refs = RefTable::default();
        let s = render(&tree(), &mut refs, 1, false);
        assert_eq!(
            s.text,
            "- heading \"Hello\" [level=1] [ref=e1]\n- textbox \"Email\" [required] [ref=e2]: \"a@b\"\n- text: Some text\n- button \"Go\" [ref=e3]"
        );
        assert_eq!(s.element_count, 3);
        // Same document: the same elements keep their refs.
        let f = render(&tree(), &mut refs, 1, true);
        assert!(
            f.text.contains("- paragraph [ref=e4]: Some text"),
            "{}",
            f.text
        );
        assert!(f.text.contains("button \"Go\" [ref=e3]"));
        assert_eq!(refs.resolve("@e2", 1).unwrap().1.backend, 13);
        assert_eq!(refs.resolve("e2", 1).unwrap().1.backend, 13);
        // Navigation: old refs are stale, never-issued ones unknown.
        assert!(matches!(refs.resolve("@e2", 2), Err(RefError::Stale(_))));
        let s2 = render(&tree(), &mut refs, 2, false);
        assert!(s2.text.contains("[ref=e5]"), "{}", s2.text);
        assert!(matches!(refs.resolve("@e2", 2), Err(RefError::Stale(_))));
        assert!(matches!(
            refs.resolve("@e99", 2),
            Err(RefError::Unknown(..))
        ));
        assert!(matches!(
            refs.resolve("bogus", 2),
            Err(RefError::Malformed(_))
        ));
    }

    #[test]
    fn parse_refs() {
        assert_eq!(parse_ref("@e5"), Some(5));
        assert_eq!(parse_ref("e12"), Some(12));
        assert_eq!(parse_ref("[ref=e3]"), Some(3));
        assert_eq!(parse_ref("@x5"), None);
        assert_eq!(parse_ref("e0"), None);
    }

    #[test]
    fn truncate_at_line_boundary_with_note() {
        let text: String = (0..2000).map(|i| format!("- text: line {i}\n")).collect();
        let t = truncate(&text, 15000, Some("/x/cache/snap.txt"));
        assert!(t.chars().count() <= 15000);
        assert!(t.contains(
            "more lines truncated — full snapshot: read_file path=\"/x/cache/snap.txt\" offset="
        ));
        let body = t.split("\n\n[...").next().unwrap();
        assert!(body.lines().all(|l| l.starts_with("- text: line ")));
        assert_eq!(truncate("short", 15000, None), "short");
    }
}
