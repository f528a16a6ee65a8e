//! Hermes' toolsets, one module each. [`all`] is the one place that lists them,
//! in Hermes' `EXPOSED_TOOLS` order.

pub mod browser;
pub mod kanban;
pub mod media;
pub mod skills;
pub mod vision;
pub mod web;

// New media modules declared here while src/toolsets/media/ is being split into folders
// elsewhere; move these into media/mod.rs (as `pub mod edge_tts; pub mod codex_auth;`)
// once that lands.
#[path = "media/codex_auth.rs"]
pub mod codex_auth;
#[path = "media/edge_tts.rs"]
pub mod edge_tts;

use crate::server::Toolset;

/// Every toolset the server registers.
pub fn all() -> Vec<Box<dyn Toolset>> {
    vec![
        Box::new(web::WebToolset::default()),
        Box::new(browser::BrowserToolset::new()),
        Box::new(vision::VisionToolset::default()),
        Box::new(media::ImageGenToolset::default()),
        Box::new(skills::SkillsToolset),
        Box::new(media::TtsToolset::default()),
        Box::new(kanban::KanbanToolset::new()),
    ]
}
