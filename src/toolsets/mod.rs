//! Hermes' toolsets, one module each. [`all`] is the one place that lists them,
//! in Hermes' `EXPOSED_TOOLS` order.

pub mod browser;
pub mod kanban;
pub mod media;
pub mod skills;
pub mod vision;
pub mod web;

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
