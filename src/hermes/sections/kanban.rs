//! `kanban:` (hermes-agent: tools/kanban_tools.py): whether creating a task
//! subscribes the creator's chat to it.

use serde_json::{Map, Value};

/// `kanban:`.
#[derive(Debug, Clone)]
pub struct Kanban {
    /// `kanban.auto_subscribe_on_create` as `cfg_get(cfg, "kanban",
    /// "auto_subscribe_on_create", default=True)` gives it: Python's `bool()`
    /// of a present value (`null` too), on when absent.
    pub auto_subscribe_on_create: bool,
}

impl Default for Kanban {
    fn default() -> Self {
        Kanban {
            auto_subscribe_on_create: true,
        }
    }
}

impl Kanban {
    pub(crate) fn read(sec: Option<&Map<String, Value>>) -> Self {
        Kanban {
            auto_subscribe_on_create: sec
                .and_then(|s| s.get("auto_subscribe_on_create"))
                .is_none_or(crate::pycompat::py_bool),
        }
    }
}
