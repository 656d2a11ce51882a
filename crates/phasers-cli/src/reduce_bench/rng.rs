//! The random source of the stall tables: a seeded xorshift64* generator and Box–Muller normals.
//!
//! Written here rather than taken from `rand` so that a stall table depends only on this file and
//! the seed: the same `--seed` gives the same stalls with every version of every dependency, and
//! the C baseline is handed the very table the Rust rows use.

/// Marsaglia's xorshift with Vigna's multiplicative output scrambling (xorshift64*): 64 bits of
/// state, fast, and more than random enough to draw stall lengths.
#[derive(Debug, Clone)]
pub struct XorShift64Star {
    state: u64,
    /// The second normal of the last Box–Muller pair, not handed out yet.
    spare_normal: Option<f64>,
}

impl XorShift64Star {
    /// A generator whose sequence is fixed by `seed`. The seed goes through [`mix`] first, so
    /// nearby seeds (1, 2, 3) start far apart, and a zero state (xorshift's one fixed point) is
    /// never reached.
    pub fn new(seed: u64) -> Self {
        let state = match mix(seed) {
            0 => GOLDEN_GAMMA,
            state => state,
        };
        XorShift64Star {
            state,
            spare_normal: None,
        }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.state;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.state = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A uniform number in (0, 1]: never 0, so its logarithm is finite.
    pub fn next_unit(&mut self) -> f64 {
        // The top 53 bits fill a double's mantissa exactly.
        ((self.next_u64() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A standard normal number (mean 0, standard deviation 1), by the Box–Muller transform; each
    /// pair of uniforms gives two independent normals, the second kept for the next call.
    pub fn next_normal(&mut self) -> f64 {
        if let Some(spare) = self.spare_normal.take() {
            return spare;
        }
        let radius = (-2.0 * self.next_unit().ln()).sqrt();
        let angle = std::f64::consts::TAU * self.next_unit();
        self.spare_normal = Some(radius * angle.sin());
        radius * angle.cos()
    }
}

/// The increment of SplitMix64: 2^64 divided by the golden ratio, an odd number whose multiples
/// spread evenly over the 64-bit range.
const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64's output function: a bijection on 64-bit numbers that scatters similar inputs, used
/// to turn a seed and a point's parameters into independent generator states.
pub fn mix(value: u64) -> u64 {
    let mut z = value.wrapping_add(GOLDEN_GAMMA);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_sequence() {
        let mut a = XorShift64Star::new(7);
        let mut b = XorShift64Star::new(7);
        let mut c = XorShift64Star::new(8);
        let first: Vec<u64> = (0..100).map(|_| a.next_u64()).collect();
        let second: Vec<u64> = (0..100).map(|_| b.next_u64()).collect();
        let other: Vec<u64> = (0..100).map(|_| c.next_u64()).collect();
        assert_eq!(first, second);
        assert_ne!(first, other);
    }

    #[test]
    fn a_seed_that_mixes_to_zero_still_runs() {
        // Whatever the seed, the state is never zero, so the sequence never sticks at zero.
        let mut generator = XorShift64Star {
            state: GOLDEN_GAMMA,
            spare_normal: None,
        };
        assert_ne!(generator.next_u64(), 0);
        assert!((0..1000).all(|seed| XorShift64Star::new(seed).state != 0));
    }

    #[test]
    fn uniforms_stay_in_the_half_open_unit_interval() {
        let mut generator = XorShift64Star::new(1);
        let values: Vec<f64> = (0..100_000).map(|_| generator.next_unit()).collect();
        assert!(values.iter().all(|&u| u > 0.0 && u <= 1.0));
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        // The standard error of the mean of 100,000 uniforms is 0.0009.
        assert!((mean - 0.5).abs() < 0.005, "{mean}");
    }

    #[test]
    fn normals_have_mean_zero_and_unit_deviation() {
        let mut generator = XorShift64Star::new(3);
        let values: Vec<f64> = (0..200_000).map(|_| generator.next_normal()).collect();
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
        assert!(mean.abs() < 0.01, "{mean}");
        assert!((variance.sqrt() - 1.0).abs() < 0.01, "{variance}");
        // About 68.3% within one deviation, 95.4% within two.
        let within = |k: f64| values.iter().filter(|v| v.abs() <= k).count() as f64 / n;
        assert!((within(1.0) - 0.683).abs() < 0.01);
        assert!((within(2.0) - 0.954).abs() < 0.005);
    }

    #[test]
    fn mixing_scatters_neighbours() {
        assert_ne!(mix(1), mix(2));
        // Neighbouring inputs differ in about half their bits once mixed.
        let differing = (mix(1) ^ mix(2)).count_ones();
        assert!((16..=48).contains(&differing), "{differing}");
    }
}
