//! What was measured on this machine: the floors, and the tuning profile `phasers bench barrier --write-profile` writes.
//!
//! # Layers
//!
//! The profile names algorithms (each entry records the one that measured fastest) and records
//! floors, while a barrier with `Algorithm::Auto` consults the profile and the wait budgets
//! consult its floors. So that each dependency goes one way, what both sides need sits below
//! both:
//!
//! ```text
//! barrier/auto.rs ──┐                 (Auto: the profile's choice, else the built-in rule)
//! wait/floors/ ─────┤                 (this process's floors: env, profile, or measured)
//!                   ▼
//! tune/profile_status.rs              (the lookup, once per process)
//!   ├─> tune/profile_path.rs          (PHASERS_PROFILE and the default path)
//!   └─> tune/profile_file.rs          (the JSON form with serde, load and save)
//!         └─> tune/profile.rs         (the value and its rules; no neighbour imported)
//!               ├─> tune/floors.rs    (the floors as values)
//!               └─> algorithm.rs      (the Algorithm enum and its names)
//! ```
//!
//! No file here imports `barrier/` or `wait/`, and within `tune/` every arrow above points down:
//! `Profile`'s methods are spread over the files that implement them (`from_json` and `save` in
//! `profile_file.rs`, `default_path` in `profile_path.rs`, `status` and `active` in
//! `profile_status.rs`), so `profile.rs` needs none of them.
//!
//! # The `profile` feature
//!
//! Everything but the floors is behind the default `profile` feature, the only user of serde and
//! serde_json. Without it there is no `Profile`: `Auto` follows its built-in rule, and no file,
//! `PHASERS_PROFILE`, `XDG_CONFIG_HOME` or `HOME` is read.

mod floors;
#[cfg(feature = "profile")]
mod profile;
#[cfg(feature = "profile")]
mod profile_file;
#[cfg(feature = "profile")]
mod profile_path;
#[cfg(feature = "profile")]
mod profile_status;

pub(crate) use floors::check_floor;
pub use floors::{Floors, FloorsSource};
#[cfg(feature = "profile")]
pub use profile::{Profile, ProfileEntry};
#[cfg(feature = "profile")]
pub(crate) use profile_status::for_auto as profile_for_auto;
#[cfg(feature = "profile")]
pub use profile_status::ProfileStatus;
