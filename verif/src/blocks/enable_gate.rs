//! `enable_gate` traffic and coverage: MAC beats with random `tlast`
//! (frames of random length) and work requests, random idle and
//! backpressure from rx_parser and tx_engine, and `cfg_enable` in runs of
//! up to 60 cycles and single-cycle flips, so the enable changes inside
//! frames and under offered requests.

use mrnic_model::block::Bits;
use mrnic_model::enable_gate::{self as eg, EnableGateParams};

use super::{hs, idx};
use crate::coverage::Coverage;
use crate::stimulus::Traffic;

pub fn traffic(p: &EnableGateParams, seed: u64) -> Traffic {
    let ports = eg::ports(p);
    let i = |n: &str| idx(&ports, n);
    let at = [
        i("cfg_enable"),
        i("stat_rx_disabled"),
        i("m_axis_tvalid"),
        i("m_axis_tready"),
        i("m_axis_tlast"),
        i("s_wr_valid"),
        i("s_wr_ready"),
    ];
    let (mut on, mut run) = (false, 0u64);
    Traffic::new(&ports, seed)
        .idle(30)
        .backpressure(40)
        .random_resets(1)
        .input_u64("cfg_enable", move |rng, _| {
            if run == 0 {
                on = !on;
                run = if rng.below(4) == 0 { 1 } else { 1 + rng.below(60) };
            }
            run -= 1;
            u64::from(on)
        })
        .monitor(
            move |c: &mut Coverage| {
                [
                    c.bin("frame discarded (stat_rx_disabled)"),
                    c.bin("frame passed whole across a disable"),
                    c.bin("work request held while disabled"),
                    c.bin("work request taken while enabled"),
                ]
            },
            move |bins, v: &[Bits], in_reset, c| {
                let [en, stat, mv, mr, ml, wv, wr] = at;
                if in_reset {
                    return;
                }
                let on = v[en].bit(0);
                if v[stat].bit(0) {
                    c.hit(bins[0]);
                }
                if hs(v, mv, mr) && v[ml].bit(0) && !on {
                    c.hit(bins[1]);
                }
                if v[wv].bit(0) && !v[wr].bit(0) && !on {
                    c.hit(bins[2]);
                }
                if hs(v, wv, wr) && on {
                    c.hit(bins[3]);
                }
            },
        )
}
