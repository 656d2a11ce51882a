//! The waiting path under floors that make parking cheap next to everything else (a 1 µs wake):
//! waiters spin about a microsecond (none when oversubscribed), yield once (four times when
//! oversubscribed), and park in almost every wait, and their spin budgets shrink and grow as waits
//! end before or after a wake. Every algorithm, the phaser and the team keep their invariants from
//! 2 to 64 parties. See `floors_stress_support`.

mod barrier_support;
mod floors_stress_support;

floors_stress_tests!("round_trip=50ns,yield=1us,wake=1us");
