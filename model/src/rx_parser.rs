//! `rx_parser`: Ethernet frames on AXI4-Stream in, one parsed transport
//! header and the realigned payload out, with every check of the wire
//! format and a drop counter per reason.
//!
//! # Interfaces
//! - `s_axis_*`: frames without FCS, byte 0 of the frame in `tdata[7:0]`
//!   (AXI4-Stream little-endian lane order), `DATA_WIDTH` =
//!   `hardware.datapath_bits`. `s_axis_tuser` is the MAC's frame-error bit
//!   (any beat). `s_axis_tid` is the fabric plane of the MAC port the
//!   frame arrived on (AXI4-Stream's source id; the plane answers to this
//!   packet leave by), taken from the beat that decides the header.
//!   `cfg_udp_port` is the transport's UDP port: data and PROBEs must be
//!   sent to it, SACKs and NACKs from it (to the entropy port of the path
//!   they answer, [`to_transport`]); any other frame is dropped (`udp_port`).
//! - `m_hdr_*`: one entry per frame whose header checks passed.
//!   `m_hdr_raw` is the whole transport header as one big-endian vector
//!   (`8 * 52` bits, header byte 0 in the top bits, bytes past the opcode's
//!   header length zero), so any field of any layout is
//!   `m_hdr_raw[Field::vector_range(52)]`. The named ports (`m_hdr_opcode`,
//!   `m_hdr_payload_len`, ..., `m_hdr_imm`) are slices of it at the data
//!   header's positions, from the field table: valid for data opcodes; for
//!   SACK, NACK and PROBE use `m_hdr_raw` with their layouts (`dst_conn`,
//!   `path_id` and `path_gen` sit at the same place in every header and are
//!   valid for every opcode). `m_hdr_rkey` is `rkey` (WRITE) or
//!   `{rq_seq, rq_reserved}` (SEND); `m_hdr_addr` is `addr` (WRITE) or
//!   `{offset_reserved, msg_offset}` (SEND). `m_hdr_flags` is byte 1 of the
//!   header (SOM in bit 7). `m_hdr_ecn` is the IPv4 ECN codepoint,
//!   `m_hdr_udp_sport` the UDP source port (the path's entropy),
//!   `m_hdr_udp_dport` the destination port (an answer's: the entropy of
//!   the path it answers, which tx_engine checks) and
//!   `m_hdr_ip_src` the IPv4 source address (where conn_table sends a
//!   NO_CONN NACK, and what it checks a connection's peer against),
//!   `m_hdr_eth_src` the Ethernet source (the hop the frame came from,
//!   which a NO_CONN NACK goes back to: no connection names one);
//!   `m_hdr_plane` is `s_axis_tid` of the frame.
//! - `m_axis_*`: the payload of every frame that produced an `m_hdr` entry,
//!   realigned so payload byte 0 is in lane 0; exactly one packet per
//!   `m_hdr` entry, in the same order. Non-last beats are full. The last beat
//!   carries `m_axis_tuser` = drop: the ICRC, the frame length against the
//!   IPv4 total length, a MAC error or a malformed beat after the header can
//!   only be known at the end of the frame. A frame without payload (control
//!   opcodes, zero-length data), a data frame whose `payload_len` is over
//!   the MTU and a frame that ends early produce a last beat with
//!   `m_axis_tkeep` all zero. An MTU overrun is not a frame fault: its
//!   header goes on so that msg_check answers it BAD_HDR (spec section 6);
//!   its payload is discarded (`proto::drop::handed_payload`), so nothing
//!   downstream buffers more than an MTU. **Downstream must not commit side
//!   effects of a packet (memory writes, completions, table updates) before
//!   its tlast beat with `tuser` = 0.** (The alternative, store-and-forward,
//!   would cost a frame buffer of two maximum frames in block RAM and a
//!   frame of latency; the DMA engine already buffers a burst before it
//!   commits, so cut-through costs it nothing.)
//! - `stat_drop_<reason>`: a one-cycle pulse per dropped frame, one reason
//!   per frame (the first in [`Reason::ALL`] order that applies; on a frame
//!   with several faults, a header fault decided before a later `tuser`,
//!   `tkeep` or oversize beat wins), counted by the csr block.
//!
//! # Pipeline
//! ```text
//! cycle a    s_axis handshake; header bytes 0..94 of the frame captured
//!            into the header buffer as they pass; beat into stage A
//! cycle a+1  process stage A: CRC update, ICRC capture, header decision
//!            (m_hdr push), payload realignment (m_axis push of a non-last
//!            beat, or the last payload beat held in the tail register)
//! cycle a+2  (after the tlast beat only) finish: ICRC verdict, last beat
//!            pushed with tuser, stat pulse registered
//! ```
//! `m_hdr` and `m_axis` are 8-entry FIFOs; their heads are the outputs (no
//! combinational path from any input to any output). Latency: a payload
//! beat leaves 2 cycles after the input beat that completes it; the last
//! beat 3 cycles after the tlast beat. Throughput: one beat per cycle in and
//! out, sustained, for any frame mix: the only extra output beat (the tail)
//! is pushed by the finish stage in the cycle where the process stage holds
//! beat 0 of the next frame, which never produces a payload beat (the
//! payload starts at byte 82 of the frame). `s_axis_tready` is high while
//! both FIFOs hold at most 4 entries, from registers only.
//!
//! # Header decision
//! The checks run once per frame, in the process cycle of the beat that
//! holds byte 93 (the end of the longest header) or of the tlast beat if
//! that comes first. A frame that fails them produces no output at all.
//! The frame length is checked against `14 + total_len` (bytes after it are
//! Ethernet padding and ignored) at the tlast beat.
//!
//! # ICRC
//! The model computes the CRC-32 byte-serially over the covered bytes. The
//! RTL computes it over whole beats: a raw CRC (initial state 0, the first
//! four covered bytes inverted, which equals the initial value 0xFFFFFFFF)
//! of each beat with the uncovered bytes zeroed, one parallel update of
//! `DATA_WIDTH` bits per cycle; leading zero bytes leave a zero state
//! unchanged, and the trailing zero bytes of the last covered beat are
//! removed at the finish by multiplying with the inverse of the zero-byte
//! step, in `log2(DATA_WIDTH/8)` conditional 32x32 matrix stages. So there
//! is no per-byte-count path and no throughput cost at the tail.
//!
//! # Malformed AXI4-Stream
//! A non-last beat whose `tkeep` is not all ones, a last beat whose `tkeep`
//! is not contiguous from lane 0 or is zero (`tkeep`), `tuser` on any beat
//! (`mac_error`), and a frame with a beat that starts at or after byte
//! `86 + MTU` (longer than `86 + MTU` rounded up to whole beats:
//! `oversize`; the rest is discarded until the next tlast, which
//! resynchronises) drop the frame. None of them stalls the input.
//!
//! # Not checked
//! The UDP checksum (proto verifies a non-zero one) is not checked here.

use std::collections::VecDeque;
use std::fmt;

use mrnic_proto::config::Config;
use mrnic_proto::field::{Field, Layout, Only, Rule};
use mrnic_proto::layouts::{common, data, eth, ipv4, nack, probe, sack, udp};
use mrnic_proto::tables::path;

use crate::block::{Bits, Block, PortDef};

/// Module name, shared with the Verilog.
pub const NAME: &str = "rx_parser";

/// Frame offset of the IPv4 header.
pub const IP_AT: usize = eth::LAYOUT.len;
/// Frame offset of the UDP header.
pub const UDP_AT: usize = IP_AT + ipv4::LAYOUT.len;
/// Frame offset of the transport header.
pub const HDR_AT: usize = UDP_AT + udp::LAYOUT.len;
/// Longest transport header (SACK).
pub const RAW_BYTES: usize = sack::LAYOUT.len;
/// Bytes of the header buffer: everything up to the end of the longest header.
pub const HB_BYTES: usize = HDR_AT + RAW_BYTES;
/// Frame offset of the payload (after the data header).
pub const PAYLOAD_AT: usize = HDR_AT + data::LAYOUT.len;
/// Width of a plane number (`s_axis_tid`, `m_hdr_plane`): the path table's.
pub const PLANE_BITS: u32 = path::PLANE.width;
/// Output FIFO entries.
pub const FIFO_DEPTH: usize = 8;
/// `s_axis_tready` is high while each FIFO holds at most this many entries.
pub const FIFO_READY_MAX: usize = 4;

/// Byte 1 of the data header as one port: the flags.
pub const FLAGS: Field = Field::new("flags", data::SOM.offset, 0, 8, "flags byte (SOM in bit 7)");

/// Named header ports: `m_hdr_<name>` carries this field of the data layout.
pub const HDR_FIELDS: [&Field; 13] = [
    &common::OPCODE,
    &FLAGS,
    &data::PAYLOAD_LEN,
    &common::DST_CONN,
    &common::PATH_ID,
    &data::PATH_PSN,
    &common::PATH_GEN,
    &common::STREAM_ID,
    &data::MSN,
    &data::MSG_LEN,
    &data::RKEY,
    &data::ADDR,
    &data::TX_TS,
];

/// Why a frame was dropped; one `stat_drop_<name>` output each. Defined
/// in proto next to the decoder, so the golden vectors and the fuzzers
/// judge frames by the same list.
pub use mrnic_proto::drop::DropReason as Reason;

/// A config the parser cannot be built for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("rx_parser: {field} = {value}: {why}")]
pub struct ParamError {
    pub field: &'static str,
    pub value: u64,
    pub why: String,
}

/// Sizes of one parser, derived from a [`Config`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RxParserParams {
    /// `DATA_WIDTH` in bits.
    pub data_bits: u32,
    /// Payload MTU in bytes.
    pub mtu: u32,
}

impl RxParserParams {
    pub fn from_config(cfg: &Config) -> Result<RxParserParams, ParamError> {
        RxParserParams::new(cfg.hardware.datapath_bits, cfg.transport.mtu)
    }

    pub fn new(data_bits: u32, mtu: u32) -> Result<RxParserParams, ParamError> {
        if !data_bits.is_power_of_two() || !(64..=1024).contains(&data_bits) {
            return Err(ParamError {
                field: "hardware.datapath_bits",
                value: data_bits as u64,
                why: "must be a power of 2 in 64..=1024".into(),
            });
        }
        if !mtu.is_power_of_two() || !(1024..=8192).contains(&mtu) {
            return Err(ParamError {
                field: "transport.mtu",
                value: mtu as u64,
                why: "must be a power of 2 in 1024..=8192".into(),
            });
        }
        Ok(RxParserParams { data_bits, mtu })
    }

    /// Bytes per beat.
    pub fn bytes(&self) -> usize {
        self.data_bits as usize / 8
    }

    /// Longest accepted frame: headers, the MTU and the ICRC.
    pub fn max_frame(&self) -> usize {
        PAYLOAD_AT + self.mtu as usize + 4
    }

    /// Beat index at which a frame is oversize; the beat counter saturates
    /// there.
    pub fn idx_max(&self) -> usize {
        self.max_frame().div_ceil(self.bytes())
    }

    /// Width of the beat counter.
    pub fn idx_bits(&self) -> u32 {
        usize::BITS - self.idx_max().leading_zeros()
    }

    /// Beat holding the last header byte: the header decision point.
    pub fn decide_beat(&self) -> usize {
        (HB_BYTES - 1) / self.bytes()
    }

    /// Beat holding payload byte 0.
    pub fn k0(&self) -> usize {
        PAYLOAD_AT / self.bytes()
    }

    /// Lane of payload byte 0.
    pub fn shift(&self) -> usize {
        PAYLOAD_AT % self.bytes()
    }
}

/// Ports in declaration order.
pub fn ports(p: &RxParserParams) -> Vec<PortDef> {
    const RST: &str = "Clock and reset";
    const IN: &str = "Frame input";
    const CFG: &str = "Configuration";
    const HDR: &str = "Parsed header";
    const OUT: &str = "Payload output";
    const STAT: &str = "Drop counters";
    let b = p.bytes() as u32;
    let mut v = vec![
        PortDef::input("rst", 1, RST, "synchronous reset, active high"),
        PortDef::input("s_axis_tdata", p.data_bits, IN, "frame bytes, byte 0 in bits 7:0"),
        PortDef::input("s_axis_tkeep", b, IN, "byte enables"),
        PortDef::input("s_axis_tvalid", 1, IN, "a beat is offered"),
        PortDef::output("s_axis_tready", 1, IN, "beat accepted this cycle if valid"),
        PortDef::input("s_axis_tlast", 1, IN, "last beat of the frame"),
        PortDef::input("s_axis_tuser", 1, IN, "MAC frame error"),
        PortDef::input("s_axis_tid", PLANE_BITS, IN, "plane of the MAC port the frame arrived on"),
        PortDef::input("cfg_udp_port", 16, CFG, "transport UDP destination port"),
        PortDef::output("m_hdr_valid", 1, HDR, "a parsed header is offered"),
        PortDef::input("m_hdr_ready", 1, HDR, "header taken this cycle if valid"),
        PortDef::output(
            "m_hdr_raw",
            RAW_BYTES as u32 * 8,
            HDR,
            "transport header, byte 0 in the top bits, zero past its length",
        ),
    ];
    for f in HDR_FIELDS {
        v.push(PortDef::output(format!("m_hdr_{}", f.name), f.width, HDR, f.meaning));
    }
    v.push(PortDef::output("m_hdr_imm", data::IMM.width, HDR, data::IMM.meaning));
    v.push(PortDef::output("m_hdr_ecn", ipv4::ECN.width, HDR, "IPv4 ECN codepoint"));
    v.push(PortDef::output("m_hdr_udp_sport", udp::SRC_PORT.width, HDR, "UDP source port (path entropy)"));
    v.push(PortDef::output(
        "m_hdr_udp_dport",
        udp::DST_PORT.width,
        HDR,
        "UDP destination port (an answer's: the path entropy it answers)",
    ));
    v.push(PortDef::output("m_hdr_ip_src", ipv4::SRC_IP.width, HDR, "IPv4 source address"));
    v.push(PortDef::output(
        "m_hdr_eth_src",
        eth::SRC_MAC.width,
        HDR,
        "Ethernet source address (the hop it came from: where an answer without a connection goes)",
    ));
    v.push(PortDef::output("m_hdr_plane", PLANE_BITS, HDR, "plane the frame arrived on (s_axis_tid)"));
    v.extend([
        PortDef::output("m_axis_tdata", p.data_bits, OUT, "payload, byte 0 in lane 0"),
        PortDef::output("m_axis_tkeep", b, OUT, "byte enables (all ones except on the last beat)"),
        PortDef::output("m_axis_tvalid", 1, OUT, "a payload beat is offered"),
        PortDef::input("m_axis_tready", 1, OUT, "beat taken this cycle if valid"),
        PortDef::output("m_axis_tlast", 1, OUT, "last beat of the packet"),
        PortDef::output("m_axis_tuser", 1, OUT, "on the last beat: drop the packet"),
    ]);
    for r in Reason::ALL {
        v.push(PortDef::output(format!("stat_drop_{}", r.name()), 1, STAT, "one-cycle pulse per dropped frame"));
    }
    v
}

/// Port indices.
pub mod port {
    pub const RST: usize = 0;
    pub const S_TDATA: usize = 1;
    pub const S_TKEEP: usize = 2;
    pub const S_TVALID: usize = 3;
    pub const S_TREADY: usize = 4;
    pub const S_TLAST: usize = 5;
    pub const S_TUSER: usize = 6;
    pub const S_TID: usize = 7;
    pub const CFG_UDP_PORT: usize = 8;
    pub const M_HDR_VALID: usize = 9;
    pub const M_HDR_READY: usize = 10;
    pub const M_HDR_RAW: usize = 11;
    /// First of the named header fields, then imm, ecn, udp_sport, udp_dport, ip_src, eth_src, plane.
    pub const M_HDR_FIELDS: usize = 12;
    pub const M_HDR_IMM: usize = M_HDR_FIELDS + 13;
    pub const M_HDR_ECN: usize = M_HDR_IMM + 1;
    pub const M_HDR_SPORT: usize = M_HDR_ECN + 1;
    pub const M_HDR_DPORT: usize = M_HDR_SPORT + 1;
    pub const M_HDR_IP_SRC: usize = M_HDR_DPORT + 1;
    pub const M_HDR_ETH_SRC: usize = M_HDR_IP_SRC + 1;
    pub const M_HDR_PLANE: usize = M_HDR_ETH_SRC + 1;
    pub const M_TDATA: usize = M_HDR_PLANE + 1;
    pub const M_TKEEP: usize = M_TDATA + 1;
    pub const M_TVALID: usize = M_TDATA + 2;
    pub const M_TREADY: usize = M_TDATA + 3;
    pub const M_TLAST: usize = M_TDATA + 4;
    pub const M_TUSER: usize = M_TDATA + 5;
    pub const STAT: usize = M_TDATA + 6;
}

/// One AXI4-Stream beat.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Beat {
    /// `bytes()` bytes, lane 0 first.
    pub data: Vec<u8>,
    /// Bit i: lane i valid.
    pub keep: u128,
    pub last: bool,
    pub user: bool,
}

/// A parsed header as it waits in the FIFO.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HdrOut {
    /// The transport header bytes (52), zero past the opcode's length.
    pub raw: [u8; RAW_BYTES],
    pub ecn: u8,
    pub udp_sport: u16,
    pub udp_dport: u16,
    pub ip_src: u32,
    pub eth_src: u64,
    pub plane: u8,
}

impl HdrOut {
    /// A field of the transport header (at most 64 bits wide).
    pub fn get(&self, f: &Field) -> u64 {
        f.get(&self.raw)
    }
}

/// Inputs of one cycle, typed.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    pub rst: bool,
    pub s_valid: bool,
    pub s_beat: Beat,
    /// `s_axis_tid`: the plane.
    pub s_tid: u8,
    pub cfg_udp_port: u16,
    pub hdr_ready: bool,
    pub axis_ready: bool,
}

/// Outputs of one cycle, typed.
#[derive(Debug, Clone, Default)]
pub struct Outputs {
    pub s_ready: bool,
    pub hdr: Option<HdrOut>,
    pub axis: Option<Beat>,
    /// Bit `Reason::index()`: the drop pulse.
    pub stat: u32,
}

fn keep_mask(n: usize) -> u128 {
    if n >= 128 {
        u128::MAX
    } else {
        (1u128 << n) - 1
    }
}

/// Reflected CRC-32 (ISO-HDLC) register update over `bytes`.
pub fn crc32_update(mut crc: u32, bytes: &[u8]) -> u32 {
    for &b in bytes {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = (crc >> 1) ^ (0xEDB8_8320 & (crc & 1).wrapping_neg());
        }
    }
    crc
}

fn be(buf: &[u8], at: usize, f: &Field) -> u64 {
    f.get(&buf[at..])
}

/// Header length of an opcode value, `None` if unknown.
pub fn layout_of(op: u64) -> Option<&'static Layout> {
    mrnic_proto::Opcode::from_u8(op as u8).map(|o| o.layout())
}

/// IPv4 header one's-complement sum, folded (0xffff when correct).
pub fn ip_sum(hb: &[u8]) -> u32 {
    let mut acc: u32 = (0..10).map(|i| u16::from_be_bytes([hb[IP_AT + 2 * i], hb[IP_AT + 2 * i + 1]]) as u32).sum();
    acc = (acc & 0xffff) + (acc >> 16);
    acc = (acc & 0xffff) + (acc >> 16);
    acc
}

/// Whether a frame is the transport's by its UDP ports: data and PROBEs go
/// to the transport port; SACKs and NACKs come from it, to the entropy port
/// of the path they answer (spec section 3, UDP), which only the sender
/// knows, so their destination port is not checked here (tx_engine matches
/// it against the path's port). The opcode is read unchecked: a frame that
/// passes here on it still faces the version and opcode checks.
pub fn to_transport(hb: &[u8], udp_port: u16) -> bool {
    let answer = || {
        be(hb, UDP_AT, &udp::SRC_PORT) == udp_port as u64
            && matches!(be(hb, HDR_AT, &common::OPCODE), OP_SACK | OP_NACK)
    };
    be(hb, UDP_AT, &udp::DST_PORT) == udp_port as u64 || answer()
}

/// Opcodes of the answers (proto's `Opcode::Sack`, `Opcode::Nack`).
const OP_SACK: u64 = mrnic_proto::headers::Opcode::Sack as u64;
const OP_NACK: u64 = mrnic_proto::headers::Opcode::Nack as u64;

/// The header checks on the header buffer, in priority order. `len` is the
/// frame length when the frame has ended.
pub fn checks(hb: &[u8], len: Option<usize>, udp_port: u16) -> Option<Reason> {
    if len.is_some_and(|l| l < UDP_AT) {
        return Some(Reason::Truncated);
    }
    if be(hb, 0, &eth::ETHERTYPE) != 0x0800 {
        return Some(Reason::Ethertype);
    }
    if be(hb, IP_AT, &ipv4::VERSION) != 4 || be(hb, IP_AT, &ipv4::IHL) != 5 {
        return Some(Reason::IpHeader);
    }
    let total = be(hb, IP_AT, &ipv4::TOTAL_LEN);
    if total < 28 {
        return Some(Reason::Length);
    }
    if len.is_some_and(|l| (l as u64) < IP_AT as u64 + total) {
        return Some(Reason::Truncated);
    }
    if be(hb, IP_AT, &ipv4::FLAG_RESERVED) != 0
        || be(hb, IP_AT, &ipv4::MF) != 0
        || be(hb, IP_AT, &ipv4::FRAG_OFFSET) != 0
        || be(hb, IP_AT, &ipv4::PROTOCOL) != 17
    {
        return Some(Reason::IpHeader);
    }
    if ip_sum(hb) != 0xffff {
        return Some(Reason::IpChecksum);
    }
    let ulen = be(hb, UDP_AT, &udp::LENGTH);
    if ulen != total - 20 {
        return Some(Reason::Length);
    }
    if !to_transport(hb, udp_port) {
        return Some(Reason::UdpPort);
    }
    if be(hb, HDR_AT, &common::VER) != 0 {
        return Some(Reason::Version);
    }
    let op = be(hb, HDR_AT, &common::OPCODE);
    let Some(layout) = layout_of(op) else {
        return Some(Reason::Opcode);
    };
    if ulen < (8 + layout.len + 4) as u64 {
        return Some(Reason::Truncated);
    }
    let view = if op == 2 || op == 3 { Only::Send } else { Only::Write };
    for f in layout.fields {
        if f.rule == Rule::Reserved && (f.only == Only::All || f.only == view) && be(hb, HDR_AT, f) != 0 {
            return Some(Reason::Reserved);
        }
    }
    let is_data = op < 8;
    if (op == 0 || op == 2) && be(hb, HDR_AT, &data::IMM) != 0 {
        return Some(Reason::Invalid);
    }
    if op == 9 && !(1..=4).contains(&be(hb, HDR_AT, &nack::CODE)) {
        return Some(Reason::Invalid);
    }
    let pl = if is_data { be(hb, HDR_AT, &data::PAYLOAD_LEN) } else { 0 };
    if ulen != (8 + layout.len + 4) as u64 + pl {
        return Some(Reason::Length);
    }
    None
}

/// A data frame whose `payload_len` is over the MTU: its header passes (the
/// receiver answers BAD_HDR), its payload is discarded
/// (`proto::drop::handed_payload`).
pub fn over_mtu(hb: &[u8], mtu: u32) -> bool {
    be(hb, HDR_AT, &common::OPCODE) < 8 && be(hb, HDR_AT, &data::PAYLOAD_LEN) > mtu as u64
}

#[derive(Debug, Clone, Default)]
struct FrameState {
    mac: bool,
    tkeep: bool,
    oversize: bool,
    decided: bool,
    early: Option<Reason>,
    live: bool,
    /// The payload is over the MTU: none of it is handed on.
    discard: bool,
    crc: u32,
    icrc: [u8; 4],
}

impl FrameState {
    fn axi_reason(&self) -> Option<Reason> {
        if self.mac {
            Some(Reason::MacError)
        } else if self.tkeep {
            Some(Reason::Tkeep)
        } else if self.oversize {
            Some(Reason::Oversize)
        } else {
            None
        }
    }
}

#[derive(Debug, Clone)]
struct Fin {
    live: bool,
    reason: Option<Reason>,
    crc: u32,
    icrc: [u8; 4],
}

/// The cycle-accurate parser. See the module docs.
pub struct RxParser {
    p: RxParserParams,
    ports: Vec<PortDef>,
    hb: Vec<u8>,
    in_idx: usize,
    /// Stage A: the accepted beat and its index.
    /// Stage A: the beat, its index in the frame and its `tid`.
    a: Option<(Beat, usize, u8)>,
    prev: Vec<u8>,
    fs: FrameState,
    tail: Option<Beat>,
    fin: Option<Fin>,
    hdr_fifo: VecDeque<HdrOut>,
    axis_fifo: VecDeque<Beat>,
    stat: u32,
    scratch: Inputs,
}

impl RxParser {
    pub fn new(p: RxParserParams) -> RxParser {
        let b = p.bytes();
        RxParser {
            ports: ports(&p),
            hb: vec![0; HB_BYTES],
            in_idx: 0,
            a: None,
            prev: vec![0; b],
            fs: FrameState::default(),
            tail: None,
            fin: None,
            hdr_fifo: VecDeque::new(),
            axis_fifo: VecDeque::new(),
            stat: 0,
            scratch: Inputs { s_beat: Beat { data: vec![0; b], ..Beat::default() }, ..Inputs::default() },
            p,
        }
    }

    pub fn params(&self) -> &RxParserParams {
        &self.p
    }

    /// Outputs from registered state only.
    pub fn outputs(&self) -> Outputs {
        Outputs {
            s_ready: self.hdr_fifo.len() <= FIFO_READY_MAX && self.axis_fifo.len() <= FIFO_READY_MAX,
            hdr: self.hdr_fifo.front().cloned(),
            axis: self.axis_fifo.front().cloned(),
            stat: self.stat,
        }
    }

    /// The rising clock edge.
    pub fn clock(&mut self, inp: &Inputs) {
        let out = self.outputs();
        if inp.rst {
            *self = RxParser::new(self.p);
            return;
        }
        if out.hdr.is_some() && inp.hdr_ready {
            self.hdr_fifo.pop_front();
        }
        if out.axis.is_some() && inp.axis_ready {
            self.axis_fifo.pop_front();
        }
        // Finish stage.
        self.stat = 0;
        if let Some(fin) = self.fin.take() {
            let crc = !fin.crc;
            let reason = fin.reason.or((crc != u32::from_be_bytes(fin.icrc)).then_some(Reason::Icrc));
            if fin.live {
                let b = self.p.bytes();
                let mut beat = self.tail.take().unwrap_or(Beat { data: vec![0; b], keep: 0, last: true, user: false });
                beat.last = true;
                beat.user = reason.is_some();
                self.axis_fifo.push_back(beat);
            }
            if let Some(r) = reason {
                self.stat = 1 << r.index();
            }
        }
        // Process stage.
        if let Some((beat, k, tid)) = self.a.take() {
            self.process(&beat, k, tid, inp.cfg_udp_port);
        }
        // Input handshake.
        if inp.s_valid && out.s_ready {
            let b = self.p.bytes();
            let mut beat = inp.s_beat.clone();
            beat.data.resize(b, 0);
            beat.keep &= keep_mask(b);
            for (i, slot) in self.hb.iter_mut().enumerate() {
                if i / b == self.in_idx {
                    *slot = beat.data[i % b];
                }
            }
            let k = self.in_idx;
            self.in_idx = if beat.last { 0 } else { (k + 1).min(self.p.idx_max()) };
            self.a = Some((beat, k, inp.s_tid & ((1 << PLANE_BITS) - 1)));
        }
        debug_assert!(self.hdr_fifo.len() <= FIFO_DEPTH && self.axis_fifo.len() <= FIFO_DEPTH, "FIFO overflow");
    }

    fn process(&mut self, beat: &Beat, k: usize, tid: u8, udp_port: u16) {
        let b = self.p.bytes();
        if k == 0 {
            self.fs = FrameState { crc: !0, ..FrameState::default() };
        }
        let all = keep_mask(b);
        self.fs.mac |= beat.user;
        let keep_ok =
            if beat.last { beat.keep != 0 && beat.keep & beat.keep.wrapping_add(1) == 0 } else { beat.keep == all };
        self.fs.tkeep |= !keep_ok;
        let start = k * b;
        self.fs.oversize |= start >= self.p.max_frame();
        let e = IP_AT + be(&self.hb, IP_AT, &ipv4::TOTAL_LEN) as usize;
        let crc_end = e.wrapping_sub(4);
        // CRC over covered lanes [HDR_AT, e - 4).
        let lo = HDR_AT.max(start).min(start + b);
        let hi = crc_end.min(start + b).max(lo);
        self.fs.crc = crc32_update(self.fs.crc, &beat.data[lo - start..hi - start]);
        for i in 0..4 {
            let pos = crc_end.wrapping_add(i);
            if pos / b == k {
                self.fs.icrc[i] = beat.data[pos % b];
            }
        }
        let len = beat.last.then(|| start + beat.keep.count_ones() as usize);
        if !self.fs.decided && (k >= self.p.decide_beat() || beat.last) {
            self.fs.decided = true;
            self.fs.early = self.fs.axi_reason().or(checks(&self.hb, len, udp_port));
            if self.fs.early.is_none() {
                self.fs.live = true;
                self.fs.discard = over_mtu(&self.hb, self.p.mtu);
                let op = be(&self.hb, HDR_AT, &common::OPCODE);
                let n = layout_of(op).map_or(RAW_BYTES, |l| l.len);
                let mut raw = [0u8; RAW_BYTES];
                raw[..n].copy_from_slice(&self.hb[HDR_AT..HDR_AT + n]);
                self.hdr_fifo.push_back(HdrOut {
                    raw,
                    ecn: be(&self.hb, IP_AT, &ipv4::ECN) as u8,
                    udp_sport: be(&self.hb, UDP_AT, &udp::SRC_PORT) as u16,
                    udp_dport: be(&self.hb, UDP_AT, &udp::DST_PORT) as u16,
                    ip_src: be(&self.hb, IP_AT, &ipv4::SRC_IP) as u32,
                    eth_src: be(&self.hb, 0, &eth::SRC_MAC),
                    plane: tid,
                });
            }
        }
        let op = be(&self.hb, HDR_AT, &common::OPCODE);
        if self.fs.live && op < 8 && !self.fs.discard {
            let p_end = PAYLOAD_AT + be(&self.hb, HDR_AT, &data::PAYLOAD_LEN) as usize;
            let (k0, s) = (self.p.k0(), self.p.shift());
            if k > k0 {
                let lo = PAYLOAD_AT + (k - k0 - 1) * b;
                let mut d = self.prev[s..].to_vec();
                d.extend_from_slice(&beat.data[..s]);
                if lo + b < p_end {
                    self.axis_fifo.push_back(Beat { data: d, keep: all, last: false, user: false });
                } else if lo < p_end {
                    self.tail = Some(Beat { data: d, keep: keep_mask((p_end - lo).min(b)), last: true, user: false });
                }
            }
            if beat.last && k >= k0 {
                let lo = PAYLOAD_AT + (k - k0) * b;
                if lo < p_end {
                    let mut d = beat.data[s..].to_vec();
                    d.resize(b, 0);
                    self.tail = Some(Beat { data: d, keep: keep_mask((p_end - lo).min(b)), last: true, user: false });
                }
            }
        }
        self.prev.copy_from_slice(&beat.data);
        if let Some(l) = len {
            let reason = self.fs.early.or(self.fs.axi_reason()).or((l < e).then_some(Reason::Truncated));
            self.fin = Some(Fin { live: self.fs.live, reason, crc: self.fs.crc, icrc: self.fs.icrc });
        }
    }
}

impl fmt::Debug for RxParser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RxParser")
            .field("p", &self.p)
            .field("in_idx", &self.in_idx)
            .field("hdr_fifo", &self.hdr_fifo.len())
            .field("axis_fifo", &self.axis_fifo.len())
            .finish_non_exhaustive()
    }
}

fn bits_from_bytes(width: u32, bytes: &[u8]) -> Bits {
    let mut b = Bits::zero(width);
    for (i, &x) in bytes.iter().enumerate() {
        b.0[i / 8] |= (x as u64) << (8 * (i % 8));
    }
    b.truncate(width);
    b
}

fn bytes_from_bits(bits: &Bits, n: usize) -> Vec<u8> {
    (0..n).map(|i| (bits.0.get(i / 8).copied().unwrap_or(0) >> (8 * (i % 8))) as u8).collect()
}

fn u128_of(bits: &Bits) -> u128 {
    bits.0[0] as u128 | ((bits.0.get(1).copied().unwrap_or(0) as u128) << 64)
}

fn bits_of_u128(width: u32, v: u128) -> Bits {
    let mut b = Bits::zero(width);
    b.0[0] = v as u64;
    if b.0.len() > 1 {
        b.0[1] = (v >> 64) as u64;
    }
    b.truncate(width);
    b
}

/// A big-endian byte string as a vector with byte 0 in the top bits.
fn bits_from_be(width: u32, bytes: &[u8]) -> Bits {
    let mut rev = bytes.to_vec();
    rev.reverse();
    bits_from_bytes(width, &rev)
}

/// `m_hdr_raw`'s value as the header's bytes, byte 0 first (the inverse
/// of how the block drives it): what a consumer slices with proto's
/// layouts.
pub fn raw_header(raw: &Bits) -> [u8; RAW_BYTES] {
    let mut b: [u8; RAW_BYTES] = bytes_from_bits(raw, RAW_BYTES).try_into().expect("RAW_BYTES bytes");
    b.reverse();
    b
}

impl Block for RxParser {
    fn name(&self) -> &'static str {
        NAME
    }

    fn ports(&self) -> &[PortDef] {
        &self.ports
    }

    fn eval(&mut self, _inputs: &[Bits], outputs: &mut [Bits]) {
        let o = self.outputs();
        let p = &self.ports;
        let w = |i: usize| p[i].width;
        outputs[port::S_TREADY].set_u64(1, o.s_ready as u64);
        outputs[port::M_HDR_VALID].set_u64(1, o.hdr.is_some() as u64);
        let h = o.hdr.unwrap_or(HdrOut {
            raw: [0; RAW_BYTES],
            ecn: 0,
            udp_sport: 0,
            udp_dport: 0,
            ip_src: 0,
            eth_src: 0,
            plane: 0,
        });
        outputs[port::M_HDR_RAW] = bits_from_be(w(port::M_HDR_RAW), &h.raw);
        for (i, f) in HDR_FIELDS.iter().enumerate() {
            outputs[port::M_HDR_FIELDS + i].set_u64(f.width, h.get(f));
        }
        outputs[port::M_HDR_IMM].set_u64(32, h.get(&data::IMM));
        outputs[port::M_HDR_ECN].set_u64(2, h.ecn as u64);
        outputs[port::M_HDR_SPORT].set_u64(16, h.udp_sport as u64);
        outputs[port::M_HDR_DPORT].set_u64(16, h.udp_dport as u64);
        outputs[port::M_HDR_IP_SRC].set_u64(32, h.ip_src as u64);
        outputs[port::M_HDR_ETH_SRC].set_u64(48, h.eth_src);
        outputs[port::M_HDR_PLANE].set_u64(PLANE_BITS, h.plane as u64);
        let axis_valid = o.axis.is_some();
        let a = o.axis.unwrap_or_default();
        outputs[port::M_TDATA] = bits_from_bytes(w(port::M_TDATA), &a.data);
        outputs[port::M_TKEEP] = bits_of_u128(w(port::M_TKEEP), a.keep);
        outputs[port::M_TVALID].set_u64(1, axis_valid as u64);
        outputs[port::M_TLAST].set_u64(1, a.last as u64);
        outputs[port::M_TUSER].set_u64(1, a.user as u64);
        for i in 0..Reason::ALL.len() {
            outputs[port::STAT + i].set_u64(1, (o.stat >> i) as u64 & 1);
        }
    }

    fn tick(&mut self, inputs: &[Bits]) {
        let b = self.p.bytes();
        let mut s = std::mem::take(&mut self.scratch);
        s.rst = inputs[port::RST].bit(0);
        s.s_valid = inputs[port::S_TVALID].bit(0);
        s.s_beat.data = bytes_from_bits(&inputs[port::S_TDATA], b);
        s.s_beat.keep = u128_of(&inputs[port::S_TKEEP]);
        s.s_beat.last = inputs[port::S_TLAST].bit(0);
        s.s_beat.user = inputs[port::S_TUSER].bit(0);
        s.s_tid = inputs[port::S_TID].as_u64() as u8;
        s.cfg_udp_port = inputs[port::CFG_UDP_PORT].as_u64() as u16;
        s.hdr_ready = inputs[port::M_HDR_READY].bit(0);
        s.axis_ready = inputs[port::M_TREADY].bit(0);
        self.clock(&s);
        self.scratch = s;
    }
}

/// Seeded stimulus shared by the model, HDL and lockstep tests: random
/// valid frames of every opcode encoded by proto (data, and the control
/// frames a receiver takes as often: SACKs with bitmaps and counts at
/// their edges, NACKs of every code, PROBEs), single-fault corruptions
/// with the reason they must be dropped for (control frames take the
/// faults data frames do, and their own: a datagram whose length
/// disagrees with its opcode, a PROBE from the transport port, a NACK
/// code not in the table), and beat splitting.
pub mod stimulus {
    use super::{keep_mask, Beat, Reason, HDR_AT, IP_AT, UDP_AT};
    use mrnic_proto::field::{Only, Rule};
    use mrnic_proto::headers::{
        Bitmap256, DataHeader, Flags, Header, NackCode, NackHeader, Opcode, Placement, ProbeHeader, SackHeader,
    };
    use mrnic_proto::layouts::{common, data, ipv4, nack, probe, sack, udp, ICRC_LEN};
    use mrnic_proto::packet::{encode_frame, icrc, ipv4_checksum, wrap_datagram, NetHeaders};

    /// Shortest Ethernet frame without FCS: a MAC pads shorter ones to it.
    pub const MIN_FRAME: usize = 60;

    /// xorshift64*: deterministic, seeded.
    #[derive(Debug, Clone)]
    pub struct Rng(pub u64);
    impl Rng {
        pub fn new(seed: u64) -> Rng {
            Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
        }
        pub fn next_u64(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        pub fn below(&mut self, n: u64) -> u64 {
            self.next_u64() % n
        }
        pub fn chance(&mut self, percent: u64) -> bool {
            self.below(100) < percent
        }
    }

    /// A frame to send, as bytes plus stream-level damage.
    #[derive(Debug, Clone)]
    pub struct Stim {
        pub bytes: Vec<u8>,
        /// Expected verdict: `None` = accepted.
        pub expect: Option<Reason>,
        /// Set `tuser` on this beat.
        pub mac_error_beat: Option<usize>,
        /// Clear this keep bit of this non-last beat.
        pub keep_hole: Option<(usize, usize)>,
        /// Leave tlast off (the bytes run past the maximum frame).
        pub no_tlast_until_end: bool,
    }

    fn payload_len(rng: &mut Rng, mtu: u32) -> usize {
        match rng.below(6) {
            0 => 0,
            1 => rng.below(16) as usize,
            // A quarter of the MTU-sized ones overrun it by a byte: the
            // header passes, the payload is discarded.
            2 => mtu as usize + usize::from(rng.below(4) == 0),
            3 => mtu as usize - rng.below(8) as usize,
            _ => rng.below(mtu as u64 + 1) as usize,
        }
    }

    /// Any value of `bits` bits.
    fn any(rng: &mut Rng, bits: u32) -> u64 {
        rng.next_u64() & (u64::MAX >> (64 - bits))
    }

    /// A value of `bits` bits at an edge an eighth of the time each (zero:
    /// a psn or msn at the wrap, no ECN marks, a zero rate hint; all ones:
    /// the last psn before it, a saturated count, line rate), any value
    /// otherwise.
    fn edgy(rng: &mut Rng, bits: u32) -> u64 {
        match rng.below(8) {
            0 => 0,
            1 => u64::MAX >> (64 - bits),
            _ => any(rng, bits),
        }
    }

    /// A SACK bitmap as receivers send them: nothing received past
    /// `cum_psn`, the whole window, a run from `cum_psn + 1` (everything
    /// up to one hole), a single packet, a few scattered ones, or any.
    fn sack_bitmap(rng: &mut Rng) -> Bitmap256 {
        let mut b = Bitmap256::default();
        match rng.below(6) {
            0 => {}
            1 => b = Bitmap256([u64::MAX; 4]),
            2 => (0..rng.below(257) as u32).for_each(|i| b.set(i)),
            3 => b.set(rng.below(256) as u32),
            4 => {
                for _ in 0..1 + rng.below(8) {
                    b.set(rng.below(256) as u32);
                }
            }
            _ => b = Bitmap256([rng.next_u64(), rng.next_u64(), rng.next_u64(), rng.next_u64()]),
        }
        b
    }

    /// A random valid header with `n` payload bytes (if data): 60% data,
    /// 40% control ([`control_header`]), as a port that sends as well as
    /// receives takes in the answers to what it sends among the data it
    /// receives.
    pub fn random_header(rng: &mut Rng, n: usize) -> Header {
        if rng.below(10) < 6 {
            data_header(rng, n)
        } else {
            control_header(rng)
        }
    }

    /// A random valid data header (WRITE, WRITE_IMM, SEND, SEND_IMM) with
    /// `n` payload bytes.
    pub fn data_header(rng: &mut Rng, n: usize) -> Header {
        let r = |rng: &mut Rng, bits: u32| any(rng, bits) as u32;
        let send = rng.chance(50);
        let place = if send {
            Placement::Send { rq_seq: r(rng, 24), msg_offset: r(rng, 32) }
        } else {
            Placement::Write { rkey: r(rng, 32), addr: rng.next_u64() }
        };
        Header::Data(DataHeader {
            flags: Flags {
                som: rng.chance(50),
                eom: rng.chance(50),
                retx: rng.chance(20),
                ackreq: rng.chance(20),
                se: rng.chance(20),
            },
            payload_len: n as u16,
            dst_conn: r(rng, 24),
            path_id: r(rng, 8) as u8,
            path_psn: r(rng, 24),
            path_gen: r(rng, 8) as u8,
            stream_id: r(rng, 8) as u8,
            msn: r(rng, 24),
            msg_len: r(rng, 32),
            place,
            tx_ts: r(rng, 16) as u16,
            imm: rng.chance(50).then(|| r(rng, 32)),
        })
    }

    /// A random valid control header: half SACKs (bitmaps of every shape,
    /// ECN counts, echoed timestamps and rate hints at their edges), a
    /// quarter NACKs (every code in proto's table), a quarter PROBEs. The
    /// protocol has no PROBE reply: a PROBE is answered by a SACK.
    pub fn control_header(rng: &mut Rng) -> Header {
        let r = |rng: &mut Rng, bits: u32| any(rng, bits) as u32;
        let e = |rng: &mut Rng, bits: u32| edgy(rng, bits) as u32;
        match rng.below(4) {
            0 | 1 => Header::Sack(SackHeader {
                rate_hint: e(rng, 16) as u16,
                dst_conn: r(rng, 24),
                path_id: r(rng, 8) as u8,
                path_gen: r(rng, 8) as u8,
                cum_psn: e(rng, 24),
                stream_id: r(rng, 8) as u8,
                completed_msn: e(rng, 24),
                echo_ts: e(rng, 16) as u16,
                ecn_cnt: e(rng, 8) as u8,
                bitmap: sack_bitmap(rng),
            }),
            2 => Header::Nack(NackHeader {
                code: NackCode::ALL[rng.below(NackCode::ALL.len() as u64) as usize],
                dst_conn: r(rng, 24),
                path_id: r(rng, 8) as u8,
                path_gen: r(rng, 8) as u8,
                path_psn: e(rng, 24),
                stream_id: r(rng, 8) as u8,
                msn: e(rng, 24),
                echo_ts: e(rng, 16) as u16,
            }),
            _ => Header::Probe(ProbeHeader {
                tx_ts: e(rng, 16) as u16,
                dst_conn: r(rng, 24),
                path_id: r(rng, 8) as u8,
                path_gen: r(rng, 8) as u8,
                path_psn: e(rng, 24),
            }),
        }
    }

    /// An answer (SACK, NACK): the opcodes that may come from the
    /// transport port to any port.
    fn is_answer(op: u64) -> bool {
        matches!(Opcode::from_u8(op as u8), Some(Opcode::Sack | Opcode::Nack))
    }

    /// Addresses, ports and ECN of a frame carrying `h`: data and PROBEs
    /// from an entropy port to `udp_port`; half the answers as on the wire,
    /// from `udp_port` to the entropy port of the path they answer, the
    /// other half to `udp_port`.
    fn random_net(rng: &mut Rng, h: &Header, udp_port: u16) -> NetHeaders {
        let answer = is_answer(h.opcode() as u64) && rng.below(2) == 0;
        let (src_port, dst_port) =
            if answer { (udp_port, rng.next_u64() as u16) } else { (rng.next_u64() as u16, udp_port) };
        NetHeaders {
            ecn: rng.below(4) as u8,
            src_port,
            dst_port,
            ident: rng.next_u64() as u16,
            src_ip: (rng.next_u64() as u32).to_be_bytes(),
            src_mac: rng.next_u64().to_be_bytes()[2..].try_into().expect("6 bytes"),
            ..NetHeaders::default()
        }
    }

    /// The UDP checksum sent as 0 ("not computed"), which proto accepts,
    /// so that corruptions of the transport bytes are judged by the
    /// transport checks.
    fn no_udp_checksum(f: &mut [u8]) {
        udp::CHECKSUM.set(&mut f[UDP_AT..], 0);
    }

    /// A random valid frame for `udp_port`: data and PROBEs to it, half the
    /// answers from it to an entropy port, the other half to it; no UDP
    /// checksum.
    pub fn random_frame(rng: &mut Rng, mtu: u32, udp_port: u16) -> Vec<u8> {
        let h0 = random_header(rng, 0);
        let n = if matches!(h0, Header::Data(_)) { payload_len(rng, mtu) } else { 0 };
        let h = match h0 {
            Header::Data(d) => Header::Data(DataHeader { payload_len: n as u16, ..d }),
            other => other,
        };
        let payload: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
        let net = random_net(rng, &h, udp_port);
        let mut out = Vec::new();
        encode_frame(&net, &h, &payload, &mut out).expect("valid header");
        no_udp_checksum(&mut out);
        out
    }

    /// A control frame whose datagram disagrees with its opcode: a valid
    /// SACK, NACK or PROBE header padded with random bytes (`longer`: its
    /// `length` is wrong) or cut (`truncated`), half the time to another
    /// control opcode's header length, then the ICRC of those bytes, in a
    /// frame with consistent IPv4 and UDP lengths and checksums (proto's
    /// `wrap_datagram`), padded to [`MIN_FRAME`] as a MAC pads it.
    ///
    /// A cut keeps the ICRC clear of the header's last bytes: proto's
    /// decoder would read a header that the ICRC completes, and name a
    /// reserved field the ICRC bytes fill before the missing ICRC, where
    /// the parser counts the short datagram `truncated` first (the same
    /// one fault, seen in two orders).
    pub fn misfit_control(rng: &mut Rng, udp_port: u16, longer: bool) -> Vec<u8> {
        let lens = [sack::LAYOUT.len, nack::LAYOUT.len, probe::LAYOUT.len];
        loop {
            let h = control_header(rng);
            let hl = h.len();
            let len = if rng.chance(50) {
                lens[rng.below(lens.len() as u64) as usize]
            } else if longer {
                hl + 1 + rng.below(64) as usize
            } else {
                1 + rng.below(hl as u64) as usize
            };
            if (longer && len <= hl) || (!longer && len + ICRC_LEN >= hl) {
                continue;
            }
            let mut d = vec![0; hl];
            h.encode(&mut d).expect("valid header");
            d.truncate(len);
            while d.len() < len {
                d.push(rng.next_u64() as u8);
            }
            d.extend_from_slice(&icrc(&d).to_be_bytes());
            let mut f = Vec::new();
            wrap_datagram(&random_net(rng, &h, udp_port), &d, &mut f).expect("short frame");
            no_udp_checksum(&mut f);
            if f.len() < MIN_FRAME {
                f.resize(MIN_FRAME, 0);
            }
            return f;
        }
    }

    fn fix_ip(f: &mut [u8]) {
        ipv4::CHECKSUM.set(&mut f[IP_AT..], 0);
        let c = ipv4_checksum(&f[IP_AT..IP_AT + 20]);
        ipv4::CHECKSUM.set(&mut f[IP_AT..], c as u64);
    }

    /// proto's verdict on a frame, in this block's reasons, plus the check
    /// proto leaves to the receiver (the UDP port).
    pub fn reference(frame: &[u8], udp_port: u16) -> Option<Reason> {
        mrnic_proto::drop::frame_verdict(frame, udp_port, &mut Vec::new()).err()
    }

    /// proto's decode errors as drop reasons.
    pub use mrnic_proto::drop::reason_of as map_error;

    /// A frame damaged in one way, with the reason it must be dropped for.
    /// Any frame [`random_frame`] makes may be the one damaged, control
    /// frames included; `truncated`, `length`, `udp_port`, `invalid` and
    /// `icrc` have cases of their own for control frames.
    pub fn faulty(rng: &mut Rng, reason: Reason, mtu: u32, udp_port: u16, bytes: usize) -> Stim {
        let mut f = random_frame(rng, mtu, udp_port);
        // To the transport port: an answer to another port whose opcode a
        // fault changes would be dropped for its port first.
        udp::DST_PORT.set(&mut f[UDP_AT..], udp_port as u64);
        let mut s = Stim {
            bytes: Vec::new(),
            expect: Some(reason),
            mac_error_beat: None,
            keep_hole: None,
            no_tlast_until_end: false,
        };
        let op = |f: &[u8]| common::OPCODE.get(&f[HDR_AT..]);
        match reason {
            Reason::MacError => s.mac_error_beat = Some(rng.below(f.len().div_ceil(bytes) as u64) as usize),
            Reason::Tkeep => {
                while f.len() <= bytes {
                    f = random_frame(rng, mtu, udp_port);
                }
                let beats = f.len().div_ceil(bytes);
                s.keep_hole = Some((rng.below(beats as u64 - 1) as usize, rng.below(bytes as u64) as usize));
            }
            Reason::Oversize => {
                let max = (super::PAYLOAD_AT + mtu as usize + 4).div_ceil(bytes) * bytes;
                while f.len() <= max {
                    f.push(rng.next_u64() as u8);
                }
                s.no_tlast_until_end = true;
            }
            Reason::Truncated => {
                if rng.chance(25) {
                    // A control datagram shorter than its opcode's header.
                    f = misfit_control(rng, udp_port, false);
                } else {
                    let n = 1 + rng.below(f.len() as u64 - 1) as usize;
                    f.truncate(n);
                }
            }
            Reason::Ethertype => f[12] ^= 1 + rng.below(255) as u8,
            Reason::IpHeader => {
                match rng.below(5) {
                    0 => f[IP_AT] = (f[IP_AT] & 0x0f) | ((1 + rng.below(15) as u8) ^ 4) << 4,
                    1 => {
                        let v = rng.below(15) as u8;
                        f[IP_AT] = 0x40 | if v >= 5 { v + 1 } else { v };
                    }
                    2 => f[IP_AT + 6] |= 0x80,
                    3 => f[IP_AT + 6] |= 0x20 | rng.below(2) as u8,
                    _ => f[IP_AT + 9] ^= 1 + rng.below(255) as u8,
                }
                fix_ip(&mut f);
            }
            Reason::IpChecksum => f[IP_AT + 10 + rng.below(2) as usize] ^= 1 + rng.below(255) as u8,
            Reason::Length => match rng.below(4) {
                0 => {
                    let v = udp::LENGTH.get(&f[UDP_AT..]) ^ (1 + rng.below(255));
                    udp::LENGTH.set(&mut f[UDP_AT..], v);
                }
                1 => {
                    ipv4::TOTAL_LEN.set(&mut f[IP_AT..], rng.below(28));
                    fix_ip(&mut f);
                }
                2 => {
                    while op(&f) >= 8 {
                        f = random_frame(rng, mtu, udp_port);
                    }
                    let v = data::PAYLOAD_LEN.get(&f[HDR_AT..]) ^ (1 + rng.below(1023));
                    data::PAYLOAD_LEN.set(&mut f[HDR_AT..], v);
                }
                // A control datagram longer than its opcode's header.
                _ => f = misfit_control(rng, udp_port, true),
            },
            Reason::UdpPort => {
                if rng.chance(30) {
                    // From the transport port to another: only an answer
                    // may come that way, not data or a PROBE.
                    while is_answer(op(&f)) {
                        f = random_frame(rng, mtu, udp_port);
                    }
                    udp::SRC_PORT.set(&mut f[UDP_AT..], udp_port as u64);
                    udp::DST_PORT.set(&mut f[UDP_AT..], (udp_port ^ (1 + rng.below(65535) as u16)) as u64);
                } else {
                    // Neither to the transport port nor from it (an answer
                    // from it passes to any port).
                    for field in [&udp::DST_PORT, &udp::SRC_PORT] {
                        let v = udp_port ^ (1 + rng.below(65535) as u16);
                        field.set(&mut f[UDP_AT..], v as u64);
                    }
                }
            }
            Reason::Version => common::VER.set(&mut f[HDR_AT..], 1 + rng.below(15)),
            Reason::Opcode => {
                let bad: Vec<u64> =
                    (0..1u64 << common::OPCODE.width).filter(|&v| Opcode::from_u8(v as u8).is_none()).collect();
                common::OPCODE.set(&mut f[HDR_AT..], bad[rng.below(bad.len() as u64) as usize]);
            }
            Reason::Reserved => {
                let op = op(&f);
                let layout = super::layout_of(op).expect("valid");
                let view = if op == 2 || op == 3 { Only::Send } else { Only::Write };
                let res: Vec<_> = layout
                    .fields
                    .iter()
                    .filter(|x| x.rule == Rule::Reserved && (x.only == Only::All || x.only == view))
                    .collect();
                let fl = res[rng.below(res.len() as u64) as usize];
                let bit = rng.below(fl.width as u64);
                fl.set(&mut f[HDR_AT..], 1 << bit);
            }
            Reason::Invalid => loop {
                let op = op(&f);
                if op == 0 || op == 2 {
                    data::IMM.set(&mut f[HDR_AT..], 1 + rng.below(1000));
                    break;
                }
                if op == Opcode::Nack as u64 {
                    // Any code not in proto's table.
                    let mut c = 0;
                    while NackCode::from_u8(c).is_some() {
                        c = rng.below(256) as u8;
                    }
                    nack::CODE.set(&mut f[HDR_AT..], c as u64);
                    break;
                }
                f = random_frame(rng, mtu, udp_port);
            },
            Reason::Icrc => {
                // One bit of the transport bytes or the ICRC, anywhere the
                // header checks do not look first (proto decides): the
                // short control headers as well as data headers and
                // payloads.
                let n = (f.len() - HDR_AT) as u64;
                loop {
                    let (i, bit) = (HDR_AT + rng.below(n) as usize, 1u8 << rng.below(8));
                    f[i] ^= bit;
                    if reference(&f, udp_port) == Some(Reason::Icrc) {
                        break;
                    }
                    f[i] ^= bit;
                }
            }
        }
        s.bytes = f;
        s
    }

    /// A valid frame as a stimulus.
    pub fn good(rng: &mut Rng, mtu: u32, udp_port: u16) -> Stim {
        Stim {
            bytes: random_frame(rng, mtu, udp_port),
            expect: None,
            mac_error_beat: None,
            keep_hole: None,
            no_tlast_until_end: false,
        }
    }

    /// The beats of a stimulus (`bytes` per beat; lanes past the frame are
    /// random, as a MAC may leave them).
    pub fn beats(s: &Stim, bytes: usize, rng: &mut Rng) -> Vec<Beat> {
        let n = s.bytes.len().div_ceil(bytes);
        (0..n)
            .map(|i| {
                let chunk = &s.bytes[i * bytes..((i + 1) * bytes).min(s.bytes.len())];
                let mut data = chunk.to_vec();
                while data.len() < bytes {
                    data.push(rng.next_u64() as u8);
                }
                let mut keep = keep_mask(chunk.len());
                if s.keep_hole.is_some_and(|(b, _)| b == i) {
                    keep &= !(1u128 << s.keep_hole.unwrap().1);
                }
                Beat { data, keep, last: i == n - 1, user: s.mac_error_beat == Some(i) }
            })
            .collect()
    }
}

/// Unused-layout guard: every transport layout fits the raw port.
const _: () = assert!(data::LAYOUT.len <= RAW_BYTES && nack::LAYOUT.len <= RAW_BYTES && probe::LAYOUT.len <= RAW_BYTES);
