//! The generated `probe_walk`: the model's ports plus `clk`, silent under
//! Verilator -Wall and Icarus -g2005, Yosys without latches, and an Icarus
//! replay of the model for `small` and `default`: PROBEs with no, one,
//! some and every stream active (held while refused), random
//! backpressure on `m_pkt`, resets mid-walk.

mod common;
use common::*;

const BLOCK: &str = "probe_walk";

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
    let mut held = false;
    let (mut beats, mut firsts) = (0u32, 0u32);
    replay_configs(BLOCK, 4000, |cfg, cycle, r, defs, ins, outs| {
        let ns = cfg.transport.streams_per_conn;
        let rst_was = cycle == 0 || get(defs, ins, "rst") == 1;
        if get(defs, outs, "m_pkt_valid") == 1 && get(defs, ins, "m_pkt_ready") == 1 {
            beats += 1;
            firsts += get(defs, outs, "m_pkt_first") as u32;
        }
        held = !rst_was && get(defs, ins, "s_probe_valid") == 1 && get(defs, outs, "s_probe_ready") == 0;
        set(defs, ins, "rst", u64::from(cycle == 0 || r.below(700) == 0));
        if !held {
            let all = if ns == 64 { u64::MAX } else { (1 << ns) - 1 };
            let active = match r.below(4) {
                0 => 0,
                1 => all,
                2 => 1 << r.below(u64::from(ns)),
                _ => r.next_u64() & all,
            };
            set(defs, ins, "s_probe_valid", u64::from(r.below(3) == 0));
            set(defs, ins, "s_probe_active", active);
            let i = defs.iter().position(|d| d.name == "s_probe_msns").unwrap();
            let mut msns = mrnic_model::block::Bits::zero(defs[i].width);
            for w in msns.0.iter_mut() {
                *w = r.next_u64();
            }
            msns.truncate(defs[i].width);
            ins[i] = msns;
            for f in ["conn", "remote_id", "path_id", "psn", "gen", "tx_ts", "sport", "plane"] {
                set(defs, ins, &format!("s_probe_{f}"), r.next_u64());
            }
        }
        set(defs, ins, "m_pkt_ready", u64::from(r.below(10) < 6));
    });
    if have("iverilog", "-V") {
        assert!(beats > 500 && firsts > 100 && beats > firsts + 200, "{beats} beats, {firsts} first");
    }
}
