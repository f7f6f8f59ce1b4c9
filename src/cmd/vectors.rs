//! `mrnic vectors gen` writes the golden vectors; `mrnic vectors check`
//! runs a target over them: the reference itself, or the cycle-accurate
//! model's blocks through their typed ports (`docs/vectors.md` gives the
//! contract). `--target rtl` plugs in as one more [`VectorTarget`].

use std::collections::VecDeque;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::{Subcommand, ValueEnum};
use mrnic_model::dma_write_engine::{self as dwe, DmaWriteEngine, DmaWriteEngineParams};
use mrnic_model::path_selector::{self as ps, PathSelector, PathSelectorParams};
use mrnic_model::path_telemetry::{self as pt, PathTelemetry, PathTelemetryParams};
use mrnic_proto::Config;
use mrnic_reference::path::{PathEntry, PathEvent};
use mrnic_reference::vectors::dma_write::{DmaVector, MrOp};
use mrnic_reference::vectors::path_selector::SelectorVector;
use mrnic_reference::vectors::telemetry::{with_changes, TelemetryVector};
use mrnic_reference::vectors::{self, AnyFile, FileOutcome, Outcome, ReferenceTarget, VectorTarget};

#[derive(Subcommand)]
pub enum VectorsCmd {
    /// Write every vector file for a config and seed (deterministic).
    Gen {
        /// A TOML file, or a built-in name (small, default).
        #[arg(long, default_value = "small")]
        config: String,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Directory to write `<block>.jsonl` into (created if needed).
        #[arg(long)]
        out: PathBuf,
    },
    /// Run a target over a directory of vector files; ends with `N passed, N failed`.
    Check {
        #[arg(long, value_enum, default_value_t = Target::Reference)]
        target: Target,
        dir: PathBuf,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Target {
    /// The software reference, re-run on the inputs.
    Reference,
    /// The cycle-accurate model's blocks (those that exist).
    Model,
}

pub fn run(c: VectorsCmd) -> Result<()> {
    match c {
        VectorsCmd::Gen { config, seed, out } => {
            let cfg = Config::load(&config).context("vectors gen: cannot load the config")?;
            let made = vectors::generate(&cfg, seed, &out).context("vectors gen failed")?;
            for (b, n) in made {
                let p = out.join(b.file_name());
                let size = std::fs::metadata(&p).map(|m| m.len()).unwrap_or(0);
                println!("{}: {n} vectors, {size} bytes", p.display());
            }
            Ok(())
        }
        VectorsCmd::Check { target, dir } => {
            let mut t: Box<dyn VectorTarget> = match target {
                Target::Reference => Box::new(ReferenceTarget),
                Target::Model => Box::new(ModelTarget),
            };
            let r = vectors::check_dir(&dir, t.as_mut()).context("vectors check: bad vector files")?;
            print!("{}", r.text);
            println!("{}", r.summary());
            if r.failed > 0 {
                bail!("{} of {} vectors failed on the {}", r.failed, r.failed + r.passed, t.name());
            }
            Ok(())
        }
    }
}

/// The cycle-accurate model: `path_selector`, `path_telemetry` and
/// `dma_write_engine`; `rx` and `tx` wait for the pipeline top.
pub struct ModelTarget;

impl VectorTarget for ModelTarget {
    fn name(&self) -> &str {
        "model"
    }

    fn check_file(&mut self, file: &AnyFile) -> FileOutcome {
        let cfg = &file.header().config;
        match file {
            AnyFile::PathSelector(f) => FileOutcome::Checked(f.vectors.iter().map(|(_, v)| selector(cfg, v)).collect()),
            AnyFile::DmaWrite(f) => FileOutcome::Checked(f.vectors.iter().map(|(_, v)| dma_write(cfg, v)).collect()),
            AnyFile::Telemetry(f) => FileOutcome::Checked(f.vectors.iter().map(|(_, v)| telemetry(cfg, v)).collect()),
            // rx and tx need the pipeline top (mrnic_core).
            AnyFile::Rx(_) | AnyFile::Tx(_) => FileOutcome::NotModelled,
        }
    }
}

/// Cycles a bench waits for anything before it calls the block stuck.
const PATIENCE: u64 = 100_000;

/// `path_selector`: after the reset sweep, one request per step on
/// `s_req_*` (back to back unless the step says drain), `m_sel_ready` held
/// high; the decisions must come out in order, and the credit memory of
/// the connection must hold the last step's credits.
fn selector(cfg: &Config, v: &SelectorVector) -> Outcome {
    let p = match PathSelectorParams::from_config(cfg) {
        Ok(p) => p,
        Err(e) => return Outcome::Fail(e.to_string()),
    };
    let n = p.paths as usize;
    let mut m = PathSelector::new(p);
    let idle = ps::Inputs { req_weight: vec![0; n], sel_ready: true, ..Default::default() };
    let mut cycles = 0u64;
    while !m.outputs().req_ready {
        m.clock(&idle);
        cycles += 1;
        if cycles > PATIENCE + p.conns as u64 {
            return Outcome::Fail("s_req_ready never rose after reset".into());
        }
    }
    let mut got: Vec<(u32, Option<u32>)> = Vec::new();
    let mut k = 0;
    let mut waited = 0u64;
    while got.len() < v.steps.len() {
        let o = m.outputs();
        if o.sel_valid {
            got.push((o.sel_conn, (!o.sel_none).then_some(o.sel_path)));
            waited = 0;
        }
        let mut inp = idle.clone();
        if k < v.steps.len() && o.req_ready && (!v.steps[k].drain || got.len() == k) {
            let s = &v.steps[k];
            if s.paths.len() != n {
                return Outcome::Fail(format!("step {k}: {} paths, the block has {n}", s.paths.len()));
            }
            inp.req_valid = true;
            inp.req_conn = v.conn;
            inp.req_elig = s.elig;
            inp.req_weight = s.paths.iter().map(|sp| sp.weight).collect();
            inp.req_clr = s.clr;
            k += 1;
        }
        m.clock(&inp);
        waited += 1;
        if waited > PATIENCE {
            return Outcome::Fail(format!("no decision for step {} after {PATIENCE} cycles", got.len()));
        }
    }
    for (i, (s, (conn, path))) in v.steps.iter().zip(&got).enumerate() {
        let want = s.chosen.map(u32::from);
        if *conn != v.conn || *path != want {
            return Outcome::Fail(format!(
                "step {i}: model decided path {path:?} for conn {conn}, the reference {want:?} for conn {}",
                v.conn
            ));
        }
    }
    if let Some(last) = v.steps.last() {
        let want: Vec<i32> = last.deficits.iter().map(|&d| d as i32).collect();
        if m.credits(v.conn) != want.as_slice() {
            return Outcome::Fail(format!("final credits: model {:?}, reference {want:?}", m.credits(v.conn)));
        }
    }
    Outcome::Pass
}

/// `dma_write_engine`: after the reset sweep, the table operations on
/// `s_mr_*`; then each placement on `s_req_*` (tag = its index) with its
/// payload on `s_axis_*` (packed from lane 0, `tkeep` on present bytes,
/// `tlast` on the last beat), back to back unless it says drain. The AXI
/// slave is always ready and answers each burst OKAY after its last W beat.
/// AW, W and completions must match the vector in order; W data is compared
/// on strobed lanes only.
fn dma_write(cfg: &Config, v: &DmaVector) -> Outcome {
    let p = match DmaWriteEngineParams::from_config(cfg) {
        Ok(p) => p,
        Err(e) => return Outcome::Fail(e.to_string()),
    };
    let b = p.bytes() as usize;
    let mut m = DmaWriteEngine::new(p);
    let idle = dwe::Inputs { tdata: vec![0; b], awready: true, wready: true, cpl_ready: true, ..Default::default() };
    let mut cycles = 0u64;
    while !m.outputs().mr_ready {
        m.clock(&idle);
        cycles += 1;
        if cycles > PATIENCE + p.mr_entries as u64 {
            return Outcome::Fail("s_mr_ready never rose after reset".into());
        }
    }
    for op in &v.mr_ops {
        let mut inp = idle.clone();
        inp.mr_valid = true;
        match *op {
            MrOp::Reg { key, base, len, access } => {
                (inp.mr_key, inp.mr_entry_valid, inp.mr_remote_write) = (key, true, access & 1 == 1);
                (inp.mr_base, inp.mr_len) = (base, len);
            }
            MrOp::Dereg { key } => inp.mr_key = key,
        }
        while !m.outputs().mr_ready {
            m.clock(&idle);
        }
        m.clock(&inp);
    }
    // Payload beats of every placement, in order.
    let mut beats: VecDeque<(Vec<u8>, u128, bool, usize)> = VecDeque::new();
    for (j, pl) in v.places.iter().enumerate() {
        let chunks: Vec<&[u8]> = pl.data.chunks(b).collect();
        for (i, c) in chunks.iter().enumerate() {
            let mut d = c.to_vec();
            d.resize(b, 0);
            let keep = if c.len() >= 128 { u128::MAX } else { (1u128 << c.len()) - 1 };
            beats.push_back((d, keep, i == chunks.len() - 1, j));
        }
    }
    let mut aws: Vec<(u64, u8)> = Vec::new();
    let mut ws: Vec<(Vec<u8>, u128, bool)> = Vec::new();
    let mut cpls: Vec<(u16, u8)> = Vec::new();
    let mut b_owed = 0u32;
    let mut k = 0usize;
    let mut waited = 0u64;
    while cpls.len() < v.places.len() {
        let o = m.outputs();
        let mut inp = idle.clone();
        if o.awvalid {
            aws.push((o.awaddr, o.awlen));
        }
        if o.wvalid {
            ws.push((o.wdata.clone(), o.wstrb, o.wlast));
            if o.wlast {
                b_owed += 1;
            }
        }
        if o.cpl_valid {
            cpls.push((o.cpl_tag, o.cpl_status));
            waited = 0;
        }
        // B for a burst whose data has all gone (OKAY, ID 0).
        let b_now = b_owed > 0 && !(o.wvalid && o.wlast && b_owed == 1);
        if b_now {
            inp.bvalid = true;
            if o.bready {
                b_owed -= 1;
            }
        }
        if k < v.places.len() && o.req_ready && (!v.places[k].drain || cpls.len() == k) {
            let pl = &v.places[k];
            inp.req_valid = true;
            (inp.req_tag, inp.req_rkey, inp.req_addr, inp.req_len) = (k as u16, pl.rkey, pl.addr, pl.len as u16);
            k += 1;
        }
        if let Some((d, keep, last, j)) = beats.front() {
            // A placement's payload follows its request.
            if *j < k || (*j == k && inp.req_valid) {
                inp.tvalid = true;
                (inp.tdata, inp.tkeep, inp.tlast) = (d.clone(), *keep, *last);
                if o.tready {
                    beats.pop_front();
                }
            }
        }
        m.clock(&inp);
        waited += 1;
        if waited > PATIENCE {
            return Outcome::Fail(format!("no completion for placement {} after {PATIENCE} cycles", cpls.len()));
        }
    }
    compare_dma(v, b, &aws, &ws, &cpls)
}

fn compare_dma(
    v: &DmaVector,
    b: usize,
    aws: &[(u64, u8)],
    ws: &[(Vec<u8>, u128, bool)],
    cpls: &[(u16, u8)],
) -> Outcome {
    let (mut ai, mut wi) = (0usize, 0usize);
    for (j, pl) in v.places.iter().enumerate() {
        let want_status = if pl.status == "OK" { dwe::status::OK } else { dwe::status::ACCESS };
        if cpls[j] != (j as u16, want_status) {
            return Outcome::Fail(format!(
                "placement {j}: completion (tag {}, status {}), expected (tag {j}, status {want_status} = {})",
                cpls[j].0, cpls[j].1, pl.status
            ));
        }
        for (bi, bu) in pl.bursts.iter().enumerate() {
            let Some(&(addr, len)) = aws.get(ai) else {
                return Outcome::Fail(format!(
                    "placement {j} burst {bi}: no AW (expected {:#x}+{})",
                    bu.awaddr, bu.awlen
                ));
            };
            ai += 1;
            if (addr, len) != (bu.awaddr, bu.awlen) {
                return Outcome::Fail(format!(
                    "placement {j} burst {bi}: AW {addr:#x} awlen {len}, expected {:#x} awlen {}",
                    bu.awaddr, bu.awlen
                ));
            }
            for (k, beat) in bu.w.iter().enumerate() {
                let Some((d, s, last)) = ws.get(wi) else {
                    return Outcome::Fail(format!("placement {j} burst {bi}: W beat {k} missing"));
                };
                wi += 1;
                let lanes_differ = (0..b).any(|l| beat.s >> l & 1 == 1 && d[l] != beat.d[l]);
                if *s != beat.s || lanes_differ || *last != (k == bu.w.len() - 1) {
                    return Outcome::Fail(format!(
                        "placement {j} burst {bi} beat {k}: W data {} strb {s:#x} last {last}, expected {} strb {:#x} last {}",
                        vectors::format::hex::encode(d),
                        vectors::format::hex::encode(&beat.d),
                        beat.s,
                        k == bu.w.len() - 1
                    ));
                }
            }
        }
    }
    if ai != aws.len() || wi != ws.len() {
        return Outcome::Fail(format!("{} AWs and {} W beats beyond the expected ones", aws.len() - ai, ws.len() - wi));
    }
    Outcome::Pass
}

fn to_model(r: &PathEntry) -> pt::Entry {
    pt::Entry {
        state: r.state as u8,
        sport: r.sport,
        gen: r.gen,
        plane: r.plane,
        next_psn: r.next_psn,
        cum_acked: r.cum_acked,
        inflight: r.inflight,
        cwnd: r.cwnd,
        srtt: r.srtt,
        rttvar: r.rttvar,
        min_rtt: r.min_rtt,
        ecn_ewma: r.ecn_ewma,
        acked_bytes: r.acked_bytes,
        weight: r.weight,
        deficit: r.deficit as u16,
        rto_deadline: r.rto_deadline,
        retries: r.retries,
        hold_until: r.hold_until,
        probes_ok: r.probes_ok,
        probe_pending: r.probe_pending,
        probe_ts: r.probe_ts,
        tx_seq: r.tx_seq,
        probe_seq: r.probe_seq,
        acked_seq: r.acked_seq,
    }
}

/// The `s_evt_*` fields of a reference event at `now`.
fn to_event(ev: &PathEvent, now: u32, conn: u32, path: u32) -> pt::Event {
    let mut e = pt::Event { conn, path, now, ..Default::default() };
    e.kind = match *ev {
        PathEvent::Send => pt::kind::SEND,
        PathEvent::Retransmit => pt::kind::RETX,
        PathEvent::ProbeSent => pt::kind::PROBE_SENT,
        PathEvent::Ack(a) => {
            (e.cum_acked, e.acked_pkts, e.acked_bytes, e.ecn_cnt) =
                (a.cum_acked, a.acked_pkts, a.acked_bytes, a.ecn_cnt);
            (e.rtt_valid, e.rtt, e.acked_seq) = (a.rtt.is_some(), a.rtt.unwrap_or(0), a.acked_seq);
            pt::kind::ACK
        }
        PathEvent::ProbeReply => pt::kind::PROBE_REPLY,
        PathEvent::Nack => pt::kind::NACK,
        PathEvent::Timeout { fresh_sport } => {
            e.sport = fresh_sport;
            pt::kind::TIMEOUT
        }
        PathEvent::Tick => pt::kind::TICK,
    };
    e
}

/// `path_telemetry`: the vector's starting entry is loaded with the model's
/// `poke` (the RTL bench writes it through the table's CSR port), then each
/// step is one event on `s_evt_*`; `ts_now` is held 2^30 units behind the
/// event so the RTO scanner injects nothing of its own (the vectors give
/// every timeout explicitly). The bench drains after every step (allowed
/// whatever `drain` says) and compares the stored entry and the action bits
/// of the step's `m_upd`/`m_rto` records.
fn telemetry(cfg: &Config, v: &TelemetryVector) -> Outcome {
    let p = match PathTelemetryParams::from_config(cfg) {
        Ok(p) => p,
        Err(e) => return Outcome::Fail(e.to_string()),
    };
    let (conn, path) = (1 % p.conns, (p.paths - 1).min(2));
    let mut m = PathTelemetry::new(p);
    let idle = pt::Inputs { upd_ready: true, rto_ready: true, rd_resp_ready: true, ..Default::default() };
    let mut cycles = 0u64;
    while m.initializing() || !m.outputs().evt_ready {
        m.clock(&idle);
        cycles += 1;
        if cycles > PATIENCE + p.entries() as u64 {
            return Outcome::Fail("s_evt_ready never rose after reset".into());
        }
    }
    m.poke(conn, path, to_model(&v.entry));
    let mut want = v.entry;
    for (k, s) in v.steps.iter().enumerate() {
        want = match with_changes(&want, &s.changes) {
            Ok(e) => e,
            Err(e) => return Outcome::Fail(format!("step {k}: {e}")),
        };
        let ts_now = s.now.wrapping_sub(1 << 30);
        let mut inp = pt::Inputs { ts_now, ..idle };
        let mut waited = 0;
        while !m.outputs().evt_ready {
            m.clock(&inp);
            waited += 1;
            if waited > PATIENCE {
                return Outcome::Fail(format!("step {k}: s_evt_ready stuck low"));
            }
        }
        inp.evt_valid = true;
        inp.evt = to_event(&s.event, s.now, conn, path);
        m.clock(&inp);
        inp.evt_valid = false;
        let mut act = 0u8;
        for _ in 0..p.read_latency + 3 {
            let o = m.outputs();
            if let Some(u) = o.upd {
                act |= u.act;
            }
            if let Some(r) = o.rto {
                act |= r.act;
            }
            m.clock(&inp);
        }
        let want_act = ["probe", "all_lost", "died", "recovered"]
            .iter()
            .enumerate()
            .filter(|(_, n)| s.action.iter().any(|a| a == *n))
            .fold(0u8, |b, (i, _)| b | 1 << i);
        let got = m.entry(conn, path);
        if got != to_model(&want) || act != want_act {
            return Outcome::Fail(format!(
                "step {k} ({:?} at {}): model entry {got:?} act {act:#x}, reference {:?} act {want_act:#x}",
                s.event,
                s.now,
                to_model(&want)
            ));
        }
    }
    Outcome::Pass
}
