//! `image_generate` with Hermes' `deepinfra` and `krea` image plugins against loopback servers
//! speaking their wire formats (DeepInfra's OpenAI-compatible images endpoint and tagged model
//! catalog; Krea's async job submit + poll), including error answers. Each request (and the
//! error texts) is compared with what Hermes' own plugin, run by Hermes' Python, does against
//! the same fake.

use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use base64::Engine as _;
use serde_json::{Value, json};

use super::support::common::*;
use super::support::fake::*;
use super::support::media::*;

/// Run Hermes' plugin `<name>` in Hermes' Python; `setup` is Python run on module `m` first.
fn hermes_plugin(
    env: &TestEnv,
    name: &str,
    class: &str,
    setup: &str,
    call: &str,
    vars: &[(&str, &str)],
) -> Value {
    let py = hermes_python("openai");
    let script = format!(
        r#"
import importlib.util, json, sys
import plugins.image_gen as pkg
path = list(pkg.__path__)[0] + "/{name}/__init__.py"
spec = importlib.util.spec_from_file_location("hermes_{name}_img", path)
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
{setup}
print(json.dumps(m.{class}().generate({call})))
"#
    );
    let mut cmd = Command::new(&py);
    cmd.args(["-c", &script])
        .env("HERMES_HOME", env.hermes_home())
        .env("HOME", env.home());
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(out.stdout.trim_ascii()).unwrap()
}

fn provider_row(env: &TestEnv, vars: &[(&str, &str)]) -> Value {
    provider_for(env, vars, "image_generate")
}

fn deepinfra_fake() -> TestServer {
    TestServer::start(|req| {
        let base = req.base.as_str();
        if req.target.starts_with("/files/") {
            return Resp::bytes("image/png", png_bytes());
        }
        let path = req.target.strip_prefix("/alt").unwrap_or(&req.target);
        if path == "/v1/openai/models?filter=true&sort_by=hermes" {
            return Resp::json(
                200,
                json!({"data": [
                    {"id": "meta-llama/Llama-3.3-70B", "metadata": {"tags": ["chat"]}},
                    {"id": "stub/image", "metadata": null},
                    {"id": "black-forest-labs/FLUX-1-schnell", "metadata": {"tags": ["image-gen"]}},
                    {"id": "other/image", "metadata": {"tags": ["image-gen"]}}
                ]}),
            );
        }
        if req.header("authorization") != Some("Bearer di-key") {
            return Resp::json(401, json!({"error": {"message": "Invalid API key"}}));
        }
        if path != "/v1/openai/images/generations" {
            return Resp::json(404, json!({"detail": "no route"}));
        }
        match req.json()["model"].as_str().unwrap_or("") {
            "url/model:v2" => Resp::json(
                200,
                json!({"created": 1, "data": [{"url": format!("{base}/files/di.png")}]}),
            ),
            "empty/model" => Resp::json(200, json!({"created": 1, "data": []})),
            _ => Resp::json(
                200,
                json!({"created": 1, "data": [{"b64_json": base64::engine::general_purpose::STANDARD.encode(png_bytes())}]}),
            ),
        }
    })
}

#[test]
fn deepinfra_catalog_model_generation_and_errors_like_hermes() {
    let srv = deepinfra_fake();
    let env = TestEnv::new();
    env.write_hermes("config.yaml", "image_gen:\n  provider: deepinfra\n");
    let base_env = format!("{}/v1/openai", srv.base());
    let vars = [
        ("DEEPINFRA_API_KEY", "di-key"),
        ("DEEPINFRA_BASE_URL", base_env.as_str()),
    ];
    assert_eq!(provider_row(&env, &vars)["provider"], "deepinfra");
    let row = provider_row(&env, &[]);
    assert_eq!(row["provider"], "none");
    assert!(
        row["why"]
            .as_str()
            .unwrap()
            .contains("DEEPINFRA_API_KEY is not set"),
        "{row}"
    );

    let mut rc = client(&env, &vars);
    let v = result_json(&rc.call_tool(
        "image_generate",
        json!({"prompt": "a lighthouse", "aspect_ratio": "landscape"}),
    ));
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(v["provider"], "deepinfra");
    assert_eq!(v["model"], "black-forest-labs/FLUX-1-schnell");
    assert_eq!(v["size"], "1536x1024");
    let p = std::path::PathBuf::from(v["image"].as_str().unwrap());
    assert!(
        p.starts_with(env.hermes_home().join("cache/images")),
        "{p:?}"
    );
    assert!(
        p.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("deepinfra_FLUX-1-schnell_")
    );
    assert_eq!(std::fs::read(&p).unwrap(), png_bytes());
    let reqs = srv.reqs();
    let cat = reqs.iter().find(|r| r.target.contains("/models?")).unwrap();
    assert_eq!(cat.header("authorization"), Some("Bearer di-key"));
    assert_eq!(cat.header("user-agent"), Some("hermes-cli/0.19.0"));
    let ours = reqs.last().unwrap().clone();
    assert_eq!(ours.target, "/v1/openai/images/generations");
    assert_eq!(
        ours.json(),
        json!({"model": "black-forest-labs/FLUX-1-schnell", "prompt": "a lighthouse", "size": "1536x1024", "n": 1})
    );

    // Hermes' plugin (through the OpenAI SDK) sends the same request.
    let hermes = hermes_plugin(
        &env,
        "deepinfra",
        "DeepInfraImageGenProvider",
        "",
        "\"a lighthouse\", \"landscape\"",
        &vars,
    );
    assert_eq!(hermes["success"], true, "{hermes}");
    let theirs = srv.reqs().pop().unwrap();
    assert_eq!(theirs.target, ours.target);
    assert_eq!(theirs.json(), ours.json());
    assert_eq!(theirs.header("authorization"), ours.header("authorization"));
    assert_fields_match(
        &v,
        &hermes,
        &[
            "provider",
            "model",
            "size",
            "modality",
            "aspect_ratio",
            "prompt",
        ],
    );

    // Text-to-image only.
    let v = result_json(&rc.call_tool(
        "image_generate",
        json!({"prompt": "x", "image_url": "https://example.com/a.png"}),
    ));
    assert_eq!(v["error_type"], "modality_unsupported", "{v}");
    drop(rc);

    // A refused key: the OpenAI SDK's text behind Hermes' prefix, the catalog model named.
    let bad = [
        ("DEEPINFRA_API_KEY", "wrong"),
        ("DEEPINFRA_BASE_URL", base_env.as_str()),
    ];
    let mut rc = client(&env, &bad);
    let v = result_json(&rc.call_tool("image_generate", json!({"prompt": "x"})));
    let hermes = hermes_plugin(
        &env,
        "deepinfra",
        "DeepInfraImageGenProvider",
        "",
        "\"x\"",
        &bad,
    );
    assert_eq!(v["error_type"], "api_error", "{v}");
    assert_eq!(
        v["error"],
        "DeepInfra image generation failed: Error code: 401 - {'error': {'message': 'Invalid API key'}}"
    );
    assert_fields_match(
        &v,
        &hermes,
        &[
            "success",
            "error",
            "error_type",
            "model",
            "provider",
            "prompt",
        ],
    );
    drop(rc);

    // No key: the tool says so before any call (Hermes' `is_available()`).
    let mut rc = client(&env, &[]);
    let v = result_json(&rc.call_tool("image_generate", json!({"prompt": "x"})));
    assert_eq!(
        v["error"],
        "image_generate is not available: image_gen.provider is deepinfra but DEEPINFRA_API_KEY is not set"
    );
    drop(rc);

    // A pinned model answering with a URL (downloaded into the cache), through the
    // config's base URL, which wins over DEEPINFRA_BASE_URL for generation.
    env.write_hermes(
        "config.yaml",
        &format!(
            "image_gen:\n  provider: deepinfra\n  deepinfra:\n    base_url: {}/alt/v1/openai/\n",
            srv.base()
        ),
    );
    let mut rc = client(
        &env,
        &[
            ("DEEPINFRA_API_KEY", "di-key"),
            ("DEEPINFRA_BASE_URL", base_env.as_str()),
            ("DEEPINFRA_IMAGE_MODEL", "url/model:v2"),
            ("HERMES_ALLOW_PRIVATE_URLS", "true"),
        ],
    );
    let v = result_json(&rc.call_tool(
        "image_generate",
        json!({"prompt": "y", "aspect_ratio": "portrait"}),
    ));
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(v["model"], "url/model:v2");
    assert_eq!(v["size"], "1024x1536");
    assert_eq!(v["image_url"], format!("{}/files/di.png", srv.base()));
    let p = std::path::PathBuf::from(v["image"].as_str().unwrap());
    assert!(
        p.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("deepinfra_model_v2_"),
        "{p:?}"
    );
    let gen_req = srv
        .reqs()
        .into_iter()
        .rev()
        .find(|r| r.target.contains("images/generations"))
        .unwrap();
    assert_eq!(gen_req.target, "/alt/v1/openai/images/generations");
    drop(rc);
    let mut rc = client(
        &env,
        &[
            ("DEEPINFRA_API_KEY", "di-key"),
            ("DEEPINFRA_BASE_URL", base_env.as_str()),
            ("DEEPINFRA_IMAGE_MODEL", "empty/model"),
        ],
    );
    let v = result_json(&rc.call_tool("image_generate", json!({"prompt": "z"})));
    assert_eq!(v["error_type"], "empty_response", "{v}");
    assert_eq!(v["error"], "DeepInfra returned no image data");
    assert_eq!(v["model"], "empty/model");
}

fn krea_fake() -> TestServer {
    let polls = Arc::new(AtomicUsize::new(0));
    TestServer::start(move |req| {
        let base = req.base.as_str();
        if req.target.starts_with("/files/") {
            return Resp::bytes("image/png", png_bytes());
        }
        if req.header("authorization") != Some("Bearer krea-key") {
            return Resp::json(401, json!({"message": "Invalid token"}));
        }
        match req.target.as_str() {
            p if p.starts_with("/generate/image/krea/krea-2/") => {
                let job = match req.json()["prompt"].as_str() {
                    Some("boom") => "job-fail",
                    Some("slow") => "job-slow",
                    Some("gone") => "job-gone",
                    _ => "job-ok",
                };
                Resp::json(200, json!({"job_id": job, "status": "queued"}))
            }
            "/jobs/job-slow" if polls.fetch_add(1, Ordering::SeqCst) == 0 => {
                Resp::json(200, json!({"job_id": "job-slow", "status": "processing"}))
            }
            "/jobs/job-ok" | "/jobs/job-slow" => Resp::json(
                200,
                json!({"job_id": "job-ok", "status": "completed", "completed_at": "2026-11-26T08:00:00Z",
                       "result": {"urls": [format!("{base}/files/krea.png")]}}),
            ),
            "/jobs/job-fail" => Resp::json(
                200,
                json!({"job_id": "job-fail", "status": "failed", "result": {"error": "NSFW content detected"}}),
            ),
            _ => Resp::json(404, json!({"detail": "Not found"})),
        }
    })
}

#[test]
fn krea_submit_poll_save_and_errors_like_hermes() {
    let srv = krea_fake();
    let env = TestEnv::new();
    env.write_hermes(
        "config.yaml",
        &format!(
            "image_gen:\n  provider: krea\n  krea:\n    base_url: {}\n    creativity: High\n",
            srv.base()
        ),
    );
    let vars = [
        ("KREA_API_KEY", "krea-key"),
        ("HERMES_ALLOW_PRIVATE_URLS", "true"),
    ];
    assert_eq!(provider_row(&env, &vars)["provider"], "krea");

    let mut rc = client(&env, &vars);
    let args = json!({"prompt": "slow", "aspect_ratio": "portrait",
                      "image_url": "https://example.com/a.png",
                      "reference_image_urls": ["https://example.com/b.png", "https://example.com/a.png"]});
    let v = result_json(&rc.call_tool("image_generate", args));
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(v["provider"], "krea");
    assert_eq!(v["model"], "krea-2-medium");
    assert_eq!(v["modality"], "image");
    assert_eq!(v["krea_aspect_ratio"], "9:16");
    assert_eq!(v["creativity"], "high");
    assert_eq!(v["resolution"], "1K");
    assert_eq!(v["job_id"], "job-slow");
    assert_eq!(v["completed_at"], "2026-11-26T08:00:00Z");
    let p = std::path::PathBuf::from(v["image"].as_str().unwrap());
    assert!(
        p.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("krea_krea-2-medium_")
    );
    assert_eq!(std::fs::read(&p).unwrap(), png_bytes());
    let reqs = srv.reqs();
    let submit = reqs[0].clone();
    assert_eq!(submit.target, "/generate/image/krea/krea-2/medium");
    assert_eq!(
        submit.json(),
        json!({"prompt": "slow", "aspect_ratio": "9:16", "resolution": "1K", "creativity": "high",
               "image_style_references": [{"url": "https://example.com/a.png", "strength": 0.6},
                                          {"url": "https://example.com/b.png", "strength": 0.6}]})
    );
    assert_eq!(
        submit.header("user-agent"),
        Some("Hermes-Agent/1.0 (krea-image-gen)")
    );
    // Polled until completed: processing first, then completed.
    let polls: Vec<_> = reqs
        .iter()
        .filter(|r| r.target == "/jobs/job-slow")
        .collect();
    assert_eq!(polls.len(), 2, "{reqs:?}");
    assert_eq!(polls[0].method, "GET");
    let ours_poll = polls[0].clone();

    // Hermes' plugin sends the same submit and poll (its base URL is a constant: patched).
    let n = srv.reqs().len();
    let hermes = hermes_plugin(
        &env,
        "krea",
        "KreaImageGenProvider",
        &format!(
            "m.BASE_URL = {:?}\nm._POLL_INITIAL_INTERVAL = 0.05",
            srv.base()
        ),
        "\"slow\", \"portrait\", image_url=\"https://example.com/a.png\", reference_image_urls=[\"https://example.com/b.png\", \"https://example.com/a.png\"]",
        &vars,
    );
    assert_eq!(hermes["success"], true, "{hermes}");
    let theirs = srv.reqs()[n..].to_vec();
    assert_eq!(theirs[0].target, submit.target);
    assert_eq!(theirs[0].json(), submit.json());
    for h in ["authorization", "user-agent", "content-type"] {
        assert_eq!(theirs[0].header(h), submit.header(h), "{h}");
    }
    assert_eq!(theirs[1].target, ours_poll.target);
    for h in ["authorization", "user-agent"] {
        assert_eq!(theirs[1].header(h), ours_poll.header(h), "{h}");
    }
    assert_fields_match(
        &v,
        &hermes,
        &[
            "provider",
            "model",
            "modality",
            "krea_aspect_ratio",
            "creativity",
            "resolution",
            "job_id",
            "completed_at",
            "prompt",
            "aspect_ratio",
        ],
    );

    // A failed job.
    let v = result_json(&rc.call_tool("image_generate", json!({"prompt": "boom"})));
    assert_eq!(v["error_type"], "api_error", "{v}");
    assert_eq!(
        v["error"],
        "Krea job job-fail failed: NSFW content detected"
    );
    // A permanent poll failure ends at once (only transient statuses are retried).
    let v = result_json(&rc.call_tool("image_generate", json!({"prompt": "gone"})));
    assert_eq!(v["error_type"], "api_error", "{v}");
    assert_eq!(v["error"], "Krea poll failed (404) for job job-gone");
    drop(rc);

    // Another model; a refused key (Krea's `message`), compared with Hermes.
    let bad = [
        ("KREA_API_KEY", "wrong"),
        ("KREA_IMAGE_MODEL", "krea-2-large"),
    ];
    let mut rc = client(&env, &bad);
    let v = result_json(&rc.call_tool("image_generate", json!({"prompt": "x"})));
    let hermes = hermes_plugin(
        &env,
        "krea",
        "KreaImageGenProvider",
        &format!("m.BASE_URL = {:?}", srv.base()),
        "\"x\"",
        &bad,
    );
    assert_eq!(
        v["error"], "Krea image generation failed (401): Invalid token",
        "{v}"
    );
    assert_fields_match(
        &v,
        &hermes,
        &[
            "success",
            "error",
            "error_type",
            "model",
            "provider",
            "prompt",
        ],
    );
    let last = srv.reqs().pop().unwrap();
    assert_eq!(last.target, "/generate/image/krea/krea-2/large");
    drop(rc);

    // No key: the tool says so before any call (Hermes' `is_available()`).
    let mut rc = client(&env, &[]);
    let v = result_json(&rc.call_tool("image_generate", json!({"prompt": "x"})));
    assert_eq!(
        v["error"],
        "image_generate is not available: image_gen.provider is krea but KREA_API_KEY is not set"
    );
}
