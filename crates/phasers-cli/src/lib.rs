//! The [`harness`] every benchmark of the `phasers` command runs on, shared with the workspace's
//! other benchmark programs; the benchmarks live in the binary, and the harness knows none of them.
//!
//! ```
//! use phasers_cli::harness::{stats, table};
//!
//! let summary = stats::summarize(&[120.0, 100.0, 110.0]).unwrap();
//! assert_eq!(table::time(summary.median), "110 ns");
//! ```

pub mod harness;
