//! `agent:` (hermes-agent: agent/image_routing.py): the agent-loop settings
//! the toolsets honour.

use serde_json::{Map, Value};

use super::Reader;

/// `agent:`.
#[derive(Debug, Clone, Default)]
pub struct Agent {
    /// `agent.image_input_mode` (`native` hands images to the main model).
    pub image_input_mode: Option<String>,
}

impl Agent {
    pub(crate) fn read(r: &Reader<'_>, sec: Option<&Map<String, Value>>) -> Self {
        Agent {
            image_input_mode: r.text(sec, "image_input_mode"),
        }
    }
}
