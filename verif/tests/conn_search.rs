//! `conn_search` (small): the model and the generated RTL in lockstep, every
//! output compared every cycle, over the traffic of
//! `verif/src/blocks/conn_search.rs`; and a proptest over seeds and rates.

mod common;

random_and_proptest!("conn_search", 0x91e0_0008);
