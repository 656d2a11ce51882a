//! A call's signature: what members must agree on, folded into one word that rides in the
//! arrival at the opening meeting.
//!
//! Every member adds `1 + (signature << COUNT_BITS)` to the meeting's arrival word (see
//! [`Meeting::arrive`](super::meeting::Meeting::arrive)), so the word's high bits end a meeting
//! holding the sum of every member's signature. The last arrival already reads that word (the
//! result of its own add tells it that it is last), so comparing the sum with `size` times its own
//! signature costs no cache line beyond the barrier's: a matched call pays for hashing its
//! arguments, a few nanoseconds, and nothing else. Only when the sums differ does the completer
//! read every member's post, to find and name the first difference
//! ([`check::compare_all`](super::check::compare_all)).
//!
//! The hash is keyed with a random value drawn when the team is built, so no choice of arguments
//! makes two different calls collide on purpose; a mismatch then goes unnoticed with probability
//! about 2^-47 per call (the width of the sum). Memory safety never depends on it: a member
//! checks a partner's post before it touches the partner's buffers (`movement`), and the inline
//! paths compare every post exactly before combining.

use std::any::TypeId;
use std::hash::{BuildHasher, Hash, Hasher};

use super::kind::Kind;
use super::post::{Fields, Post};
use super::sync_mode::SyncMode;

/// The low bits of the arrival word count arrivals; they must hold more values than a meeting
/// can see (at most [`MAX_MEMBERS`](super::MAX_MEMBERS) + 1, below 2^17).
pub(crate) const COUNT_BITS: u32 = 17;

/// What one arrival adds to the arrival word for a call of `signature`.
#[inline]
pub(crate) fn arrival(signature: u64) -> u64 {
    1u64.wrapping_add(signature << COUNT_BITS)
}

/// What a meeting's arrival word holds once `size` members arrived with the same `signature`,
/// starting from zero.
#[inline]
pub(crate) fn all_matched(size: usize, signature: u64) -> u64 {
    arrival(signature).wrapping_mul(size as u64)
}

/// A random key for one team's signatures.
pub(crate) fn new_key() -> u64 {
    if cfg!(phasers_loom) {
        // Loom replays executions and needs them deterministic.
        return 0x5EED;
    }
    std::collections::hash_map::RandomState::new().hash_one(0u8) | 1
}

/// The signature of `post`, keyed with `key`: every field that
/// [`check::difference`](super::check::difference) compares in checked mode, and nothing else, so
/// that equal signatures come from calls the full comparison accepts.
///
/// The fields are packed into five words, each multiplied by its own odd constant after a xor
/// with a rotation of the key, and the products summed: five independent multiplies, which a core
/// runs side by side, then one finalizer. It sits on the path of every call's last arrival, so it
/// is kept to a few nanoseconds.
#[inline]
pub(crate) fn of(post: &Post, op_code: u64, key: u64) -> u64 {
    of_fields(
        &Fields {
            kind: post.kind,
            path: post.path,
            mode: post.mode,
            blocking: post.blocking,
            count: post.count,
            root: post.root,
            type_id: post.type_id,
            value: post.value,
        },
        op_code,
        key,
    )
}

/// What a light call's signature depends on (see `light.rs`): on each light path every other field of
/// [`Fields`] is fixed (a barrier: no data, no root, no value; a one-word allreduce: one element,
/// inline, no root, no value; both blocking).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct LightKey {
    pub(crate) kind: Kind,
    pub(crate) mode: SyncMode,
    pub(crate) type_id: TypeId,
    pub(crate) op_code: u64,
}

/// Where a barrier's signature is kept in `Member::light_signatures`; a one-word allreduce's is in
/// the other place, so that calls alternating between the two keep both.
pub(crate) const LIGHT_BARRIER: usize = 0;

/// [`of`] from the fields alone, for the light paths, which build no whole post (see
/// `Member::barrier_light`).
#[inline]
pub(crate) fn of_fields(post: &Fields, op_code: u64, key: u64) -> u64 {
    let op = if post.kind.combines() { op_code } else { 0 };
    let shape = post.kind as u64
        | (post.path as u64) << 8
        | (post.mode as u64) << 16
        | u64::from(post.blocking) << 24
        | op << 32;
    let root = if post.kind.has_root() {
        post.root as u64
    } else {
        0
    };
    let value = if matches!(post.kind, Kind::BarrierChecked | Kind::Split) {
        post.value
    } else {
        0
    };
    let words = [
        shape,
        post.count as u64,
        root,
        type_code(post.type_id),
        value,
    ];
    let mut sum = 0u64;
    for (index, (word, multiplier)) in words.into_iter().zip(MULTIPLIERS).enumerate() {
        let keyed = word ^ key.rotate_left(13 * index as u32);
        sum = sum.wrapping_add(keyed.wrapping_mul(multiplier));
    }
    finish(sum)
}

/// Odd 64-bit constants with well-mixed bits (from the fractional parts of square roots of
/// primes), one per packed word.
const MULTIPLIERS: [u64; 5] = [
    0x6A09_E667_F3BC_C909,
    0xBB67_AE85_84CA_A73B,
    0x3C6E_F372_FE94_F82B,
    0xA54F_F53A_5F1D_36F1,
    0x510E_527F_ADE6_82D1,
];

/// A bijective finalizer (xor-shift, multiply), so that words that differ anywhere differ in the
/// 47 bits the arrival sum keeps.
#[inline]
fn finish(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    x ^= x >> 33;
    x = x.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    x ^ (x >> 33)
}

/// The element type as a word. `TypeId::of::<T>()` is a constant of the monomorphized caller, so
/// this usually folds away.
#[inline]
fn type_code(type_id: TypeId) -> u64 {
    let mut hasher = Words(0);
    type_id.hash(&mut hasher);
    hasher.0
}

/// Collects what `TypeId` hashes into one word.
struct Words(u64);

impl Hasher for Words {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(byte);
        }
    }

    fn write_u64(&mut self, word: u64) {
        self.0 = self.0.rotate_left(17) ^ word;
    }

    fn write_u128(&mut self, word: u128) {
        self.write_u64(word as u64);
        self.write_u64((word >> 64) as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::super::kind::Path;
    use super::*;

    fn post(kind: Kind, count: usize) -> Post {
        let mut post = Post::empty();
        post.kind = kind;
        post.count = count;
        post.type_id = TypeId::of::<u64>();
        post.path = if count * 8 <= 64 {
            Path::Inline
        } else {
            Path::Linear
        };
        post
    }

    #[test]
    fn every_compared_field_changes_the_signature() {
        let key = new_key();
        let base = post(Kind::Allreduce, 2);
        let sig = of(&base, 1, key);
        assert_eq!(sig, of(&base, 1, key));
        let mut other = base;
        other.count = 3;
        assert_ne!(sig, of(&other, 1, key));
        other = base;
        other.kind = Kind::Broadcast;
        assert_ne!(sig, of(&other, 1, key));
        other = base;
        other.type_id = TypeId::of::<i64>();
        assert_ne!(sig, of(&other, 1, key));
        other = base;
        other.blocking = false;
        assert_ne!(sig, of(&other, 1, key), "blocking against non-blocking");
        assert_ne!(sig, of(&base, 2, key), "the operator");
    }

    #[test]
    fn fields_a_call_does_not_compare_leave_it_alone() {
        let key = new_key();
        let mut barrier = post(Kind::Barrier, 0);
        barrier.path = Path::None;
        let sig = of(&barrier, 0, key);
        let mut other = barrier;
        other.root = 5;
        other.value = 9;
        assert_eq!(
            sig,
            of(&other, 3, key),
            "root, value and operator of a barrier"
        );
    }

    #[test]
    fn a_sum_of_matched_arrivals_is_recognized_and_one_stranger_is_not() {
        let key = new_key();
        let ours = of(&post(Kind::Allreduce, 2), 1, key);
        let theirs = of(&post(Kind::Allreduce, 102), 1, key);
        for size in [1usize, 2, 8, 64, 65_535] {
            let matched = (0..size).fold(0u64, |word, _| word.wrapping_add(arrival(ours)));
            assert_eq!(matched, all_matched(size, ours));
            assert_eq!(matched & ((1 << COUNT_BITS) - 1), size as u64);
            let one_off = matched
                .wrapping_sub(arrival(ours))
                .wrapping_add(arrival(theirs));
            assert_ne!(one_off, all_matched(size, ours), "size {size}");
            assert_eq!(one_off & ((1 << COUNT_BITS) - 1), size as u64);
        }
    }
}
