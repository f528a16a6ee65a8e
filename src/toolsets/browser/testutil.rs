//! Helpers for this toolset's unit tests.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Write each of `names` in `dir` (one byte each), last modified `age` ago;
/// their paths, in the same order.
pub(crate) fn write_aged<const N: usize>(
    dir: &Path,
    names: [&str; N],
    age: Duration,
) -> [PathBuf; N] {
    names.map(|n| {
        let p = dir.join(n);
        std::fs::write(&p, b"x").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&p)
            .unwrap()
            .set_modified(SystemTime::now() - age)
            .unwrap();
        p
    })
}
