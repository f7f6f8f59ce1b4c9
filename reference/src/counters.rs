//! Named counters: every packet the NIC drops or refuses is counted under
//! the reason, and every NACK sent names one. Read with `Nic::counters()`.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Counters {
    // ---- receive side: data packets ----
    /// Datagrams accepted past decode.
    pub rx_packets: u64,
    /// Payload bytes written to memory.
    pub rx_placed_bytes: u64,
    /// ICRC mismatch (corruption on the wire): dropped silently.
    pub rx_bad_icrc: u64,
    /// Any other decode failure (truncated, reserved bits, unknown opcode):
    /// dropped silently.
    pub rx_decode_error: u64,
    /// Unknown dst_conn: NO_CONN NACK.
    pub rx_no_conn: u64,
    /// Data or PROBE for a connection from an IPv4 source that is not the
    /// connection's peer: dropped silently (no answer to a spoofed source).
    pub rx_bad_src: u64,
    /// path_id beyond the connection's paths: BAD_HDR NACK.
    pub rx_bad_path: u64,
    /// Generation older than the path's current one by more than one:
    /// BAD_HDR NACK.
    pub rx_stale_gen: u64,
    /// psn beyond the 256-packet window: BAD_HDR NACK.
    pub rx_psn_window: u64,
    /// psn already received (below cum_psn or bit set): SACKed, not placed.
    pub rx_duplicate: u64,
    /// payload_len over the MTU, stream_id beyond the streams, or payload past
    /// msg_len: BAD_HDR NACK.
    pub rx_bad_len: u64,
    /// msg_len, opcode or immediate differing between packets of one message:
    /// BAD_HDR NACK.
    pub rx_msg_mismatch: u64,
    /// msn outside the message table (more than msg_table_depth ahead of the
    /// oldest incomplete message, or a new packet of a completed one):
    /// BAD_HDR NACK.
    pub rx_msg_window: u64,
    /// WRITE with an unknown rkey: ACCESS NACK.
    pub rx_bad_rkey: u64,
    /// WRITE to a region without remote-write access: ACCESS NACK.
    pub rx_no_access: u64,
    /// WRITE range leaving its region or wrapping u64, or a SEND whose
    /// receive's region was deregistered since it was posted: ACCESS NACK.
    pub rx_out_of_bounds: u64,
    /// SEND with no receive posted at its rq_seq: RNR NACK.
    pub rx_rnr: u64,
    /// SEND longer than its posted receive: ACCESS NACK.
    pub rx_recv_too_short: u64,
    /// WRITE whose msg_len exceeds its region's length (the message could
    /// never complete and would hold its message-table slot): ACCESS NACK.
    pub rx_msg_too_long: u64,
    /// Received PROBEs.
    pub rx_probes: u64,
    /// PROBE whose path_psn lies outside [cum_psn, cum_psn + 256] (no sender
    /// of this connection can be there): dropped unanswered, its generation
    /// not adopted.
    pub rx_probe_psn: u64,
    /// PROBE past its path's answer budget
    /// (`receiver::PROBE_ANSWERS_PER_RTO_MIN` per `rto_min`): dropped
    /// unanswered.
    pub rx_probe_limited: u64,
    pub sacks_sent: u64,
    pub nacks_sent: u64,
    /// Receive completions raised.
    pub recv_completions: u64,

    // ---- transmit side ----
    /// Data packets sent, first transmissions.
    pub tx_packets: u64,
    pub tx_payload_bytes: u64,
    /// Data packets sent again (loss, timeout, RNR, BAD_HDR).
    pub tx_retransmits: u64,
    /// Retransmissions that left on another path than their own.
    pub tx_rerouted: u64,
    pub tx_probes: u64,
    pub sacks_received: u64,
    pub nacks_received: u64,
    /// SACK or NACK for an unknown connection: dropped.
    pub ack_no_conn: u64,
    /// SACK or NACK for a connection from an IPv4 source that is not its
    /// peer: dropped (a spoofed SACK would complete sends never delivered).
    pub ack_bad_src: u64,
    /// SACK or NACK naming a path the connection does not have: dropped.
    pub ack_bad_path: u64,
    /// SACK acknowledging psns never sent: dropped whole.
    pub sack_beyond_sent: u64,
    /// NACK naming a psn not outstanding (already acked, or never sent):
    /// dropped.
    pub nack_stale: u64,
    /// RTO expiries (all states).
    pub rto_fired: u64,
    /// Packets found lost by the SACK bitmap (a 0 below a 1).
    pub sack_losses: u64,
    /// Packets found lost by time across paths: overdue while a later one
    /// was acknowledged (see `TxConn::detect_overdue`).
    pub overdue_losses: u64,
    /// Timeouts taken early because a path lost packets and went silent
    /// while others delivered.
    pub silent_path_timeouts: u64,
    /// Re-entropy events (new source port, bumped generation).
    pub re_entropy: u64,
    pub path_suspect: u64,
    pub path_dead: u64,
    pub path_recovered: u64,
    /// RNR NACKs that led to a delayed retry.
    pub rnr_retries: u64,
    /// Completions with a status other than Success (both sides).
    pub error_completions: u64,
}
