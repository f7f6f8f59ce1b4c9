//! A Verilated design driven from Rust, port by port or all at once.
//!
//! The designs are those of the table in `verif/build.rs`; each is opened
//! by block and config name. Port indices are the model's ([`PortDef`]
//! order, `clk` excluded), so a model and its twin share one index space.

use std::path::Path;

use mrnic_model::block::{Bits, Dir, PortDef};

use crate::VerifError;

/// A port of a Verilated design.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortInfo {
    pub name: &'static str,
    pub input: bool,
    pub width: u32,
}

/// One row of the design table, as built.
#[derive(Debug)]
pub struct DesignInfo {
    pub block: &'static str,
    pub config: &'static str,
    /// Hash of the config's TOML ([`crate::blocks::config_fingerprint`]);
    /// empty for designs without a config.
    pub config_fingerprint: &'static str,
    /// The Verilated class, `V<block>_<config>`.
    pub prefix: &'static str,
    /// The cache key the build used.
    pub key: &'static str,
    /// `Err` holds the build's error output.
    pub status: Result<(), &'static str>,
    pub ports: &'static [PortInfo],
}

mod generated {
    use super::{DesignInfo, PortInfo};
    include!(concat!(env!("OUT_DIR"), "/designs.rs"));
}

/// Every design of this build (empty without Verilator).
pub fn designs() -> &'static [DesignInfo] {
    generated::DESIGNS
}

/// Where the build keeps the Verilated models (`<target>/verilated`), when
/// Verilator was found at build time.
pub fn cache_dir() -> Option<std::path::PathBuf> {
    option_env!("MRNIC_VERIF_CACHE").map(std::path::PathBuf::from)
}

/// Why no design can run here, or `None` when Verilated designs are linked.
pub fn unavailable() -> Option<&'static str> {
    if cfg!(verilator) && generated::LINKED {
        None
    } else {
        Some(generated::NOT_LINKED_REASON)
    }
}

/// For tests: `true` (after printing "skipped: ...") when Verilator was
/// not installed at build time. `CI=true` builds fail instead of skipping.
pub fn skip_without_verilator() -> bool {
    match unavailable() {
        Some(why) => {
            println!("skipped: verilator not installed ({why})");
            true
        }
        None => false,
    }
}

/// The design of `block` built for `config`.
pub fn find(block: &str, config: &str) -> Result<&'static DesignInfo, VerifError> {
    if let Some(why) = unavailable() {
        return Err(VerifError::NotBuilt(why.to_string()));
    }
    let d =
        designs().iter().find(|d| d.block == block && d.config == config).ok_or_else(|| VerifError::UnknownDesign {
            block: block.into(),
            config: config.into(),
            have: designs().iter().map(|d| format!("{} ({})", d.block, d.config)).collect::<Vec<_>>().join(", "),
        })?;
    if let Err(e) = d.status {
        return Err(VerifError::BuildFailed { block: block.into(), config: config.into(), message: e.into() });
    }
    Ok(d)
}

/// Checks that a model's ports are the design's: same names, order,
/// directions and widths.
pub fn check_ports(info: &DesignInfo, model: &[PortDef]) -> Result<(), VerifError> {
    let mut problems = Vec::new();
    if model.len() != info.ports.len() {
        problems.push(format!("the model has {} ports, the RTL table {}", model.len(), info.ports.len()));
    }
    for (m, r) in model.iter().zip(info.ports) {
        if m.name != r.name || (m.dir == Dir::In) != r.input || m.width != r.width {
            let d = |i: bool| if i { "in" } else { "out" };
            problems.push(format!(
                "model `{}` {} [{}] vs RTL `{}` {} [{}]",
                m.name,
                d(m.dir == Dir::In),
                m.width,
                r.name,
                d(r.input),
                r.width
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(VerifError::PortMismatch { block: info.block.into(), detail: problems.join("; ") })
    }
}

#[cfg(verilator)]
type Backend = cxx::UniquePtr<crate::ffi::bridge::Sim>;
#[cfg(not(verilator))]
type Backend = ();

/// A running Verilated design.
pub struct Rtl {
    sim: Backend,
    info: &'static DesignInfo,
    /// Words of each port, and its offset in the flat input or output buffer.
    slots: Vec<(usize, usize)>,
    /// (port, words, offset) of the inputs, and of the outputs.
    in_slots: Vec<(usize, usize, usize)>,
    out_slots: Vec<(usize, usize, usize)>,
    in_buf: Vec<u64>,
    out_buf: Vec<u64>,
}

impl Rtl {
    /// Opens a fresh instance (its own `VerilatedContext`) of `block` built
    /// for `config`.
    pub fn open(block: &str, config: &str) -> Result<Rtl, VerifError> {
        let info = find(block, config)?;
        let sim = new_backend(info)?;
        let (mut ins, mut outs) = (0, 0);
        let mut slots = Vec::with_capacity(info.ports.len());
        for p in info.ports {
            let words = p.width.div_ceil(64) as usize;
            let at = if p.input { &mut ins } else { &mut outs };
            slots.push((words, *at));
            *at += words;
        }
        let pick = |input: bool| {
            (0..slots.len()).filter(|&i| info.ports[i].input == input).map(|i| (i, slots[i].0, slots[i].1)).collect()
        };
        let (in_slots, out_slots) = (pick(true), pick(false));
        Ok(Rtl { sim, info, slots, in_slots, out_slots, in_buf: vec![0; ins], out_buf: vec![0; outs] })
    }

    pub fn info(&self) -> &'static DesignInfo {
        self.info
    }

    pub fn ports(&self) -> &'static [PortInfo] {
        self.info.ports
    }

    /// Sets one input port (the value's words beyond the port's are ignored).
    pub fn set_input(&mut self, idx: usize, value: &Bits) {
        let p = &self.info.ports[idx];
        assert!(p.input, "set_input on output port `{}`", p.name);
        let mut words = value.0.clone();
        words.resize(self.slots[idx].0, 0);
        backend::set_input(&mut self.sim, idx, &words);
    }

    /// Reads one port (outputs after [`Rtl::eval`]; inputs read back).
    pub fn output(&self, idx: usize) -> Bits {
        let mut b = Bits(vec![0; self.slots[idx].0]);
        backend::get_output(&self.sim, idx, &mut b.0);
        b
    }

    pub fn eval(&mut self) {
        backend::eval(&mut self.sim);
    }

    /// Drives `clk`; call [`Rtl::eval`] after it.
    pub fn clock(&mut self, level: bool) {
        backend::clock(&mut self.sim, level);
    }

    /// The first half of a cycle: `clk` low, every input of `values` set,
    /// eval, every output of `values` read back. `values` is indexed like
    /// the ports; one call across the bridge.
    pub fn comb(&mut self, values: &mut [Bits]) {
        for &(i, n, at) in &self.in_slots {
            let src = &values[i].0;
            for k in 0..n {
                self.in_buf[at + k] = src.get(k).copied().unwrap_or(0);
            }
        }
        backend::comb(&mut self.sim, &self.in_buf, &mut self.out_buf);
        // Word by word into the words already there (no `memcpy` call per
        // port of one or two words).
        for &(i, n, at) in &self.out_slots {
            let dst = &mut values[i].0;
            if dst.len() != n {
                dst.resize(n, 0);
            }
            for (d, s) in dst.iter_mut().zip(&self.out_buf[at..at + n]) {
                *d = *s;
            }
        }
    }

    /// Sets every input of `values` (indexed like the ports) in one call.
    pub fn set_inputs(&mut self, values: &[Bits]) {
        for (i, p) in self.info.ports.iter().enumerate() {
            if p.input {
                let (n, at) = self.slots[i];
                for k in 0..n {
                    self.in_buf[at + k] = values[i].0.get(k).copied().unwrap_or(0);
                }
            }
        }
        backend::set_inputs(&mut self.sim, &self.in_buf);
    }

    /// Reads every output into `values` (indexed like the ports) in one call.
    pub fn get_outputs(&mut self, values: &mut [Bits]) {
        backend::get_outputs(&self.sim, &mut self.out_buf);
        for (i, p) in self.info.ports.iter().enumerate() {
            if !p.input {
                let (n, at) = self.slots[i];
                values[i].0.resize(n, 0);
                values[i].0.copy_from_slice(&self.out_buf[at..at + n]);
            }
        }
    }

    /// The rising edge: `clk` high, eval.
    pub fn posedge(&mut self) {
        backend::posedge(&mut self.sim);
    }

    /// Starts a VCD of every signal (tracing is compiled in; this is the
    /// run-time switch).
    pub fn trace_open(&mut self, path: &Path) -> Result<(), VerifError> {
        backend::trace_open(&mut self.sim, path)
    }

    /// Dumps the signals at `time`, in units of [`Rtl::time_precision`].
    pub fn trace_dump(&mut self, time: u64) {
        backend::trace_dump(&mut self.sim, time);
    }

    pub fn trace_close(&mut self) {
        backend::trace_close(&mut self.sim);
    }

    /// Runs the design's `final` blocks.
    pub fn finish(&mut self) {
        backend::finish(&mut self.sim);
    }

    /// log10 of the trace time unit in seconds (-12: picoseconds).
    pub fn time_precision(&self) -> i32 {
        backend::time_precision(&self.sim)
    }
}

#[cfg(verilator)]
fn new_backend(info: &DesignInfo) -> Result<Backend, VerifError> {
    let sim =
        crate::ffi::bridge::new_sim(info.prefix).map_err(|e| VerifError::Open(info.prefix.into(), e.to_string()))?;
    if sim.port_count() != info.ports.len() {
        return Err(VerifError::Open(
            info.prefix.into(),
            format!("the shim bound {} ports, the table has {}", sim.port_count(), info.ports.len()),
        ));
    }
    Ok(sim)
}

#[cfg(not(verilator))]
fn new_backend(_info: &DesignInfo) -> Result<Backend, VerifError> {
    Err(VerifError::NotBuilt(generated::NOT_LINKED_REASON.into()))
}

#[cfg(verilator)]
mod backend {
    use std::path::Path;

    use super::Backend;
    use crate::VerifError;

    // The Rust side sizes every slice, so the shim's checks never fire;
    // a failure here is a bug in this file.
    pub fn set_input(s: &mut Backend, idx: usize, w: &[u64]) {
        s.pin_mut().set_input(idx, w).expect("shim set_input");
    }
    pub fn get_output(s: &Backend, idx: usize, w: &mut [u64]) {
        s.get_output(idx, w).expect("shim get_output");
    }
    pub fn set_inputs(s: &mut Backend, w: &[u64]) {
        s.pin_mut().set_inputs(w).expect("shim set_inputs");
    }
    pub fn get_outputs(s: &Backend, w: &mut [u64]) {
        s.get_outputs(w).expect("shim get_outputs");
    }
    pub fn eval(s: &mut Backend) {
        s.pin_mut().eval();
    }
    pub fn clock(s: &mut Backend, level: bool) {
        s.pin_mut().clock(level);
    }
    pub fn comb(s: &mut Backend, i: &[u64], o: &mut [u64]) {
        s.pin_mut().comb(i, o).expect("shim comb");
    }
    pub fn posedge(s: &mut Backend) {
        s.pin_mut().posedge();
    }
    pub fn trace_open(s: &mut Backend, path: &Path) -> Result<(), VerifError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| VerifError::Trace(format!("{}: {e}", dir.display())))?;
        }
        s.pin_mut().trace_open(&path.to_string_lossy()).map_err(|e| VerifError::Trace(e.to_string()))
    }
    pub fn trace_dump(s: &mut Backend, t: u64) {
        s.pin_mut().trace_dump(t);
    }
    pub fn trace_close(s: &mut Backend) {
        s.pin_mut().trace_close();
    }
    pub fn finish(s: &mut Backend) {
        s.pin_mut().finish();
    }
    pub fn time_precision(s: &Backend) -> i32 {
        s.time_precision()
    }
}

#[cfg(not(verilator))]
mod backend {
    //! Never reached: without Verilator no `Rtl` can be opened.
    use std::path::Path;

    use super::Backend;
    use crate::VerifError;

    pub fn set_input(_: &mut Backend, _: usize, _: &[u64]) {}
    pub fn get_output(_: &Backend, _: usize, _: &mut [u64]) {}
    pub fn set_inputs(_: &mut Backend, _: &[u64]) {}
    pub fn get_outputs(_: &Backend, _: &mut [u64]) {}
    pub fn eval(_: &mut Backend) {}
    pub fn clock(_: &mut Backend, _: bool) {}
    pub fn comb(_: &mut Backend, _: &[u64], _: &mut [u64]) {}
    pub fn posedge(_: &mut Backend) {}
    pub fn trace_open(_: &mut Backend, _: &Path) -> Result<(), VerifError> {
        Err(VerifError::NotBuilt("verilator not installed".into()))
    }
    pub fn trace_dump(_: &mut Backend, _: u64) {}
    pub fn trace_close(_: &mut Backend) {}
    pub fn finish(_: &mut Backend) {}
    pub fn time_precision(_: &Backend) -> i32 {
        -12
    }
}
