//! The [`harness`] every benchmark of the `phasers` command runs on, shared with the workspace's
//! other benchmark programs; the benchmarks live in the binary, and the harness knows none of them.

pub mod harness;
