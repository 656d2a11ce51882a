//! The `PHASERS_WAIT`, `PHASERS_SPIN` and `PHASERS_WAKE` environment overrides.
//!
//! Environment variables are global to the process, so this file holds a single test that sets,
//! checks and restores them in sequence; no other test shares this process.

use phasers::barrier::McsTree;
use phasers::wait::MAX_SPIN_ROUNDS;
use phasers::{Algorithm, Barrier, Error, WaitPolicy};

const WAIT: &str = "PHASERS_WAIT";
const SPIN: &str = "PHASERS_SPIN";
const WAKE: &str = "PHASERS_WAKE";

/// The message of an `InvalidArgument`, or a panic naming what came instead.
fn invalid_message<T: std::fmt::Debug>(result: phasers::Result<T>, what: &str) -> String {
    match result {
        Err(Error::InvalidArgument { message }) => message,
        other => panic!("{what}: expected InvalidArgument, got {other:?}"),
    }
}

/// A barrier built under the current environment still synchronizes.
fn works(barrier: &Barrier) {
    std::thread::scope(|s| {
        for mut p in barrier.participants() {
            s.spawn(move || {
                for episode in 0..50 {
                    assert_eq!(p.wait().unwrap().episode(), episode);
                }
            });
        }
    });
}

#[test]
fn environment_overrides() {
    // Whatever the caller's environment says, restore it at the end.
    let saved = (
        std::env::var_os(WAIT),
        std::env::var_os(SPIN),
        std::env::var_os(WAKE),
    );
    std::env::remove_var(WAIT);
    std::env::remove_var(SPIN);
    std::env::remove_var(WAKE);

    // An unparsable policy is an error naming the variable and the accepted values, from every
    // constructor, rather than being ignored.
    std::env::set_var(WAIT, "bogus");
    for algorithm in [Algorithm::Auto, Algorithm::Ticket] {
        let message = invalid_message(
            Barrier::with_algorithm(2, algorithm),
            "PHASERS_WAIT=bogus, new",
        );
        assert!(message.contains(WAIT), "{message}");
        assert!(message.contains("bogus"), "{message}");
        assert!(message.contains("auto, spin, yield or park"), "{message}");
    }
    invalid_message(Barrier::builder(2).build(), "PHASERS_WAIT=bogus, build");
    invalid_message(
        Barrier::builder(2).build_static::<McsTree>(),
        "PHASERS_WAIT=bogus, build_static",
    );
    // The environment is consulted even when the builder names a policy.
    invalid_message(
        Barrier::builder(2).wait_policy(WaitPolicy::Spin).build(),
        "PHASERS_WAIT=bogus with an explicit policy",
    );

    // A valid policy replaces the one the builder asked for, whatever its case and spacing.
    for (text, policy) in [
        ("park", WaitPolicy::Park),
        ("PARK", WaitPolicy::Park),
        (" yield ", WaitPolicy::Yield),
        ("spin", WaitPolicy::Spin),
        ("auto", WaitPolicy::Auto),
    ] {
        std::env::set_var(WAIT, text);
        let barrier = Barrier::builder(2)
            .wait_policy(WaitPolicy::Spin)
            .build()
            .unwrap_or_else(|e| panic!("PHASERS_WAIT={text:?}: {e}"));
        assert_eq!(barrier.wait_policy(), policy, "PHASERS_WAIT={text:?}");
        let barrier = Barrier::with_algorithm(3, Algorithm::McsTree).unwrap();
        assert_eq!(barrier.wait_policy(), policy, "PHASERS_WAIT={text:?}");
    }
    std::env::set_var(WAIT, "park");
    works(&Barrier::with_algorithm(4, Algorithm::Dissemination).unwrap());
    std::env::remove_var(WAIT);

    // An unparsable spin count, or one above `MAX_SPIN_ROUNDS`, is an error naming the variable.
    for bad in [
        "abc",
        "-1",
        "1.5",
        "",
        "99999999999",
        "16777217",
        "4294967295",
    ] {
        std::env::set_var(SPIN, bad);
        let message = invalid_message(Barrier::with_algorithm(2, Algorithm::Auto), "PHASERS_SPIN");
        assert!(message.contains(SPIN), "PHASERS_SPIN={bad:?}: {message}");
        assert!(
            message.contains("whole number"),
            "PHASERS_SPIN={bad:?}: {message}"
        );
        let whole: Option<u64> = bad.parse().ok();
        if whole.is_some_and(|spins| spins > u64::from(MAX_SPIN_ROUNDS)) {
            assert!(
                message.contains(&MAX_SPIN_ROUNDS.to_string()),
                "PHASERS_SPIN={bad:?} names the limit: {message}"
            );
        }
    }
    // A valid count, zero included (park almost at once), is accepted and the barrier works.
    for good in ["0", "2000", " 16 "] {
        std::env::set_var(SPIN, good);
        let barrier = Barrier::builder(3)
            .algorithm(Algorithm::Tournament)
            .build()
            .unwrap_or_else(|e| panic!("PHASERS_SPIN={good:?}: {e}"));
        // The spin count does not change the policy.
        assert_eq!(barrier.wait_policy(), WaitPolicy::Auto);
        works(&barrier);
    }
    // Both at once: the policy error is reported first, and fixing it reveals the spin error.
    std::env::set_var(WAIT, "bogus");
    std::env::set_var(SPIN, "abc");
    assert!(invalid_message(Barrier::with_algorithm(2, Algorithm::Auto), "both").contains(WAIT));
    std::env::set_var(WAIT, "park");
    assert!(invalid_message(Barrier::with_algorithm(2, Algorithm::Auto), "spin").contains(SPIN));

    // How releases wake sleepers: `all`, or a fanout from 1 to 64; anything else is an error
    // naming the variable and both accepted forms.
    std::env::remove_var(WAIT);
    std::env::remove_var(SPIN);
    for bad in ["0", "65", "tree", "-4", "", "4x"] {
        std::env::set_var(WAKE, bad);
        let message = invalid_message(Barrier::with_algorithm(2, Algorithm::Auto), "PHASERS_WAKE");
        assert!(message.contains(WAKE), "PHASERS_WAKE={bad:?}: {message}");
        assert!(
            message.contains("all") && message.contains("from 1 to 64"),
            "PHASERS_WAKE={bad:?}: {message}"
        );
    }
    // Every accepted form builds a barrier that works, oversubscribed included (a tree of one:
    // each woken sleeper wakes the next).
    for good in ["all", " ALL ", "1", "4", "64"] {
        std::env::set_var(WAKE, good);
        std::env::set_var(WAIT, "park");
        let barrier = Barrier::with_algorithm(8, Algorithm::Counting)
            .unwrap_or_else(|e| panic!("PHASERS_WAKE={good:?}: {e}"));
        works(&barrier);
    }
    std::env::remove_var(WAKE);

    // Unset: the builder's own policy is back.
    std::env::remove_var(WAIT);
    std::env::remove_var(SPIN);
    let barrier = Barrier::builder(2)
        .wait_policy(WaitPolicy::Yield)
        .build()
        .unwrap();
    assert_eq!(barrier.wait_policy(), WaitPolicy::Yield);
    assert_eq!(
        Barrier::with_algorithm(2, Algorithm::Auto)
            .unwrap()
            .wait_policy(),
        WaitPolicy::Auto
    );

    // A barrier keeps the policy it was built with when the environment changes later.
    std::env::set_var(WAIT, "park");
    assert_eq!(barrier.wait_policy(), WaitPolicy::Yield);
    std::env::remove_var(WAIT);

    match saved.0 {
        Some(value) => std::env::set_var(WAIT, value),
        None => std::env::remove_var(WAIT),
    }
    match saved.1 {
        Some(value) => std::env::set_var(SPIN, value),
        None => std::env::remove_var(SPIN),
    }
    match saved.2 {
        Some(value) => std::env::set_var(WAKE, value),
        None => std::env::remove_var(WAKE),
    }
}
