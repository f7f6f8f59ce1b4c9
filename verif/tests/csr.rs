//! `csr` (small): the cycle model and the generated RTL in lockstep over
//! random AXI4-Lite writes and reads (mapped, unmapped and misaligned
//! addresses, random `prot`, partial strobes, AW and W apart), counter
//! pulses, backpressure on B, R and the MR commit output, and mid-run
//! resets; and a proptest over seeds and rates.

mod common;

use common::{assert_covered, cycles, proptest_sessions, session};

const BLOCK: &str = "csr";

#[test]
fn small_random_register_traffic() {
    let Some(cov) = session("csr_small_random", BLOCK, "small", 0xc5a0_0001, cycles(60_000), |t| t) else { return };
    // EXOKAY is never a valid AXI4-Lite response.
    assert_covered(&cov, &["write response: EXOKAY", "read response: EXOKAY"]);
}

#[test]
fn small_proptest_seeds_and_rates() {
    proptest_sessions(BLOCK, "small");
}

// EXOKAY is never a valid AXI4-Lite response.
default_random!("csr", 0xc5a0_1001, 40_000, ["write response: EXOKAY", "read response: EXOKAY"]);
