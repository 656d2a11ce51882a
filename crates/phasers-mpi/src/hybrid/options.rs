//! The options every process of a team agrees on, which the teams split from it inherit.

use std::time::Duration;

/// Options a team passes on to the teams split from it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Options {
    pub(crate) checked: bool,
    pub(crate) node_aware: bool,
    pub(crate) timeout: Option<Duration>,
    pub(crate) ranks_per_node: Option<usize>,
    /// Whether a blocking allreduce may take the direct path (see `direct.rs`): no process set
    /// a timeout, and the team is unchecked or has one process. Set by `Layout::new` from every
    /// process's options, so all processes take the same path for the same call.
    pub(crate) direct: bool,
}
