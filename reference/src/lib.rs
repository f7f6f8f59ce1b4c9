//! The mrnic software reference transport: the behavioural golden model of
//! the MetaRoCE-style protocol in `docs/spec.md` (working draft:
//! `shared/protocol.md`), untimed and functional.
//!
//! The transport is a sans-IO state machine ([`Nic`]): the caller hands it
//! packets ([`Nic::handle_packet`]) and time ([`Nic::on_timer`]), and takes
//! packets from it ([`Nic::poll_transmit`]). The same core runs over the
//! deterministic lossy [`channel`] driven by [`sim`], over UDP sockets, and
//! event by event for the golden vectors.
//!
//! The blocks whose behaviour the hardware reproduces bit for bit are pure
//! functions over plain structs with integer fixed-point arithmetic:
//! [`selector::select`] (path selector), the updates in [`path`] (telemetry),
//! [`memory::Memory::check`] (placement checks). `DESIGN.md` lists the choices
//! made where the protocol draft is silent.

pub mod blast;
pub mod campaign;
pub mod channel;
pub mod counters;
pub mod fixed;
pub mod memory;
pub mod nic;
pub mod path;
pub mod receiver;
pub mod rng;
pub mod selector;
pub mod sender;
pub mod sim;
pub mod transfer;
pub mod udp;
pub mod udp_sys;
pub mod vectors;
pub mod verbs;
pub mod wire;

pub use counters::Counters;
pub use memory::Access;
pub use nic::{ConnInfo, Nic, NicConfig};
pub use path::{PathEntry, PathState};
pub use verbs::{Completion, ConnParams, CqOpcode, RecvRequest, Sge, Status, VerbsError, WorkRequest, WrOp};
pub use wire::{NodeAddr, WirePacket};
