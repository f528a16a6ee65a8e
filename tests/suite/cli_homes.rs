//! A Hermes home named on the command line that cannot be one (missing, or a file) is an
//! error that says which, the same for `migrate` and `tools`.

use std::fs;

use super::support::common::TestEnv;

#[test]
fn a_hermes_home_that_is_missing_or_a_file_is_refused_with_the_reason() {
    let env = TestEnv::new();
    let file = env.dir.path().join("a-file");
    fs::write(&file, "x").unwrap();
    let missing = env.dir.path().join("missing");
    for (home, why) in [(&file, "is not a directory"), (&missing, "does not exist")] {
        for cmd in [&["migrate", "--no-plugins"][..], &["tools"][..]] {
            let out = env
                .cmd()
                .args(cmd)
                .arg("--hermes-home")
                .arg(home)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(
                out.status.code(),
                Some(2),
                "{cmd:?} {}: {err}",
                home.display()
            );
            assert!(
                err.contains(&format!("the Hermes home {} {why}", home.display())),
                "{cmd:?}: {err}"
            );
            assert!(err.contains("--hermes-home"), "{err}");
        }
    }
}
