//! A netlist of blocks, defined once: instances (each with its `ports()`),
//! the top's own ports, and which source drives each instance input and
//! each top output. The model simulates it block by block ([`Sim`], itself
//! a [`Block`]); the Verilog generator prints the same description as a
//! module of instances (`mrnic_hdl::netlist`). Neither side has a wiring of
//! its own, so the two cannot drift.
//!
//! A netlist has no logic: anything beyond a wire, a bit range of an
//! output or a constant is a glue block with a model and a generator of its
//! own. Every instance input and every top output is driven exactly once,
//! with the width it has; an instance output may stay open.
//!
//! # Simulation
//! [`Sim::eval`] evaluates the instances in their order, and repeats the
//! pass while any output changed (Mealy outputs such as `tready` depend on
//! inputs within the cycle, as the RTL's assigns do). It settles in at most
//! one pass per instance plus one unless the netlist has a combinational
//! loop, which is a design error and panics with the instance names.
//! [`Sim::tick`] clocks every instance with the inputs of the settled
//! cycle, so a harness calls `eval` then `tick` with the same top inputs,
//! as the [`Block`] contract says.

use std::fmt;

use crate::block::{port_index, zero_values, Bits, Block, Dir, PortDef};

/// Where a value comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Src {
    /// A top input port.
    Top(String),
    /// An instance's output port: (instance, port).
    Out(String, String),
    /// A constant of the sink's width.
    Const(u64),
}

/// A source and the bit range taken from it (`None`: all of it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drive {
    pub src: Src,
    /// `(lsb, width)`.
    pub range: Option<(u32, u32)>,
}

/// What a drive feeds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sink {
    /// An instance's input port: (instance, port).
    In(String, String),
    /// A top output port.
    Top(String),
}

/// One instance: a name, what it is (`K`, which the model and the
/// generator each turn into a block or a module), and its ports.
#[derive(Debug, Clone)]
pub struct InstDef<K> {
    pub name: String,
    pub kind: K,
    pub ports: Vec<PortDef>,
}

/// A netlist of `K` instances.
#[derive(Debug, Clone)]
pub struct Netlist<K> {
    pub name: &'static str,
    /// The top's ports (`clk` excluded, as for every block).
    pub ports: Vec<PortDef>,
    pub insts: Vec<InstDef<K>>,
    pub drives: Vec<(Sink, Drive)>,
}

/// A netlist that breaks a rule; the text says which and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("netlist {netlist}: {what}")]
pub struct NetlistError {
    pub netlist: String,
    pub what: String,
}

fn parse(end: &str) -> (Option<&str>, &str) {
    match end.split_once('.') {
        Some((i, p)) => (Some(i), p),
        None => (None, end),
    }
}

impl<K> Netlist<K> {
    pub fn new(name: &'static str) -> Netlist<K> {
        Netlist { name, ports: Vec::new(), insts: Vec::new(), drives: Vec::new() }
    }

    /// Adds a top port.
    pub fn port(&mut self, def: PortDef) {
        self.ports.push(def);
    }

    /// Adds an instance.
    pub fn inst(&mut self, name: &str, kind: K, ports: Vec<PortDef>) {
        self.insts.push(InstDef { name: name.into(), kind, ports });
    }

    fn sink(to: &str) -> Sink {
        match parse(to) {
            (Some(i), p) => Sink::In(i.into(), p.into()),
            (None, p) => Sink::Top(p.into()),
        }
    }

    fn src(from: &str) -> Src {
        match parse(from) {
            (Some(i), p) => Src::Out(i.into(), p.into()),
            (None, p) => Src::Top(p.into()),
        }
    }

    /// Wires `from` to `to`. Ends are `inst.port` or a top port's name.
    pub fn wire(&mut self, from: &str, to: &str) {
        self.drives.push((Self::sink(to), Drive { src: Self::src(from), range: None }));
    }

    /// Wires bits `lsb .. lsb + width` of `from` to `to`.
    pub fn slice(&mut self, from: &str, lsb: u32, width: u32, to: &str) {
        self.drives.push((Self::sink(to), Drive { src: Self::src(from), range: Some((lsb, width)) }));
    }

    /// Ties `to` to a constant.
    pub fn tie(&mut self, value: u64, to: &str) {
        self.drives.push((Self::sink(to), Drive { src: Src::Const(value), range: None }));
    }

    /// Wires every port `<from_prefix>_<x>` of instance `from` to the port
    /// `<to_prefix>_<x>` of instance `to` that exists, in the direction of
    /// the data (`valid` and the fields one way, `ready` the other): a
    /// valid/ready channel whose two ends use the same field names.
    /// Returns how many ports it wired.
    pub fn channel(&mut self, from: &str, from_prefix: &str, to: &str, to_prefix: &str) -> usize {
        let ports = |inst: &str| self.insts.iter().find(|i| i.name == inst).map(|i| i.ports.clone());
        let (Some(a), Some(b)) = (ports(from), ports(to)) else { return 0 };
        let mut n = 0;
        for pa in &a {
            let Some(x) = pa.name.strip_prefix(from_prefix).and_then(|x| x.strip_prefix('_')) else { continue };
            let Some(pb) = b.iter().find(|p| p.name == format!("{to_prefix}_{x}")) else { continue };
            let (fa, fb) = (format!("{from}.{}", pa.name), format!("{to}.{}", pb.name));
            match (pa.dir, pb.dir) {
                (Dir::Out, Dir::In) => self.wire(&fa, &fb),
                (Dir::In, Dir::Out) => self.wire(&fb, &fa),
                _ => continue,
            }
            n += 1;
        }
        n
    }

    /// Makes port `port` of instance `inst` a top port of the same name,
    /// width and direction, wired to it.
    pub fn export(&mut self, inst: &str, port: &str) {
        self.export_as(inst, port, port);
    }

    /// Makes port `port` of instance `inst` a top port named `name`, of the
    /// same width and direction, wired to it (two instances' ports of one
    /// name, such as two `s_open_*` channels, reach the top apart).
    pub fn export_as(&mut self, inst: &str, port: &str, name: &str) {
        let Some(def) =
            self.insts.iter().find(|i| i.name == inst).and_then(|i| i.ports.iter().find(|p| p.name == port))
        else {
            self.wire(&format!("{inst}.{port}"), name);
            return;
        };
        let mut def = def.clone();
        def.name = name.into();
        self.ports.push(def.clone());
        match def.dir {
            Dir::In => self.wire(name, &format!("{inst}.{port}")),
            Dir::Out => self.wire(&format!("{inst}.{port}"), name),
        }
    }

    /// Exports every port `<prefix>_<x>` of `inst` as `<to>_<x>`.
    pub fn export_channel(&mut self, inst: &str, prefix: &str, to: &str) {
        let names: Vec<String> = self
            .insts
            .iter()
            .find(|i| i.name == inst)
            .map(|i| {
                i.ports.iter().filter(|p| p.name.starts_with(&format!("{prefix}_"))).map(|p| p.name.clone()).collect()
            })
            .unwrap_or_default();
        for n in names {
            let top = format!("{to}{}", &n[prefix.len()..]);
            self.export_as(inst, &n, &top);
        }
    }

    /// Exports every port of `inst` that nothing drives (an input) or reads
    /// (an output) yet, under its own name.
    pub fn export_rest(&mut self, inst: &str) {
        let Some(i) = self.insts.iter().find(|i| i.name == inst) else { return };
        let rest: Vec<String> = i
            .ports
            .iter()
            .filter(|p| match p.dir {
                Dir::In => !self.drives.iter().any(|(s, _)| *s == Sink::In(inst.into(), p.name.clone())),
                Dir::Out => !self.drives.iter().any(|(_, d)| d.src == Src::Out(inst.into(), p.name.clone())),
            })
            .map(|p| p.name.clone())
            .collect();
        for p in rest {
            self.export(inst, &p);
        }
    }

    /// The netlist without the instances `remove`, named `name`: where a
    /// kept instance drove a removed one, the wire becomes a top output
    /// `<removed>_<port>` (what the removed input would have seen); where a
    /// removed instance drove a kept one, a top input of the same name
    /// (what its output would have been), one port per removed output
    /// however many sinks it fed. Top ports only the removed instances
    /// used go, and so do top outputs they drove. So a part of the top
    /// runs alone with its cut edges in the harness's hands, and the model
    /// and the printed module of the part have the same ports.
    pub fn cut(&self, remove: &[&str], name: &'static str) -> Result<Netlist<K>, NetlistError>
    where
        K: Clone,
    {
        self.check()?;
        for r in remove {
            if self.inst_index(r).is_none() {
                return Err(self.err(format!("no instance `{r}` to cut")));
            }
        }
        let gone = |i: &str| remove.contains(&i);
        let def = |i: &str, p: &str| {
            let inst = &self.insts[self.inst_index(i).expect("checked")];
            inst.ports.iter().find(|d| d.name == p).expect("checked").clone()
        };
        let cut_port = |i: &str, p: &str, dir: Dir| {
            let d = def(i, p);
            let comment = format!("cut edge: {i}.{p} ({})", d.comment);
            PortDef { name: format!("{i}_{p}"), dir, width: d.width, group: d.group, comment }
        };
        let mut n = Netlist::new(name);
        n.insts = self.insts.iter().filter(|i| !gone(&i.name)).cloned().collect();
        let mut added: Vec<PortDef> = Vec::new();
        for (sink, d) in &self.drives {
            let from_gone = matches!(&d.src, Src::Out(i, _) if gone(i));
            match sink {
                Sink::In(i, p) if gone(i) => {
                    // A kept instance's output into a removed input.
                    if let Src::Out(si, _) = &d.src {
                        if !gone(si) {
                            added.push(cut_port(i, p, Dir::Out));
                            n.drives.push((Sink::Top(format!("{i}_{p}")), d.clone()));
                        }
                    }
                }
                Sink::Top(_) if from_gone => {}
                _ if from_gone => {
                    let Src::Out(si, sp) = &d.src else { unreachable!("from_gone") };
                    let top = format!("{si}_{sp}");
                    if !added.iter().any(|a| a.name == top) {
                        added.push(cut_port(si, sp, Dir::In));
                    }
                    n.drives.push((sink.clone(), Drive { src: Src::Top(top), range: d.range }));
                }
                _ => n.drives.push((sink.clone(), d.clone())),
            }
        }
        let used = |p: &PortDef| match p.dir {
            Dir::In => n.drives.iter().any(|(_, d)| d.src == Src::Top(p.name.clone())),
            Dir::Out => n.drives.iter().any(|(s, _)| *s == Sink::Top(p.name.clone())),
        };
        let ports: Vec<PortDef> = self.ports.iter().filter(|p| used(p)).cloned().chain(added).collect();
        n.ports = ports;
        n.check()?;
        Ok(n)
    }

    fn err(&self, what: String) -> NetlistError {
        NetlistError { netlist: self.name.into(), what }
    }

    fn inst_index(&self, name: &str) -> Option<usize> {
        self.insts.iter().position(|i| i.name == name)
    }

    /// The width of a source, if it names an existing source port.
    fn src_width(&self, s: &Src) -> Result<Option<u32>, NetlistError> {
        match s {
            Src::Const(_) => Ok(None),
            Src::Top(p) => match self.ports.iter().find(|d| &d.name == p) {
                Some(d) if d.dir == Dir::In => Ok(Some(d.width)),
                _ => Err(self.err(format!("`{p}` is not a top input"))),
            },
            Src::Out(i, p) => {
                let inst = self.inst_index(i).ok_or_else(|| self.err(format!("no instance `{i}`")))?;
                match self.insts[inst].ports.iter().find(|d| &d.name == p) {
                    Some(d) if d.dir == Dir::Out => Ok(Some(d.width)),
                    _ => Err(self.err(format!("`{i}.{p}` is not an output"))),
                }
            }
        }
    }

    fn sink_width(&self, s: &Sink) -> Result<u32, NetlistError> {
        match s {
            Sink::Top(p) => match self.ports.iter().find(|d| &d.name == p) {
                Some(d) if d.dir == Dir::Out => Ok(d.width),
                _ => Err(self.err(format!("`{p}` is not a top output"))),
            },
            Sink::In(i, p) => {
                let inst = self.inst_index(i).ok_or_else(|| self.err(format!("no instance `{i}`")))?;
                match self.insts[inst].ports.iter().find(|d| &d.name == p) {
                    Some(d) if d.dir == Dir::In => Ok(d.width),
                    _ => Err(self.err(format!("`{i}.{p}` is not an input"))),
                }
            }
        }
    }

    /// The rules: names exist, instance names are unique, every instance
    /// input and top output is driven once, widths agree, constants fit.
    pub fn check(&self) -> Result<(), NetlistError> {
        for (k, i) in self.insts.iter().enumerate() {
            if self.insts[..k].iter().any(|j| j.name == i.name) {
                return Err(self.err(format!("two instances named `{}`", i.name)));
            }
            // A block with two ports of one name could not be wired or printed.
            for (q, p) in i.ports.iter().enumerate() {
                if i.ports[..q].iter().any(|o| o.name == p.name) {
                    return Err(self.err(format!("`{}` has two ports named `{}`", i.name, p.name)));
                }
            }
        }
        for (k, (sink, d)) in self.drives.iter().enumerate() {
            if self.drives[..k].iter().any(|(s, _)| s == sink) {
                return Err(self.err(format!("{} is driven twice", show_sink(sink))));
            }
            let w = self.sink_width(sink)?;
            let sw = self.src_width(&d.src)?;
            let got = match (d.range, sw) {
                (Some((lsb, width)), Some(full)) => {
                    if lsb + width > full {
                        return Err(self.err(format!("bits {lsb}+{width} of a {full}-bit source")));
                    }
                    width
                }
                (None, Some(full)) => full,
                (_, None) => {
                    let Src::Const(v) = d.src else { unreachable!("only constants have no width") };
                    if w < 64 && v >> w != 0 {
                        return Err(self.err(format!("constant {v} does not fit {}", show_sink(sink))));
                    }
                    w
                }
            };
            if got != w {
                return Err(self.err(format!("{} is {w} bits, its source {got}", show_sink(sink))));
            }
        }
        let driven = |s: &Sink| self.drives.iter().any(|(x, _)| x == s);
        for i in &self.insts {
            for p in i.ports.iter().filter(|p| p.dir == Dir::In) {
                if !driven(&Sink::In(i.name.clone(), p.name.clone())) {
                    return Err(self.err(format!("`{}.{}` is not driven", i.name, p.name)));
                }
            }
        }
        for p in self.ports.iter().filter(|p| p.dir == Dir::Out) {
            if !driven(&Sink::Top(p.name.clone())) {
                return Err(self.err(format!("top output `{}` is not driven", p.name)));
            }
        }
        Ok(())
    }
}

fn show_sink(s: &Sink) -> String {
    match s {
        Sink::In(i, p) => format!("`{i}.{p}`"),
        Sink::Top(p) => format!("top output `{p}`"),
    }
}

/// A resolved source: indices instead of names.
#[derive(Debug, Clone)]
enum Res {
    Top(usize),
    Out(usize, usize),
    Const(Bits),
}

#[derive(Debug, Clone)]
struct ResDrive {
    src: Res,
    range: Option<(u32, u32)>,
    width: u32,
    /// A whole source port of the sink's width: copied as it is.
    exact: bool,
}

/// Bits `lsb .. lsb + width` of `v`.
pub fn slice_bits(v: &Bits, lsb: u32, width: u32) -> Bits {
    let mut out = Bits::zero(width);
    out.set_slice(v, lsb, width);
    out
}

/// A netlist simulated block by block.
///
/// Values move port to port as they change: an instance's inputs are kept
/// equal to their sources at all times (a changed output or top input
/// writes through its drives, and marks each reader whose input changed),
/// so `eval` runs every block once and then only the blocks a change
/// reached, and no pass re-reads the unchanged drives.
pub struct Sim {
    name: &'static str,
    ports: Vec<PortDef>,
    names: Vec<String>,
    blocks: Vec<Box<dyn Block>>,
    ins: Vec<Vec<Bits>>,
    outs: Vec<Vec<Bits>>,
    /// Per instance: its outputs after its last `eval`, to see a change
    /// without allocating.
    before: Vec<Vec<Bits>>,
    /// Scratch for one drive's value.
    scratch: Bits,
    /// Every drive of an instance input: (instance, input port, drive).
    drives: Vec<(usize, usize, ResDrive)>,
    /// Per instance and output port: the drives it sources; and per
    /// instance, the output ports that source any.
    by_out: Vec<Vec<Vec<usize>>>,
    watched: Vec<Vec<usize>>,
    /// Per top port: the drives it sources; the top ports that source any.
    by_top: Vec<Vec<usize>>,
    top_watched: Vec<usize>,
    /// Top port values as last written through (`seen`), and whether any
    /// were yet (`primed`: the first `eval` writes every drive).
    seen: Vec<Bits>,
    primed: bool,
    /// Per instance: one of its inputs changed since it last ran.
    dirty: Vec<bool>,
    /// Top outputs: (port index, drive).
    top_plan: Vec<(usize, ResDrive)>,
}

impl fmt::Debug for Sim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sim").field("name", &self.name).field("instances", &self.names).finish_non_exhaustive()
    }
}

impl Sim {
    /// Checks `net` and builds it with `make` turning each instance into a
    /// block; a block's ports must be the ones its instance declared.
    pub fn new<K>(net: &Netlist<K>, mut make: impl FnMut(&InstDef<K>) -> Box<dyn Block>) -> Result<Sim, NetlistError> {
        net.check()?;
        let blocks: Vec<Box<dyn Block>> = net.insts.iter().map(&mut make).collect();
        for (b, i) in blocks.iter().zip(&net.insts) {
            if b.ports() != i.ports.as_slice() {
                return Err(net.err(format!("instance `{}`: the block's ports are not the declared ones", i.name)));
            }
        }
        let src_width = |s: &Res| match s {
            Res::Top(p) => Some(net.ports[*p].width),
            Res::Out(k, p) => Some(net.insts[*k].ports[*p].width),
            Res::Const(_) => None,
        };
        let resolve = |d: &Drive, width: u32| -> ResDrive {
            let src = match &d.src {
                Src::Top(p) => Res::Top(port_index(&net.ports, p).expect("checked")),
                Src::Out(i, p) => {
                    let k = net.inst_index(i).expect("checked");
                    Res::Out(k, port_index(&net.insts[k].ports, p).expect("checked"))
                }
                Src::Const(v) => Res::Const(Bits::from_u64(width, *v)),
            };
            let exact = d.range.is_none() && src_width(&src) == Some(width);
            ResDrive { src, range: d.range, width, exact }
        };
        let mut drives = Vec::new();
        let mut top_plan = Vec::new();
        for (sink, d) in &net.drives {
            match sink {
                Sink::In(i, p) => {
                    let k = net.inst_index(i).expect("checked");
                    let pi = port_index(&net.insts[k].ports, p).expect("checked");
                    drives.push((k, pi, resolve(d, net.insts[k].ports[pi].width)));
                }
                Sink::Top(p) => {
                    let pi = port_index(&net.ports, p).expect("checked");
                    top_plan.push((pi, resolve(d, net.ports[pi].width)));
                }
            }
        }
        let mut by_out: Vec<Vec<Vec<usize>>> = net.insts.iter().map(|i| vec![Vec::new(); i.ports.len()]).collect();
        let mut by_top = vec![Vec::new(); net.ports.len()];
        for (di, (_, _, d)) in drives.iter().enumerate() {
            match d.src {
                Res::Out(k, p) => by_out[k][p].push(di),
                Res::Top(p) => by_top[p].push(di),
                Res::Const(_) => {}
            }
        }
        let watched = by_out.iter().map(|v| (0..v.len()).filter(|&p| !v[p].is_empty()).collect()).collect();
        let top_watched = (0..by_top.len()).filter(|&p| !by_top[p].is_empty()).collect();
        Ok(Sim {
            name: net.name,
            ports: net.ports.clone(),
            names: net.insts.iter().map(|i| i.name.clone()).collect(),
            ins: net.insts.iter().map(|i| zero_values(&i.ports)).collect(),
            outs: net.insts.iter().map(|i| zero_values(&i.ports)).collect(),
            before: net.insts.iter().map(|i| zero_values(&i.ports)).collect(),
            scratch: Bits::zero(64),
            dirty: vec![false; net.insts.len()],
            seen: zero_values(&net.ports),
            primed: false,
            blocks,
            drives,
            by_out,
            watched,
            by_top,
            top_watched,
            top_plan,
        })
    }

    /// Writes `d`'s current value into `out`, in place.
    fn value_into(outs: &[Vec<Bits>], d: &ResDrive, top: &[Bits], out: &mut Bits) {
        let full = match &d.src {
            Res::Top(p) => &top[*p],
            Res::Out(i, p) => &outs[*i][*p],
            Res::Const(b) => {
                out.clone_from(b);
                return;
            }
        };
        match d.range {
            Some((lsb, w)) => out.set_slice(full, lsb, w),
            None => {
                out.clone_from(full);
                out.truncate(d.width);
            }
        }
    }

    /// Writes drive `di` through to its instance input; marks the
    /// instance dirty if the input changed.
    fn apply(&mut self, di: usize, top: &[Bits]) {
        let (k, pi, ref d) = self.drives[di];
        let dst = &mut self.ins[k][pi];
        if d.exact {
            let src = match d.src {
                Res::Top(p) => &top[p],
                Res::Out(i, p) => &self.outs[i][p],
                Res::Const(_) => unreachable!("a constant is never exact"),
            };
            debug_assert!(
                src.0.len() == d.width.div_ceil(64).max(1) as usize
                    && (d.width % 64 == 0 || src.0.last().is_some_and(|w| w >> (d.width % 64) == 0)),
                "netlist {}: a value wider than its {}-bit port",
                self.name,
                d.width
            );
            if dst != src {
                dst.clone_from(src);
                self.dirty[k] = true;
            }
            return;
        }
        Self::value_into(&self.outs, d, top, &mut self.scratch);
        if *dst != self.scratch {
            std::mem::swap(dst, &mut self.scratch);
            self.dirty[k] = true;
        }
    }

    /// Writes the top inputs that changed since the last call (all drives,
    /// the first time) through to the instances.
    fn sync_top(&mut self, top: &[Bits]) {
        if !self.primed {
            self.primed = true;
            for di in 0..self.drives.len() {
                self.apply(di, top);
            }
            for &p in &self.top_watched {
                self.seen[p].clone_from(&top[p]);
            }
            return;
        }
        for t in 0..self.top_watched.len() {
            let p = self.top_watched[t];
            if top[p] != self.seen[p] {
                self.seen[p].clone_from(&top[p]);
                for j in 0..self.by_top[p].len() {
                    self.apply(self.by_top[p][j], top);
                }
            }
        }
    }

    /// An instance's port value after the last `eval`, by name (for tests
    /// and benches that look inside).
    pub fn probe(&self, inst: &str, port: &str) -> Option<&Bits> {
        let k = self.names.iter().position(|n| n == inst)?;
        let p = port_index(self.blocks[k].ports(), port)?;
        Some(match self.blocks[k].ports()[p].dir {
            Dir::In => &self.ins[k][p],
            Dir::Out => &self.outs[k][p],
        })
    }

    /// The block of an instance, for typed access.
    pub fn block(&self, inst: &str) -> Option<&dyn Block> {
        let k = self.names.iter().position(|n| n == inst)?;
        Some(self.blocks[k].as_ref())
    }
}

impl Block for Sim {
    fn name(&self) -> &'static str {
        self.name
    }

    fn ports(&self) -> &[PortDef] {
        &self.ports
    }

    fn eval(&mut self, inputs: &[Bits], outputs: &mut [Bits]) {
        // Every block runs once (its state may have moved at the last
        // tick); after that only those whose inputs a change reached, pass
        // after pass in instance order, until nothing changes.
        self.sync_top(inputs);
        let n = self.blocks.len();
        self.dirty.fill(true);
        let mut settled = false;
        for _pass in 0..=n + 1 {
            for k in 0..n {
                if !self.dirty[k] {
                    continue;
                }
                self.dirty[k] = false;
                self.blocks[k].eval(&self.ins[k], &mut self.outs[k]);
                // `before` keeps the outputs of the last eval: an output
                // that changed writes through its drives.
                for w in 0..self.watched[k].len() {
                    let p = self.watched[k][w];
                    if self.before[k][p] != self.outs[k][p] {
                        self.before[k][p].clone_from(&self.outs[k][p]);
                        for j in 0..self.by_out[k][p].len() {
                            self.apply(self.by_out[k][p][j], inputs);
                        }
                    }
                }
            }
            if !self.dirty.contains(&true) {
                settled = true;
                break;
            }
        }
        assert!(settled, "netlist {}: outputs do not settle (a combinational loop among {:?})", self.name, self.names);
        for (pi, d) in &self.top_plan {
            Self::value_into(&self.outs, d, inputs, &mut outputs[*pi]);
        }
    }

    fn tick(&mut self, inputs: &[Bits]) {
        self.sync_top(inputs);
        for k in 0..self.blocks.len() {
            self.blocks[k].tick(&self.ins[k]);
        }
    }
}

/// The cycle model of block module `name` for `cfg`: the model half of a
/// netlist whose instance kinds are module names (the generator has the
/// other half, `mrnic_hdl::gen::BLOCKS`).
pub fn model_block(name: &str, cfg: &mrnic_proto::Config) -> Result<Box<dyn Block>, String> {
    use crate as m;
    fn boxed<P, E: fmt::Display, B: Block + 'static>(
        p: Result<P, E>,
        new: fn(P) -> B,
    ) -> Result<Box<dyn Block>, String> {
        p.map(|p| Box::new(new(p)) as Box<dyn Block>).map_err(|e| e.to_string())
    }
    match name {
        "rx_parser" => boxed(m::rx_parser::RxParserParams::from_config(cfg), m::rx_parser::RxParser::new),
        "conn_table" => boxed(m::conn_table::ConnTableParams::from_config(cfg), m::conn_table::ConnTable::new),
        "path_telemetry" => {
            boxed(m::path_telemetry::PathTelemetryParams::from_config(cfg), m::path_telemetry::PathTelemetry::new)
        }
        "path_selector" => {
            boxed(m::path_selector::PathSelectorParams::from_config(cfg), m::path_selector::PathSelector::new)
        }
        "dma_write_engine" => {
            boxed(m::dma_write_engine::DmaWriteEngineParams::from_config(cfg), m::dma_write_engine::DmaWriteEngine::new)
        }
        "recv_match" => boxed(m::recv_match::RecvMatchParams::from_config(cfg), m::recv_match::RecvMatch::new),
        "sack_gen" => boxed(m::sack_gen::SackGenParams::from_config(cfg), m::sack_gen::SackGen::new),
        "cpl_engine" => boxed(m::cpl_engine::CplEngineParams::from_config(cfg), m::cpl_engine::CplEngine::new),
        "csr" => boxed(m::csr::CsrParams::from_config(cfg), m::csr::Csr::new),
        "tx_engine" => boxed(m::tx_engine::TxEngineParams::from_config(cfg), m::tx_engine::TxEngine::new),
        "ts_counter" => boxed(m::ts_counter::TsCounterParams::from_config(cfg), m::ts_counter::TsCounter::new),
        "rate_hint" => boxed(m::rate_hint::RateHintParams::from_config(cfg), m::rate_hint::RateHint::new),
        "cqe_merge" => boxed(m::cqe_merge::CqeMergeParams::from_config(cfg), m::cqe_merge::CqeMerge::new),
        "enable_gate" => boxed(m::enable_gate::EnableGateParams::from_config(cfg), m::enable_gate::EnableGate::new),
        "rx_drop_or" => Ok(Box::new(m::rx_drop_or::RxDropOr::default())),
        "op_map" => Ok(Box::new(m::op_map::OpMap::default())),
        "mr_check" => boxed(m::mr_check::MrCheckParams::from_config(cfg), m::mr_check::MrCheck::new),
        "msg_check" => boxed(m::msg_check::MsgCheckParams::from_config(cfg), m::msg_check::MsgCheck::new),
        "rx_buffer" => boxed(m::rx_buffer::RxBufferParams::from_config(cfg), m::rx_buffer::RxBuffer::new),
        "conn_search" => boxed(m::conn_search::ConnSearchParams::from_config(cfg), m::conn_search::ConnSearch::new),
        "probe_walk" => boxed(m::probe_walk::ProbeWalkParams::from_config(cfg), m::probe_walk::ProbeWalk::new),
        "rx_ctl" => boxed(m::rx_ctl::RxCtlParams::from_config(cfg), m::rx_ctl::RxCtl::new),
        _ => Err(format!("no block module `{name}`")),
    }
}

/// The ports of block module `name` for `cfg`, from its `ports` function:
/// what [`model_block`] would build, without allocating its tables (a
/// netlist needs only the ports, and `default`'s tables run to hundreds of
/// megabytes).
pub fn model_ports(name: &str, cfg: &mrnic_proto::Config) -> Result<Vec<PortDef>, String> {
    use crate as m;
    fn of<P, E: fmt::Display>(p: Result<P, E>, ports: fn(&P) -> Vec<PortDef>) -> Result<Vec<PortDef>, String> {
        p.map(|p| ports(&p)).map_err(|e| e.to_string())
    }
    match name {
        "rx_parser" => of(m::rx_parser::RxParserParams::from_config(cfg), m::rx_parser::ports),
        "conn_table" => of(m::conn_table::ConnTableParams::from_config(cfg), m::conn_table::ports),
        "path_telemetry" => of(m::path_telemetry::PathTelemetryParams::from_config(cfg), m::path_telemetry::ports),
        "path_selector" => of(m::path_selector::PathSelectorParams::from_config(cfg), m::path_selector::ports),
        "dma_write_engine" => {
            of(m::dma_write_engine::DmaWriteEngineParams::from_config(cfg), m::dma_write_engine::ports)
        }
        "recv_match" => of(m::recv_match::RecvMatchParams::from_config(cfg), m::recv_match::ports),
        "sack_gen" => of(m::sack_gen::SackGenParams::from_config(cfg), m::sack_gen::ports),
        "cpl_engine" => of(m::cpl_engine::CplEngineParams::from_config(cfg), m::cpl_engine::ports),
        "csr" => of(m::csr::CsrParams::from_config(cfg), m::csr::ports),
        "tx_engine" => of(m::tx_engine::TxEngineParams::from_config(cfg), m::tx_engine::ports),
        "ts_counter" => of(m::ts_counter::TsCounterParams::from_config(cfg), m::ts_counter::ports),
        "rate_hint" => of(m::rate_hint::RateHintParams::from_config(cfg), m::rate_hint::ports),
        "cqe_merge" => of(m::cqe_merge::CqeMergeParams::from_config(cfg), m::cqe_merge::ports),
        "enable_gate" => of(m::enable_gate::EnableGateParams::from_config(cfg), m::enable_gate::ports),
        "rx_drop_or" => Ok(m::rx_drop_or::ports()),
        "op_map" => Ok(m::op_map::ports()),
        "mr_check" => of(m::mr_check::MrCheckParams::from_config(cfg), m::mr_check::ports),
        "msg_check" => of(m::msg_check::MsgCheckParams::from_config(cfg), m::msg_check::ports),
        "rx_buffer" => of(m::rx_buffer::RxBufferParams::from_config(cfg), m::rx_buffer::ports),
        "conn_search" => of(m::conn_search::ConnSearchParams::from_config(cfg), m::conn_search::ports),
        "probe_walk" => of(m::probe_walk::ProbeWalkParams::from_config(cfg), m::probe_walk::ports),
        "rx_ctl" => of(m::rx_ctl::RxCtlParams::from_config(cfg), m::rx_ctl::ports),
        _ => Err(format!("no block module `{name}`")),
    }
}

/// A small real netlist the netlist tests use on both sides: `csr` gives
/// `rx_parser` its UDP port, the parser's ICRC drop pulse counts in the
/// csr's `CNT_RX_BAD_ICRC`; every other port is the top's. (The top level
/// of the NIC is `mrnic_core`; this pair only exercises the machinery.)
pub fn rx_front(cfg: &mrnic_proto::Config) -> Result<Netlist<&'static str>, String> {
    let mut n = Netlist::new("rx_front");
    for name in ["rx_parser", "csr"] {
        n.inst(name, name, model_ports(name, cfg)?);
    }
    n.export("rx_parser", "rst");
    n.wire("rst", "csr.rst");
    n.wire("csr.cfg_udp_port", "rx_parser.cfg_udp_port");
    n.wire("rx_parser.stat_drop_icrc", "csr.stat_rx_bad_icrc");
    n.tie(1, "csr.m_mr_ready");
    let stats: Vec<String> = n.insts[1]
        .ports
        .iter()
        .filter(|p| p.name.starts_with("stat_") && p.name != "stat_rx_bad_icrc")
        .map(|p| p.name.clone())
        .collect();
    for s in stats {
        n.tie(0, &format!("csr.{s}"));
    }
    n.export_rest("rx_parser");
    n.export_rest("csr");
    Ok(n)
}
