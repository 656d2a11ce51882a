//! A checked call across processes: the envelope each process sends first, and what follows
//! once the envelopes are merged (see `envelope.rs`).
//!
//! | the merged envelope says | what follows |
//! |---|---|
//! | all agree, payload inside | nothing: the result is read from the envelope (a split still makes its teams) |
//! | all agree, payload follows | the call's own stages (`plan::stages`), as unchecked |
//! | some differ, or found an error | every process's detailed record (`wire.rs`) to every process; each draws the same error |
//!
//! Every process sees the same merged envelope, so all take the same row, and no payload of a
//! disagreeing call ever reaches MPI.

use std::collections::VecDeque;
use std::sync::Arc;

use super::bytes::Bytes;
use super::envelope::{self, Header, Mode};
use super::layout::Layout;
use super::plan;
use super::reducer::{MpiReduction, Reducer};
use super::signature::{Kind, LocalError, Signature};
use super::spare::Spare;
use super::stage::Stage;
use super::wire;

/// What a process holds back while its envelope travels.
pub(crate) struct CheckedCall {
    sig: Signature,
    local_error: Option<LocalError>,
    reducer: Option<Arc<dyn Reducer>>,
    /// The process's contribution when it is too large for the envelope; `None` when it
    /// travels inside.
    follows: Option<Bytes>,
}

/// What the call does once the envelopes are merged.
pub(crate) enum Next {
    /// Every process made the same call: it goes on with `data` through the stages pushed
    /// onto the flight's queue (none when the envelope carried it all), `Reduce` and
    /// `Allreduce` stages with `reduction`.
    Go {
        data: Bytes,
        reduction: Option<MpiReduction>,
        elem_size: usize,
    },
    /// Some process called differently or found an error: this process's detailed record, for
    /// the exchange that names what differs.
    Details(Bytes),
}

/// How a call's payload travels in the envelope: its mode, the bytes all processes' payloads
/// span together, and where this process writes its part.
pub(crate) fn placement(layout: &Layout, sig: &Signature, typed: bool) -> (Mode, usize, usize) {
    let block = sig.block();
    let (process, processes) = (layout.process(), layout.counts.len());
    let (mode, used, at) = match sig.kind {
        Kind::Barrier => (Mode::Empty, 0, 0),
        Kind::Broadcast => (Mode::Placed, block, 0),
        Kind::Scatter => (Mode::Placed, layout.size.saturating_mul(block), 0),
        Kind::Reduce | Kind::Allreduce if typed => (Mode::Reduced, block, 0),
        // A custom op: every process's partial result, combined in process order afterwards.
        Kind::Reduce | Kind::Allreduce => (
            Mode::Placed,
            processes.saturating_mul(block),
            process.saturating_mul(block),
        ),
        Kind::Gather | Kind::Split => (
            Mode::Placed,
            layout.size.saturating_mul(block),
            layout.first_rank().saturating_mul(block),
        ),
    };
    if used == 0 {
        (Mode::Empty, 0, 0)
    } else if used > envelope::capacity(layout.envelope_p2p) {
        (Mode::Follows, 0, 0)
    } else {
        (mode, used, at)
    }
}

impl CheckedCall {
    /// The envelope of a call whose members posted `sig`, with `local_error` where they
    /// disagree among themselves or passed a bad argument, and this process's contribution
    /// `data` otherwise; and what to keep until it returns. `flags` are the record's own
    /// (`envelope::ENGINE` from the engine). The record is a buffer of `spare`, which gets
    /// `data` back when it travels inside.
    pub(crate) fn start(
        layout: &Layout,
        sig: Signature,
        local_error: Option<LocalError>,
        data: Bytes,
        reducer: Option<Arc<dyn Reducer>>,
        flags: u64,
        spare: &mut Spare,
    ) -> (Bytes, CheckedCall) {
        let typed = reducer.as_ref().and_then(|r| r.typed());
        let (mode, used, at) = placement(layout, &sig, typed.is_some());
        let header = Header::new(&sig, mode, typed.filter(|_| mode == Mode::Reduced), used);
        let inside = matches!(mode, Mode::Placed | Mode::Reduced) && local_error.is_none();
        let payload = if inside { data.as_slice() } else { &[] };
        let mut record = spare.take_zeroed(envelope::record_len(layout.envelope_p2p, used));
        let flags = flags
            | if local_error.is_some() {
                envelope::ERROR
            } else {
                0
            };
        envelope::seal(record.as_mut_slice(), &header, flags, payload, at);
        let follows = if mode == Mode::Follows {
            Some(data)
        } else {
            spare.give(data);
            None
        };
        let call = CheckedCall {
            sig,
            local_error,
            reducer,
            follows,
        };
        (record, call)
    }

    /// What follows the merged envelope `merged`; the stages go onto `stages` (empty), the
    /// buffers come from `spare`.
    pub(crate) fn after(
        self,
        layout: &Layout,
        merged: &Bytes,
        stages: &mut VecDeque<Stage>,
        spare: &mut Spare,
    ) -> Next {
        let Some(payload) = envelope::open(merged.as_slice()) else {
            return Next::Details(wire::encode(&self.sig, self.local_error.as_ref()));
        };
        let builtin = self.reducer.as_ref().and_then(|r| r.builtin());
        match self.follows {
            Some(data) => {
                plan::stages(layout, &self.sig, builtin.is_some(), stages);
                Next::Go {
                    data,
                    reduction: builtin,
                    elem_size: self.sig.elem_size,
                }
            }
            None => {
                if self.sig.kind == Kind::Split {
                    stages.push_back(Stage::Split);
                }
                Next::Go {
                    data: self.unpack(layout, payload, spare),
                    reduction: None,
                    elem_size: self.sig.elem_size,
                }
            }
        }
    }

    /// The call's result from the merged payload, as the call's own stages would leave it.
    fn unpack(&self, layout: &Layout, payload: &[u8], spare: &mut Spare) -> Bytes {
        let block = self.sig.block();
        let part = |spare: &mut Spare, from: usize, len: usize| {
            let bytes = from
                .checked_add(len)
                .and_then(|end| payload.get(from..end))
                .unwrap_or(&[]);
            let mut copy = spare.take(bytes.len());
            copy.as_mut_slice().copy_from_slice(bytes);
            copy
        };
        match self.sig.kind {
            Kind::Barrier => Bytes::default(),
            Kind::Reduce | Kind::Allreduce => match &self.reducer {
                Some(reducer) if reducer.typed().is_none() => {
                    // The processes' partial results, combined in process order.
                    let processes = layout.counts.len();
                    let mut acc = part(spare, 0, block);
                    for p in 1..processes {
                        let next = part(spare, p * block, block);
                        reducer.combine(&mut acc, &next);
                        spare.give(next);
                    }
                    acc
                }
                _ => part(spare, 0, block),
            },
            Kind::Broadcast => part(spare, 0, block),
            Kind::Gather | Kind::Split => part(spare, 0, layout.size * block),
            // Scatter leaves each process its own members' blocks.
            Kind::Scatter => part(spare, layout.first_rank() * block, layout.local() * block),
        }
    }
}
