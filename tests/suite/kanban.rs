//! The kanban toolset through `hermes-mcp serve`, against Hermes' own
//! `hermes kanban` CLI (hermes-agent 0.19.0) on the same `kanban.db`.
//!
//! These tests need the Python Hermes: `HERMES_PYTHON` (default
//! `/opt/hermes-venv/bin/python`) with its sibling `hermes` script. They fail
//! with a clear message when it is missing (`tools/test.sh` installs it).

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

use super::support::common::*;
use super::support::kanban::*;

fn tool_names(c: &mut RawClient) -> Vec<String> {
    let r = c.request("tools/list", json!({}));
    r["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .filter(|n| n.starts_with("kanban_"))
        .collect()
}

const SECRET: &str = "sk-proj-abcdef1234567890XYZ";

#[test]
fn kanban_worker_completes_a_task_claimed_by_hermes() {
    let env = TestEnv::new();
    let id = py_create(
        &env,
        "write the report",
        "coder",
        &["--body", "Do it well."],
    );
    hermes(&env, &["kanban", "claim", &id]);
    let (lock, run) = claim_env(&env, &id);
    let run_s = run.to_string();
    let kdb = env
        .hermes_home()
        .join("kanban.db")
        .to_string_lossy()
        .to_string();
    let wsroot = env
        .hermes_home()
        .join("kanban/workspaces")
        .to_string_lossy()
        .to_string();
    let mut c = server(
        &env,
        &[
            ("HERMES_KANBAN_TASK", &id),
            ("HERMES_KANBAN_RUN_ID", &run_s),
            ("HERMES_KANBAN_CLAIM_LOCK", &lock),
            ("HERMES_PROFILE", "coder"),
            ("HERMES_SESSION_ID", "sess-42"),
            // The rest of what Hermes' dispatcher sets for a worker.
            ("HERMES_KANBAN_DB", &kdb),
            ("HERMES_KANBAN_WORKSPACES_ROOT", &wsroot),
            ("HERMES_KANBAN_BOARD", "default"),
            ("HERMES_TENANT", "acme"),
        ],
    );
    // Workers see the lifecycle tools, never kanban_list / kanban_unblock.
    let names = tool_names(&mut c);
    assert_eq!(
        names,
        [
            "kanban_show",
            "kanban_complete",
            "kanban_block",
            "kanban_heartbeat",
            "kanban_comment",
            "kanban_create",
            "kanban_link"
        ]
    );
    // task_id defaults to HERMES_KANBAN_TASK.
    let show = call(&mut c, "kanban_show", json!({})).1;
    assert_eq!(show["task"]["id"], id.as_str());
    assert_eq!(show["task"]["status"], "running");
    assert_eq!(show["task"]["current_run_id"], run);
    assert!(
        show["worker_context"]
            .as_str()
            .unwrap()
            .contains("## Body\nDo it well."),
        "{show}"
    );

    // The claim's expiry is moved a minute back instead of waiting for the
    // clock to tick: the heartbeat moves it forward again.
    db(&env)
        .execute(
            "UPDATE tasks SET claim_expires = claim_expires - 60 WHERE id = ?",
            [&id],
        )
        .unwrap();
    let before: i64 = db(&env)
        .query_row("SELECT claim_expires FROM tasks WHERE id = ?", [&id], |r| {
            r.get(0)
        })
        .unwrap();
    let hb = call_ok(&mut c, "kanban_heartbeat", json!({"note": "halfway"}));
    assert_eq!(hb["claim_extended"], true, "{hb}");
    let after: i64 = db(&env)
        .query_row("SELECT claim_expires FROM tasks WHERE id = ?", [&id], |r| {
            r.get(0)
        })
        .unwrap();
    assert!(after > before, "claim not extended: {before} -> {after}");

    let cm = call_ok(
        &mut c,
        "kanban_comment",
        json!({"task_id": id, "body": format!("token is {SECRET}"), "author": "hermes-system"}),
    );
    assert!(cm["comment_id"].as_i64().unwrap() > 0);

    // A deliverable inside the scratch workspace is kept as an attachment.
    let ws: String = db(&env)
        .query_row(
            "SELECT workspace_path FROM tasks WHERE id = ?",
            [&id],
            |r| r.get(0),
        )
        .unwrap();
    let ws = PathBuf::from(ws);
    write(&ws.join("out/report.txt"), "the report");
    // A follow-up card: authored by the profile, tenant from HERMES_TENANT,
    // workspace inherited from the worker's own task.
    let fu = call_ok(
        &mut c,
        "kanban_create",
        json!({"title": "follow-up", "assignee": "reviewer"}),
    );
    let fid = fu["task_id"].as_str().unwrap().to_string();
    let fpy = py_show(&env, &fid);
    assert_eq!(fpy["task"]["created_by"], "coder");
    assert_eq!(fpy["task"]["tenant"], "acme");
    assert_eq!(fpy["task"]["workspace_path"], ws.to_string_lossy().as_ref());
    let done = call_ok(
        &mut c,
        "kanban_complete",
        json!({"summary": format!("Wrote it; key {SECRET}"), "metadata": {"tests_run": 3, "note": SECRET},
               "artifacts": ["/tmp/report.pdf", ws.join("out/report.txt")], "created_cards": [fid]}),
    );
    assert!(!ws.exists(), "scratch workspace removed after completion");
    let att = env
        .hermes_home()
        .join(format!("kanban/attachments/{id}/report.txt"));
    assert_eq!(std::fs::read_to_string(&att).unwrap(), "the report");
    assert_eq!(done["task_id"], id.as_str());
    assert_eq!(done["run_id"], run);

    // Hermes agrees.
    let py = py_show(&env, &id);
    assert_eq!(py["task"]["status"], "done", "{py}");
    assert_eq!(py["comments"][0]["author"], "coder");
    assert_eq!(py["comments"][0]["body"], "token is sk-pro...0XYZ");
    let runs = hermes_json(&env, &["kanban", "runs", &id, "--json"]);
    let r0 = &runs.as_array().unwrap()[0];
    assert_eq!(r0["outcome"], "completed", "{runs}");
    assert_eq!(r0["status"], "done");
    assert_eq!(r0["summary"], "Wrote it; key sk-pro...0XYZ");
    assert_eq!(r0["metadata"]["note"], "sk-pro...0XYZ");
    let att_s = att.canonicalize().unwrap().to_string_lossy().to_string();
    assert_eq!(
        r0["metadata"]["artifacts"],
        json!(["/tmp/report.pdf", att_s])
    );
    let atts = hermes_json(&env, &["kanban", "attachments", &id, "--json"]);
    assert!(atts.to_string().contains("report.txt"), "{atts}");
    assert_eq!(r0["metadata"]["worker_session_id"], "sess-42");
    let kinds: Vec<&str> = py["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "created",
            "claimed",
            "heartbeat",
            "commented",
            "attached",
            "completed"
        ]
    );
    let completed = py["events"].as_array().unwrap().last().unwrap();
    assert_eq!(
        completed["payload"]["summary"],
        "Wrote it; key sk-pro...0XYZ"
    );
    assert_eq!(
        completed["payload"]["artifacts"],
        json!(["/tmp/report.pdf", att_s])
    );
    assert_eq!(completed["run_id"], run);
    assert_eq!(completed["payload"]["verified_cards"], json!([fid]));
    // Human-readable CLI output renders our rows too.
    let text = hermes(&env, &["kanban", "show", &id]);
    assert!(text.contains("Wrote it"), "{text}");
    // A second completion is refused: the task is terminal.
    let e = call_err(&mut c, "kanban_complete", json!({"summary": "again"}));
    assert_eq!(
        e,
        format!("could not complete {id} (unknown id or already terminal)")
    );
}

#[test]
fn kanban_block_kinds_and_loop_breaker_match_hermes() {
    let env = TestEnv::new();
    let id = py_create(&env, "needs a human", "coder", &[]);
    let claim = |env: &TestEnv| {
        hermes(env, &["kanban", "claim", &id]);
        let (lock, run) = claim_env(env, &id);
        server(
            env,
            &[
                ("HERMES_KANBAN_TASK", &id),
                ("HERMES_KANBAN_RUN_ID", &run.to_string()),
                ("HERMES_KANBAN_CLAIM_LOCK", &lock),
                ("HERMES_PROFILE", "coder"),
            ],
        )
    };
    let mut c = claim(&env);
    assert_eq!(
        call_err(&mut c, "kanban_block", json!({"reason": "  "})),
        "reason is required — explain what input you need"
    );
    let b = call_ok(
        &mut c,
        "kanban_block",
        json!({"reason": format!("need the password hunter2 and {SECRET}"), "kind": "needs_input"}),
    );
    assert_eq!(b["status"], "blocked");
    assert_eq!(b["block_kind"], "needs_input");
    let py = py_show(&env, &id);
    assert_eq!(py["task"]["status"], "blocked");
    let ev = py["events"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(ev["kind"], "blocked");
    assert_eq!(
        ev["payload"]["reason"],
        "need the password hunter2 and sk-pro...0XYZ"
    );
    assert_eq!(ev["payload"]["recurrences"], 1);
    // A sticky block survives Hermes' recompute (`hermes kanban list` runs it).
    hermes(&env, &["kanban", "list"]);
    assert_eq!(py_show(&env, &id)["task"]["status"], "blocked");
    drop(c);

    // Unblocked by a human, re-blocked for the same reason: escalated to triage.
    hermes(&env, &["kanban", "unblock", &id]);
    let mut c = claim(&env);
    let b = call_ok(
        &mut c,
        "kanban_block",
        json!({"reason": "still need it", "kind": "needs_input"}),
    );
    assert_eq!(b["status"], "triage", "{b}");
    assert_eq!(
        py_show(&env, &id)["events"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()["kind"],
        "block_loop_detected"
    );

    // A dependency block waits in todo.
    let id2 = py_create(&env, "waits", "coder", &[]);
    hermes(&env, &["kanban", "claim", &id2]);
    let (lock, run) = claim_env(&env, &id2);
    let mut c = server(
        &env,
        &[
            ("HERMES_KANBAN_TASK", &id2),
            ("HERMES_KANBAN_RUN_ID", &run.to_string()),
            ("HERMES_KANBAN_CLAIM_LOCK", &lock),
        ],
    );
    let b = call_ok(
        &mut c,
        "kanban_block",
        json!({"reason": "waiting on API", "kind": "dependency"}),
    );
    assert_eq!(b["status"], "todo");
    assert_eq!(py_show(&env, &id2)["task"]["status"], "todo");
    let runs = hermes_json(&env, &["kanban", "runs", &id2, "--json"]);
    assert_eq!(runs[0]["outcome"], "blocked");
    assert_eq!(runs[0]["summary"], "waiting on API");
}

#[test]
fn kanban_tasks_we_create_are_run_by_hermes() {
    let env = TestEnv::new();
    let mut c = orchestrator(&env);
    let names = tool_names(&mut c);
    assert!(
        names.contains(&"kanban_list".to_string()) && names.contains(&"kanban_unblock".to_string())
    );
    let parent = call_ok(
        &mut c,
        "kanban_create",
        json!({"title": "research", "assignee": "Researcher", "body": "find things", "priority": 5,
               "skills": ["arxiv"], "tenant": "acme"}),
    );
    assert_eq!(parent["status"], "ready");
    assert_eq!(parent["subscribed"], false);
    let pid = parent["task_id"].as_str().unwrap().to_string();
    assert!(pid.starts_with("t_") && pid.len() == 10, "{pid}");
    let child = call_ok(
        &mut c,
        "kanban_create",
        json!({"title": "write up", "assignee": "writer", "parents": [pid]}),
    );
    assert_eq!(child["status"], "todo");
    let cid = child["task_id"].as_str().unwrap().to_string();
    let gated = call_ok(
        &mut c,
        "kanban_create",
        json!({"title": "needs ops", "assignee": "ops", "initial_status": "blocked"}),
    );
    assert_eq!(gated["status"], "blocked");
    let gid = gated["task_id"].as_str().unwrap().to_string();

    // Hermes lists them as we wrote them.
    let list = hermes_json(&env, &["kanban", "list", "--json"]);
    let by_id = |id: &str| {
        list.as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == id)
            .cloned()
            .unwrap()
    };
    assert_eq!(by_id(&pid)["assignee"], "researcher");
    assert_eq!(by_id(&pid)["created_by"], "orch");
    assert_eq!(by_id(&pid)["skills"], json!(["arxiv"]));
    assert_eq!(by_id(&pid)["tenant"], "acme");
    assert_eq!(by_id(&cid)["status"], "todo");
    // initial_status=blocked stays blocked through Hermes' and our recompute (§7 #32).
    assert_eq!(by_id(&gid)["status"], "blocked");
    let ours = call(&mut c, "kanban_list", json!({})).1;
    assert_eq!(ours["count"], 3);
    assert_eq!(ours["promoted"], 0);
    assert_eq!(
        ours["tasks"][0]["id"],
        pid.as_str(),
        "priority order: {ours}"
    );
    assert_eq!(ours["tasks"][0]["children"], json!([cid]));
    assert_eq!(ours["tasks"][0]["child_count"], 1);
    assert_eq!(py_show(&env, &gid)["task"]["status"], "blocked");

    // Hermes claims and completes the parent; the child becomes ready.
    hermes(&env, &["kanban", "claim", &pid]);
    hermes(
        &env,
        &[
            "kanban",
            "complete",
            &pid,
            "--summary",
            "found three papers",
        ],
    );
    let ours = call(&mut c, "kanban_list", json!({"status": "ready"})).1;
    assert_eq!(ours["tasks"][0]["id"], cid.as_str(), "{ours}");
    let show = call(&mut c, "kanban_show", json!({"task_id": cid})).1;
    assert!(
        show["worker_context"]
            .as_str()
            .unwrap()
            .contains("found three papers"),
        "{show}"
    );
    hermes(&env, &["kanban", "claim", &cid]);
    hermes(&env, &["kanban", "complete", &cid, "--result", "done"]);
    assert_eq!(py_show(&env, &cid)["task"]["status"], "done");

    // The orchestrator unblocks the gated task; Hermes can then claim it.
    let u = call_ok(&mut c, "kanban_unblock", json!({"task_id": gid}));
    assert_eq!(u["status"], "ready");
    hermes(&env, &["kanban", "claim", &gid]);
    assert_eq!(py_show(&env, &gid)["task"]["status"], "running");

    // Idempotency: the same key gives the same task.
    let a = call_ok(
        &mut c,
        "kanban_create",
        json!({"title": "x", "assignee": "a", "idempotency_key": "k1"}),
    );
    let b = call_ok(
        &mut c,
        "kanban_create",
        json!({"title": "y", "assignee": "a", "idempotency_key": "k1"}),
    );
    assert_eq!(a["task_id"], b["task_id"]);
}

#[test]
fn kanban_error_paths() {
    let env = TestEnv::new();
    let mut c = orchestrator(&env);
    let a = call_ok(
        &mut c,
        "kanban_create",
        json!({"title": "a", "assignee": "x"}),
    )["task_id"]
        .as_str()
        .unwrap()
        .to_string();
    let b = call_ok(
        &mut c,
        "kanban_create",
        json!({"title": "b", "assignee": "x", "parents": [a]}),
    )["task_id"]
        .as_str()
        .unwrap()
        .to_string();
    // Unknown task.
    assert_eq!(
        call_err(&mut c, "kanban_show", json!({"task_id": "t_00000000"})),
        "task t_00000000 not found"
    );
    assert_eq!(
        call_err(
            &mut c,
            "kanban_complete",
            json!({"task_id": "t_00000000", "summary": "s"})
        ),
        "could not complete t_00000000 (unknown id or already terminal)"
    );
    assert_eq!(
        call_err(
            &mut c,
            "kanban_block",
            json!({"task_id": "t_00000000", "reason": "r"})
        ),
        "could not block t_00000000 (unknown id or not in running/ready)"
    );
    assert_eq!(
        call_err(&mut c, "kanban_heartbeat", json!({"task_id": "t_00000000"})),
        "could not heartbeat t_00000000 (unknown id or not running)"
    );
    assert_eq!(
        call_err(
            &mut c,
            "kanban_comment",
            json!({"task_id": "t_00000000", "body": "hi"})
        ),
        "kanban_comment: unknown task t_00000000"
    );
    assert_eq!(
        call_err(&mut c, "kanban_unblock", json!({"task_id": a})),
        format!("could not unblock {a} (not blocked or unknown)")
    );
    assert_eq!(
        call_err(&mut c, "kanban_show", json!({})),
        "task_id is required (or set HERMES_KANBAN_TASK in the env)"
    );
    assert_eq!(
        call_err(&mut c, "kanban_complete", json!({"task_id": a})),
        "provide at least one of: summary (preferred), result"
    );
    assert_eq!(
        call_err(
            &mut c,
            "kanban_create",
            json!({"title": "z", "assignee": "x", "parents": ["t_deadbeef"]})
        ),
        "kanban_create: unknown parent task(s): t_deadbeef"
    );
    assert!(
        call_err(
            &mut c,
            "kanban_create",
            json!({"title": "z", "assignee": "x", "skills": ["web"]})
        )
        .starts_with("kanban_create: 'web' is a toolset name, not skill name(s).")
    );
    // Links: self, unknown, cycle.
    assert_eq!(
        call_err(
            &mut c,
            "kanban_link",
            json!({"parent_id": a, "child_id": a})
        ),
        "kanban_link: a task cannot depend on itself"
    );
    assert_eq!(
        call_err(
            &mut c,
            "kanban_link",
            json!({"parent_id": a, "child_id": "t_11111111"})
        ),
        "kanban_link: unknown task(s): t_11111111"
    );
    assert_eq!(
        call_err(
            &mut c,
            "kanban_link",
            json!({"parent_id": b, "child_id": a})
        ),
        format!("kanban_link: linking {b} -> {a} would create a cycle")
    );
    // Bad kind (rejected by the schema's enum before the handler runs).
    let e = call_err(
        &mut c,
        "kanban_block",
        json!({"task_id": a, "reason": "r", "kind": "bogus"}),
    );
    assert!(e.contains("kind") && e.contains("needs_input"), "{e}");
    // Bad and unknown board slugs.
    assert!(
        call_err(
            &mut c,
            "kanban_show",
            json!({"task_id": a, "board": "../etc"})
        )
        .starts_with("kanban_show: invalid board slug '../etc': must be 1-64 chars"),
    );
    assert!(
        call_err(&mut c, "kanban_list", json!({"board": "nope"}))
            .contains("board 'nope' does not exist")
    );
    assert!(!env.hermes_home().join("kanban/boards/nope").exists());
    // list limits.
    assert_eq!(
        call_err(&mut c, "kanban_list", json!({"limit": 0})),
        "limit must be >= 1"
    );
    assert_eq!(
        call_err(&mut c, "kanban_list", json!({"limit": 201})),
        "limit must be <= 200"
    );
    // Terminal task.
    call_ok(
        &mut c,
        "kanban_complete",
        json!({"task_id": a, "result": "ok"}),
    );
    assert_eq!(
        call_err(&mut c, "kanban_block", json!({"task_id": a, "reason": "r"})),
        format!("could not block {a} (unknown id or not in running/ready)")
    );

    // A worker cannot touch other tasks or use orchestrator tools.
    let mut w = server(&env, &[("HERMES_KANBAN_TASK", &b)]);
    let scoped = format!(
        "worker is scoped to task {b}; refusing to mutate {a}. Use kanban_comment to hand off information to other tasks, or kanban_create to spawn follow-up work."
    );
    assert_eq!(
        call_err(
            &mut w,
            "kanban_complete",
            json!({"task_id": a, "summary": "s"})
        ),
        scoped
    );
    assert_eq!(
        call_err(&mut w, "kanban_block", json!({"task_id": a, "reason": "r"})),
        scoped
    );
    assert_eq!(
        call_err(&mut w, "kanban_heartbeat", json!({"task_id": a})),
        scoped
    );
    let e = call_err(&mut w, "kanban_list", json!({}));
    assert!(e.contains("kanban_list is orchestrator-only"), "{e}");
    // ...but may comment anywhere (as Hermes), authored "worker" without HERMES_PROFILE.
    call_ok(
        &mut w,
        "kanban_comment",
        json!({"task_id": a, "body": "fyi"}),
    );
    assert_eq!(py_show(&env, &a)["comments"][0]["author"], "worker");
    // A stale run id (the task was reclaimed and re-claimed) is refused by the CAS.
    hermes(&env, &["kanban", "claim", &b]);
    let (_, run) = claim_env(&env, &b);
    let mut stale = server(
        &env,
        &[
            ("HERMES_KANBAN_TASK", &b),
            ("HERMES_KANBAN_RUN_ID", &(run + 100).to_string()),
        ],
    );
    assert_eq!(
        call_err(&mut stale, "kanban_complete", json!({"summary": "late"})),
        format!("could not complete {b} (unknown id or already terminal)")
    );
    let hb = call_err(&mut stale, "kanban_heartbeat", json!({}));
    assert_eq!(
        hb,
        format!("could not heartbeat {b} (unknown id or not running)")
    );
    // Without the claim lock the heartbeat says the claim was not extended.
    let hb = call_ok(&mut w, "kanban_heartbeat", json!({}));
    assert_eq!(hb["claim_extended"], false);
    assert!(
        hb["claim_note"]
            .as_str()
            .unwrap()
            .contains("HERMES_KANBAN_CLAIM_LOCK is not set")
    );
    // Phantom created cards block completion without changing state.
    let e = call_err(
        &mut w,
        "kanban_complete",
        json!({"summary": "s", "created_cards": ["t_99999999"]}),
    );
    assert!(
        e.starts_with("kanban_complete blocked: the following created_cards do not exist"),
        "{e}"
    );
    assert_eq!(py_show(&env, &b)["task"]["status"], "running");
}

#[test]
fn kanban_gating_and_lazy_open() {
    let env = TestEnv::new();
    // No HERMES_KANBAN_TASK, no `kanban` toolset: nothing listed, nothing opened.
    let mut c = server(&env, &[]);
    assert!(tool_names(&mut c).is_empty());
    drop(c);
    env.write_hermes("config.yaml", "toolsets: [kanban]\n");
    let mut c = server(&env, &[]);
    assert_eq!(tool_names(&mut c).len(), 9);
    assert!(
        !env.hermes_home().join("kanban.db").exists(),
        "tools/list must not open the DB"
    );
    call_ok(
        &mut c,
        "kanban_create",
        json!({"title": "t", "assignee": "a"}),
    );
    assert!(env.hermes_home().join("kanban.db").exists());
    // The board file is replaced under a running server: it follows the new file.
    for f in ["kanban.db", "kanban.db-wal", "kanban.db-shm"] {
        let _ = std::fs::remove_file(env.hermes_home().join(f));
    }
    hermes(&env, &["kanban", "init"]);
    let id = call_ok(
        &mut c,
        "kanban_create",
        json!({"title": "after reset", "assignee": "a"}),
    )["task_id"]
        .as_str()
        .unwrap()
        .to_string();
    let list = hermes_json(&env, &["kanban", "list", "--json"]);
    assert_eq!(list.as_array().unwrap().len(), 1, "{list}");
    assert_eq!(list[0]["id"], id.as_str());
}

#[test]
fn kanban_boards_resolution() {
    let env = TestEnv::new();
    hermes(&env, &["kanban", "boards", "create", "proj"]);
    let mut c = server(
        &env,
        &[
            ("HERMES_KANBAN_BOARD", "proj"),
            ("HERMES_KANBAN_TASK", "t_00000000"),
        ],
    );
    let id = call_ok(
        &mut c,
        "kanban_create",
        json!({"title": "on proj", "assignee": "a"}),
    )["task_id"]
        .as_str()
        .unwrap()
        .to_string();
    let proj = hermes_json(&env, &["kanban", "--board", "proj", "list", "--json"]);
    assert_eq!(proj[0]["id"], id.as_str());
    let def = hermes_json(&env, &["kanban", "list", "--json"]);
    assert!(def.as_array().unwrap().is_empty(), "{def}");
    // An explicit `board` argument targets the default board.
    let id2 = call_ok(
        &mut c,
        "kanban_create",
        json!({"title": "on default", "assignee": "a", "board": "default"}),
    )["task_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        hermes_json(&env, &["kanban", "list", "--json"])[0]["id"],
        id2.as_str()
    );
    // `<root>/kanban/current` selects the board when no env pins it.
    hermes(&env, &["kanban", "boards", "switch", "proj"]);
    let mut o = server(&env, &[("HERMES_KANBAN_TASK", "t_00000000")]);
    assert_eq!(
        call(&mut o, "kanban_show", json!({"task_id": id})).1["task"]["title"],
        "on proj"
    );
    // HERMES_KANBAN_DB pins a file; HERMES_KANBAN_HOME moves the root.
    let pinned = env.dir.path().join("elsewhere/pinned.db");
    let mut p = server(
        &env,
        &[
            ("HERMES_KANBAN_DB", pinned.to_str().unwrap()),
            ("HERMES_KANBAN_TASK", "t_00000000"),
        ],
    );
    call_ok(
        &mut p,
        "kanban_create",
        json!({"title": "pinned", "assignee": "a", "board": "proj"}),
    );
    assert!(pinned.exists());
    let root = env.dir.path().join("kroot");
    let mut h = server(
        &env,
        &[
            ("HERMES_KANBAN_HOME", root.to_str().unwrap()),
            ("HERMES_KANBAN_TASK", "t_00000000"),
        ],
    );
    call_ok(
        &mut h,
        "kanban_create",
        json!({"title": "rooted", "assignee": "a"}),
    );
    assert!(root.join("kanban.db").exists());
}

#[test]
fn kanban_migrates_old_databases_additively() {
    let env = TestEnv::new();
    let path = env.hermes_home().join("kanban.db");
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(
            "CREATE TABLE tasks (id TEXT PRIMARY KEY, title TEXT NOT NULL, body TEXT, assignee TEXT,
               status TEXT NOT NULL, priority INTEGER DEFAULT 0, created_by TEXT, created_at INTEGER NOT NULL,
               started_at INTEGER, completed_at INTEGER, workspace_kind TEXT NOT NULL DEFAULT 'scratch',
               workspace_path TEXT, claim_lock TEXT, claim_expires INTEGER, spawn_failures INTEGER,
               future_column TEXT DEFAULT 'keep');
             CREATE TABLE task_events (id TEXT PRIMARY KEY, task_id TEXT NOT NULL, kind TEXT NOT NULL,
               payload TEXT, created_at INTEGER NOT NULL);
             INSERT INTO tasks (id, title, status, created_at, spawn_failures, future_column)
               VALUES ('t_0000aaaa', 'old', 'ready', 1, 1, 'mine');
             INSERT INTO task_events VALUES ('e1', 't_0000aaaa', 'ready', NULL, 1);",
        )
        .unwrap();
    }
    let mut c = orchestrator(&env);
    let ls = call(&mut c, "kanban_list", json!({})).1;
    assert_eq!(ls["tasks"][0]["id"], "t_0000aaaa", "{ls}");
    call_ok(
        &mut c,
        "kanban_comment",
        json!({"task_id": "t_0000aaaa", "body": "hello"}),
    );
    let d = db(&env);
    let (extra, failures): (String, i64) = d
        .query_row(
            "SELECT future_column, consecutive_failures FROM tasks WHERE id = 't_0000aaaa'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((extra.as_str(), failures), ("mine", 1));
    let kind: String = d
        .query_row(
            "SELECT kind FROM task_events ORDER BY id LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(kind, "promoted", "legacy event kinds are renamed");
    let idtype: String = d
        .query_row(
            "SELECT type FROM pragma_table_info('task_events') WHERE name = 'id'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(idtype, "INTEGER", "legacy TEXT-id table rebuilt");
    // Hermes still reads the board.
    assert_eq!(py_show(&env, "t_0000aaaa")["comments"][0]["body"], "hello");
    // A file that is not SQLite is refused, not recreated.
    let bad = TestEnv::new();
    bad.write_hermes("kanban.db", "this is not a database at all, definitely not");
    bad.write_hermes("config.yaml", "toolsets: [kanban]\n");
    let mut b = server(&bad, &[]);
    let e = call_err(&mut b, "kanban_list", json!({}));
    assert!(e.contains("file is not a database"), "{e}");
}

#[test]
fn kanban_concurrent_writers_lose_nothing() {
    let env = TestEnv::new();
    env.write_hermes("config.yaml", "toolsets: [kanban]\n");
    let shared = py_create(&env, "shared thread", "coder", &[]);
    // Tasks each racer tries to complete: exactly one completion may win each.
    let targets: Vec<String> = (0..6)
        .map(|i| py_create(&env, &format!("race {i}"), "coder", &[]))
        .collect();
    const SERVERS: usize = 3;
    const PY: usize = 2;
    const PER: usize = 12;
    let mut handles = Vec::new();
    for s in 0..SERVERS {
        let (env_cmd, shared, targets) = (env.cmd(), shared.clone(), targets.clone());
        handles.push(std::thread::spawn(move || {
            let mut c = RawClient::spawn(env_cmd);
            c.initialize();
            let mut wins = 0;
            let mut errors = vec![];
            for i in 0..PER {
                let (e, v) = call(&mut c, "kanban_comment", json!({"task_id": shared, "body": format!("s{s} c{i}")}));
                if e {
                    errors.push(v.to_string());
                }
                let (_, v) = call(&mut c, "kanban_create", json!({"title": format!("s{s} {i}"), "assignee": "a", "idempotency_key": format!("k{i}")}));
                assert!(v["ok"] == true, "{v}");
                let t = &targets[i % targets.len()];
                let (e, v) = call(&mut c, "kanban_complete", json!({"task_id": t, "summary": format!("by s{s}")}));
                if e {
                    let m = v["error"].as_str().unwrap_or_default().to_string();
                    if !m.contains("already terminal") {
                        errors.push(m);
                    }
                } else {
                    wins += 1;
                }
            }
            (wins, errors)
        }));
    }
    // Hermes' writers: one Python process each, racing the servers.
    let env = std::sync::Arc::new(env);
    for p in 0..PY {
        let cmds: Vec<Vec<String>> = (0..PER / 2)
            .map(|i| {
                ["kanban", "comment", &shared, &format!("py{p} c{i}")]
                    .map(String::from)
                    .to_vec()
            })
            .collect();
        let env = env.clone();
        handles.push(std::thread::spawn(move || {
            let errors = hermes_batch(&env, &cmds)
                .into_iter()
                .filter(|(code, _)| *code != 0)
                .map(|(_, stderr)| stderr)
                .collect();
            (0, errors)
        }));
    }
    let mut wins = 0;
    for h in handles {
        let (w, errors) = h.join().unwrap();
        assert!(errors.is_empty(), "errors surfaced: {errors:?}");
        wins += w;
    }
    let d = db(&env);
    let n: i64 = d
        .query_row(
            "SELECT COUNT(*) FROM task_comments WHERE task_id = ?",
            [&shared],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n as usize, SERVERS * PER + PY * (PER / 2), "lost comments");
    let ev: i64 = d
        .query_row(
            "SELECT COUNT(*) FROM task_events WHERE task_id = ? AND kind = 'commented'",
            [&shared],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(ev, n);
    assert_eq!(wins, targets.len(), "each target completed exactly once");
    for t in &targets {
        let runs: i64 = d
            .query_row(
                "SELECT COUNT(*) FROM task_runs WHERE task_id = ? AND outcome = 'completed'",
                [t],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(runs, 1, "{t}");
        assert_eq!(py_show(&env, t)["task"]["status"], "done");
    }
    // One task per idempotency key despite racing creators.
    let keys: i64 = d
        .query_row(
            "SELECT COUNT(*) FROM tasks WHERE idempotency_key IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(keys as usize, PER);
    let ok: String = d
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
}

/// Holds an exclusive lock on the board (argv[1]) until stdin closes.
const HOLD_LOCK: &str = r#"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.read()
c.execute("ROLLBACK")
"#;

/// The real-time test of the kanban lock wait: unscaled, each call ends after
/// the 30 s of `KANBAN_LOCK_WAIT` (src/hermes/deadlines.rs).
#[test]
fn kanban_call_ends_with_a_clear_error_while_another_process_holds_the_board() {
    use std::io::BufRead;
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let env = TestEnv::new();
    let mut c = orchestrator(&env);
    call_ok(
        &mut c,
        "kanban_create",
        json!({"title": "before", "assignee": "a"}),
    );
    let db_path = env.hermes_home().join("kanban.db");
    let mut holder = Command::new(hermes_python("sqlite3"))
        .args(["-c", HOLD_LOCK])
        .arg(&db_path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn the lock holder");
    let mut line = String::new();
    std::io::BufReader::new(holder.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "locked", "the holder did not take the lock");

    // Each call ends (here the bound is 30 s; Hermes' 120 s per statement and
    // 5 retries would be many minutes) with an error naming the lock, also a
    // second call queued behind the first on the same board.
    let started = Instant::now();
    let ids: Vec<i64> = ["during", "queued"]
        .iter()
        .map(|t| {
            c.send(
                "tools/call",
                json!({"name": "kanban_create", "arguments": {"title": t, "assignee": "a"}}),
            )
        })
        .collect();
    let mut answers = std::collections::HashMap::new();
    while answers.len() < ids.len() {
        let left = Duration::from_secs(120).saturating_sub(started.elapsed());
        let msg = c
            .recv(left)
            .expect("the kanban calls did not end within 120 s while the board was locked");
        if let Some(id) = msg.get("id").and_then(Value::as_i64)
            && ids.contains(&id)
        {
            answers.insert(id, msg);
        }
    }
    eprintln!(
        "locked board: both calls ended after {:?}",
        started.elapsed()
    );
    // One call waits for the other process's lock and says so; the other
    // finds the board taken by that call in this server, or waits for the
    // lock too. Which of the two gets the board first is the server's
    // scheduling: the order the requests were sent in does not decide it.
    let mut locked = 0;
    for id in &ids {
        let result = &answers[id]["result"];
        assert!(is_error(result), "{}", answers[id]);
        let err = result_json(result)["error"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let path = db_path.to_str().unwrap();
        assert!(
            err.starts_with(&format!("kanban_create: the kanban board {path} "))
                && (err.contains("is locked by another process")
                    || err.contains("is busy: an earlier kanban call")),
            "{err}"
        );
        locked += usize::from(err.contains("is locked by another process"));
    }
    assert!(locked >= 1, "{answers:?}");

    // Once the holder ends, the same server works again and nothing was half-written.
    drop(holder.stdin.take());
    assert!(holder.wait().unwrap().success());
    call_ok(
        &mut c,
        "kanban_create",
        json!({"title": "after", "assignee": "a"}),
    );
    let titles: Vec<String> = db(&env)
        .prepare("SELECT title FROM tasks ORDER BY created_at, id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(titles.contains(&"before".to_string()) && titles.contains(&"after".to_string()));
    assert!(
        !titles.contains(&"during".to_string()) && !titles.contains(&"queued".to_string()),
        "{titles:?}"
    );
}

/// `kanban.db.init.lock` that is a FIFO or a symlink: the call is refused at
/// once with what is there and what to do, and the server keeps answering.
#[test]
fn an_init_lock_that_is_a_fifo_or_a_symlink_is_refused_at_once() {
    let env = TestEnv::new();
    let lock = env.hermes_home().join("kanban.db.init.lock");
    let mut c = orchestrator(&env);
    let refused = |c: &mut RawClient, kind: &str| {
        let t = std::time::Instant::now();
        let r = c.call_tool("kanban_list", json!({}));
        assert!(t.elapsed() < std::time::Duration::from_secs(10));
        assert!(is_error(&r), "{r}");
        let text = r.to_string();
        for part in [&lock.display().to_string(), kind, "remove it"] {
            assert!(text.contains(part), "{part:?} not in {text}");
        }
    };
    super::support::fs::mkfifo(&lock);
    refused(&mut c, "a FIFO (named pipe)");
    std::fs::remove_file(&lock).unwrap();
    std::os::unix::fs::symlink(env.dir.path().join("nowhere"), &lock).unwrap();
    refused(&mut c, "a symlink");
    assert!(!env.dir.path().join("nowhere").exists());
    std::fs::remove_file(&lock).unwrap();
    let (err, listed) = call(&mut c, "kanban_list", json!({}));
    assert!(!err, "{listed}");
    assert!(std::fs::metadata(&lock).unwrap().is_file());
}
