//! Waiting: the one mechanism every primitive uses to wait for a word to change.
//!
//! These docs are the user's view. The contributor's, in the manner of rayon-core's
//! `sleep/README.md`, is `src/wait/README.md` in the repository: which file holds what, where
//! every budget's number comes from, the adaptation rules in full, why no wake-up is lost, and
//! what to change and run to change the policy.
//!
//! A waiter first **spins** on the word, pausing with [`std::hint::spin_loop`] between loads; then
//! it **yields** its core a number of times; then it **parks** in the kernel until the word
//! changes. How long each phase lasts is the [`WaitPolicy`], turned into budgets once per object
//! from the party count, the cores available (see [`crate::available_cores`]) and the machine's
//! [`Floors`].
//!
//! # The model: three floors, measured
//!
//! The right budgets depend on three costs that differ tenfold between machines, so the library
//! measures them once per process, in about 3 ms, the first time an object is built
//! ([`Floors::current`]; `phasers floors` prints them):
//!
//! | floor | what it is | Xeon VM (2 cores) | EPYC VM (2 cores) |
//! |---|---|---|---|
//! | round trip, *R* | a cache line from one core to another and back | ~190 ns | ~55-65 ns |
//! | yield hand-off, *Y* | a core passed between two threads with `sched_yield` | ~1 µs | ~1.1-1.9 µs |
//! | wake, *W* | from a futex wake to the sleeper running on another core | a few µs | ~15-22 µs, sometimes a 4 ms timer tick |
//!
//! The budgets follow from them, in two regimes with two rules:
//!
//! - **A core per participant: spin through what parking would really cost.** Spinning on a core
//!   nobody else wants costs nothing but power, while parking costs the whole release: every
//!   other participant woken from sleep, `log4 k` wakes in sequence with a release by tree (below),
//!   and every later episode inherits the delay. So a waiter spins for twice that path (2 *W* at
//!   2 parties, 16 *W* at 16, 32 *W* at 256; 12 µs to 200 µs on a Xeon VM whose *W* is 6 µs), as
//!   libgomp (`GOMP_SPINCOUNT`) and libomp (`KMP_BLOCKTIME`) spin long before they sleep. The
//!   classic one-wake rule is right only when the core is wanted: on a 16-core Xeon it let one
//!   slow episode lock every waiter into parking, 12x slower than libgomp (issue 30). A spin
//!   round is a load and one pause: the polled line is written only by the releaser, so polling
//!   it costs nothing until the release, and a longer backoff would only see the release later.
//! - **Yield while a hand-off is cheaper than a wake.** After the spin, a waiter yields up to
//!   *W*/*Y* times (at most 256), then parks: a waiter still not released after that many hand-offs
//!   is in a wait long next to a wake.
//! - **Oversubscribed, do not spin, and share the yields.** When `k` participants share each core,
//!   every spin round and every yield of one waiter is paid by all `k`: each yield puts the waiter
//!   back in the core's queue, which the late arrival must get through. So a waiter does not spin
//!   at all (even ten rounds, a quarter of a microsecond, made 32 and 64 threads on 2 cores 1.3x
//!   slower), and yields *W*/(*Y* `k`) times, at least 4, before it parks.
//!
//! # Releases that scale
//!
//! The kernel wakes the sleepers of one futex call one at a time, each with an inter-processor
//! interrupt (through the hypervisor on a VM), so waking `k` sleepers at once puts `k` serial
//! wakes on the releaser's critical path. With a core per participant a release wakes by
//! **tree**: it wakes 4 sleepers and sets the rest aside in the same system call
//! (`FUTEX_REQUEUE`), and every woken sleeper wakes 4 more before it goes on, so all run after
//! about `log4 k` wakes in sequence; algorithms whose words have one waiter each (dissemination,
//! tournament, MCS) already wake only their own children. When threads outnumber cores the cores
//! are the bottleneck, not the wake calls, and one call wakes all at once (a tree would add a
//! system call per woken thread). `PHASERS_WAKE` overrides the choice. Outside Linux every
//! release wakes all at once.
//!
//! # Rules every primitive keeps
//!
//! - **No system call on release when nobody is parked.** A parking waiter sets a `PARKED` bit in the
//!   word it waits on; a releaser wakes the kernel only when the value it replaced had that bit set.
//! - **Spinning adapts, and recovers.** Each participant keeps its own spin budget. Evidence that
//!   its core is wanted (a yield that handed the core to another thread) shrinks it fourfold.
//!   With a core per participant nothing else does, and every other wait doubles it back: a long
//!   wait alone only means the awaited thread is late or being woken, and treating it as a reason
//!   to park is what locked 16 free cores into parking. So a participant whose waits are short
//!   again regains its full spin within a few episodes, whatever it did last time. When
//!   participants share cores, a wait that outlasts the spin phase by more than a wake also
//!   shrinks it, and only a wait that ends while spinning, or soon after, grows it. The rules
//!   case by case, and why, are in `src/wait/README.md` (*How a budget adapts*).
//! - **No endless spinning under oversubscription.** Every policy ends in parking, so nothing spins
//!   forever.
//! - **Deadlines cost nothing on the fast path.** The spin phase reads only the word; between
//!   chunks of about a thousand rounds (16-40 µs on the VMs) it also looks at the broken state and,
//!   for a timed wait, the clock, so a timeout or a broken object is noticed at most one chunk late
//!   even while a waiter spins for hundreds of microseconds.
//! - **Decisions are pure.** The plan (`plan.rs`) and the budget's adaptation (`budget.rs`) read no
//!   clock and no atomic: a discrete-event model of a machine of 16 to 256 cores (`model/`, run by
//!   `cargo test`; see `docs/machine-model.md`) drives the same code, which is how the rules above
//!   were checked on machines this project does not have.
//!
//! # Budgets
//!
//! | policy | spin | then yield | then |
//! |---|---|---|---|
//! | `Auto`, a core per participant | twice a release from sleep: 2 x 4 *W* per level of the wake tree (2 *W* for 2 parties) | *W*/*Y* times | park |
//! | `Auto`, `k` participants per core (`k` > 1) | none | *W*/(*Y* `k`) times, at least 4 | park |
//! | `Spin` | the longer of `Auto`'s and 100 *W* (~2 ms on the EPYC VM) | *W*/*Y* times | park |
//! | `Yield` | about 4 *R* | 4096 times | park |
//! | `Park` | none | none | park |
//!
//! # Environment
//!
//! | variable | values | effect |
//! |---|---|---|
//! | `PHASERS_WAIT` | `auto`, `spin`, `yield`, `park` | replaces the policy of every object built afterwards |
//! | `PHASERS_SPIN` | a count, e.g. `2000`, at most [`MAX_SPIN_ROUNDS`] | replaces the number of spin rounds before yielding |
//! | `PHASERS_WAKE` | `all`, or a fanout from 1 to 64 | how a release wakes sleepers: `all` with one system call, or by tree, waking that many and each of them as many more (default: 4 with a core per participant, `all` when oversubscribed) |
//! | `PHASERS_FLOORS` | `round_trip=55ns,yield=1.1us,wake=22us`, any subset | replaces the measured floors (the others are still measured); see [`Floors`] |
//! | `PHASERS_STALL` | a duration (`10s`, `500ms`, `1.5s`, `2min`; a bare number is seconds), or `off` / `0` | when a waiter reports a stall (default 10 s), for objects whose builder sets no `stall_after`; see [Stalls](#stalls) |
//!
//! `PHASERS_WAIT`, `PHASERS_SPIN`, `PHASERS_WAKE` and `PHASERS_STALL` are read when an object is
//! built, `PHASERS_FLOORS` once per process. A value that cannot be parsed makes the constructor
//! return [`Error::InvalidArgument`](crate::Error::InvalidArgument) naming the variable, rather
//! than being ignored. A tuning [`Profile`](crate::Profile) written by `phasers tune` records the
//! floors it measured, and while it is in use they replace the measurement.
//!
//! # Stalls
//!
//! Some mistakes no check can catch: a participant that silently stops calling (its thread blocked
//! elsewhere, or its loop ended without dropping its handle), or a team whose checks are off and
//! whose members' calls differ. Its partners then wait for ever, but not silently: once a waiter
//! has waited for the **stall time** (10 s by default), it reports the object, the episode, who
//! has not arrived and how long it has waited, once per object and episode (not once per
//! waiter), as one line on stderr or to the hook set with [`set_stall_hook`] (a [`StallReport`]).
//! The wait then goes on: a stall is not an error, and timeouts and broken objects behave as
//! before.
//!
//! The stall time is each builder's `stall_after`, else [`STALL_ENV`] (`PHASERS_STALL=30s`,
//! `=off`), else [`DEFAULT_STALL_AFTER`]. Barriers, teams and reductions name the ranks missing;
//! phasers name the ids of the registrations that have not signalled. A team member waiting after
//! the opening meeting of a call, for others to finish moving data, cannot name them, and says so.
//!
//! It costs nothing on the fast path: only a waiter whose spin phase ran out looks at the clock
//! (as for deadlines), and it sleeps with a timeout of the earlier of its deadline and its stall
//! moment, so the one that notices was asleep anyway. Waits that are meant to last longer than the
//! stall time (a consumer waiting an hour for a producer's phase) should set a longer one on their
//! object, or `Duration::MAX` for none.
//!
//! An async task's wait reports too, though a stalled task is never polled again: the task marks
//! the episode it waits in (one load, one write per episode), and a watchdog thread, started by
//! the first task that waits on an object with reports on, makes the report for it, for episodes
//! someone is missing from (see `wait/README.md`, *Stalls of async tasks*).

pub(crate) mod batched_wakes;
mod broken;
mod budget;
mod config;
mod floors;
mod futex;
#[cfg(test)]
mod model;
mod plan;
mod policy;
mod poll;
mod roster;
mod signal;
mod stall;
mod task_deadline;
mod tuning;
mod waiter;
mod wakers;

pub(crate) use batched_wakes::BatchedWakes;
pub(crate) use broken::BrokenState;
pub(crate) use budget::SpinBudget;
pub(crate) use config::WaitConfig;
pub use floors::{Floors, FloorsSource};
pub(crate) use plan::SpinPlan;
pub use policy::{WaitPolicy, MAX_SPIN_ROUNDS};
pub(crate) use poll::{noop_waker, poll_task, publish_for_task, StoredWaker, TaskPoll, TaskWaiter};
pub(crate) use roster::Roster;
pub(crate) use signal::{Signal, MAX_VALUE as MAX_SIGNAL_VALUE};
pub use stall::{
    clear_stall_hook, has_stall_hook, set_stall_hook, StallReport, DEFAULT_STALL_AFTER, STALL_ENV,
};
pub(crate) use stall::{watch_task, Stall, Watch, Watched, Wording};
pub(crate) use task_deadline::TaskDeadline;
pub(crate) use tuning::Tuning;
pub(crate) use waiter::{Deadline, Stop, TaskRef, Waiter};
pub(crate) use wakers::{wake_each, WakerKey};
