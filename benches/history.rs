//! History throughput on a 1 GB synthetic history: `cargo bench --bench history`.
//! Selection (`sample --dry-run`) and the audit (`audit`), each the release binary measured
//! from outside with `/usr/bin/time` (wall time, peak RSS). Prints a Markdown table.

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

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

fn timed(dir: &Path, args: &[&str]) -> (f64, f64) {
    let t = Instant::now();
    let out = Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .arg(env!("CARGO_BIN_EXE_fibon-verify"))
        .args(args)
        .current_dir(dir)
        .env("CI", "true")
        .output()
        .unwrap();
    let secs = t.elapsed().as_secs_f64();
    let rss_kb: f64 = String::from_utf8_lossy(&out.stderr)
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or(f64::NAN);
    (secs, rss_kb / 1024.0)
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
    let (sel_s, sel_rss) = timed(
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
    );
    let (aud_s, aud_rss) = timed(&dir, &["audit", "--history", "history.jsonl"]);
    println!("| {mb:.0} MB, {lines} conversations | time | lines/s | MB/s | peak RSS |");
    println!("|---|---|---|---|---|");
    println!(
        "| selection (`sample --dry-run --rate 0.1`) | {sel_s:.1} s | {:.0} | {:.0} | {sel_rss:.1} MB |",
        lines as f64 / sel_s,
        mb / sel_s
    );
    println!(
        "| audit (every conversation checked) | {aud_s:.1} s | {:.0} | {:.0} | {aud_rss:.1} MB |",
        lines as f64 / aud_s,
        mb / aud_s
    );
}
