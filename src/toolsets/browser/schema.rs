//! Hermes' browser tool schemas, copied verbatim from `tools/browser_tool.py`
//! (`BROWSER_TOOL_SCHEMAS`, hermes-agent 0.19.0).

use serde_json::{Value, json};

use crate::server::{Hints, ToolDef};

pub(crate) const DEFS: &[ToolDef] = &[
    ToolDef {
        name: "browser_navigate",
        description: "Navigate to a URL in the browser. Initializes the session and loads the page. Must be called before other browser tools. For simple information retrieval, prefer web_search or web_extract (faster, cheaper). For plain-text endpoints — URLs ending in .md, .txt, .json, .yaml, .yml, .csv, .xml, raw.githubusercontent.com, or any documented API endpoint — prefer curl via the terminal tool or web_extract; the browser stack is overkill and much slower for these. Use browser tools when you need to interact with a page (click, fill forms, dynamic content). Returns a compact page snapshot with interactive elements and ref IDs — no need to call browser_snapshot separately after navigating.",
        schema: browser_navigate_params,
        hints: Hints::WRITE_OPEN,
    },
    ToolDef {
        name: "browser_snapshot",
        description: "Get a text-based snapshot of the current page's accessibility tree. Returns interactive elements with ref IDs (like @e1, @e2) for browser_click and browser_type. full=false (default): compact view with interactive elements. full=true: complete page content. Snapshots over 15000 chars are truncated or LLM-summarized; when that happens the complete snapshot is saved to a file and the output includes its path so you can page through the rest with read_file. Requires browser_navigate first. Note: browser_navigate already returns a compact snapshot — use this to refresh after interactions that change the page, or with full=true for complete content.",
        schema: browser_snapshot_params,
        hints: Hints::READ_ONLY_OPEN,
    },
    ToolDef {
        name: "browser_click",
        description: "Click on an element identified by its ref ID from the snapshot (e.g., '@e5'). The ref IDs are shown in square brackets in the snapshot output. Requires browser_navigate and browser_snapshot to be called first.",
        schema: browser_click_params,
        hints: Hints::WRITE_OPEN,
    },
    ToolDef {
        name: "browser_type",
        description: "Type text into an input field identified by its ref ID. Clears the field first, then types the new text. Requires browser_navigate and browser_snapshot to be called first.",
        schema: browser_type_params,
        hints: Hints::WRITE_OPEN,
    },
    ToolDef {
        name: "browser_scroll",
        description: "Scroll the page in a direction. Use this to reveal more content that may be below or above the current viewport. Requires browser_navigate to be called first.",
        schema: browser_scroll_params,
        hints: Hints::WRITE_OPEN,
    },
    ToolDef {
        name: "browser_back",
        description: "Navigate back to the previous page in browser history. Requires browser_navigate to be called first.",
        schema: browser_back_params,
        hints: Hints::WRITE_OPEN,
    },
    ToolDef {
        name: "browser_press",
        description: "Press a keyboard key. Useful for submitting forms (Enter), navigating (Tab), or keyboard shortcuts. Requires browser_navigate to be called first.",
        schema: browser_press_params,
        hints: Hints::WRITE_OPEN,
    },
    ToolDef {
        name: "browser_get_images",
        description: "Get a list of all images on the current page with their URLs and alt text. Useful for finding images to analyze with the vision tool. Requires browser_navigate to be called first.",
        schema: browser_get_images_params,
        hints: Hints::READ_ONLY_OPEN,
    },
    ToolDef {
        name: "browser_vision",
        description: "Take a screenshot of the current page so you can inspect it visually. Use this when you need to understand what the page looks like - especially for CAPTCHAs, visual verification challenges, complex layouts, or cases where the text snapshot misses important visual information. When your active model has native vision, the screenshot is attached to your context directly and you inspect it on the next turn; otherwise Hermes falls back to an auxiliary vision model and returns a text analysis. Includes a screenshot_path that you can share with the user by including MEDIA:<screenshot_path> in your response. Requires browser_navigate to be called first.",
        schema: browser_vision_params,
        hints: Hints::READ_ONLY_OPEN,
    },
    ToolDef {
        name: "browser_console",
        description: "Get browser console output and JavaScript errors from the current page. Returns console.log/warn/error/info messages and uncaught JS exceptions. Use this to detect silent JavaScript errors, failed API calls, and application warnings. Requires browser_navigate to be called first. When 'expression' is provided, evaluates JavaScript in the page context and returns the result — use this for DOM inspection, reading page state, or extracting data programmatically.",
        schema: browser_console_params,
        hints: Hints::WRITE_OPEN,
    },
];

fn browser_navigate_params() -> Value {
    json!({
        "type": "object",
        "properties": {
            "url": {
                "type": "string",
                "description": "The URL to navigate to (e.g., 'https://example.com')"
            }
        },
        "required": [
            "url"
        ]
    })
}

fn browser_snapshot_params() -> Value {
    json!({
        "type": "object",
        "properties": {
            "full": {
                "type": "boolean",
                "description": "If true, returns complete page content. If false (default), returns compact view with interactive elements only.",
                "default": false
            },
            "task": {
                "type": "string",
                "description": "Optional: what you are trying to do on this page. When the snapshot is over 15000 chars and an auxiliary model is configured (auxiliary.web_extract), it is summarized with this task in mind."
            }
        },
        "required": []
    })
}

fn browser_click_params() -> Value {
    json!({
        "type": "object",
        "properties": {
            "ref": {
                "type": "string",
                "description": "The element reference from the snapshot (e.g., '@e5', '@e12')"
            }
        },
        "required": [
            "ref"
        ]
    })
}

fn browser_type_params() -> Value {
    json!({
        "type": "object",
        "properties": {
            "ref": {
                "type": "string",
                "description": "The element reference from the snapshot (e.g., '@e3')"
            },
            "text": {
                "type": "string",
                "description": "The text to type into the field"
            }
        },
        "required": [
            "ref",
            "text"
        ]
    })
}

fn browser_scroll_params() -> Value {
    json!({
        "type": "object",
        "properties": {
            "direction": {
                "type": "string",
                "enum": [
                    "up",
                    "down"
                ],
                "description": "Direction to scroll"
            }
        },
        "required": [
            "direction"
        ]
    })
}

fn browser_back_params() -> Value {
    json!({
        "type": "object",
        "properties": {},
        "required": []
    })
}

fn browser_press_params() -> Value {
    json!({
        "type": "object",
        "properties": {
            "key": {
                "type": "string",
                "description": "Key to press (e.g., 'Enter', 'Tab', 'Escape', 'ArrowDown')"
            }
        },
        "required": [
            "key"
        ]
    })
}

fn browser_get_images_params() -> Value {
    json!({
        "type": "object",
        "properties": {},
        "required": []
    })
}

fn browser_vision_params() -> Value {
    json!({
        "type": "object",
        "properties": {
            "question": {
                "type": "string",
                "description": "What you want to know about the page visually. Be specific about what you're looking for."
            },
            "annotate": {
                "type": "boolean",
                "default": false,
                "description": "If true, overlay numbered [N] labels on interactive elements. Each [N] maps to ref @eN for subsequent browser commands. Useful for QA and spatial reasoning about page layout."
            }
        },
        "required": [
            "question"
        ]
    })
}

fn browser_console_params() -> Value {
    json!({
        "type": "object",
        "properties": {
            "clear": {
                "type": "boolean",
                "default": false,
                "description": "If true, clear the message buffers after reading"
            },
            "expression": {
                "type": "string",
                "description": "JavaScript expression to evaluate in the page context. Runs in the browser like DevTools console — full access to DOM, window, document. Return values are serialized to JSON. Example: 'document.title' or 'document.querySelectorAll(\"a\").length'"
            }
        },
        "required": []
    })
}
