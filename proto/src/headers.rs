//! Typed transport headers and their bit-exact encode and decode, driven by
//! the field table in [`crate::layouts`].

use serde::{Deserialize, Serialize};

use crate::error::{DecodeError, EncodeError, Problem};
use crate::field::{Field, Layout, Rule};
use crate::layouts::{common, data, nack, probe, sack};

/// Protocol version carried in every header.
pub const VERSION: u8 = 0;

/// Transport opcodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Opcode {
    Write = 0,
    WriteImm = 1,
    Send = 2,
    SendImm = 3,
    Sack = 8,
    Nack = 9,
    Probe = 10,
}

impl Opcode {
    pub const ALL: [Opcode; 7] =
        [Opcode::Write, Opcode::WriteImm, Opcode::Send, Opcode::SendImm, Opcode::Sack, Opcode::Nack, Opcode::Probe];

    pub fn from_u8(v: u8) -> Option<Opcode> {
        Opcode::ALL.into_iter().find(|o| *o as u8 == v)
    }

    pub fn name(self) -> &'static str {
        match self {
            Opcode::Write => "WRITE",
            Opcode::WriteImm => "WRITE_IMM",
            Opcode::Send => "SEND",
            Opcode::SendImm => "SEND_IMM",
            Opcode::Sack => "SACK",
            Opcode::Nack => "NACK",
            Opcode::Probe => "PROBE",
        }
    }

    /// The header layout that follows this opcode.
    pub fn layout(self) -> &'static Layout {
        match self {
            Opcode::Write | Opcode::WriteImm | Opcode::Send | Opcode::SendImm => &data::LAYOUT,
            Opcode::Sack => &sack::LAYOUT,
            Opcode::Nack => &nack::LAYOUT,
            Opcode::Probe => &probe::LAYOUT,
        }
    }

    pub fn is_data(self) -> bool {
        (self as u8) < 8
    }
}

/// NACK reasons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum NackCode {
    /// SEND with no receive posted at its rq_seq.
    Rnr = 1,
    /// WRITE with an unknown rkey or outside its region; SEND beyond the
    /// posted receive's length.
    Access = 2,
    /// No such connection.
    NoConn = 3,
    /// A header the receiver could parse but not accept (stale generation,
    /// psn outside the window, inconsistent lengths).
    BadHdr = 4,
}

impl NackCode {
    pub const ALL: [NackCode; 4] = [NackCode::Rnr, NackCode::Access, NackCode::NoConn, NackCode::BadHdr];

    pub fn from_u8(v: u8) -> Option<NackCode> {
        NackCode::ALL.into_iter().find(|c| *c as u8 == v)
    }

    pub fn name(self) -> &'static str {
        match self {
            NackCode::Rnr => "RNR",
            NackCode::Access => "ACCESS",
            NackCode::NoConn => "NO_CONN",
            NackCode::BadHdr => "BAD_HDR",
        }
    }
}

/// Flags of a data header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash, Serialize, Deserialize)]
pub struct Flags {
    pub som: bool,
    pub eom: bool,
    pub retx: bool,
    pub ackreq: bool,
    pub se: bool,
}

/// Where a data packet's payload goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Placement {
    /// Direct placement at a virtual address inside the region of `rkey`.
    Write { rkey: u32, addr: u64 },
    /// Into the receive posted at `rq_seq`, at `msg_offset` within the message.
    Send { rq_seq: u32, msg_offset: u32 },
}

/// The 40-byte header of WRITE, WRITE_IMM, SEND and SEND_IMM packets. The
/// opcode follows from `place` and `imm`, so an inconsistent header cannot
/// be built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DataHeader {
    pub flags: Flags,
    pub payload_len: u16,
    pub dst_conn: u32,
    pub path_id: u8,
    pub path_psn: u32,
    pub path_gen: u8,
    pub stream_id: u8,
    pub msn: u32,
    pub msg_len: u32,
    pub place: Placement,
    pub tx_ts: u16,
    /// Immediate data: `Some` makes the opcode WRITE_IMM or SEND_IMM.
    pub imm: Option<u32>,
}

impl DataHeader {
    pub fn opcode(&self) -> Opcode {
        match (self.place, self.imm) {
            (Placement::Write { .. }, None) => Opcode::Write,
            (Placement::Write { .. }, Some(_)) => Opcode::WriteImm,
            (Placement::Send { .. }, None) => Opcode::Send,
            (Placement::Send { .. }, Some(_)) => Opcode::SendImm,
        }
    }
}

/// 256-bit SACK bitmap: bit i stands for psn `cum_psn + 1 + i`. Word 0 holds
/// bits 0..63.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash, Serialize, Deserialize)]
pub struct Bitmap256(pub [u64; 4]);

impl Bitmap256 {
    pub const BITS: u32 = 256;

    pub fn get(&self, i: u32) -> bool {
        i < 256 && (self.0[(i / 64) as usize] >> (i % 64)) & 1 == 1
    }

    pub fn set(&mut self, i: u32) {
        debug_assert!(i < 256);
        self.0[(i / 64) as usize] |= 1 << (i % 64);
    }

    pub fn count(&self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.0 == [0; 4]
    }

    /// The set bits, lowest first.
    pub fn ones(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().enumerate().flat_map(|(w, &word)| {
            let mut rest = word;
            std::iter::from_fn(move || {
                (rest != 0).then(|| {
                    let b = rest.trailing_zeros();
                    rest &= rest - 1;
                    w as u32 * 64 + b
                })
            })
        })
    }

    /// Highest set bit, if any.
    pub fn highest(&self) -> Option<u32> {
        (0..4).rev().find(|&w| self.0[w] != 0).map(|w| w as u32 * 64 + 63 - self.0[w].leading_zeros())
    }

    /// Shifts toward bit 0 by `n` (the window advanced by `n` psns).
    pub fn shift_down(&self, n: u32) -> Bitmap256 {
        if n >= 256 {
            return Bitmap256::default();
        }
        let (words, bits) = ((n / 64) as usize, n % 64);
        let mut out = [0u64; 4];
        for (i, o) in out.iter_mut().enumerate() {
            let lo = self.0.get(i + words).copied().unwrap_or(0);
            let hi = self.0.get(i + words + 1).copied().unwrap_or(0);
            *o = if bits == 0 { lo } else { (lo >> bits) | (hi << (64 - bits)) };
        }
        Bitmap256(out)
    }

    /// Big-endian wire bytes: the 256-bit number with bit i of weight 2^i.
    pub fn to_be_bytes(&self) -> [u8; 32] {
        let mut out = [0u8; 32];
        for (w, chunk) in out.chunks_exact_mut(8).enumerate() {
            chunk.copy_from_slice(&self.0[3 - w].to_be_bytes());
        }
        out
    }

    pub fn from_be_bytes(b: &[u8]) -> Bitmap256 {
        let mut words = [0u64; 4];
        for (w, chunk) in b.chunks_exact(8).take(4).enumerate() {
            words[3 - w] = u64::from_be_bytes(chunk.try_into().expect("8-byte chunk"));
        }
        Bitmap256(words)
    }
}

/// Selective acknowledgement for one (connection, path).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash, Serialize, Deserialize)]
pub struct SackHeader {
    pub rate_hint: u16,
    /// The acked sender's connection id (this SACK's receiver).
    pub dst_conn: u32,
    pub path_id: u8,
    pub path_gen: u8,
    pub cum_psn: u32,
    pub stream_id: u8,
    pub completed_msn: u32,
    pub echo_ts: u16,
    pub ecn_cnt: u8,
    pub bitmap: Bitmap256,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct NackHeader {
    pub code: NackCode,
    pub dst_conn: u32,
    pub path_id: u8,
    pub path_gen: u8,
    pub path_psn: u32,
    pub stream_id: u8,
    pub msn: u32,
    pub echo_ts: u16,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash, Serialize, Deserialize)]
pub struct ProbeHeader {
    pub tx_ts: u16,
    pub dst_conn: u32,
    pub path_id: u8,
    pub path_gen: u8,
    pub path_psn: u32,
}

/// Any transport header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Header {
    Data(DataHeader),
    Sack(SackHeader),
    Nack(NackHeader),
    Probe(ProbeHeader),
}

impl Header {
    pub fn opcode(&self) -> Opcode {
        match self {
            Header::Data(d) => d.opcode(),
            Header::Sack(_) => Opcode::Sack,
            Header::Nack(_) => Opcode::Nack,
            Header::Probe(_) => Opcode::Probe,
        }
    }

    pub fn len(&self) -> usize {
        self.opcode().layout().len
    }

    pub fn is_empty(&self) -> bool {
        false
    }

    pub fn dst_conn(&self) -> u32 {
        match self {
            Header::Data(h) => h.dst_conn,
            Header::Sack(h) => h.dst_conn,
            Header::Nack(h) => h.dst_conn,
            Header::Probe(h) => h.dst_conn,
        }
    }

    pub fn path_id(&self) -> u8 {
        match self {
            Header::Data(h) => h.path_id,
            Header::Sack(h) => h.path_id,
            Header::Nack(h) => h.path_id,
            Header::Probe(h) => h.path_id,
        }
    }

    /// Payload bytes the header announces (0 for control packets).
    pub fn payload_len(&self) -> usize {
        match self {
            Header::Data(h) => h.payload_len as usize,
            _ => 0,
        }
    }

    /// Writes the header into `out[..self.len()]`. `out` must be at least
    /// that long.
    pub fn encode(&self, out: &mut [u8]) -> Result<(), EncodeError> {
        let layout = self.opcode().layout();
        let out = &mut out[..layout.len];
        out.fill(0);
        let mut w = Writer { layout, buf: out };
        w.put(&common::VER, VERSION as u64)?;
        w.put(&common::OPCODE, self.opcode() as u64)?;
        match self {
            Header::Data(h) => {
                w.put(&data::SOM, h.flags.som as u64)?;
                w.put(&data::EOM, h.flags.eom as u64)?;
                w.put(&data::RETX, h.flags.retx as u64)?;
                w.put(&data::ACKREQ, h.flags.ackreq as u64)?;
                w.put(&data::SE, h.flags.se as u64)?;
                w.put(&data::PAYLOAD_LEN, h.payload_len as u64)?;
                w.put(&data::DST_CONN, h.dst_conn as u64)?;
                w.put(&data::PATH_ID, h.path_id as u64)?;
                w.put(&data::PATH_PSN, h.path_psn as u64)?;
                w.put(&data::PATH_GEN, h.path_gen as u64)?;
                w.put(&data::STREAM_ID, h.stream_id as u64)?;
                w.put(&data::MSN, h.msn as u64)?;
                w.put(&data::MSG_LEN, h.msg_len as u64)?;
                match h.place {
                    Placement::Write { rkey, addr } => {
                        w.put(&data::RKEY, rkey as u64)?;
                        w.put(&data::ADDR, addr)?;
                    }
                    Placement::Send { rq_seq, msg_offset } => {
                        w.put(&data::RQ_SEQ, rq_seq as u64)?;
                        w.put(&data::MSG_OFFSET, msg_offset as u64)?;
                    }
                }
                w.put(&data::TX_TS, h.tx_ts as u64)?;
                w.put(&data::IMM, h.imm.unwrap_or(0) as u64)?;
            }
            Header::Sack(h) => {
                w.put(&sack::RATE_HINT, h.rate_hint as u64)?;
                w.put(&sack::DST_CONN, h.dst_conn as u64)?;
                w.put(&sack::PATH_ID, h.path_id as u64)?;
                w.put(&sack::CUM_PSN, h.cum_psn as u64)?;
                w.put(&sack::PATH_GEN, h.path_gen as u64)?;
                w.put(&sack::STREAM_ID, h.stream_id as u64)?;
                w.put(&sack::COMPLETED_MSN, h.completed_msn as u64)?;
                w.put(&sack::ECHO_TS, h.echo_ts as u64)?;
                w.put(&sack::ECN_CNT, h.ecn_cnt as u64)?;
                let b = &sack::BITMAP;
                w.buf[b.offset..b.end_byte()].copy_from_slice(&h.bitmap.to_be_bytes());
            }
            Header::Nack(h) => {
                w.put(&nack::CODE, h.code as u64)?;
                w.put(&nack::DST_CONN, h.dst_conn as u64)?;
                w.put(&nack::PATH_ID, h.path_id as u64)?;
                w.put(&nack::PATH_PSN, h.path_psn as u64)?;
                w.put(&nack::PATH_GEN, h.path_gen as u64)?;
                w.put(&nack::STREAM_ID, h.stream_id as u64)?;
                w.put(&nack::MSN, h.msn as u64)?;
                w.put(&nack::ECHO_TS, h.echo_ts as u64)?;
            }
            Header::Probe(h) => {
                w.put(&probe::TX_TS, h.tx_ts as u64)?;
                w.put(&probe::DST_CONN, h.dst_conn as u64)?;
                w.put(&probe::PATH_ID, h.path_id as u64)?;
                w.put(&probe::PATH_PSN, h.path_psn as u64)?;
                w.put(&probe::PATH_GEN, h.path_gen as u64)?;
            }
        }
        Ok(())
    }

    /// Decodes a transport header from the start of `buf` (which may hold
    /// payload after it). Checks version, opcode, reserved fields and the
    /// opcode's own rules; lengths against the frame are checked by the
    /// datagram decoder, which knows where the payload ends.
    pub fn decode(buf: &[u8]) -> Result<Header, DecodeError> {
        let have = buf.len();
        if have < 1 {
            return Err(err(&data::LAYOUT, &common::VER, Problem::Truncated { need: 1, have }));
        }
        let ver = common::VER.get(buf);
        if ver != VERSION as u64 {
            return Err(err(&data::LAYOUT, &common::VER, Problem::Unsupported { value: ver }));
        }
        let op = common::OPCODE.get(buf);
        let opcode = Opcode::from_u8(op as u8)
            .ok_or_else(|| err(&data::LAYOUT, &common::OPCODE, Problem::UnknownOpcode { value: op }))?;
        let layout = opcode.layout();
        if have < layout.len {
            return Err(DecodeError {
                layout: layout.name,
                field: first_field_past(layout, have),
                offset: have,
                problem: Problem::Truncated { need: layout.len, have },
            });
        }
        let view = if matches!(opcode, Opcode::Send | Opcode::SendImm) {
            crate::field::Only::Send
        } else {
            crate::field::Only::Write
        };
        for fld in layout.fields {
            if fld.rule == Rule::Reserved && (fld.only == crate::field::Only::All || fld.only == view) {
                let v = fld.get(buf);
                if v != 0 {
                    return Err(err(layout, fld, Problem::ReservedSet { value: v }));
                }
            }
        }
        let g = |f: &Field| f.get(buf);
        Ok(match opcode {
            Opcode::Write | Opcode::WriteImm | Opcode::Send | Opcode::SendImm => {
                let has_imm = matches!(opcode, Opcode::WriteImm | Opcode::SendImm);
                let imm = g(&data::IMM) as u32;
                if !has_imm && imm != 0 {
                    return Err(err(
                        layout,
                        &data::IMM,
                        Problem::Invalid { value: imm as u64, why: "immediate data on an opcode without one" },
                    ));
                }
                let place = if view == crate::field::Only::Send {
                    Placement::Send { rq_seq: g(&data::RQ_SEQ) as u32, msg_offset: g(&data::MSG_OFFSET) as u32 }
                } else {
                    Placement::Write { rkey: g(&data::RKEY) as u32, addr: g(&data::ADDR) }
                };
                Header::Data(DataHeader {
                    flags: Flags {
                        som: g(&data::SOM) == 1,
                        eom: g(&data::EOM) == 1,
                        retx: g(&data::RETX) == 1,
                        ackreq: g(&data::ACKREQ) == 1,
                        se: g(&data::SE) == 1,
                    },
                    payload_len: g(&data::PAYLOAD_LEN) as u16,
                    dst_conn: g(&data::DST_CONN) as u32,
                    path_id: g(&data::PATH_ID) as u8,
                    path_psn: g(&data::PATH_PSN) as u32,
                    path_gen: g(&data::PATH_GEN) as u8,
                    stream_id: g(&data::STREAM_ID) as u8,
                    msn: g(&data::MSN) as u32,
                    msg_len: g(&data::MSG_LEN) as u32,
                    place,
                    tx_ts: g(&data::TX_TS) as u16,
                    imm: has_imm.then_some(imm),
                })
            }
            Opcode::Sack => Header::Sack(SackHeader {
                rate_hint: g(&sack::RATE_HINT) as u16,
                dst_conn: g(&sack::DST_CONN) as u32,
                path_id: g(&sack::PATH_ID) as u8,
                path_gen: g(&sack::PATH_GEN) as u8,
                cum_psn: g(&sack::CUM_PSN) as u32,
                stream_id: g(&sack::STREAM_ID) as u8,
                completed_msn: g(&sack::COMPLETED_MSN) as u32,
                echo_ts: g(&sack::ECHO_TS) as u16,
                ecn_cnt: g(&sack::ECN_CNT) as u8,
                bitmap: Bitmap256::from_be_bytes(sack::BITMAP.bytes(buf)),
            }),
            Opcode::Nack => {
                let c = g(&nack::CODE);
                let code = NackCode::from_u8(c as u8)
                    .ok_or_else(|| err(layout, &nack::CODE, Problem::Invalid { value: c, why: "unknown NACK code" }))?;
                Header::Nack(NackHeader {
                    code,
                    dst_conn: g(&nack::DST_CONN) as u32,
                    path_id: g(&nack::PATH_ID) as u8,
                    path_gen: g(&nack::PATH_GEN) as u8,
                    path_psn: g(&nack::PATH_PSN) as u32,
                    stream_id: g(&nack::STREAM_ID) as u8,
                    msn: g(&nack::MSN) as u32,
                    echo_ts: g(&nack::ECHO_TS) as u16,
                })
            }
            Opcode::Probe => Header::Probe(ProbeHeader {
                tx_ts: g(&probe::TX_TS) as u16,
                dst_conn: g(&probe::DST_CONN) as u32,
                path_id: g(&probe::PATH_ID) as u8,
                path_gen: g(&probe::PATH_GEN) as u8,
                path_psn: g(&probe::PATH_PSN) as u32,
            }),
        })
    }
}

fn err(layout: &Layout, field: &Field, problem: Problem) -> DecodeError {
    DecodeError { layout: layout.name, field: field.name, offset: field.offset, problem }
}

/// The first field that does not fit in `have` bytes: what a truncated
/// header is missing.
fn first_field_past(layout: &Layout, have: usize) -> &'static str {
    layout.fields.iter().find(|f| f.end_byte() > have).map_or("header", |f| f.name)
}

struct Writer<'a> {
    layout: &'static Layout,
    buf: &'a mut [u8],
}

impl Writer<'_> {
    #[inline(always)]
    fn put(&mut self, field: &Field, value: u64) -> Result<(), EncodeError> {
        if value > field.max() {
            return Err(EncodeError {
                layout: self.layout.name,
                field: field.name,
                value,
                why: "wider than the field",
            });
        }
        field.set(self.buf, value);
        Ok(())
    }
}
