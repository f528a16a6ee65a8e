//! The network layer: one HTTP client for every toolset and provider, with
//! Hermes' URL guards. Sign-ins live in `crate::auth`, the Nous tool gateway in
//! `crate::gateway`; this layer knows nothing of either.
//!
//! * [`policy`]: address classes, the cloud-metadata floor, `allow_private_urls`,
//!   the website blocklist, and [`check_url`] (no I/O; the browser uses it alone).
//! * [`guards`]: secrets in URLs, credential-like query parameters, URL normalisation.
//! * [`client`]: [`HttpClient`] — guarded `fetch` for user URLs (every redirect
//!   hop checked, DNS pinned) and `send_api` for configured provider endpoints
//!   (rate limits, `Retry-After`).
//! * [`vendor`]: what calls to vendor APIs share (JSON and multipart requests,
//!   error texts, data URIs, downloading an image a vendor answered with).
//! * [`ratelimit`]: per-provider pacing and back-off after a 429.

pub mod client;
pub mod guards;
pub mod policy;
pub mod ratelimit;
pub(crate) mod sse;
pub(crate) mod vendor;

pub use client::{
    ApiError, ApiResponse, BuildError, FetchError, FetchOptions, Fetched, HttpClient, LazyClient,
    Limits, Lookup, SystemLookup,
};
pub use policy::{
    Blocked, IpClass, Policy, PolicyBlock, TrustedHost, WebsiteBlocklist, check_url, classify,
};
