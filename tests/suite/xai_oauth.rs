//! Hermes' xAI Grok sign-in (`auth.json` `xai-oauth`) used by the xAI image,
//! TTS and web-search providers instead of `XAI_API_KEY`, as Hermes'
//! `resolve_xai_http_credentials` does; the choice is checked against Hermes'
//! own resolver on the same store. No test here can make a refresh leave the
//! machine: refresh endpoints are either refused by the xAI-origin pin before
//! any request, or loopback.

use std::process::Command;

use base64::Engine as _;
use serde_json::{Value, json};

use hermes_mcp::auth::xai as xai_auth;
use hermes_mcp::hermes::{Context, Env, HermesConfig, HermesHome};

use super::support::common::*;
use super::support::fake::*;
use super::support::media::*;

/// A JWT-shaped token whose `exp` is `secs` from now (the signature is not checked).
fn jwt(tag: &str, secs: i64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let enc = |v: Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    format!(
        "{}.{}.sig-{tag}",
        enc(json!({"alg": "none"})),
        enc(json!({"exp": now + secs, "sub": tag}))
    )
}

/// `auth.json` with a singleton sign-in and, optionally, a cached token endpoint.
fn store(access: &str, token_endpoint: Option<&str>) -> String {
    let mut state = json!({"tokens": {"access_token": access, "refresh_token": "rt-1", "token_type": "Bearer"},
                           "auth_mode": "oauth_device_code"});
    if let Some(e) = token_endpoint {
        state["discovery"] = json!({"token_endpoint": e});
    }
    json!({"version": 1, "providers": {"xai-oauth": state}}).to_string()
}

/// Answers every xAI endpoint the three providers use; records the bearer.
fn xai_fake() -> TestServer {
    TestServer::start(|req| match req.target.as_str() {
        "/v1/images/generations" => Resp::json(
            200,
            json!({"data": [{"b64_json": base64::engine::general_purpose::STANDARD.encode(png_bytes())}]}),
        ),
        "/v1/tts" => Resp::bytes("audio/wav", b"RIFF-oauth".to_vec()),
        "/v1/responses" if req.header("authorization") == Some("Bearer stale") => Resp::json(
            401,
            json!({"code": "unauthorized", "error": "token expired"}),
        ),
        "/v1/responses" => Resp::json(
            200,
            json!({"output": [], "citations": ["https://c.example/"]}),
        ),
        _ => Resp::json(404, json!({"error": "no route"})),
    })
}

#[test]
fn image_tts_and_web_search_use_the_sign_in_without_a_key() {
    let srv = xai_fake();
    let env = TestEnv::new();
    let token = jwt("a", 6 * 3600);
    env.write_hermes("auth.json", &store(&token, None));
    env.write_hermes(
        "config.yaml",
        &format!(
            "image_gen:\n  provider: xai\n  xai:\n    base_url: {b}/v1\n    storage: {{enabled: false}}\n\
             tts:\n  provider: xai\n  xai:\n    base_url: {b}/v1\n\
             web:\n  search_backend: xai\n  xai:\n    base_url: {b}/v1\n",
            b = srv.base()
        ),
    );
    // `tools` sees the sign-in: every xAI provider is available with no key.
    for tool in ["image_generate", "text_to_speech", "web_search"] {
        let row = provider_for(&env, &[], tool);
        assert_eq!(row["provider"], "xai", "{tool}: {row}");
    }
    let mut rc = client(&env, &[]);
    let v = result_json(&rc.call_tool("image_generate", json!({"prompt": "a comet"})));
    assert_eq!(v["success"], true, "{v}");
    let out = env.dir.path().join("s.wav");
    let v = result_json(&rc.call_tool("text_to_speech", json!({"text": "hi", "output_path": out})));
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(std::fs::read(&out).unwrap(), b"RIFF-oauth");
    let v = result_json(&rc.call_tool("web_search", json!({"query": "q"})));
    assert_eq!(v["data"]["web"][0]["url"], "https://c.example/", "{v}");
    let reqs = srv.reqs();
    assert_eq!(reqs.len(), 3);
    for r in &reqs {
        assert_eq!(
            r.header("authorization"),
            Some(format!("Bearer {token}").as_str()),
            "{}",
            r.target
        );
    }
}

#[test]
fn a_rejected_or_expired_sign_in_never_sends_the_refresh_token_off_the_xai_origin() {
    let srv = xai_fake();
    // A token endpoint that is not https on *.x.ai (an old or tampered cache).
    let token_srv = TestServer::start(|_| Resp::json(200, json!({"access_token": "stolen"})));
    let env = TestEnv::new();
    let endpoint = format!("{}/token", token_srv.base());
    env.write_hermes("auth.json", &store("stale", Some(&endpoint)));
    env.write_hermes(
        "config.yaml",
        &format!(
            "web:\n  search_backend: xai\n  xai:\n    base_url: {}/v1\n",
            srv.base()
        ),
    );
    let mut rc = client(&env, &[]);
    let v = result_json(&rc.call_tool("web_search", json!({"query": "q"})));
    // The 401 is reported as Hermes words it, with no retry and no refresh.
    assert_eq!(
        v["error"],
        r#"xAI web search returned HTTP 401: {"code":"unauthorized","error":"token expired"}"#,
        "{v}"
    );
    assert_eq!(srv.reqs().len(), 1);
    assert!(token_srv.reqs().is_empty(), "refresh token was sent");

    // An expired sign-in whose refresh is refused is skipped (as Hermes' pool
    // skips it): XAI_API_KEY is used instead.
    env.write_hermes("auth.json", &store(&jwt("old", -60), Some(&endpoint)));
    let mut rc = client(&env, &[("XAI_API_KEY", "key-1")]);
    let v = result_json(&rc.call_tool("web_search", json!({"query": "q"})));
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(
        srv.reqs().last().unwrap().header("authorization"),
        Some("Bearer key-1")
    );
    assert!(token_srv.reqs().is_empty(), "refresh token was sent");
    // The store is left as it was.
    let kept: Value = serde_json::from_str(
        &std::fs::read_to_string(env.hermes_home().join("auth.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        kept["providers"]["xai-oauth"]["tokens"]["refresh_token"],
        "rt-1"
    );
}

/// Hermes' own `resolve_xai_http_credentials` on the same stores picks the
/// same credentials and base URL (tokens far from expiry, so Hermes makes no
/// network call either).
#[test]
fn the_choice_matches_hermes_resolver() {
    let py = hermes_python("tools.xai_http");
    let token = jwt("h", 6 * 3600);
    let pool_token = jwt("p", 6 * 3600);
    let cases: Vec<(String, Vec<(&str, &str)>)> = vec![
        (store(&token, None), vec![("XAI_API_KEY", "k")]),
        // A non-xAI override is refused for the sign-in.
        (
            store(&token, None),
            vec![("XAI_BASE_URL", "https://proxy.example/v1")],
        ),
        (
            store(&token, None),
            vec![("HERMES_XAI_BASE_URL", "https://eu.api.x.ai/v1")],
        ),
        // Pool entries before the singleton.
        (
            json!({"providers": {}, "credential_pool": {"xai-oauth": [
                {"id": "p1", "priority": 0, "source": "manual:device_code", "auth_type": "oauth",
                 "access_token": pool_token, "refresh_token": "rt-p", "base_url": "https://api.x.ai/v1"}]}})
            .to_string(),
            vec![],
        ),
        // No sign-in: the key and XAI_BASE_URL, unpinned.
        (
            "{}".into(),
            vec![
                ("XAI_API_KEY", "k2"),
                ("XAI_BASE_URL", "http://127.0.0.1:9/v1"),
            ],
        ),
    ];
    for (auth, vars) in cases {
        let env = TestEnv::new();
        env.write_hermes("auth.json", &auth);
        let mut c = Command::new(&py);
        env.apply(&mut c);
        for (k, v) in &vars {
            c.env(k, v);
        }
        let o = c
            .args([
                "-c",
                "import json\nfrom tools.xai_http import resolve_xai_http_credentials as r\nprint(json.dumps(r()))",
            ])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let hermes: Value =
            serde_json::from_str(String::from_utf8_lossy(&o.stdout).lines().last().unwrap())
                .unwrap();
        let ctx = Context::with_parts(
            HermesHome {
                path: env.hermes_home(),
                explicit: true,
            },
            Env::from_map(vars.iter().map(|(k, v)| (k.to_string(), v.to_string()))),
            HermesConfig::default(),
        );
        hermes_mcp::net::client::install_crypto();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let c = rt
            .block_on(xai_auth::resolve(&ctx, &reqwest::Client::new()))
            .expect("credentials");
        let provider = if c.oauth { "xai-oauth" } else { "xai" };
        assert_eq!(
            json!({"provider": provider, "api_key": c.api_key, "base_url": c.base_url}),
            json!({"provider": hermes["provider"], "api_key": hermes["api_key"], "base_url": hermes["base_url"]}),
            "{auth} {vars:?}"
        );
    }
}

/// A Hermes profile (`<root>/profiles/<name>`, e.g. a kanban worker's) with
/// no sign-in of its own uses the one at the root, as Hermes'
/// `_load_provider_state` does; the profile's own, once it has one, wins.
#[test]
fn a_profile_uses_the_root_sign_in_until_it_has_its_own() {
    let srv = xai_fake();
    let env = TestEnv::new();
    let root_token = jwt("root", 6 * 3600);
    env.write_hermes("auth.json", &store(&root_token, None));
    let profile = env.hermes_home().join("profiles/worker");
    std::fs::create_dir_all(&profile).unwrap();
    std::fs::write(
        profile.join("config.yaml"),
        format!(
            "image_gen:\n  provider: xai\n  xai:\n    base_url: {}/v1\n    storage: {{enabled: false}}\n",
            srv.base()
        ),
    )
    .unwrap();
    let call = || {
        let mut c = env.cmd();
        c.env("HERMES_HOME", &profile);
        let mut rc = RawClient::spawn(c);
        rc.initialize();
        let v = result_json(&rc.call_tool("image_generate", json!({"prompt": "a comet"})));
        assert_eq!(v["success"], true, "{v}");
        srv.reqs()
            .last()
            .unwrap()
            .header("authorization")
            .map(str::to_string)
    };
    assert_eq!(call(), Some(format!("Bearer {root_token}")));
    let own = jwt("own", 6 * 3600);
    std::fs::write(profile.join("auth.json"), store(&own, None)).unwrap();
    assert_eq!(call(), Some(format!("Bearer {own}")));
}

/// Each `tools/list` reads `auth.json` as it is then (once per list, however
/// many tools check it: `auth::snapshot`): a sign-in made while the server
/// runs shows in the next list, and so does its removal.
#[test]
fn each_tool_list_reads_the_sign_in_as_it_is_then() {
    let env = TestEnv::new();
    env.write_hermes(
        "config.yaml",
        "image_gen:\n  provider: xai\n  xai:\n    base_url: http://127.0.0.1:9/v1\n    storage: {enabled: false}\n",
    );
    let mut rc = client(&env, &[]);
    let mut listed = || {
        let list = rc.request("tools/list", json!({}));
        list["result"]["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .any(|t| t["name"] == "image_generate")
    };
    assert!(
        !listed(),
        "no sign-in, no key: image_generate is not listed"
    );
    env.write_hermes("auth.json", &store(&jwt("a", 6 * 3600), None));
    assert!(listed(), "the sign-in made after start is seen");
    env.write_hermes("auth.json", "{}");
    assert!(!listed(), "and its removal");
}
