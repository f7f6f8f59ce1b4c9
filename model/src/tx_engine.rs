//! `tx_engine`: the transmit side of the NIC. Work requests in, Ethernet /
//! IPv4 / UDP / transport frames out on `m_axis_*`, payload fetched from
//! host memory over an AXI4 read master, a retransmit ring per path, and
//! the sender's handling of incoming SACKs and NACKs.
//!
//! # Function
//! This is the reference's `TxConn` (`reference/src/sender.rs`) as a clocked
//! block around the two tables it does not own: the per-path telemetry
//! (`path_telemetry`: state, inflight, cwnd, weight, RTT, timers) and the
//! SWRR credits (`path_selector`). It owns, per connection, the context
//! (peer id, MAC, IP, path count, failure, connection-level AIMD and cap),
//! per path a mirror of the fields it writes itself (`sport`, `gen`,
//! `plane`, `next_psn`, `cum_acked`, `tx_seq`, `acked_seq`, probe state),
//! per (connection, stream) a ring of `tx_wq_depth` work requests in msn
//! order, and per path a retransmit ring of `tx_ring_depth` slots indexed
//! by `psn mod tx_ring_depth`.
//!
//! - **Connection setup** (`s_open_*`, one record per path): writes the
//!   context and the path mirror and sends an OPEN event to path_telemetry.
//!   Path 0 also resets the connection's streams and congestion state.
//! - **Work requests** (`s_wr_*`): WRITE, WRITE_IMM, SEND, SEND_IMM
//!   ([`op`]). Each gets the stream's next msn, and, if it consumes a
//!   receive (SEND, SEND_IMM, WRITE_IMM), its next rq_seq.
//! - **Scheduling**, one decision at a time, connections in round robin,
//!   and within a connection the reference's order: PROBEs, then queued
//!   retransmissions, then new data (streams in round robin, a message only
//!   within `msg_table_depth` of the peer's completed_msn). A data decision
//!   reads the connection's telemetry (`m_trd` -> `s_trd`), forms the
//!   eligibility bits and weights, asks the selector (`m_psel` ->
//!   `s_psel`), then commits: ring slot, mirror, SEND/RETX event to
//!   path_telemetry (`m_evt_*`). A connection whose decision found nothing
//!   to send (no path for its queued retransmission, and no stream may send
//!   or no path may take new data) is `stalled`: it leaves the ready set,
//!   PROBEs apart, until a SACK, a NACK, an update or timeout of one of its
//!   paths, a new request or a packet queued for retransmission comes for
//!   it, or a plane mark is cleared or expires (all connections), or, for
//!   one that found a path only by full NIC ports, a port drains, or,
//!   after a window probe was refused for its full FIFO, that FIFO pops
//!   (all connections).
//! - **Eligibility** (the reference's `selector::eligible`): new data needs
//!   GOOD, `inflight << mtu_shift < cwnd`, `next_psn - cum_acked <
//!   tx_ring_depth` (the ring has a free slot: `tx_ring_depth <= window`, so
//!   this is also the SACK window) and the connection below its cap; a
//!   retransmission goes on its own path if GOOD, else on any other GOOD
//!   path, windows ignored. A path that only the ring holds back is counted
//!   on `stat_ring_full`.
//! - **Port readiness** (spec 5.3, the reference's `Ctx::ports`): data
//!   leaves only by a NIC port whose `port_ready` bit (a level per plane,
//!   the MAC's egress queue has room) is high, ANDed into the eligibility
//!   as plane health is. A retransmission whose own port is full, or
//!   rerouted while every other GOOD path's port is full, waits at the head
//!   of its queue with nothing of the connection overtaking it (its own path
//!   is the fallback only when no other GOOD path exists at all); PROBEs and
//!   answers leave regardless. A frame decided while its port had room
//!   leaves even if the port filled meanwhile (up to [`FRAME_QUEUE`] frames
//!   wait behind their decisions), so the MAC's queue needs that much room
//!   above the level at which it drops its ready bit. With every bit high
//!   nothing changes.
//! - **Frames**: header fields are placed with proto's field table
//!   (`mrnic_proto::layouts`), the IPv4 and UDP checksums and the ICRC are
//!   computed, and the frame leaves on `m_axis_*` with `tuser` = the plane.
//!   Answers from the receive side (`s_csack_*` from sack_gen's `m_sack_*`,
//!   `s_cnack_*` from its `m_nack_*`) are framed by the same builder and
//!   win the arbitration at every frame boundary once their addresses are
//!   in hand. No frame reads a table at the boundary: a data or PROBE frame
//!   carries the peer's MAC and IPv4 from the context its decision read,
//!   and an answer reads them from the connection's addresses (a table of
//!   its own, one read port) as it enters the 2-entry answer queue, and may
//!   start `L` cycles later; a `direct` NACK (a NO_CONN answer to a packet
//!   for no connection) names them (`s_cnack_dst_ip`, `s_cnack_dst_mac`)
//!   and may start at once. So a frame queued before its connection is
//!   reopened leaves with the addresses it was queued with.
//! - **Acknowledgements** (`s_sack_*`, `s_nack_*`): the reference's
//!   `on_sack` / `on_nack`: ring slots acknowledged by cum_psn and the
//!   bitmap are freed, an ACK_STEER event (pkts, bytes, RTT sample, acked_seq)
//!   goes to path_telemetry, a PROBE reply is recognised, unacked packets
//!   sent before an acknowledged one are queued for retransmission (RACK on
//!   tx_seq), and work requests complete in msn order per stream on
//!   `m_cqe_*`, each exactly once.
//! - **Ack clocking** (the reference's `NicConfig::ack_clocking` rules, its
//!   default; `reference/DESIGN.md`, spec 5.3), all of them:
//!   ACKREQ at the end of a message, when the packet fills its path's or
//!   the connection's window, when nothing is left to cut, every
//!   `sack_every_packets` packets of the connection and once the oldest
//!   packet since the last request has waited min(`rto_min / 4`, srtt / 4); the connection limit
//!   `min(cwnd, rate_hint x line x max(srtt, 5/4 min_rtt))` and its AIMD
//!   step of one MTU per path; RACK across paths (a packet older than the
//!   newest acknowledged first transmission and unacknowledged for
//!   `max(srtt, rack_rtt) + max(srtt/2, 4 rttvar)` is lost) and the tail
//!   timer that PROBEs every path with an overdue packet; retry
//!   accounting (a loss is charged to the packet only when the path its
//!   copy left by delivered after it left, otherwise it is one timeout of
//!   that path: a SILENT event to path_telemetry; re-queueing after a
//!   path timeout is never charged); retransmissions leave their own path
//!   once it has timed out or its plane is marked; per-NIC plane health
//!   (a path turning SUSPECT or DEAD marks its plane for
//!   `dead_probe_interval`, an answered PROBE clears it, new data and
//!   rerouted retransmissions avoid marked planes unless no GOOD path is
//!   left); and the RTO held while a PROBE waits (path_telemetry restarts
//!   the timer with every timeout that asks for a PROBE).
//! - **Telemetry feedback**: `s_upd_*` sets a pending credit-clear bit per
//!   path (raised in the connection's next `m_psel_clr`) and acts on `act`;
//!   `s_rto_*` (a timeout) takes the new `sport`/`gen` into the mirror and
//!   acts on `act` (PROBE: queue a PROBE; ALL_LOST: queue every unacked
//!   packet of the path). Both write the path's state into the mirror and
//!   its DEAD bit into the context; when that leaves every path below
//!   `npaths` of a live connection DEAD, the connection fails with
//!   TRANSPORT_RETRY_EXCEEDED (the reference's `on_timer`), every request
//!   completing with that status, and the handler queues nothing.
//!
//! # Units and their order
//! One scheduler makes one decision at a time; one acknowledgement unit
//! applies one SACK, NACK, update or timeout at a time (and the RNR and
//! window-probe timers, both FIFOs in deadline order since their delays
//! are constants). The two never run together: both read and write the
//! rings, the mirror and the work queues, and serialising them keeps every
//! decision on the state the reference would see. A decision starts only
//! when the acknowledgement unit is idle with nothing waiting, the event
//! FIFO is empty and `L` cycles have passed since the last `m_evt`
//! handshake, so path_telemetry has executed every event sent and its
//! `m_upd` / `m_rto` answers have been taken (its read port has no
//! forwarding). Timeouts (`s_rto`) and updates (`s_upd`) go before SACKs,
//! SACKs before NACKs.
//!
//! # Actions from path_telemetry
//! A timeout shows up on both `m_rto` and `m_upd` with the same `act`; the
//! engine acts on the `m_rto` record. From `m_upd` it takes the credit
//! clear, the state (for the window probe's choice of path) and the PROBE
//! of a probe reply (state SUSPECT, PROBE without ALL_LOST: a timeout that
//! leaves a path SUSPECT always carries ALL_LOST).
//!
//! # Timing (`L` = `hardware.table_read_latency`)
//! An idle engine, the memory answering every AR at once: the first beat of
//! a packet leaves `3L + 7 + payload beats` cycles after its work
//! request's `s_wr` handshake (138 in `small`, 77 in `default` for a full
//! MTU): post `L + 1` (its reads of the stream's queue and the connection's
//! context, then the write; posts overlap, one per cycle), start 1,
//! telemetry read `L + 1` and path decision `L + 1`
//! with one cycle each to issue them, commit and AR 1, then the payload is
//! read and the frame leaves store-and-forward (the UDP checksum at the
//! front covers the payload). Opening a path first clears its
//! `tx_ring_depth` ring slots, one per cycle. On an idle output an answer's
//! first beat leaves `L + 1` cycles after its `s_csack` / `s_cnack`
//! handshake (its addresses read on the way into the queue), a `direct`
//! NACK's 1 cycle after.
//!
//! # Throughput
//! The output carries one beat per cycle while `m_axis_tready` is high,
//! frames back to back with no idle cycle (tested), so a full-size packet
//! takes `ceil((42 + 40 + MTU + 4) / (DW / 8))` beats: 139 in `small`, 66 in
//! `default`. Decisions overlap the output: the frame queue holds
//! [`FRAME_QUEUE`] frames besides the one leaving, and the next payload is
//! read while the current frame leaves. One decision takes `3L + 6` cycles
//! from start to the next possible start (9 / 12), so frames shorter than
//! that many beats are decision-bound; a decision that finds stale heads
//! on the connection's retransmit queue (acknowledged or moved to an RNR
//! back-off since they were queued) pops one every `L` cycles (the next
//! head's ring slot is read as the head pops), `L` more cycles each. Each step of the acknowledgement unit reads the connection
//! context, the path mirror and the ring slot it needs from block RAM when
//! it starts, and works `L` cycles later; it holds the unit, after the
//! cycle it starts in, for: a SACK `L + 2 + 2 * span` (`span` = psns
//! outstanding on the path: one pass acknowledges, one marks losses
//! against the new acked_seq), then its three later stages, `L + 1` each
//! plus a cycle per ring slot read: RACK across paths (on each path with
//! packets outstanding, from its oldest until the first first
//! transmission that is not overdue: usually one slot), the tail timer
//! (the same walk, when nothing is left to cut) and completed_msn; a
//! stage after which SILENT events were sent waits until path_telemetry
//! has answered them (`L + 2` cycles after the last handshake) and their
//! `m_rto` records have been applied. A NACK takes `L + 2`, an update `L + 1`, a
//! timeout `L + 1` (`+ tx_ring_depth` with ALL_LOST, whether or not its
//! connection is live: the count comes from the record), an RNR or window
//! probe timer entry `L + 1` when its deadline is reached, live or stale
//! (nothing searches the RNR queue: a stale entry is recognised at the
//! head by its tag), a tail timer `L + 1` plus the slots read until an
//! overdue one per path, a connection failure `PATHS * tx_ring_depth` (the
//! ring clear). Steps never overlap, so no read needs forwarding. Then the
//! completion walk, a step every `L` cycles into the [`CQE_FIFO`]-entry
//! completion FIFO (held while it is full): each step acts on the work
//! queue entry and its packet counts read `L` cycles before and issues
//! the next read (the streams' words are in hand when the walk starts:
//! the SACK's last stage read them, and a failure's ring clear outlasts
//! their read). After a SACK a step per completion and one per stream
//! with an acknowledged packet whose head is found not done; after a
//! failure one per request, one for the culprit and one per stream
//! (`L x (STREAMS + requests + 1)`).
//!
//! # Memories (sizes for `small` / `default`)
//! - retransmit rings, `CONNS * PATHS * tx_ring_depth` slots of about
//!   `125 + PB` bits (stream, work-queue slot, offset, length, the 32-bit
//!   send timestamp whose low 16 bits are tx_ts, retx and RNR counts,
//!   tx_seq, the physical path `phys` (PB), flags queued / rnr / resent /
//!   charge): 4096 / 4,194,304 slots (0.5 / 541 Mbit);
//! - work queues, `CONNS * STREAMS * tx_wq_depth` requests of about 380
//!   bits: 512 / 1,048,576 (0.2 / 398 Mbit);
//! - per connection a retransmit queue of up to `PATHS * tx_ring_depth`
//!   (path, psn) entries and a PROBE queue of `PATHS`;
//! - the path mirror, `CONNS * PATHS` x about 240 bits: the fields the
//!   engine writes (about 150) plus, for ack clocking, srtt 20, rttvar 16
//!   and min_rtt 20 (path_telemetry's, kept by the same update: `m_rd_*`
//!   does not carry them), `last_progress` 32 and `timed_out` 1;
//! - the connection context, `CONNS` x about 470 bits: about 330 plus
//!   min_rtt 20, `rack_sent` 32 + valid, `rack_rtt` 32, `since_ackreq`
//!   `bitlen(sack_every_packets)`, `unreq_since` 32 and `tail_at` 32 + valid;
//! - per NIC, plane health: `planes` x (32 + valid) bits of registers.
//!
//! `default`'s rings and work queues cannot be on chip; like recv_match's
//! slots they need host memory behind a cache, or smaller depths.
//!
//! # Reset
//! `rst` empties every queue and starts a clear sweep of
//! `CONNS * PATHS * tx_ring_depth` cycles (the largest memory, one word per
//! cycle) with every `ready` low.
//!
//! # Bad input
//! A work request for a connection that is not open or has failed
//! completes at once with WR_FLUSH. A SACK naming no path of the
//! connection, or acknowledging a psn never sent, is dropped whole
//! (`stat_sack_stale`); a NACK for a psn not outstanding is dropped
//! (`stat_nack_stale`). An AXI read error fails the request with LOCAL
//! PROTECTION (the connection fails, the rest flush) and its frame is not
//! sent. Completions leave exactly once: in msn order per stream on
//! success, culprit first and then every other request in msn order when
//! the connection fails (every request with the failure's status when it
//! has no culprit: every path DEAD).
//!
//! # Differences from the reference, known
//! - The reference applies a SACK, a timeout or a poll atomically; here a
//!   timeout arriving on `s_rto` during a decision takes effect after it.
//! - A retransmission on its own GOOD path goes through the selector with
//!   only that path eligible; its credit gets `+w - w`, unchanged except at
//!   saturation, where the reference does not touch it.
//! - Constants the reference NIC takes as knobs are fixed to its defaults:
//!   RNR back-off `rto_min`, [`RNR_RETRY`], [`RETRY_LIMIT`].
//! - Timers fire when a scanner finds them: the tail timer up to `CONNS`
//!   cycles after its deadline (one connection compared per cycle), as
//!   path_telemetry's RTOs; the reference fires both at the deadline.
//! - The reference holds a path's RTO while any PROBE of it waits to
//!   leave. Here a timeout that asks for a PROBE restarts the timer
//!   (path_telemetry), and PROBEs start ahead of data ([`PROBE_ROOM`]); a
//!   tail or window PROBE waiting does not hold the RTO (it waits for the
//!   unit a few cycles at most).
//! - CE steering (`NicConfig::ce_steering`) is always on, the reference's
//!   default: SACKs go to path_telemetry as ACK_STEER (a CE cut leaves the
//!   path GOOD) and the connection's window takes no CE count. There is no
//!   switch for the reference's `ce_steering = false`.
//! - A plane is marked with the timestamp at which the engine takes the
//!   `m_rto` record (a few cycles after path_telemetry's timeout).
//! - The reference fails a connection whose every path is DEAD at the end
//!   of the `on_timer` call whose timeout made the last one DEAD; here the
//!   check is made as the handler writes the state (a DEAD bit per path
//!   in the context), so the failure comes when the engine takes that
//!   timeout's `m_rto` record, a few cycles later, as the plane mark. An
//!   update to DEAD taken before its timeout's record (not seen) would
//!   fail it one step earlier.
//! - A PROBE reply that asks for the next PROBE (`m_upd`) and a silent
//!   loss's timeout (`m_rto`) of the same SACK queue their PROBEs in the
//!   order the engine takes the records (timeouts first), not the
//!   reference's (reply first).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::fmt;

use mrnic_proto::config::{Config, MAX_PATHS_PER_CONN};
use mrnic_proto::layouts::{data, sack};
use mrnic_proto::tables::path as pt;

use crate::block::{Bits, Block, PortDef};
use crate::path_telemetry as tel;

/// Module name, shared with the Verilog.
pub const NAME: &str = "tx_engine";

/// Work request operations (`s_wr_op`, 2 bits), numbered as the data
/// opcodes on the wire.
pub mod op {
    pub const WRITE: u8 = 0;
    pub const WRITE_IMM: u8 = 1;
    pub const SEND: u8 = 2;
    pub const SEND_IMM: u8 = 3;
}

/// Completion status codes (`m_cqe_status`, 4 bits), in the order of the
/// reference's `verbs::Status`.
pub mod status {
    pub const SUCCESS: u8 = 0;
    pub const LOCAL_PROTECTION: u8 = 1;
    pub const REMOTE_ACCESS: u8 = 2;
    pub const REMOTE_INVALID_REQUEST: u8 = 3;
    pub const RNR_RETRY_EXCEEDED: u8 = 4;
    pub const TRANSPORT_RETRY_EXCEEDED: u8 = 5;
    pub const WR_FLUSH: u8 = 6;
}

/// Bits of `m_axis_tuser`: the plane (NIC port) the frame leaves by.
pub const PLANE_BITS: u32 = pt::PLANE.width;
/// Bits of `s_open_sport` and the UDP ports.
pub const PORT_BITS: u32 = 16;
/// Bits of a peer connection id (`dst_conn` on the wire).
pub const CONN_ID_BITS: u32 = data::DST_CONN.width;
/// Bits of a psn.
pub const PSN_BITS: u32 = data::PATH_PSN.width;
/// Bits of an msn.
pub const MSN_BITS: u32 = data::MSN.width;
/// Bits of the SACK bitmap.
pub const BITMAP_BITS: u32 = sack::BITMAP.width;
/// Bits of a completion status.
pub const STATUS_BITS: u32 = 4;

/// A config the transmit engine cannot be built for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tx_engine: {field} = {value}: {why}")]
pub struct ParamError {
    pub field: &'static str,
    pub value: u64,
    pub why: String,
}

/// Sizes of one transmit engine, derived from a [`Config`].
#[derive(Debug, Clone, PartialEq)]
pub struct TxEngineParams {
    pub conns: u32,
    pub paths: u32,
    pub streams: u32,
    pub conn_bits: u32,
    pub path_bits: u32,
    pub stream_bits: u32,
    /// Datapath width in bits (`m_axis_tdata`, `m_axi_rdata`).
    pub data_bits: u32,
    pub axi_addr_bits: u32,
    pub axi_id_bits: u32,
    pub axi_max_burst: u32,
    /// Retransmit ring slots per path.
    pub ring_depth: u32,
    /// Work requests per (connection, stream).
    pub wq_depth: u32,
    pub read_latency: u32,
    /// Entries of the RNR back-off FIFO: `max(conns, PATHS x
    /// tx_ring_depth)`, a back-off for every connection at once or for
    /// one connection's whole ring. A NACK that finds it full starts no
    /// back-off (architecture.md, tx_engine item 3).
    pub rnr_depth: u32,
    /// Bits of an RNR back-off's tag (its FIFO entry's and its ring
    /// slot's): `log2(rnr_depth)` rounded up. The tags handed out while
    /// one entry waits in the FIFO are the entries behind it, fewer than
    /// `rnr_depth`, so a later back-off of the same slot never gets the
    /// waiting entry's tag back, and a stale entry is told from a live
    /// one by the tag alone. (32 bits took 20 more per ring slot on
    /// `default`, about 80 Mbit of ring memory, for nothing.)
    pub rnr_tag_bits: u32,
    /// Entries of the window-probe FIFO: `conns`, one live entry per
    /// connection. A decision that finds it full arms no probe and waits
    /// for the FIFO's next pop (architecture.md, tx_engine item 3).
    pub wprobe_depth: u32,
    /// Entries of the acknowledgement unit's pending event list: one
    /// step's events at most, `2 + suspect_after_rtos x PATHS` (a SACK's
    /// ACK_STEER and PROBE_REPLY, and at most `suspect_after_rtos` SILENT
    /// events per path: see [`silent_events`]). A step starts only with
    /// the list empty, so it never holds more.
    pub evt_pend: u32,
    /// The whole config: the frame builder and the congestion arithmetic
    /// need most of it.
    pub cfg: Config,
}

impl TxEngineParams {
    /// Derives the sizes from a config, refusing what the block cannot build.
    pub fn from_config(cfg: &Config) -> Result<TxEngineParams, ParamError> {
        let bad = |field, value: u32, why: String| Err(ParamError { field, value: value as u64, why });
        if let Some(i) = cfg.check().first() {
            return Err(ParamError { field: i.field, value: 0, why: i.why.clone() });
        }
        let t = &cfg.transport;
        let h = &cfg.hardware;
        if t.connections < 2 {
            return bad("transport.connections", t.connections, "at least 2 (a 1-bit index)".into());
        }
        if t.paths_per_conn > MAX_PATHS_PER_CONN {
            return bad("transport.paths_per_conn", t.paths_per_conn, "the selector's limit".into());
        }
        if h.tx_ring_depth > t.window {
            return bad("hardware.tx_ring_depth", h.tx_ring_depth, "at most transport.window".into());
        }
        // The ring slot's wr_id field names a stream and a work-queue slot.
        let wr_bits = Config::index_bits(t.streams_per_conn) + Config::index_bits(h.tx_wq_depth);
        if wr_bits > mrnic_proto::tables::ring::WR_ID.width {
            return bad(
                "hardware.tx_wq_depth",
                h.tx_wq_depth,
                format!("stream and slot need {wr_bits} bits; the ring's wr_id has 16"),
            );
        }
        let rnr_depth = t.connections.max(t.paths_per_conn * h.tx_ring_depth);
        Ok(TxEngineParams {
            conns: t.connections,
            paths: t.paths_per_conn,
            streams: t.streams_per_conn,
            conn_bits: Config::index_bits(t.connections),
            path_bits: Config::index_bits(t.paths_per_conn),
            stream_bits: Config::index_bits(t.streams_per_conn),
            data_bits: h.datapath_bits,
            axi_addr_bits: h.axi_addr_bits,
            axi_id_bits: h.axi_id_bits,
            axi_max_burst: h.axi_max_burst,
            ring_depth: h.tx_ring_depth,
            wq_depth: h.tx_wq_depth,
            read_latency: h.table_read_latency,
            rnr_depth,
            rnr_tag_bits: Config::index_bits(rnr_depth).max(1),
            wprobe_depth: t.connections,
            evt_pend: 2 + cfg.timers.suspect_after_rtos * t.paths_per_conn,
            cfg: cfg.clone(),
        })
    }

    /// Bytes per datapath beat.
    pub fn beat_bytes(&self) -> u32 {
        self.data_bits / 8
    }
}

/// The ports of `tx_engine`, in declaration order. The Verilog generator
/// declares its module from this list.
pub fn ports(p: &TxEngineParams) -> Vec<PortDef> {
    const RST: &str = "Clock and reset";
    const CFG: &str = "Configuration";
    const OPEN: &str = "Connection setup";
    const WR: &str = "Work requests";
    const AXI: &str = "Payload read (AXI4 read master)";
    const TRD: &str = "Telemetry read (to path_telemetry s_rd / from its m_rd)";
    const EVT: &str = "Telemetry events (to path_telemetry s_evt)";
    const UPD: &str = "Telemetry updates and timeouts (from path_telemetry m_upd / m_rto)";
    const SEL: &str = "Path selection (to path_selector s_req / from its m_sel)";
    const ACK: &str = "Incoming SACK and NACK (parsed, from the receive side)";
    const ANS: &str = "Answers to send (from sack_gen m_sack / m_nack)";
    const OUT: &str = "Frame output (AXI4-Stream)";
    const CQE: &str = "Send completions";
    const STAT: &str = "Event counters";
    let (cb, pb, sb) = (p.conn_bits, p.path_bits, p.stream_bits);
    let n = p.paths;
    fn i(name: impl Into<String>, w: u32, g: &'static str, c: impl Into<String>) -> PortDef {
        PortDef::input(name, w, g, c)
    }
    fn o(name: impl Into<String>, w: u32, g: &'static str, c: impl Into<String>) -> PortDef {
        PortDef::output(name, w, g, c)
    }
    let mut v = vec![
        i("rst", 1, RST, "synchronous reset, active high; starts the clear sweep"),
        i("ts_now", tel::TS_BITS, RST, "32-bit timestamp counter (units of timers.ts_unit_ns)"),
        i("cfg_src_mac", 48, CFG, "this NIC's MAC address"),
        i("cfg_src_ip", 32, CFG, "this NIC's IPv4 address"),
        i("cfg_udp_port", PORT_BITS, CFG, "transport UDP port: destination of data, source of answers"),
        i("s_open_valid", 1, OPEN, "a path of a connection is set up"),
        o("s_open_ready", 1, OPEN, "setup accepted this cycle if valid"),
        i("s_open_conn", cb, OPEN, "connection index"),
        i("s_open_path", pb, OPEN, "path index; path 0 also resets the connection"),
        i("s_open_npaths", pb + 1, OPEN, "paths of the connection (1..=PATHS)"),
        i("s_open_remote_id", CONN_ID_BITS, OPEN, "the peer's connection id (dst_conn of every packet)"),
        i("s_open_dst_mac", 48, OPEN, "the peer's MAC address"),
        i("s_open_dst_ip", 32, OPEN, "the peer's IPv4 address"),
        i("s_open_sport", PORT_BITS, OPEN, "the path's first UDP source port"),
        i("s_open_plane", PLANE_BITS, OPEN, "the plane the path leaves by"),
        i("s_open_psn", PSN_BITS, OPEN, "the path's first psn"),
        i("s_wr_valid", 1, WR, "a work request is offered"),
        o("s_wr_ready", 1, WR, "work request accepted this cycle if valid"),
        i("s_wr_conn", cb, WR, "connection index"),
        i("s_wr_stream", sb, WR, "stream"),
        i("s_wr_op", 2, WR, "0 WRITE, 1 WRITE_IMM, 2 SEND, 3 SEND_IMM"),
        i("s_wr_wr_id", 64, WR, "host's id, returned in the completion"),
        i("s_wr_laddr", p.axi_addr_bits, WR, "local buffer address"),
        i("s_wr_len", data::MSG_LEN.width, WR, "message bytes"),
        i("s_wr_raddr", data::ADDR.width, WR, "WRITE: remote virtual address"),
        i("s_wr_rkey", data::RKEY.width, WR, "WRITE: remote key"),
        i("s_wr_imm", data::IMM.width, WR, "*_IMM: immediate data"),
        o("m_axi_arid", p.axi_id_bits, AXI, "read ID (always 0: one ordered stream of bursts)"),
        o("m_axi_araddr", p.axi_addr_bits, AXI, "burst address, aligned to the beat"),
        o("m_axi_arlen", 8, AXI, "beats - 1"),
        o("m_axi_arsize", 3, AXI, "log2(beat bytes)"),
        o("m_axi_arburst", 2, AXI, "INCR (1)"),
        o("m_axi_arvalid", 1, AXI, "a burst is requested"),
        i("m_axi_arready", 1, AXI, "burst request taken"),
        i("m_axi_rid", p.axi_id_bits, AXI, "read ID"),
        i("m_axi_rdata", p.data_bits, AXI, "read data"),
        i("m_axi_rresp", 2, AXI, "read response (non-zero: error)"),
        i("m_axi_rlast", 1, AXI, "last beat of a burst"),
        i("m_axi_rvalid", 1, AXI, "a read beat is offered"),
        o("m_axi_rready", 1, AXI, "read beat taken"),
        o("m_trd_valid", 1, TRD, "a telemetry read is requested"),
        i("m_trd_ready", 1, TRD, "read request taken"),
        o("m_trd_conn", cb, TRD, "connection to read"),
        i("s_trd_valid", 1, TRD, "read data offered"),
        o("s_trd_ready", 1, TRD, "read data taken"),
        i("s_trd_conn", cb, TRD, "connection read"),
        i("s_trd_state", n * pt::STATE.width, TRD, "per path: state"),
        i("s_trd_inflight", n * pt::INFLIGHT.width, TRD, "per path: packets in flight"),
        i("s_trd_cwnd", n * pt::CWND.width, TRD, "per path: window in bytes"),
        i("s_trd_weight", n * pt::WEIGHT.width, TRD, "per path: SWRR weight"),
        o("m_evt_valid", 1, EVT, "an event is offered"),
        i("m_evt_ready", 1, EVT, "event taken"),
        o(
            "m_evt_kind",
            tel::KIND_BITS,
            EVT,
            "OPEN, SEND, RETX, RESUME, PROBE_SENT, ACK_STEER, PROBE_REPLY, NACK, RNR, SILENT",
        ),
        o("m_evt_conn", cb, EVT, "connection"),
        o("m_evt_path", pb, EVT, "path"),
        o("m_evt_now", tel::TS_BITS, EVT, "timestamp the event applies at"),
        o("m_evt_cum_acked", PSN_BITS, EVT, "ACK: new cumulative point; OPEN: first psn"),
        o("m_evt_acked_pkts", tel::PKTS_BITS, EVT, "ACK: packets newly acknowledged"),
        o("m_evt_acked_bytes", tel::BYTES_BITS, EVT, "ACK: bytes newly acknowledged"),
        o("m_evt_ecn_cnt", tel::ECN_BITS, EVT, "ACK: the SACK's CE count"),
        o("m_evt_rtt_valid", 1, EVT, "ACK: an RTT sample is present"),
        o("m_evt_rtt", tel::RTT_BITS, EVT, "ACK: the sample"),
        o("m_evt_acked_seq", 32, EVT, "ACK: one past the highest tx_seq acknowledged"),
        o("m_evt_sport", PORT_BITS, EVT, "OPEN: the path's port"),
        o("m_evt_plane", PLANE_BITS, EVT, "OPEN: the path's plane"),
        i("s_upd_valid", 1, UPD, "a path's state, weight or action changed"),
        o("s_upd_ready", 1, UPD, "update taken"),
        i("s_upd_conn", cb, UPD, "connection"),
        i("s_upd_path", pb, UPD, "path"),
        i("s_upd_state", pt::STATE.width, UPD, "new state"),
        i("s_upd_weight", pt::WEIGHT.width, UPD, "new weight"),
        i("s_upd_clr", 1, UPD, "the path's SWRR credit restarts from 0"),
        i("s_upd_act", tel::ACT_BITS, UPD, "actions: 1 probe, 2 all lost, 4 died, 8 recovered"),
        i("s_rto_valid", 1, UPD, "a timeout was applied"),
        o("s_rto_ready", 1, UPD, "timeout taken"),
        i("s_rto_conn", cb, UPD, "connection"),
        i("s_rto_path", pb, UPD, "path"),
        i("s_rto_state", pt::STATE.width, UPD, "new state"),
        i("s_rto_sport", PORT_BITS, UPD, "the path's source port now (re-entropy)"),
        i("s_rto_gen", pt::GEN.width, UPD, "the path's generation now"),
        i("s_rto_act", tel::ACT_BITS, UPD, "actions, as s_upd_act"),
        o("m_psel_valid", 1, SEL, "a path decision is requested"),
        i("m_psel_ready", 1, SEL, "request taken"),
        o("m_psel_conn", cb, SEL, "connection"),
        o("m_psel_elig", n, SEL, "bit i: path i eligible"),
        o("m_psel_weight", n * pt::WEIGHT.width, SEL, "per path: weight"),
        o("m_psel_clr", n, SEL, "bit i: path i's credit restarts from 0"),
        i("s_psel_valid", 1, SEL, "a decision is offered"),
        o("s_psel_ready", 1, SEL, "decision taken"),
        i("s_psel_conn", cb, SEL, "connection"),
        i("s_psel_path", pb, SEL, "chosen path"),
        i("s_psel_none", 1, SEL, "no path was eligible"),
        i("s_sack_valid", 1, ACK, "a SACK for one of our connections arrived"),
        o("s_sack_ready", 1, ACK, "SACK taken"),
        i("s_sack_conn", cb, ACK, "connection index (dst_conn resolved by the receive side)"),
        i("s_sack_path_id", sack::PATH_ID.width, ACK, "path_id as on the wire"),
        i("s_sack_cum_psn", PSN_BITS, ACK, "every psn below was received"),
        i("s_sack_bitmap", BITMAP_BITS, ACK, "bit i: psn cum_psn + 1 + i received"),
        i("s_sack_ecn_cnt", sack::ECN_CNT.width, ACK, "CE marks since the last SACK"),
        i("s_sack_echo_ts", sack::ECHO_TS.width, ACK, "tx_ts of the trigger"),
        i("s_sack_rate_hint", sack::RATE_HINT.width, ACK, "receiver's fair share, Q0.16"),
        i("s_sack_stream_id", sack::STREAM_ID.width, ACK, "stream of completed_msn"),
        i("s_sack_completed_msn", MSN_BITS, ACK, "every msn below completed at the peer"),
        i("s_sack_dport", PORT_BITS, ACK, "UDP destination port it arrived at (probe-reply check)"),
        i("s_nack_valid", 1, ACK, "a NACK for one of our connections arrived"),
        o("s_nack_ready", 1, ACK, "NACK taken"),
        i("s_nack_conn", cb, ACK, "connection index"),
        i("s_nack_path_id", sack::PATH_ID.width, ACK, "path_id as on the wire"),
        i("s_nack_code", 8, ACK, "RNR 1, ACCESS 2, NO_CONN 3, BAD_HDR 4"),
        i("s_nack_psn", PSN_BITS, ACK, "psn the NACK answers"),
    ];
    for (ch, what) in [("csack", "SACK"), ("cnack", "NACK")] {
        v.push(i(format!("s_{ch}_valid"), 1, ANS, format!("a {what} to send")));
        v.push(o(format!("s_{ch}_ready"), 1, ANS, format!("{what} taken")));
        v.push(i(format!("s_{ch}_conn"), cb, ANS, "local connection (addresses from its context)"));
        // The wire's width: a BAD_HDR answer names a path the connection
        // does not have, as the packet did.
        v.push(i(format!("s_{ch}_path_id"), sack::PATH_ID.width, ANS, "path_id of the trigger, as on the wire"));
        v.push(i(format!("s_{ch}_dst_conn"), CONN_ID_BITS, ANS, "the peer's connection id"));
        v.push(i(format!("s_{ch}_path_gen"), pt::GEN.width, ANS, "generation"));
    }
    let ans = |v: &mut Vec<PortDef>, ch: &str, name: &str, w: u32, c: &str| {
        v.push(i(format!("s_{ch}_{name}"), w, ANS, c));
    };
    ans(&mut v, "csack", "cum_psn", PSN_BITS, "cumulative psn");
    ans(&mut v, "csack", "stream_id", sack::STREAM_ID.width, "stream of completed_msn");
    ans(&mut v, "csack", "completed_msn", MSN_BITS, "oldest incomplete msn");
    ans(&mut v, "csack", "echo_ts", sack::ECHO_TS.width, "tx_ts of the trigger");
    ans(&mut v, "csack", "ecn_cnt", sack::ECN_CNT.width, "CE marks");
    ans(&mut v, "csack", "rate_hint", sack::RATE_HINT.width, "fair share");
    ans(&mut v, "csack", "bitmap", BITMAP_BITS, "receive bitmap");
    ans(&mut v, "csack", "sport", PORT_BITS, "source port of the trigger: the answer's destination port");
    ans(&mut v, "csack", "plane", PLANE_BITS, "plane of the trigger: the answer leaves by it");
    ans(&mut v, "cnack", "code", 8, "NACK code");
    ans(&mut v, "cnack", "psn", PSN_BITS, "psn of the trigger");
    ans(&mut v, "cnack", "stream_id", data::STREAM_ID.width, "stream of the trigger");
    ans(&mut v, "cnack", "msn", MSN_BITS, "msn of the trigger");
    ans(&mut v, "cnack", "echo_ts", sack::ECHO_TS.width, "tx_ts of the trigger");
    ans(&mut v, "cnack", "sport", PORT_BITS, "source port of the trigger");
    ans(&mut v, "cnack", "plane", PLANE_BITS, "plane of the trigger");
    ans(
        &mut v,
        "cnack",
        "direct",
        1,
        "no connection (a NO_CONN answer): the addresses are dst_ip and dst_mac, not conn's",
    );
    ans(&mut v, "cnack", "dst_ip", 32, "with direct: the trigger's IPv4 source");
    ans(&mut v, "cnack", "dst_mac", 48, "with direct: the trigger's Ethernet source (the hop it came from)");
    v.extend([
        o("m_axis_tdata", p.data_bits, OUT, "frame bytes, first byte in bits 7..0"),
        o("m_axis_tkeep", p.data_bits / 8, OUT, "byte enables (all ones except on the last beat)"),
        o("m_axis_tvalid", 1, OUT, "a beat is offered"),
        i("m_axis_tready", 1, OUT, "beat taken"),
        o("m_axis_tlast", 1, OUT, "last beat of the frame"),
        o("m_axis_tuser", PLANE_BITS, OUT, "plane (NIC port) the frame leaves by"),
        i(
            "port_ready",
            p.cfg.transport.planes,
            OUT,
            "per plane (NIC port), a level: its egress queue has room; data leaves only by a ready port",
        ),
        o("m_cqe_valid", 1, CQE, "a send completion is offered"),
        i("m_cqe_ready", 1, CQE, "completion taken"),
        o("m_cqe_conn", cb, CQE, "connection"),
        o("m_cqe_stream", sb, CQE, "stream"),
        o("m_cqe_wr_id", 64, CQE, "the work request's wr_id"),
        o("m_cqe_status", STATUS_BITS, CQE, "0 success, 1 local protection, 2 remote access, 3 remote invalid request, 4 RNR retry exceeded, 5 transport retry exceeded, 6 flushed"),
        o("m_cqe_opcode", 1, CQE, "0 WRITE, 1 SEND"),
        o("m_cqe_byte_len", data::MSG_LEN.width, CQE, "message bytes"),
        o("m_cqe_imm_valid", 1, CQE, "the request carried an immediate"),
        o("m_cqe_imm", data::IMM.width, CQE, "the immediate"),
    ]);
    for (name, c) in [
        ("stat_tx_data", "a data packet left (first transmission)"),
        ("stat_tx_retx", "a retransmission left"),
        ("stat_tx_probe", "a PROBE left"),
        ("stat_tx_answer", "a SACK or NACK left"),
        ("stat_ring_full", "a path was held back only by its full retransmit ring"),
        ("stat_sack_stale", "a SACK acknowledged a psn never sent, or named no path: dropped"),
        ("stat_nack_stale", "a NACK named a psn not outstanding: dropped"),
        ("stat_rnr_full", "an RNR NACK started no back-off: the RNR FIFO was full"),
        ("stat_wprobe_full", "a window probe was not armed: its FIFO was full"),
    ] {
        v.push(o(name, 1, STAT, c));
    }
    v
}

// ------------------------------------------------------------------ behaviour

/// RNR NACKs one packet may receive before its request fails (the
/// reference NIC's default `rnr_retry`).
pub const RNR_RETRY: u8 = 7;

/// Loss retransmissions of one packet before the connection fails: the
/// ring's 4-bit `retx_count` (the reference NIC's default `retry_limit`).
pub const RETRY_LIMIT: u8 = 15;
/// Entries of the event FIFO towards path_telemetry.
pub const EVT_FIFO: usize = 4;

/// The SILENT events of one step's uncharged losses (their copies'
/// paths, in walk order): the first `suspect_after` of each path. The
/// rest change nothing, so neither the model nor the RTL sends them: in
/// the reference all of a step's silent losses meet the path at one
/// instant, and `suspect_after` timeouts take a GOOD path to SUSPECT,
/// after which a SILENT is ignored; the path comes back to GOOD only by
/// an acknowledgement, a PROBE reply or a NACK, which this unit sends
/// after the step's events. Bounding them bounds the pending list
/// ([`TxEngineParams::evt_pend`]).
pub fn silent_events(silent: &[u32], suspect_after: u8) -> impl Iterator<Item = u32> + '_ {
    let mut seen = [0u8; MAX_PATHS_PER_CONN as usize];
    silent.iter().copied().filter(move |&p| {
        let n = &mut seen[p as usize];
        *n = n.saturating_add(1);
        *n <= suspect_after
    })
}
/// Frames (data or PROBE) built and waiting for their payload or for the
/// output, besides the one on `m_axis`.
pub const FRAME_QUEUE: usize = 2;
/// Header-only entries of the frame queue beyond [`FRAME_QUEUE`], for
/// PROBEs alone: a PROBE does not wait behind data frames for a place in
/// the queue, so it is committed (PROBE_SENT restarts the path's timer)
/// within a few cycles of the timeout that asked for it, as the reference
/// suspends a path's RTO while its PROBE waits and path_telemetry's
/// scanner does not know of the wait.
pub const PROBE_ROOM: usize = 2;
/// Entries of the work request input FIFO.
pub const WR_FIFO: usize = 2;
/// Entries of the completion FIFO.
pub const CQE_FIFO: usize = 4;

const SEQ_MASK: u32 = (1 << 24) - 1;
const SEQ_HALF: u32 = 1 << 23;

fn seq_diff(a: u32, b: u32) -> u32 {
    a.wrapping_sub(b) & SEQ_MASK
}

fn seq_before(a: u32, b: u32) -> bool {
    let d = seq_diff(b, a);
    d != 0 && d < SEQ_HALF
}

/// `a` is after `b` in 32-bit serial arithmetic.
fn seq32_after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

/// How long past its send a packet of path `m` is overdue (the
/// reference's `overdue_wait`): the path's srtt, or the connection's latest
/// RTT if longer, plus a reordering allowance of half the srtt or 4 rttvar.
fn overdue_wait(m: &PathM, rack_rtt: u32) -> u32 {
    overdue_wait_of(m.srtt, m.rttvar, rack_rtt)
}

/// [`overdue_wait`] from the path's srtt and rttvar.
fn overdue_wait_of(srtt: u32, rttvar: u32, rack_rtt: u32) -> u32 {
    srtt.max(rack_rtt).wrapping_add((srtt / 2).max(4 * rttvar))
}

/// path_telemetry's RFC 6298 update of srtt, rttvar and min_rtt on an RTT
/// sample, on the engine's copy.
fn rtt_sample(m: &mut PathM, rtt: u32, k: &tel::Consts) {
    let r = rtt.min(pt::SRTT.max() as u32);
    if m.min_rtt == tel::MIN_RTT_NONE {
        m.srtt = r;
        m.rttvar = (r / 2).min(pt::RTTVAR.max() as u32);
        m.min_rtt = r.min(tel::MIN_RTT_NONE - 1);
    } else {
        let err = r.abs_diff(m.srtt);
        m.srtt = tel::ewma(m.srtt, r, k.srtt_shift).min(pt::SRTT.max() as u32);
        m.rttvar = tel::ewma(m.rttvar, err, k.rttvar_shift).min(pt::RTTVAR.max() as u32);
        m.min_rtt = m.min_rtt.min(r);
    }
}

/// One path of a connection as the decision's path choice sees it:
/// path_telemetry's answer (`state`, `inflight`, `cwnd`) and the engine's
/// mirror (`plane`, `timed_out`, and `next_psn` / `cum_acked`, whose
/// distance is the ring's occupancy).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ChoicePath {
    pub state: u8,
    pub plane: u8,
    pub timed_out: bool,
    pub inflight: u32,
    pub cwnd: u32,
    pub next_psn: u32,
    pub cum_acked: u32,
}

/// The path choice of one decision, a bit per path (bit `p` = path `p`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Choice {
    /// Paths a retransmission of a packet of path `retx_path` may take.
    pub retx_elig: u32,
    /// The retransmission has a path but only by full ports
    /// (`retx_elig` is then 0): it waits at the head of its queue and
    /// nothing of the connection overtakes it.
    pub retx_port_wait: bool,
    /// Paths new data may take.
    pub new_elig: u32,
    /// New data has a path but only by full ports (`new_elig` is then 0).
    pub new_port_wait: bool,
    /// A path is held back by its ring alone (`stat_ring_full`).
    pub ring_held: bool,
    /// Paths whose window one more packet fills (ACKREQ on it).
    pub full_after: u32,
}

/// The decision's path choice, the combinational core the RTL builds as
/// one unit (`mrnic_hdl::tx_engine::path_choice`): plane health (a path
/// on a plane marked until after `ts` is left out, unless that leaves no
/// GOOD path), then the eligibility of a retransmission of a packet of
/// `retx_path` (its own path if GOOD, not timed out and healthy; else
/// any other GOOD allowed path; with none, its own path if GOOD) and of
/// new data (GOOD, allowed, `inflight << mtu_shift < cwnd`, the
/// connection below its cap (`conn_ok`) and a free ring slot), with the
/// paths one more packet would fill. Both take only paths whose NIC port
/// has room (`port_ready`, a bit per plane; a plane beyond it has none to
/// lack, so it is ready): a retransmission whose path is full, or
/// rerouted with every other GOOD allowed path full, waits
/// (`retx_port_wait`; its own path is the fallback only when no other GOOD
/// allowed path exists at all, the reference's rule), and new data that
/// only full ports hold back waits too (`new_port_wait`). With every port
/// ready this is the choice without the rule. `paths` holds the
/// connection's paths (`npaths` of them), `marks` the NIC's plane marks.
pub fn choose(
    p: &TxEngineParams,
    paths: &[ChoicePath],
    marks: &[Option<u32>],
    port_ready: u32,
    ts: u32,
    conn_ok: bool,
    retx_path: u32,
) -> Choice {
    let good = |i: usize| paths[i].state == tel::GOOD;
    let plane_ok = |plane: u8| match marks.get(plane as usize) {
        Some(Some(t)) => tel::ts_reached(ts, *t),
        _ => true,
    };
    let port_ok = |i: usize| paths[i].plane as usize >= marks.len() || port_ready >> paths[i].plane & 1 == 1;
    let healthy = (0..paths.len()).filter(|&i| plane_ok(paths[i].plane)).fold(0u32, |m, i| m | 1 << i);
    let ready = (0..paths.len()).filter(|&i| port_ok(i)).fold(0u32, |m, i| m | 1 << i);
    let allowed = if (0..paths.len()).any(|i| good(i) && healthy & 1 << i != 0) { healthy } else { u32::MAX };
    let mut ch = Choice::default();
    let r = retx_path as usize;
    if r < paths.len() {
        let own = &paths[r];
        let others = (0..paths.len()).filter(|&i| i != r && good(i)).fold(0, |m, i| m | 1 << i) & allowed;
        // The paths it would take with every port ready; none when its
        // own path is not GOOD and no other is (new data may go then).
        let path = if good(r) && !own.timed_out && healthy & 1 << r != 0 {
            1 << r
        } else if others != 0 {
            others
        } else if good(r) {
            1 << r
        } else {
            0
        };
        ch.retx_elig = path & ready;
        ch.retx_port_wait = path != 0 && ch.retx_elig == 0;
    }
    let shift = p.cfg.transport.mtu.trailing_zeros();
    let mut fits = 0u32;
    for (i, v) in paths.iter().enumerate() {
        let cwnd_ok = ((v.inflight as u64) << shift) < v.cwnd as u64;
        let ring_ok = seq_diff(v.next_psn, v.cum_acked) < p.ring_depth;
        if good(i) && cwnd_ok && conn_ok && allowed & 1 << i != 0 {
            if !ring_ok {
                ch.ring_held |= ready & 1 << i != 0;
            } else {
                fits |= 1 << i;
            }
        }
        let inflight = (v.inflight + 1).min(pt::INFLIGHT.max() as u32);
        if ((inflight as u64) << shift) >= v.cwnd as u64 {
            ch.full_after |= 1 << i;
        }
    }
    ch.new_elig = fits & ready;
    ch.new_port_wait = fits != 0 && ch.new_elig == 0;
    ch
}

/// A stream's queue as the decision's stream choice sees it: bytes left
/// to cut (`pend != tail`), and of the request at `pend` whether it has
/// started and its msn; the peer's completed_msn of the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StreamHead {
    pub pending: bool,
    pub started: bool,
    pub msn: u32,
    pub remote_completed: u32,
}

/// A stream's word as the decision reads it (one wide word per connection,
/// read with the telemetry): the queue pointers (free-running; the RTL
/// keeps `index_bits(tx_wq_depth) + 1` bits, enough since `tail - pend`
/// is at most the depth), the next msn to post, whether the request at
/// `pend` has started, and the peer's completed_msn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StreamWord {
    pub pend: u32,
    pub tail: u32,
    pub next_msn: u32,
    pub pend_started: bool,
    pub remote_completed: u32,
}

/// The head a stream's word describes: the request at `pend` has its msn
/// by position, since a stream's posts are numbered consecutively
/// (`next_msn - (tail - pend)`, 24-bit). The RTL's `stream_heads` is this
/// rule.
pub fn stream_head(w: &StreamWord) -> StreamHead {
    StreamHead {
        pending: w.pend != w.tail,
        started: w.pend_started,
        msn: w.next_msn.wrapping_sub(w.tail.wrapping_sub(w.pend)) & SEQ_MASK,
        remote_completed: w.remote_completed,
    }
}

/// The decision's stream: the first at or after `from` (round robin) with
/// bytes to cut whose head message has started or fits the peer's message
/// table (`msn - remote_completed < depth`, 24-bit). `None` with a stream
/// pending means every pending one is blocked by the peer's table. The
/// RTL's `stream_pick` is this rule.
pub fn stream_choice(heads: &[StreamHead], from: u32, depth: u32) -> Option<u32> {
    let ok = |h: &StreamHead| h.pending && (h.started || seq_diff(h.msn, h.remote_completed) < depth);
    rr_first(heads.len() as u32, from, |s| ok(&heads[s as usize]))
}

/// The scheduler's choice of a connection: the first of `0..n` at or
/// after `from` (wrapping) that is `ready`, the order a scan from `from`
/// visits them. The RTL's `rr_pick` is this rule as a priority encoder.
pub fn rr_first(n: u32, from: u32, ready: impl Fn(u32) -> bool) -> Option<u32> {
    (0..n).map(|k| (from + k) % n).find(|&c| ready(c))
}

/// The next AXI read burst of a payload whose unread part is `next..end`
/// (`next` aligned to the beat, `end > next`): up to the 4 KiB boundary
/// (AXI4 bursts never cross one), `axi_max_burst` beats, or the end. The
/// RTL builds it as `mrnic_hdl::tx_engine::axi_burst`.
pub fn burst(p: &TxEngineParams, next: u64, end: u64) -> ArReq {
    let bb = p.beat_bytes() as u64;
    let page_end = (next | 0xfff) + 1;
    let end = end.min(page_end).min(next + p.axi_max_burst as u64 * bb);
    ArReq { addr: next, len: ((end - next) / bb - 1) as u8, size: bb.trailing_zeros() as u8 }
}

/// A work request as it arrives on `s_wr_*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WorkReq {
    pub conn: u32,
    pub stream: u32,
    pub op: u8,
    pub wr_id: u64,
    pub laddr: u64,
    pub len: u32,
    pub raddr: u64,
    pub rkey: u32,
    pub imm: u32,
}

impl WorkReq {
    fn has_imm(&self) -> bool {
        self.op == op::WRITE_IMM || self.op == op::SEND_IMM
    }
    fn is_send(&self) -> bool {
        self.op == op::SEND || self.op == op::SEND_IMM
    }
}

/// One path of a connection set up on `s_open_*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Open {
    pub conn: u32,
    pub path: u32,
    pub npaths: u32,
    pub remote_id: u32,
    pub dst_mac: u64,
    pub dst_ip: u32,
    pub sport: u16,
    pub plane: u8,
    pub psn: u32,
}

/// The telemetry view of one connection (`s_trd_*`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TelView {
    pub conn: u32,
    pub paths: Vec<tel::View>,
}

/// A parsed incoming SACK (`s_sack_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SackIn {
    pub conn: u32,
    pub path_id: u32,
    pub cum_psn: u32,
    pub bitmap: [u64; 4],
    pub ecn_cnt: u32,
    pub echo_ts: u16,
    pub rate_hint: u16,
    pub stream_id: u32,
    pub completed_msn: u32,
    pub dport: u16,
}

/// A parsed incoming NACK (`s_nack_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NackIn {
    pub conn: u32,
    pub path_id: u32,
    pub code: u8,
    pub psn: u32,
}

/// A SACK to send (`s_csack_*`, sack_gen's `m_sack_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SackOut {
    pub conn: u32,
    pub path_id: u32,
    pub dst_conn: u32,
    pub path_gen: u8,
    pub cum_psn: u32,
    pub stream_id: u32,
    pub completed_msn: u32,
    pub echo_ts: u16,
    pub ecn_cnt: u8,
    pub rate_hint: u16,
    pub bitmap: [u64; 4],
    pub sport: u16,
    pub plane: u8,
}

/// A NACK to send (`s_cnack_*`, sack_gen's `m_nack_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NackOut {
    pub conn: u32,
    pub path_id: u32,
    pub dst_conn: u32,
    pub path_gen: u8,
    pub code: u8,
    pub psn: u32,
    pub stream_id: u32,
    pub msn: u32,
    pub echo_ts: u16,
    pub sport: u16,
    pub plane: u8,
    /// No connection: the answer goes to `dst_ip` by `dst_mac`.
    pub direct: bool,
    pub dst_ip: u32,
    pub dst_mac: u64,
}

/// A send completion (`m_cqe_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Cqe {
    pub conn: u32,
    pub stream: u32,
    pub wr_id: u64,
    pub status: u8,
    /// 0 WRITE, 1 SEND.
    pub opcode: u8,
    pub byte_len: u32,
    pub imm: Option<u32>,
}

/// An AXI4 read request (`m_axi_ar*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ArReq {
    pub addr: u64,
    pub len: u8,
    pub size: u8,
}

/// An AXI4 read beat (`m_axi_r*`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RBeat {
    pub data: Vec<u8>,
    pub resp: u8,
    pub last: bool,
}

/// One beat of `m_axis_*`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AxisBeat {
    /// `beat_bytes` bytes, byte 0 first on the wire.
    pub data: Vec<u8>,
    /// Valid bytes from byte 0 (tkeep is `(1 << keep) - 1`).
    pub keep: u32,
    pub last: bool,
    pub plane: u8,
}

/// Inputs of one cycle, typed.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    pub rst: bool,
    pub ts_now: u32,
    pub src_mac: u64,
    pub src_ip: u32,
    pub udp_port: u16,
    pub open: Option<Open>,
    pub wr: Option<WorkReq>,
    pub ar_ready: bool,
    pub r: Option<RBeat>,
    pub trd_ready: bool,
    pub trd: Option<TelView>,
    pub evt_ready: bool,
    pub upd: Option<tel::Upd>,
    pub rto: Option<tel::Rto>,
    pub psel_ready: bool,
    /// `s_psel_*`: (conn, path or None).
    pub psel: Option<(u32, Option<u32>)>,
    pub sack: Option<SackIn>,
    pub nack: Option<NackIn>,
    pub csack: Option<SackOut>,
    pub cnack: Option<NackOut>,
    pub axis_ready: bool,
    /// A bit per plane (NIC port): its egress queue has room for a frame.
    pub port_ready: u32,
    pub cqe_ready: bool,
}

/// A path request (`m_psel_*`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PselReq {
    pub conn: u32,
    pub elig: u32,
    pub weight: Vec<u8>,
    pub clr: u32,
}

/// One-cycle event pulses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stats {
    pub tx_data: bool,
    pub tx_retx: bool,
    pub tx_probe: bool,
    pub tx_answer: bool,
    pub ring_full: bool,
    pub sack_stale: bool,
    pub nack_stale: bool,
    pub rnr_full: bool,
    pub wprobe_full: bool,
}

/// Outputs of one cycle, typed.
#[derive(Debug, Clone, Default)]
pub struct Outputs {
    pub open_ready: bool,
    pub wr_ready: bool,
    pub ar: Option<ArReq>,
    pub r_ready: bool,
    pub trd: Option<u32>,
    pub trd_resp_ready: bool,
    pub evt: Option<tel::Event>,
    pub upd_ready: bool,
    pub rto_ready: bool,
    pub psel: Option<PselReq>,
    pub psel_resp_ready: bool,
    pub sack_ready: bool,
    pub nack_ready: bool,
    pub csack_ready: bool,
    pub cnack_ready: bool,
    pub axis: Option<AxisBeat>,
    pub cqe: Option<Cqe>,
    pub stats: Stats,
}

/// A posted work request: written by the post, read-only after. What
/// changes while it is sent lives where its one writer is: the bytes cut
/// of the request at `pend` in the stream's word (the commit's), and the
/// packets in flight as two counts per slot, [`TxEngine::wq_issued`] (the
/// commit's) and [`TxEngine::wq_acked`] (the acknowledgement unit's).
#[derive(Debug, Clone, Copy, Default)]
struct Wr {
    req: WorkReq,
    msn: u32,
    rq_seq: u32,
}

/// The work queue of one (connection, stream): slots `head..tail` hold
/// requests not yet completed, `pend` is the first with bytes to cut.
/// Everything the decision's stream choice needs is here, so a
/// connection's streams are one wide word read with the telemetry: the
/// request at `pend` has its msn by position (posts number a stream's
/// requests consecutively, so it is `next_msn - (tail - pend)`) and it
/// has started when `pend_sent` is not zero (a request the commit cuts and
/// does not finish has had bytes cut; an empty one finishes at its cut).
#[derive(Debug, Clone, Default)]
struct StreamQ {
    head: u32,
    pend: u32,
    tail: u32,
    next_msn: u32,
    next_rq_seq: u32,
    remote_completed: u32,
    /// Bytes cut of the request at `pend`.
    pend_sent: u32,
}

impl StreamQ {
    /// The part of the word the decision reads.
    fn word(&self) -> StreamWord {
        StreamWord {
            pend: self.pend,
            tail: self.tail,
            next_msn: self.next_msn,
            pend_started: self.pend_sent != 0,
            remote_completed: self.remote_completed,
        }
    }
}

/// One retransmit ring slot: `proto::tables::ring` (tx_ts, retx_count,
/// wr_id = {stream, work-queue slot}, offset) plus the sender's
/// bookkeeping (length, tx_seq, RNR state, queued). Public so the commit's
/// tap can record a slot as read and as written back ([`CommitRec`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Slot {
    pub stream: u32,
    pub wq: u32,
    pub offset: u32,
    pub len: u32,
    pub tx_ts: u16,
    pub retx_count: u8,
    pub rnr_count: u8,
    pub rnr_resend: bool,
    pub rnr_wait: bool,
    /// The tag of the RNR timer entry that may end `rnr_wait`: an entry
    /// whose tag differs is stale and skipped at the head.
    pub rnr_tag: u32,
    pub tx_seq: u32,
    pub queued: bool,
    /// Retransmitted at least once for loss (charged or not): its
    /// acknowledgement may answer an earlier copy, so it gives no RTT
    /// sample and counts for RACK only when it triggered the SACK.
    pub resent: bool,
    /// The queued retransmission is charged to `retx_count` (the path the
    /// lost copy left by acknowledged something after it left, or a
    /// BAD_HDR NACK); the commit charges it unless `rnr_resend`.
    pub charge: bool,
    /// Path whose port and plane the last transmission left by.
    pub phys: u32,
    /// 32-bit timestamp of the last transmission (`tx_ts` is its low 16
    /// bits): RACK across paths and the tail timer compare it.
    pub sent: u32,
}

/// The fields of a path the engine writes itself (path_telemetry holds
/// the same values; the engine keeps its own copy because `m_rd_*` does
/// not carry them).
#[derive(Debug, Clone, Copy, Default)]
struct PathM {
    /// The state as the last `m_upd` / `m_rto` record gave it.
    state: u8,
    sport: u16,
    gen: u8,
    plane: u8,
    next_psn: u32,
    cum_acked: u32,
    tx_seq: u32,
    acked_seq: u32,
    probe_pending: bool,
    probe_ts: u16,
    probe_seq: u32,
    /// Pending SWRR credit clear, raised on the next `m_psel_clr`.
    clr: bool,
    /// path_telemetry's srtt, rttvar and min_rtt, kept by the same RFC 6298
    /// update on the RTT samples the engine sends it (ACK events): the
    /// overdue time of RACK across paths and of the tail timer needs them,
    /// and `m_rd_*` does not carry them.
    srtt: u32,
    rttvar: u32,
    min_rtt: u32,
    /// Timestamp of the path's last acknowledgement or answered PROBE (or
    /// of the first send after it was empty): a loss is charged to the
    /// packet only when this is after the lost copy left.
    last_progress: u32,
    /// GOOD or SKIP with `retries > 0`: the path timed out since its last
    /// progress, so its retransmissions go elsewhere.
    timed_out: bool,
}

/// Connection-level congestion state (the reference's `ConnCc`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Cc {
    pub cwnd: u32,
    pub acked_bytes: u32,
    pub ecn_ewma: u8,
    pub hold_until: u32,
    pub srtt: u32,
    /// Smallest RTT sample of any path ([`MIN_RTT_NONE`](tel::MIN_RTT_NONE)
    /// before the first).
    pub min_rtt: u32,
    pub rate_hint: u16,
    pub cap: u32,
    pub inflight_bytes: u64,
}

/// What one SACK gives the connection's congestion state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CcAck {
    pub ts: u32,
    /// Packets and bytes the SACK acknowledged.
    pub pkts: u32,
    pub bytes: u32,
    pub ecn_cnt: u32,
    pub rate_hint: u16,
    /// The RTT sample, if the SACK carries one.
    pub rtt: Option<u32>,
    /// Paths of the connection.
    pub npaths: u32,
}

/// Connection-level AIMD, RTT and cap on a SACK (the reference's
/// `conn_ack`), the acknowledgement unit's combinational step the RTL
/// builds as one unit (`mrnic_hdl::tx_engine::conn_cc`): the srtt EWMA
/// and min_rtt on an RTT sample, the ECN fraction's EWMA, then a CE cut
/// (at most once per srtt) or one MTU per path per window of acknowledged
/// bytes, the rate hint, and the cap ([`conn_cap`]).
pub fn conn_cc_ack(p: &TxEngineParams, k: &tel::Consts, cc: &Cc, a: &CcAck) -> Cc {
    let conn_max = p.cfg.cc.conn_max_cwnd_bytes.min(u32::MAX as u64) as u32;
    let mut cc = *cc;
    if let Some(r) = a.rtt {
        cc.srtt = tel::ewma(cc.srtt, r, k.srtt_shift).max(1);
        cc.min_rtt = cc.min_rtt.min(r.max(1));
    }
    if a.pkts > 0 {
        let m = a.ecn_cnt.min(a.pkts).min(256);
        let frac = ((m * tel::recip16(a.pkts)) >> 8).min(255);
        cc.ecn_ewma = tel::ewma(cc.ecn_ewma as u32, frac, k.ecn_shift).min(255) as u8;
    }
    if a.ecn_cnt > 0 {
        if tel::ts_reached(a.ts, cc.hold_until) {
            let cut = (cc.cwnd as u64 * cc.ecn_ewma as u64) >> 9;
            cc.cwnd = (cc.cwnd as u64 - cut).max(k.min_cwnd as u64) as u32;
            cc.hold_until = a.ts.wrapping_add(cc.srtt.max(1));
            cc.acked_bytes = 0;
        }
    } else {
        cc.acked_bytes = (cc.acked_bytes as u64 + a.bytes as u64).min(pt::ACKED_BYTES.max()) as u32;
        if cc.acked_bytes >= cc.cwnd {
            // One MTU per window and path: the connection grows as fast
            // as its paths do together.
            cc.acked_bytes -= cc.cwnd;
            cc.cwnd = (cc.cwnd as u64 + k.mtu as u64 * a.npaths as u64).min(conn_max as u64) as u32;
        }
    }
    cc.rate_hint = a.rate_hint;
    cc.cap = conn_cap(p, k, &cc);
    cc
}

/// Bytes the line carries per timestamp unit (at least 1): the cap's
/// constant factor.
pub fn line_bytes_per_ts(p: &TxEngineParams) -> u64 {
    ((p.cfg.cc.line_rate_gbps as u64 * p.cfg.timers.ts_unit_ns as u64) / 8).max(1)
}

/// A connection's congestion state when its path 0 is set up: the
/// window of `init_cwnd` per path (within the connection's maximum), the
/// initial RTT, no RTT sample, the full rate hint, and the cap they give
/// (`tx_open` writes these constants).
pub fn open_cc(p: &TxEngineParams, k: &tel::Consts) -> Cc {
    let conn_max = p.cfg.cc.conn_max_cwnd_bytes.min(u32::MAX as u64);
    let cwnd = (k.init_cwnd as u64 * p.paths as u64).min(conn_max) as u32;
    let mut cc =
        Cc { cwnd, srtt: k.initial_rtt, min_rtt: tel::MIN_RTT_NONE, rate_hint: u16::MAX, ..Default::default() };
    cc.cap = conn_cap(p, k, &cc);
    cc
}

/// A path mirror's (srtt, rttvar, min_rtt) when it is set up: the
/// telemetry table's own opening values (`tx_open` writes these
/// constants).
pub fn open_rtt(k: &tel::Consts) -> (u32, u32, u32) {
    let srtt = k.open_srtt();
    (srtt, (srtt / 2).min(pt::RTTVAR.max() as u32), tel::MIN_RTT_NONE)
}

/// min(cwnd, rate_hint x line rate x max(srtt, 5/4 min_rtt)), at least
/// one MTU (min_rtt is srtt before the first sample). The quarter of the
/// base RTT on top covers acknowledgements that come in bunches; it is
/// taken over min_rtt, as a margin over srtt would grow the queue it
/// measures.
pub fn conn_cap(p: &TxEngineParams, k: &tel::Consts, cc: &Cc) -> u32 {
    let line = line_bytes_per_ts(p);
    let base = if cc.min_rtt == tel::MIN_RTT_NONE { cc.srtt } else { cc.min_rtt } as u64;
    let rtt = (cc.srtt as u64).max(base + (base >> 2));
    let share = (cc.rate_hint as u64 * line * rtt) >> 16;
    share.min(cc.cwnd as u64).max(k.mtu as u64) as u32
}

/// What the commit of a new data packet reads: the request's length, the
/// stream's word (its pointers and the bytes cut of the request at
/// `pend`), the path's mirror and the connection's context, as they are
/// in the commit's cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CutIn {
    pub ts: u32,
    pub req_len: u32,
    /// Work queue pointers (free-running; only their difference and
    /// equality matter).
    pub pend: u32,
    pub tail: u32,
    pub pend_sent: u32,
    pub next_psn: u32,
    pub cum_acked: u32,
    pub tx_seq: u32,
    pub last_progress: u32,
    pub srtt: u32,
    pub rttvar: u32,
    /// Connection bytes in flight before this packet (below `cap`, or no
    /// path would be eligible for new data, so 33 bits hold it after),
    /// and its cap.
    pub inflight: u64,
    pub cap: u32,
    pub pend_streams: u32,
    pub since_ackreq: u32,
    pub unreq_since: u32,
    pub tail_at: Option<u32>,
    pub rack_rtt: u32,
    /// The packet fills its path's window (the path choice's `full_after`).
    pub full_after: bool,
}

/// The packet the commit cuts and the state it writes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CutOut {
    pub offset: u32,
    pub len: u32,
    pub eom: bool,
    pub psn: u32,
    pub ackreq: bool,
    pub pend: u32,
    pub pend_sent: u32,
    pub pend_streams: u32,
    pub next_psn: u32,
    pub tx_seq: u32,
    pub last_progress: u32,
    pub inflight: u64,
    pub since_ackreq: u32,
    pub unreq_since: u32,
    pub tail_at: Option<u32>,
}

/// The commit's cut of one new data packet, the combinational core the
/// RTL builds as one unit (`mrnic_hdl::tx_engine::cut`): at most an MTU
/// of the request at `pend` from the bytes already cut; the path's next
/// psn and tx_seq (its silence starts now if it was empty); `pend`
/// moves on when the request is cut to its end, and the connection has
/// one stream fewer with bytes to cut when that empties the stream; the
/// tail timer is armed when nothing is left to cut; and ACKREQ at the end
/// of a message, when the packet fills its path's or the connection's
/// window, when nothing is left to cut, every `sack_every_packets`
/// packets of the connection, and once the oldest packet since the last
/// request has waited min(`rto_min / 4`, the path's srtt / 4) (the
/// reference's `ackreq_wait`).
pub fn cut(p: &TxEngineParams, k: &tel::Consts, a: &CutIn) -> CutOut {
    let offset = a.pend_sent;
    let len = (a.req_len - offset).min(p.cfg.transport.mtu);
    let eom = offset + len == a.req_len;
    let (pend, pend_sent) = if eom { (a.pend.wrapping_add(1), 0) } else { (a.pend, offset + len) };
    let pend_streams = a.pend_streams - u32::from(eom && pend == a.tail);
    let inflight = a.inflight + u64::from(len);
    let drained = pend_streams == 0;
    let wait = overdue_wait_of(a.srtt, a.rttvar, a.rack_rtt);
    let tail_at = a.tail_at.or(drained.then(|| a.ts.wrapping_add(wait)));
    let unreq_since = if a.since_ackreq == 0 { a.ts } else { a.unreq_since };
    let since = a.since_ackreq.saturating_add(1);
    let ackreq = eom
        || a.full_after
        || inflight >= u64::from(a.cap)
        || drained
        || since >= p.cfg.timers.sack_every_packets
        || a.ts.wrapping_sub(unreq_since) >= (k.rto_min / 4).min(a.srtt / 4);
    CutOut {
        offset,
        len,
        eom,
        psn: a.next_psn,
        ackreq,
        pend,
        pend_sent,
        pend_streams,
        next_psn: (a.next_psn + 1) & SEQ_MASK,
        tx_seq: a.tx_seq.wrapping_add(1),
        last_progress: if a.next_psn == a.cum_acked { a.ts } else { a.last_progress },
        inflight,
        since_ackreq: if ackreq { 0 } else { since },
        unreq_since,
        tail_at,
    }
}

/// What the post of a work request reads: its connection's state and
/// its stream's word, as they are in the post's cycle (item 7's
/// forwarding included), and whether a flush completion would have room.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PostIn {
    /// The request consumes a receive (SEND, SEND_IMM, WRITE_IMM).
    pub consumes: bool,
    /// The connection is open and has not failed.
    pub live: bool,
    /// The completion FIFO has room and the acknowledgement unit is idle.
    pub flush_room: bool,
    /// Work queue pointers (free-running; only differences matter).
    pub head: u32,
    pub pend: u32,
    pub tail: u32,
    pub next_msn: u32,
    pub next_rq_seq: u32,
    pub pend_streams: u32,
}

/// What the post does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PostOut {
    /// The request leaves the pipeline (else it waits and those behind it).
    pub take: bool,
    /// It completes at once with WR_FLUSH (its connection is not live).
    pub flush: bool,
    /// It is written into work queue slot `tail` with this msn and
    /// rq_seq, and the stream's word and the connection's count move on.
    pub write: bool,
    pub msn: u32,
    pub rq_seq: u32,
    pub tail: u32,
    pub next_msn: u32,
    pub next_rq_seq: u32,
    pub pend_streams: u32,
}

/// The post of a work request, the combinational core the RTL builds as
/// one unit (`mrnic_hdl::tx_engine::post_rule`): a request for a
/// connection that is not live completes with WR_FLUSH once a completion
/// has room; otherwise it takes the stream's next msn (and next rq_seq if
/// it consumes a receive) into slot `tail` unless the queue is full, and
/// the stream counts among those with bytes to cut if it was not.
pub fn post_rule(wq_depth: u32, a: &PostIn) -> PostOut {
    if !a.live {
        return PostOut { take: a.flush_room, flush: a.flush_room, ..Default::default() };
    }
    if a.tail.wrapping_sub(a.head) >= wq_depth {
        return PostOut::default();
    }
    PostOut {
        take: true,
        flush: false,
        write: true,
        msn: a.next_msn,
        rq_seq: a.next_rq_seq,
        tail: a.tail.wrapping_add(1),
        next_msn: (a.next_msn + 1) & SEQ_MASK,
        next_rq_seq: if a.consumes { (a.next_rq_seq + 1) & SEQ_MASK } else { a.next_rq_seq },
        pend_streams: a.pend_streams + u32::from(a.pend == a.tail),
    }
}

/// Where a SACK's cumulative psn lies against what its path has
/// outstanding, the combinational core the RTL builds as one unit
/// (`mrnic_hdl::tx_engine::sack_window`): `None` when the SACK cannot be
/// this path's (its cumulative psn past the next psn to send, or a
/// bitmap bit at or past it: it acknowledges a psn never sent), else the
/// cumulative psn's offset from the oldest outstanding one, negative for
/// a SACK older than an earlier one (24-bit serial arithmetic).
pub fn sack_window(next_psn: u32, cum_acked: u32, cum_psn: u32, bitmap: [u64; 4]) -> Option<i64> {
    let span = seq_diff(next_psn, cum_acked) as i64;
    let d = seq_diff(cum_psn, cum_acked);
    let rel = if d < SEQ_HALF { d as i64 } else { d as i64 - (1 << 24) };
    let top = mrnic_proto::headers::Bitmap256(bitmap).highest().map(|b| rel + 1 + b as i64);
    (rel <= span && top.is_none_or(|t| t < span)).then_some(rel)
}

/// Whether a SACK whose cumulative psn is at offset `rel` ([`sack_window`])
/// acknowledges the outstanding psn at offset `d` from the oldest: every
/// psn before the cumulative one, and those its bitmap names after it
/// (bit `i` for offset `rel + 1 + i`).
pub fn sack_acks(rel: i64, bitmap: [u64; 4], d: u32) -> bool {
    let d = d as i64;
    let i = d - rel - 1;
    d < rel || (0..256).contains(&i) && bitmap[(i / 64) as usize] >> (i % 64) & 1 == 1
}

/// A SACK's first pass so far: what the slots it acknowledged add up to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SackFold {
    /// Packets and bytes acknowledged (a packet in RNR back-off had left
    /// the path's inflight already and is not counted).
    pub pkts: u32,
    pub bytes: u32,
    /// A first transmission that triggered the SACK was acknowledged: the
    /// echoed timestamp is an RTT sample.
    pub rtt_ok: bool,
    /// RACK across paths: the newest send acknowledged, and its RTT.
    pub rack_sent: Option<u32>,
    pub rack_rtt: u32,
    /// Physical paths known to have delivered (a bit each).
    pub delivered: u32,
    /// One past the newest tx_seq known delivered (the path's acked_seq).
    pub max_seq: u32,
}

/// An acknowledged ring slot as the first pass reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AckedSlot {
    pub len: u32,
    pub tx_ts: u16,
    pub sent: u32,
    pub tx_seq: u32,
    pub phys: u32,
    pub rnr_resend: bool,
    pub resent: bool,
    /// It has waited out an RNR back-off (`rnr_count` not zero).
    pub rnr_backed_off: bool,
}

/// One acknowledged slot folded into a SACK's first pass, the
/// combinational core the RTL builds as one unit
/// (`mrnic_hdl::tx_engine::sack_fold`), one slot per cycle: counts, the
/// RTT sample, RACK across paths (a retransmission counts only when it
/// triggered the SACK, `echo_ts` = its `tx_ts`, and a packet that waited
/// out an RNR back-off never does), the paths that delivered and the
/// newest tx_seq delivered.
pub fn sack_fold(f: &SackFold, s: &AckedSlot, echo_ts: u16, ts: u32) -> SackFold {
    let mut f = *f;
    f.pkts += u32::from(!s.rnr_resend);
    f.bytes += s.len;
    f.rtt_ok |= !s.resent && s.tx_ts == echo_ts;
    // A retransmitted packet's acknowledgement may answer an earlier
    // copy: only when it triggered this SACK is its last transmission
    // known to be the one acknowledged.
    let known = !s.resent || s.tx_ts == echo_ts;
    if known && !s.rnr_backed_off && f.rack_sent.is_none_or(|r| seq32_after(s.sent, r)) {
        f.rack_sent = Some(s.sent);
        f.rack_rtt = ts.wrapping_sub(s.sent);
    }
    if known {
        f.delivered |= 1 << s.phys;
        if seq32_after(s.tx_seq.wrapping_add(1), f.max_seq) {
            f.max_seq = s.tx_seq.wrapping_add(1);
        }
    }
    f
}

#[derive(Debug, Clone, Default)]
struct Conn {
    open: bool,
    remote_id: u32,
    dst_mac: u64,
    dst_ip: u32,
    npaths: u32,
    failed: Option<u8>,
    cc: Cc,
    rr_stream: u32,
    /// Queued retransmissions: (path, psn).
    retx: std::collections::VecDeque<(u32, u32)>,
    probes: std::collections::VecDeque<u32>,
    /// Paths in `probes` (one bit each): membership without a search.
    probe_q: u32,
    /// Streams with bytes to cut (`pend != tail`), counted as requests are
    /// posted and cut, so that whether the connection has work follows
    /// from its context alone.
    pend_streams: u32,
    window_probe_at: Option<u32>,
    /// Send timestamp of the newest first transmission acknowledged on any
    /// path (RACK across paths), and how long it took.
    rack_sent: Option<u32>,
    rack_rtt: u32,
    /// Data packets since the last one that asked for a SACK.
    since_ackreq: u32,
    /// Timestamp of the first of them (meaningful while `since_ackreq > 0`).
    unreq_since: u32,
    /// Tail timer: when nothing is left to cut, the earliest time an
    /// outstanding packet is overdue (its paths are then PROBEd).
    tail_at: Option<u32>,
    /// The last decision found nothing to send (no retransmission's path
    /// may take it, and no stream may send or no path may take new data):
    /// the connection leaves the ready set, PROBEs apart, until something
    /// that can change that happens to it (a SACK, a NACK, an update or
    /// timeout of one of its paths, a new request, a packet queued for
    /// retransmission) or to the NIC's plane marks (one cleared or
    /// expired), or, with `port_wait`, to its NIC ports (one drained).
    /// Without it the scheduler retried such a connection back to back,
    /// nine decisions in ten finding nothing under load.
    stalled: bool,
    /// The stalling decision found a path only by full NIC ports (the
    /// reference's `port_blocked`): a port draining wakes the connection.
    port_wait: bool,
    /// Paths whose mirror state is DEAD, a bit each, written with the
    /// state by the timeout and update handlers: whether every path of
    /// the connection is DEAD (it then fails, as the reference's
    /// `on_timer` fails it) is one compare of the context word, not a
    /// read of every path's mirror.
    dead: u32,
}

/// A SACK's stages after its first pass (the model's `sack_stage`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SackStage {
    /// RACK across paths, from this path on.
    Overdue(u32),
    /// The tail timer.
    Tail,
    /// completed_msn and the completion walk (the default only for
    /// [`StageRec`]'s).
    #[default]
    Finish,
}

/// One path of a SACK stage's ring walk ([`stage_cycles`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StageWalk {
    pub path: u32,
    /// psns outstanding (`next_psn - cum_acked`).
    pub span: u32,
    /// Slots read up to and including the walk's break (all `span`
    /// without one); 0 for a path after the stage stopped.
    pub reads: u32,
    /// RACK across paths: the offset of the first loss charged to no
    /// one (a SILENT event), after which the stage stops.
    pub silent_at: Option<u32>,
}

/// The cycles a SACK stage's RTL unit (`tx_stage`) issues ring reads, the
/// count its walk holds the unit for (architecture.md, tx_engine item 14).
/// `walk` lists the connection's paths the stage may read, in order, as
/// the model walked them. From the cycle its context and mirrors answer
/// the unit reads a slot a cycle, path after path; a slot's answer comes
/// `L` cycles after its read, so a break is known `L - 1` reads late: the
/// next path starts in the break's answer cycle, or after the path's last
/// slot if that comes first. A silent loss stops the walk once known:
/// reads of later paths issued before that are ignored but were issued.
/// With `L = 1` this is exactly the slots read.
pub fn stage_cycles(l: u32, walk: &[StageWalk]) -> u32 {
    let mut c = 0;
    for (i, w) in walk.iter().enumerate() {
        let next = if w.reads < w.span { (c + w.span).min(c + w.reads - 1 + l) } else { c + w.span };
        if let Some(d) = w.silent_at {
            let known = c + d + l;
            let later: u32 = walk[i + 1..].iter().map(|w| w.span).sum();
            return next + known.saturating_sub(next).min(later);
        }
        c = next;
    }
    c
}

/// A SACK between its stages: what the later ones need of it.
#[derive(Debug, Clone)]
struct SackCont {
    conn: u32,
    stage: SackStage,
    /// SILENT events were sent: the next stage waits until path_telemetry
    /// has answered them and their records have been acted on.
    wait: bool,
    touched: Vec<bool>,
    stream_id: u32,
    completed_msn: u32,
    /// The tail timer's stages (RACK across paths, then its PROBEs), not a
    /// SACK's.
    tail: bool,
}

/// What a decision is going to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plan {
    Retx { path: u32, psn: u32 },
    New { stream: u32 },
}

#[derive(Debug, Clone)]
enum Sched {
    Idle,
    /// Telemetry read issued (or to issue) for `conn`.
    Read {
        conn: u32,
        issued: bool,
    },
    /// Telemetry answer in hand; the head of the retransmit queue is
    /// checked, and a stale head popped: the next head's ring slot is read
    /// as it pops and answers `L` cycles later (`wait` cycles still to go).
    Decide {
        conn: u32,
        view: TelView,
        wait: u32,
    },
    /// Path request formed; `issued` once `m_psel` handshook.
    Select {
        conn: u32,
        plan: Plan,
        req: PselReq,
        issued: bool,
        full_after: Vec<bool>,
    },
}

/// The completion walk: a work request every `L` cycles into the
/// completion FIFO (the work queue entry and its packet counts are block
/// RAM, read `L` cycles before the step that uses them), waiting while the
/// FIFO is full.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Walk {
    /// After a SACK: the streams with a packet acknowledged (`touched`, a
    /// bit each), `stream` the one the next step looks at; a step
    /// completes the stream's head if it is done, else clears the
    /// stream's bit and moves to the next touched stream (a priority
    /// encoder).
    Done { conn: u32, touched: Vec<bool>, stream: u32 },
    /// After a failure: the culprit first (if `culprit_pending`), then
    /// every stream from `stream` on, a step per request (flushed, the
    /// culprit skipped) and one per stream to find it empty.
    Fail { conn: u32, culprit: Option<(u32, u32)>, culprit_pending: bool, st: u8, stream: u32 },
}

impl Walk {
    pub fn conn(&self) -> u32 {
        match self {
            Walk::Done { conn, .. } | Walk::Fail { conn, .. } => *conn,
        }
    }

    /// The stream and work queue slot the next step looks at (its reads),
    /// given each stream's head.
    pub fn at(&self, head: impl Fn(u32) -> u32) -> (u32, u32) {
        match self {
            Walk::Fail { culprit: Some(c), culprit_pending: true, .. } => *c,
            Walk::Done { stream, .. } | Walk::Fail { stream, .. } => (*stream, head(*stream)),
        }
    }
}

/// What a step of the completion walk reads for the slot it looks at
/// ([`Walk::at`]): its stream's pointers and the slot's packet counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WalkRead {
    pub head: u32,
    pub pend: u32,
    pub tail: u32,
    pub issued: u32,
    pub acked: u32,
}

/// What a step of the completion walk does at the slot it looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WalkAct {
    /// The request there completes with this status.
    pub cqe: Option<u8>,
    /// The stream's head moves past it.
    pub advance: bool,
    /// The stream is found empty by a failure: its `pend` is set to its
    /// `tail` and its bytes cut to 0.
    pub drain: bool,
    /// The slot's acked count is set to its issued count (a flushed
    /// request's packets are never acknowledged).
    pub equalize: bool,
}

/// One step of the completion walk, the combinational core the RTL builds
/// as one unit (`mrnic_hdl::tx_engine::walk_step`): what it does at the
/// slot [`Walk::at`] names, given that slot's reads, and the walk after it
/// (`None`: done). After a SACK the stream's head completes with SUCCESS if
/// it is before `pend` (all its bytes cut) and all its packets are
/// acknowledged; else the stream is dropped from the walk. After a
/// failure the culprit completes first with the failure's status, then
/// every request in msn order per stream is flushed (WR_FLUSH, or the
/// status itself when there is no culprit), the culprit's own slot
/// skipped.
pub fn walk_next(w: &Walk, r: &WalkRead, streams: u32) -> (Option<Walk>, WalkAct) {
    match w.clone() {
        Walk::Done { conn, mut touched, stream: s } => {
            let act = if r.head != r.pend && r.issued == r.acked {
                WalkAct { cqe: Some(status::SUCCESS), advance: true, ..Default::default() }
            } else {
                touched[s as usize] = false;
                WalkAct::default()
            };
            let next = (s..streams).find(|&t| touched[t as usize]);
            (next.map(|stream| Walk::Done { conn, touched, stream }), act)
        }
        Walk::Fail { conn, culprit, culprit_pending: true, st, stream } => (
            Some(Walk::Fail { conn, culprit, culprit_pending: false, st, stream }),
            WalkAct { cqe: Some(st), ..Default::default() },
        ),
        Walk::Fail { conn, culprit, culprit_pending: false, st, stream } => {
            if r.head == r.tail {
                let next = stream + 1;
                let w = Walk::Fail { conn, culprit, culprit_pending: false, st, stream: next };
                ((next < streams).then_some(w), WalkAct { drain: true, ..Default::default() })
            } else {
                let flush = if culprit.is_some() { status::WR_FLUSH } else { st };
                let cqe = (culprit != Some((stream, r.head))).then_some(flush);
                (Some(w.clone()), WalkAct { cqe, advance: true, equalize: true, ..Default::default() })
            }
        }
    }
}

/// A frame in the output queue: bytes before the payload (Ethernet, IPv4,
/// UDP, transport header; checksums filled when the payload is in), the
/// payload read from host memory, and its state.
#[derive(Debug, Clone)]
struct Frame {
    head: Vec<u8>,
    payload: Vec<u8>,
    /// Payload bytes to read.
    len: u32,
    /// (MAC, IPv4) of the peer, from the context the decision read: the
    /// output never reads the context at a frame boundary.
    to: (u64, u32),
    /// Next address to request on AR, and the beat-aligned end.
    ar_next: u64,
    ar_end: u64,
    /// Beats still expected on R, and beats taken.
    r_left: u64,
    r_got: u64,
    /// First byte of the payload within the first beat read.
    skip: u32,
    err: bool,
    sport: u16,
    plane: u8,
    conn: u32,
    /// The work request the payload belongs to (stream, slot).
    wr: Option<(u32, u32)>,
}

impl Frame {
    fn ready(&self) -> bool {
        self.ar_next >= self.ar_end && self.r_left == 0
    }
}

/// An answer to send (SACK or NACK), framed when the output is free.
#[derive(Debug, Clone)]
struct Answer {
    hdr: Vec<u8>,
    sport: u16,
    plane: u8,
    /// The (MAC, IPv4) it goes to: read from the connection's addresses
    /// when the answer entered the queue, or named by a `direct` NACK.
    to: (u64, u32),
    /// Edges until `to` is in hand: the addresses table answers `L`
    /// cycles after the read the queue's write issues (0 for `direct`).
    wait: u32,
}

/// A data or PROBE frame as the scheduler hands it to the output stage
/// (observability: [`OutputTap`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FramePush {
    /// The transport header (40 bytes for data, 16 for a PROBE).
    pub hdr: Vec<u8>,
    /// Payload host address and length (0 for a PROBE).
    pub addr: u64,
    pub len: u32,
    pub dst_mac: u64,
    pub dst_ip: u32,
    pub sport: u16,
    pub plane: u8,
    pub conn: u32,
    /// The work request (stream, slot); `None` for a PROBE.
    pub wr: Option<(u32, u32)>,
}

/// An answer as it enters the 2-entry answer queue (observability:
/// [`OutputTap`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AnswerPush {
    /// The transport header (52 bytes for a SACK, 20 for a NACK).
    pub hdr: Vec<u8>,
    pub sport: u16,
    pub plane: u8,
    /// A `direct` NACK: `to` named by the NACK, startable at once.
    pub direct: bool,
    /// The (MAC, IPv4) it goes to.
    pub to: (u64, u32),
}

/// What entered and left the output stage in one cycle, recorded when
/// [`Taps::output`] is `Some` (off by default), so the output
/// stage's RTL unit can be replayed against this model cycle by cycle.
/// Recording changes nothing the engine does.
#[derive(Debug, Clone, Default)]
pub struct OutputTap {
    /// Frames queued and answers queued at the start of the cycle.
    pub frames: usize,
    pub answers: usize,
    /// The head frame's (conn, work request), as at the start of the cycle.
    pub head: Option<(u32, Option<(u32, u32)>)>,
    pub frame: Option<FramePush>,
    pub answer: Option<AnswerPush>,
    /// As the frame boundary sees them: the completion walk is busy (or
    /// a NACK's reads are in flight, whose answer may start one), and the
    /// head frame's connection has failed.
    pub walk_busy: bool,
    pub head_failed: bool,
    /// A frame whose read failed was dropped and its request failed:
    /// (conn, work request).
    pub fail: Option<(u32, Option<(u32, u32)>)>,
    /// The queued frames' connections at the start of the cycle, head
    /// first (what a setup asks about: `tx_output`'s `m_qry_queued`).
    pub conns: Vec<u32>,
    /// An answer started on `m_axis` (`stat_tx_answer`).
    pub answer_started: bool,
}

/// A completion walk started in one cycle ([`WalkTap::start`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkStart {
    pub walk: Walk,
    /// Started by the output stage's failed payload read (after every
    /// other unit in the cycle), not by the acknowledgement unit, the
    /// commit or a reopen.
    pub read_failed: bool,
}

/// A step of the completion walk ([`WalkTap::step`]): the walk as it
/// stood, the slot it looked at ([`Walk::at`]) and what it read there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkStepTap {
    pub walk: Walk,
    pub stream: u32,
    pub slot: u32,
    pub read: WalkRead,
    pub req: WorkReq,
}

/// The slot a running walk's next step looks at, and what the work queue
/// entry and packet counts hold there ([`WalkTap::rd`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalkRdTap {
    pub conn: u32,
    pub stream: u32,
    pub slot: u32,
    pub req: WorkReq,
    pub issued: u32,
    pub acked: u32,
}

/// A stream's (head, pend, tail), as the walk reads them off its word.
pub type WalkWord = (u32, u32, u32);

/// What entered and left the completion walk in one cycle, recorded when
/// [`Taps::walk`] is `Some` (off by default), so the walk's RTL
/// unit can be replayed against this model cycle by cycle. Recording
/// changes nothing the engine does.
#[derive(Debug, Clone, Default)]
pub struct WalkTap {
    /// A walk ran at the start of the cycle.
    pub running: bool,
    /// The acknowledgement unit had no step of its own left (its busy
    /// count was 0): a running walk may step.
    pub ack_free: bool,
    pub start: Option<WalkStart>,
    pub step: Option<WalkStepTap>,
    /// A completion the post pushed for a request it flushed.
    pub flush: Option<Cqe>,
    /// The walking connection and its streams' (head, pend, tail): as the
    /// step read them, else as they stood with a walk running after the
    /// cycle.
    pub words: Option<(u32, Vec<WalkWord>)>,
    /// The walk runs after the cycle's steps and starts (a failed read's
    /// start aside), as the output stage and the post see it.
    pub busy: bool,
    /// The completion FIFO had room for the post's flush (after the
    /// cycle's pop and the walk's push).
    pub room: bool,
    /// The slot the running walk looks at next, with its contents, unless
    /// the walk was started by a failure in this cycle.
    pub rd: Option<WalkRdTap>,
}

/// A stream's queue state and its connection's context, as the post reads
/// them ([`PostTap::rd`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PostRead {
    pub conn: u32,
    pub stream: u32,
    /// The connection is open and has not failed.
    pub live: bool,
    pub pend_streams: u32,
    pub head: u32,
    pub pend: u32,
    pub tail: u32,
    pub next_msn: u32,
    pub next_rq_seq: u32,
}

/// The post of one cycle ([`PostTap::post`]): the request at the write
/// stage, what the post rule read (the state as it is in the cycle) and
/// what it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PostAct {
    pub req: WorkReq,
    pub read: PostIn,
    pub out: PostOut,
}

/// What entered and left the post pipeline in one cycle, recorded when
/// [`Taps::post`] is `Some` (off by default), so the post's RTL
/// unit can be replayed against this model cycle by cycle: the read a
/// request issues as it leaves the FIFO's head, the writes of the other
/// units to the fields the post reads (in the order the cycle makes
/// them), and the post itself. Recording changes nothing the engine does.
#[derive(Debug, Clone, Default)]
pub struct PostTap {
    /// A request left the FIFO's head into the pipeline and issued its
    /// reads: its connection and stream, and what they held at the start
    /// of the cycle, before any of the cycle's writes (what a read-first
    /// block RAM returns `L` cycles later).
    pub rd: Option<PostRead>,
    /// The commit cut new data: (conn, stream, its new `pend`, the
    /// connection's new `pend_streams`).
    pub cut: Option<(u32, u32, u32, u32)>,
    /// The walk moved a stream's head on: (conn, stream, new head).
    pub sw_head: Option<(u32, u32, u32)>,
    /// The walk drained a stream: (conn, stream, new pend).
    pub sw_drain: Option<(u32, u32, u32)>,
    /// A connection failed (the commit's retry limit, a NACK, a reopen),
    /// before the post in the cycle.
    pub fail: Option<u32>,
    /// Path 0 of a connection not live was set up: its context and every
    /// stream's word start again.
    pub open: Option<u32>,
    pub post: Option<PostAct>,
    /// A connection failed by the output stage's failed payload read,
    /// after the post in the cycle.
    pub rdfail: Option<u32>,
    /// What the FIFO's head request would read, as at the start of the
    /// cycle (moved to `rd` when it leaves the head).
    head_read: Option<PostRead>,
    /// A setup record waits or runs until it acts: no request is taken
    /// (`tx_post`'s `s_open_busy`).
    pub open_busy: bool,
}

/// The piece of work the acknowledgement unit starts in a step, in its
/// priority order ([`AckTap::go`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckGo {
    Rto,
    Upd,
    /// A SACK's next stage (`sack_stage`).
    Stage,
    Sack,
    Nack,
    /// The RNR queue's head, due (acted on if its tag still matches).
    Rnr,
    /// The window-probe queue's head, due.
    Wprobe,
    /// The tail-timer hit (acted on if still due).
    Tail,
}

/// What enters and leaves the acknowledgement unit's control in one clock
/// ([`Taps::ack`]), so that a clocked unit can be replayed against
/// this model cycle by cycle: the busy count, what the unit's turn sees
/// (in the order the cycle makes it), the step it starts, the pushes into
/// its timer queues and the tail-timer scanner. Recording changes nothing
/// the engine does.
#[derive(Debug, Clone, Default)]
pub struct AckTap {
    /// The clock ran the engine's units (not reset, not the clear sweep).
    pub run: bool,
    /// The busy count at the start of the cycle.
    pub busy: u32,
    /// A connection failed before the unit's turn (the commit's retry
    /// limit): the count became at least `PATHS x tx_ring_depth`.
    pub hold_pre: bool,
    /// The count at the unit's turn was 0.
    pub free: bool,
    /// At the turn: events waiting for the event FIFO, a walk running,
    /// the scheduler idle.
    pub pend_evt: bool,
    pub walk: bool,
    pub sched_idle: bool,
    /// At the turn: the input registers holding work.
    pub rto: bool,
    pub upd: bool,
    pub sack: bool,
    pub nack: bool,
    /// At the turn: a SACK between stages, and whether it waits for
    /// path_telemetry's answers; `tel_settled`.
    pub cont: Option<bool>,
    pub settled: bool,
    /// At the turn: the RNR queue's head (conn, path, psn, until, tag)
    /// and the window-probe queue's (conn, at).
    pub rnr_head: Option<(u32, u32, u32, u32, u32)>,
    pub wp_head: Option<(u32, u32)>,
    /// At the start of the cycle (nothing before the turn changes them):
    /// the tail-timer hit waiting, the RNR tag a push gets this cycle,
    /// the connection the scanner compares.
    pub hit: Option<u32>,
    pub rnr_tag: u32,
    pub scan: u32,
    /// The step started, and the busy count its handler set (before the
    /// unit adds the read latency).
    pub go: Option<AckGo>,
    pub handler_busy: u32,
    /// A NACK started an RNR back-off (conn, path, psn, until, tag); the
    /// decision armed a window probe (conn, at).
    pub rnr_push: Option<(u32, u32, u32, u32, u32)>,
    pub wp_push: Option<(u32, u32)>,
    /// Whether the scanner's connection was due (None: a hit was still
    /// waiting, nothing compared).
    pub scan_due: Option<bool>,
    /// After the turn: a reopen's ring clear (count at least
    /// `tx_ring_depth`), a failure (at least `PATHS x tx_ring_depth`).
    pub hold_open: bool,
    pub hold_fail: bool,
    /// After the turn: a live SACK's reads answered, `L` cycles after its
    /// step, and its two passes raise the count to at least this
    /// (`2 + 2 x span`; architecture.md, tx_engine item 13).
    pub hold_sack: Option<u32>,
    /// After the turn: a SACK stage's walk issues a ring read, holding
    /// the count at least at 2 (item 14).
    pub hold_stage: bool,
    /// The queues' lengths after the cycle.
    pub rnr_len: usize,
    pub wp_len: usize,
    /// Where the cycle is: 0 before the unit's turn, 1 in it, 2 after.
    phase: u8,
}

/// One path of the deciding connection as the decision reads the
/// engine's mirror ([`SchedRead::paths`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SchedPath {
    pub plane: u8,
    pub timed_out: bool,
    pub next_psn: u32,
    pub cum_acked: u32,
    pub probe_pending: bool,
    pub clr: bool,
}

/// What a decision reads besides the telemetry view ([`SchedTap::read`]):
/// the deciding connection's context, retransmit queue head and its ring
/// slot, its paths' mirrors (`npaths` of them) and streams' words, and the
/// NIC's plane marks and port levels, as they stand when it decides.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SchedRead {
    pub conn: u32,
    pub npaths: u32,
    pub inflight_bytes: u64,
    pub cap: u32,
    pub rr_stream: u32,
    /// A window probe is armed (`window_probe_at` set).
    pub wprobe_armed: bool,
    /// The window-probe FIFO is full.
    pub wp_full: bool,
    /// The retransmit queue's head (path, psn), and whether its ring slot
    /// is still queued for retransmission (else it is stale).
    pub retx: Option<(u32, u32)>,
    pub queued: bool,
    pub paths: Vec<SchedPath>,
    pub words: Vec<StreamWord>,
    pub marks: Vec<Option<u32>>,
    pub port_ready: u32,
    pub ts: u32,
}

/// What the commit read and wrote in one cycle, recorded when
/// [`Taps::commit`] is `Some` (off by default) in the cycle the
/// commit happens, so its RTL unit can be replayed against this model
/// cycle by cycle. Recording changes nothing the engine does.
#[derive(Debug, Clone, Default)]
pub struct CommitTap {
    pub commit: Option<CommitRec>,
}

/// One commit: the decided packet, the stores it read and what it wrote
/// ([`CommitTap::commit`]).
#[derive(Debug, Clone, Default)]
pub struct CommitRec {
    pub conn: u32,
    /// A retransmission of (path, psn); else new data of `stream`.
    pub retx: Option<(u32, u32)>,
    pub stream: u32,
    pub phys: u32,
    /// Paths one more packet fills, a bit each (new data).
    pub full_after: u32,
    /// The connection had failed: the commit did nothing.
    pub failed: bool,
    /// New data: what the cut read (its stores as the commit found them),
    /// the request at `pend` and its slot's issued count before the commit
    /// (a retransmission: `wr`, `msn`, `rq_seq` of its slot's request).
    pub cut_in: CutIn,
    pub wr: WorkReq,
    pub msn: u32,
    pub rq_seq: u32,
    pub issued: u32,
    /// The context's peer and the mirror of `phys` (gen, port, plane).
    pub remote_id: u32,
    pub dst_mac: u64,
    pub dst_ip: u32,
    pub gen: u8,
    pub sport: u16,
    pub plane: u8,
    pub rr_stream: u32,
    /// New data: the cut.
    pub cut: Option<CutOut>,
    /// The time of the commit.
    pub ts: u32,
    /// A retransmission: its ring slot as read (the request `wr`, `msn`
    /// and `rq_seq` are then the one it belongs to), and the `tx_seq` and
    /// `gen` of its path's mirror (`path`, not `phys`).
    pub slot_in: Option<Slot>,
    pub tx_seq: u32,
    /// What the commit wrote: the ring slot, the packet's path's next
    /// `tx_seq`, the telemetry event's kind, and the frame pushed (its
    /// header, payload address and length).
    pub slot_out: Option<Slot>,
    pub tx_seq_out: u32,
    pub evt_kind: u8,
    pub hdr: Vec<u8>,
    pub addr: u64,
    pub len: u32,
    /// A retransmission reached the retry limit: the connection failed
    /// with (culprit stream, culprit work queue slot, status).
    pub fail: Option<(u32, u32, u8)>,
}

/// What a NACK's step reads (the connection context, the path's mirror
/// and the NACKed psn's ring slot), answering `L` cycles after the step.
#[derive(Debug, Clone, Copy, Default)]
pub struct NackRead {
    pub open: bool,
    pub failed: bool,
    pub npaths: u32,
    pub cum_acked: u32,
    pub next_psn: u32,
    pub slot: Option<Slot>,
}

/// A NACK between its step and its reads' answer.
#[derive(Debug, Clone, Copy)]
struct NackAns {
    nack: NackIn,
    ts: u32,
    read: NackRead,
    /// Cycles left until the reads answer.
    wait: u32,
}

/// What the NACK handler did at its reads' answer ([`NackTap::ans`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct NackAct {
    /// The record and the time of its step.
    pub nack: NackIn,
    pub ts: u32,
    /// The reads as they answered.
    pub read: NackRead,
    /// The telemetry event's kind (NACK or RNR), for a NACK on a live
    /// packet; the path's `timed_out` is cleared with it.
    pub evt: Option<u8>,
    /// The ring slot as written back (an RNR back-off or a BAD_HDR
    /// retransmission).
    pub slot: Option<Slot>,
    /// An RNR back-off pushed: (until, tag).
    pub rnr: Option<(u32, u32)>,
    /// The packet was queued for retransmission (BAD_HDR).
    pub retx: bool,
    /// The connection failed: (culprit stream and work queue slot, status).
    pub fail: Option<(Option<(u32, u32)>, u8)>,
    /// Counted as stale (`stat_nack_stale`).
    pub stale: bool,
    /// The RNR FIFO was full as the step read it (it holds still until
    /// the answer: only this unit pops it, and only a NACK pushes).
    pub rnr_full: bool,
    /// A back-off refused for it (`stat_rnr_full`).
    pub rnr_refused: bool,
}

/// What the acknowledgement unit's NACK handler did, recorded when
/// [`Taps::nack`] is `Some` (off by default): the step's record
/// in the cycle it starts, the actions in the cycle its reads answer, so
/// its RTL unit can be replayed against this model cycle by cycle.
/// Recording changes nothing the engine does.
#[derive(Debug, Clone, Default)]
pub struct NackTap {
    /// A step: the record, `ts_now` and the busy count the handler set.
    pub step: Option<(NackIn, u32, u32)>,
    pub ans: Option<NackAct>,
}

/// The PROBE send ([`Taps::probe`], cleared every cycle): the start that
/// chose the connection, and `L` cycles later what its reads answered
/// (the connection's PROBE queue head, its context's peer, the path's
/// mirror) and the PROBE sent.
#[derive(Debug, Clone, Default)]
pub struct ProbeTap {
    /// The start: (conn, `ts_now`).
    pub start: Option<(u32, u32)>,
    pub sent: Option<ProbeSent>,
}

/// A PROBE sent ([`ProbeTap::sent`]): the reads, as the start's cycle
/// left the tables, and the header.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProbeSent {
    pub conn: u32,
    /// The PROBE queue's head: the path PROBEd.
    pub path: u32,
    pub ts: u32,
    pub remote_id: u32,
    pub dst_mac: u64,
    pub dst_ip: u32,
    /// The path's mirror: its generation, next psn, tx_seq (the PROBE
    /// takes it, the mirror's moves on), port and plane.
    pub gen: u8,
    pub next_psn: u32,
    pub tx_seq: u32,
    pub sport: u16,
    pub plane: u8,
    pub hdr: Vec<u8>,
}

/// The connection setup ([`Taps::open`], cleared every cycle): the
/// record taken and what its reads answered `L` cycles later, when it
/// acts, and a live connection flushed before its path 0 is taken.
#[derive(Debug, Clone, Default)]
pub struct OpenTap {
    /// The record taken: its reads issued this cycle.
    pub take: Option<Open>,
    /// The record's path 0 found the connection live: it fails
    /// (WR_FLUSH) and the record waits for the flush.
    pub flush: Option<u32>,
    /// The record acts: what its reads answered.
    pub act: Option<OpenAct>,
    /// A ring slot cleared this cycle: (conn, path, slot).
    pub clear: Option<(u32, u32, u32)>,
    /// The rest of the engine would let the held record be taken this
    /// cycle (`tx_open`'s `s_free`; recorded while no setup's reads are
    /// in flight).
    pub free: bool,
    /// While a record is held (or arrives this cycle: the input register
    /// is read in the cycle it is written): its connection, and whether
    /// that is open and has not failed (the ready set's registers;
    /// `tx_open`'s `m_live_conn` and `s_live`).
    pub live: Option<(u32, bool)>,
    /// A setup taken before this cycle has not finished (`tx_open`'s
    /// `m_running`).
    pub running: bool,
    /// A record waits or runs until it acts (`tx_open`'s `m_wr_hold`).
    pub wr_hold: bool,
}

/// A setup acting ([`OpenTap::act`]): the record and what its reads
/// answered, as the take's cycle left the tables.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OpenAct {
    pub rec: Open,
    /// Every stream's `tail` (path 0: head, pend and tail take it).
    pub tails: Vec<u32>,
    /// The context's DEAD bits before the path's is cleared.
    pub dead: u32,
}

/// What one of the acknowledgement unit's own steps read (the timer
/// queues' heads and the tail-timer hit), as its reads answer `L` cycles
/// after the step; the tables as they stood at the step, since nothing
/// writes them in between (`TxEngine::timer_tick`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerRead {
    /// The RNR queue's head and the ring slot it names.
    Rnr { conn: u32, path: u32, psn: u32, tag: u32, slot: Option<Slot> },
    /// The window-probe queue's head and its connection: the deadline
    /// armed in the context, whether it failed, its paths, the context's
    /// DEAD bits and the paths' PROBE state (`probe_pending` in the
    /// mirrors, `probe_q` in the context), a bit per path.
    Wprobe { conn: u32, at: u32, armed: Option<u32>, failed: bool, npaths: u32, dead: u32, pending: u32, probe_q: u32 },
    /// The tail-timer hit and its connection's context, with the step's
    /// `ts_now` (the deadline is compared with it).
    Tail { conn: u32, ts: u32, open: bool, failed: bool, tail_at: Option<u32> },
}

/// What a timer step did when its reads answered ([`TimerTap::ans`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimerAct {
    pub read: TimerRead,
    /// The entry or hit was still live (the RNR tag matched a waiting
    /// slot; the probe was still armed on a live connection; the tail
    /// timer still due); a stale one does nothing.
    pub live: bool,
    /// RNR: the slot's wait ended and, when it was not queued already, it
    /// was queued and pushed into the retransmit queue.
    pub retx: bool,
    /// Window probe: the path PROBEd (the first path not DEAD, when its
    /// PROBE is neither pending nor queued).
    pub probe: Option<u32>,
}

/// The timer queues (RNR back-offs and window probes) and the unit's
/// steps that serve them and the tail timer, recorded when [`Taps::timer`]
/// is `Some` (off by default, cleared every cycle), so that their RTL unit
/// can be replayed against this model cycle by cycle. Recording changes
/// nothing the engine does.
#[derive(Debug, Clone, Default)]
pub struct TimerTap {
    /// At the start of the cycle: the queues' lengths and heads (the RNR
    /// head's deadline, the window probe's).
    pub rnr_len: usize,
    pub wp_len: usize,
    pub rnr_head: Option<(u32, u32, u32, u32, u32)>,
    pub wp_head: Option<(u32, u32)>,
    /// Pushes: an RNR back-off (conn, path, psn, until, tag) from the NACK
    /// handler; a window probe armed (conn, at) by a decision, or refused
    /// for the full queue.
    pub rnr_push: Option<(u32, u32, u32, u32, u32)>,
    pub wp_push: Option<(u32, u32)>,
    pub wp_refused: bool,
    /// A step: which, with the hit's connection for the tail step, and
    /// `ts_now`.
    pub go: Option<(AckGo, u32, u32)>,
    /// A window-probe pop woke every stalled connection (a probe had been
    /// refused since the last pop).
    pub unstall_all: bool,
    /// The step's reads answered.
    pub ans: Option<TimerAct>,
}

/// A path's mirror as the SACK handler reads and writes it
/// ([`SackRec`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SackMirror {
    pub next_psn: u32,
    pub cum_acked: u32,
    pub acked_seq: u32,
    pub sport: u16,
    pub plane: u8,
    pub probe_pending: bool,
    pub probe_ts: u16,
    pub probe_seq: u32,
    pub srtt: u32,
    pub rttvar: u32,
    pub min_rtt: u32,
    pub timed_out: bool,
}

impl SackMirror {
    fn of(m: &PathM) -> SackMirror {
        SackMirror {
            next_psn: m.next_psn,
            cum_acked: m.cum_acked,
            acked_seq: m.acked_seq,
            sport: m.sport,
            plane: m.plane,
            probe_pending: m.probe_pending,
            probe_ts: m.probe_ts,
            probe_seq: m.probe_seq,
            srtt: m.srtt,
            rttvar: m.rttvar,
            min_rtt: m.min_rtt,
            timed_out: m.timed_out,
        }
    }
}

/// One step of `on_sack` ([`SackTap::step`]): what it read (as the
/// tables stood before the step) and what the tables held after it.
#[derive(Debug, Clone, Default)]
pub struct SackRec {
    pub sack: SackIn,
    pub ts: u32,
    /// The busy count the handler set in the step (1, item 13), and the
    /// count its reads' answer raises it to (a live SACK's `2 + 2 x
    /// span`).
    pub busy: u32,
    pub hold: Option<u32>,
    /// The context as read.
    pub open: bool,
    pub failed: bool,
    pub npaths: u32,
    pub rack_sent: Option<u32>,
    pub rack_rtt: u32,
    pub cc: Cc,
    /// `last_progress` of each of the connection's paths.
    pub last_progress: Vec<u32>,
    /// The mirror of `path_id mod PATHS`, and the plane marks, as read.
    pub mirror: SackMirror,
    pub marks: Vec<bool>,
    /// The ring slots from `cum_acked` to `next_psn` of that path, as read
    /// (empty unless the SACK is live).
    pub slots: Vec<Option<Slot>>,
    /// Counted as stale (`stat_sack_stale`).
    pub stale: bool,
    /// After the step: the context's RACK and congestion state, the
    /// paths' `last_progress`, the mirror, the marks and the slots.
    pub rack_sent_after: Option<u32>,
    pub rack_rtt_after: u32,
    pub cc_after: Cc,
    pub last_progress_after: Vec<u32>,
    pub mirror_after: SackMirror,
    pub marks_after: Vec<bool>,
    pub slots_after: Vec<Option<Slot>>,
    /// The events pushed and the psns queued for retransmission, in order.
    pub events: Vec<tel::Event>,
    pub retx: Vec<u32>,
    /// The continuation: (wait, touched streams, stream_id,
    /// completed_msn).
    pub cont: Option<(bool, Vec<bool>, u32, u32)>,
    /// The paths whose `last_progress` the step wrote, a bit each.
    pub progress: u32,
}

/// What the acknowledgement unit's SACK handler read and wrote in a step,
/// recorded when [`Taps::sack`] is `Some` (off by default) in the
/// cycle the step starts, so its RTL unit can be replayed against this
/// model cycle by cycle. Recording changes nothing the engine does.
#[derive(Debug, Clone, Default)]
pub struct SackTap {
    pub step: Option<SackRec>,
    /// The paths whose `last_progress` the step wrote (a bit each; a
    /// write of an equal value shows in no table).
    pub progress: u32,
}

/// A path's mirror as a SACK stage reads it ([`StageRec::mirrors`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StageMirror {
    pub next_psn: u32,
    pub cum_acked: u32,
    pub srtt: u32,
    pub rttvar: u32,
    pub probe_pending: bool,
}

/// One step of `sack_stage` ([`StageTap::step`]): the continuation it ran,
/// what it read (as the tables stood before the step) and what the tables
/// held after it.
#[derive(Debug, Clone, Default)]
pub struct StageRec {
    pub ts: u32,
    pub conn: u32,
    /// The stage, and whether the continuation is the tail timer's.
    pub stage: SackStage,
    pub tail: bool,
    pub touched: Vec<bool>,
    pub stream_id: u32,
    pub completed_msn: u32,
    /// The connection has failed: the stage does nothing.
    pub dead: bool,
    /// The context as read.
    pub npaths: u32,
    pub rack_sent: Option<u32>,
    pub rack_rtt: u32,
    pub pend_streams: u32,
    pub probe_q: u32,
    pub last_progress: Vec<u32>,
    /// Every path's mirror, and the record's stream's `remote_completed`
    /// (0 for a stream_id past the streams).
    pub mirrors: Vec<StageMirror>,
    pub remote_completed: u32,
    /// Per path, the ring slots from `cum_acked` to `next_psn` as read.
    pub slots: Vec<Vec<Option<Slot>>>,
    /// The walk ([`stage_cycles`]) and its cycles (the holds' count).
    pub walk: Vec<StageWalk>,
    pub cycles: u32,
    /// After the step: the slots, the retransmit pushes (path, psn), the
    /// events, the PROBEs queued, the tail timer armed (Some: the stage
    /// armed it, to the inner value), the stream's `remote_completed` and
    /// whether the window probe was cleared, whether a walk started, and
    /// the continuation (stage, wait).
    pub slots_after: Vec<Vec<Option<Slot>>>,
    pub retx: Vec<(u32, u32)>,
    pub events: Vec<tel::Event>,
    pub probes: Vec<u32>,
    pub tail_at: Option<Option<u32>>,
    pub remote_completed_after: u32,
    pub wprobe_cleared: bool,
    pub walk_started: bool,
    pub cont: Option<(SackStage, bool)>,
}

/// A continuation as it is made ([`StageTap::cont`]).
#[derive(Debug, Clone, Default)]
pub struct StageCont {
    pub conn: u32,
    /// The tail timer's, not a SACK's.
    pub tail: bool,
    pub wait: bool,
    pub touched: Vec<bool>,
    pub stream_id: u32,
    pub completed_msn: u32,
    /// The SACK's span (its passes' length).
    pub span: u32,
}

/// What the acknowledgement unit's SACK stages read and wrote, recorded
/// when [`Taps::stage`] is `Some` (off by default), so their RTL
/// unit can be replayed against this model cycle by cycle. Recording
/// changes nothing the engine does.
#[derive(Debug, Clone, Default)]
pub struct StageTap {
    /// A stage's step this cycle.
    pub step: Option<StageRec>,
    /// A SACK's step left a continuation (`tx_sack` hands it over at `t +
    /// 2L + 2 x span`), or the tail timer's step started its stages.
    pub cont: Option<StageCont>,
    /// Connections failed this cycle.
    pub fails: Vec<u32>,
}

/// What the acknowledgement unit's timeout and update handlers read and
/// wrote in a step, recorded when [`Taps::rto`] is `Some` (off by
/// default) in the cycle the step starts, so their RTL unit can be
/// replayed against this model cycle by cycle. Recording changes nothing
/// the engine does.
#[derive(Debug, Clone, Default)]
pub struct RtoTap {
    pub step: Option<RtoRec>,
}

/// One step of `on_rto` or `on_upd` ([`RtoTap::step`]).
#[derive(Debug, Clone, Default)]
pub struct RtoRec {
    /// The record acted on: an `m_rto` (timeout) or else an update.
    pub rto: Option<tel::Rto>,
    pub upd: Option<tel::Upd>,
    pub ts: u32,
    /// The connection context as read: open, failed, the PROBE bits, the
    /// path count and the DEAD bits.
    pub open: bool,
    pub failed: bool,
    pub probe_q: u32,
    pub npaths: u32,
    pub dead: u32,
    /// The path's mirror as read.
    pub plane: u8,
    pub next_psn: u32,
    pub cum_acked: u32,
    /// The NIC's plane marks as read.
    pub marks: Vec<Option<u32>>,
    /// The ring slots from `cum_acked` to `next_psn` as read, in psn
    /// order: `None` empty, else (queued, rnr_wait).
    pub slots: Vec<Option<(bool, bool)>>,
    /// The busy count the handler set (with `fail`, as the failure's
    /// ring clear raised it: at least `PATHS x tx_ring_depth`).
    pub busy: u32,
    /// The context's DEAD bits after the handler.
    pub dead_after: u32,
    /// The handler failed the connection: every path below `npaths` DEAD
    /// (TRANSPORT_RETRY_EXCEEDED, no culprit).
    pub fail: bool,
    /// The mirror after the handler: state, sport, gen, probe_pending,
    /// timed_out, clr.
    pub state: u8,
    pub sport: u16,
    pub gen: u8,
    pub probe_pending: bool,
    pub timed_out: bool,
    pub clr: bool,
    /// The plane mark written (plane, until), if any.
    pub mark: Option<(u8, u32)>,
    /// A PROBE queued on the path.
    pub probe: bool,
    /// The psns pushed into the retransmit queue, in order.
    pub retx: Vec<u32>,
}

/// A decided packet handed to the commit ([`SchedTap::commit`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SchedCommit {
    pub conn: u32,
    /// A retransmission of (path, psn); else new data of `stream`.
    pub retx: Option<(u32, u32)>,
    pub stream: u32,
    /// The path path_selector chose.
    pub phys: u32,
    /// Paths one more packet fills, a bit each (new data only).
    pub full_after: u32,
    /// The retransmission resends a packet RNR held (coverage only).
    pub rnr_resend: bool,
}

/// What entered and left the scheduler's control in one cycle, recorded
/// when [`Taps::sched`] is `Some` (off by default), so its RTL
/// unit can be replayed against this model cycle by cycle. Recording
/// changes nothing the engine does.
#[derive(Debug, Clone, Default)]
pub struct SchedTap {
    /// The state at the start of the cycle: 0 idle, 1 telemetry read, 2
    /// decide (a stale head popped), 3 path request; the read or request
    /// handshook; the decide state's wait.
    pub state: u8,
    pub issued: bool,
    pub wait: u32,
    /// A completion walk runs at the start of the cycle.
    pub walk_running: bool,
    /// Idle: the engine's `may_start` but for the frame queue, and the
    /// frames queued.
    pub start_ok: bool,
    pub frames: usize,
    /// A start looked at the ready set: per connection (64 a word) it has
    /// work, and it has a PROBE queued.
    pub ready: Option<(Vec<u64>, Vec<u64>)>,
    /// A start sent a PROBE of this connection.
    pub probe: Option<u32>,
    /// A decision's reads.
    pub read: Option<SchedRead>,
    /// A stale retransmit queue head was popped (conn).
    pub pop: Option<u32>,
    /// The decision found nothing to send: (conn, port_wait).
    pub stall: Option<(u32, bool)>,
    /// A window probe was armed (conn).
    pub wprobe: Option<u32>,
    /// A window probe was due but its FIFO was full: none armed.
    pub wprobe_full: bool,
    /// A path request was formed and its paths' credit clears taken:
    /// (conn, the clears).
    pub clr: Option<(u32, u32)>,
    pub ring_full: bool,
    pub commit: Option<SchedCommit>,
    /// The scheduler is idle after the cycle's transition.
    pub idle_after: bool,
}

/// The taps of [`TxEngine`]: each records, when `Some`, what enters and
/// leaves one clocked unit so that its RTL can be replayed against the
/// model. They belong to the bench, not to the engine's state: a reset
/// keeps them, and recording changes nothing the engine does.
#[derive(Debug, Clone, Default)]
pub struct Taps {
    /// Set to `Some` to record, each clock, what enters and leaves the
    /// output stage ([`OutputTap`], overwritten every cycle); `None` (the
    /// default) records nothing.
    pub output: Option<OutputTap>,
    /// Set to `Some` to record, each clock, what enters and leaves the
    /// completion walk ([`WalkTap`], overwritten every cycle); `None` (the
    /// default) records nothing.
    pub walk: Option<WalkTap>,
    /// Set to `Some` to record, each clock, what enters and leaves the
    /// post pipeline ([`PostTap`], overwritten every cycle); `None` (the
    /// default) records nothing.
    pub post: Option<PostTap>,
    /// Set to `Some` to record, each clock, what enters and leaves the
    /// acknowledgement unit's control ([`AckTap`], overwritten every
    /// cycle); `None` (the default) records nothing.
    pub ack: Option<AckTap>,
    /// Set to `Some` to record, each clock, what enters and leaves the
    /// scheduler's control ([`SchedTap`], overwritten every cycle); `None`
    /// (the default) records nothing.
    pub sched: Option<SchedTap>,
    /// Set to `Some` to record what the commit read and wrote
    /// ([`CommitTap`], cleared every cycle); `None` (the default) records
    /// nothing.
    pub commit: Option<CommitTap>,
    /// Set to `Some` to record what the timeout and update handlers read
    /// and wrote ([`RtoTap`], cleared every cycle); `None` (the default)
    /// records nothing.
    pub rto: Option<RtoTap>,
    /// The NACK handler's tap ([`NackTap`]); `None` (off) by default.
    pub nack: Option<NackTap>,
    /// The SACK handler's tap ([`SackTap`], cleared every cycle); `None`
    /// (off) by default.
    pub sack: Option<SackTap>,
    /// The SACK stages' tap ([`StageTap`], cleared every cycle); `None`
    /// (off) by default.
    pub stage: Option<StageTap>,
    /// The timer queues' and their steps' tap ([`TimerTap`], cleared
    /// every cycle); `None` (off) by default.
    pub timer: Option<TimerTap>,
    /// The PROBE send's tap ([`ProbeTap`], cleared every cycle); `None`
    /// (off) by default.
    pub probe: Option<ProbeTap>,
    /// The connection setup's tap ([`OpenTap`], cleared every cycle);
    /// `None` (off) by default.
    pub open: Option<OpenTap>,
}

/// The cycle-accurate transmit engine. See the module docs.
pub struct TxEngine {
    p: TxEngineParams,
    ports: Vec<PortDef>,
    /// Port index by name: `decode` and `encode` map the typed records
    /// onto the ports every cycle, and a search of the list per name made
    /// them the hottest code of a top-level run.
    index: PortIndex,
    /// The port indices `encode` and `decode` ask for, in the order they
    /// ask (recorded once, on idle ports): each lookup checks the name at
    /// its position and only searches the index when it differs (a branch
    /// taken that the recording did not take).
    enc_seq: Vec<usize>,
    dec_seq: Vec<usize>,
    k: tel::Consts,
    conns: Vec<Conn>,
    paths: Vec<PathM>,
    streams: Vec<StreamQ>,
    wq: Vec<Wr>,
    /// Per work queue slot, packets cut (the commit's count) and packets
    /// acknowledged (the acknowledgement unit's), both free-running and
    /// never reset by a post: a slot's packets are all acknowledged when
    /// the two are equal, so each count has one writer (no read-modify-write
    /// of one memory by two units; architecture.md, tx_engine item 8). A
    /// failure's walk sets `acked` to `issued` for each request it flushes.
    wq_issued: Vec<u32>,
    wq_acked: Vec<u32>,
    ring: Vec<Option<Slot>>,
    /// RNR back-offs, in deadline order: (conn, path, psn, until, tag).
    /// Entries are never searched: one made stale (its path declared
    /// lost, its connection failed, its slot re-armed) is skipped when it
    /// reaches the head, because its tag no longer matches the slot's.
    rnr: std::collections::VecDeque<(u32, u32, u32, u32, u32)>,
    /// Tag of the next RNR entry (wraps; the FIFO never holds 2^32).
    rnr_next_tag: u32,
    /// Window probes, in deadline order: (conn, at).
    wprobe: std::collections::VecDeque<(u32, u32)>,
    /// A decision found the window-probe FIFO full since its last pop:
    /// the next pop wakes every stalled connection (a flash clear, as a
    /// plane mark's), the refused ones among them.
    wprobe_refused: bool,
    /// Plane health, one register per plane for the whole NIC: avoided
    /// for new data and rerouted retransmissions until this timestamp.
    planes: Vec<Option<u32>>,
    /// `port_ready` as it was this cycle (a bit per plane): the decision's
    /// path choice reads it, and a bit rising against it is a port that
    /// drained.
    port_ready: u32,
    /// A SACK between the stages of its loss detection.
    sack_cont: Option<SackCont>,
    /// The tail-timer scanner: the connection it compares next, and a hit
    /// waiting for the acknowledgement unit.
    tail_scan: u32,
    tail_hit: Option<u32>,
    /// path_telemetry has answered every event sent (computed each cycle).
    tel_settled: bool,
    // Input registers.
    wr_fifo: std::collections::VecDeque<WorkReq>,
    /// Requests taken from the `s_wr` FIFO's head whose reads (the stream's
    /// queue state, the connection's context) are in flight, with the
    /// cycles left until they answer: at most `L`, one entering per cycle.
    post_pipe: std::collections::VecDeque<(WorkReq, u32)>,
    open_reg: Option<Open>,
    sack_reg: Option<SackIn>,
    nack_reg: Option<NackIn>,
    upd_reg: Option<tel::Upd>,
    rto_reg: Option<tel::Rto>,
    csack_reg: Option<SackOut>,
    cnack_reg: Option<NackOut>,
    // Acknowledgement unit: cycles left of the current step, then its
    // events drain and its completions are walked.
    ack_busy: u32,
    pend_evt: std::collections::VecDeque<tel::Event>,
    walk: Option<Walk>,
    /// Cycles until the walk's read answers: its next step acts when 0
    /// (architecture.md, tx_engine item 9).
    walk_wait: u32,
    // Scheduler.
    sched: Sched,
    rr_conn: u32,
    /// Cycles since the last `m_evt` handshake (saturating).
    evt_quiet: u32,
    // Outputs.
    evt_fifo: std::collections::VecDeque<tel::Event>,
    cqe_fifo: std::collections::VecDeque<Cqe>,
    frames: std::collections::VecDeque<Frame>,
    answers: std::collections::VecDeque<Answer>,
    /// The frame on `m_axis`: bytes, next offset, plane.
    cur: Option<(Vec<u8>, usize, u8)>,
    stats: Stats,
    init: bool,
    init_addr: u32,
    /// SACKs the acknowledgement unit has started (observability for
    /// tests that run the reference alongside).
    pub sacks_started: u64,
    /// Tail timers served (observability, as `sacks_started`).
    pub tails_fired: u64,
    /// Decisions started, whether or not they sent a packet
    /// (observability, as `sacks_started`).
    pub decisions: u64,
    /// What the clocked units' replays record ([`Taps`]); all off by
    /// default.
    pub taps: Taps,
    /// A SACK stage's ring walk in flight: (cycles until its reads answer,
    /// the cycles it then issues ring reads, each holding the count at 2;
    /// architecture.md, tx_engine item 14).
    stage_hold: Option<(u32, u32)>,
    /// The tail timer a stage armed, written when the unit's walk has its
    /// last answer: (cycles until then, connection, deadline).
    tail_wr: Option<(u32, u32, Option<u32>)>,
    /// A NACK whose reads are in flight.
    nack_ans: Option<NackAns>,
    /// An RNR, window-probe or tail step whose reads are in flight, with
    /// the cycles left until they answer.
    timer_ans: Option<(TimerRead, u32)>,
    /// A PROBE the scheduler's start chose, its reads in flight: (conn,
    /// `ts_now` at the start, cycles left until they answer).
    probe_send: Option<(u32, u32, u32)>,
    /// A setup taken, its reads in flight: (the record and what they read,
    /// cycles left until they answer; architecture.md, tx_engine item 17).
    open_send: Option<(OpenAct, u32)>,
    /// The set-up path's ring slots still to clear after it acted, one a
    /// cycle: (conn, path, the next slot).
    open_clear: Option<(u32, u32, u32)>,
    /// A live SACK's count in flight: (cycles until its reads answer,
    /// the count its two passes hold the unit from then,
    /// `2 + 2 x span`; architecture.md, tx_engine item 13).
    sack_hold: Option<(u32, u32)>,
    /// A stale SACK's count waits for the cycle its reads answer, as the
    /// RTL finds it stale there: the ticks left (`L - 1` at the step).
    sack_stale_in: Option<u32>,
}

impl fmt::Debug for TxEngine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TxEngine")
            .field("sched", &self.sched)
            .field("ack_busy", &self.ack_busy)
            .field("frames", &self.frames.len())
            .field("sack_cont", &self.sack_cont.as_ref().map(|k| (k.stage, k.wait)))
            .field("settled", &self.tel_settled)
            .field("evt", &(self.evt_fifo.len(), self.pend_evt.len(), self.evt_quiet))
            .field(
                "regs",
                &(self.rto_reg.is_some(), self.upd_reg.is_some(), self.sack_reg.is_some(), self.walk.is_some()),
            )
            .field("init", &self.init)
            .finish_non_exhaustive()
    }
}

impl TxEngine {
    /// An engine in the state `rst` leaves it in (clear sweep pending).
    pub fn new(p: TxEngineParams) -> TxEngine {
        let k = tel::Consts::from_config(&p.cfg);
        let (c, n, s) = (p.conns as usize, p.paths as usize, p.streams as usize);
        let ports = ports(&p);
        let mut e = TxEngine {
            enc_seq: Vec::new(),
            dec_seq: Vec::new(),
            index: ports.iter().enumerate().map(|(i, d)| (d.name.clone(), i)).collect(),
            ports,
            k,
            conns: vec![Conn::default(); c],
            paths: vec![PathM::default(); c * n],
            streams: vec![StreamQ::default(); c * s],
            wq: vec![Wr::default(); c * s * p.wq_depth as usize],
            wq_issued: vec![0; c * s * p.wq_depth as usize],
            wq_acked: vec![0; c * s * p.wq_depth as usize],
            ring: vec![None; c * n * p.ring_depth as usize],
            rnr: Default::default(),
            rnr_next_tag: 0,
            wprobe: Default::default(),
            wprobe_refused: false,
            planes: vec![None; p.cfg.transport.planes as usize],
            port_ready: u32::MAX,
            sack_cont: None,
            tail_scan: 0,
            tail_hit: None,
            tel_settled: false,
            wr_fifo: Default::default(),
            post_pipe: Default::default(),
            open_reg: None,
            sack_reg: None,
            nack_reg: None,
            upd_reg: None,
            rto_reg: None,
            csack_reg: None,
            cnack_reg: None,
            ack_busy: 0,
            pend_evt: Default::default(),
            walk: None,
            walk_wait: 0,
            sched: Sched::Idle,
            rr_conn: 0,
            evt_quiet: 0,
            evt_fifo: Default::default(),
            cqe_fifo: Default::default(),
            frames: Default::default(),
            answers: Default::default(),
            cur: None,
            stats: Stats::default(),
            init: true,
            init_addr: 0,
            sacks_started: 0,
            tails_fired: 0,
            decisions: 0,
            taps: Taps::default(),
            stage_hold: None,
            tail_wr: None,
            nack_ans: None,
            timer_ans: None,
            probe_send: None,
            open_send: None,
            open_clear: None,
            sack_hold: None,
            sack_stale_in: None,
            p,
        };
        let mut rec = Vec::new();
        let mut outs = crate::block::zero_values(&e.ports);
        e.encode_seq(&e.outputs(), &mut outs, Some(&mut rec));
        e.enc_seq = rec;
        let rec = RefCell::new(Vec::new());
        e.decode_seq(&crate::block::zero_values(&e.ports), Some(&rec));
        e.dec_seq = rec.into_inner();
        e
    }

    pub fn params(&self) -> &TxEngineParams {
        &self.p
    }

    /// True while the clear sweep runs.
    pub fn initializing(&self) -> bool {
        self.init
    }

    /// Cycles of the clear sweep: one word per cycle of the largest memory,
    /// the retransmit rings (`CONNS * PATHS * tx_ring_depth`).
    pub fn sweep_cycles(&self) -> u32 {
        self.p.conns * self.p.paths * self.p.ring_depth
    }

    /// Packets of `(conn, path)` in the retransmit ring.
    pub fn ring_occupancy(&self, conn: u32, path: u32) -> usize {
        let r = self.p.ring_depth as usize;
        let base = self.pidx(conn, path) * r;
        self.ring[base..base + r].iter().filter(|s| s.is_some()).count()
    }

    /// PROBEs queued for `conn` (observability).
    pub fn probes_queued(&self, conn: u32) -> usize {
        self.conns[conn as usize].probes.len()
    }

    /// Why a connection failed (a `status` code), if it did.
    pub fn failed(&self, conn: u32) -> Option<u8> {
        self.conns[conn as usize].failed
    }

    /// The connection-level window and cap (bytes) and bytes in flight.
    pub fn conn_window(&self, conn: u32) -> (u32, u32, u64) {
        let cc = &self.conns[conn as usize].cc;
        (cc.cwnd, cc.cap, cc.inflight_bytes)
    }

    fn pidx(&self, conn: u32, path: u32) -> usize {
        (conn * self.p.paths + path) as usize
    }

    fn sidx(&self, conn: u32, stream: u32) -> usize {
        (conn * self.p.streams + stream) as usize
    }

    fn widx(&self, conn: u32, stream: u32, slot: u32) -> usize {
        self.sidx(conn, stream) * self.p.wq_depth as usize + (slot % self.p.wq_depth) as usize
    }

    fn ridx(&self, conn: u32, path: u32, psn: u32) -> usize {
        self.pidx(conn, path) * self.p.ring_depth as usize + (psn % self.p.ring_depth) as usize
    }

    /// A packet queued for retransmission: the connection may have
    /// something to send again.
    fn queue_retx(&mut self, c: u32, path: u32, psn: u32) {
        let k = &mut self.conns[c as usize];
        k.retx.push_back((path, psn));
        k.stalled = false;
    }

    /// The decision found nothing to send: the connection leaves the
    /// ready set; `port_wait` if only full ports kept it.
    fn stall(&mut self, c: u32, port_wait: bool) {
        if let Some(t) = self.taps.sched.as_mut() {
            t.stall = Some((c, port_wait));
        }
        let k = &mut self.conns[c as usize];
        k.stalled = true;
        k.port_wait = port_wait;
    }

    /// Every connection back in the ready set (a plane mark went: in
    /// hardware a flash clear of the stalled bits).
    fn unstall_all(&mut self) {
        for k in self.conns.iter_mut() {
            k.stalled = false;
        }
    }

    fn ack_idle(&self) -> bool {
        self.ack_busy == 0 && self.pend_evt.is_empty() && self.walk.is_none() && self.sack_cont.is_none()
    }

    /// Outputs from registered state (no input reaches an output
    /// combinationally).
    pub fn outputs(&self) -> Outputs {
        let run = !self.init;
        let trd = match &self.sched {
            Sched::Read { conn, issued: false } => Some(*conn),
            _ => None,
        };
        let psel = match &self.sched {
            Sched::Select { req, issued: false, .. } => Some(req.clone()),
            _ => None,
        };
        let ar = self.frames.iter().find(|f| f.ar_next < f.ar_end).map(|f| self.burst(f));
        let axis = self.cur.as_ref().map(|(bytes, pos, plane)| {
            let bb = self.p.beat_bytes() as usize;
            let (data, keep, last) = frame_beat(bytes, pos / bb, bb);
            AxisBeat { data, keep, last, plane: *plane }
        });
        Outputs {
            open_ready: run && self.open_reg.is_none(),
            // A request taken after a setup record's handshake sees the
            // setup: none is taken from that handshake until the setup
            // acts `L` cycles after its take (item 17).
            wr_ready: run && self.wr_fifo.len() < WR_FIFO && !self.open_wr_hold(),
            ar,
            r_ready: run,
            trd,
            trd_resp_ready: matches!(self.sched, Sched::Read { issued: true, .. }),
            evt: self.evt_fifo.front().copied(),
            upd_ready: run && self.upd_reg.is_none(),
            rto_ready: run && self.rto_reg.is_none(),
            psel,
            // A commit may fail the connection, which needs the walk: it
            // waits for a walk started meanwhile (an AXI error's failure).
            psel_resp_ready: matches!(self.sched, Sched::Select { issued: true, .. }) && self.walk.is_none(),
            sack_ready: run && self.sack_reg.is_none(),
            nack_ready: run && self.nack_reg.is_none(),
            csack_ready: run && self.csack_reg.is_none(),
            cnack_ready: run && self.cnack_reg.is_none(),
            axis,
            cqe: self.cqe_fifo.front().copied(),
            stats: self.stats,
        }
    }

    /// The next AXI burst of a frame's payload ([`burst`]).
    fn burst(&self, f: &Frame) -> ArReq {
        burst(&self.p, f.ar_next, f.ar_end)
    }
}

impl TxEngine {
    /// The rising clock edge with typed inputs.
    pub fn clock(&mut self, inp: &Inputs) {
        let out = self.outputs();
        self.stats = Stats::default();
        if let Some(t) = self.taps.output.as_mut() {
            *t = OutputTap {
                frames: self.frames.len(),
                answers: self.answers.len(),
                head: self.frames.front().map(|f| (f.conn, f.wr)),
                conns: self.frames.iter().map(|f| f.conn).collect(),
                ..OutputTap::default()
            };
        }
        if let Some(t) = self.taps.walk.as_mut() {
            *t = WalkTap { running: self.walk.is_some(), ..WalkTap::default() };
        }
        let open_busy = self.open_wr_hold();
        if let Some(t) = self.taps.post.as_mut() {
            *t = PostTap { open_busy, ..PostTap::default() };
        }
        if let Some(t) = self.taps.commit.as_mut() {
            t.commit = None;
        }
        if let Some(t) = self.taps.rto.as_mut() {
            t.step = None;
        }
        if let Some(t) = self.taps.nack.as_mut() {
            *t = NackTap::default();
        }
        if let Some(t) = self.taps.sack.as_mut() {
            *t = SackTap::default();
        }
        if let Some(t) = self.taps.stage.as_mut() {
            *t = StageTap::default();
        }
        if let Some(t) = self.taps.probe.as_mut() {
            *t = ProbeTap::default();
        }
        let running = self.open_held();
        if let Some(t) = self.taps.open.as_mut() {
            *t = OpenTap { running, wr_hold: open_busy, ..OpenTap::default() };
        }
        if let Some(t) = self.taps.timer.as_mut() {
            *t = TimerTap {
                rnr_len: self.rnr.len(),
                wp_len: self.wprobe.len(),
                rnr_head: self.rnr.front().copied(),
                wp_head: self.wprobe.front().copied(),
                ..TimerTap::default()
            };
        }
        if let Some(t) = self.taps.ack.as_mut() {
            *t = AckTap {
                run: !inp.rst && !self.init,
                busy: self.ack_busy,
                hit: self.tail_hit,
                rnr_tag: self.rnr_next_tag,
                scan: self.tail_scan,
                ..AckTap::default()
            };
        }
        if self.taps.sched.is_some() {
            self.tap_sched_begin();
        }
        if inp.rst {
            self.reset();
            return;
        }
        if self.init {
            self.init_addr += 1;
            if self.init_addr >= self.sweep_cycles() {
                self.init = false;
            }
            return;
        }
        let ts = inp.ts_now;
        if self.taps.post.is_some() {
            let head = self.wr_fifo.front().copied().or(inp.wr.filter(|_| out.wr_ready));
            let r = head.map(|w| self.post_read(w.conn, w.stream));
            if let Some(t) = self.taps.post.as_mut() {
                t.head_read = r;
            }
        }

        // Plane marks whose time has come are cleared (compared every
        // cycle, one comparator per plane): a connection stalled for want
        // of a path may have one again.
        let mut expired = false;
        for m in self.planes.iter_mut().filter(|m| m.is_some_and(|t| tel::ts_reached(ts, t))) {
            *m = None;
            expired = true;
        }
        if expired {
            self.unstall_all();
        }
        // A port that drained wakes the connections that waited for full
        // ports alone (a flash clear of their stalled bits, as above).
        let planes = self.planes.len() as u32;
        let mask = if planes >= 32 { u32::MAX } else { (1 << planes) - 1 };
        let rose = inp.port_ready & !self.port_ready & mask;
        self.port_ready = inp.port_ready | !mask;
        if rose != 0 {
            for k in self.conns.iter_mut().filter(|k| k.port_wait) {
                k.stalled = false;
                k.port_wait = false;
            }
        }

        // Output handshakes.
        if out.evt.is_some() && inp.evt_ready {
            self.evt_fifo.pop_front();
            self.evt_quiet = 0;
        } else {
            self.evt_quiet = self.evt_quiet.saturating_add(1);
        }
        if out.cqe.is_some() && inp.cqe_ready {
            self.cqe_fifo.pop_front();
        }
        let mut frame_done = self.cur.is_none();
        if let (Some(b), true) = (&out.axis, inp.axis_ready) {
            let (_, pos, _) = self.cur.as_mut().expect("a beat is shown only for a frame");
            *pos += self.p.beat_bytes() as usize;
            if b.last {
                self.cur = None;
                frame_done = true;
            }
        }
        if let (Some(ar), true) = (out.ar, inp.ar_ready) {
            let bb = self.p.beat_bytes() as u64;
            let f = self.frames.iter_mut().find(|f| f.ar_next < f.ar_end).expect("shown on AR");
            f.ar_next += (ar.len as u64 + 1) * bb;
        }
        if let Some(r) = &inp.r {
            self.take_beat(r);
        }

        // Input registers.
        if let (Some(w), true) = (inp.wr, out.wr_ready) {
            self.wr_fifo.push_back(w);
        }
        if out.open_ready {
            self.open_reg = inp.open;
        }
        if out.sack_ready {
            self.sack_reg = inp.sack;
        }
        if out.nack_ready {
            self.nack_reg = inp.nack;
        }
        if out.upd_ready {
            self.upd_reg = inp.upd;
        }
        if out.rto_ready {
            self.rto_reg = inp.rto;
        }
        if out.csack_ready {
            self.csack_reg = inp.csack;
        }
        if out.cnack_ready {
            self.cnack_reg = inp.cnack;
        }

        // path_telemetry has answered every event sent: nothing to send, its
        // last answer would have shown by now, and none is waiting.
        self.tel_settled = self.evt_fifo.is_empty()
            && self.pend_evt.is_empty()
            && self.evt_quiet >= self.p.read_latency + 2
            && inp.rto.is_none()
            && inp.upd.is_none()
            && self.rto_reg.is_none()
            && self.upd_reg.is_none();

        // Scheduler handshakes and decisions. A PROBE send in flight at the
        // start of the cycle (its answer's cycle included) holds the
        // acknowledgement unit's steps and the open, as a decision does.
        let mut evt_pushed = false;
        let probe_busy = self.probe_send.is_some();
        // A setup taken in an earlier cycle and not finished (its reads,
        // its act, its ring clear) holds the same units (`tx_open`'s
        // `m_running`).
        let open_busy = self.open_held();
        match std::mem::replace(&mut self.sched, Sched::Idle) {
            Sched::Read { conn, issued: false } => {
                self.sched = Sched::Read { conn, issued: inp.trd_ready };
            }
            Sched::Read { conn, issued: true } => match &inp.trd {
                Some(v) => {
                    debug_assert_eq!(v.conn, conn, "telemetry answers in order");
                    self.decide(conn, v, ts);
                }
                None => self.sched = Sched::Read { conn, issued: true },
            },
            Sched::Decide { conn, view, wait: 0 } => self.decide(conn, &view, ts),
            Sched::Decide { conn, view, wait } => self.sched = Sched::Decide { conn, view, wait: wait - 1 },
            Sched::Select { conn, plan, req, issued: false, full_after } => {
                self.sched = Sched::Select { conn, plan, req, issued: inp.psel_ready, full_after };
            }
            Sched::Select { conn, plan, req, issued: true, full_after } => {
                match inp.psel.filter(|_| out.psel_resp_ready) {
                    Some((c, path)) => {
                        debug_assert_eq!(c, conn, "the selector answers in order");
                        if let Some(path) = path {
                            if self.taps.sched.is_some() {
                                self.tap_commit(conn, plan, path, &full_after);
                            }
                            self.commit(conn, plan, path, &full_after, ts);
                            evt_pushed = true;
                        }
                    }
                    None => self.sched = Sched::Select { conn, plan, req, issued: true, full_after },
                }
            }
            Sched::Idle if self.probe_send.is_some() => {
                if let Some(t) = self.taps.sched.as_mut() {
                    (t.start_ok, t.frames) = (false, self.frames.len());
                }
                let (c, at, wait) = self.probe_send.expect("checked");
                if wait > 1 {
                    self.probe_send = Some((c, at, wait - 1));
                } else {
                    self.probe_send = None;
                    self.send_probe(c, at);
                    evt_pushed = true;
                }
            }
            Sched::Idle => {
                if self.taps.sched.is_some() {
                    let (ok, frames) = (self.start_ok(inp), self.frames.len());
                    if let Some(t) = self.taps.sched.as_mut() {
                        (t.start_ok, t.frames) = (ok, frames);
                    }
                }
                if self.may_start(inp) {
                    evt_pushed = self.start(ts);
                }
            }
        }
        if let Some(t) = self.taps.sched.as_mut() {
            t.idle_after = matches!(self.sched, Sched::Idle);
        }
        // From the start that chose a PROBE to the cycle it leaves
        // (`tx_probe`'s `m_busy`).
        let probe_hold = probe_busy || self.probe_send.is_some();
        let hold = probe_hold || open_busy;

        // Acknowledgement unit. The walk's reads answer whether or not the
        // unit is busy: their wait counts down every cycle.
        self.walk_wait = self.walk_wait.saturating_sub(1);
        if let Some(t) = self.taps.walk.as_mut() {
            t.ack_free = self.ack_busy == 0;
        }
        if self.taps.ack.is_some() {
            self.tap_ack_turn(hold);
        }
        if self.ack_busy > 0 {
            self.ack_busy -= 1;
        } else if !self.pend_evt.is_empty() || self.walk.is_some() {
            if !evt_pushed && self.evt_fifo.len() < EVT_FIFO {
                if let Some(e) = self.pend_evt.pop_front() {
                    self.evt_fifo.push_back(e);
                    evt_pushed = true;
                }
            }
            if self.walk_wait == 0 && self.cqe_fifo.len() < CQE_FIFO {
                self.walk_step();
            }
        } else if matches!(self.sched, Sched::Idle) && !hold {
            self.ack_step(ts);
        }

        // The tail-timer scanner: one connection's deadline compared per
        // cycle; a hit waits for the acknowledgement unit.
        if let Some(t) = self.taps.ack.as_mut() {
            t.phase = 2;
        }
        // A NACK's reads answer after the turn: its actions, a failure
        // among them (a hold after the turn, as the output stage's).
        self.nack_tick();
        // So do the timer steps' (RNR, window probe, tail timer).
        self.timer_tick();
        // A live SACK's reads answer after the turn: its span is known and
        // its two passes raise the count (item 13).
        self.sack_tick();
        // A SACK stage's walk holds the count while it reads, and its
        // tail timer lands with its last answer (item 14).
        self.stage_tick();
        if self.tail_hit.is_none() {
            let c = self.tail_scan;
            let due = self.tail_due(c, ts);
            if let Some(t) = self.taps.ack.as_mut() {
                t.scan_due = Some(due);
            }
            if due {
                self.tail_hit = Some(c);
            }
            self.tail_scan = (c + 1) % self.p.conns;
        }

        // Answers: into a 2-entry queue, the addresses read on the way in,
        // before an `s_open` taken at this edge writes them (the table reads
        // first, as block RAM does).
        for a in self.answers.iter_mut() {
            a.wait = a.wait.saturating_sub(1);
        }
        let out_answers = self.answers.len();
        if self.answers.len() < 2 {
            let direct = self.csack_reg.is_none() && self.cnack_reg.is_some_and(|n| n.direct);
            if let Some(s) = self.csack_reg.take() {
                self.answers.push_back(self.sack_answer(&s));
            } else if let Some(n) = self.cnack_reg.take() {
                self.answers.push_back(self.nack_answer(&n));
            }
            if let (Some(t), true) = (self.taps.output.as_mut(), self.answers.len() > out_answers) {
                let a = self.answers.back().expect("just pushed");
                t.answer = Some(AnswerPush { hdr: a.hdr.clone(), sport: a.sport, plane: a.plane, direct, to: a.to });
            }
        }

        // Connection setup (item 17): the record is taken and its reads
        // issued; it acts `L` cycles later (its OPEN event among the
        // writes), then its path's ring slots are cleared a slot a cycle.
        // From the take to the last slot nothing else starts.
        if let (Some(o), Some(t)) = (self.open_reg, self.taps.open.as_mut()) {
            let k = &self.conns[o.conn as usize];
            t.live = Some((o.conn, k.open && k.failed.is_none()));
        }
        if let Some((c, path, slot)) = self.open_clear {
            if let Some(t) = self.taps.open.as_mut() {
                t.clear = Some((c, path, slot));
            }
            self.open_clear = (slot + 1 < self.p.ring_depth).then_some((c, path, slot + 1));
        }
        if let Some((read, wait)) = self.open_send.take() {
            if wait > 1 {
                self.open_send = Some((read, wait - 1));
            } else {
                debug_assert!(
                    !evt_pushed && self.evt_fifo.len() < EVT_FIFO,
                    "nothing pushes an event while a setup runs"
                );
                self.open(read);
            }
        } else {
            // The rest of the engine lets a record be taken (`tx_open`'s
            // `s_free`): the event FIFO has room and took nothing this
            // cycle, the acknowledgement unit is idle after its turn, the
            // scheduler after its step, no PROBE send runs, and no frame
            // of the record's connection is in the output queue (one
            // committed before the setup would leave after it with the
            // old headers, and its failed read would fail the new
            // connection; the scheduler starts nothing while a record
            // waits, so the queue drains).
            let free = !evt_pushed
                && self.evt_fifo.len() < EVT_FIFO
                && self.ack_idle()
                && matches!(self.sched, Sched::Idle)
                && !probe_hold
                && self.open_reg.is_none_or(|o| !self.frames.iter().any(|f| f.conn == o.conn));
            if let Some(t) = self.taps.open.as_mut() {
                t.free = free;
            }
            if let Some(o) = self.open_reg.filter(|_| free && self.open_clear.is_none()) {
                self.open_take(o);
            }
        }
        // Work request posting, one per cycle, `L` cycles after the request
        // leaves the FIFO's head and issues its reads. The post acts on the
        // state as it is now: every unit that writes a field the post reads
        // (the commit's `pend` and `pend_streams`, the walk's `head`, a
        // failure, a reopen, the previous post's `tail`) forwards the write
        // to the requests in flight whose connection or stream it names, so
        // no post acts on a stale `pend` (architecture.md, tx_engine item 7).
        if let Some(t) = self.taps.walk.as_mut() {
            t.room = self.cqe_fifo.len() < CQE_FIFO;
            t.busy = self.walk.is_some();
        }
        if let Some(&(w, 0)) = self.post_pipe.front() {
            if self.post(&w) {
                self.post_pipe.pop_front();
            }
        }
        if self.post_pipe.len() < self.p.read_latency as usize {
            if let Some(w) = self.wr_fifo.pop_front() {
                self.post_pipe.push_back((w, self.p.read_latency));
                if let Some(t) = self.taps.post.as_mut() {
                    t.rd = t.head_read;
                }
            }
        }
        for (_, wait) in self.post_pipe.iter_mut() {
            *wait = wait.saturating_sub(1);
        }

        // Output: the next frame starts right after the last beat.
        // A setup taken this cycle or running holds a failure back.
        let setup_hold = probe_hold || self.open_held();
        if let Some(t) = self.taps.output.as_mut() {
            t.walk_busy = self.walk.is_some() || self.nack_ans.is_some() || self.timer_ans.is_some() || setup_hold;
            t.head_failed = self.frames.front().is_some_and(|f| self.conns[f.conn as usize].failed.is_some());
        }
        if frame_done {
            self.next_frame(inp, setup_hold);
        }
        if self.taps.walk.is_some() {
            self.tap_walk_end();
        }
        if let Some(t) = self.taps.ack.as_mut() {
            (t.rnr_len, t.wp_len) = (self.rnr.len(), self.wprobe.len());
        }
    }

    /// The acknowledgement tap's view at the unit's turn.
    fn tap_ack_turn(&mut self, probe_hold: bool) {
        let cont = self.sack_cont.as_ref().map(|k| k.wait);
        let t = self.taps.ack.as_mut().expect("checked by the caller");
        t.phase = 1;
        t.free = self.ack_busy == 0;
        t.pend_evt = !self.pend_evt.is_empty();
        t.walk = self.walk.is_some();
        // The scheduler as the unit sees it: a PROBE send holds it too.
        t.sched_idle = matches!(self.sched, Sched::Idle) && !probe_hold;
        (t.rto, t.upd, t.sack, t.nack) =
            (self.rto_reg.is_some(), self.upd_reg.is_some(), self.sack_reg.is_some(), self.nack_reg.is_some());
        t.cont = cont;
        t.settled = self.tel_settled;
        t.rnr_head = self.rnr.front().copied();
        t.wp_head = self.wprobe.front().copied();
    }

    /// Records the step the acknowledgement unit starts.
    fn tap_ack_go(&mut self, go: AckGo) {
        if let Some(t) = self.taps.ack.as_mut() {
            t.go = Some(go);
        }
    }

    /// The walk tap's end-of-cycle fields: the running walk's words and
    /// the slot it looks at next.
    fn tap_walk_end(&mut self) {
        let Some(w) = self.walk.as_ref() else { return };
        let c = w.conn();
        let words = self.walk_words(c);
        let (s, slot) = w.at(|s| self.streams[self.sidx(c, s)].head);
        let wi = self.widx(c, s, slot);
        let rd = WalkRdTap {
            conn: c,
            stream: s,
            slot,
            req: self.wq[wi].req,
            issued: self.wq_issued[wi],
            acked: self.wq_acked[wi],
        };
        let t = self.taps.walk.as_mut().expect("checked by the caller");
        if t.words.is_none() {
            t.words = Some((c, words));
        }
        if !t.start.as_ref().is_some_and(|s| matches!(s.walk, Walk::Fail { .. })) {
            t.rd = Some(rd);
        }
    }

    /// The scheduler tap's start-of-cycle fields.
    fn tap_sched_begin(&mut self) {
        let (state, issued, wait) = match &self.sched {
            Sched::Idle => (0, false, 0),
            Sched::Read { issued, .. } => (1, *issued, 0),
            Sched::Decide { wait, .. } => (2, false, *wait),
            Sched::Select { issued, .. } => (3, *issued, 0),
        };
        let walk_running = self.walk.is_some();
        if let Some(t) = self.taps.sched.as_mut() {
            *t = SchedTap { state, issued, wait, walk_running, ..SchedTap::default() };
        }
    }

    /// What a decision of connection `c` reads, for the scheduler tap.
    fn tap_decide(&mut self, c: u32, ts: u32) {
        let k = &self.conns[c as usize];
        let retx = k.retx.front().copied();
        let queued = retx.is_some_and(|(path, psn)| self.ring[self.ridx(c, path, psn)].is_some_and(|s| s.queued));
        let paths = (0..k.npaths)
            .map(|p| {
                let m = &self.paths[self.pidx(c, p)];
                SchedPath {
                    plane: m.plane,
                    timed_out: m.timed_out,
                    next_psn: m.next_psn,
                    cum_acked: m.cum_acked,
                    probe_pending: m.probe_pending,
                    clr: m.clr,
                }
            })
            .collect();
        let r = SchedRead {
            conn: c,
            npaths: k.npaths,
            inflight_bytes: k.cc.inflight_bytes,
            cap: k.cc.cap,
            rr_stream: k.rr_stream,
            wprobe_armed: k.window_probe_at.is_some(),
            wp_full: self.wprobe.len() >= self.p.wprobe_depth as usize,
            retx,
            queued,
            paths,
            words: (0..self.p.streams).map(|s| self.streams[self.sidx(c, s)].word()).collect(),
            marks: self.planes.clone(),
            port_ready: self.port_ready,
            ts,
        };
        if let Some(t) = self.taps.sched.as_mut() {
            t.read = Some(r);
        }
    }

    /// The decided packet as the scheduler hands it to the commit, for the
    /// scheduler tap.
    fn tap_commit(&mut self, c: u32, plan: Plan, phys: u32, full_after: &[bool]) {
        let full = full_after.iter().enumerate().fold(0u32, |a, (i, &f)| a | u32::from(f) << i);
        let x = match plan {
            Plan::Retx { path, psn } => SchedCommit {
                conn: c,
                retx: Some((path, psn)),
                phys,
                full_after: full,
                rnr_resend: self.ring[self.ridx(c, path, psn)].is_some_and(|s| s.rnr_resend),
                ..SchedCommit::default()
            },
            Plan::New { stream } => SchedCommit { conn: c, stream, phys, full_after: full, ..SchedCommit::default() },
        };
        if let Some(t) = self.taps.sched.as_mut() {
            t.commit = Some(x);
        }
    }

    /// Connection `c`'s context and stream `s`'s word as the post reads
    /// them, for the post tap.
    fn post_read(&self, c: u32, s: u32) -> PostRead {
        let k = &self.conns[c as usize];
        let q = &self.streams[self.sidx(c, s)];
        PostRead {
            conn: c,
            stream: s,
            live: k.open && k.failed.is_none(),
            pend_streams: k.pend_streams,
            head: q.head,
            pend: q.pend,
            tail: q.tail,
            next_msn: q.next_msn,
            next_rq_seq: q.next_rq_seq,
        }
    }

    /// Connection `c`'s streams' (head, pend, tail), for the walk tap.
    fn walk_words(&self, c: u32) -> Vec<WalkWord> {
        (0..self.p.streams)
            .map(|s| {
                let q = &self.streams[self.sidx(c, s)];
                (q.head, q.pend, q.tail)
            })
            .collect()
    }

    fn reset(&mut self) {
        let taps = std::mem::take(&mut self.taps);
        *self = TxEngine::new(self.p.clone());
        self.taps = taps;
    }
}

// ------------------------------------------------------------------ frames

/// The addressing of one frame (what the Ethernet, IPv4 and UDP headers
/// carry beyond lengths and checksums).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Net {
    pub src_mac: u64,
    pub dst_mac: u64,
    pub src_ip: u32,
    pub dst_ip: u32,
    pub sport: u16,
    pub dport: u16,
}

/// Fields of a data header, as the engine fills them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DataFields {
    pub op: u8,
    pub som: bool,
    pub eom: bool,
    pub retx: bool,
    pub ackreq: bool,
    pub payload_len: u32,
    pub dst_conn: u32,
    pub path_id: u32,
    pub psn: u32,
    pub gen: u8,
    pub stream: u32,
    pub msn: u32,
    pub msg_len: u32,
    /// WRITE: rkey; SEND: rq_seq.
    pub rkey_or_rq: u32,
    /// WRITE: address of the first byte; SEND: message offset.
    pub addr_or_offset: u64,
    pub tx_ts: u16,
    pub imm: u32,
}

/// A data header (40 bytes) placed with proto's field table.
pub fn data_header(f: &DataFields) -> Vec<u8> {
    use mrnic_proto::layouts::data as d;
    let mut h = vec![0u8; d::LAYOUT.len];
    d::OPCODE.set(&mut h, f.op as u64);
    d::SOM.set(&mut h, f.som as u64);
    d::EOM.set(&mut h, f.eom as u64);
    d::RETX.set(&mut h, f.retx as u64);
    d::ACKREQ.set(&mut h, f.ackreq as u64);
    d::PAYLOAD_LEN.set(&mut h, f.payload_len as u64);
    d::DST_CONN.set(&mut h, f.dst_conn as u64);
    d::PATH_ID.set(&mut h, f.path_id as u64);
    d::PATH_PSN.set(&mut h, f.psn as u64);
    d::PATH_GEN.set(&mut h, f.gen as u64);
    d::STREAM_ID.set(&mut h, f.stream as u64);
    d::MSN.set(&mut h, f.msn as u64);
    d::MSG_LEN.set(&mut h, f.msg_len as u64);
    if f.op == op::SEND || f.op == op::SEND_IMM {
        d::RQ_SEQ.set(&mut h, f.rkey_or_rq as u64);
        d::MSG_OFFSET.set(&mut h, f.addr_or_offset);
    } else {
        d::RKEY.set(&mut h, f.rkey_or_rq as u64);
        d::ADDR.set(&mut h, f.addr_or_offset);
    }
    d::TX_TS.set(&mut h, f.tx_ts as u64);
    d::IMM.set(&mut h, f.imm as u64);
    h
}

/// A PROBE header (16 bytes).
pub fn probe_header(dst_conn: u32, path_id: u32, gen: u8, psn: u32, tx_ts: u16) -> Vec<u8> {
    use mrnic_proto::layouts::probe as pr;
    let mut h = vec![0u8; pr::LAYOUT.len];
    pr::OPCODE.set(&mut h, mrnic_proto::Opcode::Probe as u64);
    pr::TX_TS.set(&mut h, tx_ts as u64);
    pr::DST_CONN.set(&mut h, dst_conn as u64);
    pr::PATH_ID.set(&mut h, path_id as u64);
    pr::PATH_PSN.set(&mut h, psn as u64);
    pr::PATH_GEN.set(&mut h, gen as u64);
    h
}

/// A SACK header (52 bytes).
pub fn sack_header(s: &SackOut) -> Vec<u8> {
    let mut h = vec![0u8; sack::LAYOUT.len];
    sack::OPCODE.set(&mut h, mrnic_proto::Opcode::Sack as u64);
    sack::RATE_HINT.set(&mut h, s.rate_hint as u64);
    sack::DST_CONN.set(&mut h, s.dst_conn as u64);
    sack::PATH_ID.set(&mut h, s.path_id as u64);
    sack::CUM_PSN.set(&mut h, s.cum_psn as u64);
    sack::PATH_GEN.set(&mut h, s.path_gen as u64);
    sack::STREAM_ID.set(&mut h, s.stream_id as u64);
    sack::COMPLETED_MSN.set(&mut h, s.completed_msn as u64);
    sack::ECHO_TS.set(&mut h, s.echo_ts as u64);
    sack::ECN_CNT.set(&mut h, s.ecn_cnt as u64);
    let at = sack::BITMAP.offset;
    for (w, chunk) in h[at..at + 32].chunks_exact_mut(8).enumerate() {
        chunk.copy_from_slice(&s.bitmap[3 - w].to_be_bytes());
    }
    h
}

/// A NACK header (20 bytes).
pub fn nack_header(n: &NackOut) -> Vec<u8> {
    use mrnic_proto::layouts::nack as nk;
    let mut h = vec![0u8; nk::LAYOUT.len];
    nk::OPCODE.set(&mut h, mrnic_proto::Opcode::Nack as u64);
    nk::CODE.set(&mut h, n.code as u64);
    nk::DST_CONN.set(&mut h, n.dst_conn as u64);
    nk::PATH_ID.set(&mut h, n.path_id as u64);
    nk::PATH_PSN.set(&mut h, n.psn as u64);
    nk::PATH_GEN.set(&mut h, n.path_gen as u64);
    nk::STREAM_ID.set(&mut h, n.stream_id as u64);
    nk::MSN.set(&mut h, n.msn as u64);
    nk::ECHO_TS.set(&mut h, n.echo_ts as u64);
    h
}

/// The whole frame (no FCS): Ethernet, IPv4 (ECT(0), TTL 64, DF), UDP,
/// the transport header, the payload and the ICRC. The IPv4 and UDP
/// checksums and the ICRC are proto's definitions; the hardware computes
/// them while the payload streams in (the frame leaves store-and-forward).
pub fn build_frame(net: &Net, transport: &[u8], payload: &[u8]) -> Vec<u8> {
    use mrnic_proto::layouts::{eth, ipv4, udp, ICRC_LEN};
    use mrnic_proto::packet::{self as pk, NET_OVERHEAD};
    let dgram = transport.len() + payload.len() + ICRC_LEN;
    let mut f = vec![0u8; NET_OVERHEAD];
    f.extend_from_slice(transport);
    f.extend_from_slice(payload);
    let crc = pk::icrc(&f[NET_OVERHEAD..]);
    f.extend_from_slice(&crc.to_be_bytes());
    let (e, rest) = f.split_at_mut(eth::LAYOUT.len);
    eth::DST_MAC.set(e, net.dst_mac);
    eth::SRC_MAC.set(e, net.src_mac);
    eth::ETHERTYPE.set(e, pk::ETHERTYPE_IPV4 as u64);
    let (ip, u) = rest.split_at_mut(ipv4::LAYOUT.len);
    ipv4::VERSION.set(ip, 4);
    ipv4::IHL.set(ip, 5);
    ipv4::ECN.set(ip, pk::ECN_ECT0 as u64);
    ipv4::TOTAL_LEN.set(ip, (ipv4::LAYOUT.len + udp::LAYOUT.len + dgram) as u64);
    ipv4::DF.set(ip, 1);
    ipv4::TTL.set(ip, 64);
    ipv4::PROTOCOL.set(ip, pk::IPPROTO_UDP as u64);
    ipv4::SRC_IP.set(ip, net.src_ip as u64);
    ipv4::DST_IP.set(ip, net.dst_ip as u64);
    let c = pk::ipv4_checksum(ip);
    ipv4::CHECKSUM.set(ip, c as u64);
    udp::SRC_PORT.set(u, net.sport as u64);
    udp::DST_PORT.set(u, net.dport as u64);
    udp::LENGTH.set(u, (udp::LAYOUT.len + dgram) as u64);
    let c = pk::udp_checksum(net.src_ip.to_be_bytes(), net.dst_ip.to_be_bytes(), u);
    udp::CHECKSUM.set(u, c as u64);
    f
}

/// Beat `k` of a frame on `m_axis` at `bb` bytes a beat: its bytes (lanes
/// past the frame's end zero), how many are valid (`tkeep`'s count) and
/// whether it is the frame's last.
pub fn frame_beat(bytes: &[u8], k: usize, bb: usize) -> (Vec<u8>, u32, bool) {
    let pos = (k * bb).min(bytes.len());
    let end = (pos + bb).min(bytes.len());
    let mut data = bytes[pos..end].to_vec();
    let keep = data.len() as u32;
    data.resize(bb, 0);
    (data, keep, end == bytes.len())
}

// ------------------------------------------------------------------ scheduler

impl TxEngine {
    /// The connection's bit of the ready set: a function of its context
    /// word alone (open, failed, the PROBE bits, the retransmit queue's
    /// count, `pend_streams`), so the RTL rewrites the bit whenever it
    /// writes the context and never scans connections or streams.
    fn conn_has_work(&self, c: u32) -> bool {
        let k = &self.conns[c as usize];
        let live = k.open && k.failed.is_none();
        debug_assert!(
            !live
                || (k.pend_streams > 0)
                    == (0..self.p.streams).any(|s| {
                        let q = &self.streams[self.sidx(c, s)];
                        q.pend != q.tail
                    }),
            "pend_streams counts the streams with bytes to cut"
        );
        live && (k.probe_q != 0 || ((!k.retx.is_empty() || k.pend_streams > 0) && !k.stalled))
    }

    /// A decision may start: nothing else touches the rings, the telemetry
    /// has executed every event sent (`L` cycles after the last `m_evt`
    /// handshake, and its updates have been taken), and the frame queue
    /// has room: [`FRAME_QUEUE`] frames for a data decision, [`PROBE_ROOM`]
    /// more for a PROBE (see [`Self::start`]).
    fn may_start(&self, inp: &Inputs) -> bool {
        self.start_ok(inp) && self.frames.len() < FRAME_QUEUE + PROBE_ROOM
    }

    /// [`Self::may_start`] but for the frame queue's room.
    fn start_ok(&self, inp: &Inputs) -> bool {
        self.probe_send.is_none()
            && !self.open_held()
            && self.ack_idle()
            && self.sack_reg.is_none()
            && self.nack_reg.is_none()
            && self.upd_reg.is_none()
            && self.rto_reg.is_none()
            && self.open_reg.is_none()
            && inp.upd.is_none()
            && inp.rto.is_none()
            && self.evt_fifo.is_empty()
            && self.evt_quiet >= self.p.read_latency
    }

    /// Picks the next connection with work and starts its decision; a
    /// queued PROBE leaves at once. Returns whether an event was pushed.
    /// The choice is a round-robin priority encoder over the ready set (a
    /// bit per connection, [`Self::conn_has_work`]) from `rr_conn`: the
    /// same order as a scan, which a FIFO of ready connections would not
    /// keep (a connection that stays ready would lose its turn to ones
    /// queued after it), and the decisions must stay the reference's.
    /// With [`FRAME_QUEUE`] frames queued only PROBEs may start: the
    /// encoder then looks at the connections' PROBE bits alone.
    fn start(&mut self, ts: u32) -> bool {
        let probes_only = self.frames.len() >= FRAME_QUEUE;
        if self.taps.sched.is_some() {
            let words = (self.p.conns as usize).div_ceil(64);
            let (mut work, mut probe) = (vec![0u64; words], vec![0u64; words]);
            for c in 0..self.p.conns {
                let (w, b) = ((c / 64) as usize, c % 64);
                work[w] |= u64::from(self.conn_has_work(c)) << b;
                probe[w] |= u64::from(self.conns[c as usize].probe_q != 0) << b;
            }
            if let Some(t) = self.taps.sched.as_mut() {
                t.ready = Some((work, probe));
            }
        }
        let ready = |c: u32| self.conn_has_work(c) && (!probes_only || self.conns[c as usize].probe_q != 0);
        let Some(c) = rr_first(self.p.conns, self.rr_conn, ready) else {
            return false;
        };
        self.rr_conn = (c + 1) % self.p.conns;
        if !self.conns[c as usize].probes.is_empty() {
            // The PROBE queue's head, the context and the path's mirror
            // are read now and the PROBE leaves when they answer, `L`
            // cycles on (item 16); the scheduler starts nothing, and the
            // acknowledgement unit no step, meanwhile.
            if let Some(t) = self.taps.sched.as_mut() {
                t.probe = Some(c);
            }
            if let Some(t) = self.taps.probe.as_mut() {
                t.start = Some((c, ts));
            }
            self.probe_send = Some((c, ts, self.p.read_latency));
            return false;
        }
        self.sched = Sched::Read { conn: c, issued: false };
        self.decisions += 1;
        false
    }

    /// The PROBE the start chose `L` cycles before, at `ts` (then): its
    /// queue's head leaves and the path's mirror, the frame queue and the
    /// event FIFO take it.
    fn send_probe(&mut self, c: u32, ts: u32) {
        let path = self.conns[c as usize].probes.pop_front().expect("the start saw a PROBE queued");
        self.conns[c as usize].probe_q &= !(1 << path);
        let i = self.pidx(c, path);
        let m = &mut self.paths[i];
        let before = *m;
        m.probe_pending = true;
        m.probe_ts = ts as u16;
        m.probe_seq = m.tx_seq;
        m.tx_seq = m.tx_seq.wrapping_add(1);
        let m = *m;
        let k = &self.conns[c as usize];
        let hdr = probe_header(k.remote_id, path, m.gen, m.next_psn, ts as u16);
        if let Some(t) = self.taps.probe.as_mut() {
            t.sent = Some(ProbeSent {
                conn: c,
                path,
                ts,
                remote_id: k.remote_id,
                dst_mac: k.dst_mac,
                dst_ip: k.dst_ip,
                gen: before.gen,
                next_psn: before.next_psn,
                tx_seq: before.tx_seq,
                sport: before.sport,
                plane: before.plane,
                hdr: hdr.clone(),
            });
        }
        self.push_frame(c, path, hdr, None, 0, 0);
        self.evt_fifo.push_back(tel::Event {
            kind: tel::kind::PROBE_SENT,
            conn: c,
            path,
            now: ts,
            ..Default::default()
        });
        self.stats.tx_probe = true;
    }

    /// The next stream (round robin) with bytes to cut whose head message
    /// fits the peer's message table; arms a window probe when a stream is
    /// blocked with nothing in flight.
    fn next_stream(&mut self, c: u32, v: &TelView, ts: u32) -> Option<u32> {
        let heads: Vec<StreamHead> = (0..self.p.streams)
            .map(|si| {
                let q = &self.streams[self.sidx(c, si)];
                let h = stream_head(&q.word());
                if h.pending {
                    let w = &self.wq[self.widx(c, si, q.pend)];
                    debug_assert_eq!(h.msn, w.msn, "the stream word's head msn");
                }
                h
            })
            .collect();
        let depth = self.p.cfg.hardware.msg_table_depth;
        if let Some(si) = stream_choice(&heads, self.conns[c as usize].rr_stream, depth) {
            return Some(si);
        }
        let blocked = heads.iter().any(|h| h.pending);
        let np = self.conns[c as usize].npaths;
        let quiet = (0..np).all(|p| v.paths[p as usize].inflight == 0 && !self.paths[self.pidx(c, p)].probe_pending);
        if blocked && quiet && self.conns[c as usize].window_probe_at.is_none() {
            if self.wprobe.len() >= self.p.wprobe_depth as usize {
                // Full (stale entries among them: a live one is at most
                // one per connection): no probe is armed and the
                // connection stalls like any other; the FIFO's next pop
                // wakes it to try again.
                self.stats.wprobe_full = true;
                self.wprobe_refused = true;
                if let Some(t) = self.taps.sched.as_mut() {
                    t.wprobe_full = true;
                }
                if let Some(t) = self.taps.timer.as_mut() {
                    t.wp_refused = true;
                }
                return None;
            }
            if let Some(t) = self.taps.sched.as_mut() {
                t.wprobe = Some(c);
            }
            let at = ts.wrapping_add(self.k.rto_min);
            self.conns[c as usize].window_probe_at = Some(at);
            self.wprobe.push_back((c, at));
            if let Some(t) = self.taps.ack.as_mut() {
                t.wp_push = Some((c, at));
            }
            if let Some(t) = self.taps.timer.as_mut() {
                t.wp_push = Some((c, at));
            }
        }
        None
    }

    /// The telemetry answer is in: choose what to send and form the path
    /// request (the reference's `TxConn::poll` after its PROBE step).
    fn decide(&mut self, c: u32, v: &TelView, ts: u32) {
        if self.taps.sched.is_some() {
            self.tap_decide(c, ts);
        }
        let np = self.conns[c as usize].npaths;
        let cps: Vec<ChoicePath> = (0..np)
            .map(|p| {
                let (m, vw) = (&self.paths[self.pidx(c, p)], &v.paths[p as usize]);
                ChoicePath {
                    state: vw.state,
                    plane: m.plane,
                    timed_out: m.timed_out,
                    inflight: vw.inflight,
                    cwnd: vw.cwnd,
                    next_psn: m.next_psn,
                    cum_acked: m.cum_acked,
                }
            })
            .collect();
        let cc = &self.conns[c as usize].cc;
        let conn_ok = cc.inflight_bytes < cc.cap as u64;
        let head = self.conns[c as usize].retx.front().copied();
        let retx_path = head.map_or(0, |(path, _)| path);
        let ch = choose(&self.p, &cps, &self.planes, self.port_ready, ts, conn_ok, retx_path);
        // Queued retransmissions: a head acknowledged or moved to an RNR
        // back-off since it was queued is popped (the queue is a FIFO with
        // one read port), and the decision looks at the next head when its
        // ring slot, read as the head pops, is in: `L` cycles later. (The
        // head's own slot is read with the telemetry, at the start.)
        let mut plan = None;
        let mut elig = 0u32;
        if let Some((path, psn)) = head {
            match self.ring[self.ridx(c, path, psn)] {
                Some(s) if s.queued => {
                    elig = ch.retx_elig;
                    if elig != 0 {
                        plan = Some(Plan::Retx { path, psn });
                    } else if ch.retx_port_wait {
                        // Its port (or every other GOOD path's) is full:
                        // it waits at the head, and nothing of the
                        // connection overtakes it.
                        self.stall(c, true);
                        return;
                    }
                }
                _ => {
                    self.conns[c as usize].retx.pop_front();
                    if let Some(t) = self.taps.sched.as_mut() {
                        t.pop = Some(c);
                    }
                    self.sched = Sched::Decide { conn: c, view: v.clone(), wait: self.p.read_latency - 1 };
                    return;
                }
            }
        }
        let mut full_after = vec![false; self.p.paths as usize];
        if plan.is_none() {
            let Some(si) = self.next_stream(c, v, ts) else {
                self.stall(c, false);
                return;
            };
            self.stats.ring_full = ch.ring_held;
            if let Some(t) = self.taps.sched.as_mut() {
                t.ring_full = ch.ring_held;
            }
            elig = ch.new_elig;
            if elig == 0 {
                self.stall(c, ch.new_port_wait);
                return;
            }
            for (p, f) in full_after.iter_mut().enumerate() {
                *f = ch.full_after & 1 << p != 0;
            }
            plan = Some(Plan::New { stream: si });
        }
        let mut clr = 0;
        for p in 0..np {
            let i = self.pidx(c, p);
            if std::mem::take(&mut self.paths[i].clr) {
                clr |= 1 << p;
            }
        }
        if let Some(t) = self.taps.sched.as_mut() {
            t.clr = Some((c, clr));
        }
        let weight = v.paths.iter().map(|w| w.weight).collect();
        let req = PselReq { conn: c, elig, weight, clr };
        self.sched = Sched::Select { conn: c, plan: plan.expect("set above"), req, issued: false, full_after };
    }

    /// The path decision is in: the packet is committed (ring, mirror,
    /// work request, telemetry event) and its frame queued.
    fn commit(&mut self, c: u32, plan: Plan, phys: u32, full_after: &[bool], ts: u32) {
        if self.taps.commit.is_some() {
            self.tap_commit_begin(c, plan, phys, full_after, ts);
        }
        if self.conns[c as usize].failed.is_some() {
            return;
        }
        match plan {
            Plan::Retx { path, psn } => {
                self.conns[c as usize].retx.pop_front();
                let ri = self.ridx(c, path, psn);
                let mut slot = self.ring[ri].expect("a queued slot stays until acked; acks wait for the decision");
                let charged = !slot.rnr_resend && slot.charge;
                if charged && slot.retx_count >= RETRY_LIMIT {
                    if let Some(r) = self.taps.commit.as_mut().and_then(|t| t.commit.as_mut()) {
                        r.fail = Some((slot.stream, slot.wq, status::TRANSPORT_RETRY_EXCEEDED));
                    }
                    self.fail(c, Some((slot.stream, slot.wq)), status::TRANSPORT_RETRY_EXCEEDED);
                    return;
                }
                let w = self.wq[self.widx(c, slot.stream, slot.wq)];
                let mut f = self.fields(c, &w, slot.stream, path, psn, slot.offset, slot.len, ts);
                f.retx = true;
                f.ackreq = true;
                if charged {
                    slot.retx_count += 1;
                }
                slot.resent |= !slot.rnr_resend;
                // The packet RNR held counts in inflight again.
                let kind = if slot.rnr_resend { tel::kind::RESUME } else { tel::kind::RETX };
                slot.rnr_resend = false;
                slot.charge = false;
                slot.phys = phys;
                let pi = self.pidx(c, path);
                slot.tx_seq = self.paths[pi].tx_seq;
                slot.tx_ts = ts as u16;
                slot.sent = ts;
                slot.queued = false;
                slot.rnr_wait = false;
                self.ring[ri] = Some(slot);
                self.paths[pi].tx_seq = self.paths[pi].tx_seq.wrapping_add(1);
                self.evt_fifo.push_back(tel::Event { kind, conn: c, path, now: ts, ..Default::default() });
                let addr = w.req.laddr.wrapping_add(slot.offset as u64);
                if let Some(r) = self.taps.commit.as_mut().and_then(|t| t.commit.as_mut()) {
                    r.slot_out = Some(slot);
                    r.tx_seq_out = self.paths[pi].tx_seq;
                    r.evt_kind = kind;
                    (r.hdr, r.addr, r.len) = (data_header(&f), addr, slot.len);
                }
                self.push_frame(c, phys, data_header(&f), Some((slot.stream, slot.wq)), addr, slot.len);
                self.stats.tx_retx = true;
            }
            Plan::New { stream } => {
                let path = phys;
                let si = self.sidx(c, stream);
                self.conns[c as usize].rr_stream = (stream + 1) % self.p.streams;
                let q = &self.streams[si];
                let slot_no = q.pend;
                let wi = self.widx(c, stream, slot_no);
                let w = self.wq[wi];
                let pi = self.pidx(c, path);
                let m = self.paths[pi];
                let k = &self.conns[c as usize];
                let a = CutIn {
                    ts,
                    req_len: w.req.len,
                    pend: q.pend,
                    tail: q.tail,
                    pend_sent: q.pend_sent,
                    next_psn: m.next_psn,
                    cum_acked: m.cum_acked,
                    tx_seq: m.tx_seq,
                    last_progress: m.last_progress,
                    srtt: m.srtt,
                    rttvar: m.rttvar,
                    inflight: k.cc.inflight_bytes,
                    cap: k.cc.cap,
                    pend_streams: k.pend_streams,
                    since_ackreq: k.since_ackreq,
                    unreq_since: k.unreq_since,
                    tail_at: k.tail_at,
                    rack_rtt: k.rack_rtt,
                    full_after: full_after[path as usize],
                };
                let o = cut(&self.p, &self.k, &a);
                let mut f = self.fields(c, &w, stream, path, o.psn, o.offset, o.len, ts);
                f.ackreq = o.ackreq;
                let ri = self.ridx(c, path, o.psn);
                let slot = Slot {
                    stream,
                    wq: slot_no,
                    offset: o.offset,
                    len: o.len,
                    tx_ts: ts as u16,
                    tx_seq: m.tx_seq,
                    phys: path,
                    sent: ts,
                    ..Default::default()
                };
                if let Some(r) = self.taps.commit.as_mut().and_then(|t| t.commit.as_mut()) {
                    r.cut_in = a;
                    r.cut = Some(o);
                    (r.slot_out, r.tx_seq_out, r.evt_kind) = (Some(slot), o.tx_seq, tel::kind::SEND);
                    (r.hdr, r.addr, r.len) = (data_header(&f), w.req.laddr.wrapping_add(o.offset as u64), o.len);
                }
                self.ring[ri] = Some(slot);
                let m = &mut self.paths[pi];
                (m.next_psn, m.tx_seq, m.last_progress) = (o.next_psn, o.tx_seq, o.last_progress);
                self.wq_issued[wi] = self.wq_issued[wi].wrapping_add(1);
                let q = &mut self.streams[si];
                (q.pend, q.pend_sent) = (o.pend, o.pend_sent);
                let k = &mut self.conns[c as usize];
                k.pend_streams = o.pend_streams;
                k.cc.inflight_bytes = o.inflight;
                if let Some(t) = self.taps.post.as_mut() {
                    t.cut = Some((c, stream, o.pend, o.pend_streams));
                }
                (k.since_ackreq, k.unreq_since, k.tail_at) = (o.since_ackreq, o.unreq_since, o.tail_at);
                self.evt_fifo.push_back(tel::Event {
                    kind: tel::kind::SEND,
                    conn: c,
                    path,
                    now: ts,
                    ..Default::default()
                });
                let addr = w.req.laddr.wrapping_add(o.offset as u64);
                self.push_frame(c, path, data_header(&f), Some((stream, slot_no)), addr, o.len);
                self.stats.tx_data = true;
            }
        }
    }

    /// The commit's record: the decided packet and the stores as the
    /// commit finds them (before any of its writes): for new data what
    /// the cut reads, for a retransmission its ring slot; the request of
    /// either.
    fn tap_commit_begin(&mut self, c: u32, plan: Plan, phys: u32, full_after: &[bool], ts: u32) {
        let k = &self.conns[c as usize];
        let m = self.paths[self.pidx(c, phys)];
        // The packet's path: a retransmission keeps its own (its header's
        // path_id, gen and tx_seq), leaving by phys's port and plane.
        let path = match plan {
            Plan::Retx { path, .. } => path,
            Plan::New { .. } => phys,
        };
        let mut r = CommitRec {
            conn: c,
            phys,
            full_after: full_after.iter().enumerate().map(|(p, &f)| u32::from(f) << p).sum(),
            failed: k.failed.is_some(),
            remote_id: k.remote_id,
            dst_mac: k.dst_mac,
            dst_ip: k.dst_ip,
            gen: self.paths[self.pidx(c, path)].gen,
            sport: m.sport,
            plane: m.plane,
            rr_stream: k.rr_stream,
            ts,
            tx_seq: self.paths[self.pidx(c, path)].tx_seq,
            ..CommitRec::default()
        };
        match plan {
            Plan::Retx { path, psn } => {
                r.retx = Some((path, psn));
                if let Some(s) = self.ring[self.ridx(c, path, psn)] {
                    let w = self.wq[self.widx(c, s.stream, s.wq)];
                    r.slot_in = Some(s);
                    r.wr = w.req;
                    (r.msn, r.rq_seq) = (w.msn, w.rq_seq);
                }
            }
            Plan::New { stream } => {
                let q = &self.streams[self.sidx(c, stream)];
                let wi = self.widx(c, stream, q.pend);
                let w = self.wq[wi];
                r.stream = stream;
                r.wr = w.req;
                (r.msn, r.rq_seq, r.issued) = (w.msn, w.rq_seq, self.wq_issued[wi]);
            }
        }
        if let Some(t) = self.taps.commit.as_mut() {
            t.commit = Some(r);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn fields(&self, c: u32, w: &Wr, stream: u32, path: u32, psn: u32, offset: u32, len: u32, ts: u32) -> DataFields {
        let r = &w.req;
        let (rkey_or_rq, addr_or_offset) =
            if r.is_send() { (w.rq_seq, offset as u64) } else { (r.rkey, r.raddr.wrapping_add(offset as u64)) };
        DataFields {
            op: r.op,
            som: offset == 0,
            eom: offset + len == r.len,
            retx: false,
            ackreq: false,
            payload_len: len,
            dst_conn: self.conns[c as usize].remote_id,
            path_id: path,
            psn,
            gen: self.paths[self.pidx(c, path)].gen,
            stream,
            msn: w.msn,
            msg_len: r.len,
            rkey_or_rq,
            addr_or_offset,
            tx_ts: ts as u16,
            imm: if r.has_imm() { r.imm } else { 0 },
        }
    }

    /// Queues a data or PROBE frame leaving by `phys`'s port and plane,
    /// with `len` payload bytes to read from `addr`.
    fn push_frame(&mut self, c: u32, phys: u32, hdr: Vec<u8>, wr: Option<(u32, u32)>, addr: u64, len: u32) {
        let m = self.paths[self.pidx(c, phys)];
        if let Some(t) = self.taps.output.as_mut() {
            let k = &self.conns[c as usize];
            t.frame = Some(FramePush {
                hdr: hdr.clone(),
                addr,
                len,
                dst_mac: k.dst_mac,
                dst_ip: k.dst_ip,
                sport: m.sport,
                plane: m.plane,
                conn: c,
                wr,
            });
        }
        let bb = self.p.beat_bytes() as u64;
        let (ar_next, ar_end) =
            if len == 0 { (0, 0) } else { (addr & !(bb - 1), (addr + len as u64).div_ceil(bb) * bb) };
        self.frames.push_back(Frame {
            head: hdr,
            payload: Vec::with_capacity(len as usize),
            len,
            ar_next,
            ar_end,
            r_left: (ar_end - ar_next) / bb,
            r_got: 0,
            skip: (addr % bb) as u32,
            err: false,
            // The physical path's port and plane: a rerouted retransmission
            // keeps its logical path_id but follows the other path's route.
            sport: m.sport,
            plane: m.plane,
            to: (self.conns[c as usize].dst_mac, self.conns[c as usize].dst_ip),
            conn: c,
            wr,
        });
    }
}

// ------------------------------------------------------------------ acknowledgements

impl TxEngine {
    /// Starts the acknowledgement unit's next piece of work: a timeout, an
    /// update, a SACK, a NACK, then the RNR and window-probe timers.
    ///
    /// A step's table reads (connection context, path mirror, ring slot)
    /// are issued when it starts and answer `L` cycles later; the step's
    /// work follows, so it holds the unit `L` cycles more than its work
    /// and the next step's reads see every write (no forwarding needed).
    fn ack_step(&mut self, ts: u32) {
        if self.ack_work(ts) {
            if let Some(t) = self.taps.ack.as_mut() {
                t.handler_busy = self.ack_busy;
            }
            self.ack_busy = self.ack_busy.max(1) + self.p.read_latency;
        }
    }

    /// The work of one step; false when there was none.
    fn ack_work(&mut self, ts: u32) -> bool {
        if let Some(r) = self.rto_reg.take() {
            self.tap_ack_go(AckGo::Rto);
            let q = self.tap_rto_begin(Some(r), None, ts);
            self.on_rto(&r, ts);
            self.tap_rto_end(q);
        } else if let Some(u) = self.upd_reg.take() {
            self.tap_ack_go(AckGo::Upd);
            let q = self.tap_rto_begin(None, Some(u), ts);
            self.on_upd(&u);
            self.tap_rto_end(q);
        } else if let Some(k) = &self.sack_cont {
            // A SACK's next stage; after SILENT events, once path_telemetry
            // has answered them (their m_rto records acted on above).
            if k.wait && !self.tel_settled {
                return false;
            }
            self.tap_ack_go(AckGo::Stage);
            self.sack_stage(ts);
        } else if let Some(s) = self.sack_reg.take() {
            self.sacks_started += 1;
            self.tap_ack_go(AckGo::Sack);
            let before = self.taps.sack.is_some().then(|| self.tap_sack_begin(&s, ts));
            self.on_sack(&s, ts);
            if let Some(b) = before {
                self.tap_sack_end(b);
            }
        } else if let Some(n) = self.nack_reg.take() {
            self.tap_ack_go(AckGo::Nack);
            self.on_nack(&n, ts);
        } else if let Some(&(c, path, psn, _, tag)) =
            self.rnr.front().filter(|&&(_, _, _, until, _)| tel::ts_reached(ts, until))
        {
            // The slot's wait ends when the ring's read answers, `L` cycles
            // on (timer_tick), as every step's reads do (item 10).
            self.rnr.pop_front();
            self.tap_ack_go(AckGo::Rnr);
            self.tap_timer_go(AckGo::Rnr, c, ts);
            let slot = self.ring[self.ridx(c, path, psn)];
            self.timer_ans = Some((TimerRead::Rnr { conn: c, path, psn, tag, slot }, self.p.read_latency));
            self.ack_busy = 1;
        } else if let Some(&(c, at)) = self.wprobe.front() {
            if tel::ts_reached(ts, at) {
                self.wprobe.pop_front();
                if std::mem::take(&mut self.wprobe_refused) {
                    self.unstall_all();
                    if let Some(t) = self.taps.timer.as_mut() {
                        t.unstall_all = true;
                    }
                }
                self.tap_ack_go(AckGo::Wprobe);
                self.tap_timer_go(AckGo::Wprobe, c, ts);
                let k = &self.conns[c as usize];
                let bits = |f: &dyn Fn(&PathM) -> bool| {
                    (0..self.p.paths).fold(0, |a, p| a | u32::from(f(&self.paths[self.pidx(c, p)])) << p)
                };
                let read = TimerRead::Wprobe {
                    conn: c,
                    at,
                    armed: k.window_probe_at,
                    failed: k.failed.is_some(),
                    npaths: k.npaths,
                    dead: k.dead,
                    pending: bits(&|m| m.probe_pending),
                    probe_q: k.probe_q,
                };
                self.timer_ans = Some((read, self.p.read_latency));
                self.ack_busy = 1;
                return true;
            }
            return self.tail_work(ts);
        } else {
            return self.tail_work(ts);
        }
        true
    }

    /// Whether connection `c`'s tail timer is due.
    fn tail_due(&self, c: u32, ts: u32) -> bool {
        let k = &self.conns[c as usize];
        k.open && k.failed.is_none() && k.tail_at.is_some_and(|t| tel::ts_reached(ts, t))
    }

    /// The tail timer the scanner found: its connection's context is read,
    /// and `L` cycles on ([`Self::timer_tick`]) the stages start if the
    /// timer is still due.
    fn tail_work(&mut self, ts: u32) -> bool {
        let Some(c) = self.tail_hit.take() else { return false };
        self.tap_ack_go(AckGo::Tail);
        self.tap_timer_go(AckGo::Tail, c, ts);
        let k = &self.conns[c as usize];
        let read = TimerRead::Tail { conn: c, ts, open: k.open, failed: k.failed.is_some(), tail_at: k.tail_at };
        self.timer_ans = Some((read, self.p.read_latency));
        self.ack_busy = 1;
        true
    }

    fn tap_timer_go(&mut self, go: AckGo, c: u32, ts: u32) {
        if let Some(t) = self.taps.timer.as_mut() {
            t.go = Some((go, c, ts));
        }
    }

    /// A timer step's reads have answered; called each cycle after the
    /// unit's turn, it acts `L` cycles after the step on what the step
    /// read. Nothing writes that in between: the unit is busy, so no other
    /// step, decision, commit or reopen runs, and the output stage's
    /// failure waits for the answer as it waits for a NACK's (the debug
    /// checks below hold the model to it).
    fn timer_tick(&mut self) {
        let Some((_, wait)) = self.timer_ans.as_mut() else { return };
        if *wait > 0 {
            *wait -= 1;
            return;
        }
        let (read, _) = self.timer_ans.take().expect("checked");
        let mut act = TimerAct { read, live: false, retx: false, probe: None };
        match read {
            TimerRead::Rnr { conn: c, path, psn, tag, slot } => {
                let ri = self.ridx(c, path, psn);
                debug_assert_eq!(self.ring[ri], slot, "nothing writes the slot while the RNR step reads it");
                if let Some(mut s) = slot.filter(|s| s.rnr_wait && s.rnr_tag == tag) {
                    act.live = true;
                    s.rnr_wait = false;
                    if !s.queued {
                        s.queued = true;
                        act.retx = true;
                        self.queue_retx(c, path, psn);
                    }
                    self.ring[ri] = Some(s);
                }
            }
            TimerRead::Wprobe { conn: c, at, armed, failed, npaths, dead, pending, probe_q } => {
                debug_assert_eq!(self.conns[c as usize].window_probe_at, armed, "the window probe's deadline as read");
                if armed == Some(at) && !failed {
                    act.live = true;
                    self.conns[c as usize].window_probe_at = None;
                    let all = u32::MAX.checked_shr(32 - npaths).unwrap_or(0);
                    let first = (!dead & all != 0).then(|| (!dead & all).trailing_zeros());
                    debug_assert_eq!(
                        first,
                        (0..npaths).find(|&p| self.paths[self.pidx(c, p)].state != tel::DEAD),
                        "the context's DEAD bits are the mirrors' states"
                    );
                    if let Some(p) = first.filter(|&p| (pending | probe_q) & 1 << p == 0) {
                        act.probe = Some(p);
                        self.queue_probe(c, p);
                    }
                }
            }
            TimerRead::Tail { conn: c, ts, open, failed, tail_at } => {
                // Re-armed or cleared since the scanner saw it: nothing.
                if open && !failed && tail_at.is_some_and(|t| tel::ts_reached(ts, t)) {
                    act.live = true;
                    self.tails_fired += 1;
                    self.conns[c as usize].tail_at = None;
                    // RACK's reordering timer first (RFC 8985): a packet
                    // overdue while a later one was acknowledged is lost
                    // now; the stages then PROBE the paths whose overdue
                    // packets have no such evidence.
                    self.sack_cont = Some(SackCont {
                        conn: c,
                        stage: SackStage::Overdue(0),
                        wait: false,
                        touched: Vec::new(),
                        stream_id: u32::MAX,
                        completed_msn: 0,
                        tail: true,
                    });
                    if let Some(t) = self.taps.stage.as_mut() {
                        t.cont = Some(StageCont { conn: c, tail: true, ..StageCont::default() });
                    }
                }
            }
        }
        if let Some(t) = self.taps.timer.as_mut() {
            t.ans = Some(act);
        }
    }

    /// The tail timer's PROBEs: every path with an overdue packet and no
    /// PROBE pending or queued, with the walk that found them.
    fn probe_tail(&mut self, c: u32, ts: u32) -> Vec<StageWalk> {
        let mut walk = Vec::new();
        for p in 0..self.conns[c as usize].npaths {
            let m = self.paths[self.pidx(c, p)];
            if m.probe_pending || self.conns[c as usize].probe_q & 1 << p != 0 {
                continue;
            }
            let span = seq_diff(m.next_psn, m.cum_acked);
            let mut w = StageWalk { path: p, span, ..StageWalk::default() };
            let wait = overdue_wait(&m, self.conns[c as usize].rack_rtt);
            let mut overdue = false;
            for d in 0..span {
                w.reads += 1;
                let slot = self.ring[self.ridx(c, p, (m.cum_acked + d) & SEQ_MASK)];
                if slot.is_some_and(|s| !s.queued && !s.rnr_wait && ts.wrapping_sub(s.sent) as i32 >= wait as i32) {
                    overdue = true;
                    break;
                }
            }
            if overdue {
                self.queue_probe(c, p);
            }
            walk.push(w);
        }
        walk
    }

    /// Records what a timeout's or an update's handler reads, before it
    /// runs ([`RtoTap`]).
    /// Returns the length of the connection's retransmit queue.
    fn tap_rto_begin(&mut self, rto: Option<tel::Rto>, upd: Option<tel::Upd>, ts: u32) -> usize {
        if self.taps.rto.is_none() {
            return 0;
        }
        let (c, path) = rto.map(|r| (r.conn, r.path)).or(upd.map(|u| (u.conn, u.path))).expect("a record");
        let k = &self.conns[c as usize];
        let m = self.paths[self.pidx(c, path)];
        let slots = (0..seq_diff(m.next_psn, m.cum_acked))
            .map(|d| self.ring[self.ridx(c, path, (m.cum_acked + d) & SEQ_MASK)].map(|s| (s.queued, s.rnr_wait)))
            .collect();
        let rec = RtoRec {
            rto,
            upd,
            ts,
            open: k.open,
            failed: k.failed.is_some(),
            probe_q: k.probe_q,
            npaths: k.npaths,
            dead: k.dead,
            plane: m.plane,
            next_psn: m.next_psn,
            cum_acked: m.cum_acked,
            marks: self.planes.clone(),
            slots,
            ..RtoRec::default()
        };
        let queued = k.retx.len();
        if let Some(t) = self.taps.rto.as_mut() {
            t.step = Some(rec);
        }
        queued
    }

    /// Records what the handler wrote ([`Self::tap_rto_begin`]; `queued`
    /// its retransmit queue's length before).
    fn tap_rto_end(&mut self, queued: usize) {
        let Some(mut r) = self.taps.rto.as_mut().and_then(|t| t.step.take()) else { return };
        let (c, path) = r.rto.map(|x| (x.conn, x.path)).or(r.upd.as_ref().map(|u| (u.conn, u.path))).expect("a record");
        let k = &self.conns[c as usize];
        let m = self.paths[self.pidx(c, path)];
        r.retx = k
            .retx
            .iter()
            .skip(queued)
            .map(|&(p, psn)| {
                debug_assert_eq!(p, path, "the handler queues its own path's packets");
                psn
            })
            .collect();
        // queue_probe pushes exactly when it sets the path's bit.
        r.probe = k.probe_q & 1 << path != 0 && r.probe_q & 1 << path == 0;
        r.busy = self.ack_busy;
        r.dead_after = k.dead;
        r.fail = k.failed.is_some() && !r.failed;
        r.state = m.state;
        r.sport = m.sport;
        r.gen = m.gen;
        r.probe_pending = m.probe_pending;
        r.timed_out = m.timed_out;
        r.clr = m.clr;
        r.mark = self
            .planes
            .iter()
            .zip(&r.marks)
            .position(|(a, b)| a != b)
            .map(|i| (i as u8, self.planes[i].expect("a mark is written, not cleared")));
        if let Some(t) = self.taps.rto.as_mut() {
            t.step = Some(r);
        }
    }

    fn act(&mut self, c: u32, path: u32, act: u8) {
        if act & tel::act::ALL_LOST != 0 {
            self.all_lost(c, path);
        }
        if act & tel::act::PROBE != 0 {
            self.queue_probe(c, path);
        }
    }

    /// Queues a PROBE on `path` unless one is queued already (the
    /// connection's `probe_q` bit, not a search of the queue).
    fn queue_probe(&mut self, c: u32, path: u32) {
        let k = &mut self.conns[c as usize];
        if k.probe_q & 1 << path == 0 {
            k.probe_q |= 1 << path;
            k.probes.push_back(path);
        }
    }

    fn on_rto(&mut self, r: &tel::Rto, ts: u32) {
        // The count comes from the record alone (item 10): the handler
        // knows whether its connection is open only when its reads answer.
        self.ack_busy = 1 + if r.act & tel::act::ALL_LOST != 0 { self.p.ring_depth } else { 0 };
        self.conns[r.conn as usize].stalled = false;
        if !self.conns[r.conn as usize].open || self.conns[r.conn as usize].failed.is_some() {
            return;
        }
        let pi = self.pidx(r.conn, r.path);
        let m = &mut self.paths[pi];
        m.state = r.state;
        m.sport = r.sport;
        m.gen = r.gen;
        m.probe_pending = false;
        m.timed_out = r.state == tel::GOOD || r.state == tel::SKIP;
        if r.state == tel::SUSPECT || r.state == tel::DEAD {
            // The NIC avoids the path's plane for every connection until a
            // PROBE there is answered or the mark expires.
            let until = ts.wrapping_add(self.k.dead_probe_interval);
            if let Some(u) = self.planes.get_mut(m.plane as usize) {
                if u.is_none_or(|t| seq32_after(until, t)) {
                    *u = Some(until);
                }
            }
        }
        if self.write_dead(r.conn, r.path, r.state) {
            // Every path DEAD: the reference's `on_timer` fails the
            // connection after the timeout (its PROBE and retransmissions
            // would be flushed at once, so none is queued). The failure's
            // ring clear raises the count (item 12).
            self.fail(r.conn, None, status::TRANSPORT_RETRY_EXCEEDED);
            return;
        }
        self.act(r.conn, r.path, r.act);
    }

    /// Writes the path's DEAD bit of the connection context with its new
    /// mirror state; true when the connection is live and every path below
    /// its `npaths` is now DEAD (the reference's `on_timer`: "fails only
    /// when every path is DEAD").
    fn write_dead(&mut self, c: u32, path: u32, state: u8) -> bool {
        let k = &mut self.conns[c as usize];
        k.dead = k.dead & !(1 << path) | u32::from(state == tel::DEAD) << path;
        // npaths is 1..=32 on an open connection, 0 on one never opened.
        let all = u32::MAX.checked_shr(32 - k.npaths).unwrap_or(0);
        k.open && k.failed.is_none() && k.dead & all == all
    }

    /// An update: the credit clear is kept for the next path request. Its
    /// action is taken only when it answers a PROBE reply (state SUSPECT
    /// and a PROBE without ALL_LOST): a timeout's update carries the same
    /// action as its `m_rto` record, which is the one acted on.
    fn on_upd(&mut self, u: &tel::Upd) {
        self.conns[u.conn as usize].stalled = false;
        let pi = self.pidx(u.conn, u.path);
        self.paths[pi].state = u.state;
        if u.state == tel::SUSPECT || u.state == tel::DEAD {
            // Back to GOOD only through PROBE replies, which clear retries.
            self.paths[pi].timed_out = false;
        }
        if u.clr {
            self.paths[pi].clr = true;
        }
        self.ack_busy = 1;
        if self.write_dead(u.conn, u.path, u.state) {
            // A timeout's update follows its `m_rto` record, which failed
            // the connection already; this one only if it came first.
            self.fail(u.conn, None, status::TRANSPORT_RETRY_EXCEEDED);
            return;
        }
        let reply = u.state == tel::SUSPECT && u.act & tel::act::ALL_LOST == 0;
        if reply && self.conns[u.conn as usize].failed.is_none() {
            self.act(u.conn, u.path, u.act & tel::act::PROBE);
        }
    }

    /// Every unacked packet of the path goes to the retransmit queue.
    fn all_lost(&mut self, c: u32, path: u32) {
        let m = self.paths[self.pidx(c, path)];
        let span = seq_diff(m.next_psn, m.cum_acked);
        for d in 0..span {
            let psn = (m.cum_acked + d) & SEQ_MASK;
            let ri = self.ridx(c, path, psn);
            if let Some(s) = self.ring[ri].as_mut() {
                if !s.queued {
                    s.queued = true;
                    // The path failed, not the packet: not charged.
                    s.charge = false;
                    s.rnr_wait = false;
                    self.queue_retx(c, path, psn);
                }
            }
        }
        // The path's RNR entries are now stale (every slot's rnr_wait is
        // clear) and are skipped when they reach the head.
    }

    /// The reference's `TxConn::on_sack`, first pass: acknowledge, the ACK
    /// event, connection AIMD, PROBE reply, losses on the path by tx_seq.
    /// The rest (RACK across paths, the tail timer, completed_msn and the
    /// completions) follows in [`Self::sack_stage`].
    ///
    /// The busy count comes from the record alone (1, the step adds `L`):
    /// the span of a live SACK is known only when the path's mirror
    /// answers, `L` cycles after the step, and its two passes then raise
    /// the count to `2 + 2 x span` ([`Self::sack_tick`]), which frees the
    /// unit in the cycle the step's `2 + 2 x span + L` freed it
    /// (architecture.md, tx_engine item 13). The writes stay in the step's
    /// cycle: nothing reads them before the unit is free.
    fn on_sack(&mut self, h: &SackIn, ts: u32) {
        let c = h.conn;
        self.conns[c as usize].stalled = false;
        let k = &self.conns[c as usize];
        self.ack_busy = 1;
        if !k.open || k.failed.is_some() {
            return;
        }
        if h.path_id >= k.npaths {
            self.sack_stale_in = Some(self.p.read_latency - 1);
            return;
        }
        let path = h.path_id;
        let k_np = k.npaths;
        let pi = self.pidx(c, path);
        let m = self.paths[pi];
        let span = seq_diff(m.next_psn, m.cum_acked);
        let Some(rel) = sack_window(m.next_psn, m.cum_acked, h.cum_psn, h.bitmap) else {
            self.sack_stale_in = Some(self.p.read_latency - 1);
            return;
        };
        // Two passes over the outstanding psns: acknowledge, then mark
        // losses against the new acked_seq. Their count is taken when the
        // reads answer (item 13).
        self.sack_hold = Some((self.p.read_latency, 2 + 2 * span));
        let acked = (0..span).filter(|&d| sack_acks(rel, h.bitmap, d));
        let mut fold =
            SackFold { rack_sent: k.rack_sent, rack_rtt: k.rack_rtt, max_seq: m.acked_seq, ..Default::default() };
        let mut touched = vec![false; self.p.streams as usize];
        for r in acked {
            let psn = (m.cum_acked + r) & SEQ_MASK;
            let ri = self.ridx(c, path, psn);
            let Some(slot) = self.ring[ri].take() else { continue };
            touched[slot.stream as usize] = true;
            let a = AckedSlot {
                len: slot.len,
                tx_ts: slot.tx_ts,
                sent: slot.sent,
                tx_seq: slot.tx_seq,
                phys: slot.phys,
                rnr_resend: slot.rnr_resend,
                resent: slot.resent,
                rnr_backed_off: slot.rnr_count != 0,
            };
            fold = sack_fold(&fold, &a, h.echo_ts, ts);
            self.conns[c as usize].cc.inflight_bytes -= slot.len as u64;
            let wi = self.widx(c, slot.stream, slot.wq);
            self.wq_acked[wi] = self.wq_acked[wi].wrapping_add(1);
        }
        let SackFold { pkts, bytes, rtt_ok, rack_sent, rack_rtt, delivered, max_seq } = fold;
        self.conns[c as usize].rack_sent = rack_sent;
        self.conns[c as usize].rack_rtt = rack_rtt;
        let probe_reply = m.probe_pending && h.echo_ts == m.probe_ts && h.dport == m.sport;
        let rtt = (rtt_ok || probe_reply).then(|| (ts as u16).wrapping_sub(h.echo_ts) as u32);
        let new_base = (0..span)
            .map(|d| (m.cum_acked + d) & SEQ_MASK)
            .find(|&psn| self.ring[self.ridx(c, path, psn)].is_some())
            .unwrap_or(m.next_psn);
        // CE steering, the reference's default (`NicConfig::ce_steering`):
        // a CE cut does not pause the path (path_telemetry ACK_STEER).
        self.pend_evt.push_back(tel::Event {
            kind: tel::kind::ACK_STEER,
            conn: c,
            path,
            now: ts,
            cum_acked: new_base,
            acked_pkts: pkts.min(pt::INFLIGHT.max() as u32),
            acked_bytes: bytes.min(pt::ACKED_BYTES.max() as u32),
            ecn_cnt: h.ecn_cnt,
            rtt_valid: rtt.is_some(),
            rtt: rtt.unwrap_or(0),
            acked_seq: max_seq,
            ..Default::default()
        });
        let pm = &mut self.paths[pi];
        pm.cum_acked = new_base;
        if seq32_after(max_seq, pm.acked_seq) {
            pm.acked_seq = max_seq;
        }
        if let Some(r) = rtt {
            rtt_sample(pm, r, &self.k);
        }
        if pkts > 0 {
            pm.timed_out = false;
        }
        let mut lost_before = pm.acked_seq;
        // Progress is credited to the paths the acknowledged copies left
        // by, not to the path whose sequence they carry (a rerouted
        // retransmission must not make a dead path look alive); an
        // answered PROBE left by this path's own port.
        for p in 0..k_np {
            if delivered & 1 << p != 0 || (probe_reply && p == path) {
                let i = self.pidx(c, p);
                self.paths[i].last_progress = ts;
                if let Some(t) = self.taps.sack.as_mut() {
                    t.progress |= 1 << p;
                }
            }
        }
        self.conn_ack(c, ts, pkts, bytes, h, rtt);
        if probe_reply {
            self.paths[pi].probe_pending = false;
            if let Some(u) = self.planes.get_mut(m.plane as usize) {
                if u.take().is_some() {
                    self.unstall_all();
                }
            }
            if seq32_after(m.probe_seq, lost_before) {
                lost_before = m.probe_seq;
            }
            self.pend_evt.push_back(tel::Event {
                kind: tel::kind::PROBE_REPLY,
                conn: c,
                path,
                now: ts,
                ..Default::default()
            });
        }
        // RACK on tx_seq: an unacked packet sent before an acknowledged one
        // is lost.
        let m = self.paths[pi];
        let mut silent = Vec::new();
        for d in 0..seq_diff(m.next_psn, m.cum_acked) {
            let psn = (m.cum_acked + d) & SEQ_MASK;
            let ri = self.ridx(c, path, psn);
            if let Some(s) = self.ring[ri] {
                if !s.queued && !s.rnr_wait && seq32_after(lost_before, s.tx_seq) {
                    self.lost(c, path, psn, &mut silent);
                }
            }
        }
        let wait = self.silent_timeouts(c, &silent, ts);
        self.sack_cont = Some(SackCont {
            conn: c,
            stage: SackStage::Overdue(0),
            wait,
            touched,
            stream_id: h.stream_id,
            completed_msn: h.completed_msn,
            tail: false,
        });
        if let Some(t) = self.taps.stage.as_mut() {
            t.cont = Some(StageCont {
                conn: c,
                tail: false,
                wait,
                touched: self.sack_cont.as_ref().map(|k| k.touched.clone()).unwrap_or_default(),
                stream_id: h.stream_id,
                completed_msn: h.completed_msn,
                span,
            });
        }
    }

    /// Slot `(path, psn)` is found lost: queued for retransmission, and
    /// charged to the packet only if the path its copy left by delivered
    /// something since; otherwise that path goes on `silent`.
    fn lost(&mut self, c: u32, path: u32, psn: u32, silent: &mut Vec<u32>) {
        let ri = self.ridx(c, path, psn);
        let Some(s) = self.ring[ri].as_mut() else { return };
        let progress = self.paths[(c * self.p.paths + s.phys) as usize].last_progress;
        s.queued = true;
        s.charge = seq32_after(progress, s.sent);
        if !s.charge {
            silent.push(s.phys);
        }
        self.queue_retx(c, path, psn);
    }

    /// Packets lost on paths that have not answered since they left: each
    /// is one timeout of that path (a SILENT event: path_telemetry applies
    /// the timeout if the path is GOOD, with its fresh-port LFSR, and
    /// answers on `m_rto`), up to `suspect_after_rtos` per path
    /// ([`silent_events`]). True when events were sent: the SACK's next
    /// stage then waits for their answers, so that their actions (every
    /// packet re-queued, a PROBE, the plane marked) come first, as inside
    /// the reference's `on_sack`.
    fn silent_timeouts(&mut self, c: u32, silent: &[u32], ts: u32) -> bool {
        for p in silent_events(silent, self.k.suspect_after_rtos) {
            self.pend_evt.push_back(tel::Event {
                kind: tel::kind::SILENT,
                conn: c,
                path: p,
                now: ts,
                ..Default::default()
            });
        }
        debug_assert!(self.pend_evt.len() <= self.p.evt_pend as usize, "one step's events overflow the list");
        !silent.is_empty()
    }

    /// A SACK's next stage (one per call): RACK across paths, path by
    /// path, stopping after a path that showed silent losses; then the
    /// tail timer; then the stream's completed_msn and the completion
    /// walk.
    ///
    /// The step's count is 1 (the step adds `L`); the stage's ring walk
    /// then holds the unit a cycle per ring read its RTL issues
    /// ([`stage_cycles`]: a cycle per slot up to each path's break, and
    /// with `L = 2` the read already issued past a break or a stop), as
    /// holds from the cycle its reads answer (architecture.md, tx_engine
    /// item 14). Its writes stay in the step's cycle but the tail timer's,
    /// which the scanner reads: that lands with the walk's last answer.
    fn sack_stage(&mut self, ts: u32) {
        let Some(mut k) = self.sack_cont.take() else { return };
        let c = k.conn;
        self.ack_busy = 1;
        let before = self.taps.stage.is_some().then(|| self.tap_stage_begin(&k, ts));
        let mut walk = Vec::new();
        let mut tail = None;
        if self.conns[c as usize].failed.is_none() {
            k.wait = false;
            match k.stage {
                SackStage::Overdue(first) => {
                    let np = self.conns[c as usize].npaths;
                    let mut p = first;
                    if let Some(rack) = self.conns[c as usize].rack_sent {
                        while p < np {
                            let mut silent = Vec::new();
                            walk.push(self.overdue(c, p, rack, ts, &mut silent));
                            p += 1;
                            if self.silent_timeouts(c, &silent, ts) {
                                k.wait = true;
                                break;
                            }
                        }
                        // The RTL may have issued reads of the paths after
                        // a stop before it knew of it.
                        walk.extend((p..np).map(|q| StageWalk {
                            path: q,
                            span: self.span(c, q),
                            ..StageWalk::default()
                        }));
                    }
                    k.stage = if p < np && self.conns[c as usize].rack_sent.is_some() {
                        SackStage::Overdue(p)
                    } else {
                        SackStage::Tail
                    };
                    self.sack_cont = Some(k.clone());
                }
                SackStage::Tail if k.tail => {
                    walk = self.probe_tail(c, ts);
                }
                SackStage::Tail => {
                    let (w, at) = self.arm_tail(c);
                    walk = w;
                    tail = Some(at);
                    k.stage = SackStage::Finish;
                    self.sack_cont = Some(k.clone());
                }
                SackStage::Finish => {
                    if k.stream_id < self.p.streams {
                        let si = self.sidx(c, k.stream_id);
                        if seq_before(self.streams[si].remote_completed, k.completed_msn) {
                            self.streams[si].remote_completed = k.completed_msn;
                            self.conns[c as usize].window_probe_at = None;
                        }
                    }
                    self.complete(c, k.touched.clone());
                }
            }
        }
        let l = self.p.read_latency;
        let cycles = stage_cycles(l, &walk);
        if cycles > 0 {
            self.stage_hold = Some((l, cycles));
        }
        if let Some(at) = tail {
            // The last answer: the last read's (issued at t + L + cycles - 1),
            // or the context's with nothing to read.
            let when = if cycles > 0 { 2 * l + cycles - 1 } else { l };
            self.tail_wr = Some((when, c, at));
        }
        if let Some(b) = before {
            self.tap_stage_end(b, walk, cycles, tail);
        }
    }

    /// psns outstanding on path `p` of connection `c`.
    fn span(&self, c: u32, p: u32) -> u32 {
        let m = self.paths[self.pidx(c, p)];
        seq_diff(m.next_psn, m.cum_acked)
    }

    /// A SACK stage's walk, each cycle after the unit's turn: `L` cycles
    /// after the step its reads answer and it issues ring reads, one a
    /// cycle, each raising the count to at least 2 (`tx_ack`'s
    /// `s_hold_sack` with 2); the tail timer it armed lands with its last
    /// answer, before the scanner compares.
    fn stage_tick(&mut self) {
        if let Some((wait, cycles)) = self.stage_hold.as_mut() {
            if *wait > 0 {
                *wait -= 1;
            } else {
                *cycles -= 1;
                if *cycles == 0 {
                    self.stage_hold = None;
                }
                self.ack_busy = self.ack_busy.max(2);
                if let Some(t) = self.taps.ack.as_mut() {
                    t.hold_stage = true;
                }
            }
        }
        if let Some((wait, c, at)) = self.tail_wr.as_mut() {
            if *wait > 0 {
                *wait -= 1;
            } else {
                let (c, at) = (*c, *at);
                self.tail_wr = None;
                self.conns[c as usize].tail_at = at;
            }
        }
    }

    /// RACK across paths on path `p` (the reference's `detect_overdue`
    /// body): a packet unacknowledged `overdue_wait` after it left, while
    /// a packet sent later on any path was acknowledged, is lost. First
    /// transmissions leave in psn order, so the walk stops at the first
    /// one that is not.
    fn overdue(&mut self, c: u32, p: u32, rack: u32, ts: u32, silent: &mut Vec<u32>) -> StageWalk {
        let m = self.paths[self.pidx(c, p)];
        let span = seq_diff(m.next_psn, m.cum_acked);
        let mut w = StageWalk { path: p, span, ..StageWalk::default() };
        let wait = overdue_wait(&m, self.conns[c as usize].rack_rtt);
        for d in 0..span {
            w.reads += 1;
            let psn = (m.cum_acked + d) & SEQ_MASK;
            let Some(s) = self.ring[self.ridx(c, p, psn)] else { continue };
            if s.queued || s.rnr_wait {
                continue;
            }
            let overdue = ts.wrapping_sub(s.sent) as i32 >= wait as i32;
            if seq32_after(rack, s.sent) && overdue {
                let n = silent.len();
                self.lost(c, p, psn, silent);
                if silent.len() > n && w.silent_at.is_none() {
                    w.silent_at = Some(d);
                }
            } else if !s.resent {
                break;
            }
        }
        w
    }

    /// The tail timer when nothing is left to cut and packets are
    /// outstanding: the earliest time one of them is overdue (the
    /// reference's `arm_tail`), with the walk that found it.
    fn arm_tail(&mut self, c: u32) -> (Vec<StageWalk>, Option<u32>) {
        if self.conns[c as usize].pend_streams > 0 {
            return (Vec::new(), None);
        }
        let rack_rtt = self.conns[c as usize].rack_rtt;
        let mut at: Option<u32> = None;
        let mut walk = Vec::new();
        for p in 0..self.conns[c as usize].npaths {
            let m = self.paths[self.pidx(c, p)];
            let span = seq_diff(m.next_psn, m.cum_acked);
            let mut w = StageWalk { path: p, span, ..StageWalk::default() };
            let wait = overdue_wait(&m, rack_rtt);
            for d in 0..span {
                w.reads += 1;
                let Some(s) = self.ring[self.ridx(c, p, (m.cum_acked + d) & SEQ_MASK)] else { continue };
                if s.queued || s.rnr_wait {
                    continue;
                }
                let t = s.sent.wrapping_add(wait);
                if at.is_none_or(|a| (t.wrapping_sub(a) as i32) < 0) {
                    at = Some(t);
                }
                if !s.resent {
                    break;
                }
            }
            walk.push(w);
        }
        (walk, at)
    }

    /// Connection-level AIMD, RTT and cap (the reference's `conn_ack`).
    fn conn_ack(&mut self, c: u32, ts: u32, pkts: u32, bytes: u32, h: &SackIn, rtt: Option<u32>) {
        let npaths = self.conns[c as usize].npaths;
        // CE steering: a mark tells of one path's queue, which that path's
        // own cut answers; the connection's window takes no CE count (a
        // bottleneck every path shares marks every path, and their
        // windows shrink together).
        let a = CcAck { ts, pkts, bytes, ecn_cnt: 0, rate_hint: h.rate_hint, rtt, npaths };
        let cc = conn_cc_ack(&self.p, &self.k, &self.conns[c as usize].cc, &a);
        self.conns[c as usize].cc = cc;
    }

    /// The reference's `TxConn::on_nack`, in its step: the connection
    /// leaves `stalled`, the busy count comes from the record alone (2;
    /// the step adds `L`), and the reads of the context, the path's mirror
    /// and the NACKed psn's ring slot are issued. Everything else, a
    /// failure included, happens `L` cycles later when they answer
    /// ([`Self::nack_act`]; architecture.md, tx_engine item 11).
    fn on_nack(&mut self, h: &NackIn, ts: u32) {
        let c = h.conn;
        self.conns[c as usize].stalled = false;
        self.ack_busy = 2;
        let k = &self.conns[c as usize];
        // The read's address takes the path's low bits: a path_id past the
        // connection's paths is stale, its answer unused.
        let path = h.path_id % self.p.paths;
        let m = self.paths[self.pidx(c, path)];
        let read = NackRead {
            open: k.open,
            failed: k.failed.is_some(),
            npaths: k.npaths,
            cum_acked: m.cum_acked,
            next_psn: m.next_psn,
            slot: self.ring[self.ridx(c, path, h.psn)],
        };
        self.nack_ans = Some(NackAns { nack: *h, ts, read, wait: self.p.read_latency });
        if let Some(t) = self.taps.nack.as_mut() {
            t.step = Some((*h, ts, self.ack_busy));
        }
    }

    /// A NACK's reads have answered ([`Self::on_nack`]); called each cycle
    /// after the unit's turn, it acts `L` cycles after the step. Nothing
    /// writes what the step read in between: the unit is busy, so no
    /// other step, decision, commit or reopen runs, and the output
    /// stage's failure waits for the answer as it waits for a walk.
    fn nack_tick(&mut self) {
        let Some(a) = self.nack_ans.as_mut() else { return };
        if a.wait > 0 {
            a.wait -= 1;
            return;
        }
        let a = self.nack_ans.take().expect("checked");
        let act = self.nack_act(&a);
        if let Some(t) = self.taps.nack.as_mut() {
            t.ans = Some(act);
        }
    }

    /// The SACK handler's reads, before its step ([`SackRec`]), with the
    /// event and retransmit queues' lengths.
    fn tap_sack_begin(&self, h: &SackIn, ts: u32) -> (SackRec, usize, usize) {
        let c = h.conn;
        let k = &self.conns[c as usize];
        let path = h.path_id % self.p.paths;
        let m = self.paths[self.pidx(c, path)];
        let live = k.open && k.failed.is_none() && h.path_id < k.npaths;
        let ok = live && sack_window(m.next_psn, m.cum_acked, h.cum_psn, h.bitmap).is_some();
        let span = if ok { seq_diff(m.next_psn, m.cum_acked) } else { 0 };
        let slots = (0..span).map(|d| self.ring[self.ridx(c, path, (m.cum_acked + d) & SEQ_MASK)]).collect();
        let rec = SackRec {
            sack: *h,
            ts,
            open: k.open,
            failed: k.failed.is_some(),
            npaths: k.npaths,
            rack_sent: k.rack_sent,
            rack_rtt: k.rack_rtt,
            cc: k.cc,
            last_progress: (0..self.p.paths).map(|q| self.paths[self.pidx(c, q)].last_progress).collect(),
            mirror: SackMirror::of(&m),
            marks: self.planes.iter().map(Option::is_some).collect(),
            slots,
            ..SackRec::default()
        };
        (rec, self.pend_evt.len(), k.retx.len())
    }

    /// What the SACK handler wrote ([`Self::tap_sack_begin`]).
    fn tap_sack_end(&mut self, (mut r, evts, retx): (SackRec, usize, usize)) {
        let c = r.sack.conn;
        let path = r.sack.path_id % self.p.paths;
        let k = &self.conns[c as usize];
        let m = self.paths[self.pidx(c, path)];
        r.busy = self.ack_busy;
        r.hold = self.sack_hold.map(|(_, n)| n);
        r.stale = self.sack_stale_in.is_some();
        r.rack_sent_after = k.rack_sent;
        r.rack_rtt_after = k.rack_rtt;
        r.cc_after = k.cc;
        r.last_progress_after = (0..self.p.paths).map(|q| self.paths[self.pidx(c, q)].last_progress).collect();
        r.mirror_after = SackMirror::of(&m);
        r.marks_after = self.planes.iter().map(Option::is_some).collect();
        let base = r.mirror.cum_acked;
        r.slots_after =
            (0..r.slots.len() as u32).map(|d| self.ring[self.ridx(c, path, (base + d) & SEQ_MASK)]).collect();
        r.events = self.pend_evt.iter().skip(evts).copied().collect();
        r.retx = k
            .retx
            .iter()
            .skip(retx)
            .map(|&(p, psn)| {
                debug_assert_eq!(p, path, "the handler queues its own path's packets");
                psn
            })
            .collect();
        r.cont = self.sack_cont.as_ref().map(|k| (k.wait, k.touched.clone(), k.stream_id, k.completed_msn));
        if let Some(t) = self.taps.sack.as_mut() {
            r.progress = t.progress;
            t.step = Some(r);
        }
    }

    /// What a SACK stage reads, before its step ([`StageRec`]), with the
    /// event, retransmit and PROBE queues' lengths.
    fn tap_stage_begin(&self, k: &SackCont, ts: u32) -> (StageRec, usize, usize, usize) {
        let c = k.conn;
        let kc = &self.conns[c as usize];
        let mirrors: Vec<StageMirror> = (0..self.p.paths)
            .map(|q| {
                let m = self.paths[self.pidx(c, q)];
                StageMirror {
                    next_psn: m.next_psn,
                    cum_acked: m.cum_acked,
                    srtt: m.srtt,
                    rttvar: m.rttvar,
                    probe_pending: m.probe_pending,
                }
            })
            .collect();
        let rec = StageRec {
            ts,
            conn: c,
            stage: k.stage,
            tail: k.tail,
            touched: k.touched.clone(),
            stream_id: k.stream_id,
            completed_msn: k.completed_msn,
            dead: kc.failed.is_some(),
            npaths: kc.npaths,
            rack_sent: kc.rack_sent,
            rack_rtt: kc.rack_rtt,
            pend_streams: kc.pend_streams,
            probe_q: kc.probe_q,
            last_progress: (0..self.p.paths).map(|q| self.paths[self.pidx(c, q)].last_progress).collect(),
            remote_completed: if k.stream_id < self.p.streams {
                self.streams[self.sidx(c, k.stream_id)].remote_completed
            } else {
                0
            },
            slots: self.stage_slots(c, &mirrors),
            mirrors,
            ..StageRec::default()
        };
        (rec, self.pend_evt.len(), kc.retx.len(), kc.probes.len())
    }

    /// Per path, the slots from `cum_acked` to `next_psn` of `mirrors`.
    fn stage_slots(&self, c: u32, mirrors: &[StageMirror]) -> Vec<Vec<Option<Slot>>> {
        (0..self.p.paths)
            .map(|q| {
                let m = mirrors[q as usize];
                (0..seq_diff(m.next_psn, m.cum_acked))
                    .map(|d| self.ring[self.ridx(c, q, (m.cum_acked + d) & SEQ_MASK)])
                    .collect()
            })
            .collect()
    }

    /// What a SACK stage wrote ([`Self::tap_stage_begin`]).
    fn tap_stage_end(
        &mut self,
        (mut r, evts, retx, probes): (StageRec, usize, usize, usize),
        walk: Vec<StageWalk>,
        cycles: u32,
        tail: Option<Option<u32>>,
    ) {
        let c = r.conn;
        let k = &self.conns[c as usize];
        r.walk = walk;
        r.cycles = cycles;
        r.slots_after = self.stage_slots(c, &r.mirrors);
        r.events = self.pend_evt.iter().skip(evts).copied().collect();
        r.retx = k.retx.iter().skip(retx).copied().collect();
        r.probes = k.probes.iter().skip(probes).copied().collect();
        r.tail_at = tail;
        r.remote_completed_after =
            if r.stream_id < self.p.streams { self.streams[self.sidx(c, r.stream_id)].remote_completed } else { 0 };
        r.wprobe_cleared = r.remote_completed_after != r.remote_completed;
        r.walk_started = r.stage == SackStage::Finish && !r.dead && r.touched.iter().any(|&t| t);
        r.cont = self.sack_cont.as_ref().map(|k| (k.stage, k.wait));
        if let Some(t) = self.taps.stage.as_mut() {
            t.step = Some(r);
        }
    }

    /// A live SACK's reads have answered ([`Self::on_sack`]); called each
    /// cycle after the unit's turn, it raises the busy count to the two
    /// passes' `2 + 2 x span` `L` cycles after the step (a hold after the
    /// turn, `tx_ack`'s `s_hold_sack`; item 13).
    fn sack_tick(&mut self) {
        // Counted in the clock before the answer's cycle: the count shows
        // on `stat_sack_stale` then, with the RTL's answer.
        match self.sack_stale_in {
            Some(0) => {
                self.stats.sack_stale = true;
                self.sack_stale_in = None;
            }
            Some(n) => self.sack_stale_in = Some(n - 1),
            None => {}
        }
        let Some((wait, count)) = self.sack_hold.as_mut() else { return };
        if *wait > 0 {
            *wait -= 1;
            return;
        }
        let count = *count;
        self.sack_hold = None;
        self.ack_busy = self.ack_busy.max(count);
        if let Some(t) = self.taps.ack.as_mut() {
            t.hold_sack = Some(count);
        }
    }

    /// The NACK's actions on its reads ([`NackAct`]).
    fn nack_act(&mut self, a: &NackAns) -> NackAct {
        let (h, ts, r) = (a.nack, a.ts, a.read);
        let c = h.conn;
        let mut act = NackAct { nack: h, ts, read: r, ..NackAct::default() };
        if !r.open || r.failed {
            return act;
        }
        if h.path_id >= r.npaths {
            self.stats.nack_stale = true;
            act.stale = true;
            return act;
        }
        if h.code == mrnic_proto::NackCode::NoConn as u8 {
            act.fail = Some((None, status::REMOTE_INVALID_REQUEST));
            self.fail(c, None, status::REMOTE_INVALID_REQUEST);
            return act;
        }
        let path = h.path_id;
        let ri = self.ridx(c, path, h.psn);
        let slot = match r.slot {
            Some(s) if seq_diff(h.psn, r.cum_acked) < seq_diff(r.next_psn, r.cum_acked) => s,
            _ => {
                self.stats.nack_stale = true;
                act.stale = true;
                return act;
            }
        };
        // An RNR that starts a back-off takes the packet out of the path's
        // inflight (path_telemetry RNR); one for a packet already out is
        // a plain NACK.
        // With the RNR FIFO full no back-off starts: the packet stays
        // outstanding and in the path's inflight, as if the NACK were a
        // plain one, and RACK or the path's timeout resends it (a NACK the
        // fabric lost ends the same way). The RNR count stays, so the
        // refusal does not bring the retry limit closer.
        act.rnr_full = self.rnr.len() >= self.p.rnr_depth as usize;
        let backs_off = h.code == mrnic_proto::NackCode::Rnr as u8
            && !slot.rnr_resend
            && slot.rnr_count < RNR_RETRY
            && !act.rnr_full;
        let kind = if backs_off { tel::kind::RNR } else { tel::kind::NACK };
        self.pend_evt.push_back(tel::Event { kind, conn: c, path, now: ts, ..Default::default() });
        act.evt = Some(kind);
        // The path delivers: its timeout run ends (path_telemetry clears
        // retries of a GOOD or SKIP path).
        let pi = self.pidx(c, path);
        self.paths[pi].timed_out = false;
        let wr = Some((slot.stream, slot.wq));
        match h.code {
            c_ if c_ == mrnic_proto::NackCode::Rnr as u8 => {
                if slot.rnr_wait {
                    return act;
                }
                if slot.rnr_count >= RNR_RETRY {
                    act.fail = Some((wr, status::RNR_RETRY_EXCEEDED));
                    self.fail(c, wr, status::RNR_RETRY_EXCEEDED);
                    return act;
                }
                if act.rnr_full {
                    self.stats.rnr_full = true;
                    act.rnr_refused = true;
                    return act;
                }
                let until = ts.wrapping_add(self.k.rto_min);
                let mut s = slot;
                s.rnr_count += 1;
                s.rnr_wait = true;
                s.rnr_resend = true;
                s.queued = false;
                s.rnr_tag = self.rnr_next_tag;
                self.ring[ri] = Some(s);
                act.slot = Some(s);
                act.rnr = Some((until, self.rnr_next_tag));
                self.rnr.push_back((c, path, h.psn, until, self.rnr_next_tag));
                if let Some(t) = self.taps.ack.as_mut() {
                    t.rnr_push = Some((c, path, h.psn, until, self.rnr_next_tag));
                }
                if let Some(t) = self.taps.timer.as_mut() {
                    t.rnr_push = Some((c, path, h.psn, until, self.rnr_next_tag));
                }
                // Wraps at rnr_tag_bits, as the RTL's counter does.
                self.rnr_next_tag = ((u64::from(self.rnr_next_tag) + 1) & ((1u64 << self.p.rnr_tag_bits) - 1)) as u32;
            }
            c_ if c_ == mrnic_proto::NackCode::Access as u8 => {
                act.fail = Some((wr, status::REMOTE_ACCESS));
                self.fail(c, wr, status::REMOTE_ACCESS);
            }
            c_ if c_ == mrnic_proto::NackCode::BadHdr as u8 => {
                if !slot.queued {
                    // It arrived damaged: a loss of this packet, charged.
                    let mut s = slot;
                    s.queued = true;
                    s.charge = true;
                    self.ring[ri] = Some(s);
                    act.slot = Some(s);
                    act.retx = true;
                    self.queue_retx(c, path, h.psn);
                }
            }
            _ => {
                self.stats.nack_stale = true;
                act.stale = true;
            }
        }
        act
    }

    /// Completions in msn order per stream, each once: the walk of the
    /// streams a SACK acknowledged packets of (only there can a head have
    /// become done).
    fn complete(&mut self, c: u32, touched: Vec<bool>) {
        if let Some(first) = touched.iter().position(|&t| t) {
            self.walk = Some(Walk::Done { conn: c, touched, stream: first as u32 });
            if let Some(t) = self.taps.walk.as_mut() {
                t.start = Some(WalkStart { walk: self.walk.clone().expect("just set"), read_failed: false });
            }
            // The first head's entry is read now.
            self.walk_wait = self.p.read_latency;
        }
    }

    /// One step of the completion walk (the completion FIFO has room and
    /// the entry read for it has answered). Every step issues the read of
    /// the entry the next step needs, known by now: the same stream's next
    /// slot, the next stream's head, or the next stream at all.
    fn walk_step(&mut self) {
        let Some(walk) = self.walk.take() else { return };
        self.walk_wait = self.p.read_latency;
        let c = walk.conn();
        let (s, slot) = walk.at(|s| self.streams[self.sidx(c, s)].head);
        let (si, wi) = (self.sidx(c, s), self.widx(c, s, slot));
        let q = &self.streams[si];
        let r =
            WalkRead { head: q.head, pend: q.pend, tail: q.tail, issued: self.wq_issued[wi], acked: self.wq_acked[wi] };
        let (next, act) = walk_next(&walk, &r, self.p.streams);
        if self.taps.walk.is_some() {
            let (words, req) = (self.walk_words(c), self.wq[wi].req);
            if let Some(t) = self.taps.walk.as_mut() {
                t.words = Some((c, words));
                t.step = Some(WalkStepTap { walk: walk.clone(), stream: s, slot, read: r, req });
            }
        }
        if let Some(st) = act.cqe {
            self.cqe_fifo.push_back(cqe(c, s, &self.wq[wi].req, st));
        }
        let q = &mut self.streams[si];
        if act.advance {
            q.head = q.head.wrapping_add(1);
        }
        if act.drain {
            q.pend = q.tail;
            q.pend_sent = 0;
        }
        if let Some(t) = self.taps.post.as_mut() {
            let q = &self.streams[si];
            t.sw_head = act.advance.then_some((c, s, q.head));
            t.sw_drain = act.drain.then_some((c, s, q.pend));
        }
        if act.equalize {
            self.wq_acked[wi] = self.wq_issued[wi];
        }
        self.walk = next;
    }

    /// The connection fails: `culprit` completes with `status`, every other
    /// incomplete request with WR_FLUSH (or `status` without a culprit), in
    /// msn order per stream; rings and queues are emptied.
    fn fail(&mut self, c: u32, culprit: Option<(u32, u32)>, st: u8) {
        if self.conns[c as usize].failed.is_some() {
            return;
        }
        self.conns[c as usize].failed = Some(st);
        if let Some(t) = self.taps.stage.as_mut() {
            t.fails.push(c);
        }
        if let Some(t) = self.taps.post.as_mut() {
            debug_assert!(t.fail.is_none(), "one failure a cycle");
            t.fail = Some(c);
        }
        // The failed flag stops the scheduler; the walk empties the work
        // queues a request per cycle.
        debug_assert!(self.walk.is_none(), "a failure starts only with the walk idle");
        self.walk = Some(Walk::Fail { conn: c, culprit, culprit_pending: culprit.is_some(), st, stream: 0 });
        if let Some(t) = self.taps.walk.as_mut() {
            t.start = Some(WalkStart { walk: self.walk.clone().expect("just set"), read_failed: false });
        }
        // The culprit's entry (or the first stream's head) is read now.
        self.walk_wait = self.p.read_latency;
        let r = self.p.ring_depth as usize;
        for p in 0..self.p.paths {
            let base = self.pidx(c, p) * r;
            self.ring[base..base + r].fill(None);
        }
        let k = &mut self.conns[c as usize];
        k.retx.clear();
        k.probes.clear();
        k.probe_q = 0;
        k.pend_streams = 0;
        k.cc.inflight_bytes = 0;
        // The connection's RNR entries find their slots empty at the head.
        self.ack_busy = self.ack_busy.max(self.p.paths * self.p.ring_depth);
        if let Some(t) = self.taps.ack.as_mut() {
            // Before the turn the commit's; after it the output stage's, a
            // reopen's or a NACK's at its reads' answer (item 11).
            t.hold_pre |= t.phase == 0;
            t.hold_fail |= t.phase == 2;
        }
    }
}

fn cqe(conn: u32, stream: u32, r: &WorkReq, st: u8) -> Cqe {
    Cqe {
        conn,
        stream,
        wr_id: r.wr_id,
        status: st,
        opcode: r.is_send() as u8,
        byte_len: r.len,
        imm: r.has_imm().then_some(r.imm),
    }
}

// ------------------------------------------------------------------ setup, posting, output

impl TxEngine {
    /// A setup record waiting or running (taken, not yet finished):
    /// drivers and test rigs wait for this to end before they take a
    /// connection as open.
    pub fn opening(&self) -> bool {
        self.open_reg.is_some() || self.open_held()
    }

    /// A setup in flight: taken and not finished (`tx_open`'s `m_busy`
    /// past the take's cycle, which includes it).
    fn open_held(&self) -> bool {
        self.open_send.is_some() || self.open_clear.is_some()
    }

    /// A setup record held, or taken and not yet acted: no work request is
    /// taken (`tx_open`'s `m_wr_hold`, `tx_post`'s `s_open_busy`).
    fn open_wr_hold(&self) -> bool {
        self.open_reg.is_some() || self.open_send.is_some()
    }

    /// The setup record waiting is taken, its reads issued (the stream
    /// words' tails and the context's DEAD bits, answered `L` cycles
    /// later); or, for path 0 of a live connection, the connection is
    /// flushed first (WR_FLUSH) and the record waits for the walk. Whether
    /// it is live is the ready set's `open` and `failed` registers, read
    /// in this cycle.
    fn open_take(&mut self, o: Open) {
        let c = o.conn;
        let k = &self.conns[c as usize];
        if o.path == 0 && k.open && k.failed.is_none() {
            if let Some(t) = self.taps.open.as_mut() {
                t.flush = Some(c);
            }
            self.fail(c, None, status::WR_FLUSH);
            return;
        }
        let tails = (0..self.p.streams).map(|s| self.streams[self.sidx(c, s)].tail).collect();
        let read = OpenAct { rec: o, tails, dead: k.dead };
        if let Some(t) = self.taps.open.as_mut() {
            t.take = Some(o);
        }
        self.open_reg = None;
        self.open_send = Some((read, self.p.read_latency));
    }

    /// One path of a connection is set up, `L` cycles after its take, on
    /// what the take read; path 0 (re)starts the connection, its streams
    /// at their tails (the slot counters keep running, so that no stale
    /// slot aliases).
    fn open(&mut self, read: OpenAct) {
        let o = read.rec;
        let c = o.conn;
        debug_assert_eq!(read.dead, self.conns[c as usize].dead, "nothing writes the context while a setup runs");
        if o.path == 0 {
            let cc = open_cc(&self.p, &self.k);
            self.conns[c as usize] = Conn {
                open: true,
                remote_id: o.remote_id,
                dst_mac: o.dst_mac,
                dst_ip: o.dst_ip,
                npaths: o.npaths.clamp(1, self.p.paths),
                cc,
                ..Default::default()
            };
            if let Some(t) = self.taps.post.as_mut() {
                t.open = Some(c);
            }
            for (s, &t) in read.tails.iter().enumerate() {
                let si = self.sidx(c, s as u32);
                debug_assert_eq!(t, self.streams[si].tail, "nothing posts to a connection being set up afresh");
                self.streams[si] = StreamQ { head: t, pend: t, tail: t, ..Default::default() };
            }
        }
        // The path starts GOOD (its context bit with the rest of the record).
        self.conns[c as usize].dead &= !(1 << o.path);
        let pi = self.pidx(c, o.path);
        let (srtt, rttvar, min_rtt) = open_rtt(&self.k);
        self.paths[pi] = PathM {
            sport: o.sport,
            plane: o.plane,
            next_psn: o.psn,
            cum_acked: o.psn,
            srtt,
            rttvar,
            min_rtt,
            ..Default::default()
        };
        // Cleared here at once: nothing reads the ring before the last of
        // the hardware's slot-a-cycle writes (`open_clear`).
        let r = self.p.ring_depth as usize;
        self.ring[pi * r..(pi + 1) * r].fill(None);
        if let Some(t) = self.taps.open.as_mut() {
            t.act = Some(read);
            t.clear = Some((c, o.path, 0));
        }
        self.open_clear = (self.p.ring_depth > 1).then_some((c, o.path, 1));
        self.evt_fifo.push_back(tel::Event {
            kind: tel::kind::OPEN,
            conn: c,
            path: o.path,
            cum_acked: o.psn,
            sport: o.sport,
            plane: o.plane,
            ..Default::default()
        });
        self.ack_busy = self.ack_busy.max(self.p.ring_depth);
        if let Some(t) = self.taps.ack.as_mut() {
            t.hold_open = true;
        }
    }

    /// Posts the head work request into its stream's queue; false when it
    /// must wait (queue full, or the completion FIFO full for a request
    /// flushed at once because its connection is closed or failed).
    fn post(&mut self, w: &WorkReq) -> bool {
        let k = &self.conns[w.conn as usize];
        let si = self.sidx(w.conn, w.stream);
        let q = &self.streams[si];
        let a = PostIn {
            consumes: w.is_send() || w.has_imm(),
            live: k.open && k.failed.is_none(),
            flush_room: self.cqe_fifo.len() < CQE_FIFO && self.ack_idle(),
            head: q.head,
            pend: q.pend,
            tail: q.tail,
            next_msn: q.next_msn,
            next_rq_seq: q.next_rq_seq,
            pend_streams: k.pend_streams,
        };
        let o = post_rule(self.p.wq_depth, &a);
        if let Some(t) = self.taps.post.as_mut() {
            t.post = Some(PostAct { req: *w, read: a, out: o });
        }
        if o.flush {
            self.cqe_fifo.push_back(cqe(w.conn, w.stream, w, status::WR_FLUSH));
            if let Some(t) = self.taps.walk.as_mut() {
                t.flush = self.cqe_fifo.back().copied();
            }
        }
        if o.write {
            let wi = self.widx(w.conn, w.stream, q.tail);
            self.wq[wi] = Wr { req: *w, msn: o.msn, rq_seq: o.rq_seq };
            let q = &mut self.streams[si];
            (q.tail, q.next_msn, q.next_rq_seq) = (o.tail, o.next_msn, o.next_rq_seq);
            let k = &mut self.conns[w.conn as usize];
            k.pend_streams = o.pend_streams;
            k.stalled = false;
        }
        o.take
    }

    fn sack_answer(&self, s: &SackOut) -> Answer {
        Answer {
            hdr: sack_header(s),
            sport: s.sport,
            plane: s.plane,
            to: self.addresses(s.conn),
            wait: self.p.read_latency,
        }
    }

    fn nack_answer(&self, n: &NackOut) -> Answer {
        let (to, wait) =
            if n.direct { ((n.dst_mac, n.dst_ip), 0) } else { (self.addresses(n.conn), self.p.read_latency) };
        Answer { hdr: nack_header(n), sport: n.sport, plane: n.plane, to, wait }
    }

    /// A connection's (MAC, IPv4): in hardware a table of its own (80 bits
    /// per connection, written at `s_open`), whose one read port serves
    /// the answer queue's write.
    fn addresses(&self, c: u32) -> (u64, u32) {
        let k = &self.conns[c as usize];
        (k.dst_mac, k.dst_ip)
    }

    /// A read beat lands in the oldest frame still waiting for payload.
    fn take_beat(&mut self, r: &RBeat) {
        let Some(f) = self.frames.iter_mut().find(|f| f.r_left > 0) else { return };
        let skip = if f.r_got == 0 { f.skip as usize } else { 0 };
        f.r_got += 1;
        let want = f.len as usize - f.payload.len();
        let take = (r.data.len() - skip).min(want);
        f.payload.extend_from_slice(&r.data[skip..skip + take]);
        f.err |= r.resp != 0;
        f.r_left -= 1;
    }

    /// Starts the next frame on `m_axis`: an answer with its addresses in
    /// hand first, then the oldest data or PROBE frame once its payload is
    /// in. Nothing here reads a table: every frame carries its addresses.
    fn next_frame(&mut self, inp: &Inputs, hold: bool) {
        if self.answers.front().is_some_and(|a| a.wait == 0) {
            let a = self.answers.pop_front().expect("checked");
            let (dst_mac, dst_ip) = a.to;
            let net =
                Net { src_mac: inp.src_mac, dst_mac, src_ip: inp.src_ip, dst_ip, sport: inp.udp_port, dport: a.sport };
            self.cur = Some((build_frame(&net, &a.hdr, &[]), 0, a.plane));
            self.stats.tx_answer = true;
            if let Some(t) = self.taps.output.as_mut() {
                t.answer_started = true;
            }
            return;
        }
        if !self.frames.front().is_some_and(|f| f.ready()) {
            return;
        }
        if self.frames.front().is_some_and(|f| f.err && self.conns[f.conn as usize].failed.is_none())
            && (self.walk.is_some() || self.nack_ans.is_some() || self.timer_ans.is_some() || hold)
        {
            // Its failure needs the completion walk, busy: the output waits.
            return;
        }
        let f = self.frames.pop_front().expect("checked");
        if f.err {
            // The host refused the read: the request fails, nothing leaves.
            if self.conns[f.conn as usize].failed.is_none() {
                if let Some(t) = self.taps.output.as_mut() {
                    t.fail = Some((f.conn, f.wr));
                }
                self.fail(f.conn, f.wr, status::LOCAL_PROTECTION);
                if let Some(t) = self.taps.post.as_mut() {
                    t.rdfail = t.fail.take();
                }
                if let Some(s) = self.taps.walk.as_mut().and_then(|t| t.start.as_mut()) {
                    s.read_failed = true;
                }
            }
            return;
        }
        let net = Net {
            src_mac: inp.src_mac,
            dst_mac: f.to.0,
            src_ip: inp.src_ip,
            dst_ip: f.to.1,
            sport: f.sport,
            dport: inp.udp_port,
        };
        self.cur = Some((build_frame(&net, &f.head, &f.payload), 0, f.plane));
    }
}

// ------------------------------------------------------------------ port interface

fn bytes_to_bits(width: u32, bytes: &[u8]) -> Bits {
    let mut b = Bits::zero(width);
    for (i, &x) in bytes.iter().enumerate() {
        b.0[i / 8] |= (x as u64) << (8 * (i % 8));
    }
    b.truncate(width);
    b
}

fn bits_to_bytes(b: &Bits, n: usize) -> Vec<u8> {
    (0..n).map(|i| (b.0.get(i / 8).copied().unwrap_or(0) >> (8 * (i % 8))) as u8).collect()
}

/// Field `i` of a bus of equal `w`-bit fields.
fn lane(b: &Bits, i: u32, w: u32) -> u64 {
    let bit = i * w;
    let lo = b.0.get((bit / 64) as usize).copied().unwrap_or(0) >> (bit % 64);
    let hi =
        if bit % 64 + w > 64 { b.0.get((bit / 64 + 1) as usize).copied().unwrap_or(0) << (64 - bit % 64) } else { 0 };
    (lo | hi) & if w >= 64 { u64::MAX } else { (1 << w) - 1 }
}

fn words4(b: &Bits) -> [u64; 4] {
    [0, 1, 2, 3].map(|i| b.0.get(i).copied().unwrap_or(0))
}

/// A multiply-rotate hash over a port name, eight bytes at a time: the
/// names are short and our own, so SipHash's defence against chosen keys
/// buys nothing, and it cost a tenth of a top-level run.
#[derive(Default)]
struct NameHash(u64);

impl std::hash::Hasher for NameHash {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for c in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            self.0 = (self.0 ^ u64::from_le_bytes(w)).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29);
        }
    }
}

type PortIndex = HashMap<String, usize, std::hash::BuildHasherDefault<NameHash>>;

fn index_of(index: &PortIndex, name: &str) -> usize {
    *index.get(name).unwrap_or_else(|| panic!("tx_engine has no port {name}"))
}

/// The index of port `name` asked for at position `at` of a sequence
/// recorded as `seq`.
fn seq_index(defs: &[PortDef], index: &PortIndex, seq: &[usize], at: usize, name: &str) -> usize {
    match seq.get(at) {
        Some(&i) if defs[i].name == name => i,
        _ => index_of(index, name),
    }
}

struct Ports<'a> {
    defs: &'a [PortDef],
    index: &'a PortIndex,
    v: &'a [Bits],
    seq: &'a [usize],
    at: Cell<usize>,
    rec: Option<&'a RefCell<Vec<usize>>>,
}

impl Ports<'_> {
    fn get(&self, name: &str) -> &Bits {
        let at = self.at.get();
        self.at.set(at + 1);
        let i = seq_index(self.defs, self.index, self.seq, at, name);
        if let Some(r) = self.rec {
            r.borrow_mut().push(i);
        }
        &self.v[i]
    }
    fn u(&self, name: &str) -> u64 {
        self.get(name).as_u64()
    }
    fn b(&self, name: &str) -> bool {
        self.get(name).bit(0)
    }
}

/// Outputs by name, written in place: they keep their words from cycle
/// to cycle.
struct Out<'a> {
    defs: &'a [PortDef],
    index: &'a PortIndex,
    v: &'a mut [Bits],
    seq: &'a [usize],
    at: usize,
    rec: Option<&'a mut Vec<usize>>,
}

impl Out<'_> {
    fn slot(&mut self, name: &str) -> usize {
        let i = seq_index(self.defs, self.index, self.seq, self.at, name);
        self.at += 1;
        if let Some(r) = self.rec.as_mut() {
            r.push(i);
        }
        i
    }
    fn u(&mut self, name: &str, v: u64) {
        let i = self.slot(name);
        self.v[i].set_u64(self.defs[i].width, v);
    }
    fn words(&mut self, name: &str, words: &[u64]) {
        let i = self.slot(name);
        self.v[i].set_words(self.defs[i].width, words);
    }
}

impl TxEngine {
    /// Typed inputs from port values.
    pub fn decode(&self, inputs: &[Bits]) -> Inputs {
        self.decode_seq(inputs, None)
    }

    fn decode_seq(&self, inputs: &[Bits], rec: Option<&RefCell<Vec<usize>>>) -> Inputs {
        let g = Ports {
            defs: &self.ports,
            index: &self.index,
            v: inputs,
            seq: if rec.is_some() { &[] } else { &self.dec_seq },
            at: Cell::new(0),
            rec,
        };
        let n = self.p.paths;
        Inputs {
            rst: g.b("rst"),
            ts_now: g.u("ts_now") as u32,
            src_mac: g.u("cfg_src_mac"),
            src_ip: g.u("cfg_src_ip") as u32,
            udp_port: g.u("cfg_udp_port") as u16,
            open: g.b("s_open_valid").then(|| Open {
                conn: g.u("s_open_conn") as u32,
                path: g.u("s_open_path") as u32,
                npaths: g.u("s_open_npaths") as u32,
                remote_id: g.u("s_open_remote_id") as u32,
                dst_mac: g.u("s_open_dst_mac"),
                dst_ip: g.u("s_open_dst_ip") as u32,
                sport: g.u("s_open_sport") as u16,
                plane: g.u("s_open_plane") as u8,
                psn: g.u("s_open_psn") as u32,
            }),
            wr: g.b("s_wr_valid").then(|| WorkReq {
                conn: g.u("s_wr_conn") as u32,
                stream: g.u("s_wr_stream") as u32,
                op: g.u("s_wr_op") as u8,
                wr_id: g.u("s_wr_wr_id"),
                laddr: g.u("s_wr_laddr"),
                len: g.u("s_wr_len") as u32,
                raddr: g.u("s_wr_raddr"),
                rkey: g.u("s_wr_rkey") as u32,
                imm: g.u("s_wr_imm") as u32,
            }),
            ar_ready: g.b("m_axi_arready"),
            r: g.b("m_axi_rvalid").then(|| RBeat {
                data: bits_to_bytes(g.get("m_axi_rdata"), self.p.beat_bytes() as usize),
                resp: g.u("m_axi_rresp") as u8,
                last: g.b("m_axi_rlast"),
            }),
            trd_ready: g.b("m_trd_ready"),
            trd: g.b("s_trd_valid").then(|| TelView {
                conn: g.u("s_trd_conn") as u32,
                paths: (0..n)
                    .map(|i| tel::View {
                        state: lane(g.get("s_trd_state"), i, pt::STATE.width) as u8,
                        inflight: lane(g.get("s_trd_inflight"), i, pt::INFLIGHT.width) as u32,
                        cwnd: lane(g.get("s_trd_cwnd"), i, pt::CWND.width) as u32,
                        weight: lane(g.get("s_trd_weight"), i, pt::WEIGHT.width) as u8,
                    })
                    .collect(),
            }),
            evt_ready: g.b("m_evt_ready"),
            upd: g.b("s_upd_valid").then(|| tel::Upd {
                conn: g.u("s_upd_conn") as u32,
                path: g.u("s_upd_path") as u32,
                state: g.u("s_upd_state") as u8,
                weight: g.u("s_upd_weight") as u8,
                clr: g.b("s_upd_clr"),
                act: g.u("s_upd_act") as u8,
            }),
            rto: g.b("s_rto_valid").then(|| tel::Rto {
                conn: g.u("s_rto_conn") as u32,
                path: g.u("s_rto_path") as u32,
                state: g.u("s_rto_state") as u8,
                sport: g.u("s_rto_sport") as u16,
                gen: g.u("s_rto_gen") as u8,
                act: g.u("s_rto_act") as u8,
            }),
            psel_ready: g.b("m_psel_ready"),
            psel: g
                .b("s_psel_valid")
                .then(|| (g.u("s_psel_conn") as u32, (!g.b("s_psel_none")).then(|| g.u("s_psel_path") as u32))),
            sack: g.b("s_sack_valid").then(|| SackIn {
                conn: g.u("s_sack_conn") as u32,
                path_id: g.u("s_sack_path_id") as u32,
                cum_psn: g.u("s_sack_cum_psn") as u32,
                bitmap: words4(g.get("s_sack_bitmap")),
                ecn_cnt: g.u("s_sack_ecn_cnt") as u32,
                echo_ts: g.u("s_sack_echo_ts") as u16,
                rate_hint: g.u("s_sack_rate_hint") as u16,
                stream_id: g.u("s_sack_stream_id") as u32,
                completed_msn: g.u("s_sack_completed_msn") as u32,
                dport: g.u("s_sack_dport") as u16,
            }),
            nack: g.b("s_nack_valid").then(|| NackIn {
                conn: g.u("s_nack_conn") as u32,
                path_id: g.u("s_nack_path_id") as u32,
                code: g.u("s_nack_code") as u8,
                psn: g.u("s_nack_psn") as u32,
            }),
            csack: g.b("s_csack_valid").then(|| SackOut {
                conn: g.u("s_csack_conn") as u32,
                path_id: g.u("s_csack_path_id") as u32,
                dst_conn: g.u("s_csack_dst_conn") as u32,
                path_gen: g.u("s_csack_path_gen") as u8,
                cum_psn: g.u("s_csack_cum_psn") as u32,
                stream_id: g.u("s_csack_stream_id") as u32,
                completed_msn: g.u("s_csack_completed_msn") as u32,
                echo_ts: g.u("s_csack_echo_ts") as u16,
                ecn_cnt: g.u("s_csack_ecn_cnt") as u8,
                rate_hint: g.u("s_csack_rate_hint") as u16,
                bitmap: words4(g.get("s_csack_bitmap")),
                sport: g.u("s_csack_sport") as u16,
                plane: g.u("s_csack_plane") as u8,
            }),
            cnack: g.b("s_cnack_valid").then(|| NackOut {
                conn: g.u("s_cnack_conn") as u32,
                path_id: g.u("s_cnack_path_id") as u32,
                dst_conn: g.u("s_cnack_dst_conn") as u32,
                path_gen: g.u("s_cnack_path_gen") as u8,
                code: g.u("s_cnack_code") as u8,
                psn: g.u("s_cnack_psn") as u32,
                stream_id: g.u("s_cnack_stream_id") as u32,
                msn: g.u("s_cnack_msn") as u32,
                echo_ts: g.u("s_cnack_echo_ts") as u16,
                sport: g.u("s_cnack_sport") as u16,
                plane: g.u("s_cnack_plane") as u8,
                direct: g.b("s_cnack_direct"),
                dst_ip: g.u("s_cnack_dst_ip") as u32,
                dst_mac: g.u("s_cnack_dst_mac"),
            }),
            axis_ready: g.b("m_axis_tready"),
            port_ready: g.u("port_ready") as u32,
            cqe_ready: g.b("m_cqe_ready"),
        }
    }

    /// Port values from typed outputs (outputs zeroed while not valid).
    pub fn encode(&self, o: &Outputs, outputs: &mut [Bits]) {
        self.encode_seq(o, outputs, None)
    }

    fn encode_seq(&self, o: &Outputs, outputs: &mut [Bits], rec: Option<&mut Vec<usize>>) {
        let seq: &[usize] = if rec.is_some() { &[] } else { &self.enc_seq };
        let mut out = Out { defs: &self.ports, index: &self.index, v: outputs, seq, at: 0, rec };
        out.u("s_open_ready", o.open_ready as u64);
        out.u("s_wr_ready", o.wr_ready as u64);
        let ar = o.ar.unwrap_or_default();
        out.u("m_axi_arid", 0);
        out.u("m_axi_araddr", ar.addr);
        out.u("m_axi_arlen", ar.len as u64);
        out.u("m_axi_arsize", ar.size as u64);
        out.u("m_axi_arburst", o.ar.is_some() as u64);
        out.u("m_axi_arvalid", o.ar.is_some() as u64);
        out.u("m_axi_rready", o.r_ready as u64);
        out.u("m_trd_valid", o.trd.is_some() as u64);
        out.u("m_trd_conn", o.trd.unwrap_or(0) as u64);
        out.u("s_trd_ready", o.trd_resp_ready as u64);
        let e = o.evt.unwrap_or_default();
        out.u("m_evt_valid", o.evt.is_some() as u64);
        out.u("m_evt_kind", e.kind as u64);
        out.u("m_evt_conn", e.conn as u64);
        out.u("m_evt_path", e.path as u64);
        out.u("m_evt_now", e.now as u64);
        out.u("m_evt_cum_acked", e.cum_acked as u64);
        out.u("m_evt_acked_pkts", e.acked_pkts as u64);
        out.u("m_evt_acked_bytes", e.acked_bytes as u64);
        out.u("m_evt_ecn_cnt", e.ecn_cnt as u64);
        out.u("m_evt_rtt_valid", e.rtt_valid as u64);
        out.u("m_evt_rtt", e.rtt as u64);
        out.u("m_evt_acked_seq", e.acked_seq as u64);
        out.u("m_evt_sport", e.sport as u64);
        out.u("m_evt_plane", e.plane as u64);
        out.u("s_upd_ready", o.upd_ready as u64);
        out.u("s_rto_ready", o.rto_ready as u64);
        let q = o.psel.clone().unwrap_or_default();
        let mut wbits = Bits::zero(self.p.paths * pt::WEIGHT.width);
        for (i, &w) in q.weight.iter().enumerate() {
            let bit = i * 8;
            wbits.0[bit / 64] |= (w as u64) << (bit % 64);
        }
        out.u("m_psel_valid", o.psel.is_some() as u64);
        out.u("m_psel_conn", q.conn as u64);
        out.u("m_psel_elig", q.elig as u64);
        out.words("m_psel_weight", &wbits.0);
        out.u("m_psel_clr", q.clr as u64);
        out.u("s_psel_ready", o.psel_resp_ready as u64);
        out.u("s_sack_ready", o.sack_ready as u64);
        out.u("s_nack_ready", o.nack_ready as u64);
        out.u("s_csack_ready", o.csack_ready as u64);
        out.u("s_cnack_ready", o.cnack_ready as u64);
        match &o.axis {
            Some(b) => {
                out.words("m_axis_tdata", &bytes_to_bits(self.p.data_bits, &b.data).0);
                let keep = if b.keep >= 64 { u64::MAX } else { (1u64 << b.keep) - 1 };
                out.words("m_axis_tkeep", &[keep]);
                out.u("m_axis_tvalid", 1);
                out.u("m_axis_tlast", b.last as u64);
                out.u("m_axis_tuser", b.plane as u64);
            }
            None => {
                out.words("m_axis_tdata", &[]);
                out.words("m_axis_tkeep", &[]);
                out.u("m_axis_tvalid", 0);
                out.u("m_axis_tlast", 0);
                out.u("m_axis_tuser", 0);
            }
        }
        let c = o.cqe.unwrap_or_default();
        out.u("m_cqe_valid", o.cqe.is_some() as u64);
        out.u("m_cqe_conn", c.conn as u64);
        out.u("m_cqe_stream", c.stream as u64);
        out.u("m_cqe_wr_id", c.wr_id);
        out.u("m_cqe_status", c.status as u64);
        out.u("m_cqe_opcode", c.opcode as u64);
        out.u("m_cqe_byte_len", c.byte_len as u64);
        out.u("m_cqe_imm_valid", c.imm.is_some() as u64);
        out.u("m_cqe_imm", c.imm.unwrap_or(0) as u64);
        let s = o.stats;
        out.u("stat_tx_data", s.tx_data as u64);
        out.u("stat_tx_retx", s.tx_retx as u64);
        out.u("stat_tx_probe", s.tx_probe as u64);
        out.u("stat_tx_answer", s.tx_answer as u64);
        out.u("stat_ring_full", s.ring_full as u64);
        out.u("stat_sack_stale", s.sack_stale as u64);
        out.u("stat_nack_stale", s.nack_stale as u64);
        out.u("stat_rnr_full", s.rnr_full as u64);
        out.u("stat_wprobe_full", s.wprobe_full as u64);
    }
}

impl Block for TxEngine {
    fn name(&self) -> &'static str {
        NAME
    }

    fn ports(&self) -> &[PortDef] {
        &self.ports
    }

    fn eval(&mut self, _inputs: &[Bits], outputs: &mut [Bits]) {
        let o = self.outputs();
        self.encode(&o, outputs);
    }

    fn tick(&mut self, inputs: &[Bits]) {
        let inp = self.decode(inputs);
        self.clock(&inp);
    }
}
