//! `cpl_engine` (small): the cycle model and the generated RTL in lockstep
//! over messages cut into packets (in and out of order, zero-length, SEND,
//! SEND_IMM, WRITE, WRITE_IMM), DMA answers with errors and wrong tags,
//! consume answers with and without a receive, posts and opens, with idle
//! cycles, backpressure on all three outputs and mid-run resets; a
//! proptest over seeds and rates; and the directed cases: back-to-back
//! packets of one stream, a full pending FIFO, and a full message table
//! drained in one go.

mod common;

use common::{assert_covered, cycles, lockstep, proptest_sessions, run, session};
use mrnic_model::cpl_engine::{CplEngine, CplEngineParams, NewPkt};
use mrnic_proto::Config;
use mrnic_verif::blocks::cpl_engine as blk;
use mrnic_verif::skip_without_verilator;

const BLOCK: &str = "cpl_engine";

fn params() -> CplEngineParams {
    CplEngineParams::from_config(&Config::builtin("small").unwrap()).unwrap()
}

#[test]
fn small_random_messages_idle_and_backpressure() {
    let Some(cov) = session("ce_small_random", BLOCK, "small", 0xc91e_0001, cycles(60_000), |t| t) else { return };
    // A consume answer meets a busy block only when m_cqe or m_st is
    // backed up four deep: the heavy-backpressure test.
    assert_covered(&cov, &[STALLED_ANSWER]);
}

const STALLED_ANSWER: &str = "s_cons_: offered while the block is not ready";

// 65,536 stream words: the reset sweep takes the first 65,536 cycles,
// and mid-run resets are off (`blocks::sweep_resets`). Spread over that
// many queues, few messages of several packets complete: 600 k cycles see
// one or two.
default_random!("cpl_engine", 0xc91e_1001, cycles(600_000), [STALLED_ANSWER]);

#[test]
fn small_heavy_backpressure_on_every_output() {
    let Some(cov) = session("ce_small_bp", BLOCK, "small", 0xc91e_0004, cycles(30_000), |t| t.backpressure(97)) else {
        return;
    };
    assert!(cov.count(STALLED_ANSWER) > 0, "{cov}");
    assert!(cov.count("counter: receive completion") > 10, "{cov}");
}

#[test]
fn small_back_to_back_packets_of_one_stream() {
    if skip_without_verilator() {
        return;
    }
    let p = params();
    let (t, d) = blk::traffic(&p, 0xc91e_0002);
    {
        let mut d = d.borrow_mut();
        d.hot_queues = 1;
        d.faults = false;
        d.rare_opens = true;
    }
    let mut t = t.idle(0).backpressure(0).random_resets(0);
    let mut ls = lockstep(Box::new(move || Box::new(CplEngine::new(p))), "small", "ce_small_b2b");
    run("cpl_engine back to back", &mut ls, &mut t, cycles(20_000));
    let cov = t.coverage();
    println!("{cov}");
    assert!(
        cov.count("DMA answers of one stream in consecutive operations (its word read right after the write)") > 1000
    );
    // Posts now take operations between the DMA answers, so fewer messages
    // complete in the run than when they starved (82 with this seed).
    assert!(cov.count("counter: receive completion") > 50, "{cov}");
    // Posts and opens get their turn between DMA answers (they starved
    // before the block's turn rule).
    assert!(cov.count("s_post_: handshake") > 100, "{cov}");
    assert!(cov.count("s_open_: handshake") > 0, "{cov}");
}

/// A message of one packet on (conn 1, stream 2).
fn write_msg(msn: u32, len: u16) -> NewPkt {
    NewPkt { conn: 1, stream: 2, msn, payload_len: len, msg_len: len as u32, conn_id: 0x41, ..NewPkt::default() }
}

#[test]
fn small_full_message_table_drains_in_one_go() {
    // Messages 1..depth-1 arrive complete first (every slot live behind a
    // hole at msn 0, and the pending FIFO full while the DMA answers are
    // held); then msn 0 arrives and the stream drains all of them.
    if skip_without_verilator() {
        return;
    }
    let p = params();
    let (t, d) = blk::traffic(&p, 0xc91e_0003);
    {
        let mut d = d.borrow_mut();
        d.only_directed = true;
        d.hold_dma = true;
        for msn in 1..p.msg_depth {
            d.pkts.push_back(write_msg(msn, 100 + msn as u16));
        }
        // Then packets until the pending FIFO is full.
        for k in 0..p.pending {
            d.pkts.push_back(NewPkt { conn: 3, ..write_msg(k, 1) });
        }
    }
    let mut t = t.idle(0).backpressure(30).random_resets(0).record("m_st_");
    let mut ls = lockstep(Box::new(move || Box::new(CplEngine::new(p))), "small", "ce_small_full");
    run("cpl_engine fill", &mut ls, &mut t, 400);
    assert!(
        t.coverage().count("s_new_: offered while the block is not ready") > 0,
        "the pending FIFO filled and refused a packet"
    );
    {
        let mut d = d.borrow_mut();
        d.hold_dma = false;
        d.pkts.push_back(write_msg(0, 7));
    }
    run("cpl_engine drain", &mut ls, &mut t, 2_000);
    let published: Vec<u64> = t
        .received("m_st_")
        .iter()
        .filter(|s| s[0].as_u64() == 1 && s[1].as_u64() == 2)
        .map(|s| s[3].as_u64())
        .collect();
    // The first publication turns the stream active (msn 0), then one per
    // completed message: 1, 2, ..., depth.
    let expect: Vec<u64> = std::iter::once(0).chain(1..=p.msg_depth as u64).collect();
    assert_eq!(published, expect, "completed_msn published on (1, 2)");
}

#[test]
fn small_proptest_seeds_and_rates() {
    proptest_sessions(BLOCK, "small");
}
