//! Parameters and sizes.
//!
//! Every width and depth in the IR is a concrete integer computed in Rust from
//! the config; that is what the checks use. A size may also carry the
//! parameter expression it came from, so the printed Verilog reads
//! `[WIDTH-1:0]` rather than `[7:0]` and an instance override documents where
//! a value flows from.

use std::fmt;
use std::ops::{Add, Div, Mul, Rem, Shl, Sub};

/// A handle to a `parameter` or `localparam` of a module, returned by
/// [`Module::param`](crate::Module::param) and
/// [`Module::localparam`](crate::Module::localparam).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    name: String,
    value: u64,
}

impl Param {
    pub(crate) fn new(name: &str, value: u64) -> Param {
        Param { name: name.to_string(), value }
    }

    /// The Verilog name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The concrete value this module is generated for.
    pub fn value(&self) -> u64 {
        self.value
    }

    /// This parameter as a parameter expression.
    pub fn expr(&self) -> ParamExpr {
        ParamExpr::Ref { name: self.name.clone(), value: self.value }
    }
}

/// Operators of [`ParamExpr`]; all are Verilog integer operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
    Shl,
}

impl ParamOp {
    pub(crate) fn symbol(self) -> &'static str {
        match self {
            ParamOp::Add => "+",
            ParamOp::Sub => "-",
            ParamOp::Mul => "*",
            ParamOp::Div => "/",
            ParamOp::Mod => "%",
            ParamOp::Eq => "==",
            ParamOp::Ne => "!=",
            ParamOp::Lt => "<",
            ParamOp::Le => "<=",
            ParamOp::Gt => ">",
            ParamOp::Ge => ">=",
            ParamOp::And => "&&",
            ParamOp::Or => "||",
            ParamOp::Shl => "<<",
        }
    }
}

/// An elaboration-time integer expression over constants and parameters, used
/// for localparam values, symbolic sizes, instance overrides and parameter
/// checks. Each parameter reference carries its concrete value, so the
/// expression can be evaluated in Rust without a module at hand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParamExpr {
    Const(u64),
    Ref { name: String, value: u64 },
    Bin(ParamOp, Box<ParamExpr>, Box<ParamExpr>),
    Not(Box<ParamExpr>),
    Clog2(Box<ParamExpr>),
}

impl ParamExpr {
    /// Evaluates with Verilog integer semantics (booleans are 0 or 1).
    /// `None` on division by zero or a result outside the 32-bit signed range
    /// that Verilog gives an untyped parameter.
    pub fn eval(&self) -> Option<i64> {
        let v = match self {
            ParamExpr::Const(v) => i64::try_from(*v).ok()?,
            ParamExpr::Ref { value, .. } => i64::try_from(*value).ok()?,
            ParamExpr::Not(a) => i64::from(a.eval()? == 0),
            ParamExpr::Clog2(a) => {
                let a = a.eval()?;
                if a <= 1 {
                    0
                } else {
                    i64::from(64 - ((a - 1) as u64).leading_zeros())
                }
            }
            ParamExpr::Bin(op, a, b) => {
                let (a, b) = (a.eval()?, b.eval()?);
                match op {
                    ParamOp::Add => a.checked_add(b)?,
                    ParamOp::Sub => a.checked_sub(b)?,
                    ParamOp::Mul => a.checked_mul(b)?,
                    ParamOp::Div => a.checked_div(b)?,
                    ParamOp::Mod => a.checked_rem(b)?,
                    ParamOp::Eq => i64::from(a == b),
                    ParamOp::Ne => i64::from(a != b),
                    ParamOp::Lt => i64::from(a < b),
                    ParamOp::Le => i64::from(a <= b),
                    ParamOp::Gt => i64::from(a > b),
                    ParamOp::Ge => i64::from(a >= b),
                    ParamOp::And => i64::from(a != 0 && b != 0),
                    ParamOp::Or => i64::from(a != 0 || b != 0),
                    ParamOp::Shl => a.checked_shl(u32::try_from(b).ok().filter(|&b| b < 63)?)?,
                }
            }
        };
        (i64::from(i32::MIN)..=i64::from(i32::MAX)).contains(&v).then_some(v)
    }

    /// `$clog2(self)`: address bits for `self` entries.
    pub fn clog2(self) -> ParamExpr {
        ParamExpr::Clog2(Box::new(self))
    }

    fn bin(self, op: ParamOp, rhs: impl Into<ParamExpr>) -> ParamExpr {
        ParamExpr::Bin(op, Box::new(self), Box::new(rhs.into()))
    }

    pub fn eq(self, rhs: impl Into<ParamExpr>) -> ParamExpr {
        self.bin(ParamOp::Eq, rhs)
    }
    pub fn ne(self, rhs: impl Into<ParamExpr>) -> ParamExpr {
        self.bin(ParamOp::Ne, rhs)
    }
    pub fn lt(self, rhs: impl Into<ParamExpr>) -> ParamExpr {
        self.bin(ParamOp::Lt, rhs)
    }
    pub fn le(self, rhs: impl Into<ParamExpr>) -> ParamExpr {
        self.bin(ParamOp::Le, rhs)
    }
    pub fn gt(self, rhs: impl Into<ParamExpr>) -> ParamExpr {
        self.bin(ParamOp::Gt, rhs)
    }
    pub fn ge(self, rhs: impl Into<ParamExpr>) -> ParamExpr {
        self.bin(ParamOp::Ge, rhs)
    }
    /// Logical and (`&&`).
    pub fn and(self, rhs: impl Into<ParamExpr>) -> ParamExpr {
        self.bin(ParamOp::And, rhs)
    }
    /// Logical or (`||`).
    pub fn or(self, rhs: impl Into<ParamExpr>) -> ParamExpr {
        self.bin(ParamOp::Or, rhs)
    }
    /// Logical not (`!`).
    pub fn logic_not(self) -> ParamExpr {
        ParamExpr::Not(Box::new(self))
    }

    /// Calls `f` on every parameter reference.
    pub(crate) fn visit_refs(&self, f: &mut impl FnMut(&str, u64)) {
        match self {
            ParamExpr::Const(_) => {}
            ParamExpr::Ref { name, value } => f(name, *value),
            ParamExpr::Bin(_, a, b) => {
                a.visit_refs(f);
                b.visit_refs(f);
            }
            ParamExpr::Not(a) | ParamExpr::Clog2(a) => a.visit_refs(f),
        }
    }

    pub(crate) fn is_atom(&self) -> bool {
        matches!(self, ParamExpr::Const(_) | ParamExpr::Ref { .. } | ParamExpr::Clog2(_))
    }
}

impl fmt::Display for ParamExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn operand(f: &mut fmt::Formatter<'_>, e: &ParamExpr) -> fmt::Result {
            if e.is_atom() {
                write!(f, "{e}")
            } else {
                write!(f, "({e})")
            }
        }
        match self {
            ParamExpr::Const(v) => write!(f, "{v}"),
            ParamExpr::Ref { name, .. } => write!(f, "{name}"),
            ParamExpr::Clog2(a) => write!(f, "$clog2({a})"),
            ParamExpr::Not(a) => {
                write!(f, "!")?;
                operand(f, a)
            }
            ParamExpr::Bin(op, a, b) => {
                operand(f, a)?;
                write!(f, " {} ", op.symbol())?;
                operand(f, b)
            }
        }
    }
}

impl From<u64> for ParamExpr {
    fn from(v: u64) -> ParamExpr {
        ParamExpr::Const(v)
    }
}
impl From<u32> for ParamExpr {
    fn from(v: u32) -> ParamExpr {
        ParamExpr::Const(u64::from(v))
    }
}
impl From<&Param> for ParamExpr {
    fn from(p: &Param) -> ParamExpr {
        p.expr()
    }
}

impl<T: Into<ParamExpr>> Add<T> for ParamExpr {
    type Output = ParamExpr;
    fn add(self, rhs: T) -> ParamExpr {
        self.bin(ParamOp::Add, rhs)
    }
}
impl<T: Into<ParamExpr>> Sub<T> for ParamExpr {
    type Output = ParamExpr;
    fn sub(self, rhs: T) -> ParamExpr {
        self.bin(ParamOp::Sub, rhs)
    }
}
impl<T: Into<ParamExpr>> Mul<T> for ParamExpr {
    type Output = ParamExpr;
    fn mul(self, rhs: T) -> ParamExpr {
        self.bin(ParamOp::Mul, rhs)
    }
}
impl<T: Into<ParamExpr>> Div<T> for ParamExpr {
    type Output = ParamExpr;
    fn div(self, rhs: T) -> ParamExpr {
        self.bin(ParamOp::Div, rhs)
    }
}
impl<T: Into<ParamExpr>> Rem<T> for ParamExpr {
    type Output = ParamExpr;
    fn rem(self, rhs: T) -> ParamExpr {
        self.bin(ParamOp::Mod, rhs)
    }
}
impl<T: Into<ParamExpr>> Shl<T> for ParamExpr {
    type Output = ParamExpr;
    fn shl(self, rhs: T) -> ParamExpr {
        self.bin(ParamOp::Shl, rhs)
    }
}

/// A width or depth: the concrete value the checks use, and optionally the
/// parameter expression the printer shows instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Size {
    /// Concrete value; 0 means the expression did not evaluate, which the
    /// checker reports.
    pub value: u32,
    /// Printed form, when the size comes from parameters.
    pub sym: Option<ParamExpr>,
}

impl Size {
    /// Prints as a declaration range `[N-1:0]`, or nothing for one bit given
    /// as a plain number.
    pub(crate) fn range(&self) -> String {
        match &self.sym {
            Some(e) if e.is_atom() => format!("[{e}-1:0]"),
            // A carry bit on top of a parameter width reads best as `[W:0]`.
            Some(ParamExpr::Bin(ParamOp::Add, x, one)) if x.is_atom() && **one == ParamExpr::Const(1) => {
                format!("[{x}:0]")
            }
            Some(e) => format!("[({e})-1:0]"),
            None if self.value == 1 => String::new(),
            None => format!("[{}:0]", self.value.saturating_sub(1)),
        }
    }

    /// Prints as a memory depth range `[0:N-1]`.
    pub(crate) fn depth_range(&self) -> String {
        match &self.sym {
            Some(e) if e.is_atom() => format!("[0:{e}-1]"),
            Some(e) => format!("[0:({e})-1]"),
            None => format!("[0:{}]", self.value.saturating_sub(1)),
        }
    }
}

impl From<u32> for Size {
    fn from(value: u32) -> Size {
        Size { value, sym: None }
    }
}
impl From<ParamExpr> for Size {
    fn from(e: ParamExpr) -> Size {
        let value = e.eval().and_then(|v| u32::try_from(v).ok()).unwrap_or_default();
        Size { value, sym: Some(e) }
    }
}
impl From<&Param> for Size {
    fn from(p: &Param) -> Size {
        Size::from(p.expr())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clog2_matches_verilog() {
        let c = |v: u64| ParamExpr::Const(v).clog2().eval().unwrap();
        assert_eq!([c(0), c(1), c(2), c(3), c(4), c(5), c(1024)], [0, 0, 1, 2, 2, 3, 10]);
    }

    #[test]
    fn sizes_print_symbolically() {
        let w = Param::new("WIDTH", 8);
        assert_eq!(Size::from(&w).range(), "[WIDTH-1:0]");
        assert_eq!(Size::from(&w).value, 8);
        assert_eq!(Size::from(w.expr() + 1u32).range(), "[WIDTH:0]");
        assert_eq!(Size::from(w.expr() * 2u32).range(), "[(WIDTH * 2)-1:0]");
        assert_eq!(Size::from(1u32).range(), "");
        assert_eq!(Size::from(4u32).depth_range(), "[0:3]");
    }
}
