//! The generated `rx_drop_or`: the model's ports (combinational, so no
//! `clk`), silent under Verilator -Wall and Icarus -g2005, Yosys without
//! latches, and an Icarus replay of the model for `small` and `default`
//! with every input alone and random combinations.

mod common;
use common::*;

const BLOCK: &str = "rx_drop_or";

#[test]
fn ports_are_the_models() {
    ports_match_model(BLOCK);
}

#[test]
fn tools_accept_it() {
    standalone_tools_accept(BLOCK);
}

#[test]
fn icarus_replays_model_vectors() {
    let mut high = 0u32;
    replay_configs(BLOCK, 400, |_, cycle, r, defs, ins, outs| {
        high += u32::from(get(defs, outs, "stat_rx_decode_error") == 1);
        let inputs: Vec<&str> =
            defs.iter().filter(|d| d.dir == mrnic_model::block::Dir::In).map(|d| d.name.as_str()).collect();
        for (k, n) in inputs.iter().enumerate() {
            // Each input alone in turn, then random sparse pulses.
            let v = if (cycle as usize) < 2 * inputs.len() { cycle as usize == 2 * k } else { r.below(20) == 0 };
            set(defs, ins, n, u64::from(v));
        }
    });
    assert!(high >= 20 || !have("iverilog", "-V"), "the OR was high {high} times");
}
