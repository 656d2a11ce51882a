//! A checked call across processes from the direct path (`direct.rs`, `direct_sync.rs`): the
//! same envelope the engine sends (`envelope.rs`, exchanged point to point by
//! `record_exchange.rs`), run by the one member of the process that completes the meeting, and
//! what follows it.
//!
//! | the merged envelope says | what follows |
//! |---|---|
//! | all agree, payload inside | nothing: the merged payload is the call's result |
//! | all agree, payload follows, every process on the direct path | the data, point to point (`exchange.rs`) |
//! | all agree, payload follows, some process on the engine (a non-blocking call, say) | the engine's own stages (`plan.rs`), run here, so that both sides make the same MPI calls |
//! | some differ, or found an error | every process's detailed record to every process (`wire.rs`); each draws the same error |
//!
//! So a matched call that fits the record costs one point-to-point exchange of a record, as an
//! unchecked one costs one of its data; and a process that called `ibarrier` meets one that
//! called `barrier`.

use std::collections::VecDeque;
use std::sync::Arc;

use super::bytes::Bytes;
use super::checked::placement;
use super::engine;
use super::envelope::{self, Header, Mode};
use super::flight::Flight;
use super::record_exchange::RecordExchange;
use super::reducer::{Builtin, ElementCode, Reducer};
use super::shared::ProcessShared;
use super::signature::{LocalError, Signature};
use super::spare::Spare;
use super::stage::Stage;
use super::wire;
use crate::error::{Error, Result};
use crate::progress::{poll_until, WaitFor};

/// What the envelope of a direct call says.
pub(super) enum Crossing {
    /// Every process agrees, and the call's result is in the output.
    Done,
    /// Every process agrees, and the data follows: point to point unless `engine`.
    Follows { engine: bool },
    /// Some process called differently or found an error: every member's error.
    Failed(Error),
}

/// What a process puts into its envelope's payload.
pub(super) enum Contribution<'a> {
    /// Nothing (a barrier, a broadcast's other processes, a call that failed here).
    Nothing,
    /// These bytes.
    Bytes(&'a [u8]),
    /// What the output holds (a result combined in place).
    Output,
}

/// The envelope of a direct call whose members agree on `sig` (or found `local_error`): this
/// process's `contribution` rides inside when the call's payload fits, and on
/// [`Crossing::Done`] `out` holds the merged payload. `typed`: the element and built-in op a reduction combines with.
/// Called by one member of the process at a time (see `DirectShared::envelope`).
pub(super) fn envelope(
    shared: &ProcessShared,
    sig: &Signature,
    typed: Option<(ElementCode, Builtin)>,
    local_error: Option<&LocalError>,
    contribution: Contribution<'_>,
    out: &mut [u8],
    wait: &WaitFor<'_>,
) -> Crossing {
    let layout = &shared.layout;
    let (mode, used, at) = placement(layout, sig, typed.is_some());
    let header = Header::new(sig, mode, typed.filter(|_| mode == Mode::Reduced), used);
    let flags = if local_error.is_some() {
        envelope::ERROR
    } else {
        0
    };
    let inside = matches!(mode, Mode::Placed | Mode::Reduced) && local_error.is_none();
    let payload: &[u8] = match contribution {
        _ if !inside => &[],
        Contribution::Nothing => &[],
        Contribution::Bytes(bytes) => bytes,
        Contribution::Output => out,
    };
    // SAFETY: one member per process runs a call's envelope, the one completing its meeting,
    // and the next call's cannot start before this one's result is published (see the field).
    let buffers = unsafe { &mut *shared.direct.envelope.0.get() };
    let (mut record, incoming) = (
        std::mem::take(&mut buffers.0),
        std::mem::take(&mut buffers.1),
    );
    record.reuse_zeroed(envelope::record_len(layout.envelope_p2p, used));
    envelope::seal(record.as_mut_slice(), &header, flags, payload, at);
    let mail = layout.mailboxes.as_deref();
    let mut exchange = RecordExchange::start(&layout.flat, mail, record, incoming);
    poll_until(wait, None, || {
        exchange.test(&layout.flat, mail) || {
            if mail.is_some() {
                // An earlier call's exchange may still be in the engine (an `ibarrier` nobody
                // waits for yet): through the mailboxes this one sends only after it
                // (`mailbox.rs`), so it must go on.
                engine::advance_in_flight(shared);
            }
            false
        }
    });
    let (merged, incoming) = exchange.into_buffers();
    let crossing = match envelope::open(merged.as_slice()) {
        None => Crossing::Failed(details(shared, sig, local_error, wait)),
        Some(_) if mode == Mode::Follows || mode == Mode::Empty => {
            if mode == Mode::Follows {
                Crossing::Follows {
                    engine: envelope::engine_somewhere(merged.as_slice()),
                }
            } else {
                Crossing::Done
            }
        }
        Some(merged_payload) => {
            let n = out.len().min(merged_payload.len());
            out[..n].copy_from_slice(&merged_payload[..n]);
            Crossing::Done
        }
    };
    *buffers = (merged, incoming);
    crossing
}

/// The error of a call whose envelopes disagree: every process's detailed record to every
/// process (the engine's `Details` stage, the same MPI call), and the verdict drawn from them.
fn details(
    shared: &ProcessShared,
    sig: &Signature,
    local_error: Option<&LocalError>,
    wait: &WaitFor<'_>,
) -> Error {
    let record = wire::encode(sig, local_error);
    let mut spare = Spare::default();
    let stages = VecDeque::from([Stage::Details]);
    let mut flight = Flight::new(record, stages, None, 1, None);
    run(shared, &mut flight, &mut spare, wait)
        .err()
        .unwrap_or_else(wire::unnamed_difference)
}

/// The engine's stages of a matched call whose data follows its envelope, on `data` (this
/// process's contribution, then the call's result where the stages leave one here), for a call
/// that some process made through the engine. Rare (a blocking call meeting a non-blocking
/// one), so it allocates.
pub(super) fn engine_stages(
    shared: &ProcessShared,
    sig: &Signature,
    reducer: Option<Arc<dyn Reducer>>,
    data: &mut [u8],
    wait: &WaitFor<'_>,
) -> Result<()> {
    let mut stages = VecDeque::new();
    let builtin = reducer.as_ref().is_some_and(|r| r.builtin().is_some());
    super::plan::stages(&shared.layout, sig, builtin, &mut stages);
    let mut bytes = Bytes::zeroed(data.len());
    bytes.as_mut_slice().copy_from_slice(data);
    let mut flight = Flight::new(bytes, stages, reducer, sig.elem_size, None);
    let landed = run(shared, &mut flight, &mut Spare::default(), wait)?;
    if landed.len() == data.len() {
        data.copy_from_slice(landed.as_slice());
    }
    Ok(())
}

/// Polls `flight` to its end; its landing's data.
fn run(
    shared: &ProcessShared,
    flight: &mut Flight,
    spare: &mut Spare,
    wait: &WaitFor<'_>,
) -> Result<Bytes> {
    let mut outcome = None;
    poll_until(wait, None, || {
        outcome = flight.advance(&shared.layout, spare);
        outcome.is_some()
    });
    match outcome {
        Some(Ok(landing)) => Ok(landing.data),
        Some(Err(error)) => Err(error),
        // Unreachable: the poll has no deadline, so it returns only once the flight landed.
        None => Err(shared.broken_error()),
    }
}
