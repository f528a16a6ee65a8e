//! Plugin skills (`skill_view("plugin:skill")`), as Hermes serves them
//! (hermes-agent: tools/skills_tool.py `_serve_plugin_skill`,
//! hermes_cli/plugins.py `PluginContext.register_skill`).
//!
//! A plugin registers its skills from Python at load time (`register(ctx)` →
//! `ctx.register_skill(name, path)`), so only Hermes' own loader knows them:
//! the first qualified lookup runs Hermes' `discover_plugins()` once in
//! Hermes' interpreter ([`crate::hermes::python`]) and reads the registry it
//! built (qualified name → SKILL.md path, plus `plugins.disabled`). This runs
//! the same plugin code Hermes runs at every session start, and only the
//! plugins the user enabled (`plugins.enabled` is opt-in). The answer is kept
//! for the life of the server, as Hermes keeps its registry per process.
//!
//! Without Hermes' Python the registry is empty and `ns:skill` falls through
//! to the on-disk `ns/skill` form, as Hermes does when no plugin matches.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use super::render::{self, Outcome};
use super::{frontmatter, scan};
use crate::hermes::Context;

/// What Hermes' plugin manager registered.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Registry {
    #[serde(default)]
    skills: BTreeMap<String, Entry>,
    #[serde(default)]
    disabled: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct Entry {
    path: PathBuf,
    plugin: String,
    bare: String,
}

const SENTINEL: &str = "@@hermes-mcp-plugin-skills@@";
/// Plugin loading imports Hermes and every enabled plugin.
const PROBE_TIMEOUT: Duration = Duration::from_secs(60);

const PROBE: &str = r#"
import json, os, sys
from hermes_cli.plugins import discover_plugins, get_plugin_manager, _get_disabled_plugins
discover_plugins()
pm = get_plugin_manager()
skills = {qn: {"path": str(e["path"]), "plugin": e["plugin"], "bare": e["bare_name"]}
          for qn, e in getattr(pm, "_plugin_skills", {}).items()}
out = {"skills": skills, "disabled": sorted(_get_disabled_plugins())}
sys.stdout.write("\n" + SENTINEL + json.dumps(out) + "\n")
sys.stdout.flush()
os._exit(0)
"#;

/// Why Hermes' plugin registry could not be read (logged; the registry is
/// then empty).
#[derive(Debug, thiserror::Error)]
enum ProbeError {
    #[error("Hermes' Python not found (set HERMES_PYTHON or put `hermes` on PATH)")]
    NoPython,
    #[error("{python}: {source}")]
    Run {
        python: PathBuf,
        #[source]
        source: crate::process::RunError,
    },
    /// The probe printed no registry; `stderr_tail`: its last stderr lines.
    #[error("{python} could not list plugins: {stderr_tail}")]
    NoAnswer {
        python: PathBuf,
        stderr_tail: String,
    },
    #[error("unreadable plugin registry: {0}")]
    Registry(#[source] serde_json::Error),
}

static CACHE: Mutex<Option<(PathBuf, Arc<Registry>)>> = Mutex::new(None);

/// The registry for this Hermes home, probed once.
pub(crate) fn registry(ctx: &Context) -> Arc<Registry> {
    let mut guard = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((home, r)) = guard.as_ref()
        && *home == ctx.home.path
    {
        return r.clone();
    }
    let r = Arc::new(probe(ctx).unwrap_or_else(|why| {
        tracing::info!("plugin skills unavailable: {why}");
        Registry::default()
    }));
    *guard = Some((ctx.home.path.clone(), r.clone()));
    r
}

fn probe(ctx: &Context) -> Result<Registry, ProbeError> {
    let py = crate::hermes::python::interpreter(ctx)
        .ok_or(ProbeError::NoPython)?
        .path;
    let mut cmd = std::process::Command::new(&py);
    cmd.arg("-c")
        .arg(PROBE.replace("SENTINEL", &format!("{SENTINEL:?}")))
        .env("HERMES_HOME", &ctx.home.path)
        .current_dir(&ctx.home.path);
    let out = crate::process::output_with_timeout(cmd, PROBE_TIMEOUT).map_err(|source| {
        ProbeError::Run {
            python: py.clone(),
            source,
        }
    })?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let Some(line) = stdout.lines().find_map(|l| l.strip_prefix(SENTINEL)) else {
        let err = String::from_utf8_lossy(&out.stderr);
        let stderr_tail = err.lines().rev().take(3).collect::<Vec<_>>().join(" | ");
        return Err(ProbeError::NoAnswer {
            python: py,
            stderr_tail,
        });
    };
    serde_json::from_str(line).map_err(ProbeError::Registry)
}

impl Registry {
    /// Sorted bare names of `plugin`'s skills (`list_plugin_skills`).
    fn list(&self, plugin: &str) -> Vec<&str> {
        let prefix = format!("{plugin}:");
        let mut v: Vec<&str> = self
            .skills
            .iter()
            .filter(|(qn, _)| qn.starts_with(&prefix))
            .map(|(_, e)| e.bare.as_str())
            .collect();
        v.sort_unstable();
        v
    }
}

/// `skill_view`'s qualified-name branch: `Some` when a plugin answers for
/// `name` (the skill, or "not found in plugin"), `None` to fall through.
pub(crate) fn view(ctx: &Context, name: &str, ns: &str, bare: &str) -> Option<Outcome> {
    let reg = registry(ctx);
    if let Some(e) = reg.skills.get(name) {
        return Some(serve(ctx, &reg, e, ns, bare));
    }
    let available = reg.list(ns);
    if available.is_empty() {
        return None;
    }
    Some(Err(json!({
        "success": false,
        "error": format!("Skill '{bare}' not found in plugin '{ns}'."),
        "available_skills": available.iter().map(|s| format!("{ns}:{s}")).collect::<Vec<_>>(),
        "hint": format!("The '{ns}' plugin provides {} skill(s).", available.len()),
    })))
}

fn fail(msg: String) -> Outcome {
    Err(json!({"success": false, "error": msg}))
}

/// `_serve_plugin_skill`.
fn serve(ctx: &Context, reg: &Registry, e: &Entry, ns: &str, bare: &str) -> Outcome {
    let qualified = format!("{ns}:{bare}");
    if reg.disabled.iter().any(|d| d == ns) {
        return fail(format!(
            "Plugin '{ns}' is disabled. Re-enable with: hermes plugins enable {ns}"
        ));
    }
    let content = match crate::fs::read_to_string_capped(&e.path, crate::fs::CONFIG_CAP) {
        Ok(c) => c,
        Err(err) if err.is_not_found() => {
            return fail(format!(
                "Skill '{qualified}' file no longer exists at {}. The registry entry has been cleaned up — try again after the plugin is reloaded.",
                e.path.display()
            ));
        }
        Err(err) => return fail(format!("Failed to read skill '{qualified}': {err}")),
    };
    let (fm, _) = frontmatter::parse(&content);
    if !scan::matches_platform(ctx, &fm) {
        return Err(json!({
            "success": false,
            "error": format!("Skill '{qualified}' is not supported on this platform."),
            "readiness_status": "unsupported",
        }));
    }
    if render::looks_injected(&content) {
        tracing::warn!(
            "Plugin skill '{qualified}' contains patterns that may indicate prompt injection"
        );
    }
    let mut description = match fm.get("description") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(v) => crate::pycompat::py_str_or_json(v),
    };
    if description.chars().count() > scan::MAX_DESCRIPTION_LENGTH {
        description = description
            .chars()
            .take(scan::MAX_DESCRIPTION_LENGTH - 3)
            .collect::<String>()
            + "...";
    }
    let siblings: Vec<&str> = reg
        .list(&e.plugin)
        .into_iter()
        .filter(|s| *s != bare)
        .collect();
    let banner = match siblings.first() {
        Some(first) => format!(
            "[Bundle context: This skill is part of the '{ns}' plugin.\nSibling skills: {}.\nUse qualified form to invoke siblings (e.g. {ns}:{first}).]\n\n",
            siblings.join(", ")
        ),
        None => format!("[Bundle context: This skill is part of the '{ns}' plugin.]\n\n"),
    };
    let rendered = render::preprocess(ctx, &content, e.path.parent());
    Ok(json!({
        "success": true,
        "name": qualified,
        "content": format!("{banner}{rendered}"),
        "description": description,
        "linked_files": null,
        "readiness_status": "available",
    }))
}
