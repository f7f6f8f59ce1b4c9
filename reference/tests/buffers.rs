//! The buffer-reusing entries of the NIC (`poll_transmit_into`,
//! `handle_received`, what the UDP driver uses) against the readable ones
//! (`poll_transmit`, `handle_packet`): two identical setups run event by
//! event over identical lossy channels, one through each pair of entries,
//! and every packet must match byte for byte, as must the completions,
//! counters and memory images at the end.

mod common;

use common::*;
use mrnic_reference::channel::{Lane, Outage};
use mrnic_reference::{Nic, WirePacket};

fn next_event(r: &Run) -> Option<u64> {
    let timer = r.sim.nics.iter().filter_map(Nic::next_deadline).min();
    [r.sim.channel.next_delivery(), timer].into_iter().flatten().min()
}

/// Runs `a` (readable entries) and `b` (buffer entries) in lockstep until
/// both are quiet or `deadline` (virtual ns) passes; returns the packets
/// compared.
fn lockstep(a: &mut Run, b: &mut Run, deadline: u64) -> u64 {
    // Starts dirty and too short: each packet must replace its contents.
    let mut buf = vec![0xee; 3];
    let mut rx = Vec::new();
    let mut packets = 0u64;
    loop {
        let now = a.sim.now;
        for i in [A, B] {
            loop {
                let p1 = a.sim.nics[i].poll_transmit(now);
                let p2 = b.sim.nics[i].poll_transmit_into(now, &mut buf);
                match (p1, p2) {
                    (None, None) => break,
                    (Some(p1), Some(mut p2)) => {
                        assert!(p2.bytes.is_empty(), "the bytes are in the buffer");
                        p2.bytes = buf.clone();
                        assert_eq!(p1, p2, "packet {packets}");
                        a.sim.channel.send(now, p1);
                        b.sim.channel.send(now, p2);
                        packets += 1;
                    }
                    (p1, p2) => panic!("packet {packets}: readable {p1:?}, with a buffer {p2:?}"),
                }
            }
            let (ca, cb) = (a.sim.nics[i].poll_cq(usize::MAX), b.sim.nics[i].poll_cq(usize::MAX));
            assert_eq!(ca, cb);
            a.sim.completions[i].extend(ca);
            b.sim.completions[i].extend(cb);
        }
        let next = next_event(a);
        assert_eq!(next, next_event(b));
        let Some(next) = next.filter(|&t| t <= deadline) else { return packets };
        a.sim.now = now.max(next);
        b.sim.now = a.sim.now;
        let now = a.sim.now;
        while let Some(p) = a.sim.channel.pop_due(now) {
            let q = b.sim.channel.pop_due(now).expect("the channels are identical");
            assert_eq!(p, q);
            let i = if p.dst == A_ADDR { A } else { B };
            a.sim.nics[i].handle_packet(now, &p);
            // The datagram lies inside a larger buffer, as in a socket's
            // receive batch; the metadata carries no bytes.
            rx.clear();
            rx.extend_from_slice(&[0x55; 7]);
            rx.extend_from_slice(&q.bytes);
            rx.extend_from_slice(&[0xaa; 9]);
            let meta = WirePacket { bytes: Vec::new(), ..q };
            b.sim.nics[i].handle_received(now, &meta, &rx[7..rx.len() - 9]);
        }
        for r in [&mut *a, &mut *b] {
            for n in &mut r.sim.nics {
                if n.next_deadline().is_some_and(|d| d <= now) {
                    n.on_timer(now);
                }
            }
        }
    }
}

/// Runs the scenario both ways and compares; returns the readable run.
fn same_outcome(s: &Setup, m: &[Msg], outages: &[Outage]) -> Run {
    let (mut a, mut b) = (prepare(s, m), prepare(s, m));
    for r in [&mut a, &mut b] {
        r.sim.channel.outages.extend_from_slice(outages);
    }
    let mut packets = 0;
    if let (Some((at, ra)), Some((_, rb))) = (a.late.take(), b.late.take()) {
        // RNR until the receives are posted.
        packets += lockstep(&mut a, &mut b, at);
        for (r, recvs) in [(&mut a, ra), (&mut b, rb)] {
            for (stream, q) in recvs {
                r.sim.nics[B].post_recv(B_CONN, stream, q).unwrap();
            }
        }
    }
    packets += lockstep(&mut a, &mut b, 3_000_000_000);
    assert!(packets > 100, "{packets} packets");
    a.check().unwrap();
    b.check().unwrap();
    assert_eq!(a.sim.completions, b.sim.completions);
    for i in [A, B] {
        assert_eq!(a.sim.nics[i].counters(), b.sim.nics[i].counters());
    }
    assert_eq!(a.sim.channel.stats, b.sim.channel.stats);
    a
}

fn msgs(list: &[(u8, Kind, u32)]) -> Vec<Msg> {
    list.iter().map(|&(stream, kind, len)| Msg { stream, kind, len }).collect()
}

#[test]
fn lossy_transfer_of_every_opcode_gives_the_same_bytes() {
    let mut s = Setup::new(4, 21);
    let lane = Lane {
        drop_ppm: 50_000,
        dup_ppm: 20_000,
        corrupt_ppm: 20_000,
        ce_ppm: 50_000,
        delay_ns: 2_000,
        jitter_ns: 5_000,
    };
    s.lanes = vec![lane; 4];
    let m = msgs(&[
        (0, Kind::Write, 40_000),
        (1, Kind::Send, 9_000),
        (0, Kind::WriteImm, 1024),
        (2, Kind::SendImm, 1),
        (1, Kind::Write, 0),
        (3, Kind::Send, 0),
        (0, Kind::Write, 30_000),
    ]);
    let r = same_outcome(&s, &m, &[]);
    let (a, b) = (r.sim.nics[A].counters(), r.sim.nics[B].counters());
    assert!(a.tx_retransmits > 0 && b.rx_duplicate > 0 && a.rx_bad_icrc + b.rx_bad_icrc > 0, "{a:?} {b:?}");
}

#[test]
fn rnr_nacks_probes_and_re_entropy_give_the_same_bytes() {
    let mut s = Setup::new(2, 22);
    s.late_recvs = Some(50_000);
    let m = msgs(&[(0, Kind::Send, 20_000), (1, Kind::Write, 60_000), (0, Kind::SendImm, 3_000)]);
    // Path 1's plane is down for 30 ms: it times out, moves to new source
    // ports, dies, is probed and comes back.
    let r = same_outcome(&s, &m, &[Outage { lane: 1, from: 0, to: 30_000_000 }]);
    let c = r.sim.nics[A].counters();
    assert!(c.rnr_retries > 0 && c.re_entropy > 0 && c.path_dead > 0 && c.path_recovered > 0, "{c:?}");
}
