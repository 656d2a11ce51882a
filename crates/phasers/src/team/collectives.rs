//! The blocking collectives: what each member passes and what it gets, returned once the call is
//! complete. Their arguments are checked in `arguments.rs`; the non-blocking forms, which start the
//! same calls and return a [`Pending`](super::Pending), are in `nonblocking.rs`.

use super::call::Call;
use super::combiner::Combiner;
use super::engine::Until;
use super::kind::Kind;
use super::member::Member;
use crate::accumulator::{Element, Op};
use crate::error::Result;
// Only the docs name it: the errors these calls return.
#[cfg(doc)]
use crate::error::Error;

impl Member {
    fn run<T: Copy + Send + 'static>(&mut self, call: Call<'_, T>) -> Result<()> {
        if call.is_light() {
            return self.run_light(&call);
        }
        self.start(&call, false)?;
        self.progress(&call, Until::END)
            .expect("a blocking call runs to its end")
    }

    /// Waits until every member of the team has called `barrier`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use phasers::Team;
    ///
    /// let team = Team::new(3)?;
    /// let arrived = AtomicUsize::new(0);
    /// std::thread::scope(|s| {
    ///     for mut m in team.participants() {
    ///         let arrived = &arrived;
    ///         s.spawn(move || {
    ///             arrived.fetch_add(1, Ordering::Relaxed);
    ///             m.barrier().unwrap();
    ///             assert_eq!(arrived.load(Ordering::Relaxed), 3); // every member arrived first
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Broken`] when the team is broken; [`Error::Mismatch`] (checked teams, the default) when
    /// another member called a different collective.
    pub fn barrier(&mut self) -> Result<()> {
        if self.in_flight.is_none() {
            return self.barrier_light();
        }
        self.run(Call::<()>::new(Kind::Barrier))
    }

    /// A barrier that also checks every member passed the same `value`: seed 004's barrier with
    /// an expression (`upc_barrier expr`), to catch members that reached different barriers. It
    /// compares the values whether or not the team is checked.
    ///
    /// ```
    /// use phasers::{Error, Team};
    ///
    /// let team = Team::new(2)?;
    /// let results: Vec<_> = std::thread::scope(|s| {
    ///     let handles: Vec<_> = team
    ///         .participants()
    ///         .into_iter()
    ///         .map(|mut m| s.spawn(move || m.barrier_checked(7 + m.rank() as u64)))
    ///         .collect();
    ///     handles.into_iter().map(|h| h.join().unwrap()).collect()
    /// });
    /// assert!(results.iter().all(|r| matches!(r, Err(Error::Mismatch { what: "barrier value", .. }))));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Mismatch`] on every member when the values differ; otherwise as [`barrier`](Self::barrier).
    pub fn barrier_checked(&mut self, value: u64) -> Result<()> {
        let mut call = Call::<()>::new(Kind::BarrierChecked);
        call.value = value;
        self.run(call)
    }

    /// Copies the root's `buffer` into every other member's `buffer`. Every member passes a
    /// buffer of the same length.
    ///
    /// ```
    /// use phasers::Team;
    ///
    /// let team = Team::new(3)?;
    /// std::thread::scope(|s| {
    ///     for mut m in team.participants() {
    ///         s.spawn(move || {
    ///             let mut buffer = if m.rank() == 1 { vec![4u32, 5, 6] } else { vec![0; 3] };
    ///             m.broadcast(1, &mut buffer).unwrap();
    ///             assert_eq!(buffer, [4, 5, 6]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] on every member when a root is out of range;
    /// [`Error::Mismatch`] when lengths, roots or collectives differ (every member of a checked team, the
    /// default; at least the members that read a mismatched buffer otherwise); [`Error::Broken`].
    pub fn broadcast<T: Copy + Send + 'static>(
        &mut self,
        root: usize,
        buffer: &mut [T],
    ) -> Result<()> {
        let call = self.broadcast_call(root, buffer);
        self.run(call)
    }

    /// Combines every member's `input` element by element with `op`, in rank order, into the
    /// root's `output` (as long as the input). Other members' outputs are not written; they may
    /// pass `&mut []`.
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
    ///             let mut max = vec![0u32; if m.rank() == 0 { 2 } else { 0 }];
    ///             m.reduce(0, &[m.rank() as u32, 5], &mut max, Op::Max).unwrap();
    ///             assert_eq!(max, if m.rank() == 0 { vec![2, 5] } else { vec![] });
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`broadcast`](Self::broadcast); also [`Error::InvalidArgument`] for a bitwise op on
    /// floating-point numbers or a root output of the wrong length.
    pub fn reduce<T: Element>(
        &mut self,
        root: usize,
        input: &[T],
        output: &mut [T],
        op: Op<T>,
    ) -> Result<()> {
        let call = self.reduce_call(root, input, output, Combiner::builtin(op));
        self.run(call)
    }

    /// [`reduce`](Self::reduce) with a function of your own, for any element type. The function
    /// must be associative and commutative, and should not panic (if it does, every member gets
    /// [`Error::Broken`] and the panic continues in the thread that raised it).
    ///
    /// ```
    /// use phasers::Team;
    ///
    /// let team = Team::new(4)?;
    /// std::thread::scope(|s| {
    ///     for mut m in team.participants() {
    ///         s.spawn(move || {
    ///             let scored = [(m.rank() % 2 * 10, m.rank())]; // (score, rank): who scored best?
    ///             let mut best = [(0, 0)];
    ///             m.reduce_with(0, &scored, &mut best, |a, b| a.max(b)).unwrap();
    ///             // Only the root's output is written.
    ///             assert_eq!(best[0], if m.rank() == 0 { (10, 3) } else { (0, 0) });
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn reduce_with<T: Copy + Send + 'static>(
        &mut self,
        root: usize,
        input: &[T],
        output: &mut [T],
        op: impl Fn(T, T) -> T,
    ) -> Result<()> {
        let call = self.reduce_call(root, input, output, Ok(Combiner::Borrowed(&op)));
        self.run(call)
    }

    /// Combines every member's `input` element by element with `op`, in rank order, into every
    /// member's `output` (as long as the input).
    ///
    /// Up to 64 bytes travel inside the call's meeting, so a one-word allreduce costs little
    /// more than a barrier. Larger arrays use seed 003's linear reduction (each member reduces
    /// its share of every input and writes it to every output), or, for the non-blocking form and
    /// [`SyncMode::NoSync`](super::SyncMode::NoSync), each member reduces every staged input
    /// into its own output. The result is the same on every member and, for a fixed team size,
    /// from call to call.
    ///
    /// ```
    /// use phasers::{Op, Team};
    ///
    /// let team = Team::new(4)?;
    /// std::thread::scope(|s| {
    ///     for mut m in team.participants() {
    ///         s.spawn(move || {
    ///             let mut total = [0u64];
    ///             m.allreduce(&[m.rank() as u64], &mut total, Op::Sum).unwrap();
    ///             assert_eq!(total, [6]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`reduce`](Self::reduce).
    pub fn allreduce<T: Element>(
        &mut self,
        input: &[T],
        output: &mut [T],
        op: Op<T>,
    ) -> Result<()> {
        // Bitwise ops on floats are refused by `Combiner::builtin`, on the general path.
        let refused = matches!(op, Op::And | Op::Or | Op::Xor) && !T::INTEGER;
        let word = input.len() == 1
            && output.len() == 1
            && std::mem::size_of::<T>() <= std::mem::size_of::<u64>()
            && self.shared.checked
            && self.in_flight.is_none()
            && !refused;
        if word {
            return self.allreduce_word(input, output, &op);
        }
        let call = self.allreduce_call(input, output, Combiner::builtin(op));
        self.run(call)
    }

    /// [`allreduce`](Self::allreduce) with a function of your own (see [`reduce_with`](Self::reduce_with)).
    ///
    /// ```
    /// use phasers::Team;
    ///
    /// let team = Team::new(3)?;
    /// std::thread::scope(|s| {
    ///     for mut m in team.participants() {
    ///         s.spawn(move || {
    ///             let x = [10, 40, 20][m.rank()];
    ///             let min_max = |a: (i32, i32), b: (i32, i32)| (a.0.min(b.0), a.1.max(b.1));
    ///             let mut range = [(0, 0)];
    ///             m.allreduce_with(&[(x, x)], &mut range, min_max).unwrap();
    ///             assert_eq!(range, [(10, 40)]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn allreduce_with<T: Copy + Send + 'static>(
        &mut self,
        input: &[T],
        output: &mut [T],
        op: impl Fn(T, T) -> T,
    ) -> Result<()> {
        let call = self.allreduce_call(input, output, Ok(Combiner::Borrowed(&op)));
        self.run(call)
    }

    /// Concatenates every member's `input` (all of one length) in rank order into the root's
    /// `output`, which holds `parties() * input.len()` elements. Others may pass `&mut []`.
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
    ///             let mut all = vec![0u16; if m.rank() == 1 { 6 } else { 0 }];
    ///             m.gather(1, &[m.rank() as u16; 2], &mut all).unwrap();
    ///             assert_eq!(all, if m.rank() == 1 { vec![0, 0, 1, 1, 2, 2] } else { vec![] });
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`broadcast`](Self::broadcast).
    pub fn gather<T: Copy + Send + 'static>(
        &mut self,
        root: usize,
        input: &[T],
        output: &mut [T],
    ) -> Result<()> {
        let call = self.gather_call(Kind::Gather, root, input, output);
        self.run(call)
    }

    /// [`gather`](Self::gather) into every member's `output`.
    ///
    /// ```
    /// use phasers::Team;
    ///
    /// let team = Team::new(3)?;
    /// std::thread::scope(|s| {
    ///     for mut m in team.participants() {
    ///         s.spawn(move || {
    ///             let mut all = [0u8; 6];
    ///             let mine = [m.rank() as u8; 2];
    ///             m.allgather(&mine, &mut all).unwrap();
    ///             assert_eq!(all, [0, 0, 1, 1, 2, 2]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`broadcast`](Self::broadcast).
    pub fn allgather<T: Copy + Send + 'static>(
        &mut self,
        input: &[T],
        output: &mut [T],
    ) -> Result<()> {
        let call = self.gather_call(Kind::Allgather, 0, input, output);
        self.run(call)
    }

    /// Hands block `r` of the root's `input` (`parties() * output.len()` elements) to member `r`'s
    /// `output`. Others may pass `&[]` as input.
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
    ///             // Only the root's input is read; the others pass an empty one.
    ///             let blocks: &[u8] = if m.rank() == 0 { &[1, 2, 3, 4, 5, 6] } else { &[] };
    ///             let mut mine = [0u8; 2];
    ///             m.scatter(0, blocks, &mut mine).unwrap();
    ///             assert_eq!(mine, [[1, 2], [3, 4], [5, 6]][m.rank()]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`broadcast`](Self::broadcast).
    pub fn scatter<T: Copy + Send + 'static>(
        &mut self,
        root: usize,
        input: &[T],
        output: &mut [T],
    ) -> Result<()> {
        let call = self.scatter_call(root, input, output);
        self.run(call)
    }

    /// The transpose: `input` and `output` hold one block per member; block `j` of this member's
    /// output becomes block `rank()` of member `j`'s input. Both are as long, a multiple of
    /// `parties()`.
    ///
    /// ```
    /// use phasers::Team;
    ///
    /// let team = Team::new(2)?;
    /// std::thread::scope(|s| {
    ///     for mut m in team.participants() {
    ///         s.spawn(move || {
    ///             let r = m.rank() as u16;
    ///             let input = [10 * r, 10 * r + 1];
    ///             let mut output = [0; 2];
    ///             m.alltoall(&input, &mut output).unwrap();
    ///             assert_eq!(output, [r, 10 + r]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`broadcast`](Self::broadcast).
    pub fn alltoall<T: Copy + Send + 'static>(
        &mut self,
        input: &[T],
        output: &mut [T],
    ) -> Result<()> {
        let call = self.alltoall_call(input, output);
        self.run(call)
    }

    /// Inclusive prefix: `output = input₀ op input₁ op … op input_rank`, element by element, in
    /// rank order.
    ///
    /// ```
    /// use phasers::{Op, Team};
    ///
    /// let team = Team::new(3)?;
    /// std::thread::scope(|s| {
    ///     for mut m in team.participants() {
    ///         s.spawn(move || {
    ///             let mut prefix = [0i32];
    ///             m.scan_inclusive(&[m.rank() as i32 + 1], &mut prefix, Op::Sum).unwrap();
    ///             assert_eq!(prefix[0], [1, 3, 6][m.rank()]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`reduce`](Self::reduce).
    pub fn scan_inclusive<T: Element>(
        &mut self,
        input: &[T],
        output: &mut [T],
        op: Op<T>,
    ) -> Result<()> {
        let call = self.scan_call(Kind::ScanInclusive, input, output, Combiner::builtin(op));
        self.run(call)
    }

    /// [`scan_inclusive`](Self::scan_inclusive) with a function of your own.
    ///
    /// ```
    /// use phasers::Team;
    ///
    /// let team = Team::new(3)?;
    /// std::thread::scope(|s| {
    ///     for mut m in team.participants() {
    ///         s.spawn(move || {
    ///             let (x, mut running_max) = ([3, 1, 4][m.rank()], [0u8]);
    ///             m.scan_inclusive_with(&[x], &mut running_max, u8::max).unwrap();
    ///             assert_eq!(running_max[0], [3, 3, 4][m.rank()]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn scan_inclusive_with<T: Copy + Send + 'static>(
        &mut self,
        input: &[T],
        output: &mut [T],
        op: impl Fn(T, T) -> T,
    ) -> Result<()> {
        let call = self.scan_call(
            Kind::ScanInclusive,
            input,
            output,
            Ok(Combiner::Borrowed(&op)),
        );
        self.run(call)
    }

    /// Exclusive prefix: `output = input₀ op … op input_(rank−1)`. Member 0 has no prefix: its
    /// output is left untouched.
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
    ///             let mut before = [-1i64];
    ///             m.scan_exclusive(&[m.rank() as i64 + 1], &mut before, Op::Sum).unwrap();
    ///             assert_eq!(before[0], [-1, 1, 3][m.rank()]); // member 0's is left as it was
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`reduce`](Self::reduce).
    pub fn scan_exclusive<T: Element>(
        &mut self,
        input: &[T],
        output: &mut [T],
        op: Op<T>,
    ) -> Result<()> {
        let call = self.scan_call(Kind::ScanExclusive, input, output, Combiner::builtin(op));
        self.run(call)
    }

    /// [`scan_exclusive`](Self::scan_exclusive) with a function of your own.
    ///
    /// ```
    /// use phasers::Team;
    ///
    /// let team = Team::new(3)?;
    /// std::thread::scope(|s| {
    ///     for mut m in team.participants() {
    ///         s.spawn(move || {
    ///             let mine = [(1u32, m.rank() as u32 * 10)]; // (count, sum) of its items
    ///             let mut before = [(0, 0)];
    ///             let add = |a: (u32, u32), b: (u32, u32)| (a.0 + b.0, a.1 + b.1);
    ///             m.scan_exclusive_with(&mine, &mut before, add).unwrap();
    ///             // Member 0's output is left as it was.
    ///             assert_eq!(before[0], [(0, 0), (1, 0), (2, 10)][m.rank()]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn scan_exclusive_with<T: Copy + Send + 'static>(
        &mut self,
        input: &[T],
        output: &mut [T],
        op: impl Fn(T, T) -> T,
    ) -> Result<()> {
        let call = self.scan_call(
            Kind::ScanExclusive,
            input,
            output,
            Ok(Combiner::Borrowed(&op)),
        );
        self.run(call)
    }
}
