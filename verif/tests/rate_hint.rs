//! `rate_hint` (small): the model and the generated RTL in lockstep, every
//! output compared every cycle, over the traffic of
//! `verif/src/blocks/rate_hint.rs`; and a proptest over seeds and rates.

mod common;

random_and_proptest!("rate_hint", 0x91e0_0002, |cov| {
    // Every hint value is new once: the bin counts distinct hints, and
    // connections coming and expiring make at least six.
    let n = cov.count("hint: a value not seen before");
    assert!(n >= 6, "{n} distinct hints\n{cov}");
});
