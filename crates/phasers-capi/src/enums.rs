//! The enumerations that cross the ABI as `int`: each value is checked against its list, never
//! transmuted, so a value outside it is `PHASERS_EINVAL` and not undefined behaviour.

use std::ffi::c_int;

use phasers_core::{Algorithm, Mode, ReduceAlgorithm};

use crate::status::Failure;

/// Barrier algorithms in the order of the header's `PHASERS_ALGORITHM_*` values (index = value).
pub const ALGORITHMS: [Algorithm; 8] = [
    Algorithm::Auto,
    Algorithm::SenseReversing,
    Algorithm::Counting,
    Algorithm::Ticket,
    Algorithm::CombiningTree,
    Algorithm::McsTree,
    Algorithm::Dissemination,
    Algorithm::Tournament,
];

/// Reduction algorithms in the order of the header's `PHASERS_REDUCE_*` values.
pub const REDUCE_ALGORITHMS: [ReduceAlgorithm; 5] = [
    ReduceAlgorithm::Auto,
    ReduceAlgorithm::Linear,
    ReduceAlgorithm::StaticTree,
    ReduceAlgorithm::DynamicPairs,
    ReduceAlgorithm::DynamicGroup,
];

/// Phaser modes in the order of the header's `PHASERS_MODE_*` values.
pub const MODES: [Mode; 4] = [Mode::Sig, Mode::Wait, Mode::SigWait, Mode::SigWaitSingle];

/// The accumulator element types of the header's `PHASERS_TYPE_*` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElementType {
    /// `int32_t`.
    I32,
    /// `int64_t`.
    I64,
    /// `uint32_t`.
    U32,
    /// `uint64_t`.
    U64,
    /// `float`.
    F32,
    /// `double`.
    F64,
}

/// Element types in the order of the header's `PHASERS_TYPE_*` values.
pub const ELEMENT_TYPES: [ElementType; 6] = [
    ElementType::I32,
    ElementType::I64,
    ElementType::U32,
    ElementType::U64,
    ElementType::F32,
    ElementType::F64,
];

impl ElementType {
    /// The suffix of the typed functions (`phasers_accumulator_send_i32`, ...).
    pub fn suffix(self) -> &'static str {
        match self {
            ElementType::I32 => "i32",
            ElementType::I64 => "i64",
            ElementType::U32 => "u32",
            ElementType::U64 => "u64",
            ElementType::F32 => "f32",
            ElementType::F64 => "f64",
        }
    }

    /// The C type and its constant, as messages name them (`i32` is Rust's spelling).
    pub fn c_name(self) -> &'static str {
        match self {
            ElementType::I32 => "int32_t (PHASERS_TYPE_I32)",
            ElementType::I64 => "int64_t (PHASERS_TYPE_I64)",
            ElementType::U32 => "uint32_t (PHASERS_TYPE_U32)",
            ElementType::U64 => "uint64_t (PHASERS_TYPE_U64)",
            ElementType::F32 => "float (PHASERS_TYPE_F32)",
            ElementType::F64 => "double (PHASERS_TYPE_F64)",
        }
    }
}

/// Reduction operators of the header's `PHASERS_OP_*` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    /// `PHASERS_OP_SUM`.
    Sum,
    /// `PHASERS_OP_PRODUCT`.
    Product,
    /// `PHASERS_OP_MIN`.
    Min,
    /// `PHASERS_OP_MAX`.
    Max,
    /// `PHASERS_OP_AND`.
    And,
    /// `PHASERS_OP_OR`.
    Or,
    /// `PHASERS_OP_XOR`.
    Xor,
}

/// Operators in the order of the header's `PHASERS_OP_*` values.
pub const OPS: [OpKind; 7] = [
    OpKind::Sum,
    OpKind::Product,
    OpKind::Min,
    OpKind::Max,
    OpKind::And,
    OpKind::Or,
    OpKind::Xor,
];

impl OpKind {
    /// The core's operator for element type `T`.
    pub fn to_op<T>(self) -> phasers_core::Op<T> {
        use phasers_core::Op;
        match self {
            OpKind::Sum => Op::Sum,
            OpKind::Product => Op::Product,
            OpKind::Min => Op::Min,
            OpKind::Max => Op::Max,
            OpKind::And => Op::And,
            OpKind::Or => Op::Or,
            OpKind::Xor => Op::Xor,
        }
    }
}

/// The entry of `table` for the C value `value`, or `PHASERS_EINVAL` naming `what` and the range.
pub fn from_c<T: Copy>(table: &[T], value: c_int, what: &str, prefix: &str) -> Result<T, Failure> {
    usize::try_from(value)
        .ok()
        .and_then(|index| table.get(index))
        .copied()
        .ok_or_else(|| {
            Failure::invalid(format!(
                "{value} is not a valid {what}; pass one of the {prefix}* constants (0 to {})",
                table.len() - 1
            ))
        })
}

/// Checks a C mode value (`PHASERS_MODE_*`): phasers and registrations both take one.
pub(crate) fn mode_from_c(mode: c_int) -> Result<Mode, Failure> {
    from_c(&MODES, mode, "mode", "PHASERS_MODE_")
}

/// The C value of `algorithm`.
pub fn algorithm_to_c(algorithm: Algorithm) -> c_int {
    let index = ALGORITHMS
        .iter()
        .position(|known| *known == algorithm)
        .expect("ALGORITHMS lists every algorithm");
    c_int::try_from(index).expect("eight algorithms fit in an int")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn algorithms_cover_auto_and_every_concrete_one_once() {
        assert_eq!(ALGORITHMS[0], Algorithm::Auto);
        assert_eq!(&ALGORITHMS[1..], &Algorithm::CONCRETE[..]);
        for (value, algorithm) in ALGORITHMS.iter().enumerate() {
            assert_eq!(algorithm_to_c(*algorithm) as usize, value);
        }
    }

    #[test]
    fn reduce_algorithms_cover_every_one_once() {
        assert_eq!(REDUCE_ALGORITHMS.len(), ReduceAlgorithm::ALL.len());
        for algorithm in ReduceAlgorithm::ALL {
            assert_eq!(
                REDUCE_ALGORITHMS
                    .iter()
                    .filter(|a| **a == algorithm)
                    .count(),
                1
            );
        }
        assert_eq!(REDUCE_ALGORITHMS[0], ReduceAlgorithm::Auto);
    }

    #[test]
    fn modes_cover_every_mode_once() {
        for mode in Mode::ALL {
            assert_eq!(MODES.iter().filter(|m| **m == mode).count(), 1);
        }
    }

    #[test]
    fn out_of_range_values_are_refused_with_the_range() {
        assert_eq!(
            from_c(&MODES, 2, "mode", "PHASERS_MODE_"),
            Ok(Mode::SigWait)
        );
        for bad in [-1, 4, c_int::MAX, c_int::MIN] {
            let failure = from_c(&MODES, bad, "mode", "PHASERS_MODE_").unwrap_err();
            assert_eq!(failure.code, crate::status::PHASERS_EINVAL);
            assert!(failure.message.contains("0 to 3"), "{failure:?}");
        }
    }
}
