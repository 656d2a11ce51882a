//! An accumulator's shared state, type-erased to 64-bit patterns so the phaser's gather can move
//! contributions without knowing their type.
//!
//! Each sub-phaser below the root has two cells, one per phase parity: the phase being gathered
//! and the next one, which signal-only tasks may already be contributing to. A task folds its
//! phase's partial into its leaf's cell just before it arrives; the sub-phaser's completer moves
//! the cell's value into its parent's cell just before it arrives there. The root has four cells,
//! one per phase modulo 4, and once a phase is released its root cell is the phase's result (see
//! `root_line.rs`; the first plain accumulator's root cells share the root word's line). Values
//! that reach a sub-phaser ahead of its phase wait in `early` until the root finishes that phase.
//!
//! Reproducible accumulators skip the cells: every task's partial is kept, and the root's
//! completer sorts a phase's partials into a fixed order before combining them.
//!
//! # Why the cells live in the phaser
//!
//! The cells are indexed by the phaser's sub-phasers and phase parities, and only the phaser's
//! gather, registrations and completers move values through them; they know nothing of element
//! types or operators beyond the type-erased [`Combine`]. So they belong to the phaser, and
//! `accumulator/` is the typed front end above it ([`Op`](crate::Op), [`Element`](crate::Element),
//! `send` and `result`): the accumulator imports the phaser, and the phaser never imports the
//! accumulator. Moving the cells to a room of their own below both would give that room one user.

use std::collections::BTreeMap;

use crossbeam_utils::CachePadded;

use super::root_line::{empty_cells, slot, RootCells, RootLine};
use crate::primitive::{Arc, AtomicBool, AtomicU64, Mutex, Ordering};

/// How two bit patterns combine, and in which order reproducible partials are combined.
pub(crate) struct Combine {
    pub(crate) identity: u64,
    /// Integer sums: a single `fetch_add` on the bit pattern, wrapping like the integer type.
    pub(crate) wrapping_add: bool,
    pub(crate) apply: Box<dyn Fn(u64, u64) -> u64 + Send + Sync>,
    pub(crate) order: fn(u64, u64) -> std::cmp::Ordering,
}

/// A task's contribution to one accumulator in its current phase. Kept across phases (only
/// `sent` is cleared), so that signalling costs no reference-count traffic on the shared `Cells`.
pub(crate) struct Partial {
    pub(crate) cells: Arc<Cells>,
    pub(crate) value: u64,
    /// Whether the task sent anything this phase.
    pub(crate) sent: bool,
}

pub(crate) struct Cells {
    combine: Combine,
    reproducible: bool,
    /// Two cells per sub-phaser below the root, indexed `[node - 1][phase % 2]`.
    cells: Box<[CachePadded<[AtomicU64; 2]>]>,
    /// The phaser's root line: its word tells [`result`](Self::result) the phase, and its cells
    /// are this accumulator's root cells when `inline`.
    root: Arc<CachePadded<RootLine>>,
    inline: bool,
    /// The root cells when not `inline` (unused then, as by a reproducible accumulator).
    own: CachePadded<RootCells>,
    /// Values for phases that had not yet reached the sub-phaser they were sent to.
    early: Mutex<BTreeMap<u64, u64>>,
    has_early: AtomicBool,
    /// Reproducible mode: each phase's partials, combined in sorted order at the root.
    collected: Mutex<BTreeMap<u64, Vec<u64>>>,
    /// Reproducible mode: the result of the most recently finished phase.
    result: CachePadded<AtomicU64>,
}

impl Cells {
    /// An accumulator's cells on a phaser of `nodes` sub-phasers whose root line is `root`.
    /// `inline`: its root cells are the root line's, which the caller has claimed for it.
    pub(crate) fn new(
        combine: Combine,
        nodes: usize,
        reproducible: bool,
        root: Arc<CachePadded<RootLine>>,
        inline: bool,
    ) -> Self {
        let identity = combine.identity;
        if inline {
            // Claimed for this accumulator alone; no task can send to it before it is built.
            for cell in &root.cells {
                cell.store(identity, Ordering::Release);
            }
        }
        Cells {
            cells: (1..nodes)
                .map(|_| CachePadded::new([AtomicU64::new(identity), AtomicU64::new(identity)]))
                .collect(),
            root,
            inline,
            own: CachePadded::new(empty_cells(identity)),
            early: Mutex::new(BTreeMap::new()),
            has_early: AtomicBool::new(false),
            collected: Mutex::new(BTreeMap::new()),
            result: CachePadded::new(AtomicU64::new(identity)),
            combine,
            reproducible,
        }
    }

    pub(crate) fn identity(&self) -> u64 {
        self.combine.identity
    }

    pub(crate) fn combine(&self, a: u64, b: u64) -> u64 {
        (self.combine.apply)(a, b)
    }

    pub(crate) fn is_reproducible(&self) -> bool {
        self.reproducible
    }

    fn root_cells(&self) -> &RootCells {
        if self.inline {
            &self.root.cells
        } else {
            &self.own
        }
    }

    /// `node`'s cell for `phase`, which `node` is gathering.
    fn cell(&self, node: usize, phase: u64) -> &AtomicU64 {
        match node {
            0 => &self.root_cells()[slot(phase)],
            _ => &self.cells[node - 1][(phase % 2) as usize],
        }
    }

    /// The result of the most recently finished phase.
    pub(crate) fn result(&self) -> u64 {
        if self.reproducible {
            return self.result.load(Ordering::Acquire);
        }
        self.root.result(self.root_cells())
    }

    /// Folds `value` into `node`'s cell for `phase`, which `node` is gathering.
    pub(crate) fn fold(&self, node: usize, phase: u64, value: u64) {
        let cell = self.cell(node, phase);
        if self.combine.wrapping_add {
            cell.fetch_add(value, Ordering::AcqRel);
            return;
        }
        let mut current = cell.load(Ordering::Acquire);
        loop {
            let combined = self.combine(current, value);
            match cell.compare_exchange_weak(current, combined, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return,
                Err(now) => current = now,
            }
        }
    }

    /// Keeps `value` for `phase`, which has not reached the sub-phaser it was sent to yet.
    pub(crate) fn fold_early(&self, phase: u64, value: u64) {
        let mut early = self
            .early
            .lock()
            .expect("no thread panics holding the early map");
        let slot = early.entry(phase).or_insert(self.combine.identity);
        *slot = self.combine(*slot, value);
        self.has_early.store(true, Ordering::Release);
    }

    /// Keeps a task's partial for `phase` (reproducible mode).
    pub(crate) fn collect(&self, phase: u64, value: u64) {
        self.collected
            .lock()
            .expect("no thread panics holding the collected partials")
            .entry(phase)
            .or_default()
            .push(value);
    }

    /// Moves `child`'s cell into `parent`'s, for `phase`.
    pub(crate) fn transfer(&self, child: usize, parent: usize, phase: u64) {
        if self.reproducible {
            return;
        }
        let value = self.take(child, phase);
        if value != self.combine.identity {
            self.fold(parent, phase, value);
        }
    }

    /// Moves `child`'s cell for `phase` into the early values: its parent is not there yet.
    pub(crate) fn transfer_early(&self, child: usize, phase: u64) {
        if self.reproducible {
            return;
        }
        let value = self.take(child, phase);
        if value != self.combine.identity {
            self.fold_early(phase, value);
        }
    }

    /// Empties a cell below the root (root cells are never taken: see `root_line.rs`).
    fn take(&self, node: usize, phase: u64) -> u64 {
        debug_assert_ne!(node, 0, "root cells are results, never taken");
        self.cell(node, phase)
            .swap(self.combine.identity, Ordering::AcqRel)
    }

    /// Makes `phase`'s root cell its result once the root releases it, and readies the next
    /// phase's: folds in the values sent to `phase` ahead of the root, and empties the root cell
    /// of `phase + 1` (see `root_line.rs`). Reproducible mode: combines the phase's partials in
    /// their fixed order and publishes the result.
    ///
    /// Only the root's last arrival calls this, for the phase it completes. A plain accumulator
    /// allows it before the arrival's compare-and-swap, whether that then succeeds or not, and
    /// more than once per phase; a reproducible one only once, in the completing state.
    pub(crate) fn close(&self, phase: u64) {
        if self.reproducible {
            let mut partials = self
                .collected
                .lock()
                .expect("no thread panics holding the collected partials")
                .remove(&phase)
                .unwrap_or_default();
            partials.sort_unstable_by(|a, b| (self.combine.order)(*a, *b));
            let value = partials
                .into_iter()
                .fold(self.combine.identity, |acc, v| self.combine(acc, v));
            self.result.store(value, Ordering::Release);
            return;
        }
        if self.has_early.load(Ordering::Acquire) {
            let mut early = self
                .early
                .lock()
                .expect("no thread panics holding the early map");
            if let Some(extra) = early.remove(&phase) {
                self.fold(0, phase, extra);
            }
            self.has_early.store(!early.is_empty(), Ordering::Release);
        }
        self.cell(0, phase + 1)
            .store(self.combine.identity, Ordering::Release);
    }

    /// `phase` completes as the phaser's last, by the last leave (see `Finish::Last`): its result
    /// stays that of the phase before, which is what a task reading it once every registration
    /// is gone wants, so `phase`'s root cell takes that result (the sends made in `phase` by
    /// tasks that then left are dropped).
    pub(crate) fn keep_previous(&self, phase: u64) {
        if self.reproducible {
            return;
        }
        let previous = self.cell(0, phase.wrapping_sub(1)).load(Ordering::Acquire);
        self.cell(0, phase).store(previous, Ordering::Release);
    }
}
