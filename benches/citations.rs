//! Citation tracer throughput: `cargo bench --bench citations`. The evidence (the tool
//! results of a cell) is normalized once and scanned once by an Aho-Corasick automaton of
//! every fact, so time grows with the evidence, not with the number of facts. Prints MB/s
//! of evidence for ASCII and for mixed Chinese/English text, as rows of the README's
//! benchmark table.

use std::time::Instant;

use fibon_verify::checks::citations;

fn evidence(mb: usize, cjk: bool) -> String {
    let para = if cjk {
        "根据文档，每个 API Key 每分钟最多 600 次请求；费用为 USD 12,000（年付）。Claude Sonnet 4.6 的上下文窗口为 200K tokens，发布于 2026-02-17。\n"
    } else {
        "Each API key may send up to 600 requests per minute. The annual fee is USD 12,000, payable within 45 days. Claude Sonnet 4.6 (claude-sonnet-4-6) has a 200K tokens window; released 2026-02-17.\n"
    };
    let mut s = String::with_capacity(mb * 1024 * 1024 + para.len());
    let mut i = 0u64;
    while s.len() < mb * 1024 * 1024 {
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

fn main() {
    let answer = "The limit is 600 requests per minute and the fee USD 12,000 (45 days); the model claude-sonnet-4-6 has 200K tokens \
                  since 2026-02-17, see https://docs.example.com/page/9700 — but also $75, 99.9%, v9.9.9, 2031-01-01, \"a quoted claim\".";
    let facts = citations::extract(answer);
    let mut cells = Vec::new();
    for (name, cjk) in [("ASCII", false), ("mixed Chinese/English", true)] {
        let ev = evidence(64, cjk);
        let _ = citations::unsupported(&facts, &ev[..1024 * 1024]); // warm-up
        let t = Instant::now();
        let runs = 3;
        let mut unsupported = 0;
        for _ in 0..runs {
            unsupported = citations::unsupported(&facts, &ev).len();
        }
        let secs = t.elapsed().as_secs_f64() / runs as f64;
        let mb = ev.len() as f64 / (1024.0 * 1024.0);
        cells.push(format!(
            "{name} {:.0} MB/s ({mb:.0} MB in {:.0} ms; {} facts, {unsupported} unsupported)",
            mb / secs,
            secs * 1000.0,
            facts.len()
        ));
    }
    println!(
        "| citation tracer, 64 MB of synthetic evidence | throughput (MB of evidence per second) | {} | | |",
        cells.join("; ")
    );
}
