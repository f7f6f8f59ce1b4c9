//! `cpl_engine` RTL: the generator of the cycle model
//! [`mrnic_model::cpl_engine`], with the same ports (the model's list plus
//! `clk`) and the same cycle timing. The model's doc comment is the
//! specification: one operation at a time (count, drain step, consume
//! answer, post, open), each reading the tables `READ_LATENCY` cycles before
//! its act; FIFOs of 4 on every output; the reset sweep of the stream words.
//!
//! Structure: the pending FIFO (`s_new` entries waiting for their DMA
//! completion), a state register with the operation's context (queue,
//! packet, stream word, message), `st_mem` (stream words: completed_msn,
//! next_consume, active, a valid bit per message slot) and `msg_mem`
//! (message slots), both block RAM with a registered read, and the three
//! output FIFOs.

use mrnic_model::cpl_engine::{self as model, CplEngineParams, ParamError, OUT_DEPTH};

use crate::expr::{cat, lit, mux, zext, Expr, Signal};
use crate::formal::implies;
use crate::ir::{case, if_then, set, MemStyle, Module};
use crate::param::ParamExpr;
use crate::ports::{declare, offsets, pack, read_latency};
use crate::sack_gen::fifo;

crate::block_api!(mrnic_model::cpl_engine, CplEngineParams, ParamError);

// State encoding.
const INIT: u64 = 0;
const IDLE: u64 = 1;
const COUNT_RD: u64 = 2;
const DRAIN: u64 = 3;
const DRAIN_RD: u64 = 4;
const WAIT_CONS: u64 = 5;
const POST_RD: u64 = 6;
const OPEN: u64 = 7;

/// Message-slot fields, LSB first (the model's `msg_word_bits`).
const MSG: [(&str, u32, &str); 8] = [
    ("msn", 24, "message"),
    ("send", 1, "SEND or SEND_IMM"),
    ("msg_len", 32, "message length"),
    ("imm_valid", 1, "carries an immediate"),
    ("imm", 32, "the immediate (0 without)"),
    ("rq_seq", 24, "SEND: its receive"),
    ("conn_id", 24, "local connection id"),
    ("bytes", 32, "bytes counted"),
];

fn build(p: &CplEngineParams) -> Module {
    let l = p.read_latency;
    let (cb, sb) = (p.conn_bits, p.stream_bits);
    let db = p.msg_depth.trailing_zeros();
    let qb = cb + sb;
    let (sw, mw) = (p.stream_word_bits(), p.msg_word_bits());
    let outd = OUT_DEPTH as u32;
    let ofb = outd.trailing_zeros();

    let mut m = Module::new(model::NAME);
    m.describe("message completion: bytes counted once at the DMA response, completions exactly once in msn order");
    let conns_p = m.param("CONNS", u64::from(p.conns), "connection slots (power of 2)");
    let streams_p = m.param("STREAMS", u64::from(p.streams), "streams per connection (power of 2, at least 2)");
    let depth_p = m.param("MSG_DEPTH", u64::from(p.msg_depth), "message slots per stream (power of 2, 2..64)");
    let lat_p = m.param("READ_LATENCY", u64::from(l), "table memory read latency in cycles (1 or 2)");
    let pend_p = m.param("PENDING", u64::from(p.pending), "pending FIFO entries (power of 2)");
    let queues_p = m.localparam("QUEUES", conns_p.expr() * streams_p.expr(), "stream words: CONNS * STREAMS");
    let slots_p = m.localparam("SLOTS", queues_p.expr() * depth_p.expr(), "message slots: QUEUES * MSG_DEPTH");
    let pow2 = |e: ParamExpr| e.clone().eq(ParamExpr::Const(1) << e.clog2());
    m.param_check(
        "sizes",
        conns_p
            .expr()
            .ge(2u32)
            .and(pow2(conns_p.expr()))
            .and(streams_p.expr().ge(2u32))
            .and(pow2(streams_p.expr()))
            .and(depth_p.expr().ge(2u32))
            .and(depth_p.expr().le(64u32))
            .and(pow2(depth_p.expr()))
            .and(pow2(pend_p.expr())),
        "CONNS, STREAMS, MSG_DEPTH and PENDING must be powers of 2; STREAMS and MSG_DEPTH at least 2, MSG_DEPTH at most 64",
    );
    m.param_check("read_latency", lat_p.expr().ge(1u32).and(lat_p.expr().le(2u32)), "READ_LATENCY must be 1 or 2");

    let (clk, sig) = declare(&mut m, &model::ports(p));
    let port = |n: &str| sig[n].clone();
    let rst = port("rst");
    m.clock_domain(&clk, &rst);
    let w_ = |m: &mut Module, n: &str, w: u32, c: &str, e: Expr| -> Signal {
        let s = m.wire(n, w, c);
        m.assign(&s, e);
        s
    };

    // ---- registers ----
    let state =
        m.reg("state", 3, INIT, "0 INIT, 1 IDLE, 2 COUNT_RD, 3 DRAIN, 4 DRAIN_RD, 5 WAIT_CONS, 6 POST_RD, 7 OPEN");
    let init_addr = m.reg("init_addr", qb, 0, "stream word the reset sweep zeroes");
    let wait = m.reg("wait", 1, 0, "cycles left before the read data is there");
    let conn = m.reg_no_reset("conn", cb, "the operation's connection");
    let stream = m.reg_no_reset("stream", sb, "the operation's stream (OPEN: the stream being zeroed)");
    let new_fields = p.new_fields();
    let nw: u32 = new_fields.iter().map(|f| f.1).sum();
    let noff = offsets(&new_fields);
    let pkt = m.reg_no_reset("pkt", nw, "count: the packet, fields as on s_new");
    let tag_ok = m.reg_no_reset("tag_ok", 1, "count: the DMA completion's tag was the packet's");
    let status = m.reg_no_reset("dma_status", 2, "count: the DMA status");
    let stw = m.reg_no_reset("stw", sw, "the stream word being worked on");
    let msg = m.reg_no_reset("msg", mw, "the message a consume waits for");
    let lower_wait =
        m.reg("lower_wait", 1, 0, "a post or open was refused in the last IDLE cycle: this IDLE cycle is theirs");
    let open_first = m.reg("open_first", 1, 0, "the refused one was an open: it goes before a post");
    let is = |s: u64| state.q.expr().eq(lit(3, s));

    // ---- field helpers ----
    let moff = offsets(&MSG);
    let mf = |word: &Signal, n: &str| -> Expr {
        let (o, w) = moff[n];
        word.slice(o + w - 1, o)
    };
    let nf = |word: &Signal, n: &str| -> Expr {
        let (o, w) = noff[n];
        word.slice(o + w - 1, o)
    };
    // Stream word: next_complete [23:0], next_consume [47:24], active [48],
    // valid [49 + DEPTH - 1 : 49].
    let s_nc = |w: &Signal| w.slice(23, 0);
    let s_ncons = |w: &Signal| w.slice(47, 24);
    let s_act = |w: &Signal| w.bit(48);
    let s_valid = |w: &Signal| w.slice(48 + p.msg_depth, 49);
    let stream_word = |nc: Expr, ncons: Expr, act: Expr, valid: Expr| cat(&[valid, act, ncons, nc]);

    // ---- pending FIFO ----
    let new_in = pack(&new_fields, |n| port(&format!("s_new_{n}")).expr());
    let pend_pop = m.wire("pend_pop", 1, "the pending head is taken by a DMA completion");
    let new_fire = m.wire("new_fire", 1, "s_new handshake");
    let (pend_valid, head, pend_count) = fifo(&mut m, "pend", p.pending, &new_fire.expr(), &pend_pop, &new_in, nw);
    let pfb = p.pending.trailing_zeros();
    m.assign(
        port("s_new_ready"),
        is(INIT).logic_not().logic_and(pend_count.expr().lt(lit(pfb + 1, u64::from(p.pending)))),
    );
    m.assign(&new_fire, port("s_new_valid").expr().logic_and(port("s_new_ready")));

    // ---- handshakes in IDLE ----
    let dma_ready = w_(
        &mut m,
        "dma_ready",
        1,
        "IDLE with a pending packet, no post or open waiting",
        is(IDLE).logic_and(&pend_valid).logic_and(lower_wait.q.expr().logic_not()),
    );
    m.assign(port("s_dma_ready"), &dma_ready);
    let dma_take =
        w_(&mut m, "dma_take", 1, "a DMA completion is taken", port("s_dma_valid").expr().logic_and(&dma_ready));
    m.assign(&pend_pop, &dma_take);
    m.assign(
        port("s_post_ready"),
        is(IDLE).logic_and(dma_take.expr().logic_not()).logic_and(open_first.q.expr().logic_not()),
    );
    let post_take = w_(
        &mut m,
        "post_take",
        1,
        "a post notice is taken",
        port("s_post_valid").expr().logic_and(port("s_post_ready")),
    );
    m.assign(
        port("s_open_ready"),
        is(IDLE)
            .logic_and(dma_take.expr().logic_not())
            .logic_and(port("s_post_valid").expr().logic_not().logic_or(&open_first.q)),
    );
    let open_take =
        w_(&mut m, "open_take", 1, "an open is taken", port("s_open_valid").expr().logic_and(port("s_open_ready")));
    // Refusals in IDLE decide the next IDLE cycle's order (model: lower_wait).
    let open_refused = port("s_open_valid").expr().logic_and(open_take.expr().logic_not());
    let post_refused = port("s_post_valid").expr().logic_and(post_take.expr().logic_not());
    m.next(if_then(
        is(IDLE),
        vec![set(&lower_wait.next, post_refused.logic_or(open_refused.clone())), set(&open_first.next, open_refused)],
    ));

    // ---- memories ----
    let q_of = |c: Expr, s: Expr| cat(&[c, s]);
    let st_mem = m.memory(
        "st",
        sw,
        &queues_p,
        MemStyle::Block,
        "stream words {valid per slot, active, next_consume, next_complete}; zeroed by the sweep and by opens",
    );
    let msg_mem = m.memory(
        "msg",
        mw,
        &slots_p,
        MemStyle::Block,
        "message slots {bytes, conn_id, rq_seq, imm, imm_valid, msg_len, send, msn}; live while the slot's valid bit is set",
    );
    let st_rd_en = w_(&mut m, "st_rd_en", 1, "a stream word read", dma_take.expr().logic_or(&post_take));
    let st_rd_addr = w_(
        &mut m,
        "st_rd_addr",
        qb,
        "its queue: the pending head's, or the post's",
        mux(
            &dma_take,
            q_of(nf(&head, "conn"), nf(&head, "stream")),
            q_of(port("s_post_conn").expr(), port("s_post_stream").expr()),
        ),
    );
    let msg_rd_en = w_(&mut m, "msg_rd_en", 1, "a message slot read", dma_take.expr().logic_or(is(DRAIN)));
    let head_slot = w_(
        &mut m,
        "head_slot",
        db,
        "the pending head's message slot",
        head.slice(noff["msn"].0 + db - 1, noff["msn"].0),
    );
    let stw_nc = w_(&mut m, "stw_nc", 24, "completed_msn of the worked stream", s_nc(&stw.q));
    let msg_rd_addr = w_(
        &mut m,
        "msg_rd_addr",
        qb + db,
        "the pending head's slot, or the worked stream's completed_msn slot",
        mux(
            &dma_take,
            cat(&[nf(&head, "conn"), nf(&head, "stream"), head_slot.expr()]),
            cat(&[conn.q.expr(), stream.q.expr(), stw_nc.slice(db - 1, 0)]),
        ),
    );
    let rd_st = read_latency(&mut m, &st_mem, "stword", &st_rd_en, &st_rd_addr, l);
    let rd_msg = read_latency(&mut m, &msg_mem, "msgword", &msg_rd_en, &msg_rd_addr, l);
    let act = w_(&mut m, "act", 1, "the read data is there", wait.q.expr().eq(lit(1, 0)));

    // ---- output FIFO counts (room from registers only) ----
    let st_count = m.wire("st_count_w", ofb + 1, "m_st FIFO entries");
    let cons_count = m.wire("consume_count_w", ofb + 1, "m_consume FIFO entries");
    let cqe_count = m.wire("cqe_count_w", ofb + 1, "m_cqe FIFO entries");
    let room = |c: &Signal| c.expr().lt(lit(ofb + 1, u64::from(outd)));
    let room_st = w_(&mut m, "room_st", 1, "room in m_st", room(&st_count));
    let room_cons = w_(&mut m, "room_consume", 1, "room in m_consume", room(&cons_count));
    let cons_ready = w_(
        &mut m,
        "cons_ready",
        1,
        "WAIT_CONS with room for the CQE and the publication",
        is(WAIT_CONS).logic_and(room(&cqe_count)).logic_and(&room_st),
    );
    m.assign(port("s_cons_ready"), &cons_ready);
    let cons_fire =
        w_(&mut m, "cons_fire", 1, "consume answer handshake", port("s_cons_valid").expr().logic_and(&cons_ready));

    // ---- count act ----
    let pkt_slot =
        w_(&mut m, "pkt_slot", db, "the packet's message slot", pkt.q.slice(noff["msn"].0 + db - 1, noff["msn"].0));
    let rd_valid = w_(&mut m, "rd_valid", p.msg_depth, "valid bits of the read stream word", s_valid(&rd_st));
    let live = w_(&mut m, "count_live", 1, "the packet's slot holds a live message", rd_valid.expr().bit_at(&pkt_slot));
    let count_act =
        w_(&mut m, "count_act", 1, "the count acts this cycle", is(COUNT_RD).logic_and(&act).logic_and(&room_st));
    let msg_err = w_(
        &mut m,
        "msg_err",
        1,
        "the slot holds another live message",
        tag_ok
            .q
            .expr()
            .logic_and(status.q.expr().eq(lit(2, 0)))
            .logic_and(&live)
            .logic_and(mf(&rd_msg, "msn").ne(nf(&pkt.q, "msn"))),
    );
    let good = w_(
        &mut m,
        "count_good",
        1,
        "the packet's bytes count",
        count_act
            .expr()
            .logic_and(&tag_ok.q)
            .logic_and(status.q.expr().eq(lit(2, 0)))
            .logic_and(msg_err.expr().logic_not()),
    );
    let fresh = pack(&MSG, |n| match n {
        "imm" => mux(nf(&pkt.q, "imm_valid"), nf(&pkt.q, "imm"), lit(32, 0)),
        "bytes" => lit(32, 0),
        other => nf(&pkt.q, other),
    });
    let base_msg = w_(&mut m, "count_msg", mw, "the message before this packet", mux(&live, &rd_msg, fresh));
    let new_msg = w_(
        &mut m,
        "count_msg_new",
        mw,
        "the message with this packet's bytes",
        cat(&[mf(&base_msg, "bytes") + zext(nf(&pkt.q, "payload_len"), 32), base_msg.slice(mw - 33, 0)]),
    );
    let bit =
        w_(&mut m, "count_bit", p.msg_depth, "the packet's slot as a mask", lit(p.msg_depth, 1) << pkt_slot.expr());
    let st_counted = w_(
        &mut m,
        "count_st",
        sw,
        "the stream word after the count: slot live, stream active",
        stream_word(s_nc(&rd_st), s_ncons(&rd_st), lit(1, 1), rd_valid.expr() | bit.expr()),
    );
    let newly_active = w_(
        &mut m,
        "newly_active",
        1,
        "the count makes the stream active",
        good.expr().logic_and(s_act(&rd_st).logic_not()),
    );

    // ---- drain act ----
    let stw_slot = w_(&mut m, "stw_slot", db, "slot of the worked stream's completed_msn", stw_nc.slice(db - 1, 0));
    let stw_valid = w_(&mut m, "stw_valid", p.msg_depth, "valid bits of the worked stream", s_valid(&stw.q));
    let drain_act = w_(&mut m, "drain_act", 1, "a drain step acts this cycle", is(DRAIN_RD).logic_and(&act));
    let complete = w_(
        &mut m,
        "head_complete",
        1,
        "the head message is live, is completed_msn, and has all its bytes",
        stw_valid
            .expr()
            .bit_at(&stw_slot)
            .logic_and(mf(&rd_msg, "msn").eq(&stw_nc))
            .logic_and(mf(&rd_msg, "bytes").eq(mf(&rd_msg, "msg_len"))),
    );
    let plain = w_(
        &mut m,
        "head_plain",
        1,
        "a WRITE without immediate: completes without a receive",
        mf(&rd_msg, "send").logic_not().logic_and(mf(&rd_msg, "imm_valid").logic_not()),
    );
    let adv_plain = w_(
        &mut m,
        "adv_plain",
        1,
        "a drain step completes a WRITE",
        drain_act.expr().logic_and(&complete).logic_and(&plain).logic_and(&room_st),
    );
    let consume_push = w_(
        &mut m,
        "consume_push",
        1,
        "a drain step sends a consume",
        drain_act.expr().logic_and(&complete).logic_and(plain.expr().logic_not()).logic_and(&room_cons),
    );
    let cons_ok =
        w_(&mut m, "cons_ok", 1, "the consume answer has a receive", cons_fire.expr().logic_and(port("s_cons_ok")));
    let advance =
        w_(&mut m, "advance", 1, "the head message completes this cycle", adv_plain.expr().logic_or(&cons_ok));
    let ncons_after = mux(&cons_ok, port("s_cons_rq_seq").expr() + lit(24, 1), s_ncons(&stw.q));
    let st_adv = w_(
        &mut m,
        "adv_st",
        sw,
        "the stream word after completing its head: slot freed, completed_msn + 1",
        stream_word(
            stw_nc.expr() + lit(24, 1),
            ncons_after,
            s_act(&stw.q),
            stw_valid.expr() & !(lit(p.msg_depth, 1) << stw_slot.expr()),
        ),
    );
    let open_act = w_(&mut m, "open_act", 1, "an open zeroes a stream word", is(OPEN).logic_and(&room_st));
    let init_last = w_(
        &mut m,
        "init_last",
        1,
        "the sweep's last word",
        init_addr.q.expr().eq(lit(qb, u64::from(p.conns * p.streams - 1))),
    );

    // ---- memory writes ----
    let st_we = is(INIT).logic_or(&good).logic_or(&advance).logic_or(&open_act);
    let st_wa = mux(
        is(INIT),
        &init_addr.q,
        mux(&good, q_of(nf(&pkt.q, "conn"), nf(&pkt.q, "stream")), q_of(conn.q.expr(), stream.q.expr())),
    );
    let st_wd = mux(&good, &st_counted, mux(&advance, &st_adv, lit(sw, 0)));
    m.mem_write(&st_mem, st_we.clone(), st_wa.clone(), st_wd.clone());
    m.mem_write(&msg_mem, &good, cat(&[nf(&pkt.q, "conn"), nf(&pkt.q, "stream"), pkt_slot.expr()]), &new_msg);

    // ---- state machine ----
    let l1 = lit(1, u64::from(l - 1));
    let go = |s: u64| set(&state.next, lit(3, s));
    m.next(case(
        &state.q,
        vec![
            (
                vec![lit(3, INIT)],
                vec![set(&init_addr.next, init_addr.q.expr() + lit(qb, 1)), if_then(&init_last, vec![go(IDLE)])],
            ),
            (
                vec![lit(3, IDLE)],
                vec![crate::if_else(
                    &dma_take,
                    vec![
                        set(&conn.next, nf(&head, "conn")),
                        set(&stream.next, nf(&head, "stream")),
                        set(&pkt.next, &head),
                        set(&tag_ok.next, port("s_dma_tag").expr().eq(nf(&head, "tag"))),
                        set(&status.next, port("s_dma_status")),
                        set(&wait.next, l1.clone()),
                        go(COUNT_RD),
                    ],
                    vec![crate::if_else(
                        &post_take,
                        vec![
                            set(&conn.next, port("s_post_conn")),
                            set(&stream.next, port("s_post_stream")),
                            set(&wait.next, l1.clone()),
                            go(POST_RD),
                        ],
                        vec![if_then(
                            &open_take,
                            vec![set(&conn.next, port("s_open_conn")), set(&stream.next, lit(sb, 0)), go(OPEN)],
                        )],
                    )],
                )],
            ),
            (
                vec![lit(3, COUNT_RD)],
                vec![crate::if_else(
                    act.expr().logic_not(),
                    vec![set(&wait.next, lit(1, 0))],
                    vec![if_then(
                        &count_act,
                        vec![
                            go(IDLE),
                            if_then(
                                &good,
                                vec![
                                    set(&stw.next, &st_counted),
                                    if_then(nf(&pkt.q, "msn").eq(s_nc(&rd_st)), vec![go(DRAIN)]),
                                ],
                            ),
                        ],
                    )],
                )],
            ),
            (vec![lit(3, DRAIN)], vec![set(&wait.next, l1.clone()), go(DRAIN_RD)]),
            (
                vec![lit(3, DRAIN_RD)],
                vec![crate::if_else(
                    act.expr().logic_not(),
                    vec![set(&wait.next, lit(1, 0))],
                    vec![crate::if_else(
                        complete.expr().logic_not(),
                        vec![go(IDLE)],
                        vec![
                            if_then(&adv_plain, vec![set(&stw.next, &st_adv), go(DRAIN)]),
                            if_then(&consume_push, vec![set(&msg.next, &rd_msg), go(WAIT_CONS)]),
                        ],
                    )],
                )],
            ),
            (
                vec![lit(3, WAIT_CONS)],
                vec![if_then(
                    &cons_fire,
                    vec![crate::if_else(&cons_ok, vec![set(&stw.next, &st_adv), go(DRAIN)], vec![go(IDLE)])],
                )],
            ),
            (
                vec![lit(3, POST_RD)],
                vec![crate::if_else(
                    act.expr().logic_not(),
                    vec![set(&wait.next, lit(1, 0))],
                    vec![set(&stw.next, &rd_st), go(DRAIN)],
                )],
            ),
            (
                vec![lit(3, OPEN)],
                vec![if_then(
                    &open_act,
                    vec![
                        set(&stw.next, lit(sw, 0)),
                        crate::if_else(
                            stream.q.expr().eq(lit(sb, u64::from(p.streams - 1))),
                            vec![go(IDLE)],
                            vec![set(&stream.next, stream.q.expr() + lit(sb, 1))],
                        ),
                    ],
                )],
            ),
        ],
        None,
    ));

    // ---- output FIFOs ----
    let st_fields = p.st_fields();
    let open_pub = open_act.expr().logic_and(stream.q.expr().eq(lit(sb, 0)));
    let st_push = w_(
        &mut m,
        "st_push",
        1,
        "a publication: newly active, a completion, or an open",
        newly_active.expr().logic_or(&advance).logic_or(open_pub.clone()),
    );
    let st_entry = pack(&st_fields, |n| match n {
        "conn" => mux(&newly_active, nf(&pkt.q, "conn"), &conn.q),
        "stream" => mux(&newly_active, nf(&pkt.q, "stream"), &stream.q),
        "clear" => open_pub.clone(),
        "completed_msn" => mux(&newly_active, s_nc(&st_counted), mux(&advance, s_nc(&st_adv), lit(24, 0))),
        "active" => mux(&newly_active, lit(1, 1), mux(&advance, s_act(&st_adv), lit(1, 0))),
        _ => unreachable!("m_st field {n}"),
    });
    let consume_entry = pack(&p.consume_fields(), |n| match n {
        "conn" => conn.q.expr(),
        "stream" => stream.q.expr(),
        "imm" => mf(&rd_msg, "send").logic_not(),
        "rq_seq" => mux(mf(&rd_msg, "send"), mf(&rd_msg, "rq_seq"), s_ncons(&stw.q)),
        _ => unreachable!("m_consume field {n}"),
    });
    let cqe_entry = pack(&p.cqe_fields(), |n| match n {
        "wr_id" => port("s_cons_wr_id").expr(),
        "status" => lit(2, 0),
        "opcode" => mux(
            mf(&msg.q, "send"),
            lit(2, u64::from(model::OPCODE_RECV)),
            lit(2, u64::from(model::OPCODE_RECV_RDMA_WITH_IMM)),
        ),
        "conn" => mf(&msg.q, "conn_id"),
        "stream" => zext(&stream.q, 8),
        "byte_len" => mf(&msg.q, "msg_len"),
        "imm_valid" => mf(&msg.q, "imm_valid"),
        "imm" => mf(&msg.q, "imm"),
        _ => unreachable!("m_cqe field {n}"),
    });
    for (ch, fields, push, entry, count) in [
        ("st", st_fields.clone(), st_push.expr(), st_entry, &st_count),
        ("consume", p.consume_fields(), consume_push.expr(), consume_entry, &cons_count),
        ("cqe", p.cqe_fields(), cons_ok.expr(), cqe_entry, &cqe_count),
    ] {
        let width: u32 = fields.iter().map(|f| f.1).sum();
        let data = w_(&mut m, &format!("{ch}_push_data"), width, "the entry pushed this cycle", entry);
        let valid = port(&format!("m_{ch}_valid"));
        let pop = m.wire(&format!("{ch}_pop"), 1, "output handshake");
        m.assign(&pop, valid.expr().logic_and(port(&format!("m_{ch}_ready"))));
        let (v, shown, c) = fifo(&mut m, ch, outd, &push, &pop, &data.expr(), width);
        m.assign(&valid, &v);
        m.assign(count, &c);
        let off = offsets(&fields);
        for (n, _, _) in &fields {
            let (o, w) = off[n];
            m.assign(port(&format!("m_{ch}_{n}")), shown.slice(o + w - 1, o));
        }
    }

    // Every packet handed over is counted, drained and published: what a
    // SACK for the last one may report (registers only).
    m.assign(
        port("idle"),
        is(IDLE).logic_and(pend_valid.expr().logic_not()).logic_and(st_count.expr().eq(lit(ofb + 1, 0))),
    );

    // ---- properties ----
    // One operation runs at a time, and it works on copies of table words
    // (the read registers, `stw`, `msg`). Each copy is the stored word
    // while the operation holds it: nothing else writes the tables
    // meanwhile, and the operation writes back what it changed.
    crate::formal::every_channel(&mut m, &rst);
    let q_addr = q_of(conn.q.expr(), stream.q.expr());
    let stored_st = m.formal_mem_word(&st_mem, "f_st_stored", q_addr.clone());
    let msg_slot = mux(is(COUNT_RD), &pkt_slot, &stw_slot);
    let stored_msg = m.formal_mem_word(&msg_mem, "f_msg_stored", cat(&[q_addr.clone(), msg_slot]));
    let draining = is(DRAIN).logic_or(is(DRAIN_RD)).logic_or(is(WAIT_CONS));
    m.assert(
        "a_stw_stored",
        "while a stream drains, the engine's copy of its stream word is the stored word",
        implies(draining, stw.q.expr().eq(&stored_st)),
    );
    m.assert(
        "a_rd_st_stored",
        "a count or a post acts on the stream word as stored now",
        implies(is(COUNT_RD).logic_or(is(POST_RD)).logic_and(&act), rd_st.expr().eq(&stored_st)),
    );
    m.assert(
        "a_rd_msg_stored",
        "a count acts on its message slot, a drain step on the head slot, as stored now",
        implies(is(COUNT_RD).logic_or(is(DRAIN_RD)).logic_and(&act), rd_msg.expr().eq(&stored_msg)),
    );
    m.assert(
        "a_msg_stored",
        "a consume waits on the head message as stored",
        implies(is(WAIT_CONS), msg.q.expr().eq(&stored_msg)),
    );
    m.assert(
        "a_count_same_queue",
        "a count works on the pending packet's own stream",
        implies(is(COUNT_RD), q_of(nf(&pkt.q, "conn"), nf(&pkt.q, "stream")).eq(&q_addr)),
    );
    // The completion rule, on the stored words: a message completes (a
    // WRITE's drain step, or a consume answered with a receive) only when
    // it is the stream's next (msn = completed_msn), its slot is live (set
    // only by a count) and every byte is counted; the write-back frees the
    // slot and moves completed_msn on by exactly one. So completions come
    // in msn order, none for a message not counted in full, and none twice
    // (after it, completed_msn is past the msn until the 24-bit msn space
    // wraps).
    let slot_bit = lit(p.msg_depth, 1) << stw_slot.expr();
    let stored_valid = m.formal_wire("f_st_stored_valid", p.msg_depth, "the stored word's valid bit per slot");
    m.formal_assign(&stored_valid, s_valid(&stored_st));
    m.assert(
        "a_cpl_next_msn",
        "a completion (and a consume waited on) is the stream's next message, live in its slot and counted in full",
        implies(
            advance.expr().logic_or(is(WAIT_CONS)),
            stored_valid
                .expr()
                .bit_at(&stw_slot)
                .logic_and(mf(&stored_msg, "msn").eq(s_nc(&stored_st)))
                .logic_and(mf(&stored_msg, "bytes").eq(mf(&stored_msg, "msg_len"))),
        ),
    );
    m.assert(
        "a_cpl_moves_on",
        "a completion writes its stream word back with completed_msn + 1 and the slot freed",
        implies(
            &advance,
            st_we
                .clone()
                .logic_and(st_wa.clone().eq(&q_addr))
                .logic_and(s_nc(&st_adv).eq(s_nc(&stored_st) + lit(24, 1)))
                .logic_and(s_valid(&st_adv).eq(s_valid(&stored_st) & !slot_bit))
                .logic_and(st_wd.clone().eq(&st_adv)),
        ),
    );
    // A tracked stream's completed_msn, as stored: it moves one step on at
    // a completion of that stream and otherwise only back to 0 (the reset
    // sweep, an open of its connection).
    let f_q = m.formal_anyconst("f_cpl_queue", qb, "a tracked stream {conn, stream}");
    let q_word = m.formal_mem_word(&st_mem, "f_cpl_queue_word", &f_q);
    let q_nc = s_nc(&q_word);
    let past_nc = m.past("cpl_queue_nc", q_nc.clone(), "the tracked stream's completed_msn last cycle");
    let past_adv = m.past(
        "cpl_queue_advance",
        advance.expr().logic_and(q_addr.clone().eq(&f_q)),
        "the tracked stream completed a message last cycle",
    );
    let zeroed =
        is(INIT).logic_and(init_addr.q.expr().eq(&f_q)).logic_or(open_act.expr().logic_and(q_addr.clone().eq(&f_q)));
    let past_zero = m.past("cpl_queue_zeroed", zeroed, "the sweep or an open zeroed the tracked stream last cycle");
    let past_rst = m.past("cpl_rst", &rst, "reset last cycle");
    m.assert(
        "a_cpl_msn_order",
        "a stream's completed_msn moves only by one, at its own completion, or back to 0 at the sweep or an open",
        implies(
            past_rst.expr().logic_not(),
            q_nc.clone()
                .eq(&past_nc)
                .logic_or(past_adv.expr().logic_and(q_nc.clone().eq(past_nc.expr() + lit(24, 1))))
                .logic_or(past_zero.expr().logic_and(q_nc.eq(lit(24, 0)))),
        ),
    );
    let done = m.formal_wire("f_cpl_queue_done", 1, "the tracked stream has completed a message since reset");
    m.formal_seq(vec![crate::ir::if_else(
        &rst,
        vec![set(&done, lit(1, 0))],
        vec![if_then(advance.expr().logic_and(q_addr.clone().eq(&f_q)), vec![set(&done, lit(1, 1))])],
    )]);
    m.cover(
        "c_cpl_queue_reopened",
        "the tracked stream, after a completion, is zeroed again by an open of its connection",
        done.expr().logic_and(q_word.expr().eq(lit(sw, 0))),
    );
    m.cover("c_cpl_write", "a WRITE completes", adv_plain.expr());
    m.cover("c_cpl_recv", "a SEND completes with its receive", cons_ok.expr());
    m.cover(
        "c_cpl_two_in_order",
        "the tracked stream completes its second message (msn 1, after msn 0)",
        advance.expr().logic_and(q_addr.clone().eq(&f_q)).logic_and(s_nc(&q_word).eq(lit(24, 1))),
    );

    for (n, e) in [
        ("dma_err", count_act.expr().logic_and(&tag_ok.q).logic_and(status.q.expr().ne(lit(2, 0)))),
        ("order_err", count_act.expr().logic_and(tag_ok.q.expr().logic_not())),
        ("msg_err", count_act.expr().logic_and(&msg_err)),
        ("recv_cpl", cons_ok.expr()),
    ] {
        let r = m.reg(&format!("stat_{n}"), 1, 0, "counter pulse, one cycle after its step");
        m.next(set(&r.next, e));
        m.assign(port(&format!("stat_{n}")), &r.q);
    }
    m
}

/// How the properties of [`generate`]'s module are checked (see
/// [`crate::proof`]): every assertion by k-induction (k covers the table
/// read latency between an operation's read and its act), the covers past
/// the reset sweep of the stream words (`CONNS * STREAMS` cycles), on the
/// proof configuration's table ([`crate::proof::COVER_CONNECTIONS`]: 8
/// cycles instead of 64). Both
/// keep the tables as arrays: the message slots (`CONNS * STREAMS *
/// MSG_DEPTH` words of 170 bits) are far too many flip-flops.
pub fn formal_tasks(_asserts: &[String]) -> Vec<crate::proof::Task> {
    use crate::proof::{Mode, Task};
    let task = |name, mode| Task {
        name,
        mode,
        asserts: None,
        why_bounded: "",
        arrays: true,
        without: &[],
        lean_on_proven: false,
        connections: None,
        solver: None,
    };
    let tasks = vec![task("prove", Mode::Prove(4)), task("cover", Mode::Cover(84))];
    crate::proof::cover_on_proof_config(tasks, crate::proof::COVER_CONNECTIONS, 28)
}
