//! One reading of the auth stores per resolve pass ([`crate::hermes::pass`]:
//! `tools/list`, the server's `instructions`, `tools`, asking every tool at
//! once whether it can run).
//!
//! Why: each tool's availability check reads the sign-ins it could use, and
//! every read of [`store::path_for`](super::store::path_for) opens
//! `auth.json`, stats it and resolves the Hermes root through `readlink`s. A
//! bare `initialize` made 22 such lookups (66 syscalls on `auth.json`, 60
//! `readlink`s) before it was answered; inside a pass each distinct file is
//! read once and each `(home, provider)` resolved once.
//!
//! The memory serves only the pass it was made in (on its thread) and is
//! dropped with it: a call outside a pass reads the files again, so a
//! sign-in made meanwhile is seen. Writing a store ([`super::store::write_store`]) forgets what the
//! pass had read of it. Read errors are not kept (the next read tries again).

use std::collections::HashMap;
use std::convert::Infallible;
use std::hash::Hash;
use std::path::{Path, PathBuf};

use super::authjson::AuthStore;
use crate::hermes::pass;

/// What one pass has read: stores by path, and resolved store paths by
/// `(home, provider)`.
#[derive(Default)]
struct Memory {
    stores: HashMap<PathBuf, AuthStore>,
    paths: HashMap<(PathBuf, String), PathBuf>,
}

/// The value this pass keeps in `table` under `key`, else `make()`'s (kept
/// when `Ok` and a pass is open).
fn remembered<K: Eq + Hash, V: Clone, E>(
    table: fn(&mut Memory) -> &mut HashMap<K, V>,
    key: K,
    make: impl FnOnce() -> Result<V, E>,
) -> Result<V, E> {
    if let Some(v) = pass::with_kept(|m| table(m).get(&key).cloned()).flatten() {
        return Ok(v);
    }
    let v = make()?;
    pass::with_kept(|m| table(m).insert(key, v.clone()));
    Ok(v)
}

/// The store read at `path` in this pass, or `read()`'s answer.
pub(super) fn store<E>(
    path: &Path,
    read: impl FnOnce() -> Result<AuthStore, E>,
) -> Result<AuthStore, E> {
    remembered(|m| &mut m.stores, path.to_path_buf(), read)
}

/// `provider`'s store path for `home` as resolved in this pass, or `resolve()`'s.
pub(super) fn path(home: &Path, provider: &str, resolve: impl FnOnce() -> PathBuf) -> PathBuf {
    let key = (home.to_path_buf(), provider.to_string());
    let Ok(p) = remembered(|m| &mut m.paths, key, || Ok::<_, Infallible>(resolve()));
    p
}

/// Forget what this pass read of `path` and every path resolved (a write
/// can change which store holds a provider).
pub(super) fn forget(path: &Path) {
    pass::with_kept(|m: &mut Memory| {
        m.stores.remove(path);
        m.paths.clear();
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::store::{load, path_for, write_store};
    use crate::hermes::pass::run as pass;

    const XAI: &str = r#"{"providers":{"xai-oauth":{"tokens":{"access_token":"a"}}}}"#;
    const NOUS: &str = r#"{"providers":{"nous":{"access_token":"n"}}}"#;

    /// `<dir>/data` with an xAI sign-in, its profile `p` with none: the
    /// root, the profile and the profile's own `auth.json` (not written).
    fn signed_in_root_and_profile(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
        let root = dir.join("data");
        let profile = root.join("profiles/p");
        std::fs::create_dir_all(&profile).expect("mkdir");
        std::fs::write(root.join("auth.json"), XAI).expect("write");
        let own = profile.join("auth.json");
        (root, profile, own)
    }

    fn holds(path: &Path, provider: &str) -> bool {
        load(path).expect("load").provider(provider).is_some()
    }

    /// Inside a pass a file is read once (a change made meanwhile is not
    /// seen, nor a profile's new sign-in); after it, the files are read again.
    #[test]
    fn a_pass_reads_each_store_once_and_forgets_it_at_its_end() {
        let d = tempfile::tempdir().expect("tempdir");
        let (root, profile, own) = signed_in_root_and_profile(d.path());
        pass(|| {
            assert_eq!(path_for(&profile, "xai-oauth"), root.join("auth.json"));
            assert!(!holds(&own, "nous"));
            std::fs::write(&own, NOUS).expect("write");
            std::fs::write(root.join("auth.json"), "{}").expect("write");
            // Nested passes share the outer one.
            pass(|| {
                assert_eq!(path_for(&profile, "xai-oauth"), root.join("auth.json"));
                assert!(!holds(&own, "nous"));
            });
            assert!(
                crate::hermes::pass::is_open(),
                "a nested pass does not end the outer one"
            );
            assert!(holds(&root.join("auth.json"), "xai-oauth"));
        });
        assert!(!crate::hermes::pass::is_open());
        assert!(holds(&own, "nous"));
        assert_eq!(path_for(&profile, "xai-oauth"), own);
        // The next pass on the thread starts from the files, not from the last one's reads.
        pass(|| {
            assert!(holds(&own, "nous"));
            assert_eq!(path_for(&profile, "xai-oauth"), own);
        });
    }

    /// A write inside a pass is seen by the reads after it, and may move
    /// where a provider's sign-in is found.
    #[test]
    fn a_write_inside_a_pass_is_read_back() {
        let d = tempfile::tempdir().expect("tempdir");
        let (root, profile, own) = signed_in_root_and_profile(d.path());
        pass(|| {
            assert_eq!(path_for(&profile, "xai-oauth"), root.join("auth.json"));
            assert!(!holds(&own, "xai-oauth"));
            let store = crate::auth::authjson::AuthStore::from_value(
                serde_json::from_str(XAI).expect("json"),
            );
            write_store(&own, store).expect("write_store");
            assert!(holds(&own, "xai-oauth"));
            assert_eq!(path_for(&profile, "xai-oauth"), own);
        });
    }

    /// A store path is resolved once per pass (what saves the `readlink`s:
    /// the answer itself would be the same from the kept stores).
    #[test]
    fn a_path_is_resolved_once_per_pass() {
        let calls = std::cell::Cell::new(0);
        let resolve = || {
            calls.set(calls.get() + 1);
            PathBuf::from("/h/auth.json")
        };
        pass(|| {
            for _ in 0..3 {
                assert_eq!(
                    path(Path::new("/h"), "nous", resolve),
                    Path::new("/h/auth.json")
                );
            }
            path(Path::new("/h"), "xai-oauth", resolve);
        });
        assert_eq!(calls.get(), 2, "once per (home, provider)");
        path(Path::new("/h"), "nous", resolve);
        assert_eq!(calls.get(), 3, "outside a pass, every time");
    }

    /// A failed read is not kept.
    #[test]
    fn errors_are_read_again() {
        let d = tempfile::tempdir().expect("tempdir");
        let p = d.path().join("auth.json");
        std::fs::create_dir(&p).expect("a directory where the file goes");
        pass(|| {
            assert!(load(&p).is_err());
            std::fs::remove_dir(&p).expect("rmdir");
            std::fs::write(&p, NOUS).expect("write");
            assert!(holds(&p, "nous"));
        });
    }
}
