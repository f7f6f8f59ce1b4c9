//! The completion walk of `tx_engine` (`mrnic_hdl::tx_engine::walk`, a
//! clocked unit of the engine's generator) against the cycle model,
//! trace-driven: the model `TxEngine` runs real traffic, wired as its
//! tests wire it (`tx_rig`), with a peer that SACKs the data frames it
//! sees (a few lost, so bitmaps have holes) and its `taps.walk` on. Each
//! cycle records what entered the walk (its starts, the acknowledgement
//! unit's level, the walking connection's words, the table reads' answers,
//! the post's flushes) and what the model showed on the unit's ports (the
//! completion FIFO's head, the read address, the writes, the busy and
//! room levels); Icarus replays the inputs into the generated unit and
//! compares every output every cycle, for `small` and `default`. The
//! traffic: SACKs completing requests across streams and connections,
//! failures with requests in flight (a failed payload read, an ACCESS
//! NACK naming a request in the middle of its stream, a NO_CONN NACK, a
//! reopen), posts to failed and closed connections, and completion
//! backpressure that fills the FIFO. Inputs the unit must not look at
//! carry junk: start fields without their valid, the read answers but in
//! the cycle a step uses them, the words while no walk runs (and every
//! stream's pend and tail but the looked-at one), the acknowledgement
//! unit's level with no walk running.
//!
//! The rig also checks the model's own timing claim (architecture.md,
//! tx_engine item 9): the entry and counts a step acts on are the ones at
//! the address the walk presented `L` cycles before, as a registered
//! read returns them.
//!
//! A missing tool skips the test with a message, except under CI=true,
//! where it fails.

mod common;
mod tx_rig;

use std::collections::HashMap;

use common::Scratch;
use mrnic_hdl::tx_engine::{post, stream_ptr_bits, walk, walk_count_bits};
use mrnic_hdl::Module;
use mrnic_model::block::{port_index, Bits, PortDef};
use mrnic_model::tx_engine::*;
use mrnic_proto::{Config, NackCode};
use tx_rig::{
    burst, junk, mask, named, port_row, put_field, replay_configs, tools_check_configs, wr, write_unit, Engine, Peer,
    Pressure, Run, BAD, MEM_BASE,
};

fn write(dir: &Scratch, p: &TxEngineParams) -> (Module, std::path::PathBuf) {
    let m = walk::build(p);
    let rtl = write_unit(dir, &m, "tx_engine completion walk", "tx_engine_walk");
    (m, rtl)
}

/// The engine, a peer SACKing its data frames, and the walk's ports
/// recorded each cycle.
struct Rig {
    e: Engine,
    defs: Vec<PortDef>,
    rows: Vec<Vec<Bits>>,
    taps: Vec<WalkTap>,
    peer: Peer,
    seen: HashMap<&'static str, u32>,
}

impl Rig {
    fn new(cfg: Config, seed: u64) -> Rig {
        let p = TxEngineParams::from_config(&cfg).unwrap();
        let defs = walk::ports(&p);
        let mut e = Engine::new(cfg, seed);
        e.tx.taps.walk = Some(WalkTap::default());
        let mut r = Rig { e, defs, rows: Vec::new(), taps: Vec::new(), peer: Peer::default(), seen: HashMap::new() };
        // A reset cycle recorded, then the clear sweep, not replayed.
        r.step(true);
        r.e.sweep(&mut r.peer);
        r
    }

    /// Opens `conn` (again) and forgets what the peer received on it.
    fn open(&mut self, conn: u32, npaths: u32, psn: u32) {
        self.peer.open(&mut self.e, conn, npaths, psn);
    }

    fn step(&mut self, rst: bool) {
        let (inp, ot) = self.e.clock(rst);
        self.peer.beat(&mut self.e, &inp, &ot);
        let tap = self.e.tx.taps.walk.clone().expect("the tap is on");
        self.row(&inp, &ot, &tap);
        self.taps.push(tap);
    }

    fn count(&mut self, what: &'static str) {
        *self.seen.entry(what).or_default() += 1;
    }

    /// The unit's ports this cycle.
    fn row(&mut self, inp: &Inputs, ot: &Outputs, tap: &WalkTap) {
        let p = self.e.tx.params().clone();
        let defs = self.defs.clone();
        let pb = stream_ptr_bits(p.wq_depth);
        let kb = walk_count_bits(&p);
        let (ptr, cnt, slot) = (mask(pb), mask(kb), u64::from(p.wq_depth - 1));
        let mut ins: Vec<(&str, u64)> = vec![("rst", u64::from(inp.rst)), ("m_cqe_ready", u64::from(inp.cqe_ready))];
        let mut outs: Vec<(&str, u64)> = Vec::new();
        let mut wide: Vec<(&str, Bits)> = Vec::new();
        let mut junked: Vec<&str> = Vec::new();
        if tap.running {
            ins.push(("ack_free", u64::from(tap.ack_free)));
        } else {
            junked.push("ack_free");
        }
        // Starts.
        let (mut done, mut fail, mut rdfail) = (false, false, false);
        match tap.start.as_ref() {
            Some(WalkStart { walk: Walk::Done { conn, touched, .. }, .. }) => {
                done = true;
                self.count("start_sack");
                let bits = touched.iter().enumerate().fold(0u64, |a, (i, &t)| a | u64::from(t) << i);
                ins.extend([("s_done_valid", 1), ("s_done_conn", u64::from(*conn)), ("s_done_touched", bits)]);
                if bits.count_ones() > 1 {
                    self.count("start_sack_streams");
                }
            }
            Some(WalkStart { walk: Walk::Fail { conn, culprit, st, .. }, read_failed: true }) => {
                rdfail = true;
                self.count("start_read_failed");
                let (s, sl) = culprit.expect("a failed read names its request");
                assert_eq!(*st, status::LOCAL_PROTECTION);
                ins.extend([
                    ("s_rdfail_valid", 1),
                    ("s_rdfail_conn", u64::from(*conn)),
                    ("s_rdfail_stream", u64::from(s)),
                    ("s_rdfail_slot", u64::from(sl) & ptr),
                ]);
            }
            Some(WalkStart { walk: Walk::Fail { conn, culprit, st, .. }, .. }) => {
                fail = true;
                self.count(if culprit.is_some() { "start_fail_culprit" } else { "start_fail" });
                let (s, sl) = culprit.unwrap_or_default();
                ins.extend([
                    ("s_fail_valid", 1),
                    ("s_fail_conn", u64::from(*conn)),
                    ("s_fail_culprit_valid", u64::from(culprit.is_some())),
                    ("s_fail_culprit_stream", u64::from(s)),
                    ("s_fail_culprit_slot", u64::from(sl) & ptr),
                    ("s_fail_status", u64::from(*st)),
                ]);
            }
            None => {}
        }
        if tap.start.is_some() && tap.step.is_some() {
            self.count("start_at_last_step");
        }
        for (v, names) in [
            (done, &["s_done_valid", "s_done_conn", "s_done_touched"][..]),
            (
                fail,
                &[
                    "s_fail_valid",
                    "s_fail_conn",
                    "s_fail_culprit_valid",
                    "s_fail_culprit_stream",
                    "s_fail_culprit_slot",
                    "s_fail_status",
                ][..],
            ),
            (rdfail, &["s_rdfail_valid", "s_rdfail_conn", "s_rdfail_stream", "s_rdfail_slot"][..]),
        ] {
            if !v {
                ins.push((names[0], 0));
                junked.extend(&names[1..]);
            }
        }
        // The words: true while a walk runs or steps and at a SACK's
        // start; pend and tail only the looked-at stream's, in a step.
        let looked = tap.step.as_ref().map(|s| match s.walk {
            Walk::Done { stream, .. } | Walk::Fail { stream, .. } => stream,
        });
        let words = tap.words.as_ref().filter(|_| tap.running || tap.step.is_some() || done);
        let mut heads = junk(&mut self.e.junk, pb * p.streams);
        let mut pends = junk(&mut self.e.junk, pb * p.streams);
        let mut tails = junk(&mut self.e.junk, pb * p.streams);
        if let Some((_, ws)) = words {
            for (i, &(h, pe, t)) in ws.iter().enumerate() {
                let at = pb * i as u32;
                put_field(&mut heads, at, pb, u64::from(h) & ptr);
                if looked == Some(i as u32) {
                    put_field(&mut pends, at, pb, u64::from(pe) & ptr);
                    put_field(&mut tails, at, pb, u64::from(t) & ptr);
                }
            }
        }
        wide.extend([("s_sw_head", heads), ("s_sw_pend", pends), ("s_sw_tail", tails)]);
        // The step: its reads' answers, its writes.
        let step_names =
            ["s_wq_rd_wr_id", "s_wq_rd_op", "s_wq_rd_len", "s_wq_rd_imm", "s_wq_rd_issued", "s_wq_rd_acked"];
        match tap.step.as_ref() {
            Some(s) => {
                ins.extend([
                    ("s_wq_rd_wr_id", s.req.wr_id),
                    ("s_wq_rd_op", u64::from(s.req.op)),
                    ("s_wq_rd_len", u64::from(s.req.len)),
                    ("s_wq_rd_imm", u64::from(s.req.imm)),
                    ("s_wq_rd_issued", u64::from(s.read.issued) & cnt),
                    ("s_wq_rd_acked", u64::from(s.read.acked) & cnt),
                ]);
                let (_, act) = walk_next(&s.walk, &s.read, p.streams);
                let c = u64::from(s.walk.conn());
                let st = u64::from(s.stream);
                self.count("step");
                match (&s.walk, act.cqe) {
                    (Walk::Done { .. }, Some(_)) => self.count("cqe_success"),
                    (Walk::Done { .. }, None) => self.count("stream_dropped"),
                    (Walk::Fail { culprit_pending: true, .. }, _) => self.count("cqe_culprit"),
                    (Walk::Fail { .. }, Some(_)) => self.count("cqe_flushed"),
                    (Walk::Fail { .. }, None) if act.advance => self.count("culprit_skipped"),
                    (Walk::Fail { .. }, None) => self.count("stream_drained"),
                }
                outs.extend([
                    ("m_sw_head_valid", u64::from(act.advance)),
                    ("m_sw_drain_valid", u64::from(act.drain)),
                    ("m_acked_valid", u64::from(act.equalize)),
                ]);
                if act.advance || act.drain {
                    outs.extend([("m_sw_conn", c), ("m_sw_stream", st)]);
                }
                if act.advance {
                    outs.push(("m_sw_head", u64::from(s.read.head.wrapping_add(1)) & ptr));
                }
                if act.drain {
                    outs.push(("m_sw_pend", u64::from(s.read.tail) & ptr));
                }
                if act.equalize {
                    outs.extend([
                        ("m_acked_conn", c),
                        ("m_acked_stream", st),
                        ("m_acked_slot", u64::from(s.slot) & slot),
                        ("m_acked_data", u64::from(s.read.issued) & cnt),
                    ]);
                }
            }
            None => junked.extend(step_names),
        }
        if tap.running && tap.ack_free && tap.step.is_none() && !tap.room {
            self.count("held_by_full_fifo");
        }
        // The post's flushes.
        let flush_names = named(&defs, "s_flush_", &post::FLUSHED.map(|(f, _)| f));
        match tap.flush {
            Some(c) => {
                self.count("flush");
                let op = u64::from(c.opcode) << 1 | u64::from(c.imm.is_some());
                ins.extend([
                    ("s_flush_valid", 1),
                    ("s_flush_conn", u64::from(c.conn)),
                    ("s_flush_stream", u64::from(c.stream)),
                    ("s_flush_wr_id", c.wr_id),
                    ("s_flush_op", op),
                    ("s_flush_len", u64::from(c.byte_len)),
                    ("s_flush_imm", u64::from(c.imm.unwrap_or(self.e.junk.next_u64() as u32))),
                ]);
            }
            None => {
                ins.push(("s_flush_valid", 0));
                junked.extend(flush_names);
            }
        }
        // Levels and the read address.
        // m_walk_stays: m_walk_busy without this cycle's starts (a start
        // is the last cycle of any walk that ran).
        let started = tap.start.as_ref().is_some_and(|s| !s.read_failed);
        outs.extend([
            ("m_walk_busy", u64::from(tap.busy)),
            ("m_walk_stays", u64::from(tap.busy && !started)),
            ("m_cqe_room", u64::from(tap.room)),
        ]);
        if let Some(r) = tap.rd {
            outs.extend([
                ("m_wq_rd_valid", 1),
                ("m_wq_rd_conn", u64::from(r.conn)),
                ("m_wq_rd_stream", u64::from(r.stream)),
                ("m_wq_rd_slot", u64::from(r.slot) & slot),
            ]);
        }
        if let Some(c) = ot.cqe {
            if !inp.cqe_ready {
                self.count("cqe_held");
            }
            outs.extend([
                ("m_cqe_valid", 1),
                ("m_cqe_conn", u64::from(c.conn)),
                ("m_cqe_stream", u64::from(c.stream)),
                ("m_cqe_wr_id", c.wr_id),
                ("m_cqe_status", u64::from(c.status)),
                ("m_cqe_opcode", u64::from(c.opcode)),
                ("m_cqe_byte_len", u64::from(c.byte_len)),
                ("m_cqe_imm_valid", u64::from(c.imm.is_some())),
                ("m_cqe_imm", u64::from(c.imm.unwrap_or(0))),
            ]);
        }
        let mut v = port_row(&mut self.e.junk, &defs, &junked, ins.into_iter().chain(outs).collect());
        for (n, b) in wide {
            let i = port_index(&defs, n).unwrap_or_else(|| panic!("no port {n}"));
            v[i] = b;
        }
        self.rows.push(v);
    }

    fn run(&mut self, cycles: u64) {
        for _ in 0..cycles {
            self.step(false);
        }
    }

    /// Runs until the walk is idle and the completions are taken.
    fn settle(&mut self, limit: u64) {
        for _ in 0..limit {
            let t = self.e.tx.taps.walk.as_ref().expect("on");
            if !t.running && !t.busy && self.e.tx.outputs().cqe.is_none() {
                return;
            }
            self.step(false);
        }
    }

    /// The model's timing claim: each step acts on what the slot it looks
    /// at held `L` cycles before, when the walk presented its address.
    fn check_reads(&self) {
        let l = self.e.tx.params().read_latency as usize;
        for (t, tap) in self.taps.iter().enumerate() {
            let Some(s) = tap.step.as_ref() else { continue };
            let r = t.checked_sub(l).and_then(|u| self.taps[u].rd).unwrap_or_else(|| panic!("cycle {t}: no read"));
            assert_eq!(
                (r.conn, r.stream, r.slot, r.req, r.issued, r.acked),
                (s.walk.conn(), s.stream, s.slot, s.req, s.read.issued, s.read.acked),
                "cycle {t}: the step acts on the read issued L cycles before"
            );
        }
    }
}

/// The traffic of one run (see the module doc).
fn traffic(cfg: &Config, seed: u64) -> Rig {
    let mut rig = Rig::new(cfg.clone(), seed);
    let streams = cfg.transport.streams_per_conn.min(4);
    let paths = cfg.transport.paths_per_conn;
    let mut off = 0u64;
    rig.open(1, 2.min(paths), 0);
    rig.open(2, 3.min(paths), 100);
    rig.open(3, 1, 0);
    rig.open(4, 2.min(paths), 7);
    rig.open(5, 1, 0);
    rig.run(300);

    // SACKs complete requests across streams and connections.
    rig.e.press = Pressure { axis: 10, ar: 10, r_gap: 10, cqe: 20 };
    rig.peer.loss = 5;
    burst(&mut rig.e, 1, streams, 2, 0, &mut off);
    burst(&mut rig.e, 2, streams, 2, 100, &mut off);
    burst(&mut rig.e, 4, 2, 2, 200, &mut off);
    rig.run(3_000);
    rig.peer.loss = 0;
    // Completions held (none taken): the FIFO fills and the walk waits
    // for room, on every config's FIFO depth.
    rig.e.press = Pressure { axis: 0, ar: 0, r_gap: 0, cqe: 100 };
    burst(&mut rig.e, 3, streams, 2, 300, &mut off);
    rig.run(2_000);
    rig.e.press = Pressure { axis: 10, ar: 10, r_gap: 10, cqe: 30 };
    rig.settle(5_000);

    // A failed payload read in the middle of connection 5's requests:
    // its stream 1's second request reads the bad range, the others are
    // in flight (the peer does not answer) or queued.
    rig.peer.mute.insert(5);
    for s in 0..streams {
        for k in 0..2u64 {
            let bad = s == 1 && k == 1;
            let at = if bad { BAD.0 - MEM_BASE + 0x40 } else { off % 0x2_0000 };
            rig.e.wrs.push_back(wr(5, s, op::WRITE, 400 + u64::from(s) * 2 + k, at, 300));
            off += 512;
        }
    }
    rig.run(1_500);
    rig.settle(5_000);
    // Posts to the failed connection and to one never opened are flushed.
    rig.e.wrs.push_back(wr(5, 0, op::SEND_IMM, 450, 0, 10));
    rig.e.wrs.push_back(wr(9, 1, op::WRITE_IMM, 451, 0, 10));
    rig.run(50);

    // An ACCESS NACK for a packet of a request in the middle of
    // connection 4's stream 0, the requests around it in flight.
    rig.peer.mute.insert(4);
    rig.peer.unanswered.clear();
    burst(&mut rig.e, 4, streams, 2, 500, &mut off);
    rig.run(1_200);
    let mid = rig.peer.unanswered.iter().copied().find(|&(c, _, _)| c == 4);
    let (_, path, psn) = mid.expect("connection 4 sent packets");
    let mid =
        rig.peer.unanswered.iter().copied().filter(|&(c, p, _)| c == 4 && p == path).nth(2).unwrap_or((4, path, psn));
    rig.e.nacks.push_back(NackIn { conn: 4, path_id: mid.1, code: NackCode::Access as u8, psn: mid.2 });
    rig.run(200);
    rig.settle(5_000);

    // A NO_CONN NACK fails connection 2 with no culprit, requests in
    // flight, its flush held by completion backpressure.
    rig.e.press = Pressure { axis: 10, ar: 10, r_gap: 10, cqe: 80 };
    rig.peer.mute.insert(2);
    burst(&mut rig.e, 2, streams, 2, 600, &mut off);
    rig.run(800);
    rig.e.nacks.push_back(NackIn { conn: 2, path_id: 0, code: NackCode::NoConn as u8, psn: 0 });
    rig.run(100);
    rig.settle(5_000);

    // A reopen of connection 1 with requests in flight flushes them.
    rig.peer.mute.insert(1);
    burst(&mut rig.e, 1, streams, 2, 700, &mut off);
    rig.run(600);
    rig.peer.mute.remove(&1);
    rig.open(1, 2.min(paths), 5000);
    rig.run(300);
    rig.e.press = Pressure { axis: 10, ar: 10, r_gap: 10, cqe: 30 };
    rig.settle(5_000);

    // Connections 4 and 5 again, answered, under completion backpressure.
    for c in [4, 5] {
        rig.peer.mute.remove(&c);
        rig.open(c, 2.min(paths), 9000);
    }
    rig.run(200);
    rig.e.press = Pressure { axis: 20, ar: 10, r_gap: 10, cqe: 60 };
    burst(&mut rig.e, 4, streams, 1, 800, &mut off);
    burst(&mut rig.e, 5, streams, 1, 900, &mut off);
    burst(&mut rig.e, 1, streams, 1, 1000, &mut off);
    rig.run(2_500);
    // One SACK acknowledging requests of every stream of connection 3 at
    // once: a walk over several touched streams (the traffic above has
    // one in `small` only since the SACK stages' timing, architecture.md
    // tx_engine item 14, shifted `default`'s).
    rig.peer.mute.insert(3);
    rig.peer.unanswered.clear();
    burst(&mut rig.e, 3, streams, 1, 1100, &mut off);
    rig.run(1_500);
    let sent: Vec<u32> = rig.peer.unanswered.iter().filter(|&&(c, p, _)| (c, p) == (3, 0)).map(|x| x.2).collect();
    if let Some(&last) = sent.iter().max_by_key(|&&x| tx_rig::psn_diff(x, sent[0])) {
        let cum_psn = (last + 1) & tx_rig::PSN_MASK;
        rig.e.sacks.push_back(SackIn { conn: 3, cum_psn, rate_hint: 0xffff, stream_id: 0xff, ..SackIn::default() });
    }
    rig.peer.mute.remove(&3);
    rig.run(500);
    rig.e.press = Pressure::default();
    rig.settle(10_000);
    rig.run(100);
    rig
}

fn replay_config(cfg: &Config) -> Run {
    let rig = traffic(cfg, 0x3a1c);
    rig.check_reads();
    Run { defs: rig.defs, rows: rig.rows, seen: rig.seen }
}

/// The model's walk and the unit, cycle by cycle, both configs: every
/// output equal every cycle, and the run covered what it is meant to.
#[test]
fn icarus_completion_walk_is_the_models() {
    replay_configs(
        "tx-walk",
        walk::NAME,
        write,
        replay_config,
        &[
            "start_sack",
            "start_sack_streams",
            "start_read_failed",
            "start_fail_culprit",
            "start_fail",
            "cqe_success",
            "stream_dropped",
            "cqe_culprit",
            "cqe_flushed",
            "culprit_skipped",
            "stream_drained",
            "flush",
            "held_by_full_fifo",
            "cqe_held",
        ],
    );
}

/// Verilator `-Wall` with no waivers and `iverilog -g2005 -Wall` silent,
/// for both configs; Yosys: no latch after `proc` and `check -assert` (no
/// undriven net, no second driver, no loop).
#[test]
fn tools_accept_the_completion_walk() {
    tools_check_configs("tx-walk", write);
}
