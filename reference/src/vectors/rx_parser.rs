//! `rx_parser` vectors: Ethernet frames as they cross the MAC's
//! AXI4-Stream (bytes, `tkeep` holes, `tuser`) -> for each, either the
//! parsed transport header and payload the block hands on, or the one drop
//! reason it counts. Most frames here are hostile: lengths that disagree
//! with the frame, early and missing `tlast`, `tkeep` holes, oversize
//! frames, every header fault, a corrupted ICRC.
//!
//! The verdict is [`mrnic_proto::drop::stream_verdict`]: proto's decoder
//! (the reference's own) plus the stream-level rules, for the file's
//! datapath width, UDP port and MTU. Frames are sent with UDP checksum 0
//! ("not computed"), as the block does not check it.

use serde::{Deserialize, Serialize};

use super::format::{hex, vector_seed, BlockKind};
use super::Outcome;
use crate::rng::Rng;
use mrnic_proto::drop::{stream_verdict, StreamFrame};
use mrnic_proto::layouts::{common, data, ipv4, nack, udp};
use mrnic_proto::packet::{icrc, ipv4_checksum, NET_OVERHEAD};
use mrnic_proto::{
    encode_datagram, encode_frame, Bitmap256, Config, DataHeader, Flags, Header, NackCode, NetHeaders, Placement,
    ProbeHeader, SackHeader,
};

/// What the block hands on for an accepted frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Parsed {
    /// The transport header as proto encodes the decoded header: the
    /// opcode's header length (`m_hdr_raw` carries it from the top, zero
    /// past it).
    #[serde(with = "hex")]
    pub hdr: Vec<u8>,
    /// `m_hdr_ecn`.
    pub ecn: u8,
    /// `m_hdr_udp_sport`.
    pub udp_sport: u16,
    /// The payload on `m_axis_*` (empty for control opcodes).
    #[serde(with = "hex")]
    pub payload: Vec<u8>,
}

/// One frame in and its expected fate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FrameRec {
    /// The frame (no FCS), packed from lane 0 of its first beat; `tlast` on
    /// the beat of the last byte.
    #[serde(with = "hex")]
    pub bytes: Vec<u8>,
    /// Byte positions whose `tkeep` bit is 0 (the byte is still on `tdata`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keep_holes: Vec<u32>,
    /// `tuser` is set on the beat holding this byte.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tuser_byte: Option<u32>,
    /// `ok`, or the drop reason: `stat_drop_<verdict>` pulses once, and no
    /// packet of this frame leaves with `m_axis_tuser` = 0.
    pub verdict: String,
    /// For `ok`: the header and payload handed on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub out: Option<Parsed>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RxParserVector {
    pub id: String,
    pub desc: String,
    /// Seeds the bench's idle cycles and backpressure (they must not change
    /// any outcome).
    pub seed: u64,
    pub frames: Vec<FrameRec>,
}

/// The expected fate of a frame: the verdict name and what is handed on.
pub fn expect(cfg: &Config, bytes: &[u8], keep_holes: &[u32], tuser_byte: Option<u32>) -> (String, Option<Parsed>) {
    let s = StreamFrame { bytes, keep_holes, tuser_byte };
    let beat = cfg.hardware.datapath_bits as usize / 8;
    let mut scratch = Vec::new();
    match stream_verdict(&s, beat, cfg.transport.udp_port, cfg.transport.mtu, &mut scratch) {
        Err(r) => (r.name().to_string(), None),
        Ok(f) => {
            let mut hdr = Vec::new();
            encode_datagram(&f.header, f.payload, &mut hdr).expect("a decoded header encodes");
            hdr.truncate(f.header.opcode().layout().len);
            let payload = mrnic_proto::drop::handed_payload(&f, cfg.transport.mtu).to_vec();
            ("ok".into(), Some(Parsed { hdr, ecn: f.net.ecn, udp_sport: f.net.src_port, payload }))
        }
    }
}

/// Re-runs the reference's verdict on a vector.
pub fn check(cfg: &Config, v: &RxParserVector) -> Outcome {
    for (i, f) in v.frames.iter().enumerate() {
        let (verdict, out) = expect(cfg, &f.bytes, &f.keep_holes, f.tuser_byte);
        if verdict != f.verdict {
            return Outcome::Fail(format!("frame {i}: the reference says {verdict}, the vector {}", f.verdict));
        }
        if out != f.out {
            return Outcome::Fail(format!("frame {i}: the parsed header or payload differs from the reference's"));
        }
    }
    Outcome::Pass
}

/// Frame offsets of the IPv4, UDP and transport headers.
const IP_AT: usize = 14;
const UDP_AT: usize = IP_AT + 20;
const HDR_AT: usize = NET_OVERHEAD;

struct Gen<'a> {
    cfg: &'a Config,
    rng: Rng,
    frames: Vec<FrameRec>,
}

impl Gen<'_> {
    fn push(&mut self, bytes: Vec<u8>, keep_holes: Vec<u32>, tuser_byte: Option<u32>) {
        let (verdict, out) = expect(self.cfg, &bytes, &keep_holes, tuser_byte);
        self.frames.push(FrameRec { bytes, keep_holes, tuser_byte, verdict, out });
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.rng.below(256) as u8).collect()
    }

    fn data(&mut self, op: u8, n: usize) -> Header {
        let send = op >= 2;
        let place = if send {
            Placement::Send { rq_seq: self.rng.below(1 << 24) as u32, msg_offset: self.rng.below(1 << 20) as u32 }
        } else {
            Placement::Write { rkey: self.rng.next_u64() as u32, addr: self.rng.next_u64() }
        };
        Header::Data(DataHeader {
            flags: Flags { som: true, eom: true, retx: false, ackreq: true, se: false },
            payload_len: n as u16,
            dst_conn: self.rng.below(1 << 24) as u32,
            path_id: self.rng.below(16) as u8,
            path_psn: self.rng.below(1 << 24) as u32,
            path_gen: self.rng.below(256) as u8,
            stream_id: self.rng.below(8) as u8,
            msn: self.rng.below(1 << 24) as u32,
            msg_len: n as u32 + self.rng.below(4096) as u32,
            place,
            tx_ts: self.rng.below(1 << 16) as u16,
            imm: (op % 2 == 1).then(|| self.rng.next_u64() as u32),
        })
    }

    /// A valid frame of `h` with `n` payload bytes, UDP checksum 0.
    fn frame(&mut self, h: &Header, n: usize) -> Vec<u8> {
        let payload = self.bytes(n);
        let net = NetHeaders {
            dst_port: self.cfg.transport.udp_port,
            src_port: 49152 + self.rng.below(16384) as u16,
            ecn: self.rng.below(4) as u8,
            ident: self.rng.next_u64() as u16,
            ..NetHeaders::default()
        };
        let mut f = Vec::new();
        encode_frame(&net, h, &payload, &mut f).expect("generator headers are valid");
        udp::CHECKSUM.set(&mut f[UDP_AT..], 0);
        f
    }

    /// A valid WRITE frame with `n` payload bytes.
    fn write(&mut self, n: usize) -> Vec<u8> {
        let h = self.data(0, n);
        self.frame(&h, n)
    }
}

/// Recomputes the IPv4 header checksum after an edit.
fn fix_ip(f: &mut [u8]) {
    ipv4::CHECKSUM.set(&mut f[IP_AT..], 0);
    let c = ipv4_checksum(&f[IP_AT..IP_AT + 20]);
    ipv4::CHECKSUM.set(&mut f[IP_AT..], c as u64);
}

/// Recomputes the ICRC (the last 4 bytes of the IPv4 datagram) after an
/// edit of the transport bytes, so only the intended fault remains.
fn fix_icrc(f: &mut [u8]) {
    let end = IP_AT + ipv4::TOTAL_LEN.get(&f[IP_AT..]) as usize;
    let c = icrc(&f[HDR_AT..end - 4]);
    f[end - 4..end].copy_from_slice(&c.to_be_bytes());
}

/// The vectors for `cfg` and `seed`.
pub fn generate(cfg: &Config, seed: u64) -> Vec<RxParserVector> {
    let mtu = cfg.transport.mtu as usize;
    let beat = cfg.hardware.datapath_bits as usize / 8;
    let max = mrnic_proto::drop::max_frame(cfg.transport.mtu);
    let mut out = Vec::new();
    let mut push = |desc: &str, f: &dyn Fn(&mut Gen)| {
        let index = out.len();
        let vseed = vector_seed(seed, BlockKind::RxParser, index);
        let mut g = Gen { cfg, rng: Rng::new(vseed), frames: Vec::new() };
        f(&mut g);
        out.push(RxParserVector {
            id: format!("rx_parser-{index:03}"),
            desc: desc.to_string(),
            seed: vseed,
            frames: g.frames,
        });
    };

    push(
        "every opcode accepted: WRITE, WRITE_IMM, SEND, SEND_IMM with 0, 1 and MTU payload bytes, SACK, NACK, PROBE",
        &|g| {
            for op in 0..4u8 {
                for n in [0, 1, mtu] {
                    let h = g.data(op, n);
                    let f = g.frame(&h, n);
                    g.push(f, vec![], None);
                }
            }
            let sack = Header::Sack(SackHeader {
                rate_hint: 7,
                dst_conn: 5,
                path_id: 1,
                path_gen: 2,
                cum_psn: 0xff_fff0,
                stream_id: 3,
                completed_msn: 9,
                echo_ts: 11,
                ecn_cnt: 1,
                bitmap: Bitmap256([u64::MAX, 1, 0, 1 << 63]),
            });
            let nack = super::adversarial::nack(NackCode::Access, 5, 3);
            let probe = Header::Probe(ProbeHeader { tx_ts: 1, dst_conn: 5, path_id: 1, path_gen: 2, path_psn: 3 });
            for h in [sack, nack, probe] {
                let f = g.frame(&h, 0);
                g.push(f, vec![], None);
            }
        },
    );
    push(
        "lengths disagreeing with the frame: payload_len one more and one less than the bytes (length), \
         IPv4, UDP and payload lengths all one past the frame's end (truncated), IPv4 total_len below 28 (length), \
         UDP length off by one (length); \
         bytes after total_len are Ethernet padding (accepted)",
        &|g| {
            for d in [1i64, -1] {
                let mut f = g.write(100);
                let v = data::PAYLOAD_LEN.get(&f[HDR_AT..]) as i64 + d;
                data::PAYLOAD_LEN.set(&mut f[HDR_AT..], v as u64);
                fix_icrc(&mut f);
                g.push(f, vec![], None);
            }
            // Every length one more than the bytes: the frame ends one byte
            // early (truncated).
            let mut f = g.write(64);
            for (fl, at) in [(&ipv4::TOTAL_LEN, IP_AT), (&udp::LENGTH, UDP_AT), (&data::PAYLOAD_LEN, HDR_AT)] {
                let v = fl.get(&f[at..]) + 1;
                fl.set(&mut f[at..], v);
            }
            fix_ip(&mut f);
            g.push(f, vec![], None);
            let mut f = g.write(64);
            ipv4::TOTAL_LEN.set(&mut f[IP_AT..], 27);
            fix_ip(&mut f);
            g.push(f, vec![], None);
            let mut f = g.write(64);
            let v = udp::LENGTH.get(&f[UDP_AT..]) + 1;
            udp::LENGTH.set(&mut f[UDP_AT..], v);
            g.push(f, vec![], None);
            let mut f = g.write(10);
            let pad = g.bytes(beat + 3);
            f.extend(pad);
            g.push(f, vec![], None);
        },
    );
    push(
        "payload_len of the MTU is accepted; MTU + 1 passes its header on with no payload (BAD_HDR downstream)",
        &|g| {
            for n in [mtu, mtu + 1] {
                let h = g.data(2, n);
                let f = g.frame(&h, n);
                g.push(f, vec![], None);
            }
        },
    );
    push(
        "early tlast: a frame cut inside the Ethernet, IPv4, UDP and transport headers, the payload and the ICRC \
         (truncated each); a zero-byte frame (tkeep)",
        &|g| {
            let f = g.write(200);
            for cut in [7, IP_AT + 9, UDP_AT + 5, HDR_AT + 20, HDR_AT + 48 + 100, f.len() - 2] {
                g.push(f[..cut].to_vec(), vec![], None);
            }
            g.push(Vec::new(), vec![], None);
        },
    );
    push(
        "missing tlast: a frame running past the longest accepted frame (oversize); two frames merged by a lost \
         tlast, under the maximum: the first is accepted and the second is padding (a lost tlast is the MAC's \
         fault and cannot be counted here); an MTU frame with padding up to the last beat that starts before \
         the maximum (accepted) and one byte more, a beat starting past it (oversize)",
        &|g| {
            let mut f = g.write(mtu);
            let tail = g.write(64);
            f.extend(tail);
            g.push(f, vec![], None);
            let mut f = g.write(100);
            let second = g.write(100);
            f.extend(second);
            g.push(f, vec![], None);
            let f = g.write(mtu);
            let limit = max.div_ceil(beat) * beat;
            let pad = g.bytes(limit - f.len());
            let mut ok = f.clone();
            ok.extend(&pad);
            g.push(ok.clone(), vec![], None);
            ok.push(0);
            g.push(ok, vec![], None);
        },
    );
    push(
        "tkeep holes: in a non-last beat (tkeep), in the middle of the last beat (tkeep), every lane of the last beat \
         (tkeep); the frame's last byte not kept cuts the ICRC (truncated)",
        &|g| {
            let f = g.write(3 * beat + 1);
            let n = f.len() as u32;
            let last = (f.len() - 1) / beat * beat;
            g.push(f.clone(), vec![HDR_AT as u32 + 2], None);
            if f.len() - last >= 3 {
                g.push(f.clone(), vec![last as u32 + 1], None);
            }
            g.push(f.clone(), (last as u32..n).collect(), None);
            g.push(f, vec![n - 1], None);
        },
    );
    push("tuser (MAC error) on the first beat, on a middle beat, on the last beat (mac_error each)", &|g| {
        let f = g.write(4 * beat);
        let n = f.len() as u32;
        for b in [0, n / 2, n - 1] {
            g.push(f.clone(), vec![], Some(b));
        }
    });
    push(
        "header faults, one each with every checksum made good: ethertype, IPv4 version, IHL, fragment, protocol \
         (ip_header), IPv4 checksum, UDP destination port, transport version, unknown opcode, a reserved bit, \
         immediate on WRITE (invalid), NACK code 0 (invalid)",
        &|g| {
            type Edit = fn(&mut Vec<u8>);
            let edits: [(Edit, bool); 12] = [
                (|f| f[12] = 0x86, false),
                (|f| f[IP_AT] = 0x65, true),
                (|f| f[IP_AT] = 0x46, true),
                (|f| f[IP_AT + 6] |= 0x20, true),
                (|f| f[IP_AT + 9] = 6, true),
                (|f| f[IP_AT + 10] ^= 0x40, false),
                (|f| f[UDP_AT + 3] ^= 1, false),
                (|f| common::VER.set(&mut f[HDR_AT..], 1), false),
                (|f| common::OPCODE.set(&mut f[HDR_AT..], 5), false),
                (|f| data::RESERVED.set(&mut f[HDR_AT..], 1), false),
                (|f| data::IMM.set(&mut f[HDR_AT..], 0x1234), false),
                (|f| nack::CODE.set(&mut f[HDR_AT..], 0), false),
            ];
            for (i, (edit, ip)) in edits.iter().enumerate() {
                let mut f = if i == 11 {
                    let h = super::adversarial::nack(NackCode::Rnr, 1, 0);
                    g.frame(&h, 0)
                } else {
                    g.write(32)
                };
                edit(&mut f);
                if *ip {
                    fix_ip(&mut f);
                }
                if i >= 7 {
                    fix_icrc(&mut f);
                }
                g.push(f, vec![], None);
            }
        },
    );
    push("ICRC: one bit flipped in the transport header, in the payload, in the ICRC itself (icrc each)", &|g| {
        let f = g.write(300);
        for at in [HDR_AT + 30, HDR_AT + 48 + 150, f.len() - 1] {
            let mut x = f.clone();
            x[at] ^= 0x10;
            g.push(x, vec![], None);
        }
    });
    push("random valid frames of every opcode and size, back to back", &|g| {
        for _ in 0..16 {
            let op = g.rng.below(7) as u8;
            let n = match g.rng.below(3) {
                0 => g.rng.below(16) as usize,
                1 => mtu - g.rng.below(8) as usize,
                _ => g.rng.below(mtu as u64 + 1) as usize,
            };
            let f = if op < 4 {
                let h = g.data(op, n);
                g.frame(&h, n)
            } else {
                let h = Header::Probe(ProbeHeader {
                    tx_ts: g.rng.below(1 << 16) as u16,
                    dst_conn: g.rng.below(1 << 24) as u32,
                    path_id: g.rng.below(16) as u8,
                    path_gen: g.rng.below(256) as u8,
                    path_psn: g.rng.below(1 << 24) as u32,
                });
                g.frame(&h, 0)
            };
            g.push(f, vec![], None);
        }
    });
    out
}
