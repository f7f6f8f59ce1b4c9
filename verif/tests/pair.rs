//! The back-to-back bench of two model tops (`mrnic bench model`): WRITEs
//! both ways complete once each with success and land bit-exact, and the
//! landing check catches a wrong byte.

use mrnic_proto::Config;
use mrnic_verif::pair::Pair;

#[test]
fn writes_both_ways_complete_and_land() {
    let cfg = Config::builtin("small").unwrap();
    let mut pair = Pair::new(&cfg, 4, 2, 7).unwrap();
    for _ in 0..6000 {
        pair.step(true).unwrap();
    }
    pair.finish(400_000).unwrap();
    let s = pair.stats.clone();
    assert!(s.completed >= 16 && s.completed == s.posted, "{s:?}");
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
