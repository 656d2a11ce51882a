//! What the participants of one call must agree on, and the error when they do not.
//!
//! A call's signature is its kind (`reduce` or `allreduce`) and its length. Nothing else can
//! differ between the participants of a call: the root, the operator and the element type belong
//! to the group (the builder fixes them once, and `Reduction<T>` fixes `T`). A participant's own
//! output length is checked by the participant itself before it publishes anything.
//!
//! # Where it is compared
//!
//! Every participant publishes its signature in its [`Slot`](super::slot::Slot), beside the
//! pointer to its data and the offer word, in the cache line its partner reads anyway to take
//! that data. A master compares its partner's signature with its own before it posts their pair's
//! job (the static tree and the dynamic algorithms), and the linear algorithm compares every
//! participant's with rank 0's once everyone has met, while it reads their data pointers. A
//! matched call therefore costs no cache-line transfer for the check: two more loads from a line
//! already in the cache, and one load of a word that only a mismatch writes when the call ends.
//!
//! The comparison is of the full fields, never a hash, and memory safety does not rest on it
//! either: a pair combines at most the shorter of the two lengths its members published, the last
//! pair writes at most what the destination's owner published, and a participant copies at most
//! what the last pair wrote.
//!
//! Pairwise checks along the tree cover every participant: if every master's partner agreed with
//! it, everyone agreed with the participant that completed the call. Data that comes from a
//! mismatched (or otherwise failed) subtree is marked poisoned; a master that meets poisoned data
//! combines nothing and passes the mark on, so the call still completes, without a result.

use crate::error::Error;

/// The call's kind, as published in a slot.
pub(crate) const KIND_REDUCE: usize = 1;
pub(crate) const KIND_ALLREDUCE: usize = 2;
/// Set beside the kind once the data a slot holds must not be combined, because the call already
/// went wrong (someone's arguments differ, or this participant's own output length is wrong).
pub(crate) const POISONED: usize = 1 << 2;

/// One participant's side of a call, or of the data it accumulated so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Signature {
    /// `KIND_REDUCE` or `KIND_ALLREDUCE`.
    pub(crate) kind: usize,
    /// The number of elements.
    pub(crate) len: usize,
    pub(crate) poisoned: bool,
}

impl Signature {
    /// The kind word a slot publishes: the kind, with [`POISONED`] where it applies.
    pub(crate) fn kind_word(&self) -> usize {
        if self.poisoned {
            self.kind | POISONED
        } else {
            self.kind
        }
    }

    /// The signature a slot's kind word and length describe.
    pub(crate) fn from_words(kind_word: usize, len: usize) -> Self {
        Signature {
            kind: kind_word & !POISONED,
            len,
            poisoned: kind_word & POISONED != 0,
        }
    }

    /// How many elements a pair of `self` and `theirs` combines: the common length, or `None`
    /// when the call is poisoned (either side already was, or they differ). A difference seen
    /// here for the first time comes back as the error to record.
    #[inline]
    pub(crate) fn meet(
        &self,
        rank: usize,
        theirs: &Signature,
        other: usize,
    ) -> Result<usize, Option<Error>> {
        if self == theirs && !self.poisoned {
            // Equal lengths; the minimum only keeps the pair inside both buffers whatever the
            // comparison decided.
            return Ok(self.len.min(theirs.len));
        }
        self.fail_to_meet(rank, theirs, other)
    }

    /// [`meet`](Self::meet) off the matched path, so that a matched call runs only the
    /// comparison.
    #[cold]
    #[inline(never)]
    fn fail_to_meet(
        &self,
        rank: usize,
        theirs: &Signature,
        other: usize,
    ) -> Result<usize, Option<Error>> {
        if self.poisoned || theirs.poisoned {
            return Err(None);
        }
        Err(self.difference(rank, theirs, other))
    }

    /// The first field in which `theirs` (participant `other`'s) differs from `self` (participant
    /// `rank`'s), as the error both sides get.
    pub(crate) fn difference(
        &self,
        rank: usize,
        theirs: &Signature,
        other: usize,
    ) -> Option<Error> {
        let mismatch = |what: &'static str, ours: String, theirs: String| {
            Some(Error::Mismatch {
                what,
                rank,
                ours,
                other,
                theirs,
            })
        };
        if self.kind != theirs.kind {
            return mismatch(
                "operation",
                kind_name(self.kind).to_string(),
                kind_name(theirs.kind).to_string(),
            );
        }
        if self.len != theirs.len {
            return mismatch(
                "length",
                format!("{} elements", self.len),
                format!("{} elements", theirs.len),
            );
        }
        None
    }
}

/// The error of a participant whose output is not as long as its input.
pub(crate) fn output_length(rank: usize, input: usize, output: usize) -> Error {
    Error::Mismatch {
        what: "output length",
        rank,
        ours: format!("an input of {input} elements"),
        other: rank,
        theirs: format!("an output of {output} elements"),
    }
}

fn kind_name(kind: usize) -> &'static str {
    if kind == KIND_ALLREDUCE {
        "allreduce"
    } else {
        "reduce"
    }
}

#[cfg(all(test, not(phasers_loom)))]
mod tests {
    use super::*;

    fn sig(kind: usize, len: usize) -> Signature {
        Signature {
            kind,
            len,
            poisoned: false,
        }
    }

    #[test]
    fn equal_signatures_meet_at_their_length() {
        let a = sig(KIND_REDUCE, 9);
        assert_eq!(a.meet(0, &a, 1), Ok(9));
    }

    #[test]
    fn a_difference_names_both_sides() {
        let err = sig(KIND_REDUCE, 8)
            .meet(3, &sig(KIND_REDUCE, 9), 5)
            .unwrap_err()
            .expect("a new difference");
        assert_eq!(
            err,
            Error::Mismatch {
                what: "length",
                rank: 3,
                ours: "8 elements".into(),
                other: 5,
                theirs: "9 elements".into(),
            }
        );
        // The kind is compared first: it says more about what the program did.
        let err = sig(KIND_ALLREDUCE, 8)
            .difference(0, &sig(KIND_REDUCE, 2), 1)
            .expect("a difference");
        assert!(matches!(
            err,
            Error::Mismatch {
                what: "operation",
                ..
            }
        ));
        assert!(err.to_string().contains("allreduce"));
    }

    #[test]
    fn poison_is_passed_on_without_a_new_error() {
        let mut a = sig(KIND_REDUCE, 4);
        a.poisoned = true;
        let word = a.kind_word();
        assert_eq!(Signature::from_words(word, 4), a);
        assert_eq!(sig(KIND_REDUCE, 7).meet(0, &a, 1), Err(None));
        assert_eq!(a.meet(0, &sig(KIND_REDUCE, 4), 1), Err(None));
    }
}
