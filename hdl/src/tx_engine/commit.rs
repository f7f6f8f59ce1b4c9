//! The commit of `tx_engine`'s new data as a unit (`tx_commit`): what the
//! model's `TxEngine::commit` does with a `Plan::New` packet
//! ([`mrnic_model::tx_engine`]: `commit`, `fields`, `data_header`,
//! `push_frame`), in the cycle `tx_sched` hands the packet out
//! (`m_commit_*`). The cut is [`super::cut`], the header
//! [`super::data_header`], both shared with the model's functions.
//!
//! # Why no clock
//! The model's commit keeps nothing from one cycle to the next: it reads
//! the deciding connection's stores and writes them back within the
//! cycle of the path answer. Following `tx_sched`'s convention the stores
//! it reads come in as levels valid in that cycle (the assembly registers
//! or forwards them) and its writes leave as ports of the same cycle, so
//! the unit is combinational (no `clk`, which would be an unread input):
//! its timing is the model's, cycle for cycle, by construction.
//!
//! # Interface with the rest of the engine
//! - **The packet** (`s_commit_*`): `tx_sched`'s `m_commit_valid` when
//!   `m_commit_retx` is low, with its stream, chosen path `phys` and the
//!   paths one more packet fills. Its connection (`m_commit_conn`) is not
//!   a port: it addresses the stores the assembly reads and writes, the
//!   event's and the frame record's `conn`, none of which needs logic.
//! - **The stores it reads** (levels, valid in the commit's cycle, as the
//!   model's commit finds them: before any of its writes): the
//!   connection's context (`s_ctx_*`: failed, the peer, the counts and
//!   timers the cut reads), the stream's word (`s_sw_*`), the mirror of
//!   path `phys` (`s_pm_*`), the work request at the stream's `pend` and
//!   its msn and rq_seq (`s_wr_*`) and that slot's issued count
//!   (`s_wq_issued`).
//! - **Its writes** (`m_*`, all valid with `m_valid`: the packet is
//!   committed, its connection has not failed; every other output is 0
//!   without it): the ring slot of (conn, phys, psn) (`m_ring_*`; its
//!   stream is `s_commit_stream`, `phys` the path, `sent` `ts_now` and
//!   `tx_ts` its low 16 bits, which need no port; the fields not named,
//!   `retx_count`, `rnr_*`, `queued`, `resent`, `charge`, are written 0), the mirror's `next_psn`, `tx_seq`,
//!   `last_progress` (`m_pm_*`), the stream word's `pend` and `pend_sent`
//!   (`m_sw_*`), the context's `rr_stream`, `pend_streams`,
//!   `inflight_bytes`, `since_ackreq`, `unreq_since` and the tail timer
//!   (`m_ctx_*`), the slot's issued count (`m_wq_issued`), the SEND event
//!   (`m_evt_*`, kind SEND, of `m_commit_conn` and path `phys`) and the
//!   frame (`m_frame_*`, `tx_output`'s `s_frame_*` but `s_frame_valid`,
//!   `s_frame_probe` (the assembly drives them from `m_valid` and the
//!   PROBE's send), `s_frame_conn`, `s_frame_stream` (`m_commit_conn`,
//!   `s_commit_stream`) and `s_frame_slot` (`m_ring_wq`)).
//!
//! # Where the data header is built
//! Here: `tx_output`'s `s_frame_hdr` takes the transport header already
//! placed (a PROBE's in its top bytes), and every field of a data header
//! is known in the commit's cycle (the cut's length, psn and ACKREQ, the
//! request, the mirror's gen), so the commit places it with
//! [`super::data_header`] and the frame record carries it as the model's
//! `push_frame` does.
//!
//! Not built yet (the model's `Plan::Retx` arm): retransmissions and RNR
//! resends (the ring slot's read and write-back, RETX/RESUME events), the
//! retry limit's failure (a start of `tx_walk`'s `s_fail_*`).

use mrnic_model::block::PortDef;
use mrnic_model::path_telemetry as tel;
use mrnic_model::tx_engine::{TxEngineParams, CONN_ID_BITS};
use mrnic_proto::layouts::data;

use super::{cut, data_header, stream_ptr_bits, BeatSizes, CutNets, CutSizes, INFLIGHT_BITS};
use crate::expr::{index_bits, lit, mux, zeros, zext, Expr, Signal};
use crate::ir::Module;

/// Module name.
pub const NAME: &str = "tx_commit";

const PKT: &str = "The decided packet (tx_sched m_commit_*, new data)";
const CTX: &str = "The connection's context (levels, valid in the commit's cycle)";
const SW: &str = "The stream's word and its request at pend (levels)";
const PM: &str = "The mirror of path phys (levels)";
const WR: &str = "The commit's writes (valid with m_valid)";
const FRM: &str = "The frame record (tx_output s_frame_*)";

/// The unit's ports, in declaration order.
pub fn ports(p: &TxEngineParams) -> Vec<PortDef> {
    let (sb, n) = (p.stream_bits, p.paths);
    let pb = index_bits(n);
    let qb = stream_ptr_bits(p.wq_depth);
    let cz = CutSizes::of(p);
    let lb = BeatSizes::of(p).payload_len_bits();
    let i = |nm: &str, w: u32, g: &'static str, c: &str| PortDef::input(nm, w, g, c);
    let o = |nm: &str, w: u32, g: &'static str, c: &str| PortDef::output(nm, w, g, c);
    let mut v = super::engine_ports(p, &["ts_now"]);
    v.extend([
        i("s_commit_valid", 1, PKT, "a new data packet to commit (m_commit_valid and not m_commit_retx)"),
        i("s_commit_stream", sb, PKT, "its stream"),
        i("s_commit_phys", pb, PKT, "the path path_selector chose"),
        i("s_commit_full_after", n, PKT, "paths one more packet fills"),
        i("s_ctx_failed", 1, CTX, "the connection has failed: nothing is committed"),
        i("s_ctx_remote_id", CONN_ID_BITS, CTX, "the peer's connection id"),
        i("s_ctx_dst_mac", 48, CTX, "the peer's MAC"),
        i("s_ctx_dst_ip", 32, CTX, "the peer's IPv4 address"),
        i("s_ctx_inflight", INFLIGHT_BITS, CTX, "bytes in flight"),
        i("s_ctx_cap", 32, CTX, "its cap in bytes"),
        i("s_ctx_pend_streams", cz.streams_bits, CTX, "streams with bytes to cut"),
        i("s_ctx_since_ackreq", cz.since_bits, CTX, "packets since the last ACKREQ"),
        i("s_ctx_unreq_since", 32, CTX, "send time of the first of them"),
        i("s_ctx_tail_valid", 1, CTX, "the tail timer is armed"),
        i("s_ctx_tail_at", 32, CTX, "its deadline"),
        i("s_ctx_rack_rtt", 32, CTX, "RACK's RTT across paths"),
        i("s_sw_pend", qb, SW, "the stream's first request with bytes to cut"),
        i("s_sw_tail", qb, SW, "one past its last request"),
        i("s_sw_pend_sent", 32, SW, "bytes cut of the request at pend"),
        i("s_wr_op", 2, SW, "0 WRITE, 1 WRITE_IMM, 2 SEND, 3 SEND_IMM"),
        i("s_wr_laddr", p.axi_addr_bits, SW, "local buffer address"),
        i("s_wr_len", data::MSG_LEN.width, SW, "message bytes"),
        i("s_wr_raddr", data::ADDR.width, SW, "WRITE: remote virtual address"),
        i("s_wr_rkey", data::RKEY.width, SW, "WRITE: remote key"),
        i("s_wr_imm", data::IMM.width, SW, "*_IMM: immediate data"),
        i("s_wr_msn", data::MSN.width, SW, "its message sequence number"),
        i("s_wr_rq_seq", data::RQ_SEQ.width, SW, "SEND: its posted receive sequence"),
        i("s_wq_issued", 32, SW, "packets cut of the slot (free-running)"),
        i("s_pm_next_psn", 24, PM, "the path's next psn"),
        i("s_pm_cum_acked", 24, PM, "its cumulative point"),
        i("s_pm_tx_seq", 32, PM, "its next tx_seq"),
        i("s_pm_last_progress", 32, PM, "its last progress"),
        i("s_pm_srtt", 20, PM, "its srtt"),
        i("s_pm_rttvar", 16, PM, "its rttvar"),
        i("s_pm_gen", data::PATH_GEN.width, PM, "its generation"),
        i("s_pm_sport", 16, PM, "its UDP source port"),
        i("s_pm_plane", 3, PM, "its plane"),
        o("m_valid", 1, WR, "the packet is committed (its connection has not failed)"),
        o("m_ring_psn", 24, WR, "ring slot of (m_commit_conn, s_commit_phys, this psn): written"),
        o("m_ring_wq", qb, WR, "the slot's work queue slot (its stream is s_commit_stream)"),
        o("m_ring_offset", 32, WR, "payload offset in the message"),
        o("m_ring_len", lb, WR, "payload bytes"),
        o("m_ring_tx_seq", 32, WR, "the path's tx_seq it left with"),
        o("m_pm_next_psn", 24, WR, "the mirror's next psn"),
        o("m_pm_tx_seq", 32, WR, "its next tx_seq"),
        o("m_pm_last_progress", 32, WR, "its last progress"),
        o("m_sw_pend", qb, WR, "the stream word's pend"),
        o("m_sw_pend_sent", 32, WR, "its bytes cut of the request at pend"),
        o("m_ctx_rr_stream", sb, WR, "the stream the next decision starts from"),
        o("m_ctx_pend_streams", cz.streams_bits, WR, "streams with bytes to cut"),
        o("m_ctx_inflight", INFLIGHT_BITS, WR, "bytes in flight"),
        o("m_ctx_since_ackreq", cz.since_bits, WR, "packets since the last ACKREQ"),
        o("m_ctx_unreq_since", 32, WR, "send time of the first of them"),
        o("m_ctx_tail_valid", 1, WR, "the tail timer is armed"),
        o("m_ctx_tail_at", 32, WR, "its deadline"),
        o("m_wq_issued", 32, WR, "the slot's issued count, one more"),
        o("m_evt_kind", tel::KIND_BITS, WR, "the telemetry event: SEND"),
        o("m_evt_now", tel::TS_BITS, WR, "its timestamp"),
        o("m_frame_hdr", data::LAYOUT.len as u32 * 8, FRM, "the data header, big-endian"),
        o("m_frame_addr", p.axi_addr_bits, FRM, "host address of the payload"),
        o("m_frame_len", lb, FRM, "payload bytes"),
        o("m_frame_dst_mac", 48, FRM, "the peer's MAC"),
        o("m_frame_dst_ip", 32, FRM, "the peer's IPv4 address"),
        o("m_frame_sport", 16, FRM, "UDP source port of path phys"),
        o("m_frame_plane", 3, FRM, "plane of path phys"),
    ]);
    v
}

/// `cond ? a : 0` for a value of `w` bits.
fn gate(cond: &Signal, a: impl Into<Expr>, w: u32) -> Expr {
    mux(cond, a, zeros(w))
}

/// The `tx_commit` module for `p`.
pub fn build(p: &TxEngineParams) -> Module {
    let (sb, streams) = (p.stream_bits, p.streams);
    let cz = CutSizes::of(p);
    let lb = BeatSizes::of(p).payload_len_bits();
    let qb = cz.ptr_bits;

    let mut m = Module::new(NAME);
    m.describe("tx_engine commit of new data: cut, ring slot, mirror, stream word, context, event, frame");
    let defs = ports(p);
    let sig = crate::ports::declare_combinational(&mut m, &defs);
    let sg = |nm: &str| sig[nm].clone();

    let nets = CutNets {
        ts: sg("ts_now"),
        req_len: sg("s_wr_len"),
        pend_sent: sg("s_sw_pend_sent"),
        pend: sg("s_sw_pend"),
        tail: sg("s_sw_tail"),
        next_psn: sg("s_pm_next_psn"),
        cum_acked: sg("s_pm_cum_acked"),
        tx_seq: sg("s_pm_tx_seq"),
        last_progress: sg("s_pm_last_progress"),
        srtt: sg("s_pm_srtt"),
        rttvar: sg("s_pm_rttvar"),
        inflight: sg("s_ctx_inflight"),
        cap: sg("s_ctx_cap"),
        pend_streams: sg("s_ctx_pend_streams"),
        since_ackreq: sg("s_ctx_since_ackreq"),
        unreq_since: sg("s_ctx_unreq_since"),
        tail_valid: sg("s_ctx_tail_valid"),
        tail_at: sg("s_ctx_tail_at"),
        rack_rtt: sg("s_ctx_rack_rtt"),
        full_after: m.wire_from(
            "full_after",
            1,
            "the packet fills its path's window",
            sg("s_commit_full_after").expr().bit_at(sg("s_commit_phys")),
        ),
    };
    let o = cut(&mut m, "cut", &cz, &nets);

    let valid = m.wire_from(
        "valid",
        1,
        "committed: a failed connection's packet is dropped (its walk flushes the request)",
        sg("s_commit_valid").expr().logic_and(sg("s_ctx_failed").expr().logic_not()),
    );
    m.assign(sg("m_valid"), &valid);

    // The header's fields, as the model's `fields` fills them: a SEND
    // carries its rq_seq and message offset, a WRITE its rkey and the
    // remote address of the packet's first byte.
    let offset = sg("s_sw_pend_sent");
    let op = sg("s_wr_op");
    let has_imm = op.bit(0);
    let raddr = m.wire_from(
        "raddr",
        data::ADDR.width,
        "remote address of the packet's first byte",
        sg("s_wr_raddr").expr() + zext(&offset, data::ADDR.width),
    );
    let som = m.wire_from("som", 1, "the packet starts the message", offset.expr().eq(lit(32, 0)));
    let value = |f: &str| -> Expr {
        match f {
            "opcode" => op.expr(),
            "som" => som.expr(),
            "eom" => o.eom.expr(),
            "retx" => lit(1, 0),
            "ackreq" => o.ackreq.expr(),
            "payload_len" => o.len.expr(),
            "dst_conn" => sg("s_ctx_remote_id").expr(),
            "path_id" => sg("s_commit_phys").expr(),
            "path_psn" => sg("s_pm_next_psn").expr(),
            "path_gen" => sg("s_pm_gen").expr(),
            "stream_id" => sg("s_commit_stream").expr(),
            "msn" => sg("s_wr_msn").expr(),
            "msg_len" => sg("s_wr_len").expr(),
            "rkey" => sg("s_wr_rkey").expr(),
            "addr" => raddr.expr(),
            "rq_seq" => sg("s_wr_rq_seq").expr(),
            "msg_offset" => offset.expr(),
            "tx_ts" => sg("ts_now").expr(),
            "imm" => mux(has_imm.clone(), sg("s_wr_imm"), lit(32, 0)),
            _ => panic!("data header field {f} has no value"),
        }
    };
    let hdr = data_header(&mut m, "hdr", &value);

    let last = lit(sb, u64::from(streams - 1));
    let rr_next = mux(sg("s_commit_stream").expr().eq(last), lit(sb, 0), sg("s_commit_stream").expr() + lit(sb, 1));
    let ab = p.axi_addr_bits;
    let outs: Vec<(&str, Expr, u32)> = vec![
        ("m_ring_psn", sg("s_pm_next_psn").expr(), 24),
        ("m_ring_wq", sg("s_sw_pend").expr(), qb),
        ("m_ring_offset", offset.expr(), 32),
        ("m_ring_len", o.len.slice(lb - 1, 0), lb),
        ("m_ring_tx_seq", sg("s_pm_tx_seq").expr(), 32),
        ("m_pm_next_psn", o.next_psn.expr(), 24),
        ("m_pm_tx_seq", o.tx_seq.expr(), 32),
        ("m_pm_last_progress", o.last_progress.expr(), 32),
        ("m_sw_pend", o.pend.expr(), qb),
        ("m_sw_pend_sent", o.pend_sent.expr(), 32),
        ("m_ctx_rr_stream", rr_next, sb),
        ("m_ctx_pend_streams", o.pend_streams.expr(), cz.streams_bits),
        ("m_ctx_inflight", o.inflight.expr(), INFLIGHT_BITS),
        ("m_ctx_since_ackreq", o.since_ackreq.expr(), cz.since_bits),
        ("m_ctx_unreq_since", o.unreq_since.expr(), 32),
        ("m_ctx_tail_valid", o.tail_valid.expr(), 1),
        ("m_ctx_tail_at", o.tail_at.expr(), 32),
        ("m_wq_issued", sg("s_wq_issued").expr() + lit(32, 1), 32),
        ("m_evt_kind", lit(tel::KIND_BITS, u64::from(tel::kind::SEND)), tel::KIND_BITS),
        ("m_evt_now", sg("ts_now").expr(), tel::TS_BITS),
        ("m_frame_hdr", hdr.expr(), data::LAYOUT.len as u32 * 8),
        ("m_frame_addr", sg("s_wr_laddr").expr() + zext(&offset, ab), ab),
        ("m_frame_len", o.len.slice(lb - 1, 0), lb),
        ("m_frame_dst_mac", sg("s_ctx_dst_mac").expr(), 48),
        ("m_frame_dst_ip", sg("s_ctx_dst_ip").expr(), 32),
        ("m_frame_sport", sg("s_pm_sport").expr(), 16),
        ("m_frame_plane", sg("s_pm_plane").expr(), 3),
    ];
    for (nm, e, w) in outs {
        m.assign(sg(nm), gate(&valid, e, w));
    }
    m
}
