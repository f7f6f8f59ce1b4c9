//! `msg_check` RTL: the generator of the receive controller's part
//! [`mrnic_model::msg_check`], with the same ports (the model's list plus
//! `clk`) and the same cycle timing. The model's doc comment is the
//! specification.
//!
//! Structure: `vld_mem` (a valid bit per message slot, one word per stream)
//! and `msg_mem` (the message slots), both block RAM read at the
//! handshake; the operation (accept or check) and its packet in registers
//! beside the read; `READ_LATENCY` stage bits; at the last stage the
//! verdict into the answer register, or the accept's slot and valid word
//! written back. The reset sweep and an open clear stream words through
//! `vld_mem`'s one write port, which the accept shares (never in the same
//! cycle: one operation at a time).

use mrnic_model::msg_check::{self as model, status, MsgCheckParams, ParamError};

use crate::expr::{cat, lit, mux, zext, Expr, Signal};
use crate::formal::implies;
use crate::ir::{if_else, if_then, set, Mem, MemStyle, Module, Reg};
use crate::param::ParamExpr;
use crate::ports::{declare, offsets, pack, read_stages};

crate::block_api!(mrnic_model::msg_check, MsgCheckParams, ParamError);

/// Message-slot fields, LSB first (the model's `Slot`).
const SLOT: [(&str, u32, &str); 7] = [
    ("msn", 24, "message"),
    ("send", 1, "SEND or SEND_IMM"),
    ("rq_seq", 24, "SEND: its receive"),
    ("msg_len", 32, "message length"),
    ("imm_valid", 1, "carries an immediate"),
    ("imm", 32, "the immediate (compared only when valid)"),
    ("bytes", 32, "payload bytes accepted"),
];

/// `m_chk_status` width.
const STATUS_BITS: u32 = 2;

fn build(p: &MsgCheckParams) -> Module {
    let l = p.read_latency;
    let (cb, sb) = (p.conn_bits, p.stream_bits);
    let db = p.depth.trailing_zeros();
    let qb = cb + sb;
    let sw: u32 = SLOT.iter().map(|f| f.1).sum();

    let mut m = Module::new(model::NAME);
    m.describe("a data packet's header sanity and message-table checks, in the reference's order");
    let conns_p = m.param("CONNS", u64::from(p.conns), "connection slots (power of 2)");
    let streams_p = m.param("STREAMS", u64::from(p.streams), "streams per connection (power of 2, 2..256)");
    let depth_p = m.param("MSG_DEPTH", u64::from(p.depth), "message slots per stream (power of 2, 2..64)");
    let lat_p = m.param("READ_LATENCY", u64::from(l), "table memory read latency in cycles (1 or 2)");
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
            .and(streams_p.expr().le(256u32))
            .and(pow2(streams_p.expr()))
            .and(depth_p.expr().ge(2u32))
            .and(depth_p.expr().le(64u32))
            .and(pow2(depth_p.expr())),
        "CONNS, STREAMS and MSG_DEPTH must be powers of 2; STREAMS in 2..256, MSG_DEPTH in 2..64",
    );
    m.param_check("read_latency", lat_p.expr().ge(1u32).and(lat_p.expr().le(2u32)), "READ_LATENCY must be 1 or 2");

    let (clk, sig) = declare(&mut m, &model::ports(p));
    let port = |n: &str| sig[n].clone();
    let rst = port("rst");
    m.clock_domain(&clk, &rst);

    // ---- state ----
    let sweeping = m.reg("sweeping", 1, 1, "stream words are being cleared (reset sweep or open)");
    let sweep = m.reg("sweep", qb, 0, "the stream word cleared next");
    let sweep_all = m.reg("sweep_all", 1, 1, "the reset sweep (every word), not an open's (one connection's)");
    let stages: Vec<crate::Reg> = (1..=l)
        .map(|k| m.reg(&format!("stage{k}"), 1, 0, "the operation's read data is this many cycles on"))
        .collect();
    let out_valid = m.reg("out_valid", 1, 0, "an answer waits on m_chk");
    let out_status = m.reg_no_reset("out_status", STATUS_BITS, "the answer");
    let busy = stages.iter().fold(out_valid.q.expr(), |a, s| a.logic_or(&s.q));
    let not_busy = sweeping.q.expr().logic_or(busy).logic_not();
    let idle = m.wire_from("idle", 1, "no sweep, no operation in flight, no answer waiting", not_busy);

    // ---- the three channels, open first ----
    m.assign(port("s_open_ready"), &idle);
    let acc_ready = m.wire_from(
        "acc_ready",
        1,
        "idle and no open offered",
        idle.expr().logic_and(port("s_open_valid").expr().logic_not()),
    );
    m.assign(port("s_acc_ready"), &acc_ready);
    let chk_ready = m.wire_from(
        "chk_ready",
        1,
        "idle and neither an open nor an accept offered",
        acc_ready.expr().logic_and(port("s_acc_valid").expr().logic_not()),
    );
    m.assign(port("s_chk_ready"), &chk_ready);
    let open_take =
        m.wire_from("open_take", 1, "an open is taken", port("s_open_valid").expr().logic_and(port("s_open_ready")));
    let acc_take = m.wire_from("acc_take", 1, "an accept is taken", port("s_acc_valid").expr().logic_and(&acc_ready));
    let chk_take = m.wire_from("chk_take", 1, "a check is taken", port("s_chk_valid").expr().logic_and(&chk_ready));
    let either = acc_take.expr().logic_or(&chk_take);
    let take = m.wire_from("take", 1, "an accept or a check is taken: the tables are read", either);

    // ---- the operation's packet, beside the read ----
    let fields = p.chk_fields();
    let foff = offsets(&fields);
    let pw: u32 = fields.iter().map(|f| f.1).sum();
    let acc_names: Vec<&str> = p.acc_fields().iter().map(|f| f.0).collect();
    let in_pkt =
        m.wire_from("in_pkt", pw, "the taken operation's packet (an accept's has no offset nor completed_msn)", {
            pack(&fields, |n| {
                let c = port(&format!("s_chk_{n}"));
                if acc_names.contains(&n) {
                    mux(&acc_take, port(&format!("s_acc_{n}")), &c)
                } else {
                    c.expr()
                }
            })
        });
    let pkt = m.reg_no_reset("pkt", pw, "the operation's packet, fields as on s_chk");
    let is_acc = m.reg_no_reset("is_acc", 1, "the operation is an accept");
    m.next(if_then(&take, vec![set(&pkt.next, &in_pkt), set(&is_acc.next, &acc_take)]));
    let f = |word: &Signal, n: &str| -> Expr {
        let (o, w) = foff[n];
        word.slice(o + w - 1, o)
    };
    let k = |n: &str| f(&pkt.q, n);

    // ---- the tables ----
    let vld_mem = m.memory("vld", p.depth, &queues_p, MemStyle::Block, "a valid bit per message slot, by stream word");
    let msg_mem = m.memory(
        "msg",
        sw,
        &slots_p,
        MemStyle::Block,
        "message slots {bytes, imm, imm_valid, msg_len, rq_seq, send, msn}; live while the slot's valid bit is set",
    );
    // The low bits of a packed field, selected straight from the net.
    let low = |w: &Signal, n: &str, bits: u32| w.slice(foff[n].0 + bits - 1, foff[n].0);
    let word_of = |w: &Signal| cat(&[f(w, "conn"), low(w, "stream", sb)]);
    let slot_of = |w: &Signal| cat(&[word_of(w), low(w, "msn", db)]);
    let vld_words = read_stages(&mut m, &vld_mem, "vld", &take, word_of(&in_pkt), l);
    let slot_words = read_stages(&mut m, &msg_mem, "msg", &take, slot_of(&in_pkt), l);
    let (vld, slot) = (vld_words[vld_words.len() - 1].clone(), slot_words[slot_words.len() - 1].clone());
    m.next(set(&stages[0].next, &take));
    for i in 1..stages.len() {
        m.next(set(&stages[i].next, &stages[i - 1].q));
    }
    let act = stages[stages.len() - 1].q.clone();

    // ---- the verdict, in the reference's order ----
    let soff = offsets(&SLOT);
    let s = |n: &str| -> Expr {
        let (o, w) = soff[n];
        slot.slice(o + w - 1, o)
    };
    let msn_slot = m.wire_from("msn_slot", db, "the packet's slot: msn mod MSG_DEPTH", low(&pkt.q, "msn", db));
    let live = m.wire_from(
        "live",
        1,
        "the slot holds this msn's message",
        vld.expr().bit_at(&msn_slot).logic_and(s("msn").eq(k("msn"))),
    );
    let len32 = zext(k("len"), 32);
    let bad_len = m.wire_from(
        "bad_len",
        1,
        "payload beyond the MTU or msg_len, a stream the connection lacks, or empty in a non-empty message",
        len32
            .clone()
            .gt(lit(32, u64::from(p.mtu)))
            .logic_or(zext(k("stream"), 9).ge(lit(9, u64::from(p.streams))))
            .logic_or(len32.clone().gt(k("msg_len")))
            .logic_or(k("len").eq(lit(16, 0)).logic_and(k("msg_len").ne(lit(32, 0)))),
    );
    let window = m.wire_from(
        "window",
        1,
        "msn - completed_msn at or beyond the message window",
        (k("msn") - k("completed_msn")).ge(lit(24, u64::from(p.depth))),
    );
    let send = k("send");
    let imm_differs = s("imm_valid").ne(k("imm_valid")).logic_or(k("imm_valid").logic_and(s("imm").ne(k("imm"))));
    let mismatch = m.wire_from(
        "mismatch",
        1,
        "the live message differs in kind, receive, msg_len or immediate, or this payload overfills it",
        live.expr().logic_and(
            s("send")
                .ne(send.clone())
                .logic_or(send.clone().logic_and(s("rq_seq").ne(k("rq_seq"))))
                .logic_or(s("msg_len").ne(k("msg_len")))
                .logic_or(imm_differs)
                .logic_or((zext(s("bytes"), 33) + zext(k("len"), 33)).gt(zext(s("msg_len"), 33))),
        ),
    );
    let past_end = m.wire_from(
        "past_end",
        1,
        "a SEND whose offset plus payload passes msg_len",
        send.logic_and((zext(k("msg_offset"), 33) + zext(k("len"), 33)).gt(zext(k("msg_len"), 33))),
    );
    let code = |c: u8| lit(STATUS_BITS, u64::from(c));
    let verdict = m.wire_from(
        "verdict",
        STATUS_BITS,
        "bad length, window, mismatch, bad SEND offset, or OK",
        mux(
            &bad_len,
            code(status::BAD_LEN),
            mux(
                &window,
                code(status::WINDOW),
                mux(&mismatch, code(status::MISMATCH), mux(&past_end, code(status::BAD_LEN), code(status::OK))),
            ),
        ),
    );
    let answer =
        m.wire_from("answer", 1, "a check's read data is there", act.expr().logic_and(is_acc.q.expr().logic_not()));
    m.next(if_else(
        &answer,
        vec![set(&out_valid.next, lit(1, 1)), set(&out_status.next, &verdict)],
        vec![if_then(port("m_chk_ready"), vec![set(&out_valid.next, lit(1, 0))])],
    ));
    m.assign(port("m_chk_valid"), &out_valid.q);
    m.assign(port("m_chk_status"), mux(&out_valid.q, &out_status.q, lit(STATUS_BITS, 0)));

    // ---- the accept's write-back ----
    let record = m.wire_from(
        "record",
        1,
        "an accept's read data is there, of a stream the connection has",
        act.expr().logic_and(&is_acc.q).logic_and(zext(k("stream"), 9).lt(lit(9, u64::from(p.streams)))),
    );
    let new_slot = m.wire_from("new_slot", sw, "the slot after the accept: grown, or the message's fields", {
        let grown = s("bytes") + zext(k("len"), 32);
        pack(&SLOT, |n| match n {
            "bytes" => mux(&live, grown.clone(), zext(k("len"), 32)),
            _ => mux(&live, s(n), k(n)),
        })
    });
    let not_rst = rst.expr().logic_not();
    m.mem_write(&msg_mem, record.expr().logic_and(not_rst.clone()), slot_of(&pkt.q), &new_slot);
    let slot_bit =
        m.wire_from("slot_bit", p.depth, "the accept's slot as a valid bit", lit(p.depth, 1) << msn_slot.expr());
    let first_word = cat(&[port("s_open_conn").expr(), lit(sb, 0)]);
    m.mem_write(
        &vld_mem,
        record.expr().logic_or(&open_take).logic_or(&sweeping.q).logic_and(not_rst),
        mux(&record, word_of(&pkt.q), mux(&open_take, first_word, &sweep.q)),
        mux(&record, vld.expr() | slot_bit.expr(), lit(p.depth, 0)),
    );

    // ---- the sweeps: every word after reset, an open's connection's ----
    let all_streams = lit(sb, u64::from(p.streams - 1));
    let last = m.wire_from(
        "sweep_last",
        1,
        "the word cleared now is the sweep's last",
        sweep.q.slice(sb - 1, 0).eq(all_streams).logic_and(
            sweep_all.q.expr().logic_not().logic_or(sweep.q.slice(qb - 1, sb).eq(lit(cb, u64::from(p.conns - 1)))),
        ),
    );
    m.next(if_else(
        &sweeping.q,
        vec![set(&sweep.next, sweep.q.expr() + lit(qb, 1)), if_then(&last, vec![set(&sweeping.next, lit(1, 0))])],
        // The open clears its first word now and the others next
        // (STREAMS >= 2, so there is always a next).
        vec![if_then(
            &open_take,
            vec![
                set(&sweeping.next, lit(1, 1)),
                set(&sweep_all.next, lit(1, 0)),
                set(&sweep.next, cat(&[port("s_open_conn").expr(), lit(sb, 1)])),
            ],
        )],
    ));
    // Interface rules: assumed on the inputs, asserted on the outputs.
    crate::formal::every_channel(&mut m, &rst);
    let d = Design {
        vld_mem: &vld_mem,
        msg_mem: &msg_mem,
        sweeping: &sweeping,
        sweep: &sweep,
        sweep_all: &sweep_all,
        open_take: &open_take,
        take: &take,
        stages: &stages,
        vld_words: &vld_words,
        slot_words: &slot_words,
        pkt: &pkt,
        pkt_slot: slot_of(&pkt.q),
        record: &record,
        answer: &answer,
        verdict: &verdict,
        out_valid: &out_valid,
        rst: &rst,
        open_conn: &port("s_open_conn"),
        status: &port("m_chk_status"),
    };
    table_properties(&mut m, p, &d, &|w: &Signal, n: &str| f(w, n));
    m
}

/// The parts of the design the properties follow.
struct Design<'a> {
    vld_mem: &'a Mem,
    msg_mem: &'a Mem,
    sweeping: &'a Reg,
    sweep: &'a Reg,
    sweep_all: &'a Reg,
    open_take: &'a Signal,
    take: &'a Signal,
    stages: &'a [Reg],
    vld_words: &'a [Signal],
    slot_words: &'a [Signal],
    pkt: &'a Reg,
    /// The operation's message slot, `{stream word, msn mod MSG_DEPTH}`.
    pkt_slot: Expr,
    record: &'a Signal,
    answer: &'a Signal,
    verdict: &'a Signal,
    out_valid: &'a Reg,
    rst: &'a Signal,
    open_conn: &'a Signal,
    status: &'a Signal,
}

/// The answer to a check is the reference's verdict on the message table
/// as the accepts so far have made it, for any sequence of accepts, checks,
/// opens and resets: one tracked slot (`f_slot`, any stream word and msn
/// slot) has a ghost of its message (`f_live`, `f_msg`), kept by the
/// table's rules (an accept of a stream the connection has takes the slot
/// with its fields and bytes, or grows the bytes of the live message of
/// its msn; the reset sweep and an open of its connection empty it); a
/// check of that slot must answer the model's `verdict` on the ghost,
/// stated on wider arithmetic. The invariants that make it inductive: once
/// swept, the stored valid bit is the ghost's and, while live, so is the
/// stored slot; a slot not yet swept is one the reset sweep has still to
/// reach; each read register of an operation in flight on the slot holds
/// the ghost (no operation changes the table while another is in flight).
fn table_properties(m: &mut Module, p: &MsgCheckParams, d: &Design, f: &dyn Fn(&Signal, &str) -> Expr) {
    let (cb, sb, db) = (p.conn_bits, p.stream_bits, p.depth.trailing_zeros());
    let (qb, sw) = (cb + sb, d.msg_mem.width());
    let soff = offsets(&SLOT);
    let sf = |w: &Signal, n: &str| -> Expr {
        let (o, wd) = soff[n];
        w.slice(o + wd - 1, o)
    };
    let slot = m.formal_anyconst("f_slot", qb + db, "the tracked message slot: {stream word, msn mod MSG_DEPTH}");
    let word = slot.slice(qb + db - 1, db);
    let bit = slot.slice(db - 1, 0);
    let live = m.formal_wire("f_live", 1, "ghost: the tracked slot holds a message");
    let msg = m.formal_wire("f_msg", sw, "ghost: its message, as stored");
    let known = m.formal_wire("f_known", 1, "ghost: the tracked slot's word has been swept since reset");
    let k = |n: &str| f(&d.pkt.q, n);
    let on = m.formal_wire("f_on", 1, "the operation in flight is on the tracked slot");
    m.formal_assign(&on, d.pkt_slot.clone().eq(&slot));
    // The accept's result by the model's rule: grow the live message of
    // this msn, else take the packet's fields with its bytes.
    let same = live.expr().logic_and(sf(&msg, "msn").eq(k("msn")));
    let len32 = zext(k("len"), 32);
    let accepted = pack(&SLOT, |n| match n {
        "bytes" => mux(same.clone(), sf(&msg, "bytes") + len32.clone(), len32.clone()),
        _ => mux(same.clone(), sf(&msg, n), k(n)),
    });
    let open_word = cat(&[d.open_conn.expr(), lit(sb, 0)]);
    m.formal_seq(vec![if_else(
        d.rst,
        vec![set(&known, lit(1, 0))],
        vec![if_else(
            d.record.expr().logic_and(&on),
            vec![set(&live, lit(1, 1)), set(&msg, accepted)],
            vec![if_then(
                d.sweeping
                    .q
                    .expr()
                    .logic_and(d.sweep.q.expr().eq(word.clone()))
                    .logic_or(d.open_take.expr().logic_and(open_word.eq(word.clone()))),
                vec![
                    set(&live, lit(1, 0)),
                    if_then(d.sweep_all.q.expr().logic_and(&d.sweeping.q), vec![set(&known, lit(1, 1))]),
                ],
            )],
        )],
    )]);
    let vld_stored = m.formal_mem_word(d.vld_mem, "f_vld_stored", word.clone());
    let msg_stored = m.formal_mem_word(d.msg_mem, "f_msg_stored", &slot);
    m.assert(
        "a_table_slot_stored",
        "once swept, the tracked slot's stored valid bit is the ghost's, and while live its stored message",
        implies(
            &known,
            vld_stored.expr().bit_at(bit.clone()).eq(&live).logic_and(implies(&live, msg_stored.expr().eq(&msg))),
        ),
    );
    m.assert(
        "a_table_unknown_unswept",
        "a slot not yet swept since reset is one the reset sweep has still to reach",
        implies(
            known.expr().logic_not(),
            d.sweeping.q.expr().logic_and(&d.sweep_all.q).logic_and(d.sweep.q.expr().le(word.clone())),
        ),
    );
    m.assert(
        "a_table_taken_swept",
        "no operation is taken before the tracked slot is swept",
        implies(d.take.expr(), known.expr()),
    );
    for (i, st) in d.stages.iter().enumerate() {
        let (v, w) = (&d.vld_words[i], &d.slot_words[i]);
        m.assert(
            &format!("a_table_stage{}_words", i + 1),
            "an operation in flight on the tracked slot holds its valid bit and, while live, its message",
            implies(
                st.q.expr().logic_and(&on),
                v.expr().bit_at(bit.clone()).eq(&live).logic_and(implies(&live, w.expr().eq(&msg))),
            ),
        );
    }
    // The model's `verdict` on the ghost, 64-bit sums.
    let code = |c: u8| lit(STATUS_BITS, u64::from(c));
    let w64 = |e: Expr| zext(e, 64);
    let bad_len = w64(k("len"))
        .gt(lit(64, u64::from(p.mtu)))
        .logic_or(w64(k("stream")).ge(lit(64, u64::from(p.streams))))
        .logic_or(w64(k("len")).gt(w64(k("msg_len"))))
        .logic_or(k("len").eq(lit(16, 0)).logic_and(k("msg_len").ne(lit(32, 0))));
    let window = (k("msn") - k("completed_msn")).ge(lit(24, u64::from(p.depth)));
    let imm_differs =
        sf(&msg, "imm_valid").ne(k("imm_valid")).logic_or(k("imm_valid").logic_and(sf(&msg, "imm").ne(k("imm"))));
    let kind_differs = sf(&msg, "send").ne(k("send")).logic_or(k("send").logic_and(sf(&msg, "rq_seq").ne(k("rq_seq"))));
    let mismatch = same.logic_and(
        kind_differs
            .logic_or(sf(&msg, "msg_len").ne(k("msg_len")))
            .logic_or(imm_differs)
            .logic_or((w64(sf(&msg, "bytes")) + w64(k("len"))).gt(w64(sf(&msg, "msg_len")))),
    );
    let past_end = k("send").logic_and((w64(k("msg_offset")) + w64(k("len"))).gt(w64(k("msg_len"))));
    let spec = mux(
        bad_len,
        code(status::BAD_LEN),
        mux(
            window,
            code(status::WINDOW),
            mux(mismatch, code(status::MISMATCH), mux(past_end, code(status::BAD_LEN), code(status::OK))),
        ),
    );
    m.assert(
        "a_table_verdict",
        "a check of the tracked slot answers the model's verdict on the slot as the accepts so far made it",
        implies(d.answer.expr().logic_and(&on), d.verdict.expr().eq(spec)),
    );
    let out_on = crate::formal::answer_held(m, "a_table_answer", d.answer, &on, d.verdict, &d.out_valid.q, d.status);
    m.cover("c_mismatch_tracked", "a check of the tracked slot answered MISMATCH (a live message it differs from)", {
        d.out_valid.q.expr().logic_and(&out_on).logic_and(d.status.expr().eq(code(status::MISMATCH)))
    });
}

/// How the properties of [`generate`]'s module are checked (see
/// [`crate::proof`]): its channels' handshake rules by k-induction
/// (`prove`), the message table's rules by k-induction with the tables as
/// SMT arrays (`prove_table`, leaning on `prove`'s rules), the covers
/// reached on the proof configuration's table
/// ([`crate::proof::COVER_CONNECTIONS`]): `small`'s clear sweep is longer
/// than a cover's depth.
pub fn formal_tasks(asserts: &[String]) -> Vec<crate::proof::Task> {
    use crate::proof::{cover_on_proof_config, prove_split_and_cover, COVER_CONNECTIONS};
    // The table rules read a slot of 512 (small) by a symbolic index: as
    // flip-flops the induction step did not finish in 10 minutes; as an
    // SMT array it is one select.
    let tasks = prove_split_and_cover(asserts, 4, 30, |l| l.starts_with("a_table_"));
    cover_on_proof_config(tasks, COVER_CONNECTIONS, 30)
}
