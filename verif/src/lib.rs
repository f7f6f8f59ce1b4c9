//! mrnic co-simulation: the cycle model and its Verilated RTL in lockstep.
//!
//! - [`rtl`]: the Verilated designs of the table in `verif/build.rs`, driven
//!   through a generic C++ shim (a port table generated from each block's
//!   port list).
//! - [`lockstep`]: a model [`Block`](mrnic_model::block::Block) and its twin
//!   clocked together, every output compared every cycle; the first mismatch
//!   stops the run with a report and a VCD window of both sides.
//! - [`stimulus`]: seeded random traffic with valid/ready discipline.
//! - [`verilate`]: building and caching the Verilated models (also used by
//!   `build.rs`).

#[cfg(verilator)]
mod ffi;

pub mod axi;
pub mod blocks;
pub mod coverage;
pub mod designs;
pub mod fabric;
pub mod lockstep;
pub mod nic;
pub mod pair;
pub mod rtl;
pub mod stimulus;
mod top_cov;
pub mod trace;
pub mod twin;
pub mod verilate;

pub use coverage::Coverage;
pub use lockstep::{Lockstep, Mismatch, Options, TraceWindow};
pub use rtl::{skip_without_verilator, Rtl};
pub use stimulus::{Rng, Stimulus, Traffic};

/// What went wrong opening or running a design.
#[derive(Debug, thiserror::Error)]
pub enum VerifError {
    #[error("no Verilated designs in this build: {0}")]
    NotBuilt(String),
    #[error("no Verilated design `{block}` for config `{config}` in this build (have: {have}); add a row to the design table in verif/build.rs")]
    UnknownDesign { block: String, config: String, have: String },
    #[error("Verilating `{block}` for config `{config}` failed at build time:\n{message}")]
    BuildFailed { block: String, config: String, message: String },
    #[error("opening the Verilated design {0}: {1}")]
    Open(String, String),
    #[error("the model and the RTL of `{block}` have different ports: {detail}")]
    PortMismatch { block: String, detail: String },
    #[error("no block `{block}` for co-simulation (have: {have})")]
    UnknownBlock { block: String, have: String },
    #[error("config: {0}")]
    Config(String),
    #[error("tracing: {0}")]
    Trace(String),
}
