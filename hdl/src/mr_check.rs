//! `mr_check` RTL: the generator of the receive controller's part
//! [`mrnic_model::mr_check`], with the same ports (the model's list plus
//! `clk`) and the same cycle timing. The model's doc comment is the
//! specification.
//!
//! Structure: `mr_mem` (the copy of the MR table, `{valid, remote write,
//! key, base, len}` as in dma_write_engine, written by the tapped
//! handshake, or by the reset sweep when no tap writes), read at the check's
//! handshake; the request in registers beside the read; `READ_LATENCY`
//! stage bits; the verdict in the answer register.

use mrnic_model::dma_write_engine::{DmaWriteEngineParams, KEY_BITS, REGION_BITS};
use mrnic_model::mr_check::{self as model, status, MrCheckParams, ParamError, STATUS_BITS};
use mrnic_proto::Config;

use crate::expr::{cat, index_bits, lit, mux, zext, Signal};
use crate::formal::implies;
use crate::ir::{if_else, if_then, set, Mem, MemStyle, Module, Reg};
use crate::ports::{declare, read_stages};

/// The model's sizes and the table's RAM resource (dma_write_engine's
/// rule for the table this one copies).
pub struct Params {
    chk: MrCheckParams,
    style: MemStyle,
}

impl Params {
    pub fn from_config(cfg: &Config) -> Result<Params, ParamError> {
        let chk = MrCheckParams::from_config(cfg)?;
        let dma = DmaWriteEngineParams::from_config(cfg).map_err(|e| ParamError {
            field: e.field,
            value: e.value,
            why: e.why,
        })?;
        Ok(Params { chk, style: crate::dma_write_engine::mr_style(&dma) })
    }
}

crate::block_api!(mrnic_model::mr_check, Params, ParamError);

fn build(p: &Params) -> Module {
    let (n, l) = (p.chk.mr_entries, p.chk.read_latency);
    let ab = index_bits(n);
    let rb = REGION_BITS;
    let wb = 3 + KEY_BITS + 2 * rb;

    let mut m = Module::new(model::NAME);
    m.describe("a WRITE's placement checked against a copy of the MR table, before its bitmap bit is decided");
    let entries_p = m.param("MR_ENTRIES", u64::from(n), "MR table entries (power of 2)");
    let lat_p = m.param("READ_LATENCY", u64::from(l), "table read latency in cycles (1 or 2)");
    m.param_check(
        "mr_entries",
        entries_p.expr().ge(2u32).and(entries_p.expr().eq(crate::ParamExpr::Const(1) << entries_p.expr().clog2())),
        "MR_ENTRIES must be a power of 2, at least 2",
    );
    m.param_check("read_latency", lat_p.expr().ge(1u32).and(lat_p.expr().le(2u32)), "READ_LATENCY must be 1 or 2");
    let (clk, sig) = declare(&mut m, &model::ports(&p.chk));
    let port = |n: &str| sig[n].clone();
    let rst = port("rst");
    m.clock_domain(&clk, &rst);

    // ---- the table copy ----
    let mem = m.memory("mr", wb, &entries_p, p.style, "MR table copy {valid, receive, remote write, key, base, len}");
    let sweeping = m.reg("sweeping", 1, 1, "the reset sweep clears the table");
    let sweep = m.reg("sweep", ab, 0, "the slot the sweep clears next");
    let tap = m.wire_from(
        "tap_fire",
        1,
        "csr handed a table write to dma_write_engine",
        port("tap_mr_valid").expr().logic_and(port("tap_mr_ready")),
    );
    let tap_word = cat(&[
        port("tap_mr_entry_valid").expr(),
        port("tap_mr_recv").expr(),
        port("tap_mr_remote_write").expr(),
        port("tap_mr_key").expr(),
        port("tap_mr_base").expr(),
        port("tap_mr_len").expr(),
    ]);
    let sweep_we = sweeping.q.expr().logic_and(tap.expr().logic_not());
    m.mem_write(
        &mem,
        tap.expr().logic_or(sweep_we.clone()).logic_and(rst.expr().logic_not()),
        mux(&tap, port("tap_mr_key").slice(ab - 1, 0), &sweep.q),
        mux(&tap, tap_word.clone(), lit(wb, 0)),
    );
    m.next(if_then(
        sweep_we,
        vec![
            set(&sweep.next, sweep.q.expr() + lit(ab, 1)),
            if_then(sweep.q.expr().eq(lit(ab, u64::from(n - 1))), vec![set(&sweeping.next, lit(1, 0))]),
        ],
    ));

    // ---- one check at a time ----
    let stages: Vec<crate::Reg> =
        (1..=l).map(|k| m.reg(&format!("stage{k}"), 1, 0, "the check's table word is this many cycles on")).collect();
    let out_valid = m.reg("out_valid", 1, 0, "an answer waits on m_chk");
    let out_status = m.reg_no_reset("out_status", STATUS_BITS, "the answer");
    let busy = stages.iter().fold(out_valid.q.expr(), |a, s| a.logic_or(&s.q));
    let ready = m.wire_from(
        "chk_ready",
        1,
        "no sweep, no check in flight, no answer waiting",
        sweeping.q.expr().logic_or(busy).logic_not(),
    );
    m.assign(port("s_chk_ready"), &ready);
    let take = m.wire_from("take", 1, "a check is taken", port("s_chk_valid").expr().logic_and(&ready));
    let req: Vec<(String, crate::Reg)> = ["rkey", "addr", "len", "msg_len", "recv"]
        .iter()
        .map(|f| {
            let src = port(&format!("s_chk_{f}"));
            let r = m.reg_no_reset(&format!("req_{f}"), src.width(), "the check's request field");
            m.next(if_then(&take, vec![set(&r.next, &src)]));
            (f.to_string(), r)
        })
        .collect();
    let rq = |f: &str| req.iter().find(|(n, _)| n == f).map(|(_, r)| r.q.clone()).expect("request field");
    let words = read_stages(&mut m, &mem, "mr", &take, port("s_chk_rkey").slice(ab - 1, 0), l);
    let word = words[words.len() - 1].clone();
    m.next(set(&stages[0].next, &take));
    for k in 1..stages.len() {
        m.next(set(&stages[k].next, &stages[k - 1].q));
    }
    let act = &stages[stages.len() - 1].q;

    // ---- the verdict, in the reference's order ----
    let e_valid = m.wire_from("e_valid", 1, "table entry: in use", word.bit(wb - 1));
    let e_recv = m.wire_from("e_recv", 1, "table entry: receive buffers allowed", word.bit(wb - 2));
    let e_write = m.wire_from("e_write", 1, "table entry: remote write allowed", word.bit(wb - 3));
    let recv = rq("recv");
    let e_access = m.wire_from(
        "e_access",
        1,
        "the entry allows the check's kind: receives for a SEND's, remote writes for a WRITE's",
        mux(&recv, &e_recv, &e_write),
    );
    let e_key = m.wire_from("e_key", KEY_BITS, "table entry: key", word.slice(2 * rb + KEY_BITS - 1, 2 * rb));
    let e_base = m.wire_from("e_base", rb, "table entry: base", word.slice(2 * rb - 1, rb));
    let e_len = m.wire_from("e_len", rb, "table entry: length", word.slice(rb - 1, 0));
    let (addr, len) = (rq("addr"), rq("len"));
    let end65 = m.wire_from(
        "req_end",
        65,
        "addr + len on 65 bits; bit 64 set: the range passes 2^64 - 1",
        zext(&addr, 65) + zext(&len, 65),
    );
    let region_end =
        m.wire_from("region_end", 65, "base + region length on 65 bits", zext(&e_base, 65) + zext(&e_len, 65));
    let in_range = m.wire_from(
        "in_range",
        1,
        "[addr, addr + len) lies inside the region",
        end65.bit(64).logic_not().logic_and(addr.expr().ge(&e_base)).logic_and(end65.expr().le(&region_end)),
    );
    let code = |c: u8| lit(STATUS_BITS, u64::from(c));
    let verdict = m.wire_from(
        "verdict",
        STATUS_BITS,
        "bad key, no access, bounds, message too long, or OK",
        mux(
            e_valid.expr().logic_not().logic_or(e_key.expr().ne(rq("rkey"))),
            code(status::BAD_KEY),
            mux(
                e_access.expr().logic_not(),
                code(status::NO_ACCESS),
                mux(
                    in_range.expr().logic_not(),
                    code(status::BOUNDS),
                    // A SEND's message length was checked against its
                    // receive by recv_match, not against the region.
                    mux(
                        recv.expr().logic_not().logic_and(zext(rq("msg_len"), rb).gt(&e_len)),
                        code(status::TOO_LONG),
                        code(status::OK),
                    ),
                ),
            ),
        ),
    );
    m.next(if_else(
        act,
        vec![set(&out_valid.next, lit(1, 1)), set(&out_status.next, &verdict)],
        vec![if_then(port("m_chk_ready"), vec![set(&out_valid.next, lit(1, 0))])],
    ));
    m.assign(port("m_chk_valid"), &out_valid.q);
    m.assign(port("m_chk_status"), mux(&out_valid.q, &out_status.q, lit(STATUS_BITS, 0)));
    // Interface rules: assumed on the inputs, asserted on the outputs.
    crate::formal::every_channel(&mut m, &rst);
    let table = Table { mem: &mem, sweeping: &sweeping, sweep: &sweep, tap: &tap, tap_word: &tap_word };
    let check =
        Check { take: &take, req: &req, stages: &stages, words: &words, verdict: &verdict, out_valid: &out_valid };
    verdict_properties(&mut m, &sig, &table, &check);
    m
}

/// The table copy as the properties see it.
struct Table<'a> {
    mem: &'a Mem,
    sweeping: &'a Reg,
    sweep: &'a Reg,
    tap: &'a Signal,
    tap_word: &'a crate::Expr,
}

/// One check as the properties see it: its handshake, its stages, the
/// word in each read register, its verdict and the answer register.
struct Check<'a> {
    take: &'a Signal,
    /// The request's registers, by field.
    req: &'a [(String, Reg)],
    stages: &'a [Reg],
    words: &'a [Signal],
    verdict: &'a Signal,
    out_valid: &'a Reg,
}

/// The answer for a key is the reference's check of the latest
/// registration of that key's slot, for any sequence of registrations and
/// checks: the tracked slot `f_slot` (any) has a ghost copy of what was
/// last registered there (`f_entry`), kept from the tapped handshakes by
/// the rule of the table (a registration replaces the slot of its key's
/// low bits; the reset sweep empties every slot once); a check of that
/// slot records the ghost at its handshake (the read is before that
/// cycle's write, as the model's), and its verdict must be the reference's
/// rules (`Memory::check`, then the message-length rule) applied to it,
/// stated on wider arithmetic than the design's. The invariants that make
/// it inductive: the stored word is the ghost once swept, a slot not yet
/// known is one the sweep has still to reach, and each read register of a
/// check in flight holds the recorded word.
fn verdict_properties(m: &mut Module, sig: &std::collections::HashMap<String, Signal>, t: &Table, c: &Check) {
    let port = |n: &str| sig[n].clone();
    let (ab, wb) = (t.sweep.q.width(), t.mem.width());
    let rb = REGION_BITS;
    let rst = port("rst");
    m.assume(
        "a_env_no_tap_in_sweep",
        "no table write is tapped while the copy sweeps: dma_write_engine's own sweep, as long and started by the \
         same reset, holds s_mr_ready low meanwhile (a write tapped then would land and be swept away later)",
        t.tap.expr().logic_and(&t.sweeping.q).logic_not(),
    );
    let slot = m.formal_anyconst("f_slot", ab, "the tracked table slot");
    let entry = m.formal_wire("f_entry", wb, "ghost: what was last registered in the tracked slot (0: empty)");
    let known = m.formal_wire("f_known", 1, "ghost: the tracked slot has been swept since reset");
    let tap_slot = port("tap_mr_key").slice(ab - 1, 0);
    m.formal_seq(vec![if_else(
        &rst,
        vec![set(&known, lit(1, 0))],
        vec![if_else(
            t.tap.expr().logic_and(tap_slot.eq(&slot)),
            vec![set(&entry, t.tap_word.clone()), set(&known, lit(1, 1))],
            vec![if_then(
                t.sweeping.q.expr().logic_and(t.sweep.q.expr().eq(&slot)),
                vec![set(&entry, lit(wb, 0)), set(&known, lit(1, 1))],
            )],
        )],
    )]);
    let stored = m.formal_mem_word(t.mem, "f_stored", &slot);
    m.assert(
        "a_entry_stored",
        "once swept, the tracked slot's stored word is its last registration",
        implies(&known, stored.expr().eq(&entry)),
    );
    m.assert(
        "a_unknown_unswept",
        "a slot not yet swept since reset is one the sweep has still to reach",
        implies(known.expr().logic_not(), t.sweeping.q.expr().logic_and(t.sweep.q.expr().le(&slot))),
    );
    // The check of the tracked slot: the ghost word at its handshake.
    let on = m.formal_wire("f_chk_on", 1, "the check in flight reads the tracked slot");
    let seen = m.formal_wire("f_chk_entry", wb, "the tracked slot's registration when the check read it");
    let chk_slot = port("s_chk_rkey").slice(ab - 1, 0);
    m.formal_seq(vec![if_then(c.take, vec![set(&on, chk_slot.eq(&slot)), set(&seen, &entry)])]);
    for (k, (st, w)) in c.stages.iter().zip(c.words).enumerate() {
        m.assert(
            &format!("a_stage{}_word", k + 1),
            "a check of the tracked slot in flight holds the word recorded at its handshake",
            implies(st.q.expr().logic_and(&on), w.expr().eq(&seen)),
        );
    }
    // The reference's rules on the recorded word, on 66 bits.
    let f = |hi: u32, lo: u32| seen.slice(hi, lo);
    let (valid, e_recv, e_write) = (seen.bit(wb - 1), seen.bit(wb - 2), seen.bit(wb - 3));
    let (key, base, rlen) = (f(2 * rb + KEY_BITS - 1, 2 * rb), f(2 * rb - 1, rb), f(rb - 1, 0));
    let req = |n: &str| c.req.iter().find(|(f, _)| f == n).map(|(_, r)| r.q.clone()).expect("request field");
    let (addr, len, recv) = (req("addr"), req("len"), req("recv"));
    let end = m.formal_wire("f_req_end", 66, "addr + len of the check, 66 bits");
    m.formal_assign(&end, zext(&addr, 66) + zext(&len, 66));
    let region_end = zext(base.clone(), 66) + zext(rlen.clone(), 66);
    let fits = end.slice(65, 64).eq(lit(2, 0)).logic_and(addr.expr().ge(&base)).logic_and(end.expr().le(region_end));
    let code = |v: u8| lit(STATUS_BITS, u64::from(v));
    let spec = mux(
        valid.logic_not().logic_or(key.ne(req("rkey"))),
        code(status::BAD_KEY),
        mux(
            mux(&recv, e_recv, e_write).logic_not(),
            code(status::NO_ACCESS),
            mux(
                fits.logic_not(),
                code(status::BOUNDS),
                mux(
                    recv.expr().logic_not().logic_and(zext(req("msg_len"), 66).gt(zext(rlen, 66))),
                    code(status::TOO_LONG),
                    code(status::OK),
                ),
            ),
        ),
    );
    let act = &c.stages[c.stages.len() - 1].q;
    m.assert(
        "a_verdict_is_reference",
        "the verdict of a check of the tracked slot is the reference's check of that slot's registration when the \
         check read it: OK only for a placement inside a live region of its key with the access it needs",
        implies(act.expr().logic_and(&on), c.verdict.expr().eq(spec)),
    );
    let status_port = port("m_chk_status");
    let out_on =
        crate::formal::answer_held(m, "a_answer_is_verdict", act, &on, c.verdict, &c.out_valid.q, &status_port);
    m.cover("c_ok_tracked", "a placement on the tracked slot answered OK", {
        let ok = port("m_chk_status").expr().eq(code(status::OK));
        c.out_valid.q.expr().logic_and(&out_on).logic_and(ok)
    });
}

/// How the properties of [`generate`]'s module are checked: a glue
/// block's, [`crate::proof::handshake_tasks`].
pub use crate::proof::handshake_tasks as formal_tasks;
