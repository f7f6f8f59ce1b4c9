//! `rate_hint` RTL: the generator of the glue block
//! [`mrnic_model::rate_hint`], with the same ports (the model's list plus
//! `clk`) and the same cycle timing. The model's doc comment is the
//! specification.
//!
//! Structure: `last_mem` (CONNS x 32, block RAM, registered read, written
//! with `ts_now` at a `tap_new` handshake), the sweep address, `L` sweep
//! stages that follow each read to its act (the connection, and a
//! forwarded `ts_now` when a write to that connection came while its read
//! was in flight, since the memory's read returns the word as it was), the
//! `recent` flip-flops with their count, `L` registers of the connections
//! sack_gen took, and the reciprocal ROM on the hint.

use mrnic_model::rate_hint::{self as model, hint_of, ParamError, RateHintParams};

use crate::expr::{lit, mux, zext, Expr, Signal};
use crate::ir::{case, set, MemStyle, Module};
use crate::ports::{declare, read_latency};

crate::block_api!(mrnic_model::rate_hint, RateHintParams, ParamError);

/// Bits of the reciprocal ROM's index: `others` saturates at 255 (the
/// reference's `recip16` clamps its divisor at 256).
const ROM_BITS: u32 = 8;

fn build(p: &RateHintParams) -> Module {
    let cb = p.conn_bits;
    let l = p.read_latency;
    let conns = p.conns;
    let cw = cb + 1;

    let mut m = Module::new(model::NAME);
    m.describe("the receiver's fair-share hint: 1 / (connections with data in the last 2 x rto_min)");
    let conns_p = m.param("CONNS", u64::from(conns), "connection slots (power of 2)");
    let lat_p = m.param("READ_LATENCY", u64::from(l), "last_mem read latency in cycles (1 or 2)");
    let win_p = m.param("WINDOW", u64::from(p.window), "timestamp units a connection stays recent after its data");
    m.param_check(
        "sizes",
        conns_p.expr().ge(2u32).and(conns_p.expr().eq(crate::ParamExpr::Const(1) << conns_p.expr().clog2())),
        "CONNS must be a power of 2, at least 2",
    );
    m.param_check("read_latency", lat_p.expr().ge(1u32).and(lat_p.expr().le(2u32)), "READ_LATENCY must be 1 or 2");
    m.param_check("window", win_p.expr().ge(1u32), "WINDOW must be at least 1");

    let (clk, sig) = declare(&mut m, &model::ports(p));
    let port = |n: &str| sig[n].clone();
    let rst = port("rst");
    m.clock_domain(&clk, &rst);
    let ts_now = port("ts_now");
    let new_fire = m.wire_from(
        "new_fire",
        1,
        "sack_gen handed on a packet that set a new bit",
        port("tap_new_valid").expr().logic_and(port("tap_new_ready")),
    );
    let new_conn = port("tap_new_conn");
    let pkt_fire = m.wire_from(
        "pkt_fire",
        1,
        "sack_gen took a packet",
        port("tap_pkt_valid").expr().logic_and(port("tap_pkt_ready")),
    );

    // ---- last_mem and the sweep ----
    let last_mem = m.memory("last", 32, &conns_p, MemStyle::Block, "ts_now of each connection's last new data");
    let sweep = m.reg("sweep", cb, 0, "the connection the sweep reads now");
    m.next(set(&sweep.next, sweep.q.expr() + lit(cb, 1)));
    m.mem_write(&last_mem, new_fire.expr().logic_and(rst.expr().logic_not()), &new_conn, &ts_now);
    let rd_en = m.wire_from("last_rd_en", 1, "the sweep reads every cycle out of reset", rst.expr().logic_not());
    let rd = read_latency(&mut m, &last_mem, "last", &rd_en, &sweep.q, l);

    // Stage k holds the read issued k edges ago; a write to its
    // connection meanwhile is forwarded (the read returns the old word).
    let hit = |c: &Signal| new_fire.expr().logic_and(new_conn.expr().eq(c));
    let mut prev: Option<(Signal, Signal, Signal, Signal)> = None;
    for k in 1..=l {
        let v = m.reg(&format!("s{k}_valid"), 1, 0, "the sweep stage holds a read");
        let c = m.reg_no_reset(&format!("s{k}_conn"), cb, "the connection read");
        let fv = m.reg_no_reset(&format!("s{k}_fwd"), 1, "a write to the connection came after the read");
        let fd = m.reg_no_reset(&format!("s{k}_fwd_ts"), 32, "the newest such write's ts_now");
        match &prev {
            None => {
                m.next(set(&v.next, lit(1, 1)));
                m.next(set(&c.next, &sweep.q));
                m.next(set(&fv.next, hit(&sweep.q)));
                m.next(set(&fd.next, &ts_now));
            }
            Some((pv, pc, pf, pd)) => {
                m.next(set(&v.next, pv));
                m.next(set(&c.next, pc));
                m.next(set(&fv.next, pf.expr().logic_or(hit(pc))));
                m.next(set(&fd.next, mux(hit(pc), &ts_now, pd)));
            }
        }
        prev = Some((v.q, c.q, fv.q, fd.q));
    }
    let (act_v, act_c, act_f, act_d) = prev.expect("READ_LATENCY >= 1");
    let last = m.wire_from(
        "act_last",
        32,
        "the acting connection's last data, with this cycle's write",
        mux(hit(&act_c), &ts_now, mux(&act_f, &act_d, &rd)),
    );

    // ---- recent bits and their count ----
    let recent = m.reg("recent", conns, 0, "connections with data within the window");
    let count = m.reg("count", cw, 0, "recent bits set");
    let expired = m.wire_from(
        "expired",
        1,
        "the sweep clears the acting connection's recent bit",
        act_v
            .expr()
            .logic_and(recent.q.expr().bit_at(&act_c))
            .logic_and((ts_now.expr() - &last).ge(lit(32, u64::from(p.window)))),
    );
    let newly = m.wire_from(
        "newly_recent",
        1,
        "new data on a connection not recent",
        new_fire.expr().logic_and(recent.q.expr().bit_at(&new_conn).logic_not()),
    );
    let one_at = |c: &Signal| lit(conns, 1) << c.expr();
    let clear_mask = mux(&expired, one_at(&act_c), lit(conns, 0));
    let set_mask = mux(&new_fire, one_at(&new_conn), lit(conns, 0));
    m.next(set(&recent.next, (recent.q.expr() & !clear_mask) | set_mask));
    m.next(set(&count.next, count.q.expr() - zext(&expired, cw) + zext(&newly, cw)));

    // ---- the packets' connections, L cycles deep ----
    let mut pk: Expr = mux(&pkt_fire, port("tap_pkt_conn"), lit(cb, 0));
    for k in 1..=l {
        let r = m.reg(&format!("pkt{k}_conn"), cb, 0, "the connection sack_gen took this many cycles ago (0: none)");
        m.next(set(&r.next, pk));
        pk = r.q.expr();
    }
    let pkt_conn = m.wire_from("hint_conn", cb, "the connection sack_gen updates now", pk);

    // ---- the hint ----
    let others = m.wire_from(
        "others",
        cw,
        "recent connections other than the packet's",
        count.q.expr() - zext(recent.q.expr().bit_at(&pkt_conn), cw),
    );
    let idx: Expr = if cw <= ROM_BITS {
        zext(&others, ROM_BITS)
    } else {
        mux(others.slice(cw - 1, ROM_BITS).reduce_or(), lit(ROM_BITS, 255), others.slice(ROM_BITS - 1, 0))
    };
    let rom_idx = m.wire_from("rom_index", ROM_BITS, "others, saturated at 255", idx);
    let hint = port("hint");
    let arms = (0..1u32 << ROM_BITS)
        .map(|o| (vec![lit(ROM_BITS, u64::from(o))], vec![set(&hint, lit(16, u64::from(hint_of(o))))]));
    m.comb(vec![case(&rom_idx, arms.collect(), None)]);
    m
}
