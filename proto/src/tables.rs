//! Widths of the NIC's state tables, defined once. The reference keeps its
//! state in these widths (wrapping and saturating as the hardware does), the
//! model stores entries packed by these tables, and the RTL generator sizes
//! its memories from them.

/// One field of a table entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableField {
    pub name: &'static str,
    pub width: u32,
    pub meaning: &'static str,
}

impl TableField {
    pub const fn max(&self) -> u64 {
        if self.width >= 64 {
            u64::MAX
        } else {
            (1u64 << self.width) - 1
        }
    }
}

/// A table entry: its fields packed LSB-first in declaration order.
#[derive(Debug, Clone, Copy)]
pub struct Table {
    pub name: &'static str,
    pub title: &'static str,
    pub fields: &'static [TableField],
}

impl Table {
    pub fn width(&self) -> u32 {
        self.fields.iter().map(|f| f.width).sum()
    }

    /// Bit offset of a field inside a packed entry.
    pub fn lsb(&self, name: &str) -> Option<u32> {
        let mut at = 0;
        for f in self.fields {
            if f.name == name {
                return Some(at);
            }
            at += f.width;
        }
        None
    }

    pub fn field(&self, name: &str) -> Option<&'static TableField> {
        self.fields.iter().find(|f| f.name == name)
    }
}

const fn tf(name: &'static str, width: u32, meaning: &'static str) -> TableField {
    TableField { name, width, meaning }
}

/// Sender state per (connection, path).
pub mod path {
    use super::*;
    pub const STATE: TableField = tf("state", 2, "GOOD=0, SKIP=1, SUSPECT=2, DEAD=3");
    pub const SPORT: TableField = tf("sport", 16, "UDP source port: the path's ECMP entropy");
    pub const GEN: TableField = tf("gen", 8, "generation, bumped on re-entropy");
    pub const PLANE: TableField = tf("plane", 3, "fabric plane of the port the path leaves by");
    pub const NEXT_PSN: TableField = tf("next_psn", 24, "psn of the next new packet");
    pub const CUM_ACKED: TableField = tf("cum_acked", 24, "every psn below this one is acknowledged");
    pub const INFLIGHT: TableField = tf("inflight", 9, "packets sent and not yet acknowledged");
    pub const CWND: TableField = tf("cwnd", 20, "congestion window, bytes");
    pub const SRTT: TableField = tf("srtt", 20, "smoothed RTT, timestamp units");
    pub const RTTVAR: TableField = tf("rttvar", 16, "RTT variation, timestamp units");
    pub const MIN_RTT: TableField = tf("min_rtt", 20, "least RTT seen, timestamp units");
    pub const ECN_EWMA: TableField = tf("ecn_ewma", 8, "fraction of CE-marked packets, Q0.8");
    pub const ACKED_BYTES: TableField =
        tf("acked_bytes", 24, "bytes acknowledged in the current srtt window (utilization)");
    pub const WEIGHT: TableField = tf("weight", 8, "share of the path in the round robin, from cwnd/srtt");
    pub const DEFICIT: TableField = tf("deficit", 16, "round-robin credit, two's complement");
    pub const RTO_DEADLINE: TableField = tf("rto_deadline", 32, "timestamp at which the oldest packet times out");
    pub const RETRIES: TableField = tf("retries", 4, "RTOs in a row, or probes in the current SUSPECT round");
    pub const TABLE: Table = Table {
        name: "path",
        title: "Sender state per (connection, path)",
        fields: &[
            STATE,
            SPORT,
            GEN,
            PLANE,
            NEXT_PSN,
            CUM_ACKED,
            INFLIGHT,
            CWND,
            SRTT,
            RTTVAR,
            MIN_RTT,
            ECN_EWMA,
            ACKED_BYTES,
            WEIGHT,
            DEFICIT,
            RTO_DEADLINE,
            RETRIES,
        ],
    };
}

/// One slot of the per-path retransmit ring (one per outstanding psn).
pub mod ring {
    use super::*;
    pub const TX_TS: TableField = tf("tx_ts", 16, "timestamp of the last transmission");
    pub const RETX_COUNT: TableField = tf("retx_count", 4, "times this psn was retransmitted");
    pub const WR_ID: TableField = tf("wr_id", 16, "work request the packet belongs to");
    pub const OFFSET: TableField = tf("offset", 32, "byte offset of the packet in its message");
    pub const TABLE: Table = Table {
        name: "ring",
        title: "Retransmit ring slot per (path, outstanding psn)",
        fields: &[TX_TS, RETX_COUNT, WR_ID, OFFSET],
    };
}

/// Memory-region table entry.
pub mod mr {
    use super::*;
    pub const VALID: TableField = tf("valid", 1, "entry in use");
    pub const ACCESS: TableField = tf("access", 2, "bit 0 remote write, bit 1 remote send target");
    pub const KEY: TableField = tf("key", 32, "rkey; the table is indexed by its low bits");
    pub const BASE: TableField = tf("base", 64, "first virtual address of the region");
    pub const LEN: TableField = tf("len", 64, "bytes in the region");
    pub const TABLE: Table =
        Table { name: "mr", title: "Memory region, indexed by rkey", fields: &[VALID, ACCESS, KEY, BASE, LEN] };
}

/// Connection context, one per connection slot (slot = low bits of the
/// local id, which the entry keeps whole as its tag).
pub mod conn {
    use super::*;
    pub const VALID: TableField = tf("valid", 1, "slot holds an open connection");
    pub const LOCAL_ID: TableField = tf("local_id", 24, "this NIC's connection id: the tag a dst_conn must match");
    pub const REMOTE_ID: TableField = tf("remote_id", 24, "the peer's connection id (dst_conn of what we send)");
    pub const REMOTE_ADDR: TableField = tf("remote_addr", 32, "the peer's IPv4 address");
    pub const PATHS: TableField = tf("paths", 6, "paths in use, 1..=32: a path_id at or above it is refused");
    pub const TABLE: Table = Table {
        name: "conn",
        title: "Connection context per connection slot",
        fields: &[VALID, LOCAL_ID, REMOTE_ID, REMOTE_ADDR, PATHS],
    };
}

/// Receive state per (connection, stream) that the packet path reads: what
/// SACKs report and which streams a PROBE answers for.
pub mod conn_stream {
    use super::*;
    pub const COMPLETED_MSN: TableField = tf("completed_msn", 24, "oldest msn of the stream not yet completed");
    pub const ACTIVE: TableField = tf("active", 1, "a message was accepted on the stream: PROBE answers report it");
    pub const TABLE: Table = Table {
        name: "conn_stream",
        title: "Receive state per (connection, stream)",
        fields: &[COMPLETED_MSN, ACTIVE],
    };
}

/// Every table, for docs/spec.md.
pub const ALL: [&Table; 5] = [&path::TABLE, &ring::TABLE, &mr::TABLE, &conn::TABLE, &conn_stream::TABLE];
