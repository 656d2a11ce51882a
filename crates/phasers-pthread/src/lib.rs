//! A drop-in `pthread_barrier_*` replacement (work in progress).
