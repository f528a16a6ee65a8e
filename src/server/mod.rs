//! `hermes-mcp serve`: the stdio MCP server Codex launches as `hermes-tools`.
//!
//! Transport and protocol are rmcp's; this module only routes: `tools/list`
//! asks every toolset for its tools (cheaply), `tools/call` validates the
//! arguments against the tool's schema and hands the call to its toolset.
//! Startup does no slow work, so `initialize` is answered at once.

pub mod args;
mod calllog;
pub mod context;
pub mod framing;
mod idle;
pub(crate) use idle::{give_back_memory, release_relocation_records};
pub mod output;
pub mod progress;
pub mod running;
pub mod toolset;
pub mod untrusted;
mod warmup;

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, InitializeRequestParams,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::hermes::Context;
pub use context::{Composed, ContextOptions};
pub use output::ToolOutput;
pub use progress::Progress;
pub use toolset::{
    Availability, Hints, ProviderChoice, ToolCall, ToolDef, ToolEntry, ToolSpec, Toolset,
};

pub(crate) const INSTRUCTIONS: &str = "Hermes Agent's tools inside Codex: web search and page extraction, a real \
headless browser, image analysis, image generation, text to speech, the user's Hermes skills, the \
Hermes kanban board, Hermes' persistent memory (`memory`: what you save there is in the user's next \
Hermes sessions) and search over the user's past Hermes conversations (`session_search`). Use them \
for what Codex's built-in tools do not cover.";

/// The MCP server: the context plus the registered toolsets.
#[derive(Clone)]
pub struct HermesServer {
    inner: Arc<Inner>,
}

struct Inner {
    ctx: Context,
    toolsets: Vec<Box<dyn Toolset>>,
    /// Tool name -> (index into `toolsets`, declaration), built once in [`HermesServer::new`].
    index: HashMap<&'static str, (usize, &'static ToolDef)>,
    /// Cancelled when the server shuts down; every call's token is a child of it.
    shutdown: CancellationToken,
    /// Set once background start-up work that tool availability depends on
    /// has finished ([`HermesServer::start_warmup`]); `tools/list` and
    /// `tools/call` wait for it, `initialize` does not.
    warmup: std::sync::Mutex<Option<tokio::sync::watch::Receiver<bool>>>,
    /// The first `tools/list` was answered: it is logged
    /// ([`running::log_listed`]) and starts the listed toolsets' warm-up.
    listed: std::sync::atomic::AtomicBool,
    /// The user's switches for Hermes' context in `instructions`.
    context: ContextOptions,
    /// `instructions`, composed once ([`HermesServer::instructions`]).
    instructions: std::sync::OnceLock<Composed>,
    /// When to give freed heap and the binary's pages back ([`idle`]).
    idle: Arc<idle::Idle>,
}

impl HermesServer {
    pub fn new(ctx: Context, toolsets: Vec<Box<dyn Toolset>>) -> Self {
        Self::with_context(ctx, toolsets, ContextOptions::default())
    }

    /// A server whose `instructions` carry Hermes' context as `context` says.
    pub fn with_context(
        ctx: Context,
        toolsets: Vec<Box<dyn Toolset>>,
        context: ContextOptions,
    ) -> Self {
        let mut index = HashMap::new();
        for (i, ts) in toolsets.iter().enumerate() {
            for def in ts.defs() {
                let clash = index.insert(def.name, (i, def));
                debug_assert!(clash.is_none(), "tool {} declared twice", def.name);
            }
        }
        HermesServer {
            inner: Arc::new(Inner {
                ctx,
                toolsets,
                index,
                shutdown: CancellationToken::new(),
                warmup: std::sync::Mutex::new(None),
                listed: std::sync::atomic::AtomicBool::new(false),
                context,
                instructions: std::sync::OnceLock::new(),
                idle: Arc::new(idle::Idle::new(idle::IDLE_TRIM.get())),
            }),
        }
    }

    /// Run `work` in the background (e.g. asking the Nous Portal whether the
    /// tool gateway is included); `initialize` is answered at once, while
    /// `tools/list` and `tools/call` wait until `work` is done or `max_wait`
    /// has passed since it started. `work` itself is never cancelled (it may
    /// be storing a refreshed token). Needs a tokio runtime.
    pub fn start_warmup(
        &self,
        max_wait: std::time::Duration,
        work: impl std::future::Future<Output = ()> + Send + 'static,
    ) {
        let (tx, rx) = tokio::sync::watch::channel(false);
        *self.inner.warmup.lock().unwrap_or_else(|p| p.into_inner()) = Some(rx);
        let done = std::sync::Arc::new(tx);
        let on_time = done.clone();
        tokio::spawn(async move {
            work.await;
            let _ = done.send(true);
        });
        tokio::spawn(async move {
            tokio::time::sleep(max_wait).await;
            let _ = on_time.send(true);
        });
    }

    /// Wait for [`Self::start_warmup`]'s work, if any (a failed or dropped
    /// task counts as done).
    async fn warmed(&self) {
        let rx = self
            .inner
            .warmup
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if let Some(mut rx) = rx {
            let _ = rx.wait_for(|done| *done).await;
        }
    }

    pub(crate) fn context(&self) -> &Context {
        &self.inner.ctx
    }

    /// Every tool of every toolset, available or not, in registration order
    /// (in one [`crate::hermes::pass`]: each sign-in file read once).
    pub fn entries(&self) -> Vec<(&'static str, ToolEntry)> {
        self.of_every_toolset(|ts, ctx| {
            let entries = ts.resolve_all(ctx).into_iter();
            entries.map(|e| self.with_config_error(e)).collect()
        })
    }

    /// What `ask` answers for each toolset, in toolset order and tagged with
    /// its name, all in one [`crate::hermes::pass`].
    fn of_every_toolset<T>(
        &self,
        ask: impl Fn(&dyn Toolset, &Context) -> Vec<T>,
    ) -> Vec<(&'static str, T)> {
        crate::hermes::pass::run(|| {
            let mut out = Vec::new();
            for ts in &self.inner.toolsets {
                let answers = ask(ts.as_ref(), &self.inner.ctx);
                out.extend(answers.into_iter().map(|a| (ts.name(), a)));
            }
            out
        })
    }

    /// A tool's entry; when config.yaml could not be read, an unavailable
    /// tool's reason says so first (its advice, e.g. "add kanban to
    /// `toolsets:`", is judged against Hermes' defaults, not the user's file).
    fn resolve(&self, ts: &dyn Toolset, def: &'static ToolDef) -> ToolEntry {
        self.with_config_error(ts.resolve(&self.inner.ctx, def))
    }

    /// `entry`, its unavailability prefixed with the config error if any (see [`Self::resolve`]).
    fn with_config_error(&self, mut entry: ToolEntry) -> ToolEntry {
        if let (Availability::Unavailable(why), Some(err)) =
            (&entry.availability, self.inner.ctx.config_error())
        {
            entry.availability = Availability::Unavailable(format!(
                "config.yaml could not be used ({err}), so Hermes' defaults apply; fix it first. With the defaults: {why}"
            ));
        }
        entry
    }

    /// The `instructions` of this server: [`INSTRUCTIONS`] and, unless turned
    /// off, Hermes' context for the tools it offers ([`context`]). Composed
    /// on the first call and kept (Hermes' frozen snapshot); `serve` makes
    /// that call when it starts.
    pub fn instructions(&self) -> &Composed {
        self.inner.instructions.get_or_init(|| {
            let opts = self.inner.context;
            if !opts.enabled {
                return Composed {
                    text: INSTRUCTIONS.to_string(),
                    ..Default::default()
                };
            }
            let mut offer = context::Offer {
                soul: opts.soul,
                ..Default::default()
            };
            for (toolset, entry) in self.entries() {
                if entry.availability.is_available() {
                    offer.tools.insert(entry.spec.name);
                    offer.toolsets.insert(toolset);
                }
            }
            let blocks = context_pieces(&self.inner.toolsets, &self.inner.ctx, &offer);
            context::compose(INSTRUCTIONS, blocks)
        })
    }

    /// What [`Self::instructions`] holds, without its text (for `tools
    /// --json` and `doctor`): its size, and Hermes' pieces with theirs.
    pub fn instructions_summary(&self) -> Value {
        let i = self.instructions();
        serde_json::json!({
            "chars": i.chars(),
            "hermes_context": self.inner.context.enabled,
            "soul": self.inner.context.soul,
            "parts": i.parts,
            "skills_index_shortened": i.shrunk,
        })
    }

    /// Every toolset's provider choices, in toolset order (for `tools` and `doctor`).
    pub fn providers(&self) -> Vec<(&'static str, ProviderChoice)> {
        self.of_every_toolset(|ts, ctx| ts.providers(ctx))
    }

    /// The tools `tools/list` shows: the available ones.
    pub(crate) fn listed_tools(&self) -> Vec<Tool> {
        self.entries()
            .into_iter()
            .filter(|(_, e)| e.availability.is_available())
            .map(|(_, e)| to_mcp_tool(&e.spec))
            .collect()
    }

    /// After the first `tools/list`: warm what first calls would build, for
    /// the toolsets with a tool in `tools` ([`warmup`]). Needs a tokio runtime.
    fn start_tool_warmup(&self, tools: &[Tool]) {
        let mut listed: Vec<usize> = tools
            .iter()
            .filter_map(|t| self.inner.index.get(t.name.as_ref()).map(|&(i, _)| i))
            .collect();
        listed.dedup();
        warmup::start(&self.inner, listed);
    }

    /// Run one call as `tools/call` would (also used by tests and benchmarks).
    pub async fn call(
        &self,
        name: &str,
        args: Option<serde_json::Map<String, Value>>,
        cancel: CancellationToken,
        progress: Progress,
    ) -> ToolOutput {
        self.warmed().await;
        let ctx = &self.inner.ctx;
        let Some(&(i, def)) = self.inner.index.get(name) else {
            return ToolOutput::error(format!("Unknown tool: {name}"));
        };
        let ts = &self.inner.toolsets[i];
        let entry = self.resolve(ts.as_ref(), def);
        if let Availability::Unavailable(why) = &entry.availability {
            return ToolOutput::error(format!("{name} is not available: {why}"));
        }
        let args = match args::validate(&entry.spec.input_schema, args) {
            Ok(a) => a,
            Err(e) => return ToolOutput::error(format!("Invalid arguments for {name}: {e}")),
        };
        let call = ToolCall {
            name: def.name,
            args,
            progress,
        };
        // A panic in a toolset must not cost the client its reply (nor the server).
        let run =
            futures::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(ts.call(ctx, call)));
        tokio::select! {
            out = run => out.unwrap_or_else(|panic| {
                let msg = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".into());
                tracing::error!(tool = name, "tool call panicked: {msg}");
                ToolOutput::error(format!(
                    "internal error in {name}: {msg} (a bug in hermes-mcp; please report it)"
                ))
            }),
            _ = cancel.cancelled() => ToolOutput::error(format!("{name} was cancelled")),
        }
    }

    /// Let every toolset release its resources (browser processes, ...).
    pub(crate) async fn shutdown(&self) {
        self.inner.shutdown.cancel();
        for ts in &self.inner.toolsets {
            ts.shutdown().await;
        }
    }
}

pub(crate) fn to_mcp_tool(spec: &ToolSpec) -> Tool {
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
                Implementation::new(crate::hermes::SERVER_NAME, env!("CARGO_PKG_VERSION"))
                    .with_title("Hermes Agent tools"),
            )
            .with_instructions(self.instructions().text.clone())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        self.warmed().await;
        let tools = self.listed_tools();
        // Codex keeps the first list for its whole session: log it, so
        // `tools` and `doctor` can tell what this Codex is missing.
        if !self
            .inner
            .listed
            .swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
            running::log_listed(&names);
            self.start_tool_warmup(&tools);
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        // A client's call, until its reply is built ([`idle`]: the trim after
        // the last finds its buffers freed).
        let _busy = self.inner.idle.call();
        let progress = Progress::new(context.peer.clone(), context.meta.get_progress_token());
        // Cancelled by notifications/cancelled (rmcp cancels context.ct) or by shutdown.
        let cancel = self.inner.shutdown.child_token();
        let guard = cancel.clone();
        let ct = context.ct.clone();
        let watcher = tokio::spawn(async move {
            ct.cancelled().await;
            guard.cancel();
        });
        // The one place a call is logged.
        let started = std::time::Instant::now();
        calllog::arguments(&request.name, request.arguments.as_ref());
        let out = self
            .call(&request.name, request.arguments, cancel, progress)
            .await;
        watcher.abort();
        calllog::finished(&request.name, started.elapsed(), &out);
        // Framed for the model as Hermes frames it (`make_tool_result_message`).
        let out = untrusted::wrap(&request.name, out);
        Ok(out.into_call_result().into())
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        let c = &request.client_info;
        let result = self.negotiate_initialize(&request);
        let agreed = match &result {
            Ok(r) => r.protocol_version.to_string(),
            Err(e) => format!("none ({})", e.message),
        };
        let said = |s: &str| calllog::readable(s, calllog::NAME_CHARS);
        tracing::info!(
            "client {} {}, protocol {} asked, {agreed} agreed",
            said(&c.name),
            said(&c.version),
            said(&request.protocol_version.to_string())
        );
        context.peer.set_peer_info(request);
        result
    }
}

/// Run the stdio server until stdin closes or SIGTERM/SIGINT arrives, then shut
/// the toolsets down (no child process is left behind).
///
/// Before a lifecycle starts (an `initialize` request, or a request carrying
/// the 2026 protocol's inline metadata), rmcp gives up on any message that is
/// not a request; such a message is dropped here and rmcp starts over on the
/// same input. At the end of input or on a signal, every running call is
/// cancelled at once (its future is dropped, and with it its children), rmcp
/// writes the replies it still has, and the toolsets shut down.
pub(crate) async fn serve_stdio(server: HermesServer) -> anyhow::Result<()> {
    log_start(&server);
    log_instructions(&server);
    let guard = framing::Guard::spawn(tokio::io::stdin(), tokio::io::stdout());
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let signal = async move {
        tokio::select! {
            _ = term.recv() => "SIGTERM",
            _ = tokio::signal::ctrl_c() => "SIGINT",
        }
    };
    tokio::pin!(signal);

    // Why we stop, for the log: a signal's name, or how the session ended.
    let mut why = String::from("end of input (stdin closed)");
    let mut signalled = false;
    let running = tokio::select! {
        r = start(&server, &guard) => r,
        s = &mut signal => { why = s.into(); signalled = true; None }
    };
    if let Some(running) = running {
        let stop = running.cancellation_token();
        let waiting = running.waiting();
        tokio::pin!(waiting);
        let mut done = false;
        tokio::select! {
            r = &mut waiting => {
                if !matches!(r, Ok(rmcp::service::QuitReason::Closed)) {
                    why = format!("the session ended ({r:?})");
                }
                done = true;
            }
            _ = guard.eof.cancelled() => {}
            s = &mut signal => { why = s.into(); signalled = true; }
        }
        // Nobody will read the answers of running calls: stop them all now
        // rather than letting rmcp wait for them.
        server.inner.shutdown.cancel();
        if signalled {
            stop.cancel();
        }
        if !done {
            let _ = waiting.await;
        }
    }
    server.shutdown().await;
    // After EOF, write rmcp's last replies; after a signal nobody is listening.
    let drain = if signalled {
        std::time::Duration::ZERO
    } else {
        std::time::Duration::from_secs(2)
    };
    guard.finish(drain).await;
    tracing::info!("shut down: {why}");
    Ok(())
}

/// The log's first line: who we are, and which Hermes home we serve.
fn log_start(server: &HermesServer) {
    let home = &server.inner.ctx.home;
    let config = home.config_path();
    let config = if config.exists() {
        format!("config {}", config.display())
    } else {
        "no config.yaml (Hermes' defaults)".into()
    };
    tracing::info!(
        "hermes-mcp {} serve started (pid {}); Hermes home {}; {config}",
        env!("CARGO_PKG_VERSION"),
        std::process::id(),
        home.path.display(),
    );
}

/// Compose `instructions` now (Hermes' snapshot is taken when `serve`
/// starts, not when the client asks) and log their size.
fn log_instructions(server: &HermesServer) {
    let started = std::time::Instant::now();
    let instructions = server.instructions();
    tracing::info!(
        "instructions: {} characters ({}) composed in {} ms",
        instructions.chars(),
        if instructions.parts.is_empty() {
            "no Hermes context".to_string()
        } else {
            instructions
                .parts
                .iter()
                .map(|p| format!("{} {}", p.part, p.chars))
                .collect::<Vec<_>>()
                .join(", ")
        },
        started.elapsed().as_millis()
    );
}

/// Serve until a lifecycle starts; `None` when the input ends (or stdout
/// closes) first.
async fn start(
    server: &HermesServer,
    guard: &framing::Guard,
) -> Option<rmcp::service::RunningService<RoleServer, HermesServer>> {
    use rmcp::service::ServerInitializeError as E;
    loop {
        match server.clone().serve(guard.transport()).await {
            Ok(running) => return Some(running),
            Err(E::ConnectionClosed(_) | E::TransportError { .. } | E::Cancelled) => return None,
            // A notification or response before the handshake, or a failed
            // initialize (already answered): ignore it and keep serving.
            Err(e) => tracing::debug!("before the handshake: {e}; still serving"),
        }
    }
}

/// Every toolset's pieces of Hermes' context, in toolset order. Those that
/// read files run on threads of their own (the skills index reads every
/// SKILL.md, the memory snapshot builds the threat scan), the last of them on
/// this one with the fixed texts, before any thread is joined: `initialize`
/// waits for the slowest, not for the sum. A piece that panics is left out.
fn context_pieces(
    toolsets: &[Box<dyn Toolset>],
    ctx: &Context,
    offer: &context::Offer,
) -> Vec<context::ContextBlock> {
    let piece = |ts: &dyn Toolset| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| ts.context(ctx, offer)))
            .unwrap_or_default()
    };
    let last_reader = toolsets.iter().rposition(|ts| ts.context_reads_files());
    std::thread::scope(|s| {
        let threads: Vec<_> = toolsets
            .iter()
            .enumerate()
            .map(|(i, ts)| {
                (ts.context_reads_files() && Some(i) != last_reader)
                    .then(|| s.spawn(move || piece(ts.as_ref())))
            })
            .collect();
        let here: Vec<_> = toolsets
            .iter()
            .zip(&threads)
            .map(|(ts, t)| t.is_none().then(|| piece(ts.as_ref())))
            .collect();
        threads
            .into_iter()
            .zip(here)
            .flat_map(|(t, here)| match t {
                Some(t) => t.join().unwrap_or_default(),
                None => here.unwrap_or_default(),
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    //! The routing, cancellation and progress plumbing, in process, with a test
    //! toolset (the real toolsets are tested through the binary in tests/).
    use super::*;
    use crate::hermes::context::test_ctx;
    use serde_json::json;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    struct Slow {
        finished: Arc<AtomicBool>,
        shut_down: Arc<AtomicBool>,
    }

    impl Toolset for Slow {
        fn name(&self) -> &'static str {
            "test"
        }
        fn defs(&self) -> &'static [ToolDef] {
            const DEFS: &[ToolDef] = &[
                ToolDef {
                    name: "slow",
                    description: "counts",
                    schema: || json!({"type":"object","properties":{"steps":{"type":"integer","minimum":1}},"required":["steps"]}),
                    hints: Hints::READ_ONLY,
                },
                ToolDef {
                    name: "missing_dep",
                    description: "needs X",
                    schema: || json!({"type":"object","properties":{}}),
                    hints: Hints::WRITE,
                },
            ];
            DEFS
        }
        fn resolve(&self, _ctx: &Context, def: &'static ToolDef) -> ToolEntry {
            def.entry(if def.name == "missing_dep" {
                Availability::Unavailable("set X_API_KEY".into())
            } else {
                Availability::Available
            })
        }
        fn call<'a>(
            &'a self,
            _ctx: &'a Context,
            call: ToolCall,
        ) -> toolset::BoxFuture<'a, ToolOutput> {
            Box::pin(async move {
                let steps = call.args["steps"].as_u64().unwrap();
                if steps == 13 {
                    panic!("unlucky number");
                }
                for i in 1..=steps {
                    call.progress
                        .report(i, Some(steps), format!("step {i}"))
                        .await;
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                self.finished.store(true, Ordering::SeqCst);
                ToolOutput::json(json!({"steps": steps}))
            })
        }
        fn shutdown(&self) -> toolset::BoxFuture<'_, ()> {
            self.shut_down.store(true, Ordering::SeqCst);
            Box::pin(async {})
        }
    }

    /// A toolset whose only part is its context piece: text in `slot`, or a panic.
    struct Piece {
        reads_files: bool,
        piece: Option<(context::Slot, &'static str)>,
    }

    impl Toolset for Piece {
        fn name(&self) -> &'static str {
            "piece"
        }
        fn defs(&self) -> &'static [ToolDef] {
            &[]
        }
        fn resolve(&self, _ctx: &Context, def: &'static ToolDef) -> ToolEntry {
            def.entry(Availability::Available)
        }
        fn context_reads_files(&self) -> bool {
            self.reads_files
        }
        fn context(&self, _ctx: &Context, _offer: &context::Offer) -> Vec<context::ContextBlock> {
            let (slot, text) = self.piece.expect("a context piece that panics");
            vec![context::ContextBlock::new(slot, text.to_string())]
        }
        fn call<'a>(
            &'a self,
            _ctx: &'a Context,
            _call: ToolCall,
        ) -> toolset::BoxFuture<'a, ToolOutput> {
            Box::pin(async { ToolOutput::error("no tools") })
        }
    }

    /// Pieces composed on threads and on the calling thread all arrive, and
    /// a piece that panics, on either, is left out instead of failing `initialize`.
    #[test]
    fn instructions_have_every_piece_and_survive_one_that_panics() {
        use context::Slot;
        let piece = |reads_files, piece| Box::new(Piece { reads_files, piece }) as Box<dyn Toolset>;
        let ctx = test_ctx("", &[]);
        let server = HermesServer::new(
            ctx,
            vec![
                piece(true, Some((Slot::SkillsIndex, "alpha-skills"))),
                piece(true, None),
                piece(false, None),
                piece(true, Some((Slot::Memory, "beta-memory"))),
                piece(false, Some((Slot::KanbanGuidance, "gamma-kanban"))),
            ],
        );
        let text = &server.instructions().text;
        for piece in ["alpha-skills", "beta-memory", "gamma-kanban"] {
            assert!(text.contains(piece), "{piece} missing from {text}");
        }
    }

    /// A toolset whose tools say which call of the open resolve pass
    /// resolved them (0: no pass).
    struct InPass(&'static [ToolDef]);

    impl Toolset for InPass {
        fn name(&self) -> &'static str {
            "in_pass"
        }
        fn defs(&self) -> &'static [ToolDef] {
            self.0
        }
        fn resolve(&self, _ctx: &Context, def: &'static ToolDef) -> ToolEntry {
            #[derive(Default)]
            struct Seen(u32);
            let n = crate::hermes::pass::with_kept(|s: &mut Seen| {
                s.0 += 1;
                s.0
            });
            def.entry(Availability::Unavailable(n.unwrap_or(0).to_string()))
        }
        fn call<'a>(
            &'a self,
            _ctx: &'a Context,
            _call: ToolCall,
        ) -> toolset::BoxFuture<'a, ToolOutput> {
            Box::pin(async { ToolOutput::error("no tools") })
        }
    }

    /// Every tool of every toolset is resolved in one pass (so the auth
    /// stores are read once for all of them), and the pass ends with it.
    #[test]
    fn entries_resolve_every_tool_in_one_pass() {
        let ctx = test_ctx("", &[]);
        const fn def(name: &'static str) -> ToolDef {
            ToolDef {
                name,
                description: "",
                schema: || json!({"type":"object"}),
                hints: Hints::READ_ONLY,
            }
        }
        const A: &[ToolDef] = &[def("a1"), def("a2")];
        const B: &[ToolDef] = &[def("b1"), def("b2")];
        let server = HermesServer::new(ctx, vec![Box::new(InPass(A)), Box::new(InPass(B))]);
        for _ in 0..2 {
            let seen: Vec<String> = server
                .entries()
                .into_iter()
                .map(|(_, e)| match e.availability {
                    Availability::Unavailable(n) => n,
                    Availability::Available => String::new(),
                })
                .collect();
            assert_eq!(seen, ["1", "2", "3", "4"]);
            assert!(!crate::hermes::pass::is_open());
        }
    }

    struct Harness {
        write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
        lines: tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
        finished: Arc<AtomicBool>,
        shut_down: Arc<AtomicBool>,
        server: HermesServer,
    }

    impl Harness {
        async fn start() -> Self {
            let finished = Arc::new(AtomicBool::new(false));
            let shut_down = Arc::new(AtomicBool::new(false));
            let ctx = test_ctx("", &[]);
            let server = HermesServer::new(
                ctx,
                vec![Box::new(Slow {
                    finished: finished.clone(),
                    shut_down: shut_down.clone(),
                })],
            );
            let (a, b) = tokio::io::duplex(1 << 16);
            let s = server.clone();
            tokio::spawn(async move {
                let running = s.clone().serve(a).await.unwrap();
                let _ = running.waiting().await;
                s.shutdown().await;
            });
            let (r, w) = tokio::io::split(b);
            let mut h = Harness {
                write: w,
                lines: BufReader::new(r).lines(),
                finished,
                shut_down,
                server,
            };
            h.send(json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}})).await;
            h.next().await;
            h.send(json!({"jsonrpc":"2.0","method":"notifications/initialized"}))
                .await;
            h
        }
        async fn send(&mut self, v: Value) {
            self.write
                .write_all(format!("{v}\n").as_bytes())
                .await
                .unwrap();
        }
        async fn next(&mut self) -> Value {
            let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
                .await
                .unwrap()
                .unwrap()
                .unwrap();
            serde_json::from_str(&line).unwrap()
        }
    }

    #[tokio::test]
    async fn lists_only_available_tools_with_annotations() {
        let mut h = Harness::start().await;
        h.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}))
            .await;
        let r = h.next().await;
        let tools = r["result"]["tools"].as_array().unwrap();
        assert_eq!(tools.len(), 1, "{r}");
        assert_eq!(tools[0]["name"], "slow");
        assert_eq!(tools[0]["annotations"]["readOnlyHint"], true);
        assert!(tools[0].get("outputSchema").is_none());
        // The unavailable tool explains itself when called anyway.
        h.send(json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"missing_dep","arguments":{}}})).await;
        let r = h.next().await;
        assert_eq!(r["result"]["isError"], true);
        assert!(
            r["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("set X_API_KEY"),
            "{r}"
        );
        assert!(r["result"].get("structuredContent").is_none());
    }

    #[tokio::test]
    async fn progress_is_sent_for_a_token_and_results_are_json_text() {
        let mut h = Harness::start().await;
        h.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"steps":"3"},"_meta":{"progressToken":"tok"}}})).await;
        let mut progress = vec![];
        let result = loop {
            let m = h.next().await;
            if m["method"] == "notifications/progress" {
                progress.push(m["params"].clone());
            } else {
                break m;
            }
        };
        assert_eq!(progress.len(), 3, "{progress:?}");
        assert_eq!(progress[2]["progressToken"], "tok");
        assert_eq!(progress[2]["progress"], 3.0);
        assert_eq!(progress[2]["total"], 3.0);
        assert_eq!(result["result"]["content"][0]["text"], r#"{"steps":3}"#);
        assert_eq!(result["result"]["isError"], false);
    }

    #[tokio::test]
    async fn cancellation_stops_the_call_and_the_server_keeps_serving() {
        let mut h = Harness::start().await;
        h.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"steps":100}}})).await;
        tokio::time::sleep(Duration::from_millis(120)).await;
        h.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"user"}})).await;
        h.send(json!({"jsonrpc":"2.0","id":2,"method":"ping"}))
            .await;
        let r = h.next().await;
        assert_eq!(
            r["id"], 2,
            "a cancelled request gets no reply; the next one does: {r}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(
            !h.finished.load(Ordering::SeqCst),
            "the cancelled call ran to completion"
        );
    }

    #[tokio::test]
    async fn a_panicking_tool_gets_an_error_result_and_the_server_lives_on() {
        let mut h = Harness::start().await;
        h.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"steps":13}}})).await;
        let r = h.next().await;
        assert_eq!(r["result"]["isError"], true, "{r}");
        assert!(
            r["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("unlucky number"),
            "{r}"
        );
        h.send(json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"steps":1}}})).await;
        let r = h.next().await;
        assert_eq!(r["result"]["isError"], false, "{r}");
    }

    #[tokio::test]
    async fn eof_shuts_toolsets_down() {
        let mut h = Harness::start().await;
        let shut = h.shut_down.clone();
        h.write.shutdown().await.unwrap();
        for _ in 0..100 {
            if shut.load(Ordering::SeqCst) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(shut.load(Ordering::SeqCst));
        assert!(h.server.inner.shutdown.is_cancelled());
    }
}
