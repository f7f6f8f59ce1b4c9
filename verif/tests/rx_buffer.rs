//! `rx_buffer` (small, and a random session on default): the model and the generated RTL in lockstep, every
//! output compared every cycle, over the traffic of
//! `verif/src/blocks/rx_buffer.rs`; and a proptest over seeds and rates.

mod common;

random_and_proptest!("rx_buffer", 0x91e0_0004);
default_random!("rx_buffer", 0x91e0_1004, 40_000, []);
