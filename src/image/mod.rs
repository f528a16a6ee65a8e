//! Image bytes, apart from any model: what kind of image a byte string is
//! ([`sniff`], magic bytes) and turning it into something every vision API
//! accepts ([`prep`]: validate, convert, downscale). Vision, browser
//! screenshots and image generation share it; it is pixels and formats, not
//! LLM code, so it is a leaf: it imports nothing of the crate but other
//! leaves.

pub(crate) mod prep;
pub mod sniff;
