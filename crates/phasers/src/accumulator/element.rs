//! The number types an accumulator can reduce, and how each op works on them.

use std::cmp::Ordering;

mod sealed {
    pub trait Sealed {}
}

/// A type an [`Accumulator`](crate::Accumulator) reduces: `i32`, `i64`, `u32`, `u64`, `f32`,
/// `f64`. Values travel through the phaser's tree as 64-bit patterns.
///
/// The trait is sealed: bound generic code by it, but do not implement it.
///
/// ```
/// use phasers::{Accumulator, Element, Mode, Op, Phaser};
///
/// // A sum over one phase, for any element type.
/// fn sum<T: Element>(values: &[T]) -> phasers::Result<T> {
///     let (phaser, mut main) = Phaser::new(Mode::SigWait)?;
///     let sum = Accumulator::new(&phaser, Op::Sum)?;
///     values.iter().try_for_each(|&v| sum.send(&mut main, v))?;
///     main.next()?;
///     Ok(sum.result())
/// }
/// assert_eq!((sum(&[1i32, -3])?, sum(&[1i64, 2])?), (-2, 3));
/// assert_eq!((sum(&[1u32, 2])?, sum(&[u64::MAX, 2])?), (3, 1)); // integers wrap
/// assert_eq!((sum(&[0.5f32, 0.25])?, sum(&[1.5f64, 2.0])?), (0.75, 3.5));
/// # Ok::<(), phasers::Error>(())
/// ```
pub trait Element:
    sealed::Sealed + Copy + Send + Sync + PartialEq + std::fmt::Debug + 'static
{
    /// Whether `And`, `Or` and `Xor` apply.
    #[doc(hidden)]
    const INTEGER: bool;
    #[doc(hidden)]
    const ZERO: Self;
    #[doc(hidden)]
    const ONE: Self;
    #[doc(hidden)]
    const MIN: Self;
    #[doc(hidden)]
    const MAX: Self;
    #[doc(hidden)]
    fn to_bits(self) -> u64;
    #[doc(hidden)]
    fn from_bits(bits: u64) -> Self;
    #[doc(hidden)]
    fn add(self, other: Self) -> Self;
    #[doc(hidden)]
    fn mul(self, other: Self) -> Self;
    #[doc(hidden)]
    fn min(self, other: Self) -> Self;
    #[doc(hidden)]
    fn max(self, other: Self) -> Self;
    #[doc(hidden)]
    fn bitwise(self, other: Self, op: fn(u64, u64) -> u64) -> Self;
    /// A total order, for reproducible combination.
    #[doc(hidden)]
    fn total_cmp(self, other: Self) -> Ordering;
}

macro_rules! integer {
    ($($t:ty => $bits:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const INTEGER: bool = true;
            const ZERO: Self = 0;
            const ONE: Self = 1;
            const MIN: Self = <$t>::MIN;
            const MAX: Self = <$t>::MAX;
            fn to_bits(self) -> u64 {
                self as $bits as u64
            }
            fn from_bits(bits: u64) -> Self {
                bits as $bits as $t
            }
            fn add(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
            fn mul(self, other: Self) -> Self {
                self.wrapping_mul(other)
            }
            fn min(self, other: Self) -> Self {
                Ord::min(self, other)
            }
            fn max(self, other: Self) -> Self {
                Ord::max(self, other)
            }
            fn bitwise(self, other: Self, op: fn(u64, u64) -> u64) -> Self {
                Self::from_bits(op(self.to_bits(), other.to_bits()))
            }
            fn total_cmp(self, other: Self) -> Ordering {
                self.cmp(&other)
            }
        }
    )*};
}

integer!(i32 => u32, i64 => u64, u32 => u32, u64 => u64);

macro_rules! float {
    ($($t:ty => $bits:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const INTEGER: bool = false;
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const MIN: Self = <$t>::NEG_INFINITY;
            const MAX: Self = <$t>::INFINITY;
            fn to_bits(self) -> u64 {
                u64::from(<$t>::to_bits(self))
            }
            fn from_bits(bits: u64) -> Self {
                <$t>::from_bits(bits as $bits)
            }
            fn add(self, other: Self) -> Self {
                self + other
            }
            fn mul(self, other: Self) -> Self {
                self * other
            }
            fn min(self, other: Self) -> Self {
                <$t>::min(self, other)
            }
            fn max(self, other: Self) -> Self {
                <$t>::max(self, other)
            }
            fn bitwise(self, _: Self, _: fn(u64, u64) -> u64) -> Self {
                unreachable!("Accumulator::new refuses bitwise ops on floats")
            }
            fn total_cmp(self, other: Self) -> Ordering {
                <$t>::total_cmp(&self, &other)
            }
        }
    )*};
}

float!(f32 => u32, f64 => u64);
