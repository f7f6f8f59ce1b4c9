//! A bench for the NIC top, `mrnic_core`: the model's netlist simulation
//! with host memory on its AXI4 master, driven only through the top's
//! ports, as a host driver and a MAC would.
//!
//! - Host memory: one [`Pages`] memory behind an [`AxiWriteSlave`]
//!   (dma_write_engine's writes, logged burst by burst) and an
//!   [`AxiReadSlave`] (tx_engine's payload reads), each with its own
//!   latency and random backpressure.
//! - The host: AXI4-Lite writes and reads of the csr ([`NicRig::axil_write`],
//!   [`NicRig::axil_read`], [`NicRig::register_mr`]) and one valid/ready
//!   transaction at a time on any input channel ([`NicRig::send`]).
//! - The MAC: frames in on `s_axis_*` ([`NicRig::send_frame`]); frames out
//!   of `m_axis_*` and completions out of `m_cqe_*` collected every cycle,
//!   under random backpressure.
//!
//! A connection's receive side is opened with one `s_ropen_*` record
//! (conn, paths, the peer's first psn), after conn_table's `s_conn_*`.

use std::collections::VecDeque;
use std::path::Path;

use mrnic_model::block::{port_index, zero_values, Bits, Block, Dir, PortDef};
use mrnic_model::cqe_merge::Cqe;
use mrnic_model::mrnic_core;
use mrnic_model::netlist::{model_block, Sim};
use mrnic_proto::Config;

use crate::axi::{AxiReadSlave, AxiWriteSlave, Pages};
use crate::coverage::Coverage;
use crate::stimulus::{set_u64, Rng};
use crate::top_cov::TopCov;
use crate::twin::Twin;

/// Cycles a single transaction may wait for its `ready` before the bench
/// gives up (a stuck top is reported, never waited on forever).
pub const STALL_LIMIT: u64 = 200_000;
/// The most cycles the reset sweeps may take: the longest clears one
/// entry a cycle, and `default`'s message table has 1M of them.
pub const RESET_LIMIT: u64 = 1 << 22;

/// A frame the top sent: its bytes and the plane (`m_axis_tuser`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameOut {
    pub bytes: Vec<u8>,
    pub plane: u8,
}

/// How hard the bench presses on the top's outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pressure {
    /// Percent of cycles `m_axis_tready` / `m_cqe_ready` are low.
    pub out_busy: u32,
    /// Percent of cycles `m_axi_awready` / `m_axi_wready` / `m_axi_arready`
    /// are low.
    pub axi_busy: u32,
    /// Memory answers at most this many cycles late.
    pub axi_latency: u64,
}

impl Default for Pressure {
    fn default() -> Pressure {
        Pressure { out_busy: 20, axi_busy: 20, axi_latency: 8 }
    }
}

/// Port indices the bench reads every cycle.
#[derive(Debug, Clone)]
struct Keys {
    /// The MAC TX stream (none on the receive side alone).
    tx: Option<TxKeys>,
    cqe: (usize, usize),
    /// conn, stream, wr_id, status, opcode, byte_len, imm_valid, imm.
    cqe_fields: [usize; 8],
    /// AXI channels' (valid, ready): aw, w, b, and ar, r when tx_engine
    /// reads host memory.
    axi: Vec<(usize, usize)>,
    /// The host's readies: m_cqe_ready, m_axi_awready, m_axi_wready,
    /// m_post_ready, and m_axis_tready with the transmit side.
    readies: Vec<usize>,
}

#[derive(Debug, Clone, Copy)]
struct TxKeys {
    axis: (usize, usize),
    tdata: usize,
    tkeep: usize,
    tlast: usize,
    tuser: usize,
}

impl Keys {
    fn new(ports: &[PortDef]) -> Result<Keys, String> {
        let i = |n: &str| port_index(ports, n).ok_or_else(|| format!("mrnic_core has no port `{n}`"));
        let mut cqe_fields = [0; 8];
        for (k, n) in ["conn", "stream", "wr_id", "status", "opcode", "byte_len", "imm_valid", "imm"].iter().enumerate()
        {
            cqe_fields[k] = i(&format!("m_cqe_{n}"))?;
        }
        let tx = match port_index(ports, "m_axis_tvalid") {
            None => None,
            Some(_) => Some(TxKeys {
                axis: (i("m_axis_tvalid")?, i("m_axis_tready")?),
                tdata: i("m_axis_tdata")?,
                tkeep: i("m_axis_tkeep")?,
                tlast: i("m_axis_tlast")?,
                tuser: i("m_axis_tuser")?,
            }),
        };
        let mut axi = vec![
            (i("m_axi_awvalid")?, i("m_axi_awready")?),
            (i("m_axi_wvalid")?, i("m_axi_wready")?),
            (i("m_axi_bvalid")?, i("m_axi_bready")?),
        ];
        let mut readies = vec![i("m_cqe_ready")?, i("m_axi_awready")?, i("m_axi_wready")?, i("m_post_ready")?];
        if let Some(t) = tx {
            axi.push((i("m_axi_arvalid")?, i("m_axi_arready")?));
            axi.push((i("m_axi_rvalid")?, i("m_axi_rready")?));
            readies.push(t.axis.1);
        }
        Ok(Keys { tx, cqe: (i("m_cqe_valid")?, i("m_cqe_ready")?), cqe_fields, axi, readies })
    }
}

/// The MAC address a bench gives node `addr` (IPv4 address `addr`): any
/// fixed rule does, frames are compared as their UDP view.
pub fn mac_of(addr: u32) -> u64 {
    0x0200_0000_0000 | addr as u64
}

/// A connection to open ([`NicRig::open_conn`]): its ids, the peer's
/// IPv4 address (its MAC is [`mac_of`] it), the first psns each way and
/// each path's (entropy source port, plane).
#[derive(Debug, Clone)]
pub struct OpenConn {
    pub local_id: u32,
    pub remote_id: u32,
    pub remote: u32,
    pub tx_psn: u32,
    pub rx_psn: u32,
    pub paths: Vec<(u16, u8)>,
}

/// What a [`NicRig`] drives: the model's netlist simulation, or it and
/// the Verilated RTL of the same netlist in lockstep ([`Twin`]: every
/// output compared every cycle, the RTL's handed to the rig).
pub trait Top: Block {
    /// An instance's port in the model after the last `eval`.
    fn probe(&self, inst: &str, port: &str) -> Option<&Bits>;
    /// The first cycle the RTL differed from the model, if any.
    fn mismatch(&self) -> Option<&str> {
        None
    }
    /// That cycle's number (the rig's clock from reset).
    fn mismatch_cycle(&self) -> Option<u64> {
        None
    }
    /// Starts a VCD window of both sides ([`Twin::trace`]); a model alone
    /// has no RTL to trace.
    fn trace(&mut self, _start: u64, _end: u64, _rtl: &Path, _model: &Path) -> Result<(), String> {
        Err("a model alone: only a rig in lockstep (twin, rx_twin) writes VCDs".into())
    }
    /// Completes the VCD files of a window still open, or says why the
    /// window ended early.
    fn trace_close(&mut self) -> Result<(), String> {
        Ok(())
    }
}

impl Top for Sim {
    fn probe(&self, inst: &str, port: &str) -> Option<&Bits> {
        Sim::probe(self, inst, port)
    }
}

impl Top for Twin<Sim> {
    fn probe(&self, inst: &str, port: &str) -> Option<&Bits> {
        self.model().probe(inst, port)
    }
    fn mismatch(&self) -> Option<&str> {
        Twin::mismatch(self)
    }
    fn mismatch_cycle(&self) -> Option<u64> {
        Twin::mismatch_cycle(self)
    }
    fn trace(&mut self, start: u64, end: u64, rtl: &Path, model: &Path) -> Result<(), String> {
        Twin::trace(self, start, end, rtl, model).map_err(|e| e.to_string())
    }
    fn trace_close(&mut self) -> Result<(), String> {
        Twin::trace_close(self).map_err(|e| e.to_string())
    }
}

/// The Verilated top alone behind the rig (no model): for benches that time
/// the RTL ([`NicRig::rtl`]); nothing is compared and nothing inside is
/// probed.
struct RtlTop {
    rtl: crate::rtl::Rtl,
    ports: Vec<PortDef>,
    values: Vec<Bits>,
    outputs: Vec<usize>,
}

impl Block for RtlTop {
    fn name(&self) -> &'static str {
        mrnic_core::NAME
    }
    fn ports(&self) -> &[PortDef] {
        &self.ports
    }
    fn eval(&mut self, inputs: &[Bits], outputs: &mut [Bits]) {
        for (v, i) in self.values.iter_mut().zip(inputs) {
            v.clone_from(i);
        }
        self.rtl.comb(&mut self.values);
        for &o in &self.outputs {
            outputs[o].clone_from(&self.values[o]);
        }
    }
    fn tick(&mut self, _inputs: &[Bits]) {
        self.rtl.posedge();
    }
}

impl Top for RtlTop {
    fn probe(&self, _inst: &str, _port: &str) -> Option<&Bits> {
        None
    }
}

/// The edge of a netlist cut ([`mrnic_core::rx_netlist`]): the channels
/// into tx_engine, whose readies the rig plays with random backpressure,
/// and their transactions counted.
#[derive(Debug, Clone, Default)]
struct Cut {
    /// (valid, ready) of each `tx_engine_s_<x>` channel, its name.
    channels: Vec<(usize, usize)>,
    names: Vec<String>,
    taken: Vec<u64>,
}

impl Cut {
    fn new(ports: &[PortDef]) -> Cut {
        let mut c = Cut::default();
        for (v, p) in ports.iter().enumerate() {
            let Some(x) = p.name.strip_prefix("tx_engine_s_").and_then(|x| x.strip_suffix("_valid")) else {
                continue;
            };
            if let Some(r) = port_index(ports, &format!("tx_engine_s_{x}_ready")) {
                c.channels.push((v, r));
                c.names.push(format!("s_{x}"));
                c.taken.push(0);
            }
        }
        c
    }
}

/// The top, its host memory and what came out of it.
pub struct NicRig {
    sim: Box<dyn Top>,
    cut: Cut,
    ports: Vec<PortDef>,
    ins: Vec<Bits>,
    outs: Vec<Bits>,
    pub wmem: AxiWriteSlave,
    /// tx_engine's payload reads (none on the receive side alone).
    pub rmem: Option<AxiReadSlave>,
    rng: Rng,
    press: Pressure,
    cov: Coverage,
    pub cycle: u64,
    beat_bytes: usize,
    /// Frames out, in order.
    pub frames: Vec<FrameOut>,
    cur: Vec<u8>,
    /// Completions out, in order.
    pub cqes: Vec<Cqe>,
    /// What a memory would refuse (4 KiB crossings, beat counts).
    pub violations: Vec<String>,
    /// Output handshakes so far (frames' beats, completions, AXI), to see
    /// when the top has gone quiet.
    activity: u64,
    /// Cycles since the last output handshake.
    quiet: u64,
    rst: usize,
    k: Keys,
    out_ids: Vec<usize>,
    /// Frames queued to enter on `s_axis_*` while the clock runs (the
    /// back-to-back bench), with the next beat of the first.
    inbound: VecDeque<(Vec<u8>, u8)>,
    in_beat: usize,
    /// `s_axis_tvalid` is ours to lower when the queue empties.
    in_driving: bool,
    /// s_axis_tdata, tkeep, tlast, tid, tvalid, and the tready output.
    sin: [usize; 6],
    /// The whole top's coverage bins (a top with `m_axis`).
    tcov: Option<TopCov>,
    /// Time spent in the top's own `eval` and `tick` (the model, the RTL or
    /// both), apart from the rig's: [`NicRig::top_seconds`].
    top_time: std::time::Duration,
}

impl NicRig {
    /// The top for `cfg`, reset, with host memory answering after
    /// `0..=press.axi_latency` cycles.
    pub fn new(cfg: &Config, seed: u64, press: Pressure) -> Result<NicRig, String> {
        let sim = Self::sim(&mrnic_core::netlist(cfg)?, cfg)?;
        Self::with(Box::new(sim), cfg, seed, press)
    }

    /// The top's receive side alone ([`mrnic_core::rx_netlist`]), the model
    /// and the Verilated RTL in lockstep: the rig plays tx_engine's part
    /// at the cut (its readies under `press.out_busy`, its completions and
    /// counter pulses never), and [`NicRig::mismatch`] names the first
    /// difference. Needs the `mrnic_rx_core` row of the crate's designs.
    pub fn rx_twin(cfg: &Config, seed: u64, press: Pressure) -> Result<NicRig, String> {
        Self::with(Self::lockstep(mrnic_core::RX_NAME, &mrnic_core::rx_netlist(cfg)?, cfg)?, cfg, seed, press)
    }

    /// The whole top, the model and the Verilated RTL in lockstep, every
    /// output compared every cycle; [`NicRig::mismatch`] names the first
    /// difference. Needs the `mrnic_core` row of the crate's designs built
    /// for a config equal to `cfg` (its name alone is not enough: the RTL's
    /// constants are the config's values).
    pub fn twin(cfg: &Config, seed: u64, press: Pressure) -> Result<NicRig, String> {
        Self::with(Self::lockstep(mrnic_core::NAME, &mrnic_core::netlist(cfg)?, cfg)?, cfg, seed, press)
    }

    /// The whole top's Verilated RTL alone, no model beside it (for timing
    /// the RTL: [`NicRig::top_seconds`]); needs the `mrnic_core` design
    /// built for `cfg`.
    pub fn rtl(cfg: &Config, seed: u64, press: Pressure) -> Result<NicRig, String> {
        let built = crate::blocks::built_config(mrnic_core::NAME, cfg, &cfg.name).map_err(|e| e.to_string())?;
        let rtl = crate::rtl::Rtl::open(mrnic_core::NAME, built).map_err(|e| e.to_string())?;
        let ports = mrnic_core::netlist(cfg)?.ports;
        crate::rtl::check_ports(rtl.info(), &ports).map_err(|e| e.to_string())?;
        let outputs = (0..ports.len()).filter(|&i| ports[i].dir == Dir::Out).collect();
        let top = RtlTop { rtl, values: zero_values(&ports), ports, outputs };
        Self::with(Box::new(top), cfg, seed, press)
    }

    /// The model's simulation of `net` and the RTL of design `name` built
    /// for a config equal to `cfg`, in lockstep.
    fn lockstep(
        name: &str,
        net: &mrnic_model::netlist::Netlist<&'static str>,
        cfg: &Config,
    ) -> Result<Box<dyn Top>, String> {
        let built = crate::blocks::built_config(name, cfg, &cfg.name).map_err(|e| e.to_string())?;
        let twin = Twin::new(Self::sim(net, cfg)?, built, false).map_err(|e| e.to_string())?;
        Ok(Box::new(twin))
    }

    /// The model's simulation of `net`.
    fn sim(net: &mrnic_model::netlist::Netlist<&'static str>, cfg: &Config) -> Result<Sim, String> {
        let mut err = None;
        let sim = Sim::new(net, |i| {
            model_block(i.kind, cfg).unwrap_or_else(|e| {
                err = Some(e);
                Box::new(mrnic_model::rx_drop_or::RxDropOr::default())
            })
        });
        if let Some(e) = err {
            return Err(e);
        }
        sim.map_err(|e| e.to_string())
    }

    fn with(sim: Box<dyn Top>, cfg: &Config, seed: u64, press: Pressure) -> Result<NicRig, String> {
        let ports = sim.ports().to_vec();
        let mut wmem = AxiWriteSlave::new(&ports, "m_axi_")?;
        wmem.max_latency = press.axi_latency;
        wmem.log = Some(Vec::new());
        let rmem = match port_index(&ports, "m_axi_arvalid") {
            None => None,
            Some(_) => {
                let mut r = AxiReadSlave::new(&ports, "m_axi_")?;
                r.max_latency = press.axi_latency;
                r.ar_busy_percent = press.axi_busy;
                Some(r)
            }
        };
        let mut rig = NicRig {
            cut: Cut::new(&ports),
            ins: zero_values(&ports),
            outs: zero_values(&ports),
            k: Keys::new(&ports)?,
            out_ids: ports.iter().enumerate().filter(|(_, p)| p.dir == Dir::Out).map(|(i, _)| i).collect(),
            beat_bytes: (cfg.hardware.datapath_bits / 8) as usize,
            ports,
            sim,
            wmem,
            rmem,
            rng: Rng::new(seed),
            press,
            cov: Coverage::new(),
            cycle: 0,
            frames: Vec::new(),
            cur: Vec::new(),
            cqes: Vec::new(),
            violations: Vec::new(),
            activity: 0,
            quiet: 0,
            rst: 0,
            inbound: VecDeque::new(),
            in_beat: 0,
            in_driving: false,
            sin: [0; 6],
            tcov: None,
            top_time: std::time::Duration::ZERO,
        };
        for (k, n) in ["s_axis_tdata", "s_axis_tkeep", "s_axis_tlast", "s_axis_tid", "s_axis_tvalid", "s_axis_tready"]
            .iter()
            .enumerate()
        {
            rig.sin[k] = rig.idx(n)?;
        }
        rig.rst = rig.idx("rst")?;
        if port_index(&rig.ports, "m_axis_tvalid").is_some() {
            let mut held = Vec::new();
            for ch in ["m_axis_t", "m_cqe_", "m_axi_aw", "m_axi_w", "m_axi_ar"] {
                let (v, r) = (rig.idx(&format!("{ch}valid"))?, rig.idx(&format!("{ch}ready"))?);
                held.push((v, r, ch.trim_end_matches(['_', 't'])));
            }
            rig.tcov = Some(TopCov::declare(&mut rig.cov, &held));
        }
        // Every egress port has room (a MAC that takes every frame) until
        // a bench with port queues sets `port_ready` itself.
        if port_index(&rig.ports, "port_ready").is_some() {
            rig.set("port_ready", u64::MAX)?;
        }
        rig.set("rst", 1)?;
        rig.clock();
        rig.clock();
        rig.set("rst", 0)?;
        // Time starts when the NIC is usable: the sweeps' length is no
        // part of a scenario's timing.
        rig.set("ts_hold", 1)?;
        rig.wait_out_of_reset()?;
        // CONTROL.enable resets to 0 (the core leaves reset off): the
        // driver turns it on before any traffic.
        rig.set_enable(cfg, true)?;
        rig.wait_high_within(&["s_wr_ready"], RESET_LIMIT)?;
        rig.set("ts_hold", 0)?;
        Ok(rig)
    }

    /// Writes `CONTROL.enable` (the access policy bits left at 0): off,
    /// enable_gate discards arriving frames and holds work requests.
    pub fn set_enable(&mut self, cfg: &Config, on: bool) -> Result<(), String> {
        let a = self.reg(cfg, "CONTROL")?;
        match self.axil_write(a, on as u32)? {
            0 => Ok(()),
            resp => Err(format!("csr write CONTROL answered {resp}")),
        }
    }

    fn idx(&self, name: &str) -> Result<usize, String> {
        port_index(&self.ports, name).ok_or_else(|| format!("mrnic_core has no port `{name}`"))
    }

    /// Holds input `name` at `v` from now on.
    pub fn set(&mut self, name: &str, v: u64) -> Result<(), String> {
        let i = self.idx(name)?;
        if self.ports[i].dir != Dir::In {
            return Err(format!("`{name}` is an output of mrnic_core"));
        }
        set_u64(&mut self.ins[i], self.ports[i].width, v);
        Ok(())
    }

    /// Output `name` after the last cycle's `eval`.
    pub fn get(&self, name: &str) -> Result<u64, String> {
        Ok(self.outs[self.idx(name)?].as_u64())
    }

    /// An instance's port after the last cycle's `eval` (for a bench that
    /// looks inside, such as a report of where a packet stopped).
    pub fn probe(&self, inst: &str, port: &str) -> Option<u64> {
        self.sim.probe(inst, port).map(|b| b.as_u64())
    }

    /// The first cycle the RTL differed from the model (a rig in
    /// lockstep, [`NicRig::rx_twin`]), if any.
    pub fn mismatch(&self) -> Option<&str> {
        self.sim.mismatch()
    }

    /// The cycle of [`NicRig::mismatch`] (the rig's clock from reset, as
    /// [`NicRig::trace`] takes it).
    pub fn mismatch_cycle(&self) -> Option<u64> {
        self.sim.mismatch_cycle()
    }

    /// Writes cycles `start..=end` of the rig's clock (counted from its
    /// first, reset included, as [`NicRig::mismatch`] counts them) as two
    /// VCDs, for a rig in lockstep: every signal of the RTL, inside the
    /// blocks too, to `rtl`, and the top's ports in the model to `model`.
    pub fn trace(&mut self, start: u64, end: u64, rtl: &Path, model: &Path) -> Result<(), String> {
        for f in [rtl, model] {
            if let Some(d) = f.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
            }
        }
        self.sim.trace(start, end, rtl, model)
    }

    /// Completes the files of a VCD window that is still open, or says
    /// why the window ended early.
    pub fn trace_close(&mut self) -> Result<(), String> {
        self.sim.trace_close()
    }

    /// Transactions taken so far on each channel into tx_engine at the
    /// cut (`s_sack`, `s_nack`, `s_csack`, `s_cnack`, `s_wr`), by name.
    pub fn cut_taken(&self) -> Vec<(String, u64)> {
        self.cut.names.iter().cloned().zip(self.cut.taken.iter().copied()).collect()
    }

    /// Seconds spent in the top's own `eval` and `tick` so far (the
    /// model, the RTL, or both in lockstep), the rig's own work apart.
    pub fn top_seconds(&self) -> f64 {
        self.top_time.as_secs_f64()
    }

    /// The functional coverage counted so far: the host memory's AXI bins
    /// and, for the whole top, its frames, completions, backpressure and
    /// path events (`top_cov`).
    pub fn coverage(&self) -> &Coverage {
        &self.cov
    }

    /// The host memory both AXI slaves serve.
    pub fn memory(&mut self) -> &mut Pages {
        &mut self.wmem.memory
    }

    /// One cycle: the memory and the host's readies, `eval`, everything
    /// the outputs handed over, the edge.
    pub fn clock(&mut self) {
        let (o, a) = (self.press.out_busy, self.press.axi_busy);
        for (k, &i) in self.k.readies.iter().enumerate() {
            // m_cqe, the AXI write channels, m_post, m_axis (the order of
            // `Keys::readies`), then the cut edge's readies.
            let v = !self.rng.percent([o, a, a, 0, o][k]) as u64;
            set_u64(&mut self.ins[i], 1, v);
        }
        for &(_, i) in &self.cut.channels {
            let v = !self.rng.percent(o) as u64;
            set_u64(&mut self.ins[i], 1, v);
        }
        let in_reset = self.ins[self.rst].bit(0);
        self.wmem.drive(&mut self.rng, self.cycle, &mut self.ins, in_reset);
        if let Some(r) = self.rmem.as_mut() {
            r.drive(&mut self.rng, self.cycle, &mut self.ins, &self.wmem.memory);
        }
        self.drive_inbound();
        let t0 = std::time::Instant::now();
        self.sim.eval(&self.ins, &mut self.outs);
        self.top_time += t0.elapsed();
        if !self.inbound.is_empty() && self.outs[self.sin[5]].bit(0) {
            self.in_beat += 1;
            if self.in_beat * self.beat_bytes >= self.inbound[0].0.len() {
                self.inbound.pop_front();
                self.in_beat = 0;
            }
        }
        // Outputs joined to the inputs: one port-indexed list for the
        // slaves (eval ignores the entries of outputs in its inputs).
        for &i in &self.out_ids {
            self.ins[i].clone_from(&self.outs[i]);
        }
        let hs = |v: &[Bits], (a, b): (usize, usize)| v[a].bit(0) && v[b].bit(0);
        let before = self.activity;
        if let Some(tx) = self.k.tx {
            if hs(&self.ins, tx.axis) {
                self.beat(tx);
            }
        }
        if hs(&self.ins, self.k.cqe) {
            self.cqe();
        }
        for &pair in &self.k.axi {
            self.activity += hs(&self.ins, pair) as u64;
        }
        for (n, &pair) in self.cut.channels.iter().enumerate() {
            let taken = hs(&self.ins, pair);
            self.activity += taken as u64;
            self.cut.taken[n] += taken as u64;
        }
        if !in_reset {
            self.wmem.observe(&mut self.rng, self.cycle, &self.ins, false, &mut self.cov, &mut self.violations);
            if let Some(r) = self.rmem.as_mut() {
                r.observe(&mut self.rng, self.cycle, &self.ins, &mut self.violations);
            }
        } else if let Some(r) = self.rmem.as_mut() {
            r.reset();
        }
        if let (Some(t), false) = (&self.tcov, in_reset) {
            let sim = &self.sim;
            t.cycle(&mut self.cov, &self.ins, |n| sim.probe("path_telemetry", n));
        }
        if self.activity != before {
            self.quiet = 0;
        } else {
            self.quiet += 1;
        }
        let t0 = std::time::Instant::now();
        self.sim.tick(&self.ins);
        self.top_time += t0.elapsed();
        self.cycle += 1;
    }

    fn beat(&mut self, k: TxKeys) {
        self.activity += 1;
        let (data, keep) = (&self.ins[k.tdata], &self.ins[k.tkeep]);
        for lane in 0..self.beat_bytes as u32 {
            if keep.bit(lane) {
                self.cur.push((data.0[(lane / 8) as usize] >> (8 * (lane % 8))) as u8);
            }
        }
        if self.ins[k.tlast].bit(0) {
            let plane = self.ins[k.tuser].as_u64() as u8;
            if let Some(t) = &self.tcov {
                t.frame_out(&mut self.cov, &self.cur);
            }
            self.frames.push(FrameOut { bytes: std::mem::take(&mut self.cur), plane });
        }
    }

    fn cqe(&mut self) {
        self.activity += 1;
        let f = |i: usize| self.ins[self.k.cqe_fields[i]].as_u64();
        if let Some(t) = &self.tcov {
            t.completion(&mut self.cov, f(4) as u8, f(3) as u8);
        }
        self.cqes.push(Cqe {
            conn: f(0) as u32,
            stream: f(1) as u32,
            wr_id: f(2),
            status: f(3) as u8,
            opcode: f(4) as u8,
            byte_len: f(5) as u32,
            imm: (f(6) == 1).then(|| f(7) as u32),
        });
    }

    /// One transaction on input channel `prefix` (`s_wr`, `s_open`, ...):
    /// `valid` and the fields held until `ready`.
    pub fn send(&mut self, prefix: &str, fields: &[(&str, u64)]) -> Result<(), String> {
        for (n, v) in fields {
            self.set(&format!("{prefix}_{n}"), *v)?;
        }
        let ready = self.idx(&format!("{prefix}_ready"))?;
        self.handshake(&format!("{prefix}_valid"), ready, prefix)
    }

    /// Opens a connection in table slot `slot` as a driver does: its
    /// conn_table entry (`s_conn`), each path's transmit state (`s_open`:
    /// entropy port and plane), its receive state (`s_ropen`).
    pub fn open_conn(&mut self, slot: u32, c: &OpenConn) -> Result<(), String> {
        let (slot, npaths) = (slot as u64, c.paths.len() as u64);
        let conn = [
            ("entry_valid", 1),
            ("local_id", c.local_id as u64),
            ("remote_id", c.remote_id as u64),
            ("remote_addr", c.remote as u64),
            ("paths", npaths),
        ];
        self.send("s_conn", &conn)?;
        for (i, &(sport, plane)) in c.paths.iter().enumerate() {
            let open = [
                ("conn", slot),
                ("path", i as u64),
                ("npaths", npaths),
                ("remote_id", c.remote_id as u64),
                ("dst_mac", mac_of(c.remote)),
                ("dst_ip", c.remote as u64),
                ("sport", sport as u64),
                ("plane", plane as u64),
                ("psn", c.tx_psn as u64),
            ];
            if port_index(&self.ports, "s_open_valid").is_some() {
                self.send("s_open", &open)?;
            }
        }
        self.send("s_ropen", &[("conn", slot), ("paths", npaths), ("psn", c.rx_psn as u64)])?;
        // The connection is open once its setup has acted: tx_engine takes
        // no work request from an s_open handshake until then (so one
        // posted after it sees the connection), and a driver that starts
        // its clock now measures none of the setup.
        if port_index(&self.ports, "s_open_valid").is_some() {
            self.wait_high(&["s_wr_ready"])?;
        }
        Ok(())
    }

    /// Posts a receive as a driver does: `s_post` to recv_match, its answer
    /// on `m_post`, and when it was taken `s_rpost` to cpl_engine (which
    /// wakes a WRITE_IMM waiting for one). Whether it was taken (false: the
    /// stream's receive ring is full).
    pub fn post_recv(
        &mut self,
        conn: u32,
        stream: u32,
        buf: (u64, u64),
        wr_id: u64,
        lkey: u32,
    ) -> Result<bool, String> {
        let (addr, len) = buf;
        let (c, s) = (conn as u64, stream as u64);
        let f = [("conn", c), ("stream", s), ("addr", addr), ("len", len), ("wr_id", wr_id), ("lkey", lkey as u64)];
        self.send("s_post", &f)?;
        let (valid, ok) = (self.idx("m_post_valid")?, self.idx("m_post_ok")?);
        for _ in 0..STALL_LIMIT {
            self.clock();
            if self.outs[valid].bit(0) {
                if !self.outs[ok].bit(0) {
                    return Ok(false);
                }
                self.send("s_rpost", &[("conn", c), ("stream", s)])?;
                return Ok(true);
            }
        }
        Err("recv_match never answered a post".into())
    }

    /// Raises `valid`, clocks until output `ready` was high, lowers it.
    fn handshake(&mut self, valid: &str, ready: usize, what: &str) -> Result<(), String> {
        self.set(valid, 1)?;
        let start = self.cycle;
        loop {
            self.clock();
            if self.outs[ready].bit(0) {
                return self.set(valid, 0);
            }
            if self.cycle - start > STALL_LIMIT {
                self.set(valid, 0)?;
                return Err(format!("{what}: not taken in {STALL_LIMIT} cycles (cycle {})", self.cycle));
            }
        }
    }

    /// Clocks until every host channel is ready at once: the blocks' reset
    /// sweeps are over, as a driver waits after reset before it uses the
    /// NIC. A frame that arrived earlier would have found tx_engine still
    /// clearing its memories, unable to answer (no connection has to be
    /// opened first for a NO_CONN answer).
    /// Waits until the host channels take records after reset. Work
    /// requests wait for the enable too (enable_gate), so `s_wr_ready` is
    /// not among them: see [`NicRig::new`].
    fn wait_out_of_reset(&mut self) -> Result<(), String> {
        let all = ["s_conn_ready", "s_open_ready", "s_ropen_ready", "s_post_ready"];
        let have: Vec<&str> = all.into_iter().filter(|n| port_index(&self.ports, n).is_some()).collect();
        self.wait_high_within(&have, RESET_LIMIT)
    }

    /// Waits until the outputs `names` are all high at once (after a
    /// cycle's `eval`), clocking.
    fn wait_high(&mut self, names: &[&str]) -> Result<(), String> {
        self.wait_high_within(names, STALL_LIMIT)
    }

    fn wait_high_within(&mut self, names: &[&str], limit: u64) -> Result<(), String> {
        let ids = names.iter().map(|n| self.idx(n)).collect::<Result<Vec<_>, _>>()?;
        let start = self.cycle;
        loop {
            self.clock();
            if ids.iter().all(|&i| self.outs[i].bit(0)) {
                return Ok(());
            }
            if self.cycle - start > limit {
                return Err(format!("`{}` not high in {limit} cycles (cycle {})", names.join("`, `"), self.cycle));
            }
        }
    }

    /// An AXI4-Lite write of the csr; the write response's code.
    pub fn axil_write(&mut self, addr: u32, data: u32) -> Result<u8, String> {
        self.set("s_axil_awaddr", addr as u64)?;
        self.set("s_axil_wdata", data as u64)?;
        self.set("s_axil_wstrb", 0xf)?;
        let (aw, w) = (self.idx("s_axil_awready")?, self.idx("s_axil_wready")?);
        let (mut aw_done, mut w_done) = (false, false);
        let start = self.cycle;
        while !(aw_done && w_done) {
            self.set("s_axil_awvalid", !aw_done as u64)?;
            self.set("s_axil_wvalid", !w_done as u64)?;
            self.clock();
            aw_done |= self.outs[aw].bit(0);
            w_done |= self.outs[w].bit(0);
            if self.cycle - start > STALL_LIMIT {
                return Err(format!("csr write {addr:#x}: address or data not taken"));
            }
        }
        self.set("s_axil_awvalid", 0)?;
        self.set("s_axil_wvalid", 0)?;
        self.set("s_axil_bready", 1)?;
        self.wait_high(&["s_axil_bvalid"])?;
        self.set("s_axil_bready", 0)?;
        Ok(self.get("s_axil_bresp")? as u8)
    }

    /// An AXI4-Lite read of the csr: (data, response code).
    pub fn axil_read(&mut self, addr: u32) -> Result<(u32, u8), String> {
        self.set("s_axil_araddr", addr as u64)?;
        self.set("s_axil_arvalid", 1)?;
        self.wait_high(&["s_axil_arready"])?;
        self.set("s_axil_arvalid", 0)?;
        self.set("s_axil_rready", 1)?;
        self.wait_high(&["s_axil_rvalid"])?;
        self.set("s_axil_rready", 0)?;
        Ok((self.get("s_axil_rdata")? as u32, self.get("s_axil_rresp")? as u8))
    }

    /// The csr register `name`'s offset.
    pub fn reg(&self, cfg: &Config, name: &str) -> Result<u32, String> {
        let p = mrnic_model::csr::CsrParams::from_config(cfg).map_err(|e| e.to_string())?;
        mrnic_model::csr::regmap(&p)
            .iter()
            .find(|r| r.name == name)
            .map(|r| r.offset)
            .ok_or_else(|| format!("no csr register {name}"))
    }

    /// Installs (or with `free`, removes) a memory region through the
    /// csr's staging registers and `MR_COMMIT`, as a driver does.
    pub fn register_mr(&mut self, cfg: &Config, key: u32, base: u64, len: u64, access: u8) -> Result<(), String> {
        for (name, v) in [
            ("MR_KEY", key),
            ("MR_BASE_LO", base as u32),
            ("MR_BASE_HI", (base >> 32) as u32),
            ("MR_LEN_LO", len as u32),
            ("MR_LEN_HI", (len >> 32) as u32),
            ("MR_ACCESS", access as u32),
            ("MR_COMMIT", 1),
        ] {
            let a = self.reg(cfg, name)?;
            let resp = self.axil_write(a, v)?;
            if resp != 0 {
                return Err(format!("csr write {name} answered {resp}"));
            }
        }
        Ok(())
    }

    /// Queues a frame from the MAC of `plane`: it enters on `s_axis_*`, a
    /// beat per cycle as `tready` allows, while the clock runs (frames in
    /// the order queued, back to back). Not to be mixed with
    /// [`NicRig::send_frame`].
    pub fn queue_frame(&mut self, bytes: Vec<u8>, plane: u8) {
        if let Some(t) = &self.tcov {
            t.frame_in(&mut self.cov, &bytes);
        }
        if !bytes.is_empty() {
            self.inbound.push_back((bytes, plane));
        }
    }

    /// Frames queued and not yet wholly taken.
    pub fn inbound_len(&self) -> usize {
        self.inbound.len()
    }

    /// The current beat of the first queued frame on `s_axis_*`; `tvalid`
    /// low once the queue has emptied.
    fn drive_inbound(&mut self) {
        let [td, tk, tl, tid, tv, _] = self.sin;
        let Some((bytes, plane)) = self.inbound.front() else {
            if self.in_driving {
                set_u64(&mut self.ins[tv], 1, 0);
                self.in_driving = false;
            }
            return;
        };
        let bb = self.beat_bytes.max(1);
        let beat = &bytes[self.in_beat * bb..((self.in_beat + 1) * bb).min(bytes.len())];
        put_beat(&mut self.ins, td, tk, beat);
        let last = (self.in_beat + 1) * bb >= bytes.len();
        let plane = *plane as u64;
        set_u64(&mut self.ins[tl], 1, last as u64);
        set_u64(&mut self.ins[tid], self.ports[tid].width, plane);
        set_u64(&mut self.ins[tv], 1, 1);
        self.in_driving = true;
    }

    /// A frame from the MAC of `plane`, beat by beat (every byte kept).
    pub fn send_frame(&mut self, bytes: &[u8], plane: u8) -> Result<(), String> {
        if let Some(t) = &self.tcov {
            t.frame_in(&mut self.cov, bytes);
        }
        let (td, tk) = (self.idx("s_axis_tdata")?, self.idx("s_axis_tkeep")?);
        let ready = self.idx("s_axis_tready")?;
        let chunks: Vec<&[u8]> = bytes.chunks(self.beat_bytes.max(1)).collect();
        self.set("s_axis_tid", plane as u64)?;
        for (k, c) in chunks.iter().enumerate() {
            put_beat(&mut self.ins, td, tk, c);
            self.set("s_axis_tlast", (k + 1 == chunks.len()) as u64)?;
            self.handshake("s_axis_tvalid", ready, &format!("frame beat {k}"))?;
        }
        Ok(())
    }

    /// Clocks until nothing has left the top for `quiet` cycles and host
    /// memory has nothing outstanding; false if `limit` cycles pass first.
    pub fn drain(&mut self, quiet: u64, limit: u64) -> bool {
        let start = self.cycle;
        self.quiet = 0;
        while self.cycle - start < limit {
            self.clock();
            let reads = self.rmem.as_ref().map_or(0, |r| r.outstanding());
            if self.quiet >= quiet && self.wmem.outstanding() == 0 && reads == 0 {
                return true;
            }
        }
        false
    }
}

/// One beat's bytes on `tdata` (input `td`, lane 0 first) with their
/// `tkeep` bits (input `tk`), every other lane cleared.
fn put_beat(ins: &mut [Bits], td: usize, tk: usize, beat: &[u8]) {
    let d = &mut ins[td];
    d.0.iter_mut().for_each(|w| *w = 0);
    for (lane, b) in beat.iter().enumerate() {
        d.0[lane / 8] |= (*b as u64) << (8 * (lane % 8));
    }
    let k = &mut ins[tk];
    k.0.iter_mut().for_each(|w| *w = 0);
    for lane in 0..beat.len() {
        k.0[lane / 64] |= 1 << (lane % 64);
    }
}
