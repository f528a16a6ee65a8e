//! Camofox failures say what happened, with the real figures: an answer over
//! the size limit is not "cannot connect", and a server that stops sending is
//! reported with the time actually waited and the limit that ended it.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::support::common::{RawClient, TIME_SCALE, TestEnv, is_error, result_json};
use super::support::fake::{Resp, TestServer};

fn navigate_via(camofox: &str, config_yaml: &str, vars: &[(&str, &str)]) -> (Value, Duration) {
    let env = TestEnv::new();
    env.write_hermes("config.yaml", config_yaml);
    let mut cmd = env.cmd();
    cmd.env("CAMOFOX_URL", camofox);
    cmd.envs(vars.iter().copied());
    let mut c = RawClient::spawn(cmd);
    c.initialize();
    let started = Instant::now();
    let r = c.call_tool("browser_navigate", json!({"url": "https://example.com/"}));
    let took = started.elapsed();
    assert!(is_error(&r), "{r}");
    // On exit the session is released; against a hanging fake that waits
    // for the same read limit.
    c.finish(Duration::from_secs(60));
    (result_json(&r), took)
}

#[test]
fn browser_camofox_oversized_answer_is_reported_with_the_limit() {
    // A 200 MB answer announced by its length, and one streamed without a
    // length until it passes the limit.
    let declared = TestServer::start(|_| {
        let mut head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 209715200\r\nConnection: close\r\n\r\n".to_vec();
        head.extend(vec![b' '; 65536]);
        Resp::raw(head).held(Duration::from_secs(5))
    });
    let streamed = TestServer::start(|_| {
        let mut body =
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"
                .to_vec();
        body.extend(vec![b' '; 21 * 1024 * 1024]);
        Resp::raw(body)
    });
    for srv in [&declared, &streamed] {
        let (v, _) = navigate_via(&srv.base(), "", &[]);
        let err = v["error"].as_str().unwrap_or_default();
        assert!(!err.contains("Cannot connect"), "{err}");
        assert!(
            err.contains("with more than 20 MiB") && err.contains("size limit"),
            "{err}"
        );
    }
}

/// Hermes' per-call limit (`browser.command_timeout`) ends the call, not the
/// HTTP client's 20 s idle cut: 24 s here. Time runs at 1/10 (the call waits
/// 2.4 s, the release at exit as long); the text speaks in Hermes' seconds.
#[test]
fn browser_camofox_hang_is_reported_with_the_real_wait() {
    const SCALE: f64 = 0.1;
    let hang = TestServer::start(|_| Resp::hang(Duration::from_secs(120)));
    let (v, took) = navigate_via(
        &hang.base(),
        "browser:\n  command_timeout: 24\n",
        &[(TIME_SCALE, &SCALE.to_string())],
    );
    let err = v["error"].as_str().unwrap_or_default().to_string();
    let waited: u64 = err
        .split("timed out after ")
        .nth(1)
        .and_then(|r| r.split('s').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no 'timed out after Ns' in: {err}"));
    // The call really waited what the text says (in real seconds: the said
    // wait times the scale), with 1 s of slack for the round trip through the
    // process on a loaded machine.
    let (real, said) = (took.as_secs_f64(), waited as f64 * SCALE);
    assert!(
        real >= said - 2.0 * SCALE && real <= said + 2.0 * SCALE + 1.0,
        "the error says {waited}s (at scale {SCALE}: {said:.2}s), the call took {real:.2}s: {err}"
    );
    assert_eq!(waited, 24, "the configured limit ends the call: {err}");
    assert!(!err.contains("Cannot connect"), "{err}");
}
