//! The browser toolset against a real Chromium, with pages served on loopback.
//! These tests fail (not skip) when Chromium is missing: tools/test.sh installs it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::support::browser::{
    Browsing, ExternalChrome, chromium_main, group_procs, page_server, procs_with, ref_of,
};
use super::support::common::{RawClient, TestEnv, is_error, poll_until, result_json, wait_exit};
use super::support::prereq::require_chromium;

/// Processes in process group `pgid` (zombies excluded).
fn group_members(pgid: i32) -> Vec<i32> {
    group_procs(pgid, "").into_iter().map(|(p, _)| p).collect()
}

fn wait_gone(marker: &str, pgid: i32, within: Duration) {
    poll_until(
        &format!("the end of every Chromium process (marker, group {pgid})"),
        within.as_secs(),
        || (procs_with(marker), group_members(pgid)),
        |(left, group)| left.is_empty() && group.is_empty(),
    );
}

fn line_of<'a>(snapshot: &'a str, needle: &str) -> &'a str {
    snapshot
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in snapshot:\n{snapshot}"))
}

#[test]
fn browser_form_flow_images_console_vision() {
    let pages = page_server();
    let mut b = Browsing::start("");
    // Chromium is not started before the first browser call.
    assert!(procs_with(&b.marker()).is_empty());
    let nav = b.ok("browser_navigate", json!({"url": pages.url("/form.html")}));
    assert_eq!(nav["title"], "Order form");
    assert_eq!(nav["url"], pages.url("/form.html"));
    let snap = nav["snapshot"].as_str().unwrap().to_string();
    assert!(nav["element_count"].as_u64().unwrap() >= 8, "{nav}");
    assert!(
        snap.contains("- heading \"Place an order\" [level=1] [ref="),
        "{snap}"
    );
    // Page text is redacted.
    assert!(!snap.contains("abcdefghijklmnopqrstuvwxyz0123"), "{snap}");
    // Every interactive element carries a ref.
    for needle in [
        "textbox \"Full name\"",
        "textbox \"Email\"",
        "combobox \"Size\"",
        "checkbox \"Gift wrap\"",
        "textbox \"Note\"",
        "button \"Submit order\"",
        "link \"Image gallery\"",
    ] {
        ref_of(&snap, needle);
    }
    let name = ref_of(&snap, "textbox \"Full name\"");
    let email = ref_of(&snap, "textbox \"Email\"");
    let size = ref_of(&snap, "combobox \"Size\"");
    let gift = ref_of(&snap, "checkbox \"Gift wrap\"");
    // `@eN` and `eN` both work.
    let t = b.ok(
        "browser_type",
        json!({"ref": format!("@{name}"), "text": "Ada Lovelace"}),
    );
    assert_eq!(t["element"], format!("@{name}"));
    assert_eq!(t["typed"], "Ada Lovelace");
    b.ok(
        "browser_type",
        json!({"ref": email, "text": "ada@example.com"}),
    );
    let sel = b.ok("browser_type", json!({"ref": size, "text": "Large"}));
    assert_eq!(sel["selected"], "Large");
    let bad = b.fail("browser_type", json!({"ref": size, "text": "Gigantic"}));
    assert!(bad["error"].as_str().unwrap().contains("Small"), "{bad}");
    let c = b.ok("browser_click", json!({"ref": gift}));
    assert_eq!(c["clicked"], format!("@{gift}"));
    let full = b.ok("browser_snapshot", json!({"full": true}));
    let fs = full["snapshot"].as_str().unwrap();
    assert!(
        line_of(fs, "textbox \"Full name\"").contains("Ada Lovelace"),
        "{fs}"
    );
    assert!(
        line_of(fs, "textbox \"Email\"").contains("ada@example.com"),
        "{fs}"
    );
    assert!(
        line_of(fs, "checkbox \"Gift wrap\"").contains("[checked]"),
        "{fs}"
    );
    assert!(
        fs.contains("[url="),
        "full snapshots show link targets: {fs}"
    );
    // Same document: refs are stable across snapshots.
    assert_eq!(ref_of(fs, "textbox \"Full name\""), name);
    // An expression, evaluated.
    let e = b.ok(
        "browser_console",
        json!({"expression": "document.getElementById('size').value"}),
    );
    assert_eq!(e["result"], "l");
    assert_eq!(e["result_type"], "str");
    let e = b.ok(
        "browser_console",
        json!({"expression": "window.counter + 1"}),
    );
    assert_eq!(e["result"], 8);
    assert_eq!(e["result_type"], "int");
    let e = b.ok(
        "browser_console",
        json!({"expression": "({a: [1, 2], b: 'x'})"}),
    );
    assert_eq!(e["result"], json!({"a": [1, 2], "b": "x"}));
    assert_eq!(e["result_type"], "dict");
    let e = b.fail("browser_console", json!({"expression": "document.body"}));
    assert!(e["error"].as_str().unwrap().contains("DOM node"), "{e}");
    let e = b.fail("browser_console", json!({"expression": "nosuchthing.x"}));
    assert!(e["error"].as_str().unwrap().contains("nosuchthing"), "{e}");
    // Console messages and a thrown error.
    let boom = ref_of(&snap, "button \"Break things\"");
    b.ok("browser_click", json!({"ref": boom}));
    let con = b.ok("browser_console", json!({}));
    let msgs = con["console_messages"].as_array().unwrap();
    assert!(
        msgs.iter().any(|m| m["type"] == "log"
            && m["text"] == "form page loaded 42"
            && m["source"] == "console"),
        "{con}"
    );
    assert!(
        msgs.iter()
            .any(|m| m["type"] == "warning" && m["text"].as_str().unwrap().contains("deprecated")),
        "{con}"
    );
    let errs = con["js_errors"].as_array().unwrap();
    assert!(
        errs.iter().any(|m| m["message"]
            .as_str()
            .unwrap()
            .contains("kaboom from button")
            && m["source"] == "exception"),
        "{con}"
    );
    assert_eq!(con["total_messages"].as_u64().unwrap() as usize, msgs.len());
    // Enter in a text field submits the form.
    b.ok("browser_type", json!({"ref": name, "text": "Ada Lovelace"}));
    assert_eq!(
        b.ok("browser_press", json!({"key": "Enter"}))["pressed"],
        "Enter"
    );
    let res = b.ok("browser_snapshot", json!({}));
    let rs = res["snapshot"].as_str().unwrap();
    assert!(
        rs.contains("Order received")
            && rs.contains("name: Ada Lovelace")
            && rs.contains("size: l")
            && rs.contains("gift: yes"),
        "{rs}"
    );
    // The form's refs are stale on the result page.
    let st = b.fail("browser_click", json!({"ref": name}));
    let msg = st["error"].as_str().unwrap();
    assert!(
        msg.contains("stale") && msg.contains("browser_snapshot"),
        "{msg}"
    );
    let un = b.fail("browser_click", json!({"ref": "@e9999"}));
    assert!(
        un["error"].as_str().unwrap().contains("Unknown ref @e9999"),
        "{un}"
    );
    let mal = b.fail("browser_click", json!({"ref": "submit"}));
    assert!(
        mal["error"]
            .as_str()
            .unwrap()
            .contains("not an element ref"),
        "{mal}"
    );
    // Back to the form, then submit by clicking the button.
    let back = b.ok("browser_back", json!({}));
    assert_eq!(back["url"], pages.url("/form.html"));
    let snap = b.ok("browser_snapshot", json!({}))["snapshot"]
        .as_str()
        .unwrap()
        .to_string();
    let name = ref_of(&snap, "textbox \"Full name\"");
    b.ok("browser_type", json!({"ref": name, "text": "Grace Hopper"}));
    b.ok(
        "browser_click",
        json!({"ref": ref_of(&snap, "button \"Submit order\"")}),
    );
    let rs = b.ok("browser_snapshot", json!({}))["snapshot"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(rs.contains("name: Grace Hopper"), "{rs}");
    // Images with sizes; data: URLs left out.
    let nav = b.ok(
        "browser_navigate",
        json!({"url": pages.url("/images.html")}),
    );
    assert_eq!(nav["title"], "Gallery");
    let imgs = b.ok("browser_get_images", json!({}));
    assert_eq!(imgs["count"], 2, "{imgs}");
    assert_eq!(
        imgs["images"][0],
        json!({"src": pages.url("/img/red.svg"), "alt": "Red box", "width": 120, "height": 80})
    );
    assert_eq!(imgs["images"][1]["width"], 64);
    // Scrolling moves the page by 500 px.
    assert_eq!(
        b.ok("browser_scroll", json!({"direction": "down"}))["scrolled"],
        "down"
    );
    assert_eq!(
        b.ok("browser_console", json!({"expression": "scrollY"}))["result"],
        500
    );
    b.ok("browser_scroll", json!({"direction": "up"}));
    assert_eq!(
        b.ok("browser_console", json!({"expression": "scrollY"}))["result"],
        0
    );
    let (err, bad) = b.call("browser_scroll", json!({"direction": "sideways"}));
    assert!(
        err && bad["error"].as_str().unwrap().contains("\"up\""),
        "{bad}"
    );
    // Console clear.
    let con = b.ok("browser_console", json!({"clear": true}));
    assert!(
        con["js_errors"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["message"].as_str().unwrap().contains("late failure")),
        "{con}"
    );
    let con = b.ok("browser_console", json!({}));
    assert_eq!(con["total_messages"], 0);
    assert_eq!(con["total_errors"], 0);
    // Vision: a screenshot as MCP image content, saved under cache/screenshots.
    let r = b.client.call_tool(
        "browser_vision",
        json!({"question": "What colour is the first box?", "annotate": true}),
    );
    assert!(!is_error(&r), "{r}");
    let v = result_json(&r);
    let path = PathBuf::from(v["screenshot_path"].as_str().unwrap());
    assert!(
        path.starts_with(b.env.hermes_home().join("cache/screenshots")),
        "{v}"
    );
    let png = std::fs::read(&path).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let img = r["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "image")
        .expect("image content");
    assert_eq!(img["mimeType"], "image/png");
    assert!(
        v["annotations"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["label"].as_str().unwrap().starts_with('[')),
        "{v}"
    );
    assert_eq!(v["question"], "What colour is the first box?");
}

/// The real-time test of the browser's per-call limits (`navigation_timeout: 3`,
/// unscaled: a server that never answers ends the navigation in real seconds).
#[test]
fn browser_blocked_urls_timeouts_and_truncation() {
    let pages = page_server();
    let mut b = Browsing::start(
        "browser:\n  navigation_timeout: 3\nsecurity:\n  website_blocklist:\n    enabled: true\n    domains: [\"blocked.example\"]\n",
    );
    let v = b.fail(
        "browser_navigate",
        json!({"url": "http://169.254.169.254/latest/meta-data/"}),
    );
    assert_eq!(v["error"], "Blocked: URL targets a cloud metadata endpoint");
    let v = b.fail(
        "browser_navigate",
        json!({"url": "http://metadata.google.internal/"}),
    );
    assert_eq!(v["error"], "Blocked: URL targets a cloud metadata endpoint");
    let v = b.fail(
        "browser_navigate",
        json!({"url": "https://example.org/?key=sk-ant-abcdefghijklmnopqrstuvwx"}),
    );
    assert!(
        v["error"].as_str().unwrap().contains("API key or token"),
        "{v}"
    );
    let v = b.fail(
        "browser_navigate",
        json!({"url": "http://blocked.example/page"}),
    );
    assert_eq!(v["blocked_by_policy"]["rule"], "blocked.example", "{v}");
    let v = b.fail("browser_navigate", json!({"url": "file:///etc/passwd"}));
    assert!(v["error"].as_str().unwrap().starts_with("Blocked"), "{v}");
    // Refusals happen before any browser starts.
    assert!(procs_with(&b.marker()).is_empty());
    // Loopback is allowed for the local browser; a redirect to metadata is not.
    let v = b.fail(
        "browser_navigate",
        json!({"url": pages.url("/to-metadata")}),
    );
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("redirect landed on a cloud metadata endpoint"),
        "{v}"
    );
    let cur = b.ok("browser_console", json!({"expression": "location.href"}));
    assert_eq!(cur["result"], "about:blank");
    let v = b.ok("browser_navigate", json!({"url": pages.url("/to-form")}));
    assert_eq!(v["url"], pages.url("/form.html"));
    // Before any snapshot in a fresh document, refs of the old one are stale.
    // A server that never answers: a clear timeout, and the browser stays usable.
    let t0 = Instant::now();
    let v = b.fail("browser_navigate", json!({"url": pages.url("/hang")}));
    assert!(v["error"].as_str().unwrap().contains("timed out"), "{v}");
    assert!(t0.elapsed() < Duration::from_secs(15));
    // A body that never ends: what arrived, with a warning.
    let v = b.ok("browser_navigate", json!({"url": pages.url("/slow")}));
    assert!(
        v["warning"]
            .as_str()
            .unwrap()
            .contains("did not finish loading"),
        "{v}"
    );
    assert!(
        v["snapshot"].as_str().unwrap().contains("Partial content"),
        "{v}"
    );
    // A 2,000-element page: cut at 15,000 characters at a line boundary, full text saved.
    let v = b.ok("browser_navigate", json!({"url": pages.url("/big?n=2000")}));
    let s = v["snapshot"].as_str().unwrap();
    assert!(s.chars().count() <= 15_000, "{}", s.chars().count());
    let note = s.lines().last().unwrap();
    assert!(
        note.contains("more lines truncated — full snapshot: read_file path=\""),
        "{note}"
    );
    let p = note
        .split("path=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    assert!(
        Path::new(p).starts_with(b.env.hermes_home().join("cache")),
        "{p}"
    );
    let full = std::fs::read_to_string(p).unwrap();
    assert!(full.contains("Item number 999"), "stored copy is complete");
    assert!(full.starts_with(s.split("\n\n[...").next().unwrap()));
    // restrict_evaluate is off by default.
    b.ok("browser_console", json!({"expression": "document.cookie"}));
}

#[test]
fn browser_restrict_evaluate_and_dialogs_must_respond() {
    let pages = page_server();
    let mut b = Browsing::start("browser:\n  restrict_evaluate: true\n");
    b.ok("browser_navigate", json!({"url": pages.url("/alert.html")}));
    let v = b.fail(
        "browser_console",
        json!({"expression": "document['coo' + 'kie']"}),
    );
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("browser.restrict_evaluate"),
        "{v}"
    );
    b.ok("browser_console", json!({"expression": "document.title"}));
    let snap = b.ok("browser_snapshot", json!({}))["snapshot"]
        .as_str()
        .unwrap()
        .to_string();
    // must_respond (the default): the alert stays open and is reported.
    let c = b.ok(
        "browser_click",
        json!({"ref": ref_of(&snap, "button \"Show alert\"")}),
    );
    assert_eq!(
        c["pending_dialogs"][0],
        json!({"type": "alert", "message": "Hello from alert"}),
        "{c}"
    );
    let blocked = b.fail("browser_snapshot", json!({}));
    assert!(
        blocked["error"].as_str().unwrap().contains("browser_press"),
        "{blocked}"
    );
    let p = b.ok("browser_press", json!({"key": "Enter"}));
    assert_eq!(p["dialogs_handled"][0]["action"], "accepted", "{p}");
    let s = b.ok("browser_snapshot", json!({}))["snapshot"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(s.contains("after alert"), "{s}");
    // A confirm dismissed with Escape.
    b.ok(
        "browser_click",
        json!({"ref": ref_of(&s, "button \"Ask\"")}),
    );
    b.ok("browser_press", json!({"key": "Escape"}));
    let s = b.ok("browser_snapshot", json!({}))["snapshot"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(s.contains("cancelled"), "{s}");
}

#[test]
fn browser_dialogs_auto_accept() {
    let pages = page_server();
    let mut b = Browsing::start("browser:\n  dialog_policy: auto_accept\n");
    let nav = b.ok("browser_navigate", json!({"url": pages.url("/alert.html")}));
    let snap = nav["snapshot"].as_str().unwrap().to_string();
    let c = b.ok(
        "browser_click",
        json!({"ref": ref_of(&snap, "button \"Ask\"")}),
    );
    assert!(c.get("pending_dialogs").is_none(), "{c}");
    let s = b.ok("browser_snapshot", json!({}));
    assert!(s["snapshot"].as_str().unwrap().contains("confirmed"), "{s}");
    // Reported once, with the result of the call during which it was handled.
    let handled = if c.get("dialogs_handled").is_some() {
        &c
    } else {
        &s
    };
    assert_eq!(
        handled["dialogs_handled"][0],
        json!({"type": "confirm", "message": "Proceed?", "action": "accepted"}),
        "{c} {s}"
    );
}

#[test]
fn browser_crashed_tab_recovers_on_navigate() {
    let pages = page_server();
    let mut b = Browsing::start("");
    b.ok("browser_navigate", json!({"url": pages.url("/form.html")}));
    let (_, pgid) = chromium_main(&b.marker());
    let renderers: Vec<i32> = group_procs(pgid, "--type=renderer")
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    assert!(!renderers.is_empty(), "no renderer process found");
    // Only pages' renderers: no omnibox WebUI popup loading beside them
    // (a headless Chromium still preloads one unless its features are off).
    let webui = group_procs(pgid, "--top-chrome-webui");
    assert!(webui.is_empty(), "a browser-UI renderer runs: {webui:?}");
    for p in &renderers {
        unsafe { libc::kill(*p, libc::SIGKILL) };
    }
    let (_, err) = poll_until(
        "the crash reported by browser_snapshot",
        20,
        || b.call("browser_snapshot", json!({})),
        |(is_err, v)| *is_err && v["error"].as_str().unwrap_or("").contains("crashed"),
    );
    assert!(
        err["error"].as_str().unwrap().contains("browser_navigate"),
        "{err}"
    );
    let v = b.ok("browser_navigate", json!({"url": pages.url("/form.html")}));
    assert_eq!(v["title"], "Order form");
}

fn no_orphans(sigterm: bool) {
    let pages = page_server();
    let mut b = Browsing::start("");
    b.ok("browser_navigate", json!({"url": pages.url("/form.html")}));
    let marker = b.marker();
    let (_, pgid) = chromium_main(&marker);
    assert!(
        group_members(pgid).len() >= 2,
        "expected Chromium helper processes too"
    );
    let Browsing { env: _env, client } = b;
    let status = if sigterm {
        unsafe { libc::kill(client.child.id() as i32, libc::SIGTERM) };
        let mut client = client;
        wait_exit(&mut client.child, "serve after SIGTERM", 15)
    } else {
        client.finish(Duration::from_secs(15))
    };
    let _ = status;
    wait_gone(&marker, pgid, Duration::from_secs(5));
    // The temporary profile is removed too.
    let left: Vec<_> = std::fs::read_dir(&marker)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().contains("hermes-mcp-chromium-"))
        .collect();
    assert!(left.is_empty(), "profile left behind: {left:?}");
}

#[test]
fn browser_no_orphan_chromium_after_eof() {
    no_orphans(false);
}

#[test]
fn browser_no_orphan_chromium_after_sigterm() {
    no_orphans(true);
}

/// The real-time test of `browser.inactivity_timeout` (unscaled: Hermes'
/// 5 s floor, in real Chromium).
#[test]
fn browser_idle_session_closes_and_relaunches() {
    let pages = page_server();
    let mut b = Browsing::start("browser:\n  inactivity_timeout: 5\n");
    b.ok("browser_navigate", json!({"url": pages.url("/form.html")}));
    let (_, pgid) = chromium_main(&b.marker());
    wait_gone(&b.marker(), pgid, Duration::from_secs(12));
    let v = b.fail("browser_snapshot", json!({}));
    assert!(
        v["error"].as_str().unwrap().contains("browser_navigate"),
        "{v}"
    );
    b.ok("browser_navigate", json!({"url": pages.url("/form.html")}));
}

#[test]
fn browser_unavailable_without_chromium_names_the_fix() {
    let env = TestEnv::new();
    let mut cmd = env.cmd();
    cmd.env("PATH", "/nonexistent-bin");
    let mut c = RawClient::spawn(cmd);
    c.initialize();
    let list = c.request("tools/list", json!({}));
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(!names.contains(&"browser_navigate"), "{names:?}");
    let r = c.call_tool("browser_navigate", json!({"url": "http://127.0.0.1:1/"}));
    assert!(is_error(&r));
    let msg = result_json(&r)["error"].as_str().unwrap().to_string();
    assert!(
        msg.contains("apt-get install chromium")
            && msg.contains("CHROME_PATH")
            && msg.contains("browser.executable"),
        "{msg}"
    );
    drop(c);
    let mut cmd = env.cmd();
    cmd.env("CHROME_PATH", "/nonexistent/chrome");
    let mut c = RawClient::spawn(cmd);
    c.initialize();
    let r = c.call_tool("browser_snapshot", json!({}));
    assert!(
        result_json(&r)["error"]
            .as_str()
            .unwrap()
            .contains("CHROME_PATH=/nonexistent/chrome"),
        "{r}"
    );
}

#[test]
fn browser_tool_schemas_match_hermes() {
    require_chromium();
    let env = TestEnv::new();
    let mut c = RawClient::spawn(env.cmd());
    c.initialize();
    let list = c.request("tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools
        .iter()
        .filter_map(|t| t["name"].as_str())
        .filter(|n| n.starts_with("browser_"))
        .collect();
    assert_eq!(
        names,
        [
            "browser_navigate",
            "browser_snapshot",
            "browser_click",
            "browser_type",
            "browser_scroll",
            "browser_back",
            "browser_press",
            "browser_get_images",
            "browser_vision",
            "browser_console"
        ]
    );
    let t = |n: &str| tools.iter().find(|t| t["name"] == n).unwrap().clone();
    assert_eq!(
        t("browser_scroll")["inputSchema"]["properties"]["direction"]["enum"],
        json!(["up", "down"])
    );
    assert_eq!(
        t("browser_type")["inputSchema"]["required"],
        json!(["ref", "text"])
    );
    assert_eq!(
        t("browser_vision")["inputSchema"]["properties"]["annotate"]["default"],
        json!(false)
    );
    let _ = Command::new("true");
}

#[test]
fn browser_attaches_over_cdp_url_with_the_shared_private_address_policy() {
    let pages = page_server();
    let chrome = ExternalChrome::start();
    let cdp = format!("http://127.0.0.1:{}", chrome.port);
    // Attached browsers may live elsewhere: private addresses follow the shared policy (blocked by default).
    let mut b = Browsing::start(&format!("browser:\n  cdp_url: \"{cdp}\"\n"));
    let v = b.fail("browser_navigate", json!({"url": pages.url("/form.html")}));
    assert!(
        v["error"].as_str().unwrap().contains("private or internal"),
        "{v}"
    );
    drop(b);
    let mut b = Browsing::start(&format!(
        "browser:\n  cdp_url: \"{cdp}\"\nsecurity:\n  allow_private_urls: true\n"
    ));
    let v = b.ok("browser_navigate", json!({"url": pages.url("/form.html")}));
    assert_eq!(v["title"], "Order form");
    // No Chromium of our own was launched.
    assert!(procs_with(&b.marker()).is_empty());
    let Browsing { env: _env, client } = b;
    client.finish(Duration::from_secs(15));
    // The user's browser keeps running after the server exits: nothing to
    // wait for, so a short sleep gives a wrongly closed browser time to go.
    std::thread::sleep(Duration::from_millis(200));
    let mut chrome = chrome;
    assert!(
        chrome.child.try_wait().unwrap().is_none(),
        "attached browser was closed"
    );
    // ... and our tab is gone from it.
    let text = chrome.targets();
    let targets: Value = serde_json::from_str(&text).expect("/json/list is JSON");
    let titles: Vec<&str> = targets
        .as_array()
        .expect("a list of targets")
        .iter()
        .filter_map(|t| t["title"].as_str())
        .collect();
    // The user's own tab is still listed; ours is not.
    assert!(!titles.is_empty(), "{text}");
    assert!(
        !titles.contains(&"Order form"),
        "our tab was left open: {text}"
    );
}

#[test]
fn browser_killed_browser_is_relaunched_on_navigate() {
    let pages = page_server();
    let mut b = Browsing::start("");
    b.ok("browser_navigate", json!({"url": pages.url("/form.html")}));
    let (_, pgid) = chromium_main(&b.marker());
    unsafe { libc::kill(-pgid, libc::SIGKILL) };
    wait_gone(&b.marker(), pgid, Duration::from_secs(10));
    // Once the server has seen the browser go, a call says to navigate.
    poll_until(
        "browser_snapshot failing with a pointer to browser_navigate",
        10,
        || b.call("browser_snapshot", json!({})),
        |(err, v)| {
            *err && v["error"]
                .as_str()
                .unwrap_or("")
                .contains("browser_navigate")
        },
    );
    let v = b.ok("browser_navigate", json!({"url": pages.url("/form.html")}));
    assert_eq!(v["title"], "Order form");
}
