//! The handle of a non-blocking call, and the chain a composed call's handle runs its second
//! step with.

use std::marker::PhantomData;
use std::time::{Duration, Instant};

use super::engine::{self, Held, Poll};
use super::member::HybridMember;
use super::shared::Outcome;
use super::signature::Kind;
use crate::error::{Error, Result};

/// Where a member's output goes: `len` bytes of the member's own output slice, filled from the
/// outcome at `from`.
pub(crate) struct Output<'a> {
    ptr: *mut u8,
    len: usize,
    from: usize,
    _borrow: PhantomData<&'a mut [u8]>,
}

impl<'a> Output<'a> {
    pub(crate) fn new<T: Copy>(dst: &'a mut [T], from: usize) -> Output<'a> {
        Output {
            len: std::mem::size_of_val(dst),
            ptr: dst.as_mut_ptr().cast(),
            from,
            _borrow: PhantomData,
        }
    }

    fn fill(&mut self, outcome: &Outcome) -> Result<()> {
        let src = outcome.data.as_slice();
        let Some(part) = self
            .from
            .checked_add(self.len)
            .and_then(|end| src.get(self.from..end))
        else {
            return Err(Error::Broken {
                what: "hybrid team",
                reason: format!(
                    "a call's result has {} bytes where this member needs {} from byte {}; in \
                     an unchecked team this means members called different collectives (build \
                     the team without .unchecked() to find them)",
                    src.len(),
                    self.len,
                    self.from
                ),
            });
        };
        // SAFETY: `ptr` is the start of a `&'a mut [T]` of `len` bytes, borrowed exclusively by
        // this handle for `'a`; `part` is `len` bytes of a buffer the outcome owns, which cannot
        // overlap it. The bytes came from values of the same `T` (every member of the call
        // passed the same element type).
        unsafe { std::ptr::copy_nonoverlapping(part.as_ptr(), self.ptr, self.len) };
        Ok(())
    }
}

/// Copies `dst.len()` elements of a call's outcome, from byte `from`, into `dst`: a composed
/// call's root reads its first step's result into a buffer of its own this way.
pub(crate) fn copy_out<T: Copy>(outcome: &Outcome, dst: &mut [T], from: usize) -> Result<()> {
    Output::new(dst, from).fill(outcome)
}

/// One engine call a handle waits for: its number, its collective, the team's deadline for it
/// (from the team's timeout) and where its output goes.
pub(crate) struct Step<'a> {
    pub(crate) kind: Kind,
    pub(crate) call: u64,
    pub(crate) deadline: Option<Instant>,
    pub(crate) output: Option<Output<'a>>,
}

/// What a composed call (`composed.rs`) does when its first step is over: the handle hands it
/// the member and the first step's outcome, and it starts the second step (after the root's
/// own work on the gathered blocks).
pub(crate) trait Then<'a>: Send {
    /// Reads what it needs of `first` and drops it (the member departs from the first step
    /// then), and starts the second step on `member`.
    fn start(self: Box<Self>, member: &mut HybridMember, first: Result<Held>) -> Next<'a>;
}

/// What [`Then::start`] did.
pub(crate) enum Next<'a> {
    /// The second step runs as `step`. With `error`, the call's result is that error whatever
    /// the step returns: the member takes part in the step only so that other processes do not
    /// wait for it (an unchecked team's first step failed here but may have gone through
    /// elsewhere), and the step writes no output.
    Second {
        step: Step<'a>,
        error: Option<Error>,
    },
    /// The call is over, with this result.
    Over(Result<()>),
}

/// A non-blocking collective in progress, from an `i`-method of [`HybridMember`].
///
/// It borrows the member and the call's buffers until it is finished, so neither can be used
/// (or dropped) meanwhile. The call moves forward only while members of the team poll it:
/// [`test`](Self::test) polls once, [`wait`](Self::wait) polls until it ends, and
/// [`wait_timeout`](Self::wait_timeout) / [`wait_deadline`](Self::wait_deadline) until it ends
/// or the time is up (the call then stays pending). Outputs are written by this handle itself,
/// when a poll finds the call over. Dropping the handle waits for the call (or, while its thread
/// panics, breaks the team instead).
///
/// The handle of a composed call ([`iallgather`](HybridMember::iallgather),
/// [`ialltoall`](HybridMember::ialltoall), [`iscan_inclusive`](HybridMember::iscan_inclusive),
/// [`iscan_exclusive`](HybridMember::iscan_exclusive)) runs its two steps: the first starts at
/// once, and a poll that finds it over starts the second (member 0's handle does the work
/// between them, a transpose or the prefixes, then); the call is over when the second is.
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
///             let mut value = [member.rank() as u64];
///             let mut pending = member.ibroadcast(0, &mut value).unwrap();
///             while !pending.test().unwrap() {
///                 // ... work that does not need `value` ...
///             }
///             drop(pending);
///             assert_eq!(value, [0]);
///         });
///     }
/// });
/// # Ok::<(), phasers_mpi::Error>(())
/// ```
#[must_use = "a pending call must be tested or waited for (dropping it waits)"]
pub struct HybridPending<'a> {
    member: &'a mut HybridMember,
    /// The engine call the handle waits for now.
    step: Step<'a>,
    /// A composed call's second step, until its first is over.
    then: Option<Box<dyn Then<'a> + 'a>>,
    /// The result a composed call's second step ends with, whatever the step's own (see
    /// [`Next::Second`]).
    failed: Option<Error>,
    finished: Option<Result<()>>,
}

// SAFETY: the only non-`Send` field is the output pointer, an exclusive borrow of a slice of
// `T: Send` values for `'a`; moving the handle to another thread moves that borrow with it.
// (`Then` is `Send` itself.)
unsafe impl Send for HybridPending<'_> {}

impl<'a> HybridPending<'a> {
    pub(crate) fn new(member: &'a mut HybridMember, step: Step<'a>) -> Self {
        HybridPending {
            member,
            step,
            then: None,
            failed: None,
            finished: None,
        }
    }

    /// The handle of a composed call whose first step is `step`: `then` starts the second.
    pub(crate) fn chained(
        member: &'a mut HybridMember,
        step: Step<'a>,
        then: Box<dyn Then<'a> + 'a>,
    ) -> Self {
        HybridPending {
            member,
            step,
            then: Some(then),
            failed: None,
            finished: None,
        }
    }

    /// Polls the call once: `Ok(true)` when it is over (outputs written), `Ok(false)` while it
    /// runs. Once over, every later `test` returns the same answer.
    ///
    /// # Errors
    ///
    /// The call's errors, as its blocking form: [`Error::InvalidArgument`],
    /// [`Error::Mismatch`], [`Error::Broken`], and [`Error::Timeout`] when the team's timeout
    /// passed (the team is then broken).
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
    /// std::thread::scope(|s| {
    ///     for mut member in team.participants() {
    ///         s.spawn(move || {
    ///             let mut sum = [0u32];
    ///             let mut pending = member.iallreduce(&[1], &mut sum, Op::Sum).unwrap();
    ///             while !pending.test().unwrap() {
    ///                 std::thread::yield_now(); // or work that does not need `sum`
    ///             }
    ///             // Once over, it stays over.
    ///             assert!(pending.test().unwrap());
    ///             drop(pending);
    ///             assert_eq!(sum[0] as usize, member.parties());
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn test(&mut self) -> Result<bool> {
        if let Some(result) = &self.finished {
            return result.clone().map(|()| true);
        }
        // A composed call's second step, started when the first is found over, is polled at
        // once too.
        let result = loop {
            let (shared, step) = (&self.member.shared, &self.step);
            let outcome = match engine::poll(shared, step.call) {
                Poll::Pending => {
                    if step.deadline.is_some_and(|d| Instant::now() >= d) {
                        Err(engine::time_out(
                            shared,
                            step.kind,
                            step.call,
                            Vec::new(),
                            step.deadline,
                        ))
                    } else {
                        return Ok(false);
                    }
                }
                Poll::Done(outcome) => engine::hold(shared, step.call, outcome),
                Poll::Broken(error) => Err(error),
            };
            if let Some(result) = self.step_over(outcome) {
                break result;
            }
        };
        self.finished = Some(result.clone());
        result.map(|()| true)
    }

    /// Waits until the call is over.
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
    /// std::thread::scope(|s| {
    ///     for mut member in team.participants() {
    ///         s.spawn(move || {
    ///             let input = [member.rank() as u32];
    ///             let mut max = [0u32];
    ///             let pending = member.iallreduce(&input, &mut max, Op::Max).unwrap();
    ///             pending.wait().unwrap();
    ///             assert_eq!(max[0] as usize, member.parties() - 1);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`test`](Self::test).
    pub fn wait(mut self) -> Result<()> {
        self.complete()
    }

    /// [`wait`](Self::wait) for at most `timeout`; on [`Error::Timeout`] the call stays
    /// pending, and a later `wait`, `wait_timeout` or [`test`](Self::test) completes it.
    ///
    /// ```
    /// use std::time::Duration;
    /// use phasers_mpi::{Error, HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 2)?;
    /// let (gave_up, late) = std::sync::mpsc::channel();
    /// let mut members = team.participants();
    /// let (mut second, mut first) = (members.pop().unwrap(), members.pop().unwrap());
    /// std::thread::scope(|s| {
    ///     s.spawn(move || {
    ///         let mut pending = first.ibarrier().unwrap();
    ///         // Member 1 has not arrived: the wait gives up, the call stays pending.
    ///         let early = pending.wait_timeout(Duration::from_millis(1));
    ///         assert!(matches!(early, Err(Error::Timeout { .. })));
    ///         gave_up.send(()).unwrap();
    ///         assert!(pending.wait_timeout(Duration::from_secs(10)).is_ok());
    ///     });
    ///     late.recv().unwrap();
    ///     second.barrier().unwrap();
    /// });
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`wait_deadline`](Self::wait_deadline).
    pub fn wait_timeout(&mut self, timeout: Duration) -> Result<()> {
        match Instant::now().checked_add(timeout) {
            Some(deadline) => self.wait_deadline(deadline),
            None => self.complete(),
        }
    }

    /// [`wait`](Self::wait) until `deadline`; on [`Error::Timeout`] the call stays pending, and
    /// a later `wait`, `wait_deadline` or [`test`](Self::test) completes it.
    ///
    /// The wait polls as [`wait`](Self::wait) does (spin, yield, growing naps) and stops at
    /// `deadline`. Giving up here cancels nothing, so, unlike the team's own
    /// [`timeout`](super::HybridTeamBuilder::timeout), it does not break the team: the call's
    /// buffers stay borrowed by this handle, the other members keep moving the call, and the
    /// outputs are written when a later wait or test finds it over. A team timeout that passes
    /// first still ends the call with [`Error::Timeout`] and breaks the team, as for `wait`.
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use phasers_mpi::{Error, HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 2)?;
    /// let mut members = team.participants();
    /// let (mut second, mut first) = (members.pop().unwrap(), members.pop().unwrap());
    /// let mut value = [0u8];
    /// let mut pending = first.ibroadcast(1, &mut value)?;
    /// // Member 1 has not called yet, so the deadline passes.
    /// let waited = pending.wait_deadline(Instant::now() + Duration::from_millis(1));
    /// assert!(matches!(waited, Err(Error::Timeout { episode: 0, .. })));
    /// std::thread::scope(|s| {
    ///     s.spawn(move || second.broadcast(1, &mut [9u8]).unwrap());
    ///     pending.wait_deadline(Instant::now() + Duration::from_secs(10)).unwrap();
    /// });
    /// drop(pending);
    /// assert_eq!(value, [9]);
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Timeout`] when `deadline` passes first, naming the members of this process
    /// that have not arrived (empty while the call waits for other processes); the call is
    /// still pending. Otherwise the call's errors, as [`test`](Self::test).
    pub fn wait_deadline(&mut self, deadline: Instant) -> Result<()> {
        if let Some(result) = &self.finished {
            return result.clone();
        }
        let start = Instant::now();
        let result = loop {
            let (shared, step) = (&self.member.shared, &self.step);
            let until = Some(deadline);
            let Some(outcome) =
                engine::wait_until(shared, step.kind, step.call, step.deadline, until)
            else {
                return Err(Error::Timeout {
                    what: step.kind.name(),
                    episode: step.call,
                    waiting_for: engine::missing_members(shared, step.call),
                    after: start.elapsed(),
                });
            };
            if let Some(result) = self.step_over(outcome) {
                break result;
            }
        };
        self.finished = Some(result.clone());
        result
    }

    fn complete(&mut self) -> Result<()> {
        if let Some(result) = &self.finished {
            return result.clone();
        }
        let result = loop {
            let step = &self.step;
            let outcome = engine::wait(&self.member.shared, step.kind, step.call, step.deadline);
            if let Some(result) = self.step_over(outcome) {
                break result;
            }
        };
        self.finished = Some(result.clone());
        result
    }

    /// The step waited for is over with `outcome`: the call's result, or `None` when a composed
    /// call's second step has just started in its place.
    fn step_over(&mut self, outcome: Result<Held>) -> Option<Result<()>> {
        let Some(then) = self.then.take() else {
            let result = self.take(outcome);
            return Some(match self.failed.take() {
                Some(error) => Err(error),
                None => result,
            });
        };
        match then.start(self.member, outcome) {
            Next::Second { step, error } => {
                self.step = step;
                self.failed = error;
                None
            }
            Next::Over(result) => Some(result),
        }
    }

    /// Writes the outputs from a call's outcome; dropping `outcome` then departs.
    fn take(&mut self, outcome: Result<Held>) -> Result<()> {
        let outcome = outcome?;
        match self.step.output.as_mut() {
            Some(output) => output.fill(&outcome),
            None => Ok(()),
        }
    }
}

impl Drop for HybridPending<'_> {
    fn drop(&mut self) {
        if self.finished.is_some() {
            return;
        }
        if std::thread::panicking() {
            let rank = self.member.rank();
            self.member
                .shared
                .mark_broken(|| format!("member {rank} panicked during a non-blocking call"));
            self.finished = Some(Err(self.member.shared.broken_error()));
            return;
        }
        let _ = self.complete();
    }
}
