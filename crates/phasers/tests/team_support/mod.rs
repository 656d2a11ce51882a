//! Shared helpers for the team tests (`team_*.rs`): a runner that gives every member its own
//! thread and turns a hang into a test failure, reproducible pseudo-random values and delays, the
//! element types the tests use, and one checked call of any collective against its sequential
//! definition.
//!
//! Each test binary includes this module with `mod team_support;` and uses only part of it, so
//! unused helpers are allowed.
#![allow(dead_code)]

use std::fmt::Debug;
use std::sync::Arc;

use phasers::{Element, Member, Op, Pending, SyncMode};

#[path = "../replay_support/mod.rs"]
mod replay_support;
#[path = "../watchdog_support/mod.rs"]
mod watchdog_support;

#[allow(unused_imports)] // each test binary uses part of the support module
pub use replay_support::{arrive_after, collect_values, hash};
#[allow(unused_imports)] // each test binary uses part of the support module
pub use watchdog_support::{payload_text, within, HANG};

/// Hands each of `members` to `body` on its own thread (named after its rank), and returns each
/// thread's outcome with its rank, in the order given, panics included. Not protected against
/// hangs: call it inside [`within`], as [`run_each_within`] and [`run_all`] do.
pub fn run_each<T, R, F>(
    members: Vec<T>,
    rank: fn(&T) -> usize,
    body: F,
) -> Vec<(usize, std::thread::Result<R>)>
where
    T: Send + 'static,
    R: Send + 'static,
    F: Fn(T) -> R + Send + Sync + 'static,
{
    let body = Arc::new(body);
    let threads: Vec<_> = members
        .into_iter()
        .map(|member| {
            let rank = rank(&member);
            let body = Arc::clone(&body);
            let thread = std::thread::Builder::new()
                .name(format!("rank {rank}"))
                .spawn(move || body(member))
                .expect("spawn a member thread");
            (rank, thread)
        })
        .collect();
    threads
        .into_iter()
        .map(|(rank, thread)| (rank, thread.join()))
        .collect()
}

/// Every member of `members` on its own thread, under the hang watchdog; each thread's outcome in
/// the order given, panics included.
pub fn run_each_within<R, F>(
    what: &str,
    members: Vec<Member>,
    body: F,
) -> Vec<(usize, std::thread::Result<R>)>
where
    R: Send + 'static,
    F: Fn(Member) -> R + Send + Sync + 'static,
{
    within(what, move || run_each(members, Member::rank, body))
}

/// [`run_each_within`], where no member may panic: returns what each returned, in the order given,
/// or fails with every member's panic message (the first one is usually the cause, the others its
/// consequences, such as `Broken`).
pub fn run_all<R, F>(what: &str, members: Vec<Member>, body: F) -> Vec<R>
where
    R: Send + 'static,
    F: Fn(Member) -> R + Send + Sync + 'static,
{
    collect_values(what, run_each_within(what, members, body))
}

/// The three synchronization modes, for loops over all of them.
pub const SYNC_MODES: [SyncMode; 3] = [SyncMode::AllSync, SyncMode::MySync, SyncMode::NoSync];

/// The operators of the test matrix: the library's built-in ones, a library `Op::custom`, and
/// `With`, the `*_with` forms that take a plain function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    Sum,
    Product,
    Min,
    Max,
    And,
    Or,
    Xor,
    Custom,
    With,
}

/// The constant the custom operators add per combination: `a + b + CUSTOM_STEP` is associative
/// and commutative with identity `-CUSTOM_STEP`, is not a built-in operator, and counts
/// combinations, so a value combined twice or an identity mishandled shows in the result.
pub const CUSTOM_STEP: i64 = 3;

/// What the tests need of an element: a value from a hash (chosen per operator so that every
/// order of combination gives the same exact result), the operators it is reduced with, and a
/// sentinel that marks output the call was not supposed to write.
pub trait Sample: Copy + PartialEq + Debug + Send + Sync + 'static {
    const NAME: &'static str;
    /// The operators this type is reduced with.
    const OPS: &'static [OpKind];
    fn value(h: u64, op: OpKind) -> Self;
    /// `op` applied by the test (the sequential definition).
    fn apply(op: OpKind, a: Self, b: Self) -> Self;
    fn sentinel() -> Self;
    /// Makes a reduce-like call with a library operator (`Op<Self>`); only types that implement
    /// [`Element`] have one, others only reduce through `With`.
    fn call_builtin(
        member: &mut Member,
        call: Reducing,
        op: OpKind,
        style: Style,
        input: &[Self],
        output: &mut [Self],
    ) -> phasers::Result<()>;
}

/// The reduce-like collectives, which take an operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reducing {
    Reduce(usize),
    Allreduce,
    ScanInclusive,
    ScanExclusive,
}

/// The library operator for `op` on an element type.
pub fn library_op<T: Sample + Element + Step>(op: OpKind) -> Op<T> {
    match op {
        OpKind::Sum => Op::Sum,
        OpKind::Product => Op::Product,
        OpKind::Min => Op::Min,
        OpKind::Max => Op::Max,
        OpKind::And => Op::And,
        OpKind::Or => Op::Or,
        OpKind::Xor => Op::Xor,
        OpKind::Custom => Op::custom(T::value_of_step(-CUSTOM_STEP), |a: T, b: T| {
            T::apply(OpKind::Custom, a, b)
        }),
        OpKind::With => unreachable!("With goes through the *_with forms"),
    }
}

/// A small integer as an element, for the custom operator's identity.
pub trait Step {
    fn value_of_step(x: i64) -> Self;
}

/// How a call is made: the blocking form, or the `i` form then `wait()`, or the `i` form polled
/// with `test()` until it is complete and then `wait()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Blocking,
    Wait,
    Poll,
}

impl Style {
    pub const ALL: [Style; 3] = [Style::Blocking, Style::Wait, Style::Poll];
}

/// Completes a non-blocking call in `style`: polled with `test()` (yielding between polls, so
/// that on 2 cores the other members get to run) until it says complete, then `wait()`, which
/// must then be fine; or `wait()` at once.
pub fn finish<T: Copy + Send + 'static>(
    style: Style,
    pending: phasers::Result<Pending<'_, T>>,
) -> phasers::Result<()> {
    let mut pending = pending?;
    if style == Style::Poll {
        while !pending.test()? {
            std::thread::yield_now();
        }
    }
    pending.wait()
}

/// Calls a collective in `style`: `$blocking(args)` or `$nonblocking(args)` then [`finish`]. Test
/// files that want it include this module with `#[macro_use]`.
macro_rules! call_in_style {
    ($style:expr, $member:expr, $blocking:ident, $nonblocking:ident ($($arg:expr),* $(,)?)) => {
        match $style {
            $crate::team_support::Style::Blocking => $member.$blocking($($arg),*),
            style => $crate::team_support::finish(style, $member.$nonblocking($($arg),*)),
        }
    };
}

/// [`Sample::call_builtin`] for element types.
fn builtin_call<T: Sample + Element + Step>(
    member: &mut Member,
    call: Reducing,
    op: OpKind,
    style: Style,
    input: &[T],
    output: &mut [T],
) -> phasers::Result<()> {
    let op = library_op::<T>(op);
    match call {
        Reducing::Reduce(root) => {
            call_in_style!(style, member, reduce, ireduce(root, input, output, op))
        }
        Reducing::Allreduce => {
            call_in_style!(style, member, allreduce, iallreduce(input, output, op))
        }
        Reducing::ScanInclusive => call_in_style!(
            style,
            member,
            scan_inclusive,
            iscan_inclusive(input, output, op)
        ),
        Reducing::ScanExclusive => call_in_style!(
            style,
            member,
            scan_exclusive,
            iscan_exclusive(input, output, op)
        ),
    }
}

macro_rules! integer_sample {
    ($($t:ident),*) => {$(
        impl Step for $t {
            fn value_of_step(x: i64) -> Self {
                x as $t
            }
        }

        impl Sample for $t {
            const NAME: &'static str = stringify!($t);
            const OPS: &'static [OpKind] = &[
                OpKind::Sum,
                OpKind::Product,
                OpKind::Min,
                OpKind::Max,
                OpKind::And,
                OpKind::Or,
                OpKind::Xor,
                OpKind::Custom,
                OpKind::With,
            ];
            /// Any bit pattern (wrapping arithmetic is exact in any order), except that `And`
            /// gets mostly set bits and `Or` mostly clear ones, so the result says something.
            fn value(h: u64, op: OpKind) -> Self {
                match op {
                    OpKind::And => !(h & (h >> 17) & (h >> 34)) as $t,
                    OpKind::Or => (h & (h >> 17) & (h >> 34)) as $t,
                    _ => h as $t,
                }
            }
            fn apply(op: OpKind, a: Self, b: Self) -> Self {
                match op {
                    OpKind::Sum => a.wrapping_add(b),
                    OpKind::Product => a.wrapping_mul(b),
                    OpKind::Min => Ord::min(a, b),
                    OpKind::Max => Ord::max(a, b),
                    OpKind::And => a & b,
                    OpKind::Or => a | b,
                    OpKind::Xor => a ^ b,
                    OpKind::Custom | OpKind::With => {
                        a.wrapping_add(b).wrapping_add(CUSTOM_STEP as $t)
                    }
                }
            }
            fn sentinel() -> Self {
                0x5A5A_5A5A_5A5A_5A5A_u64 as $t
            }
            fn call_builtin(
                member: &mut Member,
                call: Reducing,
                op: OpKind,
                style: Style,
                input: &[Self],
                output: &mut [Self],
            ) -> phasers::Result<()> {
                builtin_call(member, call, op, style, input, output)
            }
        }
    )*};
}

integer_sample!(u64, i32);

impl Step for f64 {
    fn value_of_step(x: i64) -> Self {
        x as f64
    }
}

impl Sample for f64 {
    const NAME: &'static str = "f64";
    const OPS: &'static [OpKind] = &[
        OpKind::Sum,
        OpKind::Product,
        OpKind::Min,
        OpKind::Max,
        OpKind::Custom,
        OpKind::With,
    ];
    /// Multiples of 1/4 in `-250..=250`, so sums of up to thousands of them are exact in any
    /// order; factors +-1/4 .. +-4 (powers of two) for products, so products of 64 are exact.
    fn value(h: u64, op: OpKind) -> Self {
        match op {
            OpKind::Product => {
                const FACTORS: [f64; 10] =
                    [0.25, -0.25, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0];
                FACTORS[(h % 10) as usize]
            }
            _ => ((h % 2001) as i64 - 1000) as f64 / 4.0,
        }
    }
    fn apply(op: OpKind, a: Self, b: Self) -> Self {
        match op {
            OpKind::Sum => a + b,
            OpKind::Product => a * b,
            OpKind::Min => f64::min(a, b),
            OpKind::Max => f64::max(a, b),
            OpKind::Custom | OpKind::With => a + b + CUSTOM_STEP as f64,
            OpKind::And | OpKind::Or | OpKind::Xor => unreachable!("not a float operator"),
        }
    }
    fn sentinel() -> Self {
        -1.0e300
    }
    fn call_builtin(
        member: &mut Member,
        call: Reducing,
        op: OpKind,
        style: Style,
        input: &[Self],
        output: &mut [Self],
    ) -> phasers::Result<()> {
        builtin_call(member, call, op, style, input, output)
    }
}

/// A user `Copy` type that is not a library [`Element`]: summary statistics of a set of numbers.
/// Combining two is associative and commutative, and every field combines differently, so a lost,
/// repeated or foreign contribution shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    pub count: u32,
    pub sum: i64,
    pub min: i16,
    pub max: i16,
}

impl Sample for Stats {
    const NAME: &'static str = "Stats";
    const OPS: &'static [OpKind] = &[OpKind::With];
    fn value(h: u64, _: OpKind) -> Self {
        let x = (h >> 8) as i16;
        Stats {
            count: 1 + (h % 3) as u32,
            sum: (h >> 3) as i64,
            min: x,
            max: x,
        }
    }
    fn apply(_: OpKind, a: Self, b: Self) -> Self {
        Stats {
            count: a.count.wrapping_add(b.count),
            sum: a.sum.wrapping_add(b.sum),
            min: a.min.min(b.min),
            max: a.max.max(b.max),
        }
    }
    fn sentinel() -> Self {
        Stats {
            count: u32::MAX,
            sum: -1,
            min: i16::MAX,
            max: i16::MIN,
        }
    }
    fn call_builtin(
        _: &mut Member,
        _: Reducing,
        op: OpKind,
        _: Style,
        _: &[Self],
        _: &mut [Self],
    ) -> phasers::Result<()> {
        unreachable!("Stats is not an Element; the matrix reduces it only With, not {op:?}")
    }
}

/// `op` as a plain function, for the `*_with` forms: a function pointer is `Copy`, `Send`, `Sync`
/// and `'static`, whatever bounds the library puts on the closure.
pub fn with_fn<T: Sample>() -> fn(T, T) -> T {
    |a, b| T::apply(OpKind::With, a, b)
}

/// A reduce-like call, through the library operator or, for `With`, the `*_with` form.
pub fn call_reducing<T: Sample>(
    member: &mut Member,
    call: Reducing,
    op: OpKind,
    style: Style,
    input: &[T],
    output: &mut [T],
) -> phasers::Result<()> {
    if op != OpKind::With {
        return T::call_builtin(member, call, op, style, input, output);
    }
    let f = with_fn::<T>();
    match call {
        Reducing::Reduce(root) => {
            call_in_style!(
                style,
                member,
                reduce_with,
                ireduce_with(root, input, output, f)
            )
        }
        Reducing::Allreduce => {
            call_in_style!(
                style,
                member,
                allreduce_with,
                iallreduce_with(input, output, f)
            )
        }
        Reducing::ScanInclusive => call_in_style!(
            style,
            member,
            scan_inclusive_with,
            iscan_inclusive_with(input, output, f)
        ),
        Reducing::ScanExclusive => call_in_style!(
            style,
            member,
            scan_exclusive_with,
            iscan_exclusive_with(input, output, f)
        ),
    }
}

/// The collectives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Collective {
    Barrier,
    Broadcast,
    Reduce,
    Allreduce,
    Gather,
    Allgather,
    Scatter,
    Alltoall,
    ScanInclusive,
    ScanExclusive,
}

impl Collective {
    pub const ALL: [Collective; 10] = [
        Collective::Barrier,
        Collective::Broadcast,
        Collective::Reduce,
        Collective::Allreduce,
        Collective::Gather,
        Collective::Allgather,
        Collective::Scatter,
        Collective::Alltoall,
        Collective::ScanInclusive,
        Collective::ScanExclusive,
    ];

    /// Whether the call takes a root.
    pub fn has_root(self) -> bool {
        matches!(
            self,
            Collective::Broadcast | Collective::Reduce | Collective::Gather | Collective::Scatter
        )
    }

    /// Whether the call takes an operator.
    pub fn reduces(self) -> bool {
        matches!(
            self,
            Collective::Reduce
                | Collective::Allreduce
                | Collective::ScanInclusive
                | Collective::ScanExclusive
        )
    }
}

/// One collective call, the same for every member of the team that makes it.
#[derive(Debug, Clone, Copy)]
pub struct Case {
    pub collective: Collective,
    pub root: usize,
    /// The block length: what one member contributes or receives per member.
    pub len: usize,
    pub op: OpKind,
    pub style: Style,
    pub sync: SyncMode,
    /// Makes the inputs of this call different from every other call's.
    pub seed: u64,
}

impl Case {
    /// Member `rank`'s input: `len` values, different for every seed and rank. A Weyl sequence
    /// from a hashed start is cheap per element in a debug build and changes every bit position
    /// from one element to the next.
    pub fn input<T: Sample>(&self, rank: usize, len: usize) -> Vec<T> {
        self.input_part(rank, len, 0..len)
    }

    /// Elements `part` of [`Case::input`]`(rank, len)`, without computing the rest (the
    /// reference for `alltoall` needs one block of every member's long input).
    pub fn input_part<T: Sample>(
        &self,
        rank: usize,
        len: usize,
        part: std::ops::Range<usize>,
    ) -> Vec<T> {
        let start = hash(&[self.seed, rank as u64, len as u64]);
        part.map(|i| {
            T::value(
                start.wrapping_add((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
                self.op,
            )
        })
        .collect()
    }

    /// The sequential definition of the call's result at `rank` in a team of `size`: what its
    /// output must hold afterwards (`None`: an empty output, as non-roots pass to `reduce` and
    /// `gather`; the sentinel throughout where the output must stay untouched).
    pub fn expected<T: Sample>(&self, rank: usize, size: usize) -> Vec<T> {
        let len = self.len;
        let fold = |ranks: std::ops::Range<usize>| -> Vec<T> {
            let mut acc: Option<Vec<T>> = None;
            for r in ranks {
                let x = self.input::<T>(r, len);
                acc = Some(match acc {
                    None => x,
                    Some(mut acc) => {
                        for (a, b) in acc.iter_mut().zip(x) {
                            *a = T::apply(self.op, *a, b);
                        }
                        acc
                    }
                });
            }
            acc.expect("at least one rank")
        };
        match self.collective {
            Collective::Barrier => Vec::new(),
            Collective::Broadcast => self.input(self.root, len),
            Collective::Reduce if rank == self.root => fold(0..size),
            Collective::Reduce => Vec::new(),
            Collective::Allreduce => fold(0..size),
            Collective::Gather if rank != self.root => Vec::new(),
            Collective::Gather | Collective::Allgather => {
                (0..size).flat_map(|r| self.input::<T>(r, len)).collect()
            }
            Collective::Scatter => {
                self.input_part(self.root, size * len, rank * len..(rank + 1) * len)
            }
            Collective::Alltoall => (0..size)
                .flat_map(|r| self.input_part::<T>(r, size * len, rank * len..(rank + 1) * len))
                .collect(),
            Collective::ScanInclusive => fold(0..rank + 1),
            // Rank 0's output is documented to stay untouched.
            Collective::ScanExclusive if rank == 0 => vec![T::sentinel(); len],
            Collective::ScanExclusive => fold(0..rank),
        }
    }
}

/// Makes `case`'s call on `member` (after setting the case's sync mode) and returns the output
/// buffer afterwards. The output starts as the sentinel throughout, so unwritten elements show.
pub fn make_call<T: Sample>(member: &mut Member, case: &Case) -> phasers::Result<Vec<T>> {
    let rank = member.rank();
    let size = member.parties();
    let len = case.len;
    let root = case.root;
    let style = case.style;
    member.set_sync_mode(case.sync);
    let sentinel = T::sentinel();
    match case.collective {
        Collective::Barrier => {
            call_in_style!(style, member, barrier, ibarrier())?;
            Ok(Vec::new())
        }
        Collective::Broadcast => {
            let mut buf = if rank == root {
                case.input::<T>(rank, len)
            } else {
                vec![sentinel; len]
            };
            call_in_style!(style, member, broadcast, ibroadcast(root, &mut buf))?;
            Ok(buf)
        }
        Collective::Reduce
        | Collective::Allreduce
        | Collective::ScanInclusive
        | Collective::ScanExclusive => {
            let input = case.input::<T>(rank, len);
            let (call, out_len) = match case.collective {
                Collective::Reduce => (Reducing::Reduce(root), if rank == root { len } else { 0 }),
                Collective::Allreduce => (Reducing::Allreduce, len),
                Collective::ScanInclusive => (Reducing::ScanInclusive, len),
                _ => (Reducing::ScanExclusive, len),
            };
            let mut output = vec![sentinel; out_len];
            call_reducing(member, call, case.op, style, &input, &mut output)?;
            Ok(output)
        }
        Collective::Gather => {
            let input = case.input::<T>(rank, len);
            let mut output = vec![sentinel; if rank == root { size * len } else { 0 }];
            call_in_style!(style, member, gather, igather(root, &input, &mut output))?;
            Ok(output)
        }
        Collective::Allgather => {
            let input = case.input::<T>(rank, len);
            let mut output = vec![sentinel; size * len];
            call_in_style!(style, member, allgather, iallgather(&input, &mut output))?;
            Ok(output)
        }
        Collective::Scatter => {
            let input = if rank == root {
                case.input::<T>(rank, size * len)
            } else {
                Vec::new()
            };
            let mut output = vec![sentinel; len];
            call_in_style!(style, member, scatter, iscatter(root, &input, &mut output))?;
            Ok(output)
        }
        Collective::Alltoall => {
            let input = case.input::<T>(rank, size * len);
            let mut output = vec![sentinel; size * len];
            call_in_style!(style, member, alltoall, ialltoall(&input, &mut output))?;
            Ok(output)
        }
    }
}

/// Makes `case`'s call on `member` and fails, naming `what`, the case and the first wrong element,
/// unless it succeeds with exactly the sequential definition's result.
pub fn check_call<T: Sample>(what: &str, member: &mut Member, case: &Case) {
    let rank = member.rank();
    let size = member.parties();
    let got = make_call::<T>(member, case)
        .unwrap_or_else(|error| panic!("{what}: rank {rank} of {size}, {case:?}: {error}"));
    assert_same(
        &format!("{what}: rank {rank} of {size}, {} {case:?}", T::NAME),
        &got,
        &case.expected::<T>(rank, size),
    );
}

/// Fails naming `what` and the first index where `got` and `expected` differ, if they do.
pub fn assert_same<T: PartialEq + Debug>(what: &str, got: &[T], expected: &[T]) {
    assert_eq!(
        got.len(),
        expected.len(),
        "{what}: the output has the wrong length"
    );
    if let Some(i) = (0..got.len()).find(|&i| got[i] != expected[i]) {
        panic!(
            "{what}: element {i} of {} is {:?}, expected {:?}",
            got.len(),
            got[i],
            expected[i]
        );
    }
}
