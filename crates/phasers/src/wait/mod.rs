//! Waiting: the one mechanism every primitive uses to wait for a word to change.
//!
//! A waiter first **spins** on the word, pausing with [`std::hint::spin_loop`] and a bounded
//! exponential backoff; then it **yields** its core a few times; then it **parks** in the kernel until
//! the word changes. How long each phase lasts is the [`WaitPolicy`], resolved once per object
//! against the party count and the cores available (see [`crate::available_cores`]).
//!
//! Three rules hold for every primitive:
//!
//! - **No system call on release when nobody is parked.** A parking waiter sets a `PARKED` bit in the
//!   word it waits on; a releaser wakes the kernel only when the value it replaced had that bit set.
//! - **Spinning adapts.** Each participant keeps its own spin budget: a wait that outlasts it
//!   (the awaited thread was descheduled, or is just late) shrinks it fourfold, a wait that ends
//!   while spinning doubles it back up to the policy's budget. On a machine busy with other work,
//!   waiters therefore stop burning their core within a few episodes.
//! - **No endless spinning under oversubscription.** When the participants outnumber the available
//!   cores, `Auto` spins only a handful of times before it parks, because a spinning waiter steals the
//!   core that the late arrival needs. Every policy ends in parking, so nothing spins forever.
//! - **Deadlines cost nothing on the fast path.** The clock is read only in the yield and park phases;
//!   a deadline can therefore be overshot by at most one spin phase (about 50 µs with `Auto`).
//!
//! # Budgets
//!
//! Budgets are times, converted to spin rounds once per process by timing a burst of pauses,
//! because a pause costs a few nanoseconds on some CPUs and 40 on others.
//!
//! | policy | spin | then yield | then |
//! |---|---|---|---|
//! | `Auto`, a core per participant | about 50 µs | 16 times | park |
//! | `Auto`, more participants than cores | 16 rounds (a few µs) | 2 times | park |
//! | `Spin` | about 2 ms | 64 times | park |
//! | `Yield` | 16 rounds | 4096 times | park |
//! | `Park` | none | none | park |
//!
//! # Environment
//!
//! | variable | values | effect |
//! |---|---|---|
//! | `PHASERS_WAIT` | `auto`, `spin`, `yield`, `park` | replaces the policy of every object built afterwards |
//! | `PHASERS_SPIN` | a count, e.g. `2000` | replaces the number of spin rounds before yielding (a round is one load and up to 8 pauses) |
//!
//! Both are read when an object is built. A value that cannot be parsed makes the constructor return
//! [`Error::InvalidArgument`](crate::Error::InvalidArgument) naming the variable, rather than being
//! ignored.

mod broken;
mod futex;
mod policy;
mod signal;
mod spin_clock;
mod waiter;

pub(crate) use broken::BrokenState;
pub use policy::WaitPolicy;
pub(crate) use policy::{SpinPlan, Tuning};
pub(crate) use signal::{Signal, MAX_VALUE as MAX_SIGNAL_VALUE};
pub(crate) use waiter::{Deadline, SpinBudget, Stop, Waiter};
