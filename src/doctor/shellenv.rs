//! Keys this shell has and codex will not pass: why `hermes-mcp tools` (run
//! here) and `doctor` (which starts the server as codex does) can disagree.
//!
//! codex gives a stdio server its minimal environment plus the variables
//! its entry lists in `env_vars`, each taken from codex's own environment
//! (codex-rs `rmcp-client/src/utils.rs`; see `hermes::envvars::codex_server_env`), plus the literal
//! `env` table. So a key exported only in the shell reaches `serve` only if
//! `env_vars` lists it *and* the codex process has it; `serve` also reads
//! `$HERMES_HOME/.env` itself, as Hermes does, which works however codex is
//! started. `migrate` lists every variable `serve` reads that is set when it
//! runs, so a key exported after `migrate` is missing from the list.
//!
//! The check: the variables `serve` reads that are set here, not passed, and
//! not in `.env`; if there are any, `tools --json` runs again with them, and
//! every tool or provider that changes is a finding. Only when the configured
//! command is this very binary: another program never gets this shell's keys.

use std::collections::HashSet;

use serde_json::Value;

use super::{Options, Report, probe, providers_of, text, tools_of};
use crate::hermes::{dotenv, envvars};

/// Compare what the server sees (`doc`) with what it would see with this
/// shell's keys; a difference is a finding that names the keys and the fix.
pub(super) fn check(opts: &Options, launch: &probe::Launch, doc: &Value, r: &mut Report) {
    let passed: HashSet<&str> = launch.env.iter().map(|(k, _)| k.as_str()).collect();
    let in_dotenv = r
        .hermes_home
        .as_deref()
        .map(|h| dotenv::load(&std::path::Path::new(h).join(".env")))
        .unwrap_or_default();
    // HERMES_HOME picks the home itself (the home checks cover it), not a key.
    let shell_only: Vec<(String, String)> = envvars::serve_vars()
        .map(|v| v.name)
        .filter(|n| *n != envvars::HERMES_HOME)
        .filter(|n| !passed.contains(n) && !in_dotenv.contains_key(*n))
        .filter_map(|n| envvars::get(n).map(|v| (n.to_string(), v)))
        .collect();
    if shell_only.is_empty() {
        return;
    }
    // The shell's keys go only to this very binary: never to whatever program
    // the config names, which codex would not give them either.
    if !is_this_binary(&launch.program) {
        r.notes.push(format!(
            "this shell's keys were not compared: hermes-tools runs {}, not this hermes-mcp, and doctor gives it only what codex would",
            launch.program.display()
        ));
        return;
    }
    let mut env = launch.env.clone();
    env.extend(shell_only.iter().cloned());
    let Ok(here) = super::ask_tools(launch, env) else {
        return;
    };
    let (lost, texts) = differences(doc, &here);
    if lost.is_empty() {
        return;
    }
    // Name the keys the server's own reasons mention; else every one.
    let named: Vec<&str> = shell_only
        .iter()
        .map(|(k, _)| k.as_str())
        .filter(|k| texts.iter().any(|t| mentions(t, k)))
        .collect();
    let keys = if named.is_empty() {
        shell_only.iter().map(|(k, _)| k.as_str()).collect()
    } else {
        named
    };
    let list = keys.join(", ");
    let (is, it) = if keys.len() == 1 {
        ("is", "it")
    } else {
        ("are", "them")
    };
    let home = r.hermes_home.as_deref().unwrap_or("$HERMES_HOME");
    r.find(
        "shell_only_key",
        format!(
            "{list} {is} set in this shell, but env_vars does not list {it}, so codex does not pass {it} to hermes-tools: under codex {}, unlike what `hermes-mcp tools` shows in this shell",
            lost.join("; ")
        ),
        format!(
            "put {list} in {home}/.env, which hermes-tools reads itself however codex is started; or run `{}` again from this shell so env_vars lists {it}, and start codex from an environment that exports {it}",
            opts.command("migrate")
        ),
    );
}

/// `program` is the file this process runs from (same device and inode, so
/// no path spelling or link can stand in for another program).
fn is_this_binary(program: &std::path::Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let id = |m: std::fs::Metadata| (m.dev(), m.ino());
    match (
        std::env::current_exe().and_then(std::fs::metadata),
        std::fs::metadata(program),
    ) {
        (Ok(this), Ok(that)) => id(this) == id(that),
        _ => false,
    }
}

/// What the server loses without the shell's keys ("image_generate is
/// unavailable", "web_search uses ddgs, not exa"), and the texts that say why.
fn differences(codex: &Value, here: &Value) -> (Vec<String>, Vec<String>) {
    let mut lost = Vec::new();
    let mut texts = Vec::new();
    let available = |t: &Value| t.get("available").and_then(Value::as_bool) == Some(true);
    for t in tools_of(codex).filter(|t| !available(t)) {
        let name = text(t, "name");
        if tools_of(here).any(|h| text(h, "name") == name && available(h)) {
            lost.push(format!("{name} is unavailable"));
            texts.push(text(t, "reason"));
        }
    }
    for p in providers_of(codex) {
        let (job, provider) = (text(p, "job"), text(p, "provider"));
        let other = providers_of(here)
            .find(|h| text(h, "job") == job)
            .map(|h| text(h, "provider"));
        // A lost tool's own job says the same again.
        let said = lost.iter().any(|l| l.starts_with(&format!("{job} ")));
        if let Some(other) = other.filter(|o| *o != provider && !said) {
            lost.push(format!("{job} uses {provider}, not {other}"));
            texts.push(text(p, "why"));
        }
    }
    (lost, texts)
}

/// `text` names variable `name` as a whole word (`FAL_KEY`, not `FAL_KEY_ID`).
fn mentions(text: &str, name: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(name).any(|(i, _)| {
        let before = text.get(..i).and_then(|s| s.chars().next_back());
        let after = text.get(i + name.len()..).and_then(|s| s.chars().next());
        !before.is_some_and(word) && !after.is_some_and(word)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn differences_name_lost_tools_and_changed_providers() {
        let codex = json!({
            "tools": [
                {"name": "image_generate", "available": false, "reason": "FAL_KEY is not set"},
                {"name": "web_search", "available": true},
                {"name": "text_to_speech", "available": false, "reason": "no espeak"},
            ],
            "providers": [{"job": "web_search", "provider": "ddgs", "why": "no EXA_API_KEY"}],
        });
        let here = json!({
            "tools": [
                {"name": "image_generate", "available": true},
                {"name": "web_search", "available": true},
                {"name": "text_to_speech", "available": false, "reason": "no espeak"},
            ],
            "providers": [{"job": "web_search", "provider": "exa", "why": "EXA_API_KEY"}],
        });
        let (lost, texts) = differences(&codex, &here);
        assert_eq!(
            lost,
            [
                "image_generate is unavailable",
                "web_search uses ddgs, not exa"
            ]
        );
        assert!(mentions(&texts[0], "FAL_KEY") && mentions(&texts[1], "EXA_API_KEY"));
        assert!(!mentions("FAL_KEY_ID is not set", "FAL_KEY"));
        assert!(differences(&here, &here).0.is_empty());
    }
}
