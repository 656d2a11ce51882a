//! The copy a broadcast's bandwidth is held against: `copy_from_slice` of the same number of
//! words on one thread, source and destination warm in its caches as far as they fit, measured in
//! the same run by the same harness.
//!
//! A broadcast that delivers its payload to every receiver as fast as one thread copies it from
//! one buffer to another scores 1 (receivers copy in parallel, so more is possible); one that
//! copies through an intermediate buffer, or synchronizes more than it copies, scores less.

use std::hint::black_box;

use crate::contender::WaitHandle;

/// One thread's copy.
pub struct Memcpy {
    source: Vec<u64>,
    destination: Vec<u64>,
}

impl Memcpy {
    /// A copy of `words` u64.
    pub fn new(words: usize) -> Self {
        Memcpy {
            source: (0..words as u64).collect(),
            destination: vec![0; words],
        }
    }
}

impl WaitHandle for Memcpy {
    #[inline]
    fn wait(&mut self) -> Result<(), phasers::Error> {
        self.destination.copy_from_slice(&self.source);
        // The copy is never read: without this the compiler could drop every copy but one.
        black_box(&mut self.destination);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_copies() {
        let mut copy = Memcpy::new(100);
        copy.wait().unwrap();
        assert_eq!(copy.destination, copy.source);
    }
}
