//! The acknowledgement unit's SACK stages of `tx_engine` as a clocked
//! unit (`tx_stage`): what the model's `sack_stage` does with a SACK's
//! continuation ([`mrnic_model::tx_engine`]), in the steps `tx_ack`
//! starts for it (`m_go_stage`): RACK across paths (`overdue`, with
//! `lost` and the SILENT events of `silent_timeouts`, stopping after a
//! path that showed silent losses), the tail timer (`arm_tail` after a
//! SACK, `probe_tail` when the timer fired), and the finish (the stream's
//! `completed_msn` and the completion walk's start). The unit keeps the
//! continuation (the model's `sack_cont`): `tx_sack` hands a SACK's over
//! (`s_cont_*`, its `m_cont_*`), the tail timer's step starts one
//! (`s_tail_*`), and a failure of its connection makes it dead.
//!
//! # Timing
//! `t` is the step's cycle, `L` the read latency (architecture.md,
//! tx_engine item 14):
//! - **`t`** (`s_go_stage`): the busy count `m_busy` is 1; the context,
//!   every path's mirror and the record's stream's word are read
//!   (`m_rd_*`). The finish starts the completion walk here (`m_done_*`,
//!   `tx_walk`'s `s_done_*`: the continuation has the touched streams);
//!   a dead continuation (its connection failed) does nothing.
//! - **`t + L`** (the answer: `s_rd_*`, `s_lp`, `s_pm_*` as vectors of
//!   the connection's paths): the paths to walk (RACK across paths: from
//!   the continuation's first path, only with a RACK send; the tail
//!   timer's arm: every path, only with nothing left to cut; its PROBEs:
//!   every path with no PROBE pending or queued; all: below `npaths`,
//!   with packets outstanding). The finish's `remote_completed` write
//!   (`m_rc_*`, which clears the window probe).
//! - **The walk**, from `t + L`: a ring read a cycle (`m_ring_rd_*`),
//!   path after path from each path's `cum_acked`, each cycle's a hold of
//!   2 on `tx_ack`'s count (`m_hold_*`). Each read answers `L` cycles
//!   later (`s_ring_*`); an answer that breaks its path's walk (RACK: a
//!   first transmission not lost; the arm: a first transmission; the
//!   PROBE: an overdue packet) moves the reads on to the next path in
//!   that cycle if they are still on it, and answers of that path after
//!   it are ignored. A RACK loss is written queued with its charge
//!   (`m_ring_lost_*`), pushed (`m_retx_*`) and, uncharged, a SILENT
//!   event of its copy's path (`m_evt_*`) while that path has had fewer
//!   than `suspect_after_rtos` this step; once one is found no path after
//!   its path is read and their answers are ignored. A PROBE's break
//!   queues the path's PROBE (`m_probe_*`); the arm keeps the earliest
//!   overdue time.
//! - **The end** (`t + 2L + C - 1` for `C` cycles of reads, `t + L`
//!   without): the tail timer's write (`m_tail_*`) and the continuation's
//!   next stage. The unit frees at `t + L + C + 2` (the last hold's
//!   count), after every write, for `L <= 2`.
//!
//! The model's count is the cycles reads are issued ([`stage_cycles`]),
//! which with `L = 1` is the slots read to each path's break, as before.
//!
//! # Interface with the rest of the engine
//! - The holds go to `tx_ack`'s `s_hold_sack` with `s_hold_cnt` = 2 (a
//!   SACK's hold and a stage's never meet: steps do not overlap).
//! - Every payload is 0 without its valid; SILENT events go to the
//!   unit's pending events, one a cycle.
//!
//! # Formal properties
//! Stated next to the logic (`properties`) and run by `scripts/formal`
//! as the unit `tx_stage` ([`crate::proof::blocks`], [`formal_tasks`]), all
//! by 2-induction (boolector), with the step's ghosts the other handlers
//! share (tx_ack's count left, here raised by the walk's holds, the cycles
//! since the step, the record) and ghosts of the model's `sack_stage`:
//! the continuation (`sack_cont`: loaded from the ports, ended or moved on
//! at a step's end), the answer as read, the paths each stage walks, the
//! reads in flight, the broken paths, the stop, the arm's earliest time.
//! The walk itself is stated from this account over those ghosts and the
//! inputs: the read of each cycle follows the read before (or, at the
//! answer, the first walked path), so the rules hold for walks of any
//! length without unrolling them.
//! - `tx_ack`'s side, assumed: no step in a reset, a step only once
//!   tx_ack's count (the holds included) has run out
//!   (`asm_step_when_free`) and only for a waiting continuation
//!   (`asm_step_with_cont`); a continuation loaded only in another step,
//!   with none waiting, one at a time (`asm_load_when_idle`);
//! - `m_busy` is 1 with the step and 0 otherwise; the step's reads exactly
//!   with it, for the continuation's connection and stream; the
//!   completion walk exactly with a live finish's step with streams
//!   touched; `remote_completed` exactly at a live finish's answer, by
//!   the model's stream and serial tests;
//! - nothing acts but in the walk, from the answer to its end, and only
//!   for a continuation alive at the step; answers of a broken path or
//!   past a stop write, push, queue and raise nothing;
//! - the ring reads: a hold of 2 with each and none else; each of the
//!   connection, on a walked path below `npaths`, below its `next_psn`;
//!   none of a path after a stop, from the cycle the silent loss is
//!   found; exactly the model's walk order (a slot a cycle from each
//!   path's `cum_acked`, the next walked path's first after a path's last
//!   slot or in the cycle an answer breaks the path being read);
//! - a RACK loss exactly at a counted answer sent before RACK's newest
//!   acknowledged send and overdue (`overdue_wait`, signed), with its
//!   path, psn and charge; its push, and no other; SILENT exactly with an
//!   uncharged loss under its path's cap (its copy's path, the step's
//!   `ts_now`), never more than `suspect_after_rtos` a path; a PROBE
//!   exactly at the PROBE stage's first overdue counted slot of a path;
//!   the tail timer exactly at the arm's end with the earliest overdue
//!   time; the continuation the model's at every step's end;
//! - every action and the step's end before tx_ack's count frees the
//!   unit; every payload 0 without its valid;
//! - invariants tying the read pipe, the record, the count, the
//!   continuation, the held answer, the reads in flight, the broken
//!   paths, the stop, the arm's time and the next read to the ghosts
//!   (`a_inv_*`);
//! - covers: a loss charged and a SILENT one, a stop keeping a path
//!   unread and RACK going on after it, a break moving the reads on, an
//!   answer ignored (with `L = 2`: with 1 none is), the arm armed, a PROBE, the finish's walk and
//!   `remote_completed`, a failed connection's step, and a step as soon as
//!   the count frees the unit after a walk.
//!
//! [`stage_cycles`]: mrnic_model::tx_engine::stage_cycles

use mrnic_model::block::PortDef;
use mrnic_model::path_telemetry as tel;
use mrnic_model::tx_engine::TxEngineParams;
use mrnic_proto::tables::path as pt;

use super::ack::busy_bits;
use super::gate;
use super::PSN;
use crate::expr::{cat, fit, index_bits, lit, mux, repl, zext, Expr, Signal};
use crate::ir::{set, Module};

/// Module name.
pub const NAME: &str = "tx_stage";

const RST: &str = "Clock and reset";
const CONT: &str = "The continuation: loads, failures, and what tx_ack sees";
const STEP: &str = "The step (tx_ack m_go_stage)";
const RD: &str = "The step's reads: issued with the step, answered L cycles later";
const RING: &str = "The walk's ring reads, a slot a cycle, answered L cycles later";
const WR: &str = "The stage's writes";

/// Stage codes in the continuation.
const ST_OVERDUE: u64 = 0;
const ST_TAIL: u64 = 1;
const ST_FINISH: u64 = 2;

/// Bits of a slot offset and a span (`0 ..= tx_ring_depth`).
fn d_bits(p: &TxEngineParams) -> u32 {
    index_bits(p.ring_depth) + 1
}

/// The unit's ports, in declaration order.
pub fn ports(p: &TxEngineParams) -> Vec<PortDef> {
    let (cb, sb, np) = (p.conn_bits, p.stream_bits, p.paths);
    let pb = index_bits(p.paths);
    let bb = busy_bits(p);
    let streams = p.streams;
    let i = |nm: &str, w: u32, g: &'static str, c: &str| PortDef::input(nm, w, g, c);
    let o = |nm: &str, w: u32, g: &'static str, c: &str| PortDef::output(nm, w, g, c);
    vec![
        i("rst", 1, RST, "synchronous reset, active high"),
        i("ts_now", 32, RST, "timestamp"),
        i("s_cont_valid", 1, CONT, "tx_sack hands a SACK's continuation over (its m_cont_valid)"),
        i("s_cont_conn", cb, CONT, "its connection"),
        i("s_cont_wait", 1, CONT, "SILENT events were sent: its next stage waits"),
        i("s_cont_touched", streams, CONT, "the streams a packet was acknowledged of"),
        i("s_cont_stream_id", 8, CONT, "the SACK's stream_id"),
        i("s_cont_completed_msn", PSN, CONT, "the SACK's completed_msn"),
        i("s_tail_valid", 1, CONT, "the tail timer's step found it due: its stages start"),
        i("s_tail_conn", cb, CONT, "its connection"),
        i("s_fail_valid", 1, CONT, "a connection fails this cycle (tx_walk's s_fail_*)"),
        i("s_fail_conn", cb, CONT, "which"),
        o("m_cont_valid", 1, CONT, "a SACK is between its stages (tx_ack s_cont_valid)"),
        o("m_cont_next", 1, CONT, "m_cont_valid after this edge (a setup is taken only with none between stages)"),
        o("m_cont_wait", 1, CONT, "its next stage waits for path_telemetry (tx_ack s_cont_wait)"),
        i("s_go_stage", 1, STEP, "tx_ack starts the continuation's next stage"),
        o("m_busy", bb, STEP, "the busy count the stage sets (tx_ack s_busy; 1 with the step, 0 without)"),
        o("m_done_valid", 1, WR, "the finish starts the completion walk (tx_walk s_done_valid)"),
        o("m_done_conn", cb, WR, "its connection"),
        o("m_done_touched", streams, WR, "the streams it visits"),
        o("m_rd_valid", 1, RD, "the context, every path's mirror and the stream's word are read"),
        o("m_rd_conn", cb, RD, "the connection"),
        o("m_rd_stream", sb, RD, "the stream (the SACK's stream_id's low bits)"),
        i("s_rd_npaths", pb + 1, RD, "the connection's paths, L cycles after m_rd_valid"),
        i("s_rd_rack_valid", 1, RD, "RACK across paths has a send"),
        i("s_rd_rack_sent", 32, RD, "its newest acknowledged send"),
        i("s_rd_rack_rtt", 32, RD, "and its RTT"),
        i("s_rd_pend", 1, RD, "some stream has bytes to cut (pend_streams != 0)"),
        i("s_rd_probe_q", np, RD, "paths with a PROBE queued"),
        i("s_rd_remote_completed", PSN, RD, "the stream's remote_completed"),
        i("s_lp", np * 32, RD, "last_progress of each path, path 0 in the low bits"),
        i(
            "s_pm_next_psn",
            np * d_bits(p),
            RD,
            "each path's next psn, its low bits (the span is at most tx_ring_depth)",
        ),
        i("s_pm_cum_acked", np * PSN, RD, "each path's cumulative acknowledged psn"),
        i("s_pm_srtt", np * pt::SRTT.width, RD, "each path's srtt"),
        i("s_pm_rttvar", np * pt::RTTVAR.width, RD, "each path's rttvar"),
        i("s_pm_probe_pending", np, RD, "each path's PROBE waits for its answer"),
        o("m_hold_valid", 1, WR, "a ring read is issued: tx_ack's count held (s_hold_sack)"),
        o("m_hold_cnt", bb, WR, "at least 2 (s_hold_cnt)"),
        o("m_ring_rd_valid", 1, RING, "a ring slot is read"),
        o("m_ring_rd_conn", cb, RING, "its connection"),
        o("m_ring_rd_path", pb, RING, "its path"),
        o("m_ring_rd_psn", PSN, RING, "its psn"),
        i("s_ring_valid", 1, RING, "the slot holds a packet, L cycles after m_ring_rd_valid"),
        i("s_ring_queued", 1, RING, "it is queued for retransmission"),
        i("s_ring_rnr_wait", 1, RING, "it waits for an RNR back-off"),
        i("s_ring_resent", 1, RING, "it was retransmitted for loss"),
        i("s_ring_sent", 32, RING, "its last send time"),
        i("s_ring_phys", pb, RING, "the path its last copy left by"),
        o("m_ring_lost_valid", 1, WR, "a lost slot is written queued, its charge with it"),
        o("m_ring_lost_path", pb, WR, "its path (the stage's connection)"),
        o("m_ring_lost_psn", PSN, WR, "its psn"),
        o("m_ring_lost_charge", 1, WR, "charged: its copy's path made progress after it left"),
        o("m_retx_valid", 1, WR, "the lost slot is pushed into the retransmit queue"),
        o("m_retx_conn", cb, WR, "its connection"),
        o("m_retx_path", pb, WR, "its path"),
        o("m_retx_psn", PSN, WR, "its psn"),
        o("m_evt_valid", 1, WR, "a SILENT event is pending"),
        o("m_evt_kind", tel::KIND_BITS, WR, "SILENT"),
        o("m_evt_conn", cb, WR, "its connection"),
        o("m_evt_path", pb, WR, "the lost copy's path"),
        o("m_evt_now", tel::TS_BITS, WR, "the step's timestamp"),
        o("m_probe_valid", 1, WR, "the tail timer queues a PROBE (probe_q bit set, PROBE queue pushed)"),
        o("m_probe_conn", cb, WR, "its connection"),
        o("m_probe_path", pb, WR, "its path"),
        o("m_tail_valid", 1, WR, "the tail timer is written"),
        o("m_tail_conn", cb, WR, "its connection"),
        o("m_tail_armed", 1, WR, "armed (else cleared)"),
        o("m_tail_at", 32, WR, "its deadline"),
        o("m_rc_valid", 1, WR, "the stream's remote_completed moves on and the window probe is cleared"),
        o("m_rc_conn", cb, WR, "its connection"),
        o("m_rc_stream", sb, WR, "the stream"),
        o("m_rc_msn", PSN, WR, "the new remote_completed"),
    ]
}

/// The lowest set bit of `mask` above path `q` (any, with `q` None), and
/// whether there is one.
fn first_above(mask: &Signal, q: Option<Expr>, paths: u32, pb: u32) -> (Expr, Expr) {
    let mut at = lit(pb, 0);
    let mut any = lit(1, 0);
    for i in (0..paths).rev() {
        let ok = match &q {
            // No path is above another and below 0.
            Some(_) if i == 0 => continue,
            Some(q) => mask.bit(i).logic_and(lit(pb, u64::from(i)).gt(q.clone())),
            None => mask.bit(i),
        };
        at = mux(ok.clone(), lit(pb, u64::from(i)), at);
        any = any.logic_or(ok);
    }
    (at, any)
}

/// The `tx_stage` module for `p`.
pub fn build(p: &TxEngineParams) -> Module {
    let (cb, sb, l, np) = (p.conn_bits, p.stream_bits, p.read_latency, p.paths);
    let pb = index_bits(p.paths);
    let bb = busy_bits(p);
    let db = d_bits(p);
    let streams = p.streams;
    let (sw, vw) = (pt::SRTT.width, pt::RTTVAR.width);
    assert!((1..=2).contains(&l), "the last write lands before the count frees the unit only for L <= 2");
    assert!(np <= 32, "paths fit the model's 32-bit masks");

    let mut m = Module::new(NAME);
    m.describe("tx_engine acknowledgement unit's SACK stages: RACK across paths, the tail timer, the finish");
    let defs = ports(p);
    let (clk, sig) = crate::ports::declare(&mut m, &defs);
    let sg = |nm: &str| sig[nm].clone();
    m.clock_domain(&clk, &sg("rst"));
    let w = |m: &mut Module, nm: &str, width: u32, c: &str, e: Expr| m.wire_from(nm, width, c, e);

    // ------------------------------------------------------------ the continuation
    let c_valid = m.reg("cont_valid", 1, 0, "a continuation waits");
    let c_conn = m.reg_no_reset("cont_conn", cb, "its connection");
    let c_stage = m.reg_no_reset("cont_stage", 2, "its next stage: RACK across paths, the tail timer, the finish");
    let c_first = m.reg_no_reset("cont_first", pb, "RACK across paths: the first path");
    let c_wait = m.reg_no_reset("cont_wait", 1, "its next stage waits for path_telemetry's answers");
    let c_tail = m.reg_no_reset("cont_tail", 1, "the tail timer's stages, not a SACK's");
    let c_touched = m.reg_no_reset("cont_touched", streams, "the streams a packet was acknowledged of");
    let c_sid = m.reg_no_reset("cont_stream_id", 8, "the SACK's stream_id");
    let c_msn = m.reg_no_reset("cont_completed_msn", PSN, "the SACK's completed_msn");
    let c_dead = m.reg_no_reset("cont_dead", 1, "its connection has failed: its stages do nothing");
    m.assign(sg("m_cont_valid"), &c_valid.q);
    m.assign(sg("m_cont_wait"), c_valid.q.expr().logic_and(&c_wait.q));

    // ------------------------------------------------------------ the step
    let go = sg("s_go_stage");
    m.assign(sg("m_busy"), mux(&go, lit(bb, 1), lit(bb, 0)));
    m.assign(sg("m_rd_valid"), &go);
    m.assign(sg("m_rd_conn"), gate(&go, c_conn.q.expr(), cb));
    m.assign(sg("m_rd_stream"), gate(&go, c_sid.q.slice(sb - 1, 0), sb));
    // The step's stage, held until the next step.
    let rec = |m: &mut Module, nm: &str, e: Expr, width: u32, c: &str| {
        let r = m.reg_no_reset(nm, width, c);
        m.next(set(&r.next, mux(&go, e, r.q.expr())));
        r.q
    };
    let st = c_stage.q.expr();
    let live = c_dead.q.expr().logic_not();
    let k_ov = rec(&mut m, "k_overdue", live.clone().logic_and(st.clone().eq(lit(2, ST_OVERDUE))), 1, "RACK");
    let k_arm = rec(
        &mut m,
        "k_arm",
        live.clone().logic_and(st.clone().eq(lit(2, ST_TAIL))).logic_and(c_tail.q.expr().logic_not()),
        1,
        "the tail timer's arm",
    );
    let k_probe = rec(
        &mut m,
        "k_probe",
        live.clone().logic_and(st.clone().eq(lit(2, ST_TAIL))).logic_and(&c_tail.q),
        1,
        "the tail timer's PROBEs",
    );
    let k_fin = rec(&mut m, "k_finish", live.clone().logic_and(st.clone().eq(lit(2, ST_FINISH))), 1, "the finish");
    let r_ts = rec(&mut m, "rec_ts", sg("ts_now").expr(), 32, "ts_now in the step's cycle");
    // The finish's walk starts with the step (the model's `complete`).
    let touched_any = c_touched.q.expr().reduce_or();
    let done = w(
        &mut m,
        "done",
        1,
        "the finish starts the completion walk",
        go.expr().logic_and(live.clone()).logic_and(st.eq(lit(2, ST_FINISH))).logic_and(touched_any),
    );
    m.assign(sg("m_done_valid"), &done);
    m.assign(sg("m_done_conn"), gate(&done, c_conn.q.expr(), cb));
    m.assign(sg("m_done_touched"), gate(&done, c_touched.q.expr(), streams));

    // ------------------------------------------------------------ the answer
    let (rd_pipe, ans) = super::read_answer(&mut m, &go, l);
    let held = |m: &mut Module, nm: &str, e: Expr, width: u32, c: &str| super::held(m, &ans, nm, e, width, c);
    let hp = |m: &mut Module, nm: &str, port: &str, c: &str| {
        let width = sig[port].width();
        held(m, nm, sig[port].expr(), width, c)
    };
    let rack_sent = hp(&mut m, "rack_sent", "s_rd_rack_sent", "RACK's newest send");
    let rack_rtt = hp(&mut m, "rack_rtt", "s_rd_rack_rtt", "RACK's RTT");
    let lp = hp(&mut m, "lp", "s_lp", "the paths' last_progress");
    let cum = hp(&mut m, "cum", "s_pm_cum_acked", "the paths' cumulative psns");
    let srtt = hp(&mut m, "srtt", "s_pm_srtt", "the paths' srtt");
    let rttvar = hp(&mut m, "rttvar", "s_pm_rttvar", "the paths' rttvar");
    let npaths = sg("s_rd_npaths");
    let next = sg("s_pm_next_psn");
    let cum_p = sg("s_pm_cum_acked");
    // The paths to walk, from the answer.
    let mut spans = Vec::new();
    let mut bits = Vec::new();
    for q in 0..np {
        let span = w(
            &mut m,
            &format!("span_{q}"),
            db,
            "psns outstanding on the path (at most tx_ring_depth: the low bits' difference is the whole)",
            next.slice(db * q + db - 1, db * q) - cum_p.slice(PSN * q + db - 1, PSN * q),
        );
        let qn = lit(pb + 1, u64::from(q));
        let base = qn.clone().lt(npaths.expr()).logic_and(span.expr().ne(lit(db, 0)));
        // Every path is at or above the first when it is the last a
        // first path's bits can name.
        let from = if u64::from(q) == (1 << pb) - 1 { lit(1, 1) } else { c_first.q.expr().le(lit(pb, u64::from(q))) };
        let ov = k_ov.expr().logic_and(sg("s_rd_rack_valid")).logic_and(from);
        let arm = k_arm.expr().logic_and(sg("s_rd_pend").expr().logic_not());
        let probe = k_probe
            .expr()
            .logic_and(sg("s_pm_probe_pending").bit(q).logic_not())
            .logic_and(sg("s_rd_probe_q").bit(q).logic_not());
        bits.push(base.logic_and(ov.logic_or(arm).logic_or(probe)));
        spans.push(span);
    }
    bits.reverse();
    let mask = held(&mut m, "mask", cat(&bits), np, "the paths the stage walks");
    let span_v = held(
        &mut m,
        "spans",
        cat(&spans.iter().rev().map(|s| s.expr()).collect::<Vec<_>>()),
        np * db,
        "each path's span",
    );
    // The stream's remote_completed: the finish.
    let sid_ok = c_sid.q.expr().lt(lit(8, u64::from(streams)));
    let rc_d = w(
        &mut m,
        "rc_diff",
        PSN,
        "completed_msn - remote_completed",
        c_msn.q.expr() - sg("s_rd_remote_completed").expr(),
    );
    let rc_move = w(
        &mut m,
        "rc_move",
        1,
        "the finish moves the stream's remote_completed on",
        ans.expr()
            .logic_and(&k_fin)
            .logic_and(sid_ok)
            .logic_and(rc_d.expr().ne(lit(PSN, 0)))
            .logic_and(rc_d.bit(PSN - 1).logic_not()),
    );
    m.assign(sg("m_rc_valid"), &rc_move);
    m.assign(sg("m_rc_conn"), gate(&rc_move, c_conn.q.expr(), cb));
    m.assign(sg("m_rc_stream"), gate(&rc_move, c_sid.q.slice(sb - 1, 0), sb));
    m.assign(sg("m_rc_msn"), gate(&rc_move, c_msn.q.expr(), PSN));

    // ------------------------------------------------------------ the walk
    let act_r = m.reg("active", 1, 0, "a stage's walk runs (from the answer to its end)");
    let active = w(&mut m, "active_now", 1, "the walk runs this cycle", ans.expr().logic_or(&act_r.q));
    let ip_r = m.reg_no_reset("ip", pb, "the path the next read is of");
    let id_r = m.reg_no_reset("id", db, "its offset");
    let iv_r = m.reg_no_reset("iv", 1, "a path is left to read");
    let (f_at, f_any) = first_above(&mask, None, np, pb);
    let ip0 = w(&mut m, "ip_cur", pb, "the path the reads are on", mux(&ans, f_at, ip_r.q.expr()));
    let id0 = w(&mut m, "id_cur", db, "the offset", mux(&ans, lit(db, 0), id_r.q.expr()));
    let iv0 = w(&mut m, "iv_cur", 1, "a path is left to read", mux(&ans, f_any, iv_r.q.expr()));
    // The reads in flight: (valid, path, offset), the oldest in stage L - 1.
    let pv = m.reg("pipe_v", l, 0, "ring reads in flight");
    let pp = m.reg_no_reset("pipe_path", l * pb, "their paths");
    let pd = m.reg_no_reset("pipe_d", l * db, "their offsets");
    let a_v = w(&mut m, "a_valid", 1, "a walk read answers", pv.q.bit(l - 1));
    let a_p = w(&mut m, "a_path", pb, "its path", pp.q.slice(l * pb - 1, (l - 1) * pb));
    let a_d = w(&mut m, "a_d", db, "its offset", pd.q.slice(l * db - 1, (l - 1) * db));
    let dead_r = m.reg_no_reset("broken_r", np, "paths whose walk broke");
    let broken = w(&mut m, "broken", np, "paths whose walk broke", mux(&ans, lit(np, 0), dead_r.q.expr()));
    let stop_r = m.reg_no_reset("stop_r", 1, "RACK found a silent loss: no later path");
    let stop_pr = m.reg_no_reset("stop_path_r", pb, "its path");
    let stop0 = w(&mut m, "stop", 1, "a silent loss was found", mux(&ans, lit(1, 0), stop_r.q.expr()));
    let a_live = w(
        &mut m,
        "a_live",
        1,
        "the answer counts: its path's walk has not broken, nor is it past a stop",
        a_v.expr()
            .logic_and(broken.expr().bit_at(a_p.expr()).logic_not())
            .logic_and(stop0.expr().logic_and(a_p.expr().gt(stop_pr.q.expr())).logic_not()),
    );
    // The answered slot.
    let slot_live = w(
        &mut m,
        "slot_live",
        1,
        "the slot holds a packet neither queued nor waiting for an RNR back-off",
        a_live
            .expr()
            .logic_and(sg("s_ring_valid"))
            .logic_and(sg("s_ring_queued").expr().logic_not())
            .logic_and(sg("s_ring_rnr_wait").expr().logic_not()),
    );
    let a_srtt = w(&mut m, "a_srtt", 32, "its path's srtt", zext(super::pick(&srtt, &a_p.expr(), np, sw, sw), 32));
    let a_var = w(&mut m, "a_rttvar", 32, "its path's rttvar", zext(super::pick(&rttvar, &a_p.expr(), np, vw, vw), 32));
    let wait = w(
        &mut m,
        "overdue_wait",
        32,
        "how long past its send a packet of the path is overdue",
        mux(a_srtt.expr().ge(rack_rtt.expr()), a_srtt.expr(), rack_rtt.expr())
            + mux(
                (a_var.expr() << lit(2, 2)).gt(a_srtt.expr() >> lit(1, 1)),
                a_var.expr() << lit(2, 2),
                a_srtt.expr() >> lit(1, 1),
            ),
    );
    let sent = sg("s_ring_sent");
    let age = w(&mut m, "age", 32, "ts - sent", r_ts.expr() - sent.expr());
    let sign = lit(32, 1 << 31);
    let overdue = w(
        &mut m,
        "overdue",
        1,
        "the packet is overdue (signed compare of its age with the wait)",
        (age.expr() ^ sign.clone()).ge(wait.expr() ^ sign),
    );
    let rack_after = super::seq32_after(&mut m, "rack_diff", rack_sent.expr(), sent.expr());
    let lost = w(
        &mut m,
        "lost",
        1,
        "RACK: sent before RACK's newest acknowledged send and overdue: lost",
        k_ov.expr().logic_and(&slot_live).logic_and(rack_after).logic_and(&overdue),
    );
    let first_tx = slot_live.expr().logic_and(sg("s_ring_resent").expr().logic_not());
    let brk = w(
        &mut m,
        "brk",
        1,
        "the answer breaks its path's walk",
        mux(&k_probe, slot_live.expr().logic_and(&overdue), first_tx.logic_and(lost.expr().logic_not())),
    );
    let phys = sg("s_ring_phys");
    let lp_phys =
        w(&mut m, "phys_progress", 32, "last_progress of the copy's path", super::pick(&lp, &phys.expr(), np, 32, 32));
    let charge = super::seq32_after(&mut m, "charge_diff", lp_phys.expr(), sent.expr());
    let charge = w(&mut m, "charge", 1, "the loss is charged", charge);
    let uncharged = w(
        &mut m,
        "uncharged",
        1,
        "an uncharged loss: the silent path's timeout",
        lost.expr().logic_and(charge.expr().logic_not()),
    );
    let (silent, silent_counts) =
        super::silent_cap(&mut m, &ans, &uncharged, &phys, np, p.cfg.timers.suspect_after_rtos);
    let stop = w(&mut m, "stop_now", 1, "a silent loss is known", stop0.expr().logic_or(&uncharged));
    let stop_p = w(&mut m, "stop_path", pb, "its path", mux(&stop0, stop_pr.q.expr(), a_p.expr()));
    m.next(set(&stop_r.next, stop.expr()));
    m.next(set(&stop_pr.next, stop_p.expr()));
    let hot: Vec<Expr> = (0..np).rev().map(|q| a_p.expr().eq(lit(pb, u64::from(q)))).collect();
    let brk_now = w(&mut m, "brk_now", 1, "a path's walk breaks", brk.expr());
    m.next(set(&dead_r.next, broken.expr() | (crate::expr::repl(np, brk_now.expr()) & cat(&hot))));
    // The read this cycle: the next path's first if the break is of the
    // path being read.
    let (n_at, n_any) = first_above(&mask, Some(a_p.expr()), np, pb);
    let moves = w(
        &mut m,
        "moves_on",
        1,
        "the break is of the path being read",
        brk_now.expr().logic_and(&iv0).logic_and(ip0.expr().eq(a_p.expr())),
    );
    let e_ip = w(&mut m, "eff_ip", pb, "the path read this cycle", mux(&moves, n_at, ip0.expr()));
    let e_id = w(&mut m, "eff_id", db, "its offset", mux(&moves, lit(db, 0), id0.expr()));
    let e_iv = w(&mut m, "eff_iv", 1, "a path is left to read", mux(&moves, n_any, iv0.expr()));
    let issue = w(
        &mut m,
        "issue",
        1,
        "a slot is read",
        active.expr().logic_and(&e_iv).logic_and(stop.expr().logic_and(e_ip.expr().gt(stop_p.expr())).logic_not()),
    );
    let e_span = w(&mut m, "eff_span", db, "its path's span", super::pick(&span_v, &e_ip.expr(), np, db, db));
    let e_cum = w(&mut m, "eff_cum", PSN, "its path's cumulative psn", super::pick(&cum, &e_ip.expr(), np, PSN, PSN));
    let last =
        w(&mut m, "last_of_path", 1, "the read is the path's last", (e_id.expr() + lit(db, 1)).eq(e_span.expr()));
    let (l_at, l_any) = first_above(&mask, Some(e_ip.expr()), np, pb);
    m.next(set(&ip_r.next, mux(issue.expr().logic_and(&last), l_at, e_ip.expr())));
    m.next(set(&id_r.next, mux(&issue, mux(&last, lit(db, 0), e_id.expr() + lit(db, 1)), e_id.expr())));
    m.next(set(&iv_r.next, mux(issue.expr().logic_and(&last), l_any, e_iv.expr())));
    let conn = c_conn.q.expr();
    m.assign(sg("m_ring_rd_valid"), &issue);
    m.assign(sg("m_ring_rd_conn"), gate(&issue, conn.clone(), cb));
    m.assign(sg("m_ring_rd_path"), gate(&issue, e_ip.expr(), pb));
    m.assign(sg("m_ring_rd_psn"), gate(&issue, e_cum.expr() + zext(e_id.expr(), PSN), PSN));
    m.assign(sg("m_hold_valid"), &issue);
    m.assign(sg("m_hold_cnt"), gate(&issue, lit(bb, 2), bb));
    // The pipe: stage 0 takes this cycle's read.
    let (nv, npp, npd) = if l == 1 {
        (issue.expr(), e_ip.expr(), e_id.expr())
    } else {
        (
            cat(&[pv.q.slice(l - 2, 0), issue.expr()]),
            cat(&[pp.q.slice((l - 1) * pb - 1, 0), e_ip.expr()]),
            cat(&[pd.q.slice((l - 1) * db - 1, 0), e_id.expr()]),
        )
    };
    m.next(set(&pv.next, nv));
    m.next(set(&pp.next, npp));
    m.next(set(&pd.next, npd));
    // The end: nothing read this cycle and nothing in flight after it.
    let later = if l == 1 { lit(1, 0) } else { pv.q.slice(l - 2, 0).reduce_or() };
    let fin = w(
        &mut m,
        "fin",
        1,
        "the walk's last answer (or the answer with nothing to read)",
        active.expr().logic_and(issue.expr().logic_not()).logic_and(later.logic_not()),
    );
    m.next(set(&act_r.next, active.expr().logic_and(fin.expr().logic_not())));

    // ------------------------------------------------------------ the writes
    let a_psn = w(
        &mut m,
        "a_psn",
        PSN,
        "the answered slot's psn",
        super::pick(&cum, &a_p.expr(), np, PSN, PSN) + zext(a_d.expr(), PSN),
    );
    m.assign(sg("m_ring_lost_valid"), &lost);
    m.assign(sg("m_ring_lost_path"), gate(&lost, a_p.expr(), pb));
    m.assign(sg("m_ring_lost_psn"), gate(&lost, a_psn.expr(), PSN));
    m.assign(sg("m_ring_lost_charge"), lost.expr().logic_and(&charge));
    m.assign(sg("m_retx_valid"), &lost);
    m.assign(sg("m_retx_conn"), gate(&lost, conn.clone(), cb));
    m.assign(sg("m_retx_path"), gate(&lost, a_p.expr(), pb));
    m.assign(sg("m_retx_psn"), gate(&lost, a_psn.expr(), PSN));
    m.assign(sg("m_evt_valid"), &silent);
    m.assign(sg("m_evt_kind"), gate(&silent, lit(tel::KIND_BITS, u64::from(tel::kind::SILENT)), tel::KIND_BITS));
    m.assign(sg("m_evt_conn"), gate(&silent, conn.clone(), cb));
    m.assign(sg("m_evt_path"), gate(&silent, phys.expr(), pb));
    m.assign(sg("m_evt_now"), gate(&silent, r_ts.expr(), 32));
    let probe = w(&mut m, "probe", 1, "the tail timer's PROBE of the path", k_probe.expr().logic_and(&brk_now));
    m.assign(sg("m_probe_valid"), &probe);
    m.assign(sg("m_probe_conn"), gate(&probe, conn.clone(), cb));
    m.assign(sg("m_probe_path"), gate(&probe, a_p.expr(), pb));
    // The arm: the earliest overdue time in the walk's order.
    let at_vr = m.reg_no_reset("tail_armed_r", 1, "an overdue time was found");
    let at_r = m.reg_no_reset("tail_at_r", 32, "the earliest");
    let at_v0 = mux(&ans, lit(1, 0), at_vr.q.expr());
    let at0 = w(&mut m, "tail_at_cur", 32, "the earliest so far", mux(&ans, lit(32, 0), at_r.q.expr()));
    let t_cand = w(&mut m, "tail_cand", 32, "the slot's overdue time", sent.expr() + wait.expr());
    let t_d = w(
        &mut m,
        "tail_cand_earlier",
        1,
        "before the earliest in 32-bit serial order (the difference's sign)",
        (t_cand.expr() - at0.expr()).ge(lit(32, 1 << 31)),
    );
    let takes = w(
        &mut m,
        "tail_takes",
        1,
        "the slot's time is the earliest",
        k_arm.expr().logic_and(&slot_live).logic_and(at_v0.clone().logic_not().logic_or(&t_d)),
    );
    let at_v = w(&mut m, "tail_armed", 1, "an overdue time was found", at_v0.logic_or(&takes));
    let at = w(&mut m, "tail_at", 32, "the earliest overdue time", mux(&takes, t_cand.expr(), at0.expr()));
    m.next(set(&at_vr.next, at_v.expr()));
    m.next(set(&at_r.next, at.expr()));
    let tail_wr = w(&mut m, "tail_write", 1, "the arm writes the tail timer", fin.expr().logic_and(&k_arm));
    m.assign(sg("m_tail_valid"), &tail_wr);
    m.assign(sg("m_tail_conn"), gate(&tail_wr, conn, cb));
    m.assign(sg("m_tail_armed"), tail_wr.expr().logic_and(&at_v));
    m.assign(sg("m_tail_at"), gate(tail_wr.expr().logic_and(&at_v), at.expr(), 32));

    // ------------------------------------------------------------ the continuation's next
    // RACK: the path after a stop, if any, else the tail timer; the arm:
    // the finish; the rest end it.
    let stop_next =
        w(&mut m, "stop_next", pb + 1, "the path after the stop", zext(stop_p.expr(), pb + 1) + lit(pb + 1, 1));
    let np_held = held(&mut m, "npaths", npaths.expr(), pb + 1, "the connection's paths");
    let again = w(
        &mut m,
        "overdue_again",
        1,
        "RACK goes on from the path after the stop",
        stop.expr().logic_and(stop_next.expr().lt(np_held.expr())),
    );
    let keeps = fin.expr().logic_and(k_ov.expr().logic_or(&k_arm));
    let ends = fin.expr().logic_and(keeps.clone().logic_not());
    let stage_next = mux(&k_arm, lit(2, ST_FINISH), mux(&again, lit(2, ST_OVERDUE), lit(2, ST_TAIL)));
    let fails_now = |conn: Expr| sg("s_fail_valid").expr().logic_and(sg("s_fail_conn").expr().eq(conn));
    let load_s = sg("s_cont_valid");
    let load_t = sg("s_tail_valid");
    let load = load_s.expr().logic_or(&load_t);
    let l_conn = w(
        &mut m,
        "load_conn",
        cb,
        "the loaded continuation's connection",
        mux(&load_s, sg("s_cont_conn"), sg("s_tail_conn")),
    );
    let c_after = m.wire_from(
        "cont_after",
        1,
        "a continuation waits after this edge",
        mux(load.clone(), lit(1, 1), mux(ends, lit(1, 0), c_valid.q.expr())),
    );
    m.next(set(&c_valid.next, c_after.expr()));
    m.assign(sg("m_cont_next"), &c_after);
    m.next(set(&c_conn.next, mux(load.clone(), l_conn.expr(), c_conn.q.expr())));
    m.next(set(&c_stage.next, mux(load.clone(), lit(2, ST_OVERDUE), mux(keeps.clone(), stage_next, c_stage.q.expr()))));
    m.next(set(
        &c_first.next,
        mux(load.clone(), lit(pb, 0), mux(keeps.clone(), stop_next.slice(pb - 1, 0), c_first.q.expr())),
    ));
    m.next(set(
        &c_wait.next,
        mux(
            load.clone(),
            load_s.expr().logic_and(sg("s_cont_wait")),
            mux(keeps.clone(), k_ov.expr().logic_and(&stop), c_wait.q.expr()),
        ),
    ));
    m.next(set(&c_tail.next, mux(load.clone(), load_s.expr().logic_not(), c_tail.q.expr())));
    m.next(set(
        &c_touched.next,
        mux(&load_s, sg("s_cont_touched").expr(), mux(&load_t, lit(streams, 0), c_touched.q.expr())),
    ));
    m.next(set(&c_sid.next, mux(&load_s, sg("s_cont_stream_id").expr(), mux(&load_t, lit(8, 0xff), c_sid.q.expr()))));
    m.next(set(
        &c_msn.next,
        mux(&load_s, sg("s_cont_completed_msn").expr(), mux(&load_t, lit(PSN, 0), c_msn.q.expr())),
    ));
    m.next(set(
        &c_dead.next,
        mux(load, fails_now(l_conn.expr()), c_dead.q.expr().logic_or(fails_now(c_conn.q.expr()))),
    ));
    let inner = Inner {
        pipe: rd_pipe,
        rec: vec![k_ov, k_arm, k_probe, k_fin, r_ts],
        cont: [c_valid.q, c_conn.q, c_stage.q, c_first.q, c_wait.q, c_tail.q, c_touched.q, c_sid.q, c_msn.q, c_dead.q],
        active: act_r.q,
        pipe_v: pv.q,
        pipe_path: pp.q,
        pipe_d: pd.q,
        pos: [iv_r.q, ip_r.q, id_r.q],
        broken: dead_r.q,
        stop: [stop_r.q, stop_pr.q],
        tail: [at_vr.q, at_r.q],
        held: [rack_sent, rack_rtt, lp, cum, srtt, rttvar, mask, span_v, np_held],
        silent_counts,
    };
    properties(&mut m, p, &inner);
    m
}

/// The unit's registers and held answers its formal properties tie to
/// their ghosts (the invariants that let induction close).
struct Inner {
    /// The step's reads in flight.
    pipe: Signal,
    /// The step's record: RACK, the arm, the PROBEs, the finish, `ts_now`.
    rec: Vec<Signal>,
    /// The continuation: valid, connection, stage, first path, wait, tail,
    /// touched, stream_id, completed_msn, dead.
    cont: [Signal; 10],
    /// The walk runs (after the answer's cycle).
    active: Signal,
    /// The ring reads in flight: valid, path, offset.
    pipe_v: Signal,
    pipe_path: Signal,
    pipe_d: Signal,
    /// The next read: a path left, its path, its offset.
    pos: [Signal; 3],
    /// The paths whose walk broke.
    broken: Signal,
    /// A silent loss was found, and its path.
    stop: [Signal; 2],
    /// The arm's earliest overdue time so far: found, and the time.
    tail: [Signal; 2],
    /// The held answer: RACK's send and RTT, last_progress, cum_acked,
    /// srtt, rttvar, the paths walked, their spans, npaths.
    held: [Signal; 9],
    /// The SILENT events sent this step per path (`silent_cap`).
    silent_counts: Signal,
}

/// The `tx_stage` module for `cfg`'s engine parameters, for the proofs
/// ([`crate::proof::blocks`]).
pub fn generate(cfg: &mrnic_proto::Config) -> Result<Module, String> {
    let p = TxEngineParams::from_config(cfg).map_err(|e| e.to_string())?;
    Ok(build(&p))
}

/// The unit's proof tasks, with boolector ([`crate::proof::boolector_tasks`]):
/// every assertion by 2-induction, and the covers to [`COVER_DEPTH`] cycles.
pub fn formal_tasks(_asserts: &[String]) -> Vec<crate::proof::Task> {
    crate::proof::boolector_tasks(2, COVER_DEPTH)
}

/// The cover depth: the reset, a tail timer's continuation loaded, its
/// RACK step and, as soon as tx_ack's count frees the unit, its PROBE
/// step's walk over a path (`L = 2`: two steps of `2 L + 3` cycles).
pub const COVER_DEPTH: u32 = 18;

/// The unit's formal properties (see the module's `# Formal properties`).
fn properties(m: &mut Module, p: &TxEngineParams, f: &Inner) {
    use super::{field, pick};
    use crate::formal::{implies, port, quiet_without};
    use crate::ir::{if_else, if_then};
    let (cb, l, np, streams) = (p.conn_bits, p.read_latency, p.paths, p.streams);
    let pb = index_bits(np);
    let bb = busy_bits(p);
    let db = d_bits(p);
    let (sw, vw) = (pt::SRTT.width, pt::RTTVAR.width);
    let sg = |m: &Module, nm: &str| port(m, nm);
    let rst = sg(m, "rst");
    let go = sg(m, "s_go_stage");
    let rd = sg(m, "m_ring_rd_valid");
    let (load_s, load_t) = (sg(m, "s_cont_valid"), sg(m, "s_tail_valid"));

    // ------------------------------------------------ tx_ack's side, assumed
    m.assume(
        "asm_no_step_in_reset",
        "no step starts in a reset (tx_ack is reset with the unit)",
        implies(&rst, go.expr().logic_not()),
    );
    // The age tells apart the cycles up to the answer and the count's end
    // without reads (L + 2); the walk, as long as the spans, has ghosts of
    // its own.
    let most = u64::from(l) + 3;
    let hold = (sg(m, "m_hold_valid").expr(), sg(m, "m_hold_cnt").expr());
    let step = super::step::ghosts_held(m, go.expr(), bb, l, most, Some(hold));
    let (age, agw, at_ans, wait) = (step.age.clone(), step.agw, step.at_answer.clone(), step.wait.clone());
    m.assume(
        "asm_step_with_cont",
        "tx_ack starts a stage only for a continuation that waits (its s_cont_valid is m_cont_valid)",
        implies(&go, sg(m, "m_cont_valid")),
    );
    m.assume(
        "asm_load_when_idle",
        "a continuation is loaded (a SACK's end, a tail timer's step) only in another step, so with tx_ack's \
         count for the latest stage run out and no step of this unit, one at a time, and only with none waiting \
         (a waiting continuation's stage comes before a SACK and the tail timer's hit)",
        implies(
            load_s.expr().logic_or(&load_t),
            wait.expr()
                .eq(lit(bb, 0))
                .logic_and(go.expr().logic_not())
                .logic_and(sg(m, "m_cont_valid").expr().logic_not())
                .logic_and(load_s.expr().logic_and(&load_t).logic_not()),
        ),
    );

    // ------------------------------------------------ ghosts: the continuation (the model's sack_cont)
    let gc = |m: &mut Module, nm: &str, w: u32, c: &str| m.formal_wire(nm, w, c);
    let f_cv = gc(m, "f_cv", 1, "a continuation waits");
    let f_cconn = gc(m, "f_cconn", cb, "its connection");
    let f_cstage = gc(m, "f_cstage", 2, "its next stage");
    let f_cfirst = gc(m, "f_cfirst", pb, "RACK across paths: its first path");
    let f_cwait = gc(m, "f_cwait", 1, "its stage waits for path_telemetry");
    let f_ctail = gc(m, "f_ctail", 1, "the tail timer's, not a SACK's");
    let f_ctouched = gc(m, "f_ctouched", streams, "a SACK's touched streams");
    let f_csid = gc(m, "f_csid", 8, "a SACK's stream_id");
    let f_cmsn = gc(m, "f_cmsn", PSN, "a SACK's completed_msn");
    let f_cdead = gc(m, "f_cdead", 1, "its connection failed since it was loaded");
    let rec = |m: &mut Module, nm: &str, c: &str, e: Expr| step.record(m, &go.expr(), (nm, 1), c, e);
    let alive = f_cdead.expr().logic_not();
    let is = |s: u64| f_cstage.expr().eq(lit(2, s));
    let f_kov = rec(m, "f_kov", "the latest step is RACK across paths", alive.clone().logic_and(is(ST_OVERDUE)));
    let f_karm = rec(
        m,
        "f_karm",
        "it is the tail timer's arm",
        alive.clone().logic_and(is(ST_TAIL)).logic_and(f_ctail.expr().logic_not()),
    );
    let f_kprobe =
        rec(m, "f_kprobe", "it is the tail timer's PROBEs", alive.clone().logic_and(is(ST_TAIL)).logic_and(&f_ctail));
    let f_kfin = rec(m, "f_kfin", "it is the finish", alive.clone().logic_and(is(ST_FINISH)));
    let f_ts = step.record(m, &go.expr(), ("f_ts", 32), "ts_now at the step", sg(m, "ts_now").expr());
    let f_live = m.formal_wire_from(
        "f_live",
        1,
        "the latest step has a stage to do (its connection alive)",
        f_kov.expr().logic_or(&f_karm).logic_or(&f_kprobe).logic_or(&f_kfin),
    );

    // ------------------------------------------------ ghosts: the answer, held from its cycle
    let held_port = |m: &mut Module, nm: &str, port: &str| {
        let s = sg(m, port);
        let r = m.formal_wire(&format!("{nm}_r"), s.width(), &format!("{port} as the latest answer read it"));
        m.formal_seq(vec![if_then(&at_ans, vec![set(&r, &s)])]);
        m.formal_wire_from(
            nm,
            s.width(),
            &format!("{port} of the latest answer, its cycle included"),
            mux(&at_ans, &s, &r),
        )
    };
    let [g_np, g_rack_v, g_rack_sent, g_rack_rtt, g_pend, g_pq, g_lp, g_next, g_cum, g_srtt, g_var, g_pp] = [
        ("f_npaths", "s_rd_npaths"),
        ("f_rack_valid", "s_rd_rack_valid"),
        ("f_rack_sent", "s_rd_rack_sent"),
        ("f_rack_rtt", "s_rd_rack_rtt"),
        ("f_pend", "s_rd_pend"),
        ("f_probe_q", "s_rd_probe_q"),
        ("f_lp", "s_lp"),
        ("f_next", "s_pm_next_psn"),
        ("f_cum", "s_pm_cum_acked"),
        ("f_srtt", "s_pm_srtt"),
        ("f_rttvar", "s_pm_rttvar"),
        ("f_probe_pending", "s_pm_probe_pending"),
    ]
    .map(|(nm, port)| held_port(m, nm, port));
    // The model's walks: each path's span and whether the stage walks it.
    let spans: Vec<Expr> = (0..np).map(|q| field(&g_next, q, db, db) - field(&g_cum, q, PSN, db)).collect();
    let g_span = m.formal_wire_from(
        "f_spans",
        np * db,
        "each path's next_psn - cum_acked, the low bits (the port's)",
        cat(&spans.iter().rev().cloned().collect::<Vec<_>>()),
    );
    let walks: Vec<Expr> = (0..np)
        .map(|q| {
            let below = lit(pb + 1, u64::from(q)).lt(&g_np).logic_and(spans[q as usize].clone().ne(lit(db, 0)));
            let rack =
                f_kov.expr().logic_and(&g_rack_v).logic_and(zext(&f_cfirst, pb + 1).le(lit(pb + 1, u64::from(q))));
            let arm = f_karm.expr().logic_and(g_pend.expr().logic_not());
            let probe = f_kprobe.expr().logic_and(g_pp.bit(q).logic_not()).logic_and(g_pq.bit(q).logic_not());
            below.logic_and(rack.logic_or(arm).logic_or(probe))
        })
        .collect();
    let g_mask = m.formal_wire_from(
        "f_mask",
        np,
        "the paths the stage walks: below npaths with packets outstanding; RACK from the first path with a RACK \
         send, the arm with nothing to cut, the PROBEs with no PROBE pending or queued",
        cat(&walks.into_iter().rev().collect::<Vec<_>>()),
    );

    // ------------------------------------------------ ghosts: the walk
    let f_walk = m.formal_wire("f_walk", 1, "the latest step's walk runs (after its answer's cycle, to its end)");
    let walk_now = m.formal_wire_from(
        "f_walk_now",
        1,
        "the walk runs this cycle: the answer's, or after",
        at_ans.expr().logic_or(&f_walk),
    );
    let f_pr_v = m.formal_wire("f_pr_v", 1, "a ring read was issued the cycle before, in the walk");
    let f_pr_p = m.formal_wire("f_pr_path", pb, "its path");
    let f_pr_d = m.formal_wire("f_pr_d", db, "its offset from the path's cum_acked");
    let (f_pr2_v, f_pr2_p, f_pr2_d) = if l == 1 {
        (f_pr_v.clone(), f_pr_p.clone(), f_pr_d.clone())
    } else {
        (
            m.formal_wire("f_pr2_v", 1, "a ring read was issued two cycles before, in the walk"),
            m.formal_wire("f_pr2_path", pb, "its path"),
            m.formal_wire("f_pr2_d", db, "its offset"),
        )
    };
    let f_broken = m.formal_wire("f_broken", np, "the paths whose walk broke, as answered");
    let f_stop = m.formal_wire("f_stop", 1, "RACK found a silent loss in an earlier cycle");
    let f_stop_p = m.formal_wire("f_stop_path", pb, "the path of the first");
    let f_tv = m.formal_wire("f_tail_v", 1, "the arm found an overdue time in an earlier cycle");
    let f_tat = m.formal_wire("f_tail_at", 32, "the earliest");
    // The answered read and the slot.
    let a_v = m.formal_wire_from("f_a_valid", 1, "a ring read answers (L cycles after it)", f_pr2_v.expr());
    let a_p = f_pr2_p.clone();
    let a_live = m.formal_wire_from(
        "f_a_live",
        1,
        "the answer counts: its path's walk has not broken, nor is it past a stop",
        a_v.expr()
            .logic_and(f_broken.expr().bit_at(&a_p).logic_not())
            .logic_and(f_stop.expr().logic_and(a_p.expr().gt(&f_stop_p)).logic_not()),
    );
    let slot = m.formal_wire_from(
        "f_slot",
        1,
        "the counted answer's slot holds a packet neither queued nor waiting for an RNR back-off",
        a_live
            .expr()
            .logic_and(sg(m, "s_ring_valid"))
            .logic_and(sg(m, "s_ring_queued").expr().logic_not())
            .logic_and(sg(m, "s_ring_rnr_wait").expr().logic_not()),
    );
    let a_psn = m.formal_wire_from(
        "f_a_psn",
        PSN,
        "the answered slot's psn",
        pick(&g_cum, &a_p.expr(), np, PSN, PSN) + zext(&f_pr2_d, PSN),
    );
    // The model's overdue_wait, its overdue test (signed, 33 bits) and RACK.
    let srtt = zext(pick(&g_srtt, &a_p.expr(), np, sw, sw), 32);
    let var4 = zext(pick(&g_var, &a_p.expr(), np, vw, vw), 32) << lit(2, 2);
    let half = srtt.clone() >> lit(1, 1);
    let base = mux(g_rack_rtt.expr().gt(srtt.clone()), g_rack_rtt.expr(), srtt);
    let o_wait = m.formal_wire_from(
        "f_owait",
        32,
        "the path's overdue_wait",
        base + mux(half.clone().lt(var4.clone()), var4, half),
    );
    let sent = sg(m, "s_ring_sent");
    let o_age = m.formal_wire_from("f_oage", 32, "ts - sent", f_ts.expr() - sent.expr());
    let overdue = m.formal_wire_from(
        "f_overdue",
        1,
        "the slot is overdue: its age at least overdue_wait, both signed",
        mux(o_age.bit(31).eq(o_wait.bit(31)), o_age.expr().ge(&o_wait), o_wait.bit(31)),
    );
    let after = |m: &mut Module, nm: &str, a: Expr, b: Expr| {
        let d = m.formal_wire_from(nm, 32, "a serial difference", a - b);
        d.expr().ne(lit(32, 0)).logic_and(d.bit(31).logic_not())
    };
    let rack_after = after(m, "f_rack_diff", g_rack_sent.expr(), sent.expr());
    let lost_s = m.formal_wire_from(
        "f_lost",
        1,
        "RACK: a counted slot sent before RACK's newest acknowledged send and overdue is lost",
        f_kov.expr().logic_and(&slot).logic_and(rack_after).logic_and(&overdue),
    );
    let phys = sg(m, "s_ring_phys");
    let charge_after = after(m, "f_charge_diff", pick(&g_lp, &phys.expr(), np, 32, 32), sent.expr());
    let charge_s = m.formal_wire_from(
        "f_charge",
        1,
        "the loss is charged: its copy's path made progress after it left",
        charge_after,
    );
    let silent_s =
        m.formal_wire_from("f_silent", 1, "an uncharged loss", lost_s.expr().logic_and(charge_s.expr().logic_not()));
    let brk_s = m.formal_wire_from(
        "f_brk",
        1,
        "the answer breaks its path's walk: RACK's and the arm's at a first transmission not lost, the PROBEs' at \
         an overdue slot",
        slot.expr().logic_and(mux(
            &f_kprobe,
            overdue.expr(),
            sg(m, "s_ring_resent").expr().logic_not().logic_and(lost_s.expr().logic_not()),
        )),
    );
    let stop_now = m.formal_wire_from("f_stop_now", 1, "a silent loss is known", f_stop.expr().logic_or(&silent_s));
    let stop_p_now = m.formal_wire_from("f_stop_path_now", pb, "its path", mux(&f_stop, &f_stop_p, &a_p));
    // The read this cycle: the next slot after the read before, the next
    // walked path's first after a path's last or its break.
    let (m_at, m_any) = first_above(&g_mask, None, np, pb);
    let (pa_at, pa_any) = first_above(&g_mask, Some(f_pr_p.expr()), np, pb);
    let pr_last = (f_pr_d.expr() + lit(db, 1)).eq(pick(&g_span, &f_pr_p.expr(), np, db, db));
    let cur_v = m.formal_wire_from(
        "f_cur_v",
        1,
        "the walk has a slot to read next (before this cycle's break)",
        at_ans.expr().logic_and(m_any).logic_or(f_walk.expr().logic_and(&f_pr_v).logic_and(mux(
            pr_last.clone(),
            pa_any,
            lit(1, 1),
        ))),
    );
    let cur_p = m.formal_wire_from(
        "f_cur_path",
        pb,
        "its path",
        mux(&at_ans, m_at, mux(pr_last.clone(), pa_at, f_pr_p.expr())),
    );
    let cur_d = m.formal_wire_from(
        "f_cur_d",
        db,
        "its offset",
        mux(at_ans.expr().logic_or(pr_last), lit(db, 0), f_pr_d.expr() + lit(db, 1)),
    );
    let moves = m.formal_wire_from(
        "f_moves",
        1,
        "this cycle's answer breaks the path being read",
        brk_s.expr().logic_and(&cur_v).logic_and(a_p.expr().eq(&cur_p)),
    );
    let (nx_at, nx_any) = first_above(&g_mask, Some(cur_p.expr()), np, pb);
    let want_v = m.formal_wire_from("f_want_v", 1, "a slot is left to read", mux(&moves, nx_any, cur_v.expr()));
    let want_p = m.formal_wire_from("f_want_path", pb, "its path", mux(&moves, nx_at, cur_p.expr()));
    let want_d = m.formal_wire_from("f_want_d", db, "its offset", mux(&moves, lit(db, 0), cur_d.expr()));
    let want = m.formal_wire_from(
        "f_want",
        1,
        "the walk reads a slot this cycle: one is left, not past a stop",
        walk_now
            .expr()
            .logic_and(&want_v)
            .logic_and(stop_now.expr().logic_and(want_p.expr().gt(&stop_p_now)).logic_not()),
    );
    // The end: the last read's answer (nothing read now, nothing in flight).
    let in_flight = if l == 1 { lit(1, 0) } else { f_walk.expr().logic_and(&f_pr_v) };
    let end = m.formal_wire_from(
        "f_end",
        1,
        "the walk ends: its last read's answer, or the step's answer with nothing to read",
        walk_now.expr().logic_and(rd.expr().logic_not()).logic_and(in_flight.logic_not()),
    );
    // The arm's earliest overdue time, in the walk's order.
    let t_cand = m.formal_wire_from("f_tail_cand", 32, "the counted slot's overdue time", sent.expr() + o_wait.expr());
    let t_diff = m.formal_wire_from(
        "f_tail_diff",
        32,
        "its serial difference from the earliest so far",
        t_cand.expr() - f_tat.expr(),
    );
    let takes = m.formal_wire_from(
        "f_tail_takes",
        1,
        "the counted slot's overdue time is the earliest so far",
        f_karm.expr().logic_and(&slot).logic_and(f_tv.expr().logic_not().logic_or(t_diff.expr().ge(lit(32, 1 << 31)))),
    );
    let tv_now = m.formal_wire_from("f_tail_v_now", 1, "the arm found an overdue time", f_tv.expr().logic_or(&takes));
    let tat_now = m.formal_wire_from("f_tail_at_now", 32, "the earliest", mux(&takes, &t_cand, &f_tat));
    // The count: 0, or 1 .. 3 cycles since the latest ring read (3 saturating).
    let f_since =
        m.formal_wire("f_since_rd", 2, "cycles since the step's latest ring read, saturating at 3; 0 before one");
    let hot = cat(&(0..np).rev().map(|q| a_p.expr().eq(lit(pb, u64::from(q)))).collect::<Vec<_>>());
    let mut walk_upd = vec![
        set(&f_walk, walk_now.expr().logic_and(end.expr().logic_not())),
        set(&f_pr_v, &rd),
        set(&f_pr_p, &want_p),
        set(&f_pr_d, &want_d),
        set(&f_broken, f_broken.expr() | (repl(np, &brk_s) & hot)),
        set(&f_stop, &stop_now),
        set(&f_stop_p, &stop_p_now),
        set(&f_tv, &tv_now),
        set(&f_tat, &tat_now),
        set(
            &f_since,
            mux(
                &rd,
                lit(2, 1),
                mux(
                    f_since.expr().eq(lit(2, 0)).logic_or(f_since.expr().eq(lit(2, 3))),
                    f_since.expr(),
                    f_since.expr() + lit(2, 1),
                ),
            ),
        ),
    ];
    let mut walk_clr = vec![
        set(&f_walk, lit(1, 0)),
        set(&f_pr_v, lit(1, 0)),
        set(&f_broken, lit(np, 0)),
        set(&f_stop, lit(1, 0)),
        set(&f_tv, lit(1, 0)),
        set(&f_since, lit(2, 0)),
    ];
    if l == 2 {
        walk_upd.extend([set(&f_pr2_v, &f_pr_v), set(&f_pr2_p, &f_pr_p), set(&f_pr2_d, &f_pr_d)]);
        walk_clr.push(set(&f_pr2_v, lit(1, 0)));
    }
    m.formal_seq(vec![if_else(rst.expr().logic_or(&go), walk_clr, walk_upd)]);

    // The continuation's next: RACK again from the path after a stop, else
    // the tail timer; the arm: the finish; the rest end it.
    let stop_next = m.formal_wire_from(
        "f_stop_next",
        pb + 1,
        "the path after the stop",
        zext(&stop_p_now, pb + 1) + lit(pb + 1, 1),
    );
    let again = stop_now.expr().logic_and(stop_next.expr().lt(&g_np));
    let fails = |c: Expr| sg(m, "s_fail_valid").expr().logic_and(sg(m, "s_fail_conn").expr().eq(c));
    let l_conn = mux(&load_s, sg(m, "s_cont_conn"), sg(m, "s_tail_conn"));
    let fail_l = fails(l_conn.clone());
    let fail_c = fails(f_cconn.expr());
    m.formal_seq(vec![if_else(
        &rst,
        vec![set(&f_cv, lit(1, 0))],
        vec![if_else(
            load_s.expr().logic_or(&load_t),
            vec![
                set(&f_cv, lit(1, 1)),
                set(&f_cconn, l_conn),
                set(&f_cstage, lit(2, ST_OVERDUE)),
                set(&f_cfirst, lit(pb, 0)),
                set(&f_cwait, load_s.expr().logic_and(sg(m, "s_cont_wait"))),
                set(&f_ctail, &load_t),
                // A tail timer's has no SACK: the model's empty streams, no stream.
                set(&f_ctouched, mux(&load_s, sg(m, "s_cont_touched"), lit(streams, 0))),
                set(&f_csid, mux(&load_s, sg(m, "s_cont_stream_id"), lit(8, 0xff))),
                set(&f_cmsn, mux(&load_s, sg(m, "s_cont_completed_msn"), lit(PSN, 0))),
                set(&f_cdead, fail_l),
            ],
            vec![
                if_then(fail_c, vec![set(&f_cdead, lit(1, 1))]),
                if_then(
                    &end,
                    vec![if_else(
                        f_kov.expr().logic_or(&f_karm),
                        vec![
                            set(
                                &f_cstage,
                                mux(
                                    &f_karm,
                                    lit(2, ST_FINISH),
                                    mux(again.clone(), lit(2, ST_OVERDUE), lit(2, ST_TAIL)),
                                ),
                            ),
                            set(&f_cfirst, stop_next.slice(pb - 1, 0)),
                            set(&f_cwait, f_kov.expr().logic_and(&stop_now)),
                        ],
                        vec![set(&f_cv, lit(1, 0))],
                    )],
                ),
            ],
        )],
    )]);

    // ------------------------------------------------ the step
    m.assert(
        "a_busy_count",
        "m_busy is 1 in a step's cycle (the walk's holds raise tx_ack's count later), 0 otherwise",
        sg(m, "m_busy").expr().eq(mux(&go, lit(bb, 1), lit(bb, 0))),
    );
    m.assert(
        "a_step_reads",
        "the context, mirrors and stream word are read exactly with the step, of the continuation's connection and \
         its stream_id's stream",
        sg(m, "m_rd_valid").expr().eq(&go).logic_and(implies(
            &go,
            sg(m, "m_rd_conn")
                .expr()
                .eq(&f_cconn)
                .logic_and(sg(m, "m_rd_stream").expr().eq(f_csid.slice(p.stream_bits - 1, 0))),
        )),
    );
    let done = sg(m, "m_done_valid");
    m.assert(
        "a_done_when",
        "the completion walk starts exactly with the step of a live continuation's finish with streams touched, \
         with its connection and streams",
        done.expr()
            .eq(go.expr().logic_and(alive.clone()).logic_and(is(ST_FINISH)).logic_and(f_ctouched.expr().reduce_or()))
            .logic_and(implies(
                &done,
                sg(m, "m_done_conn").expr().eq(&f_cconn).logic_and(sg(m, "m_done_touched").expr().eq(&f_ctouched)),
            )),
    );
    let rc = sg(m, "m_rc_valid");
    let rc_d = f_cmsn.expr() - sg(m, "s_rd_remote_completed").expr();
    m.assert(
        "a_rc_when",
        "the stream's remote_completed moves on exactly at the finish's answer, for a stream_id below the streams \
         whose remote_completed is before completed_msn (24-bit serial), to completed_msn",
        rc.expr()
            .eq(at_ans
                .expr()
                .logic_and(&f_kfin)
                .logic_and(f_csid.expr().lt(lit(8, u64::from(streams))))
                .logic_and(rc_d.clone().ne(lit(PSN, 0)))
                .logic_and(rc_d.lt(lit(PSN, 1 << (PSN - 1)))))
            .logic_and(implies(
                &rc,
                sg(m, "m_rc_conn")
                    .expr()
                    .eq(&f_cconn)
                    .logic_and(sg(m, "m_rc_stream").expr().eq(f_csid.slice(p.stream_bits - 1, 0)))
                    .logic_and(sg(m, "m_rc_msn").expr().eq(&f_cmsn)),
            )),
    );

    // ------------------------------------------------ when the unit acts
    let acts = [
        "m_hold_valid",
        "m_ring_rd_valid",
        "m_ring_lost_valid",
        "m_retx_valid",
        "m_evt_valid",
        "m_probe_valid",
        "m_tail_valid",
        "m_rc_valid",
    ];
    let any = crate::formal::any_port(m, &acts);
    m.assert(
        "a_act_in_window",
        &format!(
            "nothing acts (hold, ring read, loss, push, event, PROBE, tail timer, remote_completed) but in the \
             step's walk, from its answer (L = {l} cycles after it) to its end, and only for a continuation alive \
             at the step"
        ),
        implies(any.clone(), walk_now.expr().logic_and(&f_live)),
    );
    let ev = sg(m, "m_evt_valid");
    let lost = sg(m, "m_ring_lost_valid");
    let probe = sg(m, "m_probe_valid");
    m.assert(
        "a_answers_ignored",
        "an answer of a path whose walk broke, or past a stop, writes, pushes, queues and raises nothing",
        implies(
            a_v.expr().logic_and(a_live.expr().logic_not()),
            lost.expr().logic_or(sg(m, "m_retx_valid")).logic_or(&ev).logic_or(&probe).logic_not(),
        ),
    );
    m.assert(
        "a_ring_hold",
        "each ring read holds tx_ack's count at 2 in its cycle, and nothing else does",
        sg(m, "m_hold_valid").expr().eq(&rd).logic_and(implies(&rd, sg(m, "m_hold_cnt").expr().eq(lit(bb, 2)))),
    );
    let rd_path = sg(m, "m_ring_rd_path");
    let rd_off = m.formal_wire_from(
        "f_rd_off",
        PSN,
        "the read's offset from its path's cum_acked",
        sg(m, "m_ring_rd_psn").expr() - pick(&g_cum, &rd_path.expr(), np, PSN, PSN),
    );
    m.assert(
        "a_ring_in_paths",
        "a ring read is of the continuation's connection, a path below npaths the stage walks, at a psn below \
         the path's next_psn",
        implies(
            &rd,
            sg(m, "m_ring_rd_conn")
                .expr()
                .eq(&f_cconn)
                .logic_and(zext(&rd_path, pb + 1).lt(&g_np))
                .logic_and(g_mask.expr().bit_at(&rd_path))
                .logic_and(rd_off.expr().lt(zext(pick(&g_span, &rd_path.expr(), np, db, db), PSN))),
        ),
    );
    m.assert(
        "a_no_read_past_stop",
        "no ring read of a path after one where RACK found a silent loss, from the cycle it is found",
        implies(rd.expr().logic_and(&stop_now), rd_path.expr().le(&stop_p_now)),
    );
    m.assert(
        "a_ring_reads",
        "the walk reads a slot a cycle from the answer, path after walked path from each one's cum_acked, the \
         next path's first in the cycle an answer breaks the path being read, and stops at the last or at a path \
         after a stop",
        rd.expr().eq(&want).logic_and(implies(
            &rd,
            rd_path.expr().eq(&want_p).logic_and(sg(m, "m_ring_rd_psn").expr().eq(pick(
                &g_cum,
                &want_p.expr(),
                np,
                PSN,
                PSN,
            ) + zext(&want_d, PSN))),
        )),
    );
    m.assert(
        "a_lost_when",
        "a slot is written lost exactly when RACK's counted answer finds it sent before RACK's newest \
         acknowledged send and overdue, with its path, psn and charge",
        lost.expr().eq(&lost_s).logic_and(implies(
            &lost,
            sg(m, "m_ring_lost_path")
                .expr()
                .eq(&a_p)
                .logic_and(sg(m, "m_ring_lost_psn").expr().eq(&a_psn))
                .logic_and(sg(m, "m_ring_lost_charge").expr().eq(&charge_s)),
        )),
    );
    m.assert(
        "a_lost_push",
        "each loss is pushed into the retransmit queue in its cycle, and nothing else is: the connection, path and \
         psn",
        sg(m, "m_retx_valid").expr().eq(&lost).logic_and(implies(
            &lost,
            sg(m, "m_retx_conn")
                .expr()
                .eq(&f_cconn)
                .logic_and(sg(m, "m_retx_path").expr().eq(sg(m, "m_ring_lost_path")))
                .logic_and(sg(m, "m_retx_psn").expr().eq(sg(m, "m_ring_lost_psn"))),
        )),
    );
    // The model's silent_events.
    let cap = p.cfg.timers.suspect_after_rtos;
    let (phys_sent, cw) = super::silent_ghost(
        m,
        rst.expr().logic_or(&go),
        &at_ans,
        age.expr().gt(lit(agw, u64::from(l))),
        f_walk.expr(),
        ev.expr(),
        sg(m, "m_evt_path").expr(),
        phys.expr(),
        &f.silent_counts,
        np,
        cap,
    );
    m.assert(
        "a_silent_when",
        &format!(
            "a SILENT event exactly with an uncharged loss whose copy's path has had fewer than suspect_after_rtos \
             = {cap} this step, of the connection, that path and the step's ts_now"
        ),
        ev.expr()
            .eq(lost
                .expr()
                .logic_and(sg(m, "m_ring_lost_charge").expr().logic_not())
                .logic_and(phys_sent.lt(lit(cw, u64::from(cap)))))
            .logic_and(implies(
                &ev,
                sg(m, "m_evt_kind")
                    .expr()
                    .eq(lit(tel::KIND_BITS, u64::from(tel::kind::SILENT)))
                    .logic_and(sg(m, "m_evt_conn").expr().eq(&f_cconn))
                    .logic_and(sg(m, "m_evt_path").expr().eq(&phys))
                    .logic_and(sg(m, "m_evt_now").expr().eq(&f_ts)),
            )),
    );
    m.assert(
        "a_probe_when",
        "a PROBE is queued exactly when the PROBE stage's counted answer finds an overdue slot, for its path",
        probe.expr().eq(f_kprobe.expr().logic_and(&slot).logic_and(&overdue)).logic_and(implies(
            &probe,
            sg(m, "m_probe_conn").expr().eq(&f_cconn).logic_and(sg(m, "m_probe_path").expr().eq(&a_p)),
        )),
    );
    let tail = sg(m, "m_tail_valid");
    m.assert(
        "a_tail_when",
        "the tail timer is written exactly at the arm's end, armed with the earliest overdue time of the slots \
         counted (32-bit serial order, the walk's order on ties), cleared without one",
        tail.expr().eq(end.expr().logic_and(&f_karm)).logic_and(implies(
            &tail,
            sg(m, "m_tail_conn")
                .expr()
                .eq(&f_cconn)
                .logic_and(sg(m, "m_tail_armed").expr().eq(&tv_now))
                .logic_and(implies(&tv_now, sg(m, "m_tail_at").expr().eq(&tat_now))),
        )),
    );
    m.assert(
        "a_cont",
        "the continuation is the model's: loaded by a SACK's end or the tail timer's step at RACK from path 0; at \
         a step's end RACK goes on after a stop, else to the tail timer, the arm to the finish, and the PROBEs, \
         the finish and a failed connection's step end it; it waits only after RACK's silent losses (or a SACK's)",
        sg(m, "m_cont_valid")
            .expr()
            .eq(&f_cv)
            .logic_and(sg(m, "m_cont_wait").expr().eq(f_cv.expr().logic_and(&f_cwait))),
    );
    m.assert(
        "a_before_free",
        "every action and the step's end come before tx_ack's count frees the unit for its next step",
        implies(any.logic_or(&end), wait.expr().ne(lit(bb, 0))),
    );

    // ------------------------------------------------ payloads
    for (valid, payload) in [
        ("m_rd_valid", &["m_rd_conn", "m_rd_stream"][..]),
        ("m_done_valid", &["m_done_conn", "m_done_touched"]),
        ("m_hold_valid", &["m_hold_cnt"]),
        ("m_ring_rd_valid", &["m_ring_rd_conn", "m_ring_rd_path", "m_ring_rd_psn"]),
        ("m_ring_lost_valid", &["m_ring_lost_path", "m_ring_lost_psn", "m_ring_lost_charge"]),
        ("m_retx_valid", &["m_retx_conn", "m_retx_path", "m_retx_psn"]),
        ("m_evt_valid", &["m_evt_kind", "m_evt_conn", "m_evt_path", "m_evt_now"]),
        ("m_probe_valid", &["m_probe_conn", "m_probe_path"]),
        ("m_tail_valid", &["m_tail_conn", "m_tail_armed"]),
        ("m_tail_armed", &["m_tail_at"]),
        ("m_rc_valid", &["m_rc_conn", "m_rc_stream", "m_rc_msn"]),
        ("m_cont_valid", &["m_cont_wait"]),
    ] {
        quiet_without(m, valid, payload);
    }

    // ------------------------------------------------ invariants: the registers hold what the ghosts say
    let kinds = [&f_kov, &f_karm, &f_kprobe, &f_kfin, &f_ts];
    step.read_invariants(m, &f.pipe, (&f.rec, &kinds));
    let rec_ok = f.rec.iter().zip(kinds).fold(lit(1, 1), |a, (r, g)| a.logic_and(r.expr().eq(g)));
    m.assert(
        "a_inv_record_walk",
        "in the walk, however long, the record registers hold the step's record",
        implies(&f_walk, rec_ok),
    );
    let al = |x: u64| lit(agw, x);
    let left = m.formal_wire_from(
        "f_left",
        agw,
        "L + 2 less the cycles since the step, 0 after",
        mux(age.expr().le(al(u64::from(l) + 2)), al(u64::from(l) + 2) - age.expr(), al(0)),
    );
    m.assert(
        "a_inv_wait",
        "tx_ack's count left is 3 less the cycles since the step's latest ring read after one, else L + 2 less \
         the cycles since the step (1 + L loaded, its own cycle), and 0 after a reset",
        fit(wait.expr(), bb.max(agw)).eq(fit(
            mux(f_since.expr().eq(lit(2, 0)), left.expr(), zext(lit(2, 3) - f_since.expr(), agw)),
            bb.max(agw),
        )),
    );
    let [c_valid, c_conn, c_stage, c_first, c_wait, c_tail, c_touched, c_sid, c_msn, c_dead] = &f.cont;
    m.assert(
        "a_inv_cont",
        "the continuation's registers hold the ghost's (the first path only for RACK); a tail timer's never \
         reaches the finish",
        c_valid.expr().eq(&f_cv).logic_and(implies(
            &f_cv,
            c_conn
                .expr()
                .eq(&f_cconn)
                .logic_and(c_stage.expr().eq(&f_cstage))
                .logic_and(f_cstage.expr().ne(lit(2, 3)))
                .logic_and(c_wait.expr().eq(&f_cwait))
                .logic_and(c_tail.expr().eq(&f_ctail))
                .logic_and(c_dead.expr().eq(&f_cdead))
                .logic_and(implies(is(ST_OVERDUE), c_first.expr().eq(&f_cfirst)))
                .logic_and(implies(&f_ctail, is(ST_FINISH).logic_not()))
                .logic_and(c_touched.expr().eq(&f_ctouched))
                .logic_and(c_sid.expr().eq(&f_csid))
                .logic_and(c_msn.expr().eq(&f_cmsn)),
        )),
    );
    let held_want = [&g_rack_sent, &g_rack_rtt, &g_lp, &g_cum, &g_srtt, &g_var, &g_mask, &g_span, &g_np];
    let held_ok = f.held.iter().zip(held_want).fold(lit(1, 1), |a, (u, g)| a.logic_and(u.expr().eq(g)));
    let bits = |s: &Signal, w: u32, i: u32| s.slice(w * (i + 1) - 1, w * i);
    let pipe_ok = if l == 1 {
        f.pipe_v
            .expr()
            .eq(&f_pr_v)
            .logic_and(implies(&f_pr_v, f.pipe_path.expr().eq(&f_pr_p).logic_and(f.pipe_d.expr().eq(&f_pr_d))))
    } else {
        f.pipe_v
            .expr()
            .eq(cat(&[f_pr2_v.expr(), f_pr_v.expr()]))
            .logic_and(implies(
                &f_pr_v,
                bits(&f.pipe_path, pb, 0).eq(&f_pr_p).logic_and(bits(&f.pipe_d, db, 0).eq(&f_pr_d)),
            ))
            .logic_and(implies(
                &f_pr2_v,
                bits(&f.pipe_path, pb, 1).eq(&f_pr2_p).logic_and(bits(&f.pipe_d, db, 1).eq(&f_pr2_d)),
            ))
    };
    let [iv, ip, id] = &f.pos;
    let blocked = iv.expr().logic_not().logic_or(f_stop.expr().logic_and(ip.expr().gt(&f_stop_p)));
    let kinds_n = [&f_kov, &f_karm, &f_kprobe, &f_kfin].iter().fold(lit(3, 0), |a, k| a + zext(k.expr(), 3));
    m.assert(
        "a_inv_kind",
        "after a step, it is at most one stage, and until its end the continuation's (its connection alive then)",
        implies(age.expr().ne(step.sat.clone()).logic_or(&f_walk), kinds_n.le(lit(3, 1))).logic_and(implies(
            age.expr().le(al(u64::from(l))).logic_or(&f_walk),
            f_cv.expr()
                .logic_and(implies(&f_kov, is(ST_OVERDUE)))
                .logic_and(implies(&f_karm, is(ST_TAIL).logic_and(f_ctail.expr().logic_not())))
                .logic_and(implies(&f_kprobe, is(ST_TAIL).logic_and(&f_ctail)))
                .logic_and(implies(&f_kfin, is(ST_FINISH)))
                .logic_and(implies(f_live.expr().logic_not(), &f_cdead)),
        )),
    );
    m.assert(
        "a_inv_walk",
        "the walk runs exactly while the ghosts' does, after the answer of the latest step, its reads 1 or 2 \
         cycles before; no reads in flight outside it, nor of a dead step's",
        f.active
            .expr()
            .eq(&f_walk)
            .logic_and(implies(
                &f_walk,
                age.expr()
                    .gt(al(u64::from(l)))
                    .logic_and(f_since.expr().ne(lit(2, 0)))
                    .logic_and(f_since.expr().ne(lit(2, 3))),
            ))
            .logic_and(implies(&f_pr_v, f_since.expr().eq(lit(2, 1))))
            .logic_and(implies(
                f_walk.expr().logic_not(),
                f_pr_v.expr().logic_not().logic_and(f_pr2_v.expr().logic_not()),
            ))
            .logic_and(implies(f_walk.expr().logic_not(), f.pipe_v.expr().eq(lit(l, 0))))
            .logic_and(implies(
                age.expr().le(al(u64::from(l))),
                f_since
                    .expr()
                    .eq(lit(2, 0))
                    .logic_and(f_broken.expr().eq(lit(np, 0)))
                    .logic_and(f_stop.expr().logic_not())
                    .logic_and(f_tv.expr().logic_not()),
            ))
            .logic_and(implies(f_walk.expr().logic_and(f_live.expr().logic_not()), f_pr_v.expr().logic_not())),
    );
    m.assert("a_inv_held", "in the walk the held answer is the ghosts'", implies(&f_walk, held_ok));
    m.assert("a_inv_reads", "in the walk the ring reads in flight are the ghosts'", implies(&f_walk, pipe_ok));
    m.assert(
        "a_inv_found",
        "in the walk the broken paths, the stop and the arm's earliest time are the ghosts'",
        implies(
            &f_walk,
            f.broken
                .expr()
                .eq(&f_broken)
                .logic_and(f.stop[0].expr().eq(&f_stop))
                .logic_and(implies(&f_stop, f.stop[1].expr().eq(&f_stop_p)))
                .logic_and(f.tail[0].expr().eq(&f_tv))
                .logic_and(implies(&f_tv, f.tail[1].expr().eq(&f_tat))),
        ),
    );
    m.assert(
        "a_inv_pos",
        "in the walk the next read follows the read before, and with none the walk reads no more",
        implies(
            &f_walk,
            mux(
                &f_pr_v,
                iv.expr().eq(&cur_v).logic_and(implies(&cur_v, ip.expr().eq(&cur_p).logic_and(id.expr().eq(&cur_d)))),
                blocked,
            ),
        ),
    );

    // ------------------------------------------------ covers
    m.cover("c_lost_charged", "RACK finds a loss, charged", lost.expr().logic_and(sg(m, "m_ring_lost_charge")));
    m.cover("c_lost_silent", "RACK finds a loss charged to no one: a SILENT event", ev.expr());
    m.cover(
        "c_stop",
        "a stop keeps a later walked path unread",
        walk_now.expr().logic_and(&want_v).logic_and(stop_now.expr()).logic_and(want_p.expr().gt(&stop_p_now)),
    );
    m.cover(
        "c_again",
        "RACK goes on after a stop: the continuation's next stage is RACK from the path after it",
        end.expr().logic_and(&f_kov).logic_and(again),
    );
    m.cover("c_break_moves", "a break moves the reads on to the next walked path", moves.expr().logic_and(&rd));
    if l > 1 {
        // With L = 1 an answer comes before the next read: a break or a
        // stop is known before any read it would void.
        m.cover(
            "c_ignored",
            "an answer after its path's walk broke, or past a stop, is ignored",
            a_v.expr().logic_and(a_live.expr().logic_not()),
        );
    }
    m.cover("c_arm", "the arm writes the tail timer armed", tail.expr().logic_and(sg(m, "m_tail_armed")));
    m.cover("c_probe", "the tail timer's PROBE stage queues a PROBE", probe.expr());
    m.cover("c_finish", "the finish starts the completion walk", done.expr());
    m.cover("c_remote_completed", "the finish moves a stream's remote_completed on", rc.expr());
    m.cover("c_dead", "a step of a failed connection's continuation", go.expr().logic_and(&f_cdead));
    m.cover(
        "c_back_to_back",
        "a step as soon as tx_ack's count frees the unit after a walk that read the ring",
        go.expr().logic_and(f_since.expr().eq(lit(2, 3))).logic_and(f.pipe.expr().eq(lit(l, 0))),
    );
}
