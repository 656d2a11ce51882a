//! The root line: the root sub-phaser's [`Word`] and the first plain accumulator's root cells, in
//! one cache line.
//!
//! # Why one line
//!
//! In a two-task phase with a sum, the last arrival folds its value into the root cell, then
//! changes the root word; the other task, waiting, reads the root word, then the result. With
//! the cell, the word and the result on separate lines, each step took a line from the other
//! core: about four serialized transfers per phase against the counting barrier's two, and
//! ~450 ns per phase against the barrier's ~200-230 ns (2-core Intel Xeon VM, 2026-11-30). On one
//! line, the fold's transfer brings the word, the compare-and-swap that releases the phase is a
//! hit, and a waiter spinning on the root gets the result with the release.
//!
//! The word takes 8 bytes and an accumulator's root cells 32 (four phases of 8 bytes, see below),
//! so one accumulator fits beside the word in a 64-byte line: the first plain (not reproducible)
//! accumulator attached to the phaser. The others keep their root cells on a line of their own,
//! with the same protocol. The line is padded like every shared word ([`CachePadded`]).
//!
//! # Four cells, and the result is one of them
//!
//! An accumulator's root cells are indexed by phase modulo 4. The contributions of phase `p` fold
//! into cell `p % 4` (a task's, or a child sub-phaser's moved up), and once `p` is released that
//! cell *is* `p`'s result: [`result`](RootLine::result) reads the cell of the phase before the
//! root's, nothing is taken or copied. The completer of `p`, before it releases `p`, folds the
//! values sent to `p` ahead of it (the early values) into cell `p % 4`, and empties cell
//! `(p + 1) % 4`, which held `p - 3`'s result, for `p + 1`'s contributions. Nobody reads or
//! writes either meanwhile: readers of the root at `p` read cell `(p - 1) % 4`, and nothing
//! reaches cell `(p + 1) % 4` before `p` is released (tasks fold into it once they saw `p`
//! released or the root at `p + 1`; values sent further ahead wait with the early values). So
//! the two steps are harmless when the completer's compare-and-swap then fails (a registration
//! joined or left, a signal ahead marked the word): the early values were `p`'s anyway, and the
//! emptied cell stays empty. That lets the root's last arrival do them before its
//! compare-and-swap and move the root to the next phase in it, as without an accumulator (see
//! `Tree::rearm_at_once`): waiters on the root then see one change per phase.
//!
//! Four rather than three, so that the word's tag, the phase modulo a power of two, names the
//! cell: a reader needs no whole phase (see `word.rs`).

use crossbeam_utils::CachePadded;

use super::word::{Word, TAG_PERIOD};
use crate::primitive::{AtomicU64, Ordering};

/// How many phases' root cells an accumulator keeps (see the module's documentation).
pub(crate) const PHASES_KEPT: usize = 4;

// The cells are named by the tag's low bits: the tag's period must be a multiple of their count,
// so that the tag's wrap keeps their order.
const _: () = assert!(TAG_PERIOD % PHASES_KEPT as u64 == 0);

/// One accumulator's root cells, indexed by phase modulo [`PHASES_KEPT`].
pub(crate) type RootCells = [AtomicU64; PHASES_KEPT];

/// The root's word and the first plain accumulator's root cells.
pub(crate) struct RootLine {
    pub(crate) word: Word,
    /// Set to the accumulator's identity when it claims them (see `Tree::cells`).
    pub(crate) cells: RootCells,
}

impl RootLine {
    pub(crate) fn new(word: Word) -> CachePadded<Self> {
        CachePadded::new(RootLine {
            word,
            cells: empty_cells(0),
        })
    }

    /// The result in `cells` (root cells of an accumulator of this root) of the phase before the
    /// root's: the most recently completed one.
    ///
    /// The root's tag is read before and after the cell, and the read is retried when it moved:
    /// the cell of the phase before the root's is written again only by the completer of the
    /// phase after the root's, which acts once the root has moved on (see the module's
    /// documentation), so an unchanged tag means the cell held the result throughout. The
    /// acquire loads order the three reads; reading the root at `p` acquires every fold into
    /// `p - 1`'s cell, each made before its sender's arrival at a phase the root had yet to
    /// complete. A tag that came round again (2^30 phases during the call; 16 in the crate's unit
    /// tests) would go unnoticed, the exposure the word accepts (see `word.rs`).
    pub(crate) fn result(&self, cells: &RootCells) -> u64 {
        loop {
            let tag = self.word.tag();
            let value = cells[slot(tag.wrapping_sub(1))].load(Ordering::Acquire);
            if self.word.tag() == tag {
                return value;
            }
            crate::primitive::spin_loop();
        }
    }
}

/// Root cells holding `identity`.
pub(crate) fn empty_cells(identity: u64) -> RootCells {
    std::array::from_fn(|_| AtomicU64::new(identity))
}

/// The cell of `phase` (or of a tag, whose low bits are the phase's).
pub(crate) fn slot(phase: u64) -> usize {
    (phase % PHASES_KEPT as u64) as usize
}
