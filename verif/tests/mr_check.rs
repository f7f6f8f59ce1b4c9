//! `mr_check` (small): the model and the generated RTL in lockstep, every
//! output compared every cycle, over the traffic of
//! `verif/src/blocks/mr_check.rs`; and a proptest over seeds and rates.

mod common;

use common::{assert_covered, cycles, proptest_sessions, session};

const BLOCK: &str = "mr_check";

#[test]
fn small_random() {
    let Some(cov) = session("mr_check_small_random", BLOCK, "small", 0x91e0_0006, cycles(40_000), |t| t) else {
        return;
    };
    assert_covered(&cov, &[]);
}

#[test]
fn small_proptest_seeds_and_rates() {
    proptest_sessions(BLOCK, "small");
}
