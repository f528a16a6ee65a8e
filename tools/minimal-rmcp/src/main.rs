//! The smallest stdio MCP server rmcp makes: `initialize` and a `tools/list`
//! of one tool (`echo`), on the multi-threaded tokio runtime hermes-mcp uses.
//! `tools/bench_startup.py` measures spawn -> `initialize` against it.

use std::sync::Arc;

use rmcp::ServiceExt;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};

#[derive(Clone)]
struct Minimal;

impl ServerHandler for Minimal {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("minimal-rmcp", "0.1.0"))
            .with_instructions("A minimal rmcp server.".to_string())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, rmcp::ErrorData> {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        });
        let schema = match schema {
            serde_json::Value::Object(m) => m,
            _ => serde_json::Map::new(),
        };
        Ok(ListToolsResult::with_all_items(vec![Tool::new(
            "echo",
            "Returns its text.",
            Arc::new(schema),
        )]))
    }
}

fn main() -> std::process::ExitCode {
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(_) => return std::process::ExitCode::FAILURE,
    };
    rt.block_on(async {
        if let Ok(running) = Minimal.serve(rmcp::transport::stdio()).await {
            let _ = running.waiting().await;
        }
    });
    rt.shutdown_background();
    std::process::ExitCode::SUCCESS
}
