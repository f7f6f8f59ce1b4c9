//! mrnic-testbench: a deterministic discrete-event fabric simulator for the
//! mrnic transport and a RoCEv2 baseline, with the workloads, metrics and
//! named scenarios that compare them.
//!
//! - [`event`]: the time-ordered event queue (ties by insertion order).
//! - [`rng`]: the one seeded PRNG of a run (xoshiro256**).
//! - [`topo`]: leaf-spine, k-ary fat-tree and multiplane fabrics.
//! - [`link`], [`switch`]: serialization, propagation, ECN marking, tail
//!   drop, random loss and ECMP on the 5-tuple.
//! - [`host`]: the [`host::HostTransport`] trait every transport implements
//!   (sans-IO, the reference's shape) and the NIC's port timing.
//! - [`sim`]: the run loop, failures and counters.
//! - [`workload`], [`metrics`]: collectives, incast, connection mixes and
//!   what is measured.
//! - [`roce`]: the RoCEv2 baseline (go-back-N, DCQCN).
//! - [`scenario`], [`plot`]: named scenarios, JSON, Markdown and SVG output.

pub mod event;
pub mod host;
pub mod link;
pub mod metrics;
pub mod mrnic;
pub mod plot;
pub mod rng;
pub mod roce;
pub mod scenario;
pub mod sim;
pub mod switch;
pub mod topo;
pub mod workload;

/// Simulated time in picoseconds (2^64 ps is 213 days).
pub type Time = u64;
pub const PS: Time = 1;
pub const NS: Time = 1_000;
pub const US: Time = 1_000_000;
pub const MS: Time = 1_000_000_000;

pub type HostId = u32;
pub type LinkId = u32;
pub type SwitchId = u32;
/// A connection, named the same at both of its ends.
pub type ConnId = u32;

/// Bytes a frame costs on the wire beyond the transport header and payload:
/// Ethernet 14 + IPv4 20 + UDP 8 + ICRC 4 + FCS 4 + preamble/SFD 8 + IFG 12.
pub const WIRE_OVERHEAD: u32 = 14 + 20 + 8 + 4 + 4 + 8 + 12;
