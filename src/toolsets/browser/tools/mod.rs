//! The tool handlers over a Chromium session: one function per tool, taking
//! the parsed arguments and the session, returning the tool's JSON.
//!
//! * [`navigate`]: `browser_navigate`, `browser_back`, and the URL precheck;
//! * [`snapshot_tool`]: `browser_snapshot` (cached, summarised when long);
//! * [`actions`]: click, type, press, scroll (keys from [`keys`]);
//! * [`pageinfo`]: `browser_get_images`, `browser_console` (log, evaluate);
//! * [`screenshot`]: `browser_vision` (a screenshot for the vision model);
//! * this file: [`run_tool`], one parsed call on a session, and the dialog
//!   news every result carries.
//!
//! It owns what each tool does and says, not the session's lifetime (the
//! toolset's dispatch) nor the transport. It is separate so that a handler
//! reads as Hermes' tool it mirrors, with the session below it.

pub(crate) mod actions;
pub(crate) mod keys;
pub(crate) mod navigate;
pub(crate) mod pageinfo;
pub(crate) mod screenshot;
pub(crate) mod snapshot_tool;

use serde_json::{Value, json};

use crate::hermes::Context;
use crate::toolsets::browser::args::{ConsoleArgs, Tool};
use crate::toolsets::browser::chromium::settings::Settings;
use crate::toolsets::browser::reply::{Fail, Reply};
use crate::toolsets::browser::session::Session;

/// Dialog news rides along with every result: dialogs still open (with how
/// to answer them) and dialogs handled since the last result.
pub(crate) fn add_dialog_news(sess: &Session, r: &mut Result<Reply, Fail>) {
    let handled: Vec<Value> = std::mem::take(
        &mut *sess
            .tab
            .state
            .handled_dialogs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    let pending: Vec<Value> = sess
        .tab
        .state
        .pending()
        .iter()
        .map(|d| d.to_json())
        .collect();
    let (Ok(Reply::Json(v)) | Ok(Reply::Image(v, _, _)) | Err(Fail(v))) = r;
    if let Some(o) = v.as_object_mut() {
        if !pending.is_empty() {
            o.insert("pending_dialogs".into(), Value::Array(pending));
            o.insert("dialog_hint".into(), json!("A JavaScript dialog is open and blocks the page. Respond with browser_press key=\"Enter\" to accept (a prompt gets its default text) or key=\"Escape\" to dismiss."));
        }
        if !handled.is_empty() {
            o.insert("dialogs_handled".into(), Value::Array(handled));
        }
    }
}

/// Anything but a snapshot or reading the console log may change the page:
/// those keep the cached snapshot (see `tools/snapshot_tool.rs`).
pub(crate) fn keeps_snapshot(tool: &Tool) -> bool {
    matches!(
        tool,
        Tool::Snapshot(_)
            | Tool::Console(ConsoleArgs {
                expression: None,
                ..
            })
    )
}

/// Run one tool on the session (`url`: the checked URL of a navigation).
pub(crate) async fn run_tool(
    ctx: &Context,
    st: &Settings,
    sess: &mut Session,
    tool: Tool,
    url: Option<&str>,
) -> Result<Reply, Fail> {
    match tool {
        Tool::Navigate(_) => navigate::navigate(ctx, st, sess, url.unwrap_or_default())
            .await
            .map(Reply::Json),
        Tool::Snapshot(a) => snapshot_tool::snapshot_tool(ctx, st, sess, a.full, &a.task)
            .await
            .map(Reply::Json),
        Tool::Click(a) => actions::click(st, sess, &a.element).await.map(Reply::Json),
        Tool::Type(a) => actions::type_text(st, sess, &a.element, &a.text)
            .await
            .map(Reply::Json),
        Tool::Press(a) => actions::press(st, sess, &a.key).await.map(Reply::Json),
        Tool::Scroll(dir) => actions::scroll(st, sess, dir).await.map(Reply::Json),
        Tool::Back => navigate::back(st, sess).await.map(Reply::Json),
        Tool::GetImages => pageinfo::images(st, sess).await.map(Reply::Json),
        Tool::Console(a) => match a.expression {
            Some(e) => pageinfo::evaluate(st, sess, &e).await.map(Reply::Json),
            None => Ok(Reply::Json(pageinfo::console(sess, a.clear))),
        },
        Tool::Vision(a) => screenshot::vision(ctx, st, sess, &a.question, a.annotate).await,
    }
}
