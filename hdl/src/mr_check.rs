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

use crate::expr::{cat, index_bits, lit, mux, zext};
use crate::ir::{if_else, if_then, set, MemStyle, Module};
use crate::ports::{declare, read_latency};

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
        mux(&tap, tap_word, lit(wb, 0)),
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
    let word = read_latency(&mut m, &mem, "mr", &take, port("s_chk_rkey").slice(ab - 1, 0), l);
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
    m
}

/// How the properties of [`generate`]'s module are checked: a glue
/// block's, [`crate::proof::handshake_tasks`].
pub use crate::proof::handshake_tasks as formal_tasks;
