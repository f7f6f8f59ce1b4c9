//! What crosses the boundary between the sans-IO transport and whatever
//! carries its packets (the in-memory channel, UDP sockets, a vector file):
//! a transport datagram (header, payload, ICRC, exactly as
//! `proto::encode_datagram` makes it) with the addressing a UDP socket sees.

use serde::{Deserialize, Serialize};

/// A node's address: its IPv4 address as a number.
pub type NodeAddr = u32;

/// One packet on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WirePacket {
    pub src: NodeAddr,
    pub dst: NodeAddr,
    /// UDP source port. For data and PROBEs this is the path's entropy; SACKs
    /// and NACKs leave from the transport port.
    pub sport: u16,
    /// UDP destination port. SACKs and NACKs go back to the source port of
    /// the packet they answer, so they follow its route in reverse.
    pub dport: u16,
    /// Fabric plane (NIC port) the packet leaves by; answers leave by the
    /// plane their trigger arrived on.
    pub plane: u8,
    /// IP ECN codepoint (`proto::packet::ECN_*`): ECT(0) on transmit; the
    /// fabric may turn it into CE.
    pub ecn: u8,
    /// The transport datagram.
    pub bytes: Vec<u8>,
}
