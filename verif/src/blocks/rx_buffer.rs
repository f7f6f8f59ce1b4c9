//! `rx_buffer` traffic and coverage: random headers, and packets of one
//! beat, of random lengths, of the longest and a few beats past it
//! (oversize), a quarter dropped by `tuser`; the controller's payload
//! commands (keep or drop) at random rates, so that the ring and the
//! record FIFO fill; random backpressure on `m_hdr` and `m_axis`; resets
//! mid-run.

use mrnic_model::block::Bits;
use mrnic_model::rx_buffer::{self as rb, RxBufferParams};

use super::idx;
use crate::coverage::Coverage;
use crate::stimulus::Traffic;

pub fn traffic(p: &RxBufferParams, seed: u64) -> Traffic {
    let ports = rb::ports(p);
    let max = u64::from(p.max_beats);
    // Beats left of the packet being offered (0: none started).
    let mut left = 0u64;
    let mut calls = 0u64;
    let i = |n: &str| idx(&ports, n);
    let out = [i("m_axis_tvalid"), i("m_axis_tready"), i("m_axis_tlast")];
    let pay = [i("s_pay_valid"), i("s_pay_ready"), i("s_pay_drop")];
    let oversize = i("stat_oversize");
    Traffic::new(&ports, seed)
        .backpressure(35)
        .random_resets(1)
        .source("s_axis_t", move |rng, t| {
            if left == 0 {
                left = match rng.below(8) {
                    0..=2 => 1,
                    3 => max,
                    4 => max + 1 + rng.below(3),
                    _ => 1 + rng.below(max),
                };
            }
            t.set_u64("last", u64::from(left == 1)).set_u64("user", u64::from(rng.below(4) == 0));
            left -= 1;
        })
        .source("s_pay_", move |rng, t| {
            // Phases of about 1500 cycles, one in four with hardly a
            // command, so that the ring fills and `s_axis` is refused.
            calls += 1;
            let rate = if calls / 1500 % 4 == 0 { 100 } else { 2 };
            if rng.below(rate) == 0 {
                t.set_u64("drop", u64::from(rng.below(3) == 0));
            } else {
                t.skip();
            }
        })
        .monitor(
            |c: &mut Coverage| {
                [
                    c.bin("payload: sent (its last beat)"),
                    c.bin("payload: dropped by the controller"),
                    c.bin("packet: oversize (stat_oversize)"),
                ]
            },
            move |bins, v: &[Bits], in_reset, c| {
                let on = |k: usize| v[k].bit(0);
                if in_reset {
                    return;
                }
                if on(out[0]) && on(out[1]) && on(out[2]) {
                    c.hit(bins[0]);
                }
                if on(pay[0]) && on(pay[1]) && on(pay[2]) {
                    c.hit(bins[1]);
                }
                if on(oversize) {
                    c.hit(bins[2]);
                }
            },
        )
}
