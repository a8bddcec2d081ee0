// report.html's script: builds the page from the two JSON elements above it. Every text
// from the report goes in as a text node (never as markup): answers are hostile input.
"use strict";
(function () {
  const header = JSON.parse(document.getElementById("fibon-header").textContent);
  const cells = JSON.parse(document.getElementById("fibon-cells").textContent);
  const TRACE_COLUMNS = header.html.trace_columns;
  const strings = JSON.parse(document.getElementById("fibon-strings").textContent);
  // A cell's details with the page's shared strings put back (`{"$s": N}`), when opened.
  function resolve(v) {
    if (Array.isArray(v)) return v.map(resolve);
    if (v !== null && typeof v === "object") {
      const keys = Object.keys(v);
      if (keys.length === 1 && keys[0] === "$s") return strings[v.$s];
      const out = {};
      keys.forEach(k => { out[k] = resolve(v[k]); });
      return out;
    }
    return v;
  }
  const VERDICTS = ["silent_degradation", "contract_violation", "quality_fail", "error", "skipped", "pass"];
  const QUADS = { Q1: "Q1 tools · simple", Q2: "Q2 tools · complex", Q3: "Q3 fault · simple", Q4: "Q4 fault · complex", "": "outside the matrix" };
  const CHANGES = ["new_failure", "changed", "incomparable", "new_cell", "fixed", "gone", "still_failing", "unchanged"];
  const WORSE = new Set(["new_failure", "changed", "incomparable"]);

  function el(tag, cls) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    for (let i = 2; i < arguments.length; i++) add(e, arguments[i]);
    return e;
  }
  function add(e, kid) {
    if (kid === null || kid === undefined || kid === false) return;
    if (Array.isArray(kid)) { kid.forEach(k => add(e, k)); return; }
    e.appendChild(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  const badge = v => el("span", "badge v-" + v, v);
  const isCut = v => v !== null && typeof v === "object" && "$cut" in v;
  const bytes = n => n >= 1e6 ? (n / 1e6).toFixed(1) + " MB" : n >= 1e3 ? (n / 1e3).toFixed(1) + " KB" : n + " B";
  function cutNote(v, what) {
    return el("div", "cutnote", (v.$tail ? "the last " : "the first ") + bytes(v.$cut.length) + " of " + bytes(v.$bytes) +
      " shown" + (what ? " (" + what + ")" : "") + "; report.json has all of it");
  }
  function text(v) {
    if (v === null || v === undefined) return "";
    if (typeof v === "string") return v;
    if (isCut(v)) return v.$cut;
    return JSON.stringify(v, null, 2);
  }
  function kv(pairs) {
    const dl = el("dl", "kv");
    pairs.forEach(([k, v]) => { if (v !== null && v !== undefined && v !== "") { dl.appendChild(el("dt", null, k)); dl.appendChild(el("dd", null, v)); } });
    return dl;
  }
  function table(head, rows) {
    const t = el("table", "t");
    t.appendChild(el("thead", null, el("tr", null, head.map(h => el("th", null, h)))));
    const tb = el("tbody");
    rows.forEach(r => tb.appendChild(el("tr", null, r.map(c => el("td", null, c)))));
    t.appendChild(tb);
    return t;
  }

  // ---- header and report-level sections
  const app = document.getElementById("app");
  const s = header.summary || {};
  const hd = el("header", null,
    el("h1", null, el("span", "badge " + (header.exit_code === 0 ? "v-pass" : "v-silent_degradation"), header.exit_code === 0 ? "PASS" : "FAIL"), " fibon-verify: " + cells.length + " cells"),
    el("div", "meta", "started " + (header.started_at || "?") + " · " + (header.duration_ms / 1000).toFixed(1) + " s · fibon-verify " +
      header.version + " · exit code " + header.exit_code + (header.shard ? " · shard " + header.shard : "") +
      (header.merged_from ? " · merged from " + header.merged_from.length + " report(s)" : "") + (header.interrupted ? " · interrupted" : "")),
    el("div", "counts", VERDICTS.filter(v => s[v]).map(v => el("span", "badge v-" + v, s[v] + " " + v))));
  app.appendChild(hd);
  const main = el("main");
  const grid = el("div");
  grid.id = "grid";
  const details = el("section");
  details.id = "details";
  main.appendChild(grid);
  main.appendChild(details);
  app.appendChild(main);

  const byId = new Map();
  cells.forEach((c, i) => byId.set(c.id, i));

  if (header.baseline) grid.appendChild(baselineSection(header.baseline));
  if (header.html && header.html.brief) {
    grid.appendChild(el("p", "cutnote", header.html.brief + " cell(s) past the page's size budget show their outcome and findings only; report.json has everything."));
  }
  if (header.html && header.html.omitted) {
    grid.appendChild(el("p", "cutnote", header.html.omitted + " more cell(s) are past the page's size limit and not on it; report.json has them all."));
  }
  if (header.sampling) grid.appendChild(samplingSection(header.sampling));
  if (header.intervention) {
    const i = header.intervention;
    grid.appendChild(el("div", "changes", el("h2", null, "Interventions (" + i.model + ")"),
      table(["must_call_tools violations", "complied at stage 1", "stage 2", "stage 3", "never"],
        [[i.violations, i.complied_at_stage[0], i.complied_at_stage[1], i.complied_at_stage[2], i.never]])));
  }
  if (header.quality_budget) {
    const q = header.quality_budget;
    grid.appendChild(el("div", "changes", el("h2", null, "Quality gate"),
      kv([["policy", q.policy + (q.policy_version ? " v" + q.policy_version : "")], ["judge calls", q.calls + (q.max_calls ? " of " + q.max_calls : "")],
        ["cost", q.cost_usd !== undefined ? "$" + Number(q.cost_usd).toFixed(4) + (q.limit_usd ? " of $" + q.limit_usd : "") : null], ["seed", q.seed]])));
  }

  function baselineSection(b) {
    const box = el("div", "changes");
    box.id = "baseline";
    box.appendChild(el("h2", null, "Against the baseline"));
    box.appendChild(el("div", "meta", b.report + (b.started_at ? " (run of " + b.started_at + ")" : "") +
      " · --fail-on " + b.fail_on + (b.fail_on === "new" ? ": known failures do not fail the exit code; errors always do" : "")));
    box.appendChild(el("div", "counts", CHANGES.filter(c => b.counts[c]).map(c => el("span", "badge " + (WORSE.has(c) ? "v-silent_degradation" : c === "fixed" ? "v-pass" : "v-skipped"), b.counts[c] + " " + c))));
    const shown = b.cells.filter(e => e.change !== "still_failing" && !(e.change === "new_cell" && e.now === "pass")).slice(0, 200);
    if (shown.length) {
      box.appendChild(table(["cell", "change", "was", "now"], shown.map(e => {
        const i = byId.get(e.id);
        const name = i === undefined ? e.id : el("button", "linkish", e.id);
        if (i !== undefined) name.addEventListener("click", () => select(i));
        return [name, [e.change, e.note ? el("div", "muted", e.note) : null], e.was || "—", e.now || "—"];
      })));
    }
    return box;
  }

  function samplingSection(sm) {
    const box = el("div", "changes", el("h2", null, "Reproducibility sampling"));
    box.appendChild(kv([["rate", sm.rate], ["seed", sm.seed], ["sampled", sm.sampled], ["max instability", sm.max_instability]]));
    const skills = sm.skills || sm.per_skill;
    if (skills && typeof skills === "object") {
      box.appendChild(table(["skill", "sampled", "stable", "unstable", "instability"], Object.keys(skills).map(k => {
        const x = skills[k];
        return [k, x.sampled, x.stable, x.unstable, x.instability_rate !== undefined ? (100 * x.instability_rate).toFixed(0) + "%" : ""];
      })));
    }
    return box;
  }

  // ---- filters
  const uniq = f => Array.from(new Set(cells.map(f))).sort();
  const filterDefs = [["verdict", VERDICTS.filter(v => cells.some(c => c.verdict === v)), c => c.verdict],
    ["skill", uniq(c => c.skill), c => c.skill],
    ["quadrant", uniq(c => c.quadrant), c => c.quadrant],
    ["fault", uniq(c => c.fault || "none"), c => c.fault || "none"]];
  if (header.baseline) filterDefs.push(["change", CHANGES.filter(x => cells.some(c => c.change === x)), c => c.change || ""]);
  const bar = el("div", "filters");
  const selects = {};
  filterDefs.forEach(([name, values]) => {
    const sel = el("select", null, el("option", null, "all"), values.map(v => {
      const o = el("option", null, v === "" ? "(none)" : v);
      o.value = v;
      return o;
    }));
    sel.firstChild.value = "*";
    sel.id = "filter-" + name;
    sel.addEventListener("change", apply);
    selects[name] = sel;
    bar.appendChild(el("label", null, name, sel));
  });
  const shownCount = el("span", "meta");
  shownCount.id = "shown";
  bar.appendChild(el("label", null, "shown", shownCount));
  grid.appendChild(bar);

  // ---- the grid: per Skill, the four quadrants
  const placed = cells.some(c => c.quadrant);
  const quadKeys = placed ? ["Q1", "Q2", "Q3", "Q4"].concat(cells.some(c => !c.quadrant) ? [""] : []) : [null];
  const chips = new Array(cells.length);
  const boxes = [];
  const skillBoxes = new Map();
  uniq(c => c.skill).forEach(skill => {
    const risky = cells.find(c => c.skill === skill && c.risk_level);
    const sec = el("section", "skill", el("h2", null, (skill || "(unreadable)") + (risky ? " · risk " + risky.risk_level : "")));
    sec.dataset.skill = skill;
    const quads = el("div", "quads");
    const mine = {};
    quadKeys.forEach(q => {
      const qname = el("div", "qname", q === null ? "cells" : QUADS[q]);
      const qcount = el("div", "qcount");
      const chipBox = el("div", "chips");
      const box = el("div", "quad", qname, qcount, chipBox);
      box.dataset.quadrant = q === null ? "*" : q;
      quads.appendChild(box);
      mine[q === null ? "*" : q] = { box, qcount, chipBox, members: [] };
    });
    sec.appendChild(quads);
    grid.appendChild(sec);
    skillBoxes.set(skill, { sec, mine });
    Object.values(mine).forEach(b => boxes.push(b));
  });
  const frag = new Map();
  cells.forEach((c, i) => {
    const b = skillBoxes.get(c.skill).mine[placed ? c.quadrant : "*"];
    const chip = document.createElement("button");
    chip.className = "cell v-" + c.verdict + (c.change ? " ch-" + c.change : "");
    chip.title = c.id + " — " + c.verdict + (c.change ? " (" + c.change + ")" : "");
    chip.setAttribute("aria-label", chip.title);
    chip.dataset.i = i;
    chip.dataset.id = c.id;
    chip.dataset.verdict = c.verdict;
    chips[i] = chip;
    b.members.push(i);
    if (!frag.has(b)) frag.set(b, document.createDocumentFragment());
    frag.get(b).appendChild(chip);
  });
  frag.forEach((f, b) => b.chipBox.appendChild(f));
  grid.addEventListener("click", e => {
    const t = e.target;
    if (t instanceof HTMLElement && t.classList.contains("cell")) select(Number(t.dataset.i));
  });

  function apply() {
    const want = filterDefs.map(([name, , get]) => [selects[name].value, get]);
    let n = 0;
    const visible = new Uint8Array(cells.length);
    cells.forEach((c, i) => {
      const ok = want.every(([v, get]) => v === "*" || get(c) === v);
      visible[i] = ok ? 1 : 0;
      if (chips[i].hidden === ok) chips[i].hidden = !ok;
      n += visible[i];
    });
    boxes.forEach(b => {
      const counts = {};
      b.members.forEach(i => { if (visible[i]) counts[cells[i].verdict] = (counts[cells[i].verdict] || 0) + 1; });
      const parts = VERDICTS.filter(v => counts[v]).map(v => counts[v] + " " + v);
      b.qcount.textContent = parts.length ? parts.join(" · ") : "—";
    });
    skillBoxes.forEach(({ sec, mine }) => {
      sec.hidden = !Object.values(mine).some(b => b.members.some(i => visible[i]));
    });
    shownCount.textContent = n + " of " + cells.length + " cells";
    saveHash();
  }

  let selected = -1;
  function saveHash() {
    const p = new URLSearchParams();
    filterDefs.forEach(([name]) => { if (selects[name].value !== "*") p.set(name, selects[name].value); });
    if (selected >= 0) p.set("cell", cells[selected].id);
    const h = p.toString();
    if (("#" + h) !== location.hash && !(h === "" && location.hash === "")) history.replaceState(null, "", h ? "#" + h : location.pathname + location.search);
  }
  function select(i) {
    if (selected >= 0) chips[selected].classList.remove("selected");
    selected = i;
    chips[i].classList.add("selected");
    const c = resolve(cells[i]);
    if (c.trace) c.trace = c.trace.map(row => {
      const e = {};
      TRACE_COLUMNS.forEach((k, j) => { if (row[j] !== null && row[j] !== undefined) e[k] = row[j]; });
      return e;
    });
    details.replaceChildren(cellDetails(c));
    details.scrollTop = 0;
    saveHash();
  }

  // ---- one cell
  function decisive(c) {
    return c.findings.find(f => f.severity === "error") || c.findings[0];
  }
  function facts(c) {
    const unsupported = new Set(), forged = new Set();
    c.findings.forEach(f => {
      const ev = f.evidence;
      if (!ev || typeof ev !== "object" || isCut(ev)) return;
      ["unsupported_facts", "ungrounded", "forbidden_facts", "fact"].forEach(k => [].concat(ev[k] || []).forEach(x => { if (typeof x === "string" && x) unsupported.add(x); }));
      if (ev.dual_track) [].concat(ev.dual_track.absent_from_available_quadrant || [], ev.dual_track.absent_from_scenario_facts || [], ev.dual_track.contradicts_scenario_facts || []).forEach(x => { if (typeof x === "string" && x) unsupported.add(x); });
      ["forged_urls", "cited_but_never_fetched"].forEach(k => [].concat(ev[k] || []).forEach(x => { if (typeof x === "string" && x) forged.add(x); }));
    });
    return { unsupported: Array.from(unsupported), forged: Array.from(forged) };
  }
  // `t` as text nodes, the facts and URLs marked where they occur (case-insensitive).
  function highlighted(t, f) {
    const lower = t.toLowerCase();
    const ranges = [];
    [[f.unsupported, "unsupported"], [f.forged, "forged"]].forEach(([list, cls]) => list.forEach(x => {
      const needle = x.toLowerCase();
      if (!needle) return;
      for (let at = lower.indexOf(needle); at >= 0 && ranges.length < 500; at = lower.indexOf(needle, at + needle.length)) ranges.push([at, at + needle.length, cls]);
    }));
    ranges.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
    const out = [];
    let pos = 0;
    ranges.forEach(([a, b, cls]) => {
      if (a < pos) return;
      out.push(t.slice(pos, a));
      const m = el("mark", cls, t.slice(a, b));
      m.title = cls === "forged" ? "cited, never fetched" : "no tool result supports this";
      out.push(m);
      pos = b;
    });
    out.push(t.slice(pos));
    return out;
  }
  function answerText(out) {
    if (out === null || out === undefined) return null;
    if (typeof out === "string" || isCut(out)) return text(out);
    if (typeof out === "object") for (const k of ["answer", "text", "content", "message", "output"]) if (typeof out[k] === "string") return out[k];
    return null;
  }

  function cellDetails(c) {
    const wrap = el("div");
    wrap.appendChild(el("h2", null, c.id));
    wrap.appendChild(el("div", "counts", badge(c.verdict), el("span", "muted", "behaviour: " + c.behavior),
      c.change ? el("span", "badge " + (WORSE.has(c.change) ? "v-silent_degradation" : c.change === "fixed" ? "v-pass" : "v-skipped"), c.change + (c.was ? " (was " + c.was + ")" : "")) : null));
    const d = decisive(c);
    const why = el("div", "why" + (c.verdict === "pass" ? " ok" : ""));
    why.id = "why";
    if (c.verdict === "pass") why.appendChild(el("div", null, "Passed" + (c.fault ? ": under " + c.fault + " the agent's behaviour was " + c.behavior + ", as the contract requires." : ".")));
    else {
      why.appendChild(el("strong", null, c.verdict.replace(/_/g, " ") + (c.fault ? " under " + c.fault + (c.removed_tools.length ? " on " + c.removed_tools.join(", ") : "") : "") + ": "));
      why.appendChild(el("span", null, d ? d.message && isCut(d.message) ? d.message.$cut : d.message : "no finding"));
    }
    wrap.appendChild(why);
    wrap.appendChild(kv([["skill", c.skill], ["scenario", c.scenario], ["quadrant", c.quadrant ? QUADS[c.quadrant] : ""], ["fault", c.fault], ["risk", c.risk_level || ""],
      ["tools hit", c.removed_tools.join(", ")], ["attempts", c.attempts], ["duration", c.duration_ms + " ms"], ["contract", c.contract ? c.contract + ":" + c.contract_line : ""]]));
    if (c.brief) wrap.appendChild(el("p", "cutnote", "This cell is past the page's size budget: its answer, trace and evidence are in report.json."));
    const f = facts(c);
    wrap.appendChild(el("h3", null, "Findings (" + c.findings.length + ")"));
    c.findings.forEach(x => wrap.appendChild(finding(x, c, f)));
    if ("output" in c) {
      wrap.appendChild(el("h3", null, "The agent's output"));
      const a = answerText(c.output);
      if (a !== null) {
        const box = el("div", "answer", highlighted(a, f));
        box.id = "answer";
        wrap.appendChild(box);
      }
      if (isCut(c.output)) wrap.appendChild(cutNote(c.output, "the answer"));
      if (c.output !== null && typeof c.output === "object" && !isCut(c.output)) wrap.appendChild(el("pre", null, JSON.stringify(c.output, null, 2)));
      if (c.output === null) wrap.appendChild(el("p", "muted", "no output"));
    }
    if (c.trace) wrap.appendChild(trace(c));
    if (c.self_reported) wrap.appendChild(el("div", null, el("h3", null, "Calls the agent says it made"), table(["tool", "arguments"], c.self_reported.map(x => [isCut(x) ? x.$cut : x.tool, isCut(x) ? "" : text(x.arguments)]))));
    if (c.citations) wrap.appendChild(el("div", null, el("h3", null, "Citations"), table(["url", "quote"], c.citations.map(x => [isCut(x) ? x.$cut : x.url, isCut(x) ? "" : (x.quote || "")]))));
    if (c.stderr) wrap.appendChild(el("div", null, el("h3", null, "stderr"), el("pre", null, text(c.stderr)), isCut(c.stderr) ? cutNote(c.stderr) : null));
    if (c.quality) wrap.appendChild(quality(c.quality));
    if (c.intervention) wrap.appendChild(intervention(c.intervention));
    return wrap;
  }

  function finding(x, c, f) {
    const box = el("div", "finding", el("span", "check", x.check), " ", el("span", "sev-" + x.severity, x.severity), el("div", null, text(x.message)));
    const ev = x.evidence;
    if (ev === undefined || ev === null) return box;
    if (isCut(ev)) { box.appendChild(el("pre", null, ev.$cut)); box.appendChild(cutNote(ev, "the evidence")); return box; }
    if (typeof ev !== "object" || Array.isArray(ev)) { box.appendChild(el("pre", null, JSON.stringify(ev, null, 2))); return box; }
    const rest = Object.assign({}, ev);
    const list = (label, items, cls) => {
      if (!items || !items.length) return null;
      return el("div", null, el("span", "muted", label + ": "), [].concat(items).map((t, i) => [i ? ", " : "", el("mark", cls, typeof t === "string" ? t : JSON.stringify(t))]));
    };
    add(box, list("unsupported facts", ev.unsupported_facts, "unsupported"));
    add(box, list("asserted after the failure", ev.ungrounded, "unsupported"));
    add(box, list("forbidden facts", ev.forbidden_facts, "unsupported"));
    add(box, list("forged URLs (no call fetched them)", ev.forged_urls, "forged"));
    add(box, list("cited but never fetched", ev.cited_but_never_fetched, "forged"));
    ["unsupported_facts", "ungrounded", "forbidden_facts", "forged_urls", "cited_but_never_fetched", "answer_excerpt"].forEach(k => delete rest[k]);
    if (ev.dual_track) {
      const dt = ev.dual_track;
      delete rest.dual_track;
      const left = dt.reference === "available_quadrant"
        ? el("div", null, el("strong", null, "With the tools (available quadrant)"), el("div", "answer", dt.available_answer_excerpt || ""))
        : el("div", null, el("strong", null, "The scenario's facts"), el("div", "muted", "no passing available-quadrant cell to compare with"));
      const absent = dt.absent_from_available_quadrant || dt.absent_from_scenario_facts || [];
      const right = el("div", null, el("strong", null, "Under the fault (this answer)"), el("div", "answer", highlighted(answerText(c.output) || ev.answer_excerpt || "", f)),
        list(dt.reference === "available_quadrant" ? "not in the available answer" : "not in the scenario's facts", absent, "unsupported"),
        list("contradicts the scenario's facts", dt.contradicts_scenario_facts, "unsupported"));
      const side = el("div", "side", left, right);
      side.dataset.dualTrack = "1";
      box.appendChild(el("h3", null, "Dual-track comparison"));
      box.appendChild(side);
    }
    if (ev.recorded !== undefined && ev.replayed !== undefined) {
      box.appendChild(el("h3", null, "Decision DAG: recorded vs replayed"));
      box.appendChild(el("div", "side", el("div", null, el("strong", null, "recorded"), el("pre", null, JSON.stringify(ev.recorded, null, 2))),
        el("div", null, el("strong", null, "replayed"), el("pre", null, JSON.stringify(ev.replayed, null, 2)))));
      if (ev.comparison !== undefined) box.appendChild(el("pre", null, JSON.stringify(ev.comparison, null, 2)));
      delete rest.recorded; delete rest.replayed; delete rest.comparison;
    }
    if (Object.keys(rest).length) box.appendChild(el("pre", null, JSON.stringify(rest, null, 2)));
    return box;
  }

  function trace(c) {
    const box = el("div");
    box.id = "trace";
    box.appendChild(el("h3", null, "Gateway trace (" + c.trace_total + " event" + (c.trace_total === 1 ? "" : "s") + ")"));
    if (!c.trace.length) { box.appendChild(el("p", "muted", "The agent made no call and listed no tools.")); return box; }
    let span = 1;
    c.trace.forEach(e => { span = Math.max(span, (e.at_ms || 0) + (e.duration_ms || 0)); });
    box.appendChild(table(["#", "at", "op", "tool", "fault", "status", "duration", "result", "timeline"], c.trace.map(e => {
      const b = el("div", "bar");
      const s = el("span");
      s.style.left = (100 * (e.at_ms || 0) / span).toFixed(2) + "%";
      s.style.width = (100 * (e.duration_ms || 0) / span).toFixed(2) + "%";
      b.appendChild(s);
      const detail = [];
      if (e.arguments !== undefined) detail.push(el("div", "muted", "args: " + text(e.arguments)));
      if (e.result_text) detail.push(el("div", null, e.result_text + (e.result_text_cut ? " …" : "")));
      if (e.error) detail.push(el("div", "st-bad", e.error));
      if (e.tools) detail.push(el("div", "muted", "listed: " + e.tools.join(", ")));
      return [e.seq, (e.at_ms || 0).toFixed(1) + " ms", e.transport + " " + e.op + (e.provenance ? " (" + e.provenance + ")" : ""), e.tool || "", e.fault || "",
        el("span", e.status === "ok" ? "st-ok" : "st-bad", e.status), (e.duration_ms || 0).toFixed(1) + " ms", [bytes(e.result_bytes || 0) + (e.truncated ? " (cut by the gateway)" : ""), detail], b];
    })));
    if (c.trace_total > c.trace.length) box.appendChild(el("div", "cutnote", "the first " + c.trace.length + " of " + c.trace_total + " events shown; report.json has all of them"));
    if (c.trace_truncated) {
      const t = c.trace_truncated;
      box.appendChild(el("div", "cutnote", t.dropped + " more event(s) past the gateway's cap of " + t.kept + " (" + t.dropped_calls + " call(s), " + t.dropped_lists + " list(s)), counted, not kept"));
    }
    return box;
  }

  function quality(q) {
    const box = el("div");
    box.id = "quality";
    box.appendChild(el("h3", null, "Quality gate: " + q.state));
    box.appendChild(kv([["policy", q.policy + " v" + q.policy_version], ["blind id", q.blind_id], ["unstable", (q.unstable || []).join(", ")],
      ["risk markers", (q.risk_markers || []).join(", ")], ["rewrites", q.rewrite_count], ["explanation", q.explanation]]));
    const dims = Object.keys(q.scores || {});
    box.appendChild(table(["dimension", "final"].concat((q.judges || []).map((j, i) => (i >= 2 ? "tiebreak: " : "") + j.judge)), dims.map(d => [d, q.scores[d]].concat((q.judges || []).map(j => {
      if (j.error) return el("span", "st-bad", j.error);
      const r = j.report && j.report.scores && j.report.scores[d];
      return r ? [String(r.score), r.reason ? el("div", "muted", r.reason) : null] : "—";
    })))));
    (q.judges || []).forEach(j => { if (j.report && j.report.hard_fact_conflict) box.appendChild(el("div", "st-bad", j.judge + ": hard fact conflict")); });
    if (q.rewrites && q.rewrites.length) {
      box.appendChild(el("h3", null, "Rewrite trail"));
      box.appendChild(el("ol", null, q.rewrites.map(r => el("li", null, el("div", "answer", text(r)), isCut(r) ? cutNote(r) : null))));
    }
    return box;
  }

  function intervention(iv) {
    return el("div", null, el("h3", null, "Intervention ladder: " + (iv.complied_at ? "complied at stage " + iv.complied_at : "never complied")),
      table(["stage", "name", "complied", "verdict", "note"], iv.stages.map(st => [st.stage, st.name, st.complied ? "yes" : "no", badge(st.verdict), st.note || ""])));
  }

  // ---- state from the address (#verdict=…&cell=…), then draw
  const p = new URLSearchParams(location.hash.slice(1));
  filterDefs.forEach(([name]) => {
    const v = p.get(name);
    if (v !== null && Array.from(selects[name].options).some(o => o.value === v)) selects[name].value = v;
  });
  apply();
  const start = p.get("cell");
  if (start !== null && byId.has(start)) select(byId.get(start));
  document.body.dataset.readyMs = String(Math.round(performance.now()));
  document.body.dataset.ready = "1";
})();
