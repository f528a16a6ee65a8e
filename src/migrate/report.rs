//! What a migration did, as text and as JSON (`--json`). The JSON keeps the
//! field names of Hermes' own `--json` report where they mean the same thing.

use std::collections::BTreeMap;

use serde::Serialize;

#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct ServerReport {
    pub(crate) name: String,
    /// `migrated`, `preserved` (the user's own entry outside the block wins) or `skipped`.
    pub(crate) status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) transport: Option<&'static str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) skipped_keys: Vec<String>,
    /// What the user must do for the server to work as under Hermes (migrated servers only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) actions: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) reason: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct PluginReport {
    /// `discovered`, `skipped` (`--no-plugins`) or `failed`.
    pub(crate) discovery: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
    /// Written into the block.
    pub(crate) migrated: Vec<String>,
    /// Kept from the previous block because discovery did not run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) kept_from_previous_block: Vec<String>,
    /// In the previous block, but no longer installed: their entries leave the block.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) removed: Vec<String>,
    /// Installed plugins the user's own `[plugins."<id>"]` already configures.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) preserved: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct PermissionsReport {
    /// What was asked for (`None` with `--no-permissions`).
    pub(crate) requested: Option<String>,
    /// What the block sets (`None` when not written).
    pub(crate) written: Option<String>,
    /// The user's own setting that wins (`default_permissions = ...` / `sandbox_mode = ...`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) preserved: Option<String>,
}

/// hermes-tools' `env_vars`: only what this setup needs (see `passthrough`).
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct EnvVarsReport {
    pub(crate) names: Vec<String>,
    /// Set in the shell migrate ran in (and not the same in `$HERMES_HOME/.env`).
    pub(crate) set_now: Vec<String>,
    /// Kanban worker variables are listed because this home uses kanban.
    pub(crate) kanban: bool,
    /// HERMES_HOME is listed because the Hermes root has profiles.
    pub(crate) profiles: bool,
    /// HERMES_SESSION_ID is listed because Hermes runs codex.
    pub(crate) hermes_session: bool,
}

impl From<&super::passthrough::PassThrough> for EnvVarsReport {
    fn from(p: &super::passthrough::PassThrough) -> Self {
        EnvVarsReport {
            names: p.names.clone(),
            set_now: p.set_now.clone(),
            kanban: p.kanban,
            profiles: p.profiles,
            hermes_session: p.hermes_runs_codex,
        }
    }
}

impl EnvVarsReport {
    /// One line for the text report.
    fn line(&self) -> String {
        let mut why = Vec::new();
        if !self.set_now.is_empty() {
            why.push(format!("set in this shell: {}", self.set_now.join(", ")));
        }
        if self.kanban {
            why.push("kanban workers' variables".to_string());
        }
        if self.profiles {
            why.push("HERMES_HOME for profiles".to_string());
        }
        if self.hermes_session {
            why.push("HERMES_SESSION_ID from Hermes, which runs codex".to_string());
        }
        let what = if why.is_empty() {
            "hermes-tools gets no variables from codex's environment beyond codex's defaults"
                .to_string()
        } else {
            format!(
                "hermes-tools gets from codex's environment: {}",
                why.join("; ")
            )
        };
        format!(
            "{what}. API keys in $HERMES_HOME/.env are read there; a key you export in the shell instead needs `hermes-mcp migrate` again"
        )
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Report {
    pub(crate) target_path: String,
    pub(crate) hermes_home: String,
    pub(crate) hermes_config: String,
    pub(crate) codex_home: String,
    pub(crate) dry_run: bool,
    pub(crate) check: bool,
    pub(crate) remove: bool,
    /// Migrate would change something (or, after a write, did): config.toml,
    /// or in a preview also the Hermes plugin.
    pub(crate) changed: bool,
    /// config.toml's content differs from what migrate produces (or, after a
    /// write, did differ); the Hermes plugin checks this field.
    pub(crate) config_toml_changed: bool,
    pub(crate) written: bool,
    /// Every server in the block, hermes-tools included.
    pub(crate) migrated: Vec<String>,
    pub(crate) servers: Vec<ServerReport>,
    pub(crate) skipped_keys_per_server: BTreeMap<String, Vec<String>>,
    /// Entries the user defines outside the block, left as they are.
    pub(crate) preserved_user_entries: Vec<String>,
    pub(crate) preserved_user_servers: Vec<String>,
    pub(crate) plugins: PluginReport,
    pub(crate) migrated_plugins: Vec<String>,
    pub(crate) plugin_query_error: Option<String>,
    pub(crate) permissions: PermissionsReport,
    pub(crate) wrote_permissions_default: Option<String>,
    /// `[mcp_servers.hermes-tools]` command, when written.
    pub(crate) hermes_tools: Option<String>,
    /// What hermes-tools' `env_vars` lists, and why (when hermes-tools is written).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) hermes_tools_env_vars: Option<EnvVarsReport>,
    /// Old blocks and orphan end markers that were found and replaced.
    pub(crate) replaced_blocks: usize,
    pub(crate) removed_orphan_end_markers: usize,
    /// Entries someone (usually Codex) added inside the previous block; kept, now outside it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) kept_from_old_block: Vec<String>,
    /// Why config.toml is out of date (`--dry-run` / `--check` when it would change).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) stale: Vec<String>,
    /// config.toml had no write permission bit and was (or would be) replaced anyway.
    pub(crate) replaced_read_only: bool,
    /// Things worth knowing that are not errors (merged blocks, a read-only file replaced).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) notes: Vec<String>,
    pub(crate) errors: Vec<String>,
    /// Things the user should know that are not errors (e.g. Hermes' /codex-runtime undid a migration).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) warnings: Vec<String>,
    /// The Hermes plugin that re-runs migrate after Hermes' /codex-runtime (one line).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) hermes_hook: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) diff: Option<String>,
}

impl Report {
    /// "Migrated" only when the file was written; a preview or an up-to-date
    /// run never claims to have written anything.
    fn verb(&self) -> &'static str {
        if self.written {
            "Migrated"
        } else if self.config_toml_changed {
            "Would migrate"
        } else {
            "Up to date:"
        }
    }

    /// The human summary (no trailing newline); `quiet` (`-q`) keeps only what needs the user: the
    /// problems (`⚠` lines) and what to do (the "To do:" list), not the
    /// narrative of what was written.
    pub(crate) fn text(&self, quiet: bool) -> String {
        let warnings = self.warnings.iter().map(|w| format!("⚠ {w}"));
        let errors = self.errors.iter().map(|e| format!("⚠ {e}"));
        if quiet {
            let l: Vec<String> = warnings.chain(self.action_lines()).chain(errors).collect();
            return l.join("\n");
        }
        let mut l: Vec<String> = Vec::new();
        if let Some(h) = self.headline() {
            l.push(h);
        }
        l.extend(warnings);
        for n in &self.notes {
            l.push(format!("note: {n}"));
        }
        if self.remove {
            self.removal_lines(&mut l);
        } else {
            self.server_lines(&mut l);
            self.kept_lines(&mut l);
            self.plugin_lines(&mut l);
            if let Some(e) = &self.hermes_tools_env_vars {
                l.push(e.line());
            }
            l.extend(self.permissions_line());
            if let Some(h) = &self.hermes_hook {
                l.push(h.clone());
            }
        }
        l.extend(self.action_lines());
        l.extend(errors);
        l.join("\n")
    }

    /// "To do:" and what the user must do for the migrated servers to work
    /// as under Hermes (export a variable, log in); none when nothing.
    fn action_lines(&self) -> Vec<String> {
        let mut l = Vec::new();
        for s in self.servers.iter().filter(|s| s.status == "migrated") {
            for a in &s.actions {
                l.push(if a.contains(&s.name) {
                    format!("  - {a}")
                } else {
                    format!("  - {a} (for {})", s.name)
                });
            }
        }
        if !l.is_empty() {
            l.insert(0, "To do:".into());
        }
        l
    }

    /// What happened to the file, in the run's mode (none for a plain run
    /// that would change it but did not write).
    fn headline(&self) -> Option<String> {
        let verb = if self.remove {
            "remove the managed block from"
        } else {
            "write"
        };
        let t = &self.target_path;
        if self.check {
            Some(if self.changed {
                self.check_line()
            } else {
                format!("{t} is up to date")
            })
        } else if self.dry_run {
            Some(if self.changed && !self.config_toml_changed {
                format!("(dry run) {t} is already up to date; the Hermes plugin would change")
            } else if self.changed {
                format!("(dry run) Would {verb} {t}")
            } else {
                format!("(dry run) {t} is already up to date; nothing would change")
            })
        } else if self.written {
            Some(if self.remove {
                format!("Removed the managed block from {t}")
            } else {
                format!("Wrote {t}")
            })
        } else if !self.changed {
            Some(format!("{t} is already up to date; nothing written"))
        } else {
            None
        }
    }

    /// `--check`'s one line when config.toml is out of date: what is stale and
    /// the command that fixes it.
    pub(crate) fn check_line(&self) -> String {
        let command = if self.remove {
            "hermes-mcp migrate --remove"
        } else {
            "hermes-mcp migrate"
        };
        if !self.config_toml_changed {
            return format!(
                "{} is up to date, the Hermes plugin is not: run `{command}`",
                self.target_path
            );
        }
        let why = if self.stale.is_empty() {
            String::new()
        } else {
            format!(": {}", self.stale.join("; "))
        };
        format!("{} is out of date{why}; run `{command}`", self.target_path)
    }

    /// `--remove`: the Hermes plugin, and plugin entries kept as the user's.
    fn removal_lines(&self, l: &mut Vec<String>) {
        if let Some(h) = &self.hermes_hook {
            l.push(h.clone());
        }
        if !self.plugins.kept_from_previous_block.is_empty() {
            l.push(format!(
                "Kept the block's plugin entries as your own (so they stay installed): {}",
                self.plugins.kept_from_previous_block.join(", ")
            ));
        }
    }

    /// The servers written, each with the keys not carried over as written.
    fn server_lines(&self, l: &mut Vec<String>) {
        let migrated: Vec<&ServerReport> = self
            .servers
            .iter()
            .filter(|s| s.status == "migrated")
            .collect();
        if migrated.is_empty() {
            l.push("No MCP servers migrated.".into());
            return;
        }
        l.push(format!(
            "{} {} MCP server{}:",
            self.verb(),
            migrated.len(),
            if migrated.len() == 1 { "" } else { "s" }
        ));
        // Each key not carried over as written on its own line, under its server.
        for s in migrated {
            if s.skipped_keys.is_empty() {
                l.push(format!("  - {}", s.name));
            } else {
                l.push(format!("  - {}:", s.name));
                l.extend(s.skipped_keys.iter().map(|k| format!("      {k}")));
            }
        }
    }

    /// Entries moved out of the old block, and the user's own settings kept.
    fn kept_lines(&self, l: &mut Vec<String>) {
        if !self.kept_from_old_block.is_empty() {
            let n = self.kept_from_old_block.len();
            l.push(format!(
                "Moved {n} {} added inside the old managed block out of it (kept as yours):",
                if n == 1 {
                    "entry that was"
                } else {
                    "entries that were"
                }
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
    }

    /// Plugins written or removed, or why discovery was skipped.
    fn plugin_lines(&self, l: &mut Vec<String>) {
        let pl = &self.plugins;
        if pl.discovery != "discovered" {
            let why = pl.error.as_deref().unwrap_or("--no-plugins");
            l.push(format!("Codex plugin discovery skipped: {why}"));
            if !pl.kept_from_previous_block.is_empty() {
                l.push(format!(
                    "Kept {} plugin(s) from the previous block: {}",
                    pl.kept_from_previous_block.len(),
                    pl.kept_from_previous_block.join(", ")
                ));
            }
            return;
        }
        if pl.migrated.is_empty() {
            l.push("No installed Codex plugins to migrate.".into());
        } else {
            l.push(format!(
                "{} {} Codex plugin(s):",
                self.verb(),
                pl.migrated.len()
            ));
            for p in &pl.migrated {
                l.push(format!("  - {p}"));
            }
        }
        if !pl.removed.is_empty() {
            let verb = if self.written {
                "Removed"
            } else {
                "Would remove"
            };
            l.push(format!(
                "{verb} {} plugin entr{} no longer installed in codex: {}",
                pl.removed.len(),
                if pl.removed.len() == 1 { "y" } else { "ies" },
                pl.removed.join(", ")
            ));
        }
    }

    /// `default_permissions` written (or would be, or unchanged), or the user's own kept.
    fn permissions_line(&self) -> Option<String> {
        match (&self.permissions.written, &self.permissions.preserved) {
            (Some(w), _) => Some(if self.written {
                format!("Wrote default_permissions = \"{w}\"")
            } else if self.config_toml_changed {
                format!("Would write default_permissions = \"{w}\"")
            } else {
                format!("default_permissions = \"{w}\" (unchanged)")
            }),
            (None, Some(p)) => Some(format!("Kept your own {p}")),
            (None, None) => None,
        }
    }
}
