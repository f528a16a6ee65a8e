//! A page whose script never yields is abandoned: the navigation to it ends
//! within its timeout saying so, and the next navigation to the same origin
//! loads in a fresh tab, after which the other tools work.

use std::time::{Duration, Instant};

use serde_json::json;

use super::support::common::TIME_SCALE;
use super::support::fake::{Resp, TestServer};
use super::support::prereq::require_chromium;
use super::support::serve::Serve;

#[test]
fn browser_spinning_page_is_abandoned_and_the_next_navigation_works() {
    let pages = TestServer::start(|req| match req.path.as_str() {
        "/spin" => Resp::html(
            "<!doctype html><html><head><title>Spin</title></head><body><p>spinning</p><script>while(true){}</script></body></html>",
        ),
        _ => Resp::html(
            "<!doctype html><html><head><title>Fine page</title></head><body><h1>Still here</h1><a href=\"/next\">Next</a></body></html>",
        ),
    });
    // Navigation timeout 10 s; commands 5 s; time at 1/2 (the real-time test
    // of these limits is browser::browser_blocked_urls_timeouts_and_truncation).
    require_chromium();
    let mut b = Serve::new()
        .config("browser:\n  navigation_timeout: 10\n  command_timeout: 5\n")
        .var(TIME_SCALE, "0.5")
        .private_tmp()
        .start();
    b.ok("browser_navigate", json!({"url": pages.url("/fine")}));
    let started = Instant::now();
    let (failed, spin) = b.call("browser_navigate", json!({"url": pages.url("/spin")}));
    let spin_took = started.elapsed();
    let started = Instant::now();
    let v = b.ok("browser_navigate", json!({"url": pages.url("/fine?again")}));
    let took = started.elapsed();
    assert_eq!(v["title"], "Fine page", "{v}");
    assert!(
        v["snapshot"]
            .as_str()
            .unwrap_or_default()
            .contains("Still here"),
        "{v}"
    );
    // Generous bounds around the 10 s navigation timeout (each call used to
    // take a minute and load nothing).
    assert!(
        took < Duration::from_secs(30),
        "the navigation after the spinning page took {took:?}"
    );
    assert!(
        spin_took < Duration::from_secs(40),
        "the spinning page's navigation took {spin_took:?}: {spin}"
    );
    let s = b.ok("browser_snapshot", json!({}));
    assert!(
        s["snapshot"].as_str().unwrap_or_default().contains("Next"),
        "{s}"
    );
    let c = b.ok("browser_console", json!({"expression": "document.title"}));
    assert_eq!(c["result"], "Fine page", "{c}");
    // The spinning page's own navigation said what happened.
    assert!(failed, "{spin}");
    assert!(
        spin["error"]
            .as_str()
            .unwrap_or_default()
            .contains("stopped responding"),
        "{spin}"
    );
}
