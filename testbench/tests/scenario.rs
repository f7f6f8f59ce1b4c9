//! Scenario plumbing: sharded runs merge back into the whole run, and a
//! result writes its JSON, table and plots.

use std::path::PathBuf;

use mrnic_testbench::scenario::{self, Options, PointResult, ScenarioResult};

fn without_wall_clock(r: &ScenarioResult) -> Vec<PointResult> {
    r.points.iter().cloned().map(|p| PointResult { perf: None, ..p }).collect()
}

#[test]
fn shards_merge_into_the_whole_run() {
    let base = std::env::temp_dir().join(format!("mrnic-testbench-merge-{}", std::process::id()));
    let quiet = |shard| Options { seed: 4, quick: true, shard, verbose: false, model: None };
    let whole = scenario::run("incast", &quiet((0, 1))).expect("runs");
    let mut dirs = Vec::new();
    for i in 0..2 {
        let part = scenario::run("incast", &quiet((i, 2))).expect("runs");
        assert!(part.points.iter().all(|p| p.index % 2 == i));
        let dir: PathBuf = base.join(format!("shard{i}"));
        let files = scenario::write(&part, &dir).expect("writes");
        assert_eq!(files.len(), 1, "a shard writes only its JSON");
        dirs.push(dir);
    }
    let merged = scenario::merge(&dirs).expect("merges");
    assert_eq!(merged.len(), 1);
    assert_eq!(merged[0].shards, vec![(0, 1)]);
    assert_eq!(without_wall_clock(&merged[0]), without_wall_clock(&whole));
    let files = scenario::write(&merged[0], &base.join("merged")).expect("writes");
    let names: Vec<String> =
        files.iter().map(|f| f.file_name().expect("named").to_string_lossy().into_owned()).collect();
    assert!(names.contains(&"incast.md".to_string()) && names.iter().any(|n| n.ends_with(".svg")), "{names:?}");
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
fn unknown_scenario_and_bad_shard_are_errors() {
    assert!(scenario::run("nope", &Options::default()).is_err());
    assert!(scenario::run("incast", &Options { shard: (2, 2), ..Options::default() }).is_err());
}
