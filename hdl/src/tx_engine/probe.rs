//! The scheduler's PROBE send of `tx_engine` as a clocked unit
//! (`tx_probe`): what the model's `send_probe` does for the PROBE that
//! `tx_sched`'s start chose (`m_probe_*`; [`mrnic_model::tx_engine`],
//! architecture.md, tx_engine item 16).
//!
//! # Timing
//! - **The start's cycle** (`t`, `s_probe_valid` with the connection): the
//!   connection's PROBE queue head, its context (the peer's connection id,
//!   MAC and IPv4 address) and the head path's mirror are read (`m_rd_*`),
//!   and `ts_now` is registered.
//! - **The answer's cycle** (`t + L`, `s_rd_*` and `s_pm_*` as the tables
//!   stood at `t`): the PROBE leaves. Its queue's head is popped and its
//!   `probe_q` bit cleared (`m_pq_*`); the path's mirror takes the PROBE
//!   (`m_pm_*`: `probe_pending` set, `probe_ts` the start's time,
//!   `probe_seq` the path's `tx_seq`, which moves on by one); the frame
//!   record goes to `tx_output` (`m_frame_*`: the PROBE header placed from
//!   proto's field table, in the top bytes of the header field, the peer's
//!   addresses, the path's port and plane); the PROBE_SENT event goes to
//!   the event FIFO (`m_evt_*`).
//! - **`m_busy`**, from the start to the answer's cycle: the assembly
//!   holds `tx_sched`'s `start_ok` low, `tx_ack`'s `s_sched_idle` low (no
//!   step starts), the open, and the output stage's failure
//!   (`walk_busy`), so nothing writes what the start read before the
//!   PROBE has left, and nothing reads what it writes in the cycle it
//!   writes it. The frame queue has room (the start needed it, and no
//!   commit runs meanwhile) and so has the event FIFO (the start needed
//!   it empty).
//!
//! Every payload is 0 without its valid.
//!
//! # Formal properties
//! Stated next to the logic (`properties`) and run by `scripts/formal`
//! as the unit `tx_probe` ([`crate::proof::blocks`], [`formal_tasks`]),
//! all by 2-induction (boolector), with the step ghosts the handlers use
//! (`tx_engine::step`, through `ghosts_own`: the cycles since the latest
//! start, the cycles its `m_busy` still runs, and the start's record, its
//! connection and `ts_now`). The rules:
//! - the assembly's side, assumed: no start in a reset; a start only while
//!   `m_busy` is low, so at least `L + 1` cycles after the one before
//!   (`asm_start_when_free`: `tx_sched`'s `start_ok` is held low while it
//!   is high);
//! - the reads exactly with a start, for its connection; `m_busy` exactly
//!   from a start through its answer's cycle;
//! - each of the pop, the mirror's write, the frame, the event and the
//!   count exactly `L` cycles after a start and never otherwise; they name
//!   the start's connection and the answered path; `probe_ts` is the
//!   start's `ts_now` (low 16 bits), `probe_seq` the answered `tx_seq` and
//!   `m_pm_tx_seq` one more; the event PROBE_SENT at the start's `ts_now`;
//! - the frame's header, sliced with proto's PROBE layout at the top of the
//!   field: version 0, opcode PROBE, the answered `remote_id`, path, next
//!   psn and generation, the start's `ts_now` (low 16 bits), reserved bits
//!   0, and the bytes below the PROBE header 0; its MAC, IPv4 address,
//!   port and plane the answered ones;
//! - every payload 0 without its valid; invariants tying the read pipe,
//!   the record registers and the `m_busy` count to the ghosts (`a_inv_*`);
//! - covers: a PROBE sent, one on a path past 0 with its `tx_seq`
//!   wrapping, and a second sent with its start as soon as the first's
//!   `m_busy` fell.
//!
//! Not proven here: that the answers are the tables as they stood at the
//! start (the assembly's `m_busy` holds keep every writer away; the replay
//! in `hdl/tests/tx_engine_probe.rs` compares every output with the model
//! every cycle).

use mrnic_model::block::PortDef;
use mrnic_model::path_telemetry as tel;
use mrnic_model::tx_engine::TxEngineParams;
use mrnic_proto::layouts::{data, probe};

use super::{gate, probe_header, PSN};
use crate::expr::{cat, index_bits, lit, mux, zeros, zext, Expr, Signal};
use crate::ir::{set, Module};

/// Module name.
pub const NAME: &str = "tx_probe";

const RST: &str = "Clock and reset";
const STEP: &str = "The start that chose a PROBE (tx_sched m_probe_*), and its reads, answered L cycles later";
const ACT: &str = "The PROBE, when the reads answer";

/// The header field's width: `tx_output`'s `s_frame_hdr`.
const HDR_BITS: u32 = super::output::FRAME_HDR_BITS;

/// The unit's ports, in declaration order.
pub fn ports(p: &TxEngineParams) -> Vec<PortDef> {
    let cb = p.conn_bits;
    let pb = index_bits(p.paths);
    let i = |nm: &str, w: u32, g: &'static str, c: &str| PortDef::input(nm, w, g, c);
    let o = |nm: &str, w: u32, g: &'static str, c: &str| PortDef::output(nm, w, g, c);
    vec![
        i("rst", 1, RST, "synchronous reset, active high"),
        i("ts_now", 32, RST, "timestamp"),
        i("s_probe_valid", 1, STEP, "the scheduler's start chose a PROBE of s_probe_conn (tx_sched m_probe_valid)"),
        i("s_probe_conn", cb, STEP, "its connection"),
        o("m_busy", 1, STEP, "a PROBE send runs, from the start to the cycle it leaves"),
        o("m_rd_valid", 1, STEP, "the PROBE queue's head, the context and the head path's mirror are read"),
        o("m_rd_conn", cb, STEP, "the connection"),
        i("s_rd_path", pb, STEP, "the PROBE queue's head: the path, L cycles after m_rd_valid"),
        i("s_rd_remote_id", 24, STEP, "the peer's connection id"),
        i("s_rd_dst_mac", 48, STEP, "the peer's MAC"),
        i("s_rd_dst_ip", 32, STEP, "the peer's IPv4 address"),
        i("s_pm_gen", 8, STEP, "the path's generation (mirror)"),
        i("s_pm_next_psn", PSN, STEP, "its next psn"),
        i("s_pm_tx_seq", 32, STEP, "its next tx_seq"),
        i("s_pm_sport", 16, STEP, "its UDP source port"),
        i("s_pm_plane", 3, STEP, "its plane"),
        o("m_pq_valid", 1, ACT, "the PROBE queue's head leaves and its probe_q bit is cleared"),
        o("m_pq_conn", cb, ACT, "its connection"),
        o("m_pq_path", pb, ACT, "its path"),
        o("m_pm_valid", 1, ACT, "the path's mirror takes the PROBE: probe_pending set"),
        o("m_pm_conn", cb, ACT, "its connection"),
        o("m_pm_path", pb, ACT, "its path"),
        o("m_pm_probe_ts", 16, ACT, "probe_ts: the start's timestamp, low bits"),
        o("m_pm_probe_seq", 32, ACT, "probe_seq: the tx_seq the PROBE takes"),
        o("m_pm_tx_seq", 32, ACT, "the path's next tx_seq, one more"),
        o("m_frame_valid", 1, ACT, "the PROBE frame is queued (tx_output s_frame_valid, s_frame_probe)"),
        o("m_frame_hdr", HDR_BITS, ACT, "the PROBE header, big-endian, in the top bytes"),
        o("m_frame_dst_mac", 48, ACT, "the peer's MAC"),
        o("m_frame_dst_ip", 32, ACT, "the peer's IPv4 address"),
        o("m_frame_sport", 16, ACT, "the path's UDP source port"),
        o("m_frame_plane", 3, ACT, "the path's plane"),
        o("m_frame_conn", cb, ACT, "the connection"),
        o("m_evt_valid", 1, ACT, "the PROBE_SENT event (path_telemetry's probe timer)"),
        o("m_evt_kind", tel::KIND_BITS, ACT, "PROBE_SENT"),
        o("m_evt_conn", cb, ACT, "its connection"),
        o("m_evt_path", pb, ACT, "its path"),
        o("m_evt_now", 32, ACT, "the start's timestamp"),
        o("m_stat_tx_probe", 1, ACT, "a PROBE sent (stat_tx_probe)"),
    ]
}

/// The `tx_probe` module for `p`.
pub fn build(p: &TxEngineParams) -> Module {
    let (cb, l) = (p.conn_bits, p.read_latency);
    let pb = index_bits(p.paths);
    assert!(l >= 1, "the reads answer at least a cycle after the start");

    let mut m = Module::new(NAME);
    m.describe(
        "tx_engine scheduler's PROBE send: the queue's head, the mirror's PROBE fields, the frame and its event",
    );
    let defs = ports(p);
    let (clk, sig) = crate::ports::declare(&mut m, &defs);
    let sg = |nm: &str| sig[nm].clone();
    m.clock_domain(&clk, &sg("rst"));

    // ------------------------------------------------------------ the start
    let go = sg("s_probe_valid");
    m.assign(sg("m_rd_valid"), &go);
    m.assign(sg("m_rd_conn"), gate(&go, sg("s_probe_conn").expr(), cb));
    let conn = m.reg_no_reset("rec_conn", cb, "the PROBE's connection");
    let ts = m.reg_no_reset("rec_ts", 32, "ts_now at the start (probe_ts, the header's tx_ts, the event's time)");
    m.next(set(&conn.next, mux(&go, sg("s_probe_conn").expr(), conn.q.expr())));
    m.next(set(&ts.next, mux(&go, sg("ts_now").expr(), ts.q.expr())));
    let (pipe, ans) = super::read_answer(&mut m, &go, l);
    m.assign(sg("m_busy"), go.expr().logic_or(pipe.expr().reduce_or()));

    // ------------------------------------------------------------ the PROBE
    let path = sg("s_rd_path");
    let tx_ts = ts.q.slice(15, 0);
    let hdr = {
        let path8 = zext(path.expr(), probe::PATH_ID.width);
        let value = |name: &str| -> Expr {
            match name {
                "tx_ts" => tx_ts.clone(),
                "dst_conn" => sg("s_rd_remote_id").expr(),
                "path_id" => path8.clone(),
                "path_psn" => sg("s_pm_next_psn").expr(),
                "path_gen" => sg("s_pm_gen").expr(),
                other => panic!("the PROBE header has no field {other}"),
            }
        };
        let h = probe_header(&value);
        m.wire_from(
            "probe_hdr",
            HDR_BITS,
            "the PROBE header in the top bytes of the header field",
            cat(&[h, zeros(HDR_BITS - probe::LAYOUT.len as u32 * 8)]),
        )
    };
    let seq = sg("s_pm_tx_seq");
    let outs: Vec<(&str, Expr, u32)> = vec![
        ("m_pq_conn", conn.q.expr(), cb),
        ("m_pq_path", path.expr(), pb),
        ("m_pm_conn", conn.q.expr(), cb),
        ("m_pm_path", path.expr(), pb),
        ("m_pm_probe_ts", tx_ts.clone(), 16),
        ("m_pm_probe_seq", seq.expr(), 32),
        ("m_pm_tx_seq", seq.expr() + lit(32, 1), 32),
        ("m_frame_hdr", hdr.expr(), HDR_BITS),
        ("m_frame_dst_mac", sg("s_rd_dst_mac").expr(), 48),
        ("m_frame_dst_ip", sg("s_rd_dst_ip").expr(), 32),
        ("m_frame_sport", sg("s_pm_sport").expr(), 16),
        ("m_frame_plane", sg("s_pm_plane").expr(), 3),
        ("m_frame_conn", conn.q.expr(), cb),
        ("m_evt_kind", lit(tel::KIND_BITS, u64::from(tel::kind::PROBE_SENT)), tel::KIND_BITS),
        ("m_evt_conn", conn.q.expr(), cb),
        ("m_evt_path", path.expr(), pb),
        ("m_evt_now", ts.q.expr(), 32),
    ];
    for v in ["m_pq_valid", "m_pm_valid", "m_frame_valid", "m_evt_valid", "m_stat_tx_probe"] {
        m.assign(sg(v), &ans);
    }
    for (nm, e, w) in outs {
        m.assign(sg(nm), gate(&ans, e, w));
    }
    properties(&mut m, p, &Inner { pipe, conn: conn.q, ts: ts.q });
    m
}

/// The `tx_probe` module for `cfg`'s engine parameters.
pub fn generate(cfg: &mrnic_proto::Config) -> Result<Module, String> {
    let p = TxEngineParams::from_config(cfg).map_err(|e| e.to_string())?;
    Ok(build(&p))
}

/// The unit's state its formal properties tie to their ghosts (the
/// invariants that let induction close).
struct Inner {
    /// The start's reads in flight.
    pipe: Signal,
    /// The start's record: its connection and `ts_now`.
    conn: Signal,
    ts: Signal,
}

/// The unit's proof tasks, with boolector ([`crate::proof::boolector_tasks`]):
/// every assertion by 2-induction (`prove`) and the covers to 8 cycles
/// (the reset, a start, its answer `L` cycles later, a second start as
/// soon as `m_busy` falls and its answer: reached at step 5 on `small`, 7
/// on `default`). The unit has no table, so no proof configuration.
pub fn formal_tasks(_asserts: &[String]) -> Vec<crate::proof::Task> {
    crate::proof::boolector_tasks(2, 8)
}

/// A field of the PROBE header as it sits in `m_frame_hdr`: proto's range
/// for the header field's length, since the PROBE header fills its top
/// bytes (byte 0 in the top bits) and a field's place counts from byte 0.
fn field(hdr: &Signal, f: &mrnic_proto::field::Field) -> Expr {
    let (hi, lo) = f.vector_range(data::LAYOUT.len);
    hdr.slice(hi as u32, lo as u32)
}

/// The unit's formal properties (see the module's `# Formal properties`).
fn properties(m: &mut Module, p: &TxEngineParams, f: &Inner) {
    use crate::formal::{implies, port, quiet_without};
    let (cb, l) = (p.conn_bits, p.read_latency);
    let pb = index_bits(p.paths);
    let sg = |m: &Module, nm: &str| port(m, nm);
    let rst = sg(m, "rst");
    let go = sg(m, "s_probe_valid");

    // ------------------------------------------------ the assembly's side, assumed
    m.assume(
        "asm_no_start_in_reset",
        "no start in a reset (tx_sched is reset with the unit)",
        implies(&rst, go.expr().logic_not()),
    );
    // The age tells apart the cycles up to the answer of a second start as
    // soon as allowed (L + 1 + L); the count (at most L) is as wide, which
    // a_inv_wait's arithmetic over the age needs.
    let most = 2 * u64::from(l) + 2;
    let bb = 64 - most.leading_zeros();
    let step = super::step::ghosts_own(m, go.expr(), bb, l, most);
    let (age, agw, at_ans) = (step.age.clone(), step.agw, step.at_answer.clone());
    let g = |m: &mut Module, nm: &str, w: u32, c: &str, e: Expr| step.record(m, &go.expr(), (nm, w), c, e);
    let f_conn = g(m, "f_conn", cb, "the latest start's connection", sg(m, "s_probe_conn").expr());
    let f_ts = g(m, "f_ts", 32, "ts_now at the latest start", sg(m, "ts_now").expr());
    let f_soon = g(
        m,
        "f_soon",
        1,
        "the latest start came as soon as the one before it allowed, L + 1 cycles after it",
        age.expr().eq(lit(agw, u64::from(l) + 1)),
    );

    // ------------------------------------------------ the start
    m.assert(
        "a_reads",
        "the reads go out exactly with a start, for its connection",
        sg(m, "m_rd_valid").expr().eq(&go).logic_and(implies(&go, sg(m, "m_rd_conn").expr().eq(sg(m, "s_probe_conn")))),
    );
    m.assert(
        "a_busy",
        &format!("m_busy exactly from a start through its answer's cycle, L = {l} cycles later"),
        sg(m, "m_busy").expr().eq(go.expr().logic_or(age.expr().le(lit(agw, u64::from(l))))),
    );

    // ------------------------------------------------ the PROBE, when the reads answer
    for (v, what) in [
        ("m_pq_valid", "the queue's pop"),
        ("m_pm_valid", "the mirror's write"),
        ("m_frame_valid", "the frame"),
        ("m_evt_valid", "the PROBE_SENT event"),
        ("m_stat_tx_probe", "the PROBE's count"),
    ] {
        let label = v.trim_start_matches("m_").trim_end_matches("_valid");
        m.assert(
            &format!("a_{label}_at_answer"),
            &format!("{what} exactly L = {l} cycles after a start, and never otherwise"),
            sg(m, v).expr().eq(&at_ans),
        );
    }
    let conn_is = |m: &Module, pre: &str| sg(m, &format!("{pre}_conn")).expr().eq(&f_conn);
    m.assert(
        "a_act_conn",
        "the pop, the mirror's write, the frame and the event name the start's connection",
        implies(
            &at_ans,
            conn_is(m, "m_pq")
                .logic_and(conn_is(m, "m_pm"))
                .logic_and(conn_is(m, "m_frame"))
                .logic_and(conn_is(m, "m_evt")),
        ),
    );
    let path_is = |m: &Module, pre: &str| sg(m, &format!("{pre}_path")).expr().eq(sg(m, "s_rd_path"));
    m.assert(
        "a_act_path",
        "the pop, the mirror's write and the event name the answered path (the PROBE queue's head)",
        implies(&at_ans, path_is(m, "m_pq").logic_and(path_is(m, "m_pm")).logic_and(path_is(m, "m_evt"))),
    );
    m.assert(
        "a_pm_probe_ts",
        "probe_ts is the start's ts_now, low 16 bits",
        implies(&at_ans, sg(m, "m_pm_probe_ts").expr().eq(f_ts.slice(15, 0))),
    );
    let seq = sg(m, "s_pm_tx_seq");
    m.assert(
        "a_pm_seq",
        "probe_seq is the answered tx_seq, and the path's tx_seq moves on by one (mod 2^32)",
        implies(
            &at_ans,
            sg(m, "m_pm_probe_seq").expr().eq(&seq).logic_and(sg(m, "m_pm_tx_seq").expr().eq(seq.expr() + lit(32, 1))),
        ),
    );
    m.assert(
        "a_evt",
        "the event is PROBE_SENT at the start's ts_now",
        implies(
            &at_ans,
            sg(m, "m_evt_kind")
                .expr()
                .eq(lit(tel::KIND_BITS, u64::from(tel::kind::PROBE_SENT)))
                .logic_and(sg(m, "m_evt_now").expr().eq(&f_ts)),
        ),
    );
    let hdr = sg(m, "m_frame_hdr");
    let is = |f: &mrnic_proto::field::Field, e: Expr| field(&hdr, f).eq(e);
    m.assert(
        "a_frame_hdr",
        "the frame's header, sliced with proto's PROBE layout at the top of the field, is version 0, opcode PROBE, \
         the answered remote_id, path, next psn and gen and the start's ts_now (low 16 bits), its reserved bits 0",
        implies(
            &at_ans,
            is(&probe::VER, lit(probe::VER.width, 0))
                .logic_and(is(&probe::OPCODE, lit(probe::OPCODE.width, mrnic_proto::Opcode::Probe as u64)))
                .logic_and(is(&probe::FLAGS_RESERVED, lit(probe::FLAGS_RESERVED.width, 0)))
                .logic_and(is(&probe::TX_TS, f_ts.slice(15, 0)))
                .logic_and(is(&probe::DST_CONN, sg(m, "s_rd_remote_id").expr()))
                .logic_and(is(&probe::PATH_ID, zext(sg(m, "s_rd_path"), probe::PATH_ID.width)))
                .logic_and(is(&probe::PATH_PSN, sg(m, "s_pm_next_psn").expr()))
                .logic_and(is(&probe::PATH_GEN, sg(m, "s_pm_gen").expr()))
                .logic_and(is(&probe::RESERVED, lit(probe::RESERVED.width, 0))),
        ),
    );
    let below = HDR_BITS - probe::LAYOUT.len as u32 * 8;
    m.assert(
        "a_frame_hdr_below",
        "the header field's bytes below the PROBE header are 0",
        hdr.slice(below - 1, 0).eq(lit(below, 0)),
    );
    let same = |m: &Module, o: &str, i: &str| sg(m, o).expr().eq(sg(m, i));
    m.assert(
        "a_frame_route",
        "the frame goes to the answered peer's MAC and IPv4 address, from the answered path's port and plane",
        implies(
            &at_ans,
            same(m, "m_frame_dst_mac", "s_rd_dst_mac")
                .logic_and(same(m, "m_frame_dst_ip", "s_rd_dst_ip"))
                .logic_and(same(m, "m_frame_sport", "s_pm_sport"))
                .logic_and(same(m, "m_frame_plane", "s_pm_plane")),
        ),
    );

    // ------------------------------------------------ payloads
    for (valid, payload) in [
        ("m_rd_valid", &["m_rd_conn"][..]),
        ("m_pq_valid", &["m_pq_conn", "m_pq_path"]),
        ("m_pm_valid", &["m_pm_conn", "m_pm_path", "m_pm_probe_ts", "m_pm_probe_seq", "m_pm_tx_seq"]),
        (
            "m_frame_valid",
            &["m_frame_hdr", "m_frame_dst_mac", "m_frame_dst_ip", "m_frame_sport", "m_frame_plane", "m_frame_conn"],
        ),
        ("m_evt_valid", &["m_evt_kind", "m_evt_conn", "m_evt_path", "m_evt_now"]),
    ] {
        quiet_without(m, valid, payload);
    }

    // ------------------------------------------------ invariants: the registers hold what the ghosts say
    step.invariants(m, &f.pipe, (&[f.conn.clone(), f.ts.clone()], &[&f_conn, &f_ts]), lit(agw, 0));

    // ------------------------------------------------ covers
    let sent = sg(m, "m_frame_valid");
    m.cover("c_probe_sent", "a PROBE leaves", sent.expr());
    m.cover(
        "c_path_past_0",
        "a PROBE on a path past 0, with its tx_seq wrapping",
        sent.expr()
            .logic_and(sg(m, "m_pq_path").expr().ne(lit(pb, 0)))
            .logic_and(sg(m, "m_pm_tx_seq").expr().eq(lit(32, 0))),
    );
    m.cover(
        "c_back_to_back",
        "a second PROBE leaves, its start as soon as the first's m_busy fell (L + 1 cycles apart)",
        sent.expr().logic_and(&f_soon),
    );
}
