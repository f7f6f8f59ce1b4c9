//! The verbs-shaped vocabulary of the reference: work requests, receive
//! requests, completions and their status codes, connection parameters.
//! Someone who knows ibverbs should recognise every name: a connection is an
//! RC queue pair with several paths and several ordered streams, set up out
//! of band; completions land on one completion queue per NIC.

use serde::{Deserialize, Serialize};

use crate::memory::MemError;
use crate::wire::NodeAddr;

/// What a send work request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum WrOp {
    /// RDMA WRITE to `remote_addr` in the peer's region `rkey`.
    Write { remote_addr: u64, rkey: u32 },
    /// SEND into the peer's next posted receive on the same stream.
    Send,
}

/// A local scatter/gather element: `len` bytes at `addr`, which must lie in
/// one registered region.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Sge {
    pub addr: u64,
    pub len: u64,
}

/// `ibv_send_wr`, reduced to one SGE.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct WorkRequest {
    pub wr_id: u64,
    pub op: WrOp,
    /// `Some` makes it WRITE_IMM or SEND_IMM. A WRITE_IMM consumes a receive
    /// at the peer, as in RDMA.
    pub imm: Option<u32>,
    pub local: Sge,
}

/// `ibv_recv_wr`: a receive buffer of `len` bytes at `addr`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RecvRequest {
    pub wr_id: u64,
    pub addr: u64,
    pub len: u32,
}

/// Completion status (`ibv_wc_status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Status {
    Success,
    /// The local SGE left registered memory by the time it was read.
    LocalProtectionError,
    /// The peer refused the WRITE (rkey, permission or bounds) or the SEND
    /// (longer than the posted receive): ACCESS NACK.
    RemoteAccessError,
    /// The peer has no such connection: NO_CONN NACK.
    RemoteInvalidRequest,
    /// RNR NACKs beyond the retry limit.
    RnrRetryExceeded,
    /// A packet retransmitted beyond the retry limit, or every path DEAD.
    TransportRetryExceeded,
    /// The connection failed before this request completed.
    WrFlushError,
}

/// What completed (`ibv_wc_opcode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CqOpcode {
    Write,
    Send,
    /// A receive consumed by a SEND or SEND_IMM.
    Recv,
    /// A receive consumed by a WRITE_IMM.
    RecvRdmaWithImm,
}

/// `ibv_wc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Completion {
    pub wr_id: u64,
    pub status: Status,
    pub opcode: CqOpcode,
    /// Local connection id.
    pub conn: u32,
    pub stream: u8,
    /// Message length (receives: bytes received).
    pub byte_len: u32,
    pub imm: Option<u32>,
}

/// A connection, set up out of band like an RC QP: both ends agree on ids,
/// path count and first sequence numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ConnParams {
    /// This end's connection id (the peer's packets carry it as dst_conn).
    pub local_id: u32,
    /// The peer's connection id (our packets carry it).
    pub remote_id: u32,
    pub remote: NodeAddr,
    /// Paths (1..=paths_per_conn of the config).
    pub paths: u8,
    /// First psn this end sends on every path.
    pub tx_psn: u32,
    /// First psn this end expects on every path (the peer's `tx_psn`).
    pub rx_psn: u32,
}

/// Why a verb was refused. Nothing is queued when a verb fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum VerbsError {
    #[error("no connection {0}")]
    NoConn(u32),
    #[error("connection id {0} is in use")]
    ConnExists(u32),
    #[error("connection id {0} does not fit the 24-bit dst_conn field")]
    BadConnId(u32),
    #[error("connection {0}: the connection table is full ({1} entries)")]
    ConnTableFull(u32, u32),
    #[error("{0} paths: a connection has 1..={1} paths")]
    BadPaths(u8, u32),
    #[error("stream {0}: the connection has {1} streams")]
    BadStream(u8, u32),
    #[error("message of {0} bytes: msg_len is 32 bits")]
    TooLong(u64),
    #[error("local buffer: {0}")]
    Memory(#[from] MemError),
    #[error("receive queue of stream {0} is full ({1} posted)")]
    RecvQueueFull(u8, u32),
    #[error("connection {0} has failed; create a new one")]
    ConnFailed(u32),
}
