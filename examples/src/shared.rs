//! Arrays that several threads of one application read and write, in phases separated by
//! barriers.
//!
//! The applications split their data among threads the way the C and Java originals do: a
//! thread writes its own rows, columns or points and reads its neighbours', and a barrier
//! separates every phase in which some element is written from the phases in which another
//! thread reads it. Rust's `&mut` slices cannot express "this thread writes the red points of
//! rows it shares with its neighbour, who reads the black ones", so the data sits in
//! [`SharedSlice`]: one `UnsafeCell` per element, read and written through raw accesses whose
//! callers promise the phase discipline. Each barrier kind releases with a happens-before edge
//! (library barriers with release/acquire atomics, the others with a mutex or futex), which is
//! what makes a write before a barrier visible to a read after it.

use std::cell::UnsafeCell;
use std::ops::Range;

/// A fixed-length array shared between threads that never touch the same element in the same
/// phase unless all of them only read it.
pub(crate) struct SharedSlice<T> {
    cells: Box<[UnsafeCell<T>]>,
}

// SAFETY: the slice only hands out its elements through the unsafe methods below, whose
// contracts forbid a data race; values of `T: Send` may be written by one thread and read by
// another.
unsafe impl<T: Send> Sync for SharedSlice<T> {}

impl<T: Copy> SharedSlice<T> {
    /// The elements of `values`, now shareable.
    pub(crate) fn new(values: Vec<T>) -> Self {
        SharedSlice {
            cells: values.into_iter().map(UnsafeCell::new).collect(),
        }
    }

    /// Reads element `index`.
    ///
    /// # Safety
    ///
    /// No other thread may write element `index` in the current phase.
    #[inline]
    pub(crate) unsafe fn get(&self, index: usize) -> T {
        // SAFETY: the caller guarantees no concurrent write to this element.
        unsafe { *self.cells[index].get() }
    }

    /// Writes element `index`.
    ///
    /// # Safety
    ///
    /// No other thread may read or write element `index` in the current phase.
    #[inline]
    pub(crate) unsafe fn set(&self, index: usize, value: T) {
        // SAFETY: the caller guarantees this thread is the only one touching this element.
        unsafe { *self.cells[index].get() = value }
    }

    /// The elements in `range`, to read.
    ///
    /// # Safety
    ///
    /// No thread may write any element of `range` while the returned slice lives.
    #[inline]
    pub(crate) unsafe fn slice(&self, range: Range<usize>) -> &[T] {
        let cells = &self.cells[range];
        // SAFETY: `UnsafeCell<T>` has the layout of `T` (it is `repr(transparent)`), so the cells
        // are `cells.len()` consecutive `T`s; the caller guarantees no writes while it lives.
        unsafe { std::slice::from_raw_parts(cells.as_ptr().cast::<T>(), cells.len()) }
    }

    /// The elements in `range`, to write.
    ///
    /// # Safety
    ///
    /// No other thread may read or write any element of `range` while the returned slice
    /// lives, and this thread may hold no other slice overlapping it.
    #[inline]
    #[allow(clippy::mut_from_ref)] // the interior mutability is the point; see the contract
    pub(crate) unsafe fn slice_mut(&self, range: Range<usize>) -> &mut [T] {
        let cells = &self.cells[range];
        // SAFETY: as in `slice`, and `UnsafeCell` permits mutation through a shared reference;
        // the caller guarantees exclusive access for the slice's life.
        unsafe { std::slice::from_raw_parts_mut(UnsafeCell::raw_get(cells.as_ptr()), cells.len()) }
    }

    /// The elements, once no thread shares them any more.
    pub(crate) fn into_vec(self) -> Vec<T> {
        self.cells
            .into_vec()
            .into_iter()
            .map(UnsafeCell::into_inner)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_write_disjoint_halves_then_read_everything() {
        let shared = SharedSlice::new(vec![0u64; 100]);
        let barrier = std::sync::Barrier::new(2);
        std::thread::scope(|s| {
            for rank in 0..2 {
                let (shared, barrier) = (&shared, &barrier);
                s.spawn(move || {
                    let range = rank * 50..rank * 50 + 50;
                    // SAFETY: each thread writes only its half in this phase.
                    let mine = unsafe { shared.slice_mut(range.clone()) };
                    for (offset, value) in mine.iter_mut().enumerate() {
                        *value = (range.start + offset) as u64;
                    }
                    barrier.wait();
                    // SAFETY: nobody writes after the barrier.
                    let all = unsafe { shared.slice(0..100) };
                    assert_eq!(all.iter().sum::<u64>(), 4950);
                    // SAFETY: as above.
                    assert_eq!(unsafe { shared.get(99) }, 99);
                });
            }
        });
        assert_eq!(shared.into_vec()[42], 42);
    }
}
