//! The generated `conn_search`: the model's ports plus `clk`, silent under
//! Verilator -Wall and Icarus -g2005, Yosys without latches, and an Icarus
//! replay of the model for `small` and `default`: a stand-in for
//! conn_table's read port (answers 2 or 3 cycles after each read, random
//! `ready`) over a table where the NACK's connection is at a random slot,
//! at none, or at two; NO_CONN NACKs during sweeps (dropped, counted),
//! backpressure on `m_nack`, resets mid-sweep.

use std::collections::VecDeque;

mod common;
use common::*;

const BLOCK: &str = "conn_search";

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
    // Reads in flight: (cycle it is answered, slot).
    let mut reads: VecDeque<(u32, u64)> = VecDeque::new();
    let (mut found, mut stats) = (0u32, 0u32);
    let mut target = (0u64, 0u64);
    replay_configs(BLOCK, 30_000, |cfg, cycle, r, defs, ins, outs| {
        let conns = u64::from(cfg.transport.connections);
        let rst_was = cycle == 0 || get(defs, ins, "rst") == 1;
        found += u32::from(get(defs, outs, "m_nack_valid") == 1 && get(defs, ins, "m_nack_ready") == 1);
        stats += get(defs, outs, "stat_ack_no_conn") as u32;
        if rst_was {
            reads.clear();
        } else if get(defs, outs, "m_rd_valid") == 1 && get(defs, ins, "m_rd_ready") == 1 {
            reads.push_back((cycle + 1 + r.below(2) as u32, get(defs, outs, "m_rd_conn")));
        }
        let rst = cycle == 0 || r.below(3000) == 0;
        set(defs, ins, "rst", u64::from(rst));
        // The table: the NACK's connection at `target.0` (and at
        // `target.1` too now and then), other slots open to other peers.
        let nc_valid = r.below(if conns > 64 { 2000 } else { 40 }) == 0;
        if nc_valid {
            target = (r.below(conns + conns / 4), r.below(conns * 8));
        }
        set(defs, ins, "s_nc_valid", u64::from(nc_valid));
        for (f, v) in [("dst_conn", 0xabcdef), ("src_addr", 0x0a00_0001), ("path_id", 3), ("code", 3), ("psn", 77)] {
            set(defs, ins, &format!("s_nc_{f}"), if nc_valid { v } else { r.next_u64() });
        }
        set(defs, ins, "m_rd_ready", u64::from(r.below(5) != 0));
        set(defs, ins, "m_nack_ready", u64::from(r.below(3) != 0));
        let due = reads.front().is_some_and(|&(at, _)| at <= cycle + 1) && !rst;
        set(defs, ins, "s_rdr_valid", u64::from(due));
        if due {
            let (_, slot) = reads.pop_front().unwrap();
            let ours = slot == target.0 || slot == target.1;
            set(defs, ins, "s_rdr_conn", slot);
            set(defs, ins, "s_rdr_entry_valid", u64::from(r.below(8) != 0));
            set(defs, ins, "s_rdr_remote_id", if ours { 0xabcdef } else { r.below(4) + 0xabcdee });
            set(defs, ins, "s_rdr_remote_addr", if ours || r.below(2) == 0 { 0x0a00_0001 } else { 0x0a00_0002 });
        }
    });
    if have("iverilog", "-V") {
        assert!(found >= 20 && stats >= 20, "{found} found, {stats} counted");
    }
}
