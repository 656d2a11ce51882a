//! A small deterministic generator for the model's draws (no dependency, no global state).
//!
//! Every draw comes from a stream keyed by what it is for (say, the work of thread 3 in episode
//! 120), not from one sequence consumed in event order. So two rules run on the same machine see
//! exactly the same work and the same preemptions, although they process different events: the
//! rule is the only difference between their runs.

/// SplitMix64 (Steele, Lea and Flood, 2014): a 64-bit counter stepped by the golden ratio and
/// mixed by two multiply-xorshift rounds. Fast, passes BigCrush, and any key gives a good stream.
pub(crate) struct Stream {
    state: u64,
}

/// SplitMix64's increment: 2^64 divided by the golden ratio, odd.
const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;
/// SplitMix64's two mixing multipliers (Stafford's "Mix13" variant of MurmurHash3's finalizer).
const MIX_1: u64 = 0xbf58_476d_1ce4_e5b9;
const MIX_2: u64 = 0x94d0_49bb_1331_11eb;
/// A double has 53 bits of mantissa: the top 53 bits of a draw, scaled by 2^-53, give a uniform
/// value in `[0, 1)`.
const MANTISSA_BITS: u32 = 53;

impl Stream {
    /// The stream for `keys` under `seed`: each key is mixed into the state in turn.
    pub(crate) fn keyed(seed: u64, keys: &[u64]) -> Stream {
        let mut stream = Stream { state: seed };
        for &key in keys {
            stream.state = stream.next_u64() ^ key;
        }
        stream
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN_GAMMA);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(MIX_1);
        z = (z ^ (z >> 27)).wrapping_mul(MIX_2);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next_u64() >> (64 - MANTISSA_BITS)) as f64 / (1u64 << MANTISSA_BITS) as f64
    }

    /// Uniform in `0..bound` (`bound` > 0); the modulo bias is below 2^-40 for the bounds used.
    pub(crate) fn below(&mut self, bound: u64) -> u64 {
        self.next_u64() % bound
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_differ_by_key() {
        let draw = |keys: &[u64]| Stream::keyed(7, keys).next_u64();
        assert_eq!(draw(&[1, 2]), draw(&[1, 2]));
        assert_ne!(draw(&[1, 2]), draw(&[2, 1]));
        let mut stream = Stream::keyed(7, &[3]);
        let mean = (0..10_000).map(|_| stream.unit()).sum::<f64>() / 10_000.0;
        assert!((mean - 0.5).abs() < 0.02, "{mean}");
    }
}
