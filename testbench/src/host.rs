//! The transport interface the simulator drives, and the NIC around it.
//!
//! [`HostTransport`] is the shape of the reference transport: a sans-IO state
//! machine per host (one NIC) that is handed packets and timer expiries and is
//! polled for packets to send. The simulator supplies the NIC timing:
//! serialization at line rate on one queue per plane port, and a fixed
//! processing latency on receive.

use serde::{Deserialize, Serialize};

use crate::roce::RoceHdr;
use crate::{ConnId, HostId, Time};

/// IP ECN codepoints (as on the wire).
pub use mrnic_proto::packet::{ECN_CE, ECN_ECT0, ECN_NOT_ECT};

/// A packet in flight. The simulator forwards on (src, dst, sport, dport,
/// plane), marks `ecn`, and charges `wire_bytes` of serialization; the body
/// is the decoded transport header, never encoded to bytes in flight.
#[derive(Debug, Clone, PartialEq)]
pub struct Packet {
    pub src: HostId,
    pub dst: HostId,
    /// UDP source port: the ECMP entropy that picks the path.
    pub sport: u16,
    pub dport: u16,
    /// NIC port (= fabric plane) the packet leaves on.
    pub plane: u8,
    /// IP ECN field; switches set CE on ECN-capable packets.
    pub ecn: u8,
    /// Bytes on the wire, everything included (see [`crate::WIRE_OVERHEAD`]).
    pub wire_bytes: u32,
    /// Application payload bytes carried (0 for control packets).
    pub payload: u32,
    pub body: Body,
}

/// The transport header a packet carries.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    /// The mrnic (MetaRoCE-style) transport header, as `mrnic-proto` types it.
    Mr(Box<mrnic_proto::headers::Header>),
    /// An encoded transport datagram (header, payload, ICRC), as a
    /// byte-level transport hands it over.
    Bytes(Vec<u8>),
    /// The RoCEv2 baseline's BTH/AETH subset.
    Roce(RoceHdr),
    /// Test traffic with an identifier.
    Raw(u64),
}

/// One end of a connection, as the workload opens it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConnSpec {
    pub id: ConnId,
    pub local: HostId,
    pub peer: HostId,
}

/// What a transport tells the application.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppEvent {
    /// The oldest unfinished send on `conn` was acknowledged in full.
    SendDone { conn: ConnId },
    /// The next message on `conn` was received in full: `bytes` placed, each
    /// exactly once. Messages complete in the order they were posted.
    Received { conn: ConnId, bytes: u64 },
    /// The oldest unfinished send on `conn` failed (retries exhausted,
    /// every path dead): its bytes are reported lost.
    SendFailed { conn: ConnId },
}

/// Counters every transport keeps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransportStats {
    pub data_pkts: u64,
    pub retx_pkts: u64,
    pub ctrl_pkts: u64,
    pub timeouts: u64,
    pub naks: u64,
    pub cnps: u64,
}

impl std::ops::AddAssign for TransportStats {
    fn add_assign(&mut self, o: Self) {
        self.data_pkts += o.data_pkts;
        self.retx_pkts += o.retx_pkts;
        self.ctrl_pkts += o.ctrl_pkts;
        self.timeouts += o.timeouts;
        self.naks += o.naks;
        self.cnps += o.cnps;
    }
}

/// A bit per NIC port (plane) that has room for another packet.
pub type PortMask = u32;

/// One host's transport: a sans-IO state machine. The simulator calls it
/// with the current time, never the other way round; it owns no clock, no
/// randomness and no sockets.
pub trait HostTransport {
    /// Short name for results ("roce", "mrnic").
    fn name(&self) -> &'static str;
    /// Opens this host's end of a connection.
    fn connect(&mut self, spec: ConnSpec);
    /// Queues a message of `bytes` on `conn` (this host is its sender).
    fn post_send(&mut self, now: Time, conn: ConnId, bytes: u64);
    /// A packet arrived from the fabric.
    fn handle_packet(&mut self, now: Time, pkt: Packet);
    /// The next packet to send, preferably on a port in `ready`; `None` when
    /// nothing may be sent now. A packet for a port not in `ready` waits in
    /// that port's queue.
    fn poll_transmit(&mut self, now: Time, ready: PortMask) -> Option<Packet>;
    /// The deadline returned by [`HostTransport::next_deadline`] passed.
    fn on_timer(&mut self, now: Time);
    /// The earliest time the transport wants `on_timer` (or can send again).
    fn next_deadline(&mut self) -> Option<Time>;
    /// Completions for the application, oldest first.
    fn poll_event(&mut self) -> Option<AppEvent>;
    fn stats(&self) -> TransportStats;
    /// Diagnosis: simulated time this host had a free port but nothing it
    /// could send, by reason (empty unless the transport was built to
    /// account it).
    fn idle_breakdown(&self) -> Vec<(&'static str, Time)> {
        Vec::new()
    }
    /// Diagnosis: the transport's own counters, by name.
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
    /// The transport's own view of one connection, for diagnosis.
    fn describe_conn(&self, _conn: ConnId) -> Option<String> {
        None
    }
}

/// NIC timing around a transport.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct NicTiming {
    /// Aggregate NIC rate in Gbit/s, split evenly over the plane ports.
    pub gbps: f64,
    /// Receive processing latency: packet arrival to `handle_packet`.
    pub rx_latency_ns: u64,
    /// Transmit pipeline latency, added to the first hop's propagation.
    pub tx_latency_ns: u64,
    /// Packets a port queue may hold (including the one on the wire)
    /// before the NIC stops pulling for it.
    pub port_queue_pkts: u32,
}

impl Default for NicTiming {
    fn default() -> Self {
        NicTiming { gbps: 400.0, rx_latency_ns: 500, tx_latency_ns: 500, port_queue_pkts: 2 }
    }
}
