//! `conn_search` (small, and a random session on default): the model and the generated RTL in lockstep, every
//! output compared every cycle, over the traffic of
//! `verif/src/blocks/conn_search.rs`; and a proptest over seeds and rates.

mod common;

random_and_proptest!("conn_search", 0x91e0_0008);
default_random!("conn_search", 0x91e0_1008, 100_000, []);
