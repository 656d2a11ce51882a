//! Where each signal-capable registration publishes the next phase it will signal, so that
//! timeouts, stall reports and the counts can name who has not signalled.
//!
//! Every signal stores its registration's progress, so the cell's placement is on the hot path:
//! - A registration among no more registrations than there are cores (threads that can all run
//!   at once) gets a cell on a line of its own. Threads on different cores that signalled
//!   neighbouring cells would otherwise pass a shared line between them at every phase, and the
//!   arrival's read-modify-write right after the store waits for that line.
//! - Registrations beyond the core count are tasks, or threads that cannot all run at once and pay
//!   a context switch (microseconds) per phase anyway. They share blocks of packed cells. At
//!   100,000 tasks a padded cell each was 25 MiB of lines, one missed per task per phase (measured
//!   on the 2-core Xeon VM with 100,000 tokio tasks: 473 ns per task and phase with the store,
//!   345 ns without it); packed they are 800 KiB, which stays in the caches.
//!
//! A block's consecutive cells are spread over its lines (see [`Block::cell`]), so registrations
//! made one after another, which executors tend to run on different workers, do not share a line
//! until a block holds more of them than it has lines.

use crossbeam_utils::CachePadded;

use crate::primitive::{Arc, AtomicU64};

/// Cells per block: 64 lines of 8 cells, 4 KiB, so the first 64 registrations of a block each
/// have a line of their own, and 100,000 registrations take 196 blocks.
const BLOCK_CELLS: usize = 512;
/// Cells on one 64-byte line.
const LINE_CELLS: usize = 8;
const BLOCK_LINES: usize = BLOCK_CELLS / LINE_CELLS;

/// One registration's progress cell. Cloning it shares the cell (the roster keeps a clone).
#[derive(Clone)]
pub(crate) enum Progress {
    /// A cell on a line of its own.
    Alone(Arc<CachePadded<AtomicU64>>),
    /// Cell `index` of a shared block (a `u16`, which keeps a registration's copy at 16 bytes).
    Packed(Arc<Block>, u16),
}

impl Progress {
    /// The cell: the next phase this registration will signal.
    pub(crate) fn cell(&self) -> &AtomicU64 {
        match self {
            Progress::Alone(cell) => cell,
            Progress::Packed(block, index) => &block.cells[usize::from(*index)],
        }
    }
}

/// Packed cells, handed out in order by [`Supply::take`].
pub(crate) struct Block {
    cells: Box<[AtomicU64]>,
}

impl Block {
    fn new() -> Self {
        Block {
            cells: (0..BLOCK_CELLS).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// The cell of the block's `taken`-th registration: the first cell of each line, then the
    /// second of each, and so on.
    fn cell(taken: usize) -> u16 {
        let cell = (taken % BLOCK_LINES) * LINE_CELLS + taken / BLOCK_LINES;
        u16::try_from(cell).expect("a block's cells fit in a u16")
    }
}

/// The roster's supply of cells: the block being filled, and how many of its cells are taken. A
/// block is freed when its last registration (and the roster's copies) drop; its cells are not
/// reused before that, so a block outlives its registrations by at most the ones still alive.
#[derive(Default)]
pub(crate) struct Supply {
    filling: Option<(Arc<Block>, usize)>,
}

impl Supply {
    /// A cell holding `phase` for a new registration, which joins `registered` others.
    pub(crate) fn take(&mut self, phase: u64, registered: usize) -> Progress {
        // Under loom every atomic is an object each execution tracks, and a block holds 512:
        // the models keep a cell each, as before blocks (nothing in a block needs modelling: a
        // cell has one writer, and its readers hold the roster's lock).
        let progress = if cfg!(phasers_loom) || registered < crate::available_cores() {
            Progress::Alone(Arc::new(CachePadded::new(AtomicU64::new(0))))
        } else {
            let (block, taken) = match self.filling.take() {
                Some((block, taken)) if taken < BLOCK_CELLS => (block, taken),
                _ => (Arc::new(Block::new()), 0),
            };
            let progress = Progress::Packed(block.clone(), Block::cell(taken));
            self.filling = Some((block, taken + 1));
            progress
        };
        progress
            .cell()
            .store(phase, crate::primitive::Ordering::Relaxed);
        progress
    }
}

#[cfg(all(test, not(phasers_loom)))]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn a_block_hands_out_every_cell_once_spreading_neighbours_over_lines() {
        let cells: Vec<usize> = (0..BLOCK_CELLS)
            .map(|t| usize::from(Block::cell(t)))
            .collect();
        assert_eq!(cells.iter().collect::<HashSet<_>>().len(), BLOCK_CELLS);
        assert!(cells.iter().all(|&c| c < BLOCK_CELLS));
        assert_eq!(std::mem::size_of::<Option<Progress>>(), 16);
        let lines: HashSet<usize> = cells[..BLOCK_LINES]
            .iter()
            .map(|c| c / LINE_CELLS)
            .collect();
        assert_eq!(lines.len(), BLOCK_LINES, "the first cells each take a line");
    }

    #[test]
    fn registrations_beyond_the_cores_share_blocks() {
        let mut supply = Supply::default();
        let cores = crate::available_cores();
        let alone = supply.take(3, 0);
        assert!(matches!(alone, Progress::Alone(_)));
        let packed: Vec<Progress> = (0..BLOCK_CELLS + 1)
            .map(|i| supply.take(i as u64, cores + i))
            .collect();
        let blocks: HashSet<*const Block> = packed
            .iter()
            .map(|p| match p {
                Progress::Packed(block, _) => Arc::as_ptr(block),
                Progress::Alone(_) => {
                    panic!("a registration beyond the cores got a line of its own")
                }
            })
            .collect();
        assert_eq!(
            blocks.len(),
            2,
            "{} cells fill one block and start another",
            BLOCK_CELLS + 1
        );
        for (i, p) in packed.iter().enumerate() {
            assert_eq!(p.cell().load(crate::primitive::Ordering::Relaxed), i as u64);
        }
        assert_eq!(alone.cell().load(crate::primitive::Ordering::Relaxed), 3);
    }
}
