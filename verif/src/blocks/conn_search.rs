//! `conn_search` traffic and coverage: a stand-in for conn_table's read
//! port (each read answered one or two cycles after it is taken, random
//! `ready`) over a table where the NACK's peer sits at a random slot, at
//! none, or at two; NO_CONN NACKs while a sweep runs (dropped, counted),
//! backpressure on `m_nack`, resets mid-sweep.

use std::collections::VecDeque;

use mrnic_model::block::Bits;
use mrnic_model::conn_search::{self as cs, ConnSearchParams};

use super::{idx, shared};
use crate::coverage::Coverage;
use crate::stimulus::{Rng, Traffic};

/// The NACK's fields; a slot holds its peer when its id and address match.
const PEER_ID: u64 = 0xab_cdef;
const PEER_ADDR: u64 = 0x0a00_0001;

/// The stand-in table: reads in flight and where the peer sits.
struct Table {
    cycle: u64,
    /// (cycle it is answered in, slot).
    reads: VecDeque<(u64, u64)>,
    /// The peer's slots (a second one now and then; out of range: none).
    peer: (u64, u64),
    rng: Rng,
}

/// The remote id of a slot that is not the peer's: the peer's id now and
/// then (a stale entry), about once per sweep of a big table.
fn impostor(rng: &mut Rng, conns: u64) -> u64 {
    if conns > 64 {
        if rng.below(conns) == 0 {
            PEER_ID
        } else {
            PEER_ID + 1 + rng.below(2)
        }
    } else {
        PEER_ID - 1 + rng.below(4)
    }
}

pub fn traffic(p: &ConnSearchParams, seed: u64) -> Traffic {
    let ports = cs::ports(p);
    let conns = u64::from(p.table.conns);
    let st = shared(Table { cycle: 0, reads: VecDeque::new(), peer: (0, 0), rng: Rng::new(seed ^ 0x7ab1e) });
    let (s_nc, s_rdr, mon) = (st.clone(), st.clone(), st);
    let rd = [idx(&ports, "m_rd_valid"), idx(&ports, "m_rd_ready"), idx(&ports, "m_rd_conn")];
    let nack = [idx(&ports, "m_nack_valid"), idx(&ports, "m_nack_ready")];
    let stat = idx(&ports, "stat_ack_no_conn");
    Traffic::new(&ports, seed)
        .idle(0)
        .backpressure(30)
        .random_resets(1)
        .source("s_nc_", move |rng, t| {
            if rng.below(if conns > 64 { 2000 } else { 40 }) != 0 {
                t.skip();
                return;
            }
            // Out of range now and then: no slot is the peer's. A big
            // table needs it more often, and fewer impostors (below), for
            // a sweep to end without a match.
            let span = if conns > 64 { 2 * conns } else { conns + conns / 4 };
            s_nc.borrow_mut().peer = (rng.below(span), rng.below(conns * 8));
            t.set_u64("dst_conn", PEER_ID).set_u64("src_addr", PEER_ADDR).set_u64("path_id", 3).set_u64("code", 3);
        })
        .source("s_rdr_", move |rng, t| {
            let mut s = s_rdr.borrow_mut();
            let Some(&(_, slot)) = s.reads.front().filter(|r| r.0 <= s.cycle) else {
                t.skip();
                return;
            };
            s.reads.pop_front();
            let ours = slot == s.peer.0 || slot == s.peer.1;
            t.set_u64("conn", slot)
                .set_u64("entry_valid", u64::from(rng.below(8) != 0))
                .set_u64("remote_id", if ours { PEER_ID } else { impostor(rng, conns) })
                .set_u64("remote_addr", if ours || rng.below(2) == 0 { PEER_ADDR } else { PEER_ADDR + 1 });
        })
        .monitor(
            |c: &mut Coverage| {
                // Both inputs are taken the cycle they come (ready tied high).
                for ch in ["s_nc_", "s_rdr_"] {
                    c.retire(&format!("{ch}: offered while the block is not ready"));
                }
                [c.bin("NACK resolved to a connection"), c.bin("NACK of no connection (counted)")]
            },
            move |bins, v: &[Bits], in_reset, c| {
                let mut s = mon.borrow_mut();
                if in_reset {
                    s.reads.clear();
                } else {
                    if v[rd[0]].bit(0) && v[rd[1]].bit(0) {
                        let at = s.cycle + 1 + s.rng.below(2);
                        s.reads.push_back((at, v[rd[2]].as_u64()));
                    }
                    if v[nack[0]].bit(0) && v[nack[1]].bit(0) {
                        c.hit(bins[0]);
                    }
                    if v[stat].bit(0) {
                        c.hit(bins[1]);
                    }
                }
                s.cycle += 1;
            },
        )
}
