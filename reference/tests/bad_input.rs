//! Bad input, one case per test: each gets its NACK (or is dropped) with a
//! named counter; nothing is written outside what is allowed, nothing
//! completes, nothing panics.

mod common;

use common::*;
use mrnic_proto::packet::{ECN_CE, ECN_ECT0};
use mrnic_proto::{encode_datagram, Bitmap256, DataHeader, Flags, Header, NackCode, NackHeader, Placement, SackHeader};
use mrnic_reference::{Counters, Nic, WirePacket};

struct Bench {
    sim: mrnic_reference::sim::Sim,
    rkey: u32,
}

fn bench() -> Bench {
    let r = prepare(&Setup::new(2, 99), &[]);
    Bench { sim: r.sim, rkey: r.write_rkey }
}

fn write_hdr(rkey: u32, addr: u64, len: usize) -> DataHeader {
    DataHeader {
        flags: Flags { som: true, eom: true, ..Flags::default() },
        payload_len: len as u16,
        dst_conn: B_CONN,
        path_id: 0,
        path_psn: 0,
        path_gen: 0,
        stream_id: 0,
        msn: 0,
        msg_len: len as u32,
        place: Placement::Write { rkey, addr },
        tx_ts: 0,
        imm: None,
    }
}

fn send_hdr(rq_seq: u32, offset: u32, len: usize, msg_len: u32) -> DataHeader {
    DataHeader { place: Placement::Send { rq_seq, msg_offset: offset }, msg_len, ..write_hdr(0, 0, len) }
}

fn wire(h: &Header, payload: &[u8], from: u32, to: u32) -> WirePacket {
    let mut bytes = Vec::new();
    encode_datagram(h, payload, &mut bytes).unwrap();
    WirePacket { src: from, dst: to, sport: 50001, dport: 4797, plane: 0, ecn: ECN_ECT0, bytes }
}

/// Feeds one packet to `nic` and returns what it answers.
fn feed(nic: &mut Nic, h: &Header, payload: &[u8], from: u32) -> Vec<Header> {
    let to = nic.addr();
    nic.handle_packet(1000, &wire(h, payload, from, to));
    let mut out = Vec::new();
    while let Some(p) = nic.poll_transmit(1000) {
        out.push(mrnic_proto::decode_datagram(&p.bytes).unwrap().header);
    }
    out
}

fn to_b(b: &mut Bench, h: DataHeader, payload: &[u8]) -> Vec<Header> {
    feed(&mut b.sim.nics[B], &Header::Data(h), payload, A_ADDR)
}

fn nack_code(out: &[Header]) -> Option<NackCode> {
    match out {
        [Header::Nack(n)] => Some(n.code),
        _ => None,
    }
}

fn counters(b: &Bench, nic: usize) -> Counters {
    *b.sim.nics[nic].counters()
}

fn nothing_written(b: &Bench) {
    let n = &b.sim.nics[B];
    for r in n.memory().regions() {
        assert!(r.bytes.iter().all(|&x| x == 0), "region {:#x} was written", r.base);
    }
    assert!(b.sim.nics[B].counters().recv_completions == 0);
}

#[test]
fn unknown_connection_gets_no_conn_naming_the_id() {
    let mut b = bench();
    let mut h = write_hdr(b.rkey, WRITE_BASE, 4);
    h.dst_conn = 77;
    let out = to_b(&mut b, h, &[1; 4]);
    match out.as_slice() {
        [Header::Nack(n)] => assert_eq!((n.code, n.dst_conn), (NackCode::NoConn, 77)),
        o => panic!("{o:?}"),
    }
    assert_eq!(counters(&b, B).rx_no_conn, 1);
    nothing_written(&b);
}

#[test]
fn bad_rkey_no_access_and_out_of_bounds_get_access() {
    let mut b = bench();
    type Which = fn(&Counters) -> u64;
    let cases: [(u32, u64, usize, Which); 5] = [
        (b.rkey ^ 0x100, WRITE_BASE, 4, |c| c.rx_bad_rkey),
        (b.rkey, WRITE_BASE + (1 << 20) - 2, 4, |c| c.rx_out_of_bounds),
        (b.rkey, WRITE_BASE - 1, 4, |c| c.rx_out_of_bounds),
        (b.rkey, u64::MAX - 1, 4, |c| c.rx_out_of_bounds),
        (b.rkey, 0, 4, |c| c.rx_out_of_bounds),
    ];
    for (rkey, addr, len, which) in cases {
        let before = which(&counters(&b, B));
        let out = to_b(&mut b, write_hdr(rkey, addr, len), &[9; 4]);
        assert_eq!(nack_code(&out), Some(NackCode::Access), "{addr:#x}");
        assert_eq!(which(&counters(&b, B)), before + 1);
    }
    // A region without remote-write access (the receive region).
    let recv_key = b.sim.nics[B].memory().find(RECV_BASE, 1, mrnic_reference::Access::LOCAL).unwrap();
    let out = to_b(&mut b, write_hdr(recv_key, RECV_BASE, 4), &[9; 4]);
    assert_eq!(nack_code(&out), Some(NackCode::Access));
    assert_eq!(counters(&b, B).rx_no_access, 1);
    nothing_written(&b);
}

#[test]
fn send_without_a_receive_gets_rnr_and_too_long_gets_access() {
    let mut b = bench();
    let out = to_b(&mut b, send_hdr(0, 0, 10, 10), &[3; 10]);
    assert_eq!(nack_code(&out), Some(NackCode::Rnr));
    assert_eq!(counters(&b, B).rx_rnr, 1);
    let r = mrnic_reference::RecvRequest { wr_id: 1, addr: RECV_BASE, len: 8 };
    b.sim.nics[B].post_recv(B_CONN, 0, r).unwrap();
    let out = to_b(&mut b, send_hdr(0, 0, 10, 10), &[3; 10]);
    assert_eq!(nack_code(&out), Some(NackCode::Access));
    assert_eq!(counters(&b, B).rx_recv_too_short, 1);
    // msg_offset + payload beyond msg_len is a bad header.
    let out = to_b(&mut b, send_hdr(0, 6, 4, 8), &[3; 4]);
    assert_eq!(nack_code(&out), Some(NackCode::BadHdr));
    assert_eq!(counters(&b, B).rx_bad_len, 1);
    nothing_written(&b);
}

/// A receive keeps its region's key from the post: a region deregistered
/// under it, or registered anew over the same addresses (a new key), takes
/// no SEND; an empty SEND checks no region and completes.
#[test]
fn a_send_into_a_region_deregistered_since_the_post_gets_access() {
    use mrnic_reference::Access;
    let mut b = bench();
    let key = b.sim.nics[B].memory().find(RECV_BASE, 1, Access::RECV).unwrap();
    let region = b.sim.nics[B].memory().region(key).unwrap().len();
    let r = mrnic_reference::RecvRequest { wr_id: 1, addr: RECV_BASE, len: 64 };
    b.sim.nics[B].post_recv(B_CONN, 0, r).unwrap();
    b.sim.nics[B].dereg_mr(key).unwrap();
    let out = to_b(&mut b, send_hdr(0, 0, 16, 16), &[3; 16]);
    assert_eq!(nack_code(&out), Some(NackCode::Access));
    assert_eq!(counters(&b, B).rx_out_of_bounds, 1);
    // The same addresses registered again: another region, another key.
    let again = b.sim.nics[B].reg_mr(RECV_BASE, region, Access::RECV).unwrap();
    assert_ne!(again, key);
    let out = to_b(&mut b, send_hdr(0, 0, 16, 16), &[3; 16]);
    assert_eq!(nack_code(&out), Some(NackCode::Access));
    assert_eq!(counters(&b, B).rx_out_of_bounds, 2);
    nothing_written(&b);
    // An empty SEND into that receive checks no region: placed, completed.
    let out = to_b(&mut b, send_hdr(0, 0, 0, 0), &[]);
    assert!(nack_code(&out).is_none(), "{out:?}");
    assert_eq!(counters(&b, B).recv_completions, 1);
    // A receive posted now holds the new key and takes a SEND.
    let r = mrnic_reference::RecvRequest { wr_id: 2, addr: RECV_BASE, len: 64 };
    b.sim.nics[B].post_recv(B_CONN, 0, r).unwrap();
    let mut h = send_hdr(1, 0, 16, 16);
    (h.msn, h.path_psn) = (1, 2);
    let out = to_b(&mut b, h, &[3; 16]);
    assert!(nack_code(&out).is_none(), "{out:?}");
    assert_eq!(b.sim.nics[B].read_mem(RECV_BASE, 16).unwrap(), &[3; 16]);
}

#[test]
fn stale_generation_and_psn_outside_the_window_get_bad_hdr() {
    let mut b = bench();
    let mut h = write_hdr(b.rkey, WRITE_BASE, 1);
    h.path_gen = 5;
    h.flags.ackreq = true;
    assert!(matches!(to_b(&mut b, h, &[1]).as_slice(), [Header::Sack(s)] if s.cum_psn == 1 && s.path_gen == 5));
    // One generation back is still in flight from before a re-entropy.
    let mut h1 = write_hdr(b.rkey, WRITE_BASE + 1, 1);
    (h1.path_gen, h1.path_psn, h1.msn, h1.flags.ackreq) = (4, 1, 1, true);
    assert!(matches!(to_b(&mut b, h1, &[1]).as_slice(), [Header::Sack(_)]));
    let mut h2 = write_hdr(b.rkey, WRITE_BASE + 2, 1);
    (h2.path_gen, h2.path_psn, h2.msn) = (3, 2, 2);
    assert_eq!(nack_code(&to_b(&mut b, h2, &[1])), Some(NackCode::BadHdr));
    assert_eq!(counters(&b, B).rx_stale_gen, 1);
    // cum_psn is 2: 2 + 257 is past the bitmap, 2 + 256 the last bit in it.
    let mut h3 = write_hdr(b.rkey, WRITE_BASE + 3, 1);
    (h3.path_gen, h3.path_psn, h3.msn) = (5, 2 + 257, 2);
    assert_eq!(nack_code(&to_b(&mut b, h3, &[1])), Some(NackCode::BadHdr));
    assert_eq!(counters(&b, B).rx_psn_window, 1);
    h3.path_psn = 2 + 256;
    assert!(to_b(&mut b, h3, &[1]).is_empty(), "accepted, no SACK asked");
    assert_eq!(b.sim.nics[B].read_mem(WRITE_BASE, 4).unwrap(), &[1, 1, 0, 1]);
}

#[test]
fn duplicates_are_acked_not_placed_twice_and_ce_is_reported() {
    let mut b = bench();
    let r = mrnic_reference::RecvRequest { wr_id: 1, addr: RECV_BASE, len: 8 };
    b.sim.nics[B].post_recv(B_CONN, 0, r).unwrap();
    let h = send_hdr(0, 0, 8, 8);
    assert!(to_b(&mut b, h, &[4; 8]).is_empty());
    assert_eq!(b.sim.nics[B].poll_cq(4).len(), 1);
    let mut pkt = wire(&Header::Data(h), &[4; 8], A_ADDR, B_ADDR);
    pkt.ecn = ECN_CE;
    b.sim.nics[B].handle_packet(2000, &pkt);
    let out = b.sim.nics[B].poll_transmit(2000).unwrap();
    match mrnic_proto::decode_datagram(&out.bytes).unwrap().header {
        Header::Sack(s) => assert_eq!((s.cum_psn, s.ecn_cnt, s.completed_msn), (1, 1, 1)),
        o => panic!("{o:?}"),
    }
    assert_eq!(counters(&b, B).rx_duplicate, 1);
    assert!(b.sim.nics[B].poll_cq(4).is_empty(), "no second completion");
}

#[test]
fn inconsistent_message_headers_get_bad_hdr() {
    let mut b = bench();
    let mut h = write_hdr(b.rkey, WRITE_BASE, 4);
    h.msg_len = 8;
    h.flags.eom = false;
    assert!(to_b(&mut b, h, &[1; 4]).is_empty());
    let mut h2 = write_hdr(b.rkey, WRITE_BASE + 4, 4);
    (h2.path_psn, h2.msg_len) = (1, 12);
    assert_eq!(nack_code(&to_b(&mut b, h2, &[1; 4])), Some(NackCode::BadHdr));
    assert_eq!(counters(&b, B).rx_msg_mismatch, 1);
    // Same msg_len but more bytes than it: also refused.
    (h2.msg_len, h2.payload_len) = (8, 5);
    assert_eq!(nack_code(&to_b(&mut b, h2, &[1; 5])), Some(NackCode::BadHdr));
    assert_eq!(counters(&b, B).rx_msg_mismatch, 2);
    // An msn beyond the message table.
    let mut h3 = write_hdr(b.rkey, WRITE_BASE, 1);
    (h3.path_psn, h3.msn) = (1, 8);
    assert_eq!(nack_code(&to_b(&mut b, h3, &[1])), Some(NackCode::BadHdr));
    assert_eq!(counters(&b, B).rx_msg_window, 1);
    // Over the MTU.
    let mut h4 = write_hdr(b.rkey, WRITE_BASE, 1025);
    h4.path_psn = 1;
    assert_eq!(nack_code(&to_b(&mut b, h4, &[1; 1025])), Some(NackCode::BadHdr));
    // A path the connection does not have.
    let mut h5 = write_hdr(b.rkey, WRITE_BASE, 1);
    h5.path_id = 9;
    assert_eq!(nack_code(&to_b(&mut b, h5, &[1])), Some(NackCode::BadHdr));
    assert_eq!(counters(&b, B).rx_bad_path, 1);
    assert_eq!(counters(&b, B).rx_bad_len, 1);
    assert_eq!(b.sim.nics[B].read_mem(WRITE_BASE, 8).unwrap(), &[1, 1, 1, 1, 0, 0, 0, 0]);
}

#[test]
fn corrupt_and_truncated_packets_are_counted_and_dropped() {
    let mut b = bench();
    let mut pkt = wire(&Header::Data(write_hdr(b.rkey, WRITE_BASE, 4)), &[1; 4], A_ADDR, B_ADDR);
    pkt.bytes[41] ^= 0x10;
    b.sim.nics[B].handle_packet(0, &pkt);
    pkt.bytes.truncate(20);
    b.sim.nics[B].handle_packet(0, &pkt);
    b.sim.nics[B].handle_packet(0, &WirePacket { bytes: vec![], ..pkt });
    let c = counters(&b, B);
    assert_eq!((c.rx_bad_icrc, c.rx_decode_error), (1, 2));
    assert!(b.sim.nics[B].poll_transmit(0).is_none());
    nothing_written(&b);
}

fn sack(cum_psn: u32, bitmap: Bitmap256) -> Header {
    Header::Sack(SackHeader { dst_conn: A_CONN, cum_psn, bitmap, ..SackHeader::default() })
}

#[test]
fn sacks_for_packets_never_sent_are_dropped_whole() {
    let mut b = bench();
    let a = &mut b.sim.nics[A];
    a.write_mem(SRC_BASE, &[1; 100]).unwrap();
    let wr = mrnic_reference::WorkRequest {
        wr_id: 1,
        op: mrnic_reference::WrOp::Write { remote_addr: WRITE_BASE, rkey: b.rkey },
        imm: None,
        local: mrnic_reference::Sge { addr: SRC_BASE, len: 100 },
    };
    a.post_send(A_CONN, 0, wr).unwrap();
    let p = a.poll_transmit(0).unwrap();
    assert_eq!(p.plane, 0, "the first packet goes on path 0");
    // Path 0 sent psn 0 only: cum 2 and bit 0 (psn 1) were never sent.
    feed(a, &sack(2, Bitmap256::default()), &[], B_ADDR);
    let mut bm = Bitmap256::default();
    bm.set(0);
    feed(a, &sack(0, bm), &[], B_ADDR);
    assert_eq!(a.counters().sack_beyond_sent, 2);
    assert!(a.poll_cq(4).is_empty());
    // A SACK for a path the connection lacks, and for an unknown connection.
    let mut s = sack(1, Bitmap256::default());
    if let Header::Sack(h) = &mut s {
        h.path_id = 7;
    }
    feed(a, &s, &[], B_ADDR);
    if let Header::Sack(h) = &mut s {
        (h.path_id, h.dst_conn) = (0, 12345);
    }
    feed(a, &s, &[], B_ADDR);
    assert_eq!((a.counters().ack_bad_path, a.counters().ack_no_conn), (1, 1));
    // The true SACK completes the request, once.
    feed(a, &sack(1, Bitmap256::default()), &[], B_ADDR);
    feed(a, &sack(1, Bitmap256::default()), &[], B_ADDR);
    let c = a.poll_cq(4);
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].status, mrnic_reference::Status::Success);
}

#[test]
fn nacks_for_psns_not_outstanding_are_dropped() {
    let mut b = bench();
    let a = &mut b.sim.nics[A];
    let n = Header::Nack(NackHeader {
        code: NackCode::Access,
        dst_conn: A_CONN,
        path_id: 0,
        path_gen: 0,
        path_psn: 5,
        stream_id: 0,
        msn: 0,
        echo_ts: 0,
    });
    feed(a, &n, &[], B_ADDR);
    assert_eq!(a.counters().nack_stale, 1);
    assert!(a.conn_info(A_CONN).unwrap().failed.is_none());
}
