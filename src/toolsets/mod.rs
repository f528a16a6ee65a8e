//! Hermes' toolsets, one module each. [`all`] is the one place that lists them,
//! in Hermes' `EXPOSED_TOOLS` order.

pub mod browser;
pub mod image_gen;
pub mod kanban;
pub mod memory;
pub mod session_search;
pub mod skills;
pub mod tts;
pub mod vision;
pub mod web;

use crate::server::Toolset;

/// Every toolset the server registers.
pub fn all() -> Vec<Box<dyn Toolset>> {
    vec![
        Box::new(web::WebToolset::default()),
        Box::new(browser::BrowserToolset::new()),
        Box::new(vision::VisionToolset::default()),
        Box::new(image_gen::ImageGenToolset::default()),
        Box::new(skills::SkillsToolset),
        Box::new(tts::TtsToolset::default()),
        Box::new(kanban::KanbanToolset::new()),
        Box::new(memory::MemoryToolset),
        Box::new(session_search::SessionSearchToolset::default()),
    ]
}
