//! `cqe_merge`: one host completion channel out of tx_engine's send
//! completions and cpl_engine's receive completions, one of `mrnic_core`'s
//! glue blocks.
//!
//! # Function
//! The reference has one completion queue per NIC (`Nic::poll_cq`), in the
//! order completions were raised. Two blocks raise them here: tx_engine
//! (`m_cqe_*`, sends, by connection index) and cpl_engine (`m_cqe_*`,
//! receives, by the 24-bit local connection id). Both go into one FIFO of
//! [`DEPTH`] entries in the order their handshakes happened; when both hand
//! one over in the same cycle, the side that went second last time goes
//! first (so neither side is always behind the other).
//!
//! The merged record (`m_cqe_*`) names the connection by its table index,
//! as every host channel of the top does (`s_wr_conn`, `s_post_conn`, the
//! open records): a receive's id is cut to its low `CB` bits, which is its
//! index by conn_table's slot rule (slot = low bits of the local id); the
//! top wires only those bits (and the stream's) to `s_rx_conn` /
//! `s_rx_stream`. The
//! host's driver keeps the index -> id map it opened the connection with.
//! `opcode` is the reference's `CqOpcode` order: 0 WRITE, 1 SEND (tx_engine's
//! 0 / 1), 2 RECV, 3 RECV_RDMA_WITH_IMM (cpl_engine's own codes). `status`
//! is tx_engine's 4-bit code (cpl_engine's receives are always 0, success).
//!
//! # Timing
//! Both `ready`s are high while the FIFO has room for two entries (a
//! function of its count, a register), so both sides can hand one over in
//! the same cycle. An entry is on `m_cqe_*` the cycle after its handshake.
//! Throughput: one completion per cycle out, sustained.

use std::collections::VecDeque;

use mrnic_proto::Config;

use crate::block::{channel_ports, put, Bits, Block, Fields, PortDef};

/// Module name, shared with the Verilog.
pub const NAME: &str = "cqe_merge";
/// FIFO entries.
pub const DEPTH: usize = 4;

/// `m_cqe_opcode` values.
pub mod opcode {
    pub const WRITE: u8 = 0;
    pub const SEND: u8 = 1;
    pub const RECV: u8 = crate::cpl_engine::OPCODE_RECV;
    pub const RECV_RDMA_WITH_IMM: u8 = crate::cpl_engine::OPCODE_RECV_RDMA_WITH_IMM;
}

/// Sizes of one `cqe_merge`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CqeMergeParams {
    pub conn_bits: u32,
    pub stream_bits: u32,
    /// cpl_engine's `m_cqe_*` fields, in its port order, with `conn` and
    /// `stream` cut to `conn_bits` / `stream_bits` (the low bits of
    /// cpl_engine's 24-bit id and 8-bit stream, which the top wires).
    pub rx_fields: Fields,
}

impl CqeMergeParams {
    pub fn from_config(cfg: &Config) -> Result<CqeMergeParams, crate::cpl_engine::ParamError> {
        let rx = crate::cpl_engine::CplEngineParams::from_config(cfg)?;
        // The id and stream come cut to the index's and the stream's bits
        // (the top wires their low bits): a port of bits never read could
        // not be built lint-clean in the Verilog.
        let rx_fields = rx
            .cqe_fields()
            .into_iter()
            .map(|f| match f.0 {
                "conn" => ("conn", rx.conn_bits, "connection index: the low bits of the local id"),
                "stream" => ("stream", rx.stream_bits, "stream: the low bits of cpl_engine's"),
                _ => f,
            })
            .collect();
        Ok(CqeMergeParams { conn_bits: rx.conn_bits, stream_bits: rx.stream_bits, rx_fields })
    }

    /// tx_engine's `m_cqe_*` fields, in its port order.
    pub fn tx_fields(&self) -> Fields {
        vec![
            ("conn", self.conn_bits, "connection index"),
            ("stream", self.stream_bits, "stream"),
            ("wr_id", 64, "the work request's wr_id"),
            ("status", 4, "tx_engine status code"),
            ("opcode", 1, "0 WRITE, 1 SEND"),
            ("byte_len", 32, "message bytes"),
            ("imm_valid", 1, "the request carried an immediate"),
            ("imm", 32, "the immediate"),
        ]
    }

    /// The merged record's fields.
    pub fn out_fields(&self) -> Fields {
        vec![
            ("conn", self.conn_bits, "connection index"),
            ("stream", self.stream_bits, "stream"),
            ("wr_id", 64, "the work request's or the receive's wr_id"),
            ("status", 4, "0 success, else tx_engine's error code"),
            ("opcode", 2, "0 WRITE, 1 SEND, 2 RECV, 3 RECV_RDMA_WITH_IMM"),
            ("byte_len", 32, "message bytes (receives: bytes received)"),
            ("imm_valid", 1, "imm holds immediate data"),
            ("imm", 32, "immediate data"),
        ]
    }
}

/// The ports, in declaration order.
pub fn ports(p: &CqeMergeParams) -> Vec<PortDef> {
    let mut v = vec![PortDef::input("rst", 1, "Clock and reset", "synchronous reset, active high: empties the FIFO")];
    channel_ports(&mut v, "s_tx", true, "Send completions (tx_engine m_cqe)", &p.tx_fields());
    channel_ports(&mut v, "s_rx", true, "Receive completions (cpl_engine m_cqe)", &p.rx_fields);
    channel_ports(&mut v, "m_cqe", false, "Host completion queue", &p.out_fields());
    v
}

/// One merged completion: tx_engine's record, whose `opcode` here also
/// takes the receive codes (2, 3).
pub use crate::tx_engine::Cqe;

crate::port_ids!(struct Ids {
    rst,
    s_tx_valid, s_tx_ready, s_tx_conn, s_tx_stream, s_tx_wr_id, s_tx_status, s_tx_opcode, s_tx_byte_len,
    s_tx_imm_valid, s_tx_imm,
    s_rx_valid, s_rx_ready, s_rx_wr_id, s_rx_status, s_rx_opcode, s_rx_conn, s_rx_stream, s_rx_byte_len,
    s_rx_imm_valid, s_rx_imm,
    m_cqe_valid, m_cqe_ready, m_cqe_conn, m_cqe_stream, m_cqe_wr_id, m_cqe_status, m_cqe_opcode, m_cqe_byte_len,
    m_cqe_imm_valid, m_cqe_imm,
});

/// The cycle model.
#[derive(Debug, Clone)]
pub struct CqeMerge {
    p: CqeMergeParams,
    ports: Vec<PortDef>,
    ids: Ids,
    fifo: VecDeque<Cqe>,
    /// When both sides hand one over together, the receive goes first.
    rx_first: bool,
}

impl CqeMerge {
    pub fn new(p: CqeMergeParams) -> CqeMerge {
        let ports = ports(&p);
        CqeMerge { ids: Ids::new(&ports), ports, p, fifo: VecDeque::new(), rx_first: false }
    }

    /// Both inputs' `ready` this cycle.
    pub fn ready(&self) -> bool {
        self.fifo.len() + 2 <= DEPTH
    }

    /// The head on `m_cqe_*`.
    pub fn head(&self) -> Option<Cqe> {
        self.fifo.front().copied()
    }

    /// The edge: this cycle's offers and the output's ready.
    pub fn clock(&mut self, rst: bool, tx: Option<Cqe>, rx: Option<Cqe>, out_ready: bool) {
        if rst {
            self.fifo.clear();
            self.rx_first = false;
            return;
        }
        let take = self.ready();
        if out_ready {
            self.fifo.pop_front();
        }
        if !take {
            return;
        }
        match (tx, rx) {
            (Some(t), Some(r)) => {
                let (a, b) = if self.rx_first { (r, t) } else { (t, r) };
                self.fifo.push_back(a);
                self.fifo.push_back(b);
                self.rx_first = !self.rx_first;
            }
            (Some(e), None) | (None, Some(e)) => self.fifo.push_back(e),
            (None, None) => {}
        }
    }
}

impl Block for CqeMerge {
    fn name(&self) -> &'static str {
        NAME
    }

    fn ports(&self) -> &[PortDef] {
        &self.ports
    }

    fn eval(&mut self, _inputs: &[Bits], outputs: &mut [Bits]) {
        let ids = self.ids;
        let r = self.ready() as u64;
        let h = self.head();
        let e = h.unwrap_or_default();
        for (i, v) in [
            (ids.s_tx_ready, r),
            (ids.s_rx_ready, r),
            (ids.m_cqe_valid, h.is_some() as u64),
            (ids.m_cqe_conn, e.conn as u64),
            (ids.m_cqe_stream, e.stream as u64),
            (ids.m_cqe_wr_id, e.wr_id),
            (ids.m_cqe_status, e.status as u64),
            (ids.m_cqe_opcode, e.opcode as u64),
            (ids.m_cqe_byte_len, e.byte_len as u64),
            (ids.m_cqe_imm_valid, e.imm.is_some() as u64),
            (ids.m_cqe_imm, e.imm.unwrap_or(0) as u64),
        ] {
            put(&self.ports, outputs, i, v);
        }
    }

    fn tick(&mut self, inputs: &[Bits]) {
        let ids = self.ids;
        let g = |i: usize| inputs[i].as_u64();
        let (cmask, smask) = ((1u64 << self.p.conn_bits) - 1, (1u64 << self.p.stream_bits) - 1);
        let tx = (g(ids.s_tx_valid) == 1).then(|| Cqe {
            conn: g(ids.s_tx_conn) as u32,
            stream: g(ids.s_tx_stream) as u32,
            wr_id: g(ids.s_tx_wr_id),
            status: g(ids.s_tx_status) as u8,
            opcode: g(ids.s_tx_opcode) as u8,
            byte_len: g(ids.s_tx_byte_len) as u32,
            imm: (g(ids.s_tx_imm_valid) == 1).then(|| g(ids.s_tx_imm) as u32),
        });
        let rx = (g(ids.s_rx_valid) == 1).then(|| Cqe {
            conn: (g(ids.s_rx_conn) & cmask) as u32,
            stream: (g(ids.s_rx_stream) & smask) as u32,
            wr_id: g(ids.s_rx_wr_id),
            status: g(ids.s_rx_status) as u8,
            opcode: g(ids.s_rx_opcode) as u8,
            byte_len: g(ids.s_rx_byte_len) as u32,
            imm: (g(ids.s_rx_imm_valid) == 1).then(|| g(ids.s_rx_imm) as u32),
        });
        self.clock(g(ids.rst) == 1, tx, rx, g(ids.m_cqe_ready) == 1);
    }
}
