//! `mrnic-fuzz`: a seeded, structure-aware mutation fuzzer for mrnic's
//! hostile-input surfaces that runs on the stable toolchain.
//!
//! It is NOT coverage guided (libFuzzer needs nightly; AFL++ via cargo-afl
//! needs its C toolchain built at install time, see docs/robustness.md): it
//! draws inputs from a committed seed corpus and mutates them (bit flips,
//! interesting values, truncation, extension, splicing, and header fields
//! decoded, rewritten and re-encoded with a valid ICRC so that mutations get
//! past the checksum). Every run is a function of its seed.
//!
//! Targets:
//! - `frame`: `mrnic_proto::decode_frame` on mutated Ethernet frames;
//! - `datagram`: `mrnic_proto::decode_datagram` on mutated datagrams;
//! - `rx`: a reference NIC with one connection, a remote-write region, a
//!   receive region with posted receives and a local-only region, fed
//!   sequences of mutated packets with time passing and its timers run.
//!   Checks after every packet: no panic, every memory write lies inside the
//!   remote-write region or inside a posted receive buffer, no receive
//!   completion is raised twice; a packet from a source that is not the
//!   peer (sent now and then) writes nothing and is answered by nothing.
//! - `model_rx`: the cycle model's `rx_parser` fed runs of mutated frames
//!   with stream damage and random backpressure (see `model_rx.rs`).
//!
//! Usage:
//!   mrnic-fuzz corpus                       rebuild fuzz/corpus from the golden vectors and the synth exchange
//!   mrnic-fuzz run TARGET [--seconds S] [--iters N] [--seed X]

use std::collections::{BTreeMap, BTreeSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use mrnic_proto::packet::icrc;
use mrnic_proto::{decode_datagram, decode_frame, encode_datagram, Config, Header, Placement};
use mrnic_reference::rng::Rng;
use mrnic_reference::{Access, ConnParams, Nic, NicConfig, RecvRequest, WirePacket};

mod model_rx;

const TARGETS: [&str; 4] = ["frame", "datagram", "rx", "model_rx"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn corpus_dir(target: &str) -> PathBuf {
    root().join("corpus").join(target)
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    (0..s.len()).step_by(2).map(|i| s.get(i..i + 2).and_then(|b| u8::from_str_radix(b, 16).ok())).collect()
}

/// Every `"packet": {"bytes": HEX}` in the rx vectors, in file order, grouped per vector.
fn vector_packets(path: &Path) -> Result<Vec<Vec<Vec<u8>>>, String> {
    fn walk(v: &serde_json::Value, out: &mut Vec<Vec<u8>>) {
        match v {
            serde_json::Value::Object(m) => {
                if let Some(b) = m.get("packet").and_then(|p| p.get("bytes")).and_then(|b| b.as_str()) {
                    out.extend(unhex(b));
                }
                m.values().for_each(|x| walk(x, out));
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut all = Vec::new();
    for line in text.lines().skip(1) {
        let v: serde_json::Value = serde_json::from_str(line).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut pk = Vec::new();
        walk(&v, &mut pk);
        if !pk.is_empty() {
            all.push(pk);
        }
    }
    Ok(all)
}

/// An rx input: packets, each a u16 big-endian length and its bytes.
fn pack(packets: &[Vec<u8>]) -> Vec<u8> {
    let mut o = Vec::new();
    for p in packets {
        o.extend_from_slice(&(p.len() as u16).to_be_bytes());
        o.extend_from_slice(p);
    }
    o
}

fn unpack(mut b: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    while b.len() >= 2 {
        let n = (u16::from_be_bytes([b[0], b[1]]) as usize).min(b.len() - 2);
        out.push(b[2..2 + n].to_vec());
        b = &b[2 + n..];
    }
    out
}

fn build_corpus() -> Result<(), String> {
    let vecs = vector_packets(&root().join("../verif/vectors/rx.jsonl"))?;
    let frames = mrnic_proto::synth::exchange().map_err(|e| e.to_string())?;
    let mut sets: BTreeMap<&str, Vec<Vec<u8>>> = BTreeMap::new();
    for f in &frames {
        sets.entry("frame").or_default().push(f.frame.clone());
        if let Ok(fr) = decode_frame(&f.frame) {
            let mut d = Vec::new();
            if encode_datagram(&fr.header, fr.payload, &mut d).is_ok() {
                sets.entry("datagram").or_default().push(d);
            }
        }
    }
    for v in &vecs {
        sets.entry("datagram").or_default().extend(v.iter().cloned());
        sets.entry("rx").or_default().push(pack(v));
    }
    let path = root().join("../verif/vectors/rx_parser.jsonl");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let model = sets.entry("model_rx").or_default();
    model.extend(model_rx::vector_frames(&text));
    model.extend(frames.iter().map(|f| f.frame.clone()));
    for (t, items) in sets {
        let dir = corpus_dir(t);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for (i, b) in items.iter().enumerate() {
            std::fs::write(dir.join(format!("{i:03}.bin")), b).map_err(|e| e.to_string())?;
        }
        println!("corpus/{t}: {} seeds", items.len());
    }
    Ok(())
}

fn load_corpus(target: &str) -> Result<Vec<Vec<u8>>, String> {
    let dir = corpus_dir(target);
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e} (run `mrnic-fuzz corpus`)", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    names.sort();
    names.iter().map(|p| std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()))).collect()
}

// ------------------------------------------------------------ mutation

const INTERESTING: [u64; 12] =
    [0, 1, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0xff_ffff, 0x7fff_ffff, 0xffff_ffff, u64::MAX - 1, u64::MAX];

fn fix_icrc(b: &mut [u8]) {
    if b.len() >= 4 {
        let n = b.len() - 4;
        let c = icrc(&b[..n]);
        b[n..].copy_from_slice(&c.to_be_bytes());
    }
}

fn pick(rng: &mut Rng) -> u64 {
    if rng.below(2) == 0 {
        INTERESTING[rng.below(INTERESTING.len() as u64) as usize]
    } else {
        rng.next_u64() >> rng.below(64)
    }
}

/// Rewrites one field of a decoded header with an interesting or random
/// value, then re-encodes (valid ICRC).
fn mutate_fields(rng: &mut Rng, b: &[u8]) -> Option<Vec<u8>> {
    let d = decode_datagram(b).ok()?;
    let mut h = d.header;
    let mut payload = d.payload.to_vec();
    let v = pick(rng);
    match &mut h {
        Header::Data(x) => match rng.below(12) {
            0 => x.dst_conn = v as u32 & 0xff_ffff,
            1 => x.path_id = v as u8,
            2 => x.path_gen = v as u8,
            3 => x.path_psn = (x.path_psn as u64).wrapping_add(v) as u32 & 0xff_ffff,
            4 => x.msn = v as u32 & 0xff_ffff,
            5 => x.msg_len = v as u32,
            6 => x.stream_id = v as u8,
            7 => match &mut x.place {
                Placement::Write { rkey, addr } => {
                    if rng.below(2) == 0 {
                        *rkey ^= 1 << rng.below(32)
                    } else {
                        *addr = addr.wrapping_add(v)
                    }
                }
                Placement::Send { rq_seq, msg_offset } => {
                    if rng.below(2) == 0 {
                        *rq_seq = v as u32 & 0xff_ffff
                    } else {
                        *msg_offset = v as u32
                    }
                }
            },
            8 => {
                let n = rng.below(1100) as usize;
                payload.resize(n, 0xa5);
                x.payload_len = n as u16;
            }
            9 => x.imm = if x.imm.is_some() { None } else { Some(v as u32) },
            10 => {
                x.flags.som = rng.below(2) == 0;
                x.flags.eom = rng.below(2) == 0;
                x.flags.retx = rng.below(2) == 0;
                x.flags.ackreq = rng.below(2) == 0;
            }
            _ => x.tx_ts = v as u16,
        },
        Header::Sack(x) => match rng.below(5) {
            0 => x.cum_psn = v as u32 & 0xff_ffff,
            1 => x.bitmap.0[rng.below(4) as usize] = rng.next_u64(),
            2 => x.path_gen = v as u8,
            3 => x.completed_msn = v as u32 & 0xff_ffff,
            _ => x.dst_conn = v as u32 & 0xff_ffff,
        },
        Header::Nack(x) => match rng.below(3) {
            0 => x.path_psn = v as u32 & 0xff_ffff,
            1 => x.path_gen = v as u8,
            _ => x.dst_conn = v as u32 & 0xff_ffff,
        },
        Header::Probe(x) => match rng.below(3) {
            0 => x.path_psn = v as u32 & 0xff_ffff,
            1 => x.path_gen = v as u8,
            _ => x.path_id = v as u8,
        },
    }
    let mut out = Vec::new();
    encode_datagram(&h, &payload, &mut out).ok()?;
    Some(out)
}

/// Byte-level mutations; `icrc` re-seals the datagram afterwards (most
/// of the time) so that the mutation reaches the header checks.
fn mutate_bytes(rng: &mut Rng, b: &mut Vec<u8>, pool: &[Vec<u8>], icrc_ok: bool) {
    for _ in 0..1 + rng.below(4) {
        match rng.below(7) {
            0 if !b.is_empty() => {
                let i = rng.below(b.len() as u64 * 8);
                b[(i / 8) as usize] ^= 1 << (i % 8);
            }
            1 if !b.is_empty() => {
                let i = rng.below(b.len() as u64) as usize;
                b[i] = pick(rng) as u8;
            }
            2 => {
                let n = rng.below(b.len() as u64 + 1) as usize;
                b.truncate(n);
            }
            3 => {
                let n = rng.below(64) as usize;
                b.extend((0..n).map(|_| rng.next_u64() as u8));
            }
            4 if !pool.is_empty() => {
                let o = &pool[rng.below(pool.len() as u64) as usize];
                let cut = rng.below(b.len() as u64 + 1) as usize;
                let from = rng.below(o.len() as u64 + 1) as usize;
                b.truncate(cut);
                b.extend_from_slice(&o[from..]);
            }
            5 if b.len() >= 4 => {
                let i = rng.below(b.len() as u64 - 3) as usize;
                b[i..i + 4].copy_from_slice(&(pick(rng) as u32).to_be_bytes());
            }
            _ => {}
        }
    }
    if icrc_ok {
        fix_icrc(b);
    }
}

fn mutate_datagram(rng: &mut Rng, b: &[u8], pool: &[Vec<u8>]) -> Vec<u8> {
    if rng.below(2) == 0 {
        if let Some(x) = mutate_fields(rng, b) {
            return x;
        }
    }
    let mut x = b.to_vec();
    let seal = rng.below(10) != 0;
    mutate_bytes(rng, &mut x, pool, seal);
    x
}

// ------------------------------------------------------------ rx target

const WRITE_BASE: u64 = 65536;
const RECV_BASE: u64 = 524288;
const REGION: u64 = 16384;
const RECV_LEN: u32 = 512;

struct RxHarness {
    nic: Nic,
    /// Posted receive buffers (addr, len): SEND data may land only here.
    recv_bufs: Vec<(u64, u64)>,
    seen: BTreeSet<u64>,
    now: u64,
}

impl RxHarness {
    /// The NIC of the rx golden vectors (address 2, connection 2 from
    /// connection 1 at address 1, rx_psn 100), its three regions, and
    /// every stream's receive queue full.
    fn new(seed: u64) -> RxHarness {
        let cfg = Config::builtin("small").expect("small");
        let (streams, depth) = (cfg.transport.streams_per_conn, cfg.hardware.recv_queue_depth);
        let mut nic = Nic::new(NicConfig::new(cfg, 2, seed));
        nic.create_conn(ConnParams { local_id: 2, remote_id: 1, remote: 1, paths: 4, tx_psn: 0, rx_psn: 100 })
            .expect("conn");
        nic.reg_mr(WRITE_BASE, REGION, Access::REMOTE_WRITE).expect("mr");
        nic.reg_mr(RECV_BASE, REGION, Access::RECV).expect("mr");
        nic.reg_mr(2097152, 4096, Access::LOCAL).expect("mr");
        let mut recv_bufs = Vec::new();
        for s in 0..streams {
            for i in 0..depth {
                let addr = RECV_BASE + ((s * depth + i) * RECV_LEN) as u64;
                let wr_id = (s * 1000 + i) as u64;
                nic.post_recv(2, s as u8, RecvRequest { wr_id, addr, len: RECV_LEN }).expect("post_recv");
                recv_bufs.push((addr, RECV_LEN as u64));
            }
        }
        nic.set_write_trace(true);
        RxHarness { nic, recv_bufs, seen: BTreeSet::new(), now: 1_000 }
    }

    fn feed(&mut self, rng: &mut Rng, bytes: Vec<u8>) -> Result<(), String> {
        self.now += rng.below(200_000);
        // Now and then from an address that is not the peer's (1).
        let src = if rng.below(16) == 0 { 2 + rng.below(1000) as u32 } else { 1 };
        let p = WirePacket { src, dst: 2, sport: 49152 + rng.below(4) as u16, dport: 4797, plane: 0, ecn: 2, bytes };
        let before = *self.nic.counters();
        self.nic.handle_packet(self.now, &p);
        let mut answered = 0;
        while self.nic.poll_transmit(self.now).is_some() {
            answered += 1;
        }
        if src != 1 {
            let c = self.nic.counters();
            let connection_known = c.rx_bad_src + c.ack_bad_src != before.rx_bad_src + before.ack_bad_src;
            let written = c.rx_placed_bytes != before.rx_placed_bytes;
            if written || (connection_known && answered > 0) {
                return Err(format!("a packet from {src} (not the peer) wrote or was answered ({answered} packets)"));
            }
        }
        if self.nic.next_deadline().is_some_and(|d| d <= self.now) {
            self.nic.on_timer(self.now);
        }
        while self.nic.poll_transmit(self.now).is_some() {}
        for (addr, data) in self.nic.take_write_trace() {
            let end = addr.checked_add(data.len() as u64).ok_or("write wraps u64")?;
            let in_write = addr >= WRITE_BASE && end <= WRITE_BASE + REGION;
            let in_recv = self.recv_bufs.iter().any(|&(a, l)| addr >= a && end <= a + l);
            if !(in_write || in_recv) {
                return Err(format!("write of {} bytes at {addr:#x} outside the allowed ranges", data.len()));
            }
        }
        for c in self.nic.poll_cq(usize::MAX) {
            if c.opcode != mrnic_reference::CqOpcode::Write
                && c.opcode != mrnic_reference::CqOpcode::Send
                && !self.seen.insert(c.wr_id)
            {
                return Err(format!("receive completion {} raised twice", c.wr_id));
            }
        }
        Ok(())
    }
}

// ------------------------------------------------------------ driver

struct Stats {
    execs: u64,
    crashes: u64,
    violations: u64,
    decoded_ok: u64,
    counters_hit: BTreeSet<String>,
    model: model_rx::Seen,
}

fn one(target: &str, rng: &mut Rng, corpus: &[Vec<u8>], pool: &[Vec<u8>], st: &mut Stats) -> Result<(), String> {
    let base = &corpus[rng.below(corpus.len() as u64) as usize];
    match target {
        "frame" => {
            let mut f = base.clone();
            mutate_bytes(rng, &mut f, corpus, false);
            if decode_frame(&f).is_ok() {
                st.decoded_ok += 1;
            }
        }
        "datagram" => {
            let d = mutate_datagram(rng, base, corpus);
            if decode_datagram(&d).is_ok() {
                st.decoded_ok += 1;
            }
        }
        "model_rx" => model_rx::one(rng, corpus, &mut st.model)?,
        _ => {
            let mut h = RxHarness::new(rng.next_u64());
            let mut pk = unpack(base);
            // Sometimes splice in packets of other vectors; then mutate some.
            for _ in 0..rng.below(4) {
                let o = unpack(&corpus[rng.below(corpus.len() as u64) as usize]);
                if !o.is_empty() {
                    let at = rng.below(pk.len() as u64 + 1) as usize;
                    pk.insert(at, o[rng.below(o.len() as u64) as usize].clone());
                }
            }
            // Replays: repeat the sequence, or a PROBE flood, sometimes.
            if rng.below(4) == 0 {
                let again = pk.clone();
                pk.extend(again);
            }
            for p in pk {
                let p = if rng.below(3) == 0 { mutate_datagram(rng, &p, pool) } else { p };
                if decode_datagram(&p).is_ok() {
                    st.decoded_ok += 1;
                }
                h.feed(rng, p)?;
            }
            h.now += 10_000_000;
            h.feed(rng, Vec::new())?;
            if let Ok(serde_json::Value::Object(m)) = serde_json::to_value(h.nic.counters()) {
                st.counters_hit.extend(m.into_iter().filter(|(_, v)| v.as_u64().unwrap_or(0) > 0).map(|(k, _)| k));
            }
        }
    }
    Ok(())
}

fn run(target: &str, seconds: Option<u64>, iters: Option<u64>, seed: u64) -> Result<Stats, String> {
    let corpus = load_corpus(target)?;
    let pool = if target == "rx" { load_corpus("datagram")? } else { Vec::new() };
    if corpus.is_empty() {
        return Err(format!("corpus/{target} is empty (run `mrnic-fuzz corpus`)"));
    }
    let until = seconds.map(|s| Instant::now() + Duration::from_secs(s));
    let mut st = Stats {
        execs: 0,
        crashes: 0,
        violations: 0,
        decoded_ok: 0,
        counters_hit: BTreeSet::new(),
        model: model_rx::Seen::default(),
    };
    std::panic::set_hook(Box::new(|_| {}));
    loop {
        if iters.is_some_and(|n| st.execs >= n) || until.is_some_and(|t| Instant::now() >= t) {
            break;
        }
        let case = mrnic_reference::rng::splitmix64(&mut (seed ^ st.execs.wrapping_mul(0x9e37_79b9_7f4a_7c15)));
        let mut rng = Rng::new(case);
        st.execs += 1;
        match catch_unwind(AssertUnwindSafe(|| one(target, &mut rng, &corpus, &pool, &mut st))) {
            Ok(Ok(())) => {}
            Ok(Err(v)) => {
                st.violations += 1;
                eprintln!("{target}: case {case:#x}: {v}  (replay: mrnic-fuzz replay {target} {case:#x})");
            }
            Err(e) => {
                st.crashes += 1;
                let msg =
                    e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()));
                eprintln!(
                    "{target}: case {case:#x} panicked: {}  (replay: mrnic-fuzz replay {target} {case:#x})",
                    msg.unwrap_or_default()
                );
            }
        }
    }
    let _ = std::panic::take_hook();
    Ok(st)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).map(String::as_str);
    let num =
        |s: &str| if let Some(h) = s.strip_prefix("0x") { u64::from_str_radix(h, 16).ok() } else { s.parse().ok() };
    let result = match args.first().map(String::as_str) {
        Some("corpus") => build_corpus().map(|_| true),
        Some("replay") => {
            let (Some(t), Some(c)) = (args.get(1), args.get(2).and_then(|c| num(c))) else {
                eprintln!("usage: mrnic-fuzz replay TARGET CASE");
                return ExitCode::FAILURE;
            };
            std::panic::set_hook(Box::new(|_| {}));
            let corpus = load_corpus(t).unwrap_or_default();
            let pool = if t == "rx" { load_corpus("datagram").unwrap_or_default() } else { Vec::new() };
            let _ = std::panic::take_hook();
            let mut st = Stats { execs: 1, crashes: 0, violations: 0, decoded_ok: 0, counters_hit: BTreeSet::new(), model: model_rx::Seen::default() };
            let r = one(t, &mut Rng::new(c), &corpus, &pool, &mut st);
            println!("{r:?}");
            Ok(r.is_ok())
        }
        Some("run") => {
            let which: Vec<&str> = match args.get(1).map(String::as_str) {
                Some("all") | None => TARGETS.to_vec(),
                Some(t) if TARGETS.contains(&t) => vec![t],
                Some(t) => {
                    eprintln!("unknown target {t}: one of {TARGETS:?} or all");
                    return ExitCode::FAILURE;
                }
            };
            let seconds = flag("--seconds").and_then(num);
            let iters = flag("--iters").and_then(num);
            let seed = flag("--seed").and_then(num).unwrap_or(1);
            let mut clean = true;
            for t in which {
                match run(t, seconds.or(if iters.is_none() { Some(10) } else { None }), iters, seed) {
                    Ok(s) => {
                        let m = &s.model;
                        let extra = match t {
                            "rx" => format!(", {} counters reached: {:?}", s.counters_hit.len(), s.counters_hit),
                            "model_rx" => format!(
                                ", {} frames: {} accepted, {} dropped ({} after the header, {} by the block's reason order)",
                                m.frames, m.accepted, m.drops, m.late_drops, m.reason_order
                            ),
                            _ => String::new(),
                        };
                        let ok = if t == "model_rx" { String::new() } else { format!(", {} decoded ok", s.decoded_ok) };
                        println!(
                            "{t}: {} executions, {} crashes, {} invariant violations{ok}{extra}",
                            s.execs, s.crashes, s.violations
                        );
                        clean &= s.crashes == 0 && s.violations == 0;
                    }
                    Err(e) => {
                        eprintln!("{t}: {e}");
                        clean = false;
                    }
                }
            }
            Ok(clean)
        }
        _ => Err("usage: mrnic-fuzz corpus | run [frame|datagram|rx|all] [--seconds S] [--iters N] [--seed X] | replay TARGET CASE".into()),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
