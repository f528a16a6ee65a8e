//! The plugin's files in `$HERMES_HOME/plugins/hermes-mcp/`: what they hold,
//! and how they are written: only as a real directory of regular files,
//! never through a link ([`refuse_links`]), each through the crate's one
//! atomic write.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::json;

use super::{PLUGIN_NAME, PluginOptions};
use crate::error::UserError;

/// The plugin's `plugin.yaml`.
pub(super) fn manifest() -> String {
    format!(
        "name: {PLUGIN_NAME}\nversion: \"{}\"\ndescription: \"Keeps Codex's hermes-tools pointing at hermes-mcp after /codex-runtime (written by `hermes-mcp migrate`).\"\nauthor: hermes-mcp\nhooks:\n  - on_session_start\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// The plugin's `settings.json`: the command line to re-run (the plugin adds
/// `--codex-home` and, for its staleness check, `--check --json
/// --no-plugins`) and the variables to unset for it.
pub(super) fn settings(opts: &PluginOptions) -> String {
    let mut argv = vec![opts.exe.to_string_lossy().into_owned()];
    argv.extend(opts.migrate_args.iter().cloned());
    let doc = json!({
        "argv": argv,
        "env_unset": opts.env_unset,
        "written_by": concat!("hermes-mcp ", env!("CARGO_PKG_VERSION")),
    });
    serde_json::to_string_pretty(&doc).expect("json") + "\n"
}

/// `plugin.yaml` is the one `migrate` writes (so the directory is ours to
/// update or remove).
pub(crate) fn is_ours(plugin_dir: &Path) -> bool {
    read_regular(&plugin_dir.join("plugin.yaml"))
        .is_some_and(|t| t.contains("written by `hermes-mcp migrate`"))
}

/// A plugin file's text, when it is a readable regular file (a FIFO or device
/// planted there is treated as missing, never read).
pub(super) fn read_regular(path: &Path) -> Option<String> {
    crate::fs::read_to_string_capped_opt(path, crate::fs::CONFIG_CAP)
        .ok()
        .flatten()
}

/// Prefix and suffix of the temp files the plugin files are written through.
const TMP_PREFIX: &str = ".hermes-mcp.";
const TMP_SUFFIX: &str = ".tmp";

/// Refuse a plugin directory that is a symlink (or not a directory) and a
/// plugin file that is a symlink or not a regular file: migrate writes its
/// plugin only as a real directory of regular files and never through a
/// link, so a link planted there cannot make it overwrite the link's target.
/// Refusing (rather than replacing the link) leaves whatever the user set up
/// as it is; the error says what to remove.
pub(super) fn refuse_links(plugin_dir: &Path, files: &[(PathBuf, String)]) -> anyhow::Result<()> {
    let check = |path: &Path, want_dir: bool| -> anyhow::Result<()> {
        let Ok(m) = fs::symlink_metadata(path) else {
            return Ok(());
        };
        let ft = m.file_type();
        if ft.is_symlink() {
            let target = fs::read_link(path)
                .map(|t| t.display().to_string())
                .unwrap_or_else(|_| "?".into());
            return Err(UserError::hint(
                format!(
                    "{} is a symbolic link (to {target}): migrate writes the Hermes plugin only as regular files, never through a link",
                    path.display()
                ),
                format!(
                    "nothing was written there and {target} was not touched; remove the link (`rm {}`) and run migrate again, or pass --no-hermes-hook",
                    path.display()
                ),
            )
            .into());
        }
        if (want_dir && !ft.is_dir()) || (!want_dir && !ft.is_file()) {
            return Err(UserError::hint(
                format!(
                    "{} is {}, not {}",
                    path.display(),
                    crate::fs::kind_name(&ft),
                    if want_dir { "a directory" } else { "a regular file" }
                ),
                "nothing was written there; remove it and run migrate again, or pass --no-hermes-hook",
            )
            .into());
        }
        Ok(())
    };
    check(plugin_dir, true)?;
    for (p, _) in files {
        check(p, false)?;
    }
    Ok(())
}

/// Replace one plugin file atomically without following a link (the one
/// atomic write with [`crate::fs::Links::NoFollow`]: a rename replaces the
/// directory entry itself, never what a link points to), durably, with the
/// links refused again right before the rename. The mode of the file it
/// replaces is kept (0600 for a new one).
pub(super) fn write_plugin_file(path: &Path, text: &str) -> anyhow::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let opts = crate::fs::WriteOptions {
        temp: crate::fs::TempName::Random(TMP_PREFIX, TMP_SUFFIX),
        links: crate::fs::Links::NoFollow,
        ..crate::fs::WriteOptions::DURABLE
    };
    let written = crate::fs::write_atomic_with(path, text.as_bytes(), &opts, || {
        refuse_links(dir, &[(path.to_path_buf(), String::new())]).map_err(Failed::Refused)
    });
    match written {
        Ok(_) => Ok(()),
        Err(Failed::Refused(e)) => Err(e),
        Err(Failed::File(e)) => {
            let shown: &dyn std::fmt::Display = match e.io_error() {
                Some(io) => io,
                None => &e,
            };
            Err(UserError::hint(
                format!("cannot write {}: {shown}", path.display()),
                "check the permissions of your Hermes home, or pass --no-hermes-hook",
            )
            .into())
        }
    }
}

/// Why [`write_plugin_file`] stopped: the write itself, or the last check.
enum Failed {
    File(crate::fs::FileError),
    Refused(anyhow::Error),
}

impl From<crate::fs::FileError> for Failed {
    fn from(e: crate::fs::FileError) -> Self {
        Failed::File(e)
    }
}

/// Temp files a killed migrate left in the plugin directory.
pub(super) fn clean_stale_temps(dir: &Path) {
    for e in fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = e.file_name();
        let n = name.to_string_lossy();
        if n.starts_with(TMP_PREFIX)
            && n.ends_with(TMP_SUFFIX)
            && e.file_type().is_ok_and(|t| t.is_file())
        {
            let _ = fs::remove_file(e.path());
        }
    }
}
