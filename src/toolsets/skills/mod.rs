//! Hermes' `skills` toolset: `skill_view` and `skills_list`
//! (hermes-agent: tools/skills_tool.py).
//!
//! Skills live in `$HERMES_HOME/skills/[<category>/…]<skill>/SKILL.md` (plus
//! legacy `<name>.md` files) and in `skills.external_dirs`. Listing tools does
//! no I/O; each call scans the roots afresh. Both tools only read (the one
//! write is `skills_list` creating a missing, empty skills directory, as
//! Hermes does). No name or `file_path` may leave the skills roots (see
//! [`guard`]).

pub(crate) mod frontmatter;
pub(crate) mod guard;
pub(crate) mod inline_shell;
mod plugins;
mod render;
pub(crate) mod scan;
mod usage;
pub(crate) mod view;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use crate::hermes::Context;
use crate::server::toolset::BoxFuture;
use crate::server::{Availability, Hints, ToolCall, ToolDef, ToolEntry, ToolOutput, Toolset};

pub(crate) struct SkillsToolset;

const SKILL_VIEW_DESCRIPTION: &str = "Skills allow for loading information about specific tasks and workflows, as well as scripts and templates. Load a skill's full content or access its linked files (references, templates, scripts). First call returns SKILL.md content plus a 'linked_files' dict showing available references/templates/scripts. To access those, call again with file_path parameter.";
const SKILLS_LIST_DESCRIPTION: &str =
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

/// `skill_view`'s arguments (after schema validation).
#[derive(Debug, Default, Deserialize)]
struct ViewArgs {
    #[serde(default)]
    name: String,
    #[serde(default)]
    file_path: Option<String>,
}

/// `skills_list`'s arguments (after schema validation).
#[derive(Debug, Default, Deserialize)]
struct ListArgs {
    #[serde(default)]
    category: Option<String>,
}

/// A call of one of this toolset's tools, its arguments read.
enum SkillsCall {
    View(ViewArgs),
    List(ListArgs),
}

impl SkillsCall {
    /// `None` for a name this toolset does not define.
    fn parse(name: &str, args: Map<String, Value>) -> Option<SkillsCall> {
        let args = Value::Object(args);
        Some(match name {
            "skill_view" => SkillsCall::View(read_args(args)),
            "skills_list" => SkillsCall::List(read_args(args)),
            _ => return None,
        })
    }
}

/// Validated arguments as `T`; a shape `T` does not take reads as `T::default()`.
fn read_args<T: DeserializeOwned + Default>(args: Value) -> T {
    serde_json::from_value(args).unwrap_or_default()
}

use crate::process::blocking;

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
            match SkillsCall::parse(call.name, call.args) {
                Some(SkillsCall::View(a)) => to_output(blocking(|| {
                    let r = view::skill_view(ctx, &a.name, a.file_path.as_deref());
                    if let Ok(v) = &r
                        && v.get("success") == Some(&Value::Bool(true))
                    {
                        usage::record_view(&ctx.home.skills_dir(), v, &a.name);
                    }
                    r
                })),
                Some(SkillsCall::List(a)) => {
                    to_output(blocking(|| scan::skills_list(ctx, a.category.as_deref())))
                }
                None => ToolOutput::error(format!("Unknown tool: {}", call.name)),
            }
        })
    }
}
