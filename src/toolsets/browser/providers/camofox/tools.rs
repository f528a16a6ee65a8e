//! The ten browser tools over Camofox's REST API, with Hermes' endpoints,
//! request bodies, result fields and error texts (hermes-agent:
//! tools/browser_camofox.py `camofox_*`, tools/browser_tool.py
//! `_camofox_eval` and the Camofox branch of `browser_scroll`).
//!
//! On top of Hermes, for the same reasons as the CDP tools: page text that
//! reaches the model (snapshots, image alt texts, evaluation results) is
//! redacted, and a navigation or history step that lands on a URL the
//! browser policy refuses (cloud metadata, `security.website_blocklist`) is
//! reported as blocked and the tab is sent to `about:blank`.

use serde_json::{Value, json};

use super::client::CfError;
use super::state::{self, CamofoxConfig};
use super::{CamofoxSession, Shared};
use crate::hermes::Context;
use crate::llm::task::vision::{Analysis, VisionClient};
use crate::toolsets::browser::args::{ConsoleArgs, Tool};
use crate::toolsets::browser::chromium::urlcheck;
use crate::toolsets::browser::reply::{Fail, R, Reply, ok};
use crate::toolsets::browser::snapshot::{self, summary, textsafety};

const NO_SESSION: &str = "No browser session. Call browser_navigate first.";

/// Hermes repeats a Camofox scroll this many times (no pixel argument).
const SCROLL_REPEATS: usize = 5;
/// Hermes' `SNAPSHOT_SUMMARIZE_THRESHOLD`.
const SNAPSHOT_MAX_CHARS: usize = 15_000;
/// Characters of the snapshot `browser_vision annotate` adds to the prompt.
const ANNOTATION_CHARS: usize = 3_000;

/// What every tool reads.
pub(crate) struct Env<'a> {
    pub(crate) ctx: &'a Context,
    pub(crate) cfg: &'a CamofoxConfig,
    pub(crate) shared: &'a Shared,
}

/// `camofox_console` without an expression.
pub(crate) fn console_note() -> Value {
    json!({
        "success": true,
        "console_messages": [],
        "js_errors": [],
        "total_messages": 0,
        "total_errors": 0,
        "note": "Console log capture is not available with the Camofox backend. Use browser_snapshot or browser_vision to inspect page state.",
    })
}

pub(crate) async fn run(
    env: &Env<'_>,
    s: &mut CamofoxSession,
    tool: Tool,
    url: Option<String>,
) -> Result<Reply, Fail> {
    let json = Reply::Json;
    if let Tool::Navigate(_) = tool {
        return navigate(env, s, url.as_deref().unwrap_or_default())
            .await
            .map(json);
    }
    if let Tool::Console(ConsoleArgs {
        expression: Some(e),
        ..
    }) = &tool
    {
        return evaluate(s, e).await.map(json);
    }
    let Some(tab) = s.tab_id.clone() else {
        return Err(Fail::msg(NO_SESSION));
    };
    let t = Tab { s: &*s, tab: &tab };
    match tool {
        Tool::Snapshot(a) => t.snapshot(env, &a.task).await.map(json),
        Tool::Click(a) => t.click(&a.element).await.map(json),
        Tool::Type(a) => t.type_text(&a.element, &a.text).await.map(json),
        Tool::Scroll(d) => t.scroll(d.as_str()).await.map(json),
        Tool::Back => t.back(env).await.map(json),
        Tool::Press(a) => t.press(&a.key).await.map(json),
        Tool::GetImages => t.images().await.map(json),
        Tool::Vision(a) => t.vision(env, &a.question, a.annotate).await,
        Tool::Navigate(_) | Tool::Console(_) => unreachable!("handled above"),
    }
}

/// `tool_error(str(e))`.
fn fail(e: CfError) -> Fail {
    Fail::msg(e)
}

/// `data.get(key, default)` for a string field.
fn field(data: &Value, key: &str, default: &str) -> Value {
    match data.get(key) {
        Some(v) => v.clone(),
        None => json!(default),
    }
}

/// Cut a long snapshot as Hermes' `_truncate_snapshot` does (the full text
/// stored under the cache, pointed to in the cut).
fn truncate(env: &Env<'_>, text: String) -> String {
    if text.chars().count() <= SNAPSHOT_MAX_CHARS {
        return text;
    }
    let stored = summary::store_full_snapshot(env.ctx, &text);
    snapshot::truncate(&text, SNAPSHOT_MAX_CHARS, stored.as_deref())
}

/// The URL the policy refuses after a page moved, if it does.
async fn refused_landing(env: &Env<'_>, url: &Value) -> Option<String> {
    let url = url.as_str()?;
    if url.is_empty() {
        return None;
    }
    let policy = urlcheck::BrowserPolicy::from_context(env.ctx, false);
    match urlcheck::check(url, &policy).await {
        Err(r) if !r.message.contains("not a valid URL") => Some(format!(
            "{} ({url})",
            r.message
                .replacen("Blocked: URL targets", "Blocked: the page landed on", 1)
        )),
        _ => None,
    }
}

/// `camofox_navigate`.
async fn navigate(env: &Env<'_>, s: &mut CamofoxSession, url: &str) -> R {
    let (browser_url, rewrite) = state::rewrite_loopback(env.cfg, url);
    let base = s.client.base().to_string();
    let failed = |e: CfError| match e {
        CfError::Status { .. } => Fail::msg(format!("Navigation failed: {e}")),
        e if e.is_connect() => Fail::msg(format!(
            "Cannot connect to Camofox at {}. Is the server running? Start with: npm start (in camofox-browser dir) or: docker run -p 9377:9377 -e CAMOFOX_PORT=9377 jo-inc/camofox-browser",
            base
        )),
        e => fail(e),
    };
    let data = match s.tab_id.clone() {
        None => {
            let r = s.create_tab(&browser_url).await;
            r.map_err(failed)?;
            json!({"ok": true, "url": browser_url})
        }
        Some(tab) => {
            let body = json!({"userId": s.id.user_id, "url": browser_url});
            match s
                .client
                .post(
                    &format!("/tabs/{tab}/navigate"),
                    &body,
                    Some(crate::hermes::deadlines::CAMOFOX_NAVIGATE.get()),
                )
                .await
            {
                Ok(d) => d,
                Err(e) if e.status() == Some(404) => {
                    tracing::warn!(
                        "Camofox tab {tab} returned 404 — tab was garbage collected. Creating a fresh tab."
                    );
                    s.tab_id = None;
                    let r = s.create_tab(&browser_url).await;
                    r.map_err(failed)?;
                    json!({"ok": true, "url": browser_url})
                }
                Err(e) => return Err(failed(e)),
            }
        }
    };
    let Some(tab) = s.tab_id.clone() else {
        return Err(Fail::msg(
            "Navigation failed: Camofox created no tab (its answer has no tabId)",
        ));
    };
    let landed = field(&data, "url", &browser_url);
    if landed.as_str() != Some(browser_url.as_str())
        && let Some(msg) = refused_landing(env, &landed).await
    {
        let body = json!({"userId": s.id.user_id, "url": "about:blank"});
        let _ = s
            .client
            .post(&format!("/tabs/{tab}/navigate"), &body, None)
            .await;
        return Err(Fail::msg(msg));
    }
    let mut result = ok(json!({"url": landed, "title": field(&data, "title", "")}));
    if let Some(info) = rewrite {
        result["requested_url"] = json!(url);
        result["warning"] = json!(format!(
            "Rewrote loopback URL for Docker-hosted Camofox: {} -> {}",
            info["from"].as_str().unwrap_or_default(),
            info["to"].as_str().unwrap_or_default()
        ));
        result["url_rewrite"] = info;
    }
    let client = s.client.clone();
    let vnc = env
        .shared
        .vnc
        .get_or_init(|| async move { client.vnc_url().await })
        .await;
    if let Some(v) = vnc {
        result["vnc_url"] = json!(v);
        result["vnc_hint"] = json!(
            "Browser is visible via VNC. Share this link with the user so they can watch the browser live."
        );
    }
    // The compact snapshot that lets the model act at once (a bonus: a
    // failure leaves the navigation's result as it is).
    match snapshot_raw(s, &tab).await {
        Ok((text, n)) => {
            result["snapshot"] = json!(truncate(env, text));
            result["element_count"] = n;
        }
        Err(e) => tracing::debug!("Camofox snapshot after navigate failed: {e}"),
    }
    Ok(result)
}

/// `GET /tabs/{tab}/snapshot`: the redacted text and `refsCount`.
async fn snapshot_raw(s: &CamofoxSession, tab: &str) -> Result<(String, Value), CfError> {
    let data = s
        .client
        .get(
            &format!("/tabs/{tab}/snapshot"),
            &[("userId", s.id.user_id.as_str())],
            None,
        )
        .await?;
    let text = data
        .get("snapshot")
        .and_then(Value::as_str)
        .unwrap_or_default();
    Ok((
        textsafety::redact(text),
        data.get("refsCount").cloned().unwrap_or(json!(0)),
    ))
}

/// `_camofox_eval`: `POST /tabs/{tab}/evaluate`, opening a blank tab first
/// when there is none (Hermes' `_ensure_tab`).
async fn evaluate(s: &mut CamofoxSession, expression: &str) -> R {
    let r: Result<Value, CfError> = async {
        if s.tab_id.is_none() {
            s.create_tab("about:blank").await?;
        }
        let tab = s.tab_id.clone().unwrap_or_else(|| "None".into());
        let body = json!({"expression": expression, "userId": s.id.user_id});
        s.client
            .post(&format!("/tabs/{tab}/evaluate"), &body, None)
            .await
    }
    .await;
    match r {
        Ok(resp) => {
            let raw = match &resp {
                Value::Object(o) => o.get("result").cloned().unwrap_or(Value::Null),
                other => other.clone(),
            };
            let parsed = match &raw {
                Value::String(t) => serde_json::from_str::<Value>(t).unwrap_or(raw.clone()),
                _ => raw,
            };
            let rt = crate::pycompat::py_type(&parsed);
            Ok(ok(
                json!({"result": textsafety::redact_json(parsed), "result_type": rt}),
            ))
        }
        Err(e) => {
            let msg = e.to_string();
            // Graceful degradation: the server may not have the endpoint.
            if ["404", "405", "501"].iter().any(|c| msg.contains(c)) {
                Err(Fail::msg(
                    "JavaScript evaluation is not supported by this Camofox server. Use browser_snapshot or browser_vision to inspect page state.",
                ))
            } else {
                Err(Fail::msg(msg))
            }
        }
    }
}

/// Hermes' image extraction from the snapshot: `img "alt"` lines, the
/// source on a following `/url:` line.
pub(crate) fn images_from_snapshot(snapshot: &str) -> Vec<Value> {
    let alt_re = regex::Regex::new(r#"img\s+"([^"]*)""#).expect("static regex");
    let url_re = regex::Regex::new(r"/url:\s*(\S+)").expect("static regex");
    let lines: Vec<&str> = snapshot.split('\n').collect();
    let mut images = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let stripped = line.trim();
        if !(stripped.starts_with("- img ") || stripped.starts_with("img ")) {
            continue;
        }
        let alt = alt_re
            .captures(stripped)
            .map(|c| c[1].to_string())
            .unwrap_or_default();
        let src = lines
            .get(i + 1)
            .and_then(|next| url_re.captures(next.trim()))
            .map(|c| c[1].to_string())
            .unwrap_or_default();
        if !alt.is_empty() || !src.is_empty() {
            images.push(json!({"src": src, "alt": alt}));
        }
    }
    images
}

/// A session with a tab: the tools that act on the open page.
struct Tab<'a> {
    s: &'a CamofoxSession,
    tab: &'a str,
}

impl Tab<'_> {
    fn path(&self, action: &str) -> String {
        format!("/tabs/{}/{action}", self.tab)
    }

    async fn post(&self, action: &str, mut body: Value) -> Result<Value, CfError> {
        body["userId"] = json!(self.s.id.user_id);
        self.s.client.post(&self.path(action), &body, None).await
    }

    /// `camofox_snapshot`: a long snapshot is summarised for the task when
    /// one is given (and an auxiliary model is configured), else cut.
    async fn snapshot(&self, env: &Env<'_>, task: &str) -> R {
        let (text, n) = snapshot_raw(self.s, self.tab).await.map_err(fail)?;
        let text = if text.chars().count() > SNAPSHOT_MAX_CHARS && !task.trim().is_empty() {
            match summary::summarize_snapshot(env.ctx, &text, task).await {
                Some(summary) => summary,
                None => truncate(env, text),
            }
        } else {
            truncate(env, text)
        };
        Ok(ok(json!({"snapshot": text, "element_count": n})))
    }

    async fn click(&self, element: &str) -> R {
        let clean = element.trim_start_matches('@');
        let data = self
            .post("click", json!({"ref": clean}))
            .await
            .map_err(fail)?;
        Ok(ok(
            json!({"clicked": clean, "url": field(&data, "url", "")}),
        ))
    }

    /// `camofox_type`: the typed text is echoed redacted, and redacted in
    /// an error that repeats it.
    async fn type_text(&self, element: &str, text: &str) -> R {
        let clean = element.trim_start_matches('@');
        let shown = textsafety::redact(text);
        match self.post("type", json!({"ref": clean, "text": text})).await {
            Ok(_) => Ok(ok(json!({"typed": shown, "element": clean}))),
            Err(e) => {
                let msg = e.to_string();
                let msg = if text.is_empty() || shown == text {
                    msg
                } else {
                    msg.replace(text, &shown)
                };
                Err(Fail::msg(msg))
            }
        }
    }

    /// Hermes' Camofox scroll: five calls, the last one's answer.
    async fn scroll(&self, direction: &str) -> R {
        let mut last = Ok(Value::Null);
        for _ in 0..SCROLL_REPEATS {
            last = self.post("scroll", json!({"direction": direction})).await;
        }
        last.map_err(fail)?;
        Ok(ok(json!({"scrolled": direction})))
    }

    async fn back(&self, env: &Env<'_>) -> R {
        let data = self.post("back", json!({})).await.map_err(fail)?;
        let url = field(&data, "url", "");
        if let Some(msg) = refused_landing(env, &url).await {
            let _ = self.post("navigate", json!({"url": "about:blank"})).await;
            return Err(Fail::msg(format!(
                "{msg}. Browser history navigation (back) was refused."
            )));
        }
        Ok(ok(json!({"url": url})))
    }

    async fn press(&self, key: &str) -> R {
        self.post("press", json!({"key": key}))
            .await
            .map_err(fail)?;
        Ok(ok(json!({"pressed": key})))
    }

    async fn images(&self) -> R {
        let (text, _) = snapshot_raw(self.s, self.tab).await.map_err(fail)?;
        let images = images_from_snapshot(&text);
        Ok(ok(json!({"count": images.len(), "images": images})))
    }

    /// `camofox_vision`: the server's PNG, saved under
    /// `$HERMES_HOME/browser_screenshots/`, answered through the vision
    /// toolset (attached for Codex's model, or an auxiliary model's text).
    async fn vision(&self, env: &Env<'_>, question: &str, annotate: bool) -> Result<Reply, Fail> {
        let png = self
            .s
            .client
            .get_raw(
                &self.path("screenshot"),
                &[("userId", self.s.id.user_id.as_str())],
            )
            .await
            .map_err(fail)?;
        let dir = env.ctx.home.path.join("browser_screenshots");
        std::fs::create_dir_all(&dir)
            .map_err(|e| Fail::msg(format!("cannot create {}: {e}", dir.display())))?;
        let id = uuid::Uuid::new_v4().simple().to_string();
        let path = dir.join(format!("browser_screenshot_{}.png", &id[..8]));
        std::fs::write(&path, &png)
            .map_err(|e| Fail::msg(format!("cannot write {}: {e}", path.display())))?;
        let mut annotation = String::new();
        if annotate && let Ok((text, _)) = snapshot_raw(self.s, self.tab).await {
            let head: String = text.chars().take(ANNOTATION_CHARS).collect();
            annotation = format!("\n\nAccessibility tree (element refs for interaction):\n{head}");
        }
        let annotation = textsafety::redact(&annotation);
        let prompt = format!("Analyze this browser screenshot and answer: {question}{annotation}");
        let analysis = VisionClient::new()
            .analyze_bytes(env.ctx, png, &prompt)
            .await
            .map_err(Fail::msg)?;
        let mut v = json!({"screenshot_path": path.display().to_string()});
        match analysis {
            Analysis::Native(prepared) => {
                v["analysis"] = json!(format!(
                    "The screenshot of the current page is attached as an image ({}). Inspect it to answer: {question}{annotation}",
                    prepared.describe()
                ));
                Ok(Reply::Image(ok(v), prepared.base64(), prepared.mime))
            }
            Analysis::Text(text) => {
                v["analysis"] = json!(textsafety::redact(text.trim()));
                Ok(Reply::Json(ok(v)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_read_from_the_snapshot_as_hermes_reads_them() {
        let snap = "- heading \"Shop\" [e1]\n- img \"Logo\"\n  - /url: https://x.test/logo.png\n- img \"\"\n- img \"Cat\" [e2]\n- link \"Home\" [e3]";
        assert_eq!(
            images_from_snapshot(snap),
            vec![
                json!({"src": "https://x.test/logo.png", "alt": "Logo"}),
                json!({"src": "", "alt": "Cat"}),
            ]
        );
    }
}
