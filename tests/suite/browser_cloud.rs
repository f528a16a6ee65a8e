//! Cloud browser providers (`browser.cloud_provider`: browserbase,
//! browser-use, firecrawl) against a loopback fake of their REST APIs whose
//! "session" answer points at a real Chromium's DevTools endpoint, so the
//! whole path runs: create the session → drive it over CDP → release it. The
//! fake's requests are compared with what Hermes' own provider classes send
//! to the same fake (hermes-agent: plugins/browser/*/provider.py).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use super::support::browser::{ExternalChrome, page_server, ref_of};
use super::support::common::{TIME_SCALE, TestEnv, hermes_python, provider_for};
use super::support::fake::{Req, Resp, TestServer};
use super::support::prereq::require_chromium;
use super::support::serve::{Serve, Served};
use super::support::tls::{TestCa, tls_relay};

/// A loopback fake of a provider's REST API answering `answer(request)` as JSON, over
/// persistent connections as the real services keep them.
fn fake_api(answer: impl Fn(&Req) -> (u16, String) + Send + Sync + 'static) -> TestServer {
    TestServer::keep_alive(move |r| {
        let (status, text) = answer(r);
        Resp::new(status, "application/json", text)
    })
}

/// The shared test Chromium ([`ExternalChrome`], hermes-mcp's no-phone-home
/// flags) stands in for the provider's remote browser; these read its
/// DevTools HTTP endpoints.
impl ExternalChrome {
    fn http(&self, path: &str) -> Value {
        // DevTools' HTTP server keeps the connection open: read by length.
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n\r\n",
            self.port
        )
        .unwrap();
        let mut r = BufReader::new(s);
        let mut len = 0usize;
        loop {
            let mut h = String::new();
            if r.read_line(&mut h).unwrap() == 0 || h == "\r\n" {
                break;
            }
            if let Some((k, v)) = h.trim_end().split_once(':')
                && k.eq_ignore_ascii_case("content-length")
            {
                len = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0u8; len];
        r.read_exact(&mut body).unwrap();
        serde_json::from_slice(&body).unwrap_or(Value::Null)
    }

    fn ws_url(&self) -> String {
        self.http("/json/version")["webSocketDebuggerUrl"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// Titles of the page targets open in this browser.
    fn titles(&self) -> Vec<String> {
        self.http("/json/list")
            .as_array()
            .into_iter()
            .flatten()
            .filter(|t| t["type"] == "page")
            .map(|t| t["title"].as_str().unwrap_or("").to_string())
            .collect()
    }
}

/// `hermes-mcp serve` with this config and these variables.
fn served(config: &str, vars: &[(&str, &str)]) -> Served {
    require_chromium();
    Serve::new().config(config).vars(vars).private_tmp().start()
}

/// `hermes-mcp tools --json`'s browser provider line.
fn browser_provider(config: &str, vars: &[(&str, &str)]) -> Value {
    let env = TestEnv::new();
    env.write_hermes("config.yaml", config);
    provider_for(&env, vars, "browser")
}

/// Run Hermes' own provider class against `fake` (create, then close) so
/// the requests it sends can be compared with ours.
fn hermes_provider_roundtrip(provider: &str, fake: &TestServer, vars: &[(&str, &str)]) {
    let (module, class) = match provider {
        "browserbase" => ("browserbase", "BrowserbaseBrowserProvider"),
        "browser-use" => ("browser_use", "BrowserUseBrowserProvider"),
        _ => ("firecrawl", "FirecrawlBrowserProvider"),
    };
    // Browser Use has no base-URL variable in Hermes: point its constant here.
    let patch = if module == "browser_use" {
        format!("m._BASE_URL = {:?}\n", fake.base())
    } else {
        String::new()
    };
    let script = format!(
        "import plugins.browser.{module}.provider as m\n{patch}\
         p = m.{class}()\n\
         s = p.create_session('t1')\n\
         print(s['bb_session_id'])\n\
         assert p.close_session(s['bb_session_id'])\n"
    );
    let env = TestEnv::new();
    let mut cmd = Command::new(hermes_python("plugins.browser"));
    env.apply(&mut cmd);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = cmd.args(["-c", &script]).output().unwrap();
    assert!(
        out.status.success(),
        "Hermes' {provider} provider failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Method, path, auth headers and body: what must match Hermes.
fn shape(s: &Req, auth: &str) -> Value {
    json!({
        "method": s.method,
        "path": s.target,
        "auth": s.header(auth),
        "content_type": s.header("content-type"),
        "body": s.json_or_null(),
    })
}

#[test]
fn browser_cloud_browserbase_session_is_created_driven_over_cdp_and_released_on_exit() {
    let pages = page_server();
    let chrome = ExternalChrome::start();
    let ws = chrome.ws_url();
    let fake = fake_api(move |r| match (r.method.as_str(), r.target.as_str()) {
        ("POST", "/v1/sessions") => (
            201,
            json!({"id": "bb-sess-1", "connectUrl": ws, "status": "RUNNING"}).to_string(),
        ),
        ("POST", "/v1/sessions/bb-sess-1") => (200, json!({"id": "bb-sess-1"}).to_string()),
        _ => (404, json!({"error": "not found"}).to_string()),
    });
    let vars = [
        ("BROWSERBASE_API_KEY", "bb_test_key"),
        ("BROWSERBASE_PROJECT_ID", "proj-1"),
    ];
    let config = format!(
        "browser:\n  cloud_provider: browserbase\n  auto_local_for_private_urls: false\n  allow_private_urls: true\n  browserbase:\n    base_url: \"{}\"\n",
        fake.base()
    );
    let p = browser_provider(&config, &vars);
    assert_eq!(p["provider"], "browserbase", "{p}");
    assert!(p["why"].as_str().unwrap().contains("cloud_provider"), "{p}");

    let mut s = served(&config, &vars);
    let v = s.ok("browser_navigate", json!({"url": pages.url("/form.html")}));
    assert_eq!(v["title"], "Order form", "{v}");
    let snap = s.ok("browser_snapshot", json!({}));
    let text = snap["snapshot"].as_str().unwrap();
    assert!(text.contains("Place an order"), "{text}");
    let _ = ref_of(text, "textbox");
    // The page ran in the "remote" browser, and no Chromium of ours started.
    assert!(
        chrome.titles().iter().any(|t| t == "Order form"),
        "{:?}",
        chrome.titles()
    );
    assert_eq!(s.local_chromium(), 0);
    let seen = fake.reqs();
    assert_eq!(seen.len(), 1, "{seen:#?}");
    assert_eq!(
        shape(&seen[0], "x-bb-api-key"),
        json!({"method": "POST", "path": "/v1/sessions", "auth": "bb_test_key",
               "content_type": "application/json",
               "body": {"projectId": "proj-1", "keepAlive": true, "proxies": true}})
    );

    // Exit releases the session (Hermes' REQUEST_RELEASE) and closes our tab.
    let Served { env: _env, client } = s;
    client.finish(Duration::from_secs(20));
    let seen = fake.reqs();
    assert_eq!(seen.len(), 2, "{seen:#?}");
    assert_eq!(
        shape(&seen[1], "x-bb-api-key"),
        json!({"method": "POST", "path": "/v1/sessions/bb-sess-1", "auth": "bb_test_key",
               "content_type": "application/json",
               "body": {"projectId": "proj-1", "status": "REQUEST_RELEASE"}})
    );
    assert!(
        !chrome.titles().iter().any(|t| t == "Order form"),
        "{:?}",
        chrome.titles()
    );

    // Hermes' provider sends the same two requests to the same fake.
    fake.clear();
    let mut hv = vars.to_vec();
    let base = fake.base();
    hv.push(("BROWSERBASE_BASE_URL", &base));
    hermes_provider_roundtrip("browserbase", &fake, &hv);
    let theirs = fake.reqs();
    assert_eq!(theirs.len(), 2, "{theirs:#?}");
    assert_eq!(
        shape(&theirs[0], "x-bb-api-key"),
        shape(&seen[0], "x-bb-api-key")
    );
    assert_eq!(
        shape(&theirs[1], "x-bb-api-key"),
        shape(&seen[1], "x-bb-api-key")
    );
}

/// A fake for `provider` whose sessions point at `cdp` (as the provider
/// would answer), and which accepts the release call.
fn provider_fake(provider: &'static str, cdp: String) -> TestServer {
    fake_api(move |r| {
        let created = |id: &str, field: &str| (200, json!({"id": id, field: cdp}).to_string());
        match (provider, r.method.as_str(), r.target.as_str()) {
            ("browser-use", "POST", "/browsers") => created("bu-1", "cdpUrl"),
            ("browser-use", "PATCH", "/browsers/bu-1") => (200, json!({"id": "bu-1"}).to_string()),
            ("firecrawl", "POST", "/v2/browser") => created("fc-1", "cdpUrl"),
            ("firecrawl", "DELETE", "/v2/browser/fc-1") => {
                (200, json!({"success": true}).to_string())
            }
            _ => (404, json!({"error": "not found"}).to_string()),
        }
    })
}

#[test]
fn browser_cloud_browser_use_resolves_an_http_cdp_url_and_is_released_when_idle() {
    let pages = page_server();
    let chrome = ExternalChrome::start();
    // Browser Use v3 answers an HTTP discovery URL (Hermes resolves it
    // through /json/version).
    let fake = provider_fake("browser-use", format!("http://127.0.0.1:{}", chrome.port));
    let vars = [("BROWSER_USE_API_KEY", "bu_test_key")];
    // Time at 2/5: the 5 s idle limit is 2 s (its real-time test is
    // browser::browser_idle_session_closes_and_relaunches).
    let scaled = [vars[0], (TIME_SCALE, "0.4")];
    // No cloud_provider: Hermes' auto-detect picks Browser Use from its key.
    let config = format!(
        "browser:\n  auto_local_for_private_urls: false\n  allow_private_urls: true\n  inactivity_timeout: 5\n  browser_use:\n    base_url: \"{}\"\n",
        fake.base()
    );
    let p = browser_provider(&config, &vars);
    assert_eq!(p["provider"], "browser-use", "{p}");
    assert!(
        p["why"].as_str().unwrap().contains("BROWSER_USE_API_KEY"),
        "{p}"
    );
    let mut s = served(&config, &scaled);
    let v = s.ok("browser_navigate", json!({"url": pages.url("/form.html")}));
    assert_eq!(v["title"], "Order form", "{v}");
    assert!(chrome.titles().iter().any(|t| t == "Order form"));
    assert_eq!(s.local_chromium(), 0);
    // Idle past browser.inactivity_timeout: the session is stopped.
    let seen = fake.wait_for("the idle release", |s| s.len() >= 2, 30);
    assert_eq!(seen.len(), 2, "{seen:#?}");
    // Hermes' provider sends the same requests.
    fake.clear();
    hermes_provider_roundtrip("browser-use", &fake, &vars);
    let theirs = fake.reqs();
    for (ours, theirs) in seen.iter().zip(&theirs) {
        assert_eq!(
            shape(ours, "x-browser-use-api-key"),
            shape(theirs, "x-browser-use-api-key")
        );
    }
    assert_eq!(seen[0].target, "/browsers");
    assert_eq!(seen[1].method, "PATCH");
    assert_eq!(seen[1].json_or_null(), json!({"action": "stop"}));
    // The next call says the session is gone; a navigation starts a new one.
    let (err, v) = s.call("browser_snapshot", json!({}));
    assert!(err, "{v}");
    s.ok("browser_navigate", json!({"url": pages.url("/form.html")}));
    assert_eq!(fake.reqs().iter().filter(|r| r.method == "POST").count(), 2);
}

#[test]
fn browser_cloud_firecrawl_is_used_only_when_named_and_released_on_exit() {
    let pages = page_server();
    let chrome = ExternalChrome::start();
    // A bare ws://host:port, resolved through /json/version as Hermes does.
    let fake = provider_fake("firecrawl", format!("ws://127.0.0.1:{}", chrome.port));
    let vars = [
        ("FIRECRAWL_API_KEY", "fc_test_key"),
        ("FIRECRAWL_BROWSER_TTL", "120"),
    ];
    // FIRECRAWL_API_KEY alone (web extract's key) never selects the cloud browser.
    let p = browser_provider("", &vars);
    assert_eq!(p["provider"], "chromium", "{p}");
    let config = format!(
        "browser:\n  cloud_provider: firecrawl\n  auto_local_for_private_urls: false\n  allow_private_urls: true\n  firecrawl:\n    base_url: \"{}\"\n",
        fake.base()
    );
    assert_eq!(browser_provider(&config, &vars)["provider"], "firecrawl");
    let mut s = served(&config, &vars);
    let v = s.ok("browser_navigate", json!({"url": pages.url("/form.html")}));
    assert_eq!(v["title"], "Order form", "{v}");
    assert!(chrome.titles().iter().any(|t| t == "Order form"));
    let Served { env: _env, client } = s;
    client.finish(Duration::from_secs(20));
    let seen = fake.reqs();
    assert_eq!(seen.len(), 2, "{seen:#?}");
    fake.clear();
    let base = fake.base();
    let mut hv = vars.to_vec();
    hv.push(("FIRECRAWL_API_URL", &base));
    hermes_provider_roundtrip("firecrawl", &fake, &hv);
    let theirs = fake.reqs();
    assert_eq!(theirs.len(), 2, "{theirs:#?}");
    for (ours, theirs) in seen.iter().zip(&theirs) {
        assert_eq!(shape(ours, "authorization"), shape(theirs, "authorization"));
    }
    assert_eq!(seen[0].json_or_null(), json!({"ttl": 120}));
    assert_eq!(
        (seen[1].method.as_str(), seen[1].target.as_str()),
        ("DELETE", "/v2/browser/fc-1")
    );
}

#[test]
fn browser_cloud_private_urls_use_a_local_chromium_by_default() {
    let pages = page_server();
    let fake = fake_api(|_| (500, "{}".into()));
    let vars = [
        ("BROWSERBASE_API_KEY", "bb_test_key"),
        ("BROWSERBASE_PROJECT_ID", "proj-1"),
    ];
    let config = format!(
        "browser:\n  cloud_provider: browserbase\n  browserbase:\n    base_url: \"{}\"\n",
        fake.base()
    );
    let p = browser_provider(&config, &vars);
    let why = p["why"].as_str().unwrap();
    assert!(why.contains("auto_local_for_private_urls"), "{p}");
    let mut s = served(&config, &vars);
    // Loopback → Hermes' local sidecar: no cloud session is created.
    let v = s.ok("browser_navigate", json!({"url": pages.url("/form.html")}));
    assert_eq!(v["title"], "Order form", "{v}");
    assert!(fake.reqs().is_empty(), "{:#?}", fake.reqs());
    assert!(s.local_chromium() > 0);
    s.ok("browser_snapshot", json!({}));
    drop(s);

    // Turned off: the URL goes to the cloud browser, whose SSRF rule refuses it.
    let config = config.replace(
        "  cloud_provider: browserbase\n",
        "  cloud_provider: browserbase\n  auto_local_for_private_urls: false\n",
    );
    let mut s = served(&config, &vars);
    let (err, v) = s.call("browser_navigate", json!({"url": pages.url("/form.html")}));
    assert!(err, "{v}");
    assert!(
        v["error"].as_str().unwrap().contains("private or internal"),
        "{v}"
    );
    assert!(fake.reqs().is_empty());
}

#[test]
fn browser_cloud_failures_retry_like_hermes_then_fall_back_to_local_chromium() {
    let pages = page_server();
    // Browserbase: 402 for paid features → retried without keepAlive, then
    // without proxies; still refused → local Chromium, and the result says why.
    let fake = fake_api(|r| match r.method.as_str() {
        "POST" if r.json_or_null().get("proxies").is_some() => {
            (402, r#"{"error":"payment required"}"#.into())
        }
        _ => (401, r#"{"error":"bad key"}"#.into()),
    });
    let vars = [
        ("BROWSERBASE_API_KEY", "bb_test_key"),
        ("BROWSERBASE_PROJECT_ID", "proj-1"),
        ("BROWSERBASE_SESSION_TIMEOUT", "600"),
    ];
    let config = format!(
        "browser:\n  cloud_provider: browserbase\n  auto_local_for_private_urls: false\n  allow_private_urls: true\n  browserbase:\n    base_url: \"{}\"\n",
        fake.base()
    );
    let mut s = served(&config, &vars);
    let v = s.ok("browser_navigate", json!({"url": pages.url("/form.html")}));
    assert_eq!(v["title"], "Order form", "{v}");
    let fb = v["cloud_fallback"].as_str().unwrap();
    assert!(
        fb.contains("Failed to create Browserbase session: 401 {\"error\":\"bad key\"}"),
        "{v}"
    );
    assert!(!fb.contains("bb_test_key"));
    assert!(s.local_chromium() > 0);
    let bodies: Vec<Value> = fake.reqs().into_iter().map(|r| r.json_or_null()).collect();
    assert_eq!(
        bodies,
        vec![
            json!({"projectId": "proj-1", "keepAlive": true, "timeout": 600, "proxies": true}),
            json!({"projectId": "proj-1", "timeout": 600, "proxies": true}),
            json!({"projectId": "proj-1", "timeout": 600}),
        ]
    );
    drop(s);

    // Missing credentials: Hermes' error text, and local Chromium.
    let mut s = served(&config, &[]);
    let v = s.ok("browser_navigate", json!({"url": pages.url("/form.html")}));
    assert!(
        v["cloud_fallback"].as_str().unwrap().contains(
            "Browserbase requires BROWSERBASE_API_KEY and BROWSERBASE_PROJECT_ID environment variables."
        ),
        "{v}"
    );
}

#[test]
fn browser_cloud_wss_cdp_urls_connect_over_tls_verified_like_the_http_client() {
    let pages = page_server();
    let chrome = ExternalChrome::start();
    // The provider's browser behind TLS: a loopback TLS front on the test
    // Chromium's DevTools port, its certificate signed by a test authority.
    let ca = TestCa::new();
    let front = tls_relay(&ca, chrome.port);
    let ws = chrome.ws_url();
    let path = &ws[ws.find("/devtools/").unwrap()..];
    let fake = provider_fake(
        "firecrawl",
        format!("wss://127.0.0.1:{}{path}", front.port()),
    );
    let config = format!(
        "browser:\n  cloud_provider: firecrawl\n  auto_local_for_private_urls: false\n  allow_private_urls: true\n  firecrawl:\n    base_url: \"{}\"\n",
        fake.base()
    );
    // Trusted through SSL_CERT_FILE, as the HTTP client trusts it.
    let trusted = ca.ca_pem();
    let vars = [
        ("FIRECRAWL_API_KEY", "fc_test_key"),
        ("SSL_CERT_FILE", trusted.to_str().unwrap()),
    ];
    let mut s = served(&config, &vars);
    let v = s.ok("browser_navigate", json!({"url": pages.url("/form.html")}));
    assert_eq!(v["title"], "Order form", "{v}");
    assert!(v.get("cloud_fallback").is_none(), "{v}");
    assert!(chrome.titles().iter().any(|t| t == "Order form"));
    assert_eq!(s.local_chromium(), 0);
    drop(s);

    // A certificate the process does not trust: refused, and the answer says why.
    let other = TestCa::new();
    let untrusted = other.ca_pem();
    let vars = [
        ("FIRECRAWL_API_KEY", "fc_test_key"),
        ("SSL_CERT_FILE", untrusted.to_str().unwrap()),
    ];
    let mut s = served(&config, &vars);
    let (_, v) = s.call("browser_navigate", json!({"url": pages.url("/form.html")}));
    let text = v.to_string();
    assert!(
        text.contains("TLS to 127.0.0.1 failed: invalid peer certificate: UnknownIssuer"),
        "{v}"
    );
}
