//! Pinning threads to CPUs, for `--pin` and for the floor.

/// The CPUs this process may run on, as the OS lists them; empty where it cannot say.
pub fn allowed_cpus() -> Vec<usize> {
    core_affinity::get_core_ids()
        .unwrap_or_default()
        .into_iter()
        .map(|core| core.id)
        .collect()
}

/// Pins the calling thread to `cpu`; false when the OS refused.
pub fn pin(cpu: usize) -> bool {
    core_affinity::set_for_current(core_affinity::CoreId { id: cpu })
}

/// Thread `index`'s CPU in a pinned row: round robin, so oversubscribed threads stack evenly.
pub fn cpu_for(cpus: &[usize], index: usize) -> Option<usize> {
    (!cpus.is_empty()).then(|| cpus[index % cpus.len()])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinned_threads_go_round_robin_over_cpus_this_process_may_use() {
        assert_eq!(
            [0, 3].map(|index| cpu_for(&[3, 5], index)),
            [Some(3), Some(5)]
        );
        assert_eq!(cpu_for(&[], 1), None);
        let cpu = allowed_cpus()[0];
        // On a thread of its own, so the test harness is untouched.
        assert!(std::thread::spawn(move || pin(cpu)).join().unwrap());
    }
}
