//! The collectives composed of two others, blocking and non-blocking:
//! [`allgather`](HybridMember::allgather)
//! (gather to member 0, then broadcast from it), [`alltoall`](HybridMember::alltoall) (gather,
//! transpose at member 0, scatter) and the scans
//! [`scan_inclusive`](HybridMember::scan_inclusive) and
//! [`scan_exclusive`](HybridMember::scan_exclusive) (gather, prefixes at member 0, scatter).
//!
//! Each is a non-blocking call first ([`iallgather`](HybridMember::iallgather), ...) whose
//! [`HybridPending`] handle chains the two steps: the gather starts at once; the poll that finds
//! it over reads member 0's blocks (at member 0), does member 0's work on them, and starts the
//! second step in its place (`SecondStep`); the outputs are written when that one is over. The
//! blocking forms wait for that handle.
//!
//! A composed call checks this member's own arguments before its first step, as the other
//! collectives do, and carries what it found into that step's post, so the step itself reports
//! it: every member of a checked team (or of a team of one process) returns the same
//! [`Error::InvalidArgument`] from step 1 and none starts step 2. The step's signature also
//! names the composed call in its op field (`Signature::op`), so that checked mode tells
//! an allgather from a plain gather, an inclusive scan from an exclusive one, and one op from
//! another.
//!
//! Unchecked, a process learns only of its own members' errors. A process whose step 1 failed
//! with its own error then still takes part in step 2, with buffers of its own, so that the
//! other processes, whose step 1 went through, never wait for it; what they receive from it is
//! unspecified, as for the other unchecked collectives.

use mpi::datatype::Equivalence;
use phasers::{Element, Op};

use super::bytes::Source;
use super::engine::Held;
use super::member::HybridMember;
use super::pending::{copy_out, HybridPending, Next, Output, Then};
use super::reducer::{is_bitwise, Builtin};
use super::signature::{Invalid, Kind, MPI_MAX_BYTES};
use crate::error::{Error, Result};

/// The member every composed call gathers to and sends from.
const ROOT: usize = 0;

/// The scans' tags: the op field of step 1's signature (see the module's docs); each fits the
/// op field of a checked call's detailed record (`wire::OP_BYTES`).
fn scan_tag<T>(exclusive: bool, op: &Op<T>) -> &'static str {
    macro_rules! tag {
        ($scan:literal) => {
            match op {
                Op::Sum => concat!($scan, " with Op::Sum"),
                Op::Product => concat!($scan, " with Op::Product"),
                Op::Min => concat!($scan, " with Op::Min"),
                Op::Max => concat!($scan, " with Op::Max"),
                Op::And => concat!($scan, " with Op::And"),
                Op::Or => concat!($scan, " with Op::Or"),
                Op::Xor => concat!($scan, " with Op::Xor"),
                Op::Custom { .. } => concat!($scan, " with Op::Custom"),
            }
        };
    }
    if exclusive {
        tag!("scan_exclusive")
    } else {
        tag!("scan_inclusive")
    }
}

/// `a op b` for every element type and op a reduction takes, in that order.
fn apply<T: Element>(op: &Op<T>, a: T, b: T) -> T {
    match (Builtin::of(op), op) {
        (Some(builtin), _) => builtin.apply(a, b),
        (None, Op::Custom { combine, .. }) => combine(a, b),
        // `Builtin::of` names every other op.
        (None, _) => a,
    }
}

/// Whether `parties` blocks of `len` elements of `T` fit one MPI call: the size every step of a
/// composed call checks (`check_bytes`), so the root allocates its buffer only then.
fn fits<T>(len: usize, parties: usize) -> bool {
    len.checked_mul(std::mem::size_of::<T>())
        .and_then(|bytes| bytes.checked_mul(parties))
        .is_some_and(|bytes| bytes <= MPI_MAX_BYTES)
}

/// Swaps block `(i, j)` with block `(j, i)` of a square matrix of `parties × parties` blocks of
/// `count` elements, stored by rows: row `i`, member `i`'s input, becomes column `i`.
fn transpose_blocks<T>(blocks: &mut [T], parties: usize, count: usize) {
    for i in 0..parties {
        for j in i + 1..parties {
            // (i, j) comes before (j, i) in storage, since i < j.
            let (a, b) = ((i * parties + j) * count, (j * parties + i) * count);
            let (low, high) = blocks.split_at_mut(b);
            low[a..a + count].swap_with_slice(&mut high[..count]);
        }
    }
}

/// Replaces block `r` of `blocks` (`count` elements each) with blocks `0..=r` combined with
/// `op` in rank order.
fn inclusive_prefixes<T: Element>(blocks: &mut [T], count: usize, op: &Op<T>) {
    if count == 0 {
        return;
    }
    for r in 1..blocks.len() / count {
        let (before, from_r) = blocks.split_at_mut(r * count);
        let previous = &before[(r - 1) * count..];
        for (x, p) in from_r[..count].iter_mut().zip(previous) {
            *x = apply(op, *p, *x);
        }
    }
}

/// Member 0's work on the gathered blocks before the second step, given its output as it was
/// (an exclusive scan keeps it).
type RootWork<T> = Box<dyn FnOnce(&mut [T], &[T]) + Send>;

/// A composed call's second step, kept by its handle until a poll finds the first step over.
struct SecondStep<'a, T> {
    /// [`Kind::Broadcast`] (allgather) or [`Kind::Scatter`] (the others), from member 0.
    kind: Kind,
    work: Option<RootWork<T>>,
    output: &'a mut [T],
    /// The input's length.
    count: usize,
    /// One input element, which member 0's buffer starts filled with before the gathered blocks
    /// are copied in (none for an empty input, whose buffer is empty).
    filler: Option<T>,
    /// Whether the call fits MPI ([`fits`]): when it does not, every process failed step 1
    /// without MPI, so none waits in step 2.
    fits: bool,
}

impl<'a, T: Copy + Send + 'static> Then<'a> for SecondStep<'a, T> {
    fn start(self: Box<Self>, member: &mut HybridMember, first: Result<Held>) -> Next<'a> {
        let SecondStep {
            kind,
            work,
            output,
            count,
            filler,
            fits,
        } = *self;
        let (size, at_root) = (member.parties(), member.rank == ROOT);
        let mut blocks = Vec::new();
        let gathered = first.and_then(|held| {
            if at_root {
                if let Some(filler) = filler {
                    blocks = vec![filler; size * count];
                }
                copy_out(&held, &mut blocks, 0)?;
            }
            // Dropping `held` departs from step 1.
            Ok(())
        });
        if let Err(error) = gathered {
            return member.join_second_step::<T>(kind, count, fits, error);
        }
        if let (true, Some(work)) = (at_root, work) {
            work(&mut blocks, output);
        }
        // As `ibroadcast` and `iscatter` post theirs; the lengths were checked in step 1.
        let mut post = member.post::<T>(kind, output.len(), ROOT);
        let (from, buffers) = match kind {
            Kind::Broadcast => (0, 1),
            _ => (member.local_rank * post.sig.block(), size),
        };
        member.check_bytes(&mut post, buffers);
        // Member 0 too takes its output from the step's result, which holds the whole buffer
        // (broadcast) or its process's blocks (scatter) in member 0's process.
        let output = Some(Output::new(output, from));
        match member.begin(post, Source::of(&blocks), output) {
            Ok(step) => Next::Second { step, error: None },
            Err(error) => Next::Over(Err(error)),
        }
    }
}

impl HybridMember {
    /// `Some` error for this member's own argument unless `holds`, worded as the other
    /// collectives word theirs.
    fn own_problem(
        &self,
        call: &str,
        holds: bool,
        message: impl FnOnce() -> String,
    ) -> Option<Invalid> {
        (!holds).then(|| Invalid {
            error: Error::invalid(format!("{call} on member {}: {}", self.rank, message())),
            everywhere: false,
        })
    }

    /// This member's own error when `output` is not as long as `input`.
    fn output_as_long_as_input(&self, call: &str, input: usize, output: usize) -> Option<Invalid> {
        self.own_problem(call, output == input, || {
            format!("the output has {output} elements but must have {input} (as long as the input)")
        })
    }

    /// Starts step 1 of every composed call: a gather of `input` to member 0, its signature
    /// naming the composed call `tag`, carrying `problem`, this member's own argument error;
    /// the handle starts `second` when the gather is over. A call too large for MPI, which
    /// every member of a matching call finds alike (`Invalid::everywhere`), is reported before
    /// `problem`, so that every process leaves MPI out of it alike.
    fn start_composed<'a, T: Copy + Send + 'static>(
        &'a mut self,
        tag: &'static str,
        input: &[T],
        problem: Option<Invalid>,
        second: SecondStep<'a, T>,
    ) -> Result<HybridPending<'a>> {
        let size = self.parties();
        let mut post = self.post::<T>(Kind::Gather, input.len(), ROOT);
        post.sig.op = tag;
        self.check_bytes(&mut post, size);
        if post.invalid.is_none() {
            post.invalid = problem;
        }
        // Member 0 reads the gathered blocks itself, when the step is over (`SecondStep`).
        let step = self.begin(post, Source::of(input), None)?;
        Ok(HybridPending::chained(self, step, Box::new(second)))
    }

    /// What a composed call does when its step 1 failed with `error`: in an unchecked team of
    /// several processes, where the other processes may have gone through step 1, this process
    /// still takes part in step 2 (a `kind` from member 0 for inputs of `count` elements, with
    /// zeros of its own and no output) when the error is one of the call's, not a broken team,
    /// so that the others never wait for it; the call's result is `error` either way.
    fn join_second_step<'a, T: Copy + Send + 'static>(
        &mut self,
        kind: Kind,
        count: usize,
        fits: bool,
        error: Error,
    ) -> Next<'a> {
        let own = matches!(
            error,
            Error::InvalidArgument { .. } | Error::Mismatch { .. }
        );
        // A call too large for MPI fails step 1 on every process without MPI: nobody waits.
        if !(own && fits && !self.is_checked() && self.processes() > 1) {
            return Next::Over(Err(error));
        }
        let whole = self.parties() * count;
        let len = if kind == Kind::Broadcast {
            whole
        } else {
            count
        };
        let post = self.post::<T>(kind, len, ROOT);
        let zeros = if self.rank == ROOT {
            vec![0u8; whole * std::mem::size_of::<T>()]
        } else {
            Vec::new()
        };
        match self.begin(post, Source::of(&zeros), None) {
            Ok(step) => Next::Second {
                step,
                error: Some(error),
            },
            // The team broke or timed out here: the call's own error still says what went
            // wrong first.
            Err(_) => Next::Over(Err(error)),
        }
    }

    /// Concatenates every member's `input` (all of one length) in rank order into every
    /// member's `output`, which holds `parties() * input.len()` elements: [`phasers::Member`]'s
    /// allgather, across all members of all processes.
    ///
    /// Composed of a [`gather`](Self::gather) to member 0 and a [`broadcast`](Self::broadcast)
    /// of the result from member 0: it costs two collective steps, each a meeting of every
    /// process's members and a cross-process step, and member 0's process holds
    /// `parties() * input.len()` elements for the call. A checked team checks each step's
    /// arguments, as it checks a plain call's (so each step has its own envelope). This waits
    /// for [`iallgather`](Self::iallgather), its non-blocking form.
    ///
    /// ```
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 3)?;
    /// let size = team.parties();
    /// std::thread::scope(|s| {
    ///     for mut member in team.participants() {
    ///         s.spawn(move || {
    ///             let rank = member.rank() as u32;
    ///             let mut all = vec![0u32; 2 * size];
    ///             member.allgather(&[rank, 10 * rank], &mut all).unwrap();
    ///             // Every member holds every member's input, in rank order.
    ///             let want: Vec<u32> = (0..size as u32).flat_map(|r| [r, 10 * r]).collect();
    ///             assert_eq!(all, want);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`broadcast`](Self::broadcast); also [`Error::InvalidArgument`] for an `output` of
    /// the wrong length. A member checks its own lengths before the first step and that step
    /// reports what it found, so no member starts the second step while another waits in the
    /// first: in a checked team, or one of a single process, every member returns the same
    /// error; unchecked, the members of the offending member's process do (the others finish,
    /// with that process's blocks unspecified). As for the other collectives, an input length
    /// that differs between members is [`Error::Mismatch`] in checked mode.
    pub fn allgather<T: Copy + Send + 'static>(
        &mut self,
        input: &[T],
        output: &mut [T],
    ) -> Result<()> {
        self.iallgather(input, output)?.wait()
    }

    /// Starts an [`allgather`](Self::allgather); see [`HybridPending`]. The gather to member 0
    /// starts now; the handle starts the broadcast when a poll finds the gather over, and
    /// writes `output` when the broadcast is over.
    ///
    /// ```
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 3)?;
    /// let size = team.parties();
    /// std::thread::scope(|s| {
    ///     for mut member in team.participants() {
    ///         s.spawn(move || {
    ///             let rank = [member.rank() as u32];
    ///             let mut all = vec![0u32; size];
    ///             // The handle borrows the input and the output until it is over.
    ///             let mut pending = member.iallgather(&rank, &mut all).unwrap();
    ///             while !pending.test().unwrap() {
    ///                 std::thread::yield_now(); // or work that does not need `all`
    ///             }
    ///             drop(pending);
    ///             assert_eq!(all, (0..size as u32).collect::<Vec<_>>());
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Broken`] or [`Error::Timeout`] as [`ibarrier`](Self::ibarrier); the call's
    /// own errors, those of [`allgather`](Self::allgather), come from [`HybridPending::test`]
    /// and [`HybridPending::wait`].
    pub fn iallgather<'a, T: Copy + Send + 'static>(
        &'a mut self,
        input: &'a [T],
        output: &'a mut [T],
    ) -> Result<HybridPending<'a>> {
        const CALL: &str = "allgather";
        let (count, size) = (input.len(), self.parties());
        let expected = count.checked_mul(size);
        let problem = self.own_problem(CALL, expected == Some(output.len()), || match expected {
            Some(expected) => format!(
                "the output has {} elements but must have {expected} (the team's size times the \
                 input's length)",
                output.len()
            ),
            None => "the output would need more elements than memory can hold (the team's size \
                     times the input's length)"
                .to_owned(),
        });
        let second = SecondStep {
            kind: Kind::Broadcast,
            work: None,
            output,
            count,
            filler: input.first().copied(),
            fits: fits::<T>(count, size),
        };
        self.start_composed(CALL, input, problem, second)
    }

    /// The transpose: `input` and `output` hold one block of `count` elements per member
    /// (`parties() * count` each); block `r` of member `i`'s input becomes block `i` of member
    /// `r`'s output: [`phasers::Member`]'s alltoall, across all members of all processes.
    ///
    /// Composed of a [`gather`](Self::gather) of every input to member 0, a transpose there,
    /// and a [`scatter`](Self::scatter) from member 0: it costs two collective steps, each a
    /// meeting of every process's members and a cross-process step, and member 0 allocates
    /// `parties()² * count` elements for the call (every block passes through it, so it suits
    /// small blocks). A checked team checks each step's arguments, as it checks a plain call's
    /// (so each step has its own envelope). This waits for [`ialltoall`](Self::ialltoall), its
    /// non-blocking form.
    ///
    /// ```
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 3)?;
    /// let size = team.parties() as u32;
    /// std::thread::scope(|s| {
    ///     for mut member in team.participants() {
    ///         s.spawn(move || {
    ///             let r = member.rank() as u32;
    ///             // One element per block: element j goes to member j.
    ///             let input: Vec<u32> = (0..size).map(|j| 100 * r + j).collect();
    ///             let mut output = vec![0u32; size as usize];
    ///             member.alltoall(&input, &mut output).unwrap();
    ///             // Element i came from member i.
    ///             assert_eq!(output, (0..size).map(|i| 100 * i + r).collect::<Vec<_>>());
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`allgather`](Self::allgather); [`Error::InvalidArgument`] for an input whose length
    /// is not a multiple of `parties()` or an output not as long as the input.
    pub fn alltoall<T: Copy + Send + 'static>(
        &mut self,
        input: &[T],
        output: &mut [T],
    ) -> Result<()> {
        self.ialltoall(input, output)?.wait()
    }

    /// Starts an [`alltoall`](Self::alltoall); see [`HybridPending`]. The gather to member 0
    /// starts now; when a poll finds it over, member 0's handle transposes the blocks and the
    /// handles start the scatter; `output` is written when the scatter is over.
    ///
    /// ```
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 2)?;
    /// let size = team.parties() as u32;
    /// std::thread::scope(|s| {
    ///     for mut member in team.participants() {
    ///         s.spawn(move || {
    ///             let r = member.rank() as u32;
    ///             let input: Vec<u32> = (0..size).map(|j| 10 * r + j).collect();
    ///             let mut output = vec![0u32; size as usize];
    ///             member.ialltoall(&input, &mut output).unwrap().wait().unwrap();
    ///             assert_eq!(output, (0..size).map(|i| 10 * i + r).collect::<Vec<_>>());
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`iallgather`](Self::iallgather); the call's own errors are
    /// [`alltoall`](Self::alltoall)'s.
    pub fn ialltoall<'a, T: Copy + Send + 'static>(
        &'a mut self,
        input: &'a [T],
        output: &'a mut [T],
    ) -> Result<HybridPending<'a>> {
        const CALL: &str = "alltoall";
        let (len, size) = (input.len(), self.parties());
        let problem = self
            .own_problem(CALL, len % size == 0, || {
                format!(
                    "the input has {len} elements, not a multiple of the team's size {size} (one \
                     equal block per member)"
                )
            })
            .or_else(|| self.output_as_long_as_input(CALL, len, output.len()));
        let second = SecondStep {
            kind: Kind::Scatter,
            work: Some(Box::new(move |blocks: &mut [T], _: &[T]| {
                transpose_blocks(blocks, size, len / size);
            })),
            output,
            count: len,
            filler: input.first().copied(),
            fits: fits::<T>(len, size),
        };
        self.start_composed(CALL, input, problem, second)
    }

    /// Inclusive prefix: `output = input₀ op input₁ op … op input_rank`, element by element, in
    /// rank order over all members of all processes: [`phasers::Member`]'s scan_inclusive.
    /// `output` is as long as `input`.
    ///
    /// Composed of a [`gather`](Self::gather) of every input to member 0, the prefixes
    /// computed there in rank order, and a [`scatter`](Self::scatter) of them from member 0: it
    /// costs two collective steps, each a meeting of every process's members and a
    /// cross-process step, and member 0 allocates `parties() * input.len()` elements for the
    /// call. A checked team checks each step's arguments, as it checks a plain call's (so each
    /// step has its own envelope), and the op, which unchecked only member 0's counts. This
    /// waits for [`iscan_inclusive`](Self::iscan_inclusive), its non-blocking form.
    ///
    /// ```
    /// use phasers::Op;
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 3)?;
    /// std::thread::scope(|s| {
    ///     for mut member in team.participants() {
    ///         s.spawn(move || {
    ///             let r = member.rank() as u64 + 1;
    ///             let mut prefix = [0u64];
    ///             member.scan_inclusive(&[r], &mut prefix, Op::Sum).unwrap();
    ///             assert_eq!(prefix, [r * (r + 1) / 2]); // 1 + 2 + ... + r
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`allgather`](Self::allgather); [`Error::InvalidArgument`] for an output not as long
    /// as the input or a bitwise op on floating-point numbers (every member), and
    /// [`Error::Mismatch`] for different ops or scans (checked mode).
    pub fn scan_inclusive<T: Element + Equivalence>(
        &mut self,
        input: &[T],
        output: &mut [T],
        op: Op<T>,
    ) -> Result<()> {
        self.iscan_inclusive(input, output, op)?.wait()
    }

    /// Starts a [`scan_inclusive`](Self::scan_inclusive); see [`HybridPending`]. The gather to
    /// member 0 starts now; when a poll finds it over, member 0's handle computes the prefixes
    /// and the handles start the scatter; `output` is written when the scatter is over.
    ///
    /// ```
    /// use phasers::Op;
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 3)?;
    /// std::thread::scope(|s| {
    ///     for mut member in team.participants() {
    ///         s.spawn(move || {
    ///             let r = member.rank() as u64 + 1;
    ///             let (input, mut prefix) = ([r], [0u64]);
    ///             let pending = member.iscan_inclusive(&input, &mut prefix, Op::Sum).unwrap();
    ///             pending.wait().unwrap();
    ///             assert_eq!(prefix, [r * (r + 1) / 2]); // 1 + 2 + ... + r
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`iallgather`](Self::iallgather); the call's own errors are
    /// [`scan_inclusive`](Self::scan_inclusive)'s.
    pub fn iscan_inclusive<'a, T: Element + Equivalence>(
        &'a mut self,
        input: &'a [T],
        output: &'a mut [T],
        op: Op<T>,
    ) -> Result<HybridPending<'a>> {
        self.iscan(false, input, output, op)
    }

    /// Exclusive prefix: `output = input₀ op … op input_(rank−1)`, element by element, in rank
    /// order over all members of all processes: [`phasers::Member`]'s scan_exclusive. Member 0
    /// has no prefix: its output is left as it was. `output` is as long as `input`.
    ///
    /// Composed as [`scan_inclusive`](Self::scan_inclusive) (a gather to member 0 and a
    /// scatter from it: two collective steps, and `parties() * input.len()` elements at member
    /// 0), with the same checks. This waits for [`iscan_exclusive`](Self::iscan_exclusive), its
    /// non-blocking form.
    ///
    /// ```
    /// use phasers::Op;
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 3)?;
    /// std::thread::scope(|s| {
    ///     for mut member in team.participants() {
    ///         s.spawn(move || {
    ///             let r = member.rank() as i64;
    ///             let mut before = [-1i64];
    ///             member.scan_exclusive(&[r + 1], &mut before, Op::Sum).unwrap();
    ///             // 1 + 2 + ... + r; member 0's output is left as it was.
    ///             assert_eq!(before, [if r == 0 { -1 } else { r * (r + 1) / 2 }]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`scan_inclusive`](Self::scan_inclusive).
    pub fn scan_exclusive<T: Element + Equivalence>(
        &mut self,
        input: &[T],
        output: &mut [T],
        op: Op<T>,
    ) -> Result<()> {
        self.iscan_exclusive(input, output, op)?.wait()
    }

    /// Starts a [`scan_exclusive`](Self::scan_exclusive); see [`HybridPending`], and
    /// [`iscan_inclusive`](Self::iscan_inclusive) for its steps.
    ///
    /// ```
    /// use phasers::Op;
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 3)?;
    /// std::thread::scope(|s| {
    ///     for mut member in team.participants() {
    ///         s.spawn(move || {
    ///             let r = member.rank() as u32;
    ///             let (bit, mut before) = ([1u32 << r], [u32::MAX]);
    ///             let mut pending = member.iscan_exclusive(&bit, &mut before, Op::Or).unwrap();
    ///             while !pending.test().unwrap() {
    ///                 std::thread::yield_now(); // or work that does not need `before`
    ///             }
    ///             drop(pending);
    ///             // The bits of every member before this one; member 0's output as it was.
    ///             assert_eq!(before, [if r == 0 { u32::MAX } else { (1 << r) - 1 }]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`iscan_inclusive`](Self::iscan_inclusive).
    pub fn iscan_exclusive<'a, T: Element + Equivalence>(
        &'a mut self,
        input: &'a [T],
        output: &'a mut [T],
        op: Op<T>,
    ) -> Result<HybridPending<'a>> {
        self.iscan(true, input, output, op)
    }

    fn iscan<'a, T: Element + Equivalence>(
        &'a mut self,
        exclusive: bool,
        input: &'a [T],
        output: &'a mut [T],
        op: Op<T>,
    ) -> Result<HybridPending<'a>> {
        let call = if exclusive {
            "scan_exclusive"
        } else {
            "scan_inclusive"
        };
        let (count, size) = (input.len(), self.parties());
        // A bitwise op on floats is every member's error alike (`everywhere`), as in `with_op`.
        let problem = (is_bitwise(&op) && !T::INTEGER)
            .then(|| Invalid {
                error: Error::invalid(format!(
                    "{call} on member {}: Op::{} is a bitwise operator and applies to integers \
                     only, not {}; use Sum, Product, Min, Max or Op::custom",
                    self.rank,
                    op.name(),
                    std::any::type_name::<T>()
                )),
                everywhere: true,
            })
            .or_else(|| self.output_as_long_as_input(call, count, output.len()));
        let tag = scan_tag(exclusive, &op);
        // Member 0's work, run by its handle once the blocks are gathered.
        let prefixes = move |blocks: &mut [T], own: &[T]| {
            inclusive_prefixes(blocks, count, &op);
            if exclusive && count > 0 {
                // Member r gets the prefix through r - 1; member 0, this one, its own output.
                blocks.copy_within(..(size - 1) * count, count);
                blocks[..count].copy_from_slice(own);
            }
        };
        let second = SecondStep {
            kind: Kind::Scatter,
            work: Some(Box::new(prefixes)),
            output,
            count,
            filler: input.first().copied(),
            fits: fits::<T>(count, size),
        };
        self.start_composed(tag, input, problem, second)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::hybrid::signature::describe_call;
    use crate::hybrid::wire::OP_BYTES;

    #[test]
    fn tags_fit_a_detailed_record() {
        let custom = Op::Custom {
            identity: 0u64,
            combine: Arc::new(|a: u64, b: u64| a + b),
        };
        for op in [
            Op::Sum,
            Op::Product,
            Op::Min,
            Op::Max,
            Op::And,
            Op::Or,
            Op::Xor,
            custom,
        ] {
            for exclusive in [false, true] {
                let tag = scan_tag(exclusive, &op);
                assert!(tag.len() <= OP_BYTES, "{tag}");
                assert!(tag.ends_with(op.name()), "{tag}");
            }
        }
        assert_eq!(
            scan_tag(true, &Op::<u64>::Product),
            "scan_exclusive with Op::Product"
        );
        // A mismatch names the composed call behind a step.
        assert_eq!(
            describe_call(Kind::Gather, "u64", 2, 0, "allgather"),
            "gather of 2 u64 elements to root 0, step 1 of allgather"
        );
    }

    #[test]
    fn transpose_swaps_blocks_across_the_diagonal() {
        // 3 members, blocks of 2: element (i, j, k) is 100 i + 10 j + k.
        let (parties, count) = (3, 2);
        let mut blocks: Vec<u32> = (0..parties)
            .flat_map(|i| {
                (0..parties).flat_map(move |j| (0..count).map(move |k| 100 * i + 10 * j + k))
            })
            .map(|v| v as u32)
            .collect();
        transpose_blocks(&mut blocks, parties, count);
        let want: Vec<u32> = (0..parties)
            .flat_map(|j| {
                (0..parties).flat_map(move |i| (0..count).map(move |k| 100 * i + 10 * j + k))
            })
            .map(|v| v as u32)
            .collect();
        assert_eq!(blocks, want);
    }

    #[test]
    fn prefixes_combine_in_rank_order() {
        let mut blocks = [1i64, 10, 2, 20, 3, 30];
        inclusive_prefixes(&mut blocks, 2, &Op::Sum);
        assert_eq!(blocks, [1, 10, 3, 30, 6, 60]);
        // A custom op that is not commutative: each prefix keeps the rank order.
        let first = Op::Custom {
            identity: 0u64,
            combine: Arc::new(|a: u64, b: u64| a * 10 + b),
        };
        let mut digits = [1u64, 2, 3];
        inclusive_prefixes(&mut digits, 1, &first);
        assert_eq!(digits, [1, 12, 123]);
        let mut empty: [u64; 0] = [];
        inclusive_prefixes(&mut empty, 0, &Op::Sum);
    }
}
