//! VCD windows of both sides: the RTL's through Verilator's tracing, the
//! model's through the `vcd` crate, with the same scopes and signal names
//! (`TOP.<port>` and `TOP.<block>.<port>`) and the same times, so the two
//! files open side by side in GTKWave or Surfer.
//!
//! Cycle `c` is 10 ns long: inputs change and outputs are compared at
//! `10c` ns with `clk` low; the rising edge is at `10c + 5` ns.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use mrnic_model::block::{Bits, PortDef};
use vcd::{IdCode, ReferenceIndex, TimescaleUnit, Value, VarType};

use crate::rtl::Rtl;
use crate::VerifError;

/// A cycle window being traced into two files.
pub struct Tracer {
    pub start: u64,
    /// Last cycle traced (inclusive).
    pub end: u64,
    pub rtl_path: PathBuf,
    pub model_path: PathBuf,
    model: ModelVcd,
    /// Trace time units per nanosecond.
    per_ns: u64,
    closed: bool,
}

impl Tracer {
    /// Opens both files; nothing is dumped until cycle `start`.
    pub fn open(
        rtl: &mut Rtl,
        ports: &[PortDef],
        block: &str,
        start: u64,
        end: u64,
        rtl_path: &Path,
        model_path: &Path,
    ) -> Result<Tracer, VerifError> {
        let precision = rtl.time_precision();
        let exp = (-9 - precision).clamp(0, 18) as u32;
        let per_ns = 10u64.pow(exp);
        rtl.trace_open(rtl_path)?;
        let model = ModelVcd::create(model_path, ports, block, precision)
            .map_err(|e| VerifError::Trace(format!("{}: {e}", model_path.display())))?;
        Ok(Tracer {
            start,
            end,
            rtl_path: rtl_path.to_path_buf(),
            model_path: model_path.to_path_buf(),
            model,
            per_ns,
            closed: false,
        })
    }

    pub fn active(&self, cycle: u64) -> bool {
        !self.closed && cycle >= self.start && cycle <= self.end
    }

    /// After the comparison of `cycle`: `values` holds the inputs and the
    /// model's outputs.
    pub fn dump_eval(&mut self, rtl: &mut Rtl, cycle: u64, model_values: &[Bits]) -> Result<(), VerifError> {
        if !self.active(cycle) {
            return Ok(());
        }
        let t = cycle * 10 * self.per_ns;
        rtl.trace_dump(t);
        self.model.dump(t, false, model_values).map_err(|e| VerifError::Trace(e.to_string()))
    }

    /// After the rising edge of `cycle`.
    pub fn dump_posedge(&mut self, rtl: &mut Rtl, cycle: u64) -> Result<(), VerifError> {
        if !self.active(cycle) {
            return Ok(());
        }
        let t = (cycle * 10 + 5) * self.per_ns;
        rtl.trace_dump(t);
        self.model.clock(t).map_err(|e| VerifError::Trace(e.to_string()))?;
        if cycle == self.end {
            self.close(rtl)?;
        }
        Ok(())
    }

    pub fn close(&mut self, rtl: &mut Rtl) -> Result<(), VerifError> {
        if !self.closed {
            self.closed = true;
            rtl.trace_close();
            self.model.finish().map_err(|e| VerifError::Trace(e.to_string()))?;
        }
        Ok(())
    }
}

/// The model's side: every port, plus `clk`.
struct ModelVcd {
    w: vcd::Writer<BufWriter<File>>,
    clk: IdCode,
    ids: Vec<IdCode>,
    widths: Vec<u32>,
    last: Vec<Option<Bits>>,
    last_clk: Option<bool>,
}

fn timescale(precision: i32) -> (u32, TimescaleUnit) {
    let p = precision.clamp(-15, 0);
    let (base, unit) = match p {
        -15..=-13 => (-15, TimescaleUnit::FS),
        -12..=-10 => (-12, TimescaleUnit::PS),
        -9..=-7 => (-9, TimescaleUnit::NS),
        -6..=-4 => (-6, TimescaleUnit::US),
        -3..=-1 => (-3, TimescaleUnit::MS),
        _ => (0, TimescaleUnit::S),
    };
    (10u32.pow((p - base) as u32), unit)
}

impl ModelVcd {
    fn create(path: &Path, ports: &[PortDef], block: &str, precision: i32) -> std::io::Result<ModelVcd> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut w = vcd::Writer::new(BufWriter::new(File::create(path)?));
        w.comment(&format!("cycle model of {block} (mrnic-verif)"))?;
        let (n, unit) = timescale(precision);
        w.timescale(n, unit)?;
        w.add_module("TOP")?;
        // Vectors carry their range, as Verilator writes them, so viewers
        // show the same names (`s_axis_data[99:0]`).
        let range = |width: u32| (width > 1).then(|| ReferenceIndex::Range(width as i32 - 1, 0));
        let clk = w.add_wire(1, "clk")?;
        let mut ids = Vec::new();
        for p in ports {
            ids.push(w.add_var(VarType::Wire, p.width, &p.name, range(p.width))?);
        }
        // The same signals again under the module's scope, as Verilator
        // writes them (aliases of the same id codes).
        w.add_module(block)?;
        w.var_def(VarType::Wire, 1, clk, "clk", None)?;
        for (p, id) in ports.iter().zip(&ids) {
            w.var_def(VarType::Wire, p.width, *id, &p.name, range(p.width))?;
        }
        w.upscope()?;
        w.upscope()?;
        w.enddefinitions()?;
        Ok(ModelVcd {
            w,
            clk,
            ids,
            widths: ports.iter().map(|p| p.width).collect(),
            last: vec![None; ports.len()],
            last_clk: None,
        })
    }

    fn dump(&mut self, t: u64, clk: bool, values: &[Bits]) -> std::io::Result<()> {
        self.w.timestamp(t)?;
        if self.last_clk != Some(clk) {
            self.w.change_scalar(self.clk, clk)?;
            self.last_clk = Some(clk);
        }
        for (i, v) in values.iter().enumerate() {
            if self.last[i].as_ref() == Some(v) {
                continue;
            }
            let width = self.widths[i];
            if width == 1 {
                self.w.change_scalar(self.ids[i], v.bit(0))?;
            } else {
                let bits = (0..width).rev().map(|b| if v.bit(b) { Value::V1 } else { Value::V0 });
                self.w.change_vector(self.ids[i], bits)?;
            }
            self.last[i] = Some(v.clone());
        }
        Ok(())
    }

    fn clock(&mut self, t: u64) -> std::io::Result<()> {
        self.w.timestamp(t)?;
        self.w.change_scalar(self.clk, true)?;
        self.last_clk = Some(true);
        Ok(())
    }

    fn finish(&mut self) -> std::io::Result<()> {
        self.w.flush()
    }
}
