//! A fake Camofox server for `browser_camofox.rs`: camofox-browser's REST
//! API as Hermes' client (hermes-agent: tools/browser_camofox.py) uses it,
//! served by the suite's loopback [`TestServer`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use serde_json::{Value, json};

use super::fake::{Resp, TestServer};

/// A 1×1 PNG, the fake's screenshot.
const PNG_B64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
/// The bearer token the fake requires (except on `/health`).
pub const KEY: &str = "cf_test_key_123";

/// One request the fake saw.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub auth: Option<String>,
    pub body: Value,
}

#[derive(Debug, Clone)]
pub struct FakeTab {
    pub id: String,
    pub user: String,
    pub list_item: String,
    pub history: Vec<String>,
    pub idx: usize,
}

impl FakeTab {
    pub fn url(&self) -> String {
        self.history[self.idx].clone()
    }
}

#[derive(Default)]
pub struct FakeState {
    pub seen: Vec<Seen>,
    pub tabs: Vec<FakeTab>,
    next_tab: usize,
    pub no_evaluate: bool,
    typed: Vec<String>,
}

/// A fake Camofox server (camofox-browser's REST API as Hermes' client uses
/// it): tabs per `userId`, a snapshot with `[eN]` refs per page, clicks that
/// follow links, history, a PNG screenshot, `evaluate` (switchable off), and
/// `requests`-style error answers. `/__test/*` are the test's own switches.
pub struct FakeCamofox {
    pub srv: TestServer,
    pub state: Arc<Mutex<FakeState>>,
}

/// The page behind a URL: title and snapshot.
fn page(base: &str, url: &str) -> (String, String) {
    let path = url.split_once("/pages/").map(|x| x.1).unwrap_or("");
    match path {
        "index.html" => (
            "Home".into(),
            format!(
                "- heading \"Home\" [e1]\n- link \"Order form\" [e2]\n- img \"Logo\"\n  - /url: {base}/pages/logo.png"
            ),
        ),
        "form.html" => (
            "Order form".into(),
            format!(
                "- heading \"Place an order\" [e1]\n- button \"Submit\" [e2]\n- textbox \"Name\" [e3]\n- img \"Product photo\"\n  - /url: {base}/pages/photo.jpg\n- img \"Banner\" [e4]"
            ),
        ),
        "long.html" => (
            "Long".into(),
            (0..900)
                .map(|i| format!("- link \"Row number {i} of the long page\" [e{}]", i + 1))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => ("Page".into(), "- heading \"Page\" [e1]".into()),
    }
}

impl FakeCamofox {
    /// Serve over persistent connections, as camofox-browser's Express server keeps them.
    pub fn start() -> Self {
        let state = Arc::new(Mutex::new(FakeState::default()));
        let st = state.clone();
        let srv = TestServer::keep_alive(move |req| {
            let seen = Seen {
                method: req.method.clone(),
                path: req.target.clone(),
                auth: req.header("authorization").map(str::to_string),
                body: req.json_or_null(),
            };
            let (status, ctype, out) = answer(&req.base, &st, &seen);
            Resp::new(status, ctype, out)
        });
        FakeCamofox { srv, state }
    }
    pub fn url(&self) -> String {
        self.srv.base()
    }
    pub fn page(&self, name: &str) -> String {
        format!("{}/pages/{name}", self.url())
    }
    pub fn seen(&self) -> Vec<Seen> {
        self.state.lock().unwrap().seen.clone()
    }
    /// Forget everything (tab numbering starts again).
    pub fn reset(&self) {
        *self.state.lock().unwrap() = FakeState::default();
    }
    pub fn typed(&self) -> Vec<String> {
        self.state.lock().unwrap().typed.clone()
    }
    pub fn wait_for(&self, what: &str, f: impl Fn(&[Seen]) -> bool, secs: u64) -> Vec<Seen> {
        super::common::poll_until(what, secs, || self.seen(), |s| f(s))
    }
}

/// The fake's answer: status, content type, body.
fn answer(base: &str, st: &Mutex<FakeState>, req: &Seen) -> (u16, &'static str, Vec<u8>) {
    let j = |status: u16, v: Value| (status, "application/json", v.to_string().into_bytes());
    let (path, query) = req.path.split_once('?').unwrap_or((&req.path, ""));
    let q: HashMap<&str, &str> = query.split('&').filter_map(|p| p.split_once('=')).collect();
    let mut g = st.lock().unwrap();
    if let Some(op) = path.strip_prefix("/__test/") {
        match op {
            "no-evaluate" => g.no_evaluate = true,
            "forget-tabs" => g.tabs.clear(),
            _ => {}
        }
        return j(200, json!({"ok": true}));
    }
    g.seen.push(req.clone());
    if path == "/health" {
        return j(
            200,
            json!({"ok": true, "browserConnected": true, "vncPort": 6080}),
        );
    }
    if req.auth.as_deref() != Some(&format!("Bearer {KEY}")) {
        return j(401, json!({"error": "Unauthorized"}));
    }
    let user = req.body["userId"]
        .as_str()
        .or(q.get("userId").copied())
        .unwrap_or("")
        .to_string();
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    match (req.method.as_str(), parts.as_slice()) {
        ("GET", ["tabs"]) => {
            let tabs: Vec<Value> = g
                .tabs
                .iter()
                .filter(|t| t.user == user)
                .map(|t| json!({"tabId": t.id, "listItemId": t.list_item, "url": t.url()}))
                .collect();
            j(200, json!({"running": true, "tabs": tabs}))
        }
        ("POST", ["tabs"]) => {
            g.next_tab += 1;
            let url = req.body["url"]
                .as_str()
                .unwrap_or("about:blank")
                .to_string();
            let t = FakeTab {
                id: format!("tab-{}", g.next_tab),
                user: user.clone(),
                list_item: req.body["listItemId"].as_str().unwrap_or("").into(),
                history: vec![url.clone()],
                idx: 0,
            };
            let id = t.id.clone();
            g.tabs.push(t);
            j(200, json!({"tabId": id, "url": url}))
        }
        ("DELETE", ["sessions", u]) => {
            let u = u.to_string();
            g.tabs.retain(|t| t.user != u);
            j(200, json!({"ok": true}))
        }
        (m, ["tabs", id, action]) => {
            let no_eval = g.no_evaluate;
            let Some(t) = g.tabs.iter_mut().find(|t| t.id == *id) else {
                return j(404, json!({"error": "Tab not found"}));
            };
            if t.user != user {
                return j(403, json!({"error": "userId does not own this tab"}));
            }
            match (m, *action) {
                ("POST", "navigate") => {
                    let url = req.body["url"].as_str().unwrap_or("").to_string();
                    // A page whose server redirects to cloud metadata.
                    let url = if url.ends_with("/pages/to-metadata") {
                        "http://169.254.169.254/latest/meta-data/".to_string()
                    } else {
                        url
                    };
                    t.history.truncate(t.idx + 1);
                    t.history.push(url.clone());
                    t.idx = t.history.len() - 1;
                    j(
                        200,
                        json!({"ok": true, "url": url, "title": page(base, &url).0}),
                    )
                }
                ("GET", "snapshot") => {
                    let (_, snap) = page(base, &t.url());
                    let refs = snap.matches("[e").count();
                    j(
                        200,
                        json!({"url": t.url(), "snapshot": snap, "refsCount": refs}),
                    )
                }
                ("POST", "click") => {
                    let r = req.body["ref"].as_str().unwrap_or("");
                    let (_, snap) = page(base, &t.url());
                    if !snap.contains(&format!("[{r}]")) || r.starts_with('@') {
                        return j(500, json!({"error": format!("Unknown ref: {r}")}));
                    }
                    if t.url().ends_with("index.html") && r == "e2" {
                        t.history.truncate(t.idx + 1);
                        t.history.push(format!("{base}/pages/form.html"));
                        t.idx += 1;
                    }
                    j(200, json!({"ok": true, "url": t.url()}))
                }
                ("POST", "type") => {
                    let text = req.body["text"].as_str().unwrap_or("").to_string();
                    g.typed.push(text);
                    j(200, json!({"ok": true}))
                }
                ("POST", "scroll") | ("POST", "press") => j(200, json!({"ok": true})),
                ("POST", "back") => {
                    t.idx = t.idx.saturating_sub(1);
                    j(200, json!({"ok": true, "url": t.url()}))
                }
                ("GET", "screenshot") => (
                    200,
                    "image/png",
                    base64::engine::general_purpose::STANDARD
                        .decode(PNG_B64)
                        .unwrap(),
                ),
                ("POST", "evaluate") if no_eval => j(404, json!({"error": "Not found"})),
                ("POST", "evaluate") => {
                    let title = page(base, &t.url()).0;
                    let result = match req.body["expression"].as_str().unwrap_or("") {
                        "1+1" => json!(2),
                        "document.title" => json!(title),
                        "JSON.stringify({a: [1, 2]})" => json!("{\"a\":[1,2]}"),
                        _ => Value::Null,
                    };
                    j(200, json!({"ok": true, "result": result}))
                }
                _ => j(404, json!({"error": "Not found"})),
            }
        }
        _ => j(404, json!({"error": "Not found"})),
    }
}
