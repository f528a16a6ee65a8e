//! The `browser_snapshot` that follows `browser_navigate` reuses
//! navigate's snapshot when the page provably has not changed, and walks
//! again whenever it may have (a script's DOM change, an action, a value set
//! by a script without a DOM mutation). Real Chromium, loopback only.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::support::browser::{Browsing, Others, ref_of, serve};
use super::support::common::poll_until;

const STILL: &str = r#"<!doctype html><title>Still</title><h1>Quiet page</h1>
<p>Nothing moves here.</p><label>Name <input id="n"></label><button id="go" onclick="document.getElementById('out').textContent='clicked!'">Go</button><p id="out">waiting</p>"#;

const LATER: &str = r#"<!doctype html><title>Later</title><h1>Changing page</h1><p id="p">before</p>
<script>setTimeout(() => { document.getElementById('p').textContent = 'after the timer'; }, 300);</script>"#;

const VALUE: &str = r#"<!doctype html><title>Value</title><label>City <input id="c" value="start"></label>
<label><input type="checkbox" id="k"> Agree</label>
<script>setTimeout(() => { document.getElementById('c').value = 'scripted'; document.getElementById('k').checked = true; }, 300);</script>"#;

fn pages() -> u16 {
    let others: Others = Arc::new(Mutex::new((0, 0)));
    serve(
        "127.0.0.1",
        vec![
            ("/still.html", STILL.to_string()),
            ("/later.html", LATER.to_string()),
            ("/value.html", VALUE.to_string()),
        ],
        others,
    )
}

fn snap(v: &Value) -> String {
    v["snapshot"].as_str().unwrap_or_default().to_string()
}

/// How many times the walker has run in this document.
fn walks(b: &mut Browsing) -> i64 {
    let e = b.ok(
        "browser_console",
        json!({"expression": "window.__hermesWatch.walks"}),
    );
    e["result"].as_i64().unwrap_or_else(|| panic!("{e}"))
}

#[test]
fn browser_snapshot_after_navigate_reuses_the_walk_until_something_changes() {
    let port = pages();
    let mut b = Browsing::start("");
    let nav = b.ok(
        "browser_navigate",
        json!({"url": format!("http://127.0.0.1:{port}/still.html")}),
    );
    let s1 = snap(&nav);
    assert!(s1.contains("Quiet page"), "{s1}");
    let again = b.ok("browser_snapshot", json!({}));
    assert_eq!(snap(&again), s1);
    assert_eq!(again["element_count"], nav["element_count"]);
    // The walker ran once for both.
    assert_eq!(walks(&mut b), 1);
    // A full snapshot is another walk; the console call above dropped the cache anyway.
    let full = b.ok("browser_snapshot", json!({"full": true}));
    assert!(snap(&full).contains("Quiet page"));
    assert_eq!(walks(&mut b), 2);

    // After typing and clicking, the snapshot shows the change.
    let field = ref_of(&s1, "textbox \"Name\"");
    b.ok("browser_type", json!({"ref": field, "text": "ada"}));
    let s2 = snap(&b.ok("browser_snapshot", json!({})));
    assert!(
        s2.contains("textbox \"Name\"") && s2.contains("ada"),
        "{s2}"
    );
    let go = ref_of(&s1, "button \"Go\"");
    b.ok("browser_click", json!({"ref": go}));
    let s3 = snap(&b.ok("browser_snapshot", json!({})));
    assert!(s3.contains("clicked!"), "{s3}");
    // Refs from the reused snapshot still act.
    assert_eq!(ref_of(&s3, "button \"Go\""), go);
}

#[test]
fn browser_snapshot_sees_a_script_change_after_navigate() {
    let port = pages();
    let mut b = Browsing::start("");
    let nav = b.ok(
        "browser_navigate",
        json!({"url": format!("http://127.0.0.1:{port}/later.html")}),
    );
    assert!(snap(&nav).contains("before"), "{nav}");
    // The page's timer fires 0.3 s in; a snapshot taken from a stale copy
    // would never see it.
    let s = poll_until(
        "a snapshot with the timer's text",
        10,
        || snap(&b.ok("browser_snapshot", json!({}))),
        |s| s.contains("after the timer"),
    );
    assert!(!s.contains("before"), "{s}");
}

#[test]
fn browser_snapshot_sees_values_a_script_set_without_a_dom_change() {
    let port = pages();
    let mut b = Browsing::start("");
    let nav = b.ok(
        "browser_navigate",
        json!({"url": format!("http://127.0.0.1:{port}/value.html")}),
    );
    let s0 = snap(&nav);
    assert!(s0.contains("start"), "{s0}");
    let s = poll_until(
        "a snapshot with the scripted value",
        10,
        || snap(&b.ok("browser_snapshot", json!({}))),
        |s| s.contains("scripted"),
    );
    assert!(!s.contains("start"), "{s}");
    let agree = s
        .lines()
        .find(|l| l.contains("checkbox \"Agree\""))
        .unwrap();
    assert!(agree.contains("checked"), "{s}");
    assert_ne!(
        s0.lines()
            .find(|l| l.contains("checkbox \"Agree\""))
            .unwrap(),
        agree,
        "{s0}"
    );
}
