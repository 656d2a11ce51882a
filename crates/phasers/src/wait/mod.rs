//! Waiting: the one mechanism every primitive uses to wait for a word to change.
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
//! The budgets follow from them:
//!
//! - **Spin about one wake** when every participant has a core. This is the classic competitive
//!   rule: spinning for longer than a park and wake would cost can never pay, and spinning for less
//!   parks waits that a short spin would have caught, each then paying *W*. A spin round is a load
//!   and one pause: the polled line is written only by the releaser, so polling it costs nothing
//!   until the release, and a longer backoff would only see the release later.
//! - **Yield while a hand-off is cheaper than a wake.** After the spin, a waiter yields up to
//!   *W*/*Y* times (at most 256), then parks: a waiter still not released after that many hand-offs
//!   is in a wait long next to a wake.
//! - **Oversubscribed, do not spin, and share the yields.** When `k` participants share each core,
//!   every spin round and every yield of one waiter is paid by all `k`: each yield puts the waiter
//!   back in the core's queue, which the late arrival must get through. So a waiter does not spin
//!   at all (even ten rounds, a quarter of a microsecond, made 32 and 64 threads on 2 cores 1.3x
//!   slower), and yields *W*/(*Y* `k`) times, at least 4, before it parks.
//!
//! # Rules every primitive keeps
//!
//! - **No system call on release when nobody is parked.** A parking waiter sets a `PARKED` bit in the
//!   word it waits on; a releaser wakes the kernel only when the value it replaced had that bit set.
//! - **Spinning adapts, and recovers.** Each participant keeps its own spin budget. A wait that
//!   outlasts the spin phase by more than a wake (the awaited thread was descheduled, or is just
//!   late) shrinks it fourfold; a wait that ends while spinning, or within a wake after the spin ran
//!   out, doubles it back, up to the policy's budget. The second half is what makes it recover:
//!   a wait short next to a wake ends in the spin or the yields, never in a park, so a participant
//!   whose waits are short again regains its spin within a few episodes instead of paying *W* on
//!   every one.
//! - **No endless spinning under oversubscription.** Every policy ends in parking, so nothing spins
//!   forever.
//! - **Deadlines cost nothing on the fast path.** The clock is read only once the spin phase ran
//!   out; a deadline can therefore be overshot by at most one spin phase (about one wake with
//!   `Auto`).
//!
//! # Budgets
//!
//! | policy | spin | then yield | then |
//! |---|---|---|---|
//! | `Auto`, a core per participant | about *W* | *W*/*Y* times | park |
//! | `Auto`, `k` participants per core (`k` > 1) | none | *W*/(*Y* `k`) times, at least 4 | park |
//! | `Spin` | about 100 *W* (~2 ms on the EPYC VM) | *W*/*Y* times | park |
//! | `Yield` | about 4 *R* | 4096 times | park |
//! | `Park` | none | none | park |
//!
//! # Environment
//!
//! | variable | values | effect |
//! |---|---|---|
//! | `PHASERS_WAIT` | `auto`, `spin`, `yield`, `park` | replaces the policy of every object built afterwards |
//! | `PHASERS_SPIN` | a count, e.g. `2000`, at most [`MAX_SPIN_ROUNDS`] | replaces the number of spin rounds before yielding |
//! | `PHASERS_FLOORS` | `round_trip=55ns,yield=1.1us,wake=22us`, any subset | replaces the measured floors (the others are still measured); see [`Floors`] |
//! | `PHASERS_STALL` | a duration (`10s`, `500ms`, `1.5s`, `2min`; a bare number is seconds), or `off` / `0` | when a waiter reports a stall (default 10 s), for objects whose builder sets no `stall_after`; see [Stalls](#stalls) |
//!
//! `PHASERS_WAIT`, `PHASERS_SPIN` and `PHASERS_STALL` are read when an object is built,
//! `PHASERS_FLOORS` once per process. A value that cannot be parsed makes the constructor return
//! [`Error::InvalidArgument`](crate::Error::InvalidArgument) naming the variable, rather than being
//! ignored. A tuning [`Profile`](crate::Profile) written by `phasers tune` records the floors it
//! measured, and while it is in use they replace the measurement.
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

mod broken;
mod budget;
mod floors;
mod floors_measure;
mod futex;
#[cfg(test)]
mod model;
mod plan;
mod policy;
mod roster;
mod signal;
mod spin_clock;
mod stall;
mod stall_report;
mod stall_time;
mod waiter;

pub(crate) use broken::BrokenState;
pub use floors::{Floors, FloorsSource};
pub(crate) use budget::SpinBudget;
pub(crate) use plan::SpinPlan;
pub(crate) use policy::Tuning;
pub use policy::{WaitPolicy, MAX_SPIN_ROUNDS};
pub(crate) use roster::Roster;
pub(crate) use signal::{Signal, MAX_VALUE as MAX_SIGNAL_VALUE};
pub(crate) use stall::{Stall, Watch, Watched};
pub(crate) use stall_report::Wording;
pub use stall_report::{clear_stall_hook, has_stall_hook, set_stall_hook, StallReport};
pub use stall_time::{DEFAULT_STALL_AFTER, STALL_ENV};
pub(crate) use waiter::{Deadline, Stop, Waiter};
