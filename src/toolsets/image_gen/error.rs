//! How an `image_generate` call fails, in Hermes' result shape: the message
//! (`error`) and Hermes' `error_type`, the Python exception class or provider
//! code hermes-agent reports (`tools/image_generation_tool.py`,
//! `plugins/image_gen/openai`).

/// An image-generation failure; `Display` is the result's `error` text.
#[derive(Debug, thiserror::Error)]
pub(crate) enum GenError {
    /// `ValueError`: bad input, a missing key, an answer without images.
    #[error("{0}")]
    Value(String),
    /// `HTTPError`: FAL refused, failed or answered something we cannot use.
    #[error("{0}")]
    Http(String),
    /// `TimeoutError`: a FAL request outlived `image_gen.fal.timeout`.
    #[error("{0}")]
    Timeout(String),
    /// The OpenAI plugin's `auth_required`.
    #[error("{0}")]
    AuthRequired(String),
    /// `io_error`: a source image or the cache file could not be read or written.
    #[error("{0}")]
    Io(String),
    /// The OpenAI plugin's `api_error`.
    #[error("{0}")]
    Api(String),
    /// The OpenAI plugin's `empty_response`.
    #[error("{0}")]
    EmptyResponse(String),
    /// The Codex plugin's `invalid_image_input`: a source image it cannot send.
    #[error("{0}")]
    InvalidImageInput(String),
    /// The Codex plugin's `capability_unsupported`: the account has no image tool.
    #[error("{0}")]
    CapabilityUnsupported(String),
    /// Any other error type a Hermes plugin reports (`missing_api_key`, `timeout`,
    /// `connection_error`, `invalid_response`, `model_access`, `too_many_references`, ...).
    #[error("{msg}")]
    Typed { kind: &'static str, msg: String },
    /// `provider_not_registered`: `image_gen.provider` names a backend we lack.
    #[error("{0}")]
    ProviderNotRegistered(String),
    /// A failure whose result names another model than the one resolved up front: the
    /// model a plugin picked late (DeepInfra's live catalog) or `""` where Hermes'
    /// `error_response` is given none.
    #[error("{inner}")]
    WithModel { model: String, inner: Box<GenError> },
}

impl GenError {
    pub(crate) fn typed(kind: &'static str, msg: impl Into<String>) -> Self {
        GenError::Typed {
            kind,
            msg: msg.into(),
        }
    }

    /// Report `model` as the result's model.
    pub(crate) fn with_model(self, model: impl Into<String>) -> Self {
        GenError::WithModel {
            model: model.into(),
            inner: Box::new(self),
        }
    }

    /// Hermes' `error_type` for this failure.
    pub(crate) fn error_type(&self) -> &'static str {
        match self {
            GenError::Value(_) => "ValueError",
            GenError::Http(_) => "HTTPError",
            GenError::Timeout(_) => "TimeoutError",
            GenError::AuthRequired(_) => "auth_required",
            GenError::Io(_) => "io_error",
            GenError::Api(_) => "api_error",
            GenError::EmptyResponse(_) => "empty_response",
            GenError::ProviderNotRegistered(_) => "provider_not_registered",
            GenError::Typed { kind, .. } => kind,
            GenError::InvalidImageInput(_) => "invalid_image_input",
            GenError::CapabilityUnsupported(_) => "capability_unsupported",
            GenError::WithModel { inner, .. } => inner.error_type(),
        }
    }
}
