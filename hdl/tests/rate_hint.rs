//! The generated `rate_hint`: the model's ports plus `clk`, silent under
//! Verilator -Wall and Icarus -g2005, Yosys without latches, and an Icarus
//! replay of the model for `small` and `default`: new data on a few
//! connections (so the sweep meets reads with a write in flight to the
//! same connection), quiet stretches long enough for connections to
//! expire, ts_now that runs, stands and wraps, resets mid-run.

mod common;
use common::*;

const BLOCK: &str = "rate_hint";

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
    let mut hints = std::collections::BTreeSet::new();
    let mut ts = 0u64;
    replay_configs(BLOCK, 12_000, |cfg, cycle, r, defs, ins, outs| {
        hints.insert(get(defs, outs, "hint"));
        let p = mrnic_model::rate_hint::RateHintParams::from_config(cfg).unwrap();
        if cycle == 0 {
            // Near the wrap, so ts_now - last is taken mod 2^32.
            ts = 0xffff_ffff - 2 * u64::from(p.window);
        }
        // Time jumps by up to a window now and then: connections expire.
        ts = (ts + r.below(3) + if r.below(200) == 0 { r.below(u64::from(p.window) * 2) } else { 0 }) & 0xffff_ffff;
        // Phases of activity and quiet, 1000 cycles each.
        let busy = (cycle / 1000) % 3 != 2;
        let few = u64::from(p.conns.min(24));
        set(defs, ins, "rst", u64::from(cycle == 0 || cycle == 7777));
        set(defs, ins, "ts_now", ts);
        set(defs, ins, "tap_pkt_valid", r.below(2));
        set(defs, ins, "tap_pkt_ready", u64::from(r.below(4) != 0));
        set(defs, ins, "tap_pkt_conn", if r.below(4) == 0 { r.below(u64::from(p.conns)) } else { r.below(few) });
        set(defs, ins, "tap_new_valid", u64::from(busy && r.below(3) == 0));
        set(defs, ins, "tap_new_ready", u64::from(r.below(4) != 0));
        set(defs, ins, "tap_new_conn", if r.below(8) == 0 { r.below(u64::from(p.conns)) } else { r.below(few) });
    });
    assert!(hints.len() >= 6 || !have("iverilog", "-V"), "hints seen: {hints:?}");
}
