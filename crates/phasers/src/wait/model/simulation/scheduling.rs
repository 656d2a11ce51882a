//! Who runs on each core: the occupant continues, is preempted, yields or leaves, and the next
//! runnable gets the core after a switch.
//!
//! One run queue per core, first in first out (see `cores.rs`). A switch between two threads
//! costs a hand-off, *Y*; a core that was idle runs what becomes runnable at once (a woken
//! thread's idle-core latency is already in its wake, see `release.rs`). Another process's
//! thread preempts a working or spinning occupant at once; one of ours waits for the occupant to
//! yield, park, or use up its time slice.

use std::time::Duration;

use super::{Activity, Simulation};
use crate::wait::budget::Ended;
use crate::wait::model::cores::{Occupant, Runnable};
use crate::wait::model::events::{CoreStep, Event, Step};

impl Simulation<'_> {
    /// Continues `thread`'s activity on its core, from now.
    pub(super) fn run_thread(&mut self, thread: usize) {
        let core = self.threads[thread].core;
        debug_assert_eq!(self.cores[core].occupant, Occupant::Thread(thread));
        let activity = self.threads[thread].activity;
        let preemptible = matches!(activity, Activity::Work { .. } | Activity::Spin { .. });
        if preemptible && self.cores[core].foreign_waiting() {
            self.preempt(thread, true);
            return;
        }
        self.threads[thread].running_since = self.now;
        match activity {
            Activity::Work { left } => {
                self.schedule(thread, self.now + left, Step::WorkDone);
                self.arm_slice_if_contended(core);
            }
            Activity::Spin { .. } => {
                self.schedule_spin(thread);
                self.arm_slice_if_contended(core);
            }
            Activity::Yield { left } if !self.cores[core].queue.is_empty() => {
                self.hand_off(thread, left)
            }
            Activity::Yield { .. } => self.schedule_yields(thread),
            Activity::Woken => self.pass_on(thread),
            other => unreachable!("{other:?} does not run from the queue"),
        }
    }

    /// `thread` got its core back after waiting in the queue.
    fn resume(&mut self, thread: usize) {
        match self.threads[thread].activity {
            Activity::YieldedAway { left, since } => {
                // The yield returns; it lasted a hand-off at least, so the waiter counts it.
                if Duration::from_nanos(self.now - since) >= self.plan.handoff {
                    self.threads[thread].wait.ended = Ended::AfterHandingOff;
                }
                self.after_yield(thread, left - 1);
            }
            _ => self.run_thread(thread),
        }
    }

    /// Takes the core from `thread`, working or spinning, keeping what it has left to do; it
    /// queues right behind another process's thread (`by_foreign`), or at the back when its
    /// time slice is over.
    fn preempt(&mut self, thread: usize, by_foreign: bool) {
        let state = &mut self.threads[thread];
        let ran = self.now - state.running_since;
        state.activity = match state.activity {
            Activity::Work { left } => Activity::Work {
                left: left.saturating_sub(ran),
            },
            Activity::Spin { rounds_left } => Activity::Spin {
                rounds_left: rounds_left.saturating_sub(ran / self.machine.pause),
            },
            other => unreachable!("{other:?} is not preempted"),
        };
        let core = state.core;
        self.cancel(thread);
        if by_foreign {
            self.cores[core].enqueue_preempted(thread);
        } else {
            self.cores[core].enqueue(Runnable::Thread(thread));
        }
        self.switch(core);
    }

    /// `runnable` wants `core`: it gets it at once if the core is idle; another process's thread
    /// preempts a working or spinning occupant; a yielding occupant hands the core over after
    /// the yield under way.
    pub(super) fn make_runnable(&mut self, core: usize, runnable: Runnable) {
        self.cores[core].enqueue(runnable);
        match self.cores[core].occupant {
            Occupant::Idle => self.dispatch(core),
            Occupant::Thread(occupant) => match self.threads[occupant].activity {
                Activity::Work { .. } | Activity::Spin { .. } => {
                    if let Runnable::Foreign(_) = runnable {
                        self.preempt(occupant, true);
                    } else {
                        self.arm_slice(core);
                    }
                }
                Activity::Yield { .. } => self.schedule_yields(occupant),
                _ => {}
            },
            Occupant::Switching | Occupant::Foreign => {}
        }
    }

    /// The occupant leaves `core`: the next runnable gets it after a hand-off, or it idles.
    pub(super) fn switch(&mut self, core: usize) {
        let state = &mut self.cores[core];
        state.generation += 1;
        state.slice_armed = false;
        if state.queue.is_empty() {
            state.occupant = Occupant::Idle;
        } else {
            state.occupant = Occupant::Switching;
            self.events.push(
                self.now + self.machine.yield_handoff,
                Event::Core {
                    core,
                    generation: state.generation,
                    step: CoreStep::Dispatch,
                },
            );
        }
    }

    /// The first runnable of `core` takes it.
    pub(super) fn dispatch(&mut self, core: usize) {
        let state = &mut self.cores[core];
        let next = state
            .queue
            .pop_front()
            .expect("a core switches only toward a queued thread");
        state.generation += 1;
        state.slice_armed = false;
        state.occupied_since = self.now;
        match next {
            Runnable::Foreign(runs_for) => {
                state.occupant = Occupant::Foreign;
                self.events.push(
                    self.now + runs_for,
                    Event::Core {
                        core,
                        generation: state.generation,
                        step: CoreStep::ForeignDone,
                    },
                );
            }
            Runnable::Thread(thread) => {
                state.occupant = Occupant::Thread(thread);
                self.resume(thread);
            }
        }
    }

    fn arm_slice_if_contended(&mut self, core: usize) {
        if !self.cores[core].queue.is_empty() {
            self.arm_slice(core);
        }
    }

    /// Ends the occupant's time slice when it is due, now that someone else wants the core.
    fn arm_slice(&mut self, core: usize) {
        let state = &mut self.cores[core];
        if state.slice_armed {
            return;
        }
        state.slice_armed = true;
        let at = self.now.max(state.occupied_since + self.machine.time_slice);
        self.events.push(
            at,
            Event::Core {
                core,
                generation: state.generation,
                step: CoreStep::SliceEnds,
            },
        );
    }

    pub(super) fn slice_ends(&mut self, core: usize) {
        self.cores[core].slice_armed = false;
        if let Occupant::Thread(occupant) = self.cores[core].occupant {
            let busy = matches!(
                self.threads[occupant].activity,
                Activity::Work { .. } | Activity::Spin { .. }
            );
            if busy && !self.cores[core].queue.is_empty() {
                self.preempt(occupant, false);
            }
        }
    }
}
