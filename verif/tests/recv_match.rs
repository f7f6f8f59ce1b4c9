//! `recv_match` (small): the cycle model and the generated RTL in lockstep
//! over random posts, lookups and consumes on few (connection, stream)
//! rings (so rings fill and entries are hit back to back), with idle
//! cycles, backpressure on all three outputs and mid-run resets, and a
//! proptest over seeds and rates.

mod common;

use common::{assert_covered, cycles, proptest_sessions, session};

const BLOCK: &str = "recv_match";

#[test]
fn small_random_requests_idle_and_backpressure() {
    let Some(cov) = session("rm_small_random", BLOCK, "small", 0x4ec0_0001, cycles(60_000), |t| t) else { return };
    assert_covered(&cov, &[]);
}

#[test]
fn small_back_to_back_requests_without_backpressure() {
    // One request per cycle on the hot rings: the pointer word is forwarded
    // from the previous cycles' updates.
    let Some(cov) = session("rm_small_b2b", BLOCK, "small", 0x4ec0_0002, cycles(20_000), |t| t.idle(0).backpressure(0))
    else {
        return;
    };
    println!("{cov}");
}

#[test]
fn small_proptest_seeds_and_rates() {
    proptest_sessions(BLOCK, "small");
}

// 65,536 (connection, stream) rings: the reset sweep takes the first
// 65,536 cycles, and mid-run resets are off (`blocks::sweep_resets`).
default_random!("recv_match", 0x4ec0_1001, cycles(200_000), []);
