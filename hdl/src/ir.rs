//! The module IR and its builder.

use crate::expr::{Expr, LValue, Signal};
use crate::param::{Param, ParamExpr, Size};

/// Port direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    Input,
    Output,
}

/// What a net is; decides who may drive it and how it is declared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetKind {
    Input,
    Output,
    /// Internal signal; printed as `wire`, or `reg` when an always block
    /// drives it.
    Wire,
    /// `<name>_reg` of register `regs[i]`, stored by the register block.
    RegQ(usize),
    /// `<name>_next` of register `regs[i]`, computed by the next-state block.
    RegNext(usize),
    /// Registered read data of memory `mems[i]`.
    MemRead(usize),
    /// Formal-only signal (ghost state, `$past`-style registers): declared
    /// inside `` `ifdef FORMAL ``, driven by formal items only, read by
    /// formal items and properties only.
    Formal,
    /// Formal-only constant the solver picks once, `(* anyconst *) reg`:
    /// "for every value" without enumerating them.
    FormalAnyconst,
}

impl NetKind {
    /// Declared inside `` `ifdef FORMAL ``: synthesis and simulators never see it.
    pub fn is_formal(self) -> bool {
        matches!(self, NetKind::Formal | NetKind::FormalAnyconst)
    }
}

/// A declared net.
#[derive(Clone, Debug)]
pub struct NetDecl {
    pub name: String,
    pub size: Size,
    pub kind: NetKind,
    pub comment: String,
    /// Banner the port is listed under (ports only).
    pub group: Option<String>,
    /// Initial value in the declaration (`reg x = 1'b0;`); formal nets only.
    pub init: Option<u64>,
}

/// A `parameter` or `localparam`.
#[derive(Clone, Debug)]
pub struct ParamDecl {
    pub name: String,
    /// For a `parameter`, a constant; for a `localparam`, derived from others.
    pub value: ParamExpr,
    pub local: bool,
    pub comment: String,
}

/// A parameter rule checked in Rust and at elaboration.
#[derive(Clone, Debug)]
pub struct ParamCheck {
    /// Identifier used in the guard's block and module names.
    pub label: String,
    /// Must evaluate to true.
    pub cond: ParamExpr,
    pub message: String,
}

/// A register: `<base>_reg` / `<base>_next` and its reset value.
#[derive(Clone, Debug)]
pub struct RegDecl {
    pub base: String,
    /// Index of `<base>_reg` in the module's nets.
    pub q: usize,
    /// Index of `<base>_next` in the module's nets.
    pub next: usize,
    /// Value loaded while `rst` is high; `None` for data registers that need
    /// no reset (the valid bit beside them carries it).
    pub reset: Option<u64>,
}

/// Name of the formal register that is 0 in the first cycle only.
pub const PAST_VALID: &str = "f_past_valid";

/// Label of the assumption that the first cycle is a reset.
pub const RESET_FIRST: &str = "f_reset_first";

/// Handle to a register, returned by [`Module::reg`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reg {
    /// Current value, `<base>_reg`: read it anywhere.
    pub q: Signal,
    /// Next value, `<base>_next`: assign it with [`Module::next`] only; it
    /// holds `q` unless a statement there assigns it.
    pub next: Signal,
}

/// Which RAM resource a memory should map to. Each prints both vendors'
/// attributes on one line so the RTL stays vendor-neutral.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemStyle {
    /// Block RAM (Xilinx `block`, Intel `M20K`).
    Block,
    /// LUT RAM (Xilinx `distributed`, Intel `MLAB`).
    Distributed,
    /// Flip-flops (Xilinx `registers`, Intel `logic`).
    Registers,
}

impl MemStyle {
    pub(crate) fn attribute(self) -> &'static str {
        match self {
            MemStyle::Block => r#"(* ram_style = "block", ramstyle = "M20K" *)"#,
            MemStyle::Distributed => r#"(* ram_style = "distributed", ramstyle = "MLAB" *)"#,
            MemStyle::Registers => r#"(* ram_style = "registers", ramstyle = "logic" *)"#,
        }
    }
}

/// A memory write port: `if (en) mem[addr] <= data;` on the module clock.
#[derive(Clone, Debug)]
pub struct MemWrite {
    pub en: Expr,
    pub addr: Expr,
    pub data: Expr,
}

/// A registered memory read port: `if (en) data_reg <= mem[addr];`, so read
/// data appears one cycle after the address.
#[derive(Clone, Debug)]
pub struct MemRead {
    /// Index of the read data register in the module's nets.
    pub data: usize,
    pub en: Expr,
    pub addr: Expr,
}

/// A memory array `<name>_mem` with its ports.
#[derive(Clone, Debug)]
pub struct MemDecl {
    pub name: String,
    pub width: Size,
    pub depth: Size,
    pub style: MemStyle,
    pub comment: String,
    pub writes: Vec<MemWrite>,
    pub reads: Vec<MemRead>,
}

impl MemDecl {
    pub(crate) fn array_name(&self) -> String {
        format!("{}_mem", self.name)
    }
}

/// Handle to a memory, returned by [`Module::memory`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mem {
    index: usize,
    width: u32,
    depth: u32,
}

impl Mem {
    /// Word width in bits.
    pub fn width(&self) -> u32 {
        self.width
    }
    /// Number of words.
    pub fn depth(&self) -> u32 {
        self.depth
    }
    /// Address width: `$clog2(depth)`, at least 1.
    pub fn addr_width(&self) -> u32 {
        addr_width(self.depth)
    }
}

pub(crate) fn addr_width(depth: u32) -> u32 {
    crate::expr::index_bits(depth)
}

/// A statement of an always block. In a combinational block it prints as a
/// blocking `=`, in a clocked block as a non-blocking `<=`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stmt {
    Assign {
        lhs: LValue,
        rhs: Expr,
    },
    If {
        cond: Expr,
        then: Vec<Stmt>,
        els: Vec<Stmt>,
    },
    /// `case (sel)`; labels must be constants of the selector's width, and a
    /// `default` is required unless the labels cover every value.
    Case {
        sel: Expr,
        arms: Vec<CaseArm>,
        default: Option<Vec<Stmt>>,
    },
}

/// One arm of a [`Stmt::Case`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseArm {
    pub labels: Vec<Expr>,
    pub body: Vec<Stmt>,
}

/// `lhs = rhs` (or `<=` in a clocked block).
pub fn set(lhs: impl Into<LValue>, rhs: impl Into<Expr>) -> Stmt {
    Stmt::Assign { lhs: lhs.into(), rhs: rhs.into() }
}

/// `if (cond) begin then end`.
pub fn if_then(cond: impl Into<Expr>, then: Vec<Stmt>) -> Stmt {
    if_else(cond, then, Vec::new())
}

/// `if (cond) begin then end else begin els end`.
pub fn if_else(cond: impl Into<Expr>, then: Vec<Stmt>, els: Vec<Stmt>) -> Stmt {
    Stmt::If { cond: cond.into(), then, els }
}

/// `case (sel) labels: body ... default: default endcase`.
pub fn case(sel: impl Into<Expr>, arms: Vec<(Vec<Expr>, Vec<Stmt>)>, default: Option<Vec<Stmt>>) -> Stmt {
    Stmt::Case {
        sel: sel.into(),
        arms: arms.into_iter().map(|(labels, body)| CaseArm { labels, body }).collect(),
        default,
    }
}

/// What a formal property asks of the solver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PropKind {
    /// Must hold in every reachable cycle (a failure is a counterexample).
    Assert,
    /// Restricts the inputs: traces where it fails are not considered.
    Assume,
    /// Must be reachable (a cover mode run finds a trace to it).
    Cover,
}

impl PropKind {
    /// The Verilog keyword.
    pub fn keyword(self) -> &'static str {
        match self {
            PropKind::Assert => "assert",
            PropKind::Assume => "assume",
            PropKind::Cover => "cover",
        }
    }
}

/// A formal property: an immediate `label: assert (cond);` (or `assume`,
/// `cover`) in the module's property block, a clocked block inside
/// `` `ifdef FORMAL ``. Checked from the second cycle on: the first cycle is
/// assumed to be a reset (`f_reset_first`), so registers without a reset
/// value start arbitrary, as in hardware.
#[derive(Clone, Debug)]
pub struct Property {
    pub kind: PropKind,
    /// Identifier: names the property in the tools' reports.
    pub label: String,
    /// What it means and why it holds, printed above it.
    pub comment: String,
    /// One bit.
    pub cond: Expr,
}

/// Body item of a module, printed in the order added.
#[derive(Clone, Debug)]
pub enum Item {
    /// `// text` before the next item.
    Comment(String),
    Assign(LValue, Expr),
    /// `always @*`
    Comb(Vec<Stmt>),
    /// `always @(posedge clk)`
    Seq(Vec<Stmt>),
    Instance(Instance),
    /// `assign lhs = <array>[addr];`: a formal-only look at one memory
    /// word (formal items only; see [`Module::formal_mem_word`]).
    MemPeek {
        lhs: LValue,
        mem: usize,
        addr: Expr,
    },
}

/// The interface of a module as an instance sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModuleSig {
    pub name: String,
    /// Overridable parameters and the values the module was generated for.
    pub params: Vec<(String, u64)>,
    pub ports: Vec<PortSig>,
    /// `(input, output)` pairs with a combinational path between them, so the
    /// parent's loop check sees through the instance. A hand-written
    /// signature of a module whose paths are unknown should list every pair.
    pub comb_paths: Vec<(String, String)>,
}

/// One port of a [`ModuleSig`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortSig {
    pub name: String,
    pub dir: Dir,
    pub width: u32,
}

/// An instance of another module.
#[derive(Clone, Debug)]
pub struct Instance {
    pub name: String,
    pub child: ModuleSig,
    /// Parameter overrides; each must evaluate to the value the child was
    /// generated for, because the child's widths are concrete.
    pub params: Vec<(String, ParamExpr)>,
    /// Named connections; every port must be connected once. Outputs connect
    /// to a net or a constant part of one.
    pub conns: Vec<(String, Expr)>,
}

impl Instance {
    /// Adds a parameter override `.name(value)`.
    pub fn param(&mut self, name: &str, value: impl Into<ParamExpr>) -> &mut Instance {
        self.params.push((name.to_string(), value.into()));
        self
    }

    /// Connects port `port` to `expr`.
    pub fn connect(&mut self, port: &str, expr: impl Into<Expr>) -> &mut Instance {
        self.conns.push((port.to_string(), expr.into()));
        self
    }
}

/// The label of [`Module::generated_values_rule`].
pub(crate) const GENERATED_VALUES: &str = "generated_values";

/// A Verilog module under construction. See the crate docs for a walk-through.
///
/// Builder methods never fail: names, widths and drivers are checked by
/// [`Module::check`], which [`Module::to_verilog`] runs first, so one pass
/// reports every problem at once.
#[derive(Clone, Debug)]
pub struct Module {
    pub(crate) name: String,
    pub(crate) params: Vec<ParamDecl>,
    pub(crate) checks: Vec<ParamCheck>,
    pub(crate) nets: Vec<NetDecl>,
    pub(crate) regs: Vec<RegDecl>,
    pub(crate) mems: Vec<MemDecl>,
    pub(crate) items: Vec<Item>,
    pub(crate) next_state: Vec<Stmt>,
    pub(crate) clock: Option<(Signal, Signal)>,
    pub(crate) doc: Option<String>,
    /// Formal-only logic (ghost state, past registers), printed inside
    /// `` `ifdef FORMAL ``.
    pub(crate) formal_items: Vec<Item>,
    pub(crate) props: Vec<Property>,
    group: Option<String>,
}

impl Module {
    /// An empty module; `name` is also the file name.
    pub fn new(name: &str) -> Module {
        Module {
            name: name.to_string(),
            params: Vec::new(),
            checks: Vec::new(),
            nets: Vec::new(),
            regs: Vec::new(),
            mems: Vec::new(),
            items: Vec::new(),
            next_state: Vec::new(),
            clock: None,
            doc: None,
            formal_items: Vec::new(),
            props: Vec::new(),
            group: None,
        }
    }

    /// The module name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Declares `parameter NAME = value` with a one-line comment. The value is
    /// the one this module is generated for.
    pub fn param(&mut self, name: &str, value: u64, comment: &str) -> Param {
        self.params.push(ParamDecl {
            name: name.to_string(),
            value: ParamExpr::Const(value),
            local: false,
            comment: comment.to_string(),
        });
        Param::new(name, value)
    }

    /// Declares `localparam NAME = value`, derived from other parameters so a
    /// value is never given twice.
    pub fn localparam(&mut self, name: &str, value: impl Into<ParamExpr>, comment: &str) -> Param {
        let value = value.into();
        let v = value.eval().and_then(|v| u64::try_from(v).ok()).unwrap_or_default();
        self.params.push(ParamDecl { name: name.to_string(), value, local: true, comment: comment.to_string() });
        Param::new(name, v)
    }

    /// A rule on the parameters: [`Module::check`] fails when `cond` is false
    /// for the values given, and the printed module refuses to elaborate when
    /// an instance overrides the parameters into breaking it. `label` is a
    /// short identifier that names the rule in tool error messages.
    pub fn param_check(&mut self, label: &str, cond: ParamExpr, message: &str) {
        self.checks.push(ParamCheck { label: label.to_string(), cond, message: message.to_string() });
    }

    /// The rule every module with parameters gets, after its own: each
    /// `parameter` keeps the value the module was generated for. The
    /// generator computes every internal width, depth and unrolled loop from
    /// the config in Rust, so only the ports' widths follow a parameter
    /// expression; an instance overriding `CONNS` would get ports of one size
    /// and registers of another, and tools would truncate silently. With this
    /// rule an override stops elaboration instead; another size is
    /// `mrnic gen` with another config.
    pub(crate) fn generated_values_rule(&self) -> Option<ParamCheck> {
        let fixed: Vec<&ParamDecl> = self.params.iter().filter(|p| !p.local).collect();
        let cond = fixed
            .iter()
            .map(|p| {
                ParamExpr::Ref { name: p.name.clone(), value: p.value.eval().unwrap_or(0) as u64 }.eq(p.value.clone())
            })
            .reduce(|a, b| a.and(b))?;
        let values: Vec<String> = fixed.iter().map(|p| format!("{} = {}", p.name, p.value)).collect();
        Some(ParamCheck {
            label: GENERATED_VALUES.to_string(),
            cond,
            message: format!(
                "generated for {}; its internal sizes are built in, so regenerate (mrnic gen) rather than override",
                values.join(", ")
            ),
        })
    }

    /// Starts a port group; ports declared after this are listed under the
    /// banner `/* banner */`.
    pub fn group(&mut self, banner: &str) {
        self.group = Some(banner.to_string());
    }

    fn net(&mut self, name: &str, size: Size, kind: NetKind, comment: &str) -> (usize, Signal) {
        let group = matches!(kind, NetKind::Input | NetKind::Output).then(|| self.group.clone()).flatten();
        let sig = Signal::new(name, size.value);
        self.nets.push(NetDecl { name: name.to_string(), size, kind, comment: comment.to_string(), group, init: None });
        (self.nets.len() - 1, sig)
    }

    /// Declares an input port.
    pub fn input(&mut self, name: &str, size: impl Into<Size>, comment: &str) -> Signal {
        self.net(name, size.into(), NetKind::Input, comment).1
    }

    /// Declares an output port. Drive it with [`Module::assign`] (usually from
    /// a register) or from one always block.
    pub fn output(&mut self, name: &str, size: impl Into<Size>, comment: &str) -> Signal {
        self.net(name, size.into(), NetKind::Output, comment).1
    }

    /// Declares an internal signal, driven by assigns, one always block or
    /// instance outputs.
    pub fn wire(&mut self, name: &str, size: impl Into<Size>, comment: &str) -> Signal {
        self.net(name, size.into(), NetKind::Wire, comment).1
    }

    /// A wire driven by `e`: [`Module::wire`] and its one assign.
    pub fn wire_from(&mut self, name: &str, size: impl Into<Size>, comment: &str, e: impl Into<Expr>) -> Signal {
        let s = self.wire(name, size, comment);
        self.assign(&s, e);
        s
    }

    /// Sets the clock and synchronous active-high reset of every register,
    /// memory and clocked block in this module. Both must be 1-bit inputs.
    pub fn clock_domain(&mut self, clk: &Signal, rst: &Signal) {
        self.clock = Some((clk.clone(), rst.clone()));
    }

    fn register(&mut self, base: &str, size: Size, reset: Option<u64>, comment: &str) -> Reg {
        let index = self.regs.len();
        let (q, qs) = self.net(&format!("{base}_reg"), size.clone(), NetKind::RegQ(index), comment);
        let (next, ns) = self.net(&format!("{base}_next"), size, NetKind::RegNext(index), comment);
        self.regs.push(RegDecl { base: base.to_string(), q, next, reset });
        Reg { q: qs, next: ns }
    }

    /// Declares register `<base>_reg` with its `<base>_next`, loaded with
    /// `reset` while `rst` is high.
    pub fn reg(&mut self, base: &str, size: impl Into<Size>, reset: u64, comment: &str) -> Reg {
        self.register(base, size.into(), Some(reset), comment)
    }

    /// A register without reset, for data whose validity another register
    /// tracks; saves the reset fan-out.
    pub fn reg_no_reset(&mut self, base: &str, size: impl Into<Size>, comment: &str) -> Reg {
        self.register(base, size.into(), None, comment)
    }

    /// Appends a statement to the one next-state block. The block starts by
    /// assigning every `<base>_next = <base>_reg`, so a register holds unless
    /// a statement here assigns it.
    pub fn next(&mut self, stmt: Stmt) {
        self.next_state.push(stmt);
    }

    /// `assign lhs = rhs;`
    pub fn assign(&mut self, lhs: impl Into<LValue>, rhs: impl Into<Expr>) {
        self.items.push(Item::Assign(lhs.into(), rhs.into()));
    }

    /// A combinational `always @*` block. Every signal it assigns must be
    /// assigned on every path (assign a default first).
    pub fn comb(&mut self, body: Vec<Stmt>) {
        self.items.push(Item::Comb(body));
    }

    /// A clocked `always @(posedge clk)` block. Prefer [`Module::reg`] with
    /// [`Module::next`]; this is for the rare logic that reads better inline.
    pub fn seq(&mut self, body: Vec<Stmt>) {
        self.items.push(Item::Seq(body));
    }

    /// A `// text` comment printed before the next item; say why, not what.
    pub fn comment(&mut self, text: &str) {
        self.items.push(Item::Comment(text.to_string()));
    }

    /// Declares memory `<name>_mem` of `depth` words of `width` bits. Give it
    /// one write port ([`Module::mem_write`]) and one or more registered read
    /// ports ([`Module::mem_read`]).
    pub fn memory(
        &mut self,
        name: &str,
        width: impl Into<Size>,
        depth: impl Into<Size>,
        style: MemStyle,
        comment: &str,
    ) -> Mem {
        let (width, depth) = (width.into(), depth.into());
        let handle = Mem { index: self.mems.len(), width: width.value, depth: depth.value };
        self.mems.push(MemDecl {
            name: name.to_string(),
            width,
            depth,
            style,
            comment: comment.to_string(),
            writes: Vec::new(),
            reads: Vec::new(),
        });
        handle
    }

    /// Adds the write port: `if (en) mem[addr] <= data;`. `addr` must be
    /// [`Mem::addr_width`] bits.
    pub fn mem_write(&mut self, mem: &Mem, en: impl Into<Expr>, addr: impl Into<Expr>, data: impl Into<Expr>) {
        self.mems[mem.index].writes.push(MemWrite { en: en.into(), addr: addr.into(), data: data.into() });
    }

    /// Adds a registered read port and returns its data register
    /// `<name>_reg`, valid one cycle after `en` with `addr`.
    pub fn mem_read(&mut self, mem: &Mem, name: &str, en: impl Into<Expr>, addr: impl Into<Expr>) -> Signal {
        let size = self.mems[mem.index].width.clone();
        let comment = format!("read data of {}, one cycle after the address", self.mems[mem.index].array_name());
        let (data, sig) = self.net(&format!("{name}_reg"), size, NetKind::MemRead(mem.index), &comment);
        self.mems[mem.index].reads.push(MemRead { data, en: en.into(), addr: addr.into() });
        sig
    }

    /// Adds an instance of `child` named `name`; chain
    /// [`Instance::param`] and [`Instance::connect`] on the result.
    pub fn instance(&mut self, name: &str, child: &ModuleSig) -> &mut Instance {
        self.items.push(Item::Instance(Instance {
            name: name.to_string(),
            child: child.clone(),
            params: Vec::new(),
            conns: Vec::new(),
        }));
        match self.items.last_mut() {
            Some(Item::Instance(inst)) => inst,
            _ => unreachable!("an instance was just pushed"),
        }
    }

    /// Declares a formal-only signal (ghost state), printed inside
    /// `` `ifdef FORMAL `` and driven by [`Module::formal_assign`],
    /// [`Module::formal_comb`] or [`Module::formal_seq`]. Design logic may not
    /// read it; reads of design nets by formal logic do not count as uses.
    pub fn formal_wire(&mut self, name: &str, size: impl Into<Size>, comment: &str) -> Signal {
        self.net(name, size.into(), NetKind::Formal, comment).1
    }

    /// A formal-only wire driven by `e` ([`Module::formal_wire`] and
    /// [`Module::formal_assign`] in one), as [`Module::wire_from`] is for
    /// design wires.
    pub fn formal_wire_from(&mut self, name: &str, size: impl Into<Size>, comment: &str, e: impl Into<Expr>) -> Signal {
        let s = self.formal_wire(name, size, comment);
        self.formal_assign(&s, e);
        s
    }

    /// A formal-only register with an initial value (`reg x = v;`), for
    /// ghost state that must be known from the first cycle.
    pub fn formal_reg_init(&mut self, name: &str, size: impl Into<Size>, init: u64, comment: &str) -> Signal {
        let (i, s) = self.net(name, size.into(), NetKind::Formal, comment);
        self.nets[i].init = Some(init);
        s
    }

    /// A formal-only constant that the solver chooses once per trace
    /// (`(* anyconst *) reg`): a property over it holds for every value.
    pub fn formal_anyconst(&mut self, name: &str, size: impl Into<Size>, comment: &str) -> Signal {
        self.net(name, size.into(), NetKind::FormalAnyconst, comment).1
    }

    /// `assign lhs = rhs;` inside `` `ifdef FORMAL ``; `lhs` is a formal net.
    pub fn formal_assign(&mut self, lhs: impl Into<LValue>, rhs: impl Into<Expr>) {
        self.formal_items.push(Item::Assign(lhs.into(), rhs.into()));
    }

    /// An `always @*` block inside `` `ifdef FORMAL ``.
    pub fn formal_comb(&mut self, body: Vec<Stmt>) {
        self.formal_items.push(Item::Comb(body));
    }

    /// An `always @(posedge clk)` block inside `` `ifdef FORMAL ``, for ghost
    /// registers (a module without a clock has none: panics).
    pub fn formal_seq(&mut self, body: Vec<Stmt>) {
        assert!(self.clock.is_some(), "{}: a module without a clock has no ghost registers", self.name);
        self.formal_items.push(Item::Seq(body));
    }

    /// A formal-only wire holding word `addr` of `mem` as it is now
    /// (`assign name = <mem>_mem[addr];`), for invariants that tie ghost
    /// state to a table: k-induction starts from any memory contents, and
    /// an invariant over the stored word rules out the unreachable ones.
    pub fn formal_mem_word(&mut self, mem: &Mem, name: &str, addr: impl Into<Expr>) -> Signal {
        let s = self.formal_wire(
            name,
            mem.width,
            &format!("word of {} at the tracked address", self.mems[mem.index].array_name()),
        );
        self.formal_items.push(Item::MemPeek { lhs: s.clone().into(), mem: mem.index, addr: addr.into() });
        s
    }

    /// A comment before the next formal item.
    pub fn formal_comment(&mut self, text: &str) {
        self.formal_items.push(Item::Comment(text.to_string()));
    }

    /// `f_past_valid`: 0 in the first cycle, 1 after; declared on first use.
    /// Every property is already gated by it. A module without a clock has
    /// no previous cycle: asking for it is a generator bug, and panics.
    pub fn past_valid(&mut self) -> Signal {
        assert!(self.clock.is_some(), "{}: a module without a clock has no previous cycle", self.name);
        if let Some(n) = self.nets.iter().find(|n| n.name == PAST_VALID) {
            return Signal::new(&n.name, 1);
        }
        let s = self.formal_reg_init(PAST_VALID, 1, 0, "0 in the first cycle (a reset), 1 after");
        self.formal_seq(vec![set(&s, crate::expr::lit(1, 1))]);
        s
    }

    /// `f_past_<name>`: the value `e` had in the previous cycle, as a
    /// formal-only register (Verilog-2005 text; no `$past`). Valid whenever
    /// a property runs (they are gated by `f_past_valid`).
    pub fn past(&mut self, name: &str, e: impl Into<Expr>, comment: &str) -> Signal {
        let e = e.into();
        let w = e.width().unwrap_or(1);
        self.past_valid();
        let s = self.formal_wire(&format!("f_past_{name}"), w, comment);
        self.formal_seq(vec![set(&s, e)]);
        s
    }

    /// Adds a property; see [`Property`]. In a module without a clock (a
    /// combinational unit) the properties print in one `always @*` block:
    /// immediate assertions over the inputs of the same instant, with no
    /// first-cycle reset to skip.
    pub fn property(&mut self, kind: PropKind, label: &str, comment: &str, cond: impl Into<Expr>) {
        if self.clock.is_some() {
            self.past_valid();
        }
        self.props.push(Property { kind, label: label.to_string(), comment: comment.to_string(), cond: cond.into() });
    }

    /// `label: assert (cond);` — see [`Module::property`].
    pub fn assert(&mut self, label: &str, comment: &str, cond: impl Into<Expr>) {
        self.property(PropKind::Assert, label, comment, cond);
    }

    /// `label: assume (cond);` — see [`Module::property`].
    pub fn assume(&mut self, label: &str, comment: &str, cond: impl Into<Expr>) {
        self.property(PropKind::Assume, label, comment, cond);
    }

    /// `label: cover (cond);` — see [`Module::property`].
    pub fn cover(&mut self, label: &str, comment: &str, cond: impl Into<Expr>) {
        self.property(PropKind::Cover, label, comment, cond);
    }

    /// The formal properties, in the order added.
    pub fn properties(&self) -> &[Property] {
        &self.props
    }

    /// The one next-state block: every `<base>_next = <base>_reg`, then the
    /// statements given to [`Module::next`]. Empty when there are no registers.
    pub(crate) fn next_state_block(&self) -> Vec<Stmt> {
        if self.regs.is_empty() && self.next_state.is_empty() {
            return Vec::new();
        }
        let mut body: Vec<Stmt> = self
            .regs
            .iter()
            .map(|r| {
                let q = &self.nets[r.q];
                let next = &self.nets[r.next];
                set(Signal::new(&next.name, next.size.value), Signal::new(&q.name, q.size.value))
            })
            .collect();
        body.extend(self.next_state.iter().cloned());
        body
    }

    /// Describes the module in one line, printed above `module`.
    pub fn describe(&mut self, text: &str) {
        self.doc = Some(text.to_string());
    }

    /// Runs every design-rule check; see [`CheckError`](crate::CheckError).
    pub fn check(&self) -> Result<(), crate::CheckErrors> {
        crate::check::check(self)
    }

    /// Checks the module and prints it as one Verilog-2005 file.
    pub fn to_verilog(&self, header: &crate::Header) -> Result<String, crate::CheckErrors> {
        crate::print::print(self, header)
    }

    /// The ports in declaration order.
    pub fn ports(&self) -> Vec<PortSig> {
        self.nets
            .iter()
            .filter_map(|n| {
                let dir = match n.kind {
                    NetKind::Input => Dir::Input,
                    NetKind::Output => Dir::Output,
                    _ => return None,
                };
                Some(PortSig { name: n.name.clone(), dir, width: n.size.value })
            })
            .collect()
    }

    /// The interface other modules instantiate, including which outputs
    /// depend combinationally on which inputs.
    pub fn signature(&self) -> ModuleSig {
        ModuleSig {
            name: self.name.clone(),
            params: self
                .params
                .iter()
                .filter(|p| !p.local)
                .map(|p| {
                    let v = p.value.eval().and_then(|v| u64::try_from(v).ok());
                    (p.name.clone(), v.unwrap_or_default())
                })
                .collect(),
            ports: self.ports(),
            comb_paths: crate::check::comb_paths(self),
        }
    }
}
