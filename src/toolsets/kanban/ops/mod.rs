//! The kanban state machine, ported from hermes-agent's
//! `hermes_cli/kanban_db.py`: the same SQL, compare-and-swap conditions, run
//! rows and event payloads, so the Python dispatcher and `hermes kanban` read
//! our writes as their own. One module per operation family; all of them
//! build on `store` (rows and queries) and `db::write_txn`.
//!
//! Deliberate differences from `kanban_db.py`:
//! * the `idempotency_key` lookup runs inside the create transaction, so two
//!   concurrent creators with one key get one task;
//! * `initial_status="blocked"` records a `blocked` event so the block is
//!   sticky and `recompute_ready` does not promote it;
//! * `recompute_ready` finds candidates with one query and only opens a write
//!   transaction when something can be promoted;
//! * `heartbeat_claim`'s result is reported to the caller.

pub(crate) mod complete;
pub(crate) mod context;
pub(crate) mod create;
pub(crate) mod lifecycle;
pub(crate) mod read;

pub(crate) const VALID_BLOCK_KINDS: &[&str] =
    &["capability", "dependency", "needs_input", "transient"];
pub(crate) const BLOCK_RECURRENCE_LIMIT: i64 = 2;
/// `DEFAULT_CLAIM_TTL_SECONDS`: how far a heartbeat pushes the claim out.
pub(crate) const DEFAULT_CLAIM_TTL_SECONDS: i64 = 15 * 60;

#[cfg(test)]
mod tests {
    use rusqlite::params;

    use super::create::{NewTask, create_task};
    use super::lifecycle::{recompute_ready, unblock_task};
    use super::read::{ListFilter, list_tasks};
    use crate::toolsets::kanban::db;
    use crate::toolsets::kanban::status::Status;
    use crate::toolsets::kanban::store::{append_event, get_task};

    #[test]
    fn reads_see_other_writers() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("kanban.db");
        let a = db::open(&p).unwrap();
        let (id, _) = create_task(
            &a,
            NewTask {
                title: "x".into(),
                assignee: Some("a".into()),
                workspace_kind: "scratch".into(),
                initial_status: Status::Running,
                ..Default::default()
            },
        )
        .unwrap();
        let f = ListFilter {
            assignee: None,
            status: None,
            tenant: None,
            include_archived: false,
            limit: 10,
        };
        recompute_ready(&a).unwrap();
        assert_eq!(list_tasks(&a, &f).unwrap()[0].status(), Status::Ready);
        let b = rusqlite::Connection::open(&p).unwrap();
        b.execute("UPDATE tasks SET status='running' WHERE id=?", [&id])
            .unwrap();
        assert!(a.is_autocommit(), "a read transaction is open");
        recompute_ready(&a).unwrap();
        assert_eq!(list_tasks(&a, &f).unwrap()[0].status(), Status::Running);
    }

    #[test]
    fn recompute_ready_follows_hermes_rules() {
        let d = tempfile::tempdir().unwrap();
        let c = db::open(&d.path().join("kanban.db")).unwrap();
        let ins = |id: &str, status: Status, failures: i64, max_retries: Option<i64>| {
            c.execute(
                "INSERT INTO tasks (id, title, status, created_at, consecutive_failures, max_retries) VALUES (?, 'x', ?, 1, ?, ?)",
                params![id, status, failures, max_retries],
            )
            .unwrap();
        };
        ins("t_p_done", Status::Done, 0, None);
        ins("t_p_open", Status::Running, 0, None);
        ins("t_todo_ok", Status::Todo, 0, None);
        ins("t_todo_wait", Status::Todo, 0, None);
        ins("t_sticky", Status::Blocked, 0, None);
        ins("t_breaker", Status::Blocked, 0, None);
        ins("t_tripped", Status::Blocked, 2, None);
        ins("t_retries", Status::Blocked, 2, Some(5));
        for (p, ch) in [
            ("t_p_done", "t_todo_ok"),
            ("t_p_open", "t_todo_wait"),
            ("t_p_done", "t_sticky"),
        ] {
            c.execute("INSERT INTO task_links VALUES (?, ?)", [p, ch])
                .unwrap();
        }
        append_event(&c, "t_sticky", "blocked", None, None).unwrap();
        // An unblock after a block lifts stickiness; a later block restores it.
        append_event(&c, "t_breaker", "blocked", None, None).unwrap();
        append_event(&c, "t_breaker", "unblocked", None, None).unwrap();
        assert_eq!(recompute_ready(&c).unwrap(), 3);
        let st = |id: &str| get_task(&c, id).unwrap().unwrap().status();
        assert_eq!(st("t_todo_ok"), Status::Ready);
        assert_eq!(st("t_todo_wait"), Status::Todo);
        assert_eq!(st("t_sticky"), Status::Blocked);
        assert_eq!(st("t_breaker"), Status::Ready);
        assert_eq!(st("t_tripped"), Status::Blocked);
        assert_eq!(st("t_retries"), Status::Ready);
        assert_eq!(recompute_ready(&c).unwrap(), 0);
        // Each promotion is recorded as Hermes records it.
        let n: i64 = c
            .query_row(
                "SELECT COUNT(*) FROM task_events WHERE kind = 'promoted' AND payload IS NULL",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(n, 3);
    }

    #[test]
    fn idempotent_create_and_sticky_initial_block() {
        let d = tempfile::tempdir().unwrap();
        let c = db::open(&d.path().join("kanban.db")).unwrap();
        let new = |key: Option<&str>, initial: Status| NewTask {
            title: " t ".into(),
            assignee: Some("Default".into()),
            workspace_kind: "scratch".into(),
            initial_status: initial,
            idempotency_key: key.map(str::to_string),
            ..Default::default()
        };
        let (a, created) = create_task(&c, new(Some("k"), Status::Running)).unwrap();
        assert!(created);
        let (b, created) = create_task(&c, new(Some("k"), Status::Running)).unwrap();
        assert_eq!((a.as_str(), created), (b.as_str(), false));
        let t = get_task(&c, &a).unwrap().unwrap();
        assert_eq!(t.0.s("title").as_deref(), Some("t"));
        assert_eq!(t.assignee().as_deref(), Some("default"));
        let (g, _) = create_task(&c, new(None, Status::Blocked)).unwrap();
        recompute_ready(&c).unwrap();
        assert_eq!(get_task(&c, &g).unwrap().unwrap().status(), Status::Blocked);
        assert_eq!(unblock_task(&c, &g).unwrap(), Some(Status::Ready));
    }
}
