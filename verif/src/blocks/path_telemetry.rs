//! `path_telemetry` traffic and coverage.
//!
//! `ts_now` runs 0 to 4 units per cycle (about 2.5 on average), so the
//! `small` config's RTO (at least `rto_min` = 1562 units) expires within a
//! few hundred cycles and the scanner's TIMERs, the SUSPECT and DEAD walks
//! and the re-entropy happen in every run of some thousand cycles. Events
//! carry `now` near `ts_now`; 40% of them go to two hot entries, so
//! back-to-back updates of one entry (the forwarding) are frequent.

use std::cell::Cell;
use std::rc::Rc;

use mrnic_model::block::Bits;
use mrnic_model::path_telemetry::{self as pt, kind, PathTelemetryParams, DEAD};

use super::{hs, idx};
use crate::coverage::Coverage;
use crate::stimulus::{Rng, Traffic, Txn};

const KIND_NAMES: [&str; 10] =
    ["OPEN", "SEND", "RETX", "PROBE_SENT", "ACK", "PROBE_REPLY", "NACK", "TIMEOUT", "TICK", "TIMER"];
const STATE_NAMES: [&str; 4] = ["GOOD", "SKIP", "SUSPECT", "DEAD"];
const ACT_NAMES: [&str; 4] = ["probe", "all_lost", "died", "recovered"];
/// The coverage bin of state changes the state machine does not have.
pub const IMPOSSIBLE: &str = "state: a change the state machine does not have (must stay 0)";

/// Random events and reads (see the module docs).
pub fn traffic(p: &PathTelemetryParams, seed: u64) -> Traffic {
    let clock = Rc::new(Cell::new(1000u32));
    let (c1, c2) = (clock.clone(), clock);
    let p2 = *p;
    Traffic::new(&pt::ports(p), seed)
        .idle(20)
        .backpressure(30)
        .input_u64("ts_now", move |rng, _| {
            c1.set(c1.get().wrapping_add(rng.below(5) as u32));
            c1.get() as u64
        })
        .source("s_evt_", move |rng, t| random_event(&p2, rng, t, c2.get()))
        .source("s_rd_", move |rng, t| {
            t.set_u64("conn", if rng.percent(50) { rng.below(2) } else { rng.next_u64() });
        })
        .monitor(move |c| Monitor::declare(&p2, c), Monitor::observe)
}

/// One random `s_evt` transaction at time `now`.
pub fn random_event(p: &PathTelemetryParams, rng: &mut Rng, t: &mut Txn, now: u32) {
    let (conn, path) = if rng.percent(40) {
        (0, rng.below(2.min(p.paths as u64)))
    } else {
        (rng.below(p.conns as u64), rng.below(p.paths as u64))
    };
    let k = match rng.below(100) {
        0..=7 => kind::OPEN,
        8..=27 => kind::SEND,
        28..=32 => kind::RETX,
        33..=37 => kind::PROBE_SENT,
        38..=53 => kind::ACK,
        54..=59 => kind::ACK_STEER,
        60..=67 => kind::PROBE_REPLY,
        68..=72 => kind::NACK,
        73..=83 => kind::TIMEOUT,
        84..=89 => kind::TICK,
        90..=95 => kind::TIMER,
        96 => kind::RNR,
        97 => kind::RESUME,
        _ => 10 + rng.below(6) as u8,
    };
    let pkts = rng.below(12);
    t.set_u64("kind", k as u64)
        .set_u64("conn", conn)
        .set_u64("path", path)
        .set_u64("now", now.wrapping_add(rng.below(3) as u32) as u64)
        .set_u64("acked_pkts", pkts)
        .set_u64("acked_bytes", pkts * 1024)
        .set_u64("ecn_cnt", if rng.percent(15) { rng.below(256) } else { 0 })
        .set_u64("rtt_valid", rng.percent(70) as u64)
        .set_u64("rtt", 50 + rng.below(3000))
        .set_u64("plane", rng.below(8));
    // cum_acked, acked_seq and sport stay random bits.
}

/// Coverage of the events, actions, timeouts and path states.
pub struct Monitor {
    evt: [usize; 6],
    upd: [usize; 5],
    rto: [usize; 3],
    rd: [usize; 2],
    paths: u32,
    kinds: Vec<usize>,
    noop: usize,
    acts: [usize; 4],
    clr: usize,
    rto_record: usize,
    rto_states: [usize; 4],
    trans: [[usize; 4]; 4],
    all_dead: usize,
    back_to_back: usize,
    read: usize,
    /// Each entry's state as the updates told it (0 after reset).
    state: Vec<u8>,
    last_evt: Option<(u64, u64)>,
}

impl Monitor {
    fn declare(p: &PathTelemetryParams, c: &mut Coverage) -> Monitor {
        let ports = pt::ports(p);
        let i = |n: &str| idx(&ports, n);
        // The state machine's edges (SKIP only from GOOD on a CE cut, DEAD
        // only from SUSPECT; OPEN makes any path GOOD); any other change is
        // counted in one bin that must stay empty.
        let impossible = c.bin(IMPOSSIBLE);
        let mut trans = [[impossible; 4]; 4];
        for (a, b) in [(0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 3), (3, 2), (3, 0)] {
            trans[a][b] = c.bin(format!("state: {} -> {}", STATE_NAMES[a], STATE_NAMES[b]));
        }
        Monitor {
            evt: ["s_evt_valid", "s_evt_ready", "s_evt_kind", "s_evt_conn", "s_evt_path", "rst"].map(i),
            upd: ["m_upd_valid", "m_upd_ready", "m_upd_conn", "m_upd_path", "m_upd_state"].map(i),
            rto: ["m_rto_valid", "m_rto_ready", "m_rto_state"].map(i),
            rd: ["m_rd_valid", "m_rd_ready"].map(i),
            paths: p.paths,
            kinds: KIND_NAMES.iter().map(|k| c.bin(format!("event: {k}"))).collect(),
            noop: c.bin("event: kind 10..15 (no operation)"),
            acts: ACT_NAMES.map(|a| c.bin(format!("update: action {a}"))),
            clr: c.bin("update: credit clear"),
            rto_record: c.bin("timeout applied (m_rto)"),
            rto_states: STATE_NAMES.map(|s| c.bin(format!("timeout: path now {s}"))),
            trans,
            all_dead: c.bin("all paths of a connection DEAD"),
            back_to_back: c.bin("event: same entry as the previous cycle's"),
            read: c.bin("read response"),
            state: vec![0; p.entries() as usize],
            last_evt: None,
        }
    }

    fn observe(&mut self, v: &[Bits], rst: bool, c: &mut Coverage) {
        if rst {
            self.state.iter_mut().for_each(|s| *s = 0);
            self.last_evt = None;
            return;
        }
        let [ev, er, ek, ec, ep, _] = self.evt;
        if hs(v, ev, er) {
            let k = v[ek].as_u64() as usize;
            c.hit(if k < self.kinds.len() { self.kinds[k] } else { self.noop });
            let entry = (v[ec].as_u64(), v[ep].as_u64());
            if self.last_evt == Some(entry) {
                c.hit(self.back_to_back);
            }
            self.last_evt = Some(entry);
        } else {
            self.last_evt = None;
        }
        let [uv, ur, uc, up, us] = self.upd;
        if hs(v, uv, ur) {
            let act = v[us + 3].as_u64();
            for (b, &bin) in self.acts.iter().enumerate() {
                if act >> b & 1 == 1 {
                    c.hit(bin);
                }
            }
            if v[us + 2].bit(0) {
                c.hit(self.clr);
            }
            let conn = v[uc].as_u64() as usize;
            let e = conn * self.paths as usize + v[up].as_u64() as usize;
            let (old, new) = (self.state[e] as usize, v[us].as_u64() as usize & 3);
            if old != new {
                c.hit(self.trans[old][new]);
            }
            self.state[e] = new as u8;
            let row = &self.state[conn * self.paths as usize..(conn + 1) * self.paths as usize];
            if new == DEAD as usize && row.iter().all(|&s| s == DEAD) {
                c.hit(self.all_dead);
            }
        }
        let [rv, rr, rs] = self.rto;
        if hs(v, rv, rr) {
            c.hit(self.rto_record);
            c.hit(self.rto_states[v[rs].as_u64() as usize & 3]);
        }
        if hs(v, self.rd[0], self.rd[1]) {
            c.hit(self.read);
        }
    }
}
