//! `phasers_reduction_*`: array reductions ([`phasers_core::Reduction`]) whose C threads name
//! themselves by rank. The object owns the reduction and every rank's [`Reducer`], each behind a
//! lock that turns two threads using one rank at once into `PHASERS_EBUSY`. The element type is
//! fixed at creation: `float`, `double`, `int32_t` or `int64_t`.

use std::ffi::{c_int, c_void};
use std::sync::{Mutex, MutexGuard, TryLockError};

use phasers_core::{Element, ReduceAlgorithm, Reducer, Reduction};

use crate::collective_args::Checked;
use crate::entry::{guarded, DropOnUnwind};
use crate::enums::{from_c, ElementType, OpKind, ELEMENT_TYPES, OPS, REDUCE_ALGORITHMS};
use crate::handle::{c_bool, require_out, write_optional, write_out, Handle, Kind};
use crate::status::{Failure, PHASERS_EPANIC};

/// One rank's reducer, on its own cache lines (ranks are used by different threads; see
/// `barrier_object`'s `RankSlot`). `None` once a panic inside a call dropped the reducer, which
/// broke the group.
#[repr(align(128))]
struct RankSlot<T> {
    reducer: Mutex<Option<Reducer<T>>>,
}

/// A reduction of one element type and its ranks.
struct Ranks<T> {
    reduction: Reduction<T>,
    ranks: Box<[RankSlot<T>]>,
}

/// Anything at all: what `settle` keeps (the rank locks, of any element type) until the handle
/// is marked dead.
pub(crate) trait Held {}
impl<T> Held for T {}

/// Which of a call's buffers are written: `reduce` writes the root's output only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    Reduce,
    Allreduce,
}

impl<T: Element> Ranks<T> {
    fn new(
        parties: usize,
        op: OpKind,
        algorithm: ReduceAlgorithm,
        root: usize,
    ) -> Result<Self, Failure> {
        let reduction = Reduction::<T>::builder(parties)
            .op(op.to_op::<T>())
            .algorithm(algorithm)
            .root(root)
            .build()?;
        let ranks = reduction
            .participants()
            .into_iter()
            .map(|reducer| RankSlot {
                reducer: Mutex::new(Some(reducer)),
            })
            .collect();
        Ok(Ranks { reduction, ranks })
    }

    /// One rank's call; returns whether its output holds the result.
    fn call(
        &self,
        form: Form,
        rank: usize,
        input: *const c_void,
        output: *mut c_void,
        count: usize,
    ) -> Result<bool, Failure> {
        let parties = self.reduction.parties();
        let slot = self.ranks.get(rank).ok_or_else(|| {
            Failure::invalid(format!(
                "rank {rank} is out of range: this reduction has {parties} parties, so ranks are \
                 0 to {}",
                parties - 1
            ))
        })?;
        let writes_output = form == Form::Allreduce || rank == self.reduction.root();
        let input = Checked::<T>::new(input, count, "input")?;
        // A rank other than reduce's root has no output: its pointer is not read (NULL is fine).
        let output = Checked::<T>::new(output, if writes_output { count } else { 0 }, "output")?;
        let name = match form {
            Form::Reduce => "phasers_reduction_reduce",
            Form::Allreduce => "phasers_reduction_allreduce",
        };
        input.disjoint_from(&output, name)?;
        let mut guard = match slot.reducer.try_lock() {
            Ok(guard) => guard,
            Err(TryLockError::WouldBlock) => {
                return Err(Failure::busy(format!(
                    "rank {rank} of this reduction is in a call in another thread (or being \
                     destroyed); each rank must be used by one thread at a time: give every \
                     thread its own rank"
                )))
            }
            // A panic inside an earlier call poisoned the lock; DropOnUnwind emptied the slot.
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
        };
        let unwind = DropOnUnwind(&mut *guard);
        let reducer = unwind.0.as_mut().ok_or_else(|| {
            Failure::new(
                PHASERS_EPANIC,
                format!(
                    "an earlier call of rank {rank} panicked inside the library, which broke the \
                     reduction; destroy it and create a new one"
                ),
            )
        })?;
        // SAFETY: the C caller promises `count` readable elements at `input`, and `count`
        // writable elements at `output` where this rank writes one, valid and untouched by others
        // until this call returns (the slices do not outlive it); `Checked` verified NULL,
        // alignment and size, and `disjoint_from` that they do not overlap.
        let (input, output) = unsafe { (input.input(), output.output()) };
        let outcome = match form {
            Form::Reduce => reducer.reduce(input, output),
            Form::Allreduce => reducer.allreduce(input, output),
        }?;
        drop(unwind);
        Ok(outcome.has_result())
    }

    /// Takes every rank's lock, proving no thread is inside a call, for `destroy`.
    fn settle(&self) -> Result<Vec<MutexGuard<'_, Option<Reducer<T>>>>, Failure> {
        let mut guards = Vec::with_capacity(self.ranks.len());
        for (rank, slot) in self.ranks.iter().enumerate() {
            guards.push(match slot.reducer.try_lock() {
                Ok(guard) => guard,
                Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
                Err(TryLockError::WouldBlock) => {
                    return Err(Failure::busy(format!(
                        "rank {rank} of this reduction is inside a call; destroy it only after \
                         every thread's last call returned (join the threads first)"
                    )))
                }
            });
        }
        Ok(guards)
    }
}

/// The object behind a `phasers_reduction`: a reduction of one of the four element types.
pub struct ReductionObject {
    ranks: AnyRanks,
}

enum AnyRanks {
    I32(Ranks<i32>),
    I64(Ranks<i64>),
    F32(Ranks<f32>),
    F64(Ranks<f64>),
}

/// Runs `$body` with `$ranks` bound to the typed ranks of `$object`, whatever its element type.
macro_rules! with_ranks {
    ($object:expr, |$ranks:ident| $body:expr) => {
        match &$object.ranks {
            AnyRanks::I32($ranks) => $body,
            AnyRanks::I64($ranks) => $body,
            AnyRanks::F32($ranks) => $body,
            AnyRanks::F64($ranks) => $body,
        }
    };
}

impl ReductionObject {
    /// A reduction of `parties` ranks of `element`s with `op`, running `algorithm`, whose
    /// `reduce` delivers at `root`.
    pub fn new(
        parties: usize,
        element: ElementType,
        op: OpKind,
        algorithm: ReduceAlgorithm,
        root: usize,
    ) -> Result<Self, Failure> {
        let ranks = match element {
            ElementType::I32 => AnyRanks::I32(Ranks::new(parties, op, algorithm, root)?),
            ElementType::I64 => AnyRanks::I64(Ranks::new(parties, op, algorithm, root)?),
            ElementType::F32 => AnyRanks::F32(Ranks::new(parties, op, algorithm, root)?),
            ElementType::F64 => AnyRanks::F64(Ranks::new(parties, op, algorithm, root)?),
            ElementType::U32 | ElementType::U64 => {
                return Err(Failure::invalid(format!(
                    "reductions take PHASERS_TYPE_F32, PHASERS_TYPE_F64, PHASERS_TYPE_I32 or \
                     PHASERS_TYPE_I64, not {}; a team's collectives (phasers_member_reduce, ...) \
                     take every element type",
                    element.c_name()
                )))
            }
        };
        Ok(ReductionObject { ranks })
    }

    /// The number of ranks.
    pub fn parties(&self) -> usize {
        with_ranks!(self, |ranks| ranks.reduction.parties())
    }

    fn call(
        &self,
        form: Form,
        rank: usize,
        input: *const c_void,
        output: *mut c_void,
        count: usize,
    ) -> Result<bool, Failure> {
        with_ranks!(self, |ranks| ranks.call(form, rank, input, output, count))
    }

    /// Every rank's lock, or `PHASERS_EBUSY` while a thread is inside a call.
    pub(crate) fn settle(&self) -> Result<Box<dyn Held + '_>, Failure> {
        with_ranks!(self, |ranks| Ok(Box::new(ranks.settle()?)))
    }
}

/// The C `phasers_reduction`.
pub type ReductionHandle = Handle<ReductionObject>;

/// Creates a reduction of `parties` ranks of element type `type_` (`PHASERS_TYPE_F32`, `F64`,
/// `I32` or `I64`) reducing with `op` (`PHASERS_OP_*`) by `algorithm` (`PHASERS_REDUCE_*`), whose
/// `reduce` delivers at `root`, and stores it in `*out`.
///
/// # Safety
///
/// `out` is null (`PHASERS_ENULL`) or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn phasers_reduction_create(
    parties: usize,
    type_: c_int,
    op: c_int,
    algorithm: c_int,
    root: usize,
    out: *mut *mut ReductionHandle,
) -> c_int {
    guarded(|| {
        require_out(out, "out")?;
        let element = from_c(&ELEMENT_TYPES, type_, "element type", "PHASERS_TYPE_")?;
        let op = from_c(&OPS, op, "operator", "PHASERS_OP_")?;
        let algorithm = from_c(
            &REDUCE_ALGORITHMS,
            algorithm,
            "reduction algorithm",
            "PHASERS_REDUCE_",
        )?;
        let object = ReductionObject::new(parties, element, op, algorithm, root)?;
        // SAFETY: checked non-null above; the caller promises it is writable.
        unsafe { write_out(out, Handle::create(Kind::Reduction, object), "out") }
    })
}

/// Stores the number of ranks of `reduction` in `*out`.
///
/// # Safety
///
/// `reduction` is null, or a pointer returned by `phasers_reduction_create` (destroyed or not) or
/// other readable memory, not being destroyed concurrently; `out` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn phasers_reduction_parties(
    reduction: *const ReductionHandle,
    out: *mut usize,
) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is resolve's precondition.
        let object = unsafe { Handle::resolve(reduction, Kind::Reduction, "reduction") }?;
        // SAFETY: the caller promises `out` is null or writable.
        unsafe { write_out(out, object.parties(), "out") }
    })
}

/// Reduces every rank's `input` (`count` elements) into the root's `output`; a rank whose data
/// was consumed may return before the root has the result. Stores 1 in `*has_result` at the root
/// and 0 elsewhere, unless `has_result` is null.
///
/// # Safety
///
/// `reduction` as in [`phasers_reduction_parties`]; `input` points to `count` readable elements of
/// the reduction's type (or `count` is 0); at the root, `output` points to `count` writable
/// elements not overlapping `input` (elsewhere it is not read and may be null); the buffers stay
/// valid until the call returns; `has_result` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn phasers_reduction_reduce(
    reduction: *mut ReductionHandle,
    rank: usize,
    input: *const c_void,
    output: *mut c_void,
    count: usize,
    has_result: *mut c_int,
) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is resolve's precondition.
        let object = unsafe { Handle::resolve(reduction, Kind::Reduction, "reduction") }?;
        let result = object.call(Form::Reduce, rank, input, output, count)?;
        // SAFETY: the caller promises `has_result` is null or writable.
        unsafe { write_optional(has_result, c_bool(result)) };
        Ok(())
    })
}

/// Reduces every rank's `input` (`count` elements) into every rank's `output`.
///
/// # Safety
///
/// As [`phasers_reduction_reduce`], with `output` required at every rank.
#[no_mangle]
pub unsafe extern "C" fn phasers_reduction_allreduce(
    reduction: *mut ReductionHandle,
    rank: usize,
    input: *const c_void,
    output: *mut c_void,
    count: usize,
) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is resolve's precondition.
        let object = unsafe { Handle::resolve(reduction, Kind::Reduction, "reduction") }?;
        object
            .call(Form::Allreduce, rank, input, output, count)
            .map(drop)
    })
}

/// Destroys `reduction`; `PHASERS_EBUSY` while a thread is inside a call on it.
///
/// # Safety
///
/// As [`phasers_reduction_parties`].
#[no_mangle]
pub unsafe extern "C" fn phasers_reduction_destroy(reduction: *mut ReductionHandle) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is destroy's precondition.
        unsafe {
            Handle::destroy(
                reduction,
                Kind::Reduction,
                "reduction",
                ReductionObject::settle,
            )
        }
    })
}
