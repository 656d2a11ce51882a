//! The life of one call in a process: members arrive with their posts; the last arrival
//! combines the local part and starts the cross-process step; any member that polls advances
//! it; when it is done every member takes its output and departs, and the last to depart
//! opens the slot for the call after next.

use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::arrivals::ENGINE_ARRIVAL;
use super::bytes::{Bytes, Source};
use super::flight::{Flight, Landing};
use super::plan;
use super::shared::{Outcome, ProcessShared, Slot, SlotInner, DONE, GATHERING, IN_FLIGHT};
use super::signature::{check_local, Kind, Post};
use super::spare::Spare;
use super::split_teams;
use crate::error::{Error, Result};
use crate::progress::poll_until;

/// How long a waiter with a core of its own keeps testing an in-flight call without napping.
const BUSY_FLIGHT: Duration = Duration::from_secs(1);
/// Each busy round: `poll_until`'s spins and yields, cut off before its naps begin.
const BUSY_STEP: Duration = Duration::from_micros(200);

/// What a member learns when it polls its call.
pub(crate) enum Poll {
    Pending,
    /// The call is over (with its result or its error); the member must depart.
    Done(Result<Arc<Outcome>>),
    /// The team broke in this process; the call will not finish.
    Broken(Error),
}

fn slot(shared: &ProcessShared, call: u64) -> &Slot {
    &shared.slots[(call % 2) as usize]
}

/// Posts this member's part of call `call`, with `source` copied into a buffer of the slot as
/// the post's input (unless empty); waits first until the slot is free (every member has
/// departed from call `call - 2`). `counted`: the member already counted in on the direct path
/// (`DirectShared::count_in`), which sent it here.
pub(crate) fn arrive(
    shared: &ProcessShared,
    local_rank: usize,
    call: u64,
    post: Post,
    source: Source<'_>,
    deadline: Option<Instant>,
    counted: bool,
) -> Result<()> {
    let slot = slot(shared, call);
    let kind = post.sig.kind;
    let open = || slot.open_for.load(std::sync::atomic::Ordering::Acquire) == call;
    if !open() {
        let missing = || {
            format!(
                "the members of this process to finish call {} (slot reuse)",
                call.saturating_sub(2)
            )
        };
        let wait = shared.wait_for(kind, call, shared.oversubscribed, &missing);
        let ready = poll_until(&wait, deadline, || open() || shared.is_broken());
        if shared.is_broken() {
            return Err(shared.broken_error());
        }
        if !ready {
            return Err(time_out(shared, kind, call, Vec::new(), deadline));
        }
    }
    let mut post = post;
    if source.len() > 0 {
        // The copy runs outside the lock, so the members of a large call copy at once.
        let mut input = slot.lock().spare.take(source.len());
        input.copy_from(&source);
        post.input = input;
    }
    let mut inner = slot.lock();
    inner.posts[local_rank] = Some(post);
    inner.arrived += 1;
    if shared.direct_ok && !counted {
        // Members that took the direct path for this call wait there; counting in where they
        // count sends them here once every member has arrived (`DirectShared::count_in`).
        shared.direct.count_in(call, ENGINE_ARRIVAL, shared.local);
    }
    if inner.arrived == shared.local {
        complete_local(shared, slot, &mut inner);
    }
    Ok(())
}

/// The last arrival's work: compare the posts, combine the local part, start the flight.
///
/// Across processes, a checked call (and every split) starts with its envelope (see
/// `checked.rs`); an unchecked one goes straight to its stages, a process whose members got the
/// call wrong sending zeros of the length its first member's call implies.
fn complete_local(shared: &ProcessShared, slot: &Slot, inner: &mut SlotInner) {
    let mut posts = std::mem::take(&mut inner.spare.posts);
    posts.extend(inner.posts.iter_mut().filter_map(Option::take));
    if posts.len() != shared.local {
        // Unreachable: every member posts once per call.
        recycle_posts(&mut inner.spare, posts);
        return finish(slot, inner, Err(shared.broken_error()));
    }
    let checked = shared.options.checked;
    let single = shared.layout.counts.len() == 1;
    let process = (!single).then(|| shared.process());
    let local_error = check_local(&posts, shared.first_rank(), process, checked);
    let sig = posts[0].sig;
    let reducer = posts[0].reducer.clone();
    let builtin = reducer.as_ref().is_some_and(|r| r.builtin().is_some());
    let flight = if (checked || sig.kind == Kind::Split) && !single {
        let data = match local_error {
            Some(_) => Bytes::default(),
            None => combine(shared, &mut posts, &mut inner.spare),
        };
        recycle_posts(&mut inner.spare, posts);
        Flight::checked(
            &shared.layout,
            sig,
            local_error,
            data,
            reducer,
            &mut inner.spare,
        )
    } else {
        match local_error {
            Some(local) if local.everywhere || single => {
                recycle_posts(&mut inner.spare, posts);
                return finish(slot, inner, Err(local.error));
            }
            forced => {
                let spare = &mut inner.spare;
                let data = match forced {
                    Some(_) => spare.take_zeroed(plan::contribution_len(&shared.layout, &sig)),
                    None => combine(shared, &mut posts, spare),
                };
                recycle_posts(spare, posts);
                let mut stages = std::mem::take(&mut spare.stages);
                plan::stages(&shared.layout, &sig, builtin, &mut stages);
                Flight::new(
                    data,
                    stages,
                    reducer,
                    sig.elem_size,
                    forced.map(|l| l.error),
                )
            }
        }
    };
    inner.flight = Some(flight);
    slot.state
        .store(IN_FLIGHT, std::sync::atomic::Ordering::Release);
    advance(shared, slot, inner);
}

/// Gives the posts' input buffers and the emptied list back to the slot.
fn recycle_posts(spare: &mut Spare, mut posts: Vec<Post>) {
    for post in posts.drain(..) {
        spare.give(post.input);
    }
    spare.posts = posts;
}

/// The process's contribution from its members' agreeing posts (their inputs, where taken, are
/// replaced by empty ones).
fn combine(shared: &ProcessShared, posts: &mut [Post], spare: &mut Spare) -> Bytes {
    let sig = posts[0].sig;
    let first = shared.first_rank();
    let root_local = sig.root.wrapping_sub(first);
    match sig.kind {
        Kind::Barrier => Bytes::default(),
        Kind::Broadcast => match posts.get_mut(root_local) {
            Some(root) => std::mem::take(&mut root.input),
            None => spare.take_zeroed(sig.block()),
        },
        Kind::Scatter => match posts.get_mut(root_local) {
            Some(root) => std::mem::take(&mut root.input),
            None => Bytes::default(),
        },
        Kind::Reduce | Kind::Allreduce => {
            let (head, rest) = posts.split_at_mut(1);
            let mut acc = std::mem::take(&mut head[0].input);
            if let Some(reducer) = &head[0].reducer {
                for post in rest.iter() {
                    reducer.combine(&mut acc, &post.input);
                }
            }
            acc
        }
        Kind::Gather | Kind::Split => {
            let block = sig.block();
            let mut all = spare.take_zeroed(posts.len() * block);
            for (i, post) in posts.iter().enumerate() {
                all.as_mut_slice()[i * block..(i + 1) * block]
                    .copy_from_slice(&post.input.as_slice()[..block]);
            }
            all
        }
    }
}

/// Advances the flight (the caller holds the slot's lock); marks the slot done when it ends.
fn advance(shared: &ProcessShared, slot: &Slot, inner: &mut SlotInner) {
    let Some(flight) = inner.flight.as_mut() else {
        return;
    };
    if let Some(result) = flight.advance(&shared.layout, &mut inner.spare) {
        if let Some(flight) = inner.flight.take() {
            flight.recycle(&mut inner.spare);
        }
        let outcome = result
            .and_then(|landing| land(shared, landing, &mut inner.spare, &mut inner.kept_outcome));
        finish(slot, inner, outcome);
    }
}

/// What a landed flight leaves for the members, in the slot's kept outcome when no member
/// holds it any more; a split's new teams are made here, by the member that landed it, once
/// per process.
fn land(
    shared: &ProcessShared,
    landing: Landing,
    spare: &mut Spare,
    kept_outcome: &mut Option<Arc<Outcome>>,
) -> Result<Arc<Outcome>> {
    let split = if landing.split {
        split_teams::make_teams(shared, &landing.data)?
    } else {
        Vec::new()
    };
    if let Some(mut kept) = kept_outcome.take() {
        if let Some(outcome) = Arc::get_mut(&mut kept) {
            let old = std::mem::replace(&mut outcome.data, landing.data);
            spare.give(old);
            outcome.split = split;
            return Ok(kept);
        }
    }
    Ok(Arc::new(Outcome {
        data: landing.data,
        split,
    }))
}

fn finish(slot: &Slot, inner: &mut SlotInner, result: Result<Arc<Outcome>>) {
    inner.outcome = Some(result);
    slot.state.store(DONE, std::sync::atomic::Ordering::Release);
}

/// Advances every call of the process that is in flight, where no other member is doing so.
/// An exchange through the mailboxes sends only once the process's exchange before it has
/// completed (`mailbox.rs`), so whoever waits for a call also moves the calls before it.
pub(crate) fn advance_in_flight(shared: &ProcessShared) {
    for slot in shared.slots.iter() {
        advance_if_free(shared, slot);
    }
}

/// Advances `slot`'s call if it is in flight and no other member is advancing it.
fn advance_if_free(shared: &ProcessShared, slot: &Slot) {
    if slot.state.load(std::sync::atomic::Ordering::Acquire) != IN_FLIGHT {
        return;
    }
    if let Some(mut inner) = slot.try_lock() {
        advance(shared, slot, &mut inner);
    }
}

/// Looks at call `call` once, advancing its flight if no other member is doing so.
pub(crate) fn poll(shared: &ProcessShared, call: u64) -> Poll {
    let slot = slot(shared, call);
    let outcome = |inner: &SlotInner| {
        Poll::Done(
            inner
                .outcome
                .clone()
                .unwrap_or_else(|| Err(shared.broken_error())),
        )
    };
    match slot.state.load(std::sync::atomic::Ordering::Acquire) {
        DONE => return outcome(&slot.lock()),
        IN_FLIGHT => {
            if let Some(mut inner) = slot.try_lock() {
                advance(shared, slot, &mut inner);
                if slot.state.load(std::sync::atomic::Ordering::Acquire) == DONE {
                    return outcome(&inner);
                }
            }
            // The call before may hold this one back (`advance_in_flight`).
            advance_if_free(shared, &shared.slots[((call + 1) % 2) as usize]);
        }
        _ => {}
    }
    if shared.is_broken() {
        // A member may break the team (dropping its handle) right after the call ended, while
        // this member's look above was out of date; the call's outcome still stands. The flag
        // was set after the call ended, so a second look at the state, after the flag, sees it.
        if slot.state.load(std::sync::atomic::Ordering::Acquire) == DONE {
            return outcome(&slot.lock());
        }
        Poll::Broken(shared.broken_error())
    } else {
        Poll::Pending
    }
}

/// This member is done with call `call`; the last to depart frees the slot for `call + 2`,
/// keeping the call's outcome for the slot's next call where no member holds it any more
/// (members let go of it before they depart: see [`Held`]).
pub(crate) fn depart(shared: &ProcessShared, call: u64) {
    let slot = slot(shared, call);
    let mut inner = slot.lock();
    inner.departed += 1;
    if inner.departed == shared.local {
        inner.arrived = 0;
        inner.departed = 0;
        inner.flight = None;
        let mut outcome = inner.outcome.take();
        // A split's new teams are the members' now: the slot lets go of them (after its lock).
        let mut teams = Vec::new();
        if let Some(Ok(kept)) = outcome.as_mut() {
            if let Some(unique) = Arc::get_mut(kept) {
                teams = std::mem::take(&mut unique.split);
                if let Some(Ok(kept)) = outcome.take() {
                    inner.kept_outcome = Some(kept);
                }
            }
        }
        slot.state
            .store(GATHERING, std::sync::atomic::Ordering::Relaxed);
        slot.open_for
            .store(call + 2, std::sync::atomic::Ordering::Release);
        drop(inner);
        drop(outcome);
        drop(teams);
    }
}

/// A member's hold on the outcome of a call that ended: the member departs when it drops
/// this, after letting go of the outcome, so that the last to depart can keep the outcome and
/// its buffer for the slot's next call.
pub(crate) struct Held {
    shared: Arc<ProcessShared>,
    call: u64,
    /// Dropped by hand, before the member departs.
    outcome: ManuallyDrop<Arc<Outcome>>,
}

impl Deref for Held {
    type Target = Outcome;

    fn deref(&self) -> &Outcome {
        &self.outcome
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        // SAFETY: `outcome` is dropped once, here, and not used after.
        unsafe { ManuallyDrop::drop(&mut self.outcome) };
        depart(&self.shared, self.call);
    }
}

/// What a member gets from call `call` that ended with `outcome`: a [`Held`] outcome, or the
/// call's error (the member has departed then).
pub(crate) fn hold(
    shared: &Arc<ProcessShared>,
    call: u64,
    outcome: Result<Arc<Outcome>>,
) -> Result<Held> {
    match outcome {
        Ok(outcome) => Ok(Held {
            shared: Arc::clone(shared),
            call,
            outcome: ManuallyDrop::new(outcome),
        }),
        Err(error) => {
            depart(shared, call);
            Err(error)
        }
    }
}

/// Waits for call `call` to end: its outcome, or the reason it cannot end.
pub(crate) fn wait(
    shared: &Arc<ProcessShared>,
    kind: Kind,
    call: u64,
    deadline: Option<Instant>,
) -> Result<Held> {
    wait_until(shared, kind, call, deadline, None).unwrap_or_else(|| Err(shared.broken_error()))
}

/// As [`wait`], but also gives up, quietly, at `until` (a wait's own deadline, not the team's):
/// `None` when `until` passed first with the call still running. Nothing changes then: the call
/// stays in its slot, the other members keep moving it, and a later wait or poll takes its
/// outcome. The team's `deadline` still breaks the team when it passes first.
pub(crate) fn wait_until(
    shared: &Arc<ProcessShared>,
    kind: Kind,
    call: u64,
    deadline: Option<Instant>,
    until: Option<Instant>,
) -> Option<Result<Held>> {
    let team_deadline = deadline;
    // The wait ends at the earlier of the two.
    let deadline = match (team_deadline, until) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let mut result = None;
    let missing = || missing_text(shared, call);
    let wait = shared.wait_for(kind, call, shared.oversubscribed, &missing);
    let mut ready = || match poll(shared, call) {
        Poll::Pending => false,
        Poll::Done(outcome) => {
            result = Some(Ok(outcome));
            true
        }
        Poll::Broken(error) => {
            result = Some(Err(error));
            true
        }
    };
    let timed_out_here = || shared.timed_out.load(std::sync::atomic::Ordering::Acquire) == call;
    // MPI moves a large collective forward only inside our tests (no progress thread), so
    // while the call is in flight and the waiter has a core, it keeps testing (spin, then
    // yield) instead of napping between tests, for at most `BUSY_FLIGHT`; after that, the
    // usual backoff and stall warnings.
    let start = Instant::now();
    let mut ended = false;
    while !shared.oversubscribed
        && slot(shared, call)
            .state
            .load(std::sync::atomic::Ordering::Acquire)
            == IN_FLIGHT
        && start.elapsed() < BUSY_FLIGHT
    {
        let step = Instant::now() + BUSY_STEP;
        let step = deadline.map_or(step, |d| d.min(step));
        ended = poll_until(&wait, Some(step), &mut ready);
        if ended || deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
    }
    let past_deadline = deadline.is_some_and(|d| Instant::now() >= d);
    // Past the deadline, one last look; otherwise the usual wait.
    let ended = ended
        || if past_deadline {
            ready()
        } else {
            poll_until(&wait, deadline, ready)
        };
    Some(match result {
        Some(Ok(outcome)) => hold(shared, call, outcome),
        Some(Err(_)) if timed_out_here() => {
            Err(time_out(shared, kind, call, Vec::new(), team_deadline))
        }
        Some(Err(error)) => Err(error),
        // The wait's own deadline, with the team's still ahead: the call goes on.
        None if !ended && !team_deadline.is_some_and(|d| Instant::now() >= d) => return None,
        None if !ended => Err(time_out(
            shared,
            kind,
            call,
            missing_members(shared, call),
            team_deadline,
        )),
        None => Err(shared.broken_error()),
    })
}

/// Global ranks of this process's members that have not arrived at `call`.
pub(crate) fn missing_members(shared: &ProcessShared, call: u64) -> Vec<usize> {
    let slot = slot(shared, call);
    if slot.state.load(std::sync::atomic::Ordering::Acquire) != GATHERING {
        return Vec::new();
    }
    match slot.inner.try_lock() {
        Ok(inner) => inner
            .posts
            .iter()
            .enumerate()
            .filter(|(_, p)| p.is_none())
            .map(|(i, _)| shared.first_rank() + i)
            .collect(),
        Err(_) => Vec::new(),
    }
}

fn missing_text(shared: &ProcessShared, call: u64) -> String {
    let missing = missing_members(shared, call);
    if missing.is_empty() {
        "the other processes (the call's MPI collective is in flight)".to_owned()
    } else {
        format!("member(s) {missing:?} of this process to arrive")
    }
}

/// A timeout: the team is broken from now on (an MPI collective cannot be cancelled).
pub(crate) fn time_out(
    shared: &ProcessShared,
    kind: Kind,
    call: u64,
    waiting_for: Vec<usize>,
    deadline: Option<Instant>,
) -> Error {
    let timeout = shared.options.timeout.unwrap_or_default();
    let after = deadline.map_or(timeout, |d| {
        timeout + Instant::now().saturating_duration_since(d)
    });
    shared
        .timed_out
        .store(call, std::sync::atomic::Ordering::Release);
    shared.mark_broken(|| {
        format!(
            "call {call} ({}) timed out after {after:?}, and an MPI collective cannot be \
             cancelled",
            kind.name()
        )
    });
    Error::Timeout {
        what: kind.name(),
        episode: call,
        waiting_for,
        after,
    }
}
