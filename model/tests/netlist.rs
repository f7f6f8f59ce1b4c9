//! The netlist machinery: its rules refuse bad wiring with the place named;
//! the simulation settles combinational paths across instances in any
//! declaration order and reports a loop; and a real netlist (`rx_front`:
//! csr + rx_parser) simulated as one block matches the two blocks wired by
//! hand, every output every cycle, under random traffic.

use mrnic_model::block::{zero_values, Bits, Block, Dir, PortDef};
use mrnic_model::csr::{Csr, CsrParams};
use mrnic_model::mrnic_core;
use mrnic_model::netlist::{model_block, rx_front, slice_bits, Netlist, Sim};
use mrnic_model::rx_parser::stimulus::{self, Rng};
use mrnic_model::rx_parser::{Reason, RxParser, RxParserParams};
use mrnic_proto::Config;

/// `y = a ^ mask` combinationally, no state: a Mealy path through an instance.
struct Xor {
    ports: Vec<PortDef>,
    mask: u64,
}

impl Xor {
    fn new(mask: u64) -> Xor {
        Xor { ports: vec![PortDef::input("a", 8, "In", "in"), PortDef::output("y", 8, "Out", "a ^ mask")], mask }
    }
}

impl Block for Xor {
    fn name(&self) -> &'static str {
        "xor"
    }
    fn ports(&self) -> &[PortDef] {
        &self.ports
    }
    fn eval(&mut self, inputs: &[Bits], outputs: &mut [Bits]) {
        outputs[1] = Bits::from_u64(8, inputs[0].as_u64() ^ self.mask);
    }
    fn tick(&mut self, _inputs: &[Bits]) {}
}

fn xor_net(loop_back: bool) -> Netlist<u64> {
    let mut n = Netlist::new("chain");
    // Declared last-first, so the first pass sees stale values.
    n.inst("c", 4, Xor::new(0).ports);
    n.inst("b", 2, Xor::new(0).ports);
    n.inst("a", 1, Xor::new(0).ports);
    n.port(PortDef::input("x", 8, "In", "in"));
    n.port(PortDef::output("z", 8, "Out", "out"));
    if loop_back {
        n.wire("c.y", "a.a");
    } else {
        n.wire("x", "a.a");
    }
    n.wire("a.y", "b.a");
    n.wire("b.y", "c.a");
    n.wire("c.y", "z");
    n
}

#[test]
fn combinational_paths_settle_in_any_order() {
    let mut sim = Sim::new(&xor_net(false), |i| Box::new(Xor::new(i.kind))).unwrap();
    let mut out = zero_values(sim.ports());
    for x in [0u64, 0x5a, 0xff, 3] {
        let ins = vec![Bits::from_u64(8, x), Bits::zero(8)];
        sim.eval(&ins, &mut out);
        assert_eq!(out[1].as_u64(), x ^ 7, "x = {x:#x}");
        sim.tick(&ins);
    }
}

#[test]
#[should_panic(expected = "do not settle")]
fn a_combinational_loop_is_reported() {
    let mut sim = Sim::new(&xor_net(true), |i| Box::new(Xor::new(i.kind))).unwrap();
    let ins = vec![Bits::zero(8), Bits::zero(8)];
    let mut out = zero_values(sim.ports());
    sim.eval(&ins, &mut out);
}

#[test]
fn a_cut_instance_leaves_its_edges_as_top_ports() {
    // a -> b -> c with b cut: b's input is a top output fed by a, its
    // output a top input into c; x and z stay.
    let cut = xor_net(false).cut(&["b"], "chain_cut").unwrap();
    let names: Vec<(&str, bool)> = cut.ports.iter().map(|p| (p.name.as_str(), p.dir == Dir::In)).collect();
    assert_eq!(names, [("x", true), ("z", false), ("b_a", false), ("b_y", true)]);
    let mut sim = Sim::new(&cut, |i| Box::new(Xor::new(i.kind))).unwrap();
    let mut out = zero_values(sim.ports());
    for (x, by) in [(0u64, 0u64), (0x5a, 0x33), (0xff, 0x80)] {
        let ins = vec![Bits::from_u64(8, x), Bits::zero(8), Bits::zero(8), Bits::from_u64(8, by)];
        sim.eval(&ins, &mut out);
        assert_eq!(out[1].as_u64(), by ^ 4, "z comes from the cut input through c");
        assert_eq!(out[2].as_u64(), x ^ 1, "b_a is a's output");
    }
    // The source of the loop is cut too: a's input was c's output.
    let loop_cut = xor_net(true).cut(&["c"], "loop_cut").unwrap();
    let names: Vec<&str> = loop_cut.ports.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["c_y", "c_a"], "x fed nothing, z came from c; cut ports in wiring order");
    let e = xor_net(false).cut(&["d"], "none").unwrap_err();
    assert!(e.to_string().contains("no instance `d` to cut"), "{e}");
}

#[test]
fn the_receive_side_cut_of_the_top_keeps_every_receive_port() {
    let cfg = Config::builtin("small").unwrap();
    let full = mrnic_core::netlist(&cfg).unwrap();
    let rx = mrnic_core::rx_netlist(&cfg).unwrap();
    let has = |n: &Netlist<&'static str>, p: &str| n.ports.iter().any(|d| d.name == p);
    for p in ["s_axis_tdata", "m_axi_awaddr", "m_axi_bready", "s_axil_awaddr", "m_cqe_valid", "s_ropen_valid"] {
        assert!(has(&rx, p), "{p} kept");
    }
    for p in ["m_axis_tdata", "m_axi_araddr", "port_ready", "s_open_valid", "cfg_src_mac"] {
        assert!(has(&full, p) && !has(&rx, p), "{p} belongs to the transmit side");
    }
    // The receive side's channels to tx_engine end at the cut.
    for p in ["tx_engine_s_sack_valid", "tx_engine_s_cnack_code", "tx_engine_s_wr_valid"] {
        assert!(rx.ports.iter().any(|d| d.name == p && d.dir == Dir::Out), "{p} out");
    }
    for p in ["tx_engine_s_sack_ready", "tx_engine_m_cqe_valid", "tx_engine_stat_tx_data"] {
        assert!(rx.ports.iter().any(|d| d.name == p && d.dir == Dir::In), "{p} in");
    }
    assert!(rx.insts.iter().all(|i| !mrnic_core::TX_SIDE.contains(&i.name.as_str())));
    let sim = Sim::new(&rx, |i| model_block(i.kind, &cfg).unwrap()).unwrap();
    assert_eq!(sim.ports().len(), rx.ports.len());
}

#[test]
fn bad_wiring_is_refused_with_its_place() {
    let err = |f: &dyn Fn(&mut Netlist<u64>)| {
        let mut n = xor_net(false);
        f(&mut n);
        n.check().unwrap_err().to_string()
    };
    assert!(err(&|n| n.wire("x", "b.a")).contains("`b.a` is driven twice"));
    assert!(err(&|n| {
        let p = n.insts[0].ports[0].clone();
        n.insts[0].ports.push(p);
    })
    .contains("has two ports named"));
    assert!(err(&|n| n.drives.retain(|(s, _)| *s != mrnic_model::netlist::Sink::In("b".into(), "a".into())))
        .contains("`b.a` is not driven"));
    assert!(err(&|n| n.port(PortDef::output("w", 8, "Out", "open"))).contains("top output `w` is not driven"));
    assert!(err(&|n| {
        n.port(PortDef::output("w", 4, "Out", "narrow"));
        n.wire("a.y", "w");
    })
    .contains("`w` is 4 bits, its source 8"));
    assert!(err(&|n| {
        n.port(PortDef::output("w", 4, "Out", "narrow"));
        n.slice("a.y", 6, 4, "w");
    })
    .contains("bits 6+4 of a 8-bit source"));
    assert!(err(&|n| {
        n.port(PortDef::output("w", 4, "Out", "narrow"));
        n.tie(16, "w");
    })
    .contains("constant 16 does not fit"));
    assert!(err(&|n| {
        n.port(PortDef::output("w", 8, "Out", "w"));
        n.wire("d.y", "w");
    })
    .contains("no instance `d`"));
    assert!(err(&|n| {
        n.port(PortDef::output("w", 8, "Out", "w"));
        n.wire("a.a", "w");
    })
    .contains("`a.a` is not an output"));
    assert!(err(&|n| n.inst("a", 0, Xor::new(0).ports)).contains("two instances named `a`"));
    // A block whose ports are not its instance's is refused too.
    let n = xor_net(false);
    let e = Sim::new(&n, |_| Box::new(RxParser::new(RxParserParams::new(64, 1024).unwrap()))).unwrap_err();
    assert!(e.to_string().contains("not the declared ones"), "{e}");
}

#[test]
fn slices_take_the_named_bits() {
    let v = Bits(vec![0xdead_beef_0000_0000, 0x1234]);
    assert_eq!(slice_bits(&v, 32, 32).as_u64(), 0xdead_beef);
    assert_eq!(slice_bits(&v, 60, 12).as_u64(), 0x34d);
    assert_eq!(slice_bits(&v, 64, 16).as_u64(), 0x1234);
}

/// Sets top input `name` (any width up to 128) in `ins`.
fn put(ports: &[PortDef], ins: &mut [Bits], name: &str, v: u128) {
    let i = ports.iter().position(|p| p.name == name).unwrap_or_else(|| panic!("no port {name}"));
    let mut b = Bits::zero(ports[i].width);
    b.0[0] = v as u64;
    if b.0.len() > 1 {
        b.0[1] = (v >> 64) as u64;
    }
    b.truncate(ports[i].width);
    ins[i] = b;
}

#[test]
fn rx_front_simulated_as_a_netlist_matches_the_blocks_wired_by_hand() {
    for cfg in [Config::builtin("small").unwrap(), Config::builtin("default").unwrap()] {
        let net = rx_front(&cfg).unwrap();
        let mut sim = Sim::new(&net, |i| model_block(i.kind, &cfg).unwrap()).unwrap();
        let rp = RxParserParams::from_config(&cfg).unwrap();
        let mut rx = RxParser::new(rp);
        let mut csr = Csr::new(CsrParams::from_config(&cfg).unwrap());
        let top = sim.ports().to_vec();
        let (rxd, csd) = (rx.ports().to_vec(), csr.ports().to_vec());
        let mut rng = Rng::new(cfg.hardware.datapath_bits as u64);
        let mut beats = std::collections::VecDeque::new();
        let (mut ins, mut out) = (zero_values(&top), zero_values(&top));
        let (mut rin, mut rout) = (zero_values(&rxd), zero_values(&rxd));
        let (mut cin, mut cout) = (zero_values(&csd), zero_values(&csd));
        let mut drops = 0;
        let mut icrc_sent = false;
        for cycle in 0..3000u64 {
            if beats.is_empty() {
                let s = if rng.chance(30) {
                    // Half of the faults are ICRC ones: the pulse the netlist
                    // wires. The first is one, so that a run of few faults
                    // (the frames are up to an MTU long, and a random
                    // register write may move the UDP port later) still
                    // shows the pulse.
                    let r = if !icrc_sent || rng.chance(50) {
                        icrc_sent = true;
                        Reason::Icrc
                    } else {
                        Reason::ALL[rng.below(Reason::ALL.len() as u64) as usize]
                    };
                    stimulus::faulty(&mut rng, r, rp.mtu, 4797, rp.bytes())
                } else {
                    stimulus::good(&mut rng, rp.mtu, 4797)
                };
                beats.extend(stimulus::beats(&s, rp.bytes(), &mut rng));
            }
            // Every top input random, the frame beats from the stimulus.
            for (i, p) in top.iter().enumerate() {
                if p.dir == mrnic_model::block::Dir::In {
                    let mut b = Bits::zero(p.width);
                    b.0.iter_mut().for_each(|w| *w = rng.next_u64());
                    b.truncate(p.width);
                    ins[i] = b;
                }
            }
            put(&top, &mut ins, "rst", (cycle < 2) as u128);
            // Rare register accesses, so the UDP port mostly stays the one the frames use.
            for v in ["s_axil_awvalid", "s_axil_wvalid", "s_axil_arvalid"] {
                put(&top, &mut ins, v, rng.chance(3) as u128);
            }
            let b: &mrnic_model::rx_parser::Beat = beats.front().expect("refilled");
            let mut d = Bits::zero(rp.data_bits);
            for (n, &x) in b.data.iter().enumerate() {
                d.0[n / 8] |= (x as u64) << (8 * (n % 8));
            }
            let di = top.iter().position(|p| p.name == "s_axis_tdata").unwrap();
            ins[di] = d;
            put(&top, &mut ins, "s_axis_tkeep", b.keep);
            put(&top, &mut ins, "s_axis_tlast", b.last as u128);
            put(&top, &mut ins, "s_axis_tuser", b.user as u128);
            // The same inputs by hand: top ports carry the block ports' names.
            let by_name = |defs: &[PortDef], vals: &mut Vec<Bits>, top_vals: &[Bits]| {
                for (i, p) in defs.iter().enumerate() {
                    if let Some(t) = top.iter().position(|q| q.name == p.name && q.dir == p.dir) {
                        if p.dir == mrnic_model::block::Dir::In {
                            vals[i] = top_vals[t].clone();
                        }
                    }
                }
            };
            by_name(&rxd, &mut rin, &ins);
            by_name(&csd, &mut cin, &ins);
            csr.eval(&cin, &mut cout);
            let udp = cout[csd.iter().position(|p| p.name == "cfg_udp_port").unwrap()].clone();
            rin[rxd.iter().position(|p| p.name == "cfg_udp_port").unwrap()] = udp;
            rx.eval(&rin, &mut rout);
            let icrc = rout[rxd.iter().position(|p| p.name == "stat_drop_icrc").unwrap()].clone();
            drops += icrc.as_u64();
            for (i, p) in csd.iter().enumerate() {
                if p.name.starts_with("stat_") {
                    cin[i] = Bits::from_u64(1, 0);
                }
                if p.name == "m_mr_ready" {
                    cin[i] = Bits::from_u64(1, 1);
                }
            }
            cin[csd.iter().position(|p| p.name == "stat_rx_bad_icrc").unwrap()] = icrc;
            csr.eval(&cin, &mut cout);
            sim.eval(&ins, &mut out);
            for (t, p) in top.iter().enumerate().filter(|(_, p)| p.dir == mrnic_model::block::Dir::Out) {
                let (defs, vals) = if rxd.iter().any(|q| q.name == p.name) { (&rxd, &rout) } else { (&csd, &cout) };
                let k = defs.iter().position(|q| q.name == p.name).unwrap();
                assert_eq!(out[t], vals[k], "{}: cycle {cycle}: {}", cfg.name, p.name);
            }
            let ready = rout[rxd.iter().position(|p| p.name == "s_axis_tready").unwrap()].bit(0);
            let valid = ins[top.iter().position(|p| p.name == "s_axis_tvalid").unwrap()].bit(0);
            if valid && ready && cycle >= 2 {
                beats.pop_front();
            }
            sim.tick(&ins);
            rx.tick(&rin);
            csr.tick(&cin);
        }
        assert!(drops > 0, "{}: the run dropped an ICRC frame", cfg.name);
    }
}

/// Every block a top can instantiate has each port name once (a block that
/// appends a field its neighbour's list already has would not wire), and
/// `model_ports` lists exactly the built block's ports.
#[test]
fn every_model_block_names_each_port_once() {
    use mrnic_model::mrnic_core::{BLOCKS, GLUE};
    for cfg in ["small", "default"] {
        let cfg = mrnic_proto::Config::builtin(cfg).unwrap();
        for name in BLOCKS.iter().chain(GLUE.iter()) {
            let b = mrnic_model::netlist::model_block(name, &cfg).unwrap();
            let ports = b.ports();
            for (k, p) in ports.iter().enumerate() {
                assert!(!ports[..k].iter().any(|o| o.name == p.name), "{name}: port `{}` twice", p.name);
            }
            // The netlists take their ports without building the block:
            // the same list, in the same order.
            let listed = mrnic_model::netlist::model_ports(name, &cfg).unwrap();
            assert_eq!(listed, ports, "{name}: model_ports differs from the built block's ports");
        }
    }
}
