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

use crate::hermes::Context;
use crate::net::HttpClient;
use crate::toolsets::image_gen::error::GenError;
use crate::toolsets::image_gen::save::Generated;

/// One generation as every backend takes it.
#[derive(Clone, Copy)]
pub(crate) struct Request<'a> {
    pub(crate) ctx: &'a Context,
    pub(crate) http: &'a HttpClient,
    /// As given for FAL and OpenAI; trimmed for Hermes' other plugins.
    pub(crate) prompt: &'a str,
    pub(crate) aspect: &'a str,
    /// `image_url` first, then `reference_image_urls`.
    pub(crate) sources: &'a [String],
}

/// What a backend gives: its image (not yet saved) and the modality it reports.
pub(crate) type Outcome = Result<(Generated, &'static str), GenError>;
