//! The top, `mrnic_core`, printed from the model's netlist
//! ([`mrnic_model::mrnic_core`]) by [`crate::netlist::build`]. The whole
//! top waits for tx_engine's block generator (docs/architecture.md); until
//! then its receive side, [`mrnic_model::mrnic_core::rx_netlist`] (every
//! block but the transmit side, cut edges as top ports), prints here and
//! runs through Verilator in lockstep with the model's simulation of the
//! same netlist (`verif/tests/mrnic_rx_core.rs`).

use mrnic_model::mrnic_core::{rx_netlist, RX_NAME};
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
