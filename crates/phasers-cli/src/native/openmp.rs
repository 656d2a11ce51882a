//! libgomp's `#pragma omp barrier`, `for reduction` and collectives, through the shims in
//! `baselines/omp_{barrier,dynamic,collectives}.c`. The timed loops run in C on OpenMP's threads;
//! `phasers_omp_round` there says how a round past its deadline is cut without stranding a thread.

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
/// any) and the `work`; returns the iterations run and the time, fork and join included.
///
/// A barrier or reduction round past `deadline` is cut: every thread stops after the same
/// iteration, within about a millisecond. The reference loop cannot be cut: only a barrier brings
/// the cut to every thread in time.
///
/// With `pin`, OpenMP thread t runs on the t-th CPU (round robin) of the caller's affinity mask,
/// overriding `OMP_PROC_BIND` and `GOMP_CPU_AFFINITY`; the caller becomes thread 0 and gets its
/// mask back. Unpinned, the caller should not be pinned itself.
///
/// Rounds run one at a time. libgomp keeps a team for the next region started by the same thread,
/// so calls from one long-lived thread measure warm teams, as EPCC does; it exits the process if
/// it cannot create a thread, so `threads` must stay within what the system allows. `Err` on 0
/// threads or more than `i32::MAX`, a smaller team (`OMP_THREAD_LIMIT`), or failed affinity calls.
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

/// The OpenMP side of the seed's dynamic-parallelism benchmark (its figure 16a), once: for `nth`
/// from 2 to `max_threads`, a `parallel for num_threads(nth)` region whose `nth` iterations each
/// run the delay. `ran` counts the regions. The rules of [`omp_round`], with at least 2 threads.
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

/// Runs `iterations` of `work` back to back on `threads` OpenMP threads in one parallel region,
/// after one untimed iteration; every result is checked on every thread. `elapsed` spans a barrier
/// before the first timed iteration to one after the last: no fork, join or allocation. The rules
/// of [`omp_round`]; `Err` also on a wrong result or a broadcast of no words.
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
