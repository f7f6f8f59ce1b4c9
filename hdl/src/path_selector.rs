//! `path_selector` RTL: the generator of the cycle model
//! [`mrnic_model::path_selector`], with the same ports (declared from the
//! model's [`PortDef`] list, plus `clk`) and the same cycle timing. The
//! model's doc comment is the specification: function, latency `L + 1`,
//! one decision per cycle, forwarding, output FIFO and clear sweep.
//!
//! Structure, in pipeline order:
//! - request handshake: `req_fire` addresses the credit memory
//!   (`credit_mem`, block RAM, registered read `credit_rd_reg`; with
//!   `READ_LATENCY = 2` a second register `credit_pipe_reg`, the block
//!   RAM's output register) and loads stage `p1` (`p2` follows it when
//!   `L = 2`);
//! - pick stage `pL`: credits from the newest matching forwarding register
//!   (`fw0`, `fw1`: the writes of the last `L` cycles) or from the memory,
//!   cleared per `s_req_clr`, then per path the saturating `credit + weight`,
//!   an argmax tree over offset-binary keys (ties to the lower index) and the
//!   winner's saturating subtraction of the eligible weight sum; the result
//!   is written back to `credit_mem` and pushed into the output FIFO;
//! - output FIFO of `FIFO_DEPTH` registers; `m_sel_*` is its head.
//!
//! [`generate`] is the signature every block generator follows:
//! `fn generate(cfg: &Config) -> Result<Module, GenError>`, checked before it
//! returns.

use std::collections::HashMap;

use mrnic_model::block::{Dir as ModelDir, PortDef};
use mrnic_model::path_selector::{self as model, ParamError, PathSelectorParams, CREDIT_BITS, WEIGHT_BITS};
use mrnic_proto::Config;

use crate::expr::{cat, lit, mux, zext, Expr, Signal};
use crate::formal::{every_channel, implies};
use crate::ir::{case, if_then, set, MemStyle, Module};
use crate::param::{ParamExpr, Size};
use crate::{CheckErrors, Header};

/// Why a block could not be generated for a config.
#[derive(Debug, thiserror::Error)]
pub enum GenError {
    /// The config asks for something the block cannot build.
    #[error(transparent)]
    Params(#[from] ParamError),
    /// The generated module breaks a design rule (a generator bug).
    #[error("{0}")]
    Check(#[from] CheckErrors),
}

/// The file header for `cfg`.
pub fn header(cfg: &Config) -> Header {
    Header::new(
        &format!("mrnic-hdl {}, config {}", model::NAME, cfg.name),
        &format!("mrnic gen --config {} --out DIR", cfg.name),
    )
}

/// The `path_selector` module for `cfg`, design-rule checked.
pub fn generate(cfg: &Config) -> Result<Module, GenError> {
    let p = PathSelectorParams::from_config(cfg)?;
    let m = build(&p);
    m.check()?;
    Ok(m)
}

/// The module printed as Verilog, with [`header`].
pub fn verilog(cfg: &Config) -> Result<String, GenError> {
    Ok(generate(cfg)?.to_verilog(&header(cfg))?)
}

fn build(p: &PathSelectorParams) -> Module {
    let paths = p.paths;
    let l = p.read_latency;
    let cb = CREDIT_BITS;
    let wb = WEIGHT_BITS;
    let sb = p.sum_bits();
    let word = p.credit_word_bits();
    let depth = p.fifo_depth();
    let fb = depth.trailing_zeros();
    let credit_max = (1u64 << (cb - 1)) - 1;
    let credit_min = 1u64 << (cb - 1);

    let mut m = Module::new(model::NAME);
    m.describe("picks the next path of a connection by smooth weighted round robin, one decision per cycle");
    let conns_p = m.param("CONNS", u64::from(p.conns), "connections: depth of the credit memory (power of 2)");
    let paths_p = m.param("PATHS", u64::from(paths), "paths per connection (power of 2, 1 to 32)");
    let lat_p = m.param("READ_LATENCY", u64::from(l), "credit memory read latency in cycles (1 or 2)");
    let fifo_p = m.localparam("FIFO_DEPTH", u64::from(depth), "output FIFO entries: power of 2 >= READ_LATENCY + 2");
    m.param_check(
        "conns_pow2",
        conns_p.expr().ge(2u32).and(conns_p.expr().eq(ParamExpr::Const(1) << conns_p.expr().clog2())),
        "CONNS must be a power of 2, at least 2",
    );
    m.param_check(
        "paths_pow2",
        paths_p
            .expr()
            .ge(1u32)
            .and(paths_p.expr().le(32u32))
            .and(paths_p.expr().eq(ParamExpr::Const(1) << paths_p.expr().clog2())),
        "PATHS must be a power of 2 from 1 to 32",
    );
    m.param_check(
        "read_latency",
        lat_p.expr().ge(1u32).and(lat_p.expr().le(2u32)).and(fifo_p.expr().ge(lat_p.expr() + 2u32)),
        "READ_LATENCY must be 1 or 2, and FIFO_DEPTH at least READ_LATENCY + 2",
    );

    // Ports, from the model's list. Widths print symbolically where the
    // parameter expression gives the model's width.
    let symbolic: HashMap<&str, ParamExpr> = [
        ("s_req_conn", conns_p.expr().clog2()),
        ("m_sel_conn", conns_p.expr().clog2()),
        ("s_req_elig", paths_p.expr()),
        ("s_req_clr", paths_p.expr()),
        ("s_req_weight", paths_p.expr() * wb),
        ("m_sel_path", paths_p.expr().clog2()),
    ]
    .into_iter()
    .collect();
    let defs = model::ports(p);
    let mut sig: HashMap<String, Signal> = HashMap::new();
    let mut group = "Clock and reset";
    m.group(group);
    let clk = m.input("clk", 1, "clock, rising edge");
    for d in &defs {
        if d.group != group {
            group = d.group;
            m.group(group);
        }
        let size = port_size(d, symbolic.get(d.name.as_str()));
        let s = match d.dir {
            ModelDir::In => m.input(&d.name, size, &d.comment),
            ModelDir::Out => m.output(&d.name, size, &d.comment),
        };
        sig.insert(d.name.clone(), s);
    }
    let port = |n: &str| sig[n].clone();
    let rst = port("rst");
    m.clock_domain(&clk, &rst);
    let (s_req_valid, s_req_ready) = (port("s_req_valid"), port("s_req_ready"));
    let (s_req_conn, s_req_elig, s_req_weight, s_req_clr) =
        (port("s_req_conn"), port("s_req_elig"), port("s_req_weight"), port("s_req_clr"));
    let (m_sel_valid, m_sel_ready) = (port("m_sel_valid"), port("m_sel_ready"));
    let (m_sel_conn, m_sel_path, m_sel_none) = (port("m_sel_conn"), port("m_sel_path"), port("m_sel_none"));
    let (cw, pw) = (p.conn_bits, p.path_bits);
    every_channel(&mut m, &rst);

    // ---- registers ----
    let init = m.reg("init", 1, 1, "clear sweep running: one credit word zeroed per cycle");
    let init_addr = m.reg("init_addr", cw, 0, "credit word the sweep zeroes this cycle");
    let stages: Vec<Stage> = (1..=l)
        .map(|j| Stage {
            valid: m.reg(&format!("p{j}_valid"), 1, 0, &format!("a request is {j} cycle(s) past its handshake")),
            conn: m.reg_no_reset(&format!("p{j}_conn"), cw, "its connection"),
            elig: m.reg_no_reset(&format!("p{j}_elig"), paths, "its eligible paths"),
            weight: m.reg_no_reset(&format!("p{j}_weight"), paths * wb, "its path weights"),
            clr: m.reg_no_reset(&format!("p{j}_clr"), paths, "its credit clears"),
        })
        .collect();
    let pick = &stages[l as usize - 1];
    struct Fwd {
        valid: crate::Reg,
        conn: crate::Reg,
        credits: crate::Reg,
    }
    let fwds: Vec<Fwd> = (0..l)
        .map(|j| Fwd {
            valid: m.reg(
                &format!("fw{j}_valid"),
                1,
                0,
                &format!("credit write {} cycle(s) ago, for forwarding", j + 1),
            ),
            conn: m.reg_no_reset(&format!("fw{j}_conn"), cw, "its connection"),
            credits: m.reg_no_reset(&format!("fw{j}_credits"), word, "the credits written"),
        })
        .collect();
    let fifo_count = m.reg("fifo_count", fb + 1, 0, "decisions in the output FIFO");
    let fifo_wr = m.reg("fifo_wr", fb, 0, "FIFO slot the next decision goes to");
    let fifo_rd = m.reg("fifo_rd", fb, 0, "FIFO slot of the head decision");
    let entry_w = cw + pw + 1;
    let fifo: Vec<crate::Reg> =
        (0..depth).map(|j| m.reg_no_reset(&format!("fifo{j}"), entry_w, "decision {conn, path, none}")).collect();

    // ---- handshake and credit memory ----
    let req_fire = m.wire("req_fire", 1, "request handshake");
    let inflight = m.wire("inflight", fb + 1, "requests in the read pipeline");
    m.comment("Ready from registers only: room in the FIFO for every request in flight plus this one.");
    let inflight_sum =
        stages.iter().map(|s| zext(&s.valid.q, fb + 1)).reduce(|a, b| a + b).expect("at least one stage");
    m.assign(&inflight, inflight_sum);
    m.assign(
        &s_req_ready,
        init.q.expr().logic_not().logic_and((fifo_count.q.expr() + &inflight).lt(lit(fb + 1, u64::from(depth)))),
    );
    m.assign(&req_fire, s_req_valid.expr().logic_and(&s_req_ready));

    let mem = m.memory(
        "credit",
        word,
        &conns_p,
        MemStyle::Block,
        "SWRR credit of every path, per connection; written by the clear sweep (which has the port to itself: \
         no request enters until it ends) or by the pick stage",
    );
    let new_credits = m.wire("new_credits", word, "credits after the pick");
    m.mem_write(
        &mem,
        init.q.expr().logic_or(&pick.valid.q),
        mux(&init.q, &init_addr.q, &pick.conn.q),
        mux(&init.q, lit(word, 0), &new_credits),
    );
    let rd = m.mem_read(&mem, "credit_rd", &req_fire, &s_req_conn);
    let mem_credits = if l == 2 {
        let pipe = m.reg_no_reset("credit_pipe", word, "block RAM output register (READ_LATENCY = 2)");
        m.next(set(&pipe.next, &rd));
        pipe.q
    } else {
        rd
    };

    // ---- stage registers ----
    m.next(set(&stages[0].valid.next, &req_fire));
    m.next(set(&stages[0].conn.next, &s_req_conn));
    m.next(set(&stages[0].elig.next, &s_req_elig));
    m.next(set(&stages[0].weight.next, &s_req_weight));
    m.next(set(&stages[0].clr.next, &s_req_clr));
    for j in 1..stages.len() {
        let (a, b) = (&stages[j - 1], &stages[j]);
        m.next(set(&b.valid.next, &a.valid.q));
        m.next(set(&b.conn.next, &a.conn.q));
        m.next(set(&b.elig.next, &a.elig.q));
        m.next(set(&b.weight.next, &a.weight.q));
        m.next(set(&b.clr.next, &a.clr.q));
    }

    // ---- clear sweep ----
    m.next(if_then(
        &init.q,
        vec![
            set(&init_addr.next, init_addr.q.expr() + lit(cw, 1)),
            if_then(init_addr.q.expr().eq(lit(cw, u64::from(p.conns - 1))), vec![set(&init.next, lit(1, 0))]),
        ],
    ));

    // ---- pick stage: forwarding ----
    m.comment("A read cannot see the writes of the READ_LATENCY cycles after it: take the newest matching one.");
    let credit_in = m.wire("credit_in", word, "credits of the pick stage's connection before the pick");
    let mut chosen: Expr = mem_credits.expr();
    for (j, f) in fwds.iter().enumerate().rev() {
        let hit = m.wire(&format!("fw{j}_hit"), 1, "this forwarding register holds the pick stage's connection");
        m.assign(&hit, f.valid.q.expr().logic_and(f.conn.q.expr().eq(&pick.conn.q)));
        chosen = mux(&hit, &f.credits.q, chosen);
    }
    m.assign(&credit_in, chosen);
    m.next(set(&fwds[0].valid.next, &pick.valid.q));
    m.next(set(&fwds[0].conn.next, &pick.conn.q));
    m.next(set(&fwds[0].credits.next, &new_credits));
    for j in 1..fwds.len() {
        m.next(set(&fwds[j].valid.next, &fwds[j - 1].valid.q));
        m.next(set(&fwds[j].conn.next, &fwds[j - 1].conn.q));
        m.next(set(&fwds[j].credits.next, &fwds[j - 1].credits.q));
    }

    // ---- pick stage: per path ----
    m.comment("Per path: clear, weight floor 1, credit + weight saturating at the top.");
    let mut added = Vec::new();
    let mut credits = Vec::new();
    let mut keys = Vec::new();
    let mut eff_weights = Vec::new();
    for i in 0..paths {
        let lo = i * cb;
        let c = m.wire(&format!("path{i}_credit"), cb, "credit after s_req_clr");
        m.assign(&c, mux(pick.clr.q.bit(i), lit(cb, 0), credit_in.slice(lo + cb - 1, lo)));
        let w = m.wire(&format!("path{i}_weight"), wb, "weight, 0 counting as 1");
        let raw = pick.weight.q.slice(i * wb + wb - 1, i * wb);
        m.assign(&w, raw.clone() | zext(raw.eq(lit(wb, 0)), wb));
        let sum = m.wire(&format!("path{i}_sum"), cb, "credit + weight, wrapping");
        m.assign(&sum, c.expr() + zext(&w, cb));
        let a = m.wire(&format!("path{i}_added"), cb, "credit + weight if eligible, saturated at the largest credit");
        let overflow = c.bit(cb - 1).logic_not().logic_and(sum.bit(cb - 1));
        m.assign(&a, mux(pick.elig.q.bit(i).logic_not(), &c, mux(overflow, lit(cb, credit_max), &sum)));
        let key_name = format!("path{i}_key");
        let key_comment = "added credit in offset binary, for unsigned compares";
        let key_value = cat(&[a.bit(cb - 1).logic_not(), a.slice(cb - 2, 0)]);
        // A single path needs no compare: its key is left to the properties.
        let key = if paths > 1 {
            let key = m.wire(&key_name, cb, key_comment);
            m.assign(&key, key_value);
            key
        } else {
            let key = m.formal_wire(&key_name, cb, key_comment);
            m.formal_assign(&key, key_value);
            key
        };
        let ew = m.wire(&format!("path{i}_elig_weight"), sb, "weight if eligible, else 0");
        m.assign(&ew, mux(pick.elig.q.bit(i), zext(&w, sb), lit(sb, 0)));
        added.push(a);
        credits.push(c);
        keys.push(key);
        eff_weights.push(ew);
    }
    let total = m.wire("elig_weight_sum", sb, "sum of the eligible weights");
    m.assign(&total, eff_weights.iter().map(Expr::from).reduce(|a, b| a + b).expect("at least one path"));

    // ---- pick stage: argmax tree ----
    m.comment("Argmax tree: the right (higher-index) side wins only when strictly larger.");
    struct Node {
        valid: Expr,
        key: Expr,
        idx: Expr,
    }
    let mut level: Vec<Node> = (0..paths)
        .map(|i| Node { valid: pick.elig.q.bit(i), key: keys[i as usize].expr(), idx: lit(pw, u64::from(i)) })
        .collect();
    let mut depth_no = 0;
    while level.len() > 1 {
        depth_no += 1;
        let mut next = Vec::new();
        for (j, pair) in level.chunks(2).enumerate() {
            let (a, b) = (&pair[0], &pair[1]);
            let name = format!("tree{depth_no}_{j}");
            let take_b = m.wire(&format!("{name}_right"), 1, "the higher-index side wins this node");
            m.assign(
                &take_b,
                b.valid.clone().logic_and(a.valid.clone().logic_not().logic_or(b.key.clone().gt(&a.key))),
            );
            let v = m.wire(&format!("{name}_valid"), 1, "an eligible path below this node");
            m.assign(&v, a.valid.clone().logic_or(b.valid.clone()));
            // The root's key feeds only the formal properties: the new
            // credits are selected by the root's index.
            let key = mux(&take_b, b.key.clone(), a.key.clone());
            let key = if level.len() == 2 {
                key
            } else {
                let k = m.wire(&format!("{name}_key"), cb, "largest key below this node");
                m.assign(&k, key);
                k.expr()
            };
            let x = m.wire(&format!("{name}_idx"), pw, "its path");
            m.assign(&x, mux(&take_b, b.idx.clone(), a.idx.clone()));
            next.push(Node { valid: v.expr(), key, idx: x.expr() });
        }
        level = next;
    }
    let root = level.pop().expect("one root");
    let win_valid = m.wire("win_valid", 1, "some path was eligible");
    let win_idx = m.wire("win_idx", pw, "the winning path");
    let win_key = m.formal_wire("f_win_key", cb, "the winner's added credit, offset binary");
    m.assign(&win_valid, root.valid);
    m.assign(&win_idx, root.idx);
    m.formal_assign(&win_key, root.key);
    m.comment(
        "Winner: added credit - eligible weight sum, in one more bit, saturated at the smallest credit. Every \
         path computes it beside the argmax tree and the tree's winner only selects, so the subtraction is \
         not in series with the tree on the credit loop (pick -> forwarding register -> pick).",
    );
    let mut subs: Vec<Signal> = Vec::new();
    let mut news = Vec::new();
    for (i, a) in added.iter().enumerate() {
        let sub = m.wire(&format!("path{i}_sub"), cb + 1, "added credit minus the eligible weight sum, exact");
        m.assign(&sub, cat(&[a.bit(cb - 1), a.expr()]) - zext(&total, cb + 1));
        let new = m.wire(&format!("path{i}_won"), cb, "the path's new credit if it wins");
        let underflow = sub.bit(cb).logic_and(sub.bit(cb - 1).logic_not());
        m.assign(&new, mux(underflow, lit(cb, credit_min), sub.slice(cb - 1, 0)));
        subs.push(sub);
        news.push(new);
    }
    let mut parts = Vec::new();
    for i in (0..paths).rev() {
        let is_win = win_valid.expr().logic_and(win_idx.expr().eq(lit(pw, u64::from(i))));
        parts.push(mux(is_win, &news[i as usize], &added[i as usize]));
    }
    m.assign(&new_credits, cat(&parts));

    // Properties of the pick: eligibility, argmax, and SWRR's zero-sum update.
    m.assert(
        "a_pick_eligible",
        "the pick stage's winner is an eligible path, and there is a winner whenever a path is eligible",
        implies(
            &pick.valid.q,
            win_valid
                .expr()
                .eq(pick.elig.q.expr().reduce_or())
                .logic_and(implies(&win_valid, pick.elig.q.expr().bit_at(win_idx.expr()))),
        ),
    );
    for (i, key) in keys.iter().enumerate() {
        let before_win = lit(pw, i as u64).lt(&win_idx);
        m.assert(
            &format!("a_pick_argmax_{i}"),
            &format!(
                "eligible path {i} has no larger added credit than the winner, and not an equal one if it has a \
                 lower index (ties go to the lower index)"
            ),
            implies(
                pick.valid.q.expr().logic_and(pick.elig.q.bit(i as u32)),
                key.expr().lt(&win_key).logic_or(key.expr().eq(&win_key).logic_and(before_win.logic_not())),
            ),
        );
    }
    // SWRR's zero-sum update, path by path: the credit moves by the path's
    // weight if eligible, minus the eligible weight sum if it won. Summed over
    // the paths the moves cancel (elig_weight_sum is the sum of the eligible
    // weights), which is what bounds each path's credit and so its share.
    let f_total = m.formal_wire("f_total", cb, "the eligible weight sum on credit bits");
    m.formal_assign(&f_total, zext(&total, cb));
    let f_underflow = m.formal_wire("f_win_saturated", 1, "the winner's subtraction saturated at the smallest credit");
    let underflows = subs.iter().map(|sub| sub.bit(cb).logic_and(sub.bit(cb - 1).logic_not()));
    let by_winner = underflows
        .enumerate()
        .reduce(|(_, acc), (i, x)| (i, mux(win_idx.expr().eq(lit(pw, i as u64)), x, acc)))
        .expect("at least one path")
        .1;
    m.formal_assign(&f_underflow, by_winner);
    for i in 0..paths {
        let c = &credits[i as usize];
        let a = &added[i as usize];
        let new = m.formal_wire(&format!("f_path{i}_new_credit"), cb, "credit written back");
        m.formal_assign(&new, new_credits.slice(i * cb + cb - 1, i * cb));
        let won = win_valid.expr().logic_and(win_idx.expr().eq(lit(pw, u64::from(i))));
        // An eligible path saturated when credit + weight would pass the top.
        let over = pick.elig.q.bit(i).logic_and(c.bit(cb - 1).logic_not()).logic_and(a.expr().eq(lit(cb, credit_max)));
        let sat = over.logic_or(won.clone().logic_and(&f_underflow));
        let gain = mux(
            pick.elig.q.bit(i),
            zext(pick.weight.q.slice(i * wb + wb - 1, i * wb).eq(lit(wb, 0)), cb)
                | zext(pick.weight.q.slice(i * wb + wb - 1, i * wb), cb),
            lit(cb, 0),
        );
        let pay = mux(won, f_total.expr(), lit(cb, 0));
        m.assert(
            &format!("a_path{i}_credit_move"),
            &format!(
                "unless it saturates, path {i}'s credit moves by its weight (0 counting as 1) if eligible, minus the \
                 eligible weight sum if it won: the zero-sum SWRR update"
            ),
            implies(pick.valid.q.expr().logic_and(sat.logic_not()), (new.expr() - c).eq(gain - pay)),
        );
    }

    // ---- output FIFO ----
    let push = pick.valid.q.clone();
    let pop = m.wire("sel_pop", 1, "decision handshake");
    m.assign(&pop, m_sel_valid.expr().logic_and(&m_sel_ready));
    let entry = m.wire("sel_entry", entry_w, "the pick stage's decision {conn, path, none}");
    m.assign(&entry, cat(&[pick.conn.q.expr(), mux(&win_valid, &win_idx, lit(pw, 0)), win_valid.expr().logic_not()]));
    m.next(if_then(
        &push,
        vec![
            case(
                &fifo_wr.q,
                (0..depth).map(|j| (vec![lit(fb, u64::from(j))], vec![set(&fifo[j as usize].next, &entry)])).collect(),
                None,
            ),
            set(&fifo_wr.next, fifo_wr.q.expr() + lit(fb, 1)),
        ],
    ));
    m.next(if_then(&pop, vec![set(&fifo_rd.next, fifo_rd.q.expr() + lit(fb, 1))]));
    m.next(if_then(
        push.expr().logic_and(pop.expr().logic_not()),
        vec![set(&fifo_count.next, fifo_count.q.expr() + lit(fb + 1, 1))],
    ));
    m.next(if_then(
        pop.expr().logic_and(push.expr().logic_not()),
        vec![set(&fifo_count.next, fifo_count.q.expr() - lit(fb + 1, 1))],
    ));
    let head = m.wire("sel_head", entry_w, "the FIFO's head decision");
    m.comb(vec![case(
        &fifo_rd.q,
        (0..depth).map(|j| (vec![lit(fb, u64::from(j))], vec![set(&head, &fifo[j as usize].q)])).collect(),
        None,
    )]);
    // The FIFO slots have no reset, so an empty FIFO's head is whatever the
    // slot last held (or X after power-up). Zero the payload while invalid:
    // it costs an AND per bit and makes idle outputs deterministic, which is
    // what the model drives and what lockstep compares.
    let head_valid = m.wire("sel_head_valid", 1, "the FIFO holds a decision");
    m.assign(&head_valid, fifo_count.q.expr().ne(lit(fb + 1, 0)));
    let shown = m.wire("sel_shown", entry_w, "the head decision, zero while the FIFO is empty");
    m.assign(&shown, mux(&head_valid, &head, lit(entry_w, 0)));
    m.assign(&m_sel_valid, &head_valid);
    m.assign(&m_sel_conn, shown.slice(entry_w - 1, pw + 1));
    m.assign(&m_sel_path, shown.slice(pw, 1));
    m.assign(&m_sel_none, shown.bit(0));

    // Properties of the output FIFO. Ghost state: the eligible set of the
    // request behind each FIFO slot, written with the slot.
    m.assert(
        "a_fifo_room",
        "the FIFO never holds more decisions than it has slots, counting the requests still in the read pipeline",
        (zext(&fifo_count.q, fb + 2) + zext(&inflight, fb + 2)).le(lit(fb + 2, u64::from(depth))),
    );
    m.assert(
        "a_fifo_pointers",
        "the FIFO pointers are apart by the count",
        (fifo_wr.q.expr() - &fifo_rd.q).eq(fifo_count.q.slice(fb.max(1) - 1, 0)),
    );
    let mut head_elig = Vec::new();
    for (j, slot) in fifo.iter().enumerate() {
        let elig = m.formal_wire(&format!("f_fifo{j}_elig"), paths, "eligible paths of the request behind this slot");
        m.formal_seq(vec![if_then(
            push.expr().logic_and(fifo_wr.q.expr().eq(lit(fb, j as u64))),
            vec![set(&elig, &pick.elig.q)],
        )]);
        let occupied = m.formal_wire(&format!("f_fifo{j}_occupied"), 1, "this slot holds a decision");
        m.formal_assign(&occupied, zext(lit(fb, j as u64) - &fifo_rd.q, fb + 1).lt(&fifo_count.q));
        let path = m.formal_wire(&format!("f_fifo{j}_path"), pw, "the slot's path");
        m.formal_assign(&path, slot.q.slice(pw, 1));
        m.assert(
            &format!("a_fifo{j}_eligible"),
            &format!("FIFO slot {j} holds an eligible path of its request, or none when none was eligible"),
            implies(&occupied, mux(slot.q.bit(0), elig.expr().eq(lit(paths, 0)), elig.expr().bit_at(path.expr()))),
        );
        head_elig.push(elig);
    }
    let f_head = m.formal_wire("f_head_elig", paths, "eligible paths of the head decision's request");
    m.formal_comb(vec![case(
        &fifo_rd.q,
        (0..depth).map(|j| (vec![lit(fb, u64::from(j))], vec![set(&f_head, &head_elig[j as usize])])).collect(),
        None,
    )]);
    m.assert(
        "a_sel_eligible",
        "m_sel never names a path that was not eligible in its request; m_sel_none only when no path was",
        implies(&m_sel_valid, mux(&m_sel_none, f_head.expr().eq(lit(paths, 0)), f_head.expr().bit_at(&m_sel_path))),
    );
    // The credit table: no lost update, the sweep alone.
    let mut busy = lit(1, 0);
    for st in &stages {
        busy = busy.logic_or(&st.valid.q);
    }
    for f in &fwds {
        busy = busy.logic_or(&f.valid.q);
    }
    crate::formal::table_rmw(
        &mut m,
        "credit",
        &mem,
        &pick.valid.q,
        pick.conn.q.expr(),
        credit_in.expr(),
        &init.q,
        busy,
    );
    fairness(&mut m, p, &mem, &init, &init_addr, &s_req_valid, &stages, &win_valid, &win_idx);

    let sel_fire = m_sel_valid.expr().logic_and(&m_sel_ready);
    m.cover("c_sel_path", "a decision naming a path leaves", sel_fire.clone().logic_and(m_sel_none.expr().logic_not()));
    m.cover("c_sel_none", "a decision with no eligible path leaves", sel_fire.logic_and(&m_sel_none));
    let seen = m.formal_wire("f_seen_sel", 1, "a decision has left since reset");
    m.formal_seq(vec![crate::ir::if_else(
        &rst,
        vec![set(&seen, lit(1, 0))],
        vec![if_then(m_sel_valid.expr().logic_and(&m_sel_ready), vec![set(&seen, lit(1, 1))])],
    )]);
    m.cover(
        "c_drained",
        "after decisions have left, the pipeline and the FIFO drain empty with the sweep done",
        seen.expr()
            .logic_and(fifo_count.q.expr().eq(lit(fb + 1, 0)))
            .logic_and(inflight.expr().eq(lit(fb + 1, 0)))
            .logic_and(init.q.expr().logic_not()),
    );
    m
}

/// Assumptions of the fairness task only (see [`formal_tasks`]).
pub const FAIR_ASSUMES: &[&str] = &["asm_fair_fixed_request"];

/// Labels of the fairness assertions start with this.
pub const FAIR_PREFIX: &str = "a_fair_";

/// The fairness bound of SWRR, for one tracked connection `F` (an
/// anyconst) whose requests keep one eligible set `E` and one weight
/// vector (anyconst too; assumed, and only in the fairness task) and never
/// clear. With `w_i` the weights (0 counting as 1; taken as 0 outside `E`)
/// and `W` their sum, after every decision of `F` (ghost counts: `T` decisions, `n_i`
/// picks of path `i`) its stored credits `c_i` satisfy
/// - `c_i = T * w_i - W * n_i` (mod 2^24; the right side is a ghost kept
///   incrementally): the credit is exactly the path's lag behind its
///   weighted share;
/// - `sum of c_i = 0`, `c_i = 0` outside `E`, `c_i > -W` inside `E`
///   (hence `c_i < (|E| - 1) * W`): the SWRR invariant, which also shows
///   that saturation never happens here.
///
/// So over any window of `T` decisions of `F`, path `i` is picked
/// `n_i` times with `|n_i - T * w_i / W| < |E| <= PATHS` (the lag moves by
/// less than `|E| * W` between two decisions): fewer than `PATHS` picks
/// away from its weighted share, whatever the window.
#[allow(clippy::too_many_arguments)]
fn fairness(
    m: &mut Module,
    p: &PathSelectorParams,
    mem: &crate::ir::Mem,
    init: &crate::Reg,
    init_addr: &crate::Reg,
    s_req_valid: &Signal,
    stages: &[Stage],
    win_valid: &Signal,
    win_idx: &Signal,
) {
    let (paths, cw, pw, wb, cb) = (p.paths, p.conn_bits, p.path_bits, WEIGHT_BITS, CREDIT_BITS);
    let pick = stages.last().expect("at least one stage");
    let gw = 24;
    let f_conn = m.formal_anyconst("f_fair_conn", cw, "the tracked connection");
    let f_elig = m.formal_anyconst("f_fair_elig", paths, "its eligible set");
    let f_weight = m.formal_anyconst("f_fair_weight", paths * wb, "its weights");
    let req_conn = crate::formal::port(m, "s_req_conn");
    let (req_elig, req_weight, req_clr) = (
        crate::formal::port(m, "s_req_elig"),
        crate::formal::port(m, "s_req_weight"),
        crate::formal::port(m, "s_req_clr"),
    );
    m.assume(
        "asm_fair_fixed_request",
        "requests of the tracked connection keep one non-empty eligible set and one weight vector, and never clear",
        implies(
            s_req_valid.expr().logic_and(req_conn.expr().eq(&f_conn)),
            req_elig
                .expr()
                .eq(&f_elig)
                .logic_and(req_weight.expr().eq(&f_weight))
                .logic_and(req_clr.expr().eq(lit(paths, 0)))
                .logic_and(f_elig.expr().ne(lit(paths, 0))),
        ),
    );
    // Weights on gw bits, 0 counting as 1, and their sum over E.
    let w: Vec<Expr> = (0..paths)
        .map(|i| {
            let raw = f_weight.slice(i * wb + wb - 1, i * wb);
            zext(raw.clone() | zext(raw.eq(lit(wb, 0)), wb), gw)
        })
        .collect();
    let total = m.formal_wire("f_fair_total", gw, "W: the weight sum over the eligible set");
    m.formal_assign(
        &total,
        (0..paths).map(|i| mux(f_elig.bit(i), w[i as usize].clone(), lit(gw, 0))).reduce(|a, b| a + b).expect("paths"),
    );
    // Ghost state, stepped when the pick stage decides for F (the same edge
    // that writes F's credits): T, and per path the lag T * w_i - W * n_i
    // kept incrementally (+w_i per decision, -W when path i wins), so no
    // multiplier enters the proof.
    let mine = pick.valid.q.expr().logic_and(pick.conn.q.expr().eq(&f_conn));
    let t = m.formal_wire("f_fair_decisions", gw, "T: decisions of F since the sweep");
    let lags: Vec<Signal> = (0..paths)
        .map(|i| m.formal_wire(&format!("f_fair_lag{i}"), gw, &format!("T * w_{i} - W * n_{i}: path {i}'s lag")))
        .collect();
    let rst = crate::formal::port(m, "rst");
    let mut on_reset = vec![set(&t, lit(gw, 0))];
    let mut on_pick = vec![set(&t, t.expr() + lit(gw, 1))];
    for (i, lag) in lags.iter().enumerate() {
        on_reset.push(set(lag, lit(gw, 0)));
        let won = win_valid.expr().logic_and(win_idx.expr().eq(lit(pw, i as u64)));
        let gain = mux(f_elig.bit(i as u32), w[i].clone(), lit(gw, 0));
        on_pick.push(set(lag, lag.expr() + gain - mux(won, total.expr(), lit(gw, 0))));
    }
    // Counted from the end of the clear sweep, which zeroes F's credits.
    m.formal_seq(vec![crate::ir::if_else(rst.expr().logic_or(&init.q), on_reset, vec![if_then(mine, on_pick)])]);
    // F's stored credits, once the sweep has zeroed them.
    let word = m.formal_mem_word(mem, "f_fair_credits", &f_conn);
    let swept = m.formal_wire("f_fair_swept", 1, "the clear sweep has zeroed F's credits");
    m.formal_assign(&swept, init.q.expr().logic_not().logic_or(init_addr.q.expr().gt(&f_conn)));
    let c: Vec<Expr> = (0..paths)
        .map(|i| {
            let v = word.slice(i * cb + cb - 1, i * cb);
            cat(&[crate::expr::repl(gw - cb, word.bit(i * cb + cb - 1)), v])
        })
        .collect();
    let sum = c.iter().cloned().reduce(|a, b| a + b).expect("paths");
    // Two rules that only tie the state to the assumptions above, so that
    // k-induction need not reach back to the request or the sweep.
    for (j, st) in stages.iter().enumerate() {
        m.assert(
            &format!("a_fair_stage{}", j + 1),
            &format!("a request of F in stage p{} has F's eligible set and weights and no clear", j + 1),
            implies(
                st.valid.q.expr().logic_and(st.conn.q.expr().eq(&f_conn)),
                st.elig
                    .q
                    .expr()
                    .eq(&f_elig)
                    .logic_and(st.weight.q.expr().eq(&f_weight))
                    .logic_and(st.clr.q.expr().eq(lit(paths, 0))),
            ),
        );
    }
    m.assert(
        "a_fair_swept_zero",
        "while the sweep runs past F, F's credits and lags are zero",
        implies(
            init.q.expr().logic_and(init_addr.q.expr().gt(&f_conn)),
            lags.iter().fold(word.expr().eq(lit(paths * cb, 0)), |acc, lag| acc.logic_and(lag.expr().eq(lit(gw, 0)))),
        ),
    );
    m.assert(
        "a_fair_zero_sum",
        "F's credits sum to zero (SWRR's zero-sum update, no saturation)",
        implies(&swept, sum.eq(lit(gw, 0))),
    );
    for i in 0..paths {
        let ci = c[i as usize].clone();
        let lift = m.formal_wire(&format!("f_fair_lift{i}"), gw, &format!("c_{i} + W"));
        m.formal_assign(&lift, ci.clone() + &total);
        m.assert(
            &format!("a_fair_bounds{i}"),
            &format!("path {i} of F: credit 0 if not eligible, else above -W (so below (|E| - 1) * W)"),
            implies(
                &swept,
                mux(
                    f_elig.bit(i),
                    lift.bit(gw - 1).logic_not().logic_and(lift.expr().ne(lit(gw, 0))),
                    ci.clone().eq(lit(gw, 0)),
                ),
            ),
        );
        m.assert(
            &format!("a_fair_share{i}"),
            &format!("path {i} of F: its credit is exactly its lag T * w_{i} - W * n_{i} behind its weighted share"),
            implies(&swept, ci.eq(&lags[i as usize])),
        );
    }
    let two_paths = (f_elig.expr() & (f_elig.expr() - lit(paths, 1))).ne(lit(paths, 0));
    m.cover(
        "c_fair_rounds",
        "F has made 6 decisions over at least two eligible paths (the fairness rules are not vacuous)",
        t.expr().eq(lit(gw, 6)).logic_and(two_paths),
    );
}

/// A request's pipeline stage.
struct Stage {
    valid: crate::Reg,
    conn: crate::Reg,
    elig: crate::Reg,
    weight: crate::Reg,
    clr: crate::Reg,
}

/// The width of a model port as an IR size: the parameter expression when it
/// evaluates to the model's width, else the number.
fn port_size(d: &PortDef, sym: Option<&ParamExpr>) -> Size {
    match sym {
        Some(e) if e.eval() == Some(i64::from(d.width)) => Size::from(e.clone()),
        _ => Size::from(d.width),
    }
}

/// How the properties of [`generate`]'s module are checked (see
/// [`crate::proof`]): every assertion by k-induction, the covers to a
/// depth past the clear sweep (`CONNS` cycles after reset).
pub fn formal_tasks(asserts: &[String]) -> Vec<crate::proof::Task> {
    use crate::proof::{Mode, Task};
    let fair = |l: &String| l.starts_with(FAIR_PREFIX);
    vec![
        Task {
            name: "prove",
            mode: Mode::Prove(3),
            asserts: Some(asserts.iter().filter(|l| !fair(l)).cloned().collect()),
            why_bounded: "",
            arrays: false,
            without: FAIR_ASSUMES,
            lean_on_proven: false,
            connections: None,
            solver: None,
        },
        Task {
            name: "fair",
            mode: Mode::Bmc(30),
            asserts: Some(asserts.iter().filter(|l| fair(l)).cloned().collect()),
            why_bounded: "the bounds and the lag identity are inductive on paper, and with the stage and sweep \
                          rules (a_fair_stage*, a_fair_swept_zero) and the proven forwarding rule assumed, \
                          2-induction has no counterexample left but one step of SWRR arithmetic: that the \
                          argmax winner's added credit is positive when the credits sum to zero and each is above \
                          -W. Yices did not decide that step in 12 minutes (nor the step alone, as one \
                          combinational implication, in 6); 30 cycles cover reset, the 16-cycle clear sweep and \
                          about a dozen decisions of the tracked connection",
            arrays: true,
            without: &[],
            // The proven forwarding and sweep rules (the pick works on the
            // stored credits) prune the search; `prove` proves them without
            // the fixed-request assumption.
            lean_on_proven: true,
            connections: None,
            solver: None,
        },
        Task {
            name: "cover",
            mode: Mode::Cover(26),
            asserts: None,
            why_bounded: "",
            arrays: false,
            without: &[],
            lean_on_proven: false,
            connections: None,
            solver: None,
        },
    ]
}
