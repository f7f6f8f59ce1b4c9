//! The post pipeline of `tx_engine` (`mrnic_hdl::tx_engine::post`, a
//! clocked unit of the engine's generator) against the cycle model,
//! trace-driven: the model `TxEngine` runs real traffic, wired as its
//! tests wire it (`tx_rig`), with a peer that SACKs the data frames it
//! sees and its `taps.post` on. Each cycle records what entered the unit
//! (`s_wr`, the read's answer `L` cycles after the read: the connection's
//! context and the stream's word as they were before the read's cycle's
//! writes, the other units' writes to those fields, the flush room) and
//! what the model showed on the unit's ports (`s_wr_ready`, the read, the
//! post's writes, the flush completion); Icarus replays the inputs into
//! the generated unit and compares every output every cycle, for `small`
//! and `default`. The traffic: requests offered back to back to one
//! stream and across streams, a second request's post swept across the
//! commit of its stream's last byte, queues filled until the write stage
//! holds, a failure (NO_CONN NACK) and a failed payload read with posts
//! held and in flight, flushes of posts to failed and never opened
//! connections under completion backpressure, a reopen with posts in
//! flight, and enough posts per stream that the pointers wrap. Inputs the
//! unit must not look at carry junk: request fields without `s_wr_valid`,
//! the read's answer but in the cycle it is due, the writes' fields
//! without their valid, the flush room without a request at the write
//! stage.
//!
//! A missing tool skips the test with a message, except under CI=true,
//! where it fails.

mod common;
mod tx_rig;

use std::collections::{HashMap, VecDeque};

use common::Scratch;
use mrnic_hdl::tx_engine::{post, stream_ptr_bits};
use mrnic_hdl::Module;
use mrnic_model::block::{Bits, PortDef};
use mrnic_model::tx_engine::*;
use mrnic_proto::{Config, NackCode};
use tx_rig::{
    burst, mask, named, port_row, replay_configs, req_ports, tools_check_configs, wr, write_unit, Engine, Peer,
    Pressure, Run, BAD, MEM_BASE,
};

fn write(dir: &Scratch, p: &TxEngineParams) -> (Module, std::path::PathBuf) {
    let m = post::build(p);
    let rtl = write_unit(dir, &m, "tx_engine post pipeline", "tx_engine_post");
    (m, rtl)
}

/// The engine, a peer SACKing its data frames, and the post's ports
/// recorded each cycle.
struct Rig {
    e: Engine,
    peer: Peer,
    defs: Vec<PortDef>,
    rows: Vec<Vec<Bits>>,
    /// The read issued in each recorded cycle.
    reads: Vec<Option<PostRead>>,
    /// Reads of the requests in the pipeline, oldest first.
    in_flight: VecDeque<PostRead>,
    /// The last recorded cycle posted a request: its (conn, stream).
    last_post: Option<(u32, u32)>,
    seen: HashMap<&'static str, u32>,
}

impl Rig {
    fn new(cfg: Config, seed: u64) -> Rig {
        let p = TxEngineParams::from_config(&cfg).unwrap();
        let defs = post::ports(&p);
        let mut e = Engine::new(cfg, seed);
        e.tx.taps.post = Some(PostTap::default());
        let mut r = Rig {
            e,
            peer: Peer { window: true, ..Peer::default() },
            defs,
            rows: Vec::new(),
            reads: Vec::new(),
            in_flight: VecDeque::new(),
            last_post: None,
            seen: HashMap::new(),
        };
        // A reset cycle recorded, then the clear sweep, not replayed.
        r.step(true);
        r.e.sweep(&mut r.peer);
        r
    }

    fn open(&mut self, conn: u32, npaths: u32, psn: u32) {
        self.peer.open(&mut self.e, conn, npaths, psn);
    }

    fn step(&mut self, rst: bool) {
        let (inp, ot) = self.e.clock(rst);
        self.peer.beat(&mut self.e, &inp, &ot);
        let tap = self.e.tx.taps.post.clone().expect("the tap is on");
        self.row(&inp, &ot, &tap);
    }

    fn run(&mut self, cycles: u64) {
        for _ in 0..cycles {
            self.step(false);
        }
    }

    fn count(&mut self, what: &'static str) {
        *self.seen.entry(what).or_default() += 1;
    }

    /// Coverage of one post against the read its request issued.
    fn cover(&mut self, a: &PostAct) {
        let Some(r) = (if a.out.take { self.in_flight.pop_front() } else { self.in_flight.front().copied() }) else {
            panic!("a post without a read")
        };
        assert_eq!((r.conn, r.stream), (a.req.conn, a.req.stream), "posts in the order of their reads");
        let i = &a.read;
        match (i.live, a.out.take) {
            (true, true) => self.count("post"),
            (false, true) => self.count("flush"),
            (true, false) => self.count("held_full"),
            (false, false) => self.count("held_flush_room"),
        }
        if !a.out.take {
            return;
        }
        if i.live && !r.live {
            self.count("fwd_reopen");
        }
        if !i.live && r.live {
            self.count("fwd_fail");
        }
        if i.live && r.live {
            if i.tail != r.tail {
                self.count("fwd_tail");
            }
            if i.head != r.head {
                self.count("fwd_head");
            }
            if i.pend != r.pend {
                self.count("fwd_pend");
                if r.pend != r.tail && i.pend == i.tail {
                    self.count("fwd_last_byte_cut");
                }
            }
            if i.pend_streams != r.pend_streams {
                self.count("fwd_pend_streams");
            }
            if a.out.write && a.out.tail & mask(stream_ptr_bits(self.e.tx.params().wq_depth)) as u32 == 0 {
                self.count("tail_wrap");
            }
        }
        if let Some(prev) = self.last_post {
            self.count("back_to_back");
            if prev == (a.req.conn, a.req.stream) {
                self.count("back_to_back_same_stream");
            }
        }
    }

    /// The unit's ports this cycle.
    fn row(&mut self, inp: &Inputs, ot: &Outputs, tap: &PostTap) {
        let p = self.e.tx.params().clone();
        let defs = self.defs.clone();
        let l = p.read_latency as usize;
        let pb = stream_ptr_bits(p.wq_depth);
        let ptr = mask(pb);
        let slot = u64::from(p.wq_depth - 1);
        let mut ins: Vec<(&str, u64)> =
            vec![("rst", u64::from(inp.rst)), ("en", u64::from(!inp.rst)), ("s_open_busy", u64::from(tap.open_busy))];
        if tap.open_busy {
            self.count("open_busy");
        }
        let mut outs: Vec<(&str, u64)> = vec![("s_wr_ready", u64::from(ot.wr_ready))];
        let mut junked: Vec<&str> = Vec::new();
        let req_names = named(&defs, "s_wr_", &post::REQ);
        match inp.wr {
            Some(w) => {
                ins.push(("s_wr_valid", 1));
                ins.extend(req_ports(&defs, "s_wr_", &post::REQ, &w));
                if !ot.wr_ready {
                    self.count("wr_held");
                }
            }
            None => {
                ins.push(("s_wr_valid", 0));
                junked.extend(req_names);
            }
        }
        // The read issued now, and the answer due now.
        if let Some(r) = tap.rd {
            outs.extend([("m_rd_valid", 1), ("m_rd_conn", u64::from(r.conn)), ("m_rd_stream", u64::from(r.stream))]);
        }
        let due = self.reads.len().checked_sub(l).and_then(|t| self.reads[t]);
        let ans_names = [
            "s_rd_live",
            "s_rd_pend_streams",
            "s_rd_head",
            "s_rd_pend",
            "s_rd_tail",
            "s_rd_next_msn",
            "s_rd_next_rq_seq",
        ];
        match due {
            Some(r) => ins.extend([
                ("s_rd_live", u64::from(r.live)),
                ("s_rd_pend_streams", u64::from(r.pend_streams)),
                ("s_rd_head", u64::from(r.head) & ptr),
                ("s_rd_pend", u64::from(r.pend) & ptr),
                ("s_rd_tail", u64::from(r.tail) & ptr),
                ("s_rd_next_msn", u64::from(r.next_msn)),
                ("s_rd_next_rq_seq", u64::from(r.next_rq_seq)),
            ]),
            None => junked.extend(ans_names),
        }
        // The other units' writes.
        match tap.cut {
            Some((c, s, pend, ps)) => {
                self.count("cut");
                ins.extend([
                    ("s_cut_valid", 1),
                    ("s_cut_conn", u64::from(c)),
                    ("s_cut_stream", u64::from(s)),
                    ("s_cut_pend", u64::from(pend) & ptr),
                    ("s_cut_pend_streams", u64::from(ps)),
                ]);
            }
            None => {
                ins.push(("s_cut_valid", 0));
                junked.extend(["s_cut_conn", "s_cut_stream", "s_cut_pend", "s_cut_pend_streams"]);
            }
        }
        ins.extend([
            ("s_sw_head_valid", u64::from(tap.sw_head.is_some())),
            ("s_sw_drain_valid", u64::from(tap.sw_drain.is_some())),
        ]);
        match (tap.sw_head, tap.sw_drain) {
            (Some((c, s, h)), None) => {
                ins.extend([
                    ("s_sw_conn", u64::from(c)),
                    ("s_sw_stream", u64::from(s)),
                    ("s_sw_head", u64::from(h) & ptr),
                ]);
                junked.push("s_sw_pend");
            }
            (None, Some((c, s, pe))) => {
                self.count("drain");
                ins.extend([
                    ("s_sw_conn", u64::from(c)),
                    ("s_sw_stream", u64::from(s)),
                    ("s_sw_pend", u64::from(pe) & ptr),
                ]);
                junked.push("s_sw_head");
            }
            (None, None) => junked.extend(["s_sw_conn", "s_sw_stream", "s_sw_head", "s_sw_pend"]),
            (Some(_), Some(_)) => panic!("a walk step moves a head or drains a stream, not both"),
        }
        for (v, n, what) in [
            (tap.fail, ("s_fail_valid", "s_fail_conn"), "fail"),
            (tap.open, ("s_open_valid", "s_open_conn"), "reopen"),
            (tap.rdfail, ("s_rdfail_valid", "s_rdfail_conn"), "rdfail"),
        ] {
            match v {
                Some(c) => {
                    self.count(what);
                    ins.extend([(n.0, 1), (n.1, u64::from(c))]);
                }
                None => {
                    ins.push((n.0, 0));
                    junked.push(n.1);
                }
            }
        }
        // The post.
        match tap.post {
            Some(a) => {
                ins.push(("m_flush_room", u64::from(a.read.flush_room)));
                if a.out.write {
                    outs.extend([("m_wq_wr_valid", 1), ("m_wq_wr_slot", u64::from(a.read.tail) & slot)]);
                    outs.extend(req_ports(&defs, "m_wq_wr_", &post::REQ, &a.req));
                    outs.extend([
                        ("m_wq_wr_msn", u64::from(a.out.msn)),
                        ("m_wq_wr_rq_seq", u64::from(a.out.rq_seq)),
                        ("m_sw_tail", u64::from(a.out.tail) & ptr),
                        ("m_sw_next_msn", u64::from(a.out.next_msn)),
                        ("m_sw_next_rq_seq", u64::from(a.out.next_rq_seq)),
                        ("m_pend_streams", u64::from(a.out.pend_streams)),
                    ]);
                }
                if a.out.flush {
                    outs.push(("m_flush_valid", 1));
                    outs.extend(req_ports(&defs, "m_flush_", &post::FLUSHED.map(|(f, _)| f), &a.req));
                }
            }
            None => junked.push("m_flush_room"),
        }
        // Writes to the connection (and stream) of a request in flight.
        let has =
            |c: u32, s: Option<u32>| self.in_flight.iter().any(|r| r.conn == c && s.is_none_or(|s| r.stream == s));
        let hits = [
            (tap.cut.is_some_and(|(c, s, _, _)| has(c, Some(s))), "cut_in_flight"),
            (tap.sw_head.is_some_and(|(c, s, _)| has(c, Some(s))), "head_in_flight"),
            (tap.fail.is_some_and(|c| has(c, None)), "fail_in_flight"),
            (tap.open.is_some_and(|c| has(c, None)), "reopen_in_flight"),
            (tap.rdfail.is_some_and(|c| has(c, None)), "rdfail_in_flight"),
        ];
        for (hit, what) in hits {
            if hit {
                self.count(what);
            }
        }
        // The post comes before the cycle's read in the model's clock.
        let posted = tap.post.filter(|a| a.out.take);
        if let Some(a) = tap.post {
            self.cover(&a);
        }
        if let Some(r) = tap.rd {
            self.in_flight.push_back(r);
        }
        self.last_post = posted.map(|a| (a.req.conn, a.req.stream));
        self.reads.push(tap.rd);
        let v = port_row(&mut self.e.junk, &defs, &junked, ins.into_iter().chain(outs).collect());
        self.rows.push(v);
    }
}

/// The traffic of one run (see the module doc).
fn traffic(cfg: &Config, seed: u64) -> Rig {
    let mut rig = Rig::new(cfg.clone(), seed);
    let streams = cfg.transport.streams_per_conn.min(4);
    let paths = cfg.transport.paths_per_conn;
    let depth = cfg.hardware.tx_wq_depth;
    let mut off = 0u64;
    for c in 1..=5 {
        rig.open(c, 2.min(paths), 10 * c);
    }
    // The driver waits for the setups: requests taken meanwhile would
    // wait for them anyway (`s_open_busy`).
    rig.run(300);
    while rig.e.opening() {
        rig.run(1);
    }

    // Requests back to back across streams and connections, answered.
    rig.e.press = Pressure { axis: 10, ar: 10, r_gap: 10, cqe: 20 };
    burst(&mut rig.e, 1, streams, 3, 0, &mut off);
    burst(&mut rig.e, 2, streams, 2, 100, &mut off);
    rig.run(2_000);

    // A trickle of posts to one stream while its earlier requests
    // complete: the walk moves the stream's head with a post's reads in
    // flight (the gaps sweep the completions' phase).
    for k in 0..40u64 {
        rig.e.wrs.push_back(wr(1, 0, op::WRITE, 3000 + k, off % 0x2_0000, 64));
        off += 128;
        rig.run(5 + (k * 13) % 31);
    }
    rig.run(1_000);

    // A second request's post swept across the commit of its stream's
    // last byte: the first is short, so its one packet is cut while the
    // second's reads are in flight.
    rig.e.press = Pressure::default();
    for d in 0..12u64 {
        rig.e.wrs.push_back(wr(3, 1, op::WRITE, 200 + 2 * d, off % 0x2_0000, 1 + d as u32));
        rig.run(d);
        rig.e.wrs.push_back(wr(3, 1, op::SEND, 201 + 2 * d, (off + 256) % 0x2_0000, 60));
        off += 512;
        rig.run(150);
    }

    // One stream filled past its depth (the peer does not answer): the
    // write stage holds, the requests behind wait; then a NO_CONN NACK
    // fails the connection and the held posts are flushed under
    // completion backpressure.
    rig.peer.mute.insert(4);
    for k in 0..depth + 8 {
        rig.e.wrs.push_back(wr(4, 0, (k % 4) as u8, 300 + u64::from(k), off % 0x2_0000, 40));
        off += 64;
    }
    rig.run(800);
    rig.e.press = Pressure { axis: 0, ar: 0, r_gap: 0, cqe: 80 };
    rig.e.nacks.push_back(NackIn { conn: 4, path_id: 0, code: NackCode::NoConn as u8, psn: 0 });
    rig.run(1_500);
    // Posts to the failed connection and to one never opened.
    for k in 0..6u64 {
        rig.e.wrs.push_back(wr(4 + (k as u32 % 2) * 5, k as u32 % streams, op::SEND_IMM, 350 + k, 0, 10));
    }
    rig.run(600);
    rig.e.press = Pressure::default();
    rig.run(800);

    // A reopen with posts in flight: connection 5's stream 0 is full and
    // posts wait behind it when it is opened again (its flush walk first).
    rig.peer.mute.insert(5);
    for k in 0..depth + 3 {
        rig.e.wrs.push_back(wr(5, 0, op::WRITE_IMM, 400 + u64::from(k), off % 0x2_0000, 30));
        off += 64;
    }
    rig.run(600);
    rig.peer.mute.remove(&5);
    rig.open(5, 1, 7000);
    rig.run(1_500);
    // The failed connection 4 opened again.
    rig.peer.mute.remove(&4);
    rig.open(4, 2.min(paths), 8000);
    rig.run(300);

    // A failed payload read with a post of its connection held: the
    // stream fills (the peer does not answer) before the bad request's
    // read fails.
    rig.peer.mute.insert(2);
    for k in 0..u64::from(depth) + 3 {
        let at = if k == 1 { BAD.0 - MEM_BASE + 0x40 } else { off % 0x2_0000 };
        rig.e.wrs.push_back(wr(2, 0, op::WRITE, 500 + k, at, 300));
        off += 512;
    }
    rig.run(1_500);

    // Pointer wraps: rounds of posts to every stream of an answered
    // connection, each round completed before the next.
    rig.e.press = Pressure { axis: 10, ar: 10, r_gap: 10, cqe: 20 };
    for round in 0..2 * depth as u64 + 2 {
        burst(&mut rig.e, 1, streams, 1, 1000 + 10 * round, &mut off);
        burst(&mut rig.e, 3, 1, 1, 2000 + round, &mut off);
        rig.run(400);
    }
    rig.e.press = Pressure::default();
    rig.run(2_000);
    rig
}

fn replay_config(cfg: &Config) -> Run {
    let rig = traffic(cfg, 0x9057);
    Run { defs: rig.defs, rows: rig.rows, seen: rig.seen }
}

/// The model's post and the unit, cycle by cycle, both configs: every
/// output equal every cycle, and the run covered what it is meant to.
#[test]
fn icarus_post_pipeline_is_the_models() {
    replay_configs(
        "tx-post",
        post::NAME,
        write,
        replay_config,
        &[
            "post",
            "flush",
            "held_full",
            "held_flush_room",
            "wr_held",
            "back_to_back",
            "back_to_back_same_stream",
            "fwd_tail",
            "fwd_head",
            "fwd_pend",
            "fwd_last_byte_cut",
            "fwd_pend_streams",
            "fwd_fail",
            "cut_in_flight",
            "head_in_flight",
            "fail_in_flight",
            "reopen_in_flight",
            "rdfail_in_flight",
            "tail_wrap",
            "cut",
            "drain",
            "fail",
            "reopen",
            "rdfail",
        ],
    );
}

/// Verilator `-Wall` with no waivers and `iverilog -g2005 -Wall` silent,
/// for both configs; Yosys: no latch after `proc` and `check -assert` (no
/// undriven net, no second driver, no loop).
#[test]
fn tools_accept_the_post_pipeline() {
    tools_check_configs("tx-post", write);
}
