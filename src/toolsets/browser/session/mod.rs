//! One browser session: a launched (or attached) Chromium, its CDP
//! connection (`cdp`), and the tab the tools drive, with the event tasks
//! that collect console output, errors and dialogs, track navigations and
//! loading, notice crashes, and apply the URL policy to every document
//! request (for its readable refusal). A launched Chromium also connects
//! only through the session's request gate (`chromium::proxy`), which applies the
//! policy to every connection; a tab whose page stops answering is
//! abandoned for a fresh one ([`Session::abandon_tab`]).

//!
//! The room around it: [`page`] (the bounded, dialog-aware way every tool
//! sends commands), [`navigator`] (a CDP session of our own for
//! `Page.navigate` and out-of-process frames), [`frames`] and [`walk`] (the
//! snapshot walker run over the tab and its frames, and the way back from a
//! ref to its element), [`popup`] (tabs a page opens), [`recording`] (the
//! session's screencast to a video file).
//!
//! It owns the live browser state the tools act on; it knows no tool. It is
//! separate so that the handlers see one `Session` and never the transport's
//! sessions, targets or event streams.

mod events;
pub(crate) mod frames;
pub(crate) mod navigator;
pub(crate) mod page;
mod popup;
pub(crate) mod recording;
pub(crate) mod walk;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;

use crate::toolsets::browser::cdp::{Browser, CdpError, Connection, Page};
use crate::toolsets::browser::chromium::launch::{self, ChromeProcess, LaunchError};
use crate::toolsets::browser::chromium::proxy::GuardProxy;
use crate::toolsets::browser::chromium::settings::Settings;
use crate::toolsets::browser::chromium::urlcheck::{BrowserPolicy, Refusal};
use crate::toolsets::browser::providers::cloud::CloudSession;
use crate::toolsets::browser::snapshot::RefTable;
use frames::Frames;
use navigator::{NavError, Navigator};

/// Why a browser session (or a fresh tab) could not be set up.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SessionError {
    #[error("no Chromium executable")]
    NoExecutable,
    #[error(transparent)]
    Launch(#[from] LaunchError),
    #[error(transparent)]
    Join(#[from] tokio::task::JoinError),
    #[error(
        "Cannot attach to the browser at {url} (browser.cdp_url / BROWSER_CDP_URL): {why}. Start Chrome with --remote-debugging-port or fix the URL."
    )]
    Attach { url: String, why: String },
    #[error("cannot start the browser's request gate on loopback: {0}")]
    Proxy(std::io::Error),
    #[error("Cannot connect to the launched Chromium: {why}")]
    Connect { why: String },
    #[error("Cannot connect to the {provider} cloud browser session over CDP: {why}")]
    Cloud { provider: &'static str, why: String },
    #[error("timed out opening a browser tab")]
    TabTimeout,
    #[error("cannot open a browser tab: {0}")]
    OpenTab(CdpError),
    #[error("timed out preparing the browser tab")]
    PrepareTimeout,
    #[error(transparent)]
    Prepare(CdpError),
    #[error("timed out attaching to the browser tab")]
    AttachTimeout,
    #[error(transparent)]
    Navigator(#[from] NavError),
}

#[derive(Debug, Clone)]
pub(crate) struct PendingDialog {
    pub(crate) kind: String,
    pub(crate) message: String,
    pub(crate) default_prompt: String,
    pub(crate) id: u64,
}

impl PendingDialog {
    pub(crate) fn to_json(&self) -> Value {
        json!({"type": self.kind, "message": self.message})
    }
}

/// A `console.*` call on the page.
#[derive(Debug, Clone)]
pub(crate) struct ConsoleMessage {
    /// `log`, `warning`, `error`, ... (CDP's `Runtime.consoleAPICalled` type).
    pub(crate) kind: String,
    pub(crate) text: String,
}

/// An uncaught exception on the page.
#[derive(Debug, Clone)]
pub(crate) struct PageError {
    pub(crate) message: String,
}

/// State shared between the tools and the tab's event tasks.
pub(crate) struct TabState {
    pub(crate) console: Mutex<Vec<ConsoleMessage>>,
    pub(crate) errors: Mutex<Vec<PageError>>,
    pub(crate) pending_dialogs: Mutex<Vec<PendingDialog>>,
    /// Dialogs handled automatically since the last tool result.
    pub(crate) handled_dialogs: Mutex<Vec<Value>>,
    pub(crate) dialog_opened: Notify,
    pub(crate) crashed: AtomicBool,
    /// Bumped on every main-frame navigation (refs are per document).
    pub(crate) doc_gen: AtomicU64,
    pub(crate) loading: watch::Sender<bool>,
    pub(crate) loads: watch::Sender<u64>,
    /// The last document request refused by the URL policy.
    pub(crate) blocked: Mutex<Option<(String, Refusal)>>,
    pub(crate) main_frame: String,
    /// URLs the page tried to open in a new tab (see `popup.rs`).
    pub(crate) popups: Mutex<Vec<String>>,
    next_dialog: AtomicU64,
}

pub(crate) struct Tab {
    pub(crate) page: Page,
    pub(crate) state: Arc<TabState>,
    /// `Page.navigate` goes through here (see `navigator.rs`).
    pub(crate) nav: Navigator,
    tasks: Vec<JoinHandle<()>>,
}

/// The last snapshot's text, kept so that the `browser_snapshot` that
/// follows `browser_navigate` need not walk the page again.
/// Every tool but `browser_snapshot` (and reading the console log) drops it
/// before acting (the toolset's `dispatch.rs`); `tools/snapshot_tool.rs` fills and reads it.
pub(crate) struct SnapCache {
    pub(crate) doc_gen: u64,
    pub(crate) full: bool,
    /// Redacted, before any cut or summary.
    pub(crate) text: String,
    pub(crate) element_count: usize,
}

pub(crate) struct Session {
    browser: Browser,
    process: Option<ChromeProcess>,
    /// The request gate a launched Chromium connects through (`chromium/proxy.rs`).
    _proxy: Option<GuardProxy>,
    pub(crate) tab: Tab,
    /// Tabs the session left for a tab the page opened (closed with it).
    background: Vec<Tab>,
    pub(crate) policy: BrowserPolicy,
    pub(crate) refs: RefTable,
    /// Cross-origin frames of the current document (see `walk.rs`).
    pub(crate) frames: Frames,
    pub(crate) last_used: Instant,
    pub(crate) first_nav_done: bool,
    /// The tab is new since the last navigation (an abandoned page's
    /// replacement): its first navigation gets `navigate_fresh_tab`'s retry.
    pub(crate) fresh_tab: bool,
    pub(crate) attached: bool,
    /// The remote session behind `attached`, released on close.
    pub(crate) cloud: Option<CloudSession>,
    /// Why a cloud provider was configured but this session is a local
    /// Chromium (Hermes' `fallback_reason`), told once with the first result.
    pub(crate) fallback: Option<String>,
    /// The last snapshot, for a `browser_snapshot` on an unchanged page
    /// (see `tools/snapshot_tool.rs`).
    pub(crate) snap_cache: Option<SnapCache>,
    /// `browser.record_sessions`: the WebM being written (see `recording.rs`).
    pub(crate) recording: Option<recording::Recording>,
}

/// What a session runs on.
pub(crate) enum Target {
    /// Launch this Chromium.
    Launch(PathBuf),
    /// Attach to `browser.cdp_url` / `BROWSER_CDP_URL`.
    Attach(String),
    /// A cloud session created through the provider's REST API.
    Cloud(CloudSession),
}

/// Answer a JavaScript dialog.
pub(crate) async fn answer_dialog(
    page: &Page,
    accept: bool,
    prompt: Option<&str>,
) -> Result<(), CdpError> {
    let mut p = json!({"accept": accept});
    if let Some(t) = prompt {
        p["promptText"] = json!(t);
    }
    page.call("Page.handleJavaScriptDialog", p)
        .await
        .map(|_| ())
}

impl Session {
    /// Launch Chromium (or attach to a browser) and open a tab. A cloud
    /// session that cannot be used is released before the error returns.
    pub(crate) async fn start(
        target: Target,
        settings: &Settings,
        policy: BrowserPolicy,
    ) -> Result<Session, SessionError> {
        match target {
            Target::Cloud(c) => {
                let url = c.cdp_url.clone();
                match Self::start_at(Some(url), None, settings, policy).await {
                    Ok(mut s) => {
                        s.cloud = Some(c);
                        Ok(s)
                    }
                    Err(e) => {
                        c.release().await;
                        let why = match e {
                            SessionError::Attach { why, .. } => why,
                            other => other.to_string(),
                        };
                        Err(SessionError::Cloud {
                            provider: c.provider.display(),
                            why,
                        })
                    }
                }
            }
            Target::Attach(u) => Self::start_at(Some(u), None, settings, policy).await,
            Target::Launch(exe) => Self::start_at(None, Some(exe), settings, policy).await,
        }
    }

    async fn start_at(
        cdp_url: Option<String>,
        exe: Option<PathBuf>,
        settings: &Settings,
        policy: BrowserPolicy,
    ) -> Result<Session, SessionError> {
        // No command waits longer than any tool would.
        let request_timeout =
            settings.command_timeout.max(settings.navigation_timeout) + Duration::from_secs(5);
        let t0 = Instant::now();
        let (process, proxy, url, attached) = match cdp_url {
            Some(u) => (None, None, u, true),
            None => {
                let exe = exe.ok_or(SessionError::NoExecutable)?;
                let headed = settings.headed;
                let proxy = GuardProxy::start(policy.clone())
                    .await
                    .map_err(SessionError::Proxy)?;
                let flags = proxy.chromium_flags();
                let p =
                    tokio::task::spawn_blocking(move || launch::spawn_chrome(&exe, headed, &flags))
                        .await??;
                // Pages never reach the browser's own DevTools port.
                proxy.forbid_devtools(&p.ws_url);
                let u = p.ws_url.clone();
                (Some(p), Some(proxy), u, false)
            }
        };
        let connected = tokio::time::timeout(
            Duration::from_secs(20),
            Browser::connect(&url, request_timeout),
        )
        .await;
        let browser = match connected {
            Ok(Ok(b)) => b,
            other => {
                if let Some(p) = process {
                    p.terminate();
                }
                let why = match other {
                    Ok(Err(e)) => e.to_string(),
                    _ => "timed out".into(),
                };
                return Err(if attached {
                    SessionError::Attach { url, why }
                } else {
                    SessionError::Connect { why }
                });
            }
        };
        let connected_after = t0.elapsed();
        let tab = match open_tab(&browser, &policy, settings).await {
            Ok(t) => t,
            Err(e) => {
                if !attached {
                    let _ = tokio::time::timeout(Duration::from_secs(2), browser.close()).await;
                }
                browser.abort();
                if let Some(p) = process {
                    let _ = tokio::task::spawn_blocking(move || p.terminate()).await;
                }
                return Err(e);
            }
        };
        tracing::debug!(
            "browser: connected after {connected_after:?}, tab ready after {:?}",
            t0.elapsed()
        );
        Ok(Session {
            browser,
            process,
            _proxy: proxy,
            tab,
            background: Vec::new(),
            policy,
            refs: RefTable::default(),
            frames: Frames::default(),
            last_used: Instant::now(),
            first_nav_done: false,
            fresh_tab: false,
            attached,
            cloud: None,
            fallback: None,
            snap_cache: None,
            recording: None,
        })
    }

    /// Whether the tab's page still runs: a trivial evaluation answers within
    /// `within`. A page whose script never yields (`while(true){}`) does not;
    /// any other answer (an error included) counts as alive, and so does a
    /// page held by an open dialog or a crashed tab (handled on its own).
    pub(crate) async fn responsive(&self, within: Duration) -> bool {
        match self.probe(within) {
            Some(p) => p.await,
            None => true,
        }
    }

    /// [`Session::responsive`] as a future that holds the tab's handles, so
    /// that it can run beside a tool on the same session (the probe goes out
    /// first, and the page answers in order); `None` when there is nothing
    /// to ask (an open dialog holds the page on purpose; a crash is handled
    /// on its own). A dialog that opens while the probe waits counts as an
    /// answer; a renderer that crashes meanwhile does not (its caller then
    /// handles the crash, as it would have found it at the start).
    pub(crate) fn probe(
        &self,
        within: Duration,
    ) -> Option<impl std::future::Future<Output = bool> + Send + 'static> {
        let state = self.tab.state.clone();
        if !state.pending().is_empty() || state.crashed.load(Ordering::SeqCst) {
            return None;
        }
        let page = self.tab.page.clone();
        Some(async move {
            let opened = state.dialog_opened.notified();
            tokio::pin!(opened);
            opened.as_mut().enable();
            if !state.pending().is_empty() {
                return true;
            }
            let probe = page.call(
                "Runtime.evaluate",
                json!({"expression": "1", "returnByValue": true}),
            );
            // The crash handler wakes `opened` too.
            let answered = tokio::select! {
                r = tokio::time::timeout(within, probe) => r.is_ok(),
                _ = &mut opened => true,
            };
            answered && !state.crashed.load(Ordering::SeqCst)
        })
    }

    /// Abandon a page that stopped answering: interrupt its script
    /// (`Runtime.terminateExecution`, served off the page's busy thread),
    /// close the tab from the browser's side (which needs nothing from the
    /// page) and continue in a fresh tab.
    pub(crate) async fn abandon_tab(&mut self, settings: &Settings) -> Result<(), SessionError> {
        tracing::warn!("browser: the page stopped responding; abandoning its tab");
        let page = self.tab.page.clone();
        let _ = tokio::time::timeout(
            Duration::from_secs(2),
            page.call("Runtime.terminateExecution", json!({})),
        )
        .await;
        let tab = open_tab(&self.browser, &self.policy, settings).await?;
        let old = std::mem::replace(&mut self.tab, tab);
        old.abort_tasks();
        let _ = tokio::time::timeout(Duration::from_secs(5), old.page.close_target()).await;
        self.refs.invalidate();
        self.frames = Frames::default();
        self.snap_cache = None;
        self.fresh_tab = true;
        Ok(())
    }

    /// Replace a crashed tab with a fresh one.
    pub(crate) async fn replace_tab(&mut self, settings: &Settings) -> Result<(), SessionError> {
        let tab = open_tab(&self.browser, &self.policy, settings).await?;
        let old = std::mem::replace(&mut self.tab, tab);
        for t in &old.tasks {
            t.abort();
        }
        let _ = tokio::time::timeout(Duration::from_secs(2), old.page.close()).await;
        self.refs.invalidate();
        self.frames = Frames::default();
        Ok(())
    }

    /// Continue in a new tab at `url` (a tab the page opened; see
    /// `popup.rs`). The previous tab stays open in the background. Returns a
    /// warning when the page did not finish loading in time.
    pub(crate) async fn open_tab_at(
        &mut self,
        settings: &Settings,
        url: &str,
    ) -> Result<Option<String>, SessionError> {
        let tab = open_tab(&self.browser, &self.policy, settings).await?;
        let mut loads = tab.state.loads.subscribe();
        loads.borrow_and_update();
        let nav = navigate_fresh_tab(&tab, url, settings.navigation_timeout).await;
        let old = std::mem::replace(&mut self.tab, tab);
        self.background.push(old);
        if self.background.len() > MAX_BACKGROUND_TABS {
            let t = self.background.remove(0);
            t.close().await;
        }
        self.refs.invalidate();
        self.frames = Frames::default();
        match nav {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => return Err(SessionError::Navigator(e)),
            Err(_) => return Ok(Some("The new tab did not answer in time.".into())),
        }
        let loaded = tokio::time::timeout(settings.navigation_timeout, loads.changed()).await;
        Ok(loaded
            .is_err()
            .then(|| "The new tab's page did not finish loading in time.".into()))
    }

    /// The browser's connection (for sessions of our own).
    pub(crate) fn connection(&self) -> &Connection {
        self.browser.connection()
    }
    /// Close the tab and the browser; for a launched browser kill its whole
    /// process group and remove the profile. Never fails.
    pub(crate) async fn close(mut self) {
        // The recording first: its last frames come from the open page.
        if let Some(r) = self.recording.take() {
            r.stop().await;
        }
        for t in &self.tab.tasks {
            t.abort();
        }
        for t in std::mem::take(&mut self.background) {
            if self.attached {
                t.close().await;
            } else {
                t.abort_tasks();
            }
        }
        if self.attached {
            let page = self.tab.page.clone();
            let _ = tokio::time::timeout(Duration::from_secs(2), page.close()).await;
        } else {
            let _ = tokio::time::timeout(Duration::from_secs(2), self.browser.close()).await;
        }
        self.browser.abort();
        if let Some(p) = self.process.take() {
            let _ = tokio::task::spawn_blocking(move || p.terminate()).await;
        }
        if let Some(c) = self.cloud.take() {
            c.release().await;
        }
    }

    pub(crate) fn process_id(&self) -> Option<i32> {
        self.process.as_ref().map(|p| p.pid)
    }

    /// Whether the browser is still there (its CDP connection open and, for a
    /// launched browser, its process running).
    pub(crate) fn is_alive(&mut self) -> bool {
        if self.browser.is_closed() {
            return false;
        }
        match self.process.as_mut() {
            Some(p) => matches!(p.child.try_wait(), Ok(None)),
            None => true,
        }
    }
}

/// At most this many earlier tabs stay open behind the current one.
const MAX_BACKGROUND_TABS: usize = 4;

impl Tab {
    fn abort_tasks(&self) {
        for t in &self.tasks {
            t.abort();
        }
    }

    async fn close(self) {
        self.abort_tasks();
        let _ = tokio::time::timeout(Duration::from_secs(2), self.page.close()).await;
    }
}

impl TabState {
    fn new(main_frame: String) -> Self {
        TabState {
            console: Mutex::new(Vec::new()),
            errors: Mutex::new(Vec::new()),
            pending_dialogs: Mutex::new(Vec::new()),
            handled_dialogs: Mutex::new(Vec::new()),
            dialog_opened: Notify::new(),
            crashed: AtomicBool::new(false),
            doc_gen: AtomicU64::new(0),
            loading: watch::channel(false).0,
            loads: watch::channel(0).0,
            blocked: Mutex::new(None),
            main_frame,
            popups: Mutex::new(Vec::new()),
            next_dialog: AtomicU64::new(1),
        }
    }

    pub(crate) fn doc_gen(&self) -> u64 {
        self.doc_gen.load(Ordering::SeqCst)
    }

    pub(crate) fn pending(&self) -> Vec<PendingDialog> {
        self.pending_dialogs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

/// `Page.navigate` on a tab we just created. Rarely (seen under load, cause
/// not found) a fresh tab's first navigation never commits and Chromium
/// never answers; when nothing has committed after a few seconds the
/// navigation is stopped and sent once more, within the same overall time.
pub(crate) async fn navigate_fresh_tab(
    tab: &Tab,
    url: &str,
    total: Duration,
) -> Result<Result<serde_json::Value, NavError>, tokio::time::error::Elapsed> {
    const FIRST_TRY: Duration = Duration::from_secs(8);
    let started = std::time::Instant::now();
    let gen_before = tab.state.doc_gen();
    let first = tokio::time::timeout(
        FIRST_TRY.min(total),
        tab.nav.call("Page.navigate", json!({"url": url})),
    )
    .await;
    match first {
        Err(_) if tab.state.doc_gen() == gen_before && total > FIRST_TRY => {
            tracing::debug!("browser: first navigation of a new tab did not commit; retrying");
            let _ = tab.nav.call("Page.stopLoading", json!({})).await;
            let left = total.saturating_sub(started.elapsed());
            tokio::time::timeout(left, tab.nav.call("Page.navigate", json!({"url": url}))).await
        }
        other => other,
    }
}

/// A new tab with its event tasks and its navigation session. Used at
/// start, after a crash, and for a tab the page opened.
async fn open_tab(
    browser: &Browser,
    policy: &BrowserPolicy,
    settings: &Settings,
) -> Result<Tab, SessionError> {
    let page = tokio::time::timeout(settings.command_timeout, browser.new_page())
        .await
        .map_err(|_| SessionError::TabTimeout)?
        .map_err(SessionError::OpenTab)?;
    let state = Arc::new(TabState::new(page.target_id().to_string()));
    let mut tasks = events::watch_tab(&page, &state);
    tasks.push(events::guard_requests(&page, &state, policy));
    tasks.push(events::handle_dialogs(&page, &state, settings));
    // Preparing the tab and attaching the navigation session are
    // independent: both go out at once.
    let prepared = async {
        tokio::time::timeout(settings.command_timeout, prepare_tab(&page))
            .await
            .map_err(|_| SessionError::PrepareTimeout)?
            .map_err(SessionError::Prepare)
    };
    let attached = async {
        tokio::time::timeout(
            settings.command_timeout,
            Navigator::attach(browser.connection(), page.target_id()),
        )
        .await
        .map_err(|_| SessionError::AttachTimeout)?
        .map_err(SessionError::Navigator)
    };
    let ((), nav) = futures::try_join!(prepared, attached)?;
    Ok(Tab {
        page,
        state,
        nav,
        tasks,
    })
}

/// Turn on what the tools rely on beyond Page and Runtime events: crash
/// events (Inspector), the pop-up binding and its script (see `popup.rs`),
/// and pausing every document request (Fetch) for the URL policy. The
/// commands are sent together (Chromium runs a session's commands in
/// order) and all must succeed.
async fn prepare_tab(page: &Page) -> Result<(), CdpError> {
    futures::try_join!(
        page.call("Inspector.enable", json!({})),
        page.call("Runtime.addBinding", json!({"name": popup::BINDING})),
        page.call(
            "Page.addScriptToEvaluateOnNewDocument",
            json!({"source": popup::POPUP_JS}),
        ),
        page.call(
            "Fetch.enable",
            json!({"patterns": [{"urlPattern": "*", "resourceType": "Document", "requestStage": "Request"}]}),
        ),
    )?;
    Ok(())
}
