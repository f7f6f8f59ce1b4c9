//! `recv_match` RTL: the generator of the cycle model
//! [`mrnic_model::recv_match`], with the same ports (the model's list plus
//! `clk`) and the same cycle timing; the model's doc comment is the
//! specification (priority arbitration, latency `2L + 1`, one request per
//! cycle, forwarding of the pointer word, output FIFOs, clear sweep).
//!
//! Structure: the arbiter picks `s_consume` > `s_lookup` > `s_post` (the
//! `*_ready` outputs depend combinationally on the higher channels' valid);
//! stage A reads the pointer memory (`rq_ptr_mem`: next_post, next_consume
//! and a valid bit per ring slot, per (conn, stream)) and updates it with
//! forwarding; at its end it writes (post) or reads (lookup, consume) the
//! slot memory (`rq_slot_mem`: addr, len, wr_id per ring slot); stage B
//! carries the decision until the slot data arrives and pushes the answer.

use std::collections::HashMap;

use mrnic_model::block::Dir as ModelDir;
use mrnic_model::recv_match::{self as model, ParamError, RecvMatchParams};
use mrnic_proto::Config;

use crate::expr::{cat, lit, mux, zext, Expr, Signal};
use crate::ir::{if_then, set, MemStyle, Module};
use crate::param::ParamExpr;
use crate::sack_gen::fifo_in_flight;
use crate::{CheckErrors, Header};

/// Why a block could not be generated for a config.
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

/// The `recv_match` module for `cfg`, design-rule checked.
pub fn generate(cfg: &Config) -> Result<Module, GenError> {
    let p = RecvMatchParams::from_config(cfg)?;
    let m = build(&p);
    m.check()?;
    Ok(m)
}

/// The module printed as Verilog, with [`header`].
pub fn verilog(cfg: &Config) -> Result<String, GenError> {
    Ok(generate(cfg)?.to_verilog(&header(cfg))?)
}

/// An output channel: name, push, entry, fields (name, width), first lowest.
type OutChan = (&'static str, Expr, Expr, Vec<(&'static str, u32)>);

fn build(p: &RecvMatchParams) -> Module {
    let l = p.read_latency;
    let d = p.depth;
    let sb = p.slot_bits;
    let qb = Config::index_bits(p.queues());
    let pw = 48 + d;
    let slw = 192;
    let depth = p.fifo_depth();
    let fb = depth.trailing_zeros();

    let mut m = Module::new(model::NAME);
    m.describe(
        "posted receives per (connection, stream) by rq_seq: post, SEND lookup and consume, one request per cycle",
    );
    let conns_p = m.param("CONNS", u64::from(p.conns), "connections (power of 2)");
    let streams_p = m.param("STREAMS", u64::from(p.streams), "streams per connection (power of 2)");
    let depth_p =
        m.param("RQ_DEPTH", u64::from(d), "posted receives per (connection, stream): ring slots (power of 2)");
    let lat_p = m.param("READ_LATENCY", u64::from(l), "memory read latency in cycles (1 or 2)");
    let queues_p = m.localparam("QUEUES", conns_p.expr() * streams_p.expr(), "receive rings: CONNS * STREAMS");
    let slots_p = m.localparam("SLOTS", queues_p.expr() * depth_p.expr(), "ring slots: QUEUES * RQ_DEPTH");
    let fifo_p =
        m.localparam("FIFO_DEPTH", u64::from(depth), "output FIFO entries: power of 2 >= 2 * READ_LATENCY + 2");
    m.param_check(
        "sizes",
        conns_p
            .expr()
            .eq(ParamExpr::Const(1) << conns_p.expr().clog2())
            .and(streams_p.expr().eq(ParamExpr::Const(1) << streams_p.expr().clog2()))
            .and(depth_p.expr().ge(2u32))
            .and(depth_p.expr().eq(ParamExpr::Const(1) << depth_p.expr().clog2())),
        "CONNS, STREAMS and RQ_DEPTH must be powers of 2, RQ_DEPTH at least 2",
    );
    m.param_check(
        "read_latency",
        lat_p.expr().ge(1u32).and(lat_p.expr().le(2u32)).and(fifo_p.expr().ge(lat_p.expr() * 2u32 + 2u32)),
        "READ_LATENCY must be 1 or 2, and FIFO_DEPTH at least 2 * READ_LATENCY + 2",
    );

    let defs = model::ports(p);
    let mut sig: HashMap<String, Signal> = HashMap::new();
    let mut group = "Clock and reset";
    m.group(group);
    let clk = m.input("clk", 1, "clock, rising edge");
    for pd in &defs {
        if pd.group != group {
            group = pd.group;
            m.group(group);
        }
        let s = match pd.dir {
            ModelDir::In => m.input(&pd.name, pd.width, &pd.comment),
            ModelDir::Out => m.output(&pd.name, pd.width, &pd.comment),
        };
        sig.insert(pd.name.clone(), s);
    }
    let port = |n: &str| sig[n].clone();
    let rst = port("rst");
    m.clock_domain(&clk, &rst);
    let w_ = |m: &mut Module, n: &str, w: u32, c: &str, e: Expr| -> Signal {
        let s = m.wire(n, w, c);
        m.assign(&s, e);
        s
    };

    // ---- arbitration ----
    let init = m.reg("init", 1, 1, "clear sweep running: one pointer word zeroed per cycle");
    let init_addr = m.reg("init_addr", qb, 0, "pointer word the sweep zeroes this cycle");
    let room = m.wire("room", 1, "room in every FIFO for every request in flight plus one");
    let (cv, lv, pv) = (port("s_consume_valid"), port("s_lookup_valid"), port("s_post_valid"));
    m.assign(port("s_consume_ready"), &room);
    m.assign(port("s_lookup_ready"), room.expr().logic_and(cv.expr().logic_not()));
    m.assign(port("s_post_ready"), room.expr().logic_and(cv.expr().logic_not()).logic_and(lv.expr().logic_not()));
    let take_c = w_(&mut m, "take_consume", 1, "a consume is accepted", cv.expr().logic_and(&room));
    let take_l = w_(
        &mut m,
        "take_lookup",
        1,
        "a lookup is accepted",
        lv.expr().logic_and(&room).logic_and(cv.expr().logic_not()),
    );
    let take_p = w_(
        &mut m,
        "take_post",
        1,
        "a post is accepted",
        pv.expr().logic_and(&room).logic_and(cv.expr().logic_not()).logic_and(lv.expr().logic_not()),
    );
    let fire = w_(&mut m, "req_fire", 1, "a request is accepted", take_c.expr().logic_or(&take_l).logic_or(&take_p));
    let op_in = w_(
        &mut m,
        "req_op",
        2,
        "0 post, 1 lookup, 2 consume",
        mux(&take_c, lit(2, 2), mux(&take_l, lit(2, 1), lit(2, 0))),
    );
    let qsel = |c: &str| -> Expr { cat(&[port(&format!("{c}_conn")).expr(), port(&format!("{c}_stream")).expr()]) };
    let q_in = w_(
        &mut m,
        "req_queue",
        qb,
        "its (conn, stream)",
        mux(&take_c, qsel("s_consume"), mux(&take_l, qsel("s_lookup"), qsel("s_post"))),
    );
    let rq_in = mux(&take_c, port("s_consume_rq_seq"), port("s_lookup_rq_seq"));
    // Request vector: {lkey, imm, msg_len, payload_len, msg_offset, rq_seq, wr_id, len, addr, queue, op}.
    let req_w = 2 + qb + 64 + 32 + 64 + 24 + 32 + 16 + 32 + 1 + 32;
    let req_in = cat(&[
        port("s_post_lkey").expr(),
        port("s_consume_imm").expr(),
        port("s_lookup_msg_len").expr(),
        port("s_lookup_payload_len").expr(),
        port("s_lookup_msg_offset").expr(),
        rq_in,
        port("s_post_wr_id").expr(),
        port("s_post_len").expr(),
        port("s_post_addr").expr(),
        q_in.expr(),
        op_in.expr(),
    ]);
    let a_stages: Vec<(crate::Reg, crate::Reg)> = (1..=l)
        .map(|j| {
            (
                m.reg(&format!("a{j}_valid"), 1, 0, &format!("a request {j} cycle(s) past its handshake")),
                m.reg_no_reset(&format!("a{j}_req"), req_w, "the request"),
            )
        })
        .collect();
    m.next(set(&a_stages[0].0.next, &fire));
    m.next(set(&a_stages[0].1.next, req_in));
    for j in 1..a_stages.len() {
        m.next(set(&a_stages[j].0.next, &a_stages[j - 1].0.q));
        m.next(set(&a_stages[j].1.next, &a_stages[j - 1].1.q));
    }
    let (av, ar) = (a_stages[l as usize - 1].0.q.clone(), a_stages[l as usize - 1].1.q.clone());
    let mut o = 0;
    let mut field = |w: u32| -> Expr {
        let e = ar.slice(o + w - 1, o);
        o += w;
        e
    };
    let a_op = field(2);
    let a_q = w_(&mut m, "a_queue", qb, "the update stage's (conn, stream)", field(qb));
    let a_addr = field(64);
    let a_len = field(32);
    let a_wr_id = field(64);
    let a_rq = field(24);
    let a_off = field(32);
    let a_plen = field(16);
    let a_msg_len = field(32);
    let a_imm = field(1);
    let a_lkey = field(32);

    // ---- pointer memory ----
    let pmem = m.memory(
        "rq_ptr",
        pw,
        &queues_p,
        MemStyle::Block,
        "per (conn, stream): {ring valid bits, next_consume, next_post}; written by the sweep or the update stage",
    );
    let new_ptr = m.wire("upd_ptr", pw, "the pointer word after the update");
    m.mem_write(
        &pmem,
        init.q.expr().logic_or(&av),
        mux(&init.q, &init_addr.q, &a_q),
        mux(&init.q, lit(pw, 0), &new_ptr),
    );
    let prd = m.mem_read(&pmem, "rq_ptr_rd", &fire, &q_in);
    let p_mem = if l == 2 {
        let pipe = m.reg_no_reset("rq_ptr_pipe", pw, "block RAM output register (READ_LATENCY = 2)");
        m.next(set(&pipe.next, &prd));
        pipe.q
    } else {
        prd
    };
    m.next(if_then(
        &init.q,
        vec![
            set(&init_addr.next, init_addr.q.expr() + lit(qb, 1)),
            if_then(init_addr.q.expr().eq(lit(qb, u64::from(p.queues() - 1))), vec![set(&init.next, lit(1, 0))]),
        ],
    ));
    let fwds: Vec<(crate::Reg, crate::Reg, crate::Reg)> = (0..l)
        .map(|j| {
            (
                m.reg(&format!("fw{j}_valid"), 1, 0, &format!("pointer write {} cycle(s) ago, for forwarding", j + 1)),
                m.reg_no_reset(&format!("fw{j}_queue"), qb, "its (conn, stream)"),
                m.reg_no_reset(&format!("fw{j}_ptr"), pw, "the word written"),
            )
        })
        .collect();
    let mut chosen: Expr = p_mem.expr();
    for (j, f) in fwds.iter().enumerate().rev() {
        let hit = w_(
            &mut m,
            &format!("fw{j}_hit"),
            1,
            "this forwarding register holds the update stage's queue",
            f.0.q.expr().logic_and(f.1.q.expr().eq(&a_q)),
        );
        chosen = mux(&hit, &f.2.q, chosen);
    }
    let cur = w_(&mut m, "cur_ptr", pw, "the pointer word before the update", chosen);
    m.next(set(&fwds[0].0.next, &av));
    m.next(set(&fwds[0].1.next, &a_q));
    m.next(set(&fwds[0].2.next, &new_ptr));
    for j in 1..fwds.len() {
        m.next(set(&fwds[j].0.next, &fwds[j - 1].0.q));
        m.next(set(&fwds[j].1.next, &fwds[j - 1].1.q));
        m.next(set(&fwds[j].2.next, &fwds[j - 1].2.q));
    }

    // ---- update ----
    let next_post = w_(&mut m, "cur_next_post", 24, "next rq_seq to post", cur.slice(23, 0));
    let next_cons = w_(&mut m, "cur_next_consume", 24, "next rq_seq a WRITE_IMM consumes", cur.slice(47, 24));
    let valid = w_(&mut m, "cur_valid", d, "bit i: ring slot i holds a receive", cur.slice(47 + d, 48));
    let is_post =
        w_(&mut m, "is_post", 1, "the update stage holds a post", av.expr().logic_and(a_op.clone().eq(lit(2, 0))));
    let is_lookup =
        w_(&mut m, "is_lookup", 1, "the update stage holds a lookup", av.expr().logic_and(a_op.clone().eq(lit(2, 1))));
    let is_cons =
        w_(&mut m, "is_consume", 1, "the update stage holds a consume", av.expr().logic_and(a_op.eq(lit(2, 2))));
    let seq = w_(
        &mut m,
        "seq",
        24,
        "the rq_seq concerned: next_post, the lookup's, or the consume's (WRITE_IMM: next_consume)",
        mux(&is_post, &next_post, mux(is_cons.expr().logic_and(a_imm), &next_cons, a_rq)),
    );
    let slot = w_(&mut m, "slot", sb, "its ring slot", seq.slice(sb - 1, 0));
    let age = w_(&mut m, "age", 24, "next_post - seq", next_post.expr() - &seq);
    let posted = w_(
        &mut m,
        "posted",
        1,
        "a receive is posted at seq",
        age.expr().ne(lit(24, 0)).logic_and(age.expr().le(lit(24, u64::from(d)))).logic_and(valid.expr().bit_at(&slot)),
    );
    let post_ok = w_(
        &mut m,
        "post_ok",
        1,
        "the post's slot is free",
        is_post.expr().logic_and(valid.expr().bit_at(&slot).logic_not()),
    );
    let cons_ok = w_(&mut m, "cons_ok", 1, "the consume finds its receive", is_cons.expr().logic_and(&posted));
    let onehot = w_(&mut m, "slot_bit", d, "the slot as a one-hot mask", lit(d, 1) << slot.expr());
    let valid1 = mux(&post_ok, valid.expr() | &onehot, mux(&cons_ok, valid.expr() & !onehot.expr(), &valid));
    let np1 = mux(&post_ok, next_post.expr() + lit(24, 1), &next_post);
    let nc1 = mux(&cons_ok, seq.expr() + lit(24, 1), &next_cons);
    m.assign(&new_ptr, cat(&[valid1, nc1, np1]));
    let bad = w_(
        &mut m,
        "bad_len",
        1,
        "msg_offset + payload_len > msg_len",
        (zext(a_off.clone(), 33) + zext(a_plen, 33)).gt(zext(a_msg_len.clone(), 33)),
    );
    let pre = w_(
        &mut m,
        "pre_code",
        3,
        "the lookup's code before the length check: BAD_HDR, RNR or 0",
        mux(&bad, lit(3, 4), mux(&posted, lit(3, 0), lit(3, 1))),
    );

    // ---- slot memory ----
    let smem = m.memory(
        "rq_slot",
        slw,
        &slots_p,
        MemStyle::Block,
        "per ring slot: {lkey, wr_id, len, addr} of the posted receive",
    );
    let saddr = w_(&mut m, "slot_addr", qb + sb, "{conn, stream, slot}", cat(&[a_q.expr(), slot.expr()]));
    m.mem_write(&smem, &post_ok, &saddr, cat(&[a_lkey, a_wr_id, a_len, a_addr]));
    let srd = m.mem_read(&smem, "rq_slot_rd", is_lookup.expr().logic_or(&is_cons), &saddr);
    let s_data = if l == 2 {
        let pipe = m.reg_no_reset("rq_slot_pipe", slw, "block RAM output register (READ_LATENCY = 2)");
        m.next(set(&pipe.next, &srd));
        pipe.q
    } else {
        srd
    };

    // ---- stage B ----
    // {msg_len, msg_offset, seq, ok, pre_code, op}
    let bw = 2 + 3 + 1 + 24 + 32 + 32;
    let b_in = cat(&[
        a_msg_len,
        a_off,
        seq.expr(),
        post_ok.expr().logic_or(&cons_ok),
        pre.expr(),
        mux(&is_post, lit(2, 0), mux(&is_lookup, lit(2, 1), lit(2, 2))),
    ]);
    let b_stages: Vec<(crate::Reg, crate::Reg)> = (1..=l)
        .map(|j| {
            (
                m.reg(&format!("b{j}_valid"), 1, 0, &format!("a decision {j} cycle(s) past the update")),
                m.reg_no_reset(&format!("b{j}_dec"), bw, "{msg_len, msg_offset, seq, ok, pre_code, op}"),
            )
        })
        .collect();
    m.next(set(&b_stages[0].0.next, &av));
    m.next(set(&b_stages[0].1.next, b_in));
    for j in 1..b_stages.len() {
        m.next(set(&b_stages[j].0.next, &b_stages[j - 1].0.q));
        m.next(set(&b_stages[j].1.next, &b_stages[j - 1].1.q));
    }
    let (bv, br) = (b_stages[l as usize - 1].0.q.clone(), b_stages[l as usize - 1].1.q.clone());
    let b_op = w_(&mut m, "b_op", 2, "the decision's request kind", br.slice(1, 0));
    let b_pre = br.slice(4, 2);
    let b_ok = w_(&mut m, "b_ok", 1, "post or consume succeeded", br.slice(5, 5));
    let b_seq = br.slice(29, 6);
    let b_off = br.slice(61, 30);
    let b_msg_len = br.slice(93, 62);
    let s_addr = s_data.slice(63, 0);
    let s_len = w_(&mut m, "slot_len", 32, "the receive's length", s_data.slice(95, 64));
    let s_wr_id = s_data.slice(159, 96);
    let s_lkey = s_data.slice(191, 160);
    let code = w_(
        &mut m,
        "match_code",
        3,
        "the lookup's code: ACCESS when the message is longer than the receive",
        mux(b_pre.clone().ne(lit(3, 0)), b_pre, mux(b_msg_len.gt(&s_len), lit(3, 2), lit(3, 0))),
    );
    let hit = code.expr().eq(lit(3, 0));
    let push_p = bv.expr().logic_and(b_op.expr().eq(lit(2, 0)));
    let push_m = bv.expr().logic_and(b_op.expr().eq(lit(2, 1)));
    let push_c = bv.expr().logic_and(b_op.expr().eq(lit(2, 2)));
    let entries: Vec<OutChan> = vec![
        ("post", push_p, cat(&[b_seq.clone(), b_ok.expr()]), vec![("ok", 1), ("rq_seq", 24)]),
        (
            "match",
            push_m,
            cat(&[mux(&hit, s_lkey, lit(32, 0)), mux(&hit, s_addr + zext(b_off, 64), lit(64, 0)), code.expr()]),
            vec![("code", 3), ("addr", 64), ("lkey", 32)],
        ),
        (
            "cons",
            push_c,
            cat(&[mux(&b_ok, &s_len, lit(32, 0)), mux(&b_ok, s_wr_id, lit(64, 0)), b_seq, b_ok.expr()]),
            vec![("ok", 1), ("rq_seq", 24), ("wr_id", 64), ("len", 32)],
        ),
    ];
    let inflight_sum =
        a_stages.iter().chain(b_stages.iter()).map(|s| zext(&s.0.q, fb + 1)).reduce(|a, b| a + b).expect("stages");
    let inflight = w_(&mut m, "inflight", fb + 1, "requests in the pipeline", inflight_sum);
    let mut counts = Vec::new();
    for (ch, push, data, fields) in entries {
        let width: u32 = fields.iter().map(|f| f.1).sum();
        let valid_o = port(&format!("m_{ch}_valid"));
        let pop = w_(
            &mut m,
            &format!("{ch}_pop"),
            1,
            "output handshake",
            valid_o.expr().logic_and(port(&format!("m_{ch}_ready"))),
        );
        let data = w_(&mut m, &format!("{ch}_push_data"), width, "the answer for this FIFO", data);
        let (v, shown, count) = fifo_in_flight(&mut m, ch, depth, &inflight.expr(), &push, &pop, &data.expr(), width);
        m.assign(&valid_o, &v);
        let mut o = 0;
        for (n, w) in fields {
            m.assign(port(&format!("m_{ch}_{n}")), shown.slice(o + w - 1, o));
            o += w;
        }
        counts.push(count);
    }
    let mut r = init.q.expr().logic_not();
    for c in &counts {
        r = r.logic_and((c.expr() + &inflight).lt(lit(fb + 1, u64::from(depth))));
    }
    m.assign(&room, r);
    // Properties. The pointer table: no lost update, the sweep alone.
    let busy = a_stages
        .iter()
        .chain(b_stages.iter())
        .map(|s| s.0.q.expr())
        .chain(fwds.iter().map(|f| f.0.q.expr()))
        .reduce(|a, b| a.logic_or(b))
        .expect("a stage");
    crate::formal::table_rmw(&mut m, "rq_ptr", &pmem, &av, a_q.expr(), cur.expr(), &init.q, busy);
    // A receive is consumed at most once: a consume succeeds only on a
    // slot whose valid bit is set and clears it, and only a post (into a
    // free slot) sets it. With the rule above every update sees the
    // stored bits, so a second consume of one receive finds it gone.
    let f_valid1 = m.formal_wire("f_new_valid", d, "ring valid bits after the update");
    m.formal_assign(&f_valid1, new_ptr.slice(47 + d, 48));
    m.assert(
        "a_consume_once",
        "a consume succeeds only on a posted receive, and clears it",
        crate::formal::implies(
            &cons_ok,
            valid.expr().bit_at(&slot).logic_and(f_valid1.expr().bit_at(&slot).logic_not()),
        ),
    );
    m.assert(
        "a_post_free_slot",
        "a post fills only a free slot, and marks it",
        crate::formal::implies(
            &post_ok,
            valid.expr().bit_at(&slot).logic_not().logic_and(f_valid1.expr().bit_at(&slot)),
        ),
    );
    m.assert(
        "a_valid_bits_only_by_ops",
        "no ring valid bit changes except the slot a successful post or consume names",
        crate::formal::implies(
            &av,
            (f_valid1.expr() ^ &valid).eq(mux(post_ok.expr().logic_or(&cons_ok), &onehot, lit(d, 0))),
        ),
    );
    let fire = |c: &str| port(&format!("m_{c}_valid")).expr().logic_and(port(&format!("m_{c}_ready")));
    m.cover("c_post_ok", "a post is answered ok", fire("post").logic_and(port("m_post_ok")));
    m.cover(
        "c_match_hit",
        "a lookup finds its receive",
        fire("match").logic_and(port("m_match_code").expr().eq(lit(3, 0))),
    );
    m.cover("c_consume_ok", "a consume is answered ok", fire("cons").logic_and(port("m_cons_ok")));
    m.cover(
        "c_consume_miss",
        "a consume finds no receive at its slot (the rule above then changes no bit)",
        is_cons.expr().logic_and(cons_ok.expr().logic_not()),
    );
    let f_seen = m.formal_wire("f_seen_req", 1, "a request has been answered");
    m.formal_seq(vec![crate::ir::if_else(
        &rst,
        vec![set(&f_seen, lit(1, 0))],
        vec![if_then(&bv, vec![set(&f_seen, lit(1, 1))])],
    )]);
    let mut idle = f_seen.expr().logic_and(inflight.expr().eq(lit(fb + 1, 0)));
    for c in &counts {
        idle = idle.logic_and(c.expr().eq(lit(fb + 1, 0)));
    }
    m.cover("c_drained", "after requests, the pipeline and every FIFO drain empty", idle);
    // Interface rules: assumed on the inputs, asserted on the outputs.
    crate::formal::every_channel(&mut m, &rst);
    m
}

/// How the properties of [`generate`]'s module are checked (see
/// [`crate::proof`]): the covers on the proof configuration's table
/// ([`crate::proof::COVER_CONNECTIONS`]), whose clear sweep takes 8 cycles
/// instead of 64.
pub fn formal_tasks(_asserts: &[String]) -> Vec<crate::proof::Task> {
    use crate::proof::{cover_on_proof_config, prove_and_cover, COVER_CONNECTIONS};
    cover_on_proof_config(prove_and_cover(2, 76, true), COVER_CONNECTIONS, 24)
}
