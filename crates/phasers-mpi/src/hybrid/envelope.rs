//! The envelope: the fixed-size record with which every checked call across processes starts.
//!
//! Each process contributes one record, and every process ends with all records merged by
//! [`merge`]. How the records travel depends on the team:
//!
//! - **Flat teams** (no node hierarchy) without a timeout: point to point, by recursive doubling
//!   (`record_exchange.rs`), a record being only as long as its payload needs, up to
//!   [`MAX_RECORD`]: through the team's mailboxes in shared memory when all its processes run
//!   on one node (`mailbox.rs`), as MPI messages otherwise. The direct path (`direct.rs`) and
//!   the engine send the same records, so a process that called `barrier` meets one that
//!   called `ibarrier` or `allreduce`.
//! - **Node-aware teams, and teams with a timeout**: one reduction whose MPI operation is [`merge`] on records of exactly
//!   [`RECORD`] bytes (node `Ireduce`, leaders' `Iallreduce`, node `Ibcast`).
//!
//! Either way the shape of the exchange never depends on the call, so processes that called
//! differently still make matching MPI calls; and the merged header tells every process, alike,
//! whether every process made the same call and found no error among its members. A call whose
//! payload fits ([`capacity`]) travels in the same record, so it costs one exchange, as
//! unchecked.
//!
//! | bytes | content |
//! |---|---|
//! | 0..40 | the call's 5 header words (see [`Header`]), merged by maximum |
//! | 40..48 | flags, merged by OR: [`ERROR`] where a process found an error among its members, [`ENGINE`] where a process called through the engine (a non-blocking call, say), `MISMATCH` where two merged records' headers differed |
//! | 48.. | the payload, merged as the header's mode says while all headers agree |
//!
//! Maximum and OR are exact, associative and commutative, and "some two headers differed" is
//! true of a set of records whatever order they merge in (if they are not all equal, some merge
//! meets two different headers: either two differing records, or a maximum that differs from
//! the next), so every process ends with the same header and flags whatever order MPI or the
//! doubling merges in. Header words are little-endian; the payload holds the members' own
//! values, native-endian. The header is small so that a one-word call's record, with the
//! mailbox's sequence word (`mailbox.rs`), fits one cache line.

use std::mem::MaybeUninit;
use std::os::raw::{c_int, c_void};
use std::sync::OnceLock;

use mpi::datatype::Equivalence;
use mpi::ffi;
use mpi::raw::AsRaw;

use super::reducer::{Builtin, ElementCode, MpiReduction};
use super::signature::{name_hash, Signature};
use crate::threading::mpi_call;

/// Bytes of one record. Measured with 2 processes on one node (Open MPI 4.1, shared memory): a
/// 256-byte record merges in about the time of a one-word `MPI_Iallreduce` plus 0.1 us, while
/// 320 bytes and more cost another 0.15 us, and past 4 KiB the message goes by rendezvous.
pub(crate) const RECORD: usize = 256;
/// Header words.
const WORDS: usize = 5;
const FLAG_AT: usize = WORDS * 8;
const PAYLOAD_AT: usize = FLAG_AT + 8;
/// Payload bytes a node-aware team's record carries: a call whose processes' payloads take
/// more sends the envelope first and its payload after.
pub(crate) const CAPACITY: usize = RECORD - PAYLOAD_AT;
/// The longest record a flat team sends point to point: just under Open MPI's shared-memory
/// eager limit, past which a message waits for its receiver (a rendezvous). Measured with
/// polled `MPI_Isend`/`MPI_Irecv` exchanges between 2 processes of the 2-core AMD EPYC VM, Open
/// MPI 4.1.4 (C, best of 15 rounds of 5 000): 155 ns at 8 bytes, 165 ns at 256 (the
/// shared-memory "fast box"), 302 ns at 264, 424 ns at 2048, and 3.9 us at 4096; in a second,
/// noisier run 2.2 us at 4040 bytes against 6.9 us at 4064. A record of 4032 bytes stays eager.
/// Records keep the fast box up to 208 payload bytes (26 words), as unchecked data does up to
/// 256: between the two a checked call costs about one message class more.
pub(crate) const MAX_RECORD: usize = 4032;
/// Payload bytes a flat team's record carries.
pub(crate) const P2P_CAPACITY: usize = MAX_RECORD - PAYLOAD_AT;
/// A flag: a process found an error among its members (or passed a bad argument).
pub(crate) const ERROR: u64 = 1;
/// A flag: a process called through the engine. Processes that all called from the direct path
/// move a payload too large for the record point to point (`exchange.rs`); otherwise every
/// process runs the engine's stages (`plan.rs`), so that they still match.
pub(crate) const ENGINE: u64 = 2;
/// A flag: two records merged into this one had different headers.
const MISMATCH: u64 = 4;

/// Payload bytes a record carries: point to point (`p2p`, see the module docs) or not.
pub(crate) fn capacity(p2p: bool) -> usize {
    if p2p {
        P2P_CAPACITY
    } else {
        CAPACITY
    }
}

/// The length of a record whose payload takes `used` bytes, point to point (`p2p`) or not.
pub(crate) fn record_len(p2p: bool, used: usize) -> usize {
    if p2p {
        PAYLOAD_AT + used.min(P2P_CAPACITY)
    } else {
        RECORD
    }
}

/// How the payload area merges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// No payload (a barrier, zero-length buffers).
    Empty = 0,
    /// Each process writes its bytes where no other process writes, and zeros elsewhere:
    /// merged by OR, every process ends with every part.
    Placed = 1,
    /// One block per process, combined element by element with the call's built-in op.
    Reduced = 2,
    /// The payload is too large for the record: it follows once the headers agree.
    Follows = 3,
}

impl Mode {
    fn from_code(code: u64) -> Option<Mode> {
        [Mode::Empty, Mode::Placed, Mode::Reduced, Mode::Follows]
            .into_iter()
            .find(|m| *m as u64 == code)
    }
}

/// What every process must agree on, in 5 words: the kind, mode, element and op codes and the
/// element size (saturated at 2^32 - 1) packed in word 0; the element type's and the op's
/// name hashes, combined; the length; the root; the payload bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Header {
    words: [u64; WORDS],
}

impl Header {
    /// The header of a call whose members agree on `sig`, sending its payload as `mode`
    /// (`typed`: the element and op a [`Mode::Reduced`] payload combines with), `used` bytes
    /// over all processes.
    pub(crate) fn new(
        sig: &Signature,
        mode: Mode,
        typed: Option<(ElementCode, Builtin)>,
        used: usize,
    ) -> Header {
        let (element, op) = typed.map_or((0, 0), |(e, b)| (e.code(), b.code()));
        let elem_size = u64::try_from(sig.elem_size)
            .map_or(u64::from(u32::MAX), |size| size.min(u64::from(u32::MAX)));
        Header {
            words: [
                sig.kind as u64 | (mode as u64) << 8 | element << 16 | op << 24 | elem_size << 32,
                name_hash(sig.type_name) ^ name_hash(sig.op).rotate_left(29),
                sig.len as u64,
                sig.root as u64,
                used as u64,
            ],
        }
    }

    fn mode(&self) -> Option<Mode> {
        Mode::from_code((self.words[0] >> 8) & 0xff)
    }

    fn typed(&self) -> Option<(ElementCode, Builtin)> {
        let element = ElementCode::from_code((self.words[0] >> 16) & 0xff)?;
        Some((element, Builtin::from_code((self.words[0] >> 24) & 0xff)?))
    }

    fn used(&self) -> usize {
        usize::try_from(self.words[4]).map_or(P2P_CAPACITY, |u| u.min(P2P_CAPACITY))
    }
}

/// This process's record: `header`, its `flags` ([`ERROR`], [`ENGINE`]), and its `payload`
/// written at byte `at` of the payload area (left out if it does not fit, which a header whose
/// mode is not [`Mode::Follows`] rules out), into `record`: zero bytes, as many as
/// [`record_len`] says (the payload area is merged by `|=` where every process placed its
/// part).
pub(crate) fn seal(record: &mut [u8], header: &Header, flags: u64, payload: &[u8], at: usize) {
    let bytes = record;
    for (i, w) in header.words.iter().enumerate() {
        bytes[i * 8..i * 8 + 8].copy_from_slice(&w.to_le_bytes());
    }
    bytes[FLAG_AT..PAYLOAD_AT].copy_from_slice(&flags.to_le_bytes());
    let area = &mut bytes[PAYLOAD_AT..];
    if let Some(part) = at
        .checked_add(payload.len())
        .and_then(|end| area.get_mut(at..end))
    {
        part.copy_from_slice(payload);
    }
}

/// A record as merged so far.
struct Merged {
    words: [u64; WORDS],
    flags: u64,
}

fn word(bytes: &[u8], at: usize) -> u64 {
    let mut le = [0u8; 8];
    le.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(le)
}

impl Merged {
    /// `bytes` holds at least a record's header and flags ([`PAYLOAD_AT`] bytes).
    fn read(bytes: &[u8]) -> Merged {
        let mut merged = Merged {
            words: [0; WORDS],
            flags: word(bytes, FLAG_AT),
        };
        for i in 0..WORDS {
            merged.words[i] = word(bytes, i * 8);
        }
        merged
    }

    /// Every record merged into this one had the same header and no error.
    fn settled(&self) -> bool {
        self.flags & (ERROR | MISMATCH) == 0
    }
}

/// The payload area of a merged record when every process made the same call and found no
/// error; `None` when they must exchange their detailed records to find out what differs.
pub(crate) fn open(record: &[u8]) -> Option<&[u8]> {
    let merged = Merged::read(record.get(..PAYLOAD_AT)?);
    let used = Header {
        words: merged.words,
    }
    .used();
    merged
        .settled()
        .then(|| record.get(PAYLOAD_AT..PAYLOAD_AT + used))
        .flatten()
}

/// Whether some process called through the engine ([`ENGINE`]), in a merged record.
pub(crate) fn engine_somewhere(record: &[u8]) -> bool {
    record
        .get(..PAYLOAD_AT)
        .is_some_and(|header| Merged::read(header).flags & ENGINE != 0)
}

/// Merges record `input` into record `inout` (each at least [`PAYLOAD_AT`] bytes and as long as
/// its header's payload): the payloads when both sides agree, then the headers and flags.
pub(crate) fn merge(input: &[u8], inout: &mut [u8]) {
    if input.len() < PAYLOAD_AT || inout.len() < PAYLOAD_AT {
        // Unreachable: every record holds its header; a shorter one could not have been sealed.
        return;
    }
    if input[..PAYLOAD_AT] == inout[..PAYLOAD_AT] {
        // The usual case, a matched call: the same header and flags on both sides, which stay
        // as they are; the payloads merge if that header is settled.
        let merged = Merged::read(inout);
        if merged.settled() {
            let header = Header {
                words: merged.words,
            };
            merge_payloads(header, input, inout);
        }
        return;
    }
    let (a, b) = (Merged::read(input), Merged::read(inout));
    let same = a.words == b.words;
    if a.settled() && b.settled() && same {
        merge_payloads(Header { words: a.words }, input, inout);
    }
    for i in 0..WORDS {
        let high = a.words[i].max(b.words[i]);
        inout[i * 8..i * 8 + 8].copy_from_slice(&high.to_le_bytes());
    }
    let mismatch = if same { 0 } else { MISMATCH };
    inout[FLAG_AT..PAYLOAD_AT].copy_from_slice(&(a.flags | b.flags | mismatch).to_le_bytes());
}

/// Merges the payload of `input` into that of `inout`, records whose headers agree on `header`.
fn merge_payloads(header: Header, input: &[u8], inout: &mut [u8]) {
    let end = PAYLOAD_AT + header.used();
    let (Some(x), Some(acc)) = (input.get(PAYLOAD_AT..end), inout.get_mut(PAYLOAD_AT..end)) else {
        // Unreachable: records that agree were sealed with the same payload length.
        return;
    };
    match (header.mode(), header.typed()) {
        (Some(Mode::Placed), _) => {
            for (acc, x) in acc.iter_mut().zip(x) {
                *acc |= *x;
            }
        }
        (Some(Mode::Reduced), Some((element, op))) => element.combine_bytes(op, acc, x),
        _ => {}
    }
}

/// The envelope's MPI operation (`MPI_User_function`): merges `*len` records of `invec` into
/// those of `inoutvec`.
unsafe extern "C" fn merge_records(
    invec: *mut c_void,
    inoutvec: *mut c_void,
    len: *mut c_int,
    _datatype: *mut ffi::MPI_Datatype,
) {
    if invec.is_null() || inoutvec.is_null() || len.is_null() {
        return;
    }
    // SAFETY: MPI passes a valid count.
    let count = usize::try_from(unsafe { *len }).unwrap_or(0);
    // SAFETY: MPI calls this operation only with our datatype (one record of `RECORD` bytes per
    // element), so both buffers hold `count` records; the input is only read, and MPI gives
    // the two buffers distinct memory.
    let (input, inout) = unsafe {
        (
            std::slice::from_raw_parts(invec.cast::<u8>(), count * RECORD),
            std::slice::from_raw_parts_mut(inoutvec.cast::<u8>(), count * RECORD),
        )
    };
    let merged = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        for (x, acc) in input
            .chunks_exact(RECORD)
            .zip(inout.chunks_exact_mut(RECORD))
        {
            merge(x, acc);
        }
    }));
    if merged.is_err() {
        // Merging is arithmetic on fixed offsets and cannot fail; were it to, this process's
        // record would differ from the others' and the processes' calls would part ways, so
        // stop here (a panic must not unwind into MPI's C frames).
        std::process::abort();
    }
}

/// The envelope's MPI datatype (one record) and operation ([`merge`], commutative). Made on
/// first use, under the MPI lock; MPI frees them at `MPI_Finalize`. The first use is a
/// team's construction, so calls never wait for it.
pub(crate) fn reduction() -> MpiReduction {
    static HANDLES: OnceLock<MpiReduction> = OnceLock::new();
    *HANDLES.get_or_init(|| {
        let _call = mpi_call();
        let mut datatype = MaybeUninit::<ffi::MPI_Datatype>::uninit();
        let mut op = MaybeUninit::<ffi::MPI_Op>::uninit();
        // SAFETY: MPI is initialized (a team exists only under an `Mpi`); both calls write
        // their handle before returning (MPI's errors are fatal); `RECORD` fits a C int;
        // `merge_records` has `MPI_User_function`'s signature and never unwinds.
        unsafe {
            ffi::MPI_Type_contiguous(
                RECORD as c_int,
                u8::equivalent_datatype().as_raw(),
                datatype.as_mut_ptr(),
            );
            ffi::MPI_Type_commit(datatype.as_mut_ptr());
            ffi::MPI_Op_create(Some(merge_records), 1, op.as_mut_ptr());
            MpiReduction {
                datatype: datatype.assume_init(),
                op: op.assume_init(),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::hybrid::bytes::Bytes;

    use crate::hybrid::signature::Kind;

    /// A record sealed into a fresh buffer.
    fn sealed(header: &Header, error: bool, payload: &[u8], at: usize) -> Bytes {
        let mut record = Bytes::zeroed(RECORD);
        seal(record.as_mut_slice(), header, u64::from(error), payload, at);
        record
    }

    fn allreduce(len: usize, op: &'static str) -> Signature {
        let mut sig = Signature::new::<u64>(Kind::Allreduce, len, 0);
        sig.op = op;
        sig
    }

    fn reduced(sig: &Signature, values: &[u64]) -> Bytes {
        let typed = Some((ElementCode::U64, Builtin::Sum));
        let header = Header::new(sig, Mode::Reduced, typed, sig.block());
        sealed(&header, false, Bytes::copy_of(values).as_slice(), 0)
    }

    /// Merges `records` in the given order, as one branch of MPI's tree would.
    fn merge_all(records: &[&Bytes]) -> Bytes {
        let mut acc = Bytes::copy_of(records[0].as_slice());
        for r in &records[1..] {
            merge(r.as_slice(), acc.as_mut_slice());
        }
        acc
    }

    #[test]
    fn agreeing_records_combine_their_payloads() {
        let sig = allreduce(2, "Sum");
        let (a, b, c) = (
            reduced(&sig, &[1, 2]),
            reduced(&sig, &[10, 20]),
            reduced(&sig, &[100, 200]),
        );
        for order in [[&a, &b, &c], [&c, &a, &b]] {
            let merged = merge_all(&order);
            let payload = open(merged.as_slice()).expect("the records agree");
            assert_eq!(payload, Bytes::copy_of(&[111u64, 222]).as_slice());
        }
    }

    #[test]
    fn placed_payloads_meet_by_or() {
        let sig = Signature::new::<u32>(Kind::Gather, 1, 0);
        let header = Header::new(&sig, Mode::Placed, None, 8);
        let a = sealed(&header, false, &7u32.to_ne_bytes(), 0);
        let b = sealed(&header, false, &9u32.to_ne_bytes(), 4);
        let merged = merge_all(&[&b, &a]);
        let mut want = 7u32.to_ne_bytes().to_vec();
        want.extend(9u32.to_ne_bytes());
        assert_eq!(open(merged.as_slice()), Some(&want[..]));
    }

    #[test]
    fn any_difference_or_error_is_seen_in_every_order() {
        let sig = allreduce(2, "Sum");
        let long = allreduce(102, "Sum");
        let max = allreduce(2, "Max");
        let follows = Header::new(&long, Mode::Follows, None, 0);
        let differing = [
            sealed(&follows, false, &[], 0),
            reduced(&max, &[1, 1]),
            reduced(&Signature::new::<u64>(Kind::Broadcast, 2, 0), &[1, 1]),
            {
                let header = Header::new(&sig, Mode::Reduced, None, sig.block());
                sealed(&header, true, &[], 0)
            },
        ];
        let (a, b) = (reduced(&sig, &[1, 2]), reduced(&sig, &[3, 4]));
        for odd in &differing {
            for order in [[&a, &b, odd], [odd, &a, &b], [&a, odd, &b]] {
                let merged = merge_all(&order);
                assert_eq!(open(merged.as_slice()), None);
                // A partial merge in another branch of the tree stays unsettled too.
                let mut other = merge_all(&[&b, odd]);
                merge(a.as_slice(), other.as_mut_slice());
                assert_eq!(open(other.as_slice()), None);
            }
        }
    }

    /// Records that differ merge into the same header and flags in every order, as MPI's
    /// reduction and the doubling may merge them differently on different processes.
    #[test]
    fn differing_records_merge_to_the_same_bits_in_every_order() {
        let sig = allreduce(2, "Sum");
        let records = [
            reduced(&sig, &[1, 2]),
            reduced(&allreduce(3, "Sum"), &[1, 2, 3]),
            reduced(&allreduce(2, "Max"), &[5, 6]),
        ];
        // Every order of the three: each first record, then the other two either way.
        let orders: Vec<[usize; 3]> = (0..3)
            .flat_map(|a| [[a, (a + 1) % 3, (a + 2) % 3], [a, (a + 2) % 3, (a + 1) % 3]])
            .collect();
        let merged: Vec<Vec<u8>> = orders
            .iter()
            .map(|o| {
                let all = merge_all(&[&records[o[0]], &records[o[1]], &records[o[2]]]);
                all.as_slice()[..PAYLOAD_AT].to_vec()
            })
            .collect();
        assert!(merged.windows(2).all(|w| w[0] == w[1]));
        assert_eq!(open(&merged[0]), None);
        // Pairs merged first, then together, as recursive doubling does.
        let mut left = merge_all(&[&records[0], &records[0]]);
        let right = merge_all(&[&records[1], &records[2]]);
        merge(right.as_slice(), left.as_mut_slice());
        let mut other = merge_all(&[&records[2], &records[0]]);
        merge(records[1].as_slice(), other.as_mut_slice());
        assert_eq!(
            left.as_slice()[..PAYLOAD_AT],
            other.as_slice()[..PAYLOAD_AT]
        );
    }

    /// Point-to-point records are only as long as their payload, and carry the engine flag.
    #[test]
    fn short_records_merge_and_say_whether_a_process_was_on_the_engine() {
        let sig = allreduce(1, "Sum");
        let typed = Some((ElementCode::U64, Builtin::Sum));
        let header = Header::new(&sig, Mode::Reduced, typed, 8);
        let short = |value: u64, flags: u64| {
            let mut record = vec![0u8; PAYLOAD_AT + 8];
            seal(&mut record, &header, flags, &value.to_ne_bytes(), 0);
            record
        };
        let (direct, engine) = (short(5, 0), short(7, ENGINE));
        let mut merged = direct.clone();
        merge(&engine, &mut merged);
        assert_eq!(open(&merged), Some(&12u64.to_ne_bytes()[..]));
        assert!(engine_somewhere(&merged));
        let mut both_direct = direct.clone();
        merge(&short(1, 0), &mut both_direct);
        assert_eq!(open(&both_direct), Some(&6u64.to_ne_bytes()[..]));
        assert!(!engine_somewhere(&both_direct));
        // A record too short to hold its header opens as nothing, and merges nothing.
        assert_eq!(open(&merged[..PAYLOAD_AT - 1]), None);
        let mut error = short(1, ERROR);
        merge(&direct, &mut error);
        assert_eq!(open(&error), None);
    }

    #[test]
    fn the_record_is_shaped_as_documented() {
        assert_eq!(PAYLOAD_AT, 48);
        assert_eq!(CAPACITY, 208);
        assert_eq!(P2P_CAPACITY, 3984);
        let sig = allreduce(3, "Sum");
        let header = Header::new(&sig, Mode::Follows, None, 0);
        assert_eq!(header.mode(), Some(Mode::Follows));
        assert_eq!(header.typed(), None);
        let typed = Header::new(
            &sig,
            Mode::Reduced,
            Some((ElementCode::F64, Builtin::Max)),
            24,
        );
        assert_eq!(typed.typed(), Some((ElementCode::F64, Builtin::Max)));
        assert_eq!(typed.used(), 24);
    }
}
