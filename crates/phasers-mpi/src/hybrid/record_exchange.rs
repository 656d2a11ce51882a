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
//!
//! When every process of the team runs on one node, the same steps go through the team's
//! mailboxes in shared memory instead of MPI messages (`mailbox.rs`): a step then costs a
//! cache-line transfer instead of a message.

use std::os::raw::c_int;

use mpi::datatype::Equivalence;
use mpi::ffi;
use mpi::raw::AsRaw;

use super::bytes::Bytes;
use super::doubling::{Doubling, Received, Step};
use super::envelope::{self, MAX_RECORD};
use super::mailbox::{self, Mailboxes};
use crate::channel::Channel;
use crate::threading::mpi_call;

/// The tag of the envelope's messages: apart from the direct path's data (`exchange.rs`), so
/// a record is never taken for data even by a process that went wrong.
const TAG: c_int = 0x4845;

/// One process's envelope exchange in progress.
pub(crate) struct RecordExchange {
    record: Bytes,
    incoming: Bytes,
    requests: [ffi::MPI_Request; 2],
    steps: Doubling,
    me: usize,
    /// This exchange's number among the process's, when the steps go through the team's
    /// mailboxes in shared memory.
    exchange: Option<u64>,
    /// Through the mailboxes: the slot the current step still has to write, and the one it
    /// still has to read.
    to_post: Option<usize>,
    to_take: Option<usize>,
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
    /// Starts exchanging `record` (sealed, as long as its payload needs) on `channel`, or
    /// through `mail` where the team has mailboxes (then every [`test`](Self::test) passes
    /// them); `incoming` is a buffer to receive into (grown to [`MAX_RECORD`] bytes here).
    pub(crate) fn start(
        channel: &Channel,
        mail: Option<&Mailboxes>,
        record: Bytes,
        mut incoming: Bytes,
    ) -> RecordExchange {
        incoming.reuse(MAX_RECORD);
        let me = channel.rank();
        let mut exchange = RecordExchange {
            record,
            incoming,
            requests: [null(); 2],
            steps: Doubling::new(me, channel.size()),
            me,
            exchange: mail.map(Mailboxes::next_exchange),
            to_post: None,
            to_take: None,
        };
        exchange.begin_on(channel, mail);
        if exchange.steps.step() == Step::Done {
            exchange.completed(mail);
        }
        exchange
    }

    /// Whether the exchange is over; moves it on when its messages have arrived.
    pub(crate) fn test(&mut self, channel: &Channel, mail: Option<&Mailboxes>) -> bool {
        loop {
            if self.steps.step() == Step::Done {
                return true;
            }
            if !self.requests_done(mail) {
                return false;
            }
            self.finish_step();
            self.begin_on(channel, mail);
            if self.steps.step() == Step::Done {
                self.completed(mail);
            }
        }
    }

    /// Tells the mailboxes this exchange is over, so that the next one may send.
    fn completed(&self, mail: Option<&Mailboxes>) {
        if let (Some(mail), Some(exchange)) = (mail, self.exchange) {
            mail.complete(exchange);
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

    /// Starts the current step's messages.
    fn begin_on(&mut self, channel: &Channel, mail: Option<&Mailboxes>) {
        let (send, recv) = self.steps.moves();
        if let (Some(mail), Some(exchange)) = (mail, self.exchange) {
            let geometry = mail.geometry;
            self.to_post = send.map(|(_, step)| geometry.slot(self.me, step, exchange));
            self.to_take = recv.map(|(from, step)| geometry.slot(from, step, exchange));
            return;
        }
        if send.is_none() && recv.is_none() {
            return;
        }
        // Both under one hold of the MPI lock, the send first (as `exchange.rs`).
        let _call = mpi_call();
        if let Some((to, _)) = send {
            self.send(channel, to);
        }
        if let Some((from, _)) = recv {
            self.recv(channel, from);
        }
    }

    /// Takes the finished step's message and moves on.
    fn finish_step(&mut self) {
        match self.steps.finish_step() {
            Received::Merge => {
                envelope::merge(self.incoming.as_slice(), self.record.as_mut_slice());
            }
            // The merged record, as long as its sender's: the receive buffer becomes ours.
            Received::Replace => std::mem::swap(&mut self.record, &mut self.incoming),
            Received::Nothing => {}
        }
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

    fn requests_done(&mut self, mail: Option<&Mailboxes>) -> bool {
        if let (Some(mail), Some(exchange)) = (mail, self.exchange) {
            if let Some(slot) = self.to_post {
                let completed = mail.completed();
                if mailbox::post(mail, slot, exchange, completed, self.record.as_slice()) {
                    self.to_post = None;
                }
            }
            if let Some(slot) = self.to_take {
                if mailbox::take(mail, slot, exchange, self.incoming.as_mut_slice()).is_some() {
                    self.to_take = None;
                }
            }
            return self.to_post.is_none() && self.to_take.is_none();
        }
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
