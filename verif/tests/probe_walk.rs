//! `probe_walk` (small, and a random session on default): the model and the generated RTL in lockstep, every
//! output compared every cycle, over the traffic of
//! `verif/src/blocks/probe_walk.rs`; and a proptest over seeds and rates.

mod common;

random_and_proptest!("probe_walk", 0x91e0_0007);
default_random!("probe_walk", 0x91e0_1007, 40_000, []);
