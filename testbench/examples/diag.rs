//! Where a scenario point's sending time goes: runs one point of a named
//! scenario with the mrnic transport built to account every stretch a NIC
//! had a free port but nothing it could send, by reason (connection window,
//! path windows, no GOOD path, message table, nothing posted), and prints it
//! with the point's figures and the simulator's speed.
//!
//! `cargo run --release -p mrnic-testbench --example diag -- NAME INDEX
//! [--quick] [--seed S] [--paths P]` (INDEX as in the scenario's table,
//! counting from 0; `--paths` overrides the paths per connection).

use std::time::Instant;

use mrnic_testbench::metrics::collect;
use mrnic_testbench::mrnic::{self, MrnicSetup};
use mrnic_testbench::rng::Rng;
use mrnic_testbench::scenario::{self, payload_gbps, TransportKind};
use mrnic_testbench::sim::Sim;
use mrnic_testbench::topo::LinkKind;
use mrnic_testbench::workload::Workload;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: diag NAME INDEX [--quick] [--seed S] [--paths P]";
    let name = args.first().ok_or(usage)?.clone();
    let index: usize = args.get(1).ok_or(usage)?.parse()?;
    let (mut quick, mut seed, mut paths) = (false, 1u64, None);
    let mut it = args.iter().skip(2);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--quick" => quick = true,
            "--seed" => seed = it.next().ok_or(usage)?.parse()?,
            "--paths" => paths = Some(it.next().ok_or(usage)?.parse()?),
            other => return Err(format!("unknown argument {other}; {usage}").into()),
        }
    }
    let all = scenario::points(&name, quick, seed)?;
    let spec = all.get(index).ok_or_else(|| format!("{name} has {} points", all.len()))?;
    if spec.transport != TransportKind::Mrnic {
        return Err(format!("point {index} ({}) is not an mrnic point", spec.label).into());
    }
    let hosts = spec.sim.topo.hosts();
    let nics = mrnic::transports(&MrnicSetup {
        seed: spec.sim.seed,
        hosts,
        planes: spec.sim.topo.planes(),
        nic_gbps: spec.sim.nic.gbps,
        mtu: mrnic_proto::Config::builtin("default")?.transport.mtu,
        max_msg_bytes: spec.pattern.max_msg_bytes(hosts),
        paths,
        diagnose: true,
    })?;
    let wl = Workload::new(spec.pattern.clone(), hosts, Rng::new(spec.sim.seed ^ 0x776f_726b_6c6f_6164));
    let mut sim = Sim::new(spec.sim.clone(), nics, wl);
    let start = Instant::now();
    sim.run(&mut |_| {});
    let wall = start.elapsed().as_secs_f64();
    let r = collect(&sim, spec.window);
    let ideal = (1.0 - spec.sim.loss) * payload_gbps(spec.sim.nic.gbps);
    println!(
        "{} ({} paths): {:.0} us simulated",
        spec.label,
        paths.map_or("config".into(), |p: u8| p.to_string()),
        r.end_us
    );
    println!(
        "goodput per host {:.1} Gbit/s = {:.3} of ideal {:.0}; completion {:?} us",
        r.goodput.mean,
        r.goodput.mean / ideal,
        ideal,
        r.completion_us
    );
    let st = r.transport_stats;
    println!(
        "data {} retx {} ({:.2}%), ctrl {}, timeouts {}, drops {:?}",
        st.data_pkts,
        st.retx_pkts,
        100.0 * st.retx_pkts as f64 / st.data_pkts.max(1) as f64,
        st.ctrl_pkts,
        st.timeouts,
        r.drops
    );
    let idle = sum_by_name(sim.nics.iter().map(|n| n.idle_breakdown()));
    let total = sim.now as f64 * hosts as f64;
    println!("sender idle with a free port, share of host-time:");
    for (k, v) in idle {
        println!("  {k:>14}: {:.3}", v as f64 / total);
    }
    println!("links by kind: utilization over the run (mean, max), CE marks, tail drops, max queue KB");
    for kind in [LinkKind::HostUp, LinkKind::Up, LinkKind::Down, LinkKind::HostDown] {
        let ls: Vec<_> = sim.links.iter().filter(|l| l.kind == kind).collect();
        let util: Vec<f64> = ls.iter().map(|l| l.tx_bytes as f64 * 8.0 / (sim.now as f64 / 1000.0) / l.gbps).collect();
        println!(
            "  {kind:>8?}: {} links, util {:.3} / {:.3}, CE {}, drops {}, max queue {:.0}",
            ls.len(),
            util.iter().sum::<f64>() / util.len().max(1) as f64,
            util.iter().cloned().fold(0.0, f64::max),
            ls.iter().map(|l| l.ce_marks).sum::<u64>(),
            ls.iter().map(|l| l.tail_drops).sum::<u64>(),
            ls.iter().map(|l| l.max_queued_bytes).max().unwrap_or(0) as f64 / 1000.0
        );
    }
    let counts = sum_by_name(sim.nics.iter().map(|n| n.counters()));
    println!("counters: {counts:?}");
    if std::env::var_os("DIAG_CONN").is_some() {
        println!(
            "conn 0 at host {}: {:?}",
            sim.wl.conns[0].src,
            sim.nics[sim.wl.conns[0].src as usize].describe_conn(sim.wl.conns[0].id)
        );
    }
    println!("{} events in {wall:.2} s = {:.2} M events/s", sim.events, sim.events as f64 / wall / 1e6);
    Ok(())
}

/// Adds up per-host (name, value) lists by name, in first-seen order.
fn sum_by_name<V: Copy + std::ops::AddAssign>(
    per_host: impl Iterator<Item = Vec<(&'static str, V)>>,
) -> Vec<(&'static str, V)> {
    let mut out: Vec<(&'static str, V)> = Vec::new();
    for list in per_host {
        for (k, v) in list {
            match out.iter_mut().find(|(n, _)| *n == k) {
                Some(e) => e.1 += v,
                None => out.push((k, v)),
            }
        }
    }
    out
}
