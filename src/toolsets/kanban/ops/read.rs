//! `list_tasks` (hermes-agent: `hermes_cli/kanban_db.py`): the filtered,
//! ordered page of tasks behind kanban_list.

use rusqlite::Connection;
use rusqlite::params_from_iter;
use rusqlite::types::Value as Sql;

use crate::toolsets::kanban::error::{KanbanResult, value_err};
use crate::toolsets::kanban::status::Status;
use crate::toolsets::kanban::store::{Task, canonical_assignee, get_task};
use crate::toolsets::kanban::util::py_list;

pub(crate) struct ListFilter<'a> {
    pub(crate) assignee: Option<&'a str>,
    pub(crate) status: Option<&'a Status>,
    pub(crate) tenant: Option<&'a str>,
    pub(crate) include_archived: bool,
    pub(crate) limit: i64,
}

pub(crate) fn list_tasks(conn: &Connection, f: &ListFilter) -> KanbanResult<Vec<Task>> {
    // Two phases: order narrow (id) rows, then read the full rows of the page.
    let mut q = String::from("SELECT id FROM tasks WHERE 1=1");
    let mut p: Vec<Sql> = vec![];
    if let Some(a) = f.assignee {
        q.push_str(" AND assignee = ?");
        p.push(Sql::Text(canonical_assignee(a)?));
    }
    if let Some(s) = f.status {
        if !s.is_known() {
            let names = Status::known_names();
            return value_err(format!("status must be one of {}", py_list(&names)));
        }
        q.push_str(" AND status = ?");
        p.push(Sql::Text(s.to_string()));
    }
    if let Some(t) = f.tenant {
        q.push_str(" AND tenant = ?");
        p.push(Sql::Text(t.into()));
    }
    if !f.include_archived && f.status != Some(&Status::Archived) {
        q.push_str(" AND status != 'archived'");
    }
    q.push_str(" ORDER BY priority DESC, created_at ASC");
    if f.limit > 0 {
        q.push_str(&format!(" LIMIT {}", f.limit));
    }
    let ids: Vec<String> = {
        let mut st = conn.prepare_cached(&q)?;
        let rows = st.query_map(params_from_iter(p), |r| r.get::<_, String>(0))?;
        rows.collect::<Result<Vec<_>, _>>()?
    };
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        if let Some(t) = get_task(conn, &id)? {
            out.push(t);
        }
    }
    Ok(out)
}
