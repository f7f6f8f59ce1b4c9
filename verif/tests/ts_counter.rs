//! `ts_counter` (small, and a random session on default): the model and the generated RTL in lockstep, every
//! output compared every cycle, over the traffic of
//! `verif/src/blocks/ts_counter.rs`; and a proptest over seeds and rates.

mod common;

random_and_proptest!("ts_counter", 0x91e0_0001);
default_random!("ts_counter", 0x91e0_1001, 20_000, []);
