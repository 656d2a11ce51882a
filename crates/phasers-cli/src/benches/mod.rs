//! The benchmarks on the one harness (`phasers_cli::harness::bench`), one file each: `bench
//! barrier` with its profile, and `bench phaser`, which runs the barrier sweep with its own rows.
//! (They move to `bench/` once `bench.rs`, the old row runner, is gone.)

pub mod barrier;
pub mod phaser;
pub mod profile;
pub mod reduce;
