//! Installing without Rust: `pyproject.toml` builds a wheel (maturin, `bindings = "bin"`) that
//! carries the binary. The wheel tested here is the portable one the README documents,
//! `maturin build --zig --compatibility manylinux_2_28`: zig (PyPI's `ziglang`) compiles the C
//! dependencies (bundled SQLite, ring) against glibc 2.28's headers and links the binary against
//! glibc 2.28's symbol versions, so the wheel runs on any glibc >= 2.28, not only on the glibc of
//! the machine that built it. It is built once per run, with the dev profile, into
//! target/x86_64-unknown-linux-gnu/debug (tools/test.sh builds it before the tests start, so here
//! the build is a no-op), checked with PyPA's `auditwheel show`, and installed into fresh venvs:
//! alone (`--version`, `migrate --dry-run`) and next to hermes-agent 0.19.0, whose
//! `hermes-mcp migrate` must register that venv's binary with the real codex.
//! FAILS when maturin, ziglang, auditwheel, the Hermes venv or codex is missing.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

use super::support::common::{TestEnv, hermes_python, succeeded};
use super::support::prereq::codex_bin;
use super::support::run::once_per_run;

/// The platform tag the wheel is built for and must be consistent with (PEP 600).
const MANYLINUX: &str = "manylinux_2_28";

/// A Python tool (maturin, auditwheel): `$VAR`, else on PATH, else next to Hermes' Python
/// (tools/test.sh pip-installs both there, at the versions it names).
fn python_tool(name: &str, var: &str) -> PathBuf {
    let hermes_py = hermes_python("hermes_cli");
    let candidates = [
        std::env::var_os(var).map(PathBuf::from),
        Some(PathBuf::from(name)),
        hermes_py.parent().map(|d| d.join(name)),
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
        "{name} is missing: run tools/test.sh (it runs `{} -m pip install {name}`) or set {var}",
        hermes_py.display()
    );
}

/// The Python whose `-m ziglang` gives maturin its zig: Hermes' (tools/test.sh installs ziglang
/// there). maturin asks `python3` on PATH unless CARGO_ZIGBUILD_PYTHON_PATH names one
/// (cargo-zigbuild's `Zig::find_zig`).
fn zig_python() -> PathBuf {
    let py = hermes_python("hermes_cli");
    let ok = Command::new(&py)
        .args(["-m", "ziglang", "version"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "`{} -m ziglang` does not run: maturin's --zig needs PyPI's ziglang; run tools/test.sh \
         (it pip-installs ziglang there)",
        py.display()
    );
    py
}

fn run(c: &mut Command, what: &str) -> String {
    succeeded(&c.output().unwrap_or_else(|e| panic!("{what}: {e}")), what)
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

/// The manylinux wheel, built once for every test of this run.
fn manylinux_wheel() -> &'static Path {
    static WHEEL: OnceLock<PathBuf> = OnceLock::new();
    WHEEL.get_or_init(|| {
        // Once per run, also across nextest's test processes (the wheel group runs them one
        // at a time, so the second does not start maturin again).
        let dir = once_per_run("manylinux-wheel", |d| {
            let wheel = build_manylinux_wheel();
            fs::write(d.join("path"), wheel.to_str().unwrap()).unwrap();
        });
        PathBuf::from(fs::read_to_string(dir.join("path")).unwrap())
    })
}

/// `maturin build --zig --compatibility manylinux_2_28 --profile dev`: the README's command with
/// the dev profile. tools/test.sh runs the same command, with the same environment, before the
/// tests; keep the two alike or this build starts over from the first dependency.
fn build_manylinux_wheel() -> PathBuf {
    let maturin = python_tool("maturin", "MATURIN");
    let zig_python = zig_python();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dist = Path::new(env!("CARGO_TARGET_TMPDIR")).join("manylinux-wheel");
    if dist.exists() {
        fs::remove_dir_all(&dist).unwrap();
    }
    // A minimal environment: what `cargo test` adds for test processes (LD_LIBRARY_PATH,
    // CARGO_*) would change fingerprints and rebuild every dependency.
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
            .env("CARGO_ZIGBUILD_PYTHON_PATH", &zig_python)
            .args(["build", "--zig", "--compatibility", MANYLINUX])
            .args(["--profile", "dev", "--quiet", "--out"])
            .arg(&dist),
        "maturin build --zig",
    );
    let wheels: Vec<PathBuf> = fs::read_dir(&dist)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "whl"))
        .collect();
    assert_eq!(wheels.len(), 1, "{wheels:?}");
    let name = wheels[0].file_name().unwrap().to_string_lossy();
    assert_eq!(
        name,
        format!(
            "hermes_mcp-{}-py3-none-{MANYLINUX}_x86_64.whl",
            env!("CARGO_PKG_VERSION")
        )
    );
    wheels[0].clone()
}

/// A fresh venv (`python -m venv --without-pip` with Hermes' Python: seeding pip into a venv
/// costs some 8 s of CPU, and [`pip_install`] brings its own).
fn fresh_venv(dir: &Path) -> PathBuf {
    let venv = dir.join("venv");
    run(
        Command::new(hermes_python("hermes_cli"))
            .args(["-m", "venv", "--without-pip"])
            .arg(&venv),
        "python -m venv",
    );
    venv
}

/// Install the wheel into `venv` from the file alone (no index: the tests run offline), with
/// the pip of Hermes' Python acting on the venv's interpreter (`pip --python`).
fn pip_install(venv: &Path, wheel: &Path) {
    run(
        Command::new(hermes_python("hermes_cli"))
            .args(["-m", "pip", "--python"])
            .arg(venv.join("bin/python"))
            .args([
                "install",
                "--quiet",
                "--no-index",
                "--disable-pip-version-check",
            ])
            .arg(wheel),
        "pip install the wheel",
    );
}

/// A file inside the wheel (a zip), read with Python's zipfile.
fn wheel_member(wheel: &Path, member: &str) -> String {
    run(
        Command::new(hermes_python("hermes_cli"))
            .args([
                "-c",
                "import sys, zipfile; sys.stdout.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]).decode())",
            ])
            .arg(wheel)
            .arg(member),
        &format!("read {member} from the wheel"),
    )
}

#[test]
fn manylinux_wheel_passes_auditwheel_carries_the_license_and_runs_in_a_fresh_venv() {
    let wheel = manylinux_wheel();
    let auditwheel = python_tool("auditwheel", "AUDITWHEEL");

    // PyPA's auditwheel agrees with the tag: no symbol above glibc 2.28, no library outside the
    // manylinux policy (its output is wrapped at 72 columns: compare word by word).
    let shown = run(
        Command::new(&auditwheel).arg("show").arg(wheel),
        "auditwheel show",
    );
    let words = shown.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains(&format!(
            "is consistent with the following platform tag: \"{MANYLINUX}_x86_64\""
        )),
        "{shown}"
    );
    let glibc: Vec<u32> = shown
        .split("GLIBC_2.")
        .skip(1)
        .map(|rest| {
            let minor: String = rest.chars().take_while(char::is_ascii_digit).collect();
            minor.parse().unwrap_or_else(|_| panic!("{shown}"))
        })
        .collect();
    assert!(
        !glibc.is_empty(),
        "auditwheel listed no glibc symbol versions: {shown}"
    );
    assert!(glibc.iter().all(|m| *m <= 28), "{shown}");

    // The MIT license travels in the wheel's dist-info, word for word.
    let version = env!("CARGO_PKG_VERSION");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let license = fs::read_to_string(root.join("LICENSE"))
        .expect("a LICENSE file at the repository root (Cargo.toml's license is MIT)");
    assert_eq!(env!("CARGO_PKG_LICENSE"), "MIT");
    assert!(license.starts_with("MIT License\n"), "{license}");
    assert_eq!(
        wheel_member(
            wheel,
            &format!("hermes_mcp-{version}.dist-info/licenses/LICENSE")
        ),
        license
    );
    let metadata = wheel_member(wheel, &format!("hermes_mcp-{version}.dist-info/METADATA"));
    assert!(
        metadata.lines().any(|l| l == "License-File: LICENSE"),
        "{metadata}"
    );
    // Cargo.toml's license, as maturin writes it (the legacy field, or PEP 639's).
    assert!(
        metadata
            .lines()
            .any(|l| l == "License: MIT" || l == "License-Expression: MIT"),
        "{metadata}"
    );

    // A fresh venv with nothing but the wheel: the binary runs and migrate --dry-run shows a
    // diff that registers this binary, and writes nothing.
    let env = TestEnv::new();
    let venv = fresh_venv(env.dir.path());
    pip_install(&venv, wheel);
    let exe = venv.join("bin/hermes-mcp");
    let mut c = Command::new(&exe);
    env.apply(&mut c);
    assert_eq!(
        run(c.arg("--version"), "hermes-mcp --version").trim(),
        format!("hermes-mcp {version}")
    );
    env.write_hermes(
        "config.yaml",
        "mcp_servers:\n  fs:\n    command: npx\n    args: [\"-y\", \"fs-mcp\"]\n",
    );
    let mut c = Command::new(&exe);
    env.apply(&mut c);
    let diff = run(
        c.args(["migrate", "--dry-run", "--no-plugins"]),
        "hermes-mcp migrate --dry-run",
    );
    assert!(diff.contains("+[mcp_servers.fs]\n"), "{diff}");
    assert!(
        diff.contains(&format!(
            "+command = \"{}\"\n",
            fs::canonicalize(&exe).unwrap().display()
        )),
        "{diff}"
    );
    assert!(!env.codex_home().join("config.toml").exists());
}

#[test]
fn wheel_installs_next_to_hermes_and_migrate_registers_its_binary() {
    let hermes_py = hermes_python("hermes_cli");
    codex_bin();
    let wheel = manylinux_wheel();
    let env = TestEnv::under_cache("wheel-");

    // A fresh venv that sees hermes-agent 0.19.0 (Hermes' site-packages via a .pth: offline).
    let venv = fresh_venv(env.dir.path());
    let py = venv.join("bin/python");
    fs::write(
        site_packages(&py).join("hermes-agent.pth"),
        format!("{}\n", site_packages(&hermes_py).display()),
    )
    .unwrap();
    pip_install(&venv, wheel);
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
