//! The waiting path under floors that make a wake dear and a yield cheap (a 500 µs wake, a 1 ns
//! hand-off, a 10 µs round trip): with a core each, waiters spin up to 500 µs and then yield 256
//! times; oversubscribed, they yield 256 / (parties per core) times before they park. So long
//! spins and the yield phase carry most waits. Every algorithm, the phaser and the team keep their
//! invariants from 2 to 64 parties, and nothing spins for ever on 2 cores. See
//! `floors_stress_support`.

mod barrier_support;
mod floors_stress_support;

floors_stress_tests!("round_trip=10us,yield=1ns,wake=500us");
