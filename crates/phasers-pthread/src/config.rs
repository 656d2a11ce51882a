//! The environment variables the replacement reads, once per process.
//!
//! - `PHASERS_PTHREAD=off` (also `0`, `false`, `no`): every call goes to the system implementation,
//!   so one binary can be measured both ways. `on` (or `1`, `true`, `yes`, or unset) replaces.
//! - `PHASERS_BARRIER_ALGORITHM`: the algorithm of every barrier, named as `phasers list` prints
//!   them (`auto`, `sense-reversing`, `counting`, `ticket`, `combining-tree`, `mcs`,
//!   `dissemination`, `tournament`; case and `_` for `-` do not matter). Unset means `auto`.
//!
//! An invalid value prints one line on stderr, once, and the default applies: a program would
//! rarely check `pthread_barrier_init`'s result, so failing the call would only move the problem.
//! `PHASERS_WAIT`, `PHASERS_SPIN`, `PHASERS_STALL` and `PHASERS_PROFILE` apply as for every
//! `phasers` barrier.

use std::io::Write;
use std::sync::OnceLock;

use phasers::Algorithm;

/// What the environment asks for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Config {
    /// Whether barriers are replaced (`PHASERS_PTHREAD` is not `off`).
    pub(crate) enabled: bool,
    /// The algorithm of every barrier (`PHASERS_BARRIER_ALGORITHM`).
    pub(crate) algorithm: Algorithm,
}

/// The configuration, read from the environment on first use.
pub(crate) fn config() -> Config {
    static CONFIG: OnceLock<Config> = OnceLock::new();
    *CONFIG.get_or_init(|| Config {
        enabled: enabled(std::env::var("PHASERS_PTHREAD").ok().as_deref()),
        algorithm: algorithm(std::env::var("PHASERS_BARRIER_ALGORITHM").ok().as_deref()),
    })
}

/// Prints one line about the environment on stderr. Writing errors are ignored: a closed stderr
/// must not make a barrier call fail or panic.
pub(crate) fn warn(message: &str) {
    let _ = writeln!(std::io::stderr(), "phasers-pthread: {message}");
}

fn enabled(value: Option<&str>) -> bool {
    let Some(value) = value else {
        return true;
    };
    match value.trim().to_ascii_lowercase().as_str() {
        "off" | "0" | "false" | "no" => false,
        "on" | "1" | "true" | "yes" | "" => true,
        _ => {
            warn(&format!(
                "PHASERS_PTHREAD={value:?} is neither on nor off; replacing pthread barriers as \
                 usual (set PHASERS_PTHREAD=off to use the system's)"
            ));
            true
        }
    }
}

fn algorithm(value: Option<&str>) -> Algorithm {
    match value.map(str::parse::<Algorithm>) {
        None => Algorithm::Auto,
        Some(Ok(algorithm)) => algorithm,
        Some(Err(error)) => {
            warn(&format!(
                "PHASERS_BARRIER_ALGORITHM: {error}; using auto for every barrier"
            ));
            Algorithm::Auto
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn on_and_off() {
        assert!(enabled(None));
        for on in ["on", "1", "TRUE", " yes ", ""] {
            assert!(enabled(Some(on)), "{on:?}");
        }
        for off in ["off", "0", "False", "NO"] {
            assert!(!enabled(Some(off)), "{off:?}");
        }
        // Unknown: a warning, and the replacement stays on.
        assert!(enabled(Some("maybe")));
    }

    #[test]
    fn algorithm_names() {
        assert_eq!(algorithm(None), Algorithm::Auto);
        assert_eq!(algorithm(Some("mcs")), Algorithm::McsTree);
        assert_eq!(algorithm(Some("Dissemination")), Algorithm::Dissemination);
        for concrete in Algorithm::CONCRETE {
            assert_eq!(algorithm(Some(concrete.name())), concrete);
        }
        assert_eq!(algorithm(Some("fastest-please")), Algorithm::Auto);
    }
}
