//! The assembly of `tx_engine`: its thirteen clocked units as instances of
//! one netlist ([`mrnic_model::netlist::Netlist`], printed by
//! [`crate::netlist::build`]) on the engine's own ports
//! ([`mrnic_model::tx_engine::ports`]), joined by the engine's stores
//! (docs/architecture.md, tx_engine, "The assembly, store by store").
//!
//! Wired here: every unit, the engine ports a unit carries by the
//! engine's name (`s_open_*`, `s_wr_*`, `m_axi_*`, `m_axis_*`, `m_trd_*`
//! / `s_trd_*`, `m_psel_*` / `s_psel_*`, `m_cqe_*`, `port_ready`), and the
//! channels from one unit to one other (the acknowledgement unit's turns,
//! the scheduler's packet to the commit, the timer queues' heads and
//! pushes, the SACK's continuation, the walk's starts and flushes).
//! Everything else goes through the state instance ([`super::state`]:
//! the stores, the input registers, where several units meet), whose
//! ports [`state_ports`] derives from what is left here, so the netlist
//! passes [`Netlist::check`] by construction; an output the state does
//! not drive it would tie to 0 and name ([`modules`]; none is left).
//! `hdl/tests/tx_engine_assembly.rs` replays the model's `TxEngine` into
//! the assembled engine (`small`), every engine output every cycle. Not a
//! `gen::BLOCKS` row: `mrnic gen` writes it, with the top around it, for
//! the configs it fits (`small`); `default` is refused
//! ([`super::state::fits`]).

use mrnic_model::block::{Dir, PortDef};
use mrnic_model::netlist::{Netlist, Sink, Src};
use mrnic_model::tx_engine::TxEngineParams;
use mrnic_proto::Config;

use crate::{Header, Module, ModuleSig};

use super::{ack, commit, nack, open, output, post, probe, rto, sack, sched, stage, timer, walk};

/// Name of the assembled module (the model's block).
pub const NAME: &str = "tx_engine";

/// One unit: its instance name in the assembly, its module's ports and its
/// module.
pub struct Unit {
    pub inst: &'static str,
    pub ports: fn(&TxEngineParams) -> Vec<PortDef>,
    pub build: fn(&TxEngineParams) -> Module,
}

/// The units, in the order the assembly declares them: the post and the
/// setup where requests and records enter, the scheduler and the commit,
/// the PROBE send, the output stage, the acknowledgement unit and its
/// handlers, the completion walk.
pub const UNITS: [Unit; 13] = [
    Unit { inst: "post", ports: post::ports, build: post::build },
    Unit { inst: "open", ports: open::ports, build: open::build },
    Unit { inst: "sched", ports: sched::ports, build: sched::build },
    Unit { inst: "commit", ports: commit::ports, build: commit::build },
    Unit { inst: "probe", ports: probe::ports, build: probe::build },
    Unit { inst: "out", ports: output::ports, build: output::build },
    Unit { inst: "ack", ports: ack::ports, build: ack::build },
    Unit { inst: "rto", ports: rto::ports, build: rto::build },
    Unit { inst: "nack", ports: nack::ports, build: nack::build },
    Unit { inst: "sack", ports: sack::ports, build: sack::build },
    Unit { inst: "stage", ports: stage::ports, build: stage::build },
    Unit { inst: "timer", ports: timer::ports, build: timer::build },
    Unit { inst: "walk", ports: walk::ports, build: walk::build },
];

/// Wires every port of `inst` named `<prefix>_<x>` to the engine port of
/// the same name, in the port's direction, where the engine has one with
/// the same direction and width. Returns how many it wired.
fn to_engine(n: &mut Netlist<&'static str>, inst: &str, prefix: &str) -> usize {
    let ports: Vec<PortDef> = n.insts.iter().find(|i| i.name == inst).map(|i| i.ports.clone()).unwrap_or_default();
    let mut k = 0;
    for p in ports.iter().filter(|p| p.name == prefix || p.name.starts_with(&format!("{prefix}_"))) {
        let Some(top) = n.ports.iter().find(|t| t.name == p.name) else { continue };
        if top.dir != p.dir || top.width != p.width {
            continue;
        }
        match p.dir {
            Dir::In => n.wire(&p.name, &format!("{inst}.{}", p.name)),
            Dir::Out => n.wire(&format!("{inst}.{}", p.name), &p.name),
        }
        k += 1;
    }
    k
}

/// The units and the wires between them and to the engine's ports, before
/// the state instance takes what is left.
pub fn units_netlist(p: &TxEngineParams) -> Netlist<&'static str> {
    let mut n = Netlist::new(NAME);
    for d in mrnic_model::tx_engine::ports(p) {
        n.port(d);
    }
    for u in &UNITS {
        n.inst(u.inst, u.inst, (u.ports)(p));
    }
    // What every unit that takes it takes from the engine's own port.
    for u in &UNITS {
        for shared in ["rst", "ts_now"] {
            if (u.ports)(p).iter().any(|d| d.name == shared && d.dir == Dir::In) {
                n.wire(shared, &format!("{}.{shared}", u.inst));
            }
        }
    }
    // Engine ports a single unit carries.
    to_engine(&mut n, "open", "s_open");
    to_engine(&mut n, "post", "s_wr");
    to_engine(&mut n, "out", "m_axi");
    to_engine(&mut n, "out", "m_axis");
    to_engine(&mut n, "out", "cfg_src_mac");
    to_engine(&mut n, "out", "cfg_src_ip");
    to_engine(&mut n, "out", "cfg_udp_port");
    to_engine(&mut n, "sched", "m_trd");
    to_engine(&mut n, "sched", "s_trd");
    to_engine(&mut n, "sched", "m_psel");
    to_engine(&mut n, "sched", "s_psel");
    to_engine(&mut n, "sched", "port_ready");
    to_engine(&mut n, "walk", "m_cqe");
    // The counters are the state's: the engine shows each a cycle after
    // the unit's pulse, as the model's outputs show its `stats`.
    // One unit to one other.
    n.channel("sched", "m_commit", "commit", "s_commit");
    for h in ["rto", "nack", "sack", "stage", "timer"] {
        n.channel("ack", "m_go", h, "s_go");
    }
    n.channel("nack", "m_rnr", "timer", "s_rnr");
    n.wire("ack.m_rnr_tag", "nack.s_rnr_tag");
    n.wire("timer.m_rnr_full", "nack.s_rnr_full");
    n.wire("timer.m_rnr_head_valid", "ack.s_rnr_valid");
    n.wire("timer.m_rnr_head_until", "ack.s_rnr_until");
    n.wire("nack.m_rnr_valid", "ack.s_rnr_push");
    n.wire("timer.m_wp_head_valid", "ack.s_wp_valid");
    n.wire("timer.m_wp_head_at", "ack.s_wp_at");
    n.wire("timer.m_wp_full", "sched.s_wp_full");
    n.wire("sched.m_wprobe_valid", "timer.s_wp_valid");
    n.wire("sched.m_wprobe_conn", "timer.s_wp_conn");
    n.wire("ack.m_timer_at", "timer.s_wp_at");
    n.wire("ack.m_tail_conn", "timer.s_tail_conn");
    n.wire("open.m_hold_open", "ack.s_hold_open");
    n.wire("out.m_frames", "sched.frames");
    n.channel("stage", "m_done", "walk", "s_done");
    n.channel("sack", "m_cont", "stage", "s_cont");
    n.channel("stage", "m_cont", "ack", "s_cont");
    n.channel("timer", "m_tail", "stage", "s_tail");
    n.wire("sched.m_stat_wprobe_full", "timer.s_wp_refused");
    n.channel("sched", "m_probe", "probe", "s_probe");
    n.channel("post", "m_flush", "walk", "s_flush");
    n.wire("walk.m_cqe_room", "post.m_flush_room");
    n.wire("ack.m_free", "walk.ack_free");
    n.channel("out", "m_fail", "walk", "s_rdfail");
    n.channel("out", "m_fail", "post", "s_rdfail");
    n.channel("walk", "m_sw", "post", "s_sw");
    n.wire("open.m_wr_hold", "post.s_open_busy");
    n.wire("walk.m_walk_busy", "out.walk_busy");
    n
}

/// The ports of the state instance ([`super::state`]), derived from what
/// [`units_netlist`] leaves: an output `<inst>_<port>` for every unit input
/// nothing drives and every engine output of the same name, an input
/// `<inst>_<port>` for every unit output (the state observes handshakes a
/// unit-to-unit wire also carries) and every engine input, `rst` first.
/// The state generator can therefore not declare a port the units do not
/// have, and a unit's port change reaches it by name.
pub fn state_ports(p: &TxEngineParams) -> Vec<PortDef> {
    let n = units_netlist(p);
    let mut v: Vec<PortDef> = Vec::new();
    for d in n.ports.iter().filter(|d| d.dir == Dir::In) {
        v.push(d.clone());
    }
    for i in &n.insts {
        for d in i.ports.iter().filter(|d| d.dir == Dir::Out) {
            v.push(PortDef::input(
                format!("{}_{}", i.name, d.name),
                d.width,
                UNIT_OUTPUTS,
                format!("{}.{}: {}", i.name, d.name, d.comment),
            ));
        }
    }
    for (inst, port) in open_inputs(&n) {
        let d = n
            .insts
            .iter()
            .find(|i| i.name == inst)
            .and_then(|i| i.ports.iter().find(|d| d.name == port))
            .expect("an input");
        v.push(PortDef::output(
            format!("{inst}_{port}"),
            d.width,
            UNIT_INPUTS,
            format!("{inst}.{port}: {}", d.comment),
        ));
    }
    for name in open_outputs(&n) {
        v.push(n.ports.iter().find(|d| d.name == name).expect("an engine output").clone());
    }
    v
}

const UNIT_OUTPUTS: &str = "The units' outputs, observed";
const UNIT_INPUTS: &str = "The units' inputs the state drives";

/// The whole assembly: [`units_netlist`] and the state instance, every
/// port of the state wired by its name.
pub fn netlist(p: &TxEngineParams) -> Netlist<&'static str> {
    let mut n = units_netlist(p);
    let ports = state_ports(p);
    n.inst("state", super::state::NAME, ports.clone());
    for d in &ports {
        let (src, sink) = match d.name.split_once('_').filter(|(i, _)| UNITS.iter().any(|u| u.inst == *i)) {
            Some((i, rest)) => (format!("{i}.{rest}"), format!("{i}.{rest}")),
            None => (d.name.clone(), d.name.clone()),
        };
        match d.dir {
            Dir::In => n.wire(&src, &format!("state.{}", d.name)),
            Dir::Out => n.wire(&format!("state.{}", d.name), &sink),
        }
    }
    n
}

/// The assembled module and each module it instantiates, in instance
/// order (the units, then the state), with the state's outputs not built
/// yet (tied to 0 there; the assembly is not a block until this is empty).
pub fn modules(p: &TxEngineParams) -> Result<(Module, Vec<Module>, Vec<String>), String> {
    super::state::fits(p)?;
    let net = netlist(p);
    let mut kids: Vec<Module> = UNITS.iter().map(|u| (u.build)(p)).collect();
    let st = super::state::build(p, &state_ports(p));
    kids.push(st.module);
    let sigs: Vec<crate::ModuleSig> = kids.iter().map(|m| m.signature()).collect();
    let top = crate::netlist::build(&net, &sigs).map_err(|e| e.to_string())?;
    Ok((top, kids, st.pending))
}

/// The file header of every module of the assembly for `cfg` (a part of
/// `mrnic gen`'s output where the config fits it, [`super::state::fits`]).
pub fn header(cfg: &Config, module: &str) -> Header {
    Header::new(&format!("mrnic-hdl {NAME} assembly ({module}), config {}", cfg.name), &crate::gen::command(cfg, "DIR"))
}

/// Whether `cfg`'s sizes fit the assembly (`Err` says which store does
/// not), apart from bad params, which [`files`] reports.
pub fn fits(cfg: &Config) -> Result<(), String> {
    match TxEngineParams::from_config(cfg) {
        Ok(p) => super::state::fits(&p),
        Err(_) => Ok(()),
    }
}

/// The assembled engine for `cfg` printed: its signature, and one
/// `(file name, text)` per module, `tx_engine.v` first, then each unit's
/// and the state's. Refused while [`modules`] leaves a state output
/// unbuilt.
pub fn files(cfg: &Config) -> Result<(ModuleSig, Vec<(String, String)>), String> {
    let p = TxEngineParams::from_config(cfg).map_err(|e| e.to_string())?;
    let (top, kids, pending) = modules(&p)?;
    if !pending.is_empty() {
        return Err(format!("{NAME}: state outputs not built: {}", pending.join(", ")));
    }
    let mut out = Vec::new();
    for m in std::iter::once(&top).chain(kids.iter()) {
        let text = m.to_verilog(&header(cfg, m.name())).map_err(|e| e.to_string())?;
        out.push((format!("{}.v", m.name()), text));
    }
    Ok((top.signature(), out))
}

/// The unit inputs nothing drives yet, as `(instance, port)`.
pub fn open_inputs(n: &Netlist<&'static str>) -> Vec<(String, String)> {
    let mut v = Vec::new();
    for i in &n.insts {
        for p in i.ports.iter().filter(|p| p.dir == Dir::In) {
            let s = Sink::In(i.name.clone(), p.name.clone());
            if !n.drives.iter().any(|(x, _)| *x == s) {
                v.push((i.name.clone(), p.name.clone()));
            }
        }
    }
    v
}

/// The engine outputs nothing drives yet.
pub fn open_outputs(n: &Netlist<&'static str>) -> Vec<String> {
    n.ports
        .iter()
        .filter(|p| p.dir == Dir::Out && !n.drives.iter().any(|(x, _)| *x == Sink::Top(p.name.clone())))
        .map(|p| p.name.clone())
        .collect()
}

/// The engine inputs no unit reads yet.
pub fn unread_inputs(n: &Netlist<&'static str>) -> Vec<String> {
    n.ports
        .iter()
        .filter(|p| p.dir == Dir::In && !n.drives.iter().any(|(_, d)| d.src == Src::Top(p.name.clone())))
        .map(|p| p.name.clone())
        .collect()
}
