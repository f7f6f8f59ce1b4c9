//! The connection setup of `tx_engine` as a clocked unit (`tx_open`): the
//! `s_open` input register and what the model's `open_take` and `open`
//! do with a record ([`mrnic_model::tx_engine`], architecture.md,
//! tx_engine item 17).
//!
//! # Timing
//! - **The record** (`s_open_*`, the engine's port): into a one-entry
//!   input register, `s_open_ready` while it is empty (and `en`).
//! - **The take** (`t`): the register holds a record, no setup is in
//!   flight, and the rest of the engine lets one be taken (`s_free`: the
//!   event FIFO has room and took nothing this cycle, the acknowledgement
//!   unit is idle after its turn, the scheduler after its step, no PROBE
//!   send runs, and no frame of `m_live_conn` is in the output queue). Path 0 of a connection that is live (`s_live`: the ready
//!   set's open and failed bits of `m_live_conn`, registers) is not taken:
//!   the connection fails with WR_FLUSH (`m_fail_*`, to the completion
//!   walk) and the record waits for the flush to end. Otherwise the record
//!   leaves the register and its reads go out (`m_rd_*`): every stream's
//!   `tail` (the stream words) and the context's DEAD bits.
//! - **The act** (`t + L`, `s_rd_*` as the tables stood at `t`): path 0
//!   starts the connection afresh (`m_ctx_*`: open, not failed, nothing
//!   queued or armed, the peer's id, its paths, the opening congestion
//!   state of [`open_cc`]; `m_addr_*`: the peer's MAC and IPv4 address;
//!   `m_sw_*`: every stream's head, pend and tail at its tail, its counters
//!   0, which is also `tx_post`'s reopen forward). Every path clears its
//!   DEAD bit (`m_ctx_dead_*`), starts its mirror (`m_pm_*`: port, plane,
//!   next and cumulative psn, the opening RTT of [`open_rtt`], every other
//!   field 0), pushes the OPEN event (`m_evt_*`) and raises `tx_ack`'s
//!   count for the ring clear (`m_hold_open`).
//! - **The ring clear**, from the act on: one of the path's
//!   `tx_ring_depth` slots a cycle (`m_ring_clr_*`), slot 0 at the act.
//! - **`m_busy`** from the take through the last slot cleared: the
//!   assembly holds the output stage's failure with it; **`m_running`**,
//!   the same from the cycle after the take (registers), holds
//!   `tx_sched`'s `start_ok` and `tx_ack`'s `s_sched_idle`, so nothing
//!   writes what the take read before the act, and nothing reads the ring
//!   before it is clear; **`m_wr_hold`**, from a record's handshake to its
//!   act (registers), is `tx_post`'s `s_open_busy`: a request taken after
//!   a record's handshake reads the connection as the setup left it.
//!
//! Nothing else pushes an event from the take to the act (every pusher is
//! held), so the OPEN event finds the room the take saw. Every payload is
//! 0 without its valid.
//!
//! # Formal properties
//! Stated next to the logic (`properties`) and run by `scripts/formal`
//! as the unit `tx_open` ([`crate::proof::blocks`], [`formal_tasks`]),
//! all by 2-induction (boolector), with the step ghosts the handlers and
//! `tx_probe` use (`tx_engine::step`, through `ghosts_taken`: the cycles
//! since the latest take, the cycles its `m_running` still runs, and the
//! taken record), and ghosts of the register (the count of records
//! accepted and not taken, the latest record accepted). The rules:
//! - the assembly's side, assumed: no record offered in a reset; `s_open`
//!   keeps the valid/ready rule (valid held until the handshake, the record
//!   stable meanwhile). Nothing else: `en`, `s_free`, `s_live` and the read
//!   answers are arbitrary;
//! - `s_open_ready` is `en` and the register empty (`a_s_open_ready`); the
//!   register holds exactly the records accepted and not taken, the
//!   latest accepted (`a_inv_held`, `a_inv_rec`);
//! - a flush exactly when a record is held or arriving, no setup is in
//!   flight, `s_free`, the record is path 0's and `s_live`, for its
//!   connection with WR_FLUSH (`a_flush_exact`); a take (`m_rd_*`) exactly
//!   under the same conditions but the flush's (`a_take_exact`), never with
//!   a flush (`a_take_not_flush`), for the record's connection
//!   (`a_rd_conn`); a take only once the setup before it has ended, so at
//!   most one in flight and none while `m_running` (`a_take_when_free`:
//!   the take is the unit's own, so this is asserted, where `tx_probe`'s
//!   start rule is assumed); `m_live_conn` the record's connection
//!   (`a_live_conn`); `m_wr_hold` exactly while a record is held or the
//!   reads are in flight (`a_wr_hold`);
//! - each act output exactly `L` cycles after a take and never otherwise,
//!   the context's, addresses' and streams' writes only for path 0
//!   (`a_<output>_at_act`); they name the taken record's connection
//!   (`a_act_conn`, `a_fresh_conn`), path, port, plane and psn (`a_pm`,
//!   `a_evt`: the event OPEN with `cum_acked` the psn), peer id, MAC and
//!   IPv4 address (`a_ctx`, `a_addr_sw`); `m_ctx_npaths` within
//!   1..=PATHS and the record's when in range, the constants those of
//!   [`open_cc`] and [`open_rtt`] computed at generation (`a_ctx`,
//!   `a_pm`); the streams at the answered tails (`a_addr_sw`); the DEAD
//!   bits, stated bit by bit, 0 for path 0, else the answered ones with the
//!   path's cleared (`a_ctx_dead`);
//! - the ring clear exactly in the `tx_ring_depth` cycles from the act,
//!   slots 0, 1, .. in order, the taken record's connection and path
//!   (`a_ring_clr`); `m_running` exactly from the cycle after a take
//!   through the last slot (`a_running`), `m_busy` a take or `m_running`
//!   (`a_busy`);
//! - every payload 0 without its valid (`a_quiet_without_<valid>`);
//!   invariants tying the read pipe, the act registers, the count and the
//!   clear's registers to the ghosts (`a_inv_*`);
//! - covers: a take's act, a flush, path 0's act and one past path 0, and
//!   a record accepted while a setup ran taken as soon as its clear ended
//!   (`L + tx_ring_depth` cycles after the take before it).
//!
//! Not proven here: that the answers are the tables as they stood at the
//! take (the assembly's holds on `m_running` keep every writer away), that
//! the assembly's `s_free` and `s_live` are what they say, and that the
//! values are the model's beyond these rules (the replay in
//! `hdl/tests/tx_engine_open.rs` compares every output every cycle). The
//! OPEN event's kind is 0, the value of a payload without its valid, so
//! its gating is no logic and an ungated kind is the same circuit; the
//! kind is still pinned in every cycle (`a_evt` at the act,
//! `a_quiet_without_evt_valid` off it; a mutant fails each).

use mrnic_model::block::PortDef;
use mrnic_model::path_telemetry as tel;
use mrnic_model::tx_engine::{open_cc, open_rtt, status, TxEngineParams, CONN_ID_BITS};
use mrnic_proto::tables::path as pt;

use super::{gate, stream_ptr_bits, PSN};
use crate::expr::{cat, fit, index_bits, lit, mux, zeros, zext, Expr, Signal};
use crate::ir::{if_then, set, Module};

/// Module name.
pub const NAME: &str = "tx_open";

const RST: &str = "Clock and reset";
const REC: &str = "The setup record (the engine's s_open) and its take";
const RD: &str = "The take's reads, answered L cycles later";
const ACT: &str = "The act, L cycles after the take";
const CLR: &str = "The ring clear and the holds";

/// The record's fields, as the engine's `s_open_*` ports name them.
const FIELDS: [&str; 9] = ["conn", "path", "npaths", "remote_id", "dst_mac", "dst_ip", "sport", "plane", "psn"];

/// The unit's ports, in declaration order.
pub fn ports(p: &TxEngineParams) -> Vec<PortDef> {
    let cb = p.conn_bits;
    let pb = index_bits(p.paths);
    let qb = stream_ptr_bits(p.wq_depth);
    let rb = index_bits(p.ring_depth);
    let i = |nm: &str, w: u32, g: &'static str, c: &str| PortDef::input(nm, w, g, c);
    let o = |nm: &str, w: u32, g: &'static str, c: &str| PortDef::output(nm, w, g, c);
    let rec: Vec<String> = FIELDS.iter().map(|f| format!("s_open_{f}")).collect();
    let mut names: Vec<&str> = vec!["s_open_valid", "s_open_ready"];
    names.extend(rec.iter().map(String::as_str));
    let mut v = vec![
        i("rst", 1, RST, "synchronous reset, active high"),
        i("en", 1, RST, "the engine runs (its clear sweep is over)"),
    ];
    v.extend(super::engine_ports(p, &names));
    v.extend([
        i("s_free", 1, REC, "the rest of the engine lets the held record be taken this cycle"),
        o("m_live_conn", cb, REC, "the held record's connection, for s_live"),
        i("s_live", 1, REC, "m_live_conn is open and has not failed (the ready set's registers)"),
        o("m_fail_valid", 1, REC, "path 0 of a live connection: it fails first (the walk's failure input)"),
        o("m_fail_conn", cb, REC, "the connection"),
        o("m_fail_status", 8, REC, "WR_FLUSH"),
        o("m_rd_valid", 1, RD, "the record is taken: its reads go out"),
        o("m_rd_conn", cb, RD, "its connection"),
        i("s_rd_tails", p.streams * qb, RD, "every stream's tail, stream 0 lowest, L cycles after m_rd_valid"),
        i("s_rd_dead", p.paths, RD, "the context's DEAD bits"),
        o("m_ctx_valid", 1, ACT, "path 0: the context starts afresh, every field 0 but open and these"),
        o("m_ctx_conn", cb, ACT, "the connection"),
        o("m_ctx_remote_id", CONN_ID_BITS, ACT, "the peer's connection id"),
        o("m_ctx_npaths", pb + 1, ACT, "its paths (the record's, within 1..=PATHS)"),
        o("m_ctx_cwnd", 32, ACT, "the opening window"),
        o("m_ctx_srtt", 32, ACT, "the opening srtt"),
        o("m_ctx_min_rtt", pt::MIN_RTT.width, ACT, "no RTT sample yet"),
        o("m_ctx_rate_hint", 16, ACT, "the full rate hint"),
        o("m_ctx_cap", 32, ACT, "the opening cap"),
        o("m_addr_valid", 1, ACT, "path 0: the connection's addresses are written"),
        o("m_addr_conn", cb, ACT, "the connection"),
        o("m_addr_dst_mac", 48, ACT, "the peer's MAC"),
        o("m_addr_dst_ip", 32, ACT, "the peer's IPv4 address"),
        o("m_sw_valid", 1, ACT, "path 0: every stream restarts at its tail (also tx_post's reopen forward)"),
        o("m_sw_conn", cb, ACT, "the connection"),
        o("m_sw_tails", p.streams * qb, ACT, "every stream's head, pend and tail, stream 0 lowest; its counters 0"),
        o("m_ctx_dead_valid", 1, ACT, "the context's DEAD bits are written"),
        o("m_ctx_dead_conn", cb, ACT, "the connection"),
        o("m_ctx_dead", p.paths, ACT, "the bits: the path's cleared (path 0: all)"),
        o("m_pm_valid", 1, ACT, "the path's mirror starts: every field 0 but these"),
        o("m_pm_conn", cb, ACT, "the connection"),
        o("m_pm_path", pb, ACT, "the path"),
        o("m_pm_sport", 16, ACT, "its UDP source port"),
        o("m_pm_plane", 3, ACT, "its plane"),
        o("m_pm_psn", PSN, ACT, "its next psn and cumulative psn"),
        o("m_pm_srtt", 32, ACT, "the opening srtt"),
        o("m_pm_rttvar", 32, ACT, "the opening rttvar"),
        o("m_pm_min_rtt", 32, ACT, "no RTT sample yet"),
        o("m_evt_valid", 1, ACT, "the OPEN event"),
        o("m_evt_kind", tel::KIND_BITS, ACT, "OPEN"),
        o("m_evt_conn", cb, ACT, "its connection"),
        o("m_evt_path", pb, ACT, "its path"),
        o("m_evt_cum_acked", PSN, ACT, "the path's first psn"),
        o("m_evt_sport", 16, ACT, "its UDP source port"),
        o("m_evt_plane", 3, ACT, "its plane"),
        o("m_hold_open", 1, ACT, "tx_ack's s_hold_open: its count covers the ring clear"),
        o("m_ring_clr_valid", 1, CLR, "a ring slot of the set-up path is emptied"),
        o("m_ring_clr_conn", cb, CLR, "the connection"),
        o("m_ring_clr_path", pb, CLR, "the path"),
        o("m_ring_clr_slot", rb, CLR, "the slot"),
        o("m_busy", 1, CLR, "a setup runs, from its take through its last slot cleared"),
        o(
            "m_running",
            1,
            CLR,
            "m_busy from the cycle after the take (registers): tx_sched's start_ok, tx_ack's s_sched_idle",
        ),
        o("m_wr_hold", 1, CLR, "a record is held or runs until it acts (registers): tx_post's s_open_busy"),
    ]);
    v
}

/// The `tx_open` module for `p`.
pub fn build(p: &TxEngineParams) -> Module {
    let (cb, l) = (p.conn_bits, p.read_latency);
    let pb = index_bits(p.paths);
    let qb = stream_ptr_bits(p.wq_depth);
    let rb = index_bits(p.ring_depth);
    assert!(l >= 1, "the reads answer at least a cycle after the take");
    assert!(p.ring_depth >= 2 && p.ring_depth.is_power_of_two(), "the ring's slots are counted in rb bits");
    let k = tel::Consts::from_config(&p.cfg);
    let cc = open_cc(p, &k);
    let (srtt, rttvar, min_rtt) = open_rtt(&k);

    let mut m = Module::new(NAME);
    m.describe(
        "tx_engine connection setup: the s_open register, the flush of a live connection, the act, the ring clear",
    );
    let defs = ports(p);
    let widths: Vec<u32> = FIELDS
        .iter()
        .map(|f| defs.iter().find(|d| d.name == format!("s_open_{f}")).expect("an engine port").width)
        .collect();
    let width = |f: &str| widths[FIELDS.iter().position(|x| *x == f).expect("a record field")];
    let (clk, sig) = crate::ports::declare(&mut m, &defs);
    let sg = |nm: &str| sig[nm].clone();
    m.clock_domain(&clk, &sg("rst"));

    // ------------------------------------------------------------ the input register
    let held = m.reg("rec_valid", 1, 0, "the input register holds a record");
    let ready = m.wire_from(
        "rec_ready",
        1,
        "the register takes a record (registers only)",
        sg("en").expr().logic_and(held.q.expr().logic_not()),
    );
    m.assign(sg("s_open_ready"), &ready);
    let accept =
        m.wire_from("rec_accept", 1, "a record is taken on s_open", sg("s_open_valid").expr().logic_and(&ready));
    // The record the unit looks at: the register's, or the one arriving
    // (taken or flushed in its handshake's cycle, as the model's input
    // register is read in the cycle it is written).
    let has = m.wire_from("rec_has", 1, "a record is held or arriving", held.q.expr().logic_or(&accept));
    let (rec_q, rec): (Vec<Signal>, Vec<Signal>) = FIELDS
        .iter()
        .zip(&widths)
        .map(|(f, &w)| {
            let inp = sg(&format!("s_open_{f}"));
            let r = m.reg_no_reset(&format!("rec_{f}_q"), w, "the held record's field");
            m.next(set(&r.next, mux(&accept, inp.expr(), r.q.expr())));
            let v = m.wire_from(
                &format!("rec_{f}"),
                w,
                "the record's field (the arriving one's with none held)",
                mux(&held.q, r.q.expr(), inp.expr()),
            );
            (r.q, v)
        })
        .unzip();
    let rf = |f: &str| rec[FIELDS.iter().position(|x| *x == f).expect("a record field")].clone();
    m.assign(sg("m_live_conn"), gate(&has, rf("conn").expr(), cb));

    // ------------------------------------------------------------ the take
    let clearing = m.reg("clr_on", 1, 0, "the ring clear runs past the act's slot 0");
    let idle_w = m.wire("idle", 1, "no setup in flight: no read in flight, no act, no clear");
    let try_ = m.wire_from(
        "try_take",
        1,
        "a record is held or arriving, no setup in flight, and the engine lets one be taken",
        has.expr().logic_and(sg("s_free")).logic_and(&idle_w),
    );
    let path0 = rf("path").expr().eq(lit(width("path"), 0));
    let flush = m.wire_from(
        "flush",
        1,
        "path 0 of a live connection: it fails first, the record waits",
        try_.expr().logic_and(path0.clone()).logic_and(sg("s_live")),
    );
    let take = m.wire_from(
        "take",
        1,
        "the record leaves the register: its reads go out",
        try_.expr().logic_and(flush.expr().logic_not()),
    );
    m.next(set(&held.next, has.expr().logic_and(take.expr().logic_not())));
    m.assign(sg("m_fail_valid"), &flush);
    m.assign(sg("m_fail_conn"), gate(&flush, rf("conn").expr(), cb));
    m.assign(sg("m_fail_status"), gate(&flush, lit(8, u64::from(status::WR_FLUSH)), 8));
    m.assign(sg("m_rd_valid"), &take);
    m.assign(sg("m_rd_conn"), gate(&take, rf("conn").expr(), cb));
    let (pipe, ans) = super::read_answer(&mut m, &take, l);
    m.assign(&idle_w, pipe.expr().reduce_or().logic_or(&clearing.q).logic_not());

    // The record as taken: the register may hold the next one by the act.
    let act_rec: Vec<Signal> = FIELDS
        .iter()
        .zip(&widths)
        .zip(&rec)
        .map(|((f, &w), r)| {
            let a = m.reg_no_reset(&format!("act_{f}"), w, "the taken record's field");
            m.next(set(&a.next, mux(&take, r.expr(), a.q.expr())));
            a.q
        })
        .collect();
    let af = |f: &str| act_rec[FIELDS.iter().position(|x| *x == f).expect("a record field")].clone();

    // ------------------------------------------------------------ the act
    let act_path0 = m.wire_from("act_path0", 1, "the act is path 0's", af("path").expr().eq(lit(width("path"), 0)));
    let fresh = m.wire_from(
        "fresh",
        1,
        "path 0 acts: the context and the streams start afresh",
        ans.expr().logic_and(&act_path0),
    );
    let npaths = {
        let w = width("npaths");
        let n = af("npaths");
        let max = lit(w, u64::from(p.paths));
        let clamped = mux(n.expr().eq(lit(w, 0)), lit(w, 1), mux(n.expr().gt(max.clone()), max, n.expr()));
        m.wire_from("npaths", w, "the record's paths within 1..=PATHS", clamped)
    };
    let bit = m.wire_from(
        "path_bit",
        p.paths,
        "the set-up path's DEAD bit",
        lit(p.paths, 1) << fit(af("path").expr(), p.paths),
    );
    let dead = mux(&act_path0, zeros(p.paths), sg("s_rd_dead").expr() & !bit.expr());
    let c = af("conn");
    let outs: Vec<(&str, &Signal, Expr, u32)> = vec![
        ("m_ctx_conn", &fresh, c.expr(), cb),
        ("m_ctx_remote_id", &fresh, af("remote_id").expr(), CONN_ID_BITS),
        ("m_ctx_npaths", &fresh, npaths.expr(), pb + 1),
        ("m_ctx_cwnd", &fresh, lit(32, u64::from(cc.cwnd)), 32),
        ("m_ctx_srtt", &fresh, lit(32, u64::from(cc.srtt)), 32),
        ("m_ctx_min_rtt", &fresh, lit(pt::MIN_RTT.width, u64::from(cc.min_rtt)), pt::MIN_RTT.width),
        ("m_ctx_rate_hint", &fresh, lit(16, u64::from(cc.rate_hint)), 16),
        ("m_ctx_cap", &fresh, lit(32, u64::from(cc.cap)), 32),
        ("m_addr_conn", &fresh, c.expr(), cb),
        ("m_addr_dst_mac", &fresh, af("dst_mac").expr(), 48),
        ("m_addr_dst_ip", &fresh, af("dst_ip").expr(), 32),
        ("m_sw_conn", &fresh, c.expr(), cb),
        ("m_sw_tails", &fresh, sg("s_rd_tails").expr(), p.streams * qb),
        ("m_ctx_dead_conn", &ans, c.expr(), cb),
        ("m_ctx_dead", &ans, dead, p.paths),
        ("m_pm_conn", &ans, c.expr(), cb),
        ("m_pm_path", &ans, af("path").expr(), pb),
        ("m_pm_sport", &ans, af("sport").expr(), 16),
        ("m_pm_plane", &ans, af("plane").expr(), 3),
        ("m_pm_psn", &ans, af("psn").expr(), PSN),
        ("m_pm_srtt", &ans, lit(32, u64::from(srtt)), 32),
        ("m_pm_rttvar", &ans, lit(32, u64::from(rttvar)), 32),
        ("m_pm_min_rtt", &ans, lit(32, u64::from(min_rtt)), 32),
        ("m_evt_kind", &ans, lit(tel::KIND_BITS, u64::from(tel::kind::OPEN)), tel::KIND_BITS),
        ("m_evt_conn", &ans, c.expr(), cb),
        ("m_evt_path", &ans, af("path").expr(), pb),
        ("m_evt_cum_acked", &ans, af("psn").expr(), PSN),
        ("m_evt_sport", &ans, af("sport").expr(), 16),
        ("m_evt_plane", &ans, af("plane").expr(), 3),
    ];
    for v in ["m_ctx_valid", "m_addr_valid", "m_sw_valid"] {
        m.assign(sg(v), &fresh);
    }
    for v in ["m_ctx_dead_valid", "m_pm_valid", "m_evt_valid", "m_hold_open"] {
        m.assign(sg(v), &ans);
    }
    for (nm, when, e, w) in outs {
        m.assign(sg(nm), gate(when, e, w));
    }

    // ------------------------------------------------------------ the ring clear
    let slot = m.reg_no_reset("clr_slot", rb, "the next slot the clear empties");
    let last = lit(rb, u64::from(p.ring_depth - 1));
    m.next(set(&slot.next, mux(&ans, lit(rb, 1), slot.q.expr() + lit(rb, 1))));
    m.next(set(&clearing.next, ans.expr().logic_or(clearing.q.expr().logic_and(slot.q.expr().ne(last)))));
    let clr = m.wire_from("clr", 1, "a slot is emptied this cycle", ans.expr().logic_or(&clearing.q));
    m.assign(sg("m_ring_clr_valid"), &clr);
    m.assign(sg("m_ring_clr_conn"), gate(&clr, c.expr(), cb));
    m.assign(sg("m_ring_clr_path"), gate(&clr, af("path").expr(), pb));
    m.assign(sg("m_ring_clr_slot"), gate(&clearing.q, slot.q.expr(), rb));

    // ------------------------------------------------------------ the holds
    let running = pipe.expr().reduce_or().logic_or(&clearing.q);
    m.assign(sg("m_running"), running.clone());
    m.assign(sg("m_busy"), take.expr().logic_or(running));
    m.assign(sg("m_wr_hold"), held.q.expr().logic_or(pipe.expr().reduce_or()));
    let inner = Inner { held: held.q, rec: rec_q, pipe, act: act_rec, clearing: clearing.q, slot: slot.q };
    properties(&mut m, p, &inner);
    m
}

/// The `tx_open` module for `cfg`'s engine parameters.
pub fn generate(cfg: &mrnic_proto::Config) -> Result<Module, String> {
    let p = TxEngineParams::from_config(cfg).map_err(|e| e.to_string())?;
    Ok(build(&p))
}

/// The unit's state its formal properties tie to their ghosts (the
/// invariants that let induction close).
struct Inner {
    /// The input register holds a record.
    held: Signal,
    /// The input register's fields, in [`FIELDS`] order.
    rec: Vec<Signal>,
    /// The take's reads in flight.
    pipe: Signal,
    /// The taken record's fields, in [`FIELDS`] order.
    act: Vec<Signal>,
    /// The ring clear runs past the act's slot 0, and its next slot.
    clearing: Signal,
    slot: Signal,
}

/// The covers' depth: the reset, a take, its act `L` cycles later, the
/// `tx_ring_depth` (64 in both built-in configs) slots of its clear, the
/// next record's take as soon as the clear ends, and a few to spare.
const COVER_DEPTH: u32 = 72;

/// The unit's proof tasks, with boolector ([`crate::proof::boolector_tasks`]):
/// every assertion by 2-induction (`prove`) and the covers to
/// 72 cycles (a second take as soon as the first's ring
/// clear ends is `L + tx_ring_depth` cycles after it). The unit has no
/// table, so no proof configuration.
pub fn formal_tasks(_asserts: &[String]) -> Vec<crate::proof::Task> {
    crate::proof::boolector_tasks(2, COVER_DEPTH)
}

/// The unit's formal properties (see the module's `# Formal properties`).
fn properties(m: &mut Module, p: &TxEngineParams, f: &Inner) {
    use crate::formal::{ghost, implies, port, quiet_without};
    let (cb, l, depth) = (p.conn_bits, p.read_latency, p.ring_depth);
    let pb = index_bits(p.paths);
    let sg = |m: &Module, nm: &str| port(m, nm);
    let rst = sg(m, "rst");
    let valid = sg(m, "s_open_valid");
    let rd = sg(m, "m_rd_valid");
    let fld = |m: &Module, fname: &str| sg(m, &format!("s_open_{fname}"));

    // ------------------------------------------------ the assembly's side, assumed
    m.assume(
        "asm_no_record_in_reset",
        "no record offered in a reset (the engine is reset with the unit)",
        implies(&rst, valid.expr().logic_not()),
    );
    let payload: Vec<Signal> = FIELDS.iter().map(|x| fld(m, x)).collect();
    crate::formal::valid_ready(m, "s_open", crate::formal::Side::Sink, &valid, &sg(m, "s_open_ready"), &payload, &rst);

    // ------------------------------------------------ the register's ghosts
    let accept = m.formal_wire_from(
        "f_accept",
        1,
        "a record is accepted on s_open",
        valid.expr().logic_and(sg(m, "s_open_ready")),
    );
    // The take is m_rd_valid (a_take_exact says when it comes).
    let f_held = ghost(
        m,
        ("f_held", 1),
        "records accepted and not taken (0 or 1)",
        &rst,
        |h| h.expr().logic_or(&accept).logic_and(rd.expr().logic_not()),
        lit(1, 0),
    );
    let has = m.formal_wire_from("f_has", 1, "a record is held or arriving", f_held.expr().logic_or(&accept));
    // The latest record accepted, and the one the unit looks at now.
    let acc: Vec<Signal> = FIELDS
        .iter()
        .map(|x| {
            let w = fld(m, x).width();
            let g = m.formal_wire(&format!("f_acc_{x}"), w, "the latest record accepted: its field");
            m.formal_seq(vec![if_then(&accept, vec![set(&g, fld(m, x).expr())])]);
            g
        })
        .collect();
    let now: Vec<Signal> = FIELDS
        .iter()
        .zip(&acc)
        .map(|(x, a)| {
            let w = a.width();
            m.formal_wire_from(
                &format!("f_now_{x}"),
                w,
                "the record the unit looks at: the held one's field, else the arriving one's",
                mux(&f_held, a.expr(), fld(m, x).expr()),
            )
        })
        .collect();
    let nf = |x: &str| now[FIELDS.iter().position(|y| *y == x).expect("a field")].clone();
    let acc_running = m.formal_wire("f_acc_running", 1, "the latest record was accepted while a setup ran");
    m.formal_seq(vec![if_then(&accept, vec![set(&acc_running, sg(m, "m_running").expr())])]);

    // ------------------------------------------------ the take's ghosts (step.rs)
    // The setup runs L + depth - 1 cycles after its take's; the age tells
    // apart one cycle past that (a take as soon as allowed).
    let run = u64::from(l + depth) - 1;
    let most = run + 2;
    let bb = 64 - most.leading_zeros();
    let busy = lit(bb, u64::from(depth) - 1);
    let step = super::step::ghosts_taken(m, rd.expr(), busy.clone(), bb, l, most);
    let (age, agw, at_ans) = (step.age.clone(), step.agw, step.at_answer.clone());
    let took: Vec<Signal> = FIELDS
        .iter()
        .zip(&now)
        .map(|(x, n)| {
            step.record(m, &rd.expr(), (&format!("f_took_{x}"), n.width()), "the taken record's field", n.expr())
        })
        .collect();
    let tf = |x: &str| took[FIELDS.iter().position(|y| *y == x).expect("a field")].clone();
    let within = |lo: u64, hi: u64| age.expr().ge(lit(agw, lo)).logic_and(age.expr().le(lit(agw, hi)));
    let free = m.formal_wire_from(
        "f_free",
        1,
        "no setup in flight: the latest take's clear is over (or none since a reset)",
        within(1, run).logic_not(),
    );

    // ------------------------------------------------ s_open and the register
    m.assert(
        "a_s_open_ready",
        "s_open_ready is en and the register empty (registers, never s_open_valid)",
        sg(m, "s_open_ready").expr().eq(sg(m, "en").expr().logic_and(f_held.expr().logic_not())),
    );
    let w0 = nf("path").width();
    let path0 = nf("path").expr().eq(lit(w0, 0));
    let flush_when =
        has.expr().logic_and(sg(m, "s_free")).logic_and(&free).logic_and(path0.clone()).logic_and(sg(m, "s_live"));
    m.assert(
        "a_flush_exact",
        "a flush exactly when a record is held or arriving, no setup is in flight, s_free, the record is path 0's and \
         s_live; for the record's connection, WR_FLUSH",
        sg(m, "m_fail_valid").expr().eq(flush_when.clone()).logic_and(implies(
            &flush_when,
            sg(m, "m_fail_conn")
                .expr()
                .eq(nf("conn"))
                .logic_and(sg(m, "m_fail_status").expr().eq(lit(8, u64::from(status::WR_FLUSH)))),
        )),
    );
    let take_when =
        has.expr().logic_and(sg(m, "s_free")).logic_and(&free).logic_and(path0.logic_and(sg(m, "s_live")).logic_not());
    m.assert(
        "a_take_exact",
        "a take (m_rd_valid) exactly when a record is held or arriving, no setup is in flight, s_free, and no flush",
        rd.expr().eq(take_when),
    );
    m.assert(
        "a_take_not_flush",
        "never a take and a flush together",
        implies(&rd, sg(m, "m_fail_valid").expr().logic_not()),
    );
    m.assert(
        "a_rd_conn",
        "the reads name the taken record's connection",
        implies(&rd, sg(m, "m_rd_conn").expr().eq(nf("conn"))),
    );
    m.assert(
        "a_live_conn",
        "m_live_conn is the record's connection while one is held or arriving, else 0",
        sg(m, "m_live_conn").expr().eq(mux(&has, nf("conn").expr(), lit(cb, 0))),
    );
    m.assert(
        "a_wr_hold",
        &format!("m_wr_hold exactly while a record is held or a take's reads are in flight (L = {l} cycles)"),
        sg(m, "m_wr_hold").expr().eq(f_held.expr().logic_or(within(1, u64::from(l)))),
    );

    // ------------------------------------------------ the act, L cycles after a take
    let p0 = tf("path").expr().eq(lit(w0, 0));
    for (v, what, path0_only) in [
        ("m_ctx_valid", "the context's fresh start", true),
        ("m_addr_valid", "the addresses' write", true),
        ("m_sw_valid", "the streams' restart", true),
        ("m_ctx_dead_valid", "the DEAD bits' write", false),
        ("m_pm_valid", "the mirror's start", false),
        ("m_evt_valid", "the OPEN event", false),
        ("m_hold_open", "tx_ack's hold", false),
    ] {
        let label = v.trim_start_matches("m_").trim_end_matches("_valid");
        let (want, when) =
            if path0_only { (at_ans.expr().logic_and(p0.clone()), " for path 0") } else { (at_ans.expr(), "") };
        m.assert(
            &format!("a_{label}_at_act"),
            &format!("{what} exactly L = {l} cycles after a take{when}, and never otherwise"),
            sg(m, v).expr().eq(want),
        );
    }
    let is = |m: &Module, o: &str, e: Expr| sg(m, o).expr().eq(e);
    let conn = tf("conn");
    m.assert(
        "a_act_conn",
        "every act names the taken record's connection",
        implies(
            &at_ans,
            ["m_ctx_dead_conn", "m_pm_conn", "m_evt_conn"]
                .iter()
                .fold(lit(1, 1), |a, o| a.logic_and(is(m, o, conn.expr()))),
        ),
    );
    m.assert(
        "a_fresh_conn",
        "path 0's writes name the taken record's connection",
        implies(
            sg(m, "m_ctx_valid"),
            ["m_ctx_conn", "m_addr_conn", "m_sw_conn"]
                .iter()
                .fold(lit(1, 1), |a, o| a.logic_and(is(m, o, conn.expr()))),
        ),
    );
    let k = tel::Consts::from_config(&p.cfg);
    let cc = open_cc(p, &k);
    let (srtt, rttvar, min_rtt) = open_rtt(&k);
    let nw = tf("npaths").width();
    let npaths = sg(m, "m_ctx_npaths");
    let in_range = tf("npaths").expr().ge(lit(nw, 1)).logic_and(tf("npaths").expr().le(lit(nw, u64::from(p.paths))));
    m.assert(
        "a_ctx",
        &format!(
            "the fresh context: the record's remote_id, its paths within 1..=PATHS = {} (the record's when in range), \
             and open_cc's cwnd {}, srtt {}, min_rtt {}, rate_hint {}, cap {}",
            p.paths, cc.cwnd, cc.srtt, cc.min_rtt, cc.rate_hint, cc.cap
        ),
        implies(
            sg(m, "m_ctx_valid"),
            is(m, "m_ctx_remote_id", tf("remote_id").expr())
                .logic_and(npaths.expr().ge(lit(nw, 1)))
                .logic_and(npaths.expr().le(lit(nw, u64::from(p.paths))))
                .logic_and(implies(in_range, npaths.expr().eq(tf("npaths"))))
                .logic_and(is(m, "m_ctx_cwnd", lit(32, u64::from(cc.cwnd))))
                .logic_and(is(m, "m_ctx_srtt", lit(32, u64::from(cc.srtt))))
                .logic_and(is(m, "m_ctx_min_rtt", lit(pt::MIN_RTT.width, u64::from(cc.min_rtt))))
                .logic_and(is(m, "m_ctx_rate_hint", lit(16, u64::from(cc.rate_hint))))
                .logic_and(is(m, "m_ctx_cap", lit(32, u64::from(cc.cap)))),
        ),
    );
    m.assert(
        "a_addr_sw",
        "path 0's addresses are the record's MAC and IPv4 address, its streams restart at the answered tails",
        implies(
            sg(m, "m_addr_valid"),
            is(m, "m_addr_dst_mac", tf("dst_mac").expr())
                .logic_and(is(m, "m_addr_dst_ip", tf("dst_ip").expr()))
                .logic_and(is(m, "m_sw_tails", sg(m, "s_rd_tails").expr())),
        ),
    );
    // Bit by bit, not as a shifted mask: path 0 clears them all, another
    // path keeps the answered bits but its own.
    let tp = tf("path");
    let dead_want = cat(&(0..p.paths)
        .rev()
        .map(|i| {
            sg(m, "s_rd_dead").bit(i).logic_and(tp.expr().ne(lit(w0, 0))).logic_and(tp.expr().ne(lit(w0, u64::from(i))))
        })
        .collect::<Vec<_>>());
    m.assert(
        "a_ctx_dead",
        "the DEAD bits written: none for path 0, else the answered bits with the path's cleared",
        implies(&at_ans, sg(m, "m_ctx_dead").expr().eq(dead_want)),
    );
    m.assert(
        "a_pm",
        &format!(
            "the mirror starts on the record's path with its port, plane and psn, and open_rtt's srtt {srtt}, rttvar \
             {rttvar}, min_rtt {min_rtt}"
        ),
        implies(
            &at_ans,
            is(m, "m_pm_path", tp.expr())
                .logic_and(is(m, "m_pm_sport", tf("sport").expr()))
                .logic_and(is(m, "m_pm_plane", tf("plane").expr()))
                .logic_and(is(m, "m_pm_psn", tf("psn").expr()))
                .logic_and(is(m, "m_pm_srtt", lit(32, u64::from(srtt))))
                .logic_and(is(m, "m_pm_rttvar", lit(32, u64::from(rttvar))))
                .logic_and(is(m, "m_pm_min_rtt", lit(32, u64::from(min_rtt)))),
        ),
    );
    m.assert(
        "a_evt",
        "the event is OPEN on the record's path, cum_acked its psn, with its port and plane",
        implies(
            &at_ans,
            is(m, "m_evt_kind", lit(tel::KIND_BITS, u64::from(tel::kind::OPEN)))
                .logic_and(is(m, "m_evt_path", tp.expr()))
                .logic_and(is(m, "m_evt_cum_acked", tf("psn").expr()))
                .logic_and(is(m, "m_evt_sport", tf("sport").expr()))
                .logic_and(is(m, "m_evt_plane", tf("plane").expr())),
        ),
    );

    // ------------------------------------------------ the ring clear and the holds
    let clr_on = within(u64::from(l), run);
    let since_act = m.formal_wire_from(
        "f_since_act",
        agw,
        "cycles since the latest take's act",
        age.expr() - lit(agw, u64::from(l)),
    );
    m.assert(
        "a_ring_clr",
        &format!(
            "the ring clear exactly in the tx_ring_depth = {depth} cycles from the act, slot 0, 1, .. in order, on the \
             taken record's connection and path"
        ),
        sg(m, "m_ring_clr_valid").expr().eq(clr_on.clone()).logic_and(implies(
            clr_on,
            zext(sg(m, "m_ring_clr_slot"), agw)
                .eq(&since_act)
                .logic_and(is(m, "m_ring_clr_conn", conn.expr()))
                .logic_and(is(m, "m_ring_clr_path", tp.expr())),
        )),
    );
    m.assert(
        "a_running",
        &format!("m_running exactly from the cycle after a take through its clear's last slot ({run} cycles)"),
        sg(m, "m_running").expr().eq(within(1, run)),
    );
    m.assert(
        "a_busy",
        "m_busy is a take or m_running",
        sg(m, "m_busy").expr().eq(rd.expr().logic_or(sg(m, "m_running"))),
    );

    // ------------------------------------------------ payloads
    for (v, payload) in [
        ("m_fail_valid", &["m_fail_conn", "m_fail_status"][..]),
        ("m_rd_valid", &["m_rd_conn"]),
        (
            "m_ctx_valid",
            &[
                "m_ctx_conn",
                "m_ctx_remote_id",
                "m_ctx_npaths",
                "m_ctx_cwnd",
                "m_ctx_srtt",
                "m_ctx_min_rtt",
                "m_ctx_rate_hint",
                "m_ctx_cap",
            ],
        ),
        ("m_addr_valid", &["m_addr_conn", "m_addr_dst_mac", "m_addr_dst_ip"]),
        ("m_sw_valid", &["m_sw_conn", "m_sw_tails"]),
        ("m_ctx_dead_valid", &["m_ctx_dead_conn", "m_ctx_dead"]),
        (
            "m_pm_valid",
            &[
                "m_pm_conn",
                "m_pm_path",
                "m_pm_sport",
                "m_pm_plane",
                "m_pm_psn",
                "m_pm_srtt",
                "m_pm_rttvar",
                "m_pm_min_rtt",
            ],
        ),
        ("m_evt_valid", &["m_evt_kind", "m_evt_conn", "m_evt_path", "m_evt_cum_acked", "m_evt_sport", "m_evt_plane"]),
        ("m_ring_clr_valid", &["m_ring_clr_conn", "m_ring_clr_path", "m_ring_clr_slot"]),
    ] {
        quiet_without(m, v, payload);
    }

    // ------------------------------------------------ invariants: the registers hold what the ghosts say
    m.assert("a_inv_held", "the register's valid is the ghost count", f.held.expr().eq(&f_held));
    let cat_of = |v: &[Signal]| cat(&v.iter().map(Signal::expr).collect::<Vec<_>>());
    m.assert(
        "a_inv_rec",
        "a held record's fields are the latest accepted record's",
        implies(&f_held, cat_of(&f.rec).eq(cat_of(&acc))),
    );
    let took_refs: Vec<&Signal> = took.iter().collect();
    step.invariants(m, &f.pipe, (&f.act, &took_refs), zext(busy, agw));
    m.assert(
        "a_inv_clear",
        "the clear runs past slot 0 from the cycle after the act through its last slot, the next slot the cycles \
         since the act",
        f.clearing
            .expr()
            .eq(within(u64::from(l) + 1, run))
            .logic_and(implies(&f.clearing, zext(&f.slot, agw).eq(&since_act))),
    );

    // ------------------------------------------------ covers
    m.cover("c_take_act", "a take's act (path 0 or not)", sg(m, "m_evt_valid").expr());
    m.cover("c_flush", "a live connection's path 0 is flushed", sg(m, "m_fail_valid").expr());
    m.cover(
        "c_back_to_back",
        "a record accepted while a setup ran is taken as soon as its clear ended",
        rd.expr().logic_and(age.expr().eq(lit(agw, run + 1))).logic_and(&f_held).logic_and(&acc_running),
    );
    m.cover("c_path_0", "path 0's act: the context afresh", sg(m, "m_ctx_valid").expr());
    m.cover(
        "c_path_past_0",
        "a path past 0 set up, its DEAD bit cleared from the answered bits",
        sg(m, "m_pm_valid").expr().logic_and(sg(m, "m_pm_path").expr().ne(lit(pb, 0))),
    );
}
