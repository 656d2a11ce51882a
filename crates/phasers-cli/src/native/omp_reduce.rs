//! OpenMP's `reduction(+:arr[:n])` through `baselines/omp_array_reduce.c`: the whole row runs in C
//! (the reduction exists only among OpenMP's threads) with the same stall table, stamps
//! (`CLOCK_MONOTONIC`, as `Instant` on Linux), warm-up and stop rule.
//!
//! GCC `alloca`s each thread's private copy (16 M floats: 64 MB of stack), so each row runs on a
//! fresh master thread with a stack that holds it, after raising libgomp's default thread stack;
//! the team ends with its master, so none spins into the next row. The C side reports a stack too
//! small rather than overflowing it.

use std::ffi::c_int;
use std::sync::atomic::AtomicU64;
use std::sync::PoisonError;
use std::time::Duration;

use phasers_cli::harness::engine::{Pacing, Plan, Timeline};
use phasers_cli::harness::stalls::StallPolicy;
use phasers_cli::harness::watchdog::{panic_message, watch_until, Watch};

use super::openmp::{nanos, team_size, RawRound as RawResult, ONE_ROUND_AT_A_TIME, WRONG_COPY};

/// Mirrors `phasers_omp_array_reduce_args` in `baselines.h`.
#[repr(C)]
struct RawArgs {
    threads: u32,
    allreduce: bool,
    yield_in_stall: bool,
    len: u64,
    max_iterations: u64,
    min_iterations: u64,
    min_time_ns: u64,
    budget_ns: u64,
    stalls_ns: *const u64,
    arrive_ns: *mut u64,
    return_ns: *mut u64,
    first_result: *mut f32,
    progress: *mut u64,
}

/// The `status` of `baselines.h` only this shim returns.
const STACK: i32 = 5;

extern "C" {
    fn phasers_omp_array_reduce(args: *const RawArgs, result: *mut RawResult);
    fn phasers_omp_array_reduce_stack_bytes(len: u64) -> u64;
    fn phasers_omp_raise_default_stack(bytes: u64) -> c_int;
}

/// Stack the Rust side of the master thread needs besides what the C side asks for.
const RUST_FRAMES: usize = 1 << 20;

/// `threads` reduce `len` floats (to all if `allreduce`) as `plan` says, `watch` guarding hangs;
/// the stamps and the warm-up's result (thread 0's).
pub fn run(
    threads: usize,
    len: usize,
    allreduce: bool,
    plan: &Plan,
    watch: &Watch,
) -> Result<(Timeline, Vec<f32>), String> {
    let team = team_size(threads, 1)?;
    let Pacing::Stamped {
        stalls: Some(stalls),
    } = &plan.pacing
    else {
        return Err("an OpenMP row needs a stall table".to_owned());
    };
    let (min_iterations, min_time) = plan.enough.unwrap_or((1, Duration::ZERO));
    // SAFETY: a pure function of its argument.
    let stack = unsafe { phasers_omp_array_reduce_stack_bytes(len as u64) };
    // SAFETY: changes the default attributes of threads created from now on, which nothing else
    // reads concurrently in a way that matters: only their stack size changes, and only upwards.
    let code = unsafe { phasers_omp_raise_default_stack(stack) };
    if code != 0 {
        return Err(format!(
            "cannot raise the default thread stack to {} MiB for OpenMP's private copies: {}",
            stack >> 20,
            std::io::Error::from_raw_os_error(code)
        ));
    }
    let master_stack = usize::try_from(stack)
        .ok()
        .and_then(|stack| stack.checked_add(RUST_FRAMES))
        .ok_or_else(|| format!("a stack of {stack} bytes is not possible here"))?;
    let rows = stalls.iterations();
    let slots = rows * threads;
    if stalls.as_slice().len() != slots || rows == 0 {
        return Err("the stall table does not match the team".to_owned());
    }
    let mut arrive_ns = vec![0u64; slots];
    let mut return_ns = vec![0u64; slots];
    let mut first_result = vec![0.0f32; len];
    let progress = AtomicU64::new(0);
    let mut raw = RawResult::default();
    // A panic elsewhere while holding the lock leaves nothing inconsistent: it guards no data.
    let _one_row = ONE_ROUND_AT_A_TIME
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let watcher = std::thread::current();
    std::thread::scope(|scope| {
        let (arrive_ns, return_ns) = (&mut arrive_ns, &mut return_ns);
        let (first_result, progress, raw) = (&mut first_result, &progress, &mut raw);
        let master = std::thread::Builder::new()
            .name("omp-reduce-master".to_owned())
            .stack_size(master_stack)
            .spawn_scoped(scope, move || {
                // Built here: the raw pointers it holds may not cross threads.
                let args = RawArgs {
                    threads: team,
                    allreduce,
                    yield_in_stall: StallPolicy::for_threads(threads) == StallPolicy::Yield,
                    len: len as u64,
                    max_iterations: rows as u64,
                    min_iterations: min_iterations as u64,
                    min_time_ns: nanos(min_time),
                    budget_ns: nanos(plan.schedule.row_budget),
                    stalls_ns: stalls.as_slice().as_ptr(),
                    arrive_ns: arrive_ns.as_mut_ptr(),
                    return_ns: return_ns.as_mut_ptr(),
                    first_result: first_result.as_mut_ptr(),
                    progress: progress.as_ptr(),
                };
                // SAFETY: `args` points to arrays of the lengths it states (`slots` stamps each,
                // `len` floats, `rows` rows of stalls), which outlive the call and which nothing
                // else touches meanwhile; `progress` is an AtomicU64, which has the layout of the
                // u64 the C side increments atomically; rows do not overlap (the lock above).
                unsafe { phasers_omp_array_reduce(&args, raw) };
                watcher.unpark();
            })
            .map_err(|error| format!("cannot start the OpenMP master thread: {error}"))?;
        watch_until(|| master.is_finished(), progress, watch);
        master
            .join()
            .map_err(|panic| format!("the OpenMP master panicked: {}", panic_message(&*panic)))
    })?;
    let ran = decode(raw, threads, len, stack)?;
    let ran = usize::try_from(ran).unwrap_or(usize::MAX).min(rows);
    if ran == 0 {
        return Err("the OpenMP row ran no iteration".to_owned());
    }
    arrive_ns.truncate(ran * threads);
    return_ns.truncate(ran * threads);
    let timeline = Timeline {
        threads,
        iterations: ran,
        arrive_ns,
        return_ns,
        chose: Vec::new(),
    };
    Ok((timeline, first_result))
}

/// The iterations run, or the error the C side's status stands for.
fn decode(raw: RawResult, threads: usize, len: usize, stack: u64) -> Result<u64, String> {
    match raw.status {
        STACK => Err(format!(
            "an OpenMP thread has a {} KiB stack, too small for the private copy of the array \
             GCC puts there ({} KiB needed); set OMP_STACKSIZE={}M",
            raw.detail,
            stack.div_ceil(1024),
            stack.div_ceil(1 << 20)
        )),
        WRONG_COPY => Err(format!(
            "wrong result: OpenMP thread {}'s allreduce copy differs from the shared sum",
            raw.detail
        )),
        _ => {
            let asked = format!("{len} floats on {threads} threads");
            Ok(raw.into_round("phasers_omp_array_reduce", &asked)?.ran)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use phasers_cli::harness::schedule::Schedule;
    use phasers_cli::harness::stalls::Stalls;

    // Both collectives with stalls run in `benches/reduce.rs`'s tests, with every other contender.

    #[test]
    fn a_large_array_fits_on_the_raised_stacks() {
        // 4 M floats: 16 MB of private copy, twice the usual 8 MB thread stack.
        let stalls = Stalls::from_table(2, vec![0; 6]).unwrap();
        let schedule = Schedule {
            episodes: Some(1),
            samples: 2,
            target_sample: Duration::ZERO,
            row_budget: Duration::from_secs(10),
        };
        let pacing = Pacing::Stamped {
            stalls: Some(stalls.into()),
        };
        let plan = Plan {
            enough: Some((1, Duration::from_millis(1))),
            ..Plan::new(schedule, pacing, Duration::from_secs(60))
        };
        let watch = Watch::new("omp", 2, Duration::from_secs(60));
        let (timeline, first) = run(2, 4_000_000, false, &plan, &watch).unwrap();
        assert!(timeline.iterations >= 2 && first.len() == 4_000_000);
    }

    #[test]
    fn errors_are_explained() {
        let stack = RawResult {
            status: STACK,
            detail: 8192,
            ..RawResult::default()
        };
        let error = decode(stack, 2, 1, 65 << 20).unwrap_err();
        assert!(
            error.contains("8192 KiB") && error.contains("OMP_STACKSIZE=65M"),
            "{error}"
        );
        assert_eq!(decode(RawResult::default(), 2, 1, 0), Ok(0));
    }
}
