//! `probe_walk`: a PROBE becomes one sack_gen beat per stream the answer
//! must report, one of `mrnic_core`'s glue blocks (architecture.md,
//! `mrnic_core` item 6).
//!
//! # Function
//! The reference's `RxConn::on_probe` answers a PROBE with one SACK per
//! active stream, in stream order, each carrying that stream's
//! completed_msn, and with one SACK on the last stream when none is active.
//! A PROBE that conn_table passed (`m_lk` with `ok`, op PROBE: the
//! connection is open and the path exists) comes in on `s_probe_*` with the
//! lookup's `active` bits and `msns`, the connection's `remote_id` and the
//! PROBE's own fields. The walk sends `m_pkt_*` beats in sack_gen's
//! `s_pkt_*` format (`op` = PROBE, `dst_conn` = remote_id, `stream_id` and
//! `completed_msn` of the stream, `bad`, `ce`, `ackreq`, `payload_len` and
//! `msn` 0), streams in increasing order, by a priority encoder over the
//! active bits not yet sent. `m_pkt_first` marks the first beat of a PROBE
//! (a PROBE answer budget counts PROBEs, not beats).
//!
//! # Timing
//! `s_probe` handshake at `t`, first beat on `m_pkt_valid` at `t + 1`, then
//! one beat per cycle while `m_pkt_ready` is high; `s_probe_ready` is high
//! when no walk is left (the last beat is taken or nothing is held): from
//! registers only. So a PROBE costs `max(1, active streams)` cycles.
//!
//! # Memories
//! None: the held PROBE (its fields, a mask of streams left) in registers.

use mrnic_proto::Config;

use crate::block::{channel_ports, put, Bits, Block, Fields, PortDef};
use crate::netlist::slice_bits;
use crate::sack_gen::{SackGenParams, OP_PROBE};

/// Module name, shared with the Verilog.
pub const NAME: &str = "probe_walk";

/// A config the block cannot be built for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("probe_walk: {field} = {value}: {why}")]
pub struct ParamError {
    /// The config field at fault (dotted, as in the TOML).
    pub field: &'static str,
    pub value: u64,
    pub why: String,
}

/// Sizes of one `probe_walk`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeWalkParams {
    pub sack: SackGenParams,
    pub streams: u32,
}

impl ProbeWalkParams {
    pub fn from_config(cfg: &Config) -> Result<ProbeWalkParams, ParamError> {
        let sack = SackGenParams::from_config(cfg).map_err(|e| ParamError {
            field: e.field,
            value: e.value,
            why: format!("sack_gen: {}", e.why),
        })?;
        let streams = cfg.transport.streams_per_conn;
        if !(1..=64).contains(&streams) {
            return Err(ParamError {
                field: "transport.streams_per_conn",
                value: u64::from(streams),
                why: "the walk holds 1..=64 active bits".into(),
            });
        }
        Ok(ProbeWalkParams { sack, streams })
    }

    pub fn probe_fields(&self) -> Fields {
        vec![
            ("conn", self.sack.conn_bits, "connection slot (conn_table m_lk_conn)"),
            ("remote_id", 24, "the peer's id (conn_table m_lk_remote_id)"),
            ("active", self.streams, "bit i: stream i active (conn_table m_lk_active)"),
            ("msns", self.streams * 24, "stream i's completed_msn at bits 24i+23..24i (conn_table m_lk_msns)"),
            ("path_id", self.sack.path_bits, "the PROBE's path"),
            ("psn", 24, "its path_psn"),
            ("gen", 8, "its path_gen"),
            ("tx_ts", 16, "its tx_ts, echoed"),
            ("sport", 16, "its UDP source port"),
            ("plane", 3, "its plane"),
        ]
    }
}

/// The ports, in declaration order.
pub fn ports(p: &ProbeWalkParams) -> Vec<PortDef> {
    let mut v = vec![PortDef::input("rst", 1, "Clock and reset", "synchronous reset, active high")];
    channel_ports(&mut v, "s_probe", true, "PROBE passed by conn_table", &p.probe_fields());
    channel_ports(&mut v, "m_pkt", false, "Beats to sack_gen s_pkt", &p.sack.pkt_fields());
    v
}

/// A PROBE to walk.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Probe {
    pub conn: u32,
    pub remote_id: u32,
    pub active: u64,
    pub msns: Vec<u32>,
    pub path_id: u32,
    pub psn: u32,
    pub gen: u8,
    pub tx_ts: u16,
    pub sport: u16,
    pub plane: u8,
}

/// The streams a PROBE answer reports, in order: the reference's rule.
pub fn streams_of(active: u64, streams: u32) -> Vec<u32> {
    let v: Vec<u32> = (0..streams).filter(|s| active >> s & 1 == 1).collect();
    if v.is_empty() {
        vec![streams - 1]
    } else {
        v
    }
}

/// The cycle model.
#[derive(Debug, Clone)]
pub struct ProbeWalk {
    p: ProbeWalkParams,
    ports: Vec<PortDef>,
    ids: Ids,
    held: Option<Probe>,
    /// Streams still to send; the lowest is on the output.
    left: u64,
    first: bool,
}

crate::port_ids!(struct Ids {
    rst, s_probe_valid, s_probe_ready, s_probe_conn, s_probe_remote_id, s_probe_active, s_probe_msns,
    s_probe_path_id, s_probe_psn, s_probe_gen, s_probe_tx_ts, s_probe_sport, s_probe_plane, m_pkt_valid,
    m_pkt_ready, m_pkt_op, m_pkt_conn, m_pkt_path_id, m_pkt_psn, m_pkt_gen, m_pkt_ce, m_pkt_ackreq, m_pkt_bad,
    m_pkt_payload_len, m_pkt_stream_id, m_pkt_msn, m_pkt_tx_ts, m_pkt_dst_conn, m_pkt_completed_msn,
    m_pkt_sport, m_pkt_plane, m_pkt_first
});

impl ProbeWalk {
    pub fn new(p: ProbeWalkParams) -> ProbeWalk {
        let ports = ports(&p);
        ProbeWalk { ids: Ids::new(&ports), ports, held: None, left: 0, first: false, p }
    }

    pub fn ready(&self) -> bool {
        self.left == 0
    }

    /// The beat on the output: (stream, completed_msn).
    pub fn beat(&self) -> Option<(u32, u32)> {
        let h = self.held.as_ref()?;
        (self.left != 0).then(|| {
            let s = self.left.trailing_zeros();
            (s, h.msns.get(s as usize).copied().unwrap_or(0))
        })
    }

    /// The edge.
    pub fn clock(&mut self, rst: bool, probe: Option<Probe>, out_ready: bool) {
        if rst {
            self.held = None;
            self.left = 0;
            return;
        }
        let ready = self.ready();
        if self.left != 0 && out_ready {
            self.left &= self.left - 1;
            self.first = false;
        }
        if let (Some(pr), true) = (probe, ready) {
            let mask = if self.p.streams == 64 { u64::MAX } else { (1u64 << self.p.streams) - 1 };
            let active = pr.active & mask;
            self.left = if active == 0 { 1 << (self.p.streams - 1) } else { active };
            self.first = true;
            self.held = Some(pr);
        }
    }
}

impl Block for ProbeWalk {
    fn name(&self) -> &'static str {
        NAME
    }

    fn ports(&self) -> &[PortDef] {
        &self.ports
    }

    fn eval(&mut self, _inputs: &[Bits], outputs: &mut [Bits]) {
        let ids = self.ids;
        let ports = &self.ports;
        put(ports, outputs, ids.s_probe_ready, self.ready() as u64);
        let beat = self.beat();
        let h = self.held.clone().unwrap_or_default();
        let (s, msn) = beat.unwrap_or((0, 0));
        let on = beat.is_some();
        let z = |v: u64| if on { v } else { 0 };
        put(ports, outputs, ids.m_pkt_valid, on as u64);
        put(ports, outputs, ids.m_pkt_op, z(OP_PROBE as u64));
        put(ports, outputs, ids.m_pkt_conn, z(h.conn as u64));
        put(ports, outputs, ids.m_pkt_path_id, z(h.path_id as u64));
        put(ports, outputs, ids.m_pkt_psn, z(h.psn as u64));
        put(ports, outputs, ids.m_pkt_gen, z(h.gen as u64));
        for i in [ids.m_pkt_ce, ids.m_pkt_ackreq, ids.m_pkt_bad, ids.m_pkt_payload_len, ids.m_pkt_msn] {
            put(ports, outputs, i, 0);
        }
        put(ports, outputs, ids.m_pkt_stream_id, z(s as u64));
        put(ports, outputs, ids.m_pkt_tx_ts, z(h.tx_ts as u64));
        put(ports, outputs, ids.m_pkt_dst_conn, z(h.remote_id as u64));
        put(ports, outputs, ids.m_pkt_completed_msn, z(msn as u64));
        put(ports, outputs, ids.m_pkt_sport, z(h.sport as u64));
        put(ports, outputs, ids.m_pkt_plane, z(h.plane as u64));
        put(ports, outputs, ids.m_pkt_first, z(self.first as u64));
    }

    fn tick(&mut self, inputs: &[Bits]) {
        let ids = self.ids;
        let b = |i: usize| inputs[i].bit(0);
        let g = |i: usize| inputs[i].as_u64();
        let probe = b(ids.s_probe_valid).then(|| {
            let m = &inputs[ids.s_probe_msns];
            let msns = (0..self.p.streams).map(|s| slice_bits(m, 24 * s, 24).as_u64() as u32).collect();
            Probe {
                conn: g(ids.s_probe_conn) as u32,
                remote_id: g(ids.s_probe_remote_id) as u32,
                active: g(ids.s_probe_active),
                msns,
                path_id: g(ids.s_probe_path_id) as u32,
                psn: g(ids.s_probe_psn) as u32,
                gen: g(ids.s_probe_gen) as u8,
                tx_ts: g(ids.s_probe_tx_ts) as u16,
                sport: g(ids.s_probe_sport) as u16,
                plane: g(ids.s_probe_plane) as u8,
            }
        });
        self.clock(b(ids.rst), probe, b(ids.m_pkt_ready));
    }
}
