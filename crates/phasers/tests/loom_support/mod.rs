//! The harness every loom model shares: building a barrier whose completion action is observed,
//! running the participants on loom threads, and checking the barrier's promises.
//!
//! What a model learns from the checks:
//!
//! - **The barrier invariant, with visibility.** Before rank `r` arrives at episode `k` it writes
//!   `true` into its own non-atomic cell for `(r, k)`; after a wait for `k` returns, the waiter reads
//!   every rank's cell for `k`. The cells are loom `UnsafeCell`s, so loom fails the model if such a
//!   read is not ordered after the write by happens-before (that is, if the barrier released someone
//!   before everyone had arrived, or without the memory ordering that makes their writes visible),
//!   and the value read must be `true`.
//! - **The completion action.** It increments a non-atomic counter; after a wait for `k` returns,
//!   the counter must be exactly `k + 1`: the action of `k` ran exactly once, its effect is visible,
//!   and the action of `k + 1` cannot have started, since it needs this participant's arrival. Loom
//!   also fails the model if two actions, or an action and a reader, ever overlap.
//! - **Leaders.** Every thread returns the episodes its participants led; the models count them.
//! - **Timeouts.** Under loom every timed wait that is not already complete times out; each timeout
//!   must name the episode, keep the arrival in place (the handle stays pending at that episode) and
//!   not list the caller among the missing.
//!
//! The cells are not loom atomics on purpose: a cell access is not a scheduling point, so the checks
//! cost loom no interleavings.
//!
//! # Threads
//!
//! Each group of ranks runs on its own loom thread (see [`scenario`]). A group of one waits with
//! `wait()`, which parks on a loom condition variable once it finds nothing to do, so loom also
//! checks that no wake-up is lost. A larger group polls its participants in turn with timed waits,
//! which under loom arrive and return at once, leaving the arrival in place: that explores timeouts
//! and resumption at every point, and costs loom fewer interleavings than a thread per rank.

#![allow(dead_code)] // each model file uses its own part of the harness

pub mod poller;

use std::time::Duration;

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;
use phasers::{Algorithm, Barrier, Error, Mode, Participant, Phaser, Registration, WaitResult};

/// One barrier configuration under test.
#[derive(Debug, Clone, Copy)]
pub struct Config {
    pub algorithm: Algorithm,
    pub fan_in: Option<usize>,
}

impl Config {
    pub const fn new(algorithm: Algorithm) -> Self {
        Config {
            algorithm,
            fan_in: None,
        }
    }

    pub const fn with_fan_in(algorithm: Algorithm, fan_in: usize) -> Self {
        Config {
            algorithm,
            fan_in: Some(fan_in),
        }
    }
}

pub const SENSE_REVERSING: Config = Config::new(Algorithm::SenseReversing);
pub const COUNTING: Config = Config::new(Algorithm::Counting);
pub const TICKET: Config = Config::new(Algorithm::Ticket);
pub const COMBINING_TREE: Config = Config::new(Algorithm::CombiningTree);
pub const COMBINING_TREE_FAN_IN_2: Config = Config::with_fan_in(Algorithm::CombiningTree, 2);
pub const MCS_TREE: Config = Config::new(Algorithm::McsTree);
pub const DISSEMINATION: Config = Config::new(Algorithm::Dissemination);
pub const TOURNAMENT: Config = Config::new(Algorithm::Tournament);

/// Runs `f` under loom with every interleaving of at most `LOOM_MAX_PREEMPTIONS` preemptions (2
/// when the variable is unset: an unbounded search of these models does not finish).
pub fn model(f: impl Fn() + Sync + Send + 'static) {
    model_bounded(usize::MAX, f);
}

/// As [`model`], with at most `max_preemptions` preemptions whatever `LOOM_MAX_PREEMPTIONS` says:
/// for models whose search would not finish in the CI budget with more.
pub fn model_bounded(max_preemptions: usize, f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    let bound = builder.preemption_bound.unwrap_or(2).min(max_preemptions);
    builder.preemption_bound = Some(bound);
    // A phaser model's step is longer than a barrier's (its 128-bit words are loom mutexes, and
    // a registration takes the structure lock), so loom's default of 1000 branches per execution
    // is too few for some of its complete executions.
    builder.max_branches = 10_000;
    let executions = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&executions);
    let start = std::time::Instant::now();
    builder.check(move || {
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        f();
    });
    // Shown with `--nocapture`: how many interleavings the model explored, and in how long (the
    // figures the bounds in the model files are chosen by).
    eprintln!(
        "{}: {} executions, at most {bound} preemptions, {:.1} s",
        std::thread::current().name().unwrap_or("model"),
        executions.load(std::sync::atomic::Ordering::Relaxed),
        start.elapsed().as_secs_f64()
    );
}

/// What the participants of one model execution record, and check, about each other.
pub struct Ledger {
    parties: usize,
    episodes: usize,
    /// `arrived[rank * episodes + k]`: `rank` is about to arrive at episode `k` (or has left).
    arrived: Box<[UnsafeCell<bool>]>,
    /// How many times the completion action ran.
    completions: UnsafeCell<u64>,
}

// SAFETY: the cells are loom cells: every access goes through loom's race checker, which fails the
// model on any access that is not ordered by happens-before. That check is the point of the ledger.
unsafe impl Sync for Ledger {}
// SAFETY: as above; the values are plain `bool`s and a `u64`.
unsafe impl Send for Ledger {}

impl Ledger {
    fn new(parties: usize, episodes: usize) -> Self {
        Ledger {
            parties,
            episodes,
            arrived: (0..parties * episodes)
                .map(|_| UnsafeCell::new(false))
                .collect(),
            completions: UnsafeCell::new(0),
        }
    }

    pub fn parties(&self) -> usize {
        self.parties
    }

    fn cell(&self, rank: usize, episode: u64) -> &UnsafeCell<bool> {
        &self.arrived[rank * self.episodes + episode as usize]
    }

    /// Records that `rank` arrives at `episode`; call before it does.
    pub fn arrive(&self, rank: usize, episode: u64) {
        self.cell(rank, episode).with_mut(|arrived| {
            // SAFETY: loom checks the access; only `rank` writes its own cells.
            let arrived = unsafe { &mut *arrived };
            assert!(!*arrived, "rank {rank} arrived twice at episode {episode}");
            *arrived = true;
        });
    }

    /// Records that `rank` takes part in no episode from `episode` on; call before it leaves.
    pub fn leave(&self, rank: usize, episode: u64) {
        for later in episode..self.episodes as u64 {
            self.arrive(rank, later);
        }
    }

    /// Checks everything the release promises, after `rank`'s wait for `episode` returned `result`.
    pub fn check_release(&self, rank: usize, episode: u64, result: WaitResult) {
        assert_eq!(
            result.episode(),
            episode,
            "rank {rank}: the wait completed another episode"
        );
        for other in 0..self.parties {
            // SAFETY: loom checks the access: it fails the model unless `other`'s write happened
            // before this read, which is what the barrier promises.
            let arrived = self
                .cell(other, episode)
                .with(|arrived| unsafe { *arrived });
            assert!(
                arrived,
                "rank {rank} was released from episode {episode} before rank {other} arrived"
            );
        }
        assert_eq!(
            self.completions(),
            episode + 1,
            "rank {rank} released from episode {episode}: the completion action must have run \
             exactly once per episode so far"
        );
    }

    /// How many times the completion action ran.
    pub fn completions(&self) -> u64 {
        // SAFETY: loom checks the access against the action's writes.
        self.completions.with(|count| unsafe { *count })
    }

    fn complete(&self) {
        // SAFETY: loom checks the access; the barrier promises that one action runs at a time.
        self.completions.with_mut(|count| unsafe { *count += 1 });
    }
}

/// What one loom thread reports: the episodes its participants led.
pub type Led = Vec<u64>;

/// Builds a barrier of `parties` for `config` whose completion action counts in the returned
/// ledger, and runs `body` once per group of `groups`, each on its own loom thread (the first on the
/// model's main thread) with the participants of the ranks in the group. Returns what each group
/// reported, in order, and the ledger. The `Barrier` object itself is dropped by the last group's
/// thread as soon as it starts, while the others may already wait on it.
pub fn scenario<F>(
    config: Config,
    parties: usize,
    episodes: usize,
    groups: &[&[usize]],
    body: F,
) -> (Vec<Led>, Arc<Ledger>)
where
    F: Fn(Vec<Participant>, &Ledger) -> Led + Send + Sync + 'static,
{
    let ledger = Arc::new(Ledger::new(parties, episodes));
    let action_ledger = Arc::clone(&ledger);
    let mut builder = Barrier::builder(parties)
        .algorithm(config.algorithm)
        .on_completion(move || action_ledger.complete());
    if let Some(fan_in) = config.fan_in {
        builder = builder.fan_in(fan_in);
    }
    let barrier = builder.build().expect("a valid barrier configuration");
    let mut participants: Vec<Option<Participant>> =
        barrier.participants().into_iter().map(Some).collect();
    assert_eq!(participants.len(), parties);
    let mut handed_out = groups
        .iter()
        .map(|ranks| {
            ranks
                .iter()
                .map(|&rank| participants[rank].take().expect("each rank in one group"))
                .collect::<Vec<_>>()
        })
        .collect::<Vec<_>>();
    assert!(
        participants.iter().all(Option::is_none),
        "every rank in a group"
    );
    let mut barrier = Some(barrier);
    let body = Arc::new(body);
    let main_group = handed_out.remove(0);
    let last = handed_out.len();
    let threads: Vec<_> = handed_out
        .into_iter()
        .enumerate()
        .map(|(index, group)| {
            let body = Arc::clone(&body);
            let ledger = Arc::clone(&ledger);
            let barrier = if index + 1 == last {
                barrier.take()
            } else {
                None
            };
            thread::spawn(move || {
                drop(barrier);
                body(group, &ledger)
            })
        })
        .collect();
    drop(barrier); // only when the main thread is the only group
    let mut reports = vec![body(main_group, &ledger)];
    reports.extend(
        threads
            .into_iter()
            .map(|thread| thread.join().expect("a participant's thread panicked")),
    );
    (reports, ledger)
}

/// Asserts that each of `episodes` had exactly one leader.
pub fn assert_one_leader_each(reports: &[Led], episodes: u64) {
    for episode in 0..episodes {
        let leaders = leaders_of(reports, episode);
        assert_eq!(leaders, 1, "episode {episode} had {leaders} leaders");
    }
}

/// How many participants reported leading `episode`.
pub fn leaders_of(reports: &[Led], episode: u64) -> usize {
    reports
        .iter()
        .flatten()
        .filter(|&&led| led == episode)
        .count()
}

/// Arrives at `episode` with `wait()`, checks the release, and returns whether `participant` led.
pub fn wait_checked(participant: &mut Participant, ledger: &Ledger, episode: u64) -> bool {
    let rank = participant.rank();
    assert_eq!(participant.episode(), episode);
    ledger.arrive(rank, episode);
    let result = participant
        .wait()
        .unwrap_or_else(|error| panic!("rank {rank}, episode {episode}: {error}"));
    ledger.check_release(rank, episode, result);
    result.is_leader()
}

/// One timed wait of `participant` for `episode`: `None` after a timeout, which is checked (right
/// episode, arrival still in place, the caller not listed as missing, and `check_missing` on the
/// list), else the outcome.
pub fn poll(
    participant: &mut Participant,
    ledger: &Ledger,
    episode: u64,
    check_missing: &dyn Fn(&[usize]),
) -> Option<Result<WaitResult, Error>> {
    let rank = participant.rank();
    match participant.wait_timeout(Duration::from_millis(1)) {
        Err(Error::Timeout {
            episode: timed_out,
            missing,
            resumable: true,
        }) => {
            assert_eq!(
                timed_out, episode,
                "rank {rank} timed out in another episode"
            );
            assert!(
                participant.is_pending(),
                "rank {rank}: a timed-out arrival must stay in place"
            );
            assert_eq!(participant.episode(), episode);
            assert!(
                !missing.contains(&rank),
                "rank {rank} has arrived at episode {episode}, yet its timeout lists it as \
                 missing: {missing:?}"
            );
            assert!(
                missing.windows(2).all(|pair| pair[0] < pair[1])
                    && missing.iter().all(|&other| other < ledger.parties),
                "rank {rank}: missing ranks out of order or out of range: {missing:?}"
            );
            check_missing(&missing);
            None
        }
        outcome => Some(outcome),
    }
}

/// Arrives at `episode` with timed waits on every participant of `group` in turn, retrying each
/// until it does not time out, and returns their outcomes in order.
pub fn poll_all(
    group: &mut [Participant],
    ledger: &Ledger,
    episode: u64,
) -> Vec<Result<WaitResult, Error>> {
    poll_all_with(group, ledger, episode, &|_| {})
}

/// As [`poll_all`], with `check_missing` applied to the ranks every timeout reports missing.
pub fn poll_all_with(
    group: &mut [Participant],
    ledger: &Ledger,
    episode: u64,
    check_missing: &dyn Fn(&[usize]),
) -> Vec<Result<WaitResult, Error>> {
    for participant in group.iter() {
        assert_eq!(participant.episode(), episode);
        assert!(!participant.is_pending());
        ledger.arrive(participant.rank(), episode);
    }
    let mut outcomes: Vec<Option<Result<WaitResult, Error>>> = vec![None; group.len()];
    loop {
        for (participant, outcome) in group.iter_mut().zip(&mut outcomes) {
            if outcome.is_none() {
                *outcome = poll(participant, ledger, episode, check_missing);
            }
        }
        if outcomes.iter().all(Option::is_some) {
            return outcomes.into_iter().map(Option::unwrap).collect();
        }
        // Let the others run: loom would explore a retry loop that never yields for ever.
        thread::yield_now();
    }
}

/// As [`poll_all`], and each outcome must be a release of `episode`: checks them and returns the
/// episodes led (`episode` once per participant that led it).
pub fn poll_all_checked(group: &mut [Participant], ledger: &Ledger, episode: u64) -> Led {
    poll_all_checked_with(group, ledger, episode, &|_| {})
}

/// As [`poll_all_checked`], with `check_missing` applied as in [`poll_all_with`].
pub fn poll_all_checked_with(
    group: &mut [Participant],
    ledger: &Ledger,
    episode: u64,
    check_missing: &dyn Fn(&[usize]),
) -> Led {
    let outcomes = poll_all_with(group, ledger, episode, check_missing);
    let mut led = Vec::new();
    for (participant, outcome) in group.iter().zip(outcomes) {
        let rank = participant.rank();
        let result =
            outcome.unwrap_or_else(|error| panic!("rank {rank}, episode {episode}: {error}"));
        assert!(!participant.is_pending());
        assert_eq!(participant.episode(), episode + 1);
        ledger.check_release(rank, episode, result);
        if result.is_leader() {
            led.push(episode);
        }
    }
    led
}

/// Waits for `episode` with `wait()` when `group` has one participant, or polls every participant
/// with timed waits; checks each release and returns the episodes led.
pub fn complete(group: &mut [Participant], ledger: &Ledger, episode: u64) -> Led {
    match group {
        [participant] => {
            if wait_checked(participant, ledger, episode) {
                vec![episode]
            } else {
                vec![]
            }
        }
        group => poll_all_checked(group, ledger, episode),
    }
}

/// Asserts that `outcome` reports the barrier broken by `by` from `episode`.
pub fn assert_broken(rank: usize, outcome: Result<WaitResult, Error>, by: usize, episode: u64) {
    match outcome {
        Err(Error::Broken {
            by: culprit,
            episode: from,
        }) => {
            assert_eq!(culprit, by, "rank {rank}: the wrong rank blamed");
            assert_eq!(
                from, episode,
                "rank {rank}: the wrong episode reported broken"
            );
        }
        other => {
            panic!("rank {rank}: expected Broken {{ by: {by}, episode: {episode} }}, got {other:?}")
        }
    }
}

/// Every group of ranks runs on its own loom thread through `episodes` episodes.
pub fn run_episodes(
    config: Config,
    parties: usize,
    episodes: u64,
    groups: &'static [&'static [usize]],
    max_preemptions: usize,
) {
    model_bounded(max_preemptions, move || {
        let (reports, ledger) = scenario(
            config,
            parties,
            episodes as usize,
            groups,
            move |mut group, ledger| {
                (0..episodes)
                    .flat_map(|episode| complete(&mut group, ledger, episode))
                    .collect()
            },
        );
        assert_one_leader_each(&reports, episodes);
        assert_eq!(ledger.completions(), episodes);
    });
}

/// A phaser of `tiers` and `degree` whose creator registers in `mode`, for the phaser models.
pub fn phaser_of_shape(tiers: usize, degree: usize, mode: Mode) -> (Phaser, Registration) {
    Phaser::builder()
        .tiers(tiers)
        .degree(degree)
        .mode(mode)
        .build()
        .expect("a valid shape")
}
