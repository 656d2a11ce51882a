//! `next_all` over two phasers: it signals every registration before waiting on any, so tasks that
//! list the phasers in different orders cannot deadlock, and when it returns both phasers have
//! completed the phase: every task has arrived at it on both.

mod phaser_support;

use std::sync::atomic::{AtomicU64, Ordering};

use phaser_support::Watchdog;
use phasers::phaser::next_all;
use phasers::{Mode, Phaser, Registration};

#[test]
fn two_phasers_advance_together_whatever_the_order() {
    const TASKS: usize = 6;
    const PHASES: u64 = 300;
    let (a, creator_a) = Phaser::builder().tiers(1).build().expect("phaser a");
    let (b, creator_b) = Phaser::builder()
        .tiers(2)
        .degree(2)
        .build()
        .expect("phaser b");
    let mut pairs: Vec<(Registration, Registration)> = (1..TASKS)
        .map(|_| {
            let on_a = creator_a.register(Mode::SigWait).expect("a child on a");
            let on_b = creator_b.register(Mode::SigWait).expect("a child on b");
            (on_a, on_b)
        })
        .collect();
    pairs.insert(0, (creator_a, creator_b));
    // Per task: `k + 1` once it is about to arrive at phase `k` of both phasers.
    let arrived: Vec<AtomicU64> = (0..TASKS).map(|_| AtomicU64::new(0)).collect();
    let watchdog_a = Watchdog::new("next_all, phaser a", &a);
    let watchdog_b = Watchdog::new("next_all, phaser b", &b);
    std::thread::scope(|s| {
        for (task, (mut on_a, mut on_b)) in pairs.into_iter().enumerate() {
            let (arrived, watchdog) = (&arrived, &watchdog_a);
            s.spawn(move || {
                for phase in 0..PHASES {
                    arrived[task].store(phase + 1, Ordering::Relaxed);
                    // Half the tasks list b first: signalling all before waiting makes it safe.
                    let result = if task % 2 == 0 {
                        next_all(&mut [&mut on_a, &mut on_b])
                    } else {
                        next_all(&mut [&mut on_b, &mut on_a])
                    };
                    result.unwrap_or_else(|e| panic!("{}", watchdog.explain("next_all", &e)));
                    assert_eq!((on_a.phase(), on_b.phase()), (phase + 1, phase + 1));
                    for (other, count) in arrived.iter().enumerate() {
                        let seen = count.load(Ordering::Relaxed);
                        assert!(
                            seen > phase,
                            "task {task} left phase {phase} before task {other} arrived ({seen})"
                        );
                    }
                }
            });
        }
    });
    drop((watchdog_a, watchdog_b));
    // The tasks leave in phase PHASES; the last leave of each phaser completes it (issue 31).
    assert_eq!((a.phase(), b.phase()), (PHASES + 1, PHASES + 1));
}

/// A stage of a pipeline: it consumes from one phaser (Wait) and produces on another (Sig);
/// `next_all` signals the item it relayed downstream and waits for the next one upstream in one
/// call.
#[test]
fn a_pipeline_stage_relays_with_one_call_per_item() {
    const ITEMS: u64 = 200;
    let (upstream, mut source) = Phaser::new(Mode::SigWait).expect("upstream");
    let (downstream, creator_down) = Phaser::new(Mode::SigWait).expect("downstream");
    let mut from_up = source.register(Mode::Wait).expect("Wait on upstream");
    let mut to_down = creator_down.register(Mode::Sig).expect("Sig on downstream");
    let mut sink = creator_down
        .register(Mode::Wait)
        .expect("Wait on downstream");
    drop(creator_down);
    let items: Vec<AtomicU64> = (0..ITEMS).map(|_| AtomicU64::new(0)).collect();
    let relayed: Vec<AtomicU64> = (0..ITEMS).map(|_| AtomicU64::new(0)).collect();
    let watchdog_up = Watchdog::new("a pipeline stage, upstream", &upstream);
    let watchdog_down = Watchdog::new("a pipeline stage, downstream", &downstream);
    std::thread::scope(|s| {
        let (items, relayed, watchdog_up) = (&items, &relayed, &watchdog_up);
        s.spawn(move || {
            for k in 0..ITEMS {
                items[k as usize].store(k * 3 + 1, Ordering::Relaxed);
                assert_eq!(source.next(), Ok(k));
            }
        });
        s.spawn(move || {
            let first = from_up.wait();
            first.unwrap_or_else(|e| panic!("{}", watchdog_up.explain("item 0", &e)));
            for k in 0..ITEMS {
                let item = items[k as usize].load(Ordering::Relaxed);
                assert_eq!(item, k * 3 + 1, "the stage read item {k}");
                relayed[k as usize].store(item * 2, Ordering::Relaxed);
                if k + 1 < ITEMS {
                    // Signals item `k` downstream, then waits for item `k + 1` upstream.
                    next_all(&mut [&mut to_down, &mut from_up])
                        .unwrap_or_else(|e| panic!("{}", watchdog_up.explain("next_all", &e)));
                    assert_eq!((to_down.phase(), from_up.phase()), (k + 1, k + 2));
                } else {
                    assert_eq!(to_down.next(), Ok(k));
                }
            }
        });
        for k in 0..ITEMS {
            let done = sink
                .wait()
                .unwrap_or_else(|e| panic!("{}", watchdog_down.explain("the sink", &e)));
            assert_eq!(done, k);
            assert_eq!(relayed[k as usize].load(Ordering::Relaxed), (k * 3 + 1) * 2);
        }
    });
}
