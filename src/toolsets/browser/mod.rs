//! Hermes' `browser` toolset on a real headless Chromium driven over the
//! DevTools protocol (Hermes drives the Node `agent-browser` CLI instead).
//!
//! * [`settings`]: `browser.*` config, executable lookup (cheap, for `tools/list`);
//! * [`launch`]: Chromium in its own process group with a fresh profile;
//! * [`session`]: the CDP connection, the tab and its event tasks;
//! * [`snapshot`]: accessibility-tree outline and `eN` refs;
//! * [`urlcheck`]: the single URL gate (rules from `crate::net::policy`);
//! * [`textsafety`]: redaction of page text and the evaluate policy;
//! * this file: the ten tools.
//!
//! Chromium starts on the first browser call, never before; idle sessions
//! close after `browser.inactivity_timeout`; `shutdown` leaves no process.

mod domsnap;
pub mod cdp;
pub mod launch;
pub mod navigator;
pub mod schemas;
pub mod session;
pub mod settings;
pub mod snapshot;
pub mod textsafety;
pub mod urlcheck;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use base64::Engine as _;
use serde_json::{Map, Value, json};
use tokio::sync::Mutex;

use crate::hermes::Context;
use crate::server::toolset::BoxFuture;
use crate::server::{Availability, ToolCall, ToolDef, ToolEntry, ToolOutput, Toolset};
use session::Session;
use settings::Settings;
use snapshot::RefError;

/// Hermes' `SNAPSHOT_SUMMARIZE_THRESHOLD`.
pub const SNAPSHOT_MAX_CHARS: usize = 15_000;
/// Hermes' `MAX_STORED_SNAPSHOT_CHARS`.
const MAX_STORED_SNAPSHOT_CHARS: usize = 2_000_000;
/// Hermes' `_SCROLL_PIXELS`.
const SCROLL_PIXELS: i64 = 500;
/// Screenshots older than this are deleted (Hermes: 24 h).
const SCREENSHOT_MAX_AGE: Duration = Duration::from_secs(24 * 3600);
/// Full-page screenshots are cut at this height (CSS px).
const MAX_SCREENSHOT_HEIGHT: f64 = 8000.0;

const BOT_PATTERNS: &[&str] = &[
    "access denied",
    "access to this page has been denied",
    "blocked",
    "bot detected",
    "verification required",
    "please verify",
    "are you a robot",
    "captcha",
    "cloudflare",
    "ddos protection",
    "checking your browser",
    "just a moment",
    "attention required",
];

#[derive(Default)]
pub struct BrowserToolset {
    session: Arc<Mutex<Option<Session>>>,
    reaper: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl BrowserToolset {
    pub fn new() -> Self {
        Self::default()
    }
}

/// A tool failure in Hermes' shape: `{"success": false, "error": ...}`.
struct Fail(Value);

impl Fail {
    fn msg(m: impl Into<String>) -> Self {
        Fail(json!({"success": false, "error": m.into()}))
    }
}

impl From<String> for Fail {
    fn from(s: String) -> Self {
        Fail::msg(s)
    }
}

type R = Result<Value, Fail>;

fn ok(mut v: Value) -> Value {
    if let Some(o) = v.as_object_mut() {
        let mut m = Map::new();
        m.insert("success".into(), Value::Bool(true));
        m.extend(std::mem::take(o));
        *o = m;
    }
    v
}

fn is_node_gone(e: &str) -> bool {
    let l = e.to_ascii_lowercase();
    l.contains("no node with given id")
        || l.contains("could not find node")
        || l.contains("node is detached")
        || l.contains("no node found")
        || l.contains("cannot find context with specified id")
}

impl Toolset for BrowserToolset {
    fn name(&self) -> &'static str {
        "browser"
    }

    fn defs(&self) -> &'static [ToolDef] {
        schemas::DEFS
    }

    fn resolve(&self, ctx: &Context, def: &'static ToolDef) -> ToolEntry {
        def.entry(availability(ctx))
    }

    fn call<'a>(&'a self, ctx: &'a Context, call: ToolCall) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let settings = Settings::from_context(ctx);
            let mut guard = self.session.lock().await;
            let res = self.dispatch(ctx, &settings, &mut guard, &call).await;
            if let Some(s) = guard.as_mut() {
                s.last_used = Instant::now();
            }
            drop(guard);
            match res {
                Ok(Reply::Json(v)) => ToolOutput::json(v),
                Ok(Reply::Image(v, b64, mime)) => ToolOutput::json(v).with_image(b64, mime),
                Err(Fail(v)) => ToolOutput::error_json(v),
            }
        })
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if let Some(h) = self.reaper.lock().unwrap().take() {
                h.abort();
            }
            let s = self.session.lock().await.take();
            if let Some(s) = s {
                s.close().await;
            }
        })
    }
}

fn availability(ctx: &Context) -> Availability {
    let s = Settings::from_context(ctx);
    if s.cdp_url.is_some() {
        return Availability::Available;
    }
    match settings::find_executable(ctx) {
        Ok(_) => Availability::Available,
        Err(e) => Availability::Unavailable(e),
    }
}

enum Reply {
    Json(Value),
    /// JSON plus an image: base64 data and its MIME type.
    Image(Value, String, &'static str),
}

impl BrowserToolset {
    async fn dispatch(
        &self,
        ctx: &Context,
        st: &Settings,
        slot: &mut Option<Session>,
        call: &ToolCall,
    ) -> Result<Reply, Fail> {
        let a = &call.args;
        let s_arg = |k: &str| a.get(k).and_then(|v| v.as_str()).map(str::to_string);
        let b_arg = |k: &str| a.get(k).and_then(|v| v.as_bool()).unwrap_or(false);
        // Cheap argument checks before any browser starts.
        if call.name == "browser_scroll" {
            let d = s_arg("direction").unwrap_or_default();
            if d != "up" && d != "down" {
                return Err(Fail::msg(format!(
                    "Invalid direction '{d}'. Use 'up' or 'down'."
                )));
            }
        }
        if call.name == "browser_console"
            && let Some(e) = s_arg("expression")
            && let Some(err) =
                textsafety::eval_policy_error(&e, st.restrict_evaluate, st.allow_unsafe_evaluate)
        {
            return Err(Fail::msg(err));
        }
        // The browser went away (killed, crashed, connection lost): drop it;
        // browser_navigate starts a new one.
        let mut gone = false;
        if let Some(sess) = slot.as_mut()
            && !sess.is_alive()
        {
            tracing::warn!("browser: the browser exited or its connection closed");
            if let Some(x) = slot.take() {
                x.close().await;
            }
            gone = true;
        }
        let mut pre: Option<Value> = None;
        if call.name == "browser_navigate" {
            pre = Some(
                self.precheck_url(&s_arg("url").unwrap_or_default(), ctx, st, slot.as_ref())
                    .await?,
            );
        } else if slot.is_none() {
            return Err(Fail::msg(if gone {
                "The browser exited unexpectedly. Call browser_navigate to start a new one."
            } else {
                "No browser session: call browser_navigate first to open a page."
            }));
        }
        let sess = self.ensure(ctx, st, slot).await?;
        // A crashed tab: say so, and replace it on the next navigation.
        if sess
            .tab
            .state
            .crashed
            .load(std::sync::atomic::Ordering::SeqCst)
        {
            if call.name == "browser_navigate" {
                sess.replace_tab(st).await?;
            } else {
                return Err(Fail::msg(
                    "The browser tab crashed (the page's renderer process died). Call browser_navigate to open the page again in a fresh tab.",
                ));
            }
        }
        let mut r = match call.name {
            "browser_navigate" => navigate(ctx, st, sess, pre.unwrap()).await.map(Reply::Json),
            "browser_snapshot" => snapshot_tool(ctx, st, sess, b_arg("full"))
                .await
                .map(Reply::Json),
            "browser_click" => click(st, sess, &s_arg("ref").unwrap_or_default())
                .await
                .map(Reply::Json),
            "browser_type" => type_text(
                st,
                sess,
                &s_arg("ref").unwrap_or_default(),
                &s_arg("text").unwrap_or_default(),
            )
            .await
            .map(Reply::Json),
            "browser_press" => press(st, sess, &s_arg("key").unwrap_or_default())
                .await
                .map(Reply::Json),
            "browser_scroll" => scroll(st, sess, &s_arg("direction").unwrap_or_default())
                .await
                .map(Reply::Json),
            "browser_back" => back(st, sess).await.map(Reply::Json),
            "browser_get_images" => images(st, sess).await.map(Reply::Json),
            "browser_console" => match s_arg("expression") {
                Some(e) => evaluate(st, sess, &e).await.map(Reply::Json),
                None => Ok(Reply::Json(console(sess, b_arg("clear")))),
            },
            "browser_vision" => {
                vision(
                    ctx,
                    st,
                    sess,
                    &s_arg("question").unwrap_or_default(),
                    b_arg("annotate"),
                )
                .await
            }
            other => Err(Fail::msg(format!("unknown browser tool {other}"))),
        };
        // Dialog news rides along with every result.
        let handled: Vec<Value> =
            std::mem::take(&mut *sess.tab.state.handled_dialogs.lock().unwrap());
        let pending: Vec<Value> = sess
            .tab
            .state
            .pending()
            .iter()
            .map(|d| d.to_json())
            .collect();
        let add = |v: &mut Value| {
            if let Some(o) = v.as_object_mut() {
                if !pending.is_empty() {
                    o.insert("pending_dialogs".into(), Value::Array(pending.clone()));
                    o.insert("dialog_hint".into(), json!("A JavaScript dialog is open and blocks the page. Respond with browser_press key=\"Enter\" to accept (a prompt gets its default text) or key=\"Escape\" to dismiss."));
                }
                if !handled.is_empty() {
                    o.insert("dialogs_handled".into(), Value::Array(handled.clone()));
                }
            }
        };
        match &mut r {
            Ok(Reply::Json(v)) | Ok(Reply::Image(v, _, _)) | Err(Fail(v)) => add(v),
        }
        if r.is_ok() && call.name == "browser_navigate" {
            sess.first_nav_done = true;
        }
        r
    }

    /// Secret-in-URL and policy checks for `browser_navigate`, before any
    /// browser starts. Returns the normalised URL.
    async fn precheck_url(
        &self,
        raw: &str,
        ctx: &Context,
        st: &Settings,
        sess: Option<&Session>,
    ) -> Result<Value, Fail> {
        use crate::net::guards;
        let secret = || {
            Fail::msg(
                "Blocked: URL contains what appears to be an API key or token. Secrets must not be sent in URLs.",
            )
        };
        if guards::url_has_secret(raw, raw) {
            return Err(secret());
        }
        let mut url = guards::normalize_url(raw);
        if !url.contains("://") && !url.starts_with("about:") && !url.is_empty() {
            url = guards::normalize_url(&format!("https://{url}"));
        }
        if guards::url_has_secret(&url, &url) {
            return Err(secret());
        }
        let policy = match sess {
            Some(s) => s.policy.clone(),
            None => urlcheck::BrowserPolicy::from_context(ctx, st.cdp_url.is_some()),
        };
        if !policy.local
            && let Some(k) = guards::sensitive_query_param(&url)
        {
            return Err(Fail::msg(format!(
                "Blocked: URL contains a credential-like query parameter ({k}). Cloud browser backends are third-party readers; use a local browser/CDP session or remove the sensitive query parameter before navigating."
            )));
        }
        if let Err(r) = urlcheck::check(&url, &policy).await {
            let mut v = json!({"success": false, "error": r.message});
            if let Some(b) = r.blocked_by_policy {
                v["blocked_by_policy"] = b;
            }
            return Err(Fail(v));
        }
        Ok(Value::String(url))
    }

    async fn ensure<'s>(
        &self,
        ctx: &Context,
        st: &Settings,
        slot: &'s mut Option<Session>,
    ) -> Result<&'s mut Session, Fail> {
        if slot.is_none() {
            let exe = if st.cdp_url.is_some() {
                None
            } else {
                Some(settings::find_executable(ctx).map_err(Fail::msg)?)
            };
            let policy = urlcheck::BrowserPolicy::from_context(ctx, st.cdp_url.is_some());
            let s = Session::start(exe, st, policy).await.map_err(Fail::msg)?;
            tracing::info!(
                "browser: {} (pid {:?})",
                if s.attached {
                    "attached over CDP"
                } else {
                    "launched Chromium"
                },
                s.process_id()
            );
            *slot = Some(s);
            self.start_reaper(st.inactivity_timeout);
        }
        Ok(slot.as_mut().unwrap())
    }

    fn start_reaper(&self, idle: Duration) {
        let mut g = self.reaper.lock().unwrap();
        if g.as_ref().is_some_and(|h| !h.is_finished()) {
            return;
        }
        let slot = self.session.clone();
        let tick = (idle / 4).clamp(Duration::from_millis(250), Duration::from_secs(15));
        *g = Some(tokio::spawn(async move {
            loop {
                tokio::time::sleep(tick).await;
                let mut s = slot.lock().await;
                let idle_for = match s.as_ref() {
                    Some(x) => x.last_used.elapsed(),
                    None => return,
                };
                if idle_for >= idle {
                    tracing::info!(
                        "browser: closing after {}s idle (browser.inactivity_timeout)",
                        idle.as_secs()
                    );
                    if let Some(x) = s.take() {
                        x.close().await;
                    }
                    return;
                }
            }
        }));
    }
}

// ---------------------------------------------------------------------------
// helpers
// ---------------------------------------------------------------------------

/// One CDP call bounded by the command timeout, aborted early when a
/// JavaScript dialog opens (the page is frozen until it is answered) or the
/// tab crashes.
async fn cmd(
    st: &Settings,
    s: &Session,
    method: &'static str,
    params: Value,
) -> Result<Value, String> {
    cmd_t(st.command_timeout, s, method, params).await
}

async fn cmd_t(
    t: Duration,
    s: &Session,
    method: &'static str,
    params: Value,
) -> Result<Value, String> {
    let state = &s.tab.state;
    let opened = state.dialog_opened.notified();
    tokio::pin!(opened);
    opened.as_mut().enable();
    if !state.pending().is_empty() && !method.starts_with("Page.handleJavaScriptDialog") {
        return Err(dialog_block(s));
    }
    tokio::select! {
        r = tokio::time::timeout(t, cdp::call(&s.tab.page, method, params)) => match r {
            Ok(r) => r,
            Err(_) => Err(format!("Browser command {method} timed out after {}s (browser.command_timeout)", t.as_secs_f64())),
        },
        _ = &mut opened => {
            if state.crashed.load(std::sync::atomic::Ordering::SeqCst) {
                Err("The browser tab crashed. Call browser_navigate to open the page again in a fresh tab.".into())
            } else {
                Err(dialog_block(s))
            }
        }
    }
}

const DIALOG_OPEN: &str = "A JavaScript dialog is open";

fn dialog_block(s: &Session) -> String {
    let p = s.tab.state.pending();
    let d = p.first();
    format!(
        "{DIALOG_OPEN} ({} \"{}\") and blocks the page. Respond with browser_press key=\"Enter\" to accept or key=\"Escape\" to dismiss.",
        d.map(|d| d.kind.as_str()).unwrap_or("alert"),
        d.map(|d| d.message.as_str()).unwrap_or("")
    )
}

/// Evaluate an expression, returning its value.
async fn eval_value(st: &Settings, s: &Session, expr: &str) -> Result<Value, String> {
    let r = cmd(
        st,
        s,
        "Runtime.evaluate",
        json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
    )
    .await?;
    if let Some(ex) = r.get("exceptionDetails") {
        return Err(exception_text(ex));
    }
    Ok(r.pointer("/result/value").cloned().unwrap_or(Value::Null))
}

fn exception_text(ex: &Value) -> String {
    ex.pointer("/exception/description")
        .and_then(|v| v.as_str())
        .or_else(|| ex.get("text").and_then(|v| v.as_str()))
        .unwrap_or("JavaScript exception")
        .to_string()
}

/// Wait until a main-frame load that is in flight finishes (bounded).
async fn settle(st: &Settings, s: &Session, grace: Duration) {
    let mut rx = s.tab.state.loading.subscribe();
    if !*rx.borrow() && !grace.is_zero() {
        // Give an action a moment to start a navigation.
        let _ = tokio::time::timeout(grace, rx.wait_for(|l| *l)).await;
    }
    if *rx.borrow() {
        let _ = tokio::time::timeout(st.navigation_timeout, rx.wait_for(|l| !*l)).await;
    }
}

async fn current_url_title(st: &Settings, s: &Session) -> (String, String) {
    match cmd(st, s, "Page.getNavigationHistory", json!({})).await {
        Ok(h) => {
            let i = h.get("currentIndex").and_then(|v| v.as_u64()).unwrap_or(0) as usize;
            let e = h
                .pointer(&format!("/entries/{i}"))
                .cloned()
                .unwrap_or(Value::Null);
            (
                e.get("url")
                    .and_then(|v| v.as_str())
                    .unwrap_or("")
                    .to_string(),
                e.get("title")
                    .and_then(|v| v.as_str())
                    .unwrap_or("")
                    .to_string(),
            )
        }
        Err(_) => (String::new(), String::new()),
    }
}

/// Take a snapshot, store the full text when it is cut, redact.
async fn take_snapshot(
    ctx: &Context,
    st: &Settings,
    s: &mut Session,
    full: bool,
) -> Result<(String, usize), String> {
    let t0 = Instant::now();
    settle(st, s, Duration::ZERO).await;
    let t1 = Instant::now();
    let mut r = cmd(st, s, "Accessibility.getFullAXTree", json!({})).await?;
    let t2 = Instant::now();
    let nodes = match r.get_mut("nodes").map(Value::take) {
        Some(Value::Array(a)) => a,
        _ => Vec::new(),
    };
    let gen_ = s.tab.state.doc_gen();
    let snap = snapshot::render(&nodes, &mut s.refs, gen_, full);
    let t3 = Instant::now();
    let text = textsafety::redact(&snap.text);
    tracing::debug!(
        "snapshot: settle {:?}, AX tree {:?} ({} nodes), render {:?}, redact {:?}",
        t1 - t0,
        t2 - t1,
        nodes.len(),
        t3 - t2,
        t3.elapsed()
    );
    let text = if text.chars().count() > SNAPSHOT_MAX_CHARS {
        let stored = store_full_snapshot(ctx, &text);
        snapshot::truncate(&text, SNAPSHOT_MAX_CHARS, stored.as_deref())
    } else {
        text
    };
    Ok((text, snap.element_count))
}

/// Hermes' `_store_full_snapshot`: `$HERMES_HOME/cache/web/browser-snapshot-<sha10>.txt`.
fn store_full_snapshot(ctx: &Context, text: &str) -> Option<String> {
    use sha2::Digest;
    let mut content = text.to_string();
    let n = content.chars().count();
    if n > MAX_STORED_SNAPSHOT_CHARS {
        content = content
            .chars()
            .take(MAX_STORED_SNAPSHOT_CHARS)
            .collect::<String>()
            + &format!(
                "\n\n[... stored copy truncated at {MAX_STORED_SNAPSHOT_CHARS} chars of {n} ...]"
            );
    }
    let dir = ctx.home.cache_dir("web");
    std::fs::create_dir_all(&dir).ok()?;
    let digest = sha2::Sha256::digest(content.as_bytes());
    let hex: String = digest.iter().take(5).map(|b| format!("{b:02x}")).collect();
    let path = dir.join(format!("browser-snapshot-{hex}.txt"));
    std::fs::write(&path, content).ok()?;
    Some(path.display().to_string())
}

fn ref_err(e: RefError) -> Fail {
    Fail::msg(e.to_string())
}

/// Resolve a ref to a backend node id for the current document.
fn resolve(s: &Session, raw: &str) -> Result<(String, snapshot::RefEntry), Fail> {
    let (n, e) = s
        .refs
        .resolve(raw, s.tab.state.doc_gen())
        .map_err(ref_err)?;
    Ok((format!("@e{n}"), e))
}

fn stale(r: &str) -> Fail {
    ref_err(RefError::Stale(r.to_string()))
}

/// `DOM.resolveNode` → a JS object id for the ref's element.
async fn object_for(st: &Settings, s: &Session, shown: &str, backend: i64) -> Result<String, Fail> {
    match cmd(
        st,
        s,
        "DOM.resolveNode",
        json!({"backendNodeId": backend, "objectGroup": "hermes"}),
    )
    .await
    {
        Ok(v) => v
            .pointer("/object/objectId")
            .and_then(|v| v.as_str())
            .map(str::to_string)
            .ok_or_else(|| stale(shown)),
        Err(e) if is_node_gone(&e) => Err(stale(shown)),
        Err(e) => Err(Fail::msg(e)),
    }
}

async fn call_on(
    st: &Settings,
    s: &Session,
    object: &str,
    func: &str,
    args: Vec<Value>,
) -> Result<Value, String> {
    let args: Vec<Value> = args.into_iter().map(|v| json!({"value": v})).collect();
    let r = cmd(
        st,
        s,
        "Runtime.callFunctionOn",
        json!({"objectId": object, "functionDeclaration": func, "arguments": args, "returnByValue": true, "awaitPromise": true}),
    )
    .await?;
    if let Some(ex) = r.get("exceptionDetails") {
        return Err(exception_text(ex));
    }
    Ok(r.pointer("/result/value").cloned().unwrap_or(Value::Null))
}

// ---------------------------------------------------------------------------
// tools
// ---------------------------------------------------------------------------

async fn navigate(ctx: &Context, st: &Settings, s: &mut Session, url: Value) -> R {
    let url = url.as_str().unwrap_or_default().to_string();
    // Navigating answers any open dialog (as leaving the page would).
    for _ in s.tab.state.pending() {
        let _ = cdp::call(
            &s.tab.page,
            "Page.handleJavaScriptDialog",
            json!({"accept": false}),
        )
        .await;
    }
    s.tab.state.pending_dialogs.lock().unwrap().clear();
    *s.tab.state.blocked.lock().unwrap() = None;
    let mut loads = s.tab.state.loads.subscribe();
    loads.borrow_and_update();
    let started = Instant::now();
    let nav_timeout = st.navigation_timeout;
    let gen_before = s.tab.state.doc_gen();
    let mut warning: Option<String> = None;
    let r = match tokio::time::timeout(
        nav_timeout,
        s.tab.nav.call("Page.navigate", json!({"url": url})),
    )
    .await
    {
        Ok(r) => r,
        Err(_) => {
            let _ = cmd(st, s, "Page.stopLoading", json!({})).await;
            if s.tab.state.doc_gen() == gen_before {
                return Err(Fail::msg(format!(
                    "Navigation timed out after {}s: {url} did not respond (browser.navigation_timeout / browser.command_timeout)",
                    nav_timeout.as_secs_f64()
                )));
            }
            // The document arrived in part: show what there is.
            warning = Some(format!(
                "The page did not finish loading within {}s; loading was stopped and the snapshot shows what had arrived.",
                nav_timeout.as_secs_f64()
            ));
            Ok(json!({}))
        }
    };
    let r = r.map_err(|e| Fail::msg(format!("Navigation failed: {e}")))?;
    let blocked = s.tab.state.blocked.lock().unwrap().take();
    if let Some((burl, refusal)) = blocked {
        let _ = s
            .tab
            .nav
            .call("Page.navigate", json!({"url": "about:blank"}))
            .await;
        let message = if burl != url {
            refusal
                .message
                .replacen("Blocked: URL targets", "Blocked: redirect landed on", 1)
                + &format!(" ({burl})")
        } else {
            refusal.message
        };
        let mut v = json!({"success": false, "error": message});
        if let Some(b) = refusal.blocked_by_policy {
            v["blocked_by_policy"] = b;
        }
        return Err(Fail(v));
    }
    if let Some(e) = r
        .get("errorText")
        .and_then(|v| v.as_str())
        .filter(|e| !e.is_empty())
    {
        return Err(Fail::msg(format!("Navigation failed: {e} ({url})")));
    }
    // A new document (not a same-document fragment change): wait for load.
    if r.get("loaderId")
        .and_then(|v| v.as_str())
        .is_some_and(|l| !l.is_empty())
    {
        let left = nav_timeout.saturating_sub(started.elapsed());
        let waited = tokio::time::timeout(left, loads.changed()).await;
        if waited.is_err() {
            let _ = cmd(st, s, "Page.stopLoading", json!({})).await;
            warning = Some(format!(
                "The page did not finish loading within {}s; loading was stopped and the snapshot shows what had arrived.",
                nav_timeout.as_secs_f64()
            ));
        }
    }
    let (final_url, title) = current_url_title(st, s).await;
    let mut resp = json!({"url": final_url, "title": title});
    let tl = title.to_lowercase();
    if BOT_PATTERNS.iter().any(|p| tl.contains(p)) {
        resp["bot_detection_warning"] = json!(format!(
            "Page title '{title}' suggests bot detection. The site may have blocked this request. Options: 1) Try adding delays between actions, 2) Access different pages first, 3) Enable advanced stealth (BROWSERBASE_ADVANCED_STEALTH=true, requires Scale plan), 4) Some sites have very aggressive bot detection that may be unavoidable."
        ));
    }
    if let Some(w) = warning {
        resp["warning"] = json!(w);
    }
    match take_snapshot(ctx, st, s, false).await {
        Ok((text, n)) => {
            resp["snapshot"] = json!(text);
            resp["element_count"] = json!(n);
        }
        Err(e) => tracing::debug!("auto-snapshot after navigate failed: {e}"),
    }
    Ok(ok(resp))
}

async fn snapshot_tool(ctx: &Context, st: &Settings, s: &mut Session, full: bool) -> R {
    let (text, n) = take_snapshot(ctx, st, s, full).await.map_err(|e| {
        Fail::msg(if e.is_empty() {
            "Failed to get snapshot".into()
        } else {
            e
        })
    })?;
    Ok(ok(json!({"snapshot": text, "element_count": n})))
}

/// Centre of the element's border box, after scrolling it into view.
async fn center(
    st: &Settings,
    s: &Session,
    shown: &str,
    backend: i64,
) -> Result<Option<(f64, f64)>, Fail> {
    let _ = cmd(
        st,
        s,
        "DOM.scrollIntoViewIfNeeded",
        json!({"backendNodeId": backend}),
    )
    .await;
    match cmd(
        st,
        s,
        "DOM.getContentQuads",
        json!({"backendNodeId": backend}),
    )
    .await
    {
        Ok(v) => {
            let q = v
                .pointer("/quads/0")
                .and_then(|q| q.as_array())
                .cloned()
                .unwrap_or_default();
            if q.len() < 8 {
                return Ok(None);
            }
            let f: Vec<f64> = q.iter().map(|x| x.as_f64().unwrap_or(0.0)).collect();
            let x = (f[0] + f[2] + f[4] + f[6]) / 4.0;
            let y = (f[1] + f[3] + f[5] + f[7]) / 4.0;
            Ok(Some((x, y)))
        }
        Err(e) if is_node_gone(&e) => Err(stale(shown)),
        Err(e) if e.contains(DIALOG_OPEN) => Err(Fail::msg(e)),
        Err(_) => Ok(None),
    }
}

async fn mouse_click(st: &Settings, s: &Session, x: f64, y: f64) -> Result<(), String> {
    cmd(
        st,
        s,
        "Input.dispatchMouseEvent",
        json!({"type": "mouseMoved", "x": x, "y": y}),
    )
    .await?;
    cmd(
        st,
        s,
        "Input.dispatchMouseEvent",
        json!({"type": "mousePressed", "x": x, "y": y, "button": "left", "clickCount": 1}),
    )
    .await?;
    cmd(
        st,
        s,
        "Input.dispatchMouseEvent",
        json!({"type": "mouseReleased", "x": x, "y": y, "button": "left", "clickCount": 1}),
    )
    .await?;
    Ok(())
}

/// Actions that open a dialog succeed; the result then carries `pending_dialogs`.
fn dialog_ok(e: &str) -> bool {
    e.contains(DIALOG_OPEN)
}

async fn click(st: &Settings, s: &mut Session, raw: &str) -> R {
    let (shown, e) = resolve(s, raw)?;
    let done = json!({"clicked": shown});
    if e.role == "option" {
        // A <select>'s option: choose it the way a user's pick does.
        let obj = object_for(st, s, &shown, e.backend).await?;
        let r = call_on(st, s, &obj, "function(){const sel=this.closest('select'); if(!sel){this.click(); return true;} this.selected=true; sel.dispatchEvent(new Event('input',{bubbles:true})); sel.dispatchEvent(new Event('change',{bubbles:true})); return true;}", vec![]).await;
        return match r {
            Ok(_) => Ok(ok(done)),
            Err(er) if dialog_ok(&er) => Ok(ok(done)),
            Err(er) => Err(Fail::msg(format!("Failed to click {shown}: {er}"))),
        };
    }
    let point = center(st, s, &shown, e.backend).await?;
    let r = match point {
        Some((x, y)) => mouse_click(st, s, x, y).await,
        None => {
            // Not rendered as a box (e.g. zero size): fall back to a DOM click.
            let obj = object_for(st, s, &shown, e.backend).await?;
            call_on(
                st,
                s,
                &obj,
                "function(){this.click(); return true;}",
                vec![],
            )
            .await
            .map(|_| ())
        }
    };
    match r {
        Ok(()) => {
            settle(st, s, Duration::from_millis(60)).await;
            Ok(ok(done))
        }
        Err(er) if dialog_ok(&er) => Ok(ok(done)),
        Err(er) => Err(Fail::msg(format!("Failed to click {shown}: {er}"))),
    }
}

const FILL_JS: &str = r#"function(text){
  const el=this;
  if(el.tagName==='SELECT'){
    const want=String(text).trim().toLowerCase();
    const opts=[...el.options];
    const o=opts.find(o=>o.value.toLowerCase()===want)||opts.find(o=>o.label.trim().toLowerCase()===want)||opts.find(o=>o.label.trim().toLowerCase().includes(want));
    if(!o) return {select:true, ok:false, options:opts.map(o=>o.label.trim())};
    el.value=o.value; o.selected=true;
    el.dispatchEvent(new Event('input',{bubbles:true}));
    el.dispatchEvent(new Event('change',{bubbles:true}));
    return {select:true, ok:true, chosen:o.label.trim()};
  }
  const editable = el.isContentEditable || el.tagName==='TEXTAREA' || (el.tagName==='INPUT' && !['checkbox','radio','button','submit','reset','file','image','range','color'].includes((el.type||'').toLowerCase()));
  if(!editable) return {ok:false, notEditable:true, tag:el.tagName.toLowerCase(), type:el.type||''};
  if(el.disabled||el.readOnly) return {ok:false, readonly:true};
  el.focus();
  if(el.isContentEditable){ const r=document.createRange(); r.selectNodeContents(el); const s=getSelection(); s.removeAllRanges(); s.addRange(r); }
  else { el.select(); }
  return {ok:true};
}"#;

async fn type_text(st: &Settings, s: &mut Session, raw: &str, text: &str) -> R {
    let (shown, e) = resolve(s, raw)?;
    let obj = object_for(st, s, &shown, e.backend).await?;
    let r = call_on(st, s, &obj, FILL_JS, vec![json!(text)])
        .await
        .map_err(|er| Fail::msg(format!("Failed to type into {shown}: {er}")))?;
    let typed = textsafety::redact(text);
    if r.get("select").and_then(|v| v.as_bool()) == Some(true) {
        if r.get("ok").and_then(|v| v.as_bool()) == Some(true) {
            return Ok(ok(
                json!({"typed": typed, "element": shown, "selected": r.get("chosen").cloned().unwrap_or(Value::Null)}),
            ));
        }
        return Err(Fail::msg(format!(
            "No option matching '{typed}' in {shown}; options are: {}",
            r.get("options").map(|o| o.to_string()).unwrap_or_default()
        )));
    }
    if r.get("notEditable").and_then(|v| v.as_bool()) == Some(true) {
        return Err(Fail::msg(format!(
            "Failed to type into {shown}: it is a {} element ({}) that does not take text; use browser_click for it",
            e.role,
            r.get("type").and_then(|v| v.as_str()).unwrap_or("")
        )));
    }
    if r.get("readonly").and_then(|v| v.as_bool()) == Some(true) {
        return Err(Fail::msg(format!(
            "Failed to type into {shown}: the field is disabled or read-only"
        )));
    }
    // The field's text is selected: replace it (empty text clears it).
    let r = if text.is_empty() {
        cmd(st, s, "Input.dispatchKeyEvent", json!({"type": "rawKeyDown", "key": "Delete", "code": "Delete", "windowsVirtualKeyCode": 46}))
            .await
            .and(cmd(st, s, "Input.dispatchKeyEvent", json!({"type": "keyUp", "key": "Delete", "code": "Delete", "windowsVirtualKeyCode": 46})).await)
    } else {
        cmd(st, s, "Input.insertText", json!({"text": text})).await
    };
    match r {
        Ok(_) => Ok(ok(json!({"typed": typed, "element": shown}))),
        Err(er) if dialog_ok(&er) => Ok(ok(json!({"typed": typed, "element": shown}))),
        Err(er) => Err(Fail::msg(format!("Failed to type into {shown}: {er}"))),
    }
}

/// `Control+Shift+a` → (modifier bits, key).
fn parse_key(spec: &str) -> (i64, String) {
    let parts: Vec<&str> = spec.split('+').collect();
    if parts.len() == 1 || spec == "+" {
        return (0, spec.to_string());
    }
    let mut mods = 0;
    for m in &parts[..parts.len() - 1] {
        mods |= match m.to_ascii_lowercase().as_str() {
            "alt" | "option" => 1,
            "control" | "ctrl" => 2,
            "meta" | "cmd" | "command" | "super" => 4,
            "shift" => 8,
            _ => 0,
        };
    }
    (mods, parts[parts.len() - 1].to_string())
}

fn key_alias(k: &str) -> String {
    match k.to_ascii_lowercase().as_str() {
        "enter" | "return" => "Enter".into(),
        "tab" => "Tab".into(),
        "escape" | "esc" => "Escape".into(),
        "backspace" => "Backspace".into(),
        "delete" | "del" => "Delete".into(),
        "space" => " ".into(),
        "arrowup" | "up" => "ArrowUp".into(),
        "arrowdown" | "down" => "ArrowDown".into(),
        "arrowleft" | "left" => "ArrowLeft".into(),
        "arrowright" | "right" => "ArrowRight".into(),
        "pageup" => "PageUp".into(),
        "pagedown" => "PageDown".into(),
        "home" => "Home".into(),
        "end" => "End".into(),
        _ => k.to_string(),
    }
}

async fn press(st: &Settings, s: &mut Session, key: &str) -> R {
    let done = json!({"pressed": key});
    // A pending dialog: Enter accepts, Escape dismisses.
    let pending = s.tab.state.pending();
    if let Some(d) = pending.first() {
        let k = key_alias(key);
        if k == "Enter" || k == "Escape" {
            let accept = k == "Enter";
            let prompt = (accept && d.kind == "prompt").then_some(d.default_prompt.as_str());
            answer_dialog_now(s, accept, prompt).await?;
            s.tab
                .state
                .pending_dialogs
                .lock()
                .unwrap()
                .retain(|x| x.id != d.id);
            s.tab.state.handled_dialogs.lock().unwrap().push(json!({"type": d.kind, "message": d.message, "action": if accept {"accepted"} else {"dismissed"}}));
            settle(st, s, Duration::from_millis(30)).await;
            return Ok(ok(done));
        }
        return Err(Fail::msg(dialog_block(s)));
    }
    let (mods, k) = parse_key(key);
    let k = key_alias(&k);
    let def = chromiumoxide::keys::USKEYBOARD_LAYOUT
        .iter()
        .find(|d| d.key == k);
    let Some(def) = def else {
        return Err(Fail::msg(format!(
            "Failed to press {key}: unknown key. Use a key name like Enter, Tab, Escape, Backspace, ArrowDown, PageDown, a single character, or a combination like Control+a."
        )));
    };
    let text = if mods & (1 | 2 | 4) != 0 {
        None
    } else {
        def.text.or(if def.key.chars().count() == 1 {
            Some(def.key)
        } else {
            None
        })
    };
    let down_type = if text.is_some() {
        "keyDown"
    } else {
        "rawKeyDown"
    };
    let mut down = json!({"type": down_type, "key": def.key, "code": def.code, "windowsVirtualKeyCode": def.key_code, "modifiers": mods});
    if let Some(t) = text {
        down["text"] = json!(t);
        down["unmodifiedText"] = json!(t);
    }
    let r = async {
        cmd(st, s, "Input.dispatchKeyEvent", down).await?;
        cmd(st, s, "Input.dispatchKeyEvent", json!({"type": "keyUp", "key": def.key, "code": def.code, "windowsVirtualKeyCode": def.key_code, "modifiers": mods})).await
    }
    .await;
    match r {
        Ok(_) => {
            settle(st, s, Duration::from_millis(60)).await;
            Ok(ok(done))
        }
        Err(er) if dialog_ok(&er) => Ok(ok(done)),
        Err(er) => Err(Fail::msg(format!("Failed to press {key}: {er}"))),
    }
}

async fn answer_dialog_now(s: &Session, accept: bool, prompt: Option<&str>) -> Result<(), Fail> {
    session::answer_dialog(&s.tab.page, accept, prompt)
        .await
        .map_err(|e| Fail::msg(format!("Failed to answer the dialog: {e}")))
}

async fn scroll(st: &Settings, s: &mut Session, dir: &str) -> R {
    let dy = if dir == "up" {
        -SCROLL_PIXELS
    } else {
        SCROLL_PIXELS
    };
    // A wheel event over the page centre scrolls what a user would scroll.
    let vp = cmd(st, s, "Page.getLayoutMetrics", json!({}))
        .await
        .unwrap_or(Value::Null);
    let w = vp
        .pointer("/cssLayoutViewport/clientWidth")
        .and_then(|v| v.as_f64())
        .unwrap_or(800.0);
    let h = vp
        .pointer("/cssLayoutViewport/clientHeight")
        .and_then(|v| v.as_f64())
        .unwrap_or(600.0);
    cmd(
        st,
        s,
        "Input.dispatchMouseEvent",
        json!({"type": "mouseWheel", "x": w / 2.0, "y": h / 2.0, "deltaX": 0, "deltaY": dy}),
    )
    .await
    .map_err(|e| Fail::msg(format!("Failed to scroll {dir}: {e}")))?;
    // Wheel scrolling is applied asynchronously; wait for the next frame.
    let _ = eval_value(
        st,
        s,
        "new Promise(r=>requestAnimationFrame(()=>requestAnimationFrame(()=>r(1))))",
    )
    .await;
    Ok(ok(json!({"scrolled": dir})))
}

async fn back(st: &Settings, s: &mut Session) -> R {
    let h = cmd(st, s, "Page.getNavigationHistory", json!({}))
        .await
        .map_err(|e| Fail::msg(format!("Failed to go back: {e}")))?;
    let i = h.get("currentIndex").and_then(|v| v.as_i64()).unwrap_or(0);
    if i <= 0 {
        return Err(Fail::msg(
            "Failed to go back: there is no previous page in this tab's history",
        ));
    }
    let entry = h
        .pointer(&format!("/entries/{}", i - 1))
        .cloned()
        .unwrap_or(Value::Null);
    let target = entry
        .get("url")
        .and_then(|v| v.as_str())
        .unwrap_or("")
        .to_string();
    if let Err(r) = urlcheck::check(&target, &s.policy).await {
        return Err(Fail::msg(format!(
            "{} ({target}). Browser history navigation (back) was refused.",
            r.message
        )));
    }
    let id = entry.get("id").cloned().unwrap_or(Value::Null);
    let mut loads = s.tab.state.loads.subscribe();
    loads.borrow_and_update();
    cmd(st, s, "Page.navigateToHistoryEntry", json!({"entryId": id}))
        .await
        .map_err(|e| Fail::msg(format!("Failed to go back: {e}")))?;
    let _ = tokio::time::timeout(st.navigation_timeout, loads.changed()).await;
    settle(st, s, Duration::ZERO).await;
    let (url, _) = current_url_title(st, s).await;
    Ok(ok(json!({"url": url})))
}

const IMAGES_JS: &str = "[...document.images].map(img => ({src: img.src, alt: img.alt || '', width: img.naturalWidth, height: img.naturalHeight})).filter(img => img.src && !img.src.startsWith('data:'))";

async fn images(st: &Settings, s: &mut Session) -> R {
    settle(st, s, Duration::ZERO).await;
    let v = eval_value(st, s, IMAGES_JS)
        .await
        .map_err(|e| Fail::msg(format!("Failed to get images: {e}")))?;
    match v {
        Value::Array(a) => {
            let n = a.len();
            Ok(ok(
                json!({"images": textsafety::redact_json(Value::Array(a)), "count": n}),
            ))
        }
        _ => Ok(ok(
            json!({"images": [], "count": 0, "warning": "Could not parse image data"}),
        )),
    }
}

fn console(s: &mut Session, clear: bool) -> Value {
    let st = &s.tab.state;
    let msgs: Vec<Value> = {
        let mut g = st.console.lock().unwrap();
        let v = g.clone();
        if clear {
            g.clear();
        }
        v
    };
    let errs: Vec<Value> = {
        let mut g = st.errors.lock().unwrap();
        let v = g.clone();
        if clear {
            g.clear();
        }
        v
    };
    let messages: Vec<Value> = msgs
        .into_iter()
        .map(|m| json!({"type": m["type"], "text": textsafety::redact(m["text"].as_str().unwrap_or("")), "source": "console"}))
        .collect();
    let errors: Vec<Value> = errs
        .into_iter()
        .map(|m| json!({"message": textsafety::redact(m["message"].as_str().unwrap_or("")), "source": "exception"}))
        .collect();
    ok(json!({
        "console_messages": messages,
        "js_errors": errors,
        "total_messages": messages.len(),
        "total_errors": errors.len(),
    }))
}

/// Python's `type(x).__name__` for a JSON value (Hermes' `result_type`).
fn py_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

async fn evaluate(st: &Settings, s: &mut Session, expr: &str) -> R {
    let r = cmd(
        st,
        s,
        "Runtime.evaluate",
        json!({"expression": expr, "objectGroup": "hermes-eval", "awaitPromise": true, "userGesture": true, "replMode": true}),
    )
    .await
    .map_err(Fail::msg)?;
    if let Some(ex) = r.get("exceptionDetails") {
        return Err(Fail::msg(textsafety::redact(&exception_text(ex))));
    }
    let res = r.get("result").cloned().unwrap_or(Value::Null);
    let subtype = res.get("subtype").and_then(|v| v.as_str()).unwrap_or("");
    let kind = res.get("type").and_then(|v| v.as_str()).unwrap_or("");
    let value = if kind == "object"
        && (subtype == "node" || res.get("className").and_then(|c| c.as_str()) == Some("Window"))
    {
        let _ = cmd(
            st,
            s,
            "Runtime.releaseObjectGroup",
            json!({"objectGroup": "hermes-eval"}),
        )
        .await;
        return Err(Fail::msg(
            "Expression returned a live DOM node / NodeList / Window, which can't be serialized. Extract a primitive value (e.g. .innerText, .href, .src, .value) or use JSON.stringify() / a snapshot tool instead.",
        ));
    } else if let Some(obj) = res.get("objectId").and_then(|v| v.as_str()) {
        let v = call_on(st, s, obj, "function(){return this}", vec![]).await;
        let _ = cmd(
            st,
            s,
            "Runtime.releaseObjectGroup",
            json!({"objectGroup": "hermes-eval"}),
        )
        .await;
        v.map_err(|e| {
            if e.to_lowercase().contains("reference chain is too long") || e.contains("circular") {
                Fail::msg("Expression returned a live DOM node / NodeList / Window, which can't be serialized. Extract a primitive value (e.g. .innerText, .href, .src, .value) or use JSON.stringify() / a snapshot tool instead.")
            } else {
                Fail::msg(e)
            }
        })?
    } else if let Some(v) = res.get("value") {
        v.clone()
    } else if let Some(u) = res.get("unserializableValue") {
        u.clone()
    } else {
        Value::Null
    };
    // Hermes: a string holding JSON is parsed.
    let parsed = match &value {
        Value::String(t) => serde_json::from_str::<Value>(t).unwrap_or(value.clone()),
        _ => value,
    };
    let rt = py_type(&parsed);
    Ok(ok(
        json!({"result": textsafety::redact_json(parsed), "result_type": rt}),
    ))
}

/// Delete `browser_screenshot_*.png` older than 24 h.
fn prune_screenshots(dir: &std::path::Path) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let now = SystemTime::now();
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if !name.starts_with("browser_screenshot_") {
            continue;
        }
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|m| now.duration_since(m).ok())
            .is_some_and(|age| age > SCREENSHOT_MAX_AGE);
        if old {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

const ANNOTATE_JS: &str = r#"function(items){
  const root=document.createElement('div'); root.id='__hermes_annotations';
  root.style.cssText='position:absolute;left:0;top:0;width:0;height:0;z-index:2147483647;pointer-events:none';
  for(const it of items){
    const b=document.createElement('div');
    b.style.cssText=`position:absolute;left:${it.x}px;top:${it.y}px;width:${it.w}px;height:${it.h}px;outline:2px solid #e11d48;`;
    const l=document.createElement('div'); l.textContent='['+it.n+']';
    l.style.cssText='position:absolute;left:0;top:-14px;font:bold 11px/13px monospace;background:#e11d48;color:#fff;padding:0 2px;white-space:nowrap';
    b.appendChild(l); root.appendChild(b);
  }
  document.documentElement.appendChild(root); return items.length;
}"#;

async fn vision(
    ctx: &Context,
    st: &Settings,
    s: &mut Session,
    question: &str,
    annotate: bool,
) -> Result<Reply, Fail> {
    settle(st, s, Duration::ZERO).await;
    let dir = ctx.home.cache_dir("screenshots");
    std::fs::create_dir_all(&dir).map_err(|e| {
        Fail::msg(format!(
            "Failed to take screenshot (local mode): cannot create {}: {e}",
            dir.display()
        ))
    })?;
    prune_screenshots(&dir);
    let mut annotations: Vec<Value> = Vec::new();
    if annotate {
        if s.refs.latest.is_empty() || s.refs.doc_gen != s.tab.state.doc_gen() {
            take_snapshot(ctx, st, s, false).await.map_err(Fail::msg)?;
        }
        let scroll = eval_value(st, s, "[scrollX, scrollY]")
            .await
            .unwrap_or(json!([0, 0]));
        let (sx, sy) = (
            scroll[0].as_f64().unwrap_or(0.0),
            scroll[1].as_f64().unwrap_or(0.0),
        );
        let mut items = Vec::new();
        for (n, e) in s.refs.latest_entries().into_iter().take(300) {
            let Ok(v) = cmd(
                st,
                s,
                "DOM.getContentQuads",
                json!({"backendNodeId": e.backend}),
            )
            .await
            else {
                continue;
            };
            let Some(q) = v.pointer("/quads/0").and_then(|q| q.as_array()) else {
                continue;
            };
            let f: Vec<f64> = q.iter().map(|x| x.as_f64().unwrap_or(0.0)).collect();
            if f.len() < 8 {
                continue;
            }
            let (minx, maxx) = (
                f[0].min(f[2]).min(f[4]).min(f[6]),
                f[0].max(f[2]).max(f[4]).max(f[6]),
            );
            let (miny, maxy) = (
                f[1].min(f[3]).min(f[5]).min(f[7]),
                f[1].max(f[3]).max(f[5]).max(f[7]),
            );
            items.push(
                json!({"n": n, "x": minx + sx, "y": miny + sy, "w": maxx - minx, "h": maxy - miny}),
            );
            annotations.push(json!({"label": format!("[{n}]"), "ref": format!("@e{n}"), "role": e.role, "name": textsafety::redact(&e.name)}));
        }

        let win = cmd(
            st,
            s,
            "Runtime.evaluate",
            json!({"expression": "document.documentElement", "objectGroup": "hermes"}),
        )
        .await;
        if let Ok(w) = win
            && let Some(obj) = w.pointer("/result/objectId").and_then(|v| v.as_str())
        {
            let _ = call_on(st, s, obj, ANNOTATE_JS, vec![Value::Array(items)]).await;
        }
    }
    let metrics = cmd(st, s, "Page.getLayoutMetrics", json!({}))
        .await
        .unwrap_or(Value::Null);
    let cw = metrics
        .pointer("/cssContentSize/width")
        .and_then(|v| v.as_f64())
        .unwrap_or(1280.0);
    let ch = metrics
        .pointer("/cssContentSize/height")
        .and_then(|v| v.as_f64())
        .unwrap_or(800.0);
    let shot = cmd(
        st,
        s,
        "Page.captureScreenshot",
        json!({"format": "png", "captureBeyondViewport": true, "clip": {"x": 0, "y": 0, "width": cw.max(1.0), "height": ch.clamp(1.0, MAX_SCREENSHOT_HEIGHT), "scale": 1}}),
    )
    .await;
    if annotate {
        let _ = eval_value(
            st,
            s,
            "document.getElementById('__hermes_annotations')?.remove(), 1",
        )
        .await;
    }
    let shot =
        shot.map_err(|e| Fail::msg(format!("Failed to take screenshot (local mode): {e}")))?;
    let b64 = shot.get("data").and_then(|v| v.as_str()).unwrap_or("");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .map_err(|e| {
            Fail::msg(format!(
                "Failed to take screenshot (local mode): bad image data: {e}"
            ))
        })?;
    let path: PathBuf = dir.join(format!(
        "browser_screenshot_{}.png",
        uuid::Uuid::new_v4().simple()
    ));
    std::fs::write(&path, &bytes).map_err(|e| {
        Fail::msg(format!(
            "Failed to take screenshot (local mode): cannot write {}: {e}",
            path.display()
        ))
    })?;
    // The vision toolset's path: native mode hands the (downscaled) pixels to
    // Codex's model; auxiliary mode asks the configured vision model, with
    // Hermes' browser_vision prompt.
    let prompt = format!(
        "You are analyzing a screenshot of a web browser.\n\nUser's question: {question}\n\n\
         Provide a detailed and helpful answer based on what you see in the screenshot. \
         If there are interactive elements, describe them. If there are verification challenges \
         or CAPTCHAs, describe what type they are and what action might be needed. \
         Focus on answering the user's specific question."
    );
    let analysis = crate::toolsets::vision::VisionClient::new()
        .analyze_bytes(ctx, bytes, &prompt)
        .await
        .map_err(|e| {
            Fail::msg(format!(
                "Error analyzing screenshot: {e}. Screenshot path: {}",
                path.display()
            ))
        })?;
    let mut v = json!({
        "question": question,
        "screenshot_path": path.display().to_string(),
    });
    if annotate {
        v["annotations"] = Value::Array(annotations);
    }
    match analysis {
        crate::toolsets::vision::Analysis::Native(prepared) => {
            v["analysis"] = json!(format!(
                "The screenshot of the current page is attached as an image ({}). Inspect it to answer: {question}",
                prepared.describe()
            ));
            Ok(Reply::Image(ok(v), prepared.base64(), prepared.mime))
        }
        crate::toolsets::vision::Analysis::Text(text) => {
            v["analysis"] = json!(textsafety::redact(&text));
            Ok(Reply::Json(ok(v)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn screenshots_older_than_a_day_are_pruned() {
        let d = tempfile::tempdir().unwrap();
        let old = d.path().join("browser_screenshot_old.png");
        let new = d.path().join("browser_screenshot_new.png");
        let other = d.path().join("keep.png");
        for p in [&old, &new, &other] {
            std::fs::write(p, b"x").unwrap();
        }
        let past = SystemTime::now() - Duration::from_secs(25 * 3600);
        for p in [&old, &other] {
            std::fs::File::options()
                .write(true)
                .open(p)
                .unwrap()
                .set_modified(past)
                .unwrap();
        }
        prune_screenshots(d.path());
        assert!(!old.exists());
        assert!(new.exists());
        assert!(other.exists(), "only our screenshots are pruned");
    }

    #[test]
    fn keys_and_types() {
        assert_eq!(parse_key("Control+a"), (2, "a".into()));
        assert_eq!(parse_key("Enter"), (0, "Enter".into()));
        assert_eq!(key_alias("esc"), "Escape");
        assert_eq!(py_type(&json!(1)), "int");
        assert_eq!(py_type(&json!(1.5)), "float");
        assert_eq!(py_type(&json!(null)), "NoneType");
        assert!(
            chromiumoxide::keys::USKEYBOARD_LAYOUT
                .iter()
                .any(|d| d.key == "Enter")
        );
    }
}
