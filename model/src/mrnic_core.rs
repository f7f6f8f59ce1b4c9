//! `mrnic_core`: the NIC's top, a [`Netlist`] of every block and the top's
//! glue blocks, defined once here; the model simulates it
//! ([`crate::netlist::Sim`]) and the generator can print it.
//!
//! # What is wired
//! - **Host side** (top ports): csr's AXI4-Lite (`s_axil_*`: MR table,
//!   UDP port, counters); connection setup as one record per block that
//!   holds connection state (`s_conn_*` to conn_table's `s_wr`, `s_open_*`
//!   to tx_engine's per-path `s_open`, `s_ropen_*` to the receive
//!   controller, which opens cpl_engine, msg_check and sack_gen's paths); receives (`s_post_*` / `m_post_*` to recv_match, then
//!   `s_rpost_*` to cpl_engine, which wakes a WRITE_IMM waiting for one);
//!   work requests (`s_wr_*` through enable_gate to tx_engine); one completion queue
//!   (`m_cqe_*`, [`crate::cqe_merge`]); `cfg_src_mac` / `cfg_src_ip` (levels:
//!   the csr has no registers for them yet); `ts_hold` and `ts_now`
//!   ([`crate::ts_counter`]); `cfg_enable` out, and to
//!   [`crate::enable_gate`], which discards MAC frames (counted in
//!   `CNT_RX_DISABLED`) and holds work requests while it is low.
//! - **Network side**: MAC RX `s_axis_*` through enable_gate into rx_parser, MAC TX `m_axis_*`
//!   out of tx_engine (`tuser` = plane), and `port_ready` (a bit per
//!   plane: that port's egress queue has room) into tx_engine.
//! - **Host memory**: one AXI4 master `m_axi_*`: dma_write_engine's write
//!   channels and tx_engine's read channels (their names do not overlap).
//! - **Inside**: tx_engine with path_telemetry (`m_trd`/`s_rd`,
//!   `m_rd`/`s_trd`, `m_evt`/`s_evt`, `m_upd`/`s_upd`, `m_rto`/`s_rto`) and
//!   path_selector (`m_psel`/`s_req`, `m_sel`/`s_psel`); csr's `m_mr` to
//!   dma_write_engine; dma_write_engine's completions to cpl_engine
//!   (`m_cpl`/`s_dma`); cpl_engine with recv_match (`m_consume`/`s_consume`,
//!   `m_cons`/`s_cons`) and conn_table (`m_st`/`s_st`); `ts_now` to every
//!   block that times; sack_gen's `rate_hint` from [`crate::rate_hint`],
//!   which observes sack_gen's `s_pkt` and `m_new` handshakes; op_map into
//!   conn_table's `s_lk_op`; every `stat_*` pulse to its csr counter
//!   (rx_parser's ICRC drop to `stat_rx_bad_icrc`, the other 14 through
//!   [`crate::rx_drop_or`]).
//!
//! # The receive side
//! rx_parser's headers and payload go into [`crate::rx_buffer`]; the
//! receive controller ([`crate::rx_ctl`]) takes each released header and
//! drives its parts one packet at a time: conn_table's lookup (op from
//! op_map), [`crate::conn_search`] for NO_CONN NACKs (over conn_table's
//! read port), [`crate::probe_walk`] for PROBEs, [`crate::msg_check`],
//! [`crate::mr_check`] (its MR table copy written by observing csr's
//! `m_mr` handshake) and recv_match's lookup, sack_gen's beats and
//! answers, dma_write_engine's requests (the payload streams from
//! rx_buffer to the engine's `s_axis`), cpl_engine's `s_new` and `s_open`,
//! and tx_engine's `s_sack` / `s_nack` / `s_csack` / `s_cnack`. The host
//! opens a connection's receive side with one `s_ropen_*` record (conn,
//! paths, the peer's first psn): the controller hands it to cpl_engine,
//! msg_check and sack_gen (an OPEN beat per path). rx_buffer's
//! `stat_oversize` (the parser never sends an oversize packet) is a top
//! output, `stat_rx_oversize`, with no csr counter.

use crate::netlist::{model_ports, Netlist};
use mrnic_proto::Config;

/// Module name, shared with the Verilog.
pub const NAME: &str = "mrnic_core";

/// The blocks, in the order the netlist declares them.
pub const BLOCKS: [&str; 10] = [
    "csr",
    "rx_parser",
    "conn_table",
    "sack_gen",
    "recv_match",
    "dma_write_engine",
    "cpl_engine",
    "tx_engine",
    "path_telemetry",
    "path_selector",
];

/// The top's glue blocks.
pub const GLUE: [&str; 12] = [
    "enable_gate",
    "ts_counter",
    "rate_hint",
    "rx_drop_or",
    "cqe_merge",
    "op_map",
    "rx_buffer",
    "mr_check",
    "msg_check",
    "probe_walk",
    "conn_search",
    "rx_ctl",
];

/// Each block's `stat_*` pulse and the csr counter input it drives (the
/// ICRC drop and rx_drop_or's OR included).
const STATS: &[(&str, &str, &str)] = &[
    ("rx_parser", "stat_drop_icrc", "stat_rx_bad_icrc"),
    ("rx_drop_or", "stat_rx_decode_error", "stat_rx_decode_error"),
    ("conn_table", "stat_no_conn", "stat_rx_no_conn"),
    ("rx_ctl", "stat_ack_no_conn", "stat_ack_no_conn"),
    ("rx_ctl", "stat_rx_bad_hdr", "stat_rx_bad_hdr"),
    ("rx_ctl", "stat_rx_access", "stat_rx_access"),
    ("conn_table", "stat_bad_path", "stat_rx_bad_path"),
    ("conn_table", "stat_bad_src", "stat_rx_bad_src"),
    ("conn_table", "stat_ack_bad_src", "stat_ack_bad_src"),
    ("dma_write_engine", "stat_frame_err", "stat_dma_frame_err"),
    ("sack_gen", "stat_stale_gen", "stat_rx_stale_gen"),
    ("sack_gen", "stat_psn_window", "stat_rx_psn_window"),
    ("sack_gen", "stat_duplicate", "stat_rx_duplicate"),
    ("sack_gen", "stat_sack", "stat_sacks_sent"),
    ("sack_gen", "stat_probe_psn", "stat_rx_probe_psn"),
    ("sack_gen", "stat_probe_limited", "stat_rx_probe_limited"),
    ("cpl_engine", "stat_dma_err", "stat_cpl_dma_err"),
    ("cpl_engine", "stat_order_err", "stat_cpl_order_err"),
    ("cpl_engine", "stat_msg_err", "stat_cpl_msg_err"),
    ("cpl_engine", "stat_recv_cpl", "stat_recv_completions"),
    ("tx_engine", "stat_tx_data", "stat_tx_data"),
    ("tx_engine", "stat_tx_retx", "stat_tx_retx"),
    ("tx_engine", "stat_tx_probe", "stat_tx_probe"),
    ("tx_engine", "stat_tx_answer", "stat_tx_answer"),
    ("tx_engine", "stat_ring_full", "stat_tx_ring_full"),
    ("tx_engine", "stat_sack_stale", "stat_sack_stale"),
    ("tx_engine", "stat_nack_stale", "stat_nack_stale"),
    ("tx_engine", "stat_rnr_full", "stat_tx_rnr_full"),
    ("tx_engine", "stat_wprobe_full", "stat_tx_wprobe_full"),
    ("enable_gate", "stat_rx_disabled", "stat_rx_disabled"),
];

/// Module name of the receive side alone ([`rx_netlist`]).
pub const RX_NAME: &str = "mrnic_rx_core";

/// The transmit side: the blocks [`rx_netlist`] cuts away.
pub const TX_SIDE: [&str; 3] = ["tx_engine", "path_telemetry", "path_selector"];

/// `mrnic_core` without its transmit side ([`TX_SIDE`]), cut by
/// [`Netlist::cut`]: every receive block and glue block as the top wires
/// them, with tx_engine's inputs from the receive side (`s_sack`,
/// `s_nack`, `s_csack`, `s_cnack`, `s_wr` through enable_gate) as top
/// outputs `tx_engine_<port>` and its outputs into the receive side (the
/// readies, `m_cqe` into cqe_merge, the stat pulses into csr) as top
/// inputs of the same names. The printed top needs tx_engine's generator;
/// this part runs through the Verilated RTL now, in lockstep with the
/// model, which is how the receive path meets hostile frames in the RTL
/// (issue 8) before the whole top exists.
pub fn rx_netlist(cfg: &Config) -> Result<Netlist<&'static str>, String> {
    netlist(cfg)?.cut(&TX_SIDE, RX_NAME).map_err(|e| e.to_string())
}

/// The netlist of `mrnic_core` for `cfg`.
pub fn netlist(cfg: &Config) -> Result<Netlist<&'static str>, String> {
    let mut n = Netlist::new(NAME);
    for name in BLOCKS.iter().chain(GLUE.iter()) {
        n.inst(name, *name, model_ports(name, cfg)?);
    }
    n.port(crate::block::PortDef::input("rst", 1, "Clock and reset", "synchronous reset, active high"));
    for name in BLOCKS.iter().chain(GLUE.iter()) {
        if n.insts.iter().any(|i| i.name == *name && i.ports.iter().any(|p| p.name == "rst")) {
            n.wire("rst", &format!("{name}.rst"));
        }
    }
    n.wire("op_map.op", "conn_table.s_lk_op");
    // CONTROL.enable where traffic enters.
    n.channel("enable_gate", "m_axis", "rx_parser", "s_axis");
    n.channel("enable_gate", "m_wr", "tx_engine", "s_wr");
    // Receive side: parser, buffer, controller and its parts.
    n.channel("rx_parser", "m_hdr", "rx_buffer", "s_hdr");
    n.channel("rx_parser", "m_axis", "rx_buffer", "s_axis");
    n.channel("rx_buffer", "m_hdr", "rx_ctl", "s_hdr");
    n.channel("rx_ctl", "m_pay", "rx_buffer", "s_pay");
    n.channel("rx_buffer", "m_axis", "dma_write_engine", "s_axis");
    n.wire("rx_ctl.m_opcode", "op_map.opcode");
    for (from, fp, to, tp) in [
        ("rx_ctl", "m_lk", "conn_table", "s_lk"),
        ("conn_table", "m_lk", "rx_ctl", "s_lkr"),
        ("conn_table", "m_nack", "rx_ctl", "s_tnack"),
        ("conn_search", "m_rd", "conn_table", "s_rd"),
        ("conn_table", "m_rd", "conn_search", "s_rdr"),
        ("rx_ctl", "m_nc", "conn_search", "s_nc"),
        ("conn_search", "m_nack", "rx_ctl", "s_found"),
        ("rx_ctl", "m_probe", "probe_walk", "s_probe"),
        ("probe_walk", "m_pkt", "rx_ctl", "s_walk"),
        ("rx_ctl", "m_chk", "msg_check", "s_chk"),
        ("msg_check", "m_chk", "rx_ctl", "s_chkr"),
        ("rx_ctl", "m_acc", "msg_check", "s_acc"),
        ("rx_ctl", "m_mopen", "msg_check", "s_open"),
        ("rx_ctl", "m_mr", "mr_check", "s_chk"),
        ("mr_check", "m_chk", "rx_ctl", "s_mrr"),
        ("rx_ctl", "m_lookup", "recv_match", "s_lookup"),
        ("recv_match", "m_match", "rx_ctl", "s_match"),
        ("rx_ctl", "m_pkt", "sack_gen", "s_pkt"),
        ("sack_gen", "m_sack", "rx_ctl", "s_gsack"),
        ("sack_gen", "m_nack", "rx_ctl", "s_gnack"),
        ("sack_gen", "m_new", "rx_ctl", "s_gnew"),
        ("rx_ctl", "m_req", "dma_write_engine", "s_req"),
        ("rx_ctl", "m_new", "cpl_engine", "s_new"),
        ("rx_ctl", "m_copen", "cpl_engine", "s_open"),
        ("rx_ctl", "m_sack", "tx_engine", "s_sack"),
        ("rx_ctl", "m_nack", "tx_engine", "s_nack"),
        ("rx_ctl", "m_csack", "tx_engine", "s_csack"),
        ("rx_ctl", "m_cnack", "tx_engine", "s_cnack"),
    ] {
        n.channel(from, fp, to, tp);
    }
    // What the controller and mr_check observe.
    n.wire("cpl_engine.idle", "rx_ctl.cpl_idle");
    for f in ["valid", "conn", "stream", "clear", "completed_msn"] {
        n.wire(&format!("cpl_engine.m_st_{f}"), &format!("rx_ctl.tap_st_{f}"));
    }
    n.wire("conn_table.s_st_ready", "rx_ctl.tap_st_ready");
    for f in ["stale_gen", "psn_window", "duplicate"] {
        n.wire(&format!("sack_gen.stat_{f}"), &format!("rx_ctl.tap_{f}"));
    }
    n.wire("conn_table.stat_ack_no_conn", "rx_ctl.tap_ack_no_conn_table");
    n.wire("conn_search.stat_ack_no_conn", "rx_ctl.tap_ack_no_conn_search");
    for f in ["valid", "key", "entry_valid", "remote_write", "recv", "base", "len"] {
        n.wire(&format!("csr.m_mr_{f}"), &format!("mr_check.tap_mr_{f}"));
    }
    n.wire("dma_write_engine.s_mr_ready", "mr_check.tap_mr_ready");
    n.export_as("rx_buffer", "stat_oversize", "stat_rx_oversize");
    // Time.
    n.export("ts_counter", "ts_hold");
    n.export("ts_counter", "ts_now");
    for sink in ["path_telemetry.ts_now", "tx_engine.ts_now", "rate_hint.ts_now", "sack_gen.ts_now"] {
        n.wire("ts_counter.ts_now", sink);
    }
    // The fair-share hint observes sack_gen's two handshakes.
    for (tap, valid, ready, conn) in [
        (
            "tap_pkt",
            "rx_ctl.m_pkt_valid".to_string(),
            "sack_gen.s_pkt_ready".to_string(),
            "rx_ctl.m_pkt_conn".to_string(),
        ),
        (
            "tap_new",
            "sack_gen.m_new_valid".to_string(),
            "rx_ctl.s_gnew_ready".to_string(),
            "sack_gen.m_new_conn".to_string(),
        ),
    ] {
        n.wire(&valid, &format!("rate_hint.{tap}_valid"));
        n.wire(&ready, &format!("rate_hint.{tap}_ready"));
        n.wire(&conn, &format!("rate_hint.{tap}_conn"));
    }
    n.wire("rate_hint.hint", "sack_gen.rate_hint");
    // Configuration.
    n.wire("csr.cfg_udp_port", "rx_parser.cfg_udp_port");
    n.wire("csr.cfg_udp_port", "tx_engine.cfg_udp_port");
    n.export("csr", "cfg_enable");
    n.wire("csr.cfg_enable", "enable_gate.cfg_enable");
    n.export("tx_engine", "cfg_src_mac");
    n.export("tx_engine", "cfg_src_ip");
    // The MAC's egress queues, a ready level per plane: the path choice
    // sends data only by a port with room (spec 5.3 "Port readiness").
    n.export("tx_engine", "port_ready");
    n.channel("csr", "m_mr", "dma_write_engine", "s_mr");
    // Transmit side.
    n.channel("tx_engine", "m_trd", "path_telemetry", "s_rd");
    n.channel("path_telemetry", "m_rd", "tx_engine", "s_trd");
    n.channel("tx_engine", "m_evt", "path_telemetry", "s_evt");
    n.channel("path_telemetry", "m_upd", "tx_engine", "s_upd");
    n.channel("path_telemetry", "m_rto", "tx_engine", "s_rto");
    n.channel("tx_engine", "m_psel", "path_selector", "s_req");
    n.channel("path_selector", "m_sel", "tx_engine", "s_psel");
    // Receive side behind the controller.
    n.channel("dma_write_engine", "m_cpl", "cpl_engine", "s_dma");
    n.channel("cpl_engine", "m_consume", "recv_match", "s_consume");
    n.channel("recv_match", "m_cons", "cpl_engine", "s_cons");
    n.channel("cpl_engine", "m_st", "conn_table", "s_st");
    // Completions.
    n.channel("tx_engine", "m_cqe", "cqe_merge", "s_tx");
    // A receive's id and stream: their low bits (cqe_merge's rx_fields).
    let cqe = crate::cqe_merge::CqeMergeParams::from_config(cfg).map_err(|e| e.to_string())?;
    n.wire("cpl_engine.m_cqe_valid", "cqe_merge.s_rx_valid");
    n.wire("cqe_merge.s_rx_ready", "cpl_engine.m_cqe_ready");
    for (f, w, _) in &cqe.rx_fields {
        n.slice(&format!("cpl_engine.m_cqe_{f}"), 0, *w, &format!("cqe_merge.s_rx_{f}"));
    }
    n.export_channel("cqe_merge", "m_cqe", "m_cqe");
    // Counters.
    for r in crate::rx_drop_or::reasons() {
        let p = format!("stat_drop_{}", r.name());
        n.wire(&format!("rx_parser.{p}"), &format!("rx_drop_or.{p}"));
    }
    for (inst, from, to) in STATS {
        n.wire(&format!("{inst}.{from}"), &format!("csr.{to}"));
    }
    // Host, network and memory ports.
    for (inst, prefix, top) in [
        ("conn_table", "s_wr", "s_conn"),
        ("tx_engine", "s_open", "s_open"),
        ("rx_ctl", "s_open", "s_ropen"),
        ("recv_match", "s_post", "s_post"),
        ("recv_match", "m_post", "m_post"),
        ("cpl_engine", "s_post", "s_rpost"),
        ("enable_gate", "s_wr", "s_wr"),
        ("csr", "s_axil", "s_axil"),
        ("enable_gate", "s_axis", "s_axis"),
        ("tx_engine", "m_axis", "m_axis"),
        ("dma_write_engine", "m_axi", "m_axi"),
        ("tx_engine", "m_axi", "m_axi"),
    ] {
        n.export_channel(inst, prefix, top);
    }
    n.check().map_err(|e| e.to_string())?;
    Ok(n)
}
