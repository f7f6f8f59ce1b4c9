//! `conn_table` traffic and coverage.
//!
//! Connection ids are drawn from a small pool per slot (`slot + k * CONNS`
//! for k in 0..3), so a lookup mostly names an id that was written to its
//! slot (a hit), sometimes the other id of the same slot (a tag miss), and
//! now and then any 24-bit id. Traffic is concentrated on a few hot slots
//! ([`Mode::hot_slots`]) so a lookup often follows a write of its slot
//! within the read latency (the forwarding path). Opens outnumber closes,
//! so the table fills; path counts and path ids straddle each other (bad
//! paths). Peer addresses come from a pool of two ([`PEER_ADDRS`]), so
//! lookups of open connections come from the peer or from another source.
//! Stream writes mix single-stream updates and clears.

use mrnic_model::block::Bits;
use mrnic_model::conn_table::{self as ct, ConnTableParams, NACK_BAD_HDR, NACK_NO_CONN};

use super::{hs, idx, shared, Shared};
use crate::coverage::Coverage;
use crate::stimulus::{Rng, Traffic, Txn};

/// Peer addresses: connections are opened with one of these and lookups
/// mostly come from one of them, so a lookup that names an open connection
/// comes from its peer about half the time (the rest is a spoofed source).
pub const PEER_ADDRS: [u64; 2] = [0x0a00_0001, 0x0a00_0002];

/// How the generators pick; tests change it through the handle
/// [`traffic`] returns.
#[derive(Clone, Copy, Debug)]
pub struct Mode {
    /// Slots most transactions go to (70%); the rest go anywhere.
    pub hot_slots: u32,
    /// No random transactions: only what tests [`Traffic::push`].
    pub only_directed: bool,
}

/// A local id of `slot`: variant `k` (0..3) of the pool.
pub fn pool_id(p: &ConnTableParams, slot: u32, k: u32) -> u32 {
    (slot + k * p.conns) & 0xff_ffff
}

/// The mode, or `None` (and the transaction skipped) when only directed
/// transactions go.
fn random(mode: &Shared<Mode>, t: &mut Txn) -> Option<Mode> {
    let m = *mode.borrow();
    if m.only_directed {
        t.skip();
        return None;
    }
    Some(m)
}

fn slot(p: &ConnTableParams, m: &Mode, rng: &mut Rng) -> u32 {
    if rng.percent(70) {
        rng.below(m.hot_slots.clamp(1, p.conns) as u64) as u32
    } else {
        rng.below(p.conns as u64) as u32
    }
}

/// Random writes, stream writes, lookups and reads (see the module docs),
/// and the handle through which tests change the [`Mode`].
pub fn traffic(p: &ConnTableParams, seed: u64) -> (Traffic, Shared<Mode>) {
    let ports = ct::ports(p);
    let mode = shared(Mode { hot_slots: 2, only_directed: false });
    let (m1, m2, m3, m4) = (mode.clone(), mode.clone(), mode.clone(), mode.clone());
    let (p1, p2, p3, p4) = (*p, *p, *p, *p);
    let t = Traffic::new(&ports, seed)
        .idle(30)
        .backpressure(30)
        .random_resets(1)
        .source("s_wr_", move |rng, t| {
            let Some(m) = random(&m1, t) else { return };
            let s = slot(&p1, &m, rng);
            t.set_u64("entry_valid", rng.percent(85) as u64)
                .set_u64("local_id", pool_id(&p1, s, rng.below(2) as u32) as u64)
                .set_u64("paths", if rng.percent(90) { rng.below(5) } else { rng.below(64) })
                .set_u64("remote_addr", PEER_ADDRS[rng.below(2) as usize]);
        })
        .source("s_st_", move |rng, t| {
            let Some(m) = random(&m2, t) else { return };
            t.set_u64("conn", slot(&p2, &m, rng) as u64).set_u64("clear", rng.percent(10) as u64);
        })
        .source("s_lk_", move |rng, t| {
            let Some(m) = random(&m3, t) else { return };
            let s = slot(&p3, &m, rng);
            let id = if rng.percent(90) { pool_id(&p3, s, rng.below(3) as u32) } else { rng.below(1 << 24) as u32 };
            t.set_u64("op", rng.below(4))
                .set_u64("dst_conn", id as u64)
                .set_u64("path_id", if rng.percent(90) { rng.below(5) } else { rng.below(256) })
                .set_u64(
                    "src_addr",
                    if rng.percent(95) { PEER_ADDRS[rng.below(2) as usize] } else { rng.below(1 << 32) },
                );
        })
        .source("s_rd_", move |rng, t| {
            let Some(m) = random(&m4, t) else { return };
            t.set_u64("conn", slot(&p4, &m, rng) as u64);
        });
    let p = *p;
    (t.monitor(move |c| Monitor::declare(&p, c), Monitor::observe), mode)
}

/// Coverage of the decisions, the forwarding and the table's fill.
pub struct Monitor {
    p: ConnTableParams,
    wr: [usize; 4],
    st: [usize; 4],
    lk: [usize; 4],
    lk_out: [usize; 5],
    nack: [usize; 3],
    rd: [usize; 3],
    rd_out: [usize; 3],
    stats: [usize; 5],
    /// Per slot: the id open there (as written), and the cycle of its
    /// last write.
    open: Vec<Option<u64>>,
    written: Vec<Option<u64>>,
    cycle: u64,
    // Bins.
    outcome: [[usize; 3]; 3],
    tag_miss: usize,
    nack_code: [usize; 2],
    stat_bins: [usize; 5],
    wr_bins: [usize; 2],
    st_bins: [usize; 2],
    rd_bins: [usize; 2],
    fwd_lk: usize,
    fwd_rd: usize,
    same_cycle: usize,
    full: usize,
    lk_full: usize,
}

/// Outcome index of a lookup answer: hit and ok, hit and refused, miss.
fn outcome(hit: bool, ok: bool) -> usize {
    match (hit, ok) {
        (true, true) => 0,
        (true, false) => 1,
        _ => 2,
    }
}

impl Monitor {
    fn declare(p: &ConnTableParams, c: &mut Coverage) -> Monitor {
        let ports = ct::ports(p);
        let i = |n: &str| idx(&ports, n);
        let ops = ["DATA", "PROBE", "ACK"];
        let outs = ["hit, goes on", "hit, refused (bad path or source)", "no connection"];
        Monitor {
            p: *p,
            wr: ["s_wr_valid", "s_wr_ready", "s_wr_local_id", "s_wr_entry_valid"].map(i),
            st: ["s_st_valid", "s_st_ready", "s_st_conn", "s_st_clear"].map(i),
            lk: ["s_lk_valid", "s_lk_ready", "s_lk_dst_conn", "s_lk_op"].map(i),
            lk_out: ["m_lk_valid", "m_lk_ready", "m_lk_op", "m_lk_hit", "m_lk_ok"].map(i),
            nack: ["m_nack_valid", "m_nack_ready", "m_nack_code"].map(i),
            rd: ["s_rd_valid", "s_rd_ready", "s_rd_conn"].map(i),
            rd_out: ["m_rd_valid", "m_rd_ready", "m_rd_entry_valid"].map(i),
            stats: ["stat_no_conn", "stat_ack_no_conn", "stat_bad_path", "stat_bad_src", "stat_ack_bad_src"].map(i),
            open: vec![None; p.conns as usize],
            written: vec![None; p.conns as usize],
            cycle: 0,
            outcome: ops.map(|o| outs.map(|r| c.bin(format!("lookup {o}: {r}")))),
            tag_miss: c.bin("lookup: slot open under another id (tag miss)"),
            nack_code: [c.bin("NACK NO_CONN sent"), c.bin("NACK BAD_HDR sent")],
            stat_bins: ["no_conn", "ack_no_conn", "bad_path", "bad_src", "ack_bad_src"]
                .map(|n| c.bin(format!("counter: {n}"))),
            wr_bins: [c.bin("write: close"), c.bin("write: open")],
            st_bins: [c.bin("stream write: one stream"), c.bin("stream write: clear")],
            rd_bins: [c.bin("read: closed slot"), c.bin("read: open slot")],
            fwd_lk: c.bin("lookup of a slot written within the read latency (forwarded)"),
            fwd_rd: c.bin("read of a slot written within the read latency (forwarded)"),
            same_cycle: c.bin("connection and stream write of one slot in one cycle"),
            full: c.bin("every slot open (table full)"),
            lk_full: c.bin("lookup while the table is full"),
        }
    }

    /// Whether `slot` was written in the last `L` cycles (the writes the
    /// read cannot see yet), or this cycle.
    fn recent(&self, slot: usize) -> bool {
        self.written[slot].is_some_and(|w| self.cycle - w <= self.p.read_latency as u64)
    }

    fn observe(&mut self, v: &[Bits], rst: bool, c: &mut Coverage) {
        self.cycle += 1;
        if rst {
            self.open.iter_mut().for_each(|o| *o = None);
            self.written.iter_mut().for_each(|w| *w = None);
            return;
        }
        let mask = (self.p.conns - 1) as u64;
        let full = self.open.iter().all(Option::is_some);
        if hs(v, self.lk[0], self.lk[1]) {
            let id = v[self.lk[2]].as_u64();
            let s = (id & mask) as usize;
            if self.recent(s) {
                c.hit(self.fwd_lk);
            } else if self.open[s].is_some_and(|o| o != id) {
                c.hit(self.tag_miss);
            }
            if full {
                c.hit(self.lk_full);
            }
        }
        if hs(v, self.rd[0], self.rd[1]) && self.recent((v[self.rd[2]].as_u64() & mask) as usize) {
            c.hit(self.fwd_rd);
        }
        let mut wrote = None;
        if hs(v, self.wr[0], self.wr[1]) {
            let id = v[self.wr[2]].as_u64();
            let s = (id & mask) as usize;
            let open = v[self.wr[3]].bit(0);
            c.hit(self.wr_bins[open as usize]);
            self.open[s] = open.then_some(id);
            self.written[s] = Some(self.cycle);
            wrote = Some(s);
        }
        if hs(v, self.st[0], self.st[1]) {
            let s = (v[self.st[2]].as_u64() & mask) as usize;
            c.hit(self.st_bins[v[self.st[3]].bit(0) as usize]);
            if wrote == Some(s) {
                c.hit(self.same_cycle);
            }
            self.written[s] = Some(self.cycle);
        }
        if self.open.iter().all(Option::is_some) {
            c.hit(self.full);
        }
        if hs(v, self.lk_out[0], self.lk_out[1]) {
            let op = (v[self.lk_out[2]].as_u64() as usize).min(2);
            let (hit, ok) = (v[self.lk_out[3]].bit(0), v[self.lk_out[4]].bit(0));
            c.hit(self.outcome[op][outcome(hit, ok)]);
        }
        if hs(v, self.nack[0], self.nack[1]) {
            match v[self.nack[2]].as_u64() as u8 {
                NACK_NO_CONN => c.hit(self.nack_code[0]),
                NACK_BAD_HDR => c.hit(self.nack_code[1]),
                _ => {}
            }
        }
        if hs(v, self.rd_out[0], self.rd_out[1]) {
            c.hit(self.rd_bins[v[self.rd_out[2]].bit(0) as usize]);
        }
        for (s, b) in self.stats.iter().zip(self.stat_bins) {
            if v[*s].bit(0) {
                c.hit(b);
            }
        }
    }
}
