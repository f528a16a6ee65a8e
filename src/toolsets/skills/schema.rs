//! The `skills` toolset's declarations: Hermes' `skill_view` and
//! `skills_list` descriptions and schemas (tools/skills_tool.py), as static data.

use serde_json::{Value, json};

use crate::server::{Hints, ToolDef};

const SKILL_VIEW_DESCRIPTION: &str = "Skills allow for loading information about specific tasks and workflows, as well as scripts and templates. Load a skill's full content or access its linked files (references, templates, scripts). First call returns SKILL.md content plus a 'linked_files' dict showing available references/templates/scripts. To access those, call again with file_path parameter.";
const SKILLS_LIST_DESCRIPTION: &str =
    "List available skills (name + description). Use skill_view(name) to load full content.";

pub(super) const DEFS: &[ToolDef] = &[
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
