//! `sack_gen` (small): the cycle model and the generated RTL in lockstep
//! over random packets (in order, ahead, beyond the window, duplicates,
//! newer, one-behind and stale generations, PROBEs, OPENs, CE, ACKREQ and
//! refused packets) with idle cycles, backpressure on all three outputs
//! and mid-run resets; a proptest over seeds and rates; and the directed
//! cases: a full 256-bit bitmap and back-to-back packets on one entry.

mod common;

use common::{assert_covered, cycles, lockstep, proptest_sessions, run, session};
use mrnic_model::sack_gen::{SackGen, SackGenParams, OP_DATA, OP_OPEN};
use mrnic_proto::Config;
use mrnic_verif::blocks::sack_gen::{self as blk, Pkt};
use mrnic_verif::skip_without_verilator;

const BLOCK: &str = "sack_gen";

#[test]
fn small_random_packets_idle_and_backpressure() {
    let Some(cov) = session("sg_small_random", BLOCK, "small", 0x5ac0_0001, cycles(60_000), |t| t) else { return };
    // A full bitmap needs 256 packets ahead of a hole: the directed test.
    assert_covered(&cov, &["SACK with a full 256-bit bitmap"]);
}

#[test]
fn small_back_to_back_packets_without_backpressure() {
    session("sg_small_b2b", BLOCK, "small", 0x5ac0_0002, cycles(20_000), |t| t.idle(0).backpressure(0));
}

#[test]
fn small_proptest_seeds_and_rates() {
    proptest_sessions(BLOCK, "small");
}

#[test]
fn small_full_bitmap_then_the_hole_filled() {
    if skip_without_verilator() {
        return;
    }
    let p = SackGenParams::from_config(&Config::builtin("small").unwrap()).unwrap();
    let (mut t, d) = blk::traffic(&p, 0xf011);
    let base = 0xff_ff00u32; // the window wraps the 24-bit psn space too
    let psn = |i: u32| (base + i) & 0xff_ffff;
    {
        let mut d = d.borrow_mut();
        d.only_directed = true;
        let pkt = |op, psn, ackreq| Pkt { op, conn: 1, path: 2, psn, gen: 5, ackreq };
        d.pkts.push_back(pkt(OP_OPEN, base, false));
        for i in 1..=256 {
            d.pkts.push_back(pkt(OP_DATA, psn(i), i == 256));
        }
        d.pkts.push_back(pkt(OP_DATA, base, true));
    }
    t = t.random_resets(0).idle(10).backpressure(30).record("m_sack_");
    let mut ls = lockstep(Box::new(move || Box::new(SackGen::new(p))), "small", "sg_small_full");
    run("sack_gen full bitmap", &mut ls, &mut t, 4_000);
    println!("{}", t.coverage());
    assert!(t.coverage().count("SACK with a full 256-bit bitmap") >= 1);
    // Fields: conn, dst_conn, path_id, path_gen, cum_psn, ..., bitmap (10).
    let last = t.received("m_sack_").last().expect("SACKs").clone();
    assert_eq!(last[4].as_u64(), psn(257) as u64, "cum_psn after the hole is filled");
    assert!(last[10].0.iter().all(|&w| w == 0), "bitmap empty after the advance");
}

// 65,536 (connection, path) entries: the reset sweep takes the first
// 65,536 cycles, and mid-run resets are off (`blocks::sweep_resets`).
default_random!("sack_gen", 0x5ac0_1001, cycles(200_000), ["SACK with a full 256-bit bitmap"]);
