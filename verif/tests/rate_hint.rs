//! `rate_hint` (small, and a random session on default): the model and the
//! generated RTL in lockstep, every output compared every cycle, over the
//! traffic of `verif/src/blocks/rate_hint.rs`; and a proptest over seeds
//! and rates.

mod common;

/// Every hint value is new once: the bin counts distinct hints, and
/// connections coming and expiring make at least six.
fn distinct_hints(cov: &mrnic_verif::Coverage) {
    let n = cov.count("hint: a value not seen before");
    assert!(n >= 6, "{n} distinct hints\n{cov}");
}

random_and_proptest!("rate_hint", 0x91e0_0002, distinct_hints);
default_random!("rate_hint", 0x91e0_1002, 40_000, [], distinct_hints);
