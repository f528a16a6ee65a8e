//! Hermes' three TTS error families (hermes-agent: `tools/tts_tool.py` catches
//! `ValueError`, `FileNotFoundError` and everything else separately), each
//! worded with the provider that failed.

/// The error that made a synthesis fail, kept as [`TtsError::Failed`]'s source.
pub(crate) type Cause = Box<dyn std::error::Error + Send + Sync>;

/// Hermes' three error families. `Display` is the text after Hermes'
/// prefix; [`TtsError::message`] is the whole sentence the model sees.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TtsError {
    /// `ValueError`: missing keys, bad config.
    #[error("{0}")]
    Config(String),
    /// `FileNotFoundError`: a missing program or file.
    #[error("{0}")]
    Dependency(String),
    /// Anything else: the text Hermes shows (the cause's own words
    /// included), and the error that caused it, when one did.
    #[error("{message}")]
    Failed {
        message: String,
        #[source]
        source: Option<Cause>,
    },
    /// Hermes' own sentence, returned as is (a local model's package is not installed).
    #[error("{0}")]
    Plain(String),
}

impl TtsError {
    /// A failure with no underlying error (a timeout, an exit status, an answer we refuse).
    pub(crate) fn failed(message: impl Into<String>) -> Self {
        TtsError::Failed {
            message: message.into(),
            source: None,
        }
    }

    /// A failure caused by `source`; `message` already quotes it as Hermes does.
    pub(crate) fn failed_by(message: impl Into<String>, source: impl Into<Cause>) -> Self {
        TtsError::Failed {
            message: message.into(),
            source: Some(source.into()),
        }
    }

    pub(crate) fn message(&self, provider: &str) -> String {
        match self {
            TtsError::Config(m) => format!("TTS configuration error ({provider}): {m}"),
            TtsError::Dependency(m) => format!("TTS dependency missing ({provider}): {m}"),
            TtsError::Failed { message, .. } => {
                format!("TTS generation failed ({provider}): {message}")
            }
            TtsError::Plain(m) => m.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn a_failure_keeps_its_cause_and_its_text() {
        let cause = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "denied");
        let e = TtsError::failed_by(format!("cannot write /x/a.mp3: {cause}"), cause);
        assert_eq!(
            e.message("edge"),
            "TTS generation failed (edge): cannot write /x/a.mp3: denied"
        );
        assert_eq!(e.to_string(), "cannot write /x/a.mp3: denied");
        let src = e.source().expect("a source");
        let io = src.downcast_ref::<std::io::Error>().expect("the io error");
        assert_eq!(io.kind(), std::io::ErrorKind::PermissionDenied);
        let e = TtsError::failed("Edge TTS did not finish within 60s");
        assert_eq!(
            e.message("edge"),
            "TTS generation failed (edge): Edge TTS did not finish within 60s"
        );
        assert!(e.source().is_none());
    }
}
