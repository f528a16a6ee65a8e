//! Rules about the source tree that keep the product honest.

use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Codex passes a stdio server only the variables listed in `env_vars`, and
/// `migrate` builds that list from src/hermes/envvars.rs. A direct
/// `std::env::var` elsewhere would read a variable that never arrives.
#[test]
fn environment_is_read_only_through_envvars() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let allowed = ["hermes/envvars.rs", "hermes/env.rs"];
    let mut offenders = Vec::new();
    for f in &files {
        let rel = f
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if allowed.contains(&rel.as_str()) {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        for (i, line) in text.lines().enumerate() {
            if line.contains("env::var(")
                || line.contains("env::var_os(")
                || line.contains("env::vars(")
            {
                offenders.push(format!("src/{rel}:{}: {}", i + 1, line.trim()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "read env vars through hermes::envvars:\n{}",
        offenders.join("\n")
    );
}

/// `serve` must never write to stdout outside the protocol.
#[test]
fn no_print_to_stdout_in_server_code() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    for d in ["server", "toolsets", "net", "hermes"] {
        if src.join(d).is_dir() {
            rust_files(&src.join(d), &mut files);
        }
    }
    let mut offenders = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let l = line.trim_start();
            // A child process's own stdout is allowed when the line above says so.
            if l.starts_with("//") || i > 0 && lines[i - 1].contains("stdout-ok:") {
                continue;
            }
            if l.contains("println!(")
                || l.contains("print!(")
                || l.contains("io::stdout()") && !f.ends_with("server/mod.rs")
            {
                offenders.push(format!("{}:{}: {}", f.display(), i + 1, l));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "stdout is the MCP channel:\n{}",
        offenders.join("\n")
    );
}
