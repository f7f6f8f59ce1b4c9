//! `enable_gate`: csr's `CONTROL.enable` applied where traffic enters the
//! core, one of `mrnic_core`'s glue blocks.
//!
//! # Function
//! While `cfg_enable` is low the core takes in nothing that makes traffic:
//! - **MAC receive** (`s_axis_*` -> `m_axis_*`, to rx_parser): a frame is
//!   passed or discarded whole, decided when its first beat is offered. A
//!   discarded frame is taken at one beat per cycle (`s_axis_tready` high)
//!   so the MAC never backs up behind a disabled core, and its last beat
//!   pulses `stat_rx_disabled` (csr's `CNT_RX_DISABLED`). Turning the
//!   enable on or off in the middle of a frame changes nothing for that
//!   frame: a frame is never cut, so rx_parser never sees half of one.
//! - **Work requests** (`s_wr_*` -> `m_wr_*`, to tx_engine): held back
//!   (`s_wr_ready` low), never dropped: a host request is not lost because
//!   the core was off. A request already offered to tx_engine while the
//!   enable was on stays offered until taken (AXI: a valid is not
//!   withdrawn).
//!
//! Everything else goes around the gate: the csr (so the driver can turn
//! the core on), connection setup and posted receives (set up before
//! enabling), and what tx_engine already holds, which it keeps sending and
//! retransmitting. Quiescing is: disable, then wait for the send
//! completions. `CONTROL.enable` resets to 0, so a core leaves reset off.
//!
//! # Timing
//! No added latency: valid, ready and data pass through in the same cycle.
//! A gated `valid` is the input's AND a decision; `s_axis_tready` and
//! `s_wr_ready` are the downstream ready (a register there) or a constant,
//! chosen by the decision. The decision is a register (`held`: a frame or
//! a request is under way, with the choice made for it) or `cfg_enable` (a
//! csr register), so no ready depends on a valid. `stat_rx_disabled` is a
//! register: it pulses the cycle after the discarded frame's last beat.

use mrnic_proto::Config;

use crate::block::{port_index, put, Bits, Block, Dir, PortDef};

/// Module name, shared with the Verilog.
pub const NAME: &str = "enable_gate";

/// Sizes of one `enable_gate`: the two channels it passes, as their
/// consumers (rx_parser, tx_engine) declare them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnableGateParams {
    /// rx_parser's `s_axis_*` ports.
    pub axis: Vec<PortDef>,
    /// tx_engine's `s_wr_*` ports.
    pub wr: Vec<PortDef>,
}

/// A config the block cannot be built for: one of its consumers' errors
/// (rx_parser's, tx_engine's), with the config field at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("enable_gate: {field} = {value}: {why}")]
pub struct ParamError {
    /// The config field at fault (dotted, as in the TOML).
    pub field: &'static str,
    pub value: u64,
    pub why: String,
}

impl EnableGateParams {
    pub fn from_config(cfg: &Config) -> Result<EnableGateParams, ParamError> {
        // The part is named in `why`: the field is not one of the gate's own.
        let rx = crate::rx_parser::RxParserParams::from_config(cfg).map_err(|e| ParamError {
            field: e.field,
            value: e.value,
            why: format!("rx_parser: {}", e.why),
        })?;
        let tx = crate::tx_engine::TxEngineParams::from_config(cfg).map_err(|e| ParamError {
            field: e.field,
            value: e.value,
            why: format!("tx_engine: {}", e.why),
        })?;
        let pick = |ports: Vec<PortDef>, prefix: &str| -> Vec<PortDef> {
            ports.into_iter().filter(|p| p.name.starts_with(prefix)).collect()
        };
        Ok(EnableGateParams {
            axis: pick(crate::rx_parser::ports(&rx), "s_axis_"),
            wr: pick(crate::tx_engine::ports(&tx), "s_wr_"),
        })
    }
}

/// The consumer's port `d` seen from the gate's output side: `s_X_f`
/// becomes `m_X_f` with the direction turned.
fn turned(d: &PortDef, group: &'static str) -> PortDef {
    let name = format!("m{}", &d.name[1..]);
    match d.dir {
        Dir::In => PortDef::output(name, d.width, group, d.comment.clone()),
        Dir::Out => PortDef::input(name, d.width, group, d.comment.clone()),
    }
}

/// The ports, in declaration order.
pub fn ports(p: &EnableGateParams) -> Vec<PortDef> {
    let mut v = vec![
        PortDef::input("rst", 1, "Clock and reset", "synchronous reset, active high"),
        PortDef::input("cfg_enable", 1, "Configuration", "CONTROL.enable (csr cfg_enable)"),
    ];
    for d in &p.axis {
        v.push(PortDef { group: "MAC receive (from the MAC)", ..d.clone() });
    }
    v.extend(p.axis.iter().map(|d| turned(d, "MAC receive (to rx_parser)")));
    for d in &p.wr {
        v.push(PortDef { group: "Work requests (from the host)", ..d.clone() });
    }
    v.extend(p.wr.iter().map(|d| turned(d, "Work requests (to tx_engine)")));
    v.push(PortDef::output("stat_rx_disabled", 1, "Counter pulse (csr)", "a frame was discarded whole: core disabled"));
    v
}

crate::port_ids!(struct Ids {
    rst, cfg_enable,
    s_axis_tvalid, s_axis_tready, s_axis_tlast, m_axis_tvalid, m_axis_tready,
    s_wr_valid, s_wr_ready, m_wr_valid, m_wr_ready,
    stat_rx_disabled,
});

/// The cycle model.
#[derive(Debug, Clone)]
pub struct EnableGate {
    ports: Vec<PortDef>,
    /// Port indices: (input, output) of every passed-through field.
    pass: Vec<(usize, usize)>,
    ids: Ids,
    /// A frame is under way (its first beat offered, its last not taken),
    /// with the choice made for it.
    rx_held: bool,
    rx_pass: bool,
    /// A request offered to tx_engine and not yet taken.
    wr_held: bool,
    stat: bool,
}

impl EnableGate {
    pub fn new(p: EnableGateParams) -> EnableGate {
        let ports = ports(&p);
        let ids = Ids::new(&ports);
        // Every input field of the two channels (data, keep, last, user,
        // id; the request's fields) goes straight through; the valids are
        // gated.
        let pass = ports
            .iter()
            .enumerate()
            .filter(|(k, d)| {
                d.dir == Dir::In
                    && (d.name.starts_with("s_axis_") || d.name.starts_with("s_wr_"))
                    && ![ids.s_axis_tvalid, ids.s_wr_valid].contains(k)
            })
            .map(|(k, d)| (k, port_index(&ports, &format!("m{}", &d.name[1..])).expect("the turned port")))
            .collect();
        EnableGate { ports, pass, ids, rx_held: false, rx_pass: false, wr_held: false, stat: false }
    }

    /// The receive decision this cycle: the held one inside a frame, the
    /// enable at a frame's first offer.
    fn rx_on(&self, enable: bool) -> bool {
        if self.rx_held {
            self.rx_pass
        } else {
            enable
        }
    }

    /// Work requests pass this cycle.
    fn wr_on(&self, enable: bool) -> bool {
        self.wr_held || enable
    }
}

impl Block for EnableGate {
    fn name(&self) -> &'static str {
        NAME
    }

    fn ports(&self) -> &[PortDef] {
        &self.ports
    }

    fn eval(&mut self, inputs: &[Bits], outputs: &mut [Bits]) {
        let a = self.ids;
        let on = |k: usize| inputs[k].bit(0);
        for &(i, o) in &self.pass {
            outputs[o].clone_from(&inputs[i]);
        }
        let rx = self.rx_on(on(a.cfg_enable));
        put(&self.ports, outputs, a.m_axis_tvalid, (on(a.s_axis_tvalid) && rx) as u64);
        put(&self.ports, outputs, a.s_axis_tready, (!rx || on(a.m_axis_tready)) as u64);
        let wr = self.wr_on(on(a.cfg_enable));
        put(&self.ports, outputs, a.m_wr_valid, (on(a.s_wr_valid) && wr) as u64);
        put(&self.ports, outputs, a.s_wr_ready, (wr && on(a.m_wr_ready)) as u64);
        put(&self.ports, outputs, a.stat_rx_disabled, self.stat as u64);
    }

    fn tick(&mut self, inputs: &[Bits]) {
        let a = self.ids;
        let on = |k: usize| inputs[k].bit(0);
        if on(a.rst) {
            self.rx_held = false;
            self.rx_pass = false;
            self.wr_held = false;
            self.stat = false;
            return;
        }
        let rx = self.rx_on(on(a.cfg_enable));
        let taken = on(a.s_axis_tvalid) && (!rx || on(a.m_axis_tready));
        self.stat = taken && !rx && on(a.s_axis_tlast);
        if on(a.s_axis_tvalid) {
            let ends = taken && on(a.s_axis_tlast);
            self.rx_held = !ends;
            self.rx_pass = rx;
        }
        let wr = self.wr_on(on(a.cfg_enable));
        self.wr_held = on(a.s_wr_valid) && wr && !on(a.m_wr_ready);
    }
}
