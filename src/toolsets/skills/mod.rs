//! Hermes' `skills` toolset: `skill_view` and `skills_list`
//! (hermes-agent: tools/skills_tool.py).
//!
//! Skills live in `$HERMES_HOME/skills/[<category>/…]<skill>/SKILL.md` (plus
//! legacy `<name>.md` files) and in `skills.external_dirs`. Listing tools does
//! no I/O; each call scans the roots afresh. Both tools only read (the one
//! write is `skills_list` creating a missing, empty skills directory, as
//! Hermes does). No name or `file_path` may leave the skills roots (see
//! [`guard`]).
//!
//! Layout: [`schema`] (the tools' declarations), [`args`] (their arguments);
//! [`scan`] lists, [`index`] builds the skills index of Hermes' system
//! prompt, [`view`] reads one skill, [`guard`] keeps paths inside the
//! roots; this file wires the calls to the `Toolset` trait.

mod args;
pub(crate) mod frontmatter;
pub(crate) mod guard;
mod index;
pub(crate) mod inline_shell;
mod plugins;
mod render;
pub(crate) mod scan;
mod schema;
mod usage;
pub(crate) mod view;

use serde_json::Value;

use crate::hermes::Context;
use crate::process::blocking;
use crate::server::context::{ContextBlock, Offer};
use crate::server::toolset::BoxFuture;
use crate::server::{Availability, ToolCall, ToolDef, ToolEntry, ToolOutput, Toolset};
use args::SkillsCall;

pub(crate) struct SkillsToolset;

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
        schema::DEFS
    }

    fn resolve(&self, _ctx: &Context, def: &'static ToolDef) -> ToolEntry {
        def.entry(Availability::Available)
    }

    /// The patterns a view compiles and the listing scan (cached as Hermes
    /// caches it), when the skills directory is there: reads only.
    fn warm_up(&self, ctx: &Context) {
        frontmatter::warm();
        inline_shell::warm();
        render::warm();
        let roots = scan::Roots::load(ctx);
        if roots.local.is_dir() {
            scan::find_all_skills(ctx, &roots);
        }
    }

    fn context_reads_files(&self) -> bool {
        true
    }

    /// The skills index Hermes puts in its system prompt ([`index`]).
    fn context(&self, ctx: &Context, offer: &Offer) -> Vec<ContextBlock> {
        index::blocks(ctx, offer)
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
