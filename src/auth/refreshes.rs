//! Every token refresh in flight, counted in one place so that `serve` (and
//! `tools`) can wait for them before the runtime goes away.
//!
//! The ChatGPT, xAI and Nous refresh tokens are single-use: once the token
//! endpoint has answered, the old token is dead and only the stored
//! successor keeps the user signed in (hermes_cli/auth.py
//! `refresh_codex_oauth_pure`, `refresh_xai_oauth_pure`,
//! `_refresh_access_token`). So every refresh runs as its own task
//! ([`detached`]): a cancelled tool call cannot stop it halfway. And the
//! stretch from spending the refresh token to storing what it bought is
//! marked ([`begin`] → [`Spending`]): at shutdown [`drain`] refuses to start
//! new stretches and waits, bounded, for those under way, so the process does
//! not exit between the token endpoint's answer and the write to `auth.json`.

use std::sync::Mutex;
use std::time::{Duration, Instant};

struct State {
    /// Shutdown has begun: no refresh token is spent any more.
    closing: bool,
    /// Refreshes between spending the token and storing its successor.
    spending: usize,
}

/// The count and the shutdown flag, under one lock so that no refresh can
/// begin after [`drain`] has looked.
struct Registry(Mutex<State>);

static REGISTRY: Registry = Registry::new();

/// The process is shutting down: a refresh not yet started is not started
/// (its refresh token stays unspent and valid).
#[derive(Debug, thiserror::Error)]
#[error(
    "hermes-mcp is shutting down; the sign-in was not refreshed (its refresh token is unspent)"
)]
pub struct ShuttingDown;

/// One refresh between spending its token and storing the successor; shutdown
/// waits while it lives.
#[must_use = "the refresh counts as under way only while this is held"]
pub struct Spending(&'static Registry);

impl Drop for Spending {
    fn drop(&mut self) {
        let mut s = self.0.state();
        s.spending = s.spending.saturating_sub(1);
    }
}

impl Registry {
    const fn new() -> Self {
        Registry(Mutex::new(State {
            closing: false,
            spending: 0,
        }))
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn begin(&'static self) -> Result<Spending, ShuttingDown> {
        let mut s = self.state();
        if s.closing {
            return Err(ShuttingDown);
        }
        s.spending += 1;
        Ok(Spending(self))
    }

    async fn drain(&self, limit: Duration) -> usize {
        let started = {
            let mut s = self.state();
            s.closing = true;
            s.spending
        };
        if started > 0 {
            tracing::info!("waiting for {started} sign-in refresh(es) to be stored before exiting");
        }
        let end = Instant::now() + limit;
        loop {
            let left = self.state().spending;
            if left == 0 || Instant::now() >= end {
                if left > 0 {
                    tracing::warn!(
                        "exiting with {left} sign-in refresh(es) unfinished after {}s",
                        limit.as_secs()
                    );
                }
                return left;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// Mark a refresh about to spend its token (the caller holds Hermes' lock and
/// has re-read the store). Refused once shutdown has begun.
pub fn begin() -> Result<Spending, ShuttingDown> {
    REGISTRY.begin()
}

/// Run `work` (a whole refresh) as its own task so that the caller being
/// cancelled or timing out does not interrupt it; its result, or the task's
/// panic, comes back to the caller if it is still waiting.
pub async fn detached<T: Send + 'static>(
    work: impl std::future::Future<Output = T> + Send + 'static,
) -> Result<T, tokio::task::JoinError> {
    tokio::spawn(work).await
}

/// Shutdown: refuse new refreshes, then wait until every refresh under way
/// has stored its result, or `limit` has passed. Returns how many were still
/// under way at the end (0 when all finished). Must run while the runtime
/// the refreshes run on is still alive.
pub async fn drain(limit: Duration) -> usize {
    REGISTRY.drain(limit).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn drain_waits_for_spending_and_then_refuses_new_refreshes() {
        // A registry of the test's own: the process-wide one stays open for
        // the other tests.
        let reg: &'static Registry = Box::leak(Box::new(Registry::new()));
        let held = reg.begin().expect("open");
        let waiter = tokio::spawn(reg.drain(Duration::from_secs(30)));
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(
            !waiter.is_finished(),
            "drain returned while a refresh was under way"
        );
        assert!(reg.begin().is_err(), "a refresh began after shutdown had");
        drop(held);
        assert_eq!(waiter.await.expect("drain"), 0);
        let late = reg.state().spending;
        assert_eq!(late, 0);
    }
}
