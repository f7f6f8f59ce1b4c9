//! The commit of `tx_engine`'s decided packet as a unit (`tx_commit`):
//! what the model's `TxEngine::commit` does with a `Plan::New` packet (new
//! data) and a `Plan::Retx` packet (a retransmission or an RNR resend)
//! ([`mrnic_model::tx_engine`]: `commit`, `fields`, `data_header`,
//! `push_frame`), in the cycle `tx_sched` hands the packet out
//! (`m_commit_*`). The cut is [`super::cut`], the header
//! [`super::data_header`], both shared with the model's functions.
//!
//! # Why one unit for both kinds
//! Both arms take the same handshake in the same cycle and end in the
//! same writes: a ring slot, the path mirror's `tx_seq`, one telemetry
//! event and one frame whose header the same builder places; they differ
//! in where the header's fields come from (the cut, or the ring slot as
//! read). A sibling unit would repeat the header, the event and the frame
//! record and leave the assembly to mux them.
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
//! - **The packet** (`s_commit_*`): `tx_sched`'s `m_commit_*`: a
//!   retransmission (`s_commit_retx`) of `(path, psn)`, or new data of
//!   `stream` with the paths one more packet fills; either with the path
//!   path_selector chose, `phys`. Its connection (`m_commit_conn`) is not
//!   a port: it addresses the stores the assembly reads and writes, the
//!   event's, the frame record's and the failure's `conn`, none of which
//!   needs logic.
//! - **The stores it reads** (levels, valid in the commit's cycle, as the
//!   model's commit finds them: before any of its writes): the
//!   connection's context (`s_ctx_*`: failed, the peer, the counts and
//!   timers the cut reads); for new data the stream's word (`s_sw_*`) and
//!   that request's slot's issued count (`s_wq_issued`); for a
//!   retransmission its ring slot of (conn, path, psn) (`s_ring_*`); the
//!   work request (`s_wr_*`, with its msn and rq_seq) at the stream's
//!   `pend` (new data) or at the slot's (stream, wq) (a retransmission);
//!   the mirror of the packet's path (`s_pm_*`: `phys` for new data, the
//!   retransmitted `path`, whose gen the header carries and whose
//!   `tx_seq` moves) and the route of `phys` (`s_phys_*`: the port and
//!   plane the frame leaves by; a rerouted retransmission keeps its
//!   path's header).
//! - **Its writes** (`m_*`, every output 0 without its valid):
//!   - with `m_valid` (the packet is committed: its connection has not
//!     failed, and a retransmission is within the retry limit): the ring
//!     slot of (`m_commit_conn`, `m_path`, `m_ring_psn`) (`m_ring_*`;
//!     `phys` is `s_commit_phys`, `sent` `ts_now` and `tx_ts` its low 16
//!     bits, which need no port; `rnr_resend`, `charge`, `queued`,
//!     `rnr_wait` are written 0; `rnr_count` and `rnr_tag` are written 0
//!     for new data and kept by a retransmission), the mirror's `tx_seq`
//!     (`m_pm_tx_seq`, of `m_path`), the telemetry event (`m_evt_*`, of
//!     `m_commit_conn` and `m_path`: SEND, RETX, or RESUME for an RNR
//!     resend) and the frame (`m_frame_*`, `tx_output`'s `s_frame_*`
//!     but `s_frame_valid`, `s_frame_probe` (the assembly drives them
//!     from `m_valid` and the PROBE's send), `s_frame_conn`
//!     (`m_commit_conn`), `s_frame_stream` and `s_frame_slot`
//!     (`m_ring_stream`, `m_ring_wq`));
//!   - with `m_cut_valid` (new data committed): the mirror's `next_psn`
//!     and `last_progress` (`m_pm_*`), the stream word's `pend` and
//!     `pend_sent` (`m_sw_*`), the context's `rr_stream`, `pend_streams`,
//!     `inflight_bytes`, `since_ackreq`, `unreq_since` and the tail timer
//!     (`m_ctx_*`), the slot's issued count (`m_wq_issued`);
//!   - with `m_pop_valid` (a retransmission of a live connection): the
//!     connection's retransmit queue pops its head (this packet);
//!   - with `m_fail_valid` (a charged retransmission whose slot has
//!     reached `RETRY_LIMIT`): nothing above but the pop; the connection
//!     fails with TRANSPORT_RETRY_EXCEEDED, its culprit the slot's
//!     request (`m_fail_*`: `tx_walk`'s `s_fail_*` but `s_fail_conn`,
//!     which is `m_commit_conn`).
//!
//! # Where the data header is built
//! Here: `tx_output`'s `s_frame_hdr` takes the transport header already
//! placed (a PROBE's in its top bytes), and every field of a data header
//! is known in the commit's cycle (the cut's or the slot's length, offset
//! and psn, ACKREQ, the request, the mirror's gen), so the commit places
//! it with [`super::data_header`] and the frame record carries it as the
//! model's `push_frame` does. A retransmission's header has RETX and
//! ACKREQ set.
//!
//! # Formal properties
//! Stated next to the logic (`properties`) and run by `scripts/formal`
//! as the unit `tx_commit` ([`crate::proof::blocks`], [`formal_tasks`]).
//! The unit has no clock, so its properties are immediate, over the
//! inputs and outputs of one instant (printed in an `always @*` block),
//! and `prove k=1` (boolector) is a complete proof: with no state the
//! base case already ranges over every input, and the induction step
//! adds nothing.
//! - what the stores promise, assumed: new data's bytes cut are at most
//!   its request's length (`asm_new_within_request`); a ring slot holds at
//!   most `RETRY_LIMIT` charged retransmissions
//!   (`asm_ring_count_within_limit`, which `a_retx_count_within_limit`
//!   keeps for every slot the unit writes);
//! - nothing is written (ring, mirror, stream word, context, issued count,
//!   event, frame, pop, failure) without `s_commit_valid` on a connection
//!   that has not failed, and every payload is 0 without its valid;
//! - new data of a live connection is always committed, the cut's writes
//!   only for new data, the pop exactly on a live retransmission;
//! - the retry limit: a charged retransmission at `RETRY_LIMIT` writes
//!   nothing but the pop and fails the connection with
//!   TRANSPORT_RETRY_EXCEEDED and the slot's request as culprit, and the
//!   connection fails for nothing else; below the limit it is committed;
//! - a retransmission's header has RETX and ACKREQ and carries its own
//!   path and psn and the slot's length and offset (SOM at offset 0); it
//!   rewrites its own slot; `retx_count` grows by exactly one when charged
//!   and never past the limit;
//! - the event is SEND for new data, RESUME for an RNR resend, RETX for
//!   other retransmissions;
//! - new data's cut (the model's `cut` rules): at most an MTU and the
//!   request's remaining bytes, a full MTU unless it ends the message (EOM
//!   exactly then); every byte cut once (the slot's offset is the bytes cut
//!   so far, which grow by the length or move pend on); the path's next psn
//!   (moving on by one), the issued count and the bytes in flight;
//! - the frame's address is the request's `laddr` plus the packet's
//!   offset, its route the peer's and path `phys`'s; the slot keeps the
//!   path's tx_seq and the path's moves on by one;
//! - covers: new data (a full MTU mid-message too), a charged RETX, a
//!   RESUME, a count reaching the limit, the limit's failure, a failed
//!   connection's packet dropped.

use mrnic_model::block::PortDef;
use mrnic_model::path_telemetry as tel;
use mrnic_model::tx_engine::{status, TxEngineParams, CONN_ID_BITS, RETRY_LIMIT};
use mrnic_proto::layouts::data;
use mrnic_proto::tables::ring;

use super::{cut, data_header, gate, stream_ptr_bits, BeatSizes, CutNets, CutSizes, INFLIGHT_BITS};
use crate::expr::{index_bits, lit, mux, zext, Expr, Signal};
use crate::ir::Module;

/// Module name.
pub const NAME: &str = "tx_commit";

const PKT: &str = "The decided packet (tx_sched m_commit_*)";
const CTX: &str = "The connection's context (levels, valid in the commit's cycle)";
const RING: &str = "A retransmission's ring slot of (conn, path, psn), as read (levels)";
const SW: &str = "New data: the stream's word and the slot's issued count (levels)";
const WR: &str = "The request at pend (new data) or at the ring slot's (stream, wq) (levels)";
const PM: &str = "The mirror of the packet's path: phys for new data, path for a retransmission (levels)";
const PHYS: &str = "The route of path phys (levels)";
const OUT: &str = "The commit's writes (valid with m_valid, m_cut_valid, m_pop_valid)";
const FAIL: &str = "The retry limit's failure (tx_walk s_fail_*)";
const FRM: &str = "The frame record (tx_output s_frame_*)";

/// Bits of a ring slot's retransmission count (`proto::tables::ring`).
pub const RETX_COUNT_BITS: u32 = ring::RETX_COUNT.width;

/// The unit's ports, in declaration order.
pub fn ports(p: &TxEngineParams) -> Vec<PortDef> {
    let (sb, n) = (p.stream_bits, p.paths);
    let pb = index_bits(n);
    let qb = stream_ptr_bits(p.wq_depth);
    let cz = CutSizes::of(p);
    let lb = BeatSizes::of(p).payload_len_bits();
    let rb = RETX_COUNT_BITS;
    let i = |nm: &str, w: u32, g: &'static str, c: &str| PortDef::input(nm, w, g, c);
    let o = |nm: &str, w: u32, g: &'static str, c: &str| PortDef::output(nm, w, g, c);
    let mut v = super::engine_ports(p, &["ts_now"]);
    v.extend([
        i("s_commit_valid", 1, PKT, "a packet to commit (m_commit_valid)"),
        i("s_commit_retx", 1, PKT, "a retransmission of (path, psn); else new data of stream"),
        i("s_commit_path", pb, PKT, "a retransmission's path"),
        i("s_commit_psn", 24, PKT, "a retransmission's psn"),
        i("s_commit_stream", sb, PKT, "new data's stream"),
        i("s_commit_phys", pb, PKT, "the path path_selector chose"),
        i("s_commit_full_after", n, PKT, "new data: paths one more packet fills"),
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
        i("s_ring_stream", sb, RING, "the stream of its request"),
        i("s_ring_wq", qb, RING, "its request's work queue slot"),
        i("s_ring_offset", 32, RING, "payload offset in the message"),
        i("s_ring_len", lb, RING, "payload bytes"),
        i("s_ring_retx_count", rb, RING, "charged retransmissions so far"),
        i("s_ring_rnr_resend", 1, RING, "an RNR resend (never charged)"),
        i("s_ring_charge", 1, RING, "the queued retransmission is charged"),
        i("s_ring_resent", 1, RING, "retransmitted for loss before"),
        i("s_sw_pend", qb, SW, "the stream's first request with bytes to cut"),
        i("s_sw_tail", qb, SW, "one past its last request"),
        i("s_sw_pend_sent", 32, SW, "bytes cut of the request at pend"),
        i("s_wq_issued", 32, SW, "packets cut of the slot at pend (free-running)"),
    ]);
    v.extend(super::engine_ports(p, &["s_wr_op", "s_wr_laddr", "s_wr_len", "s_wr_raddr", "s_wr_rkey", "s_wr_imm"]));
    v.extend([
        i("s_wr_msn", data::MSN.width, WR, "its message sequence number"),
        i("s_wr_rq_seq", data::RQ_SEQ.width, WR, "SEND: its posted receive sequence"),
        i("s_pm_next_psn", 24, PM, "the path's next psn"),
        i("s_pm_cum_acked", 24, PM, "its cumulative point"),
        i("s_pm_tx_seq", 32, PM, "its next tx_seq"),
        i("s_pm_last_progress", 32, PM, "its last progress"),
        i("s_pm_srtt", 20, PM, "its srtt"),
        i("s_pm_rttvar", 16, PM, "its rttvar"),
        i("s_pm_gen", data::PATH_GEN.width, PM, "its generation"),
        i("s_phys_sport", 16, PHYS, "its UDP source port"),
        i("s_phys_plane", 3, PHYS, "its plane"),
        o("m_valid", 1, OUT, "the packet is committed: ring slot, mirror's tx_seq, event, frame"),
        o("m_cut_valid", 1, OUT, "new data is committed: stream word, context, issued count, mirror"),
        o("m_pop_valid", 1, OUT, "the connection's retransmit queue pops its head"),
        o("m_path", pb, OUT, "the packet's path (phys; a retransmission's own): ring slot, mirror, event"),
        o("m_ring_psn", 24, OUT, "ring slot of (m_commit_conn, m_path, this psn): written"),
        o("m_ring_stream", sb, OUT, "the slot's stream (of its request)"),
        o("m_ring_wq", qb, OUT, "the slot's work queue slot"),
        o("m_ring_offset", 32, OUT, "payload offset in the message"),
        o("m_ring_len", lb, OUT, "payload bytes"),
        o("m_ring_tx_seq", 32, OUT, "the path's tx_seq it left with"),
        o("m_ring_retx_count", rb, OUT, "charged retransmissions"),
        o("m_ring_resent", 1, OUT, "retransmitted for loss"),
        o("m_pm_next_psn", 24, OUT, "the mirror's next psn (new data)"),
        o("m_pm_tx_seq", 32, OUT, "its next tx_seq"),
        o("m_pm_last_progress", 32, OUT, "its last progress (new data)"),
        o("m_sw_pend", qb, OUT, "the stream word's pend"),
        o("m_sw_pend_sent", 32, OUT, "its bytes cut of the request at pend"),
        o("m_ctx_rr_stream", sb, OUT, "the stream the next decision starts from"),
        o("m_ctx_pend_streams", cz.streams_bits, OUT, "streams with bytes to cut"),
        o("m_ctx_inflight", INFLIGHT_BITS, OUT, "bytes in flight"),
        o("m_ctx_since_ackreq", cz.since_bits, OUT, "packets since the last ACKREQ"),
        o("m_ctx_unreq_since", 32, OUT, "send time of the first of them"),
        o("m_ctx_tail_valid", 1, OUT, "the tail timer is armed"),
        o("m_ctx_tail_at", 32, OUT, "its deadline"),
        o("m_wq_issued", 32, OUT, "the slot's issued count, one more"),
        o("m_evt_kind", tel::KIND_BITS, OUT, "the telemetry event: SEND, RETX or RESUME"),
        o("m_evt_now", tel::TS_BITS, OUT, "its timestamp"),
        o("m_fail_valid", 1, FAIL, "the retry limit fails the connection (m_commit_conn)"),
        o("m_fail_culprit_valid", 1, FAIL, "a request caused it (always, with m_fail_valid)"),
        o("m_fail_culprit_stream", sb, FAIL, "the culprit's stream"),
        o("m_fail_culprit_slot", qb, FAIL, "the culprit's work queue pointer"),
        o("m_fail_status", 4, FAIL, "TRANSPORT_RETRY_EXCEEDED"),
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

/// The `tx_commit` module for `p`.
pub fn build(p: &TxEngineParams) -> Module {
    let (sb, streams) = (p.stream_bits, p.streams);
    let cz = CutSizes::of(p);
    let lb = BeatSizes::of(p).payload_len_bits();
    let qb = cz.ptr_bits;
    let pb = index_bits(p.paths);
    let rb = RETX_COUNT_BITS;
    assert!(u64::from(RETRY_LIMIT) <= ring::RETX_COUNT.max(), "RETRY_LIMIT does not fit the ring's retx_count");

    let mut m = Module::new(NAME);
    m.describe("tx_engine commit of a decided packet: new data's cut or a retransmission's ring slot; ring slot, mirror, stream word, context, event, frame, retry limit");
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

    // A failed connection's packet is dropped (its walk flushes the
    // request); a live one's retransmission pops the queue's head, and
    // fails the connection instead when charged at the retry limit.
    let retx = sg("s_commit_retx");
    let live = m.wire_from(
        "live",
        1,
        "a packet of a connection that has not failed",
        sg("s_commit_valid").expr().logic_and(sg("s_ctx_failed").expr().logic_not()),
    );
    let pop = m.wire_from("pop", 1, "a live connection's retransmission", live.expr().logic_and(retx.expr()));
    let rnr = sg("s_ring_rnr_resend");
    let charged = m.wire_from(
        "charged",
        1,
        "the retransmission counts toward the retry limit (an RNR resend never does)",
        rnr.expr().logic_not().logic_and(sg("s_ring_charge")),
    );
    let fail = m.wire_from(
        "fail",
        1,
        "charged at the retry limit: the connection fails",
        pop.expr().logic_and(&charged).logic_and(sg("s_ring_retx_count").expr().ge(lit(rb, u64::from(RETRY_LIMIT)))),
    );
    let valid = m.wire_from(
        "valid",
        1,
        "committed: a live connection's new data, or its retransmission within the limit",
        live.expr().logic_and(fail.expr().logic_not()),
    );
    let cut_v = m.wire_from("cut_valid", 1, "new data committed", valid.expr().logic_and(retx.expr().logic_not()));
    m.assign(sg("m_valid"), &valid);
    m.assign(sg("m_cut_valid"), &cut_v);
    m.assign(sg("m_pop_valid"), &pop);

    // What the header and the ring slot take from the cut (new data) or
    // from the slot as read (a retransmission, which keeps its path, psn,
    // request, offset and length).
    let pick = |m: &mut Module, nm: &str, w: u32, what: &str, r: Expr, n: Expr| -> Signal {
        m.wire_from(nm, w, what, mux(&retx, r, n))
    };
    let path = pick(&mut m, "path", pb, "the packet's path", sg("s_commit_path").expr(), sg("s_commit_phys").expr());
    let psn = pick(&mut m, "psn", 24, "its psn", sg("s_commit_psn").expr(), sg("s_pm_next_psn").expr());
    let stream =
        pick(&mut m, "stream", sb, "its request's stream", sg("s_ring_stream").expr(), sg("s_commit_stream").expr());
    let wq = pick(&mut m, "wq", qb, "its request's work queue slot", sg("s_ring_wq").expr(), sg("s_sw_pend").expr());
    let offset = pick(
        &mut m,
        "offset",
        32,
        "payload offset in the message",
        sg("s_ring_offset").expr(),
        sg("s_sw_pend_sent").expr(),
    );
    let len = pick(&mut m, "len", lb, "payload bytes", sg("s_ring_len").expr(), o.len.slice(lb - 1, 0));
    let ackreq = pick(&mut m, "ackreq", 1, "ACKREQ: always on a retransmission", lit(1, 1), o.ackreq.expr());

    // The header's fields, as the model's `fields` fills them: a SEND
    // carries its rq_seq and message offset, a WRITE its rkey and the
    // remote address of the packet's first byte.
    let op = sg("s_wr_op");
    let has_imm = op.bit(0);
    let raddr = m.wire_from(
        "raddr",
        data::ADDR.width,
        "remote address of the packet's first byte",
        sg("s_wr_raddr").expr() + zext(&offset, data::ADDR.width),
    );
    let som = m.wire_from("som", 1, "the packet starts the message", offset.expr().eq(lit(32, 0)));
    let msg_end =
        m.wire_from("msg_end", 32, "one past the packet's last byte in the message", offset.expr() + zext(&len, 32));
    let eom = m.wire_from("eom", 1, "the packet ends the message", msg_end.expr().eq(sg("s_wr_len")));
    let value = |f: &str| -> Expr {
        match f {
            "opcode" => op.expr(),
            "som" => som.expr(),
            "eom" => eom.expr(),
            "retx" => retx.expr(),
            "ackreq" => ackreq.expr(),
            "payload_len" => len.expr(),
            "dst_conn" => sg("s_ctx_remote_id").expr(),
            "path_id" => path.expr(),
            "path_psn" => psn.expr(),
            "path_gen" => sg("s_pm_gen").expr(),
            "stream_id" => stream.expr(),
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

    // The slot written back by a retransmission: one more charged count,
    // `resent` once resent for loss; new data's slot starts at 0.
    let count = sg("s_ring_retx_count");
    let retx_count = m.wire_from(
        "retx_count",
        rb,
        "the slot's retransmission count after the commit",
        mux(&retx, mux(&charged, count.expr() + lit(rb, 1), count.expr()), lit(rb, 0)),
    );
    let resent = m.wire_from(
        "resent",
        1,
        "the slot has been retransmitted for loss",
        retx.expr().logic_and(sg("s_ring_resent").expr().logic_or(rnr.expr().logic_not())),
    );
    let kind = |k: u8| lit(tel::KIND_BITS, u64::from(k));
    let evt = mux(&retx, mux(&rnr, kind(tel::kind::RESUME), kind(tel::kind::RETX)), kind(tel::kind::SEND));
    let tx_seq_next = mux(&retx, sg("s_pm_tx_seq").expr() + lit(32, 1), o.tx_seq.expr());

    let last = lit(sb, u64::from(streams - 1));
    let rr_next = mux(sg("s_commit_stream").expr().eq(last), lit(sb, 0), sg("s_commit_stream").expr() + lit(sb, 1));
    let ab = p.axi_addr_bits;
    let on_valid: Vec<(&str, Expr, u32)> = vec![
        ("m_path", path.expr(), pb),
        ("m_ring_psn", psn.expr(), 24),
        ("m_ring_stream", stream.expr(), sb),
        ("m_ring_wq", wq.expr(), qb),
        ("m_ring_offset", offset.expr(), 32),
        ("m_ring_len", len.expr(), lb),
        ("m_ring_tx_seq", sg("s_pm_tx_seq").expr(), 32),
        ("m_ring_retx_count", retx_count.expr(), rb),
        ("m_ring_resent", resent.expr(), 1),
        ("m_pm_tx_seq", tx_seq_next, 32),
        ("m_evt_kind", evt, tel::KIND_BITS),
        ("m_evt_now", sg("ts_now").expr(), tel::TS_BITS),
        ("m_frame_hdr", hdr.expr(), data::LAYOUT.len as u32 * 8),
        ("m_frame_addr", sg("s_wr_laddr").expr() + zext(&offset, ab), ab),
        ("m_frame_len", len.expr(), lb),
        ("m_frame_dst_mac", sg("s_ctx_dst_mac").expr(), 48),
        ("m_frame_dst_ip", sg("s_ctx_dst_ip").expr(), 32),
        ("m_frame_sport", sg("s_phys_sport").expr(), 16),
        ("m_frame_plane", sg("s_phys_plane").expr(), 3),
    ];
    let on_cut: Vec<(&str, Expr, u32)> = vec![
        ("m_pm_next_psn", o.next_psn.expr(), 24),
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
    ];
    let on_fail: Vec<(&str, Expr, u32)> = vec![
        ("m_fail_valid", lit(1, 1), 1),
        ("m_fail_culprit_valid", lit(1, 1), 1),
        ("m_fail_culprit_stream", sg("s_ring_stream").expr(), sb),
        ("m_fail_culprit_slot", sg("s_ring_wq").expr(), qb),
        ("m_fail_status", lit(4, u64::from(status::TRANSPORT_RETRY_EXCEEDED)), 4),
    ];
    let mut quiet: Vec<(&str, Vec<&str>)> = Vec::new();
    for (cond, outs, valid_port) in
        [(&valid, on_valid, "m_valid"), (&cut_v, on_cut, "m_cut_valid"), (&fail, on_fail, "m_fail_valid")]
    {
        for (nm, e, w) in &outs {
            m.assign(sg(nm), gate(cond, e.clone(), *w));
        }
        let payload = outs.iter().map(|(nm, _, _)| *nm).filter(|nm| *nm != valid_port).collect();
        quiet.push((valid_port, payload));
    }
    properties(&mut m, p, &quiet);
    m
}

/// The `tx_commit` module for `cfg`'s engine parameters, for the proofs
/// ([`crate::proof::blocks`]).
pub fn generate(cfg: &mrnic_proto::Config) -> Result<Module, String> {
    let p = TxEngineParams::from_config(cfg).map_err(|e| e.to_string())?;
    Ok(build(&p))
}

/// The unit's proof tasks, with boolector ([`crate::proof::boolector_tasks`]):
/// every assertion by 1-induction (`prove`) and the covers to depth 1. The
/// unit has no state, so the base case (every input at once, step 0) is
/// already every case and the induction step adds nothing: `prove k=1` is
/// a complete proof, reported as one.
pub fn formal_tasks(_asserts: &[String]) -> Vec<crate::proof::Task> {
    crate::proof::boolector_tasks(1, 1)
}

/// A field of the data header `hdr` (big-endian, [`data::LAYOUT`]).
fn field(hdr: &Signal, f: &mrnic_proto::field::Field) -> Expr {
    let (hi, lo) = f.vector_range(data::LAYOUT.len);
    hdr.slice(hi as u32, lo as u32)
}

/// Each output port of `pairs` equals its input port.
fn same(m: &Module, pairs: &[(&str, &str)]) -> Expr {
    use crate::formal::port;
    pairs.iter().map(|(o, i)| port(m, o).expr().eq(port(m, i))).reduce(|a, b| a.logic_and(b)).unwrap_or(lit(1, 1))
}

/// The unit's formal properties (see the module's `# Formal properties`):
/// immediate, over the inputs and outputs of one instant. `quiet` lists
/// each write's valid with its payload ports.
fn properties(m: &mut Module, p: &TxEngineParams, quiet: &[(&str, Vec<&str>)]) {
    use crate::formal::{implies, port};
    let sg = |m: &Module, nm: &str| port(m, nm);
    let cz = CutSizes::of(p);
    let rb = RETX_COUNT_BITS;
    let ab = p.axi_addr_bits;
    let limit = u64::from(RETRY_LIMIT);
    let (go, retx, failed) = (sg(m, "s_commit_valid"), sg(m, "s_commit_retx"), sg(m, "s_ctx_failed"));
    let (v, cv, pv, fv) = (sg(m, "m_valid"), sg(m, "m_cut_valid"), sg(m, "m_pop_valid"), sg(m, "m_fail_valid"));
    let live = go.expr().logic_and(failed.expr().logic_not());
    let new = live.clone().logic_and(retx.expr().logic_not());
    let re = live.clone().logic_and(&retx);
    let count = sg(m, "s_ring_retx_count");
    let charged = sg(m, "s_ring_rnr_resend").expr().logic_not().logic_and(sg(m, "s_ring_charge"));
    let at_limit = re.clone().logic_and(charged.clone()).logic_and(count.expr().ge(lit(rb, limit)));
    let any = v.expr().logic_or(&cv).logic_or(&pv).logic_or(&fv);

    // ------------------------------------------------ what the stores promise
    m.assume(
        "asm_new_within_request",
        "new data: the bytes already cut of the request at pend are at most its length (the walk moves pend on \
         once they reach it)",
        implies(go.expr().logic_and(retx.expr().logic_not()), sg(m, "s_sw_pend_sent").expr().le(sg(m, "s_wr_len"))),
    );
    m.assume(
        "asm_ring_count_within_limit",
        &format!(
            "a ring slot never holds more than RETRY_LIMIT = {limit} charged retransmissions (this unit writes \
                  every count, a_retx_count_within_limit)"
        ),
        implies(go.expr().logic_and(&retx), count.expr().le(lit(rb, limit))),
    );

    // ------------------------------------------------ nothing without a live commit
    m.assert(
        "a_no_write_without_commit",
        "nothing is written (ring, mirror, stream word, context, issued count, event, frame, pop, failure) without \
         s_commit_valid on a connection that has not failed",
        implies(any.clone(), live.clone()),
    );
    for (valid, payload) in quiet {
        crate::formal::quiet_without(m, valid, payload);
    }
    m.assert(
        "a_new_commits",
        "new data of a live connection is committed: ring, mirror, stream word, context, event, frame; no pop, no \
         failure",
        implies(new.clone(), v.expr().logic_and(&cv).logic_and(pv.expr().logic_not()).logic_and(fv.expr().logic_not())),
    );
    m.assert(
        "a_cut_only_new",
        "the cut's writes (stream word, context, issued count, next_psn) only for new data",
        implies(&cv, v.expr().logic_and(retx.expr().logic_not())),
    );
    m.assert(
        "a_pop_retx",
        "the retransmit queue pops exactly on a live connection's retransmission",
        pv.expr().eq(re.clone()),
    );

    // ------------------------------------------------ the retry limit
    m.assert(
        "a_limit_writes_only_pop",
        &format!(
            "a charged retransmission at the retry limit ({limit}) writes nothing but the pop and fails the \
                  connection"
        ),
        implies(
            at_limit.clone(),
            fv.expr().logic_and(&pv).logic_and(v.expr().logic_not()).logic_and(cv.expr().logic_not()),
        ),
    );
    m.assert(
        "a_fail_only_at_limit",
        "the connection fails only for a charged retransmission at the retry limit",
        implies(&fv, at_limit.clone()),
    );
    m.assert(
        "a_fail_record",
        "the failure is TRANSPORT_RETRY_EXCEEDED, its culprit the slot's request",
        implies(
            &fv,
            sg(m, "m_fail_status")
                .expr()
                .eq(lit(4, u64::from(status::TRANSPORT_RETRY_EXCEEDED)))
                .logic_and(sg(m, "m_fail_culprit_valid"))
                .logic_and(sg(m, "m_fail_culprit_stream").expr().eq(sg(m, "s_ring_stream")))
                .logic_and(sg(m, "m_fail_culprit_slot").expr().eq(sg(m, "s_ring_wq"))),
        ),
    );
    m.assert(
        "a_retx_commits_below_limit",
        "a live connection's retransmission not failed by the limit is committed (ring, mirror, event, frame)",
        implies(re.clone().logic_and(at_limit.logic_not()), v.expr().logic_and(cv.expr().logic_not())),
    );

    // ------------------------------------------------ a retransmission's slot and header
    let hdr = sg(m, "m_frame_hdr");
    let written = v.expr().logic_and(&retx);
    let offset = sg(m, "s_ring_offset");
    // SEND is 2, SEND_IMM 3: bit 1 of the opcode.
    let is_send = hdr.bit(data::OPCODE.vector_range(data::LAYOUT.len).1 as u32 + 1);
    let off_in_hdr = mux(
        is_send.clone(),
        field(&hdr, &data::MSG_OFFSET).eq(&offset),
        field(&hdr, &data::ADDR).eq(sg(m, "s_wr_raddr").expr() + zext(&offset, data::ADDR.width)),
    );
    m.assert(
        "a_retx_header",
        "a retransmission's header has RETX and ACKREQ set and carries its own path and psn, the slot's length and \
         offset (msg_offset of a SEND, the remote address of a WRITE), and SOM exactly at offset 0",
        implies(
            written.clone(),
            field(&hdr, &data::RETX)
                .eq(lit(1, 1))
                .logic_and(field(&hdr, &data::ACKREQ).eq(lit(1, 1)))
                .logic_and(field(&hdr, &data::PATH_ID).eq(zext(sg(m, "s_commit_path"), data::PATH_ID.width)))
                .logic_and(field(&hdr, &data::PATH_PSN).eq(sg(m, "s_commit_psn")))
                .logic_and(field(&hdr, &data::PAYLOAD_LEN).eq(zext(sg(m, "s_ring_len"), data::PAYLOAD_LEN.width)))
                .logic_and(off_in_hdr)
                .logic_and(field(&hdr, &data::SOM).eq(offset.expr().eq(lit(32, 0)))),
        ),
    );
    m.assert(
        "a_retx_slot",
        "a retransmission rewrites its own slot (path, psn, request, offset, length) and the frame carries its length",
        implies(
            written.clone(),
            same(
                m,
                &[
                    ("m_path", "s_commit_path"),
                    ("m_ring_psn", "s_commit_psn"),
                    ("m_ring_stream", "s_ring_stream"),
                    ("m_ring_wq", "s_ring_wq"),
                    ("m_ring_offset", "s_ring_offset"),
                    ("m_ring_len", "s_ring_len"),
                    ("m_frame_len", "s_ring_len"),
                ],
            ),
        ),
    );
    let out_count = sg(m, "m_ring_retx_count");
    m.assert(
        "a_retx_count_by_one",
        "retx_count grows by exactly one when the retransmission is charged and stays otherwise",
        implies(
            written.clone(),
            mux(charged.clone(), out_count.expr().eq(count.expr() + lit(rb, 1)), out_count.expr().eq(&count)),
        ),
    );
    m.assert(
        "a_retx_count_within_limit",
        &format!("a slot is never written with more than RETRY_LIMIT = {limit} charged retransmissions"),
        out_count.expr().le(lit(rb, limit)),
    );

    // ------------------------------------------------ the event
    let kind = |k: u8| lit(tel::KIND_BITS, u64::from(k));
    let evt = sg(m, "m_evt_kind");
    m.assert(
        "a_event_kind",
        "the event is SEND for new data, RESUME for an RNR resend, RETX for any other retransmission, at ts_now",
        implies(
            &v,
            evt.expr()
                .eq(mux(
                    &retx,
                    mux(sg(m, "s_ring_rnr_resend"), kind(tel::kind::RESUME), kind(tel::kind::RETX)),
                    kind(tel::kind::SEND),
                ))
                .logic_and(sg(m, "m_evt_now").expr().eq(zext(sg(m, "ts_now"), tel::TS_BITS))),
        ),
    );

    // ------------------------------------------------ new data's cut
    let (mtu, wr_len, sent) = (u64::from(cz.mtu), sg(m, "s_wr_len"), sg(m, "s_sw_pend_sent"));
    let len = sg(m, "m_frame_len");
    let end = zext(&sent, 33) + zext(&len, 33);
    let ends = end.clone().eq(zext(&wr_len, 33));
    m.assert(
        "a_cut_len",
        &format!(
            "new data: the packet is at most an MTU ({mtu}) and the request's remaining bytes, and a full MTU unless it \
             ends the message (EOM exactly then)"
        ),
        implies(
            &cv,
            zext(&len, 33)
                .le(lit(33, mtu))
                .logic_and(end.clone().le(zext(&wr_len, 33)))
                .logic_and(ends.clone().logic_or(zext(&len, 33).eq(lit(33, mtu))))
                .logic_and(field(&hdr, &data::EOM).eq(ends.clone()))
                .logic_and(field(&hdr, &data::RETX).eq(lit(1, 0)))
                .logic_and(field(&hdr, &data::PAYLOAD_LEN).eq(zext(&len, data::PAYLOAD_LEN.width))),
        ),
    );
    let pend = sg(m, "s_sw_pend");
    let qb = cz.ptr_bits;
    m.assert(
        "a_cut_bytes",
        "new data: every byte of the request is cut once: the slot's offset is the bytes cut so far; after the \
         packet either the request is done (pend moves on, nothing cut of the next) or its bytes cut grow by the length",
        implies(
            &cv,
            sg(m, "m_ring_offset").expr().eq(&sent).logic_and(sg(m, "m_ring_wq").expr().eq(&pend)).logic_and(mux(
                ends,
                sg(m, "m_sw_pend").expr().eq(pend.expr() + lit(qb, 1)).logic_and(sg(m, "m_sw_pend_sent").expr().eq(lit(32, 0))),
                sg(m, "m_sw_pend")
                    .expr()
                    .eq(&pend)
                    .logic_and(zext(sg(m, "m_sw_pend_sent"), 33).eq(end)),
            )),
        ),
    );
    m.assert(
        "a_cut_psn",
        "new data takes the path phys and its next psn, which moves on by one (mod 2^24); the slot's issued count \
         grows by one and the bytes in flight by the length",
        implies(
            &cv,
            sg(m, "m_path")
                .expr()
                .eq(sg(m, "s_commit_phys"))
                .logic_and(sg(m, "m_ring_psn").expr().eq(sg(m, "s_pm_next_psn")))
                .logic_and(field(&hdr, &data::PATH_PSN).eq(sg(m, "s_pm_next_psn")))
                .logic_and(sg(m, "m_pm_next_psn").expr().eq(sg(m, "s_pm_next_psn").expr() + lit(24, 1)))
                .logic_and(sg(m, "m_wq_issued").expr().eq(sg(m, "s_wq_issued").expr() + lit(32, 1)))
                .logic_and(
                    sg(m, "m_ctx_inflight").expr().eq(sg(m, "s_ctx_inflight").expr() + zext(&len, INFLIGHT_BITS)),
                ),
        ),
    );

    // ------------------------------------------------ the frame and the path's tx_seq
    m.assert(
        "a_frame_addr",
        "the frame's payload address is the request's laddr plus the packet's offset",
        implies(&v, sg(m, "m_frame_addr").expr().eq(sg(m, "s_wr_laddr").expr() + zext(sg(m, "m_ring_offset"), ab))),
    );
    m.assert(
        "a_frame_route",
        "the frame goes to the peer by path phys's port and plane",
        implies(
            &v,
            same(
                m,
                &[
                    ("m_frame_dst_mac", "s_ctx_dst_mac"),
                    ("m_frame_dst_ip", "s_ctx_dst_ip"),
                    ("m_frame_sport", "s_phys_sport"),
                    ("m_frame_plane", "s_phys_plane"),
                ],
            )
            .logic_and(field(&hdr, &data::DST_CONN).eq(sg(m, "s_ctx_remote_id"))),
        ),
    );
    m.assert(
        "a_tx_seq",
        "the slot keeps the path's tx_seq it leaves with, and the path's tx_seq moves on by one",
        implies(
            &v,
            sg(m, "m_ring_tx_seq")
                .expr()
                .eq(sg(m, "s_pm_tx_seq"))
                .logic_and(sg(m, "m_pm_tx_seq").expr().eq(sg(m, "s_pm_tx_seq").expr() + lit(32, 1))),
        ),
    );

    // ------------------------------------------------ covers
    m.cover("c_new", "new data is committed", cv.expr());
    m.cover(
        "c_new_mtu_mid_message",
        "new data cuts a full MTU from the middle of a message",
        cv.expr()
            .logic_and(field(&hdr, &data::EOM).eq(lit(1, 0)))
            .logic_and(sg(m, "m_sw_pend_sent").expr().ne(lit(32, 0))),
    );
    m.cover(
        "c_retx",
        "a charged retransmission is committed (RETX)",
        v.expr().logic_and(&retx).logic_and(charged.clone()).logic_and(evt.expr().eq(kind(tel::kind::RETX))),
    );
    m.cover(
        "c_resume",
        "an RNR resend is committed (RESUME)",
        v.expr().logic_and(evt.expr().eq(kind(tel::kind::RESUME))),
    );
    m.cover(
        "c_retx_to_limit",
        "a retransmission is committed with its count reaching the limit",
        v.expr().logic_and(out_count.expr().eq(lit(rb, limit))),
    );
    m.cover("c_limit_fail", "a retransmission at the retry limit fails the connection", fv.expr());
    m.cover("c_failed_dropped", "a failed connection's packet is dropped", go.expr().logic_and(&failed));
}
