//! Installing without Rust: `pyproject.toml` builds a wheel (maturin,
//! `bindings = "bin"`) that carries the binary. Built here with the dev
//! profile (it reuses target/debug; a release build would take minutes), then
//! installed into a fresh venv next to hermes-agent 0.19.0, whose `hermes-mcp
//! migrate` must register that venv's binary with the real codex.
//! FAILS when maturin, the Hermes venv or codex is missing.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::common::{TestEnv, hermes_python};
use super::migrate_codex::codex_bin;

/// maturin: `$MATURIN`, else on PATH, else next to Hermes' Python (tools/test.sh installs it there).
fn maturin() -> PathBuf {
    let hermes_py = hermes_python("hermes_cli");
    let candidates = [
        std::env::var_os("MATURIN").map(PathBuf::from),
        Some(PathBuf::from("maturin")),
        hermes_py.parent().map(|d| d.join("maturin")),
    ];
    for c in candidates.into_iter().flatten() {
        if Command::new(&c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
        {
            return c;
        }
    }
    panic!(
        "maturin is missing: run tools/test.sh (it runs `{} -m pip install maturin==1.16.0`) or set MATURIN",
        hermes_py.display()
    );
}

fn run(c: &mut Command, what: &str) -> String {
    let out = c.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed:\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn site_packages(python: &Path) -> PathBuf {
    let out = run(
        Command::new(python).args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ]),
        "find site-packages",
    );
    PathBuf::from(out.trim())
}

#[test]
fn wheel_installs_next_to_hermes_and_migrate_registers_its_binary() {
    let maturin = maturin();
    let hermes_py = hermes_python("hermes_cli");
    codex_bin();
    let env = TestEnv::under_cache("wheel-");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));

    // The wheel, as `pip wheel .` would make it, but with the dev profile.
    let dist = env.dir.path().join("dist");
    // A minimal environment: what `cargo test` adds for test processes (LD_LIBRARY_PATH,
    // CARGO_*) would change fingerprints and rebuild every dependency into target/debug.
    let mut build = Command::new(&maturin);
    build.env_clear();
    for (k, v) in std::env::vars_os() {
        let keep = [
            "PATH",
            "HOME",
            "RUSTUP_HOME",
            "RUSTUP_TOOLCHAIN",
            "CARGO_HOME",
            "CARGO_TARGET_DIR",
            "CARGO_INCREMENTAL",
            "TMPDIR",
        ];
        if keep.iter().any(|x| k == *x) {
            build.env(k, v);
        }
    }
    run(
        build
            .current_dir(root)
            .args(["build", "--profile", "dev", "--quiet", "--out"])
            .arg(&dist),
        "maturin build",
    );
    let wheels: Vec<PathBuf> = fs::read_dir(&dist)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "whl"))
        .collect();
    assert_eq!(wheels.len(), 1, "{wheels:?}");
    let wheel = &wheels[0];
    let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with(&format!(
            "hermes_mcp-{}-py3-none-",
            env!("CARGO_PKG_VERSION")
        )),
        "{name}"
    );

    // A fresh venv that sees hermes-agent 0.19.0 (Hermes' site-packages via a .pth: offline).
    let venv = env.dir.path().join("venv");
    run(
        Command::new(&hermes_py).args(["-m", "venv"]).arg(&venv),
        "python -m venv",
    );
    let py = venv.join("bin/python");
    fs::write(
        site_packages(&py).join("hermes-agent.pth"),
        format!("{}\n", site_packages(&hermes_py).display()),
    )
    .unwrap();
    run(
        Command::new(&py)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--no-index",
                "--disable-pip-version-check",
            ])
            .arg(wheel),
        "pip install the wheel",
    );
    let versions = run(
        Command::new(&py).args([
            "-c",
            "import importlib.metadata as m; print(m.version('hermes-agent'), m.version('hermes-mcp'))",
        ]),
        "versions",
    );
    assert_eq!(
        versions.trim(),
        format!("0.19.0 {}", env!("CARGO_PKG_VERSION"))
    );
    let exe = venv.join("bin/hermes-mcp");
    assert!(
        exe.is_file(),
        "the wheel put no hermes-mcp in {}",
        venv.join("bin").display()
    );

    // That binary, found on the venv's PATH, migrates; codex sees it as hermes-tools.
    env.write_hermes(
        "config.yaml",
        "mcp_servers:\n  fs:\n    command: npx\n    args: [\"-y\", \"fs-mcp\"]\n",
    );
    let path = format!(
        "{}:{}",
        venv.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut c = Command::new("hermes-mcp");
    env.apply(&mut c);
    run(
        c.env("PATH", &path).args(["migrate", "--no-plugins"]),
        "hermes-mcp migrate",
    );

    let mut c = Command::new(codex_bin());
    env.apply(&mut c);
    let got: Value = serde_json::from_str(&run(
        c.args(["mcp", "get", "hermes-tools", "--json"]),
        "codex mcp get hermes-tools",
    ))
    .unwrap();
    let command = got["transport"]["command"]
        .as_str()
        .unwrap_or_else(|| panic!("{got}"));
    assert_eq!(
        fs::canonicalize(command).unwrap(),
        fs::canonicalize(&exe).unwrap(),
        "{got}"
    );
    assert_eq!(
        got["transport"]["args"],
        serde_json::json!(["serve"]),
        "{got}"
    );
    let mut c = Command::new(codex_bin());
    env.apply(&mut c);
    run(
        c.args(["app-server", "--strict-config", "--print-startup-config"]),
        "codex app-server --strict-config",
    );
}
