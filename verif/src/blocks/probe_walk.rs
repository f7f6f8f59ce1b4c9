//! `probe_walk` traffic and coverage: PROBEs with no, one, some and every
//! stream active (held while refused), random backpressure on `m_pkt`,
//! resets mid-walk.

use mrnic_model::block::Bits;
use mrnic_model::probe_walk::{self as pw, ProbeWalkParams};

use super::idx;
use crate::coverage::Coverage;
use crate::stimulus::Traffic;

pub fn traffic(p: &ProbeWalkParams, seed: u64) -> Traffic {
    let ports = pw::ports(p);
    let ns = p.streams;
    let all = if ns >= 64 { u64::MAX } else { (1 << ns) - 1 };
    let pkt = [idx(&ports, "m_pkt_valid"), idx(&ports, "m_pkt_ready"), idx(&ports, "m_pkt_first")];
    Traffic::new(&ports, seed)
        .idle(60)
        .backpressure(40)
        .random_resets(2)
        .source("s_probe_", move |rng, t| {
            let active = match rng.below(4) {
                0 => 0,
                1 => all,
                2 => 1 << rng.below(u64::from(ns)),
                _ => rng.next_u64() & all,
            };
            t.set_u64("active", active);
        })
        .monitor(
            |c: &mut Coverage| [c.bin("beat: first of a PROBE"), c.bin("beat: a later stream of a PROBE")],
            move |bins, v: &[Bits], in_reset, c| {
                if !in_reset && v[pkt[0]].bit(0) && v[pkt[1]].bit(0) {
                    c.hit(bins[usize::from(!v[pkt[2]].bit(0))]);
                }
            },
        )
}
