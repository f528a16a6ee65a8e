//! `skill_view(name, file_path?)`, after `tools/skills_tool.py::skill_view`.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::frontmatter::{self, Frontmatter, py_str_or_json, truthy};
use super::guard::{self, FILE_HINT, NAME_HINT};
use super::scan::{self, Roots};
use crate::hermes::Context;

pub(crate) use super::render::Outcome;
use super::render::{looks_injected, preprocess};

fn fail(error: impl Into<String>) -> Value {
    json!({"success": false, "error": error.into()})
}

fn fail_hint(error: impl Into<String>, hint: &str) -> Value {
    json!({"success": false, "error": error.into(), "hint": hint})
}

fn is_valid_namespace(ns: &str) -> bool {
    !ns.is_empty()
        && ns
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// One lookup hit: the skill directory (None for a legacy `<name>.md`) and its file.
#[derive(Debug, Clone)]
struct Candidate {
    dir: Option<PathBuf>,
    md: PathBuf,
}

struct Candidates {
    list: Vec<Candidate>,
    seen: std::collections::HashSet<PathBuf>,
}

impl Candidates {
    fn record(&mut self, dir: Option<PathBuf>, md: PathBuf) {
        let key = std::fs::canonicalize(&md).unwrap_or_else(|_| md.clone());
        if self.seen.insert(key) {
            self.list.push(Candidate { dir, md });
        }
    }
}

fn with_md_suffix(p: &Path) -> PathBuf {
    let mut s = p.as_os_str().to_os_string();
    s.push(".md");
    PathBuf::from(s)
}

fn escape_error(name: &str, path: &Path) -> Value {
    fail_hint(
        format!(
            "Skill '{name}' resolves outside the skills directories ({}); symlinks may not point outside them.",
            guard::resolve_lenient(path)
                .unwrap_or_else(|_| path.to_path_buf())
                .display()
        ),
        "To use skills kept elsewhere, list their directory in skills.external_dirs in config.yaml.",
    )
}

/// Hermes' strategy 1: `<root>/<rel>/SKILL.md` or `<root>/<rel>.md`.
fn direct_lookup(
    roots: &Roots,
    root: &Path,
    rel: &str,
    name: &str,
    c: &mut Candidates,
) -> Result<(), Value> {
    let direct = root.join(rel);
    let legacy = with_md_suffix(&direct);
    if !scan::is_skill_support_path(&direct) && direct.is_dir() && direct.join("SKILL.md").exists()
    {
        if !roots.contains(&direct.join("SKILL.md")) {
            return Err(escape_error(name, &direct));
        }
        c.record(Some(direct.clone()), direct.join("SKILL.md"));
    } else if legacy.is_file() && !scan::is_skill_support_path(&legacy) {
        if !roots.contains(&legacy) {
            return Err(escape_error(name, &legacy));
        }
        c.record(None, legacy);
    }
    Ok(())
}

fn find_candidates(
    roots: &Roots,
    search_dirs: &[PathBuf],
    name: &str,
    category_form: Option<&str>,
) -> Result<Vec<Candidate>, Value> {
    let mut c = Candidates {
        list: Vec::new(),
        seen: Default::default(),
    };
    // `<name>.md` as path components, for the legacy search anywhere.
    let legacy_parts: Vec<String> = {
        let mut parts: Vec<String> = name
            .split('/')
            .filter(|p| !p.is_empty() && *p != ".")
            .map(String::from)
            .collect();
        if let Some(last) = parts.last_mut() {
            last.push_str(".md");
        }
        parts
    };
    for root in search_dirs {
        if !name.trim().is_empty() {
            direct_lookup(roots, root, name, name, &mut c)?;
        }
        if let Some(cat) = category_form {
            direct_lookup(roots, root, cat, name, &mut c)?;
        }
        // Strategy 2 (directory name or frontmatter name) and 3 (legacy
        // `<name>.md` anywhere outside support dirs) in one walk.
        let mut skill_mds = Vec::new();
        let mut legacy = Vec::new();
        scan::walk_files(root, &roots.trusted, &mut |p| {
            if p.file_name().is_some_and(|n| n == "SKILL.md") {
                skill_mds.push(p.to_path_buf());
            } else if !legacy_parts.is_empty() {
                let comps: Vec<String> = p
                    .components()
                    .map(|x| x.as_os_str().to_string_lossy().into_owned())
                    .collect();
                if comps.ends_with(&legacy_parts) && !scan::is_skill_support_path(p) {
                    legacy.push(p.to_path_buf());
                }
            }
        });
        skill_mds.sort();
        legacy.sort();
        for md in skill_mds {
            let dir = md.parent().map(Path::to_path_buf);
            if dir
                .as_deref()
                .and_then(Path::file_name)
                .is_some_and(|n| n == name)
            {
                c.record(dir, md);
                continue;
            }
            let Ok(text) = scan::read_text(&md, &roots.trusted) else {
                continue;
            };
            if !could_name(&text, name) {
                continue;
            }
            let fm = frontmatter::parse(&text).0;
            if frontmatter::get_str(&fm, "name").as_deref() == Some(name) {
                c.record(dir, md);
            }
        }
        for md in legacy {
            c.record(None, md);
        }
    }
    Ok(c.list)
}

/// Cheap pre-check before parsing YAML: a frontmatter `name` made of plain
/// characters can only equal `name` if the text contains it literally, unless
/// a double-quoted escape (`\`) spells it.
fn could_name(text: &str, name: &str) -> bool {
    let plain = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    !plain || text.contains(name) || text.contains('\\')
}

/// Files under `dir` (recursively when `recursive`), following symlinks only
/// when they stay inside `skill_dir`, as paths relative to `skill_dir`.
fn list_files(skill_dir: &Path, dir: &Path, recursive: bool, out: &mut Vec<String>) {
    let Ok(skill_resolved) = guard::resolve_lenient(skill_dir) else {
        return;
    };
    let mut stack = vec![dir.to_path_buf()];
    let mut seen = std::collections::HashSet::new();
    while let Some(d) = stack.pop() {
        let Ok(canon) = std::fs::canonicalize(&d) else {
            continue;
        };
        if !canon.starts_with(&skill_resolved) || !seen.insert(canon) {
            continue;
        }
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let Ok(meta) = std::fs::metadata(&p) else {
                continue;
            };
            if meta.is_dir() {
                if recursive {
                    stack.push(p);
                }
            } else if meta.is_file()
                && std::fs::canonicalize(&p).is_ok_and(|c| c.starts_with(&skill_resolved))
                && let Ok(rel) = p.strip_prefix(skill_dir)
            {
                out.push(rel.to_string_lossy().into_owned());
            }
        }
    }
}

fn has_ext(rel: &str, exts: &[&str]) -> bool {
    Path::new(rel)
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| exts.contains(&e))
}

/// `linked_files` of a directory skill: references/*.md, templates/** (text
/// kinds), assets/** (all), scripts/* (script kinds).
fn linked_files(skill_dir: &Path) -> Map<String, Value> {
    let mut linked = Map::new();
    let mut add = |key: &str, sub: &str, recursive: bool, exts: Option<&[&str]>| {
        let dir = skill_dir.join(sub);
        if !dir.exists() {
            return;
        }
        let mut files = Vec::new();
        list_files(skill_dir, &dir, recursive, &mut files);
        if let Some(exts) = exts {
            // Hermes globs one extension after another.
            let mut ordered = Vec::new();
            for ext in exts {
                let mut group: Vec<String> = files
                    .iter()
                    .filter(|f| has_ext(f, &[ext]))
                    .cloned()
                    .collect();
                group.sort();
                ordered.extend(group);
            }
            files = ordered;
        } else {
            files.sort();
        }
        if !files.is_empty() {
            linked.insert(key.to_string(), json!(files));
        }
    };
    add("references", "references", false, Some(&["md"]));
    add(
        "templates",
        "templates",
        true,
        Some(&["md", "py", "yaml", "yml", "json", "tex", "sh"]),
    );
    add("assets", "assets", true, None);
    add(
        "scripts",
        "scripts",
        false,
        Some(&["py", "sh", "bash", "js", "ts", "rb"]),
    );
    linked
}

/// `available_files` for a missing `file_path`, grouped as Hermes groups them.
fn available_files(skill_dir: &Path) -> Map<String, Value> {
    let mut all = Vec::new();
    list_files(skill_dir, skill_dir, true, &mut all);
    all.sort();
    let mut groups: Vec<(&str, Vec<String>)> =
        ["references", "templates", "assets", "scripts", "other"]
            .iter()
            .map(|k| (*k, Vec::new()))
            .collect();
    for rel in all {
        if Path::new(&rel).file_name().is_some_and(|n| n == "SKILL.md") {
            continue;
        }
        let idx = if rel.starts_with("references/") {
            0
        } else if rel.starts_with("templates/") {
            1
        } else if rel.starts_with("assets/") {
            2
        } else if rel.starts_with("scripts/") {
            3
        } else if has_ext(&rel, &["md", "py", "yaml", "yml", "json", "tex", "sh"]) {
            4
        } else {
            continue;
        };
        groups[idx].1.push(rel);
    }
    groups
        .into_iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| (k.to_string(), json!(v)))
        .collect()
}

/// Serve `file_path` of a directory skill.
fn view_file(name: &str, skill_dir: &Path, file_path: &str) -> Outcome {
    let target = match guard::check_file_path(skill_dir, file_path) {
        Ok(t) => t,
        Err(e) => return Err(fail_hint(e.to_string(), FILE_HINT)),
    };
    let meta = std::fs::metadata(&target);
    let missing = meta
        .as_ref()
        .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound);
    if missing || meta.as_ref().is_ok_and(|m| m.is_dir()) {
        let what = if missing {
            format!("File '{file_path}' not found in skill '{name}'.")
        } else {
            format!("'{file_path}' is a directory in skill '{name}', not a file.")
        };
        return Err(json!({
            "success": false,
            "error": what,
            "available_files": available_files(skill_dir),
            "hint": "Use one of the available file paths listed above",
        }));
    }
    // The skill dir resolved: the file opened must really be inside it, a
    // regular file (a FIFO or device is refused, never waited on), capped.
    let read = guard::resolve_lenient(skill_dir)
        .map_err(guard::ReadError::from)
        .and_then(|root| guard::read_within(&target, &[root], guard::FILE_CAP));
    let bytes = match read {
        Ok(b) => b,
        Err(e) => {
            return Err(fail_hint(
                format!("Failed to read '{file_path}' in skill '{name}': {e}"),
                FILE_HINT,
            ));
        }
    };
    let file_name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let text = match String::from_utf8(bytes) {
        Ok(t) if !t.contains('\0') => t,
        Ok(t) => return Ok(binary(name, file_path, &file_name, t.len())),
        Err(e) => return Ok(binary(name, file_path, &file_name, e.as_bytes().len())),
    };
    let file_type = target
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    Ok(json!({
        "success": true,
        "name": name,
        "file": file_path,
        "content": frontmatter::universal_newlines(text),
        "file_type": file_type,
    }))
}

fn binary(name: &str, file_path: &str, file_name: &str, size: usize) -> Value {
    json!({
        "success": true,
        "name": name,
        "file": file_path,
        "content": format!("[Binary file: {file_name}, size: {size} bytes]"),
        "is_binary": true,
    })
}

// ── Readiness ────────────────────────────────────────────────────────────

fn is_env_name(s: &str) -> bool {
    crate::hermes::config::is_var_name(s)
}

fn str_values(v: Option<&Value>) -> Vec<String> {
    match v.filter(|v| truthy(v)) {
        None => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .map(py_str_or_json)
            .filter(|s| !s.trim().is_empty())
            .collect(),
        Some(other) => vec![py_str_or_json(other)]
            .into_iter()
            .filter(|s| !s.trim().is_empty())
            .collect(),
    }
}

/// `prerequisites: {env_vars, commands}` (legacy form).
fn prerequisites(fm: &Frontmatter) -> (Vec<String>, Vec<String>) {
    match fm.get("prerequisites").and_then(Value::as_object) {
        Some(p) => (str_values(p.get("env_vars")), str_values(p.get("commands"))),
        None => (Vec::new(), Vec::new()),
    }
}

fn nonempty_str(v: Option<&Value>) -> Option<String> {
    match v {
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_string()),
        _ => None,
    }
}

/// Python's `str(m.get(a) or m.get(b) or "").strip()`.
fn first_truthy(m: &Map<String, Value>, keys: [&str; 2]) -> String {
    keys.iter()
        .filter_map(|k| m.get(*k))
        .find(|v| truthy(v))
        .map(py_str_or_json)
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// Hermes' `_get_required_environment_variables`: `required_environment_variables`,
/// then `setup.collect_secrets`, then legacy `prerequisites.env_vars`.
fn required_env_vars(fm: &Frontmatter, legacy: &[String]) -> Vec<Map<String, Value>> {
    let setup = fm.get("setup").and_then(Value::as_object);
    let setup_help = setup.and_then(|s| nonempty_str(s.get("help")));
    let mut out: Vec<Map<String, Value>> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut append = |entry: &Map<String, Value>| {
        let name = first_truthy(entry, ["name", "env_var"]);
        if name.is_empty() || seen.contains(&name) || !is_env_name(&name) {
            return;
        }
        let mut n = Map::new();
        n.insert("name".into(), json!(name));
        let prompt = entry
            .get("prompt")
            .filter(|v| truthy(v))
            .map(py_str_or_json)
            .unwrap_or_else(|| format!("Enter value for {name}"));
        n.insert("prompt".into(), json!(prompt.trim()));
        let help = ["help", "provider_url", "url"]
            .iter()
            .filter_map(|k| entry.get(*k))
            .find(|v| truthy(v))
            .cloned()
            .or_else(|| setup_help.clone().map(Value::String));
        if let Some(h) = nonempty_str(help.as_ref()) {
            n.insert("help".into(), json!(h));
        }
        if let Some(r) = nonempty_str(entry.get("required_for")) {
            n.insert("required_for".into(), json!(r));
        }
        if entry.get("optional").is_some_and(truthy) {
            n.insert("optional".into(), json!(true));
        }
        seen.insert(name);
        out.push(n);
    };
    let raw = match fm.get("required_environment_variables") {
        Some(Value::Array(a)) => a.clone(),
        Some(o @ Value::Object(_)) => vec![o.clone()],
        _ => Vec::new(),
    };
    for item in raw {
        match item {
            Value::String(s) => append(&Map::from_iter([("name".to_string(), json!(s))])),
            Value::Object(m) => append(&m),
            _ => {}
        }
    }
    let secrets = match setup.and_then(|s| s.get("collect_secrets")) {
        Some(Value::Array(a)) => a.clone(),
        Some(o @ Value::Object(_)) => vec![o.clone()],
        _ => Vec::new(),
    };
    for item in secrets {
        let Value::Object(m) = item else { continue };
        let env_var = m
            .get("env_var")
            .map(py_str_or_json)
            .unwrap_or_default()
            .trim()
            .to_string();
        if env_var.is_empty() || m.get("env_var").is_some_and(Value::is_null) {
            continue;
        }
        let prompt = m
            .get("prompt")
            .filter(|v| truthy(v))
            .map(py_str_or_json)
            .unwrap_or_else(|| format!("Enter value for {env_var}"));
        let mut e = Map::new();
        e.insert("name".into(), json!(env_var));
        e.insert("prompt".into(), json!(prompt.trim()));
        let url = nonempty_str(m.get("provider_url")).or_else(|| nonempty_str(m.get("url")));
        if let Some(h) = url.or_else(|| setup_help.clone()) {
            e.insert("help".into(), json!(h));
        }
        append(&e);
    }
    for name in legacy {
        append(&Map::from_iter([("name".to_string(), json!(name))]));
    }
    out
}

/// `shutil.which(cmd)` on the server's `PATH`.
fn which(cmd: &str, path_var: Option<&str>) -> bool {
    crate::hermes::env::which(cmd, path_var).is_some()
}

/// `required_credential_files`: paths relative to HERMES_HOME that must exist
/// (never the master credential stores). Returns the missing ones.
fn missing_credential_files(ctx: &Context, fm: &Frontmatter) -> Vec<String> {
    let Some(Value::Array(items)) = fm.get("required_credential_files") else {
        return Vec::new();
    };
    let home = &ctx.home.path;
    let mut missing = Vec::new();
    for item in items {
        let rel = match item {
            Value::String(s) => s.trim().to_string(),
            Value::Object(m) => first_truthy(m, ["path", "name"]),
            _ => continue,
        };
        if rel.is_empty() {
            continue;
        }
        let ok = !Path::new(&rel).is_absolute()
            && guard::validate_within_dir(&home.join(&rel), home)
                .is_ok_and(|p| p.is_file() && !is_credential_store(&p, home));
        if !ok {
            missing.push(rel);
        }
    }
    missing
}

fn is_credential_store(p: &Path, home: &Path) -> bool {
    let Ok(home) = guard::resolve_lenient(home) else {
        return false;
    };
    let Ok(rel) = p.strip_prefix(&home) else {
        return false;
    };
    let rel = rel.to_string_lossy();
    [
        "auth.json",
        "auth.lock",
        ".anthropic_oauth.json",
        ".env",
        "webhook_subscriptions.json",
        "auth/google_oauth.json",
    ]
    .contains(&rel.as_ref())
        || rel.starts_with("mcp-tokens/")
}

// ── The tool ─────────────────────────────────────────────────────────────

/// `skill_view`: find the skill (a plugin's `ns:skill`, or on disk), check it may be
/// shown here, then answer with one of its files or the SKILL.md and its readiness.
pub(crate) fn skill_view(ctx: &Context, name: &str, file_path: Option<&str>) -> Outcome {
    if let Some(e) = guard::skill_name_error(name) {
        return Err(fail_hint(e, NAME_HINT));
    }
    let category_form = match namespaced(ctx, name) {
        ControlFlow::Break(answer) => return answer,
        ControlFlow::Continue(form) => form,
    };
    let roots = Roots::load(ctx);
    let Candidate {
        dir: skill_dir,
        md: skill_md,
    } = locate(ctx, &roots, name, category_form.as_deref())?;
    let content = read_skill(name, &roots, &skill_md)?;
    let (fm, _) = frontmatter::parse(&content);
    let fallback_name = check_usable(ctx, name, &fm, skill_dir.as_deref(), &skill_md)?;

    if let (Some(fp), Some(dir)) = (file_path.filter(|f| !f.is_empty()), &skill_dir) {
        return view_file(name, dir, fp);
    }
    let skill = Viewed {
        content: &content,
        fm: &fm,
        dir: skill_dir.as_deref(),
        md: &skill_md,
        fallback_name: &fallback_name,
    };
    Ok(Value::Object(skill.result(ctx, &roots)))
}

/// `ns:skill`: a plugin's skill when Hermes' plugin loader registered it (`Break` with
/// its answer), else the on-disk `ns/skill` form to look for, as Hermes falls through.
fn namespaced(ctx: &Context, name: &str) -> ControlFlow<Outcome, Option<String>> {
    let Some((ns, bare)) = name.split_once(':') else {
        return ControlFlow::Continue(None);
    };
    if !is_valid_namespace(ns) {
        return ControlFlow::Break(Err(fail(format!(
            "Invalid namespace '{ns}' in '{name}'. Namespaces must match [a-zA-Z0-9_-]+."
        ))));
    }
    if let Some(answer) = super::plugins::view(ctx, name, ns, bare) {
        return ControlFlow::Break(answer);
    }
    if bare.is_empty() {
        return ControlFlow::Continue(None);
    }
    let cat = format!("{ns}/{bare}");
    if let Some(e) = guard::skill_name_error(&cat) {
        return ControlFlow::Break(Err(fail_hint(e, NAME_HINT)));
    }
    ControlFlow::Continue(Some(cat))
}

/// The one skill `name` names in the skills directories; an error when none exists,
/// several match (Hermes refuses to guess) or the match lies outside them.
fn locate(
    ctx: &Context,
    roots: &Roots,
    name: &str,
    category_form: Option<&str>,
) -> Result<Candidate, Value> {
    let search_dirs = roots.search_dirs();
    if search_dirs.is_empty() {
        return Err(fail(
            "Skills directory does not exist yet. It will be created on first install.",
        ));
    }
    let candidates = find_candidates(roots, &search_dirs, name, category_form)?;
    if candidates.len() > 1 {
        let paths: Vec<String> = candidates
            .iter()
            .map(|c| c.md.display().to_string())
            .collect();
        tracing::warn!(
            "Skill name collision for '{name}': {} candidates — {}",
            paths.len(),
            paths.join("; ")
        );
        return Err(json!({
            "success": false,
            "error": format!(
                "Ambiguous skill name '{name}': {} skills match across your local skills dir and external_dirs. Refusing to guess — load one explicitly by its categorized path.",
                paths.len()
            ),
            "matches": paths,
            "hint": "Pass the full relative path instead of the bare name (e.g., 'category/skill-name'), or rename one of the colliding skills so each name is unique.",
        }));
    }
    let Some(found) = candidates.into_iter().next() else {
        let available: Vec<String> = scan::find_all_skills(ctx, roots)
            .into_iter()
            .take(20)
            .map(|s| s.name)
            .collect();
        return Err(json!({
            "success": false,
            "error": format!("Skill '{name}' not found."),
            "available_skills": available,
            "hint": "Use skills_list to see all available skills",
        }));
    };
    if !roots.contains(&found.md) {
        return Err(escape_error(name, &found.md));
    }
    Ok(found)
}

/// The skill's SKILL.md text; a warning is logged when it looks like prompt injection.
fn read_skill(name: &str, roots: &Roots, skill_md: &Path) -> Result<String, Value> {
    let content = match scan::read_text(skill_md, &roots.trusted) {
        Ok(c) => c,
        Err(e) => return Err(fail(format!("Failed to read skill '{name}': {e}"))),
    };
    if looks_injected(&content) {
        tracing::warn!(
            "Skill security warning for '{name}': skill content contains patterns that may indicate prompt injection"
        );
    }
    Ok(content)
}

/// The skill runs on this platform and is not disabled. Returns the name its folder
/// (or legacy file) gives it, used when the frontmatter has none.
fn check_usable(
    ctx: &Context,
    name: &str,
    fm: &Frontmatter,
    skill_dir: Option<&Path>,
    skill_md: &Path,
) -> Result<String, Value> {
    if !scan::matches_platform(ctx, fm) {
        return Err(json!({
            "success": false,
            "error": format!("Skill '{name}' is not supported on this platform."),
            "readiness_status": "unsupported",
        }));
    }
    let fallback_name = match skill_dir {
        Some(d) => d.file_name(),
        None => skill_md.file_stem(),
    }
    .map(|n| n.to_string_lossy().into_owned())
    .unwrap_or_default();
    let resolved_name = scan::skill_name(fm, &fallback_name);
    if scan::disabled_names(ctx).contains(&resolved_name) {
        return Err(fail(format!(
            "Skill '{resolved_name}' is disabled. Enable it with `hermes skills` or inspect the files directly on disk."
        )));
    }
    Ok(fallback_name)
}

/// A skill found, read and allowed, about to be answered with its SKILL.md.
struct Viewed<'a> {
    content: &'a str,
    fm: &'a Frontmatter,
    /// `None` for a legacy `<name>.md`.
    dir: Option<&'a Path>,
    md: &'a Path,
    fallback_name: &'a str,
}

impl Viewed<'_> {
    /// Hermes' answer: the skill's metadata, its rendered content, its linked files and
    /// what it still needs ([`Readiness`]), in Hermes' key order.
    fn result(&self, ctx: &Context, roots: &Roots) -> Map<String, Value> {
        let fm = self.fm;
        let linked = self.dir.map(linked_files).unwrap_or_default();
        let (tags, related) = frontmatter::tags_and_related(fm);
        let rel_path = self.relative_path(roots);
        let skill_name_value = match fm.get("name") {
            Some(v) => v.clone(),
            None => json!(self.fallback_name),
        };
        let readiness = Readiness::check(ctx, fm);
        let rendered = preprocess(ctx, self.content, self.dir);

        let has_linked = !linked.is_empty();
        let mut result = Map::new();
        result.insert("success".into(), json!(true));
        result.insert("name".into(), skill_name_value);
        result.insert(
            "description".into(),
            fm.get("description").cloned().unwrap_or(json!("")),
        );
        result.insert("tags".into(), json!(tags));
        result.insert("related_skills".into(), json!(related));
        result.insert("content".into(), json!(rendered));
        result.insert("path".into(), json!(rel_path));
        result.insert(
            "skill_dir".into(),
            json!(self.dir.map(|d| d.display().to_string())),
        );
        result.insert(
            "linked_files".into(),
            if has_linked {
                Value::Object(linked)
            } else {
                Value::Null
            },
        );
        result.insert(
            "usage_hint".into(),
            if has_linked {
                json!("To view linked files, call skill_view(name, file_path) where file_path is e.g. 'references/api.md' or 'assets/config.yaml'")
            } else {
                Value::Null
            },
        );
        readiness.insert_into(ctx, &mut result);
        if let Some(c) = fm.get("compatibility").filter(|v| truthy(v)) {
            result.insert("compatibility".into(), c.clone());
        }
        if let Some(m @ Value::Object(_)) = fm.get("metadata") {
            result.insert("metadata".into(), m.clone());
        }
        result
    }

    /// SKILL.md relative to the local skills directory, else to the folder above the
    /// skill's own (an external directory's category level).
    fn relative_path(&self, roots: &Roots) -> String {
        let skill_md = self.md;
        match skill_md.strip_prefix(&roots.local) {
            Ok(r) => r.display().to_string(),
            Err(_) => {
                let base = skill_md.parent().and_then(Path::parent);
                base.and_then(|b| skill_md.strip_prefix(b).ok())
                    .map(|r| r.display().to_string())
                    .unwrap_or_else(|| skill_md.display().to_string())
            }
        }
    }
}

/// What a skill needs before it can be used (environment variables, commands,
/// credential files under HERMES_HOME), and which of them are missing here.
struct Readiness {
    required_env: Vec<Map<String, Value>>,
    commands: Vec<String>,
    /// Required (not optional) variables unset or empty.
    missing_env: Vec<String>,
    missing_commands: Vec<String>,
    missing_creds: Vec<String>,
}

impl Readiness {
    fn check(ctx: &Context, fm: &Frontmatter) -> Readiness {
        let (legacy_env, commands) = prerequisites(fm);
        let required_env = required_env_vars(fm, &legacy_env);
        let missing_env: Vec<String> = required_env
            .iter()
            .filter(|e| !e.contains_key("optional"))
            .filter_map(|e| e["name"].as_str())
            .filter(|n| ctx.env.get_unlisted(n).is_none_or(|v| v.is_empty()))
            .map(String::from)
            .collect();
        let path_var = ctx.env.get_unlisted("PATH");
        let missing_commands: Vec<String> = commands
            .iter()
            .filter(|c| !which(c.trim(), path_var.as_deref()))
            .cloned()
            .collect();
        let missing_creds = missing_credential_files(ctx, fm);
        Readiness {
            required_env,
            commands,
            missing_env,
            missing_commands,
            missing_creds,
        }
    }

    /// Hermes' `setup_needed`: a missing variable or credential file (not a command).
    fn setup_needed(&self) -> bool {
        !self.missing_env.is_empty() || !self.missing_creds.is_empty()
    }

    /// The readiness keys of the answer, from `required_environment_variables` to
    /// `setup_note`.
    fn insert_into(&self, ctx: &Context, result: &mut Map<String, Value>) {
        let setup_needed = self.setup_needed();
        result.insert(
            "required_environment_variables".into(),
            json!(self.required_env),
        );
        result.insert("required_commands".into(), json!(self.commands));
        result.insert(
            "missing_required_environment_variables".into(),
            json!(self.missing_env),
        );
        result.insert("missing_credential_files".into(), json!(self.missing_creds));
        result.insert(
            "missing_required_commands".into(),
            json!(self.missing_commands),
        );
        result.insert("setup_needed".into(), json!(setup_needed));
        result.insert("setup_skipped".into(), json!(false));
        result.insert(
            "readiness_status".into(),
            json!(if setup_needed {
                "setup_needed"
            } else {
                "available"
            }),
        );
        let setup_help = self
            .required_env
            .iter()
            .find_map(|e| e.get("help").and_then(Value::as_str).map(String::from));
        if let Some(h) = &setup_help {
            result.insert("setup_help".into(), json!(h));
        }
        if setup_needed {
            result.insert(
                "setup_note".into(),
                json!(self.setup_note(ctx, setup_help.as_deref())),
            );
        }
    }

    /// What is missing, the skill's own help, and how to pass variables through Codex.
    fn setup_note(&self, ctx: &Context, setup_help: Option<&str>) -> String {
        let items: Vec<String> = self
            .missing_env
            .iter()
            .map(|n| format!("env ${n}"))
            .chain(self.missing_creds.iter().map(|f| format!("file {f}")))
            .collect();
        let mut note = format!(
            "Setup needed before using this skill: missing {}.",
            items.join(", ")
        );
        if let Some(h) = setup_help {
            note = format!("{note} {h}");
        }
        if !self.missing_env.is_empty() {
            note.push_str(&format!(
                " hermes-mcp runs under Codex, which passes it only the variables listed in env_vars of [mcp_servers.hermes-tools] in config.toml: set them in {}/.env or add them to env_vars.",
                scan::display_hermes_home(&ctx.home.path)
            ));
        }
        note
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolsets::skills::render::substitute_template_vars;

    #[test]
    fn template_vars_substituted_only_with_values() {
        let s = "run ${HERMES_SKILL_DIR}/scripts/x.sh for ${HERMES_SESSION_ID} ${OTHER}";
        assert_eq!(
            substitute_template_vars(s, Some(Path::new("/s/k")), Some("abc")),
            "run /s/k/scripts/x.sh for abc ${OTHER}"
        );
        assert_eq!(substitute_template_vars(s, None, None), s);
    }

    #[test]
    fn required_env_vars_merge_all_forms() {
        let (fm, _) = frontmatter::parse(
            "---\nrequired_environment_variables:\n  - name: API_KEY\n    help: https://x.test/keys\n  - OPT_VAR\n  - name: bad-name\n  - {name: MAYBE, optional: true}\nsetup:\n  help: Get a key\n  collect_secrets:\n    - env_var: SECRET_TOKEN\n      provider_url: https://p.test\nprerequisites:\n  env_vars: [API_KEY, LEGACY_VAR]\n  commands: jq\n---\n",
        );
        let (legacy, cmds) = prerequisites(&fm);
        assert_eq!(cmds, vec!["jq"]);
        let req = required_env_vars(&fm, &legacy);
        let names: Vec<&str> = req.iter().map(|e| e["name"].as_str().unwrap()).collect();
        assert_eq!(
            names,
            ["API_KEY", "OPT_VAR", "MAYBE", "SECRET_TOKEN", "LEGACY_VAR"]
        );
        assert_eq!(req[0]["help"], "https://x.test/keys");
        assert_eq!(req[1]["help"], "Get a key");
        assert_eq!(req[1]["prompt"], "Enter value for OPT_VAR");
        assert_eq!(req[2]["optional"], true);
        assert_eq!(req[3]["help"], "https://p.test");
    }

    #[test]
    fn name_precheck_never_hides_a_match() {
        assert!(could_name("---\nname: axolotl\n---\n", "axolotl"));
        assert!(!could_name("---\nname: other\n---\n", "axolotl"));
        // Escapes and non-plain names always go to the YAML parser.
        assert!(could_name("---\nname: \"ax\\x6flotl\"\n---\n", "axolotl"));
        assert!(could_name(
            "---\nname: >\n  two\n  words\n---\n",
            "two words"
        ));
        let (fm, _) = frontmatter::parse("---\nname: \"ax\\x6flotl\"\n---\n");
        assert_eq!(fm["name"], "axolotl");
    }

    #[test]
    fn which_finds_executables_on_path() {
        assert!(which("sh", Some("/nonexistent:/bin:/usr/bin")));
        assert!(!which(
            "definitely-not-a-command-xyz",
            Some("/bin:/usr/bin")
        ));
        assert!(!which("sh", Some("")));
        assert!(which("/bin/sh", None));
    }
}
