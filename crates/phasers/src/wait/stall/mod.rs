//! Stalls: a waiter that has waited past its object's stall time reports it, once per object and
//! episode, and goes on waiting (see the [`wait`](super) docs, *Stalls*).
//!
//! - `time.rs`: the stall time (each builder's `stall_after`, else `PHASERS_STALL`, else 10 s);
//! - `latch.rs`: the latch that lets one waiter per episode report, and what a waiter watches;
//! - `report.rs`: what a report says, and where it goes (the stall hook, or stderr);
//! - `watchdog.rs`: the thread that reports for async tasks, which cannot report themselves.
//!
//! `time.rs` sits below the other two, and `latch.rs` above `report.rs`, so none imports another
//! back.

mod latch;
mod report;
mod time;
mod watchdog;

pub(crate) use latch::{Stall, Watch, Watched};
pub(crate) use report::Wording;
pub use report::{clear_stall_hook, has_stall_hook, set_stall_hook, StallReport};
pub(crate) use time::{stall_after, stall_after_from_env};
pub use time::{DEFAULT_STALL_AFTER, STALL_ENV};
pub(crate) use watchdog::watch_task;
