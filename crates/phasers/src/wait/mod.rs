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
//! - **No endless spinning under oversubscription.** When the participants outnumber the available
//!   cores, `Auto` spins only a handful of times before it parks, because a spinning waiter steals the
//!   core that the late arrival needs. Every policy ends in parking, so nothing spins forever.
//! - **Deadlines cost nothing on the fast path.** The clock is read only in the yield and park phases;
//!   a deadline can therefore be overshot by at most one spin phase (well under a millisecond with
//!   the default spin budget).
//!
//! # Environment
//!
//! | variable | values | effect |
//! |---|---|---|
//! | `PHASERS_WAIT` | `auto`, `spin`, `yield`, `park` | replaces the policy of every object built afterwards |
//! | `PHASERS_SPIN` | a count, e.g. `2000` | replaces the number of spin rounds before yielding |
//!
//! Both are read when an object is built. A value that cannot be parsed makes the constructor return
//! [`Error::InvalidArgument`](crate::Error::InvalidArgument) naming the variable, rather than being
//! ignored.

mod broken;
mod policy;
mod signal;
mod waiter;

pub(crate) use broken::BrokenState;
pub use policy::WaitPolicy;
pub(crate) use policy::{SpinPlan, Tuning};
pub(crate) use signal::Signal;
pub(crate) use waiter::{Deadline, Stop, Waiter};
