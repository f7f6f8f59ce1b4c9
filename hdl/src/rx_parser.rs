//! `rx_parser` RTL: the generator of the cycle model
//! [`mrnic_model::rx_parser`], with the same ports (declared from the
//! model's [`PortDef`] list, plus `clk`) and the same cycle timing. The
//! model's doc comment is the specification: interfaces, the verdict on the
//! last payload beat, latency, one beat per cycle, drop reasons.
//!
//! Structure, in pipeline order:
//! - input handshake: the beat goes into stage A (`a_*`), the header
//!   buffers (`hb_ip`: frame bytes 12..40, `hb_tr`: bytes 42..94) capture
//!   their bytes by beat index (`in_idx`, saturating at the oversize beat);
//! - process stage (stage A valid): the frame state (`fs_*`: stream error
//!   flags, header decision, live, payload discard, raw CRC, ICRC bytes),
//!   the header checks
//!   as one priority chain over slices of the header buffers taken from the
//!   field table (`Field::vector_range`), the `m_hdr` push, the payload
//!   realignment by the constant shift `82 mod (DATA_WIDTH/8)` (`prev` holds
//!   the previous beat) with the last payload beat held in `tail_*`;
//! - finish stage (`fin_*`, the cycle after a tlast beat): the ICRC
//!   correction (the inverse of the trailing zero bytes, one conditional
//!   32x32 matrix per bit of the zero count), the verdict, the last beat
//!   pushed with tuser, the `stat_drop_*` pulse registered;
//! - two 8-entry register FIFOs (`hdr`, `axis`) whose heads drive the
//!   outputs (masked to zero while not valid, as the model shows them).
//!
//! The CRC-32 update of a whole beat is a set of XOR equations computed here
//! from the polynomial ([`crc_equations`]): no table in the Verilog.

use std::collections::HashMap;

use mrnic_model::block::{Dir as ModelDir, PortDef};
use mrnic_model::rx_parser::{
    self as model, ParamError, Reason, RxParserParams, FIFO_DEPTH, FIFO_READY_MAX, HB_BYTES, HDR_AT, HDR_FIELDS, IP_AT,
    PAYLOAD_AT, PLANE_BITS, RAW_BYTES, UDP_AT,
};
use mrnic_proto::field::{Field, Layout, Only, Rule};
use mrnic_proto::headers::Opcode;
use mrnic_proto::layouts::{common, data, eth, ipv4, nack, probe, sack, udp};
use mrnic_proto::Config;

use crate::expr::{cat, lit, mux, zext, Expr, Signal};
use crate::ir::{case, if_then, set, Module, Reg};
use crate::param::{ParamExpr, Size};
use crate::{CheckErrors, Header};

/// Why the block could not be generated for a config.
#[derive(Debug, thiserror::Error)]
pub enum GenError {
    #[error(transparent)]
    Params(#[from] ParamError),
    #[error("{0}")]
    Check(#[from] CheckErrors),
}

/// The file header for `cfg`.
pub fn header(cfg: &Config) -> Header {
    Header::new(
        &format!("mrnic-hdl {}, config {}", model::NAME, cfg.name),
        &format!("mrnic gen --config {} --out DIR", cfg.name),
    )
}

/// The `rx_parser` module for `cfg`, design-rule checked.
pub fn generate(cfg: &Config) -> Result<Module, GenError> {
    let p = RxParserParams::from_config(cfg)?;
    let m = build(&p);
    m.check()?;
    Ok(m)
}

/// The module printed as Verilog, with [`header`].
pub fn verilog(cfg: &Config) -> Result<String, GenError> {
    Ok(generate(cfg)?.to_verilog(&header(cfg))?)
}

const POLY: u32 = 0xEDB8_8320;

/// One zero bit through the reflected CRC register.
fn step(r: u32, m: u32) -> u32 {
    let fb = (r ^ m) & 1;
    (r >> 1) ^ (POLY & fb.wrapping_neg())
}

/// The raw (no initial value, no final XOR) reflected CRC-32 register after
/// `bytes`, from `r`.
pub fn raw_update(mut r: u32, bytes: &[u8]) -> u32 {
    for &b in bytes {
        for i in 0..8 {
            r = step(r, (b as u32 >> i) & 1);
        }
    }
    r
}

/// The inverse of feeding `n` zero bytes.
pub fn unfeed_zeros(mut r: u32, n: usize) -> u32 {
    for _ in 0..8 * n {
        let b = r >> 31;
        r = ((r ^ (POLY & b.wrapping_neg())) << 1) | b;
    }
    r
}

/// XOR equations of the parallel update over `bytes` bytes: for output bit
/// j, the state bits and the data bits (`8 * lane + bit`) it XORs.
pub fn crc_equations(bytes: usize) -> Vec<(Vec<u32>, Vec<u32>)> {
    let mut eq = vec![(Vec::new(), Vec::new()); 32];
    for i in 0..32 {
        let r = raw_update(1 << i, &vec![0; bytes]);
        for (j, e) in eq.iter_mut().enumerate() {
            if r >> j & 1 == 1 {
                e.0.push(i);
            }
        }
    }
    for d in 0..8 * bytes {
        let mut buf = vec![0u8; bytes];
        buf[d / 8] = 1 << (d % 8);
        let r = raw_update(0, &buf);
        for (j, e) in eq.iter_mut().enumerate() {
            if r >> j & 1 == 1 {
                e.1.push(d as u32);
            }
        }
    }
    eq
}

/// Columns of the inverse of `n` zero bytes: output bit j XORs the input
/// bits listed.
pub fn unfeed_equations(n: usize) -> Vec<Vec<u32>> {
    let mut eq = vec![Vec::new(); 32];
    for i in 0..32 {
        let r = unfeed_zeros(1 << i, n);
        for (j, e) in eq.iter_mut().enumerate() {
            if r >> j & 1 == 1 {
                e.push(i);
            }
        }
    }
    eq
}

fn xor_of(bits: Vec<Expr>) -> Expr {
    if bits.is_empty() {
        lit(1, 0)
    } else if bits.len() == 1 {
        bits.into_iter().next().expect("one")
    } else {
        cat(&bits).reduce_xor()
    }
}

fn or_all(v: Vec<Expr>) -> Expr {
    v.into_iter().reduce(|a, b| a.logic_or(b)).unwrap_or(lit(1, 0))
}

fn code(r: Reason) -> u64 {
    r.index() as u64 + 1
}

const CODE_BITS: u32 = 4;

fn build(p: &RxParserParams) -> Module {
    let b = p.bytes() as u32;
    let w = p.data_bits;
    let lb = b.trailing_zeros();
    let iw = p.idx_bits();
    let idx_max = p.idx_max() as u64;
    let (k0, s) = (p.k0() as u64, p.shift() as u32);
    let ow = 17u32; // frame offsets: 14 + a 16-bit total length
    let fb = FIFO_DEPTH.trailing_zeros();

    let mut m = Module::new(model::NAME);
    m.describe(&format!(
        "parses Ethernet/IPv4/UDP/transport frames into a header and the realigned payload; MTU {} bytes",
        p.mtu
    ));
    let dw = m.param("DATA_WIDTH", u64::from(w), "AXI4-Stream data width in bits (power of 2, 64 to 1024)");
    m.param_check(
        "data_width",
        dw.expr().ge(64u32).and(dw.expr().le(1024u32)).and(dw.expr().eq(ParamExpr::Const(1) << dw.expr().clog2())),
        "DATA_WIDTH must be a power of 2 from 64 to 1024",
    );

    let symbolic: HashMap<&str, ParamExpr> = [
        ("s_axis_tdata", dw.expr()),
        ("m_axis_tdata", dw.expr()),
        ("s_axis_tkeep", dw.expr() / 8u32),
        ("m_axis_tkeep", dw.expr() / 8u32),
    ]
    .into_iter()
    .collect();
    let defs = model::ports(p);
    let mut sig: HashMap<String, Signal> = HashMap::new();
    let mut group = "Clock and reset";
    m.group(group);
    let clk = m.input("clk", 1, "clock, rising edge");
    for d in &defs {
        if d.group != group {
            group = d.group;
            m.group(group);
        }
        let size = port_size(d, symbolic.get(d.name.as_str()));
        let sgl = match d.dir {
            ModelDir::In => m.input(&d.name, size, &d.comment),
            ModelDir::Out => m.output(&d.name, size, &d.comment),
        };
        sig.insert(d.name.clone(), sgl);
    }
    let port = |n: &str| sig[n].clone();
    let rst = port("rst");
    m.clock_domain(&clk, &rst);
    let (tdata, tkeep, tvalid, tready, tlast, tuser) = (
        port("s_axis_tdata"),
        port("s_axis_tkeep"),
        port("s_axis_tvalid"),
        port("s_axis_tready"),
        port("s_axis_tlast"),
        port("s_axis_tuser"),
    );
    let tid = port("s_axis_tid");
    let cfg_port = port("cfg_udp_port");

    // ---- registers ----
    let in_idx = m.reg("in_idx", iw, 0, "beat index of the next input beat (saturates at the oversize beat)");
    let a_valid = m.reg("a_valid", 1, 0, "stage A holds a beat");
    let a_data = m.reg("a_data", w, 0, "stage A: tdata");
    let a_keep = m.reg("a_keep", b, 0, "stage A: tkeep");
    let a_last = m.reg("a_last", 1, 0, "stage A: tlast");
    let a_user = m.reg("a_user", 1, 0, "stage A: tuser");
    let a_tid = m.reg("a_tid", PLANE_BITS, 0, "stage A: tid (the plane)");
    let a_idx = m.reg("a_idx", iw, 0, "stage A: beat index in its frame");
    // From the source MAC (a NO_CONN answer goes back to it) to the IPv4
    // source; then the UDP header on (the IPv4 destination is not read).
    const HB_RANGES: [(usize, usize); 2] = [(6, 40), (42, HB_BYTES)];
    let hbs: Vec<Reg> = HB_RANGES
        .iter()
        .map(|&(lo, hi)| {
            m.reg(
                &format!("hb{lo}"),
                (8 * (hi - lo)) as u32,
                0,
                &format!("header buffer: frame bytes {lo}..{hi}, byte {lo} in bits 7:0"),
            )
        })
        .collect();
    let prev = m.reg("prev", w - 8 * s, 0, "lanes SHIFT and up of the previous beat (payload realignment)");
    let fs_mac = m.reg("fs_mac", 1, 0, "frame so far: a MAC error");
    let fs_tkeep = m.reg("fs_tkeep", 1, 0, "frame so far: a tkeep hole");
    let fs_over = m.reg("fs_oversize", 1, 0, "frame so far: past the maximum frame");
    let fs_decided = m.reg("fs_decided", 1, 0, "header checks done for this frame");
    let fs_early = m.reg("fs_early", CODE_BITS, 0, "their verdict: drop reason code (index + 1), 0 = pass");
    let fs_live = m.reg("fs_live", 1, 0, "the header was pushed: payload and a last beat follow");
    let fs_discard = m.reg("fs_discard", 1, 0, "the payload is over the MTU: none of it goes out");
    let fs_crc = m.reg("fs_crc", 32, 0, "raw CRC register over the covered bytes so far");
    let fs_icrc = m.reg("fs_icrc", 32, 0, "ICRC bytes captured, big-endian");
    let tail_valid = m.reg("tail_valid", 1, 0, "the last payload beat is held for the verdict");
    let tail_data = m.reg("tail_data", w, 0, "its data");
    let tail_keep = m.reg("tail_keep", b, 0, "its tkeep");
    let fin_valid = m.reg("fin_valid", 1, 0, "finish stage: a frame ended last cycle");
    let fin_live = m.reg("fin_live", 1, 0, "finish: the frame is live");
    let fin_reason = m.reg("fin_reason", CODE_BITS, 0, "finish: drop reason code before the ICRC");
    let fin_crc = m.reg("fin_crc", 32, 0, "finish: raw CRC register");
    let fin_z = m.reg("fin_z", lb, 0, "finish: zero bytes after the covered bytes in their last beat");
    let fin_icrc = m.reg("fin_icrc", 32, 0, "finish: the ICRC as sent");
    let stat = m.reg("stat", Reason::ALL.len() as u32, 0, "drop pulses, bit = reason index");
    // A header FIFO entry is {raw, ecn, udp_sport, udp_dport, ip_src, eth_src, plane}; `side_w` bits sit below raw.
    let (ecn_w, sport_w, src_w, pl_w) = (ipv4::ECN.width, udp::SRC_PORT.width, ipv4::SRC_IP.width, PLANE_BITS);
    let (dport_w, mac_w) = (udp::DST_PORT.width, eth::SRC_MAC.width);
    let side_w = ecn_w + sport_w + dport_w + src_w + mac_w + pl_w;
    let hdr_w = (RAW_BYTES * 8) as u32 + side_w;
    let axis_w = w + b + 2;
    let hdr_count = m.reg("hdr_count", fb + 1, 0, "headers in the header FIFO");
    let hdr_wr = m.reg("hdr_wr", fb, 0, "header FIFO write slot");
    let hdr_rd = m.reg("hdr_rd", fb, 0, "header FIFO head slot");
    let hdr_fifo: Vec<Reg> = (0..FIFO_DEPTH)
        .map(|j| m.reg(&format!("hdr_fifo{j}"), hdr_w, 0, "{raw, ecn, udp_sport, udp_dport, ip_src, eth_src, plane}"))
        .collect();
    let axis_count = m.reg("axis_count", fb + 1, 0, "beats in the payload FIFO");
    let axis_wr = m.reg("axis_wr", fb, 0, "payload FIFO write slot");
    let axis_rd = m.reg("axis_rd", fb, 0, "payload FIFO head slot");
    let axis_fifo: Vec<Reg> =
        (0..FIFO_DEPTH).map(|j| m.reg(&format!("axis_fifo{j}"), axis_w, 0, "{tdata, tkeep, tlast, tuser}")).collect();

    // ---- input handshake ----
    let fire = m.wire("in_fire", 1, "input beat accepted");
    m.assign(
        &tready,
        hdr_count
            .q
            .expr()
            .le(lit(fb + 1, FIFO_READY_MAX as u64))
            .logic_and(axis_count.q.expr().le(lit(fb + 1, FIFO_READY_MAX as u64))),
    );
    m.assign(&fire, tvalid.expr().logic_and(&tready));
    m.next(set(&a_valid.next, &fire));
    m.next(if_then(
        &fire,
        vec![
            set(&a_data.next, &tdata),
            set(&a_keep.next, &tkeep),
            set(&a_last.next, &tlast),
            set(&a_user.next, &tuser),
            set(&a_tid.next, &tid),
            set(&a_idx.next, &in_idx.q),
            set(
                &in_idx.next,
                mux(
                    &tlast,
                    lit(iw, 0),
                    mux(in_idx.q.expr().eq(lit(iw, idx_max)), lit(iw, idx_max), in_idx.q.expr() + lit(iw, 1)),
                ),
            ),
        ],
    ));
    for (r, &(lo, hi)) in hbs.iter().zip(HB_RANGES.iter()) {
        let bytes: Vec<Expr> = (lo..hi)
            .rev()
            .map(|i| {
                let lane = (i % b as usize) as u32;
                mux(
                    fire.expr().logic_and(in_idx.q.expr().eq(lit(iw, (i / b as usize) as u64))),
                    tdata.slice(8 * lane + 7, 8 * lane),
                    r.q.slice(8 * (i - lo) as u32 + 7, 8 * (i - lo) as u32),
                )
            })
            .collect();
        m.next(set(&r.next, cat(&bytes)));
    }

    // ---- header views from the buffers ----
    let hb_byte = |i: usize| -> Expr {
        let (lo, r) = if i < 40 { (HB_RANGES[0].0, &hbs[0]) } else { (HB_RANGES[1].0, &hbs[1]) };
        let o = (i - lo) as u32;
        r.q.slice(8 * o + 7, 8 * o)
    };
    let view = |m: &mut Module, name: &str, at: usize, len: usize, first: usize| -> Signal {
        let v =
            m.wire(name, (8 * (len - first)) as u32, &format!("frame bytes {}..{}, big-endian", at + first, at + len));
        m.assign(&v, cat(&(at + first..at + len).map(hb_byte).collect::<Vec<_>>()));
        v
    };
    // eth: the source MAC and the ethertype are buffered.
    let eth_v = view(&mut m, "eth_type_v", 0, eth::LAYOUT.len, eth::ETHERTYPE.offset);
    let mac_at = eth::SRC_MAC.offset;
    let eth_src_v = view(&mut m, "eth_src_v", 0, mac_at + eth::SRC_MAC.width as usize / 8, mac_at);
    let ip_v = view(&mut m, "ip_v", IP_AT, ipv4::LAYOUT.len, 0);
    let udp_v = view(&mut m, "udp_v", UDP_AT, udp::CHECKSUM.offset, 0);
    let tr_v = view(&mut m, "tr_v", HDR_AT, RAW_BYTES, 0);
    // The ethertype is the only Ethernet field checked.
    let ethf = |f: &Field| {
        debug_assert_eq!(f.offset, eth::ETHERTYPE.offset);
        eth_v.expr()
    };
    let ipf = |f: &Field| {
        let (hi, lo) = f.vector_range(ipv4::LAYOUT.len);
        ip_v.slice(hi as u32, lo as u32)
    };
    let udpf = |f: &Field| {
        let (hi, lo) = f.vector_range(udp::CHECKSUM.offset);
        udp_v.slice(hi as u32, lo as u32)
    };
    let trf = |f: &Field| {
        let (hi, lo) = f.vector_range(RAW_BYTES);
        tr_v.slice(hi as u32, lo as u32)
    };

    // ---- process stage ----
    let k = a_idx.q.clone();
    let first = m.wire("first", 1, "stage A holds beat 0: a new frame");
    m.assign(&first, k.expr().eq(lit(iw, 0)));
    let cur = |m: &mut Module, r: &Reg, reset: Expr, name: &str| -> Signal {
        let wdt = r.q.width();
        let s = m.wire(name, wdt, "frame state before this beat");
        m.assign(&s, mux(&first, reset, &r.q));
        s
    };
    let c_mac = cur(&mut m, &fs_mac, lit(1, 0), "c_mac");
    let c_tkeep = cur(&mut m, &fs_tkeep, lit(1, 0), "c_tkeep");
    let c_over = cur(&mut m, &fs_over, lit(1, 0), "c_oversize");
    let c_decided = cur(&mut m, &fs_decided, lit(1, 0), "c_decided");
    let c_early = cur(&mut m, &fs_early, lit(CODE_BITS, 0), "c_early");
    let c_live = cur(&mut m, &fs_live, lit(1, 0), "c_live");
    let c_discard = cur(&mut m, &fs_discard, lit(1, 0), "c_discard");
    let c_crc = cur(&mut m, &fs_crc, lit(32, 0), "c_crc");
    let c_icrc = cur(&mut m, &fs_icrc, lit(32, 0), "c_icrc");

    let all_keep = m.wire("all_keep", b, "every tkeep bit");
    m.assign(&all_keep, !lit(b, 0).clone());
    let keep_ok = m.wire("keep_ok", 1, "tkeep legal: all ones, or on the last beat contiguous from lane 0");
    m.assign(
        &keep_ok,
        mux(
            &a_last.q,
            a_keep.q.expr().ne(lit(b, 0)).logic_and((a_keep.q.expr() & (a_keep.q.expr() + one(b))).eq(lit(b, 0))),
            a_keep.q.expr().eq(&all_keep),
        ),
    );
    let n_mac = m.wire("n_mac", 1, "MAC error in the frame");
    m.assign(&n_mac, c_mac.expr().logic_or(&a_user.q));
    let n_tkeep = m.wire("n_tkeep", 1, "tkeep hole in the frame");
    m.assign(&n_tkeep, c_tkeep.expr().logic_or(keep_ok.expr().logic_not()));
    let n_over = m.wire("n_oversize", 1, "frame past the maximum");
    m.assign(&n_over, c_over.expr().logic_or(k.expr().eq(lit(iw, idx_max))));
    let axi_code = m.wire("axi_code", CODE_BITS, "stream error reason code, 0 = none");
    m.assign(
        &axi_code,
        mux(
            &n_mac,
            lit(CODE_BITS, code(Reason::MacError)),
            mux(
                &n_tkeep,
                lit(CODE_BITS, code(Reason::Tkeep)),
                mux(&n_over, lit(CODE_BITS, code(Reason::Oversize)), lit(CODE_BITS, 0)),
            ),
        ),
    );

    // Offsets.
    let start = m.wire("beat_start", ow, "frame offset of lane 0 of this beat");
    m.assign(&start, zext(cat(&[k.expr(), lit(lb, 0)]), ow));
    let e = m.wire("frame_end", ow, "14 + IPv4 total length: where the IP datagram ends");
    m.assign(&e, zext(ipf(&ipv4::TOTAL_LEN), ow) + lit(ow, IP_AT as u64));
    let crc_end = m.wire("crc_end", ow, "first byte after the ICRC-covered bytes");
    m.assign(&crc_end, e.expr() - lit(ow, 4));
    // One-hot "last lane" to a count: exact for contiguous tkeep (the only
    // case where the length matters).
    let nbytes = m.wire("last_bytes", lb + 1, "bytes in this beat (contiguous tkeep)");
    {
        let terms: Vec<Expr> = (0..b)
            .map(|lane| {
                let top = if lane + 1 < b {
                    a_keep.q.bit(lane).logic_and(a_keep.q.bit(lane + 1).logic_not())
                } else {
                    a_keep.q.bit(lane)
                };
                mux(top, lit(lb + 1, u64::from(lane + 1)), lit(lb + 1, 0))
            })
            .collect();
        m.assign(&nbytes, terms.into_iter().reduce(|a, c| a | c).expect("lanes"));
    }
    let flen = m.wire("frame_len", ow, "frame length when this is the last beat");
    m.assign(&flen, start.expr() + zext(&nbytes, ow));

    // CRC.
    let md = m.wire("crc_data", w, "beat bytes covered by the ICRC, first four inverted, others zero");
    {
        let lanes: Vec<Expr> = (0..b)
            .rev()
            .map(|lane| {
                let o = zext(cat(&[k.expr(), lit(lb, u64::from(lane))]), ow);
                let covered = o.clone().ge(lit(ow, HDR_AT as u64)).logic_and(o.clone().lt(&crc_end));
                let inv = o.lt(lit(ow, HDR_AT as u64 + 4));
                let byte = a_data.q.slice(8 * lane + 7, 8 * lane);
                mux(covered, mux(inv, !byte.clone(), byte), lit(8, 0))
            })
            .collect();
        m.assign(&md, cat(&lanes));
    }
    let crc_upd = m.wire("crc_upd", 32, "raw CRC register after this beat");
    {
        let eqs = crc_equations(b as usize);
        let bits: Vec<Expr> = eqs
            .iter()
            .enumerate()
            .map(|(j, (st, dd))| {
                let mut v: Vec<Expr> = st.iter().map(|&i| c_crc.bit(i)).collect();
                v.extend(dd.iter().map(|&i| md.bit(i)));
                let bit = m.wire(&format!("crc_upd{j}"), 1, &format!("bit {j} of the parallel CRC update"));
                m.assign(&bit, xor_of(v));
                bit.expr()
            })
            .collect();
        m.assign(&crc_upd, cat(&bits.into_iter().rev().collect::<Vec<_>>()));
    }
    let n_crc = m.wire("n_crc", 32, "raw CRC register: updated while the beat starts before crc_end");
    m.assign(&n_crc, mux(start.expr().lt(&crc_end), &crc_upd, &c_crc));
    let n_icrc = m.wire("n_icrc", 32, "ICRC bytes with this beat's captured");
    {
        let bytes: Vec<Expr> = (0..4u64)
            .map(|i| {
                let pos = m.wire(&format!("icrc_pos{i}"), ow, &format!("frame offset of ICRC byte {i}"));
                m.assign(&pos, crc_end.expr() + lit(ow, i));
                let here = pos.slice(ow - 1, lb).eq(zext(&k, ow - lb));
                let lane = a_data.q.expr().part(cat(&[pos.slice(lb - 1, 0), lit(3, 0)]), 8);
                let hi = 31 - 8 * i as u32;
                mux(here, lane, c_icrc.slice(hi, hi - 7))
            })
            .collect();
        m.assign(&n_icrc, cat(&bytes));
    }

    // Header checks, in the model's priority order.
    let op = trf(&common::OPCODE);
    let op_is = |v: u64| op.clone().eq(lit(4, v));
    let is_data = m.wire("is_data", 1, "data opcode (WRITE, WRITE_IMM, SEND, SEND_IMM)");
    m.assign(&is_data, op_is(0).logic_or(op_is(1)).logic_or(op_is(2)).logic_or(op_is(3)));
    let is_send = op_is(2).logic_or(op_is(3));
    let known = m.wire("op_known", 1, "opcode in the table");
    m.assign(&known, is_data.expr().logic_or(op_is(8)).logic_or(op_is(9)).logic_or(op_is(10)));
    let answer =
        m.wire("answer", 1, "a SACK or NACK from the transport port: any destination port (the path's entropy)");
    m.assign(
        &answer,
        udpf(&udp::SRC_PORT).eq(&cfg_port).logic_and(op_is(Opcode::Sack as u64).logic_or(op_is(Opcode::Nack as u64))),
    );
    let hlen = m.wire("hdr_len", 16, "transport header bytes of the opcode");
    m.assign(
        &hlen,
        mux(
            &is_data,
            lit(16, data::LAYOUT.len as u64),
            mux(
                op_is(8),
                lit(16, sack::LAYOUT.len as u64),
                mux(op_is(9), lit(16, nack::LAYOUT.len as u64), lit(16, probe::LAYOUT.len as u64)),
            ),
        ),
    );
    let total = ipf(&ipv4::TOTAL_LEN);
    let ulen = udpf(&udp::LENGTH);
    let ipsum = m.wire("ip_sum", 20, "sum of the IPv4 header's 16-bit words");
    m.assign(
        &ipsum,
        (0..10u32).map(|i| zext(ip_v.slice(159 - 16 * i, 144 - 16 * i), 20)).reduce(|a, c| a + c).expect("words"),
    );
    let ipf1 = m.wire("ip_fold1", 17, "first carry fold");
    m.assign(&ipf1, zext(ipsum.slice(15, 0), 17) + zext(ipsum.slice(19, 16), 17));
    let ipf2 = m.wire("ip_fold2", 16, "second carry fold: 0xffff when the checksum is right");
    m.assign(&ipf2, ipf1.slice(15, 0) + zext(ipf1.bit(16), 16));
    let reserved_of = |layout: &Layout, view: Only| -> Expr {
        or_all(
            layout
                .fields
                .iter()
                .filter(|f| f.rule == Rule::Reserved && (f.only == Only::All || f.only == view))
                .map(|f| trf(f).ne(lit(f.width, 0)))
                .collect(),
        )
    };
    let res_bad = m.wire("reserved_bad", 1, "a reserved field of the opcode's layout is not zero");
    m.assign(
        &res_bad,
        mux(
            &is_data,
            mux(is_send.clone(), reserved_of(&data::LAYOUT, Only::Send), reserved_of(&data::LAYOUT, Only::Write)),
            mux(
                op_is(8),
                reserved_of(&sack::LAYOUT, Only::Write),
                mux(op_is(9), reserved_of(&nack::LAYOUT, Only::Write), reserved_of(&probe::LAYOUT, Only::Write)),
            ),
        ),
    );
    let pl = m.wire("pl", 17, "payload bytes the header announces (0 for control opcodes)");
    m.assign(&pl, mux(&is_data, zext(trf(&data::PAYLOAD_LEN), 17), lit(17, 0)));
    let nack_code = trf(&nack::CODE);
    let conds: Vec<(Expr, Reason)> = vec![
        (a_last.q.expr().logic_and(flen.expr().lt(lit(ow, UDP_AT as u64))), Reason::Truncated),
        (ethf(&eth::ETHERTYPE).ne(lit(16, 0x0800)), Reason::Ethertype),
        (ipf(&ipv4::VERSION).ne(lit(4, 4)).logic_or(ipf(&ipv4::IHL).ne(lit(4, 5))), Reason::IpHeader),
        (total.clone().lt(lit(16, 28)), Reason::Length),
        (a_last.q.expr().logic_and(flen.expr().lt(&e)), Reason::Truncated),
        (
            ipf(&ipv4::FLAG_RESERVED)
                .ne(lit(1, 0))
                .logic_or(ipf(&ipv4::MF).ne(lit(1, 0)))
                .logic_or(ipf(&ipv4::FRAG_OFFSET).ne(lit(13, 0)))
                .logic_or(ipf(&ipv4::PROTOCOL).ne(lit(8, 17))),
            Reason::IpHeader,
        ),
        (ipf2.expr().ne(lit(16, 0xffff)), Reason::IpChecksum),
        (ulen.clone().ne(total.clone() - lit(16, 20)), Reason::Length),
        (udpf(&udp::DST_PORT).ne(&cfg_port).logic_and(answer.expr().logic_not()), Reason::UdpPort),
        (trf(&common::VER).ne(lit(4, 0)), Reason::Version),
        (known.expr().logic_not(), Reason::Opcode),
        (ulen.clone().lt(hlen.expr() + lit(16, 12)), Reason::Truncated),
        (res_bad.expr(), Reason::Reserved),
        (
            op_is(0)
                .logic_or(op_is(2))
                .logic_and(trf(&data::IMM).ne(lit(32, 0)))
                .logic_or(op_is(9).logic_and(nack_code.clone().eq(lit(8, 0)).logic_or(nack_code.gt(lit(8, 4))))),
            Reason::Invalid,
        ),
        (zext(ulen, 17).ne(zext(&hlen, 17) + lit(17, 12) + &pl), Reason::Length),
    ];
    // Not a frame fault: the header goes on for a BAD_HDR NACK, the
    // payload is discarded (proto::drop::handed_payload).
    let over_mtu = m.wire("over_mtu", 1, "a data payload over the MTU");
    m.assign(&over_mtu, is_data.expr().logic_and(pl.expr().gt(lit(17, u64::from(p.mtu)))));
    let check_code = m.wire("check_code", CODE_BITS, "header check verdict: first failing reason code, 0 = pass");
    m.assign(
        &check_code,
        conds.into_iter().rev().fold(lit(CODE_BITS, 0), |acc, (c, r)| mux(c, lit(CODE_BITS, code(r)), acc)),
    );
    let decide = m.wire("decide", 1, "the header checks run on this beat");
    m.assign(
        &decide,
        a_valid
            .q
            .expr()
            .logic_and(c_decided.expr().logic_not())
            .logic_and(k.expr().ge(lit(iw, p.decide_beat() as u64)).logic_or(&a_last.q)),
    );
    let early_code = m.wire("early_code", CODE_BITS, "verdict of the header decision");
    m.assign(&early_code, mux(axi_code.expr().ne(lit(CODE_BITS, 0)), &axi_code, &check_code));
    let hdr_push = m.wire("hdr_push", 1, "the header passes: push it");
    m.assign(&hdr_push, decide.expr().logic_and(early_code.expr().eq(lit(CODE_BITS, 0))));
    let n_early = m.wire("n_early", CODE_BITS, "header verdict after this beat");
    m.assign(&n_early, mux(&decide, &early_code, &c_early));
    let n_live = m.wire("n_live", 1, "live after this beat");
    m.assign(&n_live, c_live.expr().logic_or(&hdr_push));
    let n_discard = m.wire("n_discard", 1, "discarding the payload after this beat");
    m.assign(&n_discard, c_discard.expr().logic_or(hdr_push.expr().logic_and(&over_mtu)));
    let raw = m.wire("hdr_raw", (RAW_BYTES * 8) as u32, "transport header, zero past the opcode's length");
    let trunc_to = |n: usize| -> Expr {
        let zeros = (8 * (RAW_BYTES - n)) as u32;
        if zeros == 0 {
            tr_v.expr()
        } else {
            cat(&[tr_v.slice(8 * RAW_BYTES as u32 - 1, zeros), lit(zeros, 0)])
        }
    };
    m.assign(
        &raw,
        mux(
            &is_data,
            trunc_to(data::LAYOUT.len),
            mux(op_is(9), trunc_to(nack::LAYOUT.len), mux(op_is(10), trunc_to(probe::LAYOUT.len), trunc_to(RAW_BYTES))),
        ),
    );

    // Payload realignment.
    let p_end = m.wire("payload_end", ow, "frame offset after the payload");
    m.assign(&p_end, zext(trf(&data::PAYLOAD_LEN), ow) + lit(ow, PAYLOAD_AT as u64));
    let emit = m.wire("emit", 1, "a live data frame within the MTU: payload beats are produced");
    m.assign(&emit, a_valid.q.expr().logic_and(&n_live).logic_and(&is_data).logic_and(n_discard.expr().logic_not()));
    let keep_for = |m: &mut Module, name: &str, lo: &Signal| -> Signal {
        let diff = m.wire(&format!("{name}_left"), ow, "payload bytes from this output beat on");
        m.assign(&diff, p_end.expr() - lo);
        let kk = m.wire(&format!("{name}_keep"), b, "tkeep of this output beat as the last one");
        let bits: Vec<Expr> = (0..b).rev().map(|lane| diff.expr().gt(lit(ow, u64::from(lane)))).collect();
        m.assign(&kk, cat(&bits));
        kk
    };
    let lo1 = m.wire("lo1", ow, "payload offset of the output beat made of prev and this beat");
    m.assign(&lo1, zext(cat(&[k.expr() - lit(iw, k0 + 1), lit(lb, 0)]), ow) + lit(ow, PAYLOAD_AT as u64));
    let d1 = m.wire("d1", w, "prev's upper bytes then this beat's lower bytes");
    m.assign(&d1, cat(&[a_data.q.slice(8 * s - 1, 0), prev.q.expr()]));
    let keep1 = keep_for(&mut m, "o1", &lo1);
    let has1 = m.wire("has1", 1, "beat index past the payload's first beat");
    m.assign(&has1, emit.expr().logic_and(k.expr().gt(lit(iw, k0))));
    let push1 = m.wire("push1", 1, "a full, non-last payload beat goes out");
    m.assign(&push1, has1.expr().logic_and((lo1.expr() + lit(ow, u64::from(b))).lt(&p_end)));
    let tail1 = m.wire("tail1", 1, "the last payload beat: held for the verdict");
    m.assign(&tail1, has1.expr().logic_and(push1.expr().logic_not()).logic_and(lo1.expr().lt(&p_end)));
    let lo2 = m.wire("lo2", ow, "payload offset of the output beat starting in this (last) beat");
    m.assign(&lo2, zext(cat(&[k.expr() - lit(iw, k0), lit(lb, 0)]), ow) + lit(ow, PAYLOAD_AT as u64));
    let d2 = m.wire("d2", w, "this beat's upper bytes, zero above");
    m.assign(&d2, cat(&[lit(8 * s, 0), a_data.q.slice(w - 1, 8 * s)]));
    let keep2 = keep_for(&mut m, "o2", &lo2);
    let tail2 = m.wire("tail2", 1, "the frame ends with payload bytes left in this beat");
    m.assign(
        &tail2,
        emit.expr().logic_and(&a_last.q).logic_and(k.expr().ge(lit(iw, k0))).logic_and(lo2.expr().lt(&p_end)),
    );

    // Finish: the ICRC correction.
    let mut v = fin_crc.q.clone();
    for i in 0..lb {
        let eqs = unfeed_equations(1 << i);
        let mv = m.wire(&format!("unfeed{i}"), 32, &format!("register with {} zero bytes removed", 1 << i));
        let bits: Vec<Expr> = eqs.iter().rev().map(|srcs| xor_of(srcs.iter().map(|&j| v.bit(j)).collect())).collect();
        m.assign(&mv, cat(&bits));
        let nv = m.wire(&format!("crc_fix{i}"), 32, &format!("after bit {i} of the zero count"));
        m.assign(&nv, mux(fin_z.q.bit(i), &mv, &v));
        v = nv;
    }
    let fin_code = m.wire("fin_code", CODE_BITS, "final drop reason code, 0 = accepted");
    m.assign(
        &fin_code,
        mux(
            fin_reason.q.expr().ne(lit(CODE_BITS, 0)),
            &fin_reason.q,
            mux((!v.expr()).ne(&fin_icrc.q), lit(CODE_BITS, code(Reason::Icrc)), lit(CODE_BITS, 0)),
        ),
    );
    let fin_push = m.wire("fin_push", 1, "the last beat of a live frame goes out");
    m.assign(&fin_push, fin_valid.q.expr().logic_and(&fin_live.q));

    // State updates.
    let proc = a_valid.q.expr();
    m.next(if_then(
        proc.clone(),
        vec![
            set(&fs_mac.next, &n_mac),
            set(&fs_tkeep.next, &n_tkeep),
            set(&fs_over.next, &n_over),
            set(&fs_decided.next, c_decided.expr().logic_or(&decide)),
            set(&fs_early.next, &n_early),
            set(&fs_live.next, &n_live),
            set(&fs_discard.next, &n_discard),
            set(&fs_crc.next, &n_crc),
            set(&fs_icrc.next, &n_icrc),
            set(&prev.next, a_data.q.slice(w - 1, 8 * s)),
        ],
    ));
    let fin_new = proc.clone().logic_and(&a_last.q);
    let zcount = m.wire("zero_count", lb, "zero bytes after the covered bytes in their last beat: -crc_end mod bytes");
    m.assign(&zcount, lit(lb, 0) - crc_end.slice(lb - 1, 0));
    m.next(set(&fin_valid.next, fin_new.clone()));
    m.next(if_then(
        fin_new,
        vec![
            set(&fin_live.next, &n_live),
            set(
                &fin_reason.next,
                mux(
                    n_early.expr().ne(lit(CODE_BITS, 0)),
                    &n_early,
                    mux(
                        axi_code.expr().ne(lit(CODE_BITS, 0)),
                        &axi_code,
                        mux(flen.expr().lt(&e), lit(CODE_BITS, code(Reason::Truncated)), lit(CODE_BITS, 0)),
                    ),
                ),
            ),
            set(&fin_crc.next, &n_crc),
            set(&fin_z.next, &zcount),
            set(&fin_icrc.next, &n_icrc),
        ],
    ));
    m.next(if_then(&fin_valid.q, vec![set(&tail_valid.next, lit(1, 0))]));
    m.next(if_then(
        &tail1,
        vec![set(&tail_valid.next, lit(1, 1)), set(&tail_data.next, &d1), set(&tail_keep.next, &keep1)],
    ));
    m.next(if_then(
        &tail2,
        vec![set(&tail_valid.next, lit(1, 1)), set(&tail_data.next, &d2), set(&tail_keep.next, &keep2)],
    ));
    let stat_bits: Vec<Expr> = Reason::ALL
        .iter()
        .rev()
        .map(|r| fin_valid.q.expr().logic_and(fin_code.expr().eq(lit(CODE_BITS, code(*r)))))
        .collect();
    m.next(set(&stat.next, cat(&stat_bits)));

    // ---- FIFOs ----
    let hdr_entry = cat(&[
        raw.expr(),
        ipf(&ipv4::ECN),
        udpf(&udp::SRC_PORT),
        udpf(&udp::DST_PORT),
        ipf(&ipv4::SRC_IP),
        eth_src_v.expr(),
        a_tid.q.expr(),
    ]);
    let axis_entry = m.wire("axis_entry", axis_w, "{tdata, tkeep, tlast, tuser} pushed this cycle");
    m.assign(
        &axis_entry,
        mux(
            &fin_push,
            cat(&[
                mux(&tail_valid.q, &tail_data.q, lit(w, 0)),
                mux(&tail_valid.q, &tail_keep.q, lit(b, 0)),
                lit(1, 1),
                fin_code.expr().ne(lit(CODE_BITS, 0)),
            ]),
            cat(&[d1.expr(), all_keep.expr(), lit(1, 0), lit(1, 0)]),
        ),
    );
    let axis_push = m.wire("axis_push", 1, "a payload beat enters the FIFO");
    m.assign(&axis_push, push1.expr().logic_or(&fin_push));
    let hdr_valid = port("m_hdr_valid");
    let hdr_ready = port("m_hdr_ready");
    let m_tvalid = port("m_axis_tvalid");
    let m_tready = port("m_axis_tready");
    let hdr_head = fifo(
        &mut m,
        "hdr",
        hdr_w,
        &hdr_fifo,
        &hdr_count,
        &hdr_wr,
        &hdr_rd,
        hdr_push.expr(),
        hdr_entry,
        &hdr_valid,
        &hdr_ready,
    );
    let axis_head = fifo(
        &mut m,
        "axis",
        axis_w,
        &axis_fifo,
        &axis_count,
        &axis_wr,
        &axis_rd,
        axis_push.expr(),
        axis_entry.expr(),
        &m_tvalid,
        &m_tready,
    );
    let hv = |e: Expr, width: u32| mux(&hdr_valid, e, lit(width, 0));
    let raw_bits = (RAW_BYTES * 8) as u32;
    m.assign(port("m_hdr_raw"), hv(hdr_head.slice(hdr_w - 1, side_w), raw_bits));
    let raw_out = port("m_hdr_raw");
    for f in HDR_FIELDS.iter().copied().chain([&data::IMM]) {
        let (hi, lo) = f.vector_range(RAW_BYTES);
        m.assign(port(&format!("m_hdr_{}", f.name)), raw_out.slice(hi as u32, lo as u32));
    }
    let at = |lsb: u32, width: u32| hv(hdr_head.slice(lsb + width - 1, lsb), width);
    m.assign(port("m_hdr_ecn"), at(sport_w + dport_w + src_w + mac_w + pl_w, ecn_w));
    m.assign(port("m_hdr_udp_sport"), at(dport_w + src_w + mac_w + pl_w, sport_w));
    m.assign(port("m_hdr_udp_dport"), at(src_w + mac_w + pl_w, dport_w));
    m.assign(port("m_hdr_ip_src"), at(mac_w + pl_w, src_w));
    m.assign(port("m_hdr_eth_src"), at(pl_w, mac_w));
    m.assign(port("m_hdr_plane"), at(0, pl_w));
    let av = |e: Expr, width: u32| mux(&m_tvalid, e, lit(width, 0));
    m.assign(port("m_axis_tdata"), av(axis_head.slice(axis_w - 1, b + 2), w));
    m.assign(port("m_axis_tkeep"), av(axis_head.slice(b + 1, 2), b));
    m.assign(port("m_axis_tlast"), av(axis_head.bit(1), 1));
    m.assign(port("m_axis_tuser"), av(axis_head.bit(0), 1));
    for r in Reason::ALL {
        m.assign(port(&format!("stat_drop_{}", r.name())), stat.q.bit(r.index() as u32));
    }
    // Interface rules: assumed on the inputs, asserted on the outputs.
    crate::formal::every_channel(&mut m, &rst);
    m
}

fn one(width: u32) -> Expr {
    lit(width, 1)
}

/// A register FIFO: push at `wr`, head at `rd`; returns the head wire.
#[allow(clippy::too_many_arguments)]
fn fifo(
    m: &mut Module,
    name: &str,
    width: u32,
    slots: &[Reg],
    count: &Reg,
    wr: &Reg,
    rd: &Reg,
    push: Expr,
    entry: Expr,
    valid: &Signal,
    ready: &Signal,
) -> Signal {
    let fb = wr.q.width();
    let depth = slots.len();
    let push_w = m.wire(&format!("{name}_push_w"), 1, "an entry enters");
    m.assign(&push_w, push);
    let entry_w = m.wire(&format!("{name}_entry_w"), width, "the entry");
    m.assign(&entry_w, entry);
    let pop = m.wire(&format!("{name}_pop"), 1, "the head leaves");
    m.assign(valid, count.q.expr().ne(lit(fb + 1, 0)));
    m.assign(&pop, valid.expr().logic_and(ready));
    m.next(if_then(
        &push_w,
        vec![
            case(
                &wr.q,
                (0..depth).map(|j| (vec![lit(fb, j as u64)], vec![set(&slots[j].next, &entry_w)])).collect(),
                None,
            ),
            set(&wr.next, wr.q.expr() + lit(fb, 1)),
        ],
    ));
    m.next(if_then(&pop, vec![set(&rd.next, rd.q.expr() + lit(fb, 1))]));
    m.next(if_then(
        push_w.expr().logic_and(pop.expr().logic_not()),
        vec![set(&count.next, count.q.expr() + lit(fb + 1, 1))],
    ));
    m.next(if_then(
        pop.expr().logic_and(push_w.expr().logic_not()),
        vec![set(&count.next, count.q.expr() - lit(fb + 1, 1))],
    ));
    crate::formal::fifo_invariants(m, name, depth as u32, &count.q, &wr.q, &rd.q, None);
    let head = m.wire(&format!("{name}_head"), width, "the head entry");
    m.comb(vec![case(
        &rd.q,
        (0..depth).map(|j| (vec![lit(fb, j as u64)], vec![set(&head, &slots[j].q)])).collect(),
        None,
    )]);
    head
}

fn port_size(d: &PortDef, sym: Option<&ParamExpr>) -> Size {
    match sym {
        Some(e) if e.eval() == Some(i64::from(d.width)) => Size::from(e.clone()),
        _ => Size::from(d.width),
    }
}

/// How the properties of [`generate`]'s module are checked (see
/// [`crate::proof`]).
pub fn formal_tasks(_asserts: &[String]) -> Vec<crate::proof::Task> {
    crate::proof::prove_and_cover(6, 30, false)
}
