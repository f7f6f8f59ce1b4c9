//! The acknowledgement unit's timeout and update handlers of `tx_engine`
//! as a clocked unit (`tx_rto`): what the model's `on_rto` and `on_upd`
//! do with path_telemetry's `m_rto` and `m_upd` records, with `act`,
//! `queue_probe` and `all_lost` ([`mrnic_model::tx_engine`]), in the steps
//! `tx_ack` starts for them (`m_go_rto`, `m_go_upd`). Named after the
//! timeout, the handler with the ring walk; an update shares every port
//! but the walk.
//!
//! # Timing
//! A step issues its reads when it starts and they answer `L` cycles later
//! (architecture.md, tx_engine items 4 and 10):
//! - **The step's cycle** (`t`, `s_go_rto` or `s_go_upd` with the record
//!   on `s_rto_*` / `s_upd_*`): the busy count the handler sets goes to
//!   `tx_ack`'s `s_busy` (`m_busy`: `1 + tx_ring_depth` for a timeout with
//!   ALL_LOST, else 1, from the record alone, since the count is due
//!   before the reads answer); the connection's `stalled` bit is cleared
//!   (`m_unstall_*`, which needs only the record's connection); the
//!   context and the path's mirror are read (`m_rd_*`). The record and
//!   `ts_now` are registered.
//! - **The answer's cycle** (`t + L`, `s_rd_*`, `s_pm_*` as the tables
//!   stood at `t`, block RAM reading first; the plane marks `mark_*` are
//!   registers, levels): the mirror write (`m_pm_*`), the plane mark
//!   (`m_mark_*`), the PROBE push (`m_probe_*`), and, for a timeout with
//!   ALL_LOST on a live connection, the first ring read of the walk.
//! - **The walk**: one ring slot read per cycle (`m_ring_rd_*`) from the
//!   path's `cum_acked` up to its `next_psn`, in psn order, each answering
//!   `L` cycles later (`s_ring_*`): a slot that holds a packet not queued
//!   is written queued (uncharged, its RNR wait dropped) and pushed into
//!   the connection's retransmit queue (`m_retx_*`), in the model's order.
//!   Its last write is at `t + 2L + span - 1`, `span` at most
//!   `tx_ring_depth` (the decision sends only while the ring has a free
//!   slot), before the model's count frees the unit at `t + 2 + L +
//!   tx_ring_depth` when `L <= 2` (1 or 2 here), so the next step's reads
//!   see every write.
//!
//! The model makes all of it in the step's cycle. Nothing else reads what
//! the handler writes before the unit is free again (the scheduler starts
//! only with the unit idle, and the unit's next step waits for its count)
//! except the plane marks' expiry check and a failure or reopen of the
//! connection meanwhile; architecture.md, tx_engine item 10, says what the
//! assembly owes for those.
//!
//! # Interface with the rest of the engine
//! - The record and the step come from `tx_ack` and the engine's input
//!   registers; the handler's count goes back on `m_busy`.
//! - Its reads are ports: the address (`m_rd_*`) in the step's cycle, the
//!   answer `L` cycles later; the ring slots the same way (`m_ring_rd_*`,
//!   `s_ring_*`). The marks are levels.
//! - Its writes are ports of the cycle they happen in, every payload 0
//!   without its valid: `m_pm_*` (the mirror of `m_pm_conn`/`m_pm_path`:
//!   state always; sport and gen and `probe_pending` cleared with
//!   `m_pm_rto`; `timed_out` with `m_pm_timed_out_we`; `clr` set with
//!   `m_pm_clr_set`), `m_mark_*` (plane `m_mark_plane`'s mark becomes
//!   `m_mark_until`), `m_probe_*` (the PROBE queue's push and the
//!   connection's `probe_q` bit), `m_retx_*` (the slot's write and the
//!   retransmit queue's push, which also clears `stalled`).

use mrnic_model::block::PortDef;
use mrnic_model::path_telemetry::{self as tel, Consts};
use mrnic_model::tx_engine::TxEngineParams;

use super::ack::busy_bits;
use crate::expr::{cat, lit, mux, Expr, Signal};
use crate::ir::{set, Module};

/// Module name.
pub const NAME: &str = "tx_rto";

const RST: &str = "Clock and reset";
const STEP: &str = "The step (tx_ack m_go_rto / m_go_upd) and its record";
const RD: &str = "The step's reads: issued with the step, answered L cycles later";
const WR: &str = "The handler's writes, when its reads answer";
const WALK: &str = "The ALL_LOST walk over the path's unacked ring slots";

/// psn width.
const PSN: u32 = 24;

/// The actions the handlers take, the low bits of path_telemetry's `act`
/// (PROBE, ALL_LOST); a slot written here pushes no RNR back-off, so the
/// slot's RNR wait is not read (the write drops it whatever it was).
const ACT: u32 = 2;
const _: () = assert!(tel::act::PROBE == 1 && tel::act::ALL_LOST == 2, "PROBE and ALL_LOST are act's bits 0 and 1");

/// The unit's ports, in declaration order.
pub fn ports(p: &TxEngineParams) -> Vec<PortDef> {
    let (cb, pb, n) = (p.conn_bits, p.path_bits, p.paths);
    let planes = p.cfg.transport.planes;
    let i = |nm: &str, w: u32, g: &'static str, c: &str| PortDef::input(nm, w, g, c);
    let o = |nm: &str, w: u32, g: &'static str, c: &str| PortDef::output(nm, w, g, c);
    vec![
        i("rst", 1, RST, "synchronous reset, active high"),
        i("ts_now", 32, RST, "timestamp"),
        i("s_go_rto", 1, STEP, "tx_ack starts the timeout handler on the m_rto input register's record"),
        i("s_rto_conn", cb, STEP, "its connection"),
        i("s_rto_path", pb, STEP, "its path"),
        i("s_rto_state", 2, STEP, "the path's new state"),
        i("s_rto_sport", 16, STEP, "its new UDP source port"),
        i("s_rto_gen", 8, STEP, "its new generation"),
        i(
            "s_rto_act",
            ACT,
            STEP,
            "its actions PROBE (bit 0) and ALL_LOST (bit 1); DIED and RECOVERED are not the handlers'",
        ),
        i("s_go_upd", 1, STEP, "tx_ack starts the update handler on the update input register's record"),
        i("s_upd_conn", cb, STEP, "its connection"),
        i("s_upd_path", pb, STEP, "its path"),
        i("s_upd_state", 2, STEP, "the path's new state"),
        i("s_upd_clr", 1, STEP, "the path's credit is to be cleared at the next request"),
        i("s_upd_act", ACT, STEP, "its actions PROBE and ALL_LOST"),
        o("m_busy", busy_bits(p), STEP, "the busy count the handler sets (tx_ack s_busy; 0 without a step)"),
        o("m_unstall_valid", 1, STEP, "the connection's stalled bit is cleared"),
        o("m_unstall_conn", cb, STEP, "which connection"),
        o("m_rd_valid", 1, RD, "the context and the path's mirror are read"),
        o("m_rd_conn", cb, RD, "the connection"),
        o("m_rd_path", pb, RD, "the path"),
        i("s_rd_open", 1, RD, "the context's open bit, L cycles after m_rd_valid"),
        i("s_rd_failed", 1, RD, "the connection has failed"),
        i("s_rd_probe_q", n, RD, "its paths with a PROBE queued, a bit each"),
        i("s_pm_plane", 3, RD, "the path's plane"),
        i("s_pm_next_psn", PSN, RD, "its next psn"),
        i("s_pm_cum_acked", PSN, RD, "its cumulative acknowledged psn"),
        i("mark_valid", planes, RD, "per plane: marked unhealthy (registers, a level) ..."),
        i("mark_until", planes * 32, RD, "... until this timestamp"),
        o("m_pm_valid", 1, WR, "the mirror of (m_pm_conn, m_pm_path) is written: its state"),
        o("m_pm_conn", cb, WR, "the connection"),
        o("m_pm_path", pb, WR, "the path"),
        o("m_pm_state", 2, WR, "the state written"),
        o("m_pm_rto", 1, WR, "a timeout's write: sport and gen too, probe_pending cleared"),
        o("m_pm_sport", 16, WR, "the sport written"),
        o("m_pm_gen", 8, WR, "the gen written"),
        o("m_pm_timed_out_we", 1, WR, "timed_out is written"),
        o("m_pm_timed_out", 1, WR, "its value"),
        o("m_pm_clr_set", 1, WR, "the credit clear is set"),
        o("m_mark_valid", 1, WR, "a plane mark is written (the NIC avoids the plane)"),
        o("m_mark_plane", 3, WR, "the plane"),
        o("m_mark_until", 32, WR, "the mark's deadline"),
        o("m_probe_valid", 1, WR, "a PROBE is queued (and the connection's probe_q bit set)"),
        o("m_probe_conn", cb, WR, "its connection"),
        o("m_probe_path", pb, WR, "its path"),
        o("m_ring_rd_valid", 1, WALK, "a ring slot of the walked path is read"),
        o("m_ring_rd_conn", cb, WALK, "the connection"),
        o("m_ring_rd_path", pb, WALK, "the path"),
        o("m_ring_rd_psn", PSN, WALK, "the psn (the slot is psn mod tx_ring_depth)"),
        i("s_ring_valid", 1, WALK, "the slot holds a packet, L cycles after m_ring_rd_valid"),
        i("s_ring_queued", 1, WALK, "it is queued for retransmission already"),
        o("m_retx_valid", 1, WALK, "the slot is written queued (uncharged, no RNR wait) and pushed for retransmission"),
        o("m_retx_conn", cb, WALK, "its connection"),
        o("m_retx_path", pb, WALK, "its path"),
        o("m_retx_psn", PSN, WALK, "its psn"),
    ]
}

/// `e` where `valid`, else 0 (payloads are 0 without their valid).
fn gate(valid: &Signal, e: Expr, width: u32) -> Expr {
    mux(valid, e, lit(width, 0))
}

/// The `tx_rto` module for `p`.
pub fn build(p: &TxEngineParams) -> Module {
    let (cb, pb, n, l) = (p.conn_bits, p.path_bits, p.paths, p.read_latency);
    let bb = busy_bits(p);
    let planes = p.cfg.transport.planes;
    let k = Consts::from_config(&p.cfg);
    assert!((1..=2).contains(&l), "the walk's last write precedes the next step's reads only for L <= 2");

    let mut m = Module::new(NAME);
    m.describe(
        "tx_engine acknowledgement unit's timeout and update handlers: mirror, plane mark, PROBE, ALL_LOST walk",
    );
    let defs = ports(p);
    let (clk, sig) = crate::ports::declare(&mut m, &defs);
    let sg = |nm: &str| sig[nm].clone();
    m.clock_domain(&clk, &sg("rst"));
    let w = |m: &mut Module, nm: &str, width: u32, c: &str, e: Expr| m.wire_from(nm, width, c, e);

    // ------------------------------------------------------------ the step
    let (go_rto, go_upd) = (sg("s_go_rto"), sg("s_go_upd"));
    let go = w(&mut m, "go", 1, "a handler starts", go_rto.expr().logic_or(&go_upd));
    let conn = w(&mut m, "step_conn", cb, "the record's connection", mux(&go_rto, sg("s_rto_conn"), sg("s_upd_conn")));
    let path = w(&mut m, "step_path", pb, "the record's path", mux(&go_rto, sg("s_rto_path"), sg("s_upd_path")));
    let all_lost_bit = u64::from(tel::act::ALL_LOST);
    let rto_all_lost = sg("s_rto_act").expr().bit(all_lost_bit.trailing_zeros()).logic_and(&go_rto);
    // The count comes from the record alone: whether the connection is
    // open is known only when the reads answer.
    m.assign(sg("m_busy"), mux(&go, mux(rto_all_lost, lit(bb, 1 + u64::from(p.ring_depth)), lit(bb, 1)), lit(bb, 0)));
    m.assign(sg("m_unstall_valid"), &go);
    m.assign(sg("m_unstall_conn"), gate(&go, conn.expr(), cb));
    m.assign(sg("m_rd_valid"), &go);
    m.assign(sg("m_rd_conn"), gate(&go, conn.expr(), cb));
    m.assign(sg("m_rd_path"), gate(&go, path.expr(), pb));

    // The record, held until the next step (at least L + 2 cycles on).
    let r_rto = m.reg_no_reset("rec_rto", 1, "the record is a timeout's (else an update's)");
    let r_conn = m.reg_no_reset("rec_conn", cb, "its connection");
    let r_path = m.reg_no_reset("rec_path", pb, "its path");
    let r_state = m.reg_no_reset("rec_state", 2, "its state");
    let r_sport = m.reg_no_reset("rec_sport", 16, "a timeout's sport");
    let r_gen = m.reg_no_reset("rec_gen", 8, "a timeout's gen");
    let r_act = m.reg_no_reset("rec_act", ACT, "its actions");
    let r_clr = m.reg_no_reset("rec_clr", 1, "an update's credit clear");
    let r_ts = m.reg_no_reset("rec_ts", 32, "ts_now in the step's cycle (the mark's deadline counts from it)");
    for (r, e) in [
        (&r_rto, go_rto.expr()),
        (&r_conn, conn.expr()),
        (&r_path, path.expr()),
        (&r_state, mux(&go_rto, sg("s_rto_state"), sg("s_upd_state"))),
        (&r_sport, sg("s_rto_sport").expr()),
        (&r_gen, sg("s_rto_gen").expr()),
        (&r_act, mux(&go_rto, sg("s_rto_act"), sg("s_upd_act"))),
        (&r_clr, sg("s_upd_clr").expr()),
        (&r_ts, sg("ts_now").expr()),
    ] {
        m.next(set(&r.next, mux(&go, e, r.q.expr())));
    }
    // The step's reads in flight: bit i set i + 1 edges after the step.
    let pipe = m.reg("rd_pipe", l, 0, "the step's reads in flight, the oldest in the top bit");
    let shifted = if l == 1 { go.expr() } else { cat(&[pipe.q.slice(l - 2, 0), go.expr()]) };
    m.next(set(&pipe.next, shifted));
    let ans = w(&mut m, "answer", 1, "the step's reads answer: the handler acts", pipe.q.bit(l - 1));

    // ------------------------------------------------------------ the handler
    let is_rto = r_rto.q.expr();
    let st = r_state.q.expr();
    let suspect_or_dead = w(
        &mut m,
        "suspect_or_dead",
        1,
        "the new state is SUSPECT or DEAD",
        st.clone().eq(lit(2, u64::from(tel::SUSPECT))).logic_or(st.clone().eq(lit(2, u64::from(tel::DEAD)))),
    );
    let live = w(
        &mut m,
        "live",
        1,
        "the connection is open and has not failed",
        sg("s_rd_open").expr().logic_and(sg("s_rd_failed").expr().logic_not()),
    );
    let rto_live = w(
        &mut m,
        "rto_live",
        1,
        "a timeout acts: its connection is live",
        ans.expr().logic_and(is_rto.clone()).logic_and(&live),
    );
    let upd = w(
        &mut m,
        "upd_acts",
        1,
        "an update acts (on any connection)",
        ans.expr().logic_and(is_rto.clone().logic_not()),
    );
    let pm_v = w(&mut m, "pm_write", 1, "the mirror is written", rto_live.expr().logic_or(&upd));
    m.assign(sg("m_pm_valid"), &pm_v);
    m.assign(sg("m_pm_conn"), gate(&pm_v, r_conn.q.expr(), cb));
    m.assign(sg("m_pm_path"), gate(&pm_v, r_path.q.expr(), pb));
    m.assign(sg("m_pm_state"), gate(&pm_v, st.clone(), 2));
    m.assign(sg("m_pm_rto"), &rto_live);
    m.assign(sg("m_pm_sport"), gate(&rto_live, r_sport.q.expr(), 16));
    m.assign(sg("m_pm_gen"), gate(&rto_live, r_gen.q.expr(), 8));
    // A timeout sets timed_out exactly when the path stays GOOD or SKIP;
    // an update to SUSPECT or DEAD clears it (only PROBE replies lead back).
    let to_we = w(
        &mut m,
        "timed_out_we",
        1,
        "timed_out is written",
        rto_live.expr().logic_or(upd.expr().logic_and(&suspect_or_dead)),
    );
    m.assign(sg("m_pm_timed_out_we"), &to_we);
    m.assign(sg("m_pm_timed_out"), rto_live.expr().logic_and(suspect_or_dead.expr().logic_not()));
    m.assign(sg("m_pm_clr_set"), upd.expr().logic_and(&r_clr.q));

    // The plane mark: a timeout to SUSPECT or DEAD marks the path's plane
    // until ts + dead_probe_interval, unless the plane's mark is later
    // (32-bit serial); a plane past the NIC's planes is not marked.
    let plane = sg("s_pm_plane");
    let (mut cur_v, mut cur_u, mut known) = (lit(1, 0), lit(32, 0), lit(1, 0));
    for pl in 0..planes {
        let here = plane.expr().eq(lit(3, u64::from(pl)));
        cur_v = mux(here.clone(), sg("mark_valid").bit(pl), cur_v);
        cur_u = mux(here.clone(), sg("mark_until").slice(32 * pl + 31, 32 * pl), cur_u);
        known = known.logic_or(here);
    }
    let until = w(
        &mut m,
        "mark_until_new",
        32,
        "the new mark's deadline",
        r_ts.q.expr() + lit(32, u64::from(k.dead_probe_interval)),
    );
    let cur_u = w(&mut m, "mark_until_cur", 32, "the plane's mark now", cur_u);
    let diff = w(&mut m, "mark_diff", 32, "the new deadline less the plane's mark", until.expr() - cur_u.expr());
    let later = diff.expr().ne(lit(32, 0)).logic_and(diff.expr().lt(lit(32, 1 << 31)));
    let mark = w(
        &mut m,
        "mark_write",
        1,
        "the plane's mark is written",
        rto_live.expr().logic_and(&suspect_or_dead).logic_and(known).logic_and(cur_v.logic_not().logic_or(later)),
    );
    m.assign(sg("m_mark_valid"), &mark);
    m.assign(sg("m_mark_plane"), gate(&mark, plane.expr(), 3));
    m.assign(sg("m_mark_until"), gate(&mark, until.expr(), 32));

    // The PROBE: a timeout's PROBE action, or an update answering a PROBE
    // reply (SUSPECT, no ALL_LOST) on a connection not failed; queued
    // unless the path's bit says one is queued already.
    let act = r_act.q.expr();
    let probe_bit = u64::from(tel::act::PROBE).trailing_zeros();
    let lost_bit = all_lost_bit.trailing_zeros();
    let queued = if n == 1 { sg("s_rd_probe_q").expr() } else { sg("s_rd_probe_q").expr().bit_at(r_path.q.expr()) };
    let reply = upd
        .expr()
        .logic_and(st.clone().eq(lit(2, u64::from(tel::SUSPECT))))
        .logic_and(act.clone().bit(lost_bit).logic_not())
        .logic_and(sg("s_rd_failed").expr().logic_not());
    let probe = w(
        &mut m,
        "probe_push",
        1,
        "a PROBE is queued",
        rto_live.expr().logic_or(reply).logic_and(act.clone().bit(probe_bit)).logic_and(queued.logic_not()),
    );
    m.assign(sg("m_probe_valid"), &probe);
    m.assign(sg("m_probe_conn"), gate(&probe, r_conn.q.expr(), cb));
    m.assign(sg("m_probe_path"), gate(&probe, r_path.q.expr(), pb));

    // ------------------------------------------------------------ the walk
    // One slot read a cycle from cum_acked, the first in the answer's
    // cycle; the count left is the model's span, next_psn - cum_acked.
    let start = w(
        &mut m,
        "walk_start",
        1,
        "a timeout with ALL_LOST on a live connection starts the walk",
        rto_live.expr().logic_and(act.bit(lost_bit)),
    );
    let w_psn = m.reg_no_reset("walk_psn", PSN, "the psn the walk reads next");
    let w_left = m.reg("walk_left", PSN, 0, "slots the walk has still to read");
    let span = sg("s_pm_next_psn").expr() - sg("s_pm_cum_acked").expr();
    let cur_psn =
        w(&mut m, "walk_cur_psn", PSN, "the psn read this cycle", mux(&start, sg("s_pm_cum_acked"), w_psn.q.expr()));
    let cur_left =
        w(&mut m, "walk_cur_left", PSN, "slots left to read, this one included", mux(&start, span, w_left.q.expr()));
    let rd = w(&mut m, "ring_rd", 1, "a slot is read this cycle", cur_left.expr().ne(lit(PSN, 0)));
    m.next(set(&w_psn.next, cur_psn.expr() + lit(PSN, 1)));
    m.next(set(&w_left.next, mux(&rd, cur_left.expr() - lit(PSN, 1), lit(PSN, 0))));
    m.assign(sg("m_ring_rd_valid"), &rd);
    m.assign(sg("m_ring_rd_conn"), gate(&rd, r_conn.q.expr(), cb));
    m.assign(sg("m_ring_rd_path"), gate(&rd, r_path.q.expr(), pb));
    m.assign(sg("m_ring_rd_psn"), gate(&rd, cur_psn.expr(), PSN));
    // The slot reads in flight, L deep, with their psns.
    let mut v_prev = rd.expr();
    let mut p_prev = cur_psn.expr();
    let mut last = None;
    for s in 0..l {
        let v = m.reg(&format!("ring_rd{s}_valid"), 1, 0, "a slot read in flight");
        let q = m.reg_no_reset(&format!("ring_rd{s}_psn"), PSN, "its psn");
        m.next(set(&v.next, v_prev));
        m.next(set(&q.next, p_prev));
        v_prev = v.q.expr();
        p_prev = q.q.expr();
        last = Some((v.q, q.q));
    }
    let (a_v, a_psn) = last.expect("L >= 1");
    let push = w(
        &mut m,
        "retx_push",
        1,
        "the answered slot holds a packet not queued: queue it",
        a_v.expr().logic_and(sg("s_ring_valid")).logic_and(sg("s_ring_queued").expr().logic_not()),
    );
    m.assign(sg("m_retx_valid"), &push);
    m.assign(sg("m_retx_conn"), gate(&push, r_conn.q.expr(), cb));
    m.assign(sg("m_retx_path"), gate(&push, r_path.q.expr(), pb));
    m.assign(sg("m_retx_psn"), gate(&push, a_psn.expr(), PSN));
    m
}
