//! `cqe_merge` traffic and coverage: send and receive completions offered
//! alone and together, held while refused (both `ready`s are one, high
//! while the FIFO has room for two); random idle and backpressure
//! on `m_cqe` (heavy enough, in the tests, to fill the FIFO).

use mrnic_model::block::Bits;
use mrnic_model::cqe_merge::{self as cm, CqeMergeParams};

use super::idx;
use crate::coverage::Coverage;
use crate::stimulus::Traffic;

pub fn traffic(p: &CqeMergeParams, seed: u64) -> Traffic {
    let ports = cm::ports(p);
    let i = |n: &str| idx(&ports, n);
    let (tx, rx) = ([i("s_tx_valid"), i("s_tx_ready")], [i("s_rx_valid"), i("s_rx_ready")]);
    Traffic::new(&ports, seed).idle(40).backpressure(40).random_resets(1).monitor(
        move |c: &mut Coverage| {
            [
                c.bin("both offered in one cycle"),
                c.bin("both taken in one cycle"),
                c.bin("both refused (FIFO without room for two)"),
            ]
        },
        move |bins, v: &[Bits], in_reset, c| {
            let on = |k: usize| v[k].bit(0);
            if in_reset || !on(tx[0]) || !on(rx[0]) {
                return;
            }
            c.hit(bins[0]);
            match (on(tx[1]), on(rx[1])) {
                (true, true) => c.hit(bins[1]),
                (false, false) => c.hit(bins[2]),
                // One `ready` for both sides: the model's port says so.
                _ => {}
            }
        },
    )
}
