//! `mrnic vectors gen` writes the golden vectors; `mrnic vectors check`
//! runs a target over them: the reference itself, the cycle-accurate
//! model's blocks through their typed ports, or the Verilated RTL of those
//! blocks (`docs/vectors.md` gives the contract).
//!
//! Each block file has one bench, written once against [`Dev`]: the model
//! alone (`--target model`), or the model with its Verilated twin
//! (`--target rtl`: the same inputs go to both through the ports, every
//! output is compared every cycle, so what the bench reads is what the RTL
//! drove). A new block file is a bench, an encoder from the model's typed
//! inputs to its ports, and one arm in each target's `check_file`.

use std::collections::VecDeque;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::{Subcommand, ValueEnum};
use mrnic_model::bench::{self, Pace, StreamIn};
use mrnic_model::block::{Bits, Block};
use mrnic_model::dma_write_engine::{self as dwe, DmaWriteEngine, DmaWriteEngineParams};
use mrnic_model::path_selector::{self as ps, PathSelector, PathSelectorParams};
use mrnic_model::path_telemetry::{self as pt, PathTelemetry, PathTelemetryParams};
use mrnic_model::rx_parser::{RxParser, RxParserParams};
use mrnic_proto::Config;
use mrnic_reference::path::{PathEntry, PathEvent};
use mrnic_reference::vectors::dma_write::{DmaVector, MrOp};
use mrnic_reference::vectors::path_selector::SelectorVector;
use mrnic_reference::vectors::rx_parser::RxParserVector;
use mrnic_reference::vectors::telemetry::{with_changes, TelemetryVector};
use mrnic_reference::vectors::{self, AnyFile, FileOutcome, Outcome, ReferenceTarget, VectorTarget};
use mrnic_verif::blocks;
use mrnic_verif::twin::Twin;

use super::nic_vectors;

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
    /// The Verilated RTL of those blocks, in lockstep with the model.
    Rtl,
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
                Target::Model => Box::new(ModelTarget(Side::Model)),
                Target::Rtl => {
                    if let Some(why) = mrnic_verif::rtl::unavailable() {
                        bail!("vectors check --target rtl: no Verilated designs in this build: {why}");
                    }
                    Box::new(ModelTarget(Side::Rtl))
                }
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

/// Where the benches run: the model alone, or the model and its RTL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Model,
    Rtl,
}

/// The cycle-accurate model (`Side::Model`) or the Verilated RTL in
/// lockstep with it (`Side::Rtl`): `path_selector`, `path_telemetry`,
/// `dma_write_engine` and `rx_parser` (its bench drives any [`Block`]: on
/// the RTL side, the twin); `rx` and `tx` on the model's top, `mrnic_core`
/// ([`nic_vectors`]; no RTL top yet).
pub struct ModelTarget(pub Side);

impl VectorTarget for ModelTarget {
    fn name(&self) -> &str {
        match self.0 {
            Side::Model => "model",
            Side::Rtl => "rtl",
        }
    }

    fn check_file(&mut self, file: &AnyFile) -> FileOutcome {
        let cfg = &file.header().config;
        let side = self.0;
        match file {
            AnyFile::PathSelector(f) => {
                FileOutcome::Checked(f.vectors.iter().map(|(_, v)| selector(cfg, v, side)).collect())
            }
            AnyFile::DmaWrite(f) => {
                FileOutcome::Checked(f.vectors.iter().map(|(_, v)| dma_write(cfg, v, side)).collect())
            }
            AnyFile::Telemetry(f) => {
                FileOutcome::Checked(f.vectors.iter().map(|(_, v)| telemetry(cfg, v, side)).collect())
            }
            AnyFile::RxParser(f) => FileOutcome::Checked(
                f.vectors
                    .iter()
                    .map(|(_, v)| match RxParserParams::from_config(cfg) {
                        Ok(p) => rx_parser_on(side, cfg, RxParser::new(p), v),
                        Err(e) => Outcome::Fail(e.to_string()),
                    })
                    .collect(),
            ),
            // The top (mrnic_core) on the model; on the RTL the whole top
            // where this build Verilated it for the config, else its
            // receive side for the receive vectors.
            AnyFile::Rx(f) | AnyFile::Tx(f) => match side {
                Side::Model => {
                    FileOutcome::Checked(f.vectors.iter().map(|(_, v)| nic_vectors::check(cfg, v)).collect())
                }
                Side::Rtl if built(cfg, mrnic_model::mrnic_core::NAME) => {
                    FileOutcome::Checked(f.vectors.iter().map(|(_, v)| nic_vectors::check_rtl(cfg, v)).collect())
                }
                Side::Rtl if matches!(file, AnyFile::Rx(_)) && built(cfg, mrnic_model::mrnic_core::RX_NAME) => {
                    FileOutcome::Checked(f.vectors.iter().map(|(_, v)| nic_vectors::check_rx_rtl(cfg, v)).collect())
                }
                Side::Rtl => FileOutcome::NotModelled,
            },
        }
    }
}

/// What a bench drives: a model `M` with typed inputs `I`.
trait Dev<M, I> {
    fn m(&self) -> &M;
    fn clock(&mut self, inp: &I);
    /// The model alone can be given state directly (`poke`); the twin
    /// cannot, as the RTL would not see it.
    fn model_mut(&mut self) -> Option<&mut M>;
}

/// The model alone, clocked through its typed `clock`.
struct Plain<M, I> {
    m: M,
    clock: fn(&mut M, &I),
}

impl<M, I> Dev<M, I> for Plain<M, I> {
    fn m(&self) -> &M {
        &self.m
    }
    fn clock(&mut self, inp: &I) {
        (self.clock)(&mut self.m, inp)
    }
    fn model_mut(&mut self) -> Option<&mut M> {
        Some(&mut self.m)
    }
}

/// The model and its RTL, clocked through the ports.
struct TwinDev<M, I> {
    t: Twin<M>,
    encode: fn(&I, &mut [Bits]),
}

impl<M: Block, I> Dev<M, I> for TwinDev<M, I> {
    fn m(&self) -> &M {
        self.t.model()
    }
    fn clock(&mut self, inp: &I) {
        (self.encode)(inp, self.t.inputs_mut());
        self.t.step();
    }
    fn model_mut(&mut self) -> Option<&mut M> {
        None
    }
}

/// Runs `bench` on `model` alone or with its RTL (reset through the ports
/// first, as the RTL's registers start unknown). An RTL mismatch is the
/// verdict; else the bench's.
fn on_side<M: Block, I>(
    side: Side,
    cfg: &Config,
    model: M,
    clock: fn(&mut M, &I),
    encode: fn(&I, &mut [Bits]),
    bench: impl FnOnce(&mut dyn Dev<M, I>) -> Outcome,
) -> Outcome {
    match side {
        Side::Model => bench(&mut Plain { m: model, clock }),
        Side::Rtl => {
            let block = model.name();
            let twin = blocks::built_config(block, cfg, &cfg.name)
                .and_then(|config| Twin::new(model, config, blocks::idle_payload_dont_care(block)));
            let mut d = match twin {
                Ok(t) => TwinDev { t, encode },
                Err(e) => return Outcome::Fail(format!("no RTL to run on: {e}")),
            };
            let rst = d.t.model().ports().iter().position(|p| p.name == "rst");
            if let Some(r) = rst {
                d.t.inputs_mut()[r].set_u64(1, 1);
                d.t.step();
            }
            let verdict = bench(&mut d);
            match d.t.mismatch() {
                Some(m) => Outcome::Fail(m.to_string()),
                None => verdict,
            }
        }
    }
}

/// Packs `vals` of `w` bits each, value 0 lowest, into `b` (`width` bits).
fn pack_into(b: &mut Bits, width: u32, w: u32, vals: impl Iterator<Item = u64>) {
    b.set_u64(width, 0);
    for (i, v) in vals.enumerate() {
        for k in 0..w {
            if v >> k & 1 == 1 {
                let bit = i as u32 * w + k;
                b.0[(bit / 64) as usize] |= 1 << (bit % 64);
            }
        }
    }
}

fn encode_selector(i: &ps::Inputs, v: &mut [Bits]) {
    use ps::port::*;
    v[RST].set_u64(1, i.rst as u64);
    v[S_REQ_VALID].set_u64(1, i.req_valid as u64);
    v[S_REQ_CONN].set_u64(64, i.req_conn as u64);
    v[S_REQ_ELIG].set_u64(64, i.req_elig as u64);
    pack_into(&mut v[S_REQ_WEIGHT], 8 * i.req_weight.len() as u32, 8, i.req_weight.iter().map(|&w| w as u64));
    v[S_REQ_CLR].set_u64(64, i.req_clr as u64);
    v[M_SEL_READY].set_u64(1, i.sel_ready as u64);
}

fn encode_dma(i: &dwe::Inputs, v: &mut [Bits]) {
    use dwe::port::*;
    for (p, x) in [
        (RST, i.rst as u64),
        (S_MR_VALID, i.mr_valid as u64),
        (S_MR_KEY, i.mr_key as u64),
        (S_MR_ENTRY_VALID, i.mr_entry_valid as u64),
        (S_MR_REMOTE_WRITE, i.mr_remote_write as u64),
        (S_MR_RECV, i.mr_recv as u64),
        (S_MR_BASE, i.mr_base),
        (S_MR_LEN, i.mr_len),
        (S_REQ_VALID, i.req_valid as u64),
        (S_REQ_TAG, i.req_tag as u64),
        (S_REQ_RKEY, i.req_rkey as u64),
        (S_REQ_ADDR, i.req_addr),
        (S_REQ_LEN, i.req_len as u64),
        (S_REQ_RECV, i.req_recv as u64),
        (S_AXIS_TVALID, i.tvalid as u64),
        (S_AXIS_TLAST, i.tlast as u64),
        (M_AXI_AWREADY, i.awready as u64),
        (M_AXI_WREADY, i.wready as u64),
        (M_AXI_BID, i.bid as u64),
        (M_AXI_BRESP, i.bresp as u64),
        (M_AXI_BVALID, i.bvalid as u64),
        (M_CPL_READY, i.cpl_ready as u64),
    ] {
        v[p].set_u64(64, x);
    }
    pack_into(&mut v[S_AXIS_TDATA], 8 * i.tdata.len() as u32, 8, i.tdata.iter().map(|&b| b as u64));
    v[S_AXIS_TKEEP].set_words(128, &[i.tkeep as u64, (i.tkeep >> 64) as u64]);
}

fn encode_telemetry(i: &pt::Inputs, v: &mut [Bits]) {
    use pt::port::*;
    let e = &i.evt;
    for (p, x) in [
        (RST, i.rst as u64),
        (TS_NOW, i.ts_now as u64),
        (S_EVT_VALID, i.evt_valid as u64),
        (S_EVT_KIND, e.kind as u64),
        (S_EVT_CONN, e.conn as u64),
        (S_EVT_PATH, e.path as u64),
        (S_EVT_NOW, e.now as u64),
        (S_EVT_CUM_ACKED, e.cum_acked as u64),
        (S_EVT_ACKED_PKTS, e.acked_pkts as u64),
        (S_EVT_ACKED_BYTES, e.acked_bytes as u64),
        (S_EVT_ECN_CNT, e.ecn_cnt as u64),
        (S_EVT_RTT_VALID, e.rtt_valid as u64),
        (S_EVT_RTT, e.rtt as u64),
        (S_EVT_ACKED_SEQ, e.acked_seq as u64),
        (S_EVT_SPORT, e.sport as u64),
        (S_EVT_PLANE, e.plane as u64),
        (M_UPD_READY, i.upd_ready as u64),
        (M_RTO_READY, i.rto_ready as u64),
        (S_RD_VALID, i.rd_valid as u64),
        (S_RD_CONN, i.rd_conn as u64),
        (M_RD_READY, i.rd_resp_ready as u64),
    ] {
        v[p].set_u64(64, x);
    }
}

/// Cycles a bench waits for anything before it calls the block stuck.
const PATIENCE: u64 = 100_000;

/// `path_selector`: after the reset sweep, one request per step on
/// `s_req_*` (back to back unless the step says drain), `m_sel_ready` held
/// high; the decisions must come out in order, and the credit memory of
/// the connection must hold the last step's credits.
fn selector(cfg: &Config, v: &SelectorVector, side: Side) -> Outcome {
    let p = match PathSelectorParams::from_config(cfg) {
        Ok(p) => p,
        Err(e) => return Outcome::Fail(e.to_string()),
    };
    on_side(side, cfg, PathSelector::new(p), PathSelector::clock, encode_selector, |m| selector_bench(m, p, v))
}

fn selector_bench(m: &mut dyn Dev<PathSelector, ps::Inputs>, p: PathSelectorParams, v: &SelectorVector) -> Outcome {
    let n = p.paths as usize;
    let idle = ps::Inputs { req_weight: vec![0; n], sel_ready: true, ..Default::default() };
    let mut cycles = 0u64;
    while !m.m().outputs().req_ready {
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
        let o = m.m().outputs();
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
        if m.m().credits(v.conn) != want.as_slice() {
            return Outcome::Fail(format!("final credits: model {:?}, reference {want:?}", m.m().credits(v.conn)));
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
fn dma_write(cfg: &Config, v: &DmaVector, side: Side) -> Outcome {
    let p = match DmaWriteEngineParams::from_config(cfg) {
        Ok(p) => p,
        Err(e) => return Outcome::Fail(e.to_string()),
    };
    on_side(side, cfg, DmaWriteEngine::new(p), DmaWriteEngine::clock, encode_dma, |m| dma_bench(m, p, v))
}

fn dma_bench(m: &mut dyn Dev<DmaWriteEngine, dwe::Inputs>, p: DmaWriteEngineParams, v: &DmaVector) -> Outcome {
    let b = p.bytes() as usize;
    let idle = dwe::Inputs { tdata: vec![0; b], awready: true, wready: true, cpl_ready: true, ..Default::default() };
    let mut cycles = 0u64;
    while !m.m().outputs().mr_ready {
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
                (inp.mr_key, inp.mr_entry_valid) = (key, true);
                (inp.mr_remote_write, inp.mr_recv) = (access & 1 == 1, access & 2 == 2);
                (inp.mr_base, inp.mr_len) = (base, len);
            }
            MrOp::Dereg { key } => inp.mr_key = key,
        }
        while !m.m().outputs().mr_ready {
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
        let o = m.m().outputs();
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
            inp.req_recv = pl.recv;
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

/// [`rx_parser`] on the model alone, or on the model and its RTL in
/// lockstep, the bench reading the RTL's outputs; an RTL mismatch is the
/// verdict, else the bench's.
fn rx_parser_on(side: Side, cfg: &Config, model: RxParser, v: &RxParserVector) -> Outcome {
    match side {
        Side::Model => rx_parser(&mut { model }, cfg, v),
        Side::Rtl => {
            let block = model.name();
            let twin = blocks::built_config(block, cfg, &cfg.name)
                .and_then(|config| Twin::new(model, config, blocks::idle_payload_dont_care(block)));
            let mut t = match twin {
                Ok(t) => t,
                Err(e) => return Outcome::Fail(format!("no RTL to run on: {e}")),
            };
            let verdict = rx_parser(&mut t, cfg, v);
            match t.mismatch() {
                Some(m) => Outcome::Fail(m.to_string()),
                None => verdict,
            }
        }
    }
}

/// `rx_parser` on any implementation (the model here; the Verilated RTL
/// through the same [`Block`] trait): every frame of the vector back to back
/// on `s_axis_*` with 20% idle cycles and 20% backpressure on both outputs
/// (seeded by the vector), then [`compare_rx_parser`].
pub fn rx_parser(dut: &mut dyn Block, cfg: &Config, v: &RxParserVector) -> Outcome {
    let frames: Vec<StreamIn> = v
        .frames
        .iter()
        .map(|f| StreamIn { bytes: f.bytes.clone(), keep_holes: f.keep_holes.clone(), tuser_byte: f.tuser_byte })
        .collect();
    match bench::rx_parser(dut, &frames, cfg.transport.udp_port, Pace { idle: 20, stall: 20, seed: v.seed }) {
        Ok(run) => compare_rx_parser(v, &run),
        Err(e) => Outcome::Fail(e),
    }
}

/// The packets handed on clean must be the accepted frames, in order, with
/// their headers and payloads; the drop pulses must be the dropped frames'
/// reasons, in order; a dropped frame may have had its header handed on
/// (the block decides on the header before the frame ends) but then its
/// packet ends with `tuser`.
pub fn compare_rx_parser(v: &RxParserVector, run: &bench::RxRun) -> Outcome {
    let clean: Vec<_> = run.packets.iter().filter(|p| !p.dropped).collect();
    let want: Vec<_> = v.frames.iter().enumerate().filter_map(|(i, f)| f.out.as_ref().map(|o| (i, o))).collect();
    if clean.len() != want.len() {
        return Outcome::Fail(format!("{} frames handed on clean, the vector accepts {}", clean.len(), want.len()));
    }
    for (got, (i, w)) in clean.iter().zip(&want) {
        let mut raw = w.hdr.clone();
        raw.resize(got.raw.len(), 0);
        if got.raw != raw || got.ecn != w.ecn || got.udp_sport != w.udp_sport {
            return Outcome::Fail(format!(
                "frame {i}: header {} ecn {} sport {}, expected {} ecn {} sport {}",
                vectors::format::hex::encode(&got.raw),
                got.ecn,
                got.udp_sport,
                vectors::format::hex::encode(&raw),
                w.ecn,
                w.udp_sport
            ));
        }
        if got.payload != w.payload {
            return Outcome::Fail(format!(
                "frame {i}: payload of {} bytes differs from the expected {} bytes",
                got.payload.len(),
                w.payload.len()
            ));
        }
    }
    let want_drops: Vec<&str> = v.frames.iter().filter(|f| f.out.is_none()).map(|f| f.verdict.as_str()).collect();
    let got_drops: Vec<&str> = run.drops.iter().map(|r| r.name()).collect();
    if got_drops != want_drops {
        return Outcome::Fail(format!("drop pulses {got_drops:?}, expected {want_drops:?}"));
    }
    Outcome::Pass
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
        PathEvent::Ack(a) | PathEvent::AckSteered(a) => {
            (e.cum_acked, e.acked_pkts, e.acked_bytes, e.ecn_cnt) =
                (a.cum_acked, a.acked_pkts, a.acked_bytes, a.ecn_cnt);
            (e.rtt_valid, e.rtt, e.acked_seq) = (a.rtt.is_some(), a.rtt.unwrap_or(0), a.acked_seq);
            if matches!(ev, PathEvent::Ack(_)) {
                pt::kind::ACK
            } else {
                pt::kind::ACK_STEER
            }
        }
        PathEvent::ProbeReply => pt::kind::PROBE_REPLY,
        PathEvent::Nack => pt::kind::NACK,
        PathEvent::Rnr => pt::kind::RNR,
        PathEvent::Resume => pt::kind::RESUME,
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
fn telemetry(cfg: &Config, v: &TelemetryVector, side: Side) -> Outcome {
    let p = match PathTelemetryParams::from_config(cfg) {
        Ok(p) => p,
        Err(e) => return Outcome::Fail(e.to_string()),
    };
    let k = pt::Consts::from_config(cfg);
    on_side(side, cfg, PathTelemetry::new(p), PathTelemetry::clock, encode_telemetry, |m| telemetry_bench(m, p, &k, v))
}

fn telemetry_bench(
    m: &mut dyn Dev<PathTelemetry, pt::Inputs>,
    p: PathTelemetryParams,
    k: &pt::Consts,
    v: &TelemetryVector,
) -> Outcome {
    let (conn, path) = (1 % p.conns, (p.paths - 1).min(2));
    let idle = pt::Inputs { upd_ready: true, rto_ready: true, rd_resp_ready: true, ..Default::default() };
    let mut cycles = 0u64;
    while m.m().initializing() || !m.m().outputs().evt_ready {
        m.clock(&idle);
        cycles += 1;
        if cycles > PATIENCE + p.entries() as u64 {
            return Outcome::Fail("s_evt_ready never rose after reset".into());
        }
    }
    let start = to_model(&v.entry);
    if m.model_mut().is_none() {
        // The typed model takes any u32; the ports carry the widths the
        // hardware has (an RTT sample is `ts16(now) - echo_ts`, 16 bits).
        let widths = pt::ports(&p);
        for (k, s) in v.steps.iter().enumerate() {
            let e = to_event(&s.event, s.now, conn, path);
            let fields = [
                (pt::port::S_EVT_RTT, e.rtt as u64),
                (pt::port::S_EVT_ACKED_PKTS, e.acked_pkts as u64),
                (pt::port::S_EVT_ACKED_BYTES, e.acked_bytes as u64),
                (pt::port::S_EVT_ECN_CNT, e.ecn_cnt as u64),
                (pt::port::S_EVT_CUM_ACKED, e.cum_acked as u64),
            ];
            if let Some((i, x)) = fields.iter().find(|(i, x)| x >> widths[*i].width != 0) {
                return Outcome::NotCovered(format!(
                    "step {k}: {x} does not fit the {}-bit port `{}`",
                    widths[*i].width, widths[*i].name
                ));
            }
        }
    }
    match m.model_mut() {
        Some(model) => model.poke(conn, path, start),
        None => {
            // Through the ports, a path starts with an OPEN event: the
            // vectors whose entry an OPEN makes can run on the RTL.
            let open = pt::Event {
                kind: pt::kind::OPEN,
                conn,
                path,
                sport: start.sport,
                plane: start.plane,
                cum_acked: start.cum_acked,
                ..Default::default()
            };
            if pt::execute(&pt::Entry::default(), &open, 0, k).entry != start {
                return Outcome::NotCovered(
                    "its starting entry is not one an OPEN event makes, and the RTL's table has no write port".into(),
                );
            }
            let mut inp = pt::Inputs { evt_valid: true, evt: open, ..idle };
            inp.evt.now = v.steps.first().map_or(0, |s| s.now);
            inp.ts_now = inp.evt.now.wrapping_sub(1 << 30);
            m.clock(&inp);
            for _ in 0..p.read_latency + 3 {
                m.clock(&pt::Inputs { ts_now: inp.ts_now, ..idle });
            }
            if m.m().entry(conn, path) != start {
                return Outcome::Fail("the OPEN event did not make the vector's starting entry".into());
            }
        }
    }
    let mut want = v.entry;
    for (k, s) in v.steps.iter().enumerate() {
        want = match with_changes(&want, &s.changes) {
            Ok(e) => e,
            Err(e) => return Outcome::Fail(format!("step {k}: {e}")),
        };
        let ts_now = s.now.wrapping_sub(1 << 30);
        let mut inp = pt::Inputs { ts_now, ..idle };
        let mut waited = 0;
        while !m.m().outputs().evt_ready {
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
            let o = m.m().outputs();
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
        let got = m.m().entry(conn, path);
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

/// Whether this build has design `name` (the top or its receive side)
/// Verilated for a config equal to `cfg` (only `small`: the design table
/// in verif/build.rs).
fn built(cfg: &Config, name: &str) -> bool {
    mrnic_verif::blocks::built_config(name, cfg, &cfg.name).is_ok()
}
