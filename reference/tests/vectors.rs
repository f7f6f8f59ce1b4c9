//! The golden vectors: generation is deterministic, the committed set under
//! `verif/vectors/` is exactly what the generator writes, the reference
//! passes its own vectors, and bad files are refused with file and line.

use std::path::{Path, PathBuf};

use mrnic_proto::Config;
use mrnic_reference::vectors::{self, BlockKind, ReferenceTarget, VectorError};

/// The committed set: its config and seed.
const CONFIG: &str = "small";
const SEED: u64 = 1;

fn committed() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../verif/vectors")
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mrnic-vectors-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn the_committed_vectors_regenerate_identically() {
    let cfg = Config::builtin(CONFIG).unwrap();
    if std::env::var_os("MRNIC_BLESS_VECTORS").is_some() {
        vectors::generate(&cfg, SEED, &committed()).unwrap();
    }
    let out = tmp("regen");
    vectors::generate(&cfg, SEED, &out).unwrap();
    let regen = format!(
        "cargo run -- vectors gen --config {CONFIG} --seed {SEED} --out verif/vectors \
         (or MRNIC_BLESS_VECTORS=1 cargo test -p mrnic-reference --test vectors)"
    );
    for b in BlockKind::ALL {
        let name = b.file_name();
        let want = std::fs::read_to_string(committed().join(&name))
            .unwrap_or_else(|e| panic!("verif/vectors/{name}: {e}; write it with `{regen}`"));
        let got = std::fs::read_to_string(out.join(&name)).unwrap();
        if want != got {
            let line = want.lines().zip(got.lines()).position(|(a, b)| a != b).map_or(0, |i| i + 1);
            panic!("verif/vectors/{name} differs from what the generator writes now (first at line {line}); if the change is intended, regenerate with `{regen}`");
        }
    }
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn generation_is_deterministic_and_the_reference_passes() {
    let cfg = Config::builtin(CONFIG).unwrap();
    let (a, b) = (tmp("det-a"), tmp("det-b"));
    vectors::generate(&cfg, 7, &a).unwrap();
    vectors::generate(&cfg, 7, &b).unwrap();
    for k in BlockKind::ALL {
        assert_eq!(std::fs::read(a.join(k.file_name())).unwrap(), std::fs::read(b.join(k.file_name())).unwrap());
    }
    let r = vectors::check_dir(&a, &mut ReferenceTarget).unwrap();
    assert_eq!(r.failed, 0, "{}", r.text);
    assert!(r.passed > 50, "{}", r.text);
    let _ = std::fs::remove_dir_all(&a);
    let _ = std::fs::remove_dir_all(&b);
}

#[test]
fn the_reference_passes_the_committed_vectors() {
    let r = vectors::check_dir(&committed(), &mut ReferenceTarget).unwrap();
    assert_eq!(r.failed, 0, "{}", r.text);
    assert_eq!(r.not_modelled, 0);
    assert!(r.summary().ends_with(" passed, 0 failed"));
}

#[test]
fn a_changed_expectation_fails_the_check() {
    let cfg = Config::builtin(CONFIG).unwrap();
    let d = tmp("tamper");
    vectors::generate(&cfg, 3, &d).unwrap();
    // Change one expected decision of the path selector.
    let p = d.join("path_selector.jsonl");
    let text = std::fs::read_to_string(&p).unwrap();
    let tampered = text.replacen("\"chosen\":0", "\"chosen\":1", 1);
    assert_ne!(text, tampered);
    std::fs::write(&p, tampered).unwrap();
    let r = vectors::check_dir(&d, &mut ReferenceTarget).unwrap();
    assert_eq!(r.failed, 1, "{}", r.text);
    assert!(r.text.contains("FAIL path_selector.jsonl:"), "{}", r.text);
    let _ = std::fs::remove_dir_all(&d);
}

fn bad(name: &str, edit: impl Fn(&str) -> String) -> String {
    let cfg = Config::builtin(CONFIG).unwrap();
    let d = tmp(name);
    vectors::generate(&cfg, 2, &d).unwrap();
    let p = d.join("telemetry.jsonl");
    let text = std::fs::read_to_string(&p).unwrap();
    std::fs::write(&p, edit(&text)).unwrap();
    let e = vectors::check_dir(&d, &mut ReferenceTarget).unwrap_err();
    let _ = std::fs::remove_dir_all(&d);
    assert!(matches!(e, VectorError::Bad { .. }));
    e.to_string()
}

#[test]
fn bad_files_are_refused_with_file_and_line() {
    let e = bad("version", |t| t.replacen("\"version\":1", "\"version\":2", 1));
    assert!(e.contains("telemetry.jsonl:1:") && e.contains("version"), "{e}");
    let e = bad("json", |t| {
        let mut l: Vec<String> = t.lines().map(String::from).collect();
        let half = l[2].len() / 2;
        l[2].truncate(half);
        l.join("\n") + "\n"
    });
    assert!(e.contains("telemetry.jsonl:3:") && e.contains("malformed JSON"), "{e}");
    let e = bad("block", |t| {
        let mut l: Vec<String> = t.lines().map(String::from).collect();
        l[1] = l[1].replacen("\"block\":\"telemetry\"", "\"block\":\"rx\"", 1);
        l.join("\n") + "\n"
    });
    assert!(e.contains("telemetry.jsonl:2:") && e.contains("block \"rx\""), "{e}");
    let e = bad("field", |t| {
        let mut l: Vec<String> = t.lines().map(String::from).collect();
        l[3] = l[3].replacen("\"desc\":", "\"description\":", 1);
        l.join("\n") + "\n"
    });
    assert!(e.contains("telemetry.jsonl:4:") && e.contains("desc"), "{e}");
    let e = bad("format", |t| t.replacen("mrnic-vectors", "something-else", 1));
    assert!(e.contains("telemetry.jsonl:1:") && e.contains("not a vector file"), "{e}");
    let e = bad("truncated", |t| t.lines().take(3).collect::<Vec<_>>().join("\n") + "\n");
    assert!(e.contains("truncated"), "{e}");
}

/// Every NACK code, probes, CE marks, retransmissions and the path states
/// the vectors claim to cover are really in them.
#[test]
fn the_committed_vectors_cover_their_edge_cases() {
    use mrnic_proto::{decode_datagram, Header, NackCode};
    use mrnic_reference::vectors::rx::{Input, NicVector};
    use mrnic_reference::vectors::AnyFile;
    use mrnic_reference::PathState;

    let mut nacks = std::collections::BTreeSet::new();
    let (mut probes, mut retx, mut ce_in, mut ce_counted) = (0, 0, 0, 0);
    for b in [BlockKind::Rx, BlockKind::Tx] {
        let (AnyFile::Rx(f) | AnyFile::Tx(f)) = AnyFile::read(&committed().join(b.file_name()), b).unwrap() else {
            unreachable!()
        };
        for (_, v) in &f.vectors {
            let v: &NicVector = v;
            for s in &v.steps {
                let mut pkts: Vec<&mrnic_reference::vectors::rx::Pkt> = s.out.pkts.iter().collect();
                if let Input::Packet(p) = &s.input {
                    if p.ecn == mrnic_proto::packet::ECN_CE {
                        ce_in += 1;
                    }
                    pkts.push(p);
                }
                for p in pkts {
                    match decode_datagram(&p.bytes).map(|d| d.header) {
                        Ok(Header::Nack(n)) => {
                            nacks.insert(n.code as u8);
                        }
                        Ok(Header::Probe(_)) => probes += 1,
                        Ok(Header::Data(d)) if d.flags.retx => retx += 1,
                        Ok(Header::Sack(s)) if s.ecn_cnt > 0 => ce_counted += 1,
                        _ => {}
                    }
                }
            }
        }
    }
    let all: std::collections::BTreeSet<u8> = NackCode::ALL.iter().map(|c| *c as u8).collect();
    assert_eq!(nacks, all, "every NACK code appears");
    assert!(probes > 0 && retx > 0 && ce_in > 0 && ce_counted > 0, "{probes} {retx} {ce_in} {ce_counted}");

    // Telemetry walks every state and raises every action.
    let AnyFile::Telemetry(f) = AnyFile::read(&committed().join("telemetry.jsonl"), BlockKind::Telemetry).unwrap()
    else {
        unreachable!()
    };
    let mut states = std::collections::BTreeSet::new();
    let mut actions = std::collections::BTreeSet::new();
    for (_, v) in &f.vectors {
        for s in &v.steps {
            if let Some(st) = s.changes.get("state") {
                states.insert(st.as_str().unwrap().to_string());
            }
            actions.extend(s.action.iter().cloned());
        }
    }
    for st in [PathState::Good, PathState::Skip, PathState::Suspect, PathState::Dead] {
        assert!(states.contains(&format!("{st:?}")), "{st:?} never entered: {states:?}");
    }
    assert_eq!(actions.len(), 4, "{actions:?}");
}

/// The rx_parser file accepts every opcode and reaches every drop reason.
#[test]
fn the_rx_parser_vectors_reach_every_drop_reason() {
    use mrnic_proto::drop::DropReason;
    use mrnic_reference::vectors::AnyFile;

    let AnyFile::RxParser(f) = AnyFile::read(&committed().join("rx_parser.jsonl"), BlockKind::RxParser).unwrap() else {
        unreachable!()
    };
    let mut seen = std::collections::BTreeSet::new();
    let mut ops = std::collections::BTreeSet::new();
    for (_, v) in &f.vectors {
        for fr in &v.frames {
            seen.insert(fr.verdict.clone());
            if let Some(o) = &fr.out {
                ops.insert(mrnic_proto::layouts::common::OPCODE.get(&o.hdr));
            }
        }
    }
    for r in DropReason::ALL {
        assert!(seen.contains(r.name()), "no frame dropped for {r}: {seen:?}");
    }
    assert!(seen.contains("ok"));
    assert_eq!(ops.len(), 7, "accepted opcodes {ops:?}");
}
