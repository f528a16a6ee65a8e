//! Where the tools put the files they make (Hermes' naming rules), how a
//! user's path is made absolute, and the clean-up of old outputs.

use std::fs;
use std::path::{Path, PathBuf};

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
