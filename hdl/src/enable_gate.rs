//! `enable_gate` RTL: the generator of the glue block
//! [`mrnic_model::enable_gate`], with the model's ports plus `clk` and its
//! timing: valid, ready and data pass through in the same cycle, gated by a
//! decision that is a register inside a frame (or an offered request) and
//! `cfg_enable` at a frame's first offer; `stat_rx_disabled` is a register.

use mrnic_model::enable_gate::{self as model, EnableGateParams, ParamError};

use crate::expr::{lit, mux, Signal};
use crate::formal::implies;
use crate::ir::{if_else, if_then, set, Module};
use crate::ports::declare;

crate::block_api!(mrnic_model::enable_gate, EnableGateParams, ParamError);

fn build(p: &EnableGateParams) -> Module {
    let mut m = Module::new(model::NAME);
    m.describe("CONTROL.enable where traffic enters: MAC frames passed or discarded whole, work requests held");
    let defs = model::ports(p);
    let (clk, sig) = declare(&mut m, &defs);
    let port = |n: &str| sig[n].clone();
    let rst = port("rst");
    m.clock_domain(&clk, &rst);
    let enable = port("cfg_enable");

    // Every input field of the two channels goes straight through; the
    // valids are gated (the model's `pass`).
    let passed = |d: &&mrnic_model::block::PortDef| {
        d.dir == mrnic_model::block::Dir::In
            && (d.name.starts_with("s_axis_") || d.name.starts_with("s_wr_"))
            && !["s_axis_tvalid", "s_wr_valid"].contains(&d.name.as_str())
    };
    for d in defs.iter().filter(passed) {
        m.assign(port(&format!("m{}", &d.name[1..])), port(&d.name));
    }

    // ---- MAC receive: a frame passed or discarded whole ----
    let rx_held = m.reg("rx_held", 1, 0, "a frame is under way: its first beat offered, its last not taken");
    let rx_pass = m.reg("rx_pass", 1, 0, "the choice made for the frame under way");
    let rx_on = m.wire_from(
        "rx_on",
        1,
        "frames pass this cycle: the frame's choice inside one, the enable at a first offer",
        mux(&rx_held.q, &rx_pass.q, &enable),
    );
    let s_tvalid = port("s_axis_tvalid");
    m.assign(port("m_axis_tvalid"), s_tvalid.expr().logic_and(&rx_on));
    // A discarded beat is taken at once: the MAC never waits for a core
    // that is off.
    let s_tready = m.wire_from(
        "rx_ready",
        1,
        "the MAC's beat is taken if offered: by rx_parser, or discarded",
        rx_on.expr().logic_not().logic_or(port("m_axis_tready")),
    );
    m.assign(port("s_axis_tready"), &s_tready);
    let taken = m.wire_from("rx_taken", 1, "a MAC beat is taken", s_tvalid.expr().logic_and(&s_tready));
    let ends = m.wire_from("rx_ends", 1, "a frame's last beat is taken", taken.expr().logic_and(port("s_axis_tlast")));
    m.next(if_then(&s_tvalid, vec![set(&rx_held.next, ends.expr().logic_not()), set(&rx_pass.next, &rx_on)]));
    let stat = m.reg("stat", 1, 0, "pulse: a discarded frame's last beat was taken");
    m.next(set(&stat.next, ends.expr().logic_and(rx_on.expr().logic_not())));
    m.assign(port("stat_rx_disabled"), &stat.q);

    // ---- Work requests: held, never dropped ----
    let wr_held = m.reg("wr_held", 1, 0, "a request offered to tx_engine and not yet taken");
    let wr_on = m.wire_from(
        "wr_on",
        1,
        "requests pass: the enable, or one already offered",
        wr_held.q.expr().logic_or(&enable),
    );
    let m_wr_valid =
        m.wire_from("wr_valid", 1, "the request offered to tx_engine", port("s_wr_valid").expr().logic_and(&wr_on));
    m.assign(port("m_wr_valid"), &m_wr_valid);
    m.assign(port("s_wr_ready"), wr_on.expr().logic_and(port("m_wr_ready")));
    m.next(set(&wr_held.next, m_wr_valid.expr().logic_and(port("m_wr_ready").expr().logic_not())));

    crate::formal::every_channel(&mut m, &rst);
    whole_frames(&mut m, [&rx_held.q, &rx_pass.q], [&taken, &ends, &rx_on], &rst);
    m
}

/// A frame is never cut: once one of its beats has gone to rx_parser, every
/// later beat of it does too (none is discarded, none is held back from
/// rx_parser's ready), and once one of its beats has been discarded, none
/// reaches rx_parser. Two ghost flags follow the frame under way by the
/// beats taken; the invariants tie them to the gate's registers, which is
/// what lets induction close.
fn whole_frames(m: &mut Module, [held, pass]: [&Signal; 2], [taken, ends, on]: [&Signal; 3], rst: &Signal) {
    let passing = m.formal_wire("f_passing", 1, "ghost: beats of the frame under way went to rx_parser");
    let dropping = m.formal_wire("f_dropping", 1, "ghost: beats of the frame under way were discarded");
    let not_ended = taken.expr().logic_and(ends.expr().logic_not());
    m.formal_seq(vec![if_else(
        rst,
        vec![set(&passing, lit(1, 0)), set(&dropping, lit(1, 0))],
        vec![
            if_then(ends, vec![set(&passing, lit(1, 0)), set(&dropping, lit(1, 0))]),
            if_then(not_ended.clone().logic_and(on), vec![set(&passing, lit(1, 1))]),
            if_then(not_ended.logic_and(on.expr().logic_not()), vec![set(&dropping, lit(1, 1))]),
        ],
    )]);
    let tvalid = crate::formal::port(m, "s_axis_tvalid");
    let m_tvalid = crate::formal::port(m, "m_axis_tvalid");
    let m_tready = crate::formal::port(m, "m_axis_tready");
    let s_tready = crate::formal::port(m, "s_axis_tready");
    m.assert(
        "a_gate_passing_is_held",
        "inside a passed frame the gate holds the choice to pass",
        implies(&passing, held.expr().logic_and(pass)),
    );
    m.assert(
        "a_gate_dropping_is_held",
        "inside a discarded frame the gate holds the choice to discard",
        implies(&dropping, held.expr().logic_and(pass.expr().logic_not())),
    );
    m.assert(
        "a_gate_frame_not_cut",
        "inside a passed frame every beat offered goes to rx_parser, taken when rx_parser takes it",
        implies(&passing, m_tvalid.expr().eq(&tvalid).logic_and(s_tready.expr().eq(&m_tready))),
    );
    m.assert(
        "a_gate_discard_whole",
        "inside a discarded frame nothing reaches rx_parser and the MAC is never held",
        implies(&dropping, m_tvalid.expr().logic_not().logic_and(&s_tready)),
    );
    m.assert(
        "a_gate_one_choice",
        "a frame is never both passed and discarded",
        passing.expr().logic_and(&dropping).logic_not(),
    );
    m.cover(
        "c_gate_discarded_frame",
        "a frame of two or more beats is discarded whole",
        dropping.expr().logic_and(ends.expr()),
    );
    m.cover(
        "c_gate_passed_frame_across_a_disable",
        "a passed frame's last beat goes to rx_parser while the enable is off",
        passing.expr().logic_and(ends.expr()).logic_and(crate::formal::port(m, "cfg_enable").expr().logic_not()),
    );
}

/// How the properties of [`generate`]'s module are checked: a glue
/// block's, [`crate::proof::handshake_tasks`].
pub use crate::proof::handshake_tasks as formal_tasks;
