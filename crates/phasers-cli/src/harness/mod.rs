//! What every benchmark of `phasers` shares, whatever it measures. The driver,
//! [`bench`](mod@bench), runs a benchmark's tables on the [`engine`] (rounds of timed iterations
//! of a [`work`] on T threads) in interleaved rounds ([`interleave`]) into the one row type of
//! [`result`], which [`render`], [`ratio`] and [`files`] turn into tables, ratios and files.
//! - Planning: [`args`], [`threads`], [`schedule`], [`delay`], [`affinity`], [`memory`],
//!   [`run_args`].
//! - Measuring: [`stalls`], [`floor`], [`floors_record`], [`watchdog`], [`progress`], [`child`].
//! - Judging: [`stats`], [`noise`], [`resolution`], [`failures`].
//! - Reporting: [`header`], [`footnotes`], [`machine`], [`native_versions`], [`provenance`],
//!   [`table`], [`outputs`], [`plot`], [`verbosity`].

pub mod affinity;
pub mod args;
pub mod bench;
pub mod child;
pub mod delay;
pub mod engine;
pub mod failures;
pub mod files;
pub mod floor;
pub mod floors_record;
pub mod footnotes;
pub mod header;
pub mod interleave;
pub mod machine;
pub mod memory;
pub mod native_versions;
pub mod noise;
pub mod outputs;
pub mod plot;
pub mod progress;
pub mod provenance;
pub mod ratio;
pub mod render;
pub mod resolution;
pub mod result;
pub mod run_args;
pub mod schedule;
pub mod stalls;
pub mod stats;
pub mod table;
pub mod threads;
pub mod verbosity;
pub mod watchdog;
pub mod work;
