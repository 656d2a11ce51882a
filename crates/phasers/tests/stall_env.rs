//! `PHASERS_STALL`: the stall time of objects whose builder sets none.
//!
//! Environment variables are global to the process, so this file holds a single test that sets,
//! checks and restores the variable in sequence; no other test shares this process.

use std::time::Duration;

use phasers::barrier::McsTree;
use phasers::wait::{DEFAULT_STALL_AFTER, STALL_ENV};
use phasers::{Algorithm, AnyThreadBarrier, Barrier, Error, Mode, Op, Phaser, Reduction, Team};

/// The stall time of one object of each kind built now, without a builder setting.
fn stall_times() -> [Option<Duration>; 4] {
    [
        Barrier::with_algorithm(2, Algorithm::Ticket)
            .unwrap()
            .stall_after(),
        Team::new(2).unwrap().stall_after(),
        Phaser::new(Mode::SigWait).unwrap().0.stall_after(),
        Reduction::<u64>::new(2, Op::Sum).unwrap().stall_after(),
    ]
}

/// The message of an `InvalidArgument`, or a panic naming what came instead.
fn invalid_message<T: std::fmt::Debug>(result: phasers::Result<T>, what: &str) -> String {
    match result {
        Err(Error::InvalidArgument { message }) => message,
        other => panic!("{what}: expected InvalidArgument, got {other:?}"),
    }
}

#[test]
fn phasers_stall_sets_the_stall_time_and_a_bad_value_fails_every_build() {
    let saved = std::env::var_os(STALL_ENV);

    std::env::remove_var(STALL_ENV);
    assert_eq!(stall_times(), [Some(DEFAULT_STALL_AFTER); 4]);

    for (text, after) in [
        ("500ms", Some(Duration::from_millis(500))),
        ("1.5s", Some(Duration::from_millis(1500))),
        ("30", Some(Duration::from_secs(30))),
        ("2min", Some(Duration::from_secs(120))),
        ("off", None),
        ("0", None),
    ] {
        std::env::set_var(STALL_ENV, text);
        assert_eq!(stall_times(), [after; 4], "{STALL_ENV}={text}");
    }

    // The builder's choice wins over the environment's.
    std::env::set_var(STALL_ENV, "500ms");
    let two = Duration::from_secs(2);
    assert_eq!(
        Barrier::builder(2)
            .stall_after(two)
            .build()
            .unwrap()
            .stall_after(),
        Some(two)
    );
    assert_eq!(
        Team::builder(2)
            .stall_after(two)
            .build()
            .unwrap()
            .stall_after(),
        Some(two)
    );
    assert_eq!(
        Phaser::builder()
            .stall_after(two)
            .build()
            .unwrap()
            .0
            .stall_after(),
        Some(two)
    );
    let group = Reduction::<u64>::builder(2)
        .op(Op::Sum)
        .stall_after(Duration::MAX)
        .build()
        .unwrap();
    assert_eq!(group.stall_after(), None);

    // A value that does not parse fails every build, naming the variable, the value and what to
    // write instead, even where the builder sets its own stall time.
    for bad in ["soon", "10 seconds", "-1s", "1h"] {
        std::env::set_var(STALL_ENV, bad);
        let messages = [
            invalid_message(Barrier::with_algorithm(2, Algorithm::Auto), "Barrier::new"),
            invalid_message(
                Barrier::builder(2).build_static::<McsTree>(),
                "build_static",
            ),
            invalid_message(
                Barrier::builder(2).stall_after(two).build(),
                "Barrier with stall_after",
            ),
            invalid_message(
                AnyThreadBarrier::with_algorithm(2, Algorithm::Counting),
                "AnyThreadBarrier",
            ),
            invalid_message(Team::new(2), "Team::new"),
            invalid_message(Team::builder(2).stall_after(two).build(), "Team builder"),
            invalid_message(Phaser::new(Mode::SigWait), "Phaser::new"),
            invalid_message(Phaser::builder().stall_after(two).build(), "Phaser builder"),
            invalid_message(Reduction::<u64>::new(2, Op::Sum), "Reduction::new"),
        ];
        for message in messages {
            assert!(message.contains(STALL_ENV), "{message}");
            assert!(message.contains(&format!("{bad:?}")), "{message}");
            assert!(
                message.contains("10s, 500ms or 1.5s, or to off"),
                "{message}"
            );
        }
    }

    match saved {
        Some(value) => std::env::set_var(STALL_ENV, value),
        None => std::env::remove_var(STALL_ENV),
    }
}
