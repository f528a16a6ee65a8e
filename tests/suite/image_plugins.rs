//! `image_generate` with Hermes' `xai` and `openrouter` image plugins against loopback servers
//! speaking their wire formats (xAI's Images API with `storage_options`, OpenRouter's
//! chat-completions image output), including their error answers; the xAI request is checked
//! against Hermes' own plugin run by Hermes' Python on the same fake.

use std::process::Command;

use base64::Engine as _;
use serde_json::{Value, json};

use super::support::common::*;
use super::support::fake::*;
use super::support::media::*;

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn xai_fake() -> TestServer {
    TestServer::start(|req| {
        let base = req.base.as_str();
        if req.target.starts_with("/files/") {
            return Resp::bytes("image/png", png_bytes());
        }
        if req.header("authorization") != Some("Bearer xai-key") {
            // xAI answers errors with a string `error` (Hermes then quotes the body).
            return Resp::json(
                400,
                json!({"code": "Client specified an invalid argument", "error": "Incorrect API key provided: xa***ey."}),
            );
        }
        let body = req.json();
        match req.target.as_str() {
            "/v1/images/generations" | "/v1/images/edits"
                if body.get("storage_options").is_some() =>
            {
                Resp::json(
                    200,
                    json!({"data": [{"url": format!("{base}/files/tmp.png"),
                                  "file_output": {"public_url": format!("{base}/files/pub.png"), "filename": body["storage_options"]["filename"]}}],
                       "usage": {"cost_in_usd_ticks": 7}}),
                )
            }
            "/v1/images/generations" | "/v1/images/edits" => {
                Resp::json(200, json!({"data": [{"b64_json": b64(&png_bytes())}]}))
            }
            _ => Resp::json(404, json!({"error": "no route"})),
        }
    })
}

#[test]
fn xai_generates_edits_and_reports_errors_like_hermes() {
    let srv = xai_fake();
    let env = TestEnv::new();
    env.write_hermes(
        "config.yaml",
        &format!(
            "image_gen:\n  provider: xai\n  xai:\n    base_url: {}/v1\n    resolution: 2k\n    storage:\n      enabled: false\n",
            srv.base()
        ),
    );
    let row = provider_for(&env, &[("XAI_API_KEY", "xai-key")], "image_generate");
    assert_eq!(row["provider"], "xai", "{row}");

    let mut rc = client(&env, &[("XAI_API_KEY", "xai-key")]);
    let v = result_json(&rc.call_tool(
        "image_generate",
        json!({"prompt": "a comet", "aspect_ratio": "portrait"}),
    ));
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(v["provider"], "xai");
    assert_eq!(v["model"], "grok-imagine-image");
    assert_eq!(v["resolution"], "2k");
    assert_eq!(v["storage_enabled"], false);
    let p = std::path::PathBuf::from(v["image"].as_str().unwrap());
    assert!(
        p.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("xai_grok-imagine-image_")
    );
    assert_eq!(std::fs::read(&p).unwrap(), png_bytes());
    let ours = srv.reqs().pop().unwrap();
    assert_eq!(
        ours.json(),
        json!({"model": "grok-imagine-image", "prompt": "a comet", "aspect_ratio": "9:16", "resolution": "2k"})
    );
    assert_eq!(ours.header("user-agent"), Some("Hermes-Agent/0.19.0"));

    // Hermes' plugin sends the same request to the same fake.
    let py = hermes_python("requests");
    let script = r#"
import importlib.util, json, sys
import plugins.image_gen as pkg
path = list(pkg.__path__)[0] + "/xai/__init__.py"
spec = importlib.util.spec_from_file_location("hermes_xai_img", path)
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
print(json.dumps(m.XAIImageGenProvider().generate("a comet", "portrait")))
"#;
    let out = Command::new(&py)
        .args(["-c", script])
        .env("HERMES_HOME", env.hermes_home())
        .env("HOME", env.home())
        .env("XAI_API_KEY", "xai-key")
        // Hermes reads the base URL from XAI_BASE_URL only.
        .env("XAI_BASE_URL", format!("{}/v1", srv.base()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let hermes: Value = serde_json::from_slice(out.stdout.trim_ascii()).unwrap();
    assert_eq!(hermes["success"], true, "{hermes}");
    let theirs = srv.reqs().pop().unwrap();
    assert_eq!(ours.json(), theirs.json());
    assert_eq!(ours.header("user-agent"), theirs.header("user-agent"));
    assert_fields_match(
        &v,
        &hermes,
        &[
            "provider",
            "model",
            "resolution",
            "storage_enabled",
            "modality",
            "aspect_ratio",
            "prompt",
        ],
    );

    // Edit: JSON body with the quality model and the image as a data URI.
    let src = env.dir.path().join("in.png");
    std::fs::write(&src, png_bytes()).unwrap();
    let v = result_json(&rc.call_tool(
        "image_generate",
        json!({"prompt": "add a moon", "image_url": src}),
    ));
    assert_eq!(v["model"], "grok-imagine-image-quality", "{v}");
    assert_eq!(v["modality"], "image");
    let body = srv.reqs().pop().unwrap().json();
    assert_eq!(body["model"], "grok-imagine-image-quality");
    assert_eq!(body["image"]["type"], "image_url");
    assert!(
        body["image"]["url"]
            .as_str()
            .unwrap()
            .starts_with("data:image/png;base64,")
    );
    let v = result_json(&rc.call_tool(
        "image_generate",
        json!({"prompt": "x", "image_url": "/nonexistent/a.png"}),
    ));
    assert_eq!(v["error_type"], "invalid_image_url", "{v}");
    let v = result_json(&rc.call_tool(
        "image_generate",
        json!({"prompt": "x", "image_url": "https://a/1.png", "reference_image_urls": ["https://a/2.png", "https://a/3.png", "https://a/4.png"]}),
    ));
    assert_eq!(
        v["error"],
        "xAI image editing supports at most 3 source images"
    );
    drop(rc);

    // A refused key: Hermes' text with the body quoted.
    let mut rc = client(&env, &[("XAI_API_KEY", "wrong")]);
    let v = result_json(&rc.call_tool("image_generate", json!({"prompt": "x"})));
    assert_eq!(v["error_type"], "api_error", "{v}");
    assert!(
        v["error"].as_str().unwrap().starts_with(
            "xAI image generation failed (400): {\"code\":\"Client specified an invalid argument\""
        ),
        "{v}"
    );
    drop(rc);

    // Storage on (Hermes' default): storage_options sent, the public URL kept, notice once.
    env.write_hermes(
        "config.yaml",
        &format!(
            "image_gen:\n  provider: xai\n  xai:\n    base_url: {}/v1\n",
            srv.base()
        ),
    );
    let mut rc = client(
        &env,
        &[
            ("XAI_API_KEY", "xai-key"),
            ("HERMES_ALLOW_PRIVATE_URLS", "true"),
        ],
    );
    let v = result_json(&rc.call_tool("image_generate", json!({"prompt": "a comet"})));
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(v["public_url"], format!("{}/files/pub.png", srv.base()));
    assert_eq!(v["image_url"], format!("{}/files/pub.png", srv.base()));
    assert_eq!(v["usage"], json!({"cost_in_usd_ticks": 7}));
    let so = &srv
        .reqs()
        .iter()
        .rev()
        .find(|r| r.target.starts_with("/v1/"))
        .unwrap()
        .json()["storage_options"];
    assert_eq!(so["public_url"], true);
    assert!(
        so["filename"]
            .as_str()
            .unwrap()
            .starts_with("hermes-xai-image-")
    );
    assert!(
        v["storage_notice"]
            .as_str()
            .unwrap()
            .starts_with("xAI Imagine storage is enabled so generated media gets a reusable public URL without an automatic expiry."),
        "{v}"
    );
    assert!(
        env.hermes_home()
            .join("state/image_gen_xai_storage_notice_seen")
            .is_file()
    );
    // Shown once per Hermes home.
    let v2 = result_json(&rc.call_tool("image_generate", json!({"prompt": "again"})));
    assert!(v2.get("storage_notice").is_none(), "{v2}");
}

#[test]
fn openrouter_chat_images_fallback_and_errors() {
    let srv = TestServer::start(|req| {
        if req.header("authorization") != Some("Bearer or-key") {
            return Resp::json(
                401,
                json!({"error": {"message": "No auth credentials found", "code": 401}}),
            );
        }
        let body = req.json();
        match body["model"].as_str().unwrap_or("") {
            // The default model is access-gated on this account: Hermes falls back.
            "openai/gpt-5.4-image-2" => Resp::json(
                404,
                json!({"error": {"message": "No endpoints found that support image output", "code": 404}}),
            ),
            "google/gemini-3-pro-image" | "my/model" => Resp::json(
                200,
                json!({"choices": [{"message": {"role": "assistant", "content": "here",
                    "images": [{"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{}", b64(&png_bytes()))}}]}}]}),
            ),
            _ => Resp::json(
                200,
                json!({"choices": [{"message": {"content": "no image"}}]}),
            ),
        }
    });
    let env = TestEnv::new();
    env.write_hermes(
        "config.yaml",
        &format!(
            "image_gen:\n  provider: openrouter\n  openrouter:\n    base_url: {}/api/v1\n",
            srv.base()
        ),
    );
    let mut rc = client(&env, &[("OPENROUTER_API_KEY", "or-key")]);
    let src = env.dir.path().join("ref.png");
    std::fs::write(&src, png_bytes()).unwrap();
    let v = result_json(&rc.call_tool(
        "image_generate",
        json!({"prompt": "a sprite", "aspect_ratio": "square", "image_url": src}),
    ));
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(v["provider"], "openrouter");
    assert_eq!(v["model"], "google/gemini-3-pro-image");
    let p = std::path::PathBuf::from(v["image"].as_str().unwrap());
    assert!(
        p.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("openrouter_gen_")
    );
    let reqs = srv.reqs();
    assert_eq!(reqs.len(), 2);
    let body = reqs[1].json();
    assert_eq!(body["modalities"], json!(["image", "text"]));
    assert_eq!(body["image_config"], json!({"aspect_ratio": "1:1"}));
    assert_eq!(
        body["messages"][0]["content"][0],
        json!({"type": "text", "text": "a sprite"})
    );
    assert!(
        body["messages"][0]["content"][1]["image_url"]["url"]
            .as_str()
            .unwrap()
            .starts_with("data:image/png;base64,")
    );
    assert_eq!(reqs[1].header("x-title"), Some("Hermes Agent"));
    drop(rc);

    // An explicit model gets no fallback; a model without image output says so.
    let mut rc = client(
        &env,
        &[
            ("OPENROUTER_API_KEY", "or-key"),
            ("OPENROUTER_IMAGE_MODEL", "text/only"),
        ],
    );
    let v = result_json(&rc.call_tool("image_generate", json!({"prompt": "x"})));
    assert_eq!(v["error_type"], "empty_response", "{v}");
    assert_eq!(
        v["error"],
        "OpenRouter returned no image. Ensure the model 'text/only' supports image output."
    );
    drop(rc);
    let mut rc = client(
        &env,
        &[
            ("OPENROUTER_API_KEY", "or-key"),
            ("OPENROUTER_IMAGE_MODEL", "openai/gpt-5.4-image-2"),
        ],
    );
    let v = result_json(&rc.call_tool("image_generate", json!({"prompt": "x"})));
    assert_eq!(v["error_type"], "model_access", "{v}");
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .starts_with("OpenRouter can't reach image model 'openai/gpt-5.4-image-2' (404)")
    );
    drop(rc);
    let mut rc = client(&env, &[("OPENROUTER_API_KEY", "bad")]);
    let v = result_json(&rc.call_tool("image_generate", json!({"prompt": "x"})));
    assert_eq!(v["error_type"], "api_error", "{v}");
    assert_eq!(
        v["error"],
        "OpenRouter image generation failed (401): No auth credentials found"
    );
}
