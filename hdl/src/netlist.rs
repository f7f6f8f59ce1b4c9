//! A model netlist ([`mrnic_model::netlist::Netlist`]) printed as a module
//! of instances: the top's ports from the netlist's `ports()`, one wire
//! `<instance>_<port>` per instance output, and each instance input or top
//! output connected to the drive the netlist gives it. The wiring is the
//! model's, read here and never restated, so the simulated top and the
//! printed one cannot differ in a connection.

use std::collections::HashMap;

use mrnic_model::block::Dir as ModelDir;
use mrnic_model::netlist::{Drive, Netlist, NetlistError, Sink, Src};

use mrnic_proto::Config;

use crate::gen::BLOCKS;
use crate::tx_engine::assembly;
use crate::{cat, lit, Expr, Header, Module, ModuleSig, Signal};

/// True when `sig` starts with `clk`: every module but the combinational
/// glue blocks ([`crate::ports::declare_combinational`]).
fn has_clk(sig: &ModuleSig) -> bool {
    sig.ports.first().is_some_and(|p| p.name == "clk")
}

/// The module of `net`, given the signature of each instance's module in
/// instance order. Each signature must have the instance's ports plus
/// `clk` (which it gets from the top's `clk`), or exactly the instance's
/// ports for a combinational block.
pub fn build<K>(net: &Netlist<K>, sigs: &[ModuleSig]) -> Result<Module, NetlistError> {
    net.check()?;
    let err = |what: String| NetlistError { netlist: net.name.into(), what };
    if sigs.len() != net.insts.len() {
        return Err(err(format!("{} signatures for {} instances", sigs.len(), net.insts.len())));
    }
    let mut m = Module::new(net.name);
    let (clk, top) = crate::ports::declare(&mut m, &net.ports);
    let mut outs: HashMap<(String, String), Signal> = HashMap::new();
    for (i, sig) in net.insts.iter().zip(sigs) {
        let want: Vec<(&str, u32)> = std::iter::once(("clk", 1))
            .filter(|_| has_clk(sig))
            .chain(i.ports.iter().map(|p| (p.name.as_str(), p.width)))
            .collect();
        let have: Vec<(&str, u32)> = sig.ports.iter().map(|p| (p.name.as_str(), p.width)).collect();
        if want != have {
            return Err(err(format!("instance `{}`: module `{}` has other ports than the model", i.name, sig.name)));
        }
        for p in i.ports.iter().filter(|p| p.dir == ModelDir::Out) {
            let w =
                m.wire(&format!("{}_{}", i.name, p.name), p.width, &format!("{}.{}: {}", i.name, p.name, p.comment));
            outs.insert((i.name.clone(), p.name.clone()), w);
        }
    }
    let expr = |d: &Drive, width: u32| -> Expr {
        let full = match &d.src {
            Src::Const(v) => return lit(width, *v),
            Src::Top(p) => &top[p],
            Src::Out(i, p) => &outs[&(i.clone(), p.clone())],
        };
        match d.range {
            Some((lsb, w)) => full.slice(lsb + w - 1, lsb),
            None => full.expr(),
        }
    };
    let drive_of = |sink: &Sink| net.drives.iter().find(|(s, _)| s == sink).map(|(_, d)| d).expect("checked");
    for (i, sig) in net.insts.iter().zip(sigs) {
        let conns: Vec<(String, Expr)> = i
            .ports
            .iter()
            .map(|p| {
                let e = match p.dir {
                    ModelDir::In => expr(drive_of(&Sink::In(i.name.clone(), p.name.clone())), p.width),
                    ModelDir::Out => outs[&(i.name.clone(), p.name.clone())].expr(),
                };
                (p.name.clone(), e)
            })
            .collect();
        let inst = m.instance(&i.name, sig);
        if has_clk(sig) {
            inst.connect("clk", &clk);
        }
        for (p, e) in conns {
            inst.connect(&p, e);
        }
    }
    for p in net.ports.iter().filter(|p| p.dir == ModelDir::Out) {
        let e = expr(drive_of(&Sink::Top(p.name.clone())), p.width);
        m.assign(&top[&p.name], e);
    }
    let open = open_bits(net, &outs);
    if !open.is_empty() {
        // An instance output may stay open (a field the top has no use
        // for); its bits end in one XOR that Verilator's and the IR's
        // unused rule exempt by name, so -Wall stays clean without a waiver.
        let sink = format!("{}_open", crate::check::UNUSED_SINK);
        m.wire_from(&sink, 1, "instance output bits the top leaves open", cat(&open).reduce_xor());
    }
    Ok(m)
}

/// `net` printed for `cfg`: its module (with `header`) and each block's
/// generated module once, in the netlist's order, as `(file name, text)`,
/// the top first. The children come from [`crate::gen::BLOCKS`] by kind;
/// tx_engine, a module of modules, from its assembly
/// ([`crate::tx_engine::assembly::files`]), every file of it.
pub fn files<K: AsRef<str>>(net: &Netlist<K>, cfg: &Config, header: &Header) -> Result<Vec<(String, String)>, String> {
    let mut kids: Vec<(ModuleSig, Vec<(String, String)>)> = Vec::new();
    for i in &net.insts {
        let kind = i.kind.as_ref();
        if kind == assembly::NAME {
            kids.push(assembly::files(cfg)?);
            continue;
        }
        let row = BLOCKS.iter().find(|b| b.name == kind).ok_or_else(|| format!("no generator for `{kind}`"))?;
        let m = (row.generate)(cfg).map_err(|e| e.to_string())?;
        let text = m.to_verilog(&(row.header)(cfg)).map_err(|e| e.to_string())?;
        kids.push((m.signature(), vec![(format!("{kind}.v"), text)]));
    }
    let sigs: Vec<ModuleSig> = kids.iter().map(|(s, _)| s.clone()).collect();
    let top = build(net, &sigs).map_err(|e| e.to_string())?;
    let mut out = vec![(format!("{}.v", net.name), top.to_verilog(header).map_err(|e| e.to_string())?)];
    for (f, text) in kids.into_iter().flat_map(|(_, fs)| fs) {
        if !out.iter().any(|(n, _)| *n == f) {
            out.push((f, text));
        }
    }
    Ok(out)
}

/// The bits of instance outputs that no drive reads, as slices of their
/// wires, in instance and port order.
fn open_bits<K>(net: &Netlist<K>, outs: &HashMap<(String, String), Signal>) -> Vec<Expr> {
    let mut open = Vec::new();
    for i in &net.insts {
        for p in i.ports.iter().filter(|p| p.dir == ModelDir::Out) {
            let mut read = vec![false; p.width as usize];
            let src = Src::Out(i.name.clone(), p.name.clone());
            for (_, d) in net.drives.iter().filter(|(_, d)| d.src == src) {
                let (lsb, w) = d.range.unwrap_or((0, p.width));
                read[lsb as usize..(lsb + w) as usize].iter_mut().for_each(|b| *b = true);
            }
            let wire = &outs[&(i.name.clone(), p.name.clone())];
            let mut b = 0;
            while b < read.len() {
                let run = read[b..].iter().take_while(|&&r| r == read[b]).count();
                if !read[b] {
                    open.push(wire.slice((b + run - 1) as u32, b as u32));
                }
                b += run;
            }
        }
    }
    open
}
