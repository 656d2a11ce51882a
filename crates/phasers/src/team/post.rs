//! What a member posts for each call: the arguments others check and the buffers they use.

use std::any::TypeId;

use super::kind::{Kind, Path};
use super::sync_mode::SyncMode;

/// The largest payload carried inline, in the posts and the meeting's line.
pub(crate) const INLINE_BYTES: usize = 64;

/// 64 bytes aligned to 64: the unit of inline payloads and staging areas, so that any element
/// type with an alignment up to 64 can live in them.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub(crate) struct Chunk(pub(crate) [u8; INLINE_BYTES]);

impl Chunk {
    pub(crate) const ZERO: Chunk = Chunk([0; INLINE_BYTES]);
}

/// One member's arguments for one call.
///
/// The fields the meeting's completer reads on the hot path (sequence, kind, counts, type and the
/// inline payload) come first, so that they share the post's first two cache lines.
#[derive(Clone, Copy)]
#[repr(C)]
pub(crate) struct Post {
    /// The call's sequence number on this team; a post from another call is never trusted.
    pub(crate) seq: u64,
    /// The element count that must agree across members (see each collective's docs).
    pub(crate) count: usize,
    pub(crate) root: usize,
    pub(crate) type_id: TypeId,
    pub(crate) kind: Kind,
    pub(crate) path: Path,
    pub(crate) mode: SyncMode,
    /// The member's own arguments were bad; its error is recorded in the team.
    pub(crate) invalid: bool,
    /// The input was copied into the team (non-blocking calls and `NoSync`).
    pub(crate) staged: bool,
    /// The blocking form of the collective (not an `i`-method).
    pub(crate) blocking: bool,
    /// `barrier_checked`'s value, or the check value of a split (`split_grid`'s columns).
    pub(crate) value: u64,
    pub(crate) inline: Chunk,
    /// Split: the color and the key.
    pub(crate) color: u32,
    pub(crate) key: i64,
    /// The operator's name (`"Sum"`, `"custom"`, ..) and the element type's name, for messages.
    pub(crate) op: &'static str,
    pub(crate) type_name: &'static str,
    /// Where others read this member's input (its own buffer, or its staged copy), and how many
    /// elements are there.
    pub(crate) input: *const u8,
    pub(crate) input_len: usize,
    /// Where the linear path writes this member's output, and its length.
    pub(crate) output: *mut u8,
    pub(crate) output_len: usize,
}

impl Post {
    pub(crate) fn empty() -> Self {
        Post {
            seq: u64::MAX,
            count: 0,
            root: 0,
            type_id: TypeId::of::<()>(),
            kind: Kind::Barrier,
            path: Path::None,
            mode: SyncMode::AllSync,
            invalid: false,
            staged: false,
            blocking: true,
            value: 0,
            inline: Chunk::ZERO,
            color: 0,
            key: 0,
            op: "",
            type_name: "()",
            input: std::ptr::null(),
            input_len: 0,
            output: std::ptr::null_mut(),
            output_len: 0,
        }
    }

    /// Whether `other` (a partner's post) describes the same call with the same data layout:
    /// what memory safety needs before reading its buffers, and what makes `readers` agree.
    pub(crate) fn same_call(&self, other: &Post) -> bool {
        other.seq == self.seq
            && !other.invalid
            && other.kind == self.kind
            && other.path == self.path
            && other.type_id == self.type_id
            && other.count == self.count
            && other.root == self.root
    }
}

impl Post {
    /// Whether the call ends with a closing meeting: only blocking `AllSync` calls that move
    /// data after the opening meeting. A non-blocking call never waits for one, because it would
    /// make each member's completion depend on the others calling `test` or `wait` on it, so two
    /// members waiting on two teams in opposite orders would deadlock.
    pub(crate) fn closes_with_meeting(&self) -> bool {
        self.mode == SyncMode::AllSync
            && !self.staged
            && matches!(self.path, Path::Pull | Path::Linear | Path::Group)
    }
}

/// The fields of a post that its signature covers.
pub(crate) struct Fields {
    pub(crate) kind: Kind,
    pub(crate) path: Path,
    pub(crate) mode: SyncMode,
    pub(crate) blocking: bool,
    pub(crate) count: usize,
    pub(crate) root: usize,
    pub(crate) type_id: TypeId,
    pub(crate) value: u64,
}

/// What a light call (`light.rs`) posts besides its signature's fields.
#[derive(Clone, Copy)]
pub(crate) struct LightExtra {
    pub(crate) op: &'static str,
    pub(crate) type_name: &'static str,
    pub(crate) input: *const u8,
    pub(crate) output: *mut u8,
    /// Elements in the input and in the output.
    pub(crate) len: usize,
}

impl Post {
    /// Whether this post already holds, in every field but `seq`, what
    /// [`put_light`](Self::put_light) would write. Strings and pointers compare by address: a
    /// post says which `&'static str` and buffers its call passed, not what they contain.
    #[inline(always)]
    pub(crate) fn holds_light(&self, fields: &Fields, extra: &LightExtra) -> bool {
        self.count == fields.count
            && self.root == fields.root
            && self.type_id == fields.type_id
            && self.kind == fields.kind
            && self.path == fields.path
            && self.mode == fields.mode
            && !self.invalid
            && self.staged == (fields.mode == SyncMode::NoSync)
            && self.blocking == fields.blocking
            && self.value == fields.value
            && std::ptr::eq(self.op, extra.op)
            && std::ptr::eq(self.type_name, extra.type_name)
            && self.input == extra.input
            && self.input_len == extra.len
            && self.output == extra.output
            && self.output_len == extra.len
    }

    /// Writes the fields of a light call's post that others may read (all but `seq`, which the
    /// caller writes): those calls compare, and those the meeting and a dropped member read.
    #[inline(always)]
    pub(crate) fn put_light(&mut self, fields: &Fields, extra: &LightExtra) {
        self.count = fields.count;
        self.root = fields.root;
        self.type_id = fields.type_id;
        self.kind = fields.kind;
        self.path = fields.path;
        self.mode = fields.mode;
        self.invalid = false;
        self.staged = fields.mode == SyncMode::NoSync;
        self.blocking = fields.blocking;
        self.value = fields.value;
        self.op = extra.op;
        self.type_name = extra.type_name;
        self.input = extra.input;
        self.input_len = extra.len;
        self.output = extra.output;
        self.output_len = extra.len;
    }
}
