//! Which tuning profile `Algorithm::Auto` uses in this process, looked up once.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::profile::Profile;
use super::profile_file::{Problem, WHAT_TO_DO};
use super::profile_path::{self, Request};
use crate::error::{Error, Result};
use crate::topology::available_cores;

/// The outcome of looking up the tuning profile, as [`Profile::status`] reports it.
///
/// Its `Display` is one line for a program to print, such as
/// `profile /root/.config/phasers/profile.json: in use (measured on 2 cores)`.
///
/// ```
/// use phasers::barrier::ProfileStatus;
///
/// let path = "/home/me/.config/phasers/profile.json";
/// let status = ProfileStatus::NotFound { path: Some(path.into()) };
/// assert!(status.profile().is_none());
/// assert!(status.to_string().contains("not found"));
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "profile")))]
#[derive(Debug, Clone, PartialEq)]
pub enum ProfileStatus {
    /// `Auto` chooses from this profile.
    Active {
        /// The file it was read from.
        path: PathBuf,
        /// The profile itself.
        profile: Profile,
    },
    /// `PHASERS_PROFILE` is `off`, `none` or empty (and always under `--cfg phasers_loom`): `Auto`
    /// follows its built-in rule.
    Disabled,
    /// `PHASERS_PROFILE` is unset and there is no file at the default path (`path`; `None` when
    /// neither `XDG_CONFIG_HOME` nor `HOME` gives one): `Auto` follows its built-in rule.
    NotFound {
        /// The default path that was looked at.
        path: Option<PathBuf>,
    },
    /// A valid profile measured on a machine with another core count: `Auto` follows its
    /// built-in rule, since the timings describe a different machine.
    Ignored {
        /// The file it was read from.
        path: PathBuf,
        /// The core count the profile was measured with.
        profile_cores: usize,
        /// The core count of this machine, [`crate::available_cores`].
        machine_cores: usize,
    },
    /// The file named by `PHASERS_PROFILE` is missing, or a file that exists (there or at the
    /// default path) cannot be read or is not a valid profile. Building a barrier with `Auto`
    /// returns `error`; [`Algorithm::resolve`](crate::Algorithm::resolve) follows the built-in
    /// rule.
    Invalid {
        /// The file that was looked at.
        path: PathBuf,
        /// An [`Error::InvalidArgument`] naming the file, what is wrong and what to do.
        error: Error,
    },
}

impl ProfileStatus {
    /// Looks the profile up now, reading `PHASERS_PROFILE`, `XDG_CONFIG_HOME`, `HOME` and the file,
    /// without the once-per-process cache behind [`Profile::status`].
    ///
    /// For a program that has just written a profile and wants to tell whether later runs will
    /// use it; `Auto` in this process keeps what [`Profile::status`] found first. Under
    /// `--cfg phasers_loom` it is always [`Disabled`](Self::Disabled) and reads nothing.
    ///
    /// ```
    /// use phasers::{Profile, ProfileStatus};
    ///
    /// let name = format!("phasers-doc-detect-{}.json", std::process::id());
    /// let missing = std::env::temp_dir().join(name);
    /// std::env::set_var(Profile::ENV_VAR, &missing);
    /// let status = ProfileStatus::detect();
    /// assert_eq!(status.path(), Some(missing.as_path()));
    /// assert!(status.error().is_some()); // a file named by PHASERS_PROFILE must exist
    /// ```
    pub fn detect() -> ProfileStatus {
        if cfg!(phasers_loom) {
            // Loom models must be deterministic functions of their schedule: no files, no env.
            return ProfileStatus::Disabled;
        }
        detect_with(
            profile_path::request_from(std::env::var_os(Profile::ENV_VAR).as_deref()),
            Profile::default_path(),
            available_cores(),
        )
    }

    /// The profile `Auto` chooses from, when it is [`Active`](Self::Active).
    ///
    /// ```
    /// use phasers::{Algorithm, Profile, ProfileEntry, ProfileStatus};
    ///
    /// let entry = ProfileEntry { threads: 1, algorithm: Algorithm::Counting, median_ns: None };
    /// let profile = Profile::new(2, None, None, vec![entry])?;
    /// let path = "/etc/phasers/profile.json".into();
    /// let status = ProfileStatus::Active { path, profile: profile.clone() };
    /// assert_eq!(status.profile(), Some(&profile));
    /// assert_eq!(ProfileStatus::Disabled.profile(), None);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn profile(&self) -> Option<&Profile> {
        match self {
            ProfileStatus::Active { profile, .. } => Some(profile),
            _ => None,
        }
    }

    /// The file that was looked at, if any.
    ///
    /// ```
    /// use std::path::Path;
    /// use phasers::ProfileStatus;
    ///
    /// let path = Path::new("/home/me/.config/phasers/profile.json");
    /// let not_found = ProfileStatus::NotFound { path: Some(path.to_path_buf()) };
    /// assert_eq!(not_found.path(), Some(path));
    /// assert_eq!(ProfileStatus::Disabled.path(), None); // nothing was looked at
    /// ```
    pub fn path(&self) -> Option<&Path> {
        match self {
            ProfileStatus::Active { path, .. }
            | ProfileStatus::Ignored { path, .. }
            | ProfileStatus::Invalid { path, .. } => Some(path),
            ProfileStatus::NotFound { path } => path.as_deref(),
            ProfileStatus::Disabled => None,
        }
    }

    /// The error building a barrier with `Auto` returns, when the profile is
    /// [`Invalid`](Self::Invalid).
    ///
    /// ```
    /// use phasers::{Algorithm, Barrier, Profile};
    ///
    /// let name = format!("phasers-doc-error-{}.json", std::process::id());
    /// let path = std::env::temp_dir().join(name);
    /// std::fs::write(&path, "not a profile")?;
    /// std::env::set_var(Profile::ENV_VAR, &path); // before this process looks it up
    /// let error = Profile::status().error().expect("the file is invalid").clone();
    /// assert_eq!(Barrier::with_algorithm(2, Algorithm::Auto).unwrap_err(), error);
    /// assert!(Barrier::with_algorithm(2, Algorithm::Counting).is_ok()); // the profile is not read
    /// std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn error(&self) -> Option<&Error> {
        match self {
            ProfileStatus::Invalid { error, .. } => Some(error),
            _ => None,
        }
    }
}

fn cores(count: usize) -> String {
    match count {
        1 => "1 core".to_owned(),
        _ => format!("{count} cores"),
    }
}

impl std::fmt::Display for ProfileStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const BUILTIN: &str = "Algorithm::Auto follows its built-in rule";
        match self {
            ProfileStatus::Active { path, profile } => write!(
                f,
                "profile {}: in use (measured on {})",
                path.display(),
                cores(profile.cores())
            ),
            ProfileStatus::Disabled => {
                write!(f, "profile: disabled by {}; {BUILTIN}", Profile::ENV_VAR)
            }
            ProfileStatus::NotFound { path: Some(path) } => write!(
                f,
                "profile {}: not found; {BUILTIN} (run `phasers bench barrier --write-profile` to write one)",
                path.display()
            ),
            ProfileStatus::NotFound { path: None } => write!(
                f,
                "profile: no default location (neither XDG_CONFIG_HOME nor HOME is an absolute \
                 path); {BUILTIN} (set {} to a profile file to use one)",
                Profile::ENV_VAR
            ),
            ProfileStatus::Ignored {
                path,
                profile_cores,
                machine_cores,
            } => write!(
                f,
                "profile {}: ignored, measured on {} but this machine has {}; {BUILTIN} \
                 (re-run `phasers bench barrier --write-profile` on this machine)",
                path.display(),
                cores(*profile_cores),
                machine_cores
            ),
            ProfileStatus::Invalid { path, error } => {
                let reason = match error {
                    Error::InvalidArgument { message } => message.clone(),
                    other => other.to_string(),
                };
                write!(
                    f,
                    "profile {}: unusable, so building a barrier with Algorithm::Auto fails: \
                     {reason}",
                    path.display()
                )
            }
        }
    }
}

/// The lookup, from the value of `PHASERS_PROFILE`, the default path and this machine's cores.
pub(crate) fn detect_with(
    request: Request,
    default_path: Option<PathBuf>,
    machine_cores: usize,
) -> ProfileStatus {
    let env = Profile::ENV_VAR;
    let (path, named) = match request {
        Request::Off => return ProfileStatus::Disabled,
        Request::File(path) => (path, true),
        Request::Default => match default_path {
            Some(path) => (path, false),
            None => return ProfileStatus::NotFound { path: None },
        },
    };
    let shown = path.display();
    let message = match Profile::read(&path) {
        Ok(profile) if profile.cores() == machine_cores => {
            return ProfileStatus::Active { path, profile };
        }
        Ok(profile) => {
            return ProfileStatus::Ignored {
                profile_cores: profile.cores(),
                machine_cores,
                path,
            };
        }
        Err(Problem::Unreadable(err)) if !named && err.kind() == std::io::ErrorKind::NotFound => {
            return ProfileStatus::NotFound { path: Some(path) };
        }
        Err(Problem::Unreadable(err)) if named => format!(
            "{env} names the tuning profile {shown}, which cannot be read ({err}); write it with \
             `phasers bench barrier --write-profile`, point {env} at another profile, or set {env}=off to ignore profiles"
        ),
        Err(Problem::Unreadable(err)) => format!(
            "the tuning profile {shown} cannot be read ({err}); fix its permissions, delete it, \
             or set {env}=off to ignore it"
        ),
        Err(Problem::Malformed(problem)) if named => format!(
            "the tuning profile {shown} (named by {env}) is invalid: {problem}; re-run `phasers \
             bench barrier --write-profile` to rewrite it, point {env} at another profile, or set {env}=off to ignore \
             profiles"
        ),
        Err(Problem::Malformed(problem)) => {
            format!("the tuning profile {shown} is invalid: {problem}; {WHAT_TO_DO}")
        }
    };
    ProfileStatus::Invalid {
        error: Error::invalid(message),
        path,
    }
}

/// The process's profile status, looked up on first use and kept: every `Auto` barrier of a run
/// then makes the same choice, and the file is read once.
pub(crate) fn process_status() -> &'static ProfileStatus {
    static STATUS: OnceLock<ProfileStatus> = OnceLock::new();
    STATUS.get_or_init(ProfileStatus::detect)
}

/// The profile `Auto` should follow: `Ok(None)` for the built-in rule, the lookup's error when the
/// profile is invalid.
pub(crate) fn for_auto() -> Result<Option<&'static Profile>> {
    let status = process_status();
    match status.error() {
        Some(error) => Err(error.clone()),
        None => Ok(status.profile()),
    }
}

impl Profile {
    /// Which profile `Auto` uses in this process, and why; looked up once, on first use.
    ///
    /// ```
    /// let status = phasers::Profile::status();
    /// // e.g. "profile /root/.config/phasers/profile.json: in use (measured on 2 cores)"
    /// println!("{status}");
    /// if let Some(profile) = status.profile() {
    ///     assert_eq!(profile.cores(), phasers::available_cores());
    /// }
    /// ```
    pub fn status() -> &'static ProfileStatus {
        process_status()
    }

    /// The profile `Auto` uses in this process, if any: [`status`](Self::status)`().profile()`.
    ///
    /// ```
    /// use phasers::{Algorithm, Profile};
    ///
    /// // Set before anything in this process looks the profile up: none is used.
    /// std::env::set_var(Profile::ENV_VAR, "off");
    /// assert!(Profile::active().is_none());
    /// assert_eq!(Algorithm::Auto.resolve(8), Algorithm::Auto.resolve_builtin(8));
    /// ```
    pub fn active() -> Option<&'static Profile> {
        Profile::status().profile()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithm::Algorithm;
    use crate::tune::profile::ProfileEntry;

    /// A scratch directory for one test, removed when dropped.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Self {
            let dir = std::env::temp_dir().join(format!(
                "phasers-profile-status-{name}-{}",
                std::process::id()
            ));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Scratch(dir)
        }

        fn write(&self, name: &str, text: &str) -> PathBuf {
            let path = self.0.join(name);
            std::fs::write(&path, text).unwrap();
            path
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn profile(cores: usize) -> Profile {
        Profile::new(
            cores,
            None,
            None,
            vec![ProfileEntry {
                threads: 1,
                algorithm: Algorithm::McsTree,
                median_ns: None,
            }],
        )
        .unwrap()
    }

    fn invalid_message(status: &ProfileStatus) -> String {
        match status.error() {
            Some(Error::InvalidArgument { message }) => message.clone(),
            _ => panic!("expected Invalid, got {status:?}"),
        }
    }

    #[test]
    fn off_wins_over_everything() {
        let scratch = Scratch::new("off");
        let broken = scratch.write("profile.json", "broken");
        let status = detect_with(Request::Off, Some(broken), 2);
        assert_eq!(status, ProfileStatus::Disabled);
        assert_eq!(status.path(), None);
        assert_eq!(
            status.to_string(),
            "profile: disabled by PHASERS_PROFILE; Algorithm::Auto follows its built-in rule"
        );
    }

    #[test]
    fn a_valid_profile_for_this_machine_is_active() {
        let scratch = Scratch::new("active");
        let expected = profile(2);
        let path = scratch.write("p.json", &expected.to_json());
        for request in [Request::File(path.clone()), Request::Default] {
            let status = detect_with(request, Some(path.clone()), 2);
            assert_eq!(status.profile(), Some(&expected));
            assert_eq!(status.path(), Some(path.as_path()));
            assert_eq!(status.error(), None);
            assert_eq!(
                status.to_string(),
                format!("profile {}: in use (measured on 2 cores)", path.display())
            );
        }
        let one = scratch.write("one.json", &profile(1).to_json());
        let status = detect_with(Request::Default, Some(one), 1);
        assert!(
            status.to_string().ends_with("in use (measured on 1 core)"),
            "{status}"
        );
    }

    #[test]
    fn a_profile_from_another_machine_shape_is_ignored() {
        let scratch = Scratch::new("ignored");
        let path = scratch.write("p.json", &profile(8).to_json());
        let status = detect_with(Request::File(path.clone()), None, 2);
        assert_eq!(
            status,
            ProfileStatus::Ignored {
                path: path.clone(),
                profile_cores: 8,
                machine_cores: 2
            }
        );
        assert_eq!(status.profile(), None);
        assert_eq!(status.error(), None);
        assert_eq!(
            status.to_string(),
            format!(
                "profile {}: ignored, measured on 8 cores but this machine has 2; \
                 Algorithm::Auto follows its built-in rule (re-run `phasers bench barrier --write-profile` on this machine)",
                path.display()
            )
        );
    }

    #[test]
    fn a_missing_default_file_is_not_an_error() {
        let scratch = Scratch::new("missing-default");
        let path = scratch.0.join("phasers").join("profile.json");
        let status = detect_with(Request::Default, Some(path.clone()), 2);
        assert_eq!(
            status,
            ProfileStatus::NotFound {
                path: Some(path.clone())
            }
        );
        assert_eq!(status.path(), Some(path.as_path()));
        assert_eq!(
            status.to_string(),
            format!(
                "profile {}: not found; Algorithm::Auto follows its built-in rule (run `phasers \
                 bench barrier --write-profile` to write one)",
                path.display()
            )
        );
        let status = detect_with(Request::Default, None, 2);
        assert_eq!(status, ProfileStatus::NotFound { path: None });
        let shown = status.to_string();
        assert!(shown.starts_with("profile: no default location"), "{shown}");
        assert!(shown.contains("set PHASERS_PROFILE"), "{shown}");
    }

    #[test]
    fn a_missing_named_file_is_an_error() {
        let scratch = Scratch::new("missing-named");
        let path = scratch.0.join("nowhere.json");
        let status = detect_with(Request::File(path.clone()), None, 2);
        let message = invalid_message(&status);
        assert!(
            message.starts_with("PHASERS_PROFILE names the tuning profile"),
            "{message}"
        );
        assert!(message.contains(&path.display().to_string()), "{message}");
        assert!(message.contains("cannot be read"), "{message}");
        assert!(message.contains("PHASERS_PROFILE=off"), "{message}");
        assert_eq!(status.path(), Some(path.as_path()));
    }

    #[test]
    fn an_invalid_file_is_an_error_wherever_it_was_found() {
        let scratch = Scratch::new("invalid");
        let path = scratch.write("p.json", r#"{"format": "phasers-profile", "version": 1}"#);

        let named = detect_with(Request::File(path.clone()), None, 2);
        let message = invalid_message(&named);
        assert!(message.contains(&path.display().to_string()), "{message}");
        assert!(
            message.contains("(named by PHASERS_PROFILE) is invalid"),
            "{message}"
        );
        assert!(message.contains("missing field `cores`"), "{message}");
        assert!(
            message.contains("re-run `phasers bench barrier --write-profile`"),
            "{message}"
        );
        assert!(message.contains("PHASERS_PROFILE=off"), "{message}");

        let found = detect_with(Request::Default, Some(path.clone()), 2);
        let message = invalid_message(&found);
        assert!(message.contains(&path.display().to_string()), "{message}");
        assert!(
            message.contains("re-run `phasers bench barrier --write-profile`"),
            "{message}"
        );
        assert!(message.contains("delete it"), "{message}");
        assert!(message.contains("PHASERS_PROFILE=off"), "{message}");
        assert_eq!(
            found.to_string(),
            format!(
                "profile {}: unusable, so building a barrier with Algorithm::Auto fails: {message}",
                path.display()
            )
        );

        // A directory where the file should be cannot be read: an error, not "not found".
        let dir = scratch.0.join("dir.json");
        std::fs::create_dir(&dir).unwrap();
        let message = invalid_message(&detect_with(Request::Default, Some(dir.clone()), 2));
        assert!(message.contains("cannot be read"), "{message}");
        assert!(message.contains("delete it"), "{message}");
    }
}
