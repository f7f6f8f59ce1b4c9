//! `mrnic_core`'s netlist: it passes the netlist rules in both shipped
//! configs, instantiates every block and glue block once, simulates as one
//! block, and every instance input is driven inside or from a host, network
//! or memory port (no receive-side port is left to the bench). The top
//! driven through its
//! ports with host memory is tested in `verif/tests/mrnic_core.rs`.

use mrnic_model::block::{Block, Dir};
use mrnic_model::mrnic_core::{netlist, BLOCKS, GLUE};
use mrnic_model::netlist::{model_block, Sim, Sink};
use mrnic_proto::Config;

#[test]
fn the_top_checks_and_builds_in_both_configs() {
    for name in ["small", "default"] {
        let cfg = Config::builtin(name).unwrap();
        let n = netlist(&cfg).unwrap_or_else(|e| panic!("{name}: {e}"));
        let insts: Vec<&str> = n.insts.iter().map(|i| i.name.as_str()).collect();
        let want: Vec<&str> = BLOCKS.iter().chain(GLUE.iter()).copied().collect();
        assert_eq!(insts, want, "{name}");
        let sim = Sim::new(&n, |i| model_block(i.kind, &cfg).unwrap()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(sim.name(), "mrnic_core");
        // The receive side is wired inside: no top port reaches a port
        // of the controller's parts but the host's open record.
        for p in sim.ports() {
            assert!(!p.name.starts_with("rxc_"), "{name}: {} left for the bench", p.name);
        }
        assert!(sim.ports().iter().any(|p| p.name == "s_ropen_psn"), "{name}: no receive open record");
        // Every block's stat pulse reaches a csr counter (rx_buffer's
        // oversize pulse a top port).
        for i in &n.insts {
            for p in i.ports.iter().filter(|p| p.dir == Dir::Out && p.name.starts_with("stat_")) {
                let read = n
                    .drives
                    .iter()
                    .any(|(_, d)| d.src == mrnic_model::netlist::Src::Out(i.name.clone(), p.name.clone()));
                assert!(read, "{name}: {}.{} is counted nowhere", i.name, p.name);
            }
        }
        let csr_stats =
            n.insts.iter().find(|i| i.name == "csr").unwrap().ports.iter().filter(|p| p.name.starts_with("stat_"));
        for p in csr_stats {
            let sink = Sink::In("csr".into(), p.name.clone());
            assert!(n.drives.iter().any(|(s, _)| *s == sink), "{name}: csr.{} undriven", p.name);
        }
    }
}
