//! `tx_engine` RTL, first piece: the frame builder.
//!
//! The generator of the cycle model [`mrnic_model::tx_engine`] is not built
//! yet (there is no `tx_engine` row in [`crate::gen::BLOCKS`]);
//! docs/architecture.md says what it still needs and which parts of the
//! model must change before an RTL can keep its cycle timing at `default`
//! sizes. This file holds the part every frame the engine sends goes
//! through, as IR functions the generator will call:
//!
//! - [`place`]: a header as one big-endian vector from (field, value)
//!   pairs of proto's field table (`mrnic_proto::layouts`), never retyped
//!   offsets; bits no field names are zero (reserved);
//! - [`ones_sum`]: the one's-complement sum of 16-bit words (IPv4 and UDP
//!   checksums), as an adder tree folded twice;
//! - [`crc32`]: the ICRC (`proto::packet::icrc`, CRC-32) of a whole
//!   header as XOR equations derived from the polynomial
//!   ([`crate::rx_parser::crc_equations`]), no table;
//! - [`frame`]: Ethernet, IPv4 (ECT(0), TTL 64, DF), UDP, the transport
//!   header and the ICRC of a frame without payload (SACK, NACK and PROBE
//!   frames), in `m_axis` byte order (first byte in bits 7..0), exactly the
//!   bytes of the model's [`build_frame`](mrnic_model::tx_engine::build_frame);
//!   its pieces [`ipv4_header`] and [`udp_header`] take the payload length
//!   and sum, for data frames;
//! - the payload digest, a beat at a time as the payload streams in
//!   (the frame leaves store-and-forward, its UDP checksum in front):
//!   [`mask_beat`], [`beat_sum`] / [`ones_add`] for the checksum and
//!   [`crc_beat`] for the ICRC, which feeds the whole beat and takes the
//!   zero bytes past the valid ones back out
//!   ([`crate::rx_parser::unfeed_equations`]), so one update serves every
//!   length of the last beat; [`digest_beat`] puts them together for a
//!   beat as the AXI read master receives it (the first beat from the
//!   buffer's offset in it, later beats' checksum words byte-swapped when
//!   that offset is odd), so the digest is complete at the edge the last
//!   read beat arrives, when the model starts the frame.
//!
//! `hdl/tests/tx_engine.rs` runs each of them under Icarus against the
//! model's header and frame functions: random field values, and random
//! payloads (odd lengths, odd offsets) read in 8- and 64-byte beats.

use mrnic_proto::field::Field;
use mrnic_proto::layouts::{eth, ipv4, udp, ICRC_LEN};
use mrnic_proto::packet::{ECN_ECT0, ETHERTYPE_IPV4, IPPROTO_UDP, NET_OVERHEAD};

use crate::expr::{cat, lit, mux, zext, Expr, Signal};
use crate::ir::Module;

/// `e` cut or zero-extended to `w` bits, as [`Field::set`] drops the bits
/// above the field.
fn fit(e: Expr, w: u32) -> Expr {
    let have = e.width().expect("a well-formed expression");
    if have == w {
        e
    } else if have < w {
        zext(e, w)
    } else {
        e.slice(w - 1, 0)
    }
}

/// `n` zero bits (constants are at most 64 bits wide).
fn zeros(n: u32) -> Expr {
    let parts: Vec<Expr> = (0..n.div_ceil(64)).map(|i| lit((n - 64 * i).min(64), 0)).collect();
    if parts.len() == 1 {
        parts.into_iter().next().expect("one part")
    } else {
        cat(&parts)
    }
}

/// A header of `bytes` bytes as one big-endian vector (byte 0 in the top
/// bits, as [`Field::vector_range`] names it), from (field, value) pairs:
/// each value is placed at its field's bits, cut to the field's width;
/// bits no field names are 0. Values that are not plain nets are fine:
/// the result is a concatenation.
pub fn place(bytes: usize, fields: &[(&Field, Expr)]) -> Expr {
    let mut fs: Vec<(&Field, Expr)> = fields.iter().map(|(f, e)| (*f, fit(e.clone(), f.width))).collect();
    fs.sort_by_key(|(f, _)| f.start_bit());
    let mut parts = Vec::new();
    let mut at = 0usize;
    for (f, e) in fs {
        assert!(f.start_bit() >= at, "field {} overlaps the one before it", f.name);
        assert!(f.end_bit() <= bytes * 8, "field {} is outside a {bytes}-byte header", f.name);
        if f.start_bit() > at {
            parts.push(zeros((f.start_bit() - at) as u32));
        }
        parts.push(e);
        at = f.end_bit();
    }
    if at < bytes * 8 {
        parts.push(zeros((bytes * 8 - at) as u32));
    }
    cat(&parts)
}

/// A big-endian vector of `bytes` bytes reordered for `m_axis`: byte 0 in
/// bits 7..0.
pub fn axis_order(be: &Signal, bytes: usize) -> Expr {
    let top = bytes as u32 * 8;
    let parts: Vec<Expr> = (0..bytes as u32).rev().map(|i| be.slice(top - 1 - 8 * i, top - 8 - 8 * i)).collect();
    cat(&parts)
}

/// The 16-bit one's-complement sum of `words` (proto's `ones_sum`): a
/// plain adder wide enough for every carry, then the carries folded in
/// twice (after the first fold at most one carry is left).
pub fn ones_sum(m: &mut Module, name: &str, words: &[Expr]) -> Signal {
    let w = 16 + crate::expr::index_bits(words.len() as u32 + 1) + 1;
    let wide = m.wire(&format!("{name}_wide"), w, "sum of the 16-bit words with every carry");
    let sum = words.iter().map(|e| zext(fit(e.clone(), 16), w)).reduce(|a, b| a + b).expect("at least one word");
    m.assign(&wide, sum);
    let f1 = m.wire(&format!("{name}_fold1"), 17, "low half plus the carries");
    m.assign(&f1, zext(wide.slice(15, 0), 17) + zext(wide.slice(w - 1, 16), 17));
    let out = m.wire(name, 16, "one's-complement sum");
    m.assign(&out, f1.slice(15, 0) + zext(f1.bit(16), 16));
    out
}

/// The 16-bit big-endian words of a big-endian vector of `bytes` bytes
/// (`bytes` even).
fn words_of(be: &Signal, bytes: usize) -> Vec<Expr> {
    assert!(bytes % 2 == 0, "an even number of bytes");
    let top = bytes as u32 * 8;
    (0..bytes as u32 / 2).map(|i| be.slice(top - 1 - 16 * i, top - 16 - 16 * i)).collect()
}

/// CRC-32 (IEEE, reflected, initial value and final XOR all ones: the
/// ICRC) of a big-endian vector of `bytes` bytes, byte 0 fed first. The
/// register's part is a constant (the initial value through `bytes`
/// bytes); each output bit XORs the data bits the polynomial gives it.
pub fn crc32(m: &mut Module, name: &str, be: &Signal, bytes: usize) -> Signal {
    let eqs = crate::rx_parser::crc_equations(bytes);
    let init = crate::rx_parser::raw_update(!0, &vec![0; bytes]) ^ !0;
    let top = bytes as u32 * 8;
    let mut bits = Vec::new();
    for (j, (_, data)) in eqs.iter().enumerate() {
        // Data bit d is bit (d % 8) of byte (d / 8), least significant first.
        let ins: Vec<Expr> = data.iter().map(|&d| be.bit(top - 8 - 8 * (d / 8) + d % 8)).collect();
        let x = if ins.is_empty() { lit(1, 0) } else { cat(&ins).reduce_xor() };
        // One wire per bit keeps each line short enough for Verilator.
        let b = m.wire(&format!("{name}{j}"), 1, &format!("bit {j} of the CRC"));
        m.assign(&b, if init >> j & 1 == 1 { !x } else { x });
        bits.push(b.expr());
    }
    let out = m.wire(name, 32, "CRC-32 of the header (the ICRC)");
    m.assign(&out, cat(&bits.into_iter().rev().collect::<Vec<_>>()));
    out
}

/// What the Ethernet, IPv4 and UDP headers of a frame carry beyond lengths
/// and checksums.
#[derive(Clone, Debug)]
pub struct NetFields {
    pub src_mac: Expr,
    pub dst_mac: Expr,
    pub src_ip: Expr,
    pub dst_ip: Expr,
    pub sport: Expr,
    pub dport: Expr,
}

/// Bytes of a frame without payload whose transport header has `hdr_bytes`
/// bytes: Ethernet, IPv4, UDP, the header, the ICRC.
pub fn frame_bytes(hdr_bytes: usize) -> usize {
    NET_OVERHEAD + hdr_bytes + ICRC_LEN
}

/// The IPv4 header (ECT(0), TTL 64, DF, protocol UDP) with its checksum,
/// big-endian, for a datagram of `total_len` bytes (16 bits).
pub fn ipv4_header(m: &mut Module, name: &str, net: &NetFields, total_len: Expr) -> Signal {
    let fields = |csum: Expr| -> Expr {
        place(
            ipv4::LAYOUT.len,
            &[
                (&ipv4::VERSION, lit(4, 4)),
                (&ipv4::IHL, lit(4, 5)),
                (&ipv4::ECN, lit(2, u64::from(ECN_ECT0))),
                (&ipv4::TOTAL_LEN, total_len.clone()),
                (&ipv4::DF, lit(1, 1)),
                (&ipv4::TTL, lit(8, 64)),
                (&ipv4::PROTOCOL, lit(8, u64::from(IPPROTO_UDP))),
                (&ipv4::CHECKSUM, csum),
                (&ipv4::SRC_IP, net.src_ip.clone()),
                (&ipv4::DST_IP, net.dst_ip.clone()),
            ],
        )
    };
    let bits = ipv4::LAYOUT.len as u32 * 8;
    let ip0 = m.wire(&format!("{name}0"), bits, "IPv4 header, checksum field zero");
    m.assign(&ip0, fields(lit(16, 0)));
    let sum = ones_sum(m, &format!("{name}_sum"), &words_of(&ip0, ipv4::LAYOUT.len));
    let ip = m.wire(name, bits, "IPv4 header");
    m.assign(&ip, fields(!sum.expr()));
    ip
}

/// The UDP header with its checksum, big-endian, for a datagram carrying
/// the transport header `hdr` (`hdr_bytes`, big-endian), `payload_len`
/// payload bytes (16 bits) whose [`ones_sum`] is `payload_sum` (words
/// paired from payload byte 0), and the ICRC `icrc` after them. The ICRC
/// starts at an odd datagram offset when the payload length is odd; its
/// words are then paired with the last payload byte and a zero.
#[allow(clippy::too_many_arguments)]
pub fn udp_header(
    m: &mut Module,
    name: &str,
    net: &NetFields,
    hdr: &Signal,
    hdr_bytes: usize,
    payload_len: Expr,
    payload_sum: Expr,
    icrc: &Signal,
) -> Signal {
    let udp_len = m.wire(&format!("{name}_len"), 16, "UDP header + transport header + payload + ICRC bytes");
    m.assign(&udp_len, lit(16, (udp::LAYOUT.len + hdr_bytes + ICRC_LEN) as u64) + fit(payload_len, 16));
    let fields = |csum: Expr| -> Expr {
        place(
            udp::LAYOUT.len,
            &[
                (&udp::SRC_PORT, net.sport.clone()),
                (&udp::DST_PORT, net.dport.clone()),
                (&udp::LENGTH, udp_len.expr()),
                (&udp::CHECKSUM, csum),
            ],
        )
    };
    let udp0 = m.wire(&format!("{name}0"), 64, "UDP header, checksum field zero");
    m.assign(&udp0, fields(lit(16, 0)));
    // Pseudo-header (addresses, protocol, UDP length), UDP header,
    // transport header, payload, ICRC.
    let pseudo = m.wire(&format!("{name}_pseudo"), 96, "IPv4 pseudo-header of the UDP checksum");
    m.assign(
        &pseudo,
        cat(&[
            fit(net.src_ip.clone(), 32),
            fit(net.dst_ip.clone(), 32),
            lit(16, u64::from(IPPROTO_UDP)),
            udp_len.expr(),
        ]),
    );
    let mut words = words_of(&pseudo, 12);
    words.extend(words_of(&udp0, udp::LAYOUT.len));
    words.extend(words_of(hdr, hdr_bytes));
    words.push(fit(payload_sum, 16));
    let c = |i: u32| icrc.slice(31 - 8 * i, 24 - 8 * i);
    let even_words = [cat(&[c(0), c(1)]), cat(&[c(2), c(3)]), lit(16, 0)];
    let odd_words = [cat(&[lit(8, 0), c(0)]), cat(&[c(1), c(2)]), cat(&[c(3), lit(8, 0)])];
    // The header lengths are even: the UDP length's bit 0 is the payload's.
    for (e, o) in even_words.into_iter().zip(odd_words) {
        words.push(mux(udp_len.bit(0), o, e));
    }
    let sum = ones_sum(m, &format!("{name}_sum"), &words);
    let csum = m.wire(&format!("{name}_csum"), 16, "UDP checksum; 0 is sent as 0xffff");
    m.assign(&csum, mux(sum.expr().eq(lit(16, 0xffff)), lit(16, 0xffff), !sum.expr()));
    let h = m.wire(name, 64, "UDP header");
    m.assign(&h, fields(csum.expr()));
    h
}

/// The Ethernet header, big-endian.
pub fn eth_header(m: &mut Module, name: &str, net: &NetFields) -> Signal {
    let h = m.wire(name, eth::LAYOUT.len as u32 * 8, "Ethernet header");
    m.assign(
        &h,
        place(
            eth::LAYOUT.len,
            &[
                (&eth::DST_MAC, net.dst_mac.clone()),
                (&eth::SRC_MAC, net.src_mac.clone()),
                (&eth::ETHERTYPE, lit(16, u64::from(ETHERTYPE_IPV4))),
            ],
        ),
    );
    h
}

/// A whole frame without payload, in `m_axis` byte order (first byte in
/// bits 7..0), [`frame_bytes`]`(hdr_bytes) * 8` bits: the model's
/// `build_frame(net, hdr, &[])`. `hdr` is the transport header as a
/// big-endian vector ([`place`]). Wires are named `<name>_*`.
pub fn frame(m: &mut Module, name: &str, net: &NetFields, hdr: &Signal, hdr_bytes: usize) -> Signal {
    let icrc = crc32(m, &format!("{name}_icrc"), hdr, hdr_bytes);
    let udp_len = udp::LAYOUT.len + hdr_bytes + ICRC_LEN;
    let ip = ipv4_header(m, &format!("{name}_ip"), net, lit(16, (ipv4::LAYOUT.len + udp_len) as u64));
    let udp_h = udp_header(m, &format!("{name}_udp"), net, hdr, hdr_bytes, lit(16, 0), lit(16, 0), &icrc);
    let eth_h = eth_header(m, &format!("{name}_eth"), net);
    let n = frame_bytes(hdr_bytes);
    let be = m.wire(&format!("{name}_be"), n as u32 * 8, "the frame, byte 0 in the top bits");
    m.assign(&be, cat(&[eth_h.expr(), ip.expr(), udp_h.expr(), hdr.expr(), icrc.expr()]));
    let out = m.wire(name, n as u32 * 8, "the frame in m_axis byte order (byte 0 in bits 7..0)");
    m.assign(&out, axis_order(&be, n));
    out
}

/// A transport header's value for the field named `name` (as in proto's
/// field table), supplied by the caller.
pub type Values<'a> = &'a dyn Fn(&str) -> Expr;

/// `(field, value)` pairs for `fields`, values by field name.
fn named<'f>(fields: &[&'f Field], v: Values) -> Vec<(&'f Field, Expr)> {
    fields.iter().map(|f| (*f, v(f.name))).collect()
}

/// The SACK header (the model's `sack_header`): opcode SACK and the fields
/// sack_gen hands over.
pub fn sack_header(v: Values) -> Expr {
    use mrnic_proto::layouts::sack as s;
    let mut fs = named(
        &[
            &s::RATE_HINT,
            &s::DST_CONN,
            &s::PATH_ID,
            &s::CUM_PSN,
            &s::PATH_GEN,
            &s::STREAM_ID,
            &s::COMPLETED_MSN,
            &s::ECHO_TS,
            &s::ECN_CNT,
            &s::BITMAP,
        ],
        v,
    );
    fs.push((&s::OPCODE, lit(4, mrnic_proto::Opcode::Sack as u64)));
    place(s::LAYOUT.len, &fs)
}

/// The NACK header (the model's `nack_header`).
pub fn nack_header(v: Values) -> Expr {
    use mrnic_proto::layouts::nack as n;
    let mut fs = named(
        &[&n::CODE, &n::DST_CONN, &n::PATH_ID, &n::PATH_PSN, &n::PATH_GEN, &n::STREAM_ID, &n::MSN, &n::ECHO_TS],
        v,
    );
    fs.push((&n::OPCODE, lit(4, mrnic_proto::Opcode::Nack as u64)));
    place(n::LAYOUT.len, &fs)
}

/// The PROBE header (the model's `probe_header`).
pub fn probe_header(v: Values) -> Expr {
    use mrnic_proto::layouts::probe as p;
    let mut fs = named(&[&p::TX_TS, &p::DST_CONN, &p::PATH_ID, &p::PATH_PSN, &p::PATH_GEN], v);
    fs.push((&p::OPCODE, lit(4, mrnic_proto::Opcode::Probe as u64)));
    place(p::LAYOUT.len, &fs)
}

/// The data header (the model's `data_header`) as two placements of the
/// field table, one per variant, chosen by the `opcode` value: WRITE and
/// WRITE_IMM carry `rkey` and `addr`, SEND and SEND_IMM `rq_seq` and
/// `msg_offset` (the reserved bits of each variant stay 0). Wires are
/// named `<name>_*`.
pub fn data_header(m: &mut Module, name: &str, v: Values) -> Signal {
    use mrnic_proto::layouts::data as d;
    let common: Vec<&Field> = vec![
        &d::OPCODE,
        &d::SOM,
        &d::EOM,
        &d::RETX,
        &d::ACKREQ,
        &d::PAYLOAD_LEN,
        &d::DST_CONN,
        &d::PATH_ID,
        &d::PATH_PSN,
        &d::PATH_GEN,
        &d::STREAM_ID,
        &d::MSN,
        &d::MSG_LEN,
        &d::TX_TS,
        &d::IMM,
    ];
    let bits = d::LAYOUT.len as u32 * 8;
    let variant = |m: &mut Module, which: &str, extra: &[&'static Field]| -> Signal {
        let fs: Vec<&Field> = common.iter().copied().chain(extra.iter().copied()).collect();
        let s = m.wire(&format!("{name}_{which}"), bits, &format!("data header, {which} variant"));
        m.assign(&s, place(d::LAYOUT.len, &named(&fs, v)));
        s
    };
    let write = variant(m, "write", &[&d::RKEY, &d::ADDR]);
    let send = variant(m, "send", &[&d::RQ_SEQ, &d::MSG_OFFSET]);
    // SEND is 2, SEND_IMM 3: bit 1 of the opcode.
    let out = m.wire(name, bits, "data header, big-endian");
    let (_, op_lo) = d::OPCODE.vector_range(d::LAYOUT.len);
    m.assign(&out, mux(write.bit(op_lo as u32 + 1), &send, &write));
    out
}

// ------------------------------------------------------------------ payload

/// Bits of a count of valid bytes `1..=bb` in a beat of `bb` bytes.
pub fn count_bits(bb: u32) -> u32 {
    crate::expr::index_bits(bb) + 1
}

/// Bytes `0..n` of `beat` (byte 0 in bits 7..0), the others zero; `n` is
/// [`count_bits`] wide.
pub fn mask_beat(m: &mut Module, name: &str, beat: &Signal, n: &Signal) -> Signal {
    let bb = beat.width() / 8;
    let nw = count_bits(bb);
    let parts: Vec<Expr> =
        (0..bb).rev().map(|i| mux(lit(nw, u64::from(i)).lt(n), beat.slice(8 * i + 7, 8 * i), lit(8, 0))).collect();
    let out = m.wire(name, beat.width(), "the beat's valid bytes, the others zero");
    m.assign(&out, cat(&parts));
    out
}

/// The one's-complement sum of a masked beat's 16-bit words, byte `2i`
/// the high half of word `i` (words paired from the beat's byte 0, which
/// is how they pair in the datagram when the beat starts at an even
/// offset).
pub fn beat_sum(m: &mut Module, name: &str, beat: &Signal) -> Signal {
    let bb = beat.width() / 8;
    assert!(bb % 2 == 0, "an even number of bytes per beat");
    let words: Vec<Expr> =
        (0..bb / 2).map(|i| cat(&[beat.slice(16 * i + 7, 16 * i), beat.slice(16 * i + 15, 16 * i + 8)])).collect();
    ones_sum(m, name, &words)
}

/// `a + b` in one's complement (16 bits each).
pub fn ones_add(m: &mut Module, name: &str, a: Expr, b: Expr) -> Signal {
    ones_sum(m, name, &[a, b])
}

/// The raw CRC-32 register (no final XOR) after feeding bytes `0..n` of
/// the masked beat `beat` (byte 0 first) from `raw`: the whole beat
/// through the parallel update, then the `bb - n` zero bytes it fed too
/// many taken back out, one conditional 32x32 matrix per bit of that count.
pub fn crc_beat(m: &mut Module, name: &str, raw: &Signal, beat: &Signal, n: &Signal) -> Signal {
    let bb = beat.width() / 8;
    let eqs = crate::rx_parser::crc_equations(bb as usize);
    let mut bits = Vec::new();
    for (j, (st, data)) in eqs.iter().enumerate() {
        let ins: Vec<Expr> = st.iter().map(|&i| raw.bit(i)).chain(data.iter().map(|&d| beat.bit(d))).collect();
        let b = m.wire(&format!("{name}_full{j}"), 1, &format!("bit {j} after the whole beat"));
        m.assign(&b, cat(&ins).reduce_xor());
        bits.push(b.expr());
    }
    let mut cur = m.wire(&format!("{name}_full"), 32, "raw CRC after the whole beat");
    m.assign(&cur, cat(&bits.into_iter().rev().collect::<Vec<_>>()));
    let kb = crate::expr::index_bits(bb);
    if bb > 1 {
        // bb - n for n in 1..=bb is -n mod bb: n's low bits negated.
        let k = m.wire(&format!("{name}_extra"), kb, "zero bytes fed past the valid ones: bb - n");
        m.assign(&k, lit(kb, 0) - n.slice(kb - 1, 0));
        for b in 0..kb {
            let cols = crate::rx_parser::unfeed_equations(1 << b);
            let parts: Vec<Expr> = cols
                .iter()
                .rev()
                .map(|c| {
                    if c.is_empty() {
                        lit(1, 0)
                    } else {
                        cat(&c.iter().map(|&i| cur.bit(i)).collect::<Vec<_>>()).reduce_xor()
                    }
                })
                .collect();
            let back = m.wire(&format!("{name}_unfeed{b}"), 32, &format!("{} zero bytes taken back", 1 << b));
            m.assign(&back, cat(&parts));
            let next = m.wire(&format!("{name}_u{b}"), 32, "after this bit of the count");
            m.assign(&next, mux(k.bit(b), &back, &cur));
            cur = next;
        }
    }
    let out = m.wire(name, 32, "raw CRC after the beat's valid bytes");
    m.assign(&out, &cur);
    out
}

/// One AXI read beat of a payload folded into the digest: the raw ICRC
/// register `raw` and the payload's one's-complement sum `sum` after it.
/// The beat is as it arrives (aligned to the beat, `m_axi_rdata` byte 0 in
/// bits 7..0); on the `first` beat of a payload its bytes start at `skip`
/// (the buffer address modulo the beat), and `n` ([`count_bits`] wide,
/// `1..=bb`) payload bytes of it count. Every later beat starts at payload
/// offset `bb * i - skip`, so an odd `skip` pairs its bytes the other way
/// round in the checksum's words: its sum is byte-swapped (one's-complement
/// sums commute with a byte swap).
#[allow(clippy::too_many_arguments)]
pub fn digest_beat(
    m: &mut Module,
    name: &str,
    raw: &Signal,
    sum: &Signal,
    beat: &Signal,
    first: &Expr,
    skip: &Signal,
    n: &Signal,
) -> (Signal, Signal) {
    let bb = beat.width() / 8;
    let kb = skip.width();
    assert_eq!(kb, crate::expr::index_bits(bb), "skip indexes a byte of the beat");
    let shift = m.wire(&format!("{name}_shift"), kb + 3, "bits the first beat is shifted down by: skip * 8");
    m.assign(&shift, mux(first.clone(), cat(&[skip.expr(), lit(3, 0)]), lit(kb + 3, 0)));
    let shifted = m.wire(&format!("{name}_shifted"), beat.width(), "the beat from its first payload byte");
    m.assign(&shifted, beat.expr() >> shift.expr());
    let masked = mask_beat(m, &format!("{name}_masked"), &shifted, n);
    let raw1 = crc_beat(m, &format!("{name}_crc"), raw, &masked, n);
    let bs = beat_sum(m, &format!("{name}_bsum"), &masked);
    let swap = first.clone().logic_not().logic_and(skip.bit(0));
    let aligned = mux(swap, cat(&[bs.slice(7, 0), bs.slice(15, 8)]), &bs);
    let sum1 = ones_add(m, &format!("{name}_sum"), sum.expr(), aligned);
    (raw1, sum1)
}
