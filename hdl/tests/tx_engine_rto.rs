//! The acknowledgement unit's timeout and update handlers of `tx_engine`
//! (`mrnic_hdl::tx_engine::rto`, a clocked unit of the engine's generator)
//! against the cycle model, trace-driven: the model `TxEngine` runs real
//! traffic, wired as its tests wire it (`tx_rig`), with its `taps.rto` on.
//! Each step of `on_rto` or `on_upd` records its record, what it read (the
//! context, the path's mirror, the plane marks, the ring slots of its
//! ALL_LOST walk) and what it wrote; the rows put the step's inputs and
//! outputs where the unit's timing puts them (the step's cycle `t`; the
//! reads' answer and the writes at `t + L`; slot `d` of the walk read at
//! `t + L + d`, answered and pushed at `t + 2L + d`), and Icarus replays
//! them into the generated unit, every output compared every cycle, for
//! `small` and `default`. The rows also check the timing against the
//! model's: every write of a step lands before the busy count the model
//! charged lets the next step read (a row given twice fails the test).
//!
//! The traffic: connections under loss (updates, credit clears), muted
//! connections whose paths time out, go SUSPECT (ALL_LOST over slots
//! queued, waiting for an RNR back-off, empty after a SACK past a hole)
//! and DEAD (plane marks, some not later than the plane's mark), PROBEs
//! the peer answers once a connection speaks again (updates that answer a
//! PROBE reply), a connection failed by a NO_CONN NACK while its timers
//! run, connections failed because every path of theirs went DEAD, a
//! plane failed under a connection that lives on its other paths (its
//! path there DEAD, timed out again, then answering once the plane is
//! back), and a path opened on a connection that is not (an update on a
//! closed connection). Inputs the unit must not look at carry junk: the
//! records outside their step, the reads' answers outside their cycle, an
//! empty slot's queued bit, an unmarked plane's deadline, `ts_now` outside
//! a step.
//!
//! A missing tool skips the test with a message, except under CI=true,
//! where it fails.

mod common;
mod tx_rig;

use std::collections::HashMap;

use common::Scratch;
use mrnic_hdl::tx_engine::rto;
use mrnic_hdl::Module;
use mrnic_model::path_telemetry as tel;
use mrnic_model::tx_engine::*;
use mrnic_proto::packet::decode_frame;
use mrnic_proto::{Config, Header as Hdr, NackCode};
use tx_rig::{burst, junk, mask, replay_configs, tools_check_configs, Engine, Peer, Pressure, Rows, Run};

fn write(dir: &Scratch, p: &TxEngineParams) -> (Module, std::path::PathBuf) {
    let m = rto::build(&TxEngineParams::from_config(&tuned(&p.cfg)).unwrap());
    let rtl = tx_rig::write_unit(dir, &m, "tx_engine timeout and update handlers", "tx_engine_rto");
    (m, rtl)
}

/// The engine, a peer SACKing its data frames and answering PROBEs, and
/// the unit's rows.
struct Rig {
    e: Engine,
    rows: Rows,
    peer: Peer,
    seen: HashMap<&'static str, u32>,
    cur: Vec<u8>,
    /// Connections whose PROBEs the peer answers.
    answer: std::collections::HashSet<u32>,
    /// Connections whose next data packet on path 0 is black-holed: that
    /// psn is dropped each time it is sent, the others answered.
    hole: HashMap<u32, Option<u32>>,
    /// Connections with a path a timeout left SUSPECT.
    suspect: std::collections::HashSet<u32>,
    /// Each (connection, path)'s cum_acked as the last step read it.
    cum: HashMap<(u32, u32), u32>,
    /// The row of the next clock (rows past it hold a step's later
    /// cycles already).
    at: usize,
    /// A failed plane: every frame leaving by it is lost.
    down: Option<u8>,
}

impl Rig {
    fn new(cfg: Config, seed: u64) -> Rig {
        let p = TxEngineParams::from_config(&cfg).unwrap();
        let mut e = Engine::new(cfg, seed);
        e.tx.taps.rto = Some(RtoTap::default());
        let mut r = Rig {
            e,
            rows: Rows::new(rto::ports(&p)),
            peer: Peer::default(),
            seen: HashMap::new(),
            cur: Vec::new(),
            answer: Default::default(),
            suspect: Default::default(),
            hole: HashMap::new(),
            cum: HashMap::new(),
            at: 1,
            down: None,
        };
        r.e.clock(true);
        r.e.sweep(&mut r.peer);
        // The replay's first row resets the unit.
        r.put(0, "rst", 1);
        r
    }

    fn open(&mut self, conn: u32, npaths: u32, psn: u32) {
        self.peer.open(&mut self.e, conn, npaths, psn);
        self.answer.insert(conn);
    }

    /// Opens `conn` with `npaths` paths all on plane 0.
    fn open_plane0(&mut self, conn: u32, npaths: u32, psn: u32) {
        self.open(conn, npaths, psn);
        let n = self.e.opens.len();
        for o in self.e.opens.iter_mut().skip(n - npaths as usize) {
            o.plane = 0;
        }
    }

    fn run(&mut self, cycles: u64) {
        for _ in 0..cycles {
            self.step();
        }
    }

    fn step(&mut self) {
        let (inp, ot) = self.e.clock(false);
        self.frames(&inp, &ot);
        let t = self.at;
        self.at += 1;
        self.rows.reach(t);
        let rec = self.e.tx.taps.rto.as_ref().expect("the tap is on").step.clone();
        if let Some(r) = rec {
            self.place(t, &r);
        }
    }

    /// The frames on `m_axis`: data to the peer, PROBEs of the connections
    /// in `answer` answered with a SACK echoing their timestamp to the
    /// port they left by.
    fn frames(&mut self, inp: &Inputs, ot: &Outputs) {
        let Some(b) = ot.axis.as_ref().filter(|_| inp.axis_ready) else { return };
        self.cur.extend_from_slice(&b.data[..b.keep as usize]);
        if !b.last {
            return;
        }
        let f = std::mem::take(&mut self.cur);
        if self.down == Some(b.plane) {
            return;
        }
        let d = decode_frame(&f).expect("every frame decodes");
        if let Hdr::Probe(h) = d.header {
            let conn = h.dst_conn & !tx_rig::REMOTE_ID;
            let path = u32::from(h.path_id);
            if self.answer.contains(&conn) && !self.peer.mute.contains(&conn) {
                let cum = self.peer.rx.get(&(conn, path)).map_or(0, |r| r.cum);
                self.e.sacks.push_back(SackIn {
                    conn,
                    path_id: path,
                    cum_psn: cum,
                    bitmap: [0; 4],
                    ecn_cnt: 0,
                    echo_ts: h.tx_ts,
                    rate_hint: 0xffff,
                    stream_id: 0xff,
                    completed_msn: 0,
                    dport: d.net.src_port,
                });
            }
            return;
        }
        if let Hdr::Data(h) = d.header {
            let conn = h.dst_conn & !tx_rig::REMOTE_ID;
            if let (Some(hole), 0) = (self.hole.get_mut(&conn), h.path_id) {
                if *hole.get_or_insert(h.path_psn) == h.path_psn {
                    return;
                }
            }
        }
        self.peer.frame(&mut self.e, &f);
    }

    fn count(&mut self, what: &'static str) {
        *self.seen.entry(what).or_default() += 1;
    }

    fn put(&mut self, at: usize, name: &str, v: u64) {
        self.rows.put(at, name, v);
    }

    /// One handler step recorded at row `t`, placed at the unit's cycles.
    fn place(&mut self, t: usize, r: &RtoRec) {
        let p = self.e.tx.params().clone();
        let l = p.read_latency as usize;
        let (conn, path, state, act) = match (&r.rto, &r.upd) {
            (Some(x), _) => (x.conn, x.path, x.state, x.act),
            (None, Some(u)) => (u.conn, u.path, u.state, u.act),
            _ => panic!("a step has a record"),
        };
        let is_rto = r.rto.is_some();
        if is_rto && state == tel::SUSPECT {
            self.suspect.insert(conn);
        }
        self.cum.insert((conn, path), r.cum_acked);
        let all_lost = act & tel::act::ALL_LOST != 0;
        let live = r.open && !r.failed;
        let want_busy = if is_rto && all_lost { 1 + p.ring_depth } else { 1 };
        // The mirror is written by a timeout of a live connection and by
        // every update; the DEAD bits with it; a live connection whose
        // every path below npaths is then DEAD fails.
        let pm = if is_rto { live } else { true };
        let dead = if pm { r.dead & !(1 << path) | u32::from(state == tel::DEAD) << path } else { r.dead };
        assert_eq!(r.dead_after, dead, "the DEAD bits follow the state written");
        let all = u32::MAX.checked_shr(32 - r.npaths).unwrap_or(0);
        assert_eq!(r.fail, pm && live && dead & all == all, "the connection fails exactly when every path is DEAD");
        if r.fail {
            // The failure's ring clear raises the count: tx_ack's
            // s_hold_fail when the reads answer gives the same count from
            // then on (architecture.md, tx_engine item 12).
            assert_eq!(r.busy, want_busy.max(p.paths * p.ring_depth), "a failure's count");
        } else {
            assert_eq!(r.busy, want_busy, "the count comes from the record alone");
        }

        // The step's cycle: the record, the count, the unstall, the reads.
        self.put(t, "ts_now", u64::from(r.ts));
        if let Some(x) = r.rto {
            self.put(t, "s_go_rto", 1);
            for (n, v) in [
                ("s_rto_conn", x.conn),
                ("s_rto_path", x.path),
                ("s_rto_state", u32::from(x.state)),
                ("s_rto_sport", u32::from(x.sport)),
                ("s_rto_gen", u32::from(x.gen)),
                ("s_rto_act", u32::from(x.act)),
            ] {
                self.put(t, n, u64::from(v));
            }
        }
        if let Some(u) = &r.upd {
            self.put(t, "s_go_upd", 1);
            for (n, v) in [
                ("s_upd_conn", u.conn),
                ("s_upd_path", u.path),
                ("s_upd_state", u32::from(u.state)),
                ("s_upd_clr", u32::from(u.clr)),
                ("s_upd_act", u32::from(u.act)),
            ] {
                self.put(t, n, u64::from(v));
            }
        }
        for (n, v) in [
            ("m_busy", want_busy),
            ("m_unstall_valid", 1),
            ("m_unstall_conn", conn),
            ("m_rd_valid", 1),
            ("m_rd_conn", conn),
            ("m_rd_path", path),
        ] {
            self.put(t, n, u64::from(v));
        }

        // The answer's cycle: the reads in, the writes out.
        let a = t + l;
        for (n, v) in [
            ("s_rd_open", u32::from(r.open)),
            ("s_rd_failed", u32::from(r.failed)),
            ("s_rd_probe_q", r.probe_q),
            ("s_rd_npaths", r.npaths),
            ("s_rd_dead", r.dead),
            ("s_pm_plane", u32::from(r.plane)),
            ("s_pm_next_psn", r.next_psn),
            ("s_pm_cum_acked", r.cum_acked),
        ] {
            self.put(a, n, u64::from(v));
        }
        let planes = r.marks.len() as u32;
        let mut mv = 0u64;
        let mut mu = junk(&mut self.e.junk, 32 * planes);
        for (i, mk) in r.marks.iter().enumerate() {
            if let Some(until) = mk {
                mv |= 1 << i;
                tx_rig::put_field(&mut mu, 32 * i as u32, 32, u64::from(*until));
            }
        }
        self.put(a, "mark_valid", mv);
        self.rows.put_bits(a, "mark_until", mu);
        let suspect_or_dead = state == tel::SUSPECT || state == tel::DEAD;
        if pm {
            self.put(a, "m_ctx_dead_valid", 1);
            self.put(a, "m_ctx_dead_conn", u64::from(conn));
            self.put(a, "m_ctx_dead", u64::from(dead));
            assert_eq!(r.state, state, "the mirror takes the record's state");
            self.put(a, "m_pm_valid", 1);
            self.put(a, "m_pm_conn", u64::from(conn));
            self.put(a, "m_pm_path", u64::from(path));
            self.put(a, "m_pm_state", u64::from(state));
        }
        if is_rto && live {
            assert!(!r.probe_pending, "a timeout clears probe_pending");
            self.put(a, "m_pm_rto", 1);
            self.put(a, "m_pm_sport", u64::from(r.sport));
            self.put(a, "m_pm_gen", u64::from(r.gen));
            self.put(a, "m_pm_timed_out_we", 1);
            self.put(a, "m_pm_timed_out", u64::from(r.timed_out));
        }
        if !is_rto && suspect_or_dead {
            assert!(!r.timed_out, "an update to SUSPECT or DEAD clears timed_out");
            self.put(a, "m_pm_timed_out_we", 1);
        }
        if let Some(u) = r.upd.as_ref().filter(|u| u.clr) {
            assert!(r.clr, "an update's clr sets the mirror's");
            self.put(a, "m_pm_clr_set", u64::from(u.clr));
        }
        if let Some((plane, until)) = r.mark {
            self.put(a, "m_mark_valid", 1);
            self.put(a, "m_mark_plane", u64::from(plane));
            self.put(a, "m_mark_until", u64::from(until));
        }
        if r.fail {
            assert!(!r.probe && r.retx.is_empty(), "a failing handler queues nothing");
            self.put(a, "m_fail_valid", 1);
            self.put(a, "m_fail_conn", u64::from(conn));
            self.put(a, "m_fail_status", u64::from(status::TRANSPORT_RETRY_EXCEEDED));
        }
        if r.probe {
            self.put(a, "m_probe_valid", 1);
            self.put(a, "m_probe_conn", u64::from(conn));
            self.put(a, "m_probe_path", u64::from(path));
        }

        // The walk: slot d read at a + d, answered and pushed at a + L + d.
        let walks = is_rto && live && all_lost && !r.fail;
        let span = r.next_psn.wrapping_sub(r.cum_acked) & mask(24) as u32;
        assert_eq!(r.slots.len() as u32, span, "the tap reads the span's slots");
        let mut pushed = Vec::new();
        if walks {
            assert!(span <= p.ring_depth, "the ring holds at most tx_ring_depth packets of a path");
            let free_at = t + 1 + r.busy.max(1) as usize + l;
            for (d, s) in r.slots.clone().iter().enumerate() {
                let psn = (r.cum_acked + d as u32) & mask(24) as u32;
                self.put(a + d, "m_ring_rd_valid", 1);
                self.put(a + d, "m_ring_rd_conn", u64::from(conn));
                self.put(a + d, "m_ring_rd_path", u64::from(path));
                self.put(a + d, "m_ring_rd_psn", u64::from(psn));
                let at = a + l + d;
                assert!(at < free_at, "slot {d} is written at row {at}, after the unit is free at {free_at}");
                self.put(at, "s_ring_valid", u64::from(s.is_some()));
                match s {
                    Some((queued, rnr)) => {
                        self.put(at, "s_ring_queued", u64::from(*queued));
                        self.count(if *queued {
                            "all_lost_slot_queued"
                        } else if *rnr {
                            "all_lost_slot_rnr_wait"
                        } else {
                            "all_lost_slot_in_flight"
                        });
                        if !queued {
                            pushed.push(psn);
                            self.put(at, "m_retx_valid", 1);
                            self.put(at, "m_retx_conn", u64::from(conn));
                            self.put(at, "m_retx_path", u64::from(path));
                            self.put(at, "m_retx_psn", u64::from(psn));
                        }
                    }
                    None => self.count("all_lost_slot_empty"),
                }
            }
        }
        assert_eq!(pushed, r.retx, "the walk pushes the model's packets in its order");

        // Coverage.
        let mut bins: Vec<&'static str> = Vec::new();
        if is_rto {
            bins.push(match (r.open, r.failed, all_lost) {
                (false, _, _) => "rto_closed_conn",
                (true, true, _) => "rto_failed_conn",
                (true, false, false) => "rto",
                (true, false, true) => "rto_all_lost",
            });
            if walks && span == 0 {
                bins.push("all_lost_nothing_outstanding");
            }
            if live && suspect_or_dead {
                let known = u32::from(r.plane) < planes;
                match (r.mark, known && r.marks[r.plane as usize].is_some()) {
                    (Some(_), false) => bins.push(if state == tel::DEAD { "mark_dead" } else { "mark_suspect" }),
                    (Some(_), true) => bins.push("mark_later_than_existing"),
                    (None, _) => bins.push("mark_not_later"),
                }
            }
            if live && act & tel::act::PROBE != 0 && !r.probe && !r.fail {
                bins.push("probe_already_queued");
            }
            if r.fail {
                bins.push("fail_all_dead");
            } else if live && state == tel::DEAD {
                bins.push("dead_others_alive");
            }
        } else {
            bins.push(match (r.open, r.failed) {
                (false, _) => "upd_closed_conn",
                (true, true) => "upd_failed_conn",
                _ => "upd",
            });
            if r.upd.as_ref().is_some_and(|u| u.clr) {
                bins.push("upd_clr");
            }
            if suspect_or_dead {
                bins.push("upd_suspect_or_dead");
            }
            if r.probe {
                bins.push("upd_probe_reply");
            }
            if r.fail {
                bins.push("upd_fail_all_dead");
            }
        }
        for b in bins {
            self.count(b);
        }
    }

    /// The rows as port values: the values placed, 0 on every other output,
    /// junk on every other input but the step enables (0) and `rst` (0).
    fn finish(mut self) -> Run {
        self.rows.finish(&mut self.e.junk, &["rst", "s_go_rto", "s_go_upd"], self.seen)
    }

    fn nack(&mut self, conn: u32, path: u32, psn: u32, code: NackCode) {
        self.e.nacks.push_back(NackIn { conn, path_id: path, code: code as u8, psn });
    }
}

/// `cfg` as the traffic runs it: short timers bring timeouts, DEAD paths
/// and plane marks within a few thousand cycles; a ring of four slots
/// (three packets in flight a path), so an ALL_LOST walk is short and its
/// slots are a mix; a timestamp unit of
/// 256 ns, so two timeouts of one plane often fall in one unit (the
/// second mark is not later than the first); at most 64 connections, since
/// path_telemetry's timeout scanner visits one (connection, path) a cycle
/// and `default`'s 4,096 x 16 would take 65,536 cycles a pass (its table
/// read latency, paths and planes stay `default`'s).
fn tuned(cfg: &Config) -> Config {
    let mut cfg = tx_rig::short_timers(cfg, 10, 60);
    cfg.hardware.tx_ring_depth = 4;
    cfg.timers.ts_unit_ns = 256;
    cfg.transport.connections = cfg.transport.connections.min(64);
    cfg
}

/// The engine from reset with connections `1..=8` open (connection 5 on
/// one path, 7 and 8 on two paths of plane 0), `cfg` tuned.
fn start(cfg: &Config, seed: u64) -> (Rig, u64, u32) {
    let cfg = tuned(cfg);
    let mut rig = Rig::new(cfg.clone(), seed);
    let paths = cfg.transport.paths_per_conn;
    for c in 1..=8 {
        match c {
            5 => rig.open(c, 1, 10 * c),
            7 | 8 => rig.open_plane0(c, 2.min(paths), 10 * c),
            _ => rig.open(c, 4.min(paths), 10 * c),
        }
    }
    rig.run(300);
    let rto = u64::from(tel::Consts::from_config(&cfg).rto_min) * cfg.cycles_per_ts();
    (rig, rto, cfg.transport.mtu)
}

/// Scenario 1: traffic under loss (updates of every ACK, credit clears),
/// then connections 3, 4 and 6 silent with packets in flight; connection 4
/// failed, once a timeout has left a path of it SUSPECT (its timers run
/// on), by
/// a NO_CONN NACK while its timers run. Their paths time out, go SUSPECT
/// (ALL_LOST) and DEAD, marking planes; connection 6 stays silent until a
/// timeout finds every path of it DEAD and fails it. Then a path opened on
/// a connection that is not (an update on a closed connection), and the
/// silent connections speak again: their PROBEs are answered (updates that
/// answer PROBE replies).
fn silence(cfg: &Config, seed: u64) -> Rig {
    let (mut rig, rto, _) = start(cfg, seed);
    let streams = rig.e.cfg.transport.streams_per_conn.min(4);
    let mut off = 0u64;
    rig.e.press = Pressure { axis: 10, ar: 10, r_gap: 10, cqe: 10 };
    rig.peer.loss = 10;
    for c in 1..=8 {
        burst(&mut rig.e, c, streams, 2, u64::from(100 * c), &mut off);
    }
    rig.run(4_000);
    rig.peer.loss = 30;
    for c in [3, 4, 6] {
        burst(&mut rig.e, c, streams, 2, u64::from(1000 * c), &mut off);
    }
    rig.run(2_000);
    rig.peer.mute.extend([3, 4, 6]);
    for c in [3, 4, 6] {
        burst(&mut rig.e, c, streams, 1, u64::from(2000 * c), &mut off);
    }
    for _ in 0..8 * rto {
        if rig.suspect.contains(&4) {
            break;
        }
        rig.step();
    }
    rig.nack(4, 0, 0, NackCode::NoConn);
    rig.run(8 * rto);
    // Connection 6 stays silent until its last path is DEAD and a timeout
    // fails it (how long depends on the back-offs the losses left).
    for _ in 0..64 * rto {
        if rig.e.tx.failed(6).is_some() {
            break;
        }
        rig.step();
    }
    assert!(rig.e.tx.failed(6).is_some(), "connection 6 failed with every path DEAD");
    rig.e.opens.push_back(Open {
        conn: 9,
        path: 1,
        npaths: 2,
        remote_id: tx_rig::REMOTE_ID | 9,
        dst_mac: 0x02_00_00_00_10_09,
        dst_ip: 0x0a00_1009,
        sport: 50_000,
        plane: 0,
        psn: 0,
    });
    rig.peer.mute.remove(&3);
    rig.peer.mute.remove(&6);
    rig.peer.loss = 0;
    rig.e.press = Pressure::default();
    rig.run(8 * rto);
    rig
}

/// Scenario 2: connection 5 (one path) sends a request of three packets;
/// the first never arrives (sent again and again), the others are SACKed
/// (their slots empty inside a walk's span); then it goes silent. Once its path is SUSPECT (a NACK no longer restarts
/// its timer) its oldest packet is RNR NACKed every eighth of rto_min for
/// five rto_min (a back-off lasts rto_min and a NACK while one runs starts
/// none, so about five start, below the retry limit of seven), so a
/// timeout's walk finds the slot waiting for its back-off.
fn rnr(cfg: &Config, seed: u64) -> Rig {
    let (mut rig, rto, mtu) = start(cfg, seed);
    rig.hole.insert(5, None);
    rig.e.wrs.push_back(tx_rig::wr(5, 0, op::WRITE, 5000, 0, 3 * mtu));
    rig.run(rto / 2);
    rig.peer.mute.insert(5);
    for _ in 0..20 * rto {
        if rig.suspect.contains(&5) {
            break;
        }
        rig.step();
    }
    assert!(rig.suspect.contains(&5), "connection 5's path went SUSPECT");
    // Its oldest packet outstanding, as the timeout read the mirror.
    let psn = rig.cum[&(5, 0)];
    for _ in 0..40 {
        rig.nack(5, 0, psn, NackCode::Rnr);
        rig.run(rto / 8);
    }
    rig.run(2 * rto);
    rig
}

/// Scenario 3: connections 7 and 8 (two paths each, both on plane 0)
/// silent, each with a request of two packets, one on each path: the two
/// paths' timeouts come together, on one plane (a mark not later than the
/// one just set); once the data has left, m_axis is held, so the frame
/// queue fills and PROBEs wait in their queue (a timeout finds one
/// queued).
fn plane(cfg: &Config, seed: u64) -> Rig {
    let (mut rig, rto, mtu) = start(cfg, seed);
    rig.peer.mute.extend([7, 8]);
    for c in [7, 8] {
        rig.e.wrs.push_back(tx_rig::wr(c, 0, op::WRITE, u64::from(100 * c), u64::from(c) * 0x4000, 2 * mtu));
    }
    // The data leaves first, so the paths' timers start together.
    rig.run(rto / 4);
    rig.e.press = Pressure { axis: 100, ar: 10, r_gap: 10, cqe: 10 };
    rig.run(24 * rto);
    rig
}

/// Scenario 4: plane 1 fails under connection 1 (four paths, or the
/// config's count, one a plane) while it sends: its path there times
/// out, goes SUSPECT and DEAD, and stays DEAD, timed out again every
/// `dead_probe_interval` (its mark expired by then) while its other
/// paths carry the traffic: the connection lives on. Then the plane
/// comes back and the path's PROBEs are answered.
fn plane_down(cfg: &Config, seed: u64) -> Rig {
    let (mut rig, rto, _) = start(cfg, seed);
    let streams = rig.e.cfg.transport.streams_per_conn.min(4);
    let mut off = 0u64;
    rig.down = Some(1);
    for k in 0..20 {
        burst(&mut rig.e, 1, streams, 1, 10_000 + 100 * k, &mut off);
        rig.run(2 * rto);
    }
    assert_eq!(rig.e.tx.failed(1), None, "connection 1 lives on its other paths");
    // The plane comes back: the DEAD path's PROBEs are answered (updates
    // that answer PROBE replies) and it returns to GOOD.
    rig.down = None;
    for k in 0..6 {
        burst(&mut rig.e, 1, streams, 1, 20_000 + 100 * k, &mut off);
        rig.run(2 * rto);
    }
    rig
}

fn replay_config(cfg: &Config) -> Run {
    tx_rig::scenarios(
        cfg,
        &[
            ("silence", &|c| silence(c, SEED).finish()),
            ("rnr", &|c| rnr(c, SEED).finish()),
            ("plane", &|c| plane(c, SEED).finish()),
            ("plane_down", &|c| plane_down(c, SEED).finish()),
        ],
    )
}

/// The traffic's seed.
const SEED: u64 = 0x4707;

/// The model's timeout and update handlers and the unit, cycle by cycle,
/// both configs: every output equal every cycle, every write before the
/// model's count frees the unit, and the run covered what it is meant to.
#[test]
fn icarus_timeout_and_update_handlers_are_the_models() {
    replay_configs(
        "tx-rto",
        rto::NAME,
        write,
        replay_config,
        &[
            "rto",
            "rto_all_lost",
            "rto_failed_conn",
            "mark_suspect",
            "mark_dead",
            "mark_not_later",
            "probe_already_queued",
            "fail_all_dead",
            "dead_others_alive",
            "upd",
            "upd_clr",
            "upd_suspect_or_dead",
            "upd_probe_reply",
            "upd_failed_conn",
            "upd_closed_conn",
            "all_lost_slot_queued",
            "all_lost_slot_rnr_wait",
            "all_lost_slot_in_flight",
            "all_lost_slot_empty",
        ],
    );
}

/// Verilator `-Wall` with no waivers and `iverilog -g2005 -Wall` silent,
/// for both configs; Yosys: no latch after `proc` and `check -assert`.
#[test]
fn tools_accept_the_timeout_and_update_handlers() {
    tools_check_configs("tx-rto", write);
}
