//! `cqe_merge` (small, and a random session on default): the model and the generated RTL in lockstep, every
//! output compared every cycle, over the traffic of
//! `verif/src/blocks/cqe_merge.rs`; and a proptest over seeds and rates.

mod common;

random_and_proptest!("cqe_merge", 0x91e0_0003);
default_random!("cqe_merge", 0x91e0_1003, 40_000, []);
