//! A typed model and its Verilated twin, for benches written against the
//! model's typed API (the golden-vector benches of `mrnic vectors check`).
//!
//! The bench keeps calling the model's typed methods (`outputs()`, state
//! readers); each clock goes to both sides through the ports, and every
//! output is compared every cycle, as in [`crate::Lockstep`]. So while
//! [`Twin::mismatch`] is `None`, every output the bench has read is also
//! what the RTL drove: the vectors ran through the RTL. The first
//! mismatch is kept (cycle, port, both values); the bench's own verdict
//! comes after it.

use mrnic_model::block::{zero_values, Bits, Block, Dir, PortDef};

use std::path::Path;

use crate::rtl::{check_ports, Rtl};
use crate::stimulus::find_streams;
use crate::trace::Tracer;
use crate::VerifError;

/// A model `M` and the RTL of the same block, clocked together.
pub struct Twin<M> {
    model: M,
    rtl: Rtl,
    outputs: Vec<usize>,
    inputs_idx: Vec<usize>,
    /// Inputs of the cycle; the bench's encoder fills them.
    inputs: Vec<Bits>,
    model_values: Vec<Bits>,
    rtl_values: Vec<Bits>,
    /// Output payload port -> its stream's valid (named in a mismatch).
    stream_valid: Vec<Option<usize>>,
    /// Payloads are compared only while their valid is high.
    idle_payload_dont_care: bool,
    rst: Option<usize>,
    comparing: bool,
    cycle: u64,
    mismatch: Option<String>,
    mismatch_at: Option<u64>,
    /// A VCD window being written ([`Twin::trace`]), and why one ended
    /// early.
    tracer: Option<Tracer>,
    trace_error: Option<String>,
}

impl<M: Block> Twin<M> {
    /// `model` against the RTL of its block built for `config`;
    /// `idle_payload_dont_care` as in [`crate::blocks::Session`].
    pub fn new(model: M, config: &str, idle_payload_dont_care: bool) -> Result<Twin<M>, VerifError> {
        let rtl = Rtl::open(model.name(), config)?;
        let ports = model.ports().to_vec();
        check_ports(rtl.info(), &ports)?;
        let mut stream_valid = vec![None; ports.len()];
        for s in find_streams(&ports).iter().filter(|s| !s.into_block) {
            for &f in &s.fields {
                stream_valid[f] = Some(s.valid);
            }
        }
        let rst = ports.iter().position(|p| p.name == "rst" && p.dir == Dir::In);
        Ok(Twin {
            outputs: (0..ports.len()).filter(|&i| ports[i].dir == Dir::Out).collect(),
            inputs_idx: (0..ports.len()).filter(|&i| ports[i].dir == Dir::In).collect(),
            inputs: zero_values(&ports),
            model_values: zero_values(&ports),
            rtl_values: zero_values(&ports),
            stream_valid,
            idle_payload_dont_care,
            comparing: rst.is_none(),
            rst,
            model,
            rtl,
            cycle: 0,
            mismatch: None,
            mismatch_at: None,
            tracer: None,
            trace_error: None,
        })
    }

    /// Writes cycles `start..=end` (the twin's count from its first
    /// clock) to two VCDs: the RTL's every signal, the hierarchy inside
    /// the block included, to `rtl_path`, the model's ports to
    /// `model_path` (same names and times, `crate::trace`).
    pub fn trace(&mut self, start: u64, end: u64, rtl_path: &Path, model_path: &Path) -> Result<(), VerifError> {
        let ports = self.model.ports().to_vec();
        let name = self.model.name();
        self.tracer = Some(Tracer::open(&mut self.rtl, &ports, name, start, end, rtl_path, model_path)?);
        Ok(())
    }

    /// Ends a VCD window (the files are complete after this), or says
    /// why it ended early.
    pub fn trace_close(&mut self) -> Result<(), VerifError> {
        if let Some(e) = self.trace_error.take() {
            return Err(VerifError::Trace(e));
        }
        match self.tracer.as_mut() {
            Some(t) => t.close(&mut self.rtl),
            None => Ok(()),
        }
    }

    pub fn model(&self) -> &M {
        &self.model
    }

    /// The model, for state the ports cannot set (the RTL does not see
    /// what is done through it).
    pub fn model_mut(&mut self) -> &mut M {
        &mut self.model
    }

    /// The input values of the next cycle, indexed like the ports.
    pub fn inputs_mut(&mut self) -> &mut [Bits] {
        &mut self.inputs
    }

    /// One cycle with the inputs set through [`Twin::inputs_mut`]: both
    /// sides evaluate, every output is compared, both take the edge.
    pub fn step(&mut self) {
        self.eval_both();
        self.edge();
    }

    /// Both sides evaluate [`Twin::inputs_mut`]; the first differing
    /// output is kept.
    fn eval_both(&mut self) {
        let ports = self.model.ports();
        for (i, v) in self.inputs.iter_mut().enumerate() {
            v.truncate(ports[i].width);
        }
        for (m, i) in self.model_values.iter_mut().zip(&self.inputs) {
            m.clone_from(i);
        }
        for (r, i) in self.rtl_values.iter_mut().zip(&self.inputs) {
            r.clone_from(i);
        }
        self.model.eval(&self.inputs, &mut self.model_values);
        self.rtl.comb(&mut self.rtl_values);
        if self.comparing && self.mismatch.is_none() {
            for &o in &self.outputs {
                if let Some(v) = self.stream_valid[o].filter(|_| self.idle_payload_dont_care) {
                    if !self.model_values[v].bit(0) && !self.rtl_values[v].bit(0) {
                        continue;
                    }
                }
                let (m, r) = (&self.model_values[o], &self.rtl_values[o]);
                if m != r {
                    // A payload's valid says whether the difference is on
                    // a transfer or on an idle channel.
                    let valid = self.stream_valid[o].map_or(String::new(), |v| {
                        format!(
                            " (`{}`: model {}, RTL {})",
                            self.model.ports()[v].name,
                            self.model_values[v].as_u64(),
                            self.rtl_values[v].as_u64()
                        )
                    });
                    self.mismatch_at = Some(self.cycle);
                    self.mismatch = Some(format!(
                        "RTL and model differ at cycle {} on `{}`: model {m:?}, RTL {r:?}{valid}",
                        self.cycle,
                        self.model.ports()[o].name
                    ));
                    break;
                }
            }
        }
        if let Some(t) = self.tracer.as_mut() {
            // A trace error ends the trace, not the run.
            if let Err(e) = t.dump_eval(&mut self.rtl, self.cycle, &self.model_values) {
                self.trace_error = Some(e.to_string());
                self.tracer = None;
            }
        }
    }

    /// The rising edge on both sides, with the inputs last evaluated.
    fn edge(&mut self) {
        self.model.tick(&self.inputs);
        self.rtl.posedge();
        if let Some(t) = self.tracer.as_mut() {
            if let Err(e) = t.dump_posedge(&mut self.rtl, self.cycle) {
                self.trace_error = Some(e.to_string());
                self.tracer = None;
            }
        }
        if let Some(r) = self.rst {
            self.comparing |= self.inputs[r].bit(0);
        }
        self.cycle += 1;
    }

    /// The first mismatch, if any.
    pub fn mismatch(&self) -> Option<&str> {
        self.mismatch.as_deref()
    }

    /// The cycle of the first mismatch, if any.
    pub fn mismatch_cycle(&self) -> Option<u64> {
        self.mismatch_at
    }

    pub fn cycles(&self) -> u64 {
        self.cycle
    }
}

/// The twin as one block, for benches written against the port interface
/// ([`Block`]): `eval` hands back the RTL's outputs (so the bench judges
/// what the RTL drove) after comparing them with the model's; `tick`
/// clocks both. The first mismatch is kept ([`Twin::mismatch`]).
impl<M: Block> Block for Twin<M> {
    fn name(&self) -> &'static str {
        self.model.name()
    }

    fn ports(&self) -> &[PortDef] {
        self.model.ports()
    }

    fn eval(&mut self, inputs: &[Bits], outputs: &mut [Bits]) {
        for &i in &self.inputs_idx {
            self.inputs[i].clone_from(&inputs[i]);
        }
        self.eval_both();
        for &o in &self.outputs {
            outputs[o].clone_from(&self.rtl_values[o]);
        }
    }

    fn tick(&mut self, inputs: &[Bits]) {
        for &i in &self.inputs_idx {
            self.inputs[i].clone_from(&inputs[i]);
        }
        self.edge();
    }
}
