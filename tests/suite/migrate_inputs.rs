//! Inputs that used to hang, crash or do damage: special files, deep nesting,
//! odd block layouts, read-only files and directories. Every one ends with
//! exit 0 or 2 and a message, within seconds, and nothing is damaged.

use std::fs;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use super::support::common::{TestEnv, exited_within};
use super::support::fs::mkfifo;
use super::support::migrate::{END, START};

/// Run with a deadline: a hang fails the test instead of blocking the suite.
fn run_bounded(mut cmd: Command) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn hermes-mcp");
    if exited_within(&mut child, 20).is_none() {
        let _ = child.kill();
        let out = child.wait_with_output().unwrap();
        panic!(
            "migrate hung (killed after 20 s); stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    child.wait_with_output().unwrap()
}

fn migrate(env: &TestEnv, args: &[&str]) -> Output {
    let mut c = env.cmd();
    c.arg("migrate").arg("--no-plugins").args(args);
    run_bounded(c)
}

fn code(out: &Output) -> i32 {
    out.status
        .code()
        .unwrap_or_else(|| panic!("killed by a signal: {:?}", out.status))
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn is_root() -> bool {
    unsafe { libc::geteuid() == 0 }
}

#[test]
fn migrate_refuses_special_files_without_blocking_or_replacing_them() {
    let env = TestEnv::new();
    env.write_hermes("config.yaml", "mcp_servers:\n  a:\n    command: x\n");
    let target = env.codex_home().join("config.toml");
    let check = |env: &TestEnv, kind: &str, what: &str| {
        let out = migrate(env, &[]);
        assert_eq!(code(&out), 2, "{what}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains(&format!("is {kind}, not a regular file")),
            "{what}: {err}"
        );
        assert!(err.contains("hint:"), "{what}: {err}");
        // The dry run and --check refuse the same way.
        assert_eq!(code(&migrate(env, &["--check"])), 2, "{what}");
    };

    // config.toml a FIFO: reading it used to block forever.
    mkfifo(&target);
    check(&env, "a FIFO (named pipe)", "FIFO config.toml");
    assert!(fs::symlink_metadata(&target).unwrap().file_type().is_fifo());
    fs::remove_file(&target).unwrap();

    // config.toml a directory.
    fs::create_dir(&target).unwrap();
    check(&env, "a directory", "directory config.toml");
    fs::remove_dir(&target).unwrap();

    // config.toml a socket.
    let sock = std::os::unix::net::UnixListener::bind(&target).unwrap();
    check(&env, "a socket", "socket config.toml");
    drop(sock);
    fs::remove_file(&target).unwrap();

    // config.toml a symlink to a character device: as root, migrate used to
    // rename a regular file over the device node.
    let dev = env.dir.path().join("null-device");
    if is_root() {
        let st = Command::new("mknod")
            .arg(&dev)
            .args(["c", "1", "3"])
            .status()
            .unwrap();
        assert!(st.success());
    } else {
        std::os::unix::fs::symlink("/dev/null", &dev).unwrap();
    }
    std::os::unix::fs::symlink(&dev, &target).unwrap();
    check(&env, "a character device", "config.toml -> char device");
    assert!(fs::metadata(&dev).unwrap().file_type().is_char_device());
    assert!(
        fs::symlink_metadata(&target)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    fs::remove_file(&target).unwrap();

    // config.yaml a FIFO (blocked forever) and a link to /dev/zero (grew until killed).
    let yaml = env.hermes_home().join("config.yaml");
    fs::remove_file(&yaml).unwrap();
    mkfifo(&yaml);
    check(&env, "a FIFO (named pipe)", "FIFO config.yaml");
    fs::remove_file(&yaml).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &yaml).unwrap();
    check(&env, "a character device", "config.yaml -> /dev/zero");
    assert!(!target.exists(), "nothing may be written");
}

#[test]
fn migrate_config_yaml_over_16_mib_is_refused() {
    let env = TestEnv::new();
    let yaml = env.hermes_home().join("config.yaml");
    let f = fs::File::create(&yaml).unwrap();
    f.set_len((16 << 20) + 1).unwrap();
    let out = migrate(&env, &[]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("larger than 16777216 bytes"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn migrate_deep_nesting_is_an_error_not_a_crash() {
    let env = TestEnv::new();
    env.write_hermes("config.yaml", "mcp_servers: {}\n");
    let target = env.codex_home().join("config.toml");
    let deep = [
        format!("notify = {}\n", "[".repeat(2500)),
        format!("notify = {}{}\n", "[".repeat(2500), "]".repeat(2500)),
        format!("a = {}{}\n", "{x = ".repeat(2500), "}".repeat(2500)),
        format!("a = 1\n\n{START}\nx = {}\n{END}\n", "[".repeat(5000)),
        format!("{START}\n{}\n", "[[".repeat(3000)),
    ];
    for text in &deep {
        fs::write(&target, text).unwrap();
        for args in [&[][..], &["--remove"][..], &["--dry-run"][..]] {
            let out = migrate(&env, args);
            assert_eq!(code(&out), 2, "{args:?} {}", stderr(&out));
            assert!(
                stderr(&out).contains("is not valid TOML"),
                "{}",
                stderr(&out)
            );
        }
        assert_eq!(&fs::read_to_string(&target).unwrap(), text);
    }
    // YAML nesting has a limit too.
    env.write_hermes("config.yaml", &format!("a: {}\n", "[".repeat(100_000)));
    let out = migrate(&env, &[]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
}

#[test]
fn migrate_merges_blocks_separated_by_one_blank_line() {
    let env = TestEnv::new();
    env.write_hermes("config.yaml", "mcp_servers:\n  a:\n    command: x\n");
    let target = env.codex_home().join("config.toml");
    let one = |n: &str| format!("{START}\n[mcp_servers.{n}]\ncommand = \"old\"\n{END}\n");
    for (sep, pre) in [
        ("\n", "a = 1\n\n"),
        ("", "a = 1\n\n"),
        ("\n\n", ""),
        ("\n", ""),
    ] {
        let text = format!(
            "{pre}{}{sep}{}{sep}{}\n[tui]\nx = 1\n",
            one("p"),
            one("q"),
            one("r")
        );
        fs::write(&target, &text).unwrap();
        let out = migrate(&env, &["--json", "--no-hermes-tools"]);
        assert_eq!(code(&out), 0, "{sep:?} {pre:?}: {}", stderr(&out));
        let r: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(r["replaced_blocks"], 3);
        assert!(
            r["notes"][0]
                .as_str()
                .unwrap()
                .contains("merged them into one"),
            "{r}"
        );
        let new = fs::read_to_string(&target).unwrap();
        assert_eq!(new.matches(START).count(), 1, "{new}");
        let t: toml::Table = new.parse().unwrap();
        let servers = t["mcp_servers"].as_table().unwrap();
        assert_eq!(servers.keys().collect::<Vec<_>>(), ["a"], "{new}");
        assert_eq!(t.contains_key("a"), !pre.is_empty());
        assert!(new.ends_with("\n\n[tui]\nx = 1\n"), "{new:?}");
        // Stable from now on.
        assert_eq!(code(&migrate(&env, &["--check", "--no-hermes-tools"])), 0);
    }
}

#[test]
fn migrate_reports_replacing_a_read_only_config_toml() {
    let env = TestEnv::new();
    env.write_hermes("config.yaml", "mcp_servers:\n  a:\n    command: x\n");
    let target = env.codex_home().join("config.toml");
    fs::write(&target, "model = \"m\"\n").unwrap();
    fs::set_permissions(&target, fs::Permissions::from_mode(0o444)).unwrap();
    let out = migrate(&env, &["--dry-run"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stderr(&out).contains("is read-only"), "{}", stderr(&out));
    let out = migrate(&env, &["--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["written"], true);
    assert_eq!(r["replaced_read_only"], true);
    assert!(
        r["notes"].to_string().contains("was read-only (mode 0444)"),
        "{r}"
    );
    assert!(fs::read_to_string(&target).unwrap().contains(START));
    assert_eq!(
        fs::metadata(&target).unwrap().permissions().mode() & 0o777,
        0o444
    );
    // The text report says so too (when it changes again).
    env.write_hermes("config.yaml", "mcp_servers:\n  b:\n    command: x\n");
    let out = migrate(&env, &[]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("note: ")
            && String::from_utf8_lossy(&out.stdout).contains("read-only"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn migrate_unwritable_codex_home_is_not_called_lock_contention() {
    let env = TestEnv::new();
    env.write_hermes("config.yaml", "mcp_servers:\n  a:\n    command: x\n");
    for d in [env.dir.path(), &env.hermes_home(), &env.home()] {
        fs::set_permissions(d, fs::Permissions::from_mode(0o755)).unwrap();
    }
    fs::set_permissions(
        env.hermes_home().join("config.yaml"),
        fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    let target = env.codex_home().join("config.toml");
    fs::write(&target, "model = \"m\"\n").unwrap();
    fs::set_permissions(&target, fs::Permissions::from_mode(0o644)).unwrap();
    fs::set_permissions(env.codex_home(), fs::Permissions::from_mode(0o555)).unwrap();
    let mut c = env.cmd();
    c.args(["migrate", "--no-plugins", "--no-hermes-tools"]);
    if is_root() {
        // Root ignores permission bits: run as nobody.
        c.uid(65534).gid(65534);
    }
    let out = run_bounded(c);
    fs::set_permissions(env.codex_home(), fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("permission denied"), "{err}");
    assert!(err.contains("make it writable"), "{err}");
    assert!(!err.contains("only one migrate"), "{err}");
    assert_eq!(fs::read_to_string(&target).unwrap(), "model = \"m\"\n");
}
