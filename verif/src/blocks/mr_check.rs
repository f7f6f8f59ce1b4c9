//! `mr_check` traffic and coverage: tapped table writes of a few keys
//! (during the reset sweep too), checks with the right, a stale and an
//! unknown key, placements inside, across either end of and wrapping past
//! 2^64, message lengths beyond the region, receives and WRITEs; random
//! backpressure on `m_chk`, resets mid-run.

use mrnic_model::mr_check::{self as mc, status, MrCheckParams};

use super::ByCode;
use crate::stimulus::{Rng, Traffic};

/// The answers' names, indexed by their `status` code.
const STATUS_NAMES: [&str; 5] = ["OK", "BAD_KEY", "NO_ACCESS", "BOUNDS", "TOO_LONG"];
const _: () = assert!(status::TOO_LONG == 4 && status::BOUNDS == 3 && status::NO_ACCESS == 2 && status::BAD_KEY == 1);

/// Keys of table slots 0..4, generation 0..2 in the high bits.
fn key(rng: &mut Rng) -> u64 {
    rng.below(4) | (rng.below(3) << 20)
}

/// Region bases near each other, and near 2^64, so placements cross ends.
fn base(rng: &mut Rng) -> u64 {
    if rng.below(8) == 0 {
        u64::MAX - rng.below(64)
    } else {
        0x1000 * rng.below(4)
    }
}

pub fn traffic(p: &MrCheckParams, seed: u64) -> Traffic {
    let ports = mc::ports(p);
    let entries = u64::from(p.mr_entries).max(4);
    Traffic::new(&ports, seed)
        .backpressure(40)
        .random_resets(1)
        .input_u64("tap_mr_valid", |rng, _| u64::from(rng.below(6) == 0))
        .input_u64("tap_mr_ready", |rng, _| u64::from(rng.below(4) != 0))
        .input_u64("tap_mr_key", |rng, _| key(rng))
        .input_u64("tap_mr_entry_valid", |rng, _| u64::from(rng.below(6) != 0))
        .input_u64("tap_mr_remote_write", |rng, _| u64::from(rng.below(6) != 0))
        .input_u64("tap_mr_recv", |rng, _| u64::from(rng.below(3) == 0))
        .input_u64("tap_mr_base", |rng, _| base(rng))
        .input_u64("tap_mr_len", |rng, _| [0, 0x100, 0x1000, 0x3000][rng.below(4) as usize])
        .source("s_chk_", move |rng, t| {
            let rkey = if rng.below(10) == 0 { rng.next_u64() & 0xffff_ffff } else { key(rng) % entries };
            let addr = base(rng).wrapping_add(rng.below(0x1100));
            t.set_u64("rkey", rkey)
                .set_u64("addr", addr)
                .set_u64("len", [0, 1, 64, 0x100, 0x1000][rng.below(5) as usize])
                .set_u64("msg_len", [0, 0x100, 0x1000, 0x3001][rng.below(4) as usize])
                .set_u64("recv", u64::from(rng.below(3) == 0));
        })
        .monitor(move |c| ByCode::declare(&ports, "m_chk", "status", &STATUS_NAMES, c), ByCode::observe)
}
