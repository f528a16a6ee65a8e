//! Board and database resolution, as hermes-agent's `hermes_cli/kanban_db.py`
//! does it (`kanban_db_path`, `get_current_board`).
//!
//! * Kanban root: `HERMES_KANBAN_HOME`, else Hermes' default root (the parent
//!   of `profiles/`), deliberately shared across profiles.
//! * `HERMES_KANBAN_DB` pins the file and wins over everything, even an
//!   explicit `board` argument (the dispatcher sets it for its workers).
//! * Otherwise the board is the `board` argument, else `HERMES_KANBAN_BOARD`
//!   (if that board exists), else `<root>/kanban/current` (if it exists), else
//!   `default`. `default` lives at `<root>/kanban.db`; named boards at
//!   `<root>/kanban/boards/<slug>/kanban.db`.

use std::path::{Path, PathBuf};

use crate::hermes::home::expand_tilde;
use crate::hermes::{Env, HermesHome, envvars};
use crate::toolsets::kanban::error::BoardError;

/// `kanban/current` and `board.json` are a few bytes; a FIFO, a device or a
/// runaway file there must not hang or flood a tool call.
const SMALL_FILE_CAP: u64 = 1 << 20;

pub(crate) const DEFAULT_BOARD: &str = "default";

/// Hermes' `_BOARD_SLUG_RE` = `^[a-z0-9][a-z0-9\-_]{0,63}$`: the same rule as
/// its profile names.
pub(crate) fn is_valid_slug(s: &str) -> bool {
    crate::hermes::home::is_valid_profile_name(s)
}

/// `_normalize_board_slug`: strip + lowercase, `None` for empty, error text as Hermes.
pub(crate) fn normalize_slug(slug: Option<&str>) -> Result<Option<String>, BoardError> {
    let Some(raw) = slug else { return Ok(None) };
    let s = raw.trim().to_lowercase();
    if s.is_empty() {
        return Ok(None);
    }
    if !is_valid_slug(&s) {
        return Err(BoardError::InvalidSlug { raw: raw.into() });
    }
    Ok(Some(s))
}

/// Where the kanban files of this process live.
#[derive(Debug, Clone)]
pub(crate) struct KanbanPaths {
    /// The kanban root (`HERMES_KANBAN_HOME` or Hermes' default root).
    pub(crate) root: PathBuf,
    /// `HERMES_KANBAN_DB`, when set.
    pub(crate) db_override: Option<PathBuf>,
    /// `HERMES_KANBAN_BOARD`, when set.
    pub(crate) env_board: Option<String>,
    /// `HERMES_KANBAN_WORKSPACES_ROOT`, when set.
    pub(crate) workspaces_override: Option<PathBuf>,
    /// `HERMES_KANBAN_ATTACHMENTS_ROOT`, when set.
    pub(crate) attachments_override: Option<PathBuf>,
}

impl KanbanPaths {
    pub(crate) fn from_env(env: &Env, home: &HermesHome) -> Self {
        let get = |n: &str| {
            env.get(n)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        KanbanPaths {
            root: get(envvars::HERMES_KANBAN_HOME)
                .map(|v| expand_tilde(Path::new(&v)))
                .unwrap_or_else(|| home.root()),
            db_override: get(envvars::HERMES_KANBAN_DB).map(|v| expand_tilde(Path::new(&v))),
            env_board: get(envvars::HERMES_KANBAN_BOARD),
            workspaces_override: get(envvars::HERMES_KANBAN_WORKSPACES_ROOT)
                .map(|v| expand_tilde(Path::new(&v))),
            attachments_override: get(envvars::HERMES_KANBAN_ATTACHMENTS_ROOT)
                .map(|v| expand_tilde(Path::new(&v))),
        }
    }

    pub(crate) fn boards_root(&self) -> PathBuf {
        self.root.join("kanban").join("boards")
    }

    pub(crate) fn board_dir(&self, slug: &str) -> PathBuf {
        self.boards_root().join(slug)
    }

    /// `board_exists`: `default` always; others need `board.json` or `kanban.db`.
    pub(crate) fn board_exists(&self, slug: &str) -> bool {
        if slug == DEFAULT_BOARD {
            return true;
        }
        let d = self.board_dir(slug);
        d.join("board.json").exists() || d.join("kanban.db").exists()
    }

    /// `get_current_board`: env board, then the `current` file, then `default`.
    /// Malformed or missing boards fall through silently, as in Hermes.
    pub(crate) fn current_board(&self) -> String {
        if let Some(env) = &self.env_board
            && let Ok(Some(s)) = normalize_slug(Some(env))
            && self.board_exists(&s)
        {
            return s;
        }
        let f = self.root.join("kanban").join("current");
        if let Ok(Some(text)) = crate::fs::read_to_string_capped_opt(&f, SMALL_FILE_CAP) {
            let text = text.trim_start_matches('\u{feff}').trim();
            if !text.is_empty()
                && let Ok(Some(s)) = normalize_slug(Some(text))
                && self.board_exists(&s)
            {
                return s;
            }
        }
        DEFAULT_BOARD.to_string()
    }

    /// The board slug a call targets (`board` argument or the active board).
    pub(crate) fn board_slug(&self, board: Option<&str>) -> Result<String, BoardError> {
        Ok(match normalize_slug(board)? {
            Some(s) => s,
            None => self.current_board(),
        })
    }

    /// `kanban_db_path(board)`. An explicit `board` that does not exist is
    /// refused instead of silently creating an empty board (Hermes would
    /// create `<root>/kanban/boards/<typo>/kanban.db`).
    pub(crate) fn db_path(&self, board: Option<&str>) -> Result<PathBuf, BoardError> {
        let explicit = normalize_slug(board)?;
        if let Some(p) = &self.db_override {
            return Ok(p.clone());
        }
        let slug = match explicit {
            Some(s) => {
                if !self.board_exists(&s) {
                    return Err(BoardError::Missing { slug: s });
                }
                s
            }
            None => self.current_board(),
        };
        Ok(if slug == DEFAULT_BOARD {
            self.root.join("kanban.db")
        } else {
            self.board_dir(&slug).join("kanban.db")
        })
    }

    /// `read_board_metadata(slug)["default_workdir"]`.
    pub(crate) fn board_default_workdir(&self, slug: &str) -> Option<String> {
        let p = self.board_dir(slug).join("board.json");
        let text = crate::fs::read_to_string_capped(&p, SMALL_FILE_CAP).ok()?;
        let v: serde_json::Value = serde_json::from_str(&text).ok()?;
        match v.get("default_workdir")? {
            serde_json::Value::String(s) if !s.is_empty() => Some(s.clone()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(root: &Path) -> KanbanPaths {
        KanbanPaths {
            root: root.to_path_buf(),
            db_override: None,
            env_board: None,
            workspaces_override: None,
            attachments_override: None,
        }
    }

    #[test]
    fn slugs_follow_hermes_rule() {
        assert_eq!(
            normalize_slug(Some(" Atm10-Server ")).unwrap().as_deref(),
            Some("atm10-server")
        );
        assert_eq!(normalize_slug(Some("  ")).unwrap(), None);
        for bad in ["../x", "-a", "_a", "a b", "a/b", &"x".repeat(65)] {
            let e = normalize_slug(Some(bad)).unwrap_err().to_string();
            assert!(e.starts_with("invalid board slug"), "{e}");
        }
    }

    #[test]
    fn resolution_order() {
        let d = tempfile::tempdir().unwrap();
        let mut p = paths(d.path());
        assert_eq!(p.db_path(None).unwrap(), d.path().join("kanban.db"));
        // A missing named board is refused, default always exists.
        assert!(
            p.db_path(Some("nope"))
                .unwrap_err()
                .to_string()
                .contains("does not exist")
        );
        assert_eq!(
            p.db_path(Some("default")).unwrap(),
            d.path().join("kanban.db")
        );
        std::fs::create_dir_all(d.path().join("kanban/boards/proj")).unwrap();
        std::fs::write(d.path().join("kanban/boards/proj/board.json"), "{}").unwrap();
        // `current` file (with a BOM) selects a board that exists.
        std::fs::write(d.path().join("kanban/current"), "\u{feff}proj\n").unwrap();
        assert_eq!(
            p.db_path(None).unwrap(),
            d.path().join("kanban/boards/proj/kanban.db")
        );
        // Env board wins over `current`, but only when it exists.
        p.env_board = Some("ghost".into());
        assert_eq!(p.current_board(), "proj");
        p.env_board = Some("default".into());
        assert_eq!(p.current_board(), "default");
        // HERMES_KANBAN_DB pins the file even over an explicit board.
        p.db_override = Some(d.path().join("pinned.db"));
        assert_eq!(p.db_path(Some("proj")).unwrap(), d.path().join("pinned.db"));
        assert!(p.db_path(Some("Bad Slug")).is_err());
    }
}
