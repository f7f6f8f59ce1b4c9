//! `msg_check` (small): the model and the generated RTL in lockstep, every
//! output compared every cycle, over the traffic of
//! `verif/src/blocks/msg_check.rs`; and a proptest over seeds and rates.

mod common;

random_and_proptest!("msg_check", 0x91e0_0005);

// 65,536 (connection, stream) words: the reset sweep takes the first
// 65,536 cycles, and mid-run resets are off (`blocks::sweep_resets`).
default_random!("msg_check", 0x91e0_1005, common::cycles(200_000), []);
