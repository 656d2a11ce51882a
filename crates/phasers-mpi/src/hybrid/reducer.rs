//! How a reduction combines: element by element in Rust (for the local part, for
//! [`Op::Custom`] and inside a checked call's envelope), and which MPI datatype and operation
//! carry a built-in op across processes.

use std::any::TypeId;
use std::sync::Arc;

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

// SAFETY: both handles name MPI objects that live from their creation (predefined ones from
// `MPI_Init`, the envelope's from first use) to `MPI_Finalize` and are usable from any thread;
// every MPI call that uses them holds `mpi_call()`.
unsafe impl Send for MpiReduction {}
// SAFETY: as for `Send`; the handles are never written after they are made.
unsafe impl Sync for MpiReduction {}

/// A type-erased reduction operator.
pub(crate) trait Reducer: Send + Sync {
    /// `acc[i] = acc[i] op x[i]` for every element.
    fn combine(&self, acc: &mut Bytes, x: &Bytes);
    /// The MPI datatype and operation of a built-in op; `None` for [`Op::Custom`].
    fn builtin(&self) -> Option<MpiReduction>;
    /// The element type's code and the op of a built-in op, as a checked call's envelope
    /// carries them (see [`ElementCode`]); `None` for [`Op::Custom`].
    fn typed(&self) -> Option<(ElementCode, Builtin)>;
}

/// Whether `op` is a bitwise op, which applies to integers only.
pub(crate) fn is_bitwise<T>(op: &Op<T>) -> bool {
    matches!(op, Op::And | Op::Or | Op::Xor)
}

/// The built-in operators, numbered as an envelope carries them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Builtin {
    Sum = 1,
    Product,
    Min,
    Max,
    And,
    Or,
    Xor,
}

impl Builtin {
    const ALL: [Builtin; 7] = [
        Builtin::Sum,
        Builtin::Product,
        Builtin::Min,
        Builtin::Max,
        Builtin::And,
        Builtin::Or,
        Builtin::Xor,
    ];

    pub(crate) fn of<T>(op: &Op<T>) -> Option<Builtin> {
        Some(match op {
            Op::Sum => Builtin::Sum,
            Op::Product => Builtin::Product,
            Op::Min => Builtin::Min,
            Op::Max => Builtin::Max,
            Op::And => Builtin::And,
            Op::Or => Builtin::Or,
            Op::Xor => Builtin::Xor,
            Op::Custom { .. } => return None,
        })
    }

    pub(crate) fn code(self) -> u64 {
        self as u64
    }

    pub(crate) fn from_code(code: u64) -> Option<Builtin> {
        Builtin::ALL.into_iter().find(|b| b.code() == code)
    }

    /// `a op b`. A bitwise op on floats (which every member refuses before the call moves)
    /// leaves `a` as it is rather than failing inside an MPI callback.
    pub(crate) fn apply<T: Element>(self, a: T, b: T) -> T {
        let bitwise = |f: fn(u64, u64) -> u64| if T::INTEGER { a.bitwise(b, f) } else { a };
        match self {
            Builtin::Sum => a.add(b),
            Builtin::Product => a.mul(b),
            Builtin::Min => a.min(b),
            Builtin::Max => a.max(b),
            Builtin::And => bitwise(|x, y| x & y),
            Builtin::Or => bitwise(|x, y| x | y),
            Builtin::Xor => bitwise(|x, y| x ^ y),
        }
    }

    /// `acc[i] = acc[i] op x[i]` for every element, or `x[i] op acc[i]` where `x_first`: two
    /// processes that combine each other's data in the same order get the same bits even for an
    /// op that is not exactly commutative (a float `min` of `0.0` and `-0.0`). The op is matched
    /// once, outside the loop, so each loop is plain and vectorizes.
    pub(crate) fn accumulate<T: Element>(self, acc: &mut [T], x: &[T], x_first: bool) {
        fn each<T: Copy>(acc: &mut [T], x: &[T], x_first: bool, f: impl Fn(T, T) -> T) {
            if x_first {
                for (a, b) in acc.iter_mut().zip(x) {
                    *a = f(*b, *a);
                }
            } else {
                for (a, b) in acc.iter_mut().zip(x) {
                    *a = f(*a, *b);
                }
            }
        }
        let bitwise =
            |f: fn(u64, u64) -> u64| move |a: T, b: T| if T::INTEGER { a.bitwise(b, f) } else { a };
        match self {
            Builtin::Sum => each(acc, x, x_first, |a: T, b| a.add(b)),
            Builtin::Product => each(acc, x, x_first, |a: T, b| a.mul(b)),
            Builtin::Min => each(acc, x, x_first, |a: T, b| a.min(b)),
            Builtin::Max => each(acc, x, x_first, |a: T, b| a.max(b)),
            Builtin::And => each(acc, x, x_first, bitwise(|x, y| x & y)),
            Builtin::Or => each(acc, x, x_first, bitwise(|x, y| x | y)),
            Builtin::Xor => each(acc, x, x_first, bitwise(|x, y| x ^ y)),
        }
    }

    /// `dest[i] = a[i] op b[i]` for every element (`dest` as long as both).
    pub(crate) fn combine<T: Element>(self, dest: &mut [T], a: &[T], b: &[T]) {
        fn each<T: Copy>(dest: &mut [T], a: &[T], b: &[T], f: impl Fn(T, T) -> T) {
            for ((d, x), y) in dest.iter_mut().zip(a).zip(b) {
                *d = f(*x, *y);
            }
        }
        let bitwise =
            |f: fn(u64, u64) -> u64| move |a: T, b: T| if T::INTEGER { a.bitwise(b, f) } else { a };
        match self {
            Builtin::Sum => each(dest, a, b, |a: T, b| a.add(b)),
            Builtin::Product => each(dest, a, b, |a: T, b| a.mul(b)),
            Builtin::Min => each(dest, a, b, |a: T, b| a.min(b)),
            Builtin::Max => each(dest, a, b, |a: T, b| a.max(b)),
            Builtin::And => each(dest, a, b, bitwise(|x, y| x & y)),
            Builtin::Or => each(dest, a, b, bitwise(|x, y| x | y)),
            Builtin::Xor => each(dest, a, b, bitwise(|x, y| x ^ y)),
        }
    }

    /// The same operator as a [`phasers::Op`], for the in-process reduction group.
    pub(crate) fn op<T: Element>(self) -> Op<T> {
        match self {
            Builtin::Sum => Op::Sum,
            Builtin::Product => Op::Product,
            Builtin::Min => Op::Min,
            Builtin::Max => Op::Max,
            Builtin::And => Op::And,
            Builtin::Or => Op::Or,
            Builtin::Xor => Op::Xor,
        }
    }

    fn mpi(self) -> SystemOperation {
        match self {
            Builtin::Sum => SystemOperation::sum(),
            Builtin::Product => SystemOperation::product(),
            Builtin::Min => SystemOperation::min(),
            Builtin::Max => SystemOperation::max(),
            Builtin::And => SystemOperation::bitwise_and(),
            Builtin::Or => SystemOperation::bitwise_or(),
            Builtin::Xor => SystemOperation::bitwise_xor(),
        }
    }
}

/// The element types a reduction takes ([`Element`] is sealed to these), numbered as an
/// envelope carries them, so that the envelope's MPI operation can combine them without a
/// pointer to the call's [`Reducer`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ElementCode {
    I32 = 1,
    I64,
    U32,
    U64,
    F32,
    F64,
}

impl ElementCode {
    const ALL: [ElementCode; 6] = [
        ElementCode::I32,
        ElementCode::I64,
        ElementCode::U32,
        ElementCode::U64,
        ElementCode::F32,
        ElementCode::F64,
    ];

    pub(crate) fn of<T: 'static>() -> Option<ElementCode> {
        let id = TypeId::of::<T>();
        [
            (TypeId::of::<i32>(), ElementCode::I32),
            (TypeId::of::<i64>(), ElementCode::I64),
            (TypeId::of::<u32>(), ElementCode::U32),
            (TypeId::of::<u64>(), ElementCode::U64),
            (TypeId::of::<f32>(), ElementCode::F32),
            (TypeId::of::<f64>(), ElementCode::F64),
        ]
        .into_iter()
        .find_map(|(t, code)| (t == id).then_some(code))
    }

    pub(crate) fn code(self) -> u64 {
        self as u64
    }

    pub(crate) fn from_code(code: u64) -> Option<ElementCode> {
        ElementCode::ALL.into_iter().find(|e| e.code() == code)
    }

    /// `acc[i] = acc[i] op x[i]` over native-endian elements of this type; a trailing partial
    /// element is left alone.
    pub(crate) fn combine_bytes(self, op: Builtin, acc: &mut [u8], x: &[u8]) {
        match self {
            ElementCode::I32 => combine_as::<i32>(op, acc, x),
            ElementCode::I64 => combine_as::<i64>(op, acc, x),
            ElementCode::U32 => combine_as::<u32>(op, acc, x),
            ElementCode::U64 => combine_as::<u64>(op, acc, x),
            ElementCode::F32 => combine_as::<f32>(op, acc, x),
            ElementCode::F64 => combine_as::<f64>(op, acc, x),
        }
    }
}

/// Reads and writes elements through their bits, so the bytes need no alignment.
fn combine_as<T: Element>(op: Builtin, acc: &mut [u8], x: &[u8]) {
    let size = std::mem::size_of::<T>();
    let read = |bytes: &[u8]| {
        let mut word = [0u8; 8];
        let bits = if size == 4 {
            word[..4].copy_from_slice(bytes);
            u64::from(u32::from_ne_bytes([word[0], word[1], word[2], word[3]]))
        } else {
            word.copy_from_slice(bytes);
            u64::from_ne_bytes(word)
        };
        T::from_bits(bits)
    };
    for (a, b) in acc.chunks_exact_mut(size).zip(x.chunks_exact(size)) {
        let bits = op.apply(read(a), read(b)).to_bits();
        if size == 4 {
            a.copy_from_slice(&(bits as u32).to_ne_bytes());
        } else {
            a.copy_from_slice(&bits.to_ne_bytes());
        }
    }
}

/// A member's reducers of the built-in ops it has used, one per element type and op (at most
/// the few dozen pairs there are), handed out again so that a warm member's reductions
/// allocate no reducer each call.
#[derive(Default)]
pub(crate) struct Reducers(Vec<(TypeId, &'static str, Arc<dyn Reducer>)>);

impl Reducers {
    /// The reducer of `op` on `T`.
    pub(crate) fn of<T: Element + Equivalence>(&mut self, op: Op<T>) -> Arc<dyn Reducer> {
        if Builtin::of(&op).is_none() {
            // A custom op carries the user's function: one reducer per call.
            return Arc::new(Typed::new(op));
        }
        let (ty, name) = (TypeId::of::<T>(), op.name());
        if let Some((_, _, reducer)) = self.0.iter().find(|(t, n, _)| *t == ty && *n == name) {
            return Arc::clone(reducer);
        }
        let reducer: Arc<dyn Reducer> = Arc::new(Typed::new(op));
        self.0.push((ty, name, Arc::clone(&reducer)));
        reducer
    }
}

pub(crate) struct Typed<T: Element> {
    op: Op<T>,
}

impl<T: Element + Equivalence> Typed<T> {
    pub(crate) fn new(op: Op<T>) -> Self {
        Typed { op }
    }
}

impl<T: Element + Equivalence> Reducer for Typed<T> {
    fn combine(&self, acc: &mut Bytes, x: &Bytes) {
        let (acc, x) = (acc.elements_mut::<T>(), x.elements::<T>());
        match (&self.op, Builtin::of(&self.op)) {
            (_, Some(builtin)) => {
                for (a, b) in acc.iter_mut().zip(x) {
                    *a = builtin.apply(*a, *b);
                }
            }
            (Op::Custom { combine, .. }, None) => {
                for (a, b) in acc.iter_mut().zip(x) {
                    *a = combine(*a, *b);
                }
            }
            (_, None) => {}
        }
    }

    fn builtin(&self) -> Option<MpiReduction> {
        Builtin::of(&self.op).map(|builtin| MpiReduction {
            datatype: T::equivalent_datatype().as_raw(),
            op: builtin.mpi().as_raw(),
        })
    }

    fn typed(&self) -> Option<(ElementCode, Builtin)> {
        Some((ElementCode::of::<T>()?, Builtin::of(&self.op)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes_of<T: Copy>(values: &[T]) -> Vec<u8> {
        Bytes::copy_of(values).as_slice().to_vec()
    }

    #[test]
    fn byte_combine_matches_the_typed_combine() {
        let (a, b) = ([3i32, -7, 12], [5i32, 9, -12]);
        for op in Builtin::ALL {
            let mut acc = bytes_of(&a);
            // Unaligned on purpose: the envelope's bytes may sit anywhere.
            let mut shifted = vec![0u8; 1];
            shifted.extend(bytes_of(&b));
            ElementCode::I32.combine_bytes(op, &mut acc, &shifted[1..]);
            let want: Vec<i32> = a.iter().zip(&b).map(|(x, y)| op.apply(*x, *y)).collect();
            assert_eq!(acc, bytes_of(&want), "{op:?}");
        }
        let mut acc = bytes_of(&[1.5f64, -2.0]);
        ElementCode::F64.combine_bytes(Builtin::Sum, &mut acc, &bytes_of(&[0.25f64, 4.0]));
        assert_eq!(acc, bytes_of(&[1.75f64, 2.0]));
        // A bitwise op on floats leaves the accumulator alone instead of failing.
        ElementCode::F64.combine_bytes(Builtin::Xor, &mut acc, &bytes_of(&[9.0f64, 9.0]));
        assert_eq!(acc, bytes_of(&[1.75f64, 2.0]));
    }

    #[test]
    fn accumulate_and_combine_keep_the_order_asked() {
        let mut acc = [1u64, 6, 0b1100];
        Builtin::Sum.accumulate(&mut acc[..1], &[2], false);
        Builtin::Max.accumulate(&mut acc[1..2], &[4], true);
        Builtin::Xor.accumulate(&mut acc[2..], &[0b1010], false);
        assert_eq!(acc, [3, 6, 0b0110]);
        // A float min of 0.0 and -0.0 keeps its first operand, so the order decides the bits.
        let (zero, negative) = (0.0f64, -0.0f64);
        let mut first = [zero];
        Builtin::Min.accumulate(&mut first, &[negative], true);
        let mut second = [negative];
        Builtin::Min.accumulate(&mut second, &[zero], false);
        assert_eq!(first[0].to_bits(), second[0].to_bits());
        let mut dest = [0i32; 3];
        Builtin::Product.combine(&mut dest, &[2, -3, 4], &[5, 6, -7]);
        assert_eq!(dest, [10, -18, -28]);
        let mut floats = [0.0f32; 2];
        Builtin::And.combine(&mut floats, &[1.5, 2.5], &[3.0, 4.0]);
        assert_eq!(
            floats,
            [1.5, 2.5],
            "a bitwise op leaves floats as the first operand"
        );
        assert!(matches!(Builtin::Sum.op::<u64>(), Op::Sum));
    }

    #[test]
    fn codes_round_trip() {
        for op in Builtin::ALL {
            assert_eq!(Builtin::from_code(op.code()), Some(op));
        }
        for e in ElementCode::ALL {
            assert_eq!(ElementCode::from_code(e.code()), Some(e));
        }
        assert_eq!(ElementCode::of::<f32>(), Some(ElementCode::F32));
        assert_eq!(ElementCode::of::<u8>(), None);
        assert_eq!(Builtin::from_code(0), None);
    }
}
