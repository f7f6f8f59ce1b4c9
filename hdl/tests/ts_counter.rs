//! The generated `ts_counter`: the model's ports plus `clk`, silent under
//! Verilator -Wall and Icarus -g2005, Yosys without latches, and an Icarus
//! replay of the model for `small` and `default`: `ts_hold` in runs and
//! single cycles, resets mid-unit, every output compared every cycle.

mod common;
use common::*;

const BLOCK: &str = "ts_counter";

#[test]
fn ports_are_the_models_plus_clk() {
    ports_match_model(BLOCK);
}

#[test]
fn tools_accept_it() {
    standalone_tools_accept(BLOCK);
}

#[test]
fn icarus_replays_model_vectors() {
    let mut steps = 0u32;
    let mut last = 0u64;
    let mut hold_run = 0u32;
    replay_configs(BLOCK, 3000, |_, cycle, r, defs, ins, outs| {
        let now = get(defs, outs, "ts_now");
        steps += u32::from(now != last && now == last + 1);
        last = now;
        if hold_run == 0 && r.below(40) == 0 {
            hold_run = 1 + r.below(30) as u32;
        }
        let hold = hold_run > 0 || r.below(8) == 0;
        hold_run = hold_run.saturating_sub(1);
        set(defs, ins, "rst", u64::from(cycle == 0 || r.below(500) == 0));
        set(defs, ins, "ts_hold", u64::from(hold));
    });
    // Both configs step the counter many times (7 / 21 cycles per unit).
    assert!(steps >= 100 || !have("iverilog", "-V"), "ts_now stepped {steps} times");
}
