//! The back-to-back bench of two model tops (`mrnic bench model`): WRITEs,
//! SENDs and both with immediate data, both ways, complete once each with
//! success, every receive completes once with its sender's length,
//! immediate and bytes, WRITEs land bit-exact, and the landing check
//! catches a wrong byte.

use std::collections::{BTreeMap, VecDeque};

use mrnic_model::tx_engine::op;
use mrnic_proto::Config;
use mrnic_reference::channel::{Channel, Lane, Routing};
use mrnic_reference::sim::Sim;
use mrnic_reference::{Access, ConnParams, CqOpcode, Nic, NicConfig, RecvRequest, Sge, Status, WorkRequest, WrOp};
use mrnic_verif::pair::{first_difference, Given, Pair};

#[test]
fn every_opcode_both_ways_completes_and_lands() {
    let cfg = Config::builtin("small").unwrap();
    let mut pair = Pair::new(&cfg, 4, 2, 7).unwrap();
    for _ in 0..6000 {
        pair.step(true).unwrap();
    }
    pair.finish(400_000).unwrap();
    let s = pair.stats.clone();
    assert!(s.completed >= 16 && s.completed == s.posted, "{s:?}");
    // The mix: WRITEs, SENDs and WRITEs with immediate data; each of the
    // last two consumed one receive, checked and posted again.
    assert!(s.sends > 0 && s.write_imms > 0 && s.completed > s.sends + s.write_imms, "{s:?}");
    assert_eq!(s.received, s.sends + s.write_imms, "{s:?}");
    // Data one way, SACKs the other, both ways: more frames than WRITEs.
    assert!(s.frames > s.completed, "{s:?}");
    // A byte of a landed WRITE changed behind the NICs' backs is caught.
    let (at, len) =
        (0..4).flat_map(|c| (0..2).map(move |k| (c, k))).map(|(c, k)| pair.landing(0, c, k)).find(|l| l.1 > 0).unwrap();
    let b = pair.rig(1).memory().read(at + len - 1, 1)[0];
    pair.rig(1).memory().write(at + len - 1, &[b ^ 0x40]);
    let e = pair.check_landed().unwrap_err();
    assert!(e.contains("differs at NIC 2"), "{e}");
}

/// The same work with frames lost between the two model tops (1%, 5% and 10%,
/// data and acknowledgements alike): the model's recovery (SACK holes,
/// RACK, RTOs, tail PROBEs, NACKs) completes every request and every
/// claimed receive once, with success, and every WRITE lands bit-exact.
#[test]
fn loss_between_the_tops_is_recovered() {
    let cfg = Config::builtin("small").unwrap();
    for (seed, ppm) in [(21, 10_000), (22, 50_000), (23, 100_000)] {
        let mut pair = Pair::new(&cfg, 4, 2, seed).unwrap();
        pair.lose(ppm, seed ^ 0x1055);
        for _ in 0..30_000 {
            pair.step(true).unwrap();
        }
        pair.finish(2_000_000).unwrap_or_else(|e| panic!("seed {seed}, {ppm} ppm lost: {e}\n{:?}", pair.stats));
        let s = pair.stats.clone();
        assert!(s.lost > 0 && s.completed >= 16 && s.completed == s.posted, "seed {seed}: {s:?}");
        assert_eq!(s.received, s.sends + s.write_imms, "seed {seed}: {s:?}");
        println!("seed {seed}, {ppm} ppm: {s:?}");
    }
}

/// Frames sent twice and frames overtaken by later ones (held back up to
/// 2,000 cycles), with some loss: duplicates are recognised, reordering is
/// not taken for loss beyond a retransmission, and everything completes
/// once, bit-exact.
#[test]
fn duplicated_and_reordered_frames_are_harmless() {
    let cfg = Config::builtin("small").unwrap();
    for (seed, dup, delay) in [(31, 20_000, 50_000), (32, 100_000, 100_000)] {
        let mut pair = Pair::new(&cfg, 4, 2, seed).unwrap();
        pair.lose(10_000, seed ^ 0xd0b);
        pair.disturb(dup, delay);
        for _ in 0..30_000 {
            pair.step(true).unwrap();
        }
        pair.finish(2_000_000).unwrap_or_else(|e| panic!("seed {seed}: {e}\n{:?}", pair.stats));
        let s = pair.stats.clone();
        assert!(s.duplicated > 0 && s.delayed > 0 && s.completed >= 16 && s.completed == s.posted, "{s:?}");
        assert_eq!(s.received, s.sends + s.write_imms, "seed {seed}: {s:?}");
        println!("seed {seed}: {s:?}");
    }
}

#[test]
fn bad_sizes_are_refused() {
    let cfg = Config::builtin("small").unwrap();
    assert!(Pair::new(&cfg, 0, 1, 1).is_err());
    assert!(Pair::new(&cfg, cfg.transport.connections + 1, 1, 1).is_err());
    assert!(Pair::new(&cfg, 1, 0, 1).is_err());
}

/// The work both model NICs were given, replayed on two reference NICs
/// over a lossless channel: every request and every receive completes
/// with success (as many completions as the model had), and both NICs'
/// regions end byte for byte as the model's did (the WRITEs' landing
/// slots, the SENDs' receive buffers). The receive completions' order,
/// lengths and immediates are the model's own checks (`Pair::received`).
/// The model ran with random backpressure and idle cycles on its host
/// interfaces; the reference with its own timing: the outcome must not
/// depend on either.
#[test]
fn the_pair_ends_as_the_reference_does() {
    for (seed, conns, per_conn) in [(11, 4, 2), (12, 2, 4), (13, 8, 1)] {
        ends_as_the_reference(seed, conns, per_conn);
    }
}

fn ends_as_the_reference(seed: u64, conns: u32, per_conn: u32) {
    let cfg = Config::builtin("small").unwrap();
    let mut pair = Pair::new(&cfg, conns, per_conn, seed).unwrap();
    for _ in 0..6000 {
        pair.step(true).unwrap();
    }
    pair.finish(400_000).unwrap();
    let s = pair.stats.clone();
    assert!(s.sends > 0 && s.write_imms > 0, "seed {seed}: {s:?}");

    let (base, len) = pair.region();
    let half = pair.half();
    let recvs = (per_conn as usize).min(cfg.hardware.recv_queue_depth as usize);
    let mut nics = Vec::new();
    let mut rkeys = Vec::new();
    for side in 0..2usize {
        let addr = side as u32 + 1;
        let mut n = Nic::new(NicConfig::new(cfg.clone(), addr, 100 + addr as u64));
        rkeys.push(n.reg_mr(base, len, Access::ALL).unwrap());
        let src = pair.rig(side).memory().read(base, half as usize);
        n.write_mem(base, &src).unwrap();
        for c in 0..conns {
            let paths = cfg.transport.paths_per_conn as u8;
            n.create_conn(ConnParams { local_id: c, remote_id: c, remote: 3 - addr, paths, tx_psn: 0, rx_psn: 0 })
                .unwrap();
        }
        nics.push(n);
    }
    let lanes = (0..cfg.transport.planes).map(|_| Lane::default()).collect();
    let mut sim = Sim::new(nics, Channel::new(seed, lanes, Routing::ByPlane));
    // Requests all at once; receives as the model posted them: the first
    // `recvs` of each lane now, each later one when a receive of its lane
    // completes (the model posted it again only then).
    let mut later: Vec<BTreeMap<(u32, u32), VecDeque<RecvRequest>>> = vec![BTreeMap::new(), BTreeMap::new()];
    let mut expect = [0usize; 2];
    for side in 0..2usize {
        let mut first: BTreeMap<(u32, u32), usize> = BTreeMap::new();
        for g in pair.given(side).to_vec() {
            match g {
                Given::Request { conn, stream, op: o, wr_id, laddr, len, raddr, imm } => {
                    let write = o == op::WRITE || o == op::WRITE_IMM;
                    let wr = WorkRequest {
                        wr_id,
                        op: if write { WrOp::Write { remote_addr: raddr, rkey: rkeys[1 - side] } } else { WrOp::Send },
                        imm: (o == op::WRITE_IMM || o == op::SEND_IMM).then_some(imm),
                        local: Sge { addr: laddr, len },
                    };
                    sim.nics[side].post_send(conn, stream as u8, wr).unwrap();
                    expect[side] += 1;
                    expect[1 - side] += usize::from(o != op::WRITE);
                }
                Given::Recv { conn, stream, addr, len, wr_id } => {
                    let r = RecvRequest { wr_id, addr, len: len as u32 };
                    let n = first.entry((conn, stream)).or_default();
                    if *n < recvs {
                        *n += 1;
                        sim.nics[side].post_recv(conn, stream as u8, r).unwrap();
                    } else {
                        later[side].entry((conn, stream)).or_default().push_back(r);
                    }
                }
            }
        }
    }
    let mut seen = [0usize; 2];
    while seen != expect {
        sim.run_until(u64::MAX, 10_000_000, |s| (0..2).any(|i| s.completions[i].len() > seen[i]));
        let before = seen;
        for side in 0..2 {
            for c in sim.completions[side][seen[side]..].iter().copied() {
                assert_eq!(c.status, Status::Success, "NIC {}: {c:?}", side + 1);
                if matches!(c.opcode, CqOpcode::Recv | CqOpcode::RecvRdmaWithImm) {
                    if let Some(r) = later[side].get_mut(&(c.conn, c.stream as u32)).and_then(VecDeque::pop_front) {
                        sim.nics[side].post_recv(c.conn, c.stream, r).unwrap();
                    }
                }
            }
            seen[side] = sim.completions[side].len();
        }
        assert!(seen != before, "the reference stopped with {seen:?} of {expect:?} completions");
    }
    for side in 0..2usize {
        let model = pair.rig(side).memory().read(base, len as usize);
        // Not two blank regions: the peer's WRITEs and SENDs are there.
        let landed = model[half as usize..].iter().filter(|&&b| b != 0).count();
        assert!(landed > 1000, "seed {seed}, NIC {}: only {landed} bytes landed", side + 1);
        let reference = sim.nics[side].read_mem(base, len).unwrap();
        if let Some(i) = first_difference(&model, reference) {
            panic!(
                "seed {seed}, NIC {}: byte {:#x} of the region is {:#04x} in the model, {:#04x} in the reference",
                side + 1,
                base + i as u64,
                model[i],
                reference[i]
            );
        }
    }
}
