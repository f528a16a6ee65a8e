//! Page outlines with element refs.
//!
//! Input: the page's elements and text runs with their accessibility roles,
//! names and states ([`Node`], from the DOM walk of `domsnap.rs`). Output:
//! an outline, one element per line, Playwright/agent-browser style:
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
//! Refs (`eN`) point at the walk's element ids. Within one document an element
//! keeps its ref across snapshots; numbers are never reused in a server
//! process, so a ref from an earlier page can always be told apart (stale)
//! from one never issued (unknown).

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write as _;

use serde::Deserialize;

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
        // The same element usually keeps its role and name: no new strings.
        let same = self
            .entries
            .get(&n)
            .is_some_and(|e| e.role == role && e.name == name);
        if !same {
            self.entries.insert(
                n,
                RefEntry {
                    backend,
                    role: role.to_string(),
                    name: name.to_string(),
                },
            );
        }
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

/// One node of an outline: an element or a text run (role `StaticText`,
/// its text in `name`) as the DOM walk reports it (see `domsnap.rs`),
/// borrowed from the walk; children are indexes into the same list, whose
/// first node is the page.
#[derive(Debug, Default)]
pub(crate) struct Node<'a> {
    /// Chromium's AX role name.
    pub(crate) role: &'a str,
    pub(crate) name: &'a str,
    pub(crate) value: &'a str,
    /// The [`RefTable`] key (absent for text and synthetic nodes).
    pub(crate) backend: Option<i64>,
    /// None: no state to show.
    pub(crate) states: Option<&'a States>,
    pub(crate) children: Vec<usize>,
}

/// An element's states, as the walk reports them (its `p`, see
/// `domsnap.rs`), in the accessibility tree's terms: `checked` and `pressed`
/// are `"true"`, `"false"` or `"mixed"`.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct States {
    pub(crate) level: Option<i64>,
    pub(crate) checked: Option<String>,
    pub(crate) pressed: Option<String>,
    pub(crate) selected: Option<bool>,
    pub(crate) expanded: Option<bool>,
    #[serde(default)]
    pub(crate) disabled: bool,
    #[serde(default)]
    pub(crate) required: bool,
    #[serde(default)]
    pub(crate) readonly: bool,
    #[serde(default)]
    pub(crate) focused: bool,
    pub(crate) url: Option<String>,
}

/// What a role is for the outline: bits of the role lists above, looked up
/// once per node.
#[derive(Clone, Copy)]
struct Class(u8);

impl Class {
    const INTERACTIVE: u8 = 1;
    const CONTENT: u8 = 2;
    const LANDMARK: u8 = 4;
    const TRANSPARENT: u8 = 8;
    const INLINE: u8 = 16;
    const VALUE_FIELD: u8 = 32;
    const DROPPED: u8 = 64;

    fn of(role: &str) -> Class {
        let lists: [(&[&str], u8); 7] = [
            (INTERACTIVE, Self::INTERACTIVE),
            (CONTENT, Self::CONTENT),
            (LANDMARKS, Self::LANDMARK),
            (TRANSPARENT, Self::TRANSPARENT),
            (INLINE, Self::INLINE),
            (VALUE_FIELDS, Self::VALUE_FIELD),
            (DROPPED, Self::DROPPED),
        ];
        Class(
            lists
                .iter()
                .filter(|(l, _)| l.contains(&role))
                .fold(0, |acc, (_, bit)| acc | bit),
        )
    }

    fn is(self, bit: u8) -> bool {
        self.0 & bit != 0
    }
}

/// Runs of whitespace become one space, the ends are trimmed; borrowed
/// when the text is already so.
fn norm_ws(s: &str) -> Cow<'_, str> {
    // Already so: no whitespace but single spaces between words.
    let mut prev = ' ';
    let normal = s.chars().all(|c| {
        let ok = !c.is_whitespace() || (c == ' ' && prev != ' ');
        prev = c;
        ok
    }) && (s.is_empty() || prev != ' ');
    if normal {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(s.split_whitespace().collect::<Vec<_>>().join(" "))
    }
}

/// A rendered child: text or element lines.
enum Item<'a> {
    /// Text; `true` once its block ended (never merged with neighbours).
    Text(Cow<'a, str>, bool),
    /// Rendered element lines and the element's accessible name.
    Lines(String, Cow<'a, str>),
}

pub(crate) struct Snapshot {
    pub(crate) text: String,
    pub(crate) element_count: usize,
}

struct Renderer<'n, 'a, 'r> {
    nodes: &'n [Node<'a>],
    class: Vec<Class>,
    refs: &'r mut RefTable,
    full: bool,
}

/// `s` as a JSON string, as `serde_json` writes it.
fn push_quoted(out: &mut String, s: &str) {
    out.push('"');
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        let esc = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if esc.is_empty() {
            let _ = write!(out, "\\u{:04x}", b);
        } else {
            out.push_str(esc);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

fn push_indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str("  ");
    }
}

impl<'a> Renderer<'_, 'a, '_> {
    fn push_states(&self, i: usize, s: &mut String) {
        let n = &self.nodes[i];
        let Some(st) = n.states else {
            return;
        };
        if let Some(l) = st.level
            && n.role == "heading"
        {
            let _ = write!(s, " [level={l}]");
        }
        match st.checked.as_deref() {
            Some("true") => s.push_str(" [checked]"),
            Some("mixed") => s.push_str(" [checked=mixed]"),
            _ => {}
        }
        if st.pressed.as_deref() == Some("true") {
            s.push_str(" [pressed]");
        }
        if st.selected == Some(true) {
            s.push_str(" [selected]");
        }
        if let Some(b) = st.expanded {
            s.push_str(if b { " [expanded]" } else { " [collapsed]" });
        }
        if st.disabled {
            s.push_str(" [disabled]");
        }
        if st.required {
            s.push_str(" [required]");
        }
        if st.readonly && self.class[i].is(Class::INTERACTIVE) {
            s.push_str(" [readonly]");
        }
        if st.focused {
            s.push_str(" [focused]");
        }
        if self.full
            && n.role == "link"
            && let Some(u) = &st.url
        {
            let _ = write!(s, " [url={u}]");
        }
    }

    fn render(&mut self, i: usize, depth: usize, out: &mut Vec<Item<'a>>) {
        let nodes = self.nodes;
        let role = nodes[i].role;
        if self.class[i].is(Class::DROPPED) {
            return;
        }
        if role == "StaticText" {
            let t = norm_ws(nodes[i].name);
            if !t.is_empty() {
                out.push(Item::Text(t, false));
            }
            return;
        }
        if !self.keeps(i) {
            self.pass_through(i, depth, out);
            return;
        }
        let name = norm_ws(nodes[i].name);
        let shown_role = match role {
            "image" => "img",
            "Iframe" => "iframe",
            r => r,
        };
        // Refs in document order: the element before its children.
        let ref_n = nodes[i]
            .backend
            .map(|b| self.refs.assign(b, shown_role, &name));
        // Children (one level deeper), to decide what to show.
        let mut kids: Vec<Item<'a>> = Vec::new();
        for &c in &nodes[i].children {
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

    /// Whether node `i` gets a line of its own: not a mere wrapper, and (in
    /// a compact snapshot) interactive, content, a named landmark or a
    /// dialog.
    fn keeps(&self, i: usize) -> bool {
        let role = self.nodes[i].role;
        let c = self.class[i];
        let transparent = c.is(Class::TRANSPARENT) || c.is(Class::INLINE) || role.is_empty();
        !transparent
            && (self.full
                || c.is(Class::INTERACTIVE)
                || c.is(Class::CONTENT)
                || (self.named(i) && c.is(Class::LANDMARK))
                || role == "dialog")
    }

    /// A node without a line: its children's items in its place. Inline
    /// wrappers pass text through; a block (paragraph, label, list item,
    /// ...) ends its text so that it is not run together with the next
    /// block's.
    fn pass_through(&mut self, i: usize, depth: usize, out: &mut Vec<Item<'a>>) {
        let nodes = self.nodes;
        let inline = self.class[i].is(Class::INLINE) || nodes[i].role.is_empty();
        if inline {
            for &c in &nodes[i].children {
                self.render(c, depth, out);
            }
            return;
        }
        let mut local = Vec::new();
        for &c in &nodes[i].children {
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
        if self.class[i].is(Class::VALUE_FIELD) || kids.is_empty() {
            return true;
        }
        let joined: Cow<str> = match kids {
            [Item::Text(t, _)] => Cow::Borrowed(t),
            _ => Cow::Owned(
                kids.iter()
                    .filter_map(|k| match k {
                        Item::Text(t, _) => Some(&**t),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
        };
        let joined = &*joined;
        let value = norm_ws(self.nodes[i].value);
        joined.is_empty()
            || (self.named(i) && (name.contains(joined) || joined == name))
            || (!value.is_empty() && (value.contains(joined) || joined.contains(&*value)))
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
        let value = norm_ws(self.nodes[i].value);
        let mut line = String::with_capacity(2 * depth + 32 + name.len());
        push_indent(&mut line, depth);
        line.push_str("- ");
        line.push_str(shown_role);
        if self.named(i) {
            line.push(' ');
            push_quoted(&mut line, name);
        }
        self.push_states(i, &mut line);
        if let Some(n) = ref_n {
            let _ = write!(line, " [ref=e{n}]");
        }
        // A single text child goes on the element's line.
        if kids.len() == 1
            && let Item::Text(t, _) = &kids[0]
            && value.is_empty()
        {
            line.push_str(": ");
            line.push_str(t);
            kids.clear();
        } else if !value.is_empty() && value != name {
            line.push_str(": ");
            push_quoted(&mut line, &value);
        }
        if !kids.is_empty() {
            line.push(':');
        }
        line.push('\n');
        for k in merge_text(kids) {
            match k {
                Item::Text(t, _) => {
                    push_indent(&mut line, depth + 1);
                    line.push_str("- text: ");
                    line.push_str(&t);
                    line.push('\n');
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
                let prev = prev.to_mut();
                prev.push(' ');
                prev.push_str(&t);
            }
            (_, it) => out.push(it),
        }
    }
    out
}

/// Render the outline of `nodes` (the first is the page, the others its
/// descendants), assigning refs in `refs` for document generation `doc_gen`.
pub(crate) fn render(nodes: &[Node], refs: &mut RefTable, doc_gen: u64, full: bool) -> Snapshot {
    refs.reset_for(doc_gen);
    refs.latest.clear();
    refs.snapshots += 1;
    let class = nodes.iter().map(|n| Class::of(n.role)).collect();
    let mut r = Renderer {
        nodes,
        class,
        refs,
        full,
    };
    let mut items = Vec::new();
    if !nodes.is_empty() {
        r.render(0, 0, &mut items);
    }
    let mut text = String::new();
    for it in merge_text(items) {
        match it {
            Item::Text(t, _) => {
                text.push_str("- text: ");
                text.push_str(&t);
                text.push('\n');
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

    fn tree() -> Vec<Node<'static>> {
        let el = |role, name, backend, children: &[usize]| Node {
            role,
            name,
            backend: Some(backend),
            children: children.to_vec(),
            ..Default::default()
        };
        let states = |st: States| Some(&*Box::leak(Box::new(st)));
        let mut heading = el("heading", "Hello", 10, &[2]);
        heading.states = states(States {
            level: Some(1),
            ..Default::default()
        });
        let mut textbox = el("textbox", "Email", 13, &[]);
        textbox.value = "a@b";
        textbox.states = states(States {
            required: true,
            ..Default::default()
        });
        vec![
            el("RootWebArea", "T", 1, &[1, 3, 5, 7]),
            heading,
            el("StaticText", "Hello", 11, &[]),
            el("generic", "", 12, &[4]),
            textbox,
            el("paragraph", "", 14, &[6]),
            el("StaticText", "Some  text", 15, &[]),
            el("button", "Go", 16, &[]),
        ]
    }

    #[test]
    fn names_are_quoted_as_json_strings() {
        let mut all: String = (0u32..0x80).filter_map(char::from_u32).collect();
        all.push_str("é€😀\u{2028}\"\\/");
        for s in [all.as_str(), "", "plain", "\"", "a\u{1f}b"] {
            let mut q = String::new();
            push_quoted(&mut q, s);
            assert_eq!(q, serde_json::to_string(s).unwrap());
        }
    }

    #[test]
    fn whitespace_is_normalised_and_borrowed_when_already_so() {
        for (s, want) in [
            ("", ""),
            ("a b", "a b"),
            (" a", "a"),
            ("a ", "a"),
            ("a  b", "a b"),
            ("a\tb\n", "a b"),
            ("a\u{a0}b", "a b"),
            ("   ", ""),
        ] {
            assert_eq!(norm_ws(s), want, "{s:?}");
            assert_eq!(matches!(norm_ws(s), Cow::Borrowed(_)), s == want, "{s:?}");
        }
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
