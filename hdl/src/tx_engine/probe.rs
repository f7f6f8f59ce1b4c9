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
//! Every payload is 0 without its valid. Not yet: formal properties.

use mrnic_model::block::PortDef;
use mrnic_model::path_telemetry as tel;
use mrnic_model::tx_engine::TxEngineParams;
use mrnic_proto::layouts::{data, probe};

use super::{gate, probe_header, PSN};
use crate::expr::{cat, index_bits, lit, zeros, zext, Expr};
use crate::ir::{set, Module};

/// Module name.
pub const NAME: &str = "tx_probe";

const RST: &str = "Clock and reset";
const STEP: &str = "The start that chose a PROBE (tx_sched m_probe_*), and its reads, answered L cycles later";
const ACT: &str = "The PROBE, when the reads answer";

/// The header field's width: `tx_output`'s `s_frame_hdr`, a data header's.
const HDR_BITS: u32 = data::LAYOUT.len as u32 * 8;

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
    m.next(set(&conn.next, crate::expr::mux(&go, sg("s_probe_conn").expr(), conn.q.expr())));
    m.next(set(&ts.next, crate::expr::mux(&go, sg("ts_now").expr(), ts.q.expr())));
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
    m
}

/// The `tx_probe` module for `cfg`'s engine parameters.
pub fn generate(cfg: &mrnic_proto::Config) -> Result<Module, String> {
    let p = TxEngineParams::from_config(cfg).map_err(|e| e.to_string())?;
    Ok(build(&p))
}
