//! `mrnic dissector`: the Wireshark Lua dissector, printed from the field table.

use anyhow::Result;
use clap::Args;
use mrnic_proto::packet::DEFAULT_UDP_PORT;

#[derive(Args)]
pub struct DissectorArgs {
    /// UDP destination port the dissector registers on by default (Wireshark's
    /// preference `mrnic.udp_port` still overrides it).
    #[arg(long, default_value_t = DEFAULT_UDP_PORT)]
    pub udp_port: u16,
}

pub fn run(a: DissectorArgs) -> Result<()> {
    print!("{}", mrnic_proto::dissector::lua(a.udp_port));
    Ok(())
}
