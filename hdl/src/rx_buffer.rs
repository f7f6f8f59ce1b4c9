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

use crate::expr::{cat, index_bits, lit, mux, zext};
use crate::ir::{if_else, if_then, set, MemStyle, Module};
use crate::ports::{declare, ConfigError};
use crate::sack_gen::fifo;

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
    let (hdr_valid, hdr_head, hdr_n) = fifo(
        &mut m,
        "hdrq",
        HDR_DEPTH as u32,
        &port("s_hdr_valid").expr().logic_and(&hdr_ready),
        &release,
        &hdr_in,
        hw,
    );
    m.assign(&hdr_count, &hdr_n);

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
    let (rec_valid, rec_head, rec_n) =
        fifo(&mut m, "recq", REC_DEPTH as u32, &closes.expr(), &release, &rec_in, cb + 1);
    m.assign(&rec_count, &rec_n);
    let rec_drop = m.wire_from("rec_drop", 1, "the oldest complete packet is dropped", rec_head.bit(cb));
    let rec_beats = m.wire_from("rec_beats", cb, "its beats", rec_head.slice(cb - 1, 0));

    // ---- payload out: the output FIFO, fed by the RAM's read register ----
    let outd = OUT_DEPTH as u32;
    let out_count = m.wire("outq_count_w", index_bits(outd + 1), "output FIFO entries");
    let ow = out_count.width();
    let out_pop = m.wire("out_pop", 1, "m_axis handshake");
    let rd_data = m.wire("rd_data", mw, "the beat in the RAM's read register");
    let (out_valid_q, out_head, out_n) =
        fifo(&mut m, "outq", outd, &pipe_valid.q.expr(), &out_pop, &cat(&[pipe_last.q.expr(), rd_data.expr()]), mw + 1);
    m.assign(&out_count, &out_n);
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
    m
}

/// How the properties of [`generate`]'s module are checked: a glue
/// block's, [`crate::proof::handshake_tasks`].
pub use crate::proof::handshake_tasks as formal_tasks;
