//! The acknowledgement unit's SACK stages of `tx_engine`
//! (`mrnic_hdl::tx_engine::stage`, a clocked unit of the engine's
//! generator) against the cycle model, trace-driven: the model `TxEngine`
//! runs real traffic (`tx_rig`) with its `taps.stage` on. Each stage's step
//! records the continuation it ran, `ts_now`, what it read (context,
//! every path's mirror and ring slots, `last_progress`, the stream's
//! `remote_completed`), its walk and what the tables held after it; each
//! continuation is recorded as it is made, each failure as it happens.
//! The rows put each read and write where the unit's timing places it
//! (module doc of `tx_stage`): the continuation handed over by `tx_sack`
//! at `t + 2L + 2 x span` of its SACK (by the tail timer's step `L`
//! cycles after it), the reads' answer at `t + L`, the walk's reads a
//! cycle each as the unit issues them, speculative ones included (the
//! schedule is simulated here from the model's walk: where each path
//! broke and where a silent loss stopped it), their answers `L` cycles
//! later, and the end. The test checks the issued reads are the model's
//! count ([`stage_cycles`]), every write lands before the count frees the
//! unit, and Icarus replays the rows into the generated unit, every
//! output compared every cycle, for `small` and `default`.
//!
//! Inputs the unit must not look at carry junk: the continuation's and
//! the failure's fields without their valid, the reads outside their
//! answer's cycle and every field of them a stage does not use (a dead
//! continuation's all; the finish's all but the stream's
//! `remote_completed`, and that for a stream_id past the streams; the
//! mirrors of paths RACK does not walk, `last_progress` outside RACK),
//! every answer of a read the unit issued past a break or a stop, a
//! slot's fields its state does not ask for, `ts_now` outside a step.
//!
//! A missing tool skips the test with a message, except under CI=true,
//! where it fails.

mod common;
mod tx_rig;

use std::collections::HashMap;

use common::Scratch;
use mrnic_hdl::tx_engine::stage;
use mrnic_hdl::Module;
use mrnic_model::block::Bits;
use mrnic_model::path_telemetry as tel;
use mrnic_model::tx_engine::*;
use mrnic_proto::tables::path as pt;
use mrnic_proto::Config;
use tx_rig::{burst, put_field, replay_configs, sack_tuned, tools_check_configs, Rows, Run, Traffic, BAD, MEM_BASE};

/// The SACK handler's test config with every RTO at the floor, so that a
/// muted connection's paths die sooner.
fn tuned(cfg: &Config) -> Config {
    let mut cfg = sack_tuned(cfg);
    cfg.timers.rto_max_us = cfg.timers.rto_min_us;
    cfg
}

fn write(dir: &Scratch, p: &TxEngineParams) -> (Module, std::path::PathBuf) {
    let m = stage::build(&TxEngineParams::from_config(&tuned(&p.cfg)).unwrap());
    let rtl = tx_rig::write_unit(dir, &m, "tx_engine SACK stages", "tx_engine_stage");
    (m, rtl)
}

/// The engine, a peer SACKing its data frames, and the unit's rows.
struct Rig {
    tr: Traffic,
    rows: Rows,
    seen: HashMap<&'static str, u32>,
    free_at: usize,
    /// The continuation as the unit holds it, from a row on: (valid,
    /// wait), and the rows a SACK's continuation is handed over at, with
    /// its connection.
    cont: Vec<(usize, bool, bool)>,
    loads: Vec<(usize, u32)>,
    l: usize,
}

impl Rig {
    fn new(cfg: Config, seed: u64) -> Rig {
        let p = TxEngineParams::from_config(&cfg).unwrap();
        let mut tr = Traffic::new(cfg, seed);
        tr.e.tx.taps.stage = Some(StageTap::default());
        let l = p.read_latency as usize;
        let mut r = Rig {
            tr,
            rows: Rows::new(stage::ports(&p)),
            seen: HashMap::new(),
            free_at: 0,
            cont: Vec::new(),
            loads: Vec::new(),
            l,
        };
        r.put(0, "rst", 1);
        r
    }

    fn run(&mut self, cycles: u64) {
        for _ in 0..cycles {
            self.step();
        }
    }

    fn step(&mut self) {
        self.tr.clock();
        let t = self.rows.len();
        self.put(t, "rst", 0);
        let Some(tap) = self.tr.e.tx.taps.stage.clone() else { return };
        assert!(tap.fails.len() <= 1, "one failure a cycle");
        for &c in &tap.fails {
            // A continuation handed over later than its connection fails
            // would miss it (architecture.md, tx_engine item 10(b)).
            assert!(
                !self.loads.iter().any(|&(at, lc)| at > t && lc == c),
                "row {t}: connection {c} fails inside its SACK's window"
            );
            self.puts(t, &[("s_fail_valid", 1), ("s_fail_conn", u64::from(c))]);
        }
        if let Some(k) = &tap.cont {
            self.load(t, k);
        }
        if let Some(r) = &tap.step {
            self.stage(t, r);
        }
    }

    fn count(&mut self, what: &'static str) {
        *self.seen.entry(what).or_default() += 1;
    }

    fn put(&mut self, at: usize, name: &str, v: u64) {
        self.rows.put(at, name, v);
    }

    fn puts(&mut self, at: usize, v: &[(&str, u64)]) {
        for &(n, x) in v {
            self.put(at, n, x);
        }
    }

    /// A continuation made at row `t`: handed over by `tx_sack` at its
    /// passes' end, or by the tail timer's step when its read answers.
    fn load(&mut self, t: usize, k: &StageCont) {
        let l = self.l;
        let c = u64::from(k.conn);
        if k.tail {
            let at = t + l;
            self.count("cont_tail");
            self.puts(at, &[("s_tail_valid", 1), ("s_tail_conn", c)]);
            self.cont.push((at + 1, true, false));
            return;
        }
        let at = t + 2 * l + 2 * k.span as usize;
        self.loads.push((at, k.conn));
        self.puts(
            at,
            &[
                ("s_cont_valid", 1),
                ("s_cont_conn", c),
                ("s_cont_wait", u64::from(k.wait)),
                ("s_cont_touched", bits_of(&k.touched)),
                ("s_cont_stream_id", u64::from(k.stream_id)),
                ("s_cont_completed_msn", u64::from(k.completed_msn)),
            ],
        );
        self.cont.push((at + 1, true, k.wait));
    }

    /// A stage's step at row `t`: every port of its window placed.
    fn stage(&mut self, t: usize, r: &StageRec) {
        let p = self.tr.e.tx.params().clone();
        let (l, np) = (self.l, p.paths);
        assert!(t >= self.free_at, "a step starts only once the last one's window is over");
        self.loads.retain(|&(at, _)| at > t);
        let c = u64::from(r.conn);
        let sb = p.stream_bits;
        self.puts(
            t,
            &[
                ("ts_now", u64::from(r.ts)),
                ("s_go_stage", 1),
                ("m_busy", 1),
                ("m_rd_valid", 1),
                ("m_rd_conn", c),
                ("m_rd_stream", u64::from(r.stream_id) & ((1 << sb) - 1)),
            ],
        );
        let a = t + l;
        let kind = match (r.dead, r.stage, r.tail) {
            (true, _, _) => "dead",
            (false, SackStage::Overdue(_), _) => "overdue",
            (false, SackStage::Tail, false) => "arm",
            (false, SackStage::Tail, true) => "probe",
            (false, SackStage::Finish, _) => "finish",
        };
        self.count(kind);
        if r.walk_started {
            self.count("finish_walk");
            self.puts(t, &[("m_done_valid", 1), ("m_done_conn", c), ("m_done_touched", bits_of(&r.touched))]);
        }
        // The answer.
        let db = mrnic_hdl::expr::index_bits(p.ring_depth) + 1;
        let mut vecs = Vecs::new(&mut self.tr.e.junk, np, db);
        let below = |q: u32| q < r.npaths;
        match kind {
            "overdue" => {
                let SackStage::Overdue(first) = r.stage else { unreachable!() };
                self.puts(
                    a,
                    &[("s_rd_npaths", u64::from(r.npaths)), ("s_rd_rack_valid", u64::from(r.rack_sent.is_some()))],
                );
                if let Some(s) = r.rack_sent {
                    self.puts(a, &[("s_rd_rack_sent", u64::from(s)), ("s_rd_rack_rtt", u64::from(r.rack_rtt))]);
                    for q in (first..np).filter(|&q| below(q)) {
                        vecs.path(q, &r.mirrors[q as usize]);
                    }
                    for q in 0..np {
                        put_field(&mut vecs.lp, 32 * q, 32, u64::from(r.last_progress[q as usize]));
                    }
                } else {
                    self.count("overdue_no_rack");
                }
            }
            "arm" => {
                self.puts(a, &[("s_rd_npaths", u64::from(r.npaths)), ("s_rd_pend", u64::from(r.pend_streams > 0))]);
                if r.pend_streams > 0 {
                    self.count("arm_pend");
                } else {
                    self.put(a, "s_rd_rack_rtt", u64::from(r.rack_rtt));
                    for q in (0..np).filter(|&q| below(q)) {
                        vecs.path(q, &r.mirrors[q as usize]);
                    }
                }
            }
            "probe" => {
                self.puts(
                    a,
                    &[
                        ("s_rd_npaths", u64::from(r.npaths)),
                        ("s_rd_rack_rtt", u64::from(r.rack_rtt)),
                        ("s_rd_probe_q", u64::from(r.probe_q)),
                    ],
                );
                let mut pp = 0u64;
                for q in (0..np).filter(|&q| below(q)) {
                    vecs.path(q, &r.mirrors[q as usize]);
                    pp |= u64::from(r.mirrors[q as usize].probe_pending) << q;
                }
                self.put(a, "s_pm_probe_pending", pp);
            }
            "finish" if r.stream_id < p.streams => {
                self.put(a, "s_rd_remote_completed", u64::from(r.remote_completed));
                if r.remote_completed_after != r.remote_completed {
                    self.count("finish_moved");
                    self.puts(
                        a,
                        &[
                            ("m_rc_valid", 1),
                            ("m_rc_conn", c),
                            ("m_rc_stream", u64::from(r.stream_id)),
                            ("m_rc_msn", u64::from(r.remote_completed_after)),
                        ],
                    );
                } else {
                    self.count("finish_same");
                }
            }
            _ => {}
        }
        for (n, b) in vecs.ports() {
            self.rows.put_bits(a, n, b);
        }
        // The walk, as the unit issues it.
        let end = self.walk(a, r);
        let cycles = r.cycles as usize;
        self.free_at = t + l + 2 + cycles;
        assert!(end < self.free_at, "the last write lands before the count frees the unit");
        if kind == "arm" {
            let at = r.tail_at.expect("the arm writes the tail timer");
            if at.is_some() {
                self.count("arm_armed");
            } else if r.pend_streams == 0 {
                self.count("arm_nothing_outstanding");
            }
            self.puts(
                end,
                &[
                    ("m_tail_valid", 1),
                    ("m_tail_conn", c),
                    ("m_tail_armed", u64::from(at.is_some())),
                    ("m_tail_at", u64::from(at.unwrap_or(0))),
                ],
            );
        }
        match (kind, r.cont) {
            ("overdue" | "arm", Some((st, wait))) => {
                if let (SackStage::Overdue(_), "overdue") = (st, kind) {
                    self.count("overdue_resumes");
                }
                self.cont.push((end + 1, true, wait));
            }
            ("overdue" | "arm", None) => panic!("RACK and the arm leave the continuation"),
            (_, None) => self.cont.push((end + 1, false, false)),
            (_, Some(_)) => panic!("the other stages end it"),
        }
    }

    /// The walk's reads from the answer `a`, cycle by cycle as the unit
    /// issues them (the model's walk says where each path broke and where
    /// a silent loss stopped it), their answers and writes; returns the
    /// end's row (the last answer, or `a` with nothing read), after
    /// checking the reads issued are the model's count.
    fn walk(&mut self, a: usize, r: &StageRec) -> usize {
        let l = self.l;
        let c = u64::from(r.conn);
        let paths: Vec<StageWalk> = r.walk.iter().copied().filter(|w| w.span > 0).collect();
        let probed = |q: u32| r.probes.contains(&q);
        let mut retx = r.retx.iter();
        let mut events = r.events.iter();
        // SILENT events sent this step, per path: the first
        // suspect_after_rtos of a path's uncharged losses send one.
        let mut sent = [0u32; 16];
        let mut probes = r.probes.iter();
        let (mut ip, mut id) = (0usize, 0u32);
        let mut inflight: Vec<(usize, usize, u32)> = Vec::new();
        let mut broken = vec![false; paths.len()];
        let mut stop: Option<usize> = None;
        let mut issued = 0;
        let mut losses_on = Vec::new();
        let mut x = a;
        loop {
            // The answer of the read issued L cycles ago.
            let mut moves = None;
            if let Some(&(_, pi, d)) = inflight.iter().find(|&&(at, _, _)| at + l == x) {
                let w = paths[pi];
                if broken[pi] || stop.is_some_and(|s| pi > s) {
                    self.count("answer_ignored");
                } else {
                    assert!(d < w.reads, "a live answer is within the model's reads");
                    let slot = r.slots[w.path as usize][d as usize];
                    let after = r.slots_after[w.path as usize][d as usize];
                    self.put(x, "s_ring_valid", u64::from(slot.is_some()));
                    if let Some(s) = slot {
                        self.puts(
                            x,
                            &[("s_ring_queued", u64::from(s.queued)), ("s_ring_rnr_wait", u64::from(s.rnr_wait))],
                        );
                        if !s.queued && !s.rnr_wait {
                            self.puts(x, &[("s_ring_resent", u64::from(s.resent)), ("s_ring_sent", u64::from(s.sent))]);
                        }
                        let a = after.expect("a stage empties no slot");
                        if !s.queued && a.queued {
                            self.lost(x, r, w.path, d, s, a.charge, &mut retx, &mut events, &mut sent);
                            if !losses_on.contains(&w.path) {
                                losses_on.push(w.path);
                            }
                        }
                    }
                    let brk = d + 1 == w.reads && (w.reads < w.span || probed(w.path));
                    if brk {
                        broken[pi] = true;
                        if probed(w.path) && matches!(r.stage, SackStage::Tail) {
                            assert_eq!(probes.next(), Some(&w.path), "PROBEs in path order");
                            self.puts(
                                x,
                                &[("m_probe_valid", 1), ("m_probe_conn", c), ("m_probe_path", u64::from(w.path))],
                            );
                            self.count("probe_queued");
                        }
                        if w.reads < w.span {
                            self.count("break_early");
                        }
                        if ip == pi {
                            moves = Some(pi + 1);
                        }
                    }
                    if w.silent_at == Some(d) && stop.is_none() {
                        stop = Some(pi);
                    }
                }
            }
            inflight.retain(|&(at, _, _)| at + l > x);
            if let Some(n) = moves {
                (ip, id) = (n, 0);
            }
            let issue = ip < paths.len() && stop.is_none_or(|s| ip <= s);
            if issue {
                let w = paths[ip];
                let m = r.mirrors[w.path as usize];
                self.puts(
                    x,
                    &[
                        ("m_ring_rd_valid", 1),
                        ("m_ring_rd_conn", c),
                        ("m_ring_rd_path", u64::from(w.path)),
                        ("m_ring_rd_psn", u64::from((m.cum_acked + id) & 0xff_ffff)),
                        ("m_hold_valid", 1),
                        ("m_hold_cnt", 2),
                    ],
                );
                inflight.push((x, ip, id));
                issued += 1;
                id += 1;
                if id == w.span {
                    (ip, id) = (ip + 1, 0);
                }
            } else if inflight.is_empty() {
                break;
            }
            x += 1;
        }
        assert_eq!(issued, r.cycles, "the reads the unit issues are the model's count");
        assert!(retx.next().is_none() && events.next().is_none() && probes.next().is_none(), "every push placed");
        if stop.is_some() {
            self.count("overdue_stop");
            if matches!(r.cont, Some((SackStage::Overdue(_), _))) {
                self.count("stop_before_later_path");
            }
        }
        if losses_on.len() > 1 {
            self.count("losses_on_several_paths");
        }
        if paths.len() > 1 {
            self.count("walk_several_paths");
        }
        x
    }

    /// A RACK loss at row `x`: written queued with its charge, pushed, and
    /// uncharged a SILENT event of its copy's path unless the path had
    /// `suspect_after_rtos` of them this step (`sent`).
    #[allow(clippy::too_many_arguments)]
    fn lost<'a>(
        &mut self,
        x: usize,
        r: &StageRec,
        path: u32,
        d: u32,
        s: Slot,
        charge: bool,
        retx: &mut impl Iterator<Item = &'a (u32, u32)>,
        events: &mut impl Iterator<Item = &'a tel::Event>,
        sent: &mut [u32],
    ) {
        let c = u64::from(r.conn);
        let psn = (r.mirrors[path as usize].cum_acked + d) & 0xff_ffff;
        assert_eq!(retx.next(), Some(&(path, psn)), "losses are queued in the walk's order");
        self.puts(
            x,
            &[
                ("s_ring_phys", u64::from(s.phys)),
                ("m_ring_lost_valid", 1),
                ("m_ring_lost_path", u64::from(path)),
                ("m_ring_lost_psn", u64::from(psn)),
                ("m_ring_lost_charge", u64::from(charge)),
                ("m_retx_valid", 1),
                ("m_retx_conn", c),
                ("m_retx_path", u64::from(path)),
                ("m_retx_psn", u64::from(psn)),
            ],
        );
        if charge {
            self.count("lost_charged");
        } else if sent[s.phys as usize] >= self.tr.e.cfg.timers.suspect_after_rtos {
            self.count("lost_silent_capped");
        } else {
            sent[s.phys as usize] += 1;
            self.count("lost_silent");
            let e = events.next().expect("a SILENT event of the uncharged loss");
            assert_eq!((e.kind, e.path, e.now), (tel::kind::SILENT, s.phys, r.ts));
            self.puts(
                x,
                &[
                    ("m_evt_valid", 1),
                    ("m_evt_kind", u64::from(e.kind)),
                    ("m_evt_conn", c),
                    ("m_evt_path", u64::from(s.phys)),
                    ("m_evt_now", u64::from(r.ts)),
                ],
            );
        }
    }

    /// The rows as port values: the continuation's outputs every row from
    /// its changes, the values placed, 0 on every other output, junk on
    /// every other input but the valids and `rst`.
    fn finish(mut self) -> Run {
        let end = self.free_at.max(self.cont.iter().map(|x| x.0).max().unwrap_or(0));
        self.rows.reach(end);
        self.cont.sort_by_key(|x| x.0);
        let mut changes = self.cont.iter().peekable();
        let (mut valid, mut wait) = (false, false);
        for row in 0..self.rows.len() {
            while let Some(&&(at, v, w)) = changes.peek().filter(|x| x.0 <= row) {
                debug_assert!(at <= row);
                (valid, wait) = (v, w);
                changes.next();
            }
            if valid {
                self.rows.put(row, "m_cont_valid", 1);
                self.rows.put(row, "m_cont_wait", u64::from(wait));
            }
        }
        let zero = ["rst", "s_go_stage", "s_cont_valid", "s_tail_valid", "s_fail_valid"];
        let mut r = self.rows.finish(&mut self.tr.e.junk, &zero, self.seen);
        tx_rig::next_of(&mut r, "m_cont_valid", "m_cont_next");
        r
    }
}

/// A bit per stream, stream 0 in bit 0.
fn bits_of(v: &[bool]) -> u64 {
    v.iter().enumerate().fold(0, |a, (i, &b)| a | u64::from(b) << i)
}

/// The answer's per-path vectors: junk but for the paths a stage reads.
struct Vecs {
    db: u32,
    next: Bits,
    cum: Bits,
    srtt: Bits,
    rttvar: Bits,
    lp: Bits,
}

impl Vecs {
    fn new(rng: &mut common::Rng, np: u32, db: u32) -> Vecs {
        Vecs {
            db,
            next: tx_rig::junk(rng, np * db),
            cum: tx_rig::junk(rng, np * 24),
            srtt: tx_rig::junk(rng, np * pt::SRTT.width),
            rttvar: tx_rig::junk(rng, np * pt::RTTVAR.width),
            lp: tx_rig::junk(rng, np * 32),
        }
    }

    fn path(&mut self, q: u32, m: &StageMirror) {
        let (sw, vw) = (pt::SRTT.width, pt::RTTVAR.width);
        let db = self.db;
        put_field(&mut self.next, db * q, db, u64::from(m.next_psn) & ((1 << db) - 1));
        put_field(&mut self.cum, 24 * q, 24, u64::from(m.cum_acked));
        put_field(&mut self.srtt, sw * q, sw, u64::from(m.srtt));
        put_field(&mut self.rttvar, vw * q, vw, u64::from(m.rttvar));
    }

    fn ports(self) -> [(&'static str, Bits); 5] {
        [
            ("s_pm_next_psn", self.next),
            ("s_pm_cum_acked", self.cum),
            ("s_pm_srtt", self.srtt),
            ("s_pm_rttvar", self.rttvar),
            ("s_lp", self.lp),
        ]
    }
}

/// The engine from reset with connections `1..=6` open (connection 5 on
/// one path).
fn start(cfg: &Config, seed: u64) -> (Rig, u64) {
    let mut rig = Rig::new(tuned(cfg), seed);
    let rto = tx_rig::open_six(&mut rig);
    (rig, rto)
}

impl tx_rig::Drive for Rig {
    fn traffic(&mut self) -> &mut Traffic {
        &mut self.tr
    }

    fn run(&mut self, cycles: u64) {
        Rig::run(self, cycles);
    }
}

/// Scenario 1: traffic under loss on every path of several connections
/// with SACKs now and then (RACK across paths finds other paths' packets
/// overdue, charged; the tail timer armed, fired and PROBEing; the
/// streams' completed msns moving), then a black-holed route of
/// connection 2 (uncharged losses, SILENT events, the stage stopping and
/// resuming at the next path), and requests whose payload reads fail
/// while SACKs' stages wait (dead continuations).
fn lossy(cfg: &Config, seed: u64) -> Rig {
    let (mut rig, rto) = start(cfg, seed);
    let streams = rig.tr.e.cfg.transport.streams_per_conn.min(4);
    let mut off = 0u64;
    rig.tr.peer.window = true;
    tx_rig::lossy_rounds(&mut rig, &mut off);
    // A black-holed route: a later path while the others lose packets now and
    // then (charged losses before the silent ones in one stage), then
    // path 0 (the stage stops there and resumes at path 1).
    let late: Vec<(u32, u64)> =
        (1..4).rev().filter(|&q| rig.tr.peer.sports.contains_key(&(2, q))).map(|q| (q, 15)).take(1).collect();
    for (path, loss) in late.into_iter().chain([(0, 5)]) {
        rig.tr.peer.loss = loss;
        let port = rig.tr.peer.sports[&(2, path)];
        rig.tr.peer.blackhole.insert(port);
        for k in 0..6 {
            burst(&mut rig.tr.e, 2, streams, 2, 50_000 + 100 * k + 1000 * u64::from(path), &mut off);
            rig.run(rto);
        }
        rig.tr.peer.blackhole.clear();
    }
    rig.tr.peer.loss = 0;
    rig.run(2 * rto);
    // Charged RACK losses on several paths in one stage: connection 1
    // muted, its first packet on each of three paths acknowledged (their
    // progress after the rest left), then, once more packets have left,
    // every packet of the path that sent last: the others' are overdue.
    const C: u32 = 1;
    // Its paths' windows grown first, so that each has several packets
    // in flight.
    rig.tr.peer.sack_rate = 100;
    for k in 0..2 {
        burst(&mut rig.tr.e, C, streams, 2, 61_000 + 100 * k, &mut off);
        rig.run(rto);
    }
    rig.tr.peer.sack_rate = 20;
    rig.tr.peer.mute.insert(C);
    rig.tr.peer.unanswered.clear();
    burst(&mut rig.tr.e, C, streams, 4, 60_000, &mut off);
    rig.run(600);
    let sent = |rig: &Rig, p: u32| -> Vec<u32> {
        rig.tr.peer.unanswered.iter().filter(|&&(c, q, _)| (c, q) == (C, p)).map(|x| x.2).collect()
    };
    let base = SackIn { conn: C, rate_hint: 0xffff, stream_id: 0xff, ..SackIn::default() };
    for p in 0..3 {
        if let Some(&first) = sent(&rig, p).first() {
            rig.tr.e.sacks.push_back(SackIn { path_id: p, cum_psn: (first + 1) & 0xff_ffff, ..base });
        }
    }
    rig.run(400);
    if let Some(&(_, p, _)) = rig.tr.peer.unanswered.last() {
        let last = *sent(&rig, p).last().expect("sent");
        rig.tr.e.sacks.push_back(SackIn { path_id: p, cum_psn: (last + 1) & 0xff_ffff, ..base });
    }
    rig.run(400);
    rig.tr.peer.mute.remove(&C);
    rig.run(2 * rto);
    // Failed payload reads among SACKed traffic.
    rig.tr.peer.loss = 10;
    for k in 0..8 {
        for c in [1, 3, 4] {
            burst(&mut rig.tr.e, c, streams, 1, 70_000 + 100 * k + u64::from(c), &mut off);
            let bad = tx_rig::wr(c, 0, 0, 90_000 + k + u64::from(c), BAD.0 - MEM_BASE + 64 * k, 300);
            rig.tr.e.wrs.push_back(bad);
        }
        rig.run(rto);
    }
    rig.run(4 * rto);
    rig
}

/// Scenario 2: plane 1 fails under connection 1 while it sends (its
/// path there times out; the later packets there are found lost with no
/// progress since they left: SILENT, a continuation that waits), tails
/// lost so the tail timer fires and PROBEs, then the plane back.
fn plane_down(cfg: &Config, seed: u64) -> Rig {
    let (mut rig, rto) = start(cfg, seed);
    let streams = rig.tr.e.cfg.transport.streams_per_conn.min(4);
    let mut off = 0u64;
    // A SACK of a connection that has sent nothing: no RACK send yet.
    // (`start` opens connection 6 at psn 60.)
    rig.tr.e.sacks.push_back(SackIn { conn: 6, cum_psn: 60, rate_hint: 0xffff, stream_id: 0xff, ..SackIn::default() });
    rig.run(200);
    rig.tr.down = Some(1);
    for k in 0..8 {
        burst(&mut rig.tr.e, 1, streams, 1, 10_000 + 100 * k, &mut off);
        rig.run(2 * rto);
    }
    rig.tr.down = None;
    // Connection 5 (one path) muted while SACKs of its path come in
    // back to back: its path dies and the connection fails between its
    // SACKs' stages (a dead continuation).
    rig.tr.peer.mute.insert(5);
    burst(&mut rig.tr.e, 5, streams, 1, 30_000, &mut off);
    rig.run(rto);
    let cum = rig.tr.peer.rx[&(5, 0)].cum;
    for _ in 0..1_000 {
        if rig.tr.e.tx.failed(5).is_some() {
            break;
        }
        let base =
            SackIn { conn: 5, cum_psn: cum, rate_hint: 0xffff, stream_id: 0, completed_msn: 0, ..SackIn::default() };
        rig.tr.e.sacks.push_back(base);
        rig.run(24);
    }
    rig.tr.peer.loss = 30;
    for k in 0..4 {
        burst(&mut rig.tr.e, 1, streams, 1, 20_000 + 100 * k, &mut off);
        rig.run(2 * rto);
    }
    rig
}

fn replay_config(cfg: &Config) -> Run {
    const SEED: u64 = 0x57a9;
    tx_rig::scenarios(
        cfg,
        &[("lossy", &|c| lossy(c, SEED).finish()), ("plane_down", &|c| plane_down(c, SEED).finish())],
    )
}

/// The model's SACK stages and the unit, cycle by cycle, both configs:
/// every output equal every cycle, the reads the model's count, each
/// write before the unit frees, and the run covered every outcome.
#[test]
fn icarus_sack_stages_are_the_models() {
    replay_configs(
        "tx-stage",
        stage::NAME,
        write,
        replay_config,
        &[
            "cont_tail",
            "overdue",
            "overdue_no_rack",
            "lost_silent",
            "overdue_stop",
            "stop_before_later_path",
            "overdue_resumes",
            "break_early",
            "walk_several_paths",
            "arm",
            "arm_pend",
            "arm_armed",
            "arm_nothing_outstanding",
            "probe",
            "probe_queued",
            "finish",
            "finish_moved",
            "finish_same",
            "finish_walk",
        ],
    );
}

/// Verilator `-Wall` with no waivers and `iverilog -g2005 -Wall` silent,
/// for both configs; Yosys: no latch after `proc` and `check -assert`.
#[test]
fn tools_accept_the_sack_stages() {
    tools_check_configs("tx-stage", write);
}
