//! `HERMES_HOME` resolution, exactly as Hermes Agent does it
//! (`hermes_constants.get_hermes_home` / `get_default_hermes_root`):
//! env `HERMES_HOME`, else `~/.hermes`; profiles live at `<root>/profiles/<name>`.

use std::path::{Path, PathBuf};

use super::envvars;

/// Hermes' profile-name rule (`hermes_cli/profiles.py::_PROFILE_ID_RE`), which
/// is also its kanban board-slug rule (`_BOARD_SLUG_RE`).
pub(crate) fn is_valid_profile_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 64
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_' || *c == b'-')
}

#[derive(Debug, thiserror::Error)]
pub enum HomeError {
    #[error(
        "invalid profile name {0:?}: use 1-64 characters a-z, 0-9, '_' or '-', starting with a letter or digit"
    )]
    BadProfile(String),
    #[error("cannot find your home directory; set HERMES_HOME or pass --hermes-home")]
    NoHome,
}

/// The Hermes home that is active for this process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HermesHome {
    /// The directory holding `config.yaml`, `.env`, `skills/`, `cache/`, ...
    pub path: PathBuf,
    /// True when the path came from `--hermes-home`, `--profile` or `HERMES_HOME`
    /// rather than the platform default. Only an explicit home is written into
    /// Codex's config (the default needs no help to be found).
    pub explicit: bool,
}

/// `~/.hermes`, Hermes' platform default on POSIX.
pub(crate) fn platform_default() -> Result<PathBuf, HomeError> {
    std::env::home_dir()
        .filter(|p| !p.as_os_str().is_empty())
        .map(|h| h.join(".hermes"))
        .ok_or(HomeError::NoHome)
}

impl HermesHome {
    /// Why a home the user named (`--hermes-home`, `--profile`, `HERMES_HOME`)
    /// cannot be served: it does not exist, or it is not a directory.
    pub fn unusable(&self) -> Option<String> {
        if !self.explicit {
            return None;
        }
        match std::fs::metadata(&self.path) {
            Ok(m) if m.is_dir() => None,
            Ok(_) => Some(format!(
                "the Hermes home {} is not a directory",
                self.path.display()
            )),
            Err(_) => Some(format!(
                "the Hermes home {} does not exist",
                self.path.display()
            )),
        }
    }

    /// Resolve the home: `flag` (`--hermes-home`) wins, then `HERMES_HOME`, then
    /// `~/.hermes`. With `profile`, the home is `<root>/profiles/<name>` where the
    /// root is computed as Hermes' `get_default_hermes_root` does; the profile
    /// `default` is the root itself.
    pub(crate) fn resolve(flag: Option<&Path>, profile: Option<&str>) -> Result<Self, HomeError> {
        let env_home = envvars::get(envvars::HERMES_HOME).filter(|v| !v.trim().is_empty());
        Self::resolve_with(flag, profile, env_home.as_deref().map(Path::new))
    }

    /// [`Self::resolve`] with the `HERMES_HOME` value passed in (for tests).
    pub(crate) fn resolve_with(
        flag: Option<&Path>,
        profile: Option<&str>,
        env_home: Option<&Path>,
    ) -> Result<Self, HomeError> {
        let base = match (flag, env_home) {
            (Some(f), _) => Some(absolutize(f)),
            (None, Some(e)) => Some(absolutize(e)),
            (None, None) => None,
        };
        let Some(profile) = profile else {
            return Ok(match base {
                Some(path) => HermesHome {
                    path,
                    explicit: true,
                },
                None => HermesHome {
                    path: platform_default()?,
                    explicit: false,
                },
            });
        };
        if !is_valid_profile_name(profile) {
            return Err(HomeError::BadProfile(profile.to_string()));
        }
        let root = match base {
            Some(b) => default_root_of(&b, &platform_default().ok()),
            None => platform_default()?,
        };
        let path = if profile == "default" {
            root
        } else {
            root.join("profiles").join(profile)
        };
        Ok(HermesHome {
            path,
            explicit: true,
        })
    }

    pub(crate) fn config_path(&self) -> PathBuf {
        self.path.join("config.yaml")
    }
    pub(crate) fn dotenv_path(&self) -> PathBuf {
        self.path.join(".env")
    }
    pub(crate) fn skills_dir(&self) -> PathBuf {
        self.path.join("skills")
    }
    /// `$HERMES_HOME/cache/<sub>` (web, screenshots, images, audio, ...).
    pub(crate) fn cache_dir(&self, sub: &str) -> PathBuf {
        self.path.join("cache").join(sub)
    }
    /// The root that holds `profiles/` (Hermes' `get_default_hermes_root`).
    pub(crate) fn root(&self) -> PathBuf {
        default_root_of(&self.path, &platform_default().ok())
    }
}

/// Hermes' `get_default_hermes_root()` for a given `HERMES_HOME`.
fn default_root_of(home: &Path, native: &Option<PathBuf>) -> PathBuf {
    if let Some(native) = native {
        let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        if canon(home).starts_with(canon(native)) {
            return native.clone();
        }
    }
    if home
        .parent()
        .and_then(|p| p.file_name())
        .is_some_and(|n| n == "profiles")
        && let Some(gp) = home.parent().and_then(Path::parent)
    {
        return gp.to_path_buf();
    }
    home.to_path_buf()
}

fn absolutize(p: &Path) -> PathBuf {
    let p = expand_tilde(p);
    if p.is_absolute() {
        p
    } else {
        std::env::current_dir().map(|d| d.join(&p)).unwrap_or(p)
    }
}

/// Expand a leading `~/` (or a lone `~`) to the user's home directory.
/// Where `serve` keeps its log: `<home>/logs/hermes-mcp.log`, beside Hermes'
/// own logs (hermes-agent: `hermes_logging.py` writes `<home>/logs/*.log`).
pub(crate) fn log_file(home: &Path) -> PathBuf {
    home.join("logs").join("hermes-mcp.log")
}

pub(crate) use crate::fs::expand_tilde;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_names_follow_hermes_rule() {
        for ok in ["coder", "a", "0x", "my_prof-2"] {
            assert!(is_valid_profile_name(ok), "{ok}");
        }
        for bad in ["", "Coder", "-x", "_x", "a/b", "..", "a b", &"x".repeat(65)] {
            assert!(!is_valid_profile_name(bad), "{bad}");
        }
    }

    #[test]
    fn flag_beats_env_and_profiles_nest_under_root() {
        let h = HermesHome::resolve_with(Some(Path::new("/opt/data")), None, Some(Path::new("/x")))
            .unwrap();
        assert_eq!(
            h,
            HermesHome {
                path: "/opt/data".into(),
                explicit: true
            }
        );
        let h =
            HermesHome::resolve_with(None, Some("coder"), Some(Path::new("/opt/data"))).unwrap();
        assert_eq!(h.path, PathBuf::from("/opt/data/profiles/coder"));
        // A profile home's root is the grandparent, so a second profile is a sibling.
        let h = HermesHome::resolve_with(
            None,
            Some("ops"),
            Some(Path::new("/opt/data/profiles/coder")),
        )
        .unwrap();
        assert_eq!(h.path, PathBuf::from("/opt/data/profiles/ops"));
        let h = HermesHome::resolve_with(
            None,
            Some("default"),
            Some(Path::new("/opt/data/profiles/coder")),
        )
        .unwrap();
        assert_eq!(h.path, PathBuf::from("/opt/data"));
        assert!(matches!(
            HermesHome::resolve_with(None, Some("../evil"), None),
            Err(HomeError::BadProfile(_))
        ));
    }

    #[test]
    fn unset_home_is_platform_default_and_not_explicit() {
        let h = HermesHome::resolve_with(None, None, None).unwrap();
        assert!(!h.explicit);
        assert!(h.path.ends_with(".hermes"));
    }
}
