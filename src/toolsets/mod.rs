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

#[cfg(test)]
mod tests {
    use crate::hermes::context::test_ctx;

    /// `resolve_all` (what `tools/list` shows) says for every tool what
    /// `resolve` (what a call checks) says, with and without a browser.
    #[test]
    fn resolving_all_tools_at_once_agrees_with_one_by_one() {
        let cases: [(&str, &[(&str, &str)]); 4] = [
            ("", &[]),
            ("", &[("PATH", "/nonexistent")]),
            ("", &[("CHROME_PATH", "/nonexistent/chrome")]),
            ("browser:\n  cdp_url: http://127.0.0.1:9\n", &[]),
        ];
        for (yaml, env) in cases {
            let ctx = test_ctx(yaml, env);
            for ts in super::all() {
                let one_by_one: Vec<_> = ts
                    .defs()
                    .iter()
                    .map(|d| format!("{:?}", ts.resolve(&ctx, d)))
                    .collect();
                let all: Vec<_> = ts
                    .resolve_all(&ctx)
                    .iter()
                    .map(|e| format!("{e:?}"))
                    .collect();
                assert_eq!(all, one_by_one, "{} with {yaml:?} {env:?}", ts.name());
            }
        }
    }
}
