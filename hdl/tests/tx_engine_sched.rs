//! The scheduler's control of `tx_engine` (`mrnic_hdl::tx_engine::sched`,
//! a clocked unit of the engine's generator) against the cycle model,
//! trace-driven: the model `TxEngine` runs real traffic, wired as its tests
//! wire it (`tx_rig`), with a peer that SACKs the data frames it sees and
//! the model's `taps.sched` on. Each cycle records what entered the
//! scheduler (the start's levels and ready sets, the telemetry and path
//! selector handshakes, the deciding connection's state as the decision
//! read it) and what it showed or did (`m_trd_*`, `m_psel_*`, the pops,
//! stalls, window probes, credit clears, PROBE starts and commits);
//! Icarus replays the inputs into the generated unit and compares every
//! output every cycle, for `small` and `default`.
//!
//! The traffic: several connections and streams under loss (RACK
//! retransmissions), RNR NACKs (their resends come back as queue heads),
//! a muted connection whose packets BAD_HDR NACKs queue for retransmission
//! while every port is held, then a SACK that acknowledges them, so its
//! decisions pop stale heads; `port_ready` toggling, plane marks from
//! paths declared SUSPECT (`small`: `default`'s RTO scanner is too slow
//! for a replay), windows and rings full, PROBEs (with the frame queue
//! full, so only PROBEs may start), the peer's message table full (window
//! probes armed), backpressure on the telemetry read and the path request
//! and their answers, and failed payload reads whose walks hold the path
//! answer of another connection's decision. Inputs the unit must not look
//! at carry junk: the ready sets and start levels but when idle, the
//! handshake readies and answers outside their states, the decision's
//! levels but in a decision's cycle, and in it the retransmit head's
//! fields without a head, the mirrors of paths past `npaths`, the
//! deadlines of planes not marked.
//!
//! A missing tool skips the test with a message, except under CI=true,
//! where it fails.

mod common;
mod tx_rig;

use std::collections::HashMap;

use common::Scratch;
use mrnic_hdl::tx_engine::{sched, stream_ptr_bits};
use mrnic_hdl::Module;
use mrnic_model::block::{port_index, Bits, PortDef};
use mrnic_model::path_telemetry as tel;
use mrnic_model::tx_engine::*;
use mrnic_proto::tables::path as pt;
use mrnic_proto::{Config, NackCode};
use tx_rig::{
    burst, junk, mask, port_row, put_field, replay_configs, tools_check_configs, write_unit, Engine, Peer, Pressure,
    Run,
};

/// The unit for `p`'s config as the traffic runs it ([`tuned`]).
fn write(dir: &Scratch, p: &TxEngineParams) -> (Module, std::path::PathBuf) {
    let m = sched::build(&TxEngineParams::from_config(&tuned(&p.cfg)).unwrap());
    let rtl = write_unit(dir, &m, "tx_engine scheduler control", "tx_engine_sched");
    (m, rtl)
}

/// Junk of `n` fields of `w` bits with field `i` set to `v(i)` where it
/// gives one.
fn fields(rng: &mut common::Rng, n: u32, w: u32, v: impl Fn(u32) -> Option<u64>) -> Bits {
    let mut b = junk(rng, n * w);
    for i in 0..n {
        if let Some(x) = v(i) {
            put_field(&mut b, i * w, w, x & mask(w));
        }
    }
    b
}

/// A set of `n` bits from 64-bit words.
fn set_bits(n: u32, words: &[u64]) -> Bits {
    let mut b = Bits::zero(n);
    for (k, x) in b.0.iter_mut().enumerate() {
        *x = words[k];
    }
    b.truncate(n);
    b
}

/// The engine, a peer SACKing its data frames, and the scheduler's ports
/// recorded each cycle.
struct Rig {
    e: Engine,
    defs: Vec<PortDef>,
    rows: Vec<Vec<Bits>>,
    peer: Peer,
    seen: HashMap<&'static str, u32>,
    /// `port_ready` toggles at random (a percentage per cycle).
    toggle: u64,
    /// The taps of the last cycles, for [`Rig::run_until`].
    taps: std::collections::VecDeque<SchedTap>,
}

impl Rig {
    fn new(cfg: Config, seed: u64) -> Rig {
        let p = TxEngineParams::from_config(&cfg).unwrap();
        let defs = sched::ports(&p);
        let mut e = Engine::new(cfg, seed);
        e.tx.taps.sched = Some(SchedTap::default());
        let mut r = Rig {
            e,
            defs,
            rows: Vec::new(),
            peer: Peer::default(),
            seen: HashMap::new(),
            toggle: 0,
            taps: Default::default(),
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
        if self.toggle > 0 && self.e.chance(self.toggle) {
            let planes = self.e.cfg.transport.planes;
            let q = self.e.rng.below(u64::from(planes)) as u32;
            self.e.port_ready ^= 1 << q;
        }
        let (inp, ot) = self.e.clock(rst);
        self.peer.beat(&mut self.e, &inp, &ot);
        let tap = self.e.tx.taps.sched.clone().expect("the tap is on");
        self.row(&inp, &ot, &tap);
    }

    fn count(&mut self, what: &'static str) {
        *self.seen.entry(what).or_default() += 1;
    }

    /// The unit's ports this cycle.
    fn row(&mut self, inp: &Inputs, ot: &Outputs, t: &SchedTap) {
        let p = self.e.tx.params().clone();
        let defs = self.defs.clone();
        let (n, s) = (p.paths, p.streams);
        let planes = self.e.cfg.transport.planes;
        let qb = stream_ptr_bits(p.wq_depth);
        let rng = &mut self.e.junk;
        let mut ins: Vec<(&str, u64)> = vec![("rst", u64::from(inp.rst))];
        let mut outs: Vec<(&str, u64)> = Vec::new();
        let mut wide: Vec<(&str, Bits)> = Vec::new();
        let mut junked: Vec<&str> = Vec::new();
        let mut bins: Vec<&'static str> = Vec::new();

        // The start.
        if t.state == 0 && !inp.rst {
            ins.push(("start_ok", u64::from(t.start_ok)));
            if t.start_ok {
                ins.push(("frames", t.frames as u64));
            } else {
                junked.push("frames");
            }
        } else {
            junked.extend(["start_ok", "frames"]);
        }
        match &t.ready {
            Some((work, probe)) => {
                wide.push(("s_ready", set_bits(p.conns, work)));
                wide.push(("s_probe", set_bits(p.conns, probe)));
            }
            None => junked.extend(["s_ready", "s_probe"]),
        }
        if let Some(c) = t.probe {
            bins.push(if t.frames >= FRAME_QUEUE { "start_probes_only" } else { "start_probe" });
            outs.extend([("m_probe_valid", 1), ("m_probe_conn", u64::from(c))]);
        }
        outs.push(("m_sched_idle", u64::from(t.idle_after)));

        // The telemetry read.
        match ot.trd {
            Some(c) => {
                bins.push(if inp.trd_ready { "start_read" } else { "trd_held" });
                ins.push(("m_trd_ready", u64::from(inp.trd_ready)));
                outs.extend([("m_trd_valid", 1), ("m_trd_conn", u64::from(c))]);
            }
            None => junked.push("m_trd_ready"),
        }
        let trd_names = ["s_trd_state", "s_trd_inflight", "s_trd_cwnd", "s_trd_weight"];
        if ot.trd_resp_ready {
            outs.push(("s_trd_ready", 1));
            ins.push(("s_trd_valid", u64::from(inp.trd.is_some())));
            match &inp.trd {
                Some(v) => {
                    let lane = |w: u32, f: &dyn Fn(&tel::View) -> u64| {
                        let mut b = Bits::zero(n * w);
                        for (i, x) in v.paths.iter().enumerate() {
                            put_field(&mut b, i as u32 * w, w, f(x));
                        }
                        b
                    };
                    wide.push(("s_trd_state", lane(pt::STATE.width, &|x| u64::from(x.state))));
                    wide.push(("s_trd_inflight", lane(pt::INFLIGHT.width, &|x| u64::from(x.inflight))));
                    wide.push(("s_trd_cwnd", lane(pt::CWND.width, &|x| u64::from(x.cwnd))));
                    wide.push(("s_trd_weight", lane(pt::WEIGHT.width, &|x| u64::from(x.weight))));
                }
                None => {
                    bins.push("trd_answer_wait");
                    junked.extend(trd_names);
                }
            }
        } else {
            junked.push("s_trd_valid");
            junked.extend(trd_names);
        }

        // The decision's levels.
        let dec_names = [
            "ts_now",
            "port_ready",
            "s_ctx_npaths",
            "s_ctx_inflight",
            "s_ctx_cap",
            "s_ctx_rr_stream",
            "s_ctx_wprobe_armed",
            "s_retx_valid",
            "s_retx_path",
            "s_retx_psn",
            "s_retx_queued",
            "s_pm_plane",
            "s_pm_timed_out",
            "s_pm_next_psn",
            "s_pm_cum_acked",
            "s_pm_probe_pending",
            "s_pm_clr",
            "s_sw_pend",
            "s_sw_tail",
            "s_sw_next_msn",
            "s_sw_started",
            "s_sw_remote_completed",
            "mark_valid",
            "mark_until",
        ];
        match &t.read {
            Some(r) => {
                if t.state == 2 {
                    bins.push("decide_after_pop");
                }
                ins.extend([
                    ("ts_now", u64::from(r.ts)),
                    ("port_ready", u64::from(r.port_ready)),
                    ("s_ctx_npaths", u64::from(r.npaths)),
                    ("s_ctx_inflight", r.inflight_bytes),
                    ("s_ctx_cap", u64::from(r.cap)),
                    ("s_ctx_rr_stream", u64::from(r.rr_stream)),
                    ("s_ctx_wprobe_armed", u64::from(r.wprobe_armed)),
                    ("s_wp_full", u64::from(r.wp_full)),
                    ("s_retx_valid", u64::from(r.retx.is_some())),
                ]);
                if r.port_ready & mask(planes) as u32 != mask(planes) as u32 {
                    bins.push("decide_port_full");
                }
                match r.retx {
                    Some((path, psn)) => {
                        bins.push(if r.queued { "head_queued" } else { "head_stale" });
                        ins.extend([
                            ("s_retx_path", u64::from(path)),
                            ("s_retx_psn", u64::from(psn)),
                            ("s_retx_queued", u64::from(r.queued)),
                        ]);
                    }
                    None => junked.extend(["s_retx_path", "s_retx_psn", "s_retx_queued"]),
                }
                let pm = |i: u32| r.paths.get(i as usize).copied();
                wide.push(("s_pm_plane", fields(rng, n, pt::PLANE.width, |i| pm(i).map(|x| u64::from(x.plane)))));
                wide.push(("s_pm_timed_out", fields(rng, n, 1, |i| pm(i).map(|x| u64::from(x.timed_out)))));
                wide.push(("s_pm_next_psn", fields(rng, n, 24, |i| pm(i).map(|x| u64::from(x.next_psn)))));
                wide.push(("s_pm_cum_acked", fields(rng, n, 24, |i| pm(i).map(|x| u64::from(x.cum_acked)))));
                wide.push(("s_pm_probe_pending", fields(rng, n, 1, |i| pm(i).map(|x| u64::from(x.probe_pending)))));
                wide.push(("s_pm_clr", fields(rng, n, 1, |i| pm(i).map(|x| u64::from(x.clr)))));
                let sw = |i: u32| r.words[i as usize];
                wide.push(("s_sw_pend", fields(rng, s, qb, |i| Some(u64::from(sw(i).pend)))));
                wide.push(("s_sw_tail", fields(rng, s, qb, |i| Some(u64::from(sw(i).tail)))));
                wide.push(("s_sw_next_msn", fields(rng, s, 24, |i| Some(u64::from(sw(i).next_msn)))));
                wide.push(("s_sw_started", fields(rng, s, 1, |i| Some(u64::from(sw(i).pend_started)))));
                wide.push(("s_sw_remote_completed", fields(rng, s, 24, |i| Some(u64::from(sw(i).remote_completed)))));
                let mk = |q: u32| r.marks.get(q as usize).copied().flatten();
                wide.push(("mark_valid", fields(rng, planes, 1, |q| Some(u64::from(mk(q).is_some())))));
                wide.push(("mark_until", fields(rng, planes, 32, |q| mk(q).map(u64::from))));
                if r.marks.iter().flatten().any(|&u| !tel::ts_reached(r.ts, u)) {
                    bins.push("decide_plane_marked");
                }
            }
            None => {
                junked.extend(dec_names);
                junked.push("s_wp_full");
            }
        }
        if let Some(c) = t.pop {
            bins.push("pop");
            outs.extend([("m_pop_valid", 1), ("m_pop_conn", u64::from(c))]);
        }
        if let Some((c, pw)) = t.stall {
            let r = t.read.as_ref().expect("a stall is a decision's");
            let heads: Vec<StreamHead> = r.words.iter().map(stream_head).collect();
            let stream = stream_choice(&heads, r.rr_stream, p.cfg.hardware.msg_table_depth).is_some();
            bins.push(match (pw, r.retx.is_some() && r.queued, stream) {
                (true, true, _) => "stall_retx_port",
                (true, false, _) => "stall_new_port",
                (false, _, true) => "stall_no_path",
                (false, _, false) => "stall_no_stream",
            });
            outs.extend([("m_stall_valid", 1), ("m_stall_conn", u64::from(c)), ("m_stall_port_wait", u64::from(pw))]);
        }
        if let Some(c) = t.wprobe {
            bins.push("wprobe_armed");
            outs.extend([("m_wprobe_valid", 1), ("m_wprobe_conn", u64::from(c))]);
        }
        if let Some((c, clr)) = t.clr {
            if clr != 0 {
                bins.push("clr_taken");
            }
            outs.extend([("m_clr_valid", 1), ("m_clr_conn", u64::from(c)), ("m_clr_mask", u64::from(clr))]);
        }
        if t.wprobe_full {
            bins.push("wprobe_full");
            outs.push(("m_stat_wprobe_full", 1));
        }
        if t.ring_full {
            bins.push("ring_full");
            outs.push(("m_stat_ring_full", 1));
        }

        // The path request.
        match &ot.psel {
            Some(q) => {
                bins.push(if inp.psel_ready { "psel_issued" } else { "psel_held" });
                ins.push(("m_psel_ready", u64::from(inp.psel_ready)));
                let mut wbits = Bits::zero(n * pt::WEIGHT.width);
                for (i, &x) in q.weight.iter().enumerate() {
                    put_field(&mut wbits, i as u32 * pt::WEIGHT.width, pt::WEIGHT.width, u64::from(x));
                }
                wide.push(("m_psel_weight", wbits));
                outs.extend([
                    ("m_psel_valid", 1),
                    ("m_psel_conn", u64::from(q.conn)),
                    ("m_psel_elig", u64::from(q.elig)),
                    ("m_psel_clr", u64::from(q.clr)),
                ]);
            }
            None => junked.push("m_psel_ready"),
        }
        let sel_names = ["s_psel_path", "s_psel_none"];
        if t.state == 3 && t.issued && !inp.rst {
            ins.push(("walk_running", u64::from(t.walk_running)));
            if t.walk_running {
                bins.push("psel_held_by_walk");
            }
        } else {
            junked.push("walk_running");
        }
        if ot.psel_resp_ready {
            outs.push(("s_psel_ready", 1));
            ins.push(("s_psel_valid", u64::from(inp.psel.is_some())));
            match inp.psel {
                Some((_, path)) => {
                    if path.is_none() {
                        bins.push("psel_none");
                    }
                    ins.extend([
                        ("s_psel_path", u64::from(path.unwrap_or(0))),
                        ("s_psel_none", u64::from(path.is_none())),
                    ]);
                    if path.is_none() {
                        junked.push("s_psel_path");
                    }
                }
                None => {
                    bins.push("psel_answer_wait");
                    junked.extend(sel_names);
                }
            }
        } else {
            junked.push("s_psel_valid");
            junked.extend(sel_names);
        }
        if let Some(c) = &t.commit {
            outs.extend([
                ("m_commit_valid", 1),
                ("m_commit_conn", u64::from(c.conn)),
                ("m_commit_phys", u64::from(c.phys)),
                ("m_commit_full_after", u64::from(c.full_after)),
            ]);
            match c.retx {
                Some((path, psn)) => {
                    bins.push(if c.rnr_resend { "commit_rnr_resend" } else { "commit_retx" });
                    if path != c.phys {
                        bins.push("commit_retx_rerouted");
                    }
                    outs.extend([
                        ("m_commit_retx", 1),
                        ("m_commit_path", u64::from(path)),
                        ("m_commit_psn", u64::from(psn)),
                    ]);
                }
                None => {
                    bins.push("commit_new");
                    if c.full_after != 0 {
                        bins.push("commit_full_after");
                    }
                    outs.push(("m_commit_stream", u64::from(c.stream)));
                }
            }
        }
        if t.state == 2 && t.wait > 0 {
            bins.push("decide_wait");
        }
        self.taps.push_back(t.clone());
        if self.taps.len() > 1 {
            self.taps.pop_front();
        }
        // `junked` names a port also given a value when a field inside it
        // is junk: the value is set last.
        let mut v = port_row(&mut self.e.junk, &defs, &junked, ins.into_iter().chain(outs).collect());
        for (nm, b) in wide {
            let i = port_index(&defs, nm).unwrap_or_else(|| panic!("no port {nm}"));
            v[i] = b;
        }
        self.rows.push(v);
        for b in bins {
            self.count(b);
        }
    }

    fn run(&mut self, cycles: u64) {
        for _ in 0..cycles {
            self.step(false);
        }
    }

    /// Runs until a cycle's tap satisfies `done` (at most `limit` cycles;
    /// the traffic is built to get there well before).
    fn run_until(&mut self, limit: u64, what: &str, done: impl Fn(&SchedTap) -> bool) {
        for _ in 0..limit {
            self.step(false);
            if self.taps.back().is_some_and(&done) {
                return;
            }
        }
        panic!("{}: {what}: not within {limit} cycles", self.e.cfg.name);
    }
}

/// A SACK of `(conn, path)` acknowledging every psn before `cum`.
fn sack(conn: u32, path: u32, cum: u32) -> SackIn {
    SackIn {
        conn,
        path_id: path,
        cum_psn: cum,
        bitmap: [0; 4],
        ecn_cnt: 0,
        echo_ts: 0,
        rate_hint: 0xffff,
        stream_id: 0xff,
        completed_msn: 0,
        dport: tx_rig::UDP_PORT,
    }
}

/// Posts `n` requests of `len` bytes on `conn`, round robin over its
/// first `streams` streams.
#[allow(clippy::too_many_arguments)]
fn post(rig: &mut Rig, conn: u32, streams: u32, n: u64, op: u8, id: u64, len: u32, off: &mut u64) {
    for k in 0..n {
        rig.e.wrs.push_back(tx_rig::wr(conn, k as u32 % streams, op, id + k, *off % 0x2_0000, len));
        *off += u64::from(len).next_multiple_of(64) + 64;
    }
}

/// A SACK of `conn`'s path 0 acknowledging every packet the peer took
/// and did not answer.
fn sack_unanswered(rig: &mut Rig, conn: u32) {
    let un = rig.peer.unanswered.iter().filter(|&&(c, _, _)| c == conn);
    let cum = un.map(|&(_, _, psn)| psn + 1).max().unwrap_or(0);
    rig.e.sacks.push_back(sack(conn, 0, cum));
}

/// `cfg` as the traffic runs it: short timers bring timeouts, RNR
/// resends and plane marks within a few thousand cycles; paths start with
/// a window of two packets, so a second packet in flight fills it, and
/// grow it past a ring of four slots, which then fills before the window.
fn tuned(cfg: &Config) -> Config {
    let mut cfg = tx_rig::short_timers(cfg, 10, 60);
    cfg.hardware.tx_ring_depth = 4;
    cfg.cc.init_cwnd_bytes = 2 * cfg.transport.mtu;
    cfg
}

/// The traffic of one run (see the module doc).
fn traffic(cfg: &Config, seed: u64) -> Rig {
    let cfg = tuned(cfg);
    let mut rig = Rig::new(cfg.clone(), seed);
    let streams = cfg.transport.streams_per_conn.min(4);
    let paths = cfg.transport.paths_per_conn;
    let mtu = cfg.transport.mtu;
    let mut off = 0u64;
    rig.open(1, 2.min(paths), 0);
    rig.open(2, 3.min(paths), 100);
    rig.open(3, 1, 0);
    rig.open(4, 4.min(paths), 7);
    rig.open(5, 1, 0);
    rig.run(300);

    // Several connections and streams under loss, the handshakes and
    // frames held now and then, ports toggling.
    rig.e.press = Pressure { axis: 20, ar: 10, r_gap: 10, cqe: 10 };
    rig.e.trd_hold = 30;
    rig.e.psel_hold = 30;
    rig.peer.loss = 8;
    rig.toggle = 3;
    burst(&mut rig.e, 1, streams, 2, 0, &mut off);
    burst(&mut rig.e, 2, streams, 2, 100, &mut off);
    burst(&mut rig.e, 4, streams, 2, 200, &mut off);
    rig.run(6_000);
    rig.toggle = 0;
    rig.e.port_ready = u32::MAX;
    rig.peer.loss = 0;

    // RNR NACKs for packets of a muted connection: their resends come
    // back as retransmit queue heads after the back-off.
    rig.peer.mute.insert(3);
    rig.peer.unanswered.clear();
    post(&mut rig, 3, streams, 3, op::WRITE, 300, 2 * mtu, &mut off);
    rig.run(800);
    let sent: Vec<(u32, u32, u32)> = rig.peer.unanswered.iter().copied().filter(|&(c, _, _)| c == 3).collect();
    for &(c, path, psn) in sent.iter().take(3) {
        rig.e.nacks.push_back(NackIn { conn: c, path_id: path, code: NackCode::Rnr as u8, psn });
    }
    rig.run_until(20_000, "an RNR resend", |t| t.commit.as_ref().is_some_and(|c| c.rnr_resend));
    rig.run(500);
    rig.peer.mute.remove(&3);
    sack_unanswered(&mut rig, 3);
    rig.run(500);

    // Connection 5 muted with packets in flight; every port held, BAD_HDR
    // NACKs queue them, whose head waits for its port; then one
    // SACK acknowledges them all, which wakes the connection: its
    // decisions pop the stale heads, one each L cycles.
    rig.peer.mute.insert(5);
    rig.peer.unanswered.clear();
    post(&mut rig, 5, streams, 4, op::WRITE, 500, 4 * mtu, &mut off);
    let out5 = |r: &Rig| r.peer.unanswered.iter().filter(|&&(c, _, _)| c == 5).count();
    while out5(&rig) < 1 {
        rig.run(100);
        assert!(rig.rows.len() < 200_000, "{}: connection 5 sends", cfg.name);
    }
    rig.run(300);
    rig.e.port_ready = 0;
    let lost: Vec<(u32, u32, u32)> = rig.peer.unanswered.iter().copied().filter(|&(c, _, _)| c == 5).collect();
    for (c, path, psn) in lost {
        rig.e.nacks.push_back(NackIn { conn: c, path_id: path, code: NackCode::BadHdr as u8, psn });
    }
    let head_waits = |t: &SchedTap| t.stall == Some((5, true)) && t.read.as_ref().is_some_and(|r| r.retx.is_some());
    rig.run_until(20_000, "connection 5's head waits for its port", head_waits);
    rig.run(1_000);
    sack_unanswered(&mut rig, 5);
    rig.run_until(5_000, "a stale head popped", |t| t.pop.is_some());
    rig.run(400);
    rig.e.port_ready = u32::MAX;
    rig.run(1_000);
    rig.peer.mute.remove(&5);
    // Its window is small after the timeout: new data fills it.
    burst(&mut rig.e, 5, streams, 1, 550, &mut off);
    rig.run(2_000);

    // Connection 2 muted with two short requests: its tail timer (and, in
    // `small`, its timeouts) PROBE its paths, with the output held so the frame queue fills and
    // only PROBEs may start; connections 1 and 4 keep sending meanwhile. In
    // `small` the timeouts go on until its paths are declared SUSPECT and
    // their planes marked (`default`'s RTO scanner visits each of its
    // 65,536 path entries once per 65,536 cycles: three timeouts would take
    // some 200,000 cycles).
    rig.peer.mute.insert(2);
    post(&mut rig, 2, 2, 2, op::SEND, 600, 200, &mut off);
    burst(&mut rig.e, 1, streams, 3, 700, &mut off);
    burst(&mut rig.e, 4, streams, 1, 750, &mut off);
    rig.e.press = Pressure { axis: 85, ar: 10, r_gap: 10, cqe: 10 };
    let probes_only = |t: &SchedTap| t.probe.is_some() && t.frames >= FRAME_QUEUE;
    rig.run_until(40_000, "a PROBE with the frame queue full", probes_only);
    if cfg.transport.connections <= 64 {
        let marked = |t: &SchedTap| {
            t.read.as_ref().is_some_and(|r| r.marks.iter().flatten().any(|&u| !tel::ts_reached(r.ts, u)))
        };
        rig.run_until(60_000, "a plane marked", marked);
    }
    rig.run(3_000);
    rig.e.press = Pressure { axis: 10, ar: 10, r_gap: 10, cqe: 10 };
    rig.peer.mute.remove(&2);
    rig.run(2_000);

    // The peer's message table: SACKs naming no stream leave a fresh
    // connection's completed_msn at 0, so its stream 0 stops at
    // msg_table_depth messages; once they are acknowledged nothing is in
    // flight and a window probe is armed. (Two requests wait, within the
    // queue's depth.)
    rig.open(6, 1, 0);
    rig.run(100);
    let depth = u64::from(cfg.hardware.msg_table_depth);
    post(&mut rig, 6, 1, depth + 2, op::SEND, 800, 1, &mut off);
    rig.run_until(20_000, "a window probe", |t| t.wprobe.is_some());
    rig.run(1_000);

    // A ring full: connection 3 (one path) first grows its window past
    // the ring, then is muted with long requests: its ring fills before
    // its window; then a SACK frees it.
    post(&mut rig, 3, streams, 2, op::WRITE, 840, 12 * mtu, &mut off);
    rig.run(8_000);
    rig.peer.mute.insert(3);
    rig.peer.unanswered.clear();
    post(&mut rig, 3, streams, 2, op::WRITE_IMM, 850, 12 * mtu, &mut off);
    rig.run_until(40_000, "a ring full", |t| t.ring_full);
    rig.peer.mute.remove(&3);
    sack_unanswered(&mut rig, 3);
    rig.run(3_000);

    // Windows and rings full: long requests on one path, ports toggling.
    rig.toggle = 2;
    post(&mut rig, 3, streams, 3, op::WRITE_IMM, 900, 12 * mtu, &mut off);
    burst(&mut rig.e, 1, streams, 2, 1000, &mut off);
    rig.run(5_000);
    rig.toggle = 0;
    rig.e.port_ready = u32::MAX;

    // Payload reads that fail (connection 5's, the host's bad range) fail
    // their connection while two fresh connections' decisions wait for
    // their path answers: the answer is not taken while the failure's walk
    // runs. The peer names each packet's stream and msn: the two send past
    // its message table.
    rig.peer.window = true;
    rig.e.psel_hold = 80;
    rig.open(7, 2.min(paths), 0);
    rig.open(8, 2.min(paths), 0);
    rig.run(100);
    for k in 0..10u64 {
        burst(&mut rig.e, 7, streams, 1, 1100 + 10 * k, &mut off);
        burst(&mut rig.e, 8, streams, 1, 1200 + 10 * k, &mut off);
        let bad = tx_rig::BAD.0 - tx_rig::MEM_BASE + 0x40;
        rig.e.wrs.push_back(tx_rig::wr(5, 0, op::WRITE, 1300 + k, bad, 300));
        rig.run(1_000);
        rig.open(5, 1, 0);
        rig.run(300);
    }
    rig.e.press = Pressure::default();
    rig.e.trd_hold = 0;
    rig.e.psel_hold = 0;
    rig.run(2_000);
    rig
}

fn replay_config(cfg: &Config) -> Run {
    let rig = traffic(cfg, 0x5c4e);
    Run { defs: rig.defs, rows: rig.rows, seen: rig.seen }
}

/// The model's scheduler and the unit, cycle by cycle, both configs:
/// every output equal every cycle, and the run covered what it is meant to.
#[test]
fn icarus_scheduler_control_is_the_models() {
    replay_configs(
        "tx-sched",
        sched::NAME,
        write,
        replay_config,
        &[
            "start_read",
            "start_probe",
            "start_probes_only",
            "trd_held",
            "trd_answer_wait",
            "head_queued",
            "head_stale",
            "pop",
            "decide_after_pop",
            "decide_port_full",
            "stall_retx_port",
            "stall_new_port",
            "stall_no_path",
            "stall_no_stream",
            "wprobe_armed",
            "clr_taken",
            "ring_full",
            "psel_issued",
            "psel_held",
            "psel_answer_wait",
            "psel_held_by_walk",
            "commit_new",
            "commit_full_after",
            "commit_retx",
            "commit_rnr_resend",
        ],
    );
}

/// Verilator `-Wall` with no waivers and `iverilog -g2005 -Wall` silent,
/// for both configs; Yosys: no latch after `proc` and `check -assert` (no
/// undriven net, no second driver, no loop).
#[test]
fn tools_accept_the_scheduler_control() {
    tools_check_configs("tx-sched", write);
}
