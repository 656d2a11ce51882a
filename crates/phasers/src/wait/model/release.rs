//! How long a release from sleep takes: the timing of one wake call, and the path of a whole
//! release on free cores, all at once or by tree.
//!
//! A wake call made at `t` that wakes `n` sleepers costs the waker `n c` (the kernel wakes them
//! one after another, an inter-processor interrupt each), and reaches its `j`-th sleeper, counted
//! from one, at `t + j c` ([`reaches_at`]). A sleeper whose core is idle runs `W - c` after that,
//! when the core is back from its idle state ([`runs_at`]: `t + j c + (W - c)`; *W*, measured on
//! idle cores, is a whole wake, its first call included); a sleeper whose core is busy is queued
//! there at once. [`last_back`] replays a release on idle cores on its own, for the fanout
//! comparison.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::machine::Nanos;
use crate::wait::plan::WakeFanout;

/// When a wake call made at `call` reaches its `j`-th sleeper (from 1).
pub(crate) fn reaches_at(call: Nanos, j: usize, wake_call: Nanos) -> Nanos {
    call + j as Nanos * wake_call
}

/// How long an idle core takes to run a sleeper once a wake call reached it: the rest of a wake.
pub(crate) fn idle_core_latency(wake: Nanos, wake_call: Nanos) -> Nanos {
    wake.saturating_sub(wake_call)
}

/// When the `j`-th sleeper (from 1) of a wake call made at `call` runs, on an idle core.
pub(crate) fn runs_at(call: Nanos, j: usize, wake: Nanos, wake_call: Nanos) -> Nanos {
    reaches_at(call, j, wake_call) + idle_core_latency(wake, wake_call)
}

/// When the last of `sleepers` sleepers, all on idle cores, is back from its wait after a
/// release at 0: it has run and made its own wake call (by tree, every woken sleeper wakes up
/// to `fanout` of those set aside, or finds none left and pays a system call that returns at
/// once, `syscall`).
pub(crate) fn last_back(
    fanout: WakeFanout,
    sleepers: usize,
    wake: Nanos,
    wake_call: Nanos,
    syscall: Nanos,
) -> Nanos {
    let fanout = match fanout {
        WakeFanout::All => return runs_at(0, sleepers, wake, wake_call),
        WakeFanout::Tree(fanout) => fanout.max(1) as usize,
    };
    let first = fanout.min(sleepers);
    let mut set_aside = sleepers - first;
    // Sleepers running, earliest first: each, when it runs, draws from the set-aside queue.
    let mut running: BinaryHeap<Reverse<Nanos>> = (1..=first)
        .map(|j| Reverse(runs_at(0, j, wake, wake_call)))
        .collect();
    let mut last = 0;
    while let Some(Reverse(runs)) = running.pop() {
        let woken = fanout.min(set_aside);
        set_aside -= woken;
        running.extend((1..=woken).map(|j| Reverse(runs_at(runs, j, wake, wake_call))));
        let calls = if woken == 0 {
            syscall
        } else {
            woken as Nanos * wake_call
        };
        last = last.max(runs + calls);
    }
    last
}

/// The analytic form plan.rs reasons with: `levels` steps of one wake plus the waker's serial
/// calls for the sleepers after the first, `levels (W + (f - 1) c)`, with `levels` as
/// [`WakeFanout::release_path`] counts them.
pub(crate) fn analytic_path(fanout: u32, sleepers: usize, wake: Nanos, wake_call: Nanos) -> Nanos {
    let (levels, per_level) = WakeFanout::Tree(fanout).release_path(sleepers);
    u64::from(levels) * (wake + u64::from(per_level.saturating_sub(1)) * wake_call)
}
