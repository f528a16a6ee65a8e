//! Snapshots from one in-page DOM walk instead of the accessibility tree.
//!
//! `Accessibility.getFullAXTree` costs 1.1–1.6 s on a 10k-node page; the
//! walker in `snapshot.js` computes roles, names, states and visibility in
//! the page in one pass and returns a compact JSON tree. This module types
//! that tree and lends it to [`snapshot::render`] (text format,
//! compact/full rules, ref numbering) as outline nodes that borrow its
//! strings: nothing is copied between the walk and the text.
//!
//! Refs: the walker gives every emitted element a per-document id (stable
//! across snapshots of one document) and keeps `window.__hermesRefs`
//! (id → Element) for the latest walk. Those ids take the place of DOM
//! backend node ids in the [`snapshot::RefTable`]; ids from a cross-origin
//! frame's own walk are namespaced with [`ref_key`] (frame number in the
//! high 32 bits), so one table serves the whole tab.

use serde::Deserialize;
use serde_json::Value;

use super::outline::{self as snapshot, RefTable, Snapshot, States};

/// The walker: a function expression for `Runtime.callFunctionOn` (with
/// `returnByValue`; its result is a JSON string, see [`parse`]). Argument:
/// `{frames: bool, pseudo: bool, urls: bool}` (all default true; `urls`:
/// links' targets, which only a full snapshot shows).
pub(crate) const WALKER_JS: &str = include_str!("snapshot.js");

/// `js` as it is sent to the page: without its comment lines and
/// indentation. Each walk compiles the walker afresh (every document is a
/// new context), and compiling scans every byte: a third fewer of them
/// saves about a millisecond per walk on a 2,000-element page. Lines are
/// kept whole (a comment after code stays, line breaks too), so nothing
/// that depends on them (strings, regular expressions, automatic
/// semicolons) changes.
pub(crate) fn compact_js(js: &str) -> String {
    js.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The walker's result.
#[derive(Debug, Deserialize)]
pub(crate) struct Walk {
    pub(crate) tree: Node,
    /// Iframes the walker could not enter (cross-origin): the Rust side
    /// walks them in their own context and [`Walk::graft`]s the result.
    #[serde(default)]
    pub(crate) frames: Vec<FrameStub>,
    /// Emitted elements.
    #[serde(default)]
    pub(crate) count: usize,
}

#[derive(Debug, Deserialize)]
pub(crate) struct FrameStub {
    /// The iframe element's id (resolve it with `window.__hermesRefs.get(i)`).
    pub(crate) i: i64,
    #[serde(default)]
    pub(crate) src: String,
}

/// A text run or an element.
#[derive(Debug)]
pub(crate) enum Node {
    Text(String),
    El(Box<El>),
}

/// A string is a text run, an object an element: read directly (serde's
/// `untagged` buffers every node of the tree to try the variants in turn).
impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Node;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a text run (string) or an element (object)")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Node, E> {
                Ok(Node::Text(s.to_owned()))
            }
            fn visit_string<E: serde::de::Error>(self, s: String) -> Result<Node, E> {
                Ok(Node::Text(s))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Node, A::Error> {
                let el = El::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(Node::El(Box::new(el)))
            }
        }
        d.deserialize_any(V)
    }
}

/// One element, with Chromium's AX role name.
#[derive(Debug, Deserialize)]
pub(crate) struct El {
    pub(crate) r: String,
    #[serde(default)]
    pub(crate) n: String,
    #[serde(default)]
    pub(crate) v: String,
    /// Page-side id (absent for synthetic nodes such as `MenuListPopup`).
    #[serde(default)]
    pub(crate) i: Option<i64>,
    #[serde(default)]
    pub(crate) p: Option<States>,
    #[serde(default)]
    pub(crate) c: Vec<Node>,
    /// A cross-origin iframe the walker did not enter.
    #[serde(default)]
    pub(crate) x: Option<u8>,
    /// Which frame's walk the node came from (0: the top document).
    #[serde(skip)]
    pub(crate) frame: u32,
}

/// The [`RefTable`] key of element `id` of frame `frame` (0: top document).
pub(crate) fn ref_key(frame: u32, id: i64) -> i64 {
    ((frame as i64) << 32) | (id & 0xffff_ffff)
}

/// Inverse of [`ref_key`]: (frame, page-side id).
pub(crate) fn split_key(key: i64) -> (u32, i64) {
    ((key >> 32) as u32, key & 0xffff_ffff)
}

/// The walker's result: the JSON string it returns (or, if a caller let
/// Chromium return the object itself, that object).
pub(crate) fn parse(v: &Value) -> Result<Walk, serde_json::Error> {
    match v {
        Value::String(s) => serde_json::from_str(s),
        other => Walk::deserialize(other),
    }
}

impl El {
    fn set_frame(&mut self, frame: u32) {
        self.frame = frame;
        for c in &mut self.c {
            if let Node::El(e) = c {
                e.set_frame(frame);
            }
        }
    }

    fn find_frame(&mut self, id: i64) -> Option<&mut El> {
        if self.x.is_some() && self.i == Some(id) && self.frame == 0 {
            return Some(self);
        }
        self.c.iter_mut().find_map(|c| match c {
            Node::El(e) => e.find_frame(id),
            Node::Text(_) => None,
        })
    }
}

impl Walk {
    /// Put a cross-origin frame's own walk (its `RootWebArea`) under the
    /// iframe element `iframe_id` of this (top) walk; its refs get frame
    /// number `frame` (≥ 1). False when there is no such iframe.
    pub(crate) fn graft(&mut self, iframe_id: i64, mut child: Walk, frame: u32) -> bool {
        let Node::El(root) = &mut self.tree else {
            return false;
        };
        let Some(host) = root.find_frame(iframe_id) else {
            return false;
        };
        if let Node::El(e) = &mut child.tree {
            e.set_frame(frame);
        }
        host.x = None;
        host.c = vec![child.tree];
        self.count += child.count;
        true
    }

    /// The walk as outline nodes: in document order, children by index.
    fn outline(&self) -> Vec<snapshot::Node<'_>> {
        let mut out = Vec::with_capacity(self.count * 2 + 1);
        push_node(&self.tree, &mut out);
        out
    }
}

/// Append `node` (and its subtree) to `out`; returns its index.
fn push_node<'a>(node: &'a Node, out: &mut Vec<snapshot::Node<'a>>) -> usize {
    let at = out.len();
    match node {
        Node::Text(t) => out.push(snapshot::Node {
            role: "StaticText",
            name: t,
            ..Default::default()
        }),
        Node::El(e) => {
            out.push(snapshot::Node::default());
            let children = e.c.iter().map(|c| push_node(c, out)).collect();
            out[at] = snapshot::Node {
                role: &e.r,
                name: &e.n,
                value: &e.v,
                backend: e.i.map(|i| ref_key(e.frame, i)),
                states: e.p.as_ref(),
                children,
            };
        }
    }
    at
}

/// Render a walk with [`snapshot::render`] (`RefEntry::backend` holds a
/// [`ref_key`], not a DOM node id).
pub(crate) fn render(walk: &Walk, refs: &mut RefTable, doc_gen: u64, full: bool) -> Snapshot {
    snapshot::render(&walk.outline(), refs, doc_gen, full)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const FORM: &str = r#"{"tree":{"r":"RootWebArea","n":"T","c":[
        {"r":"heading","n":"Hello","i":1,"p":{"level":1},"c":["Hello"]},
        {"r":"form","i":2,"c":[
            {"r":"LabelText","i":3,"c":["Email"]},
            {"r":"textbox","n":"Email","v":"a@b","i":4,"p":{"required":true}},
            {"r":"combobox","n":"Size","v":"Small","i":5,"p":{"expanded":false},"c":[
                {"r":"MenuListPopup","c":[
                    {"r":"option","n":"Small","i":6,"p":{"selected":true}},
                    {"r":"option","n":"Large","i":7,"p":{"selected":false}}]}]}]},
        {"r":"paragraph","i":8,"c":["Some","text"]},
        {"r":"button","n":"Go","i":9,"c":["Go"]},
        {"r":"Iframe","n":"Ads","i":10,"x":1}]},
        "frames":[{"i":10,"src":"https://ads.example/"}],"count":10}"#;

    #[test]
    fn compacting_drops_comment_lines_and_indentation_only() {
        let js = "// head\n(function f(o) {\n  // why\n  const u = 'http://x'; // kept\n\n  return /a\\/\\/b/.test(u);\n})";
        assert_eq!(
            compact_js(js),
            "(function f(o) {\nconst u = 'http://x'; // kept\nreturn /a\\/\\/b/.test(u);\n})"
        );
        // What compacting cannot keep whole is absent from the walker's
        // code: a template literal, a string continued with a trailing
        // backslash (either would lose its next line's indentation), a block
        // comment (a line in it starting with `//` would be dropped).
        for l in WALKER_JS.lines().map(str::trim) {
            if l.starts_with("//") {
                continue;
            }
            let code = l.split(" // ").next().unwrap_or("");
            assert!(
                !code.contains('`') && !code.ends_with('\\') && !l.contains("/*"),
                "snapshot.js: {l}"
            );
        }
        let c = compact_js(WALKER_JS);
        assert!(
            c.len() * 4 < WALKER_JS.len() * 3,
            "{} of {}",
            c.len(),
            WALKER_JS.len()
        );
        assert!(
            c.starts_with("(function hermesSnapshot(opts) {"),
            "{}",
            &c[..40]
        );
    }

    #[test]
    fn renders_like_the_ax_path() {
        let w = parse(&Value::String(FORM.into())).unwrap();
        assert_eq!(w.frames[0].i, 10);
        let mut refs = RefTable::default();
        let s = render(&w, &mut refs, 1, false);
        assert_eq!(
            s.text,
            "- heading \"Hello\" [level=1] [ref=e1]\n\
             - textbox \"Email\" [required] [ref=e2]: \"a@b\"\n\
             - combobox \"Size\" [collapsed] [ref=e3]: \"Small\":\n  \
               - option \"Small\" [selected] [ref=e4]\n  \
               - option \"Large\" [ref=e5]\n\
             - text: Some text\n\
             - button \"Go\" [ref=e6]\n\
             - iframe \"Ads\" [ref=e7]"
        );
        // Refs point at page-side ids; same document, same refs.
        assert_eq!(refs.resolve("@e2", 1).unwrap().1.backend, ref_key(0, 4));
        let again = render(&w, &mut refs, 1, false);
        assert_eq!(again.text, s.text);
    }

    #[test]
    fn a_node_is_a_string_or_an_object() {
        let w =
            parse(&json!({"tree": {"r": "RootWebArea", "c": ["a", {"r": "button", "n": "b"}]}}))
                .unwrap();
        let Node::El(root) = &w.tree else { panic!() };
        assert!(matches!(&root.c[0], Node::Text(t) if t == "a"));
        assert!(matches!(&root.c[1], Node::El(e) if e.r == "button" && e.n == "b"));
        let e = parse(&Value::String(r#"{"tree": {"r": "x", "c": [7]}}"#.into())).unwrap_err();
        assert!(
            e.to_string()
                .contains("a text run (string) or an element (object)"),
            "{e}"
        );
    }

    #[test]
    fn cross_origin_frames_are_grafted_with_their_own_ref_space() {
        let mut w = parse(&Value::String(FORM.into())).unwrap();
        let child: Walk = serde_json::from_str(
            r#"{"tree":{"r":"RootWebArea","n":"Ad","c":[{"r":"link","n":"Buy","i":4,"c":["Buy"]}]},"count":1}"#,
        )
        .unwrap();
        assert!(w.graft(10, child, 1));
        let mut refs = RefTable::default();
        let s = render(&w, &mut refs, 1, false);
        assert!(
            s.text
                .ends_with("- iframe \"Ads\" [ref=e7]:\n  - link \"Buy\" [ref=e8]"),
            "{}",
            s.text
        );
        let (_, e) = refs.resolve("@e8", 1).unwrap();
        assert_eq!(split_key(e.backend), (1, 4));
        let (_, e) = refs.resolve("@e2", 1).unwrap();
        assert_eq!(split_key(e.backend), (0, 4));
    }
}
