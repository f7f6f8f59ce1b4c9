//! The mrnic wire format and shared definitions: the one place where every
//! wire field ([`layouts`]), table width ([`tables`]) and configuration size
//! ([`config`]) is defined. The software reference, the cycle-accurate model
//! and the RTL generator all build on this crate, so a layout change here is
//! mechanical everywhere else.

pub mod axi;
pub mod config;
pub mod dissector;
pub mod drop;
pub mod error;
pub mod field;
pub mod headers;
pub mod layouts;
pub mod packet;
pub mod pcap;
pub mod spec;
pub mod synth;
pub mod tables;

pub use config::Config;
pub use error::{DecodeError, EncodeError, Problem};
pub use headers::{
    Bitmap256, DataHeader, Flags, Header, NackCode, NackHeader, Opcode, Placement, ProbeHeader, SackHeader,
};
pub use packet::{
    decode_datagram, decode_frame, encode_datagram, encode_frame, wrap_datagram, Datagram, Frame, NetHeaders,
};
