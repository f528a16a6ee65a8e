//! Sign-ins under stress, through the real binary:
//!
//! * A token refresh under way when `serve` is told to stop (stdin closed,
//!   SIGTERM) is stored before the process exits, for every sign-in that
//!   refreshes (ChatGPT, xAI, Nous): their refresh tokens are single-use, so
//!   exiting between the token endpoint's answer and the write to `auth.json`
//!   would leave the user signed out. The fake token endpoint answers after
//!   1 s; the server is stopped 0.2 s after the request reached it.
//! * Hermes' `auth.lock` held by another process costs one 15 s wait per
//!   call, not one per attempt, and the error names the lock and its holder
//!   instead of "no credentials".

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};

use super::support::common::*;
use super::support::fake::*;

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// A JWT-shaped token expiring `secs` from now (signatures are not checked).
fn jwt(tag: &str, secs: i64, extra: Value) -> String {
    let enc = |v: Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    let mut claims = json!({"exp": now() + secs, "sub": tag});
    if let (Some(c), Some(e)) = (claims.as_object_mut(), extra.as_object()) {
        c.extend(e.clone());
    }
    format!("{}.{}.sig-{tag}", enc(json!({"alg": "none"})), enc(claims))
}

fn auth_json(env: &TestEnv) -> Value {
    serde_json::from_str(&std::fs::read_to_string(env.hermes_home().join("auth.json")).unwrap())
        .unwrap()
}

/// A token endpoint that answers any POST to `path` with a new pair after 1 s.
fn slow_token_endpoint(path: &'static str, access: String) -> TestServer {
    TestServer::start(move |req| {
        if req.method == "POST" && req.path == path {
            Resp::json(
                200,
                json!({"access_token": access, "refresh_token": "rt-2", "token_type": "Bearer",
                       "expires_in": 3600}),
            )
            .delayed(Duration::from_secs(1))
        } else {
            Resp::json(404, json!({"error": "no route"}))
        }
    })
}

#[derive(Clone, Copy, Debug)]
enum Stop {
    /// Codex closes the server's stdin.
    Eof,
    /// Codex (or the system) sends SIGTERM.
    Term,
}

/// Call `tool` in a `serve` started in `env` with `vars`, stop the server once
/// the refresh reached `token_srv` at `path` (which answers 1 s later, so the
/// refresh is under way), and wait for it to exit.
fn stop_mid_refresh(
    env: &TestEnv,
    vars: &[(&str, &str)],
    (tool, args): (&str, Value),
    token_srv: &TestServer,
    path: &str,
    stop: Stop,
) {
    let mut rc = client(env, vars);
    rc.send("tools/call", json!({"name": tool, "arguments": args}));
    token_srv.wait_for(
        "the refresh request",
        |r| r.iter().any(|r| r.path == path),
        30,
    );
    match stop {
        Stop::Eof => rc.close_stdin(),
        Stop::Term => {
            let pid = rc.child.id() as libc::pid_t;
            // SAFETY: signalling the child we spawned (it has not been reaped).
            assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
        }
    }
    let status = wait_exit(&mut rc.child, &format!("serve after {stop:?}"), 60);
    assert!(status.success(), "{status:?}");
    assert_eq!(
        token_srv.hangups.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "the server hung up on the token endpoint instead of taking the new pair"
    );
}

/// `auth.json` with one `openai-codex` pool entry whose token expires within
/// Hermes' 120 s refresh window.
fn codex_pool(env: &TestEnv, ids: &[&str]) {
    let entries: Vec<Value> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| {
            json!({"id": id, "priority": i, "auth_type": "oauth", "source": "device_code",
                   "access_token": jwt(id, 60, json!({})), "refresh_token": "rt-1"})
        })
        .collect();
    env.write_hermes(
        "auth.json",
        &json!({"version": 1, "credential_pool": {"openai-codex": entries}}).to_string(),
    );
}

fn codex_config(env: &TestEnv, token_url: &str) {
    env.write_hermes(
        "config.yaml",
        &format!(
            "image_gen:\n  provider: openai-codex\n  openai-codex:\n    base_url: http://127.0.0.1:9/backend-api/codex\n    token_url: {token_url}\n"
        ),
    );
}

fn codex_refresh_is_stored_on(stop: Stop) {
    let fresh = jwt("fresh", 3600, json!({}));
    let srv = slow_token_endpoint("/oauth/token", fresh.clone());
    let env = TestEnv::new();
    codex_pool(&env, &["p1"]);
    codex_config(&env, &srv.url("/oauth/token"));
    stop_mid_refresh(
        &env,
        &[],
        ("image_generate", json!({"prompt": "a comet"})),
        &srv,
        "/oauth/token",
        stop,
    );
    let entry = &auth_json(&env)["credential_pool"]["openai-codex"][0];
    assert_eq!(entry["refresh_token"], "rt-2", "{entry}");
    assert_eq!(entry["access_token"], fresh);
}

#[test]
fn a_chatgpt_refresh_under_way_is_stored_when_stdin_closes() {
    codex_refresh_is_stored_on(Stop::Eof);
}

#[test]
fn a_chatgpt_refresh_under_way_is_stored_on_sigterm() {
    codex_refresh_is_stored_on(Stop::Term);
}

/// Hermes' xAI Grok sign-in with an access token a minute from expiry (so
/// the next use refreshes it), and `image_generate` on xAI at a closed port.
fn xai_sign_in_expiring(env: &TestEnv) {
    env.write_hermes(
        "auth.json",
        &json!({"version": 1, "providers": {"xai-oauth": {
            "tokens": {"access_token": jwt("old", 60, json!({})), "refresh_token": "rt-1", "token_type": "Bearer"},
            "auth_mode": "oauth_device_code"}}})
        .to_string(),
    );
    env.write_hermes(
        "config.yaml",
        "image_gen:\n  provider: xai\n  xai:\n    base_url: http://127.0.0.1:9/v1\n",
    );
}

#[test]
fn an_xai_refresh_under_way_is_stored_when_stdin_closes() {
    let fresh = jwt("fresh", 3600, json!({}));
    let srv = slow_token_endpoint("/token", fresh.clone());
    let env = TestEnv::new();
    xai_sign_in_expiring(&env);
    let url = srv.url("/token");
    stop_mid_refresh(
        &env,
        &[("HERMES_MCP_TEST_XAI_TOKEN_URL", url.as_str())],
        ("image_generate", json!({"prompt": "a comet"})),
        &srv,
        "/token",
        Stop::Eof,
    );
    let tokens = &auth_json(&env)["providers"]["xai-oauth"]["tokens"];
    assert_eq!(tokens["refresh_token"], "rt-2", "{tokens}");
    assert_eq!(tokens["access_token"], fresh);
}

#[test]
fn a_nous_refresh_under_way_is_stored_on_sigterm() {
    let fresh = jwt("fresh", 3600, json!({"paid_access": true}));
    let srv = slow_token_endpoint("/api/oauth/token", fresh.clone());
    let env = TestEnv::new();
    let stale = jwt("stale", -10, json!({"paid_access": true}));
    env.write_hermes(
        "auth.json",
        &json!({"version": 1, "active_provider": "nous", "providers": {"nous": {
            "access_token": stale, "refresh_token": "rt-1", "token_type": "Bearer",
            "client_id": "hermes-cli", "portal_base_url": srv.base(),
            "expires_at": "2020-01-01T00:00:00+00:00"}}})
        .to_string(),
    );
    let gateway = srv.url("/firecrawl");
    stop_mid_refresh(
        &env,
        &[("FIRECRAWL_GATEWAY_URL", gateway.as_str())],
        ("web_search", json!({"query": "rust"})),
        &srv,
        "/api/oauth/token",
        Stop::Term,
    );
    let nous = &auth_json(&env)["providers"]["nous"];
    assert_eq!(nous["refresh_token"], "rt-2", "{nous}");
    assert_eq!(nous["access_token"], fresh);
}

/// Another process holding a lock, killed when dropped (also when the test fails).
struct Holder(Child);

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Another process holding `path` exclusively (Hermes' own `fcntl.flock`).
fn hold_lock(path: &std::path::Path) -> Holder {
    // The error names the holder's pid: the spawned process must be the one holding the lock.
    let py = hermes_python_process("fcntl");
    let mut child = Command::new(py)
        .args([
            "-c",
            "import fcntl, sys, time\nf = open(sys.argv[1], 'a+')\nfcntl.flock(f, fcntl.LOCK_EX)\nprint('locked', flush=True)\ntime.sleep(300)", // held until killed
        ])
        .arg(path)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "locked");
    Holder(child)
}

/// Every sign-in that needs the lock in one call — the Nous login (at start-up
/// and again for the call) and two ChatGPT pool entries — waits for it once:
/// the call ends within one 15 s wait (plus start-up), not 38 s or more, with
/// an error that names the held lock and the process holding it.
///
/// The real-time test of the `auth.lock` wait: it runs unscaled (no
/// [`TIME_SCALE`]), so it proves Hermes' 15 s itself.
#[test]
fn a_held_auth_lock_costs_one_wait_and_is_named_with_its_holder() {
    let env = TestEnv::new();
    codex_pool(&env, &["p1", "p2"]);
    let mut store = auth_json(&env);
    store["providers"] = json!({"nous": {
        "access_token": "opaque", "refresh_token": "rt-n", "client_id": "hermes-cli",
        "portal_base_url": "http://127.0.0.1:9", "expires_at": "2020-01-01T00:00:00+00:00"}});
    env.write_hermes("auth.json", &store.to_string());
    codex_config(&env, "http://127.0.0.1:9/oauth/token");
    let lock = env.hermes_home().join("auth.lock");
    let holder = hold_lock(&lock);
    let holder_pid = holder.0.id();

    let start = Instant::now();
    let mut rc = client(&env, &[]);
    let r = rc.call_tool("image_generate", json!({"prompt": "a comet"}));
    let took = start.elapsed();
    drop(holder);
    let v = result_json(&r);
    let err = v["error"].as_str().unwrap_or_default();
    assert_eq!(v["success"], false, "{v}");
    assert!(err.contains(&lock.display().to_string()), "{err}");
    assert!(
        err.contains(&format!("process {holder_pid}")),
        "the holder is not named: {err}"
    );
    assert!(err.contains("fcntl.flock"), "the holder's command: {err}");
    assert!(err.contains("not released within 15s"), "{err}");
    assert!(!err.contains("No Codex"), "{err}");
    // The deadline is what is under test: one 15 s wait, generously bounded.
    assert!(took < Duration::from_secs(30), "took {took:?}");
    // Nothing was spent or written meanwhile.
    assert_eq!(
        auth_json(&env)["credential_pool"]["openai-codex"][0]["refresh_token"],
        "rt-1"
    );
}

/// The xAI sign-in behind a held `auth.lock`: the tool says the lock is held
/// (and by whom), not "No xAI credentials found". The token endpoint is a
/// closed loopback port, so nothing could leave the machine even if the lock
/// were ignored. Deadlines scaled to 1/100: the wait is 0.15 s, the text
/// still names Hermes' 15 s.
#[test]
fn a_held_auth_lock_is_named_for_the_xai_sign_in() {
    let env = TestEnv::new();
    xai_sign_in_expiring(&env);
    let lock = env.hermes_home().join("auth.lock");
    let holder = hold_lock(&lock);
    let holder_pid = holder.0.id();
    let mut rc = client(
        &env,
        &[
            ("HERMES_MCP_TEST_XAI_TOKEN_URL", "http://127.0.0.1:9/token"),
            (TIME_SCALE, "0.01"),
        ],
    );
    let start = Instant::now();
    let r = rc.call_tool("image_generate", json!({"prompt": "a comet"}));
    let took = start.elapsed();
    drop(holder);
    let v = result_json(&r);
    let err = v["error"].as_str().unwrap_or_default();
    assert_eq!(v["success"], false, "{v}");
    assert!(err.contains(&lock.display().to_string()), "{err}");
    assert!(err.contains(&format!("process {holder_pid}")), "{err}");
    assert!(err.contains("not released within 15s"), "{err}");
    assert!(
        took < Duration::from_secs(10),
        "the scaled wait took {took:?}"
    );
    assert!(!err.contains("No xAI credentials"), "{err}");
    assert_eq!(
        auth_json(&env)["providers"]["xai-oauth"]["tokens"]["refresh_token"],
        "rt-1"
    );
}
