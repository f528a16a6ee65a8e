//! Every request a page makes in the local Chromium obeys the metadata rule
//! (subresources, workers, beacons, WebSockets, redirects), and so does every
//! configured browser endpoint (`BROWSER_CDP_URL`). Fake metadata servers
//! listen on `169.254.169.254` and `100.100.100.200`, added as aliases of
//! `lo` inside the loopback-only network namespace the browser tests run in;
//! a name that resolves to metadata comes from an `/etc/hosts` bound over
//! the real one in a mount namespace of the server's own.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;

use super::support::common::{RawClient, TestEnv, is_error, poll_until, result_json};
use super::support::fake::{Req, Resp, TestServer};
use super::support::prereq::require_chromium;

/// The name the server's `/etc/hosts` points at 169.254.169.254.
const META_NAME: &str = "meta.hermes-test.example";

/// Make the metadata addresses local. Fails (never skips) unless this
/// process is root in a network namespace with no interface but `lo`, so a
/// real network is never touched.
pub fn metadata_aliases() {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let euid = status
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .and_then(|l| l.split_whitespace().nth(2))
        .unwrap_or_default()
        .to_string();
    assert_eq!(
        euid, "0",
        "these tests add 169.254.169.254 to lo: run them as root in a loopback-only namespace (unshare -n sh -c 'ip link set lo up && exec \"$@\"' sh cargo test ...)"
    );
    let dev = std::fs::read_to_string("/proc/net/dev").unwrap();
    let ifaces: Vec<&str> = dev
        .lines()
        .skip(2)
        .filter_map(|l| l.split(':').next())
        .map(str::trim)
        .collect();
    assert_eq!(
        ifaces,
        ["lo"],
        "refusing to add metadata addresses outside a loopback-only network namespace (interfaces: {ifaces:?}); run under `unshare -n`"
    );
    for ip in ["169.254.169.254/32", "100.100.100.200/32"] {
        let shown = Command::new("ip")
            .args(["-o", "addr", "show", "dev", "lo"])
            .output()
            .expect("ip (iproute2) is needed to add loopback aliases");
        if String::from_utf8_lossy(&shown.stdout).contains(&format!(" {ip} ")) {
            continue;
        }
        let out = Command::new("ip")
            .args(["addr", "add", ip, "dev", "lo"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() || err.contains("File exists"),
            "cannot add {ip} to lo: {err}"
        );
    }
}

/// A fake metadata server: counts every connection and what was asked.
pub struct MetaServer {
    pub hits: Arc<AtomicUsize>,
    pub asked: Arc<Mutex<Vec<String>>>,
}

impl MetaServer {
    pub fn start(ip: &str, port: u16) -> MetaServer {
        let l = TcpListener::bind((ip, port))
            .unwrap_or_else(|e| panic!("cannot listen on {ip}:{port}: {e}"));
        let hits = Arc::new(AtomicUsize::new(0));
        let asked = Arc::new(Mutex::new(Vec::new()));
        let (h, a) = (hits.clone(), asked.clone());
        std::thread::spawn(move || {
            for s in l.incoming() {
                let Ok(mut s) = s else { break };
                h.fetch_add(1, Ordering::SeqCst);
                let a = a.clone();
                std::thread::spawn(move || {
                    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
                    let mut buf = [0u8; 2048];
                    let n = s.read(&mut buf).unwrap_or(0);
                    let first = String::from_utf8_lossy(&buf[..n])
                        .lines()
                        .next()
                        .unwrap_or("(nothing)")
                        .to_string();
                    a.lock().unwrap().push(first);
                    let _ = s.write_all(
                        b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nsecret",
                    );
                });
            }
        });
        MetaServer { hits, asked }
    }
    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

/// `hermes-mcp` (serve is added by [`RawClient::spawn`]) in a mount
/// namespace where `/etc/hosts` also says that [`META_NAME`] is
/// 169.254.169.254.
pub fn served_with_meta_name(env: &TestEnv) -> Command {
    let hosts: PathBuf = env.dir.path().join("hosts");
    let mut text = std::fs::read_to_string("/etc/hosts").unwrap_or_default();
    text.push_str(&format!("\n169.254.169.254 {META_NAME}\n"));
    std::fs::write(&hosts, text).unwrap();
    let mut c = Command::new("unshare");
    c.args([
        "-m",
        "sh",
        "-c",
        "mount --bind \"$0\" /etc/hosts && exec \"$@\"",
    ])
    .arg(&hosts)
    .arg(super::support::common::bin());
    env.apply(&mut c);
    c
}

/// The page that tries every way out, and the allowed loopback requests
/// that prove it ran.
fn page(req: &Req) -> Resp {
    let meta = "http://169.254.169.254";
    match req.path.as_str() {
        "/" => Resp::html(&format!(
            r#"<!doctype html><html><head><title>Subresources</title></head><body>
<h1>Subresources</h1>
<img src="{meta}/img.png"><img src="http://[::ffff:a9fe:a9fe]/mapped.png">
<img src="http://{META_NAME}/by-name.png"><img src="/ok.png">
<iframe src="{meta}/frame"></iframe>
<link rel="stylesheet" href="{meta}/style.css">
<script>
fetch('{meta}/fetch', {{mode: 'no-cors'}}).catch(() => {{}});
fetch('http://100.100.100.200/fetch', {{mode: 'no-cors'}}).catch(() => {{}});
navigator.sendBeacon('{meta}/beacon', 'x');
try {{ new WebSocket('ws://169.254.169.254/'); }} catch (e) {{}}
try {{ new WebSocket('ws://100.100.100.200/ws'); }} catch (e) {{}}
new Worker('/worker.js');
fetch('/to-meta', {{mode: 'no-cors'}}).catch(() => {{}});
var i = new Image(); i.src = '/to-meta.png';
if (navigator.serviceWorker) navigator.serviceWorker.register('/sw.js').catch(() => {{}});
fetch('/control').catch(() => {{}});
try {{ new WebSocket('ws://' + location.host + '/ws-ok'); }} catch (e) {{}}
</script></body></html>"#
        )),
        "/worker.js" => Resp::new(
            200,
            "text/javascript",
            format!(
                "fetch('{meta}/worker', {{mode: 'no-cors'}}).catch(() => {{}}).finally(() => fetch('/worker-ok'));"
            ),
        ),
        "/sw.js" => Resp::new(
            200,
            "text/javascript",
            "self.addEventListener('install', () => { fetch('http://100.100.100.200/sw', {mode: 'no-cors'}).catch(() => {}); fetch('/sw-ok'); });",
        ),
        "/to-meta" | "/to-meta.png" => {
            Resp::new(302, "text/plain", "").header("Location", &format!("{meta}/redirected"))
        }
        "/ok.png" => Resp::new(
            200,
            "image/svg+xml",
            "<svg xmlns='http://www.w3.org/2000/svg'/>",
        ),
        _ => Resp::new(200, "text/plain", "ok"),
    }
}

#[test]
fn browser_subresources_never_reach_cloud_metadata() {
    require_chromium();
    metadata_aliases();
    let aws = MetaServer::start("169.254.169.254", 80);
    let ali = MetaServer::start("100.100.100.200", 80);
    let pages = TestServer::start(page);
    let env = TestEnv::new();
    std::fs::create_dir_all(env.dir.path().join("tmp")).unwrap();
    let mut cmd = served_with_meta_name(&env);
    cmd.env("TMPDIR", env.dir.path().join("tmp"));
    let mut c = RawClient::spawn(cmd);
    c.initialize();
    let r = c.call_tool("browser_navigate", json!({"url": pages.url("/")}));
    assert!(!is_error(&r), "{r}");
    assert_eq!(result_json(&r)["title"], "Subresources", "{r}");
    // The page ran: its allowed loopback requests (image, fetch, worker,
    // service worker, WebSocket handshake) arrived.
    pages.wait_for(
        "the page's allowed loopback requests",
        |rs| {
            ["/ok.png", "/control", "/worker-ok", "/sw-ok", "/ws-ok"]
                .iter()
                .all(|p| rs.iter().any(|r| r.path == *p))
        },
        60,
    );
    // The redirects were asked for (and their targets refused).
    let paths = pages.paths();
    assert!(paths.iter().any(|p| p == "/to-meta"), "{paths:?}");
    // Every way out was tried and refused (the log says so for each), so had
    // one not been refused it would have reached its server by now.
    let log = env.hermes_home().join("logs/hermes-mcp.log");
    let refused = |text: &str| -> Vec<String> {
        text.lines()
            .filter_map(|l| l.split("browser: refused ").nth(1))
            .filter_map(|r| r.split(' ').find(|w| w.starts_with("http")))
            .map(|u| u.trim_end_matches(':').to_string())
            .collect()
    };
    let meta_ways = [
        "http://169.254.169.254/img.png",
        "http://[::ffff:a9fe:a9fe]/mapped.png",
        &format!("http://{META_NAME}/by-name.png"),
        "http://169.254.169.254/frame",
        "http://169.254.169.254/style.css",
        "http://169.254.169.254/fetch",
        "http://100.100.100.200/fetch",
        "http://169.254.169.254/beacon",
        "http://169.254.169.254/",
        "http://100.100.100.200/",
        "http://169.254.169.254/worker",
        "http://169.254.169.254/redirected",
        "http://100.100.100.200/sw",
    ]
    .map(|u| u.to_string());
    poll_until(
        "a refusal in the log for every way the page tries out",
        30,
        || refused(&std::fs::read_to_string(&log).unwrap_or_default()),
        |seen| meta_ways.iter().all(|u| seen.contains(u)),
    );
    let r = c.call_tool("browser_snapshot", json!({}));
    assert!(!is_error(&r), "{r}");
    assert_eq!(
        (aws.hits(), ali.hits()),
        (0, 0),
        "the metadata servers were reached: {:?} {:?}",
        aws.asked.lock().unwrap(),
        ali.asked.lock().unwrap()
    );
    let st = c.finish(Duration::from_secs(30));
    assert!(st.success(), "{st:?}");
}

#[test]
fn browser_endpoints_at_metadata_are_refused_before_connecting() {
    metadata_aliases();
    let aws = MetaServer::start("169.254.169.254", 9222);
    let pages = TestServer::start(|_| Resp::html("<title>x</title>"));
    for cdp in [
        "http://169.254.169.254:9222".to_string(),
        "ws://169.254.169.254:9222/devtools/browser/abc".into(),
        format!("http://{META_NAME}:9222"),
        format!("ws://{META_NAME}:9222/devtools/browser/abc"),
        "http://[::ffff:a9fe:a9fe]:9222".into(),
        "ws://[::ffff:169.254.169.254]:9222/devtools/browser/abc".into(),
        "http://metadata.google.internal:9222".into(),
    ] {
        let env = TestEnv::new();
        let mut cmd = served_with_meta_name(&env);
        cmd.env("BROWSER_CDP_URL", &cdp);
        // The page is on loopback: let the attached browser's policy allow it.
        cmd.env("HERMES_ALLOW_PRIVATE_URLS", "true");
        let mut c = RawClient::spawn(cmd);
        c.initialize();
        let r = c.call_tool("browser_navigate", json!({"url": pages.url("/")}));
        assert!(is_error(&r), "{cdp}: {r}");
        let err = result_json(&r)["error"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(
            err.contains("BROWSER_CDP_URL") && err.contains("cloud metadata"),
            "{cdp}: {err}"
        );
        let st = c.finish(Duration::from_secs(30));
        assert!(st.success(), "{st:?}");
    }
    // The CDP URL a cloud provider answers with, and the Camofox URL.
    for connect in [
        "ws://169.254.169.254:9222/devtools/browser/abc".to_string(),
        format!("ws://{META_NAME}:9222/devtools/browser/abc"),
        "http://[::ffff:a9fe:a9fe]:9222".into(),
    ] {
        let answer = json!({"id": "bb-1", "connectUrl": connect, "status": "RUNNING"}).to_string();
        let api = TestServer::keep_alive(move |r| match r.method.as_str() {
            "POST" if r.path == "/v1/sessions" => {
                Resp::new(201, "application/json", answer.clone())
            }
            _ => Resp::new(200, "application/json", "{}"),
        });
        let env = TestEnv::new();
        env.write_hermes(
            "config.yaml",
            &format!(
                "browser:\n  cloud_provider: browserbase\n  auto_local_for_private_urls: false\n  allow_private_urls: true\n  browserbase:\n    base_url: \"{}\"\n",
                api.base()
            ),
        );
        let mut cmd = served_with_meta_name(&env);
        cmd.env("BROWSERBASE_API_KEY", "bb_test_key")
            .env("BROWSERBASE_PROJECT_ID", "proj-1")
            .env("HERMES_ALLOW_PRIVATE_URLS", "true");
        let mut c = RawClient::spawn(cmd);
        c.initialize();
        let r = c.call_tool("browser_navigate", json!({"url": pages.url("/")}));
        assert!(is_error(&r), "{connect}: {r}");
        let err = result_json(&r)["error"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(
            err.contains("Browserbase") && err.contains("cloud metadata"),
            "{connect}: {err}"
        );
        c.finish(Duration::from_secs(30));
    }
    let env = TestEnv::new();
    let mut cmd = served_with_meta_name(&env);
    cmd.env("CAMOFOX_URL", format!("http://{META_NAME}:9222"));
    let mut c = RawClient::spawn(cmd);
    c.initialize();
    let r = c.call_tool("browser_navigate", json!({"url": "https://example.com/"}));
    let err = result_json(&r)["error"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(is_error(&r) && err.contains("cloud metadata"), "{r}");
    c.finish(Duration::from_secs(30));
    assert_eq!(
        aws.hits(),
        0,
        "a connection reached the metadata address: {:?}",
        aws.asked.lock().unwrap()
    );
}
