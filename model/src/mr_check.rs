//! `mr_check`: the receive controller's read-only check of a WRITE's (or a
//! SEND's, `recv`) placement against the memory-region table, one of `mrnic_core`'s glue
//! blocks. It answers before sack_gen decides the packet's bitmap bit, so a
//! refused WRITE gets its ACCESS NACK (and its counter) and sets no bit, as
//! in the reference's `RxConn::check`.
//!
//! # Function
//! A check (`s_chk_*`: rkey, addr, len, the packet's msg_len, recv) is
//! answered on `m_chk_status`, in the reference's order (`Memory::check(rkey,
//! addr, len, REMOTE_WRITE)`, then the message-length rule):
//! 1. `BAD_KEY`: the slot at the rkey's low bits is empty or holds another
//!    key (`rx_bad_rkey`);
//! 2. `NO_ACCESS`: the region does not allow remote writes (`rx_no_access`);
//! 3. `BOUNDS`: `addr + len` wraps 2^64, or `[addr, addr + len)` is not
//!    inside `[base, base + len_region)` (`rx_out_of_bounds`);
//! 4. `TOO_LONG`: the placement fits but `msg_len` exceeds the region's
//!    length: a WRITE message lies in one region, so it could never
//!    complete (`rx_msg_too_long`);
//! 5. `OK`.
//!
//! With `recv` = 1 the check is a SEND's: `rkey` is the lkey recv_match
//! returned with the receive's address (`m_match_lkey`), the region must
//! allow receives instead of remote writes, and rule 4 does not apply
//! (recv_match compared msg_len with the receive's length). The reference
//! refuses such a SEND only when the region was deregistered since the
//! receive was posted, and counts every refusal in `rx_out_of_bounds`
//! (`RxConn::check`); the controller maps the status accordingly.
//!
//! The checker never refuses what dma_write_engine accepts: `OK` implies
//! `dma_write_engine::check` on the same entry (the test checks both).
//!
//! # The table
//! A copy of dma_write_engine's MR table, written by the same records: the
//! `tap_mr_*` inputs observe the csr -> dma_write_engine `s_mr_*`
//! handshake (valid and ready, the netlist having no AND) and write the
//! slot at the key's low bits. Why a copy and not a second read port on the
//! engine's `mr_mem`: the engine's memory already uses its one read port
//! and its one write port, so a second reader is a second copy in either
//! place, and here it leaves the engine's generator, its lockstep suite and
//! its proven properties untouched. The copy sees a write one cycle after
//! its handshake, as the engine does. Reset sweeps the copy one slot per
//! cycle (`MR_ENTRIES` cycles, `s_chk_ready` low), the same length as the
//! engine's sweep, which holds `s_mr_ready` low meanwhile, so in the top
//! no write is tapped during the sweep. One that were would land (it has
//! the write port, the sweep waits a cycle) and, in a slot the sweep has
//! not reached yet, be cleared when it gets there: the copy would miss a
//! region the engine has. The proof of the verdicts assumes no tap while
//! sweeping (`a_env_no_tap_in_sweep`) and fails without it.
//!
//! # Timing
//! `s_chk` handshake at `t`, table read, the word at `t + L`, the verdict
//! registered: `m_chk_valid` at `t + L + 1` (2 / 3). One check at a time
//! (`s_chk_ready` is high while nothing is in flight and the answer
//! register is empty: registers only), so one check per `L + 2` cycles
//! with `m_chk_ready` high: the receive controller checks one packet at a
//! time.
//!
//! # Memories
//! `mr_mem`, `mr_entries` x 163 (valid, receive, remote write, key, base, len): LUT
//! RAM in `small` (16 entries), block RAM in `default` (1024), as the
//! engine's (`mr_block_ram`).

use mrnic_proto::config::Config;

use crate::block::{channel_ports, put, Bits, Block, Fields, PortDef};
use crate::dma_write_engine::{self as dma, MrEntry, KEY_BITS, LEN_BITS, REGION_BITS, VADDR_BITS};

/// Module name, shared with the Verilog.
pub const NAME: &str = "mr_check";

/// `m_chk_status` codes.
pub mod status {
    pub const OK: u8 = 0;
    pub const BAD_KEY: u8 = 1;
    pub const NO_ACCESS: u8 = 2;
    pub const BOUNDS: u8 = 3;
    pub const TOO_LONG: u8 = 4;
}
/// Width of `m_chk_status`.
pub const STATUS_BITS: u32 = 3;

/// A config the block cannot be built for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("mr_check: {field} = {value}: {why}")]
pub struct ParamError {
    pub field: &'static str,
    pub value: u64,
    pub why: String,
}

/// Sizes of one `mr_check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MrCheckParams {
    pub mr_entries: u32,
    pub read_latency: u32,
}

impl MrCheckParams {
    pub fn from_config(cfg: &Config) -> Result<MrCheckParams, ParamError> {
        let (n, l) = (cfg.hardware.mr_entries, cfg.hardware.table_read_latency);
        let bad = |field, value: u32, why: &str| Err(ParamError { field, value: value as u64, why: why.into() });
        if n < 2 || !n.is_power_of_two() || n > 1 << 20 {
            return bad("hardware.mr_entries", n, "must be a power of 2 in 2..=2^20 (indexed by the rkey's low bits)");
        }
        if !(1..=2).contains(&l) {
            return bad("hardware.table_read_latency", l, "the table supports 1 or 2 cycles");
        }
        Ok(MrCheckParams { mr_entries: n, read_latency: l })
    }

    pub fn tap_fields(&self) -> Fields {
        vec![
            ("key", KEY_BITS, "csr m_mr_key"),
            ("entry_valid", 1, "csr m_mr_entry_valid"),
            ("remote_write", 1, "csr m_mr_remote_write"),
            ("recv", 1, "csr m_mr_recv"),
            ("base", REGION_BITS, "csr m_mr_base"),
            ("len", REGION_BITS, "csr m_mr_len"),
        ]
    }

    pub fn chk_fields(&self) -> Fields {
        vec![
            ("rkey", KEY_BITS, "the WRITE's rkey"),
            ("addr", VADDR_BITS, "the packet's first byte"),
            ("len", LEN_BITS, "the packet's payload bytes"),
            ("msg_len", 32, "the message's length (must fit the region)"),
            ("recv", 1, "a SEND's placement: rkey is its receive's lkey, the region must allow receives"),
        ]
    }
}

/// The ports, in declaration order.
pub fn ports(p: &MrCheckParams) -> Vec<PortDef> {
    const T: &str = "Observed table writes (csr m_mr_* -> dma_write_engine s_mr_*)";
    let mut v = vec![PortDef::input("rst", 1, "Clock and reset", "synchronous reset, active high; sweeps the table")];
    v.push(PortDef::input("tap_mr_valid", 1, T, "csr m_mr_valid"));
    v.push(PortDef::input("tap_mr_ready", 1, T, "dma_write_engine s_mr_ready"));
    for (n, w, c) in p.tap_fields() {
        v.push(PortDef::input(format!("tap_mr_{n}"), w, T, c));
    }
    channel_ports(&mut v, "s_chk", true, "Check request", &p.chk_fields());
    channel_ports(
        &mut v,
        "m_chk",
        false,
        "Check answer",
        &vec![("status", STATUS_BITS, "0 OK, 1 bad key, 2 no access, 3 bounds, 4 msg_len beyond the region")],
    );
    v
}

/// A check request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Chk {
    pub rkey: u32,
    pub addr: u64,
    pub len: u16,
    pub msg_len: u32,
    pub recv: bool,
}

/// The rule on one table word.
pub fn verdict(e: &MrEntry, c: &Chk) -> u8 {
    if !e.valid || e.key != c.rkey {
        return status::BAD_KEY;
    }
    if e.access & dma::needed_access(c.recv) == 0 {
        return status::NO_ACCESS;
    }
    if !dma::check(e, c.rkey, c.recv, c.addr, c.len as u64) {
        return status::BOUNDS;
    }
    if !c.recv && c.msg_len as u64 > e.len {
        return status::TOO_LONG;
    }
    status::OK
}

/// The cycle model.
#[derive(Debug, Clone)]
pub struct MrCheck {
    p: MrCheckParams,
    ports: Vec<PortDef>,
    ids: Ids,
    mem: Vec<MrEntry>,
    /// Reset sweep: the next slot to clear, `None` when done.
    sweep: Option<u32>,
    /// The check in flight and the cycles until its word is read.
    flight: Option<(Chk, MrEntry, u32)>,
    out: Option<u8>,
}

crate::port_ids!(struct Ids {
    rst, tap_mr_valid, tap_mr_ready, tap_mr_key, tap_mr_entry_valid, tap_mr_remote_write, tap_mr_recv,
    tap_mr_base, tap_mr_len, s_chk_valid, s_chk_ready, s_chk_rkey, s_chk_addr, s_chk_len, s_chk_msg_len,
    s_chk_recv, m_chk_valid, m_chk_ready, m_chk_status
});

impl MrCheck {
    /// A block as `rst` leaves it (sweep pending).
    pub fn new(p: MrCheckParams) -> MrCheck {
        let ports = ports(&p);
        MrCheck {
            ids: Ids::new(&ports),
            ports,
            mem: vec![MrEntry::default(); p.mr_entries as usize],
            sweep: Some(0),
            flight: None,
            out: None,
            p,
        }
    }

    pub fn ready(&self) -> bool {
        self.sweep.is_none() && self.flight.is_none() && self.out.is_none()
    }

    /// The edge. `tap`: a table write handshaken this cycle; `chk`: a check
    /// offered; `out_ready`: `m_chk_ready`.
    pub fn clock(&mut self, rst: bool, tap: Option<MrEntry>, chk: Option<Chk>, out_ready: bool) {
        if rst {
            self.sweep = Some(0);
            self.flight = None;
            self.out = None;
            return;
        }
        let take = chk.filter(|_| self.ready());
        if self.out.is_some() && out_ready {
            self.out = None;
        }
        // The word is read at the handshake (read before this cycle's
        // write) and carried beside the request until its answer.
        if let Some(c) = take {
            self.flight = Some((c, self.mem[self.slot(c.rkey)], self.p.read_latency + 1));
        }
        if let Some((c, e, left)) = self.flight {
            if left <= 1 {
                self.flight = None;
                self.out = Some(verdict(&e, &c));
            } else {
                self.flight = Some((c, e, left - 1));
            }
        }
        match (tap, self.sweep) {
            (Some(e), _) => {
                let s = self.slot(e.key);
                self.mem[s] = e;
            }
            (None, Some(s)) => {
                self.mem[s as usize] = MrEntry::default();
                self.sweep = (s + 1 < self.p.mr_entries).then_some(s + 1);
            }
            (None, None) => {}
        }
    }

    fn slot(&self, key: u32) -> usize {
        (key & (self.p.mr_entries - 1)) as usize
    }
}

impl Block for MrCheck {
    fn name(&self) -> &'static str {
        NAME
    }

    fn ports(&self) -> &[PortDef] {
        &self.ports
    }

    fn eval(&mut self, _inputs: &[Bits], outputs: &mut [Bits]) {
        let ids = self.ids;
        put(&self.ports, outputs, ids.s_chk_ready, self.ready() as u64);
        put(&self.ports, outputs, ids.m_chk_valid, self.out.is_some() as u64);
        put(&self.ports, outputs, ids.m_chk_status, self.out.unwrap_or(0) as u64);
    }

    fn tick(&mut self, inputs: &[Bits]) {
        let ids = self.ids;
        let b = |i: usize| inputs[i].bit(0);
        let g = |i: usize| inputs[i].as_u64();
        let tap = (b(ids.tap_mr_valid) && b(ids.tap_mr_ready)).then(|| MrEntry {
            valid: b(ids.tap_mr_entry_valid),
            access: dma::access_bits(b(ids.tap_mr_remote_write), b(ids.tap_mr_recv)),
            key: g(ids.tap_mr_key) as u32,
            base: g(ids.tap_mr_base),
            len: g(ids.tap_mr_len),
        });
        let chk = b(ids.s_chk_valid).then(|| Chk {
            rkey: g(ids.s_chk_rkey) as u32,
            addr: g(ids.s_chk_addr),
            len: g(ids.s_chk_len) as u16,
            msg_len: g(ids.s_chk_msg_len) as u32,
            recv: b(ids.s_chk_recv),
        });
        self.clock(b(ids.rst), tap, chk, b(ids.m_chk_ready));
    }
}
