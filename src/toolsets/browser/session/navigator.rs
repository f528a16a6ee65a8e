//! A session of our own on a target, for `Page.navigate` on the tab and for
//! commands to an out-of-process frame.
//!
//! `Page.navigate` answers as Chromium does (when the navigation commits or
//! fails) and our timeouts decide how long to wait; errors read as Chromium
//! words them. The session is attached on the browser's connection and
//! detached when the navigator is dropped.

use serde_json::Value;

use crate::toolsets::browser::cdp::{CdpError, Connection};

/// Why the session could not be attached or a command on it failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum NavError {
    #[error("cannot attach to the tab: {0}")]
    Attach(String),
    #[error("cannot attach to the tab: no session id")]
    NoSession,
    /// Chromium's own error message for the command.
    #[error("{0}")]
    Protocol(String),
    #[error("the browser connection closed")]
    BrowserClosed,
    #[error(transparent)]
    Cdp(CdpError),
}

impl From<CdpError> for NavError {
    fn from(e: CdpError) -> Self {
        match e {
            CdpError::Chrome { message, .. } => NavError::Protocol(message),
            CdpError::Closed => NavError::BrowserClosed,
            other => NavError::Cdp(other),
        }
    }
}

pub(crate) struct Navigator {
    conn: Connection,
    session: String,
}

impl Navigator {
    /// Attach a session of our own to target `target_id`.
    pub(crate) async fn attach(conn: &Connection, target_id: &str) -> Result<Self, NavError> {
        let session = conn.attach(target_id).await.map_err(|e| match e {
            CdpError::Chrome { message, .. } => NavError::Attach(message),
            CdpError::NoSession => NavError::NoSession,
            other => other.into(),
        })?;
        Ok(Navigator {
            conn: conn.clone(),
            session,
        })
    }

    /// Send one command on the navigation session.
    pub(crate) async fn call(&self, method: &str, params: Value) -> Result<Value, NavError> {
        Ok(self.conn.call(Some(&self.session), method, params).await?)
    }
}

impl Drop for Navigator {
    fn drop(&mut self) {
        self.conn.detach(&self.session);
    }
}
