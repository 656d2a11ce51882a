//! The collectives, blocking and non-blocking: what each member passes and what it gets.
//!
//! Every method here builds a [`Call`] after checking this member's own arguments; a bad argument
//! does not return at once, because the others would then wait for this member forever. The call
//! goes ahead with the error recorded, and every member of it returns the error.

use super::call::Call;
use super::combiner::Combiner;
use super::kind::Kind;
use super::member::Member;
use super::pending::Pending;
use crate::accumulator::{Element, Op};
use crate::error::{Error, Result};

impl Member {
    fn run<T: Copy + Send + 'static>(&mut self, call: Call<'_, T>) -> Result<()> {
        self.start(&call, false)?;
        self.progress(&call, true)
            .expect("a blocking call runs to its end")
    }

    fn require(
        &self,
        call: &mut Call<'_, impl Sized>,
        holds: bool,
        message: impl FnOnce() -> String,
    ) {
        if !holds {
            call.fail(Error::invalid(format!(
                "{} on member {}: {}",
                call.kind,
                self.rank,
                message()
            )));
        }
    }

    fn check_root(&self, call: &mut Call<'_, impl Sized>) {
        let (root, size) = (call.root, self.parties());
        self.require(call, root < size, || {
            format!(
                "root {root} is out of range; this team has members 0 to {}",
                size - 1
            )
        });
    }

    /// `len == expected`, where `expected` is `size * count` or `count`.
    fn check_len(
        &self,
        call: &mut Call<'_, impl Sized>,
        what: &str,
        len: usize,
        expected: Option<usize>,
        rule: &str,
    ) {
        let holds = expected == Some(len);
        self.require(call, holds, || match expected {
            Some(expected) => {
                format!("the {what} has {len} elements but must have {expected} ({rule})")
            }
            None => format!("the {what} would need more elements than memory can hold ({rule})"),
        });
    }

    fn with_op<'a, T: Copy>(call: Call<'a, T>, op: Result<Combiner<'a, T>>) -> Call<'a, T> {
        match op {
            Ok(op) => call.op(op),
            Err(error) => {
                let mut call = call;
                call.fail(error);
                call
            }
        }
    }

    // ----- the calls -----

    fn broadcast_call<'a, T>(&self, root: usize, buffer: &'a mut [T]) -> Call<'a, T> {
        let count = buffer.len();
        let mut call = Call::new(Kind::Broadcast)
            .in_out(buffer)
            .root(root)
            .count(count);
        self.check_root(&mut call);
        call
    }

    fn reduce_call<'a, T: Copy>(
        &self,
        root: usize,
        input: &'a [T],
        output: &'a mut [T],
        op: Result<Combiner<'a, T>>,
    ) -> Call<'a, T> {
        let (count, out) = (input.len(), output.len());
        let call = Call::new(Kind::Reduce)
            .input(input)
            .output(output)
            .root(root)
            .count(count);
        let mut call = Self::with_op(call, op);
        self.check_root(&mut call);
        if root == self.rank {
            self.check_len(
                &mut call,
                "root's output",
                out,
                Some(count),
                "as long as the input",
            );
        }
        call
    }

    fn allreduce_call<'a, T: Copy>(
        &self,
        input: &'a [T],
        output: &'a mut [T],
        op: Result<Combiner<'a, T>>,
    ) -> Call<'a, T> {
        let (count, out) = (input.len(), output.len());
        let call = Call::new(Kind::Allreduce)
            .input(input)
            .output(output)
            .count(count);
        let mut call = Self::with_op(call, op);
        self.check_len(
            &mut call,
            "output",
            out,
            Some(count),
            "as long as the input",
        );
        call
    }

    fn gather_call<'a, T>(
        &self,
        kind: Kind,
        root: usize,
        input: &'a [T],
        output: &'a mut [T],
    ) -> Call<'a, T> {
        let (count, out) = (input.len(), output.len());
        let mut call = Call::new(kind)
            .input(input)
            .output(output)
            .root(root)
            .count(count);
        if kind == Kind::Gather {
            self.check_root(&mut call);
        }
        if kind == Kind::Allgather || root == self.rank {
            let expected = count.checked_mul(self.parties());
            self.check_len(
                &mut call,
                "output",
                out,
                expected,
                "the team's size times the input's length",
            );
        }
        call
    }

    fn scatter_call<'a, T>(&self, root: usize, input: &'a [T], output: &'a mut [T]) -> Call<'a, T> {
        let (len, count) = (input.len(), output.len());
        let mut call = Call::new(Kind::Scatter)
            .input(input)
            .output(output)
            .root(root)
            .count(count);
        self.check_root(&mut call);
        if root == self.rank {
            let expected = count.checked_mul(self.parties());
            self.check_len(
                &mut call,
                "root's input",
                len,
                expected,
                "the team's size times the output's length",
            );
        }
        call
    }

    fn alltoall_call<'a, T>(&self, input: &'a [T], output: &'a mut [T]) -> Call<'a, T> {
        let (count, out, size) = (input.len(), output.len(), self.parties());
        let mut call = Call::new(Kind::Alltoall)
            .input(input)
            .output(output)
            .count(count);
        self.require(&mut call, count % size == 0, || {
            format!("the input has {count} elements, not a multiple of the team's size {size} (one equal block per member)")
        });
        self.check_len(
            &mut call,
            "output",
            out,
            Some(count),
            "as long as the input",
        );
        call
    }

    fn scan_call<'a, T: Copy>(
        &self,
        kind: Kind,
        input: &'a [T],
        output: &'a mut [T],
        op: Result<Combiner<'a, T>>,
    ) -> Call<'a, T> {
        let (count, out) = (input.len(), output.len());
        let call = Call::new(kind).input(input).output(output).count(count);
        let mut call = Self::with_op(call, op);
        self.check_len(
            &mut call,
            "output",
            out,
            Some(count),
            "as long as the input",
        );
        call
    }

    // ----- blocking -----

    /// Waits until every member of the team has called `barrier`.
    ///
    /// # Errors
    ///
    /// [`Error::Broken`] when the team is broken; [`Error::Mismatch`] (checked teams, the default) when
    /// another member called a different collective.
    pub fn barrier(&mut self) -> Result<()> {
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
        let call = self.allreduce_call(input, output, Combiner::builtin(op));
        self.run(call)
    }

    /// [`allreduce`](Self::allreduce) with a function of your own (see [`reduce_with`](Self::reduce_with)).
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

    // ----- non-blocking -----

    /// Starts a [`barrier`](Self::barrier); see [`Pending`].
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
    /// # Errors
    ///
    /// As [`ibarrier`](Self::ibarrier).
    pub fn ireduce_with<'a, T: Copy + Send + 'static>(
        &'a mut self,
        root: usize,
        input: &'a [T],
        output: &'a mut [T],
        op: impl Fn(T, T) -> T + 'a,
    ) -> Result<Pending<'a, T>> {
        let call = self.reduce_call(root, input, output, Ok(Combiner::Owned(Box::new(op))));
        Pending::start(self, call)
    }

    /// Starts an [`allreduce`](Self::allreduce); see [`Pending`].
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
    /// # Errors
    ///
    /// As [`ibarrier`](Self::ibarrier).
    pub fn iallreduce_with<'a, T: Copy + Send + 'static>(
        &'a mut self,
        input: &'a [T],
        output: &'a mut [T],
        op: impl Fn(T, T) -> T + 'a,
    ) -> Result<Pending<'a, T>> {
        let call = self.allreduce_call(input, output, Ok(Combiner::Owned(Box::new(op))));
        Pending::start(self, call)
    }

    /// Starts a [`gather`](Self::gather); see [`Pending`].
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
    /// # Errors
    ///
    /// As [`ibarrier`](Self::ibarrier).
    pub fn iscan_inclusive_with<'a, T: Copy + Send + 'static>(
        &'a mut self,
        input: &'a [T],
        output: &'a mut [T],
        op: impl Fn(T, T) -> T + 'a,
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
    /// # Errors
    ///
    /// As [`ibarrier`](Self::ibarrier).
    pub fn iscan_exclusive_with<'a, T: Copy + Send + 'static>(
        &'a mut self,
        input: &'a [T],
        output: &'a mut [T],
        op: impl Fn(T, T) -> T + 'a,
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
