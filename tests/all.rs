//! The one integration-test binary (every `tests/*.rs` file would be a separate link).
// Tests read the machine's environment (tool paths, HERMES_PYTHON) directly.
#![allow(clippy::disallowed_methods)]
// Test helpers are `pub` for sibling modules of this one binary.
#![allow(unreachable_pub)]
// Test helpers outside #[test] functions may unwrap: a failure is a test failure.
#![allow(clippy::unwrap_used)]

mod suite;
