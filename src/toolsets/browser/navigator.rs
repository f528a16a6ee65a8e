//! `Page.navigate` over a second, raw CDP connection.
//!
//! chromiumoxide routes every `Page.navigate` sent on its connection through
//! its own navigation queue: the answer comes only after the page's load
//! event, one navigation at a time, each with a fixed 30 s deadline. A page
//! that never finishes loading would then delay every later navigation. On
//! our own flat session to the same tab, `Page.navigate` answers as Chromium
//! does (when the navigation commits or fails) and our timeouts decide.

use std::collections::HashMap;

use chromiumoxide::Connection;
use chromiumoxide::cdp::browser_protocol::target::SessionId;
use chromiumoxide::error::CdpError;
use chromiumoxide::types::{CallId, CdpJsonEventMessage, Message};
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::protocol::{Attached, decode};

/// Why the navigation connection could not be opened or a command on it
/// failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum NavError {
    #[error("cannot open a CDP connection: {0}")]
    Connect(CdpError),
    #[error("cannot attach to the tab: {0}")]
    Attach(String),
    #[error("cannot attach to the tab: no session id")]
    NoSession,
    #[error("CDP connection closed while attaching")]
    ClosedWhileAttaching,
    /// Chromium's own error message for the command.
    #[error("{0}")]
    Protocol(String),
    #[error(transparent)]
    Submit(serde_json::Error),
    #[error("the browser connection closed")]
    BrowserClosed,
    #[error("the navigation connection is closed")]
    Closed,
}

type Reply = oneshot::Sender<Result<Value, NavError>>;

pub(crate) struct Navigator {
    tx: mpsc::UnboundedSender<(&'static str, Value, Reply)>,
    task: JoinHandle<()>,
}

impl Navigator {
    /// Connect to `ws_url` and attach to target `target_id`.
    pub(crate) async fn connect(ws_url: &str, target_id: &str) -> Result<Self, NavError> {
        let mut conn = Connection::<CdpJsonEventMessage>::connect(ws_url)
            .await
            .map_err(NavError::Connect)?;
        let attach = conn
            .submit_command(
                "Target.attachToTarget".into(),
                None,
                json!({"targetId": target_id, "flatten": true}),
            )
            .map_err(NavError::Submit)?;
        let session: String = loop {
            match conn.next().await {
                Some(Ok(Message::Response(r))) if r.id == attach => {
                    if let Some(e) = r.error {
                        return Err(NavError::Attach(e.message));
                    }
                    let attached: Attached = decode(r.result.unwrap_or_default());
                    break attached.session_id.ok_or(NavError::NoSession)?;
                }
                Some(_) => continue,
                None => return Err(NavError::ClosedWhileAttaching),
            }
        };
        let (tx, mut rx) = mpsc::unbounded_channel::<(&'static str, Value, Reply)>();
        let task = tokio::spawn(async move {
            let session = SessionId::new(session);
            let mut waiting: HashMap<CallId, Reply> = HashMap::new();
            enum Ev {
                Req(Option<(&'static str, Value, Reply)>),
                Msg(Option<Result<Message<CdpJsonEventMessage>, chromiumoxide::error::CdpError>>),
            }
            loop {
                let ev = {
                    let next = conn.next();
                    let req = rx.recv();
                    tokio::select! {
                        r = req => Ev::Req(r),
                        m = next => Ev::Msg(m),
                    }
                };
                match ev {
                    Ev::Req(None) => return,
                    Ev::Req(Some((method, params, reply))) => {
                        match conn.submit_command(method.into(), Some(session.clone()), params) {
                            Ok(id) => {
                                waiting.insert(id, reply);
                            }
                            Err(e) => {
                                let _ = reply.send(Err(NavError::Submit(e)));
                            }
                        }
                    }
                    Ev::Msg(None) => {
                        for (_, r) in waiting.drain() {
                            let _ = r.send(Err(NavError::BrowserClosed));
                        }
                        return;
                    }
                    Ev::Msg(Some(Ok(Message::Response(r)))) => {
                        if let Some(reply) = waiting.remove(&r.id) {
                            let _ = reply.send(match r.error {
                                Some(e) => Err(NavError::Protocol(e.message)),
                                None => Ok(r.result.unwrap_or(Value::Null)),
                            });
                        }
                    }
                    Ev::Msg(Some(_)) => {}
                }
            }
        });
        Ok(Navigator { tx, task })
    }

    /// Send one command on the navigation session.
    pub(crate) async fn call(
        &self,
        method: &'static str,
        params: Value,
    ) -> Result<Value, NavError> {
        let (tx, rx) = oneshot::channel();
        self.tx
            .send((method, params, tx))
            .map_err(|_| NavError::Closed)?;
        rx.await.map_err(|_| NavError::Closed)?
    }
}

impl Drop for Navigator {
    fn drop(&mut self) {
        self.task.abort();
    }
}
