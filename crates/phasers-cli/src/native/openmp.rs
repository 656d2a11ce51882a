//! libgomp's `#pragma omp barrier`, `for reduction` and collectives, through the shims in
//! `baselines/omp_{barrier,dynamic,collectives}.c`. The timed loops run in C on OpenMP's threads;
//! `phasers_omp_round` there says how a round past its deadline is cut without stranding a thread.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use super::describe_error;

/// Mirrors `phasers_omp_result` in `baselines.h`, which every OpenMP shim fills.
#[repr(C)]
#[derive(Default)]
pub(crate) struct RawRound {
    pub(crate) ran: u64,
    pub(crate) elapsed_ns: u64,
    pub(crate) sum: i64,
    pub(crate) status: i32,
    pub(crate) detail: i32,
}

/// The `status` values of `baselines.h` (`STACK` is `omp_reduce.rs`'s).
const OK: i32 = 0;
const INVALID: i32 = 1;
const TOO_FEW_THREADS: i32 = 2;
const AFFINITY_QUERY: i32 = 3;
const AFFINITY_SET: i32 = 4;
const NO_MEMORY: i32 = 6;
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

/// What every iteration of an OpenMP round does after the delay (`PHASERS_OMP_LOOP`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum OmpWork {
    /// Nothing: EPCC's reference loop.
    Loop = 0,
    /// `#pragma omp barrier`.
    Barrier = 1,
    /// `omp for reduction(+:a)`, one iteration per thread, delay and `a += 1` inside: EPCC's.
    Reduction = 2,
}

/// What every iteration of an OpenMP collective round does (`PHASERS_OMP_COLL_BARRIER`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OmpCollective {
    /// `#pragma omp barrier`.
    Barrier,
    /// `omp for reduction(+:total)` of one u64 per thread; every thread then checks the sum.
    AllreduceOne,
    /// Root (iteration mod threads) copies `words` u64 into a shared buffer, barrier, the others
    /// copy them out and check them, barrier.
    Broadcast {
        /// The length, in u64 words; at least 1.
        words: usize,
    },
}

impl OmpCollective {
    /// The shim's `work` and `words`, and the result's name in messages.
    fn raw(self) -> (i32, u64, &'static str) {
        match self {
            OmpCollective::Barrier => (1, 0, "barrier"),
            OmpCollective::AllreduceOne => (2, 0, "allreduce"),
            OmpCollective::Broadcast { words } => (3, words as u64, "broadcast"),
        }
    }
}

/// Held for a whole round or array-reduction row: libgomp gives each forking thread its own team,
/// and two teams at once would measure each other.
pub(crate) static ONE_ROUND_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The work each OpenMP thread does before every barrier: the Rust rows' own delay loop.
#[derive(Debug, Clone, Copy)]
pub struct Delay {
    /// Called as `function(arg)` on every thread, every iteration; it must not panic (no unwinding
    /// through C).
    pub function: extern "C" fn(u64),
    /// The argument, e.g. the calibrated delay-loop iterations.
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

/// One EPCC round on `threads` OpenMP threads: `iterations` times the delay (if any) and `work`;
/// the iterations run and the time, fork and join included.
///
/// A barrier or reduction round past `deadline` is cut after the same iteration on every thread
/// (within about a millisecond); the reference loop has no barrier to carry the cut, so it is not.
/// With `pin`, thread t runs on the t-th CPU of the caller's mask (overriding `OMP_PROC_BIND`),
/// and the caller, thread 0, gets its mask back; unpinned, the caller should not be pinned.
///
/// Rounds run one at a time; libgomp keeps a team for the next region of the same thread, so one
/// long-lived caller measures warm teams, as EPCC does. libgomp exits if it cannot create a thread.
/// `Err` on 0 or over `i32::MAX` threads, a smaller team (`OMP_THREAD_LIMIT`), failed affinity.
pub fn omp_round(
    threads: usize,
    iterations: u64,
    delay: Option<Delay>,
    work: OmpWork,
    pin: bool,
    deadline: Duration,
) -> Result<OmpRound, String> {
    let team = team_size(threads, 1)?;
    let deadline_ns = nanos(deadline);
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
                work as i32,
                pin,
                deadline_ns,
                raw,
            )
        }
    });
    raw.into_round("phasers_omp_round", &format!("{threads} threads"))
}

/// The seed's figure 16a once: for `nth` from 2 to `max_threads`, a `parallel for
/// num_threads(nth)` region of `nth` delays; `ran` counts the regions. As [`omp_round`].
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

/// `iterations` of `work` back to back in one parallel region after an untimed one, every result
/// checked on every thread; `elapsed` spans barrier to barrier (no fork, join or allocation). As
/// [`omp_round`]; `Err` also on a wrong result or a broadcast of no words.
pub fn omp_collective_round(
    threads: usize,
    iterations: u64,
    work: OmpCollective,
    pin: bool,
) -> Result<OmpRound, String> {
    let team = team_size(threads, 1)?;
    let (raw_work, words, name) = work.raw();
    let raw = one_round(|raw| {
        // SAFETY: `raw` is a valid place for the result; the shim allocates every buffer it uses;
        // rounds do not overlap.
        unsafe { phasers_omp_collective_round(team, iterations, raw_work, words, pin, raw) }
    });
    let asked = match work {
        OmpCollective::Broadcast { words } => format!("a broadcast of {words} words"),
        _ => format!("{name} rounds"),
    };
    let asked = format!("{asked} on {threads} threads");
    match raw.status {
        WRONG_COPY => Err(format!(
            "wrong result: OpenMP thread {}'s copy of the {name} differed from what was sent",
            raw.detail
        )),
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
pub(crate) fn team_size(threads: usize, least: u32) -> Result<u32, String> {
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

/// Whole nanoseconds, for the C side (which reads u64::MAX as never).
pub(crate) fn nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

fn split(delay: Option<Delay>) -> (Option<extern "C" fn(u64)>, u64) {
    match delay {
        Some(delay) => (Some(delay.function), delay.arg),
        None => (None, 0),
    }
}

impl RawRound {
    /// The round, or the error its status stands for; `call` and `asked` name the request.
    pub(crate) fn into_round(self, call: &str, asked: &str) -> Result<OmpRound, String> {
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
            NO_MEMORY => Err(format!("out of memory allocating {asked}")),
            status => Err(format!("{call} returned unknown status {status}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};

    use super::*;

    // tests/smoke.rs runs every kind of round in its benchmark and checks the rows; here: what
    // only the shims see (every delay ran, the cut, the caller's mask, bad requests).

    static CALLS: AtomicU64 = AtomicU64::new(0);

    /// Counts its calls; with an argument of 1, sleeps a millisecond each.
    extern "C" fn count(arg: u64) {
        CALLS.fetch_add(1, Ordering::Relaxed);
        if arg == 1 {
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Runs `round` with the delay counting, and returns what it did and how many delays ran.
    /// One at a time, as the counter is shared.
    fn counted(round: impl FnOnce() -> Result<OmpRound, String>) -> (OmpRound, u64) {
        static ONE: Mutex<()> = Mutex::new(());
        let _one = ONE.lock().unwrap_or_else(PoisonError::into_inner);
        CALLS.store(0, Ordering::Relaxed);
        let round = round().unwrap();
        (round, CALLS.load(Ordering::Relaxed))
    }

    /// Every thread runs every iteration and its delay; a round past its deadline (`Some`) is cut
    /// on every thread alike, with or without a delay to space the clock checks out.
    #[test]
    fn every_thread_runs_the_iterations_thread_0_reports() {
        let before = core_affinity::get_core_ids();
        let (sleep, cut) = (Some(1), Some(Duration::from_millis(20)));
        for (threads, pin, delay, work, deadline) in [
            (3, true, Some(0), OmpWork::Loop, None),
            (8, true, Some(0), OmpWork::Barrier, None),
            (3, false, Some(0), OmpWork::Reduction, None),
            (3, false, sleep, OmpWork::Barrier, cut),
            (3, false, sleep, OmpWork::Reduction, cut),
            (1, false, None, OmpWork::Barrier, cut),
            (3, false, None, OmpWork::Barrier, cut),
        ] {
            let delay = delay.map(|arg| Delay {
                function: count,
                arg,
            });
            let iterations = if deadline.is_some() { u64::MAX } else { 500 };
            let limit = deadline.unwrap_or(Duration::from_secs(3600));
            let (round, delays) =
                counted(|| omp_round(threads, iterations, delay, work, pin, limit));
            let case = format!("{threads} threads, {work:?}, pin {pin}: {round:?}");
            assert!(round.ran >= 1 && round.ran < u64::MAX, "{case}");
            assert!(round.elapsed < Duration::from_secs(5), "{case}");
            if deadline.is_none() {
                assert_eq!(round.ran, 500, "{case}");
            } else {
                assert!(round.elapsed >= limit, "{case}");
            }
            if delay.is_some() {
                assert_eq!(delays, threads as u64 * round.ran, "{case}");
            }
            let sum = i64::from(work == OmpWork::Reduction) * (threads as u64 * round.ran) as i64;
            assert_eq!(round.sum, sum, "{case}");
        }
        // Pinned rounds give the caller its mask back.
        assert_eq!(core_affinity::get_core_ids(), before);
    }

    #[test]
    fn the_dynamic_benchmark_forks_one_region_per_step() {
        let delay = Delay {
            function: count,
            arg: 0,
        };
        let (round, delays) = counted(|| omp_dynamic(5, Some(delay)));
        // Regions of 2, 3, 4 and 5 threads, one delay per thread.
        assert_eq!((round.ran, delays), (4, 2 + 3 + 4 + 5));
    }

    #[test]
    fn bad_requests_are_errors_and_empty_rounds_take_no_time() {
        let forever = Duration::MAX;
        for threads in [0, i32::MAX as usize + 1, usize::MAX] {
            let error = omp_round(threads, 10, None, OmpWork::Barrier, false, forever).unwrap_err();
            assert!(error.contains("OpenMP team needs 1 to"), "{error}");
            let error = omp_collective_round(threads, 10, OmpCollective::AllreduceOne, false);
            assert!(error.unwrap_err().contains("OpenMP team needs 1 to"));
        }
        let error = omp_dynamic(1, None).unwrap_err();
        assert!(error.contains("OpenMP team needs 2 to"), "{error}");
        let error = omp_collective_round(2, 10, OmpCollective::Broadcast { words: 0 }, false);
        assert!(error
            .unwrap_err()
            .contains("refused a broadcast of 0 words"));
        let empty = omp_collective_round(2, 0, OmpCollective::AllreduceOne, false).unwrap();
        assert_eq!((empty.ran, empty.elapsed), (0, Duration::ZERO));
    }
}
