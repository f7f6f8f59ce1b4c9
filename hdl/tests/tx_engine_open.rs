//! The connection setup of `tx_engine` (`mrnic_hdl::tx_engine::open`, a
//! clocked unit of the engine's generator) against the cycle model,
//! trace-driven: the model `TxEngine` runs real traffic (`tx_rig`) with
//! its `taps.open` on. Every cycle records the `s_open` handshake, what
//! the rest of the engine lets the unit do (`s_free`, `s_live`), a take
//! with its reads, a live connection's flush, and `L` cycles after a take
//! what the reads answered and the writes the act made, then the ring
//! clear a slot a cycle; the rows put them there (the test checks the act
//! is `L` cycles after its take), and Icarus replays them into the
//! generated unit, every output compared every cycle, for `small` and
//! `default`.
//!
//! The traffic: fresh connections on one and several paths, records
//! arriving back to back and while the engine is busy, a live connection
//! reopened (flushed first, its streams past 0 restarting at their
//! tails), a failed one reopened, a path set up again after it went DEAD,
//! and records whose path count is out of range. Inputs the unit must not
//! look at carry junk (the reads outside their answer's cycle, the
//! record's fields without its valid, `s_live` with no record held).
//!
//! A missing tool skips the test with a message, except under CI=true,
//! where it fails.

mod common;
mod tx_rig;

use std::collections::HashMap;

use common::Scratch;
use mrnic_hdl::tx_engine::{open, stream_ptr_bits};
use mrnic_hdl::Module;
use mrnic_model::block::Bits;
use mrnic_model::path_telemetry as tel;
use mrnic_model::tx_engine::*;
use mrnic_proto::Config;
use tx_rig::{burst, replay_configs, tools_check_configs, Rows, Run, Traffic};

fn write(dir: &Scratch, p: &TxEngineParams) -> (Module, std::path::PathBuf) {
    let m = open::build(&TxEngineParams::from_config(&tuned(&p.cfg)).unwrap());
    let rtl = tx_rig::write_unit(dir, &m, "tx_engine connection setup", "tx_engine_open");
    (m, rtl)
}

/// `cfg` as the traffic runs it: short timers so quiet paths go DEAD
/// within a few thousand cycles, at most 16 connections.
fn tuned(cfg: &Config) -> Config {
    let mut cfg = tx_rig::short_timers(cfg, 10, 20);
    cfg.transport.connections = cfg.transport.connections.min(16);
    cfg
}

struct Rig {
    t: Traffic,
    rows: Rows,
    seen: HashMap<&'static str, u32>,
    /// The pending take: its row and record.
    take: Option<(usize, Open)>,
}

impl Rig {
    fn new(cfg: &Config, seed: u64) -> Rig {
        let cfg = tuned(cfg);
        let mut t = Traffic::new(cfg, seed);
        t.e.tx.taps.open = Some(OpenTap::default());
        let mut rows = Rows::new(open::ports(t.e.tx.params()));
        rows.put(0, "rst", 1);
        Rig { t, rows, seen: HashMap::new(), take: None }
    }

    fn count(&mut self, what: &'static str) {
        *self.seen.entry(what).or_default() += 1;
    }

    fn run(&mut self, cycles: u64) {
        for _ in 0..cycles {
            let (inp, ot) = self.t.clock();
            let tap = self.t.e.tx.taps.open.clone().expect("the tap is on");
            self.row(&inp, &ot, &tap);
        }
    }

    /// Runs until every record queued has been set up.
    fn settle(&mut self) {
        self.run(1);
        while self.t.e.opening() {
            self.run(1);
        }
    }

    fn rec_ports(&mut self, at: usize, o: &Open) {
        let f = [
            ("s_open_conn", u64::from(o.conn)),
            ("s_open_path", u64::from(o.path)),
            ("s_open_npaths", u64::from(o.npaths)),
            ("s_open_remote_id", u64::from(o.remote_id)),
            ("s_open_dst_mac", o.dst_mac),
            ("s_open_dst_ip", u64::from(o.dst_ip)),
            ("s_open_sport", u64::from(o.sport)),
            ("s_open_plane", u64::from(o.plane)),
            ("s_open_psn", u64::from(o.psn)),
        ];
        for (n, v) in f {
            self.rows.put(at, n, v);
        }
    }

    fn row(&mut self, inp: &Inputs, ot: &Outputs, t: &OpenTap) {
        let at = self.rows.len();
        let p = self.t.e.tx.params().clone();
        let (l, qb) = (p.read_latency as usize, stream_ptr_bits(p.wq_depth));
        self.rows.put(at, "rst", 0);
        self.rows.put(at, "en", 1);
        self.rows.put(at, "s_open_ready", u64::from(ot.open_ready));
        match &inp.open {
            Some(o) => {
                self.rows.put(at, "s_open_valid", 1);
                self.rec_ports(at, o);
                if !ot.open_ready {
                    self.count("rec_waits_for_register");
                }
            }
            None => self.rows.put(at, "s_open_valid", 0),
        }
        self.rows.put(at, "s_free", u64::from(t.free));
        if let Some((conn, live)) = t.live {
            self.rows.put(at, "s_live", u64::from(live));
            self.rows.put(at, "m_live_conn", u64::from(conn));
            if !t.free && !t.running {
                self.count("held_not_free");
            }
        }
        for (n, v) in [("m_running", t.running), ("m_wr_hold", t.wr_hold), ("m_busy", t.running || t.take.is_some())] {
            self.rows.put(at, n, u64::from(v));
        }
        if let Some(c) = t.flush {
            self.count("flush_live");
            for (n, v) in [("m_fail_valid", 1), ("m_fail_conn", c), ("m_fail_status", u32::from(status::WR_FLUSH))] {
                self.rows.put(at, n, u64::from(v));
            }
        }
        if let Some(o) = t.take {
            assert!(self.take.is_none(), "one setup at a time");
            self.take = Some((at, o));
            self.rows.put(at, "m_rd_valid", 1);
            self.rows.put(at, "m_rd_conn", u64::from(o.conn));
            self.count("take");
            assert!(!t.running, "a take while a setup runs");
        }
        if let Some((c, path, slot)) = t.clear {
            for (n, v) in
                [("m_ring_clr_valid", 1), ("m_ring_clr_conn", c), ("m_ring_clr_path", path), ("m_ring_clr_slot", slot)]
            {
                self.rows.put(at, n, u64::from(v));
            }
        }
        let Some(a) = &t.act else { return };
        let (row, o) = self.take.take().expect("an act after its take");
        assert_eq!(at, row + l, "the setup acts L cycles after its take");
        assert_eq!(a.rec, o, "the act is the taken record's");
        let mut tails = Bits::zero(p.streams * qb);
        tails.set_packed(p.streams * qb, a.tails.iter().map(|&t| (u64::from(t), qb)));
        self.rows.put_bits(at, "s_rd_tails", tails.clone());
        self.rows.put(at, "s_rd_dead", u64::from(a.dead));
        let k = tel::Consts::from_config(&self.t.e.cfg);
        let cc = open_cc(&p, &k);
        let (srtt, rttvar, min_rtt) = open_rtt(&k);
        let c = u64::from(o.conn);
        if o.path == 0 {
            self.count("fresh");
            if a.tails.iter().any(|&t| t != 0) {
                self.count("tails_past_0");
            }
            if !(1..=p.paths).contains(&o.npaths) {
                self.count("npaths_clamped");
            }
            for (n, v) in [
                ("m_ctx_valid", 1),
                ("m_ctx_conn", c),
                ("m_ctx_remote_id", u64::from(o.remote_id)),
                ("m_ctx_npaths", u64::from(o.npaths.clamp(1, p.paths))),
                ("m_ctx_cwnd", u64::from(cc.cwnd)),
                ("m_ctx_srtt", u64::from(cc.srtt)),
                ("m_ctx_min_rtt", u64::from(cc.min_rtt)),
                ("m_ctx_rate_hint", u64::from(cc.rate_hint)),
                ("m_ctx_cap", u64::from(cc.cap)),
                ("m_addr_valid", 1),
                ("m_addr_conn", c),
                ("m_addr_dst_mac", o.dst_mac),
                ("m_addr_dst_ip", u64::from(o.dst_ip)),
                ("m_sw_valid", 1),
                ("m_sw_conn", c),
            ] {
                self.rows.put(at, n, v);
            }
            self.rows.put_bits(at, "m_sw_tails", tails);
        } else {
            self.count("path_past_0");
            if a.dead & (1 << o.path) != 0 {
                self.count("dead_path_reopened");
            }
        }
        let dead = if o.path == 0 { 0 } else { a.dead & !(1 << o.path) };
        for (n, v) in [
            ("m_ctx_dead_valid", 1),
            ("m_ctx_dead_conn", c),
            ("m_ctx_dead", u64::from(dead)),
            ("m_pm_valid", 1),
            ("m_pm_conn", c),
            ("m_pm_path", u64::from(o.path)),
            ("m_pm_sport", u64::from(o.sport)),
            ("m_pm_plane", u64::from(o.plane)),
            ("m_pm_psn", u64::from(o.psn)),
            ("m_pm_srtt", u64::from(srtt)),
            ("m_pm_rttvar", u64::from(rttvar)),
            ("m_pm_min_rtt", u64::from(min_rtt)),
            ("m_evt_valid", 1),
            ("m_evt_kind", u64::from(tel::kind::OPEN)),
            ("m_evt_conn", c),
            ("m_evt_path", u64::from(o.path)),
            ("m_evt_cum_acked", u64::from(o.psn)),
            ("m_evt_sport", u64::from(o.sport)),
            ("m_evt_plane", u64::from(o.plane)),
            ("m_hold_open", 1),
        ] {
            self.rows.put(at, n, v);
        }
        if t.live.is_some() {
            self.count("next_held_at_act");
        }
    }

    fn finish(mut self) -> Run {
        assert!(self.take.is_none(), "every take acted");
        let mut bins: Vec<_> = self.seen.iter().map(|(k, v)| format!("{k} {v}")).collect();
        bins.sort();
        eprintln!("{} tx_open: {} cycles; {}", self.t.e.cfg.name, self.rows.len(), bins.join(", "));
        self.rows.finish(&mut self.t.e.junk, &["rst", "s_open_valid"], self.seen)
    }
}

fn record(conn: u32, path: u32, npaths: u32, psn: u32) -> Open {
    Open {
        conn,
        path,
        npaths,
        remote_id: 0x40_0000 | conn,
        dst_mac: 0x02_00_00_00_20_00 | u64::from(conn),
        dst_ip: 0x0a00_2000 | conn,
        sport: 50_000 + 7 * path as u16 + conn as u16,
        plane: path as u8,
        psn,
    }
}

/// See the module doc.
fn traffic(cfg: &Config, seed: u64) -> Run {
    let mut rig = Rig::new(cfg, seed);
    let paths = rig.t.e.cfg.transport.paths_per_conn;
    let planes = rig.t.e.cfg.transport.planes;
    let streams = rig.t.e.cfg.transport.streams_per_conn.min(4);
    let rto = u64::from(tel::Consts::from_config(&rig.t.e.cfg).rto_min) * rig.t.e.cfg.cycles_per_ts();
    // Fresh connections, records back to back (the next one waits in the
    // register while one runs).
    for c in 1..=4 {
        rig.t.peer.open(&mut rig.t.e, c, if c == 1 { 1 } else { 4.min(paths) }, 10 * c);
    }
    rig.settle();
    // Traffic on them, and records arriving while the engine is busy.
    let mut off = 0;
    rig.t.e.press = tx_rig::Pressure { axis: 10, ar: 10, r_gap: 10, cqe: 10 };
    for c in 1..=4 {
        burst(&mut rig.t.e, c, streams, 2, u64::from(100 * c), &mut off);
    }
    rig.run(200);
    rig.t.peer.open(&mut rig.t.e, 5, 2.min(paths), 50);
    rig.run(3_000);
    // Connection 2 reopened while live: flushed first, its streams past 0.
    rig.t.peer.open(&mut rig.t.e, 2, 2.min(paths), 900);
    rig.settle();
    rig.run(500);
    // Connection 3's peer goes quiet: its paths go DEAD and it fails;
    // then path 1 alone is set up again (its DEAD bit read and cleared),
    // then the failed connection is reopened (no flush).
    rig.t.peer.mute.insert(3);
    burst(&mut rig.t.e, 3, streams, 1, 3_000, &mut off);
    rig.run(10 * rto);
    rig.t.e.opens.push_back(Open { plane: (1 % planes) as u8, ..record(3, 1.min(paths - 1), 4.min(paths), 77) });
    rig.settle();
    rig.t.peer.mute.remove(&3);
    rig.t.peer.open(&mut rig.t.e, 3, 4.min(paths), 3_000);
    rig.settle();
    // Path counts out of range: clamped to 1..=PATHS.
    rig.t.e.opens.push_back(record(6, 0, 0, 5));
    rig.t.e.opens.push_back(Open { plane: 0, ..record(7, 0, paths + 3, 6) });
    rig.settle();
    rig.t.e.press = tx_rig::Pressure::default();
    for c in [1, 5] {
        burst(&mut rig.t.e, c, streams, 1, 5_000 + u64::from(c), &mut off);
    }
    rig.run(2_000);
    rig.finish()
}

fn replay_config(cfg: &Config) -> Run {
    traffic(cfg, 0x09e4)
}

/// The model's connection setup and `tx_open`, cycle by cycle, both
/// configs: every output equal every cycle, the act `L` cycles after its
/// take, and the cases of the module doc reached.
#[test]
fn icarus_connection_setup_is_the_models() {
    replay_configs(
        "tx-open",
        open::NAME,
        write,
        replay_config,
        &[
            "take",
            "fresh",
            "path_past_0",
            "flush_live",
            "tails_past_0",
            "dead_path_reopened",
            "npaths_clamped",
            "held_not_free",
            "rec_waits_for_register",
            "next_held_at_act",
        ],
    );
}

/// Verilator `-Wall` with no waivers and `iverilog -g2005 -Wall` silent,
/// for both configs; Yosys: no latch after `proc` and `check -assert`.
#[test]
fn tools_accept_the_connection_setup() {
    tools_check_configs("tx-open", write);
}
