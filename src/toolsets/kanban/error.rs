//! The kanban toolset's error types. Each `Display` is the exact text Hermes
//! (or this port, where Hermes has no equivalent) shows for the failure, since
//! handlers surface errors as `<tool>: <error>` and tests and agents read them.
//! A leaf: imports nothing else from kanban.

use std::path::PathBuf;

use crate::toolsets::kanban::util::py_repr;

/// What a kanban operation can fail with.
#[derive(Debug, thiserror::Error)]
pub(crate) enum KanbanError {
    #[error("{0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// Hermes' `ValueError`: surfaced as `<tool>: <message>`.
    #[error("{0}")]
    Value(String),
    /// A bad `board` argument (also a `ValueError` in Hermes).
    #[error("{0}")]
    Board(#[from] BoardError),
    #[error(
        "Refusing to open corrupt kanban DB at {path}: {reason}. Original preserved; backup at {backup}."
    )]
    Corrupt {
        path: PathBuf,
        reason: String,
        backup: String,
        /// SQLite's refusal, when that is the reason.
        #[source]
        source: Option<Box<rusqlite::Error>>,
    },
    #[error("file is not a database: invalid SQLite header for {path}{signature}; first_32={hex}")]
    BadHeader {
        path: PathBuf,
        signature: String,
        hex: String,
    },
    /// The committed header claims more pages than the file holds
    /// (hermes-agent: `hermes_cli/kanban_db.py`, `_check_file_length_invariant`).
    #[error(
        "torn-extend detected: page count mismatch on {file}: header claims {count} pages, file has {actual} pages (missing {} pages, file_size={size}, page_size={page_size})",
        count - actual
    )]
    TornExtend {
        file: String,
        count: u64,
        actual: u64,
        size: u64,
        page_size: i64,
    },
    /// Another process held the board's lock for the call's whole lock-wait
    /// budget (this port's bound; Hermes waits up to 120 s per statement).
    #[error(
        "the kanban board {path} is locked by another process: waited {waited_secs} s for its write lock. A Hermes dispatcher, worker or `hermes kanban` command (or any program with the file open) is holding a transaction; try again shortly, and if it stays locked find the holder with `fuser {path}`"
    )]
    Locked { path: PathBuf, waited_secs: u64 },
    /// An earlier call in this server kept the board's connection for the
    /// whole lock-wait budget (it is itself waiting for another process).
    #[error(
        "the kanban board {path} is busy: an earlier kanban call in this server has been using it for over {waited_secs} s (it is waiting for another process's lock); try again shortly"
    )]
    InUse { path: PathBuf, waited_secs: u64 },
    /// A declared scratch deliverable could not be preserved (the completion rolled back).
    #[error("{0}")]
    Artifact(#[from] ArtifactError),
    #[error("{0}")]
    Regex(#[from] regex::Error),
}

pub(crate) type KanbanResult<T> = Result<T, KanbanError>;

/// `Err(ValueError(msg))`.
pub(crate) fn value_err<T>(msg: impl Into<String>) -> KanbanResult<T> {
    Err(KanbanError::Value(msg.into()))
}

impl KanbanError {
    /// Caller mistakes (Hermes' `ValueError`) are reported, not logged.
    pub(crate) fn is_caller_error(&self) -> bool {
        matches!(self, KanbanError::Value(_) | KanbanError::Board(_))
    }
}

/// A `board` argument that names no usable board.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BoardError {
    /// `_normalize_board_slug`'s `ValueError`.
    #[error(
        "invalid board slug {}: must be 1-64 chars, lowercase alphanumerics / hyphens / underscores, not starting with '-' or '_'",
        py_repr(.raw)
    )]
    InvalidSlug { raw: String },
    /// Refused instead of silently creating an empty board.
    #[error(
        "board {} does not exist; create it with `hermes kanban boards create {slug}` or omit `board` to use the active board",
        py_repr(.slug)
    )]
    Missing { slug: String },
}

/// Why a declared scratch deliverable could not be copied to attachments
/// (hermes-agent: `hermes_cli/kanban_db.py`, `_persist_scratch_completion_artifacts`).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ArtifactError {
    #[error("declared scratch artifact is unavailable or not a regular file: {path}")]
    Unavailable { path: String },
    #[error("declared scratch artifact exceeds the {limit}-byte limit: {path}")]
    TooLarge { path: String, limit: u64 },
    #[error("could not preserve declared scratch artifact {path}: {source}")]
    Copy {
        path: String,
        source: std::io::Error,
    },
}
