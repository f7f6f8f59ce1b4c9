//! A command whose reader has gone away (`mrnic spec | head -1`) ends the
//! way a Unix filter does, by SIGPIPE, and never with a Rust panic message.

use std::process::{Command, Stdio};

#[cfg(unix)]
#[test]
fn closed_stdout_ends_quietly_without_a_panic() {
    use std::os::unix::process::ExitStatusExt;

    // The read end is closed before the child starts, so its first write
    // fails with EPIPE whatever the pipe's buffer size and however fast it
    // runs. (Closing it after the spawn raced the child: on a loaded
    // machine the whole spec fitted the pipe before the close, and the
    // child exited 0.)
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let child = Command::new(env!("CARGO_BIN_EXE_mrnic"))
        .arg("spec")
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts mrnic spec");
    let out = child.wait_with_output().expect("waits for mrnic spec");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "stderr: {stderr}");
    assert_eq!(out.status.signal(), Some(libc::SIGPIPE), "status {:?}, stderr: {stderr}", out.status);
}
