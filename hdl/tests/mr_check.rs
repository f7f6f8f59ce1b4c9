//! The generated `mr_check`: the model's ports plus `clk`, silent under
//! Verilator -Wall and Icarus -g2005, Yosys without latches, and an Icarus
//! replay of the model for `small` and `default`: tapped table writes
//! (during the reset sweep too) of a few keys, checks with the right,
//! a stale and an unknown key, placements inside, across either end of
//! and wrapping past 2^64, message lengths beyond the region, random
//! backpressure on `m_chk`, a reset mid-run.

mod common;
use common::*;

const BLOCK: &str = "mr_check";

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
    let mut seen = [0u32; 5];
    replay_configs(BLOCK, 6000, |cfg, cycle, r, defs, ins, outs| {
        let n = u64::from(cfg.hardware.mr_entries);
        let rst_was = cycle == 0 || get(defs, ins, "rst") == 1;
        if get(defs, outs, "m_chk_valid") == 1 && get(defs, ins, "m_chk_ready") == 1 {
            seen[get(defs, outs, "m_chk_status") as usize] += 1;
        }
        held = !rst_was && get(defs, ins, "s_chk_valid") == 1 && get(defs, outs, "s_chk_ready") == 0;
        set(defs, ins, "rst", u64::from(cycle == 0 || cycle == 3333));
        // Keys: slots 0..4, generation 0..2 in the high bits.
        let key = |r: &mut Rng| r.below(4) | (r.below(3) << 20);
        // Region bases and lengths near each other so placements cross ends.
        let base = |r: &mut Rng| if r.below(8) == 0 { u64::MAX - r.below(64) } else { 0x1000 * r.below(4) };
        set(defs, ins, "tap_mr_valid", u64::from(r.below(6) == 0));
        set(defs, ins, "tap_mr_ready", u64::from(r.below(4) != 0));
        let k = key(r);
        set(defs, ins, "tap_mr_key", k);
        set(defs, ins, "tap_mr_entry_valid", u64::from(r.below(6) != 0));
        set(defs, ins, "tap_mr_remote_write", u64::from(r.below(6) != 0));
        set(defs, ins, "tap_mr_recv", u64::from(r.below(3) == 0));
        set(defs, ins, "tap_mr_base", base(r));
        set(defs, ins, "tap_mr_len", [0, 0x100, 0x1000, 0x3000][r.below(4) as usize]);
        if !held {
            set(defs, ins, "s_chk_valid", u64::from(r.below(2) == 0));
            set(defs, ins, "s_chk_rkey", if r.below(10) == 0 { r.next_u64() & 0xffff_ffff } else { key(r) % n.max(4) });
            set(defs, ins, "s_chk_addr", base(r).wrapping_add(r.below(0x1100)));
            set(defs, ins, "s_chk_len", [0, 1, 64, 0x100, 0x1000][r.below(5) as usize]);
            set(defs, ins, "s_chk_msg_len", [0, 0x100, 0x1000, 0x3001][r.below(4) as usize]);
            set(defs, ins, "s_chk_recv", u64::from(r.below(3) == 0));
        }
        set(defs, ins, "m_chk_ready", u64::from(r.below(10) < 6));
    });
    if have("iverilog", "-V") {
        assert!(seen.iter().all(|&s| s >= 3), "answers by status: {seen:?}");
    }
}
