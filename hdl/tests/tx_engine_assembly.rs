//! The assembly of `tx_engine` (`hdl/src/tx_engine/assembly.rs`) as far as
//! it is built: the units and the state instance keep the netlist's rules
//! (every input driven once, widths agreeing), the module prints and
//! passes the IR's checks for `small` and `default`, and what the state
//! does not drive yet is printed (the work left, by name).

mod common;

use std::process::Command;

use common::{have, run, Scratch};
use mrnic_hdl::tx_engine::assembly::{modules, netlist};
use mrnic_hdl::Header;
use mrnic_model::tx_engine::TxEngineParams;
use mrnic_proto::Config;

fn params(name: &str) -> TxEngineParams {
    TxEngineParams::from_config(&Config::builtin(name).expect("built-in config")).expect("valid params")
}

#[test]
fn assembly_keeps_the_netlist_rules_and_prints() {
    // `default`'s connections are too many for the state's flip-flop
    // vectors: refused with the reason, not printed.
    let Err(err) = modules(&params("default")) else { panic!("default is refused") };
    assert!(err.contains("flip-flops"), "{err}");
    for cfg in ["small"] {
        let p = params(cfg);
        netlist(&p).check().unwrap_or_else(|e| panic!("{cfg}: {e}"));
        let (top, kids, pending) = modules(&p).unwrap_or_else(|e| panic!("{cfg}: {e}"));
        top.check().unwrap_or_else(|e| panic!("{cfg}: tx_engine: {e:?}"));
        for k in &kids {
            k.check().unwrap_or_else(|e| panic!("{cfg}: {}: {e:?}", k.name()));
        }
        // Verilator with every warning over the top and its children, each
        // in its own file as `mrnic gen` writes them: no output at all.
        if have("verilator", "--version") {
            let dir = Scratch::new(&format!("tx_engine_assembly_{cfg}"));
            let header = Header::new(
                "tx_engine assembly (work in progress)",
                "cargo test -p mrnic-hdl --test tx_engine_assembly",
            );
            let files: Vec<_> = std::iter::once(&top)
                .chain(kids.iter())
                .map(|m| dir.file(&format!("{}.v", m.name()), &m.to_verilog(&header).expect("checked")))
                .collect();
            let out =
                run(Command::new("verilator").args(["--lint-only", "-Wall", "--top-module", "tx_engine"]).args(&files));
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(stderr.trim().is_empty(), "{cfg}: {stderr}");
        }
        println!("{cfg}: the state drives {} unit inputs and engine outputs as 0 still:", pending.len());
        for p in &pending {
            println!("  {p}");
        }
    }
}

mod tx_rig;

use mrnic_model::block::{port_index, Bits, Dir, PortDef};
use mrnic_model::path_telemetry as tel;
use mrnic_model::tx_engine::{Inputs, TxEngine};
use mrnic_proto::tables::path as pt;

/// The engine's input ports as `inp` gives them (the inverse of the
/// model's `decode`); fields of an absent record are 0.
fn input_bits(defs: &[PortDef], inp: &Inputs, n: u32) -> Vec<Bits> {
    let mut v: Vec<Bits> = defs.iter().map(|d| Bits::zero(d.width)).collect();
    let mut put = |name: &str, x: u64| {
        let i = port_index(defs, name).unwrap_or_else(|| panic!("no port {name}"));
        assert_eq!(defs[i].dir, Dir::In, "{name}");
        let w = defs[i].width;
        v[i] = Bits::from_u64(w, if w >= 64 { x } else { x & ((1u64 << w) - 1) });
    };
    put("rst", u64::from(inp.rst));
    put("ts_now", u64::from(inp.ts_now));
    put("cfg_src_mac", inp.src_mac);
    put("cfg_src_ip", u64::from(inp.src_ip));
    put("cfg_udp_port", u64::from(inp.udp_port));
    if let Some(o) = &inp.open {
        for (f, x) in [
            ("valid", 1),
            ("conn", u64::from(o.conn)),
            ("path", u64::from(o.path)),
            ("npaths", u64::from(o.npaths)),
            ("remote_id", u64::from(o.remote_id)),
            ("dst_mac", o.dst_mac),
            ("dst_ip", u64::from(o.dst_ip)),
            ("sport", u64::from(o.sport)),
            ("plane", u64::from(o.plane)),
            ("psn", u64::from(o.psn)),
        ] {
            put(&format!("s_open_{f}"), x);
        }
    }
    if let Some(w) = &inp.wr {
        for (f, x) in [
            ("valid", 1),
            ("conn", u64::from(w.conn)),
            ("stream", u64::from(w.stream)),
            ("op", u64::from(w.op)),
            ("wr_id", w.wr_id),
            ("laddr", w.laddr),
            ("len", u64::from(w.len)),
            ("raddr", w.raddr),
            ("rkey", u64::from(w.rkey)),
            ("imm", u64::from(w.imm)),
        ] {
            put(&format!("s_wr_{f}"), x);
        }
    }
    put("m_axi_arready", u64::from(inp.ar_ready));
    put("m_trd_ready", u64::from(inp.trd_ready));
    put("m_evt_ready", u64::from(inp.evt_ready));
    put("m_psel_ready", u64::from(inp.psel_ready));
    put("m_axis_tready", u64::from(inp.axis_ready));
    put("port_ready", u64::from(inp.port_ready));
    put("m_cqe_ready", u64::from(inp.cqe_ready));
    if let Some(u) = &inp.upd {
        for (f, x) in [
            ("valid", 1),
            ("conn", u64::from(u.conn)),
            ("path", u64::from(u.path)),
            ("state", u64::from(u.state)),
            ("weight", u64::from(u.weight)),
            ("clr", u64::from(u.clr)),
            ("act", u64::from(u.act)),
        ] {
            put(&format!("s_upd_{f}"), x);
        }
    }
    if let Some(r) = &inp.rto {
        for (f, x) in [
            ("valid", 1),
            ("conn", u64::from(r.conn)),
            ("path", u64::from(r.path)),
            ("state", u64::from(r.state)),
            ("sport", u64::from(r.sport)),
            ("gen", u64::from(r.gen)),
            ("act", u64::from(r.act)),
        ] {
            put(&format!("s_rto_{f}"), x);
        }
    }
    if let Some((c, path)) = inp.psel {
        put("s_psel_valid", 1);
        put("s_psel_conn", u64::from(c));
        put("s_psel_none", u64::from(path.is_none()));
        put("s_psel_path", u64::from(path.unwrap_or(0)));
    }
    if let Some(nk) = &inp.nack {
        for (f, x) in [
            ("valid", 1),
            ("conn", u64::from(nk.conn)),
            ("path_id", u64::from(nk.path_id)),
            ("code", u64::from(nk.code)),
            ("psn", u64::from(nk.psn)),
        ] {
            put(&format!("s_nack_{f}"), x);
        }
    }
    // Wide and lane fields, set directly.
    let set = |v: &mut Vec<Bits>, name: &str, b: Bits| {
        let i = port_index(defs, name).unwrap_or_else(|| panic!("no port {name}"));
        v[i].set_words(defs[i].width, &b.0);
    };
    if let Some(r) = &inp.r {
        let i = port_index(defs, "m_axi_rdata").expect("rdata");
        let mut words = vec![0u64; r.data.len().div_ceil(8)];
        for (k, byte) in r.data.iter().enumerate() {
            words[k / 8] |= u64::from(*byte) << (8 * (k % 8));
        }
        let w = defs[i].width;
        v[i].set_words(w, &words);
        for (f, x) in [("m_axi_rvalid", 1), ("m_axi_rresp", u64::from(r.resp)), ("m_axi_rlast", u64::from(r.last))] {
            let j = port_index(defs, f).expect("r");
            v[j] = Bits::from_u64(defs[j].width, x);
        }
    }
    if let Some(t) = &inp.trd {
        let lanes = |v: &mut Vec<Bits>, name: &str, w: u32, f: &dyn Fn(&tel::View) -> u64| {
            let mut words = vec![0u64; (n * w).div_ceil(64) as usize];
            for (i, p) in t.paths.iter().enumerate() {
                for b in 0..w {
                    let bit = i as u32 * w + b;
                    if f(p) >> b & 1 == 1 {
                        words[(bit / 64) as usize] |= 1 << (bit % 64);
                    }
                }
            }
            set(v, name, Bits(words));
        };
        lanes(&mut v, "s_trd_state", pt::STATE.width, &|p| u64::from(p.state));
        lanes(&mut v, "s_trd_inflight", pt::INFLIGHT.width, &|p| u64::from(p.inflight));
        lanes(&mut v, "s_trd_cwnd", pt::CWND.width, &|p| u64::from(p.cwnd));
        lanes(&mut v, "s_trd_weight", pt::WEIGHT.width, &|p| u64::from(p.weight));
        for (f, x) in [("s_trd_valid", 1), ("s_trd_conn", u64::from(t.conn))] {
            let j = port_index(defs, f).expect("trd");
            v[j] = Bits::from_u64(defs[j].width, x);
        }
    }
    if let Some(sk) = &inp.sack {
        for (f, x) in [
            ("valid", 1),
            ("conn", u64::from(sk.conn)),
            ("path_id", u64::from(sk.path_id)),
            ("cum_psn", u64::from(sk.cum_psn)),
            ("ecn_cnt", u64::from(sk.ecn_cnt)),
            ("echo_ts", u64::from(sk.echo_ts)),
            ("rate_hint", u64::from(sk.rate_hint)),
            ("stream_id", u64::from(sk.stream_id)),
            ("completed_msn", u64::from(sk.completed_msn)),
            ("dport", u64::from(sk.dport)),
        ] {
            let j = port_index(defs, &format!("s_sack_{f}")).expect("sack");
            v[j] = Bits::from_u64(defs[j].width, x & mask(defs[j].width));
        }
        set(&mut v, "s_sack_bitmap", Bits(sk.bitmap.to_vec()));
    }
    if let Some(a) = &inp.csack {
        for (f, x) in [
            ("valid", 1),
            ("conn", u64::from(a.conn)),
            ("path_id", u64::from(a.path_id)),
            ("dst_conn", u64::from(a.dst_conn)),
            ("path_gen", u64::from(a.path_gen)),
            ("cum_psn", u64::from(a.cum_psn)),
            ("stream_id", u64::from(a.stream_id)),
            ("completed_msn", u64::from(a.completed_msn)),
            ("echo_ts", u64::from(a.echo_ts)),
            ("ecn_cnt", u64::from(a.ecn_cnt)),
            ("rate_hint", u64::from(a.rate_hint)),
            ("sport", u64::from(a.sport)),
            ("plane", u64::from(a.plane)),
        ] {
            let j = port_index(defs, &format!("s_csack_{f}")).expect("csack");
            v[j] = Bits::from_u64(defs[j].width, x & mask(defs[j].width));
        }
        set(&mut v, "s_csack_bitmap", Bits(a.bitmap.to_vec()));
    }
    if let Some(a) = &inp.cnack {
        for (f, x) in [
            ("valid", 1),
            ("conn", u64::from(a.conn)),
            ("path_id", u64::from(a.path_id)),
            ("dst_conn", u64::from(a.dst_conn)),
            ("path_gen", u64::from(a.path_gen)),
            ("code", u64::from(a.code)),
            ("psn", u64::from(a.psn)),
            ("stream_id", u64::from(a.stream_id)),
            ("msn", u64::from(a.msn)),
            ("echo_ts", u64::from(a.echo_ts)),
            ("sport", u64::from(a.sport)),
            ("plane", u64::from(a.plane)),
            ("direct", u64::from(a.direct)),
            ("dst_ip", u64::from(a.dst_ip)),
            ("dst_mac", a.dst_mac),
        ] {
            let j = port_index(defs, &format!("s_cnack_{f}")).expect("cnack");
            v[j] = Bits::from_u64(defs[j].width, x & mask(defs[j].width));
        }
    }
    v
}

fn mask(w: u32) -> u64 {
    if w >= 64 {
        u64::MAX
    } else {
        (1u64 << w) - 1
    }
}

/// The engine's ports each cycle as the model showed them, recorded from
/// reset while a [`tx_rig::Traffic`] runs.
struct Recorder {
    t: tx_rig::Traffic,
    defs: Vec<PortDef>,
    paths: u32,
    rows: Vec<Vec<Bits>>,
}

impl Recorder {
    fn new(cfg: Config, seed: u64) -> Recorder {
        let p = TxEngineParams::from_config(&cfg).expect("params");
        let mut r = Recorder {
            t: tx_rig::Traffic::unreset(cfg, seed),
            defs: mrnic_model::tx_engine::ports(&p),
            paths: p.paths,
            rows: Vec::new(),
        };
        r.clock(true);
        while r.t.e.initializing() {
            r.clock(false);
        }
        r
    }

    fn clock(&mut self, rst: bool) {
        let (inp, ot) = if rst { self.t.e.clock(true) } else { self.t.clock() };
        let mut v = input_bits(&self.defs, &inp, self.paths);
        let mut outs: Vec<Bits> = self.defs.iter().map(|d| Bits::zero(d.width)).collect();
        TxEngine::encode(&self.t.e.tx, &ot, &mut outs);
        for (i, d) in self.defs.iter().enumerate() {
            if d.dir == Dir::Out {
                v[i] = outs[i].clone();
            }
        }
        self.rows.push(v);
    }
}

impl tx_rig::Drive for Recorder {
    fn traffic(&mut self) -> &mut tx_rig::Traffic {
        &mut self.t
    }

    fn run(&mut self, cycles: u64) {
        for _ in 0..cycles {
            self.clock(false);
        }
    }
}

/// Two connections set up and requests posted to them (the first before
/// its connection is open: flushed), a peer acknowledging what it
/// receives.
fn posts(cfg: &Config) -> Recorder {
    let mut r = Recorder::new(cfg.clone(), 7);
    let e = &mut r.t.e;
    r.t.peer.open(e, 1, 2, 100);
    r.t.peer.open(e, 2, 1, 5000);
    let mut off = 0;
    tx_rig::burst(e, 1, 2, 3, 1000, &mut off);
    tx_rig::burst(e, 2, 1, 2, 2000, &mut off);
    tx_rig::Drive::run(&mut r, 6000);
    r
}

/// The SACK replays' traffic on short timers: six connections, three
/// rounds of bursts under 15 % loss with backpressure on every output
/// (holes, RACK losses, retransmissions).
fn lossy(cfg: &Config) -> Recorder {
    let mut r = Recorder::new(tx_rig::sack_tuned(cfg), 11);
    tx_rig::open_six(&mut r);
    let mut off = 0;
    tx_rig::lossy_rounds(&mut r, &mut off);
    r
}

/// Short timers, plane 1 down (its frames lost: timeouts, SUSPECT and
/// DEAD paths, plane marks, PROBEs, retransmissions rerouted), then a
/// muted one-path connection failing (every path DEAD) and set up again.
fn plane_down(cfg: &Config) -> Recorder {
    use tx_rig::Drive;
    let mut r = Recorder::new(tx_rig::sack_tuned(cfg), 13);
    let rto = tx_rig::open_six(&mut r);
    let streams = r.t.e.cfg.transport.streams_per_conn.min(4);
    let mut off = 0;
    r.t.down = Some(1);
    for k in 0..6 {
        tx_rig::burst(&mut r.t.e, 1, streams, 1, 10_000 + 100 * k, &mut off);
        r.run(2 * rto);
    }
    r.t.down = None;
    r.t.peer.mute.insert(5);
    tx_rig::burst(&mut r.t.e, 5, streams, 1, 30_000, &mut off);
    for _ in 0..40 {
        if r.t.e.tx.failed(5).is_some() {
            break;
        }
        r.run(rto);
    }
    assert!(r.t.e.tx.failed(5).is_some(), "the muted connection fails");
    r.t.peer.mute.remove(&5);
    let e = &mut r.t.e;
    r.t.peer.open(e, 5, 1, 777);
    tx_rig::burst(&mut r.t.e, 5, streams, 1, 40_000, &mut off);
    r.run(4 * rto);
    r
}

/// NACKs and window probes, on short timers: RNR back-offs on a muted
/// connection (expiring and resent, a repeat for a packet already
/// waiting), a NO_CONN NACK failing another connection, BAD_HDR NACKs of
/// one packet up to the retry limit (the commit fails its connection),
/// setups of a failed and of a live connection, and a stream blocked by
/// the peer's message table so that a window probe arms and fires.
fn nacks(cfg: &Config) -> Recorder {
    use mrnic_model::tx_engine::{NackIn, RETRY_LIMIT};
    use mrnic_proto::NackCode;
    use tx_rig::Drive;
    let mut r = Recorder::new(tx_rig::sack_tuned(cfg), 17);
    let rto = tx_rig::open_six(&mut r);
    let depth = r.t.e.cfg.hardware.msg_table_depth;
    let mut off = 0u64;
    let unanswered = |r: &Recorder, conn: u32| -> Vec<(u32, u32)> {
        r.t.peer.unanswered.iter().filter(|&&(c, _, _)| c == conn).map(|&(_, p, psn)| (p, psn)).collect()
    };
    let nack = |r: &mut Recorder, conn: u32, path: u32, psn: u32, code: NackCode| {
        r.t.e.nacks.push_back(NackIn { conn, path_id: path, code: code as u8, psn });
    };
    r.t.peer.mute.extend([3, 4]);
    tx_rig::burst(&mut r.t.e, 3, 1, 2, 200, &mut off);
    tx_rig::burst(&mut r.t.e, 4, 1, 2, 300, &mut off);
    r.run(800);
    let u3 = unanswered(&r, 3);
    for &(path, psn) in u3.iter().take(2) {
        nack(&mut r, 3, path, psn, NackCode::Rnr);
    }
    if let Some(&(path, psn)) = u3.first() {
        nack(&mut r, 3, path, psn, NackCode::Rnr);
    }
    r.run(100);
    nack(&mut r, 4, 0, 0, NackCode::NoConn);
    r.t.peer.mute.remove(&3);
    tx_rig::burst(&mut r.t.e, 3, 1, 2, 400, &mut off);
    r.run(2 * rto);
    r.t.peer.mute.remove(&4);
    // One packet NACKed BAD_HDR past the retry limit.
    r.t.peer.mute.insert(6);
    tx_rig::burst(&mut r.t.e, 6, 1, 1, 600, &mut off);
    r.run(300);
    let u6 = unanswered(&r, 6);
    let &(path, psn) = u6.first().expect("connection 6 sent a packet");
    for _ in 0..=RETRY_LIMIT {
        nack(&mut r, 6, path, psn, NackCode::BadHdr);
        r.run(200);
    }
    r.t.peer.mute.remove(&6);
    // Setups of a failed connection and of a live one.
    let e = &mut r.t.e;
    r.t.peer.open(e, 4, 2, 7000);
    let e = &mut r.t.e;
    r.t.peer.open(e, 3, 2, 8000);
    r.run(600);
    // A stream blocked by the peer's message table: a window probe.
    r.t.peer.window = false;
    for k in 0..depth + 2 {
        r.t.e.wrs.push_back(tx_rig::wr(1, 0, 0, 1000 + u64::from(k), off % 0x2_0000, 64));
        off += 128;
    }
    r.run(4 * rto);
    r.t.peer.window = true;
    r.run(2 * rto);
    r
}

/// The assembled engine against the model's `TxEngine` on the engine's
/// own ports, every output every cycle, under Icarus, from reset through
/// the clear sweep, in four runs: [`posts`], [`lossy`], [`plane_down`],
/// [`nacks`]
/// (each its config's RTL; `MRNIC_ENGINE_SCENARIO=NAME` runs one,
/// `MRNIC_REPLAY_VCD=FILE` writes the waves). A missing Icarus skips it,
/// except under CI=true.
#[test]
fn icarus_engine_replay_small() {
    let cfg = Config::builtin("small").expect("small");
    for (name, run) in
        [("posts", posts as fn(&Config) -> Recorder), ("lossy", lossy), ("plane_down", plane_down), ("nacks", nacks)]
    {
        let only = std::env::var("MRNIC_ENGINE_SCENARIO").unwrap_or_default();
        if !only.is_empty() && only != name {
            continue;
        }
        let r = run(&cfg);
        replay_engine(name, r);
    }
}

/// `r`'s rows replayed into the RTL of the config its traffic ran on.
fn replay_engine(name: &str, mut r: Recorder) {
    if !have("iverilog", "-V") || !have("vvp", "-V") {
        return;
    }
    // The RTL of the config the traffic ran on.
    let p = r.t.e.tx.params().clone();
    let (top, kids, pending) = modules(&p).expect("small builds");
    assert!(pending.is_empty(), "the state still ties off {pending:?}");
    let dir = Scratch::new(&format!("tx_engine_assembly_{name}"));
    let header = Header::new("tx_engine assembly", "cargo test -p mrnic-hdl --test tx_engine_assembly");
    let text: String =
        std::iter::once(&top).chain(kids.iter()).map(|m| m.to_verilog(&header).expect("checked")).collect();
    let rtl = dir.file("tx_engine_all.v", &text);
    let e = &r.t.e.tx;
    eprintln!(
        "{name}: {} cycles recorded: {} decisions, {} SACKs started, {} tail timers",
        r.rows.len(),
        e.decisions,
        e.sacks_started,
        e.tails_fired
    );
    let defs = std::mem::take(&mut r.defs);
    tx_rig::replay_rows(&dir, &rtl, "tx_engine", &defs, &r.rows, true);
}
