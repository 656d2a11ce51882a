//! Arrival spread, as seed 003 injects it: each participant stalls before it calls, for a time drawn
//! from a normal of the spread's mean and deviation, clipped to [0, max]. The seed's spreads are
//! in cycles; the presets take the same numbers as nanoseconds, as the issue asks. Clipping piles
//! the tails onto 0 and `max`, so every report states the realized mean and deviation.
//!
//! The generator (xorshift64*, Box–Muller normals) is written here rather than taken from `rand`,
//! so a stall table depends only on this file and `--seed`, whatever the dependencies' versions,
//! and the C baseline is handed the very table the Rust rows use.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// One arrival spread: a preset or one given on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// The preset's name, or `None` for one given as numbers.
    pub preset: Option<Preset>,
    /// The longest stall in ns; 0 means no stall at all.
    pub max_ns: f64,
    /// The mean of the normal the stalls are drawn from, in ns.
    pub mean_ns: f64,
    /// Its standard deviation, in ns.
    pub stddev_ns: f64,
}

/// The seed's spreads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// Every participant arrives at once.
    None,
    /// Max 15 µs, mean 8 µs, stddev 3.9 µs.
    Low,
    /// Max 128 µs, mean 37 µs, stddev 18.5 µs.
    Medium,
    /// Max 555 µs, mean 184 µs, stddev 102 µs.
    High,
}

impl Preset {
    /// Every preset, in increasing spread.
    pub const ALL: [Preset; 4] = [Preset::None, Preset::Low, Preset::Medium, Preset::High];

    /// The name on the command line and in reports.
    pub fn name(self) -> &'static str {
        ["none", "low", "medium", "high"][self as usize]
    }

    /// The spread it stands for.
    pub fn spread(self) -> Spread {
        let [max_ns, mean_ns, stddev_ns] = [
            [0.0; 3],
            [15_000.0, 8_000.0, 3_900.0],
            [128_000.0, 37_000.0, 18_500.0],
            [555_000.0, 184_000.0, 102_000.0],
        ][self as usize];
        Spread {
            preset: Some(self),
            max_ns,
            mean_ns,
            stddev_ns,
        }
    }
}

/// The longest stall `--spread` accepts: a second, far beyond any reduction's own time.
const MAX_STALL_NS: f64 = 1e9;

impl Spread {
    /// The name in tables and files: the preset's, or `MAX/MEAN/STDDEV` in microseconds.
    pub fn name(&self) -> String {
        match self.preset {
            Some(preset) => preset.name().to_owned(),
            None => format!(
                "{}/{}/{}us",
                self.max_ns / 1e3,
                self.mean_ns / 1e3,
                self.stddev_ns / 1e3
            ),
        }
    }

    /// Whether every stall is zero.
    pub fn is_none(&self) -> bool {
        self.max_ns == 0.0
    }

    /// The generator seed for `threads` participants: every contender at one point sees the same
    /// stalls, and different points independent ones.
    pub fn seed_for(&self, seed: u64, threads: usize) -> u64 {
        [
            threads as u64,
            self.max_ns.to_bits(),
            self.mean_ns.to_bits(),
            self.stddev_ns.to_bits(),
        ]
        .into_iter()
        .fold(mix(seed), |state, value| mix(state ^ value))
    }
}

/// Parses one entry of `--spread`: a preset name, or `MAX/MEAN/STDDEV` in microseconds.
pub fn parse_spread(text: &str) -> Result<Spread, String> {
    let text = text.trim();
    if let Some(preset) = Preset::ALL.into_iter().find(|preset| preset.name() == text) {
        return Ok(preset.spread());
    }
    let explain = |why: &str| {
        format!(
            "{text:?} is not a spread: {why}; give none, low, medium or high (the seed's), or \
             MAX/MEAN/STDDEV in microseconds such as 60/30/10"
        )
    };
    let numbers: Vec<Option<f64>> = text
        .trim_end_matches("us")
        .split('/')
        .map(|part| part.trim().parse::<f64>().ok().map(|us| us * 1e3))
        .collect();
    let [Some(max_ns), Some(mean_ns), Some(stddev_ns)] = numbers[..] else {
        return Err(explain("not a preset, nor three numbers separated by /"));
    };
    if ![max_ns, mean_ns, stddev_ns]
        .iter()
        .all(|value| value.is_finite() && *value >= 0.0)
    {
        return Err(explain("every number must be finite and at least 0"));
    }
    if max_ns > MAX_STALL_NS {
        return Err(explain(
            "the longest stall allowed is 1000000 us (a second)",
        ));
    }
    if mean_ns > max_ns {
        return Err(explain("the mean is above the max"));
    }
    Ok(Spread {
        preset: None,
        max_ns,
        mean_ns,
        stddev_ns,
    })
}

/// The stalls of one point: a row per iteration, a column per participant, in nanoseconds. Every
/// contender of the point, the OpenMP ones included, reads the same table.
#[derive(Debug, Clone, PartialEq)]
pub struct Stalls {
    threads: usize,
    ns: Vec<u64>,
}

impl Stalls {
    /// `iterations` rows for `threads` participants drawn from `spread` with generator `seed`.
    pub fn generate(spread: &Spread, threads: usize, iterations: usize, seed: u64) -> Self {
        let mut generator = Generator::new(seed);
        let ns = (0..threads.saturating_mul(iterations))
            .map(|_| match spread.is_none() {
                true => 0,
                false => (spread.mean_ns + spread.stddev_ns * generator.next_normal())
                    .clamp(0.0, spread.max_ns)
                    .round() as u64,
            })
            .collect();
        Stalls { threads, ns }
    }

    /// The table [`Stalls::as_slice`] gave: how a child process gets the very stalls of its point.
    pub fn from_table(threads: usize, ns: Vec<u64>) -> Result<Self, String> {
        if threads == 0 || ns.len() % threads != 0 {
            return Err(format!(
                "a stall table of {} values has no rows of {threads} participants",
                ns.len()
            ));
        }
        Ok(Stalls { threads, ns })
    }

    /// The stall of participant `rank` in `iteration`; past the last row, none.
    pub fn get(&self, iteration: usize, rank: usize) -> u64 {
        let slot = iteration * self.threads + rank;
        self.ns.get(slot).copied().unwrap_or(0)
    }

    /// The iterations the table has stalls for.
    pub fn iterations(&self) -> usize {
        self.ns.len().checked_div(self.threads).unwrap_or(0)
    }

    /// The whole table, row by row.
    pub fn as_slice(&self) -> &[u64] {
        &self.ns
    }

    /// The mean, sample standard deviation and largest of the stalls actually drawn.
    pub fn realized(&self) -> Realized {
        let count = self.ns.len().max(1) as f64;
        let mean = self.ns.iter().map(|&ns| ns as f64).sum::<f64>() / count;
        let squares: f64 = self.ns.iter().map(|&ns| (ns as f64 - mean).powi(2)).sum();
        Realized {
            mean_ns: mean,
            stddev_ns: (squares / (count - 1.0).max(1.0)).sqrt(),
            max_ns: self.ns.iter().copied().max().unwrap_or(0),
        }
    }
}

/// What a stall table actually holds, for the report.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Realized {
    /// The mean stall in ns.
    pub mean_ns: f64,
    /// The sample standard deviation in ns.
    pub stddev_ns: f64,
    /// The longest stall in ns.
    pub max_ns: u64,
}

/// How a stall waits: it stands for work, so it spins, as in the seed; but when participants
/// outnumber the cores a spinning staller would hold a core a whole time slice while the others
/// wait for it, so then it yields between looks at the clock (as the C baseline does).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StallPolicy {
    /// Spin on the clock: every participant has a core.
    Spin,
    /// Yield the core between looks at the clock: participants outnumber the cores.
    Yield,
}

impl StallPolicy {
    /// The policy for `threads` participants on this machine.
    pub fn for_threads(threads: usize) -> Self {
        match phasers::is_oversubscribed(threads) {
            true => StallPolicy::Yield,
            false => StallPolicy::Spin,
        }
    }

    /// Waits `ns` nanoseconds from now; no stall returns at once, without reading the clock.
    #[inline]
    pub fn stall(self, ns: u64) {
        if ns == 0 {
            return;
        }
        let deadline = Instant::now() + Duration::from_nanos(ns);
        while Instant::now() < deadline {
            match self {
                StallPolicy::Spin => std::hint::spin_loop(),
                StallPolicy::Yield => std::thread::yield_now(),
            }
        }
    }
}

/// Marsaglia's xorshift with Vigna's output scrambling (xorshift64*), and Box–Muller normals.
struct Generator {
    state: u64,
    /// The second normal of the last Box–Muller pair, not handed out yet.
    spare: Option<f64>,
}

/// SplitMix64's increment: 2^64 over the golden ratio.
const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

impl Generator {
    /// Mixed first, so nearby seeds start far apart and the state is never xorshift's fixed 0.
    fn new(seed: u64) -> Self {
        let state = match mix(seed) {
            0 => GOLDEN_GAMMA,
            state => state,
        };
        Generator { state, spare: None }
    }

    fn next_u64(&mut self) -> u64 {
        let mut x = self.state;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.state = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in (0, 1]: never 0, so its logarithm is finite.
    fn next_unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    fn next_normal(&mut self) -> f64 {
        if let Some(spare) = self.spare.take() {
            return spare;
        }
        let radius = (-2.0 * self.next_unit().ln()).sqrt();
        let angle = std::f64::consts::TAU * self.next_unit();
        self.spare = Some(radius * angle.sin());
        radius * angle.cos()
    }
}

/// SplitMix64's output function: a bijection that scatters similar inputs.
fn mix(value: u64) -> u64 {
    let mut z = value.wrapping_add(GOLDEN_GAMMA);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_have_the_asked_mean_and_deviation_clipped_to_zero_and_the_max() {
        let spread = parse_spread("1000000/500/40").unwrap();
        let realized = Stalls::generate(&spread, 8, 20_000, 42).realized();
        // 160,000 draws: the standard error of the mean is 100 ns.
        let off = (realized.mean_ns - 500e3, realized.stddev_ns - 40e3);
        assert!(off.0.abs() < 600.0 && off.1.abs() < 600.0, "{realized:?}");
        let stalls = Stalls::generate(&Preset::Low.spread(), 32, 10_000, 7);
        let values = stalls.as_slice();
        let n = values.len() as f64;
        // Mean 8 µs and stddev 3.9 µs put 3.6% of the normal above 15 µs and 2% below 0: clipped
        // onto the ends, not redrawn.
        let share = |at: u64| values.iter().filter(|&&ns| ns == at).count() as f64 / n;
        assert!((share(15_000) - 0.036).abs() < 0.005);
        assert!((share(0) - 0.020).abs() < 0.004);
        assert_eq!(stalls.realized().max_ns, 15_000);
        let none = Stalls::generate(&Preset::None.spread(), 4, 100, 1);
        assert_eq!(none.realized().max_ns, 0);
    }

    #[test]
    fn tables_depend_on_the_seed_alone() {
        let spread = Preset::Medium.spread();
        let table = |seed| Stalls::generate(&spread, 4, 50, spread.seed_for(seed, 4));
        assert_eq!(table(1), table(1));
        assert_ne!(table(1), table(2));
        assert_ne!(spread.seed_for(1, 4), spread.seed_for(1, 8));
        assert_ne!(spread.seed_for(1, 4), Preset::High.spread().seed_for(1, 4));
        assert_eq!(table(1).get(1, 2), table(1).as_slice()[6]);
        assert_eq!(table(1).get(50, 0), 0, "past the table, no stall");
        assert_eq!(table(1).iterations(), 50);
        assert!(Stalls::from_table(3, vec![0; 7]).is_err());
    }

    #[test]
    fn spreads_parse_or_explain() {
        let numbers = |text| parse_spread(text).map(|s| (s.max_ns, s.mean_ns, s.stddev_ns));
        // The seed's numbers, in nanoseconds.
        assert_eq!(numbers(" high "), Ok((555e3, 184e3, 102e3)));
        assert_eq!(numbers("60/30/10us"), Ok((60e3, 30e3, 10e3)));
        assert_eq!(parse_spread("60/30/10").unwrap().name(), "60/30/10us");
        for (bad, why) in [
            ("1/2/x", "not a preset"),
            ("10/20/1", "mean is above the max"),
            ("10/-1/1", "at least 0"),
            ("inf/1/1", "finite"),
            ("2000000/1/1", "a second"),
        ] {
            let error = parse_spread(bad).unwrap_err();
            assert!(
                error.contains(why) && error.contains("none, low"),
                "{bad}: {error}"
            );
        }
    }

    #[test]
    fn a_stall_lasts_at_least_its_length() {
        for policy in [StallPolicy::Spin, StallPolicy::Yield] {
            let start = Instant::now();
            policy.stall(200_000);
            assert!(start.elapsed() >= Duration::from_micros(200), "{policy:?}");
        }
        let cores = phasers::available_cores();
        assert_eq!(StallPolicy::for_threads(cores + 1), StallPolicy::Yield);
    }
}
