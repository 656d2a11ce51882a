//! A flat team's envelope exchange (`envelope.rs`): every process's record to every process,
//! merged on the way, by recursive doubling over polled point-to-point messages. Non-blocking:
//! [`RecordExchange::test`] moves it on, so the engine's flight polls it like an MPI request,
//! and the direct path (`direct_checked.rs`) polls it in a loop. Both send the same messages, so
//! processes that called from either path meet.
//!
//! Each step sends this process's record as merged so far (only as long as its payload needs)
//! and receives the partner's into a buffer of [`MAX_RECORD`] bytes: processes that called
//! differently may send records of different lengths, and a receive longer than its message is
//! allowed where a shorter one is an error. A process count that is not a power of two folds
//! the extra processes in first and hands them the merged record last, as `exchange.rs` does.
//! Merging is commutative (`envelope::merge`), so every process ends with the same bits.

use std::os::raw::c_int;

use mpi::datatype::Equivalence;
use mpi::ffi;
use mpi::raw::AsRaw;

use super::bytes::Bytes;
use super::envelope::{self, MAX_RECORD};
use crate::channel::Channel;
use crate::threading::mpi_call;

/// The tag of the envelope's messages: apart from the direct path's data (`exchange.rs`), so
/// a record is never taken for data even by a process that went wrong.
const TAG: c_int = 0x4845;

/// Where an exchange is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// An extra process's record on its way to its odd neighbour; then `Final`.
    Handing,
    /// An odd process of the extra pairs receiving its neighbour's record; then doubling.
    Folding,
    /// Recursive doubling with the partner at this distance (among the power-of-two group).
    Doubling(usize),
    /// The merged record on its way back to the even neighbour.
    Returning,
    /// The even neighbour receiving the merged record.
    Final,
    Done,
}

/// One process's envelope exchange in progress.
pub(crate) struct RecordExchange {
    record: Bytes,
    incoming: Bytes,
    requests: [ffi::MPI_Request; 2],
    step: Step,
    /// This process's rank among those taking part in the doubling (`None` for an even extra).
    step_rank: Option<usize>,
    pof2: usize,
    extra: usize,
    me: usize,
    size: usize,
}

// SAFETY: MPI requests are process-wide handles any thread may test; every use holds
// `mpi_call()`, which serializes MPI calls when the thread level requires it. The buffers are
// owned.
unsafe impl Send for RecordExchange {}

fn null() -> ffi::MPI_Request {
    // SAFETY: a constant that `mpi-sys` sets from `MPI_REQUEST_NULL` and never writes.
    unsafe { ffi::RSMPI_REQUEST_NULL }
}

fn int(n: usize) -> c_int {
    c_int::try_from(n).unwrap_or(c_int::MAX)
}

impl RecordExchange {
    /// Starts exchanging `record` (sealed, as long as its payload needs) on `channel`;
    /// `incoming` is a buffer to receive into (grown to [`MAX_RECORD`] bytes here).
    pub(crate) fn start(channel: &Channel, record: Bytes, mut incoming: Bytes) -> RecordExchange {
        incoming.reuse(MAX_RECORD);
        let (me, size) = (channel.rank(), channel.size().max(1));
        let pof2 = 1usize << (usize::BITS - 1 - size.leading_zeros());
        let extra = size - pof2;
        let (step, step_rank) = if me < 2 * extra {
            if me % 2 == 0 {
                (Step::Handing, None)
            } else {
                (Step::Folding, Some(me / 2))
            }
        } else if pof2 > 1 {
            (Step::Doubling(1), Some(me - extra))
        } else {
            (Step::Done, Some(0))
        };
        let mut exchange = RecordExchange {
            record,
            incoming,
            requests: [null(); 2],
            step,
            step_rank,
            pof2,
            extra,
            me,
            size,
        };
        exchange.begin(channel);
        exchange
    }

    /// Whether the exchange is over; moves it on when its messages have arrived.
    pub(crate) fn test(&mut self, channel: &Channel) -> bool {
        loop {
            if self.step == Step::Done {
                return true;
            }
            if !self.requests_done() {
                return false;
            }
            self.finish_step();
            self.begin(channel);
        }
    }

    /// The merged record (every process's, once [`test`](Self::test) said so) and the receive
    /// buffer, to be reused.
    pub(crate) fn into_buffers(mut self) -> (Bytes, Bytes) {
        (
            std::mem::take(&mut self.record),
            std::mem::take(&mut self.incoming),
        )
    }

    /// The rank of the process at `step` among the doubling group.
    fn real(&self, step: usize) -> usize {
        if step < self.extra {
            step * 2 + 1
        } else {
            step + self.extra
        }
    }

    /// Starts the current step's messages.
    fn begin(&mut self, channel: &Channel) {
        let me = self.me;
        match self.step {
            Step::Doubling(mask) => {
                let partner = self.real(self.step_rank.unwrap_or(0) ^ mask);
                // Both under one hold of the MPI lock, the send first (as `exchange.rs`).
                let _call = mpi_call();
                self.send(channel, partner);
                self.recv(channel, partner);
            }
            Step::Handing => {
                let _call = mpi_call();
                self.send(channel, me + 1);
            }
            Step::Folding => {
                let _call = mpi_call();
                self.recv(channel, me - 1);
            }
            Step::Returning => {
                let _call = mpi_call();
                self.send(channel, me - 1);
            }
            Step::Final => {
                let _call = mpi_call();
                self.recv(channel, me + 1);
            }
            Step::Done => {}
        }
    }

    /// Takes the finished step's message and picks the next step.
    fn finish_step(&mut self) {
        let after_doubling = |this: &Self| {
            if this.me < 2 * this.extra {
                Step::Returning
            } else {
                Step::Done
            }
        };
        self.step = match self.step {
            Step::Handing => Step::Final,
            Step::Folding => {
                envelope::merge(self.incoming.as_slice(), self.record.as_mut_slice());
                if self.pof2 > 1 {
                    Step::Doubling(1)
                } else {
                    after_doubling(self)
                }
            }
            Step::Doubling(mask) => {
                envelope::merge(self.incoming.as_slice(), self.record.as_mut_slice());
                if mask << 1 < self.pof2 {
                    Step::Doubling(mask << 1)
                } else {
                    after_doubling(self)
                }
            }
            Step::Returning => Step::Done,
            Step::Final => {
                // The merged record, as long as its sender's: the receive buffer becomes ours.
                std::mem::swap(&mut self.record, &mut self.incoming);
                Step::Done
            }
            Step::Done => Step::Done,
        };
        debug_assert!(self.size >= 1);
    }

    /// Starts the send of the record; the caller holds `mpi_call()`.
    fn send(&mut self, channel: &Channel, to: usize) {
        // SAFETY: `record` is owned by this exchange and neither touched nor freed until the
        // request completes (`Drop` leaks it otherwise); the count is its length.
        unsafe {
            ffi::MPI_Isend(
                self.record.as_ptr().cast(),
                int(self.record.len()),
                u8::equivalent_datatype().as_raw(),
                int(to),
                TAG,
                channel.comm().as_raw(),
                &mut self.requests[0],
            );
        }
    }

    /// Starts the receive of the partner's record; the caller holds `mpi_call()`.
    fn recv(&mut self, channel: &Channel, from: usize) {
        // SAFETY: as for `send`; `incoming` holds `MAX_RECORD` bytes, the longest record any
        // process sends.
        unsafe {
            ffi::MPI_Irecv(
                self.incoming.as_mut_ptr().cast(),
                int(self.incoming.len()),
                u8::equivalent_datatype().as_raw(),
                int(from),
                TAG,
                channel.comm().as_raw(),
                &mut self.requests[1],
            );
        }
    }

    fn requests_done(&mut self) -> bool {
        let mut flag: c_int = 0;
        let _call = mpi_call();
        // SAFETY: the requests were started above or are null, which MPI skips (and leaves
        // null once complete); the status array is MPI's "ignore" constant.
        unsafe {
            ffi::MPI_Testall(
                2,
                self.requests.as_mut_ptr(),
                &mut flag,
                ffi::RSMPI_STATUSES_IGNORE,
            )
        };
        flag != 0
    }
}

impl Drop for RecordExchange {
    fn drop(&mut self) {
        let null = null();
        if self.requests.iter().any(|r| *r != null) {
            // Given up mid-exchange (a timeout, a broken team): MPI may still read or write
            // these buffers when the other processes arrive, so they are never freed.
            std::mem::forget(std::mem::take(&mut self.record));
            std::mem::forget(std::mem::take(&mut self.incoming));
        }
    }
}
