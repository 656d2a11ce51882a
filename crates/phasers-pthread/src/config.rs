//! The environment variables the replacement reads, once per process.
//!
//! - `PHASERS_PTHREAD=off` (also `0`, `false`, `no`): every call goes to the system implementation,
//!   so one binary can be measured both ways. `on` (or `1`, `true`, `yes`, or unset) replaces.
//! - `PHASERS_BARRIER_ALGORITHM`: the algorithm of every barrier, named as `phasers list` prints
//!   them (`auto`, `sense-reversing`, `counting`, `ticket`, `combining-tree`, `mcs`,
//!   `dissemination`, `tournament`; case and `_` for `-` do not matter). Unset means `auto`.
//!   Only the algorithms in which the last arrival releases everyone are used (see
//!   `last_arrival_releases`): asking for another prints one line on stderr, once, and `counting`
//!   runs instead; `auto` chooses among them silently.
//!
//! An invalid value prints one line on stderr, once, and the default applies: a program would
//! rarely check `pthread_barrier_init`'s result, so failing the call would only move the problem.
//! `PHASERS_WAIT`, `PHASERS_SPIN`, `PHASERS_WAKE`, `PHASERS_STALL` and `PHASERS_PROFILE` apply as
//! for every `phasers` barrier.

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
    *CONFIG.get_or_init(|| {
        let (enabled, enabled_warning) = enabled(std::env::var("PHASERS_PTHREAD").ok().as_deref());
        let (algorithm, algorithm_warning) =
            algorithm(std::env::var("PHASERS_BARRIER_ALGORITHM").ok().as_deref());
        for message in [enabled_warning, algorithm_warning].into_iter().flatten() {
            warn(&message);
        }
        Config { enabled, algorithm }
    })
}

/// What a variable's value means, with the line to print when the value was not taken as given.
/// The readers return the line rather than print it, so their tests check it without writing to
/// the test run's stderr.
type Reading<T> = (T, Option<String>);

/// The algorithm that runs where `PHASERS_BARRIER_ALGORITHM` or `auto` chose one in which the
/// last arrival does not release everyone: Auto's own choice for 1 or 2 parties and for more
/// parties than cores, whose arrival counter is also its release word. (With a core per party,
/// Auto's cost model rates sense-reversing a little cheaper than counting from 3 parties; the
/// preload keeps one substitute for every count.)
pub(crate) const SUBSTITUTE: Algorithm = Algorithm::Counting;

/// Whether, in `algorithm`, the last call to arrive completes the episode and releases every
/// waiter by itself, as glibc's `pthread_barrier_wait` does. POSIX programs may rely on it: a
/// thread that has arrived may run a signal handler that waits for another thread of the same
/// episode to be released (a flag that thread sets once its `pthread_barrier_wait` returns), and
/// with glibc the episode still completes.
///
/// The centralized algorithms give it: the last arrival publishes one release word that every
/// waiter reads. The others make threads that have already arrived do part of the episode's work,
/// so one of them held up in a signal handler holds up the threads it should release
/// ([`why_not`] says how); the test `tests/c/signal_release.c` hangs with each of them.
pub(crate) fn last_arrival_releases(algorithm: Algorithm) -> bool {
    why_not(algorithm).is_none()
}

/// Why the last arrival does not release everyone in `algorithm`, or `None` when it does.
/// `Auto` is not an algorithm that runs; it is answered as the algorithms it may resolve to, some
/// of which do not give the guarantee.
pub(crate) fn why_not(algorithm: Algorithm) -> Option<&'static str> {
    match algorithm {
        Algorithm::SenseReversing | Algorithm::Counting | Algorithm::Ticket => None,
        Algorithm::CombiningTree => Some(
            "the release goes down the tree through threads that have already arrived, each \
             releasing the subtree below it",
        ),
        Algorithm::McsTree => Some(
            "rank 0 waits for its children's arrivals before it completes the episode, and the \
             wake-ups go down a tree of threads that have already arrived",
        ),
        Algorithm::Dissemination => Some(
            "every thread that has arrived must play its ceil(log2 n) rounds of signals for the \
             others to complete theirs",
        ),
        Algorithm::Tournament => Some(
            "the winners of the matches, threads that have already arrived, must play on up the \
             bracket and wake the losers back down",
        ),
        Algorithm::Auto => Some("auto may resolve to an algorithm that does not give it"),
    }
}

/// Prints one line about the environment on stderr. Writing errors are ignored: a closed stderr
/// must not make a barrier call fail or panic.
pub(crate) fn warn(message: &str) {
    let _ = writeln!(std::io::stderr(), "phasers-pthread: {message}");
}

fn enabled(value: Option<&str>) -> Reading<bool> {
    let Some(value) = value else {
        return (true, None);
    };
    match value.trim().to_ascii_lowercase().as_str() {
        "off" | "0" | "false" | "no" => (false, None),
        "on" | "1" | "true" | "yes" | "" => (true, None),
        _ => (
            true,
            Some(format!(
                "PHASERS_PTHREAD={value:?} is neither on nor off; replacing pthread barriers as \
                 usual (set PHASERS_PTHREAD=off to use the system's)"
            )),
        ),
    }
}

fn algorithm(value: Option<&str>) -> Reading<Algorithm> {
    match value.map(str::parse::<Algorithm>) {
        None => (Algorithm::Auto, None),
        Some(Ok(Algorithm::Auto)) => (Algorithm::Auto, None),
        Some(Ok(algorithm)) => match why_not(algorithm) {
            None => (algorithm, None),
            Some(why) => {
                let message = format!(
                    "PHASERS_BARRIER_ALGORITHM={}: refusing {algorithm}, in which the last \
                     arrival does not release everyone ({why}), so a thread that waits in a \
                     signal handler for another thread of its episode would hang them both, \
                     while POSIX programs may rely on the last arrival releasing everyone, as \
                     glibc's barrier does; using {SUBSTITUTE} instead",
                    value.unwrap_or_default().trim()
                );
                (SUBSTITUTE, Some(message))
            }
        },
        Some(Err(error)) => (
            Algorithm::Auto,
            Some(format!(
                "PHASERS_BARRIER_ALGORITHM: {error}; using auto for every barrier"
            )),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn on_and_off() {
        assert_eq!(enabled(None), (true, None));
        for on in ["on", "1", "TRUE", " yes ", ""] {
            assert_eq!(enabled(Some(on)), (true, None), "{on:?}");
        }
        for off in ["off", "0", "False", "NO"] {
            assert_eq!(enabled(Some(off)), (false, None), "{off:?}");
        }
        // Unknown: a warning naming the value, and the replacement stays on.
        let (on, warning) = enabled(Some("maybe"));
        assert!(on);
        let warning = warning.expect("an unknown value is reported");
        assert!(warning.contains(r#"PHASERS_PTHREAD="maybe""#), "{warning}");
    }

    #[test]
    fn algorithm_names() {
        assert_eq!(algorithm(None), (Algorithm::Auto, None));
        assert_eq!(algorithm(Some("auto")), (Algorithm::Auto, None));
        assert_eq!(
            algorithm(Some("Sense_Reversing")),
            (Algorithm::SenseReversing, None)
        );
        assert_eq!(
            algorithm(Some("central")),
            (Algorithm::SenseReversing, None)
        );
        for concrete in Algorithm::CONCRETE {
            let (chosen, warning) = algorithm(Some(concrete.name()));
            if last_arrival_releases(concrete) {
                assert_eq!((chosen, warning), (concrete, None), "{concrete}");
            } else {
                assert_eq!(chosen, SUBSTITUTE, "{concrete}");
                let warning = warning.expect("a refusal is reported");
                assert!(
                    warning.contains(&format!("refusing {concrete}")),
                    "{warning}"
                );
            }
        }
        // Refused under any spelling, with a warning that quotes the spelling given.
        for (spelling, refused) in [("MCS", "mcs"), ("tree", "combining-tree")] {
            let (chosen, warning) = algorithm(Some(spelling));
            assert_eq!(chosen, SUBSTITUTE, "{spelling}");
            let warning = warning.expect("a refusal is reported");
            assert!(
                warning.starts_with(&format!(
                    "PHASERS_BARRIER_ALGORITHM={spelling}: refusing {refused},"
                )),
                "{warning}"
            );
        }
        let (chosen, warning) = algorithm(Some("fastest-please"));
        assert_eq!(chosen, Algorithm::Auto);
        let warning = warning.expect("an unknown name is reported");
        assert!(
            warning.contains("fastest-please") && warning.ends_with("using auto for every barrier"),
            "{warning}"
        );
    }

    #[test]
    fn which_algorithms_release_on_the_last_arrival() {
        let kept: Vec<Algorithm> = Algorithm::CONCRETE
            .into_iter()
            .filter(|&algorithm| last_arrival_releases(algorithm))
            .collect();
        assert_eq!(
            kept,
            [
                Algorithm::SenseReversing,
                Algorithm::Counting,
                Algorithm::Ticket
            ]
        );
        assert!(last_arrival_releases(SUBSTITUTE));
        assert!(!last_arrival_releases(Algorithm::Auto));
    }
}
