//! `conn_search`: finds the connection a received NO_CONN NACK is about, by
//! a sweep over conn_table's read port, one of `mrnic_core`'s glue blocks
//! (architecture.md, `mrnic_core` item 2).
//!
//! # Function
//! A NO_CONN NACK names the id its sender did not know: ours for it, the
//! `remote_id` of one of our connections. The reference finds that
//! connection by a search (`remote_id == dst_conn` and `remote == source
//! address`); without a match it counts `ack_no_conn`. Here a NO_CONN NACK
//! (`s_nc_*`: its `dst_conn`, the IPv4 source, and the fields tx_engine
//! takes) starts a sweep: conn_table's `s_rd_*` port (`m_rd_*` here) reads
//! slot 0, 1, ... one per cycle, and each answer (`s_rdr_*`, conn_table's
//! `m_rd_*`) is compared (`entry_valid`, `remote_id`, `remote_addr`). At
//! the first match the reads stop; once every read issued is answered the
//! NACK goes to tx_engine on `m_nack_*` with the slot found (`conn`), or,
//! without a match, `stat_ack_no_conn` pulses.
//!
//! One sweep at a time. `s_nc_ready` is always high (outside reset): a
//! NO_CONN NACK that comes while a sweep runs is dropped and counted
//! (`stat_ack_no_conn`). Why that is safe: the peer answers every further
//! packet of ours the same way, so a dropped one is repeated, and a flood
//! of forged NO_CONN NACKs costs one sweep at a time and never stalls the
//! receive path. `stat_ack_no_conn` shares its counter with conn_table's
//! pulse of the same name: the top ORs the two (they never pulse for one
//! packet twice).
//!
//! # Difference from the reference
//! The reference takes the connection with the lowest local id among the
//! matches, the sweep the lowest slot. They differ only when two of our
//! connections have the same peer address and the same remote id, which a
//! peer never gives two connections.
//!
//! # Timing
//! `s_nc` handshake at `t`; reads from `t + 1`, one per cycle while
//! conn_table's `s_rd_ready` is high, answered `L + 1` later (2 / 3). A
//! read offered and not taken stays offered until it is, even when a match
//! arrives meanwhile (a valid never drops before its handshake; its answer
//! is counted and ignored). A
//! sweep without a match takes `CONNS + L + 2` cycles (18 / 4100); with a
//! match at slot `k`, about `k + L + 2`. The result leaves from a register.
//! `m_nack` waits for `ready`; the next sweep starts after it is taken.
//!
//! # Memories
//! None: the NACK being resolved, the read and answer counters and the
//! match in registers.

use mrnic_proto::Config;

use crate::block::{channel_ports, put, Bits, Block, Fields, PortDef};
use crate::conn_table::ConnTableParams;

/// Module name, shared with the Verilog.
pub const NAME: &str = "conn_search";

/// A config the block cannot be built for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("conn_search: {field} = {value}: {why}")]
pub struct ParamError {
    /// The config field at fault (dotted, as in the TOML).
    pub field: &'static str,
    pub value: u64,
    pub why: String,
}

/// Sizes of one `conn_search`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnSearchParams {
    pub table: ConnTableParams,
}

impl ConnSearchParams {
    pub fn from_config(cfg: &Config) -> Result<ConnSearchParams, ParamError> {
        let table = ConnTableParams::from_config(cfg).map_err(|e| ParamError {
            field: e.field,
            value: e.value,
            why: format!("conn_table: {}", e.why),
        })?;
        Ok(ConnSearchParams { table })
    }

    pub fn conns(&self) -> u32 {
        self.table.conns
    }

    pub fn nc_fields(&self) -> Fields {
        vec![
            ("dst_conn", 24, "the NACK's dst_conn: the remote id of one of our connections"),
            ("src_addr", 32, "its IPv4 source: that connection's peer"),
            ("path_id", 8, "its path_id"),
            ("code", 8, "its code (3, NO_CONN)"),
            ("psn", 24, "its psn"),
        ]
    }

    /// The read answer's fields the search compares: conn_table's `m_rd_*`
    /// less the context it never reads (an input read by nothing could
    /// not be built lint-clean in the Verilog; the netlist's `channel`
    /// wires the fields both ends have).
    pub fn rdr_fields(&self) -> Fields {
        self.table
            .rd_out_fields()
            .into_iter()
            .filter(|f| matches!(f.0, "conn" | "entry_valid" | "remote_id" | "remote_addr"))
            .collect()
    }

    pub fn nack_fields(&self) -> Fields {
        vec![
            ("conn", self.table.conn_bits, "the connection found (slot)"),
            ("path_id", 8, "path_id as on the wire"),
            ("code", 8, "the NACK's code"),
            ("psn", 24, "psn the NACK answers"),
        ]
    }
}

/// The ports, in declaration order.
pub fn ports(p: &ConnSearchParams) -> Vec<PortDef> {
    let t = &p.table;
    let mut v = vec![PortDef::input("rst", 1, "Clock and reset", "synchronous reset, active high")];
    channel_ports(&mut v, "s_nc", true, "NO_CONN NACK received", &p.nc_fields());
    channel_ports(&mut v, "m_rd", false, "Reads (conn_table s_rd_*)", &t.rd_fields());
    channel_ports(&mut v, "s_rdr", true, "Read answers (conn_table m_rd_*)", &p.rdr_fields());
    channel_ports(&mut v, "m_nack", false, "Resolved NACK (tx_engine s_nack_*)", &p.nack_fields());
    v.push(PortDef::output(
        "stat_ack_no_conn",
        1,
        "Counters",
        "pulse: no connection matched, or dropped while a sweep ran (ORed with conn_table's)",
    ));
    v
}

/// A NO_CONN NACK to resolve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Nc {
    pub dst_conn: u32,
    pub src_addr: u32,
    pub path_id: u8,
    pub code: u8,
    pub psn: u32,
}

/// A read answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Rd {
    pub conn: u32,
    pub entry_valid: bool,
    pub remote_id: u32,
    pub remote_addr: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Idle,
    /// Sweeping: next slot to read (CONNS when all are issued), reads not
    /// yet answered, the match, and whether the read of `next` was offered
    /// and not taken (it stays offered until taken, even after a match:
    /// a valid never drops before its handshake).
    Sweep {
        next: u32,
        pending: u32,
        found: Option<u32>,
        held: bool,
    },
    /// Result on m_nack.
    Out(u32),
}

/// The cycle model.
#[derive(Debug, Clone)]
pub struct ConnSearch {
    p: ConnSearchParams,
    ports: Vec<PortDef>,
    ids: Ids,
    nc: Nc,
    state: State,
    /// `stat_ack_no_conn` this cycle, and pulses still owed (a drop and a
    /// failed sweep in one cycle are two counts).
    stat: bool,
    owed: u32,
}

crate::port_ids!(struct Ids {
    rst, s_nc_valid, s_nc_ready, s_nc_dst_conn, s_nc_src_addr, s_nc_path_id, s_nc_code, s_nc_psn, m_rd_valid,
    m_rd_ready, m_rd_conn, s_rdr_valid, s_rdr_ready, s_rdr_conn, s_rdr_entry_valid, s_rdr_remote_id,
    s_rdr_remote_addr, m_nack_valid, m_nack_ready, m_nack_conn, m_nack_path_id, m_nack_code, m_nack_psn,
    stat_ack_no_conn
});

impl ConnSearch {
    pub fn new(p: ConnSearchParams) -> ConnSearch {
        let ports = ports(&p);
        ConnSearch { ids: Ids::new(&ports), ports, nc: Nc::default(), state: State::Idle, stat: false, owed: 0, p }
    }

    /// The read offered this cycle.
    pub fn read(&self) -> Option<u32> {
        match self.state {
            State::Sweep { next, found, held, .. } if next < self.p.conns() && (found.is_none() || held) => Some(next),
            _ => None,
        }
    }

    /// The resolved NACK offered this cycle.
    pub fn nack(&self) -> Option<(u32, Nc)> {
        match self.state {
            State::Out(c) => Some((c, self.nc)),
            _ => None,
        }
    }

    pub fn idle(&self) -> bool {
        self.state == State::Idle
    }

    /// The edge.
    pub fn clock(&mut self, rst: bool, nc: Option<Nc>, rd_ready: bool, rdr: Option<Rd>, nack_ready: bool) {
        if rst {
            self.state = State::Idle;
            (self.stat, self.owed) = (false, 0);
            return;
        }
        let issued = self.read().is_some() && rd_ready;
        let held = self.read().is_some() && !rd_ready;
        self.state = match self.state {
            State::Idle => match nc {
                Some(n) => {
                    self.nc = n;
                    State::Sweep { next: 0, pending: 0, found: None, held: false }
                }
                None => State::Idle,
            },
            State::Sweep { next, pending, found, .. } => {
                self.owed += nc.is_some() as u32;
                let mut found = found;
                let mut pending = pending + issued as u32;
                if let Some(r) = rdr {
                    pending -= 1;
                    let hit = r.entry_valid && r.remote_id == self.nc.dst_conn && r.remote_addr == self.nc.src_addr;
                    if hit && found.is_none() {
                        found = Some(r.conn);
                    }
                }
                let next = next + issued as u32;
                let done_issuing = next >= self.p.conns() || (found.is_some() && !held);
                match (done_issuing && pending == 0, found) {
                    (true, Some(c)) => State::Out(c),
                    (true, None) => {
                        self.owed += 1;
                        State::Idle
                    }
                    (false, _) => State::Sweep { next, pending, found, held },
                }
            }
            State::Out(c) => {
                self.owed += nc.is_some() as u32;
                if nack_ready {
                    State::Idle
                } else {
                    State::Out(c)
                }
            }
        };
        self.stat = self.owed > 0;
        self.owed = self.owed.saturating_sub(1);
    }
}

impl Block for ConnSearch {
    fn name(&self) -> &'static str {
        NAME
    }

    fn ports(&self) -> &[PortDef] {
        &self.ports
    }

    fn eval(&mut self, _inputs: &[Bits], outputs: &mut [Bits]) {
        let ids = self.ids;
        let ports = &self.ports;
        put(ports, outputs, ids.s_nc_ready, 1);
        put(ports, outputs, ids.s_rdr_ready, 1);
        put(ports, outputs, ids.m_rd_valid, self.read().is_some() as u64);
        put(ports, outputs, ids.m_rd_conn, self.read().unwrap_or(0) as u64);
        let n = self.nack();
        let (c, nc) = n.unwrap_or_default();
        let on = n.is_some();
        put(ports, outputs, ids.m_nack_valid, on as u64);
        put(ports, outputs, ids.m_nack_conn, c as u64);
        put(ports, outputs, ids.m_nack_path_id, if on { nc.path_id as u64 } else { 0 });
        put(ports, outputs, ids.m_nack_code, if on { nc.code as u64 } else { 0 });
        put(ports, outputs, ids.m_nack_psn, if on { nc.psn as u64 } else { 0 });
        put(ports, outputs, ids.stat_ack_no_conn, self.stat as u64);
    }

    fn tick(&mut self, inputs: &[Bits]) {
        let ids = self.ids;
        let b = |i: usize| inputs[i].bit(0);
        let g = |i: usize| inputs[i].as_u64() as u32;
        let nc = b(ids.s_nc_valid).then(|| Nc {
            dst_conn: g(ids.s_nc_dst_conn),
            src_addr: g(ids.s_nc_src_addr),
            path_id: g(ids.s_nc_path_id) as u8,
            code: g(ids.s_nc_code) as u8,
            psn: g(ids.s_nc_psn),
        });
        let rdr = b(ids.s_rdr_valid).then(|| Rd {
            conn: g(ids.s_rdr_conn),
            entry_valid: b(ids.s_rdr_entry_valid),
            remote_id: g(ids.s_rdr_remote_id),
            remote_addr: g(ids.s_rdr_remote_addr),
        });
        self.clock(b(ids.rst), nc, b(ids.m_rd_ready), rdr, b(ids.m_nack_ready));
    }
}
