//! The `rx` and `tx` vectors on the model's NIC top (`mrnic_core`), through
//! its ports only (`mrnic_verif::nic::NicRig`): the vector's regions through
//! the csr's MR staging registers and their fills into host memory, each
//! connection as the open records of the blocks that hold connection
//! state, then each step at its time and drained, compared with the
//! reference transaction for transaction (`docs/vectors.md`).
//!
//! Time: the top's `ts_now` runs (`ts_hold` low) until it reaches the
//! step's `t / ts_unit_ns`, then holds while the step is applied and
//! drained, since the reference answers an event at the event's time. What
//! the top does while time runs up to a step (a timer firing) belongs to
//! that step, as the reference's answers to a `timer` step do.
//!
//! Memory writes compare as bytes at addresses in order: the reference
//! writes a packet's payload at once, the top in AXI bursts split at 4 KiB
//! and the maximum burst, so both sides' consecutive contiguous writes are
//! joined first.
//!
//! A packet from the wire enters as the frame around its recorded UDP
//! payload (addresses, ports, ECN and plane as recorded), through the MAC
//! port `s_axis_*`.

use mrnic_model::cqe_merge::{opcode, Cqe};
use mrnic_model::tx_engine::{op, status};
use mrnic_proto::{decode_datagram, decode_frame, wrap_datagram, Config, NetHeaders};
use mrnic_reference::vectors::rx::{self, Input, MemWrite, NicVector, Output, Pkt};
use mrnic_reference::vectors::Outcome;
use mrnic_reference::verbs::{Completion, CqOpcode, Status, WrOp};
use mrnic_verif::nic::{mac_of, FrameOut, NicRig, OpenConn, Pressure};

/// Cycles without an output handshake that end a drain, beyond one sweep
/// of path_telemetry's RTO scanner (a timer due at the step's time fires
/// within a sweep).
const QUIET: u64 = 200;
/// The most cycles a step may take to drain.
const DRAIN_LIMIT: u64 = 2_000_000;
/// The most cycles the bench runs the clock to reach a step's time.
const TIME_LIMIT: u64 = 50_000_000;

/// What a refused verb compares as.
const REFUSED: &str = "refused";

/// Runs one NIC-level vector on the model's top.
pub fn check(cfg: &Config, v: &NicVector) -> Outcome {
    match run(cfg, v, Part::Top) {
        Ok(o) => o,
        Err(e) => Outcome::Fail(e),
    }
}

/// Runs one NIC-level vector on the top's receive side as Verilated RTL in
/// lockstep with the model (`NicRig::rx_twin`): memory writes and
/// completions compared with the reference as on the model; the answers
/// leave at the cut as records tx_engine would frame, so they are compared
/// cycle for cycle with the model's, not as packets; a vector that posts a
/// send needs the transmit side and is not covered.
pub fn check_rx_rtl(cfg: &Config, v: &NicVector) -> Outcome {
    match run(cfg, v, Part::RxRtl) {
        Ok(o) => o,
        Err(e) => Outcome::Fail(e),
    }
}

/// Runs one NIC-level vector on the whole top as Verilated RTL in lockstep
/// with the model (`NicRig::twin`): frames, memory writes and completions
/// compared with the reference as on the model, and every output of the
/// top compared with the model's every cycle.
pub fn check_rtl(cfg: &Config, v: &NicVector) -> Outcome {
    match run(cfg, v, Part::TopRtl) {
        Ok(o) => o,
        Err(e) => Outcome::Fail(e),
    }
}

/// What runs the vector.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    /// The model's whole top.
    Top,
    /// The receive side, model and RTL in lockstep.
    RxRtl,
    /// The whole top, model and RTL in lockstep.
    TopRtl,
}

fn run(cfg: &Config, v: &NicVector, part: Part) -> Result<Outcome, String> {
    if part == Part::RxRtl && v.steps.iter().any(|s| matches!(s.input, Input::PostSend { .. })) {
        return Ok(Outcome::NotCovered("it posts a send: the transmit side has no RTL yet".into()));
    }
    // The driver's choices (each path's first source port, its plane) are
    // the reference NIC's, as a host driver would hand them to the NIC.
    let refnic = rx::build(cfg, &v.nic, &v.regions, &v.conns)?;
    let mut rig = match part {
        Part::Top => NicRig::new(cfg, v.seed, Pressure::default())?,
        Part::RxRtl => NicRig::rx_twin(cfg, v.seed, Pressure::default())?,
        Part::TopRtl => NicRig::twin(cfg, v.seed, Pressure::default())?,
    };
    let conns = cfg.transport.connections;
    let index = |id: u32| id & (conns - 1);
    rig.set("ts_hold", 1)?;
    if part != Part::RxRtl {
        rig.set("cfg_src_ip", v.nic.addr as u64)?;
        rig.set("cfg_src_mac", mac_of(v.nic.addr))?;
    }
    // No byte may land outside a registered region, whatever the vector.
    rig.wmem.guard = Some(v.regions.iter().map(|r| (r.base, r.base.saturating_add(r.len))).collect());
    for r in &v.regions {
        rig.register_mr(cfg, r.key, r.base, r.len, r.access)?;
        for f in &r.fill {
            rig.memory().write(f.addr, &f.data);
        }
    }
    for c in &v.conns {
        let info =
            refnic.conn_info(c.local_id).ok_or_else(|| format!("conn {}: the reference has none", c.local_id))?;
        let open = OpenConn {
            local_id: c.local_id,
            remote_id: c.remote_id,
            remote: c.remote,
            tx_psn: c.tx_psn,
            rx_psn: c.rx_psn,
            paths: info.paths.iter().map(|p| (p.sport, p.plane)).collect(),
        };
        rig.open_conn(index(c.local_id), &open)?;
    }
    if !rig.drain(QUIET, DRAIN_LIMIT) {
        return Err("setup did not drain".into());
    }
    take(&mut rig);
    let unit = cfg.timers.ts_unit_ns as u64;
    // Plus the longest the top may work without a handshake: a sweep of
    // the RTO scanner, and tx_engine's acknowledgement unit walking a
    // path's ring twice for one SACK or NACK (a NACK's failure completions
    // come after it).
    let quiet = QUIET
        + cfg.transport.connections as u64 * cfg.transport.paths_per_conn as u64
        + 2 * cfg.hardware.tx_ring_depth as u64;
    for (k, s) in v.steps.iter().enumerate() {
        let at = format!("step {k} (t={} ns)", s.t);
        let target = (s.t / unit) as u32;
        let ts = rig.get("ts_now")? as u32;
        if target < ts {
            return Err(format!("{at}: time goes back ({target} < {ts} units)"));
        }
        if target > ts {
            rig.set("ts_hold", 0)?;
            let start = rig.cycle;
            while (rig.get("ts_now")? as u32) < target {
                rig.clock();
                if rig.cycle - start > TIME_LIMIT {
                    return Err(format!("{at}: the clock did not reach {target} units"));
                }
            }
            rig.set("ts_hold", 1)?;
        }
        let mut error = None;
        match &s.input {
            Input::Packet(p) => {
                rig.send_frame(&frame_of(p)?, p.plane)?;
            }
            Input::Timer => {}
            Input::PostSend { conn, stream, wr } => {
                let (opc, raddr, rkey) = match (wr.op, wr.imm) {
                    (WrOp::Write { remote_addr, rkey }, None) => (op::WRITE, remote_addr, rkey),
                    (WrOp::Write { remote_addr, rkey }, Some(_)) => (op::WRITE_IMM, remote_addr, rkey),
                    (WrOp::Send, None) => (op::SEND, 0, 0),
                    (WrOp::Send, Some(_)) => (op::SEND_IMM, 0, 0),
                };
                if s.out.error.is_some() {
                    return Ok(Outcome::NotCovered(format!(
                        "{at}: the reference refuses this post_send ({:?}); the top has no refusal path for work \
                         requests yet",
                        s.out.error
                    )));
                }
                rig.send(
                    "s_wr",
                    &[
                        ("conn", index(*conn) as u64),
                        ("stream", *stream as u64),
                        ("op", opc as u64),
                        ("wr_id", wr.wr_id),
                        ("laddr", wr.local.addr),
                        ("len", wr.local.len),
                        ("raddr", raddr),
                        ("rkey", rkey as u64),
                        ("imm", wr.imm.unwrap_or(0) as u64),
                    ],
                )?;
            }
            Input::PostRecv { conn, stream, recv } => {
                // The driver gives the receive the key of the region that
                // holds its buffer, as an ibv_recv_wr SGE's lkey; one that no
                // receive region holds is refused here, as the reference's
                // post_recv refuses it (an empty buffer needs no region).
                let lkey = match recv_lkey(&v.regions, recv.addr, recv.len as u64) {
                    Some(k) => Some(k),
                    None if recv.len == 0 => Some(0),
                    None => None,
                };
                if let Some(lkey) = lkey {
                    let buf = (recv.addr, recv.len as u64);
                    if !rig.post_recv(index(*conn), *stream as u32, buf, recv.wr_id, lkey)? {
                        error = Some("refused: the receive queue is full".to_string());
                    }
                } else {
                    error = Some("refused: no receive region holds the buffer".to_string());
                }
            }
        }
        if !rig.drain(quiet, DRAIN_LIMIT) {
            return Ok(Outcome::Fail(format!("{at}: the top did not drain in {DRAIN_LIMIT} cycles")));
        }
        if !rig.violations.is_empty() {
            return Ok(Outcome::Fail(format!("{at}: host memory: {}", rig.violations.join("; "))));
        }
        if let Some(m) = rig.mismatch() {
            return Ok(Outcome::Fail(format!("{at}: the RTL differs from the model: {m}")));
        }
        if rig.wmem.outside > 0 {
            let first = rig.wmem.outside_at.first().copied().unwrap_or(0);
            return Ok(Outcome::Fail(format!(
                "{at}: {} bytes written outside the regions, first at {first:#x}",
                rig.wmem.outside
            )));
        }
        let (frames, writes, cqes) = take(&mut rig);
        let got = Output {
            pkts: frames.iter().map(|f| pkt_of(f, v.nic.addr)).collect::<Result<_, _>>()?,
            writes: joined(writes),
            cpl: cqes.iter().map(|c| completion(c, &v.conns, conns)).collect::<Result<_, _>>()?,
            error: error.map(|_| REFUSED.to_string()),
        };
        // A refusal compares as one (the top has no message text).
        let mut want = Output {
            writes: joined(s.out.writes.clone()),
            error: s.out.error.as_ref().map(|_| REFUSED.to_string()),
            ..s.out.clone()
        };
        if part == Part::RxRtl {
            // Answers stop at the cut (above).
            want.pkts.clear();
        }
        if let Some(d) = rx::diff(&want, &got) {
            return Ok(Outcome::Fail(format!("{at}: {d}{}", missing(&want, &got))));
        }
    }
    Ok(Outcome::Pass)
}

/// The Ethernet frame that carries a recorded packet.
fn frame_of(p: &Pkt) -> Result<Vec<u8>, String> {
    let mac = |a: u32| {
        let b = mac_of(a).to_be_bytes();
        [b[2], b[3], b[4], b[5], b[6], b[7]]
    };
    let net = NetHeaders {
        dst_mac: mac(p.dst),
        src_mac: mac(p.src),
        src_ip: p.src.to_be_bytes(),
        dst_ip: p.dst.to_be_bytes(),
        ecn: p.ecn,
        src_port: p.sport,
        dst_port: p.dport,
        ..NetHeaders::default()
    };
    let mut f = Vec::new();
    wrap_datagram(&net, &p.bytes, &mut f).map_err(|e| format!("a recorded packet does not frame: {e}"))?;
    Ok(f)
}

/// The key of the region with receive access that holds `[addr, addr +
/// len)`, as the reference's `post_recv` finds it (`Memory::find(..,
/// RECV)`): regions do not overlap, so at most one holds the range.
fn recv_lkey(regions: &[rx::Region], addr: u64, len: u64) -> Option<u32> {
    let end = addr.checked_add(len)?;
    regions
        .iter()
        .find(|r| addr >= r.base && end <= r.base + r.len)
        .filter(|r| r.access & mrnic_model::dma_write_engine::ACCESS_RECV != 0)
        .map(|r| r.key)
}

/// When one side has more packets than the other, the first extra one's
/// header, to say what was sent or not sent.
fn missing(want: &Output, got: &Output) -> String {
    let (side, list, n) = if want.pkts.len() > got.pkts.len() {
        ("not sent", &want.pkts, got.pkts.len())
    } else {
        ("sent, not expected", &got.pkts, want.pkts.len())
    };
    match list.get(n).map(|p| decode_datagram(&p.bytes)) {
        Some(Ok(d)) => format!(" (first packet {side}: {:?} on plane {})", d.header, list[n].plane),
        Some(Err(e)) => format!(" (first packet {side} does not decode: {e})"),
        None => String::new(),
    }
}

/// Takes what the top has put out since the last call.
fn take(rig: &mut NicRig) -> (Vec<FrameOut>, Vec<MemWrite>, Vec<Cqe>) {
    let writes = rig
        .wmem
        .log
        .as_mut()
        .map(std::mem::take)
        .unwrap_or_default()
        .into_iter()
        .map(|(addr, data)| MemWrite { addr, data })
        .collect();
    (std::mem::take(&mut rig.frames), writes, std::mem::take(&mut rig.cqes))
}

/// Consecutive writes that continue each other joined into one.
fn joined(ws: Vec<MemWrite>) -> Vec<MemWrite> {
    let mut out: Vec<MemWrite> = Vec::new();
    for w in ws {
        match out.last_mut() {
            Some(l) if l.addr.wrapping_add(l.data.len() as u64) == w.addr => l.data.extend_from_slice(&w.data),
            _ => out.push(w),
        }
    }
    out
}

/// A frame the top sent, as the UDP view the vectors record.
fn pkt_of(f: &FrameOut, own: u32) -> Result<Pkt, String> {
    let d = decode_frame(&f.bytes).map_err(|e| format!("the top sent a frame that does not decode: {e}"))?;
    let udp_len = u16::from_be_bytes([f.bytes[38], f.bytes[39]]) as usize;
    let src = u32::from_be_bytes(d.net.src_ip);
    if src != own {
        return Err(format!("the top sent a frame from IPv4 {src:#x}, not its own {own:#x}"));
    }
    Ok(Pkt {
        src,
        dst: u32::from_be_bytes(d.net.dst_ip),
        sport: d.net.src_port,
        dport: d.net.dst_port,
        plane: f.plane,
        ecn: d.net.ecn,
        bytes: f.bytes[42..34 + udp_len].to_vec(),
    })
}

/// A completion of the top's queue as the reference's.
fn completion(c: &Cqe, conns: &[mrnic_reference::verbs::ConnParams], table: u32) -> Result<Completion, String> {
    let id = conns.iter().find(|p| p.local_id & (table - 1) == c.conn).map_or(c.conn, |p| p.local_id);
    let st = match c.status {
        status::SUCCESS => Status::Success,
        status::LOCAL_PROTECTION => Status::LocalProtectionError,
        status::REMOTE_ACCESS => Status::RemoteAccessError,
        status::REMOTE_INVALID_REQUEST => Status::RemoteInvalidRequest,
        status::RNR_RETRY_EXCEEDED => Status::RnrRetryExceeded,
        status::TRANSPORT_RETRY_EXCEEDED => Status::TransportRetryExceeded,
        status::WR_FLUSH => Status::WrFlushError,
        x => return Err(format!("a completion with status code {x}, which no status has: {c:?}")),
    };
    let opc = match c.opcode {
        opcode::WRITE => CqOpcode::Write,
        opcode::SEND => CqOpcode::Send,
        opcode::RECV => CqOpcode::Recv,
        _ => CqOpcode::RecvRdmaWithImm,
    };
    Ok(Completion {
        wr_id: c.wr_id,
        status: st,
        opcode: opc,
        conn: id,
        stream: c.stream as u8,
        byte_len: c.byte_len,
        imm: c.imm,
    })
}
