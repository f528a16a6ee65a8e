//! One call's way to a browser: which session it goes to (the main one,
//! the local sidecar for private URLs, or Camofox), starting that session
//! when there is none, recovering a tab that crashed or stopped answering,
//! starting the recording with the first navigation, and closing sessions
//! left idle. The toolset ([`super::BrowserToolset`]) holds the slots; the
//! tools run on the session this picks.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::json;

use super::BrowserToolset;
use super::args::{ConsoleArgs, Tool};
use super::chromium::settings::{self, Settings};
use super::chromium::urlcheck;
use super::providers::{self, camofox, cloud};
use super::reply::{Fail, Reply};
use super::session::{self, Session, recording};
use super::snapshot::textsafety;
use super::tools::{self, navigate};
use crate::hermes::{Context, deadlines};
use crate::server::ToolCall;

/// The main session (cloud, attached or local) and Hermes' local sidecar
/// for private URLs when a cloud provider is configured.
#[derive(Default)]
pub(super) struct Slots {
    pub(super) main: Option<Session>,
    pub(super) local: Option<Session>,
    /// The last successful navigation used the sidecar.
    pub(super) use_local: bool,
    /// The Camofox session (Camofox mode only).
    pub(super) camofox: Option<camofox::CamofoxSession>,
}

impl Slots {
    pub(super) fn active(&mut self) -> &mut Option<Session> {
        if self.use_local {
            &mut self.local
        } else {
            &mut self.main
        }
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

/// Run the call after making sure the page still answers: a page that
/// stopped (a script that never yields) is abandoned for a fresh tab, where
/// a navigation then goes on; any other call fails saying what happened.
///
/// Only a navigation (`browser_navigate`, `browser_back`) waits for the
/// liveness probe's answer before it starts: sent to a page that stopped,
/// it would replace the document the probe asks about, and the probe would
/// get an answer (an error) from a page that never loads. Any other call
/// runs beside the probe (sent first, answered first: a page that answers
/// costs no extra round trip) and is dropped when the probe's time is up,
/// whatever it was waiting for; a call that failed on its own waits for the
/// probe's verdict, so that a page that stopped is never reported as some
/// command's timeout.
async fn run_checked(
    ctx: &Context,
    st: &Settings,
    sess: &mut Session,
    tool: Tool,
    url: Option<&str>,
) -> Result<Reply, Fail> {
    let probe = if sess.first_nav_done {
        sess.probe(navigate::probe_timeout(st))
    } else {
        None
    };
    let Some(probe) = probe else {
        return tools::run_tool(ctx, st, sess, tool, url).await;
    };
    let navigating = url.is_some();
    if navigating || matches!(tool, Tool::Back) {
        if !probe.await {
            abandon_stopped(st, sess, navigating).await?;
            // Going back has no history in the fresh tab.
            if !navigating {
                return Err(stopped(st));
            }
        }
        return tools::run_tool(ctx, st, sess, tool, url).await;
    }
    {
        let run = tools::run_tool(ctx, st, sess, tool, url);
        tokio::pin!(run, probe);
        tokio::select! {
            biased;
            alive = &mut probe => if alive {
                return run.await;
            },
            r = &mut run => if r.is_ok() || probe.await {
                return r;
            },
        }
    }
    abandon_stopped(st, sess, false).await?;
    Err(stopped(st))
}

/// A call's failure on a page that stopped answering (its tab replaced).
fn stopped(st: &Settings) -> Fail {
    Fail::msg(format!(
        "The page stopped responding (no answer within {}s: a script kept it busy, or its renderer hung or crashed); its tab was closed and a fresh one opened. Call browser_navigate to load a page again.",
        navigate::probe_timeout(st).as_secs_f64()
    ))
}

/// The tab of a page that did not answer the probe: a crash (the renderer
/// died while we waited) is told as one, anything else is abandoned for a
/// fresh tab.
async fn abandon_stopped(st: &Settings, sess: &mut Session, navigating: bool) -> Result<(), Fail> {
    if sess.tab.state.crashed.load(Ordering::SeqCst) {
        return recover_crashed(st, sess, navigating).await;
    }
    sess.abandon_tab(st).await.map_err(Fail::msg)
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
    pub(super) async fn dispatch(
        &self,
        ctx: &Context,
        st: &Settings,
        slots: &mut Slots,
        call: &ToolCall,
    ) -> Result<Reply, Fail> {
        let tool = parse_call(st, call)?;
        let sel = providers::select(ctx, st.cdp_url.is_some());
        if sel.backend == providers::Backend::Camofox {
            return self.camofox_dispatch(ctx, slots, tool).await;
        }
        let cloud_mode = matches!(sel.backend, providers::Backend::Cloud(_));
        // Hermes' `_navigation_session_key`: private URLs go to the local
        // sidecar when a cloud provider is configured.
        let route_local = match &tool {
            Tool::Navigate(a) => Some(
                cloud_mode
                    && providers::auto_local_for_private_urls(ctx)
                    && providers::url_is_private(&route_url(&a.url)).await,
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
        let recording_note = match url {
            Some(_) => start_recording(ctx, st, sess, use_local).await,
            None => None,
        };
        if !tools::keeps_snapshot(&tool) {
            sess.snap_cache = None;
        }
        let mut r = run_checked(ctx, st, sess, tool, url.as_deref()).await;
        tools::add_dialog_news(sess, &mut r);
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
        sel: &providers::Selection,
        local: bool,
        remote: bool,
    ) -> Result<&'s mut Session, Fail> {
        if slot.is_none() {
            let mut fallback = None;
            let target = match (&sel.backend, &st.cdp_url) {
                (providers::Backend::Cdp, Some(u)) if !local => session::Target::Attach(u.clone()),
                (providers::Backend::Cloud(p), _) if !local => {
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
