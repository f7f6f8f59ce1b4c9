//! The acknowledgement unit's NACK handler of `tx_engine` as a clocked
//! unit (`tx_nack`): what the model's `on_nack` and `nack_act` do with a
//! parsed NACK ([`mrnic_model::tx_engine`]), in the step `tx_ack` starts
//! for it (`m_go_nack`): the stale checks, the telemetry event, the RNR
//! back-off with its push into the RNR queue, the BAD_HDR retransmission
//! and the connection's failure (NO_CONN, ACCESS, RNR past `RNR_RETRY`).
//!
//! # Timing
//! A step issues its reads when it starts and they answer `L` cycles later
//! (architecture.md, tx_engine items 4 and 11):
//! - **The step's cycle** (`t`, `s_go_nack` with the NACK input register
//!   on `s_nack_*`): the busy count the handler sets goes to `tx_ack`'s
//!   `s_busy` (`m_busy`, always 2: the count comes from the record alone,
//!   a failure raising it later); the connection's `stalled` bit is
//!   cleared (`m_unstall_*`); the context, the path's mirror and the
//!   NACKed psn's ring slot are read (`m_rd_*`). The record and `ts_now`
//!   are registered.
//! - **The answer's cycle** (`t + L`, `s_rd_*`, `s_pm_*`, `s_ring_*` as
//!   the tables stood at `t`): every action. Nothing for a connection
//!   closed or failed. Stale (`m_stat_nack_stale`): a `path_id` past the
//!   connection's paths, a psn not outstanding on the path (not in
//!   `[cum_acked, next_psn)`, 24-bit serial, or its slot empty), or an
//!   unknown code. NO_CONN fails the connection (no culprit,
//!   REMOTE_INVALID_REQUEST) before the psn is looked at. Else the path
//!   delivered: a telemetry event (`m_evt_*`: RNR when it starts a
//!   back-off, the slot neither an RNR resend nor at `RNR_RETRY` and the
//!   RNR FIFO not full, else NACK, at the step's `ts`), and the mirror's
//!   `timed_out` cleared with it; then by code: RNR, unless the slot waits
//!   for a back-off already, fails the connection at `RNR_RETRY` (culprit
//!   the slot's request, RNR_RETRY_EXCEEDED), starts a back-off (the slot
//!   written with `rnr_count + 1`, `rnr_wait`, `rnr_resend`, not queued,
//!   tag `s_rnr_tag`; the RNR queue's push with deadline `ts + rto_min`),
//!   or, the FIFO full (`s_rnr_full`), starts none and counts it
//!   (`m_stat_rnr_full`): the packet stays outstanding for RACK or the
//!   path's timeout (architecture.md, tx_engine item 3);
//!   ACCESS fails it (culprit the slot's request, REMOTE_ACCESS); BAD_HDR
//!   queues a slot not queued yet, charged (the slot's write and the
//!   retransmit queue's push).
//!
//! The model acts at `t + L` too, after the unit's turn; its count frees
//! the unit at `t + L + 3` (`L + 2` loaded at the step), or, after a
//! failure, which raises it to `PATHS x tx_ring_depth` through `tx_ack`'s
//! `s_hold_fail` in the answer's cycle, at `t + L + 1 + PATHS x
//! tx_ring_depth`, exactly as when the model raised it in the step.
//! Between the step and the answer nothing writes what the step read:
//! the unit is busy (no other step, no decision, no commit, no reopen),
//! and the output stage's failure waits for the answer as it waits for a
//! walk (its `walk_busy` is high meanwhile).
//!
//! # Interface with the rest of the engine
//! - The record and the step come from `tx_ack` and the NACK input
//!   register; the handler's count goes back on `m_busy`; the RNR tag is
//!   `tx_ack`'s `m_rnr_tag`, moved on by `m_rnr_valid` (its
//!   `s_rnr_push`); a failure raises its count (`m_fail_valid` is its
//!   `s_hold_fail`).
//! - Its reads are ports: the address (`m_rd_*`) in the step's cycle,
//!   the answer `L` cycles later.
//! - Its writes are ports of the answer's cycle, every payload 0 without
//!   its valid: `m_evt_*` (into the unit's pending events, and the
//!   mirror's `timed_out` cleared), `m_ring_wr_*` (the slot's write:
//!   a back-off's, `m_ring_wr_rnr`, or BAD_HDR's queued and charge),
//!   `m_rnr_*` (the RNR queue's push), `m_retx_*` (the retransmit queue's
//!   push, which also clears `stalled`), `m_fail_*` (`tx_walk`'s
//!   `s_fail_*`, as `tx_commit`'s `m_fail_*`, with the connection;
//!   the walk is idle then, since the step started only with it idle and
//!   nothing else starts one while the answer is pending).
//!
//! # Formal properties
//! Stated next to the logic (`properties`) and run by `scripts/formal`
//! as the unit `tx_nack` ([`crate::proof::blocks`], [`formal_tasks`]), all
//! by 2-induction (boolector), with ghosts for the latest step (its
//! record and `ts_now`, the cycles since it, tx_ack's count left; shared
//! with `tx_rto`). The rules are stated from the spec over the ghosts and
//! the answer's inputs, not over the unit's registers:
//! - `tx_ack`'s side, assumed: no step in a reset, and a step only once
//!   tx_ack's count for the previous one (`m_busy + L` at the step, down
//!   by one a cycle) has run out (`asm_step_when_free`); an open
//!   connection has at most `PATHS` paths (`asm_npaths_within`);
//! - `m_busy` is 2 in a step's cycle and 0 otherwise; the reads and the
//!   unstall go exactly with the step, for its connection, `path_id mod
//!   PATHS` and psn;
//! - nothing acts (event, slot write, push, stale count, failure) but
//!   exactly `L` cycles after a step, and nothing for a connection closed
//!   or failed; an answer does at most one of fail, back off, refuse a
//!   back-off, queue, count stale; the slot is written exactly with its
//!   queue's push;
//! - stale exactly for a `path_id` not below `npaths`, a psn not in
//!   `[cum_acked, next_psn)` (24-bit serial) or its slot empty (any code
//!   but NO_CONN), or an unknown code on a packet; a stale NACK fails,
//!   writes and pushes nothing, its only event an unknown code's (the
//!   path delivered);
//! - the event exactly for a live answer on a packet outstanding, naming
//!   the NACK's connection and `path_id` at the step's `ts_now`, RNR
//!   exactly when the RNR takes the packet out of the path's inflight
//!   (never with the RNR FIFO full);
//! - the failure exactly for NO_CONN on one of the paths, ACCESS on a
//!   packet, or RNR on a slot not waiting at `RNR_RETRY`, with the NACK's
//!   connection, the code's status and (but for NO_CONN) the slot's
//!   request as culprit; it never comes with a slot write, a push or a
//!   stale count;
//! - the RNR back-off exactly for a live RNR on a packet not waiting,
//!   below `RNR_RETRY`, with the RNR FIFO not full (with it full, exactly
//!   the count `m_stat_rnr_full`): the slot written with `rnr_count + 1` (1 to
//!   `RNR_RETRY`, never wrapped to 0) and the tag, the push with the NACK's connection,
//!   `path_id` and psn, the tag and the deadline the step's `ts_now +
//!   rto_min`;
//! - BAD_HDR's retransmission exactly for a packet not queued, its push
//!   and write naming the NACK's slot, not a back-off's write;
//! - every payload is 0 without its valid;
//! - invariants tying the read pipe, the record registers and tx_ack's
//!   count to the ghosts (`a_inv_*`), so the induction closes in 2 steps;
//! - covers: each action (the four stale kinds, NO_CONN, ACCESS, RNR's
//!   failure, a back-off with an RNR and with a NACK event, a back-off
//!   refused for the full FIFO, an RNR on a waiting slot, BAD_HDR on a slot queued or not, a back-off across the
//!   24-bit wrap), a failed connection's answer, and a second step as soon
//!   as the unit is free.

use mrnic_model::block::PortDef;
use mrnic_model::path_telemetry::{self as tel, Consts};
use mrnic_model::tx_engine::{status, TxEngineParams, RNR_RETRY};
use mrnic_proto::NackCode;

use super::ack::busy_bits;
use super::PSN;
use super::{gate, stream_ptr_bits};
use crate::expr::{cat, index_bits, lit, mux, zext, Expr, Signal};
use crate::ir::{set, Module};

/// Module name.
pub const NAME: &str = "tx_nack";

const RST: &str = "Clock and reset";
const STEP: &str = "The step (tx_ack m_go_nack) and its record";
const RD: &str = "The step's reads: issued with the step, answered L cycles later";
const WR: &str = "The handler's writes, when its reads answer";
const FAIL: &str = "The failure (tx_walk s_fail_*, tx_ack s_hold_fail)";

/// Bits of a ring slot's RNR count: it counts to `RNR_RETRY`.
pub const RNR_COUNT_BITS: u32 = u8::BITS - RNR_RETRY.leading_zeros();

/// Bits of the wire's `path_id` and `code`.
const PATH_ID: u32 = 8;
const CODE: u32 = 8;

/// The unit's ports, in declaration order.
pub fn ports(p: &TxEngineParams) -> Vec<PortDef> {
    let (cb, sb) = (p.conn_bits, p.stream_bits);
    let pb = index_bits(p.paths);
    let qb = stream_ptr_bits(p.wq_depth);
    let rc = RNR_COUNT_BITS;
    let i = |nm: &str, w: u32, g: &'static str, c: &str| PortDef::input(nm, w, g, c);
    let o = |nm: &str, w: u32, g: &'static str, c: &str| PortDef::output(nm, w, g, c);
    vec![
        i("rst", 1, RST, "synchronous reset, active high"),
        i("ts_now", 32, RST, "timestamp"),
        i("s_go_nack", 1, STEP, "tx_ack starts the NACK handler on the NACK input register's record"),
        i("s_nack_conn", cb, STEP, "its connection"),
        i("s_nack_path_id", PATH_ID, STEP, "its path_id as on the wire"),
        i("s_nack_code", CODE, STEP, "its code: RNR 1, ACCESS 2, NO_CONN 3, BAD_HDR 4"),
        i("s_nack_psn", PSN, STEP, "its psn"),
        o("m_busy", busy_bits(p), STEP, "the busy count the handler sets (tx_ack s_busy; 0 without a step)"),
        o("m_unstall_valid", 1, STEP, "the connection's stalled bit is cleared"),
        o("m_unstall_conn", cb, STEP, "which connection"),
        o("m_rd_valid", 1, RD, "the context, the path's mirror and the psn's ring slot are read"),
        o("m_rd_conn", cb, RD, "the connection"),
        o("m_rd_path", pb, RD, "the path (path_id's low bits; a path_id past the paths is stale)"),
        o("m_rd_psn", PSN, RD, "the psn (the slot is psn mod tx_ring_depth)"),
        i("s_rd_open", 1, RD, "the context's open bit, L cycles after m_rd_valid"),
        i("s_rd_failed", 1, RD, "the connection has failed"),
        i("s_rd_npaths", pb + 1, RD, "its paths"),
        i("s_pm_next_psn", PSN, RD, "the path's next psn"),
        i("s_pm_cum_acked", PSN, RD, "its cumulative acknowledged psn"),
        i("s_ring_valid", 1, RD, "the slot holds a packet"),
        i("s_ring_stream", sb, RD, "its request's stream"),
        i("s_ring_wq", qb, RD, "its request's work queue pointer"),
        i("s_ring_rnr_count", rc, RD, "the RNR back-offs it had"),
        i("s_ring_rnr_resend", 1, RD, "its next send is an RNR resend"),
        i("s_ring_rnr_wait", 1, RD, "it waits for an RNR back-off"),
        i("s_ring_queued", 1, RD, "it is queued for retransmission"),
        i("s_rnr_tag", p.rnr_tag_bits, WR, "the tag a back-off started now gets (tx_ack m_rnr_tag)"),
        i(
            "s_rnr_full",
            1,
            WR,
            "the RNR FIFO is full (as at the step: nothing pops or pushes it while the unit is busy)",
        ),
        o("m_evt_valid", 1, WR, "a telemetry event is pending, and the path's timed_out is cleared"),
        o("m_evt_kind", tel::KIND_BITS, WR, "NACK, or RNR when a back-off starts"),
        o("m_evt_conn", cb, WR, "its connection"),
        o("m_evt_path", pb, WR, "its path"),
        o("m_evt_now", 32, WR, "the step's timestamp"),
        o("m_ring_wr_valid", 1, WR, "the NACKed slot is written"),
        o("m_ring_wr_conn", cb, WR, "its connection"),
        o("m_ring_wr_path", pb, WR, "its path"),
        o("m_ring_wr_psn", PSN, WR, "its psn"),
        o(
            "m_ring_wr_rnr",
            1,
            WR,
            "a back-off: rnr_count, rnr_tag written, rnr_wait and rnr_resend set, queued cleared (else queued and charge set)",
        ),
        o("m_ring_wr_rnr_count", rc, WR, "the rnr_count written"),
        o("m_ring_wr_rnr_tag", p.rnr_tag_bits, WR, "the rnr_tag written"),
        o("m_rnr_valid", 1, WR, "an RNR back-off is pushed (tx_ack s_rnr_push)"),
        o("m_rnr_conn", cb, WR, "its connection"),
        o("m_rnr_path", pb, WR, "its path"),
        o("m_rnr_psn", PSN, WR, "its psn"),
        o("m_rnr_until", 32, WR, "its deadline, the step's ts + rto_min"),
        o("m_rnr_tag", p.rnr_tag_bits, WR, "its tag"),
        o("m_retx_valid", 1, WR, "the slot is pushed into the retransmit queue (BAD_HDR)"),
        o("m_retx_conn", cb, WR, "its connection"),
        o("m_retx_path", pb, WR, "its path"),
        o("m_retx_psn", PSN, WR, "its psn"),
        o("m_stat_nack_stale", 1, WR, "a stale NACK (stat_nack_stale)"),
        o("m_stat_rnr_full", 1, WR, "an RNR back-off refused for the full RNR FIFO (stat_rnr_full)"),
        o("m_fail_valid", 1, FAIL, "the NACK fails the connection"),
        o("m_fail_conn", cb, FAIL, "which connection"),
        o("m_fail_culprit_valid", 1, FAIL, "a request caused it (ACCESS, RNR past the retry limit)"),
        o("m_fail_culprit_stream", sb, FAIL, "the culprit's stream"),
        o("m_fail_culprit_slot", qb, FAIL, "the culprit's work queue pointer"),
        o("m_fail_status", 4, FAIL, "REMOTE_INVALID_REQUEST, REMOTE_ACCESS or RNR_RETRY_EXCEEDED"),
    ]
}

/// The `tx_nack` module for `p`.
pub fn build(p: &TxEngineParams) -> Module {
    let (cb, sb, l) = (p.conn_bits, p.stream_bits, p.read_latency);
    let pb = index_bits(p.paths);
    let qb = stream_ptr_bits(p.wq_depth);
    let rc = RNR_COUNT_BITS;
    let bb = busy_bits(p);
    let k = Consts::from_config(&p.cfg);
    assert!(p.paths.is_power_of_two(), "the read takes path_id's low bits as the model's path_id % PATHS");
    assert!(l >= 1, "the reads answer at least a cycle after the step");
    assert!(pb < PATH_ID, "npaths fits the wire's path_id width");

    let mut m = Module::new(NAME);
    m.describe("tx_engine acknowledgement unit's NACK handler: stale checks, event, RNR back-off, BAD_HDR, failure");
    let defs = ports(p);
    let (clk, sig) = crate::ports::declare(&mut m, &defs);
    let sg = |nm: &str| sig[nm].clone();
    m.clock_domain(&clk, &sg("rst"));
    let w = |m: &mut Module, nm: &str, width: u32, c: &str, e: Expr| m.wire_from(nm, width, c, e);

    // ------------------------------------------------------------ the step
    let go = sg("s_go_nack");
    // The count comes from the record alone: whether the NACK fails the
    // connection is known only when the reads answer (tx_ack's hold then).
    m.assign(sg("m_busy"), mux(&go, lit(bb, 2), lit(bb, 0)));
    m.assign(sg("m_unstall_valid"), &go);
    m.assign(sg("m_unstall_conn"), gate(&go, sg("s_nack_conn").expr(), cb));
    m.assign(sg("m_rd_valid"), &go);
    m.assign(sg("m_rd_conn"), gate(&go, sg("s_nack_conn").expr(), cb));
    // path_id % PATHS (a power of two).
    let low_path = if p.paths == 1 { lit(pb, 0) } else { sg("s_nack_path_id").slice(pb - 1, 0) };
    m.assign(sg("m_rd_path"), gate(&go, low_path, pb));
    m.assign(sg("m_rd_psn"), gate(&go, sg("s_nack_psn").expr(), PSN));

    // The record, held until the next step (at least L + 3 cycles on).
    let r_conn = m.reg_no_reset("rec_conn", cb, "the NACK's connection");
    let r_path = m.reg_no_reset("rec_path_id", PATH_ID, "its path_id");
    let r_code = m.reg_no_reset("rec_code", CODE, "its code");
    let r_psn = m.reg_no_reset("rec_psn", PSN, "its psn");
    let r_ts = m.reg_no_reset("rec_ts", 32, "ts_now in the step's cycle (the event's and the back-off's time)");
    for (r, e) in [
        (&r_conn, sg("s_nack_conn").expr()),
        (&r_path, sg("s_nack_path_id").expr()),
        (&r_code, sg("s_nack_code").expr()),
        (&r_psn, sg("s_nack_psn").expr()),
        (&r_ts, sg("ts_now").expr()),
    ] {
        m.next(set(&r.next, mux(&go, e, r.q.expr())));
    }
    // The step's reads in flight: bit i set i + 1 edges after the step.
    let (pipe, ans) = super::read_answer(&mut m, &go, l);

    // ------------------------------------------------------------ the checks
    let code = r_code.q.expr();
    let is = |c: NackCode| code.clone().eq(lit(CODE, c as u64));
    let live = w(
        &mut m,
        "live",
        1,
        "the step's reads answer and the connection is open and has not failed",
        ans.expr().logic_and(sg("s_rd_open")).logic_and(sg("s_rd_failed").expr().logic_not()),
    );
    let path_ok = w(
        &mut m,
        "path_ok",
        1,
        "path_id is one of the connection's paths",
        r_path.q.expr().lt(zext(sg("s_rd_npaths").expr(), PATH_ID)),
    );
    let no_conn = w(
        &mut m,
        "no_conn",
        1,
        "a NO_CONN NACK on a live path: the connection fails",
        live.expr().logic_and(&path_ok).logic_and(is(NackCode::NoConn)),
    );
    let cum = sg("s_pm_cum_acked").expr();
    let off = w(&mut m, "psn_off", PSN, "psn - cum_acked, 24-bit serial", r_psn.q.expr() - cum.clone());
    let span = w(&mut m, "span", PSN, "next_psn - cum_acked: psns outstanding", sg("s_pm_next_psn").expr() - cum);
    let slot_ok = w(
        &mut m,
        "slot_ok",
        1,
        "the psn is outstanding on the path and its slot holds a packet",
        sg("s_ring_valid").expr().logic_and(off.expr().lt(span.expr())),
    );
    let pkt = w(
        &mut m,
        "on_packet",
        1,
        "a NACK of a live packet (not NO_CONN): the path delivered",
        live.expr().logic_and(&path_ok).logic_and(is(NackCode::NoConn).logic_not()).logic_and(&slot_ok),
    );
    let known = is(NackCode::Rnr).logic_or(is(NackCode::Access)).logic_or(is(NackCode::BadHdr));
    let stale = live.expr().logic_and(path_ok.expr().logic_not()).logic_or(
        live.expr()
            .logic_and(&path_ok)
            .logic_and(is(NackCode::NoConn).logic_not())
            .logic_and(slot_ok.expr().logic_not()),
    );
    m.assign(sg("m_stat_nack_stale"), stale.logic_or(pkt.expr().logic_and(known.logic_not())));

    // ------------------------------------------------------------ the event
    let count = sg("s_ring_rnr_count").expr();
    let below = w(
        &mut m,
        "rnr_below",
        1,
        "the slot's RNR count is below RNR_RETRY",
        count.clone().lt(lit(rc, u64::from(RNR_RETRY))),
    );
    let full = sg("s_rnr_full");
    let backs_off = is(NackCode::Rnr)
        .logic_and(sg("s_ring_rnr_resend").expr().logic_not())
        .logic_and(&below)
        .logic_and(full.expr().logic_not());
    m.assign(sg("m_evt_valid"), &pkt);
    m.assign(
        sg("m_evt_kind"),
        gate(
            &pkt,
            mux(
                backs_off,
                lit(tel::KIND_BITS, u64::from(tel::kind::RNR)),
                lit(tel::KIND_BITS, u64::from(tel::kind::NACK)),
            ),
            tel::KIND_BITS,
        ),
    );
    m.assign(sg("m_evt_conn"), gate(&pkt, r_conn.q.expr(), cb));
    let path = if p.paths == 1 { lit(pb, 0) } else { r_path.q.slice(pb - 1, 0) };
    m.assign(sg("m_evt_path"), gate(&pkt, path.clone(), pb));
    m.assign(sg("m_evt_now"), gate(&pkt, r_ts.q.expr(), 32));

    // ------------------------------------------------------------ the codes
    let rnr_free = pkt.expr().logic_and(is(NackCode::Rnr)).logic_and(sg("s_ring_rnr_wait").expr().logic_not());
    let rnr_room = w(&mut m, "rnr_room", 1, "an RNR may start a back-off", rnr_free.clone().logic_and(&below));
    let rnr_push = w(
        &mut m,
        "rnr_push",
        1,
        "an RNR starts a back-off: the RNR FIFO has room",
        rnr_room.expr().logic_and(full.expr().logic_not()),
    );
    m.assign(sg("m_stat_rnr_full"), rnr_room.expr().logic_and(&full));
    let rnr_fail = w(
        &mut m,
        "rnr_fail",
        1,
        "an RNR past the retry limit fails the connection",
        rnr_free.logic_and(below.expr().logic_not()),
    );
    let access =
        w(&mut m, "access_fail", 1, "an ACCESS NACK fails the connection", pkt.expr().logic_and(is(NackCode::Access)));
    let bad = w(
        &mut m,
        "bad_hdr_queue",
        1,
        "a BAD_HDR NACK queues its packet, charged",
        pkt.expr().logic_and(is(NackCode::BadHdr)).logic_and(sg("s_ring_queued").expr().logic_not()),
    );
    let wr = w(&mut m, "ring_write", 1, "the slot is written", rnr_push.expr().logic_or(&bad));
    m.assign(sg("m_ring_wr_valid"), &wr);
    m.assign(sg("m_ring_wr_conn"), gate(&wr, r_conn.q.expr(), cb));
    m.assign(sg("m_ring_wr_path"), gate(&wr, path.clone(), pb));
    m.assign(sg("m_ring_wr_psn"), gate(&wr, r_psn.q.expr(), PSN));
    m.assign(sg("m_ring_wr_rnr"), &rnr_push);
    m.assign(sg("m_ring_wr_rnr_count"), gate(&rnr_push, count + lit(rc, 1), rc));
    m.assign(sg("m_ring_wr_rnr_tag"), gate(&rnr_push, sg("s_rnr_tag").expr(), p.rnr_tag_bits));
    m.assign(sg("m_rnr_valid"), &rnr_push);
    m.assign(sg("m_rnr_conn"), gate(&rnr_push, r_conn.q.expr(), cb));
    m.assign(sg("m_rnr_path"), gate(&rnr_push, path.clone(), pb));
    m.assign(sg("m_rnr_psn"), gate(&rnr_push, r_psn.q.expr(), PSN));
    m.assign(sg("m_rnr_until"), gate(&rnr_push, r_ts.q.expr() + lit(32, u64::from(k.rto_min)), 32));
    m.assign(sg("m_rnr_tag"), gate(&rnr_push, sg("s_rnr_tag").expr(), p.rnr_tag_bits));
    m.assign(sg("m_retx_valid"), &bad);
    m.assign(sg("m_retx_conn"), gate(&bad, r_conn.q.expr(), cb));
    m.assign(sg("m_retx_path"), gate(&bad, path, pb));
    m.assign(sg("m_retx_psn"), gate(&bad, r_psn.q.expr(), PSN));

    // ------------------------------------------------------------ the failure
    let culprit = w(&mut m, "culprit", 1, "the failure has a culprit request", rnr_fail.expr().logic_or(&access));
    let fail = w(&mut m, "fail", 1, "the NACK fails the connection", culprit.expr().logic_or(&no_conn));
    m.assign(sg("m_fail_valid"), &fail);
    m.assign(sg("m_fail_conn"), gate(&fail, r_conn.q.expr(), cb));
    m.assign(sg("m_fail_culprit_valid"), &culprit);
    m.assign(sg("m_fail_culprit_stream"), gate(&culprit, sg("s_ring_stream").expr(), sb));
    m.assign(sg("m_fail_culprit_slot"), gate(&culprit, sg("s_ring_wq").expr(), qb));
    let st = mux(
        &no_conn,
        lit(4, u64::from(status::REMOTE_INVALID_REQUEST)),
        mux(&rnr_fail, lit(4, u64::from(status::RNR_RETRY_EXCEEDED)), lit(4, u64::from(status::REMOTE_ACCESS))),
    );
    m.assign(sg("m_fail_status"), gate(&fail, st, 4));
    let inner = Inner { pipe, rec: [r_conn, r_path, r_code, r_psn, r_ts].into_iter().map(|r| r.q).collect() };
    properties(&mut m, p, &inner);
    m
}

/// The unit's registers its formal properties tie to their ghosts (the
/// invariants that let induction close).
struct Inner {
    pipe: Signal,
    rec: Vec<Signal>,
}

/// The `tx_nack` module for `cfg`'s engine parameters, for the proofs
/// ([`crate::proof::blocks`]).
pub fn generate(cfg: &mrnic_proto::Config) -> Result<Module, String> {
    let p = TxEngineParams::from_config(cfg).map_err(|e| e.to_string())?;
    Ok(build(&p))
}

/// The unit's proof tasks, with boolector ([`crate::proof::boolector_tasks`]):
/// every assertion by 2-induction (`prove`, the ghosts tied to the
/// registers) and the covers to 12 cycles (the reset, a step, its answer
/// `L` cycles later and a second step as soon as tx_ack's count frees the
/// unit).
pub fn formal_tasks(_asserts: &[String]) -> Vec<crate::proof::Task> {
    crate::proof::boolector_tasks(2, 12)
}

/// The unit's formal properties (see the module's `# Formal properties`).
fn properties(m: &mut Module, p: &TxEngineParams, f: &Inner) {
    use crate::formal::{implies, port};
    let (cb, l) = (p.conn_bits, p.read_latency);
    let pb = index_bits(p.paths);
    let bb = busy_bits(p);
    let rc = RNR_COUNT_BITS;
    let rto_min = u64::from(Consts::from_config(&p.cfg).rto_min);
    let sg = |m: &Module, nm: &str| port(m, nm);
    let rst = sg(m, "rst");
    let go = sg(m, "s_go_nack");

    // ------------------------------------------------ tx_ack's side, assumed
    m.assume(
        "asm_no_step_in_reset",
        "no step starts in a reset (tx_ack is reset with the unit)",
        implies(&rst, go.expr().logic_not()),
    );
    // The age tells apart the cycles up to the count's end (2 + L + 1).
    let step = super::step::ghosts(m, go.expr(), bb, l, 2 + u64::from(l) + 2);
    let at_ans = step.at_answer.clone();
    let g = |m: &mut Module, nm: &str, w: u32, c: &str, port: &str| {
        let e = sg(m, port).expr();
        step.record(m, &go.expr(), (nm, w), c, e)
    };
    let f_conn = g(m, "f_conn", cb, "the latest step's connection", "s_nack_conn");
    let f_path = g(m, "f_path_id", PATH_ID, "its path_id", "s_nack_path_id");
    let f_code = g(m, "f_code", CODE, "its code", "s_nack_code");
    let f_psn = g(m, "f_psn", PSN, "its psn", "s_nack_psn");
    let f_ts = g(m, "f_ts", 32, "ts_now at the step", "ts_now");
    m.assume(
        "asm_npaths_within",
        &format!(
            "an open connection has at most PATHS = {} paths (its context is opened with 1..=PATHS), as the answer \
             reads it",
            p.paths
        ),
        implies(
            at_ans.expr().logic_and(sg(m, "s_rd_open")),
            sg(m, "s_rd_npaths").expr().le(lit(pb + 1, u64::from(p.paths))),
        ),
    );

    // ------------------------------------------------ what the answer should do, from the spec
    let is = |c: NackCode| f_code.expr().eq(lit(CODE, c as u64));
    let live = m.formal_wire("f_live", 1, "the step's reads answer now, on a connection open and not failed");
    m.formal_assign(
        &live,
        at_ans.expr().logic_and(sg(m, "s_rd_open")).logic_and(sg(m, "s_rd_failed").expr().logic_not()),
    );
    let path_ok = f_path.expr().lt(zext(sg(m, "s_rd_npaths"), PATH_ID));
    let cum = sg(m, "s_pm_cum_acked").expr();
    let outstanding = (f_psn.expr() - cum.clone()).lt(sg(m, "s_pm_next_psn").expr() - cum);
    let pkt = m.formal_wire(
        "f_on_packet",
        1,
        "a live answer of a NACK other than NO_CONN, on one of the connection's paths, of a psn in [cum_acked, \
         next_psn) (24-bit serial) whose slot holds a packet",
    );
    m.formal_assign(
        &pkt,
        live.expr()
            .logic_and(path_ok.clone())
            .logic_and(is(NackCode::NoConn).logic_not())
            .logic_and(outstanding)
            .logic_and(sg(m, "s_ring_valid")),
    );
    let known = is(NackCode::Rnr).logic_or(is(NackCode::Access)).logic_or(is(NackCode::BadHdr));
    let no_conn = live.expr().logic_and(path_ok.clone()).logic_and(is(NackCode::NoConn));
    let stale_want = live
        .expr()
        .logic_and(path_ok.clone().logic_not())
        .logic_or(
            live.expr()
                .logic_and(path_ok)
                .logic_and(is(NackCode::NoConn).logic_not())
                .logic_and(pkt.expr().logic_not()),
        )
        .logic_or(pkt.expr().logic_and(known.clone().logic_not()));
    let count = sg(m, "s_ring_rnr_count");
    let below = count.expr().lt(lit(rc, u64::from(RNR_RETRY)));
    let rnr_free = pkt.expr().logic_and(is(NackCode::Rnr)).logic_and(sg(m, "s_ring_rnr_wait").expr().logic_not());
    let full = sg(m, "s_rnr_full");
    let room = rnr_free.clone().logic_and(below.clone());
    let backs_off = room.clone().logic_and(full.expr().logic_not());
    let refused = room.logic_and(&full);
    let rnr_fails = rnr_free.logic_and(below.clone().logic_not());
    let access = pkt.expr().logic_and(is(NackCode::Access));
    let bad_hdr = pkt.expr().logic_and(is(NackCode::BadHdr)).logic_and(sg(m, "s_ring_queued").expr().logic_not());

    let (ev, wr, rnr, retx) =
        (sg(m, "m_evt_valid"), sg(m, "m_ring_wr_valid"), sg(m, "m_rnr_valid"), sg(m, "m_retx_valid"));
    let (stale, fv) = (sg(m, "m_stat_nack_stale"), sg(m, "m_fail_valid"));
    let rfull = sg(m, "m_stat_rnr_full");
    let any = ev.expr().logic_or(&wr).logic_or(&rnr).logic_or(&retx).logic_or(&stale).logic_or(&fv).logic_or(&rfull);
    let names = |m: &Module, conn: &str, path: &str, psn: &str| {
        sg(m, conn)
            .expr()
            .eq(&f_conn)
            .logic_and(zext(sg(m, path), PATH_ID).eq(&f_path))
            .logic_and(sg(m, psn).expr().eq(&f_psn))
    };

    // ------------------------------------------------ the step
    m.assert(
        "a_busy_count",
        "m_busy is 2 in a step's cycle (from the record alone; a failure raises tx_ack's count later), 0 otherwise",
        sg(m, "m_busy").expr().eq(mux(&go, lit(bb, 2), lit(bb, 0))),
    );
    m.assert(
        "a_step_reads",
        "the reads and the unstall are issued exactly with the step: the NACK's connection, path_id mod PATHS and psn",
        sg(m, "m_rd_valid").expr().eq(&go).logic_and(sg(m, "m_unstall_valid").expr().eq(&go)).logic_and(implies(
            &go,
            sg(m, "m_rd_conn")
                .expr()
                .eq(sg(m, "s_nack_conn"))
                .logic_and(sg(m, "m_unstall_conn").expr().eq(sg(m, "s_nack_conn")))
                .logic_and(
                    zext(sg(m, "m_rd_path"), PATH_ID)
                        .eq(sg(m, "s_nack_path_id").expr() & lit(PATH_ID, u64::from(p.paths - 1))),
                )
                .logic_and(sg(m, "m_rd_psn").expr().eq(sg(m, "s_nack_psn"))),
        )),
    );

    // ------------------------------------------------ when the handler acts
    m.assert(
        "a_act_at_answer",
        &format!(
            "nothing acts (event, slot write, push, stale or full count, failure) but exactly L = {l} cycles after a \
             step, when its reads answer"
        ),
        implies(any.clone(), &at_ans),
    );
    m.assert(
        "a_dead_conn_quiet",
        "nothing acts for a connection closed or failed as the answer reads it: no event, no slot write, no push, \
         no stale or full count, no failure",
        implies(any, &live),
    );
    m.assert(
        "a_one_action",
        "an answer does at most one of: fail the connection, start an RNR back-off, refuse one for the full FIFO, \
         queue the slot for retransmission, count a stale NACK",
        {
            let v = cat(&[fv.expr(), rnr.expr(), rfull.expr(), retx.expr(), stale.expr()]);
            (v.clone() & (v - lit(5, 1))).eq(lit(5, 0))
        },
    );
    m.assert(
        "a_ring_write_with_push",
        "the slot is written exactly with its queue's push: a back-off's write with the RNR push, BAD_HDR's with the \
         retransmit push",
        wr.expr().eq(rnr.expr().logic_or(&retx)).logic_and(sg(m, "m_ring_wr_rnr").expr().eq(&rnr)),
    );

    // ------------------------------------------------ stale
    m.assert(
        "a_stale_when",
        "a live answer counts a stale NACK exactly for a path_id not below npaths, a psn not in [cum_acked, next_psn) \
         or its slot empty (any code but NO_CONN), or an unknown code on a packet",
        stale.expr().eq(stale_want),
    );
    m.assert(
        "a_stale_alone",
        "a stale NACK fails nothing, writes no slot and pushes nothing; its only event is an unknown code's on a \
         packet outstanding (the path delivered), a NACK",
        implies(
            &stale,
            fv.expr()
                .logic_not()
                .logic_and(wr.expr().logic_not())
                .logic_and(rnr.expr().logic_not())
                .logic_and(retx.expr().logic_not())
                .logic_and(implies(&ev, pkt.expr().logic_and(known.logic_not()))),
        ),
    );

    // ------------------------------------------------ the event
    let kind = |k: u8| lit(tel::KIND_BITS, u64::from(k));
    let takes_out = is(NackCode::Rnr)
        .logic_and(sg(m, "s_ring_rnr_resend").expr().logic_not())
        .logic_and(below)
        .logic_and(full.expr().logic_not());
    m.assert(
        "a_evt_when",
        "the telemetry event (and the path's timed_out clear) exactly for a live answer on a packet outstanding",
        ev.expr().eq(&pkt),
    );
    m.assert(
        "a_evt_record",
        "the event names the NACK's connection and path_id, at the step's ts_now; RNR exactly when an RNR takes the \
         packet out of the path's inflight (not an RNR resend, below RNR_RETRY, the RNR FIFO not full), else NACK",
        implies(
            &ev,
            sg(m, "m_evt_conn")
                .expr()
                .eq(&f_conn)
                .logic_and(zext(sg(m, "m_evt_path"), PATH_ID).eq(&f_path))
                .logic_and(sg(m, "m_evt_now").expr().eq(&f_ts))
                .logic_and(sg(m, "m_evt_kind").expr().eq(mux(takes_out, kind(tel::kind::RNR), kind(tel::kind::NACK)))),
        ),
    );

    // ------------------------------------------------ the failure
    let fail_want = no_conn.clone().logic_or(rnr_fails.clone()).logic_or(access.clone());
    m.assert(
        "a_fail_when",
        &format!(
            "the connection fails exactly for a live answer of NO_CONN on one of its paths, ACCESS on a packet \
             outstanding, or RNR on one not waiting with rnr_count at RNR_RETRY = {RNR_RETRY}"
        ),
        fv.expr().eq(fail_want),
    );
    let st = |s: u8| sg(m, "m_fail_status").expr().eq(lit(4, u64::from(s)));
    let culprit = sg(m, "m_fail_culprit_valid")
        .expr()
        .logic_and(sg(m, "m_fail_culprit_stream").expr().eq(sg(m, "s_ring_stream")))
        .logic_and(sg(m, "m_fail_culprit_slot").expr().eq(sg(m, "s_ring_wq")));
    m.assert(
        "a_fail_record",
        "a failure names the NACK's connection: NO_CONN with REMOTE_INVALID_REQUEST and no culprit, ACCESS with \
         REMOTE_ACCESS and RNR with RNR_RETRY_EXCEEDED, each with the slot's request as culprit",
        implies(
            &fv,
            sg(m, "m_fail_conn").expr().eq(&f_conn).logic_and(mux(
                &no_conn,
                st(status::REMOTE_INVALID_REQUEST).logic_and(sg(m, "m_fail_culprit_valid").expr().logic_not()),
                mux(&access, st(status::REMOTE_ACCESS), st(status::RNR_RETRY_EXCEEDED)).logic_and(culprit),
            )),
        ),
    );
    m.assert(
        "a_fail_alone",
        "a failure writes no slot, pushes nothing and counts no stale NACK (the flush walk empties the queues)",
        implies(
            &fv,
            wr.expr()
                .logic_not()
                .logic_and(rnr.expr().logic_not())
                .logic_and(retx.expr().logic_not())
                .logic_and(stale.expr().logic_not()),
        ),
    );

    // ------------------------------------------------ the RNR back-off
    m.assert(
        "a_rnr_when",
        &format!(
            "an RNR back-off starts exactly for a live RNR on a packet outstanding whose slot is not waiting for one \
             already, with rnr_count below RNR_RETRY = {RNR_RETRY}, and the RNR FIFO not full"
        ),
        rnr.expr().eq(backs_off),
    );
    m.assert(
        "a_rnr_full_when",
        "a back-off is refused (counted on m_stat_rnr_full, nothing written or pushed, the event a NACK) exactly when \
         one would start but the RNR FIFO is full",
        rfull.expr().eq(refused),
    );
    let tag = sg(m, "s_rnr_tag");
    m.assert(
        "a_rnr_record",
        &format!(
            "a back-off pushes the NACK's connection, path_id and psn with the tag and the deadline the step's ts_now + \
             rto_min ({rto_min}), and writes that slot with rnr_count + 1 and the tag"
        ),
        implies(
            &rnr,
            names(m, "m_rnr_conn", "m_rnr_path", "m_rnr_psn")
                .logic_and(sg(m, "m_rnr_until").expr().eq(f_ts.expr() + lit(32, rto_min)))
                .logic_and(sg(m, "m_rnr_tag").expr().eq(&tag))
                .logic_and(names(m, "m_ring_wr_conn", "m_ring_wr_path", "m_ring_wr_psn"))
                .logic_and(sg(m, "m_ring_wr_rnr_count").expr().eq(count.expr() + lit(rc, 1)))
                .logic_and(sg(m, "m_ring_wr_rnr_tag").expr().eq(&tag)),
        ),
    );
    m.assert(
        "a_rnr_count_within_retry",
        &format!(
            "a back-off writes a count of 1 to RNR_RETRY = {RNR_RETRY} back-offs: never more, and never wrapped to 0 \
             ({rc} bits)"
        ),
        implies(
            sg(m, "m_ring_wr_rnr"),
            sg(m, "m_ring_wr_rnr_count")
                .expr()
                .ne(lit(rc, 0))
                .logic_and(sg(m, "m_ring_wr_rnr_count").expr().le(lit(rc, u64::from(RNR_RETRY)))),
        ),
    );

    // ------------------------------------------------ BAD_HDR
    m.assert(
        "a_retx_when",
        "a slot is queued for retransmission exactly for a live BAD_HDR on a packet outstanding not queued already",
        retx.expr().eq(bad_hdr),
    );
    m.assert(
        "a_retx_record",
        "BAD_HDR's push and slot write name the NACK's connection, path_id and psn; the write is not a back-off's \
         (it sets queued and charge)",
        implies(
            &retx,
            names(m, "m_retx_conn", "m_retx_path", "m_retx_psn")
                .logic_and(names(m, "m_ring_wr_conn", "m_ring_wr_path", "m_ring_wr_psn"))
                .logic_and(sg(m, "m_ring_wr_rnr").expr().logic_not()),
        ),
    );

    // ------------------------------------------------ payloads
    for (valid, payload) in [
        ("m_unstall_valid", &["m_unstall_conn"][..]),
        ("m_rd_valid", &["m_rd_conn", "m_rd_path", "m_rd_psn"]),
        ("m_evt_valid", &["m_evt_kind", "m_evt_conn", "m_evt_path", "m_evt_now"]),
        (
            "m_ring_wr_valid",
            &[
                "m_ring_wr_conn",
                "m_ring_wr_path",
                "m_ring_wr_psn",
                "m_ring_wr_rnr",
                "m_ring_wr_rnr_count",
                "m_ring_wr_rnr_tag",
            ],
        ),
        ("m_rnr_valid", &["m_rnr_conn", "m_rnr_path", "m_rnr_psn", "m_rnr_until", "m_rnr_tag"]),
        ("m_retx_valid", &["m_retx_conn", "m_retx_path", "m_retx_psn"]),
        ("m_fail_valid", &["m_fail_conn", "m_fail_culprit_valid", "m_fail_status"]),
        ("m_fail_culprit_valid", &["m_fail_culprit_stream", "m_fail_culprit_slot"]),
    ] {
        crate::formal::quiet_without(m, valid, payload);
    }

    // ------------------------------------------------ invariants: the registers hold what the ghosts say
    let ghosts = [&f_conn, &f_path, &f_code, &f_psn, &f_ts];
    step.invariants(m, &f.pipe, (&f.rec, &ghosts), lit(step.agw, 2));

    // ------------------------------------------------ covers
    let pushes_nothing = wr.expr().logic_not();
    m.cover(
        "c_dead_conn",
        "a NACK answered on a failed connection does nothing",
        at_ans.expr().logic_and(sg(m, "s_rd_failed")),
    );
    m.cover(
        "c_stale_path",
        "a NACK of a path_id past npaths is stale",
        stale
            .expr()
            .logic_and(sg(m, "s_rd_npaths").expr().ne(lit(pb + 1, 0)))
            .logic_and(zext(sg(m, "s_rd_npaths"), PATH_ID).le(&f_path)),
    );
    m.cover(
        "c_stale_empty",
        "a NACK of a psn outstanding whose slot is empty is stale",
        stale
            .expr()
            .logic_and(sg(m, "s_ring_valid").expr().logic_not())
            .logic_and(f_psn.expr().ne(sg(m, "s_pm_cum_acked"))),
    );
    m.cover(
        "c_stale_code",
        "an unknown code on a packet outstanding: a NACK event and the stale count",
        stale.expr().logic_and(&ev),
    );
    m.cover("c_no_conn", "NO_CONN fails the connection", fv.expr().logic_and(is(NackCode::NoConn)));
    m.cover(
        "c_access",
        "ACCESS fails the connection, its culprit the slot's request",
        fv.expr().logic_and(is(NackCode::Access)),
    );
    m.cover("c_rnr_fail", "an RNR at RNR_RETRY fails the connection", fv.expr().logic_and(is(NackCode::Rnr)));
    m.cover(
        "c_rnr_backoff",
        "an RNR starts a back-off (an RNR event)",
        rnr.expr().logic_and(sg(m, "m_evt_kind").expr().eq(kind(tel::kind::RNR))),
    );
    m.cover(
        "c_rnr_backoff_resend",
        "an RNR of an RNR resend starts a back-off (a NACK event)",
        rnr.expr().logic_and(sg(m, "m_evt_kind").expr().eq(kind(tel::kind::NACK))),
    );
    m.cover(
        "c_rnr_waiting",
        "an RNR on a slot waiting for a back-off: an event and nothing else",
        ev.expr().logic_and(is(NackCode::Rnr)).logic_and(pushes_nothing.clone()).logic_and(fv.expr().logic_not()),
    );
    m.cover(
        "c_rnr_full",
        "an RNR finds the RNR FIFO full: a NACK event and the count, no back-off",
        rfull.expr().logic_and(sg(m, "m_evt_kind").expr().eq(kind(tel::kind::NACK))),
    );
    m.cover("c_bad_hdr", "BAD_HDR queues the slot, charged", retx.expr());
    m.cover(
        "c_bad_hdr_queued",
        "BAD_HDR on a slot queued already: an event and nothing else",
        ev.expr().logic_and(is(NackCode::BadHdr)).logic_and(pushes_nothing),
    );
    m.cover(
        "c_psn_wrap",
        "a back-off for a psn numerically below cum_acked (the window across 2^24)",
        rnr.expr().logic_and(f_psn.expr().lt(sg(m, "s_pm_cum_acked"))),
    );
    m.cover(
        "c_back_to_back",
        "a second step as soon as tx_ack's count frees the unit, L + 3 cycles after the first",
        go.expr().logic_and(step.age.expr().eq(lit(step.agw, u64::from(l) + 3))),
    );
}
