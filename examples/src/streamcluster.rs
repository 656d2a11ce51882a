//! Online clustering in the style of PARSEC's StreamCluster (the pthreads version seed 002
//! measures), which solves the online facility-location problem.
//!
//! Points arrive in chunks. Each chunk is clustered together with the centers kept from the
//! chunks before (weighted by the points they stand for) by local search, as StreamCluster's
//! `pFL` does with `pgain`: for a candidate point x,
//!
//! 1. every thread, for its block of points, computes what each point would save by moving to
//!    x, and what closing each current center would cost (the points that would not move to x
//!    on their own); **barrier**;
//! 2. one thread (rank 0) adds the threads' partial sums, decides whether opening x (and
//!    closing the centers whose closing saves more than the facility cost) lowers the total
//!    cost, and publishes the decision; **barrier**;
//! 3. if x opened, every thread moves its points; **barrier**.
//!
//! A chunk starts with rank 0 laying out the points (a barrier) and every thread assigning its
//! points to the nearest kept center (a barrier), and ends with every thread summing its points'
//! weights per center, a barrier, and rank 0 collecting the weighted centers (a barrier). As in
//! seed 002's description, "one thread makes decisions and the threads must use a barrier to
//! wait for these decisions to be made and also to synchronize work", so for a fixed problem
//! the barrier's cost bounds the scaling.
//!
//! To make the result independent of the thread count, coordinates are small integers and costs
//! are exact integer sums (squared Euclidean distances times weights), the candidates come from
//! a seeded generator every thread runs alike, and ties go to the lower index.
//!
//! The check: the centers (coordinates and weights) and each chunk's final cost equal the
//! sequential run's.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use crate::rng::SplitMix64;
use crate::shared::SharedSlice;
use crate::sync::Handles;
use crate::team::{self, block};
use crate::workload::{first_difference, Application, Size, Timed};

/// Coordinates per point.
pub const DIMENSIONS: usize = 16;

/// The most centers a chunk may keep (StreamCluster bounds them with `kmax`).
pub const MAX_CENTERS: usize = 40;

/// What opening a center costs, in squared-distance units: far more than splitting a cluster
/// saves, far less than serving a cluster from another one costs.
pub const FACILITY_COST: i64 = 2_000_000;

/// The clustering a run ends with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clustering {
    /// The centers' coordinates, `DIMENSIONS` per center.
    pub centers: Vec<i32>,
    /// The weight of each center: how many points it stands for.
    pub weights: Vec<i64>,
    /// The total cost (service plus facilities) at the end of each chunk.
    pub chunk_costs: Vec<i64>,
    /// Centers opened by local search, over all chunks.
    pub opened: u64,
}

/// One StreamCluster problem.
#[derive(Debug, Clone)]
pub struct StreamCluster {
    points: Vec<i32>,
    chunk: usize,
    candidates: usize,
}

impl StreamCluster {
    /// The problem of `size`: 2,000 points in chunks of 500, 20,000 in chunks of 5,000, or
    /// 100,000 in chunks of 20,000; 200 candidates per chunk.
    pub fn new(size: Size) -> Self {
        match size {
            Size::Small => StreamCluster::with_points(2_000, 500, 200),
            Size::Medium => StreamCluster::with_points(20_000, 5_000, 200),
            Size::Large => StreamCluster::with_points(100_000, 20_000, 200),
        }
    }

    /// `points` seeded points around 16 random cluster centers, streamed in chunks of `chunk`,
    /// with `candidates` pgain steps per chunk.
    pub fn with_points(points: usize, chunk: usize, candidates: usize) -> Self {
        let mut rng = SplitMix64::new(0x5354_5245_414d);
        let clusters: Vec<i32> = (0..16 * DIMENSIONS)
            .map(|_| 20 + rng.below(216) as i32)
            .collect();
        let mut coordinates = Vec::with_capacity(points * DIMENSIONS);
        for _ in 0..points {
            let cluster = rng.below(16) as usize;
            for d in 0..DIMENSIONS {
                let noise = rng.below(41) as i32 - 20;
                coordinates.push(clusters[cluster * DIMENSIONS + d] + noise);
            }
        }
        StreamCluster {
            points: coordinates,
            chunk: chunk.max(1),
            candidates,
        }
    }

    fn point_count(&self) -> usize {
        self.points.len() / DIMENSIONS
    }
}

/// Everything the threads of one run share; see each field for who writes it when.
struct State {
    /// The working points: kept centers first, then the chunk's points (rank 0, at chunk start).
    coordinates: SharedSlice<i32>,
    /// Each working point's weight (rank 0, at chunk start).
    weight: SharedSlice<i64>,
    /// Each point's center, a point index (the point's owner).
    assign: SharedSlice<u32>,
    /// Each point's weighted distance to its center (the point's owner).
    cost: SharedSlice<i64>,
    /// Each point's slot in the center list, if it is a center (rank 0, in decisions).
    slot: SharedSlice<u32>,
    /// Whether each point is a center (rank 0, in decisions).
    is_center: SharedSlice<bool>,
    /// Whether each center closes in the current decision (rank 0, in decisions).
    closing: SharedSlice<bool>,
    /// Per thread and center slot: the partial cost of closing (phase 1) or the partial weight
    /// (chunk end) (each thread its own row).
    partial: SharedSlice<i64>,
    /// Per thread: the partial saving of moving to the candidate, or the partial service cost.
    partial_total: SharedSlice<i64>,
    /// Working points in this chunk (rank 0).
    working: AtomicU64,
    /// Centers now (rank 0).
    centers: AtomicU64,
    /// Whether the candidate opened (rank 0).
    opened: AtomicU64,
}

/// No slot: the point is not a center.
const NO_SLOT: u32 = u32::MAX;

fn distance(a: &[i32], b: &[i32]) -> i64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| {
            let d = i64::from(x - y);
            d * d
        })
        .sum()
}

impl StreamCluster {
    fn state(&self, threads: usize) -> State {
        let most = MAX_CENTERS + self.chunk;
        State {
            coordinates: SharedSlice::new(vec![0; most * DIMENSIONS]),
            weight: SharedSlice::new(vec![0; most]),
            assign: SharedSlice::new(vec![0; most]),
            cost: SharedSlice::new(vec![0; most]),
            slot: SharedSlice::new(vec![NO_SLOT; most]),
            is_center: SharedSlice::new(vec![false; most]),
            closing: SharedSlice::new(vec![false; most]),
            partial: SharedSlice::new(vec![0; threads * MAX_CENTERS]),
            partial_total: SharedSlice::new(vec![0; threads]),
            working: AtomicU64::new(0),
            centers: AtomicU64::new(0),
            opened: AtomicU64::new(0),
        }
    }

    /// The whole computation, as thread `rank` of `threads` runs it; `wait` is the barrier (a
    /// no-op for the sequential run, which is rank 0 of 1). Rank 0 returns the clustering.
    ///
    /// # Safety
    ///
    /// `threads` threads run this at once on the same `state`, with ranks `0..threads`, and
    /// `wait` is a barrier among exactly them.
    unsafe fn cluster(
        &self,
        state: &State,
        rank: usize,
        threads: usize,
        wait: &mut dyn FnMut(),
    ) -> Option<Clustering> {
        // Rank 0's own bookkeeping: the center list, and the clustering so far.
        let mut center_list: Vec<usize> = Vec::new();
        let mut closed: Vec<usize> = Vec::new();
        let mut kept: Vec<(Vec<i32>, i64)> = Vec::new();
        let mut result = Clustering {
            centers: Vec::new(),
            weights: Vec::new(),
            chunk_costs: Vec::new(),
            opened: 0,
        };
        let mut x_costs: Vec<i64> = Vec::new();
        let mut rng = SplitMix64::new(0x0070_6761_696e);
        let at = |point: usize| point * DIMENSIONS..(point + 1) * DIMENSIONS;
        for chunk_start in (0..self.point_count()).step_by(self.chunk) {
            let chunk_end = (chunk_start + self.chunk).min(self.point_count());
            if rank == 0 {
                // SAFETY: between barriers, only rank 0 touches the state (the whole block).
                unsafe {
                    let mut m = 0;
                    for (coordinates, weight) in &kept {
                        state
                            .coordinates
                            .slice_mut(at(m))
                            .copy_from_slice(coordinates);
                        state.weight.set(m, *weight);
                        m += 1;
                    }
                    for point in chunk_start..chunk_end {
                        state
                            .coordinates
                            .slice_mut(at(m))
                            .copy_from_slice(&self.points[at(point)]);
                        state.weight.set(m, 1);
                        m += 1;
                    }
                    center_list.clear();
                    closed.clear();
                    center_list.extend(0..kept.len().max(1));
                    for point in 0..m {
                        state.is_center.set(point, false);
                        state.closing.set(point, false);
                        state.slot.set(point, NO_SLOT);
                    }
                    for (slot, &center) in center_list.iter().enumerate() {
                        state.is_center.set(center, true);
                        state.slot.set(center, slot as u32);
                    }
                    state.working.store(m as u64, Ordering::Relaxed);
                    state
                        .centers
                        .store(center_list.len() as u64, Ordering::Relaxed);
                }
            }
            wait();
            let m = state.working.load(Ordering::Relaxed) as usize;
            let initial_centers = state.centers.load(Ordering::Relaxed) as usize;
            let mine = block(m, threads, rank);
            // SAFETY: nobody writes the coordinates, weights or center flags until the chunk
            // ends; each thread writes only its own points' assignment and cost.
            unsafe {
                let coordinates = state.coordinates.slice(0..m * DIMENSIONS);
                for point in mine.clone() {
                    let here = &coordinates[at(point)];
                    let mut best = (i64::MAX, 0);
                    // The first kept centers are points 0..initial_centers.
                    for center in 0..initial_centers {
                        let d = distance(here, &coordinates[at(center)]);
                        if d < best.0 {
                            best = (d, center);
                        }
                    }
                    state.assign.set(point, best.1 as u32);
                    state.cost.set(point, best.0 * state.weight.get(point));
                }
            }
            wait();
            for _ in 0..self.candidates {
                let x = rng.below(m as u64) as usize;
                // SAFETY: rank 0 last wrote the center flags before the previous barrier.
                if unsafe { state.is_center.get(x) } {
                    continue;
                }
                let centers = state.centers.load(Ordering::Relaxed) as usize;
                // Phase 1: partial gains of moving to x, and partial costs of closing.
                // SAFETY: each thread writes only its own row of `partial` and its own
                // `partial_total`; everything else is read-only in this phase.
                unsafe {
                    let coordinates = state.coordinates.slice(0..m * DIMENSIONS);
                    let lower = state
                        .partial
                        .slice_mut(rank * MAX_CENTERS..rank * MAX_CENTERS + centers);
                    lower.fill(0);
                    let candidate = &coordinates[at(x)];
                    let mut gain = 0;
                    x_costs.clear();
                    for point in mine.clone() {
                        let x_cost =
                            distance(&coordinates[at(point)], candidate) * state.weight.get(point);
                        let current = state.cost.get(point);
                        if x_cost < current {
                            gain += current - x_cost;
                        } else {
                            let center = state.assign.get(point) as usize;
                            lower[state.slot.get(center) as usize] += current - x_cost;
                        }
                        x_costs.push(x_cost);
                    }
                    state.partial_total.set(rank, gain);
                }
                wait();
                if rank == 0 {
                    // SAFETY: between barriers, only rank 0 touches the state (the whole block).
                    unsafe {
                        self.decide(state, threads, x, &mut center_list, &mut closed);
                    }
                }
                wait();
                if state.opened.load(Ordering::Relaxed) == 1 {
                    result.opened += 1;
                    // SAFETY: each thread writes only its own points; the closing flags are
                    // read-only in this phase.
                    unsafe {
                        for (point, &x_cost) in mine.clone().zip(&x_costs) {
                            let center = state.assign.get(point) as usize;
                            if x_cost < state.cost.get(point) || state.closing.get(center) {
                                state.assign.set(point, x as u32);
                                state.cost.set(point, x_cost);
                            }
                        }
                    }
                    wait();
                }
            }
            // The chunk's end: weights per center and the service cost, then rank 0 keeps the
            // centers.
            let centers = state.centers.load(Ordering::Relaxed) as usize;
            // SAFETY: each thread writes its own row and total; the rest is read-only.
            unsafe {
                let weights = state
                    .partial
                    .slice_mut(rank * MAX_CENTERS..rank * MAX_CENTERS + centers);
                weights.fill(0);
                let mut service = 0;
                for point in mine.clone() {
                    let center = state.assign.get(point) as usize;
                    weights[state.slot.get(center) as usize] += state.weight.get(point);
                    service += state.cost.get(point);
                }
                state.partial_total.set(rank, service);
            }
            wait();
            if rank == 0 {
                kept.clear();
                let mut total = FACILITY_COST * centers as i64;
                // SAFETY: between barriers, only rank 0 touches the state.
                unsafe {
                    for thread in 0..threads {
                        total += state.partial_total.get(thread);
                    }
                    for (slot, &center) in center_list.iter().enumerate() {
                        let weight = (0..threads)
                            .map(|thread| state.partial.get(thread * MAX_CENTERS + slot))
                            .sum();
                        let coordinates = state.coordinates.slice(at(center)).to_vec();
                        kept.push((coordinates, weight));
                    }
                }
                result.chunk_costs.push(total);
            }
            wait();
        }
        if rank != 0 {
            return None;
        }
        for (coordinates, weight) in kept {
            result.centers.extend(coordinates);
            result.weights.push(weight);
        }
        Some(result)
    }

    /// Rank 0's decision on candidate `x`: adds the partial sums, opens x and closes centers if
    /// that lowers the total cost (and keeps at most `MAX_CENTERS`), and publishes the result.
    /// `closed` holds the centers the previous decision closed, whose flags the moves after it
    /// have read by now.
    ///
    /// # Safety
    ///
    /// Only the calling thread touches the state while this runs.
    unsafe fn decide(
        &self,
        state: &State,
        threads: usize,
        x: usize,
        center_list: &mut Vec<usize>,
        closed: &mut Vec<usize>,
    ) {
        // SAFETY: the caller's contract (the whole body).
        unsafe {
            // A closed center may be a candidate again later; its flag must not move the
            // points it would then serve.
            for &center in closed.iter() {
                state.closing.set(center, false);
            }
            closed.clear();
            let mut gain = -FACILITY_COST;
            for thread in 0..threads {
                gain += state.partial_total.get(thread);
            }
            let mut closing = Vec::new();
            for (slot, &center) in center_list.iter().enumerate() {
                let mut saving = FACILITY_COST;
                for thread in 0..threads {
                    saving += state.partial.get(thread * MAX_CENTERS + slot);
                }
                if saving > 0 {
                    closing.push(center);
                    gain += saving;
                }
            }
            let open = gain > 0 && center_list.len() + 1 - closing.len() <= MAX_CENTERS;
            state.opened.store(u64::from(open), Ordering::Relaxed);
            if !open {
                return;
            }
            for &center in &closing {
                state.closing.set(center, true);
                state.is_center.set(center, false);
                state.slot.set(center, NO_SLOT);
            }
            center_list.retain(|center| !closing.contains(center));
            center_list.push(x);
            state.is_center.set(x, true);
            for (slot, &center) in center_list.iter().enumerate() {
                state.slot.set(center, slot as u32);
            }
            state
                .centers
                .store(center_list.len() as u64, Ordering::Relaxed);
            *closed = closing;
        }
    }
}

impl Application for StreamCluster {
    type Output = Clustering;

    fn describe(&self) -> String {
        format!(
            "{} points of {DIMENSIONS} dimensions, chunks of {}, {} candidates per chunk",
            self.point_count(),
            self.chunk,
            self.candidates
        )
    }

    fn sequential(&self) -> Timed<Clustering> {
        let state = self.state(1);
        let start = Instant::now();
        // SAFETY: one thread, rank 0 of 1; a no-op is a barrier among one thread.
        let output = unsafe { self.cluster(&state, 0, 1, &mut || {}) };
        let elapsed = start.elapsed();
        Timed {
            output: output.unwrap_or_else(|| unreachable!("rank 0 returns the clustering")),
            elapsed,
            barriers: 0,
        }
    }

    fn parallel(&self, handles: Handles<'_>) -> Result<Timed<Clustering>, String> {
        let threads = handles.len();
        let state = self.state(threads);
        let run = team::run(handles, |rank, waiter| {
            // SAFETY: `team::run` runs one thread per rank, and the waiters share one barrier.
            unsafe { self.cluster(&state, rank, threads, &mut || waiter.wait()) }
        })?;
        let output = run
            .results
            .into_iter()
            .next()
            .flatten()
            .ok_or_else(|| "rank 0 returned no clustering".to_owned())?;
        Ok(Timed {
            output,
            elapsed: run.elapsed,
            barriers: run.waits,
        })
    }

    fn check(&self, expected: &Clustering, got: &Clustering) -> Result<(), String> {
        first_difference(
            "chunk costs",
            &expected.chunk_costs,
            &got.chunk_costs,
            PartialEq::eq,
        )?;
        first_difference(
            "center weights",
            &expected.weights,
            &got.weights,
            PartialEq::eq,
        )?;
        first_difference(
            "center coordinates",
            &expected.centers,
            &got.centers,
            PartialEq::eq,
        )?;
        if got.opened != expected.opened {
            return Err(format!(
                "{} centers opened, the sequential run opened {}",
                got.opened, expected.opened
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::tests::check_every_kind;

    #[test]
    fn every_kind_matches_the_sequential_run() {
        check_every_kind(StreamCluster::with_points(300, 100, 40), |clustering| {
            clustering.weights[0] += 1;
        });
    }

    #[test]
    fn the_clustering_finds_the_clusters_and_keeps_every_point() {
        let app = StreamCluster::with_points(2_000, 500, 200);
        let clustering = app.sequential().output;
        let centers = clustering.weights.len();
        assert!((8..=MAX_CENTERS).contains(&centers), "{centers} centers");
        // Every point is represented by the final weights (the kept centers carry theirs).
        assert_eq!(clustering.weights.iter().sum::<i64>(), 2_000);
        assert_eq!(clustering.chunk_costs.len(), 4);
        assert!(clustering.opened > 0);
        // Local search only lowers the cost below serving everything from one center.
        assert!(clustering.chunk_costs.iter().all(|&cost| cost > 0));
    }
}
