//! A resolve pass: one question asked of every tool at once (`tools/list`,
//! the server's `instructions`, `tools`, `doctor`'s provider list), during
//! which the layers it runs through may keep what they read of Hermes' files
//! (the auth stores: [`crate::auth::snapshot`]).
//!
//! Why here: the server opens the pass and the auth layer keeps its reads;
//! both may import `hermes`, neither the other. A pass belongs to its thread
//! and ends with its closure (or a panic out of it); what was kept for it
//! (tokens among it) is dropped then, not left on a long-lived thread.

use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::collections::HashMap;

/// What each layer keeps for the open pass, by its type.
type Kept = HashMap<TypeId, Box<dyn Any>>;

thread_local! {
    /// The open pass on this thread, if any.
    static OPEN: RefCell<Option<Kept>> = const { RefCell::new(None) };
}

/// Runs `f` inside a pass; a nested call joins the open one.
pub fn run<R>(f: impl FnOnce() -> R) -> R {
    struct End;
    impl Drop for End {
        fn drop(&mut self) {
            let kept = OPEN.with(|o| o.borrow_mut().take());
            drop(kept);
        }
    }
    if is_open() {
        return f();
    }
    OPEN.with(|o| *o.borrow_mut() = Some(Kept::new()));
    let _end = End;
    f()
}

/// Whether a pass is open on this thread.
pub fn is_open() -> bool {
    OPEN.with(|o| o.borrow().is_some())
}

/// `f` on what this pass keeps of type `T` (`T::default()` at first use),
/// or `None` outside a pass. `f` must not call `with_kept` itself.
pub fn with_kept<T: Default + 'static, R>(f: impl FnOnce(&mut T) -> R) -> Option<R> {
    OPEN.with(|o| {
        let mut o = o.borrow_mut();
        let slot = o
            .as_mut()?
            .entry(TypeId::of::<T>())
            .or_insert_with(|| Box::new(T::default()));
        slot.downcast_mut::<T>().map(f)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Count(u32);

    fn bump() -> Option<u32> {
        with_kept(|c: &mut Count| {
            c.0 += 1;
            c.0
        })
    }

    #[test]
    fn a_pass_keeps_for_its_length_only_and_nested_calls_join_it() {
        assert!(!is_open());
        assert_eq!(bump(), None, "nothing is kept outside a pass");
        let seen = run(|| (bump(), run(bump), bump(), is_open()));
        assert_eq!(seen, (Some(1), Some(2), Some(3), true));
        assert!(!is_open());
        assert_eq!(run(bump), Some(1), "the next pass starts empty");
    }

    #[test]
    fn a_panic_ends_the_pass_and_drops_what_it_kept() {
        let r = std::panic::catch_unwind(|| {
            run(|| {
                bump();
                panic!("inside a pass")
            })
        });
        assert!(r.is_err());
        assert!(!is_open(), "the pass ended with the panic");
        assert_eq!(run(bump), Some(1));
    }
}
