//! What a member posts for a call: the signature that members must agree on, its own argument
//! errors, and its staged input; and how the posts of one process are compared.

use std::any::TypeId;
use std::sync::Arc;

use super::bytes::Bytes;
use super::reducer::Reducer;
use crate::error::Error;

/// The largest byte count MPI takes in one call (a C `int`).
pub(crate) const MPI_MAX_BYTES: usize = i32::MAX as usize;

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
    /// The op's name, `""` for calls that do not combine; for the first step of a composed
    /// call, the call (`"allgather"`, `"scan_inclusive with Op::Sum"`, see `composed.rs`).
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

    /// The call in words, for the two sides of a [`Error::Mismatch`]: "allreduce of 2 u64
    /// elements with Op::Sum".
    pub(crate) fn describe(&self) -> String {
        describe_call(self.kind, self.type_name, self.len, self.root, self.op)
    }

    /// What differs first between `self` and `theirs`, in the order a reader checks a call:
    /// the collective, the element type, the length, the root, the operator. `full` adds the
    /// operator, which only checked mode compares.
    pub(crate) fn difference(
        &self,
        theirs: &Signature,
        same_type: bool,
        full: bool,
    ) -> Option<&'static str> {
        if self.kind != theirs.kind {
            Some("collective")
        } else if !same_type || self.elem_size != theirs.elem_size {
            Some("element type")
        } else if self.len != theirs.len {
            Some("length")
        } else if self.kind.has_root() && self.root != theirs.root {
            Some("root")
        } else if full && !same_name(self.op, theirs.op) {
            // Only reductions and the first steps of composed calls (`composed.rs`) name an
            // op; every other call leaves it empty.
            Some("operation")
        } else {
            None
        }
    }
}

/// Whether two ops' names (static strings) are equal, without `memcmp` for the empty name of
/// calls that do not combine. An empty string literal points at address 1 (rustc 1.95), and
/// glibc's vector `memcmp` issues a masked load there even for zero bytes; on the AMD EPYC VM
/// comparing `""` with `""` that way made the 2-thread barrier of one process take 210-250 ns
/// against 80-100 ns with this test (10^6 calls, three runs each), most likely the cost of
/// suppressing the masked load's fault on an unmapped page.
fn same_name(a: &str, b: &str) -> bool {
    a.len() == b.len() && (a.is_empty() || std::ptr::eq(a.as_ptr(), b.as_ptr()) || a == b)
}

/// A call in words: "barrier", "broadcast of 2 u64 elements from root 0", "allreduce of 2 u64
/// elements with Op::Sum", "scatter of 2 u64 elements per member from root 1", ...
pub(crate) fn describe_call(
    kind: Kind,
    type_name: &str,
    len: usize,
    root: usize,
    op: &str,
) -> String {
    let elements = |per_member: bool| {
        let each = if per_member { " per member" } else { "" };
        format!(
            "{len} {type_name} element{}{each}",
            if len == 1 { "" } else { "s" }
        )
    };
    match kind {
        Kind::Barrier | Kind::Split => kind.name().to_owned(),
        Kind::Broadcast => format!("broadcast of {} from root {root}", elements(false)),
        Kind::Reduce => format!("reduce of {} to root {root} with Op::{op}", elements(false)),
        Kind::Allreduce => format!("allreduce of {} with Op::{op}", elements(false)),
        Kind::Gather if op.is_empty() => format!("gather of {} to root {root}", elements(false)),
        // The first step of a composed call, which names the call (see `composed.rs`).
        Kind::Gather => format!(
            "gather of {} to root {root}, step 1 of {op}",
            elements(false)
        ),
        Kind::Scatter => format!("scatter of {} from root {root}", elements(true)),
    }
}

/// " (process 3)" where the team has several processes, so both sides of a mismatch say where
/// the call was made.
pub(crate) fn in_process(process: Option<usize>) -> String {
    process.map_or_else(String::new, |p| format!(" (process {p})"))
}

/// A 64-bit FNV-1a hash: how a name (an element type, an operator) travels in a fixed-size word.
pub(crate) fn name_hash(name: &str) -> u64 {
    if name.is_empty() {
        return 0;
    }
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
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
/// 0's global rank, `process` this process where the team has several), then looks for their
/// own argument errors.
pub(crate) fn check_local(
    posts: &[Post],
    first_rank: usize,
    process: Option<usize>,
    full: bool,
) -> Option<LocalError> {
    if let Some(error) = compare(posts.iter().map(|p| &p.sig), first_rank, process, full) {
        return Some(LocalError {
            error,
            everywhere: false,
        });
    }
    posts.iter().find_map(|p| {
        p.invalid.as_ref().map(|invalid| LocalError {
            error: invalid.error.clone(),
            everywhere: invalid.everywhere,
        })
    })
}

/// The first difference between local member 0's signature and another's, as the
/// [`Error::Mismatch`] every member of the process gets (arguments as for [`check_local`]).
pub(crate) fn compare<'a>(
    mut sigs: impl Iterator<Item = &'a Signature>,
    first_rank: usize,
    process: Option<usize>,
    full: bool,
) -> Option<Error> {
    let first = sigs.next()?;
    sigs.enumerate().find_map(|(i, sig)| {
        let same_type = first.type_id == sig.type_id;
        first.difference(sig, same_type, full).map(|what| {
            let at = in_process(process);
            Error::Mismatch {
                what,
                rank: first_rank,
                ours: format!("{}{at}", first.describe()),
                other: first_rank + i + 1,
                theirs: format!("{}{at}", sig.describe()),
            }
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_names_compare_by_content() {
        assert!(same_name("", ""));
        assert!(same_name("Sum", "Sum"));
        assert!(same_name("Sum", &String::from("Sum")));
        assert!(!same_name("Sum", "Max"));
        assert!(!same_name("", "Sum"));
    }

    #[test]
    fn calls_read_as_words() {
        let mut sig = Signature::new::<u64>(Kind::Allreduce, 2, 5);
        sig.op = "Sum";
        assert_eq!(sig.describe(), "allreduce of 2 u64 elements with Op::Sum");
        let bcast = Signature::new::<f64>(Kind::Broadcast, 1, 3);
        assert_eq!(bcast.describe(), "broadcast of 1 f64 element from root 3");
        let scatter = Signature::new::<u32>(Kind::Scatter, 4, 0);
        assert_eq!(
            scatter.describe(),
            "scatter of 4 u32 elements per member from root 0"
        );
        assert_eq!(
            Signature::new::<()>(Kind::Barrier, 0, 0).describe(),
            "barrier"
        );
        assert_eq!(sig.difference(&bcast, false, true), Some("collective"));
        let mut max = sig;
        max.op = "Max";
        assert_eq!(sig.difference(&max, true, true), Some("operation"));
        assert_eq!(sig.difference(&max, true, false), None);
        assert_eq!(in_process(Some(1)), " (process 1)");
        assert_ne!(name_hash("u64"), name_hash("i64"));
        assert_eq!(name_hash(""), 0);
    }
}
