//! Whole applications on phasers (work in progress).
