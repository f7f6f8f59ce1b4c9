//! `rate_hint` traffic and coverage: new data on a few connections (so the
//! sweep meets reads with a write in flight to the same connection), all
//! of them now and then; `ts_now` that runs, stands, jumps by up to two
//! windows (connections expire) and wraps; resets mid-run. The taps are
//! sack_gen's handshakes, seen from outside: valid and ready both inputs.

use std::collections::BTreeSet;

use mrnic_model::block::Bits;
use mrnic_model::rate_hint::{self as rh, RateHintParams};

use super::idx;
use crate::coverage::Coverage;
use crate::stimulus::Traffic;

pub fn traffic(p: &RateHintParams, seed: u64) -> Traffic {
    let ports = rh::ports(p);
    let hint = idx(&ports, "hint");
    let (conns, window) = (u64::from(p.conns), u64::from(p.window));
    let few = conns.min(24);
    // Near the wrap, so ts_now - last is taken mod 2^32.
    let mut ts = 0xffff_ffff - 2 * window;
    Traffic::new(&ports, seed)
        .random_resets(1)
        .input_u64("ts_now", move |rng, _| {
            let jump = if rng.below(200) == 0 { rng.below(window * 2) } else { 0 };
            ts = (ts + rng.below(3) + jump) & 0xffff_ffff;
            ts
        })
        .input_u64("tap_pkt_valid", |rng, _| rng.below(2))
        .input_u64("tap_pkt_ready", |rng, _| u64::from(rng.below(4) != 0))
        .input_u64("tap_pkt_conn", move |rng, _| if rng.below(4) == 0 { rng.below(conns) } else { rng.below(few) })
        // Phases of 1000 cycles: two busy, one quiet.
        .input_u64("tap_new_valid", |rng, cycle| u64::from((cycle / 1000) % 3 != 2 && rng.below(3) == 0))
        .input_u64("tap_new_ready", |rng, _| u64::from(rng.below(4) != 0))
        .input_u64("tap_new_conn", move |rng, _| if rng.below(8) == 0 { rng.below(conns) } else { rng.below(few) })
        .monitor(
            move |c: &mut Coverage| (BTreeSet::new(), c.bin("hint: a value not seen before")),
            move |(seen, new), v: &[Bits], in_reset, c| {
                if !in_reset && seen.insert(v[hint].as_u64()) {
                    c.hit(*new);
                }
            },
        )
}
