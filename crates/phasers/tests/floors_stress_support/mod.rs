//! The stress run shared by the `floors_*` test files: every algorithm, 2 to 64 parties on
//! whatever cores the machine has (2 in CI), under floors set by `PHASERS_FLOORS` so that the
//! budgets derived from them force one part of the waiting path, whatever this machine measures.
//!
//! Each file is its own process, so each can set the variable before the first object is built
//! (the floors are read once per process). The checks are `barrier_support`'s: the barrier
//! invariant after every wait, the episode numbers, one leader and one completion per episode.
//! The phaser and the team inherit the same budgets; they run too, with their own checks.

#![allow(dead_code)] // each file uses its part

use std::sync::Once;

use crate::barrier_support::{builder_with_record, run_checked, Record};
use phasers::{Algorithm, Floors, FloorsSource, Mode, Phaser, Team};

/// Sets `PHASERS_FLOORS` to `floors` before any object of this process is built, and checks that
/// the library took it.
pub fn use_floors(floors: &'static str) {
    static SET: Once = Once::new();
    SET.call_once(|| std::env::set_var(Floors::ENV_VAR, floors));
    let current = Floors::current().expect("the test's PHASERS_FLOORS parses");
    assert_eq!(current.source(), FloorsSource::Environment, "{current}");
}

/// Episodes per run: enough for the adaptive budget to move many times, few enough that 64 parked
/// threads on 2 cores finish in seconds.
fn episodes_for(parties: usize) -> u64 {
    match parties {
        2 => 5_000,
        8 => 1_000,
        _ => 300,
    }
}

/// Every algorithm and `Auto` at `parties`, checked after every wait.
pub fn every_algorithm(parties: usize) {
    let episodes = episodes_for(parties);
    for algorithm in std::iter::once(Algorithm::Auto).chain(Algorithm::CONCRETE) {
        let record = Record::new(parties, episodes);
        let barrier = builder_with_record(parties, &record)
            .algorithm(algorithm)
            .build()
            .expect("valid barrier");
        let what = format!("{algorithm} ({}) with {parties}", barrier.algorithm());
        run_checked(&what, &barrier, &record, episodes);
    }
}

/// A flat phaser of `parties` registrations calling `next`, each checking the phase it completed.
pub fn phaser(parties: usize) {
    let episodes = episodes_for(parties);
    let (_phaser, creator) = Phaser::new(Mode::SigWait).expect("valid phaser");
    let mut registrations: Vec<_> = (1..parties)
        .map(|_| creator.register(Mode::SigWait).expect("a child registers"))
        .collect();
    registrations.push(creator);
    std::thread::scope(|s| {
        for mut registration in registrations {
            s.spawn(move || {
                for expected in 0..episodes {
                    let phase = registration.next().expect("next completes");
                    assert_eq!(phase, expected, "a registration skipped a phase");
                }
            });
        }
    });
}

/// A team of `parties` members: a barrier, then an allreduce whose sum every member checks.
pub fn team(parties: usize) {
    let episodes = episodes_for(parties) / 4;
    let team = Team::new(parties).expect("valid team");
    let expected: u64 = (0..parties as u64).sum();
    std::thread::scope(|s| {
        for mut member in team.participants() {
            s.spawn(move || {
                let rank = member.rank() as u64;
                for _ in 0..episodes {
                    member.barrier().expect("the barrier completes");
                    let mut word = [0];
                    member
                        .allreduce(&[rank], &mut word, phasers::Op::Sum)
                        .expect("the allreduce completes");
                    assert_eq!(word[0], expected, "a member saw a wrong sum");
                }
            });
        }
    });
}

/// The four tests of a `floors_*` file, under the floors text `$floors`.
#[macro_export]
macro_rules! floors_stress_tests {
    ($floors:expr) => {
        #[test]
        fn barriers_2() {
            floors_stress_support::use_floors($floors);
            floors_stress_support::every_algorithm(2);
        }

        #[test]
        fn barriers_8() {
            floors_stress_support::use_floors($floors);
            floors_stress_support::every_algorithm(8);
        }

        #[test]
        fn barriers_64() {
            floors_stress_support::use_floors($floors);
            floors_stress_support::every_algorithm(64);
        }

        #[test]
        fn phaser_and_team() {
            floors_stress_support::use_floors($floors);
            for parties in [2, 8, 64] {
                floors_stress_support::phaser(parties);
                floors_stress_support::team(parties);
            }
        }
    };
}
