//! Cloud browser providers (`browser.cloud_provider`: browserbase,
//! browser-use, firecrawl) against a loopback fake of their REST APIs whose
//! "session" answer points at a real Chromium's DevTools endpoint, so the
//! whole path runs: create the session → drive it over CDP → release it. The
//! fake's requests are compared with what Hermes' own provider classes send
//! to the same fake (hermes-agent: plugins/browser/*/provider.py).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::browser::{PageServer, procs_with, ref_of, require_chromium};
use super::common::{RawClient, TestEnv, hermes_python, is_error, result_json};

/// One request the fake saw.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Value,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

type Answer = dyn Fn(&Seen, usize) -> (u16, String) + Send + Sync;

/// A loopback HTTP/1.1 server answering with `answer(request, index)`.
struct FakeApi {
    port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl FakeApi {
    fn start(answer: impl Fn(&Seen, usize) -> (u16, String) + Send + Sync + 'static) -> Self {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s2 = seen.clone();
        let answer: Arc<Answer> = Arc::new(answer);
        std::thread::spawn(move || {
            for s in l.incoming().flatten() {
                let seen = s2.clone();
                let answer = answer.clone();
                std::thread::spawn(move || {
                    let _ = serve(s, &seen, &*answer);
                });
            }
        });
        FakeApi { port, seen }
    }
    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
    fn clear(&self) {
        self.seen.lock().unwrap().clear();
    }
    fn wait_for(&self, what: &str, f: impl Fn(&[Seen]) -> bool, secs: u64) -> Vec<Seen> {
        let start = Instant::now();
        loop {
            let s = self.seen();
            if f(&s) {
                return s;
            }
            assert!(
                start.elapsed() < Duration::from_secs(secs),
                "the fake never saw {what}: {s:#?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

fn serve(s: TcpStream, seen: &Mutex<Vec<Seen>>, answer: &Answer) -> std::io::Result<()> {
    let mut w = s.try_clone()?;
    let mut r = BufReader::new(s);
    loop {
        let mut line = String::new();
        if r.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let mut parts = line.split_whitespace();
        let method = parts.next().unwrap_or("").to_string();
        let path = parts.next().unwrap_or("").to_string();
        let mut headers = Vec::new();
        let mut len = 0usize;
        loop {
            let mut h = String::new();
            if r.read_line(&mut h)? == 0 || h == "\r\n" {
                break;
            }
            if let Some((k, v)) = h.trim_end().split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    len = v.trim().parse().unwrap_or(0);
                }
                headers.push((k.trim().to_string(), v.trim().to_string()));
            }
        }
        let mut body = vec![0u8; len];
        r.read_exact(&mut body)?;
        let req = Seen {
            method,
            path,
            headers,
            body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        };
        let idx = {
            let mut g = seen.lock().unwrap();
            g.push(req.clone());
            g.len() - 1
        };
        let (status, text) = answer(&req, idx);
        write!(
            w,
            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{text}",
            text.len()
        )?;
        w.flush()?;
    }
}

/// A real Chromium standing in for the provider's remote browser, with
/// hermes-mcp's no-phone-home flags (src/toolsets/browser/launch.rs).
struct RemoteChrome {
    child: std::process::Child,
    port: u16,
    _profile: tempfile::TempDir,
}

impl RemoteChrome {
    fn start() -> Self {
        use std::os::unix::process::CommandExt;
        require_chromium();
        let profile = tempfile::tempdir().unwrap();
        let child = Command::new("chromium")
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
                "--disable-background-networking",
                "--disable-component-update",
                "--component-updater=url-source=about:blank",
                "--disable-sync",
                "--disable-domain-reliability",
                "--disable-client-side-phishing-detection",
                "--safebrowsing-disable-auto-update",
                "--disable-field-trial-config",
                "--disable-variations-seed-fetch",
                "--metrics-recording-only",
                "--no-pings",
                "--dns-prefetch-disable",
                "--disable-default-apps",
                "--disable-extensions",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-breakpad",
                "--disable-features=site-per-process,IsolateOrigins,BackForwardCache,Translate,MediaRouter,OptimizationHints,DnsOverHttps",
                &format!("--user-data-dir={}", profile.path().display()),
                "about:blank",
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0)
            .spawn()
            .expect("start chromium");
        let port_file = profile.path().join("DevToolsActivePort");
        let start = Instant::now();
        let port = loop {
            if let Ok(t) = std::fs::read_to_string(&port_file)
                && let Some(p) = t.lines().next().and_then(|l| l.trim().parse().ok())
            {
                break p;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "chromium did not open a DevTools port"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        RemoteChrome {
            child,
            port,
            _profile: profile,
        }
    }

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

impl Drop for RemoteChrome {
    fn drop(&mut self) {
        unsafe { libc::kill(-(self.child.id() as i32), libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

/// `hermes-mcp serve` with this config and these variables.
struct Served {
    env: TestEnv,
    client: RawClient,
}

impl Served {
    fn start(config: &str, vars: &[(&str, &str)]) -> Self {
        require_chromium();
        let env = TestEnv::new();
        std::fs::create_dir_all(env.dir.path().join("tmp")).unwrap();
        env.write_hermes("config.yaml", config);
        let mut cmd = env.cmd();
        cmd.env("TMPDIR", env.dir.path().join("tmp"));
        for (k, v) in vars {
            cmd.env(k, v);
        }
        let mut client = RawClient::spawn(cmd);
        client.initialize();
        Served { env, client }
    }
    fn call(&mut self, tool: &str, args: Value) -> (bool, Value) {
        let r = self.client.call_tool(tool, args);
        (is_error(&r), result_json(&r))
    }
    fn ok(&mut self, tool: &str, args: Value) -> Value {
        let (err, v) = self.call(tool, args.clone());
        assert!(
            !err && v["success"] == json!(true),
            "{tool} {args} failed: {v}"
        );
        v
    }
    /// Our own Chromium processes (their profiles live under our TMPDIR).
    fn local_chromium(&self) -> usize {
        procs_with(&self.env.dir.path().join("tmp").display().to_string()).len()
    }
}

/// `hermes-mcp tools --json`'s browser provider line.
fn browser_provider(config: &str, vars: &[(&str, &str)]) -> Value {
    let env = TestEnv::new();
    env.write_hermes("config.yaml", config);
    let mut cmd = env.cmd();
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = cmd.args(["tools", "--json"]).output().unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["providers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["job"] == "browser")
        .cloned()
        .unwrap_or_else(|| panic!("no browser provider in {doc}"))
}

/// Run Hermes' own provider class against `fake` (create, then close) so
/// the requests it sends can be compared with ours.
fn hermes_provider_roundtrip(provider: &str, fake: &FakeApi, vars: &[(&str, &str)]) {
    let (module, class) = match provider {
        "browserbase" => ("browserbase", "BrowserbaseBrowserProvider"),
        "browser-use" => ("browser_use", "BrowserUseBrowserProvider"),
        _ => ("firecrawl", "FirecrawlBrowserProvider"),
    };
    // Browser Use has no base-URL variable in Hermes: point its constant here.
    let patch = if module == "browser_use" {
        format!("m._BASE_URL = {:?}\n", fake.url())
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
fn shape(s: &Seen, auth: &str) -> Value {
    json!({
        "method": s.method,
        "path": s.path,
        "auth": s.header(auth),
        "content_type": s.header("content-type"),
        "body": s.body,
    })
}

#[test]
fn browser_cloud_browserbase_session_is_created_driven_over_cdp_and_released_on_exit() {
    let pages = PageServer::start();
    let chrome = RemoteChrome::start();
    let ws = chrome.ws_url();
    let fake = FakeApi::start(move |r, _| match (r.method.as_str(), r.path.as_str()) {
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
        fake.url()
    );
    let p = browser_provider(&config, &vars);
    assert_eq!(p["provider"], "browserbase", "{p}");
    assert!(p["why"].as_str().unwrap().contains("cloud_provider"), "{p}");

    let mut s = Served::start(&config, &vars);
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
    let seen = fake.seen();
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
    let seen = fake.seen();
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
    let base = fake.url();
    hv.push(("BROWSERBASE_BASE_URL", &base));
    hermes_provider_roundtrip("browserbase", &fake, &hv);
    let theirs = fake.seen();
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
