//! The Nous tool gateway (hermes-agent: tools/managed_tool_gateway.py and its
//! callers): web (Firecrawl), image_gen (FAL queue, Krea), TTS (OpenAI audio)
//! and Browser Use through one loopback fake that plays the Nous Portal
//! (`/api/oauth/token`, `/api/oauth/account`) and each vendor's gateway (the
//! vendor's own API, authenticated with the Nous token), mounted under a path
//! per vendor (`<VENDOR>_GATEWAY_URL=<fake>/<vendor>`).
//!
//! Hermes' own Python runs against the same fake where its client is in the
//! venv (entitlement, selection, refresh, OpenAI audio, Krea, Browser Use) and
//! must decide and send the same.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::support::browser::{ExternalChrome, page_server};
use super::support::common::*;
use super::support::fake::*;
use super::support::media::*;
use super::support::nous_gateway::*;

/// (name, access token, config.yaml, extra variables, whether every tool goes through the gateway).
type Case<'a> = (&'a str, &'a str, &'a str, Vec<(&'a str, &'a str)>, bool);

#[test]
fn selection_and_precedence_match_hermes() {
    let fake = Fake::start(Vec::new());
    let portal = fake.srv.base();
    let paid = token("u-paid", true);
    let unpaid = token("u-free", false);
    let pool = jwt(
        json!({"sub": "u-pool", "exp": now() + 3600, "paid_access": false,
                          "tool_access": {"enabled": true, "coverage": {"fal": true}}}),
    );
    let gw = fake.vars();
    let keys = [
        ("FIRECRAWL_API_KEY", "fc-direct"),
        ("FAL_KEY", "fal-direct"),
        ("OPENAI_API_KEY", "sk-direct"),
        ("BROWSER_USE_API_KEY", "bu-direct"),
    ];
    let tts = "tts: {provider: openai}\n";
    let prefer = "web: {use_gateway: true}\nimage_gen: {use_gateway: true}\ntts: {provider: openai, use_gateway: 'yes'}\nbrowser: {use_gateway: true}\n";
    let cases: Vec<Case> = vec![
        ("paid, no keys", &paid, tts, vec![], true),
        ("paid, direct keys", &paid, tts, keys.to_vec(), false),
        (
            "paid, keys, use_gateway",
            &paid,
            prefer,
            keys.to_vec(),
            true,
        ),
        ("not entitled", &unpaid, tts, vec![], false),
        ("free tool pool", &pool, tts, vec![], true),
        (
            "explicit user token without a login",
            "",
            tts,
            vec![("TOOL_GATEWAY_USER_TOKEN", "tok")],
            false,
        ),
    ];
    for (name, access, config, extra, via_gateway) in cases {
        let env = TestEnv::new();
        env.write_hermes("config.yaml", config);
        if !access.is_empty() {
            write_login(&env, &portal, access, now() + 3600, None);
        }
        let vars = with(&gw, &extra);
        let ours = our_choices(&env, &vars);
        let theirs = hermes_py(&env, &vars, HERMES_CHOICES);
        assert_eq!(
            theirs["entitled"],
            via_gateway || name.contains("direct keys"),
            "{name}: {theirs}"
        );
        for k in [
            "firecrawl_gateway",
            "fal_gateway",
            "tts_gateway",
            "bu_gateway",
        ] {
            assert_eq!(
                ours[k], theirs[k],
                "{name}: {k}: ours {ours}, Hermes {theirs}"
            );
            assert_eq!(ours[k], via_gateway, "{name}: {k}");
        }
        if via_gateway || theirs["web"] != "firecrawl" {
            assert_eq!(
                ours["web"], theirs["web"],
                "{name}: ours {ours}, Hermes {theirs}"
            );
        }
    }

    // An explicit search key beats the gateway probe (Hermes' auto-detect order).
    let env = TestEnv::new();
    write_login(&env, &portal, &paid, now() + 3600, None);
    let vars = with(&gw, &[("TAVILY_API_KEY", "tv")]);
    assert_eq!(our_choices(&env, &vars)["web"], "tavily");
    assert_eq!(hermes_py(&env, &vars, HERMES_CHOICES)["web"], "tavily");

    // The why says where and why.
    let vars = with(&gw, &[]);
    let p = provider_for(&env, &vars, "image_generate");
    assert_eq!(p["provider"], "fal (nous gateway)", "{p}");
    let why = p["why"].as_str().unwrap();
    assert!(
        why.contains("Nous tool gateway (fal-queue)") && why.contains(&format!("{portal}/fal")),
        "{p}"
    );
    let p = provider_for(&env, &vars, "web_search");
    assert!(
        p["why"].as_str().unwrap().contains("Nous login entitled"),
        "{p}"
    );
}

#[test]
fn opaque_tokens_ask_the_portal_and_fail_closed() {
    let fake = Fake::start(Vec::new());
    let portal = fake.srv.base();
    fake.paid("opaque-paid");
    fake.account(
        "opaque-broke",
        json!({"paid_service_access": {"allowed": false, "has_active_subscription": false,
               "total_usable_credits": 0, "reason": "no_usable_credits"}}),
    );
    let gw = fake.vars();
    let vars = with(&gw, &[]);
    for (tok, entitled) in [
        ("opaque-paid", true),
        ("opaque-broke", false),
        ("opaque-unknown", false),
    ] {
        let env = TestEnv::new();
        write_login(&env, &portal, tok, now() + 3600, None);
        let theirs = hermes_py(&env, &vars, HERMES_CHOICES);
        let ours = our_choices(&env, &vars);
        assert_eq!(theirs["entitled"], entitled, "{tok}: {theirs}");
        assert_eq!(ours["fal_gateway"], entitled, "{tok}: {ours}");
        assert_eq!(ours["bu_gateway"], theirs["bu_gateway"], "{tok}");
    }
    let asked: Vec<_> = fake.requests_to("/api/oauth/account");
    assert!(
        asked
            .iter()
            .all(|r| r.method == "GET" && r.header("accept") == Some("application/json")),
        "{asked:?}"
    );
    // A portal that does not answer: not entitled (closed), and the tool says why.
    let env = TestEnv::new();
    write_login(
        &env,
        "http://127.0.0.1:9",
        "opaque-paid",
        now() + 3600,
        None,
    );
    let ours = our_choices(&env, &vars);
    assert_eq!(ours["fal_gateway"], false);
    let mut rc = client(&env, &vars);
    // The tool is not offered, and says why.
    let r = rc.call_tool("image_generate", json!({"prompt": "x"}));
    assert!(is_error(&r));
    let e = result_json(&r)["error"].as_str().unwrap().to_string();
    assert!(
        e.starts_with("image_generate is not available: FAL_KEY is not set")
            && e.contains("(Nous tool gateway: Nous entitlement could not be verified ("),
        "{e}"
    );
    let theirs = hermes_py(
        &env,
        &vars,
        "import json\nfrom tools.tool_backend_helpers import nous_tool_gateway_unavailable_message as m\nprint(json.dumps({'m': m('managed FAL image generation')}))\n",
    );
    assert!(
        theirs["m"]
            .as_str()
            .unwrap()
            .starts_with("Hermes could not verify your Nous Portal paid access, so managed FAL image generation is unavailable. Account lookup failed:"),
        "{theirs}"
    );
}

#[test]
fn firecrawl_search_and_extract_through_the_gateway() {
    let fake = Fake::start(Vec::new());
    let tok = token("u1", true);
    fake.paid(&tok);
    let env = TestEnv::new();
    write_login(&env, &fake.srv.base(), &tok, now() + 3600, None);
    let gw = fake.vars();
    let vars = with(&gw, &[("HERMES_MCP_LOG", "debug")]);
    let mut rc = client(&env, &vars);
    let v = result_json(&rc.call_tool("web_search", json!({"query": "rust", "limit": 3})));
    assert_eq!(
        v,
        json!({"success": true, "data": {"web": [{"title": "Rust", "url": "https://www.rust-lang.org/", "description": "A language", "position": 1}]}})
    );
    let v = result_json(&rc.call_tool("web_search", json!({"query": "deny"})));
    assert_eq!(
        v,
        json!({"success": false, "error": "Firecrawl search failed: HTTP 402: Insufficient credits"})
    );
    let v = result_json(&rc.call_tool(
        "web_extract",
        json!({"urls": ["https://93.184.215.14/page"]}),
    ));
    assert_eq!(v["results"][0]["title"], "Example", "{v}");
    assert!(
        v["results"][0]["content"]
            .as_str()
            .unwrap()
            .contains("Hello from the gateway"),
        "{v}"
    );
    let reqs = fake.requests_to("/firecrawl/");
    assert_eq!(reqs[0].target, "/firecrawl/v2/search");
    assert_eq!(reqs[0].json(), json!({"query": "rust", "limit": 3}));
    for r in &reqs {
        assert_eq!(
            r.header("authorization"),
            Some(format!("Bearer {tok}").as_str())
        );
    }
    assert_eq!(reqs.last().unwrap().target, "/firecrawl/v2/scrape");
    assert_eq!(
        reqs.last().unwrap().json(),
        json!({"url": "https://93.184.215.14/page", "formats": ["markdown"]})
    );
    drop(rc);
    // The token never reaches the log, even at debug level.
    let logged: String = std::fs::read_dir(env.hermes_home().join("logs"))
        .map(|d| {
            d.flatten()
                .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
                .collect()
        })
        .unwrap_or_default();
    assert!(logged.contains("web_search"), "debug log written: {logged}");
    assert!(!logged.contains(&tok), "the Nous token was logged");

    // A gateway URL is a configured endpoint: cloud metadata stays blocked.
    let meta = [("FIRECRAWL_GATEWAY_URL", "http://169.254.169.254/latest")];
    let mut rc = client(&env, &meta);
    let v = result_json(&rc.call_tool("web_search", json!({"query": "rust"})));
    assert_eq!(v["success"], false, "{v}");
    assert_eq!(
        v["error"],
        "Firecrawl search failed: Blocked: URL targets a cloud metadata endpoint"
    );
    assert!(fake.requests_to("/latest").is_empty());
    drop(rc);

    // Not entitled and no Firecrawl config: Hermes' configuration error.
    let env = TestEnv::new();
    env.write_hermes("config.yaml", "web: {backend: firecrawl}\n");
    write_login(
        &env,
        &fake.srv.base(),
        &token("u2", false),
        now() + 3600,
        None,
    );
    let vars = with(&gw, &[]);
    let mut rc = client(&env, &vars);
    let v = result_json(&rc.call_tool("web_search", json!({"query": "rust"})));
    let theirs = hermes_py(
        &env,
        &vars,
        "import json\nfrom plugins.web.firecrawl.provider import _raise_web_backend_configuration_error as f\ntry:\n    f()\nexcept ValueError as e:\n    print(json.dumps({'m': str(e)}))\n",
    );
    assert_eq!(
        v,
        json!({"error": format!("Error searching web: {}", theirs["m"].as_str().unwrap())})
    );
    assert!(
        theirs["m"]
            .as_str()
            .unwrap()
            .contains("so managed Firecrawl web tools is unavailable"),
        "{theirs}"
    );
}

#[test]
fn fal_queue_and_krea_through_the_gateway() {
    let fake = Fake::start(Vec::new());
    let tok = token("u1", true);
    fake.paid(&tok);
    let env = TestEnv::new();
    write_login(&env, &fake.srv.base(), &tok, now() + 3600, None);
    let gw = fake.vars();
    let vars = with(&gw, &[("HERMES_ALLOW_PRIVATE_URLS", "true")]);
    let mut rc = client(&env, &vars);
    let v = result_json(&rc.call_tool("image_generate", json!({"prompt": "a red pixel"})));
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(v["provider"], "fal");
    let reqs = fake.requests_to("/fal/");
    assert_eq!(reqs[0].method, "POST");
    assert_eq!(reqs[0].target, "/fal/fal-ai/flux-2/klein/9b");
    assert!(reqs[0].header("x-idempotency-key").is_some());
    for r in &reqs {
        assert_eq!(
            r.header("authorization"),
            Some(format!("Key {tok}").as_str()),
            "{r:?}"
        );
    }
    assert_eq!(
        std::fs::read(v["image"].as_str().unwrap()).unwrap(),
        png_bytes()
    );
    drop(rc);

    // A model the gateway refuses (403): Hermes' wording, with a fresh account check.
    env.write_hermes("config.yaml", "image_gen: {model: fal-ai/z-image/turbo}\n");
    let mut rc = client(&env, &vars);
    let before = fake.requests_to("/api/oauth/account").len();
    let v = result_json(&rc.call_tool("image_generate", json!({"prompt": "x"})));
    let e = v["error"].as_str().unwrap();
    assert_eq!(v["error_type"], "ValueError", "{v}");
    assert!(
        e.starts_with("Nous Subscription gateway rejected model 'fal-ai/z-image/turbo' (HTTP 403). This model may not yet be enabled on the Nous Portal's FAL proxy. Either:\n  • Set FAL_KEY in your environment to use FAL.ai directly, or\n  • Pick a different model via `hermes tools` → Image Generation."),
        "{e}"
    );
    assert!(fake.requests_to("/api/oauth/account").len() > before);
    drop(rc);

    // Krea: named, and routed from the FAL path for a native krea-2-* model.
    for config in [
        "image_gen: {provider: krea, model: krea-2-large}\n",
        "image_gen: {model: krea-2-large}\n",
    ] {
        env.write_hermes("config.yaml", config);
        let p = provider_for(&env, &vars, "image_generate");
        assert_eq!(p["provider"], "krea (nous gateway)", "{config}: {p}");
        let mut rc = client(&env, &vars);
        let n = fake.requests_to("/krea/").len();
        let v = result_json(&rc.call_tool("image_generate", json!({"prompt": "a cat"})));
        assert_eq!(v["success"], true, "{config}: {v}");
        assert_eq!(v["provider"], "krea");
        assert_eq!(v["model"], "krea-2-large");
        let reqs = fake.requests_to("/krea/")[n..].to_vec();
        assert_eq!(reqs[0].target, "/krea/generate/image/krea/krea-2/large");
        assert!(reqs[0].header("x-idempotency-key").is_some());
        assert_eq!(reqs[1].target, "/krea/jobs/k1");
        for r in &reqs {
            assert_eq!(
                r.header("authorization"),
                Some(format!("Bearer {tok}").as_str())
            );
        }
        let v = result_json(&rc.call_tool("image_generate", json!({"prompt": "refuse"})));
        assert_eq!(
            v["error"],
            "Nous Subscription Krea gateway rejected 'krea-2-large' (HTTP 400): model not priced. Model 'krea-2-large' may not be enabled/priced on the Nous Portal's Krea gateway. Set KREA_API_KEY to use Krea directly, or pick a different model via `hermes tools` → Image Generation.",
            "{v}"
        );
    }

    // Hermes' Krea plugin sends the same submit to the same gateway.
    env.write_hermes(
        "config.yaml",
        "image_gen: {provider: krea, model: krea-2-large}\n",
    );
    let n = fake.requests_to("/krea/").len();
    let theirs = hermes_py(
        &env,
        &vars,
        r#"
import importlib.util, json
import plugins.image_gen as pkg
path = list(pkg.__path__)[0] + "/krea/__init__.py"
spec = importlib.util.spec_from_file_location("k", path)
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
m._POLL_INITIAL_INTERVAL = 0.05
print(json.dumps(m.KreaImageGenProvider().generate("a cat", model="krea-2-large")))
"#,
    );
    assert_eq!(theirs["success"], true, "{theirs}");
    let reqs = fake.requests_to("/krea/");
    let (h, o) = (&reqs[n], &reqs[n - 3]);
    assert_eq!(h.target, o.target);
    assert_eq!(h.json(), o.json());
    for k in ["authorization", "user-agent", "content-type"] {
        assert_eq!(h.header(k), o.header(k), "{k}");
    }
    assert!(h.header("x-idempotency-key").is_some());
}

#[test]
fn openai_tts_through_the_gateway_like_hermes() {
    super::support::prereq::require_program("lame");
    let mp3 = super::support::tts::real_mp3(tempfile::tempdir().unwrap().path());
    let fake = Fake::start(mp3.clone());
    let tok = token("u1", true);
    fake.paid(&tok);
    let env = TestEnv::new();
    // A model set for direct OpenAI: the gateway only takes gpt-4o-mini-tts.
    env.write_hermes(
        "config.yaml",
        "tts:\n  provider: openai\n  openai: {model: tts-1-hd, voice: nova}\n",
    );
    write_login(&env, &fake.srv.base(), &tok, now() + 3600, None);
    let gw = fake.vars();
    let vars = with(&gw, &[]);
    let out = env.dir.path().join("ours.mp3");
    let mut rc = client(&env, &vars);
    let v = result_json(&rc.call_tool(
        "text_to_speech",
        json!({"text": "Hello there.", "output_path": out}),
    ));
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(v["provider"], "openai");
    assert_eq!(std::fs::read(&out).unwrap(), mp3);
    let ours = fake.requests_to("/audio/");
    assert_eq!(ours.len(), 1);
    let theirs_out = env.dir.path().join("theirs.mp3");
    let theirs = hermes_py(
        &env,
        &vars,
        &format!(
            "import json\nfrom tools.tts_tool import text_to_speech_tool\nprint(text_to_speech_tool(text='Hello there.', output_path={:?}))\n",
            theirs_out.display().to_string()
        ),
    );
    assert_eq!(theirs["success"], true, "{theirs}");
    let reqs = fake.requests_to("/audio/");
    let (o, h) = (&reqs[0], &reqs[1]);
    assert_eq!((&o.method, &o.target), (&h.method, &h.target));
    assert_eq!(o.target, "/audio/v1/audio/speech");
    assert_eq!(o.json(), h.json());
    assert_eq!(o.json()["model"], "gpt-4o-mini-tts");
    assert_eq!(o.header("authorization"), h.header("authorization"));
    assert!(o.header("x-idempotency-key").is_some() && h.header("x-idempotency-key").is_some());

    // A key wins without use_gateway; with it and no entitlement: Hermes' text.
    let free = token("u2", false);
    write_login(&env, &fake.srv.base(), &free, now() + 3600, None);
    env.write_hermes(
        "config.yaml",
        "tts:\n  provider: openai\n  use_gateway: true\n",
    );
    let vars = with(&gw, &[("OPENAI_API_KEY", "sk-direct")]);
    let mut rc = client(&env, &vars);
    let v = result_json(&rc.call_tool("text_to_speech", json!({"text": "Hi"})));
    let theirs = hermes_py(
        &env,
        &vars,
        "import json\nfrom tools.tts_tool import text_to_speech_tool\nprint(text_to_speech_tool(text='Hi'))\n",
    );
    assert_eq!(v["success"], false);
    assert_eq!(v["error"], theirs["error"], "ours {v}\nHermes {theirs}");
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .starts_with("TTS configuration error (openai): Neither VOICE_TOOLS_OPENAI_KEY nor OPENAI_API_KEY is set. "),
        "{v}"
    );
}

#[test]
fn an_expiring_token_is_refreshed_against_the_portal_like_hermes() {
    let fake = Fake::start(Vec::new());
    let stale = jwt(json!({"sub": "u1", "exp": now() - 10, "paid_access": true}));
    let fresh_ours = token("u1-ours", true);
    let fresh_theirs = token("u1-theirs", true);
    fake.paid(&fresh_ours);
    fake.paid(&fresh_theirs);
    {
        let mut a = fake.accounts.lock().unwrap();
        a.refresh
            .push(("rt-ours".into(), fresh_ours.clone(), "rt-ours-2".into()));
        a.refresh.push((
            "rt-theirs".into(),
            fresh_theirs.clone(),
            "rt-theirs-2".into(),
        ));
    }
    let gw = fake.vars();
    let vars = with(&gw, &[]);

    // Ours: the tool call refreshes, asks the portal, then uses the new token.
    let env = TestEnv::new();
    write_login(&env, &fake.srv.base(), &stale, now() - 10, Some("rt-ours"));
    let mut rc = client(&env, &vars);
    let v = result_json(&rc.call_tool("web_search", json!({"query": "rust"})));
    assert_eq!(v["success"], true, "{v}");
    let search = fake.requests_to("/firecrawl/");
    assert_eq!(
        search[0].header("authorization"),
        Some(format!("Bearer {fresh_ours}").as_str())
    );
    let auth: Value = serde_json::from_str(
        &std::fs::read_to_string(env.hermes_home().join("auth.json")).unwrap(),
    )
    .unwrap();
    let nous = &auth["providers"]["nous"];
    assert_eq!(nous["access_token"], fresh_ours);
    assert_eq!(nous["refresh_token"], "rt-ours-2");
    assert_eq!(nous["expires_in"], 3600);
    assert_eq!(
        nous["inference_base_url"],
        format!("{}/v1", fake.srv.base()),
        "other fields kept"
    );
    assert_eq!(auth["active_provider"], "nous");
    drop(rc);

    // Hermes: the same refresh request.
    let env2 = TestEnv::new();
    write_login(
        &env2,
        &fake.srv.base(),
        &stale,
        now() - 10,
        Some("rt-theirs"),
    );
    let theirs = hermes_py(
        &env2,
        &vars,
        "import json\nfrom tools.managed_tool_gateway import resolve_managed_tool_gateway\ng = resolve_managed_tool_gateway('firecrawl')\nprint(json.dumps({'origin': g.gateway_origin, 'token': g.nous_user_token}))\n",
    );
    assert_eq!(theirs["token"], fresh_theirs);
    assert_eq!(theirs["origin"], format!("{}/firecrawl", fake.srv.base()));
    let refreshes = fake.requests_to("/api/oauth/token");
    assert_eq!(refreshes.len(), 2, "{refreshes:?}");
    let (o, h) = (&refreshes[0], &refreshes[1]);
    assert_eq!(o.method, "POST");
    assert_eq!(o.header("x-nous-refresh-token"), Some("rt-ours"));
    assert_eq!(h.header("x-nous-refresh-token"), Some("rt-theirs"));
    assert_eq!(o.body, h.body);
    assert_eq!(o.body, b"grant_type=refresh_token&client_id=hermes-cli");
    for k in ["content-type", "accept"] {
        assert_eq!(o.header(k), h.header(k), "{k}");
    }
    let theirs_auth: Value = serde_json::from_str(
        &std::fs::read_to_string(env2.hermes_home().join("auth.json")).unwrap(),
    )
    .unwrap();
    let mut keys_ours: Vec<_> = nous.as_object().unwrap().keys().cloned().collect();
    let mut keys_theirs: Vec<_> = theirs_auth["providers"]["nous"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    keys_ours.sort();
    keys_theirs.sort();
    keys_theirs.retain(|k| !k.starts_with("agent_key") && k != "quarantine");
    assert_eq!(keys_ours, keys_theirs);

    // Both wrote the rotated pair to the shared cross-profile store, alike.
    let shared = |e: &TestEnv| -> Value {
        serde_json::from_str(
            &std::fs::read_to_string(e.hermes_home().join("shared/nous_auth.json")).unwrap(),
        )
        .unwrap()
    };
    let (so, sh) = (shared(&env), shared(&env2));
    assert_eq!(so["refresh_token"], "rt-ours-2");
    assert_eq!(sh["refresh_token"], "rt-theirs-2");
    let keys = |v: &Value| {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(keys(&so), keys(&sh));
    for k in [
        "_schema",
        "token_type",
        "scope",
        "client_id",
        "portal_base_url",
        "inference_base_url",
    ] {
        assert_eq!(so[k], sh[k], "{k}");
    }

    // Another profile already rotated the pair into the shared store: it is
    // taken (no refresh, no spent token) and written into this profile.
    let env4 = TestEnv::new();
    write_login(&env4, &fake.srv.base(), &stale, now() - 10, Some("rt-ours"));
    std::fs::create_dir_all(env4.hermes_home().join("shared")).unwrap();
    let mut newer = so.clone();
    newer["access_token"] = json!(fresh_ours);
    std::fs::write(
        env4.hermes_home().join("shared/nous_auth.json"),
        newer.to_string(),
    )
    .unwrap();
    let before = fake.requests_to("/api/oauth/token").len();
    let mut rc = client(&env4, &vars);
    let v = result_json(&rc.call_tool("web_search", json!({"query": "rust"})));
    assert_eq!(v["success"], true, "{v}");
    drop(rc);
    assert_eq!(
        fake.requests_to("/api/oauth/token").len(),
        before,
        "no refresh"
    );
    let auth: Value = serde_json::from_str(
        &std::fs::read_to_string(env4.hermes_home().join("auth.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(auth["providers"]["nous"]["refresh_token"], "rt-ours-2");
    assert_eq!(auth["providers"]["nous"]["access_token"], fresh_ours);

    // A refresh the portal refuses: no gateway; the stale token is not used for tools.
    let env3 = TestEnv::new();
    write_login(
        &env3,
        &fake.srv.base(),
        &stale,
        now() - 10,
        Some("rt-unknown"),
    );
    let ours = our_choices(&env3, &vars);
    assert_eq!(ours["firecrawl_gateway"], false, "{ours}");
    // The dead token is quarantined as Hermes does it (never replayed).
    let env5 = TestEnv::new();
    write_login(
        &env5,
        &fake.srv.base(),
        &stale,
        now() - 10,
        Some("rt-unknown"),
    );
    assert_eq!(
        hermes_py(&env5, &vars, HERMES_CHOICES)["firecrawl_gateway"],
        false
    );
    let state = |e: &TestEnv| -> Value {
        let v: Value = serde_json::from_str(
            &std::fs::read_to_string(e.hermes_home().join("auth.json")).unwrap(),
        )
        .unwrap();
        v["providers"]["nous"].clone()
    };
    let (o, h) = (state(&env3), state(&env5));
    assert!(
        o.get("access_token").is_none() && o.get("refresh_token").is_none(),
        "{o}"
    );
    assert_eq!(keys(&o), keys(&h), "ours {o}\nHermes {h}");
    for k in ["provider", "code", "message", "reason", "relogin_required"] {
        assert_eq!(o["last_auth_error"][k], h["last_auth_error"][k], "{k}");
    }
    assert_eq!(o["last_auth_error"]["code"], "invalid_grant");
    let n = fake.requests_to("/api/oauth/token").len();
    let ours = our_choices(&env3, &vars);
    assert_eq!(ours["firecrawl_gateway"], false);
    assert_eq!(
        fake.requests_to("/api/oauth/token").len(),
        n,
        "a dead token is not replayed"
    );
}

#[test]
fn browser_use_session_through_the_gateway() {
    let pages = page_server();
    let chrome = ExternalChrome::start();
    let cdp = format!("http://127.0.0.1:{}", chrome.port);
    let tok = token("u1", true);
    let seen: Arc<Mutex<Vec<Req>>> = Arc::default();
    let s2 = seen.clone();
    let t2 = tok.clone();
    let bu = TestServer::start(move |req| {
        s2.lock().unwrap().push(req.clone());
        if req.header("x-browser-use-api-key") != Some(t2.as_str()) {
            return Resp::json(401, json!({"error": {"message": "bad token"}}));
        }
        match (req.method.as_str(), req.target.as_str()) {
            ("POST", "/bu/browsers") => Resp::json(200, json!({"id": "bu-1", "cdpUrl": cdp})),
            ("PATCH", "/bu/browsers/bu-1") => Resp::json(200, json!({"id": "bu-1"})),
            _ => Resp::json(404, json!({})),
        }
    });
    let fake = Fake::start(Vec::new());
    fake.paid(&tok);
    let env = TestEnv::new();
    write_login(&env, &fake.srv.base(), &tok, now() + 3600, None);
    env.write_hermes(
        "config.yaml",
        "browser:\n  auto_local_for_private_urls: false\n  allow_private_urls: true\n",
    );
    let url = format!("{}/bu", bu.base());
    let vars = [("BROWSER_USE_GATEWAY_URL", url.as_str())];
    let p = provider_for(&env, &vars, "browser");
    assert_eq!(p["provider"], "browser-use (nous gateway)", "{p}");
    let mut rc = client(&env, &vars);
    let v = result_json(&rc.call_tool("browser_navigate", json!({"url": pages.url("/form.html")})));
    assert_eq!(v["title"], "Order form", "{v}");
    rc.close_stdin();
    rc.finish(std::time::Duration::from_secs(20));
    let ours = seen.lock().unwrap().clone();
    assert_eq!(ours[0].target, "/bu/browsers");
    assert_eq!(
        ours[0].json(),
        json!({"timeout": 5, "proxyCountryCode": "us"})
    );
    assert!(
        ours[0]
            .header("x-idempotency-key")
            .is_some_and(|k| k.starts_with("browser-use-session-create:"))
    );
    assert!(
        ours.iter()
            .any(|r| r.method == "PATCH" && r.json() == json!({"action": "stop"}))
    );

    // Hermes' provider sends the same create and stop.
    let n = seen.lock().unwrap().len();
    let theirs = hermes_py(
        &env,
        &vars,
        "import json\nimport plugins.browser.browser_use.provider as m\np = m.BrowserUseBrowserProvider()\ns = p.create_session('t1')\nprint(json.dumps({'id': s['bb_session_id'], 'closed': p.close_session(s['bb_session_id'])}))\n",
    );
    assert_eq!(theirs, json!({"id": "bu-1", "closed": true}));
    let theirs = seen.lock().unwrap()[n..].to_vec();
    for (o, h) in [(&ours[0], &theirs[0])] {
        assert_eq!((&o.method, &o.target), (&h.method, &h.target));
        assert_eq!(o.json(), h.json());
        for k in ["x-browser-use-api-key", "content-type"] {
            assert_eq!(o.header(k), h.header(k), "{k}");
        }
    }
    let stop = ours.iter().find(|r| r.method == "PATCH").unwrap();
    assert_eq!(stop.target, theirs[1].target);
    assert_eq!(stop.json(), theirs[1].json());
}

#[test]
fn a_pool_only_oauth_login_is_entitled_but_needs_a_token_like_hermes() {
    let fake = Fake::start(Vec::new());
    let paid = token("u-pool-oauth", true);
    let gw = fake.vars();
    let env = TestEnv::new();
    env.write_hermes("config.yaml", "tts: {provider: openai}\n");
    env.write_hermes(
        "auth.json",
        &json!({"version": 1, "credential_pool": {"nous": [
            {"id": "p1", "label": "device", "auth_type": "oauth", "priority": 0, "source": "manual:device_code",
             "access_token": paid, "refresh_token": "rt-pool", "portal_base_url": fake.srv.base(),
             "expires_at": iso(now() + 3600)}
        ]}})
        .to_string(),
    );
    for (extra, via) in [
        (vec![], false),
        (vec![("TOOL_GATEWAY_USER_TOKEN", paid.as_str())], true),
    ] {
        let vars = with(&gw, &extra);
        let theirs = hermes_py(&env, &vars, HERMES_CHOICES);
        let ours = our_choices(&env, &vars);
        assert_eq!(theirs["entitled"], true, "{theirs}");
        for k in [
            "firecrawl_gateway",
            "fal_gateway",
            "tts_gateway",
            "bu_gateway",
        ] {
            assert_eq!(ours[k], theirs[k], "{k}: ours {ours}, Hermes {theirs}");
            assert_eq!(ours[k], via, "{k}");
        }
    }
}

/// Asking the portal never holds up `initialize`: Codex gives a server about
/// a second. `tools/list` waits for the answer, so a gateway-only tool is
/// offered once the portal says the login is entitled.
#[test]
fn initialize_does_not_wait_for_the_portal_but_tools_list_does() {
    let (release, held) = std::sync::mpsc::channel::<()>();
    let held = Mutex::new(held);
    let asked = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let a = asked.clone();
    let portal = TestServer::start(move |req| {
        if req.target == "/api/oauth/account" {
            a.store(true, std::sync::atomic::Ordering::SeqCst);
            // Held until the test has seen `initialize` answered.
            let _ = held
                .lock()
                .unwrap()
                .recv_timeout(std::time::Duration::from_secs(20));
            return Resp::json(
                200,
                json!({"paid_service_access": {"allowed": true, "paid_access": true}}),
            );
        }
        Resp::json(404, json!({"error": "no route"}))
    });
    let env = TestEnv::new();
    write_login(&env, &portal.base(), "opaque-paid", now() + 3600, None);
    let gw = [(
        "FAL_QUEUE_GATEWAY_URL".to_string(),
        format!("{}/fal", portal.base()),
    )];
    let mut c = env.cmd();
    for (k, v) in &gw {
        c.env(k, v);
    }
    let mut rc = RawClient::spawn(c);
    let init = rc.initialize();
    assert!(
        init.get("result").is_some() || init.get("serverInfo").is_some(),
        "{init}"
    );
    // `initialize` was answered while the portal still held its answer (or
    // before it was even asked).
    release.send(()).unwrap();
    let listed = rc.request("tools/list", json!({}));
    let names: Vec<String> = listed["result"]["tools"]
        .as_array()
        .or_else(|| listed["tools"].as_array())
        .unwrap_or_else(|| panic!("{listed}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert!(asked.load(std::sync::atomic::Ordering::SeqCst));
    assert!(names.contains(&"image_generate".to_string()), "{names:?}");
}
