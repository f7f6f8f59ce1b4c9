//! Why a receiver drops a frame before the transport looks at it: the
//! drop reasons of the hardware's `rx_parser` (one `stat_drop_<name>`
//! counter each), and the verdict on a frame as proto's decoder sees it,
//! in those reasons.
//!
//! Defined here, next to the decoder, so that the reference (which writes
//! the `rx_parser` golden vectors), the cycle model (which implements the
//! checks itself, beat by beat) and the fuzzers judge a frame by one rule.
//! The verdict follows the block's contract: the UDP checksum is not
//! checked (the ICRC covers the transport bytes), the UDP destination port
//! is, and damage on the AXI4-Stream (`tuser`, `tkeep` holes,
//! a frame longer than the longest accepted one) comes before anything in
//! the bytes.

use std::fmt;

use crate::error::{DecodeError, Problem};
use crate::headers::Header;
use crate::layouts::{data, udp};
use crate::packet::{decode_frame, Frame, NET_OVERHEAD};

/// Why a frame was dropped, in priority order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DropReason {
    /// `s_axis_tuser` set on a beat of the frame.
    MacError,
    /// A non-last beat without every `tkeep` bit, or a last beat whose
    /// `tkeep` is zero or has holes.
    Tkeep,
    /// No tlast within `86 + MTU` bytes rounded up to whole beats.
    Oversize,
    /// The frame ends before its headers, its IPv4 total length or its ICRC
    /// (proto: `Truncated`, and `ipv4.total_len` beyond the frame).
    Truncated,
    /// Ethertype other than IPv4.
    Ethertype,
    /// IPv4 version, IHL, reserved flag, fragment or protocol.
    IpHeader,
    /// Bad IPv4 header checksum.
    IpChecksum,
    /// IPv4 total length below 28, UDP length against it, or `payload_len`
    /// against the UDP length.
    Length,
    /// UDP destination port other than the transport's.
    UdpPort,
    /// Transport version not 0.
    Version,
    /// Opcode not in the table.
    Opcode,
    /// A reserved transport field not zero.
    Reserved,
    /// Immediate data on WRITE or SEND, or a NACK code not in the table.
    Invalid,
    /// ICRC mismatch.
    Icrc,
}

impl DropReason {
    /// Every reason, in priority order (and port order).
    pub const ALL: [DropReason; 14] = [
        DropReason::MacError,
        DropReason::Tkeep,
        DropReason::Oversize,
        DropReason::Truncated,
        DropReason::Ethertype,
        DropReason::IpHeader,
        DropReason::IpChecksum,
        DropReason::Length,
        DropReason::UdpPort,
        DropReason::Version,
        DropReason::Opcode,
        DropReason::Reserved,
        DropReason::Invalid,
        DropReason::Icrc,
    ];

    /// The counter's name (`stat_drop_<name>`).
    pub fn name(self) -> &'static str {
        match self {
            DropReason::MacError => "mac_error",
            DropReason::Tkeep => "tkeep",
            DropReason::Oversize => "oversize",
            DropReason::Truncated => "truncated",
            DropReason::Ethertype => "ethertype",
            DropReason::IpHeader => "ip_header",
            DropReason::IpChecksum => "ip_checksum",
            DropReason::Length => "length",
            DropReason::UdpPort => "udp_port",
            DropReason::Version => "version",
            DropReason::Opcode => "opcode",
            DropReason::Reserved => "reserved",
            DropReason::Invalid => "invalid",
            DropReason::Icrc => "icrc",
        }
    }

    pub fn from_name(s: &str) -> Option<DropReason> {
        DropReason::ALL.into_iter().find(|r| r.name() == s)
    }

    /// Position in [`DropReason::ALL`] (the bit of the block's `stat` vector).
    pub fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for DropReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// proto's decode errors as drop reasons.
pub fn reason_of(e: &DecodeError) -> DropReason {
    match (e.layout, e.field, e.problem) {
        (_, _, Problem::Truncated { .. }) => DropReason::Truncated,
        ("eth", _, _) => DropReason::Ethertype,
        ("ipv4", "total_len", Problem::LengthMismatch { value, .. }) if value >= 28 => DropReason::Truncated,
        ("ipv4", "checksum", _) => DropReason::IpChecksum,
        ("ipv4", "total_len", _) | ("udp", "length", _) => DropReason::Length,
        ("ipv4", _, _) => DropReason::IpHeader,
        (_, "ver", _) => DropReason::Version,
        (_, _, Problem::UnknownOpcode { .. }) => DropReason::Opcode,
        (_, _, Problem::ReservedSet { .. }) => DropReason::Reserved,
        (_, "icrc", _) => DropReason::Icrc,
        (_, _, Problem::LengthMismatch { .. }) => DropReason::Length,
        _ => DropReason::Invalid,
    }
}

/// The verdict on a whole frame's bytes (no FCS): decoded by proto with
/// the UDP checksum ignored, then the UDP ports (to the transport port, or
/// an answer from it) checked. A data payload over the MTU is not a frame
/// fault: the receiver answers it with a BAD_HDR NACK (spec section 6),
/// so the parser hands its header on (its payload it discards).
/// The returned frame borrows `scratch`, a copy of `frame`.
pub fn frame_verdict<'a>(frame: &[u8], udp_port: u16, scratch: &'a mut Vec<u8>) -> Result<Frame<'a>, DropReason> {
    scratch.clear();
    scratch.extend_from_slice(frame);
    // The block does not check the UDP checksum: "not computed" is what
    // proto then skips as well.
    let at = NET_OVERHEAD - 8 + udp::CHECKSUM.offset;
    if scratch.len() >= at + 2 {
        scratch[at..at + 2].fill(0);
    }
    let f = decode_frame(scratch).map_err(|e| reason_of(&e))?;
    // Data and PROBEs are sent to the transport port; SACKs and NACKs come
    // from it, to the entropy port of the path they answer (spec section 3).
    let answer = matches!(f.header, Header::Sack(_) | Header::Nack(_));
    if f.net.dst_port != udp_port && !(answer && f.net.src_port == udp_port) {
        return Err(DropReason::UdpPort);
    }
    Ok(f)
}

/// The payload the parser hands on with a frame that passed: a data
/// packet's, when it is within the MTU. A control packet has none, and an
/// MTU overrun's is discarded: the receiver answers it BAD_HDR without
/// placing a byte, so nothing downstream buffers more than an MTU.
pub fn handed_payload<'a>(f: &Frame<'a>, mtu: u32) -> &'a [u8] {
    if f.header.opcode().is_data() && f.payload.len() as u64 <= mtu as u64 {
        f.payload
    } else {
        &[]
    }
}

/// How a frame crosses an AXI4-Stream of `beat_bytes`-byte beats: its
/// bytes, packed from lane 0 of beat 0, `tlast` on the beat of the last
/// byte, plus damage.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StreamFrame<'a> {
    pub bytes: &'a [u8],
    /// Byte positions whose `tkeep` bit is cleared (the byte is still
    /// driven on `tdata`).
    pub keep_holes: &'a [u32],
    /// `tuser` (MAC error) is set on the beat holding this byte.
    pub tuser_byte: Option<u32>,
}

/// Bytes of the longest frame the receiver accepts: the headers, an MTU of
/// payload and the ICRC.
pub fn max_frame(mtu: u32) -> usize {
    NET_OVERHEAD + data::LAYOUT.len + mtu as usize + 4
}

/// The verdict on a frame as it crosses the stream (see [`StreamFrame`]).
/// The stream-level faults come first: `tuser`, `tkeep` (a hole on a
/// non-last beat, or a last beat whose kept lanes are empty or not
/// contiguous from lane 0), a beat starting at or past
/// [`max_frame`] (`Oversize`); otherwise the bytes the last beat keeps
/// are judged by [`frame_verdict`].
pub fn stream_verdict<'a>(
    s: &StreamFrame<'_>,
    beat_bytes: usize,
    udp_port: u16,
    mtu: u32,
    scratch: &'a mut Vec<u8>,
) -> Result<Frame<'a>, DropReason> {
    let n = s.bytes.len();
    let beats = n.div_ceil(beat_bytes).max(1);
    // A `tuser_byte` past the frame marks its last beat.
    if s.tuser_byte.is_some() {
        return Err(DropReason::MacError);
    }
    let last = beats - 1;
    let in_last = n - last * beat_bytes;
    let mut last_keep = vec![true; in_last];
    for &h in s.keep_holes {
        let (beat, lane) = (h as usize / beat_bytes, h as usize % beat_bytes);
        if beat < last {
            return Err(DropReason::Tkeep);
        }
        if beat == last && lane < in_last {
            last_keep[lane] = false;
        }
    }
    let kept = last_keep.iter().take_while(|&&k| k).count();
    if kept == 0 || last_keep[kept..].iter().any(|&k| k) {
        return Err(DropReason::Tkeep);
    }
    if last * beat_bytes >= max_frame(mtu) {
        return Err(DropReason::Oversize);
    }
    frame_verdict(&s.bytes[..last * beat_bytes + kept], udp_port, scratch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::headers::{NackCode, NackHeader, ProbeHeader};
    use crate::packet::{encode_frame, NetHeaders};

    fn probe() -> Vec<u8> {
        let h = Header::Probe(ProbeHeader { tx_ts: 1, dst_conn: 2, path_id: 0, path_gen: 0, path_psn: 3 });
        let mut f = Vec::new();
        encode_frame(&NetHeaders::default(), &h, &[], &mut f).unwrap();
        f
    }

    #[test]
    fn indexes_follow_the_priority_order_and_names_round_trip() {
        for (i, r) in DropReason::ALL.into_iter().enumerate() {
            assert_eq!(r.index(), i);
            assert_eq!(DropReason::from_name(r.name()), Some(r));
        }
    }

    #[test]
    fn stream_damage_comes_first_and_a_short_last_beat_is_the_frame_end() {
        let f = probe();
        let mut scratch = Vec::new();
        let port = crate::packet::DEFAULT_UDP_PORT;
        let ok = StreamFrame { bytes: &f, keep_holes: &[], tuser_byte: None };
        assert!(stream_verdict(&ok, 8, port, 1024, &mut scratch).is_ok());
        let hole = StreamFrame { keep_holes: &[3], ..ok.clone() };
        assert_eq!(stream_verdict(&hole, 8, port, 1024, &mut scratch).err(), Some(DropReason::Tkeep));
        let user = StreamFrame { tuser_byte: Some(f.len() as u32 - 1), ..ok.clone() };
        assert_eq!(stream_verdict(&user, 8, port, 1024, &mut scratch).err(), Some(DropReason::MacError));
        // The last byte's keep cleared: one byte short, the ICRC is cut.
        let end = [f.len() as u32 - 1];
        let short = StreamFrame { keep_holes: &end, ..ok.clone() };
        assert_eq!(stream_verdict(&short, 8, port, 1024, &mut scratch).err(), Some(DropReason::Truncated));
        assert_eq!(frame_verdict(&f, port ^ 1, &mut scratch).err(), Some(DropReason::UdpPort));
    }

    #[test]
    fn answers_come_from_the_transport_port_to_any_port_and_nothing_else_does() {
        let port = crate::packet::DEFAULT_UDP_PORT;
        let nack = Header::Nack(NackHeader {
            code: NackCode::Rnr,
            dst_conn: 2,
            path_id: 1,
            path_gen: 0,
            path_psn: 5,
            stream_id: 0,
            msn: 0,
            echo_ts: 9,
        });
        let probe = Header::Probe(ProbeHeader { tx_ts: 1, dst_conn: 2, path_id: 0, path_gen: 0, path_psn: 3 });
        let frame = |h: &Header, src_port: u16, dst_port: u16| {
            let mut f = Vec::new();
            encode_frame(&NetHeaders { src_port, dst_port, ..NetHeaders::default() }, h, &[], &mut f).unwrap();
            f
        };
        let mut scratch = Vec::new();
        let mut verdict = |f: &[u8]| frame_verdict(f, port, &mut scratch).err();
        // An answer to the path's entropy port, from the transport port.
        assert_eq!(verdict(&frame(&nack, port, 0xc123)), None);
        // Not from the transport port, or not an answer: dropped.
        assert_eq!(verdict(&frame(&nack, port ^ 1, 0xc123)), Some(DropReason::UdpPort));
        assert_eq!(verdict(&frame(&probe, port, 0xc123)), Some(DropReason::UdpPort));
        assert_eq!(verdict(&frame(&probe, 0xc123, port)), None);
    }
}
