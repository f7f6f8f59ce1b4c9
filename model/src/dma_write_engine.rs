//! `dma_write_engine`: places the payload of WRITE and SEND packets into
//! host memory through an AXI4 write master, after checking each placement
//! against the memory-region (MR) table.
//!
//! # Function
//! A placement is one request on `s_req_*` (`tag`, `rkey`, `addr`, `len`,
//! `recv`) and its payload on `s_axis_*`: exactly `ceil(len / BYTES)` beats
//! (`BYTES` = datapath bytes), packed from byte lane 0, all full but the
//! last, `tlast` on the last (none at all when `len` is 0). Requests and
//! payloads pair up in order. A WRITE's placement names its rkey; a SEND's
//! (`recv` = 1) names the lkey of the receive it lands in, which recv_match
//! returns with the address (`m_match_lkey`: the key the host gave with the
//! receive, as an `ibv_recv_wr` SGE carries it). For each placement the
//! engine
//! 1. reads the MR table entry at the low `INDEX_BITS` bits of the key
//!    (registered read, `L` = `hardware.table_read_latency` cycles) and
//!    accepts the placement when, exactly as the reference's
//!    `Memory::check(key, addr, len, need)`, with `need` = `REMOTE_WRITE`
//!    for a WRITE and `RECV` for a SEND:
//!    the entry is valid, its full 32-bit key equals the key, its access
//!    has the needed bit (bit 0 remote write, bit 1 receive), `addr + len`
//!    does not pass `2^64 - 1` (the reference's `checked_add`),
//!    `addr >= base` and `addr + len <= base + len_region` (the last
//!    computed on 65 bits, so a table entry the reference could never hold
//!    still cannot wrap). A SEND is checked at placement, not only when its
//!    receive was posted: a region deregistered since (its slot freed or
//!    given to another region, whose key differs) takes nothing, as in the
//!    reference's receiver. A placement of `len` 0 is accepted without
//!    looking at the key: it writes nothing (RDMA's zero-length WRITE
//!    checks no key, and neither does the reference), and an ACCESS
//!    completion for it would leave its message uncounted;
//! 2. if accepted, writes `[addr, addr + len)` with INCR bursts of
//!    `AWSIZE = log2(BYTES)`: the first burst starts at `addr` itself
//!    (unaligned allowed), every later one at a beat boundary, and each ends
//!    at the first of: the end of the placement, a 4 KiB boundary,
//!    `axi_max_burst` beats. Payload bytes are shifted from lane 0 to lane
//!    `addr % BYTES`; `wstrb` holds exactly the bytes of the placement
//!    (and of those only the ones whose `tkeep` bit was set);
//! 3. if rejected, issues no AW and no W at all, drains and drops the
//!    payload beats;
//! 4. raises one completion per placement on `m_cpl_*`, in request order:
//!    `OK`, `ACCESS` (rejected, nothing written) or `AXI` (some burst got a
//!    response other than OKAY, or a `bid` other than 0). An accepted
//!    placement completes after the B responses of all its bursts;
//!    `len = 0` completes `OK` with no write.
//!
//! The table is written through `s_mr_*`, by the CSR block: the low
//! `INDEX_BITS` bits of `s_mr_key` select the slot, so an entry always sits
//! where its key looks for it; `s_mr_entry_valid = 0` frees the slot. The
//! region's two access bits are stored (`mr::ACCESS`: remote write,
//! receive); a region with neither (a local source buffer) is in the table
//! but takes no placement. A request sees every table write handshaken in
//! an earlier cycle.
//!
//! # What is not here
//! Per-message completion (bytes counted once per new bitmap bit, messages
//! completed in msn order per stream, each once) is the receive side's
//! completion stage, which consumes `m_cpl_*` by tag; it needs the SACK
//! bitmaps, which this block has no business reading. This block is
//! placement, bounds, AXI and responses only; `tag` is opaque to it.
//!
//! # Framing
//! The beat count comes from `len`. A `tlast` that is missing on the last
//! beat of a placement, or present on another beat, raises
//! `stat_frame_err` for one cycle (a counter in the CSR block counts it);
//! the engine keeps counting by `len`, so a bad frame upstream can never
//! move a write outside the checked range.
//!
//! # Timing
//! ```text
//! cycle t        s_req handshake; MR table read at rkey's low bits
//! cycle t+L      entry available: bounds check; placement queued
//! cycle t+L+1    burst generator issues the first AW; the payload path
//!                takes the first beat (if s_axis_tvalid)
//! cycle t+L+2    m_axi_awvalid, m_axi_wvalid with the first beat
//! ```
//! Latency: `L + 2` cycles from the request handshake to the first AW and
//! W (3 in `small`, 4 in `default`) when the first payload beat is already
//! there; one cycle from the B handshake of a placement's last burst to
//! `m_cpl_valid`; a rejected placement completes `L + 3` cycles after its
//! request when nothing is ahead of it.
//!
//! Throughput: one full datapath beat per cycle, sustained, with
//! `m_axi_awready`, `m_axi_wready`, `m_axi_bready`'s partner and
//! `m_cpl_ready` high. Exceptions: a placement whose bytes, shifted to the
//! address offset, spill into one more beat than its payload has costs one
//! extra cycle (the tail beat), and a zero-length one costs the payload path
//! one cycle. Requests run ahead of the payload (a queue of
//! `PLACE_DEPTH` placements), so back-to-back placements leave no gap. At
//! most `axi_outstanding` bursts (and queued completions) wait for their
//! responses; the burst generator stops there.
//!
//! # Structure (each a set of registers in the RTL)
//! - request pipeline: `L` stages that carry the request beside the table
//!   read; the check at the last one pushes into the placement queue;
//! - placement queue: `PLACE_DEPTH` entries, read by two pointers: the
//!   burst generator's and the payload path's; `s_req_ready` is high while
//!   the queue has room for every request in the pipeline plus one, so it
//!   depends on registers only;
//! - burst generator: one AW (or one done-entry for a rejected or empty
//!   placement) per cycle into the response queue (`axi_outstanding`
//!   entries) and the AW output register;
//! - payload path: realigns beats (`{beat, previous beat} >> 8 *
//!   (BYTES - offset)`), computes `wstrb` and `wlast`, pushes into a
//!   2-entry W output queue;
//! - response tracker: pops the response queue in order, one B per burst
//!   entry, and pushes completions into a 2-entry output queue.
//!
//! Every output is a register or a function of registers only: no
//! combinational path from an input to an output. Outputs hold still while
//! valid and not ready, as AXI requires.
//!
//! # Reset and table init
//! `rst` (synchronous, active high) empties every queue and starts a clear
//! sweep of the MR table: one entry per cycle, slot 0 first, for
//! `MR_ENTRIES` cycles with `s_req_ready` and `s_mr_ready` low.

use std::collections::VecDeque;
use std::fmt;

use mrnic_proto::config::Config;
use mrnic_proto::layouts::data;
use mrnic_proto::tables::mr;

use crate::block::{Bits, Block, PortDef};

/// Module name, shared with the Verilog.
pub const NAME: &str = "dma_write_engine";
/// Width of the opaque completion tag.
pub const TAG_BITS: u32 = 16;
/// Width of a placement length: the data header's `payload_len`.
pub const LEN_BITS: u32 = data::PAYLOAD_LEN.width;
/// Width of an rkey.
pub const KEY_BITS: u32 = mr::KEY.width;
/// Width of a virtual address (the data header's `addr`).
pub const VADDR_BITS: u32 = data::ADDR.width;
/// Width of a region's base and length.
pub const REGION_BITS: u32 = mr::BASE.width;
/// Access bit 0 of `mr::ACCESS`: remote peers may WRITE by rkey.
pub const ACCESS_REMOTE_WRITE: u8 = 1;
/// Access bit 1 of `mr::ACCESS`: buffers of posted receives may lie in the
/// region, so a SEND may be placed there by its receive's lkey.
pub const ACCESS_RECV: u8 = 2;
/// Width of `m_cpl_status`.
pub const STATUS_BITS: u32 = 2;
/// Bytes of an AXI page no burst may cross.
pub const PAGE_BYTES: u64 = 4096;
/// Bits of one MR table word: valid, recv, remote write, key, base, len.
pub const MR_WORD_BITS: u32 = 1 + mr::ACCESS.width + KEY_BITS + 2 * REGION_BITS;

/// Completion status codes.
pub mod status {
    /// Written, every response OKAY.
    pub const OK: u8 = 0;
    /// Rejected by the table check: nothing written.
    pub const ACCESS: u8 = 1;
    /// Written, but some burst got SLVERR, DECERR (or any non-OKAY), or an
    /// unexpected `bid`.
    pub const AXI: u8 = 2;
}

/// Port indices in [`ports`] order.
pub mod port {
    pub const RST: usize = 0;
    pub const S_MR_VALID: usize = 1;
    pub const S_MR_READY: usize = 2;
    pub const S_MR_KEY: usize = 3;
    pub const S_MR_ENTRY_VALID: usize = 4;
    pub const S_MR_REMOTE_WRITE: usize = 5;
    pub const S_MR_RECV: usize = 6;
    pub const S_MR_BASE: usize = 7;
    pub const S_MR_LEN: usize = 8;
    pub const S_REQ_VALID: usize = 9;
    pub const S_REQ_READY: usize = 10;
    pub const S_REQ_TAG: usize = 11;
    pub const S_REQ_RKEY: usize = 12;
    pub const S_REQ_ADDR: usize = 13;
    pub const S_REQ_LEN: usize = 14;
    pub const S_REQ_RECV: usize = 15;
    pub const S_AXIS_TDATA: usize = 16;
    pub const S_AXIS_TKEEP: usize = 17;
    pub const S_AXIS_TVALID: usize = 18;
    pub const S_AXIS_TREADY: usize = 19;
    pub const S_AXIS_TLAST: usize = 20;
    pub const M_AXI_AWID: usize = 21;
    pub const M_AXI_AWADDR: usize = 22;
    pub const M_AXI_AWLEN: usize = 23;
    pub const M_AXI_AWSIZE: usize = 24;
    pub const M_AXI_AWBURST: usize = 25;
    pub const M_AXI_AWVALID: usize = 26;
    pub const M_AXI_AWREADY: usize = 27;
    pub const M_AXI_WDATA: usize = 28;
    pub const M_AXI_WSTRB: usize = 29;
    pub const M_AXI_WLAST: usize = 30;
    pub const M_AXI_WVALID: usize = 31;
    pub const M_AXI_WREADY: usize = 32;
    pub const M_AXI_BID: usize = 33;
    pub const M_AXI_BRESP: usize = 34;
    pub const M_AXI_BVALID: usize = 35;
    pub const M_AXI_BREADY: usize = 36;
    pub const M_CPL_VALID: usize = 37;
    pub const M_CPL_READY: usize = 38;
    pub const M_CPL_TAG: usize = 39;
    pub const M_CPL_STATUS: usize = 40;
    pub const STAT_FRAME_ERR: usize = 41;
}

/// A config the engine cannot be built for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("dma_write_engine: {field} = {value}: {why}")]
pub struct ParamError {
    /// The config field at fault (dotted, as in the TOML).
    pub field: &'static str,
    pub value: u64,
    pub why: String,
}

/// Sizes of one engine, derived from a [`Config`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DmaWriteEngineParams {
    /// Datapath width in bits (`s_axis_tdata`, `m_axi_wdata`).
    pub data_bits: u32,
    /// MR table entries.
    pub mr_entries: u32,
    /// MR table read latency in cycles (1 or 2).
    pub read_latency: u32,
    /// Longest burst in beats.
    pub max_burst: u32,
    /// Bursts (and queued completions) waiting for responses.
    pub outstanding: u32,
    /// AXI ID width.
    pub id_bits: u32,
    /// AXI address width (64).
    pub addr_bits: u32,
}

impl DmaWriteEngineParams {
    /// Derives the sizes from a config, refusing what the block cannot build.
    pub fn from_config(cfg: &Config) -> Result<DmaWriteEngineParams, ParamError> {
        let h = &cfg.hardware;
        DmaWriteEngineParams::new(DmaWriteEngineParams {
            data_bits: h.datapath_bits,
            mr_entries: h.mr_entries,
            read_latency: h.table_read_latency,
            max_burst: h.axi_max_burst,
            outstanding: h.axi_outstanding,
            id_bits: h.axi_id_bits,
            addr_bits: h.axi_addr_bits,
        })
    }

    /// Checks a set of sizes.
    pub fn new(p: DmaWriteEngineParams) -> Result<DmaWriteEngineParams, ParamError> {
        let bad = |field, value: u32, why: &str| Err(ParamError { field, value: value as u64, why: why.to_string() });
        if !(64..=1024).contains(&p.data_bits) || !p.data_bits.is_power_of_two() {
            return bad(
                "hardware.datapath_bits",
                p.data_bits,
                "must be a power of 2 in 64..=1024 (wstrb fits 128 lanes)",
            );
        }
        if p.mr_entries < 2 || !p.mr_entries.is_power_of_two() || p.mr_entries > 1 << 20 {
            return bad(
                "hardware.mr_entries",
                p.mr_entries,
                "must be a power of 2 in 2..=2^20 (the table is indexed by the rkey's low bits)",
            );
        }
        if !(1..=2).contains(&p.read_latency) {
            return bad("hardware.table_read_latency", p.read_latency, "the MR table supports 1 or 2 cycles");
        }
        if !(1..=256).contains(&p.max_burst) || !p.max_burst.is_power_of_two() {
            return bad("hardware.axi_max_burst", p.max_burst, "must be a power of 2 in 1..=256 (AXI4 INCR)");
        }
        if p.max_burst as u64 * (p.data_bits as u64 / 8) > PAGE_BYTES {
            return bad("hardware.axi_max_burst", p.max_burst, "a burst of that many beats spans more than 4 KiB");
        }
        if !(2..=256).contains(&p.outstanding) || !p.outstanding.is_power_of_two() {
            return bad(
                "hardware.axi_outstanding",
                p.outstanding,
                "must be a power of 2 in 2..=256 (the response queue's pointers wrap)",
            );
        }
        if !(1..=16).contains(&p.id_bits) {
            return bad("hardware.axi_id_bits", p.id_bits, "must be 1..=16");
        }
        if p.addr_bits != 64 {
            return bad(
                "hardware.axi_addr_bits",
                p.addr_bits,
                "the engine drives 64-bit addresses; a narrower bus needs a bounds rule for the dropped bits (not built)",
            );
        }
        Ok(p)
    }

    /// Datapath bytes per beat.
    pub fn bytes(&self) -> u32 {
        self.data_bits / 8
    }

    /// log2 of [`Self::bytes`]: `AWSIZE`, and the offset width.
    pub fn lane_bits(&self) -> u32 {
        self.bytes().trailing_zeros()
    }

    /// Width of the MR table index.
    pub fn index_bits(&self) -> u32 {
        self.mr_entries.trailing_zeros()
    }

    /// Beats in a 4 KiB page.
    pub fn page_beats(&self) -> u32 {
        (PAGE_BYTES / self.bytes() as u64) as u32
    }

    /// Width of a beat index within a page.
    pub fn page_bits(&self) -> u32 {
        12 - self.lane_bits()
    }

    /// Placement queue entries: the power of 2 at or above `L + 2`.
    pub fn place_depth(&self) -> u32 {
        (self.read_latency + 2).next_power_of_two()
    }

    /// The MR table's RAM resource, decided here once for the model's docs
    /// and the generator: distributed (LUT) RAM up to 64 entries, block RAM
    /// above. Both have the same registered read.
    pub fn mr_block_ram(&self) -> bool {
        self.mr_entries > 64
    }

    /// Cycles from a request handshake to the first AW/W valid.
    pub fn latency(&self) -> u32 {
        self.read_latency + 2
    }
}

/// The ports of `dma_write_engine`, in declaration order (see [`port`]).
/// The Verilog generator declares its module from this list.
pub fn ports(p: &DmaWriteEngineParams) -> Vec<PortDef> {
    const RST: &str = "Reset";
    const MR: &str = "Memory-region table write";
    const REQ: &str = "Placement request";
    const PAY: &str = "Payload input";
    const AXI: &str = "AXI4 write master";
    const CPL: &str = "Placement completion";
    const STAT: &str = "Status";
    let d = p.data_bits;
    let b = p.bytes();
    vec![
        PortDef::input("rst", 1, RST, "synchronous reset, active high; starts the table clear sweep"),
        PortDef::input("s_mr_valid", 1, MR, "a table write is offered"),
        PortDef::output("s_mr_ready", 1, MR, "table write taken this cycle if valid (low during the clear sweep)"),
        PortDef::input("s_mr_key", KEY_BITS, MR, "rkey of the entry; its low bits select the slot"),
        PortDef::input("s_mr_entry_valid", 1, MR, "1: the slot holds this region; 0: the slot is freed"),
        PortDef::input("s_mr_remote_write", 1, MR, "access bit 0: remote peers may WRITE by rkey"),
        PortDef::input("s_mr_recv", 1, MR, "access bit 1: buffers of posted receives (SEND targets) may lie in it"),
        PortDef::input("s_mr_base", REGION_BITS, MR, "first virtual address of the region"),
        PortDef::input("s_mr_len", REGION_BITS, MR, "bytes in the region"),
        PortDef::input("s_req_valid", 1, REQ, "a placement request is offered"),
        PortDef::output("s_req_ready", 1, REQ, "request taken this cycle if valid"),
        PortDef::input("s_req_tag", TAG_BITS, REQ, "opaque tag, returned with the completion"),
        PortDef::input(
            "s_req_rkey",
            KEY_BITS,
            REQ,
            "the WRITE's rkey, or with s_req_recv the lkey of the SEND's receive",
        ),
        PortDef::input("s_req_addr", VADDR_BITS, REQ, "virtual address of the first payload byte"),
        PortDef::input(
            "s_req_len",
            LEN_BITS,
            REQ,
            "payload bytes; 0 checks no key, writes nothing, has no payload beats and completes OK",
        ),
        PortDef::input(
            "s_req_recv",
            1,
            REQ,
            "a SEND's placement: the key must allow receives (bit 1), not remote writes",
        ),
        PortDef::input("s_axis_tdata", d, PAY, "payload, packed from byte lane 0"),
        PortDef::input("s_axis_tkeep", b, PAY, "bytes present; only those are written"),
        PortDef::input("s_axis_tvalid", 1, PAY, "a payload beat is offered"),
        PortDef::output("s_axis_tready", 1, PAY, "beat taken this cycle if valid"),
        PortDef::input("s_axis_tlast", 1, PAY, "last beat of the placement's payload (checked, not trusted)"),
        PortDef::output("m_axi_awid", p.id_bits, AXI, "write ID, always 0 (responses come back in order)"),
        PortDef::output("m_axi_awaddr", p.addr_bits, AXI, "burst address; only the first burst may be unaligned"),
        PortDef::output("m_axi_awlen", 8, AXI, "beats in the burst minus 1"),
        PortDef::output("m_axi_awsize", 3, AXI, "log2 of the datapath bytes"),
        PortDef::output("m_axi_awburst", 2, AXI, "INCR"),
        PortDef::output("m_axi_awvalid", 1, AXI, "write address valid"),
        PortDef::input("m_axi_awready", 1, AXI, "write address ready"),
        PortDef::output("m_axi_wdata", d, AXI, "write data"),
        PortDef::output("m_axi_wstrb", b, AXI, "byte enables: exactly the placement's bytes"),
        PortDef::output("m_axi_wlast", 1, AXI, "last beat of the burst"),
        PortDef::output("m_axi_wvalid", 1, AXI, "write data valid"),
        PortDef::input("m_axi_wready", 1, AXI, "write data ready"),
        PortDef::input("m_axi_bid", p.id_bits, AXI, "response ID; anything but 0 counts as an error"),
        PortDef::input("m_axi_bresp", 2, AXI, "response; anything but OKAY counts as an error"),
        PortDef::input("m_axi_bvalid", 1, AXI, "write response valid"),
        PortDef::output("m_axi_bready", 1, AXI, "write response ready"),
        PortDef::output("m_cpl_valid", 1, CPL, "a placement completion is offered"),
        PortDef::input("m_cpl_ready", 1, CPL, "completion taken this cycle if valid"),
        PortDef::output("m_cpl_tag", TAG_BITS, CPL, "tag of the placement's request"),
        PortDef::output("m_cpl_status", STATUS_BITS, CPL, "0 OK, 1 ACCESS (nothing written), 2 AXI error"),
        PortDef::output("stat_frame_err", 1, STAT, "one cycle per payload beat whose tlast disagrees with len"),
    ]
}

/// One MR table entry as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MrEntry {
    pub valid: bool,
    pub access: u8,
    pub key: u32,
    pub base: u64,
    pub len: u64,
}

/// The stored access bits of a table write's `remote_write` and `recv`.
pub fn access_bits(remote_write: bool, recv: bool) -> u8 {
    (remote_write as u8 * ACCESS_REMOTE_WRITE) | (recv as u8 * ACCESS_RECV)
}

/// The access bit a placement needs: receives for a SEND's (`recv`),
/// remote writes for a WRITE's.
pub fn needed_access(recv: bool) -> u8 {
    if recv {
        ACCESS_RECV
    } else {
        ACCESS_REMOTE_WRITE
    }
}

/// The bounds check of one placement against the entry its key selects:
/// the reference's `Memory::check(key, addr, len, REMOTE_WRITE)` (with
/// `recv`: `RECV`) on the table word. True: accept. An empty placement is
/// not checked here: the engine accepts it without looking at the key.
pub fn check(e: &MrEntry, key: u32, recv: bool, addr: u64, len: u64) -> bool {
    let Some(end) = addr.checked_add(len) else { return false };
    let region_end = e.base as u128 + e.len as u128;
    e.valid && e.key == key && e.access & needed_access(recv) != 0 && addr >= e.base && end as u128 <= region_end
}

/// One AXI burst of a placement: address and beats (`awlen + 1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Burst {
    pub addr: u64,
    pub beats: u32,
}

/// The bursts the engine issues for an accepted placement of `len > 0`
/// bytes at `addr`, in order: `mrnic_proto::axi::write_bursts`, the one
/// splitting rule the reference's `dma_write` vectors use too (the tests
/// check [`DmaWriteEngine::clock`] against it).
pub fn bursts(p: &DmaWriteEngineParams, addr: u64, len: u64) -> Vec<Burst> {
    mrnic_proto::axi::write_bursts(addr, len, p.bytes(), p.max_burst)
        .into_iter()
        .map(|b| Burst { addr: b.addr, beats: b.beats })
        .collect()
}

/// Inputs of one cycle, typed. Data is `BYTES` bytes, lane 0 first; keep
/// bit i is lane i.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Inputs {
    pub rst: bool,
    pub mr_valid: bool,
    pub mr_key: u32,
    pub mr_entry_valid: bool,
    pub mr_remote_write: bool,
    pub mr_recv: bool,
    pub mr_base: u64,
    pub mr_len: u64,
    pub req_valid: bool,
    pub req_tag: u16,
    pub req_rkey: u32,
    pub req_addr: u64,
    pub req_len: u16,
    pub req_recv: bool,
    pub tdata: Vec<u8>,
    pub tkeep: u128,
    pub tvalid: bool,
    pub tlast: bool,
    pub awready: bool,
    pub wready: bool,
    pub bid: u32,
    pub bresp: u8,
    pub bvalid: bool,
    pub cpl_ready: bool,
}

/// Outputs of one cycle, typed (constant outputs `awid`, `awsize`,
/// `awburst` are left out; see [`DmaWriteEngine::awsize`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Outputs {
    pub mr_ready: bool,
    pub req_ready: bool,
    pub tready: bool,
    pub awvalid: bool,
    pub awaddr: u64,
    pub awlen: u8,
    pub wvalid: bool,
    pub wdata: Vec<u8>,
    pub wstrb: u128,
    pub wlast: bool,
    pub bready: bool,
    pub cpl_valid: bool,
    pub cpl_tag: u16,
    pub cpl_status: u8,
    pub frame_err: bool,
}

/// A checked request, as it waits in the placement queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Place {
    tag: u16,
    addr: u64,
    len: u16,
    ok: bool,
}

/// A request in the table-read pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Stage {
    tag: u16,
    key: u32,
    addr: u64,
    len: u16,
    recv: bool,
}

/// A response-queue entry: a burst waiting for its B, or a placement that
/// completes without one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rsp {
    Burst { tag: u16, last: bool },
    Done { tag: u16, status: u8 },
}

/// A 2-entry queue as the RTL builds it: two slots and pointers with a
/// wrap bit. The head slot is visible even when empty, as on the RTL's
/// outputs.
#[derive(Debug, Clone)]
struct Ring2<T> {
    slots: [T; 2],
    wr: u8,
    rd: u8,
}

impl<T: Clone + Default> Ring2<T> {
    fn new() -> Ring2<T> {
        Ring2 { slots: [T::default(), T::default()], wr: 0, rd: 0 }
    }
    fn len(&self) -> usize {
        (self.wr.wrapping_sub(self.rd) & 3) as usize
    }
    fn head(&self) -> &T {
        &self.slots[(self.rd & 1) as usize]
    }
    fn push(&mut self, v: T) {
        self.slots[(self.wr & 1) as usize] = v;
        self.wr = (self.wr + 1) & 3;
    }
    fn pop(&mut self) {
        self.rd = (self.rd + 1) & 3;
    }
    fn clear(&mut self) {
        *self = Ring2::new();
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct WBeat {
    data: Vec<u8>,
    strb: u128,
    last: bool,
}

/// The cycle-accurate engine. See the module docs.
pub struct DmaWriteEngine {
    p: DmaWriteEngineParams,
    ports: Vec<PortDef>,
    /// The MR table memory.
    mem: Vec<MrEntry>,
    /// `rd[0]`: the memory's read register; `rd[1]`: the second stage at
    /// `L = 2`.
    rd: Vec<MrEntry>,
    /// Requests beside the read; `stage[L-1]` is checked.
    stage: Vec<Option<Stage>>,
    init: bool,
    init_addr: u32,
    /// Placement queue storage, written at `pq_wr`, read by the burst
    /// generator at `pq_bg` and by the payload path at `pq_wd` (pointers
    /// with one wrap bit).
    pq: Vec<Place>,
    pq_wr: u32,
    pq_bg: u32,
    pq_wd: u32,
    /// Burst generator: in the middle of a placement, next burst address
    /// and beats left.
    bg_busy: bool,
    bg_cur: u64,
    bg_rem: u32,
    /// AW output register.
    aw_valid: bool,
    aw_addr: u64,
    aw_len: u8,
    /// Response queue (`outstanding` entries).
    rsp: VecDeque<Rsp>,
    /// An error seen on an earlier burst of the placement at the head.
    acc_err: bool,
    /// Completion output queue (2 entries): (tag, status).
    cpl: Ring2<(u16, u8)>,
    /// Payload path: output beat index in the placement, beat index in the
    /// 4 KiB page, beat index in the burst.
    wd_j: u32,
    wd_pg: u32,
    wd_bc: u32,
    prev_data: Vec<u8>,
    prev_keep: u128,
    /// W output queue (2 entries).
    wq: Ring2<WBeat>,
    frame_err: bool,
    zero: Vec<u8>,
    scratch: Inputs,
}

impl DmaWriteEngine {
    /// An engine in the state `rst` leaves it in (clear sweep pending).
    pub fn new(p: DmaWriteEngineParams) -> DmaWriteEngine {
        let l = p.read_latency as usize;
        let b = p.bytes() as usize;
        DmaWriteEngine {
            ports: ports(&p),
            mem: vec![MrEntry::default(); p.mr_entries as usize],
            rd: vec![MrEntry::default(); l],
            stage: vec![None; l],
            init: true,
            init_addr: 0,
            pq: vec![Place::default(); p.place_depth() as usize],
            pq_wr: 0,
            pq_bg: 0,
            pq_wd: 0,
            bg_busy: false,
            bg_cur: 0,
            bg_rem: 0,
            aw_valid: false,
            aw_addr: 0,
            aw_len: 0,
            rsp: VecDeque::with_capacity(p.outstanding as usize),
            acc_err: false,
            cpl: Ring2::new(),
            wd_j: 0,
            wd_pg: 0,
            wd_bc: 0,
            prev_data: vec![0; b],
            prev_keep: 0,
            wq: Ring2 {
                slots: [WBeat { data: vec![0; b], ..WBeat::default() }, WBeat { data: vec![0; b], ..WBeat::default() }],
                wr: 0,
                rd: 0,
            },
            frame_err: false,
            zero: vec![0; b],
            scratch: Inputs { tdata: vec![0; b], ..Inputs::default() },
            p,
        }
    }

    pub fn params(&self) -> &DmaWriteEngineParams {
        &self.p
    }

    /// `m_axi_awsize`.
    pub fn awsize(&self) -> u8 {
        self.p.lane_bits() as u8
    }

    /// The table entry in a slot.
    pub fn entry(&self, slot: u32) -> MrEntry {
        self.mem[slot as usize]
    }

    /// True while the clear sweep runs.
    pub fn initializing(&self) -> bool {
        self.init
    }

    fn lane_mask(&self) -> u128 {
        let b = self.p.bytes();
        if b >= 128 {
            u128::MAX
        } else {
            (1u128 << b) - 1
        }
    }

    fn pq_mask(&self) -> u32 {
        2 * self.p.place_depth() - 1
    }

    fn occupancy(&self, rd: u32) -> u32 {
        self.pq_wr.wrapping_sub(rd) & self.pq_mask()
    }

    fn pq_head(&self, rd: u32) -> Option<Place> {
        (self.occupancy(rd) > 0).then(|| self.pq[(rd % self.p.place_depth()) as usize])
    }

    /// Outputs from registered state only.
    pub fn outputs(&self) -> Outputs {
        let inflight = self.stage.iter().filter(|s| s.is_some()).count() as u32;
        let depth = self.p.place_depth();
        let req_ready = !self.init
            && inflight + self.occupancy(self.pq_bg) < depth
            && inflight + self.occupancy(self.pq_wd) < depth;
        let tready = match self.pq_head(self.pq_wd) {
            Some(h) if h.len > 0 => !h.ok || (self.wd_j < self.n_in(&h) && self.wq.len() < 2),
            _ => false,
        };
        let head = self.rsp.front();
        let bready = matches!(head, Some(Rsp::Burst { .. })) && self.cpl.len() < 2;
        let w = self.wq.head();
        let (wvalid, wdata, wstrb, wlast) = (self.wq.len() > 0, w.data.clone(), w.strb, w.last);
        let &(cpl_tag, cpl_status) = self.cpl.head();
        let cpl_valid = self.cpl.len() > 0;
        Outputs {
            mr_ready: !self.init,
            req_ready,
            tready,
            awvalid: self.aw_valid,
            awaddr: self.aw_addr,
            awlen: self.aw_len,
            wvalid,
            wdata,
            wstrb,
            wlast,
            bready,
            cpl_valid,
            cpl_tag,
            cpl_status,
            frame_err: self.frame_err,
        }
    }

    fn n_in(&self, h: &Place) -> u32 {
        (h.len as u32).div_ceil(self.p.bytes())
    }

    fn n_out(&self, h: &Place) -> u32 {
        let b = self.p.bytes();
        ((h.addr % b as u64) as u32 + h.len as u32).div_ceil(b)
    }

    /// The rising clock edge with typed inputs.
    pub fn clock(&mut self, inp: &Inputs) {
        let out = self.outputs();
        let p = self.p;
        let b = p.bytes();
        let l = p.read_latency as usize;
        let depth = p.place_depth();

        // --- Table check at the last pipeline stage.
        let push_place = self.stage[l - 1].map(|s| Place {
            tag: s.tag,
            addr: s.addr,
            len: s.len,
            ok: s.len == 0 || check(&self.rd[l - 1], s.key, s.recv, s.addr, s.len as u64),
        });

        // --- Burst generator.
        let rsp_room = (self.rsp.len() as u32) < p.outstanding;
        let aw_free = !self.aw_valid || inp.awready;
        let mut rsp_push = None;
        let mut aw_load = None;
        let mut bg_pop = false;
        let (mut bg_busy, mut bg_cur, mut bg_rem) = (self.bg_busy, self.bg_cur, self.bg_rem);
        if let Some(h) = self.pq_head(self.pq_bg) {
            if !h.ok || h.len == 0 {
                if rsp_room {
                    let status = if h.ok { status::OK } else { status::ACCESS };
                    rsp_push = Some(Rsp::Done { tag: h.tag, status });
                    bg_pop = true;
                }
            } else if rsp_room && aw_free {
                let (cur, rem) = if self.bg_busy { (self.bg_cur, self.bg_rem) } else { (h.addr, self.n_out(&h)) };
                let to_page = p.page_beats() - ((cur % PAGE_BYTES) / b as u64) as u32;
                let beats = rem.min(to_page).min(p.max_burst);
                let last = beats == rem;
                aw_load = Some((cur, (beats - 1) as u8));
                rsp_push = Some(Rsp::Burst { tag: h.tag, last });
                if last {
                    bg_pop = true;
                    bg_busy = false;
                } else {
                    bg_busy = true;
                    bg_cur = (cur & !(b as u64 - 1)).wrapping_add(beats as u64 * b as u64);
                    bg_rem = rem - beats;
                }
            }
        }

        // --- Response tracker.
        let cpl_room = self.cpl.len() < 2;
        let mut rsp_pop = false;
        let mut cpl_push = None;
        let mut acc_err = self.acc_err;
        match self.rsp.front() {
            Some(&Rsp::Done { tag, status }) if cpl_room => {
                cpl_push = Some((tag, status));
                rsp_pop = true;
            }
            Some(&Rsp::Burst { tag, last }) if out.bready && inp.bvalid => {
                let err = inp.bresp != 0 || inp.bid != 0;
                if last {
                    cpl_push = Some((tag, if acc_err || err { status::AXI } else { status::OK }));
                    acc_err = false;
                } else {
                    acc_err |= err;
                }
                rsp_pop = true;
            }
            _ => {}
        }

        // --- Payload path.
        let mut wd_pop = false;
        let mut w_push = None;
        let mut frame_err = false;
        let (mut wd_j, mut wd_pg, mut wd_bc) = (self.wd_j, self.wd_pg, self.wd_bc);
        let mut take_beat = false;
        if let Some(h) = self.pq_head(self.pq_wd) {
            let n_in = self.n_in(&h);
            let fire = out.tready && inp.tvalid;
            if h.len == 0 {
                wd_pop = true;
            } else if !h.ok {
                if fire {
                    frame_err = inp.tlast != (self.wd_j == n_in - 1);
                    if self.wd_j == n_in - 1 {
                        wd_pop = true;
                        wd_j = 0;
                    } else {
                        wd_j += 1;
                    }
                }
            } else {
                let consume = self.wd_j < n_in;
                let act = if consume { fire } else { self.wq.len() < 2 };
                if act {
                    let n_out = self.n_out(&h);
                    let o = (h.addr % b as u64) as u32;
                    let j = self.wd_j;
                    let pg = if j == 0 { ((h.addr % PAGE_BYTES) / b as u64) as u32 } else { self.wd_pg };
                    let (cur_d, cur_k) = if consume { (&inp.tdata[..], inp.tkeep) } else { (&self.zero[..], 0) };
                    let mut data = vec![0u8; b as usize];
                    for (k, byte) in data.iter_mut().enumerate() {
                        let src = k + (b - o) as usize;
                        *byte = if src < b as usize { self.prev_data[src] } else { cur_d[src - b as usize] };
                    }
                    let keep =
                        if o == 0 { cur_k } else { (cur_k << o) | (self.prev_keep >> (b - o)) } & self.lane_mask();
                    let mut strb = keep;
                    if j == 0 {
                        strb &= (self.lane_mask() << o) & self.lane_mask();
                    }
                    let last = j == n_out - 1;
                    if last {
                        let end_off = (o + h.len as u32 - 1) % b + 1;
                        strb &= self.lane_mask() >> (b - end_off);
                    }
                    let wlast = last || pg == p.page_beats() - 1 || self.wd_bc == p.max_burst - 1;
                    w_push = Some(WBeat { data, strb, last: wlast });
                    if consume {
                        take_beat = true;
                        frame_err = inp.tlast != (j == n_in - 1);
                    }
                    wd_pg = (pg + 1) % p.page_beats();
                    wd_bc = if wlast { 0 } else { self.wd_bc + 1 };
                    if last {
                        wd_pop = true;
                        wd_j = 0;
                    } else {
                        wd_j = j + 1;
                    }
                }
            }
        }

        // --- Memory: registered read (old data on a same-slot write), then
        // the write port, sweep first.
        let req_fire = inp.req_valid && out.req_ready;
        if l == 2 {
            self.rd[1] = self.rd[0];
        }
        if req_fire {
            self.rd[0] = self.mem[(inp.req_rkey & (p.mr_entries - 1)) as usize];
        }
        if self.init {
            self.mem[self.init_addr as usize] = MrEntry::default();
        } else if inp.mr_valid {
            self.mem[(inp.mr_key & (p.mr_entries - 1)) as usize] = MrEntry {
                valid: inp.mr_entry_valid,
                access: access_bits(inp.mr_remote_write, inp.mr_recv),
                key: inp.mr_key,
                base: inp.mr_base,
                len: inp.mr_len,
            };
        }

        if inp.rst {
            self.reset();
            return;
        }

        // --- Registers.
        if self.init {
            if self.init_addr == p.mr_entries - 1 {
                self.init = false;
            }
            self.init_addr = (self.init_addr + 1) & (p.mr_entries - 1);
        }
        self.stage.rotate_right(1);
        self.stage[0] = req_fire.then_some(Stage {
            tag: inp.req_tag,
            key: inp.req_rkey,
            addr: inp.req_addr,
            len: inp.req_len,
            recv: inp.req_recv,
        });
        if let Some(pl) = push_place {
            self.pq[(self.pq_wr % depth) as usize] = pl;
            self.pq_wr = (self.pq_wr + 1) & self.pq_mask();
        }
        if bg_pop {
            self.pq_bg = (self.pq_bg + 1) & self.pq_mask();
        }
        if wd_pop {
            self.pq_wd = (self.pq_wd + 1) & self.pq_mask();
        }
        debug_assert!(self.occupancy(self.pq_bg) <= depth && self.occupancy(self.pq_wd) <= depth);
        (self.bg_busy, self.bg_cur, self.bg_rem) = (bg_busy, bg_cur, bg_rem);
        if self.aw_valid && inp.awready {
            self.aw_valid = false;
        }
        if let Some((a, len)) = aw_load {
            self.aw_valid = true;
            self.aw_addr = a;
            self.aw_len = len;
        }
        if rsp_pop {
            self.rsp.pop_front();
        }
        if let Some(r) = rsp_push {
            self.rsp.push_back(r);
        }
        self.acc_err = acc_err;
        if out.cpl_valid && inp.cpl_ready {
            self.cpl.pop();
        }
        if let Some(c) = cpl_push {
            self.cpl.push(c);
        }
        if out.wvalid && inp.wready {
            self.wq.pop();
        }
        if let Some(w) = w_push {
            self.wq.push(w);
        }
        if take_beat {
            self.prev_data.copy_from_slice(&inp.tdata);
            self.prev_keep = inp.tkeep & self.lane_mask();
        }
        (self.wd_j, self.wd_pg, self.wd_bc) = (wd_j, wd_pg, wd_bc);
        self.frame_err = frame_err;
    }

    /// Every register to its reset value (the table memory and its read
    /// register have none: the sweep clears the table).
    fn reset(&mut self) {
        let l = self.p.read_latency as usize;
        self.init = true;
        self.init_addr = 0;
        if l == 2 {
            self.rd[1] = MrEntry::default();
        }
        self.stage.iter_mut().for_each(|s| *s = None);
        self.pq.iter_mut().for_each(|e| *e = Place::default());
        (self.pq_wr, self.pq_bg, self.pq_wd) = (0, 0, 0);
        (self.bg_busy, self.bg_cur, self.bg_rem) = (false, 0, 0);
        (self.aw_valid, self.aw_addr, self.aw_len) = (false, 0, 0);
        self.rsp.clear();
        self.acc_err = false;
        self.cpl.clear();
        (self.wd_j, self.wd_pg, self.wd_bc) = (0, 0, 0);
        self.prev_data.fill(0);
        self.prev_keep = 0;
        for w in self.wq.slots.iter_mut() {
            w.data.fill(0);
            (w.strb, w.last) = (0, false);
        }
        (self.wq.wr, self.wq.rd) = (0, 0);
        self.frame_err = false;
    }
}

impl fmt::Debug for DmaWriteEngine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DmaWriteEngine")
            .field("p", &self.p)
            .field("init", &self.init)
            .field("stage", &self.stage)
            .field("pq", &(self.pq_wr, self.pq_bg, self.pq_wd))
            .field("bg", &(self.bg_busy, self.bg_cur, self.bg_rem))
            .field("rsp", &self.rsp)
            .field("cpl", &self.cpl)
            .field("wd", &(self.wd_j, self.wd_pg, self.wd_bc))
            .finish_non_exhaustive()
    }
}

fn bits_to_bytes(b: &Bits, out: &mut [u8]) {
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = (b.0.get(i / 8).copied().unwrap_or(0) >> (8 * (i % 8))) as u8;
    }
}

fn bits_u128(b: &Bits) -> u128 {
    b.0.first().copied().unwrap_or(0) as u128 | (b.0.get(1).copied().unwrap_or(0) as u128) << 64
}

impl DmaWriteEngine {
    fn decode(&mut self, inputs: &[Bits]) {
        let s = &mut self.scratch;
        let bit = |i: usize| inputs[i].bit(0);
        let word = |i: usize| inputs[i].as_u64();
        s.rst = bit(port::RST);
        s.mr_valid = bit(port::S_MR_VALID);
        s.mr_key = word(port::S_MR_KEY) as u32;
        s.mr_entry_valid = bit(port::S_MR_ENTRY_VALID);
        s.mr_remote_write = bit(port::S_MR_REMOTE_WRITE);
        s.mr_recv = bit(port::S_MR_RECV);
        s.mr_base = word(port::S_MR_BASE);
        s.mr_len = word(port::S_MR_LEN);
        s.req_valid = bit(port::S_REQ_VALID);
        s.req_tag = word(port::S_REQ_TAG) as u16;
        s.req_rkey = word(port::S_REQ_RKEY) as u32;
        s.req_addr = word(port::S_REQ_ADDR);
        s.req_len = word(port::S_REQ_LEN) as u16;
        s.req_recv = bit(port::S_REQ_RECV);
        bits_to_bytes(&inputs[port::S_AXIS_TDATA], &mut s.tdata);
        s.tkeep = bits_u128(&inputs[port::S_AXIS_TKEEP]);
        s.tvalid = bit(port::S_AXIS_TVALID);
        s.tlast = bit(port::S_AXIS_TLAST);
        s.awready = bit(port::M_AXI_AWREADY);
        s.wready = bit(port::M_AXI_WREADY);
        s.bid = word(port::M_AXI_BID) as u32;
        s.bresp = word(port::M_AXI_BRESP) as u8;
        s.bvalid = bit(port::M_AXI_BVALID);
        s.cpl_ready = bit(port::M_CPL_READY);
    }
}

impl Block for DmaWriteEngine {
    fn name(&self) -> &'static str {
        NAME
    }

    fn ports(&self) -> &[PortDef] {
        &self.ports
    }

    fn eval(&mut self, _inputs: &[Bits], outputs: &mut [Bits]) {
        let o = self.outputs();
        let w = |i: usize| self.ports[i].width;
        let mut set = |i: usize, v: u64| outputs[i].set_u64(w(i), v);
        set(port::S_MR_READY, o.mr_ready as u64);
        set(port::S_REQ_READY, o.req_ready as u64);
        set(port::S_AXIS_TREADY, o.tready as u64);
        set(port::M_AXI_AWID, 0);
        set(port::M_AXI_AWADDR, o.awaddr);
        set(port::M_AXI_AWLEN, o.awlen as u64);
        set(port::M_AXI_AWSIZE, self.p.lane_bits() as u64);
        set(port::M_AXI_AWBURST, 1);
        set(port::M_AXI_AWVALID, o.awvalid as u64);
        set(port::M_AXI_WLAST, o.wlast as u64);
        set(port::M_AXI_WVALID, o.wvalid as u64);
        set(port::M_AXI_BREADY, o.bready as u64);
        set(port::M_CPL_VALID, o.cpl_valid as u64);
        set(port::M_CPL_TAG, o.cpl_tag as u64);
        set(port::M_CPL_STATUS, o.cpl_status as u64);
        set(port::STAT_FRAME_ERR, o.frame_err as u64);
        let wdata = &mut outputs[port::M_AXI_WDATA];
        wdata.set_u64(w(port::M_AXI_WDATA), 0);
        for (i, &byte) in o.wdata.iter().enumerate() {
            wdata.0[i / 8] |= (byte as u64) << (8 * (i % 8));
        }
        outputs[port::M_AXI_WSTRB].set_words(w(port::M_AXI_WSTRB), &[o.wstrb as u64, (o.wstrb >> 64) as u64]);
    }

    fn tick(&mut self, inputs: &[Bits]) {
        self.decode(inputs);
        let inp = std::mem::take(&mut self.scratch);
        self.clock(&inp);
        self.scratch = inp;
    }
}
