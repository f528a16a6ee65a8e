//! `$HERMES_HOME/logs/hermes-mcp.log`: what `serve` said when codex ran it.
//!
//! codex keeps a stdio server's stderr to itself, so `serve` also appends its
//! log lines here, beside Hermes' own logs (hermes-agent: `hermes_logging.py`
//! writes `<home>/logs/*.log`). The file is capped: past [`CAP`] bytes it is
//! renamed to `hermes-mcp.log.1` (replacing the previous one) and a new one
//! starts, so it never grows without bound. Only inside an existing Hermes
//! home: `serve` never creates the home itself.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

/// Size at which the log is rotated.
pub const CAP: u64 = 1 << 20;

/// An appending, size-capped log file shared by every writer.
#[derive(Clone)]
pub struct LogFile {
    inner: Arc<Mutex<State>>,
}

struct State {
    path: PathBuf,
    file: File,
    size: u64,
}

fn open(path: &Path) -> io::Result<(File, u64)> {
    let file = OpenOptions::new().create(true).append(true).open(path)?;
    let size = file.metadata()?.len();
    Ok((file, size))
}

impl LogFile {
    /// Open `<home>/logs/hermes-mcp.log` (creating `logs/`), or `None` when the
    /// home does not exist or the file cannot be opened.
    pub fn open_in(home: &Path) -> Option<Self> {
        if !home.is_dir() {
            return None;
        }
        let path = super::home::log_file(home);
        std::fs::create_dir_all(path.parent()?).ok()?;
        let (file, size) = open(&path).ok()?;
        let mut state = State { path, file, size };
        if state.size > CAP {
            state.rotate().ok()?;
        }
        Some(LogFile {
            inner: Arc::new(Mutex::new(state)),
        })
    }
}

impl State {
    fn rotate(&mut self) -> io::Result<()> {
        let mut old = self.path.clone().into_os_string();
        old.push(".1");
        std::fs::rename(&self.path, &old)?;
        let (file, size) = open(&self.path)?;
        self.file = file;
        self.size = size;
        Ok(())
    }
}

impl Write for LogFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut s = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if s.size + buf.len() as u64 > CAP {
            // A failed rotation keeps appending to the old file.
            let _ = s.rotate();
        }
        let n = s.file.write(buf)?;
        s.size += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        let mut s = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        s.file.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotates_past_the_cap_and_never_creates_a_home() {
        let d = tempfile::tempdir().unwrap();
        assert!(LogFile::open_in(&d.path().join("missing")).is_none());
        assert!(!d.path().join("missing").exists());
        let mut log = LogFile::open_in(d.path()).unwrap();
        let line = vec![b'x'; 4096];
        for _ in 0..(CAP as usize / 4096 + 10) {
            log.write_all(&line).unwrap();
        }
        let cur = std::fs::metadata(d.path().join("logs/hermes-mcp.log")).unwrap();
        let old = std::fs::metadata(d.path().join("logs/hermes-mcp.log.1")).unwrap();
        assert!(
            cur.len() <= CAP && old.len() <= CAP,
            "{} {}",
            cur.len(),
            old.len()
        );
        assert!(cur.len() > 0);
    }
}
