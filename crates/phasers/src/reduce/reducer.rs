//! The steps every call goes through whatever the algorithm: checks, the choice of algorithm,
//! running it, and handing out the result.

use super::algorithm::ReduceAlgorithm;
use super::call::{Bail, Call, Role};
use super::handle::{Caller, Reducer};
use super::kernel::Kernel;
use super::signature::{self, KIND_ALLREDUCE, KIND_REDUCE};
use super::slot::{tag, OFFERED, WITHDRAWN};
use super::task_wait::OnCancel;
use super::{dynamic_group, dynamic_pairs, linear, static_tree};
use crate::error::{Error, Result};
use crate::primitive::Ordering;

/// What a call did: its number, the algorithm that ran, and whether this participant's output
/// holds the result.
///
/// ```
/// use phasers::{Op, ReduceAlgorithm, Reduction};
///
/// let group = Reduction::<u32>::builder(2)
///     .op(Op::Sum)
///     .algorithm(ReduceAlgorithm::Linear)
///     .build()?;
/// std::thread::scope(|s| {
///     for mut p in group.participants() {
///         s.spawn(move || {
///             let outcome = p.allreduce(&[1], &mut [0]).unwrap();
///             assert_eq!(outcome.episode(), 0);
///             assert_eq!(outcome.algorithm(), ReduceAlgorithm::Linear);
///             assert!(outcome.has_result());
///         });
///     }
/// });
/// # Ok::<(), phasers::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReduceOutcome {
    episode: u64,
    algorithm: ReduceAlgorithm,
    has_result: bool,
}

impl ReduceOutcome {
    /// The call's number, counted from 0 for each group.
    ///
    /// ```
    /// use phasers::{Op, Reduction};
    ///
    /// let group = Reduction::<u64>::new(2, Op::Sum)?;
    /// std::thread::scope(|s| {
    ///     for mut p in group.participants() {
    ///         s.spawn(move || {
    ///             for call in 0..3 {
    ///                 let mut out = [0];
    ///                 let outcome = p.allreduce(&[call], &mut out).unwrap();
    ///                 assert_eq!((outcome.episode(), out[0]), (call, 2 * call));
    ///             }
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn episode(&self) -> u64 {
        self.episode
    }

    /// The algorithm that ran (never `Auto`: what `Auto` chose).
    ///
    /// ```
    /// use phasers::{Op, ReduceAlgorithm, Reduction};
    ///
    /// // Dynamic pairs, but a fixed order asked for: the static tree runs instead.
    /// let group = Reduction::<f32>::builder(3)
    ///     .op(Op::Sum)
    ///     .algorithm(ReduceAlgorithm::DynamicPairs)
    ///     .deterministic(true)
    ///     .build()?;
    /// std::thread::scope(|s| {
    ///     for mut p in group.participants() {
    ///         s.spawn(move || {
    ///             let mut out = [0.0];
    ///             let outcome = p.allreduce(&[0.5], &mut out).unwrap();
    ///             assert_eq!((outcome.algorithm(), out), (ReduceAlgorithm::StaticTree, [1.5]));
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn algorithm(&self) -> ReduceAlgorithm {
        self.algorithm
    }

    /// Whether this participant's output holds the result: at the root for `reduce`, everywhere
    /// for `allreduce`.
    ///
    /// ```
    /// use phasers::{Op, Reduction};
    ///
    /// let group = Reduction::<i64>::new(3, Op::Product)?;
    /// std::thread::scope(|s| {
    ///     for mut p in group.participants() {
    ///         s.spawn(move || {
    ///             let mut out = [0];
    ///             let outcome = p.reduce(&[p.rank() as i64 + 2], &mut out).unwrap();
    ///             assert_eq!(outcome.has_result(), p.is_root());
    ///             let outcome = p.allreduce(&[-1], &mut out).unwrap();
    ///             assert!(outcome.has_result() && out == [-1]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn has_result(&self) -> bool {
        self.has_result
    }
}

impl<T: Copy + Send + Sync + 'static> Reducer<T> {
    ///
    /// ```
    /// use phasers::{Op, Reduction};
    ///
    /// let group = Reduction::<u32>::new(3, Op::Or)?;
    /// std::thread::scope(|s| {
    ///     for mut p in group.participants() {
    ///         s.spawn(move || {
    ///             // One bit per rank: all three are set, so each rank came once.
    ///             let mut out = [0];
    ///             p.allreduce(&[1 << p.rank()], &mut out).unwrap();
    ///             assert_eq!(out, [0b111]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Whether this participant receives `reduce`'s result.
    ///
    /// ```
    /// use phasers::{Op, Reduction};
    ///
    /// let group = Reduction::<u64>::builder(2).op(Op::Sum).root(1).build()?;
    /// std::thread::scope(|s| {
    ///     for mut p in group.participants() {
    ///         s.spawn(move || {
    ///             assert_eq!(p.is_root(), p.rank() == 1);
    ///             // Only the root needs an output.
    ///             let mut out = if p.is_root() { vec![0] } else { vec![] };
    ///             p.reduce(&[4], &mut out).unwrap();
    ///             assert!(!p.is_root() || out == [8]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn is_root(&self) -> bool {
        self.rank == self.shared.root
    }

    /// The number of participants in this handle's group, the same as
    /// [`Reduction::parties`](crate::Reduction::parties).
    ///
    /// ```
    /// use phasers::{Op, Reduction};
    ///
    /// let group = Reduction::<u64>::new(4, Op::Sum)?;
    /// std::thread::scope(|s| {
    ///     for mut p in group.participants() {
    ///         s.spawn(move || {
    ///             // Everyone brings a 1: the sum is the party count.
    ///             let mut out = [0];
    ///             p.allreduce(&[1], &mut out).unwrap();
    ///             assert_eq!(out[0], p.parties() as u64);
    ///             assert_eq!(p.parties(), 4);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn parties(&self) -> usize {
        self.shared.parties
    }

    /// Reduces every participant's `input` into the root's `output`, element by element.
    ///
    /// A participant whose data has been consumed returns at once (quick return; under
    /// `Linear` and `DynamicGroup` everyone returns when the call completes). `output` is written
    /// only at the root, whose output must be as long as its input; the others may pass
    /// `&mut []`. `input` is not read after the call returns.
    ///
    /// ```
    /// use phasers::{Op, Reduction};
    ///
    /// let group = Reduction::<i64>::new(3, Op::Sum)?;
    /// let mut total = vec![0i64; 4];
    /// std::thread::scope(|s| {
    ///     let mut handles = group.participants().into_iter();
    ///     let mut root = handles.next().unwrap();
    ///     for mut p in handles {
    ///         s.spawn(move || {
    ///             let mine = vec![p.rank() as i64; 4];
    ///             p.reduce(&mine, &mut []).unwrap();
    ///         });
    ///     }
    ///     let outcome = root.reduce(&[10, 20, 30, 40], &mut total).unwrap();
    ///     assert!(outcome.has_result());
    /// });
    /// assert_eq!(total, [13, 23, 33, 43]);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// - [`Error::Mismatch`](crate::Error::Mismatch) when participants passed different
    ///   lengths, or some called [`allreduce`](Self::allreduce) instead, or the root's output is
    ///   not as long as its input; or later, from the next call or the one after, for a
    ///   participant that returned before the difference was found. The root's output holds
    ///   unspecified values, and the group is failed: every later call returns the same error
    ///   (see [`Reduction`](crate::Reduction#mismatched-calls)).
    /// - [`Error::Broken`](crate::Error::Broken) when a participant panicked or its handle was
    ///   dropped.
    pub fn reduce(&mut self, input: &[T], output: &mut [T]) -> Result<ReduceOutcome> {
        let has_output = self.is_root();
        self.call(KIND_REDUCE, input, output, has_output)
    }

    /// Reduces every participant's `input` into every participant's `output`, which must be as
    /// long as the input.
    ///
    /// ```
    /// use phasers::{Op, ReduceAlgorithm, Reduction};
    ///
    /// let group = Reduction::<f64>::builder(4)
    ///     .op(Op::Max)
    ///     .algorithm(ReduceAlgorithm::DynamicPairs)
    ///     .build()?;
    /// std::thread::scope(|s| {
    ///     for mut p in group.participants() {
    ///         s.spawn(move || {
    ///             let mine = [p.rank() as f64, -(p.rank() as f64)];
    ///             let mut out = [0.0; 2];
    ///             p.allreduce(&mine, &mut out).unwrap();
    ///             assert_eq!(out, [3.0, 0.0]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`reduce`](Self::reduce); every participant learns of a mismatch from the call itself,
    /// and every output holds unspecified values.
    pub fn allreduce(&mut self, input: &[T], output: &mut [T]) -> Result<ReduceOutcome> {
        self.call(KIND_ALLREDUCE, input, output, true)
    }

    fn call(
        &mut self,
        kind: usize,
        input: &[T],
        output: &mut [T],
        has_output: bool,
    ) -> Result<ReduceOutcome> {
        let mut me = self.caller();
        let shared = me.shared;
        let Some(kernel) = shared.kernel.as_ref() else {
            // Only a group embedded in a team has no operator of its own, and its handles stay
            // inside the team, which calls `Caller::run` with each call's operator.
            return Err(Error::invalid(
                "this reduction handle has no operator of its own; it belongs to a team",
            ));
        };
        me.run(kind, shared.root, input, output, has_output, kernel)
    }
}

impl<T: Copy + Send + Sync + 'static> Caller<'_, T> {
    /// Runs one call with `root` receiving `reduce`'s result and `kernel` as this participant's
    /// operator: the group's own for a [`Reduction`](crate::Reduction), each call's for a team.
    /// Every participant of the call must pass the same kind, root and operator.
    pub(crate) fn run(
        &mut self,
        kind: usize,
        root: usize,
        input: &[T],
        output: &mut [T],
        has_output: bool,
        kernel: &Kernel<T>,
    ) -> Result<ReduceOutcome> {
        let shared = self.shared;
        let episode = *self.episode;
        let poisoned = self.open(input, output, has_output)?;
        if episode >= 2 {
            if let Err(Bail::Broken) = self.wait(&shared.completed, |c| c + 1 >= episode, true) {
                return Err(shared.broken_error());
            }
        }
        let (call, algorithm) =
            self.arrive(kind, root, input, output, has_output, poisoned, kernel);
        let outcome = if shared.parties == 1 {
            self.alone(&call)
        } else {
            match algorithm {
                ReduceAlgorithm::Linear => linear::run(self, &call),
                ReduceAlgorithm::StaticTree => static_tree::run(self, &call),
                ReduceAlgorithm::DynamicPairs | ReduceAlgorithm::DynamicGroup => {
                    dynamic_pairs::run(self, &call, algorithm == ReduceAlgorithm::DynamicGroup)
                }
                ReduceAlgorithm::Auto => unreachable!("Auto is resolved above"),
            }
        };
        let outcome = outcome.and_then(|role| self.finish(&call, role, algorithm));
        self.conclude(&call, algorithm, has_output, outcome)
    }

    /// [`run`](Self::run) for a task (see `reduce_future.rs`): the same steps, each wait a poll.
    pub(crate) async fn run_in_task(
        &mut self,
        kind: usize,
        root: usize,
        input: &[T],
        output: &mut [T],
        has_output: bool,
        kernel: &Kernel<T>,
    ) -> Result<ReduceOutcome> {
        let shared = self.shared;
        let episode = *self.episode;
        let poisoned = self.open(input, output, has_output)?;
        if episode >= 2 {
            let reusable = self
                .wait_in_task(&shared.completed, move |c| c + 1 >= episode, true)
                .await;
            if let Err(Bail::Broken) = reusable {
                return Err(shared.broken_error());
            }
        }
        let (call, algorithm) =
            self.arrive(kind, root, input, output, has_output, poisoned, kernel);
        // From here on the others count on this participant for the call: one that leaves
        // before its part is done (its future dropped) breaks the group there.
        let rank = self.rank;
        let cancelled = OnCancel::new(move || shared.break_from(episode, rank));
        let outcome = if shared.parties == 1 {
            self.alone(&call)
        } else {
            match algorithm {
                ReduceAlgorithm::Linear => linear::run_in_task(self, &call).await,
                ReduceAlgorithm::StaticTree => static_tree::run_in_task(self, &call).await,
                ReduceAlgorithm::DynamicPairs | ReduceAlgorithm::DynamicGroup => {
                    let group = algorithm == ReduceAlgorithm::DynamicGroup;
                    dynamic_pairs::run_in_task(self, &call, group).await
                }
                ReduceAlgorithm::Auto => unreachable!("Auto is resolved above"),
            }
        };
        let outcome = match outcome {
            Ok(role) => self.finish_in_task(&call, role, algorithm).await,
            Err(bail) => Err(bail),
        };
        cancelled.disarm();
        self.conclude(&call, algorithm, has_output, outcome)
    }

    /// The call's first checks: returns whether this participant's own arguments poison it.
    fn open(&self, input: &[T], output: &[T], has_output: bool) -> Result<bool> {
        let shared = self.shared;
        let episode = *self.episode;
        if shared.broken.is_broken_for(episode) {
            return Err(shared.broken_error());
        }
        let poisoned = has_output && output.len() != input.len();
        if poisoned {
            let error = signature::output_length(self.rank, input.len(), output.len());
            shared.record_mismatch(episode, error);
        }
        // The caller then waits until call `e - 2` completed: call `e` may reuse what it used
        // (pairing word, choice slot). Almost always it has, and this is one load.
        Ok(poisoned)
    }

    /// Chooses the call's algorithm and publishes this participant's data: from here on the
    /// others count on it for the call.
    #[allow(clippy::too_many_arguments)]
    fn arrive<'k>(
        &mut self,
        kind: usize,
        root: usize,
        input: &[T],
        output: &mut [T],
        has_output: bool,
        poisoned: bool,
        kernel: &'k Kernel<T>,
    ) -> (Call<'k, T>, ReduceAlgorithm) {
        let shared = self.shared;
        let episode = *self.episode;
        let algorithm = match shared.configured {
            ReduceAlgorithm::Auto if shared.parties == 1 => ReduceAlgorithm::Linear,
            // One fixed order for every call: the choice must not depend on history.
            ReduceAlgorithm::Auto if shared.deterministic => ReduceAlgorithm::StaticTree,
            ReduceAlgorithm::Auto => shared
                .auto
                .choice_for(episode)
                .unwrap_or(ReduceAlgorithm::Linear),
            configured => {
                configured.resolve(0, shared.parties, Default::default(), shared.deterministic)
            }
        };
        let out = if has_output {
            output.as_mut_ptr()
        } else {
            std::ptr::null_mut()
        };
        let work = if !out.is_null() {
            out
        } else {
            self.scratch_for(input.len())
        };
        let call = Call {
            episode,
            kind,
            root,
            input: input.as_ptr(),
            len: input.len(),
            poisoned,
            out,
            work,
            kernel,
        };
        let out_len = if out.is_null() { 0 } else { output.len() };
        let slot = &shared.slots[self.rank];
        shared.roster.arrive(self.rank, episode);
        slot.publish_data(
            input.as_ptr() as usize,
            call.signature(),
            out as usize,
            out_len,
        );
        slot.arrived_at
            .store(shared.stamp(episode), Ordering::Relaxed);
        (call, algorithm)
    }

    /// Ends the call: the next call's number, and what this one returns.
    fn conclude(
        &mut self,
        call: &Call<'_, T>,
        algorithm: ReduceAlgorithm,
        has_output: bool,
        outcome: Result<(), Bail>,
    ) -> Result<ReduceOutcome> {
        let shared = self.shared;
        let episode = call.episode;
        *self.episode += 1;
        match outcome {
            Ok(()) => {}
            Err(Bail::Broken) => return Err(shared.broken_error()),
            Err(Bail::Panicked(payload)) => std::panic::resume_unwind(payload),
        }
        if let Some(mismatch) = shared.mismatch_for(episode) {
            return Err(mismatch);
        }
        if shared.broken.is_broken_for(episode) {
            return Err(shared.broken_error());
        }
        Ok(ReduceOutcome {
            episode,
            algorithm,
            has_result: has_output,
        })
    }

    /// The rest of the call once this participant's part of the algorithm is done: helping (for
    /// `DynamicGroup`), waiting for the result where it is needed, and copying it.
    fn finish(
        &self,
        call: &Call<'_, T>,
        role: Role,
        algorithm: ReduceAlgorithm,
    ) -> Result<(), Bail> {
        let shared = self.shared;
        let episode = call.episode;
        if let Role::Consumed = role {
            let waited = if algorithm == ReduceAlgorithm::DynamicGroup {
                dynamic_group::work_until_complete(self, call)
            } else if !call.out.is_null() {
                self.wait(&shared.completed, |c| c > episode, true)
                    .map(drop)
            } else {
                Ok(())
            };
            if let Err(bail) = waited {
                if self.out_offer_taken(call) {
                    let _ = self.wait(&shared.completed, |c| c > episode, false);
                }
                return Err(bail);
            }
        }
        self.copy_result_of(call, role);
        Ok(())
    }

    /// [`finish`](Self::finish) for a task.
    async fn finish_in_task(
        &self,
        call: &Call<'_, T>,
        role: Role,
        algorithm: ReduceAlgorithm,
    ) -> Result<(), Bail> {
        let shared = self.shared;
        let episode = call.episode;
        if let Role::Consumed = role {
            let waited = if algorithm == ReduceAlgorithm::DynamicGroup {
                dynamic_group::work_until_complete_in_task(self, call).await
            } else if !call.out.is_null() {
                self.wait_in_task(&shared.completed, move |c| c > episode, true)
                    .await
                    .map(drop)
            } else {
                Ok(())
            };
            if let Err(bail) = waited {
                if self.out_offer_taken(call) {
                    let _ = self
                        .wait_in_task(&shared.completed, move |c| c > episode, false)
                        .await;
                }
                return Err(bail);
            }
        }
        self.copy_result_of(call, role);
        Ok(())
    }

    /// Under the dynamic algorithms the last pair writes the root's output: before the root
    /// gives up on a broken group it must withdraw that offer, or, if the last pair already took
    /// it (`true`), wait until the pair is done with it, that is until the call completes (it
    /// always does; see [`Job`](super::job)).
    fn out_offer_taken(&self, call: &Call<'_, T>) -> bool {
        let offer = &self.shared.slots[self.rank].out_offer;
        let offered = tag(call.episode, OFFERED);
        offer.load() == offered
            && offer
                .compare_publish(offered, tag(call.episode, WITHDRAWN))
                .is_err()
    }

    /// An allreduce's copy of the result, where the algorithm left it in the group's buffer.
    fn copy_result_of(&self, call: &Call<'_, T>, role: Role) {
        let copies = !matches!(role, Role::Done) && call.kind == KIND_ALLREDUCE;
        if copies && !self.shared.is_mismatched(call.episode) {
            self.copy_result(call);
        }
    }

    /// Copies an allreduce's result from where the tree algorithms' last pair left it.
    fn copy_result(&self, call: &Call<T>) {
        // What the last pair wrote; equal to `call.len` in a call without a mismatch, and the
        // bound whatever the check decided.
        let len = call.len.min(self.shared.result_len.load(Ordering::Relaxed));
        self.shared.result.with(|result| {
            // SAFETY: the call completed, so the last pair has filled `result` with `result_len`
            // elements (see `Shared`'s `Sync` note for why nobody writes it meanwhile; the
            // completion's `Acquire` made `result_len` visible too), and `call.out` is this
            // participant's output of `call.len` elements (its own check in `call`).
            unsafe {
                let result = &*result;
                debug_assert!(result.len() >= len);
                std::ptr::copy_nonoverlapping(result.as_ptr() as *const T, call.out, len);
            }
        });
    }

    /// A group of one: the result is the input.
    fn alone(&self, call: &Call<T>) -> Result<Role, Bail> {
        if !call.out.is_null() && !call.poisoned {
            // SAFETY: `input` and `out` are the caller's slices of `len` elements, distinct
            // (one is shared, the other exclusive).
            unsafe { std::ptr::copy_nonoverlapping(call.input, call.out, call.len) };
        }
        self.complete(call.episode, call.len);
        Ok(Role::Done)
    }
}
