//! OpenMP's `#pragma omp barrier` and `#pragma omp for reduction` (libgomp), through the shims in
//! `baselines/omp_barrier.c` and `baselines/omp_dynamic.c`, and the OpenMP counterparts of the
//! team collectives, through `baselines/omp_collectives.c`.
//!
//! The timed loops run in C on OpenMP's threads; see `phasers_omp_round` there for the round and
//! for how a round past its deadline is cut without leaving a thread at a barrier.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use super::describe_error;

/// Mirrors `phasers_omp_result` in `baselines.h`, which every OpenMP shim fills. The default is
/// all zeros: status [`OK`].
#[repr(C)]
#[derive(Default)]
pub(crate) struct RawRound {
    pub(crate) ran: u64,
    pub(crate) elapsed_ns: u64,
    pub(crate) sum: i64,
    pub(crate) status: i32,
    pub(crate) detail: i32,
}

/// The `status` values of `baselines.h`.
pub(crate) const OK: i32 = 0;
pub(crate) const INVALID: i32 = 1;
pub(crate) const TOO_FEW_THREADS: i32 = 2;
const AFFINITY_QUERY: i32 = 3;
const AFFINITY_SET: i32 = 4;
pub(crate) const NO_MEMORY: i32 = 6;
pub(crate) const WRONG_COPY: i32 = 7;

extern "C" {
    fn phasers_omp_round(
        threads: u32,
        iterations: u64,
        delay: Option<extern "C" fn(u64)>,
        delay_arg: u64,
        work: i32,
        pin: bool,
        deadline_ns: u64,
        result: *mut RawRound,
    );
    fn phasers_omp_dynamic(
        max_threads: u32,
        delay: Option<extern "C" fn(u64)>,
        delay_arg: u64,
        result: *mut RawRound,
    );
    fn phasers_omp_collective_round(
        threads: u32,
        iterations: u64,
        work: i32,
        words: u64,
        pin: bool,
        result: *mut RawRound,
    );
}

/// What every iteration of an OpenMP round does after the delay; mirrors `PHASERS_OMP_LOOP` and
/// its siblings in `baselines.h`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OmpWork {
    /// Nothing: EPCC's reference loop.
    Loop,
    /// `#pragma omp barrier`.
    Barrier,
    /// `#pragma omp for reduction(+:a)` over one iteration per thread, the delay and `a += 1`
    /// inside it: EPCC's reduction test as the seed gives it (its figure 9c).
    Reduction,
}

impl OmpWork {
    fn raw(self) -> i32 {
        match self {
            OmpWork::Loop => 0,
            OmpWork::Barrier => 1,
            OmpWork::Reduction => 2,
        }
    }
}

/// What every iteration of an OpenMP collective round does; mirrors `PHASERS_OMP_COLL_BARRIER`
/// and its siblings in `baselines.h`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OmpCollective {
    /// `#pragma omp barrier`.
    Barrier,
    /// `#pragma omp for reduction(+:total)` of one u64 per thread, over one iteration per thread;
    /// every thread then reads the sum and checks it.
    AllreduceOne,
    /// The root (the iteration number modulo the threads) copies its `words` u64 into a shared
    /// buffer, a barrier, every other thread copies them out and checks them, a barrier.
    Broadcast {
        /// The length of the broadcast, in u64 words; at least 1.
        words: usize,
    },
}

impl OmpCollective {
    fn raw(self) -> (i32, u64) {
        match self {
            OmpCollective::Barrier => (1, 0),
            OmpCollective::AllreduceOne => (2, 0),
            OmpCollective::Broadcast { words } => (3, words as u64),
        }
    }

    fn name(self) -> &'static str {
        match self {
            OmpCollective::Barrier => "barrier",
            OmpCollective::AllreduceOne => "allreduce",
            OmpCollective::Broadcast { .. } => "broadcast",
        }
    }
}

/// Held for the whole of a round. libgomp gives each thread that starts a parallel region its own
/// team, so rounds started from two Rust threads at once would run side by side and measure
/// each other.
static ONE_ROUND_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The work each OpenMP thread does before every barrier: EPCC's delay loop, the very function
/// the Rust rows call.
#[derive(Debug, Clone, Copy)]
pub struct Delay {
    /// Called as `function(arg)` on every OpenMP thread, every iteration. It must not panic: a
    /// panic cannot unwind through C, and Rust aborts the process instead.
    pub function: extern "C" fn(u64),
    /// The argument, e.g. the calibrated number of delay-loop iterations.
    pub arg: u64,
}

/// What one OpenMP round measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OmpRound {
    /// Iterations every thread ran: all of those asked for, unless the deadline cut the round.
    pub ran: u64,
    /// From before the fork to after the join of the parallel region.
    pub elapsed: Duration,
    /// [`OmpWork::Reduction`]: the reduced value, `threads * ran` when OpenMP got it right.
    pub sum: i64,
}

/// Runs one EPCC round on a team of `threads` OpenMP threads: `iterations` times the delay (if
/// any) and the `work`. Returns the iterations run and the time, fork and join included.
///
/// A round with a barrier or reduction that runs past `deadline` (from its start) is cut: every
/// thread stops after the same iteration, within about a millisecond, and `ran` says how many it
/// ran. The reference loop cannot be cut, because only a barrier brings the cut to every thread
/// in time.
///
/// With `pin`, OpenMP thread t runs on the t-th CPU (round robin) of the calling thread's
/// affinity mask; without it every OpenMP thread may run on any of them (so the calling thread
/// should not be pinned itself). The caller becomes OpenMP thread 0 and gets its mask back
/// afterwards. Each round sets the masks afresh, which overrides `OMP_PROC_BIND` and
/// `GOMP_CPU_AFFINITY`.
///
/// Rounds run one at a time: a call waits for a round running on another thread to end. libgomp
/// keeps a team's threads for the next region started by the same thread, so calls from one
/// long-lived thread measure warm teams, as EPCC does. libgomp exits the process if it cannot
/// create a thread, so `threads` must stay within what the system allows.
///
/// `Err` on 0 threads or more than `i32::MAX`, when OpenMP gives a smaller team (e.g. under
/// `OMP_THREAD_LIMIT`), or when the affinity calls fail.
pub fn omp_round(
    threads: usize,
    iterations: u64,
    delay: Option<Delay>,
    work: OmpWork,
    pin: bool,
    deadline: Duration,
) -> Result<OmpRound, String> {
    let team = team_size(threads, 1)?;
    let deadline_ns = u64::try_from(deadline.as_nanos()).unwrap_or(u64::MAX);
    let (function, arg) = split(delay);
    let raw = one_round(|raw| {
        // SAFETY: `raw` is a valid place for the result; `function`, if any, is a safe
        // `extern "C"` function that may be called from any thread; rounds do not overlap.
        unsafe {
            phasers_omp_round(
                team,
                iterations,
                function,
                arg,
                work.raw(),
                pin,
                deadline_ns,
                raw,
            )
        }
    });
    raw.into_round("phasers_omp_round", &format!("{threads} threads"))
}

/// Runs the OpenMP side of the seed's dynamic-parallelism benchmark (its figure 16a) once: for
/// `nth` from 2 to `max_threads`, a `#pragma omp parallel for num_threads(nth)` region whose `nth`
/// iterations each run the delay. `ran` is the number of regions, `elapsed` the time of them all.
///
/// The same rules as [`omp_round`]: one call at a time, `Err` on fewer than 2 threads or more than
/// `i32::MAX`, or when OpenMP gives a region a smaller team than asked.
pub fn omp_dynamic(max_threads: usize, delay: Option<Delay>) -> Result<OmpRound, String> {
    let team = team_size(max_threads, 2)?;
    let (function, arg) = split(delay);
    // SAFETY: as in `omp_round`: a valid result place, a thread-safe delay, no overlapping rounds.
    let raw = one_round(|raw| unsafe { phasers_omp_dynamic(team, function, arg, raw) });
    raw.into_round(
        "phasers_omp_dynamic",
        &format!("teams of 2 to {max_threads} threads"),
    )
}

/// Runs `iterations` of `work` back to back on a team of `threads` OpenMP threads, inside one
/// parallel region, after one untimed iteration whose result is checked in full. `elapsed` is what
/// thread 0 measured from a barrier before the first timed iteration to a barrier after the last:
/// no fork, no join, no allocation. Every iteration's result is checked on every thread.
///
/// The same rules as [`omp_round`] for `pin`, one round at a time and the thread count. `Err`
/// also when a thread's result was wrong, or a broadcast of no words is asked for.
pub fn omp_collective_round(
    threads: usize,
    iterations: u64,
    work: OmpCollective,
    pin: bool,
) -> Result<OmpRound, String> {
    let team = team_size(threads, 1)?;
    let (raw_work, words) = work.raw();
    let raw = one_round(|raw| {
        // SAFETY: `raw` is a valid place for the result; the shim allocates every buffer it uses;
        // rounds do not overlap.
        unsafe { phasers_omp_collective_round(team, iterations, raw_work, words, pin, raw) }
    });
    let asked = match work {
        OmpCollective::Barrier => format!("barriers on {threads} threads"),
        OmpCollective::AllreduceOne => format!("an allreduce on {threads} threads"),
        OmpCollective::Broadcast { words } => {
            format!("a broadcast of {words} words on {threads} threads")
        }
    };
    match raw.status {
        WRONG_COPY => Err(format!(
            "wrong result: OpenMP thread {}'s copy of the {} differed from what was sent",
            raw.detail,
            work.name()
        )),
        NO_MEMORY => Err(format!("out of memory allocating {asked}")),
        _ => raw.into_round("phasers_omp_collective_round", &asked),
    }
}

/// Runs `shim` on a fresh result, when no other round is running (see [`ONE_ROUND_AT_A_TIME`]).
fn one_round(shim: impl FnOnce(&mut RawRound)) -> RawRound {
    let mut raw = RawRound::default();
    // A panic elsewhere while holding the lock leaves nothing inconsistent: it guards no data.
    let _one_round = ONE_ROUND_AT_A_TIME
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    shim(&mut raw);
    raw
}

/// `threads` as the C side takes it, when it is a team size OpenMP accepts and at least `least`.
fn team_size(threads: usize, least: u32) -> Result<u32, String> {
    u32::try_from(threads)
        .ok()
        .filter(|&team| team >= least && team <= i32::MAX as u32)
        .ok_or_else(|| {
            format!(
                "an OpenMP team needs {least} to {} threads, not {threads}",
                i32::MAX
            )
        })
}

fn split(delay: Option<Delay>) -> (Option<extern "C" fn(u64)>, u64) {
    match delay {
        Some(delay) => (Some(delay.function), delay.arg),
        None => (None, 0),
    }
}

impl RawRound {
    /// The round, or the error its status stands for; `call` and `asked` name what was asked.
    fn into_round(self, call: &str, asked: &str) -> Result<OmpRound, String> {
        match self.status {
            OK => Ok(OmpRound {
                ran: self.ran,
                elapsed: Duration::from_nanos(self.elapsed_ns),
                sum: self.sum,
            }),
            INVALID => Err(format!("{call} refused {asked}")),
            TOO_FEW_THREADS => Err(format!(
                "OpenMP gave a team of {} threads where {call} asked for {asked} \
                 (OMP_THREAD_LIMIT?)",
                self.detail
            )),
            AFFINITY_QUERY => Err(format!(
                "sched_getaffinity failed before the OpenMP round: {}",
                describe_error(self.detail)
            )),
            AFFINITY_SET => Err(format!(
                "pthread_setaffinity_np failed on an OpenMP thread: {}",
                describe_error(self.detail)
            )),
            status => Err(format!("{call} returned unknown status {status}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};

    use super::*;

    const FOREVER: Duration = Duration::from_secs(3600);

    const EVERY_WORK: [OmpWork; 3] = [OmpWork::Loop, OmpWork::Barrier, OmpWork::Reduction];

    #[test]
    fn every_iteration_runs_whatever_the_work() {
        for threads in [1, 3, 8] {
            for work in EVERY_WORK {
                let round = omp_round(threads, 2000, None, work, false, FOREVER).unwrap();
                assert_eq!(round.ran, 2000, "{threads} threads, {work:?}");
            }
        }
    }

    #[test]
    fn the_reduction_adds_one_per_thread_and_iteration() {
        for threads in [1, 3, 8] {
            let round = omp_round(threads, 700, None, OmpWork::Reduction, false, FOREVER).unwrap();
            assert_eq!(round.sum, threads as i64 * 700);
        }
        // Only the reduction reduces.
        let round = omp_round(3, 700, None, OmpWork::Barrier, false, FOREVER).unwrap();
        assert_eq!(round.sum, 0);
    }

    #[test]
    fn the_delay_runs_once_per_thread_and_iteration() {
        static CALLS: AtomicU64 = AtomicU64::new(0);
        static LAST_ARG: AtomicU64 = AtomicU64::new(0);
        extern "C" fn count(arg: u64) {
            CALLS.fetch_add(1, Ordering::Relaxed);
            LAST_ARG.store(arg, Ordering::Relaxed);
        }
        let delay = Some(Delay {
            function: count,
            arg: 42,
        });
        for work in EVERY_WORK {
            CALLS.store(0, Ordering::Relaxed);
            let round = omp_round(3, 500, delay, work, false, FOREVER).unwrap();
            assert_eq!(round.ran, 500);
            assert_eq!(CALLS.load(Ordering::Relaxed), 3 * 500);
            assert_eq!(LAST_ARG.load(Ordering::Relaxed), 42);
        }
    }

    #[test]
    fn a_round_past_its_deadline_is_cut_on_every_thread_alike() {
        static CALLS: AtomicU64 = AtomicU64::new(0);
        extern "C" fn sleep_a_millisecond(_: u64) {
            CALLS.fetch_add(1, Ordering::Relaxed);
            std::thread::sleep(Duration::from_millis(1));
        }
        let delay = Some(Delay {
            function: sleep_a_millisecond,
            arg: 0,
        });
        let threads = 3;
        for work in [OmpWork::Barrier, OmpWork::Reduction] {
            CALLS.store(0, Ordering::Relaxed);
            let round = omp_round(
                threads,
                1_000_000,
                delay,
                work,
                false,
                Duration::from_millis(20),
            )
            .unwrap();
            assert!(round.ran >= 1 && round.ran < 1_000_000, "{round:?}");
            assert!(round.elapsed >= Duration::from_millis(20), "{round:?}");
            assert!(round.elapsed < Duration::from_secs(5), "{round:?}");
            // Every thread ran exactly the iterations thread 0 reports.
            assert_eq!(CALLS.load(Ordering::Relaxed), threads as u64 * round.ran);
            if work == OmpWork::Reduction {
                assert_eq!(round.sum, threads as i64 * round.ran as i64);
            }
        }
    }

    #[test]
    fn a_round_of_bare_barriers_is_cut_too() {
        // No delay: the clock checks must space themselves out by time, not by a fixed count.
        for threads in [1, 3] {
            let round = omp_round(
                threads,
                u64::MAX,
                None,
                OmpWork::Barrier,
                false,
                Duration::from_millis(20),
            )
            .unwrap();
            assert!(round.ran < u64::MAX, "{round:?}");
            assert!(round.elapsed < Duration::from_secs(5), "{round:?}");
        }
    }

    #[test]
    fn pinned_rounds_run_and_give_the_caller_its_mask_back() {
        let before = core_affinity::get_core_ids();
        for threads in [1, 3, 8] {
            let round = omp_round(threads, 1000, None, OmpWork::Barrier, true, FOREVER).unwrap();
            assert_eq!(round.ran, 1000);
        }
        assert_eq!(core_affinity::get_core_ids(), before);
        // And an unpinned round after a pinned one still runs.
        assert_eq!(
            omp_round(3, 1000, None, OmpWork::Barrier, false, FOREVER)
                .unwrap()
                .ran,
            1000
        );
    }

    #[test]
    fn zero_iterations_is_an_empty_round() {
        let round = omp_round(2, 0, None, OmpWork::Reduction, false, FOREVER).unwrap();
        assert_eq!((round.ran, round.sum), (0, 0));
    }

    #[test]
    fn bad_thread_counts_are_errors() {
        for threads in [0, i32::MAX as usize + 1, usize::MAX] {
            let error = omp_round(threads, 10, None, OmpWork::Barrier, false, FOREVER).unwrap_err();
            assert!(error.contains("OpenMP team needs"), "{error}");
        }
        for threads in [0, 1, i32::MAX as usize + 1] {
            let error = omp_dynamic(threads, None).unwrap_err();
            assert!(error.contains("OpenMP team needs 2 to"), "{error}");
        }
    }

    #[test]
    fn the_collective_rounds_run_and_check_every_iteration() {
        for threads in [1, 3, 8] {
            for work in [
                OmpCollective::Barrier,
                OmpCollective::AllreduceOne,
                OmpCollective::Broadcast { words: 1 },
                OmpCollective::Broadcast { words: 1000 },
            ] {
                let round = omp_collective_round(threads, 300, work, threads == 3).unwrap();
                assert_eq!(round.ran, 300, "{threads} threads, {work:?}");
                assert!(
                    round.elapsed > Duration::ZERO,
                    "{threads} threads, {work:?}"
                );
            }
        }
        let empty = omp_collective_round(2, 0, OmpCollective::AllreduceOne, false).unwrap();
        assert_eq!((empty.ran, empty.elapsed), (0, Duration::ZERO));
        let error =
            omp_collective_round(2, 10, OmpCollective::Broadcast { words: 0 }, false).unwrap_err();
        assert!(error.contains("refused a broadcast of 0 words"), "{error}");
        let error = omp_collective_round(0, 10, OmpCollective::AllreduceOne, false).unwrap_err();
        assert!(error.contains("OpenMP team needs"), "{error}");
    }

    #[test]
    fn the_dynamic_benchmark_forks_one_region_per_step() {
        static CALLS: AtomicU64 = AtomicU64::new(0);
        extern "C" fn count(_: u64) {
            CALLS.fetch_add(1, Ordering::Relaxed);
        }
        let delay = Some(Delay {
            function: count,
            arg: 0,
        });
        let round = omp_dynamic(5, delay).unwrap();
        // Regions of 2, 3, 4 and 5 threads, one delay per thread.
        assert_eq!(round.ran, 4);
        assert_eq!(CALLS.load(Ordering::Relaxed), 2 + 3 + 4 + 5);
        assert!(round.elapsed > Duration::ZERO);
    }
}
