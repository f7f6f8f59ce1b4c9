//! The field table: every wire field of every header, defined once.
//!
//! A [`Field`] names a run of bits in a header by byte offset, bit offset
//! (0 = most significant bit of that byte, as network order reads) and width.
//! The typed encoders and decoders, `docs/spec.md`, the Wireshark dissector and
//! the RTL generator's header slicing are all derived from these tables, so a
//! layout change here is the only change needed.

/// Which packets of a header a field applies to. Data headers overlay the
/// WRITE view (rkey, addr) and the SEND view (rq_seq, msg_offset) on the same
/// bytes; every other field applies to every packet of its layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Only {
    All,
    /// WRITE and WRITE_IMM.
    Write,
    /// SEND and SEND_IMM.
    Send,
}

/// What a decoder demands of a field's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rule {
    /// Any value is legal on the wire; the transport decides what it means.
    Any,
    /// Reserved: must be zero on receive, sent as zero.
    Reserved,
}

/// One wire field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Field {
    pub name: &'static str,
    /// Byte offset of the field's first bit from the start of its header.
    pub offset: usize,
    /// Bit offset within that byte, 0 = most significant.
    pub bit: u32,
    /// Width in bits. Fields wider than 64 bits are byte aligned.
    pub width: u32,
    pub only: Only,
    pub rule: Rule,
    pub meaning: &'static str,
}

impl Field {
    pub const fn new(name: &'static str, offset: usize, bit: u32, width: u32, meaning: &'static str) -> Field {
        Field { name, offset, bit, width, only: Only::All, rule: Rule::Any, meaning }
    }

    pub const fn reserved(name: &'static str, offset: usize, bit: u32, width: u32) -> Field {
        Field { name, offset, bit, width, only: Only::All, rule: Rule::Reserved, meaning: "reserved, must be 0" }
    }

    pub const fn only(self, only: Only) -> Field {
        Field { only, ..self }
    }

    /// First bit of the field counted from the start of the header, MSB first.
    pub const fn start_bit(&self) -> usize {
        self.offset * 8 + self.bit as usize
    }

    /// One past the last bit.
    pub const fn end_bit(&self) -> usize {
        self.start_bit() + self.width as usize
    }

    /// Bytes a buffer must hold for this field to be read.
    pub const fn end_byte(&self) -> usize {
        self.end_bit().div_ceil(8)
    }

    /// The field's `[msb:lsb]` bit range inside a header held as one big-endian
    /// vector of `header_bytes * 8` bits (byte 0 in the top bits), the way a
    /// Verilog slice would name it.
    pub const fn vector_range(&self, header_bytes: usize) -> (usize, usize) {
        let total = header_bytes * 8;
        (total - 1 - self.start_bit(), total - self.end_bit())
    }

    const fn mask(&self) -> u64 {
        if self.width >= 64 {
            u64::MAX
        } else {
            (1u64 << self.width) - 1
        }
    }

    /// Largest value the field holds.
    pub const fn max(&self) -> u64 {
        self.mask()
    }

    /// Reads the field from a header. `buf` must be at least `end_byte()` long
    /// and the field at most 64 bits wide; decoders check length first.
    #[inline(always)]
    pub fn get(&self, buf: &[u8]) -> u64 {
        debug_assert!(self.width <= 64);
        if self.byte_aligned() {
            // Most fields: whole big-endian bytes, read as they are (the
            // encoder and decoder run per packet in the UDP reference).
            let (first, last) = (self.offset, self.end_byte());
            let mut b = [0u8; 8];
            b[8 - (last - first)..].copy_from_slice(&buf[first..last]);
            return u64::from_be_bytes(b);
        }
        self.get_bits(buf)
    }

    /// Starts on a byte boundary and spans whole bytes.
    const fn byte_aligned(&self) -> bool {
        self.bit == 0 && self.width % 8 == 0
    }

    /// [`Field::get`] for any bit position.
    fn get_bits(&self, buf: &[u8]) -> u64 {
        let (first, last) = (self.offset, self.end_byte());
        let acc = buf[first..last].iter().fold(0u128, |a, &b| (a << 8) | b as u128);
        let trailing = last * 8 - self.end_bit();
        ((acc >> trailing) as u64) & self.mask()
    }

    /// Writes the field into a header, leaving the other bits untouched.
    /// Bits of `value` above the field's width are dropped; encoders check
    /// ranges before they get here.
    #[inline(always)]
    pub fn set(&self, buf: &mut [u8], value: u64) {
        debug_assert!(self.width <= 64);
        if self.byte_aligned() {
            let (first, last) = (self.offset, self.end_byte());
            let v = (value & self.mask()).to_be_bytes();
            buf[first..last].copy_from_slice(&v[8 - (last - first)..]);
            return;
        }
        self.set_bits(buf, value);
    }

    /// [`Field::set`] for any bit position.
    fn set_bits(&self, buf: &mut [u8], value: u64) {
        let (first, last) = (self.offset, self.end_byte());
        let trailing = last * 8 - self.end_bit();
        let mask = (self.mask() as u128) << trailing;
        let bits = ((value & self.mask()) as u128) << trailing;
        let acc = buf[first..last].iter().fold(0u128, |a, &b| (a << 8) | b as u128);
        let mut acc = (acc & !mask) | bits;
        for b in buf[first..last].iter_mut().rev() {
            *b = acc as u8;
            acc >>= 8;
        }
    }

    /// The bytes of a byte-aligned field (used for the 256-bit SACK bitmap).
    pub fn bytes<'a>(&self, buf: &'a [u8]) -> &'a [u8] {
        debug_assert!(self.bit == 0 && self.width % 8 == 0);
        &buf[self.offset..self.end_byte()]
    }
}

/// A fixed-size header and its fields in wire order.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    /// Short name: used in errors, the dissector and the spec.
    pub name: &'static str,
    pub title: &'static str,
    pub len: usize,
    pub fields: &'static [Field],
}

impl Layout {
    pub fn field(&self, name: &str) -> Option<&'static Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// Checks that the fields of each view tile the header exactly: every bit
    /// covered once, nothing past the end, wide fields byte aligned. Run by
    /// the test suite over every layout, so a table edit that leaves a hole or
    /// an overlap fails at once.
    pub fn check_tiling(&self) -> Result<(), String> {
        for view in [Only::Write, Only::Send] {
            let mut owner: Vec<Option<&str>> = vec![None; self.len * 8];
            for f in self.fields.iter().filter(|f| f.only == Only::All || f.only == view) {
                if f.width == 0 || f.bit > 7 {
                    return Err(format!("{}.{}: bad width or bit offset", self.name, f.name));
                }
                if f.width > 64 && (f.bit != 0 || f.width % 8 != 0) {
                    return Err(format!("{}.{}: wide field not byte aligned", self.name, f.name));
                }
                if f.end_bit() > self.len * 8 {
                    return Err(format!("{}.{}: runs past the {}-byte header", self.name, f.name, self.len));
                }
                for (bit, slot) in owner.iter_mut().enumerate().take(f.end_bit()).skip(f.start_bit()) {
                    if let Some(other) = slot {
                        return Err(format!("{}.{}: bit {bit} already belongs to {other}", self.name, f.name));
                    }
                    *slot = Some(f.name);
                }
            }
            if let Some(bit) = owner.iter().position(Option::is_none) {
                return Err(format!("{}: bit {bit} (byte {}) belongs to no field", self.name, bit / 8));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {

    /// The byte-aligned shortcut of get and set is the bit-level code on
    /// every field of every header.
    #[test]
    fn aligned_fields_read_and_write_as_the_bit_level_code() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut aligned = 0;
        for layout in crate::layouts::ALL {
            for f in layout.fields.iter().filter(|f| f.width <= 64) {
                aligned += f.byte_aligned() as usize;
                for _ in 0..50 {
                    let mut a: Vec<u8> = (0..layout.len).map(|_| next() as u8).collect();
                    let mut b = a.clone();
                    assert_eq!(f.get(&a), f.get_bits(&a), "{}.{}", layout.name, f.name);
                    let v = next();
                    f.set(&mut a, v);
                    f.set_bits(&mut b, v);
                    assert_eq!(a, b, "{}.{} = {v:#x}", layout.name, f.name);
                }
            }
        }
        assert!(aligned > 20, "{aligned} byte-aligned fields");
    }
}
