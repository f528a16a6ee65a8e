//! `hermes-mcp completion SHELL` completes a subcommand's flags, checked by
//! running each shell on the generated script: `hermes-mcp migrate --co<TAB>`
//! offers `--codex-home` and `--codex-bin` in bash, zsh and fish.

use std::path::Path;
use std::process::Command;

use super::support::common::bin;

/// Write `hermes-mcp completion SHELL` to `dir/name` and return its path.
fn script(shell: &str, dir: &Path, name: &str) -> std::path::PathBuf {
    let out = Command::new(bin())
        .args(["completion", shell])
        .output()
        .unwrap();
    assert!(out.status.success(), "{shell}");
    let path = dir.join(name);
    std::fs::write(&path, &out.stdout).unwrap();
    path
}

/// Run `prog args`, returning stdout; stderr joins it in failure messages.
fn run(prog: &str, args: &[&str]) -> (String, String) {
    let out = Command::new(prog)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{prog}: {e} (tools/test.sh installs it)"));
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Both flags of `migrate` that start with `--co` are among `got`.
fn assert_codex_flags(shell: &str, got: &str, stderr: &str) {
    for flag in ["--codex-home", "--codex-bin"] {
        assert!(
            got.contains(flag),
            "{shell} does not offer {flag}:\n{got}\n{stderr}"
        );
    }
}

/// bash: the completion function, called as bash calls it for
/// `hermes-mcp migrate --co<TAB>`, fills COMPREPLY with the flags.
#[test]
fn bash_completes_subcommand_flags() {
    let dir = tempfile::tempdir().unwrap();
    let path = script("bash", dir.path(), "hermes-mcp.bash");
    let probe = format!(
        "source '{}'; COMP_WORDS=(hermes-mcp migrate --co); COMP_CWORD=2; \
         COMP_LINE='hermes-mcp migrate --co'; COMP_POINT=23; \
         _hermes__mcp hermes-mcp --co migrate; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        path.display()
    );
    let (got, err) = run("bash", &["-c", &probe]);
    assert_codex_flags("bash", &got, &err);
}

/// zsh: an interactive zsh on a pseudo-terminal (zsh/zpty) with compinit and
/// the script on fpath gets `hermes-mcp migrate --co<TAB>`; a wrapper around
/// compadd records what the `_hermes-mcp` function offers.
#[test]
fn zsh_completes_subcommand_flags() {
    let dir = tempfile::tempdir().unwrap();
    script("zsh", dir.path(), "_hermes-mcp");
    let d = dir.path().display();
    let probe = format!(
        r#"zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "PS1=''; fpath=('{d}' \$fpath); autoload -Uz compinit; compinit -u -D"
zpty -w z "compadd() {{ print -r -- \"\$*\" >> '{d}/offered'; builtin compadd \"\$@\" }}"
zpty -w -n z $'hermes-mcp migrate --co\t'
for i in {{1..100}}; do
  [[ -s '{d}/offered' ]] && grep -q -- --codex '{d}/offered' && break
  sleep 0.1
done
zpty -d z
cat '{d}/offered'"#
    );
    let (got, err) = run("zsh", &["-f", "-c", &probe]);
    assert_codex_flags("zsh", &got, &err);
}

/// fish: `complete -C` asks fish what it would offer for the command line.
#[test]
fn fish_completes_subcommand_flags() {
    let dir = tempfile::tempdir().unwrap();
    let path = script("fish", dir.path(), "hermes-mcp.fish");
    let probe = format!(
        "source '{}'; complete -C 'hermes-mcp migrate --co'",
        path.display()
    );
    let (got, err) = run("fish", &["--no-config", "-c", &probe]);
    assert_codex_flags("fish", &got, &err);
}

/// bash: `hermes-mcp completion <TAB>` offers the three shells, and
/// `hermes-mcp migrate --permissions <TAB>` the built-in profiles.
#[test]
fn bash_completes_shells_and_permission_profiles() {
    let dir = tempfile::tempdir().unwrap();
    let path = script("bash", dir.path(), "hermes-mcp.bash");
    let complete = |words: &str, cword: usize| {
        let probe = format!(
            "source '{}'; COMP_WORDS=({words} ''); COMP_CWORD={cword}; \
             COMP_LINE='{words} '; COMP_POINT=${{#COMP_LINE}}; \
             _hermes__mcp hermes-mcp '' \"${{COMP_WORDS[$((COMP_CWORD-1))]}}\"; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            path.display()
        );
        run("bash", &["-c", &probe])
    };
    let (got, err) = complete("hermes-mcp completion", 2);
    let shells: Vec<&str> = got.lines().filter(|l| !l.starts_with('-')).collect();
    assert_eq!(shells, ["bash", "zsh", "fish"], "{got}\n{err}");
    let (got, err) = complete("hermes-mcp migrate --permissions", 3);
    for p in [":read-only", ":workspace", ":danger-full-access"] {
        assert!(
            got.lines().any(|l| l == p),
            "{p} not offered:\n{got}\n{err}"
        );
    }
}

/// fish: `hermes-mcp completion <TAB>` offers the three shells.
#[test]
fn fish_completes_shells() {
    let dir = tempfile::tempdir().unwrap();
    let path = script("fish", dir.path(), "hermes-mcp.fish");
    let probe = format!(
        "source '{}'; complete -C 'hermes-mcp completion '",
        path.display()
    );
    let (got, err) = run("fish", &["--no-config", "-c", &probe]);
    for sh in ["bash", "zsh", "fish"] {
        assert!(
            got.lines().any(|l| l.split('\t').next() == Some(sh)),
            "{sh} not offered:\n{got}\n{err}"
        );
    }
}
