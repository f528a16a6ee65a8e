//! The new `config.toml` text of one run: the block's content (Hermes'
//! servers, hermes-tools, the installed plugins, the permission profile)
//! worked out against the user's part of the file, spliced in and proved; or,
//! for `--remove`, the user's part alone. Fills the report as it goes.

use super::block::{self, BlockContent};
use super::report::{self, Report, ServerReport};
use super::translate::{CodexServer, TomlVal, Translation};
use super::{BUILTIN_PERMISSIONS, Discovery, Options, Plan, check_existing, plugins, user_error};
use crate::hermes::SERVER_NAME;

/// Compute the new file text for `old` (None: no file) and fill the report.
pub(super) fn compute(
    args: &Options,
    p: &Plan,
    old: Option<&str>,
    discovery: &Discovery,
    report: &mut Report,
) -> anyhow::Result<String> {
    let old_text = old.unwrap_or("");
    if old.is_some() {
        check_existing(&p.real, old_text)?;
    }
    let parsed = block::take_apart(old_text);
    report_old_blocks(p, &parsed, report);
    if args.remove {
        return remove_block(p, &parsed, old_text, report);
    }
    let user = UserFile::parse(p, &parsed)?;
    let mut content = BlockContent::default();
    add_servers(p, &user, report, &mut content)?;
    add_hermes_tools(p, &user, report, &mut content)?;
    content.servers.sort_by(|a, b| a.0.cmp(&b.0));
    if !content.servers.is_empty() && !user.extensible("mcp_servers") {
        return Err(user_error(
            format!(
                "{} sets `mcp_servers` as a single value (`mcp_servers = {{ ... }}`), which cannot be extended with [mcp_servers.NAME] tables",
                p.real.display()
            ),
            "rewrite it as one [mcp_servers.NAME] table per server, then run migrate again (nothing was written)",
        ));
    }
    add_plugins(discovery, &parsed, &user, report, &mut content);
    if !content.plugins.is_empty() && !user.extensible("plugins") {
        return Err(user_error(
            format!(
                "{} sets `plugins` as a single value, which cannot be extended with [plugins.\"ID\"] tables",
                p.real.display()
            ),
            "rewrite it as [plugins.\"ID\"] tables or pass --no-plugins (nothing was written)",
        ));
    }
    add_permissions(p, &user, report, &mut content)?;
    report.migrated = content.servers.iter().map(|(n, _)| n.clone()).collect();
    splice(p, &parsed, &content)
}

/// What the old file held besides the user's text: blocks, orphan end
/// markers, entries someone added inside the block.
fn report_old_blocks(p: &Plan, parsed: &block::Parsed, report: &mut Report) {
    if parsed.blocks > 1 {
        report.notes.push(format!(
            "found {} managed blocks in {}; merged them into one",
            parsed.blocks,
            p.real.display()
        ));
    }
    report.replaced_blocks = parsed.blocks;
    report.removed_orphan_end_markers = parsed.orphan_ends;
    report.kept_from_old_block = parsed.kept_from_block.clone();
}

/// `--remove`: the user's text alone, with the block's plugin entries kept
/// outside it (Codex counts a plugin as installed only with one).
fn remove_block(
    p: &Plan,
    parsed: &block::Parsed,
    old_text: &str,
    report: &mut Report,
) -> anyhow::Result<String> {
    if parsed.blocks + parsed.orphan_ends == 0 {
        return Ok(old_text.to_string());
    }
    let mut new = block::removed(parsed);
    let user = block::parse_toml(&new).map_err(|e| {
        user_error(
            format!("removing the managed block would leave invalid TOML: {e}"),
            format!("nothing was written; edit {} by hand", p.real.display()),
        )
    })?;
    refuse_servers_without_transport(p, &new, true)?;
    let user_plugins = user.get("plugins");
    let plugins_is_table = user_plugins.is_none_or(toml::Value::is_table);
    let kept: Vec<plugins::Plugin> = previous_plugins(&parsed.old_block)
        .into_iter()
        .filter(|pl| {
            !user_plugins
                .and_then(toml::Value::as_table)
                .is_some_and(|t| t.contains_key(&pl.id))
        })
        .collect();
    if kept.is_empty() || !plugins_is_table {
        return Ok(new);
    }
    let nl = if parsed.framing.crlf { "\r\n" } else { "\n" };
    if !new.is_empty() {
        if !new.ends_with('\n') {
            new.push_str(nl);
        }
        new.push_str(nl);
    }
    for (i, pl) in kept.iter().enumerate() {
        if i > 0 {
            new.push_str(nl);
        }
        new.push_str(&format!(
            "[plugins.{}]{nl}enabled = {}{nl}",
            block::key(&pl.id),
            pl.enabled
        ));
        report.plugins.kept_from_previous_block.push(pl.id.clone());
    }
    block::parse_toml(&new).map_err(|e| {
        user_error(
            format!("keeping the block's plugins outside it would leave invalid TOML: {e}"),
            format!("nothing was written; edit {} by hand", p.real.display()),
        )
    })?;
    Ok(new)
}

/// The user's part of config.toml (everything outside the managed block),
/// as data and as a document.
struct UserFile {
    table: toml::Table,
    doc: toml_edit::DocumentMut,
}

impl UserFile {
    fn parse(p: &Plan, parsed: &block::Parsed) -> anyhow::Result<UserFile> {
        let table = block::parse_toml(&parsed.user).map_err(|e| {
            user_error(
                format!(
                    "{} without its managed block is not valid TOML: {e}",
                    p.real.display()
                ),
                "a marker line may have been moved or deleted; fix the file by hand (nothing was written)",
            )
        })?;
        let doc = parsed
            .user
            .parse()
            .map_err(|e| anyhow::anyhow!("config.toml does not parse: {e}"))?;
        Ok(UserFile { table, doc })
    }

    /// The user defines `[parent.k]` (or `parent.k = ...`) themselves.
    fn has(&self, parent: &str, k: &str) -> bool {
        self.table
            .get(parent)
            .and_then(toml::Value::as_table)
            .is_some_and(|t| t.contains_key(k))
    }

    /// What the user's part of the file says about server `name`.
    fn claim(&self, name: &str) -> Claim {
        let Some(t) = self
            .table
            .get("mcp_servers")
            .and_then(toml::Value::as_table)
            .and_then(|s| s.get(name))
        else {
            return Claim::Free;
        };
        let Some(t) = t.as_table() else {
            return Claim::Broken(format!("`mcp_servers.{}` is not a table", block::key(name)));
        };
        if t.contains_key("command") || t.contains_key("url") {
            return Claim::Defined;
        }
        // Only sub-tables (`[mcp_servers.NAME.tools.TOOL]`), none of them
        // written as the server's own table or as dotted keys: settings on
        // the server the block defines.
        let item = self
            .doc
            .get("mcp_servers")
            .and_then(|s| s.as_table_like())
            .and_then(|s| s.get(name));
        let settings_only = item.and_then(toml_edit::Item::as_table).is_some_and(|t| {
            t.is_implicit() && !t.is_dotted() && t.iter().all(|(_, v)| v.is_table())
        });
        if settings_only {
            Claim::Settings(t.clone())
        } else {
            Claim::Broken(format!(
                "[mcp_servers.{}] has neither `command` nor `url`",
                block::key(name)
            ))
        }
    }

    /// `[parent.NAME]` tables can be added: `parent` is absent or a table
    /// (not `parent = { ... }`).
    fn extensible(&self, parent: &str) -> bool {
        self.doc.get(parent).is_none_or(toml_edit::Item::is_table)
    }
}

/// What the user's part of config.toml holds for one server name.
enum Claim {
    /// Nothing.
    Free,
    /// The server itself (a `command` or a `url`): theirs wins.
    Defined,
    /// Only tables below it (a tool's `approval_mode`, ...): settings on the
    /// server the block defines, kept where they are.
    Settings(toml::Table),
    /// Keys codex cannot load as a server, and the block cannot complete.
    Broken(String),
}

/// `server` without what the user's `settings` set themselves (their tool
/// tables, a table of theirs for `env` or headers); the entries of theirs
/// kept are reported.
fn under_user_settings(
    name: &str,
    server: &CodexServer,
    settings: &toml::Table,
    report: &mut Report,
) -> CodexServer {
    let mut out = server.clone();
    let path = format!("mcp_servers.{}", block::key(name));
    for (k, v) in settings {
        if k == "tools" {
            for tool in v.as_table().into_iter().flat_map(|t| t.keys()) {
                let replaces = out.tools.iter().any(|(t, _)| t == tool);
                out.tools.retain(|(t, _)| t != tool);
                report.preserved_user_entries.push(format!(
                    "[{path}.tools.{}]{}",
                    block::key(tool),
                    if replaces {
                        " (instead of hermes-mcp's own setting for this tool)"
                    } else {
                        ""
                    }
                ));
            }
            continue;
        }
        match k.as_str() {
            "env" => out.env.clear(),
            "http_headers" => out.http_headers.clear(),
            "env_http_headers" => out.env_http_headers.clear(),
            _ => {}
        }
        report
            .preserved_user_entries
            .push(format!("[{path}.{}]", block::key(k)));
    }
    out
}

/// The error for a server entry of the user's that codex cannot load.
fn broken_server(p: &Plan, name: &str, why: &str) -> anyhow::Error {
    user_error(
        format!(
            "{} defines {why} outside the managed block: codex cannot load a server without a transport (\"invalid transport in mcp_servers.{}\")",
            p.real.display(),
            block::key(name)
        ),
        format!(
            "keep only per-tool tables such as [mcp_servers.{n}.tools.TOOL] for it (migrate writes the server itself), or give it a `command` or `url`, then run migrate again (nothing was written)",
            n = block::key(name)
        ),
    )
}

/// Hermes' servers: into the block, unless the user defines one of the same
/// name outside it; skipped ones are reported as errors.
fn add_servers(
    p: &Plan,
    user: &UserFile,
    report: &mut Report,
    content: &mut BlockContent,
) -> anyhow::Result<()> {
    for (name, t) in &p.translations {
        match t {
            Translation::Ok {
                server,
                transport,
                notes,
                actions,
            } => {
                if !notes.is_empty() {
                    report
                        .skipped_keys_per_server
                        .insert(name.clone(), notes.clone());
                }
                let status = match user.claim(name) {
                    Claim::Defined => {
                        report.preserved_user_servers.push(name.clone());
                        report
                            .preserved_user_entries
                            .push(format!("[mcp_servers.{}]", block::key(name)));
                        "preserved"
                    }
                    Claim::Broken(why) => return Err(broken_server(p, name, &why)),
                    Claim::Settings(t) => {
                        let server = under_user_settings(name, server, &t, report);
                        content.servers.push((name.clone(), server));
                        "migrated"
                    }
                    Claim::Free => {
                        content.servers.push((name.clone(), server.clone()));
                        "migrated"
                    }
                };
                report.servers.push(ServerReport {
                    name: name.clone(),
                    status,
                    transport: Some(transport),
                    skipped_keys: notes.clone(),
                    actions: if status == "migrated" {
                        actions.clone()
                    } else {
                        Vec::new()
                    },
                    reason: (status == "preserved").then(|| {
                        "config.toml defines this server outside the managed block; yours is kept".into()
                    }),
                });
            }
            Translation::Skipped { reason } => {
                report
                    .errors
                    .push(format!("server '{name}' skipped: {reason}"));
                report.servers.push(ServerReport {
                    name: name.clone(),
                    status: "skipped",
                    reason: Some(reason.clone()),
                    ..Default::default()
                });
            }
        }
    }
    Ok(())
}

/// `hermes-tools` itself, unless `--no-hermes-tools` or the user defines it.
fn add_hermes_tools(
    p: &Plan,
    user: &UserFile,
    report: &mut Report,
    content: &mut BlockContent,
) -> anyhow::Result<()> {
    let Some((exe, entry)) = &p.hermes_tools else {
        return Ok(());
    };
    let entry = match user.claim(SERVER_NAME) {
        Claim::Broken(why) => return Err(broken_server(p, SERVER_NAME, &why)),
        Claim::Settings(t) => under_user_settings(SERVER_NAME, entry, &t, report),
        Claim::Free | Claim::Defined => entry.clone(),
    };
    if matches!(user.claim(SERVER_NAME), Claim::Defined) {
        report.preserved_user_servers.push(SERVER_NAME.into());
        report
            .preserved_user_entries
            .push(format!("[mcp_servers.{SERVER_NAME}]"));
        report.servers.push(ServerReport {
            name: SERVER_NAME.into(),
            status: "preserved",
            transport: Some("stdio"),
            reason: Some(
                "config.toml defines hermes-tools outside the managed block; yours is kept".into(),
            ),
            ..Default::default()
        });
    } else {
        content.servers.push((SERVER_NAME.into(), entry));
        report.hermes_tools = Some(exe.clone());
        report.hermes_tools_env_vars = Some(report::EnvVarsReport::from(&p.passthrough));
        report.servers.push(ServerReport {
            name: SERVER_NAME.into(),
            status: "migrated",
            transport: Some("stdio"),
            ..Default::default()
        });
    }
    Ok(())
}

/// Installed plugins (or, when discovery did not run, the previous block's),
/// except those the user configures outside the block.
fn add_plugins(
    discovery: &Discovery,
    parsed: &block::Parsed,
    user: &UserFile,
    report: &mut Report,
    content: &mut BlockContent,
) {
    let candidates: Vec<plugins::Plugin> = match discovery {
        Discovery::Found(list) => {
            report.plugins.discovery = "discovered";
            // Entries the previous block wrote for plugins codex no longer lists
            // as installed leave the block: say which.
            report.plugins.removed = previous_plugins(&parsed.old_block)
                .into_iter()
                .filter(|old| !list.iter().any(|pl| pl.id == old.id))
                .map(|old| old.id)
                .collect();
            list.clone()
        }
        Discovery::Skipped(why) | Discovery::Failed(why) => {
            let failed = matches!(discovery, Discovery::Failed(_));
            report.plugins.discovery = if failed { "failed" } else { "skipped" };
            report.plugins.error = Some(why.clone());
            report.plugin_query_error = Some(why.clone());
            // Keep what the previous block had rather than dropping plugins.
            let kept = previous_plugins(&parsed.old_block);
            report.plugins.kept_from_previous_block = kept.iter().map(|p| p.id.clone()).collect();
            kept
        }
    };
    for pl in candidates {
        if user.has("plugins", &pl.id) {
            report.plugins.preserved.push(pl.id.clone());
            report
                .preserved_user_entries
                .push(format!("[plugins.{}]", block::key(&pl.id)));
        } else {
            report.plugins.migrated.push(pl.id.clone());
            content.plugins.push((pl.id, pl.enabled));
        }
    }
    report
        .plugins
        .kept_from_previous_block
        .retain(|id| report.plugins.migrated.contains(id));
    report.migrated_plugins = report.plugins.migrated.clone();
}

/// `default_permissions`, unless the user sets it (or `sandbox_mode`)
/// themselves; a named profile must exist in config.toml.
fn add_permissions(
    p: &Plan,
    user: &UserFile,
    report: &mut Report,
    content: &mut BlockContent,
) -> anyhow::Result<()> {
    report.permissions.requested = p.permissions.clone();
    let user_setting = ["default_permissions", "sandbox_mode"]
        .into_iter()
        .find_map(|k| user.table.get(k).map(|v| format!("{k} = {v}")));
    if let Some(s) = user_setting {
        report.permissions.preserved = Some(s.clone());
        report.preserved_user_entries.push(s);
        return Ok(());
    }
    let Some(perm) = &p.permissions else {
        return Ok(());
    };
    if !perm.starts_with(':') && !user.has("permissions", perm) {
        let builtin = format!(":{perm}");
        let hint = if BUILTIN_PERMISSIONS.contains(&builtin.as_str()) {
            format!("did you mean the built-in `--permissions {builtin}`?")
        } else {
            format!(
                "define [permissions.{perm}] in {} or use a built-in: {}",
                p.real.display(),
                BUILTIN_PERMISSIONS.join(", ")
            )
        };
        return Err(user_error(
            format!("there is no permission profile [permissions.{perm}] in config.toml"),
            hint,
        ));
    }
    content
        .root
        .push(("default_permissions".into(), TomlVal::Str(perm.clone())));
    report.permissions.written = Some(perm.clone());
    report.wrote_permissions_default = Some(perm.clone());
    Ok(())
}

/// Render the block, splice it into the user's text, and prove the result
/// (valid, outside data unchanged, entries read back, splicing is stable).
fn splice(p: &Plan, parsed: &block::Parsed, content: &BlockContent) -> anyhow::Result<String> {
    let rendered = block::render(content);
    let new = block::insert(&parsed.user, &rendered, parsed.framing);
    block::validate(&new, &parsed.user, &rendered, content).map_err(|e| {
        user_error(
            format!("refusing to write {}: {e}", p.real.display()),
            "nothing was written; move the settings that follow the managed block above it or into their own table, then run migrate again",
        )
    })?;
    refuse_servers_without_transport(p, &new, false)?;
    let again = block::take_apart(&new);
    if block::insert(&again.user, &rendered, again.framing) != new {
        anyhow::bail!(
            "internal error: splicing the block into {} is not stable; nothing was written (please report this)",
            p.real.display()
        );
    }
    Ok(new)
}

/// The structural half of "codex loads what migrate writes": every
/// `[mcp_servers.NAME]` has a transport (codex refuses the whole file
/// otherwise). `removing`: the check of `--remove`'s result.
fn refuse_servers_without_transport(p: &Plan, new: &str, removing: bool) -> anyhow::Result<()> {
    let Ok(t) = block::parse_toml(new) else {
        return Ok(());
    };
    let names = block::servers_without_transport(&t);
    if names.is_empty() {
        return Ok(());
    }
    let tables = names
        .iter()
        .map(|n| format!("[mcp_servers.{}]", block::key(n)))
        .collect::<Vec<_>>()
        .join(", ");
    let hint = if removing {
        format!(
            "these are settings (such as a tool's approval_mode) for a server only the managed block defines; delete their tables from {} first, then run `hermes-mcp migrate --remove` again (nothing was written)",
            p.real.display()
        )
    } else {
        format!(
            "give each a `command` or `url`, or delete its tables from {}, then run migrate again (nothing was written)",
            p.real.display()
        )
    };
    Err(user_error(
        format!(
            "refusing to write {}: {tables} would have neither `command` nor `url`, and codex refuses such a file (\"invalid transport\")",
            p.real.display()
        ),
        hint,
    ))
}

/// `[plugins."<id>"]` entries of the previous block (used when discovery did not run).
fn previous_plugins(old_block: &str) -> Vec<plugins::Plugin> {
    let Ok(t) = block::parse_toml(old_block) else {
        return Vec::new();
    };
    let Some(p) = t.get("plugins").and_then(toml::Value::as_table) else {
        return Vec::new();
    };
    p.iter()
        .map(|(id, v)| plugins::Plugin {
            id: id.clone(),
            enabled: v
                .get("enabled")
                .and_then(toml::Value::as_bool)
                .unwrap_or(true),
        })
        .collect()
}
