//! How an `image_generate` call fails, in Hermes' result shape: the message
//! and Hermes' `error_type` (the Python exception class or provider code).

/// An image-generation failure in Hermes' shape.
#[derive(Debug)]
pub(crate) struct GenError {
    pub(crate) message: String,
    pub(crate) error_type: &'static str,
}

impl GenError {
    pub(crate) fn value(m: impl Into<String>) -> Self {
        GenError {
            message: m.into(),
            error_type: "ValueError",
        }
    }
    pub(crate) fn http(m: impl Into<String>) -> Self {
        GenError {
            message: m.into(),
            error_type: "HTTPError",
        }
    }
    pub(crate) fn timeout(m: impl Into<String>) -> Self {
        GenError {
            message: m.into(),
            error_type: "TimeoutError",
        }
    }
}
