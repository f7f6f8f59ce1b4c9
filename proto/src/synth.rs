//! A short, realistic exchange between two hosts, built from the typed
//! headers, for people to open in Wireshark and for the tools' tests.
//!
//! Host A (10.0.0.1) sends to host B (10.0.0.2) over one connection with
//! four paths, each its own UDP source port. The capture point is B's switch
//! port, so a packet lost in the fabric is absent from the capture and only
//! its SACK hole and retransmission show. B's SACKs and NACKs for a path
//! reverse the path's UDP 5-tuple (from the transport port to the path's
//! source port), so symmetric ECMP brings them back over the same path and
//! `udp.port == 52431` shows both directions of one path.
//!
//! B behaves as the reference receiver does: a NACKed packet is not
//! accepted (its psn stays a hole), a PROBE draws one SACK per active
//! stream, and an ACCESS NACK ends the connection, so it comes last.
//!
//! Everything is fixed (addresses, timestamps, payload bytes), so the file
//! is the same on every run and tests can compare against it.

use std::collections::BTreeSet;
use std::io::Write;

use crate::error::EncodeError;
use crate::headers::{Bitmap256, DataHeader, Flags, Header, NackCode, NackHeader, Placement, ProbeHeader, SackHeader};
use crate::packet::{encode_frame, NetHeaders, DEFAULT_UDP_PORT, ECN_CE, ECN_ECT0};
use crate::pcap::{PcapError, PcapWriter};

/// Connection id of the connection at A (carried by B's SACKs and NACKs).
pub const CONN_AT_A: u32 = 0x000a01;
/// Connection id of the connection at B (carried by A's data and probes).
pub const CONN_AT_B: u32 = 0x000b07;
/// UDP source port of each path: the path's ECMP entropy.
pub const PATH_SPORTS: [u16; 4] = [49_217, 52_431, 57_005, 61_248];
pub const RKEY: u32 = 0x4d52_0001;
/// A key B does not know: the WRITE using it draws an ACCESS NACK.
pub const BAD_RKEY: u32 = 0xdead_beef;
/// Base of the memory region of `RKEY` at B.
pub const REGION_BASE: u64 = 0x0000_7f3a_2000_0000;
/// 2026-01-01T00:00:00Z: the capture's first second.
pub const EPOCH_MICROS: u64 = 1_767_225_600_000_000;
/// One-way fabric latency between A and the capture point.
const ONE_WAY_NS: u64 = 2_000;
/// Timestamp unit of tx_ts and echo_ts (the default config's ts_unit_ns).
const TS_UNIT_NS: u64 = 64;
/// B's fair-share hint while A is its only sender: all of the line rate.
const FULL_RATE: u16 = 0xffff;
/// Payload MTU of the exchange: the smallest the protocol allows, so the
/// multi-packet messages stay short in a packet list.
const MTU: u32 = 1024;
const WRITE_STREAM: u8 = 0;
const SEND_STREAM: u8 = 1;

/// One frame of the capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SynthPacket {
    /// Microseconds since the epoch at the capture point.
    pub ts_micros: u64,
    pub frame: Vec<u8>,
    /// What the packet is doing in the story, for test failures and demos.
    pub note: &'static str,
}

/// The frames of the exchange, in capture order.
pub fn exchange() -> Result<Vec<SynthPacket>, EncodeError> {
    let mut x = Exchange::new();
    let (ws, ss) = (WRITE_STREAM, SEND_STREAM);
    let som_eom = Flags { som: true, eom: true, ..Flags::default() };

    // A 3000-byte WRITE sprayed over paths 0, 1, 2; the last asks for a SACK.
    let last = x.write_message(ws, 0, 3000, RKEY, REGION_BASE, &[0, 1, 2], None, "WRITE, sprayed")?;
    x.completed[ws as usize] = 1;
    x.sack(2, ws, last, "SACK on ACKREQ: WRITE msn 0 complete")?;

    let last = x.write_message(ws, 1, 256, RKEY, REGION_BASE + 0x1000, &[3], Some(0xfeed_0001), "WRITE_IMM")?;
    x.completed[ws as usize] = 2;
    x.sack(3, ws, last, "SACK: WRITE_IMM complete")?;

    let last = x.send_message(ss, 0, 1500, 0, &[0, 1], None, "SEND into posted receive 0")?;
    x.completed[ss as usize] = 1;
    x.sack(1, ss, last, "SACK: SEND msn 0 complete")?;

    let last = x.send_message(ss, 1, 64, 1, &[2], Some(0x1234_5678), "SEND_IMM into posted receive 1")?;
    x.completed[ss as usize] = 2;
    x.sack(2, ss, last, "SACK: SEND_IMM complete")?;

    // A 4096-byte WRITE whose first packet (path 3) is lost in the fabric.
    let msg_len = 4 * MTU;
    let mut first = None;
    let mut last = Sent::default();
    for (i, &path) in [3u8, 0, 1, 3].iter().enumerate() {
        let off = i as u32 * MTU;
        let flags = Flags { som: i == 0, eom: i == 3, ackreq: i == 3, ..Flags::default() };
        let h = x.data_header(
            path,
            flags,
            ws,
            2,
            msg_len,
            Placement::Write { rkey: RKEY, addr: REGION_BASE + 0x2000 + off as u64 },
            None,
            MTU as u16,
        );
        let payload = payload("WRITE", ws, 2, off, MTU);
        if i == 0 {
            x.lose();
            first = Some(h);
        } else {
            last = x.a_sends(h, &payload, ECN_ECT0, "WRITE, sprayed")?;
        }
    }
    x.sack(3, ws, last, "SACK with a hole: psn 1 on path 3 missing")?;
    if let Some(Header::Data(mut d)) = first {
        // Same identity (path_id, path_psn), RETX set, a fresh timestamp.
        d.flags.retx = true;
        d.flags.ackreq = true;
        d.tx_ts = x.tx_ts();
        let retx = Header::Data(d);
        let last = x.a_sends(retx, &payload("WRITE", ws, 2, 0, MTU), ECN_ECT0, "retransmission of the lost packet")?;
        x.completed[ws as usize] = 3;
        x.sack(3, ws, last, "SACK: hole filled, WRITE msn 2 complete")?;
    }

    // A WRITE marked CE by a congested switch: B answers at once with ecn_cnt.
    let h =
        x.data_header(2, som_eom, ws, 3, 1024, Placement::Write { rkey: RKEY, addr: REGION_BASE + 0x3000 }, None, 1024);
    let last = x.a_sends(h, &payload("WRITE", ws, 3, 0, 1024), ECN_CE, "WRITE marked CE")?;
    x.completed[ws as usize] = 4;
    x.sack(2, ws, last, "SACK on a CE mark, with ecn_cnt")?;

    // A SEND with no receive posted at rq_seq 2.
    let h = x.data_header(0, som_eom, ss, 2, 512, Placement::Send { rq_seq: 2, msg_offset: 0 }, None, 512);
    let last = x.a_sends(h, &payload("SEND", ss, 2, 0, 512), ECN_ECT0, "SEND with no receive posted")?;
    x.nack(NackCode::Rnr, ss, last, "RNR NACK")?;

    // Path 1 has gone quiet: A probes it; B answers with the path's SACK
    // once per active stream, so A learns every completed_msn.
    let tx_ts = x.tx_ts();
    let probe = ProbeHeader { tx_ts, dst_conn: CONN_AT_B, path_id: 1, path_gen: 0, path_psn: x.next_psn[1] };
    let last = x.a_sends(Header::Probe(probe), &[], ECN_ECT0, "PROBE")?;
    x.sack(1, ws, last, "SACK answering the PROBE (stream 0)")?;
    x.sack(1, ss, last, "SACK answering the PROBE (stream 1)")?;

    // A WRITE with a key B does not know.
    let h = x.data_header(1, som_eom, ws, 4, 256, Placement::Write { rkey: BAD_RKEY, addr: REGION_BASE }, None, 256);
    let last = x.a_sends(h, &payload("WRITE", ws, 4, 0, 256), ECN_ECT0, "WRITE with an unknown rkey")?;
    x.nack(NackCode::Access, ws, last, "ACCESS NACK")?;
    Ok(x.out)
}

/// Writes the exchange as a pcap.
pub fn write_pcap<W: Write>(out: W) -> Result<W, PcapError> {
    let packets = exchange().map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
    let mut w = PcapWriter::new(out)?;
    for p in &packets {
        w.write(p.ts_micros, &p.frame)?;
    }
    w.into_inner()
}

/// The triggering packet a SACK or NACK answers.
#[derive(Debug, Clone, Copy, Default)]
struct Sent {
    path: u8,
    psn: u32,
    msn: u32,
    tx_ts: u16,
}

/// The exchange being built: the clock, A's per-path sequence numbers and
/// B's per-path receive state, from which the SACK fields follow.
struct Exchange {
    now_ns: u64,
    out: Vec<SynthPacket>,
    next_psn: [u32; 4],
    received: [BTreeSet<u32>; 4],
    ce_since_sack: [u8; 4],
    completed: [u32; 2],
    ident: [u16; 2],
}

impl Exchange {
    fn new() -> Exchange {
        Exchange {
            now_ns: 10_000,
            out: Vec::new(),
            next_psn: [0; 4],
            received: Default::default(),
            ce_since_sack: [0; 4],
            completed: [0; 2],
            ident: [0x1000, 0x2000],
        }
    }

    /// A's timestamp for a packet that reaches the capture point now.
    fn tx_ts(&self) -> u16 {
        ((self.now_ns - ONE_WAY_NS) / TS_UNIT_NS) as u16
    }

    #[allow(clippy::too_many_arguments)]
    fn data_header(
        &mut self,
        path: u8,
        flags: Flags,
        stream_id: u8,
        msn: u32,
        msg_len: u32,
        place: Placement,
        imm: Option<u32>,
        payload_len: u16,
    ) -> Header {
        let path_psn = self.next_psn[path as usize];
        self.next_psn[path as usize] += 1;
        Header::Data(DataHeader {
            flags,
            payload_len,
            dst_conn: CONN_AT_B,
            path_id: path,
            path_psn,
            path_gen: 0,
            stream_id,
            msn,
            msg_len,
            place,
            tx_ts: self.tx_ts(),
            imm,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn write_message(
        &mut self,
        stream: u8,
        msn: u32,
        msg_len: u32,
        rkey: u32,
        addr: u64,
        paths: &[u8],
        imm: Option<u32>,
        note: &'static str,
    ) -> Result<Sent, EncodeError> {
        self.message(stream, msn, msg_len, paths, imm, note, |off| Placement::Write { rkey, addr: addr + off as u64 })
    }

    #[allow(clippy::too_many_arguments)]
    fn send_message(
        &mut self,
        stream: u8,
        msn: u32,
        msg_len: u32,
        rq_seq: u32,
        paths: &[u8],
        imm: Option<u32>,
        note: &'static str,
    ) -> Result<Sent, EncodeError> {
        self.message(stream, msn, msg_len, paths, imm, note, |msg_offset| Placement::Send { rq_seq, msg_offset })
    }

    /// One message cut into MTU packets, packet k on `paths[k]`; the last
    /// asks for a SACK.
    #[allow(clippy::too_many_arguments)]
    fn message(
        &mut self,
        stream: u8,
        msn: u32,
        msg_len: u32,
        paths: &[u8],
        imm: Option<u32>,
        note: &'static str,
        place: impl Fn(u32) -> Placement,
    ) -> Result<Sent, EncodeError> {
        let mut last = Sent::default();
        for (k, &path) in paths.iter().enumerate() {
            let off = k as u32 * MTU;
            let len = (msg_len - off).min(MTU);
            let end = k + 1 == paths.len();
            let flags = Flags { som: k == 0, eom: end, ackreq: end, se: end && imm.is_some(), retx: false };
            let h = self.data_header(path, flags, stream, msn, msg_len, place(off), imm, len as u16);
            let op = if matches!(place(0), Placement::Write { .. }) { "WRITE" } else { "SEND" };
            last = self.a_sends(h, &payload(op, stream, msn, off, len), ECN_ECT0, note)?;
        }
        Ok(last)
    }

    /// A packet lost between A and the capture point: it used its psn and
    /// left no frame.
    fn lose(&mut self) {
        self.now_ns += 1_000;
    }

    fn a_sends(&mut self, h: Header, payload: &[u8], ecn: u8, note: &'static str) -> Result<Sent, EncodeError> {
        self.now_ns += 1_000;
        let path = h.path_id();
        let (psn, msn, tx_ts) = match h {
            Header::Data(d) => (d.path_psn, d.msn, d.tx_ts),
            Header::Probe(p) => (p.path_psn, 0, p.tx_ts),
            _ => (0, 0, 0),
        };
        if h.opcode().is_data() {
            self.received[path as usize].insert(psn);
            if ecn == ECN_CE {
                self.ce_since_sack[path as usize] += 1;
            }
        }
        let net = NetHeaders {
            src_mac: [0x02, 0, 0, 0, 0, 0x0a],
            dst_mac: [0x02, 0, 0, 0, 0, 0x0b],
            src_ip: [10, 0, 0, 1],
            dst_ip: [10, 0, 0, 2],
            ecn,
            ident: self.bump_ident(0),
            src_port: PATH_SPORTS[path as usize],
            ..NetHeaders::default()
        };
        self.push(&net, &h, payload, note)?;
        Ok(Sent { path, psn, msn, tx_ts })
    }

    fn b_sends(&mut self, h: Header, note: &'static str) -> Result<(), EncodeError> {
        // B answers a microsecond after the packet that asked.
        self.now_ns += 1_000;
        let net = NetHeaders {
            src_mac: [0x02, 0, 0, 0, 0, 0x0b],
            dst_mac: [0x02, 0, 0, 0, 0, 0x0a],
            src_ip: [10, 0, 0, 2],
            dst_ip: [10, 0, 0, 1],
            ident: self.bump_ident(1),
            src_port: DEFAULT_UDP_PORT,
            dst_port: PATH_SPORTS[h.path_id() as usize],
            ..NetHeaders::default()
        };
        self.push(&net, &h, &[], note)?;
        // Leave a gap before A's next packet so the list reads as a dialogue.
        self.now_ns += 1_000;
        Ok(())
    }

    fn push(&mut self, net: &NetHeaders, h: &Header, payload: &[u8], note: &'static str) -> Result<(), EncodeError> {
        let mut frame = Vec::new();
        encode_frame(net, h, payload, &mut frame)?;
        self.out.push(SynthPacket { ts_micros: EPOCH_MICROS + self.now_ns / 1000, frame, note });
        Ok(())
    }

    fn bump_ident(&mut self, host: usize) -> u16 {
        self.ident[host] = self.ident[host].wrapping_add(1);
        self.ident[host]
    }

    /// B's SACK for one path, from what B has received on it.
    fn sack(&mut self, path: u8, stream: u8, answers: Sent, note: &'static str) -> Result<(), EncodeError> {
        let got = &self.received[path as usize];
        let cum_psn = (0..).find(|p| !got.contains(p)).unwrap_or(0);
        let mut bitmap = Bitmap256::default();
        for &p in got.range(cum_psn + 1..cum_psn + 1 + Bitmap256::BITS) {
            bitmap.set(p - cum_psn - 1);
        }
        let h = SackHeader {
            rate_hint: FULL_RATE,
            dst_conn: CONN_AT_A,
            path_id: path,
            path_gen: 0,
            cum_psn,
            stream_id: stream,
            completed_msn: self.completed[stream as usize],
            echo_ts: answers.tx_ts,
            ecn_cnt: std::mem::take(&mut self.ce_since_sack[path as usize]),
            bitmap,
        };
        self.b_sends(Header::Sack(h), note)
    }

    fn nack(&mut self, code: NackCode, stream: u8, answers: Sent, note: &'static str) -> Result<(), EncodeError> {
        // A refused packet is not accepted: its psn stays a hole.
        self.received[answers.path as usize].remove(&answers.psn);
        let h = NackHeader {
            code,
            dst_conn: CONN_AT_A,
            path_id: answers.path,
            path_gen: 0,
            path_psn: answers.psn,
            stream_id: stream,
            msn: answers.msn,
            echo_ts: answers.tx_ts,
        };
        self.b_sends(Header::Nack(h), note)
    }
}

/// Payload bytes that say what they are in a hex dump.
fn payload(op: &str, stream: u8, msn: u32, offset: u32, len: u32) -> Vec<u8> {
    let tag = format!("[{op} stream {stream} msn {msn}] ");
    (offset..offset + len).map(|i| tag.as_bytes()[i as usize % tag.len()]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::decode_frame;

    #[test]
    fn every_frame_decodes_and_the_story_is_there() {
        let pkts = exchange().unwrap();
        let hdrs: Vec<Header> = pkts.iter().map(|p| decode_frame(&p.frame).unwrap().header).collect();
        let ports: BTreeSet<(u16, u16)> = pkts
            .iter()
            .map(|p| decode_frame(&p.frame).unwrap().net)
            .map(|n| (n.src_port.min(n.dst_port), n.src_port.max(n.dst_port)))
            .collect();
        let paths: BTreeSet<(u16, u16)> = PATH_SPORTS.iter().map(|&s| (DEFAULT_UDP_PORT, s)).collect();
        assert_eq!(ports, paths, "each path is one port pair, both directions");
        let data = |pred: &dyn Fn(&DataHeader) -> bool| hdrs.iter().any(|h| matches!(h, Header::Data(d) if pred(d)));
        for op in crate::Opcode::ALL {
            assert!(hdrs.iter().any(|h| h.opcode() == op), "{} missing", op.name());
        }
        assert!(data(&|d| d.flags.retx));
        assert!(hdrs.iter().any(|h| matches!(h, Header::Sack(s) if s.ecn_cnt > 0)));
        assert!(hdrs.iter().any(|h| matches!(h, Header::Sack(s) if !s.bitmap.is_empty())));
        for code in [NackCode::Rnr, NackCode::Access] {
            assert!(hdrs.iter().any(|h| matches!(h, Header::Nack(n) if n.code == code)));
        }
        assert!(pkts.windows(2).all(|w| w[0].ts_micros < w[1].ts_micros), "timestamps must rise");
        assert_eq!(pkts, exchange().unwrap(), "deterministic");
    }

    #[test]
    fn the_hole_is_the_lost_packet() {
        let pkts = exchange().unwrap();
        let hole = pkts.iter().find(|p| p.note.starts_with("SACK with a hole")).unwrap();
        let Header::Sack(s) = decode_frame(&hole.frame).unwrap().header else { panic!("not a SACK") };
        assert_eq!((s.path_id, s.cum_psn, s.bitmap.count(), s.bitmap.highest()), (3, 1, 1, Some(0)));
        let retx = pkts.iter().find(|p| p.note.starts_with("retransmission")).unwrap();
        let Header::Data(d) = decode_frame(&retx.frame).unwrap().header else { panic!("not data") };
        assert_eq!((d.path_id, d.path_psn, d.flags.retx), (3, 1, true));
    }
}
