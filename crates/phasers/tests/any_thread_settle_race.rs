//! Regression: [`AnyThreadBarrier::settle`] called while a call starts must not block on that
//! call's slot. It used to read the ticket count, and then lock each slot in turn; a call that took
//! its ticket just after that read held its slot's lock for its whole wait, so `settle` waited for
//! an episode that needed `settle`'s own caller to complete it: a deadlock, seen about once in 100
//! runs of `any_thread_timeout`. Now a held slot makes `settle` count again, and it reports the
//! barrier in use.

mod watchdog_support;

use std::sync::Arc;

use phasers::{Algorithm, AnyThreadBarrier};
use watchdog_support::within;

/// Rounds per algorithm: each round races one starting call against `settle`, so a few hundred
/// give the window many chances, in well under a second.
const ROUNDS: usize = 300;

#[test]
fn settle_racing_a_starting_call_reports_in_use_instead_of_blocking() {
    for algorithm in Algorithm::CONCRETE {
        let in_use = within("settle against a starting call", move || {
            let mut in_use = 0;
            for _ in 0..ROUNDS {
                let barrier = Arc::new(AnyThreadBarrier::with_algorithm(2, algorithm).unwrap());
                let caller = {
                    let barrier = Arc::clone(&barrier);
                    std::thread::spawn(move || barrier.wait().map(|_| ()))
                };
                // Until the call is inside, settle finds nothing to wait for; once it is, settle
                // must say so rather than wait for the lock the call holds.
                while barrier.settle().is_ok() {
                    std::hint::spin_loop();
                }
                in_use += 1;
                barrier.wait().unwrap();
                caller.join().unwrap().unwrap();
                barrier.settle().unwrap();
            }
            in_use
        });
        assert_eq!(in_use, ROUNDS, "{algorithm:?}");
    }
}
