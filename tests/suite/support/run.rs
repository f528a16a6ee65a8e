//! Work done once per test run and shared by every test of the run, whether the tests run
//! as threads of one `cargo test` process or as one process each under cargo-nextest
//! (tools/test.sh): an expensive fixture (a filled `state.db`) or a prerequisite probe is
//! kept in a directory named after the run (`NEXTEST_RUN_ID`, else this process), built by
//! the first test that asks for it while the others wait on a file lock.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// This run's directory under the target's test scratch space. Directories of runs older
/// than a day are removed the first time a run asks for its own.
pub fn run_dir() -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("per-run");
    let run =
        std::env::var("NEXTEST_RUN_ID").unwrap_or_else(|_| format!("pid-{}", std::process::id()));
    let dir = root.join(run);
    if !dir.exists() {
        remove_old_runs(&root);
        fs::create_dir_all(&dir).unwrap();
    }
    dir
}

fn remove_old_runs(root: &Path) {
    let Ok(entries) = fs::read_dir(root) else {
        return;
    };
    let day = Duration::from_secs(24 * 3600);
    for e in entries.flatten() {
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| SystemTime::now().duration_since(t).ok())
            .is_some_and(|age| age > day);
        if old {
            let _ = fs::remove_dir_all(e.path());
        }
    }
}

/// The directory `name` of this run, made by `build` (given the empty directory) the first
/// time any test of the run asks for it; later callers, in this process or another, get the
/// finished directory. A `build` that panics leaves no half-built directory behind.
pub fn once_per_run(name: &str, build: impl FnOnce(&Path)) -> PathBuf {
    let run = run_dir();
    let dir = run.join(name);
    let done = run.join(format!("{name}.done"));
    let lock = File::create(run.join(format!("{name}.lock"))).unwrap();
    lock.lock().unwrap();
    if !done.exists() {
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        build(&dir);
        File::create(&done).unwrap();
    }
    dir
}

/// The answer of a yes/no probe named `key`, computed once per run by `probe`.
pub fn probed_once_per_run(key: &str, probe: impl FnOnce() -> bool) -> bool {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let mut h = DefaultHasher::new();
    key.hash(&mut h);
    let dir = once_per_run(&format!("probe-{:016x}", h.finish()), |d| {
        fs::write(d.join("answer"), if probe() { "yes" } else { "no" }).unwrap();
    });
    fs::read_to_string(dir.join("answer")).unwrap() == "yes"
}
