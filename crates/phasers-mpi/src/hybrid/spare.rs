//! What a call slot keeps between its calls, so that a warm slot's calls allocate nothing: the
//! byte buffers its calls stage inputs, results and MPI receives in, its stage queue, its list
//! of posts (its outcome's `Arc` is kept beside it, in `SlotInner::kept_outcome`).
//!
//! Buffers go round within one slot: taken for a call's inputs, contribution, envelope and
//! receives, handed back as soon as the call is done with them (the outcome's data when the
//! slot's next call lands). A call takes at most a few buffers, so the list stops growing
//! after the first calls; and a buffer that must grow grows to the largest size the slot was
//! asked for so far, so that once every buffer has, no call grows one again, whichever buffer
//! it happens to get. The price is memory: a slot keeps a few buffers of its largest call's
//! size (its members' input copies, the contribution, a receive buffer, the outcome).
//! Buffers that MPI may still write into (a call given up mid-flight) never come back here:
//! the flight leaks them (see `Drop for Flight`).

use std::collections::VecDeque;

use super::bytes::Bytes;
use super::signature::Post;
use super::stage::Stage;

/// One slot's reusable storage (kept under the slot's lock).
#[derive(Default)]
pub(crate) struct Spare {
    buffers: Vec<Bytes>,
    /// The largest length asked for so far.
    high: usize,
    /// An empty stage queue with the capacity of the longest plan so far.
    pub(crate) stages: VecDeque<Stage>,
    /// An empty list with room for every local member's post.
    pub(crate) posts: Vec<Post>,
}

impl Spare {
    /// A buffer of `len` bytes whose contents are left as they were: for buffers written in
    /// full before being read (input copies, MPI receives).
    pub(crate) fn take(&mut self, len: usize) -> Bytes {
        let mut bytes = self.pick(len);
        bytes.reuse(len);
        bytes
    }

    /// A buffer of `len` zero bytes.
    pub(crate) fn take_zeroed(&mut self, len: usize) -> Bytes {
        let mut bytes = self.pick(len);
        bytes.reuse_zeroed(len);
        bytes
    }

    /// Keeps `bytes` for a later call (an empty one holds no storage, so it is not kept).
    pub(crate) fn give(&mut self, bytes: Bytes) {
        if bytes.capacity() > 0 {
            self.buffers.push(bytes);
        }
    }

    /// The smallest kept buffer that holds `len` bytes (large ones stay free for large
    /// requests), or else the largest; made to hold the slot's largest length so far.
    fn pick(&mut self, len: usize) -> Bytes {
        if len == 0 {
            return Bytes::default();
        }
        self.high = self.high.max(len);
        let fits = (0..self.buffers.len())
            .filter(|&i| self.buffers[i].capacity() >= len)
            .min_by_key(|&i| self.buffers[i].capacity());
        let best =
            fits.or_else(|| (0..self.buffers.len()).max_by_key(|&i| self.buffers[i].capacity()));
        let mut bytes = match best {
            Some(i) => self.buffers.swap_remove(i),
            None => Bytes::default(),
        };
        bytes.hold(self.high);
        bytes
    }
}
