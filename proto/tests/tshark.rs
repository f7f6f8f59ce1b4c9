//! Wireshark agrees with the Rust decoder: tshark, loading the dissector
//! generated from the field table, shows every field of every packet of the
//! synthesized exchange with the value the Rust decoder gives, and finds the
//! IPv4, UDP and ICRC checks good.
//!
//! Needs `tshark`. Without it the test is skipped, unless CI=true, where a
//! missing tool is a failure.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use mrnic_proto::dissector::{self, Value};
use mrnic_proto::packet::{decode_frame, udp_checksum, NET_OVERHEAD};
use mrnic_proto::pcap::PcapWriter;
use mrnic_proto::synth;

/// tshark's checksum status values (epan's proto_checksum_enum_e), which
/// `-T fields` prints as numbers: 0 bad, 1 good, 2 unverified.
const CHECKSUM_GOOD: &str = "1";
const EXTRA: [&str; 4] = ["frame.number", "ip.checksum.status", "udp.checksum.status", "_ws.expert.message"];

fn tshark_present() -> bool {
    let found = Command::new("tshark").arg("--version").output().is_ok_and(|o| o.status.success());
    if !found {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("tshark not installed and CI=true: install it (apt-get install -y tshark)");
        }
        println!("skipped: tshark not installed");
    }
    found
}

fn work_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("tshark-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write_pcap(path: &Path, frames: &[(u64, Vec<u8>)]) {
    let mut w = PcapWriter::new(std::fs::File::create(path).unwrap()).unwrap();
    for (ts, f) in frames {
        w.write(*ts, f).unwrap();
    }
    w.into_inner().unwrap();
}

/// Runs tshark over `pcap` with the generated dissector and returns, per
/// packet, field name -> printed value.
fn tshark_fields(dir: &Path, pcap: &Path) -> Vec<BTreeMap<String, String>> {
    let lua = dir.join("mrnic.lua");
    std::fs::write(&lua, dissector::lua_default()).unwrap();
    let mut names: Vec<String> = EXTRA.iter().map(|s| s.to_string()).collect();
    names.extend(dissector::header_field_names().into_iter().map(|(n, _, _)| n));
    names.extend(
        [dissector::PAYLOAD_LEN, dissector::ICRC, dissector::ICRC_COMPUTED, dissector::ICRC_STATUS].map(String::from),
    );
    let mut cmd = Command::new("tshark");
    cmd.arg("-n")
        .arg("-r")
        .arg(pcap)
        .arg("-X")
        .arg(format!("lua_script:{}", lua.display()))
        .args(["-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE"])
        .args(["-T", "fields", "-E", "separator=/t", "-E", "occurrence=a", "-E", "aggregator=;"]);
    for n in &names {
        cmd.arg("-e").arg(n);
    }
    // tshark keeps no state of its own here: no profile, no recent files.
    cmd.env("WIRESHARK_CONFIG_DIR", dir);
    let out = cmd.output().expect("run tshark");
    let stderr = String::from_utf8_lossy(&out.stderr);
    // As root tshark always prints this warning (print_current_user(); no
    // flag silences it); anything else on stderr is a real problem, such as
    // a Lua error while loading the dissector.
    let noise: Vec<&str> = stderr.lines().filter(|l| !l.starts_with("Running as user \"root\"")).collect();
    assert!(out.status.success() && noise.is_empty(), "tshark failed ({}):\n{}", out.status, noise.join("\n"));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let vals: Vec<&str> = line.split('\t').collect();
            assert_eq!(vals.len(), names.len(), "tshark row has {} columns: {line}", vals.len());
            names.iter().cloned().zip(vals.into_iter().map(String::from)).collect()
        })
        .collect()
}

/// A value as `-T fields` prints it: decimal, 0x-prefixed hex (HEX and
/// DEC_HEX bases), 1/0 for booleans, plain hex for byte strings.
fn printed(v: &Value, shown: &str) -> bool {
    match v {
        Value::Uint(n) => {
            let parsed = match shown.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => shown.parse::<u64>(),
            };
            parsed == Ok(*n)
        }
        Value::Bytes(b) => {
            let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
            shown.replace(':', "").eq_ignore_ascii_case(&hex)
        }
    }
}

#[test]
fn dissector_fields_equal_the_rust_decoder() {
    if !tshark_present() {
        return;
    }
    let dir = work_dir("exchange");
    let pcap = dir.join("exchange.pcap");
    let packets = synth::exchange().unwrap();
    synth::write_pcap(std::fs::File::create(&pcap).unwrap()).unwrap();
    let rows = tshark_fields(&dir, &pcap);
    assert_eq!(rows.len(), packets.len(), "tshark saw {} packets, the pcap holds {}", rows.len(), packets.len());

    let all_names = dissector::header_field_names();
    let mut wrong = Vec::new();
    let mut checked = 0;
    for (i, (p, row)) in packets.iter().zip(&rows).enumerate() {
        let f = decode_frame(&p.frame).unwrap();
        let mut bad = |what: String| wrong.push(format!("packet {} ({}): {what}", i + 1, p.note));
        for k in ["ip.checksum.status", "udp.checksum.status", dissector::ICRC_STATUS] {
            if row[k] != CHECKSUM_GOOD {
                bad(format!("{k} = {:?}, want {CHECKSUM_GOOD} (good)", row[k]));
            }
        }
        if !row["_ws.expert.message"].is_empty() {
            bad(format!("expert info: {}", row["_ws.expert.message"]));
        }
        let layout = f.header.opcode().layout();
        let expected: BTreeMap<String, Value> = dissector::header_fields(&f.header)
            .into_iter()
            .map(|(fld, v)| (dissector::abbrev(layout, fld), v))
            .collect();
        // Every declared header field: the packet's own with the decoder's
        // value, every other one absent.
        for (name, _, _) in &all_names {
            let shown = &row[name];
            match expected.get(name) {
                Some(v) if !printed(v, shown) => bad(format!("{name}: tshark {shown:?}, Rust {v:?}")),
                Some(_) => checked += 1,
                None if !shown.is_empty() => bad(format!("{name} shown ({shown:?}) but not in a {}", layout.name)),
                None => {}
            }
        }
        let icrc = u32::from_be_bytes(p.frame[p.frame.len() - 4..].try_into().unwrap());
        if !printed(&Value::Uint(f.payload.len() as u64), &row[dissector::PAYLOAD_LEN]) {
            bad(format!("payload.len {:?}, Rust {}", row[dissector::PAYLOAD_LEN], f.payload.len()));
        }
        for k in [dissector::ICRC, dissector::ICRC_COMPUTED] {
            if !printed(&Value::Uint(icrc as u64), &row[k]) {
                bad(format!("{k} {:?}, frame {icrc:#010x}", row[k]));
            }
        }
    }
    assert!(wrong.is_empty(), "tshark and the Rust decoder disagree:\n{}", wrong.join("\n"));
    let want: usize =
        packets.iter().map(|p| dissector::header_fields(&decode_frame(&p.frame).unwrap().header).len()).sum();
    assert_eq!(checked, want);
}

/// The dissector verifies the ICRC rather than only showing it: a frame
/// whose payload changed (with IP and UDP checksums still right) is flagged.
#[test]
fn dissector_flags_a_bad_icrc() {
    if !tshark_present() {
        return;
    }
    let dir = work_dir("bad-icrc");
    let pcap = dir.join("bad-icrc.pcap");
    let p = synth::exchange().unwrap().remove(0);
    let mut frame = p.frame.clone();
    frame[NET_OVERHEAD + 60] ^= 0x40;
    let udp = &mut frame[14 + 20..];
    udp[6..8].fill(0);
    let c = udp_checksum([10, 0, 0, 1], [10, 0, 0, 2], udp);
    udp[6..8].copy_from_slice(&c.to_be_bytes());
    let err = decode_frame(&frame).unwrap_err();
    assert_eq!((err.layout, err.field), ("data", "icrc"), "{err}");
    write_pcap(&pcap, &[(p.ts_micros, frame)]);
    let rows = tshark_fields(&dir, &pcap);
    assert_eq!(rows[0][dissector::ICRC_STATUS], "0");
    assert_eq!(rows[0]["udp.checksum.status"], CHECKSUM_GOOD);
    assert!(rows[0]["_ws.expert.message"].contains("Bad ICRC"), "{:?}", rows[0]["_ws.expert.message"]);
}
