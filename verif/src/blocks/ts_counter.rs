//! `ts_counter` traffic and coverage: `ts_hold` in runs of up to 30 cycles
//! and in single cycles, resets mid-unit; the counter steps every
//! `timers.ts_unit_ns` worth of cycles that are not held.

use mrnic_model::block::Bits;
use mrnic_model::ts_counter::{self as tc, TsCounterParams};

use super::idx;
use crate::coverage::Coverage;
use crate::stimulus::Traffic;

pub fn traffic(p: &TsCounterParams, seed: u64) -> Traffic {
    let ports = tc::ports(p);
    let now = idx(&ports, "ts_now");
    let mut run = 0u64;
    Traffic::new(&ports, seed)
        .random_resets(2)
        .input_u64("ts_hold", move |rng, _| {
            if run == 0 && rng.below(40) == 0 {
                run = 1 + rng.below(30);
            }
            let hold = run > 0 || rng.below(8) == 0;
            run = run.saturating_sub(1);
            u64::from(hold)
        })
        .monitor(
            move |c: &mut Coverage| (now, None::<u64>, c.bin("ts_now: stepped")),
            |(now, last, step), v: &[Bits], in_reset, c| {
                let t = v[*now].as_u64();
                if !in_reset && last.is_some_and(|l| t == l + 1) {
                    c.hit(*step);
                }
                *last = (!in_reset).then_some(t);
            },
        )
}
