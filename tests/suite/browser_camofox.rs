//! The Camofox backend (`CAMOFOX_URL`) against a loopback fake of the
//! Camofox server's REST API. Every browser tool is driven through
//! `hermes-mcp serve`; the same calls are then made with Hermes' own
//! Python client (hermes-agent: tools/browser_tool.py → tools/browser_camofox.py)
//! against the same fake, and both the requests the fake saw and the
//! results are compared.

use std::process::Command;

use serde_json::{Value, json};

use super::support::camofox::{FakeCamofox, FakeTab, KEY, Seen};

use super::support::browser::procs_with;
use super::support::common::{
    TIME_SCALE, TestEnv, hermes_python, is_error, provider_for, result_json,
};
use super::support::fake::free_port;
use super::support::serve::{Serve, Served};

/// `hermes-mcp serve` in Camofox mode.
fn served(config: &str, vars: &[(&str, &str)]) -> Served {
    Serve::new().config(config).vars(vars).private_tmp().start()
}

/// The calls of the comparison, as MCP tool calls; `__control` flips a
/// switch of the fake, `__cleanup` ends the session (Hermes'
/// `cleanup_browser`; for us, the server's exit).
fn script(fake: &FakeCamofox) -> Vec<(String, Value)> {
    let c = |n: &str, a: Value| (n.to_string(), a);
    vec![
        c("browser_snapshot", json!({})),
        c("browser_navigate", json!({"url": fake.page("index.html")})),
        c("browser_click", json!({"ref": "@e2"})),
        c("browser_snapshot", json!({"full": false})),
        c("browser_click", json!({"ref": "@e99"})),
        c(
            "browser_type",
            json!({"ref": "@e3", "text": "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"}),
        ),
        c("browser_type", json!({"ref": "e3", "text": "Ada Lovelace"})),
        c("browser_scroll", json!({"direction": "down"})),
        c("browser_press", json!({"key": "Enter"})),
        c("browser_get_images", json!({})),
        c("browser_back", json!({})),
        c("browser_navigate", json!({"url": fake.page("long.html")})),
        c("browser_snapshot", json!({})),
        c("browser_console", json!({})),
        c("browser_console", json!({"expression": "1+1"})),
        c("browser_console", json!({"expression": "document.title"})),
        c(
            "browser_console",
            json!({"expression": "JSON.stringify({a: [1, 2]})"}),
        ),
        c(
            "browser_navigate",
            json!({"url": "http://169.254.169.254/latest/meta-data/"}),
        ),
        c(
            "browser_navigate",
            json!({"url": "https://blocked.example/x"}),
        ),
        c("__control", json!({"op": "forget-tabs"})),
        c("browser_navigate", json!({"url": fake.page("form.html")})),
        c("__control", json!({"op": "no-evaluate"})),
        c("browser_console", json!({"expression": "1+1"})),
        c(
            "browser_vision",
            json!({"question": "What is on the page?", "annotate": true}),
        ),
        c("__cleanup", json!({})),
    ]
}

const CONFIG: &str =
    "security:\n  website_blocklist:\n    enabled: true\n    domains: [\"blocked.example\"]\n";

/// Hermes' own client against `fake`: the script's results (None for the
/// test's own steps).
fn run_hermes(
    camofox_url: &str,
    config: &str,
    calls: &[(String, Value)],
    vars: &[(&str, &str)],
) -> Vec<Value> {
    let env = TestEnv::new();
    env.write_hermes("config.yaml", config);
    let py = r#"
import json, os, sys
import requests
from tools import browser_tool as bt
calls = json.loads(sys.argv[1])
fns = {"browser_navigate": bt.browser_navigate, "browser_snapshot": bt.browser_snapshot,
       "browser_click": bt.browser_click, "browser_type": bt.browser_type,
       "browser_scroll": bt.browser_scroll, "browser_back": bt.browser_back,
       "browser_press": bt.browser_press, "browser_get_images": bt.browser_get_images,
       "browser_vision": bt.browser_vision, "browser_console": bt.browser_console}
out = []
for name, args in calls:
    if name == "__control":
        requests.post(os.environ["CAMOFOX_URL"] + "/__test/" + args["op"], json={})
        out.append(None)
        continue
    if name == "__cleanup":
        bt.cleanup_browser()
        out.append(None)
        continue
    args = dict(args)
    if "task" in args:
        args["user_task"] = args.pop("task")
    out.append(json.loads(fns[name](**args)))
print("RESULTS " + json.dumps(out))
"#;
    let mut cmd = Command::new(hermes_python("tools.browser_camofox"));
    env.apply(&mut cmd);
    cmd.env("CAMOFOX_URL", camofox_url);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let calls: Vec<Value> = calls.iter().map(|(n, a)| json!([n, a])).collect();
    let out = cmd
        .args(["-c", py, &Value::Array(calls).to_string()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "Hermes' Camofox client failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("RESULTS "))
        .unwrap_or_else(|| panic!("no results from Hermes: {stdout}"));
    let mut v: Vec<Value> = serde_json::from_str(line).unwrap();
    // Hermes' home differs from ours: compare paths under it by their tail.
    for r in &mut v {
        normalize_home(r, &env.hermes_home().display().to_string());
    }
    v
}

fn normalize_home(v: &mut Value, home: &str) {
    match v {
        Value::String(s) => *s = s.replace(home, "$HERMES_HOME"),
        Value::Array(a) => a.iter_mut().for_each(|x| normalize_home(x, home)),
        Value::Object(o) => o.values_mut().for_each(|x| normalize_home(x, home)),
        _ => {}
    }
}

/// Our results for the same script, through `hermes-mcp serve`.
fn run_ours(
    camofox_url: &str,
    fake: Option<&FakeCamofox>,
    calls: &[(String, Value)],
    config: &str,
    vars: &[(&str, &str)],
) -> (Vec<Value>, Vec<bool>, Vec<Value>) {
    let mut vars = vars.to_vec();
    vars.push(("CAMOFOX_URL", camofox_url));
    let mut s = served(config, &vars);
    let (mut results, mut errors, mut raw) = (Vec::new(), Vec::new(), Vec::new());
    let home = s.env.hermes_home().display().to_string();
    let mut served = Some(s);
    for (name, args) in calls {
        match name.as_str() {
            "__control" => {
                let op = args["op"].as_str().unwrap();
                let mut st = fake.expect("a fake to switch").state.lock().unwrap();
                match op {
                    "no-evaluate" => st.no_evaluate = true,
                    _ => st.tabs.clear(),
                }
                results.push(Value::Null);
                errors.push(false);
                raw.push(Value::Null);
            }
            "__cleanup" => {
                served.take().unwrap().finish();
                results.push(Value::Null);
                errors.push(false);
                raw.push(Value::Null);
            }
            _ => {
                s = served.take().unwrap();
                let r = s.client.call_tool(name, args.clone());
                // Camofox mode never starts a Chromium of ours.
                let tmp = s.env.dir.path().join("tmp").display().to_string();
                assert!(procs_with(&tmp).is_empty(), "a local browser started");
                let mut v = result_json(&r);
                normalize_home(&mut v, &home);
                errors.push(is_error(&r));
                results.push(v);
                raw.push(r);
                served = Some(s);
            }
        }
    }
    (results, errors, raw)
}

/// User ids are random per session: compare them by role.
fn normalize_user(v: &mut Value) {
    match v {
        Value::String(s) => {
            let re = regex::Regex::new(r"hermes_[0-9a-f]{10}").unwrap();
            *s = re.replace_all(s, "hermes_USER").into_owned();
        }
        Value::Array(a) => a.iter_mut().for_each(normalize_user),
        Value::Object(o) => o.values_mut().for_each(normalize_user),
        _ => {}
    }
}

fn request_shapes(seen: &[Seen]) -> Vec<Value> {
    seen.iter()
        .map(|s| {
            let mut v = json!({"method": s.method, "path": s.path, "auth": s.auth, "body": s.body});
            normalize_user(&mut v);
            v
        })
        .collect()
}

#[test]
fn browser_camofox_every_tool_matches_hermes_client_against_the_same_fake() {
    let fake = FakeCamofox::start();
    let calls = script(&fake);
    let vars = [("CAMOFOX_API_KEY", KEY)];
    let (mut ours, errors, raw) = run_ours(&fake.url(), Some(&fake), &calls, CONFIG, &vars);
    let our_requests = fake.seen();
    let our_typed = fake.typed();
    fake.reset();
    let mut theirs = run_hermes(&fake.url(), CONFIG, &calls, &vars);
    let their_requests = fake.seen();

    // The fake saw the same requests, in the same order, with the same
    // bodies and bearer token.
    assert_eq!(
        request_shapes(&our_requests),
        request_shapes(&their_requests),
        "ours: {our_requests:#?}\ntheirs: {their_requests:#?}"
    );
    assert_eq!(our_typed, fake.typed(), "the raw text reaches the page");

    for (i, ((name, args), (o, t))) in calls
        .iter()
        .zip(ours.iter_mut().zip(theirs.iter_mut()))
        .enumerate()
    {
        if name.starts_with("__") {
            continue;
        }
        normalize_user(o);
        normalize_user(t);
        if name == "browser_vision" {
            // Hermes asks its auxiliary vision model (none here); Codex's
            // own model gets the screenshot from us.
            assert_eq!(o["success"], json!(true), "{o}");
            let path = o["screenshot_path"].as_str().unwrap();
            assert!(
                path.starts_with("$HERMES_HOME/browser_screenshots/browser_screenshot_"),
                "{o}"
            );
            assert!(
                o["analysis"]
                    .as_str()
                    .unwrap()
                    .contains("Accessibility tree"),
                "{o}"
            );
            let blocks = raw[i]["content"].as_array().unwrap();
            assert!(blocks.iter().any(|b| b["type"] == "image"), "{}", raw[i]);
            continue;
        }
        // Hermes' failures are `{"error", "success": false}`; ours are the
        // same object marked as a tool error.
        assert_eq!(
            errors[i],
            t["success"] == json!(false),
            "{name} {args}: {o} vs {t}"
        );
        assert_eq!(o, t, "step {i}: {name} {args}");
    }

    // Spot checks of what the comparison covered.
    let nav = &ours[1];
    assert_eq!(nav["vnc_url"], "http://127.0.0.1:6080", "{nav}");
    assert!(
        nav["snapshot"]
            .as_str()
            .unwrap()
            .contains("link \"Order form\" [e2]")
    );
    assert_eq!(ours[2]["url"], fake.page("form.html"));
    assert!(
        ours[4]["error"]
            .as_str()
            .unwrap()
            .starts_with("500 Server Error: Internal Server Error for url: ")
    );
    assert!(
        !ours[5]["typed"].as_str().unwrap().contains("AbCdEfGh"),
        "{}",
        ours[5]
    );
    assert_eq!(ours[9]["count"], 2);
    assert!(
        ours[12]["snapshot"]
            .as_str()
            .unwrap()
            .contains("more lines truncated")
    );
    assert_eq!(
        (&ours[14]["result"], &ours[14]["result_type"]),
        (&json!(2), &json!("int"))
    );
    assert_eq!(ours[16]["result"], json!({"a": [1, 2]}));
    assert_eq!(
        ours[17]["error"],
        "Blocked: URL targets a cloud metadata endpoint"
    );
    assert_eq!(ours[18]["blocked_by_policy"]["host"], "blocked.example");
    assert!(
        ours[22]["error"]
            .as_str()
            .unwrap()
            .contains("not supported by this Camofox server")
    );
    // The stale tab (forgotten by the server) was replaced.
    assert_eq!(ours[20]["title"], "", "{}", ours[20]);
    assert_eq!(our_requests.last().unwrap().method, "DELETE");
}

/// `hermes-mcp tools --json`'s browser provider line.
fn browser_provider(config: &str, vars: &[(&str, &str)]) -> Value {
    let env = TestEnv::new();
    env.write_hermes("config.yaml", config);
    provider_for(&env, vars, "browser")
}

#[test]
fn browser_camofox_is_selected_as_hermes_selects_it_and_needs_no_chromium() {
    let cf = [("CAMOFOX_URL", "http://127.0.0.1:9377/")];
    let p = browser_provider("", &cf);
    assert_eq!(p["provider"], "camofox", "{p}");
    let why = p["why"].as_str().unwrap();
    assert!(
        why.contains("CAMOFOX_URL") && why.contains("fresh profile"),
        "{p}"
    );
    // Camofox wins over a cloud provider (Hermes checks it first) ...
    let cloud = "browser:\n  cloud_provider: browserbase\n  record_sessions: true\n";
    let p = browser_provider(cloud, &cf);
    assert_eq!(p["provider"], "camofox", "{p}");
    assert!(
        p["why"]
            .as_str()
            .unwrap()
            .contains("does not apply to Camofox"),
        "{p}"
    );
    // ... and a CDP override (env or config) wins over Camofox.
    let mut with_cdp = cf.to_vec();
    with_cdp.push(("BROWSER_CDP_URL", "ws://127.0.0.1:9222/devtools/browser/x"));
    assert_eq!(browser_provider("", &with_cdp)["provider"], "cdp");
    let cfg = "browser:\n  cdp_url: ws://127.0.0.1:9222/devtools/browser/x\n";
    assert_eq!(browser_provider(cfg, &cf)["provider"], "cdp");
    let managed = "browser:\n  camofox:\n    managed_persistence: true\n";
    let p = browser_provider(managed, &cf);
    assert!(
        p["why"].as_str().unwrap().contains("persistent profile"),
        "{p}"
    );

    // No Chromium anywhere: the browser tools are still available.
    let env = TestEnv::new();
    let out = env
        .cmd()
        .args(["tools", "--json"])
        .env("PATH", "/nonexistent")
        .env("CAMOFOX_URL", "http://127.0.0.1:9377")
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let nav = doc["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "browser_navigate")
        .unwrap();
    assert_eq!(nav["available"], true, "{nav}");
}

#[test]
fn browser_camofox_unreachable_server_is_reported_as_hermes_does() {
    // A port nobody listens on.
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let calls = vec![(
        "browser_navigate".to_string(),
        json!({"url": "https://example.com/"}),
    )];
    let (ours, errors, _) = run_ours(&url, None, &calls, "", &[]);
    let theirs = run_hermes(&url, "", &calls, &[]);
    assert!(errors[0]);
    assert_eq!(ours[0], theirs[0]);
    assert!(
        ours[0]["error"].as_str().unwrap().starts_with(&format!(
            "Cannot connect to Camofox at {url}. Is the server running?"
        )),
        "{}",
        ours[0]
    );
    // The Camofox URL may be private (it is the user's), never cloud metadata.
    let calls = vec![
        (
            "browser_navigate".to_string(),
            json!({"url": "https://example.com/"}),
        ),
        ("browser_console".to_string(), json!({"expression": "1"})),
    ];
    let (ours, errors, _) = run_ours("http://169.254.169.254", None, &calls, "", &[]);
    assert!(errors[0] && errors[1], "{ours:?}");
    assert!(
        ours[0]["error"].as_str().unwrap().contains("metadata"),
        "{}",
        ours[0]
    );
}

/// The 5 s idle limit, with time at 1/5 (1 s): the real-time test of
/// `browser.inactivity_timeout` is the Chromium one (`browser.rs`).
#[test]
fn browser_camofox_session_is_released_when_idle() {
    let fake = FakeCamofox::start();
    let vars = [
        ("CAMOFOX_API_KEY", KEY),
        ("CAMOFOX_URL", &fake.url()),
        (TIME_SCALE, "0.2"),
    ];
    let mut s = served("browser:\n  inactivity_timeout: 5\n", &vars);
    let (err, v) = s.call("browser_navigate", json!({"url": fake.page("form.html")}));
    assert!(!err, "{v}");
    let seen = fake.wait_for(
        "the idle release",
        |s| s.iter().any(|r| r.method == "DELETE"),
        30,
    );
    let user = seen[0].body["userId"].as_str().unwrap().to_string();
    assert_eq!(
        seen.last().unwrap().path,
        format!("/sessions/{user}"),
        "{seen:#?}"
    );
    // The session is gone; a navigation starts a new one with a new userId.
    let (err, v) = s.call("browser_snapshot", json!({}));
    assert!(err, "{v}");
    assert_eq!(
        v["error"],
        "No browser session. Call browser_navigate first."
    );
    let (err, v) = s.call("browser_navigate", json!({"url": fake.page("index.html")}));
    assert!(!err, "{v}");
    let last_tab = fake
        .seen()
        .into_iter()
        .rev()
        .find(|r| r.method == "POST" && r.path == "/tabs")
        .unwrap();
    assert_ne!(last_tab.body["userId"], json!(user));
    // A page that lands on cloud metadata (a server-side redirect) is
    // refused as the CDP browser refuses it, and the tab is blanked.
    let (err, v) = s.call("browser_navigate", json!({"url": fake.page("to-metadata")}));
    assert!(err, "{v}");
    assert_eq!(
        v["error"],
        "Blocked: the page landed on a cloud metadata endpoint (http://169.254.169.254/latest/meta-data/)"
    );
    let last = fake.seen().pop().unwrap();
    assert_eq!(last.body["url"], "about:blank", "{last:?}");
    s.finish();
    assert_eq!(
        fake.seen().iter().filter(|r| r.method == "DELETE").count(),
        2
    );
}

/// Hermes' `get_camofox_identity()` for a Hermes home.
fn hermes_identity(home: &std::path::Path) -> Value {
    let out = Command::new(hermes_python("tools.browser_camofox_state"))
        .env_clear()
        .env("HERMES_HOME", home)
        .env("HOME", home)
        .args([
            "-c",
            "import json; from tools.browser_camofox_state import get_camofox_identity as g; print(json.dumps(g('default')))",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn browser_camofox_managed_profile_uses_hermes_identity_adopts_its_tab_and_is_kept() {
    let fake = FakeCamofox::start();
    let config =
        "browser:\n  camofox:\n    managed_persistence: true\n    adopt_existing_tab: true\n";
    let vars = [
        ("CAMOFOX_API_KEY", KEY),
        ("CAMOFOX_URL", &fake.url()),
        ("CAMOFOX_REWRITE_LOOPBACK_URLS", "true"),
    ];
    let mut s = served(config, &vars);
    let id = hermes_identity(&s.env.hermes_home());
    // The server already has a tab for this profile (a previous run).
    fake.state.lock().unwrap().tabs.push(FakeTab {
        id: "tab-old".into(),
        user: id["user_id"].as_str().unwrap().into(),
        list_item: id["session_key"].as_str().unwrap().into(),
        history: vec!["http://host.docker.internal:3000/pages/form.html".into()],
        idx: 0,
    });
    // Adopted: a snapshot works without a navigation.
    let (err, v) = s.call("browser_snapshot", json!({}));
    assert!(!err, "{v}");
    assert!(
        v["snapshot"].as_str().unwrap().contains("Place an order"),
        "{v}"
    );
    let seen = fake.seen();
    assert_eq!(
        seen[0].path,
        format!("/tabs?userId={}", id["user_id"].as_str().unwrap())
    );
    // A loopback page URL is opened on the Docker host alias, and said so.
    let (err, v) = s.call(
        "browser_navigate",
        json!({"url": "http://127.0.0.1:3000/pages/index.html"}),
    );
    assert!(!err, "{v}");
    assert_eq!(
        v["url"], "http://host.docker.internal:3000/pages/index.html",
        "{v}"
    );
    assert_eq!(v["requested_url"], "http://127.0.0.1:3000/pages/index.html");
    assert_eq!(v["url_rewrite"]["to"], "host.docker.internal");
    assert_eq!(
        v["warning"],
        "Rewrote loopback URL for Docker-hosted Camofox: 127.0.0.1 -> host.docker.internal"
    );
    let nav = fake
        .seen()
        .into_iter()
        .find(|r| r.path == "/tabs/tab-old/navigate")
        .unwrap();
    assert_eq!(nav.body["userId"], id["user_id"]);
    s.finish();
    // The persistent profile is left on the server.
    assert!(!fake.seen().iter().any(|r| r.method == "DELETE"));

    // Hermes' client does the same with the same fake.
    let calls = vec![
        ("browser_snapshot".to_string(), json!({})),
        (
            "browser_navigate".to_string(),
            json!({"url": "http://127.0.0.1:3000/pages/index.html"}),
        ),
    ];
    let (mut ours, _, _) = run_ours(&fake.url(), Some(&fake), &calls, config, &vars[..1]);
    let mut theirs = run_hermes(&fake.url(), config, &calls, &vars[..1]);
    ours.iter_mut().for_each(normalize_user);
    theirs.iter_mut().for_each(normalize_user);
    assert_eq!(ours, theirs);
}
