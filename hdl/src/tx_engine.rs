//! `tx_engine` RTL, its pieces so far: the frame builder, the output
//! stage's beats, units of the scheduler and the connection congestion step.
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
//!
//! and pieces of the scheduler:
//!
//! - [`path_choice`]: the decision's path choice (plane health, port
//!   readiness, the paths a retransmission or new data may take and
//!   whether full ports alone hold them, the ring's hold, the paths one
//!   more packet fills), the model's
//!   [`choose`](mrnic_model::tx_engine::choose), which the model's decision
//!   calls too;
//! - [`rr_pick`]: the round-robin choice of the next ready connection
//!   (64-bit words and a summary bit per word), the model's
//!   [`rr_first`](mrnic_model::tx_engine::rr_first);
//! - [`stream_pick`]: the decision's stream, the model's
//!   [`stream_choice`](mrnic_model::tx_engine::stream_choice), from the
//!   heads [`stream_heads`] reads off the streams' words (the model's
//!   [`stream_head`](mrnic_model::tx_engine::stream_head));
//!
//! and the first piece of the acknowledgement unit:
//!
//! - [`conn_cc`] (with [`conn_cap`]): the connection-level AIMD, RTT
//!   estimators and cap on a SACK, the model's
//!   [`conn_cc_ack`](mrnic_model::tx_engine::conn_cc_ack), which the
//!   model's SACK handling calls too;
//! - [`sack_window`]: whether a SACK acknowledges a psn never sent, and
//!   whether it acknowledges the outstanding psn at a given offset, the
//!   model's [`sack_window`](mrnic_model::tx_engine::sack_window) and
//!   [`sack_acks`](mrnic_model::tx_engine::sack_acks), which the model's
//!   SACK handling calls;
//! - [`sack_fold`]: a SACK's first pass, one acknowledged slot folded in
//!   per cycle (counts, the RTT sample's flag, RACK across paths, the
//!   paths that delivered, the newest tx_seq delivered), the model's
//!   [`sack_fold`](mrnic_model::tx_engine::sack_fold), which the model's
//!   SACK handling calls;
//!
//! and of the commit:
//!
//! - [`cut`]: the cut of one new data packet (its length, the stream's
//!   word, the path's mirror and the connection's context after it, the
//!   tail timer's arming and ACKREQ), the model's
//!   [`cut`](mrnic_model::tx_engine::cut), which the model's commit calls;
//!
//! and of the post:
//!
//! - [`post_rule`]: a work request into its stream's queue (or flushed when
//!   its connection is not live), the model's
//!   [`post_rule`](mrnic_model::tx_engine::post_rule), which the model's
//!   post calls;
//!
//! and of the completion walk:
//!
//! - [`walk_step`]: one step (a SACK's walk completes a stream's head or
//!   drops the stream and finds the next; a failure's walk completes the
//!   culprit, flushes each stream's requests, drains an empty stream), the
//!   model's [`walk_next`](mrnic_model::tx_engine::walk_next), which the
//!   model's walk calls;
//!
//! and of the output unit's AXI4 read master:
//!
//! - [`axi_burst`]: the next burst's length (to the payload's end, the
//!   4 KiB boundary or `axi_max_burst`), the model's
//!   [`burst`](mrnic_model::tx_engine::burst);
//!
//! and of the output stage:
//!
//! - [`frame_beat`]: beat `k` of a frame on `m_axis` from the frame's head,
//!   two payload buffer beats as the host's read beats brought them (one
//!   rotation by `(skip - head_len) mod bb` realigns the whole payload)
//!   and the ICRC, with `tkeep`'s count and `tlast`, the model's
//!   [`frame_beat`](mrnic_model::tx_engine::frame_beat), which the model's
//!   output calls too.
//!
//! `hdl/tests/tx_engine.rs` runs each of them under Icarus against the
//! model's functions: random field values, random payloads (odd lengths,
//! odd offsets) read in 8- and 64-byte beats, random decisions around
//! every boundary of the choice, and random SACKs around every boundary of
//! the congestion step, payload ranges around the 4 KiB boundary and
//! the longest burst, and frames of every head with payloads from every
//! offset, beat by beat.
//!
//! The engine's clocked units, each replayed against a trace its model tap
//! records: [`output`] (`tx_output`, `hdl/tests/tx_engine_output.rs`),
//! [`walk`] (`tx_walk`, the completion walk's control,
//! `hdl/tests/tx_engine_walk.rs`), [`post`] (`tx_post`, the post
//! pipeline, `hdl/tests/tx_engine_post.rs`), [`ack`] (`tx_ack`, the
//! acknowledgement unit's control, `hdl/tests/tx_engine_ack.rs`), [`rto`]
//! (`tx_rto`, its timeout and update handlers with the ALL_LOST walk,
//! `hdl/tests/tx_engine_rto.rs`), [`nack`] (`tx_nack`, its NACK handler:
//! stale checks, RNR back-off, BAD_HDR retransmission and the failures,
//! acting when its reads answer, `hdl/tests/tx_engine_nack.rs`),
//! [`sack`] (`tx_sack`, its SACK handler's step: stale checks, both
//! passes over the ring, events, mirror, context and `last_progress`
//! writes, losses and the continuation, spread over the unit's busy
//! window, `hdl/tests/tx_engine_sack.rs`), [`stage`] (`tx_stage`, the
//! SACK's later stages and its continuation: RACK across paths, the
//! tail timer's arm and PROBEs, completed_msn and the completion walk's
//! start, a ring read a cycle with the count held while the walk reads,
//! `hdl/tests/tx_engine_stage.rs`),
//! [`probe`] (`tx_probe`, the scheduler's PROBE send, acting when its
//! reads answer, `hdl/tests/tx_engine_probe.rs`),
//! [`timer`] (`tx_timer`, the RNR and window-probe queues in memories
//! and the unit's RNR, window-probe and tail-timer steps, acting when
//! their reads answer, `hdl/tests/tx_engine_timer.rs`),
//! [`sched`] (`tx_sched`, the scheduler's control,
//! `hdl/tests/tx_engine_sched.rs`) and [`commit`] (`tx_commit`, the commit
//! of new data and of retransmissions and RNR resends with the retry
//! limit's failure, combinational: the model's commit keeps nothing
//! between cycles; `hdl/tests/tx_engine_commit.rs`).

use mrnic_proto::field::Field;
use mrnic_proto::layouts::{eth, ipv4, udp, ICRC_LEN};
use mrnic_proto::packet::{ECN_ECT0, ETHERTYPE_IPV4, IPPROTO_UDP, NET_OVERHEAD};

use crate::expr::{cat, fit, index_bits, lit, mux, repl, zeros, zext, Expr, Signal};
use crate::ir::Module;
use mrnic_model::tx_engine::TxEngineParams;

/// `cond ? a : 0` for a value of `w` bits: the units' payloads are 0
/// without their valid, so a waveform shows only what is handed over.
pub(crate) fn gate(cond: impl Into<Expr>, a: impl Into<Expr>, w: u32) -> Expr {
    mux(cond, a, zeros(w))
}

/// The acknowledgement unit's handlers' reads in flight: a step (`go`)
/// issues its reads and they answer `l` cycles later (architecture.md,
/// tx_engine item 4). A shift register `rd_pipe` of `l` bits, the oldest
/// in the top bit; returns it and the wire `answer`, high in the answer's
/// cycle.
pub(crate) fn read_answer(m: &mut Module, go: &Signal, l: u32) -> (Signal, Signal) {
    let pipe = m.reg("rd_pipe", l, 0, "the step's reads in flight, the oldest in the top bit");
    let shifted = if l == 1 { go.expr() } else { cat(&[pipe.q.slice(l - 2, 0), go.expr()]) };
    m.next(crate::ir::set(&pipe.next, shifted));
    let ans = m.wire_from("answer", 1, "the step's reads answer: the handler acts", pipe.q.bit(l - 1));
    (pipe.q, ans)
}

/// An answered read as a net valid from the answer on: `e` (the port) in
/// the answer's cycle (`ans`), a register after, so the handler's later
/// cycles see what the tables held at its step.
pub(crate) fn held(m: &mut Module, ans: &Signal, name: &str, e: Expr, width: u32, comment: &str) -> Signal {
    let r = m.reg_no_reset(&format!("{name}_r"), width, comment);
    let v = m.wire_from(name, width, comment, mux(ans, e, r.q.expr()));
    m.next(crate::ir::set(&r.next, v.expr()));
    v
}

/// The SILENT events of one step, at most `cap` (`suspect_after_rtos`)
/// per path, as the model's
/// [`silent_events`](mrnic_model::tx_engine::silent_events): a count per
/// path of the events sent since `clear` (the step's first answer), and
/// the wire `silent_send`, high when this cycle's uncharged loss (`loss`,
/// its copy's path `phys`) sends one. Bounding them bounds the pending
/// event list (`TxEngineParams::evt_pend`).
/// Returns the wire and the count register (for the unit's invariants,
/// [`silent_ghost`]).
pub(crate) fn silent_cap(
    m: &mut Module,
    clear: &Signal,
    loss: &Signal,
    phys: &Signal,
    np: u32,
    cap: u32,
) -> (Signal, Signal) {
    let cw = index_bits(cap + 1);
    let r = m.reg_no_reset("silent_counts", np * cw, "SILENT events sent this step, per path");
    let cur = m.wire_from("silent_counts_cur", np * cw, "before this cycle's", mux(clear, lit(np * cw, 0), r.q.expr()));
    let at = m.wire_from("silent_count_at", cw, "the lost copy's path's", pick(&cur, &phys.expr(), np, cw, cw));
    let send = m.wire_from(
        "silent_send",
        1,
        "the uncharged loss sends a SILENT event: its path has had fewer than suspect_after_rtos",
        loss.expr().logic_and(at.expr().lt(lit(cw, u64::from(cap)))),
    );
    m.next(crate::ir::set(&r.next, bump_path(&cur, np, cw, send.expr(), phys.expr())));
    (send, r.q)
}

/// The formal side of [`silent_cap`] in a unit's properties: the ghost of
/// the SILENT events the latest step sent per path (`sent`: the events,
/// `path` theirs), counted one bit wider than the unit's count so an
/// excess shows, cleared by a step (`go`) or a reset. Asserts
/// `a_silent_cap` (never more than `cap` a path) and `a_inv_silent` (from
/// the step's answer on, the unit's count `counts` is the ghost's; 0
/// before, as no event comes before the answer; `walking`, the unit's
/// ghost of the cycles it may send in, only after it; `past_answer`, the
/// step's age past its answer, whenever it has answered). Returns the ghost's
/// count of path `phys`, and its width.
#[allow(clippy::too_many_arguments)]
pub(crate) fn silent_ghost(
    m: &mut Module,
    reset: Expr,
    at_answer: &Signal,
    past_answer: Expr,
    walking: Expr,
    sent: Expr,
    path: Expr,
    phys: Expr,
    counts: &Signal,
    np: u32,
    cap: u32,
) -> (Expr, u32) {
    use crate::formal::implies;
    use crate::ir::{if_else, set};
    let uw = index_bits(cap + 1);
    let cw = uw + 1;
    let f_sn = m.formal_wire("f_silent_sent", np * cw, "SILENT events of the latest step, per path");
    let f_live = m.formal_wire("f_silent_live", 1, "the latest step's reads have answered");
    m.formal_seq(vec![if_else(
        reset,
        vec![set(&f_sn, lit(np * cw, 0)), set(&f_live, lit(1, 0))],
        vec![
            set(&f_sn, bump_path(&f_sn, np, cw, sent, path)),
            crate::ir::if_then(at_answer, vec![set(&f_live, lit(1, 1))]),
        ],
    )]);
    let within = (0..np).fold(lit(1, 1), |acc, q| acc.logic_and(field(&f_sn, q, cw, cw).le(lit(cw, u64::from(cap)))));
    m.assert(
        "a_silent_cap",
        &format!(
            "at most suspect_after_rtos = {cap} SILENT events per path per step (the pending event list's bound, \
             TxEngineParams::evt_pend)"
        ),
        within,
    );
    m.assert(
        "a_inv_silent",
        "the unit's SILENT count per path is the latest step's from its answer on; none before, and no cycle \
         that may send one",
        mux(&f_live, f_sn.expr().eq(zext_fields(counts, np, uw, cw)), f_sn.expr().eq(lit(np * cw, 0)))
            .logic_and(implies(walking, f_live.expr()))
            .logic_and(implies(&f_live, past_answer)),
    );
    (pick(&f_sn, &phys, np, cw, cw), cw)
}

/// `v`'s `np` per-path counts of `w` bits, the one of `path` plus 1 when
/// `hit`.
fn bump_path(v: &Signal, np: u32, w: u32, hit: Expr, path: Expr) -> Expr {
    let pb = index_bits(np);
    let counts: Vec<Expr> = (0..np)
        .rev()
        .map(|q| field(v, q, w, w) + zext(hit.clone().logic_and(path.clone().eq(lit(pb, u64::from(q)))), w))
        .collect();
    cat(&counts)
}

/// `v`'s `n` fields of `w` bits each widened to `to` bits.
fn zext_fields(v: &Signal, n: u32, w: u32, to: u32) -> Expr {
    cat(&(0..n).rev().map(|q| zext(field(v, q, w, w), to)).collect::<Vec<_>>())
}

/// The psn width of the units' ports and records (the wire's, sack_gen's
/// [`PSN_BITS`](mrnic_model::sack_gen::PSN_BITS)).
pub(crate) const PSN: u32 = mrnic_model::sack_gen::PSN_BITS;

/// The low `w` bits of field `i` of a vector of fields `stride` bits
/// apart, field 0 lowest.
pub(crate) fn field(v: &Signal, i: u32, stride: u32, w: u32) -> Expr {
    v.slice(stride * i + w - 1, stride * i)
}

/// The low `w` bits of field `idx` of `n` fields `stride` bits apart in
/// `v` (a mux chain: `n` is a stream or path count, at most 16).
pub(crate) fn pick(v: &Signal, idx: &Expr, n: u32, stride: u32, w: u32) -> Expr {
    let ib = index_bits(n);
    (1..n)
        .fold(field(v, 0, stride, w), |acc, k| mux(idx.clone().eq(lit(ib, u64::from(k))), field(v, k, stride, w), acc))
}

pub mod ack;
pub mod assembly;
pub mod commit;
pub mod nack;
pub mod open;
pub mod output;
pub mod post;
pub mod probe;
pub mod rto;
pub mod sack;
pub mod sched;
pub mod stage;
pub mod state;
mod step;
pub mod timer;
pub mod walk;

/// The engine's ports named `names`, one definition for the engine and
/// the units that carry its ports (`tx_engine::ports`).
fn engine_ports(p: &TxEngineParams, names: &[&str]) -> Vec<mrnic_model::block::PortDef> {
    let engine = mrnic_model::tx_engine::ports(p);
    names
        .iter()
        .map(|n| engine.iter().find(|d| d.name == *n).unwrap_or_else(|| panic!("tx_engine has no port {n}")).clone())
        .collect()
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
pub fn words_of(be: &Signal, bytes: usize) -> Vec<Expr> {
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

// -------------------------------------------------------------- path choice

/// Sizes the path choice is built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChoiceSizes {
    /// Paths per connection (`PATHS`).
    pub paths: u32,
    /// Plane marks the NIC keeps (`transport.planes`).
    pub planes: u32,
    /// `log2(mtu)`: a packet in flight counts as one MTU of the window.
    pub mtu_shift: u32,
    /// Retransmit ring slots per path.
    pub ring_depth: u32,
}

impl ChoiceSizes {
    pub fn of(p: &TxEngineParams) -> ChoiceSizes {
        ChoiceSizes {
            paths: p.paths,
            planes: p.cfg.transport.planes,
            mtu_shift: p.cfg.transport.mtu.trailing_zeros(),
            ring_depth: p.ring_depth,
        }
    }

    /// Bits of a path index.
    pub fn path_bits(&self) -> u32 {
        crate::expr::index_bits(self.paths)
    }
}

/// The inputs of one decision's path choice, as nets. Per-path fields are packed,
/// path 0 in the low bits, at proto's table widths (as `s_trd_*` packs
/// them); plane marks likewise, plane 0 in the low bits.
#[derive(Clone, Debug)]
pub struct ChoiceIn {
    /// Paths of the connection, `path_bits + 1` bits: paths at or above
    /// it take no part.
    pub npaths: Signal,
    pub state: Signal,
    pub plane: Signal,
    pub timed_out: Signal,
    pub inflight: Signal,
    pub cwnd: Signal,
    pub next_psn: Signal,
    pub cum_acked: Signal,
    /// A bit per plane: the plane is marked unhealthy ...
    pub mark_valid: Signal,
    /// ... until this timestamp (32 bits per plane).
    pub mark_until: Signal,
    /// A bit per plane: its NIC port has room (`port_ready`).
    pub port_ready: Signal,
    pub ts: Signal,
    /// The connection is below its cap.
    pub conn_ok: Signal,
    /// Path of the packet a retransmission would resend.
    pub retx_path: Signal,
}

/// The path choice: a bit per path, as the model's [`Choice`](mrnic_model::tx_engine::Choice).
#[derive(Clone, Debug)]
pub struct ChoiceOut {
    pub retx_elig: Signal,
    pub retx_port_wait: Signal,
    pub new_elig: Signal,
    pub new_port_wait: Signal,
    pub ring_held: Signal,
    pub full_after: Signal,
}

/// The decision's path choice (the model's
/// [`choose`](mrnic_model::tx_engine::choose)), combinational: plane
/// health from the NIC's marks (a plane marked until after `ts` is left
/// out unless that leaves no GOOD path), the paths a retransmission may
/// take, the paths new data may take and whether the ring alone holds one
/// back, and the paths one more packet fills; both kinds of packet take
/// only paths whose NIC port is ready, and wait (`*_port_wait`) when full
/// ports alone hold them. A comparator per path and per (path, plane); no
/// adder wider than a psn. Wires are named `<name>_*`.
pub fn path_choice(m: &mut Module, name: &str, sz: &ChoiceSizes, inp: &ChoiceIn) -> ChoiceOut {
    use mrnic_proto::tables::path as pt;
    let n = sz.paths;
    let pb = sz.path_bits();
    let (sw, plw, iw, cw, qw) = (pt::STATE.width, pt::PLANE.width, pt::INFLIGHT.width, pt::CWND.width, 24);
    let field = |e: &Signal, i: u32, w: u32| e.slice(w * i + w - 1, w * i);
    let bits = |v: Vec<Expr>| cat(&v.into_iter().rev().collect::<Vec<_>>());
    let mut w = |nm: &str, width: u32, c: &str, e: Expr| {
        let s = m.wire(&format!("{name}_{nm}"), width, c);
        m.assign(&s, e);
        s
    };
    // A plane is marked while its deadline is ahead: `ts - until`
    // negative as a 32-bit serial number.
    let marked: Vec<Expr> = (0..sz.planes)
        .map(|q| {
            let left = inp.ts.expr() - field(&inp.mark_until, q, 32);
            inp.mark_valid.bit(q).logic_and(left.ge(lit(32, 1 << 31)))
        })
        .collect();
    let marked = w("marked", sz.planes, "per plane: marked and its deadline not reached", bits(marked));
    let exists = w(
        "exists",
        n,
        "per path: below npaths",
        bits((0..n).map(|i| lit(pb + 1, u64::from(i)).lt(&inp.npaths)).collect()),
    );
    let good = w(
        "good",
        n,
        "per path: GOOD",
        bits((0..n).map(|i| exists.bit(i).logic_and(field(&inp.state, i, sw).eq(lit(sw, 0)))).collect()),
    );
    let healthy = w(
        "healthy",
        n,
        "per path: its plane is not marked",
        bits(
            (0..n)
                .map(|i| {
                    let hit = (0..sz.planes)
                        .map(|q| field(&inp.plane, i, plw).eq(lit(plw, u64::from(q))).logic_and(marked.bit(q)))
                        .reduce(|a, b| a.logic_or(b))
                        .expect("at least one plane");
                    exists.bit(i).logic_and(hit.logic_not())
                })
                .collect(),
        ),
    );
    let ported = w(
        "ported",
        n,
        "per path: its NIC port has room (a plane with no port bit has none to lack)",
        bits(
            (0..n)
                .map(|i| {
                    (0..sz.planes)
                        .map(|q| {
                            field(&inp.plane, i, plw)
                                .eq(lit(plw, u64::from(q)))
                                .logic_and(inp.port_ready.bit(q).logic_not())
                        })
                        .reduce(|a, b| a.logic_or(b))
                        .expect("at least one plane")
                        .logic_not()
                })
                .collect(),
        ),
    );
    let any_gh =
        w("any_good_healthy", 1, "a GOOD path on a healthy plane", (good.expr() & healthy.expr()).ne(lit(n, 0)));
    let allowed =
        w("allowed", n, "healthy paths, or all when none is GOOD", mux(&any_gh, &healthy, repl(n, lit(1, 1))));
    // Retransmission of a packet of path `retx_path`.
    let r = inp.retx_path.expr();
    let own = w(
        "own",
        n,
        "the retransmitted packet's own path (one-hot)",
        bits((0..n).map(|i| r.clone().eq(lit(pb, u64::from(i)))).collect()),
    );
    let own_ok = w(
        "own_ok",
        1,
        "its own path is GOOD, not timed out and healthy",
        (own.expr() & good.expr() & !inp.timed_out.expr() & healthy.expr()).ne(lit(n, 0)),
    );
    let others = w("others", n, "other GOOD allowed paths", !own.expr() & good.expr() & allowed.expr());
    let own_good = w("own_good", n, "its own path if GOOD", own.expr() & good.expr());
    let retx_elig = w(
        "retx_any",
        n,
        "paths the retransmission may take, retx_path taken as valid",
        mux(&own_ok, &own_good, mux(others.expr().ne(lit(n, 0)), &others, &own_good)),
    );
    // A packet of no path of the connection (never queued) may take none.
    let own_valid =
        w("own_valid", 1, "retx_path is a path of the connection", (own.expr() & exists.expr()).ne(lit(n, 0)));
    let retx_want = w(
        "retx_want",
        n,
        "paths the retransmission takes with every port ready",
        mux(&own_valid, &retx_elig, lit(n, 0)),
    );
    let retx_elig = w("retx_elig", n, "paths the retransmission may take", retx_want.expr() & ported.expr());
    let retx_port_wait = w(
        "retx_port_wait",
        1,
        "the retransmission waits for a full port",
        retx_want.expr().ne(lit(n, 0)).logic_and(retx_elig.expr().eq(lit(n, 0))),
    );
    // New data.
    let sh = sz.mtu_shift;
    let ww = (iw + sh).max(cw) + 1;
    let scaled = |e: Expr| zext(cat(&[e, lit(sh, 0)]), ww);
    let mut cand = Vec::new();
    let mut ring_ok = Vec::new();
    let mut full = Vec::new();
    for i in 0..n {
        let infl = field(&inp.inflight, i, iw);
        let cwnd = zext(field(&inp.cwnd, i, cw), ww);
        let cwnd_ok = scaled(infl.clone()).lt(cwnd.clone());
        cand.push(good.bit(i).logic_and(cwnd_ok).logic_and(&inp.conn_ok).logic_and(allowed.bit(i)));
        let span = field(&inp.next_psn, i, qw) - field(&inp.cum_acked, i, qw);
        ring_ok.push(span.lt(lit(qw, u64::from(sz.ring_depth))));
        let max = pt::INFLIGHT.max();
        let plus = mux(infl.clone().eq(lit(iw, max)), lit(iw, max), infl + lit(iw, 1));
        full.push(exists.bit(i).logic_and(scaled(plus).ge(cwnd)));
    }
    let cand = w("cand", n, "per path: new data fits but for the ring", bits(cand));
    let ring_ok = w("ring_ok", n, "per path: a free ring slot", bits(ring_ok));
    let fits = w("fits", n, "per path: new data fits but for its port", cand.expr() & ring_ok.expr());
    let new_elig = w("new_elig", n, "paths new data may take", fits.expr() & ported.expr());
    let new_port_wait = w(
        "new_port_wait",
        1,
        "new data waits for a full port",
        fits.expr().ne(lit(n, 0)).logic_and(new_elig.expr().eq(lit(n, 0))),
    );
    let ring_held = w(
        "ring_held",
        1,
        "a path held back by its ring alone",
        (cand.expr() & !ring_ok.expr() & ported.expr()).ne(lit(n, 0)),
    );
    let full_after = w("full_after", n, "paths one more packet fills", bits(full));
    ChoiceOut { retx_elig, retx_port_wait, new_elig, new_port_wait, ring_held, full_after }
}

// --------------------------------------------- connection congestion (SACK)

/// Sizes and constants of the connection-level congestion step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CcSizes {
    /// Bits of a path index (`npaths` has one more).
    pub path_bits: u32,
    /// Bits of a SACK's acknowledged packet count (at most a ring's slots).
    pub pkts_bits: u32,
    pub mtu: u32,
    pub min_cwnd: u32,
    /// `cc.conn_max_cwnd_bytes`, at most `u32::MAX`.
    pub conn_max: u32,
    /// Bytes per timestamp unit at line rate (the cap's constant factor).
    pub line: u64,
    pub srtt_shift: u32,
    pub ecn_shift: u32,
}

impl CcSizes {
    pub fn of(p: &TxEngineParams) -> CcSizes {
        let k = mrnic_model::path_telemetry::Consts::from_config(&p.cfg);
        CcSizes {
            path_bits: p.path_bits,
            pkts_bits: 32 - p.ring_depth.leading_zeros(),
            mtu: k.mtu,
            min_cwnd: k.min_cwnd,
            conn_max: p.cfg.cc.conn_max_cwnd_bytes.min(u64::from(u32::MAX)) as u32,
            line: mrnic_model::tx_engine::line_bytes_per_ts(p),
            srtt_shift: k.srtt_shift,
            ecn_shift: k.ecn_shift,
        }
    }
}

/// A connection's congestion state as nets (the model's
/// [`Cc`](mrnic_model::tx_engine::Cc) less the rate hint and cap, which a
/// SACK replaces, and the bytes in flight, which it does not touch).
#[derive(Clone, Debug)]
pub struct CcState {
    /// 32 bits.
    pub cwnd: Signal,
    /// proto's `ACKED_BYTES` width (24).
    pub acked_bytes: Signal,
    /// 8 bits.
    pub ecn_ewma: Signal,
    /// 32 bits.
    pub hold_until: Signal,
    /// 32 bits.
    pub srtt: Signal,
    /// proto's `MIN_RTT` width (20), all ones before the first sample.
    pub min_rtt: Signal,
}

/// What a SACK gives the step, as nets.
#[derive(Clone, Debug)]
pub struct CcAckIn {
    pub ts: Signal,
    /// [`CcSizes::pkts_bits`].
    pub pkts: Signal,
    /// 32 bits.
    pub bytes: Signal,
    /// 8 bits.
    pub ecn_cnt: Signal,
    /// 16 bits.
    pub rate_hint: Signal,
    pub rtt_valid: Signal,
    /// 16 bits.
    pub rtt: Signal,
    /// `path_bits + 1` bits.
    pub npaths: Signal,
}

/// The state after the SACK, and the new cap (32 bits).
#[derive(Clone, Debug)]
pub struct CcOut {
    pub state: CcState,
    pub cap: Signal,
}

/// The larger of two equally wide values.
fn max_of(a: Expr, b: Expr) -> Expr {
    mux(a.clone().lt(b.clone()), b, a)
}

/// The smaller of two equally wide values.
fn min_of(a: Expr, b: Expr) -> Expr {
    mux(a.clone().lt(b.clone()), a, b)
}

/// The connection's send cap (the model's
/// [`conn_cap`](mrnic_model::tx_engine::conn_cap)): `min(cwnd, rate_hint
/// x line x max(srtt, 5/4 base) >> 16)`, at least one MTU, `base` being
/// min_rtt, or srtt before the first sample. Two multipliers: by the
/// line constant and by the RTT. 32 bits.
pub fn conn_cap(m: &mut Module, name: &str, sz: &CcSizes, st: &CcState, rate_hint: &Signal) -> Signal {
    use mrnic_model::path_telemetry::MIN_RTT_NONE;
    let mrw = st.min_rtt.width();
    let none = st.min_rtt.expr().eq(lit(mrw, u64::from(MIN_RTT_NONE)));
    let base = m.wire_from(
        &format!("{name}_base"),
        34,
        "min_rtt, srtt before a sample",
        mux(none, zext(&st.srtt, 34), zext(&st.min_rtt, 34)),
    );
    let rtt = m.wire_from(
        &format!("{name}_rtt"),
        34,
        "max(srtt, 5/4 base)",
        max_of(zext(&st.srtt, 34), base.expr() + (base.expr() >> lit(2, 2))),
    );
    let lw = 64 - sz.line.leading_zeros();
    let w = 16 + lw + 34;
    let rate = m.wire_from(
        &format!("{name}_rate"),
        16 + lw,
        "rate_hint x line",
        zext(rate_hint, 16 + lw) * lit(16 + lw, sz.line),
    );
    let prod = m.wire_from(&format!("{name}_prod"), w, "rate_hint x line x rtt", zext(&rate, w) * zext(&rtt, w));
    let share =
        m.wire_from(&format!("{name}_share"), w, "the rate hint's share of the window", prod.expr() >> lit(5, 16));
    let low = m.wire_from(&format!("{name}_min"), w, "min(share, cwnd)", min_of(share.expr(), zext(&st.cwnd, w)));
    let mtu = u64::from(sz.mtu);
    m.wire_from(
        name,
        32,
        "the connection's cap, bytes",
        mux(low.expr().lt(lit(w, mtu)), lit(32, mtu), low.slice(31, 0)),
    )
}

/// Connection-level AIMD, RTT and cap on a SACK (the model's
/// [`conn_cc_ack`](mrnic_model::tx_engine::conn_cc_ack)), combinational:
/// the srtt EWMA and min_rtt on an RTT sample, the ECN fraction through
/// the reciprocal ROM and its EWMA, a CE cut by `cwnd x ecn_ewma / 512`
/// at most once per srtt, else the acknowledged bytes and one MTU per path
/// per window of them, then [`conn_cap`]. Wires are named `<name>_*`.
pub fn conn_cc(m: &mut Module, name: &str, sz: &CcSizes, st: &CcState, a: &CcAckIn) -> CcOut {
    use crate::path_telemetry::{ewma, recip_rom};
    use mrnic_proto::tables::path as pt;
    let n = |s: &str| format!("{name}_{s}");
    // RTT sample.
    let srtt_ew = ewma(m, &n("srtt_ewma"), 32, st.srtt.expr(), zext(&a.rtt, 32), sz.srtt_shift);
    let srtt_s = max_of(srtt_ew.expr(), lit(32, 1));
    let srtt = m.wire_from(&n("srtt"), 32, "srtt after the sample", mux(&a.rtt_valid, srtt_s, &st.srtt));
    let mrw = st.min_rtt.width();
    let r1 = zext(max_of(a.rtt.expr(), lit(16, 1)), mrw);
    let min_rtt = m.wire_from(
        &n("min_rtt"),
        mrw,
        "min_rtt after the sample",
        mux(&a.rtt_valid, min_of(st.min_rtt.expr(), r1), &st.min_rtt),
    );
    // ECN fraction: min(ecn_cnt, pkts) (ecn_cnt < 256) times 65536 / pkts.
    let pw = sz.pkts_bits.max(9);
    let pk = zext(&a.pkts, pw);
    let pkts_nz = m.wire_from(&n("pkts_nz"), 1, "the SACK acknowledged a packet", pk.clone().ne(lit(pw, 0)));
    let marked = m.wire_from(&n("marked"), pw, "min(ecn_cnt, pkts)", min_of(zext(&a.ecn_cnt, pw), pk.clone()));
    let addr = m.wire_from(
        &n("recip_addr"),
        8,
        "pkts as the ROM's address",
        if sz.pkts_bits <= 8 { zext(&a.pkts, 8) } else { a.pkts.slice(7, 0) },
    );
    let rom = recip_rom(m, &n("recip_rom"), &addr);
    let recip =
        m.wire_from(&n("recip"), 17, "65536 / clamp(pkts, 1, 256)", mux(pk.ge(lit(pw, 256)), lit(17, 256), &rom));
    let prod = m.wire_from(&n("frac_prod"), 25, "marked x recip", zext(&marked, 25) * zext(&recip, 25));
    let full = m.wire_from(&n("frac_full"), 25, "marked x recip >> 8", prod.expr() >> lit(4, 8));
    let frac = m.wire_from(
        &n("frac"),
        8,
        "ECN fraction, Q0.8, at most 255",
        mux(full.expr().gt(lit(25, 255)), lit(8, 255), full.slice(7, 0)),
    );
    let ecn_ew = ewma(m, &n("ecn_ewma_new"), 8, st.ecn_ewma.expr(), frac.expr(), sz.ecn_shift);
    let ecn = m.wire_from(&n("ecn_ewma"), 8, "ecn_ewma after the SACK", mux(&pkts_nz, &ecn_ew, &st.ecn_ewma));
    // CE: the cut, at most once per srtt.
    let ce = m.wire_from(&n("ce"), 1, "the SACK reports CE marks", a.ecn_cnt.expr().ne(lit(8, 0)));
    let left = m.wire_from(&n("hold_left"), 32, "ts - hold_until", a.ts.expr() - st.hold_until.expr());
    let reached = m.wire_from(&n("hold_reached"), 1, "the hold is over", left.expr().lt(lit(32, 1 << 31)));
    let cut_prod = m.wire_from(&n("cut_prod"), 40, "cwnd x ecn_ewma", zext(&st.cwnd, 40) * zext(&ecn, 40));
    let cut = m.wire_from(&n("cut"), 40, "cwnd x ecn_ewma / 512", cut_prod.expr() >> lit(4, 9));
    let diff = m.wire_from(&n("cut_cwnd"), 40, "cwnd - cut", zext(&st.cwnd, 40) - cut.expr());
    let min_cwnd = u64::from(sz.min_cwnd);
    let cwnd_cut = mux(diff.expr().lt(lit(40, min_cwnd)), lit(32, min_cwnd), diff.slice(31, 0));
    let hold = m.wire_from(&n("hold_next"), 32, "ts + srtt", a.ts.expr() + max_of(srtt.expr(), lit(32, 1)));
    // No CE: acknowledged bytes, saturating; a window of them grows cwnd.
    let abw = pt::ACKED_BYTES.width;
    let amax = pt::ACKED_BYTES.max();
    let sum = m.wire_from(&n("acked_sum"), 33, "acked_bytes + bytes", zext(&st.acked_bytes, 33) + zext(&a.bytes, 33));
    let acked = m.wire_from(
        &n("acked_sat"),
        abw,
        "acked bytes, saturated",
        mux(sum.expr().gt(lit(33, amax)), lit(abw, amax), sum.slice(abw - 1, 0)),
    );
    let grow = m.wire_from(&n("grow"), 1, "a window of bytes acknowledged", zext(&acked, 32).ge(&st.cwnd));
    let step = m.wire_from(&n("step"), 33, "one MTU per path", zext(&a.npaths, 33) * lit(33, u64::from(sz.mtu)));
    let plus = m.wire_from(&n("cwnd_plus"), 33, "cwnd + step", zext(&st.cwnd, 33) + step.expr());
    let cmax = u64::from(sz.conn_max);
    let grown = m.wire_from(
        &n("grown"),
        32,
        "cwnd + step, capped",
        mux(plus.expr().gt(lit(33, cmax)), lit(32, cmax), plus.slice(31, 0)),
    );
    // cwnd <= acked < 2^24 when it grows: the low bits subtract exactly.
    let acked_left = acked.expr() - st.cwnd.slice(abw - 1, 0);
    let cut_now = m.wire_from(&n("cut_now"), 1, "CE and the hold over", ce.expr().logic_and(&reached));
    let cwnd = m.wire_from(
        &n("cwnd"),
        32,
        "cwnd after the SACK",
        mux(&cut_now, cwnd_cut, mux(ce.expr().logic_not().logic_and(&grow), &grown, &st.cwnd)),
    );
    let acked_bytes = m.wire_from(
        &n("acked_bytes"),
        abw,
        "acked_bytes after the SACK",
        mux(&cut_now, lit(abw, 0), mux(&ce, &st.acked_bytes, mux(&grow, acked_left, &acked))),
    );
    let hold_until =
        m.wire_from(&n("hold_until"), 32, "hold_until after the SACK", mux(&cut_now, &hold, &st.hold_until));
    let state = CcState { cwnd, acked_bytes, ecn_ewma: ecn, hold_until, srtt, min_rtt };
    let cap = conn_cap(m, &n("cap"), sz, &state, &a.rate_hint);
    CcOut { state, cap }
}

// ------------------------------------------------------ AXI read bursts

/// `len` (beats - 1, 8 bits) of the next AXI read burst of a payload whose
/// unread part is `next..end` (`addr_bits` each, `next` aligned to the
/// beat, `end > next`), the model's [`burst`](mrnic_model::tx_engine::burst):
/// the fewest of the beats to the end, to the 4 KiB boundary and
/// `axi_max_burst`. Comparators and two subtractors, no divider: the beat
/// counts are shifts.
pub fn axi_burst(m: &mut Module, name: &str, p: &TxEngineParams, next: &Signal, end: &Signal) -> Signal {
    let ab = next.width();
    let bb = p.beat_bytes();
    let sh = bb.trailing_zeros();
    assert!(sh < 12 && p.axi_max_burst <= 256, "a beat within a page, an AXI4 burst length");
    let nw = (13 - sh).max(9);
    let page_beats = u64::from(4096 / bb);
    let lsh = lit(7, u64::from(sh));
    let to_end = m.wire_from(
        &format!("{name}_to_end"),
        ab,
        "beats to the end",
        (end.expr() >> lsh.clone()) - (next.expr() >> lsh),
    );
    let to_page = m.wire_from(
        &format!("{name}_to_page"),
        nw,
        "beats to the 4 KiB boundary",
        lit(nw, page_beats) - zext(next.slice(11, sh), nw),
    );
    let cap = m.wire_from(
        &format!("{name}_cap"),
        nw,
        "beats to the boundary or the longest burst",
        min_of(to_page.expr(), lit(nw, u64::from(p.axi_max_burst))),
    );
    // Every count is at least 1 and the chosen one at most 256: its low
    // byte minus 1 is the length.
    let one = lit(8, 1);
    m.wire_from(
        name,
        8,
        "burst length, beats - 1",
        mux(to_end.expr().lt(zext(&cap, ab)), to_end.slice(7, 0) - one.clone(), cap.slice(7, 0) - one),
    )
}

/// The index of the lowest set bit of `x`'s bits `lo..lo + size` (`size` a
/// power of 2) and whether there is one, as a tree of 2:1 muxes (depth
/// log2 size): a half's index is used when the lower half has a bit.
/// `None` for the index of a single bit (it has no index bits).
/// Bits at or past `x`'s width count as set: a word whose top bit only
/// matters when no other is set need not carry it.
fn lowest(x: &Signal, lo: u32, size: u32) -> (Expr, Option<Expr>) {
    if size == 1 {
        return (if lo < x.width() { x.bit(lo) } else { lit(1, 1) }, None);
    }
    let half = size / 2;
    let (any_lo, idx_lo) = lowest(x, lo, half);
    let (any_hi, idx_hi) = lowest(x, lo + half, half);
    let idx = match (idx_lo, idx_hi) {
        (Some(a), Some(b)) => cat(&[any_lo.clone().logic_not(), mux(any_lo.clone(), a, b)]),
        _ => any_lo.clone().logic_not(),
    };
    (any_lo.logic_or(any_hi), Some(idx))
}

/// [`lowest`]'s index of `x` taken as `w` bits (a power of 2), as the
/// wire `<name>_idx`.
fn lowest_idx(m: &mut Module, name: &str, x: &Signal, w: u32) -> Signal {
    let idx = lowest(x, 0, w).1.unwrap_or_else(|| lit(1, 0));
    m.wire_from(&format!("{name}_idx"), index_bits(w), "the lowest set bit", idx)
}

/// Whether `x` has a bit set, as the wire `<name>_any`.
fn any_wire(m: &mut Module, name: &str, x: &Signal) -> Signal {
    m.wire_from(&format!("{name}_any"), 1, "a bit is set", x.expr().reduce_or())
}

/// What [`rr_pick`] decides.
pub struct RrPick {
    /// A bit of the ready set is set.
    pub found: Signal,
    /// The first set bit at or after `from`, wrapping (the model's
    /// [`rr_first`](mrnic_model::tx_engine::rr_first)); meaningful with `found`.
    pub pick: Signal,
}

/// The scheduler's round-robin choice of a connection from its ready set
/// (a bit per connection, `ready`, a power of 2 wide) starting at `from`,
/// combinational. In words of up to 64 bits, so that `default`'s 4096
/// connections are two levels and no priority encoder is wider than 64:
/// the start word's bits at or above `from` first; else the next word
/// after it with a bit (a 64-bit summary of the words, one OR per word),
/// wrapping to the lowest such word, the start word's lower bits
/// included; in the chosen word its lowest bit. Wires are named `<name>_*`.
pub fn rr_pick(m: &mut Module, name: &str, ready: &Signal, from: &Signal) -> RrPick {
    let (n, cb) = (ready.width(), from.width());
    assert!(n.is_power_of_two() && n >= 2 && index_bits(n) == cb, "rr_pick: {n} ready bits, {cb}-bit start");
    let wb = cb.min(6);
    let (w, k) = (1u32 << wb, n >> wb);
    let nm = |s: &str| format!("{name}_{s}");
    let ones = |width: u32| repl(width, lit(1, 1));
    let fb = m.wire_from(&nm("from_bit"), wb, "the start's bit in its word", from.slice(wb - 1, 0));
    let found = m.wire_from(&nm("found"), 1, "a connection is ready", ready.expr().reduce_or());
    if k == 1 {
        let masked =
            m.wire_from(&nm("masked"), w, "ready bits at or after the start", ready.expr() & (ones(w) << fb.expr()));
        let (any_m, idx_m) = (any_wire(m, &nm("masked"), &masked), lowest_idx(m, &nm("masked"), &masked, w));
        let idx_all = lowest_idx(m, &nm("all"), ready, w);
        let pick =
            m.wire_from(&nm("pick"), cb, "the first ready connection from the start", mux(&any_m, &idx_m, &idx_all));
        return RrPick { found, pick };
    }
    let kb = cb - wb;
    let fw = m.wire_from(&nm("from_word"), kb, "the start's word", from.slice(cb - 1, wb));
    let word_base = |i: Expr| cat(&[i, zeros(wb)]);
    let any: Vec<Expr> = (0..k).rev().map(|i| ready.slice(i * w + w - 1, i * w).reduce_or()).collect();
    let word_any = m.wire_from(&nm("word_any"), k, "per word: a ready bit", cat(&any));
    let start = m.wire_from(&nm("start_word"), w, "the start's word", ready.expr().part(word_base(fw.expr()), w));
    let masked = m.wire_from(&nm("masked"), w, "its bits at or after the start", start.expr() & (ones(w) << fb.expr()));
    let after = m.wire_from(
        &nm("after"),
        k,
        "words after the start's with a ready bit",
        word_any.expr() & ((ones(k) << fw.expr()) << lit(1, 1)),
    );
    let (any_m, idx_m) = (any_wire(m, &nm("masked"), &masked), lowest_idx(m, &nm("masked"), &masked, w));
    let (any_a, idx_a) = (any_wire(m, &nm("after"), &after), lowest_idx(m, &nm("after"), &after, k));
    let idx_w = lowest_idx(m, &nm("wrap"), &word_any, k);
    let word = m.wire_from(
        &nm("word"),
        kb,
        "the word after the start's, else the first (wrapping)",
        mux(&any_a, &idx_a, &idx_w),
    );
    // Its top bit is not needed: it is the one left when no other is set.
    let chosen = m.wire_from(
        &nm("chosen"),
        w - 1,
        "that word's bits but the top one",
        ready.expr().part(word_base(word.expr()), w - 1),
    );
    let idx_c = lowest_idx(m, &nm("chosen"), &chosen, w);
    let pick = m.wire_from(
        &nm("pick"),
        cb,
        "the first ready connection from the start",
        mux(&any_m, cat(&[fw.expr(), idx_m.expr()]), cat(&[word.expr(), idx_c.expr()])),
    );
    RrPick { found, pick }
}

/// The streams' heads as [`stream_pick`] reads them, a field per stream,
/// stream 0 lowest.
pub struct StreamHeads {
    /// Bytes left to cut.
    pub pending: Signal,
    /// The head request has started.
    pub started: Signal,
    /// The head request's msn, 24 bits.
    pub msn: Signal,
    /// The peer's completed_msn, 24 bits.
    pub remote_completed: Signal,
}

/// The streams' words as the decision reads them, one wide word per
/// connection (the model's
/// [`StreamWord`](mrnic_model::tx_engine::StreamWord)), a field per
/// stream, stream 0 lowest.
pub struct StreamWords {
    /// The queue pointers, [`stream_ptr_bits`] each.
    pub pend: Signal,
    pub tail: Signal,
    /// The next msn to post, 24 bits each.
    pub next_msn: Signal,
    /// The request at `pend` has started: its bytes cut (the word's
    /// `pend_sent`) are not zero.
    pub pend_started: Signal,
    /// The peer's completed_msn, 24 bits each.
    pub remote_completed: Signal,
}

/// Bits of a work queue pointer: a slot index and a wrap bit, so that
/// `tail - pend` (at most the depth) is exact.
pub fn stream_ptr_bits(wq_depth: u32) -> u32 {
    index_bits(wq_depth) + 1
}

/// The heads the streams' words describe (the model's
/// [`stream_head`](mrnic_model::tx_engine::stream_head)), combinational:
/// bytes to cut while `pend != tail`, and the msn of the request at `pend`
/// by position, `next_msn - (tail - pend)` (a stream's posts are numbered
/// consecutively), so no work queue entry is read for the choice. Wires
/// are named `<name>_*`.
pub fn stream_heads(m: &mut Module, name: &str, w: &StreamWords) -> StreamHeads {
    let s = w.pend_started.width();
    let pb = w.pend.width() / s;
    let nm = |x: &str| format!("{name}_{x}");
    let ptr = |v: &Signal, i: u32| v.slice(pb * i + pb - 1, pb * i);
    let pending: Vec<Expr> = (0..s).rev().map(|i| ptr(&w.pend, i).ne(ptr(&w.tail, i))).collect();
    let msn: Vec<Expr> = (0..s)
        .rev()
        .map(|i| w.next_msn.slice(24 * i + 23, 24 * i) - zext(ptr(&w.tail, i) - ptr(&w.pend, i), 24))
        .collect();
    StreamHeads {
        pending: m.wire_from(&nm("pending"), s, "per stream: requests with bytes to cut (pend != tail)", cat(&pending)),
        started: w.pend_started.clone(),
        msn: m.wire_from(&nm("msn"), 24 * s, "per stream: the msn of the request at pend", cat(&msn)),
        remote_completed: w.remote_completed.clone(),
    }
}

/// What [`stream_pick`] decides.
pub struct StreamPick {
    /// A stream may send.
    pub found: Signal,
    /// The first such stream from the start (meaningful with `found`).
    pub pick: Signal,
    /// No stream may send but one has bytes to cut: every pending head
    /// waits for the peer's message table (the window probe's cue).
    pub blocked: Signal,
}

/// The decision's stream (the model's
/// [`stream_choice`](mrnic_model::tx_engine::stream_choice)),
/// combinational: per stream ([`StreamHeads`]) whether its head may go, a started message or one within `depth` of the peer's completed_msn,
/// then [`rr_pick`] from `from`. Wires are named `<name>_*`.
pub fn stream_pick(m: &mut Module, name: &str, depth: u32, heads: &StreamHeads, from: &Signal) -> StreamPick {
    let StreamHeads { pending, started, msn, remote_completed } = heads;
    let s = pending.width();
    let nm = |x: &str| format!("{name}_{x}");
    let may: Vec<Expr> = (0..s)
        .rev()
        .map(|i| {
            let ahead = msn.slice(24 * i + 23, 24 * i) - remote_completed.slice(24 * i + 23, 24 * i);
            pending.bit(i).logic_and(started.bit(i).logic_or(ahead.lt(lit(24, u64::from(depth)))))
        })
        .collect();
    let may = m.wire_from(&nm("may"), s, "per stream: bytes to cut and its head within the peer's table", cat(&may));
    let (found, pick) = if s == 1 {
        (
            m.wire_from(&nm("found"), 1, "the one stream may send", may.expr()),
            m.wire_from(&nm("pick"), 1, "stream 0", lit(1, 0)),
        )
    } else {
        let r = rr_pick(m, &nm("rr"), &may, from);
        (r.found, r.pick)
    };
    let blocked = m.wire_from(
        &nm("blocked"),
        1,
        "streams pending, none may send",
        found.expr().logic_not().logic_and(pending.expr().reduce_or()),
    );
    StreamPick { found, pick, blocked }
}

// -------------------------------------------------------------- output beats

/// Sizes the output stage's beat builder ([`frame_beat`]) is built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BeatSizes {
    /// Bytes per `m_axis` beat (`datapath_bits / 8`), a power of 2.
    pub bb: u32,
    /// The longest frame head: Ethernet, IPv4, UDP and the longest
    /// transport header the engine sends (a SACK's).
    pub head_max: u32,
    /// The longest payload (the MTU).
    pub payload_max: u32,
}

impl BeatSizes {
    pub fn of(p: &TxEngineParams) -> BeatSizes {
        use mrnic_proto::layouts::{data, nack, probe, sack};
        let hdr = [data::LAYOUT.len, sack::LAYOUT.len, nack::LAYOUT.len, probe::LAYOUT.len].into_iter().max();
        BeatSizes {
            bb: p.beat_bytes(),
            head_max: (NET_OVERHEAD + hdr.expect("four headers")) as u32,
            payload_max: p.cfg.transport.mtu,
        }
    }

    /// Bytes of the longest frame.
    pub fn frame_max(&self) -> u32 {
        self.head_max + self.payload_max + ICRC_LEN as u32
    }

    /// Width of the byte offsets the builder compares: the longest frame
    /// plus two beats, so no sum it forms wraps.
    pub fn offset_bits(&self) -> u32 {
        index_bits(self.frame_max() + 2 * self.bb + 1)
    }

    /// Width of a beat's index in its frame (`k`).
    pub fn beat_bits(&self) -> u32 {
        index_bits(self.frame_max().div_ceil(self.bb))
    }

    /// Width of a frame head's length.
    pub fn head_len_bits(&self) -> u32 {
        index_bits(self.head_max + 1)
    }

    /// Width of a payload's length.
    pub fn payload_len_bits(&self) -> u32 {
        index_bits(self.payload_max + 1)
    }

    /// Beats a payload buffer holds: the longest payload from any offset
    /// in its first beat.
    pub fn buf_beats(&self) -> u32 {
        (self.bb - 1 + self.payload_max).div_ceil(self.bb)
    }

    /// Width of a payload buffer beat's index.
    pub fn buf_bits(&self) -> u32 {
        index_bits(self.buf_beats())
    }
}

/// What [`frame_beat`] takes.
pub struct BeatIn {
    /// The beat's index in its frame ([`BeatSizes::beat_bits`]).
    pub k: Signal,
    /// The frame's head (Ethernet to the transport header) in `m_axis`
    /// byte order, `head_max` bytes; bytes at or past `head_len` unused.
    pub head: Signal,
    pub head_len: Signal,
    /// The payload's first byte within the first buffer beat (the host
    /// address modulo the beat), and its length (0 for a frame without).
    pub skip: Signal,
    pub payload_len: Signal,
    /// The ICRC, sent big-endian after the payload.
    pub icrc: Signal,
    /// The payload buffer's beats `hi_beat - 1` and `hi_beat` (as the AXI
    /// read beats brought them, byte 0 in bits 7..0); `lo` unused when
    /// `hi_beat` is 0.
    pub lo: Signal,
    pub hi: Signal,
}

/// What [`frame_beat`] gives.
pub struct BeatOut {
    /// The beat's bytes, lanes past the frame's end zero (the model's
    /// [`frame_beat`](mrnic_model::tx_engine::frame_beat)).
    pub data: Signal,
    /// Valid bytes ([`count_bits`] wide) and the frame's last beat.
    pub keep: Signal,
    pub last: Signal,
    /// The payload buffer beat `hi` must be ([`BeatSizes::buf_bits`]);
    /// 0 for a beat without payload.
    pub hi_beat: Signal,
}

/// Beat `k` of a frame on `m_axis`, combinational: the head's bytes, then
/// the payload realigned from where the host's beats put it (the payload's
/// offset in the frame is the head's length, in the buffer it is `skip`:
/// one rotation of two buffer beats by `(skip - head_len) mod bb` serves
/// every beat of the frame), then the ICRC, then zeros. Each lane picks
/// its source from three lane counts (head, head and payload, the whole
/// frame) against the beat's first byte; no lane compares a byte offset
/// of its own. Wires are named `<name>_*`.
pub fn frame_beat(m: &mut Module, name: &str, sz: &BeatSizes, inp: &BeatIn) -> BeatOut {
    let bb = sz.bb;
    assert!(bb >= 8 && bb.is_power_of_two(), "beats of 8 bytes or more, a power of 2");
    let lb = bb.trailing_zeros();
    let w = sz.offset_bits();
    let cw = count_bits(bb);
    let nm = |x: &str| format!("{name}_{x}");
    let at = m.wire_from(&nm("at"), w, "the beat's first frame byte: k * bb", zext(cat(&[inp.k.expr(), zeros(lb)]), w));
    let hl = zext(&inp.head_len, w);
    let hp = m.wire_from(&nm("hp"), w, "bytes of head and payload", hl.clone() + zext(&inp.payload_len, w));
    let total = m.wire_from(&nm("total"), w, "bytes of the frame", hp.expr() + lit(w, ICRC_LEN as u64));
    // Lanes of this beat before `end`: 0, bb, or what is left.
    let mut lanes = |x: &str, end: Expr, what: &str| {
        let d = m.wire_from(&nm(&format!("{x}_left")), w, "bytes left from the beat's first", end.clone() - at.expr());
        let most = mux(d.expr().ge(lit(w, u64::from(bb))), lit(cw, u64::from(bb)), d.slice(cw - 1, 0));
        let n = mux(at.expr().ge(end), lit(cw, 0), most);
        m.wire_from(&nm(x), cw, what, n)
    };
    let nh = lanes("nh", hl.clone(), "lanes of the head");
    let np = lanes("np", hp.expr(), "lanes of head and payload");
    let keep = lanes("keep", total.expr(), "lanes of the frame");
    let last =
        m.wire_from(&nm("last"), 1, "the frame ends in this beat", total.expr().le(at.expr() + lit(w, u64::from(bb))));

    // The head's beat k (the head padded to whole beats; past it, zeros).
    let hb = sz.head_max.div_ceil(bb);
    let pad = hb * bb - sz.head_max;
    let head = if pad > 0 { cat(&[zeros(8 * pad), inp.head.expr()]) } else { inp.head.expr() };
    let head = m.wire_from(&nm("head"), 8 * hb * bb, "the head in whole beats", head);
    let kw = inp.k.width();
    let mut head_beat = zeros(8 * bb);
    for i in (0..hb).rev() {
        let slice = head.slice(8 * bb * (i + 1) - 1, 8 * bb * i);
        head_beat = mux(inp.k.expr().eq(lit(kw, u64::from(i))), slice, head_beat);
    }
    let head_beat = m.wire_from(&nm("head_beat"), 8 * bb, "the head's bytes of beat k", head_beat);

    // The payload: buffer beats hi:lo rotated down by (skip - head_len) mod bb.
    let pair = m.wire_from(&nm("pair"), 16 * bb, "two buffer beats, lo first", cat(&[inp.hi.expr(), inp.lo.expr()]));
    let r = inp.skip.expr() - inp.head_len.slice(lb - 1, 0);
    let r = m.wire_from(&nm("r"), lb, "the rotation: (skip - head_len) mod bb", r);
    let start = zext(cat(&[r.expr(), zeros(3)]), index_bits(16 * bb));
    let payload = m.wire_from(&nm("payload"), 8 * bb, "the payload's bytes of beat k", pair.expr().part(start, 8 * bb));
    // `hi` is the buffer beat after lane 0's: floor((skip + at + bb -
    // head_len) / bb), which is k + 1 - floor(head_len / bb), one less when
    // skip is below head_len mod bb (at is whole beats, skip below one).
    let sum = zext(&inp.skip, w) + at.expr() + lit(w, u64::from(bb));
    let hi_pos = m.wire_from(&nm("hi_pos"), w, "lane 0's buffer byte plus bb plus head_len", sum);
    let bw = sz.buf_bits();
    let hw = inp.head_len.width();
    let borrow = zext(inp.skip.expr().lt(inp.head_len.slice(lb - 1, 0)), bw);
    let q = fit(inp.k.expr(), bw) + lit(bw, 1) - fit(inp.head_len.slice(hw - 1, lb), bw) - borrow;
    let hi_beat = m.wire_from(
        &nm("hi_beat"),
        bw,
        "the buffer beat after lane 0's (0 before the payload)",
        mux(hi_pos.expr().lt(hl.clone()), lit(bw, 0), q),
    );

    // The ICRC starts at lane hp - at, which is negative when it began in
    // the beat before: biased by bb, lane j holds its byte d when
    // eb = hp + bb - at = j + bb - d.
    let eb = m.wire_from(
        &nm("eb"),
        w,
        "the ICRC's first byte's lane, plus bb",
        hp.expr() + lit(w, u64::from(bb)) - at.expr(),
    );
    let lanes_out: Vec<Expr> = (0..bb)
        .rev()
        .map(|j| {
            let jj = lit(cw, u64::from(j));
            let mut ib = lit(8, 0);
            for d in (0..ICRC_LEN as u32).rev() {
                let byte = inp.icrc.slice(31 - 8 * d, 24 - 8 * d);
                ib = mux(eb.expr().eq(lit(w, u64::from(j + bb - d))), byte, ib);
            }
            let lane = |s: &Signal| s.slice(8 * j + 7, 8 * j);
            mux(
                jj.clone().lt(&nh),
                lane(&head_beat),
                mux(jj.clone().lt(&np), lane(&payload), mux(jj.lt(&keep), ib, lit(8, 0))),
            )
        })
        .collect();
    let data = m.wire_from(&nm("data"), 8 * bb, "the beat", cat(&lanes_out));
    BeatOut { data, keep, last, hi_beat }
}

// ------------------------------------------------------ the commit's cut

/// Sizes and constants of the commit's cut ([`cut`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CutSizes {
    /// Bits of a work queue pointer ([`stream_ptr_bits`]).
    pub ptr_bits: u32,
    /// Bits of a count of streams (0 to `STREAMS`).
    pub streams_bits: u32,
    /// Bits of `since_ackreq` (0 to `sack_every_packets`).
    pub since_bits: u32,
    pub mtu: u32,
    pub sack_every: u32,
    /// `rto_min / 4`, timestamp units.
    pub unreq_wait: u32,
}

/// Bits of the bytes a connection has in flight: below its 32-bit cap
/// before a packet is cut (or no path may take new data), so at most one
/// MTU more after.
pub const INFLIGHT_BITS: u32 = 33;

impl CutSizes {
    pub fn of(p: &TxEngineParams) -> CutSizes {
        let k = mrnic_model::path_telemetry::Consts::from_config(&p.cfg);
        let sack_every = p.cfg.timers.sack_every_packets;
        CutSizes {
            ptr_bits: stream_ptr_bits(p.wq_depth),
            streams_bits: 32 - p.streams.leading_zeros(),
            since_bits: 32 - sack_every.leading_zeros(),
            mtu: p.cfg.transport.mtu,
            sack_every,
            unreq_wait: k.rto_min / 4,
        }
    }
}

/// What the cut reads, as nets (the model's
/// [`CutIn`](mrnic_model::tx_engine::CutIn)).
#[derive(Clone, Debug)]
pub struct CutNets {
    /// 32 bits each.
    pub ts: Signal,
    pub req_len: Signal,
    pub pend_sent: Signal,
    /// [`CutSizes::ptr_bits`] each.
    pub pend: Signal,
    pub tail: Signal,
    /// 24 bits each.
    pub next_psn: Signal,
    pub cum_acked: Signal,
    /// 32 bits each.
    pub tx_seq: Signal,
    pub last_progress: Signal,
    /// The path mirror's srtt (20 bits) and rttvar (16 bits).
    pub srtt: Signal,
    pub rttvar: Signal,
    /// [`INFLIGHT_BITS`].
    pub inflight: Signal,
    /// 32 bits.
    pub cap: Signal,
    /// [`CutSizes::streams_bits`].
    pub pend_streams: Signal,
    /// [`CutSizes::since_bits`].
    pub since_ackreq: Signal,
    /// 32 bits each; `tail_at` meaningful with `tail_valid`.
    pub unreq_since: Signal,
    pub tail_valid: Signal,
    pub tail_at: Signal,
    pub rack_rtt: Signal,
    pub full_after: Signal,
}

/// The packet cut and the state written back, as nets (the model's
/// [`CutOut`](mrnic_model::tx_engine::CutOut)), each as wide as the input
/// it replaces; `len` 32 bits, `psn` 24.
#[derive(Clone, Debug)]
pub struct CutOutNets {
    pub len: Signal,
    pub eom: Signal,
    pub ackreq: Signal,
    pub pend: Signal,
    pub pend_sent: Signal,
    pub pend_streams: Signal,
    pub next_psn: Signal,
    pub tx_seq: Signal,
    pub last_progress: Signal,
    pub inflight: Signal,
    pub since_ackreq: Signal,
    pub unreq_since: Signal,
    pub tail_valid: Signal,
    pub tail_at: Signal,
}

/// The commit's cut of one new data packet (the model's
/// [`cut`](mrnic_model::tx_engine::cut)), combinational: the packet's
/// length (the rest of the request, at most an MTU; the offset is the
/// bytes already cut and the psn the path's next, so neither needs logic),
/// the stream's word, the path's mirror and the connection's context after
/// it, and ACKREQ. One subtractor and comparator for the request's rest,
/// adders for the counts, and the tail timer's overdue time (two
/// comparators and an adder). Wires are named `<name>_*`.
pub fn cut(m: &mut Module, name: &str, sz: &CutSizes, a: &CutNets) -> CutOutNets {
    let nm = |x: &str| format!("{name}_{x}");
    let w = |m: &mut Module, x: &str, width: u32, c: &str, e: Expr| m.wire_from(&nm(x), width, c, e);
    let mtu = lit(32, u64::from(sz.mtu));
    let rest = w(m, "rest", 32, "bytes of the request not yet cut", a.req_len.expr() - a.pend_sent.expr());
    let eom = w(m, "eom", 1, "the packet ends the message", rest.expr().le(mtu.clone()));
    let len = w(m, "len", 32, "payload bytes of the packet", mux(eom.expr(), rest.expr(), mtu));
    let pend = w(
        m,
        "pend",
        sz.ptr_bits,
        "the stream's next request to cut",
        mux(eom.expr(), a.pend.expr() + lit(sz.ptr_bits, 1), a.pend.expr()),
    );
    let pend_sent = w(
        m,
        "pend_sent",
        32,
        "bytes cut of the request at pend",
        mux(eom.expr(), lit(32, 0), a.pend_sent.expr() + len.expr()),
    );
    let emptied = eom.expr().logic_and(pend.expr().eq(a.tail.expr()));
    let sb = sz.streams_bits;
    let pend_streams = w(m, "pend_streams", sb, "streams with bytes to cut", a.pend_streams.expr() - zext(emptied, sb));
    let inflight =
        w(m, "inflight", INFLIGHT_BITS, "connection bytes in flight", a.inflight.expr() + zext(&len, INFLIGHT_BITS));
    let drained = w(m, "drained", 1, "nothing left to cut", pend_streams.expr().eq(lit(sb, 0)));
    let srtt = zext(&a.srtt, 32);
    let overdue = w(
        m,
        "overdue",
        32,
        "the tail timer's wait: max(srtt, rack_rtt) + max(srtt / 2, 4 rttvar)",
        max_of(srtt.clone(), a.rack_rtt.expr()) + max_of(srtt >> lit(1, 1), zext(&a.rttvar, 32) << lit(2, 2)),
    );
    let arm = a.tail_valid.expr().logic_not().logic_and(drained.expr());
    let tail_valid = w(m, "tail_valid", 1, "the tail timer is armed", a.tail_valid.expr().logic_or(drained.expr()));
    let tail_at =
        w(m, "tail_at", 32, "the tail timer's deadline", mux(arm, a.ts.expr() + overdue.expr(), a.tail_at.expr()));
    let unreq_wait = w(
        m,
        "unreq_wait",
        32,
        "how long a packet may wait for a later one to carry ACKREQ: min(rto_min / 4, srtt / 4)",
        min_of(lit(32, u64::from(sz.unreq_wait)), zext(&a.srtt, 32) >> lit(2, 2)),
    );
    let first = a.since_ackreq.expr().eq(lit(sz.since_bits, 0));
    let unreq_since = w(
        m,
        "unreq_since",
        32,
        "send time of the first packet since the last ACKREQ",
        mux(first, a.ts.expr(), a.unreq_since.expr()),
    );
    let since = w(
        m,
        "since",
        sz.since_bits,
        "packets since the last ACKREQ, this one included",
        a.since_ackreq.expr() + lit(sz.since_bits, 1),
    );
    let ackreq = w(
        m,
        "ackreq",
        1,
        "ask for a SACK",
        eom.expr()
            .logic_or(a.full_after.expr())
            .logic_or(inflight.expr().ge(zext(&a.cap, INFLIGHT_BITS)))
            .logic_or(drained.expr())
            .logic_or(since.expr().ge(lit(sz.since_bits, u64::from(sz.sack_every))))
            .logic_or((a.ts.expr() - unreq_since.expr()).ge(unreq_wait.expr())),
    );
    let since_ackreq = w(
        m,
        "since_ackreq",
        sz.since_bits,
        "packets since the last ACKREQ, after this one",
        mux(ackreq.expr(), lit(sz.since_bits, 0), since.expr()),
    );
    let next_psn = w(m, "next_psn", 24, "the path's next psn", a.next_psn.expr() + lit(24, 1));
    let tx_seq = w(m, "tx_seq", 32, "the path's next tx_seq", a.tx_seq.expr() + lit(32, 1));
    let last_progress = w(
        m,
        "last_progress",
        32,
        "the path's last progress: its silence starts now if it was empty",
        mux(a.next_psn.expr().eq(a.cum_acked.expr()), a.ts.expr(), a.last_progress.expr()),
    );
    CutOutNets {
        len,
        eom,
        ackreq,
        pend,
        pend_sent,
        pend_streams,
        next_psn,
        tx_seq,
        last_progress,
        inflight,
        since_ackreq,
        unreq_since,
        tail_valid,
        tail_at,
    }
}

// ------------------------------------------------------ the completion walk

/// Sizes of the completion walk's step ([`walk_step`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WalkSizes {
    pub streams: u32,
    /// Bits of a stream index ([`index_bits`] of the stream count).
    pub stream_bits: u32,
    /// Bits of a work queue pointer ([`stream_ptr_bits`]).
    pub ptr_bits: u32,
    /// Bits of a slot's packet counts ([`walk_count_bits`]).
    pub count_bits: u32,
}

/// Bits of a work queue slot's free-running packet counts (issued and
/// acknowledged): a request's packets in flight each hold a ring slot,
/// so the two differ by at most `PATHS x tx_ring_depth`, and counts
/// modulo a power of 2 above that are equal exactly when the counts are.
pub fn walk_count_bits(p: &TxEngineParams) -> u32 {
    32 - (p.paths * p.ring_depth).leading_zeros()
}

impl WalkSizes {
    pub fn of(p: &TxEngineParams) -> WalkSizes {
        WalkSizes {
            streams: p.streams,
            stream_bits: index_bits(p.streams),
            ptr_bits: stream_ptr_bits(p.wq_depth),
            count_bits: walk_count_bits(p),
        }
    }
}

/// The walk's state and the step's reads, as nets (the model's
/// [`Walk`](mrnic_model::tx_engine::Walk) and
/// [`WalkRead`](mrnic_model::tx_engine::WalkRead)).
#[derive(Clone, Debug)]
pub struct WalkNets {
    /// A failure's walk (else a SACK's).
    pub fail: Signal,
    /// A SACK's walk: the streams still to visit, a bit each.
    pub touched: Signal,
    /// The stream the step looks at ([`WalkSizes::stream_bits`]).
    pub stream: Signal,
    /// A failure's culprit (stream, slot), and whether it is still to
    /// complete; 4-bit status.
    pub culprit_valid: Signal,
    pub culprit_stream: Signal,
    pub culprit_slot: Signal,
    pub culprit_pending: Signal,
    pub st: Signal,
    /// The looked-at stream's pointers ([`WalkSizes::ptr_bits`]) and the
    /// slot's packet counts ([`WalkSizes::count_bits`]).
    pub head: Signal,
    pub pend: Signal,
    pub tail: Signal,
    pub issued: Signal,
    pub acked: Signal,
}

/// What the step does and the walk after it (the model's
/// [`WalkAct`](mrnic_model::tx_engine::WalkAct) and next state). A
/// culprit completes at the walk's first step, so every step clears
/// `culprit_pending`: it is not an output.
#[derive(Clone, Debug)]
pub struct WalkOutNets {
    /// The walk goes on; then `touched` (a SACK's walk) and `stream` are
    /// its next state.
    pub more: Signal,
    pub touched: Signal,
    pub stream: Signal,
    /// A completion of the looked-at request, with its 4-bit status.
    pub cqe_valid: Signal,
    pub cqe_status: Signal,
    pub advance: Signal,
    pub drain: Signal,
    pub equalize: Signal,
}

/// One step of the completion walk (the model's
/// [`walk_next`](mrnic_model::tx_engine::walk_next)), combinational: a
/// SACK's walk completes the stream's head if its bytes are all cut and
/// its counts equal, else drops the stream and moves to the next touched
/// one (a priority encoder over the touched bits at or above the stream);
/// a failure's walk completes the culprit first, then flushes each
/// stream's requests in order, the culprit's slot skipped, and drains a
/// stream found empty. Wires are named `<name>_*`.
pub fn walk_step(m: &mut Module, name: &str, sz: &WalkSizes, a: &WalkNets) -> WalkOutNets {
    use mrnic_model::tx_engine::status;
    let nm = |x: &str| format!("{name}_{x}");
    let (s, sb) = (sz.streams, sz.stream_bits);
    let st_lit = |v: u8| lit(4, u64::from(v));
    // A SACK's walk.
    let ok = m.wire_from(
        &nm("head_done"),
        1,
        "the head's bytes are all cut and its packets all acknowledged",
        a.head.expr().ne(a.pend.expr()).logic_and(a.issued.expr().eq(a.acked.expr())),
    );
    let keep: Vec<Expr> = (0..s).rev().map(|i| ok.expr().logic_or(a.stream.expr().ne(lit(sb, u64::from(i))))).collect();
    let touched = m.wire_from(
        &nm("touched"),
        s,
        "the streams still to visit: the looked-at one dropped unless its head completed",
        a.touched.expr() & cat(&keep),
    );
    // The next touched stream at or above this one, over a power-of-2
    // vector padded with zeros.
    let p2 = 1u32 << index_bits(s);
    let p2 = if s == 1 { 1 } else { p2 };
    let from: Vec<Expr> = (0..p2)
        .rev()
        .map(|i| match i {
            // Every stream index is at most the largest (a comparison
            // Verilator calls constant).
            _ if i + 1 == 1 << sb && i < s => touched.bit(i),
            _ if i < s => touched.bit(i).logic_and(a.stream.expr().le(lit(sb, u64::from(i)))),
            _ => lit(1, 0),
        })
        .collect();
    let ahead = m.wire_from(&nm("ahead"), p2, "touched streams at or above the looked-at one", cat(&from));
    let (any, idx) = lowest(&ahead, 0, p2);
    let done_more = m.wire_from(&nm("done_more"), 1, "a touched stream is left", any);
    let done_next = m.wire_from(
        &nm("done_next"),
        sb,
        "the next touched stream",
        match idx {
            Some(i) => fit(i, sb),
            None => lit(sb, 0),
        },
    );
    // A failure's walk.
    let empty = m.wire_from(&nm("empty"), 1, "the stream has no request left", a.head.expr().eq(a.tail.expr()));
    let is_culprit = a
        .culprit_valid
        .expr()
        .logic_and(a.culprit_stream.expr().eq(a.stream.expr()))
        .logic_and(a.culprit_slot.expr().eq(a.head.expr()));
    let flush = mux(a.culprit_valid.expr(), st_lit(status::WR_FLUSH), a.st.expr());
    let last = lit(sb + 1, u64::from(s - 1));
    let fail_more =
        a.culprit_pending.expr().logic_or(empty.expr().logic_not()).logic_or(zext(&a.stream, sb + 1).lt(last));
    // Past the last stream it wraps, but then the walk ends.
    let succ = a.stream.expr() + lit(sb, 1);
    let fail_next = mux(a.culprit_pending.expr().logic_not().logic_and(empty.expr()), succ, a.stream.expr());
    let fail = a.fail.expr();
    let pending = a.culprit_pending.expr();
    let flushing = fail.clone().logic_and(pending.clone().logic_not());
    let w = |m: &mut Module, x: &str, width: u32, c: &str, e: Expr| m.wire_from(&nm(x), width, c, e);
    WalkOutNets {
        more: w(m, "more", 1, "the walk goes on", mux(fail.clone(), fail_more, done_more.expr())),
        touched: touched.clone(),
        stream: w(m, "stream", sb, "the stream the next step looks at", mux(fail.clone(), fail_next, done_next.expr())),
        cqe_valid: w(
            m,
            "cqe_valid",
            1,
            "the looked-at request completes",
            mux(
                fail.clone(),
                pending.clone().logic_or(empty.expr().logic_not().logic_and(is_culprit.logic_not())),
                ok.expr(),
            ),
        ),
        cqe_status: w(
            m,
            "cqe_status",
            4,
            "its status",
            mux(fail.clone(), mux(pending, a.st.expr(), flush), st_lit(status::SUCCESS)),
        ),
        advance: w(
            m,
            "advance",
            1,
            "the stream's head moves on",
            mux(fail, flushing.clone().logic_and(empty.expr().logic_not()), ok.expr()),
        ),
        drain: w(m, "drain", 1, "the stream is found empty by a failure", flushing.clone().logic_and(empty.expr())),
        equalize: w(
            m,
            "equalize",
            1,
            "a flushed slot's counts made equal",
            flushing.logic_and(empty.expr().logic_not()),
        ),
    }
}

// ------------------------------------------------------ the post

/// What the post reads, as nets (the model's
/// [`PostIn`](mrnic_model::tx_engine::PostIn)): 1-bit flags, pointers of
/// [`stream_ptr_bits`], 24-bit sequence numbers, and the connection's
/// count of streams with bytes to cut ([`CutSizes::streams_bits`]).
#[derive(Clone, Debug)]
pub struct PostNets {
    pub consumes: Signal,
    pub live: Signal,
    pub flush_room: Signal,
    pub head: Signal,
    pub pend: Signal,
    pub tail: Signal,
    pub next_msn: Signal,
    pub next_rq_seq: Signal,
    pub pend_streams: Signal,
}

/// What the post does, as nets (the model's
/// [`PostOut`](mrnic_model::tx_engine::PostOut)); the values written are
/// meaningful with `write`.
#[derive(Clone, Debug)]
pub struct PostOutNets {
    pub take: Signal,
    pub flush: Signal,
    pub write: Signal,
    pub msn: Signal,
    pub rq_seq: Signal,
    pub tail: Signal,
    pub next_msn: Signal,
    pub next_rq_seq: Signal,
    pub pend_streams: Signal,
}

/// The post of a work request (the model's
/// [`post_rule`](mrnic_model::tx_engine::post_rule)), combinational: a
/// request for a connection that is not live is flushed once a completion
/// has room; else it is written at `tail` unless the queue holds
/// `wq_depth` requests, with the stream's next msn and rq_seq, which move
/// on (rq_seq only for a request that consumes a receive), and the
/// stream joins the count of streams with bytes to cut if it had none.
/// Wires are named `<name>_*`.
pub fn post_rule(m: &mut Module, name: &str, wq_depth: u32, a: &PostNets) -> PostOutNets {
    let nm = |x: &str| format!("{name}_{x}");
    let pb = a.tail.width();
    let sb = a.pend_streams.width();
    let w = |m: &mut Module, x: &str, width: u32, c: &str, e: Expr| m.wire_from(&nm(x), width, c, e);
    let room = w(
        m,
        "room",
        1,
        "the stream's queue has a free slot",
        (a.tail.expr() - a.head.expr()).lt(lit(pb, u64::from(wq_depth))),
    );
    let live = a.live.expr();
    let write = w(m, "write", 1, "the request is written into the queue", live.clone().logic_and(room.expr()));
    let flush =
        w(m, "flush", 1, "the request completes with WR_FLUSH", live.logic_not().logic_and(a.flush_room.expr()));
    PostOutNets {
        take: w(m, "take", 1, "the request leaves the pipeline", write.expr().logic_or(flush.expr())),
        msn: a.next_msn.clone(),
        rq_seq: a.next_rq_seq.clone(),
        tail: w(m, "tail", pb, "the stream's tail after the write", a.tail.expr() + lit(pb, 1)),
        next_msn: w(m, "next_msn", 24, "the stream's next msn", a.next_msn.expr() + lit(24, 1)),
        next_rq_seq: w(
            m,
            "next_rq_seq",
            24,
            "the stream's next rq_seq",
            a.next_rq_seq.expr() + zext(a.consumes.expr(), 24),
        ),
        pend_streams: w(
            m,
            "pend_streams",
            sb,
            "streams with bytes to cut",
            a.pend_streams.expr() + zext(a.pend.expr().eq(a.tail.expr()), sb),
        ),
        write,
        flush,
    }
}

// ------------------------------------------------------ a SACK's first pass

/// `a` is after `b` in 32-bit serial arithmetic (the model's
/// `seq32_after`): their difference is positive as a signed number.
pub(crate) fn seq32_after(m: &mut Module, name: &str, a: Expr, b: Expr) -> Expr {
    let d = m.wire_from(name, 32, "serial difference", a - b);
    d.expr().ne(lit(32, 0)).logic_and(d.bit(31).logic_not())
}

/// A SACK's first pass so far, as nets (the model's
/// [`SackFold`](mrnic_model::tx_engine::SackFold)): `pkts` of
/// [`CcSizes::pkts_bits`], `bytes`, `rack_sent`, `rack_rtt` and `max_seq`
/// 32 bits, `delivered` a bit per path.
#[derive(Clone, Debug)]
pub struct SackFoldNets {
    pub pkts: Signal,
    pub bytes: Signal,
    pub rtt_ok: Signal,
    pub rack_valid: Signal,
    pub rack_sent: Signal,
    pub rack_rtt: Signal,
    pub delivered: Signal,
    pub max_seq: Signal,
}

/// An acknowledged slot as nets (the model's
/// [`AckedSlot`](mrnic_model::tx_engine::AckedSlot)): `len`, `sent` and
/// `tx_seq` 32 bits, `tx_ts` 16, `phys` a path index.
#[derive(Clone, Debug)]
pub struct AckedSlotNets {
    pub len: Signal,
    pub tx_ts: Signal,
    pub sent: Signal,
    pub tx_seq: Signal,
    pub phys: Signal,
    pub rnr_resend: Signal,
    pub resent: Signal,
    pub rnr_backed_off: Signal,
}

/// One acknowledged slot folded into a SACK's first pass (the model's
/// [`sack_fold`](mrnic_model::tx_engine::sack_fold)), combinational: the
/// counts, the RTT sample's flag, RACK across paths, the paths that
/// delivered and the newest tx_seq delivered, the state a register holds
/// from slot to slot. `echo_ts` 16 bits, `ts` 32. Wires are named
/// `<name>_*`.
pub fn sack_fold(
    m: &mut Module,
    name: &str,
    f: &SackFoldNets,
    s: &AckedSlotNets,
    echo_ts: &Signal,
    ts: &Signal,
) -> SackFoldNets {
    let nm = |x: &str| format!("{name}_{x}");
    let w = |m: &mut Module, x: &str, width: u32, c: &str, e: Expr| m.wire_from(&nm(x), width, c, e);
    let pb = f.pkts.width();
    let np = f.delivered.width();
    let echoed = s.tx_ts.expr().eq(echo_ts.expr());
    let known = w(
        m,
        "known",
        1,
        "this transmission is the one acknowledged",
        s.resent.expr().logic_not().logic_or(echoed.clone()),
    );
    let newer = seq32_after(m, &nm("rack_diff"), s.sent.expr(), f.rack_sent.expr());
    let rack = w(
        m,
        "rack",
        1,
        "the newest send acknowledged so far",
        known
            .expr()
            .logic_and(s.rnr_backed_off.expr().logic_not())
            .logic_and(f.rack_valid.expr().logic_not().logic_or(newer)),
    );
    let next_seq = w(m, "next_seq", 32, "one past the slot's tx_seq", s.tx_seq.expr() + lit(32, 1));
    let later = seq32_after(m, &nm("seq_diff"), next_seq.expr(), f.max_seq.expr());
    let pb_phys = s.phys.width();
    let hot: Vec<Expr> = (0..np).rev().map(|i| s.phys.expr().eq(lit(pb_phys, u64::from(i)))).collect();
    SackFoldNets {
        pkts: w(m, "pkts", pb, "packets acknowledged", f.pkts.expr() + zext(s.rnr_resend.expr().logic_not(), pb)),
        bytes: w(m, "bytes", 32, "bytes acknowledged", f.bytes.expr() + s.len.expr()),
        rtt_ok: w(
            m,
            "rtt_ok",
            1,
            "a first transmission that triggered the SACK",
            f.rtt_ok.expr().logic_or(s.resent.expr().logic_not().logic_and(echoed)),
        ),
        rack_valid: w(m, "rack_valid", 1, "RACK has a send", f.rack_valid.expr().logic_or(rack.expr())),
        rack_sent: w(m, "rack_sent", 32, "RACK's newest send", mux(rack.expr(), s.sent.expr(), f.rack_sent.expr())),
        rack_rtt: w(m, "rack_rtt", 32, "its RTT", mux(rack.expr(), ts.expr() - s.sent.expr(), f.rack_rtt.expr())),
        delivered: w(
            m,
            "delivered",
            np,
            "paths that delivered",
            f.delivered.expr() | (repl(np, known.expr()) & cat(&hot)),
        ),
        max_seq: w(
            m,
            "max_seq",
            32,
            "one past the newest tx_seq delivered",
            mux(known.expr().logic_and(later), next_seq.expr(), f.max_seq.expr()),
        ),
    }
}

// ------------------------------------------------------ a SACK's window

/// What [`sack_window`] decides.
#[derive(Clone, Debug)]
pub struct SackWindowNets {
    /// The SACK acknowledges a psn never sent: it is dropped.
    pub stale: Signal,
    /// The outstanding psn at the offset asked is acknowledged.
    pub acks: Signal,
}

/// Where a SACK lies against its path's outstanding psns (the model's
/// [`sack_window`](mrnic_model::tx_engine::sack_window) and
/// [`sack_acks`](mrnic_model::tx_engine::sack_acks)), combinational:
/// stale when the cumulative psn is past the next psn to send, or the
/// bitmap's highest bit (a 256-bit priority encoder) lands at or past it;
/// and whether the outstanding psn at offset `d` from the oldest is
/// acknowledged, before the cumulative psn or named by its bitmap bit.
/// 24-bit sequence numbers, `bitmap` 256 bits, `d` 24 bits; the offsets
/// are 26-bit two's complement, wide enough that no sum overflows. Wires
/// are named `<name>_*`.
pub fn sack_window(
    m: &mut Module,
    name: &str,
    next_psn: &Signal,
    cum_acked: &Signal,
    cum_psn: &Signal,
    bitmap: &Signal,
    d: &Signal,
) -> SackWindowNets {
    let nm = |x: &str| format!("{name}_{x}");
    let w = |m: &mut Module, x: &str, width: u32, c: &str, e: Expr| m.wire_from(&nm(x), width, c, e);
    const W: u32 = 26;
    let span = w(m, "span", 24, "psns outstanding", next_psn.expr() - cum_acked.expr());
    let rel = w(m, "rel", 24, "the cumulative psn's offset, two's complement", cum_psn.expr() - cum_acked.expr());
    let srel = cat(&[repl(W - 24, rel.bit(23)), rel.expr()]);
    let past = w(
        m,
        "past",
        1,
        "the cumulative psn is past the next to send",
        rel.bit(23).logic_not().logic_and(rel.expr().gt(span.expr())),
    );
    // The highest bitmap bit: the lowest of the bits reversed.
    let rev = w(m, "rev", 256, "the bitmap, bit 255 first", cat(&(0..256).map(|i| bitmap.bit(i)).collect::<Vec<_>>()));
    let (any, idx) = lowest(&rev, 0, 256);
    let any = w(m, "any", 1, "the bitmap names a psn", any);
    let low = w(m, "low", 8, "the reversed bitmap's lowest bit", idx.expect("256 bits have an index"));
    let top = w(
        m,
        "top",
        W,
        "the offset of the highest psn named",
        srel.clone() + lit(W, 1) + zext(lit(8, 255) - low.expr(), W),
    );
    // top >= span as signed numbers: compared unsigned with the sign bits
    // flipped (span is not negative).
    let top_ge = cat(&[top.bit(W - 1).logic_not(), top.slice(W - 2, 0)]).ge(cat(&[lit(1, 1), zext(&span, W - 1)]));
    let stale = w(m, "stale", 1, "the SACK names a psn never sent", past.expr().logic_or(any.expr().logic_and(top_ge)));
    let diff = w(m, "diff", W, "the asked offset less the cumulative one", zext(d, W) - srel);
    let before = diff.bit(W - 1);
    let i = w(m, "i", W, "the asked offset's bitmap index", diff.expr() - lit(W, 1));
    let in_map = i.bit(W - 1).logic_not().logic_and(i.slice(W - 2, 8).eq(lit(W - 9, 0)));
    let acks = w(
        m,
        "acks",
        1,
        "the asked psn is acknowledged",
        before.logic_or(in_map.logic_and(bitmap.expr().bit_at(i.slice(7, 0)))),
    );
    SackWindowNets { stale, acks }
}
