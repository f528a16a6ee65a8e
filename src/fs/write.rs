//! The one atomic write: a temp file beside the target, filled, (fsynced,)
//! renamed over it, (the directory fsynced). Readers see the old file or the
//! new one, never a torn one. Every file the crate replaces goes through
//! [`write_atomic`]; what differs from file to file (the temp name, the mode,
//! whether a symlink is followed, whether it is fsynced as Hermes does or
//! not) is a [`WriteOptions`] field, not another copy of the steps.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::{FileError, not_regular};

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

/// What [`write_atomic`] replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replaced {
    /// The file existed.
    pub existed: bool,
    /// Its mode (kept on the new file with [`Perms::Keep`]); 0600 for a new file.
    pub mode: u32,
    /// It had no write permission bit set (replaced anyway: the directory allows it).
    pub was_read_only: bool,
}

/// Whether a write survives a crash of the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// The temp file is fsynced before the rename and the directory after:
    /// a crash leaves the old or the new file, never an empty one.
    Durable,
    /// No fsync, as Hermes writes the same file (`write_text` then
    /// `os.replace`, or a temp file moved into place): atomic for readers,
    /// but a crash of the machine may leave an empty file.
    AsHermes,
}

/// The new file's permission bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Perms {
    /// The replaced file's mode; 0600 for a new file.
    Keep,
    /// This mode, whatever the old file had (Hermes' `mkstemp` files are 0600).
    Fixed(u32),
    /// What `open()` gives a new file: 0666 less the umask (Python's `write_text`).
    Umask,
}

/// What happens to a symlink at the target path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// Replace the file at the end of the chain ([`real_target`]); the link stays.
    Follow,
    /// Rename over the name itself, as `os.replace` does: a symlink there is
    /// replaced, what it points to is never touched.
    NoFollow,
}

/// How the temp file beside the target is named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TempName<'a> {
    /// `<prefix><random><suffix>`, created exclusively.
    Random(&'a str, &'a str),
    /// `<target path><suffix>` exactly (Hermes' `<id>.json.tmp`), created or
    /// truncated as Python's `write_text` does.
    Suffix(&'a str),
}

/// Everything that differs between the files the crate replaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteOptions<'a> {
    pub temp: TempName<'a>,
    pub perms: Perms,
    pub links: Links,
    pub durability: Durability,
}

impl WriteOptions<'static> {
    /// Durable, symlinks followed, mode kept, `.tmp.…hermes-tmp` temp files.
    pub const DURABLE: WriteOptions<'static> = WriteOptions {
        temp: TempName::Random(".tmp.", ".hermes-tmp"),
        perms: Perms::Keep,
        links: Links::Follow,
        durability: Durability::Durable,
    };

    /// A file the tools make (a cache entry, an audio output), written as
    /// Hermes writes it: a `.tmp…` file (0600) renamed over the name, no fsync.
    pub const OUTPUT: WriteOptions<'static> = WriteOptions {
        temp: TempName::Random(".tmp", ""),
        perms: Perms::Fixed(0o600),
        links: Links::NoFollow,
        durability: Durability::AsHermes,
    };
}

/// [`write_atomic_with`] with [`WriteOptions::DURABLE`].
pub fn atomic_write(target: &Path, bytes: &[u8]) -> Result<Replaced, FileError> {
    write_atomic(target, bytes, &WriteOptions::DURABLE)
}

/// [`write_atomic_with`] with nothing to do before the rename.
pub fn write_atomic(
    target: &Path,
    bytes: &[u8],
    opts: &WriteOptions,
) -> Result<Replaced, FileError> {
    write_atomic_with(target, bytes, opts, || Ok::<(), FileError>(()))
}

/// Replace `target` with `bytes` as `opts` says: the temp file beside the
/// target, the bytes, the mode, (fsync,) `before_rename()` (a last check or a
/// test's pause; its error stops the write), rename, (fsync the directory).
/// Anything at the target but a regular file (or, with [`Links::NoFollow`],
/// a symlink) is refused, before writing and again right before the rename.
/// A failed write leaves no temp file behind.
pub fn write_atomic_with<E: From<FileError>>(
    target: &Path,
    bytes: &[u8],
    opts: &WriteOptions,
    before_rename: impl FnOnce() -> Result<(), E>,
) -> Result<Replaced, E> {
    let target = match opts.links {
        Links::Follow => real_target(target),
        Links::NoFollow => target.to_path_buf(),
    };
    let target = target.as_path();
    let err = |source| FileError::Write {
        path: target.to_path_buf(),
        source,
    };
    let dir = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let replaced = existing(target, opts.links)?;
    let tmp = create_temp(target, dir, opts)?;
    let mut file = tmp.as_file();
    file.write_all(bytes).map_err(err)?;
    let mode = match opts.perms {
        Perms::Keep => Some(replaced.mode),
        Perms::Fixed(m) => Some(m),
        Perms::Umask => None,
    };
    if let Some(mode) = mode {
        file.set_permissions(fs::Permissions::from_mode(mode))
            .map_err(err)?;
    }
    let durable = opts.durability == Durability::Durable;
    if durable {
        file.sync_all().map_err(err)?;
    }
    before_rename()?;
    // Checked again right before the rename: never replace a device or FIFO.
    existing(target, opts.links)?;
    tmp.path.persist(target).map_err(|e| err(e.error))?;
    if durable {
        File::open(dir).and_then(|d| d.sync_all()).map_err(err)?;
    }
    Ok(replaced)
}

/// What is at `target` now: nothing, or a regular file (its mode); anything
/// else is an error. With [`Links::NoFollow`] a symlink counts as nothing.
fn existing(target: &Path, links: Links) -> Result<Replaced, FileError> {
    let meta = match links {
        Links::Follow => fs::metadata(target),
        Links::NoFollow => fs::symlink_metadata(target),
    };
    let absent = Replaced {
        existed: false,
        mode: 0o600,
        was_read_only: false,
    };
    match meta {
        Ok(m) if m.file_type().is_symlink() => Ok(absent),
        Ok(m) if !m.is_file() => Err(not_regular(target, &m.file_type())),
        Ok(m) => {
            let mode = m.permissions().mode() & 0o7777;
            Ok(Replaced {
                existed: true,
                mode,
                was_read_only: mode & 0o222 == 0,
            })
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(absent),
        Err(e) => Err(FileError::Write {
            path: target.to_path_buf(),
            source: e,
        }),
    }
}

/// An open temp file and its path, removed when dropped before the rename.
struct Temp {
    file: File,
    path: tempfile::TempPath,
}

impl Temp {
    fn as_file(&self) -> &File {
        &self.file
    }
}

fn create_temp(target: &Path, dir: &Path, opts: &WriteOptions) -> Result<Temp, FileError> {
    let create_err = |source| FileError::CreateTemp {
        dir: dir.to_path_buf(),
        source,
    };
    match opts.temp {
        TempName::Random(prefix, suffix) => {
            let mut b = tempfile::Builder::new();
            b.prefix(prefix).suffix(suffix);
            if opts.perms == Perms::Umask {
                b.permissions(fs::Permissions::from_mode(0o666));
            }
            let (file, path) = b.tempfile_in(dir).map_err(create_err)?.into_parts();
            Ok(Temp { file, path })
        }
        TempName::Suffix(suffix) => {
            let mut name = target.as_os_str().to_owned();
            name.push(suffix);
            let path = PathBuf::from(name);
            let file = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o666)
                .open(&path)
                .map_err(create_err)?;
            let path = tempfile::TempPath::try_from_path(path).map_err(create_err)?;
            Ok(Temp { file, path })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileTypeExt;

    #[test]
    fn refuses_to_replace_a_device_through_a_link() {
        let d = tempfile::tempdir().unwrap();
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

    #[test]
    fn no_follow_replaces_the_link_and_a_failed_check_leaves_no_temp() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("real");
        fs::write(&real, "keep").unwrap();
        let link = d.path().join("out.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let opts = WriteOptions {
            temp: TempName::Suffix(".tmp"),
            perms: Perms::Umask,
            links: Links::NoFollow,
            durability: Durability::AsHermes,
        };
        write_atomic(&link, b"new", &opts).unwrap();
        assert_eq!(fs::read_to_string(&real).unwrap(), "keep");
        assert_eq!(fs::read_to_string(&link).unwrap(), "new");
        assert!(
            !fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        let r = write_atomic_with(&link, b"other", &opts, || {
            Err(FileError::NotUtf8 { path: link.clone() })
        });
        assert!(r.is_err());
        assert_eq!(fs::read_to_string(&link).unwrap(), "new");
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 2);
    }
}
