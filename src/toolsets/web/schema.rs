//! The `web` toolset's declarations: Hermes' `web_search` and `web_extract`
//! descriptions and schemas, verbatim (tools/web_tools.py), as static data.

use serde_json::{Value, json};

use crate::server::{Hints, ToolDef};

const WEB_SEARCH_DESCRIPTION: &str = "Search the web for information. Returns up to 5 results by default with titles, URLs, and descriptions. The query is passed through to the configured backend, so operators such as site:domain, filetype:pdf, intitle:word, -term, and \"exact phrase\" may work when the backend supports them.";

const WEB_EXTRACT_DESCRIPTION: &str = "Extract content from web page URLs. Returns clean page content in markdown/text (no LLM summarization — fast). Also works with PDF URLs (arxiv papers, documents) — pass the PDF link directly. Pages within the char budget (default 15000) return whole; larger pages return a head+tail window with a footer telling you the full text's saved file path and the read_file call to page through the omitted middle. Inline images appear as [IMAGE: alt] placeholders; real image URLs are kept as links. If a URL fails or times out, use the browser tool instead.";

pub(super) const DEFS: &[ToolDef] = &[
    ToolDef {
        name: "web_search",
        description: WEB_SEARCH_DESCRIPTION,
        schema: web_search_schema,
        hints: Hints::READ_ONLY_OPEN,
    },
    ToolDef {
        name: "web_extract",
        description: WEB_EXTRACT_DESCRIPTION,
        schema: web_extract_schema,
        hints: Hints::READ_ONLY_OPEN,
    },
];

fn web_search_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "The search query to look up on the web. You may include backend-supported operators such as site:example.com, filetype:pdf, intitle:word, -term, or \"exact phrase\"."},
            "limit": {"type": "integer", "description": "Maximum number of results to return. Defaults to 5.", "minimum": 1, "maximum": 100, "default": 5}
        },
        "required": ["query"]
    })
}

fn web_extract_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "urls": {"type": "array", "items": {"type": "string"}, "description": "List of URLs to extract content from (max 5 URLs per call)", "maxItems": 5},
            "char_limit": {"type": "integer", "description": "Optional per-page character budget sent back (default 15000). Pages larger than this are head+tail truncated with the full text stored to disk. Raise it when you need more of a long page inline.", "minimum": 2000}
        },
        "required": ["urls"]
    })
}
