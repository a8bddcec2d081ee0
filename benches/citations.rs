//! The answer analysis and the citation tracer: `cargo bench --bench citations`.
//! - Tracer throughput: the evidence (a cell's tool results) is read once — normalized,
//!   folded, scanned once by an Aho-Corasick automaton of every fact and once for the
//!   quantities the answer's numbers could be — so time grows with the evidence, not with
//!   the number of facts. MB/s of evidence for ASCII and for mixed Chinese/English text.
//! - One cell's checks: every check of a recorded conversation (`audit`'s path) with a
//!   10 KB answer and 1 MB of evidence, median of 21 runs.
//!
//! Prints rows of the README's benchmark table.

use std::time::Instant;

use fibon_verify::checks::{read_answer, refusal::Lexicon};

/// The binary's allocator (src/main.rs), so that the figures are the CLI's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn evidence(bytes: usize, cjk: bool) -> String {
    let para = if cjk {
        "根据文档，每个 API Key 每分钟最多 600 次请求；费用为 USD 12,000（年付）。Claude Sonnet 4.6 的上下文窗口为 200K tokens，发布于 2026-02-17。\n"
    } else {
        "Each API key may send up to 600 requests per minute. The annual fee is USD 12,000, payable within 45 days. Claude Sonnet 4.6 (claude-sonnet-4-6) has a 200K tokens window; released 2026-02-17.\n"
    };
    let mut s = String::with_capacity(bytes + para.len());
    let mut i = 0u64;
    while s.len() < bytes {
        s.push_str(para);
        i += 1;
        if i.is_multiple_of(97) {
            s.push_str(&format!(
                "Reference {i}: https://docs.example.com/page/{i} v{}.{}.{}\n",
                i % 7,
                i % 11,
                i % 13
            ));
        }
    }
    s
}

const ANSWER: &str = "The limit is 600 requests per minute and the fee USD 12,000 (45 days); the model claude-sonnet-4-6 has 200K tokens \
    since 2026-02-17, see https://docs.example.com/page/9700 — but also $75, 99.9%, v9.9.9, 2031-01-01, \"a quoted claim here\".";

fn tracer(lexicon: &Lexicon) -> String {
    let mut cells = Vec::new();
    for (name, cjk) in [("ASCII", false), ("mixed Chinese/English", true)] {
        let ev = evidence(64 * 1024 * 1024, cjk);
        let _ = read_answer(ANSWER, &ev[..1024 * 1024], "", Vec::new(), lexicon);
        let runs = 3;
        let t = Instant::now();
        let mut unsupported = 0;
        let mut facts = 0;
        for _ in 0..runs {
            let reading = read_answer(ANSWER, &ev, "", Vec::new(), lexicon);
            unsupported = reading.unsupported().len();
            facts = reading.analysis.claims.len();
        }
        let secs = t.elapsed().as_secs_f64() / runs as f64;
        let mb = ev.len() as f64 / (1024.0 * 1024.0);
        cells.push(format!(
            "{name} {:.0} MB/s ({mb:.0} MB in {:.0} ms; {facts} facts, {unsupported} unsupported)",
            mb / secs,
            secs * 1000.0,
        ));
    }
    format!(
        "| citation tracer, 64 MB of synthetic evidence | throughput (MB of evidence per second) | {} | | |",
        cells.join("; ")
    )
}

fn one_cell(lexicon: &Lexicon) -> String {
    // A recorded conversation as `audit` reads it: one call whose result is 1 MB, and a
    // 10 KB answer mixing grounded and made-up facts, checked against a contract with the
    // citation tracer on.
    let dir = std::env::temp_dir().join(format!("fibon-bench-cell-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("contracts")).unwrap();
    std::fs::write(
        dir.join("contracts/docs.yaml"),
        "skill: docs\nmust_call_tools: [read_page]\nstrict_citation_required: true\nenforced_url_prefix_whitelist: [\"https://docs.example.com\"]\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("fibon.yaml"),
        "scenarios: []\ntarget: {kind: command, command: [\"true\"], timeout: 5s}\n",
    )
    .unwrap();
    let project = match fibon_verify::project::load_valid(&dir.join("fibon.yaml")) {
        Ok(project) => project,
        Err(e) => panic!("{e}: {:?}", e.diagnostics()),
    };
    let mut answer = String::new();
    while answer.len() < 10 * 1024 {
        answer.push_str(ANSWER);
        answer.push('\n');
        answer.push_str("Lisbon is warmer by 12 °C; the Pro plan is probably the cheaper one, and `--retries 5` should help.\n");
    }
    let ev = evidence(1024 * 1024, false);
    let line = serde_json::json!({
        "id": "bench", "skill": "docs", "input": "What is the rate limit?",
        "trace": [{"tool": "read_page", "arguments": {"url": "https://docs.example.com/page/9700"},
                   "result": {"content": [{"type": "text", "text": ev}], "isError": false}}],
        "output": answer, "status": "ok"
    });
    let conv = fibon_verify::history::Conversation::from_value(line).unwrap();
    let _ = fibon_verify::matrix::check_conversation(&project, &conv, lexicon);
    let mut times = Vec::new();
    let mut verdict = String::new();
    for _ in 0..21 {
        let t = Instant::now();
        let cell = fibon_verify::matrix::check_conversation(&project, &conv, lexicon);
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        verdict = cell.verdict.as_str().to_string();
    }
    times.sort_by(f64::total_cmp);
    let _ = std::fs::remove_dir_all(&dir);
    format!(
        "| all checks of one cell: 10 KB answer, 1 MB of evidence | median time (ms, 21 runs) | {:.2} ms (verdict {verdict}) | | |",
        times[times.len() / 2]
    )
}

fn main() {
    let lexicon = Lexicon::builtin();
    // `FIBON_BENCH=cell` or `=tracer` runs one part (for a profiler).
    let only = std::env::var("FIBON_BENCH").unwrap_or_default();
    if only != "cell" {
        println!("{}", tracer(&lexicon));
    }
    if only != "tracer" {
        println!("{}", one_cell(&lexicon));
    }
}
