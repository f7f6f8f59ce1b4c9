//! `msg_check` (small): the model and the generated RTL in lockstep, every
//! output compared every cycle, over the traffic of
//! `verif/src/blocks/msg_check.rs`; and a proptest over seeds and rates.

mod common;

use common::{assert_covered, cycles, proptest_sessions, session};

const BLOCK: &str = "msg_check";

#[test]
fn small_random() {
    let Some(cov) = session("msg_check_small_random", BLOCK, "small", 0x91e0_0005, cycles(40_000), |t| t) else {
        return;
    };
    assert_covered(&cov, &[]);
}

#[test]
fn small_proptest_seeds_and_rates() {
    proptest_sessions(BLOCK, "small");
}
