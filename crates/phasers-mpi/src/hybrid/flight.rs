//! The cross-process step of a call: a short list of non-blocking MPI collectives, advanced by
//! whichever member polls, one stage after the other.

use std::collections::VecDeque;
use std::sync::Arc;

use super::bytes::Bytes;
use super::checked::{CheckedCall, Next};
use super::envelope;
use super::plan;
use super::reducer::{MpiReduction, Reducer};
use super::request::{self, Blocks, Request};
use super::shared::{Outcome, ProcessShared};
use super::signature::{LocalError, Signature};
use super::wire;
use crate::channel::Channel;
use crate::error::{Error, Result};

/// Which communicator a stage runs on.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Net {
    /// All processes of the team.
    Flat,
    /// The processes of this node.
    Node,
    /// One leader per node; processes that lead no node skip the stage.
    Leaders,
}

/// One step of a call's cross-process part. `data` is the process's current value; results
/// arrive in `recv` and replace `data` where the stage says so.
pub(crate) enum Stage {
    /// A checked call whose envelopes disagree: every process's detailed record (see [`wire`])
    /// to every process, which draws the call's error from them.
    Details,
    Barrier(Net),
    /// `data` from `root` to all, in place.
    Bcast {
        net: Net,
        root: usize,
    },
    /// Reduction of `data` with the flight's MPI operation (a built-in op, or the envelope's
    /// merge) to `root`, which takes the result.
    Reduce {
        net: Net,
        root: usize,
    },
    /// As `Reduce`; everyone takes the result.
    Allreduce(Net),
    /// Custom reduction to all: gather every process's partial, combine in process order.
    AllgatherFold,
    /// Custom reduction to `root`: gather the partials there, combine in process order.
    GatherFold {
        root: usize,
        blocks: Blocks,
    },
    /// Concatenation of every process's `data` at `root`.
    Gatherv {
        root: usize,
        blocks: Blocks,
    },
    /// Concatenation of every process's `data` at every process.
    Allgatherv(Blocks),
    /// `root`'s `data`, cut into one block per process.
    Scatterv {
        root: usize,
        blocks: Blocks,
    },
    /// A split's new communicators and teams, from the gathered (color, key, rank) entries.
    Split,
}

/// A call's cross-process step in progress.
pub(crate) struct Flight {
    stages: VecDeque<Stage>,
    active: Option<(Request, Stage)>,
    data: Bytes,
    recv: Bytes,
    /// The MPI operation of `Reduce` and `Allreduce` stages: the envelope's while it travels,
    /// then the call's built-in op.
    reduction: Option<MpiReduction>,
    /// Custom reductions combine the gathered partial results with it.
    reducer: Option<Arc<dyn Reducer>>,
    /// Bytes per element of `data`: MPI counts elements.
    elem_size: usize,
    /// A checked call whose envelope is on its way: what it holds back until the envelopes
    /// are merged.
    checked: Option<CheckedCall>,
    /// An error found locally in unchecked mode: the stages run (so the other processes are not
    /// left waiting), and then every local member gets this error.
    forced: Option<Error>,
    split: Vec<(u32, Arc<ProcessShared>)>,
}

impl Flight {
    pub(crate) fn new(
        data: Bytes,
        stages: VecDeque<Stage>,
        reducer: Option<Arc<dyn Reducer>>,
        elem_size: usize,
        forced: Option<Error>,
    ) -> Flight {
        Flight {
            stages,
            active: None,
            data,
            recv: Bytes::default(),
            reduction: reducer.as_ref().and_then(|r| r.builtin()),
            reducer,
            elem_size: elem_size.max(1),
            forced,
            checked: None,
            split: Vec::new(),
        }
    }

    /// A checked call (see `checked.rs`): the envelope first, then what it says follows.
    pub(crate) fn checked(
        shared: &ProcessShared,
        sig: Signature,
        local_error: Option<LocalError>,
        data: Bytes,
        reducer: Option<Arc<dyn Reducer>>,
    ) -> Flight {
        let (record, call) = CheckedCall::start(shared, sig, local_error, data, reducer.clone());
        let mut flight = Flight::new(
            record,
            plan::envelope_stages(shared),
            reducer,
            envelope::RECORD,
            None,
        );
        flight.reduction = Some(envelope::reduction());
        flight.checked = Some(call);
        flight
    }

    /// Tests the active stage and starts the next ones; `Some` once the call is over.
    pub(crate) fn advance(&mut self, shared: &ProcessShared) -> Option<Result<Outcome>> {
        loop {
            if let Some((request, _)) = self.active.as_mut() {
                if !request.test() {
                    return None;
                }
                if let Some((_, stage)) = self.active.take() {
                    if let Err(error) = self.finish(stage, shared) {
                        return Some(Err(error));
                    }
                }
            }
            let Some(stage) = self.stages.pop_front() else {
                if let Some(call) = self.checked.take() {
                    self.after_envelope(call, shared);
                    continue;
                }
                if let Some(error) = self.forced.take() {
                    return Some(Err(error));
                }
                return Some(Ok(Outcome {
                    data: std::mem::take(&mut self.data),
                    split: std::mem::take(&mut self.split),
                }));
            };
            if let Stage::Split = stage {
                match super::split::make_teams(shared, &self.data) {
                    Ok(teams) => self.split = teams,
                    Err(error) => return Some(Err(error)),
                }
                continue;
            }
            if let Some(request) = self.begin(&stage, shared) {
                self.active = Some((request, stage));
            }
        }
    }

    /// Goes on as the merged envelope (now `data`) says.
    fn after_envelope(&mut self, call: CheckedCall, shared: &ProcessShared) {
        match call.after(shared, &self.data) {
            Next::Go {
                data,
                stages,
                reduction,
                elem_size,
            } => {
                self.data = data;
                self.stages = stages;
                self.reduction = reduction;
                self.elem_size = elem_size.max(1);
            }
            Next::Details(record) => {
                self.data = record;
                self.stages = VecDeque::from([Stage::Details]);
            }
        }
    }

    fn channel(shared: &ProcessShared, net: Net) -> Option<&Channel> {
        match (net, &shared.layout.hierarchy) {
            (Net::Flat, _) => Some(&shared.layout.flat),
            (Net::Node, Some(h)) => Some(&h.node),
            (Net::Leaders, Some(h)) => h.leaders.as_ref(),
            (_, None) => None,
        }
    }

    fn net(stage: &Stage) -> Net {
        match stage {
            Stage::Barrier(net)
            | Stage::Bcast { net, .. }
            | Stage::Reduce { net, .. }
            | Stage::Allreduce(net) => *net,
            _ => Net::Flat,
        }
    }

    /// Starts `stage`; `None` when this process takes no part in it.
    fn begin(&mut self, stage: &Stage, shared: &ProcessShared) -> Option<Request> {
        let channel = Self::channel(shared, Self::net(stage))?;
        let (me, size) = (channel.rank(), channel.size());
        let send = self.data.as_ptr();
        let len = self.data.len();
        let count = len / self.elem_size;
        let reduction = self.reduction;
        // SAFETY: for every start below, `data` and `recv` are heap buffers owned by this flight;
        // neither is touched, moved out or freed until the request completes (`finish` runs
        // after a successful test, and `Drop` leaks them if it never does); `recv` is sized for
        // what the collective writes; `Blocks` live in the stage kept beside the request.
        let request = unsafe {
            match stage {
                Stage::Details => {
                    self.recv = Bytes::zeroed(wire::RECORD * size);
                    request::iallgather(channel, send, len, self.recv.as_mut_ptr())
                }
                Stage::Barrier(_) => request::ibarrier(channel),
                Stage::Bcast { root, .. } => {
                    request::ibcast(channel, self.data.as_mut_ptr(), len, *root)
                }
                Stage::Reduce { root, .. } => {
                    self.recv = Bytes::zeroed(len);
                    let red = reduction?;
                    request::ireduce(channel, send, self.recv.as_mut_ptr(), count, red, *root)
                }
                Stage::Allreduce(_) => {
                    self.recv = Bytes::zeroed(len);
                    let red = reduction?;
                    request::iallreduce(channel, send, self.recv.as_mut_ptr(), count, red)
                }
                Stage::AllgatherFold => {
                    self.recv = Bytes::zeroed(len * size);
                    request::iallgather(channel, send, len, self.recv.as_mut_ptr())
                }
                Stage::GatherFold { root, blocks } | Stage::Gatherv { root, blocks } => {
                    self.recv = Bytes::zeroed(if me == *root { blocks.total() } else { 0 });
                    request::igatherv(channel, send, len, self.recv.as_mut_ptr(), blocks, *root)
                }
                Stage::Allgatherv(blocks) => {
                    self.recv = Bytes::zeroed(blocks.total());
                    request::iallgatherv(channel, send, len, self.recv.as_mut_ptr(), blocks)
                }
                Stage::Scatterv { root, blocks } => {
                    let mine = blocks.counts.get(me).map_or(0, |&c| c as usize);
                    self.recv = Bytes::zeroed(mine);
                    request::iscatterv(channel, send, blocks, self.recv.as_mut_ptr(), mine, *root)
                }
                Stage::Split => return None,
            }
        };
        Some(request)
    }

    /// Takes a completed stage's result.
    fn finish(&mut self, stage: Stage, shared: &ProcessShared) -> Result<()> {
        let me = Self::channel(shared, Self::net(&stage)).map_or(0, Channel::rank);
        match stage {
            Stage::Details => {
                return Err(
                    wire::verdict(self.recv.as_slice(), &shared.layout.offsets, true)
                        .unwrap_or_else(wire::unnamed_difference),
                );
            }
            Stage::Barrier(_) | Stage::Bcast { .. } | Stage::Split => {}
            Stage::Reduce { root, .. } => {
                if me == root {
                    std::mem::swap(&mut self.data, &mut self.recv);
                }
            }
            Stage::GatherFold { root, .. } => {
                if me == root {
                    self.data = self.fold();
                }
            }
            Stage::Gatherv { root, .. } => {
                if me == root {
                    std::mem::swap(&mut self.data, &mut self.recv);
                }
            }
            Stage::AllgatherFold => self.data = self.fold(),
            Stage::Allreduce(_) | Stage::Allgatherv(_) | Stage::Scatterv { .. } => {
                std::mem::swap(&mut self.data, &mut self.recv);
            }
        }
        self.recv = Bytes::default();
        Ok(())
    }

    /// Combines the equal parts of `recv` (one per process, in process order) into one.
    fn fold(&self) -> Bytes {
        let part = self.data.len();
        if part == 0 {
            return Bytes::default();
        }
        let mut parts = self.recv.as_slice().chunks_exact(part);
        let mut acc = Bytes::copy_of(parts.next().unwrap_or(&[]));
        if let Some(reducer) = &self.reducer {
            for next in parts {
                reducer.combine(&mut acc, &Bytes::copy_of(next));
            }
        }
        acc
    }
}

impl Flight {
    /// Whether an MPI request of this flight is still outstanding.
    pub(crate) fn is_active(&self) -> bool {
        self.active.is_some()
    }
}

impl Drop for Flight {
    fn drop(&mut self) {
        if let Some(active) = self.active.take() {
            // Only a team given up mid-call (a timeout, a broken team) drops an active flight.
            // An MPI collective cannot be cancelled: MPI may still write into our buffers when
            // the other processes arrive, so they (and the count arrays) are never freed.
            std::mem::forget(active);
            std::mem::forget(std::mem::take(&mut self.data));
            std::mem::forget(std::mem::take(&mut self.recv));
        }
    }
}
