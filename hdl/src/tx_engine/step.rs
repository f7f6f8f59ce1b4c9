//! The formal ghosts of a step of the acknowledgement unit's handlers,
//! shared by the properties of `tx_rto`, `tx_nack`, `tx_sack`, `tx_stage`
//! and `tx_timer`: tx_ack's
//! count for the latest step (`f_wait`, raised by a SACK's hold) with the
//! assumption that a step starts only once it has run out
//! (`asm_step_when_free`), the cycles since the step (`f_age`) and the
//! cycle its reads answer (`f_at_answer`), and the invariants tying a
//! handler's read pipe to them. `tx_probe`'s start has the same shape
//! with its own `m_busy` as the count (`asm_start_when_free`, [`ghosts_own`]);
//! so has `tx_open`'s take, which the unit makes itself, so that the rule
//! is its assertion (`a_take_when_free`, [`ghosts_taken`]).

use crate::expr::{cat, lit, mux, zext, Expr, Signal};
use crate::formal::{ghost, implies, port};
use crate::ir::{if_then, set, Module};

/// The ghosts of the latest step ([`ghosts`]).
pub(super) struct Step {
    /// tx_ack's count left for the latest step.
    pub wait: Signal,
    /// Cycles since the latest step, 1 the cycle after, saturating at `sat`.
    pub age: Signal,
    /// `age`'s width.
    pub agw: u32,
    /// `age`'s saturated value (also after a reset: no step yet).
    pub sat: Expr,
    /// `age` is `L`: the step's reads answer now.
    pub at_answer: Signal,
    /// `L`, the cycles from a step to its reads' answer.
    pub l: u32,
    /// What `a_inv_wait` says of `wait`.
    inv_wait: &'static str,
}

/// The step's ghosts for a handler started by `go` whose count goes out on
/// `m_busy` (`bb` bits), its reads answering `l` cycles later; the age
/// tells apart at least `most` cycles after the step. Assumes
/// `asm_step_when_free`: tx_ack loads `m_busy + L` at the step and counts
/// it down by one a cycle (`a_busy_step_load`, `a_busy_counts_down`), and
/// starts the next step only at 0 (`s_run` low and the holds only delay
/// it).
pub(super) fn ghosts(m: &mut Module, go: Expr, bb: u32, l: u32, most: u64) -> Step {
    ghosts_held(m, go, bb, l, most, None)
}

/// [`ghosts`] for a handler that also raises tx_ack's count after the
/// turn: `hold` is (`s_hold_sack`, `s_hold_cnt`) as tx_ack takes them, the
/// count becoming at least `s_hold_cnt` (ack.rs's `held`).
pub(super) fn ghosts_held(m: &mut Module, go: Expr, bb: u32, l: u32, most: u64, hold: Option<(Expr, Expr)>) -> Step {
    let busy = port(m, "m_busy").expr();
    ghosts_counted(m, go, busy, bb, l, most, hold, &TX_ACK)
}

/// [`ghosts`] for a unit whose starter waits for the unit's own `m_busy`
/// rather than for tx_ack's count: `tx_probe`, whose `m_busy` is high from
/// the start through the answer's cycle, and which `tx_sched` starts only
/// while it is low (`start_ok`). The count is `L` at the start, so the
/// next start comes at least `L + 1` cycles after it
/// (`asm_start_when_free`).
pub(super) fn ghosts_own(m: &mut Module, go: Expr, bb: u32, l: u32, most: u64) -> Step {
    ghosts_counted(m, go, lit(bb, 0), bb, l, most, None, &OWN_BUSY)
}

/// [`ghosts`] for a unit that starts itself: `tx_open`, whose take waits
/// for its own setup to end (`m_running`, high for `busy + L` cycles
/// after the take, `bb` bits). The rule that a take comes only once the
/// count has run out is the unit's to keep, so it is asserted
/// (`a_take_when_free`, [`OPEN_TAKE`]) rather than assumed.
pub(super) fn ghosts_taken(m: &mut Module, go: Expr, busy: Expr, bb: u32, l: u32, most: u64) -> Step {
    ghosts_counted(m, go, busy, bb, l, most, None, &OPEN_TAKE)
}

/// What the count's ghost and its rule are called and say: whose count it
/// is differs between the handlers (tx_ack's), `tx_probe` (its starter's
/// look at `m_busy`) and `tx_open` (its own take's).
pub(super) struct Count {
    wait: &'static str,
    label: &'static str,
    assume: &'static str,
    inv_wait: &'static str,
    /// The rule is the unit's own (an assertion), not its starter's.
    asserted: bool,
}

/// The handlers' count: tx_ack's, which starts no step until it has run out.
pub(super) const TX_ACK: Count = Count {
    wait: "tx_ack's count left for the latest step: m_busy + L loaded at the step, down by one a cycle",
    label: "asm_step_when_free",
    assume: "tx_ack starts a step only when its count for the previous one has run out (max(s_busy, 1) + L, down by \
             one a cycle, a_busy_step_load; s_run low and the holds only delay it)",
    inv_wait: "tx_ack's count left is the latest step's, m_busy + L + 1 less the cycles since it, and 0 after a reset",
    asserted: false,
};

/// `tx_probe`'s: its own `m_busy`, which tx_sched's start waits for.
pub(super) const OWN_BUSY: Count = Count {
    wait: "the cycles m_busy stays high after this one for the latest start: L loaded at the start, down by one a \
           cycle",
    label: "asm_start_when_free",
    assume: "the unit is started only while m_busy is low (tx_sched's start_ok is held low while it is high): \
             never while a start's m_busy runs, from the start through its answer's cycle",
    inv_wait: "the cycles m_busy stays high are the latest start's, L + 1 less the cycles since it, and 0 after a \
               reset",
    asserted: false,
};

/// `tx_open`'s: its own setup, from the take through the ring clear's
/// last slot, which the next take waits for.
pub(super) const OPEN_TAKE: Count = Count {
    wait: "the cycles m_running stays high after this one for the latest take: L + tx_ring_depth - 1 loaded at the \
           take, down by one a cycle",
    label: "a_take_when_free",
    assume: "a record is taken only when the setup before it has ended (its act and ring clear over): at most one \
             setup in flight, no take while m_running",
    inv_wait: "the cycles m_running stays high are the latest take's, L + tx_ring_depth less the cycles since it, \
               and 0 after a reset",
    asserted: true,
};

/// [`ghosts_held`] for a unit whose count at the step is `busy` (`bb`
/// bits) rather than a port `m_busy`: `tx_timer`'s steps set a fixed 1,
/// which `tx_ack` takes from its own step record. `words` says whose count
/// it is ([`TX_ACK`] for the handlers, [`OWN_BUSY`] for `tx_probe`,
/// [`OPEN_TAKE`] for `tx_open`).
#[allow(clippy::too_many_arguments)]
pub(super) fn ghosts_counted(
    m: &mut Module,
    go: Expr,
    busy: Expr,
    bb: u32,
    l: u32,
    most: u64,
    hold: Option<(Expr, Expr)>,
    words: &'static Count,
) -> Step {
    let rst = port(m, "rst");
    let wait = ghost(
        m,
        ("f_wait", bb),
        words.wait,
        &rst,
        |w| {
            let down = mux(w.expr().ne(lit(bb, 0)), w.expr() - lit(bb, 1), lit(bb, 0));
            let after = match hold {
                Some((v, cnt)) => mux(v, mux(cnt.clone().gt(down.clone()), cnt, down.clone()), down),
                None => down,
            };
            mux(go.clone(), busy + lit(bb, u64::from(l)), after)
        },
        lit(bb, 0),
    );
    let rule = implies(go.clone(), wait.expr().eq(lit(bb, 0)));
    if words.asserted {
        m.assert(words.label, words.assume, rule);
    } else {
        m.assume(words.label, words.assume, rule);
    }
    let agw = 64 - most.leading_zeros();
    let sat = lit(agw, (1 << agw) - 1);
    let age = ghost(
        m,
        ("f_age", agw),
        "cycles since the latest step (1 the cycle after), saturating; saturated after a reset",
        &rst,
        |a| mux(go.clone(), lit(agw, 1), mux(a.expr().ne(sat.clone()), a.expr() + lit(agw, 1), a.expr())),
        sat.clone(),
    );
    let at_answer = m.formal_wire("f_at_answer", 1, "L cycles after the step: its reads answer");
    m.formal_assign(&at_answer, age.expr().eq(lit(agw, u64::from(l))));
    Step { wait, age, agw, sat, at_answer, l, inv_wait: words.inv_wait }
}

impl Step {
    /// A ghost of the latest step's record: `e` taken at the step (`go`).
    pub fn record(&self, m: &mut Module, go: &Expr, (name, width): (&str, u32), comment: &str, e: Expr) -> Signal {
        let s = m.formal_wire(name, width, comment);
        m.formal_seq(vec![if_then(go.clone(), vec![set(&s, e)])]);
        s
    }

    /// The invariants that let induction close: the unit's read pipe
    /// (`pipe`, `L` bits, bit i set i + 1 cycles after the step) is the
    /// step's age (`a_inv_pipe`); after a step the unit's record registers
    /// `rec` hold the record's ghosts `want` (`a_inv_record`); tx_ack's
    /// count left is the latest step's `busy + L + 1` less its age
    /// (`a_inv_wait`; `busy` is the count the step set, `agw` bits wide).
    pub fn invariants(&self, m: &mut Module, pipe: &Signal, rec: (&[Signal], &[&Signal]), busy: Expr) {
        self.read_invariants(m, pipe, rec);
        let (age, agw, l) = (&self.age, self.agw, self.l);
        let b_prev = busy + lit(agw, u64::from(l));
        let bb = self.wait.width();
        m.assert(
            "a_inv_wait",
            self.inv_wait,
            self.wait.expr().eq(mux(
                age.expr().le(b_prev.clone()),
                zext(b_prev + lit(agw, 1) - age.expr(), bb),
                lit(bb, 0),
            )),
        );
    }

    /// [`Self::invariants`] but tx_ack's count (`a_inv_pipe`,
    /// `a_inv_record`), for a handler whose hold makes the count's
    /// invariant its own.
    pub fn read_invariants(&self, m: &mut Module, pipe: &Signal, (rec, want): (&[Signal], &[&Signal])) {
        let (age, agw) = (&self.age, self.agw);
        let pipe_want =
            cat(&(0..pipe.width()).rev().map(|i| age.expr().eq(lit(agw, u64::from(i) + 1))).collect::<Vec<_>>());
        m.assert(
            "a_inv_pipe",
            "the reads in flight are the latest step's, i + 1 cycles after it in bit i (the count of cycles is never 0)",
            pipe.expr().eq(pipe_want).logic_and(age.expr().ne(lit(agw, 0))),
        );
        let rec = cat(&rec.iter().map(Signal::expr).collect::<Vec<_>>());
        let want = cat(&want.iter().map(|s| s.expr()).collect::<Vec<_>>());
        m.assert(
            "a_inv_record",
            "after a step the record registers hold its record",
            implies(age.expr().ne(self.sat.clone()), rec.eq(want)),
        );
    }
}
