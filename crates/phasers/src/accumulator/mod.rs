//! Accumulators: reductions tied to a phaser's phases (seed 000, §II-B and §V).
//!
//! An [`Accumulator`] rides a [`Phaser`]. A task [`send`](Accumulator::send)s values during a
//! phase; when the phase completes, [`result`](Accumulator::result) holds their reduction.
//!
//! - Several sends by one task in one phase all count; so do sends of a task dropped mid-phase.
//! - Sends after [`Registration::signal`] count for the next phase.
//! - A phaser can host several accumulators; each rides the same gather.
//! - On a tree phaser the partial results combine up the same tree, fused into the gather: each
//!   task folds its partial into its leaf's cell just before it signals, and the last signaller of a
//!   sub-phaser moves the cell's value into its parent's cell just before it signals there. Inside a
//!   task, sends combine in a local variable: no atomic operation per send.
//!
//! # Reproducible floating point
//!
//! Floating-point addition is not associative, so the default mode's result depends on the order in
//! which tasks arrive. [`Accumulator::reproducible`] gives the same bits for the same values, whatever
//! that order: each task's partial (its sends combined in the order it made them) is kept, and at
//! the end of the phase the partials are sorted (by [`f64::total_cmp`] for floats) and combined in
//! that order. The cost: every signal takes a lock to store its partial, and the phase's last
//! signaller sorts and combines all `n` partials, `O(n log n)` on the critical path, instead of
//! combining through the tree.
//!
//! ```
//! use phasers::{Accumulator, Mode, Op, Phaser};
//!
//! let (phaser, mut main) = Phaser::new(Mode::SigWait)?;
//! let total = Accumulator::<u64>::new(&phaser, Op::Sum)?;
//! let largest = Accumulator::<f64>::new(&phaser, Op::Max)?;
//! std::thread::scope(|s| {
//!     for task in 1..=4u64 {
//!         let mut reg = main.register(Mode::SigWait).unwrap();
//!         let (total, largest) = (&total, &largest);
//!         s.spawn(move || {
//!             total.send(&mut reg, task).unwrap();
//!             largest.send(&mut reg, task as f64 / 2.0).unwrap();
//!             reg.next().unwrap();
//!         });
//!     }
//!     main.next().unwrap();
//! });
//! assert_eq!(total.result(), 10);
//! assert_eq!(largest.result(), 2.0);
//! # Ok::<(), phasers::Error>(())
//! ```

mod element;

pub use element::Element;

use std::marker::PhantomData;

use crate::error::{Error, Result};
// The cells an accumulator's values travel in belong to the phaser's gather (see
// phaser/cells.rs): the accumulator imports the phaser, never the other way round.
use crate::phaser::{Cells, Combine, Phaser, Registration};
use crate::primitive::Arc;

/// A reduction operator, for an [`Accumulator`] or a [`Reduction`](crate::Reduction).
///
/// ```
/// use phasers::{Op, Reduction};
///
/// let ops = [Op::<u32>::Sum, Op::Product, Op::Min, Op::Max, Op::And, Op::Or, Op::Xor];
/// assert_eq!(ops.map(|op| op.name()), ["Sum", "Product", "Min", "Max", "And", "Or", "Xor"]);
/// let group = Reduction::<u32>::new(4, Op::Xor)?;
/// std::thread::scope(|s| {
///     for mut p in group.participants() {
///         s.spawn(move || {
///             let mut out = [0];
///             p.allreduce(&[p.rank() as u32 + 1], &mut out).unwrap();
///             assert_eq!(out, [1 ^ 2 ^ 3 ^ 4]);
///         });
///     }
/// });
/// # Ok::<(), phasers::Error>(())
/// ```
pub enum Op<T> {
    /// `a + b`, wrapping for integers.
    Sum,
    /// `a * b`, wrapping for integers.
    Product,
    /// The smaller (for floats, [`f64::min`]: a NaN loses).
    Min,
    /// The larger (for floats, [`f64::max`]: a NaN loses).
    Max,
    /// Bitwise and; integers only.
    And,
    /// Bitwise or; integers only.
    Or,
    /// Bitwise exclusive or; integers only.
    Xor,
    /// A user operator: it must be associative and commutative with `identity` as its identity,
    /// and pure, because under contention it may be called again with the same arguments.
    Custom {
        /// `combine(identity, x) == x` for every `x`.
        identity: T,
        /// The operator.
        combine: std::sync::Arc<dyn Fn(T, T) -> T + Send + Sync>,
    },
}

impl<T> Op<T> {
    /// A user operator; see [`Op::Custom`].
    ///
    /// ```
    /// use phasers::{Op, Reduction};
    ///
    /// // The greatest common divisor: associative, commutative, and gcd(0, x) == x.
    /// fn gcd(a: u64, b: u64) -> u64 { if b == 0 { a } else { gcd(b, a % b) } }
    /// let group = Reduction::new(3, Op::custom(0, gcd))?;
    /// std::thread::scope(|s| {
    ///     for mut p in group.participants() {
    ///         s.spawn(move || {
    ///             let mut out = [0];
    ///             p.allreduce(&[12 * (p.rank() as u64 + 2)], &mut out).unwrap();
    ///             assert_eq!(out, [12]); // gcd(24, 36, 48)
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn custom(identity: T, combine: impl Fn(T, T) -> T + Send + Sync + 'static) -> Self {
        Op::Custom {
            identity,
            combine: std::sync::Arc::new(combine),
        }
    }

    /// The op's name, as error messages print it: `"Sum"`, ..., `"Custom"`.
    ///
    /// ```
    /// use phasers::{Op, Reduction};
    ///
    /// assert_eq!(Op::<f64>::Max.name(), "Max");
    /// assert_eq!(Op::custom(1u64, |a, b| a * b).name(), "Custom");
    /// let err = Reduction::<f64>::new(2, Op::Xor).unwrap_err();
    /// assert!(err.to_string().contains("Op::Xor"));
    /// ```
    pub fn name(&self) -> &'static str {
        match self {
            Op::Sum => "Sum",
            Op::Product => "Product",
            Op::Min => "Min",
            Op::Max => "Max",
            Op::And => "And",
            Op::Or => "Or",
            Op::Xor => "Xor",
            Op::Custom { .. } => "Custom",
        }
    }
}

impl<T: Element> Op<T> {
    /// `a` combined with `b`: the one mapping of each op to its binary function, which the
    /// accumulators and the teams' one-word calls share. A bitwise op applies to integers only:
    /// every constructor refuses it on floats before anything is combined.
    #[inline]
    pub(crate) fn apply(&self, a: T, b: T) -> T {
        match self {
            Op::Sum => a.add(b),
            Op::Product => a.mul(b),
            Op::Min => a.min(b),
            Op::Max => a.max(b),
            Op::And => a.bitwise(b, |x, y| x & y),
            Op::Or => a.bitwise(b, |x, y| x | y),
            Op::Xor => a.bitwise(b, |x, y| x ^ y),
            Op::Custom { combine, .. } => combine(a, b),
        }
    }

    fn into_combine(self) -> Result<Combine> {
        if matches!(self, Op::And | Op::Or | Op::Xor) && !T::INTEGER {
            return Err(Error::invalid(format!(
                "Op::{} is a bitwise operator and applies to integers only, not {}; use Sum, \
                 Product, Min, Max or Op::custom",
                self.name(),
                std::any::type_name::<T>()
            )));
        }
        let identity = match &self {
            Op::Sum | Op::Or | Op::Xor => T::ZERO,
            Op::Product => T::ONE,
            Op::Min => T::MAX,
            Op::Max => T::MIN,
            Op::And => T::from_bits(u64::MAX),
            Op::Custom { identity, .. } => *identity,
        };
        Ok(Combine {
            identity: identity.to_bits(),
            // Integer sums of 64-bit patterns wrap like the integer type itself (the upper half of
            // a 32-bit type's pattern is dropped when it is read back): one `fetch_add` does.
            wrapping_add: matches!(self, Op::Sum) && T::INTEGER,
            apply: Box::new(move |a, b| self.apply(T::from_bits(a), T::from_bits(b)).to_bits()),
            order: |a, b| T::from_bits(a).total_cmp(T::from_bits(b)),
        })
    }
}

/// A reduction tied to a phaser's phases. Cloning it is cheap (a handle to the same accumulator).
///
/// ```
/// use phasers::{Accumulator, Mode, Op, Phaser};
///
/// let (phaser, mut main) = Phaser::new(Mode::SigWait)?;
/// let count = Accumulator::<u32>::new(&phaser, Op::Sum)?;
/// std::thread::scope(|s| {
///     for _ in 0..3 {
///         let mut reg = main.register(Mode::SigWait).unwrap();
///         let count = count.clone(); // the same accumulator
///         s.spawn(move || {
///             count.send(&mut reg, 1).unwrap();
///             reg.next().unwrap();
///         });
///     }
///     main.next().unwrap();
/// });
/// assert_eq!(count.result(), 3);
/// # Ok::<(), phasers::Error>(())
/// ```
///
/// See the [module docs](self) for the semantics.
pub struct Accumulator<T: Element> {
    cells: Arc<Cells>,
    phaser: Phaser,
    _type: PhantomData<fn(T) -> T>,
}

impl<T: Element> Clone for Accumulator<T> {
    fn clone(&self) -> Self {
        Accumulator {
            cells: self.cells.clone(),
            phaser: self.phaser.clone(),
            _type: PhantomData,
        }
    }
}

impl<T: Element> Accumulator<T> {
    /// An accumulator on `phaser` reducing with `op`; the fast mode, whose floating-point results
    /// may differ in the last bits with the order in which tasks arrive.
    ///
    /// ```
    /// use phasers::{Accumulator, Error, Mode, Op, Phaser};
    ///
    /// let (phaser, mut main) = Phaser::new(Mode::SigWait)?;
    /// let bitwise_float = Accumulator::<f64>::new(&phaser, Op::Or);
    /// assert!(matches!(bitwise_float, Err(Error::InvalidArgument { .. })));
    /// let lowest = Accumulator::<i64>::new(&phaser, Op::Min)?;
    /// std::thread::scope(|s| {
    ///     for value in [3, -7, 5] {
    ///         let (mut reg, lowest) = (main.register(Mode::SigWait).unwrap(), &lowest);
    ///         s.spawn(move || {
    ///             lowest.send(&mut reg, value).unwrap();
    ///             reg.next().unwrap();
    ///         });
    ///     }
    ///     main.next().unwrap();
    /// });
    /// assert_eq!(lowest.result(), -7);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a bitwise op on a floating-point type.
    pub fn new(phaser: &Phaser, op: Op<T>) -> Result<Self> {
        Self::build(phaser, op, false)
    }

    /// An accumulator whose result has the same bits for the same contributions, whatever the
    /// order in which tasks arrive; see the [module docs](self) for the cost.
    ///
    /// ```
    /// use phasers::{Accumulator, Mode, Op, Phaser};
    ///
    /// let (phaser, mut main) = Phaser::new(Mode::SigWait)?;
    /// let sum = Accumulator::<f64>::reproducible(&phaser, Op::Sum)?;
    /// std::thread::scope(|s| {
    ///     for value in [1e16, 1.0, -1e16] {
    ///         let mut reg = main.register(Mode::SigWait).unwrap();
    ///         let sum = &sum;
    ///         s.spawn(move || {
    ///             sum.send(&mut reg, value).unwrap();
    ///             reg.next().unwrap();
    ///         });
    ///     }
    ///     main.next().unwrap();
    /// });
    /// // Sorted order: -1e16 + 0.0 (the creator sent nothing) + 1.0 + 1e16, whoever came first.
    /// assert_eq!(sum.result(), ((-1e16f64 + 1.0) + 1e16));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a bitwise op on a floating-point type.
    pub fn reproducible(phaser: &Phaser, op: Op<T>) -> Result<Self> {
        Self::build(phaser, op, true)
    }

    fn build(phaser: &Phaser, op: Op<T>, reproducible: bool) -> Result<Self> {
        let cells = phaser.attach(op.into_combine()?, reproducible);
        Ok(Accumulator {
            cells,
            phaser: phaser.clone(),
            _type: PhantomData,
        })
    }

    /// Contributes `value` to `registration`'s current phase.
    ///
    /// ```
    /// use phasers::{Accumulator, Error, Mode, Op, Phaser};
    ///
    /// let (phaser, mut main) = Phaser::new(Mode::SigWait)?;
    /// let sum = Accumulator::<u64>::new(&phaser, Op::Sum)?;
    /// std::thread::scope(|s| {
    ///     let (mut reg, sum) = (main.register(Mode::SigWait).unwrap(), &sum);
    ///     s.spawn(move || {
    ///         // Several sends in one phase all count.
    ///         (1..=3).for_each(|v| sum.send(&mut reg, v).unwrap());
    ///         reg.next().unwrap();
    ///     });
    ///     main.next().unwrap();
    /// });
    /// assert_eq!(sum.result(), 6);
    /// let (_other, mut stranger) = Phaser::new(Mode::SigWait)?;
    /// assert!(matches!(sum.send(&mut stranger, 1), Err(Error::InvalidArgument { .. })));
    /// let mut watcher = main.register(Mode::Wait)?;
    /// assert!(matches!(sum.send(&mut watcher, 1), Err(Error::Capability { .. })));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `registration` belongs to another phaser;
    /// [`Error::Capability`] for a wait-only registration (its phase may already be complete).
    pub fn send(&self, registration: &mut Registration, value: T) -> Result<()> {
        if !Arc::ptr_eq(&registration.phaser().core, &self.phaser.core) {
            return Err(Error::invalid(
                "this registration belongs to another phaser than the accumulator; send with a \
                 registration of the accumulator's phaser",
            ));
        }
        registration.contribute(&self.cells, value.to_bits())
    }

    /// The reduction of the most recently completed phase (the op's identity before any).
    ///
    /// ```
    /// use phasers::{Accumulator, Mode, Op, Phaser};
    ///
    /// // One task, so each `next` completes a phase at once.
    /// let (phaser, mut main) = Phaser::new(Mode::SigWait)?;
    /// let largest = Accumulator::<f32>::new(&phaser, Op::Max)?;
    /// assert_eq!(largest.result(), f32::NEG_INFINITY); // Max's identity
    /// largest.send(&mut main, 2.5)?;
    /// assert_eq!(largest.result(), f32::NEG_INFINITY); // the phase is not complete
    /// main.next()?;
    /// assert_eq!(largest.result(), 2.5);
    /// largest.send(&mut main, 1.0)?;
    /// main.next()?;
    /// assert_eq!(largest.result(), 1.0); // each phase starts from the identity
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn result(&self) -> T {
        T::from_bits(self.cells.result())
    }
}

impl<T: Element> std::fmt::Debug for Accumulator<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Accumulator")
            .field("result", &self.result())
            .field("reproducible", &self.cells.is_reproducible())
            .finish()
    }
}
