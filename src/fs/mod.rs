//! Reading and replacing the user's files: only regular files, never blocking,
//! with a size cap; one durable atomic write for the whole crate.
//!
//! A path the user controls may name (or link to) a FIFO, a socket, a device or
//! a directory. Reading a FIFO blocks forever, `/dev/zero` never ends, and
//! renaming a temp file over a device replaces the device node. So every read
//! opens with `O_NONBLOCK` (a FIFO opens at once instead of waiting for a
//! writer), checks the *opened* handle with `fstat` (no race with a swap of the
//! path), refuses anything that is not a regular file, and stops at a cap.
//! [`atomic_write`] refuses to replace anything but a regular file.
//!
//! This module is a leaf: it depends on nothing else in the crate.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The cap for configuration files (`config.toml`, `config.yaml`, `.env`).
pub const CONFIG_CAP: u64 = 16 << 20;

#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("cannot open {path}: {source}")]
    Open { path: PathBuf, source: io::Error },
    #[error(
        "{path} is {kind}, not a regular file; replace it with a regular file (or a symlink to one)"
    )]
    NotRegular { path: PathBuf, kind: &'static str },
    #[error("{path} is larger than {cap} bytes; this is not a configuration file (move it away)")]
    TooLarge { path: PathBuf, cap: u64 },
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: io::Error },
    #[error("{path} is not UTF-8 text; fix or move it")]
    NotUtf8 { path: PathBuf },
    #[error("cannot create a temporary file in {dir}: {source}")]
    CreateTemp { dir: PathBuf, source: io::Error },
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: io::Error },
}

impl FileError {
    /// The file does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, FileError::Open { source, .. } if source.kind() == io::ErrorKind::NotFound)
    }

    /// The underlying I/O error, if any.
    pub fn io_error(&self) -> Option<&io::Error> {
        match self {
            FileError::Open { source, .. }
            | FileError::Read { source, .. }
            | FileError::CreateTemp { source, .. }
            | FileError::Write { source, .. } => Some(source),
            _ => None,
        }
    }

    /// Permission denied, or a read-only file system (not a transient failure).
    pub fn is_not_writable(&self) -> bool {
        self.io_error().is_some_and(is_not_writable)
    }
}

/// EACCES / EPERM / EROFS: the file or directory cannot be written by us.
pub fn is_not_writable(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EACCES) | Some(libc::EPERM) | Some(libc::EROFS)
    )
}

/// A short reason for a not-writable error ("read-only file system" / "permission denied").
pub fn not_writable_reason(e: &io::Error) -> &'static str {
    if e.raw_os_error() == Some(libc::EROFS) {
        "it is on a read-only file system"
    } else {
        "permission denied"
    }
}

/// "a FIFO (named pipe)", "a directory", ... for a file type that is not a regular file.
pub fn kind_name(ft: &fs::FileType) -> &'static str {
    if ft.is_file() {
        "a regular file"
    } else if ft.is_dir() {
        "a directory"
    } else if ft.is_fifo() {
        "a FIFO (named pipe)"
    } else if ft.is_socket() {
        "a socket"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_symlink() {
        "a symlink"
    } else {
        "a special file"
    }
}

fn not_regular(path: &Path, ft: &fs::FileType) -> FileError {
    FileError::NotRegular {
        path: path.to_path_buf(),
        kind: kind_name(ft),
    }
}

/// Open `path` (following symlinks) for reading, only if it is a regular file.
/// Never blocks: a FIFO or device is refused, not waited on.
pub fn open_regular(path: &Path) -> Result<File, FileError> {
    // Refuse without opening when we can tell already (opening some devices has effects).
    if let Ok(m) = fs::metadata(path)
        && !m.is_file()
    {
        return Err(not_regular(path, &m.file_type()));
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|source| {
            // A socket cannot be opened at all (ENXIO): name it.
            match fs::metadata(path) {
                Ok(m) if !m.is_file() => not_regular(path, &m.file_type()),
                _ => FileError::Open {
                    path: path.to_path_buf(),
                    source,
                },
            }
        })?;
    // The handle we hold is what counts (the path may have been swapped).
    let meta = file.metadata().map_err(|source| FileError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    if !meta.is_file() {
        return Err(not_regular(path, &meta.file_type()));
    }
    Ok(file)
}

/// The bytes of the regular file `path`, at most `cap` of them (else an error).
pub fn read_capped(path: &Path, cap: u64) -> Result<Vec<u8>, FileError> {
    read_open_capped(open_regular(path)?, path, cap)
}

/// The bytes of a file opened by [`open_regular`], at most `cap` of them
/// (else an error naming `path`).
pub fn read_open_capped(file: File, path: &Path, cap: u64) -> Result<Vec<u8>, FileError> {
    let too_large = || FileError::TooLarge {
        path: path.to_path_buf(),
        cap,
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    if len > cap {
        return Err(too_large());
    }
    let mut buf = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(cap.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(|source| FileError::Read {
            path: path.to_path_buf(),
            source,
        })?;
    if buf.len() as u64 > cap {
        return Err(too_large());
    }
    Ok(buf)
}

/// Where the opened `file` really is (`/proc/self/fd/N`, every symlink
/// resolved by the kernel at open time), or `None` when `/proc` is not
/// mounted. Containment checks use this: it names the file we read, not a
/// path that may have changed since it was checked.
pub fn opened_path(file: &File) -> Option<PathBuf> {
    use std::os::fd::AsRawFd;
    fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()
}

/// [`read_capped`] as UTF-8 text.
pub fn read_to_string_capped(path: &Path, cap: u64) -> Result<String, FileError> {
    String::from_utf8(read_capped(path, cap)?).map_err(|_| FileError::NotUtf8 {
        path: path.to_path_buf(),
    })
}

/// [`read_capped`], with a missing file as `None`.
pub fn read_capped_opt(path: &Path, cap: u64) -> Result<Option<Vec<u8>>, FileError> {
    match read_capped(path, cap) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e),
    }
}

/// [`read_to_string_capped`], with a missing file as `None`.
pub fn read_to_string_capped_opt(path: &Path, cap: u64) -> Result<Option<String>, FileError> {
    match read_to_string_capped(path, cap) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e),
    }
}

/// The file a write really replaces: `path`, or the end of its symlink chain
/// (dotfile managers), so the link itself is kept.
pub fn real_target(path: &Path) -> PathBuf {
    let mut cur = path.to_path_buf();
    for _ in 0..40 {
        match fs::symlink_metadata(&cur) {
            Ok(m) if m.file_type().is_symlink() => match fs::read_link(&cur) {
                Ok(next) => {
                    cur = if next.is_absolute() {
                        next
                    } else {
                        cur.parent().unwrap_or(Path::new("/")).join(next)
                    };
                }
                Err(_) => break,
            },
            _ => break,
        }
    }
    cur
}

/// What [`atomic_write`] replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replaced {
    /// The file existed.
    pub existed: bool,
    /// Its mode (kept on the new file); 0600 for a new file.
    pub mode: u32,
    /// It had no write permission bit set (replaced anyway: the directory allows it).
    pub was_read_only: bool,
}

/// Atomically and durably replace `target` with `bytes`: a temp file named
/// `<tmp_prefix>…<tmp_suffix>` beside the real file (symlinks followed), fsync,
/// `before_rename()`, rename, fsync the directory. A crash leaves the old or
/// the new file, never a torn one. The mode is kept (0600 for a new file).
/// Anything but a regular file (or a missing one) is refused.
pub fn atomic_write_with(
    target: &Path,
    bytes: &[u8],
    tmp_names: (&str, &str),
    before_rename: impl FnOnce(),
) -> Result<Replaced, FileError> {
    replace_file(target, bytes, tmp_names, None, before_rename)
}

/// [`atomic_write_with`] with no hook, whose new file gets `mode` whatever the
/// old one had: a file Hermes writes through `tempfile.mkstemp` and
/// `os.replace` (its memory files) is always 0600.
pub fn atomic_write_mode(
    target: &Path,
    bytes: &[u8],
    tmp_names: (&str, &str),
    mode: u32,
) -> Result<Replaced, FileError> {
    replace_file(target, bytes, tmp_names, Some(mode), || {})
}

/// [`atomic_write_with`], the new file's mode `mode` or else the old file's.
fn replace_file(
    target: &Path,
    bytes: &[u8],
    (tmp_prefix, tmp_suffix): (&str, &str),
    mode: Option<u32>,
    before_rename: impl FnOnce(),
) -> Result<Replaced, FileError> {
    let target = real_target(target);
    let target = target.as_path();
    let err = |source| FileError::Write {
        path: target.to_path_buf(),
        source,
    };
    let dir = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let replaced = match fs::metadata(target) {
        Ok(m) if !m.is_file() => return Err(not_regular(target, &m.file_type())),
        Ok(m) => {
            let mode = m.permissions().mode() & 0o7777;
            Replaced {
                existed: true,
                mode,
                was_read_only: mode & 0o222 == 0,
            }
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Replaced {
            existed: false,
            mode: 0o600,
            was_read_only: false,
        },
        Err(e) => return Err(err(e)),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(tmp_prefix)
        .suffix(tmp_suffix)
        .tempfile_in(dir)
        .map_err(|source| FileError::CreateTemp {
            dir: dir.to_path_buf(),
            source,
        })?;
    tmp.write_all(bytes).map_err(err)?;
    tmp.as_file()
        .set_permissions(fs::Permissions::from_mode(mode.unwrap_or(replaced.mode)))
        .map_err(err)?;
    tmp.as_file().sync_all().map_err(err)?;
    before_rename();
    // Checked again right before the rename: never replace a device or FIFO.
    if let Ok(m) = fs::metadata(target)
        && !m.is_file()
    {
        return Err(not_regular(target, &m.file_type()));
    }
    tmp.persist(target).map_err(|e| err(e.error))?;
    File::open(dir).and_then(|d| d.sync_all()).map_err(err)?;
    Ok(replaced)
}

/// [`atomic_write_with`] with a default temp name and no hook.
pub fn atomic_write(target: &Path, bytes: &[u8]) -> Result<Replaced, FileError> {
    atomic_write_with(target, bytes, (".tmp.", ".hermes-tmp"), || {})
}

/// Delete the files in `dir` whose name `ours` accepts and whose mtime is
/// more than `max_age` ago (Hermes' cleanup of its screenshots and
/// recordings); anything unreadable is left alone. Returns how many went.
pub fn prune_older_than(
    dir: &Path,
    max_age: std::time::Duration,
    ours: impl Fn(&str) -> bool,
) -> usize {
    let Ok(rd) = fs::read_dir(dir) else {
        return 0;
    };
    let now = std::time::SystemTime::now();
    let mut gone = 0;
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if !ours(&name) {
            continue;
        }
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|m| now.duration_since(m).ok())
            .is_some_and(|age| age > max_age);
        if old {
            match fs::remove_file(e.path()) {
                Ok(()) => gone += 1,
                Err(err) => tracing::debug!("cannot remove old {name}: {err}"),
            }
        }
    }
    gone
}

/// An exclusive advisory `flock` on a lock file (created if missing), held
/// until dropped: how Hermes serialises writers of its shared files
/// (`skills/.usage.json.lock`, `auth.lock`), so our writes and Hermes' never
/// interleave.
pub struct Flock(File);

impl Flock {
    /// Blocks until the lock is ours.
    pub fn take(path: &Path) -> io::Result<Flock> {
        let f = OpenOptions::new()
            .create(true)
            .append(true)
            .read(true)
            .mode(0o600)
            .open(path)?;
        // SAFETY: flock on a descriptor we own.
        if unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&f), libc::LOCK_EX) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Flock(f))
    }

    /// Like [`Flock::take`], giving up after `timeout` (Hermes waits 15 s
    /// for its auth store lock, then fails with "Timed out waiting ...").
    pub fn take_timeout(path: &Path, timeout: std::time::Duration) -> io::Result<Flock> {
        let f = OpenOptions::new()
            .create(true)
            .append(true)
            .read(true)
            .mode(0o600)
            .open(path)?;
        let deadline = std::time::Instant::now() + timeout;
        loop {
            // SAFETY: flock on a descriptor we own.
            let r = unsafe {
                libc::flock(
                    std::os::fd::AsRawFd::as_raw_fd(&f),
                    libc::LOCK_EX | libc::LOCK_NB,
                )
            };
            if r == 0 {
                return Ok(Flock(f));
            }
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EWOULDBLOCK) {
                return Err(e);
            }
            if std::time::Instant::now() >= deadline {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "timed out waiting for the lock",
                ));
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
}

impl Drop for Flock {
    fn drop(&mut self) {
        // SAFETY: unlocking our own descriptor (closing it would release it too).
        unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&self.0), libc::LOCK_UN) };
    }
}

// ---- Paths for files the tools write (Hermes' naming rules) ----

/// Eight hex digits (Hermes' `uuid4().hex[:8]`).
pub fn short_id() -> String {
    format!("{:08x}", fastrand::u32(..))
}

/// `path`, or `stem_2.ext`, `stem_3.ext`, ... when it already exists, so two
/// calls in the same second never overwrite each other.
pub fn unique_path(path: PathBuf) -> PathBuf {
    if !path.exists() {
        return path;
    }
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ext = path
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    (2..)
        .map(|n| dir.join(format!("{stem}_{n}{ext}")))
        .find(|p| !p.exists())
        .expect("an unbounded counter finds a free name")
}

/// Hermes' `has_traversal_component`: a `..` path component.
pub fn has_traversal_component(path: &str) -> bool {
    Path::new(path)
        .components()
        .any(|c| matches!(c, std::path::Component::ParentDir))
}

/// Make a user path absolute (`~` expanded, relative to the server's working directory).
pub fn absolute(path: &str) -> PathBuf {
    let p = expand_tilde(Path::new(path));
    if p.is_absolute() {
        p
    } else {
        std::env::current_dir().map(|d| d.join(&p)).unwrap_or(p)
    }
}

/// `~` or `~/x` with the user's home, as Python's `os.path.expanduser`.
pub fn expand_tilde(p: &Path) -> PathBuf {
    let s = p.to_string_lossy();
    if (s == "~" || s.starts_with("~/"))
        && let Some(h) = std::env::home_dir()
    {
        return h.join(s.trim_start_matches('~').trim_start_matches('/'));
    }
    p.to_path_buf()
}

#[cfg(test)]
mod tests {

    #[test]
    fn traversal_is_a_dotdot_component_only() {
        assert!(has_traversal_component("audio/../../etc/cron.d/x"));
        assert!(has_traversal_component(".."));
        assert!(has_traversal_component("/tmp/../x.mp3"));
        assert!(!has_traversal_component("/tmp/a..b.mp3"));
        assert!(!has_traversal_component("x/...mp3"));
        assert!(!has_traversal_component("./x.mp3"));
    }

    #[test]
    fn unique_path_never_overwrites() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("tts_1.wav");
        assert_eq!(unique_path(p.clone()), p);
        std::fs::write(&p, b"x").unwrap();
        assert_eq!(unique_path(p.clone()), d.path().join("tts_1_2.wav"));
    }

    use super::*;

    #[test]
    fn refuses_fifo_directory_and_devices_without_blocking() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_capped(&fifo, 10).unwrap_err().to_string();
        assert!(
            e.contains("is a FIFO (named pipe), not a regular file"),
            "{e}"
        );
        let e = read_capped(d.path(), 10).unwrap_err().to_string();
        assert!(e.contains("a directory"), "{e}");
        let e = read_capped(Path::new("/dev/zero"), 10)
            .unwrap_err()
            .to_string();
        assert!(e.contains("a character device"), "{e}");
        let link = d.path().join("link");
        std::os::unix::fs::symlink("/dev/null", &link).unwrap();
        let e = atomic_write(&link, b"x").unwrap_err().to_string();
        assert!(e.contains("/dev/null is a character device"), "{e}");
        assert!(
            fs::metadata("/dev/null")
                .unwrap()
                .file_type()
                .is_char_device()
        );
    }

    #[test]
    fn caps_and_missing_files() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        assert!(read_to_string_capped_opt(&p, 4).unwrap().is_none());
        fs::write(&p, "12345").unwrap();
        let e = read_capped(&p, 4).unwrap_err().to_string();
        assert!(e.contains("larger than 4 bytes"), "{e}");
        assert_eq!(read_to_string_capped(&p, 5).unwrap(), "12345");
        fs::write(&p, [0xff, 0xfe]).unwrap();
        assert!(matches!(
            read_to_string_capped(&p, 5),
            Err(FileError::NotUtf8 { .. })
        ));
    }

    #[test]
    fn write_keeps_mode_follows_symlinks_and_reports_read_only() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("dotfiles/config.toml");
        fs::create_dir_all(real.parent().unwrap()).unwrap();
        fs::write(&real, "a = 1\n").unwrap();
        fs::set_permissions(&real, fs::Permissions::from_mode(0o444)).unwrap();
        let link = d.path().join("config.toml");
        std::os::unix::fs::symlink("dotfiles/config.toml", &link).unwrap();
        let r = atomic_write(&link, b"a = 2\n").unwrap();
        assert!(r.existed && r.was_read_only && r.mode == 0o444, "{r:?}");
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(&link).unwrap(), "a = 2\n");
        assert_eq!(
            fs::metadata(&real).unwrap().permissions().mode() & 0o777,
            0o444
        );
        assert_eq!(fs::read_dir(real.parent().unwrap()).unwrap().count(), 1);
    }
}
