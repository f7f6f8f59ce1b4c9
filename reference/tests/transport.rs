//! End-to-end scenarios of the reference transport over the in-memory
//! channel: clean transfers, every opcode, psn wraparound, tail loss, path
//! death and recovery, and the limits of message lengths.

mod common;

use common::*;
use mrnic_reference::channel::{Lane, Outage};
use mrnic_reference::sim::Outcome;
use mrnic_reference::PathState;

fn msgs(list: &[(u8, Kind, u32)]) -> Vec<Msg> {
    list.iter().map(|&(stream, kind, len)| Msg { stream, kind, len }).collect()
}

#[test]
fn clean_transfer_of_every_opcode_on_several_streams() {
    let s = Setup::new(4, 1);
    let m = msgs(&[
        (0, Kind::Write, 5000),
        (1, Kind::Send, 3000),
        (0, Kind::WriteImm, 1024),
        (2, Kind::SendImm, 1),
        (1, Kind::Write, 0),
        (3, Kind::Send, 0),
        (0, Kind::Write, 20000),
    ]);
    let mut r = prepare(&s, &m);
    assert_eq!(r.run(1_000_000_000), Outcome::Done);
    r.settle(1_000_000);
    r.check().unwrap();
    let c = r.sim.nics[A].counters();
    assert_eq!(c.tx_retransmits, 0);
    assert_eq!(r.sim.nics[B].counters().rx_duplicate, 0);
}

#[test]
fn packets_spray_over_every_path() {
    let s = Setup::new(4, 2);
    let mut r = prepare(&s, &msgs(&[(0, Kind::Write, 64 * 1024)]));
    assert_eq!(r.run(1_000_000_000), Outcome::Done);
    r.check().unwrap();
    let info = r.sim.nics[A].conn_info(A_CONN).unwrap();
    for p in &info.paths {
        assert!(p.next_psn >= 10, "path got {} packets: {:?}", p.next_psn, info.paths);
        assert_eq!(p.state, PathState::Good);
        assert_ne!(p.min_rtt, mrnic_reference::path::MIN_RTT_NONE);
    }
}

#[test]
fn psn_wraparound_near_2_pow_24() {
    let mut s = Setup::new(2, 3);
    s.tx_psn = (1 << 24) - 20;
    s.lanes = vec![Lane { drop_ppm: 50_000, delay_ns: 2_000, jitter_ns: 4_000, ..Lane::default() }; 4];
    let mut r = prepare(&s, &msgs(&[(0, Kind::Write, 100 * 1024), (1, Kind::Send, 3000)]));
    assert_eq!(r.run(2_000_000_000), Outcome::Done);
    r.settle(1_000_000);
    r.check().unwrap();
    let info = r.sim.nics[A].conn_info(A_CONN).unwrap();
    assert!(info.paths.iter().all(|p| p.next_psn < 1000), "every path wrapped: {:?}", info.paths);
}

/// Decodes a packet on the wire: (data header) if it is a data packet.
fn data_of(p: &mrnic_reference::WirePacket) -> Option<mrnic_proto::DataHeader> {
    match mrnic_proto::decode_datagram(&p.bytes).ok()?.header {
        mrnic_proto::Header::Data(h) => Some(h),
        _ => None,
    }
}

#[test]
fn full_bitmap_window_with_a_hole_at_the_front() {
    // One path, its first packet lost: the receiver holds the 255 packets
    // above the hole in a full bitmap until the retransmission fills it.
    let mut s = Setup::new(1, 4);
    s.cfg.cc.init_cwnd_bytes = s.cfg.cc.max_cwnd_bytes;
    s.cfg.cc.conn_max_cwnd_bytes = 1 << 24;
    s.cfg.cc.line_rate_gbps = 1600;
    // A ring slot per packet of the full window.
    s.cfg.hardware.tx_ring_depth = s.cfg.transport.window;
    let mut r = prepare(&s, &msgs(&[(0, Kind::Write, 300 * 1024)]));
    r.sim.channel.filter = Some(Box::new(|_, p| data_of(p).is_some_and(|h| h.path_psn == 0 && !h.flags.retx)));
    let mut most = 0;
    let outcome = r.sim.run_until(2_000_000_000, 1_000_000, |s| {
        most = most.max(s.nics[A].conn_info(A_CONN).unwrap().paths[0].inflight);
        s.completions[A].len() == 1
    });
    assert_eq!(outcome, Outcome::Done);
    r.check().unwrap();
    assert_eq!(most, 256, "the window filled");
    let c = r.sim.nics[A].counters();
    assert_eq!((c.tx_retransmits, c.sack_losses), (1, 1), "{c:?}");
    assert_eq!(r.sim.nics[B].counters().rx_psn_window, 0);
}

#[test]
fn loss_at_the_start_of_a_message() {
    let s = Setup::new(2, 10);
    let mut r = prepare(&s, &msgs(&[(0, Kind::Send, 8 * 1024), (0, Kind::Write, 8 * 1024)]));
    r.sim.channel.filter = Some(Box::new(|_, p| data_of(p).is_some_and(|h| h.flags.som && !h.flags.retx)));
    assert_eq!(r.run(1_000_000_000), Outcome::Done);
    r.check().unwrap();
    assert!(r.sim.nics[A].counters().tx_retransmits >= 2);
}

#[test]
fn tail_loss_is_recovered_by_a_tail_probe() {
    let s = Setup::new(1, 5);
    let mut r = prepare(&s, &msgs(&[(0, Kind::Write, 4096)]));
    // The last packet is lost; nothing after it would reveal the gap, so
    // only a PROBE can: the tail timer sends it about one RTT after the
    // packet was due, well before the RTO.
    r.sim.channel.filter = Some(Box::new(|_, p| data_of(p).is_some_and(|h| h.flags.eom && !h.flags.retx)));
    assert_eq!(r.run(1_000_000_000), Outcome::Done);
    r.check().unwrap();
    let c = r.sim.nics[A].counters();
    assert!(c.rto_fired == 0 && c.tx_probes >= 1 && c.tx_retransmits == 1, "{c:?}");
}

#[test]
fn a_path_dying_mid_message_moves_its_traffic_to_the_others() {
    let s = Setup::new(4, 6);
    let mut r = prepare(&s, &msgs(&[(0, Kind::Write, 400 * 1024), (1, Kind::Send, 50_000)]));
    r.sim.channel.outages.push(Outage { lane: 2, from: 20_000, to: u64::MAX });
    assert_eq!(r.run(5_000_000_000), Outcome::Done);
    r.check().unwrap();
    let info = r.sim.nics[A].conn_info(A_CONN).unwrap();
    assert!(matches!(info.paths[2].state, PathState::Suspect | PathState::Dead), "{:?}", info.paths[2]);
    let c = r.sim.nics[A].counters();
    assert!(c.tx_rerouted > 0 && c.path_suspect >= 1, "{c:?}");
}

#[test]
fn a_dead_path_is_probed_and_comes_back() {
    let s = Setup::new(2, 7);
    let mut r = prepare(&s, &msgs(&[(0, Kind::Write, 64 * 1024)]));
    r.sim.channel.outages.push(Outage { lane: 1, from: 0, to: 30_000_000 });
    assert_eq!(r.run(1_000_000_000), Outcome::Done);
    r.check().unwrap();
    // Keep the clock running past the outage: DEAD probes bring it back.
    let until = 60_000_000;
    r.sim.run_until(until, 1_000_000, |s| s.nics[A].conn_info(A_CONN).unwrap().paths[1].state == PathState::Good);
    let info = r.sim.nics[A].conn_info(A_CONN).unwrap();
    assert_eq!(info.paths[1].state, PathState::Good, "{:?}", info.paths[1]);
    let c = r.sim.nics[A].counters();
    assert!(c.path_dead >= 1 && c.path_recovered >= 1, "{c:?}");
}

#[test]
fn every_path_dead_fails_the_connection_once() {
    let s = Setup::new(2, 8);
    let mut r = prepare(&s, &msgs(&[(0, Kind::Write, 8192), (1, Kind::Send, 100)]));
    r.sim.channel.outages.push(Outage { lane: 0, from: 0, to: u64::MAX });
    r.sim.channel.outages.push(Outage { lane: 1, from: 0, to: u64::MAX });
    r.run(1_000_000_000);
    let c = completions_of(&r.sim, A);
    assert_eq!(c.len(), 2);
    assert!(c.iter().all(|c| c.status == mrnic_reference::Status::TransportRetryExceeded), "{c:?}");
    assert!(r.sim.nics[B].poll_cq(10).is_empty());
}

#[test]
fn largest_practical_message_and_length_limits() {
    let mut s = Setup::new(4, 9);
    s.region = 4 << 20;
    let mut r = prepare(&s, &msgs(&[(0, Kind::Write, 4 << 20)]));
    assert_eq!(r.run(5_000_000_000), Outcome::Done);
    r.check().unwrap();
    // msg_len is 32 bits: a longer request is refused at post time.
    let wr = mrnic_reference::WorkRequest {
        wr_id: 1,
        op: mrnic_reference::WrOp::Send,
        imm: None,
        local: mrnic_reference::Sge { addr: SRC_BASE, len: 1 << 32 },
    };
    assert_eq!(r.sim.nics[A].post_send(A_CONN, 0, wr), Err(mrnic_reference::VerbsError::TooLong(1 << 32)));
}

#[test]
fn rnr_then_success_after_post_recv() {
    let s = Setup::new(2, 11);
    let mut r = prepare(&s, &[]);
    let a = &mut r.sim.nics[A];
    a.write_mem(SRC_BASE, &[7u8; 3000]).unwrap();
    let wr = mrnic_reference::WorkRequest {
        wr_id: 42,
        op: mrnic_reference::WrOp::Send,
        imm: Some(9),
        local: mrnic_reference::Sge { addr: SRC_BASE, len: 3000 },
    };
    a.post_send(A_CONN, 1, wr).unwrap();
    // No receive posted: RNR NACKs, the sender backs off and retries.
    r.sim.run_until(250_000, 100_000, |_| false);
    assert!(r.sim.completions[A].is_empty());
    assert!(r.sim.nics[B].counters().rx_rnr >= 3);
    assert!(r.sim.nics[A].counters().rnr_retries >= 3);
    let rr = mrnic_reference::RecvRequest { wr_id: 77, addr: RECV_BASE, len: 4096 };
    r.sim.nics[B].post_recv(B_CONN, 1, rr).unwrap();
    r.sim.run_until(10_000_000, 100_000, |s| s.completions[A].len() == 1 && s.completions[B].len() == 1);
    assert_eq!(r.sim.completions[A][0].status, mrnic_reference::Status::Success);
    let rc = r.sim.completions[B][0];
    assert_eq!((rc.wr_id, rc.byte_len, rc.imm, rc.stream), (77, 3000, Some(9), 1));
    assert_eq!(r.sim.nics[B].read_mem(RECV_BASE, 3000).unwrap(), &[7u8; 3000][..]);
}

#[test]
fn rnr_back_off_holds_no_path_timer() {
    // The back-off (100 us) equals the RTO floor: while the refused packet
    // waited at the sender it kept its path's timer running, so the path
    // timed out as the back-off ended, was probed and re-entropied, and
    // the packet was rerouted as if the path had failed.
    let s = Setup::new(1, 14);
    let mut r = prepare(&s, &[]);
    let wr = mrnic_reference::WorkRequest {
        wr_id: 5,
        op: mrnic_reference::WrOp::Send,
        imm: None,
        local: mrnic_reference::Sge { addr: SRC_BASE, len: 10 },
    };
    r.sim.nics[A].post_send(A_CONN, 0, wr).unwrap();
    r.sim.run_until(450_000, 100_000, |_| false);
    let c = r.sim.nics[A].counters();
    assert!(c.rnr_retries >= 3, "{c:?}");
    assert_eq!((c.rto_fired, c.re_entropy, c.tx_rerouted), (0, 0, 0), "{c:?}");
    let info = r.sim.nics[A].conn_info(A_CONN).unwrap();
    assert_eq!(info.paths[0].state, PathState::Good);
    assert_eq!(info.paths[0].inflight, 0, "the refused packet waits at the sender");
    let rr = mrnic_reference::RecvRequest { wr_id: 6, addr: RECV_BASE, len: 64 };
    r.sim.nics[B].post_recv(B_CONN, 0, rr).unwrap();
    r.sim.run_until(10_000_000, 100_000, |s| s.completions[A].len() == 1 && s.completions[B].len() == 1);
    assert_eq!(r.sim.completions[A][0].status, mrnic_reference::Status::Success);
    assert_eq!(r.sim.nics[A].conn_info(A_CONN).unwrap().paths[0].inflight, 0);
}

#[test]
fn rnr_forever_fails_with_rnr_retry_exceeded() {
    let s = Setup::new(1, 12);
    let mut r = prepare(&s, &[]);
    let wr = mrnic_reference::WorkRequest {
        wr_id: 1,
        op: mrnic_reference::WrOp::Send,
        imm: None,
        local: mrnic_reference::Sge { addr: SRC_BASE, len: 10 },
    };
    r.sim.nics[A].post_send(A_CONN, 0, wr).unwrap();
    r.sim.run_until(1_000_000_000, 100_000, |s| !s.completions[A].is_empty());
    assert_eq!(r.sim.completions[A].len(), 1);
    assert_eq!(r.sim.completions[A][0].status, mrnic_reference::Status::RnrRetryExceeded);
}

#[test]
fn access_error_fails_the_request_and_flushes_the_rest() {
    let s = Setup::new(2, 13);
    let mut r = prepare(&s, &[]);
    let bad = mrnic_reference::WorkRequest {
        wr_id: 1,
        op: mrnic_reference::WrOp::Write { remote_addr: WRITE_BASE, rkey: r.write_rkey ^ 0x100 },
        imm: None,
        local: mrnic_reference::Sge { addr: SRC_BASE, len: 100 },
    };
    let good = mrnic_reference::WorkRequest { wr_id: 2, op: mrnic_reference::WrOp::Send, ..bad };
    r.sim.nics[A].post_send(A_CONN, 0, bad).unwrap();
    r.sim.nics[A].post_send(A_CONN, 1, good).unwrap();
    r.sim.run_until(1_000_000_000, 100_000, |s| s.completions[A].len() == 2);
    let c = &r.sim.completions[A];
    assert_eq!((c[0].wr_id, c[0].status), (1, mrnic_reference::Status::RemoteAccessError));
    assert_eq!((c[1].wr_id, c[1].status), (2, mrnic_reference::Status::WrFlushError));
    assert_eq!(r.sim.nics[B].counters().rx_bad_rkey, 1);
    assert!(r.sim.nics[B].read_mem(WRITE_BASE, 100).unwrap().iter().all(|&b| b == 0));
    assert_eq!(r.sim.nics[A].post_send(A_CONN, 0, bad), Err(mrnic_reference::VerbsError::ConnFailed(A_CONN)));
}

#[test]
fn write_imm_waits_for_its_receive_and_completes_in_order() {
    let s = Setup::new(2, 14);
    let mut r = prepare(&s, &[]);
    r.sim.nics[A].write_mem(SRC_BASE, &[5u8; 2000]).unwrap();
    let w = mrnic_reference::WorkRequest {
        wr_id: 1,
        op: mrnic_reference::WrOp::Write { remote_addr: WRITE_BASE, rkey: r.write_rkey },
        imm: Some(0xabcd),
        local: mrnic_reference::Sge { addr: SRC_BASE, len: 2000 },
    };
    r.sim.nics[A].post_send(A_CONN, 0, w).unwrap();
    r.sim.run_until(1_000_000_000, 100_000, |s| s.completions[A].len() == 1);
    // The data is placed and the sender is done; the receive completion
    // waits for a receive to consume.
    assert_eq!(r.sim.nics[B].read_mem(WRITE_BASE, 2000).unwrap(), &[5u8; 2000][..]);
    assert!(r.sim.completions[B].is_empty());
    let rr = mrnic_reference::RecvRequest { wr_id: 9, addr: RECV_BASE, len: 0 };
    r.sim.nics[B].post_recv(B_CONN, 0, rr).unwrap();
    r.sim.run_until(r.sim.now + 1_000, 100, |_| false);
    let c = r.sim.completions[B][0];
    assert_eq!(
        (c.wr_id, c.opcode, c.imm, c.byte_len),
        (9, mrnic_reference::CqOpcode::RecvRdmaWithImm, Some(0xabcd), 2000)
    );
}

#[test]
fn a_congested_path_gets_a_smaller_window_and_weight() {
    let mut s = Setup::new(2, 15);
    s.lanes[1].ce_ppm = 300_000;
    let mut r = prepare(&s, &msgs(&[(0, Kind::Write, 1 << 20)]));
    assert_eq!(r.run(5_000_000_000), Outcome::Done);
    r.check().unwrap();
    let p = r.sim.nics[A].conn_info(A_CONN).unwrap().paths;
    assert!(p[1].ecn_ewma > 0 && p[0].ecn_ewma == 0, "{p:?}");
    assert!(p[1].cwnd < p[0].cwnd / 4, "{p:?}");
    assert!(p[1].weight < p[0].weight, "{p:?}");
    // The uncongested path carried most of the data.
    assert!(p[0].next_psn > 2 * p[1].next_psn, "{p:?}");
}

#[test]
fn ce_steers_load_without_pausing_the_path_or_cutting_the_connection() {
    for steer in [true, false] {
        let mut s = Setup::new(2, 15);
        s.lanes[1].ce_ppm = 1_000_000;
        s.ce_steering = steer;
        let mut r = prepare(&s, &msgs(&[(0, Kind::Write, 1 << 20)]));
        let init = r.sim.nics[A].conn_info(A_CONN).unwrap().cc.aimd.cwnd;
        let (na, nb) = r.expected_completions();
        let (mut skipped, mut least) = (false, u32::MAX);
        let out = r.sim.run_until(5_000_000_000, 2_000_000, |s| {
            let i = s.nics[A].conn_info(A_CONN).unwrap();
            skipped |= i.paths[1].state == PathState::Skip;
            least = least.min(i.cc.aimd.cwnd);
            s.completions[A].len() >= na && s.completions[B].len() >= nb
        });
        assert_eq!(out, Outcome::Done);
        r.check().unwrap();
        let p = r.sim.nics[A].conn_info(A_CONN).unwrap().paths;
        // Either way the marked path's window is cut and it carries less.
        assert!(p[1].cwnd < p[0].cwnd / 4 && p[0].next_psn > 2 * p[1].next_psn, "{p:?}");
        if steer {
            assert!(!skipped && least == init, "steering: no SKIP, no connection cut (least {least}, init {init})");
        } else {
            assert!(
                skipped && least < init,
                "without steering: SKIP and a connection cut (least {least}, init {init})"
            );
        }
    }
}

#[test]
fn two_senders_to_one_receiver_are_told_half_the_line_each() {
    use mrnic_reference::channel::{Channel, Routing};
    use mrnic_reference::sim::Sim;
    use mrnic_reference::{Access, ConnParams, Nic, NicConfig, Sge, WorkRequest, WrOp};
    let cfg = mrnic_proto::Config::builtin("small").unwrap();
    let (a, b, c) = (1u32, 2u32, 3u32);
    let mut nics: Vec<Nic> =
        [a, b, c].iter().map(|&addr| Nic::new(NicConfig::new(cfg.clone(), addr, addr as u64))).collect();
    let lanes = vec![Lane { delay_ns: 2_000, ..Lane::default() }; 4];
    let conn = |local_id, remote_id, remote| ConnParams { local_id, remote_id, remote, paths: 2, tx_psn: 0, rx_psn: 0 };
    nics[0].create_conn(conn(1, 10, b)).unwrap();
    nics[2].create_conn(conn(1, 11, b)).unwrap();
    nics[1].create_conn(conn(10, 1, a)).unwrap();
    nics[1].create_conn(conn(11, 1, c)).unwrap();
    let rkey = nics[1].reg_mr(0x1000_0000, 1 << 21, Access::REMOTE_WRITE).unwrap();
    for (i, n) in [0usize, 2].into_iter().enumerate() {
        nics[n].reg_mr(0, 1 << 20, Access::LOCAL).unwrap();
        let wr = WorkRequest {
            wr_id: 1,
            op: WrOp::Write { remote_addr: 0x1000_0000 + (i as u64) * (1 << 20), rkey },
            imm: None,
            local: Sge { addr: 0, len: 1 << 20 },
        };
        nics[n].post_send(1, 0, wr).unwrap();
    }
    let mut sim = Sim::new(nics, Channel::new(1, lanes, Routing::ByPlane));
    let mut least = [u16::MAX; 2];
    let out = sim.run_until(5_000_000_000, 1_000_000, |s| {
        for (k, n) in [0usize, 2].into_iter().enumerate() {
            least[k] = least[k].min(s.nics[n].conn_info(1).unwrap().cc.rate_hint);
        }
        s.completions[0].len() == 1 && s.completions[2].len() == 1
    });
    assert_eq!(out, Outcome::Done);
    assert_eq!(least, [32768, 32768]);
}

#[test]
fn no_conn_at_the_peer_fails_the_requests_with_remote_invalid_request() {
    let s = Setup::new(1, 16);
    let mut sim = nics(&s);
    let bogus =
        mrnic_reference::ConnParams { local_id: 6, remote_id: 999, remote: B_ADDR, paths: 1, tx_psn: 0, rx_psn: 0 };
    sim.nics[A].create_conn(bogus).unwrap();
    sim.nics[A].reg_mr(SRC_BASE, 4096, mrnic_reference::Access::LOCAL).unwrap();
    let wr = mrnic_reference::WorkRequest {
        wr_id: 3,
        op: mrnic_reference::WrOp::Send,
        imm: None,
        local: mrnic_reference::Sge { addr: SRC_BASE, len: 100 },
    };
    sim.nics[A].post_send(6, 0, wr).unwrap();
    sim.run_until(1_000_000_000, 10_000, |s| !s.completions[A].is_empty());
    assert_eq!(sim.completions[A][0].status, mrnic_reference::Status::RemoteInvalidRequest);
    assert_eq!(sim.nics[B].counters().rx_no_conn, 1);
    assert!(sim.nics[A].conn_info(A_CONN).unwrap().failed.is_none(), "the other connection is untouched");
}

#[test]
fn default_config_sixteen_paths_with_loss() {
    let mut s = Setup::new(16, 17);
    s.cfg = mrnic_proto::Config::builtin("default").unwrap();
    s.lanes = (0..8u64)
        .map(|i| Lane {
            drop_ppm: 20_000,
            dup_ppm: 10_000,
            ce_ppm: 20_000,
            delay_ns: 1_000 + 300 * i,
            ..Lane::default()
        })
        .collect();
    s.region = 4 << 20;
    let mut r = prepare(
        &s,
        &msgs(&[
            (0, Kind::Write, 3 << 20),
            (5, Kind::Send, 100_000),
            (15, Kind::WriteImm, 4096),
            (15, Kind::SendImm, 0),
        ]),
    );
    r.sim.channel.outages.push(Outage { lane: 3, from: 5_000, to: u64::MAX });
    assert_eq!(r.run(5_000_000_000), Outcome::Done);
    r.settle(3_000_000);
    r.check().unwrap();
}

/// Drives A's port as one of many connections sharing a NIC: A sends at
/// most one packet per `gap_ns` (what a round robin over many connections
/// leaves each), B answers at once. Returns A's counters at completion.
fn run_paced(r: &mut Run, gap_ns: u64, deadline_ns: u64) -> mrnic_reference::Counters {
    let (sim, mut next_send) = (&mut r.sim, 0u64);
    while sim.now < deadline_ns && sim.completions[A].is_empty() {
        let now = sim.now;
        while let Some(p) = sim.channel.pop_due(now) {
            let i = if p.dst == A_ADDR { A } else { B };
            sim.nics[i].handle_packet(now, &p);
        }
        for n in &mut sim.nics {
            if n.next_deadline().is_some_and(|d| d <= now) {
                n.on_timer(now);
            }
        }
        while let Some(p) = sim.nics[B].poll_transmit(now) {
            sim.channel.send(now, p);
        }
        if now >= next_send {
            if let Some(p) = sim.nics[A].poll_transmit(now) {
                sim.channel.send(now, p);
                next_send = now + gap_ns;
            }
        }
        for i in [A, B] {
            let c = sim.nics[i].poll_cq(usize::MAX);
            sim.completions[i].extend(c);
        }
        sim.now += 1_000;
    }
    *sim.nics[A].counters()
}

#[test]
fn a_slow_connection_asks_for_sacks_in_time_and_never_times_out() {
    // One packet every 16 us (a connection among dozens on its NIC): eight
    // packets take 112 us, longer than rto_min (100 us in `small`). When a
    // packet count alone decided ACKREQ, the first packet of each path
    // waited that long for its SACK and its path timed out with nothing
    // lost (alltoall-64: 3,405 RTOs at 0% loss). The time bound asks for
    // a SACK once the oldest unrequested packet has waited rto_min / 4.
    let s = Setup::new(4, 21);
    let mut r = prepare(&s, &msgs(&[(0, Kind::Write, 48 * 1024)]));
    let c = run_paced(&mut r, 16_000, 20_000_000);
    assert_eq!(r.sim.completions[A].len(), 1, "{c:?}");
    r.settle(1_000_000);
    r.check().unwrap();
    assert!(c.rto_fired == 0 && c.tx_retransmits == 0, "{c:?}");
}

#[test]
fn the_tail_timer_declares_losses_a_later_sack_proves_before_probing() {
    // The message leaves a packet a microsecond and one path's lane is
    // dead: its packets are lost while packets sent after them on the other
    // paths are acknowledged, before any of them is overdue, and no SACK
    // comes after that to show the loss. The tail timer must retransmit
    // them on RACK's evidence; PROBEing the dead path instead (the rule
    // before 942f28a) waited for the PROBE to time out, an RTO, before
    // anything was resent.
    let s = Setup::new(4, 22);
    let mut r = prepare(&s, &msgs(&[(0, Kind::Write, 16 * 1024)]));
    r.sim.channel.outages.push(Outage { lane: 2, from: 0, to: u64::MAX });
    let c = run_paced(&mut r, 1_000, 1_000_000_000);
    let done_at = r.sim.now;
    assert_eq!(r.sim.completions[A].len(), 1, "{c:?}");
    r.settle(1_000_000);
    r.check().unwrap();
    let rto_min_ns = s.cfg.timers.rto_min_us as u64 * 1000;
    assert!(c.overdue_losses >= 1 && c.tx_retransmits >= 1 && c.rto_fired == 0, "{c:?}");
    assert!(done_at < rto_min_ns, "done at {done_at} ns, rto_min {rto_min_ns} ns: {c:?}");
}
