//! The crate's one door to the user's files: reading them ([`read`]: only
//! regular files, never blocking, with a size cap), replacing them ([`write`]:
//! the one atomic write), Hermes' lock files ([`lock`]) and the paths of the
//! files the tools make ([`paths`]).
//!
//! A path the user controls may name (or link to) a FIFO, a socket, a device or
//! a directory. Reading a FIFO blocks forever, `/dev/zero` never ends, and
//! renaming a temp file over a device replaces the device node. So every read
//! opens with `O_NONBLOCK` (a FIFO opens at once instead of waiting for a
//! writer), checks the *opened* handle with `fstat` (no race with a swap of the
//! path), refuses anything that is not a regular file, and stops at a cap; and
//! the atomic write refuses to replace anything but a regular file.
//!
//! This module is a leaf: it depends on nothing else in the crate.

pub mod lock;
pub mod paths;
pub mod read;
pub mod write;

use std::fs;
use std::io;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

pub use lock::{Flock, NotALockFile, open_lock_file};
pub use paths::{
    absolute, expand_tilde, has_traversal_component, prune_older_than, short_id, unique_path,
};
pub use read::{
    CONFIG_CAP, open_regular, opened_path, read_capped, read_capped_opt, read_open_capped,
    read_to_string_capped, read_to_string_capped_opt,
};
pub use write::{
    Durability, Links, Perms, Replaced, TempName, WriteOptions, atomic_write, real_target,
    write_atomic, write_atomic_with,
};

/// A FIFO at `path`, mode 0600: the special file the unit tests of every
/// reader and lock plant where a regular file belongs.
#[cfg(test)]
pub(crate) fn mkfifo(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).expect("no NUL in a test path");
    // SAFETY: a NUL-terminated path.
    let rc = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
    assert_eq!(
        rc,
        0,
        "mkfifo {}: {}",
        path.display(),
        io::Error::last_os_error()
    );
}

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
