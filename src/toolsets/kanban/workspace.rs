//! Scratch workspaces on completion, as `complete_task` handles them
//! (hermes-agent: `hermes_cli/kanban_db.py`, `_persist_scratch_completion_artifacts`,
//! `_cleanup_workspace`): deliverables inside a managed scratch workspace are
//! copied to the task's attachments before the workspace is removed, and
//! removal only ever touches strict descendants of a kanban `workspaces/` root
//! (the containment guard in `_cleanup_workspace`: a board's `default_workdir`
//! paired with a scratch workspace must never make completion delete a user's
//! source tree).
//!
//! Filesystem only: the caller reads the task's workspace from the database
//! and records what was copied, so this module needs no SQL.

use std::path::{Component, Path, PathBuf};

use serde_json::{Value, json};

use crate::toolsets::kanban::error::ArtifactError;
use crate::toolsets::kanban::paths::{DEFAULT_BOARD, KanbanPaths};
use crate::toolsets::kanban::util::py_strip;

/// Hermes' per-attachment size limit.
const ATTACHMENT_MAX_BYTES: u64 = 25 * 1024 * 1024;

/// `Path.resolve(strict=False)`: canonicalize the existing prefix, keep the rest.
fn resolve_lenient(p: &Path) -> PathBuf {
    let p = crate::hermes::home::expand_tilde(p);
    let abs = if p.is_absolute() {
        p
    } else {
        std::env::current_dir().map(|d| d.join(&p)).unwrap_or(p)
    };
    let mut existing = abs.clone();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    loop {
        if let Ok(c) = std::fs::canonicalize(&existing) {
            let mut out = c;
            for r in rest.iter().rev() {
                out.push(r);
            }
            return normalize(&out);
        }
        match (
            existing.file_name().map(|f| f.to_os_string()),
            existing.parent(),
        ) {
            (Some(f), Some(parent)) => {
                rest.push(f);
                existing = parent.to_path_buf();
            }
            _ => return normalize(&abs),
        }
    }
}

fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

impl KanbanPaths {
    /// `_managed_scratch_path_info`: `Some(board)` when `p` is strictly inside
    /// a kanban workspaces root (`None` board for the env-pinned root).
    fn managed_scratch_board(&self, p: &Path) -> Option<Option<String>> {
        let abs = resolve_lenient(p);
        let mut roots: Vec<(PathBuf, Option<String>)> = Vec::new();
        if let Some(o) = &self.workspaces_override {
            roots.push((resolve_lenient(o), None));
        }
        roots.push((
            resolve_lenient(&self.root.join("kanban").join("workspaces")),
            Some(DEFAULT_BOARD.to_string()),
        ));
        if let Ok(entries) = std::fs::read_dir(self.boards_root()) {
            for e in entries.flatten() {
                if e.path().is_dir() {
                    roots.push((
                        resolve_lenient(&e.path().join("workspaces")),
                        Some(e.file_name().to_string_lossy().to_string()),
                    ));
                }
            }
        }
        roots
            .into_iter()
            .find(|(root, _)| abs != *root && abs.starts_with(root))
            .map(|(_, b)| b)
    }

    /// `task_attachments_dir(task_id, board)`.
    fn attachments_dir(&self, task_id: &str, board: Option<&str>) -> PathBuf {
        let root = match &self.attachments_override {
            Some(o) => o.clone(),
            None => {
                let slug = board
                    .map(str::to_string)
                    .unwrap_or_else(|| self.current_board());
                if slug == DEFAULT_BOARD {
                    self.root.join("kanban").join("attachments")
                } else {
                    self.board_dir(&slug).join("attachments")
                }
            }
        };
        root.join(task_id)
    }
}

/// `_merge_completion_prose_artifacts`: files under the scratch workspace that
/// the summary/result names by absolute path join `metadata.artifacts`.
pub(crate) fn merge_prose_artifacts(
    paths: &KanbanPaths,
    ws: &Path,
    metadata: Option<Value>,
    texts: &[&str],
) -> Result<Option<Value>, regex::Error> {
    if paths.managed_scratch_board(ws).is_none() {
        return Ok(metadata);
    }
    let text = texts
        .iter()
        .filter(|t| !t.is_empty())
        .cloned()
        .collect::<Vec<_>>()
        .join("\n");
    if text.is_empty() {
        return Ok(metadata);
    }
    let re = regex::Regex::new(&format!(
        "{}(?:[/\\\\][^\\s`\"'<>]+)",
        regex::escape(&ws.to_string_lossy())
    ))?;
    let found: Vec<String> = re
        .find_iter(&text)
        .map(|m| {
            m.as_str()
                .trim_end_matches(['.', ',', ';', ':', '!', '?', ')', ']', '}'])
                .to_string()
        })
        .filter(|c| Path::new(c).is_file())
        .collect();
    if found.is_empty() {
        return Ok(metadata);
    }
    let mut m = match metadata {
        Some(Value::Object(m)) => m,
        _ => Default::default(),
    };
    let mut merged: Vec<Value> = match m.get("artifacts") {
        Some(Value::Array(a)) => a.clone(),
        _ => vec![],
    };
    for f in found {
        if !merged.iter().any(|v| v.as_str() == Some(f.as_str())) {
            merged.push(json!(f));
        }
    }
    m.insert("artifacts".into(), Value::Array(merged));
    Ok(Some(Value::Object(m)))
}

/// `_persist_scratch_completion_artifacts`, run inside the completion
/// transaction: copies the declared deliverables under the scratch workspace
/// `ws` to the task's attachments directory and points `metadata.artifacts`
/// at the copies. Returns the copies for the caller to record as attachment
/// rows. A missing or oversized deliverable removes what was copied so far
/// and aborts the completion.
pub(crate) fn persist_artifacts(
    paths: &KanbanPaths,
    task_id: &str,
    ws: &Path,
    metadata: &mut Value,
) -> Result<Vec<Copied>, ArtifactError> {
    let Some(Value::Array(raw)) = metadata.get("artifacts").cloned() else {
        return Ok(vec![]);
    };
    let Some(board) = paths.managed_scratch_board(ws) else {
        return Ok(vec![]);
    };
    let Ok(ws_root) = std::fs::canonicalize(ws) else {
        return Ok(vec![]);
    };
    let dir = paths.attachments_dir(task_id, board.as_deref());
    let mut persisted: Vec<String> = Vec::new();
    let mut copied: Vec<PathBuf> = Vec::new();
    let discard = |copied: &[PathBuf]| {
        for c in copied {
            let _ = std::fs::remove_file(c);
        }
        let _ = std::fs::remove_dir(&dir);
    };
    let fail = |copied: &[PathBuf], e: ArtifactError| {
        discard(copied);
        Err(e)
    };
    for item in raw {
        let Some(a) = item.as_str().map(py_strip).filter(|s| !s.is_empty()) else {
            continue;
        };
        let src = crate::hermes::home::expand_tilde(Path::new(a));
        let resolved = resolve_lenient(&src);
        if !resolved.starts_with(&ws_root) {
            persisted.push(a.to_string());
            continue;
        }
        if !src.is_file() {
            return fail(&copied, ArtifactError::Unavailable { path: a.into() });
        }
        let size = std::fs::metadata(&resolved).map(|m| m.len()).unwrap_or(0);
        if size > ATTACHMENT_MAX_BYTES {
            return fail(
                &copied,
                ArtifactError::TooLarge {
                    path: a.into(),
                    limit: ATTACHMENT_MAX_BYTES,
                },
            );
        }
        if let Err(source) = std::fs::create_dir_all(&dir) {
            let path = a.into();
            return fail(&copied, ArtifactError::Copy { path, source });
        }
        let name = resolved
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_else(|| "artifact".into());
        let dest = unique_path(&dir, &name, &copied);
        let res = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&dest)
            .and_then(|mut out| {
                // The checked file is the one copied: opened without blocking,
                // regular only, and never more than the limit.
                let inp = crate::fs::open_regular(&resolved).map_err(|e| match e {
                    crate::fs::FileError::Open { source, .. } => source,
                    other => std::io::Error::other(other.to_string()),
                })?;
                std::io::copy(
                    &mut std::io::Read::take(inp, ATTACHMENT_MAX_BYTES),
                    &mut out,
                )
            });
        if let Err(source) = res {
            let _ = std::fs::remove_file(&dest);
            let path = a.into();
            return fail(&copied, ArtifactError::Copy { path, source });
        }
        copied.push(dest.clone());
        persisted.push(
            std::fs::canonicalize(&dest)
                .unwrap_or(dest)
                .to_string_lossy()
                .to_string(),
        );
    }
    if copied.is_empty() {
        return Ok(vec![]);
    }
    metadata["artifacts"] = json!(persisted);
    Ok(copied
        .into_iter()
        .map(|dest| {
            let stored = std::fs::canonicalize(&dest).unwrap_or(dest);
            Copied {
                filename: stored
                    .file_name()
                    .map(|n| n.to_string_lossy().to_string())
                    .unwrap_or_default(),
                size: std::fs::metadata(&stored).map(|m| m.len()).unwrap_or(0) as i64,
                stored_path: stored.to_string_lossy().to_string(),
            }
        })
        .collect())
}

/// A deliverable [`persist_artifacts`] copied into the attachments directory.
pub(crate) struct Copied {
    pub(crate) filename: String,
    pub(crate) stored_path: String,
    pub(crate) size: i64,
}

fn unique_path(dir: &Path, name: &str, used: &[PathBuf]) -> PathBuf {
    let leaf = Path::new(name)
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "artifact".into());
    let cand = dir.join(&leaf);
    if !used.contains(&cand) && !cand.exists() {
        return cand;
    }
    let p = Path::new(&leaf);
    let stem = p
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or("artifact".into());
    let ext = p
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    (1..)
        .map(|i| dir.join(format!("{stem}_{i}{ext}")))
        .find(|c| !used.contains(c) && !c.exists())
        .expect("a free name")
}

/// Part of `_cleanup_workspace`: remove `ws` when it is a directory strictly
/// inside a kanban workspaces root (never a user directory a task pointed
/// at). Best effort: errors are ignored, completion never fails on cleanup.
pub(crate) fn remove_scratch(paths: &KanbanPaths, ws: &Path) {
    if ws.is_dir() && paths.managed_scratch_board(ws).is_some() {
        let _ = std::fs::remove_dir_all(ws);
    }
}
