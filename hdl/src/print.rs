//! The one Verilog printer: deterministic, two-space indentation, one module
//! per file.

use std::collections::HashSet;
use std::fmt::Write;

use crate::check::{procedural_nets, CheckErrors};
use crate::expr::{Expr, LValue, UnOp};
use crate::ir::{Item, MemDecl, Module, NetKind, ParamCheck, Stmt, PAST_VALID, RESET_FIRST};

/// What the file header says about where a file came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// The generator and config, e.g. `"path_selector, config configs/u280.toml"`.
    pub source: String,
    /// The command that regenerates the file, e.g. `"mrnic rtl --config configs/u280.toml"`.
    pub command: String,
}

impl Header {
    pub fn new(source: &str, command: &str) -> Header {
        Header { source: source.to_string(), command: command.to_string() }
    }
}

const IND: &str = "  ";

/// Checks `m` and prints it. The checks run first so a printed file is always
/// one that lints clean.
pub fn print(m: &Module, header: &Header) -> Result<String, CheckErrors> {
    m.check()?;
    let mut p = Printer {
        out: String::new(),
        procedural: procedural_nets(m),
        clk: m.clock.as_ref().map(|(c, _)| c.name().to_string()).unwrap_or_default(),
        mem_names: m.mems.iter().map(|x| x.array_name()).collect(),
    };
    p.file(m, header);
    Ok(p.out)
}

/// An expression as Verilog source.
pub fn expr_string(e: &Expr) -> String {
    let mut s = String::new();
    expr(&mut s, e);
    s
}

/// One line comment: no line breaks, nothing that closes a block comment.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").replace("*/", "* /")
}

fn is_atom(e: &Expr) -> bool {
    matches!(
        e,
        Expr::Const { .. }
            | Expr::Net(_)
            | Expr::Slice { .. }
            | Expr::Index { .. }
            | Expr::Part { .. }
            | Expr::Concat(_)
            | Expr::Repl { .. }
    )
}

fn operand(out: &mut String, e: &Expr) {
    let bare = is_atom(e) || matches!(e, Expr::Unary(UnOp::Not | UnOp::LogicNot, _));
    if bare {
        expr(out, e);
    } else {
        out.push('(');
        expr(out, e);
        out.push(')');
    }
}

fn expr(out: &mut String, e: &Expr) {
    match e {
        Expr::Const { width: 1, value } => {
            let _ = write!(out, "1'b{value}");
        }
        Expr::Const { width, value } if *value < 4096 => {
            let _ = write!(out, "{width}'d{value}");
        }
        Expr::Const { width, value } => {
            let _ = write!(out, "{width}'h{value:x}");
        }
        Expr::Net(s) => out.push_str(s.name()),
        Expr::Slice { base, hi, lo } => {
            if let Expr::Net(s) = &**base {
                if *hi == *lo && s.width() == 1 {
                    // A whole one-bit net: a select would be illegal on a scalar.
                    out.push_str(s.name());
                    return;
                }
            }
            operand(out, base);
            if hi == lo {
                let _ = write!(out, "[{hi}]");
            } else {
                let _ = write!(out, "[{hi}:{lo}]");
            }
        }
        Expr::Index { base, index } => {
            operand(out, base);
            out.push('[');
            expr(out, index);
            out.push(']');
        }
        Expr::Part { base, start, width } => {
            operand(out, base);
            out.push('[');
            expr(out, start);
            let _ = write!(out, " +: {width}]");
        }
        Expr::Concat(parts) => {
            out.push('{');
            for (i, p) in parts.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                expr(out, p);
            }
            out.push('}');
        }
        Expr::Repl { count, expr: x } => {
            let _ = write!(out, "{{{count}{{");
            expr(out, x);
            out.push_str("}}");
        }
        Expr::Unary(op, a) => {
            out.push_str(op.symbol());
            if is_atom(a) {
                expr(out, a);
            } else {
                out.push('(');
                expr(out, a);
                out.push(')');
            }
        }
        Expr::Binary(op, a, b) => {
            operand(out, a);
            let _ = write!(out, " {} ", op.symbol());
            operand(out, b);
        }
        Expr::Mux { cond, then, els } => {
            for (i, x) in [cond, then, els].into_iter().enumerate() {
                if i == 1 {
                    out.push_str(" ? ");
                } else if i == 2 {
                    out.push_str(" : ");
                }
                if matches!(**x, Expr::Mux { .. }) {
                    out.push('(');
                    expr(out, x);
                    out.push(')');
                } else {
                    expr(out, x);
                }
            }
        }
    }
}

fn lvalue(lv: &LValue) -> String {
    match lv.range {
        None => lv.net.name().to_string(),
        Some((hi, lo)) if hi == lo && lv.net.width() == 1 => lv.net.name().to_string(),
        Some((hi, lo)) if hi == lo => format!("{}[{hi}]", lv.net.name()),
        Some((hi, lo)) => format!("{}[{hi}:{lo}]", lv.net.name()),
    }
}

/// Lines of `text` padded so the trailing comments line up.
fn aligned(out: &mut String, indent: &str, rows: &[(String, String)]) {
    let col = rows.iter().map(|(t, _)| t.len()).max().unwrap_or(0);
    for (text, comment) in rows {
        if comment.is_empty() {
            let _ = writeln!(out, "{indent}{text}");
        } else {
            let _ = writeln!(out, "{indent}{text:col$}  // {comment}");
        }
    }
}

struct Printer {
    out: String,
    procedural: HashSet<String>,
    clk: String,
    /// Array names of the module's memories, for formal memory peeks.
    mem_names: Vec<String>,
}

impl Printer {
    fn line(&mut self, depth: usize, text: &str) {
        for _ in 0..depth {
            self.out.push_str(IND);
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn comment(&mut self, depth: usize, text: &str) {
        let text = format!("// {}", one_line(text));
        self.line(depth, &text);
    }

    fn file(&mut self, m: &Module, h: &Header) {
        self.comment(0, &format!("Generated by mrnic from {}.", h.source));
        self.comment(0, &format!("Do not edit; regenerate with: {}", h.command));
        self.out.push_str("\n`resetall\n`timescale 1ns / 1ps\n`default_nettype none\n\n");
        if let Some(doc) = &m.doc {
            self.comment(0, &format!("{}: {doc}", m.name));
        }
        self.module_header(m);
        self.body(m);
        self.out.push_str("endmodule\n\n`resetall\n");
    }

    fn module_header(&mut self, m: &Module) {
        let params: Vec<_> = m.params.iter().filter(|p| !p.local).collect();
        if params.is_empty() {
            let _ = writeln!(self.out, "module {} (", m.name);
        } else {
            let _ = writeln!(self.out, "module {} #(", m.name);
            for (i, p) in params.iter().enumerate() {
                self.comment(1, &p.comment);
                let comma = if i + 1 < params.len() { "," } else { "" };
                self.line(1, &format!("parameter {} = {}{comma}", p.name, p.value));
            }
            self.out.push_str(") (\n");
        }
        let ports: Vec<_> = m.nets.iter().filter(|n| matches!(n.kind, NetKind::Input | NetKind::Output)).collect();
        let rw = ports.iter().map(|n| n.size.range().len()).max().unwrap_or(0);
        let mut group: Option<&String> = None;
        let mut rows: Vec<(String, String)> = Vec::new();
        for (i, n) in ports.iter().enumerate() {
            if n.group.is_some() && n.group.as_ref() != group {
                aligned(&mut self.out, IND, &rows);
                rows.clear();
                if i > 0 {
                    self.out.push('\n');
                }
                let banner = format!("/* {} */", one_line(n.group.as_deref().unwrap_or_default()));
                self.line(1, &banner);
                group = n.group.as_ref();
            }
            let dir = if n.kind == NetKind::Input { "input " } else { "output" };
            let kind = if self.procedural.contains(&n.name) { "reg " } else { "wire" };
            let comma = if i + 1 < ports.len() { "," } else { "" };
            rows.push((format!("{dir} {kind} {}{}{comma}", pad(&n.size.range(), rw), n.name), one_line(&n.comment)));
        }
        aligned(&mut self.out, IND, &rows);
        self.out.push_str(");\n");
    }

    fn body(&mut self, m: &Module) {
        let locals: Vec<_> = m.params.iter().filter(|p| p.local).collect();
        if !locals.is_empty() {
            self.out.push('\n');
            for p in locals {
                self.comment(1, &p.comment);
                self.line(1, &format!("localparam {} = {};", p.name, p.value));
            }
        }
        let rules: Vec<ParamCheck> = m.checks.iter().cloned().chain(m.generated_values_rule()).collect();
        if !rules.is_empty() {
            self.out.push('\n');
            self.comment(1, "Parameter rules. Verilog-2005 has no $error: a failing rule instantiates a");
            self.comment(1, "module that does not exist, which stops every tool at elaboration.");
            self.line(1, "generate");
            for k in &rules {
                self.line(2, &format!("if (!({})) begin : g_check_{}", k.cond, k.label));
                self.comment(3, &k.message);
                self.line(3, &format!("illegal_parameter_combination_{} u_illegal ();", k.label));
                self.line(2, "end");
            }
            self.line(1, "endgenerate");
        }
        self.declarations(m);
        for mem in &m.mems {
            self.out.push('\n');
            self.comment(1, &mem.comment);
            self.line(1, mem.style.attribute());
            let name = mem.array_name();
            self.line(1, &format!("reg {} {name} {};", mem.width.range(), mem.depth.depth_range()));
        }
        let mut prev: Option<&Item> = None;
        for item in &m.items {
            // A comment belongs to the item after it; a run of assigns reads as one group.
            let joined =
                matches!((prev, item), (Some(Item::Comment(_)), _) | (Some(Item::Assign(..)), Item::Assign(..)));
            if !joined {
                self.out.push('\n');
            }
            prev = Some(item);
            self.item(item);
        }
        for mem in &m.mems {
            self.memory(mem, m);
        }
        let next = m.next_state_block();
        if !next.is_empty() {
            self.out.push('\n');
            self.comment(1, "Next state: each register holds unless assigned below.");
            self.line(1, "always @* begin");
            let defaults = m.regs.len();
            self.stmts(2, &next[..defaults], true);
            if defaults < next.len() {
                self.out.push('\n');
                self.stmts(2, &next[defaults..], true);
            }
            self.line(1, "end");
        }
        if !m.regs.is_empty() {
            self.out.push('\n');
            let clk = self.clk.clone();
            self.line(1, &format!("always @(posedge {clk}) begin"));
            for r in &m.regs {
                let text = format!("{} <= {};", m.nets[r.q].name, m.nets[r.next].name);
                self.line(2, &text);
            }
            let resets: Vec<_> = m.regs.iter().filter_map(|r| Some((r, r.reset?))).collect();
            if let (false, Some((_, rst))) = (resets.is_empty(), &m.clock) {
                self.out.push('\n');
                self.line(2, &format!("if ({}) begin", rst.name()));
                for (r, value) in resets {
                    let q = &m.nets[r.q];
                    let v = expr_string(&crate::expr::lit(q.size.value, value));
                    self.line(3, &format!("{} <= {v};", q.name));
                }
                self.line(2, "end");
            }
            self.line(1, "end");
        }
        self.formal(m);
        self.out.push('\n');
    }

    /// The formal section: formal-only nets and logic, then one clocked
    /// block with every property, all inside `` `ifdef FORMAL `` so that
    /// synthesis, Icarus and Verilator never see it. Immediate assertions
    /// in a clocked block are what Yosys's `read_verilog -formal` reads.
    fn formal(&mut self, m: &Module) {
        if m.props.is_empty() && m.formal_items.is_empty() {
            return;
        }
        self.out.push_str("\n`ifdef FORMAL\n");
        self.comment(
            1,
            "Formal properties, for SymbiYosys (read_verilog -formal). Not seen by synthesis or simulation.",
        );
        let mut rows = Vec::new();
        let decls: Vec<_> = m.nets.iter().filter(|n| n.kind.is_formal()).collect();
        let rw = decls.iter().map(|n| n.size.range().len()).max().unwrap_or(0);
        for n in decls {
            let kind = match n.kind {
                NetKind::FormalAnyconst => "(* anyconst *) reg ",
                _ if self.procedural.contains(&n.name) => "reg ",
                _ => "wire",
            };
            let init = match n.init {
                Some(v) => format!(" = {}", expr_string(&crate::expr::lit(n.size.value, v))),
                None => String::new(),
            };
            rows.push((format!("{kind} {}{}{init};", pad(&n.size.range(), rw), n.name), one_line(&n.comment)));
        }
        if !rows.is_empty() {
            aligned(&mut self.out, IND, &rows);
        }
        let mut prev: Option<&Item> = None;
        for item in &m.formal_items {
            let joined =
                matches!((prev, item), (Some(Item::Comment(_)), _) | (Some(Item::Assign(..)), Item::Assign(..)));
            if !joined {
                self.out.push('\n');
            }
            prev = Some(item);
            self.item(item);
        }
        if !m.props.is_empty() && m.clock.is_none() {
            // No clock: immediate properties of the inputs at each instant.
            self.out.push('\n');
            self.line(1, "always @* begin");
            self.props(m, 2);
            self.line(1, "end");
        } else if !m.props.is_empty() {
            let clk = self.clk.clone();
            let rst = m.clock.as_ref().map(|(_, r)| r.name().to_string()).unwrap_or_default();
            self.out.push('\n');
            self.line(1, &format!("always @(posedge {clk}) begin"));
            self.line(2, &format!("if (!{PAST_VALID}) begin"));
            self.comment(3, "The first cycle is a reset; registers without a reset value start arbitrary.");
            self.line(3, &format!("{RESET_FIRST}: assume ({rst});"));
            self.line(2, "end else begin");
            self.props(m, 3);
            self.line(2, "end");
            self.line(1, "end");
        }
        self.out.push_str("`endif\n");
    }

    /// Every property of `m`, commented, at `indent`.
    fn props(&mut self, m: &Module, indent: usize) {
        for (i, p) in m.props.iter().enumerate() {
            if i > 0 {
                self.out.push('\n');
            }
            self.comment(indent, &p.comment);
            let text = format!("{}: {} ({});", p.label, p.kind.keyword(), expr_string(&p.cond));
            self.line(indent, &text);
        }
    }

    fn declarations(&mut self, m: &Module) {
        let mut rows = Vec::new();
        let decls: Vec<_> = m
            .nets
            .iter()
            .filter(|n| matches!(n.kind, NetKind::Wire | NetKind::RegQ(_) | NetKind::MemRead(_)))
            .collect();
        let rw = decls.iter().map(|n| n.size.range().len()).max().unwrap_or(0);
        for n in decls {
            let kind = if self.procedural.contains(&n.name) { "reg " } else { "wire" };
            let names = match n.kind {
                NetKind::RegQ(i) => format!("{}, {}", n.name, m.nets[m.regs[i].next].name),
                _ => n.name.clone(),
            };
            rows.push((format!("{kind} {}{names};", pad(&n.size.range(), rw)), one_line(&n.comment)));
        }
        if !rows.is_empty() {
            self.out.push('\n');
            aligned(&mut self.out, IND, &rows);
        }
    }

    fn item(&mut self, item: &Item) {
        match item {
            Item::Comment(text) => self.comment(1, text),
            Item::Assign(lhs, rhs) => {
                let text = format!("assign {} = {};", lvalue(lhs), expr_string(rhs));
                self.line(1, &text);
            }
            Item::MemPeek { lhs, mem, addr } => {
                let text = format!("assign {} = {}[{}];", lvalue(lhs), self.mem_names[*mem], expr_string(addr));
                self.line(1, &text);
            }
            Item::Comb(body) => {
                self.line(1, "always @* begin");
                self.stmts(2, body, true);
                self.line(1, "end");
            }
            Item::Seq(body) => {
                let clk = self.clk.clone();
                self.line(1, &format!("always @(posedge {clk}) begin"));
                self.stmts(2, body, false);
                self.line(1, "end");
            }
            Item::Instance(inst) => {
                if inst.params.is_empty() {
                    self.line(1, &format!("{} {} (", inst.child.name, inst.name));
                } else {
                    self.line(1, &format!("{} #(", inst.child.name));
                    // Child order, so the output does not depend on call order.
                    let params: Vec<_> = inst
                        .child
                        .params
                        .iter()
                        .filter_map(|(n, _)| inst.params.iter().find(|(p, _)| p == n))
                        .collect();
                    for (i, (name, value)) in params.iter().enumerate() {
                        let comma = if i + 1 < params.len() { "," } else { "" };
                        self.line(2, &format!(".{name}({value}){comma}"));
                    }
                    self.line(1, &format!(") {} (", inst.name));
                }
                let conns: Vec<_> =
                    inst.child.ports.iter().filter_map(|p| inst.conns.iter().find(|(c, _)| *c == p.name)).collect();
                for (i, (port, e)) in conns.iter().enumerate() {
                    let comma = if i + 1 < conns.len() { "," } else { "" };
                    let text = format!(".{port}({}){comma}", expr_string(e));
                    self.line(2, &text);
                }
                self.line(1, ");");
            }
        }
    }

    fn memory(&mut self, mem: &MemDecl, m: &Module) {
        let name = mem.array_name();
        let clk = self.clk.clone();
        for w in &mem.writes {
            self.out.push('\n');
            self.line(1, &format!("always @(posedge {clk}) begin"));
            let store = format!("{name}[{}] <= {};", expr_string(&w.addr), expr_string(&w.data));
            self.guarded(&w.en, &store);
            self.line(1, "end");
        }
        for r in &mem.reads {
            self.out.push('\n');
            self.line(1, &format!("always @(posedge {clk}) begin"));
            let load = format!("{} <= {name}[{}];", m.nets[r.data].name, expr_string(&r.addr));
            self.guarded(&r.en, &load);
            self.line(1, "end");
        }
    }

    /// `if (en) begin text end`, or just `text` when `en` is constant 1.
    fn guarded(&mut self, en: &Expr, text: &str) {
        if matches!(en, Expr::Const { value: 1, .. }) {
            self.line(2, text);
        } else {
            self.line(2, &format!("if ({}) begin", expr_string(en)));
            self.line(3, text);
            self.line(2, "end");
        }
    }

    fn stmts(&mut self, depth: usize, body: &[Stmt], comb: bool) {
        for s in body {
            self.stmt(depth, s, comb);
        }
    }

    fn stmt(&mut self, depth: usize, s: &Stmt, comb: bool) {
        let op = if comb { "=" } else { "<=" };
        match s {
            Stmt::Assign { lhs, rhs } => {
                let text = format!("{} {op} {};", lvalue(lhs), expr_string(rhs));
                self.line(depth, &text);
            }
            Stmt::If { cond, then, els } => {
                self.line(depth, &format!("if ({}) begin", expr_string(cond)));
                self.stmts(depth + 1, then, comb);
                let mut els = els;
                loop {
                    match els.as_slice() {
                        [] => break,
                        [Stmt::If { cond, then, els: more }] => {
                            self.line(depth, &format!("end else if ({}) begin", expr_string(cond)));
                            self.stmts(depth + 1, then, comb);
                            els = more;
                        }
                        _ => {
                            self.line(depth, "end else begin");
                            self.stmts(depth + 1, els, comb);
                            break;
                        }
                    }
                }
                self.line(depth, "end");
            }
            Stmt::Case { sel, arms, default } => {
                self.line(depth, &format!("case ({})", expr_string(sel)));
                for arm in arms {
                    let labels: Vec<String> = arm.labels.iter().map(expr_string).collect();
                    self.arm(depth + 1, &labels.join(", "), &arm.body, comb);
                }
                if let Some(d) = default {
                    self.arm(depth + 1, "default", d, comb);
                }
                self.line(depth, "endcase");
            }
        }
    }

    fn arm(&mut self, depth: usize, label: &str, body: &[Stmt], comb: bool) {
        match body {
            [] => self.line(depth, &format!("{label}: ;")),
            [Stmt::Assign { lhs, rhs }] => {
                let op = if comb { "=" } else { "<=" };
                let text = format!("{label}: {} {op} {};", lvalue(lhs), expr_string(rhs));
                self.line(depth, &text);
            }
            _ => {
                self.line(depth, &format!("{label}: begin"));
                self.stmts(depth + 1, body, comb);
                self.line(depth, "end");
            }
        }
    }
}

/// A declaration range padded to `width` columns, with one space after it
/// when any declaration has a range.
fn pad(range: &str, width: usize) -> String {
    if width == 0 {
        String::new()
    } else {
        format!("{range:width$} ")
    }
}
