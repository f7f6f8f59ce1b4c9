//! `msg_check` (small): the model and the generated RTL in lockstep, every
//! output compared every cycle, over the traffic of
//! `verif/src/blocks/msg_check.rs`; and a proptest over seeds and rates.

mod common;

random_and_proptest!("msg_check", 0x91e0_0005);
