//! `rx_ctl` (small, and a random session on default): the receive controller's model and its generated RTL
//! in lockstep, the parts around it played by random answers
//! (`verif/src/blocks/rx_ctl.rs`): headers of every opcode, opens, the
//! parts' verdicts of every kind, arriving whether or not the controller
//! waits for them, backpressure on every output and resets mid-packet.
//! Every output is compared every cycle, idle payloads included; and a
//! proptest over seeds and rates.

mod common;

use common::{assert_covered, cycles, proptest_sessions, session};

const BLOCK: &str = "rx_ctl";

#[test]
fn small_random_headers_and_answers() {
    let Some(cov) = session("rx_ctl_small_random", BLOCK, "small", 0x7c71_0001, cycles(60_000), |t| t) else {
        return;
    };
    assert_covered(&cov, &[]);
}

#[test]
fn small_heavy_backpressure() {
    let Some(cov) = session("rx_ctl_small_bp", BLOCK, "small", 0x7c71_0002, cycles(30_000), |t| t.backpressure(90))
    else {
        return;
    };
    assert!(cov.count("to sack_gen: a data beat") > 10, "{cov}");
}

#[test]
fn small_proptest_seeds_and_rates() {
    proptest_sessions(BLOCK, "small");
}

// The default sizes change its tables' widths and the parts' latencies;
// every step of the controller is still reached in 60,000 cycles.
default_random!("rx_ctl", 0x7c71_1001, 60_000, []);
