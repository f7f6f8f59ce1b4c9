//! The generated `rx_ctl`: the model's ports plus `clk`, silent under
//! Verilator -Wall and Icarus -g2005, Yosys without latches, and an Icarus
//! replay of the model for `small` and `default`. The parts around the
//! controller are played by random answers: headers of every opcode (NO_CONN
//! NACKs, unknown opcodes, streams the connection lacks, payload or none),
//! opens of up to 9 paths, lookups that pass or fail with and without
//! conn_table's NACK, msg_check, mr_check and recv_match verdicts of every
//! kind, sack_gen's pulses, SACKs, NACKs and `m_new`, probe_walk's beats,
//! conn_search's NACKs, cpl_engine's published msns; random backpressure on
//! every output and resets mid-packet. Sources that pass through the
//! controller (`s_walk`, `s_gnack`, `s_found`, `s_gsack`) and the header
//! and open channels keep valid until taken, as the parts do.

mod common;
use common::*;

use mrnic_model::block::{Bits, PortDef};

const BLOCK: &str = "rx_ctl";
/// Cycles per config; each line of the replay is about 1 KB of hex.
const CYCLES: u32 = 25_000;

#[test]
fn ports_are_the_models_plus_clk() {
    ports_match_model(BLOCK);
}

#[test]
fn tools_accept_it() {
    standalone_tools_accept(BLOCK);
}

/// Sets `name` to random bits of its whole width.
fn set_wide(defs: &[PortDef], ins: &mut [Bits], name: &str, r: &mut Rng) {
    let i = defs.iter().position(|d| d.name == name).unwrap_or_else(|| panic!("no port {name}"));
    let w = defs[i].width;
    let mut b = Bits((0..w.div_ceil(64)).map(|_| r.next_u64()).collect());
    b.truncate(w);
    ins[i] = b;
}

/// What the replay saw the controller do, to show the run reached every
/// step (per config).
#[derive(Default, Debug)]
struct Seen {
    opens: u32,
    open_beats: u32,
    lookups: u32,
    no_conn: u32,
    acks: u32,
    probes: u32,
    walk_beats: u32,
    checks: u32,
    matches: u32,
    regions: u32,
    data_beats: u32,
    own_nacks: u32,
    placements: u32,
    flushes: u32,
    csacks: u32,
    cnack_passed: u32,
}

#[test]
fn icarus_replays_model_vectors() {
    // Channels a part drives into the controller that keep valid until
    // taken: (prefix, chance per cycle of a new entry in 1000).
    const HELD: [(&str, u64); 6] =
        [("s_hdr", 300), ("s_open", 8), ("s_walk", 60), ("s_gsack", 40), ("s_gnack", 15), ("s_found", 10)];
    let mut seen = [Seen::default(), Seen::default()];
    let ran = replay_configs(BLOCK, CYCLES, |cfg, cycle, r, defs, ins, outs| {
        let ci = usize::from(cfg.name == "default");
        let s = &mut seen[ci];
        let rst_was = cycle == 0 || get(defs, ins, "rst") == 1;
        let fired = |ch: &str| {
            !rst_was && get(defs, ins, &format!("{ch}_ready")) == 1 && get(defs, outs, &format!("{ch}_valid")) == 1
        };
        let taken = |ch: &str| {
            !rst_was && get(defs, ins, &format!("{ch}_valid")) == 1 && get(defs, outs, &format!("{ch}_ready")) == 1
        };
        // What the previous cycle's handshakes were.
        if fired("m_pkt") {
            match get(defs, outs, "m_pkt_op") {
                2 => s.open_beats += 1,
                3 => s.flushes += 1,
                1 => s.walk_beats += 1,
                _ => s.data_beats += 1,
            }
        }
        s.opens += u32::from(taken("s_open"));
        s.lookups += u32::from(fired("m_lk"));
        s.no_conn += u32::from(fired("m_nc"));
        s.acks += u32::from(fired("m_sack") || fired("m_nack"));
        s.probes += u32::from(fired("m_probe"));
        s.checks += u32::from(fired("m_chk"));
        s.matches += u32::from(fired("m_lookup"));
        s.regions += u32::from(fired("m_mr"));
        s.placements += u32::from(fired("m_req"));
        s.csacks += u32::from(fired("m_csack"));
        s.own_nacks +=
            u32::from(!rst_was && (get(defs, outs, "stat_rx_bad_hdr") == 1 || get(defs, outs, "stat_rx_access") == 1));
        s.cnack_passed += u32::from(taken("s_gnack") && fired("m_cnack"));

        let busy: Vec<bool> =
            HELD.iter().map(|(ch, _)| get(defs, ins, &format!("{ch}_valid")) == 1 && !taken(ch) && !rst_was).collect();
        let rst = cycle == 0 || r.below(5000) == 0;
        set(defs, ins, "rst", u64::from(rst));
        // Held sources: a new entry only once the last one was taken.
        for (k, (ch, chance)) in HELD.into_iter().enumerate() {
            if busy[k] {
                continue;
            }
            let on = r.below(1000) < chance;
            set(defs, ins, &format!("{ch}_valid"), u64::from(on));
            for d in defs.iter().filter(|d| {
                d.name.starts_with(&format!("{ch}_")) && !d.name.ends_with("_valid") && !d.name.ends_with("_ready")
            }) {
                set_wide(defs, ins, &d.name, r);
            }
            match ch {
                "s_hdr" => {
                    let op = [0, 0, 1, 2, 2, 3, 8, 9, 9, 10, 10, 6][r.below(12) as usize];
                    set(defs, ins, "s_hdr_opcode", op);
                    set(defs, ins, "s_hdr_payload_len", [0, 0, 1, 64, 1024, r.below(1 << 16)][r.below(6) as usize]);
                    set(defs, ins, "s_hdr_stream_id", if r.below(10) == 0 { r.below(256) } else { r.below(4) });
                    set(defs, ins, "s_hdr_path_id", if r.below(10) == 0 { r.below(256) } else { r.below(4) });
                    if op == 9 && r.below(3) == 0 {
                        // A NO_CONN NACK (code byte 3 of the NACK layout).
                        let i = defs.iter().position(|d| d.name == "s_hdr_raw").expect("raw");
                        let (hi, lo) = mrnic_proto::layouts::nack::CODE.vector_range((defs[i].width / 8) as usize);
                        for b in lo..=hi {
                            let bit = u64::from((3u64 >> (b - lo)) & 1 == 1);
                            let w = &mut ins[i].0[b / 64];
                            *w = (*w & !(1 << (b % 64))) | (bit << (b % 64));
                        }
                    }
                }
                "s_open" => set(defs, ins, "s_open_paths", r.below(10)),
                "s_walk" => set(defs, ins, "s_walk_op", 1),
                _ => {}
            }
        }
        // Answers: pulses, taken at once (the controller's ready is 1).
        let pulse = |ins: &mut Vec<Bits>, r: &mut Rng, ch: &str, chance: u64| {
            set(defs, ins, &format!("{ch}_valid"), u64::from(r.below(100) < chance));
            for d in defs.iter().filter(|d| d.name.starts_with(&format!("{ch}_")) && !d.name.ends_with("_valid")) {
                if d.dir == mrnic_model::block::Dir::In {
                    set_wide(defs, ins, &d.name, r);
                }
            }
        };
        pulse(ins, r, "s_lkr", 30);
        set(defs, ins, "s_lkr_ok", u64::from(r.below(5) != 0));
        set(defs, ins, "s_lkr_paths", r.below(6));
        pulse(ins, r, "s_tnack", 10);
        let code = [3, 4, 3][r.below(3) as usize];
        set(defs, ins, "s_tnack_code", code);
        pulse(ins, r, "s_chkr", 30);
        set(defs, ins, "s_chkr_status", if r.below(4) == 0 { 1 + r.below(3) } else { 0 });
        pulse(ins, r, "s_mrr", 30);
        set(defs, ins, "s_mrr_status", if r.below(4) == 0 { 1 + r.below(7) } else { 0 });
        pulse(ins, r, "s_match", 30);
        set(defs, ins, "s_match_code", if r.below(3) == 0 { 1 + r.below(7) } else { 0 });
        pulse(ins, r, "s_gnew", 15);
        for t in ["tap_stale_gen", "tap_psn_window", "tap_duplicate", "tap_ack_no_conn_table", "tap_ack_no_conn_search"]
        {
            set(defs, ins, t, u64::from(r.below(40) == 0));
        }
        set(defs, ins, "cpl_idle", u64::from(r.below(4) != 0));
        for n in ["valid", "ready", "clear"] {
            set(defs, ins, &format!("tap_st_{n}"), r.below(2));
        }
        set(defs, ins, "tap_st_conn", r.below(4));
        set(defs, ins, "tap_st_stream", r.below(4));
        set_wide(defs, ins, "tap_st_completed_msn", r);
        // Backpressure on every output channel.
        for d in defs.iter().filter(|d| d.name.starts_with("m_") && d.name.ends_with("_ready")) {
            set(defs, ins, &d.name, u64::from(r.below(4) != 0));
        }
    });
    if ran > 0 {
        for s in &seen {
            let all = [
                s.opens,
                s.open_beats,
                s.lookups,
                s.no_conn,
                s.acks,
                s.probes,
                s.walk_beats,
                s.checks,
                s.matches,
                s.regions,
                s.data_beats,
                s.own_nacks,
                s.placements,
                s.flushes,
                s.csacks,
                s.cnack_passed,
            ];
            assert!(all.iter().all(|&n| n >= 10), "a step the replay barely reached: {s:?}");
        }
        eprintln!("{seen:?}");
    }
}
