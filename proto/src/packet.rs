//! Whole packets: the transport datagram (header, payload, ICRC) that rides
//! in UDP, and the Ethernet/IPv4/UDP frame around it, with the IPv4, UDP and
//! ICRC checks.

use crate::error::{DecodeError, EncodeError, Problem};
use crate::field::Layout;
use crate::headers::Header;
use crate::layouts::{eth, ipv4, udp, ICRC_LEN};

/// CRC-32 (IEEE 802.3 polynomial, reflected, as Ethernet and RoCEv2 use)
/// over the transport header and payload: the definition.
/// [`icrc`] computes the same value faster and is what the codec uses.
pub const ICRC: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISO_HDLC);

/// The ICRC of `bytes` (= `ICRC.checksum(bytes)`), with the SIMD CRC-32 of
/// `crc32fast`: the software reference over UDP computes it twice per
/// packet, and the byte-table version was its largest cost.
pub fn icrc(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

pub const ETHERTYPE_IPV4: u16 = 0x0800;
pub const IPPROTO_UDP: u8 = 17;
/// Default UDP destination port of the transport.
pub const DEFAULT_UDP_PORT: u16 = 4797;
/// Bytes of Ethernet + IPv4 + UDP headers in front of the transport header.
pub const NET_OVERHEAD: usize = 14 + 20 + 8;

/// IP ECN codepoints.
pub const ECN_NOT_ECT: u8 = 0;
pub const ECN_ECT0: u8 = 2;
pub const ECN_CE: u8 = 3;

/// A decoded datagram: the header and a view of its payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Datagram<'a> {
    pub header: Header,
    pub payload: &'a [u8],
}

/// Bytes the datagram of `header` with `payload_len` payload bytes takes.
pub fn datagram_len(header: &Header, payload_len: usize) -> usize {
    header.len() + payload_len + ICRC_LEN
}

/// Appends header, payload and ICRC to `out`. The header's own payload_len
/// must match the payload given.
pub fn encode_datagram(header: &Header, payload: &[u8], out: &mut Vec<u8>) -> Result<(), EncodeError> {
    if header.payload_len() != payload.len() {
        return Err(EncodeError {
            layout: "data",
            field: "payload_len",
            value: header.payload_len() as u64,
            why: "does not match the payload given",
        });
    }
    let start = out.len();
    out.resize(start + header.len(), 0);
    header.encode(&mut out[start..])?;
    out.extend_from_slice(payload);
    let crc = icrc(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
    Ok(())
}

/// Decodes a UDP payload: header, payload and ICRC. Offsets in errors count
/// from the start of `buf`.
pub fn decode_datagram(buf: &[u8]) -> Result<Datagram<'_>, DecodeError> {
    let header = Header::decode(buf)?;
    let layout = header.opcode().layout();
    let have = buf.len();
    let body = have.saturating_sub(layout.len);
    if body < ICRC_LEN {
        return Err(DecodeError {
            layout: layout.name,
            field: "icrc",
            offset: have,
            problem: Problem::Truncated { need: layout.len + ICRC_LEN, have },
        });
    }
    let payload_len = body - ICRC_LEN;
    if header.payload_len() != payload_len {
        let field = layout.field("payload_len").map_or("payload", |f| f.name);
        return Err(DecodeError {
            layout: layout.name,
            field,
            offset: layout.field("payload_len").map_or(layout.len, |f| f.offset),
            problem: Problem::LengthMismatch { value: header.payload_len() as u64, actual: payload_len as u64 },
        });
    }
    let icrc_at = have - ICRC_LEN;
    let found = u32::from_be_bytes(buf[icrc_at..].try_into().expect("4 bytes"));
    let expected = icrc(&buf[..icrc_at]);
    if found != expected {
        return Err(DecodeError {
            layout: layout.name,
            field: "icrc",
            offset: icrc_at,
            problem: Problem::BadChecksum { found: found as u64, expected: expected as u64 },
        });
    }
    Ok(Datagram { header, payload: &buf[layout.len..icrc_at] })
}

/// The addressing of one frame: what the Ethernet, IPv4 and UDP headers say
/// beyond lengths and checksums.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct NetHeaders {
    pub dst_mac: [u8; 6],
    pub src_mac: [u8; 6],
    pub src_ip: [u8; 4],
    pub dst_ip: [u8; 4],
    pub dscp: u8,
    pub ecn: u8,
    pub ident: u16,
    pub ttl: u8,
    pub src_port: u16,
    pub dst_port: u16,
}

impl Default for NetHeaders {
    fn default() -> Self {
        NetHeaders {
            dst_mac: [0x02, 0, 0, 0, 0, 2],
            src_mac: [0x02, 0, 0, 0, 0, 1],
            src_ip: [10, 0, 0, 1],
            dst_ip: [10, 0, 0, 2],
            dscp: 0,
            ecn: ECN_ECT0,
            ident: 0,
            ttl: 64,
            src_port: 49152,
            dst_port: DEFAULT_UDP_PORT,
        }
    }
}

/// A decoded Ethernet frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<'a> {
    pub net: NetHeaders,
    pub header: Header,
    pub payload: &'a [u8],
}

/// RFC 1071 one's-complement sum, folded, not inverted.
fn ones_sum(mut acc: u32, bytes: &[u8]) -> u32 {
    let mut chunks = bytes.chunks_exact(2);
    for c in &mut chunks {
        acc += u16::from_be_bytes([c[0], c[1]]) as u32;
    }
    if let [last] = chunks.remainder() {
        acc += (*last as u32) << 8;
    }
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc
}

/// IPv4 header checksum of a 20-byte header whose checksum field is zero.
pub fn ipv4_checksum(hdr: &[u8]) -> u16 {
    !(ones_sum(0, hdr) as u16)
}

/// UDP checksum over the IPv4 pseudo-header and the datagram (whose checksum
/// field is zero). Zero is sent as 0xffff, since 0 means "no checksum".
pub fn udp_checksum(src_ip: [u8; 4], dst_ip: [u8; 4], udp: &[u8]) -> u16 {
    let sum = ones_sum(ones_sum(0, &pseudo_header(src_ip, dst_ip, udp.len())), udp);
    match !(sum as u16) {
        0 => 0xffff,
        c => c,
    }
}

/// Appends a whole Ethernet frame (no FCS) to `out`.
pub fn encode_frame(net: &NetHeaders, header: &Header, payload: &[u8], out: &mut Vec<u8>) -> Result<(), EncodeError> {
    let mut dgram = Vec::with_capacity(datagram_len(header, payload.len()));
    encode_datagram(header, payload, &mut dgram)?;
    wrap_datagram(net, &dgram, out)
}

/// Appends the Ethernet frame (no FCS) that carries the UDP payload
/// `dgram` as it is (transport header, payload and ICRC, well formed or
/// not), with `net`'s addresses, ports and ECN, consistent lengths and
/// both checksums.
pub fn wrap_datagram(net: &NetHeaders, dgram: &[u8], out: &mut Vec<u8>) -> Result<(), EncodeError> {
    let start = out.len();
    out.resize(start + NET_OVERHEAD, 0);
    out.extend_from_slice(dgram);
    let udp_len = out.len() - start - 14 - 20;
    let ip_len = udp_len + 20;
    if ip_len > u16::MAX as usize {
        return Err(EncodeError { layout: "ipv4", field: "total_len", value: ip_len as u64, why: "frame too long" });
    }
    let frame = &mut out[start..];
    let (e, rest) = frame.split_at_mut(14);
    eth::DST_MAC.set(e, u64_of(&net.dst_mac));
    eth::SRC_MAC.set(e, u64_of(&net.src_mac));
    eth::ETHERTYPE.set(e, ETHERTYPE_IPV4 as u64);
    let (ip, u) = rest.split_at_mut(20);
    ipv4::VERSION.set(ip, 4);
    ipv4::IHL.set(ip, 5);
    ipv4::DSCP.set(ip, net.dscp as u64 & 0x3f);
    ipv4::ECN.set(ip, net.ecn as u64 & 3);
    ipv4::TOTAL_LEN.set(ip, ip_len as u64);
    ipv4::IDENT.set(ip, net.ident as u64);
    ipv4::DF.set(ip, 1);
    ipv4::TTL.set(ip, net.ttl as u64);
    ipv4::PROTOCOL.set(ip, IPPROTO_UDP as u64);
    ipv4::SRC_IP.set(ip, u32::from_be_bytes(net.src_ip) as u64);
    ipv4::DST_IP.set(ip, u32::from_be_bytes(net.dst_ip) as u64);
    let c = ipv4_checksum(ip);
    ipv4::CHECKSUM.set(ip, c as u64);
    udp::SRC_PORT.set(u, net.src_port as u64);
    udp::DST_PORT.set(u, net.dst_port as u64);
    udp::LENGTH.set(u, udp_len as u64);
    let c = udp_checksum(net.src_ip, net.dst_ip, u);
    udp::CHECKSUM.set(u, c as u64);
    Ok(())
}

fn u64_of(b: &[u8]) -> u64 {
    b.iter().fold(0, |a, &x| (a << 8) | x as u64)
}

fn need(layout: &Layout, field: &str, base: usize, need: usize, have: usize) -> Result<(), DecodeError> {
    if have < need {
        return Err(DecodeError {
            layout: layout.name,
            field: layout.field(field).map_or("header", |f| f.name),
            offset: base,
            problem: Problem::Truncated { need, have },
        });
    }
    Ok(())
}

fn bad(layout: &Layout, field: &str, offset: usize, problem: Problem) -> DecodeError {
    DecodeError { layout: layout.name, field: layout.field(field).map_or("header", |f| f.name), offset, problem }
}

/// Decodes an Ethernet frame (no FCS; bytes after the IPv4 total length are
/// padding and ignored). Offsets in errors count from the frame's start.
pub fn decode_frame(frame: &[u8]) -> Result<Frame<'_>, DecodeError> {
    let have = frame.len();
    need(&eth::LAYOUT, "dst_mac", 0, 14, have)?;
    let et = eth::ETHERTYPE.get(frame);
    if et != ETHERTYPE_IPV4 as u64 {
        return Err(bad(&eth::LAYOUT, "ethertype", 12, Problem::Unsupported { value: et }));
    }
    let ip = &frame[14..];
    need(&ipv4::LAYOUT, "version", 14, 14 + 20, have)?;
    let at = |f: &crate::field::Field| 14 + f.offset;
    let v = ipv4::VERSION.get(ip);
    if v != 4 {
        return Err(bad(&ipv4::LAYOUT, "version", at(&ipv4::VERSION), Problem::Unsupported { value: v }));
    }
    let ihl = ipv4::IHL.get(ip);
    if ihl != 5 {
        return Err(bad(&ipv4::LAYOUT, "ihl", at(&ipv4::IHL), Problem::Unsupported { value: ihl }));
    }
    let total = ipv4::TOTAL_LEN.get(ip) as usize;
    if total < 28 || total > ip.len() {
        return Err(bad(
            &ipv4::LAYOUT,
            "total_len",
            at(&ipv4::TOTAL_LEN),
            Problem::LengthMismatch { value: total as u64, actual: ip.len() as u64 },
        ));
    }
    let r = ipv4::FLAG_RESERVED.get(ip);
    if r != 0 {
        return Err(bad(&ipv4::LAYOUT, "flag_reserved", at(&ipv4::FLAG_RESERVED), Problem::ReservedSet { value: r }));
    }
    let frag = (ipv4::MF.get(ip) << 13) | ipv4::FRAG_OFFSET.get(ip);
    if frag != 0 {
        return Err(bad(&ipv4::LAYOUT, "frag_offset", at(&ipv4::MF), Problem::Unsupported { value: frag }));
    }
    let p = ipv4::PROTOCOL.get(ip);
    if p != IPPROTO_UDP as u64 {
        return Err(bad(&ipv4::LAYOUT, "protocol", at(&ipv4::PROTOCOL), Problem::Unsupported { value: p }));
    }
    let sum = ones_sum(0, &ip[..20]);
    if sum != 0xffff {
        let found = ipv4::CHECKSUM.get(ip);
        let mut copy = [0u8; 20];
        copy.copy_from_slice(&ip[..20]);
        ipv4::CHECKSUM.set(&mut copy, 0);
        let expected = ipv4_checksum(&copy) as u64;
        return Err(bad(&ipv4::LAYOUT, "checksum", at(&ipv4::CHECKSUM), Problem::BadChecksum { found, expected }));
    }
    let u = &ip[20..total];
    let ubase = 14 + 20;
    let ulen = udp::LENGTH.get(u) as usize;
    if ulen != u.len() {
        return Err(bad(
            &udp::LAYOUT,
            "length",
            ubase + udp::LENGTH.offset,
            Problem::LengthMismatch { value: ulen as u64, actual: u.len() as u64 },
        ));
    }
    let found = udp::CHECKSUM.get(u);
    let src_ip = (ipv4::SRC_IP.get(ip) as u32).to_be_bytes();
    let dst_ip = (ipv4::DST_IP.get(ip) as u32).to_be_bytes();
    if found != 0 {
        let sum = ones_sum(ones_sum(0, &pseudo_header(src_ip, dst_ip, ulen)), u);
        if sum != 0xffff {
            let mut copy = u.to_vec();
            udp::CHECKSUM.set(&mut copy, 0);
            let expected = udp_checksum(src_ip, dst_ip, &copy) as u64;
            return Err(bad(
                &udp::LAYOUT,
                "checksum",
                ubase + udp::CHECKSUM.offset,
                Problem::BadChecksum { found, expected },
            ));
        }
    }
    let d = decode_datagram(&u[8..]).map_err(|e| e.shifted(NET_OVERHEAD))?;
    let mac = |f: &crate::field::Field| {
        let v = f.get(frame).to_be_bytes();
        [v[2], v[3], v[4], v[5], v[6], v[7]]
    };
    Ok(Frame {
        net: NetHeaders {
            dst_mac: mac(&eth::DST_MAC),
            src_mac: mac(&eth::SRC_MAC),
            src_ip,
            dst_ip,
            dscp: ipv4::DSCP.get(ip) as u8,
            ecn: ipv4::ECN.get(ip) as u8,
            ident: ipv4::IDENT.get(ip) as u16,
            ttl: ipv4::TTL.get(ip) as u8,
            src_port: udp::SRC_PORT.get(u) as u16,
            dst_port: udp::DST_PORT.get(u) as u16,
        },
        header: d.header,
        payload: d.payload,
    })
}

fn pseudo_header(src_ip: [u8; 4], dst_ip: [u8; 4], len: usize) -> [u8; 12] {
    let mut p = [0u8; 12];
    p[..4].copy_from_slice(&src_ip);
    p[4..8].copy_from_slice(&dst_ip);
    p[9] = IPPROTO_UDP;
    p[10..12].copy_from_slice(&(len as u16).to_be_bytes());
    p
}

#[cfg(test)]
mod icrc_tests {
    use super::*;

    #[test]
    fn fast_icrc_is_the_defined_crc() {
        assert_eq!(icrc(b"123456789"), 0xcbf4_3926);
        let data: Vec<u8> = (0..5000u32).map(|i| (i * 7 + i / 13) as u8).collect();
        for n in [0, 1, 3, 40, 4140, 5000] {
            assert_eq!(icrc(&data[..n]), ICRC.checksum(&data[..n]), "{n} bytes");
        }
    }
}
