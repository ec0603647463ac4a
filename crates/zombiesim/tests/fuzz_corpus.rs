//! Replays the fuzz corpus (`fuzz/corpus/<target>/`) and the inputs that once crashed a
//! parser (`fuzz/regressions/<target>/`) through the harness (`zombiesim::fuzzing`),
//! without libFuzzer: every input must come back without a panic. `make fuzz` searches
//! for new ones.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;
use zombiesim::fuzzing::{MAX_INPUT, TARGETS};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// The files of `dir` (none if it does not exist), sorted.
fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    v.sort();
    v
}

/// The names of the folders in `dir`, sorted.
fn folders(dir: &Path) -> Vec<String> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<String> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn every_target_has_a_corpus_and_a_cargo_fuzz_binary() {
    let fuzz = fuzz_dir();
    let manifest = fs::read_to_string(fuzz.join("Cargo.toml")).unwrap();
    for (name, _) in TARGETS {
        assert!(
            !files(&fuzz.join("corpus").join(name)).is_empty(),
            "fuzz target `{name}` has no corpus: add seeds to fuzz/corpus/{name}/"
        );
        assert!(
            fuzz.join("fuzz_targets")
                .join(format!("{name}.rs"))
                .is_file(),
            "fuzz target `{name}` has no fuzz/fuzz_targets/{name}.rs"
        );
        assert!(
            manifest.contains(&format!("name = \"{name}\"")),
            "fuzz target `{name}` is not a [[bin]] of fuzz/Cargo.toml"
        );
    }
    // And no folder (nor target file) for a target the harness does not have.
    let known: Vec<&str> = TARGETS.iter().map(|(n, _)| *n).collect();
    for kind in ["corpus", "regressions"] {
        for name in folders(&fuzz.join(kind)) {
            assert!(
                known.contains(&name.as_str()),
                "fuzz/{kind}/{name}/ names no target of zombiesim::fuzzing::TARGETS"
            );
        }
    }
    for file in files(&fuzz.join("fuzz_targets")) {
        let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
        assert!(
            known.contains(&stem.as_str()),
            "{} names no target of zombiesim::fuzzing::TARGETS",
            file.display()
        );
    }
}

#[test]
fn the_corpus_and_the_regressions_replay_without_a_panic() {
    let fuzz = fuzz_dir();
    let started = Instant::now();
    let mut replayed = 0;
    for (name, target) in TARGETS {
        for kind in ["corpus", "regressions"] {
            for file in files(&fuzz.join(kind).join(name)) {
                let data = fs::read(&file).unwrap();
                assert!(
                    data.len() <= MAX_INPUT,
                    "{} is longer than the harness reads ({MAX_INPUT} bytes)",
                    file.display()
                );
                let outcome = std::panic::catch_unwind(|| target(&data));
                assert!(
                    outcome.is_ok(),
                    "fuzz target `{name}` panicked on {}",
                    file.display()
                );
                replayed += 1;
            }
        }
    }
    assert!(replayed >= TARGETS.len());
    eprintln!(
        "replayed {replayed} fuzz inputs in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}
