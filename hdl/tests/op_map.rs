//! The generated `op_map`: the model's ports (combinational, so no `clk`),
//! silent under Verilator -Wall and Icarus -g2005, Yosys without latches,
//! and an Icarus replay of the model for `small` and `default` over every
//! opcode, then random ones.

mod common;
use common::*;

const BLOCK: &str = "op_map";

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
    let mut seen = [0u32; 4];
    replay_configs(BLOCK, 200, |_, cycle, r, defs, ins, outs| {
        seen[get(defs, outs, "op") as usize] += 1;
        set(defs, ins, "opcode", if cycle < 16 { u64::from(cycle) } else { r.below(16) });
    });
    assert!(seen.iter().all(|&n| n > 0) || !have("iverilog", "-V"), "{seen:?}");
}
