//! Every measurement the `phasers` command makes, as its files show it: each benchmark runs once
//! with a tiny budget, and every JSON field (as a path), the CSV header and the plot it wrote must
//! still be there, as `tests/fixtures/measurements.txt` lists them. A field may be added; one that
//! disappears fails the test, so a refactor of the harness cannot drop a measurement unnoticed.
//! After a deliberate change (a new field, or a schema version that moves one), rewrite the list
//! with `PHASERS_BLESS=1 cargo test -p phasers-cli --test measurements` and review its diff.
//!
//! Schema 4 moved fields: `tests/fixtures/measurements-v3.txt` is the list as schema 3 wrote it,
//! frozen (never blessed), and every line of it must still be written, or be mapped by the first
//! matching rule of `tests/fixtures/renamed.txt` to a line that is. A rule is `OLD => NEW`: whole
//! lines, or, when OLD ends in `.`, a prefix whose rest carries over; `*` for the benchmark
//! matches any; `OLD => dropped: REASON` only for the fields `bench dynamic` never measured.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

mod cli_support;
use cli_support::{json_file, phasers, scratch, succeeded};

/// Each benchmark, with options that keep it to a second or two on 2 cores.
const RUNS: [(&str, &str); 9] = [
    (
        "bench barrier",
        "bench barrier --threads 2 --time 0.02 --samples 2",
    ),
    (
        "bench phaser",
        "bench phaser --threads 2 --time 0.02 --samples 2",
    ),
    (
        "bench phaser --figure reduction",
        "bench phaser --figure reduction --threads 2 --time 0.02 --samples 2",
    ),
    (
        "bench phaser --figure tree",
        "bench phaser --figure tree --threads 2 --tiers 1,2 --degrees 2 --time 0.02 --samples 2",
    ),
    ("bench dynamic", "bench dynamic --threads 3 --samples 2"),
    (
        "bench reduce",
        "bench reduce --threads 2 --sizes 1000 --spread none --min-time 0.001 --min-iterations 2 \
         --max-iterations 4",
    ),
    (
        "bench collectives",
        "bench collectives --threads 2 --words 8 --blocks 8 --sync-words 8 --time 0.01 \
         --samples 2 --teams all",
    ),
    (
        "app",
        "app sor,interp --size small --threads 2 --sync auto,std --repeat 1 --nops 200",
    ),
    (
        "bench async",
        "bench async --tasks 2 --phases 4 --rounds 1 --samples 1",
    ),
];

/// Which files each command writes besides JSON: every one a CSV, all but collectives a plot.
fn takes(args: &[&str], option: &str) -> bool {
    option == "--csv" || args[1] != "collectives"
}

/// Every path in `value`: object keys joined with `.`, array elements as `[]`, merged over the
/// elements so that one row standing for all is enough.
fn paths(value: &Value, prefix: &str, into: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                let path = format!("{prefix}.{key}");
                into.insert(path.clone());
                paths(inner, &path, into);
            }
        }
        Value::Array(items) => {
            for item in items {
                paths(item, &format!("{prefix}[]"), into);
            }
        }
        _ => {}
    }
}

/// The lines one run contributes to the list: its JSON paths, its CSV header, its plot.
fn measure(name: &str, args: &[&str]) -> Vec<String> {
    let file = |extension: &str| {
        scratch(
            "measurements",
            &format!("{}.{extension}", name.replace([' ', '-'], "_")),
        )
    };
    let (json, csv, plot) = (file("json"), file("csv"), file("svg"));
    let mut argv: Vec<&str> = args.to_vec();
    argv.extend(["--json", json.to_str().unwrap()]);
    if takes(args, "--csv") {
        argv.extend(["--csv", csv.to_str().unwrap()]);
    }
    if takes(args, "--plot") {
        argv.extend(["--plot", plot.to_str().unwrap()]);
    }
    succeeded(&phasers(&argv));
    let mut found = BTreeSet::new();
    paths(&json_file(&json), "", &mut found);
    let mut lines: Vec<String> = found
        .into_iter()
        .map(|path| format!("{name} json {path}"))
        .collect();
    if takes(args, "--csv") {
        let text = std::fs::read_to_string(&csv).expect("the CSV file was written");
        let header = text.lines().next().unwrap_or_default();
        lines.extend(
            header
                .split(',')
                .map(|column| format!("{name} csv {column}")),
        );
    }
    if takes(args, "--plot") {
        // Some benchmarks write one plot per figure, named after the file asked for.
        let stem = plot.file_stem().unwrap().to_str().unwrap().to_owned();
        let folder = plot.parent().unwrap();
        let plots = std::fs::read_dir(folder).unwrap().filter_map(|entry| {
            let file = entry.ok()?.file_name().into_string().ok()?;
            (file.starts_with(&stem) && file.ends_with(".svg")).then_some(file)
        });
        for file in plots {
            let svg = std::fs::read_to_string(folder.join(&file)).unwrap();
            assert!(svg.contains("<svg"), "{name}: {file} is not SVG");
            let figure = file.trim_start_matches(&stem).trim_end_matches(".svg");
            lines.push(format!("{name} plot svg{figure}"));
        }
    }
    lines
}

/// The fixture `name`.
fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// `line` as its benchmark and the rest (`json .rows[].contender`).
fn split(line: &str) -> (&str, &str) {
    [" json ", " csv ", " plot "]
        .iter()
        .find_map(|kind| line.find(kind).map(|at| (&line[..at], &line[at + 1..])))
        .unwrap_or((line, ""))
}

/// What the first rule of `rules` matching the schema 3 `line` makes of it.
fn renamed(line: &str, rules: &[(String, String)]) -> Option<String> {
    let (bench, rest) = split(line);
    rules.iter().find_map(|(old, new)| {
        let (old_bench, old_rest) = split(old);
        if old_bench != "*" && old_bench != bench {
            return None;
        }
        let tail = match old_rest.ends_with('.') {
            true => rest.strip_prefix(old_rest)?,
            false => (rest == old_rest).then_some("")?,
        };
        if new.starts_with("dropped: ") {
            assert_eq!(
                bench, "bench dynamic",
                "only its null loops may be dropped: {old}"
            );
            return Some(new.clone());
        }
        let (new_bench, new_rest) = split(new);
        let new_bench = if new_bench == "*" { bench } else { new_bench };
        Some(format!("{new_bench} {new_rest}{tail}"))
    })
}

#[test]
fn every_measurement_keeps_its_field_column_and_plot() {
    let produced: BTreeSet<String> = RUNS
        .iter()
        .flat_map(|(name, line)| measure(name, &line.split_whitespace().collect::<Vec<_>>()))
        .collect();
    let rules: Vec<(String, String)> = std::fs::read_to_string(fixture("renamed.txt"))
        .expect("tests/fixtures/renamed.txt exists")
        .lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .map(|line| {
            let (old, new) = line.split_once(" => ").expect("a rule is OLD => NEW");
            (old.to_owned(), new.to_owned())
        })
        .collect();
    let v3 = std::fs::read_to_string(fixture("measurements-v3.txt")).expect("the v3 list exists");
    let lost: Vec<String> = v3
        .lines()
        .filter(|line| !produced.contains(*line))
        .filter_map(|line| match renamed(line, &rules) {
            Some(new) if new.starts_with("dropped: ") || produced.contains(&new) => None,
            Some(new) => Some(format!("{line} (renamed to {new}, which is not written)")),
            None => Some(line.to_owned()),
        })
        .collect();
    assert!(
        lost.is_empty(),
        "{} schema 3 measurement(s) neither written nor renamed to one that is (see renamed.txt):\n{}",
        lost.len(),
        lost.join("\n")
    );
    let fixture = fixture("measurements.txt");
    if std::env::var_os("PHASERS_BLESS").is_some() {
        let text: String = produced.iter().map(|line| format!("{line}\n")).collect();
        std::fs::write(&fixture, text).expect("the list is written");
        return;
    }
    let listed = std::fs::read_to_string(&fixture).expect("tests/fixtures/measurements.txt exists");
    let missing: Vec<&str> = listed
        .lines()
        .filter(|line| !produced.contains(*line))
        .collect();
    assert!(
        missing.is_empty(),
        "{} measurement(s) no longer written (if on purpose, bless the list: see this file's docs):\n{}",
        missing.len(),
        missing.join("\n")
    );
    assert!(
        listed.lines().count() > 100,
        "the list covers every benchmark"
    );
}
