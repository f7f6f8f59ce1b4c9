//! The top, `mrnic_core`, printed from the model's netlist
//! ([`mrnic_model::mrnic_core`]) by [`crate::netlist::build`]. The whole
//! top waits for tx_engine's block generator (docs/architecture.md); until
//! then its receive side, [`mrnic_model::mrnic_core::rx_netlist`] (every
//! block but the transmit side, cut edges as top ports), prints here and
//! runs through Verilator in lockstep with the model's simulation of the
//! same netlist (`verif/tests/mrnic_rx_core.rs`).

use mrnic_model::mrnic_core::rx_netlist;
use mrnic_model::netlist::Netlist;
use mrnic_proto::Config;

use crate::gen::BLOCKS;
use crate::{Header, ModuleSig};

/// The receive side's Verilog, one `(file name, text)` per module, the top
/// first, then each block's module once (in the netlist's order).
pub fn rx_verilog(cfg: &Config) -> Result<Vec<(String, String)>, String> {
    print(&rx_netlist(cfg)?, cfg)
}

/// The netlist `net` as its top module and its children's modules.
fn print(net: &Netlist<&'static str>, cfg: &Config) -> Result<Vec<(String, String)>, String> {
    let mut kids = Vec::new();
    for i in &net.insts {
        let row = BLOCKS.iter().find(|b| b.name == i.kind).ok_or_else(|| format!("no generator for `{}`", i.kind))?;
        let m = (row.generate)(cfg).map_err(|e| e.to_string())?;
        let text = m.to_verilog(&(row.header)(cfg)).map_err(|e| e.to_string())?;
        kids.push((i.kind, m.signature(), text));
    }
    let sigs: Vec<ModuleSig> = kids.iter().map(|(_, s, _)| s.clone()).collect();
    let top = crate::netlist::build(net, &sigs).map_err(|e| e.to_string())?;
    let header = Header::new(
        &format!("mrnic-hdl {}: model/src/mrnic_core.rs's netlist, config {}", net.name, cfg.name),
        "built by verif/build.rs (not committed: a part of the top)",
    );
    let mut files = vec![(format!("{}.v", net.name), top.to_verilog(&header).map_err(|e| e.to_string())?)];
    for (kind, _, text) in kids {
        let f = format!("{kind}.v");
        if !files.iter().any(|(n, _)| *n == f) {
            files.push((f, text));
        }
    }
    Ok(files)
}
