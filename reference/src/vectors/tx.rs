//! `tx` vectors: the sending NIC of a recorded run of two reference NICs
//! over the deterministic lossy [`Channel`]. Work requests and incoming
//! SACKs/NACKs (and timers) in; packets on the wire and completions out.
//! Each run also gives the receiving NIC's view, which goes to the `rx`
//! file beside the crafted receive vectors.
//!
//! The driver here only moves packets and time; every decision is the
//! reference NIC's, recorded event by event through [`super::rx::apply`].

use mrnic_proto::headers::Header;
use mrnic_proto::{decode_datagram, Config};

use super::format::{vector_seed, BlockKind};
use super::rx::{regions, Input, MemWrite, NicSetup, NicVector, Pkt, Recorder, ADDR_A, ADDR_B, LOCAL_A, LOCAL_B};
use crate::channel::{Channel, Lane, Outage, Routing};
use crate::memory::Access;
use crate::rng::Rng;
use crate::verbs::{ConnParams, RecvRequest, Sge, WorkRequest, WrOp};
use crate::wire::WirePacket;

/// What a run sets up and schedules.
#[derive(Clone)]
struct Scenario {
    desc: &'static str,
    paths: u8,
    tx_psn: u32,
    lane: Lane,
    outages: Vec<Outage>,
    /// Drops the n-th data packet (0-based) the sender puts on the wire.
    drop_data: Vec<usize>,
    /// The receiver has no connection (NO_CONN).
    no_peer: bool,
    /// (time ns, on A?, input). Inputs at equal times run in list order.
    events: Vec<(u64, bool, Input)>,
    /// Run at least this long (ns) even when everything completed.
    min_ns: u64,
}

const SRC: u64 = 0x2_0000;
const DST: u64 = 0x1_0000;
const RECV: u64 = 0x8_0000;

fn wr(wr_id: u64, rkey: Option<u32>, off: u64, len: u64, imm: Option<u32>) -> WorkRequest {
    let op = match rkey {
        Some(rkey) => WrOp::Write { remote_addr: DST + off, rkey },
        None => WrOp::Send,
    };
    WorkRequest { wr_id, op, imm, local: Sge { addr: SRC + off, len } }
}

fn send(t: u64, stream: u8, w: WorkRequest) -> (u64, bool, Input) {
    (t, true, Input::PostSend { conn: LOCAL_A, stream, wr: w })
}

fn recv(t: u64, stream: u8, wr_id: u64, addr: u64, len: u32) -> (u64, bool, Input) {
    (t, false, Input::PostRecv { conn: LOCAL_B, stream, recv: RecvRequest { wr_id, addr, len } })
}

fn is_data(p: &WirePacket) -> bool {
    matches!(decode_datagram(&p.bytes), Ok(d) if matches!(d.header, Header::Data(_)))
}

/// Runs two NICs and returns (receiver's vector, sender's vector).
fn run(cfg: &Config, index: usize, vseed: u64, sc: &Scenario) -> (NicVector, NicVector) {
    let src_len = 0x4000u64;
    let mut rng = Rng::new(vseed);
    let mut a_regs = regions(cfg, &[(SRC, src_len, Access::LOCAL)]);
    // The source buffer: only the bytes the work requests read.
    let mut fill = Vec::new();
    for (_, on_a, i) in &sc.events {
        if let (true, Input::PostSend { wr, .. }) = (on_a, i) {
            if wr.local.len > 0 {
                let data: Vec<u8> = (0..wr.local.len).map(|_| rng.below(256) as u8).collect();
                fill.push(MemWrite { addr: wr.local.addr, data });
            }
        }
    }
    a_regs[0].fill = fill;
    let b_regs = regions(cfg, &[(DST, 0x4000, Access::REMOTE_WRITE), (RECV, 0x4000, Access::RECV)]);
    let a_conn = ConnParams {
        local_id: LOCAL_A,
        remote_id: LOCAL_B,
        remote: ADDR_B,
        paths: sc.paths,
        tx_psn: sc.tx_psn,
        rx_psn: 0,
    };
    let b_conn = ConnParams {
        local_id: LOCAL_B,
        remote_id: LOCAL_A,
        remote: ADDR_A,
        paths: sc.paths,
        tx_psn: 0,
        rx_psn: sc.tx_psn,
    };
    let nic = |addr, seed| NicSetup { addr, seed, rnr_delay_us: cfg.timers.rto_min_us, rnr_retry: 7, retry_limit: 15 };
    let desc = sc.desc;
    let mut a = Recorder::new(cfg, format!("tx-{index:03}"), desc, vseed, nic(ADDR_A, vseed), a_regs, vec![a_conn]);
    let b_conns = if sc.no_peer { Vec::new() } else { vec![b_conn] };
    let mut b = Recorder::new(cfg, format!("rx-pair-{index:03}"), desc, vseed, nic(ADDR_B, vseed ^ 1), b_regs, b_conns);
    let mut ch = Channel::new(vseed, vec![sc.lane; cfg.transport.planes as usize], Routing::ByPlane);
    ch.outages = sc.outages.clone();
    let mut data_sent = 0usize;
    let mut pending: std::collections::VecDeque<(u64, bool, Input)> = sc.events.iter().cloned().collect();
    let mut now = 0u64;
    let mut to_wire = |ch: &mut Channel, now: u64, from_a: bool, pkts: Vec<Pkt>| {
        for p in pkts {
            let w = WirePacket::from(&p);
            if from_a && is_data(&w) {
                let n = data_sent;
                data_sent += 1;
                if sc.drop_data.contains(&n) {
                    continue;
                }
            }
            ch.send(now, w);
        }
    };
    for _ in 0..4000 {
        let sched = pending.front().map(|e| e.0);
        let next =
            [ch.next_delivery(), a.nic.next_deadline(), b.nic.next_deadline(), sched].into_iter().flatten().min();
        let Some(next) = next else { break };
        let busy = !a.nic.idle() || ch.in_flight() > 0 || !pending.is_empty();
        if !busy && next > sc.min_ns {
            break;
        }
        now = now.max(next);
        while pending.front().is_some_and(|e| e.0 <= now) {
            let (_, on_a, input) = pending.pop_front().expect("peeked");
            if on_a {
                let out = a.event(now, input);
                to_wire(&mut ch, now, true, out);
            } else {
                let out = b.event(now, input);
                to_wire(&mut ch, now, false, out);
            }
        }
        while let Some(p) = ch.pop_due(now) {
            let pkt = Pkt::from(&p);
            if p.dst == ADDR_A {
                let out = a.event(now, Input::Packet(pkt));
                to_wire(&mut ch, now, true, out);
            } else if p.dst == ADDR_B {
                let out = b.event(now, Input::Packet(pkt));
                to_wire(&mut ch, now, false, out);
            }
        }
        if a.nic.next_deadline().is_some_and(|d| d <= now) {
            let out = a.event(now, Input::Timer);
            to_wire(&mut ch, now, true, out);
        }
        if b.nic.next_deadline().is_some_and(|d| d <= now) {
            let out = b.event(now, Input::Timer);
            to_wire(&mut ch, now, false, out);
        }
    }
    (b.vector, a.vector)
}

/// Runs every scenario: (rx vectors of the receivers, tx vectors of the
/// senders).
pub fn generate(cfg: &Config, seed: u64) -> (Vec<NicVector>, Vec<NicVector>) {
    let mtu = cfg.transport.mtu as u64;
    let paths = cfg.transport.paths_per_conn.min(4) as u8;
    let lane = Lane { delay_ns: 2000, ..Lane::default() };
    // The receiver's first region (remote write) gets the first key of a
    // fresh table.
    let rkey = regions(cfg, &[(DST, 0x4000, Access::REMOTE_WRITE)])[0].key;
    let base = Scenario {
        desc: "",
        paths,
        tx_psn: 0,
        lane,
        outages: Vec::new(),
        drop_data: Vec::new(),
        no_peer: false,
        events: Vec::new(),
        min_ns: 0,
    };
    let rto_ns = cfg.timers.rto_min_us as u64 * 1000;
    let scenarios = vec![
        Scenario {
            desc: "a WRITE of two packets over two paths and a SEND, no loss",
            paths: 2.min(paths),
            events: vec![
                recv(0, 0, 500, RECV, 256),
                send(0, 0, wr(1, Some(rkey), 0, mtu + 100, None)),
                send(0, 0, wr(2, None, 0x1000, 200, None)),
            ],
            ..base.clone()
        },
        Scenario {
            desc: "psn wraparound: first psn 2^24-2 on every path, six messages",
            tx_psn: 0xff_fffe,
            events: (0..6).map(|i| send(0, (i % 2) as u8, wr(10 + i, Some(rkey), i * 0x300, 0x40, None))).collect(),
            ..base.clone()
        },
        Scenario {
            desc: "loss at the start of a message: its first packet is dropped and retransmitted",
            drop_data: vec![0],
            events: vec![send(0, 0, wr(20, Some(rkey), 0, mtu + 64, None))],
            ..base.clone()
        },
        Scenario {
            desc: "loss at the tail: the last packet (with ACKREQ) is dropped; RTO and PROBE recover it",
            drop_data: vec![1],
            events: vec![send(0, 0, wr(21, Some(rkey), 0, mtu + 64, None))],
            ..base.clone()
        },
        Scenario {
            desc: "a path dies mid-message: plane 1 goes down for good; RTOs, SUSPECT, DEAD, rerouted retransmissions",
            outages: vec![Outage { lane: 1, from: 1000, to: u64::MAX }],
            events: vec![
                send(0, 0, wr(30, Some(rkey), 0, mtu + 64, None)),
                send(0, 1, wr(31, Some(rkey), 0x2000, mtu + 64, None)),
            ],
            min_ns: 40 * rto_ns,
            ..base.clone()
        },
        Scenario {
            desc: "CE marks on every path: SACKs carry ecn counts, windows are cut once per srtt",
            lane: Lane { ce_ppm: 400_000, ..lane },
            events: (0..3).map(|i| send(i * 20_000, 0, wr(40 + i, Some(rkey), i * 0x1000, mtu + 17, None))).collect(),
            ..base.clone()
        },
        Scenario {
            desc: "RNR: a SEND before its receive is posted backs off and lands once the receive is there",
            events: vec![
                send(0, 1, wr(50, None, 0, 600, Some(0x1234))),
                recv(3 * rto_ns / 2, 1, 501, RECV + 0x100, 1024),
            ],
            ..base.clone()
        },
        Scenario {
            desc: "ACCESS: a WRITE to a bad rkey fails the request and flushes the connection",
            events: vec![
                send(0, 0, wr(60, Some(rkey ^ 0x40), 0, 100, None)),
                send(0, 0, wr(61, Some(rkey), 0x100, 100, None)),
            ],
            ..base.clone()
        },
        Scenario {
            desc: "NO_CONN: the peer has no such connection; the request fails",
            no_peer: true,
            events: vec![send(0, 0, wr(70, Some(rkey), 0, 100, None))],
            ..base.clone()
        },
        Scenario {
            desc: "zero-length WRITE and SEND, WRITE_IMM, SEND_IMM, and a two-packet message on another stream",
            events: vec![
                recv(0, 2, 502, RECV, 64),
                recv(0, 2, 503, RECV + 0x40, 64),
                recv(0, 2, 504, RECV + 0x80, 64),
                send(0, 2, wr(80, Some(rkey), 0, 0, None)),
                send(0, 2, wr(81, None, 0x100, 0, None)),
                send(0, 2, wr(82, Some(rkey), 0x200, 48, Some(7))),
                send(0, 2, wr(83, None, 0x300, 40, Some(8))),
                send(0, 3, wr(84, Some(rkey), 0x1000, mtu + 1, None)),
            ],
            ..base.clone()
        },
        Scenario {
            desc: "a lossy channel: 5% loss, duplication, corruption and reordering jitter",
            lane: Lane {
                drop_ppm: 50_000,
                dup_ppm: 30_000,
                corrupt_ppm: 20_000,
                ce_ppm: 0,
                delay_ns: 2000,
                jitter_ns: 3000,
            },
            events: (0..4)
                .map(|i| send(i * 1000, (i % 4) as u8, wr(90 + i, Some(rkey), i * 0xc00, mtu / 2, None)))
                .collect(),
            ..base.clone()
        },
    ];
    let mut rx = Vec::new();
    let mut tx = Vec::new();
    for (i, sc) in scenarios.iter().enumerate() {
        let vseed = vector_seed(seed, BlockKind::Tx, i);
        let (r, t) = run(cfg, i, vseed, sc);
        rx.push(r);
        tx.push(t);
    }
    (rx, tx)
}
