//! An accumulator's shared state, type-erased to 64-bit patterns so the phaser's gather can move
//! contributions without knowing their type.
//!
//! Each sub-phaser has two cells, one per phase parity: the phase being gathered and the next
//! one, which signal-only tasks may already be contributing to. A task folds its phase's partial
//! into its leaf's cell just before it arrives; the sub-phaser's completer moves the cell's value
//! into its parent's cell just before it arrives there; the root's completer turns the root cell
//! into the phase's result. Values that reach a sub-phaser ahead of its phase wait in `early`
//! until the root finishes that phase.
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
    /// Two cells per sub-phaser, indexed `[node][phase % 2]`.
    cells: Box<[CachePadded<[AtomicU64; 2]>]>,
    /// Values for phases that had not yet reached the sub-phaser they were sent to.
    early: Mutex<BTreeMap<u64, u64>>,
    has_early: AtomicBool,
    /// Reproducible mode: each phase's partials, combined in sorted order at the root.
    collected: Mutex<BTreeMap<u64, Vec<u64>>>,
    result: CachePadded<AtomicU64>,
}

impl Cells {
    pub(crate) fn new(combine: Combine, nodes: usize, reproducible: bool) -> Self {
        let identity = combine.identity;
        Cells {
            cells: (0..nodes)
                .map(|_| CachePadded::new([AtomicU64::new(identity), AtomicU64::new(identity)]))
                .collect(),
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

    /// The result of the most recently finished phase.
    pub(crate) fn result(&self) -> u64 {
        self.result.load(Ordering::Acquire)
    }

    /// Folds `value` into `node`'s cell for a phase of parity `parity`, which `node` is gathering.
    pub(crate) fn fold(&self, node: usize, parity: usize, value: u64) {
        let cell = &self.cells[node][parity];
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

    /// Moves `child`'s cell into `parent`'s, for a phase of parity `parity`.
    pub(crate) fn transfer(&self, child: usize, parent: usize, parity: usize) {
        if self.reproducible {
            return;
        }
        let value = self.take(child, parity);
        if value != self.combine.identity {
            self.fold(parent, parity, value);
        }
    }

    /// Moves `child`'s cell for `phase` into the early values: its parent is not there yet.
    pub(crate) fn transfer_early(&self, child: usize, phase: u64) {
        if self.reproducible {
            return;
        }
        let value = self.take(child, (phase % 2) as usize);
        if value != self.combine.identity {
            self.fold_early(phase, value);
        }
    }

    fn take(&self, node: usize, parity: usize) -> u64 {
        self.cells[node][parity].swap(self.combine.identity, Ordering::AcqRel)
    }

    /// Computes `phase`'s result from the root's cell and the early values, and publishes it.
    /// Only the root's completer calls this, once per phase, in phase order.
    pub(crate) fn finish(&self, root: usize, phase: u64) {
        let value = if self.reproducible {
            let mut partials = self
                .collected
                .lock()
                .expect("no thread panics holding the collected partials")
                .remove(&phase)
                .unwrap_or_default();
            partials.sort_unstable_by(|a, b| (self.combine.order)(*a, *b));
            partials
                .into_iter()
                .fold(self.combine.identity, |acc, v| self.combine(acc, v))
        } else {
            let mut value = self.take(root, (phase % 2) as usize);
            if self.has_early.load(Ordering::Acquire) {
                let mut early = self
                    .early
                    .lock()
                    .expect("no thread panics holding the early map");
                if let Some(extra) = early.remove(&phase) {
                    value = self.combine(value, extra);
                }
                self.has_early.store(!early.is_empty(), Ordering::Release);
            }
            value
        };
        self.result.store(value, Ordering::Release);
    }
}
