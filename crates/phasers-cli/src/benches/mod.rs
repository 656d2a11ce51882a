//! The benchmarks on the one harness (`phasers_cli::harness::bench`), one file each. `bench
//! phaser` runs the barrier sweep with its own rows, and `bench dynamic` uses phaser's phasers and
//! app's `timed`, so imports go barrier ← phaser ← dynamic → app and never back.

pub mod app;
pub mod async_tasks;
pub mod barrier;
pub mod collectives;
pub mod dynamic;
pub mod floors;
pub mod phaser;
pub mod profile;
pub mod reduce;
