//! How a reduction combines: element by element in Rust (for the local part and for
//! [`Op::Custom`]), and which MPI datatype and operation carry a built-in op across processes.

use mpi::collective::SystemOperation;
use mpi::datatype::Equivalence;
use mpi::ffi;
use mpi::raw::AsRaw;
use phasers::{Element, Op};

use super::bytes::Bytes;

/// A predefined MPI datatype and operation.
#[derive(Clone, Copy)]
pub(crate) struct MpiReduction {
    pub(crate) datatype: ffi::MPI_Datatype,
    pub(crate) op: ffi::MPI_Op,
}

// SAFETY: both handles name predefined MPI objects, valid from `MPI_Init` to `MPI_Finalize` and
// usable from any thread; every MPI call that uses them holds `mpi_call()`.
unsafe impl Send for MpiReduction {}
// SAFETY: as for `Send`; the handles are never written after they are made.
unsafe impl Sync for MpiReduction {}

/// A type-erased reduction operator.
pub(crate) trait Reducer: Send + Sync {
    /// `acc[i] = acc[i] op x[i]` for every element.
    fn combine(&self, acc: &mut Bytes, x: &Bytes);
    /// The MPI datatype and operation of a built-in op; `None` for [`Op::Custom`].
    fn builtin(&self) -> Option<MpiReduction>;
}

/// Whether `op` is a bitwise op, which applies to integers only.
pub(crate) fn is_bitwise<T>(op: &Op<T>) -> bool {
    matches!(op, Op::And | Op::Or | Op::Xor)
}

pub(crate) struct Typed<T: Element> {
    op: Op<T>,
}

impl<T: Element + Equivalence> Typed<T> {
    pub(crate) fn new(op: Op<T>) -> Self {
        Typed { op }
    }
}

fn apply<T: Element>(acc: &mut [T], x: &[T], f: impl Fn(T, T) -> T) {
    for (a, b) in acc.iter_mut().zip(x) {
        *a = f(*a, *b);
    }
}

impl<T: Element + Equivalence> Reducer for Typed<T> {
    fn combine(&self, acc: &mut Bytes, x: &Bytes) {
        let (acc, x) = (acc.elements_mut::<T>(), x.elements::<T>());
        match &self.op {
            Op::Sum => apply(acc, x, T::add),
            Op::Product => apply(acc, x, T::mul),
            Op::Min => apply(acc, x, T::min),
            Op::Max => apply(acc, x, T::max),
            Op::And => apply(acc, x, |a, b| a.bitwise(b, |a, b| a & b)),
            Op::Or => apply(acc, x, |a, b| a.bitwise(b, |a, b| a | b)),
            Op::Xor => apply(acc, x, |a, b| a.bitwise(b, |a, b| a ^ b)),
            Op::Custom { combine, .. } => apply(acc, x, |a, b| combine(a, b)),
        }
    }

    fn builtin(&self) -> Option<MpiReduction> {
        let op = match &self.op {
            Op::Sum => SystemOperation::sum(),
            Op::Product => SystemOperation::product(),
            Op::Min => SystemOperation::min(),
            Op::Max => SystemOperation::max(),
            Op::And => SystemOperation::bitwise_and(),
            Op::Or => SystemOperation::bitwise_or(),
            Op::Xor => SystemOperation::bitwise_xor(),
            Op::Custom { .. } => return None,
        };
        Some(MpiReduction {
            datatype: T::equivalent_datatype().as_raw(),
            op: op.as_raw(),
        })
    }
}
