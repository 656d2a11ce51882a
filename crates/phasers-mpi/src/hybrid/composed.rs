//! The collectives composed of two others, blocking only: [`allgather`](HybridMember::allgather)
//! (gather to member 0, then broadcast from it), [`alltoall`](HybridMember::alltoall) (gather,
//! transpose at member 0, scatter) and the scans
//! [`scan_inclusive`](HybridMember::scan_inclusive) and
//! [`scan_exclusive`](HybridMember::scan_exclusive) (gather, prefixes at member 0, scatter).
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
use super::member::HybridMember;
use super::pending::Output;
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

    /// Step 1 of every composed call: a gather of `input` to member 0 into `target` (used on
    /// member 0 only), its signature naming the composed call `tag`, carrying `problem`, this
    /// member's own argument error. A call too large for MPI, which every member of a matching
    /// call finds alike (`Invalid::everywhere`), is reported before `problem`, so that every
    /// process leaves MPI out of it alike.
    fn gather_step<T: Copy + Send + 'static>(
        &mut self,
        tag: &'static str,
        input: &[T],
        target: &mut [T],
        problem: Option<Invalid>,
    ) -> Result<()> {
        let size = self.parties();
        let mut post = self.post::<T>(Kind::Gather, input.len(), ROOT);
        post.sig.op = tag;
        self.check_bytes(&mut post, size);
        if post.invalid.is_none() {
            post.invalid = problem;
        }
        if self.rank == ROOT && post.invalid.is_none() && target.len() != size * input.len() {
            // Unreachable: every caller sizes the root's target from the checked input.
            post.invalid = self.own_problem(tag, false, || {
                "the root's buffer for the first step has the wrong length".to_owned()
            });
        }
        let output = (self.rank == ROOT).then(|| Output::new(target, 0));
        self.start(post, Source::of(input), output)?.wait()
    }

    /// What a composed call returns when its step 1 failed with `error`: in an unchecked team
    /// of several processes, where the other processes may have gone through step 1, this
    /// process still takes part in step 2 (`step2`, with buffers of its own) when the error is
    /// one of the call's, not a broken team, so that the others never wait for it.
    fn after_failed_step(
        &mut self,
        error: Error,
        fits: bool,
        step2: impl FnOnce(&mut Self),
    ) -> Error {
        let own = matches!(
            error,
            Error::InvalidArgument { .. } | Error::Mismatch { .. }
        );
        // A call too large for MPI fails step 1 on every process without MPI: nobody waits.
        if own && fits && !self.is_checked() && self.processes() > 1 {
            step2(self);
        }
        error
    }

    /// This member's own error when `output` is not as long as `input`.
    fn output_as_long_as_input(&self, call: &str, input: usize, output: usize) -> Option<Invalid> {
        self.own_problem(call, output == input, || {
            format!("the output has {output} elements but must have {input} (as long as the input)")
        })
    }

    /// Step 1 of the calls that end in a scatter (alltoall, the scans): gathers every member's
    /// `input` into the blocks member 0 returns (empty elsewhere). On failure, in the cases
    /// [`after_failed_step`](Self::after_failed_step) names, this process still joins the
    /// scatter with buffers of its own, and the error is returned.
    fn gather_for_scatter<T: Copy + Send + 'static>(
        &mut self,
        tag: &'static str,
        input: &[T],
        problem: Option<Invalid>,
    ) -> Result<Vec<T>> {
        let size = self.parties();
        let fits = fits::<T>(input.len(), size);
        let at_root = self.rank == ROOT;
        let mut blocks = if at_root && problem.is_none() && fits {
            input.repeat(size)
        } else {
            Vec::new()
        };
        match self.gather_step(tag, input, &mut blocks, problem) {
            Ok(()) => Ok(blocks),
            Err(error) => Err(self.after_failed_step(error, fits, |me| {
                let whole = if at_root {
                    input.repeat(size)
                } else {
                    Vec::new()
                };
                let _ = me.scatter(ROOT, &whole, &mut input.to_vec());
            })),
        }
    }

    /// Concatenates every member's `input` (all of one length) in rank order into every
    /// member's `output`, which holds `parties() * input.len()` elements: [`phasers::Member`]'s
    /// allgather, across all members of all processes.
    ///
    /// Composed of a [`gather`](Self::gather) to member 0, into member 0's `output`, and a
    /// [`broadcast`](Self::broadcast) of it from member 0: it costs two collective steps, each a
    /// meeting of every process's members and a cross-process step, and member 0's process
    /// holds `parties() * input.len()` elements for the call. A checked team checks each
    /// step's arguments, as it checks a plain call's (so each step has its own envelope).
    /// Blocking only; the non-blocking form is not provided yet.
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
        let fits = fits::<T>(count, size);
        let step1 = if problem.is_none() {
            self.gather_step(CALL, input, output, None)
        } else {
            // The call fails; the root's output is left alone.
            self.gather_step(CALL, input, &mut [], problem)
        };
        if let Err(error) = step1 {
            return Err(self.after_failed_step(error, fits, |me| {
                let _ = me.broadcast(ROOT, &mut input.repeat(size));
            }));
        }
        self.broadcast(ROOT, output)
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
    /// (so each step has its own envelope). Blocking only; the non-blocking form is not
    /// provided yet.
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
        let mut blocks = self.gather_for_scatter(CALL, input, problem)?;
        if self.rank == ROOT {
            transpose_blocks(&mut blocks, size, len / size);
        }
        self.scatter(ROOT, &blocks, output)
    }

    /// Inclusive prefix: `output = input₀ op input₁ op … op input_rank`, element by element, in
    /// rank order over all members of all processes: [`phasers::Member`]'s scan_inclusive.
    /// `output` is as long as `input`.
    ///
    /// Composed of a [`gather`](Self::gather) of every input to member 0, the prefixes
    /// computed there in rank order, and a [`scatter`](Self::scatter) of them from member 0: it costs two collective steps, each a
    /// meeting of every process's members and a cross-process step, and member 0 allocates
    /// `parties() * input.len()` elements for the call. A checked team checks each step's
    /// arguments, as it checks a plain call's (so each step has its own envelope), and the
    /// op, which unchecked only member 0's counts. Blocking only; the non-blocking form is not
    /// provided yet.
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
        self.scan(false, input, output, op)
    }

    /// Exclusive prefix: `output = input₀ op … op input_(rank−1)`, element by element, in rank
    /// order over all members of all processes: [`phasers::Member`]'s scan_exclusive. Member 0
    /// has no prefix: its output is left as it was. `output` is as long as `input`.
    ///
    /// Composed as [`scan_inclusive`](Self::scan_inclusive) (a gather to member 0 and a
    /// scatter from it: two collective steps, and `parties() * input.len()` elements at member
    /// 0), with the same checks. Blocking only; the non-blocking form is not provided yet.
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
        self.scan(true, input, output, op)
    }

    fn scan<T: Element + Equivalence>(
        &mut self,
        exclusive: bool,
        input: &[T],
        output: &mut [T],
        op: Op<T>,
    ) -> Result<()> {
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
        let mut blocks = self.gather_for_scatter(scan_tag(exclusive, &op), input, problem)?;
        if self.rank == ROOT {
            inclusive_prefixes(&mut blocks, count, &op);
            if exclusive && count > 0 {
                // Member r gets the prefix through r - 1; member 0, this one, its own output.
                blocks.copy_within(..(size - 1) * count, count);
                blocks[..count].copy_from_slice(output);
            }
        }
        self.scatter(ROOT, &blocks, output)
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
