//! The cross-process step of a direct allreduce (`direct.rs`): recursive doubling between the
//! team's processes for small arrays, recursive halving then doubling (a reduce-scatter and an
//! allgather) for large ones ([`HALVING_BYTES`]); each step one `MPI_Isend` and one `MPI_Irecv`
//! started together (the send first: 306-316 ns against 346-353 ns for a one-word exchange,
//! measured as below) and polled with `MPI_Testall`, on buffers the caller owns and reuses.
//!
//! Why not MPI's own collective: a polled `MPI_Iallreduce` goes through Open MPI's
//! schedule-based non-blocking component, and a blocking `MPI_Allreduce` would hold the
//! process-wide MPI lock (`threading::mpi_call`, taken under `Threading::Serialized`) until the
//! other processes arrive. Two teams used at once by different threads (a team and its split
//! sub-teams, say) can then deadlock: each process's lock held by a blocking call on one team
//! while the other process's lock is held by one on the other team. The lock is held here for
//! one start or one test at a time, so other objects' polls go on, and the wait keeps the stall
//! warning of `progress.rs`.
//!
//! Measured with Open MPI 4.1, 2 processes of a 2-core VM, `MPI_THREAD_SERIALIZED`, one `f64`
//! (C, `mpicc -O2`, 30 000 calls, the quietest of several runs): `Irecv` + `Isend` polled with
//! `MPI_Testall` 347-349 ns, `MPI_Allreduce` 416-421 ns, `MPI_Sendrecv` 415 ns, persistent
//! requests (`MPI_Send_init`/`MPI_Recv_init`, `MPI_Startall`) polled 745-754 ns; a polled
//! `MPI_Iallreduce` 974-1012 ns. For 1M `f64`, recursive doubling this way took 2.29-2.68 ms,
//! `MPI_Allreduce` 2.31-3.55 ms, a polled `MPI_Iallreduce` 2.67-3.15 ms (the machine was shared
//! with other builds, so the large figures are noisy); recursive halving then took 1.45-1.5 ms
//! (see [`HALVING_BYTES`]).
//!
//! Every process ends with the same bits: partners combine in the same order (the lower
//! process's data first), and each part of a halved array is reduced at one process only. A
//! process count that is not a power of two folds the extra processes in first and hands them
//! the result last.

use std::os::raw::c_int;

use mpi::datatype::Equivalence;
use mpi::ffi;
use mpi::raw::AsRaw;
use phasers::Element;

use super::reducer::Builtin;
use crate::channel::Channel;
use crate::progress::{poll_until, WaitFor};
use crate::threading::mpi_call;

/// The tag of the exchange's messages. The team's communicator is private to the team, and its
/// other calls are collectives, whose messages never match point-to-point ones.
const TAG: c_int = 0x4859;

/// Arrays of at least this many bytes take recursive halving (a reduce-scatter, then an
/// allgather) instead of recursive doubling. Measured with a hybrid team of 2 processes x 1
/// thread on the 2-core Xeon VM (`f64` sums, best of 7 rounds, two runs each): doubling against
/// halving 0.44 against 0.82 us at 8 B, 1.2-1.4 against 2.0 us at 1 KiB, 1.7 against 2.4 us at
/// 2 KiB, 4.0-4.3 against 3.4 us at 4 KiB, 25 against 17 us at 64 KiB, 2.3 against 1.45-1.5 ms
/// at 8 MiB. Halving sends twice the messages of half the size: below 4 KiB the second
/// message costs more than the halved combining and copying saves (Open MPI's shared-memory
/// eager limit is 4 KiB, so doubling's 4 KiB messages are the first to take the rendezvous).
pub(crate) const HALVING_BYTES: usize = 4 * 1024;

/// Allreduces across the processes of `channel` with `op` into `acc`: from `input` where given
/// (as long as `acc`), else from what `acc` holds. `scratch` holds the partner's data and grows
/// once to the largest call. Every process of `channel` calls it with the same length and op.
/// `bytes_of(acc)` must fit a C `int` (the caller checks).
pub(crate) fn allreduce<T: Element>(
    channel: &Channel,
    input: Option<&[T]>,
    acc: &mut [T],
    scratch: &mut Vec<u64>,
    op: Builtin,
    wait: &WaitFor<'_>,
) {
    const { assert!(std::mem::align_of::<T>() <= 8) };
    let (me, size) = (channel.rank(), channel.size());
    let bytes = std::mem::size_of_val(acc);
    let words = bytes.div_ceil(8);
    if scratch.len() < words {
        scratch.resize(words, 0);
    }
    // SAFETY: `scratch` holds at least `bytes` initialized bytes, 8-byte aligned (enough for
    // every `Element`, checked above); every bit pattern is a valid integer or float.
    let partner_data =
        unsafe { std::slice::from_raw_parts_mut(scratch.as_mut_ptr().cast::<T>(), acc.len()) };
    let pof2 = 1usize << (usize::BITS - 1 - size.max(1).leading_zeros());
    let extra = size - pof2;
    let halving = bytes >= HALVING_BYTES && pof2 > 1;
    let mut input = input;
    if me < 2 * extra || !halving || size <= 1 {
        // Only recursive halving reads the input in place of `acc`.
        if let Some(input) = input.take() {
            acc.copy_from_slice(input);
        }
    }
    if size <= 1 || bytes == 0 {
        return;
    }
    // Processes below `2 * extra` pair up: the even one hands its data to the odd one and waits
    // for the result at the end.
    let step_rank = if me < 2 * extra {
        if me % 2 == 0 {
            send(channel, acc, me + 1, wait);
            None
        } else {
            recv(channel, partner_data, me - 1, wait);
            op.accumulate(acc, partner_data, true);
            Some(me / 2)
        }
    } else {
        Some(me - extra)
    };
    // A step's partner, from its rank among the `pof2` that take part.
    let real = |step: usize| {
        if step < extra {
            step * 2 + 1
        } else {
            step + extra
        }
    };
    if let Some(step_rank) = step_rank {
        if halving {
            halve_and_gather(
                channel,
                input,
                acc,
                partner_data,
                op,
                step_rank,
                pof2,
                &real,
                wait,
            );
        } else {
            let mut mask = 1;
            while mask < pof2 {
                let partner = real(step_rank ^ mask);
                swap(channel, acc, partner_data, partner, wait);
                op.accumulate(acc, partner_data, partner < me);
                mask <<= 1;
            }
        }
    }
    if me < 2 * extra {
        if me % 2 == 1 {
            send(channel, acc, me - 1, wait);
        } else {
            recv(channel, acc, me + 1, wait);
        }
    }
}

/// Broadcasts `len` bytes at `data` from process `root` of `channel` to every process, along a
/// binomial tree (each process receives once, from the process `2^j` below it relative to the
/// root, then forwards to those `2^i` above it, largest distance first): `log2(processes)`
/// message times, as `MPI_Bcast` for one message.
///
/// # Safety
///
/// `data` must be valid for reads and writes of `len` bytes until this returns, and any bytes
/// written into it must be valid for its type (the root's bytes are).
pub(crate) unsafe fn broadcast(
    channel: &Channel,
    data: *mut u8,
    len: usize,
    root: usize,
    wait: &WaitFor<'_>,
) {
    let (me, size) = (channel.rank(), channel.size());
    if size <= 1 || len == 0 {
        return;
    }
    let relative = (me + size - root % size) % size;
    let real = |r: usize| (r + root) % size;
    let mut mask = 1;
    while mask < size {
        if relative & mask != 0 {
            // SAFETY: the caller's buffer, valid until this returns.
            unsafe { recv_raw(channel, data, len, real(relative - mask), wait) };
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while mask > 0 {
        if relative + mask < size {
            // SAFETY: as above.
            unsafe { send_raw(channel, data, len, real(relative + mask), wait) };
        }
        mask >>= 1;
    }
}

/// Recursive halving then doubling among `pof2` processes (this one is `step_rank`): each step
/// of the first half gives away half of the current range and reduces the half it keeps with
/// the partner's, so each process ends with one fully reduced part; the second half gathers the
/// parts back, step by step. Half the combining of recursive doubling, and the input is read in
/// place (no copy into `acc`). Each part is reduced at one process, so every process gets the
/// same bits.
#[allow(clippy::too_many_arguments)]
fn halve_and_gather<T: Element>(
    channel: &Channel,
    mut input: Option<&[T]>,
    acc: &mut [T],
    partner_data: &mut [T],
    op: Builtin,
    step_rank: usize,
    pof2: usize,
    real: &dyn Fn(usize) -> usize,
    wait: &WaitFor<'_>,
) {
    let me = channel.rank();
    // The ranges this process held before each halving step (at most one per bit of a usize).
    let mut parents = [(0usize, 0usize); usize::BITS as usize];
    let mut depth = 0;
    let (mut lo, mut hi) = (0, acc.len());
    let mut mask = pof2 >> 1;
    while mask > 0 {
        let partner = real(step_rank ^ mask);
        let mid = lo + (hi - lo) / 2;
        let (keep, give) = if step_rank & mask == 0 {
            ((lo, mid), (mid, hi))
        } else {
            ((mid, hi), (lo, mid))
        };
        let theirs = &mut partner_data[..keep.1 - keep.0];
        let source: &[T] = input.unwrap_or(acc);
        swap(channel, &source[give.0..give.1], theirs, partner, wait);
        let kept = &mut acc[keep.0..keep.1];
        let lower_first = partner < me;
        match input.take() {
            Some(input) => {
                let mine = &input[keep.0..keep.1];
                if lower_first {
                    op.combine(kept, theirs, mine);
                } else {
                    op.combine(kept, mine, theirs);
                }
            }
            None => op.accumulate(kept, theirs, lower_first),
        }
        parents[depth] = (lo, hi);
        depth += 1;
        (lo, hi) = keep;
        mask >>= 1;
    }
    let mut mask = 1;
    while depth > 0 {
        depth -= 1;
        let (parent_lo, parent_hi) = parents[depth];
        let partner = real(step_rank ^ mask);
        // Mine and my sibling split the parent range; send mine, take theirs.
        if lo == parent_lo {
            let (mine, theirs) = acc[parent_lo..parent_hi].split_at_mut(hi - lo);
            swap(channel, mine, theirs, partner, wait);
        } else {
            let (theirs, mine) = acc[parent_lo..parent_hi].split_at_mut(lo - parent_lo);
            swap(channel, mine, theirs, partner, wait);
        }
        (lo, hi) = (parent_lo, parent_hi);
        mask <<= 1;
    }
}

fn null() -> ffi::MPI_Request {
    // SAFETY: a constant that `mpi-sys` sets from `MPI_REQUEST_NULL` and never writes.
    unsafe { ffi::RSMPI_REQUEST_NULL }
}

fn byte() -> ffi::MPI_Datatype {
    u8::equivalent_datatype().as_raw()
}

/// A C int of a byte count or rank; the caller made sure every count fits.
fn int(n: usize) -> c_int {
    c_int::try_from(n).unwrap_or(c_int::MAX)
}

/// Sends `acc` to `to` and receives `into` from it at once.
fn swap<T: Element>(
    channel: &Channel,
    acc: &[T],
    into: &mut [T],
    partner: usize,
    wait: &WaitFor<'_>,
) {
    let mut requests = [null(); 2];
    {
        let _call = mpi_call();
        let comm = channel.comm().as_raw();
        // SAFETY: both buffers are borrowed until `complete` below returns, which is only once
        // both requests are done; the counts are their byte lengths.
        unsafe {
            ffi::MPI_Isend(
                acc.as_ptr().cast(),
                int(std::mem::size_of_val(acc)),
                byte(),
                int(partner),
                TAG,
                comm,
                &mut requests[0],
            );
            ffi::MPI_Irecv(
                into.as_mut_ptr().cast(),
                int(std::mem::size_of_val(into)),
                byte(),
                int(partner),
                TAG,
                comm,
                &mut requests[1],
            );
        }
    }
    complete(&mut requests, wait);
}

fn send<T: Element>(channel: &Channel, data: &[T], to: usize, wait: &WaitFor<'_>) {
    // SAFETY: `data` is borrowed until `send_raw` returns, once the send is done.
    unsafe {
        send_raw(
            channel,
            data.as_ptr().cast(),
            std::mem::size_of_val(data),
            to,
            wait,
        )
    }
}

/// Sends `len` bytes at `data` to `to`.
///
/// # Safety
///
/// `data` must be valid for reads of `len` bytes until this returns.
unsafe fn send_raw(channel: &Channel, data: *const u8, len: usize, to: usize, wait: &WaitFor<'_>) {
    let mut requests = [null(); 1];
    {
        let _call = mpi_call();
        // SAFETY: the caller keeps `data` valid until `complete` returns, once the send is done.
        unsafe {
            ffi::MPI_Isend(
                data.cast(),
                int(len),
                byte(),
                int(to),
                TAG,
                channel.comm().as_raw(),
                &mut requests[0],
            );
        }
    }
    complete(&mut requests, wait);
}

fn recv<T: Element>(channel: &Channel, into: &mut [T], from: usize, wait: &WaitFor<'_>) {
    // SAFETY: `into` is borrowed until `recv_raw` returns, once the receive is done; every bit
    // pattern is a valid `Element`.
    unsafe {
        recv_raw(
            channel,
            into.as_mut_ptr().cast(),
            std::mem::size_of_val(into),
            from,
            wait,
        )
    }
}

/// Receives `len` bytes from `from` into `into`.
///
/// # Safety
///
/// `into` must be valid for writes of `len` bytes until this returns.
unsafe fn recv_raw(channel: &Channel, into: *mut u8, len: usize, from: usize, wait: &WaitFor<'_>) {
    let mut requests = [null(); 1];
    {
        let _call = mpi_call();
        // SAFETY: the caller keeps `into` valid until `complete` returns, once the receive is
        // done.
        unsafe {
            ffi::MPI_Irecv(
                into.cast(),
                int(len),
                byte(),
                int(from),
                TAG,
                channel.comm().as_raw(),
                &mut requests[0],
            );
        }
    }
    complete(&mut requests, wait);
}

/// Polls `requests` until all are done, taking the MPI lock for each test only. There is no
/// deadline: the direct path runs only on teams without a timeout (`direct.rs`), and the wait
/// warns when it stalls.
fn complete(requests: &mut [ffi::MPI_Request], wait: &WaitFor<'_>) {
    let test = || {
        let mut flag: c_int = 0;
        let _call = mpi_call();
        // SAFETY: the requests were started above (or are null, which MPI skips); the status
        // array is MPI's "ignore" constant.
        unsafe {
            ffi::MPI_Testall(
                int(requests.len()),
                requests.as_mut_ptr(),
                &mut flag,
                ffi::RSMPI_STATUSES_IGNORE,
            )
        };
        flag != 0
    };
    poll_until(wait, None, test);
}
