//! `conn_search` RTL: the generator of the receive controller's part
//! [`mrnic_model::conn_search`], with the same ports (the model's list plus
//! `clk`) and the same cycle timing. The model's doc comment is the
//! specification.
//!
//! Structure: a state register (IDLE, SWEEP, OUT), the NACK being
//! resolved, the next slot to read, the reads not yet answered, the match,
//! and the counter pulse with the pulses still owed (a drop and a failed
//! sweep in one cycle are two counts).

use mrnic_model::conn_search::{self as model, ConnSearchParams};
use mrnic_proto::Config;

use crate::expr::{lit, mux, zext};
use crate::ir::{case, if_else, if_then, set, Module};
use crate::ports::{declare, ConfigError};

/// The model's sizes, refused in the shape `gen::BLOCKS` reports.
pub struct Params(ConnSearchParams);

impl Params {
    pub fn from_config(cfg: &Config) -> Result<Params, ConfigError> {
        ConnSearchParams::from_config(cfg).map(Params).map_err(|e| ConfigError {
            field: e.field,
            value: e.value,
            why: e.why,
        })
    }
}

crate::block_api!(mrnic_model::conn_search, Params, ConfigError);

const IDLE: u64 = 0;
const SWEEP: u64 = 1;
const OUT: u64 = 2;
/// Bits of the owed-pulse count: at most two are owed at once (a drop and
/// a failed sweep in one cycle, while one pulse leaves per cycle); room
/// for seven.
const OWED_BITS: u32 = 3;

fn build(p: &Params) -> Module {
    let p = &p.0;
    let conns = p.conns();
    let cb = p.table.conn_bits;
    let nb = cb + 1;

    let mut m = Module::new(model::NAME);
    m.describe("a NO_CONN NACK's connection, found by a sweep over conn_table's read port");
    let conns_p = m.param("CONNS", u64::from(conns), "connection slots (power of 2)");
    m.param_check(
        "conns",
        conns_p.expr().ge(2u32).and(conns_p.expr().eq(crate::ParamExpr::Const(1) << conns_p.expr().clog2())),
        "CONNS must be a power of 2, at least 2",
    );
    let (clk, sig) = declare(&mut m, &model::ports(p));
    let port = |n: &str| sig[n].clone();
    let rst = port("rst");
    m.clock_domain(&clk, &rst);

    let state = m.reg("state", 2, IDLE, "0 IDLE, 1 SWEEP, 2 OUT");
    let next = m.reg_no_reset("next", nb, "the next slot to read (CONNS: every read issued)");
    let pending = m.reg_no_reset("pending", nb, "reads issued and not yet answered");
    let found = m.reg_no_reset("found", 1, "a slot matched");
    let held = m.reg("held", 1, 0, "the read of `next` was offered and not taken: it stays offered");
    let found_conn = m.reg_no_reset("found_conn", cb, "the first slot that matched");
    let stat = m.reg("stat", 1, 0, "stat_ack_no_conn");
    let owed = m.reg("owed", OWED_BITS, 0, "counter pulses still owed");
    let nc: Vec<(&str, crate::Reg)> = ["dst_conn", "src_addr", "path_id", "code", "psn"]
        .into_iter()
        .map(|f| (f, m.reg_no_reset(&format!("nc_{f}"), port(&format!("s_nc_{f}")).width(), "the NACK resolved")))
        .collect();
    let ncq = |f: &str| nc.iter().find(|(n, _)| *n == f).map(|(_, r)| r.q.clone()).expect("NACK field");
    let is = |s: u64| state.q.expr().eq(lit(2, s));

    m.assign(port("s_nc_ready"), lit(1, 1));
    m.assign(port("s_rdr_ready"), lit(1, 1));
    let reading = m.wire_from(
        "reading",
        1,
        "a read is offered: sweeping, slots left, and no match yet or the offer not taken yet",
        is(SWEEP).logic_and(found.q.expr().logic_not().logic_or(&held.q)).logic_and(next.q.bit(cb).logic_not()),
    );
    m.assign(port("m_rd_valid"), &reading);
    m.assign(port("m_rd_conn"), mux(&reading, next.q.slice(cb - 1, 0), lit(cb, 0)));
    let issued = m.wire_from("issued", 1, "a read is taken", reading.expr().logic_and(port("m_rd_ready")));
    let held_new = m.wire_from(
        "held_new",
        1,
        "a read is offered and not taken",
        reading.expr().logic_and(port("m_rd_ready").expr().logic_not()),
    );
    let answer = port("s_rdr_valid");
    let hit = m.wire_from(
        "hit",
        1,
        "the answer is an open connection to the NACK's sender with its id",
        answer
            .expr()
            .logic_and(port("s_rdr_entry_valid"))
            .logic_and(port("s_rdr_remote_id").expr().eq(ncq("dst_conn")))
            .logic_and(port("s_rdr_remote_addr").expr().eq(ncq("src_addr"))),
    );
    let pending_new = m.wire_from(
        "pending_new",
        nb,
        "reads in flight after this cycle",
        pending.q.expr() + zext(&issued, nb) - zext(&answer, nb),
    );
    let next_new = m.wire_from("next_new", nb, "the next slot after this cycle", next.q.expr() + zext(&issued, nb));
    let found_new = m.wire_from("found_new", 1, "a slot matched, this cycle or before", found.q.expr().logic_or(&hit));
    let done = m.wire_from(
        "sweep_done",
        1,
        "nothing more to read and every read answered",
        next_new
            .bit(cb)
            .logic_or(found_new.expr().logic_and(held_new.expr().logic_not()))
            .logic_and(pending_new.expr().eq(lit(nb, 0))),
    );
    let drop = m.wire_from(
        "drop",
        1,
        "a NO_CONN NACK came while one is resolved",
        port("s_nc_valid").expr().logic_and(is(IDLE).logic_not()),
    );
    let failed = m.wire_from(
        "failed",
        1,
        "the sweep ends without a match",
        is(SWEEP).logic_and(&done).logic_and(found_new.expr().logic_not()),
    );
    let go = |s: u64| set(&state.next, lit(2, s));
    let mut start = vec![
        go(SWEEP),
        set(&next.next, lit(nb, 0)),
        set(&pending.next, lit(nb, 0)),
        set(&found.next, lit(1, 0)),
        set(&held.next, lit(1, 0)),
    ];
    for (f, r) in &nc {
        start.push(set(&r.next, port(&format!("s_nc_{f}"))));
    }
    m.next(case(
        &state.q,
        vec![
            (vec![lit(2, IDLE)], vec![if_then(port("s_nc_valid"), start)]),
            (
                vec![lit(2, SWEEP)],
                vec![
                    set(&pending.next, &pending_new),
                    set(&next.next, &next_new),
                    set(&found.next, &found_new),
                    set(&held.next, &held_new),
                    if_then(
                        hit.expr().logic_and(found.q.expr().logic_not()),
                        vec![set(&found_conn.next, port("s_rdr_conn"))],
                    ),
                    if_then(&done, vec![if_else(&found_new, vec![go(OUT)], vec![go(IDLE)])]),
                ],
            ),
            (vec![lit(2, OUT)], vec![if_then(port("m_nack_ready"), vec![go(IDLE)])]),
        ],
        Some(vec![go(IDLE)]),
    ));
    let ow = OWED_BITS;
    let owed_all = m.wire_from(
        "owed_all",
        ow,
        "pulses owed with this cycle's",
        owed.q.expr() + zext(&drop, ow) + zext(&failed, ow),
    );
    let any = m.wire_from("owed_any", 1, "a pulse is owed", owed_all.expr().ne(lit(ow, 0)));
    m.next(set(&stat.next, &any));
    let left = m.wire_from("owed_left", ow, "pulses owed after this cycle's", owed_all.expr() - zext(&any, ow));
    m.next(set(&owed.next, &left));
    m.assign(port("stat_ack_no_conn"), &stat.q);

    let on = m.wire_from("nack_on", 1, "the resolved NACK is on m_nack", is(OUT));
    m.assign(port("m_nack_valid"), &on);
    m.assign(port("m_nack_conn"), mux(&on, &found_conn.q, lit(cb, 0)));
    for f in ["path_id", "code", "psn"] {
        let q = ncq(f);
        m.assign(port(&format!("m_nack_{f}")), mux(&on, &q, lit(q.width(), 0)));
    }
    // Interface rules: assumed on the inputs, asserted on the outputs.
    crate::formal::every_channel(&mut m, &rst);
    // Only a slot that answered as the NACK's connection is named: for a
    // tracked slot (any), a ghost notes an answer for it that matched the
    // NACK in hand (valid, its remote id the NACK's dst_conn, its address
    // the NACK's source), cleared when a NACK is taken; the resolved NACK
    // names that slot only with the note, and carries the NACK's fields.
    let slot = m.formal_anyconst("f_slot", cb, "the tracked slot");
    let noted = m.formal_wire("f_matched", 1, "ghost: an answer for the tracked slot matched the NACK in hand");
    let matched_now = answer
        .expr()
        .logic_and(port("s_rdr_conn").expr().eq(&slot))
        .logic_and(port("s_rdr_entry_valid"))
        .logic_and(port("s_rdr_remote_id").expr().eq(ncq("dst_conn")))
        .logic_and(port("s_rdr_remote_addr").expr().eq(ncq("src_addr")));
    m.formal_seq(vec![if_else(
        is(IDLE),
        vec![set(&noted, lit(1, 0))],
        vec![if_then(is(SWEEP).logic_and(matched_now), vec![set(&noted, lit(1, 1))])],
    )]);
    let implies = crate::formal::implies;
    m.assert(
        "a_found_matched",
        "while a match is held for the tracked slot, that slot's answer matched the NACK in hand",
        implies(found.q.expr().logic_and(is(IDLE).logic_not()).logic_and(found_conn.q.expr().eq(&slot)), &noted),
    );
    m.assert("a_out_found", "a NACK is handed on only with a match", implies(is(OUT), &found.q));
    m.assert(
        "a_nack_names_a_match",
        "the NACK goes to tx_engine for the tracked slot only if that slot answered as the NACK's connection",
        implies(on.expr().logic_and(port("m_nack_conn").expr().eq(&slot)), &noted),
    );
    m.cover("c_nack_tracked", "a NACK resolved to the tracked slot", {
        on.expr().logic_and(port("m_nack_conn").expr().eq(&slot))
    });
    m
}

/// How the properties of [`generate`]'s module are checked: a glue
/// block's, [`crate::proof::handshake_tasks`].
pub use crate::proof::handshake_tasks as formal_tasks;
