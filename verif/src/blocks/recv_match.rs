//! `recv_match` traffic and coverage.
//!
//! The generators keep a shadow of each (connection, stream)'s posts so
//! lookups and consumes ask mostly for rq_seqs near the posted window
//! (hits, ACCESS, consumes that succeed), and sometimes outside it (RNR,
//! empty consumes). Traffic is concentrated on two connections and two
//! streams so rings fill (refused posts) and entries are hit back to back.

use mrnic_model::block::Bits;
use mrnic_model::recv_match::{self as rm, RecvMatchParams};

use super::{hs, idx, shared};
use crate::coverage::Coverage;
use crate::stimulus::{Rng, Traffic};

const SEQ_MASK: u64 = (1 << 24) - 1;

/// Random posts, lookups and consumes (see the module docs).
pub fn traffic(p: &RecvMatchParams, seed: u64) -> Traffic {
    let ports = rm::ports(p);
    let p = *p;
    // Posts offered per (connection, stream): the next rq_seq, roughly.
    let posts = shared(vec![0u64; (p.conns * p.streams) as usize]);
    let (s1, s2, s3) = (posts.clone(), posts.clone(), posts);
    let pick = move |rng: &mut Rng| {
        let conn = if rng.percent(70) { rng.below(2) } else { rng.below(p.conns as u64) };
        let stream = if rng.percent(70) { rng.below(2.min(p.streams as u64)) } else { rng.below(p.streams as u64) };
        (conn, stream, (conn * p.streams as u64 + stream) as usize)
    };
    let near = move |rng: &mut Rng, next: u64| {
        if rng.percent(10) {
            rng.next_u64() & SEQ_MASK
        } else {
            next.wrapping_sub(1 + rng.below(p.depth as u64 + 2)) & SEQ_MASK
        }
    };
    Traffic::new(&ports, seed)
        .idle(30)
        .backpressure(30)
        .random_resets(super::sweep_resets(u64::from(p.conns * p.streams)))
        .source("s_post_", move |rng, t| {
            let (conn, stream, k) = pick(rng);
            s1.borrow_mut()[k] += 1;
            t.set_u64("conn", conn).set_u64("stream", stream).set_u64("len", rng.below(1 << 16));
        })
        .source("s_lookup_", move |rng, t| {
            let (conn, stream, k) = pick(rng);
            let seq = near(rng, s2.borrow()[k]);
            let msg_len = rng.below(1 << 17);
            let (off, len) = if rng.percent(10) {
                (rng.below(1 << 17), rng.below(1 << 16))
            } else {
                let len = rng.below(msg_len.min(4096) + 1);
                (rng.below(msg_len - len + 1), len)
            };
            t.set_u64("conn", conn)
                .set_u64("stream", stream)
                .set_u64("rq_seq", seq)
                .set_u64("msg_offset", off)
                .set_u64("payload_len", len)
                .set_u64("msg_len", msg_len);
        })
        .source("s_consume_", move |rng, t| {
            // Fewer consumes than posts, so rings fill and posts are refused.
            if rng.percent(50) {
                t.skip();
                return;
            }
            let (conn, stream, k) = pick(rng);
            let seq = near(rng, s3.borrow()[k]);
            t.set_u64("conn", conn)
                .set_u64("stream", stream)
                .set_u64("imm", rng.percent(30) as u64)
                .set_u64("rq_seq", seq);
        })
        .monitor(move |c| Monitor::declare(&p, c), Monitor::observe)
}

/// Coverage of the answers.
pub struct Monitor {
    post: [usize; 3],
    matched: [usize; 3],
    cons: [usize; 3],
    imm: [usize; 3],
    offered: [usize; 3],
    post_ok: [usize; 2],
    codes: [usize; 4],
    cons_ok: [usize; 2],
    imm_ok: usize,
    all_three: usize,
}

impl Monitor {
    fn declare(p: &RecvMatchParams, c: &mut Coverage) -> Monitor {
        let ports = rm::ports(p);
        let i = |n: &str| idx(&ports, n);
        Monitor {
            post: ["m_post_valid", "m_post_ready", "m_post_ok"].map(i),
            matched: ["m_match_valid", "m_match_ready", "m_match_code"].map(i),
            cons: ["m_cons_valid", "m_cons_ready", "m_cons_ok"].map(i),
            imm: ["s_consume_valid", "s_consume_ready", "s_consume_imm"].map(i),
            offered: ["s_post_valid", "s_lookup_valid", "s_consume_valid"].map(i),
            post_ok: [c.bin("post: refused (slot occupied)"), c.bin("post: accepted")],
            codes: ["hit", "RNR", "ACCESS", "BAD_HDR"].map(|n| c.bin(format!("lookup: {n}"))),
            cons_ok: [c.bin("consume: nothing posted"), c.bin("consume: receive taken")],
            imm_ok: c.bin("consume: WRITE_IMM (next in order)"),
            all_three: c.bin("all three channels offered in one cycle (priority)"),
        }
    }

    fn observe(&mut self, v: &[Bits], rst: bool, c: &mut Coverage) {
        if rst {
            return;
        }
        if hs(v, self.post[0], self.post[1]) {
            c.hit(self.post_ok[v[self.post[2]].bit(0) as usize]);
        }
        if hs(v, self.matched[0], self.matched[1]) {
            let code = v[self.matched[2]].as_u64();
            c.hit(self.codes[if code == 4 { 3 } else { code.min(2) as usize }]);
        }
        if hs(v, self.cons[0], self.cons[1]) {
            c.hit(self.cons_ok[v[self.cons[2]].bit(0) as usize]);
        }
        if hs(v, self.imm[0], self.imm[1]) && v[self.imm[2]].bit(0) {
            c.hit(self.imm_ok);
        }
        if self.offered.iter().all(|&o| v[o].bit(0)) {
            c.hit(self.all_three);
        }
    }
}
