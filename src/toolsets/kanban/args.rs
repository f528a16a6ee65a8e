//! The nine kanban tools as a type: [`KanbanTool`] is parsed once from the
//! tool name, and [`parse`] turns a call's (schema-validated) arguments into
//! a [`Call`] after the checks Hermes' handlers make before touching the
//! database (hermes-agent: `tools/kanban_tools.py`), in the same order and
//! with the same messages. Checks Hermes makes after opening the database
//! stay with the handlers, so which error wins is unchanged.
//!
//! Arguments are read with [`ArgsExt`] rather than serde: a value the schema
//! accepted but of an unexpected shape (an integer beyond `i64`, a non-string
//! list item) must be ignored exactly as Hermes ignores it, not fail the call.

use serde_json::{Map, Value};

use crate::server::ToolOutput;
use crate::server::args::ArgsExt;
use crate::toolsets::kanban::env::KEnv;
use crate::toolsets::kanban::status::Status;
use crate::toolsets::kanban::util::py_strip;

/// One of the kanban tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KanbanTool {
    Show,
    List,
    Complete,
    Block,
    Heartbeat,
    Comment,
    Create,
    Unblock,
    Link,
}

impl KanbanTool {
    const ALL: [KanbanTool; 9] = [
        KanbanTool::Show,
        KanbanTool::List,
        KanbanTool::Complete,
        KanbanTool::Block,
        KanbanTool::Heartbeat,
        KanbanTool::Comment,
        KanbanTool::Create,
        KanbanTool::Unblock,
        KanbanTool::Link,
    ];

    pub(crate) fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            KanbanTool::Show => "kanban_show",
            KanbanTool::List => "kanban_list",
            KanbanTool::Complete => "kanban_complete",
            KanbanTool::Block => "kanban_block",
            KanbanTool::Heartbeat => "kanban_heartbeat",
            KanbanTool::Comment => "kanban_comment",
            KanbanTool::Create => "kanban_create",
            KanbanTool::Unblock => "kanban_unblock",
            KanbanTool::Link => "kanban_link",
        }
    }

    /// Tools hidden from dispatcher-spawned workers.
    pub(crate) fn orchestrator_only(self) -> bool {
        matches!(self, KanbanTool::List | KanbanTool::Unblock)
    }
}

/// The refusal a worker gets for an orchestrator-only tool.
pub(crate) fn orchestrator_only_message(tool: &str) -> String {
    format!(
        "{tool} is orchestrator-only; dispatcher-spawned workers must use kanban_complete, kanban_block, kanban_heartbeat, or kanban_comment for their assigned task."
    )
}

/// A call that passed the pre-database checks. `task_id` is the resolved
/// target (the argument, or `HERMES_KANBAN_TASK` where Hermes defaults it).
pub(crate) enum Call {
    Show {
        task_id: String,
    },
    List(ListArgs),
    Complete {
        task_id: String,
        args: CompleteArgs,
    },
    Block(BlockArgs),
    Heartbeat {
        task_id: String,
        note: Option<String>,
    },
    Comment {
        task_id: String,
        body: String,
    },
    Create(CreateArgs),
    Unblock {
        task_id: String,
    },
    Link {
        parent_id: String,
        child_id: String,
    },
}

pub(crate) struct ListArgs {
    /// `None` when absent; `Some(None)` when not an integer (refused later).
    pub(crate) limit: Option<Option<i64>>,
    pub(crate) assignee: Option<String>,
    pub(crate) status: Option<Status>,
    pub(crate) tenant: Option<String>,
    pub(crate) include_archived: bool,
}

/// kanban_complete's arguments as given (redaction happens in the handler).
pub(crate) struct CompleteArgs {
    pub(crate) summary: Option<String>,
    pub(crate) result: Option<String>,
    pub(crate) metadata: Option<Value>,
    pub(crate) created_cards: Option<Vec<String>>,
    pub(crate) artifacts: Option<Vec<String>>,
}

pub(crate) struct BlockArgs {
    pub(crate) task_id: String,
    pub(crate) reason: String,
    pub(crate) kind: Option<String>,
}

pub(crate) struct CreateArgs {
    pub(crate) title: String,
    pub(crate) assignee: String,
    pub(crate) body: Option<String>,
    pub(crate) parents: Vec<String>,
    pub(crate) tenant: Option<String>,
    pub(crate) priority: Option<i64>,
    pub(crate) workspace_kind: Option<String>,
    pub(crate) workspace_path: Option<String>,
    pub(crate) triage: bool,
    pub(crate) idempotency_key: Option<String>,
    pub(crate) max_runtime_seconds: Option<i64>,
    pub(crate) initial_status: Option<String>,
    /// `None` when absent (no skills column), `Some([])` when given empty.
    pub(crate) skills: Option<Vec<String>>,
    pub(crate) goal_mode: bool,
    pub(crate) goal_max_turns: Option<i64>,
    pub(crate) board: Option<String>,
}

fn string(args: &Map<String, Value>, key: &str) -> Option<String> {
    args.str_arg(key).map(str::to_string)
}

/// A list argument's strings, `None` when the argument is absent.
fn list(args: &Map<String, Value>, key: &str) -> Option<Vec<String>> {
    args.get(key).map(|_| args.str_list_arg(key))
}

/// A required, non-empty string argument.
fn required<'a>(args: &'a Map<String, Value>, key: &str, msg: &str) -> Result<&'a str, ToolOutput> {
    args.str_arg(key)
        .filter(|v| !v.is_empty())
        .ok_or_else(|| ToolOutput::error(msg))
}

/// `kanban_create`'s arguments: a title and an assignee are required.
fn create_args(args: &Map<String, Value>) -> Result<CreateArgs, ToolOutput> {
    let title = args.str_arg("title").filter(|t| !py_strip(t).is_empty());
    let Some(title) = title else {
        return Err(ToolOutput::error("title is required"));
    };
    let assignee = required(
        args,
        "assignee",
        "assignee is required — name the profile that should execute this task (the dispatcher will only spawn tasks with an assignee)",
    )?;
    Ok(CreateArgs {
        title: title.to_string(),
        assignee: assignee.to_string(),
        body: string(args, "body"),
        parents: args.str_list_arg("parents"),
        tenant: string(args, "tenant"),
        priority: args.i64_arg("priority"),
        workspace_kind: string(args, "workspace_kind"),
        workspace_path: string(args, "workspace_path"),
        triage: args.bool_arg("triage").unwrap_or(false),
        idempotency_key: string(args, "idempotency_key"),
        max_runtime_seconds: args.i64_arg("max_runtime_seconds"),
        initial_status: string(args, "initial_status"),
        skills: list(args, "skills"),
        goal_mode: args.bool_arg("goal_mode").unwrap_or(false),
        goal_max_turns: args.i64_arg("goal_max_turns"),
        board: string(args, "board"),
    })
}

/// Hermes' handler checks that need no database, in Hermes' order.
pub(crate) fn parse(
    tool: KanbanTool,
    args: &Map<String, Value>,
    kenv: &KEnv,
) -> Result<Call, ToolOutput> {
    let default_tid = || {
        kenv.task_id(args.str_arg("task_id")).ok_or_else(|| {
            ToolOutput::error("task_id is required (or set HERMES_KANBAN_TASK in the env)")
        })
    };
    // Workers may only mutate their own task.
    let own_tid = || -> Result<String, ToolOutput> {
        let t = default_tid()?;
        kenv.ownership(&t)?;
        Ok(t)
    };
    if tool.orchestrator_only() && kenv.task.is_some() {
        return Err(ToolOutput::error(orchestrator_only_message(tool.name())));
    }
    Ok(match tool {
        KanbanTool::Show => Call::Show {
            task_id: default_tid()?,
        },
        KanbanTool::Complete => Call::Complete {
            task_id: own_tid()?,
            args: CompleteArgs {
                summary: string(args, "summary"),
                result: string(args, "result"),
                metadata: args.get("metadata").cloned(),
                created_cards: list(args, "created_cards"),
                artifacts: list(args, "artifacts"),
            },
        },
        KanbanTool::Block => {
            let task_id = own_tid()?;
            let reason = args.str_arg("reason").filter(|r| !py_strip(r).is_empty());
            let Some(reason) = reason else {
                return Err(ToolOutput::error(
                    "reason is required — explain what input you need",
                ));
            };
            Call::Block(BlockArgs {
                task_id,
                reason: reason.to_string(),
                kind: string(args, "kind"),
            })
        }
        KanbanTool::Heartbeat => Call::Heartbeat {
            task_id: own_tid()?,
            note: string(args, "note"),
        },
        KanbanTool::Comment => {
            let task_id = required(
                args,
                "task_id",
                "task_id is required (use the current task id if that's what you mean — pulls from env but kept explicit here)",
            )?;
            let body = args.str_arg("body").filter(|b| !py_strip(b).is_empty());
            let Some(body) = body else {
                return Err(ToolOutput::error("body is required"));
            };
            Call::Comment {
                task_id: task_id.to_string(),
                body: body.to_string(),
            }
        }
        KanbanTool::List => Call::List(ListArgs {
            limit: args.get("limit").map(Value::as_i64),
            assignee: string(args, "assignee"),
            status: args.str_arg("status").map(Status::from),
            tenant: string(args, "tenant"),
            include_archived: args.bool_arg("include_archived").unwrap_or(false),
        }),
        KanbanTool::Unblock => {
            let task_id = required(args, "task_id", "task_id is required")?;
            kenv.ownership(task_id)?;
            Call::Unblock {
                task_id: task_id.to_string(),
            }
        }
        KanbanTool::Create => Call::Create(create_args(args)?),
        KanbanTool::Link => {
            let both = "both parent_id and child_id are required";
            let parent_id = required(args, "parent_id", both)?;
            let child_id = required(args, "child_id", both)?;
            Call::Link {
                parent_id: parent_id.to_string(),
                child_id: child_id.to_string(),
            }
        }
    })
}
