//! `conn_table` RTL: the generator of the cycle model
//! [`mrnic_model::conn_table`], with the same ports (the model's
//! [`PortDef`](mrnic_model::block::PortDef) list plus `clk`) and the same
//! cycle timing. The model's doc comment is the specification: lookups with
//! the reference's NO_CONN and bad-path answers, latency `L + 1`, one lookup
//! and one read per cycle, forwarding of the last `L` cycles' writes, output
//! FIFOs and the clear sweep.
//!
//! Structure:
//! - memories: `ctx_lk_mem` and `ctx_tx_mem` (two copies of the context,
//!   one read port each, both written by `s_wr`), and one `stream<i>_mem`
//!   per stream written by `s_st`; all registered reads (a second register
//!   with `READ_LATENCY = 2`), all cleared by the reset sweep;
//! - lookup stages `p1..pL` and read stages `r1..rL` carrying the request;
//! - forwarding registers `fw0..fw{L-1}` holding each cycle's `s_wr` and
//!   `s_st` writes; the answer stage applies the matching ones, oldest first;
//! - three output FIFOs (`m_lk`, `m_nack`, `m_rd`), payload zero while
//!   empty; `stat_*` pulses registered from the answer stage.

use mrnic_model::conn_table::{self as model, ConnTableParams, ParamError, NACK_BAD_HDR, NACK_NO_CONN};
use mrnic_proto::tables::{conn, conn_stream};

use crate::expr::{cat, lit, mux, zext, Expr, Signal};
use crate::ir::{set, MemStyle, Module};
use crate::param::ParamExpr;
use crate::ports::{declare, offsets, pack, read_latency};
use crate::sack_gen::fifo_in_flight;
use crate::Reg;

crate::block_api!(mrnic_model::conn_table, ConnTableParams, ParamError);

/// One cycle's writes, kept for forwarding.
struct Fw {
    wr_valid: Reg,
    wr_addr: Reg,
    wr_ctx: Reg,
    st_valid: Reg,
    st_conn: Reg,
    st_stream: Reg,
    st_clear: Reg,
    st_data: Reg,
}

fn build(p: &ConnTableParams) -> Module {
    let l = p.read_latency;
    let (cb, sb) = (p.conn_bits, p.stream_bits);
    let cw = p.ctx_bits();
    let sw = p.stream_state_bits();
    let depth = p.fifo_depth();
    let fb = depth.trailing_zeros();

    let mut m = Module::new(model::NAME);
    m.describe("connection context lookup (NO_CONN and path checks) and update, per-stream receive state, a read port");
    let conns_p = m.param("CONNS", u64::from(p.conns), "connection slots (power of 2)");
    let streams_p = m.param("STREAMS", u64::from(p.streams), "streams per connection (power of 2)");
    let lat_p = m.param("READ_LATENCY", u64::from(l), "table memory read latency in cycles (1 or 2)");
    let fifo_p = m.localparam("FIFO_DEPTH", u64::from(depth), "output FIFO entries: power of 2 >= READ_LATENCY + 2");
    m.param_check(
        "sizes",
        conns_p
            .expr()
            .ge(2u32)
            .and(conns_p.expr().eq(ParamExpr::Const(1) << conns_p.expr().clog2()))
            .and(streams_p.expr().ge(1u32))
            .and(streams_p.expr().le(u64::from(model::MAX_STREAMS)))
            .and(streams_p.expr().eq(ParamExpr::Const(1) << streams_p.expr().clog2())),
        "CONNS and STREAMS must be powers of 2, CONNS at least 2, STREAMS at most 64",
    );
    m.param_check(
        "read_latency",
        lat_p.expr().ge(1u32).and(lat_p.expr().le(2u32)).and(fifo_p.expr().ge(lat_p.expr() + 2u32)),
        "READ_LATENCY must be 1 or 2, and FIFO_DEPTH at least READ_LATENCY + 2",
    );

    let (clk, sig) = declare(&mut m, &model::ports(p));
    let port = |n: &str| sig[n].clone();
    let rst = port("rst");
    m.clock_domain(&clk, &rst);
    let w_ = |m: &mut Module, n: &str, w: u32, c: &str, e: Expr| -> Signal {
        let s = m.wire(n, w, c);
        m.assign(&s, e);
        s
    };

    // ---- handshakes, sweep, pipeline registers ----
    let init = m.reg("init", 1, 1, "clear sweep running: one slot of every memory zeroed per cycle");
    let init_addr = m.reg("init_addr", cb, 0, "slot the sweep zeroes this cycle");
    m.next(crate::if_then(
        &init.q,
        vec![
            set(&init_addr.next, init_addr.q.expr() + lit(cb, 1)),
            crate::if_then(init_addr.q.expr().eq(lit(cb, u64::from(p.conns - 1))), vec![set(&init.next, lit(1, 0))]),
        ],
    ));
    let ready = init.q.expr().logic_not();
    m.assign(port("s_wr_ready"), ready.clone());
    m.assign(port("s_st_ready"), ready.clone());
    let wr_fire =
        w_(&mut m, "wr_fire", 1, "context write handshake", port("s_wr_valid").expr().logic_and(ready.clone()));
    let st_fire = w_(&mut m, "st_fire", 1, "stream write handshake", port("s_st_valid").expr().logic_and(ready));
    let lk_fire = m.wire("lk_fire", 1, "lookup handshake");
    let rd_fire = m.wire("rd_fire", 1, "read handshake");

    let lk_fields = p.lk_fields();
    let lk_off = offsets(&lk_fields);
    let kw: u32 = lk_fields.iter().map(|f| f.1).sum();
    let lk_in = pack(&lk_fields, |n| port(&format!("s_lk_{n}")).expr());
    let lk_stages: Vec<(Reg, Reg)> = (1..=l)
        .map(|j| {
            (
                m.reg(&format!("p{j}_valid"), 1, 0, &format!("a lookup is {j} cycle(s) past its handshake")),
                m.reg_no_reset(&format!("p{j}_lk"), kw, "the lookup, fields as on s_lk"),
            )
        })
        .collect();
    let rd_stages: Vec<(Reg, Reg)> = (1..=l)
        .map(|j| {
            (
                m.reg(&format!("r{j}_valid"), 1, 0, &format!("a read is {j} cycle(s) past its handshake")),
                m.reg_no_reset(&format!("r{j}_conn"), cb, "its slot"),
            )
        })
        .collect();
    m.next(set(&lk_stages[0].0.next, &lk_fire));
    m.next(set(&lk_stages[0].1.next, lk_in));
    m.next(set(&rd_stages[0].0.next, &rd_fire));
    m.next(set(&rd_stages[0].1.next, port("s_rd_conn")));
    for j in 1..l as usize {
        for s in [&lk_stages, &rd_stages] {
            m.next(set(&s[j].0.next, &s[j - 1].0.q));
            m.next(set(&s[j].1.next, &s[j - 1].1.q));
        }
    }
    let (lk_valid, lk_q) = (lk_stages[l as usize - 1].0.q.clone(), lk_stages[l as usize - 1].1.q.clone());
    let (rdv, rd_q) = (rd_stages[l as usize - 1].0.q.clone(), rd_stages[l as usize - 1].1.q.clone());
    let k = |n: &str| -> Expr {
        let (o, w) = lk_off[n];
        lk_q.slice(o + w - 1, o)
    };

    // ---- memories ----
    let wr_addr = port("s_wr_local_id").slice(cb - 1, 0);
    let wr_ctx = w_(
        &mut m,
        "wr_ctx",
        cw,
        "the context s_wr writes, packed as proto::tables::conn",
        cat(&[
            port("s_wr_paths").expr(),
            port("s_wr_remote_addr").expr(),
            port("s_wr_remote_id").expr(),
            port("s_wr_local_id").expr(),
            port("s_wr_entry_valid").expr(),
        ]),
    );
    let ctx_we = init.q.expr().logic_or(&wr_fire);
    let ctx_wa = mux(&init.q, &init_addr.q, wr_addr);
    let ctx_wd = mux(&init.q, lit(cw, 0), &wr_ctx);
    let lk_addr = port("s_lk_dst_conn").slice(cb - 1, 0);
    let mut ctx_rd = vec![];
    let mut ctx_mems = vec![];
    for (name, en, addr, what) in [
        ("ctx_lk", &lk_fire, lk_addr.clone(), "receive lookups"),
        ("ctx_tx", &rd_fire, port("s_rd_conn").expr(), "transmit reads"),
    ] {
        let mem = m.memory(
            name,
            cw,
            &conns_p,
            MemStyle::Block,
            &format!(
                "connection contexts {{paths, remote_addr, remote_id, local_id, valid}}, the copy that serves {what}; \
                 written by the clear sweep or s_wr"
            ),
        );
        m.mem_write(&mem, ctx_we.clone(), ctx_wa.clone(), ctx_wd.clone());
        ctx_rd.push(read_latency(&mut m, &mem, name, en, addr, l));
        ctx_mems.push(mem);
    }
    let st_data = w_(
        &mut m,
        "st_data",
        sw,
        "the stream state s_st writes {active, completed_msn}",
        cat(&[port("s_st_active").expr(), port("s_st_completed_msn").expr()]),
    );
    let st_stream_is = |stream: Expr, clear: Expr, i: u32| -> Expr {
        if p.streams == 1 {
            lit(1, 1)
        } else {
            clear.logic_or(stream.eq(lit(sb, u64::from(i))))
        }
    };
    let mut stream_rd = vec![];
    let mut stream_mems = vec![];
    for i in 0..p.streams {
        let mem = m.memory(
            &format!("stream{i}"),
            sw,
            &conns_p,
            MemStyle::Block,
            &format!("stream {i}'s state per connection {{active, completed_msn}}; written by the sweep or s_st"),
        );
        let hit = st_stream_is(port("s_st_stream").expr(), port("s_st_clear").expr(), i);
        m.mem_write(
            &mem,
            init.q.expr().logic_or(st_fire.expr().logic_and(hit)),
            mux(&init.q, &init_addr.q, port("s_st_conn")),
            mux(init.q.expr().logic_or(port("s_st_clear")), lit(sw, 0), &st_data),
        );
        stream_rd.push(read_latency(&mut m, &mem, &format!("stream{i}"), &lk_fire, lk_addr.clone(), l));
        stream_mems.push(mem);
    }

    // ---- forwarding ----
    m.comment("A read cannot see the writes of the READ_LATENCY cycles after it: apply them, oldest first.");
    let fws: Vec<Fw> = (0..l)
        .map(|j| {
            let ago = format!("{} cycle(s) ago", j + 1);
            Fw {
                wr_valid: m.reg(&format!("fw{j}_wr_valid"), 1, 0, &format!("a context write {ago}")),
                wr_addr: m.reg_no_reset(&format!("fw{j}_wr_addr"), cb, "its slot"),
                wr_ctx: m.reg_no_reset(&format!("fw{j}_wr_ctx"), cw, "the context written"),
                st_valid: m.reg(&format!("fw{j}_st_valid"), 1, 0, &format!("a stream write {ago}")),
                st_conn: m.reg_no_reset(&format!("fw{j}_st_conn"), cb, "its slot"),
                st_stream: m.reg_no_reset(&format!("fw{j}_st_stream"), sb, "its stream"),
                st_clear: m.reg_no_reset(&format!("fw{j}_st_clear"), 1, "it cleared every stream"),
                st_data: m.reg_no_reset(&format!("fw{j}_st_data"), sw, "the state written"),
            }
        })
        .collect();
    let f0 = &fws[0];
    for (r, e) in [
        (&f0.wr_valid, wr_fire.expr()),
        (&f0.wr_addr, port("s_wr_local_id").slice(cb - 1, 0)),
        (&f0.wr_ctx, wr_ctx.expr()),
        (&f0.st_valid, st_fire.expr()),
        (&f0.st_conn, port("s_st_conn").expr()),
        (&f0.st_stream, port("s_st_stream").expr()),
        (&f0.st_clear, port("s_st_clear").expr()),
        (&f0.st_data, st_data.expr()),
    ] {
        m.next(set(&r.next, e));
    }
    for j in 1..fws.len() {
        let (a, b) = (&fws[j], &fws[j - 1]);
        for (r, q) in [
            (&a.wr_valid, &b.wr_valid),
            (&a.wr_addr, &b.wr_addr),
            (&a.wr_ctx, &b.wr_ctx),
            (&a.st_valid, &b.st_valid),
            (&a.st_conn, &b.st_conn),
            (&a.st_stream, &b.st_stream),
            (&a.st_clear, &b.st_clear),
            (&a.st_data, &b.st_data),
        ] {
            m.next(set(&r.next, &q.q));
        }
    }
    let fwd_ctx = |m: &mut Module, name: &str, base: &Signal, addr: Expr| -> Signal {
        let mut e: Expr = base.expr();
        for f in fws.iter().rev() {
            e = mux(f.wr_valid.q.expr().logic_and(f.wr_addr.q.expr().eq(addr.clone())), &f.wr_ctx.q, e);
        }
        let s = m.wire(name, cw, "the context with the writes made since the read");
        m.assign(&s, e);
        s
    };
    let lk_slot = lk_q.slice(lk_off["dst_conn"].0 + cb - 1, lk_off["dst_conn"].0);
    let ctx = fwd_ctx(&mut m, "lk_ctx", &ctx_rd[0], lk_slot.clone());
    let rctx = fwd_ctx(&mut m, "rd_ctx", &ctx_rd[1], rd_q.expr());
    let mut streams = vec![];
    for (i, base) in stream_rd.iter().enumerate() {
        let mut e: Expr = base.expr();
        for f in fws.iter().rev() {
            let hit = f.st_valid.q.expr().logic_and(f.st_conn.q.expr().eq(lk_slot.clone())).logic_and(st_stream_is(
                f.st_stream.q.expr(),
                f.st_clear.q.expr(),
                i as u32,
            ));
            e = mux(hit, mux(&f.st_clear.q, lit(sw, 0), &f.st_data.q), e);
        }
        streams.push(w_(&mut m, &format!("lk_stream{i}"), sw, "the stream's state with the writes since the read", e));
    }

    // ---- answer stage ----
    let cf = |s: &Signal, f: &mrnic_proto::tables::TableField| -> Expr {
        let o = conn::TABLE.lsb(f.name).expect("field of the conn table");
        s.slice(o + f.width - 1, o)
    };
    let hit = w_(
        &mut m,
        "hit",
        1,
        "the slot is open and its whole local id is dst_conn",
        cf(&ctx, &conn::VALID).logic_and(cf(&ctx, &conn::LOCAL_ID).eq(k("dst_conn"))),
    );
    let path_ok = w_(
        &mut m,
        "path_ok",
        1,
        "path_id below the connection's path count",
        k("path_id").lt(zext(cf(&ctx, &conn::PATHS), 8)),
    );
    let is_ack = w_(&mut m, "is_ack", 1, "a SACK or NACK lookup (op 2 or 3)", lk_q.bit(lk_off["op"].0 + 1));
    let is_data = w_(&mut m, "is_data", 1, "a DATA lookup", k("op").eq(lit(2, 0)));
    let from_peer = w_(
        &mut m,
        "from_peer",
        1,
        "the packet's IPv4 source is the connection's peer (a connection is bound to its address)",
        cf(&ctx, &conn::REMOTE_ADDR).eq(k("src_addr")),
    );
    let ok = w_(
        &mut m,
        "ok",
        1,
        "the packet goes on",
        hit.expr().logic_and(&from_peer).logic_and(is_ack.expr().logic_or(&path_ok)),
    );
    let no_conn = w_(
        &mut m,
        "no_conn",
        1,
        "DATA or PROBE for no connection",
        lk_valid.expr().logic_and(is_ack.expr().logic_not()).logic_and(hit.expr().logic_not()),
    );
    let bad_path = w_(
        &mut m,
        "bad_path",
        1,
        "DATA or PROBE on a path the connection does not have",
        lk_valid
            .expr()
            .logic_and(is_ack.expr().logic_not())
            .logic_and(&hit)
            .logic_and(&from_peer)
            .logic_and(path_ok.expr().logic_not()),
    );
    let from_other = hit.expr().logic_and(from_peer.expr().logic_not());
    let bad_src = w_(
        &mut m,
        "bad_src",
        1,
        "DATA or PROBE for a connection from a source that is not its peer: dropped, not answered",
        lk_valid.expr().logic_and(is_ack.expr().logic_not()).logic_and(&from_other),
    );
    let ack_bad_src = w_(
        &mut m,
        "ack_bad_src",
        1,
        "SACK or NACK for a connection from a source that is not its peer: dropped",
        lk_valid.expr().logic_and(&is_ack).logic_and(&from_other),
    );
    let ack_no_conn = w_(
        &mut m,
        "ack_no_conn",
        1,
        "SACK or NACK for no connection",
        lk_valid.expr().logic_and(&is_ack).logic_and(hit.expr().logic_not()),
    );
    let nack_push = w_(
        &mut m,
        "nack_push",
        1,
        "this lookup is answered with a NACK",
        no_conn.expr().logic_or(bad_path.expr().logic_and(&is_data)),
    );

    let sf = |s: &Signal, f: &mrnic_proto::tables::TableField| -> Expr {
        let o = conn_stream::TABLE.lsb(f.name).expect("field of the conn_stream table");
        s.slice(o + f.width - 1, o)
    };
    let active: Vec<Expr> = streams.iter().rev().map(|s| sf(s, &conn_stream::ACTIVE)).collect();
    let msns: Vec<Expr> = streams.iter().rev().map(|s| sf(s, &conn_stream::COMPLETED_MSN)).collect();
    let if_hit = |e: Expr, w: u32| mux(&hit, e, lit(w, 0));
    let lk_entry = pack(&p.lk_out_fields(), |n| match n {
        "op" => k("op"),
        "hit" => hit.expr(),
        "ok" => ok.expr(),
        "conn" => lk_slot.clone(),
        "remote_id" => if_hit(cf(&ctx, &conn::REMOTE_ID), 24),
        "remote_addr" => if_hit(cf(&ctx, &conn::REMOTE_ADDR), 32),
        "paths" => if_hit(cf(&ctx, &conn::PATHS), 6),
        "active" => if_hit(cat(&active), p.streams),
        "msns" => if_hit(cat(&msns), 24 * p.streams),
        _ => unreachable!("m_lk field {n}"),
    });
    let nack_entry = pack(&p.nack_fields(), |n| match n {
        "dst_addr" => mux(&hit, cf(&ctx, &conn::REMOTE_ADDR), k("src_addr")),
        "dst_conn" => mux(&hit, cf(&ctx, &conn::REMOTE_ID), k("dst_conn")),
        "code" => mux(&hit, lit(8, u64::from(NACK_BAD_HDR)), lit(8, u64::from(NACK_NO_CONN))),
        "stream_id" => mux(&is_data, k("stream_id"), lit(8, 0)),
        "msn" => mux(&is_data, k("msn"), lit(24, 0)),
        "echo_ts" => k("tx_ts"),
        other => k(other),
    });
    let rd_entry = pack(&p.rd_out_fields(), |n| match n {
        "conn" => rd_q.expr(),
        "entry_valid" => cf(&rctx, &conn::VALID),
        "local_id" => cf(&rctx, &conn::LOCAL_ID),
        "remote_id" => cf(&rctx, &conn::REMOTE_ID),
        "remote_addr" => cf(&rctx, &conn::REMOTE_ADDR),
        "paths" => cf(&rctx, &conn::PATHS),
        _ => unreachable!("m_rd field {n}"),
    });

    // ---- output FIFOs ----
    let in_flight = |m: &mut Module, name: &str, stages: &[(Reg, Reg)]| -> Signal {
        let sum = stages.iter().map(|s| zext(&s.0.q, fb + 1)).reduce(|a, b| a + b).expect("at least one stage");
        w_(m, name, fb + 1, "requests in the read pipeline", sum)
    };
    let lk_in = in_flight(&mut m, "lk_inflight", &lk_stages);
    let rd_in = in_flight(&mut m, "rd_inflight", &rd_stages);
    let mut counts = vec![];
    for (ch, fields, push, entry, fly) in [
        ("lk", p.lk_out_fields(), lk_valid.expr(), lk_entry, &lk_in),
        ("nack", p.nack_fields(), nack_push.expr(), nack_entry, &lk_in),
        ("rd", p.rd_out_fields(), rdv.expr(), rd_entry, &rd_in),
    ] {
        let width: u32 = fields.iter().map(|f| f.1).sum();
        let data = w_(&mut m, &format!("{ch}_push_data"), width, "the answer stage's entry for this FIFO", entry);
        let valid = port(&format!("m_{ch}_valid"));
        let pop = m.wire(&format!("{ch}_pop"), 1, "output handshake");
        m.assign(&pop, valid.expr().logic_and(port(&format!("m_{ch}_ready"))));
        let (v, shown, count) = fifo_in_flight(&mut m, ch, depth, &fly.expr(), &push, &pop, &data.expr(), width);
        m.assign(&valid, &v);
        let off = offsets(&fields);
        for (n, _, _) in &fields {
            let (o, w) = off[n];
            m.assign(port(&format!("m_{ch}_{n}")), shown.slice(o + w - 1, o));
        }
        counts.push(count);
    }
    m.comment("Ready from registers only: room for every request in flight plus this one.");
    let room = |c: &Signal, n: &Signal| (c.expr() + n).lt(lit(fb + 1, u64::from(depth)));
    m.assign(
        port("s_lk_ready"),
        init.q.expr().logic_not().logic_and(room(&counts[0], &lk_in)).logic_and(room(&counts[1], &lk_in)),
    );
    m.assign(port("s_rd_ready"), init.q.expr().logic_not().logic_and(room(&counts[2], &rd_in)));
    m.assign(&lk_fire, port("s_lk_valid").expr().logic_and(port("s_lk_ready")));
    m.assign(&rd_fire, port("s_rd_valid").expr().logic_and(port("s_rd_ready")));

    let no_conn_c = no_conn.expr();
    let bad_src_c = bad_src.expr();
    for (n, e) in [
        ("no_conn", no_conn),
        ("ack_no_conn", ack_no_conn),
        ("bad_path", bad_path),
        ("bad_src", bad_src),
        ("ack_bad_src", ack_bad_src),
    ] {
        let r = m.reg(&format!("stat_{n}"), 1, 0, "counter pulse, one cycle after the answer");
        m.next(set(&r.next, e));
        m.assign(port(&format!("stat_{n}")), &r.q);
    }
    // Interface rules: assumed on the inputs, asserted on the outputs.
    crate::formal::every_channel(&mut m, &port("rst"));
    // Table rules: the answer stage works on the words stored now (the
    // forwarding applies every write its read could not see, so a context
    // or stream write is seen by the next lookup), and the sweep runs alone.
    let mut busy = lit(1, 0);
    for st in lk_stages.iter().chain(&rd_stages) {
        busy = busy.logic_or(&st.0.q);
    }
    for f in &fws {
        busy = busy.logic_or(&f.wr_valid.q).logic_or(&f.st_valid.q);
    }
    let table = crate::formal::table_rmw;
    let stored = table(&mut m, "ctx_lk", &ctx_mems[0], &lk_valid, lk_slot.clone(), ctx.expr(), &init.q, busy.clone());
    table(&mut m, "ctx_tx", &ctx_mems[1], &rdv, rd_q.expr(), rctx.expr(), &init.q, busy.clone());
    for (i, (mem, word)) in stream_mems.iter().zip(&streams).enumerate() {
        table(&mut m, &format!("stream{i}"), mem, &lk_valid, lk_slot.clone(), word.expr(), &init.q, busy.clone());
    }
    let f_slot = m.formal_anyconst("f_ctx_slot", cb, "any connection slot");
    let copy_lk = m.formal_mem_word(&ctx_mems[0], "f_ctx_lk_copy", &f_slot);
    let copy_tx = m.formal_mem_word(&ctx_mems[1], "f_ctx_tx_copy", &f_slot);
    m.assert(
        "a_ctx_copies_agree",
        "the lookup and transmit copies of a context are the same word",
        copy_lk.expr().eq(&copy_tx),
    );
    // The safety rule: a packet goes on only for a connection open now
    // (on the stored context, so a close written before the answer wins)
    // whose whole local id it names, and on one of its paths unless it
    // is a SACK or NACK.
    m.assert(
        "a_lk_ok_open",
        "a lookup answered ok names an open connection by its whole local id, comes from its peer's address, on a path it has (DATA, PROBE)",
        crate::formal::implies(
            lk_valid.expr().logic_and(&ok),
            cf(&stored, &conn::VALID)
                .logic_and(cf(&stored, &conn::LOCAL_ID).eq(k("dst_conn")))
                .logic_and(cf(&stored, &conn::REMOTE_ADDR).eq(k("src_addr")))
                .logic_and(is_ack.expr().logic_or(k("path_id").lt(zext(cf(&stored, &conn::PATHS), 8)))),
        ),
    );
    m.cover("c_lk_ok", "a lookup is answered ok", lk_valid.expr().logic_and(&ok));
    m.cover("c_lk_no_conn", "a lookup is answered with NO_CONN", no_conn_c);
    m.cover("c_lk_bad_src", "a lookup of an open connection from another source is dropped", bad_src_c);
    m.cover(
        "c_lk_after_write",
        "a lookup answered in the cycle after a context write to its slot (through forwarding)",
        lk_valid.expr().logic_and(fws[0].wr_valid.q.expr().logic_and(fws[0].wr_addr.q.expr().eq(lk_slot))),
    );
    m
}

/// How the properties of [`generate`]'s module are checked (see
/// [`crate::proof`]): the handshake, FIFO and table rules and the lookup
/// safety rule by k-induction (k covers the read latency); the covers
/// past the table's clear sweep.
pub fn formal_tasks(_asserts: &[String]) -> Vec<crate::proof::Task> {
    crate::proof::prove_and_cover(3, 30, true)
}
