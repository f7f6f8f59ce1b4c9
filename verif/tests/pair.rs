//! The back-to-back bench of two model tops (`mrnic bench model`): WRITEs,
//! SENDs and both with immediate data, both ways, complete once each with
//! success, every receive completes once with its sender's length,
//! immediate and bytes, WRITEs land bit-exact, and the landing check
//! catches a wrong byte.

use mrnic_proto::Config;
use mrnic_verif::pair::Pair;

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

#[test]
fn bad_sizes_are_refused() {
    let cfg = Config::builtin("small").unwrap();
    assert!(Pair::new(&cfg, 0, 1, 1).is_err());
    assert!(Pair::new(&cfg, cfg.transport.connections + 1, 1, 1).is_err());
    assert!(Pair::new(&cfg, 1, 0, 1).is_err());
}
