//! One member's place in the team: its posts, the count of others done with its buffers, and its
//! staging area.

use crossbeam_utils::CachePadded;

use super::post::{Chunk, Post};
use crate::primitive::UnsafeCell;
use crate::wait::Signal;

pub(crate) struct Slot {
    /// The posts of even and odd calls. A reader of call `s` may still hold the post of `s` while
    /// its owner writes `s + 1`; the owner writes the post of `s + 2` only after every member has
    /// arrived at `s + 1`, so after every reader of `s` is done.
    posts: [CachePadded<UnsafeCell<Post>>; 2],
    /// How many times another member has finished with this member's buffers (or staged copy),
    /// over the team's life. The owner knows how many to expect (see `kind::readers`).
    pub(crate) touched: CachePadded<Signal>,
    /// The owner's staged inputs; others read them through the pointer in the post.
    staging: UnsafeCell<Vec<Chunk>>,
}

impl Slot {
    pub(crate) fn new() -> Self {
        Slot {
            posts: [
                CachePadded::new(UnsafeCell::new(Post::empty())),
                CachePadded::new(UnsafeCell::new(Post::empty())),
            ],
            touched: CachePadded::new(Signal::new(0)),
            staging: UnsafeCell::new(Vec::new()),
        }
    }

    /// Writes the owner's post for call `post.seq`.
    ///
    /// # Safety
    ///
    /// Only the owner calls this, and only once every member has arrived at call `seq - 1`.
    pub(crate) unsafe fn write_post(&self, post: &Post) {
        // SAFETY: the caller's contract: no reader of call `seq - 2` (the same parity) remains.
        self.posts[(post.seq & 1) as usize].with_mut(|p| unsafe { p.write(*post) });
    }

    /// Writes the owner's post for call `post.seq` of a call that ends at its meeting (see
    /// `Member::run_light`), field by field: everything that calls compare and that the meeting
    /// and a dropped member read, and the inline payload only when `inline` (a one-word call
    /// carries its input in the meeting instead). A split's color and key are left as they were:
    /// they are read only when every post of the call is a split's. Writing the fields, rather
    /// than the whole post, spares the copy of 256 bytes through `memmove` that issue 35's
    /// profile of a 2-member barrier found at a seventh of its samples.
    ///
    /// # Safety
    ///
    /// As for [`write_post`](Self::write_post).
    #[inline]
    pub(crate) unsafe fn write_light_post(&self, post: &Post, inline: bool) {
        // SAFETY: the caller's contract, as for `write_post`.
        self.posts[(post.seq & 1) as usize].with_mut(|p| {
            // SAFETY: as above; the post was initialized when the slot was made.
            let p = unsafe { &mut *p };
            p.seq = post.seq;
            p.count = post.count;
            p.root = post.root;
            p.type_id = post.type_id;
            p.kind = post.kind;
            p.path = post.path;
            p.mode = post.mode;
            p.invalid = post.invalid;
            p.staged = post.staged;
            p.blocking = post.blocking;
            p.value = post.value;
            p.op = post.op;
            p.type_name = post.type_name;
            p.input = post.input;
            p.input_len = post.input_len;
            p.output = post.output;
            p.output_len = post.output_len;
            if inline {
                p.inline = post.inline;
            }
        });
    }

    /// Lets `fill` write the fields of the owner's post for call `seq` that a light call sets
    /// (see `light.rs`): the post is not copied, and its other fields keep older values that no
    /// reader of such a call looks at.
    ///
    /// # Safety
    ///
    /// As for [`write_post`](Self::write_post), and `fill` sets `seq`.
    #[inline(always)]
    pub(crate) unsafe fn write_fields(&self, seq: u64, fill: impl FnOnce(&mut Post)) {
        // SAFETY: the caller's contract, as for `write_post`.
        self.posts[(seq & 1) as usize].with_mut(|p| fill(unsafe { &mut *p }));
    }

    /// A copy of the post for call `seq` (or a stale post, which `Post::same_call` rejects).
    ///
    /// # Safety
    ///
    /// The caller is within call `seq` and every member has arrived at it, so the owner has
    /// written its post of `seq` and will not write this parity again before the caller is done.
    pub(crate) unsafe fn read_post(&self, seq: u64) -> Post {
        // SAFETY: see the contract; `Post` is `Copy`.
        self.posts[(seq & 1) as usize].with(|p| unsafe { *p })
    }

    /// Copies `data` into the staging area and returns where it lies.
    ///
    /// # Safety
    ///
    /// Only the owner calls this, after every reader of its previous staged copy is done (its
    /// `touched` count has reached what the owner expects).
    pub(crate) unsafe fn stage<T: Copy>(&self, data: &[T]) -> *const u8 {
        let bytes = std::mem::size_of_val(data);
        self.staging.with_mut(|staging| {
            // SAFETY: the caller's contract: nobody reads the staging area now.
            let staging = unsafe { &mut *staging };
            let chunks = bytes.div_ceil(std::mem::size_of::<Chunk>());
            if staging.len() < chunks {
                staging.resize(chunks, Chunk::ZERO);
            }
            let start = staging.as_mut_ptr().cast::<u8>();
            // SAFETY: the area holds at least `bytes` bytes, is aligned to 64 (at least `T`'s
            // alignment, checked by the caller) and does not overlap `data`, which the caller
            // borrows.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr().cast::<u8>(), start, bytes) };
            start.cast_const()
        })
    }
}
