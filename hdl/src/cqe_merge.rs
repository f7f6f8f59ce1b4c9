//! `cqe_merge` RTL: the generator of the glue block
//! [`mrnic_model::cqe_merge`], with the same ports (the model's list plus
//! `clk`) and the same cycle timing: a register FIFO of [`DEPTH`] entries
//! that takes up to two completions per cycle (both `ready`s high while
//! the count leaves room for two), the side that went second last time
//! first when both come together, and the head on `m_cqe_*` (zero while
//! empty).

use mrnic_model::cpl_engine::ParamError;
use mrnic_model::cqe_merge::{self as model, CqeMergeParams, DEPTH};

use crate::expr::{lit, mux, zext, Expr, Signal};
use crate::ir::{case, if_then, set, Module};
use crate::ports::{declare, offsets, pack};

crate::block_api!(mrnic_model::cqe_merge, CqeMergeParams, ParamError);

/// `e` (of `from` bits) made `to` bits wide: its low bits, or zero-extended.
fn fit(e: Expr, from: u32, to: u32) -> Expr {
    if from > to {
        e.slice(to - 1, 0)
    } else if from < to {
        zext(e, to)
    } else {
        e
    }
}

fn build(p: &CqeMergeParams) -> Module {
    let depth = DEPTH as u32;
    let fb = depth.trailing_zeros();
    let out_fields = p.out_fields();
    let width: u32 = out_fields.iter().map(|f| f.1).sum();

    let mut m = Module::new(model::NAME);
    m.describe("one host completion queue: send and receive completions in handshake order");
    let (clk, sig) = declare(&mut m, &model::ports(p));
    let port = |n: &str| sig[n].clone();
    let rst = port("rst");
    m.clock_domain(&clk, &rst);

    // A side's record in the merged layout; `imm` is zero without imm_valid
    // (the model keeps an immediate only when it is valid).
    let entry = |side: &str, fields: &[(&'static str, u32, &'static str)]| -> Expr {
        pack(&out_fields, |n| {
            let (_, from, _) = fields.iter().find(|f| f.0 == n).unwrap_or_else(|| panic!("{side}: no field {n}"));
            let to = out_fields.iter().find(|f| f.0 == n).map(|f| f.1).unwrap_or_default();
            let v = fit(port(&format!("{side}_{n}")).expr(), *from, to);
            if n == "imm" {
                mux(port(&format!("{side}_imm_valid")), v, lit(to, 0))
            } else {
                v
            }
        })
    };
    let tx = m.wire_from("tx_entry", width, "the send completion offered", entry("s_tx", &p.tx_fields()));
    let rx = m.wire_from("rx_entry", width, "the receive completion offered", entry("s_rx", &p.rx_fields));

    let count = m.reg("count", fb + 1, 0, "entries in the FIFO");
    let wr = m.reg("wr", fb, 0, "slot the next entry goes to");
    let rd = m.reg("rd", fb, 0, "slot of the head entry");
    let rx_first = m.reg("rx_first", 1, 0, "when both come together, the receive goes first");
    let slots: Vec<crate::Reg> = (0..depth).map(|j| m.reg_no_reset(&format!("slot{j}"), width, "FIFO slot")).collect();

    let ready = m.wire_from(
        "room_for_two",
        1,
        "both inputs may hand one over",
        count.q.expr().le(lit(fb + 1, u64::from(depth - 2))),
    );
    m.assign(port("s_tx_ready"), &ready);
    m.assign(port("s_rx_ready"), &ready);
    let tx_in = m.wire_from("tx_take", 1, "a send completion enters", port("s_tx_valid").expr().logic_and(&ready));
    let rx_in = m.wire_from("rx_take", 1, "a receive completion enters", port("s_rx_valid").expr().logic_and(&ready));
    let both = m.wire_from("both_take", 1, "both enter this cycle", tx_in.expr().logic_and(&rx_in));
    let valid = m.wire_from("head_valid", 1, "the FIFO holds an entry", count.q.expr().ne(lit(fb + 1, 0)));
    let pop = m.wire_from("pop", 1, "the head leaves", valid.expr().logic_and(port("m_cqe_ready")));

    // The first entry written this cycle and the second (both only).
    let first = m.wire_from(
        "first_entry",
        width,
        "the entry at wr",
        mux(both.expr().logic_and(&rx_first.q), &rx, mux(&tx_in, &tx, &rx)),
    );
    let second = m.wire_from("second_entry", width, "the entry at wr + 1 when both enter", mux(&rx_first.q, &tx, &rx));
    let pushes = m.wire_from(
        "pushes",
        fb + 1,
        "entries entering this cycle (0..2)",
        zext(&tx_in, fb + 1) + zext(&rx_in, fb + 1),
    );
    let write_at = |at: Expr, e: &Signal| {
        case(
            at,
            (0..depth).map(|j| (vec![lit(fb, u64::from(j))], vec![set(&slots[j as usize].next, e)])).collect(),
            None,
        )
    };
    m.next(if_then(tx_in.expr().logic_or(&rx_in), vec![write_at(wr.q.expr(), &first)]));
    m.next(if_then(
        &both,
        vec![write_at(wr.q.expr() + lit(fb, 1), &second), set(&rx_first.next, rx_first.q.expr().logic_not())],
    ));
    m.next(set(&wr.next, wr.q.expr() + pushes.slice(fb - 1, 0)));
    m.next(if_then(&pop, vec![set(&rd.next, rd.q.expr() + lit(fb, 1))]));
    m.next(set(&count.next, count.q.expr() + &pushes - zext(&pop, fb + 1)));

    let head = m.wire("head", width, "the FIFO's head entry");
    m.comb(vec![case(
        &rd.q,
        (0..depth).map(|j| (vec![lit(fb, u64::from(j))], vec![set(&head, &slots[j as usize].q)])).collect(),
        None,
    )]);
    let shown = m.wire_from("shown", width, "the head entry, zero while empty", mux(&valid, &head, lit(width, 0)));
    m.assign(port("m_cqe_valid"), &valid);
    let off = offsets(&out_fields);
    for (n, _, _) in &out_fields {
        let (o, w) = off[n];
        m.assign(port(&format!("m_cqe_{n}")), shown.slice(o + w - 1, o));
    }
    // The FIFO's pointers agree with its count (k-induction starts from
    // no state where they do not), then the interface rules.
    crate::formal::fifo_invariants(&mut m, "cqe", depth, &count.q, &wr.q, &rd.q, None);
    crate::formal::every_channel(&mut m, &rst);
    m
}

/// How the properties of [`generate`]'s module are checked: a glue
/// block's, [`crate::proof::handshake_tasks`].
pub use crate::proof::handshake_tasks as formal_tasks;
