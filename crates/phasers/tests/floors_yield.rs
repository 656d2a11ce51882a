//! The waiting path under floors that make a wake dear and a yield cheap (a 500 µs wake, a 1 ns
//! hand-off, a 10 µs round trip): waiters spin 40 µs even when threads outnumber cores, then yield
//! up to 256 times before they park, so the yield phase and the long spins carry most waits. Every
//! algorithm, the phaser and the team keep their invariants from 2 to 64 parties, and nothing spins
//! for ever on 2 cores. See `floors_stress_support`.

mod barrier_support;
mod floors_stress_support;

use floors_stress_support::{every_algorithm, phaser, team, use_floors};

const FLOORS: &str = "round_trip=10us,yield=1ns,wake=500us";

#[test]
fn barriers_2() {
    use_floors(FLOORS);
    every_algorithm(2);
}

#[test]
fn barriers_8() {
    use_floors(FLOORS);
    every_algorithm(8);
}

#[test]
fn barriers_64() {
    use_floors(FLOORS);
    every_algorithm(64);
}

#[test]
fn phaser_and_team() {
    use_floors(FLOORS);
    for parties in [2, 8, 64] {
        phaser(parties);
        team(parties);
    }
}
