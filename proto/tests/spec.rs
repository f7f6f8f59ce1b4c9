//! The committed docs/spec.md is exactly what `mrnic spec` prints, so the
//! spec's tables always match the code.

use mrnic_proto::spec;

#[test]
fn committed_spec_is_current() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/spec.md");
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    let current = spec::render();
    if committed != current {
        let line = committed
            .lines()
            .zip(current.lines())
            .position(|(a, b)| a != b)
            .map_or_else(|| committed.lines().count().min(current.lines().count()) + 1, |i| i + 1);
        panic!("docs/spec.md is stale (first difference at line {line}); regenerate with `{}`", spec::REGENERATE);
    }
}
