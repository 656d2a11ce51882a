//! The model's tests: first that the simulated machine does what its parts say, then what it
//! shows about the wait rules (issue 30). `--nocapture` prints the tables that
//! `docs/machine-model.md` quotes.

use std::time::Duration;

use super::machine::Preemption;
use super::release::{analytic_path, last_back};
use super::rule::release_from_sleep_rounds;
use super::*;
use crate::wait::plan::{SpinPlan, WakeFanout, TREE_WAKE_FANOUT};

// --- Helpers ---------------------------------------------------------------------------------

/// The machines of issue 30 with a core per thread: both VMs' costs at 16, 64 and 256 cores.
fn free_core_machines() -> Vec<Machine> {
    let mut machines = Vec::new();
    for vm in [Machine::xeon_vm, Machine::epyc_vm] {
        for cores in [16, 64, 256] {
            machines.push(vm(cores, cores));
        }
    }
    machines
}

/// Episodes per run, fewer for more threads (a run costs about threads x episodes): at the
/// preemption rate of `Preemption::occasional`, one in 50 episodes, even the shortest run has
/// several preemptions in its first half to trigger a lock-in, and a second half of 200 episodes
/// or more for the medians.
fn episodes_for(machine: &Machine) -> u64 {
    match machine.threads {
        0..=16 => 2_000,
        17..=64 => 800,
        _ => 400,
    }
}

/// Runs every rule on every machine, in parallel, and returns the reports machine by machine,
/// in the order of `rules`.
fn compare(machines: &[Machine], rules: &[Rule]) -> Vec<Vec<Report>> {
    std::thread::scope(|scope| {
        let runs: Vec<Vec<_>> = machines
            .iter()
            .map(|machine| {
                rules
                    .iter()
                    .map(|&rule| {
                        scope.spawn(move || simulate(machine, rule, episodes_for(machine)))
                    })
                    .collect()
            })
            .collect();
        runs.into_iter()
            .map(|row| {
                row.into_iter()
                    .map(|run| run.join().expect("a run of the model panicked"))
                    .collect()
            })
            .collect()
    })
}

/// Prints every report, then one markdown row per machine: each rule's median (and its ratio to
/// the first rule's) and the share of its waits that parked.
fn print_table(title: &str, table: &[Vec<Report>]) {
    println!("\n{title}");
    for report in table.iter().flatten() {
        println!("{report}");
    }
    let header: Vec<String> = table[0]
        .iter()
        .map(|report| format!("{} (parked)", report.rule))
        .collect();
    println!("\n| machine | {} |", header.join(" | "));
    println!("|---|{}", "---|".repeat(header.len()));
    for row in table {
        let base = row[0].median as f64;
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(index, report)| {
                let ratio = if index == 0 {
                    String::new()
                } else {
                    format!(" = {:.2}x", report.median as f64 / base)
                };
                format!(
                    "{:.2} µs{ratio} ({:.1}%)",
                    report.median_us(),
                    report.parked * 100.0
                )
            })
            .collect();
        println!("| {} | {} |", row[0].machine, cells.join(" | "));
    }
}

/// A machine with no other process and no jitter: every episode alike.
fn quiet(machine: Machine) -> Machine {
    Machine {
        work_jitter: 0,
        preemption: Preemption {
            chance_per_episode: 0.0,
            ..Preemption::occasional()
        },
        ..machine
    }
}

// --- The machine itself ----------------------------------------------------------------------

/// With every waiter spinning, an episode is the central barrier's own cost: the work, the
/// arrivals one after another on the counter's line (R/2 each), the release's transfer (R/2),
/// and up to a pause until the waiters' next poll.
#[test]
fn an_episode_costs_the_work_the_arrivals_and_the_release() {
    for machine in [
        Machine::xeon_vm(2, 2),
        Machine::xeon_vm(16, 16),
        Machine::epyc_vm(64, 64),
    ] {
        let machine = quiet(machine);
        // Every episode alike: a few hundred are plenty.
        let report = simulate(&machine, Rule::SpinUntilReleased, 200);
        let arrivals = machine.threads as u64 * machine.round_trip / 2;
        let least = machine.work + arrivals;
        let most = least + machine.round_trip / 2 + machine.pause;
        assert!(
            (least..=most).contains(&report.median),
            "{report}: expected {least}..={most} ns"
        );
        assert_eq!(report.parked, 0.0);
    }
}

/// The release's timing, step by step: all at once, the k-th sleeper runs after k calls; by
/// tree, each woken sleeper wakes the next ones, and every one of them makes a call (an empty
/// one, a system call's worth, when none is left).
#[test]
fn a_release_wakes_sleepers_one_call_after_another() {
    let (wake, call, syscall) = (6_000, 1_000, 200);
    assert_eq!(
        last_back(WakeFanout::All, 15, wake, call, syscall),
        15 * call + wake - call
    );
    // The releaser's four: the last runs after four calls, then finds nobody to wake.
    assert_eq!(
        last_back(WakeFanout::Tree(4), 4, wake, call, syscall),
        wake + 3 * call + syscall
    );
    // A fifth: the first woken (at W) wakes it, so it runs a whole wake later.
    assert_eq!(
        last_back(WakeFanout::Tree(4), 5, wake, call, syscall),
        2 * wake + syscall
    );
    // The analytic form counts whole levels: two of them for 5 to 20 sleepers.
    assert_eq!(analytic_path(4, 5, wake, call), 2 * (wake + 3 * call));
}

/// Two threads on one core: every wait ends when a yield hands the core to the other thread,
/// which is what the waiter counts as a hand-off, and nobody needs to park.
#[test]
fn a_yield_on_a_shared_core_counts_as_a_hand_off() {
    for vm in [Machine::xeon_vm, Machine::epyc_vm] {
        // Every episode alike: a few hundred are plenty.
        let report = simulate(&quiet(vm(1, 2)), Rule::Current, 400);
        assert!(report.plan.shares_cores);
        assert!(report.handed_off > 0.9, "{report}");
        assert!(report.parked < 0.05, "{report}");
    }
}

/// Runs are reproducible, and two rules on one machine meet the same work and preemptions.
#[test]
fn runs_are_reproducible_and_rules_meet_the_same_disturbances() {
    let machine = Machine::xeon_vm(16, 16);
    // 400 episodes hold several preemptions (one in 50).
    let first = simulate(&machine, Rule::Legacy, 400);
    let again = simulate(&machine, Rule::Legacy, 400);
    assert_eq!((first.median, first.mean), (again.median, again.mean));
    let current = simulate(&machine, Rule::Current, 400);
    assert_eq!(first.preemptions, current.preemptions);
    assert!(first.preemptions > 0);
}

// --- What it shows about the rules (issue 30) ------------------------------------------------

/// The lock-in of issue 30, reproduced. Under the rule before it, a waiter spins one wake and
/// shrinks its spin after any long wait; once a preemption makes one episode long, everyone
/// parks, the release wakes them one call after another, and the next episode is as long: the
/// slow state holds. (The 16-core Xeon VM measured 17.5 µs per episode against a spinning
/// barrier's 1.38 µs; the model gives about 19 µs against 1.35 µs.)
#[test]
fn old_rule_locks_in_at_16_64_256_free_cores() {
    let table = compare(
        &free_core_machines(),
        &[Rule::SpinUntilReleased, Rule::Legacy],
    );
    print_table("The rule before issue 30, free cores", &table);
    for row in &table {
        let (reference, legacy) = (&row[0], &row[1]);
        assert!(
            legacy.median > 3 * reference.median,
            "no lock-in: {legacy} against {reference}"
        );
        assert!(legacy.parked > 0.5, "most waits should park: {legacy}");
    }
}

/// The criterion: with a core per participant, the current rule's steady state is within
/// 1.3x of waiters that spin until released, and waits park only around preemptions.
#[test]
fn new_rule_reaches_the_spinning_reference_at_16_64_256_free_cores() {
    let table = compare(
        &free_core_machines(),
        &[Rule::SpinUntilReleased, Rule::Current],
    );
    print_table("The current rule, free cores", &table);
    for row in &table {
        let (reference, current) = (&row[0], &row[1]);
        assert!(
            current.median as f64 <= 1.3 * reference.median as f64,
            "{current} against {reference}"
        );
        assert!(current.parked < 0.1, "few waits should park: {current}");
    }
}

/// Oversubscribed, the rule issue 30 wrote must cost nothing. Today the two rules decide alike
/// there (the same plan: no spin, shared yields, one wake call; budgets that never spin), so
/// their runs are identical; the 5% is the run-to-run noise of the real benchmark on the 2-core
/// VMs, the least a future difference between the rules would have to exceed to count.
#[test]
fn new_rule_is_no_worse_oversubscribed() {
    let mut machines = Vec::new();
    for vm in [Machine::xeon_vm, Machine::epyc_vm] {
        for (cores, threads) in [(2, 4), (2, 8), (2, 32), (2, 64), (16, 64)] {
            machines.push(vm(cores, threads));
        }
    }
    let table = compare(&machines, &[Rule::Legacy, Rule::Current]);
    print_table("Oversubscribed: the old rule and the current one", &table);
    for row in &table {
        let (legacy, current) = (&row[0], &row[1]);
        assert!(current.plan.shares_cores);
        assert!(
            current.median as f64 <= 1.05 * legacy.median as f64,
            "{current} against {legacy}"
        );
    }
}

/// A finding, not yet a rule: when few threads share each of many cores (64 on 16), one wake
/// call for all the sleepers, which plan.rs keeps for every oversubscribed release ("the cores
/// are the bottleneck, not the wake calls"), locks the waiters into parking much as it did on
/// free cores: the woken threads come back one call apart, each finds its core empty, yields to
/// nobody and parks. A release by tree (`PHASERS_WAKE=4`) is faster here. The model matches the
/// 2-core VM within 2x but has not been checked against a 16-core machine oversubscribed.
#[test]
fn a_release_by_tree_helps_many_shared_cores() {
    let machines = [Machine::xeon_vm(16, 64), Machine::epyc_vm(16, 64)];
    let table = compare(
        &machines,
        &[Rule::Current, Rule::CurrentWithWake(WakeFanout::Tree(4))],
    );
    print_table("64 threads on 16 cores: one wake call, or a tree", &table);
    for row in &table {
        let (all, tree) = (&row[0], &row[1]);
        assert_eq!(all.plan.wake, WakeFanout::All);
        assert!(all.parked > 0.5, "{all}");
        assert!(tree.median < all.median, "{tree} against {all}");
    }
}

/// How far each fanout's release is from the best fanout's, over k = 16 to 256 sleepers on idle
/// cores and wake calls from a tenth to a half of a wake (c/W). A step of a tree costs a wake
/// plus the waker's calls for the others of its group: small fanouts take many steps, large
/// ones make long steps.
///
/// The model finds 4 within 27% of the best (at c/W = 0.1 and 24 sleepers, where 5 to 8 need a
/// step fewer) and within 12% from c/W = 0.2 up; the fanout that is nearest the best everywhere
/// is 6, within 17%. Fanouts 2 and 8 are worse than 4 in their worst case (92% and 37%). plan.rs's
/// comment on `TREE_WAKE_FANOUT` quotes these figures; the test holds the policy's fanout to them:
/// within 30% everywhere, and no worse in its worst case than 2 or 8.
#[test]
fn fanout_four_is_near_the_best() {
    const WAKE: Nanos = 10 * MICROSECOND; // only c/W matters, but for the empty calls
    const EMPTY_CALL: Nanos = 200; // a system call that finds nobody, as in `Machine`
    const FANOUTS: std::ops::RangeInclusive<u32> = 2..=8;
    let ratios = [0.1, 0.15, 0.2, 0.3, 0.4, 0.5];
    // Each fanout's path over the best fanout's, for `sleepers` and a call of `call`.
    let against_best = |path: &dyn Fn(u32) -> Nanos| -> Vec<f64> {
        let paths: Vec<Nanos> = FANOUTS.map(path).collect();
        let best = *paths.iter().min().expect("fanouts to compare") as f64;
        paths.iter().map(|&path| path as f64 / best).collect()
    };
    let worse = |worst: &mut Vec<f64>, these: Vec<f64>| {
        for (worst, this) in worst.iter_mut().zip(these) {
            *worst = worst.max(this);
        }
    };
    // worst[row][fanout - 2]: the largest ratio to the best over k, at c/W = ratios[row].
    let mut worst = vec![vec![1.0f64; FANOUTS.count()]; ratios.len()];
    let mut worst_analytic = vec![1.0f64; FANOUTS.count()];
    for (row, &ratio) in ratios.iter().enumerate() {
        let call = (WAKE as f64 * ratio) as Nanos;
        for sleepers in 16..=256 {
            let tree = |fanout| WakeFanout::Tree(fanout);
            let model = against_best(&|f| last_back(tree(f), sleepers, WAKE, call, EMPTY_CALL));
            worse(&mut worst[row], model);
            let analytic = against_best(&|f| analytic_path(f, sleepers, WAKE, call));
            worse(&mut worst_analytic, analytic);
        }
    }
    let mut overall = vec![1.0f64; FANOUTS.count()];
    for row in &worst {
        worse(&mut overall, row.clone());
    }
    let cells = |row: &[f64]| row.iter().map(|w| format!("{w:.2}")).collect::<Vec<_>>();
    println!("\nWorst release path over k = 16..=256, as a multiple of the best fanout's");
    let header: Vec<String> = FANOUTS.map(|fanout| format!("f = {fanout}")).collect();
    println!("\n| c/W | {} |", header.join(" | "));
    println!("|---|{}", "---|".repeat(FANOUTS.count()));
    for (row, ratio) in ratios.iter().enumerate() {
        println!("| {ratio} | {} |", cells(&worst[row]).join(" | "));
    }
    println!("| all | {} |", cells(&overall).join(" | "));
    println!(
        "| all, analytic form | {} |",
        cells(&worst_analytic).join(" | ")
    );
    let nearest = FANOUTS
        .zip(&overall)
        .min_by(|a, b| a.1.total_cmp(b.1))
        .map(|(fanout, _)| fanout)
        .expect("fanouts to compare");
    println!("nearest the best everywhere: fanout {nearest}");

    let policy = overall[(TREE_WAKE_FANOUT - 2) as usize];
    assert!(
        policy <= 1.3,
        "fanout {TREE_WAKE_FANOUT} is {policy:.2}x the best somewhere"
    );
    for other in [2, 8] {
        assert!(
            overall[other - 2] > policy,
            "fanout {other} is as near the best as the policy's"
        );
    }
}

/// plan.rs spins FREE_CORE_RELEASE_MARGIN = 2 releases from sleep (as it counts one: the wake
/// tree's levels times its wakes per level, each a whole W). That ends the lock-in at 16, 64 and
/// 256 cores and wake costs from the Xeon's to the EPYC's, with room to spare: the tree's real
/// path (a wake per level plus the calls, `last_back`) is about a third of what plan.rs counts,
/// so a quarter of a release ends the lock-in too. An eighth brings it back at 64 and 256 cores, which shows that the
/// length of the spin, and nothing else in the rule, is what ends it.
#[test]
fn the_margin_ends_the_lock_in() {
    let machines = free_core_machines();
    for machine in &machines {
        // The plan's own margin is what this test names: 2 releases from sleep.
        let plan = SpinPlan::derive(&machine.plan_inputs());
        let release = release_from_sleep_rounds(machine);
        // (Within a round: plan.rs rounds twice the path, this test twice the rounded path.)
        let margin_rounds = u64::from(plan.spins).abs_diff(2 * release);
        assert!(
            margin_rounds <= 1,
            "{}: {} rounds",
            machine.describe(),
            plan.spins
        );
        let tree = last_back(
            WakeFanout::Tree(TREE_WAKE_FANOUT),
            machine.threads - 1,
            machine.wake,
            machine.wake_call,
            machine.syscall,
        );
        println!(
            "{}: one release as plan.rs counts it {:.0} µs, the model's tree {:.0} µs",
            machine.describe(),
            Duration::from_nanos(release * machine.pause).as_secs_f64() * 1e6,
            tree as f64 / MICROSECOND as f64
        );
    }
    let table = compare(
        &machines,
        &[
            Rule::SpinUntilReleased,
            Rule::Current,
            Rule::CurrentWithMargin(1.0),
            Rule::CurrentWithMargin(0.25),
            Rule::CurrentWithMargin(0.125),
        ],
    );
    print_table("Spin margins, free cores", &table);
    let locked_in = |report: &Report, reference: &Report| {
        report.median as f64 > 1.3 * reference.median as f64 || report.parked >= 0.1
    };
    for row in &table {
        let reference = &row[0];
        for report in &row[1..4] {
            assert!(
                !locked_in(report, reference),
                "{report} against {reference}"
            );
        }
        if row[0].machine.contains(" 64 threads") || row[0].machine.contains(" 256 threads") {
            assert!(
                locked_in(&row[4], reference),
                "{} against {reference}",
                row[4]
            );
        }
    }
}
