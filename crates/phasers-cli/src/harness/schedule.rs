//! How many episodes each round of a row runs, and when the row stops.
//!
//! A row is rounds of back-to-back episodes: a warm-up; then, unless the count is fixed,
//! calibration rounds that grow until one is long enough to size samples to the target duration;
//! then the timed samples. The [`Sampler`] is pure bookkeeping of what thread 0 measured, so its
//! decisions are testable without a clock. A barrier fast while calibrated can turn far slower
//! afterwards, so a round also has a deadline ([`RoundClock`]); a round cut there is still a valid
//! sample of fewer episodes, and the next is resized from it.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// Episodes in the warm-up round: enough to fault in every line and wake every thread once.
pub const WARM_UP_EPISODES: u64 = 16;

/// A calibration round shorter than this is too noisy to size samples from.
const CALIBRATION_MIN: Duration = Duration::from_millis(5);

/// How much a calibration round may grow over the last: a lucky fast one must not make the next
/// run for seconds.
const MAX_GROWTH: u64 = 64;

/// No sample runs more episodes than this, however cheap an episode looks.
const MAX_EPISODES: u64 = 1 << 32;

/// A calibrated round is cut once it runs this many times longer than the target sample.
const DEADLINE_FACTOR: u32 = 4;

/// Clock reads per planned round: enough to catch a slow round early, few enough to cost nothing.
const CHECKS_PER_ROUND: u64 = 64;

/// The settings shared by every row of a run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Schedule {
    /// Episodes per sample, or `None` to calibrate each row to `target_sample`.
    pub episodes: Option<u64>,
    /// Timed samples wanted per row.
    pub samples: usize,
    /// How long a calibrated sample should last.
    pub target_sample: Duration,
    /// Past this, a row stops after its current sample (keeping one), and a running round is cut.
    pub row_budget: Duration,
}

/// Where a row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    WarmUp,
    Calibrating,
    Measuring,
}

/// One timed sample: how many back-to-back episodes ran, and how long they took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    /// Episodes in the sample.
    pub episodes: u64,
    /// Their total duration.
    pub elapsed: Duration,
}

/// The bookkeeping of one row: decides each round's length and keeps the timed samples.
#[derive(Debug, Clone)]
pub struct Sampler {
    schedule: Schedule,
    phase: Phase,
    episodes: u64,
    samples: Vec<Sample>,
    capped: bool,
    cut: usize,
    warm_up: u64,
    enough: Option<(usize, Duration)>,
    measuring_since: Duration,
}

impl Sampler {
    /// A row that has not started, of `warm_up` episodes in its first round, stopping also once
    /// `enough` samples were taken and that long passed since the first.
    pub fn new(schedule: Schedule, warm_up: u64, enough: Option<(usize, Duration)>) -> Self {
        Sampler {
            schedule,
            phase: Phase::WarmUp,
            episodes: WARM_UP_EPISODES,
            samples: Vec::new(),
            capped: false,
            cut: 0,
            warm_up,
            enough,
            measuring_since: Duration::ZERO,
        }
    }

    /// Episodes in the first round (the warm-up).
    pub fn first_round(&self) -> u64 {
        self.warm_up
    }

    /// Records a round planned for `planned` episodes that ran `ran` (fewer when cut) in `elapsed`,
    /// `row_elapsed` into the row; returns the next round's episodes, or `None` when done.
    pub fn after_round(
        &mut self,
        planned: u64,
        ran: u64,
        elapsed: Duration,
        row_elapsed: Duration,
    ) -> Option<u64> {
        let ran = ran.max(1);
        match self.phase {
            Phase::WarmUp | Phase::Calibrating => {
                if let Some(fixed) = self.schedule.episodes {
                    return Some(self.start_measuring(fixed, row_elapsed));
                }
                // The warm-up never sizes samples: its first episodes pay for page faults and for
                // waking threads that were just started, and would make every sample too short.
                // Past the budget already, size a sample from whatever this round says.
                let warm_up = self.phase == Phase::WarmUp;
                if row_elapsed >= self.schedule.row_budget
                    || (!warm_up && (elapsed >= CALIBRATION_MIN || ran < planned))
                {
                    return Some(self.start_measuring(self.sized(ran, elapsed), row_elapsed));
                }
                self.phase = Phase::Calibrating;
                let least = if warm_up { 1 } else { 2 };
                let growth = if elapsed.is_zero() {
                    MAX_GROWTH
                } else {
                    // Aim a little past the minimum, so one more round usually suffices.
                    let wanted = 2 * CALIBRATION_MIN.as_nanos() / elapsed.as_nanos();
                    u64::try_from(wanted)
                        .unwrap_or(MAX_GROWTH)
                        .clamp(least, MAX_GROWTH)
                };
                self.episodes = ran.saturating_mul(growth).min(MAX_EPISODES);
                Some(self.episodes)
            }
            Phase::Measuring => {
                self.samples.push(Sample {
                    episodes: ran,
                    elapsed,
                });
                if ran < planned {
                    self.cut += 1;
                    // The barrier got slower than calibrated: size the next samples afresh, unless
                    // the count is fixed (then only the budget cuts, and the row ends below).
                    if self.schedule.episodes.is_none() {
                        self.episodes = self.sized(ran, elapsed);
                    }
                }
                let taken = self.samples.len();
                if taken >= self.schedule.samples {
                    return None;
                }
                let measuring = row_elapsed.saturating_sub(self.measuring_since);
                if let Some((least, time)) = self.enough {
                    if taken >= least && measuring >= time {
                        return None;
                    }
                }
                if row_elapsed >= self.schedule.row_budget {
                    self.capped = true;
                    return None;
                }
                Some(self.episodes)
            }
        }
    }

    fn start_measuring(&mut self, episodes: u64, row_elapsed: Duration) -> u64 {
        self.phase = Phase::Measuring;
        self.measuring_since = row_elapsed;
        self.episodes = episodes;
        episodes
    }

    /// Episodes for a sample of the target duration, given that `episodes` took `elapsed`.
    fn sized(&self, episodes: u64, elapsed: Duration) -> u64 {
        let target = self.schedule.target_sample.as_nanos();
        let wanted = target * u128::from(episodes) / elapsed.as_nanos().max(1);
        u64::try_from(wanted)
            .unwrap_or(MAX_EPISODES)
            .clamp(1, MAX_EPISODES)
    }

    /// How long the next round may run before thread 0 cuts it: a few target samples when
    /// calibrated, and never past the row budget (which alone cuts a fixed episode count).
    pub fn round_deadline(&self, row_elapsed: Duration) -> Duration {
        let budget_left = self.schedule.row_budget.saturating_sub(row_elapsed);
        match self.schedule.episodes {
            Some(_) => budget_left,
            None => budget_left.min(self.schedule.target_sample * DEADLINE_FACTOR),
        }
    }

    /// Planned episodes per timed sample (the warm-up's count before measuring starts).
    pub fn episodes(&self) -> u64 {
        self.episodes
    }

    /// The timed samples, in the order taken.
    pub fn samples(&self) -> &[Sample] {
        &self.samples
    }

    /// Whether the row stopped early because it ran past its budget.
    pub fn capped(&self) -> bool {
        self.capped
    }

    /// How many samples were cut short at a round deadline.
    pub fn cut(&self) -> usize {
        self.cut
    }

    /// The samples as nanoseconds per episode.
    pub fn per_episode_ns(&self) -> Vec<f64> {
        self.samples
            .iter()
            .map(|sample| sample.elapsed.as_nanos() as f64 / sample.episodes as f64)
            .collect()
    }
}

/// Thread 0's check of a round's deadline, reading the clock every few episodes: about
/// `CHECKS_PER_ROUND` reads over the deadline, never more than that over the planned episodes, so
/// a fast barrier pays next to nothing and one turned slow is still cut near its deadline.
#[derive(Debug)]
pub struct RoundClock {
    start: Instant,
    deadline: Duration,
    /// The most episodes between two reads.
    most: u64,
    every: u64,
    countdown: u64,
    counted: u64,
}

/// Episodes before the first read of a round, when its pace is not yet known.
const FIRST_CHECK: u64 = 16;

impl RoundClock {
    /// A round of `planned` episodes starting now, to be cut after `deadline`.
    pub fn start(planned: u64, deadline: Duration) -> Self {
        let most = (planned / CHECKS_PER_ROUND).max(1);
        let every = most.min(FIRST_CHECK);
        RoundClock {
            start: Instant::now(),
            deadline,
            most,
            every,
            countdown: every,
            counted: 0,
        }
    }

    /// Called after each episode: whether the deadline has passed (checked every few episodes).
    #[inline]
    pub fn expired(&mut self) -> bool {
        self.countdown -= 1;
        if self.countdown > 0 {
            return false;
        }
        self.check()
    }

    #[inline(never)]
    fn check(&mut self) -> bool {
        self.counted += self.every;
        let elapsed = self.start.elapsed();
        if elapsed >= self.deadline {
            return true;
        }
        let interval = self.deadline.as_nanos() / u128::from(CHECKS_PER_ROUND);
        let per_episode = (elapsed.as_nanos() / u128::from(self.counted)).max(1);
        self.every = u64::try_from(interval / per_episode)
            .unwrap_or(u64::MAX)
            .clamp(1, self.most);
        self.countdown = self.every;
        false
    }

    /// Time since the round started.
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    fn fresh(episodes: Option<u64>) -> Sampler {
        let schedule = Schedule {
            episodes,
            samples: 3,
            target_sample: 60 * MS,
            row_budget: Duration::from_secs(3),
        };
        Sampler::new(schedule, WARM_UP_EPISODES, None)
    }

    #[test]
    fn fixed_episodes_skip_calibration_and_stop_at_the_count_or_the_budget() {
        let mut sampler = fresh(Some(1000));
        assert_eq!(sampler.first_round(), WARM_UP_EPISODES);
        assert_eq!(sampler.after_round(16, 16, MS / 10, MS), Some(1000));
        assert_eq!(sampler.after_round(1000, 1000, 2 * MS, 3 * MS), Some(1000));
        assert_eq!(sampler.after_round(1000, 1000, 4 * MS, 7 * MS), Some(1000));
        assert_eq!(sampler.after_round(1000, 1000, 2 * MS, 9 * MS), None);
        assert_eq!(sampler.per_episode_ns(), vec![2000.0, 4000.0, 2000.0]);
        assert!(!sampler.capped() && sampler.cut() == 0);
        // The warm-up alone blew the budget: one sample is still taken.
        let mut sampler = fresh(Some(10));
        assert_eq!(sampler.after_round(16, 16, 5000 * MS, 5000 * MS), Some(10));
        assert_eq!(sampler.after_round(10, 10, 3000 * MS, 8000 * MS), None);
        assert!(sampler.capped() && sampler.samples().len() == 1);
    }

    #[test]
    fn calibration_grows_then_sizes_samples_to_the_target_once_a_round_is_long_enough() {
        let mut sampler = fresh(None);
        // 16 episodes in 16 µs: too short, grow by the capped factor.
        let next = sampler
            .after_round(16, 16, Duration::from_micros(16), MS)
            .unwrap();
        assert_eq!(next, 16 * MAX_GROWTH);
        // 1024 episodes in 10 ms: long enough; 60 ms needs 6144.
        let sized = sampler.after_round(next, next, 10 * MS, 11 * MS).unwrap();
        assert_eq!(sized, 6144);
        assert_eq!(sampler.episodes(), 6144);
        assert!(sampler.samples().is_empty());
        let mut sampler = fresh(None);
        // 16 episodes in 32 ms: maybe slow, maybe just the start; check with 16 more.
        assert_eq!(sampler.after_round(16, 16, 32 * MS, 32 * MS), Some(16));
        // 2 ms each indeed, so 30 per 60 ms sample.
        assert_eq!(sampler.after_round(16, 16, 32 * MS, 64 * MS), Some(30));
        // Past the budget, the one sample is sized from the warm-up, and never to zero episodes.
        let mut sampler = fresh(None);
        let next = sampler.after_round(16, 16, 10_000 * MS, 10_000 * MS);
        assert_eq!(next, Some(1));
    }

    #[test]
    fn enough_needs_samples_and_time_within_the_budget_and_maximum() {
        let stamped = Schedule {
            episodes: Some(1),
            samples: 100,
            target_sample: MS,
            row_budget: Duration::from_secs(1),
        };
        // Warm-up of 1 done 10 ms in; then `taken` samples, `since` ms after the warm-up.
        let run = |taken: u64, since: u64| {
            let mut sampler = Sampler::new(stamped, 1, Some((20, 50 * MS)));
            assert_eq!(sampler.first_round(), 1);
            assert_eq!(sampler.after_round(1, 1, MS, 10 * MS), Some(1));
            let at = |i: u64| MS * (10 + since * i / taken) as u32;
            (1..=taken).position(|i| sampler.after_round(1, 1, MS, at(i)).is_none())
        };
        assert_eq!(run(19, 60), None);
        assert_eq!(run(30, 40), None);
        assert_eq!(run(30, 60), Some(24));
        assert_eq!(run(200, 1), Some(99));
        assert_eq!(run(3, 3000), Some(0));
    }

    #[test]
    fn a_cut_sample_counts_and_resizes_the_next() {
        let mut sampler = fresh(None);
        assert_eq!(sampler.after_round(16, 16, 8 * MS, 8 * MS), Some(16));
        assert_eq!(sampler.after_round(16, 16, 8 * MS, 16 * MS), Some(120));
        // The barrier turned slow: only 12 of 120 episodes in 240 ms, 20 ms each.
        assert_eq!(sampler.after_round(120, 12, 240 * MS, 300 * MS), Some(3));
        assert_eq!(sampler.cut(), 1);
        assert_eq!(sampler.per_episode_ns(), vec![20_000_000.0]);
    }

    #[test]
    fn deadlines_and_a_round_clock_that_reads_every_few_episodes_never_early() {
        let calibrated = fresh(None);
        assert_eq!(calibrated.round_deadline(Duration::ZERO), 240 * MS);
        assert_eq!(calibrated.round_deadline(2900 * MS), 100 * MS);
        assert_eq!(calibrated.round_deadline(5000 * MS), Duration::ZERO);
        let fixed = fresh(Some(10));
        assert_eq!(fixed.round_deadline(1000 * MS), 2000 * MS);
        // The deadline has passed at once, but the clock is read only every so many episodes.
        for (planned, first) in [(CHECKS_PER_ROUND * 10, 10), (1_000_000, FIRST_CHECK)] {
            let mut clock = RoundClock::start(planned, Duration::ZERO);
            assert_eq!((1..=100).find(|_| clock.expired()), Some(first));
        }
        let mut clock = RoundClock::start(1000, Duration::from_secs(3600));
        assert!((0..1000).all(|_| !clock.expired()));
    }
}
