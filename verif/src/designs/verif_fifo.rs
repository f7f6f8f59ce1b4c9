//! `verif_fifo`: the harness's own test design, a 4-entry FIFO with
//! valid/ready on both sides, a Mealy input ready and ports of every
//! Verilator width class (1, 12, 20, 40 and 100 bits). Its Verilog is the
//! hand-written fixture `verif/designs/verif_fifo.v`, so the co-simulation
//! machinery is tested without depending on any generator.
//!
//! This file is also compiled into `build.rs` (for the port list and the
//! Verilog), so it uses nothing from the `mrnic-verif` crate.

use mrnic_model::block::{Bits, Block, PortDef};

/// Payload width: wider than 64 bits on purpose (a `VlWide<4>` port).
pub const DATA_W: u32 = 100;
/// Tag width: an `SData` port.
pub const TAG_W: u32 = 12;
/// Entries.
pub const DEPTH: usize = 4;

/// The Verilog text.
pub fn verilog() -> Vec<(String, String)> {
    vec![("verif_fifo.v".into(), include_str!("../../designs/verif_fifo.v").into())]
}

/// The ports, in the model's order (not the Verilog's: the shim maps by name).
pub fn ports() -> Vec<PortDef> {
    vec![
        PortDef::input("rst", 1, "Control", "synchronous reset, active high"),
        PortDef::input("s_axis_valid", 1, "Input stream", "input entry valid"),
        PortDef::output("s_axis_ready", 1, "Input stream", "not full, or the head leaves this cycle"),
        PortDef::input("s_axis_data", DATA_W, "Input stream", "payload"),
        PortDef::input("s_axis_tag", TAG_W, "Input stream", "tag"),
        PortDef::output("m_axis_valid", 1, "Output stream", "head valid"),
        PortDef::input("m_axis_ready", 1, "Output stream", "head accepted"),
        PortDef::output("m_axis_data", DATA_W, "Output stream", "head payload"),
        PortDef::output("m_axis_tag", TAG_W, "Output stream", "head tag"),
        PortDef::output("m_axis_sum", 40, "Output stream", "head payload[39:0] + tag"),
        PortDef::output("count", 20, "Status", "occupancy"),
    ]
}

/// Overwrites `b` with `words` masked to `width`, without allocating.
fn set(b: &mut Bits, width: u32, words: &[u64]) {
    b.0.clear();
    b.0.extend_from_slice(words);
    b.truncate(width);
}

const RST: usize = 0;
const S_VALID: usize = 1;
const S_READY: usize = 2;
const S_DATA: usize = 3;
const S_TAG: usize = 4;
const M_VALID: usize = 5;
const M_READY: usize = 6;
const M_DATA: usize = 7;
const M_TAG: usize = 8;
const M_SUM: usize = 9;
const COUNT: usize = 10;

/// The cycle model of `verif_fifo.v`.
pub struct VerifFifo {
    ports: Vec<PortDef>,
    data: [[u64; 2]; DEPTH],
    tag: [u64; DEPTH],
    wr: usize,
    rd: usize,
    count: usize,
}

impl Default for VerifFifo {
    fn default() -> Self {
        VerifFifo::new()
    }
}

impl VerifFifo {
    pub fn new() -> VerifFifo {
        // Verilator's --x-initial fast starts memories at zero.
        VerifFifo { ports: ports(), data: [[0; 2]; DEPTH], tag: [0; DEPTH], wr: 0, rd: 0, count: 0 }
    }

    fn ready(&self, inputs: &[Bits]) -> bool {
        self.count != DEPTH || inputs[M_READY].bit(0)
    }
}

impl Block for VerifFifo {
    fn name(&self) -> &'static str {
        "verif_fifo"
    }

    fn ports(&self) -> &[PortDef] {
        &self.ports
    }

    fn eval(&mut self, inputs: &[Bits], outputs: &mut [Bits]) {
        let head = self.data[self.rd];
        set(&mut outputs[S_READY], 1, &[self.ready(inputs) as u64]);
        set(&mut outputs[M_VALID], 1, &[(self.count != 0) as u64]);
        set(&mut outputs[M_DATA], DATA_W, &head);
        set(&mut outputs[M_TAG], TAG_W, &[self.tag[self.rd]]);
        set(&mut outputs[M_SUM], 40, &[(head[0] & ((1 << 40) - 1)) + self.tag[self.rd]]);
        set(&mut outputs[COUNT], 20, &[self.count as u64]);
    }

    fn tick(&mut self, inputs: &[Bits]) {
        let push = inputs[S_VALID].bit(0) && self.ready(inputs);
        let pop = self.count != 0 && inputs[M_READY].bit(0);
        if push {
            let d = &inputs[S_DATA].0;
            let word = |i: usize| d.get(i).copied().unwrap_or(0);
            self.data[self.wr] = [word(0), word(1) & ((1 << (DATA_W - 64)) - 1)];
            self.tag[self.wr] = inputs[S_TAG].as_u64() & ((1 << TAG_W) - 1);
        }
        if inputs[RST].bit(0) {
            self.wr = 0;
            self.rd = 0;
            self.count = 0;
            return;
        }
        if push {
            self.wr = (self.wr + 1) % DEPTH;
        }
        if pop {
            self.rd = (self.rd + 1) % DEPTH;
        }
        self.count = self.count + push as usize - pop as usize;
    }
}
