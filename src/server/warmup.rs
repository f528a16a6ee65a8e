//! The warm-up after the first `tools/list`: what first calls would build
//! (the call log's redaction patterns, the [`Toolset::warm_up`] of each
//! listed toolset), on a blocking thread, while the client's model is still
//! composing its first request.
//!
//! Memory is why it runs step by step. Each step's code is given back before
//! the next (not after a step that did nothing to speak of, not worth the
//! walk over the binary's pages), so what is resident at once is one step's
//! code, not the whole warm-up's; the freed heap goes at the end ([`idle`]).
//! And a call that comes while the warm-up runs pauses it: the call builds
//! what it needs itself, and its work resident beside the warm-up's was the
//! peak of a session whose calls come right after the tool list
//! (tools/bench_startup.py, calls at once: 0.4–1.0 MiB of peak). The steps
//! left run once calls are quiet, when the idle give-back would
//! ([`idle::Idle::when_quiet`]).

use std::collections::VecDeque;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use super::{Inner, idle, untrusted};

/// One step of the warm-up.
#[derive(Clone, Copy)]
enum Step {
    /// The call log's patterns (redaction, the untrusted-content scan).
    Patterns,
    /// The warm-up of the toolset at this index of `Inner::toolsets`.
    Toolset(usize),
}

/// Start the warm-up of `toolsets` (indexes, in listing order) on a blocking
/// thread. A call started after this (after the tool list) pauses it. Needs a
/// tokio runtime.
pub(super) fn start(inner: &Arc<Inner>, toolsets: Vec<usize>) {
    let steps = std::iter::once(Step::Patterns)
        .chain(toolsets.into_iter().map(Step::Toolset))
        .collect();
    let seen = inner.idle.calls_started();
    let weak = Arc::downgrade(inner);
    // Before the warm-up's thread allocates: it shares an arena too.
    idle::settle_arenas();
    tokio::task::spawn_blocking(move || run(weak, steps, seen));
}

/// Run `steps` on this thread while no call has started since `seen` (the
/// calls started when they were scheduled); then give back what they left.
/// After a call has started, the steps left wait for quiet.
fn run(weak: Weak<Inner>, mut steps: VecDeque<Step>, seen: u64) {
    let Some(inner) = weak.upgrade() else {
        return;
    };
    let started = Instant::now();
    idle::release_clean_pages_now("warm-up start");
    while let Some(&step) = steps.front() {
        if inner.idle.calls_started() != seen {
            tracing::debug!("warm-up paused by a call, {} steps left", steps.len());
            // What the steps so far left goes now, as at the end: the
            // call faults back only what it runs.
            inner.idle.give_back("warm-up paused");
            let idle = inner.idle.clone();
            drop(inner);
            idle.when_quiet(Box::new(move || resume(weak, steps)));
            return;
        }
        steps.pop_front();
        let (name, t) = (step_name(&inner, step), Instant::now());
        match step {
            Step::Patterns => {
                crate::redact::warm();
                untrusted::warm();
            }
            Step::Toolset(i) => inner.toolsets[i].warm_up(&inner.ctx),
        }
        let took = t.elapsed();
        tracing::debug!("warm-up of {name}: {took:?}");
        if took >= Duration::from_micros(100) {
            idle::release_clean_pages_now(name);
        }
    }
    tracing::debug!("warm-up done in {:?}", started.elapsed());
    inner.idle.give_back("warm-up end");
}

/// The steps a call paused, once calls are quiet (a call from now on
/// pauses them again).
fn resume(weak: Weak<Inner>, steps: VecDeque<Step>) {
    let Some(seen) = weak.upgrade().map(|i| i.idle.calls_started()) else {
        return;
    };
    tracing::debug!("warm-up resumed, {} steps left", steps.len());
    run(weak, steps, seen);
}

/// The step's name in the debug log.
fn step_name(inner: &Inner, step: Step) -> &'static str {
    match step {
        Step::Patterns => "call log patterns",
        Step::Toolset(i) => inner.toolsets[i].name(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hermes::Context;
    use crate::hermes::context::test_ctx;
    use crate::server::HermesServer;
    use crate::server::output::ToolOutput;
    use crate::server::toolset::{BoxFuture, ToolCall, ToolDef, ToolEntry, Toolset};
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
    use std::sync::mpsc::{Receiver, Sender, TryRecvError};

    const LONG: Duration = Duration::from_secs(30);

    /// A toolset whose warm-up says that it runs and whether a call was in
    /// flight then; with `go`, it waits for the test's word first.
    struct Warms {
        name: &'static str,
        ran: Sender<(&'static str, bool)>,
        go: Option<Mutex<Receiver<()>>>,
        call_open: Arc<AtomicBool>,
    }

    impl Toolset for Warms {
        fn name(&self) -> &'static str {
            self.name
        }
        fn defs(&self) -> &'static [ToolDef] {
            &[]
        }
        fn resolve(&self, _ctx: &Context, _def: &'static ToolDef) -> ToolEntry {
            unreachable!("no tools")
        }
        fn call<'a>(&'a self, _ctx: &'a Context, _call: ToolCall) -> BoxFuture<'a, ToolOutput> {
            Box::pin(async { ToolOutput::error("no tools") })
        }
        fn warm_up(&self, _ctx: &Context) {
            let _ = self.ran.send((self.name, self.call_open.load(SeqCst)));
            if let Some(go) = &self.go {
                go.lock().unwrap().recv_timeout(LONG).unwrap();
            }
        }
    }

    /// A call that starts during the warm-up pauses it after the step under
    /// way; the steps left run once the call has ended and calls are quiet.
    #[test]
    fn a_call_pauses_the_warm_up_until_calls_are_quiet() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let _in_rt = rt.enter();
        let (ran, seen) = std::sync::mpsc::channel();
        let (go, wait) = std::sync::mpsc::channel();
        let call_open = Arc::new(AtomicBool::new(false));
        let toolset = |name, go| -> Box<dyn Toolset> {
            Box::new(Warms {
                name,
                ran: ran.clone(),
                go,
                call_open: call_open.clone(),
            })
        };
        let toolsets = vec![
            toolset("first", Some(Mutex::new(wait))),
            toolset("second", None),
        ];
        let mut server = HermesServer::new(test_ctx("", &[]), toolsets);
        let inner = Arc::get_mut(&mut server.inner).unwrap();
        inner.idle = Arc::new(idle::Idle::new(Duration::ZERO));
        let idle = server.inner.idle.clone();

        start(&server.inner, vec![0, 1]);
        assert_eq!(seen.recv_timeout(LONG), Ok(("first", false)));
        call_open.store(true, SeqCst);
        let call = idle.call();
        go.send(()).unwrap();
        // The warm-up stops after the first toolset's step and leaves the
        // rest to the end of calls.
        let paused = Instant::now();
        while !idle.has_deferred() {
            assert!(paused.elapsed() < LONG, "the warm-up did not pause");
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(seen.try_recv(), Err(TryRecvError::Empty));
        call_open.store(false, SeqCst);
        drop(call);
        assert_eq!(seen.recv_timeout(LONG), Ok(("second", false)));
    }
}
