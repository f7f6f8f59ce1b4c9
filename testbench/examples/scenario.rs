//! The scenario runner without the `mrnic` binary (same library calls as
//! `mrnic scenario`): `cargo run --release -p mrnic-testbench --example
//! scenario -- NAME [--quick] [--seed S] [--out DIR] [--shard I/N]`.

use std::path::PathBuf;

use mrnic_testbench::scenario::{self, Options};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let name = args.first().ok_or("usage: scenario NAME [--quick] [--seed S] [--out DIR] [--shard I/N]")?.clone();
    let mut opts = Options::default();
    let mut out = PathBuf::from("target/scenario").join(&name);
    let mut it = args.iter().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--quick" => opts.quick = true,
            "--seed" => opts.seed = it.next().ok_or("--seed S")?.parse()?,
            "--out" => out = PathBuf::from(it.next().ok_or("--out DIR")?),
            "--shard" => {
                let s = it.next().ok_or("--shard I/N")?;
                let (i, n) = s.split_once('/').ok_or("--shard I/N")?;
                opts.shard = (i.parse()?, n.parse()?);
            }
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let res = scenario::run(&name, &opts)?;
    for f in scenario::write(&res, &out)? {
        println!("wrote {}", f.display());
    }
    for t in scenario::targets(&res) {
        println!("target: {}: {:?} (goal {}): {:?}", t.what, t.value, t.target, t.met);
    }
    Ok(())
}
