//! Team collectives compute their sequential definitions, exactly:
//!
//! - every collective (barrier, broadcast, reduce, allreduce, gather, allgather, scatter,
//!   alltoall, inclusive and exclusive scan) at block lengths 0, 1, 7, 13 and 10 000, from every
//!   root (two roots for the long blocks), in teams of 1, 2, 3, 5 and 8 members, blocking and
//!   non-blocking (`wait()` at once, or `test()` polled first), in every `SyncMode`;
//! - for `u64`, `i32` and `f64` with every built-in operator that applies, a library
//!   `Op::custom`, and the `*_with` forms; and for a user `Copy` type that is not an `Element`,
//!   through the `*_with` forms only (broadcast, gather, scatter and alltoall move it as is);
//! - `scan_exclusive` leaves rank 0's output untouched, as documented;
//! - `split` groups members by color, leaves out those passing `NONE`, and numbers each new team
//!   by key, ties broken by old rank; `split_grid` makes the row and column teams of a grid; and
//!   collectives on sibling sub-teams give the right results while they run at the same time.
//!
//! Integers are compared exactly (wrapping arithmetic is exact in any order). Floating-point
//! inputs are chosen so that every order of combination gives the same exact result (multiples of
//! 1/4 for sums, powers of two for products), so they are compared exactly too.

mod team_support;

use std::sync::Arc;

use phasers::{Member, Op, Team};
use team_support::{
    check_call, hash, run_all, Case, Collective, OpKind, Sample, Stats, Style, SYNC_MODES,
};

/// Team sizes of the matrix: one alone, a pair, odd sizes, a power of two.
const SIZES: [usize; 5] = [1, 2, 3, 5, 8];

/// The long block length: long enough that an implementation splitting or chunking its work does
/// so, short enough for a debug build.
const LONG: usize = 10_000;

/// Block lengths: empty, one element, odd lengths that split unevenly among any team size, and a
/// long one.
const LENGTHS: [usize; 5] = [0, 1, 7, 13, LONG];

/// The calls one team makes, the same list for every member: every collective at every length,
/// from every root for the short blocks and from the first and last for the long one, and for the
/// short blocks every combination of sync mode and call style (for the long one, one combination
/// per call, in rotation, to keep the debug build fast). The operator of each reducing call is
/// drawn from `T::OPS` by a hash, so every operator meets every collective and style.
fn plan<T: Sample>(size: usize, seed: u64) -> Vec<Case> {
    let combinations: Vec<_> = SYNC_MODES
        .iter()
        .flat_map(|&sync| Style::ALL.iter().map(move |&style| (sync, style)))
        .collect();
    let mut cases = Vec::new();
    for len in LENGTHS {
        for collective in Collective::ALL {
            // A barrier has no data: once per sync mode and style is enough.
            if collective == Collective::Barrier && len != 0 {
                continue;
            }
            let roots: Vec<usize> = if !collective.has_root() {
                vec![0]
            } else if len == LONG {
                let mut ends = vec![0, size - 1];
                ends.dedup();
                ends
            } else {
                (0..size).collect()
            };
            for root in roots {
                let chosen = if len == LONG {
                    vec![combinations[cases.len() % combinations.len()]]
                } else {
                    combinations.clone()
                };
                for (sync, style) in chosen {
                    let index = cases.len() as u64;
                    let op = if collective.reduces() {
                        T::OPS[(hash(&[seed, index, 0x0B]) % T::OPS.len() as u64) as usize]
                    } else {
                        OpKind::Sum
                    };
                    cases.push(Case {
                        collective,
                        root,
                        len,
                        op,
                        style,
                        sync,
                        seed: hash(&[seed, index]),
                    });
                }
            }
        }
    }
    cases
}

/// Runs `plan` on every member of `team` (each on its own thread), checking every call.
fn run_plan<T: Sample>(what: &str, team: &Team, plan: Vec<Case>) {
    let plan = Arc::new(plan);
    let name = what.to_string();
    run_all(what, team.participants(), move |mut member| {
        for (index, case) in plan.iter().enumerate() {
            check_call::<T>(&format!("{name}, call {index}"), &mut member, case);
        }
    });
}

/// The whole matrix for one element type.
fn matrix<T: Sample>() {
    for size in SIZES {
        // Checked and unchecked teams take different paths through a call's opening meeting;
        // the results must not differ.
        let checked = size % 2 == 0;
        let team = Team::builder(size)
            .checked(checked)
            .build()
            .expect("a valid team");
        let what = format!("{} on a team of {size}, checked {checked}", T::NAME);
        let plan = plan::<T>(size, hash(&[size as u64, T::NAME.len() as u64]));
        run_plan::<T>(&what, &team, plan);
    }
}

#[test]
fn u64_collectives_match_their_definitions() {
    matrix::<u64>();
}

#[test]
fn i32_collectives_match_their_definitions() {
    matrix::<i32>();
}

#[test]
fn f64_collectives_match_their_definitions() {
    matrix::<f64>();
}

#[test]
fn user_type_collectives_match_their_definitions() {
    matrix::<Stats>();
}

/// The definitions, with values worked out by hand for three members, so a misreading shared by
/// the library and the reference in `team_support` would show here.
#[test]
fn small_examples_by_hand() {
    let team = Team::new(3).expect("a valid team");
    let outputs = run_all("by hand", team.participants(), |mut m| {
        let rank = m.rank() as u64;
        let mut results: Vec<Vec<u64>> = Vec::new();

        // Rank r contributes [10r, 10r + 1].
        let mine = [10 * rank, 10 * rank + 1];

        let mut buf = if rank == 1 { vec![7, 8] } else { vec![0, 0] };
        m.broadcast(1, &mut buf).expect("broadcast");
        results.push(buf);

        let mut out = if rank == 2 { vec![0; 2] } else { Vec::new() };
        m.reduce(2, &mine, &mut out, Op::Sum).expect("reduce");
        results.push(out);

        let mut out = vec![0; 2];
        m.allreduce(&mine, &mut out, Op::Max).expect("allreduce");
        results.push(out);

        let mut out = if rank == 0 { vec![0; 6] } else { Vec::new() };
        m.gather(0, &mine, &mut out).expect("gather");
        results.push(out);

        let mut out = vec![0; 6];
        m.allgather(&mine, &mut out).expect("allgather");
        results.push(out);

        let source: Vec<u64> = if rank == 2 {
            vec![1, 2, 3, 4, 5, 6]
        } else {
            Vec::new()
        };
        let mut out = vec![0; 2];
        m.scatter(2, &source, &mut out).expect("scatter");
        results.push(out);

        // Rank r sends block j = [100r + j] to rank j.
        let blocks: Vec<u64> = (0..3).map(|j| 100 * rank + j).collect();
        let mut out = vec![0; 3];
        m.alltoall(&blocks, &mut out).expect("alltoall");
        results.push(out);

        let mut out = vec![0; 2];
        m.scan_inclusive(&mine, &mut out, Op::Sum)
            .expect("scan_inclusive");
        results.push(out);

        let mut out = vec![999; 2];
        m.scan_exclusive(&mine, &mut out, Op::Sum)
            .expect("scan_exclusive");
        results.push(out);

        results
    });
    let expected: [[&[u64]; 9]; 3] = [
        [
            &[7, 8],
            &[],
            &[20, 21],
            &[0, 1, 10, 11, 20, 21],
            &[0, 1, 10, 11, 20, 21],
            &[1, 2],
            &[0, 100, 200],
            &[0, 1],
            // Rank 0's exclusive scan output is left untouched.
            &[999, 999],
        ],
        [
            &[7, 8],
            &[],
            &[20, 21],
            &[],
            &[0, 1, 10, 11, 20, 21],
            &[3, 4],
            &[1, 101, 201],
            &[10, 12],
            &[0, 1],
        ],
        [
            &[7, 8],
            &[30, 33],
            &[20, 21],
            &[],
            &[0, 1, 10, 11, 20, 21],
            &[5, 6],
            &[2, 102, 202],
            &[30, 33],
            &[10, 12],
        ],
    ];
    let names = [
        "broadcast",
        "reduce",
        "allreduce",
        "gather",
        "allgather",
        "scatter",
        "alltoall",
        "scan_inclusive",
        "scan_exclusive",
    ];
    for (rank, results) in outputs.iter().enumerate() {
        for (call, result) in results.iter().enumerate() {
            assert_eq!(
                result.as_slice(),
                expected[rank][call],
                "rank {rank}, {}",
                names[call]
            );
        }
    }
}

/// The exclusive scan's documented rank-0 behaviour, for every operator form and call style:
/// rank 0's output keeps what it held, the others get the combination of the ranks before them.
#[test]
fn exclusive_scan_leaves_rank_0_output_untouched() {
    for size in [1, 2, 4] {
        for style in Style::ALL {
            for op in [OpKind::Sum, OpKind::Xor, OpKind::With] {
                let team = Team::new(size).expect("a valid team");
                let what = format!("{size} members, {style:?}, {op:?}");
                let name = what.clone();
                run_all(&what, team.participants(), move |mut m| {
                    let rank = m.rank();
                    let input: Vec<u64> = (0..5).map(|i| (rank * 10 + i) as u64).collect();
                    let mut output = vec![0xAAAA_u64; 5];
                    team_support::call_reducing(
                        &mut m,
                        team_support::Reducing::ScanExclusive,
                        op,
                        style,
                        &input,
                        &mut output,
                    )
                    .unwrap_or_else(|error| panic!("{name}, rank {rank}: {error}"));
                    let expected: Vec<u64> = if rank == 0 {
                        vec![0xAAAA; 5]
                    } else {
                        (0..5)
                            .map(|i| {
                                (1..rank).fold(i as u64, |acc, r| {
                                    u64::apply(op, acc, (r * 10 + i) as u64)
                                })
                            })
                            .collect()
                    };
                    assert_eq!(output, expected, "{name}, rank {rank}");
                });
            }
        }
    }
}

/// What one member of a split should find: `None` where it passed `NONE`, else the members of its
/// color ordered by (key, old rank), its position among them being its new rank.
fn expected_group(colors: &[u32], keys: &[i64], rank: usize) -> Option<Vec<usize>> {
    if colors[rank] == phasers::team::NONE {
        return None;
    }
    let mut group: Vec<usize> = (0..colors.len())
        .filter(|&r| colors[r] == colors[rank])
        .collect();
    group.sort_by_key(|&r| (keys[r], r));
    Some(group)
}

/// Splits a team of `colors.len()` members by `colors` and `keys`, and checks every member's new
/// rank and size, and, by an allgather of old ranks on each new team, that the new team really
/// holds those members in that order. The parent team keeps working afterwards.
fn check_split(what: &str, colors: Vec<u32>, keys: Vec<i64>) {
    let size = colors.len();
    let team = Team::new(size).expect("a valid team");
    let name = what.to_string();
    run_all(what, team.participants(), move |mut m| {
        let rank = m.rank();
        let here = format!("{name}: old rank {rank}");
        let sub = m
            .split(colors[rank], keys[rank])
            .unwrap_or_else(|error| panic!("{here}: split: {error}"));
        match (expected_group(&colors, &keys, rank), sub) {
            (None, None) => {}
            (None, Some(sub)) => panic!("{here}: opted out but got rank {}", sub.rank()),
            (Some(_), None) => panic!("{here}: got no new team"),
            (Some(group), Some(mut sub)) => {
                let new_rank = group.iter().position(|&r| r == rank).expect("in its group");
                assert_eq!(sub.rank(), new_rank, "{here}: new rank");
                assert_eq!(sub.parties(), group.len(), "{here}: new size");
                let mut members = vec![0u64; group.len()];
                sub.allgather(&[rank as u64], &mut members)
                    .unwrap_or_else(|error| panic!("{here}: allgather on the new team: {error}"));
                let group: Vec<u64> = group.iter().map(|&r| r as u64).collect();
                assert_eq!(members, group, "{here}: old ranks in new-rank order");
            }
        }
        let mut total = [0u64];
        m.allreduce(&[1u64], &mut total, Op::Sum)
            .unwrap_or_else(|error| panic!("{here}: the parent after the split: {error}"));
        assert_eq!(total, [size as u64], "{here}: the parent after the split");
    });
}

#[test]
fn split_by_color_and_key() {
    let none = phasers::team::NONE;
    for size in SIZES {
        let ranks = 0..size;
        // One color, equal keys: the same order (ties broken by old rank).
        check_split(
            &format!("{size}: one color, equal keys"),
            vec![7; size],
            vec![0; size],
        );
        // One color, decreasing keys: the order reversed.
        check_split(
            &format!("{size}: one color, reversed"),
            vec![0; size],
            ranks.clone().map(|r| -(r as i64)).collect(),
        );
        // Two colors by parity, keys with ties that cut across the old order.
        check_split(
            &format!("{size}: two colors"),
            ranks.clone().map(|r| (r % 2) as u32).collect(),
            ranks.clone().map(|r| ((r * 5) % 3) as i64).collect(),
        );
        // Every member alone.
        check_split(
            &format!("{size}: a color each"),
            ranks.clone().map(|r| r as u32 * 1000).collect(),
            vec![3; size],
        );
        // Everyone opts out.
        check_split(
            &format!("{size}: all NONE"),
            vec![none; size],
            vec![0; size],
        );
        // Some opt out; the largest color that is not NONE and the extreme keys.
        check_split(
            &format!("{size}: some NONE"),
            ranks
                .clone()
                .map(|r| match r % 3 {
                    1 => none,
                    0 => none - 1,
                    _ => 0,
                })
                .collect(),
            ranks
                .clone()
                .map(|r| if r % 2 == 0 { i64::MAX } else { i64::MIN })
                .collect(),
        );
        // Random colors and keys with many ties.
        for seed in 0..3 {
            check_split(
                &format!("{size}: random {seed}"),
                ranks
                    .clone()
                    .map(|r| (hash(&[seed, r as u64]) % 3) as u32)
                    .collect(),
                ranks
                    .clone()
                    .map(|r| (hash(&[seed, r as u64, 1]) % 3) as i64 - 1)
                    .collect(),
            );
        }
    }
}

/// A split of a split: new teams are teams like any other.
#[test]
fn split_of_a_split() {
    let size = 8;
    let team = Team::new(size).expect("a valid team");
    run_all("nested split", team.participants(), move |mut m| {
        let rank = m.rank();
        // Halves by parity, numbered in reverse; then halves of those by new rank.
        let mut half = m
            .split((rank % 2) as u32, -(rank as i64))
            .expect("first split")
            .expect("everyone is in a half");
        let half_rank = half.rank();
        let mut quarter = half
            .split((half_rank / 2) as u32, half_rank as i64)
            .expect("second split")
            .expect("everyone is in a quarter");
        // Parity p, reversed: old ranks [6 or 7, 4 or 5, 2 or 3, 0 or 1]; quarters of two.
        let mut members = vec![0u64; 2];
        quarter
            .allgather(&[rank as u64], &mut members)
            .expect("allgather on a quarter");
        let reversed: Vec<u64> = (0..size as u64)
            .rev()
            .filter(|r| r % 2 == rank as u64 % 2)
            .collect();
        let q = half_rank / 2;
        assert_eq!(members, reversed[2 * q..2 * q + 2], "old rank {rank}");
        assert_eq!(quarter.rank(), half_rank % 2, "old rank {rank}");
    });
}

/// `split_grid(columns)`: the row team of rank r holds the ranks with the same `r / columns`,
/// numbered by column; the column team those with the same `r % columns`, numbered by row.
#[test]
fn split_grid_makes_rows_and_columns() {
    for size in SIZES {
        for columns in [1, 2, 3, size, size + 2] {
            let team = Team::new(size).expect("a valid team");
            let what = format!("{size} members, {columns} columns");
            let name = what.clone();
            run_all(&what, team.participants(), move |mut m| {
                let rank = m.rank();
                let here = format!("{name}: rank {rank}");
                let (mut row, mut column) = m
                    .split_grid(columns)
                    .unwrap_or_else(|error| panic!("{here}: {error}"));
                let row_members: Vec<u64> = (0..size)
                    .filter(|r| r / columns == rank / columns)
                    .map(|r| r as u64)
                    .collect();
                let column_members: Vec<u64> = (0..size)
                    .filter(|r| r % columns == rank % columns)
                    .map(|r| r as u64)
                    .collect();
                assert_eq!(row.rank(), rank % columns, "{here}: row rank");
                assert_eq!(row.parties(), row_members.len(), "{here}: row size");
                assert_eq!(column.rank(), rank / columns, "{here}: column rank");
                assert_eq!(
                    column.parties(),
                    column_members.len(),
                    "{here}: column size"
                );
                let mut got = vec![0u64; row.parties()];
                row.allgather(&[rank as u64], &mut got)
                    .unwrap_or_else(|error| panic!("{here}: row allgather: {error}"));
                assert_eq!(got, row_members, "{here}: row members");
                let mut got = vec![0u64; column.parties()];
                column
                    .allgather(&[rank as u64], &mut got)
                    .unwrap_or_else(|error| panic!("{here}: column allgather: {error}"));
                assert_eq!(got, column_members, "{here}: column members");
            });
        }
    }
}

/// A short plan for sub-teams: every collective at a few lengths, from a few roots, in every sync
/// mode and style in rotation.
fn short_plan<T: Sample>(size: usize, seed: u64) -> Vec<Case> {
    let mut cases = Vec::new();
    for len in [0, 1, 7, 100] {
        for collective in Collective::ALL {
            let roots = if collective.has_root() {
                vec![0, size / 2, size - 1]
            } else {
                vec![0]
            };
            for root in roots {
                let index = cases.len() as u64;
                let h = hash(&[seed, index]);
                cases.push(Case {
                    collective,
                    root,
                    len,
                    op: T::OPS[(h % T::OPS.len() as u64) as usize],
                    style: Style::ALL[((h >> 8) % 3) as usize],
                    sync: SYNC_MODES[((h >> 16) % 3) as usize],
                    seed: h,
                });
            }
        }
    }
    cases
}

/// Sibling sub-teams from `split` run different plans at the same time (each seeded by its
/// color), interleaved with calls on the parent team, and every result is right.
#[test]
fn sibling_sub_teams_run_at_the_same_time() {
    let size = 8;
    let team = Team::new(size).expect("a valid team");
    run_all("siblings", team.participants(), move |mut m: Member| {
        let rank = m.rank();
        let color = (rank % 3) as u32;
        let mut sub = m
            .split(color, rank as i64)
            .expect("split")
            .expect("everyone has a color");
        let sub_plan = short_plan::<i32>(sub.parties(), hash(&[u64::from(color), 0x51B]));
        let parent_plan = short_plan::<u64>(size, 0x9A2E);
        // The sub-teams run their plans while the parent runs a call now and then, so the three
        // siblings' calls overlap each other and the parent's.
        for (index, case) in sub_plan.iter().enumerate() {
            check_call::<i32>(&format!("color {color}, call {index}"), &mut sub, case);
            if index % 8 == 0 {
                let case = &parent_plan[index / 8 % parent_plan.len()];
                check_call::<u64>(&format!("parent, call {}", index / 8), &mut m, case);
            }
        }
    });
}

/// The same on the row and column teams of a grid, which overlap: every member is in one of
/// each, and calls alternate between them.
#[test]
fn row_and_column_teams_run_at_the_same_time() {
    let (size, columns) = (8, 3);
    let team = Team::new(size).expect("a valid team");
    run_all("grid", team.participants(), move |mut m: Member| {
        let rank = m.rank();
        let (mut row, mut column) = m.split_grid(columns).expect("split_grid");
        let row_plan = short_plan::<Stats>(row.parties(), hash(&[(rank / columns) as u64, 0x20]));
        let column_plan =
            short_plan::<f64>(column.parties(), hash(&[(rank % columns) as u64, 0xC0]));
        for index in 0..row_plan.len().max(column_plan.len()) {
            if let Some(case) = row_plan.get(index) {
                check_call::<Stats>(&format!("row, call {index}"), &mut row, case);
            }
            if let Some(case) = column_plan.get(index) {
                check_call::<f64>(&format!("column, call {index}"), &mut column, case);
            }
        }
    });
}
