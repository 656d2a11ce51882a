//! A member of a team: one rank's handle, used by one thread at a time.

use std::any::{Any, TypeId};
use std::cell::{Cell, RefCell};

use super::kind::{readers, reads, Path};
use super::post::Post;
use super::shared::TeamShared;
use super::sync_mode::SyncMode;
use crate::error::Error;
use crate::primitive::Arc;
use crate::wait::{poll_task, BrokenState, Deadline, Signal, SpinBudget, Stop, Waiter, Watch};

/// Where a call stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Arrived at the opening meeting; waiting for its release.
    Entry,
    /// Data moved; arrived at the closing meeting `exit`.
    Exit { exit: u64 },
    /// Waiting for the others to be done with this member's buffers.
    Finish,
}

/// The call a member is in. It lives in the member, not in the pending handle, so that a handle
/// forgotten with `mem::forget` leaves enough behind for the next call to finish it.
pub(crate) struct InFlight {
    pub(crate) post: Post,
    pub(crate) staged: bool,
    pub(crate) step: Step,
    /// A panic of the caller's operator, resumed once the call's duties to the others are done.
    pub(crate) panic: Option<Box<dyn Any + Send>>,
}

/// One member of a [`Team`](super::Team): its rank, and the handle through which it calls
/// collectives.
///
/// ```
/// use phasers::Team;
///
/// let team = Team::new(3)?;
/// std::thread::scope(|s| {
///     for mut m in team.participants() {
///         s.spawn(move || {
///             let mut word = [if m.rank() == 0 { 7u8 } else { 0 }];
///             m.broadcast(0, &mut word).unwrap();
///             assert_eq!((word, m.parties()), ([7], 3));
///         });
///     }
/// });
/// # Ok::<(), phasers::Error>(())
/// ```
///
/// Each rank has exactly one `Member`. It is `Send` and its methods take `&mut self`, so it is
/// used by one thread at a time. Every collective must be called by every member of the team, in
/// the same order, with matching arguments (checked mode verifies it).
///
/// Dropping a member while the others still call collectives breaks the team: their calls return
/// [`Error::Broken`] instead of waiting forever.
pub struct Member {
    pub(crate) shared: Arc<TeamShared>,
    pub(crate) rank: usize,
    /// Calls started on this team.
    pub(crate) seq: u64,
    /// Closing meetings attended.
    pub(crate) exits: u64,
    /// The `touched` count this member's slot must reach before its post or staged copy is
    /// reused: the sum of `kind::readers` over its calls.
    pub(crate) expected: u64,
    pub(crate) mode: SyncMode,
    pub(crate) budget: SpinBudget,
    pub(crate) in_flight: Option<InFlight>,
    /// `seq + 1` of the last call whose debts this member settled (see
    /// [`settle_debts`](Self::settle_debts)), so that no owner is touched twice for one call.
    pub(crate) settled: Cell<u64>,
    /// This member's handles in the team's reduction groups, one `Reducer<T>` per element type
    /// (see `reduce_group`).
    pub(crate) groups: RefCell<Vec<(TypeId, Box<dyn Any + Send>)>>,
    /// The linear path's list of every input and output address, kept between calls.
    pub(crate) pointers: Cell<Vec<usize>>,
    /// The signature of the last light call of each path (see `light.rs`), with what it depends
    /// on there: [`LIGHT_BARRIER`](super::signature::LIGHT_BARRIER) for barriers, the other for
    /// one-word allreduces.
    pub(crate) light_signatures: [Cell<Option<(super::signature::LightKey, u64)>>; 2],
}

// SAFETY: the only fields that are not `Send` by themselves are the raw pointers in the post of
// the call in flight. They point to buffers borrowed for that call (by a `Pending` that also
// borrows this member, so the member cannot move while they are live) or, for a call whose handle
// was forgotten, to buffers this member never dereferences again (draining moves no data).
unsafe impl Send for Member {}

impl Member {
    pub(crate) fn new(shared: Arc<TeamShared>, rank: usize) -> Self {
        let budget = SpinBudget::new(shared.plan);
        Member {
            shared,
            rank,
            seq: 0,
            exits: 0,
            expected: 0,
            mode: SyncMode::AllSync,
            budget,
            in_flight: None,
            settled: Cell::new(0),
            groups: RefCell::new(Vec::new()),
            pointers: Cell::new(Vec::new()),
            light_signatures: [Cell::new(None), Cell::new(None)],
        }
    }

    /// This member's rank in its team, from 0 to `parties() - 1`.
    ///
    /// ```
    /// let team = phasers::Team::new(3)?;
    /// let ranks: Vec<usize> = team.participants().iter().map(|m| m.rank()).collect();
    /// assert_eq!(ranks, [0, 1, 2]);
    /// assert_eq!(phasers::Team::new(3)?.participant(2)?.rank(), 2);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The number of members of the team.
    ///
    /// ```
    /// let team = phasers::Team::new(3)?;
    /// let member = team.participant(0)?;
    /// assert_eq!(member.parties(), 3);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn parties(&self) -> usize {
        self.shared.size
    }

    /// The number of members of the team.
    ///
    /// ```
    /// # #![allow(deprecated)]
    /// let team = phasers::Team::new(3)?;
    /// assert_eq!(team.participant(0)?.size(), 3);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    #[deprecated(
        since = "0.2.0",
        note = "use `parties()`: one name for the count on every type"
    )]
    pub fn size(&self) -> usize {
        self.parties()
    }

    /// Whether the team checks that members' calls match (see [`Team`](super::Team)).
    ///
    /// ```
    /// use phasers::Team;
    ///
    /// assert!(Team::builder(2).checked(true).build()?.participant(0)?.is_checked());
    /// assert!(!Team::builder(2).unchecked().build()?.participant(0)?.is_checked());
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn is_checked(&self) -> bool {
        self.shared.checked
    }

    /// Whether the team is broken: a member was dropped or an operator panicked.
    ///
    /// ```
    /// use phasers::{Error, Team};
    ///
    /// let team = Team::new(2)?;
    /// let mut first = team.participant(0)?;
    /// assert!(!first.is_broken());
    /// drop(team.participant(1)?); // dropping a member breaks the team
    /// assert!(first.is_broken());
    /// assert!(matches!(first.barrier(), Err(Error::Broken { by: 1, .. })));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn is_broken(&self) -> bool {
        self.shared.broken.breaker().is_some()
    }

    /// The [`SyncMode`] of this member's next calls.
    ///
    /// ```
    /// use phasers::{SyncMode, Team};
    ///
    /// let mut member = Team::new(1)?.participant(0)?;
    /// assert_eq!(member.sync_mode(), SyncMode::AllSync); // the default
    /// member.set_sync_mode(SyncMode::NoSync);
    /// assert_eq!(member.sync_mode(), SyncMode::NoSync);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn sync_mode(&self) -> SyncMode {
        self.mode
    }

    /// Sets the [`SyncMode`] of this member's next calls. Every member must use the same mode for
    /// the same call.
    ///
    /// ```
    /// use phasers::{SyncMode, Team};
    ///
    /// let mut member = Team::new(1)?.participants().pop().unwrap();
    /// member.set_sync_mode(SyncMode::MySync);
    /// let mut buffer = [1u64, 2, 3];
    /// member.broadcast(0, &mut buffer)?;
    /// assert_eq!(member.sync_mode(), SyncMode::MySync);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn set_sync_mode(&mut self, mode: SyncMode) {
        self.mode = mode;
    }

    /// Waits until `signal` reaches `target`, or `deadline` passes. A `checked` wait gives up
    /// when the team breaks at or before `seq`; an unchecked one waits for others that still use
    /// this member's buffers, which always finish.
    ///
    /// A wait at an opening meeting reports, if it stalls, the members that have not begun the
    /// call (the roster `start` keeps); the other waits (for this member's readers, or at a
    /// closing meeting) wait for members that began it and are still moving data, which the
    /// roster cannot tell apart.
    ///
    /// With [`Deadline::Task`] (a task's poll, see [`CollectiveFuture`](super::CollectiveFuture))
    /// a signal short of `target` at first look is polled once through
    /// [`poll_task`](crate::wait::poll_task), which stores the task's waker on it and stops with
    /// [`Stop::TimedOut`] when it is still short, as a timed wait that gave up: the call stays
    /// where it was, and the next poll resumes it there.
    pub(crate) fn wait_for(
        &self,
        signal: &Signal,
        target: u64,
        seq: u64,
        checked: bool,
        deadline: Deadline,
    ) -> Result<(), Stop> {
        // The first look, before anything else: most waits end here. The waiter below looks
        // again before it spins.
        if signal.load() >= target {
            return Ok(());
        }
        let shared = &*self.shared;
        let broken = if checked {
            &shared.broken
        } else {
            &shared.intact
        };
        let outcome = if let Deadline::Task(task) = deadline {
            poll_task(task, broken, seq, signal, |value| value >= target).map(|_| ())
        } else {
            self.wait_slow(signal, target, seq, broken, deadline)
        };
        match outcome {
            Ok(()) => Ok(()),
            // The waiter looks at the signal before the broken state, so it may have missed a
            // signal that reached `target` just before the team broke. A member that breaks the
            // team from a call it was in does so only after seeing that call's meeting released
            // (see `Drop`), and the broken state was read with `Acquire`: this second look sees
            // that release. Without it, a member could give up on a meeting that did release,
            // and the others would count it as a reader that never comes.
            Err(Stop::Broken) if signal.load() >= target => Ok(()),
            Err(stop) => Err(stop),
        }
    }

    /// [`wait_for`](Self::wait_for) for a thread, once the signal was short of `target` at first
    /// look: spin, yield, park, as before tasks could wait here (one call site: it inlines).
    fn wait_slow(
        &self,
        signal: &Signal,
        target: u64,
        seq: u64,
        broken: &BrokenState,
        deadline: Deadline,
    ) -> Result<(), Stop> {
        let shared = &*self.shared;
        let watch = if shared.entry.releases_on(signal) {
            Watch::arrivals(shared)
        } else {
            Watch::progress(shared)
        };
        let waiter = Waiter::new(
            &shared.plan,
            &self.budget,
            deadline,
            broken,
            seq,
            Some(watch),
        );
        waiter.until(signal, |value| value >= target).map(|_| ())
    }

    /// Tells each member whose buffers this one was to use in its call that it is done.
    ///
    /// Only the owners this member's own post names are visited, so the cost is the number of
    /// partners, not the team's size. Each is touched if its own post counts this member, which
    /// is the same thing when posts match; when they differ in length or type (an unchecked
    /// team), the owner's count is still met exactly. A member never touches a buffer whose
    /// owner's post does not match its own (see `movement`), so releasing without having read is
    /// safe.
    pub(crate) fn touch_partners(&self, post: &Post) {
        let shared = &*self.shared;
        for owner in 0..shared.size {
            if !reads(post.kind, post.path, post.root, self.rank, owner) {
                continue;
            }
            // SAFETY: this member is within call `post.seq`, whose meeting every member reached.
            let theirs = unsafe { shared.slots[owner].read_post(post.seq) };
            if theirs.seq == post.seq
                && !theirs.invalid
                && reads(theirs.kind, theirs.path, theirs.root, self.rank, owner)
            {
                shared.slots[owner].touched.fetch_add_notify(1);
            }
        }
    }

    /// Touches every owner that counts this member as a reader of call `post.seq` (this
    /// member's own post) although this member's post does not read it, so never touched it in
    /// [`touch_partners`](Self::touch_partners): the debts a call whose members disagreed leaves
    /// behind (only an unchecked team lets such a call through its meeting). Each owner waits
    /// for exactly the readers its own post names, so without this an owner whose partner saw a
    /// different call would wait for ever, even after that partner is dropped.
    ///
    /// Releasing an owner this member never reads is safe: its post says so itself. It reads
    /// every post (a cache miss each), so it runs only on the rare paths: after a call that
    /// recorded an error, and when a member is dropped after a call whose posts differ. At most
    /// once per call (`settled`), so no owner is counted twice.
    ///
    /// The caller knows that call `post.seq`'s meeting was released without failing, that this
    /// member has not begun a later call, and that `post` is this member's post of it.
    #[cold]
    pub(crate) fn settle_debts(&self, post: &Post) {
        if self.settled.get() > post.seq {
            return;
        }
        self.settled.set(post.seq + 1);
        let shared = &*self.shared;
        for owner in 0..shared.size {
            if owner == self.rank || reads(post.kind, post.path, post.root, self.rank, owner) {
                continue;
            }
            // SAFETY: every member arrived at call `post.seq` (its meeting is released), and
            // none writes that parity again before every member, this one included, arrives at
            // call `post.seq + 1`, which this member has not begun.
            let theirs = unsafe { shared.slots[owner].read_post(post.seq) };
            if theirs.seq == post.seq
                && !theirs.invalid
                && reads(theirs.kind, theirs.path, theirs.root, self.rank, owner)
            {
                shared.slots[owner].touched.fetch_add_notify(1);
            }
        }
    }

    /// Settles what this member's last call left the others waiting for, before it is dropped,
    /// and returns the first call the others cannot complete without it.
    ///
    /// Normally that is the next call: this member finished its last one as everyone else did.
    /// But in an unchecked team its last call may have differed from the others' (another
    /// length, path or form), so that they still wait in it for this member: for its touches,
    /// which [`settle_debts`](Self::settle_debts) gives now, and at a closing meeting it never
    /// attends, which only breaking the team from that call ends (that wait gives up on a break;
    /// the wait for readers after it does not, and ends once every reader touched). Reading
    /// every post costs a cache miss per member, paid once per dropped member.
    fn settle_last_call(&self) -> u64 {
        let Some(last) = self.seq.checked_sub(1) else {
            return self.seq;
        };
        let shared = &*self.shared;
        // This member arrived at meeting `last` (every call posts, then arrives). If the meeting
        // is not released now, it never will be: this member's wait for it gave up, which
        // happens only once the team is broken from a call whose meeting someone never reached
        // (see `wait_for`), and then nobody counts readers for it. A meeting that failed counts
        // no readers either.
        let failed = shared
            .entry
            .failed
            .load(crate::primitive::Ordering::Acquire)
            == last + 1;
        if !shared.entry.is_released(last) || failed {
            return self.seq;
        }
        // SAFETY: the meeting of `last` is released, so every member posted for it (the release
        // was read with `Acquire`), and no member writes that parity again before every member,
        // this one included, arrives at call `last + 1`, which this one never begins.
        let own = unsafe { shared.slots[self.rank].read_post(last) };
        let differs = (0..shared.size).any(|owner| {
            // SAFETY: as above.
            let theirs = unsafe { shared.slots[owner].read_post(last) };
            let meets = own.closes_with_meeting() == theirs.closes_with_meeting();
            owner != self.rank && !(own.same_call(&theirs) && meets)
        });
        if !differs {
            return self.seq;
        }
        self.settle_debts(&own);
        last
    }

    /// Finishes a call whose pending handle was forgotten: its outputs are gone, so it moves no
    /// data, but it still releases the buffers it was to read. (Pending calls are staged, so
    /// nobody waits for this member's buffers and there is no closing meeting.)
    pub(crate) fn drain(&mut self) {
        let Some(flight) = self.in_flight.take() else {
            return;
        };
        let post = flight.post;
        if flight.step != Step::Entry {
            return;
        }
        let shared = Arc::clone(&self.shared);
        if self
            .wait_for(
                shared.entry.release_word(post.seq),
                post.seq + 1,
                post.seq,
                true,
                Deadline::Never,
            )
            .is_err()
        {
            return;
        }
        let failed = shared
            .entry
            .failed
            .load(crate::primitive::Ordering::Acquire)
            == post.seq + 1;
        if !failed && matches!(post.path, Path::Pull | Path::Linear | Path::Group) {
            self.expected += readers(post.kind, post.path, post.root, self.rank, shared.size);
            self.touch_partners(&post);
        }
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        self.drain();
        let from = self.settle_last_call();
        self.shared.break_from(from, self.rank);
    }
}

impl std::fmt::Debug for Member {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Member")
            .field("rank", &self.rank)
            .field("size", &self.shared.size)
            .field("calls", &self.seq)
            .field("sync_mode", &self.mode)
            .field("checked", &self.shared.checked)
            .finish()
    }
}

/// The error for a wait that stopped because the team broke.
pub(crate) fn stopped(shared: &TeamShared, stop: Stop) -> Error {
    match stop {
        Stop::Broken => shared.broken_error(),
        // Only `Pending`'s timed waits and task polls have a deadline, and they stop before
        // getting here.
        Stop::TimedOut => unreachable!("a timed-out wait leaves its call in progress"),
    }
}
