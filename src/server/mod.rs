//! `hermes-mcp serve`: the stdio MCP server Codex launches as `hermes-tools`.
//!
//! Transport and protocol are rmcp's; this module only routes: `tools/list`
//! asks every toolset for its tools (cheaply), `tools/call` validates the
//! arguments against the tool's schema and hands the call to its toolset.
//! Startup does no slow work, so `initialize` is answered at once.

pub mod args;
pub mod context;
pub mod output;
pub mod progress;
pub mod toolset;

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use context::ServerContext;
pub use output::ToolOutput;
pub use progress::Progress;
pub use toolset::{Availability, Hints, ToolCall, ToolEntry, ToolSpec, Toolset};

/// The server key in Codex's config and the MCP server name. One constant:
/// Hermes' own session code recognises the server by this name.
pub const SERVER_NAME: &str = "hermes-tools";

pub const INSTRUCTIONS: &str = "Hermes Agent's tools inside Codex: web search and page extraction, a real \
headless browser, image analysis, image generation, text to speech, the user's Hermes skills, and the \
Hermes kanban board. Use them for what Codex's built-in tools do not cover.";

/// The MCP server: the context plus the registered toolsets.
#[derive(Clone)]
pub struct HermesServer {
    inner: Arc<Inner>,
}

struct Inner {
    ctx: ServerContext,
    toolsets: Vec<Box<dyn Toolset>>,
    /// Cancelled when the server shuts down; every call's token is a child of it.
    shutdown: CancellationToken,
}

impl HermesServer {
    pub fn new(ctx: ServerContext, toolsets: Vec<Box<dyn Toolset>>) -> Self {
        HermesServer {
            inner: Arc::new(Inner {
                ctx,
                toolsets,
                shutdown: CancellationToken::new(),
            }),
        }
    }

    pub fn context(&self) -> &ServerContext {
        &self.inner.ctx
    }

    /// Every tool of every toolset, available or not, in registration order.
    pub fn entries(&self) -> Vec<(&'static str, ToolEntry)> {
        self.inner
            .toolsets
            .iter()
            .flat_map(|ts| {
                ts.tools(&self.inner.ctx)
                    .into_iter()
                    .map(move |e| (ts.name(), e))
            })
            .collect()
    }

    /// The tools `tools/list` shows: the available ones.
    pub fn listed_tools(&self) -> Vec<Tool> {
        self.entries()
            .into_iter()
            .filter(|(_, e)| e.availability.is_available())
            .map(|(_, e)| to_mcp_tool(&e.spec))
            .collect()
    }

    /// Run one call as `tools/call` would (also used by tests and benchmarks).
    pub async fn call(
        &self,
        name: &str,
        args: Option<serde_json::Map<String, Value>>,
        cancel: CancellationToken,
        progress: Progress,
    ) -> ToolOutput {
        let ctx = &self.inner.ctx;
        let mut found = None;
        for ts in &self.inner.toolsets {
            if let Some(e) = ts.tools(ctx).into_iter().find(|e| e.spec.name == name) {
                found = Some((ts, e));
                break;
            }
        }
        let Some((ts, entry)) = found else {
            return ToolOutput::error(format!("Unknown tool: {name}"));
        };
        if let Availability::Unavailable(why) = &entry.availability {
            return ToolOutput::error(format!("{name} is not available: {why}"));
        }
        let args = match args::validate(&entry.spec.input_schema, args) {
            Ok(a) => a,
            Err(e) => return ToolOutput::error(format!("Invalid arguments for {name}: {e}")),
        };
        let call = ToolCall {
            name: name.to_string(),
            args,
            cancel: cancel.clone(),
            progress,
        };
        tokio::select! {
            out = ts.call(ctx, call) => out,
            _ = cancel.cancelled() => ToolOutput::error(format!("{name} was cancelled")),
        }
    }

    /// Let every toolset release its resources (browser processes, ...).
    pub async fn shutdown(&self) {
        self.inner.shutdown.cancel();
        for ts in &self.inner.toolsets {
            ts.shutdown().await;
        }
    }
}

pub fn to_mcp_tool(spec: &ToolSpec) -> Tool {
    let schema = match &spec.input_schema {
        Value::Object(m) => m.clone(),
        _ => Default::default(),
    };
    let h = spec.hints;
    Tool::new(spec.name, spec.description.clone(), Arc::new(schema)).with_annotations(
        ToolAnnotations::new()
            .read_only(h.read_only)
            .destructive(h.destructive)
            .idempotent(h.idempotent)
            .open_world(h.open_world),
    )
}

impl ServerHandler for HermesServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION"))
                    .with_title("Hermes Agent tools"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.listed_tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let progress = Progress::new(context.peer.clone(), context.meta.get_progress_token());
        // Cancelled by notifications/cancelled (rmcp cancels context.ct) or by shutdown.
        let cancel = self.inner.shutdown.child_token();
        let guard = cancel.clone();
        let ct = context.ct.clone();
        let watcher = tokio::spawn(async move {
            ct.cancelled().await;
            guard.cancel();
        });
        tracing::debug!(tool = %request.name, "tools/call");
        let out = self
            .call(&request.name, request.arguments, cancel, progress)
            .await;
        watcher.abort();
        Ok(out.into_call_result().into())
    }
}

/// Run the stdio server until stdin closes or SIGTERM/SIGINT arrives, then shut
/// the toolsets down (no child process is left behind).
pub async fn serve_stdio(server: HermesServer) -> anyhow::Result<()> {
    let running = server.clone().serve(rmcp::transport::stdio()).await?;
    let stop = running.cancellation_token();
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        r = running.waiting() => { tracing::debug!("service ended: {r:?}"); }
        _ = term.recv() => { tracing::debug!("SIGTERM"); stop.cancel(); }
        _ = tokio::signal::ctrl_c() => { tracing::debug!("SIGINT"); stop.cancel(); }
    }
    server.shutdown().await;
    Ok(())
}
