//! The acknowledgement unit's control of `tx_engine`
//! (`mrnic_hdl::tx_engine::ack`, a clocked unit of the engine's generator)
//! against the cycle model, trace-driven: the model `TxEngine` runs real
//! traffic, wired as its tests wire it (`tx_rig`: path_telemetry's RTOs and
//! updates, path_selector, a peer that SACKs the data frames it sees),
//! with its `taps.ack` on. Each cycle records what the unit's turn saw
//! (the busy count and the holds from outside it, the events and walk
//! waiting, the scheduler, the input registers, a SACK between stages and
//! `tel_settled`, the timer queues' heads), the step it started with the
//! busy count its handler set, the RNR pushes, the scanner's compare, and
//! what the model showed on the unit's outputs; Icarus replays the inputs
//! into the generated unit and compares every output every cycle, for
//! `small` and `default`. The traffic: SACKs with holes (so losses, SILENT
//! events and stages waiting for path_telemetry), their completion walks
//! holding the unit, muted connections whose paths time out (RTOs and
//! updates), RNR NACKs whose back-offs expire and others made stale by a
//! failure or a loss of the path, streams blocked by the peer's message
//! table so that window probes arm and fire (and go stale when the peer
//! answers), tail timers, a reopen. Inputs the unit must not look at
//! carry junk: everything below the step that starts (or below a
//! waiting stage), every work input when no step may start, the events,
//! walk and scheduler levels while the count runs, a head's deadline
//! with its queue empty, the handler's count outside its step, the
//! scanner's answer while a hit waits, every input during the clear
//! sweep.
//!
//! A missing tool skips the test with a message, except under CI=true,
//! where it fails.

mod common;
mod tx_rig;

use std::collections::{HashMap, HashSet};

use common::Scratch;
use mrnic_hdl::tx_engine::{ack, timer};
use mrnic_hdl::Module;
use mrnic_model::block::{Bits, PortDef};
use mrnic_model::path_telemetry::{ts_reached, Consts};
use mrnic_model::tx_engine::*;
use mrnic_proto::packet::decode_frame;
use mrnic_proto::{Config, Header as Hdr, NackCode};
use tx_rig::{burst, mask, port_row, replay_configs, tools_check_configs, Engine, Peer, Pressure, Run, TimerRows};

fn write(dir: &Scratch, p: &TxEngineParams) -> (Module, std::path::PathBuf) {
    let m = ack::build(p);
    let rtl = tx_rig::write_unit(dir, &m, "tx_engine acknowledgement unit control", "tx_engine_ack");
    (m, rtl)
}

/// The unit's work inputs, in priority order.
const WORK: [&str; 11] = [
    "s_rto",
    "s_upd",
    "s_cont_valid",
    "s_cont_wait",
    "s_tel_settled",
    "s_sack",
    "s_nack",
    "s_rnr_valid",
    "s_rnr_until",
    "s_wp_valid",
    "s_wp_at",
];

/// The engine, a peer SACKing its data frames, and the unit's ports
/// recorded each cycle.
struct Rig {
    e: Engine,
    defs: Vec<PortDef>,
    rows: Vec<Vec<Bits>>,
    peer: Peer,
    seen: HashMap<&'static str, u32>,
    rto_min: u32,
    /// The longest the model's RNR and window-probe queues grew.
    most: (usize, usize),
    /// The frame leaving on `m_axis`, and the (conn, path) pairs whose
    /// data frames are lost before the peer sees them (a dead path).
    cur: Vec<u8>,
    dead: HashSet<(u32, u32)>,
    /// The last NACK step: (its row, ts_now then).
    nack_step: Option<(usize, u32)>,
    /// The last SACK step's row.
    sack_step: Option<usize>,
    /// `tx_timer`'s rows, after the clear sweep.
    timer: Option<TimerRows>,
}

impl Rig {
    fn new(cfg: Config, seed: u64) -> Rig {
        let p = TxEngineParams::from_config(&cfg).unwrap();
        let defs = ack::ports(&p);
        let rto_min = Consts::from_config(&cfg).rto_min;
        let mut e = Engine::new(cfg, seed);
        e.tx.taps.ack = Some(AckTap::default());
        // The timer steps say whether they were live when their reads
        // answer, `L` cycles after the step.
        e.tx.taps.timer = Some(TimerTap::default());
        let mut r = Rig {
            e,
            defs,
            rows: Vec::new(),
            peer: Peer::default(),
            seen: HashMap::new(),
            rto_min,
            most: (0, 0),
            cur: Vec::new(),
            dead: HashSet::new(),
            nack_step: None,
            sack_step: None,
            timer: None,
        };
        // A reset cycle and the sweep's first cycles recorded (nothing may
        // move while it runs), the rest of the sweep not replayed.
        r.step(true);
        for _ in 0..20 {
            r.step(false);
        }
        r.e.sweep(&mut r.peer);
        r.timer = Some(TimerRows::new(r.e.tx.params()));
        r
    }

    fn open(&mut self, conn: u32, npaths: u32, psn: u32) {
        self.peer.open(&mut self.e, conn, npaths, psn);
    }

    fn step(&mut self, rst: bool) {
        let (inp, ot) = self.e.clock(rst);
        self.frames(&inp, &ot);
        let tap = self.e.tx.taps.ack.clone().expect("the tap is on");
        self.most = (self.most.0.max(tap.rnr_len), self.most.1.max(tap.wp_len));
        self.row(&inp, &tap);
        let tt = self.e.tx.taps.timer.clone().expect("the tap is on");
        if let Some(a) = tt.ans {
            self.count(match (a.read, a.live) {
                (TimerRead::Rnr { .. }, true) => "go_rnr_live",
                (TimerRead::Rnr { .. }, false) => "go_rnr_stale",
                (TimerRead::Wprobe { .. }, true) => "go_wp_live",
                (TimerRead::Wprobe { .. }, false) => "go_wp_stale",
                (TimerRead::Tail { .. }, true) => "go_tail_live",
                (TimerRead::Tail { .. }, false) => "go_tail_stale",
            });
        }
        if let Some(r) = self.timer.as_mut() {
            r.cycle(&tt);
        }
    }

    /// The frames on `m_axis` go to the peer whole, those of a dead path
    /// dropped.
    fn frames(&mut self, inp: &Inputs, ot: &Outputs) {
        let Some(b) = ot.axis.as_ref().filter(|_| inp.axis_ready) else { return };
        self.cur.extend_from_slice(&b.data[..b.keep as usize]);
        if !b.last {
            return;
        }
        let f = std::mem::take(&mut self.cur);
        if let Ok(d) = decode_frame(&f) {
            if let Hdr::Data(h) = d.header {
                if self.dead.contains(&(h.dst_conn & !tx_rig::REMOTE_ID, u32::from(h.path_id))) {
                    return;
                }
            }
        }
        let whole = Outputs {
            axis: Some(AxisBeat { keep: f.len() as u32, data: f, last: true, plane: b.plane }),
            ..Outputs::default()
        };
        self.peer.beat(&mut self.e, &Inputs { axis_ready: true, ..Inputs::default() }, &whole);
    }

    fn count(&mut self, what: &'static str) {
        *self.seen.entry(what).or_default() += 1;
    }

    fn run(&mut self, cycles: u64) {
        for _ in 0..cycles {
            self.step(false);
        }
    }

    /// The unit's ports this cycle.
    fn row(&mut self, inp: &Inputs, t: &AckTap) {
        let p = self.e.tx.params().clone();
        let defs = self.defs.clone();
        let bb = ack::busy_bits(&p);
        let fits = |v: u32| {
            assert!(u64::from(v) <= mask(bb), "a busy count of {v} does not fit {bb} bits");
            u64::from(v)
        };
        let ts = inp.ts_now;
        let timer_at = ts.wrapping_add(self.rto_min);
        let mut ins: Vec<(&str, u64)> = vec![("rst", u64::from(inp.rst)), ("ts_now", u64::from(ts))];
        let mut junked: Vec<&str> = Vec::new();
        let go = |g: AckGo| t.go == Some(g);
        let mut outs: Vec<(&str, u64)> = vec![
            ("m_busy", fits(t.busy)),
            ("m_rnr_tag", u64::from(t.rnr_tag)),
            ("m_timer_at", u64::from(timer_at)),
            ("m_tail_scan", u64::from(t.scan)),
            ("m_tail_hit_valid", u64::from(t.hit.is_some())),
        ];
        if !t.run {
            // Reset or the clear sweep: only rst, s_run and ts_now count.
            ins.push(("s_run", 0));
            junked.extend(["s_hold_pre", "s_pend_evt", "s_walk", "s_sched_idle", "s_busy", "s_hold_open"]);
            junked.extend(["s_hold_fail", "s_hold_sack", "s_hold_cnt", "s_rnr_push", "s_tail_due"]);
            junked.extend(WORK);
            if !inp.rst {
                self.count("sweep");
            }
        } else {
            ins.extend([
                ("s_run", 1),
                ("s_hold_pre", u64::from(t.hold_pre)),
                ("s_hold_open", u64::from(t.hold_open)),
                ("s_hold_fail", u64::from(t.hold_fail)),
                ("s_hold_sack", u64::from(t.hold_sack.is_some() || t.hold_stage)),
                ("s_rnr_push", u64::from(t.rnr_push.is_some())),
            ]);
            // A live SACK's reads answered: its two passes' count, L
            // cycles after its step (architecture.md, tx_engine item 13).
            match t.hold_sack {
                Some(n) => {
                    let at = self.sack_step.take().expect("a SACK's hold follows its step");
                    let l = self.e.tx.params().read_latency as usize;
                    assert_eq!(self.rows.len(), at + l, "a SACK's hold is L cycles after its step");
                    ins.push(("s_hold_cnt", fits(n)));
                    self.count("hold_sack");
                }
                // A SACK stage's walk: a hold of 2 each cycle it reads
                // (architecture.md, tx_engine item 14).
                None if t.hold_stage => {
                    ins.push(("s_hold_cnt", 2));
                    self.count("hold_stage");
                }
                None => junked.push("s_hold_cnt"),
            }
            for (on, what) in [(t.hold_pre, "hold_pre"), (t.hold_open, "hold_open"), (t.hold_fail, "hold_fail")] {
                if on {
                    self.count(what);
                }
            }
            if t.free {
                ins.extend([("s_pend_evt", u64::from(t.pend_evt)), ("s_walk", u64::from(t.walk))]);
            } else {
                junked.extend(["s_pend_evt", "s_walk"]);
                if t.busy == 0 {
                    self.count("held_by_failure_before_turn");
                }
            }
            let drain = t.free && (t.pend_evt || t.walk);
            if drain {
                self.count(if t.walk { "turn_to_walk" } else { "turn_to_events" });
            }
            let may = t.free && !drain && t.sched_idle;
            if t.free && !drain {
                ins.push(("s_sched_idle", u64::from(t.sched_idle)));
                if !t.sched_idle {
                    self.count("held_by_scheduler");
                }
            } else {
                junked.push("s_sched_idle");
            }
            outs.extend([("m_free", u64::from(t.free)), ("m_drain", u64::from(drain))]);
            if may {
                self.work(t, ts, &mut ins, &mut junked);
            } else {
                junked.extend(WORK);
            }
            // The step.
            let own = matches!(t.go, Some(AckGo::Rnr | AckGo::Wprobe | AckGo::Tail));
            match t.go {
                Some(_) if !own => ins.push(("s_busy", fits(t.handler_busy))),
                _ => junked.push("s_busy"),
            }
            if own {
                assert_eq!(t.handler_busy, 1, "the unit's own steps count 1");
            }
            for (g, n) in [
                (AckGo::Rto, "m_go_rto"),
                (AckGo::Upd, "m_go_upd"),
                (AckGo::Stage, "m_go_stage"),
                (AckGo::Sack, "m_go_sack"),
                (AckGo::Nack, "m_go_nack"),
                (AckGo::Rnr, "m_go_rnr"),
                (AckGo::Wprobe, "m_go_wp"),
                (AckGo::Tail, "m_go_tail"),
            ] {
                outs.push((n, u64::from(go(g))));
            }
            if let (true, Some(c)) = (go(AckGo::Tail), t.hit) {
                outs.push(("m_tail_conn", u64::from(c)));
            }
            self.count_go(t);
            // Pushes: the deadline and tag the unit shows.
            if go(AckGo::Nack) {
                self.nack_step = Some((self.rows.len(), ts));
            }
            if go(AckGo::Sack) {
                assert_eq!(t.handler_busy, 1, "a SACK's count comes from the record alone (item 13)");
                self.sack_step = Some(self.rows.len());
            }
            if let Some((_, _, _, until, tag)) = t.rnr_push {
                // The NACK handler pushes when its reads answer, L cycles
                // after its step, with the step's time (architecture.md,
                // tx_engine item 11).
                let (at, step_ts) = self.nack_step.expect("an RNR push follows a NACK's step");
                assert_eq!(self.rows.len(), at + p.read_latency as usize, "an RNR push is L cycles after the step");
                assert_eq!(until, step_ts.wrapping_add(self.rto_min), "an RNR push's deadline counts from the step");
                assert_eq!(tag, t.rnr_tag, "an RNR push takes m_rnr_tag");
                self.count("rnr_push");
            }
            if let Some((_, at)) = t.wp_push {
                assert_eq!(at, timer_at, "a window probe's deadline is m_timer_at");
                self.count("wp_push");
            }
            // The scanner.
            match t.scan_due {
                Some(due) => {
                    ins.push(("s_tail_due", u64::from(due)));
                    if due {
                        self.count("scan_hit");
                    }
                }
                None => {
                    junked.push("s_tail_due");
                    self.count("scan_held_by_hit");
                }
            }
        }
        let v = port_row(&mut self.e.junk, &defs, &junked, ins.into_iter().chain(outs).collect());
        self.rows.push(v);
    }

    /// The work inputs of a turn where a step may start: each in priority
    /// order up to the one that starts (or a waiting stage), junk below.
    fn work(&mut self, t: &AckTap, ts: u32, ins: &mut Vec<(&str, u64)>, junked: &mut Vec<&str>) {
        let mut rest: Vec<&str> = WORK.to_vec();
        let drive = |ins: &mut Vec<(&str, u64)>, rest: &mut Vec<&str>, n: &'static str, v: u64| {
            rest.retain(|r| *r != n);
            ins.push((n, v));
        };
        let mut stop = false;
        for (n, on) in [("s_rto", t.rto), ("s_upd", t.upd)] {
            if !stop {
                drive(ins, &mut rest, n, u64::from(on));
                stop = on;
            }
        }
        if !stop {
            drive(ins, &mut rest, "s_cont_valid", u64::from(t.cont.is_some()));
            if let Some(wait) = t.cont {
                stop = true;
                drive(ins, &mut rest, "s_cont_wait", u64::from(wait));
                if wait {
                    drive(ins, &mut rest, "s_tel_settled", u64::from(t.settled));
                    if !t.settled {
                        self.count("stage_waits_for_settled");
                    } else {
                        self.count("stage_after_settled");
                    }
                }
                if t.sack || t.nack || t.rnr_head.is_some() || t.wp_head.is_some() || t.hit.is_some() {
                    self.count("stage_ahead_of_lower");
                }
            }
        }
        for (n, on) in [("s_sack", t.sack), ("s_nack", t.nack)] {
            if !stop {
                drive(ins, &mut rest, n, u64::from(on));
                stop = on;
            }
        }
        for (v, d, head) in
            [("s_rnr_valid", "s_rnr_until", t.rnr_head.map(|h| h.3)), ("s_wp_valid", "s_wp_at", t.wp_head.map(|h| h.1))]
        {
            if !stop {
                drive(ins, &mut rest, v, u64::from(head.is_some()));
                if let Some(at) = head {
                    drive(ins, &mut rest, d, u64::from(at));
                    stop = ts_reached(ts, at);
                    if !stop {
                        self.count(if v == "s_rnr_valid" { "rnr_head_not_due" } else { "wp_head_not_due" });
                    }
                }
            }
        }
        junked.extend(rest);
    }

    fn count_go(&mut self, t: &AckTap) {
        let Some(g) = t.go else { return };
        self.count(match g {
            AckGo::Rto => "go_rto",
            AckGo::Upd => "go_upd",
            AckGo::Stage => "go_stage",
            AckGo::Sack => "go_sack",
            AckGo::Nack => "go_nack",
            // Live or stale is known when their reads answer (`step`).
            AckGo::Rnr => "go_rnr",
            AckGo::Wprobe => "go_wp",
            AckGo::Tail => "go_tail",
        });
        let below = match g {
            AckGo::Rto => t.upd || t.sack || t.nack,
            AckGo::Upd => t.sack || t.nack || t.cont.is_some(),
            AckGo::Sack => t.nack || t.rnr_head.is_some() || t.hit.is_some(),
            AckGo::Nack => t.rnr_head.is_some() || t.wp_head.is_some() || t.hit.is_some(),
            AckGo::Rnr => t.wp_head.is_some() || t.hit.is_some(),
            AckGo::Wprobe => t.hit.is_some(),
            _ => false,
        };
        if below {
            self.count("go_over_lower_work");
        }
    }

    /// The in-flight data packets of `conn` the peer has not answered.
    fn unanswered(&self, conn: u32) -> Vec<(u32, u32)> {
        self.peer.unanswered.iter().filter(|&&(c, _, _)| c == conn).map(|&(_, p, psn)| (p, psn)).collect()
    }

    fn nack(&mut self, conn: u32, path: u32, psn: u32, code: NackCode) {
        self.e.nacks.push_back(NackIn { conn, path_id: path, code: code as u8, psn });
    }
}

/// The traffic of one run (see the module doc).
fn traffic(cfg: &Config, seed: u64) -> Rig {
    let mut rig = Rig::new(cfg.clone(), seed);
    let streams = cfg.transport.streams_per_conn.min(4);
    let paths = cfg.transport.paths_per_conn;
    let depth = cfg.hardware.msg_table_depth;
    let rto = u64::from(rig.rto_min) * cfg.cycles_per_ts();
    let mut off = 0u64;
    for c in 1..=8 {
        rig.open(c, 2.min(paths), 10 * c);
    }
    rig.run(300);

    // SACKs with holes across connections: losses, completion walks,
    // tail timers; connection 2's path 1 dead, so RACK across paths finds
    // its packets lost with nothing heard from it since (SILENT events,
    // stages waiting for path_telemetry's answers).
    rig.e.press = Pressure { axis: 10, ar: 10, r_gap: 10, cqe: 30 };
    rig.peer.loss = 10;
    rig.peer.sack_rate = 40;
    rig.open(2, 4.min(paths), 20);
    rig.run(100);
    for p in 1..4.min(paths) {
        rig.dead.insert((2, p));
    }
    burst(&mut rig.e, 1, streams, 2, 0, &mut off);
    burst(&mut rig.e, 2, streams, 4, 100, &mut off);
    rig.run(6_000);
    rig.dead.clear();

    // RNR back-offs on connection 3, muted so its packets stay in flight:
    // two for packets the peer never sees, which expire and are resent
    // once the peer answers again (new data keeps the path alive); one on
    // connection 4, failed by a NO_CONN NACK before its deadline (stale).
    rig.peer.loss = 0;
    rig.peer.mute.extend([3, 4, 5]);
    burst(&mut rig.e, 3, 1, 2, 200, &mut off);
    burst(&mut rig.e, 4, 1, 2, 300, &mut off);
    burst(&mut rig.e, 5, 1, 2, 500, &mut off);
    rig.run(1_500);
    let u3 = rig.unanswered(3);
    for &(path, psn) in u3.iter().take(2) {
        rig.nack(3, path, psn, NackCode::Rnr);
    }
    // The same packet again: it already waits (no second entry).
    if let Some(&(path, psn)) = u3.first() {
        rig.nack(3, path, psn, NackCode::Rnr);
    }
    for c in [4, 5] {
        if let Some(&(path, psn)) = rig.unanswered(c).first() {
            rig.nack(c, path, psn, NackCode::Rnr);
        }
    }
    rig.run(100);
    rig.nack(4, 0, 0, NackCode::NoConn);
    rig.peer.mute.remove(&3);
    burst(&mut rig.e, 3, 1, 3, 400, &mut off);
    // Connection 5 stays muted: its paths time out (RTOs, updates,
    // ALL_LOST), and its RNR entry goes stale when its path is declared
    // lost.
    rig.run(2 * rto);
    rig.peer.mute.remove(&5);

    // Connection 6: one packet NACKed BAD_HDR again and again, each
    // retransmission charged, until the commit's retry limit fails the
    // connection (before the unit's turn).
    rig.peer.mute.insert(6);
    burst(&mut rig.e, 6, 1, 1, 600, &mut off);
    rig.run(500);
    let u6 = rig.unanswered(6);
    let &(path, psn) = u6.first().expect("connection 6 sent a packet");
    for _ in 0..=RETRY_LIMIT {
        rig.nack(6, path, psn, NackCode::BadHdr);
        rig.run(300);
    }
    // A reopen of a connection that failed and of one that is live (its
    // failure comes after the unit's turn).
    rig.open(4, 2.min(paths), 7000);
    rig.open(3, 2.min(paths), 8000);
    rig.run(1_000);

    // Tail losses: many connections' last packets lost, their SACKs
    // rare, walks held by completion backpressure, so tail timers fire
    // while the unit is busy and their hits wait.
    rig.e.press = Pressure { axis: 10, ar: 10, r_gap: 10, cqe: 70 };
    rig.peer.loss = 50;
    rig.peer.sack_rate = 20;
    for round in 0..6 {
        for c in [1, 2, 3, 5] {
            rig.e.wrs.push_back(tx_rig::wr(c, round % streams, op::WRITE, 5000 + u64::from(c), off % 0x2_0000, 64));
            off += 128;
        }
        rig.dead.insert((2, round % 2));
        rig.run(4_000);
        rig.dead.clear();
    }
    rig.e.press = Pressure { axis: 10, ar: 10, r_gap: 10, cqe: 30 };
    rig.peer.loss = 0;
    rig.peer.sack_rate = 60;
    rig.run(2_000);

    // Window probes: the peer names no stream in its SACKs, so stream 0
    // of connection 7 blocks after the peer's message table and a probe
    // is armed; the peer then answers with its streams, and a SACK for
    // stream 1's second message moves the peer's completed count on before the probe's
    // deadline (the entry goes stale). Then connection 8's stream 0
    // blocks the same way and its probe fires.
    for (c, id) in [(7, 1000), (8, 3000)] {
        rig.peer.window = false;
        for k in 0..depth + 2 {
            rig.e.wrs.push_back(tx_rig::wr(c, 0, op::WRITE, id + u64::from(k), off % 0x2_0000, 64));
            off += 128;
        }
        let armed = rig.seen.get("wp_push").copied().unwrap_or(0);
        for _ in 0..20_000 {
            if rig.seen.get("wp_push").copied().unwrap_or(0) > armed {
                break;
            }
            rig.step(false);
        }
        if c == 7 {
            rig.peer.window = true;
            // The second message's msn is past the peer's completed count.
            for k in 0..2 {
                rig.e.wrs.push_back(tx_rig::wr(c, 1, op::WRITE, id + 100 + k, off % 0x2_0000, 64));
                off += 128;
            }
        }
        rig.run(rto + 2_000);
    }
    rig
}

fn replay_config(cfg: &Config) -> Run {
    let rig = traffic(cfg, 0xac4);
    eprintln!(
        "{}: {} cycles, the RNR queue at most {} long, the window-probe queue {}",
        cfg.name,
        rig.rows.len(),
        rig.most.0,
        rig.most.1
    );
    Run { defs: rig.defs, rows: rig.rows, seen: rig.seen }
}

fn write_timer(dir: &Scratch, p: &TxEngineParams) -> (Module, std::path::PathBuf) {
    let m = timer::build(p);
    let rtl = tx_rig::write_unit(dir, &m, "tx_engine timer queues and steps", "tx_engine_timer");
    (m, rtl)
}

/// `tx_timer`'s rows of the same traffic: its steps are the unit's own.
fn replay_timer(cfg: &Config) -> Run {
    let mut rig = traffic(cfg, 0xac4);
    let r = rig.timer.take().expect("recorded after the sweep");
    eprintln!("{} tx_timer: {} cycles; {}", cfg.name, r.rows.len(), r.bins());
    r.finish(&mut rig.e.junk)
}

/// `tx_timer` on this traffic (`tx_engine_timer.rs` has its own, for what
/// this one does not reach): every output equal every cycle, both configs.
#[test]
fn icarus_timer_on_the_ack_traffic_is_the_models() {
    replay_configs(
        "tx-timer-ack",
        timer::NAME,
        write_timer,
        replay_timer,
        &[
            "rnr_push_empty",
            "rnr_push_behind",
            "rnr_stored",
            "rnr_pop_stored",
            "rnr_live_retx",
            "rnr_stale_empty",
            "wp_push",
            "wp_probe_path0",
            "wp_stale",
            "tail_live",
        ],
    );
}

/// The model's acknowledgement unit control and the generated one, cycle
/// by cycle, both configs: every output equal every cycle, and the run
/// covered what it is meant to.
#[test]
fn icarus_ack_control_is_the_models() {
    replay_configs(
        "tx-ack",
        ack::NAME,
        write,
        replay_config,
        &[
            "sweep",
            "go_rto",
            "go_upd",
            "go_stage",
            "go_sack",
            "go_nack",
            "go_rnr_live",
            "go_rnr_stale",
            "go_wp_live",
            "go_wp_stale",
            "go_tail_live",
            "go_over_lower_work",
            "stage_waits_for_settled",
            "stage_after_settled",
            "stage_ahead_of_lower",
            "rnr_head_not_due",
            "wp_head_not_due",
            "rnr_push",
            "wp_push",
            "turn_to_walk",
            "turn_to_events",
            "held_by_scheduler",
            "hold_pre",
            "hold_open",
            "hold_fail",
            "hold_sack",
            "hold_stage",
            "scan_hit",
            "scan_held_by_hit",
        ],
    );
}

/// Verilator `-Wall` with no waivers and `iverilog -g2005 -Wall` silent,
/// for both configs; Yosys: no latch after `proc` and `check -assert`.
#[test]
fn tools_accept_the_ack_control() {
    tools_check_configs("tx-ack", write);
}
