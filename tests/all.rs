//! The one integration-test binary (every `tests/*.rs` file would be a separate link).
mod suite;
