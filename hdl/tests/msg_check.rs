//! The generated `msg_check`: the model's ports plus `clk`, silent under
//! Verilator -Wall and Icarus -g2005, Yosys without latches, and an Icarus
//! replay of the model for `small` and `default`: accepts and checks of a
//! few messages per stream (msns in and past the window, around the 24-bit
//! wrap), their fields drawn from small sets so that live slots meet
//! packets that agree and packets that differ, streams the connection
//! lacks, lengths past the MTU, msg_len and a SEND's end; opens that clear
//! a connection; every channel held while refused; random backpressure on
//! `m_chk`; a reset mid-run (and, in `small`, more), each followed by the
//! whole sweep.

mod common;
use common::*;

use mrnic_model::msg_check::status;

const BLOCK: &str = "msg_check";
/// Cycles per config: `default`'s reset sweep is CONNS x STREAMS = 65536
/// cycles, so each of its two halves has about 14,000 cycles of traffic.
const CYCLES: u32 = 160_000;

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
    let mut held = [false; 3];
    // Per config (small, default): answers by status, answers held by
    // backpressure, opens and accepts taken.
    let mut seen = [[0u32; 4]; 2];
    let (mut waited, mut opens, mut accepts) = ([0u32; 2], [0u32; 2], [0u32; 2]);
    replay_configs(BLOCK, CYCLES, |cfg, cycle, r, defs, ins, outs| {
        let depth = u64::from(cfg.hardware.msg_table_depth);
        let streams = u64::from(cfg.transport.streams_per_conn);
        let mtu = u64::from(cfg.transport.mtu);
        let ci = usize::from(cfg.name == "default");
        let rst_was = cycle == 0 || get(defs, ins, "rst") == 1;
        if get(defs, outs, "m_chk_valid") == 1 {
            if get(defs, ins, "m_chk_ready") == 1 {
                seen[ci][get(defs, outs, "m_chk_status") as usize] += 1;
            } else {
                waited[ci] += 1;
            }
        }
        let taken =
            |ch: &str| get(defs, ins, &format!("{ch}_valid")) == 1 && get(defs, outs, &format!("{ch}_ready")) == 1;
        opens[ci] += u32::from(!rst_was && taken("s_open"));
        accepts[ci] += u32::from(!rst_was && taken("s_acc"));
        for (h, ch) in held.iter_mut().zip(["s_open", "s_acc", "s_chk"]) {
            *h =
                !rst_was && get(defs, ins, &format!("{ch}_valid")) == 1 && get(defs, outs, &format!("{ch}_ready")) == 0;
        }
        let rst = cycle == 0 || cycle == CYCLES / 2 || (cfg.name == "small" && r.below(4000) == 0);
        set(defs, ins, "rst", u64::from(rst));
        if !held[0] {
            set(defs, ins, "s_open_valid", u64::from(r.below(300) == 0));
            set(defs, ins, "s_open_conn", r.below(3));
        }
        // A stream the table has completed up to `cm`, near the wrap now
        // and then; msns from just behind it to past the window.
        let cm = |r: &mut Rng| if r.below(4) == 0 { 0xff_fffe } else { r.below(3) };
        let pkt = |ins: &mut Vec<mrnic_model::block::Bits>, ch: &str, r: &mut Rng, c: u64| {
            let f = |n: &str| format!("{ch}_{n}");
            set(defs, ins, &f("conn"), r.below(3));
            set(defs, ins, &f("stream"), if r.below(12) == 0 { streams + r.below(256 - streams) } else { r.below(2) });
            set(defs, ins, &f("msn"), (c + r.below(depth + 2)).wrapping_sub(1) & 0xff_ffff);
            set(defs, ins, &f("send"), r.below(2));
            set(defs, ins, &f("rq_seq"), 5 + r.below(2));
            set(defs, ins, &f("msg_len"), [0, 64, 100, 4096, 0xffff_ffff][r.below(5) as usize]);
            set(defs, ins, &f("imm_valid"), u64::from(r.below(3) == 0));
            set(defs, ins, &f("imm"), 1 + r.below(2));
            set(defs, ins, &f("len"), [0, 1, 32, 64, 100, mtu, mtu + 1][r.below(7) as usize]);
        };
        if !held[1] {
            set(defs, ins, "s_acc_valid", u64::from(r.below(4) == 0));
            let c = cm(r);
            pkt(ins, "s_acc", r, c);
        }
        if !held[2] {
            set(defs, ins, "s_chk_valid", u64::from(r.below(2) == 0));
            let c = cm(r);
            pkt(ins, "s_chk", r, c);
            set(defs, ins, "s_chk_msg_offset", [0, 32, 64, 4000, 0xffff_ffc0][r.below(5) as usize]);
            set(defs, ins, "s_chk_completed_msn", c);
        }
        set(defs, ins, "m_chk_ready", u64::from(r.below(10) < 6));
    });
    if have("iverilog", "-V") {
        let want = [status::OK, status::BAD_LEN, status::WINDOW, status::MISMATCH];
        for c in 0..2 {
            assert!(want.iter().all(|&s| seen[c][s as usize] >= 50), "answers by status: {seen:?}");
            assert!(
                waited[c] >= 100 && opens[c] >= 20 && accepts[c] >= 500,
                "{waited:?} waited, {opens:?} opens, {accepts:?} accepts"
            );
        }
    }
}
