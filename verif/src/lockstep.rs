//! A model block and its Verilated twin, clocked together.
//!
//! Each cycle: the same inputs go to both; the model's `eval` and the RTL's
//! (clk low) compute the outputs; every output port is compared; then the
//! rising edge (`tick` / clk high). Comparison starts once a rising edge
//! has seen `rst` high (power-on state is X in the RTL; see
//! [`Options::compare_before_reset`]). The first mismatch stops the run with a
//! [`Mismatch`]: cycle, port, model and RTL values, the inputs of the last
//! cycles, and a VCD window of both sides around it.
//!
//! The window is written by replaying the run: when a VCD window is wanted
//! ([`Options::vcd_dir`] set), the harness logs every cycle's inputs (a few
//! words per cycle, up to [`Options::log_limit_words`]) and, on a mismatch,
//! runs a fresh model and a fresh RTL instance over the log with tracing on
//! for the window only, so tracing costs nothing until something fails.
//! [`Options::trace`] traces a window of the run itself. Without a VCD
//! directory nothing is logged: a mismatch report then has the inputs of
//! the last [`Options::history`] cycles only.
//!
//! Per cycle the harness copies nothing it can avoid (see
//! [`Lockstep::run`]): the stimulus writes the inputs into the buffer the
//! RTL reads and writes its outputs into, the model reads its inputs from
//! that buffer and writes its outputs into its own, and the compare walks
//! the output words in place.

use std::fmt;
use std::path::PathBuf;
use std::time::Instant;

use mrnic_model::block::{zero_values, Bits, Block, Dir, PortDef};

use crate::rtl::{check_ports, Rtl};
use crate::stimulus::{find_streams, Stimulus};
use crate::trace::Tracer;
use crate::VerifError;

/// Makes a fresh model (reset state): the harness needs a second one to
/// replay a mismatch into a VCD.
pub type ModelFactory = Box<dyn Fn() -> Box<dyn Block>>;

/// A traced window of the run: cycles `start..=end`.
#[derive(Clone, Debug)]
pub struct TraceWindow {
    pub start: u64,
    pub end: u64,
    /// The RTL's VCD; the model's goes beside it as `<stem>.model.vcd`.
    pub rtl: PathBuf,
}

impl TraceWindow {
    pub fn model_path(&self) -> PathBuf {
        model_vcd_path(&self.rtl)
    }
}

/// `out.vcd` -> `out.model.vcd`.
pub fn model_vcd_path(rtl: &std::path::Path) -> PathBuf {
    let stem = rtl.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_else(|| "trace".into());
    rtl.with_file_name(format!("{stem}.model.vcd"))
}

#[derive(Clone, Debug)]
pub struct Options {
    /// Cycles of inputs shown in a mismatch report.
    pub history: usize,
    /// Where a mismatch's VCD window is written (`None`: no VCD, and no
    /// input log: the run is cheaper).
    pub vcd_dir: Option<PathBuf>,
    /// Cycles before the mismatch in its VCD window.
    pub window_before: u64,
    /// Trace this window of the run (off by default).
    pub trace: Option<TraceWindow>,
    /// Input log size limit in 64-bit words; past it, a mismatch gets no
    /// VCD window (rerun with [`Options::trace`] around the cycle). The log
    /// is kept only with [`Options::vcd_dir`] set.
    pub log_limit_words: usize,
    /// Compare from cycle 0, before any reset. Off by default: registers
    /// have no initial values in the generated Verilog (X until `rst`;
    /// Verilator makes them 0), so until the first rising edge with `rst`
    /// high, the outputs of model and RTL are not defined to agree. Designs
    /// without a `rst` input are compared from cycle 0 regardless.
    pub compare_before_reset: bool,
    /// Skip the payload outputs of a valid/ready output stream while its
    /// valid is low (valid itself is always compared). Off by default:
    /// every output is compared every cycle, so the model must reproduce
    /// what the RTL shows on an idle stream (a stale FIFO head, or zeros).
    /// Turn it on only where the block's contract says idle payloads are
    /// don't-care.
    pub ignore_idle_payload: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            history: 8,
            vcd_dir: Some(std::env::temp_dir().join("mrnic-verif")),
            window_before: 32,
            trace: None,
            log_limit_words: 1 << 25,
            compare_before_reset: false,
            ignore_idle_payload: false,
        }
    }
}

/// Where a mismatch's VCD window went.
#[derive(Clone, Debug)]
pub struct VcdWindow {
    pub start: u64,
    pub end: u64,
    pub rtl: PathBuf,
    pub model: PathBuf,
}

/// The first cycle on which the model and the RTL disagreed.
#[derive(Clone, Debug)]
pub struct Mismatch {
    pub block: String,
    pub config: String,
    pub cycle: u64,
    /// The first differing output, in port order.
    pub port: String,
    /// The model's value.
    pub expected: Bits,
    /// The RTL's value.
    pub actual: Bits,
    /// Other outputs differing on the same cycle: (port, model, RTL).
    pub others: Vec<(String, Bits, Bits)>,
    /// Inputs of the last cycles, oldest first, this cycle last:
    /// (cycle, [(port, value)]).
    pub history: Vec<(u64, Vec<(String, Bits)>)>,
    pub seed: Option<u64>,
    /// Set when `port` is the payload of an output stream whose valid (this
    /// port) is low on both sides: a disagreement on an idle payload.
    pub idle_stream_valid: Option<String>,
    pub vcd: Option<VcdWindow>,
    /// Why no VCD window was written, if none was.
    pub vcd_error: Option<String>,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "lockstep mismatch: {} (config {}) at cycle {}, output `{}`",
            self.block, self.config, self.cycle, self.port
        )?;
        writeln!(f, "  expected (model): {:?}", self.expected)?;
        writeln!(f, "  actual   (RTL):   {:?}", self.actual)?;
        let xor = Bits(
            (0..self.expected.0.len().max(self.actual.0.len()))
                .map(|i| self.expected.0.get(i).unwrap_or(&0) ^ self.actual.0.get(i).unwrap_or(&0))
                .collect(),
        );
        writeln!(f, "  differing bits:   {xor:?}")?;
        for (p, m, r) in &self.others {
            writeln!(f, "  also differs: `{p}`: model {m:?}, RTL {r:?}")?;
        }
        if let Some(v) = &self.idle_stream_valid {
            writeln!(
                f,
                "  note: `{v}` is low on both sides, so this is the payload of an idle stream; if the block's \
                 contract makes it don't-care, compare with Options::ignore_idle_payload \
                 (mrnic cosim --idle-payload-dont-care); otherwise the model must show what the RTL shows"
            )?;
        }
        writeln!(f, "  inputs of the last {} cycles:", self.history.len())?;
        for (c, ins) in &self.history {
            let list = ins.iter().map(|(n, v)| format!("{n}={v:?}")).collect::<Vec<_>>().join(" ");
            writeln!(f, "    {c:>8}: {list}")?;
        }
        if let Some(s) = self.seed {
            writeln!(f, "  seed: {s}")?;
        }
        match (&self.vcd, &self.vcd_error) {
            (Some(w), _) => writeln!(
                f,
                "  VCD window, cycles {}..={} (cycle c starts at 10c ns, rising edge at 10c+5 ns):\n    RTL:   {}\n    model: {}",
                w.start,
                w.end,
                w.rtl.display(),
                w.model.display()
            )?,
            (None, Some(e)) => writeln!(f, "  no VCD window: {e}")?,
            (None, None) => {}
        }
        Ok(())
    }
}

impl std::error::Error for Mismatch {}

/// What a run did.
#[derive(Clone, Debug, Default)]
pub struct RunStats {
    pub cycles: u64,
    pub transactions: u64,
    pub seconds: f64,
}

impl RunStats {
    pub fn cycles_per_second(&self) -> f64 {
        self.cycles as f64 / self.seconds.max(1e-9)
    }
}

/// A model and its Verilated twin in lockstep.
pub struct Lockstep {
    make_model: ModelFactory,
    model: Box<dyn Block>,
    rtl: Rtl,
    config: String,
    ports: Vec<PortDef>,
    inputs: Vec<usize>,
    outputs: Vec<usize>,
    /// Inputs as driven (masked to their widths) and the RTL's outputs:
    /// the model reads its inputs here too.
    rtl_values: Vec<Bits>,
    /// The model's outputs (input entries unused, except while tracing).
    model_values: Vec<Bits>,
    /// (input port, its words) of every input.
    in_slots: Vec<(usize, usize)>,
    cycle: u64,
    /// Flat input words per cycle.
    in_words: usize,
    /// The inputs of the last `history` cycles, flat: cycle `c` at slot
    /// `c % history`.
    recent: Vec<u64>,
    /// Cycles in `recent` (at most `history`).
    recent_cycles: usize,
    history: usize,
    log: Option<Vec<u64>>,
    tracer: Option<Tracer>,
    /// The `rst` input, and whether a rising edge has seen it high.
    rst: Option<usize>,
    comparing: bool,
    /// Output payload port -> its stream's valid port (with
    /// `ignore_idle_payload`).
    payload_valid: Vec<Option<usize>>,
    opts: Options,
}

impl Lockstep {
    /// The model from `make_model` against the RTL of the same block built
    /// for `config`; their port lists must be identical.
    pub fn new(make_model: ModelFactory, config: &str, opts: Options) -> Result<Lockstep, VerifError> {
        let model = make_model();
        let mut rtl = Rtl::open(model.name(), config)?;
        let ports = model.ports().to_vec();
        check_ports(rtl.info(), &ports)?;
        let inputs: Vec<usize> = (0..ports.len()).filter(|&i| ports[i].dir == Dir::In).collect();
        let outputs: Vec<usize> = (0..ports.len()).filter(|&i| ports[i].dir == Dir::Out).collect();
        let in_slots: Vec<(usize, usize)> = inputs.iter().map(|&i| (i, ports[i].words().max(1))).collect();
        let in_words = in_slots.iter().map(|&(_, n)| n).sum();
        let history = opts.history.max(1);
        let rst = ports.iter().position(|p| p.name == "rst" && p.dir == Dir::In);
        let comparing = rst.is_none() || opts.compare_before_reset;
        let mut payload_valid = vec![None; ports.len()];
        if opts.ignore_idle_payload {
            for s in find_streams(&ports).iter().filter(|s| !s.into_block) {
                for &f in &s.fields {
                    payload_valid[f] = Some(s.valid);
                }
            }
        }
        let tracer = match &opts.trace {
            Some(w) => Some(Tracer::open(&mut rtl, &ports, model.name(), w.start, w.end, &w.rtl, &w.model_path())?),
            None => None,
        };
        Ok(Lockstep {
            make_model,
            model,
            rtl,
            config: config.into(),
            model_values: zero_values(&ports),
            rtl_values: zero_values(&ports),
            in_slots,
            ports,
            inputs,
            outputs,
            cycle: 0,
            in_words,
            recent: vec![0; history * in_words],
            recent_cycles: 0,
            history,
            log: (opts.vcd_dir.is_some() && opts.log_limit_words > 0).then(Vec::new),
            tracer,
            rst,
            comparing,
            payload_valid,
            opts,
        })
    }

    pub fn ports(&self) -> &[PortDef] {
        &self.ports
    }

    /// Whether outputs are compared yet (see [`Options::compare_before_reset`]).
    pub fn comparing(&self) -> bool {
        self.comparing
    }

    /// The next cycle to run.
    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    /// Evaluates one cycle on both sides with `inputs` (indexed like the
    /// ports; output entries ignored) and compares every output. Returns
    /// the values of all ports (inputs and the agreed outputs). Call
    /// [`Lockstep::tick`] next.
    pub fn eval(&mut self, inputs: &[Bits]) -> Result<&[Bits], Box<Mismatch>> {
        for &i in &self.inputs {
            copy_words(&mut self.rtl_values[i], &inputs[i]);
        }
        self.eval_in_place()?;
        Ok(&self.rtl_values)
    }

    /// [`Lockstep::eval`] on the inputs already in `rtl_values`.
    fn eval_in_place(&mut self) -> Result<(), Box<Mismatch>> {
        for &i in &self.inputs {
            self.rtl_values[i].truncate(self.ports[i].width);
        }
        self.rtl.comb(&mut self.rtl_values);
        self.model.eval(&self.rtl_values, &mut self.model_values);
        self.record_inputs();
        if let Some(t) = &mut self.tracer {
            // The model's trace shows its inputs too.
            for &i in &self.inputs {
                self.model_values[i].clone_from(&self.rtl_values[i]);
            }
            // Trace problems must not hide a mismatch; they show at close.
            let _ = t.dump_eval(&mut self.rtl, self.cycle, &self.model_values);
        }
        if self.comparing {
            if let Some(first) = self.outputs.iter().position(|&o| self.differs(o)) {
                return Err(Box::new(self.mismatch(first)));
            }
        }
        Ok(())
    }

    /// The rising edge on both sides.
    pub fn tick(&mut self) {
        self.model.tick(&self.rtl_values);
        self.rtl.posedge();
        if let Some(r) = self.rst {
            self.comparing |= self.rtl_values[r].bit(0);
        }
        if let Some(t) = &mut self.tracer {
            let _ = t.dump_posedge(&mut self.rtl, self.cycle);
        }
        self.cycle += 1;
    }

    /// Runs `cycles` cycles of `stim`, stopping at the first mismatch.
    /// The stimulus drives the inputs straight into the buffer the RTL and
    /// the model read (no copy); its output entries hold the last cycle's
    /// RTL outputs, which [`Stimulus::drive`] ignores.
    pub fn run(&mut self, stim: &mut dyn Stimulus, cycles: u64) -> Result<RunStats, Box<Mismatch>> {
        let start = Instant::now();
        for _ in 0..cycles {
            let cycle = self.cycle;
            stim.drive(cycle, &mut self.rtl_values);
            if let Err(mut m) = self.eval_in_place() {
                m.seed = stim.seed();
                return Err(m);
            }
            stim.observe(cycle, &self.rtl_values);
            self.tick();
        }
        Ok(RunStats { cycles, transactions: stim.transactions(), seconds: start.elapsed().as_secs_f64() })
    }

    /// Closes a run-time trace, and runs the RTL's `final` blocks.
    pub fn finish(&mut self) -> Result<(), VerifError> {
        if let Some(t) = &mut self.tracer {
            t.close(&mut self.rtl)?;
        }
        self.rtl.finish();
        Ok(())
    }

    /// Output `o` differs between the model and the RTL (and counts).
    fn differs(&self, o: usize) -> bool {
        if let Some(v) = self.payload_valid[o] {
            if !self.model_values[v].bit(0) && !self.rtl_values[v].bit(0) {
                return false;
            }
        }
        !same(&self.model_values[o], &self.rtl_values[o])
    }

    fn record_inputs(&mut self) {
        let slot = (self.cycle % self.history as u64) as usize * self.in_words;
        let flat = &mut self.recent[slot..slot + self.in_words];
        let mut at = 0;
        for &(i, n) in &self.in_slots {
            let v = &self.rtl_values[i].0;
            for k in 0..n {
                flat[at + k] = v.get(k).copied().unwrap_or(0);
            }
            at += n;
        }
        self.recent_cycles = (self.recent_cycles + 1).min(self.history);
        if let Some(log) = &mut self.log {
            if log.len() + self.in_words <= self.opts.log_limit_words {
                log.extend_from_slice(flat);
            } else {
                self.log = None;
            }
        }
    }

    fn unflatten(&self, flat: &[u64]) -> Vec<Bits> {
        let mut values = zero_values(&self.ports);
        let mut at = 0;
        for &i in &self.inputs {
            let n = self.ports[i].words().max(1);
            values[i] = Bits(flat[at..at + n].to_vec());
            at += n;
        }
        values
    }

    fn mismatch(&mut self, first: usize) -> Mismatch {
        let o = self.outputs[first];
        let others = self.outputs[first + 1..]
            .iter()
            .filter(|&&o| self.differs(o))
            .map(|&o| (self.ports[o].name.clone(), self.model_values[o].clone(), self.rtl_values[o].clone()))
            .collect();
        let n = self.recent_cycles as u64;
        let history = (self.cycle + 1 - n..=self.cycle)
            .map(|c| {
                let slot = (c % self.history as u64) as usize * self.in_words;
                let values = self.unflatten(&self.recent[slot..slot + self.in_words]);
                let named = self.inputs.iter().map(|&i| (self.ports[i].name.clone(), values[i].clone())).collect();
                (c, named)
            })
            .collect();
        let idle_stream_valid = find_streams(&self.ports)
            .into_iter()
            .find(|s| !s.into_block && s.fields.contains(&o))
            .filter(|s| !self.model_values[s.valid].bit(0) && !self.rtl_values[s.valid].bit(0))
            .map(|s| self.ports[s.valid].name.clone());
        let mut m = Mismatch {
            idle_stream_valid,
            block: self.model.name().to_string(),
            config: self.config.clone(),
            cycle: self.cycle,
            port: self.ports[o].name.clone(),
            expected: self.model_values[o].clone(),
            actual: self.rtl_values[o].clone(),
            others,
            history,
            seed: None,
            vcd: None,
            vcd_error: None,
        };
        match &self.opts.vcd_dir {
            None => m.vcd_error = Some("no VCD directory set (Options::vcd_dir)".into()),
            Some(dir) => match self.replay_window(dir.clone()) {
                Ok(w) => m.vcd = Some(w),
                Err(e) => m.vcd_error = Some(e),
            },
        }
        m
    }

    /// Replays the logged inputs into a fresh model and RTL, tracing the
    /// window that ends at the current (mismatching) cycle.
    fn replay_window(&self, dir: PathBuf) -> Result<VcdWindow, String> {
        let Some(log) = &self.log else {
            // (With a VCD directory set the log is kept until its limit.)
            return Err(format!(
                "the input log passed its limit of {} words; rerun with a trace window ending at cycle {}",
                self.opts.log_limit_words, self.cycle
            ));
        };
        let k = self.cycle;
        let start = k.saturating_sub(self.opts.window_before);
        let name = format!("{}-{}-cycle{k}", self.model.name(), self.config);
        let rtl_path = dir.join(format!("{name}.vcd"));
        let model_path = model_vcd_path(&rtl_path);
        let mut model = (self.make_model)();
        let mut rtl = Rtl::open(model.name(), &self.config).map_err(|e| e.to_string())?;
        let mut tracer = Tracer::open(&mut rtl, &self.ports, model.name(), start, k, &rtl_path, &model_path)
            .map_err(|e| e.to_string())?;
        let mut reproduced = false;
        for c in 0..=k {
            let flat = &log[c as usize * self.in_words..(c as usize + 1) * self.in_words];
            let inputs = self.unflatten(flat);
            let mut outs = inputs.clone();
            model.eval(&inputs, &mut outs);
            let mut rtl_values = inputs.clone();
            rtl.comb(&mut rtl_values);
            tracer.dump_eval(&mut rtl, c, &outs).map_err(|e| e.to_string())?;
            if c == k {
                reproduced = self.outputs.iter().any(|&o| {
                    let idle = self.payload_valid[o].is_some_and(|v| !outs[v].bit(0) && !rtl_values[v].bit(0));
                    !idle && !same(&outs[o], &rtl_values[o])
                });
                break;
            }
            model.tick(&inputs);
            rtl.posedge();
            tracer.dump_posedge(&mut rtl, c).map_err(|e| e.to_string())?;
        }
        tracer.close(&mut rtl).map_err(|e| e.to_string())?;
        if !reproduced {
            return Err(format!(
                "the replay did not reproduce the mismatch (is the model deterministic, and does the factory \
                 make a fresh one?); its VCDs are {} and {}",
                rtl_path.display(),
                model_path.display()
            ));
        }
        Ok(VcdWindow { start, end: k, rtl: rtl_path, model: model_path })
    }
}

/// Equal values, ignoring missing high words (a value may carry fewer
/// words than its port). Word by word: most ports are one word, and a
/// slice compare would call `memcmp` for each.
#[inline]
fn same(a: &Bits, b: &Bits) -> bool {
    if a.0.len() == b.0.len() {
        return a.0.iter().zip(&b.0).all(|(x, y)| x == y);
    }
    (0..a.0.len().max(b.0.len())).all(|i| a.0.get(i).unwrap_or(&0) == b.0.get(i).unwrap_or(&0))
}

/// `dst = src`, reusing `dst`'s words (a word loop: `clone_from` would
/// call `memcpy` for one or two words).
#[inline]
fn copy_words(dst: &mut Bits, src: &Bits) {
    if dst.0.len() != src.0.len() {
        dst.0.resize(src.0.len(), 0);
    }
    for (d, s) in dst.0.iter_mut().zip(&src.0) {
        *d = *s;
    }
}

/// Something clocked that [`run_alone`] can drive: the model or the RTL.
pub trait Dut {
    /// Inputs in `values` in, outputs into `values`.
    fn eval(&mut self, values: &mut [Bits]);
    fn tick(&mut self, values: &[Bits]);
}

impl Dut for Rtl {
    fn eval(&mut self, values: &mut [Bits]) {
        self.comb(values);
    }
    fn tick(&mut self, _values: &[Bits]) {
        self.posedge();
    }
}

/// A model as a [`Dut`].
pub struct ModelDut {
    model: Box<dyn Block>,
    /// Copies of the input ports' values (the model writes its outputs
    /// into the caller's values, so it cannot read from them too).
    inputs: Vec<Bits>,
    input_ports: Vec<usize>,
}

impl ModelDut {
    pub fn new(model: Box<dyn Block>) -> ModelDut {
        let inputs = zero_values(model.ports());
        let input_ports = (0..model.ports().len()).filter(|&i| model.ports()[i].dir == Dir::In).collect();
        ModelDut { model, inputs, input_ports }
    }
}

impl Dut for ModelDut {
    fn eval(&mut self, values: &mut [Bits]) {
        for &i in &self.input_ports {
            copy_words(&mut self.inputs[i], &values[i]);
        }
        self.model.eval(&self.inputs, values);
    }
    fn tick(&mut self, _values: &[Bits]) {
        self.model.tick(&self.inputs);
    }
}

/// Runs one side alone with `stim` (for speed comparisons).
pub fn run_alone(dut: &mut dyn Dut, ports: &[PortDef], stim: &mut dyn Stimulus, cycles: u64) -> RunStats {
    let start = Instant::now();
    let mut values = zero_values(ports);
    for c in 0..cycles {
        stim.drive(c, &mut values);
        dut.eval(&mut values);
        stim.observe(c, &values);
        dut.tick(&values);
    }
    RunStats { cycles, transactions: stim.transactions(), seconds: start.elapsed().as_secs_f64() }
}

/// A model that is right except for one bit of one output in one cycle:
/// the deliberately broken model the harness must catch (its tests check
/// the report names that cycle and port and writes the VCD window).
pub struct FlipBit {
    inner: Box<dyn Block>,
    port: usize,
    bit: u32,
    at: u64,
    cycle: u64,
}

impl FlipBit {
    /// `inner`, with bit `bit` of output `port` flipped in cycle `at`.
    pub fn new(inner: Box<dyn Block>, port: usize, bit: u32, at: u64) -> FlipBit {
        FlipBit { inner, port, bit, at, cycle: 0 }
    }
}

impl Block for FlipBit {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn ports(&self) -> &[PortDef] {
        self.inner.ports()
    }
    fn eval(&mut self, inputs: &[Bits], outputs: &mut [Bits]) {
        self.inner.eval(inputs, outputs);
        if self.cycle == self.at {
            outputs[self.port].0[(self.bit / 64) as usize] ^= 1 << (self.bit % 64);
        }
    }
    fn tick(&mut self, inputs: &[Bits]) {
        self.inner.tick(inputs);
        self.cycle += 1;
    }
}
