//! History throughput on a 1 GB synthetic history: `cargo bench --bench history`.
//! Selection (`sample --dry-run`) and the audit (`audit`, on one thread and on every core),
//! each the release binary measured by `common::timed` (wall time, CPU, peak RSS). Prints rows of the README's benchmark
//! table. The history is generated once into `target/bench-history/` and reused.

#[path = "common/mod.rs"]
mod common;

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use common::{Usage, human, thousands, timed};

const TARGET_BYTES: u64 = 1024 * 1024 * 1024;

fn generate(path: &Path) -> u64 {
    if let Ok(m) = std::fs::metadata(path)
        && m.len() >= TARGET_BYTES
    {
        return std::fs::read_to_string(path)
            .map(|s| s.lines().count() as u64)
            .unwrap_or(0);
    }
    let mut w = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path).unwrap());
    let page = "Each API key may send up to 600 requests per minute. Requests above the limit are rejected with HTTP 429. ".repeat(6);
    let (mut bytes, mut lines) = (0u64, 0u64);
    while bytes < TARGET_BYTES {
        let line = serde_json::json!({
            "id": format!("conv-{lines:09}"), "skill": "docs", "input": format!("What is the rate limit? ({lines})"), "ts": "2026-11-30T08:00:00Z",
            "trace": [
                {"tool": "search", "arguments": {"query": "rate limit"}, "result": {"content": [{"type": "text", "text": "see https://docs.example.com/limits"}], "isError": false}},
                {"tool": "read_page", "arguments": {"url": "https://docs.example.com/limits"}, "result": {"content": [{"type": "text", "text": page}], "isError": false}}
            ],
            "output": if lines % 10 == 0 { "The limit is 1000 requests per minute." } else { "The limit is 600 requests per minute." }, "status": "ok"
        })
        .to_string();
        writeln!(w, "{line}").unwrap();
        bytes += line.len() as u64 + 1;
        lines += 1;
    }
    w.flush().unwrap();
    lines
}

/// Runs fibon-verify with `args` and checks its exit code.
fn measure(dir: &Path, args: &[&str], expected: i32) -> Usage {
    let mut argv = vec![env!("CARGO_BIN_EXE_fibon-verify")];
    argv.extend_from_slice(args);
    let run = timed(&argv, dir, &[("CI", "true")]);
    assert!(
        run.status.code() == Some(expected),
        "{args:?} failed ({}): {}",
        run.status,
        String::from_utf8_lossy(&run.stderr)
    );
    run.usage
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("target/bench-history");
    std::fs::create_dir_all(dir.join("contracts")).unwrap();
    std::fs::write(
        dir.join("fibon.yaml"),
        "scenarios: []\nreport: {dir: out}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("contracts/docs.yaml"),
        "skill: docs\nmust_call_tools: [search, read_page]\nstrict_citation_required: true\n",
    )
    .unwrap();
    let history = dir.join("history.jsonl");
    let t = Instant::now();
    let lines = generate(&history);
    let mb = std::fs::metadata(&history).unwrap().len() as f64 / (1024.0 * 1024.0);
    eprintln!(
        "history: {lines} lines, {mb:.0} MB (ready in {:.1} s)",
        t.elapsed().as_secs_f64()
    );
    let selection = measure(
        &dir,
        &[
            "sample",
            "--history",
            "history.jsonl",
            "--rate",
            "0.1",
            "--seed",
            "1",
            "--dry-run",
        ],
        0,
    );
    // Exit 2: a tenth of the conversations state a fact that their evidence does not hold.
    let one = measure(
        &dir,
        &["audit", "--history", "history.jsonl", "--jobs", "1"],
        2,
    );
    let audit = measure(&dir, &["audit", "--history", "history.jsonl"], 2);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let every = format!("`audit` (every conversation checked), `--jobs {cores}` (every core)");
    for (row, (name, u)) in [
        ("selection (`sample --dry-run --rate 0.1`)", selection),
        ("`audit` (every conversation checked), `--jobs 1`", one),
        (every.as_str(), audit),
    ]
    .into_iter()
    .enumerate()
    {
        let title = if row == 0 {
            format!(
                "history, {mb:.0} MB of synthetic JSONL, {} conversations",
                thousands(lines as f64)
            )
        } else {
            String::new()
        };
        let secs = u.wall.as_secs_f64();
        println!(
            "| {title} | {name}: lines/s · MB/s | {} · {:.0} MB/s | | {} wall, {} CPU, peak RSS {:.1} MB |",
            thousands(lines as f64 / secs),
            mb / secs,
            human(u.wall),
            human(u.cpu()),
            u.rss_mb
        );
    }
}
