//! `mrnic pcap decode FILE` and `mrnic pcap synth --out FILE`.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Subcommand;
use mrnic_proto::packet::{ECN_CE, ECN_ECT0, ECN_NOT_ECT};
use mrnic_proto::pcap::{PcapReader, LINKTYPE_ETHERNET};
use mrnic_proto::{decode_frame, synth, Frame, Header, Placement};

#[derive(Subcommand)]
pub enum PcapCmd {
    /// Print one line per packet with its transport fields; frames that do
    /// not decode print their error and the run goes on.
    Decode {
        /// A classic pcap file (pcapng: convert with `editcap -F pcap`).
        file: PathBuf,
    },
    /// Write a pcap of a short exchange between two hosts over four paths:
    /// WRITEs, SENDs, a loss and its retransmission, a CE mark, NACKs, a probe.
    Synth {
        #[arg(long)]
        out: PathBuf,
    },
}

pub fn run(c: PcapCmd) -> Result<()> {
    match c {
        PcapCmd::Decode { file } => decode(&file),
        PcapCmd::Synth { out } => {
            let f = File::create(&out).with_context(|| format!("cannot create {}", out.display()))?;
            synth::write_pcap(BufWriter::new(f)).with_context(|| format!("writing {}", out.display()))?;
            Ok(())
        }
    }
}

fn decode(file: &PathBuf) -> Result<()> {
    let name = file.display();
    let f = File::open(file).with_context(|| format!("cannot open {name}"))?;
    let reader = PcapReader::new(BufReader::new(f)).with_context(|| format!("{name}"))?;
    let h = *reader.header();
    if h.linktype != LINKTYPE_ETHERNET {
        bail!("{name}: link type {} is not Ethernet (1); only Ethernet captures are decoded", h.linktype);
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut first_ns = None;
    for (i, rec) in reader.enumerate() {
        let rec = rec.with_context(|| format!("{name}: damaged after {i} packet(s)"))?;
        let ns = rec.ts_sec as u64 * 1_000_000_000 + rec.ts_nsec as u64;
        let t0 = *first_ns.get_or_insert(ns);
        let line = describe(i as u64 + 1, ns.saturating_sub(t0), &rec.data, rec.orig_len as usize);
        // A closed pipe (`| head`) ends the run quietly rather than as an error.
        if writeln!(out, "{line}").is_err() {
            return Ok(());
        }
    }
    Ok(())
}

/// One packet as a line: its number, seconds since the first packet, and
/// either its fields or the decode error naming field and offset.
pub fn describe(number: u64, since_first_ns: u64, frame: &[u8], orig_len: usize) -> String {
    let mut s =
        format!("{number:>4} {:>4}.{:06} ", since_first_ns / 1_000_000_000, since_first_ns % 1_000_000_000 / 1000);
    if frame.len() < orig_len {
        let _ = write!(s, "[captured {} of {orig_len} bytes] ", frame.len());
    }
    match decode_frame(frame) {
        Ok(f) => fields(&mut s, &f),
        Err(e) => {
            let _ = write!(s, "undecodable ({} bytes): {e}", frame.len());
        }
    }
    s
}

fn fields(s: &mut String, f: &Frame<'_>) {
    let n = &f.net;
    let ip = |a: [u8; 4]| format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3]);
    let ecn = match n.ecn {
        ECN_NOT_ECT => "not-ECT",
        ECN_ECT0 => "ECT0",
        ECN_CE => "CE",
        _ => "ECT1",
    };
    let _ = write!(
        s,
        "{}:{} -> {}:{} {ecn:<4} {:<9} conn={} path={}",
        ip(n.src_ip),
        n.src_port,
        ip(n.dst_ip),
        n.dst_port,
        f.header.opcode().name(),
        f.header.dst_conn(),
        f.header.path_id()
    );
    match &f.header {
        Header::Data(d) => {
            let _ = write!(
                s,
                " psn={}/gen={} stream={}/msn={} len={}/msg={}",
                d.path_psn, d.path_gen, d.stream_id, d.msn, d.payload_len, d.msg_len
            );
            match d.place {
                Placement::Write { rkey, addr } => {
                    let _ = write!(s, " rkey={rkey:#010x} addr={addr:#x}");
                }
                Placement::Send { rq_seq, msg_offset } => {
                    let _ = write!(s, " rq_seq={rq_seq} offset={msg_offset}");
                }
            }
            if let Some(imm) = d.imm {
                let _ = write!(s, " imm={imm:#010x}");
            }
            let fl = d.flags;
            let names: Vec<&str> =
                [(fl.som, "SOM"), (fl.eom, "EOM"), (fl.retx, "RETX"), (fl.ackreq, "ACKREQ"), (fl.se, "SE")]
                    .iter()
                    .filter(|(on, _)| *on)
                    .map(|(_, n)| *n)
                    .collect();
            let _ =
                write!(s, " flags={} ts={}", if names.is_empty() { "-".to_string() } else { names.join(",") }, d.tx_ts);
        }
        Header::Sack(k) => {
            let high = k.bitmap.highest().map_or("-".to_string(), |h| h.to_string());
            let _ = write!(
                s,
                " gen={} cum_psn={} bitmap={}/high={high} ecn_cnt={} rate_hint={:#06x} echo_ts={} stream={}/completed_msn={}",
                k.path_gen,
                k.cum_psn,
                k.bitmap.count(),
                k.ecn_cnt,
                k.rate_hint,
                k.echo_ts,
                k.stream_id,
                k.completed_msn
            );
        }
        Header::Nack(k) => {
            let _ = write!(
                s,
                " {} psn={}/gen={} stream={}/msn={} echo_ts={}",
                k.code.name(),
                k.path_psn,
                k.path_gen,
                k.stream_id,
                k.msn,
                k.echo_ts
            );
        }
        Header::Probe(p) => {
            let _ = write!(s, " psn={}/gen={} ts={}", p.path_psn, p.path_gen, p.tx_ts);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_synth_packet_decodes_to_one_line() {
        let pkts = synth::exchange().unwrap();
        for (i, p) in pkts.iter().enumerate() {
            let line = describe(i as u64 + 1, 0, &p.frame, p.frame.len());
            assert!(!line.contains("undecodable"), "{line}");
            assert!(!line.contains('\n'));
        }
        let sack_hole = pkts.iter().position(|p| p.note.starts_with("SACK with a hole")).unwrap();
        let line = describe(1, 0, &pkts[sack_hole].frame, pkts[sack_hole].frame.len());
        assert!(line.contains("SACK") && line.contains("cum_psn=1 bitmap=1/high=0"), "{line}");
    }

    #[test]
    fn a_bad_frame_prints_its_field_and_offset() {
        let mut frame = synth::exchange().unwrap().remove(0).frame;
        let last = frame.len() - 1;
        frame[last] ^= 1;
        let line = describe(7, 1_500_000, &frame, frame.len());
        assert!(line.starts_with("   7    0.001500 undecodable"), "{line}");
        // The UDP checksum covers the ICRC, so it is the first check to fail.
        assert!(line.contains("udp.checksum at byte 40: bad checksum"), "{line}");
    }
}
