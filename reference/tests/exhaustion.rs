//! Exhaustion: each table or resource runs out on one connection (or one
//! NIC-wide table fills) and gives a clear error or NACK, while a second
//! connection between the same two NICs, set up next to it, completes its
//! transfer bit exact in the same test.
//!
//! | resource | outcome |
//! |---|---|
//! | memory-region table full | `reg_mr` -> `VerbsError::Memory(MemError::TableFull)` |
//! | receive queue full | `post_recv` -> `VerbsError::RecvQueueFull` |
//! | no receive posted | RNR NACKs (`rx_rnr`), then `RnrRetryExceeded`, connection failed |
//! | window / retransmit ring full | sender stops with at most `window` psns outstanding per path (the connection cap binds first) |
//! | all paths dead | `TransportRetryExceeded`, other requests `WrFlushError` |
//! | connection table full | `create_conn` beyond `transport.connections` -> `VerbsError::ConnTableFull` |

mod common;

use common::*;
use mrnic_reference::memory::MemError;
use mrnic_reference::rng::Rng;
use mrnic_reference::sim::Outcome;
use mrnic_reference::{Access, ConnParams, Nic, NicConfig, Sge, Status, VerbsError, WorkRequest, WrOp};

const A2: u32 = 6;
const B2: u32 = 0x0012_3456;
const SRC2: u64 = 0x5000_0000;
const DST2: u64 = 0x6000_0000;
const LEN2: usize = 20_000;

/// A second connection next to the first, with one WRITE of LEN2 seeded
/// bytes posted on it. Returns the bytes.
fn second_conn(r: &mut Run) -> Vec<u8> {
    let pa = ConnParams { local_id: A2, remote_id: B2, remote: B_ADDR, paths: 2, tx_psn: 100, rx_psn: 100 };
    let pb = ConnParams { local_id: B2, remote_id: A2, remote: A_ADDR, ..pa };
    r.sim.nics[A].create_conn(pa).unwrap();
    r.sim.nics[B].create_conn(pb).unwrap();
    let mut rng = Rng::new(77);
    let data: Vec<u8> = (0..LEN2).map(|_| rng.next_u64() as u8).collect();
    r.sim.nics[A].reg_mr(SRC2, LEN2 as u64, Access::LOCAL).unwrap();
    r.sim.nics[A].write_mem(SRC2, &data).unwrap();
    let rkey = r.sim.nics[B].reg_mr(DST2, LEN2 as u64, Access::REMOTE_WRITE).unwrap();
    let wr = WorkRequest {
        wr_id: 0xbeef,
        op: WrOp::Write { remote_addr: DST2, rkey },
        imm: None,
        local: Sge { addr: SRC2, len: LEN2 as u64 },
    };
    r.sim.nics[A].post_send(A2, 0, wr).unwrap();
    data
}

/// The second connection's WRITE completed once, with Success, bit exact.
fn assert_second_ok(r: &Run, data: &[u8]) {
    let c: Vec<_> = r.sim.completions[A].iter().filter(|c| c.conn == A2).collect();
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!((c[0].wr_id, c[0].status), (0xbeef, Status::Success));
    assert_eq!(r.sim.nics[B].read_mem(DST2, LEN2 as u64).unwrap(), data);
    assert!(r.sim.nics[A].conn_info(A2).unwrap().failed.is_none());
}

/// The first connection's packets (both directions) vanish on the wire.
fn blackhole_first(r: &mut Run) {
    r.sim.channel.filter = Some(Box::new(|_, p| {
        mrnic_proto::decode_datagram(&p.bytes).is_ok_and(|d| matches!(d.header.dst_conn(), A_CONN | B_CONN))
    }));
}

fn failed(r: &Run) -> Option<Status> {
    r.sim.nics[A].conn_info(A_CONN).unwrap().failed
}

#[test]
fn memory_region_table_full_is_refused_and_transfers_go_on() {
    let msgs = [Msg { stream: 0, kind: Kind::Write, len: 5000 }, Msg { stream: 1, kind: Kind::Send, len: 3000 }];
    let mut r = prepare(&Setup::new(2, 1), &msgs);
    let data = second_conn(&mut r);
    let entries = r.sim.nics[B].config().proto.hardware.mr_entries as u64;
    let used = r.sim.nics[B].memory().regions().count() as u64;
    for i in used..entries {
        r.sim.nics[B].reg_mr(0x7000_0000 + i * 0x1000, 16, Access::ALL).unwrap();
    }
    let e = r.sim.nics[B].reg_mr(0x7800_0000, 16, Access::ALL).unwrap_err();
    assert_eq!(e, VerbsError::Memory(MemError::TableFull));
    assert!(e.to_string().contains("full"), "{e}");
    let (na, nb) = r.expected_completions();
    let o = r.sim.run_until(1_000_000_000, 200_000, |s| s.completions[A].len() > na && s.completions[B].len() >= nb);
    assert_eq!(o, Outcome::Done);
    r.settle(1_000_000);
    assert_second_ok(&r, &data);
    // The first connection's own completions are the common checks minus
    // the second connection's one.
    r.sim.completions[A].retain(|c| c.conn == A_CONN);
    r.check().unwrap();
}

#[test]
fn no_receive_posted_gets_rnr_then_fails_only_its_connection() {
    let mut r = prepare(&Setup::new(2, 2), &[]);
    // Receive queue full is a clear verb error.
    let depth = r.sim.nics[B].config().proto.hardware.recv_queue_depth;
    for i in 0..depth {
        let rr = mrnic_reference::RecvRequest { wr_id: i as u64, addr: RECV_BASE, len: 0 };
        r.sim.nics[B].post_recv(B_CONN, 3, rr).unwrap();
    }
    let rr = mrnic_reference::RecvRequest { wr_id: 99, addr: RECV_BASE, len: 0 };
    assert_eq!(r.sim.nics[B].post_recv(B_CONN, 3, rr), Err(VerbsError::RecvQueueFull(3, depth)));
    // A SEND on stream 0, where nothing is posted.
    r.sim.nics[A].reg_mr(SRC_BASE + (1 << 21), 4096, Access::LOCAL).unwrap();
    let wr = WorkRequest { wr_id: 1, op: WrOp::Send, imm: None, local: Sge { addr: SRC_BASE + (1 << 21), len: 100 } };
    r.sim.nics[A].post_send(A_CONN, 0, wr).unwrap();
    let data = second_conn(&mut r);
    let o = r.sim.run_until(1_000_000_000, 200_000, |s| {
        s.completions[A].iter().any(|c| c.conn == A2) && s.completions[A].iter().any(|c| c.conn == A_CONN)
    });
    assert_eq!(o, Outcome::Done);
    r.settle(1_000_000);
    assert_second_ok(&r, &data);
    let c: Vec<_> = r.sim.completions[A].iter().filter(|c| c.conn == A_CONN).collect();
    assert_eq!(c.len(), 1);
    assert_eq!((c[0].wr_id, c[0].status), (1, Status::RnrRetryExceeded));
    assert_eq!(failed(&r), Some(Status::RnrRetryExceeded));
    let b = r.sim.nics[B].counters();
    let retry = r.sim.nics[A].config().rnr_retry as u64;
    assert_eq!(b.rx_rnr, retry + 1, "{b:?}");
    assert_eq!(r.sim.nics[B].counters().recv_completions, 0);
}

#[test]
fn window_full_stops_the_sender_and_all_paths_dead_fail_only_that_connection() {
    let mut s = Setup::new(2, 3);
    // Windows wide enough that the 256-psn window, not cwnd, binds.
    s.cfg.cc.init_cwnd_bytes = 1 << 20;
    s.cfg.cc.max_cwnd_bytes = 1 << 20;
    s.cfg.cc.conn_max_cwnd_bytes = 1 << 22;
    let msgs = [Msg { stream: 0, kind: Kind::Write, len: 1 << 20 }, Msg { stream: 1, kind: Kind::Write, len: 4000 }];
    let mut r = prepare(&s, &msgs);
    let data = second_conn(&mut r);
    blackhole_first(&mut r);
    let window = r.sim.nics[A].params().window;
    let mut peak = 0;
    let mut t = 0;
    while failed(&r).is_none() && t < 2_000_000_000 {
        t += 20_000;
        r.sim.run_until(t, 1_000_000, |_| false);
        for p in r.sim.nics[A].conn_info(A_CONN).unwrap().paths {
            let out = p.next_psn.wrapping_sub(p.cum_acked) & 0xff_ffff;
            assert!(out <= window, "path has {out} psns outstanding, window {window}");
            peak = peak.max(out);
        }
    }
    // The connection cap (rate hint x srtt) binds before the 256-psn window
    // here (peak 13 psns per path): the sender stops, bounded, either way.
    assert!(peak > 0 && peak <= window, "peak {peak}");
    assert_eq!(failed(&r), Some(Status::TransportRetryExceeded));
    let mut st: Vec<_> =
        r.sim.completions[A].iter().filter(|c| c.conn == A_CONN).map(|c| (c.wr_id, c.status)).collect();
    st.sort_by_key(|s| s.0);
    assert_eq!(st.len(), 2, "{st:?}");
    assert!(st.iter().all(|(_, s)| matches!(s, Status::TransportRetryExceeded | Status::WrFlushError)), "{st:?}");
    assert!(r.sim.nics[A].conn_info(A_CONN).unwrap().paths.iter().all(|p| p.state.name() == "DEAD"));
    let o = r.sim.run_until(t + 1_000_000_000, 1_000_000, |s| s.completions[A].iter().any(|c| c.conn == A2));
    assert_eq!(o, Outcome::Done);
    assert_second_ok(&r, &data);
    // Nothing of the dead connection was placed at B.
    assert!(r.sim.nics[B].read_mem(WRITE_BASE, 1 << 20).unwrap().iter().all(|&x| x == 0));
}

/// The connection table has 16 entries in `small`: a 17th connection is
/// refused and the error names the table size.
#[test]
fn connection_table_full_is_refused() {
    let cfg = mrnic_proto::Config::builtin("small").unwrap();
    let n = cfg.transport.connections;
    let mut nic = Nic::new(NicConfig::new(cfg, A_ADDR, 1));
    let cp = |i: u32| ConnParams { local_id: i, remote_id: i, remote: B_ADDR, paths: 1, tx_psn: 0, rx_psn: 0 };
    for i in 0..n {
        nic.create_conn(cp(i)).unwrap();
    }
    assert_eq!(
        nic.create_conn(cp(n)),
        Err(VerbsError::ConnTableFull(n, n)),
        "connection {} of a {n}-entry table",
        n + 1
    );
}
