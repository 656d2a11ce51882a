//! A tiny deterministic generator for random sleeps (xorshift64*): no dependency, and a failing
//! schedule can be replayed from the case's seed.

use std::time::Duration;

pub struct Rng(u64);

impl Rng {
    /// A generator for one thread of one rank of one case.
    pub fn new(seed: u64, rank: usize, thread: usize) -> Rng {
        let mixed = seed ^ ((rank as u64 + 1) << 32) ^ ((thread as u64 + 1) << 12);
        let mut rng = Rng(mixed | 1);
        rng.next();
        rng
    }

    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// With probability 1/`one_in`, sleeps up to `longest`: late arrivals on random ranks and
    /// threads, so every rank is sometimes the last one.
    pub fn maybe_sleep(&mut self, one_in: u64, longest: Duration) {
        if self.below(one_in) == 0 {
            let micros = self.below(longest.as_micros() as u64 + 1);
            std::thread::sleep(Duration::from_micros(micros));
        }
    }
}
