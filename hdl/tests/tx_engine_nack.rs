//! The acknowledgement unit's NACK handler of `tx_engine`
//! (`mrnic_hdl::tx_engine::nack`, a clocked unit of the engine's
//! generator) against the cycle model, trace-driven: the model `TxEngine`
//! runs real traffic, wired as its tests wire it (`tx_rig`), with its
//! `taps.nack` on. Each NACK step records its record, `ts_now` and the busy
//! count in the step's cycle, and what it read and did in the cycle its
//! reads answer; the rows put them there (the step at `t`, the answer at
//! `t + L`, which the test checks is where the model acted), and Icarus
//! replays them into the generated unit, every output compared every
//! cycle, for `small` and `default`. The slot's fields without a port
//! (a back-off's `rnr_wait`, `rnr_resend`, `queued`; BAD_HDR's `queued`,
//! `charge`; every other field kept) are checked against the model's
//! write.
//!
//! The traffic: connections whose peer has gone quiet (their packets stay
//! outstanding), NACKed with every code: BAD_HDR (twice, the second on a
//! packet queued already), ACCESS and NO_CONN (failing the connection, a
//! NACK after that on a failed connection), RNR repeated on one packet
//! until its eighth back-off fails the connection (NACKs while a back-off
//! runs, on its resend), stale ones (a path_id past the paths, a psn not
//! outstanding, one inside the window whose slot a SACK emptied, an
//! unknown code), and a NACK of a connection never opened. Inputs the unit must not look at carry junk: the record outside
//! its step, the reads outside their answer's cycle, the mirror and the
//! slot of a connection closed or failed or of a stale path, the slot's
//! fields of an empty slot, the RNR tag when no back-off starts, `ts_now`
//! outside a step.
//!
//! A missing tool skips the test with a message, except under CI=true,
//! where it fails.

mod common;
mod tx_rig;

use std::collections::HashMap;

use common::Scratch;
use mrnic_hdl::tx_engine::nack;
use mrnic_hdl::Module;
use mrnic_model::path_telemetry as tel;
use mrnic_model::tx_engine::*;
use mrnic_proto::{Config, NackCode};
use tx_rig::{burst, replay_configs, tools_check_configs, Engine, Peer, Pressure, Rows, Run};

fn write(dir: &Scratch, p: &TxEngineParams) -> (Module, std::path::PathBuf) {
    let m = nack::build(&TxEngineParams::from_config(&tuned(&p.cfg)).unwrap());
    let rtl = tx_rig::write_unit(dir, &m, "tx_engine NACK handler", "tx_engine_nack");
    (m, rtl)
}

/// The engine, a peer SACKing its data frames, and the unit's rows.
struct Rig {
    e: Engine,
    rows: Rows,
    peer: Peer,
    seen: HashMap<&'static str, u32>,
    /// The row of each NACK step whose answer has not come yet.
    pending: Option<(usize, NackIn, u32)>,
    /// Connections failed by a NACK.
    failed: Vec<u32>,
}

impl Rig {
    fn new(cfg: Config, seed: u64) -> Rig {
        let p = TxEngineParams::from_config(&cfg).unwrap();
        let mut e = Engine::new(cfg, seed);
        e.tx.taps.nack = Some(NackTap::default());
        let mut r = Rig {
            e,
            rows: Rows::new(nack::ports(&p)),
            peer: Peer::default(),
            seen: HashMap::new(),
            pending: None,
            failed: Vec::new(),
        };
        r.e.clock(true);
        r.e.sweep(&mut r.peer);
        // The replay's first row resets the unit.
        r.put(0, "rst", 1);
        r
    }

    fn run(&mut self, cycles: u64) {
        for _ in 0..cycles {
            self.step();
        }
    }

    fn step(&mut self) {
        let (inp, ot) = self.e.clock(false);
        self.peer.beat(&mut self.e, &inp, &ot);
        let t = self.rows.len();
        self.put(t, "rst", 0);
        let tap = self.e.tx.taps.nack.clone().expect("the tap is on");
        if let Some(a) = tap.ans {
            self.answer(t, &a);
        }
        if let Some((n, ts, busy)) = tap.step {
            self.start(t, n, ts, busy);
        }
    }

    fn count(&mut self, what: &'static str) {
        *self.seen.entry(what).or_default() += 1;
    }

    fn put(&mut self, at: usize, name: &str, v: u64) {
        self.rows.put(at, name, v);
    }

    /// A NACK step at row `t`.
    fn start(&mut self, t: usize, n: NackIn, ts: u32, busy: u32) {
        assert!(self.pending.is_none(), "a step starts only after the last one's answer");
        assert_eq!(busy, 2, "the count comes from the record alone");
        let paths = self.e.tx.params().paths;
        self.pending = Some((t, n, ts));
        for (nm, v) in [
            ("ts_now", u64::from(ts)),
            ("s_go_nack", 1),
            ("s_nack_conn", u64::from(n.conn)),
            ("s_nack_path_id", u64::from(n.path_id)),
            ("s_nack_code", u64::from(n.code)),
            ("s_nack_psn", u64::from(n.psn)),
            ("m_busy", u64::from(busy)),
            ("m_unstall_valid", 1),
            ("m_unstall_conn", u64::from(n.conn)),
            ("m_rd_valid", 1),
            ("m_rd_conn", u64::from(n.conn)),
            ("m_rd_path", u64::from(n.path_id % paths)),
            ("m_rd_psn", u64::from(n.psn)),
        ] {
            self.put(t, nm, v);
        }
    }

    /// The answer of the pending step at row `a`: the reads in, the
    /// actions out.
    fn answer(&mut self, a: usize, act: &NackAct) {
        let l = self.e.tx.params().read_latency as usize;
        let (t, n, ts) = self.pending.take().expect("an answer follows a step");
        assert_eq!(a, t + l, "the model acts L cycles after the step");
        assert_eq!((act.nack, act.ts), (n, ts), "the answer is the step's");
        let r = act.read;
        self.put(a, "s_rd_open", u64::from(r.open));
        self.put(a, "s_rd_failed", u64::from(r.failed));
        let live = r.open && !r.failed;
        let mut bins: Vec<&'static str> = Vec::new();
        if !live {
            bins.push(if r.open { "failed_conn" } else { "closed_conn" });
            assert!(act.evt.is_none() && act.fail.is_none() && !act.stale, "nothing for a dead connection");
        } else {
            self.put(a, "s_rd_npaths", u64::from(r.npaths));
            let path_ok = n.path_id < r.npaths;
            let no_conn = n.code == NackCode::NoConn as u8;
            if path_ok && !no_conn {
                self.put(a, "s_pm_cum_acked", u64::from(r.cum_acked));
                self.put(a, "s_pm_next_psn", u64::from(r.next_psn));
                self.put(a, "s_ring_valid", u64::from(r.slot.is_some()));
                self.put(a, "s_rnr_full", u64::from(act.rnr_full));
                if let Some(s) = r.slot {
                    for (nm, v) in [
                        ("s_ring_stream", s.stream),
                        ("s_ring_wq", s.wq),
                        ("s_ring_rnr_count", u32::from(s.rnr_count)),
                        ("s_ring_rnr_resend", u32::from(s.rnr_resend)),
                        ("s_ring_rnr_wait", u32::from(s.rnr_wait)),
                        ("s_ring_queued", u32::from(s.queued)),
                    ] {
                        self.put(a, nm, u64::from(v));
                    }
                }
            }
            if !path_ok {
                bins.push("stale_path");
            } else if no_conn {
                bins.push("no_conn");
            } else if act.evt.is_none() {
                bins.push("stale_psn");
                if r.slot.is_none() {
                    bins.push("stale_empty_slot");
                }
            }
        }
        if act.stale {
            self.put(a, "m_stat_nack_stale", 1);
        }
        if act.rnr_refused {
            self.put(a, "m_stat_rnr_full", 1);
        }
        let path = u64::from(n.path_id);
        if let Some(kind) = act.evt {
            for (nm, v) in [
                ("m_evt_valid", 1),
                ("m_evt_kind", u64::from(kind)),
                ("m_evt_conn", u64::from(n.conn)),
                ("m_evt_path", path),
                ("m_evt_now", u64::from(ts)),
            ] {
                self.put(a, nm, v);
            }
            let s = r.slot.expect("an event for a packet");
            bins.push(match n.code {
                c if c == NackCode::Rnr as u8 => match (s.rnr_wait, s.rnr_count >= RNR_RETRY, act.rnr.is_some()) {
                    (true, _, _) => "rnr_while_waiting",
                    (false, true, _) => "rnr_past_retry",
                    (false, false, false) if act.rnr_refused => "rnr_fifo_full",
                    (false, false, true) if s.rnr_resend => "rnr_backoff_before_resend",
                    (false, false, true) if s.rnr_count > 0 => "rnr_backoff_again",
                    (false, false, true) => "rnr_backoff",
                    _ => unreachable!("an RNR on a slot not waiting, below the limit, backs off"),
                },
                c if c == NackCode::Access as u8 => "access",
                c if c == NackCode::BadHdr as u8 => {
                    if s.queued {
                        "bad_hdr_queued_already"
                    } else {
                        "bad_hdr"
                    }
                }
                _ => "stale_code",
            });
            if kind == tel::kind::RNR {
                bins.push("evt_rnr");
            }
        }
        if let Some(w) = act.slot {
            let s = r.slot.expect("a write of a packet's slot");
            let mut want = s;
            self.put(a, "m_ring_wr_valid", 1);
            self.put(a, "m_ring_wr_conn", u64::from(n.conn));
            self.put(a, "m_ring_wr_path", path);
            self.put(a, "m_ring_wr_psn", u64::from(n.psn));
            if let Some((until, tag)) = act.rnr {
                (want.rnr_count, want.rnr_wait, want.rnr_resend, want.queued, want.rnr_tag) =
                    (s.rnr_count + 1, true, true, false, tag);
                self.put(a, "s_rnr_tag", u64::from(tag));
                self.put(a, "m_ring_wr_rnr", 1);
                self.put(a, "m_ring_wr_rnr_count", u64::from(w.rnr_count));
                self.put(a, "m_ring_wr_rnr_tag", u64::from(tag));
                for (nm, v) in [
                    ("m_rnr_valid", 1),
                    ("m_rnr_conn", u64::from(n.conn)),
                    ("m_rnr_path", path),
                    ("m_rnr_psn", u64::from(n.psn)),
                    ("m_rnr_until", u64::from(until)),
                    ("m_rnr_tag", u64::from(tag)),
                ] {
                    self.put(a, nm, v);
                }
            } else {
                (want.queued, want.charge) = (true, true);
                assert!(act.retx, "a BAD_HDR write queues the packet");
            }
            assert_eq!(format!("{w:?}"), format!("{want:?}"), "the slot's write");
        }
        if act.retx {
            for (nm, v) in [
                ("m_retx_valid", 1),
                ("m_retx_conn", u64::from(n.conn)),
                ("m_retx_path", path),
                ("m_retx_psn", u64::from(n.psn)),
            ] {
                self.put(a, nm, v);
            }
        }
        if let Some((culprit, st)) = act.fail {
            self.failed.push(n.conn);
            self.put(a, "m_fail_valid", 1);
            self.put(a, "m_fail_conn", u64::from(n.conn));
            self.put(a, "m_fail_status", u64::from(st));
            if let Some((stream, wq)) = culprit {
                self.put(a, "m_fail_culprit_valid", 1);
                self.put(a, "m_fail_culprit_stream", u64::from(stream));
                self.put(a, "m_fail_culprit_slot", u64::from(wq));
            }
        }
        for b in bins {
            self.count(b);
        }
    }

    /// The rows as port values: the values placed, 0 on every other
    /// output, junk on every other input but the step enable and `rst`.
    fn finish(mut self) -> Run {
        self.rows.finish(&mut self.e.junk, &["rst", "s_go_nack"], self.seen)
    }

    fn nack(&mut self, conn: u32, path: u32, psn: u32, code: u8) {
        self.e.nacks.push_back(NackIn { conn, path_id: path, code, psn });
    }

    /// The oldest packet of `conn` on `path` the quiet peer saw.
    fn unanswered(&self, conn: u32, path: u32) -> u32 {
        self.peer
            .unanswered
            .iter()
            .find(|&&(c, p, _)| (c, p) == (conn, path))
            .map(|&(_, _, psn)| psn)
            .unwrap_or_else(|| panic!("connection {conn} sent on path {path}"))
    }
}

/// `cfg` as the traffic runs it: short timers so back-offs end within a
/// few thousand cycles, and at most 64 connections (path_telemetry's
/// timeout scanner visits one (connection, path) a cycle).
fn tuned(cfg: &Config) -> Config {
    let mut cfg = tx_rig::short_timers(cfg, 10, 60);
    cfg.hardware.tx_ring_depth = 4;
    cfg.transport.connections = cfg.transport.connections.min(64);
    cfg
}

/// The engine from reset with connections `1..=6` open (connection 5 on
/// one path), each with a few requests sent to a peer that has gone
/// quiet, so their packets stay outstanding.
fn start(cfg: &Config, seed: u64) -> (Rig, u64) {
    let cfg = tuned(cfg);
    let mut rig = Rig::new(cfg.clone(), seed);
    let paths = cfg.transport.paths_per_conn;
    let streams = cfg.transport.streams_per_conn.min(4);
    for c in 1..=6 {
        rig.peer.open(&mut rig.e, c, if c == 5 { 1 } else { 4.min(paths) }, 10 * c);
    }
    rig.run(300);
    rig.peer.mute.extend(1..=6);
    let mut off = 0;
    for c in 1..=6 {
        burst(&mut rig.e, c, streams, 1, u64::from(100 * c), &mut off);
    }
    rig.e.press = Pressure { axis: 10, ar: 10, r_gap: 10, cqe: 10 };
    rig.run(2_000);
    let rto = u64::from(tel::Consts::from_config(&cfg).rto_min) * cfg.cycles_per_ts();
    (rig, rto)
}

/// Scenario 1: every code once or twice, the stale kinds, and NACKs of
/// connections closed and failed.
fn codes(cfg: &Config, seed: u64) -> Rig {
    let (mut rig, _) = start(cfg, seed);
    let (bad, access) = (rig.unanswered(1, 0), rig.unanswered(2, 0));
    // BAD_HDR twice back to back: the second finds the packet queued.
    rig.nack(1, 0, bad, NackCode::BadHdr as u8);
    rig.nack(1, 0, bad, NackCode::BadHdr as u8);
    rig.run(200);
    rig.nack(2, 0, access, NackCode::Access as u8);
    rig.run(200);
    rig.nack(3, 1, 0, NackCode::NoConn as u8);
    rig.run(200);
    // Stale: a path past the connection's, a psn not outstanding, an
    // unknown code on a live packet.
    let live = rig.unanswered(6, 0);
    rig.nack(6, 200, live, NackCode::BadHdr as u8);
    rig.nack(6, 0, (live + 1000) & 0xff_ffff, NackCode::Rnr as u8);
    rig.nack(6, 0, live, 0);
    rig.nack(6, 0, live, 9);
    rig.run(200);
    // Stale: a psn inside the window whose slot is empty (a SACK took the
    // packet after its path's oldest, which stays outstanding; connection
    // 4, untouched so far, or another live one).
    let paths = rig.e.tx.params().paths;
    let (conn, path, first, second) = [4, 6, 1]
        .into_iter()
        .flat_map(|c| (0..paths).map(move |p| (c, p)))
        .find_map(|(c, p)| {
            let mut psns: Vec<u32> =
                rig.peer.unanswered.iter().filter(|&&(x, q, _)| (x, q) == (c, p)).map(|&(_, _, x)| x).collect();
            psns.sort_unstable();
            psns.dedup();
            (psns.len() >= 2).then(|| (c, p, psns[0], psns[1]))
        })
        .expect("a path has two packets outstanding");
    let gap = tx_rig::psn_diff(second, first) - 1;
    let mut bitmap = [0u64; 4];
    bitmap[(gap / 64) as usize] |= 1 << (gap % 64);
    rig.e.sacks.push_back(SackIn {
        conn,
        path_id: path,
        cum_psn: first,
        bitmap,
        ecn_cnt: 0,
        echo_ts: 0,
        rate_hint: 0xffff,
        stream_id: 0xff,
        completed_msn: 0,
        dport: 0,
    });
    rig.run(200);
    rig.nack(conn, path, second, NackCode::BadHdr as u8);
    rig.run(200);
    // Closed and failed connections.
    let never = rig.e.cfg.transport.connections - 1;
    rig.nack(never, 0, 0, NackCode::BadHdr as u8);
    rig.nack(2, 0, access, NackCode::Rnr as u8);
    rig.nack(3, 0, 0, NackCode::Access as u8);
    rig.run(2_000);
    assert_eq!(rig.failed, vec![2, 3], "ACCESS and NO_CONN failed their connections");
    rig
}

/// Scenario 2: connection 5 (one path)'s oldest packet RNR NACKed every
/// eighth of rto_min: back-offs start, NACKs land while one runs, the
/// resend is NACKed again, until the eighth back-off would pass
/// RNR_RETRY and the connection fails.
fn rnr(cfg: &Config, seed: u64) -> Rig {
    let (mut rig, rto) = start(cfg, seed);
    let psn = rig.unanswered(5, 0);
    for _ in 0..8 * 14 {
        if rig.failed.contains(&5) {
            break;
        }
        rig.nack(5, 0, psn, NackCode::Rnr as u8);
        rig.run(rto / 8);
    }
    assert!(rig.failed.contains(&5), "the RNR retry limit failed connection 5");
    rig.nack(5, 0, psn, NackCode::Rnr as u8);
    rig.run(500);
    rig
}

/// Scenario 3: more packets outstanding than the RNR FIFO holds, every
/// one RNR NACKed at once: the FIFO fills, and the NACKs past its depth
/// start no back-off (counted; a NACK event) until the first back-offs
/// end and resend.
fn rnr_full(cfg: &Config, seed: u64) -> Rig {
    let (mut rig, rto) = start(cfg, seed);
    let streams = rig.e.cfg.transport.streams_per_conn.min(4);
    let mut off = 0;
    for c in 1..=6 {
        burst(&mut rig.e, c, streams, 4, u64::from(1000 * c), &mut off);
    }
    rig.run(6_000);
    let mut all = rig.peer.unanswered.clone();
    all.sort_unstable();
    all.dedup();
    let depth = rig.e.tx.params().rnr_depth as usize;
    assert!(all.len() > depth, "{} packets outstanding for an RNR FIFO of {depth}", all.len());
    for (c, p, psn) in all {
        rig.nack(c, p, psn, NackCode::Rnr as u8);
    }
    rig.run(2 * rto);
    rig
}

fn replay_config(cfg: &Config) -> Run {
    const SEED: u64 = 0x7ac4;
    tx_rig::scenarios(
        cfg,
        &[
            ("codes", &|c| codes(c, SEED).finish()),
            ("rnr", &|c| rnr(c, SEED).finish()),
            ("rnr_full", &|c| rnr_full(c, SEED).finish()),
        ],
    )
}

/// The model's NACK handler and the unit, cycle by cycle, both configs:
/// every output equal every cycle, the answer `L` cycles after the step,
/// and the run covered every code and outcome.
#[test]
fn icarus_nack_handler_is_the_models() {
    replay_configs(
        "tx-nack",
        nack::NAME,
        write,
        replay_config,
        &[
            "closed_conn",
            "failed_conn",
            "stale_path",
            "stale_psn",
            "stale_empty_slot",
            "stale_code",
            "no_conn",
            "access",
            "bad_hdr",
            "bad_hdr_queued_already",
            "rnr_backoff",
            "rnr_backoff_again",
            "rnr_while_waiting",
            "rnr_past_retry",
            "rnr_fifo_full",
            "evt_rnr",
        ],
    );
}

/// Verilator `-Wall` with no waivers and `iverilog -g2005 -Wall` silent,
/// for both configs; Yosys: no latch after `proc` and `check -assert`.
#[test]
fn tools_accept_the_nack_handler() {
    tools_check_configs("tx-nack", write);
}
