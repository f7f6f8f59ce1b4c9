//! The model `TxEngine` wired as its own tests wire it (path_telemetry,
//! path_selector, a host memory with random AR readiness, R gaps and a
//! range whose reads fail, backpressure on `m_axis` and `m_cqe`), one
//! clock at a time, for the trace-driven replays of the engine's clocked
//! units (`tx_engine_output.rs`, `tx_engine_walk.rs`,
//! `tx_engine_post.rs`): each test turns on the tap of its unit and
//! records the unit's ports from the inputs and outputs a clock returns.
//! A peer ([`Peer`]) takes the frames, SACKs the data packets and answers
//! the PROBEs (`tx_rig_peer.rs` checks it against the model).

// Each test uses part of it, as with `common`.
#![allow(dead_code)]

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};

use crate::common::{have, iverilog_compile, synth_full, verilator_lint, Rng, Scratch};
use mrnic_hdl::{Header, Module};
use mrnic_model::block::{port_index, Bits, Block, Dir, PortDef};
use mrnic_model::path_selector::{self as ps, PathSelector, PathSelectorParams};
use mrnic_model::path_telemetry::{self as tel, PathTelemetry, PathTelemetryParams};
use mrnic_model::tx_engine::*;
use mrnic_proto::packet::decode_frame;
use mrnic_proto::{Config, Header as Hdr};

pub const SRC_MAC: u64 = 0x02_00_00_00_00_01;
pub const SRC_IP: u32 = 0x0a00_0001;
pub const UDP_PORT: u16 = 4797;
pub const MEM_BASE: u64 = 0x10_0000;
pub const MEM_LEN: usize = 0x4_0000;
/// Host memory whose reads answer SLVERR.
pub const BAD: (u64, u64) = (MEM_BASE + 0x3_0000, MEM_BASE + 0x3_8000);
/// The peer's connection id of local connection `c`: the id names it.
pub const REMOTE_ID: u32 = 0xab_0000;

/// Bits of `bytes`, byte 0 in bits 7..0.
pub fn le_bits(width: u32, bytes: &[u8]) -> Bits {
    let mut b = Bits::zero(width);
    for (i, &x) in bytes.iter().enumerate() {
        b.0[i / 8] |= u64::from(x) << (8 * (i % 8));
    }
    b
}

/// Bits of `bytes` padded with zeros to `width / 8`, byte 0 in the top bits.
pub fn be_bits(width: u32, bytes: &[u8]) -> Bits {
    let mut v = bytes.to_vec();
    v.resize(width as usize / 8, 0);
    v.reverse();
    le_bits(width, &v)
}

/// Bits `at .. at + w` of `b` set to `v`.
pub fn put_field(b: &mut Bits, at: u32, w: u32, v: u64) {
    for i in 0..w {
        let (k, j) = (((at + i) / 64) as usize, (at + i) % 64);
        b.0[k] = b.0[k] & !(1 << j) | ((v >> i) & 1) << j;
    }
}

/// Random bits of `width`.
pub fn junk(rng: &mut Rng, width: u32) -> Bits {
    let mut b = Bits::zero(width);
    for x in b.0.iter_mut() {
        *x = rng.next_u64();
    }
    b.truncate(width);
    b
}

/// The low `bits` bits set.
pub fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    }
}

/// One row of a unit's ports (`defs`): `values` by name (cut to their
/// port's width), random bits on the ports `junked`, 0 elsewhere.
pub fn port_row(rng: &mut Rng, defs: &[PortDef], junked: &[&str], values: Vec<(&str, u64)>) -> Vec<Bits> {
    let mut v: Vec<Bits> = defs.iter().map(|d| Bits::zero(d.width)).collect();
    for n in junked {
        let i = port_index(defs, n).unwrap_or_else(|| panic!("no port {n}"));
        v[i] = junk(rng, defs[i].width);
    }
    for (n, x) in values {
        let i = port_index(defs, n).unwrap_or_else(|| panic!("no port {n}"));
        v[i] = Bits::from_u64(defs[i].width, x & mask(defs[i].width));
    }
    v
}

/// The ports `{prefix}{field}` of `defs` for each of `fields`, their
/// names borrowed from `defs`.
pub fn named<'a>(defs: &'a [PortDef], prefix: &str, fields: &[&str]) -> Vec<&'a str> {
    fields
        .iter()
        .map(|f| {
            let n = format!("{prefix}{f}");
            let i = port_index(defs, &n).unwrap_or_else(|| panic!("no port {n}"));
            defs[i].name.as_str()
        })
        .collect()
}

/// A work request's field by its port suffix (`post::REQ`).
pub fn req_field(w: &WorkReq, f: &str) -> u64 {
    match f {
        "conn" => u64::from(w.conn),
        "stream" => u64::from(w.stream),
        "op" => u64::from(w.op),
        "wr_id" => w.wr_id,
        "laddr" => w.laddr,
        "len" => u64::from(w.len),
        "raddr" => w.raddr,
        "rkey" => u64::from(w.rkey),
        "imm" => u64::from(w.imm),
        _ => panic!("no request field {f}"),
    }
}

/// `w`'s `fields` on the ports `{prefix}{field}` of `defs`.
pub fn req_ports<'a>(defs: &'a [PortDef], prefix: &str, fields: &[&str], w: &WorkReq) -> Vec<(&'a str, u64)> {
    named(defs, prefix, fields).into_iter().zip(fields).map(|(n, f)| (n, req_field(w, f))).collect()
}

/// Percentages of cycles held low / idle.
#[derive(Clone, Copy, Default)]
pub struct Pressure {
    pub axis: u64,
    pub ar: u64,
    pub r_gap: u64,
    pub cqe: u64,
}

/// The engine and its neighbours, with the queues of what is offered to it.
pub struct Engine {
    pub cfg: Config,
    pub tx: TxEngine,
    pub pt: PathTelemetry,
    pub ps: PathSelector,
    pub mem: Vec<u8>,
    pub bursts: VecDeque<(u64, u32)>,
    pub opens: VecDeque<Open>,
    pub wrs: VecDeque<WorkReq>,
    pub sacks: VecDeque<SackIn>,
    pub nacks: VecDeque<NackIn>,
    pub csacks: VecDeque<SackOut>,
    pub cnacks: VecDeque<NackOut>,
    pub press: Pressure,
    /// The NIC ports' levels (`port_ready`, a bit per plane).
    pub port_ready: u32,
    /// Percent of cycles the telemetry read's request and answer, and the
    /// path request and its answer, are held back (each handshake held
    /// on both sides, so the neighbours see what the engine sees).
    pub trd_hold: u64,
    pub psel_hold: u64,
    /// The traffic's and the fabric's draws.
    pub rng: Rng,
    /// The replays' filler (values a unit must ignore): its own stream, so
    /// that a unit gaining a port does not change the traffic it is fed.
    pub junk: Rng,
    pub cycle: u64,
}

impl Engine {
    pub fn new(cfg: Config, seed: u64) -> Engine {
        let p = TxEngineParams::from_config(&cfg).unwrap();
        let tx = TxEngine::new(p);
        let pt = PathTelemetry::new(PathTelemetryParams::from_config(&cfg).unwrap());
        let ps = PathSelector::new(PathSelectorParams::from_config(&cfg).unwrap());
        let mut rng = Rng::new(seed);
        let mem = (0..MEM_LEN).map(|_| rng.below(256) as u8).collect();
        Engine {
            cfg,
            tx,
            pt,
            ps,
            mem,
            bursts: VecDeque::new(),
            opens: VecDeque::new(),
            wrs: VecDeque::new(),
            sacks: VecDeque::new(),
            nacks: VecDeque::new(),
            csacks: VecDeque::new(),
            cnacks: VecDeque::new(),
            press: Pressure::default(),
            port_ready: u32::MAX,
            trd_hold: 0,
            psel_hold: 0,
            rng,
            junk: Rng::new(seed ^ 0x6a75_6e6b),
            cycle: 0,
        }
    }

    /// The clear sweeps are running.
    pub fn initializing(&self) -> bool {
        self.tx.initializing() || self.pt.initializing() || self.ps.initializing()
    }

    /// Setup records queued, held or running: a driver waits for this to
    /// end before it takes its connections as open.
    pub fn opening(&self) -> bool {
        !self.opens.is_empty() || self.tx.opening()
    }

    /// Sets up connection `conn` with `npaths` paths from `psn`.
    pub fn open(&mut self, conn: u32, npaths: u32, psn: u32) {
        for p in 0..npaths {
            self.opens.push_back(Open {
                conn,
                path: p,
                npaths,
                remote_id: REMOTE_ID | conn,
                dst_mac: 0x02_00_00_00_10_00 | u64::from(conn),
                dst_ip: 0x0a00_1000 | conn,
                sport: 49152 + 17 * p as u16 + conn as u16,
                plane: (p % self.cfg.transport.planes) as u8,
                psn,
            });
        }
    }

    /// Runs the clear sweep that follows a reset, `peer` taking the
    /// frames (there are none); a replay records none of it (`default`'s
    /// sweep is millions of cycles, and nothing moves in it).
    pub fn sweep(&mut self, peer: &mut Peer) {
        while self.initializing() {
            let (inp, ot) = self.clock(false);
            peer.beat(self, &inp, &ot);
        }
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.rng.below(100) < percent
    }

    /// [`Self::chance`], drawing nothing at 0 %: a run without the
    /// handshake holds keeps the random stream it had before they existed.
    fn held(&mut self, percent: u64) -> bool {
        percent > 0 && self.chance(percent)
    }

    /// One clock of the engine and its neighbours: the engine's inputs
    /// and what it showed on its outputs before the edge.
    pub fn clock(&mut self, rst: bool) -> (Inputs, Outputs) {
        let ot = self.tx.outputs();
        let opt = self.pt.outputs();
        let ops = self.ps.outputs();
        let ts = (self.cycle / self.cfg.cycles_per_ts()) as u32;
        let axis_ready = !self.chance(self.press.axis);
        let ar_ready = !self.chance(self.press.ar);
        let cqe_ready = !self.chance(self.press.cqe);
        let bb = u64::from(self.cfg.hardware.datapath_bits / 8);
        let gap = self.chance(self.press.r_gap);
        let (trd_req, trd_ans) = (!self.held(self.trd_hold), !self.held(self.trd_hold));
        let (sel_req, sel_ans) = (!self.held(self.psel_hold), !self.held(self.psel_hold));
        let r = match self.bursts.front() {
            Some(&(addr, left)) if !gap => {
                let off = (addr - MEM_BASE) as usize;
                let data = self.mem[off..off + bb as usize].to_vec();
                let resp = u8::from(addr >= BAD.0 && addr < BAD.1) * 2;
                Some((RBeat { data, resp, last: left == 1 }, addr, left))
            }
            _ => None,
        };
        let inp = Inputs {
            rst,
            ts_now: ts,
            src_mac: SRC_MAC,
            src_ip: SRC_IP,
            udp_port: UDP_PORT,
            open: self.opens.front().copied(),
            wr: self.wrs.front().copied(),
            ar_ready,
            r: r.as_ref().map(|(b, _, _)| b.clone()),
            trd_ready: opt.rd_ready && trd_req,
            trd: opt.rd.as_ref().filter(|_| trd_ans).map(|d| TelView { conn: d.conn, paths: d.paths.clone() }),
            evt_ready: opt.evt_ready,
            upd: opt.upd,
            rto: opt.rto,
            psel_ready: ops.req_ready && sel_req,
            psel: (ops.sel_valid && sel_ans).then(|| (ops.sel_conn, (!ops.sel_none).then_some(ops.sel_path))),
            sack: self.sacks.front().copied(),
            nack: self.nacks.front().copied(),
            csack: self.csacks.front().copied(),
            cnack: self.cnacks.front().copied(),
            axis_ready,
            // Every port ready unless a replay says otherwise (the
            // scheduler's): the port rule then changes nothing.
            port_ready: self.port_ready,
            cqe_ready,
        };
        let pin = tel::Inputs {
            rst,
            ts_now: ts,
            evt_valid: ot.evt.is_some(),
            evt: ot.evt.unwrap_or_default(),
            upd_ready: ot.upd_ready,
            rto_ready: ot.rto_ready,
            rd_valid: ot.trd.is_some() && trd_req,
            rd_conn: ot.trd.unwrap_or(0),
            rd_resp_ready: ot.trd_resp_ready && trd_ans,
        };
        let q = ot.psel.clone().unwrap_or_default();
        let sin = ps::Inputs {
            rst,
            req_valid: ot.psel.is_some() && sel_req,
            req_conn: q.conn,
            req_elig: q.elig,
            req_weight: if q.weight.is_empty() {
                vec![0; self.cfg.transport.paths_per_conn as usize]
            } else {
                q.weight
            },
            req_clr: q.clr,
            sel_ready: ot.psel_resp_ready && sel_ans,
        };
        if ot.open_ready && inp.open.is_some() {
            self.opens.pop_front();
        }
        if ot.wr_ready && inp.wr.is_some() {
            self.wrs.pop_front();
        }
        if ot.sack_ready && inp.sack.is_some() {
            self.sacks.pop_front();
        }
        if ot.nack_ready && inp.nack.is_some() {
            self.nacks.pop_front();
        }
        if ot.csack_ready && inp.csack.is_some() {
            self.csacks.pop_front();
        }
        if ot.cnack_ready && inp.cnack.is_some() {
            self.cnacks.pop_front();
        }
        if let (Some(ar), true) = (ot.ar, ar_ready) {
            self.bursts.push_back((ar.addr, ar.len as u32 + 1));
        }
        if let (Some((_, addr, left)), true) = (&r, ot.r_ready) {
            self.bursts.pop_front();
            if *left > 1 {
                self.bursts.push_front((addr + bb, left - 1));
            }
        }
        self.tx.clock(&inp);
        self.pt.clock(&pin);
        self.ps.clock(&sin);
        self.cycle += 1;
        (inp, ot)
    }
}

/// A work request reading host memory at `off`.
pub fn wr(conn: u32, stream: u32, op: u8, wr_id: u64, off: u64, len: u32) -> WorkReq {
    WorkReq {
        conn,
        stream,
        op,
        wr_id,
        laddr: MEM_BASE + off,
        len,
        raddr: 0x7000_0000 + off * 3,
        rkey: 0x1234_5600 | u32::from(op),
        imm: 0xdead_0000 | wr_id as u32,
    }
}

/// `m` checked and printed into `dir` as `<module>.v`, its header naming
/// the unit (`what`) and the test that wrote it.
/// `cfg` with the short timers a replay runs (`rto_min_us`, `rto_max`
/// four times it, DEAD paths PROBEd every `dead_probe_us`), so timeouts
/// and PROBEs land within a few thousand cycles.
pub fn short_timers(cfg: &Config, rto_min_us: u32, dead_probe_us: u32) -> Config {
    let mut cfg = cfg.clone();
    cfg.timers.rto_min_us = rto_min_us;
    cfg.timers.rto_max_us = 4 * rto_min_us;
    cfg.timers.dead_probe_interval_us = dead_probe_us;
    cfg
}

pub fn write_unit(dir: &Scratch, m: &Module, what: &str, test: &str) -> PathBuf {
    m.check().unwrap_or_else(|e| panic!("{}: {e}", m.name()));
    let text = m.to_verilog(&Header::new(what, &format!("cargo test -p mrnic-hdl --test {test}")));
    dir.file(&format!("{}.v", m.name()), &text.unwrap_or_else(|e| panic!("{}: {e}", m.name())))
}

/// A unit's recorded ports, replayed as a block: each cycle's recorded
/// outputs, whatever the inputs.
struct Trace {
    name: &'static str,
    defs: Vec<PortDef>,
    rows: Vec<Vec<Bits>>,
    at: usize,
}

impl Block for Trace {
    fn name(&self) -> &'static str {
        self.name
    }

    fn ports(&self) -> &[PortDef] {
        &self.defs
    }

    fn eval(&mut self, _inputs: &[Bits], outputs: &mut [Bits]) {
        for (i, d) in self.defs.iter().enumerate() {
            if d.dir == Dir::Out {
                outputs[i] = self.rows[self.at][i].clone();
            }
        }
    }

    fn tick(&mut self, _inputs: &[Bits]) {
        self.at += 1;
    }
}

/// Replays `rows` (every port of `defs`, one row a cycle, as the model's
/// tap recorded them) into module `name` of `rtl` under Icarus: each
/// cycle's inputs driven, every output compared; `has_clk` false for a
/// combinational unit.
pub fn replay_rows(dir: &Scratch, rtl: &Path, name: &'static str, defs: &[PortDef], rows: &[Vec<Bits>], has_clk: bool) {
    let mut dut = Trace { name, defs: defs.to_vec(), rows: rows.to_vec(), at: 0 };
    crate::common::replay_clocked(dir, rtl, &mut dut, &[], rows.len() as u32, has_clk, |cycle, ins, _| {
        for (i, d) in defs.iter().enumerate() {
            if d.dir == Dir::In {
                ins[i] = rows[cycle as usize][i].clone();
            }
        }
    });
}

/// Every bin of `want` was hit in the run of config `cfg`.
pub fn assert_covered(cfg: &str, seen: &HashMap<&'static str, u32>, want: &[&str]) {
    eprintln!("{cfg}: {seen:?}");
    for what in want {
        assert!(seen.get(what).copied().unwrap_or(0) > 0, "{cfg}: the run has no {what}: {seen:?}");
    }
}

/// Latch cells, generic and Xilinx.
pub fn tools_check(m: &Module, rtl: &Path, more: &str) -> bool {
    if have("verilator", "--version") {
        verilator_lint(rtl, m.name());
    }
    if have("iverilog", "-V") {
        iverilog_compile(rtl);
    }
    if !have("yosys", "-V") {
        return false;
    }
    crate::common::yosys_proc_check(&[rtl.to_path_buf()], m.name(), more);
    true
}

/// `synth_xilinx` of a unit with no latch (`common::yosys_synthesizes_files`),
/// printing its LUT, flip-flop and block RAM cells; returns Yosys' `stat`.
pub fn synth_report(dir: &Scratch, m: &Module, rtl: &Path, config: &str) -> String {
    let stat = crate::common::yosys_synthesizes_files(dir, m.name(), &[rtl.to_path_buf()]);
    let cells: Vec<&str> =
        stat.lines().filter(|l| l.contains("LUT") || l.contains("RAMB") || l.contains("FD")).map(str::trim).collect();
    eprintln!("{} {config} synth_xilinx: {}", m.name(), cells.join("; "));
    stat
}

/// [`tools_check`] on the unit `write` prints, for both configs, in
/// scratch folders named after `tag`; with [`synth_full`] also
/// [`synth_report`].
pub fn tools_check_configs(tag: &str, write: fn(&Scratch, &TxEngineParams) -> (Module, PathBuf)) {
    crate::common::per_config(crate::common::configs(), |cfg| {
        let p = TxEngineParams::from_config(cfg).unwrap();
        let dir = Scratch::new(&format!("{tag}-tools-{}", cfg.name));
        let (m, rtl) = write(&dir, &p);
        if tools_check(&m, &rtl, "") && synth_full() {
            synth_report(&dir, &m, &rtl, &cfg.name);
        }
    });
}

/// One config's run of a unit's traffic: the unit's ports, one row of
/// every port's value a cycle, and the coverage bins it hit.
pub struct Run {
    pub defs: Vec<PortDef>,
    pub rows: Vec<Vec<Bits>>,
    pub seen: HashMap<&'static str, u32>,
}

/// A unit's rows filled in out of order: a handler's step puts each port
/// at the row (cycle) the unit's timing places it, which may be ahead of
/// the clock; at the end every port not put is junk (an input) or 0 (an
/// output, or an input named in `zero`).
pub struct Rows {
    pub defs: Vec<PortDef>,
    rows: Vec<Vec<(String, Bits)>>,
}

impl Rows {
    pub fn new(defs: Vec<PortDef>) -> Rows {
        Rows { defs, rows: Vec::new() }
    }

    /// Rows up to `at` added (empty: a cycle with nothing placed).
    pub fn reach(&mut self, at: usize) {
        while self.rows.len() <= at {
            self.rows.push(Vec::new());
        }
    }

    /// Rows so far.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Port `name` of row `at` set to `v` (rows up to `at` added); a port
    /// given twice in a row is two steps' work overlapping, which the
    /// model's busy count forbids.
    pub fn put_bits(&mut self, at: usize, name: &str, v: Bits) {
        self.reach(at);
        let row = &mut self.rows[at];
        assert!(row.iter().all(|(n, _)| n != name), "row {at}: {name} given twice (steps overlap)");
        row.push((name.to_string(), v));
    }

    /// [`Self::put_bits`] of `v`'s low bits.
    pub fn put(&mut self, at: usize, name: &str, v: u64) {
        let i = port_index(&self.defs, name).unwrap_or_else(|| panic!("no port {name}"));
        let w = self.defs[i].width;
        self.put_bits(at, name, Bits::from_u64(w, v & mask(w)));
    }

    /// The rows as port values, with the bins `seen`.
    pub fn finish(self, rng: &mut Rng, zero: &[&str], seen: HashMap<&'static str, u32>) -> Run {
        let defs = self.defs;
        let mut rows = Vec::with_capacity(self.rows.len());
        for r in self.rows {
            let mut v: Vec<Bits> = defs
                .iter()
                .map(|d| match d.dir {
                    Dir::In if !zero.contains(&d.name.as_str()) => junk(rng, d.width),
                    _ => Bits::zero(d.width),
                })
                .collect();
            for (n, b) in r {
                v[port_index(&defs, &n).expect("placed by name")] = b;
            }
            rows.push(v);
        }
        Run { defs, rows, seen }
    }
}

/// Output `next` of each row made output `of` of the row after (a port
/// that shows a register's value after the edge), the last row dropped:
/// the replay compares what the model's next cycle shows. Rows must be
/// consecutive cycles but for a gap where `of` does not change (the
/// clear sweep after a reset row).
pub fn next_of(r: &mut Run, of: &str, next: &str) {
    let (a, b) = (
        port_index(&r.defs, of).unwrap_or_else(|| panic!("no port {of}")),
        port_index(&r.defs, next).unwrap_or_else(|| panic!("no port {next}")),
    );
    for t in 0..r.rows.len().saturating_sub(1) {
        r.rows[t][b] = r.rows[t + 1][a].clone();
    }
    r.rows.pop();
}

/// `tx_timer`'s rows (`tx_engine_timer.rs`, `tx_engine_ack.rs`), filled
/// each cycle from the model's [`TimerTap`] after a reset row: the queues'
/// pushes and state, a step with its reads, and the answer of the step
/// `L` cycles back with its writes; with the coverage bins reached.
pub struct TimerRows {
    pub rows: Rows,
    pub seen: HashMap<&'static str, u32>,
    /// The row of the step whose reads are in flight.
    step: Option<usize>,
    p: TxEngineParams,
}

impl TimerRows {
    pub fn new(p: &TxEngineParams) -> TimerRows {
        let mut rows = Rows::new(mrnic_hdl::tx_engine::timer::ports(p));
        rows.put(0, "rst", 1);
        TimerRows { rows, seen: HashMap::new(), step: None, p: p.clone() }
    }

    /// The rows as port values: 0 on the unit's valid inputs outside the
    /// cycles that set them, junk on every other input not placed.
    pub fn finish(self, rng: &mut Rng) -> Run {
        let zero = ["rst", "s_rnr_valid", "s_wp_valid", "s_wp_refused", "s_go_rnr", "s_go_wp", "s_go_tail"];
        self.rows.finish(rng, &zero, self.seen)
    }

    /// The bins reached, sorted, for a run's log line.
    pub fn bins(&self) -> String {
        let mut v: Vec<_> = self.seen.iter().map(|(k, n)| format!("{k} {n}")).collect();
        v.sort();
        v.join(", ")
    }

    fn tcount(&mut self, what: &'static str) {
        *self.seen.entry(what).or_default() += 1;
    }

    /// `tx_timer`'s row of this cycle: the queues' pushes and state as
    /// the model's were at the start of the cycle, a step with its reads,
    /// and the answer of the step `L` cycles back with its writes.
    pub fn cycle(&mut self, t: &TimerTap) {
        let p = self.p.clone();
        let at = self.rows.len();
        let put = |r: &mut Rows, v: Vec<(&str, u64)>| {
            for (n, x) in v {
                r.put(at, n, x);
            }
        };
        put(
            &mut self.rows,
            vec![
                ("rst", 0),
                ("m_rnr_full", u64::from(t.rnr_len >= p.rnr_depth as usize)),
                ("m_rnr_head_valid", u64::from(t.rnr_head.is_some())),
                ("m_rnr_head_until", u64::from(t.rnr_head.map_or(0, |h| h.3))),
                ("m_wp_full", u64::from(t.wp_len >= p.wprobe_depth as usize)),
                ("m_wp_head_valid", u64::from(t.wp_head.is_some())),
                ("m_wp_head_at", u64::from(t.wp_head.map_or(0, |h| h.1))),
                ("m_unstall_all", u64::from(t.unstall_all)),
            ],
        );
        if t.rnr_len > 1 {
            self.tcount("rnr_stored");
        }
        if t.rnr_len >= p.rnr_depth as usize {
            self.tcount("rnr_full");
        }
        if t.wp_len > 1 {
            self.tcount("wp_stored");
        }
        if t.wp_len >= p.wprobe_depth as usize {
            self.tcount("wp_full");
        }
        if t.unstall_all {
            self.tcount("unstall_all");
        }
        if let Some((c, path, psn, until, tag)) = t.rnr_push {
            let v = [("s_rnr_valid", 1), ("s_rnr_conn", c), ("s_rnr_path", path), ("s_rnr_psn", psn)];
            put(&mut self.rows, v.iter().map(|&(n, x)| (n, u64::from(x))).collect());
            put(&mut self.rows, vec![("s_rnr_until", u64::from(until)), ("s_rnr_tag", u64::from(tag))]);
            self.tcount(if t.rnr_len == 0 { "rnr_push_empty" } else { "rnr_push_behind" });
        }
        if let Some((c, wat)) = t.wp_push {
            put(&mut self.rows, vec![("s_wp_valid", 1), ("s_wp_conn", u64::from(c)), ("s_wp_at", u64::from(wat))]);
            self.tcount("wp_push");
        }
        if t.wp_refused {
            put(&mut self.rows, vec![("s_wp_refused", 1)]);
            self.tcount("wp_refused");
        }
        if let Some((go, c, ts)) = t.go {
            assert!(self.step.is_none(), "a step starts only after the last one's answer");
            self.step = Some(at);
            put(&mut self.rows, vec![("ts_now", u64::from(ts))]);
            match go {
                AckGo::Rnr => {
                    let (hc, hp, hpsn, _, _) = t.rnr_head.expect("the RNR step pops the head");
                    assert_eq!(hc, c, "the step's connection is the head's");
                    put(
                        &mut self.rows,
                        vec![
                            ("s_go_rnr", 1),
                            ("m_ring_rd_valid", 1),
                            ("m_ring_rd_conn", u64::from(hc)),
                            ("m_ring_rd_path", u64::from(hp)),
                            ("m_ring_rd_psn", u64::from(hpsn)),
                        ],
                    );
                    if t.rnr_len > 1 {
                        self.tcount("rnr_pop_stored");
                    }
                }
                AckGo::Wprobe => {
                    assert_eq!(t.wp_head.map(|h| h.0), Some(c), "the step's connection is the head's");
                    put(&mut self.rows, vec![("s_go_wp", 1), ("m_rd_valid", 1), ("m_rd_conn", u64::from(c))]);
                }
                AckGo::Tail => {
                    put(
                        &mut self.rows,
                        vec![
                            ("s_go_tail", 1),
                            ("s_tail_conn", u64::from(c)),
                            ("m_rd_valid", 1),
                            ("m_rd_conn", u64::from(c)),
                        ],
                    );
                }
                _ => unreachable!("the timer tap records only the unit's own steps"),
            }
        }
        let Some(a) = t.ans else { return };
        let step = self.step.take().expect("an answer follows a step");
        assert_eq!(at, step + p.read_latency as usize, "the model acts L cycles after the step");
        let pm = mask(p.paths);
        match a.read {
            TimerRead::Rnr { conn, path, psn, tag: _, slot } => {
                put(&mut self.rows, vec![("s_ring_valid", u64::from(slot.is_some()))]);
                if let Some(s) = slot {
                    put(
                        &mut self.rows,
                        vec![
                            ("s_ring_rnr_wait", u64::from(s.rnr_wait)),
                            ("s_ring_rnr_tag", u64::from(s.rnr_tag)),
                            ("s_ring_queued", u64::from(s.queued)),
                        ],
                    );
                }
                let (c, pa, ps) = (u64::from(conn), u64::from(path), u64::from(psn));
                if a.live {
                    put(
                        &mut self.rows,
                        vec![
                            ("m_ring_wr_valid", 1),
                            ("m_ring_wr_conn", c),
                            ("m_ring_wr_path", pa),
                            ("m_ring_wr_psn", ps),
                        ],
                    );
                }
                if a.retx {
                    put(
                        &mut self.rows,
                        vec![("m_retx_valid", 1), ("m_retx_conn", c), ("m_retx_path", pa), ("m_retx_psn", ps)],
                    );
                }
                self.tcount(match (a.live, a.retx, slot.is_some()) {
                    (true, true, _) => "rnr_live_retx",
                    (true, false, _) => "rnr_live_queued_already",
                    (false, _, true) if slot.is_some_and(|s| s.rnr_wait) => "rnr_stale_tag",
                    (false, _, true) => "rnr_stale_slot",
                    (false, _, false) => "rnr_stale_empty",
                });
            }
            TimerRead::Wprobe { conn, at: _, armed, failed, npaths, dead, pending, probe_q } => {
                put(
                    &mut self.rows,
                    vec![
                        ("s_rd_wp_valid", u64::from(armed.is_some())),
                        ("s_rd_wp_at", u64::from(armed.unwrap_or(0))),
                        ("s_rd_failed", u64::from(failed)),
                        ("s_rd_npaths", u64::from(npaths)),
                        ("s_rd_dead", u64::from(dead) & pm),
                        ("s_rd_probe_q", u64::from(probe_q) & pm),
                        ("s_pm_probe_pending", u64::from(pending) & pm),
                    ],
                );
                if a.live {
                    put(&mut self.rows, vec![("m_wp_clr_valid", 1), ("m_wp_clr_conn", u64::from(conn))]);
                }
                if let Some(path) = a.probe {
                    put(
                        &mut self.rows,
                        vec![
                            ("m_probe_valid", 1),
                            ("m_probe_conn", u64::from(conn)),
                            ("m_probe_path", u64::from(path)),
                        ],
                    );
                }
                self.tcount(match (a.live, a.probe) {
                    (true, Some(0)) => "wp_probe_path0",
                    (true, Some(_)) => "wp_probe_past_dead",
                    (true, None) => "wp_live_no_probe",
                    (false, _) => "wp_stale",
                });
            }
            TimerRead::Tail { conn, ts: _, open, failed, tail_at } => {
                put(
                    &mut self.rows,
                    vec![
                        ("s_rd_open", u64::from(open)),
                        ("s_rd_failed", u64::from(failed)),
                        ("s_rd_tail_valid", u64::from(tail_at.is_some())),
                        ("s_rd_tail_at", u64::from(tail_at.unwrap_or(0))),
                    ],
                );
                if a.live {
                    put(&mut self.rows, vec![("m_tail_valid", 1), ("m_tail_conn", u64::from(conn))]);
                }
                self.tcount(if a.live { "tail_live" } else { "tail_stale" });
            }
        }
    }
}

/// A named scenario: the run of a config's traffic from reset.
pub type Scenario<'a> = (&'a str, &'a dyn Fn(&Config) -> Run);

/// Scenarios run one after another, each from reset (its first row resets
/// the unit), as one run: rows appended, bins summed.
pub fn scenarios(cfg: &Config, list: &[Scenario]) -> Run {
    let mut all = Run { defs: Vec::new(), rows: Vec::new(), seen: HashMap::new() };
    for (what, f) in list {
        let run = f(cfg);
        eprintln!("{} {what}: {} cycles", cfg.name, run.rows.len());
        all.defs = run.defs;
        all.rows.extend(run.rows);
        for (k, v) in run.seen {
            *all.seen.entry(k).or_default() += v;
        }
    }
    all
}

/// For both configs, in parallel: the run (`run`) replayed under Icarus
/// into the unit `write` prints (module `name`), every output compared
/// every cycle, and every bin of `want` covered. Skipped without Icarus.
pub fn replay_configs(
    tag: &str,
    name: &'static str,
    write: fn(&Scratch, &TxEngineParams) -> (Module, PathBuf),
    run: fn(&Config) -> Run,
    want: &[&str],
) {
    if !have("iverilog", "-V") || !have("vvp", "-V") {
        return;
    }
    let seen = crate::common::per_config(crate::common::configs(), |cfg| {
        let p = TxEngineParams::from_config(cfg).unwrap();
        let dir = Scratch::new(&format!("{tag}-replay-{}", cfg.name));
        let (m, rtl) = write(&dir, &p);
        // A combinational unit (the commit) has no clock to drive.
        let has_clk = m.ports().iter().any(|s| s.name == "clk");
        let mut r = run(cfg);
        replay_rows(&dir, &rtl, name, &r.defs, &r.rows, has_clk);
        r.seen.insert("cycles", r.rows.len() as u32);
        r.seen
    });
    for (cfg, seen) in seen {
        assert_covered(&cfg.name, &seen, want);
    }
}

/// The engine and its peer as the acknowledgement unit's replays drive
/// them (`tx_engine_sack.rs`, `tx_engine_stage.rs`): each frame leaving
/// on `m_axis` goes to the peer unless its plane is down.
pub struct Traffic {
    pub e: Engine,
    pub peer: Peer,
    /// A plane whose frames are all lost (a failed plane).
    pub down: Option<u8>,
    cur: Vec<u8>,
}

impl Traffic {
    /// Before reset: the caller clocks the reset and the clear sweep (a
    /// replay of the whole engine records them).
    pub fn unreset(cfg: Config, seed: u64) -> Traffic {
        Traffic { e: Engine::new(cfg, seed), peer: Peer::default(), down: None, cur: Vec::new() }
    }

    /// From reset, the clear sweep run.
    pub fn new(cfg: Config, seed: u64) -> Traffic {
        let mut t = Traffic { e: Engine::new(cfg, seed), peer: Peer::default(), down: None, cur: Vec::new() };
        t.e.clock(true);
        t.e.sweep(&mut t.peer);
        t
    }

    /// One clock, the frame leaving handed to the peer.
    pub fn clock(&mut self) -> (Inputs, Outputs) {
        let (inp, ot) = self.e.clock(false);
        if let Some(b) = ot.axis.as_ref().filter(|_| inp.axis_ready) {
            self.cur.extend_from_slice(&b.data[..b.keep as usize]);
            if b.last {
                let f = std::mem::take(&mut self.cur);
                if self.down != Some(b.plane) {
                    self.peer.frame(&mut self.e, &f);
                }
            }
        }
        (inp, ot)
    }
}

/// A replay's rig around its [`Traffic`]: each clock records the unit's
/// rows.
pub trait Drive {
    fn traffic(&mut self) -> &mut Traffic;
    fn run(&mut self, cycles: u64);
}

/// Connections `1..=6` opened (connection 5 on one path) and 300 cycles
/// run, as the SACK replays start; returns `rto_min` in cycles.
pub fn open_six(d: &mut impl Drive) -> u64 {
    let t = d.traffic();
    let cfg = t.e.cfg.clone();
    let paths = cfg.transport.paths_per_conn;
    for c in 1..=6 {
        t.peer.open(&mut t.e, c, if c == 5 { 1 } else { 4.min(paths) }, 10 * c);
    }
    d.run(300);
    u64::from(tel::Consts::from_config(&cfg).rto_min) * cfg.cycles_per_ts()
}

/// Traffic under loss with SACKs now and then (each acknowledging
/// several packets, of several streams): three rounds of bursts on
/// connections `1..=6`, 3,000 cycles each, with backpressure.
pub fn lossy_rounds(d: &mut impl Drive, off: &mut u64) {
    let t = d.traffic();
    let streams = t.e.cfg.transport.streams_per_conn.min(4);
    t.e.press = Pressure { axis: 10, ar: 10, r_gap: 10, cqe: 10 };
    t.peer.loss = 15;
    t.peer.sack_rate = 20;
    for k in 0..3 {
        for c in 1..=6 {
            burst(&mut d.traffic().e, c, streams, 2, u64::from(100 * c) + 10_000 * k, off);
        }
        d.run(3_000);
    }
}

/// `cfg` as the acknowledgement unit's SACK traffic runs it: short
/// timers, an 8-slot ring, a 256 ns timestamp unit, the smallest initial
/// window (so that SACKs grow it) and at most 64 connections
/// (path_telemetry's timeout scanner visits one (connection, path) a
/// cycle).
pub fn sack_tuned(cfg: &Config) -> Config {
    let mut cfg = cfg.clone();
    cfg.timers.rto_min_us = 10;
    cfg.timers.rto_max_us = 40;
    cfg.timers.dead_probe_interval_us = 60;
    cfg.hardware.tx_ring_depth = 8;
    cfg.timers.ts_unit_ns = 256;
    cfg.transport.connections = cfg.transport.connections.min(64);
    cfg.cc.init_cwnd_bytes = cfg.cc.min_cwnd_bytes;
    cfg
}

/// psns are 24 bits and wrap (the protocol's serial arithmetic, as
/// `seq_diff` in the reference and the model).
pub const PSN_MASK: u32 = (1 << 24) - 1;

/// `a - b` in the 24-bit psn space, in `0..2^24`.
pub fn psn_diff(a: u32, b: u32) -> u32 {
    a.wrapping_sub(b) & PSN_MASK
}

/// The peer's view of one path: every psn before `cum` received, and
/// those in `above` (24-bit psns, each ahead of `cum`).
#[derive(Default)]
pub struct PathRx {
    pub cum: u32,
    pub above: BTreeSet<u32>,
}

impl PathRx {
    /// Records `psn` as received: false when it is behind `cum` (a
    /// duplicate), in 24-bit serial arithmetic so that a path's psns
    /// wrapping past 2^24 are followed.
    fn receive(&mut self, psn: u32) -> bool {
        if psn_diff(psn, self.cum) >= 1 << 23 {
            return false;
        }
        self.above.insert(psn);
        while self.above.remove(&self.cum) {
            self.cum = (self.cum + 1) & PSN_MASK;
        }
        true
    }

    /// The SACK bitmap: bit `i` for psn `cum + 1 + i`.
    fn bitmap(&self) -> [u64; 4] {
        let mut bitmap = [0u64; 4];
        for &psn in &self.above {
            let d = psn_diff(psn, self.cum);
            if (1..=256).contains(&d) {
                let i = d - 1;
                bitmap[(i / 64) as usize] |= 1 << (i % 64);
            }
        }
        bitmap
    }
}

/// A peer that takes the engine's frames off `m_axis`, SACKs the data
/// packets it receives (a few lost, so bitmaps have holes) and answers
/// PROBEs as a receiver does (the reference's `RxConn::on_probe`): the
/// path's SACK echoing the PROBE's timestamp, sent to the UDP port it
/// came from, one per stream the peer has seen data on (with `window`).
pub struct Peer {
    /// The frame leaving on `m_axis`, as its beats were taken.
    pub cur: Vec<u8>,
    pub rx: HashMap<(u32, u32), PathRx>,
    /// Per (conn, stream) the msn the peer reports as completed_msn
    /// (with `window`): the newest it has received.
    pub msns: HashMap<(u32, u32), u32>,
    /// Connections whose packets the peer does not answer (requests stay
    /// in flight), and the data packets sent on them: (conn, path, psn).
    pub mute: HashSet<u32>,
    pub unanswered: Vec<(u32, u32, u32)>,
    /// Percent of data frames lost and of received ones SACKed at once.
    pub loss: u64,
    pub sack_rate: u64,
    /// SACKs name the packet's stream and its msn as completed_msn, so a
    /// stream may send more than `msg_table_depth` messages; off, they name
    /// no stream and the traffic keeps each stream within the window.
    pub window: bool,
    /// PROBEs answered.
    pub probes_answered: u32,
    /// UDP source ports (the fabric's route) whose frames are all lost, a
    /// black-holed route; and per (conn, path) the port its latest data
    /// frame left by, to pick one.
    pub blackhole: HashSet<u16>,
    pub sports: HashMap<(u32, u32), u16>,
}

impl Default for Peer {
    fn default() -> Peer {
        Peer {
            cur: Vec::new(),
            rx: HashMap::new(),
            msns: HashMap::new(),
            mute: HashSet::new(),
            unanswered: Vec::new(),
            loss: 0,
            sack_rate: 60,
            window: false,
            probes_answered: 0,
            blackhole: HashSet::new(),
            sports: HashMap::new(),
        }
    }
}

impl Peer {
    /// Opens `conn` (again) on the engine and forgets what was received
    /// on it.
    pub fn open(&mut self, e: &mut Engine, conn: u32, npaths: u32, psn: u32) {
        e.open(conn, npaths, psn);
        for p in 0..e.cfg.transport.paths_per_conn {
            self.rx.insert((conn, p), PathRx { cum: psn, above: BTreeSet::new() });
        }
        self.msns.retain(|&(c, _), _| c != conn);
    }

    /// The beat the engine showed on `m_axis` in a clock (`inp`, `ot`),
    /// taken if ready; a whole frame goes to the peer.
    pub fn beat(&mut self, e: &mut Engine, inp: &Inputs, ot: &Outputs) {
        if let (Some(b), true) = (&ot.axis, inp.axis_ready) {
            self.cur.extend_from_slice(&b.data[..b.keep as usize]);
            if b.last {
                let f = std::mem::take(&mut self.cur);
                self.frame(e, &f);
            }
        }
    }

    /// The peer takes a frame: a data packet is received (or lost) and
    /// SACKed now and then; a PROBE is answered.
    pub fn frame(&mut self, e: &mut Engine, bytes: &[u8]) {
        let Ok(d) = decode_frame(bytes) else { panic!("every frame decodes") };
        let sport = d.net.src_port;
        if self.blackhole.contains(&sport) {
            return;
        }
        if let Hdr::Probe(h) = d.header {
            self.probe(e, &h, sport);
            return;
        }
        let Hdr::Data(h) = d.header else { return };
        let conn = h.dst_conn & !REMOTE_ID;
        let path = u32::from(h.path_id);
        self.sports.insert((conn, path), sport);
        if self.mute.contains(&conn) {
            self.unanswered.push((conn, path, h.path_psn));
            return;
        }
        if e.chance(self.loss) {
            return;
        }
        let Some(rx) = self.rx.get_mut(&(conn, path)) else { return };
        if !rx.receive(h.path_psn) {
            return;
        }
        let stream = u32::from(h.stream_id);
        if self.window {
            let m = self.msns.entry((conn, stream)).or_insert(h.msn);
            if psn_diff(h.msn, *m) < 1 << 23 {
                *m = h.msn;
            }
        }
        if !(h.flags.ackreq || e.chance(self.sack_rate)) {
            return;
        }
        let msn = if self.window { Some((stream, h.msn)) } else { None };
        self.sack(e, conn, path, h.tx_ts, sport, msn);
    }

    /// A PROBE of a connection the peer answers: the path's SACK, echoing
    /// its timestamp, per stream seen (the reference's `on_probe`), or one
    /// naming no stream. A PROBE may be lost as data is.
    fn probe(&mut self, e: &mut Engine, h: &mrnic_proto::ProbeHeader, sport: u16) {
        let conn = h.dst_conn & !REMOTE_ID;
        let path = u32::from(h.path_id);
        if self.mute.contains(&conn) || e.chance(self.loss) || !self.rx.contains_key(&(conn, path)) {
            return;
        }
        self.probes_answered += 1;
        let mut seen: Vec<(u32, u32)> =
            self.msns.iter().filter(|&(&(c, _), _)| c == conn).map(|(&(_, s), &m)| (s, m)).collect();
        seen.sort_unstable();
        if seen.is_empty() {
            self.sack(e, conn, path, h.tx_ts, sport, None);
        }
        for (s, m) in seen {
            self.sack(e, conn, path, h.tx_ts, sport, Some((s, m)));
        }
    }

    /// The SACK of `(conn, path)` as the peer holds it, echoing `echo_ts`
    /// to UDP port `dport`, naming `msn` = (stream, completed_msn) or no
    /// stream.
    fn sack(&mut self, e: &mut Engine, conn: u32, path: u32, echo_ts: u16, dport: u16, msn: Option<(u32, u32)>) {
        let rx = &self.rx[&(conn, path)];
        e.sacks.push_back(SackIn {
            conn,
            path_id: path,
            cum_psn: rx.cum,
            bitmap: rx.bitmap(),
            ecn_cnt: 0,
            echo_ts,
            rate_hint: 0xffff,
            stream_id: msn.map_or(0xff, |(s, _)| s),
            completed_msn: msn.map_or(0, |(_, m)| m),
            dport,
        });
    }
}

/// Requests on `conn`, `per` on each of its first `streams` streams,
/// every op, lengths from none to a few MTUs, from `off` on.
pub fn burst(e: &mut Engine, conn: u32, streams: u32, per: u32, id: u64, off: &mut u64) {
    let mtu = e.cfg.transport.mtu;
    let lens = [0, 1, 200, mtu - 1, mtu, 2 * mtu + 3, 64, 9];
    for k in 0..per {
        for s in 0..streams {
            let i = (k * streams + s) as usize;
            let len = lens[(i + conn as usize) % lens.len()];
            let w = wr(conn, s, (i % 4) as u8, id + i as u64, *off % 0x2_0000, len);
            e.wrs.push_back(w);
            *off += u64::from(len).next_multiple_of(64) + 64;
        }
    }
}
