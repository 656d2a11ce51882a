//! The waiting path under floors that make parking cheap next to everything else (a 1 µs wake):
//! waiters spin about a microsecond, yield once, and park in almost every wait, and their spin
//! budgets shrink and grow as waits end before or after a wake. Every algorithm, the phaser and
//! the team keep their invariants from 2 to 64 parties. See `floors_stress_support`.

mod barrier_support;
mod floors_stress_support;

use floors_stress_support::{every_algorithm, phaser, team, use_floors};

const FLOORS: &str = "round_trip=50ns,yield=1us,wake=1us";

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
