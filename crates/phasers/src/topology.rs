//! What the machine offers this process, for the `Auto` choices.

use std::sync::OnceLock;

/// Number of cores this process may run on.
///
/// This is [`std::thread::available_parallelism`], which on Linux already intersects the online
/// cores with the process's affinity mask (`sched_getaffinity`) and its cgroup CPU quota, so a
/// program started under `taskset -c 0,1` or in a container limited to two CPUs sees 2. The value is
/// read once and cached, because it costs a system call and the `Auto` choices consult it often.
/// When the platform cannot tell, it answers 1, the safe choice: it makes waiters park early.
///
/// ```
/// assert!(phasers::available_cores() >= 1);
/// ```
pub fn available_cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Whether `participants` threads that all wait at once outnumber the cores they may run on.
///
/// When they do, a spinning waiter only steals the core that a late arrival needs, so every
/// primitive's waiters stop spinning almost at once and park instead.
///
/// ```
/// use phasers::{available_cores, is_oversubscribed};
///
/// assert!(!is_oversubscribed(available_cores())); // one thread per core
/// assert!(is_oversubscribed(available_cores() + 1));
/// ```
pub fn is_oversubscribed(participants: usize) -> bool {
    participants > available_cores()
}
