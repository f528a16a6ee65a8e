//! A resolve pass: one question asked of every tool at once (`tools/list`,
//! the server's `instructions`, `tools`, `doctor`'s provider list), during
//! which what lower layers read of Hermes' files may be read once and kept.
//!
//! Why here: the server opens the pass and the auth layer keeps the
//! reads ([`crate::auth::snapshot`]); both may import `hermes`, neither
//! the other. A pass belongs to its thread and ends with its closure.

use std::cell::Cell;

thread_local! {
    /// The open pass's number on this thread (0: none).
    static OPEN: Cell<u64> = const { Cell::new(0) };
    static LAST: Cell<u64> = const { Cell::new(0) };
}

/// Runs `f` inside a pass; a nested call joins the open one.
pub fn run<R>(f: impl FnOnce() -> R) -> R {
    struct End;
    impl Drop for End {
        fn drop(&mut self) {
            OPEN.with(|o| o.set(0));
        }
    }
    if OPEN.with(Cell::get) != 0 {
        return f();
    }
    let n = LAST.with(|l| {
        l.set(l.get() + 1);
        l.get()
    });
    OPEN.with(|o| o.set(n));
    let _end = End;
    f()
}

/// The open pass on this thread, if any: a number no other pass of the
/// thread has had.
pub fn current() -> Option<u64> {
    Some(OPEN.with(Cell::get)).filter(|&n| n != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_nest_end_with_a_panic_and_are_numbered_anew() {
        assert_eq!(current(), None);
        let (a, b) = run(|| (current(), run(current)));
        assert!(a.is_some());
        assert_eq!(a, b, "a nested pass joins the open one");
        assert_eq!(current(), None);
        let c = run(current);
        assert!(c.is_some() && c != a);
        let r = std::panic::catch_unwind(|| run(|| panic!("inside a pass")));
        assert!(r.is_err());
        assert_eq!(current(), None, "the pass ended with the panic");
    }
}
