//! A task's `status` column as a type (hermes-agent: `hermes_cli/kanban_db.py`,
//! `VALID_STATUSES`). Every status this port compares or writes is a variant;
//! a status it does not know (a newer Hermes may add one) is read as
//! [`Status::Other`] and written back unchanged, never refused or rewritten.
//! SQL texts that name statuses inside a query (`status IN ('running', ...)`)
//! stay SQL.

use std::convert::Infallible;
use std::fmt;
use std::str::FromStr;

use rusqlite::types::{FromSql, FromSqlResult, ToSql, ToSqlOutput, ValueRef};
use serde::{Serialize, Serializer};

/// A kanban task's status; the default is `create_task`'s `initial_status`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) enum Status {
    Triage,
    Todo,
    Scheduled,
    Ready,
    #[default]
    Running,
    Blocked,
    Review,
    Done,
    Archived,
    /// A status outside Hermes' `VALID_STATUSES` as this port knows them,
    /// kept as read.
    Other(String),
}

/// Hermes' `VALID_STATUSES`.
pub(crate) static KNOWN: [Status; 9] = [
    Status::Triage,
    Status::Todo,
    Status::Scheduled,
    Status::Ready,
    Status::Running,
    Status::Blocked,
    Status::Review,
    Status::Done,
    Status::Archived,
];

impl Status {
    /// The column's text.
    pub(crate) fn as_str(&self) -> &str {
        match self {
            Status::Triage => "triage",
            Status::Todo => "todo",
            Status::Scheduled => "scheduled",
            Status::Ready => "ready",
            Status::Running => "running",
            Status::Blocked => "blocked",
            Status::Review => "review",
            Status::Done => "done",
            Status::Archived => "archived",
            Status::Other(s) => s,
        }
    }

    /// One of Hermes' `VALID_STATUSES`.
    pub(crate) fn is_known(&self) -> bool {
        !matches!(self, Status::Other(_))
    }

    /// The names of Hermes' `VALID_STATUSES` (for its error texts).
    pub(crate) fn known_names() -> Vec<&'static str> {
        KNOWN.iter().map(Status::as_str).collect()
    }
}

impl FromStr for Status {
    type Err = Infallible;

    fn from_str(s: &str) -> Result<Self, Infallible> {
        Ok(KNOWN
            .iter()
            .find(|k| k.as_str() == s)
            .cloned()
            .unwrap_or_else(|| Status::Other(s.to_string())))
    }
}

impl From<&str> for Status {
    fn from(s: &str) -> Self {
        match s.parse() {
            Ok(st) => st,
            Err(never) => match never {},
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Status {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl ToSql for Status {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(ValueRef::Text(
            self.as_str().as_bytes(),
        )))
    }
}

impl FromSql for Status {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        value.as_str().map(Status::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_ones_are_kept() {
        for k in &KNOWN {
            assert_eq!(Status::from(k.as_str()), *k);
            assert!(k.is_known());
        }
        let odd = Status::from("on_hold");
        assert_eq!(odd, Status::Other("on_hold".into()));
        assert_eq!(odd.to_string(), "on_hold");
        assert!(!odd.is_known());
    }

    #[test]
    fn sqlite_reads_and_writes_the_text() {
        let c = rusqlite::Connection::open_in_memory().unwrap();
        c.execute_batch("CREATE TABLE t (s TEXT)").unwrap();
        for s in [Status::Blocked, Status::Other("on_hold".into())] {
            c.execute("INSERT INTO t VALUES (?)", [&s]).unwrap();
        }
        let back: Vec<Status> = c
            .prepare("SELECT s FROM t")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(back, [Status::Blocked, Status::Other("on_hold".into())]);
        let raw: String = c
            .query_row("SELECT s FROM t LIMIT 1", [], |r| r.get(0))
            .unwrap();
        assert_eq!(raw, "blocked");
    }
}
