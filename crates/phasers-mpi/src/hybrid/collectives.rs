//! A member's collectives, blocking and non-blocking.
//!
//! Every method checks this member's own arguments first. A bad argument does not return at
//! once (the others would wait for this member for ever): it is recorded in the post, the call
//! goes ahead, and the members return the error.

use std::time::Instant;

use mpi::datatype::Equivalence;
use phasers::{Element, Op};

use super::bytes::{Bytes, Source};
use super::engine;
use super::member::HybridMember;
use super::pending::{HybridPending, Output, Step};
use super::reducer::is_bitwise;
use super::signature::{Invalid, Kind, Post, Signature, MPI_MAX_BYTES};
use crate::error::{Error, Result};

impl HybridMember {
    // ----- building posts -----

    pub(super) fn post<T: 'static>(&self, kind: Kind, len: usize, root: usize) -> Post {
        Post {
            sig: Signature::new::<T>(kind, len, root),
            invalid: None,
            input: Bytes::default(),
            reducer: None,
        }
    }

    /// Records `message` as this member's error unless `holds`; the first one is kept.
    fn require(
        &self,
        post: &mut Post,
        holds: bool,
        everywhere: bool,
        message: impl FnOnce() -> String,
    ) {
        if !holds && post.invalid.is_none() {
            post.invalid = Some(Invalid {
                error: Error::invalid(format!(
                    "{} on member {}: {}",
                    post.sig.kind.name(),
                    self.rank,
                    message()
                )),
                everywhere,
            });
        }
    }

    fn check_root(&self, post: &mut Post) {
        let (root, size) = (post.sig.root, self.parties());
        self.require(post, root < size, true, || {
            format!(
                "root {root} is out of range; this team has members 0 to {}",
                size - 1
            )
        });
    }

    /// `len == expected`, where `expected` is `count` or `size * count`.
    fn check_len(&self, post: &mut Post, what: &str, len: usize, expected: usize, rule: &str) {
        self.require(post, len == expected, false, || {
            format!("the {what} has {len} elements but must have {expected} ({rule})")
        });
    }

    /// The call's largest buffer must fit one MPI call.
    pub(super) fn check_bytes(&self, post: &mut Post, members: usize) {
        let bytes = post.sig.block().checked_mul(members);
        self.require(
            post,
            bytes.is_some_and(|b| b <= MPI_MAX_BYTES),
            true,
            || {
                format!(
                    "the call moves more than {MPI_MAX_BYTES} bytes in one buffer, more than MPI \
                 takes in one call; split it into smaller calls"
                )
            },
        );
    }

    fn with_op<T: Element + Equivalence>(&mut self, post: &mut Post, op: Op<T>) {
        post.sig.op = op.name();
        self.require(post, !is_bitwise(&op) || T::INTEGER, true, || {
            format!(
                "Op::{} is a bitwise operator and applies to integers only, not {}; use Sum, \
                 Product, Min, Max or Op::custom",
                op.name(),
                std::any::type_name::<T>()
            )
        });
        post.reducer = Some(self.reducers.of(op));
    }

    /// Starts a call with `post`, whose input is copied from `source` into the call's slot.
    pub(super) fn start<'a>(
        &'a mut self,
        post: Post,
        source: Source<'_>,
        output: Option<Output<'a>>,
    ) -> Result<HybridPending<'a>> {
        let step = self.begin(post, source, output)?;
        Ok(HybridPending::new(self, step))
    }

    /// As [`start`](Self::start), without the handle: the step a handle then waits for (a
    /// composed call's handle starts its second step with this).
    pub(super) fn begin<'o>(
        &mut self,
        post: Post,
        source: Source<'_>,
        output: Option<Output<'o>>,
    ) -> Result<Step<'o>> {
        let shared = &self.shared;
        if shared.is_broken() {
            return Err(shared.broken_error());
        }
        let call = self.next_call;
        let kind = post.sig.kind;
        let deadline = shared
            .options
            .timeout
            .and_then(|t| Instant::now().checked_add(t));
        let counted = self.direct.reposted.take() == Some(call);
        engine::arrive(
            shared,
            self.local_rank,
            call,
            post,
            source,
            deadline,
            counted,
        )?;
        self.next_call += 1;
        Ok(Step {
            kind,
            call,
            deadline,
            output,
        })
    }

    // ----- non-blocking -----

    /// Starts a [`barrier`](Self::barrier); see [`HybridPending`].
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 2)?;
    /// let arrived = &AtomicUsize::new(0);
    /// std::thread::scope(|s| {
    ///     for mut member in team.participants() {
    ///         s.spawn(move || {
    ///             arrived.fetch_add(1, Relaxed);
    ///             let pending = member.ibarrier().unwrap();
    ///             // ... work that does not need the others ...
    ///             pending.wait().unwrap();
    ///             // Every member of this process arrived before any left.
    ///             assert_eq!(arrived.load(Relaxed), member.local_size());
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Broken`] when the team is broken, [`Error::Timeout`] when the team's timeout
    /// passed while this member waited for its process's members to finish the call before
    /// last. The call's own errors come from [`HybridPending::test`] and
    /// [`HybridPending::wait`], as for every `i`-method.
    pub fn ibarrier(&mut self) -> Result<HybridPending<'_>> {
        let post = self.post::<()>(Kind::Barrier, 0, 0);
        self.start(post, Source::none(), None)
    }

    /// Starts a [`broadcast`](Self::broadcast); see [`HybridPending`].
    ///
    /// ```
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 2)?;
    /// std::thread::scope(|s| {
    ///     for mut member in team.participants() {
    ///         s.spawn(move || {
    ///             let mut word = [if member.rank() == 0 { 42u64 } else { 0 }];
    ///             let mut pending = member.ibroadcast(0, &mut word).unwrap();
    ///             while !pending.test().unwrap() {
    ///                 std::thread::yield_now(); // or work that does not need `word`
    ///             }
    ///             drop(pending);
    ///             assert_eq!(word, [42]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`ibarrier`](Self::ibarrier).
    pub fn ibroadcast<'a, T: Copy + Send + 'static>(
        &'a mut self,
        root: usize,
        buffer: &'a mut [T],
    ) -> Result<HybridPending<'a>> {
        let mut post = self.post::<T>(Kind::Broadcast, buffer.len(), root);
        self.check_root(&mut post);
        self.check_bytes(&mut post, 1);
        if root == self.rank {
            self.start(post, Source::of(buffer), None)
        } else {
            self.start(post, Source::none(), Some(Output::new(buffer, 0)))
        }
    }

    /// Starts a [`reduce`](Self::reduce); see [`HybridPending`].
    ///
    /// ```
    /// use phasers::Op;
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 2)?;
    /// let size = team.parties() as u64;
    /// std::thread::scope(|s| {
    ///     for mut member in team.participants() {
    ///         s.spawn(move || {
    ///             let rank = member.rank() as u64;
    ///             let mut max = [0u64];
    ///             member.ireduce(0, &[rank], &mut max, Op::Max).unwrap().wait().unwrap();
    ///             if rank == 0 {
    ///                 assert_eq!(max, [size - 1]);
    ///             }
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`ibarrier`](Self::ibarrier).
    pub fn ireduce<'a, T: Element + Equivalence>(
        &'a mut self,
        root: usize,
        input: &'a [T],
        output: &'a mut [T],
        op: Op<T>,
    ) -> Result<HybridPending<'a>> {
        let mut post = self.post::<T>(Kind::Reduce, input.len(), root);
        self.with_op(&mut post, op);
        self.check_root(&mut post);
        self.check_bytes(&mut post, 1);
        let output = if root == self.rank {
            self.check_len(
                &mut post,
                "root's output",
                output.len(),
                input.len(),
                "as long as the input",
            );
            Some(Output::new(output, 0))
        } else {
            None
        };
        self.start(post, Source::of(input), output)
    }

    /// Starts an [`allreduce`](Self::allreduce); see [`HybridPending`].
    ///
    /// ```
    /// use phasers::Op;
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 2)?;
    /// let size = team.parties() as i64;
    /// std::thread::scope(|s| {
    ///     for mut member in team.participants() {
    ///         s.spawn(move || {
    ///             let input = [member.rank() as i64, 1];
    ///             let mut output = [0i64; 2];
    ///             let pending = member.iallreduce(&input, &mut output, Op::Sum).unwrap();
    ///             pending.wait().unwrap();
    ///             assert_eq!(output, [size * (size - 1) / 2, size]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`ibarrier`](Self::ibarrier).
    pub fn iallreduce<'a, T: Element + Equivalence>(
        &'a mut self,
        input: &'a [T],
        output: &'a mut [T],
        op: Op<T>,
    ) -> Result<HybridPending<'a>> {
        let mut post = self.post::<T>(Kind::Allreduce, input.len(), 0);
        self.with_op(&mut post, op);
        self.check_bytes(&mut post, 1);
        self.check_len(
            &mut post,
            "output",
            output.len(),
            input.len(),
            "as long as the input",
        );
        self.start(post, Source::of(input), Some(Output::new(output, 0)))
    }

    /// Starts a [`gather`](Self::gather); see [`HybridPending`].
    ///
    /// ```
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 2)?;
    /// let size = team.parties();
    /// std::thread::scope(|s| {
    ///     for mut member in team.participants() {
    ///         s.spawn(move || {
    ///             let mut all = vec![0u8; size];
    ///             let rank = member.rank() as u8;
    ///             member.igather(1, &[rank], &mut all).unwrap().wait().unwrap();
    ///             if rank == 1 {
    ///                 assert_eq!(all, (0..size as u8).collect::<Vec<_>>());
    ///             }
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers_mpi::Error>(())
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
    ) -> Result<HybridPending<'a>> {
        let size = self.parties();
        let mut post = self.post::<T>(Kind::Gather, input.len(), root);
        self.check_root(&mut post);
        self.check_bytes(&mut post, size);
        let output = if root == self.rank {
            let expected = input.len().saturating_mul(size);
            self.check_len(
                &mut post,
                "root's output",
                output.len(),
                expected,
                "the team's size times the input's length",
            );
            Some(Output::new(output, 0))
        } else {
            None
        };
        self.start(post, Source::of(input), output)
    }

    /// Starts a [`scatter`](Self::scatter); see [`HybridPending`].
    ///
    /// ```
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 2)?;
    /// let size = team.parties();
    /// std::thread::scope(|s| {
    ///     for mut member in team.participants() {
    ///         s.spawn(move || {
    ///             let blocks: Vec<u32> = (0..size as u32).map(|r| r * 100).collect();
    ///             let mut mine = [0u32];
    ///             member.iscatter(0, &blocks, &mut mine).unwrap().wait().unwrap();
    ///             assert_eq!(mine, [member.rank() as u32 * 100]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers_mpi::Error>(())
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
    ) -> Result<HybridPending<'a>> {
        let size = self.parties();
        let count = output.len();
        let mut post = self.post::<T>(Kind::Scatter, count, root);
        self.check_root(&mut post);
        self.check_bytes(&mut post, size);
        if root == self.rank {
            let expected = count.saturating_mul(size);
            self.check_len(
                &mut post,
                "root's input",
                input.len(),
                expected,
                "the team's size times the output's length",
            );
        }
        let source = if root == self.rank {
            Source::of(input)
        } else {
            Source::none()
        };
        let from = self.local_rank * post.sig.block();
        self.start(post, source, Some(Output::new(output, from)))
    }

    // ----- blocking -----

    /// Waits until every member of the team, in every process, has called `barrier`.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 4)?;
    /// let arrived = &AtomicUsize::new(0);
    /// std::thread::scope(|s| {
    ///     for mut member in team.participants() {
    ///         s.spawn(move || {
    ///             arrived.fetch_add(1, Relaxed);
    ///             member.barrier().unwrap();
    ///             assert_eq!(arrived.load(Relaxed), 4);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Broken`] when the team is broken in this process (a member dropped or
    /// panicked, an earlier timeout); [`Error::Timeout`] when the team's timeout passed (the
    /// team is then broken); [`Error::Mismatch`] in checked mode when another member, in any
    /// process, called a different collective.
    pub fn barrier(&mut self) -> Result<()> {
        if let Some(result) = self.direct_barrier() {
            return result;
        }
        self.ibarrier()?.wait()
    }

    /// Copies the root's `buffer` into every other member's `buffer`. Every member passes a
    /// buffer of the same length.
    ///
    /// ```
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 2)?;
    /// std::thread::scope(|s| {
    ///     for mut member in team.participants() {
    ///         s.spawn(move || {
    ///             let mut word = [if member.rank() == 1 { 42u64 } else { 0 }];
    ///             member.broadcast(1, &mut word).unwrap();
    ///             assert_eq!(word, [42]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`barrier`](Self::barrier); also [`Error::InvalidArgument`] for a root out of range
    /// (every member), and [`Error::Mismatch`] when lengths, roots, element types or
    /// collectives differ (every member of every process in checked mode; unchecked, only
    /// differences among the members of one process are found).
    pub fn broadcast<T: Copy + Send + 'static>(
        &mut self,
        root: usize,
        buffer: &mut [T],
    ) -> Result<()> {
        if let Some(result) = self.direct_broadcast(root, buffer) {
            return result;
        }
        self.ibroadcast(root, buffer)?.wait()
    }

    /// Combines every member's `input` element by element with `op` into the root's `output`
    /// (as long as the input). Other members' outputs are not written; they may pass `&mut []`.
    ///
    /// Each process first combines its members' inputs in local rank order; built-in ops then
    /// go to MPI's own operation (`MPI_SUM`, ...) across processes, whose order MPI chooses
    /// (on the direct path of [`allreduce`](Self::allreduce), which a blocking reduce takes
    /// too, the order its exchange and reduction group choose);
    /// [`Op::Custom`] is combined in Rust, in process order, so its result is the rank-order
    /// combination `((m0 op m1) op (m2 op m3))...` grouped by process.
    ///
    /// # Errors
    ///
    /// As [`broadcast`](Self::broadcast); also [`Error::InvalidArgument`] for a bitwise op on
    /// floating-point numbers or a root output of the wrong length, and [`Error::Mismatch`] for
    /// different operators (checked mode).
    ///
    /// # Examples
    ///
    /// ```
    /// use phasers::Op;
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 2)?;
    /// let size = team.parties() as u64;
    /// std::thread::scope(|s| {
    ///     for mut member in team.participants() {
    ///         s.spawn(move || {
    ///             let rank = member.rank() as u64;
    ///             // Only the root's output is written; the others pass an empty one.
    ///             let mut sum = vec![0u64; if rank == 1 { 1 } else { 0 }];
    ///             member.reduce(1, &[rank], &mut sum, Op::Sum).unwrap();
    ///             if rank == 1 {
    ///                 assert_eq!(sum, [size * (size - 1) / 2]);
    ///             }
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn reduce<T: Element + Equivalence>(
        &mut self,
        root: usize,
        input: &[T],
        output: &mut [T],
        op: Op<T>,
    ) -> Result<()> {
        if let Some(result) = self.direct_reduction(Some(root), input, output, &op) {
            return result;
        }
        self.ireduce(root, input, output, op)?.wait()
    }

    /// Combines every member's `input` element by element with `op` into every member's
    /// `output` (as long as the input); see [`reduce`](Self::reduce) for the order.
    ///
    /// A process's members meet in shared memory; the last to arrive combines their inputs and
    /// starts one `MPI_Iallreduce` (node-aware: a reduction to each node's leader, an
    /// allreduce among the leaders, a broadcast back, where the team spans several nodes with
    /// several processes each); whichever member polls advances it. With a built-in op, on a
    /// team that no process built with a timeout and that is unchecked or has one process, on
    /// one node, the call takes the direct path instead: no allocation once warm, the inputs
    /// combined in place (by seed 003's reduction group for large arrays), and one exchange of
    /// point-to-point messages between processes (none with one process); the order across
    /// processes is then recursive doubling's (or halving's), lower process first, and large
    /// float arrays may combine in arrival order within a process.
    ///
    /// ```
    /// use phasers::Op;
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 2)?;
    /// let size = team.parties() as u64;
    /// std::thread::scope(|s| {
    ///     for mut member in team.participants() {
    ///         s.spawn(move || {
    ///             let mut sum = [0u64];
    ///             member.allreduce(&[member.rank() as u64], &mut sum, Op::Sum).unwrap();
    ///             assert_eq!(sum[0], size * (size - 1) / 2);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`reduce`](Self::reduce).
    pub fn allreduce<T: Element + Equivalence>(
        &mut self,
        input: &[T],
        output: &mut [T],
        op: Op<T>,
    ) -> Result<()> {
        if let Some(result) = self.direct_reduction(None, input, output, &op) {
            return result;
        }
        self.iallreduce(input, output, op)?.wait()
    }

    /// Concatenates every member's `input` (all of one length) in rank order into the root's
    /// `output`, which holds `parties() * input.len()` elements. Others may pass `&mut []`.
    ///
    /// # Errors
    ///
    /// As [`broadcast`](Self::broadcast); also [`Error::InvalidArgument`] for a root output of
    /// the wrong length.
    ///
    /// # Examples
    ///
    /// ```
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 2)?;
    /// let size = team.parties();
    /// std::thread::scope(|s| {
    ///     for mut member in team.participants() {
    ///         s.spawn(move || {
    ///             let rank = member.rank();
    ///             let mut all = vec![0usize; if rank == 0 { 2 * size } else { 0 }];
    ///             member.gather(0, &[rank, 10 * rank], &mut all).unwrap();
    ///             if rank == 0 {
    ///                 assert_eq!(&all[..4], [0, 0, 1, 10]);
    ///             }
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn gather<T: Copy + Send + 'static>(
        &mut self,
        root: usize,
        input: &[T],
        output: &mut [T],
    ) -> Result<()> {
        self.igather(root, input, output)?.wait()
    }

    /// Hands block `r` of the root's `input` (`parties() * output.len()` elements) to member `r`'s
    /// `output`. Others may pass `&[]` as input.
    ///
    /// # Errors
    ///
    /// As [`broadcast`](Self::broadcast); also [`Error::InvalidArgument`] for a root input of
    /// the wrong length.
    ///
    /// # Examples
    ///
    /// ```
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 2)?;
    /// let size = team.parties();
    /// std::thread::scope(|s| {
    ///     for mut member in team.participants() {
    ///         s.spawn(move || {
    ///             let rank = member.rank();
    ///             // The root's input holds one block of 2 per member; the others pass none.
    ///             let blocks = if rank == 0 { 2 * size } else { 0 };
    ///             let input: Vec<usize> = (0..blocks).collect();
    ///             let mut block = [0usize; 2];
    ///             member.scatter(0, &input, &mut block).unwrap();
    ///             assert_eq!(block, [2 * rank, 2 * rank + 1]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn scatter<T: Copy + Send + 'static>(
        &mut self,
        root: usize,
        input: &[T],
        output: &mut [T],
    ) -> Result<()> {
        self.iscatter(root, input, output)?.wait()
    }
}
