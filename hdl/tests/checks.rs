//! Each design rule has its own tests: a small module with exactly one defect,
//! and the specific error it must produce. A clean variant next to each shows
//! the rule does not fire on the legal form.

use mrnic_hdl::*;

fn errors(m: &Module) -> Vec<CheckError> {
    match m.check() {
        Ok(()) => Vec::new(),
        Err(e) => e.0,
    }
}

fn assert_clean(m: &Module) {
    if let Err(e) = m.check() {
        panic!("expected a clean module, got {e}");
    }
}

/// A module with a clock domain and one register, so tests can add logic
/// around a register without tripping other rules.
fn clocked(name: &str) -> (Module, Signal) {
    let mut m = Module::new(name);
    let clk = m.input("clk", 1, "clock");
    let rst = m.input("rst", 1, "reset");
    m.clock_domain(&clk, &rst);
    (m, rst)
}

// ---- widths ----

#[test]
fn width_assign_lhs_vs_rhs() {
    let mut m = Module::new("wid");
    let a = m.input("a", 8, "");
    let y = m.output("y", 9, "");
    m.assign(&y, &a);
    let errs = errors(&m);
    assert!(
        matches!(
            errs.as_slice(),
            [CheckError::WidthMismatch { module, net, expected: 9, found: 8, .. }]
                if module == "wid" && net == "y"
        ),
        "{errs:?}"
    );

    let mut ok = Module::new("wid");
    let a = ok.input("a", 8, "");
    let y = ok.output("y", 9, "");
    ok.assign(&y, zext(&a, 9));
    assert_clean(&ok);
}

#[test]
fn width_binary_operands_must_match() {
    let mut m = Module::new("wid");
    let a = m.input("a", 8, "");
    let b = m.input("b", 4, "");
    let y = m.output("y", 8, "");
    m.assign(&y, &a + &b);
    let errs = errors(&m);
    assert!(
        matches!(
            errs.as_slice(),
            [CheckError::OperandWidth { module, net, op, .. }]
                if module == "wid" && net == "y" && op == "+"
        ),
        "{errs:?}"
    );

    let mut m = Module::new("cmp");
    let a = m.input("a", 8, "");
    let y = m.output("y", 1, "");
    m.assign(&y, a.expr().eq(lit(4, 3)));
    let errs = errors(&m);
    assert!(matches!(errs.as_slice(), [CheckError::OperandWidth { op, .. }] if op == "=="), "{errs:?}");
}

#[test]
fn width_port_connection_vs_port() {
    let mut child = Module::new("child");
    let d = child.input("d", 4, "");
    let q = child.output("q", 4, "");
    child.assign(&q, &d);
    let sig = child.signature();

    let mut m = Module::new("parent");
    let a = m.input("a", 8, "");
    let y = m.output("y", 4, "");
    m.instance("u_child", &sig).connect("d", &a).connect("q", &y);
    let errs = errors(&m);
    assert!(
        matches!(
            errs.as_slice(),
            [CheckError::WidthMismatch { module, net, expected: 4, found: 8, .. }]
                if module == "parent" && net == "d"
        ),
        "{errs:?}"
    );
}

// ---- drivers ----

#[test]
fn driver_two_assigns() {
    let mut m = Module::new("drv");
    let a = m.input("a", 1, "");
    let b = m.input("b", 1, "");
    let y = m.output("y", 1, "");
    m.assign(&y, &a);
    m.assign(&y, &b);
    let errs = errors(&m);
    assert!(
        matches!(
            errs.as_slice(),
            [CheckError::MultipleDrivers { module, net, drivers }]
                if module == "drv" && net == "y" && drivers.len() == 2
        ),
        "{errs:?}"
    );
}

#[test]
fn driver_assign_and_always_block() {
    let mut m = Module::new("drv");
    let a = m.input("a", 1, "");
    let y = m.output("y", 1, "");
    m.assign(&y, &a);
    m.comb(vec![set(&y, !a.expr())]);
    let errs = errors(&m);
    assert!(
        matches!(
            errs.as_slice(),
            [CheckError::MultipleDrivers { net, drivers, .. }] if net == "y" && drivers.len() == 2
        ),
        "{errs:?}"
    );
}

#[test]
fn driver_two_always_blocks() {
    let mut m = Module::new("drv");
    let a = m.input("a", 1, "");
    let y = m.output("y", 1, "");
    m.comb(vec![set(&y, &a)]);
    m.comb(vec![set(&y, !a.expr())]);
    let errs = errors(&m);
    assert!(
        matches!(
            errs.as_slice(),
            [CheckError::MultipleDrivers { net, drivers, .. }] if net == "y" && drivers.len() == 2
        ),
        "{errs:?}"
    );
}

#[test]
fn driver_register_next_assigned_outside_next_state_block() {
    let (mut m, _) = clocked("drv");
    let a = m.input("a", 4, "");
    let y = m.output("y", 4, "");
    let r = m.reg("acc", 4, 0, "");
    m.assign(&r.next, &a);
    m.assign(&y, &r.q);
    let errs = errors(&m);
    assert!(matches!(errs.as_slice(), [CheckError::MultipleDrivers { net, .. }] if net == "acc_next"), "{errs:?}");
}

#[test]
fn driver_output_without_driver() {
    let mut m = Module::new("drv");
    let a = m.input("a", 1, "");
    let y = m.output("y", 1, "");
    let z = m.output("z", 1, "");
    m.assign(&y, &a);
    let _ = z;
    let errs = errors(&m);
    assert!(
        matches!(
            errs.as_slice(),
            [CheckError::Undriven { module, net, bits }]
                if module == "drv" && net == "z" && bits == "[0]"
        ),
        "{errs:?}"
    );
}

#[test]
fn driver_wire_partly_driven() {
    let mut m = Module::new("drv");
    let a = m.input("a", 4, "");
    let w = m.wire("w", 8, "");
    let y = m.output("y", 8, "");
    m.assign(w.lv_slice(3, 0), &a);
    m.assign(&y, &w);
    let errs = errors(&m);
    assert!(
        matches!(
            errs.as_slice(),
            [CheckError::Undriven { net, bits, .. }] if net == "w" && bits == "[7:4]"
        ),
        "{errs:?}"
    );

    // Disjoint parts from separate assigns are one driver per bit.
    let mut ok = Module::new("drv");
    let a = ok.input("a", 4, "");
    let w = ok.wire("w", 8, "");
    let y = ok.output("y", 8, "");
    ok.assign(w.lv_slice(3, 0), &a);
    ok.assign(w.lv_slice(7, 4), !a.expr());
    ok.assign(&y, &w);
    assert_clean(&ok);
}

#[test]
fn driver_input_driven_inside() {
    let mut m = Module::new("drv");
    let a = m.input("a", 1, "");
    let y = m.output("y", 1, "");
    m.assign(&a, lit(1, 0));
    m.assign(&y, &a);
    let errs = errors(&m);
    assert!(
        matches!(
            errs.as_slice(),
            [CheckError::InputDriven { module, net, .. }] if module == "drv" && net == "a"
        ),
        "{errs:?}"
    );
}

// ---- combinational loops ----

#[test]
fn loop_through_assigns() {
    let mut m = Module::new("lp");
    let a = m.input("a", 1, "");
    let x = m.wire("x", 1, "");
    let w = m.wire("w", 1, "");
    let y = m.output("y", 1, "");
    m.assign(&x, &a ^ &w);
    m.assign(&w, !x.expr());
    m.assign(&y, &x);
    let errs = errors(&m);
    assert!(
        matches!(
            errs.as_slice(),
            [CheckError::CombLoop { module, path }]
                if module == "lp" && path == &["x", "w", "x"]
        ),
        "{errs:?}"
    );
}

#[test]
fn loop_through_comb_block() {
    let mut m = Module::new("lp");
    let a = m.input("a", 1, "");
    let x = m.wire("x", 1, "");
    let w = m.wire("w", 1, "");
    let y = m.output("y", 1, "");
    m.comb(vec![set(&x, lit(1, 0)), if_then(&a, vec![set(&x, &w)])]);
    m.assign(&w, !x.expr());
    m.assign(&y, &x);
    let errs = errors(&m);
    assert!(matches!(errs.as_slice(), [CheckError::CombLoop { path, .. }] if path == &["x", "w", "x"]), "{errs:?}");
}

#[test]
fn loop_broken_by_register_is_fine() {
    let (mut m, _) = clocked("lp");
    let a = m.input("a", 1, "");
    let y = m.output("y", 1, "");
    let t = m.reg("toggle", 1, 0, "");
    m.next(if_then(&a, vec![set(&t.next, !t.q.expr())]));
    m.assign(&y, &t.q);
    assert_clean(&m);
}

#[test]
fn loop_through_instance() {
    // The child passes d to q combinationally, so feeding q back into d loops.
    let mut child = Module::new("inv");
    let d = child.input("d", 1, "");
    let q = child.output("q", 1, "");
    child.assign(&q, !d.expr());
    let sig = child.signature();
    assert_eq!(sig.comb_paths, vec![("d".to_string(), "q".to_string())]);

    let mut m = Module::new("ring");
    let y = m.output("y", 1, "");
    let n = m.wire("n", 1, "");
    m.instance("u_inv", &sig).connect("d", &n).connect("q", &n);
    m.assign(&y, &n);
    let errs = errors(&m);
    assert!(matches!(errs.as_slice(), [CheckError::CombLoop { path, .. }] if path == &["n", "n"]), "{errs:?}");
}

#[test]
fn read_after_assign_in_one_block_is_no_loop() {
    let mut m = Module::new("tmp");
    let a = m.input("a", 4, "");
    let s = m.wire("s", 4, "");
    let y = m.output("y", 4, "");
    m.comb(vec![set(&s, &a), if_then(a.bit(0), vec![set(&s, s.expr() + lit(4, 1))])]);
    m.assign(&y, &s);
    assert_clean(&m);
}

// ---- latches ----

#[test]
fn latch_if_without_else() {
    let mut m = Module::new("lat");
    let en = m.input("en", 1, "");
    let d = m.input("d", 4, "");
    let q = m.wire("q", 4, "");
    let y = m.output("y", 4, "");
    m.comb(vec![if_then(&en, vec![set(&q, &d)])]);
    m.assign(&y, &q);
    let errs = errors(&m);
    assert!(
        matches!(
            errs.as_slice(),
            [CheckError::Latch { module, net, .. }] if module == "lat" && net == "q"
        ),
        "{errs:?}"
    );

    let mut ok = Module::new("lat");
    let en = ok.input("en", 1, "");
    let d = ok.input("d", 4, "");
    let q = ok.wire("q", 4, "");
    let y = ok.output("y", 4, "");
    ok.comb(vec![if_else(&en, vec![set(&q, &d)], vec![set(&q, lit(4, 0))])]);
    ok.assign(&y, &q);
    assert_clean(&ok);
}

#[test]
fn latch_case_arm_missing_assignment() {
    let mut m = Module::new("lat");
    let sel = m.input("sel", 2, "");
    let a = m.input("a", 1, "");
    let y = m.output("y", 1, "");
    m.comb(vec![case(
        &sel,
        vec![(vec![lit(2, 0)], vec![set(&y, &a)]), (vec![lit(2, 1)], vec![])],
        Some(vec![set(&y, lit(1, 0))]),
    )]);
    let errs = errors(&m);
    assert!(matches!(errs.as_slice(), [CheckError::Latch { net, .. }] if net == "y"), "{errs:?}");
}

#[test]
fn case_without_default_is_rejected_unless_full() {
    let mut m = Module::new("cs");
    let sel = m.input("sel", 2, "");
    let a = m.input("a", 1, "");
    let y = m.output("y", 1, "");
    m.comb(vec![set(&y, lit(1, 0)), case(&sel, vec![(vec![lit(2, 0)], vec![set(&y, &a)])], None)]);
    let errs = errors(&m);
    assert!(matches!(errs.as_slice(), [CheckError::CaseIncomplete { selector, .. }] if selector == "sel"), "{errs:?}");

    let mut ok = Module::new("cs");
    let sel = ok.input("sel", 1, "");
    let a = ok.input("a", 1, "");
    let y = ok.output("y", 1, "");
    ok.comb(vec![case(
        &sel,
        vec![(vec![lit(1, 0)], vec![set(&y, &a)]), (vec![lit(1, 1)], vec![set(&y, !a.expr())])],
        None,
    )]);
    assert_clean(&ok);
}

// ---- the rest of the rules ----

#[test]
fn unused_bits_and_parameters() {
    let mut m = Module::new("un");
    m.param("SPARE", 3, "");
    let a = m.input("a", 8, "");
    let y = m.output("y", 4, "");
    m.assign(&y, a.slice(3, 0));
    let errs = errors(&m);
    assert!(
        matches!(
            errs.as_slice(),
            [CheckError::Unused { net, bits, .. }, CheckError::UnusedParam { param, .. }]
                if net == "a" && bits == "[7:4]" && param == "SPARE"
        ),
        "{errs:?}"
    );
}

#[test]
fn a_net_named_unused_sinks_bits_on_purpose() {
    // As Verilator's `--unused-regexp` (`*unused*`): the sink itself is not
    // reported, the bits it reads count as read.
    let mut m = Module::new("sink");
    let a = m.input("a", 8, "");
    let y = m.output("y", 4, "");
    m.assign(&y, a.slice(3, 0));
    m.wire_from("unused_high", 1, "", a.slice(7, 4).reduce_xor());
    assert!(m.check().is_ok(), "{:?}", m.check());
    m.wire_from("spare", 1, "", a.slice(0, 0));
    let errs = errors(&m);
    assert!(matches!(errs.as_slice(), [CheckError::Unused { net, .. }] if net == "spare"), "{errs:?}");
}

#[test]
fn names_are_legal_and_unique() {
    let mut m = Module::new("nm");
    let a = m.input("a$b", 1, "");
    let b = m.input("wire", 1, "");
    let c = m.input("a", 1, "");
    let y = m.output("a", 1, "");
    m.assign(&y, (&a ^ &b) ^ &c);
    let errs = errors(&m);
    let bad: Vec<&str> = errs
        .iter()
        .filter_map(|e| match e {
            CheckError::BadName { name, .. } | CheckError::DuplicateName { name, .. } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(bad, ["a$b", "wire", "a"], "{errs:?}");
}

#[test]
fn registers_need_a_clock_and_a_fitting_reset() {
    let mut m = Module::new("rg");
    let y = m.output("y", 2, "");
    let r = m.reg("r", 2, 5, "");
    m.assign(&y, &r.q);
    let errs = errors(&m);
    assert!(errs.iter().any(|e| matches!(e, CheckError::NoClock { .. })), "{errs:?}");
    assert!(
        errs.iter().any(|e| matches!(e, CheckError::ResetValue { net, value: 5, width: 2, .. } if net == "r_reg")),
        "{errs:?}"
    );
}

#[test]
fn select_of_expression_is_rejected() {
    let mut m = Module::new("sel");
    let a = m.input("a", 8, "");
    let y = m.output("y", 4, "");
    m.assign(&y, (&a + &a).slice(7, 4));
    let errs = errors(&m);
    assert!(matches!(errs.as_slice(), [CheckError::SelectOfExpression { net, .. }] if net == "y"), "{errs:?}");
}

#[test]
fn parameter_rule_checked_in_rust() {
    let mut m = Module::new("pr");
    let depth = m.param("DEPTH", 3, "");
    m.param_check("depth_even", (depth.expr() % 2u32).eq(0u32), "DEPTH must be even");
    let errs = errors(&m);
    assert!(
        matches!(errs.as_slice(), [CheckError::ParamCheckFailed { label, .. }] if label == "depth_even"),
        "{errs:?}"
    );
}

#[test]
fn instance_override_must_match_the_generated_child() {
    let mut child = Module::new("child");
    let w = child.param("W", 4, "");
    let d = child.input("d", &w, "");
    let q = child.output("q", &w, "");
    child.assign(&q, &d);
    let sig = child.signature();

    let mut m = Module::new("parent");
    let pw = m.param("W", 8, "");
    let a = m.input("a", 4, "");
    let y = m.output("y", 4, "");
    m.instance("u_child", &sig).param("W", &pw).connect("d", &a).connect("q", &y);
    let errs = errors(&m);
    assert!(matches!(errs.as_slice(), [CheckError::Instance { instance, .. }] if instance == "u_child"), "{errs:?}");
}

#[test]
fn memory_address_width_is_checked() {
    let (mut m, rst) = clocked("mem");
    let we = m.input("we", 1, "");
    let addr = m.input("addr", 3, "");
    let d = m.input("d", 8, "");
    let q = m.output("q", 8, "");
    let mem = m.memory("tbl", 8, 16, MemStyle::Distributed, "");
    assert_eq!(mem.addr_width(), 4);
    m.mem_write(&mem, &we, &addr, &d);
    let rd = m.mem_read(&mem, "tbl_rd_data", !rst.expr(), zext(&addr, 4));
    m.assign(&q, &rd);
    let errs = errors(&m);
    assert!(
        matches!(
            errs.as_slice(),
            [CheckError::WidthMismatch { net, expected: 4, found: 3, .. }] if net == "tbl_mem"
        ),
        "{errs:?}"
    );
}

#[test]
fn errors_read_well() {
    let mut m = Module::new("drv");
    let a = m.input("a", 1, "");
    let y = m.output("y", 1, "");
    m.assign(&y, &a);
    m.comb(vec![set(&y, !a.expr())]);
    let text = m.check().unwrap_err().to_string();
    assert!(text.contains("module `drv`"), "{text}");
    assert!(text.contains("`y` has more than one driver"), "{text}");
}
