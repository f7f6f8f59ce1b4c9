//! `mrnic_core`'s netlist: it passes the netlist rules in both shipped
//! configs, instantiates every block and glue block once, simulates as one
//! block, and exports only the receive controller's side as `rxc_*` ports
//! (which go away as the controller lands). The top driven through its
//! ports with host memory is tested in `verif/tests/mrnic_core.rs`.

use mrnic_model::block::{Block, Dir};
use mrnic_model::mrnic_core::{netlist, pending_port, BLOCKS, GLUE, PENDING};
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
        // Every top port is a host, network or memory port, or stands for
        // a pending controller port.
        for p in sim.ports() {
            if let Some(rest) = p.name.strip_prefix("rxc_") {
                assert!(
                    PENDING.iter().any(|(i, c)| rest.starts_with(&format!("{i}_{c}"))),
                    "{name}: {} is no pending port",
                    p.name
                );
            }
        }
        // Every block's stat pulse reaches a csr counter, except those the
        // controller will raise.
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
        assert!(sim.ports().iter().any(|p| p.name == pending_port("sack_gen", "s_pkt_valid")));
    }
}
