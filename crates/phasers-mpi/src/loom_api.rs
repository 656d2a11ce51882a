//! The lock-free protocols the loom models run, for `tests/loom_*.rs` only: this module exists
//! only under `--cfg phasers_loom` (see `sync.rs` and `scripts/loom.sh`) and is no public API.
//!
//! Each protocol is the code that ships, generic over what the models replace: the node-shm
//! counters over [`NodeSlots`] (loom atomics instead of a mapped file) and the network step
//! over the `network` closure of [`NodeGather::poll`]; the combined barrier's failure record over
//! [`LeaderStep`] (a stub instead of the process barrier); the hybrid team's direct-path
//! meeting ([`Arrivals`]) as it is, with the engine's own meeting modelled by the test; the
//! envelope's mailboxes ([`post`], [`take`]) over [`MailSlots`] (loom atomics and cells instead
//! of a mapped file), driven by the real steps of recursive doubling ([`Doubling`]).

pub use crate::combined::process_side::{LeaderStep, ProcessSide, Seat};
pub use crate::hybrid::arrivals::{phase_word, Arrivals, Meeting, DONE, ENGINE_ARRIVAL, REPOST};
pub use crate::hybrid::doubling::{Doubling, Received, Step};
pub use crate::hybrid::mailbox::{post, take, Geometry, MailSlots, RING};
pub use crate::process::node_gather::{NodeGather, NodeSlots};
