//! `phasers_accumulator_*`: reductions on a phaser's phases, one element type per accumulator,
//! chosen at creation; the typed send and result functions check it.

use std::ffi::c_int;

use phasers_core::{Accumulator, Element, Phaser};

use crate::entry::guarded;
use crate::enums::{from_c, ElementType, OpKind, ELEMENT_TYPES, OPS};
use crate::handle::{write_out, Handle, Kind};
use crate::phaser::PhaserHandle;
use crate::registration::RegistrationHandle;
use crate::status::Failure;

/// An accumulator of one of the six element types.
pub enum AnyAccumulator {
    /// `PHASERS_TYPE_I32`.
    I32(Accumulator<i32>),
    /// `PHASERS_TYPE_I64`.
    I64(Accumulator<i64>),
    /// `PHASERS_TYPE_U32`.
    U32(Accumulator<u32>),
    /// `PHASERS_TYPE_U64`.
    U64(Accumulator<u64>),
    /// `PHASERS_TYPE_F32`.
    F32(Accumulator<f32>),
    /// `PHASERS_TYPE_F64`.
    F64(Accumulator<f64>),
}

impl AnyAccumulator {
    fn new(
        phaser: &Phaser,
        element: ElementType,
        op: OpKind,
        reproducible: bool,
    ) -> Result<Self, Failure> {
        fn build<T: Element>(
            phaser: &Phaser,
            op: OpKind,
            reproducible: bool,
        ) -> Result<Accumulator<T>, Failure> {
            let op = op.to_op::<T>();
            Ok(if reproducible {
                Accumulator::reproducible(phaser, op)?
            } else {
                Accumulator::new(phaser, op)?
            })
        }
        Ok(match element {
            ElementType::I32 => AnyAccumulator::I32(build(phaser, op, reproducible)?),
            ElementType::I64 => AnyAccumulator::I64(build(phaser, op, reproducible)?),
            ElementType::U32 => AnyAccumulator::U32(build(phaser, op, reproducible)?),
            ElementType::U64 => AnyAccumulator::U64(build(phaser, op, reproducible)?),
            ElementType::F32 => AnyAccumulator::F32(build(phaser, op, reproducible)?),
            ElementType::F64 => AnyAccumulator::F64(build(phaser, op, reproducible)?),
        })
    }

    fn element_type(&self) -> ElementType {
        match self {
            AnyAccumulator::I32(_) => ElementType::I32,
            AnyAccumulator::I64(_) => ElementType::I64,
            AnyAccumulator::U32(_) => ElementType::U32,
            AnyAccumulator::U64(_) => ElementType::U64,
            AnyAccumulator::F32(_) => ElementType::F32,
            AnyAccumulator::F64(_) => ElementType::F64,
        }
    }

    fn wrong_type(&self, called: ElementType) -> Failure {
        let holds = self.element_type();
        Failure::invalid(format!(
            "this accumulator holds {} values, not {}; call the _{} function",
            holds.c_name(),
            called.c_name(),
            holds.suffix()
        ))
    }
}

/// The C `phasers_accumulator`.
pub type AccumulatorHandle = Handle<AnyAccumulator>;

/// Creates an accumulator on `phaser` of element type `type_` (`PHASERS_TYPE_*`) reducing with
/// `op` (`PHASERS_OP_*`); `reproducible` non-zero asks for bit-identical floating-point results
/// whatever the arrival order.
///
/// # Safety
///
/// `phaser` is null, or a pointer returned by a phaser create function (destroyed or not) or other
/// readable memory, not being destroyed concurrently; `out` is null or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn phasers_accumulator_create(
    phaser: *mut PhaserHandle,
    type_: c_int,
    op: c_int,
    reproducible: c_int,
    out: *mut *mut AccumulatorHandle,
) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is resolve's precondition.
        let phaser = unsafe { Handle::resolve(phaser, Kind::Phaser, "phaser") }?;
        crate::handle::require_out(out, "out")?;
        let element = from_c(&ELEMENT_TYPES, type_, "element type", "PHASERS_TYPE_")?;
        let op = from_c(&OPS, op, "operator", "PHASERS_OP_")?;
        let accumulator = AnyAccumulator::new(phaser, element, op, reproducible != 0)?;
        let handle = Handle::create(Kind::Accumulator, accumulator);
        // SAFETY: checked non-null; the caller promises it is writable.
        unsafe { write_out(out, handle, "out") }
    })
}

/// Destroys `accumulator`. Values already sent still take part in their phase's gather.
///
/// # Safety
///
/// `accumulator` is null, or a pointer returned by `phasers_accumulator_create` (destroyed or
/// not) or other readable memory, not being used by another thread.
#[no_mangle]
pub unsafe extern "C" fn phasers_accumulator_destroy(accumulator: *mut AccumulatorHandle) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is destroy's precondition.
        unsafe { Handle::destroy(accumulator, Kind::Accumulator, "accumulator", |_| Ok(())) }
    })
}

/// # Safety
///
/// `accumulator` is null, or points to readable memory not being destroyed concurrently.
unsafe fn resolve<'a>(
    accumulator: *const AccumulatorHandle,
) -> Result<&'a AnyAccumulator, Failure> {
    // SAFETY: forwarded from the caller.
    unsafe { Handle::resolve(accumulator, Kind::Accumulator, "accumulator") }
}

/// # Safety
///
/// `registration` is null, or points to readable memory not being dropped concurrently.
unsafe fn resolve_registration<'a>(
    registration: *const RegistrationHandle,
) -> Result<&'a crate::registration::RegistrationObject, Failure> {
    // SAFETY: forwarded from the caller.
    unsafe { Handle::resolve(registration, Kind::Registration, "registration") }
}

/// Defines `phasers_accumulator_send_<t>` and `phasers_accumulator_result_<t>` for one type.
macro_rules! typed_functions {
    ($t:ty, $variant:ident, $send:ident, $result:ident) => {
        #[doc = concat!(
            "Contributes `value` through `registration` to its current phase; `PHASERS_EINVAL` if \
             the accumulator's type is not `", stringify!($t), "` or the registration belongs to \
             another phaser, `PHASERS_ECAPABILITY` for a wait-only registration."
        )]
        ///
        /// # Safety
        ///
        /// `accumulator` and `registration` are null, or pointers returned by this library
        /// (destroyed or not) or other readable memory, not being destroyed concurrently.
        #[no_mangle]
        pub unsafe extern "C" fn $send(
            accumulator: *mut AccumulatorHandle,
            registration: *mut RegistrationHandle,
            value: $t,
        ) -> c_int {
            guarded(|| {
                // SAFETY: the caller's promise is resolve's precondition.
                let accumulator = unsafe { resolve(accumulator) }?;
                // SAFETY: as above.
                let registration = unsafe { resolve_registration(registration) }?;
                let AnyAccumulator::$variant(typed) = accumulator else {
                    return Err(accumulator.wrong_type(ElementType::$variant));
                };
                registration.with(|registration| Ok(typed.send(registration, value)?))
            })
        }

        #[doc = concat!(
            "Stores the reduction of the last completed phase (the operator's identity before \
             any) in `*out`; `PHASERS_EINVAL` if the accumulator's type is not `",
            stringify!($t), "`."
        )]
        ///
        /// # Safety
        ///
        /// `accumulator` as in the send function; `out` is null or writable.
        #[no_mangle]
        pub unsafe extern "C" fn $result(
            accumulator: *const AccumulatorHandle,
            out: *mut $t,
        ) -> c_int {
            guarded(|| {
                // SAFETY: the caller's promise is resolve's precondition.
                let accumulator = unsafe { resolve(accumulator) }?;
                let AnyAccumulator::$variant(typed) = accumulator else {
                    return Err(accumulator.wrong_type(ElementType::$variant));
                };
                // SAFETY: the caller promises `out` is null or writable.
                unsafe { write_out(out, typed.result(), "out") }
            })
        }
    };
}

typed_functions!(
    i32,
    I32,
    phasers_accumulator_send_i32,
    phasers_accumulator_result_i32
);
typed_functions!(
    i64,
    I64,
    phasers_accumulator_send_i64,
    phasers_accumulator_result_i64
);
typed_functions!(
    u32,
    U32,
    phasers_accumulator_send_u32,
    phasers_accumulator_result_u32
);
typed_functions!(
    u64,
    U64,
    phasers_accumulator_send_u64,
    phasers_accumulator_result_u64
);
typed_functions!(
    f32,
    F32,
    phasers_accumulator_send_f32,
    phasers_accumulator_result_f32
);
typed_functions!(
    f64,
    F64,
    phasers_accumulator_send_f64,
    phasers_accumulator_result_f64
);
