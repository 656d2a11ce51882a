//! What a member posts for a call: the signature that members must agree on, its own argument
//! errors, and its staged input; and how the posts of one process are compared.

use std::any::TypeId;
use std::sync::Arc;

use super::bytes::Bytes;
use super::reducer::Reducer;
use crate::error::Error;

/// The collective a member called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Barrier = 1,
    Broadcast,
    Reduce,
    Allreduce,
    Gather,
    Scatter,
    Split,
}

impl Kind {
    pub(crate) const ALL: [Kind; 7] = [
        Kind::Barrier,
        Kind::Broadcast,
        Kind::Reduce,
        Kind::Allreduce,
        Kind::Gather,
        Kind::Scatter,
        Kind::Split,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Barrier => "barrier",
            Kind::Broadcast => "broadcast",
            Kind::Reduce => "reduce",
            Kind::Allreduce => "allreduce",
            Kind::Gather => "gather",
            Kind::Scatter => "scatter",
            Kind::Split => "split",
        }
    }

    pub(crate) fn has_root(self) -> bool {
        matches!(
            self,
            Kind::Broadcast | Kind::Reduce | Kind::Gather | Kind::Scatter
        )
    }

    pub(crate) fn combines(self) -> bool {
        matches!(self, Kind::Reduce | Kind::Allreduce)
    }
}

/// What every member of a call must pass alike.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Signature {
    pub(crate) kind: Kind,
    pub(crate) type_id: TypeId,
    pub(crate) type_name: &'static str,
    pub(crate) elem_size: usize,
    /// Elements per member (the input's length; the output's for scatter).
    pub(crate) len: usize,
    pub(crate) root: usize,
    /// The op's name, `""` for calls that do not combine.
    pub(crate) op: &'static str,
}

impl Signature {
    pub(crate) fn new<T: 'static>(kind: Kind, len: usize, root: usize) -> Signature {
        Signature {
            kind,
            type_id: TypeId::of::<T>(),
            type_name: std::any::type_name::<T>(),
            elem_size: std::mem::size_of::<T>(),
            len,
            root: if kind.has_root() { root } else { 0 },
            op: "",
        }
    }

    /// Bytes of one member's block.
    pub(crate) fn block(&self) -> usize {
        self.len * self.elem_size
    }

    pub(crate) fn length_text(&self) -> String {
        match self.kind {
            Kind::Scatter => format!("{} elements per member", self.len),
            _ => format!("{} elements", self.len),
        }
    }

    /// The first way `theirs` differs from `self`: (what, ours, theirs). `full` adds the
    /// operator, which only checked mode compares.
    pub(crate) fn difference(
        &self,
        theirs: &Signature,
        same_type: bool,
        full: bool,
    ) -> Option<(&'static str, String, String)> {
        if self.kind != theirs.kind {
            return Some((
                "collective",
                self.kind.name().to_owned(),
                theirs.kind.name().to_owned(),
            ));
        }
        if !same_type || self.elem_size != theirs.elem_size {
            return Some((
                "element type",
                self.type_name.to_owned(),
                theirs.type_name.to_owned(),
            ));
        }
        if self.len != theirs.len {
            return Some(("length", self.length_text(), theirs.length_text()));
        }
        if self.kind.has_root() && self.root != theirs.root {
            return Some(("root", self.root.to_string(), theirs.root.to_string()));
        }
        if full && self.kind.combines() && self.op != theirs.op {
            return Some(("operation", self.op.to_owned(), theirs.op.to_owned()));
        }
        None
    }
}

/// A bad argument of a member's own.
#[derive(Clone, Debug)]
pub(crate) struct Invalid {
    pub(crate) error: Error,
    /// Every member of a matching call sees the same problem (a root out of range, a bitwise op
    /// on floats, a call too large for MPI), so every process leaves MPI out of the call alike.
    pub(crate) everywhere: bool,
}

/// One member's part of a call.
pub(crate) struct Post {
    pub(crate) sig: Signature,
    pub(crate) invalid: Option<Invalid>,
    /// The member's contribution (its input, or the root's buffer), copied.
    pub(crate) input: Bytes,
    pub(crate) reducer: Option<Arc<dyn Reducer>>,
}

/// An error that a process found in its own members' posts.
#[derive(Clone, Debug)]
pub(crate) struct LocalError {
    pub(crate) error: Error,
    /// MPI is left out of the call on every process (see [`Invalid::everywhere`]).
    pub(crate) everywhere: bool,
}

/// Compares the posts of one process's members (local rank order; `first_rank` is local member
/// 0's global rank), then looks for their own argument errors.
pub(crate) fn check_local(posts: &[Post], first_rank: usize, full: bool) -> Option<LocalError> {
    let first = &posts[0];
    for (i, post) in posts.iter().enumerate().skip(1) {
        let same_type = first.sig.type_id == post.sig.type_id;
        if let Some((what, ours, theirs)) = first.sig.difference(&post.sig, same_type, full) {
            return Some(LocalError {
                error: Error::Mismatch {
                    what,
                    rank: first_rank,
                    ours,
                    other: first_rank + i,
                    theirs,
                },
                everywhere: false,
            });
        }
    }
    posts.iter().find_map(|p| {
        p.invalid.as_ref().map(|invalid| LocalError {
            error: invalid.error.clone(),
            everywhere: invalid.everywhere,
        })
    })
}
