//! Design-rule checks run before printing.
//!
//! The rules are those `verilator --lint-only -Wall` and synthesis would
//! complain about, caught earlier with an error that names the module and net:
//! widths agree without implicit extension, every bit of every net has exactly
//! one driver, no combinational loops, no latches, nothing unused (but a net
//! named `*unused*`, as Verilator exempts it).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::fmt;

use crate::expr::{Expr, LValue, Signal};
use crate::ir::{addr_width, Dir, Item, Module, NetKind, Stmt, PAST_VALID, RESET_FIRST};
use crate::param::ParamExpr;

/// The part of a net's name that exempts it from the unused rule, as
/// Verilator's default `--unused-regexp` (`*unused*`) does.
pub const UNUSED_SINK: &str = "unused";

/// One design-rule violation. Every variant names the module, and the net,
/// port, parameter or block at fault.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    #[error("module `{module}`: `{name}` is not a usable Verilog identifier: {reason}")]
    BadName { module: String, name: String, reason: String },
    #[error("module `{module}`: `{name}` is declared more than once")]
    DuplicateName { module: String, name: String },
    #[error("module `{module}`, {context}: `{net}` is not declared in this module")]
    UnknownNet { module: String, net: String, context: String },
    #[error(
        "module `{module}`, {context}: `{net}` is used with {used} bits but declared with \
         {declared}; is it a signal of another module?"
    )]
    ForeignNet { module: String, net: String, context: String, used: u32, declared: u32 },
    #[error(
        "module `{module}`, {context}: `{net}` is {expected} bits but the value is {found} bits; \
         extend with zext() or select bits explicitly"
    )]
    WidthMismatch { module: String, net: String, context: String, expected: u32, found: u32 },
    #[error("module `{module}`, {context} (driving `{net}`): operator `{op}`: {detail}")]
    OperandWidth { module: String, net: String, context: String, op: String, detail: String },
    #[error(
        "module `{module}`, {context} (driving `{net}`): bit select of an expression; \
         Verilog-2005 selects only from a net, so assign the expression to a wire first"
    )]
    SelectOfExpression { module: String, net: String, context: String },
    #[error("module `{module}`: `{net}` has more than one driver: {}", drivers.join(", "))]
    MultipleDrivers { module: String, net: String, drivers: Vec<String> },
    #[error("module `{module}`: `{net}` bits {bits} have no driver")]
    Undriven { module: String, net: String, bits: String },
    #[error("module `{module}`: input `{net}` is driven inside the module by {driver}")]
    InputDriven { module: String, net: String, driver: String },
    #[error(
        "module `{module}`: combinational loop {}; break it with a register",
        path.join(" -> ")
    )]
    CombLoop { module: String, path: Vec<String> },
    #[error(
        "module `{module}`, {block}: `{net}` is not assigned on every path, which infers a \
         latch; assign a default at the top of the block"
    )]
    Latch { module: String, net: String, block: String },
    #[error(
        "module `{module}`, {block}: case on `{selector}` has no default and does not cover \
         every value"
    )]
    CaseIncomplete { module: String, block: String, selector: String },
    #[error("module `{module}`, {block}: case on `{selector}`: {reason}")]
    CaseLabel { module: String, block: String, selector: String, reason: String },
    #[error("module `{module}`: `{net}` bits {bits} are never read; remove them or use them")]
    Unused { module: String, net: String, bits: String },
    #[error("module `{module}`: parameter `{param}` is never used")]
    UnusedParam { module: String, param: String },
    #[error("module `{module}`: parameter `{param}`: {reason}")]
    BadParam { module: String, param: String, reason: String },
    #[error("module `{module}`: parameter rule `{label}` fails: {message}")]
    ParamCheckFailed { module: String, label: String, message: String },
    #[error("module `{module}`: `{net}`: {reason}")]
    BadSize { module: String, net: String, reason: String },
    #[error("module `{module}`: {reason}; call clock_domain(clk, rst)")]
    NoClock { module: String, reason: String },
    #[error("module `{module}`: clock or reset `{net}` {reason}")]
    BadClock { module: String, net: String, reason: String },
    #[error("module `{module}`: reset value {value} of `{net}` does not fit in {width} bits")]
    ResetValue { module: String, net: String, value: u64, width: u32 },
    #[error("module `{module}`, instance `{instance}` of `{child}`: {reason}")]
    Instance { module: String, instance: String, child: String, reason: String },
    #[error("module `{module}`, memory `{memory}`: {reason}")]
    Memory { module: String, memory: String, reason: String },
    #[error(
        "module `{module}`, {context}: formal-only net `{net}` is used by design logic, which \
         synthesis never sees it in; read it from formal items and properties only"
    )]
    FormalInDesign { module: String, net: String, context: String },
    #[error(
        "module `{module}`, {context}: formal logic drives design net `{net}`; formal items may \
         drive formal nets only, or synthesis and the proof would see different designs"
    )]
    DesignDrivenByFormal { module: String, net: String, context: String },
    #[error("module `{module}`, property `{label}`: {reason}")]
    BadProperty { module: String, label: String, reason: String },
}

/// Every violation found in one module, in a stable order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckErrors(pub Vec<CheckError>);

impl fmt::Display for CheckErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} design-rule violation(s)", self.0.len())?;
        for e in &self.0 {
            write!(f, "\n  {e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for CheckErrors {}

/// Runs every check on `m`.
pub fn check(m: &Module) -> Result<(), CheckErrors> {
    let c = Checker::run(m);
    if c.errors.is_empty() {
        Ok(())
    } else {
        Err(CheckErrors(c.errors))
    }
}

/// `(input, output)` port pairs joined by a combinational path.
pub(crate) fn comb_paths(m: &Module) -> Vec<(String, String)> {
    let c = Checker::run(m);
    let mut paths = Vec::new();
    for (i, n) in m.nets.iter().enumerate() {
        if n.kind != NetKind::Input {
            continue;
        }
        let mut seen = vec![false; m.nets.len()];
        let mut queue = VecDeque::from([i]);
        seen[i] = true;
        while let Some(v) = queue.pop_front() {
            for &w in &c.graph[v] {
                if !seen[w] {
                    seen[w] = true;
                    queue.push_back(w);
                }
            }
        }
        for (o, out) in m.nets.iter().enumerate() {
            if out.kind == NetKind::Output && seen[o] {
                paths.push((n.name.clone(), out.name.clone()));
            }
        }
    }
    paths
}

/// Nets that an always block drives, so they print as `reg`.
pub(crate) fn procedural_nets(m: &Module) -> HashSet<String> {
    let mut set: HashSet<String> = m
        .nets
        .iter()
        .filter(|n| matches!(n.kind, NetKind::RegQ(_) | NetKind::RegNext(_) | NetKind::MemRead(_)))
        .map(|n| n.name.clone())
        .collect();
    let mut add = |body: &[Stmt]| {
        for_each_lvalue(body, &mut |lv| {
            set.insert(lv.net.name().to_string());
        })
    };
    add(&m.next_state);
    for item in m.items.iter().chain(&m.formal_items) {
        if let Item::Comb(body) | Item::Seq(body) = item {
            add(body);
        }
    }
    set
}

fn for_each_lvalue(body: &[Stmt], f: &mut impl FnMut(&LValue)) {
    for s in body {
        match s {
            Stmt::Assign { lhs, .. } => f(lhs),
            Stmt::If { then, els, .. } => {
                for_each_lvalue(then, f);
                for_each_lvalue(els, f);
            }
            Stmt::Case { arms, default, .. } => {
                for a in arms {
                    for_each_lvalue(&a.body, f);
                }
                if let Some(d) = default {
                    for_each_lvalue(d, f);
                }
            }
        }
    }
}

/// Writes `[hi:lo]` ranges of the set bits, most significant first.
fn ranges(bits: &[bool]) -> String {
    let mut out = Vec::new();
    let mut i = bits.len();
    while i > 0 {
        i -= 1;
        if bits[i] {
            let hi = i;
            while i > 0 && bits[i - 1] {
                i -= 1;
            }
            out.push(if hi == i { format!("[{i}]") } else { format!("[{hi}:{i}]") });
        }
    }
    out.join(", ")
}

const KEYWORDS: &[&str] = &[
    "always",
    "and",
    "assign",
    "automatic",
    "begin",
    "buf",
    "case",
    "casex",
    "casez",
    "cell",
    "config",
    "deassign",
    "default",
    "defparam",
    "design",
    "disable",
    "edge",
    "else",
    "end",
    "endcase",
    "endconfig",
    "endfunction",
    "endgenerate",
    "endmodule",
    "endprimitive",
    "endspecify",
    "endtable",
    "endtask",
    "event",
    "for",
    "force",
    "forever",
    "fork",
    "function",
    "generate",
    "genvar",
    "if",
    "ifnone",
    "incdir",
    "include",
    "initial",
    "inout",
    "input",
    "instance",
    "integer",
    "join",
    "large",
    "liblist",
    "library",
    "localparam",
    "macromodule",
    "medium",
    "module",
    "nand",
    "negedge",
    "nmos",
    "nor",
    "not",
    "or",
    "output",
    "parameter",
    "posedge",
    "primitive",
    "pull0",
    "pull1",
    "pulldown",
    "pullup",
    "real",
    "realtime",
    "reg",
    "release",
    "repeat",
    "scalared",
    "signed",
    "small",
    "specify",
    "specparam",
    "strong0",
    "strong1",
    "supply0",
    "supply1",
    "table",
    "task",
    "time",
    "tran",
    "tri",
    "tri0",
    "tri1",
    "triand",
    "trior",
    "trireg",
    "unsigned",
    "use",
    "uwire",
    "vectored",
    "wait",
    "wand",
    "weak0",
    "weak1",
    "while",
    "wire",
    "wor",
    "xnor",
    "xor",
    // SystemVerilog keywords: tools that read .v files as SystemVerilog reject them too.
    "bit",
    "byte",
    "int",
    "logic",
    "shortint",
    "longint",
    "string",
    "enum",
    "struct",
    "union",
    "typedef",
    "class",
    "interface",
    "package",
    "import",
    "export",
    "final",
    "unique",
    "priority",
    "return",
    "break",
    "continue",
    "void",
    "const",
    "static",
    "virtual",
    "type",
    "bind",
    "chandle",
    "do",
    "foreach",
    "inside",
    "local",
    "modport",
    "new",
    "null",
    "program",
    "property",
    "sequence",
    "super",
    "this",
    "var",
    "assert",
    "assume",
    "cover",
    "wildcard",
];

fn name_problem(name: &str) -> Option<String> {
    let mut chars = name.chars();
    match chars.next() {
        None => return Some("empty".into()),
        Some(c) if !(c.is_ascii_alphabetic() || c == '_') => return Some("must start with a letter or `_`".into()),
        _ => {}
    }
    if !chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Some("only letters, digits and `_` are allowed (no `$`)".into());
    }
    if KEYWORDS.contains(&name) {
        return Some("reserved word".into());
    }
    None
}

/// What drives some bits of a net.
struct Driver {
    desc: String,
    /// An always block (or the generated register and memory blocks): the
    /// net becomes a `reg` and nothing else may drive it.
    procedural: bool,
    hi: u32,
    lo: u32,
}

/// Where a statement list sits, for messages and for the rules that differ.
#[derive(Clone)]
struct Block {
    desc: String,
    comb: bool,
}

struct Checker<'m> {
    m: &'m Module,
    index: HashMap<&'m str, usize>,
    errors: Vec<CheckError>,
    read: Vec<Vec<bool>>,
    drivers: Vec<Vec<Driver>>,
    /// Combinational dependency edges between nets.
    graph: Vec<BTreeSet<usize>>,
    params: HashMap<&'m str, (u64, bool)>,
    params_used: HashSet<String>,
    /// Checking formal items or properties: reads of design nets are not
    /// uses (synthesis never sees them) and only formal nets may be driven.
    formal: bool,
}

type Assigned = BTreeMap<usize, Vec<bool>>;

impl<'m> Checker<'m> {
    fn run(m: &'m Module) -> Checker<'m> {
        let n = m.nets.len();
        let mut c = Checker {
            m,
            index: HashMap::new(),
            errors: Vec::new(),
            read: m.nets.iter().map(|d| vec![false; d.size.value as usize]).collect(),
            drivers: (0..n).map(|_| Vec::new()).collect(),
            graph: vec![BTreeSet::new(); n],
            params: HashMap::new(),
            params_used: HashSet::new(),
            formal: false,
        };
        c.names();
        c.parameters();
        c.sizes();
        c.clock();
        c.items(&m.items);
        c.next_state();
        c.formal = true;
        c.items(&m.formal_items);
        c.properties();
        c.formal = false;
        c.registers();
        c.memories();
        c.driver_rules();
        c.loops();
        c.unused();
        c
    }

    fn err(&mut self, e: CheckError) {
        self.errors.push(e);
    }

    fn module(&self) -> String {
        self.m.name.clone()
    }

    fn names(&mut self) {
        let m = self.m;
        let mut seen: HashSet<&str> = HashSet::new();
        let mut names: Vec<&str> = vec![&m.name];
        names.extend(m.params.iter().map(|p| p.name.as_str()));
        names.extend(m.nets.iter().map(|n| n.name.as_str()));
        let mem_names: Vec<String> = m.mems.iter().map(|x| x.array_name()).collect();
        names.extend(mem_names.iter().map(|s| s.as_str()));
        let check_names: Vec<String> = m.checks.iter().map(|k| format!("g_check_{}", k.label)).collect();
        names.extend(check_names.iter().map(|s| s.as_str()));
        names.extend(m.props.iter().map(|p| p.label.as_str()));
        if !m.props.is_empty() {
            names.push(RESET_FIRST);
        }
        for item in &m.items {
            if let Item::Instance(inst) = item {
                names.push(&inst.name);
                if let Some(reason) = name_problem(&inst.child.name) {
                    let (module, name) = (self.module(), inst.child.name.clone());
                    self.err(CheckError::BadName { module, name, reason });
                }
            }
        }
        for (i, &name) in names.iter().enumerate() {
            if let Some(reason) = name_problem(name) {
                let (module, name) = (self.module(), name.to_string());
                self.err(CheckError::BadName { module, name, reason });
            } else if i > 0 && !seen.insert(name) {
                let (module, name) = (self.module(), name.to_string());
                self.err(CheckError::DuplicateName { module, name });
            }
        }
        for (i, n) in m.nets.iter().enumerate() {
            self.index.entry(n.name.as_str()).or_insert(i);
        }
    }

    /// Marks parameter references as used and checks they are this module's.
    fn param_refs(&mut self, e: &ParamExpr, context: &str) {
        let mut refs = Vec::new();
        e.visit_refs(&mut |name, value| refs.push((name.to_string(), value)));
        for (name, value) in refs {
            match self.params.get(name.as_str()) {
                None => {
                    let reason = format!("used in {context} but not declared in this module");
                    let module = self.module();
                    self.err(CheckError::BadParam { module, param: name, reason });
                }
                Some(&(v, _)) if v != value => {
                    let reason = format!(
                        "used in {context} with value {value} but declared with {v}; \
                         is it a parameter of another module?"
                    );
                    let module = self.module();
                    self.err(CheckError::BadParam { module, param: name, reason });
                }
                Some(_) => {
                    self.params_used.insert(name);
                }
            }
        }
    }

    fn parameters(&mut self) {
        let m = self.m;
        for p in &m.params {
            match p.value.eval() {
                Some(v) if v >= 0 => {
                    self.params.insert(&p.name, (v as u64, p.local));
                }
                _ => {
                    let reason = format!("value `{}` does not evaluate to an integer in 0..2^31", p.value);
                    let (module, param) = (self.module(), p.name.clone());
                    self.err(CheckError::BadParam { module, param, reason });
                }
            }
        }
        for p in m.params.iter().filter(|p| p.local) {
            self.param_refs(&p.value, &format!("localparam {}", p.name));
        }
        for k in &m.checks {
            self.param_refs(&k.cond, &format!("parameter rule {}", k.label));
            if k.cond.eval().unwrap_or(0) == 0 {
                let module = self.module();
                self.err(CheckError::ParamCheckFailed { module, label: k.label.clone(), message: k.message.clone() });
            }
        }
    }

    fn size(&mut self, name: &str, size: &crate::param::Size, what: &str, min: u32) {
        if let Some(sym) = &size.sym {
            self.param_refs(sym, &format!("the {what} of {name}"));
        }
        if size.value < min {
            let reason = format!("{what} must be at least {min}, got {}", size.value);
            let (module, net) = (self.module(), name.to_string());
            self.err(CheckError::BadSize { module, net, reason });
        }
    }

    fn sizes(&mut self) {
        let m = self.m;
        for n in &m.nets {
            self.size(&n.name, &n.size, "width", 1);
            let port = matches!(n.kind, NetKind::Input | NetKind::Output);
            if let (true, Some(sym)) = (port, &n.size.sym) {
                let mut locals = Vec::new();
                sym.visit_refs(&mut |name, _| {
                    if m.params.iter().any(|p| p.local && p.name == name) {
                        locals.push(name.to_string());
                    }
                });
                for l in locals {
                    let reason = format!(
                        "port width uses localparam {l}, which Verilog-2005 declares after the \
                         ports; write it as an expression of parameters"
                    );
                    let (module, net) = (self.module(), n.name.clone());
                    self.err(CheckError::BadSize { module, net, reason });
                }
            }
        }
        for mem in &m.mems {
            let name = mem.array_name();
            self.size(&name, &mem.width, "width", 1);
            self.size(&name, &mem.depth, "depth", 2);
        }
    }

    fn clock(&mut self) {
        let m = self.m;
        // Properties need no clock: a combinational module's print in `always @*`.
        let has_seq = m.items.iter().chain(&m.formal_items).any(|i| matches!(i, Item::Seq(_)));
        let Some((clk, rst)) = &m.clock else {
            if !m.regs.is_empty() || !m.mems.is_empty() || has_seq {
                let reason = "registers, memories or clocked blocks but no clock".to_string();
                let module = self.module();
                self.err(CheckError::NoClock { module, reason });
            }
            return;
        };
        let needs_rst = m.regs.iter().any(|r| r.reset.is_some());
        let needs_clk = !m.regs.is_empty() || !m.mems.is_empty() || has_seq;
        for (sig, used) in [(clk, needs_clk), (rst, needs_rst)] {
            let ok = self.index.get(sig.name()).map(|&i| &m.nets[i]);
            let reason = match ok {
                None => Some("is not declared in this module"),
                Some(n) if n.kind != NetKind::Input => Some("must be an input port"),
                Some(n) if n.size.value != 1 => Some("must be 1 bit"),
                Some(_) => None,
            };
            if let Some(reason) = reason {
                let (module, net) = (self.module(), sig.name().to_string());
                self.err(CheckError::BadClock { module, net, reason: reason.into() });
            } else if used {
                let i = self.index[sig.name()];
                self.read[i].iter_mut().for_each(|b| *b = true);
            }
        }
    }

    /// Looks up a net used in an expression or as a target.
    fn lookup(&mut self, s: &Signal, context: &str) -> Option<usize> {
        let Some(&i) = self.index.get(s.name()) else {
            let (module, net) = (self.module(), s.name().to_string());
            let context = context.to_string();
            self.err(CheckError::UnknownNet { module, net, context });
            return None;
        };
        let declared = self.m.nets[i].size.value;
        if declared != s.width() {
            let (module, net) = (self.module(), s.name().to_string());
            let (context, used) = (context.to_string(), s.width());
            self.err(CheckError::ForeignNet { module, net, context, used, declared });
            return None;
        }
        Some(i)
    }

    /// Validates an expression, records what it reads and returns its width.
    /// `target` names the net the value flows to, for messages.
    fn expr(&mut self, e: &Expr, target: &str, context: &str) -> Option<u32> {
        let mut selects_ok = true;
        let mut nets = Vec::new();
        e.visit(&mut |x| match x {
            Expr::Net(s) => nets.push(s.clone()),
            Expr::Slice { base, .. } | Expr::Index { base, .. } | Expr::Part { base, .. }
                if !matches!(**base, Expr::Net(_)) =>
            {
                selects_ok = false
            }
            _ => {}
        });
        if !selects_ok {
            let (module, net) = (self.module(), target.to_string());
            let context = context.to_string();
            self.err(CheckError::SelectOfExpression { module, net, context });
        }
        let mut nets_ok = true;
        for s in &nets {
            match self.lookup(s, context) {
                Some(i) if !self.formal && self.m.nets[i].kind.is_formal() => {
                    let (module, net, context) = (self.module(), s.name().to_string(), context.to_string());
                    self.err(CheckError::FormalInDesign { module, net, context });
                }
                Some(_) => {}
                None => nets_ok = false,
            }
        }
        if !nets_ok {
            return None;
        }
        // Reads count even when the widths are wrong, so one mistake is one error.
        let mut reads = Vec::new();
        e.visit_reads(&mut |s, bits| reads.push((self.index[s.name()], bits)));
        for (i, bits) in reads {
            if self.formal && !self.m.nets[i].kind.is_formal() {
                continue;
            }
            let read = &mut self.read[i];
            let all = (read.len() as u32 - 1, 0);
            let (hi, lo) = bits.filter(|&(hi, lo)| lo <= hi && hi < all.0 + 1).unwrap_or(all);
            read[lo as usize..=hi as usize].iter_mut().for_each(|b| *b = true);
        }
        if !selects_ok {
            return None;
        }
        match e.width() {
            Ok(w) => Some(w),
            Err(we) => {
                let (module, net) = (self.module(), target.to_string());
                let context = context.to_string();
                let (op, detail) = (we.op, we.detail);
                self.err(CheckError::OperandWidth { module, net, context, op, detail });
                None
            }
        }
    }

    /// Validates an assignment target; returns its net and width.
    fn lvalue(&mut self, lv: &LValue, context: &str) -> Option<(usize, u32)> {
        let i = self.lookup(&lv.net, context)?;
        match lv.width() {
            Some(w) => Some((i, w)),
            None => {
                let (hi, lo) = lv.bits();
                let reason = format!("target range [{hi}:{lo}] is outside the net ({context})");
                let (module, net) = (self.module(), lv.net.name().to_string());
                self.err(CheckError::BadSize { module, net, reason });
                None
            }
        }
    }

    fn expect_width(&mut self, net: &str, context: &str, expected: u32, found: Option<u32>) {
        if let Some(found) = found {
            if found != expected {
                let (module, net, context) = (self.module(), net.to_string(), context.to_string());
                self.err(CheckError::WidthMismatch { module, net, context, expected, found });
            }
        }
    }

    fn drive(&mut self, net: usize, lv: &LValue, desc: &str, procedural: bool) {
        let kind = self.m.nets[net].kind;
        if self.formal && !kind.is_formal() {
            let (module, net, context) = (self.module(), lv.net.name().to_string(), desc.to_string());
            self.err(CheckError::DesignDrivenByFormal { module, net, context });
        } else if !self.formal && kind.is_formal() {
            let (module, net, context) = (self.module(), lv.net.name().to_string(), desc.to_string());
            self.err(CheckError::FormalInDesign { module, net, context });
        }
        let (hi, lo) = lv.bits();
        self.drivers[net].push(Driver { desc: desc.to_string(), procedural, hi, lo });
    }

    fn items(&mut self, items: &'m [Item]) {
        let (mut n_assign, mut n_comb, mut n_seq) = (0, 0, 0);
        let formal = if self.formal { "formal " } else { "" };
        for item in items {
            match item {
                Item::Comment(_) => {}
                Item::Assign(lhs, rhs) => {
                    n_assign += 1;
                    let context = format!("{formal}assign #{n_assign} to `{}`", lhs.net.name());
                    let target = self.lvalue(lhs, &context);
                    let w = self.expr(rhs, lhs.net.name(), &context);
                    if let Some((i, lw)) = target {
                        self.expect_width(lhs.net.name(), &context, lw, w);
                        self.drive(i, lhs, &context, false);
                        let mut reads = Vec::new();
                        rhs.visit_reads(&mut |s, _| reads.push(s.name().to_string()));
                        for r in reads {
                            if let Some(&j) = self.index.get(r.as_str()) {
                                self.graph[j].insert(i);
                            }
                        }
                    }
                }
                Item::Comb(body) => {
                    n_comb += 1;
                    let desc = format!("{formal}always @* block #{n_comb}{}", first_target(body));
                    self.block(body, &Block { desc, comb: true });
                }
                Item::Seq(body) => {
                    n_seq += 1;
                    let desc = format!("{formal}always @(posedge) block #{n_seq}{}", first_target(body));
                    self.block(body, &Block { desc, comb: false });
                }
                Item::Instance(inst) => self.instance(inst),
                Item::MemPeek { lhs, mem, addr } => {
                    n_assign += 1;
                    let decl = &self.m.mems[*mem];
                    let context =
                        format!("{formal}assign #{n_assign} to `{}` from {}", lhs.net.name(), decl.array_name());
                    let (mw, aw) = (decl.width.value, addr_width(decl.depth.value));
                    let target = self.lvalue(lhs, &context);
                    let w = self.expr(addr, lhs.net.name(), &context);
                    self.expect_width(lhs.net.name(), &context, aw, w);
                    if !self.formal {
                        let (module, net) = (self.module(), lhs.net.name().to_string());
                        self.err(CheckError::FormalInDesign { module, net, context: context.clone() });
                    }
                    if let Some((i, lw)) = target {
                        self.expect_width(lhs.net.name(), &context, lw, Some(mw));
                        self.drive(i, lhs, &context, false);
                    }
                }
            }
        }
    }

    /// Properties: one-bit conditions over any nets; formal nets they read
    /// count as used. In a clocked module the property block is clocked and
    /// the first cycle assumes the reset; a module without a clock (a
    /// combinational unit) states them over one instant, in `always @*`.
    fn properties(&mut self) {
        let m = self.m;
        for p in &m.props {
            let context = format!("property `{}`", p.label);
            let w = self.expr(&p.cond, &p.label, &context);
            if let Some(w) = w.filter(|&w| w != 1) {
                let (module, label) = (self.module(), p.label.clone());
                self.err(CheckError::BadProperty {
                    module,
                    label,
                    reason: format!("condition is {w} bits, must be 1"),
                });
            }
        }
        if let Some(i) = self.index.get(PAST_VALID).copied() {
            // Read by the property block's gate.
            self.read[i].iter_mut().for_each(|b| *b = true);
        }
    }

    fn next_state(&mut self) {
        let body = self.m.next_state_block();
        if !body.is_empty() {
            let desc = "next-state always @* block".to_string();
            self.block(&body, &Block { desc, comb: true });
        }
    }

    /// Checks an always block: widths, drivers, and for a combinational block
    /// latches and dependency edges.
    fn block(&mut self, body: &[Stmt], b: &Block) {
        let mut written: BTreeMap<usize, Vec<bool>> = BTreeMap::new();
        let mut lvs = Vec::new();
        for_each_lvalue(body, &mut |lv| lvs.push(lv.clone()));
        for lv in &lvs {
            if let Some((i, _)) = self.lvalue(lv, &b.desc) {
                let bits = written.entry(i).or_insert_with(|| vec![false; self.m.nets[i].size.value as usize]);
                let (hi, lo) = lv.bits();
                bits[lo as usize..=hi as usize].iter_mut().for_each(|x| *x = true);
                self.drive(i, lv, &b.desc, true);
            }
        }
        let mut state = Assigned::new();
        let mut inputs = BTreeSet::new();
        self.stmts(body, b, &written, &mut state, &mut inputs);
        if !b.comb {
            return;
        }
        for (&i, bits) in &written {
            let have = state.get(&i);
            let complete = bits.iter().enumerate().all(|(k, &w)| !w || have.is_some_and(|h| h[k]));
            if !complete {
                let (module, net) = (self.module(), self.m.nets[i].name.clone());
                self.err(CheckError::Latch { module, net, block: b.desc.clone() });
            }
        }
        for &j in &inputs {
            for &i in written.keys() {
                self.graph[j].insert(i);
            }
        }
    }

    /// Records the nets `e` reads that are inputs of the block: those not yet
    /// assigned on this path (a read after assignment sees the block's own
    /// value and is no dependency).
    fn block_reads(
        &self,
        e: &Expr,
        written: &BTreeMap<usize, Vec<bool>>,
        state: &Assigned,
        inputs: &mut BTreeSet<usize>,
    ) {
        e.visit_reads(&mut |s, bits| {
            let Some(&i) = self.index.get(s.name()) else { return };
            if written.contains_key(&i) {
                let have = state.get(&i);
                let (hi, lo) = bits.unwrap_or((s.width().saturating_sub(1), 0));
                let local = (lo..=hi).all(|k| have.is_some_and(|h| h.get(k as usize) == Some(&true)));
                if local {
                    return;
                }
            }
            inputs.insert(i);
        });
    }

    fn stmts(
        &mut self,
        body: &[Stmt],
        b: &Block,
        written: &BTreeMap<usize, Vec<bool>>,
        state: &mut Assigned,
        inputs: &mut BTreeSet<usize>,
    ) {
        for s in body {
            match s {
                Stmt::Assign { lhs, rhs } => {
                    let name = lhs.net.name();
                    let w = self.expr(rhs, name, &b.desc);
                    self.block_reads(rhs, written, state, inputs);
                    if let (Some(lw), Some(&i)) = (lhs.width(), self.index.get(name)) {
                        self.expect_width(name, &b.desc, lw, w);
                        let bits = state.entry(i).or_insert_with(|| vec![false; self.m.nets[i].size.value as usize]);
                        let (hi, lo) = lhs.bits();
                        if (hi as usize) < bits.len() {
                            bits[lo as usize..=hi as usize].iter_mut().for_each(|x| *x = true);
                        }
                    }
                }
                Stmt::If { cond, then, els } => {
                    let w = self.expr(cond, "if condition", &b.desc);
                    self.expect_width("if condition", &b.desc, 1, w);
                    self.block_reads(cond, written, state, inputs);
                    let mut s1 = state.clone();
                    self.stmts(then, b, written, &mut s1, inputs);
                    let mut s2 = state.clone();
                    self.stmts(els, b, written, &mut s2, inputs);
                    *state = intersect(&[s1, s2]);
                }
                Stmt::Case { sel, arms, default } => {
                    let sel_name = crate::print::expr_string(sel);
                    let sw = self.expr(sel, &sel_name, &b.desc);
                    self.block_reads(sel, written, state, inputs);
                    let mut labels = BTreeSet::new();
                    for arm in arms {
                        for l in &arm.labels {
                            let reason = match (l, sw) {
                                (Expr::Const { width, value }, Some(sw)) if *width == sw => (!labels.insert(*value))
                                    .then(|| format!("label {} appears twice", crate::print::expr_string(l))),
                                (Expr::Const { width, .. }, Some(sw)) => {
                                    Some(format!("label is {width} bits, selector is {sw}"))
                                }
                                (Expr::Const { .. }, None) => None,
                                _ => Some("labels must be constants".to_string()),
                            };
                            if let Some(reason) = reason {
                                let module = self.module();
                                self.err(CheckError::CaseLabel {
                                    module,
                                    block: b.desc.clone(),
                                    selector: sel_name.clone(),
                                    reason,
                                });
                            }
                        }
                    }
                    let full = sw.is_some_and(|w| w < 20 && labels.len() as u64 == 1u64 << w);
                    if default.is_none() && !full {
                        let module = self.module();
                        self.err(CheckError::CaseIncomplete {
                            module,
                            block: b.desc.clone(),
                            selector: sel_name.clone(),
                        });
                    }
                    let mut outcomes = Vec::new();
                    for arm in arms {
                        let mut s = state.clone();
                        self.stmts(&arm.body, b, written, &mut s, inputs);
                        outcomes.push(s);
                    }
                    let mut s = state.clone();
                    if let Some(d) = default {
                        self.stmts(d, b, written, &mut s, inputs);
                    }
                    if default.is_some() || !full || arms.is_empty() {
                        outcomes.push(s);
                    }
                    *state = intersect(&outcomes);
                }
            }
        }
    }

    fn instance(&mut self, inst: &crate::ir::Instance) {
        let child = &inst.child;
        let mut problems = Vec::new();
        for (name, value) in &inst.params {
            self.param_refs(value, &format!("instance {}", inst.name));
            match child.params.iter().find(|(n, _)| n == name) {
                None => problems.push(format!("has no parameter `{name}`")),
                Some((_, v)) => {
                    if value.eval() != i64::try_from(*v).ok() {
                        problems.push(format!(
                            "parameter `{name}` is overridden with `{value}` = {:?} but the child \
                             was generated for {v}; generate the child from the same config",
                            value.eval()
                        ));
                    }
                }
            }
        }
        let mut conns: HashMap<&str, usize> = HashMap::new();
        let mut port_nets: HashMap<&str, Vec<usize>> = HashMap::new();
        for (k, (port, expr)) in inst.conns.iter().enumerate() {
            let Some(p) = child.ports.iter().find(|p| &p.name == port) else {
                problems.push(format!("has no port `{port}`"));
                continue;
            };
            if conns.insert(port, k).is_some() {
                problems.push(format!("port `{port}` is connected twice"));
                continue;
            }
            let context = format!("instance `{}` port .{port}", inst.name);
            match p.dir {
                Dir::Input => {
                    let w = self.expr(expr, port, &context);
                    self.expect_width(port, &context, p.width, w);
                    let mut reads = Vec::new();
                    expr.visit_reads(&mut |s, _| reads.push(s.name().to_string()));
                    let nets = reads.iter().filter_map(|r| self.index.get(r.as_str()).copied()).collect();
                    port_nets.insert(port, nets);
                }
                Dir::Output => {
                    let lv = match expr {
                        Expr::Net(s) => Some(LValue::from(s)),
                        Expr::Slice { base, hi, lo } => match &**base {
                            Expr::Net(s) => Some(s.lv_slice(*hi, *lo)),
                            _ => None,
                        },
                        _ => None,
                    };
                    let Some(lv) = lv else {
                        problems.push(format!("output `{port}` must connect to a net or a constant part of one"));
                        continue;
                    };
                    if let Some((i, w)) = self.lvalue(&lv, &context) {
                        self.expect_width(lv.net.name(), &context, p.width, Some(w));
                        self.drive(i, &lv, &context, false);
                        port_nets.insert(port, vec![i]);
                    }
                }
            }
        }
        for p in &child.ports {
            if !conns.contains_key(p.name.as_str()) {
                problems.push(format!("port `{}` is not connected", p.name));
            }
        }
        for (from, to) in &child.comb_paths {
            let (Some(ins), Some(outs)) = (port_nets.get(from.as_str()), port_nets.get(to.as_str())) else {
                continue;
            };
            for &j in ins {
                for &i in outs {
                    self.graph[j].insert(i);
                }
            }
        }
        for reason in problems {
            let module = self.module();
            self.err(CheckError::Instance { module, instance: inst.name.clone(), child: child.name.clone(), reason });
        }
    }

    fn registers(&mut self) {
        let m = self.m;
        for r in &m.regs {
            let q = &m.nets[r.q];
            let desc = "register block";
            self.drivers[r.q].push(Driver {
                desc: desc.into(),
                procedural: true,
                hi: q.size.value.saturating_sub(1),
                lo: 0,
            });
            // The register block stores `_next` into `_reg`.
            self.read[r.next].iter_mut().for_each(|b| *b = true);
            if let Some(value) = r.reset {
                let width = q.size.value;
                if width < 64 && value >> width != 0 {
                    let (module, net) = (self.module(), q.name.clone());
                    self.err(CheckError::ResetValue { module, net, value, width });
                }
            }
        }
    }

    fn memories(&mut self) {
        let m = self.m;
        for mem in &m.mems {
            let name = mem.array_name();
            let aw = addr_width(mem.depth.value);
            let mut problems = Vec::new();
            match mem.writes.len() {
                0 => problems.push("is never written; add a write port".to_string()),
                1 => {}
                n => problems.push(format!("has {n} write ports; one is supported")),
            }
            if mem.reads.is_empty() {
                problems.push("is never read; add a read port".to_string());
            }
            for w in &mem.writes {
                let context = format!("write port of `{name}`");
                let we = self.expr(&w.en, &name, &context);
                self.expect_width(&name, &format!("{context} enable"), 1, we);
                let wa = self.expr(&w.addr, &name, &context);
                self.expect_width(&name, &format!("{context} address"), aw, wa);
                let wd = self.expr(&w.data, &name, &context);
                self.expect_width(&name, &format!("{context} data"), mem.width.value, wd);
            }
            for r in &mem.reads {
                let data = m.nets[r.data].name.clone();
                let context = format!("read port `{data}` of `{name}`");
                let we = self.expr(&r.en, &data, &context);
                self.expect_width(&data, &format!("{context} enable"), 1, we);
                let wa = self.expr(&r.addr, &data, &context);
                self.expect_width(&data, &format!("{context} address"), aw, wa);
                let w = m.nets[r.data].size.value;
                self.drivers[r.data].push(Driver { desc: context, procedural: true, hi: w.saturating_sub(1), lo: 0 });
            }
            for reason in problems {
                let (module, memory) = (self.module(), name.clone());
                self.err(CheckError::Memory { module, memory, reason });
            }
        }
    }

    fn driver_rules(&mut self) {
        let m = self.m;
        for (i, n) in m.nets.iter().enumerate() {
            let drivers = &self.drivers[i];
            let mut descs: Vec<String> = Vec::new();
            for d in drivers {
                if !descs.contains(&d.desc) {
                    descs.push(d.desc.clone());
                }
            }
            let module = m.name.clone();
            let net = n.name.clone();
            if n.kind == NetKind::Input {
                if let Some(driver) = descs.first().cloned() {
                    self.errors.push(CheckError::InputDriven { module, net, driver });
                }
                continue;
            }
            if n.kind == NetKind::FormalAnyconst {
                // The solver drives it.
                if let Some(driver) = descs.first().cloned() {
                    self.errors.push(CheckError::MultipleDrivers { module, net, drivers: vec![driver] });
                }
                continue;
            }
            let procedural = drivers.iter().any(|d| d.procedural);
            if procedural && descs.len() > 1 {
                self.errors.push(CheckError::MultipleDrivers { module, net, drivers: descs });
                continue;
            }
            let width = n.size.value as usize;
            let mut count = vec![0u32; width];
            for d in drivers {
                for c in count.iter_mut().take(d.hi as usize + 1).skip(d.lo as usize) {
                    *c += 1;
                }
            }
            if !procedural && count.iter().any(|&c| c > 1) {
                self.errors.push(CheckError::MultipleDrivers { module, net, drivers: descs });
                continue;
            }
            let missing: Vec<bool> = count.iter().map(|&c| c == 0).collect();
            if missing.iter().any(|&b| b) {
                let bits = ranges(&missing);
                self.errors.push(CheckError::Undriven { module, net, bits });
            }
        }
    }

    fn loops(&mut self) {
        let n = self.m.nets.len();
        let sccs = tarjan(&self.graph, n);
        for scc in sccs {
            let v = scc[0];
            let cyclic = scc.len() > 1 || self.graph[v].contains(&v);
            if !cyclic {
                continue;
            }
            let members: HashSet<usize> = scc.iter().copied().collect();
            // Shortest way from v back to itself inside the component.
            let mut prev: HashMap<usize, usize> = HashMap::new();
            let mut queue = VecDeque::from([v]);
            let mut end = None;
            'bfs: while let Some(x) = queue.pop_front() {
                for &y in &self.graph[x] {
                    if y == v {
                        end = Some(x);
                        break 'bfs;
                    }
                    if members.contains(&y) && !prev.contains_key(&y) {
                        prev.insert(y, x);
                        queue.push_back(y);
                    }
                }
            }
            let mut back = Vec::new();
            let mut x = end.unwrap_or(v);
            while x != v {
                back.push(x);
                x = prev[&x];
            }
            let mut path = vec![v];
            path.extend(back.iter().rev());
            path.push(v);
            let path = path.iter().map(|&i| self.m.nets[i].name.clone()).collect();
            let module = self.module();
            self.err(CheckError::CombLoop { module, path });
        }
    }

    fn unused(&mut self) {
        let m = self.m;
        for (i, n) in m.nets.iter().enumerate() {
            // Verilator's own exemption (`--unused-regexp`, default
            // `*unused*`): a net named so exists to sink bits on purpose,
            // such as the instance outputs a netlist leaves open.
            if n.kind == NetKind::Output || n.name.contains(UNUSED_SINK) {
                continue;
            }
            let unread: Vec<bool> = self.read[i].iter().map(|&r| !r).collect();
            if unread.iter().any(|&b| b) {
                let (module, net, bits) = (m.name.clone(), n.name.clone(), ranges(&unread));
                self.errors.push(CheckError::Unused { module, net, bits });
            }
        }
        for p in &m.params {
            if !self.params_used.contains(&p.name) {
                let (module, param) = (m.name.clone(), p.name.clone());
                self.errors.push(CheckError::UnusedParam { module, param });
            }
        }
    }
}

fn first_target(body: &[Stmt]) -> String {
    let mut first = None;
    for_each_lvalue(body, &mut |lv| {
        first.get_or_insert_with(|| lv.net.name().to_string());
    });
    first.map(|n| format!(" driving `{n}`")).unwrap_or_default()
}

/// Bits assigned on every one of `paths`.
fn intersect(paths: &[Assigned]) -> Assigned {
    let Some((first, rest)) = paths.split_first() else {
        return Assigned::new();
    };
    let mut out = first.clone();
    for p in rest {
        out.retain(|k, bits| match p.get(k) {
            Some(other) => {
                bits.iter_mut().zip(other).for_each(|(a, &b)| *a &= b);
                true
            }
            None => false,
        });
    }
    out
}

/// Strongly connected components, each sorted, in order of their smallest
/// member (so messages are stable).
fn tarjan(graph: &[BTreeSet<usize>], n: usize) -> Vec<Vec<usize>> {
    struct T<'g> {
        graph: &'g [BTreeSet<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(t: &mut T, v: usize) {
        t.index[v] = Some(t.next);
        t.low[v] = t.next;
        t.next += 1;
        t.stack.push(v);
        t.on_stack[v] = true;
        for &w in t.graph[v].iter() {
            match t.index[w] {
                None => {
                    visit(t, w);
                    t.low[v] = t.low[v].min(t.low[w]);
                }
                Some(iw) if t.on_stack[w] => t.low[v] = t.low[v].min(iw),
                Some(_) => {}
            }
        }
        if Some(t.low[v]) == t.index[v] {
            let mut scc = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on_stack[w] = false;
                scc.push(w);
                if w == v {
                    break;
                }
            }
            scc.sort_unstable();
            t.out.push(scc);
        }
    }
    let mut t = T {
        graph,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if t.index[v].is_none() {
            visit(&mut t, v);
        }
    }
    t.out.sort();
    t.out
}
