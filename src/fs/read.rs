//! Reading a file the user controls: only a regular file, opened without
//! blocking, checked on the opened handle, up to a cap.

use std::fs::{self, File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::{FileError, not_regular};

/// The cap for configuration files (`config.toml`, `config.yaml`, `.env`).
pub const CONFIG_CAP: u64 = 16 << 20;

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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileTypeExt;

    #[test]
    fn refuses_fifo_directory_and_devices_without_blocking() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo");
        crate::fs::mkfifo(&fifo);
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
        assert!(
            fs::metadata("/dev/zero")
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
}
