//! Per-provider request pacing: a minimum interval between requests (Brave's
//! free tier allows one per second) and a shared back-off after a 429.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use tokio::time::Instant;

type Slot = Arc<tokio::sync::Mutex<Instant>>;

static SLOTS: LazyLock<Mutex<HashMap<String, Slot>>> = LazyLock::new(Default::default);

fn slot(provider: &str) -> Slot {
    let mut m = SLOTS.lock().unwrap_or_else(|e| e.into_inner());
    m.entry(provider.to_string())
        .or_insert_with(|| Arc::new(tokio::sync::Mutex::new(Instant::now())))
        .clone()
}

/// Wait until `provider` may be called again, then reserve the next slot
/// `min_interval` later. Calls to one provider are serialised in arrival order.
pub(crate) async fn acquire(provider: &str, min_interval: Duration) {
    let s = slot(provider);
    let mut next = s.lock().await;
    let now = Instant::now();
    if *next > now {
        tokio::time::sleep_until(*next).await;
    }
    *next = Instant::now() + min_interval;
}

/// Push the provider's next slot out by `wait` (a 429's `Retry-After`).
pub(crate) fn defer(provider: &str, wait: Duration) {
    let s = slot(provider);
    let target = Instant::now() + wait;
    if let Ok(mut next) = s.try_lock() {
        if *next < target {
            *next = target;
        }
    } else {
        // Someone is waiting on the slot; they will see the deferral next time.
        tokio::spawn(async move {
            let mut next = s.lock().await;
            if *next < target {
                *next = target;
            }
        });
    }
}
