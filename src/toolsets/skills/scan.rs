//! Skill discovery: the skills roots, the directory walk, platform /
//! environment / disabled filters, and `skills_list`.
//!
//! Mirrors `tools/skills_tool.py::_find_all_skills` and
//! `agent/skill_utils.py` (`iter_skill_index_files`, `get_external_skills_dirs`,
//! `get_disabled_skill_names`, `skill_matches_platform`/`_environment`).
//! The listing scan is cached as Hermes caches it (30 s, keyed on directory
//! mtimes and the disabled set); see `tools/bench-skills.py` for figures.

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::frontmatter::{self, Frontmatter, py_str_or_json, truthy};
use super::guard::{self, resolve_lenient, resolves_within, within_any};
use crate::hermes::envvars;
use crate::hermes::{Context, pass};

/// Directories never scanned for skills.
pub(crate) const EXCLUDED_DIRS: &[&str] = &[
    ".git",
    ".github",
    ".hub",
    ".archive",
    ".venv",
    "venv",
    "node_modules",
    "site-packages",
    "__pycache__",
    ".tox",
    ".nox",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
];

/// Support directories of a skill: loaded through `file_path`, never scanned for skills.
pub(crate) const SUPPORT_DIRS: &[&str] = &["references", "templates", "assets", "scripts"];

pub(crate) const MAX_NAME_LENGTH: usize = 64;
pub(crate) const MAX_DESCRIPTION_LENGTH: usize = 1024;
/// The listing scan reads only this many characters of each SKILL.md.
const LIST_READ_CHARS: usize = 4000;

/// Where skills live: `$HERMES_HOME/skills` first, then `skills.external_dirs`.
#[derive(Debug, Clone)]
pub(crate) struct Roots {
    /// `$HERMES_HOME/skills` as written (paths in results are relative to it).
    pub local: PathBuf,
    /// Existing external roots, resolved, in config order, without duplicates.
    pub external: Vec<PathBuf>,
    /// Every root resolved (symlinks followed): nothing may resolve outside these.
    pub trusted: Vec<PathBuf>,
}

impl Roots {
    pub(crate) fn load(ctx: &Context) -> Roots {
        let local = ctx.home.skills_dir();
        let local_resolved = resolve_lenient(&local).unwrap_or_else(|e| {
            tracing::warn!("skills directory {}: {e}", local.display());
            local.clone()
        });
        let mut external: Vec<PathBuf> = Vec::new();
        let raw: Vec<String> = match &ctx.sections().skills.external_dirs {
            Some(Value::Array(a)) => a.iter().map(py_str_or_json).collect(),
            Some(Value::String(s)) => vec![s.clone()],
            _ => Vec::new(),
        };
        for entry in raw {
            let entry = entry.trim();
            if entry.is_empty() {
                continue;
            }
            let expanded = expand_user(&expand_vars(entry, |n| ctx.env.get_unlisted(n)));
            let p = if expanded.is_absolute() {
                expanded
            } else {
                ctx.home.path.join(expanded)
            };
            let p = match resolve_lenient(&p) {
                Ok(p) => p,
                Err(e) => {
                    tracing::warn!("external skills dir skipped: {e}");
                    continue;
                }
            };
            if p == local_resolved || external.contains(&p) {
                continue;
            }
            if p.is_dir() {
                external.push(p);
            } else {
                tracing::debug!(
                    "external skills dir does not exist, skipping: {}",
                    p.display()
                );
            }
        }
        let mut trusted = vec![local_resolved];
        trusted.extend(external.iter().cloned());
        Roots {
            local,
            external,
            trusted,
        }
    }

    /// The roots to search: the local one when it exists, then the external ones.
    pub(crate) fn search_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = Vec::new();
        if self.local.is_dir() {
            dirs.push(self.local.clone());
        }
        dirs.extend(self.external.iter().cloned());
        dirs
    }

    /// Whether `path` (symlinks followed) stays inside a skills root.
    pub(crate) fn contains(&self, path: &Path) -> bool {
        resolves_within(path, &self.trusted)
    }

    /// Hermes' `_get_category_from_path`: the first component when the path
    /// relative to a root has three or more parts.
    pub(crate) fn category_of(&self, skill_md: &Path) -> Option<String> {
        std::iter::once(&self.local)
            .chain(self.external.iter())
            .find_map(|root| {
                let rel = skill_md.strip_prefix(root).ok()?;
                let parts: Vec<_> = rel.components().collect();
                (parts.len() >= 3).then(|| parts[0].as_os_str().to_string_lossy().into_owned())
            })
    }
}

/// `os.path.expandvars`: `$NAME` and `${NAME}`; unknown variables stay as written.
pub(crate) fn expand_vars(s: &str, lookup: impl Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let (name, consumed) = if let Some(inner) = after.strip_prefix('{') {
            match inner.find('}') {
                Some(end) => (&inner[..end], end + 2),
                None => ("", 0),
            }
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..end], end)
        };
        match (!name.is_empty()).then(|| lookup(name)).flatten() {
            Some(v) => {
                out.push_str(&v);
                rest = &after[consumed..];
            }
            None => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `os.path.expanduser` for `~` and `~/...`.
pub(crate) fn expand_user(s: &str) -> PathBuf {
    crate::hermes::home::expand_tilde(Path::new(s))
}

/// Walk `root` like Hermes' `os.walk(followlinks=True)` scan: excluded
/// directories and the support directories of a skill are pruned, symlinks
/// that resolve outside the skills roots are skipped, loops are cut.
/// `visit` gets every file that is not pruned.
pub(crate) fn walk_files(root: &Path, trusted: &[PathBuf], visit: &mut dyn FnMut(&Path)) {
    let mut seen = HashSet::new();
    walk_dir(root, trusted, &mut seen, visit);
}

fn walk_dir(
    dir: &Path,
    trusted: &[PathBuf],
    seen: &mut HashSet<(u64, u64)>,
    visit: &mut dyn FnMut(&Path),
) {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::metadata(dir) else {
        return;
    };
    if !seen.insert((meta.dev(), meta.ino())) {
        return;
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    for entry in rd.flatten() {
        let Ok(ft) = entry.file_type() else { continue };
        let path = entry.path();
        if ft.is_symlink() {
            // Followed like Python's realpath, dangling links included.
            let target = match resolve_lenient(&path) {
                Ok(t) => t,
                Err(e) => {
                    tracing::warn!("skipping {}: {e}", path.display());
                    continue;
                }
            };
            let is_dir = std::fs::metadata(&path).is_ok_and(|m| m.is_dir());
            if !within_any(&target, trusted) {
                tracing::warn!(
                    "skipping {}: symlink resolves outside the skills directories ({})",
                    path.display(),
                    target.display()
                );
                continue;
            }
            if is_dir {
                dirs.push((entry.file_name(), path));
            } else {
                files.push((entry.file_name(), path));
            }
        } else if ft.is_dir() {
            dirs.push((entry.file_name(), path));
        } else {
            files.push((entry.file_name(), path));
        }
    }
    let has_skill_md = files.iter().any(|(n, _)| n == "SKILL.md");
    for (_, p) in &files {
        visit(p);
    }
    dirs.sort();
    for (name, p) in dirs {
        let name = name.to_string_lossy();
        if EXCLUDED_DIRS.contains(&name.as_ref())
            || (has_skill_md && SUPPORT_DIRS.contains(&name.as_ref()))
        {
            continue;
        }
        walk_dir(&p, trusted, seen, visit);
    }
}

/// Every `SKILL.md` under `root`, sorted by path.
pub(crate) fn skill_md_files(root: &Path, trusted: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    walk_files(root, trusted, &mut |p| {
        if p.file_name().is_some_and(|n| n == "SKILL.md") {
            out.push(p.to_path_buf());
        }
    });
    out.sort();
    out
}

/// Hermes' `is_skill_support_path`: `path` lies under a support directory
/// that sits directly in a skill directory (one holding a SKILL.md).
pub(crate) fn is_skill_support_path(path: &Path) -> bool {
    let parts: Vec<_> = path.components().collect();
    for idx in 1..parts.len().saturating_sub(1) {
        let part = parts[idx].as_os_str().to_string_lossy();
        if !SUPPORT_DIRS.contains(&part.as_ref()) {
            continue;
        }
        let skill_root: PathBuf = parts[..idx].iter().collect();
        if skill_root.join("SKILL.md").exists() {
            return true;
        }
    }
    false
}

/// Read a text file as Python's `read_text(encoding="utf-8")` does, but only
/// if the file opened lies inside a skills root (`trusted`), is a regular
/// file and is at most [`guard::FILE_CAP`] bytes (see [`guard::read_within`]).
pub(crate) fn read_text(path: &Path, trusted: &[PathBuf]) -> Result<String, guard::ReadError> {
    let bytes = guard::read_within(path, trusted, guard::FILE_CAP)?;
    let text = String::from_utf8(bytes).map_err(guard::ReadError::NotUtf8)?;
    Ok(frontmatter::universal_newlines(text))
}

/// A SKILL.md as the scans use it: the frontmatter and listing description
/// of its first [`LIST_READ_CHARS`] characters (what `skills_list` reads),
/// and the frontmatter of the whole text (what the skills index reads) when
/// that is longer.
#[derive(Debug)]
pub(crate) struct SkillFile {
    pub head: Frontmatter,
    /// [`listing_description`] of the head.
    pub listing_description: String,
    full: Option<Frontmatter>,
}

impl SkillFile {
    fn parse(text: &str) -> SkillFile {
        let head_text = first_chars(text, LIST_READ_CHARS);
        let (head, body) = frontmatter::parse(head_text);
        let listing_description = listing_description(&head, body);
        let full = (head_text.len() < text.len()).then(|| frontmatter::parse(text).0);
        SkillFile {
            head,
            listing_description,
            full,
        }
    }

    /// The frontmatter of the whole file.
    pub(crate) fn full(&self) -> &Frontmatter {
        self.full.as_ref().unwrap_or(&self.head)
    }
}

/// Which file a [`SkillFile`] was read from: device, inode, size and mtime of
/// the file `path` names (symlinks followed). A file replaced or edited in
/// place is another file.
type FileStamp = (u64, u64, u64, Option<std::time::SystemTime>);

fn stamp(path: &Path) -> Option<FileStamp> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    Some((m.dev(), m.ino(), m.len(), m.modified().ok()))
}

type ParsedFiles =
    std::sync::Mutex<std::collections::HashMap<PathBuf, (FileStamp, std::sync::Arc<SkillFile>)>>;

/// Every SKILL.md parsed in this process, by path: `serve` reads the skills
/// once for the index when it starts, and the listing scan after
/// `tools/list` (and every rescan) finds them here while they are unchanged.
static PARSED: std::sync::LazyLock<ParsedFiles> = std::sync::LazyLock::new(Default::default);

/// `path` read (inside `trusted`) and parsed, or as parsed before when the
/// file is the same one ([`FileStamp`]).
pub(crate) fn skill_file(
    path: &Path,
    trusted: &[PathBuf],
) -> Result<std::sync::Arc<SkillFile>, guard::ReadError> {
    let before = stamp(path);
    if let Some(st) = before
        && let Ok(parsed) = PARSED.lock()
        && let Some((at, file)) = parsed.get(path)
        && *at == st
    {
        return Ok(file.clone());
    }
    let text = read_text(path, trusted)?;
    let file = std::sync::Arc::new(SkillFile::parse(&text));
    // Kept only when the file did not change while it was read.
    if let Some(st) = before
        && stamp(path) == Some(st)
        && let Ok(mut parsed) = PARSED.lock()
    {
        parsed.insert(path.to_path_buf(), (st, file.clone()));
    }
    Ok(file)
}

/// [`skill_file`] for each of `paths`, in order, read on up to four threads
/// (hundreds of skills are read before `serve` answers `initialize`).
pub(crate) fn skill_files(
    paths: &[PathBuf],
    trusted: &[PathBuf],
) -> Vec<Result<std::sync::Arc<SkillFile>, guard::ReadError>> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(4)
        .min(paths.len().div_ceil(32))
        .max(1);
    // In a pass, each directory on the files' way is looked at once
    // (`guard::resolve_lenient`).
    let read = |part: &[PathBuf]| -> Vec<_> {
        pass::run(|| part.iter().map(|p| skill_file(p, trusted)).collect())
    };
    if threads == 1 {
        return read(paths);
    }
    let chunk = paths.len().div_ceil(threads);
    std::thread::scope(|s| {
        let running: Vec<_> = paths
            .chunks(chunk)
            .map(|part| s.spawn(move || read(part)))
            .collect();
        running
            .into_iter()
            .zip(paths.chunks(chunk))
            .flat_map(|(t, part)| {
                // A reader that panicked: its part read here instead.
                t.join().unwrap_or_else(|_| read(part))
            })
            .collect()
    })
}

// ── Filters ──────────────────────────────────────────────────────────────

/// `sys.platform` for this build (`linux`, `darwin`, `win32`).
pub(crate) fn sys_platform() -> &'static str {
    match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
    }
}

fn is_termux(ctx: &Context) -> bool {
    ctx.env
        .get_unlisted("TERMUX_VERSION")
        .is_some_and(|v| !v.is_empty())
        || ctx
            .env
            .get_unlisted("PREFIX")
            .is_some_and(|p| p.contains("com.termux/files/usr"))
}

/// Hermes' `skill_matches_platform`: `platforms: [macos|linux|windows]`, absent = all.
pub(crate) fn matches_platform(ctx: &Context, fm: &Frontmatter) -> bool {
    let Some(platforms) = fm.get("platforms").filter(|v| truthy(v)) else {
        return true;
    };
    let list: Vec<String> = match platforms {
        Value::Array(a) => a.iter().map(py_str_or_json).collect(),
        other => vec![py_str_or_json(other)],
    };
    let current = sys_platform();
    let termux = is_termux(ctx);
    list.iter().any(|p| {
        let normalized = p.trim().to_lowercase();
        let mapped = match normalized.as_str() {
            "macos" => "darwin",
            "linux" => "linux",
            "windows" => "win32",
            other => other,
        };
        current.starts_with(mapped)
            || (termux && (mapped == "linux" || mapped == "termux" || mapped == "android"))
    })
}

fn environment_active(ctx: &Context, env: &str) -> bool {
    match env {
        "kanban" => {
            ctx.env.is_set(envvars::HERMES_KANBAN_TASK)
                || ctx.env.is_set(envvars::HERMES_KANBAN_BOARD)
                || ctx.sections().toolsets.contains("kanban")
        }
        "docker" => is_container(),
        "s6" => Path::new("/run/s6").is_dir() || Path::new("/package/admin/s6-overlay").is_dir(),
        _ => true,
    }
}

fn is_container() -> bool {
    if Path::new("/.dockerenv").exists() || Path::new("/run/.containerenv").exists() {
        return true;
    }
    std::fs::read_to_string("/proc/1/cgroup").is_ok_and(|c| {
        ["docker", "podman", "lxc", "kubepods", "containerd", "crio"]
            .iter()
            .any(|m| c.contains(m))
    })
}

/// Hermes' `skill_matches_environment` (offer-time only; unknown tags fail open).
pub(crate) fn matches_environment(ctx: &Context, fm: &Frontmatter) -> bool {
    let Some(envs) = fm.get("environments").filter(|v| truthy(v)) else {
        return true;
    };
    let list: Vec<String> = match envs {
        Value::Array(a) => a.iter().map(py_str_or_json).collect(),
        other => vec![py_str_or_json(other)],
    };
    for env in list {
        let n = env.trim().to_lowercase();
        if n.is_empty() {
            continue;
        }
        if !["kanban", "docker", "s6"].contains(&n.as_str()) || environment_active(ctx, &n) {
            return true;
        }
    }
    false
}

fn string_set(v: Option<&Value>) -> BTreeSet<String> {
    match v {
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| py_str_or_json(x).trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        Some(Value::String(s)) if !s.trim().is_empty() => [s.trim().to_string()].into(),
        _ => BTreeSet::new(),
    }
}

/// `skills.disabled`, plus `skills.platform_disabled.<HERMES_PLATFORM>` when set.
pub(crate) fn disabled_names(ctx: &Context) -> BTreeSet<String> {
    let cfg = &ctx.sections().skills;
    let mut set = string_set(cfg.disabled.as_ref());
    if let Some(platform) = ctx.env.get(envvars::HERMES_PLATFORM) {
        let per = cfg
            .platform_disabled
            .as_ref()
            .and_then(|m| m.get(&platform));
        set.extend(string_set(per));
    }
    set
}

// ── Listing ──────────────────────────────────────────────────────────────

#[derive(Debug, Clone)]
pub(crate) struct Listed {
    pub name: String,
    pub description: String,
    pub category: Option<String>,
}

fn first_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// The description shown in listings: frontmatter, else the first non-heading
/// body line; cut to 1021 characters + `...` when longer than 1024.
pub(crate) fn listing_description(fm: &Frontmatter, body: &str) -> String {
    let mut description = fm
        .get("description")
        .filter(|v| truthy(v))
        .map(py_str_or_json)
        .unwrap_or_default();
    if description.is_empty() {
        description = body
            .trim()
            .split('\n')
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with('#'))
            .unwrap_or("")
            .to_string();
    }
    if description.chars().count() > MAX_DESCRIPTION_LENGTH {
        description = format!(
            "{}...",
            first_chars(&description, MAX_DESCRIPTION_LENGTH - 3)
        );
    }
    description
}

/// The skill's name: frontmatter `name`, else its directory name.
pub(crate) fn skill_name(fm: &Frontmatter, fallback: &str) -> String {
    frontmatter::get_str(fm, "name").unwrap_or_else(|| fallback.to_string())
}

/// What a cached scan depends on: per root, the mtime of the root and the
/// names and mtimes of its immediate subdirectories (adding or removing a
/// skill or category changes one), plus the disabled set (Hermes'
/// `_skills_scan_signature`, which keeps only the newest mtime; the names are
/// kept too because two changes within one filesystem timestamp tick leave
/// the newest mtime as it was).
#[derive(Debug, Clone, PartialEq, Eq)]
struct ScanSignature {
    dirs: Vec<RootSignature>,
    disabled: BTreeSet<String>,
}

type Mtime = Option<std::time::SystemTime>;

#[derive(Debug, Clone, PartialEq, Eq)]
struct RootSignature {
    root: PathBuf,
    mtime: Mtime,
    subdirs: Vec<(std::ffi::OsString, Mtime)>,
}

fn scan_signature(dirs: &[PathBuf], disabled: &BTreeSet<String>) -> ScanSignature {
    let dirs = dirs
        .iter()
        .map(|d| {
            let mtime = std::fs::metadata(d).and_then(|m| m.modified()).ok();
            let mut subdirs: Vec<_> = std::fs::read_dir(d)
                .into_iter()
                .flatten()
                .flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| {
                    let m = e.metadata().and_then(|m| m.modified()).ok();
                    (e.file_name(), m)
                })
                .collect();
            subdirs.sort();
            RootSignature {
                root: d.clone(),
                mtime,
                subdirs,
            }
        })
        .collect();
    ScanSignature {
        dirs,
        disabled: disabled.clone(),
    }
}

/// Hermes keeps a scan for 30 s while its signature holds; in-place edits of
/// a SKILL.md (which bump no directory mtime) show up within that time.
const SCAN_TTL: std::time::Duration = std::time::Duration::from_secs(30);

type ScanCache = std::sync::Mutex<Option<(ScanSignature, std::time::Instant, Vec<Listed>)>>;
static SCAN_CACHE: ScanCache = std::sync::Mutex::new(None);

/// Hermes' `_find_all_skills`: enabled, platform- and environment-matching
/// skills; the first root wins on a name conflict. Cached like Hermes (see
/// [`SCAN_TTL`]).
pub(crate) fn find_all_skills(ctx: &Context, roots: &Roots) -> Vec<Listed> {
    let disabled = disabled_names(ctx);
    let dirs = roots.search_dirs();
    let signature = scan_signature(&dirs, &disabled);
    let now = std::time::Instant::now();
    if let Ok(guard) = SCAN_CACHE.lock()
        && let Some((sig, at, skills)) = guard.as_ref()
        && *sig == signature
        && now.duration_since(*at) < SCAN_TTL
    {
        return skills.clone();
    }
    let skills = scan_all_skills(ctx, roots, &dirs, &disabled);
    if let Ok(mut guard) = SCAN_CACHE.lock() {
        *guard = Some((signature, now, skills.clone()));
    }
    skills
}

fn scan_all_skills(
    ctx: &Context,
    roots: &Roots,
    dirs: &[PathBuf],
    disabled: &BTreeSet<String>,
) -> Vec<Listed> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for root in dirs {
        let files = skill_md_files(root, &roots.trusted);
        for (skill_md, parsed) in files.iter().zip(skill_files(&files, &roots.trusted)) {
            let Ok(parsed) = parsed else {
                tracing::debug!("cannot read {}", skill_md.display());
                continue;
            };
            let fm = &parsed.head;
            if !matches_platform(ctx, fm) || !matches_environment(ctx, fm) {
                continue;
            }
            let dir_name = skill_md
                .parent()
                .and_then(Path::file_name)
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let name = first_chars(&skill_name(fm, &dir_name), MAX_NAME_LENGTH).to_string();
            if seen.contains(&name) || disabled.contains(&name) {
                continue;
            }
            seen.insert(name.clone());
            out.push(Listed {
                name,
                description: parsed.listing_description.clone(),
                category: roots.category_of(skill_md),
            });
        }
    }
    sort_skills(&mut out);
    out
}

/// Hermes' `_sort_skills`: by (category or "", name).
pub(crate) fn sort_skills(skills: &mut [Listed]) {
    skills.sort_by(|a, b| {
        (a.category.as_deref().unwrap_or(""), &a.name)
            .cmp(&(b.category.as_deref().unwrap_or(""), &b.name))
    });
}

/// `~/...` when the home is under the user's home directory (`display_hermes_home`).
pub(crate) fn display_hermes_home(home: &Path) -> String {
    if let Some(h) = std::env::home_dir()
        && let Ok(rel) = home.strip_prefix(&h)
    {
        return format!("~/{}", rel.display());
    }
    home.display().to_string()
}

/// `skills_list(category?)`.
pub(crate) fn skills_list(ctx: &Context, category: Option<&str>) -> Result<Value, Value> {
    let roots = Roots::load(ctx);
    if !roots.local.exists() {
        // Hermes creates <home>/skills/, but never a Hermes home that is not there
        // (a mistyped HERMES_HOME must not turn into an empty new home).
        let created = if ctx.home.path.is_dir() {
            std::fs::create_dir_all(&roots.local)
        } else {
            Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "the Hermes home does not exist (check HERMES_HOME)",
            ))
        };
        if let Err(e) = created {
            return Err(json!({
                "error": format!("cannot create the skills directory {}: {e}", roots.local.display()),
                "success": false,
            }));
        }
        if roots.external.is_empty() {
            return Ok(json!({
                "success": true,
                "skills": [],
                "categories": [],
                "message": format!(
                    "No skills found. Skills directory created at {}/skills/",
                    display_hermes_home(&ctx.home.path)
                ),
            }));
        }
    }
    let mut all = find_all_skills(ctx, &roots);
    if all.is_empty() {
        return Ok(json!({
            "success": true,
            "skills": [],
            "categories": [],
            "message": "No skills found in skills/ directory.",
        }));
    }
    if let Some(cat) = category.filter(|c| !c.is_empty()) {
        all.retain(|s| s.category.as_deref() == Some(cat));
    }
    let categories: BTreeSet<&str> = all.iter().filter_map(|s| s.category.as_deref()).collect();
    let skills: Vec<Value> = all
        .iter()
        .map(|s| json!({"name": s.name, "description": s.description, "category": s.category}))
        .collect();
    Ok(json!({
        "success": true,
        "skills": skills,
        "categories": categories,
        "count": all.len(),
        "hint": "Use skill_view(name) to see full content, tags, and linked files",
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn external_dirs_resolve_like_hermes() {
        use crate::hermes::{Env, HermesConfig, HermesHome};
        let t = tempfile::tempdir().unwrap();
        let home = t.path().join("hermes");
        for d in ["hermes/skills", "hermes/rel-skills", "team", "via-var"] {
            std::fs::create_dir_all(t.path().join(d)).unwrap();
        }
        let cfg = HermesConfig::from_yaml(&format!(
            "skills:\n  external_dirs:\n    - rel-skills\n    - {team}\n    - {team}/\n    - ${{TEAM_SKILLS}}\n    - $MISSING_VAR/x\n    - {home}/skills\n    - ''\n    - /nonexistent/dir\n",
            team = t.path().join("team").display(),
            home = home.display(),
        ))
        .unwrap();
        let env = Env::from_map([(
            "TEAM_SKILLS",
            t.path().join("via-var").display().to_string(),
        )]);
        let ctx = Context::with_parts(
            HermesHome {
                path: home.clone(),
                explicit: true,
            },
            env,
            cfg,
        );
        let roots = Roots::load(&ctx);
        let canon = |p: &str| std::fs::canonicalize(t.path().join(p)).unwrap();
        assert_eq!(
            roots.external,
            vec![canon("hermes/rel-skills"), canon("team"), canon("via-var")]
        );
        assert_eq!(roots.trusted[0], canon("hermes/skills"));
        assert_eq!(roots.search_dirs()[0], home.join("skills"));
        assert_eq!(
            roots
                .category_of(&home.join("skills/cat/sub/skill/SKILL.md"))
                .as_deref(),
            Some("cat")
        );
        assert_eq!(roots.category_of(&home.join("skills/skill/SKILL.md")), None);
    }

    #[test]
    fn listing_cache_follows_directory_changes() {
        use crate::hermes::{Env, HermesConfig, HermesHome};
        let t = tempfile::tempdir().unwrap();
        let skill = |n: &str| {
            let d = t.path().join("skills").join(n);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("SKILL.md"), format!("---\nname: {n}\n---\n")).unwrap();
        };
        skill("one");
        let ctx = Context::with_parts(
            HermesHome {
                path: t.path().to_path_buf(),
                explicit: true,
            },
            Env::from_map(Vec::<(String, String)>::new()),
            HermesConfig::default(),
        );
        let names = |ctx: &Context| -> Vec<String> {
            find_all_skills(ctx, &Roots::load(ctx))
                .into_iter()
                .map(|s| s.name)
                .collect()
        };
        assert_eq!(names(&ctx), ["one"]);
        skill("two");
        assert_eq!(
            names(&ctx),
            ["one", "two"],
            "a new skill dir changes the signature"
        );
        std::fs::remove_dir_all(t.path().join("skills/one")).unwrap();
        assert_eq!(names(&ctx), ["two"]);
    }

    #[test]
    fn expandvars_like_python() {
        let look = |n: &str| (n == "X").then(|| "/opt/x".to_string());
        assert_eq!(expand_vars("$X/skills", look), "/opt/x/skills");
        assert_eq!(expand_vars("${X}/s", look), "/opt/x/s");
        assert_eq!(expand_vars("$NOPE/s", look), "$NOPE/s");
        assert_eq!(expand_vars("${NOPE}/s$", look), "${NOPE}/s$");
    }

    #[test]
    fn description_fallback_and_cut() {
        let (fm, body) = frontmatter::parse("---\nname: x\n---\n# Title\n\nFirst line.\nSecond\n");
        assert_eq!(listing_description(&fm, body), "First line.");
        let long = "é".repeat(1100);
        let doc = format!("---\ndescription: {long}\n---\n");
        let (fm, body) = frontmatter::parse(&doc);
        let d = listing_description(&fm, body);
        assert_eq!(d.chars().count(), 1024);
        assert!(d.ends_with("..."));
    }
}
