//! `sack_gen` traffic and coverage.
//!
//! The generator keeps, per (connection, path), the psn and generation it
//! sends next, and mostly sends in order (so cum_psn advances); one packet
//! in five jumps ahead (bitmap bits, later filled), one in twenty is beyond
//! the window, one in twenty a duplicate; generations mostly current, some
//! newer (adopted), some older (one behind accepted, older stale). OPENs
//! restart an entry. PROBEs (one in ten, mostly inside the window, most
//! of them first beats) on a `ts_now` that counts one unit per four cycles, so
//! hot paths run past their answer budget within a period; FLUSHes ask
//! for a path's pending packets. [`Directed`] packets go first: the tests queue edge
//! cases there (a full bitmap).

use std::collections::VecDeque;

use mrnic_model::block::Bits;
use mrnic_model::sack_gen::{self as sg, SackGenParams, OP_DATA, OP_FLUSH, OP_OPEN, OP_PROBE};

use super::{hs, idx, shared, Shared};
use crate::coverage::Coverage;
use crate::stimulus::{Rng, Traffic, Txn};

const PSN_MASK: u64 = (1 << 24) - 1;

/// One `s_pkt` beat; fields not named here are random.
#[derive(Clone, Copy, Debug, Default)]
pub struct Pkt {
    pub op: u32,
    pub conn: u32,
    pub path: u32,
    pub psn: u32,
    pub gen: u8,
    pub ackreq: bool,
}

/// Directed packets, sent before any random one.
#[derive(Default)]
pub struct Directed {
    pub pkts: VecDeque<Pkt>,
    pub only_directed: bool,
    /// Per (connection, path): next psn, generation.
    shadow: Vec<(u64, u8)>,
}

/// Random packets, and the handle through which tests add directed ones.
pub fn traffic(p: &SackGenParams, seed: u64) -> (Traffic, Shared<Directed>) {
    let ports = sg::ports(p);
    let st = shared(Directed { shadow: vec![(0, 0); (p.conns * p.paths) as usize], ..Directed::default() });
    let s1 = st.clone();
    let p = *p;
    let t = Traffic::new(&ports, seed)
        .idle(20)
        .backpressure(30)
        .random_resets(super::sweep_resets(u64::from(p.conns * p.paths)))
        .input_u64("ts_now", |_, cycle| (cycle / 4) & 0xffff_ffff)
        .source("s_pkt_", move |rng, t| packet(&p, &mut s1.borrow_mut(), rng, t))
        .monitor(move |c| Monitor::declare(&p, c), Monitor::observe);
    (t, st)
}

fn packet(p: &SackGenParams, s: &mut Directed, rng: &mut Rng, t: &mut Txn) {
    let pkt = match s.pkts.pop_front() {
        Some(d) => {
            t.set_u64("ce", 0).set_u64("bad", 0);
            d
        }
        None if s.only_directed => {
            t.skip();
            return;
        }
        None => {
            let r = rng.below(100);
            // Half the PROBEs go to one path, so it runs past its budget.
            let (conn, path) = if (3..=10).contains(&r) && rng.percent(50) {
                (0, 0)
            } else {
                let conn = if rng.percent(60) { rng.below(2) } else { rng.below(p.conns as u64) } as u32;
                (conn, rng.below(p.paths as u64) as u32)
            };
            let k = (conn * p.paths + path) as usize;
            let (next, gen) = s.shadow[k];
            let (op, psn, g) = match r {
                0..=2 => (OP_OPEN, rng.next_u64() & PSN_MASK, rng.next_u64() as u8),
                3..=10 => (OP_PROBE, if rng.percent(85) { next } else { next + 257 + rng.below(1000) }, gen),
                11..=15 => (OP_FLUSH, next, gen),
                _ => {
                    let psn = match rng.below(100) {
                        0..=69 => next,
                        70..=89 => next + 1 + rng.below(40),
                        90..=94 => next + 257 + rng.below(2000),
                        _ => next.wrapping_sub(1 + rng.below(20)),
                    };
                    let g = match rng.below(100) {
                        0..=84 => gen,
                        85..=92 => gen.wrapping_add(1),
                        93..=96 => gen.wrapping_sub(1),
                        _ => gen.wrapping_sub(2 + rng.below(100) as u8),
                    };
                    (OP_DATA, psn & PSN_MASK, g)
                }
            };
            if op == OP_OPEN {
                s.shadow[k] = (psn, g);
            } else if op == OP_DATA {
                if psn == next {
                    s.shadow[k].0 = (next + 1) & PSN_MASK;
                }
                if (g.wrapping_sub(gen) as i8) > 0 {
                    s.shadow[k].1 = g;
                }
            }
            t.set_u64("ce", rng.percent(5) as u64)
                .set_u64("bad", rng.percent(3) as u64)
                .set_u64("first", rng.percent(80) as u64);
            Pkt { op, conn, path, psn: psn as u32, gen: g, ackreq: rng.percent(10) }
        }
    };
    t.set_u64("op", pkt.op as u64)
        .set_u64("conn", pkt.conn as u64)
        .set_u64("path_id", pkt.path as u64)
        .set_u64("psn", pkt.psn as u64)
        .set_u64("gen", pkt.gen as u64)
        .set_u64("ackreq", pkt.ackreq as u64)
        .set_u64("payload_len", rng.below(1025));
}

/// Coverage of the answers and counters.
pub struct Monitor {
    pkt: [usize; 3],
    sack: [usize; 3],
    nack: [usize; 2],
    new: [usize; 2],
    stats: [usize; 6],
    ops: [usize; 4],
    stat_bins: [usize; 6],
    sack_bin: usize,
    nack_bin: usize,
    new_bin: usize,
    full: usize,
    nonempty: usize,
}

impl Monitor {
    fn declare(p: &SackGenParams, c: &mut Coverage) -> Monitor {
        let ports = sg::ports(p);
        let i = |n: &str| idx(&ports, n);
        Monitor {
            pkt: ["s_pkt_valid", "s_pkt_ready", "s_pkt_op"].map(i),
            sack: ["m_sack_valid", "m_sack_ready", "m_sack_bitmap"].map(i),
            nack: ["m_nack_valid", "m_nack_ready"].map(i),
            new: ["m_new_valid", "m_new_ready"].map(i),
            stats: sg::STATS.map(|(n, _)| i(n)),
            ops: ["DATA", "PROBE", "OPEN", "FLUSH"].map(|o| c.bin(format!("packet: {o}"))),
            stat_bins: [
                "stale generation (NACK)",
                "psn beyond the window (NACK)",
                "duplicate psn",
                "SACK decided",
                "PROBE outside the psn window (refused)",
                "PROBE past its budget (refused)",
            ]
            .map(|s| c.bin(format!("counter: {s}"))),
            sack_bin: c.bin("SACK sent"),
            nack_bin: c.bin("NACK BAD_HDR sent"),
            new_bin: c.bin("new bitmap bit (m_new)"),
            full: c.bin("SACK with a full 256-bit bitmap"),
            nonempty: c.bin("SACK with a hole (bitmap not empty)"),
        }
    }

    fn observe(&mut self, v: &[Bits], rst: bool, c: &mut Coverage) {
        if rst {
            return;
        }
        if hs(v, self.pkt[0], self.pkt[1]) {
            c.hit(self.ops[v[self.pkt[2]].as_u64() as usize & 3]);
        }
        if hs(v, self.sack[0], self.sack[1]) {
            c.hit(self.sack_bin);
            let bm = &v[self.sack[2]].0;
            if bm.iter().all(|&w| w == u64::MAX) {
                c.hit(self.full);
            }
            if bm.iter().any(|&w| w != 0) {
                c.hit(self.nonempty);
            }
        }
        if hs(v, self.nack[0], self.nack[1]) {
            c.hit(self.nack_bin);
        }
        if hs(v, self.new[0], self.new[1]) {
            c.hit(self.new_bin);
        }
        for (s, b) in self.stats.iter().zip(self.stat_bins) {
            if v[*s].bit(0) {
                c.hit(b);
            }
        }
    }
}
