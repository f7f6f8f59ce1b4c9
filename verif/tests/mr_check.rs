//! `mr_check` (small, and a random session on default): the model and the generated RTL in lockstep, every
//! output compared every cycle, over the traffic of
//! `verif/src/blocks/mr_check.rs`; and a proptest over seeds and rates.

mod common;

random_and_proptest!("mr_check", 0x91e0_0006);
default_random!("mr_check", 0x91e0_1006, 40_000, []);
