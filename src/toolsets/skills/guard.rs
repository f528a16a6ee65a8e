//! Path guards: no skill name or linked-file path may leave the skills roots.
//!
//! Hermes rejects absolute names (POSIX and Windows forms), drive letters and
//! `..` components in a name (`_skill_lookup_path_error`), rejects `..` in a
//! `file_path` and checks the resolved target with `validate_within_dir`. We
//! do the same with the same texts, and additionally treat `\` as a separator
//! and refuse symlinks that resolve outside the roots (Hermes only logs those).

use std::path::{Component, Path, PathBuf};

use crate::hermes::pass;

pub(crate) const NAME_NOT_RELATIVE: &str =
    "Skill name must be a relative path within the skills directory.";
pub(crate) const NAME_TRAVERSAL: &str = "Skill name cannot contain '..' path traversal components.";
pub(crate) const NAME_HINT: &str = "Use a skill name or relative path within the skills directory.";
pub(crate) const FILE_TRAVERSAL: &str = "Path traversal ('..') is not allowed.";
pub(crate) const FILE_HINT: &str = "Use a relative path within the skill directory";

/// Why a path was refused; the Display texts are Hermes' (hermes-agent:
/// tools/skills_tool.py, and `validate_within_dir` in tools/path_security.py).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum PathError {
    /// A `..` component in a linked-file path.
    #[error("{FILE_TRAVERSAL}")]
    Traversal,
    /// A Windows-absolute linked-file path (Hermes would join it unchanged).
    #[error(
        "Path escapes allowed directory: '{0}' is an absolute Windows path; file_path must be relative to the skill directory (e.g. 'references/api.md')."
    )]
    WindowsAbsolute(String),
    /// The resolved path (symlinks followed) is outside the root; Python
    /// 3.11's `relative_to` wording.
    #[error(
        "Path escapes allowed directory: '{}' is not in the subpath of '{}' OR one path is relative and the other is absolute.",
        .resolved.display(),
        .root.display()
    )]
    Escapes { resolved: PathBuf, root: PathBuf },
    /// A symlink chain longer than the kernel's own limit, or a loop: it
    /// cannot be resolved, so its end cannot be checked.
    #[error(
        "Path cannot be resolved: '{}' is a chain of more than {MAX_LINKS} symbolic links (or a loop); point the link straight at its target.",
        .0.display()
    )]
    TooManyLinks(PathBuf),
    /// The file actually opened is outside the root (the path changed
    /// between the check and the open).
    #[error(
        "Path escapes allowed directory: the file opened for '{}' is '{}', outside '{}'.",
        .path.display(),
        .opened.display(),
        .root.display()
    )]
    OpenedOutside {
        path: PathBuf,
        opened: PathBuf,
        root: PathBuf,
    },
}

/// The most symlinks one resolution follows: Linux's `MAXSYMLINKS`, so a
/// chain we accept is one the kernel can open, and one it refuses (`ELOOP`)
/// we refuse too, before anything is opened.
pub(crate) const MAX_LINKS: usize = 40;

/// The most bytes read from one skill file (SKILL.md, a linked file).
pub(crate) const FILE_CAP: u64 = 16 << 20;

/// True for `/x`, `\x`, `C:`, `C:\x`, `C:/x`, `\\server\share`, `//server/share`.
pub(crate) fn is_absolute_any(p: &str) -> bool {
    let b = p.as_bytes();
    p.starts_with('/')
        || p.starts_with('\\')
        || (b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':')
}

/// Whether `p` has a `..` component, splitting on both `/` and `\`.
pub(crate) fn has_traversal_component(p: &str) -> bool {
    p.split(['/', '\\']).any(|part| part == "..")
}

/// Hermes' `_skill_lookup_path_error` for a skill name.
pub(crate) fn skill_name_error(name: &str) -> Option<&'static str> {
    let candidate = name.trim();
    if is_absolute_any(candidate) {
        return Some(NAME_NOT_RELATIVE);
    }
    if has_traversal_component(candidate) {
        return Some(NAME_TRAVERSAL);
    }
    None
}

/// Python's `Path.resolve()` (non-strict, `os.path.realpath`): every symlink
/// is followed, dangling ones included; a missing rest is appended as written.
///
/// Unlike Python, a chain of more than [`MAX_LINKS`] links (or a loop) is an
/// error: stopping early would hand a half-resolved path, still a symlink,
/// to the OS, which would follow the rest unchecked.
pub(crate) fn resolve_lenient(p: &Path) -> Result<PathBuf, PathError> {
    use std::collections::VecDeque;
    use std::ffi::OsString;
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(p)
    };
    let mut queue: VecDeque<OsString> = VecDeque::new();
    let push_components = |q: &mut VecDeque<OsString>, path: &Path, front: bool| {
        let parts: Vec<OsString> = path
            .components()
            .filter_map(|c| match c {
                Component::Normal(n) => Some(n.to_os_string()),
                Component::ParentDir => Some(OsString::from("..")),
                _ => None,
            })
            .collect();
        if front {
            for part in parts.into_iter().rev() {
                q.push_front(part);
            }
        } else {
            q.extend(parts);
        }
    };
    push_components(&mut queue, &abs, false);
    let mut out = PathBuf::from("/");
    let mut hops = 0;
    while let Some(part) = queue.pop_front() {
        if part == ".." {
            out.pop();
            continue;
        }
        let next = out.join(&part);
        // A directory on the way already seen to be no link in this pass.
        let inner = !queue.is_empty();
        if inner && pass::with_kept(|d: &mut RealDirs| d.0.contains(&next)) == Some(true) {
            out = next;
            continue;
        }
        let is_link = std::fs::symlink_metadata(&next).is_ok_and(|m| m.file_type().is_symlink());
        if inner && !is_link {
            pass::with_kept(|d: &mut RealDirs| d.0.insert(next.clone()));
        }
        if is_link {
            hops += 1;
            if hops > MAX_LINKS {
                return Err(PathError::TooManyLinks(p.to_path_buf()));
            }
            // A link that cannot be read (it vanished, or is being swapped)
            // cannot be checked either.
            let target =
                std::fs::read_link(&next).map_err(|_| PathError::TooManyLinks(p.to_path_buf()))?;
            if target.is_absolute() {
                out = PathBuf::from("/");
            }
            push_components(&mut queue, &target, true);
            continue;
        }
        out = next;
    }
    Ok(out)
}

/// The directories [`resolve_lenient`] found to be no symlink, kept for the
/// open [`pass`] on this thread: a skills scan (`scan::skill_files` opens a
/// pass on each of its threads) reads hundreds of `SKILL.md` under the same
/// few directories, and each read resolved every component of its path
/// (`lstat`), five of seven of them the same for every file. A directory
/// swapped for a link meanwhile is still caught: [`read_within`] checks the
/// real path of the file it opened. Outside a pass nothing is kept.
#[derive(Default)]
struct RealDirs(std::collections::HashSet<PathBuf>);

/// Hermes' `validate_within_dir`: `path` must resolve (symlinks followed) to a
/// location inside `root`.
pub(crate) fn validate_within_dir(path: &Path, root: &Path) -> Result<PathBuf, PathError> {
    let resolved = resolve_lenient(path)?;
    let root = resolve_lenient(root)?;
    if resolved.starts_with(&root) {
        Ok(resolved)
    } else {
        Err(PathError::Escapes { resolved, root })
    }
}

/// Why a file inside a skills root could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReadError {
    #[error(transparent)]
    Path(#[from] PathError),
    #[error(transparent)]
    File(#[from] crate::fs::FileError),
    /// Read, but not UTF-8 (Python's `read_text(encoding="utf-8")` refuses it).
    #[error("'utf-8' codec can't decode the file: {0}")]
    NotUtf8(#[source] std::string::FromUtf8Error),
}

/// Read `path` only if the file actually opened lies inside one of `roots`
/// (resolved): the path is resolved completely and checked, the file is
/// opened through [`crate::fs`] (no blocking, regular files only, `cap`
/// bytes at most), and then the real path of the *opened* handle is checked
/// again, so a link swapped in between the check and the open is caught.
pub(crate) fn read_within(path: &Path, roots: &[PathBuf], cap: u64) -> Result<Vec<u8>, ReadError> {
    let resolved = resolve_lenient(path)?;
    let Some(root) = roots.iter().find(|r| resolved.starts_with(r)) else {
        return Err(PathError::Escapes {
            resolved,
            root: roots.first().cloned().unwrap_or_default(),
        }
        .into());
    };
    let file = crate::fs::open_regular(&resolved)?;
    if let Some(opened) = crate::fs::opened_path(&file)
        && !roots.iter().any(|r| opened.starts_with(r))
    {
        return Err(PathError::OpenedOutside {
            path: path.to_path_buf(),
            opened,
            root: root.clone(),
        }
        .into());
    }
    Ok(crate::fs::read_open_capped(file, &resolved, cap)?)
}

/// Check a linked-file path given to `skill_view` before it is joined onto the
/// skill directory. Returns the resolved target inside `skill_dir`.
pub(crate) fn check_file_path(skill_dir: &Path, file_path: &str) -> Result<PathBuf, PathError> {
    if has_traversal_component(file_path) {
        return Err(PathError::Traversal);
    }
    // A POSIX absolute path replaces the skill dir when joined (as in Hermes)
    // and fails the containment check below with Hermes' text.
    if is_absolute_any(file_path) && !file_path.starts_with('/') {
        return Err(PathError::WindowsAbsolute(file_path.to_string()));
    }
    validate_within_dir(&skill_dir.join(file_path), skill_dir)
}

/// Whether an already-resolved path lies inside one of the (resolved) roots.
pub(crate) fn within_any(resolved: &Path, roots: &[PathBuf]) -> bool {
    roots.iter().any(|r| resolved.starts_with(r))
}

/// Whether `path` resolves (completely) inside one of `roots`; an
/// unresolvable chain is not inside.
pub(crate) fn resolves_within(path: &Path, roots: &[PathBuf]) -> bool {
    resolve_lenient(path).is_ok_and(|r| within_any(&r, roots))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn names_must_stay_relative() {
        for abs in [
            "/etc/passwd",
            " /etc ",
            "C:\\skills\\x",
            "C:/skills/x",
            "c:x",
            "\\\\server\\share\\x",
            "//server/share",
            "\\rooted",
        ] {
            assert_eq!(skill_name_error(abs), Some(NAME_NOT_RELATIVE), "{abs}");
        }
        for trav in [
            "..",
            "../outside",
            "cat/../../x",
            "a/..",
            "..\\x",
            "a\\..\\..\\b",
        ] {
            assert_eq!(skill_name_error(trav), Some(NAME_TRAVERSAL), "{trav}");
        }
        for ok in [
            "axolotl",
            "mlops/axolotl",
            "a..b",
            "...",
            "ns:skill",
            "x.md",
        ] {
            assert_eq!(skill_name_error(ok), None, "{ok}");
        }
    }

    #[test]
    fn file_paths_cannot_escape_the_skill_dir() {
        let t = tempfile::tempdir().unwrap();
        let skill = t.path().join("skills/s");
        std::fs::create_dir_all(skill.join("references")).unwrap();
        std::fs::write(skill.join("references/api.md"), "ok").unwrap();
        std::fs::write(t.path().join("secret.txt"), "secret").unwrap();
        symlink(
            t.path().join("secret.txt"),
            skill.join("references/leak.md"),
        )
        .unwrap();
        symlink(t.path(), skill.join("up")).unwrap();
        symlink("/nonexistent/elsewhere", skill.join("dangling")).unwrap();

        let ok = check_file_path(&skill, "references/api.md").unwrap();
        assert!(ok.ends_with("references/api.md"));
        // Missing files inside the dir pass the guard (the caller reports not found).
        assert!(check_file_path(&skill, "references/none.md").is_ok());
        assert!(check_file_path(&skill, "./references/api.md").is_ok());

        for trav in [
            "../secret.txt",
            "references/../../secret.txt",
            "..\\secret.txt",
            "..",
        ] {
            assert_eq!(
                check_file_path(&skill, trav).unwrap_err().to_string(),
                FILE_TRAVERSAL,
                "{trav}"
            );
        }
        for abs in [
            "/etc/passwd",
            "C:\\Windows\\win.ini",
            "C:/Windows",
            "\\\\srv\\share\\f",
        ] {
            let e = check_file_path(&skill, abs).unwrap_err().to_string();
            assert!(
                e.starts_with("Path escapes allowed directory"),
                "{abs}: {e}"
            );
        }
        for link in ["references/leak.md", "up/secret.txt", "dangling/x"] {
            let e = check_file_path(&skill, link).unwrap_err().to_string();
            assert!(
                e.starts_with("Path escapes allowed directory"),
                "{link}: {e}"
            );
        }
    }

    #[test]
    fn chains_past_the_kernel_limit_and_loops_are_refused() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("root");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("real"), "x").unwrap();
        let make = |n: usize, prefix: &str| {
            for i in 1..=n {
                let to = if i == n {
                    "real".to_string()
                } else {
                    format!("{prefix}{}", i + 1)
                };
                symlink(to, root.join(format!("{prefix}{i}"))).unwrap();
            }
            root.join(format!("{prefix}1"))
        };
        let ok = make(MAX_LINKS, "a");
        assert!(resolve_lenient(&ok).unwrap().ends_with("root/real"));
        // The kernel agrees: it opens a chain of exactly MAX_LINKS...
        assert!(std::fs::read(&ok).is_ok());
        let long = make(MAX_LINKS + 1, "b");
        // ...and refuses one more, as we do.
        assert_eq!(
            std::fs::read(&long).unwrap_err().raw_os_error(),
            Some(libc::ELOOP)
        );
        let e = resolve_lenient(&long).unwrap_err();
        assert_eq!(e, PathError::TooManyLinks(long.clone()));
        assert!(e.to_string().contains("more than 40 symbolic links"), "{e}");
        symlink("loop2", root.join("loop1")).unwrap();
        symlink("loop1", root.join("loop2")).unwrap();
        assert!(matches!(
            validate_within_dir(&root.join("loop1"), &root),
            Err(PathError::TooManyLinks(_))
        ));
        let roots = [resolve_lenient(&root).unwrap()];
        assert!(read_within(&ok, &roots, 10).is_ok());
        assert!(matches!(
            read_within(&long, &roots, 10),
            Err(ReadError::Path(PathError::TooManyLinks(_)))
        ));
    }

    #[test]
    fn symlinked_skill_dir_outside_the_root_is_detected() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("skills");
        let outside = t.path().join("outside/evil");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("SKILL.md"), "---\nname: evil\n---\n").unwrap();
        symlink(&outside, root.join("evil")).unwrap();
        let roots = vec![std::fs::canonicalize(&root).unwrap()];
        let resolved = resolve_lenient(&root.join("evil/SKILL.md")).unwrap();
        assert!(!within_any(&resolved, &roots));
        assert!(validate_within_dir(&root.join("evil"), &root).is_err());
        // A symlink that stays inside the root is fine.
        std::fs::create_dir_all(root.join("real")).unwrap();
        symlink(root.join("real"), root.join("alias")).unwrap();
        assert!(within_any(
            &resolve_lenient(&root.join("alias")).unwrap(),
            &roots
        ));
    }

    /// In a pass, a directory on the way is looked at once ([`RealDirs`]):
    /// one swapped for a link to outside the roots afterwards is not seen by
    /// the resolution, and the read still refuses the file it opened there.
    /// Outside a pass the resolution sees the link.
    #[test]
    fn a_directory_swapped_for_a_link_during_a_pass_is_still_refused() {
        let t = tempfile::tempdir().unwrap();
        let base = resolve_lenient(t.path()).unwrap();
        for top in ["skills", "outside"] {
            std::fs::create_dir_all(base.join(top).join("cat/s")).unwrap();
            std::fs::write(base.join(top).join("cat/s/SKILL.md"), top).unwrap();
        }
        let roots = [base.join("skills")];
        let file = base.join("skills/cat/s/SKILL.md");
        pass::run(|| {
            assert_eq!(read_within(&file, &roots, 100).unwrap(), b"skills");
            std::fs::rename(base.join("skills/cat"), base.join("cat.old")).unwrap();
            symlink(base.join("outside/cat"), base.join("skills/cat")).unwrap();
            let e = read_within(&file, &roots, 100).unwrap_err();
            assert!(
                matches!(e, ReadError::Path(PathError::OpenedOutside { .. })),
                "{e}"
            );
        });
        let e = read_within(&file, &roots, 100).unwrap_err();
        assert!(
            matches!(e, ReadError::Path(PathError::Escapes { .. })),
            "{e}"
        );
    }
}
