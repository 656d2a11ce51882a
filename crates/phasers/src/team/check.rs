//! Comparing members' posts: what checked mode reports, and what memory safety always needs.

use super::kind::{Kind, Path};
use super::post::Post;
use super::shared::TeamShared;
use crate::error::Error;

/// The first way `theirs` (member `other`'s post) differs from `ours` (member `rank`'s), as an
/// [`Error::Mismatch`]. `full` adds what only checked teams compare: the sync mode, blocking
/// against non-blocking, and the operator. `barrier_checked` values and `split_grid` shapes are always compared.
pub(crate) fn difference(
    ours: &Post,
    rank: usize,
    theirs: &Post,
    other: usize,
    full: bool,
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
    if ours.kind != theirs.kind {
        return mismatch("collective", ours.kind.to_string(), theirs.kind.to_string());
    }
    if ours.type_id != theirs.type_id {
        return mismatch(
            "element type",
            ours.type_name.to_string(),
            theirs.type_name.to_string(),
        );
    }
    if ours.count != theirs.count {
        return mismatch("length", length(ours), length(theirs));
    }
    if ours.kind.has_root() && ours.root != theirs.root {
        return mismatch("root", ours.root.to_string(), theirs.root.to_string());
    }
    if matches!(
        (ours.path, theirs.path),
        (Path::Linear, Path::Group) | (Path::Group, Path::Linear)
    ) {
        // The team's reduction group runs built-in ops only: the paths differ because the
        // operators do (a built-in op against a function of the caller's).
        return mismatch("operation", ours.op.to_string(), theirs.op.to_string());
    }
    if ours.path != theirs.path {
        return mismatch("form", form(ours), form(theirs));
    }
    if full && ours.mode != theirs.mode {
        return mismatch("sync mode", ours.mode.to_string(), theirs.mode.to_string());
    }
    if full && ours.blocking != theirs.blocking {
        return mismatch("form", blocking(ours), blocking(theirs));
    }
    if full && ours.kind.combines() && ours.op != theirs.op {
        return mismatch("operation", ours.op.to_string(), theirs.op.to_string());
    }
    if ours.value != theirs.value {
        match ours.kind {
            Kind::BarrierChecked => {
                return mismatch(
                    "barrier value",
                    ours.value.to_string(),
                    theirs.value.to_string(),
                )
            }
            Kind::Split => {
                return mismatch(
                    "split_grid columns",
                    ours.value.to_string(),
                    theirs.value.to_string(),
                )
            }
            _ => {}
        }
    }
    None
}

fn length(post: &Post) -> String {
    match post.kind {
        Kind::Scatter => format!("{} elements per member", post.count),
        _ => format!("{} elements", post.count),
    }
}

fn blocking(post: &Post) -> String {
    if post.blocking {
        format!("{} (the blocking form)", post.kind)
    } else {
        format!("i{} (the non-blocking form)", post.kind)
    }
}

fn form(post: &Post) -> String {
    match post.path {
        Path::Linear | Path::Group => "the blocking form with AllSync or MySync".to_string(),
        Path::Pull if post.kind.combines() => {
            "a non-blocking form or NoSync (inputs copied)".to_string()
        }
        Path::Pull => "data moved by copy".to_string(),
        Path::Inline => "an inline payload".to_string(),
        Path::None => "no data".to_string(),
    }
}

/// Compares every member's post of call `seq` with member 0's. Called by the meeting's completer,
/// once every member has posted.
pub(crate) fn compare_all(shared: &TeamShared, seq: u64, full: bool) -> Option<Error> {
    // SAFETY: the caller completes the meeting of call `seq`: every member has posted for it,
    // and none writes that parity again before the meeting is released.
    let first = unsafe { shared.slots[0].read_post(seq) };
    for other in 1..shared.size {
        // SAFETY: as above.
        let theirs = unsafe { shared.slots[other].read_post(seq) };
        if let Some(error) = difference(&first, 0, &theirs, other, full) {
            return Some(error);
        }
    }
    None
}
