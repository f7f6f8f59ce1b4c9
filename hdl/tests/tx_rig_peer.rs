//! The replay rig's peer (`tx_rig::Peer`) against the model `TxEngine`,
//! with no unit replayed: what the `tx_engine_*` replays rely on the peer
//! for. Under loss every request completes (tail losses are recovered
//! through the PROBEs the peer answers, as a receiver does), a path that
//! timed out comes back to GOOD, a connection whose psns wrap past 2^24
//! keeps sending, and a reopened connection that had failed is live again
//! once its `s_open` records are taken.

mod common;
mod tx_rig;

use std::collections::HashMap;

use mrnic_model::path_telemetry as tel;
use mrnic_model::tx_engine::{status, NackIn};
use mrnic_proto::{Config, NackCode};
use tx_rig::{burst, Engine, Peer};

/// Short timers, so that timeouts come within a short run.
fn tuned(cfg: &Config) -> Config {
    let mut cfg = cfg.clone();
    cfg.timers.rto_min_us = 10;
    cfg.timers.rto_max_us = 40;
    cfg.timers.dead_probe_interval_us = 60;
    cfg
}

/// The engine, its peer, and the completions it gave, by (conn, stream).
struct Rig {
    e: Engine,
    peer: Peer,
    posted: u32,
    done: HashMap<(u32, u32), Vec<u8>>,
}

impl Rig {
    fn new(cfg: &Config, seed: u64) -> Rig {
        let mut r = Rig { e: Engine::new(tuned(cfg), seed), peer: Peer::default(), posted: 0, done: HashMap::new() };
        r.e.clock(true);
        r.e.sweep(&mut r.peer);
        r
    }

    fn step(&mut self) {
        let (inp, ot) = self.e.clock(false);
        if let (Some(_), true) = (inp.wr, ot.wr_ready) {
            self.posted += 1;
        }
        if let (Some(c), true) = (ot.cqe, inp.cqe_ready) {
            self.done.entry((c.conn, c.stream)).or_default().push(c.status);
        }
        self.peer.beat(&mut self.e, &inp, &ot);
    }

    fn run(&mut self, cycles: u64) {
        for _ in 0..cycles {
            self.step();
        }
    }

    fn completed(&self) -> u32 {
        self.done.values().map(|v| v.len() as u32).sum()
    }

    /// Runs until every request posted has completed (and none waits to
    /// be posted), at most `limit` cycles; whether they all did.
    fn drain(&mut self, limit: u64) -> bool {
        for _ in 0..limit {
            if self.e.wrs.is_empty() && self.completed() == self.posted {
                return true;
            }
            self.step();
        }
        false
    }

    /// Completions by (conn, stream) against the posts, for a failure's
    /// message.
    fn summary(&self) -> String {
        let mut v: Vec<_> = self.done.iter().map(|(k, s)| (*k, s.len())).collect();
        v.sort_unstable();
        format!("{} posted, {} waiting, completed {v:?}", self.posted, self.e.wrs.len())
    }
}

/// `tx_engine_commit`'s traffic, longer: four connections, four streams,
/// two requests per stream a round for 16 rounds (every stream's work
/// queue pointers wrap), the peer naming each packet's stream and msn so
/// streams send past the message table, 5 % of the frames (PROBEs too)
/// lost. Every request completes with SUCCESS once the loss stops. With a
/// peer that did not answer PROBEs, paths whose tail loss only a PROBE
/// reply shows timed out, went SUSPECT and DEAD, and a stream with a
/// packet on them stopped: its work queue filled and, the request FIFO
/// being in order, every post behind it waited (after 6 rounds in
/// `small`, 12 in `default`).
#[test]
fn lossy_traffic_completes_every_request() {
    common::per_config(common::configs(), |cfg| {
        let mut r = Rig::new(cfg, 0xc0317);
        let paths = cfg.transport.paths_per_conn;
        let streams = cfg.transport.streams_per_conn.min(4);
        r.peer.window = true;
        for (c, np, psn) in [(1, 2, 0), (2, 3, 100), (3, 1, 0), (4, 4, 7)] {
            r.peer.open(&mut r.e, c, np.min(paths), psn);
        }
        r.run(300);
        r.e.press = tx_rig::Pressure { axis: 20, ar: 10, r_gap: 10, cqe: 10 };
        r.peer.loss = 5;
        let mut off = 0;
        for k in 0..16 {
            for c in 1..=4 {
                burst(&mut r.e, c, streams, 2, u64::from(100 * c + 1000 * k), &mut off);
            }
            r.run(3_000);
        }
        r.peer.loss = 0;
        assert!(r.drain(1_000_000), "{}: every request completes: {}", cfg.name, r.summary());
        assert_eq!(r.posted, 4 * 16 * 2 * streams);
        for (k, s) in &r.done {
            assert!(s.iter().all(|&x| x == status::SUCCESS), "{}: {k:?}: {s:?}", cfg.name);
        }
        assert!(r.peer.probes_answered > 0, "{}: the run PROBEd", cfg.name);
    });
}

/// A connection whose path loses everything for a while: its timeouts
/// take it SUSPECT (and on to DEAD), and once frames get through again
/// the PROBEs the peer answers bring it back to GOOD, and the requests
/// sent meanwhile complete.
#[test]
fn a_path_that_timed_out_returns_to_good() {
    common::per_config(common::configs(), |cfg| {
        let mut r = Rig::new(cfg, 0x9b0);
        let np = 2.min(cfg.transport.paths_per_conn);
        r.peer.open(&mut r.e, 3, np, 40);
        r.run(300);
        let mut off = 0;
        burst(&mut r.e, 3, 2, 2, 10, &mut off);
        r.run(200);
        r.peer.loss = 100;
        let rto_max = u64::from(r.e.cfg.timers.rto_max_us) * 1000 / 64 * r.e.cfg.cycles_per_ts();
        // path_telemetry's timer scan visits an entry a cycle, so
        // `default`'s timeouts come a scan apart.
        let suspect = |r: &Rig| (0..np).any(|p| r.e.pt.entry(3, p).state >= tel::SUSPECT);
        let mut ran = 0;
        while !suspect(&r) {
            r.run(1_000);
            ran += 1_000;
            assert!(ran < 5_000_000, "{}: a path times out to SUSPECT", cfg.name);
        }
        r.peer.loss = 0;
        assert!(r.drain(2_000_000), "{}: {}", cfg.name, r.summary());
        let good = |r: &Rig| (0..np).all(|p| r.e.pt.entry(3, p).state == tel::GOOD);
        let mut ran = 0;
        while !good(&r) && ran < 5_000_000 {
            r.run(rto_max);
            ran += rto_max;
        }
        let states: Vec<u8> = (0..np).map(|p| r.e.pt.entry(3, p).state).collect();
        assert!(good(&r), "{}: every path GOOD again: {states:?}", cfg.name);
        assert_eq!(r.e.tx.failed(3), None);
    });
}

/// Paths starting three psns below 2^24: the peer follows the wrap (24-bit
/// serial arithmetic), so the connection sends on past it under loss and
/// every request completes. A peer comparing 32-bit psns dropped every
/// packet after the wrap as old, and the paths' windows filled.
#[test]
fn psns_wrapping_past_2_24_are_followed() {
    common::per_config(common::configs(), |cfg| {
        let mut r = Rig::new(cfg, 0x24);
        let np = 2.min(cfg.transport.paths_per_conn);
        let streams = cfg.transport.streams_per_conn.min(4);
        r.peer.open(&mut r.e, 6, np, (1 << 24) - 3);
        r.run(300);
        r.peer.loss = 5;
        let mut off = 0;
        for k in 0..4 {
            burst(&mut r.e, 6, streams, 2, 5000 + 100 * k, &mut off);
            r.run(3_000);
        }
        r.peer.loss = 0;
        assert!(r.drain(1_000_000), "{}: {}", cfg.name, r.summary());
        for p in 0..np {
            let cum = r.peer.rx[&(6, p)].cum;
            assert!(cum < 1 << 16, "{}: path {p} received past the wrap: cum {cum:#x}", cfg.name);
        }
        assert!(r.done.values().flatten().all(|&s| s == status::SUCCESS), "{}", cfg.name);
    });
}

/// A connection failed by a NO_CONN NACK and opened again: the failure
/// stays while the `s_open` records wait (path 0's is taken when the
/// acknowledgement unit and the scheduler are idle, after the failure's
/// ring clear), and is gone once they are taken; requests then complete.
/// (A live connection reopened is flushed first, WR_FLUSH, by its walk.)
#[test]
fn a_failed_connection_reopened_is_live_once_its_records_are_taken() {
    common::per_config(common::configs(), |cfg| {
        let mut r = Rig::new(cfg, 0x40);
        r.peer.open(&mut r.e, 4, 2.min(cfg.transport.paths_per_conn), 70);
        r.run(300);
        let mut off = 0;
        burst(&mut r.e, 4, 2, 2, 100, &mut off);
        assert!(r.drain(100_000), "{}: {}", cfg.name, r.summary());
        r.e.nacks.push_back(NackIn { conn: 4, path_id: 0, code: NackCode::NoConn as u8, psn: 0 });
        r.run(50);
        assert_eq!(r.e.tx.failed(4), Some(status::REMOTE_INVALID_REQUEST), "{}", cfg.name);
        r.peer.open(&mut r.e, 4, 2.min(cfg.transport.paths_per_conn), 7000);
        r.step();
        assert_eq!(r.e.tx.failed(4), Some(status::REMOTE_INVALID_REQUEST), "{}: not yet taken", cfg.name);
        let mut waited = 0;
        while !r.e.opens.is_empty() {
            r.step();
            waited += 1;
            assert!(waited < 100_000, "{}: the records are taken", cfg.name);
        }
        r.step();
        assert_eq!(r.e.tx.failed(4), None, "{}: live after {waited} cycles", cfg.name);
        r.done.clear();
        r.posted = 0;
        burst(&mut r.e, 4, 2, 2, 200, &mut off);
        assert!(r.drain(100_000), "{}: {}", cfg.name, r.summary());
        assert!(r.done.values().flatten().all(|&s| s == status::SUCCESS), "{}", cfg.name);
    });
}
