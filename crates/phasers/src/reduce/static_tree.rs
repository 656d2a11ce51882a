//! Static tree: pairs fixed by rank, the distance doubling each round (seed 003's "static").
//!
//! Counting positions from the root, in round `r` the participant at position `p` with
//! `p % 2^(r+1) == 0` masters the one at `p + 2^r`, which offers its data once its own subtree is
//! reduced. The pair splits the work (chunks claimed from the master's job, see
//! [`Job`](super::job)); the slave returns as soon as its data is consumed, the master goes on to
//! the next round. The root, position 0, masters the last pair, whose destination is the final
//! buffer: the root's output for `reduce`, the shared result for `allreduce`.
//!
//! Every element is combined along the same tree on every call, so results are the same bits
//! for a fixed N.

use super::call::{Bail, Call, Role};
use super::handle::Caller;
use super::signature::{Signature, KIND_ALLREDUCE};
use super::slot::{tag, CALLED, OFFERED, TAKEN, WITHDRAWN};
use crate::primitive::Ordering;
use crate::wait::Signal;

pub(crate) fn run<T: Copy + Send + Sync + 'static>(
    me: &mut Caller<'_, T>,
    call: &Call<'_, T>,
) -> Result<Role, Bail> {
    let shared = me.shared;
    let position = shared.virtual_rank(me.rank, call.root);
    let mut acc = call.input;
    // What `acc` holds: this participant's input, then what its pairs combined.
    let mut held = call.signature();
    let mut distance = 1;
    while distance < shared.parties {
        if position % (2 * distance) == distance {
            let called = offer(me, call, acc, held);
            if me.wait(called.0, |v| v == called.1, true).is_err() && withdraw(call, called) {
                return Err(Bail::Broken);
            }
            me.serve(call)?;
            return Ok(Role::Consumed);
        }
        if let Some((partner, offered)) = partner_at(me, call, position + distance) {
            me.wait(offered.0, |v| v == offered.1, true)?;
            let pair = take(me, call, partner, held, 2 * distance >= shared.parties)?;
            me.run_pair(call, partner, pair.dest, acc, pair.theirs, pair.len, false)?;
            (acc, held) = (pair.dest as *const T, pair.held);
        }
        distance *= 2;
    }
    me.complete(call.episode, call.len);
    Ok(Role::Completed)
}

/// [`run`] for a task.
pub(crate) async fn run_in_task<T: Copy + Send + Sync + 'static>(
    me: &mut Caller<'_, T>,
    call: &Call<'_, T>,
) -> Result<Role, Bail> {
    let shared = me.shared;
    let position = shared.virtual_rank(me.rank, call.root);
    let mut acc = call.input;
    let mut held = call.signature();
    let mut distance = 1;
    while distance < shared.parties {
        if position % (2 * distance) == distance {
            let called = offer(me, call, acc, held);
            let (word, value) = called;
            let waited = me.wait_in_task(word, move |v| v == value, true).await;
            if waited.is_err() && withdraw(call, called) {
                return Err(Bail::Broken);
            }
            me.serve_in_task(call).await?;
            return Ok(Role::Consumed);
        }
        if let Some((partner, (word, value))) = partner_at(me, call, position + distance) {
            me.wait_in_task(word, move |v| v == value, true).await?;
            let pair = take(me, call, partner, held, 2 * distance >= shared.parties)?;
            me.run_pair_in_task(call, partner, pair.dest, acc, pair.theirs, pair.len, false)
                .await?;
            (acc, held) = (pair.dest as *const T, pair.held);
        }
        distance *= 2;
    }
    me.complete(call.episode, call.len);
    Ok(Role::Completed)
}

/// A word and the value to wait for in it.
type Awaited<'s> = (&'s Signal, u64);

/// As the slave of this round: offers `acc`, and returns what to wait for: the master's call.
#[inline]
fn offer<'s, T: Copy + Send + Sync + 'static>(
    me: &Caller<'s, T>,
    call: &Call<'_, T>,
    acc: *const T,
    held: Signature,
) -> Awaited<'s> {
    let slot = &me.shared.slots[me.rank];
    slot.publish_acc(acc as usize, held);
    slot.offer.publish(tag(call.episode, OFFERED));
    (&slot.offer, tag(call.episode, CALLED))
}

/// A slave that gave up on a broken group withdraws its offer, unless a master took it first
/// (then it serves the job as usual: a master that took an offer always posts it). Returns
/// whether it withdrew: then nothing of this participant's is in anyone's hands.
#[inline]
fn withdraw<T>(call: &Call<'_, T>, (offer, _): Awaited<'_>) -> bool {
    offer
        .compare_publish(tag(call.episode, OFFERED), tag(call.episode, WITHDRAWN))
        .is_ok()
}

/// The partner at `partner_position`, if there is one this round, and its offer to wait for.
#[inline]
fn partner_at<'s, T: Copy + Send + Sync + 'static>(
    me: &Caller<'s, T>,
    call: &Call<'_, T>,
    partner_position: usize,
) -> Option<(usize, Awaited<'s>)> {
    let shared = me.shared;
    (partner_position < shared.parties).then(|| {
        let partner = shared.real_rank(partner_position, call.root);
        (
            partner,
            (&shared.slots[partner].offer, tag(call.episode, OFFERED)),
        )
    })
}

/// What a master combines with its partner's offer.
struct Pair<T> {
    dest: *mut T,
    theirs: *const T,
    len: usize,
    /// What `dest` holds afterwards.
    held: Signature,
}

/// As the master: takes the partner's offer (it withdrew if that fails: the group broke while
/// it waited), and checks it against this participant's data. The last pair of an allreduce
/// writes the group's result buffer.
#[inline]
fn take<T: Copy + Send + Sync + 'static>(
    me: &Caller<'_, T>,
    call: &Call<'_, T>,
    partner: usize,
    held: Signature,
    last: bool,
) -> Result<Pair<T>, Bail> {
    let shared = me.shared;
    let episode = call.episode;
    let offer = &shared.slots[partner].offer;
    if offer
        .compare_publish(tag(episode, OFFERED), tag(episode, TAKEN))
        .is_err()
    {
        return Err(Bail::Broken);
    }
    let combined = me.check_partner(call, held, partner);
    let len = combined.unwrap_or(0);
    let dest = if combined.is_some() && last && call.kind == KIND_ALLREDUCE {
        me.result_buffer(len)
    } else {
        call.work
    };
    Ok(Pair {
        dest,
        theirs: shared.slots[partner].acc.load(Ordering::Relaxed) as *const T,
        len,
        held: Signature {
            len,
            poisoned: combined.is_none(),
            ..held
        },
    })
}
