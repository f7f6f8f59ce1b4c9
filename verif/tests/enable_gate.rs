//! `enable_gate` (small and default): the model and the generated RTL in
//! lockstep, every output compared every cycle, over the traffic of
//! `verif/src/blocks/enable_gate.rs`; and a proptest over seeds and rates.

mod common;

random_and_proptest!("enable_gate", 0x91e0_0013);
default_random!("enable_gate", 0x91e0_1013, 40_000, []);
