//! The event tasks of a tab: they keep its [`TabState`] current (console
//! output, uncaught errors, a crashed renderer, navigations and loading,
//! pop-ups, load events), apply the URL policy to every document request,
//! and answer or hold JavaScript dialogs as `browser.dialog_policy` says.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use super::{ConsoleMessage, PageError, PendingDialog, TabState, answer_dialog, popup};
use crate::toolsets::browser::cdp::Page;
use crate::toolsets::browser::cdp::protocol::{
    BindingCalled, ConsoleApiCalled, DialogOpening, ExceptionThrown, FrameLoading, FrameNavigated,
    RequestPaused, decode,
};
use crate::toolsets::browser::chromium::settings::{DialogPolicy, Settings};
use crate::toolsets::browser::chromium::urlcheck::{self, BrowserPolicy};

/// Console and error buffers keep at most this many entries.
const MAX_BUFFERED: usize = 1000;

fn push_capped<T>(buf: &Mutex<Vec<T>>, v: T) {
    let mut b = buf
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if b.len() >= MAX_BUFFERED {
        b.remove(0);
    }
    b.push(v);
}

/// Run `on` for every `method` event of the tab (its params read as `T`),
/// in a task of its own that ends with the connection.
fn on_event<T: DeserializeOwned + Default>(
    page: &Page,
    method: &str,
    mut on: impl FnMut(T) + Send + 'static,
) -> JoinHandle<()> {
    let mut rx = page.events(method);
    tokio::spawn(async move {
        while let Some(v) = rx.recv().await {
            on(decode(v));
        }
    })
}

/// The event tasks that keep [`TabState`] current: console output and
/// uncaught errors, a crashed renderer, main-frame navigations and loading,
/// pop-ups the page asked for, and load events.
pub(super) fn watch_tab(page: &Page, state: &Arc<TabState>) -> Vec<JoinHandle<()>> {
    let mut tasks = Vec::new();
    let st = state.clone();
    tasks.push(on_event(
        page,
        "Runtime.consoleAPICalled",
        move |ev: ConsoleApiCalled| {
            let text = ev.args.iter().map(|a| a.text()).collect::<Vec<_>>();
            let text = text.join(" ");
            push_capped(
                &st.console,
                ConsoleMessage {
                    kind: ev.kind,
                    text,
                },
            );
        },
    ));
    let st = state.clone();
    tasks.push(on_event(
        page,
        "Runtime.exceptionThrown",
        move |ev: ExceptionThrown| {
            let message = ev.message();
            push_capped(&st.errors, PageError { message });
        },
    ));
    let st = state.clone();
    tasks.push(on_event(
        page,
        "Inspector.targetCrashed",
        move |_: Value| {
            st.crashed.store(true, Ordering::SeqCst);
            st.loading.send_replace(false);
            st.dialog_opened.notify_waiters();
        },
    ));
    let st = state.clone();
    tasks.push(on_event(
        page,
        "Page.frameNavigated",
        move |ev: FrameNavigated| {
            if ev.frame.parent_id.is_none() {
                st.doc_gen.fetch_add(1, Ordering::SeqCst);
            }
        },
    ));
    for (method, loading) in [
        ("Page.frameStartedLoading", true),
        ("Page.frameStoppedLoading", false),
    ] {
        let st = state.clone();
        tasks.push(on_event(page, method, move |ev: FrameLoading| {
            if ev.frame_id == st.main_frame {
                st.loading.send_replace(loading);
            }
        }));
    }
    let st = state.clone();
    tasks.push(on_event(
        page,
        "Runtime.bindingCalled",
        move |ev: BindingCalled| {
            if ev.name == popup::BINDING {
                push_capped(&st.popups, ev.payload);
            }
        },
    ));
    let st = state.clone();
    tasks.push(on_event(page, "Page.loadEventFired", move |_: Value| {
        st.loads.send_modify(|n| *n += 1);
    }));
    tasks
}

/// The URL policy on every document request of the tab (navigations,
/// redirect hops, frames): each paused request is checked, then continued or
/// failed, and a refusal remembered for the tool's answer.
pub(super) fn guard_requests(
    page: &Page,
    state: &Arc<TabState>,
    policy: &BrowserPolicy,
) -> JoinHandle<()> {
    let (st, pg, policy) = (state.clone(), page.clone(), policy.clone());
    on_event(page, "Fetch.requestPaused", move |ev: RequestPaused| {
        tokio::spawn(decide_request(ev, st.clone(), pg.clone(), policy.clone()));
    })
}

/// Continue one paused document request, or fail it when the policy refuses
/// its URL.
async fn decide_request(ev: RequestPaused, st: Arc<TabState>, pg: Page, policy: BrowserPolicy) {
    let (url, id) = (ev.request.url, ev.request_id);
    match urlcheck::check(&url, &policy).await {
        Ok(()) => {
            let _ = pg
                .call("Fetch.continueRequest", json!({"requestId": id}))
                .await;
        }
        Err(r) => {
            tracing::info!("browser: refused to load {url}: {}", r.message);
            *st.blocked
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some((url, r));
            let _ = pg
                .call(
                    "Fetch.failRequest",
                    json!({"requestId": id, "errorReason": "BlockedByClient"}),
                )
                .await;
        }
    }
}

/// JavaScript dialogs as `browser.dialog_policy` says: answered at once
/// (auto accept / dismiss), or held for the model to answer until
/// `browser.dialog_timeout_s`.
pub(super) fn handle_dialogs(
    page: &Page,
    state: &Arc<TabState>,
    settings: &Settings,
) -> JoinHandle<()> {
    let mut rx = page.events("Page.javascriptDialogOpening");
    let (st, pg) = (state.clone(), page.clone());
    let (policy, timeout) = (settings.dialog_policy, settings.dialog_timeout);
    tokio::spawn(async move {
        while let Some(v) = rx.recv().await {
            let ev: DialogOpening = decode(v);
            match policy {
                DialogPolicy::AutoAccept | DialogPolicy::AutoDismiss => {
                    auto_answer(&pg, &st, policy == DialogPolicy::AutoAccept, ev).await;
                }
                DialogPolicy::MustRespond => hold_dialog(&pg, &st, ev, timeout),
            }
        }
    })
}

/// Answer a dialog at once and note it for the next tool result.
async fn auto_answer(pg: &Page, st: &TabState, accept: bool, ev: DialogOpening) {
    let prompt = if accept {
        ev.default_prompt.as_deref()
    } else {
        None
    };
    let _ = answer_dialog(pg, accept, prompt).await;
    push_capped(
        &st.handled_dialogs,
        json!({"type": ev.kind, "message": ev.message, "action": if accept {"accepted"} else {"dismissed"}}),
    );
}

/// Keep a dialog pending for the model (`browser_press` answers it); one
/// still pending after `timeout` is dismissed and noted.
fn hold_dialog(pg: &Page, st: &Arc<TabState>, ev: DialogOpening, timeout: Duration) {
    let id = st.next_dialog.fetch_add(1, Ordering::SeqCst);
    st.pending_dialogs
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push(PendingDialog {
            kind: ev.kind.clone(),
            message: ev.message.clone(),
            default_prompt: ev.default_prompt.unwrap_or_default(),
            id,
        });
    st.dialog_opened.notify_waiters();
    let (st, pg) = (st.clone(), pg.clone());
    let (kind, message) = (ev.kind, ev.message);
    tokio::spawn(async move {
        tokio::time::sleep(timeout).await;
        let still = {
            let mut p = st
                .pending_dialogs
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let before = p.len();
            p.retain(|d| d.id != id);
            p.len() != before
        };
        if still {
            let _ = answer_dialog(&pg, false, None).await;
            push_capped(
                &st.handled_dialogs,
                json!({"type": kind, "message": message, "action": "dismissed (no response before browser.dialog_timeout_s)"}),
            );
        }
    });
}
