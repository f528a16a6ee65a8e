//! Hermes' `browser` toolset on a real headless Chromium driven over the
//! DevTools protocol (Hermes drives the Node `agent-browser` CLI instead;
//! hermes-agent: tools/browser_tool.py).
//!
//! * [`settings`]: `browser.*` config, executable lookup (cheap, for `tools/list`);
//! * [`launch`]: Chromium in its own process group with a fresh profile, and
//!   the flags it runs with;
//! * [`cdp`]: the DevTools protocol client (one WebSocket, flat sessions);
//! * [`session`]: the browser's connection, the tab and its event tasks;
//! * [`navigator`]: a session of our own for `Page.navigate` and for
//!   out-of-process frames;
//! * [`protocol`], [`page`]: typed results and events, and the bounded,
//!   dialog-aware way every tool sends commands;
//! * [`snapshot`]: the snapshot outline and `eN` refs; [`domsnap`] reads the
//!   in-page walker's tree (`snapshot.js`), [`walk`] runs it over CDP (frames
//!   included) and finds the element behind a ref;
//! * [`urlcheck`]: the single URL gate (rules from `crate::net::policy`);
//!   [`proxy`] applies it to every connection of a launched Chromium;
//! * [`textsafety`]: redaction of page text and the evaluate policy;
//! * [`schemas`]: the tool definitions; [`args`]: a call parsed into [`args::Tool`];
//! * the tools: [`navigate`] (navigate, back), [`snapshot_tool`],
//!   [`actions`] (click, type, press, scroll; keys from [`keys`]), [`pageinfo`] (images,
//!   console, evaluate), [`screenshot`] (vision);
//! * this file: the toolset, the session's lifetime, and dispatch.
//!
//! Chromium starts on the first browser call, never before; idle sessions
//! close after `browser.inactivity_timeout`; `shutdown` leaves no process.
//!
//! With a cloud provider ([`cloud`]: `browser.cloud_provider` or Hermes'
//! credential auto-detect) the main session is a remote browser created
//! through the provider's REST API and driven over CDP like a local one; it
//! is released on idle and on shutdown. As in Hermes, a navigation to a
//! private/loopback URL then goes to a local Chromium "sidecar" instead
//! (`browser.auto_local_for_private_urls`, default on), and the other tools
//! act on whichever session the last navigation used.
//!
//! With `CAMOFOX_URL` set (and no CDP override) the tools go to a Camofox
//! server's REST API instead ([`camofox`]); that session lives in its own
//! slot and is released on idle and shutdown like the others.

mod actions;
mod args;
mod camofox;
mod cdp;
mod cloud;
mod domsnap;
mod frames;
mod keys;
pub mod launch;
mod navigate;
mod navigator;
mod page;
mod pageinfo;
mod popup;
mod protocol;
mod proxy;
mod recording;
mod reply;
mod schemas;
mod screenshot;
mod session;
mod settings;
mod snapshot;
mod snapshot_tool;
mod textsafety;
mod urlcheck;
mod walk;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::Mutex;

use crate::hermes::{Context, deadlines};
use crate::server::toolset::BoxFuture;
use crate::server::{
    Availability, ProviderChoice, ToolCall, ToolDef, ToolEntry, ToolOutput, Toolset,
};
use args::{ConsoleArgs, Tool};
use reply::{Fail, Reply};
use session::Session;
use settings::Settings;

/// The main session (cloud, attached or local) and Hermes' local sidecar
/// for private URLs when a cloud provider is configured.
#[derive(Default)]
struct Slots {
    main: Option<Session>,
    local: Option<Session>,
    /// The last successful navigation used the sidecar.
    use_local: bool,
    /// The Camofox session (Camofox mode only).
    camofox: Option<camofox::CamofoxSession>,
}

impl Slots {
    fn active(&mut self) -> &mut Option<Session> {
        if self.use_local {
            &mut self.local
        } else {
            &mut self.main
        }
    }
}

#[derive(Default)]
pub struct BrowserToolset {
    session: Arc<Mutex<Slots>>,
    reaper: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
    http: crate::net::LazyClient,
    /// Camofox's own client: no 20 s idle cut, so a call may wait as long as
    /// Hermes lets it (`browser.command_timeout`, 30 s by default).
    camofox_http: crate::net::LazyClient,
    camofox: camofox::Shared,
}

impl BrowserToolset {
    pub fn new() -> Self {
        Self::default()
    }
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

    fn providers(&self, ctx: &Context) -> Vec<ProviderChoice> {
        let (provider, why) = crate::llm::textaux::describe(&snapshot_tool::summary_model(ctx));
        // Printed as "JOB  PROVIDER — WHY": no parentheses of its own around `why`.
        let what = if provider == "none" {
            "so snapshots over 15,000 characters are truncated"
        } else {
            "it summarizes snapshots over 15,000 characters"
        };
        vec![
            provider_choice(ctx),
            ProviderChoice {
                job: "browser_snapshot summaries",
                provider,
                why: format!("{why}; {what}"),
            },
        ]
    }

    fn call<'a>(&'a self, ctx: &'a Context, call: ToolCall) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let settings = Settings::from_context(ctx);
            let mut guard = self.session.lock().await;
            let res = self.dispatch(ctx, &settings, &mut guard, &call).await;
            if let Some(s) = guard.active().as_mut() {
                s.last_used = Instant::now();
            }
            if let Some(c) = guard.camofox.as_mut() {
                c.last_used = Instant::now();
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
            if let Some(h) = self
                .reaper
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .take()
            {
                h.abort();
            }
            let mut g = self.session.lock().await;
            for s in [g.main.take(), g.local.take()].into_iter().flatten() {
                s.close().await;
            }
            if let Some(c) = g.camofox.take() {
                c.close().await;
            }
        })
    }
}

fn availability(ctx: &Context) -> Availability {
    let s = Settings::from_context(ctx);
    if s.cdp_url.is_some()
        || matches!(
            cloud::select(ctx, false).backend,
            cloud::Backend::Cloud(_) | cloud::Backend::Camofox
        )
    {
        return Availability::Available;
    }
    match settings::find_executable(ctx) {
        Ok(_) => Availability::Available,
        Err(e) => Availability::Unavailable(e.to_string()),
    }
}

/// Dialog news rides along with every result: dialogs still open (with how
/// to answer them) and dialogs handled since the last result.
fn add_dialog_news(sess: &Session, r: &mut Result<Reply, Fail>) {
    let handled: Vec<Value> = std::mem::take(
        &mut *sess
            .tab
            .state
            .handled_dialogs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    let pending: Vec<Value> = sess
        .tab
        .state
        .pending()
        .iter()
        .map(|d| d.to_json())
        .collect();
    let (Ok(Reply::Json(v)) | Ok(Reply::Image(v, _, _)) | Err(Fail(v))) = r;
    if let Some(o) = v.as_object_mut() {
        if !pending.is_empty() {
            o.insert("pending_dialogs".into(), Value::Array(pending));
            o.insert("dialog_hint".into(), json!("A JavaScript dialog is open and blocks the page. Respond with browser_press key=\"Enter\" to accept (a prompt gets its default text) or key=\"Escape\" to dismiss."));
        }
        if !handled.is_empty() {
            o.insert("dialogs_handled".into(), Value::Array(handled));
        }
    }
}

/// What `hermes-mcp tools` shows for the browser: the backend that runs and why.
fn provider_choice(ctx: &Context) -> ProviderChoice {
    let st = Settings::from_context(ctx);
    let sel = cloud::select(ctx, st.cdp_url.is_some());
    let (provider, mut why) = match sel.backend {
        cloud::Backend::Cdp => ("cdp".to_string(), sel.why),
        cloud::Backend::Local => match settings::find_executable(ctx) {
            Ok(p) => (
                "chromium".to_string(),
                format!("{} ({})", sel.why, p.display()),
            ),
            Err(e) => ("none".to_string(), format!("{}; {e}", sel.why)),
        },
        cloud::Backend::Camofox => (
            "camofox".to_string(),
            format!("{}{}", sel.why, camofox::describe(ctx)),
        ),
        cloud::Backend::Cloud(p) => {
            let local = if cloud::auto_local_for_private_urls(ctx) {
                "; private/loopback URLs use local Chromium (browser.auto_local_for_private_urls)"
            } else {
                ""
            };
            (cloud::provider_label(ctx, p), format!("{}{local}", sel.why))
        }
    };
    if st.record_sessions && provider == "camofox" {
        why.push_str("; browser.record_sessions does not apply to Camofox (Hermes records only its own Chromium sessions)");
    } else if st.record_sessions {
        match recording::ffmpeg(ctx) {
            Some(ff) => why.push_str(&format!(
                "; browser.record_sessions: each session is recorded to {}/session_<time>_<task>.webm (ffmpeg {}; kept 72 h)",
                recording::dir(ctx).display(),
                ff.display()
            )),
            None => why.push_str(&format!("; {}", recording::NEEDS_FFMPEG)),
        }
    }
    ProviderChoice {
        job: "browser",
        provider,
        why,
    }
}

/// The URL `precheck_url` will check, for routing only.
fn route_url(raw: &str) -> String {
    let mut url = crate::net::guards::normalize_url(raw);
    if !url.contains("://") && !url.starts_with("about:") && !url.is_empty() {
        url = crate::net::guards::normalize_url(&format!("https://{url}"));
    }
    url
}

/// Parse a call and refuse an `evaluate` the policy forbids: the cheap
/// checks that come before any browser starts.
fn parse_call(st: &Settings, call: &ToolCall) -> Result<Tool, Fail> {
    let tool = Tool::parse(call.name, &call.args).map_err(Fail::msg)?;
    if let Tool::Console(ConsoleArgs {
        expression: Some(e),
        ..
    }) = &tool
        && let Some(err) =
            textsafety::eval_policy_error(e, st.restrict_evaluate, st.allow_unsafe_evaluate)
    {
        return Err(Fail::msg(err));
    }
    Ok(tool)
}

/// Drop a session whose browser went away (killed, crashed, connection
/// lost); browser_navigate starts a new one. Whether one was dropped.
async fn drop_if_gone(slot: &mut Option<Session>) -> bool {
    if slot.as_mut().is_none_or(|s| s.is_alive()) {
        return false;
    }
    tracing::warn!("browser: the browser exited or its connection closed");
    if let Some(x) = slot.take() {
        x.close().await;
    }
    true
}

/// A crashed tab: replaced when the call navigates, else the call fails
/// saying so.
async fn recover_crashed(st: &Settings, sess: &mut Session, navigating: bool) -> Result<(), Fail> {
    if !sess.tab.state.crashed.load(Ordering::SeqCst) {
        return Ok(());
    }
    if navigating {
        return sess.replace_tab(st).await.map_err(Fail::msg);
    }
    Err(Fail::msg(
        "The browser tab crashed (the page's renderer process died). Call browser_navigate to open the page again in a fresh tab.",
    ))
}

/// A page that stopped answering (a script that never yields) is abandoned
/// for a fresh tab before the call acts: a navigation then goes on in the
/// fresh tab, any other call fails saying what happened.
async fn recover_unresponsive(
    st: &Settings,
    sess: &mut Session,
    navigating: bool,
) -> Result<(), Fail> {
    if !sess.first_nav_done || sess.responsive(navigate::probe_timeout(st)).await {
        return Ok(());
    }
    // A renderer that died while we waited is a crash, told as one.
    if sess.tab.state.crashed.load(Ordering::SeqCst) {
        return recover_crashed(st, sess, navigating).await;
    }
    sess.abandon_tab(st).await.map_err(Fail::msg)?;
    if navigating {
        return Ok(());
    }
    Err(Fail::msg(format!(
        "The page stopped responding (no answer within {}s: a script kept it busy, or its renderer hung or crashed); its tab was closed and a fresh one opened. Call browser_navigate to load a page again.",
        navigate::probe_timeout(st).as_secs_f64()
    )))
}

/// Hermes' `_maybe_start_recording`: with the session's first navigation,
/// before the page loads. Why no recording was made, for the result.
async fn start_recording(
    ctx: &Context,
    st: &Settings,
    sess: &mut Session,
    local: bool,
) -> Option<String> {
    if !st.record_sessions || sess.first_nav_done || sess.recording.is_some() {
        return None;
    }
    let key = if local { "default::local" } else { "default" };
    match recording::start(ctx, &sess.tab.page, key).await {
        Ok(r) => {
            sess.recording = Some(r);
            None
        }
        Err(e) => {
            tracing::info!("browser: not recording: {e}");
            Some(e.to_string())
        }
    }
}

/// Anything but a snapshot or reading the console log may change the page:
/// those keep the cached snapshot (see `snapshot_tool.rs`).
fn keeps_snapshot(tool: &Tool) -> bool {
    matches!(
        tool,
        Tool::Snapshot(_)
            | Tool::Console(ConsoleArgs {
                expression: None,
                ..
            })
    )
}

/// Run one tool on the session (`url`: the checked URL of a navigation).
async fn run_tool(
    ctx: &Context,
    st: &Settings,
    sess: &mut Session,
    tool: Tool,
    url: Option<&str>,
) -> Result<Reply, Fail> {
    match tool {
        Tool::Navigate(_) => navigate::navigate(ctx, st, sess, url.unwrap_or_default())
            .await
            .map(Reply::Json),
        Tool::Snapshot(a) => snapshot_tool::snapshot_tool(ctx, st, sess, a.full, &a.task)
            .await
            .map(Reply::Json),
        Tool::Click(a) => actions::click(st, sess, &a.element).await.map(Reply::Json),
        Tool::Type(a) => actions::type_text(st, sess, &a.element, &a.text)
            .await
            .map(Reply::Json),
        Tool::Press(a) => actions::press(st, sess, &a.key).await.map(Reply::Json),
        Tool::Scroll(dir) => actions::scroll(st, sess, dir).await.map(Reply::Json),
        Tool::Back => navigate::back(st, sess).await.map(Reply::Json),
        Tool::GetImages => pageinfo::images(st, sess).await.map(Reply::Json),
        Tool::Console(a) => match a.expression {
            Some(e) => pageinfo::evaluate(st, sess, &e).await.map(Reply::Json),
            None => Ok(Reply::Json(pageinfo::console(sess, a.clear))),
        },
        Tool::Vision(a) => screenshot::vision(ctx, st, sess, &a.question, a.annotate).await,
    }
}

/// After a navigation that worked: the session's first result also says
/// why it is not on the configured cloud (`cloud_fallback`) and why it is
/// not recorded (`recording`).
fn note_first_navigation(
    sess: &mut Session,
    r: &mut Result<Reply, Fail>,
    recording: Option<String>,
) {
    if !sess.first_nav_done
        && let Ok(Reply::Json(v)) = r
        && let Some(o) = v.as_object_mut()
    {
        if let Some(f) = sess.fallback.take() {
            o.insert("cloud_fallback".into(), json!(f));
        }
        if let Some(n) = recording {
            o.insert("recording".into(), json!(n));
        }
    }
    sess.first_nav_done = true;
}

impl BrowserToolset {
    async fn dispatch(
        &self,
        ctx: &Context,
        st: &Settings,
        slots: &mut Slots,
        call: &ToolCall,
    ) -> Result<Reply, Fail> {
        let tool = parse_call(st, call)?;
        let sel = cloud::select(ctx, st.cdp_url.is_some());
        if sel.backend == cloud::Backend::Camofox {
            return self.camofox_dispatch(ctx, slots, tool).await;
        }
        let cloud_mode = matches!(sel.backend, cloud::Backend::Cloud(_));
        // Hermes' `_navigation_session_key`: private URLs go to the local
        // sidecar when a cloud provider is configured.
        let route_local = match &tool {
            Tool::Navigate(a) => Some(
                cloud_mode
                    && cloud::auto_local_for_private_urls(ctx)
                    && cloud::url_is_private(&route_url(&a.url)).await,
            ),
            _ => None,
        };
        let use_local = route_local.unwrap_or(slots.use_local);
        let slot = if use_local {
            &mut slots.local
        } else {
            &mut slots.main
        };
        let remote = !use_local && (st.cdp_url.is_some() || cloud_mode);
        let gone = drop_if_gone(slot).await;
        let url = match &tool {
            Tool::Navigate(a) => {
                Some(navigate::precheck_url(&a.url, ctx, remote, slot.as_ref()).await?)
            }
            _ if slot.is_none() => {
                return Err(Fail::msg(if gone {
                    "The browser exited unexpectedly. Call browser_navigate to start a new one."
                } else {
                    "No browser session: call browser_navigate first to open a page."
                }));
            }
            _ => None,
        };
        let sess = self.ensure(ctx, st, slot, &sel, use_local, remote).await?;
        recover_crashed(st, sess, url.is_some()).await?;
        recover_unresponsive(st, sess, url.is_some()).await?;
        let recording_note = match url {
            Some(_) => start_recording(ctx, st, sess, use_local).await,
            None => None,
        };
        if !keeps_snapshot(&tool) {
            sess.snap_cache = None;
        }
        let mut r = run_tool(ctx, st, sess, tool, url.as_deref()).await;
        add_dialog_news(sess, &mut r);
        if r.is_ok() && url.is_some() {
            note_first_navigation(sess, &mut r, recording_note);
        }
        if let Some(l) = route_local
            && r.is_ok()
        {
            slots.use_local = l;
        }
        r
    }

    /// Camofox mode: the URL checks of a local browser (Hermes treats
    /// Camofox as local), then the REST backend.
    async fn camofox_dispatch(
        &self,
        ctx: &Context,
        slots: &mut Slots,
        tool: Tool,
    ) -> Result<Reply, Fail> {
        let url = match &tool {
            Tool::Navigate(a) => Some(navigate::precheck_url(&a.url, ctx, false, None).await?),
            _ => None,
        };
        let http = self.camofox_client(ctx)?;
        let r = camofox::dispatch(ctx, &self.camofox, http, &mut slots.camofox, tool, url).await;
        if slots.camofox.is_some() {
            self.start_reaper(Settings::from_context(ctx).inactivity_timeout);
        }
        r
    }

    /// The provider-API HTTP client (configured endpoints: private allowed,
    /// cloud metadata never).
    fn api_client(&self, ctx: &Context) -> Result<Arc<crate::net::HttpClient>, Fail> {
        self.http
            .get_or_build(|| {
                crate::net::HttpClient::with_policy(crate::net::Policy::from_context(ctx))
            })
            .map_err(Fail::msg)
    }

    /// The client for the Camofox server: the provider-API policy, with read
    /// and total limits above the per-call limit Hermes gives Camofox
    /// (`tools/browser_camofox.py::_get_command_timeout`, 30 s by default),
    /// so the per-call limit is the one that ends a call (up to 150 s).
    fn camofox_client(&self, ctx: &Context) -> Result<Arc<crate::net::HttpClient>, Fail> {
        self.camofox_http
            .get_or_build(|| {
                let limits = crate::net::Limits {
                    read: deadlines::CAMOFOX_HTTP_READ.get(),
                    total: deadlines::CAMOFOX_HTTP_TOTAL.get(),
                    ..Default::default()
                };
                crate::net::HttpClient::new(
                    crate::net::Policy::from_context(ctx),
                    Arc::new(crate::net::SystemLookup),
                    limits,
                )
            })
            .map_err(Fail::msg)
    }

    async fn ensure<'s>(
        &self,
        ctx: &Context,
        st: &Settings,
        slot: &'s mut Option<Session>,
        sel: &cloud::Selection,
        local: bool,
        remote: bool,
    ) -> Result<&'s mut Session, Fail> {
        if slot.is_none() {
            let mut fallback = None;
            let target = match (&sel.backend, &st.cdp_url) {
                (cloud::Backend::Cdp, Some(u)) if !local => session::Target::Attach(u.clone()),
                (cloud::Backend::Cloud(p), _) if !local => {
                    let http = self.api_client(ctx)?;
                    match cloud::create(ctx, http, *p).await {
                        Ok(c) => session::Target::Cloud(c),
                        Err(e) => {
                            // Hermes: a failed cloud session falls back to a
                            // local Chromium (`fallback_from_cloud`).
                            let name = p.display();
                            tracing::warn!(
                                "Cloud provider {name} failed ({e}); attempting fallback to local Chromium"
                            );
                            let exe = settings::find_executable(ctx).map_err(|le| {
                                Fail::msg(format!(
                                    "Cloud provider {name} failed ({e}) and local fallback also failed ({le})"
                                ))
                            })?;
                            fallback = Some(format!(
                                "Cloud provider {name} failed ({e}); this session runs on a local Chromium instead"
                            ));
                            session::Target::Launch(exe)
                        }
                    }
                }
                _ => session::Target::Launch(settings::find_executable(ctx).map_err(Fail::msg)?),
            };
            let policy = urlcheck::BrowserPolicy::from_context(ctx, remote);
            let mut s = Session::start(target, st, policy)
                .await
                .map_err(Fail::msg)?;
            s.fallback = fallback;
            tracing::info!(
                "browser: {} (pid {:?})",
                match &s.cloud {
                    Some(c) => format!("{} cloud session {}", c.provider.display(), c.id),
                    None if s.attached => "attached over CDP".into(),
                    None if local && remote => "local sidecar".into(),
                    None => "launched Chromium".into(),
                },
                s.process_id()
            );
            *slot = Some(s);
            self.start_reaper(st.inactivity_timeout);
        }
        Ok(slot.as_mut().expect("the session was just stored"))
    }

    fn start_reaper(&self, idle: Duration) {
        let mut g = self
            .reaper
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if g.as_ref().is_some_and(|h| !h.is_finished()) {
            return;
        }
        let slot = self.session.clone();
        let tick = (idle / 4).clamp(
            deadlines::scaled(Duration::from_millis(250)),
            deadlines::scaled(Duration::from_secs(15)),
        );
        let idle_secs = deadlines::unscaled(idle).as_secs();
        *g = Some(tokio::spawn(async move {
            loop {
                tokio::time::sleep(tick).await;
                let mut g = slot.lock().await;
                if g.main.is_none() && g.local.is_none() && g.camofox.is_none() {
                    return;
                }
                let g = &mut *g;
                if g.camofox
                    .as_ref()
                    .is_some_and(|c| c.last_used.elapsed() >= idle)
                {
                    tracing::info!(
                        "browser: releasing the Camofox session after {idle_secs}s idle (browser.inactivity_timeout)"
                    );
                    if let Some(c) = g.camofox.take() {
                        c.close().await;
                    }
                }
                for s in [&mut g.main, &mut g.local] {
                    if s.as_ref().is_some_and(|x| x.last_used.elapsed() >= idle) {
                        tracing::info!(
                            "browser: closing after {idle_secs}s idle (browser.inactivity_timeout)"
                        );
                        if let Some(x) = s.take() {
                            x.close().await;
                        }
                    }
                }
                if g.main.is_none() && g.local.is_none() && g.camofox.is_none() {
                    return;
                }
            }
        }));
    }
}
