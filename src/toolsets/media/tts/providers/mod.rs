//! The engines behind `text_to_speech`, one module per family: [`edge`] (Hermes'
//! default, MP3 over a websocket), [`local`]
//! (espeak-ng and Piper write WAV, then it is converted), [`command`]
//! (`tts.providers.<name>` shell commands), [`openai`] and [`elevenlabs`]
//! (HTTP APIs that answer with audio bytes).

pub(crate) mod command;
pub(crate) mod edge;
pub(crate) mod elevenlabs;
pub(crate) mod local;
pub(crate) mod openai;

use std::path::{Path, PathBuf};

use super::error::TtsError;

/// What a provider produced.
pub(crate) struct Produced {
    pub(crate) path: PathBuf,
    pub(crate) notes: Vec<String>,
    pub(crate) duration: Option<f64>,
}

pub(crate) fn write_audio(path: &Path, bytes: &[u8]) -> Result<(), TtsError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .map_err(|e| TtsError::Failed(format!("cannot write in {}: {e}", dir.display())))?;
    std::io::Write::write_all(&mut tmp, bytes)
        .and_then(|_| tmp.persist(path).map(|_| ()).map_err(|e| e.error))
        .map_err(|e| TtsError::Failed(format!("cannot write {}: {e}", path.display())))
}
