//! A discrete-event model of a machine that runs the real wait policy (being written).
