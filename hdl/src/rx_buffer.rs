//! `rx_buffer` RTL: the generator of the store-and-forward buffer
//! [`mrnic_model::rx_buffer`], with the same ports (the model's list plus
//! `clk`) and the same cycle timing. The model's doc comment is the
//! specification.
//!
//! Structure: the header FIFO (4 entries of every rx_parser header field),
//! `pay_mem` (the payload ring, block RAM, written at `wr`, read at `rd`
//! with the registered read), the record FIFO (each complete packet's beat
//! count and drop bit), the released header and its command slot, the
//! streaming count, and the 2-entry output FIFO fed by the RAM's read
//! register. The ring's read pointer moves by up to three amounts in one
//! cycle (a streamed beat, a dropped command's beats, a discarded packet's
//! beats), in the model's order.

use mrnic_model::rx_buffer::{self as model, RxBufferParams, HDR_DEPTH, OUT_DEPTH, REC_DEPTH};
use mrnic_proto::Config;

use crate::expr::{cat, index_bits, lit, mux, zext, Expr, Signal};
use crate::formal::implies;
use crate::ir::{case, if_else, if_then, set, Mem, MemStyle, Module};
use crate::ports::{declare, ConfigError};
use crate::sack_gen::{fifo_parts, FifoParts};

/// The model's sizes, refused in the shape `gen::BLOCKS` reports.
pub struct Params(RxBufferParams);

impl Params {
    pub fn from_config(cfg: &Config) -> Result<Params, ConfigError> {
        RxBufferParams::from_config(cfg).map(Params).map_err(|e| ConfigError {
            field: e.field,
            value: e.value,
            why: e.why,
        })
    }
}

crate::block_api!(mrnic_model::rx_buffer, Params, ConfigError);

fn build(p: &Params) -> Module {
    let p = &p.0;
    let (maxb, ring) = (p.max_beats, p.ring());
    let (dw, kw) = (p.data_bits(), p.data_bits() / 8);
    let pb = index_bits(ring);
    // Ring arithmetic: up to 2 x RING - 1 (rd plus a packet's and a
    // command's beats; free plus the freed slots).
    let sw = pb + 1;
    let cb = index_bits(maxb + 1);
    let mw = dw + kw;

    let mut m = Module::new(model::NAME);
    m.describe(
        "store-and-forward between rx_parser and the receive controller: a packet goes on once its last beat is in",
    );
    let maxb_p = m.param("MAX_BEATS", u64::from(maxb), "beats of the longest payload, ceil((mtu + 4) / beat bytes)");
    let ring_p = m.localparam("RING", maxb_p.expr() * 2u32, "payload ring beats: two longest packets");
    m.param_check("max_beats", maxb_p.expr().ge(1u32), "MAX_BEATS must be at least 1");
    let (clk, sig) = declare(&mut m, &model::ports(p));
    let port = |n: &str| sig[n].clone();
    let rst = port("rst");
    m.clock_domain(&clk, &rst);

    // ---- registers ----
    let wr = m.reg("wr", pb, 0, "ring slot the next stored beat goes to");
    let rd = m.reg("rd", sw, 0, "ring slot of the oldest beat still held (below RING)");
    let free = m.reg("free", sw, u64::from(ring), "free ring slots");
    let cur_beats = m.reg("cur_beats", cb, 0, "beats stored of the packet coming in");
    let cur_over = m.reg("cur_over", 1, 0, "the packet coming in had more than MAX_BEATS beats");
    let hdr_fields = p.hdr_fields();
    let hw: u32 = hdr_fields.iter().map(|f| f.1).sum();
    let out_valid = m.reg("out_hdr_valid", 1, 0, "a released header is on m_hdr");
    let out_hdr = m.reg_no_reset("out_hdr", hw, "the released header, fields as on s_hdr (first lowest)");
    let cmd_valid = m.reg("cmd_valid", 1, 0, "a released packet waits for its payload command");
    let cmd_beats = m.reg_no_reset("cmd_beats", cb, "its beats");
    let stream_left = m.reg("stream_left", cb, 0, "beats of the streaming packet still to read");
    let pipe_valid = m.reg("pipe_valid", 1, 0, "the RAM's read register holds a beat for the output FIFO");
    let pipe_last = m.reg_no_reset("pipe_last", 1, "that beat is its packet's last");
    let stat = m.reg("stat", 1, 0, "stat_oversize");

    // ---- the header FIFO ----
    let hdr_count = m.wire("hdr_count_w", index_bits(HDR_DEPTH as u32 + 1), "header FIFO entries");
    let hdr_ready = m.wire_from(
        "hdr_ready",
        1,
        "room in the header FIFO",
        hdr_count.expr().lt(lit(hdr_count.width(), HDR_DEPTH as u64)),
    );
    m.assign(port("s_hdr_ready"), &hdr_ready);
    let hdr_in = cat(&hdr_fields.iter().rev().map(|(f, _, _)| port(&format!("s_hdr_{f}")).expr()).collect::<Vec<_>>());
    let release = m.wire("rel_pop", 1, "the oldest packet's header and record leave their FIFOs");
    let hdr_take = port("s_hdr_valid").expr().logic_and(&hdr_ready);
    let hdrq = fifo_parts(&mut m, "hdrq", HDR_DEPTH as u32, None, &hdr_take, &release, &hdr_in, hw);
    let (hdr_valid, hdr_head) = (hdrq.valid.clone(), hdrq.shown.clone());
    m.assign(&hdr_count, &hdrq.count);

    // ---- payload in ----
    let rec_count = m.wire("rec_count_w", index_bits(REC_DEPTH as u32 + 1), "record FIFO entries");
    let axis_ready = m.wire_from(
        "axis_ready",
        1,
        "a free ring slot and room for a record",
        free.q.expr().ne(lit(sw, 0)).logic_and(rec_count.expr().lt(lit(rec_count.width(), REC_DEPTH as u64))),
    );
    m.assign(port("s_axis_tready"), &axis_ready);
    let beat_in =
        m.wire_from("beat_in", 1, "a payload beat is taken", port("s_axis_tvalid").expr().logic_and(&axis_ready));
    let store = m.wire_from(
        "store",
        1,
        "the beat goes into the ring (the packet has had fewer than MAX_BEATS)",
        beat_in.expr().logic_and(cur_beats.q.expr().lt(lit(cb, u64::from(maxb)))),
    );
    let closes =
        m.wire_from("closes", 1, "the taken beat is its packet's last", beat_in.expr().logic_and(port("s_axis_tlast")));
    let over = m.wire_from(
        "over",
        1,
        "the packet had a beat with no room in its slot",
        cur_over.q.expr().logic_or(beat_in.expr().logic_and(store.expr().logic_not())),
    );
    let beats_in =
        m.wire_from("beats_in", cb, "the packet's stored beats after this one", cur_beats.q.expr() + zext(&store, cb));
    m.next(if_else(
        &closes,
        vec![set(&cur_beats.next, lit(cb, 0)), set(&cur_over.next, lit(1, 0))],
        vec![set(&cur_beats.next, &beats_in), set(&cur_over.next, &over)],
    ));
    m.next(set(&stat.next, closes.expr().logic_and(&over)));
    m.assign(port("stat_oversize"), &stat.q);
    let mem = m.memory("pay", mw, &ring_p, MemStyle::Block, "payload ring {tkeep, tdata}");
    m.mem_write(
        &mem,
        store.expr().logic_and(rst.expr().logic_not()),
        &wr.q,
        cat(&[port("s_axis_tkeep").expr(), port("s_axis_tdata").expr()]),
    );
    let last_slot = lit(pb, u64::from(ring - 1));
    m.next(if_then(
        &store,
        vec![set(&wr.next, mux(wr.q.expr().eq(last_slot.clone()), lit(pb, 0), wr.q.expr() + lit(pb, 1)))],
    ));

    // ---- the record FIFO ----
    let rec_in = cat(&[port("s_axis_tuser").expr().logic_or(&over), beats_in.expr()]);
    let recq = fifo_parts(&mut m, "recq", REC_DEPTH as u32, None, &closes.expr(), &release, &rec_in, cb + 1);
    let (rec_valid, rec_head) = (recq.valid.clone(), recq.shown.clone());
    m.assign(&rec_count, &recq.count);
    let rec_drop = m.wire_from("rec_drop", 1, "the oldest complete packet is dropped", rec_head.bit(cb));
    let rec_beats = m.wire_from("rec_beats", cb, "its beats", rec_head.slice(cb - 1, 0));

    // ---- payload out: the output FIFO, fed by the RAM's read register ----
    let outd = OUT_DEPTH as u32;
    let out_count = m.wire("outq_count_w", index_bits(outd + 1), "output FIFO entries");
    let ow = out_count.width();
    let out_pop = m.wire("out_pop", 1, "m_axis handshake");
    let rd_data = m.wire("rd_data", mw, "the beat in the RAM's read register");
    // The read register's beat is pushed with no ready check: the read
    // made room for it, and the FIFO's room invariant counts it.
    let outq = fifo_parts(
        &mut m,
        "outq",
        outd,
        Some(&pipe_valid.q.expr()),
        &pipe_valid.q.expr(),
        &out_pop,
        &cat(&[pipe_last.q.expr(), rd_data.expr()]),
        mw + 1,
    );
    let (out_valid_q, out_head) = (outq.valid.clone(), outq.shown.clone());
    m.assign(&out_count, &outq.count);
    m.assign(&out_pop, out_valid_q.expr().logic_and(port("m_axis_tready")));
    m.assign(port("m_axis_tvalid"), &out_valid_q);
    m.assign(port("m_axis_tlast"), out_head.bit(mw));
    m.assign(port("m_axis_tkeep"), out_head.slice(mw - 1, dw));
    m.assign(port("m_axis_tdata"), out_head.slice(dw - 1, 0));
    let room_after = out_count.expr() - zext(&out_pop, ow) + zext(&pipe_valid.q, ow);
    let read = m.wire_from(
        "read",
        1,
        "the streaming packet's next beat is read: the output FIFO will have room for it",
        stream_left.q.expr().ne(lit(cb, 0)).logic_and(room_after.lt(lit(ow, u64::from(outd)))),
    );
    let rd_reg = m.mem_read(&mem, "pay_rd", &read, rd.q.slice(pb - 1, 0));
    m.assign(&rd_data, &rd_reg);
    m.next(set(&pipe_valid.next, &read));
    m.next(if_then(&read, vec![set(&pipe_last.next, stream_left.q.expr().eq(lit(cb, 1)))]));

    // ---- the payload command ----
    let pay_ready = m.wire_from(
        "pay_ready",
        1,
        "a released packet waits and no payload streams",
        cmd_valid.q.expr().logic_and(stream_left.q.expr().eq(lit(cb, 0))),
    );
    m.assign(port("s_pay_ready"), &pay_ready);
    let pay_take =
        m.wire_from("pay_take", 1, "a payload command is taken", port("s_pay_valid").expr().logic_and(&pay_ready));
    let pay_drop = m.wire_from("pay_drop", 1, "it frees the payload", pay_take.expr().logic_and(port("s_pay_drop")));
    let left_now = m.wire_from(
        "left_now",
        cb,
        "beats left to stream after this cycle's read and command",
        mux(
            pay_take.expr().logic_and(port("s_pay_drop").expr().logic_not()),
            &cmd_beats.q,
            stream_left.q.expr() - zext(&read, cb),
        ),
    );
    m.next(set(&stream_left.next, &left_now));

    // ---- release, in the model's order: after the command and m_hdr ----
    let hdr_held = out_valid.q.expr().logic_and(port("m_hdr_ready").expr().logic_not());
    let cmd_held = cmd_valid.q.expr().logic_and(pay_take.expr().logic_not());
    let can = m.wire_from(
        "can_release",
        1,
        "a complete packet with its header, and the previous one's header and command done",
        rec_valid.expr().logic_and(&hdr_valid).logic_and(hdr_held.logic_or(cmd_held).logic_not()),
    );
    let discard = m.wire_from(
        "discard",
        1,
        "a dropped packet is freed with its header (once no payload streams before it)",
        can.expr().logic_and(&rec_drop).logic_and(left_now.expr().eq(lit(cb, 0))),
    );
    let hand_on = m.wire_from(
        "hand_on",
        1,
        "a good packet's header is released",
        can.expr().logic_and(rec_drop.expr().logic_not()),
    );
    m.assign(&release, discard.expr().logic_or(&hand_on));
    m.next(if_else(
        &hand_on,
        vec![set(&out_valid.next, lit(1, 1)), set(&out_hdr.next, &hdr_head)],
        vec![if_then(port("m_hdr_ready"), vec![set(&out_valid.next, lit(1, 0))])],
    ));
    m.next(if_else(
        &hand_on,
        vec![set(&cmd_valid.next, lit(1, 1)), set(&cmd_beats.next, &rec_beats)],
        vec![if_then(&pay_take, vec![set(&cmd_valid.next, lit(1, 0))])],
    ));
    m.assign(port("m_hdr_valid"), &out_valid.q);
    let mut off = 0;
    for (f, w, _) in &hdr_fields {
        m.assign(port(&format!("m_hdr_{f}")), mux(&out_valid.q, out_hdr.q.slice(off + w - 1, off), lit(*w, 0)));
        off += w;
    }

    // ---- the read pointer and the free count ----
    let freed = m.wire_from(
        "freed",
        sw,
        "ring slots freed this cycle: a streamed beat, a dropped command's, a discarded packet's",
        zext(&read, sw)
            + mux(&pay_drop, zext(&cmd_beats.q, sw), lit(sw, 0))
            + mux(&discard, zext(&rec_beats, sw), lit(sw, 0)),
    );
    let rd_sum = m.wire_from("rd_sum", sw, "rd plus the freed slots, before the wrap", rd.q.expr() + freed.expr());
    let ring_w = lit(sw, u64::from(ring));
    m.next(set(&rd.next, mux(rd_sum.expr().ge(ring_w.clone()), rd_sum.expr() - ring_w, &rd_sum)));
    m.next(set(&free.next, free.q.expr() + freed.expr() - zext(&store, sw)));
    // Interface rules: assumed on the inputs, asserted on the outputs.
    crate::formal::every_channel(&mut m, &rst);
    let m_hdr = cat(&hdr_fields.iter().rev().map(|(f, _, _)| port(&format!("m_hdr_{f}")).expr()).collect::<Vec<_>>());
    let buf = Buf {
        ring,
        mem: &mem,
        wr: &wr.q,
        rd: &rd.q,
        free: &free.q,
        cur_beats: &cur_beats.q,
        hdrq: &hdrq,
        recq: &recq,
        outq: &outq,
        hdr_take,
        hdr_in,
        m_hdr,
        store: &store,
        closes: &closes,
        beats_in: &beats_in,
        drop_in: port("s_axis_tuser").expr().logic_or(&over),
        beat: cat(&[port("s_axis_tkeep").expr(), port("s_axis_tdata").expr()]),
        release: &release,
        hand_on: &hand_on,
        discard: &discard,
        pay_take: &pay_take,
        read: &read,
        left_now: &left_now,
        freed: &freed,
        out_valid: &out_valid.q,
        cmd_valid: &cmd_valid.q,
        cmd_beats: &cmd_beats.q,
        stream_left: &stream_left.q,
        pipe_valid: &pipe_valid.q,
        pipe_last: &pipe_last.q,
        rd_data: &rd_data,
        out_pop: &out_pop,
    };
    buffer_properties(&mut m, &buf, &sig);
    m
}

/// The buffer as its properties see it.
struct Buf<'a> {
    ring: u32,
    mem: &'a Mem,
    wr: &'a Signal,
    rd: &'a Signal,
    free: &'a Signal,
    cur_beats: &'a Signal,
    hdrq: &'a FifoParts,
    recq: &'a FifoParts,
    outq: &'a FifoParts,
    /// An `s_hdr` handshake, the header it takes, and `m_hdr`'s fields
    /// packed the same way.
    hdr_take: Expr,
    hdr_in: Expr,
    m_hdr: Expr,
    store: &'a Signal,
    closes: &'a Signal,
    beats_in: &'a Signal,
    /// The drop bit of the record a closing beat pushes.
    drop_in: Expr,
    /// The beat on `s_axis` as the ring stores it: {tkeep, tdata}.
    beat: Expr,
    release: &'a Signal,
    hand_on: &'a Signal,
    discard: &'a Signal,
    pay_take: &'a Signal,
    read: &'a Signal,
    left_now: &'a Signal,
    freed: &'a Signal,
    out_valid: &'a Signal,
    cmd_valid: &'a Signal,
    cmd_beats: &'a Signal,
    stream_left: &'a Signal,
    pipe_valid: &'a Signal,
    pipe_last: &'a Signal,
    rd_data: &'a Signal,
    out_pop: &'a Signal,
}

/// The entry of `f`'s slot `at` (a formal wire named `name`).
fn slot_at(m: &mut Module, name: &str, f: &FifoParts, at: Expr, comment: &str) -> Signal {
    let w = f.slots[0].width();
    let ib = f.rd.width();
    let s = m.formal_wire(name, w, comment);
    m.formal_comb(vec![case(
        at,
        f.slots.iter().enumerate().map(|(j, q)| (vec![lit(ib, j as u64)], vec![set(&s, q)])).collect(),
        None,
    )]);
    s
}

/// Slot `j` of `f` holds an entry: `j - rd` (mod depth) is below the count.
fn slot_valid(f: &FifoParts, j: Expr) -> Expr {
    zext(j - &f.rd, f.count.width()).lt(&f.count)
}

/// What the buffer does to the packets, stated for one tracked packet and
/// one tracked beat of it, each any (anyconst):
///
/// - packets are numbered as their last beat is taken and headers as they
///   are taken, from reset; header `f_p` goes with packet `f_p` (the
///   buffer pairs them in order; rx_parser hands them over in that order);
/// - headers: `f_p`'s header is on `m_hdr` only unchanged, only when every
///   packet before it has been released, and only if its packet was not
///   dropped (`tuser` or too long); released, a dropped packet is discarded
///   with its header and a good one goes to `m_hdr` (the record released
///   with header `f_p` is packet `f_p`'s);
/// - payload: beat `f_b` of packet `f_p` is on `m_axis` only with the
///   `tdata`/`tkeep` it was taken with, `tlast` exactly when it is the
///   packet's last stored beat, after exactly `f_b` beats of its packet
///   have left (in order, none lost, none doubled), and only if the packet
///   was not dropped and its command said `drop = 0`; a beat is freed
///   without being sent only if its packet was dropped (closed with
///   `tuser = 1` or too long, or commanded `drop = 1`);
/// - ring accounting: the free count plus the beats held (streaming,
///   commanded, in records, coming in) is the ring size, and `wr` is `rd`
///   plus the held beats (mod the ring).
///
/// Ghost flags follow the tracked packet (header taken, closed, released,
/// on `m_hdr`, waiting for its command, kept, streaming) and beat (stored,
/// read, freed, in the RAM's read register, in the output FIFO, left);
/// each is set once (a number seen again after the 8-bit counters wrap is
/// not tracked again). The invariants that make this inductive: the FIFO
/// counts are the numbers taken minus released, the tracked header and
/// record are in their slots, the tracked beat is in its ring slot at the
/// distance from `rd` that the beats ahead of it give (the streaming
/// packet's, the commanded one's, the records' ahead of its packet, its
/// index), and the beats of the tracked packet read so far are those left
/// plus those in flight.
fn buffer_properties(m: &mut Module, b: &Buf, sig: &std::collections::HashMap<String, Signal>) {
    const NB: u32 = 8;
    let port = |n: &str| sig[n].clone();
    let rst = port("rst");
    let (pb, sw, cb) = (b.wr.width(), b.rd.width(), b.cur_beats.width());
    let (mw, hw) = (b.rd_data.width(), b.hdr_in.width().expect("header width"));
    let dw = port("m_axis_tdata").width();
    let ring = b.ring;
    // Sums of beat counts: the free count and up to REC_DEPTH + 3 counts.
    let most = (1u64 << sw) + (REC_DEPTH as u64 + 3) * ((1u64 << cb) - 1);
    let aw = u64::BITS - most.leading_zeros();
    let wide = |e: Expr| zext(e, aw);
    let ring_aw = lit(aw, u64::from(ring));
    let no = |e: Expr| e.logic_not();

    // ---- ghost state ----
    let p = m.formal_anyconst("f_p", NB, "the tracked packet's number (and its header's)");
    let fb = m.formal_anyconst("f_b", cb, "the tracked beat's index in the tracked packet");
    let hin = m.formal_wire("f_hin", NB, "ghost: headers taken since reset (mod 256)");
    let pin = m.formal_wire("f_pin", NB, "ghost: packets closed (last beat taken) since reset (mod 256)");
    let rel = m.formal_wire("f_rel", NB, "ghost: packets released (handed on or discarded) since reset (mod 256)");
    let hseen = m.formal_wire("f_hseen", 1, "ghost: the tracked header has been taken");
    let hdr = m.formal_wire("f_hdr", hw, "ghost: the tracked header, as taken");
    let closed = m.formal_wire("f_closed", 1, "ghost: the tracked packet has been closed");
    let pbeats = m.formal_wire("f_pbeats", cb, "ghost: its stored beats, as its record was written");
    let pdrop = m.formal_wire("f_pdrop", 1, "ghost: its record's drop bit (tuser or too long)");
    let released = m.formal_wire("f_released", 1, "ghost: the tracked packet has been released");
    let hout = m.formal_wire("f_hout", 1, "ghost: its header is on m_hdr, not yet taken");
    let cmd = m.formal_wire("f_cmd", 1, "ghost: it waits for its payload command");
    let kept = m.formal_wire("f_kept", 1, "ghost: its command said drop = 0");
    let cmddrop = m.formal_wire("f_cmddrop", 1, "ghost: its command said drop = 1");
    let strm = m.formal_wire("f_strm", 1, "ghost: it is the packet streaming (beats left to read)");
    let pread = m.formal_wire("f_pread", cb, "ghost: its beats read from the ring");
    let pout = m.formal_wire("f_pout", cb, "ghost: its beats that left on m_axis");
    let own_pipe = m.formal_wire("f_own_pipe", 1, "ghost: the RAM's read register holds a beat of it");
    let outd = b.outq.slots.len();
    let ob = b.outq.rd.width();
    let own: Vec<Signal> = (0..outd)
        .map(|j| m.formal_wire(&format!("f_own{j}"), 1, &format!("ghost: output FIFO slot {j} holds a beat of it")))
        .collect();
    let bstored = m.formal_wire("f_bstored", 1, "ghost: the tracked beat has been stored in the ring");
    let bslot = m.formal_wire("f_bslot", pb, "ghost: its ring slot");
    let bval = m.formal_wire("f_bval", mw, "ghost: its {tkeep, tdata}, as taken");
    let bread = m.formal_wire("f_bread", 1, "ghost: it has been read from the ring");
    let bfreed = m.formal_wire("f_bfreed", 1, "ghost: it has been freed unread (dropped)");
    let bpipe = m.formal_wire("f_bpipe", 1, "ghost: it is in the RAM's read register");
    let binq = m.formal_wire("f_binq", 1, "ghost: it is in the output FIFO");
    let bqslot = m.formal_wire("f_bqslot", ob, "ghost: its output FIFO slot");
    let bout = m.formal_wire("f_bout", 1, "ghost: it has left on m_axis");

    // ---- events ----
    let hdr_fire = b.out_valid.expr().logic_and(port("m_hdr_ready"));
    let take_h = b.hdr_take.clone().logic_and(hin.expr().eq(&p)).logic_and(no(hseen.expr()));
    let close_p = b.closes.expr().logic_and(pin.expr().eq(&p)).logic_and(no(closed.expr()));
    let store_b = b
        .store
        .expr()
        .logic_and(pin.expr().eq(&p))
        .logic_and(no(closed.expr()))
        .logic_and(b.cur_beats.expr().eq(&fb))
        .logic_and(no(bstored.expr()));
    let rel_p = m.formal_wire("f_rel_p", 1, "ghost: the tracked packet is released this cycle");
    m.formal_assign(&rel_p, b.release.expr().logic_and(rel.expr().eq(&p)).logic_and(no(released.expr())));
    let pay_p = b.pay_take.expr().logic_and(&cmd);
    let start = pay_p.clone().logic_and(no(port("s_pay_drop").expr()));
    let push = b.pipe_valid.expr();
    let pop = b.out_pop.expr();
    let own_head = m.formal_wire("f_own_head", 1, "ghost: the output FIFO's head is a beat of the tracked packet");
    m.formal_comb(vec![case(
        &b.outq.rd,
        own.iter().enumerate().map(|(j, o)| (vec![lit(ob, j as u64)], vec![set(&own_head, o)])).collect(),
        None,
    )]);
    let own_q = own.iter().fold(lit(cb, 0), |acc, o| acc + zext(o, cb));
    let inring = m.formal_wire("f_in_ring", 1, "ghost: the tracked beat is in the ring");
    m.formal_assign(&inring, bstored.expr().logic_and(no(bread.expr())).logic_and(no(bfreed.expr())));
    // Its distance from rd, going round the ring.
    let dist = m.formal_wire("f_dist", sw, "ghost: ring slots from rd to the tracked beat's slot");
    let slot_w = zext(&bslot, sw);
    m.formal_assign(
        &dist,
        mux(slot_w.clone().ge(b.rd), slot_w.clone() - b.rd, slot_w + lit(sw, u64::from(ring)) - b.rd),
    );
    let rd_b = m.formal_wire("f_rd_b", 1, "ghost: the tracked beat is read this cycle");
    m.formal_assign(&rd_b, b.read.expr().logic_and(&inring).logic_and(b.rd.slice(pb - 1, 0).eq(&bslot)));
    let freed_b = m.formal_wire("f_freed_b", 1, "ghost: the tracked beat is freed unread this cycle");
    m.formal_assign(&freed_b, inring.expr().logic_and(no(rd_b.expr())).logic_and(dist.expr().lt(b.freed)));
    let on_head = b.outq.valid.expr().logic_and(&binq).logic_and(b.outq.rd.expr().eq(&bqslot));

    let mut own_next = Vec::new();
    for (j, o) in own.iter().enumerate() {
        let here = |at: &Signal| at.expr().eq(lit(ob, j as u64));
        own_next.push(if_then(pop.clone().logic_and(here(&b.outq.rd)), vec![set(o, lit(1, 0))]));
        own_next.push(if_then(push.clone().logic_and(here(&b.outq.wr)), vec![set(o, &own_pipe)]));
    }
    let zero: Vec<crate::ir::Stmt> = [&hin, &pin, &rel]
        .iter()
        .map(|c| set(*c, lit(NB, 0)))
        .chain([&pread, &pout].iter().map(|c| set(*c, lit(cb, 0))))
        .chain(
            [
                &hseen, &closed, &released, &hout, &cmd, &kept, &cmddrop, &strm, &own_pipe, &bstored, &bread, &bfreed,
                &bpipe, &binq, &bout,
            ]
            .iter()
            .chain(own.iter().collect::<Vec<_>>().iter())
            .map(|f| set(*f, lit(1, 0))),
        )
        .collect();
    let mut step = vec![
        set(&hin, hin.expr() + zext(b.hdr_take.clone(), NB)),
        set(&pin, pin.expr() + zext(b.closes, NB)),
        set(&rel, rel.expr() + zext(b.release, NB)),
        if_then(take_h, vec![set(&hseen, lit(1, 1)), set(&hdr, &b.hdr_in)]),
        if_then(close_p, vec![set(&closed, lit(1, 1)), set(&pbeats, b.beats_in), set(&pdrop, &b.drop_in)]),
        if_then(store_b, vec![set(&bstored, lit(1, 1)), set(&bslot, b.wr), set(&bval, &b.beat)]),
        if_then(hdr_fire, vec![set(&hout, lit(1, 0))]),
        if_then(
            pay_p.clone(),
            vec![
                set(&cmd, lit(1, 0)),
                if_else(port("s_pay_drop"), vec![set(&cmddrop, lit(1, 1))], vec![set(&kept, lit(1, 1))]),
            ],
        ),
        if_then(
            &rel_p,
            vec![set(&released, lit(1, 1)), if_then(b.hand_on, vec![set(&hout, lit(1, 1)), set(&cmd, lit(1, 1))])],
        ),
        set(&strm, strm.expr().logic_or(start).logic_and(b.left_now.expr().ne(lit(cb, 0)))),
        if_then(b.read.expr().logic_and(&strm), vec![set(&pread, pread.expr() + lit(cb, 1))]),
        set(&own_pipe, b.read.expr().logic_and(&strm)),
        if_then(pop.clone().logic_and(&own_head), vec![set(&pout, pout.expr() + lit(cb, 1))]),
        if_then(&rd_b, vec![set(&bread, lit(1, 1))]),
        if_then(&freed_b, vec![set(&bfreed, lit(1, 1))]),
        set(&bpipe, &rd_b),
        if_then(pop.clone().logic_and(on_head.clone()), vec![set(&binq, lit(1, 0)), set(&bout, lit(1, 1))]),
        if_then(push.clone().logic_and(&bpipe), vec![set(&binq, lit(1, 1)), set(&bqslot, &b.outq.wr)]),
    ];
    step.extend(own_next);
    m.formal_seq(vec![if_else(&rst, zero, step)]);

    // ---- ring accounting ----
    let rb = b.recq.rd.width();
    let recs = |m: &mut Module, name: &str, n: Expr, comment: &str| -> Signal {
        let sum = b.recq.slots.iter().enumerate().fold(lit(aw, 0), |acc, (j, q)| {
            let pos = lit(rb, j as u64) - &b.recq.rd;
            acc + mux(zext(pos, NB).lt(n.clone()), wide(q.slice(cb - 1, 0)), lit(aw, 0))
        });
        let s = m.formal_wire(name, aw, comment);
        m.formal_assign(&s, sum);
        s
    };
    let held_recs = recs(m, "f_rec_beats", zext(&b.recq.count, NB), "beats of every complete packet not released");
    let cmd_w = mux(b.cmd_valid, wide(b.cmd_beats.expr()), lit(aw, 0));
    m.assert(
        "a_ring_accounting",
        "the free count plus the beats held (the streaming packet's left, the commanded one's, every record's, the packet coming in) is the ring size",
        (wide(b.free.expr()) + wide(b.stream_left.expr()) + cmd_w.clone() + &held_recs + wide(b.cur_beats.expr()))
            .eq(ring_aw.clone()),
    );
    let ring_sw = lit(sw, u64::from(ring));
    let wr_at = b.rd.expr() + ring_sw.clone() - b.free;
    m.assert(
        "a_ring_pointers",
        "rd and wr are ring slots and wr is rd plus the beats held, round the ring (a stored beat never lands on a held one)",
        b.free
            .expr()
            .le(ring_sw.clone())
            .logic_and(b.rd.expr().lt(ring_sw.clone()))
            .logic_and(b.wr.expr().lt(lit(pb, u64::from(ring))))
            .logic_and(zext(b.wr, sw).eq(mux(wr_at.clone().ge(ring_sw.clone()), wr_at.clone() - ring_sw, wr_at))),
    );

    // ---- headers and records ----
    let wide_n = |f: &FifoParts| zext(&f.count, NB);
    m.assert(
        "a_hdr_count",
        "the header FIFO holds the headers taken and not yet released",
        wide_n(b.hdrq).eq(hin.expr() - &rel),
    );
    m.assert(
        "a_rec_count",
        "the record FIFO holds the packets closed and not yet released",
        wide_n(b.recq).eq(pin.expr() - &rel),
    );
    m.assert(
        "a_tracked_not_yet",
        "before the tracked header (packet) is taken (closed), the counters have not passed its number",
        implies(no(hseen.expr()), rel.expr().le(&hin).logic_and(hin.expr().le(&p)))
            .logic_and(implies(no(closed.expr()), rel.expr().le(&pin).logic_and(pin.expr().le(&p)))),
    );
    let ahead = m.formal_wire("f_ahead", NB, "ghost: packets to release before the tracked one");
    m.formal_assign(&ahead, p.expr() - &rel);
    let hb = b.hdrq.rd.width();
    let hdr_at = slot_at(m, "f_hdr_at", b.hdrq, b.hdrq.rd.expr() + ahead.slice(hb - 1, 0), "the tracked header's slot");
    let rec_at = slot_at(m, "f_rec_at", b.recq, b.recq.rd.expr() + ahead.slice(rb - 1, 0), "the tracked record's slot");
    m.assert(
        "a_hdr_tracked_in_place",
        "while the tracked header waits, it is in the header FIFO at its place, as taken",
        implies(
            hseen.expr().logic_and(no(released.expr())),
            ahead.expr().lt(wide_n(b.hdrq)).logic_and(hdr_at.expr().eq(&hdr)),
        ),
    );
    m.assert(
        "a_rec_tracked_in_place",
        "while the tracked packet's record waits, it is in the record FIFO at its place, as written",
        implies(
            closed.expr().logic_and(no(released.expr())),
            ahead.expr().lt(wide_n(b.recq)).logic_and(rec_at.expr().eq(cat(&[pdrop.expr(), pbeats.expr()]))),
        ),
    );
    m.assert(
        "a_released_after_both",
        "the tracked packet is released only with its header and its record, and its header goes out and its command comes only after",
        implies(&released, hseen.expr().logic_and(&closed))
            .logic_and(implies(hout.expr().logic_or(&cmd).logic_or(&strm), &released)),
    );
    m.assert(
        "a_release_pairs",
        "the tracked packet's header is released with its own record: discarded with it if dropped, else onto m_hdr",
        implies(&rel_p, b.hand_on.expr().eq(no(pdrop.expr())).logic_and(b.discard.expr().eq(&pdrop))),
    );
    let next_p = p.expr() + lit(NB, 1);
    m.assert(
        "a_hdr_out_tracked",
        "the tracked header is on m_hdr only unchanged, only for a packet not dropped, and only once every packet before it is released (in order)",
        implies(
            &hout,
            b.out_valid
                .expr()
                .logic_and(b.m_hdr.clone().eq(&hdr))
                .logic_and(no(pdrop.expr()))
                .logic_and(rel.expr().eq(next_p.clone())),
        ),
    );

    // ---- the tracked packet's command and stream ----
    m.assert(
        "a_cmd_tracked",
        "while the tracked packet waits for its command, the command slot holds its beats",
        implies(
            &cmd,
            b.cmd_valid
                .expr()
                .logic_and(b.cmd_beats.expr().eq(&pbeats))
                .logic_and(rel.expr().eq(next_p))
                .logic_and(&released)
                .logic_and(no(pdrop.expr())),
        ),
    );
    m.assert(
        "a_kept_only_good",
        "a command is kept (drop = 0) only for a packet not dropped, after its release, and the two answers exclude each other",
        implies(&kept, released.expr().logic_and(no(pdrop.expr())).logic_and(no(cmd.expr())).logic_and(no(cmddrop.expr())))
            .logic_and(implies(&cmddrop, released.expr().logic_and(no(cmd.expr())).logic_and(no(strm.expr())))),
    );
    m.assert(
        "a_stream_tracked",
        "while the tracked packet streams, the beats it has read plus those left are its beats",
        implies(
            &strm,
            b.stream_left.expr().ne(lit(cb, 0)).logic_and((pread.expr() + b.stream_left).eq(&pbeats)).logic_and(&kept),
        ),
    );
    m.assert(
        "a_stream_done",
        "once the tracked packet's stream ends, every beat of it has been read",
        implies(kept.expr().logic_and(no(strm.expr())), pread.expr().eq(&pbeats)),
    );
    let own_any = own.iter().fold(own_pipe.expr(), |acc, o| acc.logic_or(o));
    m.assert(
        "a_nothing_before_kept",
        "before its command says drop = 0, none of the tracked packet's beats is read or in flight",
        implies(
            no(kept.expr()),
            pread.expr().eq(lit(cb, 0)).logic_and(pout.expr().eq(lit(cb, 0))).logic_and(no(own_any)),
        ),
    );
    let valid_at = |j: Expr| slot_valid(b.outq, j);
    let own_valid = own
        .iter()
        .enumerate()
        .fold(implies(&own_pipe, b.pipe_valid), |acc, (j, o)| acc.logic_and(implies(o, valid_at(lit(ob, j as u64)))));
    m.assert(
        "a_own_in_flight",
        "the ghost's beats in flight are entries of the read register and the output FIFO",
        own_valid,
    );
    m.assert(
        "a_own_count",
        "the tracked packet's beats read are those that left plus those in flight, and no more than its beats",
        pread
            .expr()
            .eq(pout.expr() + zext(&own_pipe, cb) + own_q.clone())
            .logic_and(pout.expr().le(&pread))
            .logic_and(pread.expr().le(&pbeats)),
    );

    // ---- the tracked beat ----
    let cur = mux(&closed, pbeats.expr(), b.cur_beats.expr());
    m.assert(
        "a_beat_stored",
        "the tracked beat is stored exactly when its packet has had more than f_b beats stored",
        mux(closed.expr().logic_or(pin.expr().eq(&p)), bstored.expr().eq(fb.expr().lt(cur)), no(bstored.expr())),
    );
    let word = m.formal_mem_word(b.mem, "f_ring_word", &bslot);
    let n_ahead = mux(&closed, ahead.expr(), wide_n(b.recq));
    let recs_ahead = recs(m, "f_rec_beats_ahead", n_ahead, "beats of the records ahead of the tracked packet");
    let queued = wide(b.stream_left.expr()) + cmd_w + &recs_ahead + wide(fb.expr());
    let dist_w = wide(dist.expr());
    let place = mux(
        no(released.expr()),
        dist_w.clone().eq(queued),
        mux(
            &cmd,
            dist_w.clone().eq(wide(b.stream_left.expr()) + wide(fb.expr())),
            strm.expr().logic_and(fb.expr().ge(&pread)).logic_and(dist_w.eq(wide(fb.expr() - &pread))),
        ),
    );
    m.assert(
        "a_beat_in_ring",
        "while in the ring, the tracked beat's slot holds it as taken, behind exactly the beats ahead of it (the streaming packet's left, the commanded one's, the records' ahead of its packet, and its index)",
        implies(
            &inring,
            bslot.expr().lt(lit(pb, u64::from(ring))).logic_and(word.expr().eq(&bval)).logic_and(place),
        ),
    );
    m.assert(
        "a_beat_freed_only_dropped",
        "the tracked beat is freed without being sent only if its packet was dropped (tuser, too long, or commanded drop = 1)",
        implies(&bfreed, pdrop.expr().logic_or(&cmddrop).logic_and(&released).logic_and(no(bread.expr()))),
    );
    m.assert(
        "a_beat_read_in_turn",
        "the tracked beat is read only for a kept command, once its packet has read f_b beats before it",
        implies(&bread, kept.expr().logic_and(bstored.expr()))
            .logic_and(implies(bstored.expr().logic_and(&kept), bread.expr().eq(fb.expr().lt(&pread)))),
    );
    m.assert(
        "a_beat_whereabouts",
        "a tracked beat read has left exactly when its packet has sent more than f_b beats, and is in the read register or the output FIFO until then",
        implies(
            &bread,
            bout.expr().eq(fb.expr().lt(&pout)).logic_and(mux(
                &bout,
                no(bpipe.expr()).logic_and(no(binq.expr())),
                bpipe.expr() ^ &binq,
            )),
        )
        .logic_and(implies(bpipe.expr().logic_or(&binq).logic_or(&bout), &bread)),
    );
    let last_exp = fb.expr().eq(pbeats.expr() - lit(cb, 1));
    m.assert(
        "a_beat_in_pipe",
        "in the read register, the tracked beat is as taken, marked last exactly when it is its packet's last, and behind the packet's beats in the output FIFO",
        implies(
            &bpipe,
            b.pipe_valid
                .expr()
                .logic_and(&own_pipe)
                .logic_and(b.rd_data.expr().eq(&bval))
                .logic_and(b.pipe_last.expr().eq(last_exp.clone()))
                .logic_and(fb.expr().eq(pout.expr() + own_q)),
        ),
    );
    let q_at = slot_at(m, "f_q_at", b.outq, bqslot.expr(), "the tracked beat's output FIFO slot");
    let own_at =
        own.iter().enumerate().fold(lit(1, 0), |acc, (j, o)| mux(bqslot.expr().eq(lit(ob, j as u64)), o.expr(), acc));
    m.assert(
        "a_beat_in_outq",
        "in the output FIFO, the tracked beat is as taken, marked last exactly when it is its packet's last, and behind the packet's beats ahead of it",
        implies(
            &binq,
            valid_at(bqslot.expr())
                .logic_and(own_at)
                .logic_and(q_at.expr().eq(cat(&[last_exp.clone(), bval.expr()])))
                .logic_and(fb.expr().eq(pout.expr() + zext(
                    bqslot.expr().ne(&b.outq.rd).logic_and(&own_head),
                    cb,
                ))),
        ),
    );
    m.assert(
        "a_beat_out",
        "the tracked beat leaves on m_axis with the tdata and tkeep it was taken with, tlast exactly on its packet's last beat, as its packet's beat f_b (after f_b of them, in order), and only for a packet neither dropped nor commanded drop = 1",
        implies(
            on_head.clone(),
            port("m_axis_tvalid")
                .expr()
                .logic_and(port("m_axis_tdata").expr().eq(bval.slice(dw - 1, 0)))
                .logic_and(port("m_axis_tkeep").expr().eq(bval.slice(mw - 1, dw)))
                .logic_and(port("m_axis_tlast").expr().eq(last_exp.clone()))
                .logic_and(pout.expr().eq(&fb))
                .logic_and(&kept)
                .logic_and(no(pdrop.expr())),
        ),
    );
    m.assert(
        "a_dropped_never_out",
        "a beat of a dropped packet (tuser, too long, or commanded drop = 1) is never on m_axis",
        implies(b.outq.valid.expr().logic_and(&own_head), kept.expr().logic_and(no(pdrop.expr()))),
    );
    m.cover(
        "c_packet_streamed_whole",
        "the last beat of a packet of two or more leaves on m_axis as tracked, after the others",
        on_head.logic_and(pop).logic_and(last_exp).logic_and(fb.expr().ne(lit(cb, 0))),
    );
    m.cover(
        "c_dropped_discarded",
        "a beat of a packet closed with tuser = 1 is freed with the packet's header (discarded)",
        freed_b.expr().logic_and(b.discard).logic_and(&pdrop),
    );
    m.cover(
        "c_command_drop_frees",
        "a beat of a packet commanded drop = 1 is freed",
        freed_b.expr().logic_and(pay_p).logic_and(port("s_pay_drop")),
    );
}

/// The assertions checked to a bound only: the ring accounting and the
/// tracked beat's (see [`formal_tasks`]).
fn bounded(label: &str) -> bool {
    label.starts_with("a_ring_") || label.starts_with("a_beat_")
}

/// Depth of the bounded task: reset, a packet of two beats in, released,
/// commanded and streamed out whole (its last beat leaves in cycle 7). Each
/// step past it costs several times the one before (step 9 took 2 minutes
/// under load, step 10 did not finish in 5).
pub const BMC_DEPTH: u32 = 10;

/// How the properties of [`generate`]'s module are checked: the handshake,
/// FIFO, header, record, command and stream rules by 2-induction
/// (`prove`); the ring accounting and the tracked beat's rules to
/// [`BMC_DEPTH`] cycles from reset (`bmc`, the ring as an SMT array); the
/// covers to 30 cycles. With the accounting in the induction (a sum over
/// the 16 records, the ring pointers modulo 258 on `small`), the step did
/// not finish in 10 minutes, with or without the tracked beat.
pub fn formal_tasks(asserts: &[String]) -> Vec<crate::proof::Task> {
    use crate::proof::{prove_and_cover, Mode, Task};
    let mut tasks = prove_and_cover(2, 30, true);
    tasks[0].asserts = Some(asserts.iter().filter(|l| !bounded(l)).cloned().collect());
    tasks.insert(
        1,
        Task {
            name: "bmc",
            mode: Mode::Bmc(BMC_DEPTH),
            asserts: Some(asserts.iter().filter(|l| bounded(l)).cloned().collect()),
            why_bounded: "the ring accounting (a sum over the 16 records, pointers modulo the ring) did not close by induction in 10 minutes",
            arrays: true,
            without: &[],
            lean_on_proven: false,
            connections: None,
            solver: None,
        },
    );
    tasks
}
