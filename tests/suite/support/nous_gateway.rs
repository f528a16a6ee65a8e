//! Helpers for the Nous tool gateway tests (`nous_gateway.rs`): Nous
//! tokens and logins, the loopback fake that plays the Nous Portal and every
//! vendor's gateway, and Hermes' own choices run in its Python.

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use serde_json::{Value, json};

use super::common::*;
use super::fake::*;
use super::media::*;

pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// An unsigned JWT with these claims (Hermes only decodes them locally).
pub fn jwt(claims: Value) -> String {
    let b = |v: &Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    format!(
        "{}.{}.sig",
        b(&json!({"alg": "none", "typ": "JWT"})),
        b(&claims)
    )
}

/// A Nous access token for `sub`, valid for an hour, with `paid_access`.
pub fn token(sub: &str, paid: bool) -> String {
    jwt(json!({"sub": sub, "exp": now() + 3600, "paid_access": paid}))
}

pub fn iso(t: u64) -> String {
    // `date -u -d @t +%FT%T+00:00`.
    hermes_mcp::time::utc_isoformat(t as f64)
}

/// `auth.json` with a Nous login (`providers.nous`), as `hermes auth` writes it.
pub fn write_login(
    env: &TestEnv,
    portal: &str,
    access: &str,
    expires_at: u64,
    refresh: Option<&str>,
) {
    let mut state = json!({
        "access_token": access,
        "token_type": "Bearer",
        "scope": "inference:mint_agent_key",
        "client_id": "hermes-cli",
        "portal_base_url": portal,
        "inference_base_url": format!("{portal}/v1"),
        "expires_at": iso(expires_at),
    });
    if let Some(r) = refresh {
        state["refresh_token"] = json!(r);
    }
    env.write_hermes(
        "auth.json",
        &serde_json::to_string_pretty(
            &json!({"version": 1, "active_provider": "nous", "providers": {"nous": state}}),
        )
        .unwrap(),
    );
}

/// Tokens the fake accepts, and what the portal says about each.
#[derive(Default)]
pub struct Accounts {
    /// token → `/api/oauth/account` answer.
    pub accounts: Vec<(String, Value)>,
    /// refresh token → (new access token, new refresh token).
    pub refresh: Vec<(String, String, String)>,
}

/// The portal and every vendor gateway on one loopback server.
pub struct Fake {
    pub srv: TestServer,
    pub accounts: Arc<Mutex<Accounts>>,
}

impl Fake {
    pub fn start(mp3: Vec<u8>) -> Self {
        let accounts: Arc<Mutex<Accounts>> = Arc::default();
        let a = accounts.clone();
        let polls = Arc::new(AtomicUsize::new(0));
        let srv = TestServer::start(move |req| {
            let base = req.base.as_str();
            let acc = a.lock().unwrap();
            let path = req.target.as_str();
            if path.starts_with("/files/") {
                return Resp::bytes("image/png", png_bytes());
            }
            if path == "/api/oauth/token" {
                let rt = req.header("x-nous-refresh-token").unwrap_or("");
                return match acc.refresh.iter().find(|(r, _, _)| r == rt) {
                    Some((_, access, next)) => Resp::json(
                        200,
                        json!({"access_token": access, "refresh_token": next, "token_type": "Bearer",
                               "expires_in": 3600, "scope": "inference:mint_agent_key"}),
                    ),
                    None => Resp::json(
                        400,
                        json!({"error": "invalid_grant", "error_description": "Refresh token is invalid or expired"}),
                    ),
                };
            }
            let bearer = req
                .header("authorization")
                .and_then(|h| h.strip_prefix("Bearer ").or_else(|| h.strip_prefix("Key ")))
                .unwrap_or("");
            let Some((_, account)) = acc.accounts.iter().find(|(t, _)| t == bearer) else {
                return Resp::json(401, json!({"error": {"message": "invalid Nous token"}}));
            };
            if path == "/api/oauth/account" {
                return Resp::json(200, account.clone());
            }
            let (vendor, rest) = path
                .trim_start_matches('/')
                .split_once('/')
                .unwrap_or((path, ""));
            let rest = format!("/{rest}");
            let entitled = account["paid_service_access"]["allowed"] == true;
            if !entitled {
                return Resp::json(
                    402,
                    json!({"error": {"message": "No active Nous subscription"}}),
                );
            }
            match (vendor, req.method.as_str(), rest.as_str()) {
                ("firecrawl", "POST", "/v2/search") => {
                    if req.json()["query"] == "deny" {
                        return Resp::json(
                            402,
                            json!({"success": false, "error": "Insufficient credits"}),
                        );
                    }
                    Resp::json(
                        200,
                        json!({"success": true, "data": {"web": [
                            {"title": "Rust", "url": "https://www.rust-lang.org/", "description": "A language", "position": 1}
                        ]}}),
                    )
                }
                ("firecrawl", "POST", "/v2/scrape") => Resp::json(
                    200,
                    json!({"success": true, "data": {"markdown": "# Example\n\nHello from the gateway.",
                           "metadata": {"title": "Example", "sourceURL": req.json()["url"]}}}),
                ),
                ("fal", "POST", p) if p.starts_with("/fal-ai/") => {
                    if p.contains("z-image") {
                        return Resp::json(403, json!({"detail": "model not enabled"}));
                    }
                    Resp::json(
                        200,
                        json!({"request_id": "r1",
                               "status_url": format!("{base}/fal{p}/requests/r1/status"),
                               "response_url": format!("{base}/fal{p}/requests/r1"),
                               "cancel_url": format!("{base}/fal{p}/requests/r1/cancel")}),
                    )
                }
                ("fal", "GET", p) if p.ends_with("/status") => {
                    Resp::json(200, json!({"status": "COMPLETED"}))
                }
                ("fal", "GET", p) if p.ends_with("/requests/r1") => Resp::json(
                    200,
                    json!({"images": [{"url": format!("{base}/files/fal.png"), "width": 2, "height": 1}]}),
                ),
                ("krea", "POST", p) if p.starts_with("/generate/image/krea/krea-2/") => {
                    if req.json()["prompt"] == "refuse" {
                        return Resp::json(400, json!({"message": "model not priced"}));
                    }
                    Resp::json(200, json!({"job_id": "k1", "status": "queued"}))
                }
                ("krea", "GET", "/jobs/k1") => {
                    polls.fetch_add(1, Ordering::SeqCst);
                    Resp::json(
                        200,
                        json!({"job_id": "k1", "status": "completed",
                               "result": {"urls": [format!("{base}/files/krea.png")]}}),
                    )
                }
                ("audio", "POST", "/v1/audio/speech") => {
                    if req.json()["model"] != "gpt-4o-mini-tts" {
                        return Resp::json(
                            400,
                            json!({"error": {"message": "Unsupported managed OpenAI speech model"}}),
                        );
                    }
                    Resp::bytes("audio/mpeg", mp3.clone())
                }
                _ => Resp::json(404, json!({"error": "no route"})),
            }
        });
        Fake { srv, accounts }
    }

    pub fn account(&self, token: &str, answer: Value) {
        self.accounts
            .lock()
            .unwrap()
            .accounts
            .push((token.into(), answer));
    }

    pub fn paid(&self, token: &str) {
        self.account(
            token,
            json!({"user": {"email": "a@example.com"}, "organisation": {"id": "o1", "slug": "acme"},
                   "paid_service_access": {"allowed": true, "paid_access": true}}),
        );
    }

    /// The gateway variables pointing every vendor at this fake.
    pub fn vars(&self) -> Vec<(String, String)> {
        [
            ("FIRECRAWL_GATEWAY_URL", "firecrawl"),
            ("FAL_QUEUE_GATEWAY_URL", "fal"),
            ("KREA_GATEWAY_URL", "krea"),
            ("OPENAI_AUDIO_GATEWAY_URL", "audio"),
            ("BROWSER_USE_GATEWAY_URL", "bu"),
        ]
        .into_iter()
        .map(|(k, p)| (k.to_string(), format!("{}/{p}", self.srv.base())))
        .collect()
    }

    pub fn requests_to(&self, prefix: &str) -> Vec<Req> {
        self.srv
            .reqs()
            .into_iter()
            .filter(|r| r.target.starts_with(prefix))
            .collect()
    }
}

pub fn with<'a>(
    base: &'a [(String, String)],
    extra: &[(&'a str, &'a str)],
) -> Vec<(&'a str, &'a str)> {
    base.iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .chain(extra.iter().copied())
        .collect()
}

/// Run Python `script` with Hermes' venv in `env` plus `vars`; its last
/// stdout line is JSON.
pub fn hermes_py(env: &TestEnv, vars: &[(&str, &str)], script: &str) -> Value {
    let mut c = Command::new(hermes_python("tools.managed_tool_gateway"));
    env.apply(&mut c);
    for (k, v) in vars {
        c.env(k, v);
    }
    let o = c.args(["-c", script]).output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    serde_json::from_str(stdout.lines().last().unwrap_or("")).unwrap_or_else(|e| {
        panic!(
            "Hermes printed no JSON ({e}): {stdout}\n{}",
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// Hermes' choices: entitlement, web backend, and whether each tool would
/// go through the gateway.
pub const HERMES_CHOICES: &str = r#"
import json
from tools.tool_backend_helpers import managed_nous_tools_enabled
import tools.web_tools as wt
from plugins.web.firecrawl.provider import _get_direct_firecrawl_config
from tools import image_generation_tool as it
from tools import tts_tool
from plugins.browser.browser_use.provider import BrowserUseBrowserProvider
out = {"entitled": managed_nous_tools_enabled(), "web": wt._get_search_backend()}
direct = _get_direct_firecrawl_config() is not None and not wt.prefers_gateway("web")
out["firecrawl_gateway"] = (not direct) and wt.resolve_managed_tool_gateway("firecrawl") is not None
out["fal_gateway"] = it._resolve_managed_fal_gateway() is not None
try:
    out["tts_gateway"] = tts_tool._resolve_openai_audio_client_config()[2]
except Exception:
    out["tts_gateway"] = False
c = BrowserUseBrowserProvider()._get_config_or_none(refresh_token=False)
out["bu_gateway"] = bool(c and c["managed_mode"])
print(json.dumps(out))
"#;

/// Our choices, from `hermes-mcp tools --json`, in Hermes' terms.
pub fn our_choices(env: &TestEnv, vars: &[(&str, &str)]) -> Value {
    let out = env.cmd_with(vars, &["tools", "--json"]);
    let doc: Value = serde_json::from_slice(&out).unwrap();
    let p = |job: &str| {
        doc["providers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["job"] == job)
            .map(|p| p["provider"].as_str().unwrap_or("").to_string())
            .unwrap_or_default()
    };
    let gw = |s: &str| s.ends_with("(nous gateway)");
    let web = p("web_search");
    json!({
        "web": web.trim_end_matches(" (nous gateway)"),
        "firecrawl_gateway": gw(&web),
        "fal_gateway": gw(&p("image_generate")),
        "tts_gateway": gw(&p("text_to_speech")),
        "bu_gateway": gw(&p("browser")),
    })
}

pub trait CmdWith {
    fn cmd_with(&self, vars: &[(&str, &str)], args: &[&str]) -> Vec<u8>;
}

impl CmdWith for TestEnv {
    fn cmd_with(&self, vars: &[(&str, &str)], args: &[&str]) -> Vec<u8> {
        let mut c = self.cmd();
        for (k, v) in vars {
            c.env(k, v);
        }
        let o = c.args(args).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        o.stdout
    }
}
