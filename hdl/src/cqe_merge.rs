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
    let fifo = Fifo { count: &count.q, rd: &rd.q, slots: &slots, head: &head, tx: &tx, rx: &rx, rx_first: &rx_first.q };
    order_properties(&mut m, &fifo, [&tx_in, &rx_in, &pop], &rst);
    m
}

/// The FIFO as the order properties see it.
struct Fifo<'a> {
    count: &'a Signal,
    rd: &'a Signal,
    slots: &'a [crate::Reg],
    head: &'a Signal,
    tx: &'a Signal,
    rx: &'a Signal,
    rx_first: &'a Signal,
}

/// No completion is lost, doubled or altered, and they leave in handshake
/// order: completions are numbered as they are taken (by a ghost count;
/// when both sides hand one over in one cycle, the side that went second
/// the last time is numbered first), and the completion numbered `f_k`
/// (any) is the one on `m_cqe` when `f_k` completions have left before it.
/// The invariants that make it inductive: the count is the number taken
/// minus the number left, and while completion `f_k` is inside, the slot
/// it is in holds it.
fn order_properties(m: &mut Module, f: &Fifo, [tx_in, rx_in, pop]: [&Signal; 3], rst: &Signal) {
    const NB: u32 = 8;
    let (width, depth) = (f.tx.width(), f.slots.len() as u32);
    let fb = depth.trailing_zeros();
    let cw = f.count.width();
    let k = m.formal_anyconst("f_k", NB, "the tracked completion's number");
    let taken = m.formal_wire("f_taken", NB, "ghost: completions taken since reset (mod 256)");
    let left = m.formal_wire("f_left", NB, "ghost: completions that left since reset (mod 256)");
    let rx_goes_first = m.formal_wire("f_rx_first", 1, "ghost: when both come together, the receive is numbered first");
    let tracked = m.formal_wire("f_tracked", width, "ghost: the tracked completion, as taken");
    let both = tx_in.expr().logic_and(rx_in);
    // This cycle's first number goes to the receive when it comes alone or
    // goes first; the second (both only) to the other.
    let rx_is_first = rx_in.expr().logic_and(tx_in.expr().logic_not().logic_or(&rx_goes_first));
    let first_entry = mux(rx_is_first.clone(), f.rx, f.tx);
    let second_entry = mux(rx_is_first, f.tx, f.rx);
    let n = zext(tx_in, NB) + zext(rx_in, NB);
    m.formal_seq(vec![crate::ir::if_else(
        rst,
        vec![set(&taken, lit(NB, 0)), set(&left, lit(NB, 0)), set(&rx_goes_first, lit(1, 0))],
        vec![
            set(&taken, taken.expr() + n),
            if_then(pop, vec![set(&left, left.expr() + lit(NB, 1))]),
            if_then(both.clone(), vec![set(&rx_goes_first, rx_goes_first.expr().logic_not())]),
            if_then(tx_in.expr().logic_or(rx_in).logic_and(taken.expr().eq(&k)), vec![set(&tracked, first_entry)]),
            if_then(both.logic_and((taken.expr() + lit(NB, 1)).eq(&k)), vec![set(&tracked, second_entry)]),
        ],
    )]);
    m.assert("a_cqe_alternation", "the ghost's turn for a pair is the FIFO's", rx_goes_first.expr().eq(f.rx_first));
    m.assert(
        "a_cqe_count_is_taken_minus_left",
        "the FIFO holds the completions taken and not yet left",
        zext(f.count, NB).eq(taken.expr() - &left),
    );
    let ahead = m.formal_wire("f_ahead", NB, "completions to leave before the tracked one");
    m.formal_assign(&ahead, k.expr() - &left);
    let inside = ahead.expr().lt(zext(f.count, NB));
    let at = m.formal_wire("f_at", width, "the slot the tracked completion is in, when inside");
    let slot = f.rd.expr() + ahead.slice(fb - 1, 0);
    m.formal_comb(vec![case(
        slot,
        (0..depth).map(|j| (vec![lit(fb, u64::from(j))], vec![set(&at, &f.slots[j as usize].q)])).collect(),
        None,
    )]);
    m.assert(
        "a_cqe_tracked_in_place",
        "while the tracked completion is inside, its slot holds it as it was taken",
        crate::formal::implies(inside, at.expr().eq(&tracked)),
    );
    m.assert(
        "a_cqe_leaves_in_order",
        "the completion on m_cqe is the one numbered by the completions that left before it: none lost, doubled or altered, in handshake order",
        crate::formal::implies(
            f.count.expr().ne(lit(cw, 0)).logic_and(k.expr().eq(&left)),
            f.head.expr().eq(&tracked),
        ),
    );
    m.cover("c_cqe_tracked_out", "a completion after the first is on m_cqe as tracked", {
        f.count.expr().ne(lit(cw, 0)).logic_and(k.expr().eq(&left)).logic_and(k.expr().ne(lit(NB, 0)))
    });
}

/// How the properties of [`generate`]'s module are checked: a glue
/// block's, [`crate::proof::handshake_tasks`].
pub use crate::proof::handshake_tasks as formal_tasks;
