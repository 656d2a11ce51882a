//! What this machine costs, measured once per process: the three floors every budget is derived
//! from (a cache-line round trip, a yield hand-off, a wake; see [`Floors`]) and the length of one
//! spin pause, which turns budgets written as times into rounds.
//!
//! - `current.rs`: which floors this process uses (`PHASERS_FLOORS`, the tuning profile, or a
//!   measurement) and the `PHASERS_FLOORS` form;
//! - `measure.rs`: how the floors are measured, by two threads playing ping-pong;
//! - `spin_clock.rs`: how long a pause lasts on this CPU.
//!
//! Nothing here waits: the waiting core (`plan.rs`, `tuning.rs`) reads these values, never the
//! other way round.

mod current;
mod measure;
mod spin_clock;

pub use current::{Floors, FloorsSource};
pub(crate) use spin_clock::pause_cost;
