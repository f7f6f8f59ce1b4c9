//! `rx` vectors (and the record type shared with `tx`): a NIC seen at its
//! packet boundary. Inputs are timestamped events in order: a packet from
//! the wire, a timer, a verb (post_send, post_recv); outputs are what the
//! NIC does in answer before the next event: packets to the wire, writes
//! into host memory, completions.
//!
//! The vectors are recordings of the reference [`Nic`]: [`apply`] is the
//! one function that drives a NIC by one event and collects its outputs,
//! used both when recording and when checking. The `rx` file holds the
//! receiving NIC of each run; its packets are crafted here or come from a
//! sending NIC ([`super::tx`]).

use serde::{Deserialize, Serialize};

use super::format::{hex, vector_seed, BlockKind};
use super::Outcome;
use crate::memory::Access;
use crate::nic::{Nic, NicConfig};
use crate::rng::Rng;
use crate::verbs::{Completion, ConnParams, RecvRequest, WorkRequest};
use crate::wire::{NodeAddr, WirePacket};
use mrnic_proto::packet::{ECN_CE, ECN_ECT0};
use mrnic_proto::{encode_datagram, Config, DataHeader, Flags, Header, Placement, ProbeHeader};

/// A packet on the wire: addressing as a UDP socket sees it, and the
/// transport datagram (header, payload, ICRC) in hex.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pkt {
    pub src: NodeAddr,
    pub dst: NodeAddr,
    pub sport: u16,
    pub dport: u16,
    pub plane: u8,
    pub ecn: u8,
    #[serde(with = "hex")]
    pub bytes: Vec<u8>,
}

impl From<&WirePacket> for Pkt {
    fn from(p: &WirePacket) -> Pkt {
        Pkt {
            src: p.src,
            dst: p.dst,
            sport: p.sport,
            dport: p.dport,
            plane: p.plane,
            ecn: p.ecn,
            bytes: p.bytes.clone(),
        }
    }
}

impl From<&Pkt> for WirePacket {
    fn from(p: &Pkt) -> WirePacket {
        WirePacket {
            src: p.src,
            dst: p.dst,
            sport: p.sport,
            dport: p.dport,
            plane: p.plane,
            ecn: p.ecn,
            bytes: p.bytes.clone(),
        }
    }
}

/// A write into host memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemWrite {
    pub addr: u64,
    #[serde(with = "hex")]
    pub data: Vec<u8>,
}

/// One input event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum Input {
    /// A packet arrives from the wire.
    Packet(Pkt),
    /// The NIC's timers run (RTO, probes, RNR back-off) at this time.
    Timer,
    /// `ibv_post_send`.
    PostSend { conn: u32, stream: u8, wr: WorkRequest },
    /// `ibv_post_recv`.
    PostRecv { conn: u32, stream: u8, recv: RecvRequest },
}

/// Everything the NIC did in answer to one event.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Output {
    /// Packets to the wire, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pkts: Vec<Pkt>,
    /// Host memory writes, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writes: Vec<MemWrite>,
    /// Completions, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpl: Vec<Completion>,
    /// A verb refused (its error message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One event and its expected outputs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// Time of the event, nanoseconds (the timestamp counter is
    /// `t / ts_unit_ns`).
    pub t: u64,
    #[serde(rename = "in")]
    pub input: Input,
    /// The bench must let the NIC empty before this event (always true for
    /// NIC-level vectors: the reference is untimed, so the outputs of an
    /// event are all of them only once nothing is left in flight).
    pub drain: bool,
    pub out: Output,
}

/// The NIC's own knobs beyond the config.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NicSetup {
    pub addr: NodeAddr,
    /// The NIC's generator seed (source ports).
    pub seed: u64,
    pub rnr_delay_us: u32,
    pub rnr_retry: u32,
    pub retry_limit: u32,
}

/// A registered region and its initial contents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Region {
    /// The key the NIC hands out for it.
    pub key: u32,
    pub base: u64,
    pub len: u64,
    pub access: u8,
    /// Host writes before the first event (the rest of the region is 0).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fill: Vec<MemWrite>,
}

/// A NIC-level vector (`rx` and `tx` files).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NicVector {
    pub id: String,
    pub desc: String,
    pub seed: u64,
    pub nic: NicSetup,
    /// Regions, registered in this order before the connections.
    pub regions: Vec<Region>,
    /// Connections, created in this order.
    pub conns: Vec<ConnParams>,
    pub steps: Vec<Step>,
}

/// Builds the NIC of a vector (regions, fills, connections), tracing its
/// memory writes from then on.
pub fn build(cfg: &Config, setup: &NicSetup, regions: &[Region], conns: &[ConnParams]) -> Result<Nic, String> {
    let mut nc = NicConfig::new(cfg.clone(), setup.addr, setup.seed);
    nc.rnr_delay_us = setup.rnr_delay_us;
    nc.rnr_retry = setup.rnr_retry;
    nc.retry_limit = setup.retry_limit;
    let mut nic = Nic::new(nc);
    for (i, r) in regions.iter().enumerate() {
        let k = nic.reg_mr(r.base, r.len, Access(r.access)).map_err(|e| format!("regions[{i}]: {e}"))?;
        if k != r.key {
            return Err(format!("regions[{i}]: the NIC hands out key {k:#x}, the vector says {:#x}", r.key));
        }
        for f in &r.fill {
            nic.write_mem(f.addr, &f.data).map_err(|e| format!("regions[{i}] fill: {e}"))?;
        }
    }
    for (i, c) in conns.iter().enumerate() {
        nic.create_conn(*c).map_err(|e| format!("conns[{i}]: {e}"))?;
    }
    nic.set_write_trace(true);
    Ok(nic)
}

/// Drives a NIC by one event at `t` and collects everything it does in
/// answer: the event, then every packet it will send now, its
/// completions and its memory writes.
pub fn apply(nic: &mut Nic, t: u64, input: &Input) -> Output {
    let mut out = Output::default();
    match input {
        Input::Packet(p) => nic.handle_packet(t, &WirePacket::from(p)),
        Input::Timer => nic.on_timer(t),
        Input::PostSend { conn, stream, wr } => {
            out.error = nic.post_send(*conn, *stream, *wr).err().map(|e| e.to_string());
        }
        Input::PostRecv { conn, stream, recv } => {
            out.error = nic.post_recv(*conn, *stream, *recv).err().map(|e| e.to_string());
        }
    }
    while let Some(p) = nic.poll_transmit(t) {
        out.pkts.push(Pkt::from(&p));
    }
    out.cpl = nic.poll_cq(usize::MAX);
    out.writes = nic.take_write_trace().into_iter().map(|(addr, data)| MemWrite { addr, data }).collect();
    out
}

fn describe(o: &Output) -> String {
    format!("{} packets, {} writes, {} completions, error {:?}", o.pkts.len(), o.writes.len(), o.cpl.len(), o.error)
}

/// The first difference between two outputs, in words.
pub fn diff(want: &Output, got: &Output) -> Option<String> {
    if want == got {
        return None;
    }
    for (i, (w, g)) in want.pkts.iter().zip(&got.pkts).enumerate() {
        if w != g {
            return Some(format!(
                "packet {i} differs: expected {}, got {}",
                hex::encode(&w.bytes),
                hex::encode(&g.bytes)
            ));
        }
    }
    for (i, (w, g)) in want.writes.iter().zip(&got.writes).enumerate() {
        if w != g {
            return Some(format!(
                "write {i} differs: expected {} bytes at {:#x}, got {} at {:#x}",
                w.data.len(),
                w.addr,
                g.data.len(),
                g.addr
            ));
        }
    }
    for (i, (w, g)) in want.cpl.iter().zip(&got.cpl).enumerate() {
        if w != g {
            return Some(format!("completion {i} differs: expected {w:?}, got {g:?}"));
        }
    }
    Some(format!("expected {}; got {}", describe(want), describe(got)))
}

/// Re-runs the reference NIC on a vector's events.
pub fn check(cfg: &Config, v: &NicVector) -> Outcome {
    let mut nic = match build(cfg, &v.nic, &v.regions, &v.conns) {
        Ok(n) => n,
        Err(e) => return Outcome::Fail(e),
    };
    for (k, s) in v.steps.iter().enumerate() {
        let got = apply(&mut nic, s.t, &s.input);
        if let Some(d) = diff(&s.out, &got) {
            return Outcome::Fail(format!("step {k} (t={} ns): {d}", s.t));
        }
    }
    Outcome::Pass
}

/// A NIC being recorded.
pub struct Recorder {
    pub nic: Nic,
    pub vector: NicVector,
}

impl Recorder {
    pub fn new(
        cfg: &Config,
        id: String,
        desc: &str,
        seed: u64,
        setup: NicSetup,
        regions: Vec<Region>,
        conns: Vec<ConnParams>,
    ) -> Recorder {
        let nic = build(cfg, &setup, &regions, &conns).expect("generator setups are valid");
        let vector = NicVector { id, desc: desc.to_string(), seed, nic: setup, regions, conns, steps: Vec::new() };
        Recorder { nic, vector }
    }

    /// Applies and records one event; returns the packets sent.
    pub fn event(&mut self, t: u64, input: Input) -> Vec<Pkt> {
        let out = apply(&mut self.nic, t, &input);
        let pkts = out.pkts.clone();
        self.vector.steps.push(Step { t, input, drain: true, out });
        pkts
    }
}

/// Regions a NIC with `key`s as the reference hands them out (a fresh NIC
/// registers in order from slot 0 with tags 1, 2, ...).
pub fn regions(cfg: &Config, list: &[(u64, u64, Access)]) -> Vec<Region> {
    let mut m = crate::memory::Memory::new(cfg.hardware.mr_entries);
    list.iter()
        .map(|&(base, len, acc)| Region {
            key: m.register(base, len, acc).expect("valid"),
            base,
            len,
            access: acc.0,
            fill: Vec::new(),
        })
        .collect()
}

pub const ADDR_A: NodeAddr = 1;
pub const ADDR_B: NodeAddr = 2;

/// The receiving NIC of the crafted scenarios (also the adversarial ones).
pub(super) struct Craft {
    pub(super) rec: Recorder,
    pub(super) t: u64,
    pub(super) tx_ts: u16,
    pub(super) gen: u8,
    udp_port: u16,
}

impl Craft {
    pub(super) fn pkt(&mut self, h: Header, payload: &[u8], sport: u16, plane: u8, ecn: u8) -> Pkt {
        let mut bytes = Vec::new();
        encode_datagram(&h, payload, &mut bytes).expect("crafted headers are valid");
        Pkt { src: ADDR_A, dst: ADDR_B, sport, dport: self.udp_port, plane, ecn, bytes }
    }

    /// A data packet on `path` arriving `dt` ns after the previous event.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn data(
        &mut self,
        dt: u64,
        conn: u32,
        path: u8,
        psn: u32,
        stream: u8,
        msn: u32,
        msg_len: u32,
        place: Placement,
        payload: &[u8],
        imm: Option<u32>,
        ackreq: bool,
        ecn: u8,
    ) {
        self.t += dt;
        self.tx_ts = self.tx_ts.wrapping_add(7);
        let h = DataHeader {
            flags: Flags { som: false, eom: false, retx: false, ackreq, se: false },
            payload_len: payload.len() as u16,
            dst_conn: conn,
            path_id: path,
            path_psn: psn & crate::fixed::SEQ_MASK,
            path_gen: self.gen,
            stream_id: stream,
            msn,
            msg_len,
            place,
            tx_ts: self.tx_ts,
            imm,
        };
        let p = self.pkt(Header::Data(h), payload, 50000 + path as u16, path % 4, ecn);
        let t = self.t;
        self.rec.event(t, Input::Packet(p));
    }

    pub(super) fn probe(&mut self, dt: u64, conn: u32, path: u8, psn: u32, gen: u8) {
        self.t += dt;
        let h = ProbeHeader { tx_ts: self.tx_ts, dst_conn: conn, path_id: path, path_gen: gen, path_psn: psn };
        let p = self.pkt(Header::Probe(h), &[], 50000 + path as u16, path % 4, ECN_ECT0);
        let t = self.t;
        self.rec.event(t, Input::Packet(p));
    }

    pub(super) fn recv(&mut self, dt: u64, stream: u8, wr_id: u64, addr: u64, len: u32) {
        self.t += dt;
        let t = self.t;
        self.rec.event(t, Input::PostRecv { conn: LOCAL_B, stream, recv: RecvRequest { wr_id, addr, len } });
    }
}

/// Connection ids of the runs: A's connection 1 talks to B's connection 2.
pub const LOCAL_A: u32 = 1;
pub const LOCAL_B: u32 = 2;

fn setup(seed: u64, cfg: &Config) -> NicSetup {
    NicSetup { addr: ADDR_B, seed, rnr_delay_us: cfg.timers.rto_min_us, rnr_retry: 7, retry_limit: 15 }
}

pub(super) const WBASE: u64 = 0x1_0000;
pub(super) const RBASE: u64 = 0x8_0000;
/// The region only the local host may use.
pub(super) const LBASE: u64 = 0x20_0000;

/// One crafted vector: the receiving NIC (connection `LOCAL_B` from
/// `LOCAL_A`, expecting `rx_psn` on every path; a 16 KiB remote-write
/// region at `WBASE`, a 16 KiB receive region at `RBASE`, a 4 KiB local
/// region at `LBASE`), driven by `f` with the vector's generator and the
/// remote-write region's key.
pub(super) fn craft(
    cfg: &Config,
    block: BlockKind,
    seed: u64,
    index: usize,
    desc: &str,
    rx_psn: u32,
    f: &dyn Fn(&mut Craft, &mut Rng, u32),
) -> NicVector {
    let vseed = vector_seed(seed, block, index);
    let paths = cfg.transport.paths_per_conn.min(4) as u8;
    let regs = regions(
        cfg,
        &[(WBASE, 0x4000, Access::REMOTE_WRITE), (RBASE, 0x4000, Access::RECV), (LBASE, 0x1000, Access::LOCAL)],
    );
    let wkey = regs[0].key;
    let conns = vec![ConnParams { local_id: LOCAL_B, remote_id: LOCAL_A, remote: ADDR_A, paths, tx_psn: 0, rx_psn }];
    let rec = Recorder::new(cfg, format!("{}-{index:03}", block.name()), desc, vseed, setup(vseed, cfg), regs, conns);
    let mut c = Craft { rec, t: 1000, tx_ts: 0, gen: 0, udp_port: cfg.transport.udp_port };
    let mut rng = Rng::new(vseed);
    f(&mut c, &mut rng, wkey);
    c.rec.vector
}

/// The crafted `rx` vectors: packets built here, fed to the receiving NIC.
pub fn generate(cfg: &Config, seed: u64) -> Vec<NicVector> {
    let mtu = cfg.transport.mtu;
    let window = cfg.transport.window;
    let mut out = Vec::new();
    let mut push = |desc: &str, rx_psn: u32, f: &dyn Fn(&mut Craft, &mut Rng, u32)| {
        let v = craft(cfg, BlockKind::Rx, seed, out.len(), desc, rx_psn, f);
        out.push(v);
    };
    let bytes = |rng: &mut Rng, n: u32| -> Vec<u8> { (0..n).map(|_| rng.below(256) as u8).collect() };
    let w = |rkey: u32, addr: u64| Placement::Write { rkey, addr };
    let s = |rq_seq: u32, msg_offset: u32| Placement::Send { rq_seq, msg_offset };

    push("a WRITE of two packets on two paths, then a SEND into a posted receive", 100, &|c, rng, k| {
        let d = bytes(rng, mtu + 100);
        c.data(500, LOCAL_B, 0, 100, 0, 0, d.len() as u32, w(k, WBASE), &d[..mtu as usize], None, false, ECN_ECT0);
        c.data(
            500,
            LOCAL_B,
            1,
            100,
            0,
            0,
            d.len() as u32,
            w(k, WBASE + mtu as u64),
            &d[mtu as usize..],
            None,
            true,
            ECN_ECT0,
        );
        c.recv(100, 0, 77, RBASE, 64);
        let m = bytes(rng, 40);
        c.data(500, LOCAL_B, 2, 100, 0, 1, 40, s(0, 0), &m, None, true, ECN_ECT0);
    });
    push("every NACK: NO_CONN, BAD_HDR (path, generation, psn window, stream), ACCESS (rkey, bounds, wrap, receive too short), RNR", 0, &|c, rng, k| {
        let d = bytes(rng, 16);
        c.data(500, 99, 0, 0, 0, 0, 16, w(k, WBASE), &d, None, true, ECN_ECT0);
        c.data(500, LOCAL_B, 7, 0, 0, 0, 16, w(k, WBASE), &d, None, true, ECN_ECT0);
        // A newer generation is adopted (and the packet lands); two behind is stale.
        c.gen = 5;
        c.data(500, LOCAL_B, 0, 0, 0, 0, 16, w(k, WBASE), &d, None, true, ECN_ECT0);
        c.gen = 3;
        c.data(500, LOCAL_B, 0, 1, 0, 1, 16, w(k, WBASE), &d, None, true, ECN_ECT0);
        c.gen = 5;
        c.data(500, LOCAL_B, 0, window + 1, 0, 1, 16, w(k, WBASE), &d, None, true, ECN_ECT0);
        c.data(500, LOCAL_B, 0, 1, 200, 0, 16, w(k, WBASE), &d, None, true, ECN_ECT0);
        c.data(500, LOCAL_B, 0, 1, 0, 1, 16, w(k ^ 0x10, WBASE), &d, None, true, ECN_ECT0);
        c.data(500, LOCAL_B, 0, 1, 0, 1, 16, w(k, WBASE + 0x4000 - 15), &d, None, true, ECN_ECT0);
        c.data(500, LOCAL_B, 0, 1, 0, 1, 16, w(k, WBASE - 1), &d, None, true, ECN_ECT0);
        c.data(500, LOCAL_B, 0, 1, 0, 1, 16, w(k, u64::MAX - 7), &d, None, true, ECN_ECT0);
        c.data(500, LOCAL_B, 0, 1, 1, 0, 16, s(0, 0), &d, None, true, ECN_ECT0);
        c.recv(100, 1, 5, RBASE, 8);
        c.data(500, LOCAL_B, 0, 1, 1, 0, 16, s(0, 0), &d, None, true, ECN_ECT0);
        // Finally accepted: the WRITE ends exactly at the region's last byte.
        c.data(500, LOCAL_B, 0, 1, 0, 1, 16, w(k, WBASE + 0x4000 - 16), &d, None, true, ECN_ECT0);
    });
    push("RNR, then the receive is posted and the retransmission lands", 0, &|c, rng, _| {
        let d = bytes(rng, 300);
        c.data(500, LOCAL_B, 0, 0, 2, 0, 300, s(0, 0), &d, Some(0xabcd), true, ECN_ECT0);
        c.recv(1000, 2, 9, RBASE + 0x100, 512);
        c.data(100_000, LOCAL_B, 0, 0, 2, 0, 300, s(0, 0), &d, Some(0xabcd), true, ECN_ECT0);
    });
    push(
        "a full bitmap: the first psn lost, the next window arrive; one beyond is refused; the hole fills",
        1000,
        &|c, rng, k| {
            let n = window;
            let len = 4 * (n + 1);
            let d = bytes(rng, len);
            for i in 1..=n {
                let off = 4 * i as usize;
                c.data(
                    100,
                    LOCAL_B,
                    0,
                    1000 + i,
                    0,
                    0,
                    len,
                    w(k, WBASE + off as u64),
                    &d[off..off + 4],
                    None,
                    i == n,
                    ECN_ECT0,
                );
            }
            c.data(100, LOCAL_B, 0, 1000 + n + 1, 0, 0, len, w(k, WBASE), &d[..4], None, true, ECN_ECT0);
            c.data(100, LOCAL_B, 0, 1000, 0, 0, len, w(k, WBASE), &d[..4], None, true, ECN_ECT0);
        },
    );
    push("psn wraparound on the receive side, with a duplicate after the wrap", 0xff_fffd, &|c, rng, k| {
        let d = bytes(rng, 6 * 64);
        for i in 0..6u32 {
            let off = 64 * i as usize;
            c.data(
                300,
                LOCAL_B,
                1,
                0xff_fffd + i,
                3,
                0,
                6 * 64,
                w(k, WBASE + 0x100 + off as u64),
                &d[off..off + 64],
                None,
                i == 5,
                ECN_ECT0,
            );
        }
        c.data(300, LOCAL_B, 1, 1, 3, 0, 6 * 64, w(k, WBASE + 0x100 + 256), &d[256..320], None, true, ECN_ECT0);
    });
    push("CE marks: each marked packet is answered with a SACK counting the marks", 0, &|c, rng, k| {
        let d = bytes(rng, 64 * 5);
        for i in 0..5u32 {
            let off = 64 * i as usize;
            let ecn = if i % 2 == 1 { ECN_CE } else { ECN_ECT0 };
            c.data(200, LOCAL_B, 2, i, 0, 0, 320, w(k, WBASE + off as u64), &d[off..off + 64], None, false, ecn);
        }
    });
    push(
        "zero-length WRITE (no key checked), zero-length SEND consuming a receive, WRITE_IMM waiting for its receive",
        0,
        &|c, rng, k| {
            c.data(200, LOCAL_B, 0, 0, 0, 0, 0, w(k ^ 0x30, 0), &[], None, true, ECN_ECT0);
            c.recv(100, 0, 11, RBASE, 16);
            c.data(200, LOCAL_B, 0, 1, 0, 1, 0, s(0, 0), &[], Some(1), true, ECN_ECT0);
            let d = bytes(rng, 24);
            c.data(200, LOCAL_B, 0, 2, 0, 2, 24, w(k, WBASE + 0x200), &d, Some(0x55), true, ECN_ECT0);
            c.recv(100, 0, 12, RBASE + 0x40, 16);
        },
    );
    push("a maximum payload (one MTU) and a payload one byte longer than the MTU (BAD_HDR)", 0, &|c, rng, k| {
        let d = bytes(rng, mtu + 1);
        c.data(200, LOCAL_B, 3, 0, 0, 0, mtu + 1, w(k, WBASE + 0x1000), &d, None, true, ECN_ECT0);
        c.data(200, LOCAL_B, 3, 0, 0, 0, mtu, w(k, WBASE + 0x1000), &d[..mtu as usize], None, true, ECN_ECT0);
    });
    push(
        "a PROBE is answered per active stream; a newer generation is adopted, one behind still accepted",
        40,
        &|c, rng, k| {
            let d = bytes(rng, 32);
            c.data(200, LOCAL_B, 1, 40, 0, 0, 16, w(k, WBASE), &d[..16], None, false, ECN_ECT0);
            c.data(200, LOCAL_B, 1, 41, 1, 0, 16, w(k, WBASE + 16), &d[16..], None, false, ECN_ECT0);
            c.probe(200, LOCAL_B, 1, 42, 1);
            c.gen = 0;
            c.data(200, LOCAL_B, 1, 42, 2, 0, 8, w(k, WBASE + 64), &d[..8], None, true, ECN_ECT0);
            c.probe(200, 1234, 1, 42, 1);
        },
    );
    out
}
