//! Hermes' `skills` toolset: `skill_view` and `skills_list`
//! (`tools/skills_tool.py`, hermes-reference §4.5).
//!
//! Skills live in `$HERMES_HOME/skills/[<category>/…]<skill>/SKILL.md` (plus
//! legacy `<name>.md` files) and in `skills.external_dirs`. Listing tools does
//! no I/O; each call scans the roots afresh. Both tools only read (the one
//! write is `skills_list` creating a missing, empty skills directory, as
//! Hermes does). No name or `file_path` may leave the skills roots (see
//! [`guard`]).

pub mod frontmatter;
pub mod guard;
pub mod inline_shell;
pub mod scan;
pub mod view;

use serde_json::{Value, json};

use crate::hermes::Context;
use crate::server::args::ArgsExt;
use crate::server::toolset::BoxFuture;
use crate::server::{Availability, Hints, ToolCall, ToolDef, ToolEntry, ToolOutput, Toolset};

pub struct SkillsToolset;

pub const SKILL_VIEW_DESCRIPTION: &str = "Skills allow for loading information about specific tasks and workflows, as well as scripts and templates. Load a skill's full content or access its linked files (references, templates, scripts). First call returns SKILL.md content plus a 'linked_files' dict showing available references/templates/scripts. To access those, call again with file_path parameter.";
pub const SKILLS_LIST_DESCRIPTION: &str =
    "List available skills (name + description). Use skill_view(name) to load full content.";

fn skill_view_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {
                "type": "string",
                "description": "The skill name (use skills_list to see available skills). For plugin-provided skills, use the qualified form 'plugin:skill' (e.g. 'superpowers:writing-plans')."
            },
            "file_path": {
                "type": "string",
                "description": "OPTIONAL: Path to a linked file within the skill (e.g., 'references/api.md', 'templates/config.yaml', 'scripts/validate.py'). Omit to get the main SKILL.md content."
            }
        },
        "required": ["name"]
    })
}

fn skills_list_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "category": {
                "type": "string",
                "description": "Optional category filter to narrow results"
            }
        },
        "required": []
    })
}

/// Run blocking filesystem work without stalling the async workers.
fn blocking<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}

fn to_output(r: Result<Value, Value>) -> ToolOutput {
    match r {
        Ok(v) => ToolOutput::json(v),
        Err(v) => ToolOutput::error_json(v),
    }
}

impl Toolset for SkillsToolset {
    fn name(&self) -> &'static str {
        "skills"
    }

    fn defs(&self) -> &'static [ToolDef] {
        const DEFS: &[ToolDef] = &[
            ToolDef {
                name: "skill_view",
                description: SKILL_VIEW_DESCRIPTION,
                schema: skill_view_schema,
                hints: Hints::READ_ONLY,
            },
            ToolDef {
                name: "skills_list",
                description: SKILLS_LIST_DESCRIPTION,
                schema: skills_list_schema,
                hints: Hints::READ_ONLY,
            },
        ];
        DEFS
    }

    fn resolve(&self, _ctx: &Context, def: &'static ToolDef) -> ToolEntry {
        def.entry(Availability::Available)
    }

    fn call<'a>(&'a self, ctx: &'a Context, call: ToolCall) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            match call.name {
                "skill_view" => {
                    let name = call.args.str_arg("name").unwrap_or_default().to_string();
                    let file_path = call.args.str_arg("file_path").map(str::to_string);
                    to_output(blocking(|| {
                        view::skill_view(ctx, &name, file_path.as_deref())
                    }))
                }
                "skills_list" => {
                    let category = call.args.str_arg("category").map(str::to_string);
                    to_output(blocking(|| scan::skills_list(ctx, category.as_deref())))
                }
                other => ToolOutput::error(format!("Unknown tool: {other}")),
            }
        })
    }
}
