//! The `image_gen` backends, one module per vendor: FAL.ai's queue API
//! ([`fal`], Hermes' in-tree path), OpenAI's Images API ([`openai`]), and
//! Hermes' image plugins ([`codex`], [`xai`], [`openrouter`], [`deepinfra`],
//! [`krea`]); [`managed`] holds the Nous tool gateway's routes, [`plugin_http`]
//! the request and error texts the plugins share.
//!
//! Each builds its request, sends it through `net::vendor`, words failures in
//! the texts Hermes' plugin gives and reads the image out of the answer; the
//! toolset saves it and answers.

pub(crate) mod codex;
pub(crate) mod deepinfra;
pub(crate) mod fal;
pub(crate) mod krea;
pub(crate) mod managed;
pub(crate) mod openai;
pub(crate) mod openrouter;
mod plugin_http;
pub(crate) mod xai;
