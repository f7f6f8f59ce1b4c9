//! The top's receive side (`mrnic_rx_core`: `mrnic_core` cut at
//! tx_engine, path_telemetry and path_selector) as Verilated RTL in
//! lockstep with the model's simulation of the same netlist, every output
//! compared every cycle, driven through its ports as a host driver and a
//! MAC would (`mrnic_verif::nic::NicRig::rx_twin`): the receive path under
//! attack (issue 8, item 5) before the whole top exists.
//!
//! Two regions are registered over AXI4-Lite (one writable, one that
//! takes receives only), two connections opened, receives posted; then
//! WRITE, WRITE_IMM and SEND messages of several packets arrive in order,
//! out of order and twice, among hostile frames: guessed rkeys, a write one
//! byte past its region's end, an address wrapping past 2^64, a SEND longer
//! than its receive, a spoofed connection id, a source address that is not
//! the peer's, a path past the connection's paths, a psn far outside the
//! window, a flipped ICRC bit, a payload length that disagrees with the
//! frame, truncated frames and random bytes. The checks: no mismatch,
//! every byte the AXI master wrote lies inside a registered region, every
//! good message's bytes land exactly, each receive completes once, and
//! the receive side's SACKs and NACKs reach the cut.
//!
//! The random hostile frames go into the whole top too (`NicRig::twin`),
//! whose answers leave as frames. A missing Verilator skips the test with
//! a message, except under CI=true, where it fails.

mod common;

use mrnic_model::cqe_merge::opcode;
use mrnic_model::dma_write_engine::{ACCESS_RECV, ACCESS_REMOTE_WRITE};
use mrnic_proto::{encode_frame, Config, DataHeader, Flags, Header, NetHeaders, Placement};
use mrnic_verif::nic::{NicRig, OpenConn, Pressure};
use mrnic_verif::skip_without_verilator;

/// The writable region and the receive-only one: (key, base, len).
const WR: (u32, u64, u64) = (0x1234_5601, 0x10_0000, 0x6000);
const RX: (u32, u64, u64) = (0x7777_0002, 0x20_0000, 0x2000);
/// The peer's IPv4 address (its frames' source).
const PEER: [u8; 4] = [10, 0, 0, 9];

struct Peer {
    net: NetHeaders,
    /// (local id at our NIC, next psn per path).
    conn: u32,
    psn: Vec<u32>,
    msn: u32,
    rq_seq: u32,
    mtu: usize,
}

impl Peer {
    /// The frames of one message on path `path`, `len` bytes of `data`.
    fn message(
        &mut self,
        path: usize,
        place: impl Fn(u32) -> Placement,
        data: &[u8],
        imm: Option<u32>,
    ) -> Vec<Vec<u8>> {
        let chunks: Vec<&[u8]> = if data.is_empty() { vec![&[][..]] } else { data.chunks(self.mtu).collect() };
        let n = chunks.len();
        let mut frames = Vec::new();
        for (k, c) in chunks.into_iter().enumerate() {
            let h = DataHeader {
                flags: Flags { som: k == 0, eom: k + 1 == n, retx: false, ackreq: k + 1 == n, se: false },
                payload_len: c.len() as u16,
                dst_conn: self.conn,
                path_id: path as u8,
                path_psn: self.psn[path],
                path_gen: 0,
                stream_id: 0,
                msn: self.msn,
                msg_len: data.len() as u32,
                place: place((k * self.mtu) as u32),
                tx_ts: 7,
                imm: if k + 1 == n { imm } else { None },
            };
            self.psn[path] = (self.psn[path] + 1) & 0xff_ffff;
            let mut f = Vec::new();
            encode_frame(&self.net, &Header::Data(h), c, &mut f).unwrap();
            frames.push(f);
        }
        self.msn = (self.msn + 1) & 0xff_ffff;
        frames
    }
}

fn bytes(n: usize, salt: u8) -> Vec<u8> {
    (0..n).map(|k| (k as u8).wrapping_mul(37).wrapping_add(salt)).collect()
}

#[test]
fn the_receive_side_rtl_agrees_with_the_model_under_attack() {
    if skip_without_verilator() {
        return;
    }
    let cfg = Config::builtin("small").unwrap();
    let press = Pressure { out_busy: 30, axi_busy: 30, axi_latency: 9 };
    let mut r = NicRig::rx_twin(&cfg, 0x5eed_0201, press).unwrap_or_else(|e| panic!("{e}"));
    let mtu = cfg.transport.mtu as usize;
    r.register_mr(&cfg, WR.0, WR.1, WR.2, ACCESS_REMOTE_WRITE).unwrap();
    r.register_mr(&cfg, RX.0, RX.1, RX.2, ACCESS_RECV).unwrap();
    r.wmem.guard = Some(vec![(WR.1, WR.1 + WR.2), (RX.1, RX.1 + RX.2)]);
    let udp = r.reg(&cfg, "UDP_PORT").unwrap();
    let port = r.axil_read(udp).unwrap().0 as u16;
    let remote = u32::from_be_bytes(PEER);
    let paths = vec![(50_000u16, 0u8), (50_001, 1), (50_002, 2)];
    for slot in 0..2u32 {
        let c = OpenConn {
            local_id: 0x100 + slot,
            remote_id: 0x900 + slot,
            remote,
            tx_psn: 0,
            rx_psn: 40,
            paths: paths.clone(),
        };
        r.open_conn(slot, &c).unwrap();
    }
    // Two receives on connection 0, stream 0: 3 KiB and 100 bytes.
    assert!(r.post_recv(0, 0, (RX.1, 3 * 1024), 0xa1, RX.0).unwrap());
    assert!(r.post_recv(0, 0, (RX.1 + 0x1000, 100), 0xa2, RX.0).unwrap());
    let net = NetHeaders { src_ip: PEER, dst_port: port, ..NetHeaders::default() };
    let mut peer = Peer { net, conn: 0x100, psn: vec![40; 3], msn: 0, rq_seq: 0, mtu };
    let write = |addr: u64| move |off: u32| Placement::Write { rkey: WR.0, addr: addr + off as u64 };

    // Good traffic: a WRITE of 2.5 MTUs, a WRITE_IMM (its completion
    // consumes no receive: the stream's receives are for SENDs), a SEND
    // of 3 KiB into the first receive.
    let w1 = bytes(5 * mtu / 2, 1);
    let mut good = peer.message(0, write(WR.1 + 0x10), &w1, None);
    let w2 = bytes(300, 2);
    good.extend(peer.message(1, write(WR.1 + 0x3ff0), &w2, None));
    let s1 = bytes(3 * 1024, 3);
    let rq = peer.rq_seq;
    peer.rq_seq += 1;
    good.extend(peer.message(2, move |off| Placement::Send { rq_seq: rq, msg_offset: off }, &s1, None));
    // Delivered out of order (the last first) and the first one twice.
    let last = good.pop().unwrap();
    r.send_frame(&last, 2).unwrap();
    for f in &good {
        r.send_frame(f, 0).unwrap();
    }
    r.send_frame(&good[0], 1).unwrap();

    // Hostile frames: each is refused, counted or NACKed, and writes nothing.
    let mut hostile: Vec<Vec<u8>> = Vec::new();
    let guessed = |off: u32| Placement::Write { rkey: WR.0 ^ 0x10, addr: WR.1 + off as u64 };
    hostile.extend(peer.message(0, guessed, &bytes(64, 4), None));
    hostile.extend(peer.message(1, write(WR.1 + WR.2 - 63), &bytes(64, 5), None));
    hostile.extend(peer.message(2, write(u64::MAX - 31), &bytes(64, 6), None));
    let rq = peer.rq_seq;
    peer.rq_seq += 1;
    hostile.extend(peer.message(0, move |off| Placement::Send { rq_seq: rq, msg_offset: off }, &bytes(200, 7), None));
    let mut spoof = Peer { conn: 0x1ff, psn: vec![40; 3], msn: 0, rq_seq: 0, mtu, net };
    hostile.extend(spoof.message(0, write(WR.1), &bytes(32, 8), None));
    let stranger = NetHeaders { src_ip: [10, 0, 0, 66], ..net };
    let mut thief = Peer { conn: 0x100, psn: vec![40; 3], msn: 9, rq_seq: 0, mtu, net: stranger };
    hostile.extend(thief.message(1, write(WR.1), &bytes(32, 9), None));
    let mut lost = Peer { conn: 0x101, psn: vec![40, 40, 40, 40, 40, 40], msn: 0, rq_seq: 0, mtu, net };
    hostile.extend(lost.message(5, write(WR.1 + 0x100), &bytes(32, 10), None));
    lost.psn[0] = 40 + 0x8000;
    hostile.extend(lost.message(0, write(WR.1 + 0x200), &bytes(32, 11), None));
    let mut flipped = peer.message(1, write(WR.1 + 0x5000), &bytes(64, 12), None).remove(0);
    *flipped.last_mut().unwrap() ^= 0x40;
    hostile.push(flipped);
    let mut short = peer.message(2, write(WR.1 + 0x5100), &bytes(64, 13), None).remove(0);
    short.truncate(short.len() - 20);
    hostile.push(short);
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    for n in [14usize, 60, 61, 200] {
        hostile.push(
            (0..n)
                .map(|_| {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    rng as u8
                })
                .collect(),
        );
    }
    for (k, f) in hostile.iter().enumerate() {
        r.send_frame(f, (k % 3) as u8).unwrap();
    }
    assert!(r.drain(400, 200_000), "the receive side never went quiet");
    if let Some(m) = r.mismatch() {
        panic!("the RTL differs from the model:\n{m}");
    }
    assert!(r.violations.is_empty(), "{:?}", r.violations);
    assert_eq!(r.wmem.outside, 0, "bytes written outside the regions, first at {:x?}", r.wmem.outside_at);
    assert_eq!(r.memory().read(WR.1 + 0x10, w1.len()), w1, "the WRITE landed");
    assert_eq!(r.memory().read(WR.1 + 0x3ff0, w2.len()), w2, "the WRITE across 4 KiB landed");
    assert_eq!(r.memory().read(RX.1, s1.len()), s1, "the SEND landed in its receive");
    assert_eq!(r.memory().read(WR.1 + WR.2 - 63, 63), vec![0; 63], "nothing past the region's end");
    let recvs: Vec<_> = r.cqes.iter().filter(|c| c.opcode == opcode::RECV).collect();
    assert_eq!(recvs.len(), 1, "the one good SEND completes once: {:?}", r.cqes);
    assert_eq!((recvs[0].wr_id, recvs[0].byte_len, recvs[0].status), (0xa1, s1.len() as u32, 0));
    let taken = r.cut_taken();
    let count = |n: &str| taken.iter().find(|(x, _)| x == n).map_or(0, |t| t.1);
    assert!(count("s_csack") > 0, "SACKs reach tx_engine: {taken:?}");
    assert!(count("s_cnack") > 0, "NACKs reach tx_engine: {taken:?}");
    // Each hostile kind was refused where it should be (the counters read
    // over AXI4-Lite, through the RTL too).
    let mut cnt = |name: &str| {
        let a = r.reg(&cfg, name).unwrap();
        r.axil_read(a).unwrap().0
    };
    let counters = [
        "CNT_RX_BAD_ICRC",
        "CNT_RX_DECODE_ERROR",
        "CNT_RX_NO_CONN",
        "CNT_RX_BAD_SRC",
        "CNT_RX_BAD_PATH",
        "CNT_RX_PSN_WINDOW",
        "CNT_RX_ACCESS",
        "CNT_RX_DUPLICATE",
        "CNT_SACKS_SENT",
        "CNT_RECV_COMPLETIONS",
    ]
    .map(|n| (n, cnt(n)));
    println!("cycles {}, cut {taken:?}, counters {counters:?}", r.cycle);
    let at = |n: &str| counters.iter().find(|c| c.0 == n).unwrap().1;
    assert!(r.mismatch().is_none(), "{:?}", r.mismatch());
    assert_eq!(at("CNT_RX_BAD_ICRC"), 1, "the flipped ICRC bit");
    assert_eq!(at("CNT_RX_DECODE_ERROR"), 5, "the truncated frame and the four of random bytes");
    assert_eq!(at("CNT_RX_NO_CONN"), 1, "the spoofed connection id");
    assert_eq!(at("CNT_RX_BAD_SRC"), 1, "the stranger's source address");
    assert_eq!(at("CNT_RX_BAD_PATH"), 1, "the path past the connection's paths");
    assert_eq!(at("CNT_RX_PSN_WINDOW"), 1, "the psn far outside the window");
    // The guessed rkey, one byte past the end, the wrap, and the SEND
    // longer than its receive (mr_check's recv check).
    assert_eq!(at("CNT_RX_ACCESS"), 4);
    assert!(at("CNT_RX_DUPLICATE") >= 1, "the first packet twice");
    assert_eq!(at("CNT_RECV_COMPLETIONS"), 1);
}

/// A random frame for the campaign: a DATA header whose every field is
/// drawn near the boundaries that matter (the two connections or another,
/// paths past the connection's, psns in and far out of the window, both
/// keys or a guess, addresses inside, at the end of and past a region or
/// near 2^64, SEND receive numbers and offsets, lengths up to an MTU and
/// msg_len that disagrees), encoded with a correct ICRC; three in ten then
/// has a byte flipped, is cut short or grows junk.
fn random_frame(rng: &mut u64, net: &NetHeaders, mtu: usize) -> Vec<u8> {
    let mut next = |n: u64| {
        *rng ^= *rng << 13;
        *rng ^= *rng >> 7;
        *rng ^= *rng << 17;
        *rng % n
    };
    let len = [0, 1, 64, 100, mtu as u64 - 1, mtu as u64][next(6) as usize] as usize;
    let addr = match next(5) {
        0 => WR.1 + next(WR.2),
        1 => WR.1 + WR.2 - next(64),
        2 => RX.1 + next(RX.2),
        3 => u64::MAX - next(4096),
        _ => next(1 << 40),
    };
    let rkey = [WR.0, RX.0, WR.0 ^ 1, next(1 << 32) as u32][next(4) as usize];
    let place = if next(3) == 0 {
        Placement::Send { rq_seq: next(4) as u32, msg_offset: [0, 1024, 3072][next(3) as usize] }
    } else {
        Placement::Write { rkey, addr }
    };
    let h = DataHeader {
        flags: Flags { som: next(2) == 0, eom: next(2) == 0, retx: next(8) == 0, ackreq: next(3) == 0, se: false },
        payload_len: len as u16,
        dst_conn: [0x100, 0x101, next(1 << 24) as u32][next(3) as usize],
        path_id: next(5) as u8,
        path_psn: (40 + [next(16), next(300), next(1 << 24)][next(3) as usize] as u32) & 0xff_ffff,
        path_gen: [0, 0, 0, 1][next(4) as usize],
        stream_id: next(5) as u8,
        msn: next(6) as u32,
        msg_len: [len as u64, len as u64 + next(3 * mtu as u64), next(1 << 32)][next(3) as usize] as u32,
        place,
        tx_ts: next(1 << 16) as u16,
        imm: (next(4) == 0).then(|| next(1 << 32) as u32),
    };
    let payload: Vec<u8> = (0..len).map(|_| next(256) as u8).collect();
    let mut f = Vec::new();
    encode_frame(net, &Header::Data(h), &payload, &mut f).unwrap();
    match next(10) {
        0 => {
            let k = next(f.len() as u64) as usize;
            f[k] ^= 1 << next(8);
        }
        1 => f.truncate(next(f.len() as u64) as usize),
        2 => f.extend((0..next(40)).map(|_| next(256) as u8)),
        _ => {}
    }
    f
}

/// The random frames of [`random_frame`] into the receive side alone (two
/// seeds) and into the whole top (a third: its answers leave as frames).
#[test]
fn random_hostile_frames_keep_the_rtl_in_lockstep_and_inside_the_regions() {
    if skip_without_verilator() {
        return;
    }
    type Make = fn(&Config, u64, Pressure) -> Result<NicRig, String>;
    let runs: [(u64, Make, &str); 3] = [
        (0x5eed_0301, NicRig::rx_twin, "receive side"),
        (0x5eed_0302, NicRig::rx_twin, "receive side"),
        (0x5eed_0303, NicRig::twin, "whole top"),
    ];
    let cfg = Config::builtin("small").unwrap();
    let mtu = cfg.transport.mtu as usize;
    let frames = if common::full() { 5000 } else { 400 };
    for (seed, make, part) in runs {
        let press = Pressure { out_busy: 40, axi_busy: 40, axi_latency: 15 };
        let mut r = make(&cfg, seed, press).unwrap_or_else(|e| panic!("{e}"));
        r.register_mr(&cfg, WR.0, WR.1, WR.2, ACCESS_REMOTE_WRITE).unwrap();
        r.register_mr(&cfg, RX.0, RX.1, RX.2, ACCESS_RECV).unwrap();
        r.wmem.guard = Some(vec![(WR.1, WR.1 + WR.2), (RX.1, RX.1 + RX.2)]);
        let port = {
            let a = r.reg(&cfg, "UDP_PORT").unwrap();
            r.axil_read(a).unwrap().0 as u16
        };
        let remote = u32::from_be_bytes(PEER);
        for slot in 0..2u32 {
            let paths = vec![(50_000u16, 0u8), (50_001, 1), (50_002, 2)];
            let c = OpenConn { local_id: 0x100 + slot, remote_id: 0x900, remote, tx_psn: 0, rx_psn: 40, paths };
            r.open_conn(slot, &c).unwrap();
            for k in 0..4u64 {
                r.post_recv(slot, k as u32 % 2, (RX.1 + 0x400 * (k + 4 * slot as u64), 0x400), k, RX.0).unwrap();
            }
        }
        let net = NetHeaders { src_ip: PEER, dst_port: port, ..NetHeaders::default() };
        let mut rng = seed;
        for k in 0..frames {
            let f = random_frame(&mut rng, &net, mtu);
            r.send_frame(&f, (k % 4) as u8).unwrap();
            if let Some(m) = r.mismatch() {
                panic!("seed {seed:#x}, frame {k}: the RTL differs from the model:\n{m}");
            }
        }
        assert!(r.drain(400, 400_000), "seed {seed:#x}: the receive side never went quiet");
        if let Some(m) = r.mismatch() {
            panic!("seed {seed:#x}: the RTL differs from the model:\n{m}");
        }
        assert!(r.violations.is_empty(), "seed {seed:#x}: {:?}", r.violations);
        assert_eq!(r.wmem.outside, 0, "seed {seed:#x}: written outside the regions at {:x?}", r.wmem.outside_at);
        println!(
            "{part}, seed {seed:#x}: {frames} frames, {} cycles, {} bytes written in {} bursts, cut {:?}, {} frames out, {} completions",
            r.cycle,
            r.wmem.written,
            r.wmem.bursts,
            r.cut_taken(),
            r.frames.len(),
            r.cqes.len()
        );
        assert!(r.wmem.written > 0, "some frames were placed");
        if part == "whole top" {
            assert!(!r.frames.is_empty(), "the whole top answers with frames");
        }
    }
}
