//! Scratch workspaces on completion, as `complete_task` handles them:
//! deliverables inside a managed scratch workspace are copied to the task's
//! attachments before the workspace is removed, and removal only ever
//! touches strict descendants of a kanban `workspaces/` root (#28818).

use std::path::{Component, Path, PathBuf};

use rusqlite::{Connection, params};
use serde_json::{Value, json};

use super::db::{DbError, DbResult};
use super::ops;
use super::paths::{DEFAULT_BOARD, KanbanPaths};

pub const ATTACHMENT_MAX_BYTES: u64 = 25 * 1024 * 1024;

/// `Path.resolve(strict=False)`: canonicalize the existing prefix, keep the rest.
pub fn resolve_lenient(p: &Path) -> PathBuf {
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
    pub fn managed_scratch_board(&self, p: &Path) -> Option<Option<String>> {
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
    pub fn attachments_dir(&self, task_id: &str, board: Option<&str>) -> PathBuf {
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

fn scratch_workspace(conn: &Connection, task_id: &str) -> DbResult<Option<PathBuf>> {
    let row: Option<(Option<String>, Option<String>)> = conn
        .query_row(
            "SELECT workspace_kind, workspace_path FROM tasks WHERE id = ?",
            [task_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .ok();
    Ok(match row {
        Some((Some(kind), Some(path))) if kind == "scratch" && !path.is_empty() => {
            Some(crate::hermes::home::expand_tilde(Path::new(&path)))
        }
        _ => None,
    })
}

/// `_merge_completion_prose_artifacts`: files under the scratch workspace that
/// the summary/result names by absolute path join `metadata.artifacts`.
pub fn merge_prose_artifacts(
    conn: &Connection,
    paths: &KanbanPaths,
    task_id: &str,
    metadata: Option<Value>,
    texts: &[&str],
) -> DbResult<Option<Value>> {
    let Some(ws) = scratch_workspace(conn, task_id)? else {
        return Ok(metadata);
    };
    if paths.managed_scratch_board(&ws).is_none() {
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
    ))
    .map_err(|e| DbError::Other(e.to_string()))?;
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

/// `_persist_scratch_completion_artifacts` + attachment rows, inside the
/// completion transaction: copies declared deliverables out of the scratch
/// workspace. A missing or oversized deliverable aborts the completion.
pub fn persist_artifacts(
    conn: &Connection,
    paths: &KanbanPaths,
    task_id: &str,
    metadata: &mut Value,
) -> DbResult<()> {
    let Some(Value::Array(raw)) = metadata.get("artifacts").cloned() else {
        return Ok(());
    };
    let Some(ws) = scratch_workspace(conn, task_id)? else {
        return Ok(());
    };
    let Some(board) = paths.managed_scratch_board(&ws) else {
        return Ok(());
    };
    let Ok(ws_root) = std::fs::canonicalize(&ws) else {
        return Ok(());
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
    let fail = |copied: &[PathBuf], msg: String| {
        discard(copied);
        Err(DbError::Artifact(msg))
    };
    for item in raw {
        let Some(a) = item.as_str().map(ops::py_strip).filter(|s| !s.is_empty()) else {
            continue;
        };
        let src = crate::hermes::home::expand_tilde(Path::new(a));
        let resolved = resolve_lenient(&src);
        if !resolved.starts_with(&ws_root) {
            persisted.push(a.to_string());
            continue;
        }
        if !src.is_file() {
            return fail(
                &copied,
                format!("declared scratch artifact is unavailable or not a regular file: {a}"),
            );
        }
        let size = std::fs::metadata(&resolved).map(|m| m.len()).unwrap_or(0);
        if size > ATTACHMENT_MAX_BYTES {
            return fail(
                &copied,
                format!(
                    "declared scratch artifact exceeds the {ATTACHMENT_MAX_BYTES}-byte limit: {a}"
                ),
            );
        }
        if let Err(e) = std::fs::create_dir_all(&dir) {
            return fail(
                &copied,
                format!("could not preserve declared scratch artifact {a}: {e}"),
            );
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
                let mut inp = std::fs::File::open(&resolved)?;
                std::io::copy(&mut inp, &mut out)
            });
        if let Err(e) = res {
            let _ = std::fs::remove_file(&dest);
            return fail(
                &copied,
                format!("could not preserve declared scratch artifact {a}: {e}"),
            );
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
        return Ok(());
    }
    metadata["artifacts"] = json!(persisted);
    let t = ops::now();
    for dest in &copied {
        let stored = std::fs::canonicalize(dest).unwrap_or(dest.clone());
        let filename = stored
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        let size = std::fs::metadata(&stored).map(|m| m.len()).unwrap_or(0) as i64;
        conn.execute(
            "INSERT INTO task_attachments (task_id, filename, stored_path, content_type, size, uploaded_by, created_at) \
             VALUES (?, ?, ?, NULL, ?, 'kanban_complete', ?)",
            params![task_id, filename, stored.to_string_lossy(), size, t],
        )?;
        ops::append_event(
            conn,
            task_id,
            "attached",
            Some(json!({"filename": filename, "size": size, "by": "kanban_complete"})),
            None,
        )?;
    }
    Ok(())
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

const ACTIVE_CHILD: &str = "SELECT 1 FROM task_links l JOIN tasks t ON t.id = l.child_id WHERE l.parent_id = ? \
    AND t.status NOT IN ('done', 'archived', 'failed', 'cancelled') LIMIT 1";

/// `_cleanup_workspace`: remove the finished task's managed scratch
/// directory unless a child still needs it, then any parent scratch whose
/// children are now all finished. Best effort, never fails the completion.
pub fn cleanup_after_complete(conn: &Connection, paths: &KanbanPaths, task_id: &str) {
    let remove = |ws: &Path| {
        if ws.is_dir() && paths.managed_scratch_board(ws).is_some() {
            let _ = std::fs::remove_dir_all(ws);
        }
    };
    let active = |id: &str| {
        conn.prepare_cached(ACTIVE_CHILD)
            .and_then(|mut s| s.exists([id]))
            .unwrap_or(true)
    };
    if let Ok(Some(ws)) = scratch_workspace(conn, task_id) {
        if active(task_id) {
            return;
        }
        remove(&ws);
    }
    if let Ok(parents) = ops::parent_ids(conn, task_id) {
        for p in parents {
            if let Ok(Some(ws)) = scratch_workspace(conn, &p)
                && !active(&p)
            {
                remove(&ws);
            }
        }
    }
}
