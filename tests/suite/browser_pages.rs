//! The parts of the web the in-page snapshot walker has to see:
//! iframes (same-origin, cross-origin from a second loopback port, and a
//! cross-site one on 127.0.0.2), open shadow roots, `<dialog>`/`aria-modal` content,
//! pop-ups and `target=_blank` tabs, and long snapshots summarised by an
//! auxiliary model served on loopback. Real Chromium, loopback only.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::support::browser::{Browsing, Others, ref_of, serve};
use super::support::fake::{Resp, TestServer};

const INNER: &str = r#"<!doctype html><title>Inner {who}</title>
<input aria-label="Field {who}">
<button onclick="document.getElementById('out').textContent='clicked {who}: '+document.querySelector('input').value">Go {who}</button>
<p id="out">waiting {who}</p>"#;

const FRAMES: &str = r#"<!doctype html><title>Frames</title><h1>Frames</h1>
<iframe title="Same" src="/inner.html?who=same" width="400" height="120"></iframe>
<iframe title="Cross" src="http://127.0.0.1:{B}/inner.html?who=cross" width="400" height="120"></iframe>
"#;

const SHADOW: &str = r#"<!doctype html><title>Shadow</title><h1>Widgets</h1>
<fancy-card><span slot="title">Slotted title</span></fancy-card>
<script>
customElements.define('fancy-card', class extends HTMLElement {
  constructor() {
    super();
    const r = this.attachShadow({mode: 'open'});
    r.innerHTML = '<h2><slot name="title"></slot></h2><button id="b">Shadow button</button><p id="o">not pressed</p>';
    r.getElementById('b').onclick = () => { r.getElementById('o').textContent = 'shadow pressed'; };
  }
});
</script>
<div role="dialog" aria-modal="true" aria-label="Cookie consent"><p>We use cookies.</p><button>Accept all</button></div>
<button onclick="document.getElementById('settings').showModal()">Open settings</button>
<dialog id="settings" aria-label="Settings"><label>Nickname <input></label><button onclick="this.closest('dialog').close()">Close settings</button></dialog>"#;

const POPUPS: &str = r#"<!doctype html><title>Opener</title><h1>Opener</h1>
<a href="/opened.html?who=link" target="_blank">Open in new tab</a>
<button onclick="window.open('/opened.html?who=script')">Pop up</button>"#;

const OPENED: &str = r#"<!doctype html><title>Opened {who}</title><h1>New tab from {who}</h1><button>Inside {who}</button>"#;

/// The page server (127.0.0.1), a second port on 127.0.0.1 (cross-origin,
/// same site) and one on 127.0.0.2 (cross-site).
fn two_servers() -> (u16, u16) {
    let others: Others = Arc::new(Mutex::new((0, 0)));
    let pages = || {
        vec![
            ("/inner.html", INNER.to_string()),
            ("/frames.html", FRAMES.to_string()),
            ("/shadow.html", SHADOW.to_string()),
            ("/popups.html", POPUPS.to_string()),
            ("/opened.html", OPENED.to_string()),
        ]
    };
    let a = serve("127.0.0.1", pages(), others.clone());
    let b = serve("127.0.0.1", pages(), others.clone());
    let c = serve("127.0.0.2", pages(), others.clone());
    *others.lock().unwrap() = (b, c);
    (a, b)
}

fn snap(v: &Value) -> String {
    v["snapshot"].as_str().unwrap_or_default().to_string()
}

/// Indentation (in spaces) of the line containing `needle`.
fn indent_of(snapshot: &str, needle: &str) -> usize {
    let l = snapshot
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in:\n{snapshot}"));
    l.len() - l.trim_start().len()
}

#[test]
fn browser_iframes_same_and_cross_origin_are_in_the_snapshot_and_act() {
    let (a, _b) = two_servers();
    let mut b = Browsing::start("");
    let nav = b.ok(
        "browser_navigate",
        json!({"url": format!("http://127.0.0.1:{a}/frames.html")}),
    );
    let s = snap(&nav);
    for who in ["same", "cross"] {
        // Each frame's content sits under its iframe line.
        let frame_line = match who {
            "same" => "iframe \"Same\"",
            _ => "iframe \"Cross\"",
        };
        assert!(
            indent_of(&s, &format!("textbox \"Field {who}\"")) > indent_of(&s, frame_line),
            "{s}"
        );
        let field = ref_of(&s, &format!("textbox \"Field {who}\""));
        let go = ref_of(&s, &format!("button \"Go {who}\""));
        b.ok(
            "browser_type",
            json!({"ref": field, "text": format!("hello {who}")}),
        );
        b.ok("browser_click", json!({"ref": go}));
    }
    let after = snap(&b.ok("browser_snapshot", json!({})));
    for who in ["same", "cross"] {
        assert!(
            after.contains(&format!("clicked {who}: hello {who}")),
            "{who}: {after}"
        );
    }
    // Refs stay the same across snapshots of one document, frames included.
    assert_eq!(
        ref_of(&after, "textbox \"Field cross\""),
        ref_of(&s, "textbox \"Field cross\"")
    );
}

#[test]
fn browser_shadow_dom_and_modal_dialogs() {
    let (a, _b) = two_servers();
    let mut b = Browsing::start("");
    let nav = b.ok(
        "browser_navigate",
        json!({"url": format!("http://127.0.0.1:{a}/shadow.html")}),
    );
    let s = snap(&nav);
    assert!(s.contains("Slotted title"), "{s}");
    let btn = ref_of(&s, "button \"Shadow button\"");
    let consent = ref_of(&s, "dialog \"Cookie consent\"");
    assert!(!consent.is_empty());
    assert!(
        indent_of(&s, "button \"Accept all\"") > indent_of(&s, "dialog \"Cookie consent\""),
        "{s}"
    );
    // A closed <dialog> is not shown.
    assert!(!s.contains("Close settings"), "{s}");
    b.ok("browser_click", json!({"ref": btn}));
    let open = ref_of(&s, "button \"Open settings\"");
    b.ok("browser_click", json!({"ref": open}));
    let s2 = snap(&b.ok("browser_snapshot", json!({})));
    assert!(s2.contains("shadow pressed"), "{s2}");
    let field = ref_of(&s2, "textbox \"Nickname\"");
    assert!(
        indent_of(&s2, "textbox \"Nickname\"") > indent_of(&s2, "dialog \"Settings\""),
        "{s2}"
    );
    b.ok("browser_type", json!({"ref": field, "text": "ada"}));
    let close = ref_of(&s2, "button \"Close settings\"");
    b.ok("browser_click", json!({"ref": close}));
    let s3 = snap(&b.ok("browser_snapshot", json!({})));
    assert!(!s3.contains("Close settings"), "{s3}");
}

#[test]
fn browser_new_tabs_and_popups_continue_the_session() {
    let (a, _b) = two_servers();
    let mut b = Browsing::start("");
    let url = format!("http://127.0.0.1:{a}/popups.html");
    let s = snap(&b.ok("browser_navigate", json!({"url": url})));
    let link = ref_of(&s, "link \"Open in new tab\"");
    let c = b.ok("browser_click", json!({"ref": link}));
    assert_eq!(c["new_tab"]["title"], "Opened link", "{c}");
    assert!(c["note"].as_str().unwrap().contains("new tab"), "{c}");
    let s2 = snap(&b.ok("browser_snapshot", json!({})));
    assert!(s2.contains("New tab from link"), "{s2}");
    ref_of(&s2, "button \"Inside link\"");
    // Refs of the previous tab are stale now.
    let stale = b.fail("browser_click", json!({"ref": link}));
    assert!(
        stale["error"].as_str().unwrap().contains("stale"),
        "{stale}"
    );
    // window.open from a script.
    let s = snap(&b.ok("browser_navigate", json!({"url": url})));
    let pop = ref_of(&s, "button \"Pop up\"");
    let c = b.ok("browser_click", json!({"ref": pop}));
    assert_eq!(c["new_tab"]["title"], "Opened script", "{c}");
    let s3 = snap(&b.ok("browser_snapshot", json!({})));
    assert!(s3.contains("New tab from script"), "{s3}");
}

/// A loopback OpenAI-compatible chat-completions server answering `reply`.
fn chat_server(reply: &'static str) -> TestServer {
    TestServer::start(move |_| {
        Resp::json(
            200,
            json!({"id": "x", "object": "chat.completion", "model": "summarizer",
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": reply}}]}),
        )
    })
}

#[test]
fn browser_long_snapshots_are_summarised_by_the_auxiliary_model() {
    let pages = super::support::browser::page_server();
    let chat = chat_server("Item number 7 is the link [ref=e9].");
    let port = chat.port();
    let mut b = Browsing::start(&format!(
        "auxiliary:\n  web_extract:\n    provider: custom\n    base_url: http://127.0.0.1:{port}/v1\n    model: summarizer\n"
    ));
    // browser_navigate truncates (as Hermes' does); browser_snapshot summarises.
    let nav = b.ok("browser_navigate", json!({"url": pages.url("/big?n=4000")}));
    assert!(snap(&nav).contains("more lines truncated"), "{nav}");
    assert!(chat.reqs().is_empty());
    let s = snap(&b.ok("browser_snapshot", json!({"task": "open item 7"})));
    assert!(
        s.starts_with("Item number 7 is the link [ref=e9].\n\n[Summarized from a "),
        "{s}"
    );
    let path = s
        .split("Full snapshot saved to: ")
        .nth(1)
        .and_then(|r| r.split(" — ").next())
        .unwrap();
    assert!(
        std::fs::read_to_string(path)
            .unwrap()
            .contains("link \"Item number 1999\"")
    );
    let req = chat.reqs()[0].json_or_null();
    assert_eq!(req["model"], "summarizer");
    let prompt = req["messages"][0]["content"].as_str().unwrap();
    assert!(
        prompt.contains("The user's task is: open item 7"),
        "{prompt}"
    );
    assert!(prompt.contains("Page Snapshot:\n- heading \"Big page\""));
    // Without a task: Hermes' general summary prompt.
    b.ok("browser_snapshot", json!({}));
    let req = chat.reqs()[1].json_or_null();
    assert!(
        req["messages"][0]["content"]
            .as_str()
            .unwrap()
            .starts_with("Summarize this page snapshot")
    );
}

/// Labels (several per control, wrapping, `for` with a duplicated id, in a
/// shadow root) and generated content from every kind of rule: the walker
/// reads labels from one scan per tree scope and asks for `::before` and
/// `::after` only where a readable rule that sets `content` can match.
const LABELS: &str = r#"<!doctype html><title>Labels</title>
<label for="a1">First label</label><input id="a1"><label for="a1">Second label</label>
<label>Wrapped <input></label>
<label for="d1">Duplicate id</label><input id="d1" value="one"><input id="d1" value="two">
<label for="missing">For nothing</label><div id="missing">plain</div>
<x-field></x-field>
<script>customElements.define('x-field', class extends HTMLElement { constructor() { super();
  this.attachShadow({mode: 'open'}).innerHTML = '<label for="s1">Shadow label</label><input id="s1">'; } });</script>"#;

const GENERATED: &str = r#"<!doctype html><title>Generated</title>
<style>
.a::before { content: "A-before" }
.b:after { content: "B-after" }
@media screen { @supports (display: grid) { .c::before { content: "C-media" } } }
.g ::before { content: "G-descendant" }
.colour::before { color: red }
.v::before { content: var(--t) } .v { --t: "V-variable" }
.up { text-transform: uppercase }
</style>
{XO}
<p class="a">one</p><p class="b">two</p><p class="c">three</p><p class="e">four</p>
<div class="f">five</div><div class="g"><span>six</span></div><p class="colour">seven</p>
<p class="v">eight</p><p>Quoted <q>inner</q> text</p><p class="xo">nine</p><p id="adopted">ten</p>
<x-host><b>slotted</b></x-host><div id="div-host"></div>
<p class="up">upper <a href="x.html">case link</a> <span> </span></p>
<iframe title="Inner" srcdoc="<style>.i::before { content: 'FRAME-before' }</style><p class=i>in frame</p>"></iframe>
<script>customElements.define('x-host', class extends HTMLElement { constructor() { super();
  this.attachShadow({mode: 'open'}).innerHTML = '<style>:host::before{content:"HOST-before"} .in::after{content:"IN-shadow"} ::slotted(b)::after{content:"SLOTTED-after"}</style><p class="in">inside</p><slot></slot>'; } });
document.getElementById('div-host').attachShadow({mode: 'open'}).innerHTML = '<style>:host::after{content:"DIV-HOST-after"}</style>';
const sheet = new CSSStyleSheet(); sheet.replaceSync('#adopted::after { content: "ADOPTED-after" }');
document.adoptedStyleSheets = [sheet];</script>"#;

/// Rules whose selectors are relative to another rule's (nesting, `@scope`).
const RELATIVE: &str = r#"<style>.e { color: red; &::before { content: "E-nested" } }
@scope (.f) { :scope::after { content: "F-scoped" } }</style>"#;

#[test]
fn browser_labels_and_generated_content_are_in_the_snapshot() {
    // A stylesheet from another origin, which the page's script cannot read.
    let css = TestServer::start_on("127.0.0.1", |_| {
        Resp::new(200, "text/css", ".xo::after { content: \"XO-after\" }")
    });
    let xo = format!(
        r#"<link rel="stylesheet" href="http://127.0.0.1:{}/x.css">"#,
        css.port()
    );
    let others: Others = Arc::new(Mutex::new((0, 0)));
    let port = serve(
        "127.0.0.1",
        vec![
            ("/labels.html", LABELS.to_string()),
            ("/generated.html", GENERATED.replace("{XO}", "")),
            ("/generated-xo.html", GENERATED.replace("{XO}", &xo)),
            (
                "/generated-relative.html",
                GENERATED.replace("{XO}", RELATIVE),
            ),
        ],
        others,
    );
    let mut b = Browsing::start("");
    let url = |p: &str| json!({"url": format!("http://127.0.0.1:{port}/{p}")});
    let s = snap(&b.ok("browser_navigate", url("labels.html")));
    for line in [
        "textbox \"First label Second label\"",
        "textbox \"Wrapped\"",
        "textbox \"Duplicate id\" [ref=",
        "textbox \"Shadow label\"",
    ] {
        assert!(s.contains(line), "{line}: {s}");
    }
    // The second element with the duplicated id has no label.
    assert!(s.contains("textbox [ref="), "{s}");
    for page in [
        "generated.html",
        "generated-xo.html",
        "generated-relative.html",
    ] {
        let s = snap(&b.ok("browser_navigate", url(page)));
        let generated = [
            "A-before",
            "B-after",
            "C-media",
            "G-descendant",
            "V-variable",
            "\u{201c}",
            "HOST-before",
            "IN-shadow",
            "ADOPTED-after",
            "SLOTTED-after",
            "DIV-HOST-after",
        ];
        for text in generated {
            assert!(s.contains(text), "{page}: {text}: {s}");
        }
        // The other origin's sheet applies too (the walker cannot read it, so
        // it asks every element).
        assert_eq!(s.contains("XO-after"), page == "generated-xo.html", "{s}");
        let relative = page == "generated-relative.html";
        assert_eq!(s.contains("E-nested"), relative, "{s}");
        assert_eq!(s.contains("F-scoped"), relative, "{s}");
        // Text takes its element's text-transform, a link's name too, and a
        // same-origin frame's own rules apply inside it.
        for line in ["- text: UPPER", "link \"CASE LINK\"", "FRAME-before"] {
            assert!(s.contains(line), "{page}: {line}: {s}");
        }
        // A rule that sets no content adds no text.
        assert!(s.lines().any(|l| l.trim_start() == "- text: seven"), "{s}");
    }
}
