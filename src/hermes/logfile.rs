//! `$HERMES_HOME/logs/hermes-mcp.log`: what `serve` said when codex ran it.
//!
//! codex keeps a stdio server's stderr to itself (it goes into codex's own
//! log, if anywhere), so `serve` also appends its log lines here, beside
//! Hermes' own logs (hermes-agent: `hermes_logging.py` writes
//! `<home>/logs/*.log`). The file is capped: past [`CAP`] bytes it is renamed
//! to `hermes-mcp.log.1` (replacing the previous one) and a new one starts, so
//! it never grows without bound; one record is cut at [`RECORD_CAP`] bytes.
//! Only inside an existing Hermes home: `serve` never creates the home itself.
//!
//! The path is opened like every other user path (see `crate::fs`):
//! non-blocking (a FIFO there must not stall start-up), regular files only,
//! never through a symlink (`O_NOFOLLOW`; the rotation is a `rename`, which
//! replaces a symlinked `.1` rather than writing through it). The file is
//! created 0600 and an older, group- or world-readable one of ours is
//! tightened to 0600, because debug records hold tool arguments and results.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

/// Size at which the log is rotated.
pub const CAP: u64 = 1 << 20;

/// Longest record written; a longer one is cut (on a UTF-8 boundary) and says
/// how much was left out.
pub const RECORD_CAP: usize = 4096;

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

/// Open (creating 0600) the log for appending: no symlink, no blocking, a
/// regular file only; an existing one of ours readable by others is made 0600.
fn open(path: &Path) -> io::Result<(File, u64)> {
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => {
                io::Error::other("it is a symlink; logs are not written through one")
            }
            // A FIFO without a reader, a socket.
            Some(libc::ENXIO) | Some(libc::EOPNOTSUPP) => match std::fs::symlink_metadata(path) {
                Ok(m) => io::Error::other(format!(
                    "it is {}, not a regular file",
                    crate::fs::kind_name(&m.file_type())
                )),
                Err(_) => e,
            },
            _ => e,
        })?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::other(format!(
            "it is {}, not a regular file",
            crate::fs::kind_name(&meta.file_type())
        )));
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    if meta.mode() & 0o077 != 0 && meta.uid() == unsafe { libc::geteuid() } {
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    Ok((file, meta.len()))
}

impl LogFile {
    /// Open `<home>/logs/hermes-mcp.log` (creating `logs/`): `Ok(None)` when
    /// the home does not exist, an error saying why when the log cannot be
    /// used (then `serve` runs without it).
    pub fn open_in(home: &Path) -> Result<Option<Self>, String> {
        if !home.is_dir() {
            return Ok(None);
        }
        let path = super::home::log_file(home);
        let fail = |e: &dyn std::fmt::Display| {
            format!(
                "not writing the log file {}: {e}; move it away to get a log",
                path.display()
            )
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| fail(&e))?;
        }
        let (file, size) = open(&path).map_err(|e| fail(&e))?;
        let mut state = State { path, file, size };
        if state.size > CAP {
            state.rotate();
        }
        Ok(Some(LogFile {
            inner: Arc::new(Mutex::new(state)),
        }))
    }
}

impl State {
    /// Start a new file: the current one becomes `.1` (a `rename`, which
    /// replaces whatever `.1` is, a symlink included, without following it).
    /// When the rename fails the current file is emptied instead, so the cap
    /// holds; when the new file cannot be opened, writing goes on in the
    /// renamed one and the next write tries again.
    fn rotate(&mut self) {
        let mut old = self.path.clone().into_os_string();
        old.push(".1");
        match std::fs::rename(&self.path, &old) {
            Ok(()) => {
                if let Ok((file, size)) = open(&self.path) {
                    self.file = file;
                    self.size = size;
                }
            }
            Err(_) => {
                if self.file.set_len(0).is_ok() {
                    self.size = 0;
                }
            }
        }
    }
}

/// `buf` cut to [`RECORD_CAP`] bytes on a UTF-8 boundary, with a note of how
/// many bytes were left out and the record's line end kept.
fn cut_record(buf: &[u8]) -> Vec<u8> {
    let mut end = RECORD_CAP;
    // Back up to the start of a UTF-8 sequence (never cut inside a character).
    while end > 0 && buf.get(end).is_some_and(|b| b & 0xC0 == 0x80) {
        end -= 1;
    }
    let mut out = buf[..end].to_vec();
    out.extend_from_slice(format!(" … [{} bytes cut]\n", buf.len() - end).as_bytes());
    out
}

impl Write for LogFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let cut;
        let record = if buf.len() > RECORD_CAP {
            cut = cut_record(buf);
            &cut[..]
        } else {
            buf
        };
        let mut s = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if s.size + record.len() as u64 > CAP {
            s.rotate();
        }
        s.file.write_all(record)?;
        s.size += record.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        let mut s = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        s.file.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log_path(home: &Path) -> PathBuf {
        home.join("logs/hermes-mcp.log")
    }

    #[test]
    fn rotates_past_the_cap_and_never_creates_a_home() {
        let d = tempfile::tempdir().unwrap();
        assert!(matches!(
            LogFile::open_in(&d.path().join("missing")),
            Ok(None)
        ));
        assert!(!d.path().join("missing").exists());
        let mut log = LogFile::open_in(d.path()).unwrap().unwrap();
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

    #[test]
    fn new_log_is_0600_and_an_old_world_readable_one_is_tightened() {
        let d = tempfile::tempdir().unwrap();
        let mut log = LogFile::open_in(d.path()).unwrap().unwrap();
        log.write_all(b"x\n").unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&log_path(d.path())), 0o600);
        std::fs::set_permissions(log_path(d.path()), std::fs::Permissions::from_mode(0o644))
            .unwrap();
        drop(log);
        LogFile::open_in(d.path()).unwrap().unwrap();
        assert_eq!(mode(&log_path(d.path())), 0o600);
    }

    #[test]
    fn symlinks_and_fifos_are_refused_without_blocking() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("logs")).unwrap();
        let target = d.path().join("elsewhere");
        std::fs::write(&target, "keep\n").unwrap();
        std::os::unix::fs::symlink(&target, log_path(d.path())).unwrap();
        let err = LogFile::open_in(d.path()).err().unwrap();
        assert!(err.contains("symlink"), "{err}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep\n");

        std::fs::remove_file(log_path(d.path())).unwrap();
        crate::fs::mkfifo(&log_path(d.path()));
        let err = LogFile::open_in(d.path()).err().unwrap();
        assert!(err.contains("FIFO"), "{err}");
    }

    #[test]
    fn rotation_replaces_a_symlinked_old_log_without_writing_through_it() {
        let d = tempfile::tempdir().unwrap();
        let mut log = LogFile::open_in(d.path()).unwrap().unwrap();
        let target = d.path().join("precious");
        std::fs::write(&target, "keep\n").unwrap();
        std::os::unix::fs::symlink(&target, d.path().join("logs/hermes-mcp.log.1")).unwrap();
        let line = vec![b'y'; 4000];
        for _ in 0..(CAP as usize / 4000 + 10) {
            log.write_all(&line).unwrap();
        }
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep\n");
        let old = d.path().join("logs/hermes-mcp.log.1");
        assert!(std::fs::symlink_metadata(&old).unwrap().is_file());
    }

    #[test]
    fn long_records_are_cut_on_a_character_boundary() {
        let d = tempfile::tempdir().unwrap();
        let mut log = LogFile::open_in(d.path()).unwrap().unwrap();
        let mut rec = "é".repeat(RECORD_CAP).into_bytes();
        rec.push(b'\n');
        assert_eq!(log.write(&rec).unwrap(), rec.len());
        let text = std::fs::read_to_string(log_path(d.path())).unwrap();
        assert!(text.len() < RECORD_CAP + 64, "{}", text.len());
        assert!(text.ends_with("bytes cut]\n"), "{text}");
    }
}
