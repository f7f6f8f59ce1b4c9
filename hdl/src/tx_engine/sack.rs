//! The acknowledgement unit's SACK handler of `tx_engine` as a clocked
//! unit (`tx_sack`): what the model's `on_sack` does with a parsed SACK
//! ([`mrnic_model::tx_engine`]), in the step `tx_ack` starts for it
//! (`m_go_sack`): the stale checks, both passes over the path's ring (the
//! first acknowledges, folding each slot through
//! [`sack_fold`]; the second marks losses by tx_seq),
//! the ACK_STEER and PROBE_REPLY events, the path's mirror, the
//! connection's congestion step ([`conn_cc`]) and RACK
//! state, the paths' `last_progress`, the plane mark a PROBE reply takes,
//! the SILENT events of uncharged losses, and the SACK's continuation
//! for its later stages. Not the stages themselves (`sack_stage`: RACK
//! across paths, the tail timer, completed_msn and the completion walk).
//!
//! # Timing
//! `t` is the step's cycle, `L` the read latency, `span = next_psn -
//! cum_acked` of the path as read (architecture.md, tx_engine items 10
//! and 13). `k` counts the cycles from the answer, `t + L`:
//! - **`t`** (`s_go_sack`, the SACK input register on `s_sack_*`): the
//!   busy count `m_busy` is 1 (from the record alone), the connection's
//!   `stalled` is cleared (`m_unstall_*`), the context and the mirror of
//!   `path_id mod PATHS` are read (`m_rd_*`). The record and `ts_now` are
//!   registered.
//! - **`k = 0`** (`t + L`, `s_rd_*`, `s_pm_*`, `s_lp` as the tables stood
//!   at `t`, the marks as levels): nothing for a connection closed or
//!   failed; stale (`m_stat_sack_stale`) for a `path_id` past its paths
//!   or a SACK that names a psn never sent
//!   ([`sack_window`]). Else the SACK is live: its
//!   two passes' count goes to `tx_ack` (`m_hold_valid`, `m_hold_cnt` =
//!   `2 + 2 x span`), a PROBE reply takes its plane's mark
//!   (`m_mark_clr_*`; `m_unstall_all` if the plane was marked), and the
//!   first pass starts.
//! - **Pass 1**: slot `d` (psn `cum_acked + d`) read at `k = d`
//!   (`m_ring_rd_*`), answered at `k = L + d` (`s_ring_*`); a slot the
//!   SACK acknowledges and that holds a packet is folded, emptied
//!   (`m_ring_clr_*`), its request's `acked` count incremented
//!   (`m_wq_inc_*`: one increment a cycle, the count's memory outside,
//!   which must accumulate increments of one slot `L` cycles apart), and
//!   its stream marked touched. The new cumulative psn is the first slot
//!   still holding a packet after the pass, else `next_psn`.
//! - **`k = L + span - 1`** (the first pass's last answer; `L - 1` with
//!   nothing outstanding): with the fold complete, the ACK_STEER event
//!   (`m_evt_*`), the mirror's write (`m_pm_*`: `cum_acked`, `acked_seq`,
//!   the RTT sample's srtt, rttvar and min_rtt, `timed_out` cleared when
//!   packets were acknowledged, `probe_pending` cleared by a reply), the
//!   context's (`m_ctx_*`: RACK's send and RTT, the congestion state,
//!   the cap, the rate hint, the bytes in flight less those
//!   acknowledged) and `last_progress` of the paths that delivered and,
//!   for a reply, the SACK's own (`m_lp_*`, with the step's time).
//! - **`k = L + span`**: the PROBE_REPLY event of a reply.
//! - **Pass 2**: slot `d` read again at `k = span + 1 + d`, answered at
//!   `k = L + span + 1 + d`. A slot the SACK did not acknowledge (the
//!   record says which; no forwarding from the first pass is needed),
//!   holding a packet neither queued nor waiting for an RNR back-off,
//!   sent before the new `acked_seq` (or a reply's `probe_seq`, if later)
//!   is lost: written queued with its charge (`m_ring_lost_*`: charged
//!   when its copy's path `phys` made progress after it left, from
//!   `s_lp` with the first pass's writes), pushed into the retransmit
//!   queue (`m_retx_*`) and, uncharged, a SILENT event of `phys` while
//!   `phys` has had fewer than `suspect_after_rtos` this step (the model's
//!   `silent_events`; the count is `silent_cap`'s).
//! - **`k = L + 2 x span`**: the continuation (`m_cont_*`: the streams
//!   touched, SILENT events sent, the record's stream and completed_msn).
//!
//! The model makes every write in the step's cycle; nothing reads them
//! before the unit is free at `t + L + 3 + 2 x span`, and the last write
//! here is at `t + 2L + 2 x span` (`L <= 2`), so the timing is the
//! model's. A stale SACK, or one of a dead connection, frees the unit at
//! `t + L + 2` with the step's count alone.
//!
//! # Interface with the rest of the engine
//! - The step comes from `tx_ack` with the SACK input register; the count
//!   goes back on `m_busy`, the hold on `m_hold_*` (`tx_ack`'s
//!   `s_hold_sack`, `s_hold_cnt`).
//! - Its reads are ports: the context and mirror address (`m_rd_*`) in
//!   the step's cycle; the ring slot's (`m_ring_rd_*`) a cycle each; each
//!   answers `L` cycles later, read-first. `last_progress` is read as a
//!   vector of the connection's paths (`s_lp`, `PATHS x 32` bits, with
//!   the context): the first pass writes some of them and the second reads
//!   the one of each lost copy's `phys`, which may be any path.
//! - Its writes are ports of the cycles above, every payload 0 without its
//!   valid. Events go to the unit's pending events (they drain when it is
//!   free), one a cycle.
//!
//! # Formal properties
//! Stated next to the logic (`properties`) and run by `scripts/formal`
//! as the unit `tx_sack` ([`crate::proof::blocks`], [`formal_tasks`]), all
//! by 2-induction (boolector), with tx_nack's and tx_rto's ghosts of the
//! latest step (its record and `ts_now`, the cycles since it, tx_ack's
//! count left, here raised by the unit's own hold as tx_ack raises it)
//! and ghosts of its answer (the connection alive, the SACK live, a PROBE
//! reply, `cum_acked` and `next_psn`), so that `k`, the offsets and the
//! cycles of every action are counted from the answer by the ghosts. The
//! rules are stated from this account and the model's `on_sack`
//! (`sack_window`'s highest bitmap bit, `sack_acks`' offset test), over
//! the ghosts and the inputs, not over the unit's registers:
//! - `tx_ack`'s side, assumed: no step in a reset, a step only once
//!   tx_ack's count (the hold included) has run out
//!   (`asm_step_when_free`); a path holds at most `tx_ring_depth` packets
//!   when the answer reads its span on a live connection
//!   (`asm_span_within`; the unit counts the passes in the span's low
//!   bits);
//! - `m_busy` is 1 with the step and 0 otherwise; the reads and the
//!   unstall go exactly with the step, for its connection and `path_id
//!   mod PATHS`;
//! - nothing acts but from the answer (`L` cycles after a step): in its
//!   cycle, or for a live SACK through `k = L + 2 x span`; nothing for a
//!   connection the answer reads closed or failed;
//! - stale exactly at the answer of a live connection for a `path_id`
//!   not below `npaths` or a SACK naming a psn never sent, and then
//!   nothing else; the hold exactly for a live SACK, `2 + 2 x span`;
//! - the ring reads one a cycle, pass 1 offset `k` at `k < span`, pass 2
//!   offset `k - span - 1` after, psn `cum_acked + offset`; a slot emptied
//!   (with its request's `acked` increment) exactly at pass 1's answer of
//!   a slot holding a packet the SACK acknowledges; a loss only at pass
//!   2's answer of a slot it does not, holding a packet neither queued
//!   nor waiting, each with its retransmit push and no other push; no
//!   slot both emptied and lost (one offset watched, any);
//! - ACK_STEER and the mirror, context and `last_progress` writes exactly
//!   at `k = L + span - 1`, PROBE_REPLY exactly for a reply at `k = L +
//!   span`, SILENT exactly with an uncharged loss (its copy's path) under
//!   the path's cap, never more than `suspect_after_rtos` a path, the
//!   continuation exactly once at `k = L + 2 x span`, each with the SACK's
//!   connection (and path, stream, msn) and the step's `ts_now`; a plane's
//!   mark taken exactly by a reply in the answer's cycle, every
//!   connection unstalled exactly when it was marked;
//! - every write, event and the continuation before tx_ack's count frees
//!   the unit, every ring read `L` cycles before;
//! - every payload 0 without its valid;
//! - invariants tying the read pipe, the record, tx_ack's count, the
//!   passes' count and run flag, the held answer and the watched slot to
//!   the ghosts (`a_inv_*`), so the induction closes in 2 steps, not a
//!   ring's two passes;
//! - covers: a slot acknowledged, both stale kinds, a failed connection's
//!   answer, a loss charged and one SILENT, a PROBE reply and its mark,
//!   nothing outstanding, a loss after a slot emptied, and a second step
//!   as soon as the unit is free after a live SACK.

use mrnic_model::block::PortDef;
use mrnic_model::path_telemetry::{self as tel, Consts, MIN_RTT_NONE};
use mrnic_model::tx_engine::TxEngineParams;
use mrnic_proto::tables::path as pt;

use super::ack::busy_bits;
use super::nack::RNR_COUNT_BITS;
use super::PSN;
use super::{
    conn_cc, gate, sack_fold, sack_window, stream_ptr_bits, AckedSlotNets, BeatSizes, CcAckIn, CcSizes, CcState,
    SackFoldNets, INFLIGHT_BITS,
};
use crate::expr::{cat, fit, index_bits, lit, mux, repl, zext, Expr, Signal};
use crate::ir::{set, Module};

/// Module name.
pub const NAME: &str = "tx_sack";

const RST: &str = "Clock and reset";
const STEP: &str = "The step (tx_ack m_go_sack) and its record";
const RD: &str = "The step's reads: issued with the step, answered L cycles later";
const RING: &str = "The ring reads of both passes, a slot a cycle, answered L cycles later";
const WR: &str = "The handler's writes";
const EVT: &str = "Events, one a cycle, into the unit's pending events";
const CONT: &str = "The SACK's continuation (sack_stage's)";

/// The wire's `path_id` width.
const PATH_ID: u32 = 8;

/// Bits of the cycle count from the answer, up to `L + 2 x tx_ring_depth + 1`.
fn k_bits(p: &TxEngineParams) -> u32 {
    32 - (p.read_latency + 2 * p.ring_depth + 2).leading_zeros()
}

/// The unit's ports, in declaration order.
pub fn ports(p: &TxEngineParams) -> Vec<PortDef> {
    let (cb, sb, np) = (p.conn_bits, p.stream_bits, p.paths);
    let pb = index_bits(p.paths);
    let qb = stream_ptr_bits(p.wq_depth);
    let lb = BeatSizes::of(p).payload_len_bits();
    let bb = busy_bits(p);
    let planes = p.cfg.transport.planes;
    let streams = p.streams;
    let i = |nm: &str, w: u32, g: &'static str, c: &str| PortDef::input(nm, w, g, c);
    let o = |nm: &str, w: u32, g: &'static str, c: &str| PortDef::output(nm, w, g, c);
    vec![
        i("rst", 1, RST, "synchronous reset, active high"),
        i("ts_now", 32, RST, "timestamp"),
        i("s_go_sack", 1, STEP, "tx_ack starts the SACK handler on the SACK input register's record"),
        i("s_sack_conn", cb, STEP, "its connection"),
        i("s_sack_path_id", PATH_ID, STEP, "its path_id as on the wire"),
        i("s_sack_cum_psn", PSN, STEP, "its cumulative psn"),
        i("s_sack_bitmap", 256, STEP, "its bitmap (bit i: cum_psn + 1 + i)"),
        i("s_sack_ecn_cnt", 8, STEP, "its CE count"),
        i("s_sack_echo_ts", 16, STEP, "the tx_ts it echoes"),
        i("s_sack_rate_hint", 16, STEP, "its rate hint"),
        i("s_sack_stream_id", 8, STEP, "the stream its completed_msn is of"),
        i("s_sack_completed_msn", PSN, STEP, "its completed msn"),
        i("s_sack_dport", 16, STEP, "the UDP port it arrived at"),
        o("m_busy", bb, STEP, "the busy count the handler sets (tx_ack s_busy; 1 with the step, 0 without)"),
        o("m_unstall_valid", 1, STEP, "the connection's stalled bit is cleared"),
        o("m_unstall_conn", cb, STEP, "which connection"),
        o("m_rd_valid", 1, RD, "the context and the path's mirror are read"),
        o("m_rd_conn", cb, RD, "the connection"),
        o("m_rd_path", pb, RD, "the path (path_id's low bits; a path_id past the paths is stale)"),
        i("s_rd_open", 1, RD, "the context's open bit, L cycles after m_rd_valid"),
        i("s_rd_failed", 1, RD, "the connection has failed"),
        i("s_rd_npaths", pb + 1, RD, "its paths"),
        i("s_rd_rack_valid", 1, RD, "RACK across paths has a send"),
        i("s_rd_rack_sent", 32, RD, "its newest acknowledged send"),
        i("s_rd_rack_rtt", 32, RD, "and its RTT"),
        i("s_rd_cwnd", 32, RD, "the connection's window"),
        i("s_rd_acked_bytes", pt::ACKED_BYTES.width, RD, "bytes acknowledged toward the next increase"),
        i("s_rd_ecn_ewma", 8, RD, "the ECN fraction's EWMA"),
        i("s_rd_hold_until", 32, RD, "the CE cut's hold"),
        i("s_rd_srtt", 32, RD, "the connection's srtt"),
        i("s_rd_min_rtt", pt::MIN_RTT.width, RD, "its min_rtt"),
        i("s_rd_inflight", INFLIGHT_BITS, RD, "its bytes in flight"),
        i("s_lp", np * 32, RD, "last_progress of each of the connection's paths, path 0 in the low bits"),
        i("s_pm_next_psn", PSN, RD, "the path's next psn"),
        i("s_pm_cum_acked", PSN, RD, "its cumulative acknowledged psn"),
        i("s_pm_acked_seq", 32, RD, "one past its newest tx_seq acknowledged"),
        i("s_pm_sport", 16, RD, "its port (a PROBE reply arrives at it)"),
        i("s_pm_plane", pt::PLANE.width, RD, "its plane"),
        i("s_pm_probe_pending", 1, RD, "a PROBE on it waits for its answer"),
        i("s_pm_probe_ts", 16, RD, "the PROBE's tx_ts"),
        i("s_pm_probe_seq", 32, RD, "the PROBE's tx_seq"),
        i("s_pm_srtt", pt::SRTT.width, RD, "its srtt"),
        i("s_pm_rttvar", pt::RTTVAR.width, RD, "its rttvar"),
        i("s_pm_min_rtt", pt::MIN_RTT.width, RD, "its min_rtt (all ones before a sample)"),
        i("mark_valid", planes, RD, "per plane: marked unhealthy (registers, a level)"),
        o("m_stat_sack_stale", 1, WR, "a stale SACK (stat_sack_stale)"),
        o("m_hold_valid", 1, WR, "a live SACK's reads answered: tx_ack's count raised (s_hold_sack)"),
        o("m_hold_cnt", bb, WR, "to its two passes' 2 + 2 x span (s_hold_cnt)"),
        o("m_mark_clr_valid", 1, WR, "a PROBE reply takes its plane's mark"),
        o("m_mark_clr_plane", pt::PLANE.width, WR, "the plane"),
        o("m_unstall_all", 1, WR, "the plane was marked: every connection's stalled bit is cleared"),
        o("m_ring_rd_valid", 1, RING, "a ring slot of the SACK's path is read"),
        o("m_ring_rd_conn", cb, RING, "its connection"),
        o("m_ring_rd_path", pb, RING, "its path"),
        o("m_ring_rd_psn", PSN, RING, "its psn"),
        i("s_ring_valid", 1, RING, "the slot holds a packet, L cycles after m_ring_rd_valid"),
        i("s_ring_stream", sb, RING, "its request's stream"),
        i("s_ring_wq", qb, RING, "its request's work queue pointer"),
        i("s_ring_len", lb, RING, "its payload bytes"),
        i("s_ring_tx_ts", 16, RING, "its last transmission's tx_ts"),
        i("s_ring_sent", 32, RING, "and send time"),
        i("s_ring_tx_seq", 32, RING, "its tx_seq"),
        i("s_ring_phys", pb, RING, "the path its last copy left by"),
        i("s_ring_rnr_count", RNR_COUNT_BITS, RING, "the RNR back-offs it had"),
        i("s_ring_rnr_resend", 1, RING, "its last send was an RNR resend"),
        i("s_ring_rnr_wait", 1, RING, "it waits for an RNR back-off"),
        i("s_ring_resent", 1, RING, "it was retransmitted for loss"),
        i("s_ring_queued", 1, RING, "it is queued for retransmission"),
        o("m_ring_clr_valid", 1, WR, "pass 1: an acknowledged slot is emptied"),
        o("m_ring_clr_psn", PSN, WR, "its psn (the SACK's connection and path)"),
        o("m_wq_inc_valid", 1, WR, "its request's acked count goes up by one"),
        o("m_wq_inc_stream", sb, WR, "the request's stream"),
        o("m_wq_inc_wq", qb, WR, "its work queue pointer"),
        o("m_ring_lost_valid", 1, WR, "pass 2: a lost slot is written queued, its charge with it"),
        o("m_ring_lost_psn", PSN, WR, "its psn (the SACK's connection and path)"),
        o("m_ring_lost_charge", 1, WR, "charged: its copy's path made progress after it left"),
        o("m_retx_valid", 1, WR, "the lost slot is pushed into the retransmit queue"),
        o("m_retx_conn", cb, WR, "its connection"),
        o("m_retx_path", pb, WR, "its path"),
        o("m_retx_psn", PSN, WR, "its psn"),
        o("m_pm_valid", 1, WR, "the SACK's path's mirror is written"),
        o("m_pm_conn", cb, WR, "its connection"),
        o("m_pm_path", pb, WR, "its path"),
        o("m_pm_cum_acked", PSN, WR, "the new cumulative psn"),
        o("m_pm_acked_seq", 32, WR, "one past the newest tx_seq acknowledged"),
        o("m_pm_rtt_valid", 1, WR, "an RTT sample: srtt, rttvar and min_rtt are written"),
        o("m_pm_srtt", pt::SRTT.width, WR, "srtt after the sample"),
        o("m_pm_rttvar", pt::RTTVAR.width, WR, "rttvar after the sample"),
        o("m_pm_min_rtt", pt::MIN_RTT.width, WR, "min_rtt after the sample"),
        o("m_pm_timed_out_clr", 1, WR, "packets were acknowledged: timed_out is cleared"),
        o("m_pm_probe_clr", 1, WR, "a PROBE reply: probe_pending is cleared"),
        o("m_ctx_valid", 1, WR, "the connection's context is written"),
        o("m_ctx_conn", cb, WR, "the connection"),
        o("m_ctx_rack_valid", 1, WR, "RACK across paths has a send"),
        o("m_ctx_rack_sent", 32, WR, "its newest acknowledged send"),
        o("m_ctx_rack_rtt", 32, WR, "and its RTT"),
        o("m_ctx_cwnd", 32, WR, "the window after the step"),
        o("m_ctx_acked_bytes", pt::ACKED_BYTES.width, WR, "bytes toward the next increase"),
        o("m_ctx_ecn_ewma", 8, WR, "the ECN fraction's EWMA"),
        o("m_ctx_hold_until", 32, WR, "the CE cut's hold"),
        o("m_ctx_srtt", 32, WR, "the connection's srtt"),
        o("m_ctx_min_rtt", pt::MIN_RTT.width, WR, "its min_rtt"),
        o("m_ctx_rate_hint", 16, WR, "the SACK's rate hint"),
        o("m_ctx_cap", 32, WR, "the connection's cap"),
        o("m_ctx_inflight", INFLIGHT_BITS, WR, "bytes in flight less those acknowledged"),
        o("m_lp_valid", 1, WR, "last_progress of the paths in m_lp_mask becomes m_lp_ts"),
        o("m_lp_conn", cb, WR, "their connection"),
        o("m_lp_mask", np, WR, "the paths: those that delivered and, for a PROBE reply, the SACK's"),
        o("m_lp_ts", 32, WR, "the step's timestamp"),
        o("m_evt_valid", 1, EVT, "an event is pending"),
        o("m_evt_kind", tel::KIND_BITS, EVT, "ACK_STEER, PROBE_REPLY or SILENT"),
        o("m_evt_conn", cb, EVT, "its connection"),
        o("m_evt_path", pb, EVT, "its path (SILENT: the lost copy's)"),
        o("m_evt_now", tel::TS_BITS, EVT, "the step's timestamp"),
        o("m_evt_cum_acked", PSN, EVT, "ACK_STEER: the new cumulative psn"),
        o("m_evt_acked_pkts", tel::PKTS_BITS, EVT, "ACK_STEER: packets acknowledged"),
        o("m_evt_acked_bytes", tel::BYTES_BITS, EVT, "ACK_STEER: bytes acknowledged"),
        o("m_evt_ecn_cnt", tel::ECN_BITS, EVT, "ACK_STEER: the SACK's CE count"),
        o("m_evt_rtt_valid", 1, EVT, "ACK_STEER: an RTT sample"),
        o("m_evt_rtt", tel::RTT_BITS, EVT, "ACK_STEER: the sample"),
        o("m_evt_acked_seq", 32, EVT, "ACK_STEER: one past the newest tx_seq acknowledged"),
        o("m_cont_valid", 1, CONT, "the SACK's later stages are due (sack_stage's continuation)"),
        o("m_cont_conn", cb, CONT, "its connection"),
        o("m_cont_wait", 1, CONT, "SILENT events were sent: the next stage waits for their answers"),
        o("m_cont_touched", streams, CONT, "the streams a packet was acknowledged of"),
        o("m_cont_stream_id", 8, CONT, "the record's stream_id"),
        o("m_cont_completed_msn", PSN, CONT, "the record's completed_msn"),
    ]
}

/// The smaller of an unsigned value and a constant, in `w` bits (`e`
/// zero-extended to `width` bits, at least `w`).
fn min_lit(m: &mut Module, name: &str, e: Expr, width: u32, w: u32, most: u64) -> Signal {
    if width <= w && (1u64 << width) - 1 <= most {
        return m.wire_from(name, w, "the value (never past the field's largest)", zext(e, w));
    }
    let v = m.wire_from(&format!("{name}_wide"), width, "the value, widened", zext(e, width));
    m.wire_from(
        name,
        w,
        "the value, at most the field's largest",
        mux(v.expr().gt(lit(width, most)), lit(w, most), v.slice(w - 1, 0)),
    )
}

/// The `tx_sack` module for `p`.
pub fn build(p: &TxEngineParams) -> Module {
    let (cb, sb, l, np) = (p.conn_bits, p.stream_bits, p.read_latency, p.paths);
    let pb = index_bits(p.paths);
    let qb = stream_ptr_bits(p.wq_depth);
    let lb = BeatSizes::of(p).payload_len_bits();
    let bb = busy_bits(p);
    let kb = k_bits(p);
    let planes = p.cfg.transport.planes;
    let k = Consts::from_config(&p.cfg);
    let sz = CcSizes::of(p);
    assert!(p.paths.is_power_of_two(), "the read takes path_id's low bits as the model's path_id % PATHS");
    assert!((1..=2).contains(&l), "the last write lands before the count frees the unit only for L <= 2");
    assert!(pb < PATH_ID, "npaths fits the wire's path_id width");
    assert!(lb <= 32, "a slot's length fits the fold's 32-bit byte count");

    let mut m = Module::new(NAME);
    m.describe(
        "tx_engine acknowledgement unit's SACK handler: checks, both ring passes, events, mirror and context writes",
    );
    let defs = ports(p);
    let (clk, sig) = crate::ports::declare(&mut m, &defs);
    let sg = |nm: &str| sig[nm].clone();
    m.clock_domain(&clk, &sg("rst"));
    let w = |m: &mut Module, nm: &str, width: u32, c: &str, e: Expr| m.wire_from(nm, width, c, e);

    // ------------------------------------------------------------ the step
    let go = sg("s_go_sack");
    m.assign(sg("m_busy"), mux(&go, lit(bb, 1), lit(bb, 0)));
    m.assign(sg("m_unstall_valid"), &go);
    m.assign(sg("m_unstall_conn"), gate(&go, sg("s_sack_conn").expr(), cb));
    m.assign(sg("m_rd_valid"), &go);
    m.assign(sg("m_rd_conn"), gate(&go, sg("s_sack_conn").expr(), cb));
    let low = |e: Expr| if p.paths == 1 { lit(pb, 0) } else { e.slice(pb - 1, 0) };
    m.assign(sg("m_rd_path"), gate(&go, low(sg("s_sack_path_id").expr()), pb));

    // The record, held until the next step (at least L + 2 cycles on).
    let rec = |m: &mut Module, nm: &str, port: &str, width: u32, c: &str| {
        let r = m.reg_no_reset(nm, width, c);
        m.next(set(&r.next, mux(&go, sg(port).expr(), r.q.expr())));
        r.q
    };
    let r_conn = rec(&mut m, "rec_conn", "s_sack_conn", cb, "the SACK's connection");
    let r_path = rec(&mut m, "rec_path_id", "s_sack_path_id", PATH_ID, "its path_id");
    let r_cum = rec(&mut m, "rec_cum_psn", "s_sack_cum_psn", PSN, "its cumulative psn");
    let r_bitmap = rec(&mut m, "rec_bitmap", "s_sack_bitmap", 256, "its bitmap");
    let r_ecn = rec(&mut m, "rec_ecn_cnt", "s_sack_ecn_cnt", 8, "its CE count");
    let r_echo = rec(&mut m, "rec_echo_ts", "s_sack_echo_ts", 16, "its echoed tx_ts");
    let r_hint = rec(&mut m, "rec_rate_hint", "s_sack_rate_hint", 16, "its rate hint");
    let r_sid = rec(&mut m, "rec_stream_id", "s_sack_stream_id", 8, "its stream_id");
    let r_msn = rec(&mut m, "rec_completed_msn", "s_sack_completed_msn", PSN, "its completed msn");
    let r_dport = rec(&mut m, "rec_dport", "s_sack_dport", 16, "the port it arrived at");
    let r_ts = rec(&mut m, "rec_ts", "ts_now", 32, "ts_now in the step's cycle (every write's time)");
    let path = w(&mut m, "path", pb, "the SACK's path (path_id's low bits)", low(r_path.expr()));

    // The step's reads in flight: bit i set i + 1 edges after the step.
    let (pipe, ans) = super::read_answer(&mut m, &go, l);

    let held = |m: &mut Module, nm: &str, e: Expr, width: u32, c: &str| super::held(m, &ans, nm, e, width, c);
    let hp = |m: &mut Module, nm: &str, port: &str, c: &str| {
        let width = sig[port].width();
        held(m, nm, sig[port].expr(), width, c)
    };
    let npaths = hp(&mut m, "npaths", "s_rd_npaths", "the connection's paths");
    let next_psn = hp(&mut m, "next_psn", "s_pm_next_psn", "the path's next psn");
    let cum = hp(&mut m, "cum_acked", "s_pm_cum_acked", "the path's cumulative psn as read");
    let probe_seq = hp(&mut m, "probe_seq", "s_pm_probe_seq", "the PROBE's tx_seq");
    let acked_seq = hp(&mut m, "acked_seq", "s_pm_acked_seq", "the path's acked_seq as read");
    let pm_srtt = hp(&mut m, "pm_srtt", "s_pm_srtt", "the path's srtt");
    let pm_rttvar = hp(&mut m, "pm_rttvar", "s_pm_rttvar", "the path's rttvar");
    let pm_min_rtt = hp(&mut m, "pm_min_rtt", "s_pm_min_rtt", "the path's min_rtt");
    let lp = hp(&mut m, "lp", "s_lp", "the paths' last_progress");
    let cc_st = CcState {
        cwnd: hp(&mut m, "ctx_cwnd", "s_rd_cwnd", "the connection's window"),
        acked_bytes: hp(&mut m, "ctx_acked_bytes", "s_rd_acked_bytes", "bytes toward the next increase"),
        ecn_ewma: hp(&mut m, "ctx_ecn_ewma", "s_rd_ecn_ewma", "the ECN fraction's EWMA"),
        hold_until: hp(&mut m, "ctx_hold_until", "s_rd_hold_until", "the CE cut's hold"),
        srtt: hp(&mut m, "ctx_srtt", "s_rd_srtt", "the connection's srtt"),
        min_rtt: hp(&mut m, "ctx_min_rtt", "s_rd_min_rtt", "the connection's min_rtt"),
    };
    let inflight = hp(&mut m, "inflight", "s_rd_inflight", "the connection's bytes in flight");

    // ------------------------------------------------------------ the checks
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
        r_path.expr().lt(zext(sg("s_rd_npaths").expr(), PATH_ID)),
    );
    // The offset asked of the window: the answered slot's, in either pass.
    let kc = m.reg("k", kb, 0, "cycles since the answer (valid while the passes run)");
    let kk = w(&mut m, "k_now", kb, "cycles since the answer", mux(&ans, lit(kb, 0), kc.q.expr()));
    // At most tx_ring_depth: the low bits' difference is the whole.
    let span = w(
        &mut m,
        "span",
        kb,
        "psns outstanding on the path, at most tx_ring_depth",
        next_psn.slice(kb - 1, 0) - cum.slice(kb - 1, 0),
    );
    let kl = lit(kb, u64::from(l));
    let p1_off = w(&mut m, "p1_off", kb, "pass 1: the answered slot's offset", kk.expr() - kl.clone());
    let p2_off = w(
        &mut m,
        "p2_off",
        kb,
        "pass 2: the answered slot's offset",
        kk.expr() - kl.clone() - span.expr() - lit(kb, 1),
    );
    let run = m.reg("running", 1, 0, "a live SACK's passes run");
    let running = w(&mut m, "running_now", 1, "the passes run this cycle (from the answer's)", run.q.expr());
    let in_p1 = w(
        &mut m,
        "p1_answer",
        1,
        "a first-pass slot answers",
        kk.expr().ge(kl.clone()).logic_and(p1_off.expr().lt(span.expr())),
    );
    let in_p2 = w(
        &mut m,
        "p2_answer",
        1,
        "a second-pass slot answers",
        kk.expr().gt(kl.clone() + span.expr()).logic_and(p2_off.expr().lt(span.expr())),
    );
    let d_ans = w(&mut m, "d_answer", PSN, "the answered slot's offset", zext(mux(&in_p1, &p1_off, &p2_off), PSN));
    let win = sack_window(&mut m, "win", &next_psn, &cum, &r_cum, &r_bitmap, &d_ans);
    let ok = w(
        &mut m,
        "sack_ok",
        1,
        "a live SACK of one of the connection's paths that names no psn never sent",
        live.expr().logic_and(&path_ok).logic_and(win.stale.expr().logic_not()),
    );
    m.assign(sg("m_stat_sack_stale"), live.expr().logic_and(ok.expr().logic_not()));
    m.assign(sg("m_hold_valid"), &ok);
    m.assign(sg("m_hold_cnt"), gate(&ok, lit(bb, 2) + (zext(span.expr(), bb) << lit(1, 1)), bb));
    let active = w(&mut m, "active", 1, "the passes run this cycle", ok.expr().logic_or(&running));

    // A PROBE reply: the mirror's PROBE answered at the port it left by.
    let reply_now = sg("s_pm_probe_pending")
        .expr()
        .logic_and(sg("s_pm_probe_ts").expr().eq(r_echo.expr()))
        .logic_and(sg("s_pm_sport").expr().eq(r_dport.expr()));
    let reply = held(&mut m, "reply", ok.expr().logic_and(reply_now), 1, "the SACK answers the path's PROBE");
    let plane = sg("s_pm_plane");
    let plane_ok = if planes >= 1 << pt::PLANE.width {
        lit(1, 1)
    } else {
        plane.expr().lt(lit(pt::PLANE.width, u64::from(planes)))
    };
    let take =
        w(&mut m, "mark_take", 1, "a reply takes its plane's mark", reply.expr().logic_and(&ans).logic_and(plane_ok));
    m.assign(sg("m_mark_clr_valid"), &take);
    m.assign(sg("m_mark_clr_plane"), gate(&take, plane.expr(), pt::PLANE.width));
    let mut marked = lit(1, 0);
    for pl in 0..planes {
        marked = mux(plane.expr().eq(lit(pt::PLANE.width, u64::from(pl))), sg("mark_valid").bit(pl), marked);
    }
    m.assign(sg("m_unstall_all"), take.expr().logic_and(marked));

    // ------------------------------------------------------------ the ring reads
    // Pass 1 reads offset k at k < span; pass 2 offset k - span - 1 after.
    let rd1 = kk.expr().lt(span.expr());
    let rd2_off = w(&mut m, "rd2_off", kb, "pass 2: the read slot's offset", kk.expr() - span.expr() - lit(kb, 1));
    let rd2 = kk.expr().gt(span.expr()).logic_and(rd2_off.expr().lt(span.expr()));
    let rd = w(&mut m, "ring_read", 1, "a slot is read", active.expr().logic_and(rd1.clone().logic_or(rd2)));
    let rd_off = mux(rd1, kk.expr(), rd2_off.expr());
    m.assign(sg("m_ring_rd_valid"), &rd);
    m.assign(sg("m_ring_rd_conn"), gate(&rd, r_conn.expr(), cb));
    m.assign(sg("m_ring_rd_path"), gate(&rd, path.expr(), pb));
    m.assign(sg("m_ring_rd_psn"), gate(&rd, cum.expr() + zext(rd_off, PSN), PSN));

    // ------------------------------------------------------------ pass 1
    let a1 = w(
        &mut m,
        "p1_acked",
        1,
        "pass 1: the answered slot holds a packet the SACK acknowledges",
        running.expr().logic_and(&in_p1).logic_and(&win.acks).logic_and(sg("s_ring_valid")),
    );
    let slot = AckedSlotNets {
        len: w(&mut m, "slot_len", 32, "the slot's payload bytes", zext(sg("s_ring_len").expr(), 32)),
        tx_ts: sg("s_ring_tx_ts"),
        sent: sg("s_ring_sent"),
        tx_seq: sg("s_ring_tx_seq"),
        phys: sg("s_ring_phys"),
        rnr_resend: sg("s_ring_rnr_resend"),
        resent: sg("s_ring_resent"),
        rnr_backed_off: w(
            &mut m,
            "slot_rnr_backed_off",
            1,
            "it has waited out an RNR back-off",
            sg("s_ring_rnr_count").expr().ne(lit(RNR_COUNT_BITS, 0)),
        ),
    };
    // The fold so far: the context's RACK and the mirror's acked_seq at
    // the answer, then a register.
    let fr = |m: &mut Module, nm: &str, width: u32, c: &str| m.reg_no_reset(&format!("acc_{nm}_r"), width, c);
    let r_pkts = fr(&mut m, "pkts", sz.pkts_bits, "packets acknowledged");
    let r_bytes = fr(&mut m, "bytes", 32, "bytes acknowledged");
    let r_rtt_ok = fr(&mut m, "rtt_ok", 1, "an RTT sample");
    let r_rack_v = fr(&mut m, "rack_valid", 1, "RACK has a send");
    let r_rack_s = fr(&mut m, "rack_sent", 32, "RACK's newest send");
    let r_rack_r = fr(&mut m, "rack_rtt", 32, "its RTT");
    let r_deliv = fr(&mut m, "delivered", np, "paths that delivered");
    let r_max = fr(&mut m, "max_seq", 32, "one past the newest tx_seq delivered");
    let cur = |m: &mut Module, nm: &str, init: Expr, r: &crate::ir::Reg, c: &str| {
        let width = r.q.width();
        m.wire_from(&format!("acc_{nm}"), width, c, mux(&ans, init, r.q.expr()))
    };
    let f0 = SackFoldNets {
        pkts: cur(&mut m, "pkts", lit(sz.pkts_bits, 0), &r_pkts, "packets acknowledged so far"),
        bytes: cur(&mut m, "bytes", lit(32, 0), &r_bytes, "bytes acknowledged so far"),
        rtt_ok: cur(&mut m, "rtt_ok", lit(1, 0), &r_rtt_ok, "an RTT sample so far"),
        rack_valid: cur(&mut m, "rack_valid", sg("s_rd_rack_valid").expr(), &r_rack_v, "RACK has a send"),
        rack_sent: cur(&mut m, "rack_sent", sg("s_rd_rack_sent").expr(), &r_rack_s, "RACK's newest send"),
        rack_rtt: cur(&mut m, "rack_rtt", sg("s_rd_rack_rtt").expr(), &r_rack_r, "its RTT"),
        delivered: cur(&mut m, "delivered", lit(np, 0), &r_deliv, "paths that delivered so far"),
        max_seq: cur(&mut m, "max_seq", sg("s_pm_acked_seq").expr(), &r_max, "one past the newest tx_seq so far"),
    };
    let f1 = sack_fold(&mut m, "slot_fold", &f0, &slot, &r_echo, &r_ts);
    let pick = |m: &mut Module, nm: &str, a: &Signal, b: &Signal| {
        let width = a.width();
        m.wire_from(&format!("acc_{nm}_next"), width, "the fold after this cycle's slot", mux(&a1, b.expr(), a.expr()))
    };
    let f = SackFoldNets {
        pkts: pick(&mut m, "pkts", &f0.pkts, &f1.pkts),
        bytes: pick(&mut m, "bytes", &f0.bytes, &f1.bytes),
        rtt_ok: pick(&mut m, "rtt_ok", &f0.rtt_ok, &f1.rtt_ok),
        rack_valid: pick(&mut m, "rack_valid", &f0.rack_valid, &f1.rack_valid),
        rack_sent: pick(&mut m, "rack_sent", &f0.rack_sent, &f1.rack_sent),
        rack_rtt: pick(&mut m, "rack_rtt", &f0.rack_rtt, &f1.rack_rtt),
        delivered: pick(&mut m, "delivered", &f0.delivered, &f1.delivered),
        max_seq: pick(&mut m, "max_seq", &f0.max_seq, &f1.max_seq),
    };
    for (r, n) in [
        (&r_pkts, &f.pkts),
        (&r_bytes, &f.bytes),
        (&r_rtt_ok, &f.rtt_ok),
        (&r_rack_v, &f.rack_valid),
        (&r_rack_s, &f.rack_sent),
        (&r_rack_r, &f.rack_rtt),
        (&r_deliv, &f.delivered),
        (&r_max, &f.max_seq),
    ] {
        m.next(set(&r.next, n.expr()));
    }
    let ans_psn = w(&mut m, "answer_psn", PSN, "the answered slot's psn", cum.expr() + d_ans.expr());
    m.assign(sg("m_ring_clr_valid"), &a1);
    m.assign(sg("m_ring_clr_psn"), gate(&a1, ans_psn.expr(), PSN));
    m.assign(sg("m_wq_inc_valid"), &a1);
    m.assign(sg("m_wq_inc_stream"), gate(&a1, sg("s_ring_stream").expr(), sb));
    m.assign(sg("m_wq_inc_wq"), gate(&a1, sg("s_ring_wq").expr(), qb));
    // The streams touched.
    let touched_r = m.reg_no_reset("touched_r", p.streams, "streams a packet was acknowledged of");
    let touched0 = mux(&ans, lit(p.streams, 0), touched_r.q.expr());
    let hot: Vec<Expr> = (0..p.streams).rev().map(|s| sg("s_ring_stream").expr().eq(lit(sb, u64::from(s)))).collect();
    let touched = w(
        &mut m,
        "touched",
        p.streams,
        "the streams touched after this cycle's slot",
        touched0 | (repl(p.streams, a1.expr()) & cat(&hot)),
    );
    m.next(set(&touched_r.next, touched.expr()));
    // The new cumulative psn: the first slot still holding a packet.
    let base_r = m.reg_no_reset("base_found_r", 1, "a slot still holding a packet was found");
    let base_d = m.reg_no_reset("base_off_r", PSN, "its offset");
    let found0 = mux(&ans, lit(1, 0), base_r.q.expr());
    let off0 = mux(&ans, lit(PSN, 0), base_d.q.expr());
    let stays = running
        .expr()
        .logic_and(&in_p1)
        .logic_and(sg("s_ring_valid"))
        .logic_and(win.acks.expr().logic_not())
        .logic_and(found0.clone().logic_not());
    let found = w(&mut m, "base_found", 1, "a slot still holds a packet", found0.logic_or(stays.clone()));
    let off = w(&mut m, "base_off", PSN, "the first such slot's offset", mux(stays, d_ans.expr(), off0));
    m.next(set(&base_r.next, found.expr()));
    m.next(set(&base_d.next, off.expr()));
    let new_base =
        w(&mut m, "new_base", PSN, "the new cumulative psn", mux(&found, cum.expr() + off.expr(), next_psn.expr()));

    // ------------------------------------------------------------ the first pass's end
    // k = L + span - 1 (the last first-pass answer; L - 1 with none).
    let e_at = w(&mut m, "end_k", kb, "the first pass's end", kl.clone() + span.expr() - lit(kb, 1));
    let fin = w(
        &mut m,
        "pass1_end",
        1,
        "the first pass ends: the fold is complete",
        active.expr().logic_and(kk.expr().eq(e_at.expr())),
    );
    let rtt16 = w(&mut m, "rtt", 16, "the echoed timestamp's RTT", r_ts.slice(15, 0) - r_echo.expr());
    let rtt_v = w(&mut m, "rtt_valid", 1, "an RTT sample", f.rtt_ok.expr().logic_or(&reply));
    let pkts_any = f.pkts.expr().ne(lit(sz.pkts_bits, 0));
    // The ACK_STEER event.
    let steer = fin.clone();
    // The mirror: the RTT sample (path_telemetry's RFC 6298 update).
    let (sw, vw, mw) = (pt::SRTT.width, pt::RTTVAR.width, pt::MIN_RTT.width);
    let r20 = zext(rtt16.expr(), sw);
    let first = pm_min_rtt.expr().eq(lit(mw, u64::from(MIN_RTT_NONE)));
    let err = w(
        &mut m,
        "rtt_err",
        sw,
        "|rtt - srtt|",
        mux(r20.clone().ge(pm_srtt.expr()), r20.clone() - pm_srtt.expr(), pm_srtt.expr() - r20.clone()),
    );
    let srtt_ew = crate::path_telemetry::ewma(&mut m, "pm_srtt_ewma", sw, pm_srtt.expr(), r20.clone(), k.srtt_shift);
    let var_ew = crate::path_telemetry::ewma(
        &mut m,
        "pm_rttvar_ewma",
        sw,
        zext(pm_rttvar.expr(), sw),
        err.expr(),
        k.rttvar_shift,
    );
    let var_clamped = min_lit(&mut m, "pm_rttvar_clamped", var_ew.expr(), sw, vw, (1 << vw) - 1);
    let new_srtt =
        w(&mut m, "pm_srtt_new", sw, "srtt after the sample", mux(first.clone(), r20.clone(), srtt_ew.expr()));
    let new_var = w(
        &mut m,
        "pm_rttvar_new",
        vw,
        "rttvar after the sample",
        mux(first.clone(), zext(rtt16.slice(15, 1), vw), &var_clamped),
    );
    let new_min = w(
        &mut m,
        "pm_min_rtt_new",
        mw,
        "min_rtt after the sample",
        mux(first.logic_or(r20.clone().lt(pm_min_rtt.expr())), r20, pm_min_rtt.expr()),
    );
    m.assign(sg("m_pm_valid"), &fin);
    m.assign(sg("m_pm_conn"), gate(&fin, r_conn.expr(), cb));
    m.assign(sg("m_pm_path"), gate(&fin, path.expr(), pb));
    m.assign(sg("m_pm_cum_acked"), gate(&fin, new_base.expr(), PSN));
    // The fold starts at acked_seq and moves only forward, so this is the
    // model's "if later" in all but a 2^31 jump.
    let newer = super::seq32_after(&mut m, "acked_seq_diff", f.max_seq.expr(), acked_seq.expr());
    let seq_new =
        w(&mut m, "acked_seq_new", 32, "the mirror's acked_seq after", mux(newer, f.max_seq.expr(), acked_seq.expr()));
    m.assign(sg("m_pm_acked_seq"), gate(&fin, seq_new.expr(), 32));
    let sample = w(&mut m, "pm_sample", 1, "the mirror takes the RTT sample", fin.expr().logic_and(&rtt_v));
    m.assign(sg("m_pm_rtt_valid"), &sample);
    m.assign(sg("m_pm_srtt"), gate(&sample, new_srtt.expr(), sw));
    m.assign(sg("m_pm_rttvar"), gate(&sample, new_var.expr(), vw));
    m.assign(sg("m_pm_min_rtt"), gate(&sample, new_min.expr(), mw));
    m.assign(sg("m_pm_timed_out_clr"), fin.expr().logic_and(pkts_any.clone()));
    m.assign(sg("m_pm_probe_clr"), fin.expr().logic_and(&reply));
    // The context: RACK, the congestion step, the bytes in flight.
    let ack_in = CcAckIn {
        ts: r_ts.clone(),
        pkts: f.pkts.clone(),
        bytes: f.bytes.clone(),
        ecn_cnt: w(&mut m, "cc_ecn_cnt", 8, "CE steering: the connection takes no CE count", lit(8, 0)),
        rate_hint: r_hint.clone(),
        rtt_valid: rtt_v.clone(),
        rtt: rtt16.clone(),
        npaths: npaths.clone(),
    };
    let cc = conn_cc(&mut m, "cc", &sz, &cc_st, &ack_in);
    m.assign(sg("m_ctx_valid"), &fin);
    m.assign(sg("m_ctx_conn"), gate(&fin, r_conn.expr(), cb));
    m.assign(sg("m_ctx_rack_valid"), fin.expr().logic_and(&f.rack_valid));
    m.assign(sg("m_ctx_rack_sent"), gate(fin.expr().logic_and(&f.rack_valid), f.rack_sent.expr(), 32));
    m.assign(sg("m_ctx_rack_rtt"), gate(&fin, f.rack_rtt.expr(), 32));
    for (port, s) in [
        ("m_ctx_cwnd", &cc.state.cwnd),
        ("m_ctx_acked_bytes", &cc.state.acked_bytes),
        ("m_ctx_ecn_ewma", &cc.state.ecn_ewma),
        ("m_ctx_hold_until", &cc.state.hold_until),
        ("m_ctx_srtt", &cc.state.srtt),
        ("m_ctx_min_rtt", &cc.state.min_rtt),
        ("m_ctx_cap", &cc.cap),
    ] {
        m.assign(sg(port), gate(&fin, s.expr(), s.width()));
    }
    m.assign(sg("m_ctx_rate_hint"), gate(&fin, r_hint.expr(), 16));
    m.assign(sg("m_ctx_inflight"), gate(&fin, inflight.expr() - zext(f.bytes.expr(), INFLIGHT_BITS), INFLIGHT_BITS));
    // last_progress: the paths that delivered and, for a reply, the SACK's,
    // of the connection's paths.
    let below: Vec<Expr> = (0..np).rev().map(|q| lit(pb + 1, u64::from(q)).lt(npaths.expr())).collect();
    let own: Vec<Expr> = (0..np).rev().map(|q| path.expr().eq(lit(pb, u64::from(q)))).collect();
    let progress = w(
        &mut m,
        "progress",
        np,
        "paths whose last_progress becomes the step's time",
        (f.delivered.expr() | (repl(np, reply.expr()) & cat(&own))) & cat(&below),
    );
    m.assign(sg("m_lp_valid"), &fin);
    m.assign(sg("m_lp_conn"), gate(&fin, r_conn.expr(), cb));
    m.assign(sg("m_lp_mask"), gate(&fin, progress.expr(), np));
    m.assign(sg("m_lp_ts"), gate(&fin, r_ts.expr(), 32));
    let prog_r = m.reg_no_reset("progress_r", np, "paths whose last_progress the first pass wrote");
    m.next(set(&prog_r.next, mux(&fin, progress.expr(), prog_r.q.expr())));
    // lost_before: the new acked_seq, or a reply's probe_seq if later.
    let seq_r = m.reg_no_reset("lost_before_r", 32, "a packet sent before this is lost");
    let later = super::seq32_after(&mut m, "probe_after", probe_seq.expr(), seq_new.expr());
    let lost_before = mux(reply.expr().logic_and(later), probe_seq.expr(), seq_new.expr());
    m.next(set(&seq_r.next, mux(&fin, lost_before, seq_r.q.expr())));

    // ------------------------------------------------------------ pass 2
    let gone = super::seq32_after(&mut m, "lost_diff", seq_r.q.expr(), sg("s_ring_tx_seq").expr());
    let lost = w(
        &mut m,
        "lost",
        1,
        "pass 2: the answered slot's packet is lost",
        running
            .expr()
            .logic_and(&in_p2)
            .logic_and(win.acks.expr().logic_not())
            .logic_and(sg("s_ring_valid"))
            .logic_and(sg("s_ring_queued").expr().logic_not())
            .logic_and(sg("s_ring_rnr_wait").expr().logic_not())
            .logic_and(gone),
    );
    let phys = sg("s_ring_phys");
    let mut lp_phys = lit(32, 0);
    let mut wrote = lit(1, 0);
    for q in 0..np {
        let here = phys.expr().eq(lit(pb, u64::from(q)));
        lp_phys = mux(here.clone(), lp.slice(32 * q + 31, 32 * q), lp_phys);
        wrote = mux(here, prog_r.q.bit(q), wrote);
    }
    let progress_at = w(
        &mut m,
        "phys_progress",
        32,
        "last_progress of the lost copy's path, after the first pass",
        mux(wrote, r_ts.expr(), lp_phys),
    );
    let charge = super::seq32_after(&mut m, "charge_diff", progress_at.expr(), sg("s_ring_sent").expr());
    let charge = w(&mut m, "charge", 1, "the loss is charged", charge);
    m.assign(sg("m_ring_lost_valid"), &lost);
    m.assign(sg("m_ring_lost_psn"), gate(&lost, ans_psn.expr(), PSN));
    m.assign(sg("m_ring_lost_charge"), lost.expr().logic_and(&charge));
    m.assign(sg("m_retx_valid"), &lost);
    m.assign(sg("m_retx_conn"), gate(&lost, r_conn.expr(), cb));
    m.assign(sg("m_retx_path"), gate(&lost, path.expr(), pb));
    m.assign(sg("m_retx_psn"), gate(&lost, ans_psn.expr(), PSN));
    let uncharged = w(
        &mut m,
        "uncharged",
        1,
        "an uncharged loss: the silent path's timeout",
        lost.expr().logic_and(charge.expr().logic_not()),
    );
    let cap = p.cfg.timers.suspect_after_rtos;
    let (silent, silent_counts) = super::silent_cap(&mut m, &ans, &uncharged, &phys, np, cap);
    let silent_r = m.reg_no_reset("silent_r", 1, "SILENT events were sent");
    let silent_any = mux(&ans, lit(1, 0), silent_r.q.expr()).logic_or(&uncharged);
    m.next(set(&silent_r.next, silent_any.clone()));

    // ------------------------------------------------------------ events
    let r_at = kl.clone() + span.expr();
    let rep = w(
        &mut m,
        "reply_event",
        1,
        "the PROBE_REPLY event",
        active.expr().logic_and(&reply).logic_and(kk.expr().eq(r_at)),
    );
    let ev = w(&mut m, "evt", 1, "an event this cycle", steer.expr().logic_or(&rep).logic_or(&silent));
    let kind = mux(
        &steer,
        lit(tel::KIND_BITS, u64::from(tel::kind::ACK_STEER)),
        mux(
            &rep,
            lit(tel::KIND_BITS, u64::from(tel::kind::PROBE_REPLY)),
            lit(tel::KIND_BITS, u64::from(tel::kind::SILENT)),
        ),
    );
    m.assign(sg("m_evt_valid"), &ev);
    m.assign(sg("m_evt_kind"), gate(&ev, kind, tel::KIND_BITS));
    m.assign(sg("m_evt_conn"), gate(&ev, r_conn.expr(), cb));
    m.assign(sg("m_evt_path"), gate(&ev, mux(&silent, phys.expr(), path.expr()), pb));
    m.assign(sg("m_evt_now"), gate(&ev, r_ts.expr(), 32));
    m.assign(sg("m_evt_cum_acked"), gate(&steer, new_base.expr(), PSN));
    let evt_pkts = min_lit(&mut m, "evt_pkts", f.pkts.expr(), sz.pkts_bits, tel::PKTS_BITS, pt::INFLIGHT.max());
    let evt_bytes = min_lit(&mut m, "evt_bytes", f.bytes.expr(), 32, tel::BYTES_BITS, pt::ACKED_BYTES.max());
    m.assign(sg("m_evt_acked_pkts"), gate(&steer, evt_pkts.expr(), tel::PKTS_BITS));
    m.assign(sg("m_evt_acked_bytes"), gate(&steer, evt_bytes.expr(), tel::BYTES_BITS));
    m.assign(sg("m_evt_ecn_cnt"), gate(&steer, r_ecn.expr(), 8));
    m.assign(sg("m_evt_rtt_valid"), steer.expr().logic_and(&rtt_v));
    m.assign(sg("m_evt_rtt"), gate(steer.expr().logic_and(&rtt_v), rtt16.expr(), 16));
    m.assign(sg("m_evt_acked_seq"), gate(&steer, f.max_seq.expr(), 32));

    // ------------------------------------------------------------ the continuation
    let f_at = kl + (zext(span.expr(), kb) << lit(1, 1));
    let done = w(&mut m, "cont", 1, "the passes end: the continuation", active.expr().logic_and(kk.expr().eq(f_at)));
    m.assign(sg("m_cont_valid"), &done);
    m.assign(sg("m_cont_conn"), gate(&done, r_conn.expr(), cb));
    m.assign(sg("m_cont_wait"), done.expr().logic_and(silent_any));
    m.assign(sg("m_cont_touched"), gate(&done, touched.expr(), p.streams));
    m.assign(sg("m_cont_stream_id"), gate(&done, r_sid.expr(), 8));
    m.assign(sg("m_cont_completed_msn"), gate(&done, r_msn.expr(), PSN));

    // The passes' registers.
    m.next(set(&run.next, active.expr().logic_and(done.expr().logic_not())));
    m.next(set(&kc.next, mux(&active, kk.expr() + lit(kb, 1), kc.q.expr())));
    let inner = Inner {
        pipe,
        rec: vec![r_conn, r_path, r_cum, r_bitmap, r_ecn, r_echo, r_hint, r_sid, r_msn, r_dport, r_ts],
        k: kk,
        running,
        next_psn,
        cum,
        reply,
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
    /// The record registers, in the ghosts' order.
    rec: Vec<Signal>,
    /// Cycles since the answer, as the passes count them.
    k: Signal,
    /// The passes run (from the cycle after the answer).
    running: Signal,
    /// The answer's `next_psn`, `cum_acked` and PROBE reply, as held.
    next_psn: Signal,
    cum: Signal,
    reply: Signal,
    /// The SILENT events sent this step per path (`silent_cap`).
    silent_counts: Signal,
}

/// The `tx_sack` module for `cfg`'s engine parameters, for the proofs
/// ([`crate::proof::blocks`]).
pub fn generate(cfg: &mrnic_proto::Config) -> Result<Module, String> {
    let p = TxEngineParams::from_config(cfg).map_err(|e| e.to_string())?;
    Ok(build(&p))
}

/// The unit's proof tasks, with boolector ([`crate::proof::boolector_tasks`]):
/// every assertion by 2-induction, in two tasks: `prove` all but
/// [`ACKS_RULES`] (the ghosts tied to the registers), `prove_acks` those,
/// leaning on `prove`'s (with the rest of the rules assumed in its last
/// step too; on their own in one task they took minutes, the solver
/// relating the bitmap bit the spec picks to the one the unit does); and
/// the covers to [`COVER_DEPTH`] cycles.
pub fn formal_tasks(asserts: &[String]) -> Vec<crate::proof::Task> {
    let acks = |a: &String| ACKS_RULES.contains(&a.as_str());
    let mut tasks = crate::proof::boolector_tasks(2, COVER_DEPTH);
    tasks[0].asserts = Some(asserts.iter().filter(|a| !acks(a)).cloned().collect());
    let mut rules = tasks[0].clone();
    rules.name = "prove_acks";
    rules.asserts = Some(asserts.iter().filter(|a| acks(a)).cloned().collect());
    rules.lean_on_proven = true;
    tasks.insert(1, rules);
    tasks
}

/// The rules over which slots the SACK acknowledges (the model's
/// `sack_acks` against the unit's window), proven in `prove_acks`.
pub const ACKS_RULES: [&str; 4] = ["a_clear_when", "a_lost_only", "a_not_cleared_and_lost", "a_inv_cleared"];

/// The cover depth: the reset, a step, its answer `L` cycles later, two
/// passes over two slots, and a second step as soon as tx_ack's count
/// frees the unit after a one-slot SACK (`L + 5` cycles after the first).
pub const COVER_DEPTH: u32 = 16;

/// The unit's formal properties (see the module's `# Formal properties`).
fn properties(m: &mut Module, p: &TxEngineParams, f: &Inner) {
    use crate::formal::{implies, port};
    use crate::ir::{if_else, if_then};
    let (cb, l, np) = (p.conn_bits, p.read_latency, p.paths);
    let pb = index_bits(np);
    let bb = busy_bits(p);
    let r = p.ring_depth;
    let planes = p.cfg.transport.planes;
    let sg = |m: &Module, nm: &str| port(m, nm);
    let rst = sg(m, "rst");
    let go = sg(m, "s_go_sack");

    // ------------------------------------------------ tx_ack's side, assumed
    m.assume(
        "asm_no_step_in_reset",
        "no step starts in a reset (tx_ack is reset with the unit)",
        implies(&rst, go.expr().logic_not()),
    );
    // The age tells apart every cycle up to a live SACK's count's end
    // (L + 3 + 2 x tx_ring_depth); tx_ack's count takes the unit's hold.
    let hold = (sg(m, "m_hold_valid").expr(), sg(m, "m_hold_cnt").expr());
    let most = 2 * u64::from(r) + 2 * u64::from(l) + 4;
    let step = super::step::ghosts_held(m, go.expr(), bb, l, most, Some(hold));
    let (age, agw, at_ans) = (step.age.clone(), step.agw, step.at_answer.clone());
    let g = |m: &mut Module, nm: &str, w: u32, c: &str, port: &str| {
        let e = sg(m, port).expr();
        step.record(m, &go.expr(), (nm, w), c, e)
    };
    let f_conn = g(m, "f_conn", cb, "the latest step's connection", "s_sack_conn");
    let f_path = g(m, "f_path_id", PATH_ID, "its path_id", "s_sack_path_id");
    let f_cum_psn = g(m, "f_cum_psn", PSN, "its cumulative psn", "s_sack_cum_psn");
    let f_bitmap = g(m, "f_bitmap", 256, "its bitmap", "s_sack_bitmap");
    let f_ecn = g(m, "f_ecn_cnt", 8, "its CE count", "s_sack_ecn_cnt");
    let f_echo = g(m, "f_echo_ts", 16, "its echoed tx_ts", "s_sack_echo_ts");
    let f_hint = g(m, "f_rate_hint", 16, "its rate hint", "s_sack_rate_hint");
    let f_sid = g(m, "f_stream_id", 8, "its stream_id", "s_sack_stream_id");
    let f_msn = g(m, "f_completed_msn", PSN, "its completed msn", "s_sack_completed_msn");
    let f_dport = g(m, "f_dport", 16, "the port it arrived at", "s_sack_dport");
    let f_ts = g(m, "f_ts", 32, "ts_now at the step", "ts_now");

    // ------------------------------------------------ the answer, from the spec (on_sack)
    let alive_in = sg(m, "s_rd_open").expr().logic_and(sg(m, "s_rd_failed").expr().logic_not());
    let span_in = sg(m, "s_pm_next_psn").expr() - sg(m, "s_pm_cum_acked").expr();
    m.assume(
        "asm_span_within",
        &format!(
            "a path holds at most tx_ring_depth = {r} packets (the decision sends only while the ring has a free \
             slot): next_psn - cum_acked as the answer reads them, on a connection open and not failed; the unit \
             counts the passes in the difference's low bits"
        ),
        implies(at_ans.expr().logic_and(alive_in.clone()), span_in.le(lit(PSN, u64::from(r)))),
    );
    // The ghosts of the answer: taken in its cycle, cleared by a step.
    let f_alive = m.formal_wire("f_alive", 1, "the latest step's answer read its connection open and not failed");
    let f_ok = m.formal_wire("f_ok", 1, "the latest step's SACK is live: its passes run");
    let f_reply = m.formal_wire("f_reply", 1, "it answers its path's PROBE");
    let f_cum = m.formal_wire("f_cum", PSN, "its path's cum_acked as the answer read it");
    let f_next = m.formal_wire("f_next", PSN, "its path's next_psn as the answer read it");
    let now = |m: &mut Module, nm: &str, w: u32, c: &str, at: Expr, reg: &Signal| {
        let s = m.formal_wire(nm, w, c);
        m.formal_assign(&s, mux(&at_ans, at, reg.expr()));
        s
    };
    let cum_now = now(
        m,
        "f_cum_now",
        PSN,
        "cum_acked of the answer (its cycle included)",
        sg(m, "s_pm_cum_acked").expr(),
        &f_cum,
    );
    let next_now = now(m, "f_next_now", PSN, "next_psn of the answer", sg(m, "s_pm_next_psn").expr(), &f_next);
    let span =
        m.formal_wire_from("f_span", PSN, "next_psn - cum_acked of the answer", next_now.expr() - cum_now.expr());
    let rel = m.formal_wire_from(
        "f_rel",
        PSN,
        "the cumulative psn's offset from cum_acked, 24-bit serial",
        f_cum_psn.expr() - cum_now.expr(),
    );
    // Offsets as 26-bit two's complement: rel in [-2^23, 2^23), span below 2^24.
    const W: u32 = 26;
    let srel =
        m.formal_wire_from("f_srel", W, "rel, sign-extended", cat(&[repl(W - PSN, rel.bit(PSN - 1)), rel.expr()]));
    let past = rel.bit(PSN - 1).logic_not().logic_and(rel.expr().gt(&span));
    // The model's sack_window: the bitmap's highest bit b names offset
    // rel + 1 + b, a psn never sent when at or past span.
    let high = (0..256).fold(lit(8, 0), |acc, i| mux(f_bitmap.bit(i), lit(8, u64::from(i)), acc));
    let high = m.formal_wire_from("f_bitmap_high", 8, "the bitmap's highest bit", high);
    let top = srel.expr() + lit(W, 1) + zext(&high, W);
    let top = m.formal_wire_from("f_top", W, "the offset of the highest psn the bitmap names", top);
    // top >= span, signed (span is not negative).
    let top_past = top.bit(W - 1).logic_not().logic_and(top.slice(W - 2, 0).ge(zext(&span, W - 1)));
    let beyond = f_bitmap.expr().reduce_or().logic_and(top_past);
    let win_stale = m.formal_wire_from(
        "f_window_stale",
        1,
        "the SACK names a psn never sent (sack_window is None)",
        past.logic_or(beyond),
    );
    let path_ok = f_path.expr().lt(zext(sg(m, "s_rd_npaths"), PATH_ID));
    let path_ok = m.formal_wire_from("f_path_ok", 1, "path_id is below the connection's npaths", path_ok);
    let ok_in = m.formal_wire_from(
        "f_ok_in",
        1,
        "the answer's cycle of a live SACK: connection open and not failed, path_id below npaths, not stale",
        at_ans.expr().logic_and(alive_in.clone()).logic_and(&path_ok).logic_and(win_stale.expr().logic_not()),
    );
    let reply_in = ok_in
        .expr()
        .logic_and(sg(m, "s_pm_probe_pending"))
        .logic_and(sg(m, "s_pm_probe_ts").expr().eq(&f_echo))
        .logic_and(sg(m, "s_pm_sport").expr().eq(&f_dport));
    let reply_in = m.formal_wire_from(
        "f_reply_in",
        1,
        "the answer's cycle of a live SACK that answers its path's PROBE",
        reply_in,
    );
    m.formal_seq(vec![if_else(
        rst.expr().logic_or(&go),
        vec![set(&f_alive, lit(1, 0)), set(&f_ok, lit(1, 0)), set(&f_reply, lit(1, 0))],
        vec![if_then(
            &at_ans,
            vec![
                set(&f_alive, at_ans.expr().logic_and(alive_in.clone())),
                set(&f_ok, &ok_in),
                set(&f_reply, &reply_in),
                set(&f_cum, sg(m, "s_pm_cum_acked")),
                set(&f_next, sg(m, "s_pm_next_psn")),
            ],
        )],
    )]);
    let alive_now = now(m, "f_alive_now", 1, "the answer read the connection alive", alive_in.clone(), &f_alive);
    let ok_now = now(m, "f_ok_now", 1, "the SACK is live", ok_in.expr(), &f_ok);
    let reply_now = now(m, "f_reply_now", 1, "the SACK answers the path's PROBE", reply_in.expr(), &f_reply);

    // ------------------------------------------------ the cycles from the answer (k)
    let al = |v: u64| lit(agw, v);
    let ge_l = age.expr().ge(al(u64::from(l)));
    let kg = m.formal_wire_from("f_k", agw, "cycles since the answer (while age >= L)", age.expr() - al(u64::from(l)));
    let sa = m.formal_wire_from(
        "f_span_k",
        agw,
        "span in the count's bits (at most tx_ring_depth when live)",
        span.slice(agw - 1, 0),
    );
    let live_k = |m: &mut Module, nm: &str, c: &str, e: Expr| {
        m.formal_wire_from(nm, 1, c, ok_now.expr().logic_and(ge_l.clone()).logic_and(e))
    };
    let kl = al(u64::from(l));
    let window = m.formal_wire_from(
        "f_window",
        1,
        "the unit may act: the answer's cycle, or a live SACK's through k = L + 2 x span",
        ge_l.clone().logic_and(
            at_ans.expr().logic_or(ok_now.expr().logic_and(kg.expr().le(kl.clone() + sa.expr() + sa.expr()))),
        ),
    );
    let rd1 = live_k(m, "f_read1", "pass 1 reads slot k at k < span", kg.expr().lt(&sa));
    let off2 =
        m.formal_wire_from("f_read2_off", agw, "pass 2's read offset, k - span - 1", kg.expr() - sa.expr() - al(1));
    let rd2 = live_k(
        m,
        "f_read2",
        "pass 2 reads slot k - span - 1 at span < k <= 2 x span",
        kg.expr().gt(&sa).logic_and(off2.expr().lt(&sa)),
    );
    let d1 = m.formal_wire_from("f_d1", agw, "pass 1's answered offset, k - L", kg.expr() - kl.clone());
    let ans1 = live_k(
        m,
        "f_answer1",
        "pass 1's slot d answers at k = L + d",
        kg.expr().ge(kl.clone()).logic_and(d1.expr().lt(&sa)),
    );
    let d2 = m.formal_wire_from(
        "f_d2",
        agw,
        "pass 2's answered offset, k - L - span - 1",
        kg.expr() - kl.clone() - sa.expr() - al(1),
    );
    let ans2 = live_k(
        m,
        "f_answer2",
        "pass 2's slot d answers at k = L + span + 1 + d",
        kg.expr().gt(kl.clone() + sa.expr()).logic_and(d2.expr().lt(&sa)),
    );
    let end1 = live_k(
        m,
        "f_pass1_end",
        "the first pass's end, k = L + span - 1",
        kg.expr().eq(kl.clone() + sa.expr() - al(1)),
    );
    let reply_at = live_k(
        m,
        "f_reply_at",
        "a reply's PROBE_REPLY, k = L + span",
        reply_now.expr().logic_and(kg.expr().eq(kl.clone() + sa.expr())),
    );
    let cont_at =
        live_k(m, "f_cont_at", "the continuation, k = L + 2 x span", kg.expr().eq(kl.clone() + sa.expr() + sa.expr()));

    // The model's sack_acks: offset d is acknowledged before rel, or by
    // bitmap bit d - rel - 1.
    let acks_at = |m: &mut Module, nm: &str, d: Expr| {
        let i = m.formal_wire_from(
            &format!("{nm}_i"),
            W,
            "the offset's bitmap index, d - rel - 1",
            d.clone() - srel.expr() - lit(W, 1),
        );
        // d is not negative: before rel only when rel is positive.
        let before = srel.bit(W - 1).logic_not().logic_and(d.lt(&srel));
        let in_map = i.bit(W - 1).logic_not().logic_and(i.slice(W - 2, 8).eq(lit(W - 9, 0)));
        let e = before.logic_or(in_map.logic_and(f_bitmap.expr().bit_at(i.slice(7, 0))));
        m.formal_wire_from(nm, 1, "the SACK acknowledges the offset", e)
    };
    let acks1 = acks_at(m, "f_acks1", zext(&d1, W));
    let acks2 = acks_at(m, "f_acks2", zext(&d2, W));
    let path_low =
        |m: &Module, port: &str| zext(sg(m, port), PATH_ID).eq(f_path.expr() & lit(PATH_ID, u64::from(np - 1)));
    let psn_at = |d: Expr| cum_now.expr() + zext(d, PSN);

    // ------------------------------------------------ the step
    m.assert(
        "a_busy_count",
        "m_busy is 1 in a step's cycle (from the record alone; tx_ack's hold raises the count at the answer), 0 \
         otherwise",
        sg(m, "m_busy").expr().eq(mux(&go, lit(bb, 1), lit(bb, 0))),
    );
    m.assert(
        "a_step_reads",
        "the reads and the unstall are issued exactly with the step: the SACK's connection and path_id mod PATHS",
        sg(m, "m_rd_valid").expr().eq(&go).logic_and(sg(m, "m_unstall_valid").expr().eq(&go)).logic_and(implies(
            &go,
            sg(m, "m_rd_conn")
                .expr()
                .eq(sg(m, "s_sack_conn"))
                .logic_and(sg(m, "m_unstall_conn").expr().eq(sg(m, "s_sack_conn")))
                .logic_and(
                    zext(sg(m, "m_rd_path"), PATH_ID)
                        .eq(sg(m, "s_sack_path_id").expr() & lit(PATH_ID, u64::from(np - 1))),
                ),
        )),
    );

    // ------------------------------------------------ when the handler acts
    let acts = [
        "m_stat_sack_stale",
        "m_hold_valid",
        "m_mark_clr_valid",
        "m_unstall_all",
        "m_ring_rd_valid",
        "m_ring_clr_valid",
        "m_wq_inc_valid",
        "m_ring_lost_valid",
        "m_retx_valid",
        "m_pm_valid",
        "m_ctx_valid",
        "m_lp_valid",
        "m_evt_valid",
        "m_cont_valid",
    ];
    let any = crate::formal::any_port(m, &acts);
    m.assert(
        "a_act_in_window",
        &format!(
            "nothing acts (stale count, hold, mark, ring read or write, push, mirror, context, last_progress, event, \
             continuation) but from the answer, L = {l} cycles after a step: in the answer's cycle, or a live SACK's \
             through k = L + 2 x span"
        ),
        implies(any.clone(), &window),
    );
    m.assert(
        "a_dead_conn_quiet",
        "nothing acts for a connection the answer reads closed or failed (not even the stale count)",
        implies(any, &alive_now),
    );
    let stale = sg(m, "m_stat_sack_stale");
    m.assert(
        "a_stale_when",
        "a SACK is counted stale exactly at the answer of a connection open and not failed, for a path_id not below \
         npaths or a SACK naming a psn never sent (its cumulative psn past next_psn, or a bitmap bit at or past it)",
        stale
            .expr()
            .eq(at_ans.expr().logic_and(alive_in.clone()).logic_and(path_ok.expr().logic_not().logic_or(&win_stale))),
    );
    m.assert(
        "a_stale_alone",
        "a stale SACK does nothing else: no hold, no mark, no ring read or write, no event, no write, no continuation",
        implies(&stale, crate::formal::any_port(m, &acts[1..]).logic_not()),
    );
    m.assert(
        "a_hold_when",
        "tx_ack's count is raised exactly at the answer of a live SACK, to its two passes' 2 + 2 x span",
        sg(m, "m_hold_valid").expr().eq(&ok_in).logic_and(implies(
            sg(m, "m_hold_valid"),
            sg(m, "m_hold_cnt").expr().eq(lit(bb, 2) + fit(sa.expr(), bb) + fit(sa.expr(), bb)),
        )),
    );

    // ------------------------------------------------ the passes
    let rd = sg(m, "m_ring_rd_valid");
    m.assert(
        "a_ring_reads",
        "a live SACK reads its path's slots one a cycle: pass 1 offset k at k < span, pass 2 offset k - span - 1 at \
         span < k <= 2 x span, psn cum_acked + offset, on the SACK's connection and path_id mod PATHS",
        rd.expr().eq(rd1.expr().logic_or(&rd2)).logic_and(implies(
            &rd,
            sg(m, "m_ring_rd_conn")
                .expr()
                .eq(&f_conn)
                .logic_and(path_low(m, "m_ring_rd_path"))
                .logic_and(sg(m, "m_ring_rd_psn").expr().eq(psn_at(mux(&rd1, &kg, &off2)))),
        )),
    );
    let clr = sg(m, "m_ring_clr_valid");
    m.assert(
        "a_clear_when",
        "pass 1 empties a slot exactly when its answer (k = L + d) holds a packet the SACK acknowledges, naming psn \
         cum_acked + d, and increments that packet's request's acked count with it",
        clr.expr()
            .eq(ans1.expr().logic_and(&acks1).logic_and(sg(m, "s_ring_valid")))
            .logic_and(implies(&clr, sg(m, "m_ring_clr_psn").expr().eq(psn_at(d1.expr()))))
            .logic_and(sg(m, "m_wq_inc_valid").expr().eq(&clr))
            .logic_and(implies(
                &clr,
                sg(m, "m_wq_inc_stream")
                    .expr()
                    .eq(sg(m, "s_ring_stream"))
                    .logic_and(sg(m, "m_wq_inc_wq").expr().eq(sg(m, "s_ring_wq"))),
            )),
    );
    let lost = sg(m, "m_ring_lost_valid");
    m.assert(
        "a_lost_only",
        "a loss is marked only at a pass 2 answer (k = L + span + 1 + d) of a slot the SACK does not acknowledge, \
         holding a packet neither queued nor waiting for an RNR back-off, naming psn cum_acked + d",
        implies(
            &lost,
            ans2.expr()
                .logic_and(acks2.expr().logic_not())
                .logic_and(sg(m, "s_ring_valid"))
                .logic_and(sg(m, "s_ring_queued").expr().logic_not())
                .logic_and(sg(m, "s_ring_rnr_wait").expr().logic_not())
                .logic_and(sg(m, "m_ring_lost_psn").expr().eq(psn_at(d2.expr()))),
        ),
    );
    let retx = sg(m, "m_retx_valid");
    m.assert(
        "a_lost_with_push",
        "each loss is pushed into the retransmit queue in its cycle, and nothing else is: the SACK's connection, \
         path_id mod PATHS and the lost psn",
        retx.expr().eq(&lost).logic_and(implies(
            &retx,
            sg(m, "m_retx_conn")
                .expr()
                .eq(&f_conn)
                .logic_and(path_low(m, "m_retx_path"))
                .logic_and(sg(m, "m_retx_psn").expr().eq(sg(m, "m_ring_lost_psn"))),
        )),
    );
    // One offset watched (any, fixed for the run): whether pass 1 emptied
    // it for the latest step's SACK.
    let watch = m.formal_anyconst("f_watch", PSN, "an offset from cum_acked, any");
    let cleared = m.formal_wire("f_watch_cleared", 1, "pass 1 emptied the watched offset for the latest step");
    let at_watch = |m: &Module, port: &str| sg(m, port).expr().eq(cum_now.expr() + watch.expr());
    let clr_watch = clr.expr().logic_and(at_watch(m, "m_ring_clr_psn"));
    m.formal_seq(vec![if_else(
        rst.expr().logic_or(&go),
        vec![set(&cleared, lit(1, 0))],
        vec![if_then(clr_watch, vec![set(&cleared, lit(1, 1))])],
    )]);
    m.assert(
        "a_not_cleared_and_lost",
        "no slot is both emptied by pass 1 and marked lost by pass 2 of one SACK (any slot, watched)",
        implies(lost.expr().logic_and(at_watch(m, "m_ring_lost_psn")), cleared.expr().logic_not()),
    );

    // ------------------------------------------------ events and writes at their cycles
    let ev = sg(m, "m_evt_valid");
    let ek = sg(m, "m_evt_kind");
    let kind = |k: u8| ek.expr().eq(lit(tel::KIND_BITS, u64::from(k)));
    let (steer_k, reply_k, silent_k) =
        (kind(tel::kind::ACK_STEER), kind(tel::kind::PROBE_REPLY), kind(tel::kind::SILENT));
    m.assert(
        "a_steer_when",
        "ACK_STEER exactly once per live SACK, at the first pass's end (k = L + span - 1)",
        ev.expr().logic_and(steer_k.clone()).eq(&end1),
    );
    m.assert(
        "a_reply_when",
        "PROBE_REPLY exactly for a live SACK answering its path's PROBE (pending, its tx_ts echoed, at its sport), \
         one cycle after the first pass's end (k = L + span)",
        ev.expr().logic_and(reply_k.clone()).eq(&reply_at),
    );
    // The model's silent_events.
    let cap = p.cfg.timers.suspect_after_rtos;
    let sent_ev = ev.expr().logic_and(silent_k.clone());
    let (phys_sent, cw) = super::silent_ghost(
        m,
        rst.expr().logic_or(&go),
        &at_ans,
        age.expr().gt(lit(agw, u64::from(l))),
        f_ok.expr(),
        sent_ev.clone(),
        sg(m, "m_evt_path").expr(),
        sg(m, "s_ring_phys").expr(),
        &f.silent_counts,
        np,
        cap,
    );
    m.assert(
        "a_silent_when",
        &format!(
            "SILENT exactly with an uncharged loss whose copy's path has had fewer than suspect_after_rtos = {cap} \
             this step, naming that path"
        ),
        sent_ev
            .clone()
            .eq(lost
                .expr()
                .logic_and(sg(m, "m_ring_lost_charge").expr().logic_not())
                .logic_and(phys_sent.lt(lit(cw, u64::from(cap)))))
            .logic_and(implies(sent_ev.clone(), sg(m, "m_evt_path").expr().eq(sg(m, "s_ring_phys")))),
    );
    m.assert(
        "a_evt_record",
        "every event is ACK_STEER, PROBE_REPLY or SILENT, of the SACK's connection at the step's ts_now; ACK_STEER \
         and PROBE_REPLY name path_id mod PATHS",
        implies(
            &ev,
            sg(m, "m_evt_conn")
                .expr()
                .eq(&f_conn)
                .logic_and(sg(m, "m_evt_now").expr().eq(&f_ts))
                .logic_and(steer_k.clone().logic_or(reply_k.clone()).logic_or(silent_k))
                .logic_and(implies(steer_k.logic_or(reply_k), path_low(m, "m_evt_path"))),
        ),
    );
    let (pm, ctx, lpv) = (sg(m, "m_pm_valid"), sg(m, "m_ctx_valid"), sg(m, "m_lp_valid"));
    m.assert(
        "a_writes_at_pass1_end",
        "the mirror, context and last_progress writes exactly at the first pass's end, for the SACK's connection \
         and path_id mod PATHS, last_progress at the step's ts_now; the mirror's probe_pending cleared exactly by \
         a PROBE reply",
        pm.expr().eq(&end1).logic_and(ctx.expr().eq(&end1)).logic_and(lpv.expr().eq(&end1)).logic_and(implies(
            &end1,
            sg(m, "m_pm_conn")
                .expr()
                .eq(&f_conn)
                .logic_and(path_low(m, "m_pm_path"))
                .logic_and(sg(m, "m_ctx_conn").expr().eq(&f_conn))
                .logic_and(sg(m, "m_lp_conn").expr().eq(&f_conn))
                .logic_and(sg(m, "m_lp_ts").expr().eq(&f_ts))
                .logic_and(sg(m, "m_pm_probe_clr").expr().eq(&reply_now)),
        )),
    );
    let cont = sg(m, "m_cont_valid");
    m.assert(
        "a_cont_once",
        "the continuation exactly once per live SACK, at k = L + 2 x span, with the SACK's connection, stream_id \
         and completed_msn",
        cont.expr().eq(&cont_at).logic_and(implies(
            &cont,
            sg(m, "m_cont_conn")
                .expr()
                .eq(&f_conn)
                .logic_and(sg(m, "m_cont_stream_id").expr().eq(&f_sid))
                .logic_and(sg(m, "m_cont_completed_msn").expr().eq(&f_msn)),
        )),
    );
    let plane = sg(m, "s_pm_plane");
    let plane_ok = if planes >= 1 << pt::PLANE.width {
        lit(1, 1)
    } else {
        plane.expr().lt(lit(pt::PLANE.width, u64::from(planes)))
    };
    let ipb = index_bits(planes);
    let pidx = if ipb >= pt::PLANE.width { plane.expr() } else { plane.slice(ipb - 1, 0) };
    let marked = sg(m, "mark_valid").expr().bit_at(pidx);
    let take = sg(m, "m_mark_clr_valid");
    m.assert(
        "a_mark_take",
        "a plane's mark is taken exactly by a live SACK answering its path's PROBE, in the answer's cycle, for the \
         path's plane (one of the configured planes); every connection is unstalled exactly when that plane was \
         marked",
        take.expr()
            .eq(reply_in.expr().logic_and(plane_ok))
            .logic_and(implies(&take, sg(m, "m_mark_clr_plane").expr().eq(&plane)))
            .logic_and(sg(m, "m_unstall_all").expr().eq(take.expr().logic_and(marked))),
    );
    let wait = step.wait.clone();
    m.assert(
        "a_before_free",
        "every write, event and continuation comes before tx_ack's count frees the unit for its next step, and \
         every ring read is answered before then: after the answer with more than L cycles of the count left, in \
         the answer's cycle with a hold of at least L",
        implies(crate::formal::any_port(m, &acts), wait.expr().ne(lit(bb, 0)))
            .logic_and(implies(rd.expr().logic_and(at_ans.expr().logic_not()), wait.expr().gt(lit(bb, u64::from(l)))))
            .logic_and(implies(
                rd.expr().logic_and(&at_ans),
                sg(m, "m_hold_valid").expr().logic_and(sg(m, "m_hold_cnt").expr().ge(lit(bb, u64::from(l)))),
            )),
    );

    // ------------------------------------------------ payloads
    for (valid, payload) in [
        ("m_unstall_valid", &["m_unstall_conn"][..]),
        ("m_rd_valid", &["m_rd_conn", "m_rd_path"]),
        ("m_hold_valid", &["m_hold_cnt"]),
        ("m_mark_clr_valid", &["m_mark_clr_plane"]),
        ("m_ring_rd_valid", &["m_ring_rd_conn", "m_ring_rd_path", "m_ring_rd_psn"]),
        ("m_ring_clr_valid", &["m_ring_clr_psn"]),
        ("m_wq_inc_valid", &["m_wq_inc_stream", "m_wq_inc_wq"]),
        ("m_ring_lost_valid", &["m_ring_lost_psn", "m_ring_lost_charge"]),
        ("m_retx_valid", &["m_retx_conn", "m_retx_path", "m_retx_psn"]),
        (
            "m_pm_valid",
            &[
                "m_pm_conn",
                "m_pm_path",
                "m_pm_cum_acked",
                "m_pm_acked_seq",
                "m_pm_rtt_valid",
                "m_pm_timed_out_clr",
                "m_pm_probe_clr",
            ],
        ),
        ("m_pm_rtt_valid", &["m_pm_srtt", "m_pm_rttvar", "m_pm_min_rtt"]),
        (
            "m_ctx_valid",
            &[
                "m_ctx_conn",
                "m_ctx_rack_valid",
                "m_ctx_rack_rtt",
                "m_ctx_cwnd",
                "m_ctx_acked_bytes",
                "m_ctx_ecn_ewma",
                "m_ctx_hold_until",
                "m_ctx_srtt",
                "m_ctx_min_rtt",
                "m_ctx_rate_hint",
                "m_ctx_cap",
                "m_ctx_inflight",
            ],
        ),
        ("m_ctx_rack_valid", &["m_ctx_rack_sent"]),
        ("m_lp_valid", &["m_lp_conn", "m_lp_mask", "m_lp_ts"]),
        (
            "m_evt_valid",
            &[
                "m_evt_kind",
                "m_evt_conn",
                "m_evt_path",
                "m_evt_now",
                "m_evt_cum_acked",
                "m_evt_acked_pkts",
                "m_evt_acked_bytes",
                "m_evt_ecn_cnt",
                "m_evt_rtt_valid",
                "m_evt_acked_seq",
            ],
        ),
        ("m_evt_rtt_valid", &["m_evt_rtt"]),
        ("m_cont_valid", &["m_cont_conn", "m_cont_wait", "m_cont_touched", "m_cont_stream_id", "m_cont_completed_msn"]),
    ] {
        crate::formal::quiet_without(m, valid, payload);
    }

    // ------------------------------------------------ invariants: the registers hold what the ghosts say
    let ghosts = [&f_conn, &f_path, &f_cum_psn, &f_bitmap, &f_ecn, &f_echo, &f_hint, &f_sid, &f_msn, &f_dport, &f_ts];
    step.read_invariants(m, &f.pipe, (&f.rec, &ghosts));
    let left = |end: Expr| mux(age.expr().lt(end.clone()), fit(end - age.expr(), bb), lit(bb, 0));
    m.assert(
        "a_inv_wait",
        "tx_ack's count left frees the unit L + 3 + 2 x span cycles after a live SACK's step (the hold), L + 2 \
         after any other (1 + L loaded, the step's own cycle), and is 0 after a reset",
        wait.expr().eq(mux(&f_ok, left(al(u64::from(l) + 3) + sa.expr() + sa.expr()), left(al(u64::from(l) + 2)))),
    );
    m.assert(
        "a_inv_answer",
        "a live SACK's ghosts are its answer's: taken after it, of a connection alive, a span within the ring; none \
         before the answer",
        implies(&f_ok, age.expr().gt(kl.clone()).logic_and(&f_alive).logic_and(span.expr().le(lit(PSN, u64::from(r)))))
            .logic_and(implies(&f_reply, &f_ok))
            .logic_and(implies(
                age.expr().le(kl.clone()),
                f_ok.expr().logic_not().logic_and(f_alive.expr().logic_not()),
            )),
    );
    let kw = f.k.width().max(agw);
    let running_want = f_ok.expr().logic_and(kg.expr().le(kl.clone() + sa.expr() + sa.expr()));
    m.assert(
        "a_inv_pass",
        "the passes run exactly from the cycle after a live SACK's answer through k = L + 2 x span, their count \
         is k, and the held answer is the ghosts'",
        f.running
            .expr()
            .eq(running_want)
            .logic_and(implies(window.expr().logic_and(ok_now.expr()), fit(f.k.expr(), kw).eq(fit(kg.expr(), kw))))
            .logic_and(implies(
                &f_ok,
                f.next_psn.expr().eq(&f_next).logic_and(f.cum.expr().eq(&f_cum)).logic_and(f.reply.expr().eq(&f_reply)),
            )),
    );
    let acks_w = acks_at(m, "f_acks_watch", zext(&watch, W));
    m.assert(
        "a_inv_cleared",
        "pass 1 empties the watched offset only if the SACK acknowledges it, and not before the answer",
        implies(&cleared, acks_w.expr().logic_and(age.expr().gt(kl.clone()))),
    );

    // ------------------------------------------------ covers
    m.cover("c_acked", "a live SACK empties a slot it acknowledges", clr.expr());
    m.cover(
        "c_stale_path",
        "a SACK of a path_id past npaths is stale",
        stale.expr().logic_and(path_ok.expr().logic_not()).logic_and(sg(m, "s_rd_npaths").expr().ne(lit(pb + 1, 0))),
    );
    m.cover("c_stale_window", "a SACK naming a psn never sent is stale", stale.expr().logic_and(&path_ok));
    m.cover(
        "c_dead_conn",
        "a SACK answered on a failed connection does nothing",
        at_ans.expr().logic_and(sg(m, "s_rd_open")).logic_and(sg(m, "s_rd_failed")),
    );
    m.cover("c_lost_charged", "a loss, charged", lost.expr().logic_and(sg(m, "m_ring_lost_charge")));
    m.cover("c_lost_silent", "a loss, uncharged: a SILENT event", ev.expr().logic_and(kind(tel::kind::SILENT)));
    m.cover("c_probe_reply", "a PROBE reply's event", ev.expr().logic_and(kind(tel::kind::PROBE_REPLY)));
    m.cover(
        "c_mark_taken",
        "a PROBE reply takes a marked plane's mark and unstalls every connection",
        sg(m, "m_unstall_all").expr(),
    );
    m.cover(
        "c_span_zero",
        "the continuation of a SACK with nothing outstanding",
        cont.expr().logic_and(sa.expr().eq(al(0))),
    );
    m.cover(
        "c_cleared_then_lost",
        "a loss after pass 1 emptied a slot of the same SACK",
        lost.expr().logic_and(&cleared),
    );
    m.cover(
        "c_back_to_back",
        "a second step as soon as tx_ack's count frees the unit after a live SACK with a slot outstanding",
        go.expr()
            .logic_and(&f_ok)
            .logic_and(sa.expr().ne(al(0)))
            .logic_and(age.expr().eq(al(u64::from(l) + 3) + sa.expr() + sa.expr())),
    );
}
