//! One HTTP client for every toolset, with Hermes' URL guards.
//!
//! * [`policy`]: address classes, the cloud-metadata floor, `allow_private_urls`,
//!   the website blocklist, and [`check_url`] (no I/O; the browser uses it alone).
//! * [`guards`]: secrets in URLs, credential-like query parameters, URL normalisation.
//! * [`client`]: [`HttpClient`] — guarded `fetch` for user URLs (every redirect
//!   hop checked, DNS pinned) and `send_api` for configured provider endpoints
//!   (rate limits, `Retry-After`).

pub mod client;
pub mod codex_auth;
pub mod gateway;
pub mod guards;
pub mod policy;
pub mod ratelimit;
pub mod xai_auth;

pub use client::{
    ApiError, ApiResponse, BuildError, FetchError, FetchOptions, Fetched, HttpClient, LazyClient,
    Limits, Lookup, SystemLookup,
};
pub use policy::{
    Blocked, IpClass, Policy, PolicyBlock, TrustedHost, WebsiteBlocklist, check_url, classify,
};
