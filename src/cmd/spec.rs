//! `mrnic spec`: prints docs/spec.md, the normative protocol spec, with its
//! tables generated from the Rust definitions.

use anyhow::Result;

pub fn run() -> Result<()> {
    print!("{}", mrnic_proto::spec::render());
    Ok(())
}
