//! The Verilated-build cache: an unchanged design is never rebuilt, a
//! changed input rebuilds and says which, and every key input counts.

use std::path::PathBuf;

use mrnic_verif::skip_without_verilator;
use mrnic_verif::verilate::{build_design, cache_key, key_components, DesignSpec, Outcome, PortSpec, Toolchain};

fn counter(comment: &str) -> DesignSpec {
    let v = format!(
        "// {comment}\n`default_nettype none\nmodule cache_probe (\n    input  wire       clk,\n    input  wire       rst,\n    input  wire       en,\n    output wire [7:0] count\n);\nreg [7:0] count_reg = 8'd0;\nassign count = count_reg;\nalways @(posedge clk) begin\n    if (rst) count_reg <= 8'd0;\n    else if (en) count_reg <= count_reg + 8'd1;\nend\nendmodule\n`default_nettype wire\n"
    );
    DesignSpec {
        block: "cache_probe".into(),
        config: "test".into(),
        verilog: vec![("cache_probe.v".into(), v)],
        ports: vec![
            PortSpec { name: "rst".into(), input: true, width: 1 },
            PortSpec { name: "en".into(), input: true, width: 1 },
            PortSpec { name: "count".into(), input: false, width: 8 },
        ],
        waivers: vec![],
    }
}

fn toolchain() -> Option<Toolchain> {
    if skip_without_verilator() {
        return None;
    }
    Some(Toolchain::detect().expect("verilator runs").expect("verilator was there at build time"))
}

#[test]
fn unchanged_design_is_never_rebuilt_a_changed_one_is() {
    let Some(tc) = toolchain() else { return };
    let cache = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("verif/cache-test");
    let _ = std::fs::remove_dir_all(&cache);
    // The runtime objects come from the crate's own cache (built already).
    let runtime = mrnic_verif::rtl::cache_dir().expect("set by build.rs when verilator is there");

    let spec = counter("first");
    let first = build_design(&tc, &spec, &cache, &runtime).unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(&first.outcome, Outcome::Built { reason, .. } if reason == "no cached build"), "{first:?}");
    let marker = first.dir.join("BUILD_OK");
    let lib = first.dir.join(format!("lib{}.a", first.lib));
    assert!(lib.exists(), "{} missing", lib.display());
    let stamp = |p: &PathBuf| std::fs::metadata(p).unwrap().modified().unwrap();
    let (marker_t, lib_t) = (stamp(&marker), stamp(&lib));

    let second = build_design(&tc, &spec, &cache, &runtime).unwrap();
    assert_eq!(second.outcome, Outcome::Cached);
    assert_eq!(second.key, first.key);
    assert_eq!((stamp(&marker), stamp(&lib)), (marker_t, lib_t), "a cached build touched the entry");

    let changed = counter("second");
    let third = build_design(&tc, &changed, &cache, &runtime).unwrap();
    match &third.outcome {
        Outcome::Built { reason, .. } => {
            assert!(reason.starts_with("Verilog changed"), "{reason}");
            assert!(reason.contains(&first.key) && reason.contains(&third.key), "{reason}");
        }
        o => panic!("a changed Verilog must rebuild, got {o:?}"),
    }
    assert_ne!(third.key, first.key);

    let log = std::fs::read_to_string(cache.join("build.log")).unwrap();
    let verbs: Vec<&str> = log.lines().filter_map(|l| l.split(' ').nth(1)).collect();
    assert_eq!(verbs, ["built", "cached", "built"], "{log}");
}

#[test]
fn every_key_input_changes_the_key() {
    let Some(tc) = toolchain() else { return };
    let base = counter("x");
    let key = cache_key(&tc, &base);
    assert_eq!(key, cache_key(&tc, &counter("x")), "the key is deterministic");

    let mut waived = base.clone();
    waived.waivers.push("-Wno-UNUSEDSIGNAL".into());
    let mut other_config = base.clone();
    other_config.config = "small".into();
    let mut wider = base.clone();
    wider.ports[2].width = 9;
    let mut new_verilator = tc.clone();
    new_verilator.version = "Verilator 5.030 2024-10-27".into();
    let mut new_cxx = tc.clone();
    new_cxx.cxx_version = "g++ (Debian 14.2.0) 14.2.0".into();

    let changed = |t: &Toolchain, s: &DesignSpec| -> Vec<&'static str> {
        let a = key_components(&tc, &base);
        let b = key_components(t, s);
        a.iter().zip(&b).filter(|(x, y)| x.1 != y.1).map(|(x, _)| x.0).collect()
    };
    assert_eq!(changed(&tc, &counter("y")), ["Verilog"]);
    assert_eq!(changed(&tc, &waived), ["flags"]);
    assert_eq!(changed(&tc, &other_config), ["parameters"]);
    assert_eq!(changed(&tc, &wider), ["parameters"]);
    assert_eq!(changed(&new_verilator, &base), ["verilator --version"]);
    assert_eq!(changed(&new_cxx, &base), ["C++ compiler"]);
    for (t, s) in [(&tc, &waived), (&tc, &other_config), (&new_verilator, &base), (&new_cxx, &base)] {
        assert_ne!(cache_key(t, s), key);
    }
}
