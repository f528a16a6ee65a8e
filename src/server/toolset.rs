//! The contract between the server and the Hermes toolsets.
//!
//! Each toolset module (`src/toolsets/*`) implements [`Toolset`]: it lists its
//! tools with Hermes' exact names and full, flat JSON schemas, says cheaply
//! whether each tool can work here (no slow work: this runs for `tools/list`),
//! and runs calls. The list of toolsets lives in [`crate::toolsets::all`].

use std::future::Future;
use std::pin::Pin;

use serde_json::{Map, Value};

use super::output::ToolOutput;
use super::progress::Progress;
use crate::hermes::Context;

pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// MCP tool annotations, stated honestly: `read_only` tools run without an
/// approval prompt in Codex's default mode; Codex asks before a call of a
/// `destructive` or `open_world` one (the README's table lists each tool's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Hints {
    pub read_only: bool,
    pub(crate) destructive: bool,
    pub(crate) idempotent: bool,
    pub open_world: bool,
}

impl Hints {
    pub(crate) const READ_ONLY: Hints = Hints {
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    };
    pub(crate) const READ_ONLY_OPEN: Hints = Hints {
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: true,
    };
    pub(crate) const WRITE: Hints = Hints {
        read_only: false,
        destructive: false,
        idempotent: false,
        open_world: false,
    };
    pub(crate) const WRITE_OPEN: Hints = Hints {
        read_only: false,
        destructive: false,
        idempotent: false,
        open_world: true,
    };
    /// Writes that can delete or overwrite what the user had (a memory
    /// entry, a task's state, a file at a path the call names): Codex asks
    /// before each call under `approval_policy = "on-request"`.
    pub(crate) const DESTRUCTIVE: Hints = Hints {
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: false,
    };
    pub(crate) const DESTRUCTIVE_OPEN: Hints = Hints {
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: true,
    };
}

/// A tool's declaration: one row of a toolset's static table ([`Toolset::defs`]).
/// This is the only way a tool is declared; Hermes' schemas stay verbatim as data.
#[derive(Debug)]
pub struct ToolDef {
    pub(crate) name: &'static str,
    pub(crate) description: &'static str,
    /// Builds the flat JSON schema object (`type: object`, `properties`, `required`),
    /// without `$ref`/`anyOf`, every array with typed `items`.
    pub(crate) schema: fn() -> Value,
    pub(crate) hints: Hints,
}

impl ToolDef {
    /// The declaration as listed when nothing in the config changes it.
    pub(crate) fn entry(&self, availability: Availability) -> ToolEntry {
        ToolEntry {
            spec: ToolSpec {
                name: self.name,
                description: self.description.to_string(),
                input_schema: (self.schema)(),
                hints: self.hints,
            },
            availability,
        }
    }
}

/// One tool as listed in `tools/list`.
#[derive(Debug, Clone)]
pub struct ToolSpec {
    pub name: &'static str,
    pub(crate) description: String,
    pub input_schema: Value,
    pub hints: Hints,
}

/// Whether a tool can work in this environment, and why not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Availability {
    Available,
    /// The reason names what to set or install (env var, config key, package).
    Unavailable(String),
}

impl Availability {
    pub(crate) fn is_available(&self) -> bool {
        matches!(self, Availability::Available)
    }
}

#[derive(Debug, Clone)]
pub struct ToolEntry {
    pub spec: ToolSpec,
    pub availability: Availability,
}

/// Which provider a toolset will actually use for one job, and why: what
/// `tools` and `doctor` show, so a Hermes config's choice is never silently
/// replaced (e.g. `tts.provider: edge` → "edge (tts.provider)").
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ProviderChoice {
    /// The job, named by the tool that does it (`text_to_speech`, `web_search`).
    pub job: &'static str,
    /// The provider that runs, or `none`.
    pub provider: String,
    /// Why this one: the config key or variable that chose it, or why none can run.
    pub why: String,
}

/// A validated call handed to a toolset. Cancellation needs nothing from the
/// toolset: the server drops the call's future (children are `kill_on_drop`).
pub struct ToolCall {
    pub(crate) name: &'static str,
    /// Arguments after schema validation and Hermes-style coercion; `null`s dropped.
    pub(crate) args: Map<String, Value>,
    pub(crate) progress: Progress,
}

pub trait Toolset: Send + Sync + 'static {
    /// Hermes' toolset name (`web`, `browser`, `vision`, `image_gen`, `tts`, `skills`, `kanban`).
    fn name(&self) -> &'static str;

    /// The toolset's tools, declared once. The server indexes them by name at start.
    fn defs(&self) -> &'static [ToolDef];

    /// One tool as this environment sees it: its availability and, where Hermes
    /// words it from the config (`image_generate`, `text_to_speech`), its text.
    /// Must be cheap: no network, no browser launch, no database open, no directory scan.
    fn resolve(&self, ctx: &Context, def: &'static ToolDef) -> ToolEntry;

    /// Every tool of [`Self::defs`], resolved: what `tools/list` and
    /// `instructions` see. A toolset whose availability is one answer for
    /// all its tools (the browser's Chromium lookup) works it out once here.
    fn resolve_all(&self, ctx: &Context) -> Vec<ToolEntry> {
        self.defs()
            .iter()
            .map(|def| self.resolve(ctx, def))
            .collect()
    }

    /// The providers this toolset will use in this environment, and why.
    /// Cheap like [`Toolset::resolve`]: reads config and environment only.
    fn providers(&self, _ctx: &Context) -> Vec<ProviderChoice> {
        Vec::new()
    }

    /// This toolset's pieces of Hermes' system prompt for what `serve`
    /// offers ([`super::context`]): guidance for its tools, the snapshots it
    /// owns, each rendered as Hermes renders it. Runs once, when `serve`
    /// starts; reads files, never writes.
    fn context(
        &self,
        _ctx: &Context,
        _offer: &super::context::Offer,
    ) -> Vec<super::context::ContextBlock> {
        Vec::new()
    }

    /// Whether [`Self::context`] reads files (a snapshot, an index): those run
    /// side by side on threads of their own; the others, fixed text, run
    /// inline, as a thread costs more to start than they take.
    fn context_reads_files(&self) -> bool {
        false
    }

    /// Run one call (only names this toolset declared are routed here).
    fn call<'a>(&'a self, ctx: &'a Context, call: ToolCall) -> BoxFuture<'a, ToolOutput>;

    /// Build now what this toolset's first call would otherwise build on the
    /// request path (compiled patterns, HTTP clients, parsed tables). Runs once,
    /// on a blocking thread, after the first `tools/list`, and only when one of
    /// the toolset's tools is listed. Must not write anything, open a user's
    /// database, start a process or reach the network.
    fn warm_up(&self, _ctx: &Context) {}

    /// Release resources (child processes, connections) before the server exits.
    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}
