//! `verif_fifo`: the harness's own test design, a 4-entry FIFO with
//! valid/ready on both sides, a Mealy input ready and ports of every
//! Verilator width class (1, 12, 20, 40 and 100 bits). Its Verilog comes
//! from the hdl IR ([`module`]), its ports from [`ports`], its cycle model
//! is [`VerifFifo`].
//!
//! This file is also compiled into `build.rs` (for the port list and the
//! Verilog), so it uses nothing from the `mrnic-verif` crate.

use std::collections::HashMap;

use mrnic_hdl::{case, if_else, if_then, lit, set, zext, Header, Module, Reg, Signal};
use mrnic_model::block::{Bits, Block, Dir, PortDef};

/// Payload width: wider than 64 bits on purpose (a `VlWide<4>` port).
pub const DATA_W: u32 = 100;
/// Tag width: an `SData` port.
pub const TAG_W: u32 = 12;
/// Entries.
pub const DEPTH: usize = 4;

/// The Verilog text: (file name, text).
pub fn verilog() -> Result<Vec<(String, String)>, String> {
    let header = Header::new(
        "verif_fifo, the co-simulation test design (verif/src/designs/verif_fifo.rs)",
        "cargo build -p mrnic-verif",
    );
    let text = module().to_verilog(&header).map_err(|e| format!("verif_fifo: {e}"))?;
    Ok(vec![("verif_fifo.v".into(), text)])
}

/// The RTL, built with the hdl IR; its ports are declared from [`ports`].
pub fn module() -> Module {
    let mut m = Module::new("verif_fifo");
    m.describe(
        "the co-simulation harness's own test design: a 4-entry FIFO with valid/ready on both sides, \
         a Mealy input ready, and ports of every Verilator width class",
    );
    let data_w = m.param("DATA_W", u64::from(DATA_W), "payload bits (over 64 on purpose: a wide port)");
    let tag_w = m.param("TAG_W", u64::from(TAG_W), "tag bits");
    m.group("Clock and reset");
    let clk = m.input("clk", 1, "clock");
    let mut sig: HashMap<String, Signal> = HashMap::new();
    let mut group = "";
    for p in ports() {
        if p.group != group {
            group = p.group;
            if group != "Control" {
                m.group(group);
            }
        }
        let s = match (p.dir, p.width) {
            (Dir::In, w) if w == DATA_W => m.input(&p.name, &data_w, &p.comment),
            (Dir::In, w) if w == TAG_W => m.input(&p.name, &tag_w, &p.comment),
            (Dir::In, w) => m.input(&p.name, w, &p.comment),
            (Dir::Out, w) if w == DATA_W => m.output(&p.name, &data_w, &p.comment),
            (Dir::Out, w) if w == TAG_W => m.output(&p.name, &tag_w, &p.comment),
            (Dir::Out, w) => m.output(&p.name, w, &p.comment),
        };
        sig.insert(p.name.clone(), s);
    }
    let port = |n: &str| sig[n].clone();
    m.clock_domain(&clk, &port("rst"));

    let push = m.wire("push", 1, "an entry enters");
    let pop = m.wire("pop", 1, "the head leaves");
    let wr = m.reg("wr_ptr", 2, 0, "entry the next push writes");
    let rd = m.reg("rd_ptr", 2, 0, "head entry");
    let cnt = m.reg("count", 3, 0, "occupancy");
    let data: Vec<Reg> = (0..DEPTH).map(|i| m.reg_no_reset(&format!("data{i}"), &data_w, "entry payload")).collect();
    let tag: Vec<Reg> = (0..DEPTH).map(|i| m.reg_no_reset(&format!("tag{i}"), &tag_w, "entry tag")).collect();

    let (m_data, m_tag) = (port("m_axis_data"), port("m_axis_tag"));
    m.assign(port("m_axis_valid"), cnt.q.expr().ne(lit(3, 0)));
    m.comment("full, yet accepts when the head leaves in the same cycle");
    m.assign(port("s_axis_ready"), cnt.q.expr().ne(lit(3, DEPTH as u64)).logic_or(port("m_axis_ready")));
    m.assign(&push, port("s_axis_valid").expr().logic_and(port("s_axis_ready")));
    m.assign(&pop, port("m_axis_valid").expr().logic_and(port("m_axis_ready")));
    let arms = |f: &dyn Fn(usize) -> Vec<mrnic_hdl::Stmt>| (0..DEPTH).map(|i| (vec![lit(2, i as u64)], f(i))).collect();
    m.comb(vec![case(&rd.q, arms(&|i| vec![set(&m_data, &data[i].q), set(&m_tag, &tag[i].q)]), None)]);
    m.assign(port("m_axis_sum"), m_data.slice(39, 0) + zext(&m_tag, 40));
    m.assign(port("count"), zext(&cnt.q, 20));

    let (s_data, s_tag) = (port("s_axis_data"), port("s_axis_tag"));
    m.next(if_then(
        &push,
        vec![
            set(&wr.next, wr.q.expr() + lit(2, 1)),
            case(&wr.q, arms(&|i| vec![set(&data[i].next, &s_data), set(&tag[i].next, &s_tag)]), None),
        ],
    ));
    m.next(if_then(&pop, vec![set(&rd.next, rd.q.expr() + lit(2, 1))]));
    m.next(if_else(
        push.expr().logic_and(pop.expr().logic_not()),
        vec![set(&cnt.next, cnt.q.expr() + lit(3, 1))],
        vec![if_then(pop.expr().logic_and(push.expr().logic_not()), vec![set(&cnt.next, cnt.q.expr() - lit(3, 1))])],
    ));
    m
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
fn put(b: &mut Bits, width: u32, words: &[u64]) {
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
        // Registers without reset start at zero, as under Verilator's
        // --x-initial fast.
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
        put(&mut outputs[S_READY], 1, &[self.ready(inputs) as u64]);
        put(&mut outputs[M_VALID], 1, &[(self.count != 0) as u64]);
        put(&mut outputs[M_DATA], DATA_W, &head);
        put(&mut outputs[M_TAG], TAG_W, &[self.tag[self.rd]]);
        put(&mut outputs[M_SUM], 40, &[(head[0] & ((1 << 40) - 1)) + self.tag[self.rd]]);
        put(&mut outputs[COUNT], 20, &[self.count as u64]);
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
