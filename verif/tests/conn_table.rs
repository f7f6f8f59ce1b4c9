//! `conn_table` (small): the cycle model and the generated RTL in lockstep
//! over random opens, closes, stream writes, lookups and reads on a few hot
//! slots (so lookups and reads often follow a write of their slot within
//! the read latency: the forwarding path), with idle cycles, backpressure
//! on all three outputs and mid-run resets; a proptest over seeds and
//! rates; and the directed cases: back-to-back updates of one entry, and a
//! full table.

mod common;

use common::{assert_covered, cycles, lockstep, proptest_sessions, run, session};
use mrnic_model::conn_table::{ConnTable, ConnTableParams, OP_DATA};
use mrnic_proto::Config;
use mrnic_verif::blocks::conn_table::{self as blk, pool_id};
use mrnic_verif::skip_without_verilator;

const BLOCK: &str = "conn_table";

fn params() -> ConnTableParams {
    ConnTableParams::from_config(&Config::builtin("small").unwrap()).unwrap()
}

#[test]
fn small_random_updates_lookups_idle_and_backpressure() {
    let Some(cov) = session("ct_small_random", BLOCK, "small", 0xc7a0_0001, cycles(60_000), |t| t) else { return };
    assert_covered(&cov, &[]);
}

#[test]
fn small_back_to_back_updates_of_one_entry() {
    // Every channel on slot 0, one transaction per cycle, no backpressure:
    // each lookup and read lands within the read latency of the writes
    // before it.
    if skip_without_verilator() {
        return;
    }
    let p = params();
    let (t, mode) = blk::traffic(&p, 0xc7a0_0002);
    mode.borrow_mut().hot_slots = 1;
    let mut t = t.idle(0).backpressure(0).random_resets(0);
    let mut ls = lockstep(Box::new(move || Box::new(ConnTable::new(p))), "small", "ct_small_b2b");
    run("conn_table back to back", &mut ls, &mut t, cycles(20_000));
    let cov = t.coverage();
    println!("{cov}");
    for bin in [
        "lookup of a slot written within the read latency (forwarded)",
        "read of a slot written within the read latency (forwarded)",
        "connection and stream write of one slot in one cycle",
    ] {
        assert!(cov.count(bin) > 1000, "{bin}: {}", cov.count(bin));
    }
}

#[test]
fn small_full_table_every_slot_answers() {
    if skip_without_verilator() {
        return;
    }
    let p = params();
    let (t, mode) = blk::traffic(&p, 0xc7a0_0003);
    mode.borrow_mut().only_directed = true;
    let mut t = t.idle(10).backpressure(30).random_resets(0).record("m_lk_").record("m_rd_");
    // Open every slot under the pool's second id, with every path count
    // 1..=4; publish a state on every stream of every slot.
    let id = |s: u32| pool_id(&p, s, 1);
    for s in 0..p.conns {
        t.push("s_wr_", |x| {
            x.set_u64("entry_valid", 1)
                .set_u64("local_id", id(s) as u64)
                .set_u64("remote_id", 0x100 + s as u64)
                .set_u64("remote_addr", 0x0a00_0000 + s as u64)
                .set_u64("paths", 1 + (s % 4) as u64);
        });
        for k in 0..p.streams {
            t.push("s_st_", |x| {
                x.set_u64("conn", s as u64)
                    .set_u64("stream", k as u64)
                    .set_u64("completed_msn", (s * 16 + k) as u64)
                    .set_u64("active", 1);
            });
        }
    }
    let mut ls = lockstep(Box::new(move || Box::new(ConnTable::new(p))), "small", "ct_small_full");
    run("conn_table fill", &mut ls, &mut t, 400);
    assert!(t.coverage().count("every slot open (table full)") > 0);
    // Then look every slot up (path 0: always valid) and read it back.
    for s in 0..p.conns {
        t.push("s_lk_", |x| {
            x.set_u64("op", OP_DATA as u64)
                .set_u64("dst_conn", id(s) as u64)
                .set_u64("src_addr", 0x0a00_0000 + s as u64);
        });
        t.push("s_rd_", |x| {
            x.set_u64("conn", s as u64);
        });
    }
    run("conn_table full lookups", &mut ls, &mut t, 400);
    let lks = t.received("m_lk_");
    assert_eq!(lks.len(), p.conns as usize);
    // m_lk fields: op, hit, ok, conn, remote_id, remote_addr, paths, active, msns.
    for (s, r) in lks.iter().enumerate() {
        assert_eq!((r[1].as_u64(), r[2].as_u64(), r[3].as_u64()), (1, 1, s as u64), "slot {s}");
        assert_eq!(r[4].as_u64(), 0x100 + s as u64);
        assert_eq!(r[7].as_u64(), (1 << p.streams) - 1, "slot {s}: every stream active");
        assert_eq!(r[8].0[0] & 0xff_ffff, (s * 16) as u64, "slot {s}: stream 0's msn");
    }
    let rds = t.received("m_rd_");
    assert_eq!(rds.len(), p.conns as usize);
    assert!(rds.iter().all(|r| r[1].as_u64() == 1), "every slot reads back open");
}

#[test]
fn small_proptest_seeds_and_rates() {
    proptest_sessions(BLOCK, "small");
}

// A full table of 4,096 slots is the small test's directed case; random
// traffic on a few hot slots never fills this one.
default_random!("conn_table", 0xc7a0_1001, 160_000, ["every slot open (table full)", "lookup while the table is full"]);
