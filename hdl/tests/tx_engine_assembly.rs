//! The assembly of `tx_engine` (`hdl/src/tx_engine/assembly.rs`) as far as
//! it is built: the units and the state instance keep the netlist's rules
//! (every input driven once, widths agreeing), the module prints and
//! passes the IR's checks for `small` and `default`, and what the state
//! does not drive yet is printed (the work left, by name).

mod common;

use std::process::Command;

use common::{have, run, Scratch};
use mrnic_hdl::tx_engine::assembly::{modules, netlist};
use mrnic_hdl::Header;
use mrnic_model::tx_engine::TxEngineParams;
use mrnic_proto::Config;

fn params(name: &str) -> TxEngineParams {
    TxEngineParams::from_config(&Config::builtin(name).expect("built-in config")).expect("valid params")
}

#[test]
fn assembly_keeps_the_netlist_rules_and_prints() {
    // `default`'s connections are too many for the state's flip-flop
    // vectors: refused with the reason, not printed.
    let Err(err) = modules(&params("default")) else { panic!("default is refused") };
    assert!(err.contains("flip-flops"), "{err}");
    for cfg in ["small"] {
        let p = params(cfg);
        netlist(&p).check().unwrap_or_else(|e| panic!("{cfg}: {e}"));
        let (top, kids, pending) = modules(&p).unwrap_or_else(|e| panic!("{cfg}: {e}"));
        top.check().unwrap_or_else(|e| panic!("{cfg}: tx_engine: {e:?}"));
        for k in &kids {
            k.check().unwrap_or_else(|e| panic!("{cfg}: {}: {e:?}", k.name()));
        }
        // Verilator with every warning over the top and its children, each
        // in its own file as `mrnic gen` writes them: no output at all.
        if have("verilator", "--version") {
            let dir = Scratch::new(&format!("tx_engine_assembly_{cfg}"));
            let header = Header::new(
                "tx_engine assembly (work in progress)",
                "cargo test -p mrnic-hdl --test tx_engine_assembly",
            );
            let files: Vec<_> = std::iter::once(&top)
                .chain(kids.iter())
                .map(|m| dir.file(&format!("{}.v", m.name()), &m.to_verilog(&header).expect("checked")))
                .collect();
            let out =
                run(Command::new("verilator").args(["--lint-only", "-Wall", "--top-module", "tx_engine"]).args(&files));
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(stderr.trim().is_empty(), "{cfg}: {stderr}");
        }
        println!("{cfg}: the state drives {} unit inputs and engine outputs as 0 still:", pending.len());
        for p in &pending {
            println!("  {p}");
        }
    }
}
