//! Every credential hermes-mcp reads, and every sign-in it refreshes, kept as
//! Hermes keeps them so Hermes and hermes-mcp can share them safely.
//!
//! * [`authjson`]: `auth.json` as typed structs that keep every field they
//!   do not name.
//! * [`store`]: Hermes' `$HERMES_HOME/auth.json` (credential pools and their
//!   rules, `auth.lock`, atomic 0600 writes, profiles reading the root's
//!   sign-ins), and JWT claims as typed, tolerant structs.
//! * [`codex`]: the ChatGPT ("Codex") sign-in, from Hermes' store or Codex's own
//!   `$CODEX_HOME/auth.json`, refreshed under Hermes' lock.
//! * [`xai`]: the xAI Grok sign-in, then `XAI_API_KEY`.
//! * [`nous`]: the Nous Portal login (the auxiliary model's `nous` provider and
//!   the tool gateway, [`crate::gateway`], which refreshes it).
//! * [`snapshot`]: one reading of the stores per resolve pass
//!   ([`crate::hermes::pass`]).
//! * [`lock`]: Hermes' `auth.lock` (one bounded wait, the holder named).
//! * [`refreshes`]: every refresh in flight, so shutdown can wait for it to
//!   be stored (refresh tokens are single-use).
//! * [`claude`]: Claude Code's own sign-in (`~/.claude/.credentials.json`),
//!   read only, for the `anthropic` provider.
//!
//! Layer: `auth` imports `net` (token endpoints) and `hermes` (the home, the
//! config), nothing above.

pub mod authjson;
pub mod claude;
pub mod codex;
pub mod lock;
pub mod nous;
pub mod refreshes;
pub mod snapshot;
pub mod store;
pub mod xai;
