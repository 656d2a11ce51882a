//! The non-blocking collectives, the `i`-forms: each starts the same call as its blocking form
//! and returns a [`Pending`] to test or wait on, so a member can work while the others arrive.
//! Their arguments are checked in `arguments.rs`, as the blocking forms' are.

use super::call::Call;
use super::combiner::Combiner;
use super::kind::Kind;
use super::member::Member;
use super::pending::Pending;
use crate::accumulator::{Element, Op};
use crate::error::Result;
// Only the docs name it: the errors these calls return.
#[cfg(doc)]
use crate::error::Error;

impl Member {
    /// Starts a [`barrier`](Self::barrier); see [`Pending`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::time::Duration;
    /// use phasers::Team;
    ///
    /// let team = Team::new(3)?;
    /// let arrived = AtomicUsize::new(0);
    /// std::thread::scope(|s| {
    ///     for mut m in team.participants() {
    ///         let arrived = &arrived;
    ///         s.spawn(move || {
    ///             arrived.fetch_add(1, Ordering::Relaxed);
    ///             let mut pending = m.ibarrier().unwrap();
    ///             // ... work that does not need the others ...
    ///             pending.wait_timeout(Duration::from_secs(10)).unwrap(); // a bounded wait
    ///             assert_eq!(arrived.load(Ordering::Relaxed), 3);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Broken`] when the team is already broken; the call's own errors come from
    /// [`Pending::test`] and [`Pending::wait`], as for every `i`-method.
    pub fn ibarrier(&mut self) -> Result<Pending<'_, ()>> {
        Pending::start(self, Call::new(Kind::Barrier))
    }

    /// Starts a [`barrier_checked`](Self::barrier_checked); see [`Pending`].
    ///
    /// # Examples
    ///
    /// ```
    /// use phasers::{Error, Team};
    ///
    /// let team = Team::new(2)?;
    /// std::thread::scope(|s| {
    ///     for mut m in team.participants() {
    ///         s.spawn(move || {
    ///             // The members pass different values: a mismatch, reported to every member.
    ///             let outcome = m.ibarrier_checked(40 + m.rank() as u64).unwrap().wait();
    ///             assert!(matches!(outcome, Err(Error::Mismatch { what: "barrier value", .. })));
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`ibarrier`](Self::ibarrier).
    pub fn ibarrier_checked(&mut self, value: u64) -> Result<Pending<'_, ()>> {
        let mut call = Call::new(Kind::BarrierChecked);
        call.value = value;
        Pending::start(self, call)
    }

    /// Starts a [`broadcast`](Self::broadcast); see [`Pending`].
    ///
    /// # Examples
    ///
    /// ```
    /// use phasers::Team;
    ///
    /// let team = Team::new(3)?;
    /// std::thread::scope(|s| {
    ///     for mut m in team.participants() {
    ///         s.spawn(move || {
    ///             let mut buffer = if m.rank() == 2 { [7u64, 8] } else { [0; 2] };
    ///             m.ibroadcast(2, &mut buffer).unwrap().wait().unwrap();
    ///             assert_eq!(buffer, [7, 8]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`ibarrier`](Self::ibarrier).
    pub fn ibroadcast<'a, T: Copy + Send + 'static>(
        &'a mut self,
        root: usize,
        buffer: &'a mut [T],
    ) -> Result<Pending<'a, T>> {
        let call = self.broadcast_call(root, buffer);
        Pending::start(self, call)
    }

    /// Starts a [`reduce`](Self::reduce); see [`Pending`].
    ///
    /// # Examples
    ///
    /// ```
    /// use phasers::{Op, Team};
    ///
    /// let team = Team::new(3)?;
    /// std::thread::scope(|s| {
    ///     for mut m in team.participants() {
    ///         s.spawn(move || {
    ///             // Only the root's output is written; the others pass an empty one.
    ///             let mut product = vec![0u64; if m.rank() == 2 { 1 } else { 0 }];
    ///             let factor = [m.rank() as u64 + 2];
    ///             m.ireduce(2, &factor, &mut product, Op::Product).unwrap().wait().unwrap();
    ///             assert_eq!(product, if m.rank() == 2 { vec![24] } else { vec![] }); // 2 * 3 * 4
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`ibarrier`](Self::ibarrier).
    pub fn ireduce<'a, T: Element>(
        &'a mut self,
        root: usize,
        input: &'a [T],
        output: &'a mut [T],
        op: Op<T>,
    ) -> Result<Pending<'a, T>> {
        let call = self.reduce_call(root, input, output, Combiner::builtin(op));
        Pending::start(self, call)
    }

    /// Starts a [`reduce_with`](Self::reduce_with); see [`Pending`].
    ///
    /// # Examples
    ///
    /// ```
    /// use phasers::Team;
    ///
    /// let team = Team::new(2)?;
    /// std::thread::scope(|s| {
    ///     for mut m in team.participants() {
    ///         s.spawn(move || {
    ///             let mut longest = [0usize];
    ///             let len = ["a", "abc"][m.rank()].len();
    ///             m.ireduce_with(1, &[len], &mut longest, usize::max).unwrap().wait().unwrap();
    ///             // Only the root's output is written.
    ///             assert_eq!(longest, [if m.rank() == 1 { 3 } else { 0 }]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`ibarrier`](Self::ibarrier).
    pub fn ireduce_with<'a, T: Copy + Send + 'static>(
        &'a mut self,
        root: usize,
        input: &'a [T],
        output: &'a mut [T],
        op: impl Fn(T, T) -> T + Send + 'a,
    ) -> Result<Pending<'a, T>> {
        let call = self.reduce_call(root, input, output, Ok(Combiner::Owned(Box::new(op))));
        Pending::start(self, call)
    }

    /// Starts an [`allreduce`](Self::allreduce); see [`Pending`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use phasers::{Op, Team};
    ///
    /// let team = Team::new(4)?;
    /// std::thread::scope(|s| {
    ///     for mut m in team.participants() {
    ///         s.spawn(move || {
    ///             let (input, mut sum) = ([1, 2, m.rank() as u64], [0u64; 3]);
    ///             let mut pending = m.iallreduce(&input, &mut sum, Op::Sum).unwrap();
    ///             pending.wait_timeout(Duration::from_secs(10)).unwrap();
    ///             drop(pending); // it borrows `sum` until dropped
    ///             assert_eq!(sum, [4, 8, 6]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`ibarrier`](Self::ibarrier).
    pub fn iallreduce<'a, T: Element>(
        &'a mut self,
        input: &'a [T],
        output: &'a mut [T],
        op: Op<T>,
    ) -> Result<Pending<'a, T>> {
        let call = self.allreduce_call(input, output, Combiner::builtin(op));
        Pending::start(self, call)
    }

    /// Starts an [`allreduce_with`](Self::allreduce_with); see [`Pending`].
    ///
    /// # Examples
    ///
    /// ```
    /// use phasers::Team;
    ///
    /// let team = Team::new(2)?;
    /// std::thread::scope(|s| {
    ///     for mut m in team.participants() {
    ///         s.spawn(move || {
    ///             let mut both = [false];
    ///             let ready = [m.rank() == 0 || m.rank() == 1];
    ///             m.iallreduce_with(&ready, &mut both, |a, b| a && b).unwrap().wait().unwrap();
    ///             assert_eq!(both, [true]); // every member is ready
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`ibarrier`](Self::ibarrier).
    pub fn iallreduce_with<'a, T: Copy + Send + 'static>(
        &'a mut self,
        input: &'a [T],
        output: &'a mut [T],
        op: impl Fn(T, T) -> T + Send + 'a,
    ) -> Result<Pending<'a, T>> {
        let call = self.allreduce_call(input, output, Ok(Combiner::Owned(Box::new(op))));
        Pending::start(self, call)
    }

    /// Starts a [`gather`](Self::gather); see [`Pending`].
    ///
    /// # Examples
    ///
    /// ```
    /// use phasers::Team;
    ///
    /// let team = Team::new(3)?;
    /// std::thread::scope(|s| {
    ///     for mut m in team.participants() {
    ///         s.spawn(move || {
    ///             // Only the root's output is written; the others pass an empty one.
    ///             let mut all = vec!['-'; if m.rank() == 0 { 3 } else { 0 }];
    ///             m.igather(0, &[['x', 'y', 'z'][m.rank()]], &mut all).unwrap().wait().unwrap();
    ///             assert_eq!(all, if m.rank() == 0 { vec!['x', 'y', 'z'] } else { vec![] });
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`ibarrier`](Self::ibarrier).
    pub fn igather<'a, T: Copy + Send + 'static>(
        &'a mut self,
        root: usize,
        input: &'a [T],
        output: &'a mut [T],
    ) -> Result<Pending<'a, T>> {
        let call = self.gather_call(Kind::Gather, root, input, output);
        Pending::start(self, call)
    }

    /// Starts an [`allgather`](Self::allgather); see [`Pending`].
    ///
    /// # Examples
    ///
    /// ```
    /// use phasers::Team;
    ///
    /// let team = Team::new(2)?;
    /// std::thread::scope(|s| {
    ///     for mut m in team.participants() {
    ///         s.spawn(move || {
    ///             let mut all = [0i8; 4];
    ///             m.iallgather(&[m.rank() as i8, -1], &mut all).unwrap().wait().unwrap();
    ///             assert_eq!(all, [0, -1, 1, -1]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`ibarrier`](Self::ibarrier).
    pub fn iallgather<'a, T: Copy + Send + 'static>(
        &'a mut self,
        input: &'a [T],
        output: &'a mut [T],
    ) -> Result<Pending<'a, T>> {
        let call = self.gather_call(Kind::Allgather, 0, input, output);
        Pending::start(self, call)
    }

    /// Starts a [`scatter`](Self::scatter); see [`Pending`].
    ///
    /// # Examples
    ///
    /// ```
    /// use phasers::Team;
    ///
    /// let team = Team::new(2)?;
    /// std::thread::scope(|s| {
    ///     for mut m in team.participants() {
    ///         s.spawn(move || {
    ///             let seeds: &[u64] = if m.rank() == 1 { &[11, 22] } else { &[] }; // the root's
    ///             let mut seed = [0u64];
    ///             m.iscatter(1, seeds, &mut seed).unwrap().wait().unwrap();
    ///             assert_eq!(seed, [[11, 22][m.rank()]]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`ibarrier`](Self::ibarrier).
    pub fn iscatter<'a, T: Copy + Send + 'static>(
        &'a mut self,
        root: usize,
        input: &'a [T],
        output: &'a mut [T],
    ) -> Result<Pending<'a, T>> {
        let call = self.scatter_call(root, input, output);
        Pending::start(self, call)
    }

    /// Starts an [`alltoall`](Self::alltoall); see [`Pending`].
    ///
    /// # Examples
    ///
    /// ```
    /// use phasers::Team;
    ///
    /// let team = Team::new(3)?;
    /// std::thread::scope(|s| {
    ///     for mut m in team.participants() {
    ///         s.spawn(move || {
    ///             let r = m.rank() as u32;
    ///             let (input, mut output) = ([10 * r, 10 * r + 1, 10 * r + 2], [0u32; 3]);
    ///             m.ialltoall(&input, &mut output).unwrap().wait().unwrap();
    ///             assert_eq!(output, [r, 10 + r, 20 + r]); // block j came from member j
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`ibarrier`](Self::ibarrier).
    pub fn ialltoall<'a, T: Copy + Send + 'static>(
        &'a mut self,
        input: &'a [T],
        output: &'a mut [T],
    ) -> Result<Pending<'a, T>> {
        let call = self.alltoall_call(input, output);
        Pending::start(self, call)
    }

    /// Starts a [`scan_inclusive`](Self::scan_inclusive); see [`Pending`].
    ///
    /// # Examples
    ///
    /// ```
    /// use phasers::{Op, Team};
    ///
    /// let team = Team::new(3)?;
    /// std::thread::scope(|s| {
    ///     for mut m in team.participants() {
    ///         s.spawn(move || {
    ///             let (bit, mut prefix) = ([1u32 << m.rank()], [0u32]);
    ///             m.iscan_inclusive(&bit, &mut prefix, Op::Or).unwrap().wait().unwrap();
    ///             assert_eq!(prefix, [[0b1, 0b11, 0b111][m.rank()]]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`ibarrier`](Self::ibarrier).
    pub fn iscan_inclusive<'a, T: Element>(
        &'a mut self,
        input: &'a [T],
        output: &'a mut [T],
        op: Op<T>,
    ) -> Result<Pending<'a, T>> {
        let call = self.scan_call(Kind::ScanInclusive, input, output, Combiner::builtin(op));
        Pending::start(self, call)
    }

    /// Starts a [`scan_inclusive_with`](Self::scan_inclusive_with); see [`Pending`].
    ///
    /// # Examples
    ///
    /// ```
    /// use phasers::Team;
    ///
    /// let team = Team::new(3)?;
    /// std::thread::scope(|s| {
    ///     for mut m in team.participants() {
    ///         s.spawn(move || {
    ///             let (x, mut running_min) = ([[5, -2, 7][m.rank()]], [0i16]);
    ///             m.iscan_inclusive_with(&x, &mut running_min, i16::min).unwrap().wait().unwrap();
    ///             assert_eq!(running_min, [[5, -2, -2][m.rank()]]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`ibarrier`](Self::ibarrier).
    pub fn iscan_inclusive_with<'a, T: Copy + Send + 'static>(
        &'a mut self,
        input: &'a [T],
        output: &'a mut [T],
        op: impl Fn(T, T) -> T + Send + 'a,
    ) -> Result<Pending<'a, T>> {
        let call = self.scan_call(
            Kind::ScanInclusive,
            input,
            output,
            Ok(Combiner::Owned(Box::new(op))),
        );
        Pending::start(self, call)
    }

    /// Starts a [`scan_exclusive`](Self::scan_exclusive); see [`Pending`].
    ///
    /// # Examples
    ///
    /// ```
    /// use phasers::{Op, Team};
    ///
    /// let team = Team::new(3)?;
    /// std::thread::scope(|s| {
    ///     for mut m in team.participants() {
    ///         s.spawn(move || {
    ///             let mut offset = [0u64];
    ///             let len = [4, 2, 3][m.rank()]; // where does this member's part start?
    ///             m.iscan_exclusive(&[len], &mut offset, Op::Sum).unwrap().wait().unwrap();
    ///             assert_eq!(offset, [[0, 4, 6][m.rank()]]); // member 0's is left as it was: 0
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`ibarrier`](Self::ibarrier).
    pub fn iscan_exclusive<'a, T: Element>(
        &'a mut self,
        input: &'a [T],
        output: &'a mut [T],
        op: Op<T>,
    ) -> Result<Pending<'a, T>> {
        let call = self.scan_call(Kind::ScanExclusive, input, output, Combiner::builtin(op));
        Pending::start(self, call)
    }

    /// Starts a [`scan_exclusive_with`](Self::scan_exclusive_with); see [`Pending`].
    ///
    /// # Examples
    ///
    /// ```
    /// use phasers::Team;
    ///
    /// let team = Team::new(2)?;
    /// std::thread::scope(|s| {
    ///     for mut m in team.participants() {
    ///         s.spawn(move || {
    ///             let mut before = [(0u8, 0u8)];
    ///             let x = (m.rank() as u8 + 1, 9);
    ///             let sum_and_max = |a: (u8, u8), b: (u8, u8)| (a.0 + b.0, a.1.max(b.1));
    ///             m.iscan_exclusive_with(&[x], &mut before, sum_and_max).unwrap().wait().unwrap();
    ///             assert_eq!(before, [[(0, 0), (1, 9)][m.rank()]]); // member 0's: left as it was
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`ibarrier`](Self::ibarrier).
    pub fn iscan_exclusive_with<'a, T: Copy + Send + 'static>(
        &'a mut self,
        input: &'a [T],
        output: &'a mut [T],
        op: impl Fn(T, T) -> T + Send + 'a,
    ) -> Result<Pending<'a, T>> {
        let call = self.scan_call(
            Kind::ScanExclusive,
            input,
            output,
            Ok(Combiner::Owned(Box::new(op))),
        );
        Pending::start(self, call)
    }
}
