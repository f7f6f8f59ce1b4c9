//! The generated `cqe_merge`: the model's ports plus `clk`, silent under
//! Verilator -Wall and Icarus -g2005, Yosys without latches, and an Icarus
//! replay of the model for `small` and `default`: send and receive
//! completions offered alone and together (held while refused), random
//! idle and backpressure on `m_cqe`, a reset mid-run.

mod common;
use common::*;

const BLOCK: &str = "cqe_merge";

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
    let mut held = [false; 2];
    let (mut both, mut out) = (0u32, 0u32);
    replay_configs(BLOCK, 4000, |_, cycle, r, defs, ins, outs| {
        let rst_was = cycle == 0 || get(defs, ins, "rst") == 1;
        both += u32::from(get(defs, ins, "s_tx_valid") == 1 && get(defs, ins, "s_rx_valid") == 1 && !rst_was);
        out += u32::from(get(defs, outs, "m_cqe_valid") == 1 && get(defs, ins, "m_cqe_ready") == 1);
        for (i, side) in ["s_tx", "s_rx"].iter().enumerate() {
            held[i] = !rst_was
                && get(defs, ins, &format!("{side}_valid")) == 1
                && get(defs, outs, &format!("{side}_ready")) == 0;
        }
        set(defs, ins, "rst", u64::from(cycle == 0 || cycle == 2500));
        // Busy phases fill the FIFO against a slow output; quiet ones drain it.
        let load = if (cycle / 300) % 2 == 0 { 6 } else { 2 };
        for (i, side) in ["s_tx", "s_rx"].iter().enumerate() {
            if held[i] {
                continue;
            }
            for d in defs.iter().filter(|d| d.name.starts_with(&format!("{side}_")) && !d.name.ends_with("_ready")) {
                let v = if d.name.ends_with("_valid") { u64::from(r.below(10) < load) } else { r.next_u64() };
                set(defs, ins, &d.name, v & mask(d.width));
            }
        }
        set(defs, ins, "m_cqe_ready", u64::from(r.below(10) < 6));
    });
    if have("iverilog", "-V") {
        assert!(both >= 50 && out >= 500, "both offered {both} times, {out} completions out");
    }
}
