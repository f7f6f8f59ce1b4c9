//! The generated `enable_gate`: the model's ports plus `clk`, silent under
//! Verilator -Wall and Icarus -g2005, Yosys without latches, and an Icarus
//! replay of the model for `small` and `default`: MAC frames of 1 to 5
//! beats held while refused, work requests held while refused, the enable
//! toggled at random (inside frames and offers too), random backpressure
//! from rx_parser and tx_engine, a reset mid-run.

mod common;
use common::*;

const BLOCK: &str = "enable_gate";

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
    // The MAC's frame under way: (beat, beats), and whether a beat or a
    // request was offered and not taken last cycle.
    let (mut beat, mut len) = (0u64, 1u64);
    let (mut axis_held, mut wr_held) = (false, false);
    let (mut enable, mut discarded, mut passed) = (false, 0u32, 0u32);
    replay_configs(BLOCK, 4000, |_, cycle, r, defs, ins, outs| {
        let rst_was = cycle == 0 || get(defs, ins, "rst") == 1;
        if !rst_was && cycle > 0 {
            discarded += get(defs, outs, "stat_rx_disabled") as u32;
            let offered = get(defs, ins, "s_axis_tvalid") == 1;
            let taken = offered && get(defs, outs, "s_axis_tready") == 1;
            passed += u32::from(taken && get(defs, outs, "m_axis_tvalid") == 1 && get(defs, ins, "s_axis_tlast") == 1);
            axis_held = offered && !taken;
            if taken {
                beat += 1;
                if beat == len {
                    beat = 0;
                    len = 1 + r.below(5);
                }
            }
            wr_held = get(defs, ins, "s_wr_valid") == 1 && get(defs, outs, "s_wr_ready") == 0;
        } else {
            (beat, axis_held, wr_held) = (0, false, false);
        }
        set(defs, ins, "rst", u64::from(cycle == 0 || cycle == 2500));
        if r.below(100) < 4 {
            enable = !enable;
        }
        set(defs, ins, "cfg_enable", u64::from(enable));
        if !axis_held {
            let valid = beat > 0 || r.below(10) < 6;
            set(defs, ins, "s_axis_tvalid", u64::from(valid));
            for n in ["s_axis_tdata", "s_axis_tkeep", "s_axis_tuser", "s_axis_tid"] {
                let w = defs.iter().find(|d| d.name == n).unwrap().width;
                set(defs, ins, n, r.next_u64() & mask(w));
            }
            set(defs, ins, "s_axis_tlast", u64::from(beat + 1 == len));
        }
        if !wr_held {
            for d in defs.iter().filter(|d| d.name.starts_with("s_wr_") && d.name != "s_wr_ready") {
                let v = if d.name == "s_wr_valid" { u64::from(r.below(10) < 4) } else { r.next_u64() };
                set(defs, ins, &d.name, v & mask(d.width));
            }
        }
        set(defs, ins, "m_axis_tready", u64::from(r.below(10) < 6));
        set(defs, ins, "m_wr_ready", u64::from(r.below(10) < 5));
    });
    if have("iverilog", "-V") {
        assert!(discarded >= 100 && passed >= 100, "{discarded} frames discarded, {passed} passed");
    }
}
