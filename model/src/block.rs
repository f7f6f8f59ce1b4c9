//! The contract every cycle-accurate block keeps, and that the co-simulation
//! harness drives: ports defined once (names, directions, widths) and a
//! two-phase clock step that mirrors synchronous RTL.
//!
//! Each cycle the harness (or a parent block) does, in order:
//! 1. sets every input port;
//! 2. calls [`Block::eval`]: outputs become a function of registered state
//!    and the current inputs (Mealy outputs such as `tready` may depend on
//!    inputs combinationally, exactly as the RTL's `assign`s do);
//! 3. reads and compares the outputs;
//! 4. calls [`Block::tick`]: the rising edge of `clk`, registers take their
//!    next values computed from the same inputs.
//!
//! `clk` is never a port in this list: the harness drives it. `rst` is an
//! ordinary input (synchronous, active high), so reset is tested like any
//! other input.

use std::fmt;

/// Port direction, seen from the block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dir {
    In,
    Out,
}

/// One port of a block. The RTL generator declares the Verilog ports from
/// this list, and the co-simulation shim maps them by name, so the model and
/// the Verilog cannot drift apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortDef {
    pub name: String,
    pub dir: Dir,
    pub width: u32,
    /// Banner the port is grouped under in the Verilog (`Packet input`, ...).
    pub group: &'static str,
    pub comment: String,
}

impl PortDef {
    pub fn input(name: impl Into<String>, width: u32, group: &'static str, comment: impl Into<String>) -> PortDef {
        PortDef { name: name.into(), dir: Dir::In, width, group, comment: comment.into() }
    }

    pub fn output(name: impl Into<String>, width: u32, group: &'static str, comment: impl Into<String>) -> PortDef {
        PortDef { name: name.into(), dir: Dir::Out, width, group, comment: comment.into() }
    }

    /// 64-bit words a value of this port takes.
    pub fn words(&self) -> usize {
        self.width.div_ceil(64) as usize
    }
}

/// A port value of any width: 64-bit words, least significant first. Bits
/// above the port's width are always zero.
#[derive(Eq, Default)]
pub struct Bits(pub Vec<u64>);

// Word by word rather than the slice's `memcmp`: most ports are one word,
// and the netlist simulator compares every port value on every pass.
impl PartialEq for Bits {
    #[inline]
    fn eq(&self, other: &Bits) -> bool {
        self.0.len() == other.0.len() && self.0.iter().zip(&other.0).all(|(a, b)| a == b)
    }
}

// The same equality as the words', so the words' hash.
impl std::hash::Hash for Bits {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

// By hand so that `clone_from` reuses the words already allocated: the
// netlist simulator copies every port value every cycle.
impl Clone for Bits {
    fn clone(&self) -> Bits {
        Bits(self.0.clone())
    }

    fn clone_from(&mut self, source: &Bits) {
        self.0.clone_from(&source.0);
    }
}

impl Bits {
    pub fn zero(width: u32) -> Bits {
        Bits(vec![0; width.div_ceil(64).max(1) as usize])
    }

    pub fn from_u64(width: u32, v: u64) -> Bits {
        let mut b = Bits::zero(width);
        b.0[0] = v;
        b.truncate(width);
        b
    }

    /// Sets the value to `v` masked to `width`, in place: reuses the
    /// words already there, so a block's `eval` that writes its outputs
    /// this way allocates nothing per cycle.
    #[inline]
    pub fn set_u64(&mut self, width: u32, v: u64) {
        let words = width.div_ceil(64).max(1) as usize;
        if self.0.len() != words {
            self.0.resize(words, 0);
        }
        self.0[0] = if width < 64 { v & ((1u64 << width) - 1) } else { v };
        self.0[1..].iter_mut().for_each(|w| *w = 0);
    }

    /// Sets the value to `words` (least significant first) masked to
    /// `width`, in place.
    #[inline]
    pub fn set_words(&mut self, width: u32, words: &[u64]) {
        let n = width.div_ceil(64).max(1) as usize;
        self.0.resize(n, 0);
        for (k, w) in self.0.iter_mut().enumerate() {
            *w = words.get(k).copied().unwrap_or(0);
        }
        self.truncate(width);
    }

    /// Sets the value from fields packed LSB first, `(value, width)` each
    /// (a field's value masked to its width), masked to `width`, in place.
    pub fn set_packed(&mut self, width: u32, parts: impl IntoIterator<Item = (u64, u32)>) {
        let n = width.div_ceil(64).max(1) as usize;
        self.0.clear();
        self.0.resize(n, 0);
        let mut at = 0u32;
        for (v, w) in parts {
            let v = if w < 64 { v & ((1u64 << w) - 1) } else { v };
            let (word, off) = ((at / 64) as usize, at % 64);
            if word < n {
                self.0[word] |= v << off;
                if off > 0 && off + w > 64 && word + 1 < n {
                    self.0[word + 1] |= v >> (64 - off);
                }
            }
            at += w;
        }
        self.truncate(width);
    }

    /// Sets the value to bits `lsb .. lsb + width` of `v`, in place.
    pub fn set_slice(&mut self, v: &Bits, lsb: u32, width: u32) {
        let n = width.div_ceil(64).max(1) as usize;
        self.0.resize(n, 0);
        let (first, off) = ((lsb / 64) as usize, lsb % 64);
        for (k, w) in self.0.iter_mut().enumerate() {
            let lo = v.0.get(first + k).copied().unwrap_or(0) >> off;
            let hi = if off == 0 { 0 } else { v.0.get(first + k + 1).copied().unwrap_or(0) << (64 - off) };
            *w = lo | hi;
        }
        self.truncate(width);
    }

    pub fn as_u64(&self) -> u64 {
        self.0.first().copied().unwrap_or(0)
    }

    pub fn bit(&self, i: u32) -> bool {
        self.0.get((i / 64) as usize).is_some_and(|w| (w >> (i % 64)) & 1 == 1)
    }

    /// Clears bits at and above `width`.
    #[inline]
    pub fn truncate(&mut self, width: u32) {
        let words = width.div_ceil(64).max(1) as usize;
        if self.0.len() != words {
            self.0.resize(words, 0);
        }
        if width % 64 != 0 {
            let last = words - 1;
            self.0[last] &= (1u64 << (width % 64)) - 1;
        }
    }
}

impl fmt::Debug for Bits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x")?;
        for (i, w) in self.0.iter().rev().enumerate() {
            if i == 0 {
                write!(f, "{w:x}")?;
            } else {
                write!(f, "_{w:016x}")?;
            }
        }
        Ok(())
    }
}

/// A clocked block, driven port by port. Blocks also offer typed methods
/// for speed; this interface is what the lockstep harness and the generic
/// tests use.
pub trait Block {
    /// The Verilog module name, and the file name in `model/`, `hdl/` and
    /// `verif/`.
    fn name(&self) -> &'static str;

    /// Every port except `clk`, in declaration order.
    fn ports(&self) -> &[PortDef];

    /// Computes the outputs from registered state and `inputs`. `inputs` and
    /// `outputs` are indexed like [`Block::ports`]; entries of the other
    /// direction are ignored (inputs) or left untouched (outputs).
    fn eval(&mut self, inputs: &[Bits], outputs: &mut [Bits]);

    /// The rising clock edge with `inputs` applied.
    fn tick(&mut self, inputs: &[Bits]);
}

/// Zeroed values for every port of a block.
pub fn zero_values(ports: &[PortDef]) -> Vec<Bits> {
    ports.iter().map(|p| Bits::zero(p.width)).collect()
}

/// One clock of `b` driven by port name, every other input 0: returns the
/// cycle's outputs (evaluated before the edge), then clocks the edge. For
/// tests that drive a block by hand; `ports` is `b.ports()` (passed in so a
/// caller keeps its own copy instead of cloning one per cycle).
pub fn cycle_named<S: AsRef<str>>(b: &mut dyn Block, ports: &[PortDef], set: &[(S, u64)]) -> Vec<Bits> {
    let mut v = zero_values(ports);
    for (n, x) in set {
        let n = n.as_ref();
        let i = port_index(ports, n).unwrap_or_else(|| panic!("{}: no port {n}", b.name()));
        v[i] = Bits::from_u64(ports[i].width, *x);
    }
    let mut o = v.clone();
    b.eval(&v, &mut o);
    b.tick(&v);
    o
}

/// Index of a port by name.
pub fn port_index(ports: &[PortDef], name: &str) -> Option<usize> {
    ports.iter().position(|p| p.name == name)
}

/// A channel's payload fields: (name, width, comment), in port order.
pub type Fields = Vec<(&'static str, u32, &'static str)>;

/// Appends a valid/ready channel's ports: `<prefix>_valid`, `<prefix>_ready`,
/// then `<prefix>_<field>` for each field. `input` says the block consumes
/// the channel (`s_*`); otherwise it produces it (`m_*`).
pub fn channel_ports(v: &mut Vec<PortDef>, prefix: &str, input: bool, group: &'static str, fields: &Fields) {
    let (data, ready) = if input { (Dir::In, Dir::Out) } else { (Dir::Out, Dir::In) };
    let port = |name: String, dir: Dir, width: u32, comment: &str| PortDef {
        name,
        dir,
        width,
        group,
        comment: comment.into(),
    };
    v.push(port(
        format!("{prefix}_valid"),
        data,
        1,
        if input { "a request is offered" } else { "a result is offered" },
    ));
    v.push(port(format!("{prefix}_ready"), ready, 1, "taken this cycle if valid"));
    for (n, w, c) in fields {
        v.push(port(format!("{prefix}_{n}"), data, *w, c));
    }
}

/// A struct of port indices, one field per port named like it, resolved
/// once when the model is built: its per-cycle `eval`/`tick` then index the
/// port values (`v[ids.s_req_valid]`) instead of searching names, and write
/// outputs in place with [`put`] (nothing allocated per cycle).
///
/// ```ignore
/// port_ids!(pub(crate) struct Ids { rst, s_req_valid, m_sel_ready });
/// let ids = Ids::new(&ports); // panics naming a port the list lacks
/// ```
#[macro_export]
macro_rules! port_ids {
    ($vis:vis struct $name:ident { $($field:ident),* $(,)? }) => {
        #[derive(Debug, Clone, Copy)]
        $vis struct $name { $($field: usize),* }
        impl $name {
            $vis fn new(ports: &[$crate::block::PortDef]) -> $name {
                $name {
                    $($field: $crate::block::port_index(ports, stringify!($field))
                        .unwrap_or_else(|| panic!("no port {}", stringify!($field)))),*
                }
            }
        }
    };
}

/// Writes output `i` (at most 64 bits) in place, masked to its width.
#[inline]
pub fn put(ports: &[PortDef], outputs: &mut [Bits], i: usize, v: u64) {
    outputs[i].set_u64(ports[i].width, v);
}

/// Values of named ports: reads inputs and writes outputs of a block by
/// name, so typed models map their records onto the port list once. Each
/// access searches the port list: for tests and setup; a model's per-cycle
/// path uses [`port_ids!`].
pub struct PortMap<'a> {
    pub ports: &'a [PortDef],
}

impl PortMap<'_> {
    fn index(&self, name: &str) -> usize {
        port_index(self.ports, name).unwrap_or_else(|| panic!("no port {name}"))
    }

    /// An input's value (its low 64 bits).
    pub fn get(&self, inputs: &[Bits], name: &str) -> u64 {
        inputs[self.index(name)].as_u64()
    }

    /// Sets an output from a value of up to 64 bits (truncated to the width).
    pub fn set(&self, outputs: &mut [Bits], name: &str, v: u64) {
        let i = self.index(name);
        outputs[i].set_u64(self.ports[i].width, v);
    }

    /// Sets a wide output from fields packed LSB first: `(value, width)`.
    pub fn set_packed(&self, outputs: &mut [Bits], name: &str, parts: &[(u64, u32)]) {
        let i = self.index(name);
        outputs[i].set_packed(self.ports[i].width, parts.iter().copied());
    }
}
