//! What the reduction and team tests share besides the watchdog: seeded, replayable inputs and
//! arrival delays, and collecting the outcomes of a group of threads. Included by
//! `reduce_support` and `team_support`.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use super::watchdog_support::payload_text;

/// The values of `outcomes` (rank, what the thread returned or its panic), or a failure listing
/// every panic among them (the first is usually the cause, the others its consequences, such as
/// `Broken`).
pub fn collect_values<R>(what: &str, outcomes: Vec<(usize, std::thread::Result<R>)>) -> Vec<R> {
    let mut values = Vec::new();
    let mut panics = Vec::new();
    for (rank, outcome) in outcomes {
        match outcome {
            Ok(value) => values.push(value),
            Err(payload) => panics.push(format!("rank {rank}: {}", payload_text(&*payload))),
        }
    }
    assert!(panics.is_empty(), "{what}:\n{}", panics.join("\n"));
    values
}

/// Mixes the parts into one well-spread 64-bit value (a splitmix-style finalizer), so every input
/// element and every delay is a pure function of a seed and its coordinates and can be replayed,
/// and so members of one team derive the same random sequence from a shared seed without talking.
pub fn hash(parts: &[u64]) -> u64 {
    parts
        .iter()
        .fold(0x243F_6A88_85A3_08D3, |state: u64, &part| {
            let mut x = (state ^ part).wrapping_add(0x9E37_79B9_7F4A_7C15);
            x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            x ^ (x >> 31)
        })
}

/// Delays an arrival by what `h` says: nothing, a sleep, a busy spin or a run of yields, each up to
/// 200 microseconds. Sleeping participants arrive late without holding a core; spinning ones hold
/// a core, which on a 2-core machine delays everyone else too. Both orders of arrival matter to the
/// dynamic algorithms, which pair whoever comes first.
pub fn arrive_after(h: u64) {
    let micros = Duration::from_micros(h % 200);
    match (h >> 40) % 4 {
        0 => {}
        1 => std::thread::sleep(micros),
        2 => {
            let start = Instant::now();
            while start.elapsed() < micros {
                std::hint::spin_loop();
            }
        }
        _ => {
            let start = Instant::now();
            while start.elapsed() < micros {
                std::thread::yield_now();
            }
        }
    }
}
