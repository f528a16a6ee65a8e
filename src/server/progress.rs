//! MCP progress notifications for long calls (only when the client sent a token).

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};

#[derive(Clone, Default)]
pub struct Progress {
    target: Option<(Peer<RoleServer>, ProgressToken)>,
}

impl Progress {
    pub(crate) fn new(peer: Peer<RoleServer>, token: Option<ProgressToken>) -> Self {
        Progress {
            target: token.map(|t| (peer, t)),
        }
    }

    /// A reporter that sends nothing (direct calls from tests and benchmarks).
    pub fn none() -> Self {
        Progress { target: None }
    }

    /// Report `done` of `total` steps. Errors (client gone) are ignored.
    pub(crate) async fn report(&self, done: u64, total: Option<u64>, message: impl Into<String>) {
        if let Some((peer, token)) = &self.target {
            let mut p =
                ProgressNotificationParam::new(token.clone(), done as f64).with_message(message);
            if let Some(t) = total {
                p = p.with_total(t as f64);
            }
            if let Err(e) = peer.notify_progress(p).await {
                tracing::debug!("progress notification not sent: {e}");
            }
        }
    }
}
