use mrnic_proto::config::{Config, ConfigError};

#[test]
fn shipped_configs_are_valid() {
    for name in ["small", "default"] {
        let c = Config::builtin(name).unwrap();
        assert_eq!(c.name, name);
        // TOML round trip is lossless.
        assert_eq!(Config::from_toml(&c.to_toml(), "rt").unwrap(), c);
    }
    let d = Config::builtin("default").unwrap();
    assert_eq!((d.transport.connections, d.transport.paths_per_conn, d.transport.window), (4096, 16, 256));
    assert_eq!(d.hardware.datapath_bits, 512);
}

fn issues_of(edit: &str, with: &str) -> Vec<String> {
    issues_of_all(&[(edit, with)])
}

fn issues_of_all(edits: &[(&str, &str)]) -> Vec<String> {
    let mut text = mrnic_proto::config::SMALL_TOML.to_string();
    for (edit, with) in edits {
        let next = text.replace(edit, with);
        assert_ne!(next, text, "edit {edit:?} matched nothing");
        text = next;
    }
    match Config::from_toml(&text, "t.toml") {
        Err(ConfigError::Invalid { issues, .. }) => issues.iter().map(|i| i.to_string()).collect(),
        other => panic!("expected Invalid, got {other:?}"),
    }
}

#[test]
fn each_bad_field_is_named_with_its_reason() {
    let i = issues_of("window = 256", "window = 512");
    assert!(i.iter().any(|m| m.starts_with("transport.window: 512 is outside") && m.contains("bitmap")), "{i:?}");
    let i = issues_of("connections = 16", "connections = 12");
    assert!(i.iter().any(|m| m.starts_with("transport.connections: 12 is not a power of 2")), "{i:?}");
    let i = issues_of("paths_per_conn = 4", "paths_per_conn = 64");
    assert!(i.iter().any(|m| m.starts_with("transport.paths_per_conn") && m.contains("path selector")), "{i:?}");
    let i = issues_of("datapath_bits = 64", "datapath_bits = 96");
    assert!(i.iter().any(|m| m.starts_with("hardware.datapath_bits: 96 is not a power of 2")), "{i:?}");
    let i =
        issues_of_all(&[("axi_max_burst = 64", "axi_max_burst = 256"), ("datapath_bits = 64", "datapath_bits = 512")]);
    assert!(i.iter().any(|m| m.starts_with("hardware.axi_max_burst") && m.contains("4 KiB")), "{i:?}");
    let i = issues_of("rto_max_us = 2000", "rto_max_us = 50");
    assert!(i.iter().any(|m| m.starts_with("timers.rto_max_us")), "{i:?}");
    let i = issues_of("max_cwnd_bytes = 262144", "max_cwnd_bytes = 2097152");
    assert!(i.iter().any(|m| m.starts_with("cc.max_cwnd_bytes") && m.contains("20 bits")), "{i:?}");
}

#[test]
fn unknown_and_missing_fields_are_parse_errors_naming_the_key() {
    let text = mrnic_proto::config::SMALL_TOML.replace("mtu = 1024", "mtu = 1024\nmut = 5");
    let e = Config::from_toml(&text, "t.toml").unwrap_err().to_string();
    assert!(e.contains("mut"), "{e}");
    let text = mrnic_proto::config::SMALL_TOML.replace("mtu = 1024\n", "");
    let e = Config::from_toml(&text, "t.toml").unwrap_err().to_string();
    assert!(e.contains("mtu"), "{e}");
}
