//! `conn_search` wired to the real `conn_table` through `model::netlist`
//! (its `m_rd` to the table's `s_rd`, the table's `m_rd` to its `s_rdr`),
//! against the reference NIC: connections with random local ids, remote ids
//! and peers, then NO_CONN NACKs naming a connection's remote id from its
//! peer, from another address, or an unknown id. A NACK the reference
//! accepts (its `ack_no_conn` does not move) must come out on `m_nack` with
//! the slot of that connection; one it refuses must pulse
//! `stat_ack_no_conn`, nothing else. Then NACKs offered during a sweep are
//! dropped and counted, never stalling `s_nc`, under `m_nack`
//! backpressure, and reopened slots are seen by the next sweep.

use mrnic_model::block::{cycle_named, port_index, Bits, Dir, PortDef};
use mrnic_model::netlist::{model_block, Netlist, Sim};
use mrnic_proto::packet::ECN_ECT0;
use mrnic_proto::{Config, Header, NackCode, NackHeader};
use mrnic_reference::nic::{Nic, NicConfig};
use mrnic_reference::rng::Rng;
use mrnic_reference::verbs::ConnParams;
use mrnic_reference::wire::WirePacket;

struct Top {
    sim: Sim,
    ports: Vec<PortDef>,
    stats: u64,
}

impl Top {
    fn new(cfg: &Config) -> Top {
        let mut n: Netlist<&'static str> = Netlist::new("conn_search_top");
        for name in ["conn_table", "conn_search"] {
            n.inst(name, name, model_block(name, cfg).unwrap().ports().to_vec());
        }
        n.export("conn_table", "rst");
        n.wire("rst", "conn_search.rst");
        assert!(n.channel("conn_search", "m_rd", "conn_table", "s_rd") == 3);
        assert!(n.channel("conn_table", "m_rd", "conn_search", "s_rdr") >= 6);
        n.export_rest("conn_search");
        // Of the table: its connection writes; its lookup side idles (its
        // outputs, named like the search's, stay inside).
        let inputs: Vec<PortDef> = n.insts[0].ports.iter().filter(|p| p.dir == Dir::In).cloned().collect();
        for p in inputs {
            match p.name.as_str() {
                "rst" | "s_rd_valid" | "s_rd_conn" | "m_rd_ready" => {}
                x if x.starts_with("s_wr_") => n.export("conn_table", x),
                x => n.tie(0, &format!("conn_table.{x}")),
            }
        }
        n.check().unwrap();
        let ports = n.ports.clone();
        let sim = Sim::new(&n, |i| model_block(i.kind, cfg).unwrap()).unwrap();
        Top { sim, ports, stats: 0 }
    }

    fn ix(&self, n: &str) -> usize {
        port_index(&self.ports, n).unwrap_or_else(|| panic!("no top port {n}"))
    }

    fn cycle(&mut self, set: &[(&str, u64)]) -> Vec<Bits> {
        let o = cycle_named(&mut self.sim, &self.ports, set);
        let s = o[self.ix("stat_ack_no_conn")].as_u64();
        self.stats += s;
        o
    }

    fn open(&mut self, cp: &ConnParams, valid: bool) {
        self.cycle(&[
            ("s_wr_valid", 1),
            ("s_wr_entry_valid", valid as u64),
            ("s_wr_local_id", cp.local_id as u64),
            ("s_wr_remote_id", cp.remote_id as u64),
            ("s_wr_remote_addr", cp.remote as u64),
            ("s_wr_paths", cp.paths as u64),
        ]);
    }

    /// Offers one NO_CONN NACK and runs until it is answered (on `m_nack`
    /// or by a count), then a sweep's length more to see nothing else
    /// comes; returns the slot it resolved to, if any.
    fn resolve(&mut self, dst_conn: u32, src: u32, rng: &mut Rng, conns: u32) -> Option<u32> {
        let o = self.cycle(&[
            ("s_nc_valid", 1),
            ("s_nc_dst_conn", dst_conn as u64),
            ("s_nc_src_addr", src as u64),
            ("s_nc_code", 3),
            ("s_nc_path_id", 1),
            ("s_nc_psn", 99),
        ]);
        assert_eq!(o[self.ix("s_nc_ready")].as_u64(), 1);
        let s0 = self.stats;
        let mut got = None;
        let mut after = None;
        for k in 0..20_000u32 {
            let ready = rng.below(3) == 0;
            let o = self.cycle(&[("m_nack_ready", ready as u64)]);
            if o[self.ix("m_nack_valid")].as_u64() == 1 {
                assert_eq!(o[self.ix("m_nack_code")].as_u64(), 3);
                assert_eq!(o[self.ix("m_nack_psn")].as_u64(), 99);
                assert_eq!(o[self.ix("m_nack_path_id")].as_u64(), 1);
                if ready {
                    assert!(got.is_none(), "two answers to one NACK");
                    got = Some(o[self.ix("m_nack_conn")].as_u64() as u32);
                }
            }
            if after.is_none() && (got.is_some() || self.stats > s0) {
                after = Some(k);
            }
            if after.is_some_and(|a| k > a + conns + 8) {
                return got;
            }
        }
        panic!("the sweep never ended");
    }
}

fn run(name: &str, seed: u64, nacks: u64) {
    let cfg = Config::builtin(name).unwrap();
    let conns = cfg.transport.connections;
    let mut top = Top::new(&cfg);
    let mut rng = Rng::new(seed);
    top.cycle(&[("rst", 1)]);
    for _ in 0..conns + 4 {
        top.cycle(&[]);
    }
    let local = 7;
    let mut nic = Nic::new(NicConfig::new(cfg.clone(), local, seed));
    // Connections on random slots (one id per slot, as the table holds).
    let mut open: Vec<ConnParams> = vec![];
    let mut used = std::collections::BTreeSet::new();
    while open.len() < (conns as usize / 2).min(12) {
        let slot = rng.below(conns as u64) as u32;
        if !used.insert(slot) {
            continue;
        }
        let local_id = slot + conns * rng.below(50) as u32;
        let cp = ConnParams {
            local_id,
            remote_id: 1000 + rng.below(6) as u32,
            remote: 40 + rng.below(4) as u32,
            paths: 1,
            tx_psn: 0,
            rx_psn: 0,
        };
        // The reference keys by id; it refuses a second (remote id, peer)
        // pair only by finding the first: keep pairs unique.
        if open.iter().any(|o| o.remote_id == cp.remote_id && o.remote == cp.remote) {
            used.remove(&slot);
            continue;
        }
        nic.create_conn(cp).unwrap();
        top.open(&cp, true);
        open.push(cp);
    }
    let (mut found_n, mut miss_n) = (0, 0);
    for i in 0..nacks {
        let (dst, src) = match rng.below(4) {
            0 | 1 => {
                let c = open[rng.below(open.len() as u64) as usize];
                (c.remote_id, c.remote)
            }
            2 => {
                let c = open[rng.below(open.len() as u64) as usize];
                (c.remote_id, c.remote ^ 0x100)
            }
            _ => (2000 + rng.below(100) as u32, 40 + rng.below(4) as u32),
        };
        let h = Header::Nack(NackHeader {
            code: NackCode::NoConn,
            dst_conn: dst,
            path_id: 1,
            path_psn: 99,
            path_gen: 0,
            stream_id: 0,
            msn: 0,
            echo_ts: 0,
        });
        let meta = WirePacket { src, dst: local, sport: 5, dport: 4791, plane: 0, ecn: ECN_ECT0, bytes: vec![] };
        let c0 = nic.counters().ack_no_conn;
        nic.handle_datagram(1000 * i, &meta, &h, &[]);
        while nic.poll_transmit(1000 * i).is_some() {}
        let refused = nic.counters().ack_no_conn > c0;
        let s0 = top.stats;
        let got = top.resolve(dst, src, &mut rng, conns);
        if refused {
            assert_eq!(got, None, "{name} {i}: the reference found no connection for {dst} from {src}");
            assert_eq!(top.stats, s0 + 1, "{name} {i}: one ack_no_conn");
            miss_n += 1;
        } else {
            let want = open.iter().find(|c| c.remote_id == dst && c.remote == src).expect("accepted: one matches");
            assert_eq!(got, Some(want.local_id % conns), "{name} {i}: the slot of local id {}", want.local_id);
            assert_eq!(top.stats, s0, "{name} {i}: no count for a found connection");
            found_n += 1;
        }
    }
    assert!(found_n > nacks / 4 && miss_n > nacks / 4, "{name}: {found_n} found, {miss_n} refused");
    // A closed slot is no longer found.
    let c = open[0];
    top.open(&c, false);
    top.cycle(&[]);
    let s0 = top.stats;
    assert_eq!(top.resolve(c.remote_id, c.remote, &mut rng, conns), None, "{name}: a closed connection found");
    assert_eq!(top.stats, s0 + 1);
    // NACKs offered during a sweep are taken, dropped and counted.
    let target = open[1];
    let s0 = top.stats;
    top.cycle(&[
        ("s_nc_valid", 1),
        ("s_nc_dst_conn", target.remote_id as u64),
        ("s_nc_src_addr", target.remote as u64),
    ]);
    let mut extra = 0;
    let mut got = None;
    for k in 0..20_000 {
        let offer = k < 6;
        let o = top.cycle(&[("s_nc_valid", offer as u64), ("s_nc_dst_conn", 5), ("m_nack_ready", (k > 40) as u64)]);
        if offer {
            assert_eq!(o[top.ix("s_nc_ready")].as_u64(), 1, "{name}: s_nc stalled during a sweep");
            extra += 1;
        }
        if o[top.ix("m_nack_valid")].as_u64() == 1 && k > 40 {
            got = Some(o[top.ix("m_nack_conn")].as_u64() as u32);
            break;
        }
    }
    assert_eq!(got, Some(target.local_id % conns), "{name}: the first NACK's sweep goes on");
    for _ in 0..4 {
        top.cycle(&[]);
    }
    assert_eq!(top.stats, s0 + extra, "{name}: every dropped NACK counted once");
}

#[test]
fn finds_what_the_reference_finds_small() {
    run("small", 1, 120);
    run("small", 2, 120);
}

#[test]
fn finds_what_the_reference_finds_default() {
    // 4096 slots a sweep: fewer NACKs.
    run("default", 3, 16);
}
