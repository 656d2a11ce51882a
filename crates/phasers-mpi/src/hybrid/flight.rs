//! The cross-process step of a call: a short list of non-blocking MPI collectives, advanced by
//! whichever member polls, one stage after the other.

use std::collections::VecDeque;
use std::sync::Arc;

use super::bytes::Bytes;
use super::checked::{CheckedCall, Next};
use super::envelope;
use super::layout::Layout;
use super::plan;
use super::record_exchange::RecordExchange;
use super::reducer::{MpiReduction, Reducer};
use super::request::{self, Request};
use super::signature::{LocalError, Signature};
use super::spare::Spare;
use super::stage::{Net, Stage};
use super::wire;
use crate::channel::Channel;
use crate::error::{Error, Result};

/// What a flight leaves once its stages are done.
pub(crate) struct Landing {
    /// The call's result bytes (see `plan` for what each collective leaves here).
    pub(crate) data: Bytes,
    /// Whether the stages ended with [`Stage::Split`]: `data` then holds every member's split
    /// entry, from which the engine makes this process's new teams.
    pub(crate) split: bool,
}

/// A stage in progress: an MPI request, or the envelope's point-to-point exchange.
enum Active {
    Mpi(Request),
    Envelope(RecordExchange),
}

/// A call's cross-process step in progress.
pub(crate) struct Flight {
    stages: VecDeque<Stage>,
    active: Option<(Active, Stage)>,
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
    /// Whether [`Stage::Split`] was reached (see [`Landing::split`]).
    split: bool,
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
            split: false,
        }
    }

    /// A checked call (see `checked.rs`): the envelope first, then what it says follows.
    pub(crate) fn checked(
        layout: &Layout,
        sig: Signature,
        local_error: Option<LocalError>,
        data: Bytes,
        reducer: Option<Arc<dyn Reducer>>,
        spare: &mut Spare,
    ) -> Flight {
        let (record, call) = CheckedCall::start(
            layout,
            sig,
            local_error,
            data,
            reducer.clone(),
            envelope::ENGINE,
            spare,
        );
        let mut stages = std::mem::take(&mut spare.stages);
        plan::envelope_stages(layout, &mut stages);
        let mut flight = Flight::new(record, stages, reducer, envelope::RECORD, None);
        flight.reduction = Some(envelope::reduction());
        flight.checked = Some(call);
        flight
    }

    /// Gives the flight's buffers and stage queue, once it has landed, back to its slot.
    pub(crate) fn recycle(mut self, spare: &mut Spare) {
        if self.active.is_some() {
            // Unreachable: a landed flight has no request outstanding (and `Drop` leaks the
            // buffers of one that has).
            return;
        }
        let mut stages = std::mem::take(&mut self.stages);
        stages.clear();
        spare.stages = stages;
        spare.give(std::mem::take(&mut self.data));
        spare.give(std::mem::take(&mut self.recv));
    }

    /// Tests the active stage and starts the next ones; `Some` once the call is over. Buffers
    /// come from, and go back to, the slot's `spare`.
    pub(crate) fn advance(
        &mut self,
        layout: &Layout,
        spare: &mut Spare,
    ) -> Option<Result<Landing>> {
        loop {
            if let Some((active, _)) = self.active.as_mut() {
                let done = match active {
                    Active::Mpi(request) => request.test(),
                    Active::Envelope(exchange) => {
                        exchange.test(&layout.flat, layout.mailboxes.as_deref())
                    }
                };
                if !done {
                    return None;
                }
                if let Some((active, stage)) = self.active.take() {
                    if let Active::Envelope(exchange) = active {
                        let (merged, incoming) = exchange.into_buffers();
                        spare.give(std::mem::replace(&mut self.data, merged));
                        spare.give(incoming);
                    }
                    if let Err(error) = self.finish(stage, layout, spare) {
                        return Some(Err(error));
                    }
                }
            }
            let Some(stage) = self.stages.pop_front() else {
                if let Some(call) = self.checked.take() {
                    self.after_envelope(call, layout, spare);
                    continue;
                }
                if let Some(error) = self.forced.take() {
                    return Some(Err(error));
                }
                return Some(Ok(Landing {
                    data: std::mem::take(&mut self.data),
                    split: self.split,
                }));
            };
            if let Stage::Split = stage {
                // A split's last stage. A split never has a `forced` error (across processes it
                // is always checked; alone, a process returns its error before any flight), so
                // the flight lands next, and the engine makes the teams from `data`.
                self.split = true;
                continue;
            }
            if let Stage::Envelope = stage {
                let record = std::mem::take(&mut self.data);
                let incoming = spare.take(envelope::MAX_RECORD);
                let exchange = RecordExchange::start(
                    &layout.flat,
                    layout.mailboxes.as_deref(),
                    record,
                    incoming,
                );
                self.active = Some((Active::Envelope(exchange), stage));
                continue;
            }
            if let Some(request) = self.begin(&stage, layout, spare) {
                self.active = Some((Active::Mpi(request), stage));
            }
        }
    }

    /// Goes on as the merged envelope (now `data`) says.
    fn after_envelope(&mut self, call: CheckedCall, layout: &Layout, spare: &mut Spare) {
        let merged = match call.after(layout, &self.data, &mut self.stages, spare) {
            Next::Go {
                data,
                reduction,
                elem_size,
            } => {
                self.reduction = reduction;
                self.elem_size = elem_size.max(1);
                std::mem::replace(&mut self.data, data)
            }
            Next::Details(record) => {
                self.stages.push_back(Stage::Details);
                std::mem::replace(&mut self.data, record)
            }
        };
        spare.give(merged);
    }

    fn channel(layout: &Layout, net: Net) -> Option<&Channel> {
        match (net, &layout.hierarchy) {
            (Net::Flat, _) => Some(&layout.flat),
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
    fn begin(&mut self, stage: &Stage, layout: &Layout, spare: &mut Spare) -> Option<Request> {
        let channel = Self::channel(layout, Self::net(stage))?;
        let (me, size) = (channel.rank(), channel.size());
        let send = self.data.as_ptr();
        let len = self.data.len();
        let count = len / self.elem_size;
        let reduction = self.reduction;
        // Every receive buffer is written by MPI in full before it is read (`Reduce`'s only at
        // the root, which alone reads it), so a reused one need not be cleared.
        // SAFETY: for every start below, `data` and `recv` are heap buffers owned by this flight;
        // neither is touched, moved out or freed until the request completes (`finish` runs
        // after a successful test, and `Drop` leaks them if it never does); `recv` is sized for
        // what the collective writes; `Blocks` live in the stage kept beside the request.
        let request = unsafe {
            match stage {
                Stage::Details => {
                    self.recv = spare.take(wire::RECORD * size);
                    request::iallgather(channel, send, len, self.recv.as_mut_ptr())
                }
                Stage::Barrier(_) => request::ibarrier(channel),
                Stage::Bcast { root, .. } => {
                    request::ibcast(channel, self.data.as_mut_ptr(), len, *root)
                }
                Stage::Reduce { root, .. } => {
                    self.recv = spare.take(len);
                    let red = reduction?;
                    request::ireduce(channel, send, self.recv.as_mut_ptr(), count, red, *root)
                }
                Stage::Allreduce(_) => {
                    self.recv = spare.take(len);
                    let red = reduction?;
                    request::iallreduce(channel, send, self.recv.as_mut_ptr(), count, red)
                }
                Stage::AllgatherFold => {
                    self.recv = spare.take(len * size);
                    request::iallgather(channel, send, len, self.recv.as_mut_ptr())
                }
                Stage::GatherFold { root, blocks } | Stage::Gatherv { root, blocks } => {
                    self.recv = spare.take(if me == *root { blocks.total() } else { 0 });
                    request::igatherv(channel, send, len, self.recv.as_mut_ptr(), blocks, *root)
                }
                Stage::Allgatherv(blocks) => {
                    self.recv = spare.take(blocks.total());
                    request::iallgatherv(channel, send, len, self.recv.as_mut_ptr(), blocks)
                }
                Stage::Scatterv { root, blocks } => {
                    let mine = blocks.counts.get(me).map_or(0, |&c| c as usize);
                    self.recv = spare.take(mine);
                    request::iscatterv(channel, send, blocks, self.recv.as_mut_ptr(), mine, *root)
                }
                Stage::Split | Stage::Envelope => return None,
            }
        };
        Some(request)
    }

    /// Takes a completed stage's result.
    fn finish(&mut self, stage: Stage, layout: &Layout, spare: &mut Spare) -> Result<()> {
        let me = Self::channel(layout, Self::net(&stage)).map_or(0, Channel::rank);
        match stage {
            Stage::Details => {
                return Err(wire::verdict(self.recv.as_slice(), &layout.offsets, true)
                    .unwrap_or_else(wire::unnamed_difference));
            }
            Stage::Barrier(_) | Stage::Bcast { .. } | Stage::Split | Stage::Envelope => {}
            Stage::Reduce { root, .. } => {
                if me == root {
                    std::mem::swap(&mut self.data, &mut self.recv);
                }
            }
            Stage::GatherFold { root, .. } => {
                if me == root {
                    let folded = self.fold(spare);
                    spare.give(std::mem::replace(&mut self.data, folded));
                }
            }
            Stage::Gatherv { root, .. } => {
                if me == root {
                    std::mem::swap(&mut self.data, &mut self.recv);
                }
            }
            Stage::AllgatherFold => {
                let folded = self.fold(spare);
                spare.give(std::mem::replace(&mut self.data, folded));
            }
            Stage::Allreduce(_) | Stage::Allgatherv(_) | Stage::Scatterv { .. } => {
                std::mem::swap(&mut self.data, &mut self.recv);
            }
        }
        spare.give(std::mem::take(&mut self.recv));
        Ok(())
    }

    /// Combines the equal parts of `recv` (one per process, in process order) into one.
    fn fold(&self, spare: &mut Spare) -> Bytes {
        let part = self.data.len();
        if part == 0 {
            return Bytes::default();
        }
        let mut parts = self.recv.as_slice().chunks_exact(part);
        let Some(first) = parts.next() else {
            return Bytes::default();
        };
        let mut acc = spare.take(part);
        acc.as_mut_slice().copy_from_slice(first);
        if let Some(reducer) = &self.reducer {
            // `combine` takes whole buffers: each part is copied into one, reused.
            let mut next = spare.take(part);
            for from in parts {
                next.as_mut_slice().copy_from_slice(from);
                reducer.combine(&mut acc, &next);
            }
            spare.give(next);
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
