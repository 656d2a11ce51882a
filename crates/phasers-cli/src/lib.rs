//! The library behind the `phasers` command: the [`harness`] every benchmark of the command runs
//! on (plans, calibration, samples and statistics, the machine's floors, tables, output files,
//! the watchdog and provenance), so other benchmark programs of the workspace can share it.
//!
//! The benchmarks themselves live in the binary; the harness knows nothing of them.
//!
//! ```
//! use phasers_cli::harness::{stats, table};
//!
//! let summary = stats::summarize(&[120.0, 100.0, 110.0]).unwrap();
//! assert_eq!(table::time(summary.median), "110 ns");
//! ```

pub mod harness;
