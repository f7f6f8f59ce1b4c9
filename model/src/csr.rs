//! `csr`: the AXI4-Lite register block (`s_axil_*`) for configuration,
//! memory-region table writes and counters.
//!
//! # The register map
//! [`regmap`] is the register map, defined once as data: name, offset,
//! access, fields (each with its bits, reset value and description). The
//! RTL generator builds the decoder from it, and `mrnic gen` prints it as
//! `regmap.md` and the C header `mrnic_regs.h`. Registers are 32 bits;
//! bits outside every field read 0 and ignore writes.
//!
//! | access | read | write |
//! |---|---|---|
//! | `RO` | the value (constants: the config's sizes and hash) | ignored, OKAY |
//! | `RW` | the value | bytes with `wstrb` set are written |
//! | `W1C` | the counter | bits written as 1 (in bytes with `wstrb` set) are cleared |
//! | `WO` (pulse) | 0 | a 1 starts the action for one cycle |
//!
//! Counters are 32 bits, count one per cycle their `stat_*` input is high
//! and saturate at `2^32 - 1`. They are **W1C**, not clear-on-read, so a
//! speculative or repeated read (a debugger, a monitor polling beside the
//! driver) never loses counts; write `0xFFFF_FFFF` to zero a counter. An
//! increment in the cycle the clearing write executes is kept (the counter
//! becomes `(value & !written) + 1`), so no event is lost.
//!
//! # Memory-region table writes
//! Software writes the staging registers `MR_KEY`, `MR_BASE_LO/HI`,
//! `MR_LEN_LO/HI`, `MR_ACCESS`, then `MR_COMMIT` with `go` = 1 (and
//! `free` = 1 to free the slot instead of installing the entry). The commit
//! raises `m_mr_valid` (to the `dma_write_engine`'s `s_mr_*`) with the
//! staged values, and **the write response of the `MR_COMMIT` write is held
//! back until `m_mr_ready` takes the entry**. So when software sees BRESP
//! the entry is in the table, with no busy bit to poll; the wait is bounded
//! by the engine's clear sweep after reset (`mr_entries` cycles). While a
//! commit waits no other write is accepted, so the staged values cannot
//! change under `m_mr_valid`; reads go on.
//!
//! # AXI4-Lite behaviour
//! - AW and W are independent: each is taken into a holding register as soon
//!   as it comes (`awready` / `wready` high while its holding register is
//!   empty and no write response or commit is pending); the write executes
//!   in the cycle after both are held, and BVALID rises the cycle after that
//!   (or after the MR commit is taken). One write and one read outstanding.
//! - A read executes at its AR handshake on the register values of that
//!   cycle (before any write executing in the same cycle); RVALID follows
//!   one cycle later; ARREADY is low while RVALID is high. Reads have no
//!   side effects.
//! - Errors, first match wins: an address whose low 2 bits are not 0:
//!   SLVERR (32-bit aligned accesses only; narrow writes use `wstrb` at the
//!   aligned address); no register at the address: DECERR; an access the
//!   protection policy refuses (below): SLVERR. An erroring write changes
//!   nothing, an erroring read returns 0.
//! - Protection: `CONTROL.priv_only` refuses unprivileged accesses
//!   (`prot[0]` = 0), `CONTROL.secure_only` non-secure ones (`prot[1]` = 1),
//!   `CONTROL.data_only` instruction accesses (`prot[2]` = 1). All reset to
//!   0: every access is allowed.
//! - Every output is a register: no combinational path from an input to an
//!   output.
//!
//! # Timing
//! ```text
//! write: cycle t   AW and W handshakes (or the later of the two)
//!        cycle t+1 execute: registers written (visible to reads from t+2)
//!        cycle t+2 BVALID (MR commit: m_mr_valid instead, BVALID the cycle
//!                  after the m_mr handshake)
//! read:  cycle t   AR handshake, register values read
//!        cycle t+1 RVALID with RDATA
//! ```
//!
//! # Reset
//! `rst` (synchronous, active high) loads every register's reset value,
//! empties the holding registers, drops BVALID, RVALID and a pending commit.

use mrnic_proto::config::Config;

use crate::block::{Bits, Block, PortDef};
use crate::dma_write_engine::{KEY_BITS, REGION_BITS};

/// Module name, shared with the Verilog.
pub const NAME: &str = "csr";
/// AXI4-Lite data width.
pub const DATA_BITS: u32 = 32;
/// `ID` register value: "MRNC" in ASCII.
pub const MAGIC: u32 = 0x4D52_4E43;
/// AXI response codes.
pub mod resp {
    pub const OKAY: u8 = 0;
    pub const SLVERR: u8 = 2;
    pub const DECERR: u8 = 3;
}

/// Register access type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    /// Read/write.
    Rw,
    /// Read-only; writes are ignored (OKAY).
    Ro,
    /// Read; write 1 to clear a bit.
    W1c,
    /// Write-only pulse: a 1 starts an action; reads 0.
    WoPulse,
}

impl Access {
    /// The short name used in `regmap.md` and `mrnic_regs.h`.
    pub fn as_str(self) -> &'static str {
        match self {
            Access::Rw => "RW",
            Access::Ro => "RO",
            Access::W1c => "W1C",
            Access::WoPulse => "WO",
        }
    }
}

/// One field of a register.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldDef {
    pub name: &'static str,
    /// Lowest bit.
    pub lsb: u32,
    pub width: u32,
    pub reset: u32,
    pub desc: &'static str,
}

impl FieldDef {
    /// The field's bits in the register.
    pub fn mask(&self) -> u32 {
        low_mask(self.width) << self.lsb
    }
}

/// One 32-bit register.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegDef {
    /// Upper case, as in the C header (`MRNIC_<NAME>_OFFSET`).
    pub name: &'static str,
    /// Byte offset, a multiple of 4.
    pub offset: u32,
    pub access: Access,
    pub fields: Vec<FieldDef>,
    pub desc: &'static str,
    /// For a counter (`W1c`): the `stat_*` input port it counts.
    pub stat: Option<&'static str>,
}

impl RegDef {
    /// Bits that hold something.
    pub fn mask(&self) -> u32 {
        self.fields.iter().fold(0, |m, f| m | f.mask())
    }

    /// Value after reset.
    pub fn reset(&self) -> u32 {
        self.fields.iter().fold(0, |v, f| v | (f.reset << f.lsb))
    }

    /// Bits up to the highest used one.
    pub fn width(&self) -> u32 {
        32 - self.mask().leading_zeros()
    }

    /// The field called `name`.
    pub fn field(&self, name: &str) -> &FieldDef {
        self.fields.iter().find(|f| f.name == name).unwrap_or_else(|| panic!("{}: no field {name}", self.name))
    }
}

fn low_mask(bits: u32) -> u32 {
    if bits >= 32 {
        u32::MAX
    } else {
        (1 << bits) - 1
    }
}

/// The counters: one `stat_<name>` increment input and one `CNT_<NAME>`
/// register each. Adding a counter is one line here.
pub const STATS: &[(&str, &str, &str)] = &[
    ("stat_rx_bad_icrc", "CNT_RX_BAD_ICRC", "frames dropped for an ICRC mismatch (rx_parser)"),
    (
        "stat_rx_decode_error",
        "CNT_RX_DECODE_ERROR",
        "frames dropped as malformed: truncated, reserved bits, unknown opcode, bad framing (rx_parser)",
    ),
    ("stat_rx_no_conn", "CNT_RX_NO_CONN", "data packets for an unknown connection, answered with NO_CONN"),
    ("stat_rx_bad_hdr", "CNT_RX_BAD_HDR", "data packets refused with a BAD_HDR NACK"),
    ("stat_rx_access", "CNT_RX_ACCESS", "placements refused with an ACCESS NACK (MR table check)"),
    (
        "stat_dma_frame_err",
        "CNT_DMA_FRAME_ERR",
        "payload beats whose tlast disagreed with the placement length (dma_write_engine stat_frame_err)",
    ),
    ("stat_rx_stale_gen", "CNT_RX_STALE_GEN", "data packets of a stale path generation (sack_gen stat_stale_gen)"),
    ("stat_rx_psn_window", "CNT_RX_PSN_WINDOW", "data packets beyond the psn window (sack_gen stat_psn_window)"),
    ("stat_rx_duplicate", "CNT_RX_DUPLICATE", "duplicate data packets, answered with a SACK (sack_gen stat_duplicate)"),
    ("stat_sacks_sent", "CNT_SACKS_SENT", "SACKs generated (sack_gen stat_sack)"),
    ("stat_ack_no_conn", "CNT_ACK_NO_CONN", "SACKs and NACKs for no connection (conn_table stat_ack_no_conn)"),
    (
        "stat_rx_bad_path",
        "CNT_RX_BAD_PATH",
        "data and PROBEs on a path the connection lacks (conn_table stat_bad_path)",
    ),
    (
        "stat_cpl_dma_err",
        "CNT_CPL_DMA_ERR",
        "placements that failed in DMA, bytes not counted (cpl_engine stat_dma_err)",
    ),
    ("stat_cpl_order_err", "CNT_CPL_ORDER_ERR", "DMA completions out of tag order (cpl_engine stat_order_err)"),
    (
        "stat_cpl_msg_err",
        "CNT_CPL_MSG_ERR",
        "packets whose message slot held another message (cpl_engine stat_msg_err)",
    ),
    ("stat_recv_completions", "CNT_RECV_COMPLETIONS", "receive completions raised (cpl_engine stat_recv_cpl)"),
    ("stat_tx_data", "CNT_TX_DATA", "data packets sent for the first time (tx_engine stat_tx_data)"),
    ("stat_tx_retx", "CNT_TX_RETX", "data packets retransmitted (tx_engine stat_tx_retx)"),
    ("stat_tx_probe", "CNT_TX_PROBE", "PROBEs sent (tx_engine stat_tx_probe)"),
    ("stat_tx_answer", "CNT_TX_ANSWER", "SACK and NACK frames sent (tx_engine stat_tx_answer)"),
    (
        "stat_tx_ring_full",
        "CNT_TX_RING_FULL",
        "cycles a path was held back only by its full ring (tx_engine stat_ring_full)",
    ),
    (
        "stat_sack_stale",
        "CNT_SACK_STALE",
        "SACKs dropped: a psn never sent or no such path (tx_engine stat_sack_stale)",
    ),
    ("stat_nack_stale", "CNT_NACK_STALE", "NACKs dropped: their psn was not outstanding (tx_engine stat_nack_stale)"),
    (
        "stat_rx_bad_src",
        "CNT_RX_BAD_SRC",
        "data and PROBEs for a connection from an IPv4 source not its peer, dropped (conn_table stat_bad_src)",
    ),
    (
        "stat_ack_bad_src",
        "CNT_ACK_BAD_SRC",
        "SACKs and NACKs for a connection from an IPv4 source not its peer, dropped (conn_table stat_ack_bad_src)",
    ),
    (
        "stat_rx_probe_psn",
        "CNT_RX_PROBE_PSN",
        "PROBEs with a psn outside their path's window, unanswered (sack_gen stat_probe_psn)",
    ),
    (
        "stat_rx_probe_limited",
        "CNT_RX_PROBE_LIMITED",
        "PROBEs past their path's answer budget, unanswered (sack_gen stat_probe_limited)",
    ),
    (
        "stat_rx_disabled",
        "CNT_RX_DISABLED",
        "frames discarded whole because CONTROL.enable was 0 when they began (enable_gate)",
    ),
    (
        "stat_tx_rnr_full",
        "CNT_TX_RNR_FULL",
        "RNR NACKs that started no back-off, the RNR FIFO full: resent by RACK or timeout (tx_engine stat_rnr_full)",
    ),
    (
        "stat_tx_wprobe_full",
        "CNT_TX_WPROBE_FULL",
        "window probes not armed, their FIFO full: tried again after its next pop (tx_engine stat_wprobe_full)",
    ),
];

/// Byte offset of the first counter.
pub const COUNTER_BASE: u32 = 0x80;

/// A config the CSR block cannot be built for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("csr: {field} = {value}: {why}")]
pub struct ParamError {
    /// The config field at fault (dotted, as in the TOML).
    pub field: &'static str,
    pub value: u64,
    pub why: String,
}

/// What the CSR block takes from a [`Config`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CsrParams {
    /// Reset value of `UDP_PORT`.
    pub udp_port: u16,
    /// `CONFIG_HASH`: FNV-1a (32 bits) of the config's TOML.
    pub config_hash: u32,
    /// log2 of connections, paths per connection, MR entries, datapath bits
    /// (the `SIZES` fields).
    pub log2_conns: u32,
    pub log2_paths: u32,
    pub log2_mr_entries: u32,
    pub log2_datapath: u32,
}

impl CsrParams {
    /// The values from a config, refusing sizes the `SIZES` fields cannot hold.
    pub fn from_config(cfg: &Config) -> Result<CsrParams, ParamError> {
        let lg = |field: &'static str, v: u32, max_bits: u32| {
            let l = v.next_power_of_two().trailing_zeros();
            if l >= 1 << max_bits {
                Err(ParamError { field, value: v.into(), why: format!("log2 must fit the {max_bits}-bit SIZES field") })
            } else {
                Ok(l)
            }
        };
        Ok(CsrParams {
            udp_port: cfg.transport.udp_port,
            config_hash: fnv1a(cfg.to_toml().as_bytes()),
            log2_conns: lg("transport.connections", cfg.transport.connections, 5)?,
            log2_paths: lg("transport.paths_per_conn", cfg.transport.paths_per_conn, 3)?,
            log2_mr_entries: lg("hardware.mr_entries", cfg.hardware.mr_entries, 5)?,
            log2_datapath: lg("hardware.datapath_bits", cfg.hardware.datapath_bits, 4)?,
        })
    }

    /// Width of `s_axil_awaddr` / `s_axil_araddr`: enough bytes for the map.
    pub fn addr_bits(&self) -> u32 {
        let end = regmap(self).iter().map(|r| r.offset + 4).max().unwrap_or(4);
        end.next_power_of_two().trailing_zeros()
    }
}

/// FNV-1a, 32 bits.
pub fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5u32, |h, &b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193))
}

/// The crate version as `(major, minor, patch)`.
pub fn version() -> (u32, u32, u32) {
    let n = |s: &str| s.parse::<u32>().unwrap_or(0);
    (n(env!("CARGO_PKG_VERSION_MAJOR")), n(env!("CARGO_PKG_VERSION_MINOR")), n(env!("CARGO_PKG_VERSION_PATCH")))
}

fn f(name: &'static str, lsb: u32, width: u32, reset: u32, desc: &'static str) -> FieldDef {
    FieldDef { name, lsb, width, reset, desc }
}

fn reg(name: &'static str, offset: u32, access: Access, fields: Vec<FieldDef>, desc: &'static str) -> RegDef {
    RegDef { name, offset, access, fields, desc, stat: None }
}

/// The register map for `p`, in offset order.
pub fn regmap(p: &CsrParams) -> Vec<RegDef> {
    use Access::*;
    let (major, minor, patch) = version();
    let mut map = vec![
        reg("ID", 0x00, Ro, vec![f("magic", 0, 32, MAGIC, "\"MRNC\" in ASCII")], "identifies an mrnic core"),
        reg(
            "VERSION",
            0x04,
            Ro,
            vec![
                f("patch", 0, 8, patch, "generator patch version"),
                f("minor", 8, 8, minor, "generator minor version"),
                f("major", 16, 8, major, "generator major version"),
            ],
            "version of the generator that built the RTL",
        ),
        reg(
            "CONFIG_HASH",
            0x08,
            Ro,
            vec![f("hash", 0, 32, p.config_hash, "FNV-1a (32 bits) of the config's TOML")],
            "which config the RTL was generated from",
        ),
        reg(
            "SIZES",
            0x0C,
            Ro,
            vec![
                f("log2_conns", 0, 5, p.log2_conns, "log2 of transport.connections"),
                f("log2_paths", 8, 3, p.log2_paths, "log2 of transport.paths_per_conn"),
                f("log2_mr_entries", 16, 5, p.log2_mr_entries, "log2 of hardware.mr_entries"),
                f("log2_datapath", 24, 4, p.log2_datapath, "log2 of hardware.datapath_bits"),
            ],
            "sizes the core was built for",
        ),
        reg("SCRATCH", 0x10, Rw, vec![f("value", 0, 32, 0, "free for software")], "scratch register for bus tests"),
        reg(
            "CONTROL",
            0x14,
            Rw,
            vec![
                f("enable", 0, 1, 0, "the core takes MAC frames and work requests; 0 discards frames whole (counted) and holds requests (cfg_enable, enable_gate)"),
                f("priv_only", 1, 1, 0, "refuse unprivileged accesses (prot[0] = 0) with SLVERR"),
                f("secure_only", 2, 1, 0, "refuse non-secure accesses (prot[1] = 1) with SLVERR"),
                f("data_only", 3, 1, 0, "refuse instruction accesses (prot[2] = 1) with SLVERR"),
            ],
            "core enable and bus access policy",
        ),
        reg(
            "UDP_PORT",
            0x18,
            Rw,
            vec![f("port", 0, 16, u32::from(p.udp_port), "UDP destination port (cfg_udp_port)")],
            "UDP port of the transport",
        ),
        reg(
            "MR_KEY",
            0x20,
            Rw,
            vec![f("key", 0, KEY_BITS, 0, "rkey; its low bits select the slot")],
            "MR staging: key",
        ),
        reg("MR_BASE_LO", 0x24, Rw, vec![f("base", 0, 32, 0, "base address bits 31:0")], "MR staging: base, low"),
        reg(
            "MR_BASE_HI",
            0x28,
            Rw,
            vec![f("base", 0, REGION_BITS - 32, 0, "base address bits 63:32")],
            "MR staging: base, high",
        ),
        reg("MR_LEN_LO", 0x2C, Rw, vec![f("len", 0, 32, 0, "region bytes, bits 31:0")], "MR staging: length, low"),
        reg(
            "MR_LEN_HI",
            0x30,
            Rw,
            vec![f("len", 0, REGION_BITS - 32, 0, "region bytes, bits 63:32")],
            "MR staging: length, high",
        ),
        reg(
            "MR_ACCESS",
            0x34,
            Rw,
            vec![
                f("remote_write", 0, 1, 0, "remote peers may WRITE by rkey"),
                f("recv", 1, 1, 0, "buffers of posted receives may lie in it (SENDs placed by a receive's lkey)"),
            ],
            "MR staging: access",
        ),
        reg(
            "MR_COMMIT",
            0x38,
            WoPulse,
            vec![
                f("go", 0, 1, 0, "1: write the staged entry into the MR table (BRESP waits until it is taken)"),
                f("free", 1, 1, 0, "with go: free the slot of MR_KEY instead of installing the entry"),
            ],
            "MR table write",
        ),
    ];
    for (i, (port, name, desc)) in STATS.iter().enumerate() {
        map.push(RegDef {
            name,
            offset: COUNTER_BASE + 4 * i as u32,
            access: W1c,
            fields: vec![f("count", 0, 32, 0, "events, saturating; write 1s to clear")],
            desc,
            stat: Some(port),
        });
    }
    map
}

/// Port indices in [`ports`] order.
pub mod port {
    pub const RST: usize = 0;
    pub const AWADDR: usize = 1;
    pub const AWPROT: usize = 2;
    pub const AWVALID: usize = 3;
    pub const AWREADY: usize = 4;
    pub const WDATA: usize = 5;
    pub const WSTRB: usize = 6;
    pub const WVALID: usize = 7;
    pub const WREADY: usize = 8;
    pub const BRESP: usize = 9;
    pub const BVALID: usize = 10;
    pub const BREADY: usize = 11;
    pub const ARADDR: usize = 12;
    pub const ARPROT: usize = 13;
    pub const ARVALID: usize = 14;
    pub const ARREADY: usize = 15;
    pub const RDATA: usize = 16;
    pub const RRESP: usize = 17;
    pub const RVALID: usize = 18;
    pub const RREADY: usize = 19;
    pub const CFG_ENABLE: usize = 20;
    pub const CFG_UDP_PORT: usize = 21;
    pub const M_MR_VALID: usize = 22;
    pub const M_MR_READY: usize = 23;
    pub const M_MR_KEY: usize = 24;
    pub const M_MR_ENTRY_VALID: usize = 25;
    pub const M_MR_REMOTE_WRITE: usize = 26;
    pub const M_MR_RECV: usize = 27;
    pub const M_MR_BASE: usize = 28;
    pub const M_MR_LEN: usize = 29;
    /// The first `stat_*` input; [`super::STATS`] order.
    pub const STAT0: usize = 30;
}

/// The ports of `csr`, in declaration order (see [`port`]). The Verilog
/// generator declares its module from this list.
pub fn ports(p: &CsrParams) -> Vec<PortDef> {
    const RST: &str = "Clock and reset";
    const AXIL: &str = "AXI4-Lite slave";
    const CFG: &str = "Configuration";
    const MR: &str = "Memory-region table write";
    const STAT: &str = "Counter events";
    let a = p.addr_bits();
    let mut v = vec![
        PortDef::input("rst", 1, RST, "synchronous reset, active high"),
        PortDef::input("s_axil_awaddr", a, AXIL, "write address (bytes; 32-bit aligned)"),
        PortDef::input("s_axil_awprot", 3, AXIL, "write protection (checked against CONTROL's policy)"),
        PortDef::input("s_axil_awvalid", 1, AXIL, "write address offered"),
        PortDef::output("s_axil_awready", 1, AXIL, "write address taken this cycle if valid"),
        PortDef::input("s_axil_wdata", DATA_BITS, AXIL, "write data"),
        PortDef::input("s_axil_wstrb", DATA_BITS / 8, AXIL, "byte lanes written"),
        PortDef::input("s_axil_wvalid", 1, AXIL, "write data offered"),
        PortDef::output("s_axil_wready", 1, AXIL, "write data taken this cycle if valid"),
        PortDef::output("s_axil_bresp", 2, AXIL, "OKAY, SLVERR (misaligned, refused) or DECERR (unmapped)"),
        PortDef::output("s_axil_bvalid", 1, AXIL, "write response offered"),
        PortDef::input("s_axil_bready", 1, AXIL, "write response taken this cycle if valid"),
        PortDef::input("s_axil_araddr", a, AXIL, "read address (bytes; 32-bit aligned)"),
        PortDef::input("s_axil_arprot", 3, AXIL, "read protection (checked against CONTROL's policy)"),
        PortDef::input("s_axil_arvalid", 1, AXIL, "read address offered"),
        PortDef::output("s_axil_arready", 1, AXIL, "read address taken this cycle if valid"),
        PortDef::output("s_axil_rdata", DATA_BITS, AXIL, "read data (0 on an error)"),
        PortDef::output("s_axil_rresp", 2, AXIL, "OKAY, SLVERR (misaligned, refused) or DECERR (unmapped)"),
        PortDef::output("s_axil_rvalid", 1, AXIL, "read data offered"),
        PortDef::input("s_axil_rready", 1, AXIL, "read data taken this cycle if valid"),
        PortDef::output("cfg_enable", 1, CFG, "CONTROL.enable"),
        PortDef::output("cfg_udp_port", 16, CFG, "UDP_PORT"),
        PortDef::output("m_mr_valid", 1, MR, "a committed table write is offered"),
        PortDef::input("m_mr_ready", 1, MR, "table write taken this cycle if valid"),
        PortDef::output("m_mr_key", KEY_BITS, MR, "MR_KEY"),
        PortDef::output("m_mr_entry_valid", 1, MR, "1: install the entry; 0: free the slot (MR_COMMIT.free)"),
        PortDef::output("m_mr_remote_write", 1, MR, "MR_ACCESS.remote_write"),
        PortDef::output("m_mr_recv", 1, MR, "MR_ACCESS.recv"),
        PortDef::output("m_mr_base", REGION_BITS, MR, "{MR_BASE_HI, MR_BASE_LO}"),
        PortDef::output("m_mr_len", REGION_BITS, MR, "{MR_LEN_HI, MR_LEN_LO}"),
    ];
    for (port, name, _) in STATS {
        v.push(PortDef::input(*port, 1, STAT, format!("one event this cycle, counted in {name}")));
    }
    v
}

/// Inputs of one cycle, typed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Inputs {
    pub rst: bool,
    pub awaddr: u32,
    pub awprot: u8,
    pub awvalid: bool,
    pub wdata: u32,
    pub wstrb: u8,
    pub wvalid: bool,
    pub bready: bool,
    pub araddr: u32,
    pub arprot: u8,
    pub arvalid: bool,
    pub rready: bool,
    pub mr_ready: bool,
    /// Bit i: `STATS[i]`'s input.
    pub stats: u32,
}

/// Outputs of one cycle, typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Outputs {
    pub awready: bool,
    pub wready: bool,
    pub bresp: u8,
    pub bvalid: bool,
    pub arready: bool,
    pub rdata: u32,
    pub rresp: u8,
    pub rvalid: bool,
    pub enable: bool,
    pub udp_port: u16,
    pub mr_valid: bool,
    pub mr_key: u32,
    pub mr_entry_valid: bool,
    pub mr_remote_write: bool,
    pub mr_recv: bool,
    pub mr_base: u64,
    pub mr_len: u64,
}

/// The decode of one access: the register index, or the error response.
fn decode(map: &[RegDef], addr: u32, prot: u8, control: u32) -> Result<usize, u8> {
    if addr & 3 != 0 {
        return Err(resp::SLVERR);
    }
    let i = map.iter().position(|r| r.offset == addr).ok_or(resp::DECERR)?;
    let refused = (control >> 1 & 1 == 1 && prot & 1 == 0)
        || (control >> 2 & 1 == 1 && prot >> 1 & 1 == 1)
        || (control >> 3 & 1 == 1 && prot >> 2 & 1 == 1);
    if refused {
        Err(resp::SLVERR)
    } else {
        Ok(i)
    }
}

/// Expands `wstrb` to a bit mask.
pub fn strb_mask(strb: u8) -> u32 {
    (0..4).filter(|b| strb >> b & 1 == 1).fold(0, |m, b| m | 0xFF << (8 * b))
}

/// The cycle-accurate CSR block. See the module docs.
#[derive(Debug, Clone)]
pub struct Csr {
    p: CsrParams,
    map: Vec<RegDef>,
    ports: Vec<PortDef>,
    /// Value of every register (index as in the map), masked to its fields.
    regs: Vec<u32>,
    aw: Option<(u32, u8)>,
    w: Option<(u32, u8)>,
    /// BVALID and BRESP (BRESP holds its last value while BVALID is low, as
    /// the RTL's register does).
    b_valid: bool,
    b_resp: u8,
    /// RVALID, RDATA, RRESP (the same).
    r_valid: bool,
    r_data: u32,
    r_resp: u8,
    mr_pending: bool,
    mr_free: bool,
    idx: Idx,
    /// `p.addr_bits()`, computed once (it builds the register map).
    addr_bits: u32,
}

/// Map indices the block logic refers to.
#[derive(Debug, Clone, Copy)]
struct Idx {
    control: usize,
    udp: usize,
    key: usize,
    base_lo: usize,
    base_hi: usize,
    len_lo: usize,
    len_hi: usize,
    access: usize,
    commit: usize,
    counters: usize,
}

impl Csr {
    /// A block in its reset state.
    pub fn new(p: CsrParams) -> Csr {
        let map = regmap(&p);
        let find = |n: &str| map.iter().position(|r| r.name == n).unwrap_or_else(|| panic!("no register {n}"));
        let idx = Idx {
            control: find("CONTROL"),
            udp: find("UDP_PORT"),
            key: find("MR_KEY"),
            base_lo: find("MR_BASE_LO"),
            base_hi: find("MR_BASE_HI"),
            len_lo: find("MR_LEN_LO"),
            len_hi: find("MR_LEN_HI"),
            access: find("MR_ACCESS"),
            commit: find("MR_COMMIT"),
            counters: find(STATS[0].1),
        };
        let mut c = Csr {
            regs: map.iter().map(RegDef::reset).collect(),
            ports: ports(&p),
            p,
            map,
            aw: None,
            w: None,
            b_valid: false,
            b_resp: 0,
            r_valid: false,
            r_data: 0,
            r_resp: 0,
            mr_pending: false,
            mr_free: false,
            idx,
            addr_bits: p.addr_bits(),
        };
        c.reset();
        c
    }

    fn reset(&mut self) {
        self.regs = self.map.iter().map(RegDef::reset).collect();
        self.aw = None;
        self.w = None;
        self.b_valid = false;
        self.b_resp = 0;
        self.r_valid = false;
        self.r_data = 0;
        self.r_resp = 0;
        self.mr_pending = false;
        self.mr_free = false;
    }

    pub fn params(&self) -> &CsrParams {
        &self.p
    }

    /// The register map this block decodes.
    pub fn map(&self) -> &[RegDef] {
        &self.map
    }

    /// Current value of register `name`.
    pub fn reg(&self, name: &str) -> u32 {
        let i = self.map.iter().position(|r| r.name == name).unwrap_or_else(|| panic!("no register {name}"));
        self.regs[i]
    }

    /// Outputs from registered state (no combinational path from an input).
    pub fn outputs(&self) -> Outputs {
        let busy = self.b_valid || self.mr_pending;
        let r = &self.regs;
        let i = &self.idx;
        Outputs {
            awready: self.aw.is_none() && !busy,
            wready: self.w.is_none() && !busy,
            bresp: self.b_resp,
            bvalid: self.b_valid,
            arready: !self.r_valid,
            rdata: self.r_data,
            rresp: self.r_resp,
            rvalid: self.r_valid,
            enable: r[i.control] & 1 == 1,
            udp_port: r[i.udp] as u16,
            mr_valid: self.mr_pending,
            mr_key: r[i.key],
            mr_entry_valid: !self.mr_free,
            mr_remote_write: r[i.access] & 1 == 1,
            mr_recv: r[i.access] >> 1 & 1 == 1,
            mr_base: u64::from(r[i.base_hi]) << 32 | u64::from(r[i.base_lo]),
            mr_len: u64::from(r[i.len_hi]) << 32 | u64::from(r[i.len_lo]),
        }
    }

    /// The rising clock edge with typed inputs.
    pub fn clock(&mut self, inp: &Inputs) {
        if inp.rst {
            self.reset();
            return;
        }
        let o = self.outputs();
        let control = self.regs[self.idx.control];
        let amask = low_mask(self.addr_bits);

        // Read: executes at the AR handshake on this cycle's values.
        let mut r_next = self.r_valid.then_some((self.r_data, self.r_resp));
        let mut r_hold = (self.r_data, self.r_resp);
        if o.rvalid && inp.rready {
            r_next = None;
        }
        if inp.arvalid && o.arready {
            r_next = Some(match decode(&self.map, inp.araddr & amask, inp.arprot & 7, control) {
                Ok(k) if self.map[k].access == Access::WoPulse => (0, resp::OKAY),
                Ok(k) => (self.regs[k], resp::OKAY),
                Err(e) => (0, e),
            });
        }

        // Write execute, from the holding registers.
        let mut clear = vec![0u32; self.map.len()];
        let mut b_next = self.b_valid.then_some(self.b_resp);
        let mut b_hold = self.b_resp;
        if o.bvalid && inp.bready {
            b_next = None;
        }
        let mut pending_next = self.mr_pending;
        if self.mr_pending && inp.mr_ready {
            pending_next = false;
            b_next = Some(resp::OKAY);
        }
        if let (Some((addr, prot)), Some((data, strb))) = (self.aw, self.w) {
            self.aw = None;
            self.w = None;
            let m = strb_mask(strb);
            match decode(&self.map, addr, prot, control) {
                Err(e) => b_next = Some(e),
                Ok(k) => {
                    let rm = self.map[k].mask();
                    match self.map[k].access {
                        Access::Rw => self.regs[k] = (self.regs[k] & !(m & rm)) | (data & m & rm),
                        Access::Ro => {}
                        Access::W1c => clear[k] = data & m & rm,
                        Access::WoPulse => {}
                    }
                    let go = data & m & 1 == 1;
                    if k == self.idx.commit && go {
                        pending_next = true;
                        self.mr_free = (data & m) >> 1 & 1 == 1;
                    } else {
                        b_next = Some(resp::OKAY);
                    }
                }
            }
        }
        // Counters.
        for (j, _) in STATS.iter().enumerate() {
            let k = self.idx.counters + j;
            let v = self.regs[k] & !clear[k];
            self.regs[k] = v.saturating_add(inp.stats >> j & 1);
        }
        // Holding registers.
        if inp.awvalid && o.awready {
            self.aw = Some((inp.awaddr & amask, inp.awprot & 7));
        }
        if inp.wvalid && o.wready {
            self.w = Some((inp.wdata, inp.wstrb & 0xF));
        }
        if let Some(b) = b_next {
            b_hold = b;
        }
        if let Some(r) = r_next {
            r_hold = r;
        }
        self.b_valid = b_next.is_some();
        self.b_resp = b_hold;
        self.r_valid = r_next.is_some();
        (self.r_data, self.r_resp) = r_hold;
        self.mr_pending = pending_next;
    }
}

impl Csr {
    fn decode_inputs(&self, inputs: &[Bits]) -> Inputs {
        let b = |i: usize| inputs[i].bit(0);
        let w = |i: usize| inputs[i].as_u64();
        Inputs {
            rst: b(port::RST),
            awaddr: w(port::AWADDR) as u32,
            awprot: w(port::AWPROT) as u8,
            awvalid: b(port::AWVALID),
            wdata: w(port::WDATA) as u32,
            wstrb: w(port::WSTRB) as u8,
            wvalid: b(port::WVALID),
            bready: b(port::BREADY),
            araddr: w(port::ARADDR) as u32,
            arprot: w(port::ARPROT) as u8,
            arvalid: b(port::ARVALID),
            rready: b(port::RREADY),
            mr_ready: b(port::M_MR_READY),
            stats: (0..STATS.len()).fold(0, |s, j| s | (b(port::STAT0 + j) as u32) << j),
        }
    }
}

impl Block for Csr {
    fn name(&self) -> &'static str {
        NAME
    }

    fn ports(&self) -> &[PortDef] {
        &self.ports
    }

    fn eval(&mut self, _inputs: &[Bits], outputs: &mut [Bits]) {
        let o = self.outputs();
        let p = &self.ports;
        let mut set = |i: usize, v: u64| outputs[i].set_u64(p[i].width, v);
        set(port::AWREADY, o.awready as u64);
        set(port::WREADY, o.wready as u64);
        set(port::BRESP, o.bresp.into());
        set(port::BVALID, o.bvalid as u64);
        set(port::ARREADY, o.arready as u64);
        set(port::RDATA, o.rdata.into());
        set(port::RRESP, o.rresp.into());
        set(port::RVALID, o.rvalid as u64);
        set(port::CFG_ENABLE, o.enable as u64);
        set(port::CFG_UDP_PORT, o.udp_port.into());
        set(port::M_MR_VALID, o.mr_valid as u64);
        set(port::M_MR_KEY, o.mr_key.into());
        set(port::M_MR_ENTRY_VALID, o.mr_entry_valid as u64);
        set(port::M_MR_REMOTE_WRITE, o.mr_remote_write as u64);
        set(port::M_MR_RECV, o.mr_recv as u64);
        set(port::M_MR_BASE, o.mr_base);
        set(port::M_MR_LEN, o.mr_len);
    }

    fn tick(&mut self, inputs: &[Bits]) {
        let inp = self.decode_inputs(inputs);
        self.clock(&inp);
    }
}
