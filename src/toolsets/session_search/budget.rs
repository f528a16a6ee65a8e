//! How long one `session_search` call may keep SQLite busy, and whether its
//! caller still waits for it.
//!
//! A `state.db` is a file anyone can hand us: a recursive view, a cycle of
//! sessions or a damaged page can make a statement run for ever. Each call
//! gets a [`Budget`]: a deadline ([`SESSION_SEARCH_CALL`], scaled in tests)
//! and a cancel flag the server's future sets when it is dropped (MCP
//! `notifications/cancelled`, shutdown). SQLite's progress handler asks
//! [`Budget::should_stop`] every few thousand VM steps and interrupts the
//! statement when either has happened; every later statement of the call
//! stops at once, and the call then answers with [`Budget::stopped`]'s text
//! instead of whatever partial result it reached.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::hermes::deadlines::SESSION_SEARCH_CALL;

/// One call's deadline and cancel flag, shared with SQLite's progress handler.
#[derive(Debug, Clone)]
pub(crate) struct Budget(Arc<State>);

#[derive(Debug)]
struct State {
    deadline: Instant,
    cancelled: AtomicBool,
    /// A statement was interrupted because of this budget.
    tripped: AtomicBool,
}

/// Why a call was stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    Deadline,
    Cancelled,
}

impl Budget {
    /// A budget of [`SESSION_SEARCH_CALL`] from now.
    pub(crate) fn new() -> Budget {
        Budget(Arc::new(State {
            deadline: Instant::now() + SESSION_SEARCH_CALL.get(),
            cancelled: AtomicBool::new(false),
            tripped: AtomicBool::new(false),
        }))
    }

    /// The caller no longer waits: stop at the next progress check.
    pub(crate) fn cancel(&self) {
        self.0.cancelled.store(true, Ordering::Relaxed);
    }

    /// The progress handler's question: `true` interrupts the statement.
    pub(crate) fn should_stop(&self) -> bool {
        let stop = self.0.cancelled.load(Ordering::Relaxed) || Instant::now() >= self.0.deadline;
        if stop {
            self.0.tripped.store(true, Ordering::Relaxed);
        }
        stop
    }

    /// Whether (and why) a statement of this call was interrupted.
    pub(crate) fn stopped(&self) -> Option<Stop> {
        if !self.0.tripped.load(Ordering::Relaxed) {
            return None;
        }
        Some(match self.0.cancelled.load(Ordering::Relaxed) {
            true => Stop::Cancelled,
            false => Stop::Deadline,
        })
    }
}

/// Cancels its budget when dropped: held by the call's future, so a future
/// the server drops (cancel, shutdown) stops the blocking work too.
pub(crate) struct CancelOnDrop(pub(crate) Budget);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}
