//! Typed decode and encode errors. Every error names the header, the field
//! and the byte offset at which the problem sits, so a person reading a
//! capture can find it.

use std::fmt;

/// What is wrong with a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Problem {
    /// The frame ends before this field does.
    Truncated { need: usize, have: usize },
    /// A value this implementation does not speak (version, ethertype,
    /// IP options, fragments, protocol).
    Unsupported { value: u64 },
    /// A reserved field that is not zero.
    ReservedSet { value: u64 },
    /// An opcode the protocol does not define.
    UnknownOpcode { value: u64 },
    /// A length field that disagrees with the bytes actually present.
    LengthMismatch { value: u64, actual: u64 },
    /// A checksum or CRC that does not match the bytes it covers.
    BadChecksum { found: u64, expected: u64 },
    /// A value that is legal for the field's width but not for its meaning
    /// (e.g. immediate data on an opcode without one).
    Invalid { value: u64, why: &'static str },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Problem::Truncated { need, have } => write!(f, "truncated: needs {need} bytes, frame has {have}"),
            Problem::Unsupported { value } => write!(f, "unsupported value {value:#x}"),
            Problem::ReservedSet { value } => write!(f, "reserved bits set ({value:#x}), must be 0"),
            Problem::UnknownOpcode { value } => write!(f, "unknown opcode {value}"),
            Problem::LengthMismatch { value, actual } => {
                write!(f, "length {value} disagrees with the {actual} bytes present")
            }
            Problem::BadChecksum { found, expected } => {
                write!(f, "bad checksum {found:#x}, computed {expected:#x}")
            }
            Problem::Invalid { value, why } => write!(f, "invalid value {value:#x}: {why}"),
        }
    }
}

/// A frame or datagram that cannot be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{layout}.{field} at byte {offset}: {problem}")]
pub struct DecodeError {
    /// Header name from the field table (`eth`, `ipv4`, `udp`, `data`, ...).
    pub layout: &'static str,
    pub field: &'static str,
    /// Byte offset from the start of what was being decoded (the frame for
    /// `decode_frame`, the UDP payload for `decode_datagram`).
    pub offset: usize,
    pub problem: Problem,
}

impl DecodeError {
    /// The same error seen from a buffer that starts `by` bytes earlier.
    pub fn shifted(self, by: usize) -> DecodeError {
        DecodeError { offset: self.offset + by, ..self }
    }
}

/// A header value that does not fit its wire field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{layout}.{field}: value {value:#x} does not fit ({why})")]
pub struct EncodeError {
    pub layout: &'static str,
    pub field: &'static str,
    pub value: u64,
    pub why: &'static str,
}
