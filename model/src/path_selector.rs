//! `path_selector`: picks the next path of a connection by smooth weighted
//! round robin (SWRR) among its eligible paths, one decision per cycle.
//!
//! # Function
//! A request names a connection and carries, for each of its `PATHS` paths,
//! an eligibility bit, an 8-bit weight and a credit-clear bit (`s_req_elig`,
//! `s_req_weight`, `s_req_clr`). The block keeps one signed credit per
//! (connection, path); the credits of the paths in `s_req_clr` restart from
//! 0, then [`swrr_pick`] decides: every eligible path adds its weight
//! (0 counts as 1) to its credit, the eligible path with the largest credit
//! wins (ties to the lowest index) and loses the sum of the eligible
//! weights. The decision leaves on `m_sel_*`; `m_sel_none` is set (and
//! `m_sel_path` is 0) when no path was eligible; credits are then left as
//! they were (after the clear).
//!
//! This is the reference's `selector::select` bit for bit (the tests run
//! both on the same inputs). The reference zeroes a path's `deficit` when the
//! path becomes SUSPECT and when it recovers to GOOD; the telemetry side
//! keeps a pending bit per path for that and raises it in `s_req_clr` on the
//! connection's next request (a credit is only ever observed by a pick, so
//! clearing it lazily at the next pick is the same decision).
//!
//! # Why eligibility and weights come with the request
//! Eligibility includes `inflight < cwnd`, which changes with every packet
//! sent and every ACK, so a copy of it inside the selector would need an
//! update per decision and per ACK, each racing the decisions on the same
//! connection. The stage before the selector reads the connection's path
//! telemetry anyway (it needs `sport`, `gen`, `next_psn` of the chosen path
//! next), so it hands over the `PATHS` eligibility bits and weights on a
//! bus of `PATHS * 10` bits (320 at 32 paths). That keeps one decision per
//! cycle for every path count, with no update port, no second table and no
//! hazard between updates and picks.
//!
//! # Credits, saturation
//! Credits are two's complement of `tables::path::DEFICIT.width` (16) bits.
//! `credit + weight` saturates at the largest credit (the comparison is on
//! the saturated values, so two saturated paths tie and the lower index
//! wins); the winner's `credit + weight - sum` saturates at the smallest.
//! With a fixed eligible set SWRR keeps every credit within the sum of the
//! weights (at most 32 * 255 = 8160), so saturation is unreachable there.
//! When eligibility changes, credits of ineligible paths are frozen; no
//! sequence found by adversarial search at 32 paths goes beyond about
//! +-8000 (see the tests), but no proof bounds it below 2^15, so saturation,
//! not wrap, is the defined behaviour: a credit never changes sign by
//! overflow, and a saturated path still wins or loses in turn.
//!
//! # Timing (read latency `L` = `hardware.table_read_latency`, 1 or 2)
//! ```text
//! cycle a       s_req handshake; credit memory read at address s_req_conn
//! cycle a+1..a+L-1   read in flight (L=2: block RAM output register)
//! cycle a+L     read data (or forwarded credits) -> SWRR pick -> credit
//!               memory written at the edge ending this cycle; result pushed
//!               into the output FIFO
//! cycle a+L+1   m_sel_valid with the result
//! ```
//! Latency: `L + 1` cycles from the request handshake to `m_sel_valid`
//! (2 in `small`, 3 in `default`). Throughput: one decision per cycle,
//! sustained, for every path count, while `m_sel_ready` is high.
//!
//! # Forwarding
//! The memory reads old data on a read-during-write to the same address, and
//! a read issued in cycle `a` cannot see the writes of the `L` picks made in
//! cycles `a..a+L-1`. The block keeps those `L` most recent writes
//! (connection and credits) in registers; the pick of cycle `a+L` takes the
//! newest one whose connection matches, else the memory's data. So
//! back-to-back requests to one connection never stall and see exactly the
//! credits the previous pick left.
//!
//! # Backpressure
//! Picks never stall: the credits are committed when the pick is made, and
//! the result waits in an output FIFO of `FIFO_DEPTH` entries (the power of 2
//! at or above `L + 2`). `s_req_ready` is high when the FIFO has room for
//! every request already in the pipeline plus one, so it depends on
//! registers only (no combinational path from `m_sel_ready`), and with
//! `m_sel_ready` held high it stays high. `m_sel_*` are the FIFO head, so
//! they hold still until the handshake, as AXI4-Stream requires.
//!
//! # Reset and table init
//! `rst` (synchronous, active high) empties the pipeline and the FIFO and
//! starts a clear sweep: one credit word per cycle is written to zero,
//! connection 0 first, for `CONNS` cycles, with `s_req_ready` low. The first
//! request is accepted in the cycle after the sweep wrote the last word.
//! A write already in the pick stage during the `rst` cycle still happens
//! (the memory has no reset); the sweep overwrites it.

use std::collections::VecDeque;
use std::fmt;

use mrnic_proto::config::{Config, MAX_PATHS_PER_CONN};
use mrnic_proto::tables::path as pt;

use crate::block::{Bits, Block, PortDef};

/// Module name, shared with the Verilog.
pub const NAME: &str = "path_selector";

/// Credit width in bits, from the path table's `deficit` field.
pub const CREDIT_BITS: u32 = pt::DEFICIT.width;
/// Weight width in bits, from the path table's `weight` field.
pub const WEIGHT_BITS: u32 = pt::WEIGHT.width;
/// Smallest credit.
pub const CREDIT_MIN: i32 = -(1 << (CREDIT_BITS - 1));
/// Largest credit.
pub const CREDIT_MAX: i32 = (1 << (CREDIT_BITS - 1)) - 1;

/// Port indices in [`ports`] order.
pub mod port {
    pub const RST: usize = 0;
    pub const S_REQ_VALID: usize = 1;
    pub const S_REQ_READY: usize = 2;
    pub const S_REQ_CONN: usize = 3;
    pub const S_REQ_ELIG: usize = 4;
    pub const S_REQ_WEIGHT: usize = 5;
    pub const S_REQ_CLR: usize = 6;
    pub const M_SEL_VALID: usize = 7;
    pub const M_SEL_READY: usize = 8;
    pub const M_SEL_CONN: usize = 9;
    pub const M_SEL_PATH: usize = 10;
    pub const M_SEL_NONE: usize = 11;
}

/// A config the path selector cannot be built for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("path_selector: {field} = {value}: {why}")]
pub struct ParamError {
    /// The config field at fault (dotted, as in the TOML).
    pub field: &'static str,
    pub value: u64,
    pub why: String,
}

/// Sizes of one path selector, derived from a [`Config`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathSelectorParams {
    /// Connections: depth of the credit memory.
    pub conns: u32,
    /// Paths per connection.
    pub paths: u32,
    /// Width of a connection index (`$clog2(CONNS)`, at least 1).
    pub conn_bits: u32,
    /// Width of a path index (`$clog2(PATHS)`, at least 1).
    pub path_bits: u32,
    /// Read latency of the credit memory in cycles (1 or 2).
    pub read_latency: u32,
}

impl PathSelectorParams {
    /// Derives the sizes from a config, refusing what the block cannot build.
    pub fn from_config(cfg: &Config) -> Result<PathSelectorParams, ParamError> {
        PathSelectorParams::new(
            cfg.transport.connections,
            cfg.transport.paths_per_conn,
            cfg.hardware.table_read_latency,
        )
    }

    /// Sizes from the three numbers that matter, checked.
    pub fn new(conns: u32, paths: u32, read_latency: u32) -> Result<PathSelectorParams, ParamError> {
        let bad = |field, value: u32, why: String| Err(ParamError { field, value: value as u64, why });
        if conns < 2 || !conns.is_power_of_two() || conns > 1 << 24 {
            return bad("transport.connections", conns, "must be a power of 2 in 2..=2^24".into());
        }
        if paths == 0 || !paths.is_power_of_two() || paths > MAX_PATHS_PER_CONN {
            return bad(
                "transport.paths_per_conn",
                paths,
                format!("must be a power of 2 in 1..={MAX_PATHS_PER_CONN} (the pick is one comparison tree per cycle)"),
            );
        }
        if !(1..=2).contains(&read_latency) {
            return bad("hardware.table_read_latency", read_latency, "the credit memory supports 1 or 2 cycles".into());
        }
        let p = PathSelectorParams {
            conns,
            paths,
            conn_bits: Config::index_bits(conns),
            path_bits: Config::index_bits(paths),
            read_latency,
        };
        // credit + weight - sum of weights must fit in CREDIT_BITS + 1 signed
        // bits: the sum of weights stays below 2^(CREDIT_BITS - 1).
        if WEIGHT_BITS + p.path_bits + 1 > CREDIT_BITS {
            return bad(
                "transport.paths_per_conn",
                paths,
                format!("{paths} weights of {WEIGHT_BITS} bits overflow the {CREDIT_BITS}-bit credit"),
            );
        }
        Ok(p)
    }

    /// Bits of one credit memory word: `PATHS * CREDIT_BITS`.
    pub fn credit_word_bits(&self) -> u32 {
        self.paths * CREDIT_BITS
    }

    /// Width of the eligible-weight sum: `WEIGHT_BITS + $clog2(PATHS)` bits
    /// (one more than needed at 1 path).
    pub fn sum_bits(&self) -> u32 {
        WEIGHT_BITS + self.path_bits
    }

    /// Output FIFO entries: the power of 2 at or above `read_latency + 2`.
    pub fn fifo_depth(&self) -> u32 {
        (self.read_latency + 2).next_power_of_two()
    }

    /// Cycles from the request handshake to `m_sel_valid`.
    pub fn latency(&self) -> u32 {
        self.read_latency + 1
    }
}

/// The ports of `path_selector`, in declaration order (see [`port`]). The
/// Verilog generator declares its module from this list.
pub fn ports(p: &PathSelectorParams) -> Vec<PortDef> {
    const RST: &str = "Clock and reset";
    const REQ: &str = "Path request";
    const SEL: &str = "Path decision";
    vec![
        PortDef::input("rst", 1, RST, "synchronous reset, active high; starts the credit clear sweep"),
        PortDef::input("s_req_valid", 1, REQ, "a request is offered"),
        PortDef::output("s_req_ready", 1, REQ, "request accepted this cycle if valid (low during the clear sweep)"),
        PortDef::input("s_req_conn", p.conn_bits, REQ, "connection index"),
        PortDef::input("s_req_elig", p.paths, REQ, "bit i: path i is eligible"),
        PortDef::input("s_req_weight", p.paths * WEIGHT_BITS, REQ, "bits 8i+7..8i: weight of path i (0 counts as 1)"),
        PortDef::input("s_req_clr", p.paths, REQ, "bit i: path i's credit restarts from 0 before this pick"),
        PortDef::output("m_sel_valid", 1, SEL, "a decision is offered"),
        PortDef::input("m_sel_ready", 1, SEL, "the decision is taken this cycle if valid"),
        PortDef::output("m_sel_conn", p.conn_bits, SEL, "connection of the request"),
        PortDef::output("m_sel_path", p.path_bits, SEL, "chosen path (0 when m_sel_none)"),
        PortDef::output("m_sel_none", 1, SEL, "no path was eligible"),
    ]
}

/// One SWRR decision: the reference's `selector::select` on credits,
/// eligibility and weights.
///
/// `credits[i]` is path i's credit (in `CREDIT_MIN..=CREDIT_MAX`), bit i of
/// `elig` its eligibility, `weights[i]` its weight, used as `max(w, 1)`.
/// Returns the winner (`None` when nothing is eligible) and the new credits:
/// for eligible paths `a_i = min(credits[i] + w_i, CREDIT_MAX)`, others keep
/// their credit; the winner is the eligible path with the largest `a_i`,
/// ties to the lowest index, and its credit becomes
/// `max(a_k - sum of eligible w_i, CREDIT_MIN)`. With nothing eligible the
/// credits are returned unchanged.
pub fn swrr_pick(credits: &[i32], elig: u32, weights: &[u8]) -> (Option<usize>, Vec<i32>) {
    let mut next = credits.to_vec();
    let winner = swrr_pick_in_place(&mut next, elig, weights);
    (winner, next)
}

/// [`swrr_pick`] on a credit slice in place; returns the winner.
pub fn swrr_pick_in_place(credits: &mut [i32], elig: u32, weights: &[u8]) -> Option<usize> {
    debug_assert_eq!(credits.len(), weights.len());
    let mut total: i32 = 0;
    let mut best: Option<(usize, i32)> = None;
    for (i, (c, &w)) in credits.iter_mut().zip(weights).enumerate() {
        if elig >> i & 1 == 1 {
            let w = w.max(1) as i32;
            *c = (*c + w).min(CREDIT_MAX);
            total += w;
            if best.is_none_or(|(_, b)| *c > b) {
                best = Some((i, *c));
            }
        }
    }
    let (k, _) = best?;
    credits[k] = (credits[k] - total).max(CREDIT_MIN);
    Some(k)
}

/// Inputs of one cycle, typed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Inputs {
    pub rst: bool,
    pub req_valid: bool,
    pub req_conn: u32,
    /// Bit i: path i eligible.
    pub req_elig: u32,
    /// One weight per path.
    pub req_weight: Vec<u8>,
    /// Bit i: path i's credit restarts from 0.
    pub req_clr: u32,
    pub sel_ready: bool,
}

/// Outputs of one cycle, typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Outputs {
    pub req_ready: bool,
    pub sel_valid: bool,
    pub sel_conn: u32,
    pub sel_path: u32,
    pub sel_none: bool,
}

/// A decision, as it waits in the output FIFO.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub conn: u32,
    /// `None`: no path was eligible.
    pub path: Option<u32>,
}

#[derive(Debug, Clone)]
struct Req {
    conn: u32,
    elig: u32,
    weight: Vec<u8>,
    clr: u32,
}

/// The cycle-accurate path selector. See the module docs.
pub struct PathSelector {
    p: PathSelectorParams,
    ports: Vec<PortDef>,
    /// Credit memory, `conns * paths` credits, connection-major.
    mem: Vec<i32>,
    /// `rd[0]`: read data register (one cycle after the address); `rd[1]`:
    /// the block RAM output register when `L = 2`.
    rd: Vec<Vec<i32>>,
    /// Requests in the read pipeline; `stage[L-1]` is in the pick stage.
    stage: Vec<Option<Req>>,
    /// The `L` most recent credit writes of the pick stage, newest first.
    hist: Vec<Option<(u32, Vec<i32>)>>,
    fifo: VecDeque<Decision>,
    init: bool,
    init_addr: u32,
    // Scratch for the typed path of the Block interface.
    scratch: Inputs,
    /// Buffers of the credit write and the request weights that left the
    /// pipeline, reused by the next ones (no allocation per request).
    spare_credits: Vec<i32>,
    spare_weight: Vec<u8>,
}

impl PathSelector {
    /// A selector in the state `rst` leaves it in (clear sweep pending).
    pub fn new(p: PathSelectorParams) -> PathSelector {
        let l = p.read_latency as usize;
        let paths = p.paths as usize;
        PathSelector {
            ports: ports(&p),
            mem: vec![0; p.conns as usize * paths],
            rd: vec![vec![0; paths]; l],
            stage: vec![None; l],
            hist: vec![None; l],
            fifo: VecDeque::with_capacity(p.fifo_depth() as usize),
            init: true,
            init_addr: 0,
            scratch: Inputs { req_weight: vec![0; paths], ..Inputs::default() },
            spare_credits: Vec::with_capacity(paths),
            spare_weight: Vec::with_capacity(paths),
            p,
        }
    }

    pub fn params(&self) -> &PathSelectorParams {
        &self.p
    }

    /// Credits of a connection as stored in memory (not including writes
    /// still held for forwarding: those are in memory too, the forwarding
    /// only hides the memory's read latency).
    pub fn credits(&self, conn: u32) -> &[i32] {
        let n = self.p.paths as usize;
        &self.mem[conn as usize * n..(conn as usize + 1) * n]
    }

    /// True while the clear sweep runs.
    pub fn initializing(&self) -> bool {
        self.init
    }

    fn inflight(&self) -> usize {
        self.stage.iter().filter(|s| s.is_some()).count()
    }

    /// Outputs from registered state (this block has no combinational path
    /// from an input to an output).
    pub fn outputs(&self) -> Outputs {
        let req_ready = !self.init && self.fifo.len() + self.inflight() < self.p.fifo_depth() as usize;
        match self.fifo.front() {
            Some(d) => Outputs {
                req_ready,
                sel_valid: true,
                sel_conn: d.conn,
                sel_path: d.path.unwrap_or(0),
                sel_none: d.path.is_none(),
            },
            None => Outputs { req_ready, ..Outputs::default() },
        }
    }

    /// The rising clock edge with typed inputs.
    pub fn clock(&mut self, inp: &Inputs) {
        let out = self.outputs();
        let paths = self.p.paths as usize;
        let l = self.p.read_latency as usize;

        // Pick stage (combinational in this cycle, committed at the edge).
        let mut write: Option<(u32, Vec<i32>)> = None;
        let mut push: Option<Decision> = None;
        if let Some(req) = &self.stage[l - 1] {
            let fwd = self.hist.iter().flatten().find(|(c, _)| *c == req.conn);
            let mut credits = std::mem::take(&mut self.spare_credits);
            credits.clear();
            credits.extend_from_slice(match fwd {
                Some((_, c)) => c,
                None => &self.rd[l - 1],
            });
            for (i, c) in credits.iter_mut().enumerate() {
                if req.clr >> i & 1 == 1 {
                    *c = 0;
                }
            }
            let path = swrr_pick_in_place(&mut credits, req.elig, &req.weight).map(|k| k as u32);
            push = Some(Decision { conn: req.conn, path });
            write = Some((req.conn, credits));
        }

        // Memory: registered read (old data on a same-address write), then
        // the write port, sweep first.
        let fire = inp.req_valid && out.req_ready;
        if l == 2 {
            let (first, second) = self.rd.split_at_mut(1);
            second[0].copy_from_slice(&first[0]);
        }
        if fire {
            assert_eq!(inp.req_weight.len(), paths, "one weight per path");
            assert!(inp.req_conn < self.p.conns, "connection {} out of range", inp.req_conn);
            let base = inp.req_conn as usize * paths;
            self.rd[0].copy_from_slice(&self.mem[base..base + paths]);
        }
        if self.init {
            let base = self.init_addr as usize * paths;
            self.mem[base..base + paths].fill(0);
        } else if let Some((conn, credits)) = &write {
            let base = *conn as usize * paths;
            self.mem[base..base + paths].copy_from_slice(credits);
        }

        if inp.rst {
            self.stage.iter_mut().for_each(|s| *s = None);
            self.hist.iter_mut().for_each(|h| *h = None);
            self.fifo.clear();
            self.init = true;
            self.init_addr = 0;
            return;
        }

        // Registers.
        if self.init {
            if self.init_addr == self.p.conns - 1 {
                self.init = false;
            }
            self.init_addr = self.init_addr.wrapping_add(1) & (self.p.conns - 1);
        }
        if let Some((_, v)) = self.hist[l - 1].take() {
            self.spare_credits = v;
        }
        self.hist.rotate_right(1);
        self.hist[0] = write;
        if out.sel_valid && inp.sel_ready {
            self.fifo.pop_front();
        }
        if let Some(d) = push {
            self.fifo.push_back(d);
        }
        debug_assert!(self.fifo.len() <= self.p.fifo_depth() as usize, "output FIFO overflow");
        if let Some(r) = self.stage[l - 1].take() {
            self.spare_weight = r.weight;
        }
        self.stage.rotate_right(1);
        self.stage[0] = fire.then(|| {
            let mut weight = std::mem::take(&mut self.spare_weight);
            weight.clear();
            weight.extend_from_slice(&inp.req_weight);
            Req {
                conn: inp.req_conn,
                elig: inp.req_elig & mask(self.p.paths),
                weight,
                clr: inp.req_clr & mask(self.p.paths),
            }
        });
    }
}

fn mask(bits: u32) -> u32 {
    if bits >= 32 {
        u32::MAX
    } else {
        (1 << bits) - 1
    }
}

impl fmt::Debug for PathSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PathSelector")
            .field("p", &self.p)
            .field("init", &self.init)
            .field("init_addr", &self.init_addr)
            .field("stage", &self.stage)
            .field("fifo", &self.fifo)
            .finish_non_exhaustive()
    }
}

impl PathSelector {
    fn decode(&mut self, inputs: &[Bits]) {
        let s = &mut self.scratch;
        s.rst = inputs[port::RST].bit(0);
        s.req_valid = inputs[port::S_REQ_VALID].bit(0);
        s.req_conn = inputs[port::S_REQ_CONN].as_u64() as u32 & mask(self.p.conn_bits);
        s.req_elig = inputs[port::S_REQ_ELIG].as_u64() as u32 & mask(self.p.paths);
        let w = &inputs[port::S_REQ_WEIGHT];
        for (i, slot) in s.req_weight.iter_mut().enumerate() {
            let bit = i * WEIGHT_BITS as usize;
            *slot = (w.0.get(bit / 64).copied().unwrap_or(0) >> (bit % 64)) as u8;
        }
        s.req_clr = inputs[port::S_REQ_CLR].as_u64() as u32 & mask(self.p.paths);
        s.sel_ready = inputs[port::M_SEL_READY].bit(0);
    }
}

impl Block for PathSelector {
    fn name(&self) -> &'static str {
        NAME
    }

    fn ports(&self) -> &[PortDef] {
        &self.ports
    }

    fn eval(&mut self, _inputs: &[Bits], outputs: &mut [Bits]) {
        let o = self.outputs();
        let p = &self.ports;
        outputs[port::S_REQ_READY].set_u64(p[port::S_REQ_READY].width, o.req_ready as u64);
        outputs[port::M_SEL_VALID].set_u64(p[port::M_SEL_VALID].width, o.sel_valid as u64);
        outputs[port::M_SEL_CONN].set_u64(p[port::M_SEL_CONN].width, o.sel_conn as u64);
        outputs[port::M_SEL_PATH].set_u64(p[port::M_SEL_PATH].width, o.sel_path as u64);
        outputs[port::M_SEL_NONE].set_u64(p[port::M_SEL_NONE].width, o.sel_none as u64);
    }

    fn tick(&mut self, inputs: &[Bits]) {
        self.decode(inputs);
        let inp = std::mem::take(&mut self.scratch);
        self.clock(&inp);
        self.scratch = inp;
    }
}
