//! Property tests of the latch analysis against a plain reference: a
//! combinational block is latch-free exactly when every path through its
//! if/else and case statements assigns the signal.

use mrnic_hdl::*;
use proptest::prelude::*;

/// Statement trees writing `y` from `a`, branching on `c` and `sel`.
fn tree(a: Signal, c: Signal, sel: Signal, y: Signal) -> impl Strategy<Value = Vec<Stmt>> {
    let leaf = prop_oneof![Just(Vec::new()), Just(vec![set(&y, &a)]), Just(vec![set(&y, lit(1, 1))]),];
    leaf.prop_recursive(4, 32, 4, move |inner| {
        let (c, sel) = (c.clone(), sel.clone());
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(move |(t, e)| vec![if_else(&c, t, e)]),
            (inner.clone(), inner.clone()).prop_map(|(x, y)| [x, y].concat()),
            (proptest::collection::vec(inner.clone(), 1..4), inner, any::<bool>()).prop_map(
                move |(arms, default, full)| {
                    // Distinct labels; either full coverage without default, or a default.
                    let n = if full { 4 } else { arms.len() };
                    let bodies = (0..n).map(|i| arms[i % arms.len()].clone());
                    let arms = bodies.enumerate().map(|(i, b)| (vec![lit(2, i as u64)], b)).collect();
                    vec![case(&sel, arms, (!full).then_some(default))]
                }
            ),
        ]
    })
}

fn assigns_on_every_path(body: &[Stmt]) -> bool {
    body.iter().any(|s| match s {
        Stmt::Assign { .. } => true,
        Stmt::If { then, els, .. } => assigns_on_every_path(then) && assigns_on_every_path(els),
        Stmt::Case { arms, default, .. } => {
            arms.iter().all(|a| assigns_on_every_path(&a.body))
                && default.as_ref().is_none_or(|d| assigns_on_every_path(d))
        }
    })
}

fn assigns_anywhere(body: &[Stmt]) -> bool {
    body.iter().any(|s| match s {
        Stmt::Assign { .. } => true,
        Stmt::If { then, els, .. } => assigns_anywhere(then) || assigns_anywhere(els),
        Stmt::Case { arms, default, .. } => {
            arms.iter().any(|a| assigns_anywhere(&a.body)) || default.as_ref().is_some_and(|d| assigns_anywhere(d))
        }
    })
}

fn signals() -> (Module, Signal, Signal, Signal, Signal) {
    let mut m = Module::new("prop");
    let a = m.input("a", 1, "");
    let c = m.input("c", 1, "");
    let sel = m.input("sel", 2, "");
    let y = m.output("y", 1, "");
    (m, a, c, sel, y)
}

proptest! {
    // A fixed seed keeps every run the same; a failure prints the case.
    #![proptest_config(ProptestConfig {
        cases: 512,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x006d_726e_6963),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn latch_iff_some_path_misses_the_assignment(body in {
        let (_, a, c, sel, y) = signals();
        tree(a, c, sel, y)
    }) {
        let (mut m, ..) = signals();
        m.comb(body.clone());
        let errs = match m.check() {
            Ok(()) => Vec::new(),
            Err(e) => e.0,
        };
        let latch = errs.iter().any(|e| matches!(e, CheckError::Latch { .. }));
        let expected = assigns_anywhere(&body) && !assigns_on_every_path(&body);
        prop_assert_eq!(latch, expected, "{:#?}\n{:?}", body, errs);
        // A latch-free block never reports an incomplete case either: the
        // generator only builds full cases or cases with a default.
        let incomplete = errs.iter().any(|e| matches!(e, CheckError::CaseIncomplete { .. }));
        prop_assert!(!incomplete, "{:?}", errs);
    }
}
