//! The top, `mrnic_core`, printed from the model's netlist
//! ([`mrnic_model::mrnic_core`]) by [`crate::netlist::build`], and its
//! receive side alone, [`mrnic_model::mrnic_core::rx_netlist`] (every
//! block but the transmit side, cut edges as top ports). Both run through
//! Verilator in lockstep with the model's simulation of the same netlist
//! (`verif/tests/mrnic_core.rs`, `verif/tests/mrnic_rx_core.rs`). The
//! whole top is part of `mrnic gen`'s output for the configs tx_engine's
//! assembly fits (`small`; docs/architecture.md); the receive side alone
//! is printed by `verif/build.rs` only.

use mrnic_model::mrnic_core::{netlist, rx_netlist, NAME, RX_NAME};
use mrnic_proto::Config;

use crate::Header;

/// The receive side's Verilog, one `(file name, text)` per module, the top
/// first, then each block's module once (in the netlist's order).
pub fn rx_verilog(cfg: &Config) -> Result<Vec<(String, String)>, String> {
    let header = Header::new(
        &format!("mrnic-hdl {}: model/src/mrnic_core.rs's netlist, config {}", RX_NAME, cfg.name),
        "built by verif/build.rs (not committed: a part of the top)",
    );
    crate::netlist::files(&rx_netlist(cfg)?, cfg, &header)
}

/// The whole top's Verilog for `cfg`, as [`rx_verilog`]: `mrnic_core.v`
/// first, then every module under it once.
pub fn verilog(cfg: &Config) -> Result<Vec<(String, String)>, String> {
    let header = Header::new(
        &format!("mrnic-hdl {}: model/src/mrnic_core.rs's netlist, config {}", NAME, cfg.name),
        &crate::gen::command(cfg, "DIR"),
    );
    crate::netlist::files(&netlist(cfg)?, cfg, &header)
}
