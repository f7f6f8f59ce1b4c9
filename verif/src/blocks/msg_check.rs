//! `msg_check` traffic and coverage: accepts and checks of a few messages
//! per stream (msns just behind the stream's completed_msn, in and past
//! the window, around the 24-bit wrap), their fields drawn from small sets
//! so that live slots meet packets that agree and packets that differ;
//! streams the connection lacks, lengths past the MTU, msg_len and a
//! SEND's end; opens that clear a connection; random backpressure on
//! `m_chk`; resets mid-run, each followed by the table's sweep.

use mrnic_model::msg_check::{self as mc, status, MsgCheckParams};

use super::ByCode;
use crate::stimulus::{Rng, Traffic, Txn};

/// The answers' names, indexed by their `status` code.
const STATUS_NAMES: [&str; 4] = ["OK", "BAD_LEN", "WINDOW", "MISMATCH"];
const _: () = assert!(status::OK == 0 && status::BAD_LEN == 1 && status::WINDOW == 2 && status::MISMATCH == 3);

/// A stream's completed_msn: small, or just below the 24-bit wrap.
fn completed(rng: &mut Rng) -> u64 {
    if rng.below(4) == 0 {
        0xff_fffe
    } else {
        rng.below(3)
    }
}

/// The message fields both channels carry, around completed_msn `c`.
fn msg(p: &MsgCheckParams, rng: &mut Rng, t: &mut Txn, c: u64) {
    let (streams, depth, mtu) = (u64::from(p.streams), u64::from(p.depth), u64::from(p.mtu));
    let stream = if rng.below(12) == 0 { streams + rng.below(256 - streams) } else { rng.below(2) };
    t.set_u64("conn", rng.below(3))
        .set_u64("stream", stream)
        .set_u64("msn", (c + rng.below(depth + 2)).wrapping_sub(1) & 0xff_ffff)
        .set_u64("send", rng.below(2))
        .set_u64("rq_seq", 5 + rng.below(2))
        .set_u64("msg_len", [0, 64, 100, 4096, 0xffff_ffff][rng.below(5) as usize])
        .set_u64("imm_valid", u64::from(rng.below(3) == 0))
        .set_u64("imm", 1 + rng.below(2))
        .set_u64("len", [0, 1, 32, 64, 100, mtu, mtu + 1][rng.below(7) as usize]);
}

pub fn traffic(p: &MsgCheckParams, seed: u64) -> Traffic {
    let ports = mc::ports(p);
    let (pa, pc) = (*p, *p);
    Traffic::new(&ports, seed)
        .backpressure(40)
        .random_resets(super::sweep_resets(u64::from(p.conns * p.streams)))
        .source("s_open_", |rng, t| {
            if rng.below(100) == 0 {
                t.set_u64("conn", rng.below(3));
            } else {
                t.skip();
            }
        })
        .source("s_acc_", move |rng, t| {
            let c = completed(rng);
            msg(&pa, rng, t, c);
        })
        .source("s_chk_", move |rng, t| {
            let c = completed(rng);
            msg(&pc, rng, t, c);
            t.set_u64("msg_offset", [0, 32, 64, 4000, 0xffff_ffc0][rng.below(5) as usize]).set_u64("completed_msn", c);
        })
        .monitor(move |c| ByCode::declare(&ports, "m_chk", "status", &STATUS_NAMES, c), ByCode::observe)
}
