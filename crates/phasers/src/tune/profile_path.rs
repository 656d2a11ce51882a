//! Where the tuning profile is looked for: `PHASERS_PROFILE`, then the default path.
//!
//! Pure functions of the environment's values, so they are tested without touching the process
//! environment, which is shared by every test thread.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

use super::profile::Profile;

/// What `PHASERS_PROFILE` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Request {
    /// Unset: look at the default path.
    Default,
    /// `off`, `none` or empty: no profile.
    Off,
    /// Any other value: this file, which must exist and be valid.
    File(PathBuf),
}

/// Reads the value of `PHASERS_PROFILE` (`None` when unset).
pub(crate) fn request_from(value: Option<&OsStr>) -> Request {
    let Some(value) = value else {
        return Request::Default;
    };
    // A path is taken exactly as given; only the keywords are forgiving about case and spaces.
    let keyword = value.to_str().map(|text| text.trim().to_ascii_lowercase());
    match keyword.as_deref() {
        Some("" | "off" | "none") => Request::Off,
        _ => Request::File(PathBuf::from(value)),
    }
}

/// `$XDG_CONFIG_HOME/phasers/profile.json`, else `$HOME/.config/phasers/profile.json`.
///
/// Following the XDG base directory rules, an empty or relative `XDG_CONFIG_HOME` is ignored; a
/// relative `HOME` is ignored too, since it would make the profile depend on the working directory.
pub(crate) fn default_path_from(
    xdg_config_home: Option<OsString>,
    home: Option<OsString>,
) -> Option<PathBuf> {
    let absolute =
        |value: Option<OsString>| value.map(PathBuf::from).filter(|path| path.is_absolute());
    absolute(xdg_config_home)
        .or_else(|| absolute(home).map(|home| home.join(".config")))
        .map(|config| config.join("phasers").join("profile.json"))
}

impl Profile {
    /// Where a profile is looked up when `PHASERS_PROFILE` is unset:
    /// `$XDG_CONFIG_HOME/phasers/profile.json` when `XDG_CONFIG_HOME` is an absolute path, else
    /// `$HOME/.config/phasers/profile.json` when `HOME` is, else `None`.
    ///
    /// This is also where `phasers bench barrier --write-profile` writes by default.
    ///
    /// ```
    /// if let Some(path) = phasers::Profile::default_path() {
    ///     assert!(path.ends_with("phasers/profile.json"));
    /// }
    /// ```
    pub fn default_path() -> Option<PathBuf> {
        default_path_from(
            std::env::var_os("XDG_CONFIG_HOME"),
            std::env::var_os("HOME"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(text: &str) -> Option<OsString> {
        Some(OsString::from(text))
    }

    #[test]
    fn xdg_config_home_comes_first() {
        assert_eq!(
            default_path_from(os("/xdg"), os("/home/me")),
            Some(PathBuf::from("/xdg/phasers/profile.json"))
        );
    }

    #[test]
    fn home_is_used_when_xdg_is_unset_empty_or_relative() {
        let expected = Some(PathBuf::from("/home/me/.config/phasers/profile.json"));
        for xdg in [None, os(""), os("relative/config")] {
            assert_eq!(
                default_path_from(xdg.clone(), os("/home/me")),
                expected,
                "{xdg:?}"
            );
        }
    }

    #[test]
    fn no_usable_variable_means_no_default_path() {
        for (xdg, home) in [
            (None, None),
            (os(""), os("")),
            (os("relative"), os("also/relative")),
        ] {
            assert_eq!(
                default_path_from(xdg.clone(), home.clone()),
                None,
                "{xdg:?} {home:?}"
            );
        }
    }

    #[test]
    fn phasers_profile_keywords_and_paths() {
        assert_eq!(request_from(None), Request::Default);
        for off in ["off", "OFF", "None", " none ", "", "  "] {
            assert_eq!(request_from(Some(OsStr::new(off))), Request::Off, "{off:?}");
        }
        for path in ["/tmp/p.json", "profile.json", "offline.json", " /spaced "] {
            assert_eq!(
                request_from(Some(OsStr::new(path))),
                Request::File(PathBuf::from(path)),
                "{path:?}"
            );
        }
    }
}
