//! What a case is, what it gets, and the small helpers every case uses.

use mpi::topology::SimpleCommunicator;
use phasers_mpi::{mpi, Mpi};

/// One test case; `run` is called on every rank, which all run the same cases in the same order.
pub struct Case {
    pub name: &'static str,
    pub run: fn(&Ctx<'_>) -> Result<(), String>,
}

/// What a case gets: MPI, a private duplicate of the world communicator, and a seed that differs
/// per case (every rank gets the same one; mix in the rank for per-rank randomness).
pub struct Ctx<'a> {
    pub mpi: &'a Mpi,
    pub comm: &'a SimpleCommunicator,
    pub rank: usize,
    pub size: usize,
    pub seed: u64,
}

/// The start of every panic message a case causes on purpose; the panic hook keeps them quiet.
pub const INTENTIONAL: &str = "mpi_suite: intentional panic";

/// Installs a panic hook that prints every panic except the ones a case causes on purpose.
pub fn quiet_intentional_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !payload_text(info.payload()).starts_with(INTENTIONAL) {
            default(info);
        }
    }));
}

/// The text of a panic payload.
pub fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(a panic without a message)".to_string())
}

/// `Err(message())` unless `condition`.
pub fn ensure(condition: bool, message: impl FnOnce() -> String) -> Result<(), String> {
    if condition {
        Ok(())
    } else {
        Err(message())
    }
}

/// Collects the failures of several threads, so that a thread that finds a violation records it
/// and keeps taking part (returning early would leave its siblings waiting for it).
#[derive(Default)]
pub struct Failures(std::sync::Mutex<Vec<String>>);

impl Failures {
    pub fn add(&self, message: String) {
        let mut list = self.0.lock().unwrap_or_else(|e| e.into_inner());
        // The first few tell the story; thousands would drown it.
        if list.len() < 8 {
            list.push(message);
        }
    }

    pub fn check(&self, condition: bool, message: impl FnOnce() -> String) {
        if !condition {
            self.add(message());
        }
    }

    pub fn into_result(self) -> Result<(), String> {
        let list = self.0.into_inner().unwrap_or_else(|e| e.into_inner());
        if list.is_empty() {
            Ok(())
        } else {
            Err(list.join("; "))
        }
    }
}

/// Runs every step and joins their failures. A case that stopped at its first failed check would
/// leave the ranks that passed it waiting in the next step's collective calls, so every rank
/// runs every step and reports at the end.
pub fn every<T>(
    items: impl IntoIterator<Item = T>,
    mut step: impl FnMut(T) -> Result<(), String>,
) -> Result<(), String> {
    let failures: Vec<String> = items
        .into_iter()
        .filter_map(|item| step(item).err())
        .collect();
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("; "))
    }
}
