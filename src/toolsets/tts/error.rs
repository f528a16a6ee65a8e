//! Hermes' three TTS error families (hermes-agent: `tools/tts_tool.py` catches
//! `ValueError`, `FileNotFoundError` and everything else separately), each
//! worded with the provider that failed.

/// Hermes' three error families.
#[derive(Debug)]
pub(crate) enum TtsError {
    /// `ValueError`: missing keys, bad config.
    Config(String),
    /// `FileNotFoundError`: a missing program or file.
    Dependency(String),
    /// Anything else.
    Failed(String),
    /// Hermes' own sentence, returned as is (a local model's package is not installed).
    Plain(String),
}

impl TtsError {
    pub(crate) fn message(&self, provider: &str) -> String {
        match self {
            TtsError::Config(m) => format!("TTS configuration error ({provider}): {m}"),
            TtsError::Dependency(m) => format!("TTS dependency missing ({provider}): {m}"),
            TtsError::Failed(m) => format!("TTS generation failed ({provider}): {m}"),
            TtsError::Plain(m) => m.clone(),
        }
    }
}
