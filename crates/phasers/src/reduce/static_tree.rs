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

pub(crate) async fn run<T: Copy + Send + Sync + 'static>(
    me: &mut Caller<'_, T>,
    call: &Call<'_, T>,
) -> Result<Role, Bail> {
    let shared = me.shared;
    let parties = shared.parties;
    let position = shared.virtual_rank(me.rank, call.root);
    let episode = call.episode;
    let mut acc = call.input;
    // What `acc` holds: this participant's input, then what its pairs combined.
    let mut held = call.signature();
    let mut distance = 1;
    while distance < parties {
        if position % (2 * distance) == distance {
            return offer_and_serve(me, call, acc, held).await;
        }
        let partner_position = position + distance;
        if partner_position < parties {
            let partner = shared.real_rank(partner_position, call.root);
            let offer = &shared.slots[partner].offer;
            let offered = tag(episode, OFFERED);
            me.wait(offer, move |v| v == offered, true).await?;
            if offer
                .compare_publish(tag(episode, OFFERED), tag(episode, TAKEN))
                .is_err()
            {
                // The partner withdrew: the group broke while it waited.
                return Err(Bail::Broken);
            }
            let combined = me.check_partner(call, held, partner);
            let last = 2 * distance >= parties;
            let len = combined.unwrap_or(0);
            let dest = if combined.is_some() && last && call.kind == KIND_ALLREDUCE {
                me.result_buffer(len)
            } else {
                call.work
            };
            let theirs = shared.slots[partner].acc.load(Ordering::Relaxed) as *const T;
            me.run_pair(call, partner, dest, acc, theirs, len, false)
                .await?;
            acc = dest;
            held = Signature {
                len,
                poisoned: combined.is_none(),
                ..held
            };
        }
        distance *= 2;
    }
    me.complete(episode, call.len);
    Ok(Role::Completed)
}

/// As the slave of this round: offers `acc` and serves the master's job. If the group breaks
/// before a master took the offer, the offer is withdrawn and nothing of this participant's is in
/// anyone's hands.
async fn offer_and_serve<T: Copy + Send + Sync + 'static>(
    me: &mut Caller<'_, T>,
    call: &Call<'_, T>,
    acc: *const T,
    held: Signature,
) -> Result<Role, Bail> {
    let shared = me.shared;
    let episode = call.episode;
    let slot = &shared.slots[me.rank];
    slot.publish_acc(acc as usize, held);
    slot.offer.publish(tag(episode, OFFERED));
    let called = tag(episode, CALLED);
    if me
        .wait(&slot.offer, move |v| v == called, true)
        .await
        .is_err()
        && slot
            .offer
            .compare_publish(tag(episode, OFFERED), tag(episode, WITHDRAWN))
            .is_ok()
    {
        return Err(Bail::Broken);
    }
    me.serve(call).await?;
    Ok(Role::Consumed)
}
