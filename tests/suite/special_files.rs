//! Small files tools read from the Hermes home (kanban's `current` board
//! pointer, a board's `board.json`, vision's local images) may be FIFOs or
//! devices: each is refused or skipped at once, never read until it blocks.

use std::time::{Duration, Instant};

use serde_json::json;

use super::support::common::*;
use super::support::fs::mkfifo;
use super::support::kanban::{call, call_ok, orchestrator};

#[test]
fn kanban_board_pointer_that_is_a_fifo_does_not_block() {
    let env = TestEnv::new();
    mkfifo(&env.hermes_home().join("kanban/current"));
    let mut c = orchestrator(&env);
    let t = Instant::now();
    // With no readable pointer, the default board is used (as with a missing file).
    let created = call_ok(
        &mut c,
        "kanban_create",
        json!({"title": "still works", "assignee": "w"}),
    );
    assert!(created["task_id"].is_string(), "{created}");
    let (err, listed) = call(&mut c, "kanban_list", json!({}));
    assert!(!err, "{listed}");
    assert_eq!(listed["count"], 1, "{listed}");
    assert!(t.elapsed() < Duration::from_secs(15));
}

#[test]
fn kanban_db_that_is_a_fifo_is_an_error_not_a_hang() {
    let env = TestEnv::new();
    mkfifo(&env.hermes_home().join("kanban.db"));
    let mut c = orchestrator(&env);
    let r = c.call_tool("kanban_list", json!({}));
    assert!(is_error(&r), "{r}");
}

#[test]
fn image_edit_source_that_is_a_fifo_is_refused_at_once() {
    let env = TestEnv::new();
    env.write_hermes("config.yaml", "image_gen:\n  provider: openai\n");
    let fifo = env.dir.path().join("photo.png");
    mkfifo(&fifo);
    let mut cmd = env.cmd();
    // A closed loopback port: nothing may be sent anyway (the source is refused first).
    cmd.env("OPENAI_API_KEY", "sk-test-not-used")
        .env("OPENAI_BASE_URL", "http://127.0.0.1:9/v1");
    let mut c = RawClient::spawn(cmd);
    c.initialize();
    let t = Instant::now();
    let r = c.call_tool(
        "image_generate",
        json!({"prompt": "make it blue", "image_url": fifo.display().to_string()}),
    );
    let text = r.to_string();
    assert!(
        text.contains("photo.png") && text.contains("not a regular file"),
        "{text}"
    );
    assert!(t.elapsed() < Duration::from_secs(15));
}
