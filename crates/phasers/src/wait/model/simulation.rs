//! The engine: threads that work, arrive, wait and get released, on cores that run one of them
//! at a time, driven by events in time order.
//!
//! Each thread loops over episodes: work, arrive at the barrier, then, unless it was the last
//! to arrive, wait as its rule says. A wait is the real waiter's loop (`waiter.rs`), step for
//! step:
//!
//! 1. **Spin** `budget.rounds()` rounds of one pause each. Computed, not stepped: the thread
//!    sees the release at its first poll after the release reached its core, if that comes
//!    before its rounds run out. A preemption stops the rounds; they resume with the core.
//! 2. **Yield** `take_yields` times, checking the word after each. A yield with nobody else
//!    runnable on the core returns after a system call; a yield with someone runnable hands the
//!    core over (the thread goes to the back of the queue) and counts as a hand-off, since it
//!    lasts at least the hand-off *Y* that the plan's threshold, *Y*/2, is half of.
//! 3. **Park** on the counter's word, unless the release already happened; woken by a release,
//!    first pass it on (by tree), then go on.
//!
//! Its end goes to the budget's `record` as `waiter.rs` classifies it: `Spinning`, or
//! `AfterSpin` with `OnOurCore`, `AfterHandingOff` (some yield handed the core over) or
//! `AfterParking`, and `after` measured from the spin running out to the wait's end, wake calls
//! passed on included.

mod scheduling;

use std::time::Duration;

use super::barrier::CountingBarrier;
use super::cores::{Core, Occupant, Runnable};
use super::events::{CoreStep, Event, EventQueue, Step};
use super::machine::{Machine, Nanos};
use super::release::{idle_core_latency, reaches_at};
use super::report::{Report, Tally};
use super::rule::{Budget, Rule};
use crate::wait::budget::{Ended, WaitEnd};
use crate::wait::plan::{SpinPlan, WakeFanout};

/// The queue is rebuilt without its stale events once it holds this many per thread and core:
/// rarely enough that rebuilding costs little, often enough that the queue stays a few times the
/// size of what is live (one event per thread, one per core, wake-ups and preemptions).
const STALE_EVENTS_PER_THREAD: usize = 4;

/// Runs `episodes` episodes of `machine`'s barrier under `rule`.
pub(crate) fn simulate(machine: &Machine, rule: Rule, episodes: u64) -> Report {
    assert!(episodes >= 4, "a steady state needs a few episodes");
    let mut simulation = Simulation::new(machine, rule, episodes);
    simulation.run();
    Report::new(
        machine.describe(),
        rule.name(),
        simulation.plan,
        simulation.barrier.releases(),
        simulation.steady_from as usize,
        simulation.tally,
    )
}

/// What a thread is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Activity {
    Work {
        left: Nanos,
    },
    /// Its decrement of the barrier's counter is queued on the line or under way.
    Arrive,
    Spin {
        rounds_left: u64,
    },
    /// Yielding with nobody else runnable: `left` yields from `running_since`, one system call
    /// each.
    Yield {
        left: u32,
    },
    /// In the core's queue after a yield handed the core over at `since`; `left` counts that
    /// yield.
    YieldedAway {
        left: u32,
        since: Nanos,
    },
    /// Its attempt to park found the word already changed; it reads the release shortly.
    Checking,
    Parked,
    /// A wake call reached it; when it runs, it passes the release on.
    Woken,
    /// In wake system calls (a release, or passing one on), then `then`.
    WakeCalls {
        then: Then,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Then {
    NextEpisode,
    WaitEnds,
}

/// What the waiter's loop keeps about the current wait.
#[derive(Debug, Clone, Copy)]
struct Wait {
    spin_ran_out: Nanos,
    ended: Ended,
    slept: bool,
}

#[derive(Debug)]
struct Thread {
    core: usize,
    budget: Budget,
    activity: Activity,
    /// Bumped whenever its pending event is replaced (see `events.rs`).
    generation: u64,
    /// When the current stretch of its activity began on the core.
    running_since: Nanos,
    /// The episode it works toward or waits for.
    episode: u64,
    wait: Wait,
}

struct Simulation<'m> {
    machine: &'m Machine,
    plan: SpinPlan,
    threads: Vec<Thread>,
    cores: Vec<Core>,
    barrier: CountingBarrier,
    events: EventQueue,
    now: Nanos,
    episodes: u64,
    steady_from: u64,
    tally: Tally,
}

impl<'m> Simulation<'m> {
    fn new(machine: &'m Machine, rule: Rule, episodes: u64) -> Simulation<'m> {
        assert!(
            machine.syscall < machine.yield_handoff / 2,
            "a lone yield must not look like a hand-off"
        );
        assert!(
            machine.wake >= machine.wake_call,
            "a wake includes its call"
        );
        let plan = rule.plan(machine);
        let threads = (0..machine.threads)
            .map(|thread| Thread {
                core: thread % machine.cores,
                budget: rule.budget(&plan),
                activity: Activity::Parked,
                generation: 0,
                running_since: 0,
                episode: 0,
                wait: Wait {
                    spin_ran_out: 0,
                    ended: Ended::OnOurCore,
                    slept: false,
                },
            })
            .collect();
        let mut simulation = Simulation {
            machine,
            plan,
            threads,
            cores: (0..machine.cores).map(|_| Core::idle()).collect(),
            barrier: CountingBarrier::new(machine.threads),
            events: EventQueue::default(),
            now: 0,
            episodes,
            steady_from: episodes / 2,
            tally: Tally::default(),
        };
        for thread in 0..machine.threads {
            simulation.prepare_episode(thread, 0);
            let core = simulation.threads[thread].core;
            simulation.make_runnable(core, Runnable::Thread(thread));
        }
        simulation
    }

    fn run(&mut self) {
        while (self.barrier.releases().len() as u64) < self.episodes {
            if self.events.len() > STALE_EVENTS_PER_THREAD * (self.threads.len() + self.cores.len())
            {
                self.drop_stale_events();
            }
            let (at, event) = self
                .events
                .pop()
                .expect("some thread always has an event pending: the model lost a wake-up");
            debug_assert!(at >= self.now);
            self.now = at;
            match event {
                Event::Thread {
                    thread,
                    generation,
                    step,
                } if self.threads[thread].generation == generation => {
                    self.thread_step(thread, step)
                }
                Event::Thread { .. } => {}
                Event::WakeReaches { thread } => self.wake_reaches(thread),
                Event::IdleCoreUp { thread } => {
                    let core = self.threads[thread].core;
                    self.make_runnable(core, Runnable::Thread(thread));
                }
                Event::Core {
                    core,
                    generation,
                    step,
                } if self.cores[core].generation == generation => match step {
                    CoreStep::Dispatch => self.dispatch(core),
                    CoreStep::ForeignDone => self.switch(core),
                    CoreStep::SliceEnds => self.slice_ends(core),
                },
                Event::Core { .. } => {}
                Event::ForeignArrives { core, runs_for } => {
                    self.make_runnable(core, Runnable::Foreign(runs_for))
                }
            }
        }
    }

    /// Rebuilds the queue without the events nobody waits for any more: a spin's end that a
    /// release overtook stays there for as long as the spin would have lasted, hundreds of
    /// episodes with free cores, and a queue full of them is slow to work with.
    fn drop_stale_events(&mut self) {
        let (threads, cores) = (&self.threads, &self.cores);
        self.events.retain(|event| match *event {
            Event::Thread {
                thread, generation, ..
            } => threads[thread].generation == generation,
            Event::Core {
                core, generation, ..
            } => cores[core].generation == generation,
            Event::WakeReaches { .. } | Event::IdleCoreUp { .. } | Event::ForeignArrives { .. } => {
                true
            }
        });
    }

    fn thread_step(&mut self, thread: usize, step: Step) {
        match step {
            Step::WorkDone => self.arrive(thread),
            Step::ArriveDone => self.arrived(thread),
            Step::SpinRanOut => self.spin_ran_out(thread),
            Step::YieldsDone => self.yields_done(thread),
            Step::SeesRelease => self.sees_release(thread),
            Step::WakeCallsDone => self.wake_calls_done(thread),
        }
    }

    // --- Events of threads -------------------------------------------------------------------

    fn schedule(&mut self, thread: usize, at: Nanos, step: Step) {
        let generation = self.cancel(thread);
        self.events.push(
            at,
            Event::Thread {
                thread,
                generation,
                step,
            },
        );
    }

    /// Makes the thread's pending event stale; returns its new generation.
    fn cancel(&mut self, thread: usize) -> u64 {
        let state = &mut self.threads[thread];
        state.generation += 1;
        state.generation
    }

    // --- The episode -------------------------------------------------------------------------

    /// Sets `thread` to work toward `episode`, and lets another process's thread loose on its
    /// core if this episode's preemption falls on it.
    fn prepare_episode(&mut self, thread: usize, episode: u64) {
        let work = self.machine.work_of(thread, episode);
        if let Some(intrusion) = self.machine.intrusion_in(episode) {
            if intrusion.thread == thread {
                self.tally.preemptions += 1;
                self.events.push(
                    self.now + intrusion.after,
                    Event::ForeignArrives {
                        core: self.threads[thread].core,
                        runs_for: intrusion.runs_for,
                    },
                );
            }
        }
        let state = &mut self.threads[thread];
        state.episode = episode;
        state.activity = Activity::Work { left: work };
    }

    fn next_episode(&mut self, thread: usize) {
        self.prepare_episode(thread, self.threads[thread].episode + 1);
        self.run_thread(thread);
    }

    /// Work done: the decrement queues on the counter's line.
    fn arrive(&mut self, thread: usize) {
        let episode = self.threads[thread].episode;
        self.threads[thread].activity = Activity::Arrive;
        let done = self
            .barrier
            .arrive(episode, self.now, self.machine.round_trip / 2);
        self.schedule(thread, done, Step::ArriveDone);
    }

    /// The decrement completed: the last releases, the others wait.
    fn arrived(&mut self, thread: usize) {
        let episode = self.threads[thread].episode;
        if self.barrier.count_arrival(episode) {
            self.release(thread);
            return;
        }
        self.barrier.add_waiter(thread);
        let state = &mut self.threads[thread];
        state.wait = Wait {
            spin_ran_out: self.now,
            ended: Ended::OnOurCore,
            slept: false,
        };
        match state.budget.rounds() {
            Some(0) => self.spin_ran_out(thread),
            rounds => {
                state.activity = Activity::Spin {
                    rounds_left: rounds.map_or(u64::MAX, u64::from),
                };
                self.run_thread(thread);
            }
        }
    }

    /// The last arrival: the release, then the wake calls if anyone sleeps.
    fn release(&mut self, thread: usize) {
        let episode = self.threads[thread].episode;
        for waiter in self.barrier.release(episode, self.now) {
            let on_core =
                self.cores[self.threads[waiter].core].occupant == Occupant::Thread(waiter);
            match self.threads[waiter].activity {
                Activity::Spin { .. } if on_core => self.schedule_spin(waiter),
                Activity::Yield { .. } => self.schedule_yields(waiter),
                // Off its core, it sees the release when it runs again; asleep, it is woken.
                _ => {}
            }
        }
        let sleepers = self.barrier.take_sleepers(episode);
        if sleepers.is_empty() {
            // Nobody set the PARKED bit: no system call.
            self.next_episode(thread);
            return;
        }
        let woken_now = match self.plan.wake {
            WakeFanout::All => sleepers.len(),
            WakeFanout::Tree(fanout) => (fanout as usize).min(sleepers.len()),
        };
        self.barrier.set_aside(episode, &sleepers[woken_now..]);
        let calls = self.wake(&sleepers[..woken_now]);
        self.threads[thread].activity = Activity::WakeCalls {
            then: Then::NextEpisode,
        };
        self.schedule(thread, self.now + calls, Step::WakeCallsDone);
    }

    /// One wake call for `sleepers`, made now; returns what it costs the caller.
    fn wake(&mut self, sleepers: &[usize]) -> Nanos {
        for (j, &sleeper) in sleepers.iter().enumerate() {
            let at = reaches_at(self.now, j + 1, self.machine.wake_call);
            self.events.push(at, Event::WakeReaches { thread: sleeper });
        }
        sleepers.len() as Nanos * self.machine.wake_call
    }

    fn wake_calls_done(&mut self, thread: usize) {
        match self.threads[thread].activity {
            Activity::WakeCalls {
                then: Then::NextEpisode,
            } => self.next_episode(thread),
            Activity::WakeCalls {
                then: Then::WaitEnds,
            } => self.end_after_spin(thread),
            other => unreachable!("wake calls done while {other:?}"),
        }
    }

    // --- The wait ----------------------------------------------------------------------------

    /// When the release of the episode `thread` waits for reaches its core, if it happened.
    fn visible_at(&self, thread: usize) -> Option<Nanos> {
        self.barrier
            .released_at(self.threads[thread].episode)
            .map(|at| at + self.machine.round_trip / 2)
    }

    fn visible(&self, thread: usize) -> bool {
        self.visible_at(thread).is_some_and(|at| at <= self.now)
    }

    /// A spin running since `running_since`: its first poll after the release, or its end.
    fn schedule_spin(&mut self, thread: usize) {
        let Activity::Spin { rounds_left } = self.threads[thread].activity else {
            unreachable!("not spinning");
        };
        let (since, pause) = (self.threads[thread].running_since, self.machine.pause);
        let end = since.saturating_add(rounds_left.saturating_mul(pause));
        if let Some(visible) = self.visible_at(thread) {
            let polls = visible.saturating_sub(since).div_ceil(pause).max(1);
            let sees = since + polls * pause;
            if sees <= end {
                self.schedule(thread, sees, Step::SeesRelease);
                return;
            }
        }
        if end == Nanos::MAX {
            // Spins until released; the release reschedules it.
            self.cancel(thread);
        } else {
            self.schedule(thread, end, Step::SpinRanOut);
        }
    }

    fn spin_ran_out(&mut self, thread: usize) {
        let state = &mut self.threads[thread];
        state.wait.spin_ran_out = self.now;
        let yields = state.budget.take_yields(&self.plan);
        if yields > 0 {
            state.activity = Activity::Yield { left: yields };
            self.run_thread(thread);
        } else {
            self.try_park(thread);
        }
    }

    /// Yields with nobody else runnable, from `running_since`: a system call each, checking
    /// the word after each. Ends at the first check after the release, or after the last
    /// yield, or, once another thread is runnable on the core, after the yield under way (the
    /// next one hands the core over).
    fn schedule_yields(&mut self, thread: usize) {
        let Activity::Yield { left } = self.threads[thread].activity else {
            unreachable!("not yielding");
        };
        let (since, each) = (self.threads[thread].running_since, self.machine.syscall);
        let done = (self.now - since) / each;
        let last = if self.cores[self.threads[thread].core].queue.is_empty() {
            u64::from(left)
        } else {
            (done + 1).min(u64::from(left))
        };
        if let Some(visible) = self.visible_at(thread) {
            let checks = visible.saturating_sub(since).div_ceil(each).max(1);
            if checks <= last {
                self.schedule(thread, since + checks * each, Step::SeesRelease);
                return;
            }
        }
        self.schedule(thread, since + last * each, Step::YieldsDone);
    }

    fn yields_done(&mut self, thread: usize) {
        let Activity::Yield { left } = self.threads[thread].activity else {
            unreachable!("not yielding");
        };
        let done = (self.now - self.threads[thread].running_since) / self.machine.syscall;
        let left = left - done.min(u64::from(left)) as u32;
        self.after_yield(thread, left);
    }

    /// A yield returned with `left` more to make: the check, then the next yield or the park.
    fn after_yield(&mut self, thread: usize, left: u32) {
        if self.visible(thread) {
            self.end_after_spin(thread);
        } else if left > 0 {
            self.threads[thread].activity = Activity::Yield { left };
            self.run_thread(thread);
        } else {
            self.try_park(thread);
        }
    }

    /// A yield with another thread runnable: the core goes to it, this thread to the back.
    fn hand_off(&mut self, thread: usize, left: u32) {
        self.threads[thread].activity = Activity::YieldedAway {
            left,
            since: self.now,
        };
        self.cancel(thread);
        let core = self.threads[thread].core;
        self.cores[core].enqueue(Runnable::Thread(thread));
        self.switch(core);
    }

    /// The waiter's last check, then its park: unless the word changed, it sleeps and leaves
    /// its core.
    fn try_park(&mut self, thread: usize) {
        if let Some(visible) = self.visible_at(thread) {
            if visible <= self.now {
                self.end_after_spin(thread);
            } else {
                // Released, but the line has not come back yet: the check missed it, and the
                // compare-and-swap that sets PARKED fails on the changed word.
                let wait = &mut self.threads[thread].wait;
                if wait.ended == Ended::OnOurCore {
                    wait.ended = Ended::AfterParking;
                }
                self.threads[thread].activity = Activity::Checking;
                self.schedule(thread, visible, Step::SeesRelease);
            }
            return;
        }
        let state = &mut self.threads[thread];
        if state.wait.ended == Ended::OnOurCore {
            state.wait.ended = Ended::AfterParking;
        }
        state.wait.slept = true;
        state.activity = Activity::Parked;
        let (episode, core) = (state.episode, state.core);
        self.cancel(thread);
        self.barrier.park(episode, thread);
        self.switch(core);
    }

    fn wake_reaches(&mut self, thread: usize) {
        debug_assert_eq!(self.threads[thread].activity, Activity::Parked);
        self.threads[thread].activity = Activity::Woken;
        let core = self.threads[thread].core;
        if self.cores[core].occupant == Occupant::Idle {
            let latency = idle_core_latency(self.machine.wake, self.machine.wake_call);
            self.events
                .push(self.now + latency, Event::IdleCoreUp { thread });
        } else {
            self.make_runnable(core, Runnable::Thread(thread));
        }
    }

    /// A woken sleeper, running: by tree, it wakes the next sleepers set aside (a call that
    /// finds none still costs a system call), then its wait ends.
    fn pass_on(&mut self, thread: usize) {
        let WakeFanout::Tree(fanout) = self.plan.wake else {
            self.end_after_spin(thread);
            return;
        };
        let episode = self.threads[thread].episode;
        let woken = self.barrier.take_set_aside(episode, fanout as usize);
        let calls = if woken.is_empty() {
            self.machine.syscall
        } else {
            self.wake(&woken)
        };
        self.threads[thread].activity = Activity::WakeCalls {
            then: Then::WaitEnds,
        };
        self.schedule(thread, self.now + calls, Step::WakeCallsDone);
    }

    fn sees_release(&mut self, thread: usize) {
        if let Activity::Spin { .. } = self.threads[thread].activity {
            self.end_wait(thread, WaitEnd::Spinning);
        } else {
            self.end_after_spin(thread);
        }
    }

    /// The end of a wait whose spin ran out, as `waiter.rs` reports it.
    fn end_after_spin(&mut self, thread: usize) {
        let wait = self.threads[thread].wait;
        let after = Duration::from_nanos(self.now - wait.spin_ran_out);
        self.end_wait(
            thread,
            WaitEnd::AfterSpin {
                how: wait.ended,
                after: Some(after),
            },
        );
    }

    fn end_wait(&mut self, thread: usize, end: WaitEnd) {
        let state = &mut self.threads[thread];
        state.budget.record(&self.plan, end);
        if state.episode >= self.steady_from {
            self.tally.waits += 1;
            self.tally.parked += u64::from(state.wait.slept);
            self.tally.caught_spinning += u64::from(end == WaitEnd::Spinning);
            self.tally.handed_off += u64::from(matches!(
                end,
                WaitEnd::AfterSpin {
                    how: Ended::AfterHandingOff,
                    ..
                }
            ));
        }
        self.next_episode(thread);
    }
}
