//! `mrnic ref serve` and `mrnic ref send` as two processes on 127.0.0.1:
//! the server on an ephemeral port (read from its first line), the sender
//! with 1% loss injected; the server exits 0 only when every byte matched,
//! and non-zero when it checks against another seed.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};

fn mrnic() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mrnic"))
}

/// Starts `ref serve` on 127.0.0.1:0 and returns it with its address.
fn serve(extra: &[&str]) -> (Child, String, BufReader<std::process::ChildStdout>) {
    let mut child = mrnic()
        .args(["ref", "serve", "--bind", "127.0.0.1:0"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts mrnic ref serve");
    let mut out = BufReader::new(child.stdout.take().expect("piped"));
    let mut line = String::new();
    out.read_line(&mut line).expect("reads the first line");
    let addr = line.trim().strip_prefix("listening on ").unwrap_or_else(|| panic!("first line: {line:?}")).to_string();
    (child, addr, out)
}

fn send(addr: &str, extra: &[&str]) -> Output {
    mrnic()
        .args(["ref", "send", "--to", addr, "--bytes", "2M", "--msg-size", "256K", "--paths", "4", "--streams", "2"])
        .args(extra)
        .output()
        .expect("runs mrnic ref send")
}

fn finish(mut child: Child, mut out: BufReader<std::process::ChildStdout>) -> (bool, String, String) {
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).expect("reads the server's output");
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        std::io::Read::read_to_string(&mut e, &mut err).expect("reads the server's errors");
    }
    let status = child.wait().expect("the server exits");
    (status.success(), rest, err)
}

#[test]
fn two_processes_with_loss_verify_byte_for_byte() {
    let (child, addr, out) = serve(&[]);
    let s = send(&addr, &["--drop", "1%", "--verify", "--seed", "21"]);
    let sent = String::from_utf8_lossy(&s.stdout);
    let (ok, served, err) = finish(child, out);
    assert!(s.status.success(), "send failed:\n{sent}\n{}", String::from_utf8_lossy(&s.stderr));
    assert!(ok, "serve failed:\n{served}\n{err}");
    assert!(sent.contains("verify: OK"), "{sent}");
    assert!(served.contains("verify: OK"), "{served}");
    // Both print goodput, retransmissions and the per-path table.
    for text in [&*sent, &*served] {
        assert!(text.contains("goodput"), "{text}");
        assert!(text.contains("retransmissions"), "{text}");
        assert!(text.contains("path sport gen"), "{text}");
    }
}

#[test]
fn server_checking_another_seed_exits_non_zero() {
    let (child, addr, out) = serve(&["--expect-seed", "99"]);
    let s = send(&addr, &["--verify", "--seed", "22"]);
    let (ok, served, _) = finish(child, out);
    assert!(!ok, "serve must fail on a mismatch:\n{served}");
    assert!(served.contains("verify: MISMATCH"), "{served}");
    assert!(!s.status.success(), "send --verify must fail when the server reports a mismatch");
}
