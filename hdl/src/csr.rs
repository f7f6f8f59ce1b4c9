//! `csr` RTL: the generator of the cycle model [`mrnic_model::csr`], with
//! the same ports (declared from the model's [`PortDef`] list, plus `clk`)
//! and the same cycle timing. The model's doc comment is the
//! specification: register map, access types, AXI4-Lite behaviour, error
//! responses, the MR commit and the counters.
//!
//! Everything is built from the model's [`regmap`]: one register per field
//! of each RW register (`<reg>_reg` for a one-field register, else
//! `<reg>_<field>_reg`), one 32-bit counter per W1C register (`<reg>_reg`),
//! constants for RO registers; a write-address comparator per register
//! (`wr_hit_<reg>`) and one `case` on `s_axil_araddr` for the read data.
//! Holding registers `aw_*` and `w_*` take the two write channels
//! independently; `wr_exec` runs the write the cycle after both are held.

use std::collections::HashMap;

use mrnic_model::block::{Dir as ModelDir, PortDef};
use mrnic_model::csr::{self as model, regmap, resp, Access, CsrParams, ParamError, RegDef, DATA_BITS};
use mrnic_proto::Config;

use crate::expr::{cat, lit, mux, repl, zext, Expr, Signal};
use crate::ir::{case, if_then, set, Module, Reg};
use crate::param::{ParamExpr, Size};
use crate::{CheckErrors, Header};

/// Why the CSR block could not be generated for a config.
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

/// The `csr` module for `cfg`, design-rule checked.
pub fn generate(cfg: &Config) -> Result<Module, GenError> {
    let p = CsrParams::from_config(cfg)?;
    let m = build(&p);
    m.check()?;
    Ok(m)
}

/// The module printed as Verilog, with [`header`].
pub fn verilog(cfg: &Config) -> Result<String, GenError> {
    Ok(generate(cfg)?.to_verilog(&header(cfg))?)
}

fn port_size(d: &PortDef, sym: Option<&ParamExpr>) -> Size {
    match sym {
        Some(e) if e.eval() == Some(i64::from(d.width)) => Size::from(e.clone()),
        _ => Size::from(d.width),
    }
}

fn lower(name: &str) -> String {
    name.to_ascii_lowercase()
}

/// Storage of one register.
enum Store {
    /// Constant.
    Const,
    /// One register per field, in field order.
    Fields(Vec<Reg>),
    /// A 32-bit counter.
    Counter(Reg),
    /// Nothing stored (write-only pulse).
    None,
}

fn build(p: &CsrParams) -> Module {
    let map = regmap(p);
    let a = p.addr_bits();
    let d = DATA_BITS;

    let mut m = Module::new(model::NAME);
    m.describe("AXI4-Lite register block: configuration, memory-region table writes and counters");
    let addr_p = m.param("ADDR_W", u64::from(a), "AXI4-Lite address bits, as the register map needs");
    m.param_check(
        "addr_w",
        addr_p.expr().eq(u64::from(a)),
        "ADDR_W is fixed by the register map; regenerate the block for another map",
    );

    // Ports, from the model's list.
    let symbolic: HashMap<&str, ParamExpr> =
        [("s_axil_awaddr", addr_p.expr()), ("s_axil_araddr", addr_p.expr())].into_iter().collect();
    let defs = model::ports(p);
    let mut sig: HashMap<String, Signal> = HashMap::new();
    let mut group = "Clock and reset";
    m.group(group);
    let clk = m.input("clk", 1, "clock, rising edge");
    for def in &defs {
        if def.group != group {
            group = def.group;
            m.group(group);
        }
        let size = port_size(def, symbolic.get(def.name.as_str()));
        let s = match def.dir {
            ModelDir::In => m.input(&def.name, size, &def.comment),
            ModelDir::Out => m.output(&def.name, size, &def.comment),
        };
        sig.insert(def.name.clone(), s);
    }
    let port = |n: &str| sig[n].clone();
    let rst = port("rst");
    m.clock_domain(&clk, &rst);

    // ---- register storage, from the map ----
    let stores: Vec<Store> = map
        .iter()
        .map(|r| match r.access {
            Access::Ro => Store::Const,
            Access::WoPulse => Store::None,
            Access::W1c => Store::Counter(m.reg(&lower(r.name), d, 0, r.desc)),
            Access::Rw => Store::Fields(
                r.fields
                    .iter()
                    .map(|f| {
                        let base =
                            if r.fields.len() == 1 { lower(r.name) } else { format!("{}_{}", lower(r.name), f.name) };
                        m.reg(&base, f.width, u64::from(f.reset), &format!("{}: {}", r.name, f.desc))
                    })
                    .collect(),
            ),
        })
        .collect();
    let find = |n: &str| map.iter().position(|r| r.name == n).unwrap_or_else(|| panic!("no register {n}"));
    let field_q = |reg: &str, field: &str| -> Signal {
        let k = find(reg);
        let j = map[k].fields.iter().position(|f| f.name == field).expect("field");
        match &stores[k] {
            Store::Fields(v) => v[j].q.clone(),
            _ => panic!("{reg} stores no fields"),
        }
    };

    // ---- channel state ----
    let aw_full = m.reg("aw_full", 1, 0, "a write address is held");
    let aw_addr = m.reg_no_reset("aw_addr", a, "the held write address");
    let aw_prot = m.reg_no_reset("aw_prot", 3, "the held write protection");
    let w_full = m.reg("w_full", 1, 0, "write data is held");
    let w_data = m.reg_no_reset("w_data", d, "the held write data");
    let w_strb = m.reg_no_reset("w_strb", d / 8, "the held write strobes");
    let b_valid = m.reg("b_valid", 1, 0, "write response offered");
    let b_resp = m.reg("b_resp", 2, 0, "write response code");
    let r_valid = m.reg("r_valid", 1, 0, "read data offered");
    let r_data = m.reg("r_data", d, 0, "read data");
    let r_resp = m.reg("r_resp", 2, 0, "read response code");
    let mr_pending = m.reg("mr_pending", 1, 0, "an MR_COMMIT waits for m_mr_ready; its write response waits too");
    let mr_free = m.reg("mr_free", 1, 0, "the pending commit frees the slot (MR_COMMIT.free)");

    // ---- handshakes ----
    let busy = m.wire("wr_busy", 1, "a write response or an MR commit is pending: no new write is taken");
    m.assign(&busy, b_valid.q.expr().logic_or(&mr_pending.q));
    m.assign(port("s_axil_awready"), aw_full.q.expr().logic_not().logic_and(busy.expr().logic_not()));
    m.assign(port("s_axil_wready"), w_full.q.expr().logic_not().logic_and(busy.expr().logic_not()));
    m.assign(port("s_axil_arready"), r_valid.q.expr().logic_not());
    m.assign(port("s_axil_bvalid"), &b_valid.q);
    m.assign(port("s_axil_bresp"), &b_resp.q);
    m.assign(port("s_axil_rvalid"), &r_valid.q);
    m.assign(port("s_axil_rdata"), &r_data.q);
    m.assign(port("s_axil_rresp"), &r_resp.q);
    let aw_fire = m.wire("aw_fire", 1, "write address handshake");
    m.assign(&aw_fire, port("s_axil_awvalid").expr().logic_and(port("s_axil_awready")));
    let w_fire = m.wire("w_fire", 1, "write data handshake");
    m.assign(&w_fire, port("s_axil_wvalid").expr().logic_and(port("s_axil_wready")));
    let ar_fire = m.wire("ar_fire", 1, "read address handshake");
    m.assign(&ar_fire, port("s_axil_arvalid").expr().logic_and(port("s_axil_arready")));
    let mr_fire = m.wire("mr_fire", 1, "MR table write handshake");
    m.assign(&mr_fire, mr_pending.q.expr().logic_and(port("m_mr_ready")));

    m.next(if_then(
        &aw_fire,
        vec![
            set(&aw_full.next, lit(1, 1)),
            set(&aw_addr.next, port("s_axil_awaddr")),
            set(&aw_prot.next, port("s_axil_awprot")),
        ],
    ));
    m.next(if_then(
        &w_fire,
        vec![
            set(&w_full.next, lit(1, 1)),
            set(&w_data.next, port("s_axil_wdata")),
            set(&w_strb.next, port("s_axil_wstrb")),
        ],
    ));

    // ---- protection policy ----
    let (priv_only, secure_only, data_only) =
        (field_q("CONTROL", "priv_only"), field_q("CONTROL", "secure_only"), field_q("CONTROL", "data_only"));
    let refused = |m: &mut Module, name: &str, prot: Expr| -> Signal {
        let pw = m.wire(&format!("{name}_prot"), 3, "protection of the access");
        m.assign(&pw, prot);
        let w = m.wire(&format!("{name}_refused"), 1, "CONTROL's policy refuses the access");
        m.assign(
            &w,
            priv_only
                .expr()
                .logic_and(pw.bit(0).logic_not())
                .logic_or(secure_only.expr().logic_and(pw.bit(1)))
                .logic_or(data_only.expr().logic_and(pw.bit(2))),
        );
        w
    };

    // ---- write execute ----
    m.comment("A write executes the cycle after both of its channels are held.");
    let exec = m.wire("wr_exec", 1, "the held write executes this cycle");
    m.assign(&exec, aw_full.q.expr().logic_and(&w_full.q));
    let wmask = m.wire("wr_mask", d, "w_strb expanded to bits");
    m.assign(&wmask, cat(&(0..d / 8).rev().map(|b| repl(8, w_strb.q.bit(b))).collect::<Vec<_>>()));
    let wbits = m.wire("wr_bits", d, "write data in the strobed bytes");
    m.assign(&wbits, w_data.q.expr() & &wmask);
    let hits: Vec<Signal> = map
        .iter()
        .map(|r| {
            let h = m.wire(&format!("wr_hit_{}", lower(r.name)), 1, &format!("the held write address is {}", r.name));
            m.assign(&h, aw_addr.q.expr().eq(lit(a, u64::from(r.offset))));
            h
        })
        .collect();
    let w_hit = m.wire("wr_hit", 1, "the held write address is mapped");
    m.assign(&w_hit, cat(&hits.iter().map(Expr::from).collect::<Vec<_>>()).reduce_or());
    let w_misaligned = m.wire("wr_misaligned", 1, "the held write address is not 32-bit aligned");
    m.assign(&w_misaligned, aw_addr.q.slice(1, 0).ne(lit(2, 0)));
    let w_refused = refused(&mut m, "wr", aw_prot.q.expr());
    let w_ok = m.wire("wr_ok", 1, "the held write executes on a register this cycle");
    m.assign(&w_ok, exec.expr().logic_and(w_refused.expr().logic_not()));
    let w_resp = m.wire("wr_resp", 2, "response of the held write");
    m.assign(&w_resp, response(&w_misaligned, &w_hit, &w_refused));

    let mut commit_go: Option<Signal> = None;
    for (k, r) in map.iter().enumerate() {
        let en = w_ok.expr().logic_and(&hits[k]);
        match &stores[k] {
            Store::Const => {}
            Store::Fields(regs) => {
                let stmts = r
                    .fields
                    .iter()
                    .zip(regs)
                    .map(|(f, reg)| {
                        let (hi, lo) = (f.lsb + f.width - 1, f.lsb);
                        let keep = reg.q.expr() & !wmask.slice(hi, lo);
                        set(&reg.next, keep | (w_data.q.slice(hi, lo) & wmask.slice(hi, lo)))
                    })
                    .collect();
                m.next(if_then(en, stmts));
            }
            Store::Counter(reg) => {
                let stat = port(r.stat.expect("a counter has a stat input"));
                let base = lower(r.name);
                let clr = m.wire(&format!("{base}_clr"), d, "bits cleared by a W1C write this cycle");
                m.assign(&clr, mux(en, &wbits, lit(d, 0)));
                let kept = m.wire(&format!("{base}_kept"), d, "the counter after the clear");
                m.assign(&kept, reg.q.expr() & !clr.expr());
                m.comment("Saturating: an event at the top is not counted.");
                m.next(set(
                    &reg.next,
                    mux(stat.expr().logic_and(kept.expr().reduce_and().logic_not()), kept.expr() + lit(d, 1), &kept),
                ));
            }
            Store::None => {
                if r.name == "MR_COMMIT" {
                    let go = m.wire("mr_commit_go", 1, "MR_COMMIT written with go = 1");
                    m.assign(&go, en.logic_and(wbits.bit(r.field("go").lsb)));
                    commit_go = Some(go);
                }
            }
        }
    }
    let go = commit_go.expect("the map has MR_COMMIT");
    let free_bit = map[find("MR_COMMIT")].field("free").lsb;

    // Write response and the MR commit; a write is never executed while
    // one is pending (wr_busy blocks both channels), so the order of these
    // statements only matters for readability.
    m.next(if_then(b_valid.q.expr().logic_and(port("s_axil_bready")), vec![set(&b_valid.next, lit(1, 0))]));
    m.next(if_then(
        &mr_fire,
        vec![
            set(&mr_pending.next, lit(1, 0)),
            set(&b_valid.next, lit(1, 1)),
            set(&b_resp.next, lit(2, u64::from(resp::OKAY))),
        ],
    ));
    m.next(if_then(
        &exec,
        vec![
            set(&aw_full.next, lit(1, 0)),
            set(&w_full.next, lit(1, 0)),
            crate::ir::if_else(
                &go,
                vec![set(&mr_pending.next, lit(1, 1)), set(&mr_free.next, wbits.bit(free_bit))],
                vec![set(&b_valid.next, lit(1, 1)), set(&b_resp.next, &w_resp)],
            ),
        ],
    ));

    // ---- read ----
    m.comment("A read executes at its handshake, on this cycle's register values.");
    let rd_value = m.wire("rd_value", d, "value of the register at s_axil_araddr");
    let rd_hit = m.wire("rd_hit", 1, "s_axil_araddr is mapped");
    let araddr = port("s_axil_araddr");
    let arms = map
        .iter()
        .zip(&stores)
        .map(|(r, s)| {
            let v = read_value(r, s);
            (vec![lit(a, u64::from(r.offset))], vec![set(&rd_value, v), set(&rd_hit, lit(1, 1))])
        })
        .collect();
    m.comb(vec![
        set(&rd_value, lit(d, 0)),
        set(&rd_hit, lit(1, 0)),
        case(&araddr, arms, Some(vec![set(&rd_hit, lit(1, 0))])),
    ]);
    let rd_misaligned = m.wire("rd_misaligned", 1, "s_axil_araddr is not 32-bit aligned");
    m.assign(&rd_misaligned, araddr.slice(1, 0).ne(lit(2, 0)));
    let rd_refused = refused(&mut m, "rd", port("s_axil_arprot").expr());
    let rd_resp = m.wire("rd_resp", 2, "response of the read");
    m.assign(&rd_resp, response(&rd_misaligned, &rd_hit, &rd_refused));
    m.next(if_then(r_valid.q.expr().logic_and(port("s_axil_rready")), vec![set(&r_valid.next, lit(1, 0))]));
    m.next(if_then(
        &ar_fire,
        vec![
            set(&r_valid.next, lit(1, 1)),
            set(&r_resp.next, &rd_resp),
            set(&r_data.next, mux(rd_resp.expr().eq(lit(2, u64::from(resp::OKAY))), &rd_value, lit(d, 0))),
        ],
    ));

    // ---- outputs ----
    m.assign(port("cfg_enable"), field_q("CONTROL", "enable"));
    m.assign(port("cfg_udp_port"), field_q("UDP_PORT", "port"));
    m.assign(port("m_mr_valid"), &mr_pending.q);
    m.assign(port("m_mr_entry_valid"), mr_free.q.expr().logic_not());
    m.assign(port("m_mr_key"), field_q("MR_KEY", "key"));
    m.assign(port("m_mr_remote_write"), field_q("MR_ACCESS", "remote_write"));
    m.assign(port("m_mr_recv"), field_q("MR_ACCESS", "recv"));
    m.assign(port("m_mr_base"), cat(&[field_q("MR_BASE_HI", "base").expr(), field_q("MR_BASE_LO", "base").expr()]));
    m.assign(port("m_mr_len"), cat(&[field_q("MR_LEN_HI", "len").expr(), field_q("MR_LEN_LO", "len").expr()]));
    // Interface rules. The ghost request counters are held exactly by the
    // channel registers: a taken write address sits in aw_full until the
    // write executes, then in the pending response (b_valid or mr_pending)
    // until B; likewise the data; a taken read address is r_valid.
    let g = crate::formal::axi_lite_slave(&mut m, "s_axil", &rst);
    crate::formal::every_channel(&mut m, &rst);
    let cwo = crate::formal::LITE_OPEN_BITS;
    let one = |e: Expr| zext(e, cwo);
    m.assert(
        "a_axil_aw_open_held",
        "write addresses open = the held address + the pending response",
        g.aw_open.expr().eq(one(aw_full.q.expr()) + one(busy.expr())),
    );
    m.assert(
        "a_axil_w_open_held",
        "write data open = the held data + the pending response",
        g.w_open.expr().eq(one(w_full.q.expr()) + one(busy.expr())),
    );
    m.assert(
        "a_axil_ar_open_held",
        "read addresses open = the read response offered",
        g.ar_open.expr().eq(one(r_valid.q.expr())),
    );
    m.assert(
        "a_axil_one_response",
        "a write response and an MR commit are never pending together, nor a pending response with a held request",
        b_valid
            .q
            .expr()
            .logic_and(&mr_pending.q)
            .logic_not()
            .logic_and(busy.expr().logic_and(aw_full.q.expr().logic_or(&w_full.q)).logic_not()),
    );
    let fire = |n: &str| port(&format!("s_axil_{n}valid")).expr().logic_and(port(&format!("s_axil_{n}ready")));
    m.cover("c_axil_write_answered", "a write is answered on B", fire("b"));
    m.cover("c_axil_read_answered", "a read is answered on R", fire("r"));
    m.cover(
        "c_mr_commit",
        "an MR commit reaches the table port",
        port("m_mr_valid").expr().logic_and(port("m_mr_ready")),
    );
    m
}

/// SLVERR if misaligned, DECERR if unmapped, SLVERR if refused, else OKAY.
fn response(misaligned: &Signal, hit: &Signal, refused: &Signal) -> Expr {
    mux(
        misaligned,
        lit(2, u64::from(resp::SLVERR)),
        mux(
            hit.expr().logic_not(),
            lit(2, u64::from(resp::DECERR)),
            mux(refused, lit(2, u64::from(resp::SLVERR)), lit(2, u64::from(resp::OKAY))),
        ),
    )
}

/// What a read of register `r` returns, 32 bits.
fn read_value(r: &RegDef, s: &Store) -> Expr {
    match s {
        Store::Const => lit(DATA_BITS, u64::from(r.reset())),
        Store::None => lit(DATA_BITS, 0),
        Store::Counter(reg) => reg.q.expr(),
        Store::Fields(regs) => {
            // Fields and the zero gaps between them, most significant first.
            let mut parts = Vec::new();
            let mut bit = DATA_BITS;
            let mut order: Vec<_> = r.fields.iter().zip(regs).collect();
            order.sort_by_key(|(f, _)| std::cmp::Reverse(f.lsb));
            for (f, reg) in order {
                let top = f.lsb + f.width;
                if bit > top {
                    parts.push(lit(bit - top, 0));
                }
                parts.push(reg.q.expr());
                bit = f.lsb;
            }
            if bit > 0 {
                parts.push(lit(bit, 0));
            }
            if parts.len() == 1 {
                parts.pop().expect("one part")
            } else {
                cat(&parts)
            }
        }
    }
}

/// How the properties of [`generate`]'s module are checked (see
/// [`crate::proof`]).
pub fn formal_tasks(_asserts: &[String]) -> Vec<crate::proof::Task> {
    crate::proof::prove_and_cover(2, 12, false)
}
