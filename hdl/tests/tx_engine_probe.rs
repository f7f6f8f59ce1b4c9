//! The scheduler's PROBE send of `tx_engine`
//! (`mrnic_hdl::tx_engine::probe`, a clocked unit of the engine's
//! generator) against the cycle model, trace-driven: the model `TxEngine`
//! runs real traffic (`tx_rig`) with its `taps.probe` on. Each start that
//! chooses a PROBE records its connection and time, and `L` cycles later
//! what the reads answered and the PROBE sent; the rows put them there
//! (the test checks the answer is `L` cycles after the start, and that
//! the header is the one the model placed byte for byte), and Icarus
//! replays them into the generated unit, every output compared every
//! cycle, for `small` and `default`.
//!
//! The traffic: connections whose peer goes quiet, so their paths time
//! out and are PROBEd (several paths of one connection queued at once,
//! paths other than 0, every plane), DEAD paths PROBEd again, and streams
//! blocked by the peer's message table, so window probes fire. Inputs the
//! unit must not look at carry junk (the reads outside their answer's
//! cycle, `ts_now` outside a start).
//!
//! A missing tool skips the test with a message, except under CI=true,
//! where it fails.

mod common;
mod tx_rig;

use std::collections::HashMap;

use common::Scratch;
use mrnic_hdl::tx_engine::{output, probe};
use mrnic_hdl::Module;
use mrnic_model::path_telemetry as tel;
use mrnic_model::tx_engine::*;
use mrnic_proto::Config;
use tx_rig::{be_bits, burst, replay_configs, tools_check_configs, Rows, Run, Traffic};

fn write(dir: &Scratch, p: &TxEngineParams) -> (Module, std::path::PathBuf) {
    let m = probe::build(&TxEngineParams::from_config(&tuned(&p.cfg)).unwrap());
    let rtl = tx_rig::write_unit(dir, &m, "tx_engine PROBE send", "tx_engine_probe");
    (m, rtl)
}

/// `cfg` as the traffic runs it: short timers so paths time out and are
/// PROBEd within a few thousand cycles, a message table of two messages
/// so streams block soon, at most 16 connections.
fn tuned(cfg: &Config) -> Config {
    let mut cfg = tx_rig::short_timers(cfg, 10, 20);
    cfg.hardware.tx_ring_depth = 4;
    cfg.hardware.msg_table_depth = 2;
    cfg.transport.connections = cfg.transport.connections.min(16);
    cfg
}

struct Rig {
    t: Traffic,
    rows: Rows,
    seen: HashMap<&'static str, u32>,
    /// The pending start: its row and (conn, ts).
    start: Option<(usize, u32, u32)>,
}

impl Rig {
    fn new(cfg: &Config, seed: u64) -> Rig {
        let cfg = tuned(cfg);
        let mut t = Traffic::new(cfg, seed);
        t.e.tx.taps.probe = Some(ProbeTap::default());
        let mut rows = Rows::new(probe::ports(t.e.tx.params()));
        rows.put(0, "rst", 1);
        Rig { t, rows, seen: HashMap::new(), start: None }
    }

    fn count(&mut self, what: &'static str) {
        *self.seen.entry(what).or_default() += 1;
    }

    fn run(&mut self, cycles: u64) {
        for _ in 0..cycles {
            self.t.clock();
            let tap = self.t.e.tx.taps.probe.clone().expect("the tap is on");
            self.row(&tap);
        }
    }

    fn row(&mut self, t: &ProbeTap) {
        let at = self.rows.len();
        let l = self.t.e.tx.params().read_latency as usize;
        self.rows.put(at, "rst", 0);
        if let Some((c, ts)) = t.start {
            assert!(self.start.is_none(), "one PROBE send at a time");
            self.start = Some((at, c, ts));
            for (n, v) in
                [("s_probe_valid", 1), ("s_probe_conn", c), ("ts_now", ts), ("m_rd_valid", 1), ("m_rd_conn", c)]
            {
                self.rows.put(at, n, u64::from(v));
            }
        }
        if self.start.is_some() {
            self.rows.put(at, "m_busy", 1);
        }
        let Some(s) = &t.sent else { return };
        let (row, c, ts) = self.start.take().expect("a PROBE leaves after its start");
        assert_eq!(at, row + l, "the PROBE leaves L cycles after its start");
        assert_eq!((s.conn, s.ts), (c, ts), "the start's connection and time");
        let want = probe_header(s.remote_id, s.path, s.gen, s.next_psn, ts as u16);
        assert_eq!(s.hdr, want, "the model's PROBE header from what it read");
        let w = |n: &'static str, v: u64| (n, v);
        for (n, v) in [
            w("s_rd_path", u64::from(s.path)),
            w("s_rd_remote_id", u64::from(s.remote_id)),
            w("s_rd_dst_mac", s.dst_mac),
            w("s_rd_dst_ip", u64::from(s.dst_ip)),
            w("s_pm_gen", u64::from(s.gen)),
            w("s_pm_next_psn", u64::from(s.next_psn)),
            w("s_pm_tx_seq", u64::from(s.tx_seq)),
            w("s_pm_sport", u64::from(s.sport)),
            w("s_pm_plane", u64::from(s.plane)),
            w("m_pq_valid", 1),
            w("m_pq_conn", u64::from(c)),
            w("m_pq_path", u64::from(s.path)),
            w("m_pm_valid", 1),
            w("m_pm_conn", u64::from(c)),
            w("m_pm_path", u64::from(s.path)),
            w("m_pm_probe_ts", u64::from(ts as u16)),
            w("m_pm_probe_seq", u64::from(s.tx_seq)),
            w("m_pm_tx_seq", u64::from(s.tx_seq.wrapping_add(1))),
            w("m_frame_valid", 1),
            w("m_frame_dst_mac", s.dst_mac),
            w("m_frame_dst_ip", u64::from(s.dst_ip)),
            w("m_frame_sport", u64::from(s.sport)),
            w("m_frame_plane", u64::from(s.plane)),
            w("m_frame_conn", u64::from(c)),
            w("m_evt_valid", 1),
            w("m_evt_kind", u64::from(tel::kind::PROBE_SENT)),
            w("m_evt_conn", u64::from(c)),
            w("m_evt_path", u64::from(s.path)),
            w("m_evt_now", u64::from(ts)),
            w("m_stat_tx_probe", 1),
        ] {
            self.rows.put(at, n, v);
        }
        self.rows.put_bits(at, "m_frame_hdr", be_bits(output::FRAME_HDR_BITS, &s.hdr));
        self.count("probe_sent");
        if s.path > 0 {
            self.count("path_past_0");
        }
        if s.plane > 0 {
            self.count("plane_past_0");
        }
        if s.tx_seq == u32::MAX {
            self.count("tx_seq_wraps");
        }
        let k = &self.t.e.tx;
        if k.probes_queued(c) > 0 {
            self.count("more_queued");
        }
    }

    fn finish(mut self) -> Run {
        let mut bins: Vec<_> = self.seen.iter().map(|(k, v)| format!("{k} {v}")).collect();
        bins.sort();
        eprintln!("{} tx_probe: {} cycles; {}", self.t.e.cfg.name, self.rows.len(), bins.join(", "));
        self.rows.finish(&mut self.t.e.junk, &["rst", "s_probe_valid"], self.seen)
    }
}

/// Connections 1..=4 on four paths, their peer quiet after a burst each:
/// the paths time out, are PROBEd, and DEAD paths PROBEd again; then the
/// peer answers again. Connections 5..=8 on two paths with the peer
/// naming no stream, so their streams block and window probes fire.
fn traffic(cfg: &Config, seed: u64) -> Run {
    let mut rig = Rig::new(cfg, seed);
    let paths = rig.t.e.cfg.transport.paths_per_conn;
    let streams = rig.t.e.cfg.transport.streams_per_conn.min(4);
    let rto = u64::from(tel::Consts::from_config(&rig.t.e.cfg).rto_min) * rig.t.e.cfg.cycles_per_ts();
    for c in 1..=8 {
        let np = if c <= 4 { 4.min(paths) } else { 2.min(paths) };
        rig.t.peer.open(&mut rig.t.e, c, np, 10 * c);
    }
    rig.run(300);
    rig.t.peer.mute.extend(1..=4);
    let mut off = 0;
    for c in 1..=4 {
        burst(&mut rig.t.e, c, streams, 2, u64::from(100 * c), &mut off);
    }
    rig.t.peer.window = false;
    for c in 5..=8 {
        for k in 0..3u64 {
            rig.t.e.wrs.push_back(tx_rig::wr(c, 0, op::WRITE, 1_000 * u64::from(c) + k, off % 0x2_0000, 64));
            off += 128;
        }
    }
    rig.run(8 * rto);
    for c in 1..=4 {
        rig.t.peer.mute.remove(&c);
    }
    rig.run(4 * rto);
    rig.finish()
}

fn replay_config(cfg: &Config) -> Run {
    traffic(cfg, 0x9e0b)
}

/// The model's PROBE send and `tx_probe`, cycle by cycle, both configs:
/// every output equal every cycle, the PROBE `L` cycles after its start
/// with the model's header, and PROBEs on paths and planes past 0 and
/// behind others queued.
#[test]
fn icarus_probe_send_is_the_models() {
    replay_configs(
        "tx-probe",
        probe::NAME,
        write,
        replay_config,
        &["probe_sent", "path_past_0", "plane_past_0", "more_queued"],
    );
}

/// Verilator `-Wall` with no waivers and `iverilog -g2005 -Wall` silent,
/// for both configs; Yosys: no latch after `proc` and `check -assert`.
#[test]
fn tools_accept_the_probe_send() {
    tools_check_configs("tx-probe", write);
}
