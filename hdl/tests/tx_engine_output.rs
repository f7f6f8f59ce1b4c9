//! The output stage of `tx_engine` (`mrnic_hdl::tx_engine::output`, the
//! first clocked unit of the engine's generator) against the cycle model,
//! trace-driven: the model `TxEngine` runs real traffic, wired as its
//! tests wire it (path_telemetry, path_selector, a host memory with
//! random AR readiness, R gaps and a read error, random `m_axis`
//! backpressure, answers from sack_gen incl. a direct NACK), with its
//! `taps.output` on. Each cycle records what entered the output stage (the
//! frames and answers pushed, the walk's and the head connection's levels)
//! and what the model showed on the unit's ports (AR, R ready, `m_axis`,
//! the failed read reported, the queues' occupancy); Icarus replays the
//! inputs into the generated unit and compares every output every cycle,
//! for `small` and `default`. Inputs the unit must not look at (a frame's
//! fields without `s_frame_valid`, the addresses table's answer before its
//! cycle, an answer offered to a full queue) carry junk. The unit also
//! lints clean under Verilator `-Wall`, compiles under `iverilog -g2005`
//! and has no latch under Yosys.
//!
//! A missing tool skips the test with a message, except under CI=true,
//! where it fails.

mod common;
mod tx_rig;

use std::collections::HashMap;

use common::{synth_full, Scratch};
use mrnic_hdl::tx_engine::output;
use mrnic_hdl::Module;
use mrnic_model::block::{port_index, Bits, PortDef};
use mrnic_model::tx_engine::*;
use mrnic_proto::Config;
use tx_rig::{
    be_bits, junk, le_bits, replay_configs, synth_report, tools_check, wr, write_unit, Engine, Pressure, Run, BAD,
    MEM_BASE,
};

fn write(dir: &Scratch, p: &TxEngineParams) -> (Module, std::path::PathBuf) {
    let m = output::build(p);
    let rtl = write_unit(dir, &m, "tx_engine output stage", "tx_engine_output");
    (m, rtl)
}

/// The model engine wired as its own tests wire it, recording the output
/// stage's ports each cycle.
struct Rig {
    e: Engine,
    record: bool,
    /// The unit's ports and, per cycle, every port's value.
    defs: Vec<PortDef>,
    rows: Vec<Vec<Bits>>,
    /// Answers pushed, by the cycle their addresses are due on `s_ans_rd_*`.
    rd_due: HashMap<u64, (u64, u32)>,
    /// What the run covered, for the coverage check.
    seen: HashMap<&'static str, u32>,
}

impl Rig {
    fn new(cfg: Config, seed: u64) -> Rig {
        let p = TxEngineParams::from_config(&cfg).unwrap();
        let defs = output::ports(&p);
        let mut e = Engine::new(cfg, seed);
        e.tx.taps.output = Some(OutputTap::default());
        let mut r = Rig { e, record: true, defs, rows: Vec::new(), rd_due: HashMap::new(), seen: HashMap::new() };
        // A reset cycle recorded, then the clear sweep, during which the
        // unit is idle (no frame, no answer, R not ready), not replayed:
        // `default`'s sweep is millions of cycles.
        r.step(true);
        r.record = false;
        while r.e.initializing() {
            r.step(false);
        }
        r.record = true;
        r
    }

    fn step(&mut self, rst: bool) {
        let en = !self.e.tx.initializing();
        let (inp, ot) = self.e.clock(rst);
        if self.record {
            let tap = self.e.tx.taps.output.clone().expect("the tap is on");
            self.row(&inp, en, &ot, &tap);
        }
    }

    /// The unit's ports this cycle: the inputs the model's output stage
    /// took, and what the model showed on the unit's outputs.
    fn row(&mut self, inp: &Inputs, en: bool, ot: &Outputs, tap: &OutputTap) {
        let p = self.e.tx.params().clone();
        let defs = self.defs.clone();
        let mut v: Vec<Bits> = defs.iter().map(|d| Bits::zero(d.width)).collect();
        let at = |n: &str| port_index(&defs, n).unwrap_or_else(|| panic!("no port {n}"));
        let mut put = |n: &str, b: Bits| {
            let i = at(n);
            v[i].set_words(defs[i].width, &b.0);
        };
        let u = |n: &str, x: u64| (n.to_string(), Bits::from_u64(64, x));
        let spb = mrnic_hdl::tx_engine::stream_ptr_bits(p.wq_depth);
        let slot_mask = (1u64 << spb) - 1;
        let mut ins = vec![
            u("rst", u64::from(inp.rst)),
            u("en", u64::from(en)),
            u("cfg_src_mac", inp.src_mac),
            u("cfg_src_ip", u64::from(inp.src_ip)),
            u("cfg_udp_port", u64::from(inp.udp_port)),
            u("walk_busy", u64::from(tap.walk_busy)),
            u("fail_conn_failed", u64::from(tap.head_failed)),
            u("m_axi_arready", u64::from(inp.ar_ready)),
            u("m_axis_tready", u64::from(inp.axis_ready)),
        ];
        match &tap.frame {
            Some(f) => {
                // The push rule the unit's formal properties assume
                // (`asm_s_frame_room`, `asm_s_frame_data_room`): the
                // scheduler pushed with room shown on m_frames this cycle.
                let probe = f.hdr.len() == 16;
                let room = if probe { output::QUEUE as usize } else { FRAME_QUEUE };
                assert!(tap.frames < room, "cycle {}: a push with m_frames = {}", self.e.cycle, tap.frames);
                if tap.frames >= FRAME_QUEUE {
                    *self.seen.entry("probe_past_data_room").or_default() += 1;
                }
                *self.seen.entry(if probe { "probe" } else { "data" }).or_default() += 1;
                if f.len == 0 && f.hdr.len() != 16 {
                    *self.seen.entry("data_0").or_default() += 1;
                }
                let (stream, slot) = f.wr.unwrap_or_default();
                ins.extend([
                    u("s_frame_valid", 1),
                    u("s_frame_probe", u64::from(f.hdr.len() == 16)),
                    u("s_frame_addr", f.addr),
                    u("s_frame_len", u64::from(f.len)),
                    u("s_frame_dst_mac", f.dst_mac),
                    u("s_frame_dst_ip", u64::from(f.dst_ip)),
                    u("s_frame_sport", u64::from(f.sport)),
                    u("s_frame_plane", u64::from(f.plane)),
                    u("s_frame_conn", u64::from(f.conn)),
                    u("s_frame_stream", u64::from(stream)),
                    u("s_frame_slot", u64::from(slot) & slot_mask),
                ]);
                ins.push(("s_frame_hdr".into(), be_bits(output::FRAME_HDR_BITS, &f.hdr)));
            }
            None => {
                // Junk in every field but the wide header (its CRC
                // equations would make every cycle slow to simulate).
                for n in [
                    "s_frame_probe",
                    "s_frame_addr",
                    "s_frame_len",
                    "s_frame_dst_mac",
                    "s_frame_dst_ip",
                    "s_frame_sport",
                    "s_frame_plane",
                    "s_frame_conn",
                    "s_frame_stream",
                    "s_frame_slot",
                ] {
                    let b = junk(&mut self.e.junk, 64);
                    ins.push((n.to_string(), b));
                }
            }
        }
        match &tap.answer {
            Some(a) => {
                let nack = a.hdr.len() != mrnic_proto::layouts::sack::LAYOUT.len;
                *self
                    .seen
                    .entry(if a.direct {
                        "direct"
                    } else if nack {
                        "nack"
                    } else {
                        "sack"
                    })
                    .or_default() += 1;
                ins.extend([
                    u("s_ans_valid", 1),
                    u("s_ans_nack", u64::from(nack)),
                    u("s_ans_sport", u64::from(a.sport)),
                    u("s_ans_plane", u64::from(a.plane)),
                    u("s_ans_direct", u64::from(a.direct)),
                ]);
                ins.push(("s_ans_hdr".into(), be_bits(output::ANS_HDR_BITS, &a.hdr)));
                if a.direct {
                    ins.extend([u("s_ans_dst_mac", a.to.0), u("s_ans_dst_ip", u64::from(a.to.1))]);
                } else {
                    self.rd_due.insert(self.e.cycle + u64::from(p.read_latency), a.to);
                    ins.extend([u("s_ans_dst_mac", self.e.junk.next_u64()), u("s_ans_dst_ip", self.e.junk.next_u64())]);
                }
            }
            None => {
                // Offered to a full queue now and then: the unit must refuse.
                let offer = tap.answers >= 2 && self.e.junk.below(2) == 0;
                ins.extend([
                    u("s_ans_valid", u64::from(offer)),
                    u("s_ans_nack", self.e.junk.below(2)),
                    u("s_ans_sport", self.e.junk.next_u64()),
                    u("s_ans_direct", self.e.junk.below(2)),
                    u("s_ans_dst_mac", self.e.junk.next_u64()),
                ]);
            }
        }
        // A connection asked about: one with a frame queued half the time.
        let conns = u64::from(p.conns);
        let q = match tap.conns.len() {
            n if n > 0 && self.e.junk.below(2) == 0 => u64::from(tap.conns[self.e.junk.below(n as u64) as usize]),
            _ => self.e.junk.below(conns),
        } as u32;
        let queued = tap.conns.contains(&q) || tap.frame.as_ref().is_some_and(|f| f.conn == q);
        *self.seen.entry(if queued { "qry_queued" } else { "qry_not_queued" }).or_default() += 1;
        ins.push(u("s_qry_conn", u64::from(q)));
        match self.rd_due.remove(&self.e.cycle) {
            Some((mac, ip)) => ins.extend([u("s_ans_rd_mac", mac), u("s_ans_rd_ip", u64::from(ip))]),
            None => ins.extend([u("s_ans_rd_mac", self.e.junk.next_u64()), u("s_ans_rd_ip", self.e.junk.next_u64())]),
        }
        match &inp.r {
            Some(b) => {
                *self.seen.entry(if b.resp != 0 { "r_err" } else { "r" }).or_default() += 1;
                ins.extend([u("m_axi_rvalid", 1), u("m_axi_rresp", u64::from(b.resp))]);
                ins.push(("m_axi_rdata".into(), le_bits(p.data_bits, &b.data)));
            }
            None => ins.extend([u("m_axi_rvalid", 0), u("m_axi_rresp", self.e.junk.below(4))]),
        }
        // Outputs.
        let ar = ot.ar.unwrap_or_default();
        let (hconn, hwr) = tap.head.map(|(c, w)| (c, w.unwrap_or_default())).unwrap_or_default();
        if let Some((c, w)) = tap.fail {
            *self.seen.entry("fail").or_default() += 1;
            assert_eq!((c, w.unwrap_or_default()), (hconn, hwr), "a failure is the head frame's");
        }
        if tap.head.is_some() && tap.head_failed {
            *self.seen.entry("head_failed").or_default() += 1;
        }
        if tap.head.is_some_and(|(c, _)| c == 3 || c == 6) && tap.walk_busy && !tap.head_failed {
            *self.seen.entry("walk_busy").or_default() += 1;
        }
        let mut outs = vec![
            u("m_frames", tap.frames as u64),
            u("s_ans_ready", u64::from(tap.answers < 2)),
            u("m_fail_valid", u64::from(tap.fail.is_some())),
            u("m_fail_conn", u64::from(hconn)),
            u("m_fail_stream", u64::from(hwr.0)),
            u("m_fail_slot", u64::from(hwr.1) & slot_mask),
            u("m_axi_arid", 0),
            u("m_axi_araddr", ar.addr),
            u("m_axi_arlen", u64::from(ar.len)),
            u("m_axi_arsize", u64::from(ar.size)),
            u("m_axi_arburst", u64::from(ot.ar.is_some())),
            u("m_axi_arvalid", u64::from(ot.ar.is_some())),
            u("m_axi_rready", u64::from(ot.r_ready)),
            u("m_stat_tx_answer", u64::from(tap.answer_started)),
            u("m_qry_queued", u64::from(queued)),
        ];
        match &ot.axis {
            Some(b) => {
                if !inp.axis_ready {
                    *self.seen.entry("axis_held").or_default() += 1;
                }
                let keep = if b.keep >= 64 { u64::MAX } else { (1u64 << b.keep) - 1 };
                outs.extend([
                    u("m_axis_tvalid", 1),
                    u("m_axis_tlast", u64::from(b.last)),
                    u("m_axis_tuser", u64::from(b.plane)),
                    u("m_axis_tkeep", keep),
                ]);
                outs.push(("m_axis_tdata".into(), le_bits(p.data_bits, &b.data)));
            }
            None => outs.extend([u("m_axis_tvalid", 0)]),
        }
        for (n, b) in ins.into_iter().chain(outs) {
            put(&n, b);
        }
        self.rows.push(v);
    }

    fn run(&mut self, cycles: u64) {
        for _ in 0..cycles {
            self.step(false);
        }
    }
}

fn sack(conn: u32, k: u32) -> SackOut {
    SackOut {
        conn,
        path_id: k % 4,
        dst_conn: 0x77_0000 | k,
        path_gen: k as u8,
        cum_psn: 0x12_3400 + k,
        stream_id: k % 4,
        completed_msn: 0x100 + k,
        echo_ts: 0xbe00 | k as u16,
        ecn_cnt: k as u8,
        rate_hint: 0x8000 | k as u16,
        bitmap: [0xf0f0_0000_1234_0001 ^ u64::from(k), 7, 0, 1 << 63],
        sport: 50000 + k as u16,
        plane: (k % 4) as u8,
    }
}

fn nack(conn: u32, k: u32, direct: bool) -> NackOut {
    NackOut {
        conn,
        path_id: k % 4,
        dst_conn: 0x66_0000 | k,
        path_gen: k as u8,
        code: 1 + (k % 3) as u8,
        psn: 99 + k,
        stream_id: k % 4,
        msn: 5 + k,
        echo_ts: 0x1200 | k as u16,
        sport: 51000 + k as u16,
        plane: (k % 4) as u8,
        direct,
        dst_ip: 0xc0a8_0000 | k,
        dst_mac: 0x0a_0b_0c_0d_0e_00 | u64::from(k),
    }
}

/// The traffic of one run: three connections, work requests of varied
/// lengths (0, 1, around a beat, around the MTU, several MTUs) from odd
/// and even offsets, one connection whose reads fail, answers in bursts
/// that fill the queue (SACKs, NACKs, a direct NACK), backpressure on
/// every channel.
fn traffic(cfg: &Config, seed: u64) -> Rig {
    // A short RTO floor brings the idle run's PROBEs sooner: the output
    // stage does not see the timers, only the frames they make.
    let mut cfg = cfg.clone();
    cfg.timers.rto_min_us = 10;
    let cfg = &cfg;
    let mut rig = Rig::new(cfg.clone(), seed);
    let mtu = cfg.transport.mtu;
    let bb = cfg.hardware.datapath_bits / 8;
    let streams = cfg.transport.streams_per_conn;
    rig.e.open(1, 2, 0);
    rig.e.open(2, cfg.transport.paths_per_conn.min(3), 1000);
    rig.e.open(5, 1, 0);
    for c in [3, 4, 6] {
        rig.e.open(c, 1, 0);
    }
    rig.run(200);
    rig.e.press = Pressure { axis: 20, ar: 25, r_gap: 20, cqe: 10 };
    let lens = [0, 1, bb - 1, bb, bb + 1, 3 * bb + 5, mtu - 1, mtu, mtu + 1, 2 * mtu + 3, 17, 0, 100, 777];
    let mut off = 0u64;
    for (i, &len) in lens.iter().enumerate() {
        let conn = if i % 3 == 2 { 2 } else { 1 };
        let skip = rig.e.rng.below(2 * u64::from(bb));
        rig.e.wrs.push_back(wr(conn, i as u32 % streams, (i % 4) as u8, i as u64, off + skip, len));
        off += (u64::from(len) + 2 * u64::from(bb)).next_multiple_of(64);
    }
    rig.run(300);
    for k in 0..3 {
        rig.e.csacks.push_back(sack(1, k));
        rig.e.cnacks.push_back(nack(2, k, k == 1));
    }
    rig.run(600);
    rig.e.press = Pressure { axis: 50, ar: 10, r_gap: 40, cqe: 30 };
    for (i, len) in [5u32, mtu, 0, 2 * mtu, 63, 64].into_iter().enumerate() {
        let skip = rig.e.rng.below(u64::from(bb));
        rig.e.wrs.push_back(wr(1, i as u32 % streams, op::SEND, 200 + i as u64, off + skip, len));
        off += (u64::from(len) + 2 * u64::from(bb)).next_multiple_of(64);
    }
    rig.e.cnacks.push_back(nack(7, 9, true));
    rig.e.csacks.push_back(sack(2, 9));
    rig.run(400);
    for k in 10..14 {
        rig.e.csacks.push_back(sack(5, k));
        rig.e.cnacks.push_back(nack(1, k, k % 2 == 0));
    }
    rig.e.press = Pressure { axis: 0, ar: 0, r_gap: 0, cqe: 0 };
    rig.run(1500);
    // Connection 5 alone reads from the bad range: its first frame fails
    // the connection, the next, queued behind it, is dropped without a
    // report.
    rig.e.wrs.push_back(wr(5, 0, op::WRITE, 100, BAD.0 - MEM_BASE + 3, 3 * mtu));
    rig.run(400 + 6 * u64::from(mtu / bb));
    // Its failure clears its rings and walks its requests: the engine
    // decides nothing meanwhile.
    rig.run(20);
    while rig.e.tx.taps.output.as_ref().is_some_and(|t| t.walk_busy) {
        rig.run(1);
    }
    // Connections 6 and 3 read small payloads from it, interleaved: one's
    // failure keeps the walk busy while the other's failed frame waits at
    // the head.
    rig.e.press = Pressure { axis: 30, ar: 0, r_gap: 0, cqe: 0 };
    // A long frame in front, so both failed frames queue behind it.
    rig.e.wrs.push_back(wr(4, 0, op::WRITE, 299, 0x100, mtu));
    rig.run(30);
    for k in 0..6u64 {
        for c in [6, 3] {
            let at = BAD.0 - MEM_BASE + 0x4000 + k * 0x100 + u64::from(c);
            rig.e.wrs.push_back(wr(c, k as u32 % streams, op::WRITE, 300 + k, at, 9));
        }
    }
    rig.run(600);
    // Idle: tail timers and timeouts send PROBEs.
    rig.e.press = Pressure { axis: 0, ar: 0, r_gap: 0, cqe: 0 };
    rig.run(9_000);
    rig
}

fn replay_config(cfg: &Config) -> Run {
    let rig = traffic(cfg, 0x5eed);
    Run { defs: rig.defs, rows: rig.rows, seen: rig.seen }
}

/// The model's output stage and the unit, cycle by cycle, both configs:
/// every output equal every cycle, and the run covered what it is meant
/// to (data frames with and without payload, SACK, NACK and direct NACK
/// answers, a read error reported, a failed connection's frame dropped
/// silently, backpressure).
#[test]
fn icarus_output_stage_is_the_models() {
    replay_configs(
        "tx-output",
        output::NAME,
        write,
        replay_config,
        &[
            "data",
            "data_0",
            "probe",
            "sack",
            "nack",
            "direct",
            "r_err",
            "fail",
            "head_failed",
            "walk_busy",
            "axis_held",
            "qry_queued",
            "qry_not_queued",
        ],
    );
}

/// Verilator `-Wall` with no waivers and `iverilog -g2005 -Wall` silent,
/// for both configs; Yosys: no latch after `proc` (and `check -assert`:
/// no undriven net, no second driver, no loop) and the payload buffer
/// inferred as one memory (`memory -nomap`), for both; with
/// `MRNIC_SYNTH_FULL=1` also `synth_xilinx`, no latch and the buffer in
/// block RAM.
#[test]
fn tools_accept_the_output_stage() {
    common::per_config(common::configs(), |cfg| {
        let p = TxEngineParams::from_config(cfg).unwrap();
        let dir = Scratch::new(&format!("tx-output-tools-{}", cfg.name));
        let (m, rtl) = write(&dir, &p);
        // Full synthesis takes Yosys minutes per config (`small` about 5 on
        // this machine kind, `default` many more), too long for every test
        // run: by default the checks stop after `proc` and memory
        // inference, which is where a latch or a buffer in flip-flops
        // would show; `MRNIC_SYNTH_FULL=1` adds `synth_xilinx`.
        let memory = "; opt_clean; memory -nomap; select -assert-count 1 t:$mem t:$mem_v2";
        if !tools_check(&m, &rtl, memory) || !synth_full() {
            return;
        }
        let stat = synth_report(&dir, &m, &rtl, &cfg.name);
        assert!(stat.contains("RAMB"), "{}: the payload buffer is block RAM\n{stat}", cfg.name);
    });
}
