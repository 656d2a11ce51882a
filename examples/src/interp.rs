//! A fine-grained vector interpreter in the style of the NESL VCODE interpreter of seed 002.
//!
//! NESL compiles nested data parallelism to VCODE, the code of a stack machine whose
//! instructions work on whole vectors. Seed 002's interpreter splits each instruction's vector
//! among threads and needs barriers "to enforce agreement among threads as to which specific
//! VCODE instruction is currently being handled (control flow), as well as to stage execution
//! steps to avoid races"; it reports what one NOP costs, with an "ideal" line whose barriers are
//! disabled.
//!
//! Here the machine has four vector registers of `u64` (wrapping arithmetic, so every
//! association of a sum gives the same bits) and the instructions [`Instruction::Nop`], `Add`,
//! `Mul`, `Scan` (exclusive plus-scan), `Permute` (scatter through a fixed permutation), `Loop`
//! (control flow) and `Halt`. Each instruction, in parallel:
//!
//! 1. rank 0 decodes: it follows the control flow (loops) to the next vector instruction and
//!    publishes it; **barrier** (agreement on the instruction);
//! 2. every thread runs the instruction on its block of the vector; a scan sums its block,
//!    **barrier**, then writes its block's prefix from the sums of the lower blocks;
//! 3. **barrier** (staging: the next instruction may read anything this one wrote).
//!
//! So a NOP costs a decode and two barriers; with vectors of a few thousand elements the other
//! instructions cost little more. [`nop_cost`] measures a program of NOPs only; its `ideal`
//! variant decodes on every thread and never waits, which is the interpreter's own overhead
//! (with NOPs it computes the same result, so it is checked too).
//!
//! The check: the registers after the program, and the count of executed instructions, equal
//! the sequential interpreter's.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::rng::SplitMix64;
use crate::shared::SharedSlice;
use crate::sync::{Handles, SyncKind, Waiter};
use crate::team::{self, block};
use crate::workload::{first_difference, Application, Size, Timed};

/// Vector registers of the machine.
pub const REGISTERS: usize = 4;

/// One instruction. Registers are numbered `0..REGISTERS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Instruction {
    /// Does nothing (but costs a decode and the barriers).
    Nop,
    /// `dst[i] = a[i] + b[i]`, wrapping.
    Add {
        /// Destination register.
        dst: u8,
        /// First operand.
        a: u8,
        /// Second operand.
        b: u8,
    },
    /// `dst[i] = a[i] * b[i]`, wrapping.
    Mul {
        /// Destination register.
        dst: u8,
        /// First operand.
        a: u8,
        /// Second operand.
        b: u8,
    },
    /// `dst[i] = src[0] + ... + src[i - 1]`, wrapping (exclusive plus-scan). `dst` may be `src`.
    Scan {
        /// Destination register.
        dst: u8,
        /// Source register.
        src: u8,
    },
    /// `dst[perm[i]] = src[i]` for the machine's fixed permutation `perm`; `dst` must differ
    /// from `src`.
    Permute {
        /// Destination register.
        dst: u8,
        /// Source register.
        src: u8,
    },
    /// Jumps back to `target` until this instruction has been reached `times` times in a row,
    /// then falls through (and resets, so an enclosing loop can run it again).
    Loop {
        /// How many times the loop body runs.
        times: u32,
        /// The first instruction of the body.
        target: u32,
    },
    /// Ends the program.
    Halt,
}

impl Instruction {
    /// The instruction as one word, to publish between threads (control flow never is).
    fn encode(self) -> u64 {
        let (opcode, dst, a, b): (u8, u8, u8, u8) = match self {
            Instruction::Nop => (0, 0, 0, 0),
            Instruction::Add { dst, a, b } => (1, dst, a, b),
            Instruction::Mul { dst, a, b } => (2, dst, a, b),
            Instruction::Scan { dst, src } => (3, dst, src, 0),
            Instruction::Permute { dst, src } => (4, dst, src, 0),
            Instruction::Loop { .. } | Instruction::Halt => (255, 0, 0, 0),
        };
        u64::from(opcode) | u64::from(dst) << 8 | u64::from(a) << 16 | u64::from(b) << 24
    }

    /// The inverse of [`Instruction::encode`]; every other word is `Halt`.
    fn decode(word: u64) -> Instruction {
        let byte = |shift: u32| (word >> shift) as u8;
        let (dst, a, b) = (byte(8), byte(16), byte(24));
        match word & 0xff {
            0 => Instruction::Nop,
            1 => Instruction::Add { dst, a, b },
            2 => Instruction::Mul { dst, a, b },
            3 => Instruction::Scan { dst, src: a },
            4 => Instruction::Permute { dst, src: a },
            _ => Instruction::Halt,
        }
    }
}

/// Follows a program's control flow and yields its vector instructions, then `Halt`.
struct Decoder<'p> {
    program: &'p [Instruction],
    pc: usize,
    /// For each `Loop`, how many times it has been reached in a row.
    counters: Vec<u32>,
}

impl<'p> Decoder<'p> {
    fn new(program: &'p [Instruction]) -> Self {
        Decoder {
            program,
            pc: 0,
            counters: vec![0; program.len()],
        }
    }

    /// The next instruction to execute (never a `Loop`), or `Halt` at the end.
    fn next(&mut self) -> Instruction {
        loop {
            let Some(&instruction) = self.program.get(self.pc) else {
                return Instruction::Halt;
            };
            match instruction {
                Instruction::Loop { times, target } => {
                    self.counters[self.pc] += 1;
                    if self.counters[self.pc] < times {
                        self.pc = target as usize;
                    } else {
                        self.counters[self.pc] = 0;
                        self.pc += 1;
                    }
                }
                Instruction::Halt => return Instruction::Halt,
                other => {
                    self.pc += 1;
                    return other;
                }
            }
        }
    }
}

/// The registers after a program, and how many vector instructions ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineState {
    /// The registers, one after the other.
    pub registers: Vec<u64>,
    /// Vector instructions executed (NOPs included, control flow not).
    pub executed: u64,
}

/// The machine: a program, vector length, initial registers and the permutation.
#[derive(Debug, Clone)]
pub struct Interp {
    program: Vec<Instruction>,
    length: usize,
    initial: Vec<u64>,
    permutation: Vec<usize>,
}

/// The per-thread sums of a scan's first step.
type Partials = [AtomicU64];

impl Interp {
    /// The compute program at `size`: vectors of 1,000, 20,000 or 200,000 elements.
    pub fn new(size: Size) -> Self {
        match size {
            Size::Small => Interp::compute(1_000, 500),
            Size::Medium => Interp::compute(20_000, 200),
            Size::Large => Interp::compute(200_000, 30),
        }
    }

    /// A program that runs `Add, Mul, Scan, Permute, Add, Nop` `iterations` times on vectors
    /// of `length` elements (at least 1).
    pub fn compute(length: usize, iterations: u32) -> Self {
        let program = vec![
            Instruction::Add { dst: 2, a: 0, b: 1 },
            Instruction::Mul { dst: 3, a: 2, b: 0 },
            Instruction::Scan { dst: 2, src: 3 },
            Instruction::Permute { dst: 3, src: 2 },
            Instruction::Add { dst: 0, a: 3, b: 1 },
            Instruction::Nop,
            Instruction::Loop {
                times: iterations.max(1),
                target: 0,
            },
            Instruction::Halt,
        ];
        Interp::with_program(program, length)
    }

    /// A program of `nops` NOPs (in a loop), on vectors of `length` elements.
    pub fn nops(nops: u32, length: usize) -> Self {
        let program = vec![
            Instruction::Nop,
            Instruction::Loop {
                times: nops.max(1),
                target: 0,
            },
            Instruction::Halt,
        ];
        Interp::with_program(program, length)
    }

    fn with_program(program: Vec<Instruction>, length: usize) -> Self {
        // A permute in place would let one thread overwrite what another has yet to read.
        assert!(
            program
                .iter()
                .all(|instruction| !matches!(instruction, Instruction::Permute { dst, src } if dst == src)),
            "a Permute's destination must differ from its source"
        );
        let length = length.max(1);
        let mut rng = SplitMix64::new(0x0056_434f_4445);
        let initial = (0..REGISTERS * length).map(|_| rng.next_u64()).collect();
        // Fisher-Yates, from the same seeded generator.
        let mut permutation: Vec<usize> = (0..length).collect();
        for i in (1..length).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            permutation.swap(i, j);
        }
        Interp {
            program,
            length,
            initial,
            permutation,
        }
    }

    /// Runs `instruction` on the elements `range` of the vectors. A scan's second step needs
    /// every thread's first: `between` waits for them (a barrier in a parallel run, nothing in
    /// the sequential one) and `partials[rank]` holds this block's sum.
    ///
    /// # Safety
    ///
    /// Every thread runs the same instruction at once on its own `range` (the ranges tile the
    /// vector), and no thread runs another instruction until all have finished this one.
    unsafe fn execute(
        &self,
        registers: &SharedSlice<u64>,
        instruction: Instruction,
        range: std::ops::Range<usize>,
        rank: usize,
        partials: &Partials,
        between: &mut dyn FnMut(),
    ) {
        let n = self.length;
        let at = |register: u8, index: usize| usize::from(register) * n + index;
        match instruction {
            Instruction::Nop | Instruction::Loop { .. } | Instruction::Halt => {}
            Instruction::Add { dst, a, b } | Instruction::Mul { dst, a, b } => {
                let add = matches!(instruction, Instruction::Add { .. });
                for i in range {
                    // SAFETY: element i of every register is this thread's in this instruction.
                    unsafe {
                        let (x, y) = (registers.get(at(a, i)), registers.get(at(b, i)));
                        let value = if add {
                            x.wrapping_add(y)
                        } else {
                            x.wrapping_mul(y)
                        };
                        registers.set(at(dst, i), value);
                    }
                }
            }
            Instruction::Scan { dst, src } => {
                let mut sum = 0u64;
                for i in range.clone() {
                    // SAFETY: as above; nobody writes `src` before the barrier in `between`.
                    sum = sum.wrapping_add(unsafe { registers.get(at(src, i)) });
                }
                // The barrier in `between` orders these stores before the loads below.
                partials[rank].store(sum, Ordering::Relaxed);
                between();
                let mut running = partials[..rank].iter().fold(0u64, |total, partial| {
                    total.wrapping_add(partial.load(Ordering::Relaxed))
                });
                for i in range {
                    // SAFETY: element i of both registers is this thread's in this step, and
                    // every thread's sum of `src` was taken before the barrier.
                    unsafe {
                        let value = registers.get(at(src, i));
                        registers.set(at(dst, i), running);
                        running = running.wrapping_add(value);
                    }
                }
            }
            Instruction::Permute { dst, src } => {
                for i in range {
                    // SAFETY: `src` element i is this thread's; the permutation is a bijection,
                    // so each `dst` element is written by exactly one thread, and `dst != src`
                    // (checked when the program was built).
                    unsafe {
                        registers.set(at(dst, self.permutation[i]), registers.get(at(src, i)));
                    }
                }
            }
        }
    }

    /// Runs the program on one thread per handle; with `ideal`, every thread decodes for
    /// itself and never waits (correct only for programs of NOPs).
    fn run_parallel(
        &self,
        handles: Handles<'_>,
        ideal: bool,
    ) -> Result<(Timed<MachineState>, u64), String> {
        let threads = handles.len();
        let registers = SharedSlice::new(self.initial.clone());
        let partials: Vec<AtomicU64> = (0..threads).map(|_| AtomicU64::new(0)).collect();
        // Rank 0 writes the decoded instruction before the agreement barrier; the others read it
        // after; the staging barrier keeps the next write after every read.
        let current = AtomicU64::new(0);
        let run = team::run(handles, |rank, waiter: &mut Waiter<'_>| {
            let range = block(self.length, threads, rank);
            let mut decoder = Decoder::new(&self.program);
            let mut executed = 0u64;
            let start = timestamp();
            loop {
                let instruction = if ideal {
                    decoder.next()
                } else {
                    if rank == 0 {
                        current.store(decoder.next().encode(), Ordering::Relaxed);
                    }
                    waiter.wait();
                    Instruction::decode(current.load(Ordering::Relaxed))
                };
                if instruction == Instruction::Halt {
                    break;
                }
                executed += 1;
                let mut between = || {
                    if !ideal {
                        waiter.wait();
                    }
                };
                // SAFETY: every thread runs this instruction on its own block, and the staging
                // barrier below keeps the next instruction from starting before all finish.
                unsafe {
                    self.execute(
                        &registers,
                        instruction,
                        range.clone(),
                        rank,
                        &partials,
                        &mut between,
                    );
                }
                if !ideal {
                    waiter.wait();
                }
            }
            (executed, start, timestamp())
        })?;
        let executed = run.results[0].0;
        // Like the run's time: from the earliest start to the latest end (the TSC of every
        // x86_64 core counts alike).
        let first = run.results.iter().map(|result| result.1).min().unwrap_or(0);
        let last = run.results.iter().map(|result| result.2).max().unwrap_or(0);
        let ticks = last.wrapping_sub(first);
        Ok((
            Timed {
                output: MachineState {
                    registers: registers.into_vec(),
                    executed,
                },
                elapsed: run.elapsed,
                barriers: run.waits,
            },
            ticks,
        ))
    }
}

impl Application for Interp {
    type Output = MachineState;

    fn describe(&self) -> String {
        format!(
            "{REGISTERS} vectors of {} u64, {} instructions in the program",
            self.length,
            self.program.len()
        )
    }

    fn sequential(&self) -> Timed<MachineState> {
        let registers = SharedSlice::new(self.initial.clone());
        let partials = [AtomicU64::new(0)];
        let mut decoder = Decoder::new(&self.program);
        let mut executed = 0;
        let start = Instant::now();
        loop {
            let instruction = decoder.next();
            if instruction == Instruction::Halt {
                break;
            }
            executed += 1;
            // SAFETY: one thread, which runs each instruction on the whole vector.
            unsafe {
                self.execute(
                    &registers,
                    instruction,
                    0..self.length,
                    0,
                    &partials,
                    &mut || {},
                );
            }
        }
        let elapsed = start.elapsed();
        Timed {
            output: MachineState {
                registers: registers.into_vec(),
                executed,
            },
            elapsed,
            barriers: 0,
        }
    }

    fn parallel(&self, handles: Handles<'_>) -> Result<Timed<MachineState>, String> {
        self.run_parallel(handles, false).map(|(timed, _)| timed)
    }

    fn check(&self, expected: &MachineState, got: &MachineState) -> Result<(), String> {
        if got.executed != expected.executed {
            return Err(format!(
                "{} instructions executed, the sequential run executed {}",
                got.executed, expected.executed
            ));
        }
        first_difference(
            "registers",
            &expected.registers,
            &got.registers,
            PartialEq::eq,
        )
    }
}

/// What one NOP cost in a run of NOPs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NopCost {
    /// Nanoseconds per NOP (the run's time over the NOPs).
    pub ns: f64,
    /// Cycles per NOP: time-stamp counter ticks on x86_64 (`rdtsc`, at the TSC's nominal rate),
    /// from the earliest thread's start to the latest thread's end like `ns`; elsewhere `None`.
    pub cycles: Option<f64>,
    /// Barrier waits per NOP on each thread (2, or 0 for the ideal run).
    pub barriers_per_nop: f64,
}

/// Runs `nops` NOPs on `threads` threads meeting at `sync`, or, with `None`, the ideal run with
/// no barriers (each thread decodes for itself), and checks that the machine is unchanged and
/// every NOP ran.
pub fn nop_cost(threads: usize, sync: Option<&SyncKind>, nops: u32) -> Result<NopCost, String> {
    // The vector length does not matter to a NOP; one element per thread keeps the blocks real.
    let interp = Interp::nops(nops, threads.max(1));
    let expected = interp.sequential().output;
    let ideal = sync.is_none();
    let kind = sync.cloned().unwrap_or(SyncKind::Std);
    let (timed, ticks) =
        kind.with_handles(threads, |handles| interp.run_parallel(handles, ideal))??;
    interp
        .check(&expected, &timed.output)
        .map_err(|message| format!("wrong result: {message}"))?;
    let executed = timed.output.executed.max(1) as f64;
    Ok(NopCost {
        ns: duration_ns(timed.elapsed) / executed,
        cycles: tsc_available().then(|| ticks as f64 / executed),
        barriers_per_nop: timed.barriers as f64 / executed,
    })
}

fn duration_ns(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e9
}

/// Whether [`timestamp`] reads a cycle counter.
fn tsc_available() -> bool {
    cfg!(target_arch = "x86_64")
}

/// The time-stamp counter on x86_64; 0 elsewhere.
#[inline]
fn timestamp() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: `rdtsc` exists on every x86_64 processor and only reads a counter. (Newer
        // compilers call the intrinsic safe; the block keeps older ones, like our 1.80, happy.)
        #[allow(unused_unsafe)]
        unsafe {
            core::arch::x86_64::_rdtsc()
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::tests::check_every_kind;

    #[test]
    fn every_kind_matches_the_sequential_run() {
        check_every_kind(Interp::compute(50, 3), |state| state.registers[7] ^= 1);
        check_every_kind(Interp::nops(20, 3), |state| state.executed += 1);
    }

    #[test]
    fn loops_run_their_body_the_given_number_of_times() {
        let interp = Interp::compute(10, 4);
        assert_eq!(interp.sequential().output.executed, 4 * 6);
        let nested = [
            Instruction::Nop,
            Instruction::Loop {
                times: 3,
                target: 0,
            },
            Instruction::Loop {
                times: 2,
                target: 0,
            },
            Instruction::Halt,
        ];
        let mut decoder = Decoder::new(&nested);
        let mut count = 0;
        while decoder.next() != Instruction::Halt {
            count += 1;
        }
        assert_eq!(count, 6);
    }

    #[test]
    fn instructions_survive_encoding() {
        for instruction in [
            Instruction::Nop,
            Instruction::Add { dst: 1, a: 2, b: 3 },
            Instruction::Mul { dst: 3, a: 0, b: 1 },
            Instruction::Scan { dst: 2, src: 2 },
            Instruction::Permute { dst: 1, src: 0 },
            Instruction::Halt,
        ] {
            assert_eq!(Instruction::decode(instruction.encode()), instruction);
        }
    }

    #[test]
    fn scan_is_an_exclusive_prefix_sum() {
        let mut interp = Interp::with_program(
            vec![Instruction::Scan { dst: 1, src: 0 }, Instruction::Halt],
            5,
        );
        interp.initial[..5].copy_from_slice(&[1, 2, 3, 4, 5]);
        let out = interp.sequential().output;
        assert_eq!(&out.registers[5..10], &[0, 1, 3, 6, 10]);
        let got = SyncKind::Std
            .with_handles(2, |handles| interp.parallel(handles))
            .unwrap()
            .unwrap();
        assert_eq!(got.output, out);
    }

    #[test]
    fn nop_costs_are_measured_and_checked() {
        for sync in [Some(SyncKind::Std), Some(SyncKind::Phaser), None] {
            let cost = nop_cost(2, sync.as_ref(), 200).unwrap();
            assert!(cost.ns > 0.0, "{sync:?}");
            let barriers = if sync.is_some() { 2.0 } else { 0.0 };
            assert!((cost.barriers_per_nop - barriers).abs() < 0.01, "{cost:?}");
            assert_eq!(cost.cycles.is_some(), cfg!(target_arch = "x86_64"));
        }
    }
}
