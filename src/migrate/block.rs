//! The managed block of `config.toml`: find it, render it, splice it in at the
//! text level, and prove the result is right.
//!
//! Splicing works on text, not on a TOML tree, so every byte outside the block
//! (comments, CRLF, BOM, ordering, formatting) stays as it was; only blank
//! lines touching the block are normalised to one. Markers and table headers
//! are located with the real TOML lexer/parser (`toml_parser`), so a marker
//! inside a multi-line string or a `[` in a multi-line array is never mistaken
//! for one. After splicing, [`validate`] parses the result and compares trees.

use std::collections::BTreeSet;

use toml_parser::parser::{Event, EventKind};

use super::translate::{CodexServer, TomlVal};

/// Hermes' start marker (hermes-agent: `hermes_cli/codex_runtime_plugin_migration.py`,
/// `MIGRATION_MARKER`), byte for byte (U+2014 em dash).
pub const START: &str =
    "# managed by hermes-agent \u{2014} `hermes codex-runtime migrate` regenerates this section";
/// Hermes' end marker.
pub const END: &str = "# end hermes-agent managed section";
/// Our line right after [`START`]: Hermes finds the block by its marker, which
/// must stay byte for byte (`_strip_existing_managed_block` compares whole
/// lines and swallows every line up to [`END`], this one included), but the
/// command the marker names does not exist; this says who writes the block
/// and how to take it out.
pub(crate) const OWNER: &str = "# `hermes-mcp migrate` writes this section (not the command above); `hermes-mcp migrate --remove` takes it out";
/// Our inventory line inside the block: the entries hermes-mcp wrote, so that
/// entries Codex later inserts into the block (it appends new tables before
/// the end marker when the block is last, and new root keys after
/// `default_permissions`) are recognised and kept as the user's.
pub(crate) const ENTRIES_PREFIX: &str = "# hermes-mcp entries = ";
/// Hermes' placeholder line for an empty block.
pub(crate) const PLACEHOLDER: &str =
    "# (no MCP servers, plugins, or permissions configured by Hermes)";

/// What goes into the block.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BlockContent {
    /// Root keys (`default_permissions`).
    pub root: Vec<(String, TomlVal)>,
    /// `[mcp_servers.<name>]`, in the order given (callers sort by name).
    pub servers: Vec<(String, CodexServer)>,
    /// `[plugins."<id>"]` with its enabled flag.
    pub plugins: Vec<(String, bool)>,
}

impl BlockContent {
    pub(crate) fn is_empty(&self) -> bool {
        self.root.is_empty() && self.servers.is_empty() && self.plugins.is_empty()
    }
}

// ---------------------------------------------------------------- scanning

#[derive(Debug, Clone)]
struct Header {
    /// Byte offset of the header's `[`.
    start: usize,
    /// First key of the header path (`mcp_servers` for `[mcp_servers.x]`).
    first_key: String,
    /// The whole header path.
    path: Vec<String>,
}

/// A key/value pair that is not inside a header, array or inline table.
#[derive(Debug, Clone)]
struct KeyVal {
    start: usize,
    first_key: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MarkerKind {
    Start,
    End,
}

#[derive(Debug, Clone, Copy)]
struct Marker {
    kind: MarkerKind,
    line_start: usize,
    line_end: usize,
}

#[derive(Debug, Default)]
struct Scan {
    headers: Vec<Header>,
    keyvals: Vec<KeyVal>,
    markers: Vec<Marker>,
}

fn line_start(text: &str, pos: usize) -> usize {
    text[..pos].rfind('\n').map_or(0, |i| i + 1)
}

fn line_end(text: &str, pos: usize) -> usize {
    text[pos..].find('\n').map_or(text.len(), |i| pos + i + 1)
}

/// How deep arrays and inline tables may nest (the `toml` crate's own limit).
pub(crate) const MAX_NESTING: u32 = 80;

fn scan(text: &str) -> Scan {
    let source = toml_parser::Source::new(text);
    let tokens = source.lex().into_vec();
    let mut events: Vec<Event> = Vec::new();
    let mut errors: Vec<toml_parser::ParseError> = Vec::new();
    let mut rx = |ev: Event| events.push(ev);
    // The parser recurses into arrays and inline tables; the guard stops it
    // (as `toml` does) so deep nesting cannot overflow the stack.
    let mut guarded = toml_parser::parser::RecursionGuard::new(&mut rx, MAX_NESTING);
    toml_parser::parser::parse_document(&tokens, &mut guarded, &mut errors);
    let mut out = Scan::default();
    let mut header: Option<(usize, Vec<String>)> = None;
    let mut depth = 0i32;
    let mut line_fresh = true;
    let decode = |ev: &Event| {
        let span = ev.span();
        let mut key = String::new();
        if let Some(text) = text.get(span.start()..span.end()) {
            toml_parser::Raw::new_unchecked(text, ev.encoding(), span)
                .decode_key(&mut key, &mut ());
        }
        key
    };
    for ev in &events {
        let span = ev.span();
        match ev.kind() {
            EventKind::StdTableOpen | EventKind::ArrayTableOpen => {
                header = Some((span.start(), Vec::new()));
            }
            EventKind::StdTableClose | EventKind::ArrayTableClose => {
                if let Some((start, path)) = header.take() {
                    out.headers.push(Header {
                        start,
                        first_key: path.first().cloned().unwrap_or_default(),
                        path,
                    });
                }
            }
            EventKind::ArrayOpen | EventKind::InlineTableOpen => depth += 1,
            EventKind::ArrayClose | EventKind::InlineTableClose => depth -= 1,
            EventKind::Newline if depth <= 0 => line_fresh = true,
            EventKind::SimpleKey => {
                if let Some((_, path)) = header.as_mut() {
                    path.push(decode(ev));
                } else if depth <= 0 && line_fresh {
                    line_fresh = false;
                    out.keyvals.push(KeyVal {
                        start: span.start(),
                        first_key: decode(ev),
                    });
                }
            }
            EventKind::Comment => {
                let ls = line_start(text, span.start());
                if !text[ls..span.start()].trim().is_empty() {
                    continue;
                }
                let body = text[span.start()..span.end()].trim_end();
                let kind = if body == START {
                    MarkerKind::Start
                } else if body == END {
                    MarkerKind::End
                } else {
                    continue;
                };
                out.markers.push(Marker {
                    kind,
                    line_start: ls,
                    line_end: line_end(text, span.start()),
                });
            }
            _ => {}
        }
    }
    out
}

fn is_blank_line(line: &str) -> bool {
    line.trim().is_empty()
}

fn is_comment_line(line: &str) -> bool {
    line.trim_start().starts_with('#')
}

/// The lines of `text[range]` as (start, end) offsets (end includes the newline).
fn line_before(text: &str, pos: usize) -> Option<(usize, usize)> {
    if pos == 0 {
        return None;
    }
    let ls = line_start(text, pos - 1);
    Some((ls, pos))
}

/// Where a table's own text begins: its header line, moved up over the comment
/// lines directly above it (they describe it), but not above `floor`.
fn attached_start(text: &str, header: usize, floor: usize) -> usize {
    let mut pos = line_start(text, header);
    while let Some((ls, le)) = line_before(text, pos) {
        if ls < floor || !is_comment_line(&text[ls..le]) {
            break;
        }
        pos = ls;
    }
    pos
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RegionKind {
    Block,
    OrphanEnd,
}

#[derive(Debug, Clone, Copy)]
struct Region {
    kind: RegionKind,
    start: usize,
    end: usize,
    /// For blocks: the marker-free content (after the start line, before the
    /// end marker line or the first foreign table).
    content: (usize, usize),
}

/// Tables Hermes' legacy (unterminated) block may hold.
fn is_managed_namespace(first_key: &str) -> bool {
    matches!(first_key, "mcp_servers" | "plugins" | "permissions")
}

/// Locate every managed block (with its surrounding blank lines) and orphan end marker.
fn regions(text: &str, sc: &Scan) -> Vec<Region> {
    let mut out = Vec::new();
    let ms = &sc.markers;
    let mut i = 0;
    while i < ms.len() {
        let m = ms[i];
        if m.kind == MarkerKind::End {
            out.push(Region {
                kind: RegionKind::OrphanEnd,
                start: m.line_start,
                end: m.line_end,
                content: (m.line_start, m.line_start),
            });
            i += 1;
            continue;
        }
        let next = ms.get(i + 1).copied();
        let limit = next.map_or(text.len(), |n| n.line_start);
        // A table that is not ours ends the block (legacy blocks have no end
        // marker; Codex appends its own tables just before our end marker).
        let foreign = sc.headers.iter().find(|h| {
            h.start >= m.line_end && h.start < limit && !is_managed_namespace(&h.first_key)
        });
        let (end, content_end, consumed) = match (next, foreign) {
            (_, Some(f)) => {
                let e = attached_start(text, f.start, m.line_end);
                (e, e, 1)
            }
            (Some(n), None) if n.kind == MarkerKind::End => (n.line_end, n.line_start, 2),
            (Some(n), None) => (n.line_start, n.line_start, 1),
            (None, None) => (text.len(), text.len(), 1),
        };
        out.push(Region {
            kind: RegionKind::Block,
            start: m.line_start,
            end,
            content: (m.line_end, content_end),
        });
        i += consumed;
    }
    // Blank lines touching a block belong to it (we write exactly one on each
    // side), but never to two regions: blocks separated only by blank lines
    // become adjacent, not overlapping.
    let mut prev_end = 0;
    for r in out.iter_mut() {
        if r.kind == RegionKind::OrphanEnd {
            r.start = r.start.max(prev_end);
            r.end = r.end.max(r.start);
            prev_end = r.end;
            continue;
        }
        while let Some((ls, le)) = line_before(text, r.start) {
            if ls < prev_end || !is_blank_line(&text[ls..le]) {
                break;
            }
            r.start = ls;
        }
        while r.end < text.len() {
            let le = line_end(text, r.end);
            if !is_blank_line(&text[r.end..le]) {
                break;
            }
            r.end = le;
        }
        prev_end = r.end;
    }
    out
}

// ---------------------------------------------------------------- newline / BOM

/// A file's framing: BOM and newline style, restored on output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Framing {
    pub(crate) bom: bool,
    pub crlf: bool,
}

pub fn detect_framing(text: &str) -> Framing {
    let bom = text.starts_with('\u{feff}');
    let crlf_count = text.matches("\r\n").count();
    let lf_count = text.matches('\n').count();
    Framing {
        bom,
        crlf: crlf_count > 0 && crlf_count * 2 >= lf_count,
    }
}

impl Framing {
    fn nl(&self) -> &'static str {
        if self.crlf { "\r\n" } else { "\n" }
    }
}

// ---------------------------------------------------------------- splicing

/// The existing file taken apart.
#[derive(Debug, Clone)]
pub struct Parsed {
    pub framing: Framing,
    /// The file without BOM and without any managed block: the user's text.
    pub user: String,
    /// The old managed blocks' text (markers included), concatenated.
    pub(crate) old_block: String,
    /// How many blocks / orphan end markers were found.
    pub blocks: usize,
    pub orphan_ends: usize,
    /// Entries found inside an old block that hermes-mcp did not write (kept as the user's).
    pub(crate) kept_from_block: Vec<String>,
}

/// Take the managed block(s) out of `text`.
pub fn take_apart(text: &str) -> Parsed {
    let framing = detect_framing(text);
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    let sc = scan(body);
    let regs = regions(body, &sc);
    let nl = framing.nl();
    let mut user = String::with_capacity(body.len());
    let mut old_block = String::new();
    let mut kept = Vec::new();
    let mut cursor = 0;
    for r in &regs {
        user.push_str(&body[cursor..r.start]);
        old_block.push_str(&body[r.start..r.end]);
        if r.kind == RegionKind::Block {
            let foreign = foreign_pieces(body, &sc, r.content);
            if !foreign.is_empty() {
                if !user.is_empty() {
                    user.push_str(nl);
                }
                for (a, b) in &foreign {
                    kept.push(body[*a..*b].trim_end().to_string());
                    user.push_str(&body[*a..*b]);
                }
                while user.ends_with(nl) && user[..user.len() - nl.len()].ends_with(nl) {
                    user.truncate(user.len() - nl.len());
                }
                if !user.ends_with('\n') {
                    user.push_str(nl);
                }
            }
            // One blank line where the block was (not two for adjacent blocks).
            if !user.is_empty() && r.end < body.len() && !ends_with_blank_line(&user) {
                user.push_str(nl);
            }
        }
        cursor = r.end;
    }
    user.push_str(&body[cursor..]);
    Parsed {
        framing,
        user,
        old_block,
        blocks: regs.iter().filter(|r| r.kind == RegionKind::Block).count(),
        orphan_ends: regs
            .iter()
            .filter(|r| r.kind == RegionKind::OrphanEnd)
            .count(),
        kept_from_block: kept,
    }
}

fn ends_with_blank_line(s: &str) -> bool {
    s.ends_with("\n\n") || s.ends_with("\n\r\n")
}

/// The entries listed on our inventory line in `text[a..b]`, if there is one.
fn inventory(text: &str, (a, b): (usize, usize)) -> Option<Vec<Vec<String>>> {
    let line = text[a..b]
        .lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix(ENTRIES_PREFIX.trim_end()))?;
    let arr: toml_edit::Value = line.trim().parse().ok()?;
    arr.as_array()?
        .iter()
        .map(|p| {
            p.as_array()?
                .iter()
                .map(|s| s.as_str().map(str::to_string))
                .collect::<Option<Vec<String>>>()
        })
        .collect()
}

/// Pieces of a block's content that hermes-mcp did not write (by its
/// inventory line): root key/values and tables someone added inside the block.
/// Without an inventory (Hermes' own block), everything is ours.
fn foreign_pieces(text: &str, sc: &Scan, content: (usize, usize)) -> Vec<(usize, usize)> {
    let Some(owned) = inventory(text, content) else {
        return Vec::new();
    };
    let (a, b) = content;
    let first_header = sc
        .headers
        .iter()
        .filter(|h| h.start >= a && h.start < b)
        .map(|h| h.start)
        .min()
        .unwrap_or(b);
    // (start, owner path) of every entry in the block, in order.
    let mut entries: Vec<(usize, Vec<String>)> = sc
        .keyvals
        .iter()
        .filter(|k| k.start >= a && k.start < first_header)
        .map(|k| (line_start(text, k.start), vec![k.first_key.clone()]))
        .collect();
    for h in sc.headers.iter().filter(|h| h.start >= a && h.start < b) {
        entries.push((attached_start(text, h.start, a), owner_of(&h.path)));
    }
    entries.sort_by_key(|e| e.0);
    let lists_tools = owned.iter().any(|p| is_tool_table(p));
    let mut out = Vec::new();
    for (i, (start, owner)) in entries.iter().enumerate() {
        let end = entries.get(i + 1).map_or(b, |e| e.0);
        let ours = owned.contains(owner) || (!lists_tools && legacy_tool_table(owner, &owned));
        if !ours {
            out.push((*start, end));
        }
    }
    out
}

/// `[mcp_servers.<server>.tools.<tool>]` (and deeper): one tool's settings.
fn is_tool_table(path: &[String]) -> bool {
    path.len() >= 4 && path[0] == "mcp_servers" && path[2] == "tools"
}

/// The block entry a table belongs to: a tool's settings table is an entry
/// of its own (Codex's "Always allow" writes one inside the block), any other
/// table under `mcp_servers`/`plugins`/`permissions` belongs to its server,
/// plugin or profile.
fn owner_of(path: &[String]) -> Vec<String> {
    if is_tool_table(path) {
        path[..4].to_vec()
    } else if path.len() >= 2 && is_managed_namespace(&path[0]) {
        path[..2].to_vec()
    } else {
        path.to_vec()
    }
}

/// An inventory line that lists no tool tables was written before they were
/// listed: then the tool tables hermes-mcp wrote were the auto-approved
/// kanban hand-off tools of `hermes-tools`.
fn legacy_tool_table(owner: &[String], owned: &[Vec<String>]) -> bool {
    is_tool_table(owner)
        && owner[1] == crate::hermes::SERVER_NAME
        && owned.iter().any(|p| p[..] == owner[..2])
        && super::translate::AUTO_APPROVED_TOOLS.contains(&owner[3].as_str())
}

/// Put `block` (LF text from [`render`]) into the user's text: before the first
/// table (so root keys stay at the root; comments directly above that table
/// stay with it), or at the end when there is no table.
pub fn insert(user: &str, block: &str, framing: Framing) -> String {
    let nl = framing.nl();
    let sc = scan(user);
    let p = match sc.headers.iter().map(|h| h.start).min() {
        Some(h) => attached_start(user, h, 0),
        None => user.len(),
    };
    // Trim blank lines on both sides of the insertion point.
    let mut a = p;
    while let Some((ls, le)) = line_before(user, a) {
        if !is_blank_line(&user[ls..le]) {
            break;
        }
        a = ls;
    }
    let mut b = p;
    while b < user.len() {
        let le = line_end(user, b);
        if !is_blank_line(&user[b..le]) {
            break;
        }
        b = le;
    }
    let pre = &user[..a];
    let post = &user[b..];
    let block = if framing.crlf {
        block.replace('\n', "\r\n")
    } else {
        block.to_string()
    };
    let mut out = String::with_capacity(user.len() + block.len() + 8);
    if framing.bom {
        out.push('\u{feff}');
    }
    if !pre.is_empty() {
        out.push_str(pre);
        if !pre.ends_with('\n') {
            out.push_str(nl);
        }
        out.push_str(nl);
    }
    out.push_str(&block);
    if !post.is_empty() {
        out.push_str(nl);
        out.push_str(post);
    }
    out
}

/// The user's text alone, for `--remove` (BOM restored; the blank lines that
/// surrounded the block collapse to one).
pub(crate) fn removed(parsed: &Parsed) -> String {
    let mut out = String::with_capacity(parsed.user.len() + 3);
    if parsed.framing.bom {
        out.push('\u{feff}');
    }
    out.push_str(&parsed.user);
    out
}

// ---------------------------------------------------------------- rendering

/// A basic (double-quoted, single-line) TOML string: every control character escaped.
pub(crate) fn basic_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\u{:04X}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn str_value(s: &str) -> toml_edit::Value {
    // toml_edit's default repr may choose a multi-line string for text with
    // newlines; keep everything on one line (and CRLF conversion safe).
    if s.contains(['\n', '\r']) {
        basic_string(s)
            .parse::<toml_edit::Value>()
            .expect("basic string literal parses")
    } else {
        toml_edit::Value::from(s)
    }
}

fn to_value(v: &TomlVal) -> toml_edit::Value {
    match v {
        TomlVal::Str(s) => str_value(s),
        TomlVal::Float(f) => toml_edit::Value::from(*f),
        TomlVal::Bool(b) => toml_edit::Value::from(*b),
        TomlVal::List(items) => {
            let mut a = toml_edit::Array::new();
            for i in items {
                a.push(str_value(i));
            }
            toml_edit::Value::Array(a)
        }
        TomlVal::Map(pairs) => {
            let mut t = toml_edit::InlineTable::new();
            for (k, v) in pairs {
                t.insert(k.as_str(), str_value(v));
            }
            toml_edit::Value::InlineTable(t)
        }
    }
}

/// A key as TOML writes it: bare when `[A-Za-z0-9_-]+`, else quoted.
pub(crate) fn key(k: &str) -> String {
    toml_edit::Key::new(k).display_repr().into_owned()
}

fn kv_lines<K: AsRef<str>>(out: &mut Vec<String>, pairs: &[(K, TomlVal)]) {
    for (k, v) in pairs {
        let mut val = to_value(v);
        val.decor_mut().clear();
        out.push(format!("{} = {}", key(k.as_ref()), val));
    }
}

/// Render the block (LF newlines), in Hermes' layout.
pub fn render(c: &BlockContent) -> String {
    let mut lines = vec![START.to_string(), OWNER.to_string()];
    if c.is_empty() {
        lines.push(PLACEHOLDER.to_string());
        lines.push(END.to_string());
        return lines.join("\n") + "\n";
    }
    let mut inv = toml_edit::Array::new();
    for path in inventory_paths(c) {
        inv.push(toml_edit::Value::Array(
            path.iter().map(|k| str_value(k)).collect(),
        ));
    }
    lines.push(format!("{ENTRIES_PREFIX}{inv}"));
    if !c.root.is_empty() {
        lines.push(String::new());
        kv_lines(&mut lines, &c.root);
    }
    for (name, s) in &c.servers {
        lines.push(String::new());
        lines.push(format!("[mcp_servers.{}]", key(name)));
        kv_lines(&mut lines, &s.pairs());
        for (tool, pairs) in s.tool_tables() {
            lines.push(String::new());
            lines.push(format!("[mcp_servers.{}.tools.{}]", key(name), key(tool)));
            kv_lines(&mut lines, &pairs);
        }
    }
    for (id, enabled) in &c.plugins {
        lines.push(String::new());
        lines.push(format!("[plugins.{}]", key(id)));
        lines.push(format!("enabled = {enabled}"));
    }
    lines.push(String::new());
    lines.push(END.to_string());
    lines.join("\n") + "\n"
}

// ---------------------------------------------------------------- validation

/// TOML that does not parse; the text is the parser's message (it shows the line).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TomlError(String);

/// Why a splice result was refused by [`validate`].
#[derive(Debug, thiserror::Error)]
pub enum SpliceError {
    #[error("the result is not valid TOML: {0}")]
    Result(TomlError),
    #[error("config.toml without the managed block is not valid TOML: {0}")]
    User(TomlError),
    #[error("the rendered block is not valid TOML: {0}")]
    Block(TomlError),
    #[error(
        "`{0}` would not read back as written (text after the block or elsewhere in the file extends it)"
    )]
    Extended(String),
    #[error("the settings outside the managed block would change")]
    OutsideChanged,
}

pub fn parse_toml(text: &str) -> Result<toml::Table, TomlError> {
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    body.parse::<toml::Table>()
        .map_err(|e| TomlError(e.to_string().trim_end().to_string()))
}

/// The (dotted-path) entries a block defines: root keys, `mcp_servers.<n>`, `plugins.<id>`.
pub(crate) fn block_paths(c: &BlockContent) -> Vec<(Option<&'static str>, String)> {
    let mut p: Vec<(Option<&'static str>, String)> =
        c.root.iter().map(|(k, _)| (None, k.clone())).collect();
    p.extend(
        c.servers
            .iter()
            .map(|(n, _)| (Some("mcp_servers"), n.clone())),
    );
    p.extend(
        c.plugins
            .iter()
            .map(|(id, _)| (Some("plugins"), id.clone())),
    );
    p
}

/// What the inventory line lists: [`block_paths`], and each server's tool tables.
fn inventory_paths(c: &BlockContent) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = c.root.iter().map(|(k, _)| vec![k.clone()]).collect();
    for (name, s) in &c.servers {
        out.push(vec!["mcp_servers".into(), name.clone()]);
        for (tool, _) in s.tool_tables() {
            out.push(vec![
                "mcp_servers".into(),
                name.clone(),
                "tools".into(),
                tool.to_string(),
            ]);
        }
    }
    out.extend(
        c.plugins
            .iter()
            .map(|(id, _)| vec!["plugins".into(), id.clone()]),
    );
    out
}

fn get_path<'a>(t: &'a toml::Table, parent: Option<&str>, k: &str) -> Option<&'a toml::Value> {
    match parent {
        None => t.get(k),
        Some(p) => t.get(p)?.as_table()?.get(k),
    }
}

/// `ours` with the tables of `users` merged in (a key of both: the user's
/// value below a table of both, else ours).
fn merged(ours: &toml::Value, users: Option<&toml::Value>) -> toml::Value {
    match (ours, users) {
        (toml::Value::Table(o), Some(toml::Value::Table(u))) => {
            let mut out = o.clone();
            for (k, uv) in u {
                let v = match o.get(k) {
                    Some(ov) => merged(ov, Some(uv)),
                    None => uv.clone(),
                };
                out.insert(k.clone(), v);
            }
            toml::Value::Table(out)
        }
        _ => ours.clone(),
    }
}

/// `[mcp_servers.NAME]` entries of `t` that codex cannot start: no `command`
/// and no `url` (codex 0.169 and 0.171 refuse the whole file, "invalid transport").
pub fn servers_without_transport(t: &toml::Table) -> Vec<String> {
    let Some(servers) = t.get("mcp_servers").and_then(toml::Value::as_table) else {
        return Vec::new();
    };
    servers
        .iter()
        .filter(|(_, v)| {
            v.as_table()
                .is_none_or(|s| !s.contains_key("command") && !s.contains_key("url"))
        })
        .map(|(n, _)| n.clone())
        .collect()
}

/// Check a splice result: it parses; everything outside the managed entries
/// equals the user's data; each managed entry equals the rendered block's.
pub fn validate(
    result: &str,
    user: &str,
    block: &str,
    c: &BlockContent,
) -> Result<(), SpliceError> {
    let new = parse_toml(result).map_err(SpliceError::Result)?;
    let user_t = parse_toml(user).map_err(SpliceError::User)?;
    let blk = parse_toml(block).map_err(SpliceError::Block)?;
    let mut outside = new.clone();
    let mut parents = BTreeSet::new();
    for (parent, k) in block_paths(c) {
        let theirs = get_path(&new, parent, &k);
        // The user's sub-tables of a managed entry (a tool's settings below
        // a server) merge into it.
        let users = get_path(&user_t, parent, &k);
        let ours = get_path(&blk, parent, &k).map(|o| merged(o, users));
        if theirs != ours.as_ref() {
            let path = match parent {
                Some(p) => format!("{p}.{}", key(&k)),
                None => key(&k),
            };
            return Err(SpliceError::Extended(path));
        }
        let container = match parent {
            None => Some(&mut outside),
            Some(p) => {
                parents.insert(p);
                outside.get_mut(p).and_then(toml::Value::as_table_mut)
            }
        };
        if let Some(t) = container {
            match users {
                Some(u) => {
                    t.insert(k.clone(), u.clone());
                }
                None => {
                    t.remove(&k);
                }
            }
        }
    }
    for p in parents {
        let empty = outside
            .get(p)
            .and_then(toml::Value::as_table)
            .is_some_and(|t| t.is_empty());
        if empty && !user_t.contains_key(p) {
            outside.remove(p);
        }
    }
    if outside != user_t {
        return Err(SpliceError::OutsideChanged);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::migrate::translate::Timeout;

    fn content() -> BlockContent {
        let s = CodexServer {
            command: Some("npx".into()),
            args: vec!["-y".into(), "line\nbreak \"q\" \\".into()],
            env: vec![("K".into(), "v".into()), ("a b".into(), "\u{1}".into())],
            timeouts: vec![(Timeout::Tool, 120.0)],
            ..Default::default()
        };
        BlockContent {
            root: vec![(
                "default_permissions".into(),
                TomlVal::Str(":workspace".into()),
            )],
            servers: vec![
                ("fs".into(), s),
                (
                    "café".into(),
                    CodexServer {
                        url: Some("http://x".into()),
                        ..Default::default()
                    },
                ),
            ],
            plugins: vec![("hello@local".into(), true)],
        }
    }

    fn splice(text: &str, c: &BlockContent) -> String {
        let p = take_apart(text);
        let block = render(c);
        let out = insert(&p.user, &block, p.framing);
        validate(&out, &p.user, &block, c).unwrap_or_else(|e| panic!("{e}\n---\n{out}"));
        out
    }

    #[test]
    fn markers_are_hermes_exact() {
        assert_eq!(
            START.as_bytes(),
            "# managed by hermes-agent — `hermes codex-runtime migrate` regenerates this section"
                .as_bytes()
        );
    }

    #[test]
    fn renders_hermes_layout_with_safe_escaping() {
        let b = render(&content());
        assert!(b.starts_with(&format!("{START}\n{OWNER}\n{ENTRIES_PREFIX}[[\"default_permissions\"], [\"mcp_servers\", \"fs\"], [\"mcp_servers\", \"café\"], [\"plugins\", \"hello@local\"]]\n\ndefault_permissions = \":workspace\"\n\n[mcp_servers.fs]\ncommand = \"npx\"\n")), "{b}");
        assert!(
            b.contains("args = [\"-y\", \"line\\nbreak \\\"q\\\" \\\\\"]"),
            "{b}"
        );
        assert!(
            b.contains("env = { K = \"v\", \"a b\" = \"\\u0001\" }"),
            "{b}"
        );
        assert!(b.contains("[mcp_servers.\"café\"]"), "{b}");
        assert!(
            b.contains("[plugins.\"hello@local\"]\nenabled = true\n"),
            "{b}"
        );
        assert!(b.ends_with(&format!("\n\n{END}\n")));
        parse_toml(&b).unwrap();
        let empty = render(&BlockContent::default());
        assert_eq!(empty, format!("{START}\n{OWNER}\n{PLACEHOLDER}\n{END}\n"));
    }

    #[test]
    fn inserts_before_first_table_and_is_idempotent() {
        let user = "# my config\nmodel = \"gpt-5\"\n\n# features I like\n[features]\nx = true\n";
        let once = splice(user, &content());
        assert!(
            once.starts_with("# my config\nmodel = \"gpt-5\"\n\n# managed by"),
            "{once}"
        );
        assert!(
            once.ends_with(
                "# end hermes-agent managed section\n\n# features I like\n[features]\nx = true\n"
            ),
            "{once}"
        );
        assert_eq!(splice(&once, &content()), once);
        assert_eq!(removed(&take_apart(&once)), user);
    }

    #[test]
    fn root_multiline_array_with_nested_arrays_is_not_a_table() {
        let user = "notify = [\n  [\"a\", \"b\"],\n  [\"c\"],\n]\n[tui]\nx = 1\n";
        let out = splice(user, &content());
        let t = parse_toml(&out).unwrap();
        assert_eq!(t["default_permissions"].as_str(), Some(":workspace"));
        assert!(out.contains("  [\"c\"],\n]\n\n# managed by"), "{out}");
    }

    #[test]
    fn crlf_and_bom_are_kept() {
        let user = "\u{feff}model = \"m\"\r\n\r\n[features]\r\nx = true\r\n";
        let out = splice(user, &content());
        assert!(out.starts_with("\u{feff}model"));
        assert!(
            !out.replace("\r\n", "").contains('\n'),
            "LF leaked: {out:?}"
        );
        assert_eq!(splice(&out, &content()), out);
        assert_eq!(removed(&take_apart(&out)), user);
    }

    #[test]
    fn no_trailing_newline_and_empty_files() {
        let out = splice("model = 1", &content());
        assert!(out.starts_with("model = 1\n\n# managed"));
        assert_eq!(splice(&out, &content()), out);
        let out = splice("", &content());
        assert!(out.starts_with(START));
        assert_eq!(splice(&out, &content()), out);
    }

    #[test]
    fn legacy_block_without_end_marker_stops_at_foreign_table() {
        let text = format!(
            "model = 1\n\n{START}\n\ndefault_permissions = \":workspace\"\n\n[mcp_servers.old]\ncommand = \"x\"\n\n[providers]\nname = \"p\"\n"
        );
        let p = take_apart(&text);
        assert_eq!(p.blocks, 1);
        assert_eq!(p.user, "model = 1\n\n[providers]\nname = \"p\"\n");
    }

    #[test]
    fn orphan_end_marker_is_removed() {
        let text = format!("approval_policy = \"never\"\n{END}\n");
        let p = take_apart(&text);
        assert_eq!(p.orphan_ends, 1);
        assert_eq!(p.user, "approval_policy = \"never\"\n");
    }

    #[test]
    fn codex_table_appended_inside_block_is_kept() {
        // `codex features enable` appends [features] before our end marker
        // when the block is the last thing in the file.
        let text = format!(
            "model = 1\n\n{START}\n\n[mcp_servers.a]\ncommand = \"x\"\n\n[features]\nfoo = true\n\n{END}\n"
        );
        let p = take_apart(&text);
        assert_eq!(p.user, "model = 1\n\n[features]\nfoo = true\n\n");
    }

    #[test]
    fn entries_codex_added_inside_our_block_are_kept() {
        let c = content();
        let block = render(&c);
        // What `codex mcp add foo --env A=B` and a root-key write do to a
        // file whose block is last: the new table lands before our end
        // marker, the new root key after default_permissions.
        let mut text = format!("model = 1\n\n{block}");
        text = text.replace(
            "default_permissions = \":workspace\"\n",
            "default_permissions = \":workspace\"\nnew_root = [\n  \"x\",\n]\n",
        );
        text = text.replace(
            &format!("\n{END}"),
            &format!("\n[mcp_servers.foo]\ncommand = \"python3\"\n\n[mcp_servers.foo.env]\nA = \"B\"\n\n{END}"),
        );
        let p = take_apart(&text);
        assert_eq!(
            p.user,
            "model = 1\n\nnew_root = [\n  \"x\",\n]\n\n[mcp_servers.foo]\ncommand = \"python3\"\n\n[mcp_servers.foo.env]\nA = \"B\"\n"
        );
        assert_eq!(p.kept_from_block.len(), 3, "{:?}", p.kept_from_block);
        let out = insert(&p.user, &block, p.framing);
        validate(&out, &p.user, &block, &c).unwrap();
        let t = parse_toml(&out).unwrap();
        assert_eq!(t["new_root"].as_array().unwrap().len(), 1);
        assert_eq!(t["mcp_servers"]["foo"]["env"]["A"].as_str(), Some("B"));
        // Stable from now on.
        let again = take_apart(&out);
        assert_eq!(insert(&again.user, &block, again.framing), out);
        // Hermes' own block has no inventory: all of it is replaced.
        let hermes = text.replace(&format!("\n{ENTRIES_PREFIX}"), "\n# ");
        assert!(take_apart(&hermes).kept_from_block.is_empty());
    }

    fn with_tool_tables() -> BlockContent {
        let mut c = content();
        let tools = crate::migrate::translate::hermes_tools_entry("/x", None, &[], &[]);
        c.servers.push((crate::hermes::SERVER_NAME.into(), tools));
        c
    }

    #[test]
    fn a_tool_table_codex_adds_inside_the_block_is_kept_as_the_users() {
        // Codex's "Always allow" (app-server elicitation, persist "always")
        // appends the tool's table after our last tool table, inside the block.
        let c = with_tool_tables();
        let block = render(&c);
        assert!(
            block.contains("[\"mcp_servers\", \"hermes-tools\", \"tools\", \"kanban_complete\"]")
        );
        let added =
            "[mcp_servers.hermes-tools.tools.text_to_speech]\napproval_mode = \"approve\"\n";
        let text = format!("model = 1\n\n{block}\n[tui]\nx = 1\n")
            .replace(&format!("\n{END}"), &format!("\n{added}\n{END}"));
        let p = take_apart(&text);
        assert_eq!(p.kept_from_block, [added.trim_end()]);
        assert!(p.user.contains(added), "{}", p.user);
        assert!(!p.user.contains("kanban_complete"), "{}", p.user);
        let out = insert(&p.user, &block, p.framing);
        validate(&out, &p.user, &block, &c).unwrap();
        let t = parse_toml(&out).unwrap();
        let tools = &t["mcp_servers"]["hermes-tools"]["tools"];
        assert_eq!(
            tools["text_to_speech"]["approval_mode"].as_str(),
            Some("approve")
        );
        assert_eq!(
            tools["kanban_complete"]["approval_mode"].as_str(),
            Some("approve")
        );
        // Stable from now on.
        let again = take_apart(&out);
        assert!(again.kept_from_block.is_empty());
        assert_eq!(insert(&again.user, &block, again.framing), out);
        // A block whose inventory lists no tool tables (written before they
        // were listed): the kanban tables were ours, the new one is not.
        let legacy = text.replace(
            ", [\"mcp_servers\", \"hermes-tools\", \"tools\", \"kanban_complete\"], [\"mcp_servers\", \"hermes-tools\", \"tools\", \"kanban_block\"], [\"mcp_servers\", \"hermes-tools\", \"tools\", \"kanban_heartbeat\"], [\"mcp_servers\", \"hermes-tools\", \"tools\", \"kanban_comment\"]",
            "",
        );
        assert_ne!(legacy, text);
        assert_eq!(take_apart(&legacy).kept_from_block, [added.trim_end()]);
    }

    #[test]
    fn validation_merges_the_users_tool_tables_into_our_server() {
        let c = with_tool_tables();
        let block = render(&c);
        let user =
            "model = 1\n\n[mcp_servers.hermes-tools.tools.memory]\napproval_mode = \"prompt\"\n";
        let out = insert(user, &block, detect_framing(user));
        validate(&out, user, &block, &c).unwrap();
        let t = parse_toml(&out).unwrap();
        assert!(servers_without_transport(&t).is_empty());
        assert_eq!(
            servers_without_transport(&parse_toml(user).unwrap()),
            ["hermes-tools"]
        );
    }

    #[test]
    fn marker_text_inside_a_string_is_not_a_marker() {
        let text = format!("x = \"\"\"\n{START}\n\"\"\"\n");
        let p = take_apart(&text);
        assert_eq!(p.blocks, 0);
        assert_eq!(p.user, text);
    }

    #[test]
    fn two_blocks_collapse_into_one() {
        let b = render(&content());
        let text = format!("a = 1\n\n{b}\n[t]\nx = 1\n\n{b}\n[u]\ny = 2\n");
        let out = splice(&text, &content());
        assert_eq!(out.matches(START).count(), 1);
        assert_eq!(out.matches(END).count(), 1);
    }

    #[test]
    fn validation_catches_keys_absorbed_into_our_table() {
        // A user key right after the end marker, with no table after it,
        // belongs to our last table.
        let c = content();
        let block = render(&c);
        let user = "[mcp_servers.fs.env]\nX = \"1\"\n";
        let out = insert(user, &block, detect_framing(user));
        assert!(validate(&out, user, &block, &c).is_err());
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        fn root_line() -> impl Strategy<Value = String> {
            prop_oneof![
                "[a-z]{1,6}".prop_map(|v| format!("= \"{v}\"")),
                (0i64..1000).prop_map(|n| format!("= {n}")),
                Just("= [\n  \"a\",\n  [\"x\", \"y\"],\n]".to_string()),
                Just("= \"\"\"\n[fake]\n# managed by hermes-agent\n\"\"\"".to_string()),
                Just("= { a = 1, b = \"[t]\" }   # trailing comment".to_string()),
            ]
        }

        fn table() -> impl Strategy<Value = String> {
            (
                prop_oneof![
                    Just("[features]".to_string()),
                    Just("[mcp_servers.user_srv]".to_string()),
                    Just("[[hooks]]".to_string()),
                    Just("[tui.\"x y\"]".to_string()),
                    Just("[plugins.\"mine@m\"]".to_string()),
                ],
                prop::collection::vec(root_line(), 0..3),
                prop::bool::ANY,
            )
                .prop_map(|(h, kvs, comment)| {
                    let mut s = String::new();
                    if comment {
                        s.push_str("# about this table\n");
                    }
                    s.push_str(&h);
                    s.push('\n');
                    for (i, kv) in kvs.iter().enumerate() {
                        s.push_str(&format!("k{i} {kv}\n"));
                    }
                    s
                })
        }

        prop_compose! {
            fn user_file()(
                roots in prop::collection::vec((root_line(), 0usize..3), 0..4),
                header in prop::option::of("# [a-z ]{0,12}"),
                tables in prop::collection::vec(table(), 0..4),
                crlf in prop::bool::ANY,
                bom in prop::bool::ANY,
                no_final_nl in prop::bool::ANY,
            ) -> String {
                let mut s = String::new();
                if let Some(h) = header { s.push_str(&h); s.push_str("\n\n"); }
                for (i, (kv, blanks)) in roots.iter().enumerate() {
                    s.push_str(&format!("r{i} {kv}\n"));
                    s.push_str(&"\n".repeat(*blanks));
                }
                // Each table header at most once.
                let mut seen = std::collections::HashSet::new();
                for t in tables {
                    let head = t.lines().find(|l| l.starts_with('[')).unwrap().to_string();
                    if head.starts_with("[[") || seen.insert(head) {
                        s.push_str(&t);
                        s.push('\n');
                    }
                }
                if no_final_nl { while s.ends_with('\n') { s.pop(); } }
                if crlf { s = s.replace('\n', "\r\n"); }
                if bom { s.insert(0, '\u{feff}'); }
                s
            }
        }

        fn any_string() -> impl Strategy<Value = String> {
            prop_oneof![
                "[a-zA-Z0-9 /._-]{0,12}",
                "\\PC{0,8}",
                Just("C:\\path\\\"q\"\n\t\u{1}\u{7f}'".to_string()),
            ]
        }

        prop_compose! {
            fn content()(
                perm in prop::option::of(prop_oneof![Just(":workspace"), Just(":read-only")]),
                servers in prop::collection::btree_map(
                    prop_oneof!["[a-z][a-z0-9_.:@/-]{0,8}", Just("user_srv".to_string())],
                    (any_string(), prop::collection::vec(any_string(), 0..3),
                     prop::collection::vec(("[A-Z_]{1,5}", any_string()), 0..3), prop::bool::ANY),
                    0..4),
                plugins in prop::collection::btree_map("[a-z]{1,5}@[a-z]{1,5}", prop::bool::ANY, 0..3),
            ) -> BlockContent {
                let servers = servers.into_iter().filter(|(n, _)| n != "user_srv").map(|(n, (cmd, args, env, dis))| {
                    let mut env: Vec<(String, String)> = env;
                    env.sort(); env.dedup_by(|a, b| a.0 == b.0);
                    let s = CodexServer {
                        command: Some(cmd),
                        args,
                        env,
                        enabled: dis.then_some(false),
                        timeouts: vec![(Timeout::Tool, 1.5)],
                        ..Default::default()
                    };
                    (n, s)
                }).collect();
                BlockContent {
                    root: perm.map(|p| vec![("default_permissions".to_string(), TomlVal::Str(p.to_string()))]).unwrap_or_default(),
                    servers,
                    plugins: plugins.into_iter().filter(|(id, _)| id != "mine@m").collect(),
                }
            }
        }

        const WS: &[char] = &[' ', '\t', '\r', '\n'];

        proptest! {
            #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
            #[test]
            fn splice_keeps_outside_bytes_parses_and_is_idempotent(user in user_file(), c in content(), c2 in content()) {
                prop_assume!(parse_toml(&user).is_ok());
                let p = take_apart(&user);
                prop_assert_eq!(&p.user, user.strip_prefix('\u{feff}').unwrap_or(&user));
                let block = render(&c);
                let out = insert(&p.user, &block, p.framing);
                prop_assert!(validate(&out, &p.user, &block, &c).is_ok(), "{:?}\n{}", validate(&out, &p.user, &block, &c), out);
                // Outside bytes: only whitespace next to the block may differ.
                let s = out.find(START).unwrap();
                let e = out.find(END).unwrap() + END.len();
                let e = e + out[e..].find('\n').map_or(out.len() - e, |i| i + 1);
                let pre = out[..s].trim_end_matches(WS);
                let post = out[e..].trim_start_matches(WS);
                prop_assert!(user.starts_with(pre), "prefix changed:\n{}\n---\n{}", user, out);
                prop_assert!(user.ends_with(post), "suffix changed:\n{}\n---\n{}", user, out);
                prop_assert!(pre.len() + post.len() <= user.len());
                prop_assert!(user[pre.len()..user.len() - post.len()].trim_matches(WS).is_empty());
                // Idempotent.
                let again = take_apart(&out);
                prop_assert_eq!(insert(&again.user, &block, again.framing), out.clone());
                // A different block replaces it: one block, still valid.
                let block2 = render(&c2);
                let out2 = insert(&again.user, &block2, again.framing);
                prop_assert!(validate(&out2, &again.user, &block2, &c2).is_ok());
                prop_assert_eq!(out2.matches(START).count(), 1);
                // Removing it gives the user's data back.
                let rem = removed(&take_apart(&out2));
                prop_assert_eq!(parse_toml(&rem).unwrap(), parse_toml(&user).unwrap());
            }
        }
    }
}
