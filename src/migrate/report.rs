//! What a migration did, as text and as JSON (`--json`). The JSON keeps the
//! field names of Hermes' own `--json` report where they mean the same thing.

use std::collections::BTreeMap;

use serde::Serialize;

#[derive(Debug, Clone, Default, Serialize)]
pub struct ServerReport {
    pub name: String,
    /// `migrated`, `preserved` (the user's own entry outside the block wins) or `skipped`.
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transport: Option<&'static str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped_keys: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct PluginReport {
    /// `discovered`, `skipped` (`--no-plugins`) or `failed`.
    pub discovery: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Written into the block.
    pub migrated: Vec<String>,
    /// Kept from the previous block because discovery did not run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kept_from_previous_block: Vec<String>,
    /// Installed plugins the user's own `[plugins."<id>"]` already configures.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub preserved: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct PermissionsReport {
    /// What was asked for (`None` with `--no-permissions`).
    pub requested: Option<String>,
    /// What the block sets (`None` when not written).
    pub written: Option<String>,
    /// The user's own setting that wins (`default_permissions = ...` / `sandbox_mode = ...`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preserved: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    pub target_path: String,
    pub hermes_home: String,
    pub hermes_config: String,
    pub codex_home: String,
    pub dry_run: bool,
    pub check: bool,
    pub remove: bool,
    /// The file's content differs from what migrate produces (or, after a write, did differ).
    pub changed: bool,
    pub written: bool,
    /// Every server in the block, hermes-tools included.
    pub migrated: Vec<String>,
    pub servers: Vec<ServerReport>,
    pub skipped_keys_per_server: BTreeMap<String, Vec<String>>,
    /// Entries the user defines outside the block, left as they are.
    pub preserved_user_entries: Vec<String>,
    pub preserved_user_servers: Vec<String>,
    pub plugins: PluginReport,
    pub migrated_plugins: Vec<String>,
    pub plugin_query_error: Option<String>,
    pub permissions: PermissionsReport,
    pub wrote_permissions_default: Option<String>,
    /// `[mcp_servers.hermes-tools]` command, when written.
    pub hermes_tools: Option<String>,
    /// Old blocks and orphan end markers that were found and replaced.
    pub replaced_blocks: usize,
    pub removed_orphan_end_markers: usize,
    /// Entries someone (usually Codex) added inside the previous block; kept, now outside it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kept_from_old_block: Vec<String>,
    /// config.toml had no write permission bit and was (or would be) replaced anyway.
    pub replaced_read_only: bool,
    /// Things worth knowing that are not errors (merged blocks, a read-only file replaced).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    pub errors: Vec<String>,
    /// Things the user should know that are not errors (e.g. Hermes' /codex-runtime undid a migration).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The Hermes plugin that re-runs migrate after Hermes' /codex-runtime (one line).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hermes_hook: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
}

impl Report {
    /// The human summary (no trailing newline).
    pub fn text(&self) -> String {
        let mut l: Vec<String> = Vec::new();
        let verb = if self.remove {
            "remove the managed block from"
        } else {
            "write"
        };
        if self.check {
            l.push(if self.changed {
                format!(
                    "{} is out of date: `hermes-mcp migrate` would change it",
                    self.target_path
                )
            } else {
                format!("{} is up to date", self.target_path)
            });
        } else if self.dry_run {
            l.push(if self.changed {
                format!("(dry run) Would {verb} {}", self.target_path)
            } else {
                format!(
                    "(dry run) {} is already up to date; nothing would change",
                    self.target_path
                )
            });
        } else if self.written {
            l.push(if self.remove {
                format!("Removed the managed block from {}", self.target_path)
            } else {
                format!("Wrote {}", self.target_path)
            });
        } else if !self.changed {
            l.push(format!(
                "{} is already up to date; nothing written",
                self.target_path
            ));
        }
        for w in &self.warnings {
            l.push(format!("⚠ {w}"));
        }
        for n in &self.notes {
            l.push(format!("note: {n}"));
        }
        if self.remove {
            if let Some(h) = &self.hermes_hook {
                l.push(h.clone());
            }
            if !self.plugins.kept_from_previous_block.is_empty() {
                l.push(format!(
                    "Kept the block's plugin entries as your own (so they stay installed): {}",
                    self.plugins.kept_from_previous_block.join(", ")
                ));
            }
            for e in &self.errors {
                l.push(format!("⚠ {e}"));
            }
            return l.join("\n");
        }
        let migrated: Vec<&ServerReport> = self
            .servers
            .iter()
            .filter(|s| s.status == "migrated")
            .collect();
        if migrated.is_empty() {
            l.push("No MCP servers migrated.".into());
        } else {
            l.push(format!("Migrated {} MCP server(s):", migrated.len()));
            for s in migrated {
                let note = if s.skipped_keys.is_empty() {
                    String::new()
                } else {
                    format!(" (skipped: {})", s.skipped_keys.join("; "))
                };
                l.push(format!("  - {}{note}", s.name));
            }
        }
        if !self.kept_from_old_block.is_empty() {
            l.push(format!(
                "Moved {} entr{} that were added inside the old managed block out of it (kept as yours):",
                self.kept_from_old_block.len(),
                if self.kept_from_old_block.len() == 1 { "y" } else { "ies" }
            ));
            for k in &self.kept_from_old_block {
                l.push(format!("  - {}", k.lines().next().unwrap_or("")));
            }
        }
        if !self.preserved_user_entries.is_empty() {
            l.push("Kept your own settings outside the managed block:".into());
            for p in &self.preserved_user_entries {
                l.push(format!("  - {p}"));
            }
        }
        match self.plugins.discovery {
            "discovered" => {
                if self.plugins.migrated.is_empty() {
                    l.push("No installed Codex plugins to migrate.".into());
                } else {
                    l.push(format!(
                        "Migrated {} Codex plugin(s):",
                        self.plugins.migrated.len()
                    ));
                    for p in &self.plugins.migrated {
                        l.push(format!("  - {p}"));
                    }
                }
            }
            _ => {
                let why = self.plugins.error.as_deref().unwrap_or("--no-plugins");
                l.push(format!("Codex plugin discovery skipped: {why}"));
                if !self.plugins.kept_from_previous_block.is_empty() {
                    l.push(format!(
                        "Kept {} plugin(s) from the previous block: {}",
                        self.plugins.kept_from_previous_block.len(),
                        self.plugins.kept_from_previous_block.join(", ")
                    ));
                }
            }
        }
        match (&self.permissions.written, &self.permissions.preserved) {
            (Some(w), _) => l.push(format!("Wrote default_permissions = \"{w}\"")),
            (None, Some(p)) => l.push(format!("Kept your own {p}")),
            (None, None) => {}
        }
        if let Some(h) = &self.hermes_hook {
            l.push(h.clone());
        }
        for e in &self.errors {
            l.push(format!("⚠ {e}"));
        }
        l.join("\n")
    }
}
