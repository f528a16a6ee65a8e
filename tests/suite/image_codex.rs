//! `image_generate` through the ChatGPT sign-in (`openai-codex`, hermes-agent:
//! `plugins/image_gen/openai-codex`): a loopback Codex Responses endpoint speaking Server-Sent
//! Events, checked against Hermes' own plugin (`_collect_image_b64` run by Hermes' Python on the
//! same fake), plus selection without config, stream errors, the 400 "no image tool" answer and
//! the HTTP 401 → refresh → retry path.

use std::process::Command;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use serde_json::{Value, json};

use super::support::common::*;
use super::support::fake::*;
use super::support::media::*;

fn jwt(account: &str, tag: &str) -> String {
    let b = |v: Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    format!(
        "{}.{}.sig-{tag}",
        b(json!({"alg": "RS256"})),
        b(
            json!({"exp": 4_000_000_000u64, "https://api.openai.com/auth": {"chatgpt_account_id": account}})
        )
    )
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A successful image stream as the Codex backend sends it: a partial image (not a PNG, so
/// taking it instead of the final one would fail), then the finished item, then the response.
fn image_stream(final_png: &[u8]) -> String {
    let item = json!({"id": "ig_1", "type": "image_generation_call", "status": "completed", "result": b64(final_png)});
    let events = [
        (
            "response.created",
            json!({"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}}),
        ),
        (
            "response.output_item.added",
            json!({"type": "response.output_item.added", "output_index": 0,
                   "item": {"id": "ig_1", "type": "image_generation_call", "status": "in_progress"}}),
        ),
        (
            "response.image_generation_call.partial_image",
            json!({"type": "response.image_generation_call.partial_image", "item_id": "ig_1", "output_index": 0,
                   "partial_image_index": 0, "partial_image_b64": b64(b"partial, not an image")}),
        ),
        (
            "response.output_item.done",
            json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        ),
        (
            "response.completed",
            json!({"type": "response.completed", "response": {"id": "resp_1", "status": "completed", "output": [item]}}),
        ),
    ];
    let mut s = String::from(": keep-alive\n\n");
    for (name, data) in events {
        s.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    }
    s
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Image,
    FailedEvent,
    NoImageTool,
}

struct Fake {
    srv: TestServer,
    /// Bearer tokens the endpoint accepts.
    valid: Arc<Mutex<Vec<String>>>,
    mode: Arc<Mutex<Mode>>,
}

fn fake(valid: &[&str]) -> Fake {
    let valid = Arc::new(Mutex::new(
        valid.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
    ));
    let mode = Arc::new(Mutex::new(Mode::Image));
    let (v, m) = (valid.clone(), mode.clone());
    let srv = TestServer::start(
        move |req| match (req.method.as_str(), req.target.as_str()) {
            ("POST", "/backend-api/codex/responses") => {
                let bearer = req
                    .header("authorization")
                    .and_then(|h| h.strip_prefix("Bearer "))
                    .unwrap_or("");
                if !v.lock().unwrap().iter().any(|t| t == bearer) {
                    return Resp::json(
                        401,
                        json!({"error": {"message": "Your authentication token has expired. Please try signing in again.",
                                     "type": "invalid_request_error", "code": "token_expired"}}),
                    );
                }
                match *m.lock().unwrap() {
                Mode::Image => Resp::bytes("text/event-stream", image_stream(&png_bytes()).into_bytes()),
                Mode::FailedEvent => Resp::bytes(
                    "text/event-stream",
                    format!(
                        "event: response.created\ndata: {}\n\nevent: response.failed\ndata: {}\n\n",
                        json!({"type": "response.created", "response": {"id": "r"}}),
                        json!({"type": "response.failed", "response": {"id": "r", "status": "failed",
                               "error": {"code": "server_error", "message": "The image tool is overloaded"}}})
                    )
                    .into_bytes(),
                ),
                Mode::NoImageTool => Resp::json(
                    400,
                    json!({"error": {"message": "Tool choice 'image_generation' not found in 'tools' parameter.",
                                     "type": "invalid_request_error", "param": "tool_choice"}}),
                ),
            }
            }
            ("POST", "/oauth/token") => {
                let form: Vec<(String, String)> = url::form_urlencoded::parse(&req.body)
                    .into_owned()
                    .collect();
                let get = |k: &str| form.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
                if get("grant_type") == Some("refresh_token")
                    && get("refresh_token") == Some("rt-1")
                    && get("client_id") == Some("app_EMoamEEZ73f0CkXaXp7hrann")
                {
                    let new = jwt("acct-pool", "fresh");
                    v.lock().unwrap().push(new.clone());
                    Resp::json(
                        200,
                        json!({"access_token": new, "refresh_token": "rt-2", "id_token": "x.y.z"}),
                    )
                } else {
                    Resp::json(
                        400,
                        json!({"error": "invalid_grant", "error_description": "refresh token is not valid"}),
                    )
                }
            }
            _ => Resp::json(404, json!({"detail": "not found"})),
        },
    );
    Fake { srv, valid, mode }
}

fn config(fake: &Fake, provider: bool) -> String {
    format!(
        "image_gen:\n{}  openai-codex:\n    base_url: {}/backend-api/codex\n    token_url: {}/oauth/token\n",
        if provider {
            "  provider: openai-codex\n"
        } else {
            ""
        },
        fake.srv.base(),
        fake.srv.base()
    )
}

fn hermes_pool(env: &TestEnv, access: &str) {
    env.write_hermes(
        "auth.json",
        &json!({"version": 1, "credential_pool": {"openai-codex": [
            {"id": "p1", "priority": 0, "auth_type": "oauth", "source": "device_code",
             "access_token": access, "refresh_token": "rt-1"}]}})
        .to_string(),
    );
}

fn codex_cli_login(env: &TestEnv, access: &str) {
    std::fs::write(
        env.codex_home().join("auth.json"),
        json!({"OPENAI_API_KEY": null, "tokens": {"id_token": "x.y.z", "access_token": access,
               "refresh_token": "cli-rt", "account_id": "acct-cli"}, "last_refresh": "2026-01-01T00:00:00Z"})
        .to_string(),
    )
    .unwrap();
}

fn image_choice(env: &TestEnv) -> Value {
    provider_for(env, &[], "image_generate")
}

#[test]
fn openai_codex_streams_an_image_like_hermes_plugin() {
    let token = jwt("acct-pool", "a");
    let f = fake(&[&token]);
    let env = TestEnv::new();
    env.write_hermes("config.yaml", &config(&f, true));
    hermes_pool(&env, &token);

    let choice = image_choice(&env);
    assert_eq!(choice["provider"], "openai-codex", "{choice}");
    assert_eq!(choice["why"], "image_gen.provider");

    let mut rc = client(&env, &[("HERMES_ALLOW_PRIVATE_URLS", "true")]);
    let r = rc.request("tools/list", json!({}));
    let tool = r["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "image_generate")
        .cloned()
        .expect("listed with a ChatGPT sign-in");
    let desc = tool["description"].as_str().unwrap();
    assert!(
        desc.contains("Active backend: OpenAI (Codex auth) · model: gpt-image-2-medium")
            && desc.contains("up to 16 reference image(s)"),
        "{desc}"
    );

    let src = env.dir.path().join("in.png");
    std::fs::write(&src, png_bytes()).unwrap();
    let r = rc.call_tool(
        "image_generate",
        json!({"prompt": "a lighthouse at dusk", "aspect_ratio": "portrait", "image_url": src}),
    );
    let v = result_json(&r);
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(v["provider"], "openai-codex");
    assert_eq!(v["model"], "gpt-image-2-medium");
    assert_eq!(v["prompt"], "a lighthouse at dusk");
    assert_eq!(v["modality"], "image");
    assert_eq!(v["size"], "1024x1536");
    assert_eq!(v["quality"], "medium");
    assert_eq!(v["input_image_count"], 1);
    let saved = std::path::PathBuf::from(v["image"].as_str().unwrap());
    assert!(saved.starts_with(env.hermes_home().join("cache/images")));
    assert!(
        saved
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("openai_codex_gpt-image-2-medium_"),
        "{}",
        saved.display()
    );
    assert_eq!(std::fs::read(&saved).unwrap(), png_bytes());
    assert!(
        r["content"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["type"] == "image" && c["mimeType"] == "image/png")
    );
    drop(rc);

    // Hermes' own plugin against the same fake: same request, same image.
    let ours = f.srv.reqs().pop().unwrap();
    let py = hermes_python("httpx");
    let script = r#"
import importlib.util, json, sys
import plugins.image_gen as pkg
path = list(pkg.__path__)[0] + "/openai-codex/__init__.py"
spec = importlib.util.spec_from_file_location("hermes_codex_img", path)
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
m._CODEX_BASE_URL = sys.argv[1]
parts = m._normalize_input_images(sys.argv[3], None)
print(m._collect_image_b64(sys.argv[2], prompt="a lighthouse at dusk", size="1024x1536", quality="medium", input_images=parts))
"#;
    let out = Command::new(py)
        .args(["-c", script])
        .arg(format!("{}/backend-api/codex", f.srv.base()))
        .arg(&token)
        .arg(&src)
        .env("HERMES_HOME", env.hermes_home())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        b64(&png_bytes()),
        "Hermes' plugin reads the same image from the fake's stream"
    );
    let theirs = f.srv.reqs().pop().unwrap();
    assert_eq!(
        ours.json(),
        theirs.json(),
        "request body as Hermes sends it"
    );
    for h in [
        "authorization",
        "chatgpt-account-id",
        "originator",
        "user-agent",
        "accept",
        "content-type",
    ] {
        assert_eq!(ours.header(h), theirs.header(h), "header {h}");
    }
    assert_eq!(ours.header("chatgpt-account-id"), Some("acct-pool"));
    assert_eq!(ours.header("accept"), Some("text/event-stream"));
}

#[test]
fn openai_codex_is_chosen_without_config_when_codex_is_signed_in() {
    let token = jwt("acct-cli", "cli");
    let f = fake(&[&token]);
    let env = TestEnv::new();
    // No image_gen.provider, no FAL_KEY: only the endpoint override for the test.
    env.write_hermes("config.yaml", &config(&f, false));
    let choice = image_choice(&env);
    assert_eq!(choice["provider"], "none", "{choice}");
    assert!(
        choice["why"].as_str().unwrap().contains("FAL_KEY"),
        "{choice}"
    );

    codex_cli_login(&env, &token);
    let choice = image_choice(&env);
    assert_eq!(choice["provider"], "openai-codex", "{choice}");
    assert!(
        choice["why"].as_str().unwrap().contains(
            "no image_gen.provider and no FAL_KEY; ChatGPT sign-in found in Codex's sign-in"
        ),
        "{choice}"
    );

    let mut rc = client(&env, &[("OPENAI_IMAGE_MODEL", "gpt-image-2-low")]);
    let v = result_json(&rc.call_tool("image_generate", json!({"prompt": "a fox"})));
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(v["provider"], "openai-codex");
    assert_eq!(v["model"], "gpt-image-2-low");
    assert_eq!(v["modality"], "text");
    let req = f.srv.reqs().pop().unwrap();
    assert_eq!(req.header("chatgpt-account-id"), Some("acct-cli"));
    let body = req.json();
    assert_eq!(body["tools"][0]["quality"], "low");
    assert_eq!(body["tools"][0]["size"], "1536x1024");
    assert_eq!(
        body["input"][0]["content"],
        json!([{"type": "input_text", "text": "a fox"}])
    );

    // FAL_KEY present: Hermes' default wins.
    let choice = provider_for(&env, &[("FAL_KEY", "k")], "image_generate");
    assert_eq!(choice["provider"], "fal", "{choice}");
}

#[test]
fn openai_codex_errors_come_back_in_hermes_shape() {
    let token = jwt("acct-pool", "a");
    let f = fake(&[&token]);
    let env = TestEnv::new();
    env.write_hermes("config.yaml", &config(&f, true));

    // No sign-in anywhere: the tool says what to do instead of running.
    let mut rc = client(&env, &[]);
    let r = rc.call_tool("image_generate", json!({"prompt": "x"}));
    assert!(is_error(&r), "{r}");
    let text = r["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("image_gen.provider is openai-codex but there is no ChatGPT sign-in: run `hermes auth codex` or `codex login`"),
        "{text}"
    );
    drop(rc);
    assert_eq!(image_choice(&env)["provider"], "none");

    hermes_pool(&env, &token);
    let mut rc = client(&env, &[]);
    *f.mode.lock().unwrap() = Mode::FailedEvent;
    let v = result_json(&rc.call_tool("image_generate", json!({"prompt": "x"})));
    assert_eq!(v["error_type"], "empty_response", "{v}");
    assert_eq!(
        v["error"],
        "Codex response contained no image_generation_call result (the stream reported: server_error: The image tool is overloaded)"
    );

    *f.mode.lock().unwrap() = Mode::NoImageTool;
    let v = result_json(&rc.call_tool("image_generate", json!({"prompt": "x"})));
    assert_eq!(v["error_type"], "capability_unsupported", "{v}");
    assert_eq!(
        v["error"],
        "Image generation is not enabled for the current Codex account. Switch the image provider to OpenAI API key, FAL, or xAI."
    );

    // A non-image local file is never uploaded.
    *f.mode.lock().unwrap() = Mode::Image;
    let secret = env.dir.path().join("id_rsa");
    std::fs::write(&secret, "-----BEGIN OPENSSH PRIVATE KEY-----").unwrap();
    let before = f.srv.reqs().len();
    let v = result_json(&rc.call_tool(
        "image_generate",
        json!({"prompt": "x", "image_url": secret}),
    ));
    assert_eq!(v["error_type"], "invalid_image_input", "{v}");
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .starts_with("Invalid image input for Codex image editing:")
    );
    assert_eq!(f.srv.reqs().len(), before);
}

#[test]
fn openai_codex_refreshes_a_rejected_hermes_token_once() {
    let stale = jwt("acct-pool", "stale");
    let f = fake(&[]); // the stale token is refused; only a refreshed one is accepted
    let env = TestEnv::new();
    env.write_hermes("config.yaml", &config(&f, true));
    hermes_pool(&env, &stale);
    let mut rc = client(&env, &[]);
    let v = result_json(&rc.call_tool("image_generate", json!({"prompt": "x"})));
    assert_eq!(v["success"], true, "{v}");
    let paths: Vec<String> = f.srv.reqs().iter().map(|r| r.target.clone()).collect();
    assert_eq!(
        paths,
        [
            "/backend-api/codex/responses",
            "/oauth/token",
            "/backend-api/codex/responses"
        ]
    );
    let fresh = f.valid.lock().unwrap()[0].clone();
    let last = f.srv.reqs().pop().unwrap();
    assert_eq!(
        last.header("authorization"),
        Some(format!("Bearer {fresh}").as_str())
    );
    // The rotated pair is stored where Hermes keeps it.
    let store: Value = serde_json::from_str(
        &std::fs::read_to_string(env.hermes_home().join("auth.json")).unwrap(),
    )
    .unwrap();
    let e = &store["credential_pool"]["openai-codex"][0];
    assert_eq!(e["access_token"], fresh);
    assert_eq!(e["refresh_token"], "rt-2");
    assert_eq!(e["source"], "device_code", "other fields kept");
    drop(rc);

    // Codex's own sign-in is never refreshed by us: a 401 says to sign in again.
    let f = fake(&[]);
    let env = TestEnv::new();
    env.write_hermes("config.yaml", &config(&f, true));
    codex_cli_login(&env, &jwt("acct-cli", "old"));
    let before = std::fs::read(env.codex_home().join("auth.json")).unwrap();
    let mut rc = client(&env, &[]);
    let v = result_json(&rc.call_tool("image_generate", json!({"prompt": "x"})));
    assert_eq!(v["error_type"], "api_error", "{v}");
    assert!(
        v["error"].as_str().unwrap().contains("HTTP 401")
            && v["error"].as_str().unwrap().contains("codex login"),
        "{v}"
    );
    assert!(f.srv.reqs().iter().all(|r| r.target != "/oauth/token"));
    assert_eq!(
        std::fs::read(env.codex_home().join("auth.json")).unwrap(),
        before
    );
}
