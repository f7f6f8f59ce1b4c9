//! Typed expressions.
//!
//! Widths follow a stricter rule than Verilog's: operands of arithmetic,
//! bitwise and comparison operators must already have the same width, and the
//! result of `+`, `-`, `*` keeps that width (no carry bit). Verilog would
//! silently extend or truncate; here a mismatch is a check error, and
//! [`zext`] / [`Expr::slice`] say explicitly where bits are added or dropped.
//! With this rule the width Verilog computes in context equals the width
//! computed here, so the printed RTL means what the IR says.

use std::ops::{Add, BitAnd, BitOr, BitXor, Mul, Neg, Not, Shl, Shr, Sub};

/// A named net of one module (port, wire, register half or memory read
/// register) with its concrete width. Cheap to clone; returned by the
/// [`Module`](crate::Module) builder and used in expressions and as the
/// target of assignments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signal {
    name: String,
    width: u32,
}

impl Signal {
    pub(crate) fn new(name: &str, width: u32) -> Signal {
        Signal { name: name.to_string(), width }
    }

    /// The Verilog name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Width in bits.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// This signal as an expression.
    pub fn expr(&self) -> Expr {
        Expr::Net(self.clone())
    }

    /// Constant part select `name[hi:lo]`.
    pub fn slice(&self, hi: u32, lo: u32) -> Expr {
        self.expr().slice(hi, lo)
    }

    /// Constant bit select `name[i]`.
    pub fn bit(&self, i: u32) -> Expr {
        self.expr().slice(i, i)
    }

    /// Part of a signal as an assignment target, `name[hi:lo] = ...`.
    pub fn lv_slice(&self, hi: u32, lo: u32) -> LValue {
        LValue { net: self.clone(), range: Some((hi, lo)) }
    }
}

/// Unary operators. Reductions give one bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    /// `~`
    Not,
    /// `!`, operand must be one bit.
    LogicNot,
    /// `-` (two's complement, same width)
    Neg,
    /// `&`
    RedAnd,
    /// `|`
    RedOr,
    /// `^`
    RedXor,
}

impl UnOp {
    pub(crate) fn symbol(self) -> &'static str {
        match self {
            UnOp::Not => "~",
            UnOp::LogicNot => "!",
            UnOp::Neg => "-",
            UnOp::RedAnd => "&",
            UnOp::RedOr => "|",
            UnOp::RedXor => "^",
        }
    }
}

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    And,
    Or,
    Xor,
    /// `&&`, operands must be one bit.
    LogicAnd,
    /// `||`, operands must be one bit.
    LogicOr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// Logical shift left; the amount may have any width.
    Shl,
    /// Logical shift right; the amount may have any width.
    Shr,
}

impl BinOp {
    pub(crate) fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::And => "&",
            BinOp::Or => "|",
            BinOp::Xor => "^",
            BinOp::LogicAnd => "&&",
            BinOp::LogicOr => "||",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
        }
    }
}

/// An expression tree. Build it with [`lit`], [`Signal::expr`], the methods
/// below, the operators `+ - * & | ^ ! << >>` and unary `-` (`!` prints as `~`), [`mux`],
/// [`cat`], [`repl`] and [`zext`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    /// Sized constant; `value` must fit in `width` bits.
    Const {
        width: u32,
        value: u64,
    },
    Net(Signal),
    /// Constant part select `base[hi:lo]`; Verilog-2005 allows it on a net only.
    Slice {
        base: Box<Expr>,
        hi: u32,
        lo: u32,
    },
    /// Variable bit select `base[index]`.
    Index {
        base: Box<Expr>,
        index: Box<Expr>,
    },
    /// Indexed part select `base[start +: width]`.
    Part {
        base: Box<Expr>,
        start: Box<Expr>,
        width: u32,
    },
    /// `{a, b, ...}`, most significant first.
    Concat(Vec<Expr>),
    /// `{count{e}}`
    Repl {
        count: u32,
        expr: Box<Expr>,
    },
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `cond ? then : els`
    Mux {
        cond: Box<Expr>,
        then: Box<Expr>,
        els: Box<Expr>,
    },
}

/// Why an expression has no width.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WidthError {
    /// The operator or construct at fault, as Verilog spells it.
    pub op: String,
    pub detail: String,
}

fn werr(op: &str, detail: String) -> WidthError {
    WidthError { op: op.to_string(), detail }
}

/// Bits needed to index every bit of a `width`-bit value: `$clog2(width)`,
/// at least 1.
pub fn index_bits(width: u32) -> u32 {
    (32 - width.saturating_sub(1).leading_zeros()).max(1)
}

/// A variable index must be exactly [`index_bits`] wide, as Verilator's WIDTH
/// lint wants: narrower cannot reach every bit, wider reaches past the end.
fn index_width(op: &str, base: u32, index: u32) -> Result<(), WidthError> {
    let want = index_bits(base);
    if index == want {
        Ok(())
    } else {
        Err(werr(op, format!("index into a {base}-bit value is {index} bits; it must be {want}")))
    }
}

impl Expr {
    /// The width of this expression under the strict rule in the module docs.
    pub fn width(&self) -> Result<u32, WidthError> {
        match self {
            Expr::Const { width, value } => {
                if *width == 0 {
                    return Err(werr("constant", "width 0".into()));
                }
                if *width < 64 && *value >> width != 0 {
                    return Err(werr("constant", format!("value {value} does not fit in {width} bits")));
                }
                Ok(*width)
            }
            Expr::Net(s) => Ok(s.width),
            Expr::Slice { base, hi, lo } => {
                let w = base.width()?;
                if hi < lo || *hi >= w {
                    return Err(werr("[hi:lo]", format!("select [{hi}:{lo}] of a {w}-bit value")));
                }
                Ok(hi - lo + 1)
            }
            Expr::Index { base, index } => {
                let w = base.width()?;
                index_width("[i]", w, index.width()?)?;
                Ok(1)
            }
            Expr::Part { base, start, width } => {
                let w = base.width()?;
                index_width("+:", w, start.width()?)?;
                if *width == 0 || *width > w {
                    return Err(werr("+:", format!("part of {width} bits from a {w}-bit value")));
                }
                Ok(*width)
            }
            Expr::Concat(parts) => {
                if parts.is_empty() {
                    return Err(werr("{}", "empty concatenation".into()));
                }
                parts.iter().try_fold(0u32, |acc, p| Ok(acc + p.width()?))
            }
            Expr::Repl { count, expr } => {
                if *count == 0 {
                    return Err(werr("{n{}}", "replication count 0".into()));
                }
                Ok(count * expr.width()?)
            }
            Expr::Unary(op, a) => {
                let w = a.width()?;
                match op {
                    UnOp::Not | UnOp::Neg => Ok(w),
                    UnOp::LogicNot if w != 1 => {
                        Err(werr("!", format!("operand is {w} bits; compare it to zero explicitly")))
                    }
                    _ => Ok(1),
                }
            }
            Expr::Binary(op, a, b) => {
                let (wa, wb) = (a.width()?, b.width()?);
                match op {
                    BinOp::Shl | BinOp::Shr => Ok(wa),
                    BinOp::LogicAnd | BinOp::LogicOr if wa != 1 || wb != 1 => {
                        Err(werr(op.symbol(), format!("operands are {wa} and {wb} bits; both must be 1 bit")))
                    }
                    BinOp::LogicAnd | BinOp::LogicOr => Ok(1),
                    _ if wa != wb => Err(werr(
                        op.symbol(),
                        format!("operands are {wa} and {wb} bits; extend or slice one explicitly"),
                    )),
                    BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => Ok(1),
                    _ => Ok(wa),
                }
            }
            Expr::Mux { cond, then, els } => {
                let wc = cond.width()?;
                let (wt, we) = (then.width()?, els.width()?);
                if wc != 1 {
                    return Err(werr("?:", format!("condition is {wc} bits, must be 1")));
                }
                if wt != we {
                    return Err(werr("?:", format!("arms are {wt} and {we} bits")));
                }
                Ok(wt)
            }
        }
    }

    fn un(self, op: UnOp) -> Expr {
        Expr::Unary(op, Box::new(self))
    }

    fn bin(self, op: BinOp, rhs: impl Into<Expr>) -> Expr {
        Expr::Binary(op, Box::new(self), Box::new(rhs.into()))
    }

    /// Constant part select `[hi:lo]`. Verilog-2005 only allows it on a net;
    /// the checker rejects it on anything else (assign to a wire first).
    pub fn slice(self, hi: u32, lo: u32) -> Expr {
        Expr::Slice { base: Box::new(self), hi, lo }
    }

    /// Constant bit select `[i]`.
    pub fn bit(self, i: u32) -> Expr {
        self.slice(i, i)
    }

    /// Variable bit select `[index]`.
    pub fn bit_at(self, index: impl Into<Expr>) -> Expr {
        Expr::Index { base: Box::new(self), index: Box::new(index.into()) }
    }

    /// Indexed part select `[start +: width]`.
    pub fn part(self, start: impl Into<Expr>, width: u32) -> Expr {
        Expr::Part { base: Box::new(self), start: Box::new(start.into()), width }
    }

    pub fn eq(self, rhs: impl Into<Expr>) -> Expr {
        self.bin(BinOp::Eq, rhs)
    }
    pub fn ne(self, rhs: impl Into<Expr>) -> Expr {
        self.bin(BinOp::Ne, rhs)
    }
    pub fn lt(self, rhs: impl Into<Expr>) -> Expr {
        self.bin(BinOp::Lt, rhs)
    }
    pub fn le(self, rhs: impl Into<Expr>) -> Expr {
        self.bin(BinOp::Le, rhs)
    }
    pub fn gt(self, rhs: impl Into<Expr>) -> Expr {
        self.bin(BinOp::Gt, rhs)
    }
    pub fn ge(self, rhs: impl Into<Expr>) -> Expr {
        self.bin(BinOp::Ge, rhs)
    }
    /// `&&` of two one-bit values.
    pub fn logic_and(self, rhs: impl Into<Expr>) -> Expr {
        self.bin(BinOp::LogicAnd, rhs)
    }
    /// `||` of two one-bit values.
    pub fn logic_or(self, rhs: impl Into<Expr>) -> Expr {
        self.bin(BinOp::LogicOr, rhs)
    }
    /// `!` of a one-bit value.
    pub fn logic_not(self) -> Expr {
        self.un(UnOp::LogicNot)
    }
    /// `&x`: all bits set.
    pub fn reduce_and(self) -> Expr {
        self.un(UnOp::RedAnd)
    }
    /// `|x`: any bit set.
    pub fn reduce_or(self) -> Expr {
        self.un(UnOp::RedOr)
    }
    /// `^x`: parity.
    pub fn reduce_xor(self) -> Expr {
        self.un(UnOp::RedXor)
    }

    /// Calls `f` on every net this expression reads, with the bits it reads
    /// (`None` for all bits), outermost first.
    pub(crate) fn visit_reads(&self, f: &mut impl FnMut(&Signal, Option<(u32, u32)>)) {
        match self {
            Expr::Const { .. } => {}
            Expr::Net(s) => f(s, None),
            Expr::Slice { base, hi, lo } => match &**base {
                Expr::Net(s) => f(s, Some((*hi, *lo))),
                other => other.visit_reads(f),
            },
            Expr::Index { base, index } => {
                base.visit_reads(f);
                index.visit_reads(f);
            }
            Expr::Part { base, start, .. } => {
                base.visit_reads(f);
                start.visit_reads(f);
            }
            Expr::Concat(parts) => parts.iter().for_each(|p| p.visit_reads(f)),
            Expr::Repl { expr, .. } | Expr::Unary(_, expr) => expr.visit_reads(f),
            Expr::Binary(_, a, b) => {
                a.visit_reads(f);
                b.visit_reads(f);
            }
            Expr::Mux { cond, then, els } => {
                cond.visit_reads(f);
                then.visit_reads(f);
                els.visit_reads(f);
            }
        }
    }

    /// Calls `f` on every sub-expression, this one first.
    pub(crate) fn visit(&self, f: &mut impl FnMut(&Expr)) {
        f(self);
        match self {
            Expr::Const { .. } | Expr::Net(_) => {}
            Expr::Slice { base, .. } => base.visit(f),
            Expr::Index { base, index: other }
            | Expr::Part { base, start: other, .. }
            | Expr::Binary(_, base, other) => {
                base.visit(f);
                other.visit(f);
            }
            Expr::Concat(parts) => parts.iter().for_each(|p| p.visit(f)),
            Expr::Repl { expr, .. } | Expr::Unary(_, expr) => expr.visit(f),
            Expr::Mux { cond, then, els } => {
                cond.visit(f);
                then.visit(f);
                els.visit(f);
            }
        }
    }
}

/// A sized constant, printed as `width'dvalue` (`1'b0`/`1'b1` for one bit).
pub fn lit(width: u32, value: u64) -> Expr {
    Expr::Const { width, value }
}

/// `e` cut or zero-extended to `w` bits, as a wire field drops the bits
/// above its width ([`mrnic_proto::field::Field::set`]) and a model's
/// `Bits` keep a narrower field's value in a wider port. A constant is
/// rebuilt at the new width (a part select of a constant is not Verilog);
/// anything else wider than `w` must be a net.
pub fn fit(e: Expr, w: u32) -> Expr {
    if let Expr::Const { value, .. } = e {
        let mask = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
        return lit(w, value & mask);
    }
    let have = e.width().expect("a well-formed expression");
    if have == w {
        e
    } else if have < w {
        zext(e, w)
    } else {
        e.slice(w - 1, 0)
    }
}

/// `n` zero bits (constants are at most 64 bits wide).
pub fn zeros(n: u32) -> Expr {
    let parts: Vec<Expr> = (0..n.div_ceil(64)).map(|i| lit((n - 64 * i).min(64), 0)).collect();
    if parts.len() == 1 {
        parts.into_iter().next().expect("one part")
    } else {
        cat(&parts)
    }
}

/// `cond ? then : els`.
pub fn mux(cond: impl Into<Expr>, then: impl Into<Expr>, els: impl Into<Expr>) -> Expr {
    Expr::Mux { cond: Box::new(cond.into()), then: Box::new(then.into()), els: Box::new(els.into()) }
}

/// `{parts[0], parts[1], ...}`, most significant first.
pub fn cat(parts: &[Expr]) -> Expr {
    Expr::Concat(parts.to_vec())
}

/// `{count{expr}}`.
pub fn repl(count: u32, expr: impl Into<Expr>) -> Expr {
    Expr::Repl { count, expr: Box::new(expr.into()) }
}

/// Zero-extends to `width` bits by concatenating a zero constant on the left;
/// returns the expression unchanged when it already has that width. An
/// expression that is wider than `width`, or has no width, is returned
/// unchanged and the checker reports the mismatch where it is used.
pub fn zext(expr: impl Into<Expr>, width: u32) -> Expr {
    let expr = expr.into();
    match expr.width() {
        Ok(w) if w < width => Expr::Concat(vec![lit(width - w, 0), expr]),
        _ => expr,
    }
}

impl From<&Signal> for Expr {
    fn from(s: &Signal) -> Expr {
        s.expr()
    }
}
impl From<Signal> for Expr {
    fn from(s: Signal) -> Expr {
        Expr::Net(s)
    }
}
impl From<&Expr> for Expr {
    fn from(e: &Expr) -> Expr {
        e.clone()
    }
}

impl<T: Into<Expr>> Add<T> for Expr {
    type Output = Expr;
    fn add(self, rhs: T) -> Expr {
        self.bin(BinOp::Add, rhs)
    }
}
impl<T: Into<Expr>> Sub<T> for Expr {
    type Output = Expr;
    fn sub(self, rhs: T) -> Expr {
        self.bin(BinOp::Sub, rhs)
    }
}
impl<T: Into<Expr>> Mul<T> for Expr {
    type Output = Expr;
    fn mul(self, rhs: T) -> Expr {
        self.bin(BinOp::Mul, rhs)
    }
}
impl<T: Into<Expr>> BitAnd<T> for Expr {
    type Output = Expr;
    fn bitand(self, rhs: T) -> Expr {
        self.bin(BinOp::And, rhs)
    }
}
impl<T: Into<Expr>> BitOr<T> for Expr {
    type Output = Expr;
    fn bitor(self, rhs: T) -> Expr {
        self.bin(BinOp::Or, rhs)
    }
}
impl<T: Into<Expr>> BitXor<T> for Expr {
    type Output = Expr;
    fn bitxor(self, rhs: T) -> Expr {
        self.bin(BinOp::Xor, rhs)
    }
}
impl<T: Into<Expr>> Shl<T> for Expr {
    type Output = Expr;
    fn shl(self, rhs: T) -> Expr {
        self.bin(BinOp::Shl, rhs)
    }
}
impl<T: Into<Expr>> Shr<T> for Expr {
    type Output = Expr;
    fn shr(self, rhs: T) -> Expr {
        self.bin(BinOp::Shr, rhs)
    }
}
impl Not for Expr {
    type Output = Expr;
    /// Bitwise `~`.
    fn not(self) -> Expr {
        self.un(UnOp::Not)
    }
}

impl Neg for Expr {
    type Output = Expr;
    /// Two's complement negation, same width.
    fn neg(self) -> Expr {
        self.un(UnOp::Neg)
    }
}

// The same operators on `&Signal`, so `&a + &b` reads like the Verilog.
impl<T: Into<Expr>> Add<T> for &Signal {
    type Output = Expr;
    fn add(self, rhs: T) -> Expr {
        self.expr() + rhs
    }
}
impl<T: Into<Expr>> Sub<T> for &Signal {
    type Output = Expr;
    fn sub(self, rhs: T) -> Expr {
        self.expr() - rhs
    }
}
impl<T: Into<Expr>> BitAnd<T> for &Signal {
    type Output = Expr;
    fn bitand(self, rhs: T) -> Expr {
        self.expr() & rhs
    }
}
impl<T: Into<Expr>> BitOr<T> for &Signal {
    type Output = Expr;
    fn bitor(self, rhs: T) -> Expr {
        self.expr() | rhs
    }
}
impl<T: Into<Expr>> BitXor<T> for &Signal {
    type Output = Expr;
    fn bitxor(self, rhs: T) -> Expr {
        self.expr() ^ rhs
    }
}
impl Not for &Signal {
    type Output = Expr;
    fn not(self) -> Expr {
        !self.expr()
    }
}

/// The target of an assignment: a whole net or a constant part of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LValue {
    pub net: Signal,
    /// `Some((hi, lo))` for `net[hi:lo]`.
    pub range: Option<(u32, u32)>,
}

impl LValue {
    /// Width of the target, or `None` when the range is outside the net.
    pub fn width(&self) -> Option<u32> {
        match self.range {
            None => Some(self.net.width),
            Some((hi, lo)) if lo <= hi && hi < self.net.width => Some(hi - lo + 1),
            Some(_) => None,
        }
    }

    /// The bits written, `(hi, lo)`.
    pub(crate) fn bits(&self) -> (u32, u32) {
        self.range.unwrap_or((self.net.width.saturating_sub(1), 0))
    }
}

impl From<&Signal> for LValue {
    fn from(s: &Signal) -> LValue {
        LValue { net: s.clone(), range: None }
    }
}
impl From<Signal> for LValue {
    fn from(net: Signal) -> LValue {
        LValue { net, range: None }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_are_strict() {
        let a = Signal::new("a", 8);
        let b = Signal::new("b", 9);
        assert_eq!((&a + &a).width(), Ok(8));
        assert_eq!(a.expr().eq(&a).width(), Ok(1));
        assert_eq!(cat(&[a.expr(), b.expr()]).width(), Ok(17));
        assert_eq!(repl(3, a.bit(7)).width(), Ok(3));
        assert_eq!(zext(&a, 9).width(), Ok(9));
        assert_eq!((zext(&a, 9) + &b).width(), Ok(9));
        assert_eq!((a.expr() << lit(3, 2)).width(), Ok(8));
        assert_eq!(a.expr().part(lit(3, 0), 4).width(), Ok(4));
        assert_eq!(b.expr().bit_at(lit(4, 0)).width(), Ok(1));
        assert!(b.expr().bit_at(lit(3, 0)).width().is_err());
        assert!(a.expr().part(lit(4, 0), 4).width().is_err());
        let err = (&a + &b).width().unwrap_err();
        assert_eq!(err.op, "+");
        assert!(mux(&a, &a, &a).width().is_err());
        assert!(lit(2, 4).width().is_err());
        assert!(a.slice(8, 0).width().is_err());
        assert!(a.expr().logic_and(a.bit(0)).width().is_err());
    }
}
