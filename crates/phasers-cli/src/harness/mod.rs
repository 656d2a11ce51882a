//! What every benchmark of `phasers` shares, whatever it measures.
//!
//! - Planning: [`args`] (the command-line parsers), [`threads`] (thread counts),
//!   [`schedule`] (warm-up, calibration and samples of one row), [`delay`] (EPCC's delay loop),
//!   [`affinity`] (pinning), [`memory`] (rows too big for this machine), [`run_args`] (the
//!   options of a run that are not about what it measures).
//! - Measuring: [`engine`] (rounds of timed iterations on T threads) of a [`work`] (what each
//!   thread does), [`stalls`] (arrival spreads), [`floor`] (the cache-line round trip),
//!   [`floors_record`] (the library's floors), [`watchdog`] (hang detection), [`progress`] (the
//!   progress bar on stderr), [`child`] (a row measured by a child process of this program).
//! - Judging: [`stats`] (summaries over samples), [`noise`] (whether a ratio is settled),
//!   [`failures`] (one error naming every failed row).
//! - Reporting: [`header`] (the lines above the tables), [`machine`] and [`native_versions`]
//!   (what the numbers belong to), [`provenance`] (what heads every report file), [`table`]
//!   (aligned tables and number formats), [`outputs`] (`--json`, `--csv`, `--plot` files
//!   created before the run), [`plot`] (an SVG line plot of cost against threads).
//! - Row reports (schema 4): [`result`] (the one row and report type), [`render`] (the one table
//!   renderer), [`ratio`] (ratios between rows, and the noise they mark), [`files`] (JSON, CSV,
//!   plots and failures of a report), [`interleave`] (a table's rows in interleaved rounds,
//!   merged, with its floor row), [`bench`](mod@bench) (the driver every benchmark runs on).

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
