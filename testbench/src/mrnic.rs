//! The mrnic (MetaRoCE-style) transport in the simulator: the reference
//! transport (`reference/`, crate `mrnic-reference`) behind
//! [`HostTransport`](crate::host::HostTransport). The testbench carries no
//! transport logic of its own for it: until the adapter is wired, runs that
//! ask for it are reported as skipped with [`Unavailable`].

use crate::host::HostTransport;

/// Why the mrnic transport cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("mrnic transport unavailable: {0}")]
pub struct Unavailable(pub String);

/// Settings the adapter needs from the run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MrnicSetup {
    pub hosts: u32,
    pub planes: u32,
    pub nic_gbps: f64,
    pub mtu: u32,
}

/// One reference NIC per host.
pub fn transports(_setup: &MrnicSetup) -> Result<Vec<Box<dyn HostTransport>>, Unavailable> {
    Err(Unavailable(
        "the reference transport (reference/, mrnic-reference) is not wired into the testbench yet; \
         see testbench/src/mrnic.rs"
            .into(),
    ))
}
