//! mrnic co-simulation: the cycle model and its Verilated RTL in lockstep.
