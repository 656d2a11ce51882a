//! Loom models of a barrier participant that waits as an async task
//! (`Participant::wait_async`), beside one that waits as a thread: the task's waker stored on the
//! word it stopped at while the other participant arrives and releases (see
//! `src/barrier/episode.rs` and `src/wait/poll.rs`).
//!
//! There is no executor under loom: the task runs on a loom thread that polls its future by hand
//! and, on `Pending`, parks until its waker unparks it. A waker that a release fails to wake
//! leaves the thread parked for ever, which loom reports as a deadlock. The waker also counts its
//! wakes: a task that resumes must have been woken.
//!
//! - Two participants, one a task and the other a blocking thread, two episodes, with the shared
//!   harness's checks (the barrier invariant with visibility, the completion action once per
//!   episode, one leader each): for counting, whose task waits on the arrival word itself; for
//!   dissemination with either rank the task (rank 1 stops at its round's flag, then at the
//!   leader's release word, so its waker key must follow the word: reusing the flag's key on the
//!   release word's list fails the model); and for the MCS tree's root as a task.
//! - `counting_two_tasks_and_a_thread`: three participants, two of them tasks waiting on one
//!   word, one episode. The second waiter finds the word `PARKED` already; without the poll's
//!   check after storing its waker (`src/wait/poll.rs`) the model deadlocks.
//! - `counting_three_tasks`: three tasks, one episode; the leading task pays the wakes its
//!   release owes over several polls (`src/wait/batched_wakes.rs`).
//!
//! About 16 s in all on a 2-core VM at two preemptions (the three-party model 6.5-9 s), 50 s on
//! the 2-core Xeon VM of 2026-12-01; `counting_three_tasks` runs at one preemption.
//!
//! Run with `scripts/loom.sh`.
#![cfg(phasers_loom)]

mod loom_support;

use loom_support::poller::Poller;
use loom_support::{
    assert_one_leader_each, model_bounded, scenario, wait_checked, Config, Led, COUNTING,
    DISSEMINATION, MCS_TREE,
};

const EPISODES: u64 = 2;

/// `parties` participants, each on its own loom thread, for `episodes` episodes of `config`: the
/// ranks in `tasks` wait as tasks, the others as threads.
///
/// Rank 0 runs on the model's thread, unless every rank is a task: a leading task may wake
/// another after that one saw the release (its wakes are paid over later polls), and loom's
/// `join` cannot take an unpark while it blocks, so then the model's thread only joins.
fn tasks_and_threads(
    config: Config,
    parties: usize,
    tasks: &'static [usize],
    episodes: u64,
    max_preemptions: usize,
) {
    model_bounded(max_preemptions, move || {
        let mut groups: Vec<Vec<usize>> = (0..parties).map(|rank| vec![rank]).collect();
        if tasks.len() == parties {
            groups.insert(0, Vec::new());
        }
        let groups: Vec<&[usize]> = groups.iter().map(Vec::as_slice).collect();
        let (reports, ledger) = scenario(
            config,
            parties,
            episodes as usize,
            &groups,
            move |group, ledger| {
                let mut led = Led::new();
                for mut participant in group {
                    let rank = participant.rank();
                    let mut poller = tasks.contains(&rank).then(Poller::new);
                    for episode in 0..episodes {
                        let leader = match &mut poller {
                            Some(poller) => {
                                ledger.arrive(rank, episode);
                                let result =
                                    poller.block_on(participant.wait_async()).unwrap_or_else(
                                        |error| panic!("task, episode {episode}: {error}"),
                                    );
                                ledger.check_release(rank, episode, result);
                                assert!(!participant.is_pending());
                                result.is_leader()
                            }
                            None => wait_checked(&mut participant, ledger, episode),
                        };
                        if leader {
                            led.push(episode);
                        }
                    }
                    // Dropped here, after its last episode: it breaks only episodes nobody waits for.
                }
                led
            },
        );
        assert_one_leader_each(&reports, episodes);
        assert_eq!(ledger.completions(), episodes);
    });
}

#[test]
fn counting_task_and_thread() {
    tasks_and_threads(COUNTING, 2, &[0], EPISODES, 2);
}

/// Rank 0 leads: it waits for its round's flag only.
#[test]
fn dissemination_leading_task_and_thread() {
    tasks_and_threads(DISSEMINATION, 2, &[0], EPISODES, 2);
}

/// Rank 1 waits for its round's flag, then for the leader's release (there is a completion
/// action): its waker key must follow it from the flag's list to the release word's.
#[test]
fn dissemination_task_and_leading_thread() {
    tasks_and_threads(DISSEMINATION, 2, &[1], EPISODES, 2);
}

/// Rank 0, the root, waits for its child's arrival bit.
#[test]
fn mcs_tree_leading_task_and_thread() {
    tasks_and_threads(MCS_TREE, 2, &[0], EPISODES, 2);
}

/// Two tasks and a thread on one counting word: the second waiter finds the word marked
/// `PARKED` already, so only the poll's check after storing its waker keeps a release between
/// its first probe and its store from being missed.
#[test]
fn counting_two_tasks_and_a_thread() {
    tasks_and_threads(COUNTING, 3, &[0, 1], 1, 2);
}

/// Three tasks on one counting word: the leading task's release owes two wakes, and (one wake
/// per poll under loom) pays the second in a later poll of its own, which its own wake brings.
/// Without that self-wake the model deadlocks (checked). One preemption, 1 s: two took 142 s.
#[test]
fn counting_three_tasks() {
    tasks_and_threads(COUNTING, 3, &[0, 1, 2], 1, 1);
}
