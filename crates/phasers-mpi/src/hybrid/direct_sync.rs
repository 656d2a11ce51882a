//! The direct barrier and broadcast: a blocking [`barrier`](HybridMember::barrier) or
//! [`broadcast`](HybridMember::broadcast) on a team that takes the direct path (`direct.rs`),
//! either of one process or checked. The members of a process meet as a direct allreduce's do
//! (posts, one count, the last arrival's phase); across processes the call is its envelope
//! (`direct_checked.rs`): a barrier's carries no payload, a broadcast's carries the root's data
//! where it fits, and a larger broadcast follows it along a binomial tree of point-to-point
//! messages (`exchange::broadcast`). So a checked barrier costs one exchange of a record (no
//! `MPI_Ibarrier`), and a checked broadcast that fits costs the same.
//!
//! A broadcast's data goes through the process's result buffer: the last arrival copies the
//! root's data in (or receives it), and every other member copies it out. A process of one
//! member sends from and receives into the member's own buffer once the data no longer fits its
//! envelope. An unchecked team of several processes keeps the engine for both calls: there an
//! `MPI_Ibarrier` or `MPI_Ibcast` must meet the same MPI call from another process's
//! `ibarrier` or `ibroadcast`, which carries no envelope.

use super::arrivals::{Meeting, DONE, FAILED, REPOST};
use super::bytes::Bytes;
use super::direct::{open_next_slot, wait_phase, DIRECT_WAITS_YIELD_EARLY};
use super::direct_checked::{self, Contribution, Crossing};
use super::direct_state::{DirectShared, Posted};
use super::envelope;
use super::exchange;
use super::member::HybridMember;
use super::shared::ProcessShared;
use super::signature::{compare, Kind, LocalError, Signature, MPI_MAX_BYTES};
use crate::error::{Error, Result};
use crate::progress::WaitFor;

impl HybridMember {
    /// Runs a blocking barrier on the direct path where it applies; `None` where it takes the
    /// engine's path instead.
    pub(super) fn direct_barrier(&mut self) -> Option<Result<()>> {
        let sig = Signature::new::<()>(Kind::Barrier, 0, 0);
        self.direct_sync(sig, std::ptr::null_mut(), 0)
    }

    /// Runs a blocking broadcast on the direct path where it applies; `None` where it takes
    /// the engine's path instead (which also refuses a root out of range, on every member).
    pub(super) fn direct_broadcast<T: Copy + Send + 'static>(
        &mut self,
        root: usize,
        buffer: &mut [T],
    ) -> Option<Result<()>> {
        let bytes = std::mem::size_of_val(buffer);
        if root >= self.parties() || bytes > MPI_MAX_BYTES {
            return None;
        }
        let sig = Signature::new::<T>(Kind::Broadcast, buffer.len(), root);
        self.direct_sync(sig, buffer.as_mut_ptr().cast(), bytes)
    }

    fn direct_sync(&mut self, sig: Signature, buffer: *mut u8, bytes: usize) -> Option<Result<()>> {
        let shared = &self.shared;
        let processes = shared.layout.counts.len();
        if !shared.direct_ok || (processes > 1 && !shared.options.checked) {
            return None;
        }
        if shared.is_broken() {
            return Some(Err(shared.broken_error()));
        }
        let number = self.next_call;
        self.next_call += 1;
        let call = SyncCall {
            shared,
            number,
            sig,
            buffer,
            bytes,
            local_rank: self.local_rank,
            is_root: sig.kind == Kind::Broadcast && sig.root == self.rank,
        };
        if shared.local == 1 {
            open_next_slot(shared, number);
            return Some(call.alone());
        }
        let met = call.meet();
        if met.is_none() {
            // Some member called through the engine: this call goes there too, counted in.
            self.next_call = number;
            self.direct.reposted = Some(number);
        }
        met
    }
}

/// One member's barrier or broadcast on the direct path.
struct SyncCall<'a> {
    shared: &'a ProcessShared,
    number: u64,
    sig: Signature,
    /// The member's buffer (a broadcast's), `bytes` long; borrowed until the call returns.
    buffer: *mut u8,
    bytes: usize,
    local_rank: usize,
    is_root: bool,
}

impl SyncCall<'_> {
    fn direct(&self) -> &DirectShared {
        &self.shared.direct
    }

    fn processes(&self) -> usize {
        self.shared.layout.counts.len()
    }

    /// The process's only member: the envelope alone, the data after it where it follows.
    fn alone(&self) -> Result<()> {
        if self.processes() == 1 {
            return Ok(());
        }
        // Data that does not fit the envelope goes straight from the root's buffer into the
        // others' after it.
        let fits = self.bytes <= envelope::capacity(self.shared.layout.envelope_p2p);
        let data = if fits { self.result_bytes() } else { &mut [] };
        if self.is_root && fits {
            // SAFETY: the root's buffer holds `bytes` readable bytes; `data` is as long.
            unsafe { std::ptr::copy_nonoverlapping(self.buffer, data.as_mut_ptr(), data.len()) };
        }
        match self.envelope(None, self.is_root, data) {
            Crossing::Done => {
                self.copy_out(data);
                Ok(())
            }
            Crossing::Follows { engine } => self.follow(engine, self.buffer),
            Crossing::Failed(error) => Err(error),
        }
    }

    /// Several members here: post, count in, and go on as the last arrival says; `None` when
    /// some member called through the engine.
    fn meet(&self) -> Option<Result<()>> {
        let direct = self.direct();
        let cell = direct.posts[self.local_rank].0.get();
        // SAFETY: this member's own post; no one reads it until the count below completes the
        // call (see `DirectShared`'s `Sync`).
        unsafe {
            *cell = Some(Posted {
                sig: self.sig,
                input: self.buffer.cast_const(),
                output_len: None,
            })
        };
        let phase = match direct.count_in(self.number, 1, self.shared.local) {
            Meeting::AllDirect => {
                open_next_slot(self.shared, self.number);
                self.complete()
            }
            Meeting::Mixed => return None,
            Meeting::Waiting | Meeting::AllEngine => match wait_phase(
                self.shared,
                self.sig.kind,
                self.number,
                &[DONE, FAILED, REPOST],
            ) {
                Ok(phase) => phase,
                Err(error) => return Some(Err(error)),
            },
        };
        Some(match phase {
            DONE => {
                if self.sig.kind == Kind::Broadcast && !self.is_root {
                    self.copy_out(self.result_bytes());
                }
                Ok(())
            }
            REPOST => return None,
            _ => Err(direct
                .failure()
                .unwrap_or_else(|| self.shared.broken_error())),
        })
    }

    /// The last arrival's work: compare the posts, then the call across processes.
    fn complete(&self) -> u64 {
        let direct = self.direct();
        let post = |i: usize| {
            // SAFETY: every member has posted for this call and waits for its phase.
            unsafe { (*direct.posts[i].0.get()).as_ref() }
        };
        let first_rank = self.shared.first_rank();
        let process = (self.processes() > 1).then(|| self.shared.process());
        let sigs = (0..self.shared.local).filter_map(post).map(|p| &p.sig);
        let error = compare(sigs, first_rank, process, true);
        let fail = |error: Error| direct.fail(self.number, error);
        if let Some(error) = error {
            if self.processes() == 1 {
                return fail(error);
            }
            let local = LocalError {
                error,
                everywhere: false,
            };
            return match self.envelope(Some(&local), false, &mut []) {
                Crossing::Failed(error) => fail(error),
                // Unreachable: an error in the envelope makes every process's verdict an error.
                _ => fail(local.error),
            };
        }
        let data = self.result_bytes();
        let root_local = self.sig.root.wrapping_sub(first_rank);
        if self.sig.kind == Kind::Broadcast && root_local < self.shared.local {
            if let Some(root) = post(root_local) {
                // SAFETY: the root posted its buffer, `bytes` long (compared above), borrowed
                // until this call's phase is published.
                unsafe { std::ptr::copy_nonoverlapping(root.input, data.as_mut_ptr(), data.len()) };
            }
        }
        if self.processes() == 1 {
            return self.publish(DONE);
        }
        let contributes = root_local < self.shared.local;
        match self.envelope(None, contributes, data) {
            Crossing::Done => self.publish(DONE),
            Crossing::Follows { engine } => match self.follow(engine, data.as_mut_ptr()) {
                Ok(()) => self.publish(DONE),
                Err(error) => fail(error),
            },
            Crossing::Failed(error) => fail(error),
        }
    }

    /// This call's envelope, with `local_error`, or with the data in `data` where this process
    /// `contributes` it (holds the root); `data` takes the merged payload.
    fn envelope(
        &self,
        local_error: Option<&LocalError>,
        contributes: bool,
        data: &mut [u8],
    ) -> Crossing {
        let processes = self.processes();
        let missing = || {
            format!(
                "the other {} process(es) (the call's envelope)",
                processes - 1
            )
        };
        let wait = self.wait(&missing);
        let contribution = if contributes {
            Contribution::Output
        } else {
            Contribution::Nothing
        };
        direct_checked::envelope(
            self.shared,
            &self.sig,
            None,
            local_error,
            contribution,
            data,
            &wait,
        )
    }

    /// A broadcast's data after its envelope, into (or from) the `bytes` at `data`: point to
    /// point, or the engine's stages where some process called through the engine.
    fn follow(&self, engine: bool, data: *mut u8) -> Result<()> {
        let processes = self.processes();
        let missing = || format!("the other {} process(es) (the broadcast)", processes - 1);
        let wait = self.wait(&missing);
        let layout = &self.shared.layout;
        if engine {
            let mut copy = Bytes::zeroed(self.bytes);
            // SAFETY: `data` holds `bytes` bytes (a member's buffer or the result buffer).
            unsafe { std::ptr::copy_nonoverlapping(data, copy.as_mut_ptr(), self.bytes) };
            direct_checked::engine_stages(
                self.shared,
                &self.sig,
                None,
                copy.as_mut_slice(),
                &wait,
            )?;
            // SAFETY: as above; the root's data, so valid for the buffer's type.
            unsafe { std::ptr::copy_nonoverlapping(copy.as_ptr(), data, self.bytes) };
            return Ok(());
        }
        let root = layout.process_of(self.sig.root);
        // SAFETY: `data` holds `bytes` bytes until this returns; what arrives is the root's data.
        unsafe { exchange::broadcast(&layout.flat, data, self.bytes, root, &wait) };
        Ok(())
    }

    /// Copies the result into this member's buffer (a broadcast's other members).
    fn copy_out(&self, data: &[u8]) {
        if self.is_root || self.bytes == 0 {
            return;
        }
        // SAFETY: the member's buffer holds `bytes` writable bytes, as `data` does; the bytes
        // are the root's, valid for the buffer's type.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.buffer, self.bytes) };
    }

    /// This call's result buffer, `bytes` long (see `DirectShared::result_words`).
    #[allow(clippy::mut_from_ref)]
    fn result_bytes(&self) -> &mut [u8] {
        // SAFETY: only the member that completes this call's meeting, or the only member, asks
        // for it, once every member has arrived; the others read it after `DONE`
        // (`copy_out`), before they arrive at the next call.
        let words = unsafe { self.direct().result_words(self.number, self.bytes) };
        // SAFETY: `words` holds at least `bytes` initialized bytes; a `u64` slice may be
        // viewed as bytes.
        unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), self.bytes) }
    }

    fn publish(&self, phase: u64) -> u64 {
        self.direct().publish(self.number, phase)
    }

    fn wait<'w>(&self, missing: &'w dyn Fn() -> String) -> WaitFor<'w> {
        self.shared.wait_for(
            self.sig.kind,
            self.number,
            DIRECT_WAITS_YIELD_EARLY,
            missing,
        )
    }
}
