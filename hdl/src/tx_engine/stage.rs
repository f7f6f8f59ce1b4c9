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
//!   event of its copy's path (`m_evt_*`); once one is found no path after
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
//! [`stage_cycles`]: mrnic_model::tx_engine::stage_cycles

use mrnic_model::block::PortDef;
use mrnic_model::path_telemetry as tel;
use mrnic_model::tx_engine::TxEngineParams;
use mrnic_proto::tables::path as pt;

use super::ack::busy_bits;
use super::gate;
use super::PSN;
use crate::expr::{cat, index_bits, lit, mux, zext, Expr, Signal};
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
    let (_, ans) = super::read_answer(&mut m, &go, l);
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
    let silent =
        w(&mut m, "silent", 1, "an uncharged loss: a SILENT event", lost.expr().logic_and(charge.expr().logic_not()));
    let stop = w(&mut m, "stop_now", 1, "a silent loss is known", stop0.expr().logic_or(&silent));
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
    m.next(set(&c_valid.next, mux(load.clone(), lit(1, 1), mux(ends, lit(1, 0), c_valid.q.expr()))));
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
    m
}
